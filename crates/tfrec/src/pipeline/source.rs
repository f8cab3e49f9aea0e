//! The record stream of a data set, produced on one thread in a deterministic order: file
//! shard, then per epoch interleave, record shard and shuffle buffer; then skip and take.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{Counters, Repeat, ShardBy};
use crate::record::{FileRecordReader, ReaderOptions, RecordError, RecordReader};

/// SplitMix64: a tiny, fully specified generator, so a seed means the same order in every
/// version of tfrec (a general-purpose RNG crate may change its streams between versions).
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), without modulo bias.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// The settings of the record stream.
#[derive(Debug, Clone)]
pub(crate) struct SourceConfig {
    pub files: Vec<PathBuf>,
    pub reader: ReaderOptions,
    pub cycle_length: usize,
    pub block_length: usize,
    pub shard: Option<(usize, usize, ShardBy)>,
    pub shuffle: Option<(usize, u64, bool)>,
    pub repeat: Repeat,
    pub skip: u64,
    pub take: Option<u64>,
}

/// The record stream. `next` gives owned records in order, then `None`.
pub(crate) struct Source {
    config: SourceConfig,
    counters: Arc<Counters>,
    /// Files of this shard (by file), in order.
    files: Vec<PathBuf>,
    epoch: u64,
    /// The next file of this epoch to open.
    next_file: usize,
    /// The interleave cycle: up to `cycle_length` open files, and whose turn it is.
    cycle: Vec<Option<FileRecordReader>>,
    turn: usize,
    taken_in_block: usize,
    /// Position of the next record in the epoch's interleaved stream (for sharding by record).
    position: u64,
    shuffle_buffer: Vec<Vec<u8>>,
    rng: SplitMix64,
    /// Records already out of the shuffle buffer at the end of an epoch, in order.
    draining: VecDeque<Vec<u8>>,
    epoch_done: bool,
    skipped: u64,
    delivered: u64,
    finished: bool,
    /// Records and bytes read but not yet added to the shared counters.
    unflushed: (u64, u64),
}

impl Source {
    pub fn new(config: SourceConfig, counters: Arc<Counters>) -> Source {
        let files = match config.shard {
            Some((n, i, ShardBy::File)) => config
                .files
                .iter()
                .enumerate()
                .filter(|(k, _)| k % n == i)
                .map(|(_, f)| f.clone())
                .collect(),
            _ => config.files.clone(),
        };
        let seed = config.shuffle.map_or(0, |(_, seed, _)| seed);
        Source {
            cycle: (0..config.cycle_length.max(1)).map(|_| None).collect(),
            rng: SplitMix64::new(seed),
            files,
            config,
            counters,
            epoch: 0,
            next_file: 0,
            turn: 0,
            taken_in_block: 0,
            position: 0,
            shuffle_buffer: Vec::new(),
            draining: VecDeque::new(),
            epoch_done: false,
            skipped: 0,
            delivered: 0,
            finished: false,
            unflushed: (0, 0),
        }
    }

    /// The next record after skip and take, or `None` at the end.
    pub fn next(&mut self) -> Result<Option<Vec<u8>>, RecordError> {
        let mut record = Vec::new();
        Ok(self.next_into(&mut record)?.then_some(record))
    }

    /// Appends the next record (after skip and take) to `out`; `false` at the end. Without a
    /// shuffle buffer the record goes straight from the file reader's buffer into `out`.
    pub fn next_into(&mut self, out: &mut Vec<u8>) -> Result<bool, RecordError> {
        if self.finished || self.config.take.is_some_and(|t| self.delivered >= t) {
            self.finish();
            return Ok(false);
        }
        loop {
            let got = if self.config.shuffle.is_some() {
                match self.next_shuffled()? {
                    Some(record) => {
                        if self.skipped >= self.config.skip {
                            out.extend_from_slice(&record);
                        }
                        true
                    }
                    None => false,
                }
            } else {
                self.next_unshuffled_into(out, self.skipped >= self.config.skip)?
            };
            if !got {
                self.finish();
                return Ok(false);
            }
            if self.skipped < self.config.skip {
                self.skipped += 1;
                continue;
            }
            self.delivered += 1;
            return Ok(true);
        }
    }

    /// The stream without shuffling: the epoch's records, epoch after epoch, each copied into
    /// `out` only if `keep`.
    fn next_unshuffled_into(&mut self, out: &mut Vec<u8>, keep: bool) -> Result<bool, RecordError> {
        loop {
            if self.epoch_done && !self.start_next_epoch() {
                return Ok(false);
            }
            let got = self.next_of_epoch_with(|record| {
                if keep {
                    out.extend_from_slice(record);
                }
            })?;
            if got.is_some() {
                return Ok(true);
            }
            self.epoch_done = true;
        }
    }

    fn finish(&mut self) {
        self.finished = true;
        self.flush_counters();
    }

    /// Adds the records and bytes read since the last flush to the shared counters.
    fn flush_counters(&mut self) {
        self.counters.records.fetch_add(self.unflushed.0, Ordering::Relaxed);
        self.counters.bytes.fetch_add(self.unflushed.1, Ordering::Relaxed);
        self.unflushed = (0, 0);
    }

    /// The next record of the shuffled, repeated stream.
    fn next_shuffled(&mut self) -> Result<Option<Vec<u8>>, RecordError> {
        loop {
            if let Some(r) = self.draining.pop_front() {
                return Ok(Some(r));
            }
            if self.epoch_done {
                if !self.start_next_epoch() {
                    return Ok(None);
                }
                continue;
            }
            let Some((size, _, _)) = self.config.shuffle else {
                match self.next_of_epoch_with(<[u8]>::to_vec)? {
                    Some(r) => return Ok(Some(r)),
                    None => {
                        self.epoch_done = true;
                        continue;
                    }
                }
            };
            // tf.data's shuffle: keep `size` records; emit a random one, replace it by the next.
            while self.shuffle_buffer.len() < size.max(1) {
                match self.next_of_epoch_with(<[u8]>::to_vec)? {
                    Some(r) => self.shuffle_buffer.push(r),
                    None => break,
                }
            }
            if self.shuffle_buffer.is_empty() {
                self.epoch_done = true;
                continue;
            }
            let i = self.rng.below(self.shuffle_buffer.len());
            let record = self.shuffle_buffer.swap_remove(i);
            if self.shuffle_buffer.len() + 1 < size.max(1) {
                // The epoch ran out while filling: drain the rest in random order.
                while !self.shuffle_buffer.is_empty() {
                    let j = self.rng.below(self.shuffle_buffer.len());
                    self.draining.push_back(self.shuffle_buffer.swap_remove(j));
                }
                self.epoch_done = true;
            }
            return Ok(Some(record));
        }
    }

    /// Moves to the next epoch; `false` when there is none.
    fn start_next_epoch(&mut self) -> bool {
        self.epoch += 1;
        let more = match self.config.repeat {
            Repeat::Forever => !self.files.is_empty(),
            Repeat::Epochs(n) => self.epoch < n,
        };
        if !more {
            return false;
        }
        match self.config.shuffle {
            // A new order each epoch, still fixed by the seed.
            Some((_, seed, true)) => self.rng = SplitMix64::new(seed ^ self.epoch.wrapping_mul(0xD1B5_4A32_D192_ED03)),
            // The first epoch's order again.
            Some((_, seed, false)) => self.rng = SplitMix64::new(seed),
            None => {}
        }
        self.next_file = 0;
        self.position = 0;
        self.turn = 0;
        self.taken_in_block = 0;
        self.epoch_done = false;
        true
    }

    /// Calls `take` with the next record of this epoch's interleaved stream that belongs to
    /// this shard (records of other shards are passed over without a copy).
    fn next_of_epoch_with<T>(&mut self, take: impl FnOnce(&[u8]) -> T) -> Result<Option<T>, RecordError> {
        let mut take = Some(take);
        loop {
            let position = self.position;
            let mine = match self.config.shard {
                Some((n, i, ShardBy::Record)) => position % n as u64 == i as u64,
                _ => true,
            };
            let got = self.next_interleaved_with(|record| if mine { take.take().map(|f| f(record)) } else { None })?;
            match got {
                None => return Ok(None),
                Some(value) => {
                    self.position += 1;
                    if let Some(value) = value {
                        return Ok(Some(value));
                    }
                }
            }
        }
    }

    /// tf.data's interleave: up to `cycle_length` files open; `block_length` records from each
    /// in turn; when a file ends the turn moves on and its place takes the next file.
    fn next_interleaved_with<T>(&mut self, take: impl FnOnce(&[u8]) -> T) -> Result<Option<T>, RecordError> {
        let cycle = self.cycle.len();
        let mut idle_turns = 0;
        loop {
            if self.cycle[self.turn].is_none() && self.next_file < self.files.len() {
                let path = self.files[self.next_file].clone();
                self.next_file += 1;
                self.cycle[self.turn] = Some(RecordReader::open(&path, self.config.reader.clone())?);
                self.taken_in_block = 0;
            }
            let Some(reader) = self.cycle[self.turn].as_mut() else {
                idle_turns += 1;
                if idle_turns > cycle {
                    return Ok(None);
                }
                self.advance_turn();
                continue;
            };
            match reader.next_record() {
                Ok(Some(data)) => {
                    self.unflushed.0 += 1;
                    self.unflushed.1 += data.len() as u64;
                    let value = take(data);
                    if self.unflushed.0 >= 1024 {
                        self.flush_counters();
                    }
                    self.taken_in_block += 1;
                    if self.taken_in_block >= self.config.block_length.max(1) {
                        self.advance_turn();
                    }
                    return Ok(Some(value));
                }
                Ok(None) => {
                    // As tf.data: the turn moves on; the freed place takes the next file when
                    // its turn comes again.
                    self.close_turn();
                    self.advance_turn();
                }
                Err(e) => {
                    self.close_turn();
                    return Err(e);
                }
            }
            idle_turns = 0;
        }
    }

    fn close_turn(&mut self) {
        self.flush_counters();
        if let Some(mut reader) = self.cycle[self.turn].take() {
            let stats = reader.stats();
            self.counters
                .skipped_regions
                .fetch_add(stats.skipped_regions, Ordering::Relaxed);
            self.counters
                .skipped_files
                .fetch_add(stats.skipped_files, Ordering::Relaxed);
            self.counters.files_done.fetch_add(1, Ordering::Relaxed);
            let problems: Vec<RecordError> = reader.take_problems();
            if !problems.is_empty() {
                if let Ok(mut kept) = self.counters.problems.lock() {
                    for p in problems {
                        if kept.len() < 1024 {
                            kept.push(p);
                        }
                    }
                }
            }
        }
        // The next file takes this place in the cycle (opened on the next call).
        self.taken_in_block = 0;
    }

    fn advance_turn(&mut self) {
        self.turn = (self.turn + 1) % self.cycle.len();
        self.taken_in_block = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_is_fixed() {
        // Reference values of SplitMix64 seeded with 1234567 (from its public definition).
        let mut rng = SplitMix64::new(1234567);
        assert_eq!(rng.next_u64(), 6457827717110365317);
        assert_eq!(rng.next_u64(), 3203168211198807973);
        let mut rng = SplitMix64::new(7);
        assert!((0..1000).all(|_| rng.below(10) < 10));
    }
}

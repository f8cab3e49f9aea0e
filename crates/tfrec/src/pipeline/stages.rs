//! The record-level stages of a data set, each a [`Stream`] over the one before it, chained
//! in the order of the builder calls: shard by record, shuffle, repeat, skip, take.

use super::RecordOrigin;
use crate::record::RecordError;

/// A stream of records, pulled one at a time on the reader thread.
pub(crate) trait Stream: Send {
    /// Calls `f` with the next record and where it came from; `false` at the end. The record
    /// is lent, so a stage that keeps nothing passes the file reader's buffer on uncopied.
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError>;

    /// Starts the stream over from its beginning: a new iteration, for `repeat`.
    fn restart(&mut self);
}

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

/// tf.data's `shard` on records: keeps records `index, index + n, …` of its input.
pub(crate) struct ShardRecords {
    pub up: Box<dyn Stream>,
    pub num_shards: u64,
    pub index: u64,
    pub position: u64,
}

impl Stream for ShardRecords {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        loop {
            let mine = self.position % self.num_shards == self.index;
            // Records of other shards are passed over without a copy.
            let got = if mine {
                self.up.next_with(f)?
            } else {
                self.up.next_with(&mut |_, _| {})?
            };
            if !got {
                return Ok(false);
            }
            self.position += 1;
            if mine {
                return Ok(true);
            }
        }
    }

    fn restart(&mut self) {
        self.position = 0;
        self.up.restart();
    }
}

/// tf.data's `shuffle`: a buffer of `size` records; each output is a random one of them, and
/// its place is taken by the next input record.
pub(crate) struct Shuffle {
    up: Box<dyn Stream>,
    size: usize,
    seed: u64,
    reshuffle_each_iteration: bool,
    iteration: u64,
    rng: SplitMix64,
    buffer: Vec<(Vec<u8>, RecordOrigin)>,
    /// Buffers of records already handed out, reused for the next ones.
    spare: Vec<Vec<u8>>,
    up_done: bool,
}

impl Shuffle {
    pub fn new(up: Box<dyn Stream>, size: usize, seed: u64, reshuffle_each_iteration: bool) -> Shuffle {
        Shuffle {
            up,
            size: size.max(1),
            seed,
            reshuffle_each_iteration,
            iteration: 0,
            rng: SplitMix64::new(seed),
            buffer: Vec::new(),
            spare: Vec::new(),
            up_done: false,
        }
    }
}

impl Stream for Shuffle {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        while !self.up_done && self.buffer.len() < self.size {
            let mut slot = self.spare.pop().unwrap_or_default();
            slot.clear();
            let mut origin = RecordOrigin::default();
            let got = self.up.next_with(&mut |record, o| {
                slot.extend_from_slice(record);
                origin = o;
            })?;
            if got {
                self.buffer.push((slot, origin));
            } else {
                self.up_done = true;
                self.spare.push(slot);
            }
        }
        if self.buffer.is_empty() {
            return Ok(false);
        }
        let i = self.rng.below(self.buffer.len());
        let (record, origin) = self.buffer.swap_remove(i);
        f(&record, origin);
        self.spare.push(record);
        Ok(true)
    }

    fn restart(&mut self) {
        self.iteration += 1;
        // A new order each iteration, still fixed by the seed; or the first one again.
        let seed = if self.reshuffle_each_iteration {
            self.seed ^ self.iteration.wrapping_mul(0xD1B5_4A32_D192_ED03)
        } else {
            self.seed
        };
        self.rng = SplitMix64::new(seed);
        self.spare.extend(self.buffer.drain(..).map(|(r, _)| r));
        self.up_done = false;
        self.up.restart();
    }
}

/// tf.data's `repeat`: its input `count` times (`None`: forever; an empty input ends it).
pub(crate) struct Repeat {
    pub up: Box<dyn Stream>,
    pub count: Option<u64>,
    pub done: u64,
    /// Whether the current iteration gave a record (repeating an empty input forever ends).
    pub produced: bool,
}

impl Stream for Repeat {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        loop {
            if self.count.is_some_and(|c| self.done >= c) {
                return Ok(false);
            }
            if self.up.next_with(f)? {
                self.produced = true;
                return Ok(true);
            }
            self.done += 1;
            if self.count.is_none() && !self.produced {
                return Ok(false);
            }
            self.produced = false;
            if self.count.is_none_or(|c| self.done < c) {
                self.up.restart();
            }
        }
    }

    fn restart(&mut self) {
        self.done = 0;
        self.produced = false;
        self.up.restart();
    }
}

/// tf.data's `skip`.
pub(crate) struct Skip {
    pub up: Box<dyn Stream>,
    pub count: u64,
    pub skipped: u64,
}

impl Stream for Skip {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        while self.skipped < self.count {
            if !self.up.next_with(&mut |_, _| {})? {
                return Ok(false);
            }
            self.skipped += 1;
        }
        self.up.next_with(f)
    }

    fn restart(&mut self) {
        self.skipped = 0;
        self.up.restart();
    }
}

/// tf.data's `take`: stops reading once `count` records are out.
pub(crate) struct Take {
    pub up: Box<dyn Stream>,
    pub count: u64,
    pub taken: u64,
}

impl Stream for Take {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        if self.taken >= self.count || !self.up.next_with(f)? {
            return Ok(false);
        }
        self.taken += 1;
        Ok(true)
    }

    fn restart(&mut self) {
        self.taken = 0;
        self.up.restart();
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

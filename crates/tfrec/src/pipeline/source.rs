//! The files of a data set read as one record stream: the files left after sharding by file,
//! interleaved as tf.data's `interleave` does, each record with where it came from.

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::data::{Counters, RecordBatch, RecordOrigin, StoredCrc, MAX_PROBLEMS};
use super::stages::Stream;
use crate::record::{Compression, FileRecordReader, ReaderOptions, RecordError, RecordReader};

/// Counts the on-disk (compressed) bytes read from a file, for a progress bar.
struct DiskCount<R> {
    file: R,
    counters: Arc<Counters>,
}

impl<R: Read> Read for DiskCount<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.counters.disk_bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Takes a record, where it was read and, when its reader left the check, its stored CRC.
type RecordSink<'a> = dyn FnMut(&[u8], RecordOrigin, Option<StoredCrc>) + 'a;

/// One open file of the interleave cycle.
struct OpenFile {
    reader: FileRecordReader,
    /// Index of the file in the data set's list.
    file: usize,
    /// Index in the file of the next record.
    next_index: u64,
}

/// The interleaved record stream of the files.
pub(crate) struct FileSource {
    /// The files to read (index in the data set's list, path), in order.
    files: Vec<(usize, PathBuf)>,
    options: ReaderOptions,
    block_length: usize,
    counters: Arc<Counters>,
    /// Up to `cycle_length` open files, and whose turn it is.
    cycle: Vec<Option<OpenFile>>,
    turn: usize,
    taken_in_block: usize,
    /// The next file to open.
    next_file: usize,
    /// Records and bytes read but not yet added to the shared counters.
    unflushed: (u64, u64),
    /// The readers leave data CRCs to be checked with the batch (see [`FileSource::new`]).
    defer_crc: bool,
}

impl FileSource {
    /// With `defer_crc`, the readers return records without checking their data CRCs where
    /// that changes nothing but who checks ([`RecordReader::defer_data_crc`]); [`Stream::fill`]
    /// then puts what to check in the batch, and whoever gets the batch must check it
    /// ([`RecordBatch::check_crcs`]), also to drop it.
    pub fn new(
        files: Vec<(usize, PathBuf)>,
        options: ReaderOptions,
        cycle_length: usize,
        block_length: usize,
        counters: Arc<Counters>,
        defer_crc: bool,
    ) -> FileSource {
        FileSource {
            files,
            options,
            block_length: block_length.max(1),
            counters,
            cycle: (0..cycle_length.max(1)).map(|_| None).collect(),
            turn: 0,
            taken_in_block: 0,
            next_file: 0,
            unflushed: (0, 0),
            defer_crc,
        }
    }

    /// Adds the records and bytes read since the last flush to the shared counters.
    fn flush_counters(&mut self) {
        self.counters.records.fetch_add(self.unflushed.0, Ordering::Relaxed);
        self.counters.bytes.fetch_add(self.unflushed.1, Ordering::Relaxed);
        self.unflushed = (0, 0);
    }

    fn open(&self, path: &std::path::Path) -> Result<FileRecordReader, RecordError> {
        let counters = Arc::clone(&self.counters);
        let mut reader = RecordReader::open_with(path, self.options.clone(), move |file| {
            Box::new(DiskCount { file, counters }) as Box<dyn Read + Send>
        })?;
        if self.defer_crc {
            reader.defer_data_crc();
        }
        Ok(reader)
    }

    /// Closes the file whose turn it is; `finished` when it was read to its end.
    fn close_turn(&mut self, finished: bool) {
        self.flush_counters();
        if let Some(mut open) = self.cycle[self.turn].take() {
            let stats = open.reader.stats();
            let c = &self.counters;
            c.skipped_regions.fetch_add(stats.skipped_regions, Ordering::Relaxed);
            c.skipped_bytes.fetch_add(stats.skipped_bytes, Ordering::Relaxed);
            c.skipped_files.fetch_add(stats.skipped_files, Ordering::Relaxed);
            c.torn_tail_bytes.fetch_add(stats.torn_tail_bytes, Ordering::Relaxed);
            if finished {
                c.files_done.fetch_add(1, Ordering::Relaxed);
            }
            let problems = open.reader.take_problems();
            if !problems.is_empty() {
                if let Ok(mut kept) = c.problems.lock() {
                    let room = MAX_PROBLEMS.saturating_sub(kept.len());
                    kept.extend(problems.into_iter().take(room));
                }
            }
        }
        // The next file takes this place in the cycle (opened when its turn comes).
        self.taken_in_block = 0;
    }

    fn advance_turn(&mut self) {
        self.turn = (self.turn + 1) % self.cycle.len();
        self.taken_in_block = 0;
    }
}

impl Drop for FileSource {
    fn drop(&mut self) {
        for turn in 0..self.cycle.len() {
            self.turn = turn;
            self.close_turn(false);
        }
    }
}

impl FileSource {
    /// tf.data's interleave: up to `cycle_length` files open; `block_length` records from each
    /// in turn; when a file ends the turn moves on and its place takes the next file. The next
    /// record goes to `f` with its origin and, when its reader left it unchecked, its stored
    /// data CRC and whether its file was compressed.
    fn next_record(&mut self, f: &mut RecordSink<'_>) -> Result<bool, RecordError> {
        let cycle = self.cycle.len();
        let mut idle_turns = 0;
        loop {
            if self.cycle[self.turn].is_none() && self.next_file < self.files.len() {
                let (file, path) = &self.files[self.next_file];
                let file = *file;
                let reader = self.open(path)?;
                self.next_file += 1;
                self.cycle[self.turn] = Some(OpenFile {
                    reader,
                    file,
                    next_index: 0,
                });
                self.taken_in_block = 0;
            }
            let Some(open) = self.cycle[self.turn].as_mut() else {
                idle_turns += 1;
                if idle_turns > cycle {
                    self.flush_counters();
                    return Ok(false);
                }
                self.advance_turn();
                continue;
            };
            match open.reader.next_span() {
                Ok(Some(span)) => {
                    let origin = RecordOrigin {
                        file: open.file,
                        offset: open.reader.last_record_offset(),
                        index: open.next_index,
                    };
                    open.next_index += 1;
                    let compressed = open.reader.compression() != Compression::None;
                    let unchecked = open.reader.deferred_crc().map(|stored| StoredCrc {
                        stored,
                        decompressed: compressed,
                    });
                    let data = open.reader.span_data(span);
                    self.unflushed.0 += 1;
                    self.unflushed.1 += data.len() as u64;
                    f(data, origin, unchecked);
                    if self.unflushed.0 >= 1024 {
                        self.flush_counters();
                    }
                    self.taken_in_block += 1;
                    if self.taken_in_block >= self.block_length {
                        self.advance_turn();
                    }
                    return Ok(true);
                }
                Ok(None) => {
                    self.close_turn(true);
                    self.advance_turn();
                }
                Err(e) => {
                    self.close_turn(false);
                    return Err(e);
                }
            }
            idle_turns = 0;
        }
    }

    /// As many records as the reader of this turn holds whole in its window, up to `room`,
    /// appended to `batch` in one loop; how many.
    fn take_from_window(&mut self, batch: &mut RecordBatch, room: usize) -> usize {
        let Some(open) = self.cycle[self.turn].as_mut() else {
            return 0;
        };
        let file = open.file;
        let compressed = open.reader.compression() != Compression::None;
        let mut index = open.next_index;
        let mut bytes = 0;
        let taken = open.reader.read_whole_in_window(room, |data, offset, crc| {
            bytes += data.len() as u64;
            batch.push(
                data,
                RecordOrigin { file, offset, index },
                crc.map(|stored| StoredCrc {
                    stored,
                    decompressed: compressed,
                }),
            );
            index += 1;
        });
        open.next_index = index;
        self.unflushed.0 += taken as u64;
        self.unflushed.1 += bytes;
        taken
    }
}

impl Stream for FileSource {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        // Deferred checks need a batch to travel with: a stage reading records one by one
        // stands between, so the readers check (see `Dataset::stream`).
        self.next_record(&mut |data, origin, unchecked| {
            debug_assert!(unchecked.is_none(), "a CRC left unchecked outside a batch");
            f(data, origin);
        })
    }

    /// Records the current file holds whole in its reader's window are taken in one loop per
    /// window (the reader's `read_whole_in_window`); anything else (opening a file, refilling
    /// the window, a large or damaged record, the end of a file) goes one record through
    /// [`next_record`](FileSource::next_record), the general path.
    fn fill(&mut self, batch: &mut RecordBatch, size: usize) -> Result<bool, RecordError> {
        while batch.len() < size {
            let room = (size - batch.len()).min(self.block_length - self.taken_in_block);
            let taken = self.take_from_window(batch, room);
            if taken > 0 {
                self.taken_in_block += taken;
                if self.taken_in_block >= self.block_length {
                    self.advance_turn();
                }
                if self.unflushed.0 >= 1024 {
                    self.flush_counters();
                }
                continue;
            }
            if !self.next_record(&mut |data, origin, unchecked| batch.push(data, origin, unchecked))? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn restart(&mut self) {
        for turn in 0..self.cycle.len() {
            self.turn = turn;
            self.close_turn(false);
        }
        self.turn = 0;
        self.next_file = 0;
    }
}

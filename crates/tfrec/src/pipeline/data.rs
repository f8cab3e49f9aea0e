//! What a running pipeline hands out besides its results: batches of raw records
//! ([`RecordBatch`]), where each record was read ([`RecordOrigin`]), and the live
//! [`Counters`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::record::{check_deferred_crc, Location, ReadStats, RecordError};

/// Problems kept in [`Counters::problems`]; the rest are only counted.
pub(super) const MAX_PROBLEMS: usize = 1024;

/// Live counters of a pipeline, readable from any thread (for a progress bar).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Counters {
    /// Records read from the files (before any record-level stage).
    pub records: AtomicU64,
    /// Data bytes of those records.
    pub bytes: AtomicU64,
    /// On-disk (compressed) bytes read from the files, for a progress bar.
    pub disk_bytes: AtomicU64,
    /// Files read to the end.
    pub files_done: AtomicU64,
    /// Damaged regions skipped (with [`OnCorruption::Resync`](crate::record::OnCorruption::Resync)).
    pub skipped_regions: AtomicU64,
    /// Bytes skipped in those regions.
    pub skipped_bytes: AtomicU64,
    /// Files abandoned (with [`OnCorruption::SkipFile`](crate::record::OnCorruption::SkipFile)).
    pub skipped_files: AtomicU64,
    /// Bytes of partial headers ignored at the end of files (with a torn-tail policy of skip).
    pub torn_tail_bytes: AtomicU64,
    /// Batches handed to the consumer.
    pub batches: AtomicU64,
    /// Spans of files taken from the workers that read them in parallel (two worker threads or
    /// more; a file with an index beside it, or a plain local file: see
    /// [`Pipeline::threads`](super::Pipeline::threads)).
    pub spans: AtomicU64,
    /// What was skipped, with file and offset (the first 1024).
    pub problems: Mutex<Vec<RecordError>>,
}

impl Counters {
    /// The reading counters as the record layer's [`ReadStats`] (of files closed so far).
    pub fn read_stats(&self) -> ReadStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ReadStats {
            records: get(&self.records),
            data_bytes: get(&self.bytes),
            skipped_regions: get(&self.skipped_regions),
            skipped_bytes: get(&self.skipped_bytes),
            skipped_files: get(&self.skipped_files),
            torn_tail_bytes: get(&self.torn_tail_bytes),
        }
    }
}

/// Where a record was read: the file (its index in [`Dataset::files`](super::Dataset::files)), the offset of its
/// header in the (decompressed) file, and its index in the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordOrigin {
    /// Index of the file in [`Dataset::files`](super::Dataset::files).
    pub file: usize,
    /// Offset of the record's header in the (decompressed) file.
    pub offset: u64,
    /// Index of the record in its file.
    pub index: u64,
}

/// A batch of raw records in one buffer, with where each was read.
#[derive(Debug, Clone, Default)]
pub struct RecordBatch {
    /// Index of the batch in the stream.
    pub index: u64,
    pub(super) data: Vec<u8>,
    pub(super) ends: Vec<usize>,
    pub(super) origins: Vec<RecordOrigin>,
    pub(super) files: Arc<[PathBuf]>,
    /// The records whose data CRC the reader left unchecked, for a worker to check (see
    /// [`RecordBatch::check_crcs`]).
    pub(super) unchecked: Vec<UncheckedCrc>,
}

/// A record of a batch whose data CRC is still to be checked.
#[derive(Debug, Clone, Copy)]
pub(super) struct UncheckedCrc {
    /// The record's index in the batch.
    pub record: usize,
    pub crc: StoredCrc,
}

/// The data CRC stored for a record whose check its reader left to the worker.
#[derive(Debug, Clone, Copy)]
pub(super) struct StoredCrc {
    /// The CRC stored in its footer.
    pub stored: u32,
    /// Whether its file was compressed (its offset counts decompressed bytes).
    pub decompressed: bool,
}

impl RecordBatch {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch has no records.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Record `i`.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.data.get(start..end)
    }

    /// The records as slices.
    pub fn records(&self) -> Vec<&[u8]> {
        (0..self.len()).filter_map(|i| self.get(i)).collect()
    }

    /// Where record `i` was read.
    pub fn origin(&self, i: usize) -> Option<RecordOrigin> {
        self.origins.get(i).copied()
    }

    /// The file record `i` was read from.
    pub fn path(&self, i: usize) -> Option<&Path> {
        self.files.get(self.origins.get(i)?.file).map(PathBuf::as_path)
    }

    /// Bytes of record data in the batch.
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    /// Appends a record read at `origin`; `unchecked`: its stored CRC, when the reader left
    /// the check to the worker.
    #[inline]
    pub(super) fn push(&mut self, record: &[u8], origin: RecordOrigin, unchecked: Option<StoredCrc>) {
        if let Some(crc) = unchecked {
            self.unchecked.push(UncheckedCrc {
                record: self.ends.len(),
                crc,
            });
        }
        self.data.extend_from_slice(record);
        self.ends.push(self.data.len());
        self.origins.push(origin);
    }

    /// Checks the data CRCs the reader left unchecked, in record order: the first mismatch is
    /// the error the reader would have returned at that record.
    pub(super) fn check_crcs(&mut self) -> Result<(), RecordError> {
        for u in std::mem::take(&mut self.unchecked) {
            let (Some(data), Some(origin)) = (self.get(u.record), self.origin(u.record)) else {
                continue;
            };
            check_deferred_crc(data, u.crc.stored, || Location {
                path: self.files.get(origin.file).map(|p| Arc::from(p.as_path())),
                offset: origin.offset,
                record_index: origin.index,
                decompressed: u.crc.decompressed,
            })?;
        }
        Ok(())
    }
}

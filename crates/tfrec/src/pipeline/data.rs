//! What a running pipeline hands out besides its results: batches of raw records
//! ([`RecordBatch`]), where each record was read ([`RecordOrigin`]), and the live
//! [`Counters`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::record::spans::FileSpans;
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

/// A batch of raw records, with where each was read. A record is copied into the batch's
/// own buffer, or held where a span of its file was read ahead, shared with the stream.
#[derive(Debug, Clone, Default)]
pub struct RecordBatch {
    /// Index of the batch in the stream.
    pub index: u64,
    /// The records copied into the batch.
    pub(super) data: Vec<u8>,
    /// Where each record's bytes are.
    pub(super) places: Vec<RecordBytes>,
    /// The spans holding the records not copied.
    pub(super) shared: Vec<Arc<SharedSpanBytes>>,
    /// Bytes of record data, copied or not.
    pub(super) bytes: usize,
    pub(super) origins: Vec<RecordOrigin>,
    pub(super) files: Arc<[PathBuf]>,
    /// The records whose data CRC the reader left unchecked, for a worker to check (see
    /// [`RecordBatch::check_crcs`]).
    pub(super) unchecked: Vec<UncheckedCrc>,
}

/// The bytes of a span the stream is giving out, shared with the batches that hold its
/// records without a copy (the copy of a span read ahead, no longer in the caches, cost the
/// pipeline on two threads most of what it spent beyond one thread's work). The buffer goes
/// back to its file for a span not yet read (`FileSpans::give_back`) when the last holder
/// lets go, as it did when the records were copied out.
pub(super) struct SharedSpanBytes {
    data: Vec<u8>,
    home: std::sync::Weak<FileSpans>,
}

impl SharedSpanBytes {
    /// `data`, a span of `home`'s file, to be shared.
    pub(super) fn new(data: Vec<u8>, home: &Arc<FileSpans>) -> Arc<SharedSpanBytes> {
        Arc::new(SharedSpanBytes {
            data,
            home: Arc::downgrade(home),
        })
    }
}

#[cfg(test)]
impl SharedSpanBytes {
    /// `data` shared with no file to go back to.
    fn detached(data: Vec<u8>) -> Arc<SharedSpanBytes> {
        Arc::new(SharedSpanBytes {
            data,
            home: std::sync::Weak::new(),
        })
    }
}

impl std::ops::Deref for SharedSpanBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.data
    }
}

impl std::fmt::Debug for SharedSpanBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedSpanBytes({} bytes)", self.data.len())
    }
}

impl Drop for SharedSpanBytes {
    fn drop(&mut self) {
        if let Some(home) = self.home.upgrade() {
            home.give_back(std::mem::take(&mut self.data));
        }
    }
}

/// Where a record's bytes are in its batch: `piece` 0 is the batch's own buffer, `k` the
/// `k`-th of its shared spans.
#[derive(Debug, Clone, Copy)]
pub(super) struct RecordBytes {
    piece: u32,
    start: usize,
    end: usize,
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
        self.places.len()
    }

    /// Whether the batch has no records.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Record `i`.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let place = self.places.get(i)?;
        let piece: &[u8] = match place.piece {
            0 => &self.data,
            k => self.shared.get(k as usize - 1)?,
        };
        piece.get(place.start..place.end)
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
        self.bytes
    }

    /// Bytes of record data copied into the batch's own buffer (the rest is in shared spans).
    pub(super) fn copied_len(&self) -> usize {
        self.data.len()
    }

    /// Appends a record read at `origin`; `unchecked`: its stored CRC, when the reader left
    /// the check to the worker.
    #[inline]
    pub(super) fn push(&mut self, record: &[u8], origin: RecordOrigin, unchecked: Option<StoredCrc>) {
        if let Some(crc) = unchecked {
            self.unchecked.push(UncheckedCrc {
                record: self.places.len(),
                crc,
            });
        }
        let start = self.data.len();
        self.data.extend_from_slice(record);
        self.places.push(RecordBytes {
            piece: 0,
            start,
            end: self.data.len(),
        });
        self.bytes += record.len();
        self.origins.push(origin);
    }

    /// Appends the record at `range` of `span` without a copy, read at `origin`, its data CRC
    /// already checked. A range outside the span is not pushed.
    pub(super) fn push_shared(
        &mut self,
        span: &Arc<SharedSpanBytes>,
        range: std::ops::Range<usize>,
        origin: RecordOrigin,
    ) {
        if span.get(range.clone()).is_none() {
            return;
        }
        if !self.shared.last().is_some_and(|last| Arc::ptr_eq(last, span)) {
            self.shared.push(Arc::clone(span));
        }
        self.bytes += range.len();
        self.places.push(RecordBytes {
            piece: self.shared.len() as u32,
            start: range.start,
            end: range.end,
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(index: u64) -> RecordOrigin {
        RecordOrigin {
            file: 0,
            offset: index * 100,
            index,
        }
    }

    #[test]
    fn a_batch_gives_back_its_records_copied_or_shared_in_order() {
        let first = SharedSpanBytes::detached(b"..alpha..beta".to_vec());
        let second = SharedSpanBytes::detached(b"gamma".to_vec());
        let mut batch = RecordBatch::default();
        batch.push(b"copied", origin(0), None);
        batch.push_shared(&first, 2..7, origin(1));
        batch.push_shared(&first, 9..13, origin(2));
        batch.push(b"", origin(3), None);
        batch.push_shared(&second, 0..5, origin(4));
        // Out of its span: not a record.
        batch.push_shared(&second, 3..9, origin(5));
        let records: Vec<&[u8]> = batch.records();
        assert_eq!(records, [&b"copied"[..], b"alpha", b"beta", b"", b"gamma"]);
        assert_eq!(batch.len(), 5);
        assert_eq!(batch.origin(4), Some(origin(4)));
        assert_eq!(batch.data_len(), 6 + 5 + 4 + 5);
        assert_eq!(batch.copied_len(), 6);
        // A span is held once, however many of its records the batch has.
        assert_eq!(batch.shared.len(), 2);
        assert_eq!(Arc::strong_count(&first), 2);
        let kept = batch.clone();
        drop(batch);
        assert_eq!(kept.get(2), Some(&b"beta"[..]));
    }
}

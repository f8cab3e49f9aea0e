//! Record batches streamed from TFRecord files: records are read into batches of a bounded
//! number of rows and parsed into columns batch by batch, so memory stays bounded whatever the
//! input size. Errors name the file and offset of the record at fault.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};

use super::{ColumnarError, ExampleColumns, SequenceColumns, StringColumns};
use crate::parse::SpecFile;
use crate::record::remote::Source as FileOrObject;
use crate::record::{
    IndexEntry, IndexError, MultiFileReader, ReadStats, ReaderOptions, RecordError, RecordIndex, RecordReader,
};

/// Example or SequenceExample columns, as a spec file gives.
#[derive(Debug, Clone)]
pub enum ColumnSpecs {
    /// Columns of Examples.
    Example(ExampleColumns),
    /// Columns of SequenceExamples (boxed: far larger than the Example form).
    Sequence(Box<SequenceColumns>),
}

impl ColumnSpecs {
    /// Compiles a spec file's specs, the columns in name order.
    pub fn new(spec: &SpecFile, strings: &StringColumns) -> Result<ColumnSpecs, ColumnarError> {
        ColumnSpecs::with_order(spec, &[], strings)
    }

    /// Compiles a spec file's specs, the columns in `order` (the feature names as the spec's
    /// text wrote them, [`spec_order`](super::spec_order)); features `order` leaves out follow
    /// in name order. For a sequence spec the context columns still come first.
    pub fn with_order(
        spec: &SpecFile,
        order: &[String],
        strings: &StringColumns,
    ) -> Result<ColumnSpecs, ColumnarError> {
        Ok(match spec {
            SpecFile::Example(s) => ColumnSpecs::Example(ExampleColumns::with_order(s, order, strings)?),
            SpecFile::Sequence(s) => ColumnSpecs::Sequence(Box::new(SequenceColumns::with_order(s, order, strings)?)),
        })
    }

    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        match self {
            ColumnSpecs::Example(c) => c.schema(),
            ColumnSpecs::Sequence(c) => c.schema(),
        }
    }

    /// Parses one batch of serialized records.
    pub fn to_batch<R: AsRef<[u8]> + Sync>(&self, records: &[R]) -> Result<RecordBatch, ColumnarError> {
        match self {
            ColumnSpecs::Example(c) => c.to_batch(records),
            ColumnSpecs::Sequence(c) => c.to_batch(records),
        }
    }

    /// Parses one batch of serialized records into slices of at most `width` columns, handed
    /// to `each` in order with their first column's index
    /// ([`ExampleColumns::to_column_slices`]); a SequenceExample table comes as one slice.
    pub fn to_column_slices<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        width: usize,
        mut each: impl FnMut(usize, RecordBatch) -> Result<(), ColumnarError>,
    ) -> Result<(), ColumnarError> {
        match self {
            ColumnSpecs::Example(c) => c.to_column_slices(records, width, each),
            ColumnSpecs::Sequence(c) => each(0, c.to_batch(records)?),
        }
    }
}

/// Columns of a wide schema's batch parsed and handed out at a time
/// ([`BatchReader::into_column_slices`]).
pub const COLUMN_SLICE_WIDTH: usize = 1024;

/// The narrowest schema whose batches a writer that can take them in column slices should
/// (see [`BatchReader::into_column_slices`]): below it the batch's arrays are few, and whole
/// batches keep the writer's work in one piece.
pub const WIDE_SCHEMA_COLUMNS: usize = 4 * COLUMN_SLICE_WIDTH;

/// Where records come from: many files in order, or the records of one file whose header
/// offsets lie in a byte range.
enum Source {
    Files(MultiFileReader),
    Range {
        reader: RecordReader<BufReader<FileOrObject>>,
        path: PathBuf,
        entries: Vec<IndexEntry>,
        next: usize,
    },
}

/// The most room [`BatchReader`] reserves for a batch's records beyond twice the bytes it has
/// read: the records read so far only suggest what the rest hold (a file's records can change
/// kind, a small one then large ones), so room past that is taken as records come, not on a
/// guess.
const ARENA_AHEAD: usize = 16 << 20;

/// Records read one at a time (a byte range's, or around a window's refill) before the
/// arena is sized from them (see [`BatchReader::reserve_for_batch`]).
const RECORDS_BEFORE_RESERVING: usize = 64;

/// Reads TFRecord files as Arrow record batches of at most `batch_rows` rows; an Arrow
/// [`RecordBatchReader`].
pub struct BatchReader {
    source: Source,
    columns: ColumnSpecs,
    batch_rows: usize,
    /// Records still allowed (`None`: no limit).
    remaining: Option<u64>,
    /// The records read last (a batch, or a round of parts), one after another: they parse
    /// from one contiguous buffer (a buffer per record cost the Arrow path a third more time
    /// reading and parsing than the pipeline's parse of the same batches, issue 28).
    arena: Vec<u8>,
    /// Where each record in `arena` ends.
    ends: Vec<usize>,
    /// `path@offset` of each record in `arena`, for errors.
    places: Vec<(usize, u64)>,
    records_read: u64,
    failed: bool,
    /// Rows of the batch being handed out in parts not read yet (see
    /// [`BatchReader::next_parts`]); 0 when none is.
    batch_left: usize,
    /// Rows of the batch being handed out in parts that were read before those in `arena`.
    batch_done: usize,
}

impl BatchReader {
    /// Batches of the records of `files`, in order.
    pub fn new(files: Vec<PathBuf>, options: ReaderOptions, columns: ColumnSpecs, batch_rows: usize) -> BatchReader {
        BatchReader::with_source(Source::Files(MultiFileReader::new(files, options)), columns, batch_rows)
    }

    /// Reads each file on `threads` threads where it can be cut into spans
    /// ([`MultiFileReader::threads`]); the records and so the batches are the same. A byte
    /// range ([`BatchReader::byte_range`]) is read on one.
    pub fn read_threads(mut self, threads: usize) -> BatchReader {
        self.source = match self.source {
            Source::Files(files) => Source::Files(files.threads(threads)),
            range => range,
        };
        self
    }

    /// Batches of the records of one uncompressed file whose header offsets lie in
    /// `start..end` (so that byte ranges splitting a file give each record to one range). The
    /// record index at `RecordIndex::default_path(path)` is used when present, else the file's
    /// headers are scanned.
    pub fn byte_range(
        path: &Path,
        start: u64,
        end: u64,
        options: ReaderOptions,
        columns: ColumnSpecs,
        batch_rows: usize,
    ) -> Result<BatchReader, BatchError> {
        let index = match RecordIndex::load(RecordIndex::default_path(path)) {
            Ok(index) => index,
            Err(_) => RecordIndex::build(path)?,
        };
        let entries: Vec<IndexEntry> = index
            .entries()
            .iter()
            .copied()
            .filter(|e| e.offset >= start && e.offset < end)
            .collect();
        let io = |error| BatchError::Io {
            path: path.to_path_buf(),
            error,
        };
        // A local file, or an object read by ranged GETs from `start` on (seeking restarts
        // the read-ahead there, so a range costs its own bytes, not the object's).
        let file = FileOrObject::open(path).map_err(io)?;
        let mut reader = RecordReader::new_seekable(BufReader::new(file), options)
            .map_err(io)?
            .with_path(path);
        let first = index.entries().iter().position(|e| e.offset >= start).unwrap_or(0);
        if let Some(e) = entries.first() {
            reader.seek_to(e.offset, first as u64)?;
        }
        let source = Source::Range {
            reader,
            path: path.to_path_buf(),
            entries,
            next: 0,
        };
        Ok(BatchReader::with_source(source, columns, batch_rows))
    }

    fn with_source(source: Source, columns: ColumnSpecs, batch_rows: usize) -> BatchReader {
        BatchReader {
            source,
            columns,
            batch_rows: batch_rows.max(1),
            remaining: None,
            arena: Vec::new(),
            ends: Vec::new(),
            places: Vec::new(),
            records_read: 0,
            failed: false,
            batch_left: 0,
            batch_done: 0,
        }
    }

    /// Stops after `n` records.
    pub fn limit(mut self, n: Option<u64>) -> BatchReader {
        self.remaining = n;
        self
    }

    /// The on-disk size of the input files and a counter of the bytes read so far, for a
    /// progress bar (`None` for a byte range).
    pub fn disk_progress(&self) -> Option<(u64, std::sync::Arc<std::sync::atomic::AtomicU64>)> {
        match &self.source {
            Source::Files(r) => Some((r.total_disk_bytes(), r.disk_bytes_counter())),
            Source::Range { .. } => None,
        }
    }

    /// Records read so far.
    pub fn records_read(&self) -> u64 {
        self.records_read
    }

    /// What the reader has read and skipped so far (damaged regions under
    /// [`OnCorruption::Resync`](crate::record::OnCorruption::Resync), files under
    /// [`OnCorruption::SkipFile`](crate::record::OnCorruption::SkipFile)).
    pub fn stats(&self) -> ReadStats {
        match &self.source {
            Source::Files(r) => r.stats(),
            Source::Range { reader, .. } => reader.stats(),
        }
    }

    /// The problems skipped so far, each naming its file and offset.
    pub fn problems(&self) -> Vec<&RecordError> {
        match &self.source {
            Source::Files(r) => r.problems(),
            Source::Range { reader, .. } => reader.problems().iter().collect(),
        }
    }

    /// The columns the batches follow.
    pub fn columns(&self) -> &ColumnSpecs {
        &self.columns
    }

    fn path_of(&self, file: usize) -> String {
        match &self.source {
            Source::Files(r) => r
                .files()
                .get(file)
                .map_or_else(String::new, |p| p.display().to_string()),
            Source::Range { path, .. } => path.display().to_string(),
        }
    }

    /// Reads up to `limit` records into the arena (in place of what it held); returns how many.
    fn fill(&mut self, limit: usize) -> Result<usize, RecordError> {
        let want = match self.remaining {
            Some(r) => (limit as u64).min(r) as usize,
            None => limit,
        };
        self.places.clear();
        self.arena.clear();
        self.ends.clear();
        let mut n = 0;
        // The arena is sized once a fill, from its first records: sizing it again as more came
        // moved it each time, and the allocator copies a block's whole room, read or not.
        let mut sized = false;
        while n < want {
            if !sized && n >= RECORDS_BEFORE_RESERVING {
                self.reserve_for_batch(n, want);
                sized = true;
            }
            if let Source::Files(r) = &mut self.source {
                // The records whole in the reader's window in one loop; the rest one by one.
                let (arena, ends, places) = (&mut self.arena, &mut self.ends, &mut self.places);
                let taken = r.take_whole_in_window(want - n, |data, file, offset| {
                    arena.extend_from_slice(data);
                    ends.push(arena.len());
                    places.push((file, offset));
                });
                if taken > 0 {
                    n += taken;
                    continue;
                }
            }
            let place = match &mut self.source {
                Source::Files(r) => match r.next_located()? {
                    Some(rec) => {
                        self.arena.extend_from_slice(rec.data);
                        (rec.file_index, rec.offset)
                    }
                    None => break,
                },
                Source::Range {
                    reader, entries, next, ..
                } => {
                    let Some(entry) = entries.get(*next) else {
                        break;
                    };
                    *next += 1;
                    let Some(data) = reader.next_record()? else {
                        break;
                    };
                    self.arena.extend_from_slice(data);
                    (0, entry.offset)
                }
            };
            self.ends.push(self.arena.len());
            self.places.push(place);
            n += 1;
        }
        if let Some(r) = self.remaining.as_mut() {
            *r -= n as u64;
        }
        self.records_read += n as u64;
        Ok(n)
    }

    /// [`fill`](Self::fill), the reader stopping at a read error.
    fn fill_or_stop(&mut self, limit: usize) -> Result<usize, BatchError> {
        match self.fill(limit) {
            Ok(0) => {
                // The end: nothing more is read into the buffers.
                self.release();
                Ok(0)
            }
            Ok(n) => Ok(n),
            Err(e) => {
                self.stop();
                Err(BatchError::Record(e))
            }
        }
    }

    /// Ends the reading after an error: nothing more is handed out, and the buffers of the
    /// batch that failed are freed now, not when the reader is dropped (a caller that keeps
    /// the reader, or the error's traceback that does, keeps no batch's worth of records).
    fn stop(&mut self) {
        self.failed = true;
        self.release();
    }

    /// Frees the records read last and their places.
    fn release(&mut self) {
        self.arena = Vec::new();
        self.ends = Vec::new();
        self.places = Vec::new();
    }

    /// Makes room in the arena for `want` records (a batch, or a round of parts) at the
    /// average size of the `n` read so far, when it has less. The first fill then grows the
    /// arena once, early, rather than by doubling: each doubling copied what it held into
    /// memory never touched before, and on seq_bytes' 65,536-row batches those steps were more
    /// than half of `convert`'s page clearing. Later fills find the room already there.
    ///
    /// The guess is bounded by what was read ([`ARENA_AHEAD`]): a batch that starts with
    /// small records and goes on with large ones (or the reverse) is not given room for
    /// `want` records of the wrong size.
    fn reserve_for_batch(&mut self, n: usize, want: usize) {
        let len = self.arena.len();
        let per_record = len / n.max(1) + 1;
        let batch = per_record.saturating_mul(want);
        let room = batch
            .saturating_add(batch / 8)
            .min(len.saturating_add(len.max(ARENA_AHEAD)));
        if room > self.arena.capacity() {
            // Only room: pages are touched as records fill them. A new block takes the bytes
            // read, not `realloc`, which copies the old block's whole room (read or not) and
            // so touches pages no record needed. Larger batches than this (or a failed
            // reservation) grow the arena as before.
            let mut grown = Vec::new();
            if grown.try_reserve_exact(room).is_ok() {
                grown.extend_from_slice(&self.arena);
                self.arena = grown;
            }
        }
    }

    /// The next batch, `Ok(None)` at the end.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>, BatchError> {
        if self.failed {
            return Ok(None);
        }
        // A batch being handed out in parts is left: this batch starts after its rows so far.
        (self.batch_left, self.batch_done) = (0, 0);
        let n = self.fill_or_stop(self.batch_rows)?;
        if n == 0 {
            return Ok(None);
        }
        let records = self.records();
        let batch = self.columns.to_batch(&records);
        drop(records);
        batch.map(Some).map_err(|error| self.columns_error(error, n))
    }

    /// The next batch parsed a slice of `width` columns at a time, each handed to `each` with
    /// its first column's index as soon as it is made ([`ColumnSpecs::to_column_slices`]);
    /// `Ok(false)` at the end. An error is the one [`next_batch`](Self::next_batch) gives.
    pub fn next_batch_slices(
        &mut self,
        width: usize,
        mut each: impl FnMut(usize, RecordBatch),
    ) -> Result<bool, BatchError> {
        if self.failed {
            return Ok(false);
        }
        (self.batch_left, self.batch_done) = (0, 0);
        let n = self.fill_or_stop(self.batch_rows)?;
        if n == 0 {
            return Ok(false);
        }
        let records = self.records();
        let parsed = self.columns.to_column_slices(&records, width, |first, slice| {
            each(first, slice);
            Ok(())
        });
        drop(records);
        parsed.map(|()| true).map_err(|error| self.columns_error(error, n))
    }

    /// The next batch in parts of [`PART_ROWS`] rows (the last may be shorter), `at_once`
    /// of them at a time, parsed in parallel on the current rayon pool; with `true` when
    /// they end the batch (an input that ends just after a round of parts ends its batch
    /// with a round of none). `Ok(None)` at the end.
    ///
    /// The parts of a batch hold its rows in order: a writer that takes them one after the
    /// other (a Parquet row group) writes what it would write of the whole batch, without
    /// the batch ever built whole, and can start on a part while the next ones are parsed.
    /// Only a round's records are read at a time, so neither are the batch's records all in
    /// memory at once (for a batch of long sequences they were a large share of what `convert`
    /// touched). Parts do not depend on `at_once`, so neither does what is written.
    /// An error is the one [`next_batch`](Self::next_batch) gives for a record's problem: the
    /// round is parsed again whole to find it, and its row is counted in the batch.
    pub fn next_parts(&mut self, at_once: usize) -> Result<Option<(Vec<RecordBatch>, bool)>, BatchError> {
        if self.failed {
            return Ok(None);
        }
        let starts_batch = self.batch_left == 0;
        if starts_batch {
            (self.batch_left, self.batch_done) = (self.batch_rows, 0);
        } else {
            self.batch_done += self.ends.len();
        }
        // Whole parts only, but for the batch's last: parts start where they would in the batch.
        let asked = (PART_ROWS * at_once.max(1)).min(self.batch_left);
        let n = self.fill_or_stop(asked)?;
        if n == 0 {
            self.batch_left = 0;
            return Ok((!starts_batch).then(|| (Vec::new(), true)));
        }
        // Fewer than asked: the input (or the limit) has ended.
        self.batch_left = if n < asked { 0 } else { self.batch_left - n };
        let records = self.records();
        let parsed: Vec<Result<RecordBatch, ColumnarError>> = {
            use rayon::prelude::*;
            records
                .par_chunks(PART_ROWS)
                .map(|part| self.columns.to_batch(part))
                .collect()
        };
        let parts: Result<Vec<RecordBatch>, ColumnarError> = parsed.into_iter().collect();
        let outcome = match parts {
            Ok(parts) => Ok(parts),
            // The round's error, with its record index and wording as the whole round has them.
            Err(part_error) => Err(self.columns.to_batch(&records).err().unwrap_or(part_error)),
        };
        drop(records);
        match outcome {
            Ok(parts) => Ok(Some((parts, self.batch_left == 0))),
            Err(error) => Err(self.columns_error(error, n)),
        }
    }

    /// The records in the arena.
    fn records(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let record = self.arena.get(start..end).unwrap_or_default();
                start = end;
                record
            })
            .collect()
    }

    /// The `n` records in the arena failed to parse: the error, placed at its record and
    /// with its row counted in the batch, and the reader stops.
    fn columns_error(&mut self, error: ColumnarError, n: usize) -> BatchError {
        let row = error.row();
        let place = row
            .and_then(|r| self.places.get(r).copied())
            .or_else(|| self.places.first().copied());
        let at = place.map_or_else(String::new, |(file, offset)| {
            format!("{}@{}", self.path_of(file), offset)
        });
        self.stop();
        BatchError::Columns {
            at,
            first_record: self.records_read - (self.batch_done + n) as u64,
            error: Box::new(error.rows_after(self.batch_done)),
        }
    }
}

/// Rows of a part of a batch (see [`BatchReader::next_parts`]): parsed on their own, a part's
/// columns take a few MB, which a thread of the pool keeps in its caches and the allocator
/// reuses from one part to the next.
pub const PART_ROWS: usize = 4096;

/// An error of [`BatchReader`]: reading the records, or making columns of them.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Reading the records failed.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Indexing the file of a byte range failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// Opening the file of a byte range failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed (in the text too, so not a `source()`: the crate's rule).
        error: std::io::Error,
    },
    /// Parsing a batch into columns failed.
    #[error("{at} (batch from record {first_record}): {error}")]
    Columns {
        /// `path@offset` of the record at fault (or of the batch's first record).
        at: String,
        /// The number of records read before the batch.
        first_record: u64,
        /// What is wrong (boxed to keep the `Result` small).
        error: Box<ColumnarError>,
    },
}

impl Iterator for BatchReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))
            .transpose()
    }
}

impl RecordBatchReader for BatchReader {
    fn schema(&self) -> SchemaRef {
        self.columns.schema()
    }
}

/// The first `n` records of `files`, for inferring a spec.
pub fn sample_records(files: &[PathBuf], options: ReaderOptions, n: usize) -> Result<Vec<Vec<u8>>, RecordError> {
    let mut reader = MultiFileReader::new(files.to_vec(), options);
    let mut out = Vec::new();
    while out.len() < n {
        match reader.next_record()? {
            Some(r) => out.push(r.to_vec()),
            None => break,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::test_support::{encoded_example, encoded_sequence_example};
    use crate::example::Feature;
    use crate::record::{RecordWriter, WriterOptions};

    /// A file of `records`, and a reader of it in batches of `batch_rows` under `spec`.
    fn reader_of(dir: &Path, records: &[Vec<u8>], spec: serde_json::Value, batch_rows: usize) -> BatchReader {
        let path = dir.join("in.tfrecord");
        let mut writer = RecordWriter::create(&path, WriterOptions::default()).expect("create");
        for r in records {
            writer.write_record(r).expect("write");
        }
        writer.finish().expect("finish");
        let spec = SpecFile::from_json_str(&spec.to_string()).expect("spec");
        let columns = ColumnSpecs::new(&spec, &StringColumns::Binary).expect("columns");
        BatchReader::new(vec![path], ReaderOptions::default(), columns, batch_rows)
    }

    /// Every batch of a reader, and every batch's parts (`at_once` at a time, on a pool of
    /// `threads`) glued back into batches: they must be the same.
    fn whole_and_in_parts(make: impl Fn() -> BatchReader, at_once: usize, threads: usize) {
        let mut whole = make();
        let mut batches = Vec::new();
        while let Some(b) = whole.next_batch().expect("batch") {
            batches.push(b);
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let mut in_parts = make();
        let mut glued: Vec<Vec<RecordBatch>> = vec![Vec::new()];
        while let Some((parts, ends)) = pool.install(|| in_parts.next_parts(at_once)).expect("parts") {
            assert!(parts.iter().all(|p| p.num_rows() <= PART_ROWS));
            glued.last_mut().expect("a batch").extend(parts);
            if ends {
                glued.push(Vec::new());
            }
        }
        assert!(glued.pop().is_some_and(|rest| rest.is_empty()));
        assert_eq!(glued.len(), batches.len());
        for (batch, parts) in batches.iter().zip(&glued) {
            let mut at = 0;
            for part in parts {
                assert_eq!(part, &batch.slice(at, part.num_rows()), "rows from {at}");
                at += part.num_rows();
            }
            assert_eq!(at, batch.num_rows());
        }
        assert_eq!(in_parts.records_read(), whole.records_read());
    }

    /// A batch's parts hold its rows in order (nullable lists and strings of Examples, feature
    /// lists and a context of SequenceExamples), whatever the number of parts at a time and
    /// of threads; batches of several parts, of one, and a short last part.
    #[test]
    fn a_batch_in_parts_is_the_batch() {
        let dir = tempfile::tempdir().expect("temp");
        let n = 2 * PART_ROWS + 300;
        let examples: Vec<Vec<u8>> = (0..n as i64)
            .map(|i| {
                let mut f = vec![("id", Feature::Int64(vec![i]))];
                if i % 3 != 0 {
                    f.push(("tags", Feature::Int64((0..i % 5).collect())));
                }
                f.push(("name", Feature::Bytes(vec![format!("n{i}").into_bytes()])));
                encoded_example(&f)
            })
            .collect();
        let spec = serde_json::json!({
            "id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            "tags": {"type": "VarLenFeature", "dtype": "int64"},
            "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
        });
        let sequences: Vec<Vec<u8>> = (0..n as i64)
            .map(|i| {
                let steps = (0..i % 4).map(|s| Feature::Float(vec![s as f32, i as f32])).collect();
                encoded_sequence_example(&[("id", Feature::Int64(vec![i]))], &[("x", steps)])
            })
            .collect();
        let sequence_spec = serde_json::json!({
            "context_features": {"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}},
            "sequence_features": {"x": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32", "allow_missing": true}},
        });
        for (records, spec) in [(&examples, &spec), (&sequences, &sequence_spec)] {
            for batch_rows in [PART_ROWS * 2 + 100, 1000, n] {
                for (at_once, threads) in [(1, 1), (2, 2), (3, 2)] {
                    let make = || reader_of(dir.path(), records, spec.clone(), batch_rows);
                    whole_and_in_parts(make, at_once, threads);
                }
            }
        }
    }

    /// A batch's column slices, side by side, are the batch: for every width (one column, some,
    /// all and more), with a spec order that is not the names' (slices then wait for their
    /// last column), NULLs, strings, lists and a SparseFeature; and the reader's slices of
    /// every batch are its batches.
    #[test]
    fn a_batch_in_column_slices_is_the_batch() {
        let dir = tempfile::tempdir().expect("temp");
        let records: Vec<Vec<u8>> = (0..40i64)
            .map(|i| {
                let mut f = vec![("id", Feature::Int64(vec![i]))];
                if i % 3 != 0 {
                    f.push(("ix", Feature::Int64(vec![i % 3])));
                    f.push(("tags", Feature::Int64((0..i % 5).collect())));
                    f.push(("v", Feature::Float(vec![i as f32])));
                }
                f.push(("name", Feature::Bytes(vec![format!("n{i}").into_bytes()])));
                encoded_example(&f)
            })
            .collect();
        let text = r#"{
            "tags": {"type": "VarLenFeature", "dtype": "int64"},
            "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
            "sp": {"type": "SparseFeature", "index_key": "ix", "value_key": "v", "dtype": "float32", "size": 3},
            "id": {"type": "FixedLenFeature", "shape": [1], "dtype": "int64"}
        }"#;
        let spec = SpecFile::from_json_str(text).expect("spec");
        let columns =
            ColumnSpecs::with_order(&spec, &super::super::spec_order(text), &StringColumns::Utf8).expect("columns");
        let batch = columns.to_batch(&records).expect("batch");
        for width in [1, 2, 3, 4, 9] {
            let mut glued: Vec<arrow_array::ArrayRef> = Vec::new();
            columns
                .to_column_slices(&records, width, |first, slice| {
                    assert_eq!(first, glued.len());
                    assert!(slice.num_columns() <= width && slice.num_rows() == records.len());
                    assert_eq!(
                        slice.schema().fields()[..],
                        batch.schema().fields()[first..first + slice.num_columns()]
                    );
                    glued.extend(slice.columns().iter().cloned());
                    Ok(())
                })
                .expect("slices");
            assert_eq!(glued.as_slice(), batch.columns(), "width {width}");
        }
        let json = serde_json::from_str(text).expect("json");
        let mut whole = reader_of(dir.path(), &records, json, 16);
        let mut batches = Vec::new();
        while let Some(b) = whole.next_batch().expect("batch") {
            batches.push(b);
        }
        let mut sliced = reader_of(dir.path(), &records, serde_json::from_str(text).expect("json"), 16);
        for batch in &batches {
            let mut glued: Vec<arrow_array::ArrayRef> = Vec::new();
            assert!(sliced
                .next_batch_slices(2, |_, slice| glued.extend(slice.columns().iter().cloned()))
                .expect("slices"));
            assert_eq!(glued.as_slice(), batch.columns());
        }
        assert!(!sliced
            .next_batch_slices(2, |_, _| panic!("no more batches"))
            .expect("end"));
    }

    /// The first batch's arena is sized from its first records and then filled, not grown by
    /// doubling (which leaves up to twice the room it needs and copies it all at each step);
    /// the next batch reuses it; a short input does not reserve room for records it lacks.
    #[test]
    fn the_arena_grows_to_a_batch_once() {
        let dir = tempfile::tempdir().expect("temp");
        let records: Vec<Vec<u8>> = (0..12_000i64)
            .map(|i| encoded_example(&[("x", Feature::Int64((0..80).map(|v| (1 << 40) + v * 7 + i).collect()))]))
            .collect();
        let spec = serde_json::json!({"x": {"type": "VarLenFeature", "dtype": "int64"}});
        let mut reader = reader_of(dir.path(), &records, spec.clone(), 6_000);
        assert_eq!(reader.fill(6_000).expect("fill"), 6_000);
        let (len, capacity, at) = (reader.arena.len(), reader.arena.capacity(), reader.arena.as_ptr());
        assert!(len > 1 << 20, "{len} bytes: enough for many doublings");
        assert!(capacity <= len + len / 4, "{capacity} bytes of room for {len}");
        assert_eq!(reader.fill(6_000).expect("fill"), 6_000);
        assert_eq!(reader.arena.as_ptr(), at, "the second batch reuses the arena");
        let mut short = reader_of(dir.path(), &records[..3], spec, usize::MAX);
        assert_eq!(short.fill(usize::MAX).expect("fill"), 3);
        assert!(short.arena.capacity() <= 2 * short.arena.len());
    }

    /// The input of issue 54: one SequenceExample, then Examples of a 100 KB image each, under
    /// a sequence spec whose required context feature the Examples lack. The batch fails at
    /// its second record; filling it must not reserve room for a whole batch of images (the
    /// guess from its first records, then a guess again as each window came, moved the arena
    /// each time and touched gigabytes for 5 MB), and the failed batch's records are freed
    /// before the error is handed out. Whole or in parts, at the default batch size.
    #[test]
    fn a_batch_whose_records_change_kind_takes_what_it_holds() {
        let dir = tempfile::tempdir().expect("temp");
        let mut records = vec![encoded_sequence_example(
            &[("age", Feature::Float(vec![19.0]))],
            &[("x", vec![Feature::Int64(vec![1, 2])])],
        )];
        for i in 0..48u8 {
            let image: Vec<u8> = (0..100_000u32).map(|b| (b as u8) ^ i).collect();
            records.push(encoded_example(&[
                ("label", Feature::Int64(vec![i64::from(i % 2)])),
                ("image_raw", Feature::Bytes(vec![image])),
            ]));
        }
        let total: usize = records.iter().map(Vec::len).sum();
        let spec = serde_json::json!({
            "context_features": {"age": {"type": "FixedLenFeature", "shape": [], "dtype": "float32"}},
            "sequence_features": {"x": {"type": "VarLenFeature", "dtype": "int64"}},
        });
        let bound = 2 * total + ARENA_AHEAD;
        let mut reader = reader_of(dir.path(), &records, spec.clone(), 65_536);
        assert_eq!(reader.fill(65_536).expect("fill"), records.len());
        assert!(
            reader.arena.capacity() <= bound,
            "{} bytes of room for {total} bytes of records",
            reader.arena.capacity()
        );
        let mut whole = reader_of(dir.path(), &records, spec.clone(), 65_536);
        let error = whole
            .next_batch()
            .expect_err("the second record lacks `age`")
            .to_string();
        assert!(error.contains("age") && error.contains("example 1"), "{error}");
        assert_eq!(whole.arena.capacity(), 0, "the failed batch's records are freed");
        assert!(whole.places.capacity() == 0 && whole.ends.capacity() == 0);
        assert!(matches!(whole.next_batch(), Ok(None)));
        let mut in_parts = reader_of(dir.path(), &records, spec, 65_536);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
        let got = pool.install(|| in_parts.next_parts(2)).expect_err("the same error");
        assert_eq!(got.to_string(), error);
        assert_eq!(in_parts.arena.capacity(), 0, "the failed round's records are freed");
    }

    /// A record's error in a later round of parts is the error the whole batch gives: its row
    /// and place counted in the batch, the batch's first record, the same words; and nothing
    /// is handed out after it. Also an input that ends just after a round: its batch ends with
    /// a round of no parts.
    #[test]
    fn an_error_in_a_later_round_of_parts_is_the_batch_error() {
        let dir = tempfile::tempdir().expect("temp");
        let n = 3 * PART_ROWS + 50;
        // Record `bad` lacks its id (`utf8`: has a name that is not UTF-8 instead).
        let record = |i: usize, bad: Option<usize>, utf8: bool| {
            let name = if bad == Some(i) && utf8 {
                vec![0xff, 0xfe]
            } else {
                format!("n{i}").into_bytes()
            };
            let mut f = vec![("name", Feature::Bytes(vec![name]))];
            if bad != Some(i) || utf8 {
                f.push(("id", Feature::Int64(vec![i as i64])));
            }
            encoded_example(&f)
        };
        let spec = serde_json::json!({
            "id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
        });
        let columns = |utf8: bool| {
            let spec = SpecFile::from_json_str(&spec.to_string()).expect("spec");
            let strings = if utf8 {
                StringColumns::Utf8
            } else {
                StringColumns::Binary
            };
            ColumnSpecs::new(&spec, &strings).expect("columns")
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
        // A missing required feature (a parse error), and a string that is not UTF-8.
        let cases = [
            (PART_ROWS + 4_000 + 7, false),
            (2 * PART_ROWS + 3, true),
            (PART_ROWS + 40, true),
            (n + PART_ROWS + 5, false),
            (n + 2 * PART_ROWS + 9, true),
        ];
        for (bad, utf8) in cases {
            let records: Vec<Vec<u8>> = (0..2 * n).map(|i| record(i, Some(bad), utf8)).collect();
            let path = dir.path().join(format!("bad-{bad}.tfrecord"));
            let mut writer = RecordWriter::create(&path, WriterOptions::default()).expect("create");
            for r in &records {
                writer.write_record(r).expect("write");
            }
            writer.finish().expect("finish");
            let make = || BatchReader::new(vec![path.clone()], ReaderOptions::default(), columns(utf8), n);
            let mut whole = make();
            let expected = loop {
                match whole.next_batch() {
                    Ok(Some(_)) => continue,
                    Ok(None) => panic!("no error for record {bad}"),
                    Err(e) => break e.to_string(),
                }
            };
            assert!(
                expected.contains(&format!("batch from record {}", bad / n * n)),
                "{expected}"
            );
            let row = if utf8 {
                format!("row {}", bad % n)
            } else {
                format!("(example {})", bad % n)
            };
            assert!(expected.contains(&row), "{expected}");
            for at_once in [1, 2] {
                let mut in_parts = make();
                let got = loop {
                    match pool.install(|| in_parts.next_parts(at_once)) {
                        Ok(Some(_)) => continue,
                        Ok(None) => panic!("no error for record {bad} in parts"),
                        Err(e) => break e.to_string(),
                    }
                };
                assert_eq!(got, expected, "record {bad}, {at_once} parts at a time");
                assert!(matches!(in_parts.next_parts(at_once), Ok(None)));
            }
        }
        // 2 * PART_ROWS records in batches of more: the second round ends the input, and the
        // batch with a round of none.
        let records: Vec<Vec<u8>> = (0..2 * PART_ROWS).map(|i| record(i, None, false)).collect();
        let mut reader = reader_of(dir.path(), &records, spec, n);
        let rounds: Vec<(usize, bool)> = std::iter::from_fn(|| reader.next_parts(1).expect("parts"))
            .map(|(parts, ends)| (parts.len(), ends))
            .collect();
        assert_eq!(rounds, [(1, false), (1, false), (0, true)]);
    }
}

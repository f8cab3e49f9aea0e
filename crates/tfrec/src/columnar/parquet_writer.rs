//! Arrow record batches written as a Parquet file, a row group per batch, with the row groups'
//! columns encoded concurrently on a thread pool and the memory they hold bounded (feature
//! `parquet`). `tfrec convert` and `tfrec.arrow.write_parquet` write through [`ParquetWriter`];
//! the file's bytes are the same whatever the number of threads.
//!
//! A batch comes whole ([`ParquetWriter::write_batch`]) or in parts, one after the other
//! ([`ParquetWriter::write_part`], then [`ParquetWriter::end_row_group`]); a schema narrow
//! enough to encode part by part ([`ParquetWriter::takes_parts`]) is best given parts as they
//! are parsed ([`BatchReader::next_parts`](super::BatchReader::next_parts)), so a batch is never
//! whole in memory. Parts of a batch cut at other rows give a file of the same rows, not
//! always the same bytes (pages are cut where the parts' slices fall): for the same bytes, give
//! the parts the reader gives.
//!
//! The file is Snappy-compressed, with dictionary encoding for a schema of up to
//! [`ParquetWriter::DICTIONARY_MAX_COLUMNS`] columns, and holds its Arrow schema in the footer,
//! as `ArrowWriter`'s files do.

use std::io::Write;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{FieldRef, SchemaRef};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression as ParquetCompression;
pub use parquet::errors::ParquetError;
use parquet::errors::Result;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedRowGroupWriter;
use parquet::schema::types::SchemaDescPtr;
use rayon::prelude::*;
use rayon::ThreadPool;

use super::parquet_file::ParquetFile;

/// Columns encoded at a time into a Parquet row group (see [`ParquetWriter`]).
const PARQUET_COLUMNS_AT_ONCE: usize = 1024;

/// The widest schema whose row groups are encoded part by part as the parts come (see
/// [`ParquetWriter`]).
const PARQUET_STREAMED_COLUMNS: usize = 16;

/// The widest schema written to Parquet with dictionary encoding (see
/// [`ParquetWriter::DICTIONARY_MAX_COLUMNS`]).
const PARQUET_DICTIONARY_MAX_COLUMNS: usize = 4096;

/// The most row groups of a streamed schema encoded at once (with as many threads or more;
/// see [`ParquetWriter`]). Each holds its encoded pages until it is written.
const PARQUET_GROUPS_AT_ONCE: usize = 4;

/// A row group starts beside those still encoding only while they hold fewer bytes than
/// this (their encoders' memory, as each last told after a part). Overlapping large row
/// groups doubled the peak memory and gained no time; small ones gain from it (the guide's
/// performance page has the measurements).
const PARQUET_GROUPS_BYTES: usize = 64 << 20;

/// The most bytes of parts waiting for the encoders of row groups on their threads (see
/// [`Backlog`]); a part larger than this still goes when nothing else waits.
const PARQUET_BACKLOG_BYTES: usize = 64 << 20;

/// A Parquet file written a row group per batch, from the batch's parts.
///
/// A schema of up to 16 columns (a sequence table, most often) has
/// every column's encoder take each part as it comes, and the part is then dropped: the
/// batch is never whole in memory, and encoding overlaps the parse of the next parts. A wider
/// schema's batch is kept until its end (it may as well come whole, see
/// [`ParquetWriter::takes_parts`]) and encoded column by column, each column taking all its rows while its dictionary is in the caches
/// (parts that went through every column in turn were slower: each left the caches cold).
///
/// `ArrowWriter` keeps an encoder for every column of the schema while a row group is open,
/// tens of kilobytes each with dictionary encoding: a record of a million one-value features
/// would need more memory than a machine has. So the kept parts are encoded a slice of 1024
/// columns at a time, and only that many encoders live at once. Either way the finished
/// column chunks are spliced into the row group in schema order, so the file is the same
/// kind of file `ArrowWriter` writes (its Arrow schema in the footer included).
///
/// With a pool of two threads or more, columns are encoded in parallel (a column's encoder
/// is its own; only the splicing is in order), and within a column the next slice's levels
/// are computed while the encoders take this one. A streamed schema's row groups are then
/// also encoded several at once (up to 4, no more than the threads, and while those encoding
/// hold less than 64 MB), each by its own
/// encoders on a thread that takes its parts as they come: a table of one large column (a
/// sequence feature) has one encoder a row group, and encoding row groups one after the
/// other left the other threads idle. The chunks are spliced in row group order.
pub struct ParquetWriter<W: Write + Send> {
    file: ParquetFile<W>,
    columns: Arc<ColumnEncoding>,
    row_groups: usize,
    /// The row group being written, if one is.
    open: Option<OpenGroup>,
    /// Row groups ended but still encoding on their threads, oldest first.
    ending: std::collections::VecDeque<GroupAway>,
    /// Row groups encoded at once: the open one and those ending.
    groups_at_once: usize,
    /// Those ending must hold fewer bytes than this for another to start beside them.
    groups_bytes: usize,
    /// The parts sent to the row groups' threads and not yet encoded.
    backlog: Arc<Backlog>,
    /// Rows given so far.
    rows: u64,
}

/// What makes and drives the column encoders of a file.
struct ColumnEncoding {
    schema: SchemaRef,
    props: WriterProperties,
    pool: Arc<ThreadPool>,
}

/// A row group between its first part and its end.
enum OpenGroup {
    /// Each column's encoders (one per Parquet leaf), given every part as it came, and the
    /// descriptor of the schema they encode.
    Encoding(SchemaDescPtr, Vec<Vec<ArrowColumnWriter>>),
    /// The parts so far, of a schema wider than [`PARQUET_STREAMED_COLUMNS`].
    Parts(Vec<RecordBatch>),
    /// Encoded on a thread of its own (see [`ColumnEncoding::encode_away`]), which is sent the
    /// parts; dropping the sender ends the group.
    Away(std::sync::mpsc::Sender<QueuedPart>, GroupAway),
    /// Given in slices of columns, every row of them ([`ParquetWriter::write_columns`]), each
    /// encoded and written when it comes: the next column expected, and the rows.
    Columns { next: usize, rows: usize },
}

/// A row group encoding on its thread: its column chunks in schema order, once the thread has
/// encoded them all, and the bytes its encoders held after the last part they took.
struct GroupAway {
    descr: SchemaDescPtr,
    chunks: std::sync::mpsc::Receiver<Result<Vec<ArrowColumnChunk>>>,
    held: Arc<std::sync::atomic::AtomicUsize>,
}

/// The bytes of the parts sent to row groups' threads and not yet encoded. The parse runs
/// ahead of the encoders, so without a bound each row group encoding would have up to its
/// whole batch of parts waiting in memory; with it, at most [`PARQUET_BACKLOG_BYTES`] wait,
/// and the writer, and the parse behind it, wait for the encoders.
struct Backlog {
    bytes: std::sync::Mutex<usize>,
    drained: std::sync::Condvar,
    limit: usize,
}

impl Backlog {
    fn new(limit: usize) -> Self {
        Backlog {
            bytes: std::sync::Mutex::new(0),
            drained: std::sync::Condvar::new(),
            limit,
        }
    }

    /// Waits for room for `bytes` more, then counts them.
    fn admit(&self, bytes: usize) {
        // No code panics while holding the lock, so a poisoned one still holds a good count.
        let mut held = self.bytes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while *held > 0 && *held + bytes > self.limit {
            held = self
                .drained
                .wait(held)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *held += bytes;
    }

    fn release(&self, bytes: usize) {
        let mut held = self.bytes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *held = held.saturating_sub(bytes);
        self.drained.notify_all();
    }
}

/// A part on its way to a row group's thread. Its bytes leave the backlog when it is dropped,
/// however that happens: encoded, skipped by a thread that stopped at an error, or dropped
/// with the channel of a thread that is gone; so the writer never waits for room forever.
struct QueuedPart {
    part: RecordBatch,
    bytes: usize,
    backlog: Arc<Backlog>,
}

impl QueuedPart {
    fn new(part: &RecordBatch, backlog: &Arc<Backlog>) -> Self {
        let bytes = part.get_array_memory_size();
        backlog.admit(bytes);
        QueuedPart {
            part: part.clone(),
            bytes,
            backlog: Arc::clone(backlog),
        }
    }
}

impl Drop for QueuedPart {
    fn drop(&mut self) {
        self.backlog.release(self.bytes);
    }
}

/// Arrow bytes of a column handed to its Parquet encoder at a time (see [`column_slices`]).
const PARQUET_SLICE_BYTES: usize = 1 << 20;

/// The row ranges in which a column of `rows` rows is given to its encoder: slices of about
/// [`PARQUET_SLICE_BYTES`] (at least a row, and one empty slice for no rows).
///
/// `compute_leaves` builds a column's definition and repetition levels and an 8-byte index
/// for every value at once, in vectors grown by doubling: for a batch of long sequences that
/// was a large share of `convert`'s memory and time (page faults and copies). By slices it is
/// a few MB, reused. The column chunk holds the same values;
/// its pages are cut by their size as before.
fn column_slices(column: &ArrayRef, rows: usize) -> impl Iterator<Item = (usize, usize)> {
    // The bytes the values take, not the buffers' capacity: that depends on how the parse
    // grew them (on how many threads), and the file must not.
    let bytes = column.to_data().get_slice_memory_size().unwrap_or(0);
    let per_row = bytes / rows.max(1);
    let step = (PARQUET_SLICE_BYTES / per_row.max(1)).max(1);
    let count = rows.div_ceil(step).max(1);
    // Every slice but the one of no rows starts inside the column: `i * step < rows`.
    (0..count).map(move |i| (i * step, step.min(rows - i * step)))
}

/// A column's encoders (one per Parquet leaf) given all the rows of `column`.
///
/// The levels of the next slice are computed while the encoders take this one (a `join`:
/// another thread of the pool takes it when one is free, else it runs here after), so that
/// one large column, the usual case of a sequence table, is not all on one thread.
fn encode_column(field: &FieldRef, column: &ArrayRef, writers: &mut [ArrowColumnWriter]) -> Result<()> {
    let leaves_of = |(offset, len): (usize, usize)| compute_leaves(field, &column.slice(offset, len));
    let mut slices = column_slices(column, column.len());
    let mut leaves = slices.next().map(leaves_of).transpose()?;
    while let Some(these) = leaves.take() {
        if these.len() != writers.len() {
            return Err(ParquetError::General(format!(
                "column '{}': {} Parquet leaves for {} encoders: schema and batch disagree",
                field.name(),
                these.len(),
                writers.len()
            )));
        }
        let next = slices.next();
        let (following, written) = rayon::join(
            || next.map(leaves_of).transpose(),
            || {
                these
                    .iter()
                    .zip(writers.iter_mut())
                    .try_for_each(|(leaf, writer)| writer.write(leaf))
            },
        );
        written?;
        leaves = following?;
    }
    Ok(())
}

impl ColumnEncoding {
    /// The encoders of row group `row_group` for the schema's columns `range`, by column, and
    /// the descriptor of that slice of the schema. They are made by a writer of the slice
    /// alone: a column's encoder depends only on its own field, so its chunks fit the whole
    /// file.
    fn encoders(
        &self,
        range: std::ops::Range<usize>,
        row_group: usize,
    ) -> Result<(SchemaDescPtr, Vec<Vec<ArrowColumnWriter>>)> {
        let fields = &self.schema.fields()[range];
        let part = SchemaRef::new(arrow_schema::Schema::new(fields.to_vec()));
        let (file, factory) =
            ArrowWriter::try_new(std::io::sink(), part, Some(self.props.clone()))?.into_serialized_writer()?;
        let descr = Arc::new(file.schema_descr().clone());
        let mut writers = factory.create_column_writers(row_group)?.into_iter();
        let mut by_column = Vec::with_capacity(fields.len());
        for field in fields {
            // A column has as many encoders as leaves (a sparse feature's struct, several).
            let empty = arrow_array::new_empty_array(field.data_type());
            let leaves = compute_leaves(field, &empty)?.len();
            let own: Vec<ArrowColumnWriter> = writers.by_ref().take(leaves).collect();
            if own.len() != leaves {
                return Err(ParquetError::General(
                    "a Parquet leaf column without an encoder: schema and batch disagree".into(),
                ));
            }
            by_column.push(own);
        }
        Ok((descr, by_column))
    }

    /// A part's columns given to `encoders` (one entry per column), in parallel across columns.
    fn encode(&self, encoders: &mut [Vec<ArrowColumnWriter>], part: &RecordBatch) -> Result<()> {
        let fields = self.schema.fields();
        // On the pool in any case: with one thread, the joins in `encode_column` then run in
        // turn here rather than on rayon's global pool.
        self.pool.install(|| {
            encoders
                .par_iter_mut()
                .zip(fields.par_iter())
                .zip(part.columns().par_iter())
                .try_for_each(|((writers, field), column)| encode_column(field, column, writers))
        })
    }

    /// A thread that gives `encoders` every part sent to it, then, when the sender is dropped,
    /// finishes them and hands back their chunks (or the first error; the parts after it are
    /// dropped unread). The work is done on the pool: the thread mostly waits, on its parts
    /// and on the pool, so it is not counted against `--threads` (like the reading thread).
    fn encode_away(
        self: &Arc<Self>,
        descr: SchemaDescPtr,
        encoders: Vec<Vec<ArrowColumnWriter>>,
    ) -> Result<(std::sync::mpsc::Sender<QueuedPart>, GroupAway)> {
        let (parts, received) = std::sync::mpsc::channel::<QueuedPart>();
        // Room for the result, so that the thread ends even if no one waits for it any more.
        let (done, chunks) = std::sync::mpsc::sync_channel(1);
        let held = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let columns = Arc::clone(self);
        let told = Arc::clone(&held);
        std::thread::Builder::new()
            .name("tfrec-parquet-group".into())
            .spawn(move || {
                let mut encoders = encoders;
                let encoded = received
                    .into_iter()
                    .try_for_each(|queued| {
                        columns.encode(&mut encoders, &queued.part)?;
                        let bytes = encoders.iter().flatten().map(ArrowColumnWriter::memory_size).sum();
                        told.store(bytes, std::sync::atomic::Ordering::Relaxed);
                        Ok(())
                    })
                    .and_then(|()| columns.close(encoders.into_iter().flatten().collect()));
                let _ = done.send(encoded);
            })
            .map_err(|e| ParquetError::General(format!("cannot start a Parquet encoding thread: {e}")))?;
        Ok((parts, GroupAway { descr, chunks, held }))
    }

    /// The columns `first..` of `parts` given to `encoders` (one entry per column) and each
    /// column finished as soon as it has them all, in parallel across columns; the chunks
    /// are spliced into `row_group` (a writer of these columns) in order. A column's
    /// dictionary (up to a MB, and its hash table) is freed with its encoder: the row group
    /// never holds them all at once.
    ///
    /// `columns` are the columns' arrays, part by part; each is dropped once encoded, so the
    /// batch's arrays shrink as the row group's chunks grow.
    fn encode_whole<W: Write + Send>(
        &self,
        encoders: Vec<Vec<ArrowColumnWriter>>,
        columns: Vec<Vec<ArrayRef>>,
        first: usize,
        row_group: &mut SerializedRowGroupWriter<'_, W>,
    ) -> Result<()> {
        let fields = &self.schema.fields()[first..first + encoders.len()];
        let chunks: Vec<Vec<ArrowColumnChunk>> = self.pool.install(|| {
            encoders
                .into_par_iter()
                .zip(fields.par_iter())
                .zip(columns.into_par_iter())
                .map(|((mut writers, field), parts)| {
                    for column in parts {
                        encode_column(field, &column, &mut writers)?;
                    }
                    writers.into_iter().map(ArrowColumnWriter::close).collect()
                })
                .collect::<Result<_>>()
        })?;
        for chunk in chunks.into_iter().flatten() {
            chunk.append_to_row_group(row_group)?;
        }
        Ok(())
    }

    /// `writers` finished in parallel on the pool; their chunks, in order.
    fn close(&self, writers: Vec<ArrowColumnWriter>) -> Result<Vec<ArrowColumnChunk>> {
        self.pool
            .install(|| writers.into_par_iter().map(ArrowColumnWriter::close).collect())
    }

    /// `encoders` finished, their chunks spliced into `row_group` in order, as many columns at
    /// a time as the pool has threads (closed in parallel): a chunk holds its column's encoded
    /// bytes, so the row group's chunks are not all held at once.
    fn finish<W: Write + Send>(
        &self,
        encoders: Vec<Vec<ArrowColumnWriter>>,
        row_group: &mut SerializedRowGroupWriter<'_, W>,
    ) -> Result<()> {
        let mut encoders = encoders.into_iter().flatten().peekable();
        let at_once = self.pool.current_num_threads().max(1);
        while encoders.peek().is_some() {
            let window: Vec<ArrowColumnWriter> = encoders.by_ref().take(at_once).collect();
            for chunk in self.close(window)? {
                chunk.append_to_row_group(row_group)?;
            }
        }
        Ok(())
    }
}

impl<W: Write + Send> ParquetWriter<W> {
    /// The widest schema written with dictionary encoding: a dictionary page for every column
    /// chunk is worth it for the many rows of a narrow table, but it enlarges the file of a
    /// wide sparse one (features present in few records) and costs encoder state in every
    /// column.
    pub const DICTIONARY_MAX_COLUMNS: usize = PARQUET_DICTIONARY_MAX_COLUMNS;

    /// Starts a Parquet file of `schema` on `out`, its columns encoded on `pool` (one thread
    /// encodes in turn; the bytes do not depend on the number).
    pub fn new(out: W, schema: SchemaRef, pool: Arc<ThreadPool>) -> Result<Self> {
        let dictionary = schema.fields().len() <= PARQUET_DICTIONARY_MAX_COLUMNS;
        let props = WriterProperties::builder()
            .set_compression(ParquetCompression::SNAPPY)
            .set_dictionary_enabled(dictionary)
            .build();
        Self::with_properties(out, schema, props, pool)
    }

    /// Whether a batch of `schema` is best given in parts ([`write_part`](Self::write_part)):
    /// its row group's encoders then take each part as it comes, and the part is dropped. A
    /// wider schema's parts are kept until the row group ends, so it may as well come whole.
    pub fn takes_parts(schema: &arrow_schema::Schema) -> bool {
        schema.fields().len() <= PARQUET_STREAMED_COLUMNS
    }

    /// The schema of the file.
    pub fn schema(&self) -> &SchemaRef {
        &self.columns.schema
    }

    /// Rows written so far (in row groups ended or still open).
    pub fn rows_written(&self) -> u64 {
        self.rows
    }

    /// `batch` as a row group of its own.
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.write_part(batch)?;
        self.end_row_group()
    }

    fn with_properties(file: W, schema: SchemaRef, props: WriterProperties, pool: Arc<ThreadPool>) -> Result<Self> {
        let file = ParquetFile::new(file, schema.clone(), props.clone())?;
        let groups_at_once = pool.current_num_threads().clamp(1, PARQUET_GROUPS_AT_ONCE);
        Ok(ParquetWriter {
            file,
            columns: Arc::new(ColumnEncoding { schema, props, pool }),
            row_groups: 0,
            open: None,
            ending: std::collections::VecDeque::new(),
            groups_at_once,
            groups_bytes: PARQUET_GROUPS_BYTES,
            backlog: Arc::new(Backlog::new(PARQUET_BACKLOG_BYTES)),
            rows: 0,
        })
    }

    /// Whether another row group may start beside those ending: fewer than the threads allow,
    /// holding fewer bytes than `groups_bytes`.
    fn room_beside_ending(&self) -> bool {
        let held: usize = self
            .ending
            .iter()
            .map(|group| group.held.load(std::sync::atomic::Ordering::Relaxed))
            .sum();
        self.ending.len() < self.groups_at_once && (self.ending.is_empty() || held < self.groups_bytes)
    }

    /// The next rows of the row group being written (which this starts if none is). A part
    /// must have the schema's columns; one of another type is the encoder's error, here or
    /// when the row group ends.
    pub fn write_part(&mut self, part: &RecordBatch) -> Result<()> {
        let columns = self.columns.schema.fields().len();
        if part.num_columns() != columns {
            return Err(ParquetError::General(format!(
                "a batch of {} columns for a Parquet file of {columns}",
                part.num_columns()
            )));
        }
        if let Some(OpenGroup::Columns { .. }) = self.open {
            return Err(ParquetError::General(
                "rows for a Parquet row group being given in slices of columns".into(),
            ));
        }
        self.rows += part.num_rows() as u64;
        let mut open = match self.open.take() {
            Some(open) => open,
            None if columns <= PARQUET_STREAMED_COLUMNS && self.groups_at_once > 1 => {
                // Room for this group among those encoding: the oldest is waited for.
                while !self.room_beside_ending() {
                    self.append_oldest()?;
                }
                let (descr, encoders) = self.columns.encoders(0..columns, self.row_groups)?;
                let (parts, away) = self.columns.encode_away(descr, encoders)?;
                OpenGroup::Away(parts, away)
            }
            None if columns <= PARQUET_STREAMED_COLUMNS => {
                let (descr, encoders) = self.columns.encoders(0..columns, self.row_groups)?;
                OpenGroup::Encoding(descr, encoders)
            }
            None => OpenGroup::Parts(Vec::new()),
        };
        match &mut open {
            OpenGroup::Encoding(_, encoders) => self.columns.encode(encoders, part)?,
            OpenGroup::Parts(parts) => parts.push(part.clone()),
            // A thread that stopped at an error takes no more parts; the error is reported
            // when its row group is appended.
            OpenGroup::Away(parts, _) => parts.send(QueuedPart::new(part, &self.backlog)).unwrap_or(()),
            OpenGroup::Columns { .. } => {}
        }
        self.open = Some(open);
        Ok(())
    }

    /// The schema's columns `first..` of the row group being written (which this starts if
    /// none is), every row of them: a wide schema's batch given a slice of columns at a time
    /// ([`BatchReader::into_column_slices`](super::BatchReader::into_column_slices)), so that
    /// it is never whole in memory. Each slice is encoded and written before this returns,
    /// and may then be dropped. The slices come in order, the first at column 0, and the row
    /// group ends ([`end_row_group`](Self::end_row_group)) when every column has come. The
    /// file is the one of the whole batches, byte for byte.
    pub fn write_columns(&mut self, first: usize, slice: &RecordBatch) -> Result<()> {
        let columns = self.columns.schema.fields().len();
        let end = first.checked_add(slice.num_columns()).filter(|&end| end <= columns);
        let (next, rows) = match &self.open {
            None => (0, slice.num_rows()),
            Some(OpenGroup::Columns { next, rows }) => (*next, *rows),
            Some(_) => {
                return Err(ParquetError::General(
                    "columns for a Parquet row group being given in rows".into(),
                ))
            }
        };
        let Some(end) = end.filter(|_| first == next && slice.num_rows() == rows) else {
            return Err(ParquetError::General(format!(
                "columns {first}..{} of {} rows where a Parquet row group of {columns} columns and {rows} rows \
                 expects column {next}",
                first + slice.num_columns(),
                slice.num_rows()
            )));
        };
        if self.open.is_none() {
            // The row groups still encoding go first, in order.
            while !self.ending.is_empty() {
                self.append_oldest()?;
            }
            self.file.start_row_group()?;
            self.rows += rows as u64;
        }
        let (descr, encoders) = self.columns.encoders(first..end, self.row_groups)?;
        let arrays = slice.columns().iter().map(|array| vec![Arc::clone(array)]).collect();
        let columns_encoding = &self.columns;
        self.file.write_slice(descr, |row_group| {
            columns_encoding.encode_whole(encoders, arrays, first, row_group)
        })?;
        self.open = Some(OpenGroup::Columns { next: end, rows });
        Ok(())
    }

    /// Ends the row group being written (if one is). A group encoding on its thread is left to
    /// finish there; those that have finished are appended to the file.
    pub fn end_row_group(&mut self) -> Result<()> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        match open {
            OpenGroup::Columns { next, .. } => {
                let columns = self.columns.schema.fields().len();
                if next != columns {
                    return Err(ParquetError::General(format!(
                        "a Parquet row group ended at column {next} of {columns}"
                    )));
                }
                self.file.end_row_group()?;
            }
            OpenGroup::Away(parts, away) => {
                drop(parts);
                self.ending.push_back(away);
                self.row_groups += 1;
                return self.append_finished();
            }
            OpenGroup::Encoding(descr, encoders) => {
                let columns = &self.columns;
                self.file.start_row_group()?;
                self.file
                    .write_slice(descr, |row_group| columns.finish(encoders, row_group))?;
                self.file.end_row_group()?;
            }
            OpenGroup::Parts(parts) => {
                let columns = self.columns.schema.fields().len();
                // Each part's arrays, taken out column by column as the columns are encoded:
                // a column's arrays are freed then, not with the batch at the end.
                let mut parts: Vec<Vec<Option<ArrayRef>>> = parts
                    .into_iter()
                    .map(|part| part.into_parts().1.into_iter().map(Some).collect())
                    .collect();
                self.file.start_row_group()?;
                for start in (0..columns).step_by(PARQUET_COLUMNS_AT_ONCE) {
                    let end = (start + PARQUET_COLUMNS_AT_ONCE).min(columns);
                    let (descr, encoders) = self.columns.encoders(start..end, self.row_groups)?;
                    let slice: Vec<Vec<ArrayRef>> = (start..end)
                        .map(|c| {
                            parts
                                .iter_mut()
                                .filter_map(|arrays| arrays.get_mut(c)?.take())
                                .collect()
                        })
                        .collect();
                    let columns = &self.columns;
                    self.file.write_slice(descr, |row_group| {
                        columns.encode_whole(encoders, slice, start, row_group)
                    })?;
                }
                drop(parts);
                self.file.end_row_group()?;
            }
        }
        self.row_groups += 1;
        Ok(())
    }

    /// The row groups at the front of those ending that have finished encoding, appended.
    fn append_finished(&mut self) -> Result<()> {
        while let Some(oldest) = self.ending.front() {
            match oldest.chunks.try_recv() {
                Ok(encoded) => {
                    if let Some(done) = self.ending.pop_front() {
                        self.append(done.descr, encoded)?;
                    }
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    return Err(ParquetError::General(GROUP_THREAD_LOST.into()))
                }
            }
        }
        Ok(())
    }

    /// The oldest row group ending, waited for and appended.
    fn append_oldest(&mut self) -> Result<()> {
        let Some(oldest) = self.ending.pop_front() else {
            return Ok(());
        };
        let encoded = oldest
            .chunks
            .recv()
            .map_err(|_| ParquetError::General(GROUP_THREAD_LOST.into()))?;
        self.append(oldest.descr, encoded)
    }

    /// A row group of the chunks a thread encoded, of the schema `descr` describes.
    fn append(&mut self, descr: SchemaDescPtr, encoded: Result<Vec<ArrowColumnChunk>>) -> Result<()> {
        let chunks = encoded?;
        self.file.start_row_group()?;
        self.file.write_slice(descr, |row_group| {
            chunks
                .into_iter()
                .try_for_each(|chunk| chunk.append_to_row_group(row_group))
        })?;
        self.file.end_row_group()
    }

    /// Ends the row group being written, waits for those encoding, writes the footer and
    /// hands back the output (flushed).
    pub fn close(mut self) -> Result<W> {
        self.end_row_group()?;
        while !self.ending.is_empty() {
            self.append_oldest()?;
        }
        self.file.close()
    }
}

/// What a Parquet encoding thread's end means when it sent no result: it panicked.
const GROUP_THREAD_LOST: &str = "a Parquet encoding thread stopped without finishing its row group";

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int64Builder, ListBuilder};
    use arrow_array::{Array, Int64Array};
    use arrow_schema::DataType;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// `columns` columns over rows `rows`: int64 scalars, and every third column a list of
    /// `row % 4` values, so that parts differ in length and a list column has several leaves'
    /// worth of levels.
    fn table(columns: usize, rows: std::ops::Range<i64>) -> RecordBatch {
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for c in 0..columns as i64 {
            if c % 5 == 4 {
                let strings = arrow_array::StringArray::from_iter(
                    rows.clone()
                        .map(|r| (r % 7 != 3).then(|| format!("s{}", (r * 31 + c) % 13))),
                );
                fields.push(arrow_schema::Field::new(format!("c{c}"), DataType::Utf8, true));
                arrays.push(Arc::new(strings));
            } else if c % 3 == 2 {
                let mut list = ListBuilder::new(Int64Builder::new());
                for r in rows.clone() {
                    list.values()
                        .append_slice(&(0..r % 4).map(|k| r * 10 + k + c).collect::<Vec<_>>());
                    list.append(r % 5 != 0);
                }
                let array = list.finish();
                fields.push(arrow_schema::Field::new(
                    format!("c{c}"),
                    array.data_type().clone(),
                    true,
                ));
                arrays.push(Arc::new(array));
            } else {
                fields.push(arrow_schema::Field::new(format!("c{c}"), DataType::Int64, false));
                arrays.push(Arc::new(Int64Array::from_iter_values(
                    rows.clone().map(|r| r * 1000 + c),
                )));
            }
        }
        RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), arrays).expect("batch")
    }

    /// The file `ParquetWriter` writes of `groups` (each a row group's parts), on `threads`.
    fn written(groups: &[Vec<RecordBatch>], threads: usize) -> Vec<u8> {
        written_holding(groups, threads, PARQUET_GROUPS_BYTES)
    }

    /// [`written`], a row group starting beside those encoding only while they hold fewer
    /// than `groups_bytes`; with none, it checks that each started alone.
    fn written_holding(groups: &[Vec<RecordBatch>], threads: usize, groups_bytes: usize) -> Vec<u8> {
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool"),
        );
        let schema = groups[0][0].schema();
        let props = WriterProperties::builder()
            .set_compression(ParquetCompression::SNAPPY)
            .build();
        let mut file = ParquetWriter::with_properties(Vec::new(), schema, props, pool).expect("writer");
        file.groups_bytes = groups_bytes;
        for parts in groups {
            for part in parts {
                file.write_part(part).expect("part");
                if groups_bytes == 0 {
                    assert!(file.ending.is_empty(), "a row group started beside another");
                }
            }
            file.end_row_group().expect("end");
        }
        file.close().expect("close")
    }

    /// The rows of the row groups of a Parquet file that must hold `table(columns, 0..n)`,
    /// read back `batch_rows` at a time and checked against the table.
    fn read_back(bytes: Vec<u8>, columns: usize, batch_rows: usize) -> Vec<i64> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).expect("reader");
        let row_groups: Vec<i64> = builder.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
        let mut at = 0;
        for batch in builder.with_batch_size(batch_rows).build().expect("batches") {
            let batch = batch.expect("batch");
            let rows = batch.num_rows() as i64;
            assert_eq!(batch, table(columns, at..at + rows), "{columns} columns, from row {at}");
            at += rows;
        }
        assert_eq!(at, row_groups.iter().sum::<i64>());
        row_groups
    }

    /// The file `ArrowWriter` writes of `groups` (each a row group, written whole) with `props`.
    fn written_by_the_crate(groups: &[RecordBatch], props: WriterProperties) -> Vec<u8> {
        let mut writer = ArrowWriter::try_new(Vec::new(), groups[0].schema(), Some(props)).expect("writer");
        for group in groups {
            writer.write(group).expect("write");
            writer.flush().expect("row group");
        }
        writer.into_inner().expect("file")
    }

    /// The file's bytes are `ArrowWriter`'s, footer and page indexes included, although its
    /// footer is put together from pieces: for narrow schemas and schemas of several slices,
    /// with one row group, several, or none, on one thread or three, with page indexes,
    /// with column indexes only for some chunks (statistics by chunk), and with neither.
    #[test]
    fn the_file_is_the_one_arrow_writer_writes() {
        use parquet::file::properties::EnabledStatistics;
        let settings = [
            WriterProperties::builder()
                .set_compression(ParquetCompression::SNAPPY)
                .build(),
            WriterProperties::builder()
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .build(),
            WriterProperties::builder()
                .set_statistics_enabled(EnabledStatistics::None)
                .set_offset_index_disabled(true)
                .set_dictionary_enabled(false)
                .build(),
            // Key-value metadata of the caller's own, beside the Arrow schema.
            WriterProperties::builder()
                .set_key_value_metadata(Some(vec![parquet::file::metadata::KeyValue::new(
                    "origin".into(),
                    "a test".to_string(),
                )]))
                .build(),
        ];
        for columns in [1, 4, PARQUET_STREAMED_COLUMNS + 3, 2 * PARQUET_COLUMNS_AT_ONCE + 5] {
            let groups = [table(columns, 0..5), table(columns, 5..6), table(columns, 6..40)];
            for props in &settings {
                for row_groups in [0, 1, 3] {
                    let expected = written_by_the_crate(&groups[..row_groups.max(1)], props.clone());
                    for threads in [1, 3] {
                        let pool = Arc::new(
                            rayon::ThreadPoolBuilder::new()
                                .num_threads(threads)
                                .build()
                                .expect("pool"),
                        );
                        let mut file =
                            ParquetWriter::with_properties(Vec::new(), groups[0].schema(), props.clone(), pool)
                                .expect("writer");
                        for group in &groups[..row_groups] {
                            file.write_batch(group).expect("batch");
                        }
                        let bytes = file.close().expect("close");
                        if row_groups == 0 {
                            // The crate's writer given nothing writes no row group either.
                            let empty = ArrowWriter::try_new(Vec::new(), groups[0].schema(), Some(props.clone()))
                                .expect("writer")
                                .into_inner()
                                .expect("file");
                            assert_eq!(bytes, empty, "{columns} columns, no row group");
                        } else {
                            assert!(
                                bytes == expected,
                                "{columns} columns, {row_groups} row groups, {threads} threads, {props:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// A row group given in slices of columns, of any widths, is the one of the whole batch,
    /// byte for byte, beside row groups given whole; slices out of turn, of other rows, past
    /// the schema, rows in the middle, and a row group ended early are errors.
    #[test]
    fn a_row_group_in_slices_of_columns_is_the_whole_batch() {
        let columns = PARQUET_COLUMNS_AT_ONCE + 40;
        let groups = [table(columns, 0..6), table(columns, 6..9)];
        let pool = || Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool"));
        let props = WriterProperties::builder().build();
        let new =
            || ParquetWriter::with_properties(Vec::new(), groups[0].schema(), props.clone(), pool()).expect("writer");
        let mut whole = new();
        groups.iter().for_each(|g| whole.write_batch(g).expect("batch"));
        let whole = whole.close().expect("close");
        for widths in [vec![columns], vec![1, 1023, 16, 24], vec![7; columns.div_ceil(7)]] {
            let mut file = new();
            file.write_batch(&groups[0]).expect("batch");
            let mut first = 0;
            for width in widths {
                let width = width.min(columns - first);
                let slice = groups[1]
                    .project(&(first..first + width).collect::<Vec<_>>())
                    .expect("slice");
                file.write_columns(first, &slice).expect("columns");
                first += width;
            }
            file.end_row_group().expect("end");
            assert_eq!(file.rows_written(), 9);
            assert!(file.close().expect("close") == whole);
        }
        let slice = |batch: &RecordBatch, range: std::ops::Range<usize>| {
            batch.project(&range.collect::<Vec<_>>()).expect("slice")
        };
        let mut file = new();
        assert!(
            file.write_columns(1, &slice(&groups[0], 1..3)).is_err(),
            "not at column 0"
        );
        file.write_columns(0, &slice(&groups[0], 0..2)).expect("columns");
        assert!(file.write_columns(3, &slice(&groups[0], 3..4)).is_err(), "out of turn");
        assert!(file.write_columns(2, &slice(&groups[1], 2..4)).is_err(), "other rows");
        file.write_columns(2, &slice(&groups[0], 2..5)).expect("columns");
        assert!(file.write_part(&groups[0]).is_err(), "rows in the middle");
        assert!(file.end_row_group().is_err(), "ended early");
        let mut file = new();
        let wide = table(columns + 3, 0..6);
        assert!(file.write_columns(0, &wide).is_err(), "past the schema");
    }

    /// A dictionary column's Arrow schema is stored as the crate stores it (with the ids its
    /// dictionary tracker gives), so the file is `ArrowWriter`'s too.
    #[test]
    fn a_dictionary_column_is_stored_as_arrow_writer_stores_it() {
        let keys = arrow_array::Int32Array::from(vec![0, 1, 0, 1]);
        let values = arrow_array::StringArray::from(vec!["a", "b"]);
        let dictionary: ArrayRef =
            Arc::new(arrow_array::DictionaryArray::try_new(keys, Arc::new(values)).expect("dictionary"));
        let batch = RecordBatch::try_from_iter([("d", dictionary)]).expect("batch");
        let props = WriterProperties::builder().build();
        let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool"));
        let mut file = ParquetWriter::with_properties(Vec::new(), batch.schema(), props.clone(), pool).expect("writer");
        file.write_batch(&batch).expect("batch");
        let bytes = file.close().expect("close");
        assert!(bytes == written_by_the_crate(&[batch], props));
    }

    /// Parts written one after the other (one of no rows among them) make the row group of
    /// the whole batch, with every column's encoders given each part as it comes, with the
    /// parts kept and encoded column by column, and with the columns encoded a slice of
    /// `PARQUET_COLUMNS_AT_ONCE` at a time; the bytes do not depend on the number of threads.
    #[test]
    fn a_row_group_from_parts_holds_the_whole_batch() {
        for columns in [4, PARQUET_STREAMED_COLUMNS + 3, PARQUET_COLUMNS_AT_ONCE + 5] {
            let groups = vec![
                vec![
                    table(columns, 0..5),
                    table(columns, 5..5),
                    table(columns, 5..6),
                    table(columns, 6..13),
                ],
                vec![table(columns, 13..20)],
            ];
            let bytes = written(&groups, 1);
            assert_eq!(written(&groups, 3), bytes, "{columns} columns");
            assert_eq!(read_back(bytes, columns, 6), [13, 7], "{columns} columns");
        }
    }

    /// More row groups than are encoded at once, of a streamed schema: with 2, 3 and 5 threads
    /// (two, three and `PARQUET_GROUPS_AT_ONCE` groups at once) the file is byte for byte the
    /// one a single thread writes, its row groups in order, whether or not a group ends
    /// while the groups before it are still encoding.
    #[test]
    fn row_groups_encoded_at_once_are_written_in_order() {
        let columns = 4;
        let mut groups = Vec::new();
        let mut row = 0;
        for g in 0..9i64 {
            // Groups of 1 to 3 parts, the fifth with a part of no rows.
            let parts = (0..1 + g % 3)
                .map(|p| {
                    let rows = if g == 4 && p == 1 { 0 } else { 3 + (g * 7 + p) % 11 };
                    let part = table(columns, row..row + rows);
                    row += rows;
                    part
                })
                .collect::<Vec<_>>();
            groups.push(parts);
        }
        let bytes = written(&groups, 1);
        for threads in [2, 3, PARQUET_GROUPS_AT_ONCE + 1] {
            assert_eq!(written(&groups, threads), bytes, "{threads} threads");
        }
        // Row groups too large to encode beside one another: each waits for those before.
        assert_eq!(written_holding(&groups, 3, 0), bytes);
        let expected: Vec<i64> = groups
            .iter()
            .map(|parts| parts.iter().map(|p| p.num_rows() as i64).sum())
            .collect();
        assert_eq!(read_back(bytes, columns, 10), expected);
        assert_eq!(expected.iter().sum::<i64>(), row);
    }

    /// A part larger than the backlog's limit still goes when nothing else waits; one that
    /// waits for room goes once the parts before it are dropped; every part's bytes leave the
    /// count when it is dropped, unread parts in a channel whose receiver is gone too.
    #[test]
    fn the_backlog_counts_parts_until_they_are_dropped() {
        let held = |backlog: &Backlog| *backlog.bytes.lock().expect("lock");
        let backlog = Arc::new(Backlog::new(1));
        let part = table(1, 0..4);
        let first = QueuedPart::new(&part, &backlog);
        assert_eq!(held(&backlog), part.get_array_memory_size());
        let second = std::thread::spawn({
            let (backlog, part) = (Arc::clone(&backlog), part.clone());
            move || QueuedPart::new(&part, &backlog).bytes
        });
        drop(first);
        assert_eq!(second.join().expect("second part"), part.get_array_memory_size());
        assert_eq!(held(&backlog), 0);
        let (sender, receiver) = std::sync::mpsc::channel();
        sender.send(QueuedPart::new(&part, &backlog)).expect("send");
        drop(receiver);
        assert_eq!(held(&backlog), 0);
        assert!(sender.send(QueuedPart::new(&part, &backlog)).is_err());
        assert_eq!(held(&backlog), 0);
    }

    /// A part its row group's encoders cannot take (a column of another type than the schema
    /// says) is the encoder's error, with one thread (at once) and with row groups encoding on
    /// threads of their own (when the file is closed, after parts sent to the thread that
    /// stopped); the writer neither hangs nor stops the process.
    #[test]
    fn a_part_that_cannot_be_encoded_is_an_error() {
        for threads in [1, 2] {
            let pool = Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("pool"),
            );
            let good = table(1, 0..4);
            let props = WriterProperties::builder().build();
            let mut writer = ParquetWriter::with_properties(Vec::new(), good.schema(), props, pool).expect("writer");
            let strings: ArrayRef = Arc::new(arrow_array::StringArray::from(vec!["a", "b"]));
            let bad = RecordBatch::try_from_iter([("c0", strings)]).expect("batch");
            let outcome = (|| {
                writer.write_part(&good)?;
                writer.end_row_group()?;
                writer.write_part(&bad)?;
                writer.write_part(&good)?;
                writer.end_row_group()?;
                writer.close().map(drop)
            })();
            // The encoder's own error, not a later one of the row group it left short.
            let error = outcome.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.contains("Incompatible type"), "{threads} threads: {error:?}");
        }
    }
}

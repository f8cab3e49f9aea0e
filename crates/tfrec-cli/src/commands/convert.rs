//! `tfrec convert`: TFRecord files to and from columnar formats — Parquet, Arrow IPC
//! (`.arrow` / `.feather`), and out to JSON lines and CSV — through Arrow record batches
//! (`tfrec::columnar`), batch by batch so memory stays bounded whatever the input size. The
//! output is written under a temporary name, read back to check its row count, then renamed.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, FieldRef, SchemaRef};
use clap::{Args as ClapArgs, ValueEnum};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression as ParquetCompression;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde_json::Value;
use tfrec::columnar::{
    batch_to_records, infer_specs, sample_records, spec_order, BatchError, BatchReader, ColumnSpecs, StringColumns,
};
use tfrec::parse::{SpecError, SpecFile};
use tfrec::record::CompressionChoice;

use crate::error::{data, CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::output::{refuse_overlaps, refuse_same_file, OutputArgs, PendingFile};
use crate::progress::Progress;

/// A file format `convert` reads or writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TFRecord files of Examples or SequenceExamples (any compression).
    Tfrecord,
    /// Apache Parquet (Snappy-compressed).
    Parquet,
    /// Arrow IPC file format (`.arrow`, `.feather`).
    Arrow,
    /// JSON lines, one object per record (output only).
    Jsonl,
    /// CSV with a header (output only; flat columns only).
    Csv,
}

impl Format {
    fn from_path(path: &Path) -> Format {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if name.ends_with(".parquet") || name.ends_with(".pq") {
            Format::Parquet
        } else if name.ends_with(".arrow") || name.ends_with(".feather") || name.ends_with(".ipc") {
            Format::Arrow
        } else if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
            Format::Jsonl
        } else if name.ends_with(".csv") {
            Format::Csv
        } else {
            Format::Tfrecord
        }
    }
}

/// `tfrec convert`'s options.
#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    skip: SkipArgs,
    /// The file to write (written under a temporary name, renamed when complete and read back).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Compression of a TFRecord output: auto (from the extension: .gz, .zz/.zlib), none, gzip, zlib.
    #[arg(long = "output-compression", default_value = "auto")]
    output_compression: CompressionChoice,
    /// Input format (default: from the first input's extension: .parquet, .arrow/.feather, else TFRecord).
    #[arg(long, value_enum)]
    from: Option<Format>,
    /// Output format (default: from the output's extension: .parquet, .arrow/.feather, .jsonl, .csv, else TFRecord).
    #[arg(long, value_enum)]
    to: Option<Format>,
    /// Feature spec for TFRecord input (the JSON `tfrec parse --spec` reads); without it one is
    /// inferred from the first --infer-rows records.
    #[arg(long, value_name = "FILE")]
    spec: Option<PathBuf>,
    /// Records sampled to infer a spec when --spec is not given.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    infer_rows: usize,
    /// Print the spec used (given or inferred) on stderr.
    #[arg(long)]
    print_spec: bool,
    /// Save the spec used (given or inferred) as a spec file.
    #[arg(long, value_name = "PATH")]
    save_spec: Option<PathBuf>,
    /// Threads, 1 to 256 (default: one per core). With two or more, the next batches are read
    /// and parsed while one is written, and a Parquet output's columns are encoded in
    /// parallel (for a table of up to 16 columns, so are up to 4 row groups of less than 64 MB,
    /// each holding its encoded pages until it is written); the output is the same whatever
    /// the number.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: Option<u64>,
    /// Rows per record batch (and per Parquet row group write).
    #[arg(long, default_value_t = 65536, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    batch_rows: usize,
    /// String features as UTF-8 columns (a value that is not UTF-8 is then an error); with an
    /// inferred spec, only the features whose sampled values were all UTF-8.
    #[arg(long)]
    utf8: bool,
}

/// Columns encoded at a time into a Parquet row group (see [`ParquetColumns`]).
const PARQUET_COLUMNS_AT_ONCE: usize = 1024;

/// The widest schema whose row groups are encoded part by part as the parts come (see
/// [`ParquetColumns`]).
const PARQUET_STREAMED_COLUMNS: usize = 16;

/// The widest schema written to Parquet with dictionary encoding (see `Sink::create`).
const PARQUET_DICTIONARY_MAX_COLUMNS: usize = 4096;

/// The most row groups of a streamed schema encoded at once (with as many threads or more;
/// see [`ParquetColumns`]). Each holds its encoded pages until it is written.
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
/// A schema of up to [`PARQUET_STREAMED_COLUMNS`] columns (a sequence table, most often) has
/// every column's encoder take each part as it comes, and the part is then dropped: the
/// batch is never whole in memory, and encoding overlaps the parse of the next parts. A wider
/// schema's batch is kept until its end (it comes whole, see `tfrecord_input`) and encoded
/// column by column, each column taking all its rows while its dictionary is in the caches
/// (parts that went through every column in turn were slower: each left the caches cold).
///
/// `ArrowWriter` keeps an encoder for every column of the schema while a row group is open,
/// tens of kilobytes each with dictionary encoding: a record of a million one-value features
/// would need more memory than a machine has. So the kept parts are encoded a slice of [`PARQUET_COLUMNS_AT_ONCE`]
/// columns at a time, and only that many encoders live at once. Either way the finished
/// column chunks are spliced into the row group in schema order, so the file is the same
/// kind of file `ArrowWriter` writes (its Arrow schema in the footer included).
///
/// With a pool of two threads or more, columns are encoded in parallel (a column's encoder
/// is its own; only the splicing is in order), and within a column the next slice's levels
/// are computed while the encoders take this one. A streamed schema's row groups are then
/// also encoded several at once (up to [`PARQUET_GROUPS_AT_ONCE`], no more than the threads,
/// and while those encoding hold less than [`PARQUET_GROUPS_BYTES`]), each by its own
/// encoders on a thread that takes its parts as they come: a table of one large column (a
/// sequence feature) has one encoder a row group, and encoding row groups one after the
/// other left the other threads idle. The chunks are spliced in row group order.
struct ParquetColumns {
    file: SerializedFileWriter<File>,
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
}

/// What makes and drives the column encoders of a file.
struct ColumnEncoding {
    schema: SchemaRef,
    props: WriterProperties,
    pool: Arc<ThreadPool>,
}

/// A row group between its first part and its end.
enum OpenGroup {
    /// Each column's encoders (one per Parquet leaf), given every part as it came.
    Encoding(Vec<Vec<ArrowColumnWriter>>),
    /// The parts so far, of a schema wider than [`PARQUET_STREAMED_COLUMNS`].
    Parts(Vec<RecordBatch>),
    /// Encoded on a thread of its own (see [`ColumnEncoding::encode_away`]), which is sent the
    /// parts; dropping the sender ends the group.
    Away(std::sync::mpsc::Sender<QueuedPart>, GroupAway),
}

/// A row group encoding on its thread: its column chunks in schema order, once the thread has
/// encoded them all, and the bytes its encoders held after the last part they took.
struct GroupAway {
    chunks: std::sync::mpsc::Receiver<parquet::errors::Result<Vec<ArrowColumnChunk>>>,
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
fn encode_column(
    field: &FieldRef,
    column: &ArrayRef,
    writers: &mut [ArrowColumnWriter],
) -> parquet::errors::Result<()> {
    let leaves_of = |(offset, len): (usize, usize)| compute_leaves(field, &column.slice(offset, len));
    let mut slices = column_slices(column, column.len());
    let mut leaves = slices.next().map(leaves_of).transpose()?;
    while let Some(these) = leaves.take() {
        if these.len() != writers.len() {
            return Err(parquet::errors::ParquetError::General(format!(
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
    /// The encoders of row group `row_group` for the schema's columns `range`, by column.
    /// They are made by a writer of that slice of the schema alone: a column's encoder
    /// depends only on its own field, so its chunks fit the whole file.
    fn encoders(
        &self,
        range: std::ops::Range<usize>,
        row_group: usize,
    ) -> Result<Vec<Vec<ArrowColumnWriter>>, CliError> {
        let fields = &self.schema.fields()[range];
        let part = SchemaRef::new(arrow_schema::Schema::new(fields.to_vec()));
        let (_, factory) =
            ArrowWriter::try_new(std::io::sink(), part, Some(self.props.clone()))?.into_serialized_writer()?;
        let mut writers = factory.create_column_writers(row_group)?.into_iter();
        let mut by_column = Vec::with_capacity(fields.len());
        for field in fields {
            // A column has as many encoders as leaves (a sparse feature's struct, several).
            let empty = arrow_array::new_empty_array(field.data_type());
            let leaves = compute_leaves(field, &empty)?.len();
            let own: Vec<ArrowColumnWriter> = writers.by_ref().take(leaves).collect();
            if own.len() != leaves {
                return Err("a Parquet leaf column without an encoder: schema and batch disagree".into());
            }
            by_column.push(own);
        }
        Ok(by_column)
    }

    /// A part's columns given to `encoders` (one entry per column), in parallel across columns.
    fn encode(&self, encoders: &mut [Vec<ArrowColumnWriter>], part: &RecordBatch) -> parquet::errors::Result<()> {
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
        encoders: Vec<Vec<ArrowColumnWriter>>,
    ) -> Result<(std::sync::mpsc::Sender<QueuedPart>, GroupAway), CliError> {
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
            .map_err(|e| format!("cannot start a Parquet encoding thread: {e}"))?;
        Ok((parts, GroupAway { chunks, held }))
    }

    /// The columns `first..` of `parts` given to `encoders` (one entry per column) and each
    /// column finished as soon as it has them all, in parallel across columns; the chunks
    /// are spliced into `row_group` in order. A column's dictionary (up to a MB, and its hash
    /// table) is freed with its encoder: the row group never holds them all at once.
    fn encode_whole(
        &self,
        encoders: Vec<Vec<ArrowColumnWriter>>,
        parts: &[RecordBatch],
        first: usize,
        row_group: &mut SerializedRowGroupWriter<'_, File>,
    ) -> Result<(), CliError> {
        let fields = &self.schema.fields()[first..first + encoders.len()];
        let chunks: Vec<Vec<ArrowColumnChunk>> = self.pool.install(|| {
            encoders
                .into_par_iter()
                .zip(fields.par_iter())
                .enumerate()
                .map(|(i, (mut writers, field))| {
                    for part in parts {
                        encode_column(field, part.column(first + i), &mut writers)?;
                    }
                    writers.into_iter().map(ArrowColumnWriter::close).collect()
                })
                .collect::<parquet::errors::Result<_>>()
        })?;
        for chunk in chunks.into_iter().flatten() {
            chunk.append_to_row_group(row_group)?;
        }
        Ok(())
    }

    /// `writers` finished in parallel on the pool; their chunks, in order.
    fn close(&self, writers: Vec<ArrowColumnWriter>) -> parquet::errors::Result<Vec<ArrowColumnChunk>> {
        self.pool
            .install(|| writers.into_par_iter().map(ArrowColumnWriter::close).collect())
    }

    /// `encoders` finished, their chunks spliced into `row_group` in order, as many columns at
    /// a time as the pool has threads (closed in parallel): a chunk holds its column's encoded
    /// bytes, so the row group's chunks are not all held at once.
    fn finish(
        &self,
        encoders: Vec<Vec<ArrowColumnWriter>>,
        row_group: &mut SerializedRowGroupWriter<'_, File>,
    ) -> Result<(), CliError> {
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

impl ParquetColumns {
    fn try_new(
        file: File,
        schema: SchemaRef,
        props: WriterProperties,
        pool: Arc<ThreadPool>,
    ) -> Result<Self, CliError> {
        let (file, _) = ArrowWriter::try_new(file, schema.clone(), Some(props.clone()))?.into_serialized_writer()?;
        let groups_at_once = pool.current_num_threads().clamp(1, PARQUET_GROUPS_AT_ONCE);
        Ok(ParquetColumns {
            file,
            columns: Arc::new(ColumnEncoding { schema, props, pool }),
            row_groups: 0,
            open: None,
            ending: std::collections::VecDeque::new(),
            groups_at_once,
            groups_bytes: PARQUET_GROUPS_BYTES,
            backlog: Arc::new(Backlog::new(PARQUET_BACKLOG_BYTES)),
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

    /// The next rows of the row group being written (which this starts if none is).
    fn write_part(&mut self, part: &RecordBatch) -> Result<(), CliError> {
        let columns = self.columns.schema.fields().len();
        let mut open = match self.open.take() {
            Some(open) => open,
            None if columns <= PARQUET_STREAMED_COLUMNS && self.groups_at_once > 1 => {
                // Room for this group among those encoding: the oldest is waited for.
                while !self.room_beside_ending() {
                    self.append_oldest()?;
                }
                let encoders = self.columns.encoders(0..columns, self.row_groups)?;
                let (parts, away) = self.columns.encode_away(encoders)?;
                OpenGroup::Away(parts, away)
            }
            None if columns <= PARQUET_STREAMED_COLUMNS => {
                OpenGroup::Encoding(self.columns.encoders(0..columns, self.row_groups)?)
            }
            None => OpenGroup::Parts(Vec::new()),
        };
        match &mut open {
            OpenGroup::Encoding(encoders) => self.columns.encode(encoders, part)?,
            OpenGroup::Parts(parts) => parts.push(part.clone()),
            // A thread that stopped at an error takes no more parts; the error is reported
            // when its row group is appended.
            OpenGroup::Away(parts, _) => parts.send(QueuedPart::new(part, &self.backlog)).unwrap_or(()),
        }
        self.open = Some(open);
        Ok(())
    }

    /// Ends the row group being written (if one is). A group encoding on its thread is left to
    /// finish there; those that have finished are appended to the file.
    fn end_row_group(&mut self) -> Result<(), CliError> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        match open {
            OpenGroup::Away(parts, away) => {
                drop(parts);
                self.ending.push_back(away);
                self.row_groups += 1;
                return self.append_finished();
            }
            OpenGroup::Encoding(encoders) => {
                let mut row_group = self.file.next_row_group()?;
                self.columns.finish(encoders, &mut row_group)?;
                row_group.close()?;
            }
            OpenGroup::Parts(parts) => {
                let mut row_group = self.file.next_row_group()?;
                let columns = self.columns.schema.fields().len();
                for start in (0..columns).step_by(PARQUET_COLUMNS_AT_ONCE) {
                    let end = (start + PARQUET_COLUMNS_AT_ONCE).min(columns);
                    let encoders = self.columns.encoders(start..end, self.row_groups)?;
                    self.columns.encode_whole(encoders, &parts, start, &mut row_group)?;
                }
                row_group.close()?;
            }
        }
        self.row_groups += 1;
        Ok(())
    }

    /// The row groups at the front of those ending that have finished encoding, appended.
    fn append_finished(&mut self) -> Result<(), CliError> {
        while let Some(oldest) = self.ending.front() {
            match oldest.chunks.try_recv() {
                Ok(encoded) => {
                    self.ending.pop_front();
                    self.append(encoded)?;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => return Err(GROUP_THREAD_LOST.into()),
            }
        }
        Ok(())
    }

    /// The oldest row group ending, waited for and appended.
    fn append_oldest(&mut self) -> Result<(), CliError> {
        let Some(oldest) = self.ending.pop_front() else {
            return Ok(());
        };
        let encoded = oldest.chunks.recv().map_err(|_| GROUP_THREAD_LOST)?;
        self.append(encoded)
    }

    /// A row group of the chunks a thread encoded.
    fn append(&mut self, encoded: parquet::errors::Result<Vec<ArrowColumnChunk>>) -> Result<(), CliError> {
        let mut row_group = self.file.next_row_group()?;
        for chunk in encoded? {
            chunk.append_to_row_group(&mut row_group)?;
        }
        row_group.close()?;
        Ok(())
    }

    fn close(mut self) -> Result<(), CliError> {
        self.end_row_group()?;
        while !self.ending.is_empty() {
            self.append_oldest()?;
        }
        self.file.close()?;
        Ok(())
    }
}

/// What a Parquet encoding thread's end means when it sent no result: it panicked.
const GROUP_THREAD_LOST: &str = "a Parquet encoding thread stopped without finishing its row group";

/// What an input hands the output: a batch's rows, whole or in parts, then the batch's end.
enum Piece {
    Rows(RecordBatch),
    End,
}

/// Batches from the inputs, with a progress bar when the input is TFRecord.
struct Input {
    pieces: Box<dyn Iterator<Item = Result<Piece, CliError>>>,
    schema: SchemaRef,
    _progress: Option<Progress>,
}

/// The spec, its string columns, and the column order (the spec file's key order; name order
/// for an inferred spec).
fn spec_of(args: &Args, files: &[PathBuf]) -> Result<(SpecFile, StringColumns, Vec<String>), CliError> {
    if let Some(path) = &args.spec {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let spec = SpecFile::from_json_str(&text).map_err(|e| match e {
            // Text that is not JSON is reported in serde_json's words alone.
            SpecError::JsonSyntax { message, .. } => format!("{}: {message}", path.display()),
            other => format!("{}: {other}", path.display()),
        })?;
        let strings = if args.utf8 {
            StringColumns::Utf8
        } else {
            StringColumns::Binary
        };
        return Ok((spec, strings, spec_order(&text)));
    }
    let sample = sample_records(files, args.input.reader_options(args.skip), args.infer_rows)?;
    let inferred = infer_specs(&sample).map_err(|e| data(format!("inferring a spec: {e}")))?;
    for (name, why) in &inferred.skipped {
        say!("warning: feature '{name}' left out: {why}");
    }
    let strings = inferred.string_columns(args.utf8);
    Ok((inferred.spec, strings, Vec::new()))
}

/// The spec as a JSON tree, for printing indented.
fn spec_json(spec: &SpecFile) -> Value {
    // The library writes valid JSON; `Null` is never reached.
    serde_json::from_str(&spec.to_json_string()).unwrap_or(Value::Null)
}

/// The TFRecord inputs' batches, parsed on `pool`. For a Parquet output of a schema that it
/// encodes part by part (up to [`PARQUET_STREAMED_COLUMNS`] columns), each batch comes in
/// parts of [`PART_ROWS`](tfrec::columnar::PART_ROWS) rows; else whole (a wide schema's
/// Examples parsed in parts took more time and more memory).
fn tfrecord_input(args: &Args, files: Vec<PathBuf>, pool: &Arc<ThreadPool>, to: Format) -> Result<Input, CliError> {
    crate::input::check_openable(&files)?;
    let (spec, strings, order) = spec_of(args, &files)?;
    if args.print_spec {
        say!("{:#}", spec_json(&spec));
    }
    if let Some(path) = &args.save_spec {
        let pending = PendingFile::create(path)?;
        let write = || writeln!(pending.file()?, "{:#}", spec_json(&spec));
        write().map_err(|e| CliError::from(e).writing(path))?;
        pending.commit()?;
    }
    let columns = ColumnSpecs::with_order(&spec, &order, &strings).map_err(|e| format!("spec: {e}"))?;
    let reader = BatchReader::new(files, args.input.reader_options(args.skip), columns, args.batch_rows);
    let progress = reader.disk_progress().map(|(total, done)| Progress::new(total, done));
    let schema = reader.schema();
    let in_parts = to == Format::Parquet && schema.fields().len() <= PARQUET_STREAMED_COLUMNS;
    let pieces = parsed_pieces(reader, pool.clone(), in_parts)?.map(|piece| match piece {
        Ok(p) => Ok(p),
        Err(BatchError::Record(e)) => Err(CliError::from(e)),
        Err(e) => Err(data(e.to_string())),
    });
    Ok(Input {
        pieces: Box::new(pieces),
        schema,
        _progress: progress,
    })
}

/// The reader's batches as pieces, parsed on the pool: with one thread, here as they are
/// asked for; with more, a thread reads and parses ahead while the caller writes, a few
/// pieces at most waiting between them (the pool's threads parse and encode; the reading
/// thread and the caller mostly wait on them, so they are not counted against `--threads`).
fn parsed_pieces(
    mut reader: BatchReader,
    pool: Arc<ThreadPool>,
    in_parts: bool,
) -> Result<Box<dyn Iterator<Item = Result<Piece, BatchError>>>, CliError> {
    let threads = pool.current_num_threads();
    // The next pieces: as many parts as there are threads (the last ones with the batch's
    // end), or a whole batch and its end.
    let mut next = move || -> Option<Result<Vec<Piece>, BatchError>> {
        let pieces = pool.install(|| {
            if in_parts {
                reader.next_parts(threads).map(|got| {
                    got.map(|(parts, ends)| {
                        let end = ends.then_some(Piece::End);
                        parts.into_iter().map(Piece::Rows).chain(end).collect()
                    })
                })
            } else {
                reader
                    .next_batch()
                    .map(|got| got.map(|batch| vec![Piece::Rows(batch), Piece::End]))
            }
        });
        pieces.transpose()
    };
    if threads < 2 {
        let mut ready = std::collections::VecDeque::new();
        return Ok(Box::new(std::iter::from_fn(move || loop {
            if let Some(piece) = ready.pop_front() {
                return Some(Ok(piece));
            }
            match next()? {
                Ok(pieces) => ready.extend(pieces),
                Err(e) => return Some(Err(e)),
            }
        })));
    }
    // Waiting: two rounds of parts, or two whole batches (each a batch and its end), so that
    // memory does not grow with the number of threads by whole batches.
    let waiting = if in_parts { 2 * threads } else { 4 };
    let (sender, receiver) = std::sync::mpsc::sync_channel(waiting);
    std::thread::Builder::new()
        .name("tfrec-convert-read".into())
        .spawn(move || {
            // Ends after the last batch or an error, or when the writer stops listening.
            while let Some(pieces) = next() {
                match pieces {
                    Ok(pieces) => {
                        for piece in pieces {
                            if sender.send(Ok(piece)).is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        let _ = sender.send(Err(e));
                        return;
                    }
                }
            }
        })
        .map_err(|e| format!("cannot start the reading thread: {e}"))?;
    Ok(Box::new(receiver.into_iter()))
}

/// The record batches of a Parquet file (or object).
fn parquet_batches<C: ChunkReader + 'static>(
    source: C,
    batch_rows: usize,
    named: impl Fn(&dyn std::fmt::Display) -> CliError,
) -> Result<Box<dyn RecordBatchReader>, CliError> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(source)
        .map_err(|e| named(&e))?
        .with_batch_size(batch_rows.max(1))
        .build()
        .map_err(|e| named(&e))?;
    Ok(Box::new(reader))
}

/// The record batches of an Arrow IPC file (or object).
fn ipc_batches<S: std::io::Read + std::io::Seek + 'static>(
    source: S,
    named: impl Fn(&dyn std::fmt::Display) -> CliError,
) -> Result<Box<dyn RecordBatchReader>, CliError> {
    Ok(Box::new(
        arrow_ipc::reader::FileReader::try_new(source, None).map_err(|e| named(&e))?,
    ))
}

/// An object in a store as Parquet reads a file: by ranges (the footer first, then the column
/// chunks a read needs).
#[cfg(feature = "remote")]
struct ObjectChunks(tfrec::record::remote::RemoteObject);

#[cfg(feature = "remote")]
impl parquet::file::reader::Length for ObjectChunks {
    fn len(&self) -> u64 {
        self.0.len()
    }
}

#[cfg(feature = "remote")]
impl ChunkReader for ObjectChunks {
    type T = tfrec::record::remote::RemoteReader;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        use std::io::Seek as _;
        let mut reader = self.0.reader();
        reader
            .seek(std::io::SeekFrom::Start(start))
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
        Ok(reader)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        let mut buf = vec![0; length];
        self.0
            .read_exact_at(&mut buf, start)
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
        Ok(buf.into())
    }
}

/// Batches of columnar files, one after the other; every file must have the first one's schema.
fn columnar_input(format: Format, files: Vec<PathBuf>, batch_rows: usize) -> Result<Input, CliError> {
    let open = move |path: &Path| -> Result<Box<dyn RecordBatchReader>, CliError> {
        let named = |e: &dyn std::fmt::Display| data(format!("{}: {e}", path.display()));
        #[cfg(feature = "remote")]
        if let Some(url) = path.to_str().filter(|_| tfrec::record::remote::is_url_path(path)) {
            // Parquet's footer, then its column chunks, by ranged reads; Arrow IPC's footer and
            // batches through a seekable reader of the object.
            use tfrec::record::remote::{RemoteObject, RemoteOptions};
            let object =
                RemoteObject::open(url, RemoteOptions::from_env()).map_err(|e| format!("{url}: cannot open: {e}"))?;
            return match format {
                Format::Parquet => parquet_batches(ObjectChunks(object), batch_rows, named),
                _ => ipc_batches(object.reader(), named),
            };
        }
        let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
        match format {
            Format::Parquet => parquet_batches(file, batch_rows, named),
            _ => ipc_batches(BufReader::new(file), named),
        }
    };
    let first = files.first().ok_or("no input files")?;
    let schema = open(first)?.schema();
    let (progress, done) = Progress::for_files(&files);
    let expected = schema.clone();
    let mut pending = files.into_iter();
    let mut current: Option<(PathBuf, Box<dyn RecordBatchReader>)> = None;
    let batches = std::iter::from_fn(move || loop {
        if current.is_none() {
            let path = pending.next()?;
            match open(&path) {
                Ok(r) if r.schema().fields() != expected.fields() => {
                    return Some(Err(data(format!(
                        "{}: its columns differ from the first input's; convert the files separately",
                        path.display()
                    ))))
                }
                Ok(r) => current = Some((path, r)),
                Err(e) => return Some(Err(e)),
            }
        }
        let (path, reader) = current.as_mut()?;
        match reader.next() {
            Some(Ok(b)) => return Some(Ok(b)),
            Some(Err(e)) => return Some(Err(data(format!("{}: {e}", path.display())))),
            None => {
                let size = tfrec::record::remote::size_of(path).unwrap_or(0);
                done.fetch_add(size, std::sync::atomic::Ordering::Relaxed);
                current = None;
            }
        }
    });
    let pieces = batches.flat_map(|batch| match batch {
        Ok(b) => vec![Ok(Piece::Rows(b)), Ok(Piece::End)],
        Err(e) => vec![Err(e)],
    });
    Ok(Input {
        pieces: Box::new(pieces),
        schema,
        _progress: Some(progress),
    })
}

/// Where batches go.
enum Sink {
    Records(crate::output::PendingRecords),
    Parquet(ParquetColumns, PendingFile),
    Arrow(arrow_ipc::writer::FileWriter<BufWriter<File>>, PendingFile),
    Jsonl(arrow_json::LineDelimitedWriter<BufWriter<File>>, PendingFile),
    Csv(arrow_csv::Writer<BufWriter<File>>, PendingFile, SchemaRef),
}

fn check_csv_columns(schema: &SchemaRef) -> Result<(), CliError> {
    for f in schema.fields() {
        if matches!(
            f.data_type(),
            DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) | DataType::Struct(_)
        ) {
            return Err(format!(
                "column '{}' is a {} and CSV holds only flat columns: write Parquet, Arrow or JSON lines instead",
                f.name(),
                f.data_type()
            )
            .into());
        }
    }
    Ok(())
}

impl Sink {
    fn create(
        format: Format,
        args: &Args,
        inputs: &[PathBuf],
        schema: &SchemaRef,
        pool: Arc<ThreadPool>,
    ) -> Result<Sink, CliError> {
        let path = &args.output;
        if format == Format::Tfrecord {
            let output = OutputArgs {
                output: args.output.clone(),
                compression: args.output_compression,
            };
            return Ok(Sink::Records(output.create(inputs)?));
        }
        refuse_same_file(path, inputs)?;
        if format == Format::Csv {
            check_csv_columns(schema)?;
        }
        let pending = PendingFile::create(path)?;
        let file = pending.file()?;
        Ok(match format {
            Format::Parquet => {
                // A dictionary page for every column chunk: worth it for the many rows of a
                // narrow table, but it enlarges the file of a wide sparse one (features present
                // in few records) and costs encoder state in every column.
                let dictionary = schema.fields().len() <= PARQUET_DICTIONARY_MAX_COLUMNS;
                let props = WriterProperties::builder()
                    .set_compression(ParquetCompression::SNAPPY)
                    .set_dictionary_enabled(dictionary)
                    .build();
                Sink::Parquet(ParquetColumns::try_new(file, schema.clone(), props, pool)?, pending)
            }
            Format::Arrow => Sink::Arrow(
                arrow_ipc::writer::FileWriter::try_new(BufWriter::new(file), schema)?,
                pending,
            ),
            Format::Jsonl => Sink::Jsonl(arrow_json::LineDelimitedWriter::new(BufWriter::new(file)), pending),
            _ => Sink::Csv(arrow_csv::Writer::new(BufWriter::new(file)), pending, schema.clone()),
        })
    }

    /// A batch's rows (all of them, but for Parquet, which takes a batch in parts).
    fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError> {
        match self {
            Sink::Records(out) => {
                for record in batch_to_records(batch).map_err(|e| data(e.to_string()))? {
                    out.writer.write_record(&record)?;
                }
            }
            Sink::Parquet(w, _) => w.write_part(batch)?,
            Sink::Arrow(w, _) => w.write(batch)?,
            Sink::Jsonl(w, _) => w.write(batch)?,
            Sink::Csv(w, _, _) => w.write(batch)?,
        }
        Ok(())
    }

    /// The end of a batch: a Parquet row group ends with it.
    fn end_batch(&mut self) -> Result<(), CliError> {
        if let Sink::Parquet(w, _) = self {
            w.end_row_group()?;
        }
        Ok(())
    }

    /// Finishes the file, reads it back to check its row count, and renames it into place.
    fn finish(self, rows: u64) -> Result<(), CliError> {
        let check = |read: u64, pending: &PendingFile| -> Result<(), CliError> {
            if read != rows {
                return Err(format!("{}: wrote {rows} rows but read back {read}", pending.path().display()).into());
            }
            Ok(())
        };
        match self {
            Sink::Records(out) => {
                out.finish_verified()?;
            }
            Sink::Parquet(w, pending) => {
                w.close()?;
                let reader = SerializedFileReader::new(File::open(pending.temp_path())?)?;
                check(reader.metadata().file_metadata().num_rows() as u64, &pending)?;
                pending.commit()?;
            }
            Sink::Arrow(mut w, pending) => {
                w.finish()?;
                w.into_inner()?.flush()?;
                let reader =
                    arrow_ipc::reader::FileReader::try_new(BufReader::new(File::open(pending.temp_path())?), None)?;
                let mut read = 0u64;
                for b in reader {
                    read += b?.num_rows() as u64;
                }
                check(read, &pending)?;
                pending.commit()?;
            }
            Sink::Jsonl(mut w, pending) => {
                w.finish()?;
                w.into_inner().flush()?;
                let read = BufReader::new(File::open(pending.temp_path())?).lines().count() as u64;
                check(read, &pending)?;
                pending.commit()?;
            }
            Sink::Csv(w, pending, schema) => {
                w.into_inner().flush()?;
                let text_schema = arrow_schema::Schema::new(
                    schema
                        .fields()
                        .iter()
                        .map(|f| arrow_schema::Field::new(f.name(), DataType::Utf8, true))
                        .collect::<Vec<_>>(),
                );
                let reader = arrow_csv::ReaderBuilder::new(std::sync::Arc::new(text_schema))
                    .with_header(true)
                    .build(File::open(pending.temp_path())?)?;
                let mut read = 0u64;
                for b in reader {
                    read += b?.num_rows() as u64;
                }
                check(read, &pending)?;
                pending.commit()?;
            }
        }
        Ok(())
    }
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let files = args.input.files()?;
    let from = args
        .from
        .unwrap_or_else(|| files.first().map_or(Format::Tfrecord, |f| Format::from_path(f)));
    let to = args.to.unwrap_or_else(|| Format::from_path(&args.output));
    if matches!(from, Format::Jsonl | Format::Csv) {
        return Err("JSON lines and CSV are output formats only (`tfrec from-jsonl` reads friendly JSON lines)".into());
    }
    if from == Format::Tfrecord && to == Format::Tfrecord {
        return Err("TFRecord to TFRecord: use `tfrec shard` (or give --to with a columnar output)".into());
    }
    // Every file the command reads or writes, spec files too, before anything is written.
    let reads: Vec<PathBuf> = files.iter().chain(&args.spec).cloned().collect();
    let writes: Vec<&Path> = std::iter::once(args.output.as_path())
        .chain(args.save_spec.as_deref())
        .collect();
    refuse_overlaps(&reads, &writes)?;
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| format!("cannot start the threads: {e}"))?;
    let pool = Arc::new(pool);
    let input = match from {
        Format::Tfrecord => tfrecord_input(&args, files.clone(), &pool, to)?,
        _ => columnar_input(from, files.clone(), args.batch_rows)?,
    };
    // The columnar writers' errors do not say which file they were writing; the record
    // writer's do.
    let named = |e: CliError| match to {
        Format::Tfrecord => e,
        _ => e.writing(&args.output),
    };
    let mut sink = Sink::create(to, &args, &reads, &input.schema, pool).map_err(named)?;
    let mut rows = 0u64;
    for piece in input.pieces {
        match piece? {
            Piece::Rows(batch) => {
                rows += batch.num_rows() as u64;
                sink.write(&batch).map_err(named)?;
            }
            Piece::End => sink.end_batch().map_err(named)?,
        }
    }
    sink.finish(rows).map_err(named)?;
    say!("{rows} records written to {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int64Builder, ListBuilder};
    use arrow_array::{Array, Int64Array};

    /// `columns` columns over rows `rows`: int64 scalars, and every third column a list of
    /// `row % 4` values, so that parts differ in length and a list column has several leaves'
    /// worth of levels.
    fn table(columns: usize, rows: std::ops::Range<i64>) -> RecordBatch {
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for c in 0..columns as i64 {
            if c % 3 == 2 {
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

    /// The file `ParquetColumns` writes of `groups` (each a row group's parts), on `threads`.
    fn written(groups: &[Vec<RecordBatch>], threads: usize) -> Vec<u8> {
        written_holding(groups, threads, PARQUET_GROUPS_BYTES)
    }

    /// [`written`], a row group starting beside those encoding only while they hold fewer
    /// than `groups_bytes`; with none, it checks that each started alone.
    fn written_holding(groups: &[Vec<RecordBatch>], threads: usize, groups_bytes: usize) -> Vec<u8> {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("t.parquet");
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
        let mut file =
            ParquetColumns::try_new(File::create(&path).expect("create"), schema, props, pool).expect("writer");
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
        file.close().expect("close");
        std::fs::read(&path).expect("read")
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
            let dir = tempfile::tempdir().expect("temp");
            let pool = Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("pool"),
            );
            let good = table(1, 0..4);
            let props = WriterProperties::builder().build();
            let file = File::create(dir.path().join("t.parquet")).expect("create");
            let mut writer = ParquetColumns::try_new(file, good.schema(), props, pool).expect("writer");
            let strings: ArrayRef = Arc::new(arrow_array::StringArray::from(vec!["a", "b"]));
            let bad = RecordBatch::try_from_iter([("c0", strings)]).expect("batch");
            let outcome = (|| {
                writer.write_part(&good)?;
                writer.end_row_group()?;
                writer.write_part(&bad)?;
                writer.write_part(&good)?;
                writer.end_row_group()?;
                writer.close()
            })();
            // The encoder's own error, not a later one of the row group it left short.
            let error = outcome.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.contains("Incompatible type"), "{threads} threads: {error:?}");
        }
    }
}

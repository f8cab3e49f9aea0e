//! `tfrec convert`: TFRecord files to and from columnar formats — Parquet, Arrow IPC
//! (`.arrow` / `.feather`), and out to JSON lines and CSV — through Arrow record batches
//! (`tfrec::columnar`), batch by batch so memory stays bounded whatever the input size. The
//! output is written under a temporary name, read back to check its row count, then renamed.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, SchemaRef};
use clap::{Args as ClapArgs, ValueEnum};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::ChunkReader;
use rayon::ThreadPool;
use serde_json::Value;
use tfrec::columnar::{
    batch_to_records, infer_specs, parquet_rows, sample_records, spec_order, BatchError, BatchPiece, BatchReader,
    ColumnSpecs, IpcColumnsWriter, ParquetWriter, StringColumns, COLUMN_SLICE_WIDTH, WIDE_SCHEMA_COLUMNS,
};
use tfrec::parse::{SpecError, SpecFile};
use tfrec::record::CompressionChoice;

use crate::error::{data, CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::output::{pending_file, refuse_overlaps, refuse_same_file, OutputArgs, PendingFile};
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

// `tfrec convert`'s options.
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
    /// Threads, 1 to 256 (default: one per core). With two or more, each input file is read
    /// on that many threads where it can be cut into spans (as `tfrec count --threads`), the
    /// next batches are read and parsed while one is written, and a Parquet output's columns are encoded in
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

/// Batches from the inputs, with a progress bar when the input is TFRecord.
struct Input {
    pieces: Box<dyn Iterator<Item = Result<BatchPiece, CliError>>>,
    schema: SchemaRef,
    /// Each batch comes as slices of its columns (a wide schema to JSON lines or Arrow IPC).
    in_column_slices: bool,
    _progress: Option<Progress>,
    /// Freed memory returned at once while the batches are written (see `tfrecord_input`).
    _memory: Option<crate::memory::ReturnFreedAtOnce>,
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

/// The TFRecord inputs' batches, parsed on `pool` ([`BatchReader::into_pieces`]). For a
/// Parquet output, in the pieces its writer takes best ([`BatchReader::into_parquet_pieces`]);
/// for JSON lines or Arrow IPC of a wide schema, in slices of columns
/// ([`BatchReader::into_column_slices`]), so that the batch is never whole as Arrow arrays;
/// else whole (a wide schema's Examples parsed in parts took more time and more memory).
fn tfrecord_input(args: &Args, files: Vec<PathBuf>, pool: &Arc<ThreadPool>, to: Format) -> Result<Input, CliError> {
    crate::input::check_openable(&files)?;
    let (spec, strings, order) = spec_of(args, &files)?;
    if args.print_spec {
        say!("{:#}", spec_json(&spec));
    }
    if let Some(path) = &args.save_spec {
        let pending = pending_file(path)?;
        let write = || writeln!(pending.file()?, "{:#}", spec_json(&spec));
        write().map_err(|e| CliError::from(e).writing(path))?;
        pending.commit()?;
    }
    let columns = ColumnSpecs::with_order(&spec, &order, &strings).map_err(|e| format!("spec: {e}"))?;
    // The compiled columns are all the reading needs: a wide schema's spec is freed before the
    // first batch is parsed, not beside it.
    drop((spec, strings, order));
    // Inferring a wide schema's spec took and freed about as much as the columns will take:
    // given back now, it is not held beside them.
    crate::memory::return_freed();
    let reader = BatchReader::new(files, args.input.reader_options(args.skip), columns, args.batch_rows)
        .read_threads(pool.current_num_threads());
    let progress = reader.disk_progress().map(|(total, done)| Progress::new(total, done));
    let schema = reader.schema();
    // A wide schema's batch is written to JSON lines or Arrow IPC a slice of columns at a time:
    // each slice, freed as the next is made, is given back at once, so that freed memory does
    // not add to the peak. (Parquet's pieces, slices too for a wide schema, are not: its
    // encoders free and take again in small pieces, which purging at once made a third slower.)
    let in_column_slices = schema.fields().len() >= WIDE_SCHEMA_COLUMNS && matches!(to, Format::Jsonl | Format::Arrow);
    let memory = in_column_slices.then(crate::memory::ReturnFreedAtOnce::start);
    // The parse starts when the first piece is asked for, after the output is created: an
    // Arrow IPC file's schema message (tens of bytes a column) is then made and freed before
    // the batch's parse, not beside it.
    let pool = pool.clone();
    let start = move || -> Box<dyn Iterator<Item = Result<BatchPiece, CliError>>> {
        let started = if to == Format::Parquet {
            reader.into_parquet_pieces(pool)
        } else if in_column_slices {
            reader.into_column_slices(pool, COLUMN_SLICE_WIDTH)
        } else {
            reader.into_pieces(pool, false)
        };
        match started {
            Ok(pieces) => Box::new(pieces.map(|piece| match piece {
                Ok(p) => Ok(p),
                Err(BatchError::Record(e)) => Err(CliError::from(e)),
                Err(e) => Err(data(e.to_string())),
            })),
            Err(e) => Box::new(std::iter::once(Err(CliError::from(e)))),
        }
    };
    let pieces = std::iter::once_with(start).flatten();
    Ok(Input {
        pieces: Box::new(pieces),
        schema,
        in_column_slices,
        _progress: progress,
        _memory: memory,
    })
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
    mut source: S,
    named: impl Fn(&dyn std::fmt::Display) -> CliError,
) -> Result<Box<dyn RecordBatchReader>, CliError> {
    // The footer holds a few flatbuffer tables a column, and the reader's default limit (a
    // million) refuses a schema of a few hundred thousand columns, such as `convert` writes of
    // a wide record. Each table takes at least 4 bytes of the file, so its size bounds them.
    let len = source.seek(std::io::SeekFrom::End(0)).map_err(|e| named(&e))?;
    source.rewind().map_err(|e| named(&e))?;
    let tables = usize::try_from(len / 4).unwrap_or(usize::MAX).max(1_000_000);
    let reader = arrow_ipc::reader::FileReaderBuilder::new()
        .with_max_footer_fb_tables(tables)
        .build(source)
        .map_err(|e| named(&e))?;
    Ok(Box::new(reader))
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
        Ok(b) => vec![Ok(BatchPiece::Rows(b)), Ok(BatchPiece::End)],
        Err(e) => vec![Err(e)],
    });
    Ok(Input {
        pieces: Box::new(pieces),
        schema,
        in_column_slices: false,
        _progress: Some(progress),
        _memory: None,
    })
}

/// Where batches go.
enum Sink {
    Records(crate::output::PendingRecords),
    Parquet(ParquetWriter<File>, PendingFile),
    Arrow(arrow_ipc::writer::FileWriter<BufWriter<File>>, PendingFile),
    /// Arrow IPC of a batch given in slices of columns.
    ArrowColumns(IpcColumnsWriter<BufWriter<File>>, PendingFile),
    Jsonl(
        arrow_json::LineDelimitedWriter<BufWriter<File>>,
        PendingFile,
        SlicedLines,
    ),
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
        input: &Input,
        pool: Arc<ThreadPool>,
    ) -> Result<Sink, CliError> {
        let schema = &input.schema;
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
        let pending = pending_file(path)?;
        let file = pending.file()?;
        Ok(match format {
            Format::Parquet => Sink::Parquet(ParquetWriter::new(file, schema.clone(), pool)?, pending),
            Format::Arrow if input.in_column_slices => Sink::ArrowColumns(
                IpcColumnsWriter::try_new(BufWriter::new(file), schema.clone())?,
                pending,
            ),
            Format::Arrow => Sink::Arrow(
                arrow_ipc::writer::FileWriter::try_new(BufWriter::new(file), schema)?,
                pending,
            ),
            Format::Jsonl => Sink::Jsonl(
                arrow_json::LineDelimitedWriter::new(BufWriter::new(file)),
                pending,
                SlicedLines::default(),
            ),
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
            Sink::ArrowColumns(w, _) => w.write(batch)?,
            Sink::Jsonl(w, _, _) => w.write(batch)?,
            Sink::Csv(w, _, _) => w.write(batch)?,
        }
        Ok(())
    }

    /// The next columns of a batch, every row of them, the schema's columns `first..` (JSON
    /// lines, Arrow IPC and Parquet only: the reader hands out column slices for no other
    /// output).
    fn write_columns(&mut self, first: usize, slice: &RecordBatch) -> Result<(), CliError> {
        match self {
            Sink::Parquet(w, _) => Ok(w.write_columns(first, slice)?),
            Sink::Jsonl(_, _, lines) => lines.add(slice),
            Sink::ArrowColumns(w, _) => Ok(w.write_columns(first, slice)?),
            _ => Err("a batch in column slices for an output that takes whole batches".into()),
        }
    }

    /// The end of a batch: a Parquet row group ends with it, and a batch given in column
    /// slices is written.
    fn end_batch(&mut self) -> Result<(), CliError> {
        match self {
            Sink::Parquet(w, _) => w.end_row_group()?,
            Sink::Jsonl(w, _, lines) => lines.write_to(w.get_mut())?,
            Sink::ArrowColumns(w, _) => w.end_batch()?,
            _ => {}
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
                // What the parse freed (a wide schema's columns, on the reading thread that
                // has ended) is given back before the page indexes and the footer are written.
                crate::memory::return_freed();
                w.close()?;
                check(parquet_rows(&mut File::open(pending.temp_path())?)?, &pending)?;
                pending.commit()?;
            }
            Sink::Arrow(mut w, pending) => {
                let columns = w.schema().fields().len();
                w.finish()?;
                w.into_inner()?.flush()?;
                check(ipc_rows(&pending, columns)?, &pending)?;
                pending.commit()?;
            }
            Sink::ArrowColumns(w, pending) => {
                let columns = w.schema().fields().len();
                w.finish()?.flush()?;
                check(ipc_rows(&pending, columns)?, &pending)?;
                pending.commit()?;
            }
            Sink::Jsonl(mut w, pending, _) => {
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

/// The rows of an Arrow IPC file just written, read back.
fn ipc_rows(pending: &PendingFile, columns: usize) -> Result<u64, CliError> {
    // The footer holds a few flatbuffer tables a column: the reader's default limit (a
    // million) refuses a schema of a few hundred thousand columns.
    let reader = arrow_ipc::reader::FileReaderBuilder::new()
        .with_max_footer_fb_tables(columns.saturating_mul(8).max(1_000_000))
        .build(BufReader::new(File::open(pending.temp_path())?))?;
    let mut read = 0u64;
    for b in reader {
        read += b?.num_rows() as u64;
    }
    Ok(read)
}

/// The JSON lines of a batch given in column slices: each row's fields so far, as arrow_json
/// writes them (`"name":value`, by commas, NULLs left out), to be written between the row's
/// braces when the batch ends; the lines are those arrow_json writes of the whole batch.
#[derive(Default)]
struct SlicedLines {
    /// Each row's fields so far; empty when no batch is being given.
    rows: Vec<Vec<u8>>,
    /// A slice's lines, reused.
    slice: Vec<u8>,
}

impl SlicedLines {
    /// The fields of the next slice of columns.
    fn add(&mut self, columns: &RecordBatch) -> Result<(), CliError> {
        self.slice.clear();
        let mut writer = arrow_json::LineDelimitedWriter::new(&mut self.slice);
        writer.write(columns)?;
        writer.finish()?;
        drop(writer);
        if self.rows.is_empty() {
            self.rows = vec![Vec::new(); columns.num_rows()];
        }
        // One line per row (JSON escapes every newline in a value), `{` fields `}`.
        let mut lines = self.slice.split(|&b| b == b'\n');
        for row in &mut self.rows {
            let line = lines.next().unwrap_or_default();
            let fields = line.get(1..line.len().saturating_sub(1)).unwrap_or_default();
            if !fields.is_empty() {
                if !row.is_empty() {
                    row.push(b',');
                }
                row.extend_from_slice(fields);
            }
        }
        Ok(())
    }

    /// The batch's lines written to `out`, and the rows let go.
    fn write_to(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        for row in std::mem::take(&mut self.rows) {
            out.write_all(b"{")?;
            out.write_all(&row)?;
            out.write_all(b"}\n")?;
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
    let mut sink = Sink::create(to, &args, &reads, &input, pool).map_err(named)?;
    let mut rows = 0u64;
    for piece in input.pieces {
        match piece? {
            BatchPiece::Rows(batch) => {
                rows += batch.num_rows() as u64;
                sink.write(&batch).map_err(named)?;
            }
            BatchPiece::Columns { first, batch } => {
                if first == 0 {
                    rows += batch.num_rows() as u64;
                }
                sink.write_columns(first, &batch).map_err(named)?;
            }
            BatchPiece::End => sink.end_batch().map_err(named)?,
        }
    }
    sink.finish(rows).map_err(named)?;
    say!("{rows} records written to {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}

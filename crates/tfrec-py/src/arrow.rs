//! `tfrec.arrow` from Rust: TFRecord files as Arrow C streams (the Arrow PyCapsule interface,
//! so pyarrow, Polars and DuckDB take the batches without a copy), spec inference, and Arrow
//! streams written back as Examples. The Python API is `python/tfrec/arrow.py`.

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow_array::ffi::{to_ffi, FFI_ArrowSchema};
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, Schema, SchemaRef};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};
use serde_json::Value;
use tfrec::columnar::{
    batch_to_records, infer_specs, sample_records, spec_order, BatchError, BatchPiece, BatchReader, ColumnSpecs,
    ParquetError, ParquetWriter, StringColumns,
};
use tfrec::parse::SpecFile;
use tfrec::pipeline::{Counters, PipelineError, PipelineIter};
use tfrec::record::output::PendingFile;
use tfrec::record::{expand_inputs, CompressionChoice, ReaderOptions, WriterOptions};

use crate::errors::PyTfrecError;
use crate::records::Sink;
use crate::records::{compression_choice, reader_options};
use crate::stats::counters_dict;

const STREAM_CAPSULE: &std::ffi::CStr = c"arrow_array_stream";
const SCHEMA_CAPSULE: &std::ffi::CStr = c"arrow_schema";
const ARRAY_CAPSULE: &std::ffi::CStr = c"arrow_array";

fn files(paths: Vec<String>) -> PyResult<Vec<PathBuf>> {
    expand_inputs(paths).map_err(|e| PyTfrecError::from(e).into())
}

fn options(compression: Option<&str>) -> PyResult<ReaderOptions> {
    reader_options(compression, "raise", "raise", true, None)
}

pub(crate) fn spec_file(text: &str) -> PyResult<SpecFile> {
    serde_json::from_str::<Value>(text).map_err(|e| PyValueError::new_err(format!("bad spec JSON: {e}")))?;
    SpecFile::from_json_str(text).map_err(|e| PyTfrecError::from(e).into())
}

/// The columns of a JSON spec, in the order its text names the features (a Python dict's
/// order survives `json.dumps`, so the columns come out as the user wrote the spec).
pub(crate) fn column_specs(text: &str, strings: &StringColumns) -> PyResult<ColumnSpecs> {
    ColumnSpecs::with_order(&spec_file(text)?, &spec_order(text), strings).map_err(|e| PyTfrecError::from(e).into())
}

pub(crate) fn strings(utf8: bool, utf8_columns: Option<Vec<String>>) -> StringColumns {
    match (utf8, utf8_columns) {
        (false, _) => StringColumns::Binary,
        (true, None) => StringColumns::Utf8,
        (true, Some(names)) => StringColumns::Utf8For(names.into_iter().collect()),
    }
}

/// Infers Example specs from the first `rows` records of `paths` (the library's one inference,
/// as `tfrec schema --json` and `tfrec convert`): `(spec JSON, names of the string features
/// found UTF-8, (name, why) of the features left out)`.
#[pyfunction]
#[pyo3(signature = (paths, rows=1000, compression=None))]
pub fn arrow_infer_spec(
    py: Python<'_>,
    paths: Vec<String>,
    rows: usize,
    compression: Option<&str>,
) -> PyResult<InferredSpec> {
    let files = files(paths)?;
    let options = options(compression)?;
    let sample = py
        .detach(|| sample_records(&files, options, rows))
        .map_err(PyTfrecError::from)?;
    let inferred = py.detach(|| infer_specs(&sample)).map_err(PyTfrecError::from)?;
    Ok((
        inferred.to_json_string(),
        inferred.utf8.iter().cloned().collect(),
        inferred.skipped.into_iter().collect(),
    ))
}

/// What `arrow_infer_spec` returns to Python.
type InferredSpec = (String, Vec<String>, Vec<(String, String)>);

/// The Arrow schema a spec gives, as a C stream of no batches (so Python can read the schema
/// with pyarrow without reading data); raises on a spec with no columnar form.
#[pyfunction]
#[pyo3(signature = (spec, utf8=false, utf8_columns=None))]
pub fn arrow_check_spec(spec: &str, utf8: bool, utf8_columns: Option<Vec<String>>) -> PyResult<()> {
    column_specs(spec, &strings(utf8, utf8_columns))?;
    Ok(())
}

/// Where an [`ArrowBatches`] gets its batches: files read in order by a [`BatchReader`], or a
/// `tfrec.Dataset` pipeline whose workers make the columns.
pub(crate) enum BatchSource {
    Files(Box<BatchReader>),
    Pipeline {
        iter: PipelineIter<RecordBatch>,
        schema: SchemaRef,
    },
}

/// Why a source gave no batch; kept typed until it reaches Python (as a `tfrec.errors` class)
/// or Arrow (as a message).
pub(crate) enum SourceError {
    Batch(BatchError),
    Pipeline(PipelineError),
}

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceError::Batch(e) => e.fmt(f),
            SourceError::Pipeline(e) => e.fmt(f),
        }
    }
}

impl BatchSource {
    fn schema(&self) -> SchemaRef {
        match self {
            BatchSource::Files(r) => r.schema(),
            BatchSource::Pipeline { schema, .. } => schema.clone(),
        }
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>, SourceError> {
        match self {
            BatchSource::Files(r) => r.next_batch().map_err(SourceError::Batch),
            BatchSource::Pipeline { iter, .. } => iter.next().transpose().map_err(SourceError::Pipeline),
        }
    }
}

/// A [`BatchSource`] as an Arrow reader, for the C stream: errors go as their text, which
/// names the file and offset (Arrow's C stream carries a message only).
struct StreamReader(BatchSource);

impl Iterator for StreamReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0
            .next_batch()
            .map_err(|e| ArrowError::ExternalError(e.to_string().into()))
            .transpose()
    }
}

impl RecordBatchReader for StreamReader {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }
}

impl From<SourceError> for PyTfrecError {
    fn from(e: SourceError) -> Self {
        match e {
            SourceError::Batch(e) => e.into(),
            SourceError::Pipeline(e) => e.into(),
        }
    }
}

/// A record batch handed to Python through the Arrow PyCapsule interface
/// (`__arrow_c_array__`), so `pyarrow.record_batch(b)` takes it without a copy.
#[pyclass(module = "tfrec._tfrec", frozen)]
pub struct ArrowBatch {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowBatch {
    /// `(schema capsule, array capsule)` of the batch as a struct array.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        // A requested schema is a hint the protocol lets a producer ignore.
        let _ = requested_schema;
        array_capsules(py, &StructArray::from(self.batch.clone()))
    }

    /// The batch's schema as an `arrow_schema` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.batch.schema())
    }

    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }
}

/// `(schema capsule, array capsule)` of `array`, the Arrow PyCapsule interface's pair.
fn array_capsules<'py>(py: Python<'py>, array: &dyn Array) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
    let (array, schema) = to_ffi(&array.to_data()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    // Each capsule owns its struct; a consumer moves it out (leaving `release` null), and
    // dropping the capsule drops what is left, whose `Drop` releases it only if still owned.
    Ok((
        PyCapsule::new(py, schema, Some(CString::from(SCHEMA_CAPSULE)))?,
        PyCapsule::new(py, array, Some(CString::from(ARRAY_CAPSULE)))?,
    ))
}

/// One Arrow array handed to Python through the Arrow PyCapsule interface
/// (`__arrow_c_array__`), so `pyarrow.array(a)` takes it without a copy: a parsed string
/// tensor with `strings="arrow"`.
#[pyclass(module = "tfrec._tfrec", frozen)]
pub struct ArrowArray {
    array: ArrayRef,
}

impl ArrowArray {
    pub(crate) fn new(array: ArrayRef) -> ArrowArray {
        ArrowArray { array }
    }
}

#[pymethods]
impl ArrowArray {
    /// `(schema capsule, array capsule)` of the array.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        // A requested schema is a hint the protocol lets a producer ignore.
        let _ = requested_schema;
        array_capsules(py, self.array.as_ref())
    }
}

fn schema_capsule<'py>(py: Python<'py>, schema: &Schema) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema).map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyCapsule::new(py, ffi, Some(CString::from(SCHEMA_CAPSULE)))
}

/// Arrow record batches read and parsed by Rust: a Python iterator of [`ArrowBatch`]es whose
/// errors are `tfrec.errors` classes with their attributes, and an Arrow C stream
/// (`__arrow_c_stream__`, which hands the rest of the batches over). Either way once.
#[pyclass(module = "tfrec._tfrec")]
pub struct ArrowBatches {
    source: Mutex<Option<BatchSource>>,
    schema: SchemaRef,
    /// Counters of a pipeline source, kept when the source is handed to a C stream.
    counters: Option<Arc<Counters>>,
    /// The specs the columns follow (JSON).
    spec: String,
}

impl ArrowBatches {
    pub(crate) fn new(source: BatchSource, spec: String) -> ArrowBatches {
        let counters = match &source {
            BatchSource::Pipeline { iter, .. } => Some(iter.counters()),
            BatchSource::Files(_) => None,
        };
        ArrowBatches {
            schema: source.schema(),
            source: Mutex::new(Some(source)),
            counters,
            spec,
        }
    }

    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, Option<BatchSource>>> {
        self.source
            .lock()
            .map_err(|_| PyValueError::new_err("the batches were poisoned by an earlier failure"))
    }
}

#[pymethods]
impl ArrowBatches {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The specs the columns follow, as JSON text.
    #[getter]
    fn spec(&self) -> &str {
        &self.spec
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<ArrowBatch>> {
        let mut guard = self.lock()?;
        let Some(source) = guard.as_mut() else {
            return Ok(None);
        };
        // Both sources end after their first error; the source stays for `stats()`.
        match py.detach(|| source.next_batch()) {
            Ok(batch) => Ok(batch.map(|batch| ArrowBatch { batch })),
            Err(e) => Err(PyTfrecError::from(e).into()),
        }
    }

    /// The schema of the batches as an `arrow_schema` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// The batches not yet taken, as an `arrow_array_stream` capsule.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // A requested schema is a hint the protocol lets a producer ignore; the columns are
        // the spec's.
        let _ = requested_schema;
        let source = self
            .lock()?
            .take()
            .ok_or_else(|| PyValueError::new_err("the batches were already taken: read the files again"))?;
        let reader: Box<dyn RecordBatchReader + Send> = Box::new(StreamReader(source));
        PyCapsule::new(
            py,
            FFI_ArrowArrayStream::new(reader),
            Some(CString::from(STREAM_CAPSULE)),
        )
    }

    /// What was read and skipped so far: `records`, `skipped_regions`, `skipped_bytes`,
    /// `skipped_files` and `problems` (messages naming file and offset).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if let Some(c) = &self.counters {
            return counters_dict(py, c);
        }
        let d = PyDict::new(py);
        let guard = self.lock()?;
        if let Some(BatchSource::Files(reader)) = guard.as_ref() {
            let stats = reader.stats();
            d.set_item("records", stats.records)?;
            d.set_item("skipped_regions", stats.skipped_regions)?;
            d.set_item("skipped_bytes", stats.skipped_bytes)?;
            d.set_item("skipped_files", stats.skipped_files)?;
            let problems: Vec<String> = reader.problems().iter().map(ToString::to_string).collect();
            d.set_item("problems", problems)?;
        }
        Ok(d)
    }
}

/// The record batches of `paths` parsed with `spec` (JSON), read by Rust.
#[pyfunction]
#[pyo3(signature = (paths, spec, batch_rows=65536, byte_range=None, utf8=false, utf8_columns=None, compression=None, limit=None, on_corruption="raise"))]
#[allow(clippy::too_many_arguments)]
pub fn arrow_batches(
    py: Python<'_>,
    paths: Vec<String>,
    spec: &str,
    batch_rows: usize,
    byte_range: Option<(u64, u64)>,
    utf8: bool,
    utf8_columns: Option<Vec<String>>,
    compression: Option<&str>,
    limit: Option<u64>,
    on_corruption: &str,
) -> PyResult<ArrowBatches> {
    let columns = column_specs(spec, &strings(utf8, utf8_columns))?;
    let files = files(paths)?;
    let options = reader_options(compression, on_corruption, "raise", true, None)?;
    let reader = match byte_range {
        None => BatchReader::new(files, options, columns, batch_rows),
        Some((start, end)) => {
            let [path] = files.as_slice() else {
                return Err(PyValueError::new_err(format!(
                    "byte_range reads one uncompressed file, not {}",
                    files.len()
                )));
            };
            py.detach(|| BatchReader::byte_range(path, start, end, options, columns, batch_rows))
                .map_err(PyTfrecError::from)?
        }
    }
    .limit(limit);
    Ok(ArrowBatches::new(BatchSource::Files(Box::new(reader)), spec.to_owned()))
}

/// The Arrow stream of a capsule from `__arrow_c_stream__`, moved out of it.
pub(crate) fn stream_reader(stream: &Bound<'_, PyAny>) -> PyResult<RecordBatchStreamReader> {
    let expected = || PyTypeError::new_err("expected an 'arrow_array_stream' PyCapsule (from __arrow_c_stream__)");
    let stream = stream.cast::<PyCapsule>().map_err(|_| expected())?;
    let pointer = stream
        .pointer_checked(Some(STREAM_CAPSULE))
        .map_err(|_| expected())?
        .as_ptr()
        .cast::<FFI_ArrowArrayStream>();
    // SAFETY: `pointer_checked` verified the capsule's name is "arrow_array_stream" and its
    // pointer is not null, so by the Arrow PyCapsule interface it points to a valid,
    // initialised `ArrowArrayStream` that the receiver may move out. `from_raw` moves it out
    // and leaves a released stream (release = NULL) in its place, so the capsule's destructor
    // does not release it again. No Python code runs between the check and the move (the
    // capsule is borrowed for the whole call and the GIL is held).
    unsafe { RecordBatchStreamReader::from_raw(pointer) }
        .map_err(|e| PyValueError::new_err(format!("cannot read the Arrow stream: {e}")))
}

/// Writes the batches of an `arrow_array_stream` capsule (from `__arrow_c_stream__`) to
/// `path` as Examples; returns the number of records written.
#[pyfunction]
#[pyo3(signature = (stream, path, compression=None))]
pub fn arrow_write(
    py: Python<'_>,
    stream: &Bound<'_, PyCapsule>,
    path: &Bound<'_, PyAny>,
    compression: Option<&str>,
) -> PyResult<u64> {
    let mut reader = stream_reader(stream.as_any())?;
    let options = WriterOptions::default().compression(compression_choice(compression, CompressionChoice::Auto)?);
    let (mut writer, name) = Sink::create(py, path, options)?;
    enum Failure {
        Write(tfrec::record::WriteError),
        Other(String),
    }
    let result = py.detach(|| -> Result<(), Failure> {
        for batch in reader.by_ref() {
            let batch = batch.map_err(|e| Failure::Other(format!("reading the Arrow stream: {e}")))?;
            for record in batch_to_records(&batch).map_err(|e| Failure::Other(e.to_string()))? {
                writer.write_record(&record).map_err(Failure::Write)?;
            }
        }
        Ok(())
    });
    // On failure the writer is dropped unfinished: an upload is aborted, so no partial object
    // appears; a file keeps what was written, as before.
    result.map_err(|f| -> PyErr {
        match f {
            Failure::Write(e) => PyTfrecError::from(e).into(),
            Failure::Other(m) => PyValueError::new_err(m),
        }
    })?;
    let n = writer.records_written();
    py.detach(|| writer.finish(&name))?;
    Ok(n)
}

/// Writes `source` to `path` as Parquet through the library's `ParquetWriter` (the writer
/// `tfrec convert` uses): row groups encoded on `threads` threads (default: one per core), a
/// row group per batch, the file's bytes the same whatever the number. `source` is the
/// `ArrowBatches` of TFRecord files (then read, parsed and handed over in the pieces
/// `convert` hands its writer, so the file is byte for byte `convert`'s), or any
/// `arrow_array_stream` capsule. The file is written under a temporary name beside `path` and
/// renamed (an object store URL: uploaded) only when complete. Returns the rows written.
#[pyfunction]
#[pyo3(signature = (source, path, threads=None))]
pub fn arrow_write_parquet(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    path: PathBuf,
    threads: Option<usize>,
) -> PyResult<u64> {
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| PyValueError::new_err(format!("cannot start the threads: {e}")))?;
    let pool = Arc::new(pool);
    let batches = match source.cast::<ArrowBatches>() {
        Ok(batches) => Some(
            batches
                .borrow()
                .lock()?
                .take()
                .ok_or_else(|| PyValueError::new_err("the batches were already taken: read the files again"))?,
        ),
        Err(_) => None,
    };
    let mut stream = match batches {
        Some(_) => None,
        None => Some(stream_reader(source)?),
    };
    let pending = py
        .detach(|| PendingFile::create(&path))
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    let written = py.detach(|| -> Result<u64, ParquetFailure> {
        let file = pending.file()?;
        let rows = match (batches, stream.as_mut()) {
            (Some(BatchSource::Files(reader)), _) => {
                let schema = reader.schema();
                let mut writer = ParquetWriter::new(file, schema.clone(), pool.clone())?;
                for piece in reader.into_parquet_pieces(pool)? {
                    match piece.map_err(ParquetFailure::Batch)? {
                        BatchPiece::Rows(part) => writer.write_part(&part)?,
                        BatchPiece::Columns { first, batch } => writer.write_columns(first, &batch)?,
                        BatchPiece::End => writer.end_row_group()?,
                    }
                }
                let rows = writer.rows_written();
                writer.close()?;
                rows
            }
            (Some(mut source), _) => {
                let mut writer = ParquetWriter::new(file, source.schema(), pool)?;
                while let Some(batch) = source.next_batch().map_err(ParquetFailure::Source)? {
                    writer.write_batch(&batch)?;
                }
                let rows = writer.rows_written();
                writer.close()?;
                rows
            }
            (None, Some(stream)) => {
                let mut writer = ParquetWriter::new(file, stream.schema(), pool)?;
                for batch in stream.by_ref() {
                    let batch = batch.map_err(|e| ParquetFailure::Other(format!("reading the Arrow stream: {e}")))?;
                    writer.write_batch(&batch)?;
                }
                let rows = writer.rows_written();
                writer.close()?;
                rows
            }
            (None, None) => 0,
        };
        pending.commit()?;
        Ok(rows)
    });
    written.map_err(|failure| -> PyErr {
        match failure {
            ParquetFailure::Batch(e) => PyTfrecError::from(e).into(),
            ParquetFailure::Source(e) => PyTfrecError::from(e).into(),
            ParquetFailure::Io(e) => pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())),
            ParquetFailure::Parquet(e) => {
                pyo3::exceptions::PyOSError::new_err(format!("{}: writing Parquet: {e}", path.display()))
            }
            ParquetFailure::Other(m) => PyValueError::new_err(m),
        }
    })
}

/// Why [`arrow_write_parquet`] failed, kept typed until it becomes a Python error.
enum ParquetFailure {
    Batch(BatchError),
    Source(SourceError),
    Io(std::io::Error),
    Parquet(ParquetError),
    Other(String),
}

impl From<std::io::Error> for ParquetFailure {
    fn from(e: std::io::Error) -> Self {
        ParquetFailure::Io(e)
    }
}

impl From<ParquetError> for ParquetFailure {
    fn from(e: ParquetError) -> Self {
        ParquetFailure::Parquet(e)
    }
}

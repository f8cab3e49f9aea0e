//! `tfrec.arrow` from Rust: TFRecord files as Arrow C streams (the Arrow PyCapsule interface,
//! so pyarrow, Polars and DuckDB take the batches without a copy), spec inference, and Arrow
//! streams written back as Examples. The Python API is `python/tfrec/arrow.py`.

use std::ffi::CString;
use std::path::PathBuf;

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::RecordBatchReader;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use serde_json::Value;
use tfrec::columnar::{
    batch_to_records, infer_specs, sample_records, BatchError, BatchReader, ColumnSpecs, ColumnarError, StringColumns,
};
use tfrec::parse::{specs_to_json_string, SpecFile};
use tfrec::record::{expand_inputs, CompressionChoice, ReaderOptions, RecordWriter, WriterOptions};

use crate::errors::{record_error, spec_error, write_error};
use crate::records::compression_choice;

const STREAM_CAPSULE: &std::ffi::CStr = c"arrow_array_stream";

fn columnar_error(e: ColumnarError) -> PyErr {
    match e {
        ColumnarError::Spec(s) => spec_error(&s),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn batch_error(py: Python<'_>, e: BatchError) -> PyErr {
    match e {
        BatchError::Record(r) => record_error(py, &r),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn files(py: Python<'_>, paths: Vec<String>) -> PyResult<Vec<PathBuf>> {
    expand_inputs(paths).map_err(|e| record_error(py, &e))
}

fn options(compression: Option<&str>) -> PyResult<ReaderOptions> {
    Ok(ReaderOptions::default().compression(compression_choice(compression, CompressionChoice::Auto)?))
}

fn spec_file(text: &str) -> PyResult<SpecFile> {
    serde_json::from_str::<Value>(text).map_err(|e| PyValueError::new_err(format!("bad spec JSON: {e}")))?;
    SpecFile::from_json_str(text).map_err(|e| spec_error(&e))
}

fn strings(utf8: bool, utf8_columns: Option<Vec<String>>) -> StringColumns {
    match (utf8, utf8_columns) {
        (false, _) => StringColumns::Binary,
        (true, None) => StringColumns::Utf8,
        (true, Some(names)) => StringColumns::Utf8For(names.into_iter().collect()),
    }
}

/// Infers Example specs from the first `rows` records of `paths`: `(spec JSON, names of the
/// string features found UTF-8)`.
#[pyfunction]
#[pyo3(signature = (paths, rows=1000, compression=None))]
pub fn arrow_infer_spec(
    py: Python<'_>,
    paths: Vec<String>,
    rows: usize,
    compression: Option<&str>,
) -> PyResult<(String, Vec<String>)> {
    let files = files(py, paths)?;
    let options = options(compression)?;
    let sample = py
        .detach(|| sample_records(&files, options, rows))
        .map_err(|e| record_error(py, &e))?;
    let inferred = py.detach(|| infer_specs(&sample)).map_err(columnar_error)?;
    Ok((
        specs_to_json_string(&inferred.specs),
        inferred.utf8.into_iter().collect(),
    ))
}

/// The Arrow schema a spec gives, as a C stream of no batches (so Python can read the schema
/// with pyarrow without reading data); raises on a spec with no columnar form.
#[pyfunction]
#[pyo3(signature = (spec, utf8=false, utf8_columns=None))]
pub fn arrow_check_spec(spec: &str, utf8: bool, utf8_columns: Option<Vec<String>>) -> PyResult<()> {
    ColumnSpecs::new(&spec_file(spec)?, &strings(utf8, utf8_columns)).map_err(columnar_error)?;
    Ok(())
}

/// A PyCapsule holding an `ArrowArrayStream` of the records of `paths` parsed with `spec`.
#[pyfunction]
#[pyo3(signature = (paths, spec, batch_rows=65536, byte_range=None, utf8=false, utf8_columns=None, compression=None, limit=None))]
#[allow(clippy::too_many_arguments)]
pub fn arrow_stream<'py>(
    py: Python<'py>,
    paths: Vec<String>,
    spec: &str,
    batch_rows: usize,
    byte_range: Option<(u64, u64)>,
    utf8: bool,
    utf8_columns: Option<Vec<String>>,
    compression: Option<&str>,
    limit: Option<u64>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let columns = ColumnSpecs::new(&spec_file(spec)?, &strings(utf8, utf8_columns)).map_err(columnar_error)?;
    let files = files(py, paths)?;
    let options = options(compression)?;
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
                .map_err(|e| batch_error(py, e))?
        }
    }
    .limit(limit);
    let reader: Box<dyn RecordBatchReader + Send> = Box::new(reader);
    let stream = FFI_ArrowArrayStream::new(reader);
    let name = CString::from(STREAM_CAPSULE);
    // The capsule owns the stream; a consumer moves it out (leaving `release` null), and
    // dropping the capsule drops what is left, whose `Drop` releases it only if still owned.
    PyCapsule::new(py, stream, Some(name))
}

/// Writes the batches of an `arrow_array_stream` capsule (from `__arrow_c_stream__`) to
/// `path` as Examples; returns the number of records written.
#[pyfunction]
#[pyo3(signature = (stream, path, compression=None))]
pub fn arrow_write(
    py: Python<'_>,
    stream: &Bound<'_, PyCapsule>,
    path: PathBuf,
    compression: Option<&str>,
) -> PyResult<u64> {
    let pointer = stream
        .pointer_checked(Some(STREAM_CAPSULE))
        .map_err(|_| PyTypeError::new_err("expected an 'arrow_array_stream' PyCapsule (from __arrow_c_stream__)"))?
        .as_ptr()
        .cast::<FFI_ArrowArrayStream>();
    // SAFETY: `pointer_checked` verified the capsule's name is "arrow_array_stream" and its
    // pointer is not null, so by the Arrow PyCapsule interface it points to a valid,
    // initialised `ArrowArrayStream` that the receiver may move out. `from_raw` moves it out
    // and leaves a released stream (release = NULL) in its place, so the capsule's destructor
    // does not release it again. No Python code runs between the check and the move (the
    // capsule is borrowed for the whole call and the GIL is held).
    let mut reader = unsafe { RecordBatchStreamReader::from_raw(pointer) }
        .map_err(|e| PyValueError::new_err(format!("cannot read the Arrow stream: {e}")))?;
    let options = WriterOptions::default().compression(compression_choice(compression, CompressionChoice::Auto)?);
    enum Failure {
        Write(tfrec::record::WriteError),
        Other(String),
    }
    let result = py.detach(move || -> Result<u64, Failure> {
        let mut writer = RecordWriter::create(&path, options).map_err(Failure::Write)?;
        for batch in reader.by_ref() {
            let batch = batch.map_err(|e| Failure::Other(format!("reading the Arrow stream: {e}")))?;
            for record in batch_to_records(&batch).map_err(|e| Failure::Other(e.to_string()))? {
                writer.write_record(&record).map_err(Failure::Write)?;
            }
        }
        let n = writer.records_written();
        writer.finish().map_err(Failure::Write)?;
        Ok(n)
    });
    result.map_err(|f| match f {
        Failure::Write(e) => write_error(py, &e),
        Failure::Other(m) => PyValueError::new_err(m),
    })
}

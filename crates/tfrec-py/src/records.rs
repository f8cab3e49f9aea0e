//! TFRecord files from Python: a writer (`tfrec.TFRecordWriter`) and a record iterator over
//! many files and globs (`tfrec.TFRecordDataset`).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use tfrec::record::remote::RemoteWriter;
use tfrec::record::{
    Compression, CompressionChoice, Location, MultiFileReader, OnCorruption, ReadStats, ReaderOptions, RecordError,
    RecordErrorKind, RecordReader, RecordWriter as Writer, TornTail, WriteError, WriterOptions,
};

use crate::errors::PyTfrecError;
use crate::pyfile::{require_stream, stream_name, PyReadStream, PyWriteStream};

/// TF's `compression_type`: `None`/`""`/`"NONE"`, `"GZIP"`, `"ZLIB"`, or `"AUTO"` (extension,
/// then sniffing).
pub fn compression_choice(name: Option<&str>, default: CompressionChoice) -> PyResult<CompressionChoice> {
    match name {
        None => Ok(default),
        Some(n) => n.parse().map_err(|e| PyTfrecError::from(e).into()),
    }
}

/// Reader options from the Python keywords shared by `TFRecordDataset` and `Dataset`.
pub fn reader_options(
    compression_type: Option<&str>,
    on_corruption: &str,
    torn_tail: &str,
    verify_crc: bool,
    buffer_size: Option<usize>,
) -> PyResult<ReaderOptions> {
    let mut options = ReaderOptions::default()
        .compression(compression_choice(compression_type, CompressionChoice::Auto)?)
        .verify_data_crc(verify_crc)
        .on_corruption(match on_corruption {
            "fail" | "raise" | "error" => OnCorruption::Fail,
            "skip" | "skip_record" | "resync" => OnCorruption::Resync,
            "skip_file" => OnCorruption::SkipFile,
            other => {
                return Err(PyValueError::new_err(format!(
                    "on_corruption must be 'raise', 'skip' or 'skip_file', not {other:?}"
                )))
            }
        })
        .torn_tail(match torn_tail {
            "error" | "raise" => TornTail::Error,
            "skip" => TornTail::Skip,
            other => {
                return Err(PyValueError::new_err(format!(
                    "torn_tail must be 'raise' or 'skip', not {other:?}"
                )))
            }
        });
    if let Some(size) = buffer_size {
        options = options.buffer_size(size);
    }
    Ok(options)
}

/// Where a writer's records go: a file, an object in a store (uploaded as it is written, and
/// only there once complete), or a Python file object.
pub enum Sink {
    File(Writer<File>),
    Object(Writer<RemoteWriter>),
    Stream(Writer<PyWriteStream>),
}

impl Sink {
    /// Opens `target`: a path, a URL, or a Python file object with `write()`; returns the
    /// sink and the name errors show. With [`CompressionChoice::Auto`] in `options`, a path's or
    /// URL's extension decides (`.gz`, `.zz`), and a file object gets plain records.
    pub fn create(py: Python<'_>, target: &Bound<'_, PyAny>, options: WriterOptions) -> PyResult<(Sink, String)> {
        let fspath = if target.hasattr("__fspath__")? {
            Some(target.call_method0("__fspath__")?)
        } else {
            None
        };
        if let Ok(name) = fspath.as_ref().unwrap_or(target).extract::<String>() {
            if !tfrec::record::remote::is_url(&name) {
                let writer = Writer::create(&name, options).map_err(PyTfrecError::from)?;
                return Ok((Sink::File(writer), name));
            }
            let options = match options.compression {
                CompressionChoice::Auto => {
                    let by_name = Compression::from_extension(std::path::Path::new(&name));
                    options.compression(by_name.unwrap_or(Compression::None))
                }
                CompressionChoice::Exactly(_) => options,
            };
            let upload = py
                .detach(|| RemoteWriter::create(&name))
                .map_err(|e| write_failed(&name, e))?;
            let writer = Writer::with_options(upload, options).with_path(&name);
            return Ok((Sink::Object(writer), name));
        }
        if !target.hasattr("write")? {
            return Err(PyTypeError::new_err(format!(
                "TFRecord files are written to a path, a URL or a file object with write(), not {}",
                target.get_type().name()?
            )));
        }
        let name = stream_name(target);
        let stream = PyWriteStream::new(target.clone().unbind());
        Ok((
            Sink::Stream(Writer::with_options(stream, options).with_path(&name)),
            name,
        ))
    }

    pub fn write_record(&mut self, record: &[u8]) -> Result<(), WriteError> {
        match self {
            Sink::File(w) => w.write_record(record),
            Sink::Object(w) => w.write_record(record),
            Sink::Stream(w) => w.write_record(record),
        }
    }

    fn flush(&mut self) -> Result<(), WriteError> {
        match self {
            Sink::File(w) => w.flush(),
            Sink::Object(w) => w.flush(),
            Sink::Stream(w) => w.flush(),
        }
    }

    pub fn records_written(&self) -> u64 {
        match self {
            Sink::File(w) => w.records_written(),
            Sink::Object(w) => w.records_written(),
            Sink::Stream(w) => w.records_written(),
        }
    }

    /// Ends the stream; an object's upload is completed, so it appears now, whole.
    pub fn finish(self, path: &str) -> PyResult<()> {
        match self {
            Sink::File(w) => w.finish().map(drop).map_err(|e| PyTfrecError::from(e).into()),
            Sink::Stream(w) => {
                let mut stream = w.finish().map_err(PyTfrecError::from)?;
                stream.flush().map_err(|e| write_failed(path, e))
            }
            Sink::Object(w) => {
                let upload = w.finish().map_err(PyTfrecError::from)?;
                upload.finish().map_err(|e| write_failed(path, e))
            }
        }
    }
}

/// An input that could not be opened (a file object's first read, an object's HEAD), named
/// as the library names a file it cannot open.
fn open_failed(name: &str, e: std::io::Error) -> PyErr {
    PyTfrecError::from(RecordError {
        kind: RecordErrorKind::Open(e),
        location: Location {
            path: Some(std::sync::Arc::from(std::path::Path::new(name))),
            ..Location::default()
        },
    })
    .into()
}

fn write_failed(path: &str, e: std::io::Error) -> PyErr {
    PyTfrecError::from(WriteError {
        path: Some(std::sync::Arc::from(std::path::Path::new(path))),
        record_index: 0,
        source: e,
    })
    .into()
}

/// Writes framed records to a file, an object store URL or a Python file object.
#[pyclass(module = "tfrec._tfrec")]
pub struct RecordWriter {
    /// `None` once closed. Behind a mutex only to make the class `Sync`; `&mut self` methods
    /// use `get_mut`.
    writer: Mutex<Option<Sink>>,
    path: String,
}

#[pymethods]
impl RecordWriter {
    #[new]
    #[pyo3(signature = (path, compression=None, level=None))]
    fn new(py: Python<'_>, path: &Bound<'_, PyAny>, compression: Option<&str>, level: Option<u32>) -> PyResult<Self> {
        let compression: Compression = match compression {
            None => Compression::None,
            Some(n) => n.parse().map_err(PyTfrecError::from)?,
        };
        let mut options = WriterOptions::default().compression(compression);
        if let Some(level) = level {
            options = options.level(level);
        }
        let (writer, path) = Sink::create(py, path, options)?;
        Ok(RecordWriter {
            writer: Mutex::new(Some(writer)),
            path,
        })
    }

    fn write(&mut self, py: Python<'_>, record: &[u8]) -> PyResult<()> {
        let writer = self.open_writer()?;
        py.detach(|| writer.write_record(record))
            .map_err(|e| PyTfrecError::from(e).into())
    }

    fn flush(&mut self, py: Python<'_>) -> PyResult<()> {
        let writer = self.open_writer()?;
        py.detach(|| writer.flush()).map_err(|e| PyTfrecError::from(e).into())
    }

    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(writer) = self.writer.get_mut().map_err(poisoned)?.take() {
            let path = self.path.clone();
            py.detach(|| writer.finish(&path))?;
        }
        Ok(())
    }

    /// Closes the writer after a failure: an object being uploaded is abandoned, so nothing
    /// appears under its name; a file or file object is ended as `close` ends it (TensorFlow
    /// keeps what was written to a file).
    fn abort(&mut self, py: Python<'_>) -> PyResult<()> {
        match self.writer.get_mut().map_err(poisoned)?.take() {
            Some(Sink::Object(writer)) => {
                // Dropped unfinished: the upload is aborted (see `RemoteWriter`).
                py.detach(|| drop(writer));
                Ok(())
            }
            Some(other) => {
                let path = self.path.clone();
                py.detach(|| other.finish(&path))
            }
            None => Ok(()),
        }
    }

    #[getter]
    fn records_written(&self) -> PyResult<u64> {
        let writer = self.writer.lock().map_err(poisoned)?;
        Ok(writer.as_ref().map_or(0, |w| w.records_written()))
    }

    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    #[getter]
    fn closed(&self) -> PyResult<bool> {
        Ok(self.writer.lock().map_err(poisoned)?.is_none())
    }
}

impl RecordWriter {
    fn open_writer(&mut self) -> PyResult<&mut Sink> {
        self.writer
            .get_mut()
            .map_err(poisoned)?
            .as_mut()
            .ok_or_else(|| PyValueError::new_err(format!("the writer for {} is closed", self.path)))
    }
}

/// The records read: many files (and objects), or one Python file object.
enum Records {
    Files(MultiFileReader),
    Stream(RecordReader<Box<dyn Read + Send>>),
}

impl Records {
    fn next_record(&mut self) -> Result<Option<&[u8]>, RecordError> {
        match self {
            Records::Files(r) => r.next_record(),
            Records::Stream(r) => r.next_record(),
        }
    }

    fn stats(&self) -> ReadStats {
        match self {
            Records::Files(r) => r.stats(),
            Records::Stream(r) => r.stats(),
        }
    }

    fn problems(&self) -> Vec<&RecordError> {
        match self {
            Records::Files(r) => r.problems(),
            Records::Stream(r) => r.problems().iter().collect(),
        }
    }
}

/// Iterates over the records of many files as `bytes`.
#[pyclass(module = "tfrec._tfrec")]
pub struct RecordIterator {
    /// Behind a mutex only to make the class `Sync`; `&mut self` methods use `get_mut`.
    reader: Mutex<Records>,
    /// An error met by `next_many` after some records; raised by the next call.
    pending: Option<RecordError>,
    /// Set once an error was raised: the iterator then ends.
    failed: bool,
}

#[pymethods]
impl RecordIterator {
    #[new]
    #[pyo3(signature = (paths, compression_type=None, on_corruption="raise", torn_tail="raise", verify_crc=true, buffer_size=None))]
    fn new(
        paths: Vec<String>,
        compression_type: Option<&str>,
        on_corruption: &str,
        torn_tail: &str,
        verify_crc: bool,
        buffer_size: Option<usize>,
    ) -> PyResult<Self> {
        let options = reader_options(compression_type, on_corruption, torn_tail, verify_crc, buffer_size)?;
        let reader = MultiFileReader::open(&paths, options).map_err(PyTfrecError::from)?;
        Ok(RecordIterator::over(Records::Files(reader)))
    }

    /// The records of a Python file object (anything with `read(n)` giving `bytes`), read from
    /// where it stands; errors name it by its `name` attribute.
    #[staticmethod]
    #[pyo3(signature = (stream, compression_type=None, on_corruption="raise", torn_tail="raise", verify_crc=true, buffer_size=None))]
    fn from_stream(
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        compression_type: Option<&str>,
        on_corruption: &str,
        torn_tail: &str,
        verify_crc: bool,
        buffer_size: Option<usize>,
    ) -> PyResult<Self> {
        let options = reader_options(compression_type, on_corruption, torn_tail, verify_crc, buffer_size)?;
        require_stream(stream, false)?;
        let name = stream_name(stream);
        let source = PyReadStream::new(stream.clone().unbind());
        let reader = py
            .detach(|| RecordReader::from_stream(source, options))
            .map_err(|e| open_failed(&name, e))?;
        Ok(RecordIterator::over(Records::Stream(reader.with_path(name))))
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        if let Some(e) = self.pending.take() {
            self.failed = true;
            return Err(PyTfrecError::from(e).into());
        }
        if self.failed {
            return Ok(None);
        }
        let reader = self.reader.get_mut().map_err(poisoned)?;
        match py.detach(|| reader.next_record().map(|r| r.map(<[u8]>::to_vec))) {
            Ok(Some(record)) => Ok(Some(PyBytes::new(py, &record))),
            Ok(None) => Ok(None),
            Err(e) => {
                self.failed = true;
                Err(PyTfrecError::from(e).into())
            }
        }
    }

    /// Reads up to `n` records at once (fewer at the end): one GIL release for many records.
    fn next_many<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(e) = self.pending.take() {
            self.failed = true;
            return Err(PyTfrecError::from(e).into());
        }
        if self.failed {
            return Ok(out);
        }
        let reader = self.reader.get_mut().map_err(poisoned)?;
        let (records, error) = py.detach(|| {
            let mut records = Vec::with_capacity(n.min(1 << 16));
            while records.len() < n {
                match reader.next_record() {
                    Ok(Some(r)) => records.push(r.to_vec()),
                    Ok(None) => return (records, None),
                    Err(e) => return (records, Some(e)),
                }
            }
            (records, None)
        });
        for r in &records {
            out.append(PyBytes::new(py, r))?;
        }
        if let Some(e) = error {
            // Records before the damage are returned first; the error comes on the next call.
            if out.is_empty() {
                self.failed = true;
                return Err(PyTfrecError::from(e).into());
            }
            self.pending = Some(e);
        }
        Ok(out)
    }

    /// What was read and skipped so far.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.reader.lock().map_err(poisoned)?.stats();
        let d = PyDict::new(py);
        d.set_item("records", s.records)?;
        d.set_item("data_bytes", s.data_bytes)?;
        d.set_item("skipped_regions", s.skipped_regions)?;
        d.set_item("skipped_bytes", s.skipped_bytes)?;
        d.set_item("skipped_files", s.skipped_files)?;
        d.set_item("torn_tail_bytes", s.torn_tail_bytes)?;
        Ok(d)
    }

    /// The problems skipped so far, as messages naming file and offset.
    fn problems(&self) -> PyResult<Vec<String>> {
        let reader = self.reader.lock().map_err(poisoned)?;
        Ok(reader.problems().iter().map(|e| e.to_string()).collect())
    }
}

impl RecordIterator {
    fn over(records: Records) -> Self {
        RecordIterator {
            reader: Mutex::new(records),
            pending: None,
            failed: false,
        }
    }
}

fn poisoned<T>(_: PoisonError<T>) -> PyErr {
    PyValueError::new_err("the reader was poisoned by an earlier failure")
}

/// The files that paths, directories and glob patterns name, in the order the readers take
/// them (`record::expand_inputs`): a data set expands its inputs once, so every process it is
/// pickled to reads the same list.
#[pyfunction]
pub fn expand_inputs(inputs: Vec<String>) -> PyResult<Vec<String>> {
    let files = tfrec::record::expand_inputs(&inputs).map_err(PyTfrecError::from)?;
    Ok(files.into_iter().map(|p| p.to_string_lossy().into_owned()).collect())
}

/// Whether `path` names an object in a store (`s3://`, `gs://`, `az://`, `http(s)://`, …) rather
/// than a local file (`file://` is one), by the rules every reader follows.
#[pyfunction]
pub fn is_url(path: &str) -> bool {
    tfrec::record::remote::is_url(path)
}

/// The size in bytes of a local file, or of the object a URL names (one request).
#[pyfunction]
pub fn file_size(py: Python<'_>, path: String) -> PyResult<u64> {
    py.detach(|| tfrec::record::remote::size_of(Path::new(&path)))
        .map_err(|e| open_failed(&path, e))
}

/// The read units of `files` for workers that read apart (`record::plan_read_units`): `(path,
/// (start, end) or None, records or None, bytes)` each. `split_bytes=None` keeps every file
/// whole.
#[pyfunction]
#[pyo3(signature = (files, compression=None, split_bytes=None))]
#[allow(clippy::type_complexity)]
pub fn plan_read_units(
    py: Python<'_>,
    files: Vec<String>,
    compression: Option<&str>,
    split_bytes: Option<u64>,
) -> PyResult<Vec<(String, Option<(u64, u64)>, Option<u64>, u64)>> {
    let compression = compression_choice(compression, CompressionChoice::Auto)?;
    let paths: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    let units = py
        .detach(|| tfrec::record::plan_read_units(&paths, compression, split_bytes.unwrap_or(u64::MAX)))
        .map_err(PyTfrecError::from)?;
    Ok(units
        .into_iter()
        .map(|u| {
            let range = u.range.map(|r| (r.start, r.end));
            (u.path.to_string_lossy().into_owned(), range, u.records, u.bytes)
        })
        .collect())
}

/// Raises `ValueError` when the output `path` is one of `inputs` (the same path after
/// resolving links, or the same file by device and inode), by the library's rule the CLI's
/// commands follow: a writer never writes over a file it reads in the same call.
#[pyfunction]
pub fn refuse_same_file(path: String, inputs: Vec<String>) -> PyResult<()> {
    let inputs: Vec<std::path::PathBuf> = inputs.into_iter().map(Into::into).collect();
    tfrec::record::output::refuse_same_file(std::path::Path::new(&path), &inputs)
        .map_err(|e| PyTfrecError::from(e).into())
}

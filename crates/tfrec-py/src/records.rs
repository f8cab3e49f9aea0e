//! TFRecord files from Python: a writer (`tfrec.TFRecordWriter`) and a record iterator over
//! many files and globs (`tfrec.TFRecordDataset`).

use std::fs::File;
use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use tfrec::record::{
    Compression, CompressionChoice, MultiFileReader, OnCorruption, ReaderOptions, RecordError, RecordWriter as Writer,
    TornTail, WriterOptions,
};

use crate::errors::PyTfrecError;

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

/// Writes framed records to one file.
#[pyclass(module = "tfrec._tfrec")]
pub struct RecordWriter {
    /// `None` once closed.
    writer: Option<Writer<File>>,
    path: String,
}

#[pymethods]
impl RecordWriter {
    #[new]
    #[pyo3(signature = (path, compression=None, level=None))]
    fn new(path: String, compression: Option<&str>, level: Option<u32>) -> PyResult<Self> {
        let compression: Compression = match compression {
            None => Compression::None,
            Some(n) => n.parse().map_err(PyTfrecError::from)?,
        };
        let mut options = WriterOptions::default().compression(compression);
        if let Some(level) = level {
            options = options.level(level);
        }
        let writer = Writer::create(&path, options).map_err(PyTfrecError::from)?;
        Ok(RecordWriter {
            writer: Some(writer),
            path,
        })
    }

    fn write(&mut self, record: &[u8]) -> PyResult<()> {
        let writer = self.open_writer()?;
        writer.write_record(record).map_err(|e| PyTfrecError::from(e).into())
    }

    fn flush(&mut self) -> PyResult<()> {
        let writer = self.open_writer()?;
        writer.flush().map_err(|e| PyTfrecError::from(e).into())
    }

    fn close(&mut self) -> PyResult<()> {
        if let Some(writer) = self.writer.take() {
            writer.finish().map_err(PyTfrecError::from)?;
        }
        Ok(())
    }

    #[getter]
    fn records_written(&self) -> u64 {
        self.writer.as_ref().map_or(0, |w| w.records_written())
    }

    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    #[getter]
    fn closed(&self) -> bool {
        self.writer.is_none()
    }
}

impl RecordWriter {
    fn open_writer(&mut self) -> PyResult<&mut Writer<File>> {
        self.writer
            .as_mut()
            .ok_or_else(|| PyValueError::new_err(format!("the writer for {} is closed", self.path)))
    }
}

/// Iterates over the records of many files as `bytes`.
#[pyclass(module = "tfrec._tfrec")]
pub struct RecordIterator {
    /// Behind a mutex only to make the class `Sync`; `&mut self` methods use `get_mut`.
    reader: Mutex<MultiFileReader>,
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
        Ok(RecordIterator {
            reader: Mutex::new(reader),
            pending: None,
            failed: false,
        })
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

//! `tfrec._tfrec.RecordFiles`: random access to TFRecord files (plain, GZIP, ZLIB) from Python (record `i` of
//! many files, or a batch of them, as `bytes`), reading with the GIL released. The Python face,
//! with negative indices, slices and parsing, is `tfrec.RandomAccessDataset`.

use std::cell::RefCell;
use std::ops::Range;

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use tfrec::record::{expand_inputs, RecordFile, RecordFiles as Files};

use crate::errors::PyTfrecError;
use crate::pyfile::{require_stream, stream_name, PyReadStream};

/// Framed bytes read per release of the GIL in `get_many`, at most (a single larger record
/// excepted): about what stays in a core's L2 cache.
const CHUNK_BYTES: u64 = 512 << 10;

/// Buffers above this size are given back after a read instead of kept for the next one.
const KEEP_SCRATCH: usize = 64 << 20;

thread_local! {
    /// Framed records are read here, then copied once into the `bytes` objects; kept between
    /// calls so that the buffer is neither allocated nor zeroed per record.
    static SCRATCH: RefCell<(Vec<u8>, Vec<Range<usize>>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// TFRecord files (plain, GZIP or ZLIB) opened for random access, their records numbered
/// file after file.
#[pyclass(module = "tfrec._tfrec", frozen)]
pub struct RecordFiles {
    inner: Files,
}

impl RecordFiles {
    /// `i`, negative counting from the end, as an index into the records.
    fn position(&self, i: isize) -> PyResult<usize> {
        let len = self.inner.len();
        let at = if i < 0 {
            len.checked_sub(i.unsigned_abs())
        } else {
            Some(i.unsigned_abs())
        };
        at.filter(|&at| at < len)
            .ok_or_else(|| PyIndexError::new_err(format!("record index {i} is out of range for {len} records")))
    }
}

impl RecordFiles {
    /// `at` cut into runs of records whose frames fill about [`CHUNK_BYTES`]: the buffer they
    /// are read into stays in the CPU cache until they are copied out (a whole batch of large
    /// records read at once made batches slower than single reads).
    fn chunks<'a>(&self, at: &'a [usize]) -> impl Iterator<Item = &'a [usize]> + 'a {
        let sizes: Vec<u64> = at
            .iter()
            .map(|&i| {
                self.inner
                    .locate(i)
                    .ok()
                    .and_then(|(file, local)| file.index().entries().get(local).map(|e| e.len))
                    .unwrap_or(0)
            })
            .collect();
        let mut start = 0;
        std::iter::from_fn(move || {
            if start >= at.len() {
                return None;
            }
            let mut end = start + 1;
            let mut bytes = sizes[start];
            while end < at.len() && bytes + sizes[end] <= CHUNK_BYTES {
                bytes += sizes[end];
                end += 1;
            }
            let chunk = &at[start..end];
            start = end;
            Some(chunk)
        })
    }
}

#[pymethods]
impl RecordFiles {
    /// `paths`: files, globs and directories (as `TFRecordDataset` takes them). `index_paths`:
    /// one index path (or `None`) per file after expansion; by default `FILE.idx`. A missing
    /// index is built and saved there when possible.
    #[new]
    #[pyo3(signature = (paths, index_paths=None))]
    fn new(py: Python<'_>, paths: Vec<String>, index_paths: Option<Vec<Option<String>>>) -> PyResult<Self> {
        let files = expand_inputs(&paths).map_err(PyTfrecError::from)?;
        let index_paths = match index_paths {
            None => vec![None; files.len()],
            Some(given) if given.len() == files.len() => given,
            Some(given) => {
                return Err(PyValueError::new_err(format!(
                    "index_paths names {} indexes, but the inputs are {} files",
                    given.len(),
                    files.len()
                )))
            }
        };
        let opened = py.detach(|| {
            files
                .iter()
                .zip(index_paths)
                .map(|(file, index)| match index {
                    Some(index) => RecordFile::open_with_index_file(file, index),
                    None => RecordFile::open(file),
                })
                .collect::<Result<Vec<_>, _>>()
        });
        let files = opened.map_err(PyTfrecError::from)?;
        Ok(RecordFiles {
            inner: Files::new(files),
        })
    }

    /// Random access to Python file objects that can `seek` (a file opened `"rb"`, `BytesIO`,
    /// fsspec's files): each is read once to index it, then read at the records' offsets.
    #[staticmethod]
    fn from_streams(py: Python<'_>, streams: Vec<Bound<'_, PyAny>>) -> PyResult<Self> {
        let mut files = Vec::with_capacity(streams.len());
        for stream in &streams {
            require_stream(stream, true)?;
            let name = stream_name(stream);
            let source = PyReadStream::new(stream.clone().unbind());
            let file = py
                .detach(|| RecordFile::from_seekable(&name, source))
                .map_err(PyTfrecError::from)?;
            files.push(file);
        }
        Ok(RecordFiles {
            inner: Files::new(files),
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Record `i` (negative from the end) as `bytes`; `IndexError` past the end.
    fn get<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyBytes>> {
        let at = self.position(i)?;
        SCRATCH.with_borrow_mut(|(scratch, _)| {
            let read = py.detach(|| self.inner.read_record(at, scratch));
            let data = read.map_err(PyTfrecError::from)?;
            let bytes = PyBytes::new(py, scratch.get(data).unwrap_or_default());
            if scratch.len() > KEEP_SCRATCH {
                *scratch = Vec::new();
            }
            Ok(bytes)
        })
    }

    /// The records of `indices` (each negative from the end, or not) as a list of `bytes`.
    fn get_many<'py>(&self, py: Python<'py>, indices: Vec<isize>) -> PyResult<Bound<'py, PyList>> {
        let at = indices
            .iter()
            .map(|&i| self.position(i))
            .collect::<PyResult<Vec<_>>>()?;
        let list = PyList::empty(py);
        SCRATCH.with_borrow_mut(|(scratch, spans)| {
            for chunk in self.chunks(&at) {
                let read = py.detach(|| self.inner.read_many(chunk, scratch, spans));
                read.map_err(PyTfrecError::from)?;
                for span in spans.iter() {
                    list.append(PyBytes::new(py, scratch.get(span.clone()).unwrap_or_default()))?;
                }
            }
            if scratch.len() > KEEP_SCRATCH {
                *scratch = Vec::new();
            }
            Ok(list)
        })
    }

    /// The files, after expansion.
    #[getter]
    fn paths(&self) -> Vec<String> {
        self.inner
            .files()
            .iter()
            .map(|f| f.path().display().to_string())
            .collect()
    }

    /// Each file's index file, or `None` where the index lives only in memory.
    #[getter]
    fn index_paths(&self) -> Vec<Option<String>> {
        let files = self.inner.files();
        files
            .iter()
            .map(|f| f.index_file().map(|p| p.display().to_string()))
            .collect()
    }

    /// Records in each file.
    #[getter]
    fn lengths(&self) -> Vec<usize> {
        self.inner.files().iter().map(RecordFile::len).collect()
    }
}

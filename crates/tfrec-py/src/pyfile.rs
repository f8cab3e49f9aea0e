//! Python file objects as Rust streams: anything with `read()` (and `seek()` where random
//! access needs it) is read through [`PyReadStream`], anything with `write()` written through
//! [`PyWriteStream`]: `open(..., "rb")`, `io.BytesIO`, fsspec's and smart_open's files, a
//! socket's `makefile("rb")`.
//!
//! The library reads them with the GIL released, as it reads files; each call into Python takes
//! the GIL back for that call only.

use std::io::{self, Read, Seek, SeekFrom, Write};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// What a Python exception raised by a file object's method becomes inside the library: an
/// I/O error whose text is the exception's, so the library adds the stream name and offset.
fn io_error(py: Python<'_>, method: &str, e: PyErr) -> io::Error {
    io::Error::other(format!("the file object's {method}() raised {}", e.value(py)))
}

/// The name a file object is shown by in errors: its `name` attribute when it is a string (an
/// opened file's path, fsspec's object path), else `<TYPE object>`.
pub fn stream_name(obj: &Bound<'_, PyAny>) -> String {
    if let Ok(name) = obj.getattr("name").and_then(|n| n.extract::<String>()) {
        return name;
    }
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "file".to_owned());
    format!("<{type_name} object>")
}

/// Checks that `obj` can be read as a stream: it has `read` (and `seek`, for random access) and
/// is not a path (`os.PathLike`); else a `TypeError` saying what was given.
pub fn require_stream(obj: &Bound<'_, PyAny>, seekable: bool) -> PyResult<()> {
    let readable = obj.hasattr("read")? && !obj.hasattr("__fspath__")?;
    if readable && (!seekable || obj.hasattr("seek")?) {
        return Ok(());
    }
    let wanted = if seekable { "read() and seek()" } else { "read()" };
    Err(PyTypeError::new_err(format!(
        "expected a path, a URL or a file object with {wanted}, not {}",
        obj.get_type().name()?
    )))
}

/// A Python object with `read(n)` (and `seek(offset, whence)` for [`Seek`]).
pub struct PyReadStream {
    obj: Py<PyAny>,
}

impl PyReadStream {
    pub fn new(obj: Py<PyAny>) -> Self {
        PyReadStream { obj }
    }
}

impl Read for PyReadStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        Python::attach(|py| {
            let data = self
                .obj
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| io_error(py, "read", e))?;
            let data = data.bind(py);
            if data.is_none() {
                // A non-blocking stream with nothing ready; a blocking reader has nothing to
                // wait on, so this is taken as an error rather than the end.
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "the file object's read() returned None (a non-blocking stream with no data ready)",
                ));
            }
            if data.is_instance_of::<PyString>() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the file object is in text mode (read() returned str): open it in binary mode ('rb')",
                ));
            }
            if let Ok(bytes) = data.cast::<PyBytes>() {
                return copy_into(buf, bytes.as_bytes());
            }
            // A bytearray or memoryview (raw streams' readinto-style results): through bytes().
            let converted = py.get_type::<PyBytes>().call1((data,)).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the file object's read() returned {}, not bytes",
                        data.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                    ),
                )
            })?;
            let bytes = converted
                .cast::<PyBytes>()
                .map_err(|e| io_error(py, "read", e.into()))?;
            copy_into(buf, bytes.as_bytes())
        })
    }
}

/// Copies what `read(n)` returned; more than `n` bytes breaks the file protocol.
fn copy_into(buf: &mut [u8], data: &[u8]) -> io::Result<usize> {
    let asked = buf.len();
    let target = buf.get_mut(..data.len()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the file object's read({asked}) returned {} bytes", data.len()),
        )
    })?;
    target.copy_from_slice(data);
    Ok(data.len())
}

impl Seek for PyReadStream {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let (offset, whence): (i128, i32) = match pos {
            SeekFrom::Start(n) => (i128::from(n), 0),
            SeekFrom::Current(n) => (i128::from(n), 1),
            SeekFrom::End(n) => (i128::from(n), 2),
        };
        Python::attach(|py| {
            let at = self
                .obj
                .call_method1(py, "seek", (offset, whence))
                .map_err(|e| io_error(py, "seek", e))?;
            // `seek` returns the new position in io's classes; some file-likes return None,
            // where `tell` answers.
            let at = if at.is_none(py) {
                self.obj.call_method0(py, "tell").map_err(|e| io_error(py, "tell", e))?
            } else {
                at
            };
            at.extract::<u64>(py)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the file object's seek() gave no position"))
        })
    }
}

/// A Python object with `write(b)` (and optionally `flush()`).
pub struct PyWriteStream {
    obj: Py<PyAny>,
}

impl PyWriteStream {
    pub fn new(obj: Py<PyAny>) -> Self {
        PyWriteStream { obj }
    }
}

impl Write for PyWriteStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let written = self
                .obj
                .call_method1(py, "write", (PyBytes::new(py, buf),))
                .map_err(|e| io_error(py, "write", e))?;
            // io's raw streams may write less and say so; buffered ones and most file-likes
            // write everything and return the length, or None.
            match written.extract::<Option<usize>>(py) {
                Ok(Some(n)) if n <= buf.len() => Ok(n),
                _ => Ok(buf.len()),
            }
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Python::attach(|py| {
            let obj = self.obj.bind(py);
            if obj.hasattr("flush").unwrap_or(false) {
                obj.call_method0("flush").map_err(|e| io_error(py, "flush", e))?;
            }
            Ok(())
        })
    }
}

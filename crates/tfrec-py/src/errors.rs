//! The library's errors as the exception classes of `tfrec.errors`, with their structured
//! context (file, byte offset, record index; feature key, example index) as attributes.

use pyo3::exceptions::{PyIndexError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::IntoPyObjectExt;
use tfrec::parse::{ParseError, SpecError};
use tfrec::pipeline::PipelineError;
use tfrec::record::{IndexError, RecordError, RecordErrorKind, WriteError};
use tfrec::tensor_proto::TensorProtoError;

/// An instance of `tfrec.errors.<class>(message, **attrs)` as a `PyErr`.
fn raise(py: Python<'_>, class: &str, message: String, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    raise_from(py, "tfrec.errors", class, message, attrs)
}

/// An instance of the Python exception class `module.class(message, **attrs)` as a `PyErr`.
pub(crate) fn raise_from(
    py: Python<'_>,
    module: &str,
    class: &str,
    message: String,
    attrs: &[(&str, Py<PyAny>)],
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = py.import(module)?.getattr(class)?;
        let kwargs = PyDict::new(py);
        for (k, v) in attrs {
            kwargs.set_item(k, v)?;
        }
        Ok(PyErr::from_value(cls.call((message.clone(),), Some(&kwargs))?))
    };
    // If the errors module cannot be imported the package is broken; still say what failed.
    build().unwrap_or_else(|import_error| PyRuntimeError::new_err(format!("{message} ({import_error})")))
}

/// A Python value for an exception attribute (`None` if it cannot be converted).
pub(crate) fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Py<PyAny> {
    v.into_py_any(py).unwrap_or_else(|_| py.None())
}

/// A damaged or unreadable TFRecord file: `DataLossError` (or `NotFoundError` when a file
/// could not be opened), naming the file, byte offset and record index.
pub fn record_error(py: Python<'_>, e: &RecordError) -> PyErr {
    let class = match e.kind {
        RecordErrorKind::Open(_) => "NotFoundError",
        _ => "DataLossError",
    };
    let path = e.path().map(|p| p.display().to_string());
    raise(
        py,
        class,
        e.to_string(),
        &[
            ("path", obj(py, path)),
            ("offset", obj(py, e.location.offset)),
            ("record_index", obj(py, e.location.record_index)),
            // Where TensorFlow's message points: the data of a record whose data CRC fails.
            ("tf_offset", obj(py, e.tf_offset())),
            ("kind", obj(py, e.kind_name())),
        ],
    )
}

/// An index or random-access failure: damage is `DataLossError` as in [`record_error`]; a
/// record number past the end `IndexError`; a compressed file `InvalidArgumentError`; an index
/// that does not fit its file (or does not read as one) `DataLossError` naming the index.
pub fn index_error(py: Python<'_>, e: &IndexError) -> PyErr {
    match e {
        IndexError::Record(r) => record_error(py, r),
        IndexError::OutOfRange { .. } => PyIndexError::new_err(e.to_string()),
        IndexError::Compressed { path, .. } | IndexError::NeedsUncompressed { path, .. } => {
            invalid_argument(py, e.to_string(), &[("path", obj(py, path.display().to_string()))])
        }
        IndexError::Stale { index_file, .. } => {
            let index = index_file.as_ref().map(|p| p.display().to_string());
            raise(
                py,
                "DataLossError",
                e.to_string(),
                &[("path", obj(py, index)), ("kind", obj(py, "stale_index"))],
            )
        }
        IndexError::Parse { path, .. } => raise(
            py,
            "DataLossError",
            e.to_string(),
            &[
                ("path", obj(py, path.display().to_string())),
                ("kind", obj(py, "bad_index")),
            ],
        ),
        IndexError::Mismatch { .. } => raise(py, "DataLossError", e.to_string(), &[("kind", obj(py, "stale_index"))]),
        IndexError::Io { .. } => PyOSError::new_err(e.to_string()),
    }
}

pub fn write_error(py: Python<'_>, e: &WriteError) -> PyErr {
    raise(py, "WriteError", e.to_string(), &[])
}

/// A parse failure: `tfrec.errors.ParseError` with `key`, `example_index` and `row`.
pub fn parse_error(py: Python<'_>, e: &ParseError) -> PyErr {
    raise(
        py,
        "ParseError",
        e.to_string(),
        &[
            ("key", obj(py, e.key.clone())),
            ("example_index", obj(py, e.example)),
            ("row", obj(py, e.row)),
        ],
    )
}

/// A bad spec is a `ValueError`, as in TensorFlow's Python layer.
pub fn spec_error(e: &SpecError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `tfrec.errors.InvalidArgumentError(message, **attrs)`.
pub(crate) fn invalid_argument(py: Python<'_>, message: String, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    raise(py, "InvalidArgumentError", message, attrs)
}

pub fn tensor_error(py: Python<'_>, e: &TensorProtoError) -> PyErr {
    raise(py, "InvalidArgumentError", e.to_string(), &[])
}

pub fn pipeline_error(py: Python<'_>, e: &PipelineError) -> PyErr {
    match e {
        PipelineError::Record(r) => record_error(py, r),
        PipelineError::Parse {
            batch,
            error,
            path,
            origin,
        } => {
            let err = parse_error(py, error);
            let _ = err.value(py).setattr("batch_index", batch);
            // Where the failing record was read, when known.
            if let (Some(path), Some(origin)) = (path, origin) {
                let _ = err.value(py).setattr("path", path.display().to_string());
                let _ = err.value(py).setattr("record_offset", origin.offset);
                let _ = err.value(py).setattr("record_index", origin.index);
            }
            err
        }
        other => {
            // The whole chain: a map function's own error is the source of the top one.
            let mut message = other.to_string();
            let mut source = std::error::Error::source(other);
            while let Some(e) = source {
                message.push_str(&format!(": {e}"));
                source = e.source();
            }
            raise(py, "TfrecError", message, &[])
        }
    }
}

/// A malformed message (`Example.FromString` on bytes that are not one).
pub fn decode_error(py: Python<'_>, what: &str, e: &dyn std::fmt::Display) -> PyErr {
    raise(py, "DecodeError", format!("not a valid {what}: {e}"), &[])
}

//! The library's errors as the exception classes of `tfrec.errors` (and of `tfrec.state_saver`
//! for the saver's own), with their structured context (file, byte offset, record index;
//! feature key, example index) as attributes.
//!
//! One conversion: a binding function turns any `tfrec` error into a [`PyTfrecError`] (with
//! `?` or `.map_err(PyTfrecError::from)`), and `From<PyTfrecError> for PyErr` picks the class by
//! the error's layer and [`tfrec::ErrorCategory`].

use pyo3::exceptions::{PyIndexError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::{IntoPyObjectExt, PyTypeInfo};
use tfrec::columnar::{BatchError, ColumnarError};
use tfrec::parse::ParseError as LibParseError;
use tfrec::pipeline::PipelineError;
use tfrec::record::{IndexError, RecordError, RecordErrorKind};
use tfrec::state_saver::StateSaverError as LibStateSaverError;
use tfrec::ErrorCategory;

pyo3::import_exception!(tfrec.errors, TfrecError);
pyo3::import_exception!(tfrec.errors, DataLossError);
pyo3::import_exception!(tfrec.errors, NotFoundError);
pyo3::import_exception!(tfrec.errors, InvalidArgumentError);
pyo3::import_exception!(tfrec.errors, ParseError);
pyo3::import_exception!(tfrec.errors, DecodeError);
pyo3::import_exception!(tfrec.errors, WriteError);
pyo3::import_exception!(tfrec.state_saver, StateSaverError);
pyo3::import_exception!(tfrec.state_saver, OutOfRangeError);

/// A `tfrec` error on its way to Python. For a message that did not decode, the message it
/// was read as (`Example`, `SequenceExample`), which the exception's text names.
#[derive(Debug)]
pub struct PyTfrecError {
    error: tfrec::Error,
    message: Option<String>,
}

impl PyTfrecError {
    /// A decode, text or JSON error of bytes (or text) read as a `message`.
    pub fn decoding(message: &str, error: impl Into<tfrec::Error>) -> Self {
        PyTfrecError {
            error: error.into(),
            message: Some(message.to_owned()),
        }
    }
}

macro_rules! library_errors {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for PyTfrecError {
            fn from(e: $t) -> Self {
                PyTfrecError { error: e.into(), message: None }
            }
        }
    )*};
}

library_errors!(
    tfrec::Error,
    RecordError,
    IndexError,
    tfrec::record::WriteError,
    tfrec::record::output::OutputError,
    tfrec::record::UnknownCompression,
    LibParseError,
    tfrec::parse::SpecError,
    PipelineError,
    tfrec::pipeline::DatasetError,
    LibStateSaverError,
    tfrec::tensor_proto::TensorProtoError,
    ColumnarError,
    BatchError,
    tfrec::example::DecodeError,
);

impl From<PyTfrecError> for PyErr {
    fn from(e: PyTfrecError) -> PyErr {
        Python::attach(|py| to_py(py, e))
    }
}

/// An instance of the exception class `T(message, **attrs)`.
fn raise<T: PyTypeInfo>(py: Python<'_>, message: String, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let kwargs = PyDict::new(py);
        for (k, v) in attrs {
            kwargs.set_item(k, v)?;
        }
        Ok(PyErr::from_value(
            T::type_object(py).call((message.clone(),), Some(&kwargs))?,
        ))
    };
    build().unwrap_or_else(|e| e)
}

/// A Python value for an exception attribute (`None` if it cannot be converted).
pub(crate) fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Py<PyAny> {
    v.into_py_any(py).unwrap_or_else(|_| py.None())
}

fn to_py(py: Python<'_>, e: PyTfrecError) -> PyErr {
    use tfrec::Error as E;
    let category = e.error.category();
    match e.error {
        E::Record(r) | E::Stats(tfrec::stats::StatsError::Record(r)) => record_error(py, &r),
        E::Index(i) => index_error(py, i),
        E::Write(w) => raise::<WriteError>(py, w.to_string(), &[]),
        E::Parse(p) => parse_error(py, &p),
        // A bad spec (or a refused stage, a compression name) is a `ValueError`, as in
        // TensorFlow's Python layer.
        E::Spec(_) | E::Dataset(_) | E::UnknownCompression(_) => PyValueError::new_err(e.error.to_string()),
        E::TensorProto(t) => raise::<InvalidArgumentError>(py, t.to_string(), &[]),
        E::Pipeline(p) => pipeline_error(py, p),
        E::StateSaver(s) => saver_error(py, s),
        // A spec refused, or records with no columns (inferring a spec): `ValueError`.
        E::Columnar(c) => PyValueError::new_err(c.to_string()),
        E::Batch(b) => batch_error(py, b),
        E::Decode(_) | E::Text(_) | E::Json(_) => {
            let message = e.message.as_deref().unwrap_or("message");
            raise::<DecodeError>(py, format!("not a valid {message}: {}", e.error), &[])
        }
        other => match category {
            ErrorCategory::Data => raise::<InvalidArgumentError>(py, other.to_string(), &[]),
            ErrorCategory::Io => PyOSError::new_err(other.to_string()),
            _ => PyValueError::new_err(other.to_string()),
        },
    }
}

/// A damaged or unreadable TFRecord file: `DataLossError` (or `NotFoundError` when a file
/// could not be opened), naming the file, byte offset and record index.
fn record_error(py: Python<'_>, e: &RecordError) -> PyErr {
    let path = e.path().map(|p| p.display().to_string());
    let attrs = [
        ("path", obj(py, path)),
        ("offset", obj(py, e.location.offset)),
        ("record_index", obj(py, e.location.record_index)),
        // Where TensorFlow's message points: the data of a record whose data CRC fails.
        ("tf_offset", obj(py, e.tf_offset())),
        ("kind", obj(py, e.kind_name())),
    ];
    match e.kind {
        RecordErrorKind::Open(_) => raise::<NotFoundError>(py, e.to_string(), &attrs),
        _ => raise::<DataLossError>(py, e.to_string(), &attrs),
    }
}

/// An index or random-access failure: damage is `DataLossError` as in [`record_error`]; a
/// record number past the end `IndexError`; a compressed file `InvalidArgumentError`; an index
/// that does not fit its file (or does not read as one) `DataLossError` naming the index.
fn index_error(py: Python<'_>, e: IndexError) -> PyErr {
    let message = e.to_string();
    match e {
        IndexError::Record(r) => record_error(py, &r),
        IndexError::OutOfRange { .. } => PyIndexError::new_err(message),
        IndexError::Compressed { path, .. } | IndexError::NeedsUncompressed { path, .. } => {
            raise::<InvalidArgumentError>(py, message, &[("path", obj(py, path.display().to_string()))])
        }
        IndexError::Stale { index_file, .. } => {
            let index = index_file.as_ref().map(|p| p.display().to_string());
            raise::<DataLossError>(
                py,
                message,
                &[("path", obj(py, index)), ("kind", obj(py, "stale_index"))],
            )
        }
        IndexError::StaleSeekIndex { index_file, .. } => raise::<DataLossError>(
            py,
            message,
            &[
                ("path", obj(py, index_file.display().to_string())),
                ("kind", obj(py, "stale_index")),
            ],
        ),
        IndexError::BadSeekIndex { index_file: path, .. } | IndexError::Parse { path, .. } => raise::<DataLossError>(
            py,
            message,
            &[
                ("path", obj(py, path.display().to_string())),
                ("kind", obj(py, "bad_index")),
            ],
        ),
        IndexError::Mismatch { .. } => raise::<DataLossError>(py, message, &[("kind", obj(py, "stale_index"))]),
        IndexError::Io { .. } => PyOSError::new_err(message),
    }
}

/// A parse failure: `tfrec.errors.ParseError` with `key`, `example_index` and `row`.
fn parse_error(py: Python<'_>, e: &LibParseError) -> PyErr {
    raise::<ParseError>(
        py,
        e.to_string(),
        &[
            ("key", obj(py, e.key.clone())),
            ("example_index", obj(py, e.example)),
            ("row", obj(py, e.row)),
        ],
    )
}

fn pipeline_error(py: Python<'_>, e: PipelineError) -> PyErr {
    match e {
        PipelineError::Record(r) => record_error(py, &r),
        PipelineError::Parse {
            batch,
            error,
            path,
            origin,
        } => {
            let err = parse_error(py, &error);
            let _ = err.value(py).setattr("batch_index", batch);
            // Where the failing record was read, when known.
            if let (Some(path), Some(origin)) = (path, origin) {
                let _ = err.value(py).setattr("path", path.display().to_string());
                let _ = err.value(py).setattr("record_offset", origin.offset);
                let _ = err.value(py).setattr("record_index", origin.index);
            }
            err
        }
        // Columns made on the worker threads (`Dataset.to_arrow`): as read from files.
        PipelineError::Map { error, .. } if error.is::<BatchError>() => match error.downcast::<BatchError>() {
            Ok(e) => batch_error(py, *e),
            Err(other) => PyValueError::new_err(other.to_string()),
        },
        other => {
            // The whole chain: a map function's own error is the source of the top one.
            let mut message = other.to_string();
            let mut source = std::error::Error::source(&other);
            while let Some(e) = source {
                message.push_str(&format!(": {e}"));
                source = e.source();
            }
            raise::<TfrecError>(py, message, &[])
        }
    }
}

/// Records read as Arrow batches: damage and missing files as [`record_error`], records that
/// do not fit the spec `ParseError` with key and example, values with no column form
/// `InvalidArgumentError` with column, path and offset.
fn batch_error(py: Python<'_>, e: BatchError) -> PyErr {
    match e {
        // Damage met while indexing a byte range is damage like any other.
        BatchError::Record(r) | BatchError::Index(IndexError::Record(r)) => record_error(py, &r),
        BatchError::Columns { at, error, .. } => {
            let message = format!("{at}: {error}");
            let (path, offset) = match at.rsplit_once('@') {
                Some((path, offset)) => (Some(path.to_owned()), offset.parse::<u64>().ok()),
                None => (None, None),
            };
            match *error {
                ColumnarError::Spec(s) => PyValueError::new_err(s.to_string()),
                ColumnarError::Parse(p) => {
                    let err = parse_error(py, &p);
                    let value = err.value(py);
                    let _ = value.setattr("path", path);
                    let _ = value.setattr("record_offset", offset);
                    let _ = value.setattr("message", &message);
                    let _ = value.setattr("args", (message,));
                    err
                }
                other => raise::<InvalidArgumentError>(
                    py,
                    message,
                    &[
                        ("column", obj(py, other.column().map(str::to_owned))),
                        ("path", obj(py, path)),
                        ("record_offset", obj(py, offset)),
                    ],
                ),
            }
        }
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A state saver error: bad options are `ValueError`s (as in TF), file and parse failures the
/// package's usual classes, the rest `StateSaverError` (or its `OutOfRangeError` at the end of
/// the input) with the key, state and keys as attributes.
fn saver_error(py: Python<'_>, e: LibStateSaverError) -> PyErr {
    use LibStateSaverError::*;
    if e.is_option_error() {
        return PyValueError::new_err(e.to_string());
    }
    // An array of a dtype TensorFlow has no counterpart for, as NumPy refuses one.
    if let DType(_) = e {
        return PyTypeError::new_err(e.to_string());
    }
    let e = match e {
        Pipeline(p) => return pipeline_error(py, p),
        Parse { index, error } => {
            let err = parse_error(py, &error);
            let _ = err.value(py).setattr("record_index", index);
            return err;
        }
        other => other,
    };
    let mut attrs = vec![("kind", obj(py, e.kind_name()))];
    match &e {
        NoSequences { key }
        | NoStates { key }
        | LengthTooLong { key, .. }
        | LengthOverflow { key, .. }
        | KeyInFlight { key } => attrs.push(("key", obj(py, key.clone()))),
        BadName { key, name }
        | NotASequence { key, name }
        | EmptySequence { key, name }
        | NotMultiple { key, name, .. }
        | Mismatch { key, name, .. } => {
            attrs.push(("key", obj(py, key.clone())));
            attrs.push(("name", obj(py, name.clone())));
        }
        UnequalLengths { key, .. } => attrs.push(("key", obj(py, key.clone()))),
        Input { index, .. } | MissingKey { index, .. } => attrs.push(("example_index", obj(py, *index))),
        Sparse { index, key, .. } => {
            attrs.push(("example_index", obj(py, *index)));
            attrs.push(("key", obj(py, key.clone())));
        }
        SparseRank { name, .. } => attrs.push(("name", obj(py, name.clone()))),
        UnsavedStates { states, keys } => {
            attrs.push(("states", obj(py, states.clone())));
            attrs.push(("keys", obj(py, keys.clone())));
        }
        SavedTwice { state, keys }
        | StaleBatch { state, keys }
        | StateShape { state, keys, .. }
        | StateDType { state, keys, .. } => {
            attrs.push(("state", obj(py, state.clone())));
            attrs.push(("keys", obj(py, keys.clone())));
        }
        UnknownState { state } => attrs.push(("state", obj(py, state.clone()))),
        _ => {}
    }
    match e {
        InsufficientElements { .. } => raise::<OutOfRangeError>(py, e.to_string(), &attrs),
        _ => raise::<StateSaverError>(py, e.to_string(), &attrs),
    }
}

/// The state saver's error for a state of a dtype the library cannot hold, worded as the
/// library words a wrong one (not a `tfrec` error: the value never reached the library).
pub(crate) fn state_dtype_error(py: Python<'_>, message: String, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    raise::<StateSaverError>(py, message, attrs)
}

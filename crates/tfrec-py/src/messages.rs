//! `tf.train.Example` / `SequenceExample` from Python: encoding and decoding between the
//! Python message classes' plain form and the wire, and the library's renderings (protobuf text
//! format, protobuf JSON, the friendly JSON form).
//!
//! The plain form of a `Features` map is a list of `(name, kind, values)` with `kind` one of
//! `"bytes_list"`, `"float_list"`, `"int64_list"` or `None` (a feature with no kind set); a
//! whole map is `None` when the message field is absent.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tfrec::example::{
    Example, Feature, FeatureList, FeatureLists, Features, Kind, Message, RenderFormat, SequenceExample, TypeHints,
};

use crate::convert::type_name;
use crate::errors::PyTfrecError;

type PlainFeatures<'py> = Vec<(String, Option<String>, Bound<'py, PyAny>)>;

fn feature_from_py(key: &str, kind: Option<&str>, values: &Bound<'_, PyAny>) -> PyResult<Feature> {
    let Some(kind) = kind else {
        return Ok(Feature::None);
    };
    let items = values.try_iter()?;
    let bad = |item: &Bound<'_, PyAny>, want: &str| {
        PyTypeError::new_err(format!(
            "feature {key:?}: {} has type {}, but expected one of: {want}",
            item.repr().map(|r| r.to_string()).unwrap_or_default(),
            type_name(item)
        ))
    };
    Ok(match Kind::from_list_name(kind) {
        Some(Kind::Int64) => {
            let mut out = Vec::new();
            for item in items {
                let item = item?;
                if item.is_instance_of::<pyo3::types::PyFloat>() {
                    return Err(bad(&item, "int"));
                }
                match item.extract::<i64>() {
                    Ok(v) => out.push(v),
                    Err(e) if e.is_instance_of::<PyOverflowError>(item.py()) => {
                        return Err(PyValueError::new_err(format!(
                            "feature {key:?}: {} does not fit in an int64",
                            item.repr().map(|r| r.to_string()).unwrap_or_default()
                        )))
                    }
                    Err(_) => return Err(bad(&item, "int")),
                }
            }
            Feature::Int64(out)
        }
        Some(Kind::Float) => {
            let mut out = Vec::new();
            for item in items {
                let item = item?;
                if item.is_instance_of::<PyBytes>() || item.is_instance_of::<pyo3::types::PyString>() {
                    return Err(bad(&item, "int, float"));
                }
                // f64 to the nearest f32, as protobuf's float field does.
                out.push(item.extract::<f64>().map_err(|_| bad(&item, "int, float"))? as f32);
            }
            Feature::Float(out)
        }
        Some(Kind::Bytes) => {
            let mut out = Vec::new();
            for item in items {
                let item = item?;
                let b = item.cast::<PyBytes>().map_err(|_| bad(&item, "bytes"))?;
                out.push(b.as_bytes().to_vec());
            }
            Feature::Bytes(out)
        }
        None => return Err(PyValueError::new_err(format!("feature {key:?}: unknown kind {kind:?}"))),
    })
}

fn features_from_py(plain: Option<PlainFeatures<'_>>) -> PyResult<Option<Features>> {
    let Some(plain) = plain else { return Ok(None) };
    let mut features = Features::default();
    for (key, kind, values) in plain {
        let feature = feature_from_py(&key, kind.as_deref(), &values)?;
        features.insert(key, feature);
    }
    Ok(Some(features))
}

fn feature_to_py<'py>(py: Python<'py>, f: &Feature) -> PyResult<(Option<&'static str>, Bound<'py, PyList>)> {
    Ok(match f {
        Feature::None => (None, PyList::empty(py)),
        Feature::Bytes(v) => (
            Some(Kind::Bytes.list_name()),
            PyList::new(py, v.iter().map(|b| PyBytes::new(py, b)))?,
        ),
        Feature::Float(v) => (
            Some(Kind::Float.list_name()),
            PyList::new(py, v.iter().map(|&x| f64::from(x)))?,
        ),
        Feature::Int64(v) => (Some(Kind::Int64.list_name()), PyList::new(py, v)?),
    })
}

fn features_to_py<'py>(py: Python<'py>, f: Option<&Features>) -> PyResult<Bound<'py, PyAny>> {
    let Some(f) = f else {
        return Ok(py.None().into_bound(py));
    };
    let out = PyList::empty(py);
    for (key, feature) in f.iter() {
        let (kind, values) = feature_to_py(py, feature)?;
        out.append(PyTuple::new(
            py,
            [
                key.into_pyobject(py)?.into_any(),
                kind.into_pyobject(py)?.into_any(),
                values.into_any(),
            ],
        )?)?;
    }
    Ok(out.into_any())
}

/// `Feature` bytes from its kind (`"int64_list"`…, or `None` for no kind) and values.
#[pyfunction]
#[pyo3(signature = (kind, values))]
pub fn encode_feature<'py>(
    py: Python<'py>,
    kind: Option<&str>,
    values: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let feature = feature_from_py("", kind, values)?;
    Ok(PyBytes::new(py, &feature.encode()))
}

/// The kind (`None` when unset) and values of serialized `Feature` bytes.
#[pyfunction]
pub fn decode_feature<'py>(py: Python<'py>, serialized: &[u8]) -> PyResult<(Option<&'static str>, Bound<'py, PyList>)> {
    let feature = Feature::decode(serialized).map_err(|e| PyTfrecError::decoding("Feature", e))?;
    feature_to_py(py, &feature)
}

/// `Example` bytes from the plain form of its features (`None`: no `features` field).
#[pyfunction]
#[pyo3(signature = (features))]
pub fn encode_example<'py>(py: Python<'py>, features: Option<PlainFeatures<'py>>) -> PyResult<Bound<'py, PyBytes>> {
    let example = Example {
        features: features_from_py(features)?,
    };
    Ok(PyBytes::new(py, &example.encode()))
}

/// The plain form of an `Example`'s features (`None` when absent).
#[pyfunction]
pub fn decode_example<'py>(py: Python<'py>, serialized: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let example = Example::decode(serialized).map_err(|e| PyTfrecError::decoding("Example", e))?;
    features_to_py(py, example.features.as_ref())
}

type PlainLists<'py> = Vec<(String, Vec<(Option<String>, Bound<'py, PyAny>)>)>;

/// `SequenceExample` bytes from its context and feature lists (`(name, [(kind, values)...])`).
#[pyfunction]
#[pyo3(signature = (context, feature_lists))]
pub fn encode_sequence_example<'py>(
    py: Python<'py>,
    context: Option<PlainFeatures<'py>>,
    feature_lists: Option<PlainLists<'py>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let lists = match feature_lists {
        None => None,
        Some(plain) => {
            let mut lists = FeatureLists::default();
            for (key, steps) in plain {
                let mut list = FeatureList::default();
                for (kind, values) in steps {
                    list.feature.push(feature_from_py(&key, kind.as_deref(), &values)?);
                }
                lists.feature_list.insert(key, list);
            }
            Some(lists)
        }
    };
    let seq = SequenceExample {
        context: features_from_py(context)?,
        feature_lists: lists,
    };
    Ok(PyBytes::new(py, &seq.encode()))
}

/// `(context, feature_lists)` of a `SequenceExample` in the plain form (`None` when absent).
#[pyfunction]
pub fn decode_sequence_example<'py>(py: Python<'py>, serialized: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
    let seq = SequenceExample::decode(serialized).map_err(|e| PyTfrecError::decoding("SequenceExample", e))?;
    let context = features_to_py(py, seq.context.as_ref())?;
    let lists = match &seq.feature_lists {
        None => py.None().into_bound(py),
        Some(lists) => {
            let out = PyList::empty(py);
            for (key, list) in lists.iter() {
                let steps = PyList::empty(py);
                for f in &list.feature {
                    let (kind, values) = feature_to_py(py, f)?;
                    steps.append((kind, values))?;
                }
                out.append((key, steps))?;
            }
            out.into_any()
        }
    };
    PyTuple::new(py, [context, lists])
}

/// Runs the generic `$run::<M>(args…)` for the message type Python names (`"Example"` or
/// `"SequenceExample"`): the one place a name becomes a type.
macro_rules! for_message {
    ($message:expr, $run:ident($($arg:expr),*)) => {{
        let message: &str = $message;
        if message == Example::NAME {
            $run::<Example>($($arg),*)
        } else if message == SequenceExample::NAME {
            $run::<SequenceExample>($($arg),*)
        } else {
            Err(PyValueError::new_err(format!("unknown message type {message:?}")))
        }
    }};
}

fn render<M: Message>(serialized: &[u8], format: RenderFormat) -> PyResult<String> {
    let message = M::decode(serialized).map_err(|e| PyTfrecError::decoding(M::NAME, e))?;
    Ok(message.render_to_string(format))
}

fn from_text<M: Message>(text: &str) -> PyResult<Vec<u8>> {
    let message = M::from_text(text).map_err(|e| PyTfrecError::decoding(M::NAME, e))?;
    Ok(message.encode())
}

fn from_friendly_json<M: Message>(text: &str) -> PyResult<Vec<u8>> {
    M::encode_friendly_json(text, &TypeHints::new()).map_err(|e| PyTfrecError::decoding(M::NAME, e).into())
}

/// Protobuf text format, exactly as `print(tf.train.Example)` shows it.
#[pyfunction]
pub fn message_to_text(serialized: &[u8], message: &str) -> PyResult<String> {
    for_message!(message, render(serialized, RenderFormat::Text))
}

/// Protobuf's JSON mapping, as `json_format.MessageToJson` prints it.
#[pyfunction]
pub fn message_to_json(serialized: &[u8], message: &str) -> PyResult<String> {
    for_message!(message, render(serialized, RenderFormat::Json))
}

/// The friendly one-line JSON form (`{"age": [19], "name": ["goat"]}`).
#[pyfunction]
pub fn message_to_friendly_json(serialized: &[u8], message: &str) -> PyResult<String> {
    for_message!(message, render(serialized, RenderFormat::FriendlyJson))
}

/// Bytes of a message given in protobuf text format.
#[pyfunction]
pub fn message_from_text<'py>(py: Python<'py>, text: &str, message: &str) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = for_message!(message, from_text(text))?;
    Ok(PyBytes::new(py, &bytes))
}

/// Bytes of a message given in the friendly JSON form.
#[pyfunction]
pub fn message_from_friendly_json<'py>(py: Python<'py>, text: &str, message: &str) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = for_message!(message, from_friendly_json(text))?;
    Ok(PyBytes::new(py, &bytes))
}

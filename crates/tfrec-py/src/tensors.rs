//! `tfrec.io.serialize_tensor` / `parse_tensor`: NumPy arrays to and from `TensorProto` bytes
//! through the library's `tensor_proto` module.
//!
//! Arrays cross as raw little-endian buffers plus a dtype name and shape (the Python layer
//! makes the array contiguous and little-endian, and builds the result with `frombuffer`), so
//! no per-element Python object is made for numeric tensors. `bfloat16`, which NumPy lacks,
//! crosses as its 16-bit patterns.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tfrec::tensor_proto::{self, TensorDType, TensorData, TensorValue};

use crate::errors::PyTfrecError;

fn dtype(name: &str) -> PyResult<TensorDType> {
    TensorDType::from_name(name).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "unsupported dtype {name:?} for a serialized tensor (expected one of: {})",
            TensorDType::ALL.map(|d| d.name()).join(", ")
        ))
    })
}

/// `TensorProto` bytes for a tensor given as `dtype`, `shape` and either a little-endian
/// buffer (numeric dtypes) or a list of `bytes` (strings).
#[pyfunction]
pub fn serialize_tensor<'py>(
    py: Python<'py>,
    dtype_name: &str,
    shape: Vec<usize>,
    values: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let d = dtype(dtype_name)?;
    let data = if d == TensorDType::String {
        let mut strings = Vec::new();
        for (i, item) in values.try_iter()?.enumerate() {
            let item = item?;
            let b = item
                .cast::<PyBytes>()
                .map_err(|_| PyTypeError::new_err(format!("element {i} of a string tensor is not bytes")))?;
            strings.push(b.as_bytes().to_vec());
        }
        TensorData::String(strings)
    } else {
        let raw = values
            .cast::<PyBytes>()
            .map_err(|_| PyTypeError::new_err("numeric values must come as a bytes buffer"))?;
        TensorData::from_le_bytes(d, raw.as_bytes()).map_err(PyTfrecError::from)?
    };
    let tensor = TensorValue::new(shape, data).map_err(PyTfrecError::from)?;
    let bytes = tensor_proto::serialize_tensor(&tensor).map_err(PyTfrecError::from)?;
    Ok(PyBytes::new(py, &bytes))
}

/// `(dtype_name, shape, values)` of serialized `TensorProto` bytes read as `out_type`:
/// values as a little-endian `bytes` buffer, or a list of `bytes` for strings.
#[pyfunction]
pub fn parse_tensor<'py>(py: Python<'py>, serialized: &[u8], out_type: &str) -> PyResult<Bound<'py, PyTuple>> {
    let d = dtype(out_type)?;
    let tensor = py
        .detach(|| tensor_proto::parse_tensor(serialized, d))
        .map_err(PyTfrecError::from)?;
    let values = match &tensor.data {
        TensorData::String(strings) => PyList::new(py, strings.iter().map(|s| PyBytes::new(py, s)))?.into_any(),
        other => PyBytes::new(py, &other.to_le_bytes()).into_any(),
    };
    PyTuple::new(
        py,
        [
            tensor.dtype().name().into_pyobject(py)?.into_any(),
            PyTuple::new(py, &tensor.shape)?.into_any(),
            values,
        ],
    )
}

/// The dtype names `serialize_tensor` and `parse_tensor` accept.
#[pyfunction]
pub fn tensor_dtype_names() -> Vec<&'static str> {
    TensorDType::ALL.iter().map(|d| d.name()).collect()
}

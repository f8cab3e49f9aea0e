//! `tfrec.io.serialize_tensor` / `parse_tensor`: NumPy arrays to and from `TensorProto` bytes
//! through the library's `tensor_proto` module.
//!
//! Arrays cross as raw little-endian buffers plus a dtype name and shape (the Python layer
//! makes the array contiguous and little-endian, and builds the result with `frombuffer`), so
//! no per-element Python object is made for numeric tensors. `bfloat16`, which NumPy lacks,
//! crosses as its 16-bit patterns.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tfrec::tensor_proto::{self, TensorDType, TensorData, TensorValue};

use crate::errors::tensor_error;

fn dtype(name: &str) -> PyResult<TensorDType> {
    TensorDType::from_name(name).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "unsupported dtype {name:?} for a serialized tensor (expected one of: {})",
            TensorDType::ALL.map(|d| d.name()).join(", ")
        ))
    })
}

fn le<const W: usize, T>(raw: &[u8], f: fn([u8; W]) -> T) -> Vec<T> {
    raw.chunks_exact(W)
        .map(|c| {
            let mut a = [0u8; W];
            a.copy_from_slice(c);
            f(a)
        })
        .collect()
}

/// Typed values from a little-endian buffer of `dtype`.
fn data_from_raw(dtype: TensorDType, raw: &[u8]) -> TensorData {
    match dtype {
        TensorDType::Float16 => TensorData::Float16(le(raw, u16::from_le_bytes)),
        TensorDType::BFloat16 => TensorData::BFloat16(le(raw, u16::from_le_bytes)),
        TensorDType::Float32 => TensorData::Float32(le(raw, f32::from_le_bytes)),
        TensorDType::Float64 => TensorData::Float64(le(raw, f64::from_le_bytes)),
        TensorDType::Int8 => TensorData::Int8(raw.iter().map(|&b| b as i8).collect()),
        TensorDType::Int16 => TensorData::Int16(le(raw, i16::from_le_bytes)),
        TensorDType::Int32 => TensorData::Int32(le(raw, i32::from_le_bytes)),
        TensorDType::Int64 => TensorData::Int64(le(raw, i64::from_le_bytes)),
        TensorDType::UInt8 => TensorData::UInt8(raw.to_vec()),
        TensorDType::UInt16 => TensorData::UInt16(le(raw, u16::from_le_bytes)),
        TensorDType::UInt32 => TensorData::UInt32(le(raw, u32::from_le_bytes)),
        TensorDType::UInt64 => TensorData::UInt64(le(raw, u64::from_le_bytes)),
        TensorDType::Bool => TensorData::Bool(raw.iter().map(|&b| b != 0).collect()),
        TensorDType::Complex64 => TensorData::Complex64(le(raw, |c: [u8; 8]| {
            [
                f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                f32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            ]
        })),
        TensorDType::Complex128 => TensorData::Complex128(le(raw, |c: [u8; 16]| {
            let mut re = [0u8; 8];
            let mut im = [0u8; 8];
            re.copy_from_slice(&c[..8]);
            im.copy_from_slice(&c[8..]);
            [f64::from_le_bytes(re), f64::from_le_bytes(im)]
        })),
        TensorDType::String => TensorData::String(Vec::new()),
    }
}

/// The little-endian buffer of numeric values.
fn raw_from_data(data: &TensorData) -> Vec<u8> {
    let mut out = Vec::new();
    match data {
        TensorData::Float16(v) | TensorData::BFloat16(v) | TensorData::UInt16(v) => {
            v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
        }
        TensorData::Float32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::Float64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::Int8(v) => out.extend(v.iter().map(|&x| x as u8)),
        TensorData::Int16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::Int32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::Int64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::UInt8(v) => out.extend_from_slice(v),
        TensorData::UInt32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::UInt64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::Bool(v) => out.extend(v.iter().map(|&b| u8::from(b))),
        TensorData::Complex64(v) => v.iter().flatten().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::Complex128(v) => v.iter().flatten().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TensorData::String(_) => {}
    }
    out
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
        let width = d.width().unwrap_or(1);
        if raw.as_bytes().len() % width != 0 {
            return Err(PyValueError::new_err("the buffer is not a whole number of elements"));
        }
        data_from_raw(d, raw.as_bytes())
    };
    let tensor = TensorValue::new(shape, data).map_err(|e| tensor_error(py, &e))?;
    let bytes = tensor_proto::serialize_tensor(&tensor).map_err(|e| tensor_error(py, &e))?;
    Ok(PyBytes::new(py, &bytes))
}

/// `(dtype_name, shape, values)` of serialized `TensorProto` bytes read as `out_type`:
/// values as a little-endian `bytes` buffer, or a list of `bytes` for strings.
#[pyfunction]
pub fn parse_tensor<'py>(py: Python<'py>, serialized: &[u8], out_type: &str) -> PyResult<Bound<'py, PyTuple>> {
    let d = dtype(out_type)?;
    let tensor = py
        .detach(|| tensor_proto::parse_tensor(serialized, d))
        .map_err(|e| tensor_error(py, &e))?;
    let values = match &tensor.data {
        TensorData::String(strings) => PyList::new(py, strings.iter().map(|s| PyBytes::new(py, s)))?.into_any(),
        other => PyBytes::new(py, &raw_from_data(other)).into_any(),
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

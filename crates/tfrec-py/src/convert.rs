//! Conversions between Python values and the library's: serialized inputs in, tensors out.
//!
//! Numeric tensors move into NumPy without a copy: `ArrayD::into_pyarray` hands the array's
//! buffer to NumPy. String tensors take the form a call's `strings=` asks for
//! (`string_tensors.rs`): by default object arrays of `bytes`, as TensorFlow's `.numpy()` gives.

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tfrec::parse::{DenseTensor, SplitsDType, Tensor, TensorMap};

use crate::string_tensors::{string_tensor, StringForm};

/// The serialized records of a `parse_*` call: one `bytes`, or any iterable of `bytes` (a
/// list, a tuple, a NumPy object array). Anything else is a `TypeError` naming the element.
/// The returned objects keep the buffers alive while the GIL is released.
pub fn serialized_batch<'py>(serialized: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    if let Ok(b) = serialized.cast::<PyBytes>() {
        return Ok(vec![b.clone()]);
    }
    if serialized.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(
            "serialized must be bytes or a list of bytes, not str (encode it first)",
        ));
    }
    let iter = serialized.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "serialized must be bytes or a list of bytes, not {}",
            type_name(serialized)
        ))
    })?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item?;
        match item.cast::<PyBytes>() {
            Ok(b) => out.push(b.clone()),
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "serialized[{i}] is {}, expected bytes (a serialized Example)",
                    type_name(&item)
                )))
            }
        }
    }
    Ok(out)
}

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// A dense tensor as a NumPy array (int64 / float32 without a copy), or its strings in the
/// form `strings` asks for; `feature` names it in an error.
pub fn dense_to_py<'py>(
    py: Python<'py>,
    t: DenseTensor,
    strings: StringForm,
    feature: &str,
) -> PyResult<Bound<'py, PyAny>> {
    match t.into_i64_array().map_err(DenseTensor::into_f32_array) {
        Ok(a) => Ok(a.into_pyarray(py).into_any()),
        Err(Ok(a)) => Ok(a.into_pyarray(py).into_any()),
        // Only strings are left.
        Err(Err(t)) => string_tensor(py, t, strings, feature),
    }
}

fn splits_to_py<'py>(py: Python<'py>, splits: Vec<i64>, dtype: SplitsDType) -> Bound<'py, PyAny> {
    match dtype {
        SplitsDType::Int64 => PyArray1::from_vec(py, splits).into_any(),
        SplitsDType::Int32 => PyArray1::from_vec(py, splits.into_iter().map(|s| s as i32).collect()).into_any(),
    }
}

/// A tensor as Python: a NumPy array (dense), `("sparse", indices, values, dense_shape)` or
/// `("ragged", flat_values, [row_splits...], [uniform_row_length or None...])`; the Python
/// layer wraps the tuples in its `SparseTensor` / `RaggedTensor` classes.
pub fn tensor_to_py<'py>(
    py: Python<'py>,
    t: Tensor,
    strings: StringForm,
    feature: &str,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match t {
        Tensor::Dense(d) => dense_to_py(py, d, strings, feature)?,
        Tensor::Sparse(s) => PyTuple::new(
            py,
            [
                "sparse".into_pyobject(py)?.into_any(),
                s.indices.into_pyarray(py).into_any(),
                dense_to_py(py, s.values, strings, feature)?,
                PyArray1::from_vec(py, s.dense_shape).into_any(),
            ],
        )?
        .into_any(),
        Tensor::Ragged(r) => {
            let (flat_values, nested_row_splits, uniform_row_lengths, dtype) = r.into_parts();
            let splits = PyList::empty(py);
            for s in nested_row_splits {
                splits.append(splits_to_py(py, s, dtype))?;
            }
            let uniform = PyList::new(py, uniform_row_lengths)?;
            PyTuple::new(
                py,
                [
                    "ragged".into_pyobject(py)?.into_any(),
                    dense_to_py(py, flat_values, strings, feature)?,
                    splits.into_any(),
                    uniform.into_any(),
                    dtype.json_name().into_pyobject(py)?.into_any(),
                ],
            )?
            .into_any()
        }
    })
}

/// A name → tensor map as a Python dict (in key order), strings in the form `strings`.
pub fn tensors_to_dict<'py>(py: Python<'py>, map: TensorMap, strings: StringForm) -> PyResult<Bound<'py, PyAny>> {
    let dict = pyo3::types::PyDict::new(py);
    for (k, t) in map {
        let value = tensor_to_py(py, t, strings, &k)?;
        dict.set_item(k, value)?;
    }
    Ok(dict.into_any())
}

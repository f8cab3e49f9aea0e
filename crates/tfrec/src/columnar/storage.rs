//! The one place the columnar layer reads the parse layer's tensor storage: dense values into
//! flat Arrow arrays, and a sparse tensor's index matrix. Everything else in `columnar` works on
//! the arrays and plain `i64` vectors this file returns.

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Float32Array, Int64Array, StringArray};

use super::ColumnarError;
use crate::parse::{DenseTensor, SparseTensor};

/// The values of `tensor` in row-major order as a flat array (`Binary`, or `Utf8` when `utf8`).
/// `column` names the column in a UTF-8 error; `row_of(i)` gives the row of flat element `i`.
pub(super) fn dense_values(
    tensor: &DenseTensor,
    utf8: bool,
    column: &str,
    row_of: &dyn Fn(usize) -> usize,
) -> Result<ArrayRef, ColumnarError> {
    Ok(match tensor {
        DenseTensor::Int64(a) => Arc::new(Int64Array::from_iter_values(a.iter().copied())),
        DenseTensor::Float32(a) => Arc::new(Float32Array::from_iter_values(a.iter().copied())),
        DenseTensor::String(a) => bytes_array(a.iter().map(Vec::as_slice), a.len(), utf8, column, row_of)?,
    })
}

/// Like [`dense_values`], keeping only the flat elements in `ranges` (in order): the rows of
/// a padded tensor without their padding.
pub(super) fn dense_values_in(
    tensor: &DenseTensor,
    ranges: &[std::ops::Range<usize>],
    utf8: bool,
    column: &str,
    row_of: &dyn Fn(usize) -> usize,
) -> Result<ArrayRef, ColumnarError> {
    let total = ranges.iter().map(|r| r.len()).sum();
    Ok(match tensor {
        DenseTensor::Int64(a) => {
            let flat = a.as_slice_memory_order();
            let mut out = Vec::with_capacity(total);
            for r in ranges {
                match flat {
                    Some(f) if a.is_standard_layout() => out.extend_from_slice(&f[r.clone()]),
                    _ => out.extend(a.iter().skip(r.start).take(r.len()).copied()),
                }
            }
            Arc::new(Int64Array::from(out))
        }
        DenseTensor::Float32(a) => {
            let flat = a.as_slice_memory_order();
            let mut out = Vec::with_capacity(total);
            for r in ranges {
                match flat {
                    Some(f) if a.is_standard_layout() => out.extend_from_slice(&f[r.clone()]),
                    _ => out.extend(a.iter().skip(r.start).take(r.len()).copied()),
                }
            }
            Arc::new(Float32Array::from(out))
        }
        DenseTensor::String(a) => {
            let picked: Vec<&[u8]> = ranges
                .iter()
                .flat_map(|r| a.iter().skip(r.start).take(r.len()).map(Vec::as_slice))
                .collect();
            bytes_array(picked.into_iter(), total, utf8, column, row_of)?
        }
    })
}

fn bytes_array<'a>(
    values: impl Iterator<Item = &'a [u8]>,
    len: usize,
    utf8: bool,
    column: &str,
    row_of: &dyn Fn(usize) -> usize,
) -> Result<ArrayRef, ColumnarError> {
    if !utf8 {
        return Ok(Arc::new(BinaryArray::from_iter_values(values)));
    }
    let mut strings = Vec::with_capacity(len);
    for (i, b) in values.enumerate() {
        let s = std::str::from_utf8(b).map_err(|_| ColumnarError::Utf8 {
            column: column.to_owned(),
            row: row_of(i),
        })?;
        strings.push(s);
    }
    Ok(Arc::new(StringArray::from_iter_values(strings)))
}

/// The values of an int64 dense tensor (the row lengths of a feature list), or `None` for
/// another dtype.
pub(super) fn dense_i64(tensor: &DenseTensor) -> Option<Vec<i64>> {
    match tensor {
        DenseTensor::Int64(a) => Some(a.iter().copied().collect()),
        _ => None,
    }
}

/// The shape of a dense tensor.
pub(super) fn dense_shape(tensor: &DenseTensor) -> &[usize] {
    tensor.shape()
}

/// Column `dim` of a sparse tensor's `[nnz, rank]` index matrix.
pub(super) fn sparse_index_column(tensor: &SparseTensor, dim: usize) -> Vec<i64> {
    tensor.indices.column(dim).iter().copied().collect()
}

/// The rank of a sparse tensor's indices (columns of the index matrix).
pub(super) fn sparse_rank(tensor: &SparseTensor) -> usize {
    tensor.indices.ncols()
}

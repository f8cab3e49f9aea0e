//! The one place the columnar layer reads the parse layer's tensor storage: dense values into
//! flat Arrow arrays, and a sparse tensor's index matrix. Everything else in `columnar` works on
//! the arrays and plain `i64` vectors this file returns.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Float32Array, Int64Array, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};

use super::ColumnarError;
use crate::parse::{BytesArray, DenseTensor, SparseTensor, Values};

/// The values of `tensor` in row-major order as a flat array (`Binary`, or `Utf8` when `utf8`).
/// `column` names the column in a UTF-8 error; `row_of(i)` gives the row of flat element `i`.
pub(super) fn dense_values(
    tensor: &DenseTensor,
    utf8: bool,
    column: &str,
    row_of: &dyn Fn(usize) -> usize,
) -> Result<ArrayRef, ColumnarError> {
    Ok(match tensor.values() {
        Values::Int64(v) => Arc::new(Int64Array::from(v.clone())),
        Values::Float32(v) => Arc::new(Float32Array::from(v.clone())),
        Values::String(b) => bytes_array(b.iter(), b.len(), utf8, column, row_of)?,
    })
}

/// [`dense_values`] of a tensor given up: int64 and float32 values become the array's buffer
/// as they are (a batch's numbers were copied once more here, and that copy and the fresh
/// pages behind it were a sixth of converting a wide batch).
pub(super) fn dense_values_owned(
    tensor: DenseTensor,
    utf8: bool,
    column: &str,
    row_of: &dyn Fn(usize) -> usize,
) -> Result<ArrayRef, ColumnarError> {
    Ok(match tensor.into_values() {
        Values::Int64(v) => Arc::new(Int64Array::from(v)),
        Values::Float32(v) => Arc::new(Float32Array::from(v)),
        Values::String(b) => owned_bytes_array(b, utf8, column, row_of)?,
    })
}

/// Strings given up: the parser's flat bytes become the array's value buffer as they are, and
/// only the offsets are rewritten (as `i32`), instead of a copy of every value one by one.
fn owned_bytes_array(
    strings: BytesArray,
    utf8: bool,
    column: &str,
    row_of: &dyn Fn(usize) -> usize,
) -> Result<ArrayRef, ColumnarError> {
    let (data, offsets) = strings.into_parts();
    // One pass narrows the offsets and checks what `OffsetBuffer::new` asserts (starting at
    // 0, never decreasing) and that they end at the bytes' end; `BytesArray` keeps that true,
    // but a broken invariant must be an error rather than a panic. Non-decreasing offsets
    // fit `i32` when the last does. (Narrowing, then checking the ordering, took two passes
    // and a vector of `Result`s: a twelfth of converting a batch of short strings.)
    let mut ordered = offsets.first() == Some(&0);
    let mut last = 0usize;
    let offsets: Vec<i32> = offsets
        .iter()
        .map(|&o| {
            ordered &= o >= last;
            last = o;
            o as i32
        })
        .collect();
    if i32::try_from(last).is_err() {
        return Err(ColumnarError::Unsupported {
            column: column.to_owned(),
            reason: "more than 2^31 bytes of strings in one batch: use smaller batches".into(),
        });
    }
    if !ordered || last != data.len() {
        return Err(ColumnarError::Unsupported {
            column: column.to_owned(),
            reason: "string offsets that do not cover their bytes".into(),
        });
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let values = Buffer::from_vec(data);
    let arrow_error = |error| ColumnarError::Arrow {
        column: column.to_owned(),
        error,
    };
    if !utf8 {
        return Ok(Arc::new(
            BinaryArray::try_new(offsets, values, None).map_err(arrow_error)?,
        ));
    }
    match StringArray::try_new(offsets.clone(), values.clone(), None) {
        Ok(array) => Ok(Arc::new(array)),
        // Arrow checks the whole buffer at once; the value at fault (for its row) is looked
        // for only when there is one.
        Err(error) => {
            let bytes = values.as_slice();
            let bad = offsets
                .windows(2)
                .position(|w| std::str::from_utf8(&bytes[w[0] as usize..w[1] as usize]).is_err());
            Err(match bad {
                Some(i) => ColumnarError::Utf8 {
                    column: column.to_owned(),
                    row: row_of(i),
                },
                None => arrow_error(error),
            })
        }
    }
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
    tensor.as_i64().map(<[i64]>::to_vec)
}

/// The shape of a dense tensor.
pub(super) fn dense_shape(tensor: &DenseTensor) -> &[usize] {
    tensor.shape()
}

/// A sparse tensor's `[N, rank]` indices as one row-major slice: borrowed, since the parser
/// writes them in that layout, so that walking them is not a strided copy per column.
pub(super) fn flat_indices(tensor: &SparseTensor) -> Cow<'_, [i64]> {
    match tensor.indices.as_slice() {
        Some(flat) => Cow::Borrowed(flat),
        None => Cow::Owned(tensor.indices.iter().copied().collect()),
    }
}

/// Column `dim` of a sparse tensor's `[nnz, rank]` index matrix.
pub(super) fn sparse_index_column(tensor: &SparseTensor, dim: usize) -> Vec<i64> {
    tensor.indices.column(dim).iter().copied().collect()
}

/// The rank of a sparse tensor's indices (columns of the index matrix).
pub(super) fn sparse_rank(tensor: &SparseTensor) -> usize {
    tensor.indices.ncols()
}

#[cfg(test)]
mod tests {
    use arrow_array::Array;

    use super::*;

    #[test]
    fn owned_strings_keep_every_value_and_its_bounds() {
        let cases: [&[&[u8]]; 4] = [&[], &[b""], &[b"a", b"", b"bcd", b"", b""], &[b"", b"xyz"]];
        for values in cases {
            let binary = owned_bytes_array(values.iter().collect(), false, "s", &|i| i).expect("binary");
            let binary = binary.as_any().downcast_ref::<BinaryArray>().expect("a BinaryArray");
            let got: Vec<&[u8]> = binary.iter().map(|v| v.expect("no nulls")).collect();
            assert_eq!(got, values);

            let text = owned_bytes_array(values.iter().collect(), true, "s", &|i| i).expect("utf8");
            let text = text.as_any().downcast_ref::<StringArray>().expect("a StringArray");
            let got: Vec<&[u8]> = text.iter().map(|v| v.expect("no nulls").as_bytes()).collect();
            assert_eq!(got, values);
        }
    }

    #[test]
    fn owned_strings_name_the_row_of_bad_utf8() {
        let values: [&[u8]; 4] = [b"ok", b"", b"\xff\xfe", b"fine"];
        match owned_bytes_array(values.iter().collect(), true, "s", &|i| 10 + i) {
            Err(ColumnarError::Utf8 { column, row }) => assert_eq!((column.as_str(), row), ("s", 12)),
            other => panic!("expected the row of the bad value, got {other:?}"),
        }
    }
}

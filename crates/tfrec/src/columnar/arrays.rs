//! Small builders of Arrow types and arrays shared by the Example and SequenceExample columns.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, FixedSizeListArray, ListArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};

use super::ColumnarError;
use crate::parse::DType;

/// The Arrow type of one value.
pub(super) fn value_type(dtype: DType, utf8: bool) -> DataType {
    match dtype {
        DType::Int64 => DataType::Int64,
        DType::Float32 => DataType::Float32,
        DType::String if utf8 => DataType::Utf8,
        DType::String => DataType::Binary,
    }
}

/// `inner` nested in one `FixedSizeList` per dimension, the first dimension outermost.
pub(super) fn fixed_type(inner: DataType, dims: &[usize]) -> DataType {
    dims.iter().rev().fold(inner, |t, &d| {
        DataType::FixedSizeList(Arc::new(Field::new_list_field(t, false)), d as i32)
    })
}

/// A `List` of `inner`.
pub(super) fn list_type(inner: DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(inner, false)))
}

/// `values` grouped into fixed-size lists, one level per dimension (innermost last).
pub(super) fn fixed_lists(
    values: ArrayRef,
    dims: &[usize],
    outer: usize,
    column: &str,
) -> Result<ArrayRef, ColumnarError> {
    let mut out = values;
    for (k, &d) in dims.iter().enumerate().rev() {
        let field = Arc::new(Field::new_list_field(out.data_type().clone(), false));
        let size = i32::try_from(d).map_err(|_| too_big(column))?;
        // The length is explicit: a dimension of 0 leaves no values to count rows by.
        let len = dims[..k]
            .iter()
            .try_fold(outer, |a, &x| a.checked_mul(x))
            .ok_or_else(|| too_big(column))?;
        out = Arc::new(
            FixedSizeListArray::try_new_with_length(field, size, out, None, len).map_err(|source| {
                ColumnarError::Arrow {
                    column: column.to_owned(),
                    error: source,
                }
            })?,
        );
    }
    Ok(out)
}

/// `values` grouped into lists at `offsets` (one more than the rows), NULL where `valid` is false.
pub(super) fn list(
    values: ArrayRef,
    offsets: &[i64],
    valid: Option<&[bool]>,
    column: &str,
) -> Result<ArrayRef, ColumnarError> {
    let offsets: Vec<i32> = offsets
        .iter()
        .map(|&o| i32::try_from(o).map_err(|_| too_big(column)))
        .collect::<Result<_, _>>()?;
    let field = Arc::new(Field::new_list_field(values.data_type().clone(), false));
    let nulls = valid.and_then(|v| {
        let buffer = NullBuffer::from(v.to_vec());
        (buffer.null_count() > 0).then_some(buffer)
    });
    if offsets.windows(2).any(|w| w[1] < w[0]) || offsets.first().is_some_and(|&o| o < 0) {
        return Err(ColumnarError::Unsupported {
            column: column.to_owned(),
            reason: "row partitions that do not form a valid ragged tensor (parsed with validate=False)".into(),
        });
    }
    Ok(Arc::new(
        ListArray::try_new(field, OffsetBuffer::new(ScalarBuffer::from(offsets)), values, nulls).map_err(|source| {
            ColumnarError::Arrow {
                column: column.to_owned(),
                error: source,
            }
        })?,
    ))
}

/// Offsets (one more than `rows`) from the row of each value, which must not decrease.
pub(super) fn offsets_from_rows(rows: impl IntoIterator<Item = i64>, nrows: usize) -> Vec<i64> {
    let mut offsets = vec![0i64; nrows + 1];
    for r in rows {
        if let Some(slot) = usize::try_from(r).ok().and_then(|r| offsets.get_mut(r + 1)) {
            *slot += 1;
        }
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    offsets
}

fn too_big(column: &str) -> ColumnarError {
    ColumnarError::Unsupported {
        column: column.to_owned(),
        reason: "more than 2^31 values in one batch: use smaller batches".into(),
    }
}

//! Arrow → Examples: each column becomes one feature per row (a struct column one feature per
//! field), its values flattened into one list; NULL is an absent feature.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use super::ColumnarError;
use crate::example::{Example, Feature, Features};

/// The flat values of a column's leaf array, in one of the three feature kinds.
enum Leaf<'a> {
    Int(Vec<i64>),
    Float(Vec<f32>),
    Bytes(Vec<&'a [u8]>),
}

/// The rows of an array as ranges of leaf values (`bounds[r]..bounds[r + 1]`), with the leaf.
struct Flat<'a> {
    leaf: Leaf<'a>,
    bounds: Vec<usize>,
}

/// The Examples of a record batch, one per row.
pub fn batch_to_examples(batch: &RecordBatch) -> Result<Vec<Example>, ColumnarError> {
    let mut examples: Vec<Example> = (0..batch.num_rows())
        .map(|_| Example {
            features: Some(Features::default()),
        })
        .collect();
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        add_column(field.name(), array.as_ref(), None, &mut examples)?;
    }
    Ok(examples)
}

/// The serialized Examples of a record batch, one per row.
pub fn batch_to_records(batch: &RecordBatch) -> Result<Vec<Vec<u8>>, ColumnarError> {
    Ok(batch_to_examples(batch)?.iter().map(Example::encode).collect())
}

fn add_column(
    name: &str,
    array: &dyn Array,
    parent_valid: Option<&dyn Fn(usize) -> bool>,
    examples: &mut [Example],
) -> Result<(), ColumnarError> {
    if let DataType::Struct(_) = array.data_type() {
        let s = array.as_struct();
        for (field, child) in s.fields().iter().zip(s.columns()) {
            let valid = |r: usize| s.is_valid(r) && parent_valid.is_none_or(|p| p(r));
            add_column(field.name(), child.as_ref(), Some(&valid), examples)?;
        }
        return Ok(());
    }
    let flat = flatten(name, array)?;
    for (row, example) in examples.iter_mut().enumerate() {
        if array.is_null(row) || parent_valid.is_some_and(|p| !p(row)) {
            continue;
        }
        let (a, b) = (flat.bounds[row], flat.bounds[row + 1]);
        let feature = match &flat.leaf {
            Leaf::Int(v) => Feature::Int64(v[a..b].to_vec()),
            Leaf::Float(v) => Feature::Float(v[a..b].to_vec()),
            Leaf::Bytes(v) => Feature::Bytes(v[a..b].iter().map(|b| b.to_vec()).collect()),
        };
        example.features_mut().insert(name, feature);
    }
    Ok(())
}

fn unsupported(name: &str, t: &DataType) -> ColumnarError {
    ColumnarError::Unsupported {
        column: name.to_owned(),
        reason: format!(
            "Arrow type {t} has no tf.train.Feature form (integers, floating point, booleans, binary, strings \
             and lists of them do)"
        ),
    }
}

/// Checks that no element in `range` of a list's child is NULL (a NULL has no place in a
/// feature's list).
fn no_nulls_in(name: &str, child: &dyn Array, range: std::ops::Range<usize>, row: usize) -> Result<(), ColumnarError> {
    if child.null_count() > 0 && range.into_iter().any(|i| child.is_null(i)) {
        return Err(ColumnarError::Value {
            column: name.to_owned(),
            row,
            reason: "a NULL inside a list has no tf.train.Feature form".into(),
        });
    }
    Ok(())
}

fn flatten<'a>(name: &str, array: &'a dyn Array) -> Result<Flat<'a>, ColumnarError> {
    let n = array.len();
    let identity = || (0..=n).collect::<Vec<usize>>();
    macro_rules! ints {
        ($t:ty) => {
            Leaf::Int(array.as_primitive::<$t>().values().iter().map(|&v| v as i64).collect())
        };
    }
    let leaf = match array.data_type() {
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => {
            let values = array.as_primitive::<UInt64Type>().values();
            let mut out = Vec::with_capacity(values.len());
            for (row, &v) in values.iter().enumerate() {
                let v = i64::try_from(v).map_err(|_| ColumnarError::Value {
                    column: name.to_owned(),
                    row,
                    reason: format!("{v} does not fit in int64"),
                })?;
                out.push(v);
            }
            Leaf::Int(out)
        }
        DataType::Boolean => Leaf::Int(array.as_boolean().values().iter().map(i64::from).collect()),
        DataType::Float16 => Leaf::Float(array.as_primitive::<Float16Type>().values().iter().map(|v| v.to_f32()).collect()),
        DataType::Float32 => Leaf::Float(array.as_primitive::<Float32Type>().values().to_vec()),
        DataType::Float64 => Leaf::Float(array.as_primitive::<Float64Type>().values().iter().map(|&v| v as f32).collect()),
        DataType::Binary => Leaf::Bytes(array.as_binary::<i32>().iter().map(|v| v.unwrap_or_default()).collect()),
        DataType::LargeBinary => Leaf::Bytes(array.as_binary::<i64>().iter().map(|v| v.unwrap_or_default()).collect()),
        DataType::BinaryView => Leaf::Bytes(array.as_binary_view().iter().map(|v| v.unwrap_or_default()).collect()),
        DataType::FixedSizeBinary(_) => {
            Leaf::Bytes(array.as_fixed_size_binary().iter().map(|v| v.unwrap_or_default()).collect())
        }
        DataType::Utf8 => Leaf::Bytes(array.as_string::<i32>().iter().map(|v| v.unwrap_or_default().as_bytes()).collect()),
        DataType::LargeUtf8 => {
            Leaf::Bytes(array.as_string::<i64>().iter().map(|v| v.unwrap_or_default().as_bytes()).collect())
        }
        DataType::Utf8View => {
            Leaf::Bytes(array.as_string_view().iter().map(|v| v.unwrap_or_default().as_bytes()).collect())
        }
        DataType::List(_) => {
            let l = array.as_list::<i32>();
            let offsets: Vec<usize> = l.value_offsets().iter().map(|&o| o as usize).collect();
            return nest(name, l.values().as_ref(), &offsets, array);
        }
        DataType::LargeList(_) => {
            let l = array.as_list::<i64>();
            let offsets: Vec<usize> = l.value_offsets().iter().map(|&o| o as usize).collect();
            return nest(name, l.values().as_ref(), &offsets, array);
        }
        DataType::FixedSizeList(_, size) => {
            let l = array.as_fixed_size_list();
            let size = usize::try_from(*size).unwrap_or(0);
            let offsets: Vec<usize> = (0..=n).map(|r| r * size).collect();
            return nest(name, l.values().as_ref(), &offsets, array);
        }
        other => return Err(unsupported(name, other)),
    };
    Ok(Flat { leaf, bounds: identity() })
}

/// A list array's rows over its child: row `r` holds the child's rows `offsets[r]..offsets[r + 1]`.
fn nest<'a>(name: &str, child: &'a dyn Array, offsets: &[usize], array: &dyn Array) -> Result<Flat<'a>, ColumnarError> {
    let inner = flatten(name, child)?;
    let mut bounds = Vec::with_capacity(offsets.len());
    for (row, w) in offsets.windows(2).enumerate() {
        if array.is_valid(row) {
            no_nulls_in(name, child, w[0]..w[1], row)?;
        }
    }
    for &o in offsets {
        let b = inner.bounds.get(o).copied().ok_or_else(|| ColumnarError::Value {
            column: name.to_owned(),
            row: 0,
            reason: "list offsets beyond the values".into(),
        })?;
        bounds.push(b);
    }
    Ok(Flat {
        leaf: inner.leaf,
        bounds,
    })
}

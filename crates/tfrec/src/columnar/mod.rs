//! Examples and SequenceExamples as Arrow record batches, and back (feature `arrow`).
//!
//! The columns come from the parse layer's tensors ([`ExampleParser`](crate::parse::ExampleParser),
//! [`SequenceParser`](crate::parse::SequenceParser)), so every TensorFlow rule (defaults, type
//! checks, ragged partitions) is the parse op's. The mapping, per spec:
//!
//! | spec | Arrow column |
//! | --- | --- |
//! | `FixedLenFeature`, shape `[]` | the primitive type (`Int64`, `Float32`, `Binary` / `Utf8`) |
//! | `FixedLenFeature`, shape `[a, b, …]` | `FixedSizeList<a>` of `FixedSizeList<b>` … of the primitive |
//! | `VarLenFeature` | `List` of the primitive |
//! | `RaggedFeature` | one `List` per ragged level (a trailing uniform partition is a `FixedSizeList`) |
//! | `SparseFeature` | `Struct` of one `List<Int64>` per index key and a `List` of values, named by their features |
//! | sequence `FixedLenSequenceFeature` | `List` of the step (primitive or `FixedSizeList`) |
//! | sequence `VarLenFeature` | `List<List<…>>`: steps, then each step's values |
//!
//! Missing features: a record without a `VarLen`, `Ragged` or `Sparse` feature (or without a
//! feature list) has a NULL there, not an empty list, so absent and empty stay apart. A
//! `FixedLenFeature` is never NULL: with a default a missing value takes the default (as
//! TensorFlow does), without one the batch fails as TensorFlow's parse does. A
//! `FixedLenSequenceFeature` outside a SequenceExample has no columnar form (the padded tensor
//! hides each record's length). Strings are `Binary`, or `Utf8` when asked: a value that is not
//! UTF-8 is then an error naming the column and row.
//!
//! Back ([`batch_to_examples`]): integers → `int64_list`, floating point → `float_list` (64-bit
//! values are rounded to 32 bits), binary and strings → `bytes_list`, booleans → `int64_list`
//! of 0 / 1; lists, fixed-size lists and nested lists are flattened into one list feature; a
//! struct column gives one feature per struct field (named by the field, as a `SparseFeature`
//! column's fields are); a NULL is an absent feature. Any other type is an error naming the
//! column.

mod arrays;
mod examples;
mod from_arrow;
mod infer;
#[cfg(any(feature = "ipc", feature = "parquet"))]
mod ipc_schema;
#[cfg(feature = "ipc")]
mod ipc_writer;
mod order;
#[cfg(feature = "parquet")]
mod parquet_file;
#[cfg(feature = "parquet")]
mod parquet_writer;
mod pieces;
mod reader;
mod sequences;
mod storage;
mod tensor_array;
#[cfg(feature = "parquet")]
mod thrift_compact;

use crate::example::DecodeError;
use crate::parse::{ParseError, SpecError};

pub use crate::parse::InferredSpecs;
pub use examples::ExampleColumns;
pub use from_arrow::{batch_to_examples, batch_to_records};
pub use infer::infer_specs;
#[cfg(feature = "ipc")]
pub use ipc_writer::IpcColumnsWriter;
pub use order::spec_order;
#[cfg(feature = "parquet")]
pub use parquet_file::parquet_rows;
#[cfg(feature = "parquet")]
pub use parquet_writer::{ParquetError, ParquetWriter};
pub use pieces::{BatchPiece, BatchPieces};
pub use reader::{
    sample_records, BatchError, BatchReader, ColumnSpecs, COLUMN_SLICE_WIDTH, PART_ROWS, WIDE_SCHEMA_COLUMNS,
};
pub use sequences::SequenceColumns;
pub use tensor_array::dense_tensor_array;

/// An error of the columnar layer, naming the column (and row) at fault.
#[derive(Debug, thiserror::Error)]
pub enum ColumnarError {
    /// The spec is refused by the parse layer.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// Parsing the batch failed (the example index is the row in the batch).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A record is not a valid message.
    #[error("record {record} of the batch: {error}")]
    Decode {
        /// The row in the batch.
        record: usize,
        /// What is wrong (in the text too, so not a `source()`: the crate's rule).
        error: DecodeError,
    },
    /// A feature (or a column type) with no columnar (or no TFRecord) form.
    #[error("column '{column}': {reason}")]
    Unsupported {
        /// The column or feature.
        column: String,
        /// Why it has no form.
        reason: String,
    },
    /// A string value that is not UTF-8 in a `Utf8` column.
    #[error("column '{column}', row {row}: the value is not valid UTF-8 (read strings as binary instead)")]
    Utf8 {
        /// The column.
        column: String,
        /// The row in the batch.
        row: usize,
    },
    /// A value that has no TFRecord form (a NULL inside a list, an integer beyond int64).
    #[error("column '{column}', row {row}: {reason}")]
    Value {
        /// The column.
        column: String,
        /// The row in the batch.
        row: usize,
        /// What is wrong.
        reason: String,
    },
    /// Arrow refused the arrays built for a column (inconsistent ragged partitions, more than
    /// 2^31 values in one batch).
    #[error("column '{column}': {error}")]
    Arrow {
        /// The column.
        column: String,
        /// Arrow's reason (in the text too, so not a `source()`).
        error: arrow_schema::ArrowError,
    },
}

impl ColumnarError {
    /// The row in the batch the error is about, when it is about one.
    pub fn row(&self) -> Option<usize> {
        match self {
            ColumnarError::Parse(e) => e.example,
            ColumnarError::Decode { record, .. } => Some(*record),
            ColumnarError::Utf8 { row, .. } | ColumnarError::Value { row, .. } => Some(*row),
            _ => None,
        }
    }

    /// The error with its row counted `before` rows later: a part's (rows counted from the
    /// part's first) as its batch's.
    pub(crate) fn rows_after(mut self, before: usize) -> Self {
        match &mut self {
            ColumnarError::Parse(e) => {
                if let Some(example) = e.example.as_mut() {
                    *example += before;
                }
            }
            ColumnarError::Decode { record, .. } => *record += before,
            ColumnarError::Utf8 { row, .. } | ColumnarError::Value { row, .. } => *row += before,
            _ => {}
        }
        self
    }

    /// The column (feature) the error is about, when it names one.
    pub fn column(&self) -> Option<&str> {
        match self {
            ColumnarError::Parse(e) => e.key.as_deref(),
            ColumnarError::Unsupported { column, .. }
            | ColumnarError::Utf8 { column, .. }
            | ColumnarError::Value { column, .. }
            | ColumnarError::Arrow { column, .. } => Some(column),
            _ => None,
        }
    }
}

/// How string features become columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StringColumns {
    /// `Binary` columns (any bytes).
    #[default]
    Binary,
    /// `Utf8` columns; a value that is not UTF-8 is an error.
    Utf8,
    /// `Utf8` for the named features, `Binary` for the others (as [`infer_specs`] finds them).
    Utf8For(std::collections::BTreeSet<String>),
}

impl StringColumns {
    fn utf8(&self, name: &str) -> bool {
        match self {
            StringColumns::Binary => false,
            StringColumns::Utf8 => true,
            StringColumns::Utf8For(names) => names.contains(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Int64Type};
    use arrow_array::{Array, ArrayRef, BooleanArray, Date32Array, Float64Array, RecordBatch, UInt64Array};
    use arrow_schema::{DataType, Field, Schema};
    use serde_json::json;

    use super::*;
    use crate::example::test_support::encoded_example as example;
    use crate::example::Feature;
    use crate::parse::specs_from_json_str;

    fn columns(spec: serde_json::Value, strings: StringColumns) -> ExampleColumns {
        ExampleColumns::new(&specs_from_json_str(&spec.to_string()).unwrap(), &strings).unwrap()
    }

    #[test]
    fn missing_is_null_not_empty() {
        let records = vec![
            example(&[("v", Feature::Int64(vec![1, 2]))]),
            example(&[]),
            example(&[("v", Feature::Int64(vec![]))]),
        ];
        let c = columns(
            json!({"v": {"type": "VarLenFeature", "dtype": "int64"}}),
            StringColumns::Binary,
        );
        let batch = c.to_batch(&records).unwrap();
        let v = batch.column(0).as_list::<i32>();
        assert!(v.is_valid(0) && v.is_null(1) && v.is_valid(2));
        assert_eq!(v.value(0).as_primitive::<Int64Type>().values(), &[1, 2]);
        assert_eq!(v.value(2).len(), 0);
    }

    #[test]
    fn presence_is_the_same_whatever_the_key_order_or_encoding() {
        // `v: [1]` with its map entry written value first (`12 … 0a 01 'v'`): valid protobuf
        // that the fast walk does not take, so the careful walk decides that row.
        let value_first = vec![
            0x0a, 0x0c, 0x0a, 0x0a, 0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0x01, 0x0a, 0x01, b'v',
        ];
        let records = vec![
            example(&[("v", Feature::Int64(vec![1])), ("w", Feature::Int64(vec![2]))]),
            example(&[("w", Feature::Int64(vec![3])), ("v", Feature::Int64(vec![4]))]),
            example(&[("w", Feature::Int64(vec![5]))]),
            value_first,
            example(&[]),
            example(&[("v", Feature::Int64(vec![6]))]),
        ];
        let c = columns(
            json!({"v": {"type": "VarLenFeature", "dtype": "int64"}, "w": {"type": "VarLenFeature", "dtype": "int64"}}),
            StringColumns::Binary,
        );
        let batch = c.to_batch(&records).unwrap();
        let valid = |name: &str| -> Vec<bool> {
            let column = batch.column_by_name(name).unwrap();
            (0..column.len()).map(|i| column.is_valid(i)).collect()
        };
        assert_eq!(valid("v"), [true, true, false, true, false, true]);
        assert_eq!(valid("w"), [true, true, true, false, false, false]);
        let v = batch.column_by_name("v").unwrap().as_list::<i32>();
        assert_eq!(v.value(3).as_primitive::<Int64Type>().values(), &[1]);
    }

    #[test]
    fn presence_taken_from_the_values_agrees_with_the_keys() {
        // Columns that share a feature (`x` read by two ragged specs), a ragged tensor over
        // row lengths (a row can have lengths and no values), a present but empty
        // list: NULL must be exactly "the record lacks the key", whichever rows had values.
        let mut rng = crate::rng::SplitMix64::new(28);
        let mut records = Vec::new();
        let mut has = Vec::new();
        for _ in 0..300 {
            let mut features = Vec::new();
            let mut list = |key| match rng.next_u64() % 3 {
                0 => false,
                draw => {
                    let n = if draw == 1 { 0 } else { 1 + rng.next_u64() % 3 };
                    features.push((key, Feature::Int64((0..n as i64).collect())));
                    true
                }
            };
            let (v, x) = (list("v"), list("x"));
            // Row lengths of `w`'s values: one or two rows, present even when `w` is not.
            let w = rng.next_u64().is_multiple_of(2);
            let lens = if w { vec![1, 0] } else { vec![0, 0] };
            features.push(("lens", Feature::Int64(lens)));
            if w {
                features.push(("w", Feature::Float(vec![0.5])));
            }
            if rng.next_u64().is_multiple_of(2) {
                features.reverse();
            }
            records.push(example(&features));
            has.push((v, w, x));
        }
        let c = columns(
            json!({
                "v": {"type": "VarLenFeature", "dtype": "int64"},
                "r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "x"},
                "r2": {"type": "RaggedFeature", "dtype": "int64", "value_key": "x"},
                "w": {"type": "RaggedFeature", "dtype": "float32",
                      "partitions": [{"kind": "row_lengths", "key": "lens"}]},
            }),
            StringColumns::Binary,
        );
        let batch = c.to_batch(&records).unwrap();
        let valid = |name: &str| -> Vec<bool> {
            let column = batch.column_by_name(name).unwrap();
            (0..column.len()).map(|i| column.is_valid(i)).collect()
        };
        let v: Vec<bool> = has.iter().map(|h| h.0).collect();
        let w: Vec<bool> = has.iter().map(|h| h.1).collect();
        let x: Vec<bool> = has.iter().map(|h| h.2).collect();
        assert_eq!(valid("v"), v);
        assert_eq!(valid("r"), x);
        assert_eq!(valid("r2"), x);
        assert_eq!(valid("w"), w);
    }

    #[test]
    fn sequence_presence_taken_from_the_parse_agrees_with_the_keys() {
        // A dense feature list absent, present with no steps, or with steps; a VarLen context
        // feature absent, empty or with values: NULL is exactly "the record lacks the key",
        // and a list's steps are the record's own.
        use crate::example::test_support::encoded_sequence_example as seq;
        let mut rng = crate::rng::SplitMix64::new(29);
        let (mut records, mut expected) = (Vec::new(), Vec::new());
        for _ in 0..300 {
            let (mut context, mut lists) = (Vec::new(), Vec::new());
            let c = match rng.next_u64() % 3 {
                0 => None,
                draw => Some(if draw == 1 { 0 } else { 1 + rng.next_u64() % 3 }),
            };
            if let Some(n) = c {
                context.push(("c", Feature::Int64((0..n as i64).collect())));
            }
            let x = match rng.next_u64() % 3 {
                0 => None,
                draw => Some(if draw == 1 { 0 } else { 1 + rng.next_u64() % 4 }),
            };
            if let Some(steps) = x {
                lists.push(("x", (0..steps).map(|i| Feature::Float(vec![i as f32, 0.5])).collect()));
            }
            // A VarLen list absent, with no steps, or with steps of 0-2 values (a step with
            // none still counts).
            let v: Option<Vec<usize>> = match rng.next_u64() % 3 {
                0 => None,
                1 => Some(Vec::new()),
                _ => Some(
                    (0..1 + rng.next_u64() % 3)
                        .map(|_| (rng.next_u64() % 3) as usize)
                        .collect(),
                ),
            };
            if let Some(steps) = &v {
                lists.push((
                    "v",
                    steps.iter().map(|&n| Feature::Int64((0..n as i64).collect())).collect(),
                ));
            }
            records.push(seq(&context, &lists));
            expected.push((c.is_some(), x, v));
        }
        let spec = crate::parse::SpecFile::from_json_str(
            &json!({
                "context_features": {"c": {"type": "VarLenFeature", "dtype": "int64"}},
                "sequence_features": {"x": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32",
                                            "allow_missing": true},
                                      "v": {"type": "VarLenFeature", "dtype": "int64"}},
            })
            .to_string(),
        )
        .unwrap();
        let batch = ColumnSpecs::new(&spec, &StringColumns::Binary)
            .unwrap()
            .to_batch(&records)
            .unwrap();
        let (c, x, v) = (
            batch.column_by_name("c").unwrap(),
            batch.column_by_name("x").unwrap().as_list::<i32>(),
            batch.column_by_name("v").unwrap().as_list::<i32>(),
        );
        for (row, (has_c, steps, v_steps)) in expected.iter().enumerate() {
            assert_eq!(c.is_valid(row), *has_c, "row {row}");
            assert_eq!(x.is_valid(row), steps.is_some(), "row {row}");
            assert_eq!(x.value_length(row) as u64, steps.unwrap_or(0), "row {row}");
            assert_eq!(v.is_valid(row), v_steps.is_some(), "row {row}");
            let v_row = v.value(row);
            let v_row = v_row.as_list::<i32>();
            let lengths: Vec<usize> = (0..v_row.len()).map(|s| v_row.value_length(s) as usize).collect();
            assert_eq!(&lengths, v_steps.as_deref().unwrap_or(&[]), "row {row}");
        }
    }

    #[test]
    fn fixed_len_defaults_fill_and_required_fails() {
        let records = vec![example(&[("x", Feature::Float(vec![1.5, 2.5]))]), example(&[])];
        let with_default = columns(
            json!({"x": {"type": "FixedLenFeature", "shape": [2], "dtype": "float32", "default_value": [7.0, 8.0]}}),
            StringColumns::Binary,
        );
        let batch = with_default.to_batch(&records).unwrap();
        assert_eq!(
            batch.schema().field(0).data_type(),
            &DataType::FixedSizeList(Arc::new(Field::new_list_field(DataType::Float32, false)), 2)
        );
        let x = batch.column(0).as_fixed_size_list();
        assert_eq!(x.values().as_primitive::<Float32Type>().values(), &[1.5, 2.5, 7.0, 8.0]);
        let required = columns(
            json!({"x": {"type": "FixedLenFeature", "shape": [2], "dtype": "float32", "default_value": null}}),
            StringColumns::Binary,
        );
        assert!(matches!(required.to_batch(&records), Err(ColumnarError::Parse(_))));
    }

    #[test]
    fn utf8_errors_name_column_and_row() {
        let records = vec![
            example(&[("s", Feature::Bytes(vec![b"ok".to_vec()]))]),
            example(&[("s", Feature::Bytes(vec![vec![0xff]]))]),
        ];
        let c = columns(
            json!({"s": {"type": "VarLenFeature", "dtype": "string"}}),
            StringColumns::Utf8,
        );
        match c.to_batch(&records) {
            Err(ColumnarError::Utf8 { column, row }) => assert_eq!((column.as_str(), row), ("s", 1)),
            other => panic!("{other:?}"),
        }
        let binary = columns(
            json!({"s": {"type": "VarLenFeature", "dtype": "string"}}),
            StringColumns::Binary,
        );
        assert!(binary.to_batch(&records).is_ok());
    }

    #[test]
    fn inference_picks_scalar_fixed_list_and_nullable() {
        let records = vec![
            example(&[
                ("a", Feature::Int64(vec![1])),
                ("b", Feature::Float(vec![1.0, 2.0])),
                ("c", Feature::Bytes(vec![b"x".to_vec()])),
            ]),
            example(&[("a", Feature::Int64(vec![2])), ("b", Feature::Float(vec![3.0, 4.0]))]),
        ];
        let inferred = infer_specs(&records).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&inferred.to_json_string()).unwrap(),
            json!({
                "a": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": null},
                "b": {"type": "FixedLenFeature", "shape": [2], "dtype": "float32", "default_value": null},
                "c": {"type": "VarLenFeature", "dtype": "string"},
            })
        );
        assert!(inferred.utf8.contains("c"));
        let mixed = vec![
            example(&[("a", Feature::Int64(vec![1]))]),
            example(&[("a", Feature::Float(vec![1.0]))]),
        ];
        // No spec of `a` parses both records: it is left out, saying why.
        let inferred = infer_specs(&mixed).unwrap();
        assert!(inferred.skipped.contains_key("a"));
        assert_eq!(inferred.spec, crate::parse::SpecFile::Example(Default::default()));
    }

    #[test]
    fn inference_of_sequence_examples() {
        use crate::example::test_support::encoded_sequence_example as seq;
        let records = vec![
            seq(
                &[("id", Feature::Int64(vec![1]))],
                &[
                    (
                        "tok",
                        vec![Feature::Bytes(vec![b"a".to_vec()]), Feature::Bytes(vec![b"b".to_vec()])],
                    ),
                    ("xy", vec![Feature::Float(vec![1.0, 2.0])]),
                ],
            ),
            // Only a context: the bytes of an Example, read as a SequenceExample with no lists.
            seq(&[("id", Feature::Int64(vec![2]))], &[]),
            seq(
                &[("id", Feature::Int64(vec![3]))],
                &[
                    ("tok", vec![Feature::Bytes(vec![b"c".to_vec(), b"d".to_vec()])]),
                    (
                        "xy",
                        vec![Feature::Float(vec![3.0, 4.0]), Feature::Float(vec![5.0, 6.0])],
                    ),
                ],
            ),
        ];
        let inferred = infer_specs(&records).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&inferred.to_json_string()).unwrap(),
            json!({
                "context_features": {
                    "id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": null},
                },
                "sequence_features": {
                    "tok": {"type": "VarLenFeature", "dtype": "string"},
                    "xy": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32",
                           "allow_missing": true, "default_value": null},
                },
            })
        );
        assert!(inferred.utf8.contains("tok"));
        // The inferred spec makes columns, and the steps come out as lists of lists.
        let columns = ColumnSpecs::new(&inferred.spec, &inferred.string_columns(true)).unwrap();
        let batch = columns.to_batch(&records).unwrap();
        assert_eq!(batch.num_rows(), 3);
        let xy = batch.column_by_name("xy").unwrap();
        assert!(xy.is_null(1), "a missing feature list is NULL");

        let mixed = vec![records[0].clone(), example(&[("id", Feature::Int64(vec![1]))])];
        // An Example with only features reads as a context-only SequenceExample: not an error.
        assert!(infer_specs(&mixed).is_ok());
        let clash = vec![seq(
            &[("tok", Feature::Int64(vec![1]))],
            &[("tok", vec![Feature::Int64(vec![1])])],
        )];
        // Both specs are inferred (the parse op keeps the two apart); one column per name cannot.
        let clash = infer_specs(&clash).unwrap();
        assert!(matches!(
            ColumnSpecs::new(&clash.spec, &clash.string_columns(false)),
            Err(ColumnarError::Unsupported { column, .. }) if column == "tok"
        ));
    }

    #[test]
    fn arrow_types_become_features() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("flag", DataType::Boolean, true),
            Field::new("wide", DataType::Float64, true),
            Field::new("big", DataType::UInt64, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(BooleanArray::from(vec![Some(true), None])),
            Arc::new(Float64Array::from(vec![Some(0.5), Some(1.5)])),
            Arc::new(UInt64Array::from(vec![Some(7), Some(8)])),
        ];
        let batch = RecordBatch::try_new(schema, columns).unwrap();
        let examples = batch_to_examples(&batch).unwrap();
        assert_eq!(examples[0].get("flag"), Some(&Feature::Int64(vec![1])));
        assert_eq!(examples[1].get("flag"), None);
        assert_eq!(examples[1].get("wide"), Some(&Feature::Float(vec![1.5])));
        assert_eq!(examples[0].get("big"), Some(&Feature::Int64(vec![7])));

        let too_big = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("big", DataType::UInt64, false)])),
            vec![Arc::new(UInt64Array::from(vec![u64::MAX])) as ArrayRef],
        )
        .unwrap();
        assert!(matches!(batch_to_examples(&too_big), Err(ColumnarError::Value { column, .. }) if column == "big"));
        let dates = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("day", DataType::Date32, false)])),
            vec![Arc::new(Date32Array::from(vec![1])) as ArrayRef],
        )
        .unwrap();
        assert!(matches!(batch_to_examples(&dates), Err(ColumnarError::Unsupported { column, .. }) if column == "day"));
    }

    #[test]
    fn fixed_len_sequence_in_example_spec_has_no_form() {
        let spec = specs_from_json_str(&json!({"s": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true, "default_value": null}}).to_string()).unwrap();
        assert!(matches!(
            ExampleColumns::new(&spec, &StringColumns::Binary),
            Err(ColumnarError::Unsupported { .. })
        ));
    }
}

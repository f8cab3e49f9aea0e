//! Examples → Arrow: one column per spec, built from `ExampleParser`'s batch tensors, with a
//! NULL where a record lacks a feature that has no value of its own when missing.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use rustc_hash::FxHashMap;

use super::arrays::{fixed_lists, fixed_type, list, list_type, offsets_from_rows, value_type};
use super::order::in_order;
use super::storage::{dense_shape, dense_values, dense_values_owned, flat_indices, sparse_index_column, sparse_rank};
use super::{ColumnarError, StringColumns};
use crate::parse::{
    DType, ExampleParser, FeatureSpec, FeatureSpecs, KeysSeen, Partition, RaggedTensor, SparseTensor, Tensor,
};

/// How one spec becomes a column. Kept small (the rarer plans boxed): a schema holds one for
/// every column.
#[derive(Debug, Clone)]
pub(super) enum Plan {
    /// A dense tensor: the batch dimension, then these fixed dimensions.
    Fixed { dims: Box<[usize]> },
    /// A sparse tensor of `[batch, n]`: one list per row.
    VarLen,
    /// A ragged tensor: `lists` list levels (the batch's row splits included) over flat values
    /// with these inner fixed dimensions.
    Ragged(Box<(usize, Vec<usize>)>),
    /// A `SparseFeature`: its index features and value feature as struct fields.
    Sparse(Box<(Vec<String>, String)>),
}

/// One column: its plan, string form and the feature whose presence decides NULL. Its name is
/// its field's in the schema (not held twice: a schema of a million features would hold every
/// name once more).
#[derive(Debug, Clone)]
pub(super) struct Column {
    pub(super) plan: Plan,
    pub(super) dtype: DType,
    pub(super) utf8: bool,
    pub(super) presence_key: Option<Box<str>>,
}

/// The plan of one Example spec, or why it has no columnar form.
pub(super) fn plan_of(name: &str, spec: &FeatureSpec) -> Result<(Plan, Option<Box<str>>), ColumnarError> {
    Ok(match spec {
        FeatureSpec::FixedLen(s) => (
            Plan::Fixed {
                dims: s.shape.as_slice().into(),
            },
            None,
        ),
        FeatureSpec::VarLen(_) => (Plan::VarLen, Some(name.into())),
        FeatureSpec::Ragged(s) => {
            let uniform_last = matches!(s.partitions.last(), Some(Partition::UniformRowLength(_)));
            let inner = match s.partitions.last() {
                Some(Partition::UniformRowLength(n)) => vec![usize::try_from(*n).unwrap_or(0)],
                _ => Vec::new(),
            };
            let lists = 1 + s.partitions.len() - usize::from(uniform_last);
            let key = s.value_key.as_deref().unwrap_or(name);
            (Plan::Ragged(Box::new((lists, inner))), Some(key.into()))
        }
        FeatureSpec::Sparse(s) => {
            let mut seen = std::collections::BTreeSet::new();
            if !s
                .index_keys
                .iter()
                .chain([&s.value_key])
                .all(|k| seen.insert(k.as_str()))
            {
                return Err(ColumnarError::Unsupported {
                    column: name.to_owned(),
                    reason: "a SparseFeature whose index and value keys repeat has no struct form".into(),
                });
            }
            let plan = Plan::Sparse(Box::new((s.index_keys.clone(), s.value_key.clone())));
            (plan, Some(s.value_key.as_str().into()))
        }
        FeatureSpec::FixedLenSequence(_) => {
            return Err(ColumnarError::Unsupported {
                column: name.to_owned(),
                reason: "a FixedLenSequenceFeature in an Example spec has no columnar form (its padded tensor \
                         hides each record's length): use a VarLenFeature or RaggedFeature"
                    .into(),
            })
        }
    })
}

/// The Arrow type of a column.
pub(super) fn column_type(column: &Column) -> DataType {
    let value = value_type(column.dtype, column.utf8);
    match &column.plan {
        Plan::Fixed { dims } => fixed_type(value, dims),
        Plan::VarLen => list_type(value),
        Plan::Ragged(ragged) => (0..ragged.0).fold(fixed_type(value, &ragged.1), |t, _| list_type(t)),
        Plan::Sparse(keys) => DataType::Struct(sparse_fields(&keys.0, &keys.1, value)),
    }
}

fn sparse_fields(index_keys: &[String], value_key: &str, value: DataType) -> Fields {
    let mut fields: Vec<Field> = index_keys
        .iter()
        .map(|k| Field::new(k, list_type(DataType::Int64), false))
        .collect();
    fields.push(Field::new(value_key, list_type(value), false));
    Fields::from(fields)
}

/// Compiled Example specs that turn batches of serialized Examples into Arrow record batches.
#[derive(Debug, Clone)]
pub struct ExampleColumns {
    parser: ExampleParser,
    columns: Vec<Column>,
    /// The column of each of the parser's outputs, in their order.
    column_of_output: Vec<usize>,
    schema: SchemaRef,
    /// Feature key → the columns whose NULLs it decides.
    presence: FxHashMap<String, Vec<usize>>,
}

impl ExampleColumns {
    /// Compiles `specs` (every spec must have a columnar form, see the module docs), the
    /// columns in name order.
    pub fn new(specs: &FeatureSpecs, strings: &StringColumns) -> Result<ExampleColumns, ColumnarError> {
        ExampleColumns::with_order(specs, &[], strings)
    }

    /// Compiles `specs`, the columns in `order`, then those `order` leaves out in name order.
    pub fn with_order(
        specs: &FeatureSpecs,
        order: &[String],
        strings: &StringColumns,
    ) -> Result<ExampleColumns, ColumnarError> {
        let parser = ExampleParser::new(specs)?.varlen_as_row_splits();
        let mut columns = Vec::with_capacity(specs.len());
        // Each field straight into its `Arc`, and the columns found by name through a sorted
        // index rather than a hash map: a schema of a million features would otherwise hold
        // a second copy of every field, or a table of every name, while it is compiled.
        let mut fields = Vec::with_capacity(specs.len());
        let mut presence: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        for (name, spec) in in_order(specs, order) {
            let (plan, presence_key) = plan_of(name, spec)?;
            if let Some(key) = &presence_key {
                presence.entry(key.to_string()).or_default().push(columns.len());
            }
            let column = Column {
                plan,
                dtype: spec.dtype(),
                utf8: strings.utf8(name),
                presence_key,
            };
            fields.push(Arc::new(Field::new(
                name,
                column_type(&column),
                column.presence_key.is_some(),
            )));
            columns.push(column);
        }
        let fields = Fields::from(fields);
        let mut by_name: Vec<usize> = (0..columns.len()).collect();
        by_name.sort_unstable_by(|&a, &b| fields[a].name().cmp(fields[b].name()));
        let column_named = |name: &str| {
            by_name
                .binary_search_by(|&c| fields[c].name().as_str().cmp(name))
                .ok()
                .map(|at| by_name[at])
        };
        let column_of_output = parser
            .output_names()
            .map(|n| column_named(n).ok_or_else(|| missing(n)))
            .collect::<Result<Vec<_>, _>>()?;
        drop(by_name);
        Ok(ExampleColumns {
            parser,
            columns,
            column_of_output,
            schema: Arc::new(Schema::new(fields)),
            presence,
        })
    }

    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Each nullable column's validity, from the keys the parse saw. Every spec's presence
    /// key is one of the keys the parser reads, so the parse has settled them all.
    fn presence_seen(&self, seen: &KeysSeen) -> Result<Vec<Option<Vec<bool>>>, ColumnarError> {
        let mut valid = vec![None; self.columns.len()];
        for (key, columns) in &self.presence {
            let rows = seen.rows(key).ok_or_else(|| ColumnarError::Unsupported {
                column: columns
                    .first()
                    .map(|&c| self.schema.field(c).name().clone())
                    .unwrap_or_default(),
                reason: format!("the parse did not report which records hold feature {key:?}"),
            })?;
            for &c in columns {
                valid[c] = Some(rows.clone());
            }
        }
        Ok(valid)
    }

    /// Parses `records` (serialized Examples) into one record batch of `records.len()` rows.
    pub fn to_batch<R: AsRef<[u8]> + Sync>(&self, records: &[R]) -> Result<RecordBatch, ColumnarError> {
        let mut whole = None;
        self.to_arrays(records, self.columns.len(), |_, arrays| {
            whole = Some(arrays);
            Ok(())
        })?;
        let arrays = whole.ok_or_else(|| missing(""))?;
        self.batch_of(self.schema.clone(), arrays, records.len())
    }

    /// Parses `records` into batches of the same rows, each of at most `width` consecutive
    /// columns (the schema's fields `first..`), handed to `each` in column order with `first`:
    /// together they are [`to_batch`](Self::to_batch)'s batch, cut between columns. A column's
    /// array is made as soon as its tensor is, and a slice's arrays are handed out as soon as
    /// they are all made, so that a wide schema's batch is never whole in memory as Arrow
    /// arrays (when the spec lists its columns in another order than their names, a slice
    /// waits for its last column). Errors are those of `to_batch`; slices handed out before
    /// one are not taken back.
    pub fn to_column_slices<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        width: usize,
        mut each: impl FnMut(usize, RecordBatch) -> Result<(), ColumnarError>,
    ) -> Result<(), ColumnarError> {
        let rows = records.len();
        self.to_arrays(records, width, |first, arrays| {
            let fields: Fields = self.schema.fields()[first..first + arrays.len()]
                .iter()
                .cloned()
                .collect();
            each(first, self.batch_of(Arc::new(Schema::new(fields)), arrays, rows)?)
        })
    }

    /// A record batch of `rows` rows of `arrays` under `schema`.
    fn batch_of(&self, schema: SchemaRef, arrays: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch, ColumnarError> {
        RecordBatch::try_new_with_options(schema, arrays, &RecordBatchOptions::new().with_row_count(Some(rows)))
            .map_err(|source| ColumnarError::Arrow {
                column: String::new(),
                error: source,
            })
    }

    /// The columns of `records`, handed to `each` a slice of `width` of them at a time (see
    /// [`to_column_slices`](Self::to_column_slices)) with the index of the slice's first.
    fn to_arrays<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        width: usize,
        mut each: impl FnMut(usize, Vec<ArrayRef>) -> Result<(), ColumnarError>,
    ) -> Result<(), ColumnarError> {
        // Parts parsed apart are joined with a copy, which pays only when they run at once.
        // The parse says which keys each record holds, so NULLs need no second pass.
        let rows = records.len();
        let width = width.max(1);
        let columns = self.columns.len();
        let mut arrays: Vec<Option<ArrayRef>> = vec![None; columns];
        // The arrays made of each slice's columns, and the first column not handed out yet.
        let mut made = vec![0usize; columns.div_ceil(width)];
        let mut next = 0;
        // Each tensor becomes its column as soon as it is made, so that a wide schema's batch
        // never holds every tensor and every array at once; each slice leaves when complete.
        let mut put =
            |valid: &[Option<Vec<bool>>], output: usize, tensor: Option<Tensor>| -> Result<(), ColumnarError> {
                let c = self.column_of_output[output];
                let column_valid = valid.get(c).and_then(|v| v.as_deref());
                if arrays[c]
                    .replace(column_array(
                        self.schema.field(c).name(),
                        &self.columns[c],
                        tensor,
                        rows,
                        column_valid,
                    )?)
                    .is_none()
                {
                    made[c / width] += 1;
                }
                while next < columns {
                    let end = (next + width).min(columns);
                    if made[next / width] < end - next {
                        break;
                    }
                    let slice: Vec<ArrayRef> = arrays[next..end].iter_mut().filter_map(Option::take).collect();
                    each(next, slice)?;
                    next = end;
                }
                Ok(())
            };
        if rows > 4096 && rayon::current_num_threads() > 1 {
            let (mut tensors, seen) = self.parser.parse_batch_parallel_seeing_keys(records, 2048)?;
            let valid = self.presence_seen(&seen)?;
            for (output, name) in self.parser.output_names().enumerate() {
                put(&valid, output, tensors.remove(name))?;
            }
        } else {
            let (parsed, seen) = self.parser.parse_seeing_keys(records)?;
            let valid = self.presence_seen(&seen)?;
            drop(seen);
            self.parser
                .assemble_parsed(parsed, |output, tensor| put(&valid, output, tensor))?;
        }
        // A column after `next` whose tensor never came: nothing from it on was handed out.
        match (next..columns).find(|&c| arrays[c].is_none()) {
            Some(c) => Err(missing(self.schema.field(c).name())),
            None => Ok(()),
        }
    }
}

fn missing(column: &str) -> ColumnarError {
    ColumnarError::Unsupported {
        column: column.to_owned(),
        reason: "the parse op gave no tensor of the expected kind for this feature".into(),
    }
}

/// The column of one spec, made from its tensor (taken out of the batch's tensors; `None` if
/// the parse gave none): numeric values move into the Arrow array without a copy.
pub(super) fn column_array(
    name: &str,
    column: &Column,
    tensor: Option<Tensor>,
    nrows: usize,
    valid: Option<&[bool]>,
) -> Result<ArrayRef, ColumnarError> {
    let tensor = tensor.ok_or_else(|| missing(name))?;
    match (&column.plan, tensor) {
        (Plan::Fixed { dims }, Tensor::Dense(t)) => {
            let per_row: usize = dims.iter().product::<usize>().max(1);
            let values = dense_values_owned(t, column.utf8, name, &|i| i / per_row)?;
            fixed_lists(values, dims, nrows, name)
        }
        (Plan::VarLen, Tensor::Ragged(t)) => {
            let (values, mut splits) = t.into_values_and_splits();
            let (Some(offsets), None) = (splits.pop(), splits.pop()) else {
                return Err(missing(name));
            };
            let row_of = |i: usize| offsets.partition_point(|&o| o <= i as i64).saturating_sub(1);
            let values = dense_values_owned(values, column.utf8, name, &row_of)?;
            list(values, &offsets, valid, name)
        }
        (Plan::VarLen, Tensor::Sparse(t)) => {
            let rank = sparse_rank(&t).max(1);
            let offsets = offsets_from_rows(flat_indices(&t).iter().step_by(rank).copied(), nrows);
            let row_of = |i: usize| offsets.partition_point(|&o| o <= i as i64).saturating_sub(1);
            let values = dense_values_owned(t.values, column.utf8, name, &row_of)?;
            list(values, &offsets, valid, name)
        }
        (Plan::Ragged(ragged), Tensor::Ragged(t)) => ragged_array(name, &t, ragged.0, &ragged.1, column.utf8, valid),
        (Plan::Sparse(keys), Tensor::Sparse(t)) => sparse_struct(name, &t, &keys.0, &keys.1, column.utf8, nrows, valid),
        _ => Err(missing(name)),
    }
}

/// A ragged tensor as nested lists: its row splits, outermost first, over its flat values.
pub(super) fn ragged_array(
    name: &str,
    t: &RaggedTensor,
    lists: usize,
    inner: &[usize],
    utf8: bool,
    valid: Option<&[bool]>,
) -> Result<ArrayRef, ColumnarError> {
    let shape = dense_shape(t.flat_values());
    if t.nested_row_splits().len() != lists || shape.get(1..) != Some(inner) {
        return Err(ColumnarError::Unsupported {
            column: name.to_owned(),
            reason: format!(
                "the parsed ragged tensor has {} row-split levels and inner shape {:?}, the spec {} and {:?}",
                t.nested_row_splits().len(),
                shape.get(1..).unwrap_or(&[]),
                lists,
                inner
            ),
        });
    }
    let stride: usize = inner.iter().product::<usize>().max(1);
    let splits = &t.nested_row_splits();
    let row_of = |i: usize| {
        let mut idx = (i / stride) as i64;
        for level in splits.iter().rev() {
            idx = level.partition_point(|&s| s <= idx).saturating_sub(1) as i64;
        }
        idx as usize
    };
    let outer = t.flat_values().shape().first().copied().unwrap_or(0);
    let mut array = fixed_lists(dense_values(t.flat_values(), utf8, name, &row_of)?, inner, outer, name)?;
    for (level, offsets) in splits.iter().enumerate().rev() {
        array = list(array, offsets, if level == 0 { valid } else { None }, name)?;
    }
    Ok(array)
}

fn sparse_struct(
    name: &str,
    t: &SparseTensor,
    index_keys: &[String],
    value_key: &str,
    utf8: bool,
    nrows: usize,
    valid: Option<&[bool]>,
) -> Result<ArrayRef, ColumnarError> {
    if sparse_rank(t) != index_keys.len() + 1 {
        return Err(missing(name));
    }
    let rows = sparse_index_column(t, 0);
    let offsets = offsets_from_rows(rows.iter().copied(), nrows);
    let mut arrays = Vec::with_capacity(index_keys.len() + 1);
    for dim in 0..index_keys.len() {
        let index: ArrayRef = Arc::new(arrow_array::Int64Array::from(sparse_index_column(t, dim + 1)));
        arrays.push(list(index, &offsets, None, name)?);
    }
    let values = dense_values(&t.values, utf8, name, &|i| rows.get(i).map_or(0, |&r| r as usize))?;
    arrays.push(list(values, &offsets, None, name)?);
    let fields = sparse_fields(index_keys, value_key, value_type(t.values.dtype(), utf8));
    let nulls = valid
        .map(|v| NullBuffer::from(v.to_vec()))
        .filter(|n| n.null_count() > 0);
    Ok(Arc::new(StructArray::try_new(fields, arrays, nulls).map_err(
        |source| ColumnarError::Arrow {
            column: name.to_owned(),
            error: source,
        },
    )?))
}

//! SequenceExamples → Arrow: context columns as for Examples, and one list-of-steps column per
//! feature list, built from `SequenceParser`'s batch tensors.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use rustc_hash::FxHashMap;

use super::arrays::{fixed_lists, fixed_type, list, list_type, value_type};
use super::examples::{column_array, column_type, plan_of, ragged_array, Column};
use super::order::in_order;
use super::storage::{dense_i64, dense_shape, dense_values_owned};
use super::{ColumnarError, StringColumns};
use crate::example::SequenceExampleView;
use crate::parse::{DType, FeatureSpec, Partition, SequenceParser, SequenceSpecs, StepLayout, Tensor, TensorMap};

#[derive(Debug, Clone)]
enum ListPlan {
    /// `FixedLenSequenceFeature`: steps of this shape.
    Dense { shape: Vec<usize> },
    /// `VarLenFeature`: steps of any length.
    VarLen,
    /// `RaggedFeature`: this many list levels (batch and steps included) over flat values with
    /// these inner dimensions.
    Ragged { lists: usize, inner: Vec<usize> },
}

#[derive(Debug, Clone)]
struct ListColumn {
    name: String,
    plan: ListPlan,
    dtype: DType,
    utf8: bool,
}

/// Compiled SequenceExample specs that turn batches of serialized SequenceExamples into Arrow
/// record batches: the context columns, then the feature-list columns.
#[derive(Debug, Clone)]
pub struct SequenceColumns {
    parser: SequenceParser,
    specs: SequenceSpecs,
    context: Vec<Column>,
    lists: Vec<ListColumn>,
    schema: SchemaRef,
    context_keys: FxHashMap<Vec<u8>, Vec<usize>>,
    list_keys: FxHashMap<Vec<u8>, Vec<usize>>,
}

impl SequenceColumns {
    /// Compiles `specs` (a context feature and a feature list may not share a name), the
    /// columns of each part in name order.
    pub fn new(specs: &SequenceSpecs, strings: &StringColumns) -> Result<SequenceColumns, ColumnarError> {
        SequenceColumns::with_order(specs, &[], strings)
    }

    /// Compiles `specs`, the columns of each part (context, then feature lists) in `order`,
    /// then those `order` leaves out in name order.
    pub fn with_order(
        specs: &SequenceSpecs,
        order: &[String],
        strings: &StringColumns,
    ) -> Result<SequenceColumns, ColumnarError> {
        let parser = SequenceParser::new(specs)?;
        let mut context = Vec::new();
        let mut context_names = Vec::new();
        let mut context_keys: FxHashMap<Vec<u8>, Vec<usize>> = FxHashMap::default();
        for (name, spec) in in_order(&specs.context_features, order) {
            let (plan, presence_key) = plan_of(name, spec)?;
            if let Some(key) = &presence_key {
                context_keys
                    .entry(key.as_bytes().to_vec())
                    .or_default()
                    .push(context.len());
            }
            context_names.push(name.clone());
            context.push(Column {
                plan,
                dtype: spec.dtype(),
                utf8: strings.utf8(name),
                presence_key,
            });
        }
        let mut lists = Vec::new();
        let mut list_keys: FxHashMap<Vec<u8>, Vec<usize>> = FxHashMap::default();
        for (name, spec) in in_order(&specs.sequence_features, order) {
            if specs.context_features.contains_key(name) {
                return Err(ColumnarError::Unsupported {
                    column: name.clone(),
                    reason: "a context feature and a feature list of the same name cannot both be columns".into(),
                });
            }
            let (plan, key) = match spec {
                FeatureSpec::FixedLenSequence(s) => (ListPlan::Dense { shape: s.shape.clone() }, name.clone()),
                FeatureSpec::VarLen(_) => (ListPlan::VarLen, name.clone()),
                FeatureSpec::Ragged(s) => {
                    let uniform_last = matches!(s.partitions.last(), Some(Partition::UniformRowLength(_)));
                    let inner = match s.partitions.last() {
                        Some(Partition::UniformRowLength(n)) => vec![usize::try_from(*n).unwrap_or(0)],
                        _ => Vec::new(),
                    };
                    let lists = 2 + s.partitions.len() - usize::from(uniform_last);
                    (
                        ListPlan::Ragged { lists, inner },
                        s.value_key.clone().unwrap_or_else(|| name.clone()),
                    )
                }
                other => {
                    return Err(ColumnarError::Unsupported {
                        column: name.clone(),
                        reason: format!("a {} has no feature-list column form", other.type_name()),
                    })
                }
            };
            list_keys.entry(key.into_bytes()).or_default().push(lists.len());
            lists.push(ListColumn {
                name: name.clone(),
                plan,
                dtype: spec.dtype(),
                utf8: strings.utf8(name),
            });
        }
        let mut fields: Vec<Field> = context
            .iter()
            .zip(context_names)
            .map(|(c, name)| Field::new(name, column_type(c), c.presence_key.is_some()))
            .collect();
        for l in &lists {
            fields.push(Field::new(&l.name, list_column_type(l), true));
        }
        Ok(SequenceColumns {
            parser,
            specs: specs.clone(),
            context,
            lists,
            schema: Arc::new(Schema::new(fields)),
            context_keys,
            list_keys,
        })
    }

    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The specs the columns follow.
    pub fn specs(&self) -> &SequenceSpecs {
        &self.specs
    }

    /// Parses `records` (serialized SequenceExamples) into one record batch.
    pub fn to_batch<R: AsRef<[u8]> + Sync>(&self, records: &[R]) -> Result<RecordBatch, ColumnarError> {
        // Steps packed: an Arrow list has its own offsets, so padding would only be copied out.
        // Parts parsed apart are joined with a copy, which pays only when they run at once.
        let mut parsed = if records.len() > 4096 && rayon::current_num_threads() > 1 {
            self.parser
                .parse_batch_parallel_with(records, 2048, StepLayout::Packed)?
        } else {
            self.parser.parse_batch_with(records, StepLayout::Packed)?
        };
        let n = records.len();
        let mut context_valid = vec![vec![false; n]; self.context.len()];
        let mut list_valid = vec![vec![false; n]; self.lists.len()];
        // What the parse already says: a context feature with values in a row is there, and so
        // is a dense or VarLen feature list with steps (whose count the parse gives). A record is walked
        // for its keys only when that leaves something open.
        let mut settled = vec![true; n];
        for columns in self.context_keys.values() {
            let mut present = vec![false; n];
            for &c in columns {
                match rows_with_values(self.schema.field(c).name(), &self.context[c], &parsed.context, n) {
                    Some(rows) => present.iter_mut().zip(&rows).for_each(|(p, &h)| *p |= h),
                    None => present.iter_mut().for_each(|p| *p = false),
                }
            }
            settled.iter_mut().zip(&present).for_each(|(s, &p)| *s &= p);
            for &c in columns {
                context_valid[c].clone_from(&present);
            }
        }
        for (i, l) in self.lists.iter().enumerate() {
            let lengths = match l.plan {
                ListPlan::Dense { .. } => parsed
                    .lengths
                    .get(&l.name)
                    .and_then(Tensor::as_dense)
                    .and_then(dense_i64),
                // Packed, a VarLen list is ragged, its outer splits the steps of each record.
                ListPlan::VarLen => match parsed.feature_lists.get(&l.name) {
                    Some(Tensor::Ragged(t)) => t
                        .nested_row_splits()
                        .first()
                        .map(|splits| splits.windows(2).map(|w| w[1] - w[0]).collect()),
                    _ => None,
                },
                // A ragged feature's rows need not be the list's steps (partitions).
                ListPlan::Ragged { .. } => None,
            };
            match lengths {
                Some(lengths) if lengths.len() == n => {
                    for ((valid, settled), &len) in list_valid[i].iter_mut().zip(&mut settled).zip(&lengths) {
                        *valid = len > 0;
                        *settled &= len > 0;
                    }
                }
                _ => settled.iter_mut().for_each(|s| *s = false),
            }
        }
        for (row, record) in records.iter().enumerate() {
            if settled[row] {
                continue;
            }
            for valid in context_valid.iter_mut().chain(&mut list_valid) {
                valid[row] = false;
            }
            let view = SequenceExampleView::new(record.as_ref());
            let mut entries = view.context();
            while let Some((key, _)) = entries.next_entry().map_err(|source| ColumnarError::Decode {
                record: row,
                error: source,
            })? {
                for &c in self.context_keys.get(key).map_or(&[][..], Vec::as_slice) {
                    context_valid[c][row] = true;
                }
            }
            for entry in view.feature_lists() {
                let (key, _) = entry.map_err(|source| ColumnarError::Decode {
                    record: row,
                    error: source,
                })?;
                if let Some(columns) = self.list_keys.get(key) {
                    for &c in columns {
                        list_valid[c][row] = true;
                    }
                }
            }
        }
        let mut arrays = Vec::with_capacity(self.context.len() + self.lists.len());
        for (i, c) in self.context.iter().enumerate() {
            let valid = c.presence_key.is_some().then(|| context_valid[i].as_slice());
            // The context columns come first in the schema, each named by its field.
            let name = self.schema.field(i).name();
            arrays.push(column_array(name, c, parsed.context.remove(name), n, valid)?);
        }
        for (i, l) in self.lists.iter().enumerate() {
            // Taken, so that numeric values become the array's buffer without a copy.
            let tensor = parsed.feature_lists.remove(&l.name);
            let array = match (&l.plan, tensor) {
                (ListPlan::Dense { shape }, Some(Tensor::Dense(t))) => {
                    let lengths = parsed
                        .lengths
                        .get(&l.name)
                        .and_then(Tensor::as_dense)
                        .and_then(dense_i64)
                        .ok_or_else(|| no_tensor(&l.name))?;
                    dense_steps(&l.name, t, shape, &lengths, l.utf8, &list_valid[i])?
                }
                (ListPlan::VarLen, Some(Tensor::Ragged(t))) => {
                    ragged_array(&l.name, &t, 2, &[], l.utf8, Some(&list_valid[i]))?
                }
                (ListPlan::Ragged { lists, inner }, Some(Tensor::Ragged(t))) => {
                    ragged_array(&l.name, &t, *lists, inner, l.utf8, Some(&list_valid[i]))?
                }
                _ => return Err(no_tensor(&l.name)),
            };
            arrays.push(array);
        }
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(n)),
        )
        .map_err(|source| ColumnarError::Arrow {
            column: String::new(),
            error: source,
        })
    }
}

fn list_column_type(l: &ListColumn) -> DataType {
    let value = value_type(l.dtype, l.utf8);
    match &l.plan {
        ListPlan::Dense { shape } => list_type(fixed_type(value, shape)),
        ListPlan::VarLen => list_type(list_type(value)),
        ListPlan::Ragged { lists, inner } => (0..*lists).fold(fixed_type(value, inner), |t, _| list_type(t)),
    }
}

fn no_tensor(name: &str) -> ColumnarError {
    ColumnarError::Unsupported {
        column: name.to_owned(),
        reason: "the parse op gave no tensor of the expected kind for this feature list".into(),
    }
}

/// A packed `[steps, shape…]` tensor (every record's steps in turn, `lengths[b]` of record `b`)
/// as a list of each record's own steps; numeric values become the array without a copy.
fn dense_steps(
    name: &str,
    t: crate::parse::DenseTensor,
    shape: &[usize],
    lengths: &[i64],
    utf8: bool,
    valid: &[bool],
) -> Result<ArrayRef, ColumnarError> {
    let stride: usize = shape.iter().product();
    let mut offsets = Vec::with_capacity(lengths.len() + 1);
    offsets.push(0i64);
    for (b, &len) in lengths.iter().enumerate() {
        offsets.push(offsets[b] + len.max(0));
    }
    // The packed tensor holds exactly the steps the lengths add up to.
    if dense_shape(&t).first().map(|&s| s as i64) != offsets.last().copied() {
        return Err(no_tensor(name));
    }
    let row_of = |i: usize| {
        let step = (i / stride.max(1)) as i64;
        offsets.partition_point(|&o| o <= step).saturating_sub(1)
    };
    let values = dense_values_owned(t, utf8, name, &row_of)?;
    let steps = usize::try_from(offsets.last().copied().unwrap_or(0)).unwrap_or(0);
    list(fixed_lists(values, shape, steps, name)?, &offsets, Some(valid), name)
}

/// For a column that can be NULL, which rows got at least one value from the parse (`None`
/// when the column cannot be NULL or its tensor is not of the expected kind). A row with a
/// value has the feature, so only the other rows need their keys looked at.
fn rows_with_values(name: &str, column: &Column, tensors: &TensorMap, nrows: usize) -> Option<Vec<bool>> {
    column.presence_key.as_ref()?;
    let mut rows = vec![false; nrows];
    match tensors.get(name)? {
        Tensor::Sparse(t) => {
            for &r in t.indices.column(0) {
                if let Some(row) = usize::try_from(r).ok().and_then(|r| rows.get_mut(r)) {
                    *row = true;
                }
            }
        }
        Tensor::Ragged(t) => {
            let stride: usize = dense_shape(t.flat_values()).get(1..)?.iter().product();
            let splits = t.nested_row_splits();
            for (row, has) in rows.iter_mut().enumerate() {
                // Down the levels to the row's range of flat values.
                let (mut start, mut end) = (row, row + 1);
                for level in splits {
                    let at = |i: usize| level.get(i).and_then(|&s| usize::try_from(s).ok());
                    (start, end) = (at(start)?, at(end)?);
                }
                *has = end > start && stride > 0;
            }
        }
        Tensor::Dense(_) => return None,
    }
    Some(rows)
}

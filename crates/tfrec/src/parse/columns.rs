//! Per-feature accumulation of parsed values across a batch, and the assembly of the final
//! dense, sparse and ragged tensors from them.

use ndarray::Array2;

use super::error::{ParseError, ParseErrorKind};
use super::spec::{DType, SplitsDType, Values};
use super::tensor::{DenseTensor, RaggedTensor, SparseTensor};
use crate::example::{DecodeError, FeatureView};

/// All values of one feature over a run of examples, and how many each example had.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub values: Values,
    /// Values per example (for a feature list: per row; see the sequence parser).
    pub counts: Vec<usize>,
}

impl Column {
    pub fn new(dtype: DType) -> Column {
        Column {
            values: Values::empty(dtype),
            counts: Vec::new(),
        }
    }

    /// Appends a feature's values (which must be of this column's kind); returns how many.
    #[inline]
    pub fn extend_from(&mut self, view: &FeatureView<'_>) -> Result<usize, DecodeError> {
        match &mut self.values {
            Values::Int64(v) => view.extend_int64s(v),
            Values::Float32(v) => view.extend_floats(v),
            Values::String(v) => view.for_each_bytes(|b| v.push(b.to_vec())),
        }
    }

    /// Appends `values` (of the same dtype).
    pub fn extend_values(&mut self, values: &Values) {
        match (&mut self.values, values) {
            (Values::Int64(a), Values::Int64(b)) => a.extend_from_slice(b),
            (Values::Float32(a), Values::Float32(b)) => a.extend_from_slice(b),
            (Values::String(a), Values::String(b)) => a.extend_from_slice(b),
            _ => {}
        }
    }

    /// Drops the last `n` values (after a failed feature, so the column stays consistent).
    pub fn truncate_values(&mut self, len: usize) {
        match &mut self.values {
            Values::Int64(v) => v.truncate(len),
            Values::Float32(v) => v.truncate(len),
            Values::String(v) => v.truncate(len),
        }
    }

    /// Appends another run of examples.
    pub fn append(&mut self, mut other: Column) {
        match (&mut self.values, &mut other.values) {
            (Values::Int64(a), Values::Int64(b)) => a.append(b),
            (Values::Float32(a), Values::Float32(b)) => a.append(b),
            (Values::String(a), Values::String(b)) => a.append(b),
            _ => {}
        }
        self.counts.append(&mut other.counts);
    }
}

fn shape_error(e: super::tensor::ShapeError) -> ParseError {
    ParseError::new(ParseErrorKind::Ragged(e.to_string()))
}

/// `[B] + shape` from a column holding exactly `prod(shape)` values per example.
pub(crate) fn dense_fixed(values: Values, batch: usize, shape: &[usize]) -> Result<DenseTensor, ParseError> {
    let mut full = vec![batch];
    full.extend_from_slice(shape);
    DenseTensor::from_values(values, &full).map_err(shape_error)
}

/// Places each group of `counts[i]` values at the start of a row of `width`, padding with `pad`.
pub(crate) fn pad_rows(values: &Values, counts: &[usize], width: usize, pad: &Values) -> Values {
    fn typed<T: Clone>(v: &[T], counts: &[usize], width: usize, pad: T) -> Vec<T> {
        let mut out = Vec::with_capacity(counts.len() * width);
        let mut at = 0;
        for &n in counts {
            out.extend_from_slice(&v[at..at + n]);
            out.extend(std::iter::repeat_n(pad.clone(), width - n));
            at += n;
        }
        out
    }
    match (values, pad) {
        (Values::Int64(v), Values::Int64(p)) => Values::Int64(typed(v, counts, width, p.first().copied().unwrap_or(0))),
        (Values::Float32(v), Values::Float32(p)) => {
            Values::Float32(typed(v, counts, width, p.first().copied().unwrap_or(0.0)))
        }
        (Values::String(v), Values::String(p)) => {
            Values::String(typed(v, counts, width, p.first().cloned().unwrap_or_default()))
        }
        (v, _) => v.clone(),
    }
}

/// `[B, R] + shape`: each example's values in rows of `prod(shape)`, padded to the longest.
pub(crate) fn dense_padded(column: &Column, shape: &[usize], pad: &Values) -> Result<DenseTensor, ParseError> {
    let stride: usize = shape.iter().product();
    let rows = column
        .counts
        .iter()
        .max()
        .copied()
        .unwrap_or(0)
        .checked_div(stride)
        .unwrap_or(0);
    let values = pad_rows(&column.values, &column.counts, rows * stride, pad);
    let mut full = vec![column.counts.len(), rows];
    full.extend_from_slice(shape);
    DenseTensor::from_values(values, &full).map_err(shape_error)
}

/// A VarLenFeature: indices `(example, position)`, dense shape `[B, longest]`.
pub(crate) fn varlen_sparse(column: Column) -> Result<SparseTensor, ParseError> {
    let total = column.values.len();
    let mut indices = Vec::with_capacity(total * 2);
    for (example, &n) in column.counts.iter().enumerate() {
        for position in 0..n {
            indices.push(example as i64);
            indices.push(position as i64);
        }
    }
    let longest = column.counts.iter().max().copied().unwrap_or(0);
    let values = DenseTensor::from_values(column.values, &[total]).map_err(shape_error)?;
    Ok(SparseTensor {
        indices: Array2::from_shape_vec((total, 2), indices)
            .map_err(|e| ParseError::new(ParseErrorKind::Ragged(e.to_string())))?,
        values,
        dense_shape: vec![column.counts.len() as i64, longest as i64],
    })
}

/// A SparseFeature from its index columns (int64) and value column, as TensorFlow's
/// `sparse_merge` builds it: `(example of the first index's value, index values...)`.
pub(crate) fn sparse_feature(
    index_columns: &[&Column],
    index_keys: &[String],
    value: Column,
    value_key: &str,
    size: &[i64],
    already_sorted: bool,
) -> Result<SparseTensor, ParseError> {
    let batch = value.counts.len();
    let n = value.values.len();
    let index_values: Vec<&[i64]> = index_columns
        .iter()
        .map(|c| match &c.values {
            Values::Int64(v) => v.as_slice(),
            _ => &[],
        })
        .collect();
    for (key, values) in index_keys.iter().zip(&index_values) {
        if values.len() != n {
            return Err(ParseError::new(ParseErrorKind::SparseLengths {
                detail: format!(
                    "index feature {key} has {} values but value feature {value_key} has {n}",
                    values.len()
                ),
            }));
        }
    }
    let rank = 1 + index_columns.len();
    let mut rows: Vec<Vec<i64>> = Vec::with_capacity(n);
    if let Some(first) = index_columns.first() {
        for (example, &count) in first.counts.iter().enumerate() {
            for _ in 0..count {
                let j = rows.len();
                let mut row = Vec::with_capacity(rank);
                row.push(example as i64);
                row.extend(index_values.iter().map(|v| v[j]));
                rows.push(row);
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    if !already_sorted {
        // `sparse_reorder`: lexicographic order of the indices, with duplicates left in the
        // order TensorFlow's (unstable) `std::sort` leaves them.
        super::stdsort::sort(&mut order, &|&a, &b| rows[a] < rows[b]);
    }
    let mut indices = Vec::with_capacity(n * rank);
    for &i in &order {
        indices.extend_from_slice(&rows[i]);
    }
    let values = permute(value.values, &order);
    let mut dense_shape = vec![batch as i64];
    dense_shape.extend_from_slice(size);
    Ok(SparseTensor {
        indices: Array2::from_shape_vec((n, rank), indices)
            .map_err(|e| ParseError::new(ParseErrorKind::Ragged(e.to_string())))?,
        values: DenseTensor::from_values(values, &[n]).map_err(shape_error)?,
        dense_shape,
    })
}

fn permute(values: Values, order: &[usize]) -> Values {
    if order.iter().enumerate().all(|(i, &j)| i == j) {
        return values;
    }
    match values {
        Values::Int64(v) => Values::Int64(order.iter().map(|&i| v[i]).collect()),
        Values::Float32(v) => Values::Float32(order.iter().map(|&i| v[i]).collect()),
        Values::String(v) => Values::String(order.iter().map(|&i| v[i].clone()).collect()),
    }
}

/// Row splits `[0, c0, c0+c1, ...]` from per-row counts.
pub(crate) fn splits_of(counts: &[usize]) -> Vec<i64> {
    let mut splits = Vec::with_capacity(counts.len() + 1);
    let mut total = 0i64;
    splits.push(0);
    for &c in counts {
        total += c as i64;
        splits.push(total);
    }
    splits
}

/// A ragged tensor under construction, built from the inside out.
#[derive(Debug, Clone)]
pub(crate) struct RaggedBuild {
    pub flat: Values,
    /// The shape of `flat`; more than one dimension after an innermost uniform partition.
    pub flat_shape: Vec<usize>,
    /// Row splits per ragged level, innermost first: adding an outer level is a push, so a
    /// feature with many partitions is built in linear time.
    levels: Vec<Vec<i64>>,
    /// The uniform row length of each level (same order), when it was built from one.
    uniform: Vec<Option<i64>>,
}

impl RaggedBuild {
    /// `[B, (values)]` from a column (for a feature list: `[rows, (values)]`).
    pub fn from_column(column: Column) -> RaggedBuild {
        let n = column.values.len();
        RaggedBuild {
            levels: vec![splits_of(&column.counts)],
            flat: column.values,
            flat_shape: vec![n],
            uniform: vec![None],
        }
    }

    /// The values alone, with no ragged level (a single example's feature).
    pub fn flat(values: Values) -> RaggedBuild {
        RaggedBuild {
            flat_shape: vec![values.len()],
            flat: values,
            levels: Vec::new(),
            uniform: Vec::new(),
        }
    }

    /// Number of ragged levels.
    pub fn ragged_rank(&self) -> usize {
        self.levels.len()
    }

    /// The outermost splits (empty when there is no ragged level).
    pub fn outer(&self) -> &[i64] {
        self.levels.last().map_or(&[], Vec::as_slice)
    }

    /// Rows of what the outermost level splits: the level below it, or the flat values.
    pub fn rows_below_outer(&self) -> usize {
        match self.levels.len() {
            0 | 1 => self.flat_shape.first().copied().unwrap_or(0),
            n => self.levels[n - 2].len().saturating_sub(1),
        }
    }

    /// Adds a new outermost level.
    pub fn push_outer(&mut self, splits: Vec<i64>, uniform: Option<i64>) {
        self.levels.push(splits);
        self.uniform.push(uniform);
    }

    /// Removes the outermost level.
    pub fn pop_outer(&mut self) -> Option<Vec<i64>> {
        self.uniform.pop();
        self.levels.pop()
    }

    pub fn finish(mut self, splits_dtype: SplitsDType) -> Result<RaggedTensor, ParseError> {
        self.levels.reverse();
        self.uniform.reverse();
        Ok(RaggedTensor {
            flat_values: DenseTensor::from_values(self.flat, &self.flat_shape).map_err(shape_error)?,
            nested_row_splits: self.levels,
            uniform_row_lengths: self.uniform,
            row_splits_dtype: splits_dtype,
        })
    }
}

//! Assembling the final dense, sparse and ragged tensors from the parse-time columns.

use ndarray::Array2;

use super::columns::{pad_rows, splits_of, Column};
use super::error::{ParseError, ParseErrorKind};
use super::fast;
use super::tensor::{DenseTensor, RaggedTensor, ShapeError, SparseTensor};
use super::values::{SplitsDType, Values};

fn shape_error(e: ShapeError) -> ParseError {
    ParseError::new(ParseErrorKind::Shape(e))
}

/// A matrix of `rows` rows of `cols` indices.
pub(crate) fn index_matrix(rows: usize, cols: usize, indices: Vec<i64>) -> Result<Array2<i64>, ParseError> {
    let len = indices.len();
    Array2::from_shape_vec((rows, cols), indices).map_err(|_| {
        shape_error(ShapeError {
            len,
            shape: vec![rows, cols],
        })
    })
}

/// `[B] + shape` from a column holding exactly `prod(shape)` values per example.
pub(crate) fn dense_fixed(values: Values, batch: usize, shape: &[usize]) -> Result<DenseTensor, ParseError> {
    let mut full = vec![batch];
    full.extend_from_slice(shape);
    DenseTensor::from_values(values, &full).map_err(shape_error)
}

/// `[B, R] + shape`: each example's values in rows of `prod(shape)`, padded to the longest.
/// When no example needs padding, the column's values are the tensor's, moved, not copied.
pub(crate) fn dense_padded(column: Column, shape: &[usize], pad: &Values) -> Result<DenseTensor, ParseError> {
    let stride: usize = shape.iter().product();
    let rows = column
        .counts
        .iter()
        .max()
        .copied()
        .unwrap_or(0)
        .checked_div(stride)
        .unwrap_or(0);
    let width = rows * stride;
    let values = if column.counts.iter().all(|&n| n == width) {
        column.values
    } else {
        pad_rows(&column.values, &column.counts, width, pad)
    };
    let mut full = vec![column.counts.len(), rows];
    full.extend_from_slice(shape);
    DenseTensor::from_values(values, &full).map_err(shape_error)
}

/// The error for sparse indices that did not fit the room reserved for `rows` of them. The
/// counts they come from are the column's, so they always fit: not fitting would be the
/// parser's fault, reported as a shape the indices do not fill.
pub(crate) fn indices_not_filled(rows: usize, cols: usize) -> ParseError {
    shape_error(ShapeError {
        len: 0,
        shape: vec![rows, cols],
    })
}

/// A VarLenFeature: indices `(example, position)`, dense shape `[B, longest]`.
pub(crate) fn varlen_sparse(column: Column) -> Result<SparseTensor, ParseError> {
    let total = column.values.len();
    // Written into reserved room an example at a time (see `push_positions`).
    let mut indices: Vec<[i64; 2]> = Vec::with_capacity(total + fast::SHORT_ROW);
    let written = fast::append_in_spare(&mut indices, |spare| {
        for (example, &n) in column.counts.iter().enumerate() {
            spare.push_positions(n, |position| [example as i64, position])?;
        }
        Some(())
    });
    if written.is_none() {
        return Err(indices_not_filled(total, 2));
    }
    let indices = indices.into_flattened();
    let longest = column.counts.iter().max().copied().unwrap_or(0);
    let values = DenseTensor::from_values(column.values, &[total]).map_err(shape_error)?;
    Ok(SparseTensor {
        indices: index_matrix(total, 2, indices)?,
        values,
        dense_shape: vec![column.counts.len() as i64, longest as i64],
    })
}

/// A VarLenFeature as a ragged tensor of one level: the same values, each example's row
/// delimited by row splits. For the columnar readers, whose list offsets the splits are: the
/// sparse indices would only be read back into them.
pub(crate) fn varlen_ragged(column: Column) -> Result<RaggedTensor, ParseError> {
    let total = column.values.len();
    let splits = splits_of(&column.counts);
    let values = DenseTensor::from_values(column.values, &[total]).map_err(shape_error)?;
    Ok(RaggedTensor::new_unchecked(
        values,
        vec![splits],
        vec![None],
        SplitsDType::Int64,
    ))
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
        indices: index_matrix(n, rank, indices)?,
        values: DenseTensor::from_values(values, &[n]).map_err(shape_error)?,
        dense_shape,
    })
}

fn permute(values: Values, order: &[usize]) -> Values {
    if order.iter().enumerate().all(|(i, &j)| i == j) {
        return values;
    }
    values.select(order)
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

    /// The tensor, outermost level first.
    pub fn finish(mut self, splits_dtype: SplitsDType) -> Result<RaggedTensor, ParseError> {
        self.levels.reverse();
        self.uniform.reverse();
        Ok(RaggedTensor::new_unchecked(
            DenseTensor::from_values(self.flat, &self.flat_shape).map_err(shape_error)?,
            self.levels,
            self.uniform,
            splits_dtype,
        ))
    }
}

//! The tensors parsing produces: dense (an `ndarray` array of i64, f32 or bytes), sparse
//! (indices, values, dense shape) and ragged (flat values and nested row splits), with their
//! JSON form (as the golden vectors write them) and helpers for ragged tensors.

use ndarray::{Array2, ArrayD, IxDyn};
use serde_json::{json, Value};

use super::spec::{bytes_to_json, float_to_json, DType, SplitsDType, Values};

/// A dense tensor.
#[derive(Debug, Clone, PartialEq)]
pub enum DenseTensor {
    Int64(ArrayD<i64>),
    Float32(ArrayD<f32>),
    String(ArrayD<Vec<u8>>),
}

/// A shape that does not hold the values given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{len} values do not fill a tensor of shape {shape:?}")]
pub struct ShapeError {
    pub len: usize,
    pub shape: Vec<usize>,
}

impl DenseTensor {
    /// A tensor of `shape` holding `values` in row-major order.
    pub fn from_values(values: Values, shape: &[usize]) -> Result<DenseTensor, ShapeError> {
        let err = |len| ShapeError {
            len,
            shape: shape.to_vec(),
        };
        let dims = IxDyn(shape);
        Ok(match values {
            Values::Int64(v) => {
                let n = v.len();
                DenseTensor::Int64(ArrayD::from_shape_vec(dims, v).map_err(|_| err(n))?)
            }
            Values::Float32(v) => {
                let n = v.len();
                DenseTensor::Float32(ArrayD::from_shape_vec(dims, v).map_err(|_| err(n))?)
            }
            Values::String(v) => {
                let n = v.len();
                DenseTensor::String(ArrayD::from_shape_vec(dims, v).map_err(|_| err(n))?)
            }
        })
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            DenseTensor::Int64(a) => a.shape(),
            DenseTensor::Float32(a) => a.shape(),
            DenseTensor::String(a) => a.shape(),
        }
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        match self {
            DenseTensor::Int64(_) => DType::Int64,
            DenseTensor::Float32(_) => DType::Float32,
            DenseTensor::String(_) => DType::String,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements in row-major order.
    pub fn to_values(&self) -> Values {
        match self {
            DenseTensor::Int64(a) => Values::Int64(a.iter().copied().collect()),
            DenseTensor::Float32(a) => Values::Float32(a.iter().copied().collect()),
            DenseTensor::String(a) => Values::String(a.iter().cloned().collect()),
        }
    }

    /// The golden JSON form: `{"kind": "dense", "dtype", "shape", "values"}`.
    pub fn to_json(&self) -> Value {
        let values: Vec<Value> = match self {
            DenseTensor::Int64(a) => a.iter().map(|v| json!(v)).collect(),
            DenseTensor::Float32(a) => a.iter().map(|&v| float_to_json(v)).collect(),
            DenseTensor::String(a) => a.iter().map(|v| bytes_to_json(v)).collect(),
        };
        json!({"kind": "dense", "dtype": self.dtype().json_name(), "shape": self.shape(), "values": values})
    }
}

/// A sparse tensor: `values[i]` sits at `indices[i]` in a tensor of `dense_shape`.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseTensor {
    /// `[N, rank]` indices.
    pub indices: Array2<i64>,
    /// `[N]` values.
    pub values: DenseTensor,
    /// `[rank]` dense shape.
    pub dense_shape: Vec<i64>,
}

impl SparseTensor {
    /// The golden JSON form.
    pub fn to_json(&self) -> Value {
        let indices: Vec<Vec<i64>> = self.indices.rows().into_iter().map(|r| r.to_vec()).collect();
        let values = self.values.to_json()["values"].clone();
        json!({"kind": "sparse", "dtype": self.values.dtype().json_name(), "indices": indices,
               "values": values, "dense_shape": self.dense_shape})
    }
}

/// A ragged tensor: flat values and, from the outermost in, the row splits of each ragged
/// dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct RaggedTensor {
    /// The values; more than one dimension when an innermost uniform partition reshaped them.
    pub flat_values: DenseTensor,
    /// Row splits per ragged dimension, outermost first; level `i` splits the rows of level
    /// `i + 1` (or the first dimension of `flat_values` for the last level).
    pub nested_row_splits: Vec<Vec<i64>>,
    /// For each level, the uniform row length when the level was built from one.
    pub uniform_row_lengths: Vec<Option<i64>>,
    /// The dtype TensorFlow gives the splits (the values are the same either way).
    pub row_splits_dtype: SplitsDType,
}

/// A ragged tensor turned into nested lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Nested {
    Int64(i64),
    Float32(f32),
    Bytes(Vec<u8>),
    List(Vec<Nested>),
}

impl RaggedTensor {
    /// Number of rows of the outermost dimension.
    pub fn nrows(&self) -> usize {
        self.nested_row_splits
            .first()
            .map_or(self.flat_values.shape().first().copied().unwrap_or(0), |s| {
                s.len().saturating_sub(1)
            })
    }

    /// The golden JSON form.
    pub fn to_json(&self) -> Value {
        json!({"kind": "ragged", "dtype": self.flat_values.dtype().json_name(),
               "row_splits_dtype": self.row_splits_dtype.json_name(),
               "nested_row_splits": self.nested_row_splits, "uniform_row_lengths": self.uniform_row_lengths,
               "flat_values": self.flat_values.to_json()})
    }

    /// The tensor as nested lists: one list per ragged level, then the dense dimensions of the
    /// flat values.
    pub fn to_nested(&self) -> Nested {
        let flat = flat_rows(&self.flat_values);
        let mut rows: Vec<Nested> = flat;
        for splits in self.nested_row_splits.iter().rev() {
            let mut grouped = Vec::with_capacity(splits.len().saturating_sub(1));
            let mut items = rows.into_iter();
            for w in splits.windows(2) {
                // Splits may be inconsistent (validate=False): never overflow on them.
                let n = usize::try_from(w[1].saturating_sub(w[0])).unwrap_or(0);
                grouped.push(Nested::List(items.by_ref().take(n).collect()));
            }
            rows = grouped;
        }
        Nested::List(rows)
    }

    /// Checks that the splits form a valid ragged tensor: each level starts at 0, never
    /// decreases, and ends at the number of rows of the level below (or of flat values).
    /// Parsing with `validate = false` can, as in TensorFlow, produce tensors that fail this.
    pub fn check(&self) -> Result<(), String> {
        for (level, splits) in self.nested_row_splits.iter().enumerate() {
            let below = match self.nested_row_splits.get(level + 1) {
                Some(next) => next.len().saturating_sub(1),
                None => self.flat_values.shape().first().copied().unwrap_or(0),
            };
            if splits.first() != Some(&0) {
                return Err(format!("level {level}: row splits do not start at 0"));
            }
            if splits.windows(2).any(|w| w[1] < w[0]) {
                return Err(format!("level {level}: row splits decrease"));
            }
            if splits.last().copied() != Some(below as i64) {
                return Err(format!(
                    "level {level}: row splits end at {:?}, not at the {below} rows below",
                    splits.last()
                ));
            }
        }
        Ok(())
    }

    /// Pads every ragged dimension to its longest row with `pad` (a single value of the
    /// tensor's dtype), as `RaggedTensor.to_tensor(default_value=pad)` does. An inconsistent
    /// tensor (see [`RaggedTensor::check`]) is an error.
    pub fn to_dense(&self, pad: &Values) -> Result<DenseTensor, ShapeError> {
        if self.check().is_err() {
            return Err(ShapeError {
                len: self.flat_values.len(),
                shape: self.flat_values.shape().to_vec(),
            });
        }
        let inner: &[usize] = self.flat_values.shape().get(1..).unwrap_or(&[]);
        let inner_len: usize = inner.iter().product();
        // The longest row at each level.
        let widths: Vec<usize> = self
            .nested_row_splits
            .iter()
            .map(|splits| {
                splits
                    .windows(2)
                    .map(|w| (w[1] - w[0]).max(0) as usize)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut shape = vec![self.nrows()];
        shape.extend(&widths);
        shape.extend(inner);
        // Padding multiplies the longest rows of every level: refuse a size no tensor can have
        // rather than overflow (the product of the dimensions from any level on is then
        // bounded too).
        let total = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .filter(|&n| isize::try_from(n).is_ok())
            .ok_or_else(|| ShapeError {
                len: self.flat_values.len(),
                shape: shape.clone(),
            })?;
        if total == 0 {
            return DenseTensor::from_values(fill(pad, 0), &shape);
        }
        let flat = self.flat_values.to_values();
        let mut out = fill(pad, total);
        // Walk from the outermost level: each row of level l starts at a base offset in `out`.
        let mut bases: Vec<usize> = (0..self.nrows()).map(|r| r * stride(&shape, 1)).collect();
        for (level, splits) in self.nested_row_splits.iter().enumerate() {
            let step = stride(&shape, level + 2);
            let mut next = Vec::new();
            for (row, w) in splits.windows(2).enumerate() {
                for j in 0..(w[1] - w[0]).max(0) as usize {
                    next.push(bases[row] + j * step);
                }
            }
            bases = next;
        }
        for (i, &base) in bases.iter().enumerate() {
            copy_range(&flat, i * inner_len, &mut out, base, inner_len);
        }
        DenseTensor::from_values(out, &shape)
    }
}

fn stride(shape: &[usize], from: usize) -> usize {
    shape.get(from..).map_or(1, |s| s.iter().product())
}

fn fill(pad: &Values, n: usize) -> Values {
    match pad {
        Values::Int64(v) => Values::Int64(vec![v.first().copied().unwrap_or(0); n]),
        Values::Float32(v) => Values::Float32(vec![v.first().copied().unwrap_or(0.0); n]),
        Values::String(v) => Values::String(vec![v.first().cloned().unwrap_or_default(); n]),
    }
}

fn copy_range(from: &Values, start: usize, to: &mut Values, at: usize, n: usize) {
    match (from, to) {
        (Values::Int64(a), Values::Int64(b)) => b[at..at + n].copy_from_slice(&a[start..start + n]),
        (Values::Float32(a), Values::Float32(b)) => b[at..at + n].copy_from_slice(&a[start..start + n]),
        (Values::String(a), Values::String(b)) => b[at..at + n].clone_from_slice(&a[start..start + n]),
        _ => {}
    }
}

/// The first-dimension rows of a dense tensor as nested lists.
fn flat_rows(t: &DenseTensor) -> Vec<Nested> {
    fn nest(values: &[Nested], shape: &[usize]) -> Vec<Nested> {
        match shape {
            [] | [_] => values.to_vec(),
            [n, rest @ ..] => {
                let each = rest.iter().product::<usize>().max(1);
                (0..*n)
                    .map(|i| Nested::List(nest(&values[i * each..((i + 1) * each).min(values.len())], rest)))
                    .collect()
            }
        }
    }
    let leaves: Vec<Nested> = match t.to_values() {
        Values::Int64(v) => v.into_iter().map(Nested::Int64).collect(),
        Values::Float32(v) => v.into_iter().map(Nested::Float32).collect(),
        Values::String(v) => v.into_iter().map(Nested::Bytes).collect(),
    };
    nest(&leaves, t.shape())
}

/// Any parsed tensor.
#[derive(Debug, Clone, PartialEq)]
pub enum Tensor {
    Dense(DenseTensor),
    Sparse(SparseTensor),
    Ragged(RaggedTensor),
}

impl Tensor {
    /// The golden JSON form.
    pub fn to_json(&self) -> Value {
        match self {
            Tensor::Dense(t) => t.to_json(),
            Tensor::Sparse(t) => t.to_json(),
            Tensor::Ragged(t) => t.to_json(),
        }
    }

    /// The dense tensor, if this is one.
    pub fn as_dense(&self) -> Option<&DenseTensor> {
        match self {
            Tensor::Dense(t) => Some(t),
            _ => None,
        }
    }

    /// The sparse tensor, if this is one.
    pub fn as_sparse(&self) -> Option<&SparseTensor> {
        match self {
            Tensor::Sparse(t) => Some(t),
            _ => None,
        }
    }

    /// The ragged tensor, if this is one.
    pub fn as_ragged(&self) -> Option<&RaggedTensor> {
        match self {
            Tensor::Ragged(t) => Some(t),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ragged() -> RaggedTensor {
        // [[[1, 2], []], [[3]]]
        RaggedTensor {
            flat_values: DenseTensor::from_values(Values::Int64(vec![1, 2, 3]), &[3]).unwrap(),
            nested_row_splits: vec![vec![0, 2, 3], vec![0, 2, 2, 3]],
            uniform_row_lengths: vec![None, None],
            row_splits_dtype: SplitsDType::Int32,
        }
    }

    #[test]
    fn nested_lists() {
        use Nested::*;
        assert_eq!(
            ragged().to_nested(),
            List(vec![
                List(vec![List(vec![Int64(1), Int64(2)]), List(vec![])]),
                List(vec![List(vec![Int64(3)])])
            ])
        );
    }

    #[test]
    fn padded_to_dense() {
        let dense = ragged().to_dense(&Values::Int64(vec![-1])).unwrap();
        assert_eq!(dense.shape(), &[2, 2, 2]);
        assert_eq!(dense.to_values(), Values::Int64(vec![1, 2, -1, -1, 3, -1, -1, -1]));
    }
}

/// Tensors that cannot be joined along the batch dimension.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot join tensors along the batch dimension: {0}")]
pub struct ConcatError(pub String);

/// Joins batch tensors of the same feature along their first (batch) dimension, as parsing the
/// batches together would have given them: a dense tensor whose second dimension was padded to
/// each part's longest is re-padded with zeros (0, 0.0, `""`) to the longest overall; sparse
/// indices are offset by the examples before them and the dense shape takes the largest
/// extents; ragged row splits are offset level by level.
pub fn concat_batch(parts: Vec<Tensor>) -> Result<Tensor, ConcatError> {
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Err(ConcatError("no tensors".into()));
    };
    let rest: Vec<Tensor> = parts.collect();
    match first {
        Tensor::Dense(d) => {
            let mut all = vec![d];
            for t in rest {
                all.push(
                    t.as_dense()
                        .cloned()
                        .ok_or_else(|| ConcatError("mixed tensor kinds".into()))?,
                );
            }
            concat_dense(all).map(Tensor::Dense)
        }
        Tensor::Sparse(s) => {
            let mut all = vec![s];
            for t in rest {
                all.push(
                    t.as_sparse()
                        .cloned()
                        .ok_or_else(|| ConcatError("mixed tensor kinds".into()))?,
                );
            }
            concat_sparse(all).map(Tensor::Sparse)
        }
        Tensor::Ragged(r) => {
            let mut all = vec![r];
            for t in rest {
                all.push(
                    t.as_ragged()
                        .cloned()
                        .ok_or_else(|| ConcatError("mixed tensor kinds".into()))?,
                );
            }
            concat_ragged(all).map(Tensor::Ragged)
        }
    }
}

fn concat_dense(parts: Vec<DenseTensor>) -> Result<DenseTensor, ConcatError> {
    let dtype = parts[0].dtype();
    let rank = parts[0].shape().len();
    if rank == 0 || parts.iter().any(|p| p.shape().len() != rank || p.dtype() != dtype) {
        return Err(ConcatError("dense tensors of different ranks or dtypes".into()));
    }
    let inner: Vec<usize> = parts[0].shape().get(2..).unwrap_or(&[]).to_vec();
    if parts
        .iter()
        .any(|p| p.shape().get(2..).unwrap_or(&[]) != inner.as_slice())
    {
        return Err(ConcatError("dense tensors differ beyond their second dimension".into()));
    }
    let inner_len: usize = inner.iter().product();
    let width = parts
        .iter()
        .map(|p| p.shape().get(1).copied().unwrap_or(1))
        .max()
        .unwrap_or(0);
    let batch: usize = parts.iter().map(|p| p.shape()[0]).sum();
    let mut counts = Vec::with_capacity(batch);
    let mut column = super::columns::Column::new(dtype);
    for p in &parts {
        let w = p.shape().get(1).copied().unwrap_or(1);
        counts.extend(std::iter::repeat_n(w * inner_len, p.shape()[0]));
        column.extend_values(&p.to_values());
    }
    let out = if rank == 1 {
        column.values
    } else {
        match super::columns::pad_rows(&column.values, &counts, width * inner_len, &Values::zero(dtype)) {
            v if v.len() == batch * width * inner_len => v,
            _ => return Err(ConcatError("inconsistent dense parts".into())),
        }
    };
    let mut shape = vec![batch];
    if rank > 1 {
        shape.push(width);
        shape.extend(inner);
    }
    DenseTensor::from_values(out, &shape).map_err(|e| ConcatError(e.to_string()))
}

fn concat_sparse(parts: Vec<SparseTensor>) -> Result<SparseTensor, ConcatError> {
    let rank = parts[0].dense_shape.len();
    if parts
        .iter()
        .any(|p| p.dense_shape.len() != rank || p.indices.ncols() != rank)
    {
        return Err(ConcatError("sparse tensors of different ranks".into()));
    }
    let mut indices = Vec::new();
    let mut values = super::columns::Column::new(parts[0].values.dtype());
    let mut dense_shape = vec![0i64; rank];
    let mut offset = 0i64;
    for p in &parts {
        for row in p.indices.rows() {
            indices.push(row[0] + offset);
            indices.extend(row.iter().skip(1));
        }
        values.extend_values(&p.values.to_values());
        offset += p.dense_shape[0];
        for (d, &e) in dense_shape.iter_mut().zip(&p.dense_shape).skip(1) {
            *d = (*d).max(e);
        }
    }
    dense_shape[0] = offset;
    let n = values.values.len();
    Ok(SparseTensor {
        indices: Array2::from_shape_vec((n, rank), indices).map_err(|e| ConcatError(e.to_string()))?,
        values: DenseTensor::from_values(values.values, &[n]).map_err(|e| ConcatError(e.to_string()))?,
        dense_shape,
    })
}

fn concat_ragged(parts: Vec<RaggedTensor>) -> Result<RaggedTensor, ConcatError> {
    let levels = parts[0].nested_row_splits.len();
    if parts.iter().any(|p| p.nested_row_splits.len() != levels) {
        return Err(ConcatError("ragged tensors of different ragged ranks".into()));
    }
    let flat = concat_dense_rows(parts.iter().map(|p| &p.flat_values).collect())?;
    let mut splits: Vec<Vec<i64>> = vec![vec![0]; levels];
    for p in &parts {
        for (level, s) in p.nested_row_splits.iter().enumerate() {
            let base = *splits[level].last().unwrap_or(&0);
            splits[level].extend(s.iter().skip(1).map(|x| x.wrapping_add(base)));
        }
    }
    Ok(RaggedTensor {
        flat_values: flat,
        nested_row_splits: splits,
        uniform_row_lengths: parts[0].uniform_row_lengths.clone(),
        row_splits_dtype: parts[0].row_splits_dtype,
    })
}

/// Stacks dense tensors along their first dimension (all other dimensions equal).
fn concat_dense_rows(parts: Vec<&DenseTensor>) -> Result<DenseTensor, ConcatError> {
    let inner: Vec<usize> = parts[0].shape().get(1..).unwrap_or(&[]).to_vec();
    if parts
        .iter()
        .any(|p| p.shape().get(1..).unwrap_or(&[]) != inner.as_slice())
    {
        return Err(ConcatError("flat values differ beyond their first dimension".into()));
    }
    let mut column = super::columns::Column::new(parts[0].dtype());
    let mut rows = 0;
    for p in &parts {
        column.extend_values(&p.to_values());
        rows += p.shape().first().copied().unwrap_or(0);
    }
    let mut shape = vec![rows];
    shape.extend(inner);
    DenseTensor::from_values(column.values, &shape).map_err(|e| ConcatError(e.to_string()))
}

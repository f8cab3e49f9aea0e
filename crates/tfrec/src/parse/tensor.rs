//! The tensors parsing produces: dense (a shape over [`Values`]), sparse (indices, values,
//! dense shape) and ragged (flat values and nested row splits, checked when built from
//! outside), with ndarray views of the numeric ones and the ragged helpers (nested lists,
//! padding to dense).

use ndarray::{Array2, ArrayD, ArrayViewD, IxDyn};

use super::values::{BytesArray, DType, SplitsDType, Values};

/// A dense tensor: a shape and its values in row-major order.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseTensor {
    shape: Vec<usize>,
    values: Values,
}

/// A shape that does not hold the values given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{len} values do not fill a tensor of shape {shape:?}")]
pub struct ShapeError {
    /// Number of values given.
    pub len: usize,
    /// The shape asked for.
    pub shape: Vec<usize>,
}

impl DenseTensor {
    /// A tensor of `shape` holding `values` in row-major order.
    pub fn from_values(values: Values, shape: &[usize]) -> Result<DenseTensor, ShapeError> {
        let fits = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .is_some_and(|n| n == values.len());
        if !fits {
            return Err(ShapeError {
                len: values.len(),
                shape: shape.to_vec(),
            });
        }
        Ok(DenseTensor {
            shape: shape.to_vec(),
            values,
        })
    }

    /// The same values in another shape of as many elements; the tensor back otherwise.
    pub fn reshape(self, shape: &[usize]) -> Result<DenseTensor, DenseTensor> {
        if shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) == Some(self.len()) {
            Ok(DenseTensor {
                shape: shape.to_vec(),
                values: self.values,
            })
        } else {
            Err(self)
        }
    }

    /// A scalar (shape `[]`) holding the one value of `values`.
    pub fn scalar(values: Values) -> Result<DenseTensor, ShapeError> {
        DenseTensor::from_values(values, &[])
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.values.dtype()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements in row-major order.
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The elements in row-major order, taken out of the tensor.
    pub fn into_values(self) -> Values {
        self.values
    }

    /// The shape and the elements.
    pub fn into_parts(self) -> (Vec<usize>, Values) {
        (self.shape, self.values)
    }

    /// A copy of the elements in row-major order.
    pub fn to_values(&self) -> Values {
        self.values.clone()
    }

    /// The int64 elements, if the tensor holds int64s.
    pub fn as_i64(&self) -> Option<&[i64]> {
        self.values.as_i64()
    }

    /// The float32 elements, if the tensor holds floats.
    pub fn as_f32(&self) -> Option<&[f32]> {
        self.values.as_f32()
    }

    /// The byte strings, if the tensor holds strings.
    pub fn as_bytes(&self) -> Option<&BytesArray> {
        self.values.as_bytes()
    }

    /// An ndarray view of an int64 tensor.
    pub fn i64_view(&self) -> Option<ArrayViewD<'_, i64>> {
        ArrayViewD::from_shape(IxDyn(&self.shape), self.as_i64()?).ok()
    }

    /// An ndarray view of a float32 tensor.
    pub fn f32_view(&self) -> Option<ArrayViewD<'_, f32>> {
        ArrayViewD::from_shape(IxDyn(&self.shape), self.as_f32()?).ok()
    }

    /// An int64 tensor as an owned ndarray array (no copy); the tensor back otherwise.
    pub fn into_i64_array(self) -> Result<ArrayD<i64>, DenseTensor> {
        match self.values {
            Values::Int64(v) => ArrayD::from_shape_vec(IxDyn(&self.shape), v).map_err(|e| {
                // Unreachable: the constructors check that the shape holds the values.
                unreachable!("dense tensor shape checked at construction: {e}")
            }),
            values => Err(DenseTensor { values, ..self }),
        }
    }

    /// A float32 tensor as an owned ndarray array (no copy); the tensor back otherwise.
    pub fn into_f32_array(self) -> Result<ArrayD<f32>, DenseTensor> {
        match self.values {
            Values::Float32(v) => ArrayD::from_shape_vec(IxDyn(&self.shape), v).map_err(|e| {
                // Unreachable: the constructors check that the shape holds the values.
                unreachable!("dense tensor shape checked at construction: {e}")
            }),
            values => Err(DenseTensor { values, ..self }),
        }
    }

    /// A string tensor as an ndarray array of owned byte strings.
    pub fn to_bytes_array(&self) -> Option<ArrayD<Vec<u8>>> {
        ArrayD::from_shape_vec(IxDyn(&self.shape), self.as_bytes()?.to_vecs()).ok()
    }
}

/// Builds a dense tensor from an ndarray array, in its logical (row-major) order.
fn from_array<T: Clone>(a: ArrayD<T>, wrap: impl FnOnce(Vec<T>) -> Values) -> DenseTensor {
    let shape = a.shape().to_vec();
    let n = a.len();
    let flat = if a.is_standard_layout() {
        // Contiguous in row-major order, though possibly not from the buffer's start.
        let (mut v, offset) = a.into_raw_vec_and_offset();
        let start = offset.unwrap_or(0);
        v.truncate(start + n);
        v.drain(..start);
        v
    } else {
        a.iter().cloned().collect()
    };
    DenseTensor {
        shape,
        values: wrap(flat),
    }
}

impl From<ArrayD<i64>> for DenseTensor {
    fn from(a: ArrayD<i64>) -> Self {
        from_array(a, Values::Int64)
    }
}

impl From<ArrayD<f32>> for DenseTensor {
    fn from(a: ArrayD<f32>) -> Self {
        from_array(a, Values::Float32)
    }
}

impl From<ArrayD<Vec<u8>>> for DenseTensor {
    fn from(a: ArrayD<Vec<u8>>) -> Self {
        DenseTensor {
            shape: a.shape().to_vec(),
            values: Values::String(a.iter().collect()),
        }
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

/// Why row splits do not form a valid ragged tensor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RaggedError {
    /// A level's splits do not start at 0 (or the level has no splits at all).
    #[error("level {level}: row splits do not start at 0")]
    StartNotZero {
        /// The ragged level, outermost 0.
        level: usize,
    },
    /// A level's splits decrease somewhere.
    #[error("level {level}: row splits decrease")]
    Decreasing {
        /// The ragged level, outermost 0.
        level: usize,
    },
    /// A level's splits do not end at the number of rows below it.
    #[error("level {level}: row splits end at {end:?}, not at the {rows} rows below")]
    WrongEnd {
        /// The ragged level, outermost 0.
        level: usize,
        /// The last split.
        end: Option<i64>,
        /// The rows of the level below (or of the flat values).
        rows: usize,
    },
    /// The flat values are a scalar, which no ragged tensor has.
    #[error("the flat values are a scalar")]
    ScalarValues,
    /// Not one uniform row length entry per ragged level.
    #[error("{splits} levels of row splits but {uniform} uniform row lengths")]
    LevelCount {
        /// Levels of row splits.
        splits: usize,
        /// Entries of uniform row lengths.
        uniform: usize,
    },
}

/// A ragged tensor: flat values and, from the outermost in, the row splits of each ragged
/// dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct RaggedTensor {
    flat_values: DenseTensor,
    nested_row_splits: Vec<Vec<i64>>,
    uniform_row_lengths: Vec<Option<i64>>,
    row_splits_dtype: SplitsDType,
}

/// A ragged tensor turned into nested lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Nested {
    /// An int64 value.
    Int64(i64),
    /// A float32 value.
    Float32(f32),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A list of rows or values.
    List(Vec<Nested>),
}

impl RaggedTensor {
    /// A ragged tensor from its parts, checked as [`RaggedTensor::check`] does:
    /// `flat_values` (more than one dimension when an innermost uniform partition reshaped
    /// them), the row splits of each ragged level from the outermost in (level `i` splits the
    /// rows of level `i + 1`, the last level the first dimension of `flat_values`), for each
    /// level the uniform row length it was built from (if any), and the splits' dtype.
    pub fn new(
        flat_values: DenseTensor,
        nested_row_splits: Vec<Vec<i64>>,
        uniform_row_lengths: Vec<Option<i64>>,
        row_splits_dtype: SplitsDType,
    ) -> Result<RaggedTensor, RaggedError> {
        if nested_row_splits.len() != uniform_row_lengths.len() {
            return Err(RaggedError::LevelCount {
                splits: nested_row_splits.len(),
                uniform: uniform_row_lengths.len(),
            });
        }
        if flat_values.shape().is_empty() {
            return Err(RaggedError::ScalarValues);
        }
        let t = RaggedTensor::new_unchecked(flat_values, nested_row_splits, uniform_row_lengths, row_splits_dtype);
        t.check()?;
        Ok(t)
    }

    /// As [`RaggedTensor::new`] without the checks of the splits: parsing with
    /// `validate = false` gives, as TensorFlow does, whatever the partition features say.
    pub(crate) fn new_unchecked(
        flat_values: DenseTensor,
        nested_row_splits: Vec<Vec<i64>>,
        uniform_row_lengths: Vec<Option<i64>>,
        row_splits_dtype: SplitsDType,
    ) -> RaggedTensor {
        RaggedTensor {
            flat_values,
            nested_row_splits,
            uniform_row_lengths,
            row_splits_dtype,
        }
    }

    /// The flat values and the row splits of each level, moved out.
    #[cfg(feature = "arrow")]
    pub(crate) fn into_values_and_splits(self) -> (DenseTensor, Vec<Vec<i64>>) {
        (self.flat_values, self.nested_row_splits)
    }

    /// The values; more than one dimension when an innermost uniform partition reshaped them.
    pub fn flat_values(&self) -> &DenseTensor {
        &self.flat_values
    }

    /// Row splits per ragged dimension, outermost first.
    pub fn nested_row_splits(&self) -> &[Vec<i64>] {
        &self.nested_row_splits
    }

    /// For each level, the uniform row length when the level was built from one.
    pub fn uniform_row_lengths(&self) -> &[Option<i64>] {
        &self.uniform_row_lengths
    }

    /// The dtype TensorFlow gives the splits (the values are the same either way).
    pub fn row_splits_dtype(&self) -> SplitsDType {
        self.row_splits_dtype
    }

    /// The parts, in the order of [`RaggedTensor::new`].
    pub fn into_parts(self) -> (DenseTensor, Vec<Vec<i64>>, Vec<Option<i64>>, SplitsDType) {
        (
            self.flat_values,
            self.nested_row_splits,
            self.uniform_row_lengths,
            self.row_splits_dtype,
        )
    }

    /// Number of rows of the outermost dimension.
    pub fn nrows(&self) -> usize {
        self.nested_row_splits
            .first()
            .map_or(self.flat_values.shape().first().copied().unwrap_or(0), |s| {
                s.len().saturating_sub(1)
            })
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
    pub fn check(&self) -> Result<(), RaggedError> {
        for (level, splits) in self.nested_row_splits.iter().enumerate() {
            let below = match self.nested_row_splits.get(level + 1) {
                Some(next) => next.len().saturating_sub(1),
                None => self.flat_values.shape().first().copied().unwrap_or(0),
            };
            if splits.first() != Some(&0) {
                return Err(RaggedError::StartNotZero { level });
            }
            if splits.windows(2).any(|w| w[1] < w[0]) {
                return Err(RaggedError::Decreasing { level });
            }
            if splits.last().copied() != Some(below as i64) {
                return Err(RaggedError::WrongEnd {
                    level,
                    end: splits.last().copied(),
                    rows: below,
                });
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
        // `bases` is increasing: write each run of values after the padding before it.
        let flat = self.flat_values.values();
        let mut out = Values::with_capacity(flat.dtype(), total);
        for (i, &base) in bases.iter().enumerate() {
            out.extend_pad(pad, base - out.len());
            out.extend_from_range(flat, i * inner_len..(i + 1) * inner_len);
        }
        out.extend_pad(pad, total - out.len());
        DenseTensor::from_values(out, &shape)
    }
}

fn stride(shape: &[usize], from: usize) -> usize {
    shape.get(from..).map_or(1, |s| s.iter().product())
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
    let leaves: Vec<Nested> = match t.values() {
        Values::Int64(v) => v.iter().copied().map(Nested::Int64).collect(),
        Values::Float32(v) => v.iter().copied().map(Nested::Float32).collect(),
        Values::String(v) => v.iter().map(|b| Nested::Bytes(b.to_vec())).collect(),
    };
    nest(&leaves, t.shape())
}

/// Any parsed tensor.
#[derive(Debug, Clone, PartialEq)]
pub enum Tensor {
    /// A dense tensor.
    Dense(DenseTensor),
    /// A sparse tensor.
    Sparse(SparseTensor),
    /// A ragged tensor.
    Ragged(RaggedTensor),
}

impl Tensor {
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
        RaggedTensor::new(
            DenseTensor::from_values(Values::Int64(vec![1, 2, 3]), &[3]).unwrap(),
            vec![vec![0, 2, 3], vec![0, 2, 2, 3]],
            vec![None, None],
            SplitsDType::Int32,
        )
        .unwrap()
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

    #[test]
    fn checked_constructor_refuses_bad_splits() {
        let flat = || DenseTensor::from_values(Values::Int64(vec![1, 2]), &[2]).unwrap();
        let bad = |splits: Vec<i64>| RaggedTensor::new(flat(), vec![splits], vec![None], SplitsDType::Int64);
        assert_eq!(bad(vec![1, 2]).unwrap_err(), RaggedError::StartNotZero { level: 0 });
        assert_eq!(bad(vec![0, 2, 1]).unwrap_err(), RaggedError::Decreasing { level: 0 });
        assert!(matches!(
            bad(vec![0, 1]).unwrap_err(),
            RaggedError::WrongEnd { rows: 2, .. }
        ));
        assert!(bad(vec![0, 1, 2]).is_ok());
    }

    #[test]
    fn ndarray_round_trip() {
        let a = ndarray::ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![1i64, 2, 3, 4]).unwrap();
        let t = DenseTensor::from(a.t().to_owned());
        assert_eq!(t.as_i64(), Some(&[1, 3, 2, 4][..]));
        assert_eq!(t.i64_view().unwrap()[[0, 1]], 3);
        assert_eq!(t.into_i64_array().unwrap()[[1, 0]], 2);
    }
}

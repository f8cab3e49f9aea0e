//! Joining batch tensors of one feature along the batch dimension, as parsing the batches
//! together would have given them. One joiner does it, a part at a time ([`BatchJoiner`];
//! [`concat_batch`] joins a list with it): it checks every part against the first and keeps the
//! bookkeeping (shapes, padding widths, sparse offsets, ragged splits), while a [`JoinStore`]
//! keeps the values: in memory here, in a spool file for the npz writer (which could not hold
//! a whole data set). In memory, parts are moved, not cloned: numbers are copied once into the
//! joined buffer (not at all for the first part when no padding is needed), and padding is
//! written in that same pass.

use std::mem::discriminant;

use ndarray::Array2;

use super::tensor::{DenseTensor, RaggedTensor, ShapeError, SparseTensor, Tensor};
use super::values::{DType, SplitsDType, Values};
/// Tensors that cannot be joined along the batch dimension.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConcatError {
    /// No tensors were given.
    #[error("cannot join tensors along the batch dimension: no tensors")]
    NoTensors,
    /// A part is not of the first part's kind (dense, sparse, ragged).
    #[error("cannot join tensors along the batch dimension: part {part} is not of the first part's kind")]
    MixedKinds {
        /// The index of the part.
        part: usize,
    },
    /// A part of another dtype than the first.
    #[error("cannot join tensors along the batch dimension: part {part} holds {found}, not {expected}")]
    DTypes {
        /// The index of the part.
        part: usize,
        /// The first part's dtype.
        expected: DType,
        /// The part's dtype.
        found: DType,
    },
    /// A part of another rank (dense or sparse) or ragged rank than the first, or a scalar.
    #[error("cannot join tensors along the batch dimension: part {part} has rank {found}, not {expected}")]
    Ranks {
        /// The index of the part.
        part: usize,
        /// The first part's rank (at least 1 for dense tensors).
        expected: usize,
        /// The part's rank.
        found: usize,
    },
    /// A part whose dimensions beyond the joined (and padded) ones differ from the first's.
    #[error(
        "cannot join tensors along the batch dimension: part {part} has inner dimensions {found:?}, not {expected:?}"
    )]
    InnerShape {
        /// The index of the part.
        part: usize,
        /// The first part's inner dimensions.
        expected: Vec<usize>,
        /// The part's inner dimensions.
        found: Vec<usize>,
    },
    /// The joined values do not fill the joined shape.
    #[error("cannot join tensors along the batch dimension: {0}")]
    Shape(#[from] ShapeError),
}

/// Joins batch tensors of the same feature along their first (batch) dimension, as parsing the
/// batches together would have given them: a dense tensor whose second dimension was padded to
/// each part's longest is re-padded with zeros (0, 0.0, `""`) to the longest overall; sparse
/// indices are offset by the examples before them and the dense shape takes the largest
/// extents; ragged row splits are offset level by level.
pub fn concat_batch(parts: Vec<Tensor>) -> Result<Tensor, ConcatError> {
    let first = parts.first().ok_or(ConcatError::NoTensors)?;
    // Every part's kind, then every part's rank, before any values: the error is about the
    // first part of another kind even when an earlier part has another dtype.
    if let Some(part) = parts.iter().position(|t| discriminant(t) != discriminant(first)) {
        return Err(ConcatError::MixedKinds { part });
    }
    let layout = Layout::of(first);
    for (part, t) in parts.iter().enumerate() {
        layout.check(part, t)?;
    }
    let mut joiner = BatchJoiner::new();
    for t in parts {
        joiner.push(t)?;
    }
    joiner.finish()
}

/// Joins batch tensors of one feature as [`concat_batch`] does, a part at a time: a batch can
/// be dropped once pushed (its values moved into the joined buffer).
#[derive(Debug, Default)]
pub struct BatchJoiner {
    joined: Option<Joined<Memory>>,
    parts: usize,
}

impl BatchJoiner {
    /// A joiner of no parts yet.
    pub fn new() -> Self {
        BatchJoiner::default()
    }

    /// Appends the next part; an error if it cannot join the parts before it (then nothing of
    /// it is kept).
    pub fn push(&mut self, part: Tensor) -> Result<(), ConcatError> {
        let index = self.parts;
        match &mut self.joined {
            Some(joined) => joined.push(&mut Memory, index, part)?,
            None => self.joined = Some(Joined::new(&mut Memory, index, part)?),
        }
        self.parts += 1;
        Ok(())
    }

    /// How many parts have been pushed.
    pub fn len(&self) -> usize {
        self.parts
    }

    /// Whether no part has been pushed.
    pub fn is_empty(&self) -> bool {
        self.parts == 0
    }

    /// The joined tensor ([`ConcatError::NoTensors`] without parts).
    pub fn finish(self) -> Result<Tensor, ConcatError> {
        match self.joined.ok_or(ConcatError::NoTensors)? {
            Joined::Dense(d) => finish_dense(d).map(Tensor::Dense),
            Joined::Sparse {
                indices,
                values,
                dense_shape,
                ..
            } => {
                let values = finish_dense(values)?;
                let rank = dense_shape.len();
                let len = indices.len();
                Ok(Tensor::Sparse(SparseTensor {
                    indices: Array2::from_shape_vec((values.len(), rank), indices).map_err(|_| ShapeError {
                        len,
                        shape: vec![values.len(), rank],
                    })?,
                    values,
                    dense_shape,
                }))
            }
            Joined::Ragged {
                flat,
                splits,
                uniform,
                splits_dtype,
            } => {
                let splits = splits.into_iter().map(|(s, _)| s).collect();
                // The parts may come from `validate = false` parses: join them as they are.
                Ok(Tensor::Ragged(RaggedTensor::new_unchecked(
                    finish_dense(flat)?,
                    splits,
                    uniform,
                    splits_dtype,
                )))
            }
        }
    }
}

/// Where a joiner keeps the values it joins, so that the checks and the bookkeeping are the
/// same whether the joined arrays are built in memory or streamed elsewhere.
pub(crate) trait JoinStore {
    /// The values of one dense array so far.
    type Dense: std::fmt::Debug;
    /// A list of int64s so far (sparse indices, ragged row splits).
    type Ints: std::fmt::Debug;
    type Error: From<ConcatError>;
    /// An empty array of `dtype`.
    fn dense(&mut self, dtype: DType) -> Result<Self::Dense, Self::Error>;
    /// An empty list.
    fn ints(&mut self) -> Result<Self::Ints, Self::Error>;
    /// Appends a part's values (row-major, unpadded; of the array's dtype, checked before).
    fn append_dense(&mut self, to: &mut Self::Dense, values: Values) -> Result<(), Self::Error>;
    fn append_ints(&mut self, to: &mut Self::Ints, values: impl Iterator<Item = i64>) -> Result<(), Self::Error>;
}

/// Joined values in memory: each dense array's parts as they came (joined, and padded, in one
/// pass at the end, once the widest part is known), int64 lists as vectors.
#[derive(Debug, Default)]
pub(crate) struct Memory;

impl JoinStore for Memory {
    type Dense = Vec<Values>;
    type Ints = Vec<i64>;
    type Error = ConcatError;

    fn dense(&mut self, _: DType) -> Result<Vec<Values>, ConcatError> {
        Ok(Vec::new())
    }

    fn ints(&mut self) -> Result<Vec<i64>, ConcatError> {
        Ok(Vec::new())
    }

    fn append_dense(&mut self, to: &mut Vec<Values>, values: Values) -> Result<(), ConcatError> {
        to.push(values);
        Ok(())
    }

    fn append_ints(&mut self, to: &mut Vec<i64>, values: impl Iterator<Item = i64>) -> Result<(), ConcatError> {
        to.extend(values);
        Ok(())
    }
}

/// What every part must share with the first before its values are looked at.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Dense,
    /// The rank.
    Sparse(usize),
    /// The number of row-splits levels.
    Ragged(usize),
}

impl Layout {
    fn of(t: &Tensor) -> Layout {
        match t {
            Tensor::Dense(_) => Layout::Dense,
            Tensor::Sparse(s) => Layout::Sparse(s.dense_shape.len()),
            Tensor::Ragged(r) => Layout::Ragged(r.nested_row_splits().len()),
        }
    }

    fn check(self, part: usize, t: &Tensor) -> Result<(), ConcatError> {
        let (expected, found, fits) = match (self, t) {
            (Layout::Dense, Tensor::Dense(_)) => return Ok(()),
            (Layout::Sparse(rank), Tensor::Sparse(s)) => {
                let found = s.dense_shape.len();
                (rank, found, found == rank && s.indices.ncols() == rank)
            }
            (Layout::Ragged(levels), Tensor::Ragged(r)) => {
                let found = r.nested_row_splits().len();
                (levels, found, found == levels)
            }
            _ => return Err(ConcatError::MixedKinds { part }),
        };
        if fits {
            Ok(())
        } else {
            Err(ConcatError::Ranks { part, expected, found })
        }
    }
}

/// One tensor joined over the parts so far.
#[derive(Debug)]
pub(crate) enum Joined<S: JoinStore> {
    Dense(DenseJoin<S>),
    Sparse {
        /// Row-major, `rank` per value, the first of each offset by the rows before.
        indices: S::Ints,
        values: DenseJoin<S>,
        /// Rows so far, then the largest extents.
        dense_shape: Vec<i64>,
    },
    Ragged {
        flat: DenseJoin<S>,
        /// Per level: the row splits so far (from 0) and the last of them.
        splits: Vec<(S::Ints, i64)>,
        uniform: Vec<Option<i64>>,
        splits_dtype: SplitsDType,
    },
}

impl<S: JoinStore> Joined<S> {
    /// The join of `first`, numbered `part` in errors.
    pub(crate) fn new(store: &mut S, part: usize, first: Tensor) -> Result<Joined<S>, S::Error> {
        let mut joined = match &first {
            Tensor::Dense(d) => Joined::Dense(DenseJoin::new(store, part, d, 2)?),
            Tensor::Sparse(s) => Joined::Sparse {
                indices: store.ints()?,
                values: DenseJoin::new(store, part, &s.values, 1)?,
                dense_shape: vec![0; s.dense_shape.len()],
            },
            Tensor::Ragged(r) => Joined::Ragged {
                flat: DenseJoin::new(store, part, r.flat_values(), 1)?,
                splits: r
                    .nested_row_splits()
                    .iter()
                    .map(|_| {
                        let mut s = store.ints()?;
                        store.append_ints(&mut s, std::iter::once(0))?;
                        Ok((s, 0))
                    })
                    .collect::<Result<_, S::Error>>()?,
                uniform: r.uniform_row_lengths().to_vec(),
                splits_dtype: r.row_splits_dtype(),
            },
        };
        joined.push(store, part, first)?;
        Ok(joined)
    }

    fn layout(&self) -> Layout {
        match self {
            Joined::Dense(_) => Layout::Dense,
            Joined::Sparse { dense_shape, .. } => Layout::Sparse(dense_shape.len()),
            Joined::Ragged { splits, .. } => Layout::Ragged(splits.len()),
        }
    }

    /// Appends the part numbered `part`; nothing of it is kept when it does not fit.
    pub(crate) fn push(&mut self, store: &mut S, part: usize, t: Tensor) -> Result<(), S::Error> {
        self.layout().check(part, &t)?;
        match (self, t) {
            (Joined::Dense(j), Tensor::Dense(d)) => j.push(store, part, d),
            (
                Joined::Sparse {
                    indices,
                    values,
                    dense_shape,
                },
                Tensor::Sparse(s),
            ) => {
                values.check(part, &s.values)?;
                let offset = dense_shape[0];
                store.append_ints(
                    indices,
                    s.indices
                        .indexed_iter()
                        .map(|((_, c), &v)| if c == 0 { v + offset } else { v }),
                )?;
                dense_shape[0] += s.dense_shape[0];
                for (d, &e) in dense_shape.iter_mut().zip(&s.dense_shape).skip(1) {
                    *d = (*d).max(e);
                }
                values.push(store, part, s.values)
            }
            (Joined::Ragged { flat, splits, .. }, Tensor::Ragged(r)) => {
                flat.check(part, r.flat_values())?;
                let (values, nested, _, _) = r.into_parts();
                for ((to, last), s) in splits.iter_mut().zip(&nested) {
                    let base = *last;
                    store.append_ints(to, s.iter().skip(1).map(|x| x.wrapping_add(base)))?;
                    if let Some(&l) = s.get(1..).and_then(<[i64]>::last) {
                        *last = l.wrapping_add(base);
                    }
                }
                flat.push(store, part, values)
            }
            _ => Err(ConcatError::MixedKinds { part }.into()),
        }
    }
}

/// A dense array joined along its first dimension; when `pad` (a dense feature of rank 2 or
/// more), each part's second dimension is padded to the widest.
#[derive(Debug)]
pub(crate) struct DenseJoin<S: JoinStore> {
    dtype: DType,
    /// The first part's shape (the others must match its rank and dimensions from `from` on).
    first: Vec<usize>,
    from: usize,
    pad: bool,
    /// Rows and second dimension of every part, in order.
    parts: Vec<(usize, usize)>,
    values: S::Dense,
}

impl<S: JoinStore> DenseJoin<S> {
    fn new(store: &mut S, part: usize, first: &DenseTensor, from: usize) -> Result<DenseJoin<S>, S::Error> {
        if first.shape().is_empty() {
            return Err(ConcatError::Ranks {
                part,
                expected: 1,
                found: 0,
            }
            .into());
        }
        Ok(DenseJoin {
            dtype: first.dtype(),
            first: first.shape().to_vec(),
            from,
            pad: from == 2 && first.shape().len() >= 2,
            parts: Vec::new(),
            values: store.dense(first.dtype())?,
        })
    }

    /// Whether `t` has the first part's dtype, rank and dimensions from `from` on.
    fn check(&self, part: usize, t: &DenseTensor) -> Result<(), ConcatError> {
        if t.dtype() != self.dtype {
            return Err(ConcatError::DTypes {
                part,
                expected: self.dtype,
                found: t.dtype(),
            });
        }
        if t.shape().len() != self.first.len() {
            return Err(ConcatError::Ranks {
                part,
                expected: self.first.len(),
                found: t.shape().len(),
            });
        }
        let inner = |shape: &[usize]| shape.get(self.from..).unwrap_or(&[]).to_vec();
        if inner(t.shape()) != inner(&self.first) {
            return Err(ConcatError::InnerShape {
                part,
                expected: inner(&self.first),
                found: inner(t.shape()),
            });
        }
        Ok(())
    }

    fn push(&mut self, store: &mut S, part: usize, t: DenseTensor) -> Result<(), S::Error> {
        self.check(part, &t)?;
        let (shape, values) = t.into_parts();
        store.append_dense(&mut self.values, values)?;
        self.parts
            .push((shape.first().copied().unwrap_or(0), shape.get(1).copied().unwrap_or(1)));
        Ok(())
    }

    /// The joined shape.
    pub(crate) fn shape(&self) -> Vec<usize> {
        let mut shape = self.first.clone();
        if let Some(d) = shape.first_mut() {
            *d = self.parts.iter().map(|p| p.0).sum();
        }
        if self.pad {
            shape[1] = self.width();
        }
        shape
    }

    fn width(&self) -> usize {
        self.parts.iter().map(|p| p.1).max().unwrap_or(0)
    }

    /// The width every part's rows are padded to, when some part is narrower.
    pub(crate) fn padded_width(&self) -> Option<usize> {
        let width = self.width();
        (self.pad && self.parts.iter().any(|p| p.1 != width)).then_some(width)
    }

    /// Values per unit of the second dimension (the product of the dimensions after it).
    pub(crate) fn inner(&self) -> usize {
        self.first.get(2..).unwrap_or(&[]).iter().product()
    }

    /// Rows and second dimension of every part, in order.
    #[cfg(feature = "npz")]
    pub(crate) fn parts(&self) -> &[(usize, usize)] {
        &self.parts
    }

    #[cfg(feature = "npz")]
    pub(crate) fn values(&self) -> &S::Dense {
        &self.values
    }
}

/// The joined dense tensor: the first part's buffer with the others appended, or every row
/// copied once, padded, into a new one.
fn finish_dense(j: DenseJoin<Memory>) -> Result<DenseTensor, ConcatError> {
    let shape = j.shape();
    let Some(width) = j.padded_width() else {
        let total: usize = j.values.iter().map(Values::len).sum();
        let mut parts = j.values.into_iter();
        let mut out = parts.next().unwrap_or_else(|| Values::empty(j.dtype));
        out.reserve(total.saturating_sub(out.len()));
        for p in parts {
            out.append(p);
        }
        return Ok(DenseTensor::from_values(out, &shape)?);
    };
    let inner_len = j.inner();
    let zero = Values::zero(j.dtype);
    let row = width * inner_len;
    let mut out = Values::with_capacity(j.dtype, shape[0].saturating_mul(row));
    for (&(rows, w), values) in j.parts.iter().zip(j.values) {
        let have = w * inner_len;
        if have == row {
            out.append(values);
        } else {
            for r in 0..rows {
                out.extend_from_range(&values, r * have..(r + 1) * have);
                out.extend_pad(&zero, row - have);
            }
        }
    }
    Ok(DenseTensor::from_values(out, &shape)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(values: Vec<i64>, shape: &[usize]) -> Tensor {
        Tensor::Dense(DenseTensor::from_values(Values::Int64(values), shape).unwrap())
    }

    #[test]
    fn dense_parts_are_repadded_to_the_widest() {
        let joined = concat_batch(vec![dense(vec![1, 2], &[2, 1]), dense(vec![3, 4, 5, 6], &[1, 4])]).unwrap();
        let d = joined.as_dense().unwrap();
        assert_eq!(d.shape(), &[3, 4]);
        assert_eq!(d.as_i64().unwrap(), &[1, 0, 0, 0, 2, 0, 0, 0, 3, 4, 5, 6]);
    }

    #[test]
    fn mismatches_are_typed() {
        assert_eq!(concat_batch(vec![]), Err(ConcatError::NoTensors));
        let f = Tensor::Dense(DenseTensor::from_values(Values::Float32(vec![1.0]), &[1]).unwrap());
        assert!(matches!(
            concat_batch(vec![dense(vec![1], &[1]), f]),
            Err(ConcatError::DTypes { part: 1, .. })
        ));
        assert!(matches!(
            concat_batch(vec![dense(vec![1], &[1]), dense(vec![1], &[1, 1])]),
            Err(ConcatError::Ranks { part: 1, .. })
        ));
    }

    #[test]
    fn a_part_at_a_time_joins_as_a_list_does() {
        let parts = || {
            vec![
                dense(vec![1, 2], &[2, 1]),
                dense(vec![3, 4, 5, 6], &[1, 4]),
                dense(vec![7], &[1, 1]),
            ]
        };
        let mut joiner = BatchJoiner::new();
        assert!(joiner.is_empty());
        for p in parts() {
            joiner.push(p).unwrap();
        }
        assert_eq!(joiner.len(), 3);
        assert_eq!(joiner.finish(), concat_batch(parts()));
        assert_eq!(BatchJoiner::new().finish(), Err(ConcatError::NoTensors));
        // A part that does not fit is refused and the parts before it stay joinable.
        let mut joiner = BatchJoiner::new();
        joiner.push(dense(vec![1], &[1])).unwrap();
        assert!(matches!(
            joiner.push(dense(vec![1], &[1, 1])),
            Err(ConcatError::Ranks { part: 1, .. })
        ));
        assert_eq!(joiner.finish(), Ok(dense(vec![1], &[1])));
    }

    #[test]
    fn a_later_part_of_another_kind_is_reported_before_an_earlier_dtype() {
        let f = Tensor::Dense(DenseTensor::from_values(Values::Float32(vec![1.0]), &[1]).unwrap());
        let ragged = Tensor::Ragged(
            RaggedTensor::new(
                DenseTensor::from_values(Values::Int64(vec![1]), &[1]).unwrap(),
                vec![vec![0, 1]],
                vec![None],
                SplitsDType::Int64,
            )
            .unwrap(),
        );
        assert_eq!(
            concat_batch(vec![dense(vec![1], &[1]), f, ragged]),
            Err(ConcatError::MixedKinds { part: 2 })
        );
    }
}

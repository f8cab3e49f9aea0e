//! Joining batch tensors of one feature along the batch dimension ([`concat_batch`]), as
//! parsing the batches together would have given them. Parts are moved, not cloned: numbers
//! are copied once into the joined buffer (not at all for the first part when no padding is
//! needed), and padding is written in that same pass.

use ndarray::Array2;

use super::tensor::{DenseTensor, RaggedTensor, ShapeError, SparseTensor, Tensor};
use super::values::{DType, Values};

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
    match first {
        Tensor::Dense(_) => concat_dense(collect(parts, |t| match t {
            Tensor::Dense(d) => Some(d),
            _ => None,
        })?)
        .map(Tensor::Dense),
        Tensor::Sparse(_) => concat_sparse(collect(parts, |t| match t {
            Tensor::Sparse(s) => Some(s),
            _ => None,
        })?)
        .map(Tensor::Sparse),
        Tensor::Ragged(_) => concat_ragged(collect(parts, |t| match t {
            Tensor::Ragged(r) => Some(r),
            _ => None,
        })?)
        .map(Tensor::Ragged),
    }
}

/// The parts as one kind, or the index of the first part of another.
fn collect<T>(parts: Vec<Tensor>, pick: impl Fn(Tensor) -> Option<T>) -> Result<Vec<T>, ConcatError> {
    parts
        .into_iter()
        .enumerate()
        .map(|(part, t)| pick(t).ok_or(ConcatError::MixedKinds { part }))
        .collect()
}

/// Checks that every part has the first part's dtype, rank and dimensions from `from` on.
fn check_dense<'a>(parts: impl Iterator<Item = &'a DenseTensor>, from: usize) -> Result<(), ConcatError> {
    let mut first: Option<&DenseTensor> = None;
    for (part, p) in parts.enumerate() {
        let Some(f) = first else {
            if p.shape().is_empty() {
                return Err(ConcatError::Ranks {
                    part,
                    expected: 1,
                    found: 0,
                });
            }
            first = Some(p);
            continue;
        };
        if p.dtype() != f.dtype() {
            return Err(ConcatError::DTypes {
                part,
                expected: f.dtype(),
                found: p.dtype(),
            });
        }
        if p.shape().len() != f.shape().len() {
            return Err(ConcatError::Ranks {
                part,
                expected: f.shape().len(),
                found: p.shape().len(),
            });
        }
        let inner = |t: &DenseTensor| t.shape().get(from..).unwrap_or(&[]).to_vec();
        if inner(p) != inner(f) {
            return Err(ConcatError::InnerShape {
                part,
                expected: inner(f),
                found: inner(p),
            });
        }
    }
    Ok(())
}

fn concat_dense(parts: Vec<DenseTensor>) -> Result<DenseTensor, ConcatError> {
    check_dense(parts.iter(), 2)?;
    let rank = parts[0].shape().len();
    if rank == 1 {
        return concat_dense_rows(parts);
    }
    let inner: Vec<usize> = parts[0].shape()[2..].to_vec();
    let inner_len: usize = inner.iter().product();
    let width = parts.iter().map(|p| p.shape()[1]).max().unwrap_or(0);
    if parts.iter().all(|p| p.shape()[1] == width) {
        return concat_dense_rows(parts);
    }
    let batch: usize = parts.iter().map(|p| p.shape()[0]).sum();
    let dtype = parts[0].dtype();
    let zero = Values::zero(dtype);
    let row = width * inner_len;
    let mut out = Values::with_capacity(dtype, batch.saturating_mul(row));
    for p in parts {
        let (shape, values) = p.into_parts();
        let have = shape[1] * inner_len;
        if have == row {
            out.append(values);
        } else {
            for r in 0..shape[0] {
                out.extend_from_range(&values, r * have..(r + 1) * have);
                out.extend_pad(&zero, row - have);
            }
        }
    }
    let mut shape = vec![batch, width];
    shape.extend(inner);
    Ok(DenseTensor::from_values(out, &shape)?)
}

/// Stacks dense tensors along their first dimension (all other dimensions equal, checked by
/// the caller), moving the first part's buffer and appending the others to it.
fn concat_dense_rows(parts: Vec<DenseTensor>) -> Result<DenseTensor, ConcatError> {
    let total: usize = parts.iter().map(DenseTensor::len).sum();
    let rows: usize = parts.iter().map(|p| p.shape().first().copied().unwrap_or(0)).sum();
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Err(ConcatError::NoTensors);
    };
    let (mut shape, mut out) = first.into_parts();
    out.reserve(total.saturating_sub(out.len()));
    for p in parts {
        out.append(p.into_values());
    }
    if let Some(d) = shape.first_mut() {
        *d = rows;
    }
    Ok(DenseTensor::from_values(out, &shape)?)
}

fn concat_sparse(parts: Vec<SparseTensor>) -> Result<SparseTensor, ConcatError> {
    let rank = parts[0].dense_shape.len();
    for (part, p) in parts.iter().enumerate() {
        if p.dense_shape.len() != rank || p.indices.ncols() != rank {
            return Err(ConcatError::Ranks {
                part,
                expected: rank,
                found: p.dense_shape.len(),
            });
        }
    }
    check_dense(parts.iter().map(|p| &p.values), 1)?;
    let n: usize = parts.iter().map(|p| p.indices.nrows()).sum();
    let mut indices = Vec::with_capacity(n * rank);
    let mut dense_shape = vec![0i64; rank];
    let mut offset = 0i64;
    let mut values = Vec::with_capacity(parts.len());
    for p in parts {
        for row in p.indices.rows() {
            indices.push(row[0] + offset);
            indices.extend(row.iter().skip(1));
        }
        offset += p.dense_shape[0];
        for (d, &e) in dense_shape.iter_mut().zip(&p.dense_shape).skip(1) {
            *d = (*d).max(e);
        }
        values.push(p.values);
    }
    dense_shape[0] = offset;
    let values = concat_dense_rows(values)?;
    let len = indices.len();
    Ok(SparseTensor {
        indices: Array2::from_shape_vec((values.len(), rank), indices).map_err(|_| ShapeError {
            len,
            shape: vec![values.len(), rank],
        })?,
        values,
        dense_shape,
    })
}

fn concat_ragged(parts: Vec<RaggedTensor>) -> Result<RaggedTensor, ConcatError> {
    let levels = parts[0].nested_row_splits().len();
    for (part, p) in parts.iter().enumerate() {
        if p.nested_row_splits().len() != levels {
            return Err(ConcatError::Ranks {
                part,
                expected: levels,
                found: p.nested_row_splits().len(),
            });
        }
    }
    check_dense(parts.iter().map(RaggedTensor::flat_values), 1)?;
    let uniform = parts[0].uniform_row_lengths().to_vec();
    let splits_dtype = parts[0].row_splits_dtype();
    let mut splits: Vec<Vec<i64>> = (0..levels)
        .map(|level| {
            let n = parts.iter().map(|p| p.nested_row_splits()[level].len()).sum::<usize>();
            let mut s = Vec::with_capacity(n);
            s.push(0);
            s
        })
        .collect();
    let mut flat = Vec::with_capacity(parts.len());
    for p in parts {
        let (values, nested, _, _) = p.into_parts();
        for (level, s) in nested.iter().enumerate() {
            let base = *splits[level].last().unwrap_or(&0);
            splits[level].extend(s.iter().skip(1).map(|x| x.wrapping_add(base)));
        }
        flat.push(values);
    }
    // The parts may come from `validate = false` parses: join them as they are.
    Ok(RaggedTensor::new_unchecked(
        concat_dense_rows(flat)?,
        splits,
        uniform,
        splits_dtype,
    ))
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
}

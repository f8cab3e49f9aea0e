//! Sparse tensors in the state saver, as TensorFlow 1.15's `batch_sequences_with_states` takes
//! them (it keeps them in a `SparseTensorsMap`): the input form, TensorFlow's index checks
//! (`SparseTensor::IndicesValid`), a sparse sequence held by its steps (the first index
//! dimension is time), and the batched form `TakeManySparseFromTensorsMap` gives: the entry's
//! number (and for a sequence the step within the segment) prepended to every index, the values
//! in batch order, and a dense shape of `batch_size` (the option's, also in a small last batch)
//! followed by the largest dense shape among the batch's entries.

use std::fmt;

use ndarray::{Array2, ArrayD};

use super::dtype::{SaverTensor, TensorDType};
use crate::parse::{DType, DenseTensor, SparseTensor, Values};

/// A sparse tensor as a state saver input: a sequence (`dense_shape` `[steps, d...]`, the
/// first index column the step) or a context value.
///
/// Nothing is checked when it is made; the saver checks it as it reads the example, with
/// TensorFlow's rules and words ([`SparseError`]).
///
/// ```
/// use ndarray::{arr1, arr2};
/// use tfrec::parse::DenseTensor;
/// use tfrec::state_saver::{SaverTensor, SequenceInput, SparseInput};
///
/// // Steps 0 and 2 of a [3, 4] sequence hold one value each.
/// let values = SaverTensor::from(DenseTensor::from(arr1(&[1.5f32, 2.5]).into_dyn()));
/// let x = SparseInput::new(arr2(&[[0i64, 1], [2, 3]]).into_dyn(), values, vec![3, 4]);
/// let input = SequenceInput::new("k").sparse_sequence("x", x);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SparseInput {
    /// `[N, rank]` indices, in row-major order, no index twice, each within `dense_shape`.
    pub indices: ArrayD<i64>,
    /// The `N` values (of any shape: they are taken in row-major order).
    pub values: SaverTensor,
    /// The dense shape, one dimension per index column.
    pub dense_shape: Vec<i64>,
}

impl SparseInput {
    /// A sparse tensor of `indices` `[N, rank]`, `N` `values` and `dense_shape` `[rank]`.
    pub fn new(indices: ArrayD<i64>, values: SaverTensor, dense_shape: Vec<i64>) -> SparseInput {
        SparseInput {
            indices,
            values,
            dense_shape,
        }
    }
}

/// Why a sparse input is refused, in TensorFlow's words where TensorFlow has them. Every one
/// stops the saver (as a [`super::StateSaverError::Sparse`], naming the example).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SparseError {
    /// Indices that are not `[values, rank]`.
    #[error(
        "sparse tensor '{name}': indices must be [{values}, {rank}] (one row per value, one column per \
         dimension), not {found:?}"
    )]
    IndicesShape {
        /// The tensor's name.
        name: String,
        /// How many values there are.
        values: usize,
        /// How many dimensions `dense_shape` has.
        rank: usize,
        /// The indices' shape.
        found: Vec<usize>,
    },
    /// A dense shape with a dimension below 0.
    #[error("sparse tensor '{name}': dense_shape {shape:?} has a negative dimension")]
    NegativeShape {
        /// The tensor's name.
        name: String,
        /// The dense shape.
        shape: Vec<i64>,
    },
    /// A sparse sequence without a dimension after time (TensorFlow's `SparseTensor` splitting).
    #[error("sparse sequence '{name}': rank of input SparseTensor should be > 1, but saw rank: {rank}")]
    SequenceRank {
        /// The tensor's name.
        name: String,
        /// Its rank.
        rank: usize,
    },
    /// `pad = false` and a sparse sequence whose first dimension is 0 or not a multiple of
    /// `num_unroll`.
    #[error(
        "SparseTensor {name} first dimension should be a multiple of: {num_unroll}, but saw value: {length}. \
         Consider setting pad=True."
    )]
    NotMultiple {
        /// The tensor's name.
        name: String,
        /// The configured `num_unroll`.
        num_unroll: usize,
        /// Its first dimension.
        length: i64,
    },
    /// `pad = false` and sequences (dense or sparse) whose first dimensions differ.
    #[error("all sequences must have the same first dimension, but saw {lengths:?}")]
    UnequalLengths {
        /// The first dimension of each sequence: the dense ones, then the sparse ones, each by
        /// name.
        lengths: Vec<i64>,
    },
    /// An index out of bounds, out of row-major order or repeated (the first such row).
    #[error("sparse tensor '{name}': indices[{row}] = [{}] {problem}", join(.index))]
    BadIndex {
        /// The tensor's name.
        name: String,
        /// The index's row.
        row: usize,
        /// The index.
        index: Vec<i64>,
        /// What is wrong with it.
        problem: IndexProblem,
    },
    /// An example whose sparse tensors have other names than the first example's.
    #[error(
        "sparse sequences {} and context {}, but the first example's are {} and {}",
        names(.sequences),
        names(.context),
        names(.first_sequences),
        names(.first_context)
    )]
    Names {
        /// This example's sparse sequences.
        sequences: Vec<String>,
        /// This example's sparse context values.
        context: Vec<String>,
        /// The first example's sparse sequences.
        first_sequences: Vec<String>,
        /// The first example's sparse context values.
        first_context: Vec<String>,
    },
    /// Values of another type than the first example's.
    #[error("{what} '{name}' has dtype {found}, but the first example's is {expected}")]
    DType {
        /// `sparse sequences` or `sparse context`.
        what: &'static str,
        /// The tensor's name.
        name: String,
        /// The first example's type.
        expected: TensorDType,
        /// This example's.
        found: TensorDType,
    },
}

/// What is wrong with an index (TensorFlow's `SparseTensor::IndicesValid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexProblem {
    /// A coordinate below 0 or not below its dimension.
    OutOfBounds {
        /// The shape the index must fit (a sequence's first dimension padded).
        shape: Vec<i64>,
    },
    /// Smaller than the index before it, in row-major order.
    OutOfOrder,
    /// Equal to the index before it.
    Repeated,
}

impl fmt::Display for IndexProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexProblem::OutOfBounds { shape } => write!(f, "is out of bounds: need 0 <= index < [{}]", join(shape)),
            IndexProblem::OutOfOrder => f.write_str("is out of order. Many sparse ops require sorted indices"),
            IndexProblem::Repeated => f.write_str("is repeated"),
        }
    }
}

/// `1,2,3`, as TensorFlow prints an index.
fn join(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// `['a', 'b']`, as Python prints a list of names.
fn names(v: &[String]) -> String {
    let quoted: Vec<String> = v.iter().map(|n| format!("'{n}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// TensorFlow's `SparseTensor::IndicesValid`: each of the `rows` rows of `indices`
/// (`shape.len()` columns) within `shape`, and each after the previous in row-major order. The
/// first bad row is named, its bounds checked before its order.
pub(crate) fn check_indices(name: &str, indices: &[i64], rows: usize, shape: &[i64]) -> Result<(), SparseError> {
    let rank = shape.len();
    let mut previous: Option<&[i64]> = None;
    for row in 0..rows {
        let index = &indices[row * rank..(row + 1) * rank];
        let problem = if index.iter().zip(shape).any(|(&i, &d)| i < 0 || i >= d) {
            Some(IndexProblem::OutOfBounds { shape: shape.to_vec() })
        } else {
            match previous.map(|p| index.cmp(p)) {
                Some(std::cmp::Ordering::Less) => Some(IndexProblem::OutOfOrder),
                Some(std::cmp::Ordering::Equal) => Some(IndexProblem::Repeated),
                _ => None,
            }
        };
        if let Some(problem) = problem {
            return Err(SparseError::BadIndex {
                name: name.to_owned(),
                row,
                index: index.to_vec(),
                problem,
            });
        }
        previous = Some(index);
    }
    Ok(())
}

/// A sparse tensor's name and element type, which every example must share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SparseSlot {
    pub name: String,
    pub element: TensorDType,
    /// The carrier's dtype (follows from `element`).
    pub dtype: DType,
}

impl SparseSlot {
    /// Carrier values per value (a complex128 rides as two int64 words).
    fn width(&self) -> usize {
        if self.element == TensorDType::Complex128 {
            2
        } else {
            1
        }
    }
}

/// A sparse input checked for its shapes, with its parts taken apart.
#[derive(Debug)]
pub(crate) struct SparseParts {
    pub slot: SparseSlot,
    /// `N * rank` indices, row-major.
    pub indices: Vec<i64>,
    pub values: Values,
    /// How many values there are.
    pub rows: usize,
    pub shape: Vec<i64>,
}

impl SparseParts {
    /// For a sequence: its rank is above 1 (a step and at least one more dimension).
    pub fn check_sequence_rank(&self) -> Result<(), SparseError> {
        if self.shape.len() < 2 {
            return Err(SparseError::SequenceRank {
                name: self.slot.name.clone(),
                rank: self.shape.len(),
            });
        }
        Ok(())
    }

    /// The first dimension (a sequence's steps).
    pub fn first_dimension(&self) -> i64 {
        self.shape.first().copied().unwrap_or(0)
    }
}

/// Checks that `input`'s parts fit together (`[N, rank]` indices for `N` values and a dense
/// shape of `rank` dimensions, none negative) and takes it apart.
pub(crate) fn parts(name: &str, input: SparseInput) -> Result<SparseParts, SparseError> {
    let SparseInput {
        indices,
        values,
        dense_shape,
    } = input;
    let n: usize = values.shape().iter().product();
    let rank = dense_shape.len();
    if indices.shape() != [n, rank] {
        return Err(SparseError::IndicesShape {
            name: name.to_owned(),
            values: n,
            rank,
            found: indices.shape().to_vec(),
        });
    }
    if dense_shape.iter().any(|&d| d < 0) {
        return Err(SparseError::NegativeShape {
            name: name.to_owned(),
            shape: dense_shape,
        });
    }
    let slot = SparseSlot {
        name: name.to_owned(),
        element: values.element(),
        dtype: values.carrier().dtype(),
    };
    Ok(SparseParts {
        slot,
        // Row-major whatever the array's layout.
        indices: indices.iter().copied().collect(),
        values: values.into_carrier().into_values(),
        rows: n,
        shape: dense_shape,
    })
}

/// A sparse tensor held for its example's segments.
///
/// For a sequence, `steps[i]` is value `i`'s step (the first index column) and `indices` the
/// other columns, `shape` the dense shape of one step; the steps are sorted (the indices were
/// checked), so a segment's values are one range. For a context value `steps` is empty.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HeldSparse {
    steps: Vec<i64>,
    /// `indices.len() / shape.len()` rows (each value's index, without the step).
    indices: Vec<i64>,
    /// The values in their carrier (`SparseSlot::width` per value).
    values: Values,
    /// How many values there are.
    rows: usize,
    shape: Vec<i64>,
}

impl HeldSparse {
    /// A sparse sequence padded to `padded` steps, its indices checked against
    /// `[padded, shape[1..]]` (with padding, TensorFlow replaces the first dimension by the
    /// padded length, keeping steps past the dense sequences' length).
    pub fn sequence(parts: SparseParts, padded: usize) -> Result<HeldSparse, SparseError> {
        parts.check_sequence_rank()?;
        let SparseParts {
            slot,
            indices,
            values,
            rows,
            mut shape,
        } = parts;
        let rank = shape.len();
        shape[0] = i64::try_from(padded).unwrap_or(i64::MAX);
        check_indices(&slot.name, &indices, rows, &shape)?;
        let steps = indices.chunks_exact(rank).map(|row| row[0]).collect();
        let indices = indices.chunks_exact(rank).flat_map(|row| &row[1..]).copied().collect();
        Ok(HeldSparse {
            steps,
            indices,
            values,
            rows,
            shape: shape.split_off(1),
        })
    }

    /// A sparse context value, its indices checked against its dense shape.
    pub fn context(parts: SparseParts) -> Result<HeldSparse, SparseError> {
        let SparseParts {
            slot,
            indices,
            values,
            rows,
            shape,
        } = parts;
        check_indices(&slot.name, &indices, rows, &shape)?;
        Ok(HeldSparse {
            steps: Vec::new(),
            indices,
            values,
            rows,
            shape,
        })
    }

    /// The range of values in steps `[start, end)`.
    fn step_range(&self, start: usize, end: usize) -> std::ops::Range<usize> {
        let at = |t: usize| {
            let t = i64::try_from(t).unwrap_or(i64::MAX);
            self.steps.partition_point(|&s| s < t)
        };
        at(start)..at(end)
    }
}

/// Two entries of one batch whose sparse tensor `name` has different ranks (TensorFlow's
/// `TakeManySparseFromTensorsMap` refuses them too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RankMismatch {
    /// Each rank seen, sorted (of one step, for a sequence).
    pub ranks: Vec<usize>,
}

/// What a batched sparse tensor is built from: each entry's held tensor, and for a sequence the
/// entry's segment.
pub(crate) struct Pieces<'a> {
    pub slot: &'a SparseSlot,
    pub batch_size: usize,
    pub entries: Vec<(&'a HeldSparse, Option<usize>)>,
}

impl Pieces<'_> {
    /// The batched tensor: indices `[entry, (step,) index...]`, the values in entry order (steps
    /// in order within an entry), dense shape `[batch_size, (num_unroll,) max...]`.
    pub fn batch(&self, num_unroll: usize) -> Result<SparseTensor, RankMismatch> {
        let mut ranks: Vec<usize> = self.entries.iter().map(|(h, _)| h.shape.len()).collect();
        ranks.sort_unstable();
        ranks.dedup();
        if ranks.len() > 1 {
            return Err(RankMismatch { ranks });
        }
        let rank = ranks.first().copied().unwrap_or(0);
        let is_sequence = self.entries.iter().any(|(_, s)| s.is_some());
        let lead = if is_sequence { 2 } else { 1 };
        let ranges: Vec<_> = self
            .entries
            .iter()
            .map(|(h, segment)| match segment {
                Some(s) => h.step_range(s * num_unroll, (s + 1) * num_unroll),
                None => 0..h.rows,
            })
            .collect();
        let total: usize = ranges.iter().map(ExactSizeIterator::len).sum();
        let width = self.slot.width();
        let mut indices = Vec::with_capacity(total * (lead + rank));
        let mut values = Values::with_capacity(self.slot.dtype, total * width);
        let mut max = vec![0i64; rank];
        for (b, ((held, segment), range)) in self.entries.iter().zip(&ranges).enumerate() {
            for (m, &d) in max.iter_mut().zip(&held.shape) {
                *m = (*m).max(d);
            }
            let first_step = segment.map_or(0, |s| (s * num_unroll) as i64);
            for i in range.clone() {
                indices.push(b as i64);
                if segment.is_some() {
                    indices.push(held.steps[i] - first_step);
                }
                indices.extend_from_slice(&held.indices[i * rank..(i + 1) * rank]);
            }
            let same = values.extend_from_range(&held.values, range.start * width..range.end * width);
            debug_assert!(same, "dtypes are checked against the schema on insertion");
        }
        let mut dense_shape = vec![self.batch_size as i64];
        if is_sequence {
            dense_shape.push(num_unroll as i64);
        }
        dense_shape.extend(max);
        let mut value_shape = vec![total];
        if width > 1 {
            value_shape.push(width);
        }
        Ok(SparseTensor {
            // Both follow from the counts above.
            indices: Array2::from_shape_vec((total, lead + rank), indices).expect("one row per value"),
            values: DenseTensor::from_values(values, &value_shape).expect("width values per value"),
            dense_shape,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, ArrayD, IxDyn};

    fn input(indices: &[&[i64]], values: &[i64], shape: &[i64]) -> SparseInput {
        // The indices' columns are their rows' (which may disagree with `shape`, to test that).
        let columns = indices.first().map_or(shape.len(), |r| r.len());
        let flat: Vec<i64> = indices.iter().flat_map(|r| r.iter().copied()).collect();
        let indices = ArrayD::from_shape_vec(IxDyn(&[indices.len(), columns]), flat).expect("rows of one length");
        let values = SaverTensor::from(DenseTensor::from(arr1(values).into_dyn()));
        SparseInput::new(indices, values, shape.to_vec())
    }

    fn bad_index(result: Result<(), SparseError>) -> (usize, Vec<i64>, IndexProblem) {
        match result {
            Err(SparseError::BadIndex {
                row, index, problem, ..
            }) => (row, index, problem),
            other => panic!("expected a bad index, got {other:?}"),
        }
    }

    #[test]
    fn indices_are_checked_as_tensorflow_checks_them() {
        let shape = [4, 3];
        assert_eq!(check_indices("s", &[0, 1, 0, 2, 3, 0], 3, &shape), Ok(()));
        assert_eq!(
            bad_index(check_indices("s", &[1, 2, 0, 0], 2, &shape)),
            (1, vec![0, 0], IndexProblem::OutOfOrder)
        );
        assert_eq!(
            bad_index(check_indices("s", &[1, 2, 1, 2], 2, &shape)),
            (1, vec![1, 2], IndexProblem::Repeated)
        );
        let out = IndexProblem::OutOfBounds { shape: shape.to_vec() };
        assert_eq!(
            bad_index(check_indices("s", &[1, 3], 1, &shape)),
            (0, vec![1, 3], out.clone())
        );
        assert_eq!(
            bad_index(check_indices("s", &[0, 0, -1, 0], 2, &shape)),
            (1, vec![-1, 0], out)
        );
        // Bounds are checked before order, row by row.
        let e = check_indices("sp", &[2, 0, 1, 0, 9, 9], 3, &shape).expect_err("row 1 is out of order");
        assert_eq!(
            e.to_string(),
            "sparse tensor 'sp': indices[1] = [1,0] is out of order. Many sparse ops require sorted indices"
        );
        let e = check_indices("sp", &[4, 0, 0], 1, &[4, 3, 4]).expect_err("out of bounds");
        assert_eq!(
            e.to_string(),
            "sparse tensor 'sp': indices[0] = [4,0,0] is out of bounds: need 0 <= index < [4,3,4]"
        );
        // Rank 0: one value at most (a second index is the same empty index).
        assert_eq!(check_indices("s", &[], 1, &[]), Ok(()));
        assert_eq!(
            bad_index(check_indices("s", &[], 2, &[])),
            (1, vec![], IndexProblem::Repeated)
        );
    }

    #[test]
    fn parts_refuse_mismatched_shapes_without_panicking() {
        let wrong_rank = input(&[&[0, 1]], &[5], &[3]);
        assert!(matches!(
            parts("s", wrong_rank),
            Err(SparseError::IndicesShape { values: 1, rank: 1, ref found, .. }) if found == &[1, 2]
        ));
        let too_few_rows = input(&[&[0, 1]], &[5, 6], &[3, 2]);
        assert!(matches!(
            parts("s", too_few_rows),
            Err(SparseError::IndicesShape { .. })
        ));
        let flat_indices = SparseInput::new(
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![0, 1]).expect("shape"),
            SaverTensor::from(DenseTensor::from(arr1(&[5i64]).into_dyn())),
            vec![3, 2],
        );
        assert!(matches!(
            parts("s", flat_indices),
            Err(SparseError::IndicesShape { .. })
        ));
        let negative = input(&[], &[], &[3, -1]);
        assert!(matches!(parts("s", negative), Err(SparseError::NegativeShape { .. })));
        let rank_one = parts("s", input(&[&[1]], &[5], &[3])).expect("parts");
        assert_eq!(
            HeldSparse::sequence(rank_one, 4).map(|_| ()),
            Err(SparseError::SequenceRank {
                name: "s".into(),
                rank: 1
            })
        );
    }

    #[test]
    fn a_sequence_is_held_by_step_and_checked_against_its_padded_length() {
        // dense_shape[0] (9) becomes the padded length 4: step 3 is kept, step 4 is refused.
        let p = parts("s", input(&[&[1, 0, 2], &[3, 1, 0]], &[7, 8], &[9, 2, 3])).expect("parts");
        let held = HeldSparse::sequence(p, 4).expect("valid");
        assert_eq!(held.steps, [1, 3]);
        assert_eq!(held.indices, [0, 2, 1, 0]);
        assert_eq!(held.shape, [2, 3]);
        assert_eq!(held.step_range(0, 2), 0..1);
        assert_eq!(held.step_range(2, 4), 1..2);
        let p = parts("s", input(&[&[4, 0, 0]], &[1], &[9, 2, 3])).expect("parts");
        let e = HeldSparse::sequence(p, 4).expect_err("step 4 of 4");
        assert_eq!(bad_index(Err(e)).2, IndexProblem::OutOfBounds { shape: vec![4, 2, 3] });
    }

    fn batch_of(held: &[(&HeldSparse, Option<usize>)], batch_size: usize, num_unroll: usize) -> SparseTensor {
        let slot = SparseSlot {
            name: "s".into(),
            element: TensorDType::Int64,
            dtype: DType::Int64,
        };
        Pieces {
            slot: &slot,
            batch_size,
            entries: held.to_vec(),
        }
        .batch(num_unroll)
        .expect("one rank")
    }

    #[test]
    fn a_batch_prepends_entry_and_step_and_takes_the_largest_shape() {
        let a = parts(
            "a",
            input(&[&[1, 2, 0], &[3, 0, 1], &[3, 1, 1]], &[7, 8, 9], &[5, 3, 4]),
        )
        .expect("parts");
        let a = HeldSparse::sequence(a, 6).expect("valid");
        let b = parts("b", input(&[&[0, 0, 5], &[2, 1, 1]], &[1, 2], &[3, 2, 6])).expect("parts");
        let b = HeldSparse::sequence(b, 4).expect("valid");
        // Segment 0 of both (steps 0 and 1), then segment 1 of both (steps 2 and 3).
        let first = batch_of(&[(&a, Some(0)), (&b, Some(0))], 2, 2);
        assert_eq!(first.indices.as_slice(), Some(&[0, 1, 2, 0, 1, 0, 0, 5][..]));
        assert_eq!(first.values.as_i64(), Some(&[7, 1][..]));
        assert_eq!(first.dense_shape, [2, 2, 3, 6]);
        let second = batch_of(&[(&a, Some(1)), (&b, Some(1))], 2, 2);
        assert_eq!(
            second.indices.as_slice(),
            Some(&[0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 1][..])
        );
        assert_eq!(second.values.as_i64(), Some(&[8, 9, 2][..]));
        // A small last batch keeps batch_size; a padded segment holds nothing.
        let last = batch_of(&[(&a, Some(2))], 2, 2);
        assert_eq!(last.indices.shape(), [0, 4]);
        assert_eq!(last.dense_shape, [2, 2, 3, 4]);
        // Context: the entry prepended, the largest shape.
        let c0 = HeldSparse::context(parts("c", input(&[&[0, 2], &[1, 6]], &[5, 6], &[2, 7])).expect("p")).expect("ok");
        let c1 = HeldSparse::context(parts("c", input(&[], &[], &[3, 1])).expect("parts")).expect("ok");
        let context = batch_of(&[(&c0, None), (&c1, None)], 2, 2);
        assert_eq!(context.indices.as_slice(), Some(&[0, 0, 2, 0, 1, 6][..]));
        assert_eq!(context.dense_shape, [2, 3, 7]);
    }

    #[test]
    fn ranks_that_differ_within_a_batch_are_refused() {
        let two = HeldSparse::context(parts("c", input(&[&[0, 1]], &[1], &[2, 2])).expect("parts")).expect("ok");
        let one = HeldSparse::context(parts("c", input(&[&[1]], &[1], &[2])).expect("parts")).expect("ok");
        let slot = SparseSlot {
            name: "c".into(),
            element: TensorDType::Int64,
            dtype: DType::Int64,
        };
        let pieces = Pieces {
            slot: &slot,
            batch_size: 2,
            entries: vec![(&two, None), (&one, None)],
        };
        assert_eq!(pieces.batch(2).map(|_| ()), Err(RankMismatch { ranks: vec![1, 2] }));
    }

    #[test]
    fn complex_values_keep_both_words() {
        let raw: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let values = SaverTensor::from_raw(TensorDType::Complex128, &[2], &raw).expect("two complex values");
        let indices = ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![0, 0, 1, 1]).expect("shape");
        let p = parts("z", SparseInput::new(indices, values, vec![2, 2])).expect("parts");
        let slot = p.slot.clone();
        let held = HeldSparse::sequence(p, 2).expect("valid");
        let batched = Pieces {
            slot: &slot,
            batch_size: 1,
            entries: vec![(&held, Some(0))],
        }
        .batch(2)
        .expect("one rank");
        assert_eq!(batched.values.shape(), [2, 2]);
        let (back, shape) = super::super::restore_raw(TensorDType::Complex128, &batched.values).expect("restored");
        assert_eq!((back, shape), (raw, vec![2]));
    }
}

//! The input side: one example (key, length, sequences, context, initial states), its checks
//! (TensorFlow's `SequenceQueueingStateSaver` validation, §5.1 and §5.6 of the semantics
//! notes), and the flat, typed form the barrier keeps it in.

use std::collections::BTreeMap;
use std::fmt;

use ndarray::Dimension;

use super::dtype::{SaverTensor, TensorDType};
use super::error::StateSaverError;
use super::key::key_text;
use super::sparse::{self, HeldSparse, SparseError, SparseInput, SparseParts, SparseSlot};
use crate::parse::{DType, DenseTensor, Values};

/// One input example: a unique key, named time-major sequences of one length, named context
/// values and named initial states. Sequences and context values may also be sparse
/// ([`SparseInput`]); a sparse sequence's first dimension is time.
///
/// ```
/// use ndarray::{arr2, ArrayD};
/// use tfrec::state_saver::SequenceInput;
///
/// let x: ArrayD<f32> = arr2(&[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).into_dyn(); // 3 steps of 2
/// let input = SequenceInput::new("user-7")
///     .sequence("x", x)
///     .context("label", ndarray::arr0(1i64).into_dyn())
///     .initial_state("h", ArrayD::<f32>::zeros(vec![4]));
/// assert_eq!(input.steps(), Some(3));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SequenceInput {
    /// The example's key (any bytes); unique among the examples in flight.
    pub key: Vec<u8>,
    /// Valid steps (`input_length`); `None` means all the sequences' steps.
    pub length: Option<usize>,
    /// Time-major sequences `[steps, ...]`, all with the same `steps`.
    pub sequences: BTreeMap<String, SaverTensor>,
    /// Values copied into every segment.
    pub context: BTreeMap<String, SaverTensor>,
    /// Sparse time-major sequences `[steps, ...]` (rank 2 or more). With padding their first
    /// dimension becomes the padded length of the dense sequences (or, without dense
    /// sequences, of the longest sparse one); without, it must equal the others'.
    pub sparse_sequences: BTreeMap<String, SparseInput>,
    /// Sparse values copied into every segment.
    pub sparse_context: BTreeMap<String, SparseInput>,
    /// The states of the first segment; these override the saver's default initial states.
    pub initial_states: BTreeMap<String, SaverTensor>,
}

/// Arrays an input accepts: [`SaverTensor`] (any numeric element type), [`DenseTensor`] and
/// owned `ndarray` arrays of i64, f32 or bytes.
pub trait IntoTensor {
    /// The tensor.
    fn into_tensor(self) -> SaverTensor;
}

impl IntoTensor for SaverTensor {
    fn into_tensor(self) -> SaverTensor {
        self
    }
}

impl IntoTensor for DenseTensor {
    fn into_tensor(self) -> SaverTensor {
        SaverTensor::from(self)
    }
}

impl<D: Dimension> IntoTensor for ndarray::Array<f32, D> {
    fn into_tensor(self) -> SaverTensor {
        DenseTensor::from(self.into_dyn()).into()
    }
}

impl<D: Dimension> IntoTensor for ndarray::Array<i64, D> {
    fn into_tensor(self) -> SaverTensor {
        DenseTensor::from(self.into_dyn()).into()
    }
}

impl<D: Dimension> IntoTensor for ndarray::Array<Vec<u8>, D> {
    fn into_tensor(self) -> SaverTensor {
        DenseTensor::from(self.into_dyn()).into()
    }
}

impl SequenceInput {
    /// An example with this key (text or any bytes) and nothing else yet.
    pub fn new(key: impl Into<Vec<u8>>) -> SequenceInput {
        SequenceInput {
            key: key.into(),
            ..SequenceInput::default()
        }
    }

    /// Sets the valid length (default: the sequences' steps; at most that).
    pub fn length(mut self, length: usize) -> Self {
        self.length = Some(length);
        self
    }

    /// Adds a sequence `[steps, ...]`.
    pub fn sequence(mut self, name: impl Into<String>, values: impl IntoTensor) -> Self {
        self.sequences.insert(name.into(), values.into_tensor());
        self
    }

    /// Adds a context value.
    pub fn context(mut self, name: impl Into<String>, values: impl IntoTensor) -> Self {
        self.context.insert(name.into(), values.into_tensor());
        self
    }

    /// Adds a sparse sequence (its dense shape `[steps, ...]`).
    pub fn sparse_sequence(mut self, name: impl Into<String>, values: SparseInput) -> Self {
        self.sparse_sequences.insert(name.into(), values);
        self
    }

    /// Adds a sparse context value.
    pub fn sparse_context(mut self, name: impl Into<String>, values: SparseInput) -> Self {
        self.sparse_context.insert(name.into(), values);
        self
    }

    /// Adds an initial state.
    pub fn initial_state(mut self, name: impl Into<String>, values: impl IntoTensor) -> Self {
        self.initial_states.insert(name.into(), values.into_tensor());
        self
    }

    /// The steps of the first dense sequence (by name), if there is one with a time dimension.
    pub fn steps(&self) -> Option<usize> {
        self.sequences.values().next().and_then(|t| t.shape().first().copied())
    }
}

/// A tensor's name, element type, carrier dtype and carrier shape (per step, for a sequence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Slot {
    pub name: String,
    pub element: TensorDType,
    /// The carrier's dtype (follows from `element`).
    pub dtype: DType,
    /// The carrier's shape: the tensor's, with a last axis of 2 for complex128.
    pub shape: Vec<usize>,
}

impl Slot {
    /// Values per row (per step for a sequence, the whole tensor otherwise).
    pub fn row(&self) -> usize {
        self.shape.iter().product()
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = match self.element {
            TensorDType::Complex128 => &self.shape[..self.shape.len().saturating_sub(1)],
            _ => &self.shape[..],
        };
        write!(f, "{} {:?}", self.element, shape)
    }
}

/// The names, dtypes and shapes every example must share: the first example's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Schema {
    pub sequences: Vec<Slot>,
    pub context: Vec<Slot>,
    pub states: Vec<Slot>,
    pub sparse_sequences: Vec<SparseSlot>,
    pub sparse_context: Vec<SparseSlot>,
}

/// A tensor's slot and its flat values.
pub(crate) type Tagged = (Slot, Values);

/// An example checked and flattened, ready for the barrier.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub key: Vec<u8>,
    /// The true length (`total_length`).
    pub length: usize,
    /// Rows held by each sequence (before padding).
    pub steps: usize,
    /// Segments: `ceil(steps / num_unroll)`.
    pub count: usize,
    pub sequences: Vec<(Slot, Values)>,
    pub context: Vec<(Slot, Values)>,
    pub states: Vec<(Slot, Values)>,
    pub sparse_sequences: Vec<(SparseSlot, HeldSparse)>,
    pub sparse_context: Vec<(SparseSlot, HeldSparse)>,
}

impl Prepared {
    pub fn schema(&self) -> Schema {
        let slots = |v: &[(Slot, Values)]| v.iter().map(|(s, _)| s.clone()).collect();
        let sparse_slots = |v: &[(SparseSlot, HeldSparse)]| v.iter().map(|(s, _)| s.clone()).collect();
        Schema {
            sequences: slots(&self.sequences),
            context: slots(&self.context),
            states: slots(&self.states),
            sparse_sequences: sparse_slots(&self.sparse_sequences),
            sparse_context: sparse_slots(&self.sparse_context),
        }
    }
}

impl Schema {
    /// Checks that `p` (the example at input `position`) has exactly this schema.
    pub fn check(&self, position: u64, p: &Prepared) -> Result<(), StateSaverError> {
        self.check_sparse(p).map_err(|error| StateSaverError::Sparse {
            index: position,
            key: key_text(&p.key),
            error: Box::new(error),
        })?;
        let parts: [(&'static str, &[Slot], &[Tagged]); 3] = [
            ("sequence", &self.sequences, &p.sequences),
            ("context", &self.context, &p.context),
            ("initial state", &self.states, &p.states),
        ];
        for (what, expected, found) in parts {
            let mismatch = |name: &str, expected: String, found: String| StateSaverError::Mismatch {
                key: key_text(&p.key),
                what,
                name: name.to_owned(),
                expected,
                found,
            };
            for e in expected {
                match found.iter().find(|(s, _)| s.name == e.name) {
                    None => return Err(mismatch(&e.name, e.to_string(), "nothing".into())),
                    Some((s, _)) if s != e => return Err(mismatch(&e.name, e.to_string(), s.to_string())),
                    Some(_) => {}
                }
            }
            if let Some((s, _)) = found.iter().find(|(s, _)| !expected.iter().any(|e| e.name == s.name)) {
                return Err(mismatch(&s.name, "no such name".into(), s.to_string()));
            }
        }
        Ok(())
    }

    /// The sparse tensors' names and types against the first example's.
    fn check_sparse(&self, p: &Prepared) -> Result<(), SparseError> {
        let names = |v: &[(SparseSlot, HeldSparse)]| v.iter().map(|(s, _)| s.name.clone()).collect::<Vec<_>>();
        let first = |v: &[SparseSlot]| v.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        let (sequences, context) = (names(&p.sparse_sequences), names(&p.sparse_context));
        if sequences != first(&self.sparse_sequences) || context != first(&self.sparse_context) {
            return Err(SparseError::Names {
                sequences,
                context,
                first_sequences: first(&self.sparse_sequences),
                first_context: first(&self.sparse_context),
            });
        }
        let parts = [
            ("sparse sequences", &self.sparse_sequences, &p.sparse_sequences),
            ("sparse context", &self.sparse_context, &p.sparse_context),
        ];
        for (what, expected, found) in parts {
            for (e, (f, _)) in expected.iter().zip(found.iter()) {
                if e.element != f.element {
                    return Err(SparseError::DType {
                        what,
                        name: f.name.clone(),
                        expected: e.element,
                        found: f.element,
                    });
                }
            }
        }
        Ok(())
    }
}

/// A carrier's values in row-major order (the tensor's own buffer: no copy).
pub(crate) fn into_flat(tensor: DenseTensor) -> Values {
    tensor.into_values()
}

/// The settings the checks depend on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    pub num_unroll: usize,
    pub pad: bool,
}

/// Checks one example, the one at input `position` (everything that does not need the other
/// examples), and flattens it.
pub(crate) fn prepare(
    input: SequenceInput,
    position: u64,
    rules: Rules,
    default_states: &BTreeMap<String, SaverTensor>,
) -> Result<Prepared, StateSaverError> {
    let SequenceInput {
        key,
        length,
        sequences,
        context,
        sparse_sequences,
        sparse_context,
        initial_states,
    } = input;
    let shown = || key_text(&key);
    let sparse_error = |error: SparseError| StateSaverError::Sparse {
        index: position,
        key: key_text(&key),
        error: Box::new(error),
    };
    let names = sequences.keys().chain(context.keys()).chain(initial_states.keys());
    let sparse_names = sparse_sequences.keys().chain(sparse_context.keys());
    if let Some(name) = names
        .chain(sparse_names)
        .chain(default_states.keys())
        .find(|n| n.contains(':'))
    {
        return Err(StateSaverError::BadName {
            key: shown(),
            name: name.clone(),
        });
    }
    if sequences.is_empty() && sparse_sequences.is_empty() {
        return Err(StateSaverError::NoSequences { key: shown() });
    }
    let sparse_parts = |map: BTreeMap<String, SparseInput>| -> Result<Vec<SparseParts>, SparseError> {
        map.into_iter().map(|(name, t)| sparse::parts(&name, t)).collect()
    };
    let sparse_sequences = sparse_parts(sparse_sequences).map_err(sparse_error)?;
    for p in &sparse_sequences {
        p.check_sequence_rank().map_err(sparse_error)?;
    }
    let mut lengths = Vec::with_capacity(sequences.len());
    for (name, t) in &sequences {
        // The tensor's first axis, not the carrier's: a complex128 scalar has a carrier [2].
        match t.shape().first() {
            Some(&n) => lengths.push((name.clone(), n)),
            None => {
                return Err(StateSaverError::NotASequence {
                    key: shown(),
                    name: name.clone(),
                })
            }
        }
    }
    if lengths.iter().any(|(_, n)| *n != lengths[0].1) {
        return Err(StateSaverError::UnequalLengths { key: shown(), lengths });
    }
    let u = rules.num_unroll;
    let (first, steps) = sparse_steps(&lengths, &sparse_sequences, rules).map_err(sparse_error)?;
    if steps == 0 {
        return Err(StateSaverError::EmptySequence {
            key: shown(),
            name: first,
        });
    }
    if !rules.pad && steps % u != 0 {
        return Err(StateSaverError::NotMultiple {
            key: shown(),
            name: first,
            num_unroll: u,
            length: steps,
        });
    }
    let count = steps.div_ceil(u);
    let padded = count.saturating_mul(u);
    if i32::try_from(padded).is_err() {
        return Err(StateSaverError::LengthOverflow {
            key: shown(),
            length: padded,
        });
    }
    let sparse_sequences = sparse_sequences
        .into_iter()
        .map(|p| Ok((p.slot.clone(), HeldSparse::sequence(p, padded)?)))
        .collect::<Result<Vec<_>, SparseError>>()
        .map_err(sparse_error)?;
    let sparse_context = sparse_parts(sparse_context)
        .and_then(|parts| {
            parts
                .into_iter()
                .map(|p| Ok((p.slot.clone(), HeldSparse::context(p)?)))
                .collect::<Result<Vec<_>, SparseError>>()
        })
        .map_err(sparse_error)?;
    let length = length.unwrap_or(steps);
    if length > steps {
        return Err(StateSaverError::LengthTooLong {
            key: shown(),
            length,
            steps,
        });
    }
    let mut states = default_states.clone();
    states.extend(initial_states);
    if states.is_empty() {
        return Err(StateSaverError::NoStates { key: shown() });
    }
    let slot = |name: String, t: &SaverTensor, skip_time: bool| Slot {
        name,
        element: t.element(),
        dtype: t.carrier().dtype(),
        shape: t.carrier().shape()[usize::from(skip_time)..].to_vec(),
    };
    let flatten = |map: BTreeMap<String, SaverTensor>, skip_time: bool| -> Vec<(Slot, Values)> {
        map.into_iter()
            .map(|(name, t)| (slot(name, &t, skip_time), into_flat(t.into_carrier())))
            .collect()
    };
    Ok(Prepared {
        key,
        length,
        steps,
        count,
        sequences: flatten(sequences, true),
        context: flatten(context, false),
        states: flatten(states, false),
        sparse_sequences,
        sparse_context,
    })
}

/// The example's steps and the sequence they are named after, given the dense sequences'
/// `lengths` (all equal) and the sparse sequences (TensorFlow 1.15's rules). With padding the
/// dense sequences' length, or without dense sequences the longest sparse first dimension;
/// without padding every sparse first dimension must be a non-zero multiple of `num_unroll`,
/// and all first dimensions, dense and sparse, the same.
fn sparse_steps(
    lengths: &[(String, usize)],
    sparse: &[SparseParts],
    rules: Rules,
) -> Result<(String, usize), SparseError> {
    let as_steps = |d: i64| usize::try_from(d).unwrap_or(usize::MAX);
    let longest_sparse = || {
        sparse
            .iter()
            .max_by_key(|p| p.first_dimension())
            .map(|p| (p.slot.name.clone(), as_steps(p.first_dimension())))
    };
    if rules.pad {
        return Ok(lengths.first().cloned().or_else(longest_sparse).unwrap_or_default());
    }
    let u = i64::try_from(rules.num_unroll).unwrap_or(i64::MAX);
    for p in sparse {
        let n = p.first_dimension();
        if n == 0 || n % u != 0 {
            return Err(SparseError::NotMultiple {
                name: p.slot.name.clone(),
                num_unroll: rules.num_unroll,
                length: n,
            });
        }
    }
    let all: Vec<i64> = lengths
        .iter()
        .map(|(_, n)| i64::try_from(*n).unwrap_or(i64::MAX))
        .chain(sparse.iter().map(SparseParts::first_dimension))
        .collect();
    if all.iter().any(|&n| n != all[0]) {
        return Err(SparseError::UnequalLengths { lengths: all });
    }
    Ok(lengths.first().cloned().or_else(longest_sparse).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, ShapeBuilder};

    #[test]
    fn flattening_follows_row_major_order_whatever_the_layout() {
        let row_major = Array2::from_shape_vec((2, 3), vec![1i64, 2, 3, 4, 5, 6]).expect("shape");
        let column_major = Array2::from_shape_vec((2, 3).f(), vec![1i64, 4, 2, 5, 3, 6]).expect("shape");
        let sliced = row_major.slice(ndarray::s![.., 1..]).to_owned();
        assert_eq!(
            into_flat(row_major.into_tensor().into_carrier()),
            Values::Int64(vec![1, 2, 3, 4, 5, 6])
        );
        assert_eq!(
            into_flat(column_major.into_tensor().into_carrier()),
            Values::Int64(vec![1, 2, 3, 4, 5, 6])
        );
        assert_eq!(
            into_flat(sliced.into_tensor().into_carrier()),
            Values::Int64(vec![2, 3, 5, 6])
        );
        let mut transposed = Array2::from_shape_vec((2, 2), vec![1.0f32, 2.0, 3.0, 4.0]).expect("shape");
        transposed.swap_axes(0, 1);
        assert_eq!(
            into_flat(transposed.into_tensor().into_carrier()),
            Values::Float32(vec![1.0, 3.0, 2.0, 4.0])
        );
    }

    #[test]
    fn padding_rounds_the_segment_count_up() {
        let rules = Rules {
            num_unroll: 2,
            pad: true,
        };
        let states = BTreeMap::from([("h".to_owned(), ndarray::ArrayD::<f32>::zeros(vec![1]).into_tensor())]);
        let input = SequenceInput::new("k").sequence("x", Array2::<f32>::zeros((3, 4)));
        let p = prepare(input, 0, rules, &states).expect("valid");
        assert_eq!((p.length, p.steps, p.count), (3, 3, 2));
        assert_eq!(p.sequences[0].0.shape, [4]);
        let input = SequenceInput::new("k").sequence("x", Array2::<f32>::zeros((3, 4)));
        let strict = Rules {
            num_unroll: 2,
            pad: false,
        };
        assert!(matches!(
            prepare(input, 0, strict, &states),
            Err(StateSaverError::NotMultiple {
                length: 3,
                num_unroll: 2,
                ..
            })
        ));
    }

    fn sparse(indices: &[[i64; 2]], shape: [i64; 2]) -> SparseInput {
        let flat: Vec<i64> = indices.iter().flatten().copied().collect();
        let values: Vec<i64> = (1..=indices.len() as i64).collect();
        SparseInput::new(
            ndarray::ArrayD::from_shape_vec(vec![indices.len(), 2], flat).expect("two columns"),
            ndarray::Array1::from(values).into_tensor(),
            shape.to_vec(),
        )
    }

    fn sparse_rules(pad: bool) -> (Rules, BTreeMap<String, SaverTensor>) {
        let states = BTreeMap::from([("h".to_owned(), ndarray::ArrayD::<f32>::zeros(vec![1]).into_tensor())]);
        (Rules { num_unroll: 2, pad }, states)
    }

    fn sparse_error(r: Result<Prepared, StateSaverError>) -> (u64, SparseError) {
        match r {
            Err(StateSaverError::Sparse { index, error, .. }) => (index, *error),
            other => panic!("expected a sparse error, got {other:?}"),
        }
    }

    #[test]
    fn padding_gives_a_sparse_sequence_the_dense_length_or_the_longest_sparse_one() {
        let (rules, states) = sparse_rules(true);
        let dense = || Array2::<f32>::zeros((3, 1));
        // Dense length 3 pads to 4: step 3 is in, dense_shape[0] (9) does not count.
        let input = SequenceInput::new("k")
            .sequence("a", dense())
            .sparse_sequence("s", sparse(&[[3, 0]], [9, 1]));
        let p = prepare(input, 0, rules, &states).expect("valid");
        assert_eq!((p.length, p.steps, p.count), (3, 3, 2));
        let input = SequenceInput::new("k")
            .sequence("a", dense())
            .sparse_sequence("s", sparse(&[[4, 0]], [9, 1]));
        let (index, e) = sparse_error(prepare(input, 7, rules, &states));
        assert_eq!(index, 7);
        assert!(matches!(e, SparseError::BadIndex { row: 0, .. }), "{e}");
        // Sparse only: the longest first dimension.
        let input = SequenceInput::new("k")
            .sparse_sequence("p", sparse(&[[0, 0]], [3, 2]))
            .sparse_sequence("q", sparse(&[[4, 1]], [5, 2]));
        let p = prepare(input, 0, rules, &states).expect("valid");
        assert_eq!((p.length, p.steps, p.count), (5, 5, 3));
        let input = SequenceInput::new("k").sparse_sequence("p", sparse(&[], [0, 2]));
        assert!(matches!(
            prepare(input, 0, rules, &states),
            Err(StateSaverError::EmptySequence { .. })
        ));
    }

    #[test]
    fn without_padding_sparse_first_dimensions_divide_and_match() {
        let (rules, states) = sparse_rules(false);
        let dense = || Array2::<f32>::zeros((4, 1));
        let good = SequenceInput::new("k")
            .sequence("a", dense())
            .sparse_sequence("s", sparse(&[[3, 1]], [4, 2]));
        assert_eq!(prepare(good, 0, rules, &states).expect("valid").count, 2);
        let odd = SequenceInput::new("k")
            .sequence("a", dense())
            .sparse_sequence("s", sparse(&[], [3, 2]));
        let e = sparse_error(prepare(odd, 0, rules, &states)).1;
        assert_eq!(
            e.to_string(),
            "SparseTensor s first dimension should be a multiple of: 2, but saw value: 3. Consider setting pad=True."
        );
        let longer = SequenceInput::new("k")
            .sequence("a", dense())
            .sparse_sequence("s", sparse(&[], [6, 2]));
        let e = sparse_error(prepare(longer, 0, rules, &states)).1;
        assert_eq!(e, SparseError::UnequalLengths { lengths: vec![4, 6] });
    }

    #[test]
    fn bad_sparse_inputs_are_errors_naming_the_example() {
        let (rules, states) = sparse_rules(true);
        let dense = || Array2::<f32>::zeros((2, 1));
        let rank_one = SparseInput::new(
            ndarray::ArrayD::from_shape_vec(vec![1, 1], vec![1]).expect("shape"),
            ndarray::arr1(&[2i64]).into_tensor(),
            vec![2],
        );
        let input = SequenceInput::new("k")
            .sequence("a", dense())
            .sparse_sequence("s", rank_one);
        let e = prepare(input, 3, rules, &states).expect_err("rank 1");
        assert_eq!(
            e.to_string(),
            "input example 3: sparse sequence 's': rank of input SparseTensor should be > 1, but saw rank: 1"
        );
        assert_eq!(e.kind_name(), "input");
        let unordered = sparse(&[[1, 0], [0, 1]], [2, 2]);
        let input = SequenceInput::new("k")
            .sequence("a", dense())
            .sparse_context("c", unordered);
        let e = sparse_error(prepare(input, 0, rules, &states)).1;
        assert!(e.to_string().contains("indices[1] = [0,1] is out of order"), "{e}");
        let input = SequenceInput::new("k")
            .sequence("a", dense())
            .sparse_sequence("b:c", sparse(&[], [2, 1]));
        assert!(matches!(
            prepare(input, 0, rules, &states),
            Err(StateSaverError::BadName { .. })
        ));
    }

    #[test]
    fn sparse_names_and_types_must_stay_the_first_examples() {
        let (rules, states) = sparse_rules(true);
        let dense = || Array2::<f32>::zeros((2, 1));
        let first = SequenceInput::new("a")
            .sequence("x", dense())
            .sparse_sequence("s", sparse(&[], [2, 1]));
        let schema = prepare(first, 0, rules, &states).expect("valid").schema();
        let without = SequenceInput::new("b").sequence("x", dense());
        let p = prepare(without, 1, rules, &states).expect("valid alone");
        let e = schema.check(1, &p).expect_err("no sparse sequence");
        assert_eq!(
            e.to_string(),
            "input example 1: sparse sequences [] and context [], but the first example's are ['s'] and []"
        );
        let floats = SparseInput::new(
            ndarray::ArrayD::from_shape_vec(vec![0, 2], vec![]).expect("shape"),
            ndarray::Array1::<f32>::zeros(0).into_tensor(),
            vec![2, 1],
        );
        let other = SequenceInput::new("c")
            .sequence("x", dense())
            .sparse_sequence("s", floats);
        let p = prepare(other, 2, rules, &states).expect("valid alone");
        let e = schema.check(2, &p).expect_err("float32, not int64");
        assert!(e
            .to_string()
            .ends_with("sparse sequences 's' has dtype float32, but the first example's is int64"));
    }
}

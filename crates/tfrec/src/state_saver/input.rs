//! The input side: one example (key, length, sequences, context, initial states), its checks
//! (TensorFlow's `SequenceQueueingStateSaver` validation, §5.1 and §5.6 of the semantics
//! notes), and the flat, typed form the barrier keeps it in.

use std::collections::BTreeMap;
use std::fmt;

use ndarray::Dimension;

use super::dtype::{SaverTensor, TensorDType};
use super::error::StateSaverError;
use super::key::key_text;
use crate::parse::{DType, DenseTensor, Values};

/// One input example: a unique key, named time-major sequences of one length, named context
/// values and named initial states.
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

    /// Adds an initial state.
    pub fn initial_state(mut self, name: impl Into<String>, values: impl IntoTensor) -> Self {
        self.initial_states.insert(name.into(), values.into_tensor());
        self
    }

    /// The steps of the first sequence (by name), if there is one with a time dimension.
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
}

impl Prepared {
    pub fn schema(&self) -> Schema {
        let slots = |v: &[(Slot, Values)]| v.iter().map(|(s, _)| s.clone()).collect();
        Schema {
            sequences: slots(&self.sequences),
            context: slots(&self.context),
            states: slots(&self.states),
        }
    }
}

impl Schema {
    /// Checks that `p` has exactly this schema.
    pub fn check(&self, p: &Prepared) -> Result<(), StateSaverError> {
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

/// Checks one example (everything that does not need the other examples) and flattens it.
pub(crate) fn prepare(
    input: SequenceInput,
    rules: Rules,
    default_states: &BTreeMap<String, SaverTensor>,
) -> Result<Prepared, StateSaverError> {
    let SequenceInput {
        key,
        length,
        sequences,
        context,
        initial_states,
    } = input;
    let shown = || key_text(&key);
    let names = sequences.keys().chain(context.keys()).chain(initial_states.keys());
    if let Some(name) = names.chain(default_states.keys()).find(|n| n.contains(':')) {
        return Err(StateSaverError::BadName {
            key: shown(),
            name: name.clone(),
        });
    }
    if sequences.is_empty() {
        return Err(StateSaverError::NoSequences { key: shown() });
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
    let (first, steps) = lengths[0].clone();
    if lengths.iter().any(|(_, n)| *n != steps) {
        return Err(StateSaverError::UnequalLengths { key: shown(), lengths });
    }
    if steps == 0 {
        return Err(StateSaverError::EmptySequence {
            key: shown(),
            name: first,
        });
    }
    let u = rules.num_unroll;
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
    })
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
        let p = prepare(input, rules, &states).expect("valid");
        assert_eq!((p.length, p.steps, p.count), (3, 3, 2));
        assert_eq!(p.sequences[0].0.shape, [4]);
        let input = SequenceInput::new("k").sequence("x", Array2::<f32>::zeros((3, 4)));
        let strict = Rules {
            num_unroll: 2,
            pad: false,
        };
        assert!(matches!(
            prepare(input, strict, &states),
            Err(StateSaverError::NotMultiple {
                length: 3,
                num_unroll: 2,
                ..
            })
        ));
    }
}

//! A batch of segments as the consumer sees it (`key`, `next_key`, `sequence`, `length`…,
//! `sequences`, `context`, `state`), how it is assembled from the barrier's entries, and
//! `save_state` for it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::barrier::{Entry, Taken};
use super::dtype::TensorDType;
use super::error::StateSaverError;
use super::input::{Schema, Slot};
use super::readers::Shared;
use super::sparse::{Pieces, SparseSlot};
use crate::parse::{DenseTensor, SparseTensor, Values};

/// One batch of segments. Entry `j` of every field belongs to the same segment.
///
/// Before the next batch is taken, every state must be saved with [`Batch::save_state`] (unless
/// every entry is the last segment of its sequence).
#[derive(Debug)]
pub struct Batch {
    /// `"%05d_of_%05d:<key>"`: segment number, segment count and the example's key (bytes, as
    /// the key was given; [`super::key_text`] shows one as text).
    pub key: Vec<Vec<u8>>,
    /// The next segment's key, or `"STOP:<key>"` for an example's last segment.
    pub next_key: Vec<Vec<u8>>,
    /// The segment's number in its sequence, from 0.
    pub sequence: Vec<i32>,
    /// The number of segments of the sequence.
    pub sequence_count: Vec<i32>,
    /// Valid steps in this segment: `min(num_unroll, max(0, total_length - num_unroll * sequence))`.
    pub length: Vec<i32>,
    /// The example's valid length.
    pub total_length: Vec<i32>,
    /// The example's insertion index: `-2^63 + k` for the k-th example inserted.
    pub insertion_index: Vec<i64>,
    /// Each sequence's segment, `[batch, num_unroll, ...]`, padded with 0, 0.0 or `""`.
    pub sequences: BTreeMap<String, DenseTensor>,
    /// Each context value, `[batch, ...]`.
    pub context: BTreeMap<String, DenseTensor>,
    /// Each sparse sequence's segment: indices `[entry, step, index...]` (entries in batch
    /// order, steps in order within each), dense shape `[batch_size, num_unroll, max...]`
    /// with `batch_size` the option's (also in a small last batch) and `max` the largest dense
    /// shape of one step among the entries, as TensorFlow 1.15 batches them. Padded steps hold
    /// no values. The values are in their carrier ([`Batch::sequence_type`] tells the type).
    pub sparse_sequences: BTreeMap<String, SparseTensor>,
    /// Each sparse context value: indices `[entry, index...]`, dense shape `[batch_size,
    /// max...]`.
    pub sparse_context: BTreeMap<String, SparseTensor>,
    states: BTreeMap<String, DenseTensor>,
    schema: Arc<Schema>,
    shared: Arc<Shared>,
    batch_no: u64,
}

impl Batch {
    /// Number of segments in the batch (`batch_size`; smaller only for a final small batch).
    pub fn batch_size(&self) -> usize {
        self.key.len()
    }

    /// The states this batch's segments start from, `[batch, ...]`: the initial state for an
    /// example's first segment, afterwards what was saved for it.
    pub fn state(&self, name: &str) -> Result<&DenseTensor, StateSaverError> {
        self.states
            .get(name)
            .ok_or_else(|| StateSaverError::UnknownState { state: name.to_owned() })
    }

    /// Every state, by name.
    pub fn states(&self) -> &BTreeMap<String, DenseTensor> {
        &self.states
    }

    /// The element type of sequence `name`; its tensor in [`Batch::sequences`] holds it in its
    /// carrier ([`super::restore_raw`] gives the elements back).
    pub fn sequence_type(&self, name: &str) -> Option<TensorDType> {
        element_of(&self.schema.sequences, name).or_else(|| sparse_element_of(&self.schema.sparse_sequences, name))
    }

    /// The element type of context value `name` (see [`Batch::sequence_type`]).
    pub fn context_type(&self, name: &str) -> Option<TensorDType> {
        element_of(&self.schema.context, name).or_else(|| sparse_element_of(&self.schema.sparse_context, name))
    }

    /// The element type of state `name` (see [`Batch::sequence_type`]).
    pub fn state_type(&self, name: &str) -> Option<TensorDType> {
        element_of(&self.schema.states, name)
    }

    /// Saves state `name` (shaped and typed like [`Batch::state`]) for the next segment of
    /// each entry; the values of final segments are dropped. A sequence's next segment is
    /// handed out once all its states were saved.
    pub fn save_state(&self, name: &str, values: impl super::IntoTensor) -> Result<(), StateSaverError> {
        self.shared.save_state(self.batch_no, name, values.into_tensor())
    }
}

fn element_of(slots: &[Slot], name: &str) -> Option<TensorDType> {
    slots.iter().find(|s| s.name == name).map(|s| s.element)
}

fn sparse_element_of(slots: &[SparseSlot], name: &str) -> Option<TensorDType> {
    slots.iter().find(|s| s.name == name).map(|s| s.element)
}

/// Appends `src[start..end]` and then `pad` zeros (0, 0.0 or `""`) to `out`.
fn extend(out: &mut Values, src: &Values, start: usize, end: usize, pad: usize) {
    // The schema check at insertion makes every example's dtypes the first one's.
    let same = out.extend_from_range(src, start..end);
    debug_assert!(same, "dtypes are checked against the schema on insertion");
    out.extend_pad(&Values::empty(out.dtype()), pad);
}

fn with_capacity(slot: &Slot, n: usize) -> Values {
    Values::with_capacity(slot.dtype, n)
}

fn tensor(values: Values, shape: Vec<usize>) -> DenseTensor {
    // The value counts follow from the shapes checked on insertion.
    DenseTensor::from_values(values, &shape).expect("value count matches the checked shape")
}

/// Builds the batch: one copy of each segment's rows into `[batch, num_unroll, ...]` arrays,
/// and of its sparse values into TensorFlow's batched form. Fails only for a sparse tensor with
/// different ranks within the batch.
pub(crate) fn assemble(
    taken: Taken,
    schema: Arc<Schema>,
    num_unroll: usize,
    batch_size: usize,
    shared: Arc<Shared>,
) -> Result<Batch, StateSaverError> {
    let Taken {
        batch_no,
        entries,
        states,
    } = taken;
    let b = entries.len();
    let u = num_unroll;
    let mut sequences = BTreeMap::new();
    for (k, slot) in schema.sequences.iter().enumerate() {
        let row = slot.row();
        let mut out = with_capacity(slot, b * u * row);
        for e in &entries {
            let start = (e.segment * u).min(e.steps);
            let end = (start + u).min(e.steps);
            extend(
                &mut out,
                &e.data.sequences[k],
                start * row,
                end * row,
                (u - (end - start)) * row,
            );
        }
        let mut shape = vec![b, u];
        shape.extend_from_slice(&slot.shape);
        sequences.insert(slot.name.clone(), tensor(out, shape));
    }
    let whole = |slots: &[Slot], pick: &dyn Fn(&Entry, usize) -> &Values| {
        let mut map = BTreeMap::new();
        for (k, slot) in slots.iter().enumerate() {
            let row = slot.row();
            let mut out = with_capacity(slot, b * row);
            for e in &entries {
                extend(&mut out, pick(e, k), 0, row, 0);
            }
            let mut shape = vec![b];
            shape.extend_from_slice(&slot.shape);
            map.insert(slot.name.clone(), tensor(out, shape));
        }
        map
    };
    let context = whole(&schema.context, &|e, k| &e.data.context[k]);
    let sparse = |slots: &[SparseSlot], sequence: bool| -> Result<BTreeMap<String, SparseTensor>, StateSaverError> {
        let mut map = BTreeMap::new();
        for (k, slot) in slots.iter().enumerate() {
            let pieces = Pieces {
                slot,
                batch_size,
                entries: entries
                    .iter()
                    .map(|e| {
                        if sequence {
                            (&e.data.sparse_sequences[k], Some(e.segment))
                        } else {
                            (&e.data.sparse_context[k], None)
                        }
                    })
                    .collect(),
            };
            let batched = pieces.batch(u).map_err(|m| StateSaverError::SparseRank {
                name: slot.name.clone(),
                ranks: m.ranks,
            })?;
            map.insert(slot.name.clone(), batched);
        }
        Ok(map)
    };
    let sparse_sequences = sparse(&schema.sparse_sequences, true)?;
    let sparse_context = sparse(&schema.sparse_context, false)?;
    let states = schema
        .states
        .iter()
        .zip(states)
        .map(|(slot, values)| {
            let mut shape = vec![b];
            shape.extend_from_slice(&slot.shape);
            (slot.name.clone(), tensor(values, shape))
        })
        .collect();
    let int = |x: usize| i32::try_from(x).unwrap_or(i32::MAX);
    Ok(Batch {
        key: entries.iter().map(Entry::segment_key).collect(),
        next_key: entries.iter().map(Entry::next_key).collect(),
        sequence: entries.iter().map(|e| int(e.segment)).collect(),
        sequence_count: entries.iter().map(|e| int(e.count)).collect(),
        length: entries
            .iter()
            .map(|e| int(e.length.saturating_sub(u * e.segment).min(u)))
            .collect(),
        total_length: entries.iter().map(|e| int(e.length)).collect(),
        insertion_index: entries.iter().map(|e| e.insertion_index).collect(),
        sequences,
        context,
        sparse_sequences,
        sparse_context,
        states,
        schema,
        shared,
        batch_no,
    })
}

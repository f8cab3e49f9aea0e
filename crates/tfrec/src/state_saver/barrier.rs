//! The barrier: the examples in flight, which of their segments is ready, the order segments
//! are handed out in (smallest insertion index first, so later segments of older examples come
//! before newer examples), and the states saved for the batch just taken (§5.3–5.5).
//!
//! At most one segment of an example is ever ready: segment 0 on insertion, segment i+1 once
//! every state of segment i was saved. So the ready set is a min-heap of example positions.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::dtype::SaverTensor;
use super::error::StateSaverError;
use super::input::{into_flat, Prepared, Schema};
use super::key::{key_text, segment_key, stop_key};
use super::sparse::HeldSparse;
use crate::parse::Values;
use crate::rng::SplitMix64;

/// An example's immutable data, shared with the batches being assembled from it.
#[derive(Debug)]
pub(crate) struct ExampleData {
    /// Flat rows of each sequence, in schema order (`steps * row` values each).
    pub sequences: Vec<Values>,
    /// Each context value, in schema order.
    pub context: Vec<Values>,
    /// Each sparse sequence, by its steps, in schema order.
    pub sparse_sequences: Vec<HeldSparse>,
    /// Each sparse context value, in schema order.
    pub sparse_context: Vec<HeldSparse>,
}

#[derive(Debug)]
struct InFlight {
    key: Arc<[u8]>,
    length: usize,
    steps: usize,
    count: usize,
    /// The segment handed out next; `< count` while the example is in flight.
    next: usize,
    data: Arc<ExampleData>,
    /// The states segment `next` receives: the initial ones, then what was saved.
    states: Vec<Values>,
}

/// One segment taken for a batch, with what assembling it needs.
#[derive(Debug)]
pub(crate) struct Entry {
    pub key: Arc<[u8]>,
    pub segment: usize,
    pub count: usize,
    pub length: usize,
    pub steps: usize,
    pub insertion_index: i64,
    pub data: Arc<ExampleData>,
}

impl Entry {
    /// The segment's key.
    pub fn segment_key(&self) -> Vec<u8> {
        segment_key(self.segment, self.count, &self.key)
    }

    /// The next segment's key, or `"STOP:<key>"` after the last.
    pub fn next_key(&self) -> Vec<u8> {
        if self.segment + 1 >= self.count {
            stop_key(&self.key)
        } else {
            segment_key(self.segment + 1, self.count, &self.key)
        }
    }
}

/// What [`Barrier::take`] hands out: the batch number, its entries and its states, each the
/// flat `[batch, ...]` values of one state in schema order.
#[derive(Debug)]
pub(crate) struct Taken {
    pub batch_no: u64,
    pub entries: Vec<Entry>,
    pub states: Vec<Values>,
}

/// The batch handed out last, and which of its states were saved.
#[derive(Debug)]
struct Pending {
    batch_no: u64,
    size: usize,
    /// (row in the batch, example position) of each entry that is not a final segment.
    rows: Vec<(usize, u64)>,
    /// (key, segment, count) of every entry, for messages.
    members: Vec<(Arc<[u8]>, usize, usize)>,
    saved: Vec<bool>,
}

impl Pending {
    /// The segment keys of every entry, as text.
    fn keys(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|(k, s, c)| key_text(&segment_key(*s, *c, k)))
            .collect()
    }

    /// The segment keys of the entries waiting for their states.
    fn waiting_keys(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|&(j, _)| {
                let (k, s, c) = &self.members[j];
                key_text(&segment_key(*s, *c, k))
            })
            .collect()
    }
}

/// The examples in flight and their segments.
#[derive(Debug, Default)]
pub(crate) struct Barrier {
    /// The first example's names, dtypes and shapes; `None` until one is inserted.
    pub schema: Option<Arc<Schema>>,
    /// In-flight examples by input position.
    examples: FxHashMap<u64, InFlight>,
    /// The positions of the in-flight examples with each key.
    keys: FxHashMap<Arc<[u8]>, Vec<u64>>,
    /// Positions of the examples with a ready segment.
    ready: BinaryHeap<Reverse<u64>>,
    pending: Option<Pending>,
    batches: u64,
    /// The generator of `make_keys_unique`'s suffixes.
    unique: Option<SplitMix64>,
    /// The most examples ever in flight at once.
    pub max_in_flight: usize,
}

impl Barrier {
    pub fn new(make_keys_unique: Option<u64>) -> Barrier {
        Barrier {
            unique: make_keys_unique.map(SplitMix64::new),
            ..Barrier::default()
        }
    }

    pub fn in_flight(&self) -> usize {
        self.examples.len()
    }

    pub fn ready(&self) -> usize {
        self.ready.len()
    }

    /// Inserts the example at input `position`; its first segment is ready at once.
    pub fn insert(&mut self, position: u64, mut p: Prepared) -> Result<(), StateSaverError> {
        match &self.schema {
            Some(schema) => schema.check(position, &p)?,
            None => self.schema = Some(Arc::new(p.schema())),
        }
        if let Some(rng) = &mut self.unique {
            // As `batch_sequences_with_states`: a number below 10^8, unpadded, appended.
            p.key
                .extend_from_slice((rng.next_u64() % 100_000_000).to_string().as_bytes());
        }
        // TensorFlow's barrier refuses a second value for a segment key that is still
        // incomplete. Segment keys embed the count, so only an earlier example with the same
        // count can collide, and only while it has a segment after its ready one (those wait
        // for states). Here examples are inserted only when every state is saved, so the
        // earlier example's `next` segment is ready (complete), not waiting.
        let clash = self.keys.get(p.key.as_slice()).is_some_and(|positions| {
            positions.iter().any(|pos| {
                self.examples
                    .get(pos)
                    .is_some_and(|ex| ex.count == p.count && ex.next + 1 < ex.count)
            })
        });
        if clash {
            return Err(StateSaverError::KeyInFlight { key: key_text(&p.key) });
        }
        let key: Arc<[u8]> = Arc::from(p.key);
        let data = ExampleData {
            sequences: p.sequences.into_iter().map(|(_, v)| v).collect(),
            context: p.context.into_iter().map(|(_, v)| v).collect(),
            sparse_sequences: p.sparse_sequences.into_iter().map(|(_, v)| v).collect(),
            sparse_context: p.sparse_context.into_iter().map(|(_, v)| v).collect(),
        };
        self.keys.entry(Arc::clone(&key)).or_default().push(position);
        self.examples.insert(
            position,
            InFlight {
                key,
                length: p.length,
                steps: p.steps,
                count: p.count,
                next: 0,
                data: Arc::new(data),
                states: p.states.into_iter().map(|(_, v)| v).collect(),
            },
        );
        self.ready.push(Reverse(position));
        self.max_in_flight = self.max_in_flight.max(self.examples.len());
        Ok(())
    }

    /// The error for taking a batch now, if states of the last one are still unsaved.
    pub fn unsaved(&self) -> Option<StateSaverError> {
        let p = self.pending.as_ref()?;
        if p.rows.is_empty() || p.saved.iter().all(|&s| s) {
            return None;
        }
        let schema = self.schema.as_ref()?;
        let states = schema
            .states
            .iter()
            .zip(&p.saved)
            .filter(|(_, &saved)| !saved)
            .map(|(slot, _)| slot.name.clone())
            .collect();
        Some(StateSaverError::UnsavedStates {
            states,
            keys: p.waiting_keys(),
        })
    }

    /// Takes the `n` ready segments with the smallest insertion indices, with the states they
    /// start from. Final segments leave the barrier (freeing their place); the others wait for
    /// their states.
    pub fn take(&mut self, n: usize) -> Taken {
        let schema = self.schema.clone();
        let slots = schema.as_ref().map_or(&[][..], |s| &s.states[..]);
        let mut states: Vec<Values> = slots
            .iter()
            .map(|slot| Values::with_capacity(slot.dtype, n * slot.row()))
            .collect();
        let mut entries = Vec::with_capacity(n);
        let mut rows = Vec::new();
        while entries.len() < n {
            let Some(Reverse(position)) = self.ready.pop() else {
                break;
            };
            let Some(ex) = self.examples.get_mut(&position) else {
                continue;
            };
            let segment = ex.next;
            ex.next += 1;
            let last = ex.next >= ex.count;
            for (out, state) in states.iter_mut().zip(&ex.states) {
                append(out, state);
            }
            if !last {
                rows.push((entries.len(), position));
            }
            entries.push(Entry {
                key: Arc::clone(&ex.key),
                segment,
                count: ex.count,
                length: ex.length,
                steps: ex.steps,
                insertion_index: i64::MIN.wrapping_add(position as i64),
                data: Arc::clone(&ex.data),
            });
            if last {
                if let Some(ex) = self.examples.remove(&position) {
                    if let Some(positions) = self.keys.get_mut(&ex.key) {
                        positions.retain(|&p| p != position);
                        if positions.is_empty() {
                            self.keys.remove(&ex.key);
                        }
                    }
                }
            }
        }
        self.batches += 1;
        self.pending = Some(Pending {
            batch_no: self.batches,
            size: entries.len(),
            rows,
            members: entries
                .iter()
                .map(|e| (Arc::clone(&e.key), e.segment, e.count))
                .collect(),
            saved: vec![false; slots.len()],
        });
        Taken {
            batch_no: self.batches,
            entries,
            states,
        }
    }

    /// `save_state(name, values)` for batch `batch_no`: row j goes to the next segment of entry
    /// j (final segments drop theirs). Once every state is saved the segments are ready.
    pub fn save(&mut self, batch_no: u64, name: &str, values: SaverTensor) -> Result<(), StateSaverError> {
        let schema = self.schema.as_ref();
        let Some(s) = schema.and_then(|schema| schema.states.iter().position(|slot| slot.name == name)) else {
            return Err(StateSaverError::UnknownState { state: name.to_owned() });
        };
        let slot = match schema {
            Some(schema) => schema.states[s].clone(),
            None => return Err(StateSaverError::UnknownState { state: name.to_owned() }),
        };
        let Some(p) = self.pending.as_mut().filter(|p| p.batch_no == batch_no) else {
            return Err(StateSaverError::StaleBatch {
                state: name.to_owned(),
                keys: self.pending.as_ref().map(Pending::keys).unwrap_or_default(),
            });
        };
        if values.element() != slot.element {
            return Err(StateSaverError::StateDType {
                state: name.to_owned(),
                expected: slot.element,
                found: values.element(),
                keys: p.keys(),
            });
        }
        let values = values.into_carrier();
        let mut expected = vec![p.size];
        expected.extend_from_slice(&slot.shape);
        if values.shape() != expected.as_slice() {
            return Err(StateSaverError::StateShape {
                state: name.to_owned(),
                expected,
                found: values.shape().to_vec(),
                keys: p.keys(),
            });
        }
        if p.saved[s] {
            return Err(StateSaverError::SavedTwice {
                state: name.to_owned(),
                keys: p.keys(),
            });
        }
        p.saved[s] = true;
        let flat = into_flat(values);
        let row = slot.row();
        for &(j, position) in &p.rows {
            if let Some(ex) = self.examples.get_mut(&position) {
                overwrite(&mut ex.states[s], &flat, j * row, (j + 1) * row);
            }
        }
        if p.saved.iter().all(|&x| x) {
            for &(_, position) in &p.rows {
                self.ready.push(Reverse(position));
            }
        }
        Ok(())
    }
}

/// Appends all of `v` to `out` (of the same dtype, as the schema check guarantees).
fn append(out: &mut Values, v: &Values) {
    let same = out.extend_from(v);
    debug_assert!(same, "dtypes are checked against the schema on insertion");
}

/// Replaces `out` with values `[start, end)` of `v`, reusing its buffer (a state has the same
/// dtype and size from segment to segment).
fn overwrite(out: &mut Values, v: &Values, start: usize, end: usize) {
    match (out, v) {
        (Values::Int64(o), Values::Int64(x)) => {
            o.clear();
            o.extend_from_slice(&x[start..end]);
        }
        (Values::Float32(o), Values::Float32(x)) => {
            o.clear();
            o.extend_from_slice(&x[start..end]);
        }
        (Values::String(o), Values::String(x)) => {
            o.clear();
            o.extend_from_range(x, start..end);
        }
        _ => unreachable!("dtypes are checked against the schema"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overwrite_reuses_the_state_buffer() {
        let mut state = Values::Float32(vec![0.0; 2]);
        overwrite(&mut state, &Values::Float32(vec![1.0, 2.0, 3.0, 4.0]), 2, 4);
        assert_eq!(state, Values::Float32(vec![3.0, 4.0]));
        let mut state = Values::String([b""].into_iter().collect());
        overwrite(&mut state, &Values::String([b"a", b"b"].into_iter().collect()), 1, 2);
        assert_eq!(state, Values::String([b"b"].into_iter().collect()));
    }
}

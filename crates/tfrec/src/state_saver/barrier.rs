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

use super::error::StateSaverError;
use super::input::{into_flat, Prepared, Schema};
use crate::parse::{DenseTensor, Values};

/// An example's immutable data, shared with the batches being assembled from it.
#[derive(Debug)]
pub(crate) struct ExampleData {
    /// Flat rows of each sequence, in schema order (`steps * row` values each).
    pub sequences: Vec<Values>,
    /// Each context value, in schema order.
    pub context: Vec<Values>,
}

#[derive(Debug)]
struct InFlight {
    key: String,
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
    pub key: String,
    pub segment: usize,
    pub count: usize,
    pub length: usize,
    pub steps: usize,
    pub insertion_index: i64,
    pub data: Arc<ExampleData>,
    pub states: Vec<Values>,
}

impl Entry {
    /// `"%05d_of_%05d:%s"`: the segment's key.
    pub fn segment_key(&self) -> String {
        format!("{:05}_of_{:05}:{}", self.segment, self.count, self.key)
    }

    /// The next segment's key, or `"STOP:<key>"` after the last.
    pub fn next_key(&self) -> String {
        if self.segment + 1 >= self.count {
            format!("STOP:{}", self.key)
        } else {
            format!("{:05}_of_{:05}:{}", self.segment + 1, self.count, self.key)
        }
    }
}

/// The batch handed out last, and which of its states were saved.
#[derive(Debug)]
struct Pending {
    batch_no: u64,
    size: usize,
    /// (row in the batch, example position) of each entry that is not a final segment.
    rows: Vec<(usize, u64)>,
    /// The segment keys of every entry, for messages.
    keys: Vec<String>,
    /// The segment keys of the entries in `rows`.
    waiting_keys: Vec<String>,
    saved: Vec<bool>,
}

/// SplitMix64, for `make_keys_unique`.
#[derive(Debug)]
struct KeyRng(u64);

impl KeyRng {
    fn next_below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// The examples in flight and their segments.
#[derive(Debug, Default)]
pub(crate) struct Barrier {
    /// The first example's names, dtypes and shapes; `None` until one is inserted.
    pub schema: Option<Schema>,
    /// In-flight examples by input position.
    examples: FxHashMap<u64, InFlight>,
    /// The key of every in-flight example.
    keys: FxHashMap<String, u64>,
    /// Positions of the examples with a ready segment.
    ready: BinaryHeap<Reverse<u64>>,
    pending: Option<Pending>,
    batches: u64,
    unique: Option<KeyRng>,
    /// The most examples ever in flight at once.
    pub max_in_flight: usize,
}

impl Barrier {
    pub fn new(make_keys_unique: Option<u64>) -> Barrier {
        Barrier {
            unique: make_keys_unique.map(KeyRng),
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
            Some(schema) => schema.check(&p)?,
            None => self.schema = Some(p.schema()),
        }
        if let Some(rng) = &mut self.unique {
            // As `batch_sequences_with_states`: a number below 10^8, unpadded, appended.
            p.key = format!("{}{}", p.key, rng.next_below(100_000_000));
        }
        if self.keys.contains_key(&p.key) {
            return Err(StateSaverError::KeyInFlight { key: p.key });
        }
        let data = ExampleData {
            sequences: p.sequences.into_iter().map(|(_, v)| v).collect(),
            context: p.context.into_iter().map(|(_, v)| v).collect(),
        };
        self.keys.insert(p.key.clone(), position);
        self.examples.insert(
            position,
            InFlight {
                key: p.key,
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
            keys: p.waiting_keys.clone(),
        })
    }

    /// Takes the `n` ready segments with the smallest insertion indices. Final segments leave
    /// the barrier (freeing their place); the others wait for their states.
    pub fn take(&mut self, n: usize) -> (u64, Vec<Entry>) {
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
            let states = if last {
                std::mem::take(&mut ex.states)
            } else {
                rows.push((entries.len(), position));
                ex.states.clone()
            };
            entries.push(Entry {
                key: ex.key.clone(),
                segment,
                count: ex.count,
                length: ex.length,
                steps: ex.steps,
                insertion_index: i64::MIN.wrapping_add(position as i64),
                data: Arc::clone(&ex.data),
                states,
            });
            if last {
                if let Some(ex) = self.examples.remove(&position) {
                    self.keys.remove(&ex.key);
                }
            }
        }
        self.batches += 1;
        let keys: Vec<String> = entries.iter().map(Entry::segment_key).collect();
        let waiting_keys = rows.iter().map(|&(j, _)| keys[j].clone()).collect();
        let n_states = self.schema.as_ref().map_or(0, |s| s.states.len());
        self.pending = Some(Pending {
            batch_no: self.batches,
            size: entries.len(),
            rows,
            keys,
            waiting_keys,
            saved: vec![false; n_states],
        });
        (self.batches, entries)
    }

    /// `save_state(name, values)` for batch `batch_no`: row j goes to the next segment of entry
    /// j (final segments drop theirs). Returns whether the waiting segments became ready.
    pub fn save(&mut self, batch_no: u64, name: &str, values: DenseTensor) -> Result<bool, StateSaverError> {
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
                keys: Vec::new(),
            });
        };
        if values.dtype() != slot.dtype {
            return Err(StateSaverError::StateDType {
                state: name.to_owned(),
                expected: slot.dtype,
                found: values.dtype(),
                keys: p.keys.clone(),
            });
        }
        let mut expected = vec![p.size];
        expected.extend_from_slice(&slot.shape);
        if values.shape() != expected.as_slice() {
            return Err(StateSaverError::StateShape {
                state: name.to_owned(),
                expected,
                found: values.shape().to_vec(),
                keys: p.keys.clone(),
            });
        }
        if p.saved[s] {
            return Err(StateSaverError::SavedTwice {
                state: name.to_owned(),
                keys: p.keys.clone(),
            });
        }
        p.saved[s] = true;
        let flat = into_flat(values);
        let row = slot.row();
        for &(j, position) in &p.rows {
            if let Some(ex) = self.examples.get_mut(&position) {
                ex.states[s] = slice(&flat, j * row, (j + 1) * row);
            }
        }
        let complete = p.saved.iter().all(|&x| x);
        if complete {
            for &(_, position) in &p.rows {
                self.ready.push(Reverse(position));
            }
        }
        Ok(complete && !p.rows.is_empty())
    }
}

/// Values `[start, end)` of `v`.
pub(crate) fn slice(v: &Values, start: usize, end: usize) -> Values {
    match v {
        Values::Int64(x) => Values::Int64(x[start..end].to_vec()),
        Values::Float32(x) => Values::Float32(x[start..end].to_vec()),
        Values::String(x) => Values::String(x[start..end].to_vec()),
    }
}

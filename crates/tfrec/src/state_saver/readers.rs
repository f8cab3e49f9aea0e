//! The reader threads: each pulls the next input, checks and flattens it on its own, then
//! inserts it into the barrier in input order once fewer than `capacity` examples are in
//! flight (TensorFlow's capacity queue). Inserting in input order makes insertion indices, and
//! so every batch, independent of the number of threads.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::barrier::Barrier;
use super::error::StateSaverError;
use super::input::{prepare, Rules, SequenceInput};
use super::records::RecordInput;
use crate::parse::DenseTensor;

/// What the input iterator yields: an example, or a record still to parse.
pub(crate) enum RawItem {
    Input(SequenceInput),
    Record(Vec<u8>),
}

pub(crate) type InputIter = Box<dyn Iterator<Item = Result<RawItem, StateSaverError>> + Send>;

/// The input iterator and how far it was read.
pub(crate) struct InputState {
    pub iter: InputIter,
    /// Position of the next item pulled.
    pub next: u64,
    /// The iterator has ended.
    pub done: bool,
}

/// Settings fixed at construction.
pub(crate) struct Settings {
    pub capacity: usize,
    pub rules: Rules,
    pub default_states: BTreeMap<String, DenseTensor>,
    pub records: Option<RecordInput>,
}

/// Everything behind the one lock.
pub(crate) struct Core {
    pub barrier: Barrier,
    /// Position of the next input to insert; inputs are inserted in order.
    pub next_insert: u64,
    /// Set when the iterator ended: the position after its last item.
    pub end_at: Option<u64>,
    /// An input error not yet returned to the consumer.
    pub failure: Option<StateSaverError>,
    /// The message of an input error already returned.
    pub failed: Option<String>,
    /// The saver is being dropped.
    pub stop: bool,
}

impl Core {
    /// Every input was inserted and the iterator has ended (TensorFlow's closed barrier).
    pub fn closed(&self) -> bool {
        self.end_at == Some(self.next_insert)
    }

    fn halted(&self) -> bool {
        self.stop || self.failure.is_some() || self.failed.is_some()
    }

    /// Records an input error (the first one wins).
    pub fn fail(&mut self, error: StateSaverError) {
        if self.failure.is_none() && self.failed.is_none() {
            self.failure = Some(error);
        }
    }
}

/// The state shared by the saver, its reader threads and its batches.
pub(crate) struct Shared {
    pub core: Mutex<Core>,
    /// Signalled on every change of `core`.
    pub changed: Condvar,
    pub input: Mutex<InputState>,
    pub settings: Settings,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared { .. }")
    }
}

/// Locks a mutex; a panicking holder leaves data that is still consistent (every update is
/// done before the guard drops), so poisoning is ignored.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Core> {
        lock(&self.core)
    }

    pub fn wait<'a>(&self, guard: MutexGuard<'a, Core>) -> MutexGuard<'a, Core> {
        self.changed.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    pub fn save_state(&self, batch_no: u64, name: &str, values: DenseTensor) -> Result<(), StateSaverError> {
        let mut core = self.lock();
        if core.barrier.save(batch_no, name, values)? {
            self.changed.notify_all();
        }
        Ok(())
    }
}

/// One reader thread.
pub(crate) fn run(shared: Arc<Shared>) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| read(&shared))) {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        let mut core = shared.lock();
        core.fail(StateSaverError::Panic(message));
        shared.changed.notify_all();
    }
}

fn read(shared: &Shared) {
    loop {
        if shared.lock().halted() {
            return;
        }
        let (position, item) = {
            let mut input = lock(&shared.input);
            if input.done {
                return;
            }
            let position = input.next;
            match input.iter.next() {
                None => {
                    input.done = true;
                    let mut core = shared.lock();
                    core.end_at = Some(position);
                    shared.changed.notify_all();
                    return;
                }
                Some(item) => {
                    input.next += 1;
                    (position, item)
                }
            }
        };
        // The expensive part (parsing, checks, flattening) runs outside both locks.
        let settings = &shared.settings;
        let prepared = item
            .and_then(|raw| match (raw, &settings.records) {
                (RawItem::Input(input), _) => Ok(input),
                (RawItem::Record(bytes), Some(records)) => records.convert(position, &bytes),
                (RawItem::Record(_), None) => Err(StateSaverError::Input {
                    index: position,
                    message: "a record without a record spec".into(),
                }),
            })
            .and_then(|input| prepare(input, settings.rules, &settings.default_states));
        let mut core = shared.lock();
        while !(core.halted() || core.next_insert == position && core.barrier.in_flight() < settings.capacity) {
            core = shared.wait(core);
        }
        if core.halted() {
            return;
        }
        if let Err(e) = prepared.and_then(|p| core.barrier.insert(position, p)) {
            core.fail(e);
        }
        core.next_insert += 1;
        shared.changed.notify_all();
    }
}

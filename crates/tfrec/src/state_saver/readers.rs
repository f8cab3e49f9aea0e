//! Reading the input: reader threads (and the consumer, when it would otherwise wait) pull
//! the next input, parse, check and flatten it outside the lock, and leave it in a small
//! reorder buffer. The consumer moves examples from the buffer into the barrier in input order
//! while fewer than `capacity` are in flight (TensorFlow's capacity queue). Inserting in input
//! order makes insertion indices, and so every batch, independent of the number of threads;
//! inserting on the consumer's side keeps thread hand-overs off the hot path.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::barrier::Barrier;
use super::dtype::SaverTensor;
use super::error::StateSaverError;
use super::input::{prepare, Prepared, Rules, SequenceInput};
use super::records::RecordInput;
use crate::pipeline::panic_message;

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
    /// Inputs to read ahead of the barrier.
    pub window: usize,
    pub rules: Rules,
    pub default_states: BTreeMap<String, SaverTensor>,
    pub records: Option<RecordInput>,
}

/// Everything behind the one lock.
pub(crate) struct Core {
    pub barrier: Barrier,
    /// Position of the next input to insert; inputs are inserted in order.
    pub next_insert: u64,
    /// Inputs read and prepared but not inserted yet, by position (at most about `window`).
    pub buffer: BTreeMap<u64, Result<Prepared, StateSaverError>>,
    /// Set when the iterator ended: the position after its last item.
    pub end_at: Option<u64>,
    /// An input error not yet returned to the consumer.
    pub failure: Option<StateSaverError>,
    /// The kind name and text of an input error already returned.
    pub failed: Option<(&'static str, String)>,
    /// The saver is being dropped.
    pub stop: bool,
    /// `close` was called: `Some(cancel_pending)`.
    pub closed_by_user: Option<bool>,
    /// The consumer sleeps on `changed`.
    pub consumer_waiting: bool,
    /// Readers sleeping on `space`.
    pub readers_waiting: usize,
}

impl Core {
    /// Every input was inserted and the iterator has ended (TensorFlow's closed barrier).
    pub fn closed(&self) -> bool {
        self.end_at == Some(self.next_insert)
    }

    pub fn halted(&self) -> bool {
        self.stop || self.failure.is_some() || self.failed.is_some()
    }

    /// The readers have nothing more to do.
    fn readers_done(&self) -> bool {
        self.halted() || self.closed_by_user.is_some()
    }

    /// Moves buffered examples into the barrier, in input order, while fewer than `limit` are
    /// in flight.
    pub fn fill(&mut self, limit: usize) -> bool {
        let mut moved = false;
        while !self.halted() && self.end_at != Some(self.next_insert) && self.barrier.in_flight() < limit {
            let Some(prepared) = self.buffer.remove(&self.next_insert) else {
                break;
            };
            if let Err(e) = prepared.and_then(|p| self.barrier.insert(self.next_insert, p)) {
                self.fail(e);
            }
            self.next_insert += 1;
            moved = true;
        }
        moved
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
    /// Signalled for the consumer: an input was buffered, the input ended, states were saved.
    pub changed: Condvar,
    /// Signalled for the readers: the buffer has room again, or the saver stopped. Readers
    /// that find the buffer full sleep until it is half empty, so they wake in bulk rather
    /// than once per example (each wake-up is a context switch the consumer pays for).
    pub space: Condvar,
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

    /// The consumer's sleep. Waking costs a system call, so notifiers check the flag first.
    pub fn wait<'a>(&self, mut guard: MutexGuard<'a, Core>) -> MutexGuard<'a, Core> {
        guard.consumer_waiting = true;
        let mut guard = self.changed.wait(guard).unwrap_or_else(|e| e.into_inner());
        guard.consumer_waiting = false;
        guard
    }

    /// Wakes the consumer if it sleeps.
    pub fn wake_consumer(&self, core: &Core) {
        if core.consumer_waiting {
            self.changed.notify_one();
        }
    }

    /// Wakes the readers if any sleep.
    pub fn wake_readers(&self, core: &Core) {
        if core.readers_waiting > 0 {
            self.space.notify_all();
        }
    }

    /// Wakes everyone (stop, failure).
    pub fn wake_all(&self) {
        self.changed.notify_all();
        self.space.notify_all();
    }

    pub fn save_state(&self, batch_no: u64, name: &str, values: SaverTensor) -> Result<(), StateSaverError> {
        // No wake-up: the consumer never waits while states of its last batch are unsaved.
        self.lock().barrier.save(batch_no, name, values)
    }
}

/// What [`read_one`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// One input went into the buffer.
    One,
    /// The input has ended (or the saver stopped).
    Ended,
    /// Another thread is pulling from the input.
    Busy,
}

/// Pulls the next input, prepares it and buffers it. With `wait = false`, gives up at once if
/// another thread holds the input.
pub(crate) fn read_one(shared: &Shared, wait: bool) -> Read {
    let run = catch_unwind(AssertUnwindSafe(|| {
        let (position, item) = {
            // A poisoned input means a reader panicked inside `next` before counting the item
            // (the panic fails the saver): reading on would give the next item its position
            // and could end the input cleanly before the failure is recorded.
            let mut input = if wait {
                match shared.input.lock() {
                    Ok(guard) => guard,
                    Err(_) => return Read::Ended,
                }
            } else {
                match shared.input.try_lock() {
                    Ok(guard) => guard,
                    Err(std::sync::TryLockError::Poisoned(_)) => return Read::Ended,
                    Err(std::sync::TryLockError::WouldBlock) => return Read::Busy,
                }
            };
            if input.done {
                return Read::Ended;
            }
            let position = input.next;
            match input.iter.next() {
                None => {
                    input.done = true;
                    drop(input);
                    let mut core = shared.lock();
                    // `close` may have ended the input earlier.
                    if core.end_at.is_none() {
                        core.end_at = Some(position);
                    }
                    shared.wake_consumer(&core);
                    return Read::Ended;
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
            .and_then(|input| prepare(input, position, settings.rules, &settings.default_states));
        let mut core = shared.lock();
        if core.closed_by_user.is_some() {
            // Read after `close`: never inserted, so not kept either.
            return Read::Ended;
        }
        core.buffer.insert(position, prepared);
        shared.wake_consumer(&core);
        Read::One
    }));
    run.unwrap_or_else(|payload| {
        let mut core = shared.lock();
        core.fail(StateSaverError::Panic {
            message: panic_message(&*payload),
        });
        shared.wake_all();
        Read::Ended
    })
}

/// One reader thread: reads ahead while the buffer has room.
pub(crate) fn run(shared: Arc<Shared>) {
    loop {
        {
            let mut core = shared.lock();
            let window = shared.settings.window;
            if core.buffer.len() >= window {
                while !core.readers_done() && core.buffer.len() > window / 2 {
                    core.readers_waiting += 1;
                    core = shared.space.wait(core).unwrap_or_else(|e| e.into_inner());
                    core.readers_waiting -= 1;
                }
            }
            if core.readers_done() {
                return;
            }
        }
        if read_one(&shared, true) == Read::Ended {
            return;
        }
    }
}

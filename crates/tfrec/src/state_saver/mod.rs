//! Sequence state saving for truncated back-propagation through time: TensorFlow 1's
//! `SequenceQueueingStateSaver` / `batch_sequences_with_states`, with their documented
//! semantics (keys, padding, ordering, state hand-over) and every misuse an error.
//!
//! Each example (a key, time-major sequences, context, initial states) is cut into segments of
//! `num_unroll` steps. Batches take ready segments from many examples, smallest insertion index
//! first; an example's next segment becomes ready once the batch that held its previous segment
//! has saved every state, and it then starts from those saved values.
//!
//! ```
//! use ndarray::{Array1, Array2, ArrayD};
//! use tfrec::state_saver::{SequenceInput, StateSaverOptions};
//!
//! let inputs = (0..4).map(|i| {
//!     let x = Array2::<f32>::from_elem((5 + i, 1), 1.0); // 5..8 steps of 1 feature
//!     SequenceInput::new(format!("seq{i}")).sequence("x", x)
//! });
//! let saver = StateSaverOptions::new(2, 3) // batch 2, num_unroll 3
//!     .capacity(4)
//!     .initial_state("sum", ArrayD::<f32>::zeros(vec![1]))
//!     .build(inputs)?;
//! while let Some(batch) = saver.next_batch()? {
//!     // A running sum over each segment's valid steps, carried from segment to segment.
//!     let x = batch.sequences["x"].f32_view().expect("float32");
//!     let mut sum = batch.state("sum")?.f32_view().expect("float32").to_owned();
//!     for j in 0..batch.batch_size() {
//!         for t in 0..batch.length[j] as usize {
//!             sum[[j, 0]] += x[[j, t, 0]];
//!         }
//!     }
//!     if batch.next_key[0].starts_with(b"STOP:") {
//!         assert_eq!(sum[[0, 0]], batch.total_length[0] as f32);
//!     }
//!     batch.save_state("sum", sum)?;
//! }
//! # Ok::<(), tfrec::state_saver::StateSaverError>(())
//! ```
//!
//! Differences from TensorFlow, all on the side of failing loudly or being reproducible:
//! - Taking a batch while states of the previous one are unsaved is an error naming them (TF
//!   hangs), as is saving a state twice.
//! - Reusing a key is refused as TensorFlow's barrier refuses it (the same segment count, and
//!   the earlier example still has segments waiting for states), but always, not only when a
//!   prefetch thread happens to win a race.
//! - Examples enter the barrier in input order, and only as many as the next batch can use
//!   (up to [`StateSaverOptions::lookahead`] more, as TensorFlow's prefetching would have), so
//!   batches, errors and memory depend only on the input and the options, never on thread
//!   timing or on a large `capacity` ([`StateSaverOptions::deterministic`]).
//! - `make_keys_unique` draws its numbers from its own generator, not TF's `random_uniform`.

mod barrier;
mod batch;
mod dtype;
mod error;
mod input;
mod key;
mod readers;
mod records;
mod sparse;

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

pub use batch::Batch;
pub use dtype::{element_type, is_native, native_type, restore_raw, DTypeError, SaverTensor, TensorDType};
pub use error::StateSaverError;
pub use input::{IntoTensor, SequenceInput};
pub use key::key_text;
pub use records::KeySource;
pub use sparse::{IndexProblem, SparseError, SparseInput};

use barrier::Barrier;
use input::Rules;
use readers::{Core, InputIter, InputState, RawItem, Settings, Shared};
use records::RecordInput;

use crate::parse::SequenceSpecs;
use crate::pipeline::Dataset;

/// The options of a [`StateSaver`], with `batch_sequences_with_states`' defaults.
#[derive(Debug, Clone)]
pub struct StateSaverOptions {
    batch_size: usize,
    num_unroll: usize,
    capacity: usize,
    allow_small_batch: bool,
    pad: bool,
    num_threads: usize,
    make_keys_unique: Option<u64>,
    deterministic: bool,
    lookahead: usize,
    length_feature: Option<String>,
    initial_states: BTreeMap<String, SaverTensor>,
}

/// The default [`StateSaverOptions::lookahead`].
pub const DEFAULT_LOOKAHEAD: usize = 64;

impl StateSaverOptions {
    /// Batches of `batch_size` segments of `num_unroll` steps.
    pub fn new(batch_size: usize, num_unroll: usize) -> StateSaverOptions {
        StateSaverOptions {
            batch_size,
            num_unroll,
            capacity: 1000,
            allow_small_batch: true,
            pad: true,
            num_threads: 3,
            make_keys_unique: None,
            deterministic: true,
            lookahead: DEFAULT_LOOKAHEAD,
            length_feature: None,
            initial_states: BTreeMap::new(),
        }
    }

    /// The most examples in flight (read but with segments still to hand out); at least
    /// `batch_size`. Default 1000; `usize::MAX` is unbounded (Python's `capacity=None`). With
    /// keys that repeat (several epochs), keep it below the number of examples, or a key comes
    /// back while its earlier example is in flight. Memory does not grow with it: at most
    /// `batch_size + lookahead` examples are ever in flight.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// At the end of the input, hand out a last batch smaller than `batch_size` (default true).
    /// With false, leftover segments fewer than `batch_size` are an error.
    pub fn allow_small_batch(mut self, allow: bool) -> Self {
        self.allow_small_batch = allow;
        self
    }

    /// Pad sequences to a multiple of `num_unroll` with 0, 0.0 or `""` (default true). With
    /// false, a sequence whose steps are not a multiple of `num_unroll` is an error.
    pub fn pad(mut self, pad: bool) -> Self {
        self.pad = pad;
        self
    }

    /// Threads reading, parsing and checking the input ahead of the consumer (default 3).
    /// With 0 the consumer reads on its own thread, which is fastest for inputs already in
    /// memory, but then [`StateSaver::close`] cannot end a `next_batch` blocked inside the
    /// input iterator; threads pay off when records are parsed. Up to `4 * num_threads + 8` inputs
    /// (plus one per reader) are read ahead of the `capacity` examples in flight.
    pub fn num_threads(mut self, threads: usize) -> Self {
        self.num_threads = threads;
        self
    }

    /// Appends a random number below 10^8, drawn from `seed`, to every key (default off).
    pub fn make_keys_unique(mut self, seed: u64) -> Self {
        self.make_keys_unique = Some(seed);
        self
    }

    /// `true` (default): before a batch is taken, examples are inserted until
    /// `min(capacity, batch_size + lookahead)` are in flight or the input has ended, so which
    /// examples are in flight (and so key-reuse errors and `max_in_flight`) never depends on
    /// timing. `false`: take a batch as soon as `batch_size` segments are ready, inserting only
    /// the examples already read ahead (lower latency on a slow input).
    ///
    /// The batches themselves are the same either way: a batch takes the smallest insertion
    /// indices among the ready segments, and an example inserted later has a larger index than
    /// every example already in flight, so inserting more cannot change the batch once
    /// `batch_size` segments are ready.
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    /// How many examples beyond `batch_size` may be in flight (capped by `capacity`; default
    /// [`DEFAULT_LOOKAHEAD`]). TensorFlow's prefetch threads fill the barrier up to `capacity`,
    /// which for a large capacity holds the whole input in memory; here the examples in flight
    /// stay bounded by `batch_size + lookahead` whatever the capacity. Up to this bound the
    /// examples in flight are exactly TensorFlow's, so its key-reuse errors happen as in TF.
    pub fn lookahead(mut self, lookahead: usize) -> Self {
        self.lookahead = lookahead;
        self
    }

    /// For [`StateSaverOptions::build_from_dataset`]: each example's `input_length` is this
    /// context feature (a `FixedLenFeature` of shape `[]` and dtype int64 in the spec; it also
    /// stays in the context). Without it the length is the sequences' length.
    pub fn length_feature(mut self, feature: impl Into<String>) -> Self {
        self.length_feature = Some(feature.into());
        self
    }

    /// The most examples in flight before a batch is taken.
    fn insert_limit(&self) -> usize {
        self.capacity.min(self.batch_size.saturating_add(self.lookahead))
    }

    /// A default initial state for examples that do not bring their own.
    pub fn initial_state(mut self, name: impl Into<String>, values: impl IntoTensor) -> Self {
        self.initial_states.insert(name.into(), values.into_tensor());
        self
    }

    fn check(&self) -> Result<(), StateSaverError> {
        if self.batch_size == 0 {
            return Err(StateSaverError::ZeroOption { option: "batch_size" });
        }
        if self.num_unroll == 0 {
            return Err(StateSaverError::ZeroOption { option: "num_unroll" });
        }
        if self.capacity < self.batch_size {
            return Err(StateSaverError::CapacityTooSmall {
                capacity: self.capacity,
                batch_size: self.batch_size,
            });
        }
        // TensorFlow refuses these when the saver is built; the per-example check stays for
        // states an example brings itself.
        if let Some(name) = self.initial_states.keys().find(|n| n.contains(':')) {
            return Err(StateSaverError::StateNameColon { name: name.clone() });
        }
        Ok(())
    }

    /// A saver over examples in memory.
    pub fn build<I>(self, inputs: I) -> Result<StateSaver, StateSaverError>
    where
        I: IntoIterator<Item = SequenceInput>,
        I::IntoIter: Send + 'static,
    {
        self.start(Box::new(inputs.into_iter().map(|i| Ok(RawItem::Input(i)))), None)
    }

    /// A saver over examples from a fallible source (a binding's iterator, a decoder…); an
    /// `Err` stops the saver with [`StateSaverError::Input`].
    pub fn build_fallible<I, E>(self, inputs: I) -> Result<StateSaver, StateSaverError>
    where
        I: IntoIterator<Item = Result<SequenceInput, E>>,
        I::IntoIter: Send + 'static,
        E: std::fmt::Display,
    {
        let iter = inputs.into_iter().enumerate().map(|(index, item)| {
            item.map(RawItem::Input).map_err(|e| StateSaverError::Input {
                index: index as u64,
                message: e.to_string(),
            })
        });
        self.start(Box::new(iter), None)
    }

    /// A saver over the SequenceExample records of a data set (its files, sharding, shuffling
    /// and repeats). FixedLenSequenceFeature lists become sequences and FixedLen context
    /// features the context; records are parsed on the reader threads.
    pub fn build_from_dataset(
        self,
        dataset: Dataset,
        specs: &SequenceSpecs,
        key: KeySource,
    ) -> Result<StateSaver, StateSaverError> {
        let records = RecordInput::new(specs, key, self.length_feature.clone())?;
        let iter = dataset
            .records()
            .map(|r| r.map(RawItem::Record).map_err(StateSaverError::from));
        self.start(Box::new(iter), Some(records))
    }

    fn start(self, iter: InputIter, records: Option<RecordInput>) -> Result<StateSaver, StateSaverError> {
        self.check()?;
        let shared = Arc::new(Shared {
            core: Mutex::new(Core {
                barrier: Barrier::new(self.make_keys_unique),
                next_insert: 0,
                buffer: BTreeMap::new(),
                end_at: None,
                failure: None,
                failed: None,
                stop: false,
                closed_by_user: None,
                consumer_waiting: false,
                readers_waiting: 0,
            }),
            changed: Condvar::new(),
            space: Condvar::new(),
            input: Mutex::new(InputState {
                iter,
                next: 0,
                done: false,
            }),
            settings: Settings {
                window: 4 * self.num_threads + 8,
                rules: Rules {
                    num_unroll: self.num_unroll,
                    pad: self.pad,
                },
                default_states: self.initial_states.clone(),
                records,
            },
        });
        let threads = (0..self.num_threads)
            .map(|_| {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || readers::run(shared))
            })
            .collect();
        Ok(StateSaver {
            shared,
            threads,
            options: self,
        })
    }
}

/// Segments of many sequences in batches, with each sequence's state handed from one segment
/// to the next. Dropping it stops and joins the reader threads.
///
/// It is `Sync`: [`StateSaver::close`], [`StateSaver::in_flight`] and the others may be called
/// from any thread, also while another waits in [`StateSaver::next_batch`].
pub struct StateSaver {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    options: StateSaverOptions,
}

impl std::fmt::Debug for StateSaver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateSaver").field("options", &self.options).finish()
    }
}

impl StateSaver {
    /// The next batch; `Ok(None)` at the end of the input.
    ///
    /// Fails without changing anything if states of the previous batch are unsaved. At the end
    /// of the input, fewer than `batch_size` segments left give a small batch, or with
    /// `allow_small_batch(false)` [`StateSaverError::InsufficientElements`].
    ///
    /// After [`StateSaver::close`] with `cancel_pending`, `Ok(None)` at once, also for a call
    /// already waiting.
    pub fn next_batch(&self) -> Result<Option<Batch>, StateSaverError> {
        let o = &self.options;
        let shared = &self.shared;
        let limit = o.insert_limit();
        let mut core = shared.lock();
        if let Some(e) = core.barrier.unsaved() {
            return Err(e);
        }
        let take = loop {
            if core.closed_by_user == Some(true) {
                return Ok(None);
            }
            if core.fill(limit) && core.buffer.len() <= shared.settings.window / 2 {
                shared.wake_readers(&core);
            }
            if let Some(e) = core.failure.take() {
                core.failed = Some((e.kind_name(), e.to_string()));
                shared.wake_all();
                return Err(e);
            }
            if let Some((cause, message)) = &core.failed {
                return Err(StateSaverError::Stopped {
                    cause,
                    message: message.clone(),
                });
            }
            let ready = core.barrier.ready();
            let filled = if o.deterministic {
                core.barrier.in_flight() >= limit
            } else {
                ready >= o.batch_size
            };
            if filled && ready >= o.batch_size {
                break o.batch_size;
            }
            if core.closed() {
                if ready >= o.batch_size || (o.allow_small_batch && ready > 0) {
                    break ready.min(o.batch_size);
                }
                if ready == 0 {
                    return Ok(None);
                }
                return Err(StateSaverError::InsufficientElements {
                    requested: o.batch_size,
                    remaining: ready,
                });
            }
            // More input is needed. Without reader threads, read it here. With them, wait for
            // them even when the input is free: a consumer blocked inside a slow input could
            // not be ended by `close` from another thread.
            if o.num_threads == 0
                && core.buffer.len() < shared.settings.window
                && core.end_at.is_none()
                && core.closed_by_user.is_none()
            {
                drop(core);
                let read = readers::read_one(shared, false);
                core = shared.lock();
                if read != readers::Read::Busy {
                    continue;
                }
                // The reader holding the input notifies when done; re-check before sleeping.
                if core.buffer.contains_key(&core.next_insert) || core.end_at.is_some() || core.halted() {
                    continue;
                }
            }
            core = shared.wait(core);
        };
        let taken = core.barrier.take(take);
        let schema = core.barrier.schema.clone();
        drop(core);
        let Some(schema) = schema else {
            return Ok(None);
        };
        match batch::assemble(taken, schema, o.num_unroll, o.batch_size, Arc::clone(shared)) {
            Ok(batch) => Ok(Some(batch)),
            Err(e) => {
                // The batch is lost with its states, so the saver cannot go on.
                let mut core = shared.lock();
                core.failed = Some((e.kind_name(), e.to_string()));
                shared.wake_all();
                Err(e)
            }
        }
    }

    /// Stops the input, from any thread (TensorFlow's `close` of the saver's queues).
    ///
    /// With `cancel_pending = false` no further example is inserted, but the examples in flight
    /// still hand out all their segments, in the usual order and with small batches as
    /// `allow_small_batch` says; the end of the input follows. With `true`, every call of
    /// [`StateSaver::next_batch`], also one waiting now, returns `Ok(None)`. Either way the
    /// reader threads stop after the item they are pulling, if any. They are joined when the
    /// saver is dropped, not here: a reader may be blocked inside the input iterator, and
    /// closing must not wait for it (TensorFlow's close does not wait for its enqueuers).
    pub fn close(&self, cancel_pending: bool) {
        {
            let mut core = self.shared.lock();
            if core.closed_by_user != Some(true) {
                core.closed_by_user = Some(cancel_pending);
            }
            // Also when the input has already ended: what was read but not inserted is dropped
            // with the buffer, so the end moves to the next insertion.
            core.end_at = Some(core.next_insert);
            core.buffer.clear();
        }
        self.shared.wake_all();
    }

    /// Examples in flight now.
    pub fn in_flight(&self) -> usize {
        self.shared.lock().barrier.in_flight()
    }

    /// The most examples that were ever in flight at once (at most `capacity`).
    pub fn max_in_flight(&self) -> usize {
        self.shared.lock().barrier.max_in_flight
    }

    /// The options.
    pub fn options(&self) -> &StateSaverOptions {
        &self.options
    }
}

impl Drop for StateSaver {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

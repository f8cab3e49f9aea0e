//! The state saver's one error enum: bad options, bad examples (naming the key and the
//! tensor), misuse by the consumer (naming the states and keys), and the end of the input.

use crate::parse::{DType, ParseError};
use crate::pipeline::PipelineError;

/// A failure of the state saver.
///
/// Option errors come from [`super::StateSaverOptions::build`]. Input errors stop the saver:
/// the call that meets one returns it, and later calls return [`StateSaverError::Stopped`].
/// Consumer errors (unsaved, unknown, twice-saved or misshapen states) change nothing, so the
/// caller can correct the call and go on.
#[derive(Debug, thiserror::Error)]
pub enum StateSaverError {
    // ---- options --------------------------------------------------------------------------
    /// `capacity < batch_size` (TensorFlow's `ValueError`).
    #[error("capacity {capacity} needs to be >= batch_size {batch_size}")]
    CapacityTooSmall { capacity: usize, batch_size: usize },
    /// An option out of range (`batch_size` or `num_unroll` of 0…).
    #[error("invalid option: {0}")]
    InvalidOption(String),

    // ---- input (stops the saver) ------------------------------------------------------------
    /// An example without sequences.
    #[error("example {key:?}: input_sequences must not be empty")]
    NoSequences { key: String },
    /// An example without states, and no default initial states.
    #[error("example {key:?}: initial_states must not be empty")]
    NoStates { key: String },
    /// A sequence, context or state name containing `:`.
    #[error("example {key:?}: name {name:?} may not contain ':'")]
    BadName { key: String, name: String },
    /// A sequence that is not at least one-dimensional (it has no time axis).
    #[error("example {key:?}: sequence {name:?} must have a time dimension, but has shape []")]
    NotASequence { key: String, name: String },
    /// Sequences of one example with different numbers of steps.
    #[error("example {key:?}: All sequence lengths must match, but received lengths: {lengths:?}")]
    UnequalLengths { key: String, lengths: Vec<(String, usize)> },
    /// An example whose sequences have no steps (TensorFlow rejects a zero padded length).
    #[error("example {key:?}: sequence {name:?} is empty; a sequence needs at least one step")]
    EmptySequence { key: String, name: String },
    /// `pad = false` and a sequence whose length is not a multiple of `num_unroll`.
    #[error(
        "example {key:?}: Tensor {name} first dimension should be a multiple of: {num_unroll}, but saw value: \
         {length}. Consider setting pad=True."
    )]
    NotMultiple {
        key: String,
        name: String,
        num_unroll: usize,
        length: usize,
    },
    /// An explicit `length` longer than the sequences.
    #[error("example {key:?}: Input length should be <= than length from sequences: {length} > {steps}")]
    LengthTooLong { key: String, length: usize, steps: usize },
    /// A length TensorFlow's int32 lengths cannot hold.
    #[error("example {key:?}: length {length} does not fit in int32")]
    LengthOverflow { key: String, length: usize },
    /// A tensor whose names, dtype or shape differ from the first example's (or from the
    /// default initial states).
    #[error("example {key:?}: {what} {name:?}: expected {expected}, found {found}")]
    Mismatch {
        key: String,
        /// `sequence`, `context` or `initial state`.
        what: &'static str,
        name: String,
        expected: String,
        found: String,
    },
    /// A key whose earlier example still has segments to hand out. (TensorFlow fails the same
    /// way when the segment keys collide: `Key … already has a value for component …`.)
    #[error(
        "key {key:?} reused while its earlier sequence is still in flight (at most capacity examples are in \
         flight; make keys unique or use a capacity smaller than the number of examples)"
    )]
    KeyInFlight { key: String },
    /// The input iterator reported an error for example `index` (0-based, in input order).
    #[error("input example {index}: {message}")]
    Input { index: u64, message: String },
    /// A record did not parse as a SequenceExample with the spec.
    #[error("record {index}: {error}")]
    Parse { index: u64, error: Box<ParseError> },
    /// A TFRecord file could not be read.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// A reader thread panicked (with its message).
    #[error("a state saver reader thread panicked: {0}")]
    Panic(String),
    /// A call after the saver stopped on an earlier input error (its message).
    #[error("the state saver stopped after an earlier error: {0}")]
    Stopped(String),

    // ---- the consumer (recoverable) ---------------------------------------------------------
    /// `next_batch` before every state of the previous batch was saved. In TensorFlow this
    /// hangs: the next segments never become ready.
    #[error(
        "next_batch called before the states {states:?} of the previous batch were saved (waiting keys: {keys:?})"
    )]
    UnsavedStates { states: Vec<String>, keys: Vec<String> },
    /// `save_state` twice for one state of one batch.
    #[error("state {state:?} was already saved for this batch (keys: {keys:?})")]
    SavedTwice { state: String, keys: Vec<String> },
    /// `save_state` on a batch that is no longer the current one.
    #[error("state {state:?} saved for a batch that is no longer current (keys: {keys:?})")]
    StaleBatch { state: String, keys: Vec<String> },
    /// A state name that was never declared.
    #[error("state was not declared: {state}")]
    UnknownState { state: String },
    /// `save_state` with the wrong shape.
    #[error("Shape of state {state:?} should be: {expected:?}, but saw {found:?} (keys: {keys:?})")]
    StateShape {
        state: String,
        expected: Vec<usize>,
        found: Vec<usize>,
        keys: Vec<String>,
    },
    /// `save_state` with the wrong dtype.
    #[error("state {state:?} has dtype {expected}, but saw {found} (keys: {keys:?})")]
    StateDType {
        state: String,
        expected: DType,
        found: DType,
        keys: Vec<String>,
    },

    // ---- the end ---------------------------------------------------------------------------
    /// `allow_small_batch = false` and fewer segments than `batch_size` left at the end of the
    /// input (TensorFlow's `OutOfRange`: the barrier is closed and has insufficient elements).
    #[error("the input has ended with insufficient elements (requested {requested}, total size {remaining})")]
    InsufficientElements { requested: usize, remaining: usize },
}

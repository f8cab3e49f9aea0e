//! The state saver's one error enum: bad options, bad examples (naming the key and the
//! tensor), misuse by the consumer (naming the states and keys), and the end of the input.
//!
//! Keys in errors are text ([`super::key_text`]: a UTF-8 key as itself, other bytes as `\xNN`),
//! so that a message and its fields read the same whatever bytes the key had.

use super::dtype::{DTypeError, TensorDType};
use super::sparse::SparseError;
use crate::parse::{ParseError, SpecError};
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
    CapacityTooSmall {
        /// The configured capacity.
        capacity: usize,
        /// The configured batch size.
        batch_size: usize,
    },
    /// `batch_size` or `num_unroll` of 0.
    #[error("invalid option: {option} must be at least 1")]
    ZeroOption {
        /// The option's name (`batch_size`, `num_unroll`).
        option: &'static str,
    },
    /// A record spec whose sequence feature is not a `FixedLenSequenceFeature`.
    #[error(
        "invalid option: sequence feature {feature:?} is a {found}; the state saver needs FixedLenSequenceFeature"
    )]
    SequenceNotDense {
        /// The feature's key.
        feature: String,
        /// The spec's type name (`VarLenFeature`, `RaggedFeature`…).
        found: &'static str,
    },
    /// A record spec whose context feature is not a `FixedLenFeature`.
    #[error("invalid option: context feature {feature:?} is a {found}; the state saver needs FixedLenFeature")]
    ContextNotDense {
        /// The feature's key.
        feature: String,
        /// The spec's type name.
        found: &'static str,
    },
    /// A default initial state whose name contains `:` (TensorFlow's `ValueError` when the
    /// saver is built).
    #[error("state name may not have a colon: '{name}'")]
    StateNameColon {
        /// The state's name.
        name: String,
    },
    /// A record spec without sequence features.
    #[error("invalid option: the spec has no sequence features")]
    NoSequenceFeatures,
    /// A key feature that is not a scalar string or int64 `FixedLenFeature` of the context.
    #[error("invalid option: the key feature {feature:?} must be a context FixedLenFeature of shape [] and dtype string or int64")]
    BadKeyFeature {
        /// The key feature named in the options.
        feature: String,
    },
    /// A length feature that is not a scalar int64 `FixedLenFeature` of the context.
    #[error(
        "invalid option: the length feature {feature:?} must be a context FixedLenFeature of shape [] and dtype int64"
    )]
    BadLengthFeature {
        /// The length feature named in the options.
        feature: String,
    },
    /// A record spec TensorFlow's checks refuse.
    #[error("invalid option: {0}")]
    Spec(SpecError),

    // ---- tensors (from a binding, or a state's declaration) -------------------------------------
    /// An array of a dtype the saver cannot take, or bytes that do not fill its shape.
    #[error(transparent)]
    DType(#[from] DTypeError),

    // ---- input (stops the saver) ------------------------------------------------------------
    /// An example without sequences.
    #[error("example {key:?}: input_sequences must not be empty")]
    NoSequences {
        /// The example's key.
        key: String,
    },
    /// An example without states, and no default initial states.
    #[error("example {key:?}: initial_states must not be empty")]
    NoStates {
        /// The example's key.
        key: String,
    },
    /// A sequence, context or state name containing `:`.
    #[error("example {key:?}: name {name:?} may not contain ':'")]
    BadName {
        /// The example's key.
        key: String,
        /// The sequence, context or state name.
        name: String,
    },
    /// A sequence that is not at least one-dimensional (it has no time axis).
    #[error("example {key:?}: sequence {name:?} must have a time dimension, but has shape []")]
    NotASequence {
        /// The example's key.
        key: String,
        /// The sequence, context or state name.
        name: String,
    },
    /// Sequences of one example with different numbers of steps.
    #[error("example {key:?}: All sequence lengths must match, but received lengths: {lengths:?}")]
    UnequalLengths {
        /// The example's key.
        key: String,
        /// Each sequence with its number of steps.
        lengths: Vec<(String, usize)>,
    },
    /// An example whose sequences have no steps (TensorFlow rejects a zero padded length).
    #[error("example {key:?}: sequence {name:?} is empty; a sequence needs at least one step")]
    EmptySequence {
        /// The example's key.
        key: String,
        /// The sequence, context or state name.
        name: String,
    },
    /// `pad = false` and a sequence whose length is not a multiple of `num_unroll`.
    #[error(
        "example {key:?}: Tensor {name} first dimension should be a multiple of: {num_unroll}, but saw value: \
         {length}. Consider setting pad=True."
    )]
    NotMultiple {
        /// The example's key.
        key: String,
        /// The sequence, context or state name.
        name: String,
        /// The configured `num_unroll`.
        num_unroll: usize,
        /// The length in steps.
        length: usize,
    },
    /// An explicit `length` longer than the sequences.
    #[error("example {key:?}: Input length should be <= than length from sequences: {length} > {steps}")]
    LengthTooLong {
        /// The example's key.
        key: String,
        /// The length in steps.
        length: usize,
        /// The sequences' number of steps.
        steps: usize,
    },
    /// A length TensorFlow's int32 lengths cannot hold.
    #[error("example {key:?}: length {length} does not fit in int32")]
    LengthOverflow {
        /// The example's key.
        key: String,
        /// The length in steps.
        length: usize,
    },
    /// A tensor whose names, dtype or shape differ from the first example's (or from the
    /// default initial states).
    #[error("example {key:?}: {what} {name:?}: expected {expected}, found {found}")]
    Mismatch {
        /// The example's key.
        key: String,
        /// `sequence`, `context` or `initial state`.
        what: &'static str,
        /// The sequence, context or state name.
        name: String,
        /// What the first example (or the declaration) has.
        expected: String,
        /// What this one has.
        found: String,
    },
    /// A key whose earlier example still has segments to hand out. (TensorFlow fails the same
    /// way when the segment keys collide: `Key … already has a value for component …`.)
    #[error(
        "key {key:?} reused while its earlier sequence, with the same number of segments, still has segments \
         waiting for their states (TensorFlow's barrier refuses it too; make keys unique or use a capacity \
         smaller than the number of examples)"
    )]
    KeyInFlight {
        /// The example's key.
        key: String,
    },
    /// The input iterator reported an error for example `index` (0-based, in input order);
    /// `message` is that error's text.
    #[error("input example {index}: {message}")]
    Input {
        /// Its index in the input, from 0.
        index: u64,
        /// The input's error text.
        message: String,
    },
    /// A sparse tensor of example `index` that TensorFlow refuses (its indices, shapes or
    /// first dimension), or whose names or types differ from the first example's. Its kind is
    /// `input`: the example itself is bad, as for an error of the input.
    #[error("input example {index}: {error}")]
    Sparse {
        /// Its index in the input, from 0.
        index: u64,
        /// The example's key.
        key: String,
        /// What is wrong (boxed: it is large, and rare).
        error: Box<SparseError>,
    },
    /// A sparse tensor whose entries in one batch have different ranks (of one step, for a
    /// sequence); TensorFlow's `TakeManySparseFromTensorsMap` refuses them too. It stops the
    /// saver, as an input error does.
    #[error("sparse tensor '{name}' has ranks {ranks:?} within one batch")]
    SparseRank {
        /// The tensor's name.
        name: String,
        /// The ranks seen, sorted.
        ranks: Vec<usize>,
    },
    /// A record without the scalar key feature the options name.
    #[error("input example {index}: no scalar key feature {feature:?}")]
    MissingKey {
        /// The record's index in the input.
        index: u64,
        /// The key feature.
        feature: String,
    },
    /// A record whose length feature is negative.
    #[error("input example {index}: length feature {feature:?} is {value}; a length is at least 0")]
    NegativeLength {
        /// The record's index in the input.
        index: u64,
        /// The length feature.
        feature: String,
        /// Its value.
        value: i64,
    },
    /// A record did not parse as a SequenceExample with the spec.
    #[error("record {index}: {error}")]
    Parse {
        /// Its index in the input, from 0.
        index: u64,
        /// The parse error.
        error: Box<ParseError>,
    },
    /// A TFRecord file could not be read.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// A reader thread panicked.
    #[error("a state saver reader thread panicked: {message}")]
    Panic {
        /// The panic's payload, when it was a string.
        message: String,
    },
    /// A call after the saver stopped on an earlier input error. The earlier call returned that
    /// error itself; it is summed up here by its kind and text (errors holding I/O errors
    /// cannot be cloned).
    #[error("the state saver stopped after an earlier error: {message}")]
    Stopped {
        /// The earlier error's [`StateSaverError::kind_name`].
        cause: &'static str,
        /// The earlier error's text.
        message: String,
    },

    // ---- the consumer (recoverable) ---------------------------------------------------------
    /// `next_batch` before every state of the previous batch was saved. In TensorFlow this
    /// hangs: the next segments never become ready.
    #[error(
        "next_batch called before the states {states:?} of the previous batch were saved (waiting keys: {keys:?})"
    )]
    UnsavedStates {
        /// The states not saved yet.
        states: Vec<String>,
        /// The keys of the batch's examples.
        keys: Vec<String>,
    },
    /// `save_state` twice for one state of one batch.
    #[error("state {state:?} was already saved for this batch (keys: {keys:?})")]
    SavedTwice {
        /// The state's name.
        state: String,
        /// The keys of the batch's examples.
        keys: Vec<String>,
    },
    /// `save_state` on a batch that is no longer the current one.
    #[error("state {state:?} saved for a batch that is no longer current (keys: {keys:?})")]
    StaleBatch {
        /// The state's name.
        state: String,
        /// The keys of the batch's examples.
        keys: Vec<String>,
    },
    /// A state name that was never declared.
    #[error("state was not declared: {state}")]
    UnknownState {
        /// The state's name.
        state: String,
    },
    /// `save_state` with the wrong shape.
    #[error("Shape of state {state:?} should be: {expected:?}, but saw {found:?} (keys: {keys:?})")]
    StateShape {
        /// The state's name.
        state: String,
        /// What the first example (or the declaration) has.
        expected: Vec<usize>,
        /// What this one has.
        found: Vec<usize>,
        /// The keys of the batch's examples.
        keys: Vec<String>,
    },
    /// `save_state` with the wrong dtype.
    #[error("state {state:?} has dtype {expected}, but saw {found} (keys: {keys:?})")]
    StateDType {
        /// The state's name.
        state: String,
        /// What the first example (or the declaration) has.
        expected: TensorDType,
        /// What this one has.
        found: TensorDType,
        /// The keys of the batch's examples.
        keys: Vec<String>,
    },

    // ---- the end ---------------------------------------------------------------------------
    /// `allow_small_batch = false` and fewer segments than `batch_size` left at the end of the
    /// input (TensorFlow's `OutOfRange`: the barrier is closed and has insufficient elements).
    #[error("the input has ended with insufficient elements (requested {requested}, total size {remaining})")]
    InsufficientElements {
        /// Segments asked for (`batch_size`).
        requested: usize,
        /// Segments left.
        remaining: usize,
    },
}

impl StateSaverError {
    /// A short stable name for the kind of error, used in machine-readable reports (and as the
    /// Python exception's `kind`).
    pub fn kind_name(&self) -> &'static str {
        use StateSaverError::*;
        match self {
            CapacityTooSmall { .. } => "capacity_too_small",
            ZeroOption { .. } => "zero_option",
            StateNameColon { .. } => "bad_name",
            SequenceNotDense { .. } => "sequence_not_dense",
            ContextNotDense { .. } => "context_not_dense",
            NoSequenceFeatures => "no_sequence_features",
            BadKeyFeature { .. } => "bad_key_feature",
            BadLengthFeature { .. } => "bad_length_feature",
            NegativeLength { .. } => "negative_length",
            Spec(_) => "spec",
            NoSequences { .. } => "no_sequences",
            NoStates { .. } => "no_states",
            BadName { .. } => "bad_name",
            NotASequence { .. } => "not_a_sequence",
            UnequalLengths { .. } => "unequal_lengths",
            EmptySequence { .. } => "empty_sequence",
            NotMultiple { .. } => "not_multiple",
            LengthTooLong { .. } => "length_too_long",
            LengthOverflow { .. } => "length_overflow",
            Mismatch { .. } => "mismatch",
            KeyInFlight { .. } => "key_in_flight",
            Input { .. } | Sparse { .. } => "input",
            SparseRank { .. } => "sparse_rank",
            MissingKey { .. } => "missing_key",
            Parse { .. } => "parse",
            Pipeline(_) => "pipeline",
            Panic { .. } => "panic",
            Stopped { .. } => "stopped",
            UnsavedStates { .. } => "unsaved_states",
            SavedTwice { .. } => "saved_twice",
            StaleBatch { .. } => "stale_batch",
            UnknownState { .. } => "unknown_state",
            StateShape { .. } => "state_shape",
            StateDType { .. } => "state_dtype",
            DType(DTypeError::Unsupported { .. }) => "unsupported_dtype",
            DType(DTypeError::RawSize { .. }) => "raw_size",
            InsufficientElements { .. } => "insufficient_elements",
        }
    }

    /// Whether the error is about the options (or the record spec), found before any input is
    /// read (TensorFlow raises these as `ValueError`).
    pub fn is_option_error(&self) -> bool {
        use StateSaverError::*;
        matches!(
            self,
            CapacityTooSmall { .. }
                | ZeroOption { .. }
                | StateNameColon { .. }
                | SequenceNotDense { .. }
                | ContextNotDense { .. }
                | NoSequenceFeatures
                | BadKeyFeature { .. }
                | BadLengthFeature { .. }
                | Spec(_)
        )
    }
}

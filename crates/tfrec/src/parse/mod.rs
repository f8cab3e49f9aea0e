//! Parsing specs: Examples and SequenceExamples into dense, sparse and ragged tensors, with
//! TensorFlow's outputs and errors (`tf.io.parse_example`, `parse_single_example`,
//! `parse_sequence_example`, `parse_single_sequence_example`).
//!
//! Layers, each using only those above it in this list: `values` (dtypes and value storage),
//! `spec` (feature specs), `tensor` (tensors on the values), `columns` (parse-time builders on
//! the values), `json` and `spec_json` (JSON forms), `infer` (specs inferred from records),
//! `error`, `assemble` (tensors from columns), `ragged` (partitions), `fast`, `example` and
//! `sequence` (the parsers), `concat` (joining batches).

mod assemble;
mod columns;
mod concat;
mod error;
mod example;
pub(crate) mod fast;
pub mod infer;
mod json;
mod ragged;
mod sequence;
mod spec;
mod spec_json;
mod stdsort;
mod tensor;
mod values;

pub use concat::{concat_batch, BatchJoiner, ConcatError};
#[cfg(feature = "npz")]
pub(crate) use concat::{DenseJoin, JoinStore, Joined};
pub use error::{ParseError, ParseErrorKind, RaggedPartitionError};
pub use example::{ExampleParser, KeysSeen, TensorMap};
pub use infer::{infer_specs, InferError, InferredSpecs, SpecInferrer};
pub use sequence::{ParsedSequences, SequenceParser, StepLayout};
pub use spec::{
    FeatureSpec, FeatureSpecs, FixedLenFeature, FixedLenSequenceFeature, Partition, RaggedFeature, SequenceSpecs,
    SparseFeature, SpecError, SpecFile, VarLenFeature,
};
#[cfg(feature = "arrow")]
pub(crate) use spec_json::each_example_entry;
pub use spec_json::{specs_from_json_str, specs_to_json_string};
pub use tensor::{DenseTensor, Nested, RaggedError, RaggedTensor, ShapeError, SparseTensor, Tensor};
pub use values::{BytesArray, DType, SplitsDType, Values};

//! Parsing specs: Examples and SequenceExamples into dense, sparse and ragged tensors, with
//! TensorFlow's outputs and errors (`tf.io.parse_example`, `parse_single_example`,
//! `parse_sequence_example`, `parse_single_sequence_example`).

mod columns;
mod error;
mod example;
mod fast;
mod ragged;
mod sequence;
mod spec;
mod spec_json;
mod stdsort;
mod tensor;

pub use error::{ParseError, ParseErrorKind};
pub use example::{ExampleParser, TensorMap};
pub use sequence::{ParsedSequences, SequenceParser};
pub use spec::{
    specs_from_json, specs_to_json, values_from_json, values_to_json, DType, FeatureSpec, FeatureSpecs,
    FixedLenFeature, FixedLenSequenceFeature, Partition, RaggedFeature, SequenceSpecs, SparseFeature, SpecError,
    SpecFile, SplitsDType, Values, VarLenFeature,
};
pub use tensor::{concat_batch, ConcatError, DenseTensor, Nested, RaggedTensor, ShapeError, SparseTensor, Tensor};

//! tfrec: TensorFlow's data-record layer without TensorFlow.
//!
//! The crate is split by layer, each module owning one part of the format:
//! - [`record`]: TFRecord files (framing, CRCs, GZIP/ZLIB, many files, indexes).
//! - [`example`]: the `Example` / `SequenceExample` messages, their wire format and renderings.
//! - [`parse`]: feature specs and the parse ops, into dense, sparse and ragged tensors.
//! - [`pipeline`]: many files in, shuffled parsed batches out, on worker threads.
//! - [`state_saver`]: sequences cut into segments, batched, with state carried between them.
//! - [`tensor_proto`]: `tf.io.serialize_tensor` / `parse_tensor` (the `TensorProto` bytes).

pub mod example;
pub mod parse;
pub mod pipeline;
pub mod record;
pub mod state_saver;
pub mod tensor_proto;
#[cfg(feature = "arrow")]
pub mod columnar;

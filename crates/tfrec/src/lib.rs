//! tfrec: TensorFlow's data-record layer without TensorFlow.
//!
//! The crate is split by layer, each module owning one part of the format, each layer above
//! the records behind a Cargo feature of the same name (all on by default):
//! - [`record`]: TFRecord files (framing, CRCs, GZIP/ZLIB, many files, indexes). Always built.
//! - `example` (feature `example`): the `Example` / `SequenceExample` messages (what both do
//!   is one `Message` trait), their decoding, views and renderings.
//! - `parse` (feature `parse`): feature specs and the parse ops, into dense, sparse and
//!   ragged tensors.
//! - `pipeline` (feature `pipeline`): many files in, shuffled parsed batches out, on worker
//!   threads.
//! - `state_saver` (feature `state-saver`): sequences cut into segments, batched, with state
//!   carried between them.
//! - `tensor_proto` (feature `tensor-proto`): `tf.io.serialize_tensor` / `parse_tensor` (the
//!   `TensorProto` bytes); it needs only the wire format, not `example`.
//! - `columnar` (feature `arrow`, off by default): Examples and SequenceExamples to and from
//!   Arrow record batches.
//! - `npz` (feature `npz`, off by default): parsed batches joined into a NumPy `.npz` file.
//! - `stats` (feature `stats`, off by default): statistics of Examples as TFDV computes them,
//!   in tensorflow_metadata's `DatasetFeatureStatisticsList`.
//! - [`rng`]: the seeded generator of every shuffle. Always built.
//!
//! Under the layers, three crate-private ground-floor modules that name no layer: `wire` (the
//! protobuf wire format, for the messages and `TensorProto`), `json_text` (the JSON text
//! conventions of every JSON written) and `pyfloat` (floats as Python's protobuf prints them).
//!
//! Every layer's error converts into [`Error`], whose text never repeats along its
//! `source()` chain (see [`error`](mod@error)).
//!
//! # A short tour
//!
//! Write records, then read them back, one file:
//!
//! ```
//! use tfrec::record::{ReaderOptions, RecordReader, RecordWriter, WriterOptions};
//!
//! let dir = std::env::temp_dir().join(format!("tfrec-tour-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("train.tfrecord");
//!
//! let mut writer = RecordWriter::create(&path, WriterOptions::default())?;
//! for word in ["alpha", "beta", "gamma"] {
//!     writer.write_record(word.as_bytes())?;
//! }
//! writer.finish()?;
//!
//! let mut reader = RecordReader::open(&path, ReaderOptions::default())?;
//! let mut words = Vec::new();
//! while let Some(record) = reader.next_record()? {
//!     words.push(String::from_utf8_lossy(record).into_owned());
//! }
//! assert_eq!(words, ["alpha", "beta", "gamma"]);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), tfrec::Error>(())
//! ```
//!
//! Many files (paths, globs, directories) read as one stream with
//! [`record::MultiFileReader`]; record N of a file read directly with [`record::RecordIndex`].
//! With the `example` feature, records are `Example` messages to build, view and render; with
//! `parse`, a spec turns a batch of them into tensors as `tf.io.parse_example` does; with
//! `pipeline`, files become shuffled, parsed batches on worker threads.

#![deny(missing_docs)]

#[cfg(feature = "arrow")]
pub mod columnar;
pub mod error;
#[cfg(feature = "example")]
pub mod example;
#[cfg(feature = "example")]
mod json_text;
#[cfg(feature = "npz")]
pub mod npz;
#[cfg(feature = "parse")]
pub mod parse;
#[cfg(feature = "pipeline")]
pub mod pipeline;
#[cfg(feature = "example")]
mod pyfloat;
pub mod record;
pub mod rng;
#[cfg(feature = "state-saver")]
pub mod state_saver;
#[cfg(feature = "stats")]
pub mod stats;
#[cfg(feature = "tensor-proto")]
pub mod tensor_proto;
#[cfg(any(feature = "example", feature = "tensor-proto"))]
mod wire;

pub use error::{Error, ErrorCategory, Result};

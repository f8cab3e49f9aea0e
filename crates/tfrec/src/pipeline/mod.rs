//! Input pipelines: many files in, shuffled parsed batches out (tf.data for TFRecords).
//!
//! ```
//! use tfrec::example::Example;
//! use tfrec::parse::specs_from_json_str;
//! use tfrec::pipeline::Dataset;
//! use tfrec::record::{RecordWriter, WriterOptions};
//!
//! # let dir = tempfile::tempdir()?;
//! # let mut files = Vec::new();
//! # for f in 0..4 {
//! #     let path = dir.path().join(format!("train-{f}.tfrecord"));
//! #     let mut w = RecordWriter::create(&path, WriterOptions::default())?;
//! #     for r in 0..100 {
//! #         w.write_record(&Example::builder().int64("age", f * 100 + r).build()?.encode())?;
//! #     }
//! #     w.finish()?;
//! #     files.push(path);
//! # }
//! let specs = specs_from_json_str(r#"{"age": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}"#)?;
//! let batches = Dataset::from_files(files)  // or Dataset::from_inputs(["data/train-*.tfrecord"])?
//!     .interleave(4, 16)?               // file-level stages first
//!     .shard(2, 1)?                     // worker 1 of 2 keeps every other record
//!     .shuffle(1_000, 42)?              // then shuffles its own records
//!     .repeat(2)                        // over two epochs, reshuffled in the second
//!     .batch(64, true)?
//!     .parse_examples(&specs)?          // parsed on a pool of worker threads
//!     .threads(2)
//!     .prefetch(4);
//! let mut records = 0;
//! for batch in batches.iter() {
//!     let tensors = batch?;
//!     records += tensors["age"].as_dense().map_or(0, |t| t.shape()[0]);
//! }
//! assert_eq!(records, 384); // 200 records of the shard, twice, in whole batches of 64
//! # Ok::<(), tfrec::Error>(())
//! ```
//!
//! Stages apply in the order of the calls, as in tf.data: `.take(5).shuffle(100, s)` shuffles
//! the first five records, `.shuffle(100, s).take(5)` takes five records of the shuffled
//! stream. The file-level stages ([`Dataset::interleave`], [`Dataset::shard_files`]) choose
//! and order the files, so they come before every record-level stage (a later call is an
//! error saying so). Stages called after [`Dataset::batch`] ([`Batched::take`], `skip`,
//! `repeat`, `shard`, `shuffle`) work on whole batches, as tf.data's do: `.batch(5)?.take(2)`
//! is two batches of five. There are `threads` worker threads; each in turn takes the record stream,
//! reads the next batch from it and then parses or maps that batch while another reads, so
//! `threads(1)` keeps to one core; `threads(0)` (or `threads(1)` where the process may use one
//! CPU only) runs it all on the iterating thread. By default the output order depends only on the
//! data and the settings, never on the thread count (results are put back in batch order);
//! [`Pipeline::deterministic`]`(false)` hands batches over as they finish instead.
//!
//! Memory is bounded by what was asked for: the shuffle buffers, one batch being filled, and at
//! most `prefetch + threads` batches in flight between the reader and the consumer. Dropping
//! the iterator stops and joins every thread.

mod batches;
mod cardinality;
mod data;
mod dataset;
mod elements;
mod error;
mod items;
mod source;
mod stages;
mod workers;

pub use cardinality::Cardinality;
pub use data::{Counters, RecordBatch, RecordOrigin};
pub use dataset::{Batched, Dataset, DatasetRecords, Pipeline, ShardBy};
pub use elements::{ElementIter, ElementIterator, ElementStage, Elements, LiftFn, SourceFn, WaitFn};
pub use error::{DatasetError, PipelineError};
pub use items::{CallbackError, MapFn, PredicateFn, StackFn};
#[cfg(feature = "state-saver")]
pub(crate) use workers::panic_message;
pub use workers::PipelineIter;

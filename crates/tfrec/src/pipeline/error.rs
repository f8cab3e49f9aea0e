//! The pipeline's errors: a data set built with arguments tf.data would refuse
//! ([`DatasetError`]), and a failure while it runs ([`PipelineError`]), whose parse errors name
//! the file and place of the record that failed.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};

use super::data::{RecordBatch, RecordOrigin};
use crate::parse::ParseError;
use crate::record::RecordError;

/// A data set built with arguments tf.data would refuse (found when the stage is added).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// `shard` with `num_shards == 0`.
    #[error("num_shards must be at least 1")]
    NoShards,
    /// `shard` with an index that is not below `num_shards`.
    #[error("shard index {index} is not below num_shards {num_shards}")]
    ShardIndex {
        /// The index asked for.
        index: usize,
        /// The number of shards.
        num_shards: usize,
    },
    /// Sharding by file with fewer files than shards: some shard would read nothing.
    #[error(
        "sharding {files} file(s) by file into {num_shards} shards leaves a shard with no file; \
         shard by record (`shard`) instead"
    )]
    TooFewFiles {
        /// Files left to shard.
        files: usize,
        /// The number of shards.
        num_shards: usize,
    },
    /// A file-level stage called after a record-level one.
    #[error("`{stage}` chooses or orders files, so it must come before `{after}`, which works on records")]
    FileStageAfterRecordStage {
        /// The file-level stage.
        stage: &'static str,
        /// The record-level stage called before it.
        after: &'static str,
    },
    /// A size argument of zero (`shuffle`'s buffer, `interleave`'s cycle or block length,
    /// `batch`'s size).
    #[error("{argument} must be at least 1")]
    Zero {
        /// The argument's name, as tf.data names it.
        argument: &'static str,
    },
}

/// A failure of the pipeline. After one, the iterator ends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// A file could not be read, or held a damaged record (with its path and offset).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A batch did not parse. The error names the example in the batch; `path` and `origin`
    /// say where that record was read.
    #[error("{}{error}", parse_place(*batch, path.as_deref(), origin))]
    Parse {
        /// Index of the batch in the stream.
        batch: u64,
        /// The file of the record that failed, when known.
        path: Option<PathBuf>,
        /// Where in it the record was, when known.
        origin: Option<RecordOrigin>,
        /// The parse error.
        error: Box<ParseError>,
    },
    /// A function given to [`Pipeline::map`](super::Pipeline::map) failed. Its text ends with the function's error
    /// (the crate's rule: self-contained text, no `source()`); the error itself is `error`, to
    /// match on or downcast.
    #[error("batch {batch}: the map function failed: {error}")]
    Map {
        /// Index of the batch in the stream.
        batch: u64,
        /// The function's error.
        error: Box<dyn StdError + Send + Sync>,
    },
    /// A caller's function given to an element stage failed (`stage`: `map`, `filter`,
    /// `batch`, or `source` and `lift` for where the elements come from). Its text is the
    /// function's own; the error itself is `error`, to match on or downcast.
    #[error("the {stage} function failed: {error}")]
    Callback {
        /// The stage whose function failed.
        stage: &'static str,
        /// The function's error, unchanged.
        error: Box<dyn StdError + Send + Sync>,
    },
    /// A worker thread panicked; its message.
    #[error("a pipeline thread panicked: {0}")]
    Panic(String),
}

fn parse_place(batch: u64, path: Option<&Path>, origin: &Option<RecordOrigin>) -> String {
    match (path, origin) {
        (Some(path), Some(o)) => format!("{}: record {} at byte {}: ", path.display(), o.index, o.offset),
        _ => format!("batch {batch}: "),
    }
}

impl RecordBatch {
    /// A parse error of this batch as a [`PipelineError::Parse`] naming the failing record's
    /// file and place.
    pub fn parse_error(&self, error: ParseError) -> PipelineError {
        let record = error.example;
        PipelineError::Parse {
            batch: self.index,
            path: record.and_then(|i| self.path(i)).map(Path::to_path_buf),
            origin: record.and_then(|i| self.origin(i)),
            error: Box::new(error),
        }
    }
}

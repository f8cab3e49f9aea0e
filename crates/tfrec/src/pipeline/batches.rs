//! The batch level of a data set: records grouped into [`RecordBatch`]es by [`Batcher`]; the
//! stages called after `batch` then go over whole batches (`items.rs`), as tf.data's stages
//! after `batch` do.

use std::path::PathBuf;
use std::sync::Arc;

use super::data::RecordBatch;
use super::error::PipelineError;
use super::items::ItemStream;
use super::stages::Stream;
use crate::record::RecordError;

/// A stream of batches, pulled by the worker whose turn it is to read. A batch's `index` is
/// set by the consumer.
pub(crate) type BatchStream = dyn ItemStream<RecordBatch>;

/// What the batch stages do with a batch they drop: check its records' deferred data CRCs, so
/// a damaged record fails the stream as it does when the reader checks.
pub(crate) fn check_dropped(batch: &mut RecordBatch) -> Result<(), PipelineError> {
    Ok(batch.check_crcs()?)
}

/// tf.data's `batch`: `size` records of the stream below in one buffer; the last, smaller
/// batch is dropped with `drop_remainder`.
pub(crate) struct Batcher {
    pub up: Box<dyn Stream>,
    pub size: usize,
    pub drop_remainder: bool,
    pub files: Arc<[PathBuf]>,
    /// Bytes of the last batch: the next is sized like it, so filling it does not reallocate.
    pub last_bytes: usize,
    /// The stream below has ended (until a restart).
    pub ended: bool,
    /// Chunks rather than batches: the records read before a failure are handed over (as a
    /// short chunk) before the failure, which waits here.
    pub chunks: bool,
    pub failure: Option<RecordError>,
}

impl ItemStream<RecordBatch> for Batcher {
    fn next_item(&mut self) -> Result<Option<RecordBatch>, PipelineError> {
        if let Some(e) = self.failure.take() {
            return Err(e.into());
        }
        if self.ended {
            return Ok(None);
        }
        let mut batch = RecordBatch {
            index: 0,
            data: Vec::with_capacity(self.last_bytes + self.last_bytes / 8),
            places: Vec::with_capacity(self.size),
            shared: Vec::new(),
            bytes: 0,
            origins: Vec::with_capacity(self.size),
            files: Arc::clone(&self.files),
            unchecked: Vec::new(),
        };
        let more = match self.up.fill(&mut batch, self.size) {
            Err(e) if self.chunks && !batch.is_empty() => {
                self.failure = Some(e);
                self.ended = true;
                return Ok(Some(batch));
            }
            more => more?,
        };
        if !more {
            self.ended = true;
        }
        self.last_bytes = batch.copied_len();
        let short = batch.len() < self.size;
        if batch.is_empty() || (short && self.drop_remainder) {
            // Dropped records are checked all the same: a damaged one fails the stream, as it
            // does when the reader checks.
            batch.check_crcs()?;
            return Ok(None);
        }
        Ok(Some(batch))
    }

    fn restart(&mut self) {
        self.ended = false;
        self.failure = None;
        self.up.restart();
    }
}

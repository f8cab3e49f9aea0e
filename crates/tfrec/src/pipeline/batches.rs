//! The batch level of a data set: records grouped into [`RecordBatch`]es, then the stages
//! called after `batch` (shard, shuffle, repeat, skip, take), each over whole batches as
//! tf.data's stages after `batch` are.

use std::path::PathBuf;
use std::sync::Arc;

use super::data::RecordBatch;
use super::stages::Stage;
use super::stages::{RepeatCount, ShuffleBuffer, Stream};
use crate::record::RecordError;

/// A stream of batches, pulled by the worker whose turn it is to read.
pub(crate) trait BatchStream: Send {
    /// The next batch, or `None` at the end. Its `index` is set by the consumer.
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, RecordError>;

    /// Starts the stream over from its beginning: a new iteration, for `repeat`.
    fn restart(&mut self);
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

impl BatchStream for Batcher {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, RecordError> {
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        if self.ended {
            return Ok(None);
        }
        let mut batch = RecordBatch {
            index: 0,
            data: Vec::with_capacity(self.last_bytes + self.last_bytes / 8),
            ends: Vec::with_capacity(self.size),
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
        self.last_bytes = batch.data.len();
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

/// One stage over batches, as [`Stage`] describes it.
pub(crate) struct BatchStage {
    up: Box<dyn BatchStream>,
    kind: Kind,
}

enum Kind {
    Shard {
        num_shards: u64,
        index: u64,
        position: u64,
    },
    Shuffle {
        buffer: ShuffleBuffer<RecordBatch>,
        up_done: bool,
    },
    Repeat(RepeatCount),
    Skip {
        count: u64,
        skipped: u64,
    },
    Take {
        count: u64,
        taken: u64,
    },
}

impl BatchStage {
    pub fn new(up: Box<dyn BatchStream>, stage: &Stage) -> BatchStage {
        let kind = match *stage {
            Stage::Shard { num_shards, index } => Kind::Shard {
                num_shards: num_shards as u64,
                index: index as u64,
                position: 0,
            },
            Stage::Shuffle {
                buffer_size,
                seed,
                reshuffle_each_iteration,
            } => Kind::Shuffle {
                buffer: ShuffleBuffer::new(buffer_size, seed, reshuffle_each_iteration),
                up_done: false,
            },
            Stage::Repeat(count) => Kind::Repeat(RepeatCount::new(count)),
            Stage::Skip(count) => Kind::Skip { count, skipped: 0 },
            Stage::Take(count) => Kind::Take { count, taken: 0 },
        };
        BatchStage { up, kind }
    }
}

impl BatchStream for BatchStage {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, RecordError> {
        let up = &mut self.up;
        match &mut self.kind {
            Kind::Shard {
                num_shards,
                index,
                position,
            } => {
                while let Some(mut batch) = up.next_batch()? {
                    let mine = *position % *num_shards == *index;
                    *position += 1;
                    if mine {
                        return Ok(Some(batch));
                    }
                    batch.check_crcs()?;
                }
                Ok(None)
            }
            Kind::Shuffle { buffer, up_done } => {
                while !*up_done && buffer.has_room() {
                    match up.next_batch()? {
                        Some(batch) => buffer.push(batch),
                        None => *up_done = true,
                    }
                }
                Ok(buffer.take_random())
            }
            Kind::Repeat(state) => {
                while !state.finished() {
                    if let Some(batch) = up.next_batch()? {
                        state.produced();
                        return Ok(Some(batch));
                    }
                    if !state.input_ended() {
                        break;
                    }
                    up.restart();
                }
                Ok(None)
            }
            Kind::Skip { count, skipped } => {
                while *skipped < *count {
                    let Some(mut batch) = up.next_batch()? else {
                        return Ok(None);
                    };
                    batch.check_crcs()?;
                    *skipped += 1;
                }
                up.next_batch()
            }
            Kind::Take { count, taken } => {
                if *taken >= *count {
                    return Ok(None);
                }
                let batch = up.next_batch()?;
                *taken += u64::from(batch.is_some());
                Ok(batch)
            }
        }
    }

    fn restart(&mut self) {
        match &mut self.kind {
            Kind::Shard { position, .. } => *position = 0,
            Kind::Shuffle { buffer, up_done } => {
                drop(buffer.restart());
                *up_done = false;
            }
            Kind::Repeat(state) => state.reset(),
            Kind::Skip { skipped, .. } => *skipped = 0,
            Kind::Take { taken, .. } => *taken = 0,
        }
        self.up.restart();
    }
}

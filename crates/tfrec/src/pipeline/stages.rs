//! The record-level stages of a data set, each a [`Stream`] over the one before it, chained
//! in the order of the builder calls: shard by record, shuffle, repeat, skip, take; and
//! [`Stage`], the description of one stage the builder records (at record or batch level).

use super::data::{RecordBatch, RecordOrigin};
use super::error::DatasetError;
use crate::record::RecordError;
// The one shuffle buffer of the crate, also `tfrec shuffle`'s; the batch stream takes it from here.
pub(crate) use crate::record::ShuffleBuffer;

/// A stage over records (before `batch`), over batches (after it) or over a caller's elements
/// (after a callback), in the order of the calls.
#[derive(Debug, Clone, Copy)]
pub(super) enum Stage {
    Shard {
        num_shards: usize,
        index: usize,
    },
    Shuffle {
        buffer_size: usize,
        seed: u64,
        reshuffle_each_iteration: bool,
    },
    Repeat(Option<u64>),
    Skip(u64),
    Take(u64),
}

impl Stage {
    pub(super) fn shard(num_shards: usize, index: usize) -> Result<Stage, DatasetError> {
        if num_shards == 0 {
            return Err(DatasetError::NoShards);
        }
        if index >= num_shards {
            return Err(DatasetError::ShardIndex { index, num_shards });
        }
        Ok(Stage::Shard { num_shards, index })
    }

    pub(super) fn shuffle(
        buffer_size: usize,
        seed: u64,
        reshuffle_each_iteration: bool,
    ) -> Result<Stage, DatasetError> {
        if buffer_size == 0 {
            return Err(DatasetError::Zero {
                argument: "buffer_size",
            });
        }
        Ok(Stage::Shuffle {
            buffer_size,
            seed,
            reshuffle_each_iteration,
        })
    }

    pub(super) fn name(&self) -> &'static str {
        match self {
            Stage::Shard { .. } => "shard",
            Stage::Shuffle { .. } => "shuffle",
            Stage::Repeat(_) => "repeat",
            Stage::Skip(_) => "skip",
            Stage::Take(_) => "take",
        }
    }
}

/// A stream of records, pulled one at a time on the reader thread.
pub(crate) trait Stream: Send {
    /// Calls `f` with the next record and where it came from; `false` at the end. The record
    /// is lent, so a stage that keeps nothing passes the file reader's buffer on uncopied.
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError>;

    /// Starts the stream over from its beginning: a new iteration, for `repeat`.
    fn restart(&mut self);

    /// Appends records to `batch` until it holds `size`; `false` once the stream has ended.
    /// After an error, the records appended before it stay in `batch`. It is called once a
    /// batch, so the files' stream can take many records in one loop (see
    /// [`FileSource`](super::source::FileSource)); a stage takes them one by one.
    fn fill(&mut self, batch: &mut RecordBatch, size: usize) -> Result<bool, RecordError> {
        while batch.len() < size {
            if !self.next_with(&mut |record, origin| batch.push(record, origin, None))? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// tf.data's `shard` on records: keeps records `index, index + n, …` of its input.
pub(crate) struct ShardRecords {
    pub up: Box<dyn Stream>,
    pub num_shards: u64,
    pub index: u64,
    pub position: u64,
}

impl Stream for ShardRecords {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        loop {
            let mine = self.position % self.num_shards == self.index;
            // Records of other shards are passed over without a copy.
            let got = if mine {
                self.up.next_with(f)?
            } else {
                self.up.next_with(&mut |_, _| {})?
            };
            if !got {
                return Ok(false);
            }
            self.position += 1;
            if mine {
                return Ok(true);
            }
        }
    }

    fn restart(&mut self) {
        self.position = 0;
        self.up.restart();
    }
}

/// tf.data's `shuffle` on records.
pub(crate) struct Shuffle {
    up: Box<dyn Stream>,
    buffer: ShuffleBuffer<(Vec<u8>, RecordOrigin)>,
    /// Buffers of records already handed out, reused for the next ones.
    spare: Vec<Vec<u8>>,
    up_done: bool,
}

impl Shuffle {
    pub fn new(up: Box<dyn Stream>, size: usize, seed: u64, reshuffle_each_iteration: bool) -> Shuffle {
        Shuffle {
            up,
            buffer: ShuffleBuffer::new(size, seed, reshuffle_each_iteration),
            spare: Vec::new(),
            up_done: false,
        }
    }
}

impl Stream for Shuffle {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        while !self.up_done && self.buffer.has_room() {
            let mut slot = self.spare.pop().unwrap_or_default();
            slot.clear();
            let mut origin = RecordOrigin::default();
            let got = self.up.next_with(&mut |record, o| {
                slot.extend_from_slice(record);
                origin = o;
            })?;
            if got {
                self.buffer.push((slot, origin));
            } else {
                self.up_done = true;
                self.spare.push(slot);
            }
        }
        let Some((record, origin)) = self.buffer.take_random() else {
            return Ok(false);
        };
        f(&record, origin);
        self.spare.push(record);
        Ok(true)
    }

    fn restart(&mut self) {
        let left = self.buffer.restart().map(|(r, _)| r);
        self.spare.extend(left);
        self.up_done = false;
        self.up.restart();
    }
}

/// tf.data's `repeat` bookkeeping, shared by the record and the batch streams: the input
/// `count` times (`None`: forever; an empty input ends it).
#[derive(Debug, Clone)]
pub(crate) struct RepeatCount {
    count: Option<u64>,
    done: u64,
    /// Whether the current iteration gave an item (repeating an empty input forever ends).
    produced: bool,
}

impl RepeatCount {
    pub fn new(count: Option<u64>) -> Self {
        RepeatCount {
            count,
            done: 0,
            produced: false,
        }
    }

    /// Whether every iteration has been given.
    pub fn finished(&self) -> bool {
        self.count.is_some_and(|c| self.done >= c)
    }

    pub fn produced(&mut self) {
        self.produced = true;
    }

    /// The input ended: whether to start it again (`false`: this stream ends too).
    pub fn input_ended(&mut self) -> bool {
        self.done += 1;
        let empty_forever = self.count.is_none() && !self.produced;
        self.produced = false;
        !empty_forever && !self.finished()
    }

    pub fn reset(&mut self) {
        self.done = 0;
        self.produced = false;
    }
}

/// tf.data's `repeat` on records.
pub(crate) struct Repeat {
    pub up: Box<dyn Stream>,
    pub state: RepeatCount,
}

impl Stream for Repeat {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        while !self.state.finished() {
            if self.up.next_with(f)? {
                self.state.produced();
                return Ok(true);
            }
            if !self.state.input_ended() {
                break;
            }
            self.up.restart();
        }
        Ok(false)
    }

    fn restart(&mut self) {
        self.state.reset();
        self.up.restart();
    }
}

/// tf.data's `skip`.
pub(crate) struct Skip {
    pub up: Box<dyn Stream>,
    pub count: u64,
    pub skipped: u64,
}

impl Stream for Skip {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        while self.skipped < self.count {
            if !self.up.next_with(&mut |_, _| {})? {
                return Ok(false);
            }
            self.skipped += 1;
        }
        self.up.next_with(f)
    }

    fn restart(&mut self) {
        self.skipped = 0;
        self.up.restart();
    }
}

/// tf.data's `take`: stops reading once `count` records are out.
pub(crate) struct Take {
    pub up: Box<dyn Stream>,
    pub count: u64,
    pub taken: u64,
}

impl Stream for Take {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        if self.taken >= self.count || !self.up.next_with(f)? {
            return Ok(false);
        }
        self.taken += 1;
        Ok(true)
    }

    /// The stream below fills the batch, up to the records left to take, so a `take` (the
    /// CLI's `--limit`) keeps the files' loop over whole windows.
    fn fill(&mut self, batch: &mut RecordBatch, size: usize) -> Result<bool, RecordError> {
        let before = batch.len();
        let left = usize::try_from(self.count.saturating_sub(self.taken)).unwrap_or(usize::MAX);
        let filled = self.up.fill(batch, before + size.saturating_sub(before).min(left));
        self.taken += (batch.len() - before) as u64;
        // Short of `size` with nothing left to take is this stream's end.
        Ok(filled? && batch.len() >= size)
    }

    fn restart(&mut self) {
        self.taken = 0;
        self.up.restart();
    }
}

//! Streams of whole items and the one set of stages over them: batches of records (the stages
//! called after `batch`) and a caller's own elements (every stage after a callback, see
//! `elements.rs`) go through the same shard, shuffle, repeat, skip and take, with the same
//! shuffle buffer and generator as the record stages; the callback stages (map, filter, and
//! batching elements with a caller's stacking function) apply to elements only.

use std::error::Error as StdError;
use std::sync::Arc;

use super::error::PipelineError;
use super::stages::{RepeatCount, ShuffleBuffer, Stage};

/// What a caller's function gives back when it fails: its own error, carried unchanged to the
/// consumer in [`PipelineError::Callback`].
pub type CallbackError = Box<dyn StdError + Send + Sync>;

/// A caller's function from an element to an element (a `map`).
pub type MapFn<E> = Arc<dyn Fn(E) -> Result<E, CallbackError> + Send + Sync>;
/// A caller's predicate on an element (a `filter`).
pub type PredicateFn<E> = Arc<dyn Fn(&E) -> Result<bool, CallbackError> + Send + Sync>;
/// A caller's function making one element of a batch of them (a `batch` of elements).
pub type StackFn<E> = Arc<dyn Fn(Vec<E>) -> Result<E, CallbackError> + Send + Sync>;

/// A stream of whole items, pulled one at a time.
pub(crate) trait ItemStream<T>: Send {
    /// The next item, or `None` at the end.
    fn next_item(&mut self) -> Result<Option<T>, PipelineError>;

    /// Starts the stream over from its beginning: a new iteration, for `repeat`.
    fn restart(&mut self);
}

/// What a stage over items does with an item it drops (a skipped batch's records still have
/// their data CRCs checked, so a damaged one fails the stream as the reader would).
pub(crate) type Discard<T> = fn(&mut T) -> Result<(), PipelineError>;

/// One stage over items: a [`Stage`] every level has, or a callback stage.
pub(crate) enum ItemStage<E> {
    Stage(Stage),
    Map(MapFn<E>),
    Filter(PredicateFn<E>),
    Batch {
        size: usize,
        drop_remainder: bool,
        stack: StackFn<E>,
    },
}

// Not derived: a derived `Clone` would ask it of the elements, which only the callbacks hold.
impl<E> Clone for ItemStage<E> {
    fn clone(&self) -> Self {
        match self {
            ItemStage::Stage(stage) => ItemStage::Stage(*stage),
            ItemStage::Map(f) => ItemStage::Map(Arc::clone(f)),
            ItemStage::Filter(f) => ItemStage::Filter(Arc::clone(f)),
            ItemStage::Batch {
                size,
                drop_remainder,
                stack,
            } => ItemStage::Batch {
                size: *size,
                drop_remainder: *drop_remainder,
                stack: Arc::clone(stack),
            },
        }
    }
}

impl<E> ItemStage<E> {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            ItemStage::Stage(stage) => stage.name(),
            ItemStage::Map(_) => "map",
            ItemStage::Filter(_) => "filter",
            ItemStage::Batch { .. } => "batch",
        }
    }
}

/// One running stage over the items of the stream below it.
pub(crate) struct StageStream<T> {
    up: Box<dyn ItemStream<T>>,
    kind: Kind<T>,
    discard: Discard<T>,
}

enum Kind<T> {
    Shard {
        num_shards: u64,
        index: u64,
        position: u64,
    },
    Shuffle {
        buffer: ShuffleBuffer<T>,
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
    Map(MapFn<T>),
    Filter(PredicateFn<T>),
    Batch {
        size: usize,
        drop_remainder: bool,
        stack: StackFn<T>,
        up_done: bool,
    },
}

impl<T: Send + 'static> StageStream<T> {
    pub fn new(up: Box<dyn ItemStream<T>>, stage: &ItemStage<T>, discard: Discard<T>) -> StageStream<T> {
        let kind = match stage {
            ItemStage::Stage(stage) => match *stage {
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
            },
            ItemStage::Map(f) => Kind::Map(Arc::clone(f)),
            ItemStage::Filter(f) => Kind::Filter(Arc::clone(f)),
            ItemStage::Batch {
                size,
                drop_remainder,
                stack,
            } => Kind::Batch {
                size: *size,
                drop_remainder: *drop_remainder,
                stack: Arc::clone(stack),
                up_done: false,
            },
        };
        StageStream { up, kind, discard }
    }

    /// `stages` over `up`, in order.
    pub fn chain(
        mut up: Box<dyn ItemStream<T>>,
        stages: &[ItemStage<T>],
        discard: Discard<T>,
    ) -> Box<dyn ItemStream<T>> {
        for stage in stages {
            up = Box::new(StageStream::new(up, stage, discard));
        }
        up
    }
}

fn callback(stage: &'static str) -> impl FnOnce(CallbackError) -> PipelineError {
    move |error| PipelineError::Callback { stage, error }
}

impl<T: Send> ItemStream<T> for StageStream<T> {
    fn next_item(&mut self) -> Result<Option<T>, PipelineError> {
        let up = &mut self.up;
        match &mut self.kind {
            Kind::Shard {
                num_shards,
                index,
                position,
            } => {
                while let Some(mut item) = up.next_item()? {
                    let mine = *position % *num_shards == *index;
                    *position += 1;
                    if mine {
                        return Ok(Some(item));
                    }
                    (self.discard)(&mut item)?;
                }
                Ok(None)
            }
            Kind::Shuffle { buffer, up_done } => {
                while !*up_done && buffer.has_room() {
                    match up.next_item()? {
                        Some(item) => buffer.push(item),
                        None => *up_done = true,
                    }
                }
                Ok(buffer.take_random())
            }
            Kind::Repeat(state) => {
                while !state.finished() {
                    if let Some(item) = up.next_item()? {
                        state.produced();
                        return Ok(Some(item));
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
                    let Some(mut item) = up.next_item()? else {
                        return Ok(None);
                    };
                    (self.discard)(&mut item)?;
                    *skipped += 1;
                }
                up.next_item()
            }
            Kind::Take { count, taken } => {
                if *taken >= *count {
                    return Ok(None);
                }
                let item = up.next_item()?;
                *taken += u64::from(item.is_some());
                Ok(item)
            }
            Kind::Map(f) => match up.next_item()? {
                Some(item) => f(item).map(Some).map_err(callback("map")),
                None => Ok(None),
            },
            Kind::Filter(keep) => {
                while let Some(item) = up.next_item()? {
                    if keep(&item).map_err(callback("filter"))? {
                        return Ok(Some(item));
                    }
                }
                Ok(None)
            }
            Kind::Batch {
                size,
                drop_remainder,
                stack,
                up_done,
            } => {
                let mut items = Vec::new();
                while !*up_done && items.len() < *size {
                    match up.next_item()? {
                        Some(item) => items.push(item),
                        None => *up_done = true,
                    }
                }
                if items.is_empty() || (*drop_remainder && items.len() < *size) {
                    return Ok(None);
                }
                stack(items).map(Some).map_err(callback("batch"))
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
            Kind::Batch { up_done, .. } => *up_done = false,
            Kind::Map(_) | Kind::Filter(_) => {}
        }
        self.up.restart();
    }
}

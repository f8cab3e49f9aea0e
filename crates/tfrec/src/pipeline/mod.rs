//! Input pipelines: many files in, shuffled parsed batches out (tf.data for TFRecords).
//!
//! ```no_run
//! use tfrec::parse::specs_from_json;
//! use tfrec::pipeline::Dataset;
//!
//! let specs = specs_from_json(&serde_json::json!({
//!     "age": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
//! }))?;
//! let batches = Dataset::from_inputs(["data/train-*.tfrecord.gz"])?
//!     .interleave(4, 16)
//!     .shard(8, 3)                    // worker 3 of 8 reads its part of every file
//!     .shuffle(10_000, 42)
//!     .repeat_epochs(2)
//!     .batch(1024, true)
//!     .parse_examples(&specs)?        // parsed on a pool of worker threads
//!     .threads(2)
//!     .prefetch(4);
//! for batch in batches.iter() {
//!     let tensors = batch?;
//!     println!("{:?}", tensors["age"].as_dense().map(|t| t.shape().to_vec()));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The record stream is made on one reader thread, in this order whatever order the builder
//! calls come in: shard by file → per epoch { interleave files → shard by record → shuffle
//! buffer (reseeded each epoch if asked) } → skip → take → batch. Batches are then parsed or
//! mapped on `threads` worker threads. By default the output order depends only on the data
//! and the settings, never on the thread count (results are put back in batch order);
//! [`Pipeline::deterministic`]`(false)` hands batches over as they finish instead.
//!
//! Memory is bounded by what was asked for: the shuffle buffer, one batch being filled, and at
//! most `prefetch + threads` batches in flight between the reader and the consumer. Dropping
//! the iterator stops and joins every thread.

mod source;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use source::{Source, SourceConfig};

use crate::parse::{
    ExampleParser, FeatureSpecs, ParseError, ParsedSequences, SequenceParser, SequenceSpecs, SpecError, TensorMap,
};
use crate::record::{expand_inputs, OnCorruption, ReaderOptions, RecordError};

/// How to split a data set between workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardBy {
    /// Whole files: worker `i` of `n` reads files `i, i+n, …` (cheap; needs many files).
    File,
    /// Records: worker `i` of `n` keeps records `i, i+n, …` of the interleaved stream (every
    /// worker reads every file).
    Record,
}

/// How many times to go over the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    Epochs(u64),
    Forever,
}

/// A failure of the pipeline. After one, the iterator ends.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A file could not be read, or held a damaged record (with its path and offset).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A batch did not parse (`batch` is its index; the error names the example in it).
    #[error("batch {batch}: {error}")]
    Parse { batch: u64, error: Box<ParseError> },
    /// A user function failed.
    #[error("batch {batch}: {message}")]
    Map { batch: u64, message: String },
    /// A worker thread panicked; its message.
    #[error("a pipeline thread panicked: {0}")]
    Panic(String),
}

/// Live counters of a pipeline, readable from any thread (for a progress bar).
#[derive(Debug, Default)]
pub struct Counters {
    /// Records read from the files (before shuffling and sharding by record).
    pub records: AtomicU64,
    /// Data bytes of those records.
    pub bytes: AtomicU64,
    /// Files read to the end.
    pub files_done: AtomicU64,
    /// Damaged regions skipped (with [`OnCorruption::Resync`]).
    pub skipped_regions: AtomicU64,
    /// Files abandoned (with [`OnCorruption::SkipFile`]).
    pub skipped_files: AtomicU64,
    /// Batches handed to the consumer.
    pub batches: AtomicU64,
    /// What was skipped, each with its kind, file and offset (the first 1024).
    pub problems: Mutex<Vec<RecordError>>,
}

/// A batch of raw records in one buffer.
#[derive(Debug, Clone, Default)]
pub struct RecordBatch {
    /// Index of the batch in the stream.
    pub index: u64,
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl RecordBatch {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch has no records.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Record `i`.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.data.get(start..end)
    }

    /// The records as slices.
    pub fn records(&self) -> Vec<&[u8]> {
        (0..self.len()).filter_map(|i| self.get(i)).collect()
    }
}

/// A data set: files and the record-level stages. Finish it with [`Dataset::batch`].
#[derive(Debug, Clone)]
pub struct Dataset {
    config: SourceConfig,
}

impl Dataset {
    /// A data set over files, directories and glob patterns (see [`expand_inputs`]).
    pub fn from_inputs<I, S>(inputs: I) -> Result<Dataset, RecordError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(Dataset::from_files(expand_inputs(inputs)?))
    }

    /// A data set over these files, in this order.
    pub fn from_files(files: Vec<PathBuf>) -> Dataset {
        Dataset {
            config: SourceConfig {
                files,
                reader: ReaderOptions::default(),
                cycle_length: 1,
                block_length: 1,
                shard: None,
                shuffle: None,
                repeat: Repeat::Epochs(1),
                skip: 0,
                take: None,
            },
        }
    }

    /// Reader options for every file (compression, CRC checks, corruption policy…).
    pub fn reader_options(mut self, options: ReaderOptions) -> Self {
        self.config.reader = options;
        self
    }

    /// Skip damaged records (resynchronising) and count them in [`Counters`], instead of
    /// failing at the first one.
    pub fn skip_corrupt(mut self) -> Self {
        self.config.reader.on_corruption = OnCorruption::Resync;
        self
    }

    /// Skip the rest of a damaged file and count it, instead of failing.
    pub fn skip_corrupt_files(mut self) -> Self {
        self.config.reader.on_corruption = OnCorruption::SkipFile;
        self
    }

    /// Reads `cycle_length` files at a time, `block_length` records from each in turn.
    /// Default: one file after another.
    pub fn interleave(mut self, cycle_length: usize, block_length: usize) -> Self {
        self.config.cycle_length = cycle_length.max(1);
        self.config.block_length = block_length.max(1);
        self
    }

    /// Keeps part `index` of `num_shards`, splitting by file.
    pub fn shard(self, num_shards: usize, index: usize) -> Self {
        self.shard_by(num_shards, index, ShardBy::File)
    }

    /// Keeps part `index` of `num_shards`, splitting by file or by record.
    pub fn shard_by(mut self, num_shards: usize, index: usize, by: ShardBy) -> Self {
        self.config.shard = Some((num_shards.max(1), index % num_shards.max(1), by));
        self
    }

    /// Shuffles through a buffer of `buffer_size` records, seeded; reshuffled each epoch.
    pub fn shuffle(self, buffer_size: usize, seed: u64) -> Self {
        self.shuffle_with(buffer_size, seed, true)
    }

    /// Shuffles; `reshuffle_each_epoch: false` repeats the first epoch's order.
    pub fn shuffle_with(mut self, buffer_size: usize, seed: u64, reshuffle_each_epoch: bool) -> Self {
        self.config.shuffle = Some((buffer_size.max(1), seed, reshuffle_each_epoch));
        self
    }

    /// Goes over the data `epochs` times.
    pub fn repeat_epochs(mut self, epochs: u64) -> Self {
        self.config.repeat = Repeat::Epochs(epochs);
        self
    }

    /// Goes over the data forever.
    pub fn repeat_forever(mut self) -> Self {
        self.config.repeat = Repeat::Forever;
        self
    }

    /// Drops the first `n` records (after shuffling and repeating).
    pub fn skip(mut self, n: u64) -> Self {
        self.config.skip = n;
        self
    }

    /// Keeps at most `n` records.
    pub fn take(mut self, n: u64) -> Self {
        self.config.take = Some(n);
        self
    }

    /// Groups records into batches of `size`; the last, smaller one is dropped if
    /// `drop_remainder`.
    pub fn batch(self, size: usize, drop_remainder: bool) -> Batched {
        Batched {
            dataset: self,
            size: size.max(1),
            drop_remainder,
        }
    }

    /// The records one by one, on the calling thread.
    pub fn records(self) -> Records {
        Records {
            source: Source::new(self.config, Arc::new(Counters::default())),
            failed: false,
        }
    }
}

/// Records of a [`Dataset`], read on the calling thread.
pub struct Records {
    source: Source,
    failed: bool,
}

impl Iterator for Records {
    type Item = Result<Vec<u8>, PipelineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = self.source.next().map_err(PipelineError::Record).transpose();
        self.failed = matches!(next, Some(Err(_)));
        next
    }
}

/// A data set in batches, ready for the worker stage.
#[derive(Debug, Clone)]
pub struct Batched {
    dataset: Dataset,
    size: usize,
    drop_remainder: bool,
}

type Work<T> = Arc<dyn Fn(RecordBatch) -> Result<T, PipelineError> + Send + Sync>;

impl Batched {
    /// Raw record batches (workers only pass them on).
    pub fn raw(self) -> Pipeline<RecordBatch> {
        self.map_batches(Ok)
    }

    /// Parses each batch of Examples (`parse_example`) on the workers.
    pub fn parse_examples(self, specs: &FeatureSpecs) -> Result<Pipeline<TensorMap>, SpecError> {
        let parser = ExampleParser::new(specs)?;
        Ok(self.parse_with(move |records| parser.parse_batch(records)))
    }

    /// Parses each batch of SequenceExamples (`parse_sequence_example`) on the workers.
    pub fn parse_sequences(self, specs: &SequenceSpecs) -> Result<Pipeline<ParsedSequences>, SpecError> {
        let parser = SequenceParser::new(specs)?;
        Ok(self.parse_with(move |records| parser.parse_batch(records)))
    }

    /// Runs a parse on each batch, naming the batch in its errors.
    fn parse_with<T, F>(self, parse: F) -> Pipeline<T>
    where
        T: Send + 'static,
        F: Fn(&[&[u8]]) -> Result<T, ParseError> + Send + Sync + 'static,
    {
        self.map_batches(move |batch| {
            parse(&batch.records()).map_err(|error| PipelineError::Parse {
                batch: batch.index,
                error: Box::new(error),
            })
        })
    }

    /// Applies `f` to each batch of raw records on the workers.
    pub fn map_batches<T, F>(self, f: F) -> Pipeline<T>
    where
        F: Fn(RecordBatch) -> Result<T, PipelineError> + Send + Sync + 'static,
    {
        Pipeline {
            batched: self,
            work: Arc::new(f),
            threads: 1,
            prefetch: 2,
            deterministic: true,
        }
    }
}

/// Batches processed on worker threads; iterate with [`Pipeline::iter`].
pub struct Pipeline<T> {
    batched: Batched,
    work: Work<T>,
    threads: usize,
    prefetch: usize,
    deterministic: bool,
}

impl<T: Send + 'static> Pipeline<T> {
    /// Worker threads (default 1). The reader has a thread of its own.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Batches to keep ready ahead of the consumer (default 2).
    pub fn prefetch(mut self, batches: usize) -> Self {
        self.prefetch = batches.max(1);
        self
    }

    /// `false` hands batches over in the order they finish (faster with uneven batches);
    /// the default `true` keeps the data's order whatever the thread count.
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    /// Applies `f` to each result on the workers, after the previous stages.
    pub fn map<U, F>(self, f: F) -> Pipeline<U>
    where
        U: Send + 'static,
        F: Fn(T) -> Result<U, String> + Send + Sync + 'static,
    {
        let work = self.work;
        Pipeline {
            batched: self.batched,
            work: Arc::new(move |batch: RecordBatch| {
                let index = batch.index;
                let t = work(batch)?;
                f(t).map_err(|message| PipelineError::Map { batch: index, message })
            }),
            threads: self.threads,
            prefetch: self.prefetch,
            deterministic: self.deterministic,
        }
    }

    /// Starts the threads and returns the iterator of results.
    pub fn iter(self) -> PipelineIter<T> {
        PipelineIter::start(self)
    }
}

/// What the reader and the workers tell the consumer.
enum Message<T> {
    /// Batch `index` and its result.
    Batch(u64, Result<T, PipelineError>),
    /// The stream ended after this many batches.
    End(u64),
    /// The reader failed after this many batches (a damaged file, or a panic).
    Failed(u64, PipelineError),
}

/// The running pipeline. Dropping it stops and joins every thread.
pub struct PipelineIter<T> {
    results: Option<Receiver<Message<T>>>,
    /// One permit per batch in flight; given back as batches are delivered.
    permits: Option<SyncSender<()>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    counters: Arc<Counters>,
    deterministic: bool,
    /// Batches delivered so far (in deterministic mode, also the next index due).
    delivered: u64,
    pending: BTreeMap<u64, Result<T, PipelineError>>,
    /// The number of batches, once the reader has said.
    end: Option<u64>,
    done: bool,
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

impl<T: Send + 'static> PipelineIter<T> {
    fn start(p: Pipeline<T>) -> Self {
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let in_flight = p.prefetch + p.threads;
        let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(in_flight);
        for _ in 0..in_flight {
            let _ = permit_tx.send(());
        }
        let (work_tx, work_rx) = mpsc::sync_channel::<RecordBatch>(p.threads);
        let work_rx = Arc::new(Mutex::new(work_rx));
        let (result_tx, result_rx) = mpsc::sync_channel::<Message<T>>(in_flight + 2);
        let mut threads = Vec::with_capacity(p.threads + 1);

        // The reader: the record stream, in batches, one permit each.
        {
            let result_tx = result_tx.clone();
            let stop = Arc::clone(&stop);
            let counters = Arc::clone(&counters);
            let Batched {
                dataset,
                size,
                drop_remainder,
            } = p.batched;
            threads.push(std::thread::spawn(move || {
                let sent = AtomicU64::new(0);
                let run = catch_unwind(AssertUnwindSafe(|| {
                    let mut source = Source::new(dataset.config, counters);
                    let mut last_bytes = 0usize;
                    loop {
                        // A permit first: bounds the batches between here and the consumer.
                        if permit_rx.recv().is_err() || stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let index = sent.load(Ordering::Relaxed);
                        // Sized like the last batch, so filling it does not reallocate.
                        let mut batch = RecordBatch {
                            index,
                            data: Vec::with_capacity(last_bytes + last_bytes / 8),
                            ends: Vec::with_capacity(size),
                        };
                        let mut failure = None;
                        while batch.len() < size {
                            match source.next_into(&mut batch.data) {
                                Ok(true) => batch.ends.push(batch.data.len()),
                                Ok(false) => break,
                                Err(e) => {
                                    failure = Some(PipelineError::Record(e));
                                    break;
                                }
                            }
                        }
                        let full = batch.len() == size;
                        last_bytes = batch.data.len();
                        if !batch.is_empty() && (full || !drop_remainder) && failure.is_none() {
                            if work_tx.send(batch).is_err() {
                                return;
                            }
                            sent.fetch_add(1, Ordering::Relaxed);
                        }
                        let index = sent.load(Ordering::Relaxed);
                        if let Some(e) = failure {
                            let _ = result_tx.send(Message::Failed(index, e));
                            return;
                        }
                        if !full {
                            let _ = result_tx.send(Message::End(index));
                            return;
                        }
                    }
                }));
                if let Err(payload) = run {
                    let error = PipelineError::Panic(panic_message(&*payload));
                    let _ = result_tx.send(Message::Failed(sent.load(Ordering::Relaxed), error));
                }
            }));
        }
        // The workers.
        for _ in 0..p.threads {
            let work_rx = Arc::clone(&work_rx);
            let result_tx = result_tx.clone();
            let work = Arc::clone(&p.work);
            let stop = Arc::clone(&stop);
            threads.push(std::thread::spawn(move || loop {
                let batch = match work_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok(batch) = batch else { return };
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let index = batch.index;
                let result = catch_unwind(AssertUnwindSafe(|| work(batch)))
                    .unwrap_or_else(|payload| Err(PipelineError::Panic(panic_message(&*payload))));
                if result_tx.send(Message::Batch(index, result)).is_err() {
                    return;
                }
            }));
        }
        drop(result_tx);
        PipelineIter {
            results: Some(result_rx),
            permits: Some(permit_tx),
            stop,
            threads,
            counters,
            deterministic: p.deterministic,
            delivered: 0,
            pending: BTreeMap::new(),
            end: None,
            done: false,
        }
    }

    /// The live counters (records, bytes, files done, skipped…).
    pub fn counters(&self) -> Arc<Counters> {
        Arc::clone(&self.counters)
    }

    /// Stops every thread and waits for them.
    fn shut_down(&mut self) {
        self.done = true;
        self.stop.store(true, Ordering::Relaxed);
        // Closing our ends of the channels wakes every thread blocked on one.
        self.permits = None;
        self.results = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    fn deliver(&mut self, result: Result<T, PipelineError>) -> Result<T, PipelineError> {
        self.delivered += 1;
        self.counters.batches.fetch_add(1, Ordering::Relaxed);
        if result.is_err() {
            self.shut_down();
        } else if let Some(permits) = &self.permits {
            let _ = permits.send(());
        }
        result
    }
}

impl<T: Send + 'static> Iterator for PipelineIter<T> {
    type Item = Result<T, PipelineError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            if self.end.is_some_and(|end| self.delivered >= end) {
                // A reader failure waits in `pending` at the end position.
                let failure = self.pending.remove(&self.delivered);
                self.shut_down();
                return failure;
            }
            if self.deterministic {
                if let Some(result) = self.pending.remove(&self.delivered) {
                    return Some(self.deliver(result));
                }
            } else if let Some((&first, _)) = self.pending.iter().next() {
                if let Some(result) = self.pending.remove(&first) {
                    return Some(self.deliver(result));
                }
            }
            let message = self.results.as_ref().and_then(|rx| rx.recv().ok());
            match message {
                Some(Message::Batch(index, result)) => {
                    if !self.deterministic || index == self.delivered {
                        return Some(self.deliver(result));
                    }
                    self.pending.insert(index, result);
                }
                Some(Message::End(batches)) => self.end = Some(batches),
                Some(Message::Failed(batches, error)) => {
                    self.end = Some(batches);
                    self.pending.insert(batches, Err(error));
                }
                None => {
                    // Every thread is gone: what is pending is all there is.
                    self.end = Some(self.delivered + self.pending.len() as u64);
                    if self.pending.is_empty() {
                        self.shut_down();
                        return None;
                    }
                    let first = self.pending.keys().next().copied().unwrap_or(self.delivered);
                    if let Some(result) = self.pending.remove(&first) {
                        return Some(self.deliver(result));
                    }
                }
            }
        }
    }
}

impl<T> Drop for PipelineIter<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.permits = None;
        self.results = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

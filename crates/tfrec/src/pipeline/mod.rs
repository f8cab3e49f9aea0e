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
//! # Ok::<(), Box<dyn std::error::Error>>(())
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
//! `threads(1)` keeps to one core. By default the output order depends only on the
//! data and the settings, never on the thread count (results are put back in batch order);
//! [`Pipeline::deterministic`]`(false)` hands batches over as they finish instead.
//!
//! Memory is bounded by what was asked for: the shuffle buffers, one batch being filled, and at
//! most `prefetch + threads` batches in flight between the reader and the consumer. Dropping
//! the iterator stops and joins every thread.

mod batches;
mod source;
mod stages;

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use batches::{BatchStage, BatchStream, Batcher};
use source::FileSource;
use stages::Stream;

use crate::parse::{
    ExampleParser, FeatureSpecs, ParseError, ParsedSequences, SequenceParser, SequenceSpecs, SpecError, TensorMap,
};
use crate::record::{expand_inputs, OnCorruption, ReadStats, ReaderOptions, RecordError};

/// Problems kept in [`Counters::problems`]; the rest are only counted.
const MAX_PROBLEMS: usize = 1024;

/// How [`Dataset::shard_by`] splits a data set between workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShardBy {
    /// Whole files: worker `i` of `n` reads files `i, i+n, …` (cheap; needs at least `n`
    /// files). A file-level stage.
    File,
    /// Records, as tf.data's `shard`: worker `i` of `n` keeps records `i, i+n, …` of the
    /// stream so far (every worker reads every file).
    Record,
}

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
    /// A function given to [`Pipeline::map`] failed. Its text ends with the function's error
    /// (the crate's rule: self-contained text, no `source()`); the error itself is `error`, to
    /// match on or downcast.
    #[error("batch {batch}: the map function failed: {error}")]
    Map {
        /// Index of the batch in the stream.
        batch: u64,
        /// The function's error.
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

/// Live counters of a pipeline, readable from any thread (for a progress bar).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Counters {
    /// Records read from the files (before any record-level stage).
    pub records: AtomicU64,
    /// Data bytes of those records.
    pub bytes: AtomicU64,
    /// On-disk (compressed) bytes read from the files, for a progress bar.
    pub disk_bytes: AtomicU64,
    /// Files read to the end.
    pub files_done: AtomicU64,
    /// Damaged regions skipped (with [`OnCorruption::Resync`]).
    pub skipped_regions: AtomicU64,
    /// Bytes skipped in those regions.
    pub skipped_bytes: AtomicU64,
    /// Files abandoned (with [`OnCorruption::SkipFile`]).
    pub skipped_files: AtomicU64,
    /// Bytes of partial headers ignored at the end of files (with a torn-tail policy of skip).
    pub torn_tail_bytes: AtomicU64,
    /// Batches handed to the consumer.
    pub batches: AtomicU64,
    /// What was skipped, with file and offset (the first 1024).
    pub problems: Mutex<Vec<RecordError>>,
}

impl Counters {
    /// The reading counters as the record layer's [`ReadStats`] (of files closed so far).
    pub fn read_stats(&self) -> ReadStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ReadStats {
            records: get(&self.records),
            data_bytes: get(&self.bytes),
            skipped_regions: get(&self.skipped_regions),
            skipped_bytes: get(&self.skipped_bytes),
            skipped_files: get(&self.skipped_files),
            torn_tail_bytes: get(&self.torn_tail_bytes),
        }
    }
}

/// Where a record was read: the file (its index in [`Dataset::files`]), the offset of its
/// header in the (decompressed) file, and its index in the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordOrigin {
    /// Index of the file in [`Dataset::files`].
    pub file: usize,
    /// Offset of the record's header in the (decompressed) file.
    pub offset: u64,
    /// Index of the record in its file.
    pub index: u64,
}

/// A batch of raw records in one buffer, with where each was read.
#[derive(Debug, Clone, Default)]
pub struct RecordBatch {
    /// Index of the batch in the stream.
    pub index: u64,
    data: Vec<u8>,
    ends: Vec<usize>,
    origins: Vec<RecordOrigin>,
    files: Arc<[PathBuf]>,
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

    /// Where record `i` was read.
    pub fn origin(&self, i: usize) -> Option<RecordOrigin> {
        self.origins.get(i).copied()
    }

    /// The file record `i` was read from.
    pub fn path(&self, i: usize) -> Option<&Path> {
        self.files.get(self.origins.get(i)?.file).map(PathBuf::as_path)
    }

    /// Bytes of record data in the batch.
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

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

/// A stage over records (before `batch`) or over batches (after it), in the order of the calls.
#[derive(Debug, Clone)]
enum Stage {
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
    fn shard(num_shards: usize, index: usize) -> Result<Stage, DatasetError> {
        if num_shards == 0 {
            return Err(DatasetError::NoShards);
        }
        if index >= num_shards {
            return Err(DatasetError::ShardIndex { index, num_shards });
        }
        Ok(Stage::Shard { num_shards, index })
    }

    fn shuffle(buffer_size: usize, seed: u64, reshuffle_each_iteration: bool) -> Result<Stage, DatasetError> {
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

    fn name(&self) -> &'static str {
        match self {
            Stage::Shard { .. } => "shard",
            Stage::Shuffle { .. } => "shuffle",
            Stage::Repeat(_) => "repeat",
            Stage::Skip(_) => "skip",
            Stage::Take(_) => "take",
        }
    }
}

/// The stages tf.data has at every level, for [`Dataset`] (over records) and [`Batched`] (over
/// whole batches): one set of methods, documented with the unit they work on.
macro_rules! element_stages {
    ($unit:literal) => {
        #[doc = concat!("Shuffles through a buffer of `buffer_size` ", $unit, ", seeded, reshuffled on")]
        /// each iteration (each pass of a later `repeat`), as tf.data's `shuffle` by default.
        pub fn shuffle(self, buffer_size: usize, seed: u64) -> Result<Self, DatasetError> {
            self.shuffle_with(buffer_size, seed, true)
        }

        #[doc = concat!("Shuffles ", $unit, "; with `reshuffle_each_iteration: false` every iteration has")]
        /// the first one's order. A new iterator over the data set starts again at the first
        /// iteration.
        pub fn shuffle_with(
            mut self,
            buffer_size: usize,
            seed: u64,
            reshuffle_each_iteration: bool,
        ) -> Result<Self, DatasetError> {
            self.stages
                .push(Stage::shuffle(buffer_size, seed, reshuffle_each_iteration)?);
            Ok(self)
        }

        #[doc = concat!("Goes over the ", $unit, " so far `count` times (the files are read again).")]
        pub fn repeat(mut self, count: u64) -> Self {
            self.stages.push(Stage::Repeat(Some(count)));
            self
        }

        #[doc = concat!("Goes over the ", $unit, " so far forever (an empty stream stays empty).")]
        pub fn repeat_forever(mut self) -> Self {
            self.stages.push(Stage::Repeat(None));
            self
        }

        #[doc = concat!("Drops the first `count` ", $unit, " of the stream so far.")]
        pub fn skip(mut self, count: u64) -> Self {
            self.stages.push(Stage::Skip(count));
            self
        }

        #[doc = concat!("Keeps at most `count` ", $unit, " of the stream so far.")]
        pub fn take(mut self, count: u64) -> Self {
            self.stages.push(Stage::Take(count));
            self
        }
    };
}

/// A data set: files, the file-level stages, then the record-level stages in the order they
/// were called. Finish it with [`Dataset::batch`], or read it with [`Dataset::records`].
#[derive(Debug, Clone)]
pub struct Dataset {
    files: Vec<PathBuf>,
    reader: ReaderOptions,
    /// Indices in `files` of the files left after sharding by file, in order.
    selected: Vec<usize>,
    cycle_length: usize,
    block_length: usize,
    stages: Vec<Stage>,
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
            selected: (0..files.len()).collect(),
            files,
            reader: ReaderOptions::default(),
            cycle_length: 1,
            block_length: 1,
            stages: Vec::new(),
        }
    }

    /// All the files the data set was made with (before sharding by file), in order; a
    /// [`RecordOrigin`] names one by its index here.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Reader options for every file (compression, CRC checks, corruption policy…).
    pub fn reader_options(mut self, options: ReaderOptions) -> Self {
        self.reader = options;
        self
    }

    /// Skip damaged records (resynchronising) and count them in [`Counters`], instead of
    /// failing at the first one.
    pub fn skip_corrupt(mut self) -> Self {
        self.reader.on_corruption = OnCorruption::Resync;
        self
    }

    /// Skip the rest of a damaged file and count it, instead of failing.
    pub fn skip_corrupt_files(mut self) -> Self {
        self.reader.on_corruption = OnCorruption::SkipFile;
        self
    }

    /// An error if a record-level stage was already called: `stage` works on files.
    fn file_stage(&self, stage: &'static str) -> Result<(), DatasetError> {
        match self.stages.first() {
            Some(after) => Err(DatasetError::FileStageAfterRecordStage {
                stage,
                after: after.name(),
            }),
            None => Ok(()),
        }
    }

    /// Reads `cycle_length` files at a time, `block_length` records from each in turn, as
    /// tf.data's `interleave` over the files. Default: one file after another. A file-level
    /// stage: it must come before the record-level ones.
    pub fn interleave(mut self, cycle_length: usize, block_length: usize) -> Result<Self, DatasetError> {
        self.file_stage("interleave")?;
        if cycle_length == 0 {
            return Err(DatasetError::Zero {
                argument: "cycle_length",
            });
        }
        if block_length == 0 {
            return Err(DatasetError::Zero {
                argument: "block_length",
            });
        }
        self.cycle_length = cycle_length;
        self.block_length = block_length;
        Ok(self)
    }

    /// Keeps records `index, index + num_shards, …` of the stream so far, as tf.data's
    /// `shard`: before a shuffle each worker shuffles its own records; after one (with the
    /// same seed everywhere) the workers split one shuffled order.
    pub fn shard(self, num_shards: usize, index: usize) -> Result<Self, DatasetError> {
        self.shard_by(num_shards, index, ShardBy::Record)
    }

    /// Keeps files `index, index + num_shards, …`: each worker reads only its files. A
    /// file-level stage; an error when there are fewer files than shards.
    pub fn shard_files(self, num_shards: usize, index: usize) -> Result<Self, DatasetError> {
        self.shard_by(num_shards, index, ShardBy::File)
    }

    /// [`Dataset::shard`] or [`Dataset::shard_files`], chosen by `by`.
    pub fn shard_by(mut self, num_shards: usize, index: usize, by: ShardBy) -> Result<Self, DatasetError> {
        let stage = Stage::shard(num_shards, index)?;
        match by {
            ShardBy::File => {
                self.file_stage("shard_files")?;
                if self.selected.len() < num_shards {
                    return Err(DatasetError::TooFewFiles {
                        files: self.selected.len(),
                        num_shards,
                    });
                }
                self.selected = self.selected.iter().copied().skip(index).step_by(num_shards).collect();
            }
            ShardBy::Record => self.stages.push(stage),
        }
        Ok(self)
    }

    element_stages!("records");

    /// Groups records into batches of `size`; the last, smaller one is dropped if
    /// `drop_remainder`. A `size` of zero is an error, as in tf.data.
    pub fn batch(self, size: usize, drop_remainder: bool) -> Result<Batched, DatasetError> {
        if size == 0 {
            return Err(DatasetError::Zero { argument: "batch_size" });
        }
        Ok(Batched {
            dataset: self,
            size,
            drop_remainder,
            chunks: false,
            stages: Vec::new(),
        })
    }

    /// Groups records into chunks of up to `size` to hand them between threads, for a
    /// consumer that takes them one by one: unlike a batch (which a failure mid-batch loses,
    /// as tf.data's does), the records read before a failure are handed over, then the failure.
    pub fn chunks(self, size: usize) -> Result<Batched, DatasetError> {
        let mut batched = self.batch(size, false)?;
        batched.chunks = true;
        Ok(batched)
    }

    /// The records one by one, on the calling thread.
    pub fn records(self) -> DatasetRecords {
        DatasetRecords {
            stream: self.stream(Arc::new(Counters::default())),
            failed: false,
        }
    }

    /// The record stream: the files, then each stage over the one before.
    fn stream(self, counters: Arc<Counters>) -> Box<dyn Stream> {
        let files = self.selected.iter().map(|&i| (i, self.files[i].clone())).collect();
        let mut stream: Box<dyn Stream> = Box::new(FileSource::new(
            files,
            self.reader,
            self.cycle_length,
            self.block_length,
            counters,
        ));
        for stage in self.stages {
            stream = match stage {
                Stage::Shard { num_shards, index } => Box::new(stages::ShardRecords {
                    up: stream,
                    num_shards: num_shards as u64,
                    index: index as u64,
                    position: 0,
                }),
                Stage::Shuffle {
                    buffer_size,
                    seed,
                    reshuffle_each_iteration,
                } => Box::new(stages::Shuffle::new(
                    stream,
                    buffer_size,
                    seed,
                    reshuffle_each_iteration,
                )),
                Stage::Repeat(count) => Box::new(stages::Repeat {
                    up: stream,
                    state: stages::RepeatCount::new(count),
                }),
                Stage::Skip(count) => Box::new(stages::Skip {
                    up: stream,
                    count,
                    skipped: 0,
                }),
                Stage::Take(count) => Box::new(stages::Take {
                    up: stream,
                    count,
                    taken: 0,
                }),
            };
        }
        stream
    }
}

/// Records of a [`Dataset`], read on the calling thread.
pub struct DatasetRecords {
    stream: Box<dyn Stream>,
    failed: bool,
}

impl Iterator for DatasetRecords {
    type Item = Result<Vec<u8>, PipelineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let mut out = Vec::new();
        match self.stream.next_with(&mut |record, _| out.extend_from_slice(record)) {
            Ok(true) => Some(Ok(out)),
            Ok(false) => {
                self.failed = true;
                None
            }
            Err(e) => {
                self.failed = true;
                Some(Err(PipelineError::Record(e)))
            }
        }
    }
}

/// A data set in batches, ready for the worker stage. Its own stages (called after `batch`)
/// work on whole batches, as tf.data's do: `.batch(5).take(2)` is two batches of five.
#[derive(Debug, Clone)]
pub struct Batched {
    dataset: Dataset,
    size: usize,
    drop_remainder: bool,
    chunks: bool,
    stages: Vec<Stage>,
}

type Work<T> = Arc<dyn Fn(RecordBatch) -> Result<T, PipelineError> + Send + Sync>;

impl Batched {
    /// Keeps batches `index, index + num_shards, …` of the batches so far.
    pub fn shard(mut self, num_shards: usize, index: usize) -> Result<Self, DatasetError> {
        self.stages.push(Stage::shard(num_shards, index)?);
        Ok(self)
    }

    element_stages!("batches");

    /// The records per batch.
    pub fn batch_size(&self) -> usize {
        self.size
    }

    /// The batch stream: the records in batches, then each batch stage over the one before.
    fn stream(self, counters: Arc<Counters>) -> Box<dyn BatchStream> {
        let files: Arc<[PathBuf]> = self.dataset.files.clone().into();
        let mut stream: Box<dyn BatchStream> = Box::new(Batcher {
            up: self.dataset.stream(counters),
            size: self.size,
            drop_remainder: self.drop_remainder,
            files,
            last_bytes: 0,
            ended: false,
            chunks: self.chunks,
            failure: None,
        });
        for stage in &self.stages {
            stream = Box::new(BatchStage::new(stream, stage));
        }
        stream
    }

    /// Raw record batches (workers only pass them on).
    pub fn raw(self) -> Pipeline<RecordBatch> {
        self.map_batches(Ok)
    }

    /// Parses each batch of Examples (`parse_example`) on the workers.
    pub fn parse_examples(self, specs: &FeatureSpecs) -> Result<Pipeline<TensorMap>, SpecError> {
        let parser = ExampleParser::new(specs)?;
        Ok(self.map_batches(move |batch| parser.parse_batch(&batch.records()).map_err(|e| batch.parse_error(e))))
    }

    /// Parses each batch of SequenceExamples (`parse_sequence_example`) on the workers.
    pub fn parse_sequences(self, specs: &SequenceSpecs) -> Result<Pipeline<ParsedSequences>, SpecError> {
        let parser = SequenceParser::new(specs)?;
        Ok(self.map_batches(move |batch| parser.parse_batch(&batch.records()).map_err(|e| batch.parse_error(e))))
    }

    /// Applies `f` to each batch of raw records on the workers (a parse error is best
    /// reported with [`RecordBatch::parse_error`]).
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
    /// Worker threads (default 1), which take turns at reading and parse in parallel.
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
    pub fn map<U, E, F>(self, f: F) -> Pipeline<U>
    where
        U: Send + 'static,
        E: Into<Box<dyn StdError + Send + Sync>>,
        F: Fn(T) -> Result<U, E> + Send + Sync + 'static,
    {
        let work = self.work;
        Pipeline {
            batched: self.batched,
            work: Arc::new(move |batch: RecordBatch| {
                let index = batch.index;
                let t = work(batch)?;
                f(t).map_err(|e| PipelineError::Map {
                    batch: index,
                    error: e.into(),
                })
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

/// The record stream, shared by the workers. Each worker takes the lock, fills the next
/// batch, lets go and works on its batch, so one worker reads while the others parse. There
/// is no reader thread of its own: `threads(1)` runs on one core and `threads(n)` on n, and
/// the copy out of the file's buffer is made on the core that then parses the batch.
struct SharedReader {
    /// `None` once the stream has ended, failed or been stopped.
    stream: Option<Box<dyn BatchStream>>,
    /// One permit per batch in flight; the consumer gives them back.
    permits: Receiver<()>,
    /// Batches handed to workers so far (the next batch's index).
    sent: u64,
}

impl SharedReader {
    /// The next batch to work on, or `None` when there is none left. The end of the stream
    /// (or its failure, or a panic while reading) is told to the consumer here, once.
    fn next_batch<T>(&mut self, stop: &AtomicBool, results: &SyncSender<Message<T>>) -> Option<RecordBatch> {
        let stream = self.stream.as_mut()?;
        // A permit first: bounds the batches between here and the consumer.
        if self.permits.recv().is_err() || stop.load(Ordering::Relaxed) {
            self.stream = None;
            return None;
        }
        // Caught here, under the lock, so a panic in a stage neither poisons the lock nor
        // leaves the other workers waiting.
        let got = match catch_unwind(AssertUnwindSafe(|| stream.next_batch())) {
            Ok(result) => result.map_err(PipelineError::Record),
            Err(payload) => Err(PipelineError::Panic(panic_message(&*payload))),
        };
        let end = match got {
            Ok(Some(mut batch)) => {
                batch.index = self.sent;
                self.sent += 1;
                return Some(batch);
            }
            Ok(None) => Message::End(self.sent),
            Err(e) => Message::Failed(self.sent, e),
        };
        // Closes the files, so the counters are complete before the consumer hears of the end.
        self.stream = None;
        let _ = results.send(end);
        None
    }
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
        let (result_tx, result_rx) = mpsc::sync_channel::<Message<T>>(in_flight + 2);
        let reader = Arc::new(Mutex::new(SharedReader {
            stream: Some(p.batched.stream(Arc::clone(&counters))),
            permits: permit_rx,
            sent: 0,
        }));
        let mut threads = Vec::with_capacity(p.threads);
        for _ in 0..p.threads {
            let reader = Arc::clone(&reader);
            let result_tx = result_tx.clone();
            let work = Arc::clone(&p.work);
            let stop = Arc::clone(&stop);
            threads.push(std::thread::spawn(move || loop {
                let batch = match reader.lock() {
                    Ok(mut reader) => reader.next_batch(&stop, &result_tx),
                    Err(_) => return,
                };
                let Some(batch) = batch else { return };
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
            } else if let Some(first) = self.pending.keys().copied().find(|&k| Some(k) != self.end) {
                // A reader failure (kept at the end position) waits for the batches read
                // before it, which workers may still be parsing: delivering it first would
                // shut the pipeline down and lose them.
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

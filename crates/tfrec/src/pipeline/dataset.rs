//! Building a pipeline: a [`Dataset`] of files and its record-level stages, [`Batched`] with
//! its batch-level stages, and the [`Pipeline`] of work on worker threads with its options
//! (threads, prefetch, order). Nothing runs until `Pipeline::iter` (in `workers.rs`).

use std::error::Error as StdError;
use std::path::PathBuf;
use std::sync::Arc;

use super::batches::{check_dropped, BatchStream, Batcher};
use super::cardinality::{self, Cardinality};
use super::data::{Counters, RecordBatch};
use super::error::{DatasetError, PipelineError};
use super::items::{ItemStage, StageStream};
use super::source::FileSource;
use super::stages::{self, Stage, Stream};
use crate::parse::{ExampleParser, FeatureSpecs, ParsedSequences, SequenceParser, SequenceSpecs, SpecError, TensorMap};
use crate::record::spans::SpanBoard;
use crate::record::{expand_inputs, OnCorruption, ReaderOptions, RecordError};

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
    /// Make and save the index of each file read without one (see [`Dataset::write_indexes`]).
    write_indexes: bool,
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
            write_indexes: false,
        }
    }

    /// All the files the data set was made with (before sharding by file), in order; a
    /// [`RecordOrigin`](super::RecordOrigin) names one by its index here.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Reader options for every file (compression, CRC checks, corruption policy…).
    pub fn reader_options(mut self, options: ReaderOptions) -> Self {
        self.reader = options;
        self
    }

    /// Makes the index of each file that has none (or one that does not fit it) while reading
    /// it, and once the file is read to its end without damage saves it beside the file,
    /// atomically: `FILE.zidx` for a GZIP or ZLIB file (its seek index, made from a copy of the
    /// compressed bytes on a thread of its own, so the file is read once), `FILE.idx` for a
    /// plain one. Where it cannot be saved (a read-only directory) it is kept for the next
    /// epoch of this run. Later reads with two threads or more then read each file on every
    /// worker (see [`Pipeline::threads`]). Default: off (nothing is written beside inputs unasked).
    pub fn write_indexes(mut self, write: bool) -> Self {
        self.write_indexes = write;
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

    /// How many records there are, by tf.data's rules: unknown for the records of files, until
    /// a stage (`repeat(0)`, say) makes it known.
    pub fn cardinality(&self) -> Cardinality {
        self.stages
            .iter()
            .fold(Cardinality::Unknown, |n, stage| stage.cardinality(n))
    }

    /// The records one by one, on the calling thread.
    pub fn records(self) -> DatasetRecords {
        DatasetRecords {
            stream: self.stream(Arc::new(Counters::default()), false, None),
            failed: false,
        }
    }

    /// The record stream: the files, then each stage over the one before. `defer_crc`: the
    /// caller checks each record's data CRC itself (see [`FileSource::new`]), which it can only
    /// where no record stage stands between (a stage would drop records unchecked, or hold
    /// them past the one the CRC is given for). With `spans`, files with an index are read in
    /// spans through that board, so many spans ahead a file (see `spans.rs`).
    fn stream(
        self,
        counters: Arc<Counters>,
        defer_crc: bool,
        spans: Option<(Arc<SpanBoard>, usize)>,
    ) -> Box<dyn Stream> {
        let files = self.selected.iter().map(|&i| (i, self.files[i].clone())).collect();
        let mut source = FileSource::new(
            files,
            self.reader,
            self.cycle_length,
            self.block_length,
            counters,
            defer_crc && self.stages.is_empty(),
        )
        .write_indexes(self.write_indexes);
        if let Some((board, ahead)) = spans {
            source = source.in_spans(board, ahead);
        }
        let mut stream: Box<dyn Stream> = Box::new(source);
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

pub(super) type Work<T> = Arc<dyn Fn(RecordBatch) -> Result<T, PipelineError> + Send + Sync>;

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
    /// With `defer_crc`, records may come with their data CRCs unchecked
    /// ([`RecordBatch::check_crcs`] is then the worker's first job): not in chunks, whose
    /// records before a failure are handed over before it. `spans`: as [`Dataset`]'s stream.
    pub(super) fn stream(
        self,
        counters: Arc<Counters>,
        defer_crc: bool,
        spans: Option<(Arc<SpanBoard>, usize)>,
    ) -> Box<BatchStream> {
        let files: Arc<[PathBuf]> = self.dataset.files.clone().into();
        let defer_crc = defer_crc && !self.chunks;
        let batcher: Box<BatchStream> = Box::new(Batcher {
            up: self.dataset.stream(counters, defer_crc, spans),
            size: self.size,
            drop_remainder: self.drop_remainder,
            files,
            last_bytes: 0,
            ended: false,
            chunks: self.chunks,
            failure: None,
        });
        let stages: Vec<_> = self.stages.iter().map(|&stage| ItemStage::Stage(stage)).collect();
        StageStream::chain(batcher, &stages, check_dropped)
    }

    /// How many batches there are, by tf.data's rules (chunks: how many records).
    pub fn cardinality(&self) -> Cardinality {
        let records = self.dataset.cardinality();
        let batches = if self.chunks {
            records
        } else {
            cardinality::batched(records, self.size, self.drop_remainder)
        };
        self.stages.iter().fold(batches, |n, stage| stage.cardinality(n))
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
    pub(super) batched: Batched,
    pub(super) work: Work<T>,
    pub(super) threads: usize,
    pub(super) prefetch: usize,
    pub(super) deterministic: bool,
}

impl<T: Send + 'static> Pipeline<T> {
    /// Worker threads (default 1), which take turns at reading and parse in parallel.
    /// `threads(0)` does the work on the thread that iterates, with nothing read ahead (as
    /// tf.data's `map` without `num_parallel_calls`); so does `threads(1)` when the process
    /// may run on one CPU only (its affinity or its cgroup's quota), where a thread of its
    /// own could not run alongside the consumer and each batch handed over would cost two
    /// context switches. The batches, their order and the errors are the same either way.
    ///
    /// With two threads or more, one file is read on every worker at once: a GZIP or ZLIB
    /// file with its seek index beside it (`FILE.zidx`, as `tfrec index` writes it), a plain
    /// file with its `FILE.idx`, or a plain local file without one (its record boundaries
    /// found by a scan of its headers just ahead of the workers). It is cut into spans at
    /// record boundaries, read (inflated) and checked ahead of the stream in parallel, then
    /// taken in file order, so the batches are those of one thread. A span that fails hands
    /// the file back to the sequential reader at that point, so errors and skipped records are
    /// the same as with one thread.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
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

    /// How many results there are (one a batch), by tf.data's rules.
    pub fn cardinality(&self) -> Cardinality {
        self.batched.cardinality()
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
}

//! Files in, statistics out: the records of every input (paths, globs, directories, and URLs
//! where the `remote` feature reads them) read with the reader's options, damage skipped or
//! fatal as they say (what was skipped noted on the features), sampled at `sample_rate`, and
//! counted on threads.
//!
//! A file's partial statistics are made the same way wherever they are computed: its records
//! cut into chunks of about [`CHUNK_BYTES`] (a chunk ends at the file's end at the latest),
//! each chunk counted into an accumulator of its own, and the chunks merged in file order
//! ([`statistics_of_file`]). The files' partials are then merged in file order
//! ([`merge_partials`]). Threads count chunks, so one large file keeps every thread busy, and
//! the merges are the same whatever the threads: the figures, rounding and quantile sketches
//! included, are the same bytes for any thread count, and the same as those of any other
//! process that merges the files' partials in that order (Ray's workers, `tfrec.ray`).
//!
//! On threads, the counting threads also merge the distinct values of string features, as
//! each finishes a chunk: the figures made of them do not depend on the order they merge in,
//! and with them out of the merge in file order, that merge no longer keeps the other threads
//! waiting on data of many distinct strings.
//!
//! An error is the one a single pass over the records meets first: a chunk that fails, or
//! whose kinds disagree with the chunks before it, is counted again record by record after
//! those chunks to find the record that fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};

use rustc_hash::FxHashMap;

use super::accumulate::{StatsAccumulator, StringsKey};
use super::error::{RecordPlace, StatsError};
use super::options::StatsOptions;
use super::proto::DatasetFeatureStatisticsList;
use super::select::{in_sample, note_damage};
use super::string_counts::StringCounts;
use crate::record::{expand_inputs, MultiFileReader, ReadStats, ReaderOptions};

/// Bytes of records in a chunk: large enough that merging chunks costs little next to
/// counting them, small enough that a file of a few megabytes feeds two threads and that the
/// chunks in flight take little memory. Part of what a file's partial statistics are: another
/// size gives other sketches (as good, not the same bytes).
pub const CHUNK_BYTES: usize = 1 << 20;

/// Chunks handed out at most this many per thread ahead of the one merged next, which bounds
/// the memory held by chunks waiting.
const CHUNKS_AHEAD_PER_THREAD: usize = 2;

/// What [`generate_statistics`] gives: the statistics, and what reading found (records read,
/// damage skipped).
#[derive(Debug, Clone)]
pub struct GenerateOutput {
    /// The statistics, as TFDV's `generate_statistics_from_tfrecord` gives them.
    pub statistics: DatasetFeatureStatisticsList,
    /// The readers' counters, damage skipped included.
    pub read_stats: ReadStats,
}

/// Statistics of the `Example`s in `inputs`, read with `reader` options (its
/// `on_corruption` decides whether damage stops the run or is skipped and counted), on
/// `threads` threads (at least one; a file's chunks are shared among them). The statistics
/// are the same bytes whatever the number of threads.
///
/// ```
/// use tfrec::example::Example;
/// use tfrec::record::{ReaderOptions, RecordWriter, WriterOptions};
/// use tfrec::stats::{generate_statistics, StatsOptions};
///
/// let dir = std::env::temp_dir().join(format!("tfrec-stats-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("train.tfrecord");
/// let mut writer = RecordWriter::create(&path, WriterOptions::default())?;
/// for word in ["cat", "dog", "cat"] {
///     writer.write_record(&Example::builder().bytes("animal", [word]).build()?.encode())?;
/// }
/// writer.finish()?;
///
/// let out = generate_statistics(&[path.to_str().unwrap()], ReaderOptions::default(), &StatsOptions::default(), 1)?;
/// let dataset = &out.statistics.datasets[0];
/// assert_eq!(dataset.num_examples, 3);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn generate_statistics<S: AsRef<str>>(
    inputs: &[S],
    reader: ReaderOptions,
    options: &StatsOptions,
    threads: usize,
) -> Result<GenerateOutput, StatsError> {
    let files = expand_inputs(inputs.iter().map(|s| s.as_ref()))?;
    statistics_of_files(files, reader, options, threads)
}

/// [`generate_statistics`] of files already listed (in the order given): each file's partial
/// statistics as [`statistics_of_file`] makes them, merged in file order by
/// [`merge_partials`], with the chunks of every file counted on `threads` threads.
pub fn statistics_of_files(
    files: Vec<PathBuf>,
    reader: ReaderOptions,
    options: &StatsOptions,
    threads: usize,
) -> Result<GenerateOutput, StatsError> {
    statistics_of_files_counting(files, reader, options, threads, &Arc::default())
}

/// [`statistics_of_files`], adding the on-disk bytes of the files to `disk_bytes_read` as they
/// are read (compressed bytes for compressed files), for a progress bar drawn by another
/// thread.
pub fn statistics_of_files_counting(
    files: Vec<PathBuf>,
    reader: ReaderOptions,
    options: &StatsOptions,
    threads: usize,
    disk_bytes_read: &Arc<AtomicU64>,
) -> Result<GenerateOutput, StatsError> {
    options.validate()?;
    let mut feed = Feed::new(&files, reader, options.sample_rate);
    feed.disk_bytes = Arc::clone(disk_bytes_read);
    if threads <= 1 {
        let (total, read_stats) = merge_chunks(options, || Some(count_chunk(options, feed.next_chunk()?)))?;
        return Ok(finish_merged(total, read_stats, 1));
    }
    let shared = Shared {
        feed: Mutex::new(feed),
        wake: Condvar::new(),
        limit: CHUNKS_AHEAD_PER_THREAD * threads,
        strings: SharedStringCounts::default(),
    };
    let (mut total, read_stats) = std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel();
        for _ in 0..threads {
            let (sender, shared) = (sender.clone(), &shared);
            scope.spawn(move || count_chunks(shared, options, sender));
        }
        drop(sender);
        // The chunks in file order, as they come: a chunk counted early waits for those before.
        let mut waiting = BTreeMap::new();
        let mut next = 0u64;
        let out = merge_chunks(options, || loop {
            match waiting.remove(&next) {
                Some(counted) => {
                    next += 1;
                    shared.merged_one();
                    return Some(counted);
                }
                None => {
                    let (seq, counted) = receiver.recv().ok()?;
                    waiting.insert(seq, counted);
                }
            }
        });
        shared.stop();
        out
    })?;
    // Every chunk merged was counted, and its strings merged, before it was sent.
    for (key, counts) in shared.strings.into_counts() {
        total.put_string_counts(key, counts);
    }
    Ok(finish_merged(total, read_stats, threads))
}

/// Folds counted chunks, in file order, into their files' partial statistics and merges those
/// in file order, as [`merge_partials`] does (the same bytes). A chunk whose kinds disagree
/// with the files before it is counted again, record by record, on top of them, so that the
/// error names the file, offset and record a single pass fails on.
fn merge_chunks(
    options: &StatsOptions,
    mut next: impl FnMut() -> Option<Counted>,
) -> Result<(StatsAccumulator, ReadStats), StatsError> {
    let mut total = StatsAccumulator::new(options.clone())?;
    let mut read_stats = ReadStats::default();
    let mut folder = FileFolder::new(options);
    while let Some(counted) = next() {
        if let Ok(acc) = &counted.result {
            if total.check_mergeable(acc).is_err() {
                let mut probe = total.clone();
                if let Some(file) = &folder.file {
                    probe.merge(file)?;
                }
                counted.chunk.count_into(&mut probe)?;
            }
        }
        if let Some((acc, stats)) = folder.fold(counted)? {
            total.merge_from(acc)?;
            read_stats.add(&stats);
        }
    }
    Ok((total, read_stats))
}

/// The partial statistics of one file: its records read with `reader` options, sampled at
/// `sample_rate`, cut into chunks of about [`CHUNK_BYTES`], each counted by itself and merged
/// in order; errors name the file, offset and record index in the file (records in the
/// sample); with what reading found. The same bytes as the partial [`statistics_of_files`]
/// makes of the file on any number of threads.
pub fn statistics_of_file(
    path: &Path,
    reader: ReaderOptions,
    options: &StatsOptions,
) -> Result<(StatsAccumulator, ReadStats), StatsError> {
    options.validate()?;
    let files = [path.to_path_buf()];
    let mut feed = Feed::new(&files, reader, options.sample_rate);
    let mut folder = FileFolder::new(options);
    while let Some(chunk) = feed.next_chunk() {
        if let Some(partial) = folder.fold(count_chunk(options, chunk))? {
            return Ok(partial);
        }
    }
    // The feed ends every file with a chunk marked last.
    Ok((
        StatsAccumulator::new(options.clone())?,
        feed.read_stats.take().unwrap_or_default(),
    ))
}

/// Merges partial statistics (with what reading found) in the order given into the
/// statistics, with the damage skipped noted on the features; the first error stops it. The
/// merge starts from an empty accumulator and takes each partial in turn, so the same partials
/// in the same order give the same bytes wherever they were computed.
pub fn merge_partials(
    options: &StatsOptions,
    partials: impl IntoIterator<Item = Result<(StatsAccumulator, ReadStats), StatsError>>,
) -> Result<GenerateOutput, StatsError> {
    let mut total = StatsAccumulator::new(options.clone())?;
    let mut read_stats = ReadStats::default();
    for partial in partials {
        let (acc, stats) = partial?;
        total.merge_from(acc)?;
        read_stats.add(&stats);
    }
    Ok(finish_merged(total, read_stats, 1))
}

/// The statistics of everything merged, with the damage skipped noted on the features, made
/// on `threads` threads.
fn finish_merged(total: StatsAccumulator, read_stats: ReadStats, threads: usize) -> GenerateOutput {
    let mut statistics = total.finish_on(threads);
    for dataset in &mut statistics.datasets {
        note_damage(dataset, &read_stats);
    }
    GenerateOutput { statistics, read_stats }
}

/// Consecutive records in the sample of one file, copied out of the reader.
struct Chunk {
    path: PathBuf,
    /// Index (among the file's records in the sample) of the chunk's first record.
    first_index: u64,
    data: Vec<u8>,
    /// Where each record ends in `data`.
    ends: Vec<usize>,
    /// Each record's header offset in its file.
    offsets: Vec<u64>,
    /// Whether it is the file's last chunk; what reading the file found comes with it.
    last: Option<ReadStats>,
    /// The read error that ended the file after the chunk's records.
    read_error: Option<StatsError>,
}

impl Chunk {
    /// The records, each with its index in the chunk.
    fn records(&self) -> impl Iterator<Item = (u64, &[u8])> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        (0u64..).zip(starts.zip(&self.ends).map(|(start, &end)| &self.data[start..end]))
    }

    /// Where the chunk's record `k` is, for errors.
    fn place(&self, k: u64) -> RecordPlace {
        RecordPlace {
            path: self.path.clone(),
            offset: usize::try_from(k)
                .ok()
                .and_then(|k| self.offsets.get(k))
                .copied()
                .unwrap_or(0),
            record_index: self.first_index + k,
        }
    }

    /// Counts the records into `acc`, in order, up to the first that fails.
    fn count_into(&self, acc: &mut StatsAccumulator) -> Result<(), StatsError> {
        for (k, record) in self.records() {
            acc.add_record(record, Some(&|| self.place(k)))?;
        }
        Ok(())
    }
}

/// The files' records, cut into chunks in file order.
struct Feed<'f> {
    files: std::slice::Iter<'f, PathBuf>,
    reader_options: ReaderOptions,
    sample_rate: Option<f64>,
    /// The file being read: its reader and the index its next record in the sample has.
    current: Option<(MultiFileReader, u64)>,
    /// Set once a read error ended the feed.
    ended: bool,
    /// Chunks handed out so far (the next chunk's sequence number).
    issued: u64,
    /// Chunks merged so far (see [`Shared`]).
    merged: u64,
    /// Whether the run is over (the merge stopped): nothing more is handed out.
    stopped: bool,
    /// What reading found, for [`statistics_of_file`] when the file ended (unused otherwise).
    read_stats: Option<ReadStats>,
    /// On-disk bytes read, every file's readers adding to it.
    disk_bytes: Arc<AtomicU64>,
}

impl<'f> Feed<'f> {
    fn new(files: &'f [PathBuf], reader_options: ReaderOptions, sample_rate: Option<f64>) -> Self {
        Feed {
            files: files.iter(),
            reader_options,
            sample_rate,
            current: None,
            ended: false,
            issued: 0,
            merged: 0,
            stopped: false,
            read_stats: None,
            disk_bytes: Arc::default(),
        }
    }

    /// The next chunk; `None` at the end. Every file ends with a chunk marked last (an empty
    /// one for a file with no record in the sample).
    fn next_chunk(&mut self) -> Option<Chunk> {
        if self.ended {
            return None;
        }
        if self.current.is_none() {
            let path = self.files.next()?;
            let reader = MultiFileReader::new(vec![path.clone()], self.reader_options.clone())
                .with_disk_bytes_counter(Arc::clone(&self.disk_bytes));
            self.current = Some((reader, 0));
        }
        let (records, next_index) = self.current.as_mut()?;
        let path = records.files().first().cloned().unwrap_or_default();
        let mut chunk = Chunk {
            path,
            first_index: *next_index,
            data: Vec::with_capacity(CHUNK_BYTES + (CHUNK_BYTES >> 3)),
            ends: Vec::new(),
            offsets: Vec::new(),
            last: None,
            read_error: None,
        };
        while chunk.data.len() < CHUNK_BYTES {
            match records.next_located() {
                Ok(Some(record)) => {
                    if !in_sample(self.sample_rate, record.path, record.offset) {
                        continue;
                    }
                    chunk.data.extend_from_slice(record.data);
                    chunk.ends.push(chunk.data.len());
                    chunk.offsets.push(record.offset);
                }
                Ok(None) => {
                    chunk.last = Some(records.stats());
                    break;
                }
                Err(error) => {
                    chunk.read_error = Some(error.into());
                    chunk.last = Some(records.stats());
                    self.ended = true;
                    break;
                }
            }
        }
        *next_index += chunk.ends.len() as u64;
        if chunk.last.is_some() {
            self.current = None;
        }
        self.issued += 1;
        Some(chunk)
    }
}

/// A chunk counted: its records' accumulator, or the first error counting them met.
struct Counted {
    chunk: Chunk,
    result: Result<StatsAccumulator, StatsError>,
}

/// Counts a chunk's records into an accumulator of its own.
fn count_chunk(options: &StatsOptions, chunk: Chunk) -> Counted {
    let result = StatsAccumulator::new(options.clone()).and_then(|mut acc| chunk.count_into(&mut acc).map(|()| acc));
    Counted { chunk, result }
}

/// Merges counted chunks in file order into their files' partial statistics.
struct FileFolder<'o> {
    options: &'o StatsOptions,
    /// The chunks of the file merged so far; `None` before its first chunk.
    file: Option<StatsAccumulator>,
}

impl<'o> FileFolder<'o> {
    fn new(options: &'o StatsOptions) -> Self {
        FileFolder { options, file: None }
    }

    /// Merges the next chunk; gives the file's partial statistics when it was the file's last,
    /// or the error a single pass over the file would meet first.
    fn fold(&mut self, counted: Counted) -> Result<Option<(StatsAccumulator, ReadStats)>, StatsError> {
        let Counted { mut chunk, result } = counted;
        let (file, failure) = match (self.file.take(), result) {
            // A file's first chunk is its partial so far.
            (None, Ok(acc)) => (acc, None),
            (Some(mut file), Ok(acc)) => {
                let failure = file.merge_from(acc).err();
                (file, failure)
            }
            (file, Err(error)) => (
                file.map_or_else(|| StatsAccumulator::new(self.options.clone()), Ok)?,
                Some(error),
            ),
        };
        if let Some(failure) = failure {
            // The chunk failed, or its kinds disagree with the chunks before it (a failed
            // merge changes nothing): counted again after them, record by record, the first
            // record that fails is the one a single pass fails on.
            let mut probe = file;
            chunk.count_into(&mut probe)?;
            return Err(failure);
        }
        if let Some(error) = chunk.read_error.take() {
            return Err(error);
        }
        match chunk.last.take() {
            Some(read_stats) => Ok(Some((file, read_stats))),
            None => {
                self.file = Some(file);
                Ok(None)
            }
        }
    }
}

/// What the counting threads and the merge share.
struct Shared<'f> {
    feed: Mutex<Feed<'f>>,
    /// Wakes threads waiting for the merge to catch up.
    wake: Condvar,
    /// Chunks handed out at most ahead of the merge.
    limit: usize,
    /// The string features' distinct values of every chunk counted.
    strings: SharedStringCounts,
}

impl<'f> Shared<'f> {
    /// The feed; a thread that panicked holding it re-raises its panic when joined.
    fn feed(&self) -> std::sync::MutexGuard<'_, Feed<'f>> {
        self.feed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next chunk and its sequence number, once the merge is close enough behind;
    /// `None` at the end or once stopped.
    fn next_chunk(&self) -> Option<(u64, Chunk)> {
        let mut feed = self.feed();
        while !feed.stopped && feed.issued >= feed.merged + self.limit as u64 {
            feed = self.wake.wait(feed).unwrap_or_else(|p| p.into_inner());
        }
        if feed.stopped {
            return None;
        }
        let seq = feed.issued;
        feed.next_chunk().map(|chunk| (seq, chunk))
    }

    fn merged_one(&self) {
        self.feed().merged += 1;
        self.wake.notify_all();
    }

    fn stop(&self) {
        self.feed().stopped = true;
        self.wake.notify_all();
    }
}

/// One counting thread: counts chunks, and merges their string counts, until the feed ends
/// or the merge stops listening.
fn count_chunks(shared: &Shared<'_>, options: &StatsOptions, sender: mpsc::Sender<(u64, Counted)>) {
    while let Some((seq, chunk)) = shared.next_chunk() {
        let mut counted = count_chunk(options, chunk);
        if let Ok(acc) = &mut counted.result {
            shared.strings.merge(acc.take_string_counts());
        }
        if sender.send((seq, counted)).is_err() {
            break;
        }
    }
}

/// The distinct values of every string feature of the chunks counted, merged by the counting
/// threads (see the module's documentation), each feature under a lock of its own.
#[derive(Default)]
struct SharedStringCounts {
    by_key: RwLock<FxHashMap<StringsKey, Mutex<StringCounts>>>,
}

impl SharedStringCounts {
    /// Merges a chunk's counts. A feature another thread is merging into is left for after
    /// the others, so that two threads do not wait on each other feature after feature.
    fn merge(&self, chunk: Vec<(StringsKey, StringCounts)>) {
        let mut busy = Vec::new();
        for (key, counts) in chunk {
            let by_key = self.by_key.read().unwrap_or_else(PoisonError::into_inner);
            let known = match by_key.get(&key).map(Mutex::try_lock) {
                Some(Ok(mut ours)) => {
                    ours.merge_owned(counts);
                    continue;
                }
                Some(Err(_)) => true,
                None => false,
            };
            drop(by_key);
            if known {
                busy.push((key, counts));
            } else {
                let mut by_key = self.by_key.write().unwrap_or_else(PoisonError::into_inner);
                let ours = by_key.entry(key).or_default();
                ours.get_mut()
                    .unwrap_or_else(PoisonError::into_inner)
                    .merge_owned(counts);
            }
        }
        for (key, counts) in busy {
            let by_key = self.by_key.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(ours) = by_key.get(&key) {
                ours.lock().unwrap_or_else(PoisonError::into_inner).merge_owned(counts);
            }
        }
    }

    fn into_counts(self) -> impl Iterator<Item = (StringsKey, StringCounts)> {
        let by_key = self.by_key.into_inner().unwrap_or_else(PoisonError::into_inner);
        by_key
            .into_iter()
            .map(|(key, counts)| (key, counts.into_inner().unwrap_or_else(PoisonError::into_inner)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::Example;
    use crate::record::{RecordWriter, WriterOptions};
    use crate::stats::encode_statistics;
    use crate::stats::RecordMessage;

    /// Files of uneven sizes whose numeric values overflow the sketches' exact range and whose
    /// floats round differently when summed in other groupings.
    fn write_files(dir: &Path) -> Vec<PathBuf> {
        let sizes = [9_000u64, 25_000, 3, 14_000, 0, 21_000];
        let mut files = Vec::new();
        let mut n = 0u64;
        for (i, size) in sizes.into_iter().enumerate() {
            let path = dir.join(format!("part-{i}.tfrecord"));
            let mut writer = RecordWriter::create(&path, WriterOptions::default()).unwrap();
            for _ in 0..size {
                n += 1;
                let record = Example::builder()
                    .int64("n", [((n * 7919) % 100_003) as i64])
                    .float("x", [(n as f32).sqrt() * 0.1])
                    .bytes("s", [format!("v{}", n % 13)])
                    .bytes("u", [format!("u{}", n % 4_099), format!("w{}", n % 7)])
                    .build()
                    .unwrap();
                writer.write_record(&record.encode()).unwrap();
            }
            writer.finish().unwrap();
            files.push(path);
        }
        files
    }

    #[test]
    fn the_bytes_are_the_same_for_any_thread_count_and_equal_the_merged_file_partials() {
        let dir = std::env::temp_dir().join(format!("tfrec-stats-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = write_files(&dir);
        let options = StatsOptions::default();
        let run = |threads| {
            let out = statistics_of_files(files.clone(), ReaderOptions::default(), &options, threads).unwrap();
            encode_statistics(&out.statistics)
        };
        let one = run(1);
        for threads in [2, 3, 6] {
            assert!(run(threads) == one, "{threads} threads differ from one");
        }
        // Partials computed elsewhere, sent as bytes and merged in file order: the same bytes.
        let partials = files.iter().map(|path| {
            let (acc, read) = statistics_of_file(path, ReaderOptions::default(), &options)?;
            Ok((StatsAccumulator::from_partial_bytes(&acc.to_partial_bytes())?, read))
        });
        let merged = merge_partials(&options, partials).unwrap();
        assert!(encode_statistics(&merged.statistics) == one);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The progress counter ends at the files' size on disk, whatever the threads, and the
    /// statistics are those of the run without it.
    #[test]
    fn the_counter_of_bytes_read_ends_at_the_files_size() {
        let dir = std::env::temp_dir().join(format!("tfrec-stats-progress-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = write_files(&dir);
        let size: u64 = files.iter().map(|f| std::fs::metadata(f).unwrap().len()).sum();
        let options = StatsOptions::default();
        let plain = statistics_of_files(files.clone(), ReaderOptions::default(), &options, 1).unwrap();
        for threads in [1, 3] {
            let read = Arc::new(AtomicU64::new(0));
            let out = statistics_of_files_counting(files.clone(), ReaderOptions::default(), &options, threads, &read)
                .unwrap();
            assert_eq!(
                read.load(std::sync::atomic::Ordering::Relaxed),
                size,
                "{threads} threads"
            );
            assert!(encode_statistics(&out.statistics) == encode_statistics(&plain.statistics));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file of `n` Examples of every kind, about 100 bytes each; `float_at`: the record whose
    /// `i` is a float instead of an int.
    fn write_wide_file(path: &Path, n: u64, float_at: Option<u64>) {
        let mut writer = RecordWriter::create(path, WriterOptions::default()).unwrap();
        for r in 0..n {
            let mut b = Example::builder()
                .float("f", [(r % 1000) as f32 / 7.0, -0.0])
                .bytes("s", [format!("w{}", r % 37), format!("id{r}")])
                .int64(
                    "ids",
                    (0..r % 5).map(|k| (r * 31 + k) as i64 % 100_003).collect::<Vec<_>>(),
                );
            b = match float_at {
                Some(at) if at == r => b.float("i", [1.5]),
                _ => b.int64("i", [(r * 7919 % 50_000) as i64]),
            };
            writer.write_record(&b.build().unwrap().encode()).unwrap();
        }
        writer.finish().unwrap();
    }

    /// The statistics of the file at `path` on one thread, checked to be the same bytes on two
    /// and three.
    fn same_bytes_on_any_thread_count(path: &Path, options: &StatsOptions) -> Vec<u8> {
        let run = |threads| {
            let out =
                statistics_of_files(vec![path.to_path_buf()], ReaderOptions::default(), options, threads).unwrap();
            encode_statistics(&out.statistics)
        };
        let one = run(1);
        for threads in [2, 3] {
            assert!(run(threads) == one, "{threads} threads differ from one");
        }
        one
    }

    #[test]
    fn one_file_of_many_chunks_gives_the_same_bytes_on_any_thread_count_as_its_partial() {
        let dir = std::env::temp_dir().join(format!("tfrec-stats-chunks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("wide.tfrecord");
        write_wide_file(&path, 30_000, None);
        assert!(std::fs::metadata(&path).unwrap().len() > 2 * CHUNK_BYTES as u64);
        let options = StatsOptions::default();
        let one = same_bytes_on_any_thread_count(&path, &options);
        let partial = statistics_of_file(&path, ReaderOptions::default(), &options).map(|(acc, read)| {
            let bytes = acc.to_partial_bytes();
            (StatsAccumulator::from_partial_bytes(&bytes).unwrap(), read)
        });
        let merged = merge_partials(&options, [partial]).unwrap();
        assert!(encode_statistics(&merged.statistics) == one);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// SequenceExamples over several chunks: their feature lists (numbers, and strings of
    /// many distinct values) merged chunk by chunk give the same bytes on any thread count.
    #[test]
    fn sequence_examples_of_many_chunks_give_the_same_bytes_on_any_thread_count() {
        use crate::example::SequenceExample;
        let dir = std::env::temp_dir().join(format!("tfrec-stats-seq-chunks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("seq.tfrecord");
        let mut writer = RecordWriter::create(&path, WriterOptions::default()).unwrap();
        for r in 0..12_000u64 {
            let steps = 1 + r % 9;
            let record = SequenceExample::builder()
                .context_int64("user", [(r % 977) as i64])
                .context_bytes("id", [format!("seq-{r}")])
                .int64_list(
                    "ids",
                    (0..steps)
                        .map(|s| vec![((r * 31 + s) % 10_007) as i64])
                        .collect::<Vec<_>>(),
                )
                .float_list(
                    "dwell",
                    (0..steps).map(|s| vec![(r + s) as f32 / 3.0]).collect::<Vec<_>>(),
                )
                .bytes_list(
                    "terms",
                    (0..steps)
                        .map(|s| vec![format!("t{}", (r * 7 + s) % 50_021).into_bytes()])
                        .collect::<Vec<_>>(),
                )
                .build()
                .unwrap();
            writer.write_record(&record.encode()).unwrap();
        }
        writer.finish().unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 2 * CHUNK_BYTES as u64);
        let options = StatsOptions::default().message(RecordMessage::SequenceExample);
        same_bytes_on_any_thread_count(&path, &options);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_kind_change_in_a_later_chunk_is_the_error_one_pass_meets() {
        let dir = std::env::temp_dir().join(format!("tfrec-stats-chunk-kind-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("wide.tfrecord");
        let at = 25_000;
        write_wide_file(&path, 30_000, Some(at));
        let options = StatsOptions::default();
        let mut one_pass = StatsAccumulator::new(options.clone()).unwrap();
        let mut records = MultiFileReader::new(vec![path.clone()], ReaderOptions::default());
        let mut index = 0;
        let expected = loop {
            let record = records.next_located().unwrap().unwrap();
            let place = || RecordPlace {
                path: record.path.to_path_buf(),
                offset: record.offset,
                record_index: index,
            };
            if let Err(error) = one_pass.add_record(record.data, Some(&place)) {
                break error.to_string();
            }
            index += 1;
        };
        assert!(expected.contains(&format!("(record {at})")), "{expected}");
        for threads in [1, 2, 3] {
            let err = statistics_of_files(vec![path.clone()], ReaderOptions::default(), &options, threads).unwrap_err();
            assert_eq!(err.to_string(), expected, "{threads} threads");
        }
        let err = statistics_of_file(&path, ReaderOptions::default(), &options).unwrap_err();
        assert_eq!(err.to_string(), expected);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

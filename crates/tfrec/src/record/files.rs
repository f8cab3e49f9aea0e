//! Many TFRecord files read as one stream: expanding paths, globs and directories, and reading
//! the files in turn with per-file compression.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::compression::Compression;
use super::error::RecordError;
use super::format::HEADER_LEN;
use super::names::{is_hidden_name, looks_like_records_by_name, sniff_is_record};
use super::reader::{FileRecordReader, ReadStats, ReaderOptions, RecordReader};
use super::remote;
use super::spans::{FileSpans, SpannedFile};

/// Expands inputs into a list of files: a file stays itself; a directory gives the record files
/// in it and in its subdirectories, at any depth (as TFX's `Split-train/…` layout needs), sorted
/// by path: files named as records (`.tfrecord`, `.tfrecords`, `.tfrec`, `.gz`, `.zz`, `.zlib`,
/// or no extension as in `train-00000-of-00010`), and other files whose first bytes are a valid
/// record header or a gzip/zlib stream; hidden files and directories, names starting with `_`
/// (Spark's and Hadoop's `_SUCCESS` and `_temporary/`) and the rest (`.idx`,
/// `.json`, scripts…) are left out. A pattern with `*`, `?` or `[` is a glob (matches sorted by
/// name). A glob that matches nothing, a path that does not exist, or a directory that holds no
/// record file is an error: a typo must not read as an empty data set (see
/// [`expand_inputs_allow_empty`] to accept empty directories).
pub fn expand_inputs<I, S>(inputs: I) -> Result<Vec<PathBuf>, RecordError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    expand(inputs, false)
}

/// As [`expand_inputs`], but a directory without record files gives no files instead of an
/// error.
pub fn expand_inputs_allow_empty<I, S>(inputs: I) -> Result<Vec<PathBuf>, RecordError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    expand(inputs, true)
}

fn expand<I, S>(inputs: I, allow_empty: bool) -> Result<Vec<PathBuf>, RecordError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut files = Vec::new();
    for input in inputs {
        let input = input.as_ref();
        if remote::is_url(input) {
            files.extend(remote::expand_url(input, allow_empty)?);
            continue;
        }
        let local = remote::file_url_path(input);
        let as_path = local.as_deref().unwrap_or(Path::new(input));
        if as_path.is_dir() {
            let mut found = Vec::new();
            walk_dir(as_path, &mut found, 0)?;
            if found.is_empty() && !allow_empty {
                return Err(RecordError::open_failed(
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        "no record files in this directory or its subdirectories",
                    ),
                    Some(as_path.into()),
                ));
            }
            found.sort();
            files.extend(found);
        } else if as_path.exists() {
            files.push(as_path.to_path_buf());
        } else if input.contains(['*', '?', '[']) {
            let not_found = |msg: String| {
                RecordError::open_failed(io::Error::new(io::ErrorKind::NotFound, msg), Some(as_path.into()))
            };
            let pattern = as_path.to_str().unwrap_or(input);
            let paths = glob::glob(pattern).map_err(|e| not_found(format!("bad glob pattern: {e}")))?;
            let mut found = Vec::new();
            for path in paths {
                let path = path.map_err(|e| RecordError::open_failed(e.into(), Some(as_path.into())))?;
                if path.is_file() {
                    found.push(path);
                }
            }
            if found.is_empty() {
                return Err(not_found("no file matches this pattern".into()));
            }
            found.sort();
            files.extend(found);
        } else {
            return Err(RecordError::open_failed(
                io::Error::new(io::ErrorKind::NotFound, "no such file or directory"),
                Some(as_path.into()),
            ));
        }
    }
    Ok(files)
}

/// Directory levels followed below an input directory; deeper means a link cycle or a mistake.
const MAX_DEPTH: usize = 32;

/// Adds the record files under `dir` (see [`expand_inputs`]) to `found`.
fn walk_dir(dir: &Path, found: &mut Vec<PathBuf>, depth: usize) -> Result<(), RecordError> {
    if depth > MAX_DEPTH {
        return Err(RecordError::open_failed(
            io::Error::other(format!("directories nested more than {MAX_DEPTH} deep (a link cycle?)")),
            Some(dir.into()),
        ));
    }
    let entries = fs::read_dir(dir).map_err(|e| RecordError::open_failed(e, Some(dir.into())))?;
    for entry in entries {
        let path = entry.map_err(|e| RecordError::open_failed(e, Some(dir.into())))?.path();
        if is_hidden_name(path.file_name().and_then(|n| n.to_str()).unwrap_or("")) {
            continue;
        }
        if path.is_dir() {
            walk_dir(&path, found, depth + 1)?;
        } else if path.is_file() && looks_like_records(&path) {
            found.push(path);
        }
    }
    Ok(())
}

/// Whether a file in a directory should be read as records (see [`expand_inputs`]).
fn looks_like_records(path: &Path) -> bool {
    looks_like_records_by_name(path).unwrap_or_else(|| {
        let mut prefix = Vec::with_capacity(HEADER_LEN);
        let read = fs::File::open(path).and_then(|f| f.take(HEADER_LEN as u64).read_to_end(&mut prefix));
        read.is_ok() && sniff_is_record(&prefix)
    })
}

/// Counts the bytes read from a file, before decompression, for progress reporting.
struct CountingRead<R> {
    inner: R,
    counter: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The file a [`MultiFileReader`] reads.
enum OpenFile {
    /// By its record reader, one record after another.
    Sequential(FileRecordReader),
    /// In spans, on several threads.
    Spans(SpannedFile),
}

/// A record and where it came from.
#[derive(Debug, Clone, Copy)]
pub struct LocatedRecord<'a> {
    /// The record's data.
    pub data: &'a [u8],
    /// The file it is in.
    pub path: &'a Path,
    /// The offset of its header in the (decompressed) file.
    pub offset: u64,
    /// The index of the file in [`MultiFileReader::files`].
    pub file_index: usize,
}

impl std::fmt::Display for LocatedRecord<'_> {
    /// `path@offset`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.path.display(), self.offset)
    }
}

/// Reads the records of several files in order, as one stream.
///
/// Each file gets its own compression (by [`ReaderOptions::compression`]) and the corruption
/// policy applies per file: under [`OnCorruption::SkipFile`](super::OnCorruption::SkipFile) a
/// damaged file is abandoned and the next one is read.
///
/// ```
/// use tfrec::record::{MultiFileReader, ReaderOptions, RecordWriter, WriterOptions};
///
/// let dir = std::env::temp_dir().join(format!("tfrec-multi-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// for shard in 0..3 {
///     let path = dir.join(format!("train-{shard}.tfrecord"));
///     let mut writer = RecordWriter::create(&path, WriterOptions::default())?;
///     writer.write_record(format!("record of shard {shard}").as_bytes())?;
///     writer.finish()?;
/// }
///
/// // Paths, globs and directories; the files are read in name order, as one stream.
/// let pattern = dir.join("train-*.tfrecord");
/// let mut reader = MultiFileReader::open([pattern.to_str().unwrap()], ReaderOptions::default())?;
/// let mut seen = Vec::new();
/// while let Some(record) = reader.next_located()? {
///     seen.push((record.path.file_name().unwrap().to_owned(), record.data.to_vec()));
/// }
/// assert_eq!(seen.len(), 3);
/// assert_eq!(seen[2].1, b"record of shard 2");
/// assert_eq!(reader.stats().records, 3);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), tfrec::Error>(())
/// ```
pub struct MultiFileReader {
    files: Vec<PathBuf>,
    options: ReaderOptions,
    /// Index in `files` of the file `current` reads, or of the next file to open.
    file_index: usize,
    current: Option<OpenFile>,
    /// Each file is read on this many threads when it can be cut into spans (see
    /// [`MultiFileReader::threads`]).
    threads: usize,
    /// The compression each file was read with, once opened (parallel to `files`).
    compressions: Vec<Option<Compression>>,
    /// Counters of the files already finished.
    finished: ReadStats,
    problems: Vec<RecordError>,
    /// On-disk bytes read so far, shared with the readers' [`CountingRead`].
    disk_bytes: Arc<AtomicU64>,
    ended: bool,
}

impl MultiFileReader {
    /// A reader over `files`, in order.
    pub fn new(files: Vec<PathBuf>, options: ReaderOptions) -> Self {
        MultiFileReader {
            files,
            options,
            file_index: 0,
            current: None,
            threads: 1,
            compressions: Vec::new(),
            finished: ReadStats::default(),
            problems: Vec::new(),
            disk_bytes: Arc::new(AtomicU64::new(0)),
            ended: false,
        }
    }

    /// A reader over the files that `inputs` (paths, globs, directories) expand to.
    pub fn open<I, S>(inputs: I, options: ReaderOptions) -> Result<Self, RecordError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(Self::new(expand_inputs(inputs)?, options))
    }

    /// Reads each file on `threads` threads (default 1) where it can be cut into spans at
    /// record boundaries: a GZIP or ZLIB file with a fresh seek index (`FILE.zidx`), a plain
    /// file with an `.idx` that covers it, or any plain local file (its boundaries found by a
    /// scan of its record headers ahead of the threads). The records, their order, offsets,
    /// counts and errors are those of one thread: a span that fails hands the file back to
    /// the sequential reader at the first record not yet read, which reports the damage, or
    /// skips it under [`OnCorruption`](super::OnCorruption)'s options, as it always does.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Up to `max` records that the current file's reader holds whole in its window, each to
    /// `each` with its file's index and offset; how many. 0 when the next record needs
    /// [`next_located`](Self::next_located) (a file to open, a refill, damage, the end), which
    /// reads the same records, counted the same (see `RecordReader::read_whole_in_window`).
    pub(crate) fn take_whole_in_window(&mut self, max: usize, mut each: impl FnMut(&[u8], usize, u64)) -> usize {
        let file = self.file_index;
        match self.current.as_mut() {
            Some(OpenFile::Sequential(reader)) if !self.ended => {
                reader.read_whole_in_window(max, |data, offset, _| each(data, file, offset))
            }
            Some(OpenFile::Spans(spans)) if !self.ended => {
                spans.take_whole(max, |data, offset| each(data, file, offset))
            }
            _ => 0,
        }
    }

    /// Reads every record left, giving each to `each` with the index of its file (in
    /// [`MultiFileReader::files`]); stops at the first error and returns it, the records before
    /// it given. What [`next_located`](Self::next_located) in a loop reads, with the same
    /// counts, in fewer steps: the records a file's reader holds whole in its window are taken
    /// in one loop.
    pub fn for_each_record(&mut self, mut each: impl FnMut(&[u8], usize)) -> Result<(), RecordError> {
        loop {
            if self.take_whole_in_window(usize::MAX, |data, file, _| each(data, file)) > 0 {
                continue;
            }
            match self.next_located()? {
                Some(record) => each(record.data, record.file_index),
                None => return Ok(()),
            }
        }
    }

    /// The next record, `Ok(None)` after the last file. The slice is valid until the next call.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>, RecordError> {
        Ok(self.next_located()?.map(|r| r.data))
    }

    /// The next record with the file and offset it came from.
    pub fn next_located(&mut self) -> Result<Option<LocatedRecord<'_>>, RecordError> {
        let span = loop {
            if self.ended {
                return Ok(None);
            }
            let Some(open) = self.current.as_mut() else {
                self.open_next()?;
                continue;
            };
            // The sequential reader's span of the record; a spanned file keeps its own.
            let step = match open {
                OpenFile::Sequential(reader) => reader.next_span().map(|s| s.map(Some)),
                OpenFile::Spans(spans) => spans.advance().map(|more| more.then_some(None)),
            };
            match step {
                Ok(Some(span)) => break span,
                Ok(None) => self.close_current(),
                Err(error) => {
                    self.close_current();
                    self.ended = true;
                    return Err(error);
                }
            }
        };
        let (Some(open), Some(path)) = (&self.current, self.files.get(self.file_index)) else {
            return Ok(None);
        };
        let (data, offset) = match (open, span) {
            (OpenFile::Sequential(reader), Some(span)) => (reader.span_data(span), reader.last_record_offset()),
            (OpenFile::Spans(spans), _) => spans.last_record(),
            (OpenFile::Sequential(_), None) => return Ok(None),
        };
        Ok(Some(LocatedRecord {
            data,
            path,
            offset,
            file_index: self.file_index,
        }))
    }

    /// The file the last record came from (or the one being read).
    pub fn current_path(&self) -> Option<&Path> {
        match &self.current {
            Some(OpenFile::Sequential(reader)) => reader.path(),
            Some(OpenFile::Spans(_)) => self.files.get(self.file_index).map(PathBuf::as_path),
            None => None,
        }
    }

    /// The stream offset of the last record returned, within its file.
    pub fn last_record_offset(&self) -> u64 {
        match &self.current {
            Some(OpenFile::Sequential(reader)) => reader.last_record_offset(),
            Some(OpenFile::Spans(spans)) => spans.last_record_offset(),
            None => 0,
        }
    }

    /// The files this reader reads, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Index in [`MultiFileReader::files`] of the file being read.
    pub fn file_index(&self) -> usize {
        self.file_index
    }

    /// Counters over all files so far.
    pub fn stats(&self) -> ReadStats {
        let mut stats = self.finished;
        match &self.current {
            Some(OpenFile::Sequential(reader)) => stats.add(&reader.stats()),
            Some(OpenFile::Spans(spans)) => stats.add(&spans.stats()),
            None => {}
        }
        stats
    }

    /// Problems skipped so far, over all files (see [`RecordReader::problems`]).
    pub fn problems(&self) -> Vec<&RecordError> {
        let current = match &self.current {
            Some(OpenFile::Sequential(reader)) => reader.problems(),
            Some(OpenFile::Spans(spans)) => spans.problems(),
            None => &[],
        };
        self.problems.iter().chain(current).collect()
    }

    /// Takes the problems skipped so far, over all files: each is returned once.
    pub fn take_problems(&mut self) -> Vec<RecordError> {
        let mut problems = std::mem::take(&mut self.problems);
        match &mut self.current {
            Some(OpenFile::Sequential(reader)) => problems.extend(reader.take_problems()),
            Some(OpenFile::Spans(spans)) => problems.extend(spans.take_problems()),
            None => {}
        }
        problems
    }

    /// On-disk (compressed) bytes read so far, for a progress bar.
    pub fn disk_bytes_read(&self) -> u64 {
        self.disk_bytes.load(Ordering::Relaxed)
    }

    /// A shared counter of on-disk bytes read, for a progress bar drawn by another thread.
    pub fn disk_bytes_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.disk_bytes)
    }

    /// Adds the on-disk bytes it reads to `counter` instead of a counter of its own, so that
    /// readers of a data set's files one after another count into one progress bar.
    pub fn with_disk_bytes_counter(mut self, counter: Arc<AtomicU64>) -> Self {
        self.disk_bytes = counter;
        self
    }

    /// The total on-disk size of all files (files that cannot be inspected count as 0).
    pub fn total_disk_bytes(&self) -> u64 {
        self.files.iter().filter_map(|p| super::remote::size_of(p).ok()).sum()
    }

    /// The compression file `index` was read with (named, or detected from its content), once
    /// it has been opened.
    pub fn compression_of(&self, index: usize) -> Option<Compression> {
        self.compressions.get(index).copied().flatten()
    }

    fn open_next(&mut self) -> Result<(), RecordError> {
        let Some(path) = self.files.get(self.file_index) else {
            self.ended = true;
            return Ok(());
        };
        let (options, counter) = (self.options.clone(), Arc::clone(&self.disk_bytes));
        let open_sequential = move |path: &Path| {
            let counter = Arc::clone(&counter);
            RecordReader::open_with(path, options.clone(), move |file, _| {
                Box::new(CountingRead { inner: file, counter }) as Box<dyn Read + Send>
            })
        };
        let spans = (self.threads > 1)
            .then(|| {
                let o = &self.options;
                FileSpans::open(path, o.compression, None, 2 * self.threads, o.max_record_len, true)
            })
            .flatten();
        let opened = match spans {
            Some(spans) => {
                let reopen_path = path.clone();
                let reopen = Box::new(move || open_sequential(&reopen_path));
                let disk_bytes = Arc::clone(&self.disk_bytes);
                Ok(OpenFile::Spans(SpannedFile::start(
                    spans,
                    self.threads,
                    disk_bytes,
                    reopen,
                )))
            }
            None => open_sequential(path).map(OpenFile::Sequential),
        };
        match opened {
            Ok(open) => {
                self.compressions.resize(self.files.len(), None);
                self.compressions[self.file_index] = Some(match &open {
                    OpenFile::Sequential(reader) => reader.compression(),
                    OpenFile::Spans(spans) => spans.compression(),
                });
                self.current = Some(open);
                Ok(())
            }
            Err(error) => {
                self.ended = true;
                Err(error)
            }
        }
    }

    fn close_current(&mut self) {
        match self.current.take() {
            Some(OpenFile::Sequential(mut reader)) => {
                self.finished.add(&reader.stats());
                self.problems.extend(reader.take_problems());
            }
            Some(OpenFile::Spans(mut spans)) => {
                self.finished.add(&spans.stats());
                self.problems.extend(spans.take_problems());
            }
            None => return,
        }
        self.file_index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_walked_recursively_and_hidden_ones_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in [
            "Split-train",
            "Split-eval/deeper",
            ".hidden",
            "_temporary/0",
            "Split-train/_attempt",
        ] {
            fs::create_dir_all(root.join(sub)).unwrap();
        }
        for file in [
            "Split-train/a.tfrecord",
            "Split-eval/deeper/b.gz",
            ".hidden/c.tfrecord",
            "notes.json",
            // Spark's and Hadoop's: a job's marker and its unfinished attempts, not data.
            "_SUCCESS",
            "_temporary/0/part-00000.tfrecord",
            "Split-train/_attempt/d.tfrecord",
            "Split-train/_e.tfrecord",
        ] {
            fs::write(root.join(file), b"").unwrap();
        }
        let files = expand_inputs([root.to_str().unwrap()]).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["Split-eval/deeper/b.gz", "Split-train/a.tfrecord"]);
        // Named, or matched by a glob, such a file is read.
        let named = root.join("Split-train/_e.tfrecord");
        assert_eq!(
            expand_inputs([named.to_str().unwrap()]).unwrap(),
            std::slice::from_ref(&named)
        );
        let pattern = root.join("Split-train/_*.tfrecord");
        assert_eq!(expand_inputs([pattern.to_str().unwrap()]).unwrap(), [named]);
    }

    #[test]
    fn a_directory_without_records_is_an_error_unless_allowed() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("readme.txt"), b"hello").unwrap();
        let path = dir.path().to_str().unwrap();
        let error = expand_inputs([path]).unwrap_err();
        assert!(matches!(error.kind, super::super::error::RecordErrorKind::Open(_)));
        assert!(expand_inputs_allow_empty([path]).unwrap().is_empty());
    }

    /// The window loop (`take_whole_in_window`, then `next_located` for what it leaves) reads
    /// what `next_located` alone reads: the same records at the same places, the same error,
    /// the same counts; over seeded files of mixed sizes (some larger than the window), with
    /// damage, torn tails and every policy.
    #[test]
    fn the_window_loop_reads_what_the_record_path_reads() {
        use super::super::{OnCorruption, TornTail};
        let dir = tempfile::tempdir().unwrap();
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut below = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n.max(1)
        };
        type Read = (Vec<(Vec<u8>, usize, u64)>, Option<String>, ReadStats);
        let read = |files: &[PathBuf], options: &ReaderOptions, window: bool| -> Read {
            let mut reader = MultiFileReader::new(files.to_vec(), options.clone());
            let mut got = Vec::new();
            loop {
                if window && reader.take_whole_in_window(7, |d, f, o| got.push((d.to_vec(), f, o))) > 0 {
                    continue;
                }
                match reader.next_located() {
                    Ok(Some(r)) => got.push((r.data.to_vec(), r.file_index, r.offset)),
                    Ok(None) => return (got, None, reader.stats()),
                    Err(e) => return (got, Some(e.to_string()), reader.stats()),
                }
            }
        };
        for case in 0..60 {
            let files: Vec<PathBuf> = (0..1 + below(3))
                .map(|f| {
                    let records: Vec<Vec<u8>> = (0..below(100))
                        .map(|r| {
                            let len = match below(10) {
                                0 => 60_000 + below(90_000),
                                1 | 2 => 1_000 + below(20_000),
                                _ => below(300),
                            };
                            (0..len).map(|i| (i as u8) ^ (r as u8)).collect()
                        })
                        .collect();
                    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
                    let mut bytes = super::super::test_files::framed(&refs);
                    match below(5) {
                        0 | 1 if !bytes.is_empty() => {
                            let at = below(bytes.len() as u64) as usize;
                            bytes[at] ^= 1 << below(8);
                        }
                        2 if !bytes.is_empty() => bytes.truncate(below(bytes.len() as u64) as usize),
                        _ => {}
                    }
                    let path = dir.path().join(format!("case{case}-{f}.tfrecord"));
                    fs::write(&path, bytes).unwrap();
                    path
                })
                .collect();
            let options = ReaderOptions {
                buffer_size: 64 << 10,
                on_corruption: [OnCorruption::Fail, OnCorruption::Resync, OnCorruption::SkipFile][below(3) as usize],
                torn_tail: [TornTail::Error, TornTail::Skip][below(2) as usize],
                ..ReaderOptions::default()
            };
            let expected = read(&files, &options, false);
            assert_eq!(read(&files, &options, true), expected, "case {case}, {options:?}");
            // `for_each_record` reads the same, with files but not offsets.
            let mut reader = MultiFileReader::new(files.clone(), options.clone());
            let mut got = Vec::new();
            let error = reader.for_each_record(|d, f| got.push((d.to_vec(), f))).err();
            let want: Vec<_> = expected.0.iter().map(|(d, f, _)| (d.clone(), *f)).collect();
            assert_eq!(
                (got, error.map(|e| e.to_string()), reader.stats()),
                (want, expected.1, expected.2),
                "case {case}"
            );
        }
    }
}

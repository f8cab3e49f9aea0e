//! Random access to TFRecord files: record N of a plain file read with one positional read
//! (`pread`) and both its CRCs checked, through an index of record offsets loaded from beside
//! the file or built once and cached there; record N of a GZIP or ZLIB file inflated from the
//! nearest checkpoint of its seek index ([`SeekIndex`]), the spans inflated kept in a cache
//! bounded by bytes (by default one for the whole process, [`DEFAULT_CACHE_BYTES`]) so that a
//! span is inflated once however the reads are ordered, while the inflated data fits. [`RecordFile`] is one file, [`RecordFiles`] many files as
//! one sequence.
//!
//! Reads take `&self` (no seek position is shared), so threads can share one `RecordFile`.

use std::io;
use std::io::Read as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::compression::{Compression, CompressionChoice, DETECT_PREFIX};
use super::error::{Location, RecordError, RecordErrorKind};
use super::format::{decode_footer, masked_crc32c, Header, FOOTER_LEN, FRAMING_LEN, HEADER_LEN};
use super::index::{IndexEntry, IndexError, RecordIndex};
use super::reader::{file_compression, RecordReader};
use super::remote::{Positional, Source};
use super::seek_index::{buffer_for_overwrite, SeekIndex, Span, DEFAULT_SPACING};

/// An index made in memory by a read of this process, for [`RecordFile::open_indexed`]. (Only
/// the pipeline's reads make one; without it, none is ever given.)
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "pipeline"), allow(dead_code))]
pub(crate) enum KnownIndex {
    /// A plain file's record offsets.
    Plain(RecordIndex),
    /// A GZIP or ZLIB file's seek index.
    Seek(SeekIndex),
}

/// Inflated bytes of spans kept, by default, by all the compressed [`RecordFile`]s of a process
/// together (one budget shared by every file, so opening many files does not multiply it).
/// A file of up to about this much inflated data is inflated once, whatever the order of the
/// reads; a larger one inflates a span again each time a read comes back to an evicted one.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// Which file's span: a number never reused in the process, and the span's number.
type SpanKey = (u64, usize);

/// Inflated spans of compressed files, least recently used evicted first, within a byte budget
/// and a count of spans. Shared by several files (keyed by each file's number) or owned by one.
#[derive(Debug)]
struct SpanCache {
    max_bytes: usize,
    max_spans: usize,
    inner: Mutex<CacheInner>,
}

#[derive(Debug, Default)]
struct CacheInner {
    /// Each span with its last use (a tick of `clock`).
    spans: std::collections::HashMap<SpanKey, (Arc<Span>, u64)>,
    /// The spans by last use, oldest first.
    by_use: std::collections::BTreeMap<u64, SpanKey>,
    /// Sum of [`span_bytes`] over `spans`.
    bytes: usize,
    clock: u64,
}

/// Memory a cached span holds: its records and their starts.
fn span_bytes(span: &Span) -> usize {
    span.data.capacity() + span.starts.capacity() * std::mem::size_of::<usize>()
}

impl SpanCache {
    fn new(max_bytes: usize, max_spans: usize) -> Self {
        SpanCache {
            max_bytes,
            max_spans,
            inner: Mutex::new(CacheInner::default()),
        }
    }

    /// The cache of [`DEFAULT_CACHE_BYTES`] every compressed file uses unless told otherwise.
    fn shared() -> Arc<SpanCache> {
        static SHARED: std::sync::OnceLock<Arc<SpanCache>> = std::sync::OnceLock::new();
        SHARED
            .get_or_init(|| Arc::new(SpanCache::new(DEFAULT_CACHE_BYTES, usize::MAX)))
            .clone()
    }

    /// A new file's number for its keys.
    fn file_number() -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    fn get(&self, key: SpanKey) -> Option<Arc<Span>> {
        let mut inner = self.inner.lock().ok()?;
        let inner = &mut *inner;
        inner.clock += 1;
        let (span, used) = inner.spans.get_mut(&key)?;
        inner.by_use.remove(used);
        *used = inner.clock;
        inner.by_use.insert(inner.clock, key);
        Some(span.clone())
    }

    /// Keeps `span`, evicting the least recently used spans to make room; a span larger than
    /// the whole budget is not kept.
    fn insert(&self, key: SpanKey, span: Arc<Span>) {
        let size = span_bytes(&span);
        if size > self.max_bytes || self.max_spans == 0 {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else { return };
        let inner = &mut *inner;
        if inner.spans.contains_key(&key) {
            return;
        }
        while inner.bytes + size > self.max_bytes || inner.spans.len() >= self.max_spans {
            let Some((_, oldest)) = inner.by_use.pop_first() else {
                break;
            };
            if let Some((old, _)) = inner.spans.remove(&oldest) {
                inner.bytes -= span_bytes(&old);
            }
        }
        inner.clock += 1;
        inner.by_use.insert(inner.clock, key);
        inner.spans.insert(key, (span, inner.clock));
        inner.bytes += size;
    }

    /// Drops every span of file `file` (closed: its number is never used again).
    fn forget(&self, file: u64) {
        let Ok(mut inner) = self.inner.lock() else { return };
        let inner = &mut *inner;
        let gone: Vec<SpanKey> = inner.spans.keys().filter(|k| k.0 == file).copied().collect();
        for key in gone {
            if let Some((span, used)) = inner.spans.remove(&key) {
                inner.bytes -= span_bytes(&span);
                inner.by_use.remove(&used);
            }
        }
    }

    /// Inflated bytes held now.
    fn bytes(&self) -> usize {
        self.inner.lock().map_or(0, |inner| inner.bytes)
    }
}

/// A compressed file's seek index and the cache its inflated spans go to.
#[derive(Debug)]
struct Compressed {
    seek: SeekIndex,
    cache: Arc<SpanCache>,
    /// This file's number in `cache`'s keys.
    number: u64,
}

impl Compressed {
    fn new(seek: SeekIndex) -> Self {
        Compressed {
            seek,
            cache: SpanCache::shared(),
            number: SpanCache::file_number(),
        }
    }

    /// Moves this file's spans to `cache` (they are inflated again on their next read).
    fn use_cache(&mut self, cache: Arc<SpanCache>) {
        self.cache.forget(self.number);
        self.cache = cache;
    }

    /// The span holding record `i`, from the cache or inflated now (outside the lock, so
    /// threads reading other spans do not wait).
    fn span(&self, file: &Positional, path: &Arc<Path>, i: u64) -> Result<Arc<Span>, IndexError> {
        let key = (self.number, self.seek.span_of(i));
        if let Some(span) = self.cache.get(key) {
            return Ok(span);
        }
        let span = Arc::new(self.seek.decode_span(file, path, key.1)?);
        self.cache.insert(key, span.clone());
        Ok(span)
    }
}

impl Drop for Compressed {
    fn drop(&mut self) {
        self.cache.forget(self.number);
    }
}

/// A plain TFRecord file opened for random access.
///
/// ```
/// use tfrec::record::{RecordFile, RecordWriter, WriterOptions};
///
/// let dir = std::env::temp_dir().join(format!("tfrec-random-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("data.tfrecord");
/// let mut writer = RecordWriter::create(&path, WriterOptions::default())?;
/// for i in 0..1000 {
///     writer.write_record(format!("record {i}").as_bytes())?;
/// }
/// writer.finish()?;
///
/// // Builds the index (and saves it as `data.tfrecord.idx`); the next open loads it.
/// let file = RecordFile::open(&path)?;
/// assert_eq!(file.len(), 1000);
/// assert_eq!(file.get(777)?, b"record 777");
/// assert_eq!(file.get_many(&[3, 1])?, [b"record 3".to_vec(), b"record 1".to_vec()]);
/// assert!(file.get(1000).is_err());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), tfrec::Error>(())
/// ```
#[derive(Debug)]
pub struct RecordFile {
    file: Positional,
    path: Arc<Path>,
    /// The record offsets of a plain file (empty for a compressed one).
    index: RecordIndex,
    /// Where the index (or seek index) was loaded from or saved to; `None` when it lives only
    /// in memory.
    index_file: Option<PathBuf>,
    /// For a GZIP or ZLIB file: its seek index and span cache.
    compressed: Option<Compressed>,
}

impl RecordFile {
    /// Opens `path` with the index beside it ([`RecordIndex::default_path`], `FILE.idx`; for a
    /// GZIP or ZLIB file its seek index, [`SeekIndex::default_path`], `FILE.zidx`). A missing
    /// index is built by reading the file once and saved there when the directory is
    /// writable, else kept in memory.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, IndexError> {
        let path = path.as_ref();
        let (file, compression) = open_any(path)?;
        let index_path = match compression {
            Compression::None => RecordIndex::default_path(path),
            _ => SeekIndex::default_path(path),
        };
        Self::open_opened(file, compression, path, index_path)
    }

    /// As [`RecordFile::open`], with the index at `index_path` (loaded if it exists, else built
    /// and saved there when possible). Any `offset length` index works: `tfrec index`'s, DALI's
    /// `tfrecord2idx`, the `tfrecord` package's.
    pub fn open_with_index_file(path: impl AsRef<Path>, index_path: impl Into<PathBuf>) -> Result<Self, IndexError> {
        let path = path.as_ref();
        let (file, compression) = open_any(path)?;
        Self::open_opened(file, compression, path, index_path.into())
    }

    fn open_opened(
        file: Positional,
        compression: Compression,
        path: &Path,
        index_path: PathBuf,
    ) -> Result<Self, IndexError> {
        if compression != Compression::None {
            let (seek, index_file) = match SeekIndex::load(&index_path, path) {
                Ok(seek) => (seek, Some(index_path)),
                Err(IndexError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => {
                    let seek = SeekIndex::build(path, compression, DEFAULT_SPACING)?;
                    let saved = !file.is_remote() && seek.save(&index_path).is_ok();
                    (seek, saved.then_some(index_path))
                }
                Err(e) => return Err(e),
            };
            return Self::from_seek_parts(file, path, seek, index_file);
        }
        let (index, index_file) = match RecordIndex::load(&index_path) {
            Ok(index) => (index, Some(index_path)),
            Err(IndexError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => {
                let index = RecordIndex::build(path)?;
                // A read-only directory only costs the next process a scan. Nothing is
                // written into a bucket unasked: an object's index stays in memory.
                let saved = !file.is_remote() && index.save(&index_path).is_ok();
                (index, saved.then_some(index_path))
            }
            Err(e) => return Err(e),
        };
        Self::from_parts(file, path, index, index_file)
    }

    /// Opens `path` with an index already in memory.
    pub fn with_index(path: impl AsRef<Path>, index: RecordIndex) -> Result<Self, IndexError> {
        let path = path.as_ref();
        Self::from_parts(open_plain(path)?, path, index, None)
    }

    /// Opens the GZIP or ZLIB file `path` with a seek index already in memory (checked against
    /// the file's size, as a loaded one is).
    pub fn with_seek_index(path: impl AsRef<Path>, seek: SeekIndex) -> Result<Self, IndexError> {
        let path = path.as_ref();
        let (file, _) = open_any(path)?;
        Self::from_seek_parts(file, path, seek, None)
    }

    fn from_seek_parts(
        file: Positional,
        path: &Path,
        seek: SeekIndex,
        index_file: Option<PathBuf>,
    ) -> Result<Self, IndexError> {
        let file_len = file
            .len()
            .map_err(|e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf()))))?;
        if seek.file_len() != file_len {
            return Err(IndexError::StaleSeekIndex {
                index_file: index_file.unwrap_or_else(|| PathBuf::from("the seek index in memory")),
                path: path.to_path_buf(),
                problem: format!(
                    "it indexes a file of {} bytes and this one has {file_len}",
                    seek.file_len()
                ),
            });
        }
        Ok(RecordFile {
            file,
            path: Arc::from(path),
            index: RecordIndex::default(),
            index_file,
            compressed: Some(Compressed::new(seek)),
        })
    }

    /// Gives a compressed file a cache of its own, of up to `bytes` of inflated spans, in
    /// place of the process-wide one of [`DEFAULT_CACHE_BYTES`] that files share by default
    /// (0 keeps none: every read inflates from its checkpoint). Reads in any order inflate
    /// each span once while the inflated file fits; a smaller cache serves reads of
    /// neighbouring records.
    pub fn with_cache_bytes(mut self, bytes: usize) -> Self {
        if let Some(c) = &mut self.compressed {
            c.use_cache(Arc::new(SpanCache::new(bytes, usize::MAX)));
        }
        self
    }

    /// Gives a compressed file a cache of its own holding up to `spans` inflated spans,
    /// whatever their size (0 keeps none). Each holds about the seek index's spacing of
    /// inflated records. [`RecordFile::with_cache_bytes`] bounds the memory instead.
    pub fn with_cached_spans(mut self, spans: usize) -> Self {
        if let Some(c) = &mut self.compressed {
            c.use_cache(Arc::new(SpanCache::new(usize::MAX, spans)));
        }
        self
    }

    /// Inflated bytes held now in the cache this file uses (shared with other files unless it
    /// was given its own); 0 for a plain file.
    pub fn cached_bytes(&self) -> usize {
        self.compressed.as_ref().map_or(0, |c| c.cache.bytes())
    }

    /// The seek index of a compressed file (`None` for a plain one).
    pub fn seek_index(&self) -> Option<&SeekIndex> {
        self.compressed.as_ref().map(|c| &c.seek)
    }

    /// Random access to a plain TFRecord stream that can seek: a buffer in memory, or a file
    /// object a binding hands over. The stream is read once to build the index (kept in
    /// memory); `name` stands for it in errors. A compressed stream is refused, as
    /// [`RecordFile::open`] refuses a compressed file.
    ///
    /// ```
    /// use tfrec::record::{RecordFile, RecordWriter, WriterOptions};
    ///
    /// let mut writer = RecordWriter::with_options(Vec::new(), WriterOptions::default());
    /// for i in 0..10 {
    ///     writer.write_record(format!("record {i}").as_bytes())?;
    /// }
    /// let bytes = writer.finish()?;
    /// let file = RecordFile::from_seekable("<memory>", std::io::Cursor::new(bytes))?;
    /// assert_eq!(file.get(7)?, b"record 7");
    /// # Ok::<(), tfrec::Error>(())
    /// ```
    pub fn from_seekable<S>(name: impl AsRef<Path>, mut stream: S) -> Result<Self, IndexError>
    where
        S: io::Read + io::Seek + Send + 'static,
    {
        let path = name.as_ref();
        let open_failed = |e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf())));
        let len = stream.seek(io::SeekFrom::End(0)).map_err(open_failed)?;
        stream.seek(io::SeekFrom::Start(0)).map_err(open_failed)?;
        let mut prefix = Vec::new();
        io::Read::by_ref(&mut stream)
            .take(DETECT_PREFIX as u64)
            .read_to_end(&mut prefix)
            .map_err(open_failed)?;
        let compression = Compression::detect(&prefix);
        stream.seek(io::SeekFrom::Start(0)).map_err(open_failed)?;
        if compression != Compression::None {
            let seek = SeekIndex::build_from_stream(path, io::Read::by_ref(&mut stream), compression, DEFAULT_SPACING)?;
            let file = Positional::Stream {
                stream: Mutex::new(Box::new(stream)),
                len,
            };
            return Self::from_seek_parts(file, path, seek, None);
        }
        let reader = RecordReader::new(io::Read::by_ref(&mut stream)).with_path(path);
        let index = RecordIndex::from_reader(reader)?;
        let file = Positional::Stream {
            stream: Mutex::new(Box::new(stream)),
            len,
        };
        Self::from_parts(file, path, index, None)
    }

    /// Checks every entry against the file's size now, so that an index of another file or
    /// of an older, longer version is refused before any read.
    fn from_parts(
        file: Positional,
        path: &Path,
        index: RecordIndex,
        index_file: Option<PathBuf>,
    ) -> Result<Self, IndexError> {
        let file_len = file
            .len()
            .map_err(|e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf()))))?;
        let file = RecordFile {
            file,
            path: Arc::from(path),
            index,
            index_file,
            compressed: None,
        };
        for (i, e) in file.index.entries().iter().enumerate() {
            if e.len < FRAMING_LEN as u64 {
                return Err(file.stale(
                    i,
                    e.offset,
                    format!("{} bytes is shorter than a record's framing", e.len),
                ));
            }
            if e.offset.checked_add(e.len).is_none_or(|end| end > file_len) {
                return Err(file.stale(
                    i,
                    e.offset,
                    format!(
                        "a record of {} bytes there runs past the end of the file ({file_len} bytes)",
                        e.len
                    ),
                ));
            }
        }
        Ok(file)
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        match &self.compressed {
            Some(c) => c.seek.len() as usize,
            None => self.index.len(),
        }
    }

    /// Whether the file has no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The index file in use, or `None` when the index lives only in memory.
    pub fn index_file(&self) -> Option<&Path> {
        self.index_file.as_deref()
    }

    /// The index of record offsets (empty for a compressed file: see
    /// [`RecordFile::seek_index`]).
    pub fn index(&self) -> &RecordIndex {
        &self.index
    }

    /// The data of record `i`, CRC-checked.
    pub fn get(&self, i: usize) -> Result<Vec<u8>, IndexError> {
        let mut out = Vec::new();
        self.get_into(i, &mut out)?;
        Ok(out)
    }

    /// Replaces the contents of `out` with the data of record `i`, CRC-checked.
    pub fn get_into(&self, i: usize, out: &mut Vec<u8>) -> Result<(), IndexError> {
        out.clear();
        let data = self.read_record(i, out)?;
        out.copy_within(data.clone(), 0);
        out.truncate(data.len());
        Ok(())
    }

    /// Reads record `i` framed into `scratch` (grown when too small, never shrunk, so a buffer
    /// reused across calls is not zeroed again) and returns where its data lies in it: the
    /// copy-free form of [`RecordFile::get`].
    pub fn read_record(&self, i: usize, scratch: &mut Vec<u8>) -> Result<Range<usize>, IndexError> {
        if let Some(c) = &self.compressed {
            return self.read_compressed(c, i, scratch, 0);
        }
        let entry = self.entry(i)?;
        let len = self.frame_len(i, entry)?;
        if scratch.len() < len {
            scratch.resize(len, 0);
        }
        self.read_checked(i, entry, &mut scratch[..len])
    }

    /// The data of each record of `indices`, in that order.
    pub fn get_many(&self, indices: &[usize]) -> Result<Vec<Vec<u8>>, IndexError> {
        indices.iter().map(|&i| self.get(i)).collect()
    }

    /// Reads the records of `indices` framed one after another into `scratch` (grown when too
    /// small, never shrunk) and sets `spans` to where each one's data lies in it: the copy-free
    /// form of [`RecordFile::get_many`].
    pub fn read_many(
        &self,
        indices: &[usize],
        scratch: &mut Vec<u8>,
        spans: &mut Vec<Range<usize>>,
    ) -> Result<(), IndexError> {
        read_many_with(indices, scratch, spans, |i| Ok((self, i)))
    }

    /// Record `i` of a compressed file, framed, into `scratch[at..]` (grown when too small);
    /// both CRCs checked. Returns where its data lies in `scratch`.
    fn read_compressed(
        &self,
        c: &Compressed,
        i: usize,
        scratch: &mut Vec<u8>,
        at: usize,
    ) -> Result<Range<usize>, IndexError> {
        if i >= self.len() {
            return Err(IndexError::OutOfRange {
                index: i as u64,
                len: self.len() as u64,
            });
        }
        let span = c.span(&self.file, &self.path, i as u64)?;
        let k = (i as u64 - span.first_record) as usize;
        let (Some(&from), Some(&to)) = (span.starts.get(k), span.starts.get(k + 1)) else {
            return Err(self.stale(i, span.first_at, "the record is not in its span".into()));
        };
        let frame = &span.data[from..to];
        if scratch.len() < at + frame.len() {
            scratch.resize(at + frame.len(), 0);
        }
        let slot = &mut scratch[at..at + frame.len()];
        slot.copy_from_slice(frame);
        let offset = span.first_at + from as u64;
        let data = self.check_frame(i, offset, frame.len() as u64, slot, true)?;
        Ok(at + data.start..at + data.end)
    }

    /// Calls `f(i, data)` for every record in file order, both CRCs checked, with the file
    /// read by up to `threads` workers at once: for a compressed file each inflates its own
    /// spans from their checkpoints; for a plain file each reads its own runs of about a MiB
    /// of records, which start at the index's record boundaries. The first error ends it (the
    /// records before it have been given to `f`).
    pub fn for_each_record_parallel(&self, threads: usize, mut f: impl FnMut(usize, &[u8])) -> Result<(), IndexError> {
        let units = self.read_units();
        let threads = threads.clamp(1, units.len().max(1));
        // Workers run at most this many units ahead of the one handed out next.
        let ahead = 2 * threads;
        let next = std::sync::atomic::AtomicUsize::new(0);
        let handed_out = (Mutex::new(0usize), std::sync::Condvar::new());
        let (send, receive) = std::sync::mpsc::sync_channel::<(usize, Result<Span, IndexError>)>(ahead);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let send = send.clone();
                let (next, handed_out, units) = (&next, &handed_out, &units);
                scope.spawn(move || loop {
                    let u = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(unit) = units.get(u) else { return };
                    {
                        let (done, turn) = handed_out;
                        let Ok(mut done) = done.lock() else { return };
                        while u >= *done + ahead {
                            match turn.wait(done) {
                                Ok(d) => done = d,
                                Err(_) => return,
                            }
                        }
                    }
                    let span = self.read_unit(unit.clone());
                    let failed = span.is_err();
                    if send.send((u, span)).is_err() || failed {
                        return;
                    }
                });
            }
            drop(send);
            let mut waiting = std::collections::BTreeMap::new();
            let mut want = 0usize;
            let result = loop {
                if want == units.len() {
                    break Ok(());
                }
                let span = match waiting.remove(&want) {
                    Some(span) => span,
                    None => match receive.recv() {
                        Ok((u, span)) => {
                            waiting.insert(u, span);
                            continue;
                        }
                        // Every worker stopped with units left unsent: a worker thread failed.
                        Err(_) => {
                            let stopped = io::Error::other("a reading thread stopped early");
                            break Err(self.damage(RecordErrorKind::Io(stopped), 0, 0, false));
                        }
                    },
                };
                let span: Span = match span {
                    Ok(span) => span,
                    Err(e) => break Err(e),
                };
                for (k, pair) in span.starts.windows(2).enumerate() {
                    let frame = &span.data[pair[0]..pair[1]];
                    f(
                        span.first_record as usize + k,
                        &frame[HEADER_LEN..frame.len() - FOOTER_LEN],
                    );
                }
                want += 1;
                let (done, turn) = &handed_out;
                if let Ok(mut done) = done.lock() {
                    *done = want;
                }
                turn.notify_all();
            };
            // Let workers waiting for their turn see that no more is wanted.
            next.store(units.len(), std::sync::atomic::Ordering::Relaxed);
            if let Ok(mut done) = handed_out.0.lock() {
                *done = units.len() + ahead;
            }
            handed_out.1.notify_all();
            drop(receive);
            result
        })
    }

    /// Opens `path` to be read in spans by several workers when an index for it is known
    /// (`known`, made by an earlier read of this process) or beside it already, and fits the
    /// file as it is now: a fresh seek index (`FILE.zidx`) for a GZIP or ZLIB file, or for a
    /// plain one an `.idx` whose records follow one another from the first byte to the last
    /// (so a span read sees every byte a sequential read would). `None` otherwise, or on any
    /// problem opening it: the sequential reader then reads the file, and reports what is
    /// wrong with it. Nothing is built or written here.
    pub(crate) fn open_indexed(
        path: &Path,
        choice: CompressionChoice,
        known: Option<&KnownIndex>,
    ) -> Option<RecordFile> {
        let mut source = Source::open(path).ok()?;
        let compression = file_compression(path, &mut source, choice).ok()?;
        let file = Positional::from_source(source);
        if compression != Compression::None {
            let index_path = SeekIndex::default_path(path);
            let (seek, index_file) = match known {
                Some(KnownIndex::Seek(seek)) => (seek.clone(), None),
                Some(KnownIndex::Plain(_)) => return None,
                None => (SeekIndex::load(&index_path, path).ok()?, Some(index_path)),
            };
            if seek.compression() != compression {
                return None;
            }
            return Self::from_seek_parts(file, path, seek, index_file).ok();
        }
        let index_path = RecordIndex::default_path(path);
        let (index, index_file) = match known {
            Some(KnownIndex::Plain(index)) => (index.clone(), None),
            Some(KnownIndex::Seek(_)) => return None,
            None => (RecordIndex::load(&index_path).ok()?, Some(index_path)),
        };
        let file_len = file.len().ok()?;
        let mut at = 0u64;
        for e in index.entries() {
            if e.offset != at || e.len < FRAMING_LEN as u64 {
                return None;
            }
            at = at.checked_add(e.len)?;
        }
        if at != file_len {
            return None;
        }
        Self::from_parts(file, path, index, index_file).ok()
    }

    /// On-disk bytes of unit `unit` of [`RecordFile::read_units`] (for a compressed file, from
    /// its checkpoint to the next one's), for a progress count.
    pub(crate) fn unit_disk_bytes(&self, unit: &Range<usize>) -> u64 {
        match &self.compressed {
            Some(c) => {
                let checkpoints = c.seek.checkpoints();
                let from = checkpoints.get(unit.start).map_or(0, |k| k.compressed_offset);
                let to = checkpoints
                    .get(unit.end)
                    .map_or(c.seek.file_len(), |k| k.compressed_offset);
                to.saturating_sub(from)
            }
            None => {
                let entries = &self.index.entries()[unit.start.min(self.index.len())..unit.end.min(self.index.len())];
                entries.iter().map(|e| e.len).sum()
            }
        }
    }

    /// The file cut for [`RecordFile::for_each_record_parallel`]: span numbers of a compressed
    /// file, record ranges of about a MiB of a plain one.
    pub(crate) fn read_units(&self) -> Vec<Range<usize>> {
        if let Some(c) = &self.compressed {
            // Of checkpoints inside one long record, the last (the one `span_of` picks); none
            // after the last record's start.
            let checkpoints = c.seek.checkpoints();
            return (0..checkpoints.len())
                .filter(|&k| {
                    let first = checkpoints[k].first_record;
                    first < c.seek.len() && checkpoints.get(k + 1).is_none_or(|n| n.first_record > first)
                })
                .map(|k| k..k + 1)
                .collect();
        }
        let mut units = Vec::new();
        let (mut start, mut bytes) = (0usize, 0u64);
        for (i, e) in self.index.entries().iter().enumerate() {
            bytes += e.len;
            if bytes >= 1 << 20 {
                units.push(start..i + 1);
                (start, bytes) = (i + 1, 0);
            }
        }
        if start < self.index.len() {
            units.push(start..self.index.len());
        }
        units
    }

    /// One unit of [`RecordFile::read_units`], read and checked: every frame's CRCs hold.
    pub(crate) fn read_unit(&self, unit: Range<usize>) -> Result<Span, IndexError> {
        self.read_unit_into(unit, Vec::new())
    }

    /// [`RecordFile::read_unit`] into `buffer` (see [`buffer_for_overwrite`]).
    pub(crate) fn read_unit_into(&self, unit: Range<usize>, buffer: Vec<u8>) -> Result<Span, IndexError> {
        let span = match &self.compressed {
            Some(c) => c.seek.decode_span_into(&self.file, &self.path, unit.start, buffer)?,
            None => {
                let entries = &self.index.entries()[unit.clone()];
                let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
                    return Ok(Span {
                        first_record: unit.start as u64,
                        first_at: 0,
                        data: Vec::new(),
                        starts: vec![0],
                    });
                };
                let end = last.offset + last.len;
                let len = usize::try_from(end - first.offset)
                    .map_err(|_| self.stale(unit.start, first.offset, "too large for memory".into()))?;
                let mut data = buffer_for_overwrite(buffer, len);
                self.file
                    .read_exact_at(&mut data, first.offset)
                    .map_err(|e| self.damage(RecordErrorKind::Io(e), unit.start, first.offset, false))?;
                let mut starts: Vec<usize> = entries.iter().map(|e| (e.offset - first.offset) as usize).collect();
                starts.push(len);
                if starts.windows(2).any(|w| w[0] > w[1]) {
                    return Err(self.stale(unit.start, first.offset, "entries out of order".into()));
                }
                Span {
                    first_record: unit.start as u64,
                    first_at: first.offset,
                    data,
                    starts,
                }
            }
        };
        let inflated = self.compressed.is_some();
        for (k, pair) in span.starts.windows(2).enumerate() {
            let i = span.first_record as usize + k;
            let offset = span.first_at + pair[0] as u64;
            let frame = &span.data[pair[0]..pair[1]];
            self.check_frame(i, offset, frame.len() as u64, frame, inflated)?;
        }
        Ok(span)
    }

    fn entry(&self, i: usize) -> Result<IndexEntry, IndexError> {
        self.index.entries().get(i).copied().ok_or(IndexError::OutOfRange {
            index: i as u64,
            len: self.len() as u64,
        })
    }

    fn frame_len(&self, i: usize, entry: IndexEntry) -> Result<usize, IndexError> {
        usize::try_from(entry.len)
            .map_err(|_| self.stale(i, entry.offset, format!("{} bytes do not fit in memory", entry.len)))
    }

    /// Reads record `i` (at `entry`) into `frame`, exactly its framed length, and checks the
    /// length against its CRC and the index, then the data's CRC. Returns the data's range.
    fn read_checked(&self, i: usize, entry: IndexEntry, frame: &mut [u8]) -> Result<Range<usize>, IndexError> {
        self.file
            .read_exact_at(frame, entry.offset)
            .map_err(|e| self.damage(RecordErrorKind::Io(e), i, entry.offset, false))?;
        self.check_frame(i, entry.offset, entry.len, frame, false)
    }

    /// Checks record `i`'s frame (at `offset`, of the stream inflated when `inflated`): its
    /// length against its CRC and `expected_len`, then the data's CRC.
    fn check_frame(
        &self,
        i: usize,
        offset: u64,
        expected_len: u64,
        frame: &[u8],
        inflated: bool,
    ) -> Result<Range<usize>, IndexError> {
        let entry = IndexEntry {
            offset,
            len: expected_len,
        };
        let end = frame.len() - FOOTER_LEN;
        let (header_bytes, rest) = frame.split_at(HEADER_LEN);
        let header_bytes =
            <&[u8; HEADER_LEN]>::try_from(header_bytes).map_err(|_| self.stale(i, entry.offset, "too short".into()))?;
        let header = Header::decode(header_bytes);
        if !header.is_valid() {
            let kind = RecordErrorKind::LengthCrcMismatch {
                stored: header.stored_crc,
                computed: header.actual_crc,
                looks_compressed: None,
            };
            return Err(self.damage(kind, i, entry.offset, inflated));
        }
        if header.len.checked_add(FRAMING_LEN as u64) != Some(entry.len) {
            let problem = format!(
                "the record there holds {} data bytes where the index says {}",
                header.len,
                entry.len - FRAMING_LEN as u64
            );
            return Err(self.stale(i, entry.offset, problem));
        }
        let (data, footer) = rest.split_at(end - HEADER_LEN);
        let stored = decode_footer(
            <&[u8; FOOTER_LEN]>::try_from(footer).map_err(|_| self.stale(i, entry.offset, "too short".into()))?,
        );
        let computed = masked_crc32c(data);
        if stored != computed {
            let kind = RecordErrorKind::DataCrcMismatch {
                stored,
                computed,
                data_offset: entry.offset + HEADER_LEN as u64,
            };
            return Err(self.damage(kind, i, entry.offset, inflated));
        }
        Ok(HEADER_LEN..end)
    }

    fn damage(&self, kind: RecordErrorKind, i: usize, offset: u64, inflated: bool) -> IndexError {
        IndexError::Record(RecordError {
            kind,
            location: Location {
                path: Some(self.path.clone()),
                offset,
                record_index: i as u64,
                decompressed: inflated,
            },
        })
    }

    fn stale(&self, i: usize, offset: u64, problem: String) -> IndexError {
        IndexError::Stale {
            index_file: self.index_file.clone(),
            path: self.path.to_path_buf(),
            record: i as u64,
            offset,
            problem,
        }
    }
}

/// Opens a file for random access, with its compression.
fn open_any(path: &Path) -> Result<(Positional, Compression), IndexError> {
    let open_failed = |e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf())));
    let mut file = Source::open(path).map_err(open_failed)?;
    let compression = file_compression(path, &mut file, CompressionChoice::Auto).map_err(open_failed)?;
    Ok((Positional::from_source(file), compression))
}

/// Opens a file for random access, refusing a compressed one.
fn open_plain(path: &Path) -> Result<Positional, IndexError> {
    let open_failed = |e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf())));
    let mut file = Source::open(path).map_err(open_failed)?;
    match file_compression(path, &mut file, CompressionChoice::Auto).map_err(open_failed)? {
        Compression::None => Ok(Positional::from_source(file)),
        compression => Err(IndexError::NeedsUncompressed {
            path: path.to_path_buf(),
            compression,
        }),
    }
}

/// [`RecordFile::read_many`] for records that `locate` finds in one file or many.
fn read_many_with<'f>(
    indices: &[usize],
    scratch: &mut Vec<u8>,
    spans: &mut Vec<Range<usize>>,
    locate: impl Fn(usize) -> Result<(&'f RecordFile, usize), IndexError>,
) -> Result<(), IndexError> {
    spans.clear();
    let mut total = 0usize;
    for &i in indices {
        let (file, local) = locate(i)?;
        let data = match &file.compressed {
            Some(c) => file.read_compressed(c, local, scratch, total)?,
            None => {
                let entry = file.entry(local)?;
                let len = file.frame_len(local, entry)?;
                let end = total
                    .checked_add(len)
                    .ok_or_else(|| file.stale(local, entry.offset, "the batch does not fit in memory".into()))?;
                if scratch.len() < end {
                    scratch.resize(end, 0);
                }
                let data = file.read_checked(local, entry, &mut scratch[total..end])?;
                total + data.start..total + data.end
            }
        };
        total = data.end + FOOTER_LEN;
        spans.push(data);
    }
    Ok(())
}

/// Many TFRecord files (plain or compressed) as one sequence of records, numbered file after file.
#[derive(Debug)]
pub struct RecordFiles {
    files: Vec<RecordFile>,
    /// `starts[k]`: the number of the first record of `files[k]`.
    starts: Vec<usize>,
    len: usize,
}

impl RecordFiles {
    /// Opens each file with [`RecordFile::open`] (indexes beside the files, built if missing).
    pub fn open<I, P>(paths: I) -> Result<Self, IndexError>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        paths
            .into_iter()
            .map(RecordFile::open)
            .collect::<Result<Vec<_>, _>>()
            .map(Self::new)
    }

    /// The files, in order.
    pub fn new(files: Vec<RecordFile>) -> Self {
        let mut starts = Vec::with_capacity(files.len());
        let mut len = 0;
        for f in &files {
            starts.push(len);
            len += f.len();
        }
        RecordFiles { files, starts, len }
    }

    /// Gives the compressed files one cache of their own, of up to `bytes` of inflated spans
    /// for all of them together, in place of the process-wide one (see
    /// [`RecordFile::with_cache_bytes`]; 0 keeps none).
    pub fn with_cache_bytes(mut self, bytes: usize) -> Self {
        let cache = Arc::new(SpanCache::new(bytes, usize::MAX));
        for file in &mut self.files {
            if let Some(c) = &mut file.compressed {
                c.use_cache(cache.clone());
            }
        }
        self
    }

    /// Number of records in all files.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The files.
    pub fn files(&self) -> &[RecordFile] {
        &self.files
    }

    /// The file holding record `i` and the record's number in it.
    pub fn locate(&self, i: usize) -> Result<(&RecordFile, usize), IndexError> {
        if i >= self.len {
            return Err(IndexError::OutOfRange {
                index: i as u64,
                len: self.len as u64,
            });
        }
        // The last file starting at or before `i`: empty files share their start with the next.
        let k = self.starts.partition_point(|&s| s <= i).saturating_sub(1);
        let file = self.files.get(k).ok_or(IndexError::OutOfRange {
            index: i as u64,
            len: self.len as u64,
        })?;
        Ok((file, i - self.starts[k]))
    }

    /// The data of record `i`, CRC-checked.
    pub fn get(&self, i: usize) -> Result<Vec<u8>, IndexError> {
        let (file, local) = self.locate(i)?;
        file.get(local)
    }

    /// Replaces the contents of `out` with the data of record `i`.
    pub fn get_into(&self, i: usize, out: &mut Vec<u8>) -> Result<(), IndexError> {
        let (file, local) = self.locate(i)?;
        file.get_into(local, out)
    }

    /// [`RecordFile::read_record`] for record `i` of all files.
    pub fn read_record(&self, i: usize, scratch: &mut Vec<u8>) -> Result<Range<usize>, IndexError> {
        let (file, local) = self.locate(i)?;
        file.read_record(local, scratch)
    }

    /// The data of each record of `indices`, in that order.
    pub fn get_many(&self, indices: &[usize]) -> Result<Vec<Vec<u8>>, IndexError> {
        indices.iter().map(|&i| self.get(i)).collect()
    }

    /// [`RecordFile::read_many`] over all files.
    pub fn read_many(
        &self,
        indices: &[usize],
        scratch: &mut Vec<u8>,
        spans: &mut Vec<Range<usize>>,
    ) -> Result<(), IndexError> {
        read_many_with(indices, scratch, spans, |i| self.locate(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::test_files::{compressed, framed};

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        path
    }

    fn records() -> Vec<Vec<u8>> {
        (0..50u8).map(|i| vec![i; usize::from(i) * 7]).collect()
    }

    fn refs(records: &[Vec<u8>]) -> Vec<&[u8]> {
        records.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn reads_every_record_and_caches_the_index() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recs = records();
        let path = write(dir.path(), "a.tfrecord", &framed(&refs(&recs)));
        let file = RecordFile::open(&path).expect("open");
        let idx = RecordIndex::default_path(&path);
        assert_eq!(file.index_file(), Some(idx.as_path()));
        assert!(idx.exists(), "the index is saved beside the file");
        assert_eq!(file.len(), recs.len());
        for (i, r) in recs.iter().enumerate().rev() {
            assert_eq!(&file.get(i).expect("get"), r);
        }
        let again = RecordFile::open(&path).expect("open with the saved index");
        assert_eq!(again.index(), file.index());
        let mut scratch = Vec::new();
        let mut spans = Vec::new();
        again
            .read_many(&[3, 0, 49, 3], &mut scratch, &mut spans)
            .expect("read_many");
        let got: Vec<&[u8]> = spans.iter().map(|s| &scratch[s.clone()]).collect();
        assert_eq!(got, [&recs[3][..], &recs[0][..], &recs[49][..], &recs[3][..]]);
        assert!(matches!(
            again.get(50),
            Err(IndexError::OutOfRange { index: 50, len: 50 })
        ));
    }

    #[test]
    fn an_unwritable_index_path_keeps_the_index_in_memory() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = write(dir.path(), "a.tfrecord", &framed(&[b"x", b"yz"]));
        let file = RecordFile::open_with_index_file(&path, dir.path().join("no/such/dir/a.idx")).expect("open");
        assert_eq!(file.index_file(), None);
        assert_eq!(file.get(1).expect("get"), b"yz");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
        assert_eq!(leftovers.len(), 1, "no temporary index left behind");
    }

    #[test]
    fn damage_names_the_file_offset_and_record() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut bytes = framed(&[b"first", b"second", b"third"]);
        let path = write(dir.path(), "a.tfrecord", &bytes);
        let index = RecordIndex::build(&path).expect("build");
        let second = index.entries()[1].offset as usize;
        bytes[second + HEADER_LEN + 2] ^= 1;
        std::fs::write(&path, &bytes).expect("damage");
        let file = RecordFile::with_index(&path, index).expect("open");
        assert_eq!(file.get(2).expect("intact"), b"third");
        let err = file.get(1).expect_err("damaged");
        let text = err.to_string();
        assert!(text.contains(&format!("record 1 at byte {second}")), "{text}");
        assert!(text.contains("a.tfrecord"), "{text}");
        assert!(matches!(
            err,
            IndexError::Record(RecordError {
                kind: RecordErrorKind::DataCrcMismatch { .. },
                ..
            })
        ));
        bytes[second] ^= 1;
        std::fs::write(&path, &bytes).expect("damage the length");
        let err = file.get(1).expect_err("damaged length");
        assert!(matches!(
            err,
            IndexError::Record(RecordError {
                kind: RecordErrorKind::LengthCrcMismatch { .. },
                ..
            })
        ));
    }

    #[test]
    fn a_stale_index_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = write(dir.path(), "a.tfrecord", &framed(&[b"first", b"second"]));
        let idx = dir.path().join("a.idx");
        std::fs::write(&idx, "0 21\n21 22\n43 30\n").expect("index");
        let err = RecordFile::open_with_index_file(&path, &idx).expect_err("past the end");
        assert!(matches!(err, IndexError::Stale { record: 2, .. }), "{err}");
        assert!(
            err.to_string().starts_with(&format!("{}: stale index", idx.display())),
            "{err}"
        );
        std::fs::write(&idx, "0 22\n").expect("index");
        let file = RecordFile::open_with_index_file(&path, &idx).expect("in bounds");
        let err = file.get(0).expect_err("wrong length");
        assert!(
            err.to_string().contains("holds 5 data bytes where the index says 6"),
            "{err}"
        );
        std::fs::write(&idx, "0 3\n").expect("index");
        assert!(matches!(
            RecordFile::open_with_index_file(&path, &idx),
            Err(IndexError::Stale { .. })
        ));
    }

    /// Records of sizes from 10 bytes to 1 MiB (mostly small), compressible and not.
    fn random_records(seed: u64, n: usize) -> Vec<Vec<u8>> {
        let mut rng = crate::rng::SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let len = match rng.below(10) {
                    0 => 200_000 + rng.below(850_000),
                    1..=3 => 10 + rng.below(100),
                    _ => 1000 + rng.below(20_000),
                };
                let noisy = rng.below(2) == 0;
                let base = rng.next_u64();
                (0..len)
                    .map(|k| {
                        if noisy {
                            (rng.next_u64() >> 56) as u8
                        } else {
                            (base >> (k % 7)) as u8 ^ (k / 97) as u8
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// Every record, read sequentially by the streaming reader.
    fn sequential(path: &Path) -> Vec<Vec<u8>> {
        let mut reader = RecordReader::open(path, crate::record::ReaderOptions::default()).expect("open");
        let mut out = Vec::new();
        while let Some(r) = reader.next_record().expect("sequential read") {
            out.push(r.to_vec());
        }
        out
    }

    /// Reads every record in a shuffled order and checks each against `expected`.
    fn check_random_order(file: &RecordFile, expected: &[Vec<u8>], seed: u64) {
        assert_eq!(file.len(), expected.len());
        let mut order: Vec<usize> = (0..expected.len()).collect();
        let mut rng = crate::rng::SplitMix64::new(seed);
        for k in (1..order.len()).rev() {
            order.swap(k, rng.below(k + 1));
        }
        for &i in &order {
            assert!(file.get(i).expect("get") == expected[i], "record {i}");
        }
        let mut scratch = Vec::new();
        let mut spans = Vec::new();
        let some: Vec<usize> = order.iter().copied().take(20).collect();
        file.read_many(&some, &mut scratch, &mut spans).expect("read_many");
        for (k, &i) in some.iter().enumerate() {
            assert!(scratch[spans[k].clone()] == expected[i][..], "read_many record {i}");
        }
        assert!(matches!(file.get(expected.len()), Err(IndexError::OutOfRange { .. })));
    }

    #[test]
    fn every_record_of_compressed_files_reads_as_sequential_reading() {
        let dir = tempfile::tempdir().expect("temp dir");
        for seed in 0..3u64 {
            let recs = random_records(seed, 120);
            for (name, c) in [("a.tfrecord.gz", Compression::Gzip), ("b.zz", Compression::Zlib)] {
                let path = write(dir.path(), &format!("{seed}{name}"), &compressed(&refs(&recs), c));
                assert_eq!(sequential(&path), recs);
                // Built while opening, saved beside the file, then loaded.
                let file = RecordFile::open(&path).expect("open");
                let saved = SeekIndex::default_path(&path);
                assert_eq!(file.index_file(), Some(saved.as_path()));
                check_random_order(&file, &recs, seed);
                let again = RecordFile::open(&path).expect("open with the saved index");
                assert_eq!(again.seek_index(), file.seek_index());
                check_random_order(&again.with_cached_spans(0), &recs, seed + 10);
                // Dense checkpoints, kept in memory only.
                let dense = SeekIndex::build(&path, c, 40_000).expect("build");
                assert!(dense.checkpoints().len() > 20, "{}", dense.checkpoints().len());
                let file = RecordFile::with_seek_index(&path, dense)
                    .expect("open")
                    .with_cached_spans(2);
                check_random_order(&file, &recs, seed + 20);
            }
        }
    }

    #[test]
    fn a_byte_bounded_cache_stays_within_its_budget_and_reads_stay_exact() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recs = random_records(21, 120);
        let path = write(dir.path(), "c.gz", &compressed(&refs(&recs), Compression::Gzip));
        let seek = SeekIndex::build(&path, Compression::Gzip, 40_000).expect("build");
        assert!(seek.checkpoints().len() > 10, "{}", seek.checkpoints().len());
        let budget = 100_000;
        let small = RecordFile::with_seek_index(&path, seek.clone())
            .expect("open")
            .with_cache_bytes(budget);
        check_random_order(&small, &recs, 21);
        assert!(
            small.cached_bytes() > 0 && small.cached_bytes() <= budget,
            "{}",
            small.cached_bytes()
        );
        // A budget above the inflated file keeps every span once read.
        let whole = RecordFile::with_seek_index(&path, seek.clone())
            .expect("open")
            .with_cache_bytes(usize::MAX);
        check_random_order(&whole, &recs, 22);
        assert!(
            whole.cached_bytes() as u64 >= seek.inflated_len(),
            "{}",
            whole.cached_bytes()
        );
        let none = RecordFile::with_seek_index(&path, seek.clone())
            .expect("open")
            .with_cache_bytes(0);
        check_random_order(&none, &recs, 23);
        assert_eq!(none.cached_bytes(), 0);
        // Several files under one budget.
        let other = write(dir.path(), "d.zz", &compressed(&refs(&recs[..50]), Compression::Zlib));
        let files = RecordFiles::open([&path, &other])
            .expect("open")
            .with_cache_bytes(budget);
        let mut all = recs.clone();
        all.extend(recs[..50].iter().cloned());
        for i in (0..all.len()).rev() {
            assert!(files.get(i).expect("get") == all[i], "record {i}");
        }
        let held = files.files()[0].cached_bytes();
        assert_eq!(held, files.files()[1].cached_bytes(), "one cache");
        assert!(held > 0 && held <= budget, "{held}");
    }

    fn cached_span(len: usize) -> Arc<Span> {
        Arc::new(Span {
            first_record: 0,
            first_at: 0,
            data: vec![0; len],
            starts: vec![0, len],
        })
    }

    #[test]
    fn the_span_cache_evicts_the_least_recently_used_and_forgets_closed_files() {
        let size = span_bytes(&cached_span(1000));
        let cache = SpanCache::new(2 * size, usize::MAX);
        cache.insert((1, 0), cached_span(1000));
        cache.insert((1, 1), cached_span(1000));
        assert!(cache.get((1, 0)).is_some());
        cache.insert((2, 0), cached_span(1000));
        assert!(cache.get((1, 1)).is_none(), "the least recently used went");
        assert!(cache.get((1, 0)).is_some() && cache.get((2, 0)).is_some());
        assert_eq!(cache.bytes(), 2 * size);
        cache.insert((3, 0), cached_span(3000));
        assert!(cache.get((3, 0)).is_none(), "larger than the budget: not kept");
        cache.forget(1);
        assert!(cache.get((1, 0)).is_none());
        assert_eq!(cache.bytes(), size);
        let counted = SpanCache::new(usize::MAX, 1);
        counted.insert((1, 0), cached_span(10));
        counted.insert((1, 1), cached_span(10));
        assert!(counted.get((1, 0)).is_none() && counted.get((1, 1)).is_some());
    }

    #[test]
    fn concatenated_gzip_members_read_as_one_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (a, b) = (random_records(7, 30), random_records(8, 30));
        let mut bytes = compressed(&refs(&a), Compression::Gzip);
        bytes.extend_from_slice(&compressed(&refs(&b), Compression::Gzip));
        bytes.extend_from_slice(&compressed(&[b"last"], Compression::Gzip));
        let path = write(dir.path(), "cat.tfrecord.gz", &bytes);
        let mut all = a.clone();
        all.extend(b.iter().cloned());
        all.push(b"last".to_vec());
        assert_eq!(sequential(&path), all);
        for spacing in [40_000, 1 << 30] {
            let seek = SeekIndex::build(&path, Compression::Gzip, spacing).expect("build");
            let file = RecordFile::with_seek_index(&path, seek).expect("open");
            check_random_order(&file, &all, spacing);
        }
    }

    #[test]
    fn a_zlib_stream_with_a_preset_dictionary_is_refused_clearly() {
        let dir = tempfile::tempdir().expect("temp dir");
        // CMF 0x78, FLG 0xBB: FDICT set, header check holds; then a dictionary id and data.
        let mut bytes = vec![0x78, 0xbb, 0, 0, 0, 1];
        bytes.extend_from_slice(&compressed(&[b"x"], Compression::Zlib)[2..]);
        let path = write(dir.path(), "dict.zz", &bytes);
        let err = RecordFile::open(&path).expect_err("a preset dictionary");
        assert!(err.to_string().contains("preset dictionary"), "{err}");
        assert!(err.to_string().contains("dict.zz"), "{err}");
    }

    #[test]
    fn an_empty_compressed_file_has_no_records() {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, c) in [("e.gz", Compression::Gzip), ("e.zz", Compression::Zlib)] {
            let path = write(dir.path(), name, &compressed(&[], c));
            let file = RecordFile::open(&path).expect("open");
            assert!(file.is_empty());
            assert!(matches!(file.get(0), Err(IndexError::OutOfRange { .. })));
        }
    }

    #[test]
    fn a_seek_index_of_another_file_or_version_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recs = random_records(3, 40);
        let path = write(dir.path(), "a.gz", &compressed(&refs(&recs), Compression::Gzip));
        let other = write(dir.path(), "b.gz", &compressed(&refs(&recs[1..]), Compression::Gzip));
        RecordFile::open(&path).expect("index a.gz");
        // Another file's index.
        let err = RecordFile::open_with_index_file(&other, SeekIndex::default_path(&path)).expect_err("another file");
        assert!(matches!(err, IndexError::StaleSeekIndex { .. }), "{err}");
        // Another version of the file: same size, other bytes, written later.
        let mut changed = recs.clone();
        changed[5] = vec![b'z'; recs[5].len()];
        let bytes = compressed(&refs(&changed), Compression::Gzip);
        let original = std::fs::metadata(&path).expect("meta");
        std::fs::write(&path, &bytes).expect("rewrite");
        let f = std::fs::File::options().write(true).open(&path).expect("open");
        f.set_len(original.len()).expect("same size");
        let later = original.modified().expect("mtime") + std::time::Duration::from_secs(5);
        f.set_modified(later).expect("set mtime");
        drop(f);
        let err = RecordFile::open(&path).expect_err("another version");
        assert!(matches!(err, IndexError::StaleSeekIndex { .. }), "{err}");
        assert!(err.to_string().contains("modified after it was indexed"), "{err}");
    }

    #[test]
    fn a_damaged_seek_index_file_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recs = random_records(4, 40);
        let path = write(dir.path(), "a.gz", &compressed(&refs(&recs), Compression::Gzip));
        let file = RecordFile::open(&path).expect("index");
        let idx = SeekIndex::default_path(&path);
        let good = std::fs::read(&idx).expect("read index");
        let mut flipped = good.clone();
        flipped[good.len() / 2] ^= 4;
        let mut newer = good.clone();
        newer[8] = 9;
        for (what, bytes) in [
            ("flipped", flipped),
            ("cut", good[..good.len() - 9].to_vec()),
            ("newer", newer),
            ("empty", Vec::new()),
        ] {
            std::fs::write(&idx, &bytes).expect("damage the index");
            let err = RecordFile::open(&path).expect_err(what);
            assert!(matches!(err, IndexError::BadSeekIndex { .. }), "{what}: {err}");
        }
        drop(file);
    }

    /// A seek index whose checkpoints were changed by `lie`, saved with a valid checksum.
    fn lying_index(path: &Path, spacing: u64, lie: impl Fn(&mut Vec<crate::record::Checkpoint>)) -> SeekIndex {
        let mut seek = SeekIndex::build(path, Compression::Gzip, spacing).expect("build");
        lie(seek.checkpoints_mut());
        seek
    }

    /// A change to a seek index's checkpoints.
    type Lie = dyn Fn(&mut Vec<crate::record::Checkpoint>);

    #[test]
    fn checkpoints_that_lie_give_errors_never_wrong_records() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut rng = crate::rng::SplitMix64::new(9);
        let recs: Vec<Vec<u8>> = (0..400u32)
            .map(|i| {
                let mut r = format!("record {i} ").into_bytes();
                r.extend((0..1000).map(|_| b"abcdefghij"[rng.below(10)]));
                r
            })
            .collect();
        let path = write(dir.path(), "a.gz", &compressed(&refs(&recs), Compression::Gzip));
        let lies: [(&str, Box<Lie>); 5] = [
            ("a record number one off", Box::new(|c| c[2].first_record += 1)),
            (
                "the last record number one off",
                Box::new(|c| {
                    if let Some(last) = c.last_mut() {
                        last.first_record += 1;
                    }
                }),
            ),
            ("a bit count", Box::new(|c| c[2].bits = (c[2].bits + 3) % 8)),
            ("a record boundary", Box::new(|c| c[2].first_record_at += 1)),
            ("a compressed offset", Box::new(|c| c[2].compressed_offset += 1)),
        ];
        for (what, lie) in lies {
            let seek = lying_index(&path, 40_000, lie);
            assert!(seek.checkpoints().len() > 4, "several checkpoints");
            // Through the file format too: the loader's checks come first.
            let loaded = SeekIndex::from_bytes(&seek.to_bytes());
            let Ok(seek) = loaded else { continue };
            let file = RecordFile::with_seek_index(&path, seek).expect("open");
            let mut errors = 0;
            for (i, want) in recs.iter().enumerate() {
                match file.get(i) {
                    Ok(got) => assert!(&got == want, "{what}: record {i} is wrong"),
                    Err(e) => {
                        errors += 1;
                        assert!(e.to_string().contains("a.gz"), "{what}: {e}");
                    }
                }
            }
            assert!(errors > 0, "{what}: the lie went unnoticed");
        }
    }

    #[test]
    fn damaged_compressed_data_names_file_compressed_offset_and_record() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recs = random_records(5, 80);
        let mut bytes = compressed(&refs(&recs), Compression::Gzip);
        let path = write(dir.path(), "a.gz", &bytes);
        let seek = SeekIndex::build(&path, Compression::Gzip, 40_000).expect("build");
        let file = RecordFile::with_seek_index(&path, seek)
            .expect("open")
            .with_cached_spans(0);
        let at = bytes.len() * 2 / 3;
        for b in &mut bytes[at..at + 64] {
            *b ^= 0x55;
        }
        std::fs::write(&path, &bytes).expect("damage");
        let mut damaged = None;
        for (i, want) in recs.iter().enumerate() {
            match file.get(i) {
                Ok(got) => assert!(&got == want, "record {i} is wrong"),
                Err(e) => {
                    damaged = Some((i, e));
                    break;
                }
            }
        }
        let (i, err) = damaged.expect("the damage is found");
        let text = err.to_string();
        assert!(text.contains("a.gz"), "{text}");
        assert!(
            text.contains(&format!("record {i} ")) || text.contains("record "),
            "{text}"
        );
        match &err {
            IndexError::Record(r) => {
                if let Some(d) = r.stream_damage() {
                    assert!(d.compressed_offset as usize >= at.saturating_sub(READ_BACK), "{text}");
                    assert!(text.contains("compressed byte"), "{text}");
                }
            }
            other => panic!("not a record error: {other}"),
        }
        // Cut short.
        std::fs::write(&path, &bytes[..bytes.len() / 2]).expect("truncate");
        let seek = SeekIndex::build(&path, Compression::Gzip, 40_000);
        let err = seek.expect_err("a truncated file cannot be indexed");
        assert!(err.to_string().contains("a.gz"), "{err}");
    }

    #[test]
    fn parallel_reading_gives_every_record_in_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recs = random_records(11, 150);
        for (name, c) in [
            ("p.tfrecord", Compression::None),
            ("g.gz", Compression::Gzip),
            ("z.zz", Compression::Zlib),
        ] {
            let path = write(dir.path(), name, &compressed(&refs(&recs), c));
            let file = match c {
                Compression::None => RecordFile::open(&path).expect("open"),
                _ => {
                    let seek = SeekIndex::build(&path, c, 40_000).expect("build");
                    RecordFile::with_seek_index(&path, seek).expect("open")
                }
            };
            for threads in [1, 2, 5] {
                let mut got = Vec::new();
                file.for_each_record_parallel(threads, |i, data| got.push((i, data.to_vec())))
                    .expect("parallel read");
                let want: Vec<(usize, Vec<u8>)> = recs.iter().cloned().enumerate().collect();
                assert!(got == want, "{name}, {threads} threads");
            }
        }
        // Damage ends it with an error after the records before it.
        let mut bytes = compressed(&refs(&recs), Compression::Gzip);
        let path = write(dir.path(), "d.gz", &bytes);
        let seek = SeekIndex::build(&path, Compression::Gzip, 40_000).expect("build");
        let at = bytes.len() / 2;
        bytes[at] ^= 0xff;
        bytes[at + 1] ^= 0xff;
        std::fs::write(&path, &bytes).expect("damage");
        let file = RecordFile::with_seek_index(&path, seek).expect("open");
        let mut seen = 0;
        let err = file.for_each_record_parallel(3, |i, data| {
            assert_eq!(i, seen);
            assert!(data == recs[i], "record {i}");
            seen += 1;
        });
        assert!(err.is_err(), "the damage is found");
        assert!(seen < recs.len());
    }

    /// How far before the damage a block may begin whose decoding meets it.
    const READ_BACK: usize = 1 << 20;

    #[test]
    fn many_files_number_records_file_after_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = write(dir.path(), "a.tfrecord", &framed(&[b"a0", b"a1"]));
        let empty = write(dir.path(), "e.tfrecord", &[]);
        let b = write(dir.path(), "b.tfrecord", &framed(&[b"b0", b"b1", b"b2"]));
        let files = RecordFiles::open([&empty, &a, &empty, &b, &empty]).expect("open");
        assert_eq!(files.len(), 5);
        let all: Vec<Vec<u8>> = (0..5).map(|i| files.get(i).expect("get")).collect();
        assert_eq!(
            all,
            [
                b"a0".to_vec(),
                b"a1".to_vec(),
                b"b0".to_vec(),
                b"b1".to_vec(),
                b"b2".to_vec()
            ]
        );
        assert_eq!(files.get_many(&[4, 0]).expect("many"), [b"b2".to_vec(), b"a0".to_vec()]);
        let mut out = Vec::new();
        files.get_into(3, &mut out).expect("get_into");
        assert_eq!(out, b"b1");
        assert!(matches!(files.get(5), Err(IndexError::OutOfRange { index: 5, len: 5 })));
        assert!(RecordFiles::new(Vec::new()).get(0).is_err());
    }
}

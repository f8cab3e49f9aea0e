//! The files of a data set read as one record stream: the files left after sharding by file,
//! interleaved as tf.data's `interleave` does, each record with where it came from. With a
//! [`SpanBoard`], a file with an index beside it is read in spans by the workers (`spans.rs`),
//! any other sequentially by its [`RecordReader`].

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::data::{Counters, RecordBatch, RecordOrigin, SharedSpanBytes, StoredCrc, MAX_PROBLEMS};
use super::stages::Stream;
use crate::record::format::{FOOTER_LEN, FRAMING_LEN, HEADER_LEN};
use crate::record::output::PendingFile;
use crate::record::spans::{FileSpans, NextSpan, SpanBoard};
use crate::record::{
    Compression, FileRecordReader, IndexEntry, IndexError, KnownIndex, ReaderOptions, RecordError, RecordIndex,
    RecordReader, SeekIndex, DEFAULT_SPACING,
};

/// Counts the on-disk (compressed) bytes read from a file, for a progress bar, and copies
/// them to `tee` when a seek index is being made of them.
struct DiskCount<R> {
    file: R,
    counters: Arc<Counters>,
    tee: Option<SyncSender<Vec<u8>>>,
}

impl<R: Read> Read for DiskCount<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.counters.disk_bytes.fetch_add(n as u64, Ordering::Relaxed);
        if let Some(tee) = &self.tee {
            if n > 0 && tee.send(buf[..n].to_vec()).is_err() {
                // The index maker gave up (damage it saw first): reading goes on without it.
                self.tee = None;
            }
        }
        Ok(n)
    }
}

/// The bytes a [`DiskCount`] copies, as a stream for [`SeekIndex::build_from_stream`]; it ends
/// when the reader is dropped.
struct TeeStream {
    chunks: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for TeeStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.chunks.recv() {
                Ok(chunk) => (self.chunk, self.at) = (chunk, 0),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// An index being made while a file is read sequentially, saved beside the file when the read
/// ends cleanly (see [`FileSource::write_indexes`]).
enum IndexMaking {
    /// A plain file's record offsets and framed lengths.
    Plain(Vec<IndexEntry>),
    /// A compressed file's seek index, built on a thread of its own from a copy of the
    /// compressed bytes as the reader reads them (so the file is read once).
    Seek(JoinHandle<Result<SeekIndex, IndexError>>),
}

/// Writes `write`'s bytes to `path` atomically (a temporary file beside it, renamed into place;
/// uploaded whole for an object store URL).
fn save_beside(path: &Path, write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>) -> std::io::Result<()> {
    let pending = PendingFile::create(path)?;
    let mut file = pending.file()?;
    write(&mut file)?;
    file.sync_all()?;
    pending.commit()
}

/// Takes a record, where it was read and, when its reader left the check, its stored CRC.
type RecordSink<'a> = dyn FnMut(&[u8], RecordOrigin, Option<StoredCrc>) + 'a;

/// One open file of the interleave cycle.
struct OpenFile {
    reading: FileReading,
    /// Index of the file in the data set's list, and its path.
    file: usize,
    path: PathBuf,
    /// Index in the file of the next record.
    next_index: u64,
    /// The index being made of the file as it is read, when asked for.
    making: Option<IndexMaking>,
}

/// How an open file is read. (There is one per open file, and the sequential reader is used
/// for every record it reads: it stays in place rather than behind a box.)
#[allow(clippy::large_enum_variant)]
enum FileReading {
    /// By its record reader, one record after another.
    Sequential(FileRecordReader),
    /// In spans the workers read ahead.
    Spans(SpanCursor),
}

/// Where the stream stands in a file read in spans.
struct SpanCursor {
    spans: Arc<FileSpans>,
    /// The span being given out (`None` before the first).
    current: Option<CurrentSpan>,
    /// The next of its records to give out.
    next: usize,
}

/// The span a cursor is giving out: its bytes, shared with the batches that take its
/// records whole ([`SpanCursor::shares`]).
struct CurrentSpan {
    bytes: Arc<SharedSpanBytes>,
    /// Where each framed record starts in `bytes`, and its length last.
    starts: Vec<usize>,
    /// The file offset of its first record.
    first_at: u64,
}

/// What a file read in spans has next.
enum SpanStep {
    /// A record is ready in the cursor's current span.
    Ready,
    /// A span failed: the sequential reader takes over.
    Failed,
    /// The file's records are all out.
    End,
}

impl SpanCursor {
    /// Records of the current span not yet given out.
    fn left(&self) -> usize {
        self.current
            .as_ref()
            .map_or(0, |s| s.starts.len().saturating_sub(1).saturating_sub(self.next))
    }

    /// Moves to the next span when the current one is given out.
    fn step(&mut self, counters: &Counters) -> SpanStep {
        while self.left() == 0 {
            // Its records are all in batches: the next span may be read into its buffer once
            // no batch holds it.
            self.current = None;
            // The stream holds the workers' lock: it reads ahead only through their help.
            match self.spans.take_next(false) {
                NextSpan::Records(span, disk_bytes) => {
                    counters.disk_bytes.fetch_add(disk_bytes, Ordering::Relaxed);
                    counters.spans.fetch_add(1, Ordering::Relaxed);
                    self.current = Some(CurrentSpan {
                        bytes: SharedSpanBytes::new(span.data, &self.spans),
                        starts: span.starts,
                        first_at: span.first_at,
                    });
                    self.next = 0;
                }
                NextSpan::Failed => return SpanStep::Failed,
                NextSpan::End => return SpanStep::End,
            }
        }
        SpanStep::Ready
    }

    /// Record `k` of the current span: where its data is in the span, and the offset of its
    /// header in the file.
    fn record_range(&self, k: usize) -> Option<(std::ops::Range<usize>, u64)> {
        let span = self.current.as_ref()?;
        let (&from, &to) = (span.starts.get(k)?, span.starts.get(k + 1)?);
        let range = from + HEADER_LEN..to.checked_sub(FOOTER_LEN)?;
        Some((range, span.first_at + from as u64))
    }

    /// Record `k` of the current span: its data, and the offset of its header in the file.
    fn record(&self, k: usize) -> Option<(&[u8], u64)> {
        let (range, offset) = self.record_range(k)?;
        Some((self.current.as_ref()?.bytes.get(range)?, offset))
    }

    /// Whether `n` records from the next are given to a batch as they lie in the span,
    /// without a copy: when they are at least half its bytes. A batch then holds at most
    /// twice the bytes of its records, however long it is kept (a shuffle of small batches
    /// keeps many), and the span's buffer goes back for reading when the batches let go.
    fn shares(&self, n: usize) -> bool {
        self.current.as_ref().is_some_and(|span| {
            let (Some(&from), Some(&to)) = (span.starts.get(self.next), span.starts.get(self.next + n)) else {
                return false;
            };
            (to - from) * 2 >= span.bytes.len()
        })
    }
}

/// The interleaved record stream of the files.
pub(crate) struct FileSource {
    /// The files to read (index in the data set's list, path), in order.
    files: Vec<(usize, PathBuf)>,
    options: ReaderOptions,
    block_length: usize,
    counters: Arc<Counters>,
    /// Up to `cycle_length` open files, and whose turn it is.
    cycle: Vec<Option<OpenFile>>,
    turn: usize,
    taken_in_block: usize,
    /// The next file to open.
    next_file: usize,
    /// Records and bytes read but not yet added to the shared counters.
    unflushed: (u64, u64),
    /// The readers leave data CRCs to be checked with the batch (see [`FileSource::new`]).
    defer_crc: bool,
    /// Where files with an index are put for the workers to read in spans; `None`: every file
    /// is read sequentially.
    board: Option<Arc<SpanBoard>>,
    /// Spans read at most this far ahead of the stream, per file.
    spans_ahead: usize,
    /// Whether to make an index of each file read sequentially (see
    /// [`FileSource::write_indexes`]).
    write_indexes: bool,
    /// The indexes made so far, by path, for the next read of the file (a later epoch) when
    /// they could not be saved beside it.
    known: HashMap<PathBuf, KnownIndex>,
}

impl FileSource {
    /// With `defer_crc`, the readers return records without checking their data CRCs where
    /// that changes nothing but who checks ([`RecordReader::defer_data_crc`]); [`Stream::fill`]
    /// then puts what to check in the batch, and whoever gets the batch must check it
    /// ([`RecordBatch::check_crcs`]), also to drop it.
    pub fn new(
        files: Vec<(usize, PathBuf)>,
        options: ReaderOptions,
        cycle_length: usize,
        block_length: usize,
        counters: Arc<Counters>,
        defer_crc: bool,
    ) -> FileSource {
        FileSource {
            board: None,
            spans_ahead: 0,
            write_indexes: false,
            known: HashMap::new(),
            files,
            options,
            block_length: block_length.max(1),
            counters,
            cycle: (0..cycle_length.max(1)).map(|_| None).collect(),
            turn: 0,
            taken_in_block: 0,
            next_file: 0,
            unflushed: (0, 0),
            defer_crc,
        }
    }

    /// Reads files that have an index beside them in spans, which the workers read ahead
    /// through `board`, up to `ahead` spans a file.
    pub fn in_spans(mut self, board: Arc<SpanBoard>, ahead: usize) -> FileSource {
        self.board = Some(board);
        self.spans_ahead = ahead;
        self
    }

    /// Makes an index of each file read sequentially (one without an index that fits it) while
    /// reading it, and when the file was read to its end without damage saves it beside the
    /// file (`FILE.zidx` for a GZIP or ZLIB file, `FILE.idx` for a plain one; atomically), or
    /// keeps it for this source's next read of the file when it cannot be saved there.
    pub fn write_indexes(mut self, write: bool) -> FileSource {
        self.write_indexes = write;
        self
    }

    /// Saves a finished index of `path` beside it; keeps it here either way.
    fn keep_index(&mut self, path: &Path, making: IndexMaking) {
        let known = match making {
            IndexMaking::Plain(entries) => {
                let index = RecordIndex::from_entries(entries);
                let _ = save_beside(&RecordIndex::default_path(path), |f| index.write_to(f));
                KnownIndex::Plain(index)
            }
            IndexMaking::Seek(builder) => {
                let Some(seek) = builder
                    .join()
                    .ok()
                    .and_then(Result::ok)
                    .and_then(|s| s.stamped(path).ok())
                else {
                    return;
                };
                let _ = save_beside(&SeekIndex::default_path(path), |f| f.write_all(&seek.to_bytes()));
                KnownIndex::Seek(seek)
            }
        };
        // Saved or not (a read-only directory), the next epoch reads in spans.
        self.known.insert(path.to_path_buf(), known);
    }

    /// Adds the records and bytes read since the last flush to the shared counters.
    fn flush_counters(&mut self) {
        self.counters.records.fetch_add(self.unflushed.0, Ordering::Relaxed);
        self.counters.bytes.fetch_add(self.unflushed.1, Ordering::Relaxed);
        self.unflushed = (0, 0);
    }

    /// Opens `path`: in spans when there is a board and the file has an index that fits it,
    /// else for sequential reading (with the index being made of it, when asked for).
    fn open(&self, path: &std::path::Path) -> Result<(FileReading, Option<IndexMaking>), RecordError> {
        if let Some(board) = &self.board {
            // A plain file without an index is scanned ahead of the workers, unless its index is
            // to be made by this read (which the sequential reader does).
            let spans = FileSpans::open(
                path,
                self.options.compression,
                self.known.get(path),
                self.spans_ahead,
                self.options.max_record_len,
                !self.write_indexes,
            );
            if let Some(spans) = spans {
                let spans = Arc::new(spans);
                board.add(&spans);
                let cursor = SpanCursor {
                    spans,
                    current: None,
                    next: 0,
                };
                return Ok((FileReading::Spans(cursor), None));
            }
        }
        let (reader, making) = self.open_sequential(path, self.write_indexes)?;
        Ok((FileReading::Sequential(reader), making))
    }

    /// A sequential reader of `path`; with `make_index`, the index being made of it too.
    fn open_sequential(
        &self,
        path: &std::path::Path,
        make_index: bool,
    ) -> Result<(FileRecordReader, Option<IndexMaking>), RecordError> {
        let counters = Arc::clone(&self.counters);
        let mut making = None;
        let mut reader = RecordReader::open_with(path, self.options.clone(), |file, compression| {
            let mut tee = None;
            if make_index {
                if compression == Compression::None {
                    making = Some(IndexMaking::Plain(Vec::new()));
                } else {
                    let (send, chunks) = sync_channel(16);
                    let name = path.to_path_buf();
                    let stream = TeeStream {
                        chunks,
                        chunk: Vec::new(),
                        at: 0,
                    };
                    let builder = std::thread::Builder::new()
                        .name("tfrec-seek-index".into())
                        .spawn(move || SeekIndex::build_from_stream(&name, stream, compression, DEFAULT_SPACING));
                    if let Ok(builder) = builder {
                        making = Some(IndexMaking::Seek(builder));
                        tee = Some(send);
                    }
                }
            }
            Box::new(DiskCount { file, counters, tee }) as Box<dyn Read + Send>
        })?;
        if self.defer_crc {
            reader.defer_data_crc();
        }
        Ok((reader, making))
    }

    /// A sequential reader of `path` at record `index`, for a file whose span failed: the
    /// records before it were given out from spans, so the reader passes over them and then
    /// reads as it would have from the start (its errors, skips and counts are the
    /// sequential read's).
    fn reopen_at(&self, path: &std::path::Path, index: u64) -> Result<FileRecordReader, RecordError> {
        let (mut reader, _) = self.open_sequential(path, false)?;
        for _ in 0..index {
            if reader.next_span()?.is_none() {
                break;
            }
        }
        Ok(reader)
    }

    /// Closes the file whose turn it is; `finished` when it was read to its end.
    fn close_turn(&mut self, finished: bool) {
        self.flush_counters();
        if let Some(open) = self.cycle[self.turn].take() {
            let mut reader = match open.reading {
                FileReading::Sequential(reader) => reader,
                FileReading::Spans(cursor) => {
                    if let Some(board) = &self.board {
                        board.remove(&cursor.spans);
                    }
                    if finished {
                        self.counters.files_done.fetch_add(1, Ordering::Relaxed);
                    }
                    self.taken_in_block = 0;
                    return;
                }
            };
            let stats = reader.stats();
            let clean = stats.skipped_regions == 0
                && stats.skipped_bytes == 0
                && stats.skipped_files == 0
                && stats.torn_tail_bytes == 0
                && reader.problems().is_empty();
            let c = &self.counters;
            c.skipped_regions.fetch_add(stats.skipped_regions, Ordering::Relaxed);
            c.skipped_bytes.fetch_add(stats.skipped_bytes, Ordering::Relaxed);
            c.skipped_files.fetch_add(stats.skipped_files, Ordering::Relaxed);
            c.torn_tail_bytes.fetch_add(stats.torn_tail_bytes, Ordering::Relaxed);
            if finished {
                c.files_done.fetch_add(1, Ordering::Relaxed);
            }
            let problems = reader.take_problems();
            if !problems.is_empty() {
                if let Ok(mut kept) = c.problems.lock() {
                    let room = MAX_PROBLEMS.saturating_sub(kept.len());
                    kept.extend(problems.into_iter().take(room));
                }
            }
            // Dropped first: a seek index being made sees the end of its copy of the bytes.
            drop(reader);
            if let Some(making) = open.making {
                if finished && clean {
                    self.keep_index(&open.path, making);
                }
            }
        }
        // The next file takes this place in the cycle (opened when its turn comes).
        self.taken_in_block = 0;
    }

    fn advance_turn(&mut self) {
        self.turn = (self.turn + 1) % self.cycle.len();
        self.taken_in_block = 0;
    }
}

impl Drop for FileSource {
    fn drop(&mut self) {
        for turn in 0..self.cycle.len() {
            self.turn = turn;
            self.close_turn(false);
        }
    }
}

impl FileSource {
    /// tf.data's interleave: up to `cycle_length` files open; `block_length` records from each
    /// in turn; when a file ends the turn moves on and its place takes the next file. The next
    /// record goes to `f` with its origin and, when its reader left it unchecked, its stored
    /// data CRC and whether its file was compressed.
    fn next_record(&mut self, f: &mut RecordSink<'_>) -> Result<bool, RecordError> {
        let cycle = self.cycle.len();
        let mut idle_turns = 0;
        loop {
            if self.cycle[self.turn].is_none() && self.next_file < self.files.len() {
                let (file, path) = &self.files[self.next_file];
                let (file, path) = (*file, path.clone());
                let (reading, making) = self.open(&path)?;
                self.next_file += 1;
                self.cycle[self.turn] = Some(OpenFile {
                    reading,
                    file,
                    path,
                    next_index: 0,
                    making,
                });
                self.taken_in_block = 0;
            }
            let Some(open) = self.cycle[self.turn].as_mut() else {
                idle_turns += 1;
                if idle_turns > cycle {
                    self.flush_counters();
                    return Ok(false);
                }
                self.advance_turn();
                continue;
            };
            let reader = match &mut open.reading {
                FileReading::Sequential(reader) => reader,
                FileReading::Spans(cursor) => match cursor.step(&self.counters) {
                    SpanStep::Ready => {
                        let k = cursor.next;
                        cursor.next += 1;
                        let Some((data, offset)) = cursor.record(k) else {
                            continue;
                        };
                        let origin = RecordOrigin {
                            file: open.file,
                            offset,
                            index: open.next_index,
                        };
                        open.next_index += 1;
                        self.unflushed.0 += 1;
                        self.unflushed.1 += data.len() as u64;
                        f(data, origin, None);
                        self.after_record();
                        return Ok(true);
                    }
                    SpanStep::End => {
                        self.close_turn(true);
                        self.advance_turn();
                        idle_turns = 0;
                        continue;
                    }
                    SpanStep::Failed => {
                        let (path, index) = (open.path.clone(), open.next_index);
                        if let Some(board) = &self.board {
                            board.remove(&cursor.spans);
                        }
                        let reader = match self.reopen_at(&path, index) {
                            Ok(reader) => reader,
                            Err(e) => {
                                self.close_turn(false);
                                return Err(e);
                            }
                        };
                        if let Some(open) = self.cycle[self.turn].as_mut() {
                            open.reading = FileReading::Sequential(reader);
                        }
                        continue;
                    }
                },
            };
            match reader.next_span() {
                Ok(Some(span)) => {
                    let origin = RecordOrigin {
                        file: open.file,
                        offset: reader.last_record_offset(),
                        index: open.next_index,
                    };
                    open.next_index += 1;
                    let compressed = reader.compression() != Compression::None;
                    let unchecked = reader.deferred_crc().map(|stored| StoredCrc {
                        stored,
                        decompressed: compressed,
                    });
                    let data = reader.span_data(span);
                    if let Some(IndexMaking::Plain(entries)) = &mut open.making {
                        entries.push(IndexEntry {
                            offset: origin.offset,
                            len: (data.len() + FRAMING_LEN) as u64,
                        });
                    }
                    self.unflushed.0 += 1;
                    self.unflushed.1 += data.len() as u64;
                    f(data, origin, unchecked);
                    self.after_record();
                    return Ok(true);
                }
                Ok(None) => {
                    self.close_turn(true);
                    self.advance_turn();
                }
                Err(e) => {
                    self.close_turn(false);
                    return Err(e);
                }
            }
            idle_turns = 0;
        }
    }

    /// The counts after a record was given out: counters flushed now and then, and the turn
    /// passed on at the end of a block.
    fn after_record(&mut self) {
        if self.unflushed.0 >= 1024 {
            self.flush_counters();
        }
        self.taken_in_block += 1;
        if self.taken_in_block >= self.block_length {
            self.advance_turn();
        }
    }

    /// Whether the file of this turn is read in spans.
    fn turn_in_spans(&self) -> bool {
        matches!(
            self.cycle.get(self.turn),
            Some(Some(OpenFile {
                reading: FileReading::Spans(_),
                ..
            }))
        )
    }

    /// As many records as the reader of this turn holds whole in its window (or its current
    /// span), up to `room`, appended to `batch` in one loop; how many.
    fn take_from_window(&mut self, batch: &mut RecordBatch, room: usize) -> usize {
        let Some(open) = self.cycle[self.turn].as_mut() else {
            return 0;
        };
        let file = open.file;
        let mut index = open.next_index;
        let mut bytes = 0;
        let reader = match &mut open.reading {
            FileReading::Sequential(reader) => reader,
            FileReading::Spans(cursor) => {
                let n = cursor.left().min(room);
                let sharing = cursor.shares(n);
                for k in cursor.next..cursor.next + n {
                    let (Some((range, offset)), Some(span)) = (cursor.record_range(k), cursor.current.as_ref()) else {
                        continue;
                    };
                    let Some(data) = span.bytes.get(range.clone()) else {
                        continue;
                    };
                    let origin = RecordOrigin { file, offset, index };
                    bytes += data.len() as u64;
                    if sharing {
                        batch.push_shared(&span.bytes, range, origin);
                    } else {
                        batch.push(data, origin, None);
                    }
                    index += 1;
                }
                cursor.next += n;
                let taken = (index - open.next_index) as usize;
                open.next_index = index;
                self.unflushed.0 += taken as u64;
                self.unflushed.1 += bytes;
                return taken;
            }
        };
        let compressed = reader.compression() != Compression::None;
        let mut entries = match &mut open.making {
            Some(IndexMaking::Plain(entries)) => Some(entries),
            _ => None,
        };
        let taken = reader.read_whole_in_window(room, |data, offset, crc| {
            if let Some(entries) = entries.as_mut() {
                entries.push(IndexEntry {
                    offset,
                    len: (data.len() + FRAMING_LEN) as u64,
                });
            }
            bytes += data.len() as u64;
            batch.push(
                data,
                RecordOrigin { file, offset, index },
                crc.map(|stored| StoredCrc {
                    stored,
                    decompressed: compressed,
                }),
            );
            index += 1;
        });
        open.next_index = index;
        self.unflushed.0 += taken as u64;
        self.unflushed.1 += bytes;
        taken
    }
}

impl Stream for FileSource {
    fn next_with(&mut self, f: &mut dyn FnMut(&[u8], RecordOrigin)) -> Result<bool, RecordError> {
        // Deferred checks need a batch to travel with: a stage reading records one by one
        // stands between, so the readers check (see `Dataset::stream`).
        self.next_record(&mut |data, origin, unchecked| {
            debug_assert!(unchecked.is_none(), "a CRC left unchecked outside a batch");
            f(data, origin);
        })
    }

    /// Records the current file holds whole in its reader's window are taken in one loop per
    /// window (the reader's `read_whole_in_window`); anything else (opening a file, refilling
    /// the window, a large or damaged record, the end of a file) goes one record through
    /// [`next_record`](FileSource::next_record), the general path.
    fn fill(&mut self, batch: &mut RecordBatch, size: usize) -> Result<bool, RecordError> {
        while batch.len() < size {
            // With one file open at a time its block never passes the turn on: a span's
            // records then go to the batch in one run, which the batch can share instead of
            // copying ([`SpanCursor::shares`]). (The sequential reader keeps its steps of one
            // block: taking whole windows there made one thread no faster.)
            let block_room = if self.cycle.len() == 1 && self.turn_in_spans() {
                usize::MAX
            } else {
                self.block_length - self.taken_in_block
            };
            let room = (size - batch.len()).min(block_room);
            let taken = self.take_from_window(batch, room);
            if taken > 0 {
                self.taken_in_block += taken;
                if self.taken_in_block >= self.block_length {
                    self.advance_turn();
                }
                if self.unflushed.0 >= 1024 {
                    self.flush_counters();
                }
                continue;
            }
            if !self.next_record(&mut |data, origin, unchecked| batch.push(data, origin, unchecked))? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn restart(&mut self) {
        for turn in 0..self.cycle.len() {
            self.turn = turn;
            self.close_turn(false);
        }
        self.turn = 0;
        self.next_file = 0;
    }
}

//! One file on many cores: a file is cut into spans that start at record boundaries, and
//! helper threads read, inflate and check spans ahead of the record stream
//! ([`SpanBoard::help`], [`SpannedFile`]'s helpers), while the stream takes them in file order
//! ([`FileSpans::take_next`]). The records, their order and so every output are those of a
//! sequential read: only who does the work changes.
//!
//! Where the spans come from:
//! - a GZIP or ZLIB file with a fresh seek index: a span per checkpoint, inflated from it;
//! - a plain file with an `.idx` that covers it: runs of about a MiB of records;
//! - a plain local file without one: found ahead of the workers, by a scan of record headers
//!   ([`ScanAhead`]): whoever claims the next span reads its MiB and walks the headers in it
//!   (lengths and their CRCs), so that the next span starts at the record boundary where this
//!   one ends; the data CRCs, the costly part, are checked by whoever claimed it, outside the
//!   lock that keeps claims in file order.
//!
//! A span that fails (damage, an index that does not fit, a record over the length limit, a
//! header the scan cannot pass) hands the file back to the sequential reader at the first
//! record not yet given out, so errors, `--skip-corrupt` and their counts are exactly the
//! sequential reader's.
//!
//! The stream gives a span's buffer back once it has handed out its records
//! ([`FileSpans::give_back`]), and the next span is read into it: on two threads a span
//! costs one read (or inflate) into memory already in place, as the sequential reader's
//! window does, instead of a fresh MiB allocated, faulted in and zeroed first.

use std::collections::BTreeMap;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::format::{decode_footer, masked_crc32c, Header, FOOTER_LEN, FRAMING_LEN, HEADER_LEN};
use super::reader::{file_compression, FileRecordReader, ReadStats, Span as ReaderSpan};
use super::remote::{is_url_path, Positional, Source};
use super::seek_index::buffer_for_overwrite;
use super::{Compression, CompressionChoice, KnownIndex, RecordError, RecordFile, Span};

/// Bytes of records a span of a plain file holds, about (whole records, at least one).
const SPAN_BYTES: u64 = 1 << 20;

/// A span's buffer given back is kept for the next span only up to this size: one that a
/// long record made larger is let go of, not held for the rest of the file.
const SPARE_BUFFER_BYTES: usize = 8 << 20;

/// The files being read in spans, in the order the stream opened them, for the workers to
/// help with. Shared by the stream and the workers of one running pipeline.
#[cfg(feature = "pipeline")]
#[derive(Default)]
pub(crate) struct SpanBoard {
    files: Mutex<Vec<Arc<FileSpans>>>,
}

/// A lock that a panic elsewhere cannot leave unusable: the state under it is a plain map of
/// results and counters, consistent after every statement.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(feature = "pipeline")]
impl SpanBoard {
    /// Puts a file the stream has opened on the board.
    pub(crate) fn add(&self, file: &Arc<FileSpans>) {
        lock(&self.files).push(Arc::clone(file));
    }

    /// Takes a file off the board (the stream is done with it).
    pub(crate) fn remove(&self, file: &Arc<FileSpans>) {
        lock(&self.files).retain(|f| !Arc::ptr_eq(f, file));
    }

    /// Reads one span the stream will want soon, if there is one not yet taken within the
    /// read-ahead; whether it did. Called by a worker between batches, outside the stream's
    /// lock, so that spans are read on every core.
    pub(crate) fn help(&self) -> bool {
        let files: Vec<Arc<FileSpans>> = lock(&self.files).clone();
        files.iter().any(|f| f.help())
    }
}

/// Where a file's spans come from.
enum Units {
    /// From an index: every span known when the file is opened.
    Indexed { file: RecordFile, units: Vec<Range<usize>> },
    /// From a scan of a plain file's record headers, a span at a time ahead of the readers.
    Scanned(ScanAhead),
}

/// A plain file whose record boundaries are found while it is read.
struct ScanAhead {
    file: Positional,
    /// The file's size when opened: the scan stops there.
    len: u64,
    /// Where the next span starts. Held by whoever cuts the next span, so that spans are cut
    /// one after another, in file order.
    at: Mutex<ScanAt>,
}

struct ScanAt {
    /// Byte offset of the next span's first record header.
    offset: u64,
    /// Its record number.
    record: u64,
}

/// Work claimed by a reader: the number of the span, and what to read.
enum Job {
    /// A span of an index.
    Indexed(Range<usize>),
    /// A span the scan cut: its framed records read, lengths checked, data CRCs not yet;
    /// `None` when the scan could not pass the next header (the span fails).
    Scanned(Option<Span>),
}

/// One file read in spans.
pub(crate) struct FileSpans {
    units: Units,
    /// Spans read at most this far ahead of the one the stream takes next.
    ahead: usize,
    /// Records longer than this fail their span (the sequential reader then reports them).
    max_record_len: u64,
    state: Mutex<SpanState>,
    /// Signalled when a span is read, when the number of spans becomes known, and on close.
    read_done: Condvar,
    /// Signalled when the stream takes a span (room in the read-ahead) and on close.
    taken: Condvar,
    /// Buffers of spans the stream is done with, for the next spans to be read into; at most
    /// `ahead + 1`, each of at most [`SPARE_BUFFER_BYTES`].
    spare: Mutex<Vec<Vec<u8>>>,
}

#[derive(Default)]
struct SpanState {
    /// The next span nobody has started reading (spans are claimed in order).
    next_claim: usize,
    /// The span the stream takes next (`<= next_claim`).
    wanted: usize,
    /// Spans read and not yet taken; `None` for one that failed.
    ready: BTreeMap<usize, Option<Span>>,
    /// How many spans the file has, once known (at once from an index; from a scan when it
    /// reaches the end of the file or a span fails).
    total: Option<usize>,
    /// The stream stopped reading the file: helpers leave it.
    closed: bool,
}

/// What [`FileSpans::take_next`] gives the stream.
pub(crate) enum NextSpan {
    /// The next span's records, checked, with the on-disk bytes it covers.
    Records(Span, u64),
    /// The span failed: read the rest of the file sequentially.
    Failed,
    /// Every span was taken.
    End,
}

impl FileSpans {
    /// `path` cut into spans, read up to `ahead` spans ahead of the stream, when it can be:
    /// through an index known or beside it that fits it ([`RecordFile::open_indexed`]), or,
    /// with `scan`, a plain local file by a scan of its headers. `None` otherwise: the
    /// sequential reader reads it and reports whatever is wrong with it.
    pub(crate) fn open(
        path: &Path,
        choice: CompressionChoice,
        known: Option<&KnownIndex>,
        ahead: usize,
        max_record_len: u64,
        scan: bool,
    ) -> Option<FileSpans> {
        let (units, total) = match RecordFile::open_indexed(path, choice, known) {
            Some(file) => {
                let units = file.read_units();
                let total = units.len();
                (Units::Indexed { file, units }, Some(total))
            }
            None if scan && !is_url_path(path) => {
                let mut source = Source::open(path).ok()?;
                if file_compression(path, &mut source, choice).ok()? != Compression::None {
                    return None;
                }
                let file = Positional::from_source(source);
                let len = file.len().ok()?;
                let at = Mutex::new(ScanAt { offset: 0, record: 0 });
                (Units::Scanned(ScanAhead { file, len, at }), None)
            }
            None => return None,
        };
        Some(FileSpans {
            units,
            ahead: ahead.max(1),
            max_record_len,
            state: Mutex::new(SpanState {
                total,
                ..SpanState::default()
            }),
            read_done: Condvar::new(),
            taken: Condvar::new(),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// Takes back the buffer of a span whose records the stream has handed out, for a span
    /// not yet read.
    pub(crate) fn give_back(&self, data: Vec<u8>) {
        if data.capacity() > SPARE_BUFFER_BYTES {
            return;
        }
        // Its bytes are overwritten before they are read (`buffer_for_overwrite`); its length
        // says how many need no zeroing.
        let mut spare = lock(&self.spare);
        if spare.len() <= self.ahead {
            spare.push(data);
        }
    }

    /// A buffer to read a span into: one given back, or a new one.
    fn spare_buffer(&self) -> Vec<u8> {
        lock(&self.spare).pop().unwrap_or_default()
    }

    /// The compression of the file's stream.
    pub(crate) fn compression(&self) -> Compression {
        match &self.units {
            Units::Indexed { file, .. } => file.seek_index().map_or(Compression::None, |s| s.compression()),
            Units::Scanned(_) => Compression::None,
        }
    }

    /// Claims the next span not yet claimed, if it lies within the read-ahead and the file
    /// has it; for a scanned file, cuts it.
    fn claim(&self) -> Option<(usize, Job)> {
        match &self.units {
            Units::Indexed { units, .. } => {
                let mut state = lock(&self.state);
                let u = state.next_claim;
                let unit = units.get(u)?;
                (!state.closed && u < state.wanted + self.ahead).then(|| {
                    state.next_claim += 1;
                    (u, Job::Indexed(unit.clone()))
                })
            }
            Units::Scanned(scan) => {
                // Held while the span is cut: the next one starts where this one ends.
                let mut at = lock(&scan.at);
                let u = {
                    let state = lock(&self.state);
                    if state.closed || state.total.is_some() || state.next_claim >= state.wanted + self.ahead {
                        return None;
                    }
                    state.next_claim
                };
                let cut = if at.offset >= scan.len {
                    None
                } else {
                    Some(scan.cut(&mut at, self.max_record_len, self.spare_buffer()))
                };
                let mut state = lock(&self.state);
                match cut {
                    None => {
                        state.total = Some(u);
                        drop(state);
                        self.read_done.notify_all();
                        None
                    }
                    Some(span) => {
                        state.next_claim += 1;
                        if span.is_none() {
                            // Nothing is cut after a span that fails.
                            state.total = Some(u + 1);
                        }
                        Some((u, Job::Scanned(span)))
                    }
                }
            }
        }
    }

    /// Reads and checks what `job` names (both CRCs of every record, lengths within the
    /// limit); `None` when anything is wrong with it, or reading it panicked.
    fn run(&self, job: Job) -> Option<Span> {
        let span = match job {
            Job::Indexed(unit) => {
                let Units::Indexed { file, .. } = &self.units else {
                    return None;
                };
                let buffer = self.spare_buffer();
                catch_unwind(AssertUnwindSafe(|| file.read_unit_into(unit, buffer)))
                    .ok()?
                    .ok()?
            }
            Job::Scanned(span) => {
                let span = span?;
                let data_crcs_hold = span.starts.windows(2).all(|w| {
                    let frame = &span.data[w[0]..w[1]];
                    let (data, footer) = frame[HEADER_LEN..].split_at(frame.len() - FRAMING_LEN);
                    <&[u8; FOOTER_LEN]>::try_from(footer).is_ok_and(|f| masked_crc32c(data) == decode_footer(f))
                });
                data_crcs_hold.then_some(span)?
            }
        };
        let too_long = span
            .starts
            .windows(2)
            .any(|w| (w[1] - w[0]) as u64 > self.max_record_len.saturating_add(FRAMING_LEN as u64));
        (!too_long).then_some(span)
    }

    /// Reads span `u` (claimed by the caller) and hands it to the stream.
    fn store(&self, u: usize, span: Option<Span>) {
        lock(&self.state).ready.insert(u, span);
        self.read_done.notify_all();
    }

    /// Reads one span ahead of the stream, if there is one to read; whether it did.
    fn help(&self) -> bool {
        match self.claim() {
            Some((u, job)) => {
                let span = self.run(job);
                self.store(u, span);
                true
            }
            None => false,
        }
    }

    /// Waits until there may be a span to claim (the stream took one), or none ever will.
    /// Whether to go on helping.
    fn wait_for_room(&self) -> bool {
        let mut state = lock(&self.state);
        loop {
            let finished = state.total.is_some_and(|t| state.next_claim >= t);
            if state.closed || finished {
                return false;
            }
            if state.next_claim < state.wanted + self.ahead {
                return true;
            }
            state = self.taken.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Tells the helpers the stream is done with the file.
    pub(crate) fn close(&self) {
        lock(&self.state).closed = true;
        self.taken.notify_all();
        self.read_done.notify_all();
    }

    /// On-disk bytes of a span taken, for a progress count.
    fn disk_bytes(&self, u: usize, span: &Span) -> u64 {
        match &self.units {
            Units::Indexed { file, units } => units.get(u).map_or(0, |unit| file.unit_disk_bytes(unit)),
            Units::Scanned(_) => span.data.len() as u64,
        }
    }

    /// The next span in file order: read already, or being read by a helper (waited for), or
    /// read here when nobody has claimed it. With `read_ahead`, while a helper reads it, this
    /// thread reads a later span within the read-ahead instead of waiting idle: for a caller
    /// whose own work on the records is small (counting them), whose threads would otherwise
    /// be one reader at a time.
    pub(crate) fn take_next(&self, read_ahead: bool) -> NextSpan {
        let mut state = lock(&self.state);
        let u = state.wanted;
        let span = loop {
            if state.closed || state.total.is_some_and(|t| u >= t) {
                return NextSpan::End;
            }
            if let Some(span) = state.ready.remove(&u) {
                break span;
            }
            if state.next_claim == u || read_ahead {
                let own_turn = state.next_claim == u;
                drop(state);
                if let Some((claimed, job)) = self.claim() {
                    let span = self.run(job);
                    if claimed == u {
                        state = lock(&self.state);
                        break span;
                    }
                    // Another reader claimed `u` first; this one is for later.
                    self.store(claimed, span);
                    state = lock(&self.state);
                    continue;
                }
                state = lock(&self.state);
                // Nothing left to claim: `u` is being read elsewhere (or was just stored).
                if own_turn || state.ready.contains_key(&u) || state.next_claim == u {
                    continue;
                }
            }
            state = self
                .read_done
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        };
        state.wanted += 1;
        drop(state);
        self.taken.notify_all();
        match span {
            Some(span) => {
                let bytes = self.disk_bytes(u, &span);
                NextSpan::Records(span, bytes)
            }
            None => NextSpan::Failed,
        }
    }
}

impl ScanAhead {
    /// Cuts the span that starts `at`: reads about [`SPAN_BYTES`] from there into `buffer`,
    /// walks the record headers in it (each length's CRC checked, the length within
    /// `max_record_len` and the file), and keeps the whole records, at least one (a longer
    /// record is read whole); moves `at` to where the next span starts. `None` when the first
    /// header cannot be passed (damage, a cut-off record, a read error): the span fails there.
    fn cut(&self, at: &mut ScanAt, max_record_len: u64, buffer: Vec<u8>) -> Option<Span> {
        let start = at.offset;
        let left = self.len.checked_sub(start)?;
        // Read whole by `read_exact_at` before any byte of it is looked at.
        let mut data = buffer_for_overwrite(buffer, usize::try_from(SPAN_BYTES.min(left)).ok()?);
        self.file.read_exact_at(&mut data, start).ok()?;
        let mut starts = Vec::new();
        let mut pos = 0usize;
        while (pos as u64) < left && (pos as u64) < SPAN_BYTES {
            // A header past the bytes read starts the next span (or, cut off at the end of
            // the file, fails it: the sequential reader says what it is).
            let Some(header_bytes) = data.get(pos..pos + HEADER_LEN) else {
                break;
            };
            let header = Header::decode(<&[u8; HEADER_LEN]>::try_from(header_bytes).ok()?);
            if !header.is_valid() || header.len > max_record_len {
                break;
            }
            let Some(end) = header
                .len
                .checked_add((pos + FRAMING_LEN) as u64)
                .filter(|&end| end <= left)
            else {
                break;
            };
            if end > data.len() as u64 {
                if !starts.is_empty() {
                    break;
                }
                // The first record is longer than a span: read the rest of it.
                let have = data.len();
                data.resize(usize::try_from(end).ok()?, 0);
                self.file.read_exact_at(&mut data[have..], start + have as u64).ok()?;
            }
            starts.push(pos);
            pos = usize::try_from(end).ok()?;
        }
        if starts.is_empty() {
            return None;
        }
        data.truncate(pos);
        starts.push(pos);
        let first_record = at.record;
        at.offset = start + pos as u64;
        at.record += (starts.len() - 1) as u64;
        Some(Span {
            first_record,
            first_at: start,
            data,
            starts,
        })
    }
}

/// One file read in spans on helper threads of its own, its records handed out in file
/// order; when a span fails, the sequential reader (reopened, passed over the records already
/// handed out) reads the rest, so that errors, skips and counts are exactly its.
pub(crate) struct SpannedFile {
    spans: Arc<FileSpans>,
    helpers: Vec<JoinHandle<()>>,
    /// The span being handed out (`None` before the first).
    current: Option<Span>,
    /// The next of its records to hand out.
    next: usize,
    /// Records and data bytes handed out from spans.
    stats: ReadStats,
    /// The header offset of the record handed out last.
    last_offset: u64,
    /// The sequential reader, once a span failed (boxed: the rare path), and where its last
    /// record lies.
    fallback: Option<Box<FileRecordReader>>,
    fallback_record: Option<ReaderSpan>,
    /// Opens the sequential reader of the file at its start.
    reopen: Box<dyn Fn() -> Result<FileRecordReader, RecordError> + Send>,
    /// On-disk bytes read, for a progress bar.
    disk_bytes: Arc<AtomicU64>,
}

/// A record [`SpannedFile`] hands out: its data, and the offset of its header in the stream.
pub(crate) type SpannedRecord<'a> = (&'a [u8], u64);

impl SpannedFile {
    /// `spans` read on `threads - 1` helper threads besides the caller's.
    pub(crate) fn start(
        spans: FileSpans,
        threads: usize,
        disk_bytes: Arc<AtomicU64>,
        reopen: Box<dyn Fn() -> Result<FileRecordReader, RecordError> + Send>,
    ) -> SpannedFile {
        let spans = Arc::new(spans);
        let helpers = (1..threads.max(1))
            .filter_map(|_| {
                let spans = Arc::clone(&spans);
                std::thread::Builder::new()
                    .name("tfrec-span".into())
                    .spawn(move || while spans.help() || spans.wait_for_room() {})
                    .ok()
            })
            .collect();
        SpannedFile {
            spans,
            helpers,
            current: None,
            next: 0,
            stats: ReadStats::default(),
            last_offset: 0,
            fallback: None,
            fallback_record: None,
            reopen,
            disk_bytes,
        }
    }

    /// The compression of the file's stream.
    pub(crate) fn compression(&self) -> Compression {
        match &self.fallback {
            Some(reader) => reader.compression(),
            None => self.spans.compression(),
        }
    }

    /// Records of the current span not yet handed out.
    fn left(&self) -> usize {
        self.current
            .as_ref()
            .map_or(0, |s| s.starts.len().saturating_sub(1).saturating_sub(self.next))
    }

    /// Record `k` of the current span.
    fn record(&self, k: usize) -> Option<SpannedRecord<'_>> {
        let span = self.current.as_ref()?;
        let (&from, &to) = (span.starts.get(k)?, span.starts.get(k + 1)?);
        let data = span.data.get(from + HEADER_LEN..to.checked_sub(FOOTER_LEN)?)?;
        Some((data, span.first_at + from as u64))
    }

    /// Moves to a span with records left; `false` at the end of the file or when a span
    /// failed (the sequential reader is then open).
    fn step(&mut self) -> Result<bool, RecordError> {
        while self.fallback.is_none() && self.left() == 0 {
            // Its records are all out: the next span may be read into its buffer.
            if let Some(done) = self.current.take() {
                self.spans.give_back(done.data);
            }
            match self.spans.take_next(true) {
                NextSpan::Records(span, bytes) => {
                    self.disk_bytes.fetch_add(bytes, Ordering::Relaxed);
                    self.current = Some(span);
                    self.next = 0;
                }
                NextSpan::End => return Ok(false),
                NextSpan::Failed => {
                    self.spans.close();
                    let mut reader = (self.reopen)()?;
                    for _ in 0..self.stats.records {
                        if reader.next_span()?.is_none() {
                            break;
                        }
                    }
                    self.current = None;
                    self.fallback = Some(Box::new(reader));
                }
            }
        }
        Ok(self.fallback.is_none())
    }

    /// Moves to the next record ([`SpannedFile::last_record`]); `false` at the end of the file.
    pub(crate) fn advance(&mut self) -> Result<bool, RecordError> {
        if !self.step()? {
            let Some(reader) = self.fallback.as_mut() else {
                return Ok(false);
            };
            self.fallback_record = reader.next_span()?;
            return Ok(self.fallback_record.is_some());
        }
        let k = self.next;
        self.next += 1;
        let Some((len, offset)) = self.record(k).map(|(data, offset)| (data.len(), offset)) else {
            return Ok(false);
        };
        self.stats.records += 1;
        self.stats.data_bytes += len as u64;
        self.last_offset = offset;
        Ok(true)
    }

    /// The record [`SpannedFile::advance`] moved to, and the offset of its header.
    pub(crate) fn last_record(&self) -> SpannedRecord<'_> {
        if let (Some(reader), Some(span)) = (&self.fallback, self.fallback_record) {
            return (reader.span_data(span), reader.last_record_offset());
        }
        let k = self.next.saturating_sub(1);
        self.record(k).unwrap_or((&[], self.last_offset))
    }

    /// Up to `max` records of the current span (or those the sequential reader holds whole in
    /// its window), each to `each` with its header's offset; how many. 0 when the next record
    /// needs [`SpannedFile::next_record`].
    pub(crate) fn take_whole(&mut self, max: usize, mut each: impl FnMut(&[u8], u64)) -> usize {
        if let Some(reader) = self.fallback.as_mut() {
            self.fallback_record = None;
            return reader.read_whole_in_window(max, |data, offset, _| each(data, offset));
        }
        let n = self.left().min(max);
        let (mut records, mut bytes) = (0, 0);
        for k in self.next..self.next + n {
            if let Some((data, offset)) = self.record(k) {
                records += 1;
                bytes += data.len() as u64;
                each(data, offset);
            }
        }
        if n > 0 {
            self.last_offset = self.record(self.next + n - 1).map_or(self.last_offset, |r| r.1);
        }
        self.stats.records += records;
        self.stats.data_bytes += bytes;
        self.next += n;
        n
    }

    /// The header offset of the record handed out last.
    pub(crate) fn last_record_offset(&self) -> u64 {
        self.fallback
            .as_ref()
            .map_or(self.last_offset, |r| r.last_record_offset())
    }

    /// The counts of a sequential read so far (the sequential reader's own once it took over:
    /// it read the records before it again).
    pub(crate) fn stats(&self) -> ReadStats {
        self.fallback.as_ref().map_or(self.stats, |r| r.stats())
    }

    /// Problems skipped so far (only the sequential reader skips any).
    pub(crate) fn problems(&self) -> &[RecordError] {
        self.fallback.as_ref().map_or(&[], |r| r.problems())
    }

    /// Takes the problems skipped so far.
    pub(crate) fn take_problems(&mut self) -> Vec<RecordError> {
        self.fallback.as_mut().map_or_else(Vec::new, |r| r.take_problems())
    }
}

impl Drop for SpannedFile {
    fn drop(&mut self) {
        self.spans.close();
        for helper in self.helpers.drain(..) {
            let _ = helper.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::test_files::framed;
    use crate::record::{ReaderOptions, RecordReader};

    /// Records of many sizes, some longer than a span, so that spans end inside and between
    /// records.
    fn records() -> Vec<Vec<u8>> {
        let mut rng = crate::rng::SplitMix64::new(7);
        (0..600)
            .map(|i| {
                let len = match rng.next_u64() % 10 {
                    0 => (SPAN_BYTES as usize) + (rng.next_u64() % 5000) as usize,
                    1..=3 => (rng.next_u64() % 20_000) as usize,
                    _ => (rng.next_u64() % 300) as usize,
                };
                (0..len).map(|k| (i * 31 + k) as u8).collect()
            })
            .collect()
    }

    fn spanned(path: &Path, threads: usize) -> SpannedFile {
        let spans = FileSpans::open(path, CompressionChoice::Auto, None, 2 * threads, u64::MAX, true)
            .expect("a plain local file is scanned");
        let reopen_path = path.to_path_buf();
        let reopen = Box::new(move || RecordReader::open(&reopen_path, ReaderOptions::default()));
        SpannedFile::start(spans, threads, Arc::new(AtomicU64::new(0)), reopen)
    }

    fn read_all(path: &Path, threads: usize) -> (Vec<(Vec<u8>, u64)>, Option<RecordError>) {
        let mut file = spanned(path, threads);
        let mut got = Vec::new();
        loop {
            match file.advance() {
                Ok(true) => {
                    let (data, offset) = file.last_record();
                    got.push((data.to_vec(), offset));
                }
                Ok(false) => return (got, None),
                Err(e) => return (got, Some(e)),
            }
        }
    }

    fn sequential(path: &Path) -> (Vec<(Vec<u8>, u64)>, Option<RecordError>) {
        let mut reader = RecordReader::open(path, ReaderOptions::default()).expect("opens");
        let mut got = Vec::new();
        loop {
            match reader.next_record() {
                Ok(Some(data)) => {
                    let data = data.to_vec();
                    got.push((data, reader.last_record_offset()));
                }
                Ok(None) => return (got, None),
                Err(e) => return (got, Some(e)),
            }
        }
    }

    #[test]
    fn a_scanned_file_gives_every_record_once_in_order_at_its_offset() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("plain.tfrecord");
        let records = records();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        std::fs::write(&path, framed(&refs)).expect("written");
        let expected = sequential(&path);
        assert_eq!(expected.0.len(), records.len());
        for threads in [1, 2, 3] {
            let got = read_all(&path, threads);
            assert!(got.1.is_none(), "{threads} threads: {:?}", got.1);
            assert_eq!(got.0, expected.0, "{threads} threads");
        }
    }

    #[test]
    fn a_damaged_scanned_file_fails_where_the_sequential_reader_does() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let records = records();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let bytes = framed(&refs);
        // A flipped byte in a header, in a record's data, and a cut-off tail.
        let header_at = {
            let mut at = 0usize;
            for r in &records[..400] {
                at += r.len() + FRAMING_LEN;
            }
            at + 3
        };
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("header", {
                let mut b = bytes.clone();
                b[header_at] ^= 0x40;
                b
            }),
            ("data", {
                let mut b = bytes.clone();
                let k = b.len() / 3;
                b[k] ^= 1;
                b
            }),
            ("tail", bytes[..bytes.len() - 7].to_vec()),
        ];
        for (name, damaged) in cases {
            let path = dir.path().join(format!("{name}.tfrecord"));
            std::fs::write(&path, &damaged).expect("written");
            let expected = sequential(&path);
            let expected_error = expected.1.as_ref().map(ToString::to_string);
            assert!(expected_error.is_some(), "{name}: the damage is seen");
            for threads in [1, 2, 3] {
                let got = read_all(&path, threads);
                assert_eq!(got.0, expected.0, "{name}, {threads} threads");
                assert_eq!(
                    got.1.as_ref().map(ToString::to_string),
                    expected_error,
                    "{name}, {threads} threads"
                );
            }
        }
    }
}

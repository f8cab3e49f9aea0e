//! Streaming TFRecord reader: framing, CRC checks, corruption policies and resynchronisation.
//!
//! The reader owns a window buffer over its input. A record that fits in the window is
//! checked and returned as a slice of it, so reading many small records neither allocates nor
//! copies per record; a larger record is assembled in a second, reusable buffer. Because a
//! record is only consumed once both its CRCs hold, the reader can step back to one byte after
//! any damaged record and scan for the next intact one (see [`OnCorruption::Resync`]); the
//! scan itself is in `scan.rs`, decompression that keeps what decoded before damage in
//! `inflate.rs`.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::compression::{decoder, peek_prefix, Compression, CompressionChoice};
use super::error::{Location, RecordError, RecordErrorKind};
use super::format::{decode_footer, masked_crc32c, Header, FOOTER_LEN, FRAMING_LEN, HEADER_LEN};
use super::inflate::{StreamDamage, DETECT_PREFIX};
use super::scan;

/// What the reader does when a record is damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnCorruption {
    /// Return the error; the reader then ends. The default, as in TensorFlow.
    #[default]
    Fail,
    /// Skip damage and go on, losing no intact record: after any damaged record (a bad length
    /// or data CRC, a length over the limit or past the end, data cut short) the reader scans
    /// from the byte after the damaged record's start, never trusting its length, and accepts
    /// the first offset where a whole record with both CRCs holds. A partial header at the end
    /// is skipped. A damaged compressed stream gives every record decoded before the damage,
    /// then ends the file (counted in [`ReadStats::skipped_files`]). Only an I/O error fails.
    /// Each damaged region is counted in [`ReadStats`] and its first problem kept in
    /// [`RecordReader::problems`].
    Resync,
    /// Abandon the rest of the file at the first damaged record (counted in
    /// [`ReadStats::skipped_files`]). A multi-file reader goes on with the next file.
    SkipFile,
}

/// What the reader does with 1 to 11 bytes at the end of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TornTail {
    /// Report [`RecordErrorKind::PartialHeader`]. The default: TensorFlow silently drops such
    /// a tail, which hides a torn write.
    #[default]
    Error,
    /// Treat the partial header as the end of the data (a file still being written) and count
    /// its bytes in [`ReadStats::torn_tail_bytes`].
    Skip,
}

/// Settings of a [`RecordReader`]. `Default` gives TensorFlow's behaviour, except that a torn
/// tail is reported.
#[derive(Debug, Clone)]
pub struct ReaderOptions {
    /// How the compression is chosen. Default: [`CompressionChoice::Auto`] (extension, then
    /// sniffing). Set it to read a file whose name and content disagree.
    pub compression: CompressionChoice,
    /// Check every record's data CRC. Default: true. Turning it off roughly halves the work
    /// per byte for data that is verified elsewhere; lengths are always checked.
    pub verify_data_crc: bool,
    /// The largest record accepted, in bytes. Default: 2 GiB, the largest message protobuf
    /// can parse. A valid-looking length above it is [`RecordErrorKind::LengthOverLimit`].
    pub max_record_len: u64,
    /// What to do with a damaged record. Default: [`OnCorruption::Fail`].
    pub on_corruption: OnCorruption,
    /// What to do with a partial header at the end. Default: [`TornTail::Error`].
    pub torn_tail: TornTail,
    /// Size of the window buffer. Records up to this size are returned without a copy.
    /// Default: 1 MiB. Larger windows suit large records; the minimum is 64 KiB.
    pub buffer_size: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            compression: CompressionChoice::Auto,
            verify_data_crc: true,
            max_record_len: DEFAULT_MAX_RECORD_LEN,
            on_corruption: OnCorruption::Fail,
            torn_tail: TornTail::Error,
            buffer_size: DEFAULT_BUFFER_SIZE,
        }
    }
}

impl ReaderOptions {
    /// Sets [`ReaderOptions::compression`].
    pub fn compression(mut self, choice: impl Into<CompressionChoice>) -> Self {
        self.compression = choice.into();
        self
    }
    /// Sets [`ReaderOptions::verify_data_crc`].
    pub fn verify_data_crc(mut self, verify: bool) -> Self {
        self.verify_data_crc = verify;
        self
    }
    /// Sets [`ReaderOptions::max_record_len`].
    pub fn max_record_len(mut self, limit: u64) -> Self {
        self.max_record_len = limit;
        self
    }
    /// Sets [`ReaderOptions::on_corruption`].
    pub fn on_corruption(mut self, policy: OnCorruption) -> Self {
        self.on_corruption = policy;
        self
    }
    /// Sets [`ReaderOptions::torn_tail`].
    pub fn torn_tail(mut self, policy: TornTail) -> Self {
        self.torn_tail = policy;
        self
    }
    /// Sets [`ReaderOptions::buffer_size`].
    pub fn buffer_size(mut self, bytes: usize) -> Self {
        self.buffer_size = bytes;
        self
    }
}

/// 2 GiB: protobuf refuses larger messages, so a larger record is almost surely a bad length.
pub const DEFAULT_MAX_RECORD_LEN: u64 = 2 << 30;
const DEFAULT_BUFFER_SIZE: usize = 1 << 20;
const MIN_BUFFER_SIZE: usize = 64 << 10;
/// A large record's buffer grows by doubling from here, never straight to the claimed length,
/// so a lying length costs at most twice the bytes that really follow it.
const LARGE_RECORD_FIRST_CHUNK: usize = 1 << 20;
/// How many skipped problems a reader keeps for [`RecordReader::problems`].
const MAX_KEPT_PROBLEMS: usize = 1024;

/// Counters of what a reader has read and skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Records returned.
    pub records: u64,
    /// Data bytes of the records returned (framing excluded).
    pub data_bytes: u64,
    /// Damaged regions skipped under [`OnCorruption::Resync`] (each may have held several
    /// records, or part of one).
    pub skipped_regions: u64,
    /// Bytes skipped under [`OnCorruption::Resync`] (decompressed bytes for compressed input).
    pub skipped_bytes: u64,
    /// Files abandoned under [`OnCorruption::SkipFile`], or whose damaged rest could not be
    /// resynchronised.
    pub skipped_files: u64,
    /// Bytes of partial headers ignored under [`TornTail::Skip`].
    pub torn_tail_bytes: u64,
}

impl ReadStats {
    /// Adds another reader's counters to these.
    pub fn add(&mut self, other: &ReadStats) {
        self.records += other.records;
        self.data_bytes += other.data_bytes;
        self.skipped_regions += other.skipped_regions;
        self.skipped_bytes += other.skipped_bytes;
        self.skipped_files += other.skipped_files;
        self.torn_tail_bytes += other.torn_tail_bytes;
    }
}

/// Where the last valid record's data lies.
#[derive(Clone, Copy)]
pub(crate) enum Span {
    /// `window[start..start + len]`.
    Window { start: usize, len: usize },
    /// `large[HEADER_LEN..HEADER_LEN + len]`.
    Large { len: usize },
}

impl Span {
    fn len(self) -> usize {
        match self {
            Span::Window { len, .. } | Span::Large { len } => len,
        }
    }
}

/// Bytes put back in front of the source, read from `pos` on.
struct Replay {
    bytes: Vec<u8>,
    pos: usize,
}

/// Reads framed records from any [`Read`].
///
/// ```
/// use tfrec::record::{RecordReader, RecordWriter};
///
/// let mut file = Vec::new();
/// let mut writer = RecordWriter::new(&mut file);
/// writer.write_record(b"first")?;
/// writer.write_record(b"second")?;
/// writer.finish()?;
///
/// let mut reader = RecordReader::new(file.as_slice());
/// let mut seen = Vec::new();
/// while let Some(record) = reader.next_record()? {
///     seen.push(record.to_vec());
/// }
/// assert_eq!(seen, [b"first".to_vec(), b"second".to_vec()]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Damage is skipped, losing nothing that is intact, under [`OnCorruption::Resync`]:
///
/// ```
/// use tfrec::record::{OnCorruption, ReaderOptions, RecordReader, RecordWriter};
///
/// let mut writer = RecordWriter::new(Vec::new());
/// for word in ["one", "two", "three"] {
///     writer.write_record(word.as_bytes())?;
/// }
/// let mut file = writer.finish()?;
/// file[12 + 3 + 4 + 12] ^= 1; // a byte of "two"
///
/// let options = ReaderOptions::default().on_corruption(OnCorruption::Resync);
/// let reader = RecordReader::from_stream(file.as_slice(), options)?;
/// let records: Vec<Vec<u8>> = reader.records().collect::<Result<_, _>>()?;
/// assert_eq!(records, [b"one".to_vec(), b"three".to_vec()]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RecordReader<R> {
    src: R,
    options: ReaderOptions,
    /// Bytes read from the input; `window[pos..end]` are not consumed yet. Its length is fixed at
    /// construction and is at least [`MIN_BUFFER_SIZE`].
    window: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Holds a record larger than the window: its header, data and footer, in that order. Its
    /// length is a high-water mark (grown only as bytes arrive); only the current record's
    /// prefix is meaningful.
    large: Vec<u8>,
    /// Bytes to read again before `src`, the last chunk first: a large candidate record that
    /// failed under resynchronisation is put back (moved, not copied) so its bytes are scanned.
    replay: Vec<Replay>,
    /// Stream offset of `window[pos]`: everything before it has been consumed.
    offset: u64,
    /// The total length of the stream, when known up front (a plain file).
    stream_len: Option<u64>,
    /// No more bytes will come from `src` (its end, or `src_error`).
    src_eof: bool,
    /// What ended `src` early (a damaged compressed stream, a failed read). The bytes before it
    /// are still read; it is reported where the reader runs out of them.
    src_error: Option<RecordErrorKind>,
    /// Set once the reader has returned `None` or a final error; it then stays ended.
    ended: bool,
    /// Offset of the record most recently returned.
    last_offset: u64,
    /// Index of the next record, as errors name it: records returned before it (or the index
    /// given to [`RecordReader::seek_to`] plus those returned since).
    next_index: u64,
    path: Option<Arc<Path>>,
    compression: Compression,
    stats: ReadStats,
    problems: Vec<RecordError>,
}

impl<R: Read> RecordReader<R> {
    /// A reader of plain (uncompressed) records with default options.
    pub fn new(src: R) -> Self {
        Self::with_options(src, Compression::None, ReaderOptions::default())
    }

    /// A reader of already-decompressed records. `compression` is only recorded for error
    /// messages; use [`RecordReader::from_stream`] to decompress.
    fn with_options(src: R, compression: Compression, options: ReaderOptions) -> Self {
        let size = options.buffer_size.max(MIN_BUFFER_SIZE);
        RecordReader {
            src,
            options,
            window: vec![0u8; size].into_boxed_slice(),
            pos: 0,
            end: 0,
            large: Vec::new(),
            replay: Vec::new(),
            offset: 0,
            stream_len: None,
            src_eof: false,
            src_error: None,
            ended: false,
            last_offset: 0,
            next_index: 0,
            path: None,
            compression,
            stats: ReadStats::default(),
            problems: Vec::new(),
        }
    }

    /// Sets the path named in errors (for a stream that came from a file).
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(Arc::from(path.into()));
        self
    }

    /// The next record's data, `Ok(None)` at the end of the input.
    ///
    /// The slice borrows the reader's buffer and is valid until the next call. After an error
    /// (under [`OnCorruption::Fail`]) or `None`, every later call returns `Ok(None)`.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>, RecordError> {
        Ok(self.next_span()?.map(|span| self.span_data(span)))
    }

    /// The bytes of a span returned by the latest [`RecordReader::next_span`].
    pub(crate) fn span_data(&self, span: Span) -> &[u8] {
        match span {
            Span::Window { start, len } => &self.window[start..start + len],
            Span::Large { len } => &self.large[HEADER_LEN..HEADER_LEN + len],
        }
    }

    /// Reads the next record into `buf` (replacing its contents); `false` at the end.
    pub fn read_record_into(&mut self, buf: &mut Vec<u8>) -> Result<bool, RecordError> {
        match self.next_record()? {
            Some(data) => {
                buf.clear();
                buf.extend_from_slice(data);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// An iterator of owned records (one allocation per record). For the fastest loop, call
    /// [`RecordReader::next_record`] directly.
    pub fn records(self) -> Records<R> {
        Records { reader: self }
    }

    /// Counters of what has been read and skipped so far.
    pub fn stats(&self) -> ReadStats {
        self.stats
    }

    /// Problems skipped under [`OnCorruption::Resync`] or [`OnCorruption::SkipFile`], oldest
    /// first (the first 1024 are kept; [`ReadStats`] counts them all).
    pub fn problems(&self) -> &[RecordError] {
        &self.problems
    }

    /// Takes the kept problems, leaving none.
    pub fn take_problems(&mut self) -> Vec<RecordError> {
        std::mem::take(&mut self.problems)
    }

    /// The stream offset at which the most recently returned record starts.
    pub fn last_record_offset(&self) -> u64 {
        self.last_offset
    }

    /// The stream offset of the next unread byte.
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// The file this reader reads, if it was opened on one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The compression of the input.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Gives back the underlying reader (buffered bytes are lost).
    pub fn into_inner(self) -> R {
        self.src
    }

    /// Reads the next record and says where its bytes are, without borrowing them.
    pub(crate) fn next_span(&mut self) -> Result<Option<Span>, RecordError> {
        while !self.ended {
            let at = self.offset;
            let found = match self.read_one() {
                Ok(Some(span)) => Some(span),
                Ok(None) => {
                    self.ended = true;
                    self.end_of_data(at)?;
                    None
                }
                Err(kind) => self.recover(kind, at)?,
            };
            if let Some(span) = found {
                self.last_offset = self.offset - (FRAMING_LEN + span.len()) as u64;
                self.next_index += 1;
                self.stats.records += 1;
                self.stats.data_bytes += span.len() as u64;
                return Ok(Some(span));
            }
        }
        Ok(None)
    }

    /// The data ran out (at a record boundary, or under resynchronisation anywhere): clean if
    /// the source ended cleanly, else its error, named at `at` (the record it cut into, or
    /// where the data ran out), is reported as the policy says.
    #[cold]
    #[inline(never)]
    fn end_of_data(&mut self, at: u64) -> Result<(), RecordError> {
        let Some(kind) = self.src_error.take() else {
            return Ok(());
        };
        let error = self.error_at(kind, at);
        match (&error.kind, self.options.on_corruption) {
            (RecordErrorKind::Io(_), _) | (_, OnCorruption::Fail) => Err(error),
            _ => {
                self.stats.skipped_files += 1;
                self.keep_problem(error);
                Ok(())
            }
        }
    }

    /// Applies the corruption policy to a damaged record at `at` (nothing of it consumed):
    /// `Err` to give it to the caller; `Ok(Some)` with the next intact record found by
    /// resynchronising; `Ok(None)` when the reader has ended.
    #[cold]
    #[inline(never)]
    fn recover(&mut self, kind: RecordErrorKind, at: u64) -> Result<Option<Span>, RecordError> {
        // A record cut short by a damaged source was not torn: the source's error is the news.
        let cut_short = self.src_error.is_some()
            && matches!(
                kind,
                RecordErrorKind::Truncated { .. } | RecordErrorKind::PartialHeader { .. }
            );
        if let (RecordErrorKind::PartialHeader { available }, false) = (&kind, cut_short) {
            if self.options.torn_tail == TornTail::Skip {
                self.stats.torn_tail_bytes += *available as u64;
                self.consume(*available);
                self.ended = true;
                return Ok(None);
            }
        }
        let fatal = matches!(kind, RecordErrorKind::Io(_) | RecordErrorKind::Open(_));
        match self.options.on_corruption {
            OnCorruption::Resync if !fatal => {
                // The source's error, if that is what cut the record short, is kept where the
                // scan runs out of bytes.
                if !cut_short {
                    let error = self.error_at(kind, at);
                    self.keep_problem(error);
                }
                self.resync(at, cut_short)
            }
            OnCorruption::SkipFile if !fatal => {
                self.ended = true;
                if cut_short {
                    self.end_of_data(at)?;
                } else {
                    let error = self.error_at(kind, at);
                    self.stats.skipped_files += 1;
                    self.keep_problem(error);
                }
                Ok(None)
            }
            _ => {
                self.ended = true;
                let kind = match (cut_short, self.src_error.take()) {
                    (true, Some(source)) => source,
                    _ => kind,
                };
                Err(self.error_at(kind, at))
            }
        }
    }

    /// Scans from the byte after `at` (where `window[pos]` still is) for the next intact record:
    /// a plausible header at each offset, then the whole record with both CRCs. Returns it, or
    /// `None` when the data ends first (the reader has then ended). `cut_short`: the region
    /// began with a record cut short by the source's error, which is then named at `at`.
    #[cold]
    #[inline(never)]
    fn resync(&mut self, at: u64, cut_short: bool) -> Result<Option<Span>, RecordError> {
        debug_assert_eq!(self.offset, at);
        self.stats.skipped_regions += 1;
        if self.fill_to(1) > 0 {
            self.consume(1);
        }
        loop {
            // Find a plausible header.
            loop {
                let available = self.fill_to(HEADER_LEN);
                if available < HEADER_LEN {
                    self.stats.skipped_bytes += self.offset - at + available as u64;
                    self.consume(available);
                    self.ended = true;
                    self.end_of_data(if cut_short { at } else { self.offset })?;
                    return Ok(None);
                }
                let rest = self.stream_len.map(|len| len.saturating_sub(self.offset));
                match scan::find_header(&self.window[self.pos..self.end], self.options.max_record_len, rest) {
                    Some(i) => {
                        self.consume(i);
                        break;
                    }
                    // Keep the last 11 bytes: a header may start in them.
                    None => self.consume(available - (HEADER_LEN - 1)),
                }
            }
            let candidate = self.offset;
            match self.read_one() {
                Ok(Some(span)) => {
                    self.stats.skipped_bytes += candidate - at;
                    return Ok(Some(span));
                }
                Err(RecordErrorKind::Io(e)) => {
                    self.ended = true;
                    return Err(self.error_at(RecordErrorKind::Io(e), candidate));
                }
                // Not a record after all (or the data ended inside it): on to the next byte.
                Ok(None) | Err(_) => {
                    if self.fill_to(1) > 0 {
                        self.consume(1);
                    }
                }
            }
        }
    }

    fn keep_problem(&mut self, error: RecordError) {
        if self.problems.len() < MAX_KEPT_PROBLEMS {
            self.problems.push(error);
        }
    }

    fn error_at(&self, kind: RecordErrorKind, offset: u64) -> RecordError {
        RecordError {
            kind,
            location: Location {
                path: self.path.clone(),
                offset,
                record_index: self.next_index,
                decompressed: self.compression != Compression::None,
            },
        }
    }

    fn header_at_pos(&self) -> Header {
        let mut bytes = [0u8; HEADER_LEN];
        bytes.copy_from_slice(&self.window[self.pos..self.pos + HEADER_LEN]);
        Header::decode(&bytes)
    }

    /// Rejects a length that is over the limit, or that cannot fit in what is left of a stream
    /// of known size. Either way nothing is allocated for it.
    fn check_length(&self, len: u64) -> Result<(), RecordErrorKind> {
        if len > self.options.max_record_len {
            return Err(RecordErrorKind::LengthOverLimit {
                len,
                limit: self.options.max_record_len,
            });
        }
        if let Some(stream_len) = self.stream_len {
            let remaining = stream_len.saturating_sub(self.offset + HEADER_LEN as u64);
            if len.saturating_add(FOOTER_LEN as u64) > remaining {
                return Err(RecordErrorKind::LengthExceedsFile { len, remaining });
            }
        }
        Ok(())
    }

    /// Reads one record at `window[pos]`. On success the record is consumed. On any problem
    /// nothing is consumed: the stream is as it was, so a resynchronising scan can start at
    /// the next byte (a large record's bytes are put back for it).
    fn read_one(&mut self) -> Result<Option<Span>, RecordErrorKind> {
        let available = self.fill_to(HEADER_LEN);
        if available == 0 {
            return Ok(None);
        }
        if available < HEADER_LEN {
            return Err(RecordErrorKind::PartialHeader { available });
        }
        let header = self.header_at_pos();
        if !header.is_valid() {
            return Err(RecordErrorKind::LengthCrcMismatch {
                stored: header.stored_crc,
                computed: header.actual_crc,
            });
        }
        self.check_length(header.len)?;
        // check_length bounded len by max_record_len, which a usize holds on 64-bit targets;
        // on 32-bit ones a longer record is refused rather than truncated.
        let framed = usize::try_from(header.len)
            .ok()
            .and_then(|len| len.checked_add(FRAMING_LEN))
            .ok_or(RecordErrorKind::LengthOverLimit {
                len: header.len,
                limit: (usize::MAX - FRAMING_LEN) as u64,
            })?;
        let len = framed - FRAMING_LEN;
        let data_offset = self.offset + HEADER_LEN as u64;
        if framed > self.window.len() {
            return self.read_large(len, data_offset);
        }
        let available = self.fill_to(framed);
        if available < framed {
            return Err(RecordErrorKind::Truncated {
                len: header.len,
                available: (available - HEADER_LEN) as u64,
            });
        }
        let start = self.pos + HEADER_LEN;
        let stored = decode_footer(&self.footer_at(start + len));
        if self.options.verify_data_crc {
            let computed = masked_crc32c(&self.window[start..start + len]);
            if computed != stored {
                return Err(RecordErrorKind::DataCrcMismatch {
                    stored,
                    computed,
                    data_offset,
                });
            }
        }
        self.consume(framed);
        Ok(Some(Span::Window { start, len }))
    }

    fn footer_at(&self, at: usize) -> [u8; FOOTER_LEN] {
        let mut footer = [0u8; FOOTER_LEN];
        footer.copy_from_slice(&self.window[at..at + FOOTER_LEN]);
        footer
    }

    /// Reads a record that does not fit in the window into `large`, which grows only as bytes
    /// arrive (doubling from [`LARGE_RECORD_FIRST_CHUNK`], exactly to the record's size at the
    /// end), so a lying length costs at most twice the bytes that really follow it, and a true
    /// one exactly one buffer of its size.
    #[cold]
    #[inline(never)]
    fn read_large(&mut self, len: usize, data_offset: u64) -> Result<Option<Span>, RecordErrorKind> {
        let framed = len + FRAMING_LEN;
        // The window holds less than a whole record: take all of it, then read from the source.
        let from_window = self.end - self.pos;
        self.grow_large(from_window.max(LARGE_RECORD_FIRST_CHUNK).min(framed))?;
        self.large[..from_window].copy_from_slice(&self.window[self.pos..self.end]);
        self.consume(from_window);
        self.pos = 0;
        self.end = 0;
        let mut filled = from_window;
        while filled < framed {
            let target = framed.min(filled.saturating_mul(2).max(LARGE_RECORD_FIRST_CHUNK));
            self.grow_large(target)?;
            while filled < target {
                let n = self.read_source_into_large(filled, target);
                if n == 0 {
                    return Err(self.put_back_large(
                        filled,
                        RecordErrorKind::Truncated {
                            len: len as u64,
                            available: filled.saturating_sub(HEADER_LEN) as u64,
                        },
                    ));
                }
                filled += n;
                self.offset += n as u64;
            }
        }
        let mut footer = [0u8; FOOTER_LEN];
        footer.copy_from_slice(&self.large[HEADER_LEN + len..framed]);
        let stored = decode_footer(&footer);
        if self.options.verify_data_crc {
            let computed = masked_crc32c(&self.large[HEADER_LEN..HEADER_LEN + len]);
            if computed != stored {
                return Err(self.put_back_large(
                    filled,
                    RecordErrorKind::DataCrcMismatch {
                        stored,
                        computed,
                        data_offset,
                    },
                ));
            }
        }
        Ok(Some(Span::Large { len }))
    }

    /// A large candidate failed. Under resynchronisation its bytes must be scanned again, so
    /// the buffer holding them is moved in front of the source and the reader steps back to
    /// its header; otherwise the reader ends and they are dropped.
    #[cold]
    #[inline(never)]
    fn put_back_large(&mut self, filled: usize, kind: RecordErrorKind) -> RecordErrorKind {
        self.offset -= filled as u64;
        let mut bytes = std::mem::take(&mut self.large);
        if self.options.on_corruption == OnCorruption::Resync {
            bytes.truncate(filled);
            self.replay.push(Replay { bytes, pos: 0 });
        }
        kind
    }

    /// Makes `large` at least `len` bytes long, reserving exactly that (a `Vec` left to itself
    /// would double its capacity past the record's size). A failed allocation is an error,
    /// not an abort.
    fn grow_large(&mut self, len: usize) -> Result<(), RecordErrorKind> {
        if self.large.len() < len {
            let more = len - self.large.len();
            self.large.try_reserve_exact(more).map_err(|e| {
                RecordErrorKind::Io(io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!("cannot allocate {len} bytes for a record: {e}"),
                ))
            })?;
            self.large.resize(len, 0);
        }
        Ok(())
    }

    /// Reads bytes for `large[from..to]` from the replay or the source; 0 when they end.
    fn read_source_into_large(&mut self, from: usize, to: usize) -> usize {
        if let Some(replay) = self.replay.last_mut() {
            let n = (replay.bytes.len() - replay.pos).min(to - from);
            self.large[from..from + n].copy_from_slice(&replay.bytes[replay.pos..replay.pos + n]);
            replay.pos += n;
            if replay.pos == replay.bytes.len() {
                self.replay.pop();
            }
            return n;
        }
        read_source(
            &mut self.src,
            &mut self.large[from..to],
            &mut self.src_eof,
            &mut self.src_error,
        )
    }

    fn consume(&mut self, n: usize) {
        debug_assert!(self.pos + n <= self.end);
        self.pos += n;
        self.offset += n as u64;
    }

    /// Makes at least `n` (≤ window size) bytes available at `window[pos..]` unless the input
    /// ends first; returns how many are available.
    fn fill_to(&mut self, n: usize) -> usize {
        debug_assert!(n <= self.window.len());
        if self.end - self.pos >= n {
            return self.end - self.pos;
        }
        if self.window.len() - self.pos < n {
            self.window.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end - self.pos < n {
            let read = if let Some(replay) = self.replay.last_mut() {
                let k = (replay.bytes.len() - replay.pos).min(self.window.len() - self.end);
                self.window[self.end..self.end + k].copy_from_slice(&replay.bytes[replay.pos..replay.pos + k]);
                replay.pos += k;
                if replay.pos == replay.bytes.len() {
                    self.replay.pop();
                }
                k
            } else {
                read_source(
                    &mut self.src,
                    &mut self.window[self.end..],
                    &mut self.src_eof,
                    &mut self.src_error,
                )
            };
            if read == 0 && self.replay.is_empty() && self.src_eof {
                break;
            }
            self.end += read;
        }
        self.end - self.pos
    }
}

/// One `read` call, retried on `Interrupted`; 0 at the end of the source. An error ends the
/// source and is kept in `error`: a decoder's report of damage as
/// [`RecordErrorKind::Decompress`], anything else as [`RecordErrorKind::Io`].
fn read_source<R: Read>(src: &mut R, buf: &mut [u8], eof: &mut bool, error: &mut Option<RecordErrorKind>) -> usize {
    if *eof {
        return 0;
    }
    loop {
        match src.read(buf) {
            Ok(0) => {
                *eof = true;
                return 0;
            }
            Ok(n) => return n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let damage = e.get_ref().is_some_and(|inner| inner.is::<StreamDamage>());
                *error = Some(if damage {
                    RecordErrorKind::Decompress(e)
                } else {
                    RecordErrorKind::Io(e)
                });
                *eof = true;
                return 0;
            }
        }
    }
}

/// A reader over a file, whatever its compression.
pub type FileRecordReader = RecordReader<Box<dyn Read + Send>>;

impl<'a> RecordReader<Box<dyn Read + Send + 'a>> {
    /// A reader over any stream, decompressing as `options.compression` says (with
    /// [`CompressionChoice::Auto`], detected from the first bytes and checked by decompressing
    /// them, see [`Compression::detect`]).
    pub fn from_stream<S: Read + Send + 'a>(src: S, options: ReaderOptions) -> io::Result<Self> {
        match options.compression {
            CompressionChoice::Exactly(c) => Ok(Self::decompressing(src, c, options)),
            CompressionChoice::Auto => {
                let src = peek_prefix(src, DETECT_PREFIX)?;
                let compression = Compression::detect(src.get_ref().0.get_ref());
                Ok(Self::decompressing(src, compression, options))
            }
        }
    }

    fn decompressing<S: Read + Send + 'a>(src: S, compression: Compression, options: ReaderOptions) -> Self {
        RecordReader::with_options(decoder(src, compression), compression, options)
    }
}

impl RecordReader<Box<dyn Read + Send>> {
    /// Opens a file. With [`CompressionChoice::Auto`] a known extension decides
    /// ([`Compression::from_extension`]: `.tfrecord` is plain, `.gz` GZIP…); only a file with
    /// another name is detected from its first bytes ([`Compression::detect`]). For a plain
    /// file the size is taken now, so a length that runs past the end is reported before
    /// anything is read for it.
    pub fn open(path: impl AsRef<Path>, options: ReaderOptions) -> Result<Self, RecordError> {
        Self::open_with(path.as_ref(), options, |file| Box::new(file))
    }

    /// [`RecordReader::open`], with the file wrapped by `wrap` before decompression.
    pub(crate) fn open_with(
        path: &Path,
        options: ReaderOptions,
        wrap: impl FnOnce(File) -> Box<dyn Read + Send>,
    ) -> Result<Self, RecordError> {
        let io_err = |e| RecordError::open_failed(e, Some(path.to_path_buf()));
        let mut file = File::open(path).map_err(io_err)?;
        let compression = match options.compression {
            CompressionChoice::Exactly(c) => c,
            CompressionChoice::Auto => match Compression::from_extension(path) {
                Some(c) => c,
                None => {
                    let mut prefix = Vec::with_capacity(DETECT_PREFIX);
                    (&mut file)
                        .take(DETECT_PREFIX as u64)
                        .read_to_end(&mut prefix)
                        .map_err(io_err)?;
                    file.seek(SeekFrom::Start(0)).map_err(io_err)?;
                    Compression::detect(&prefix)
                }
            },
        };
        let stream_len = match compression {
            Compression::None => Some(file.metadata().map_err(io_err)?.len()),
            _ => None,
        };
        let mut reader = RecordReader::decompressing(wrap(file), compression, options).with_path(path);
        reader.stream_len = stream_len;
        Ok(reader)
    }
}

impl<R: Read + Seek> RecordReader<R> {
    /// A reader of a plain, seekable stream whose length is known, so that lengths running past
    /// the end are caught before reading; required for [`RecordReader::seek_to`] to re-check
    /// that bound.
    pub fn new_seekable(mut src: R, options: ReaderOptions) -> io::Result<Self> {
        let len = src.seek(SeekFrom::End(0))?;
        src.seek(SeekFrom::Start(0))?;
        let mut reader = RecordReader::with_options(src, Compression::None, options);
        reader.stream_len = Some(len);
        Ok(reader)
    }

    /// Moves to the record that starts at `offset` (from an index); the next
    /// [`RecordReader::next_record`] reads it. `record_index` is the index errors will name.
    pub fn seek_to(&mut self, offset: u64, record_index: u64) -> Result<(), RecordError> {
        self.src
            .seek(SeekFrom::Start(offset))
            .map_err(|e| self.error_at(RecordErrorKind::Io(e), offset))?;
        self.pos = 0;
        self.end = 0;
        self.replay.clear();
        self.offset = offset;
        self.src_eof = false;
        self.src_error = None;
        self.ended = false;
        self.next_index = record_index;
        Ok(())
    }
}

/// Owned records from a [`RecordReader`], see [`RecordReader::records`].
pub struct Records<R> {
    reader: RecordReader<R>,
}

impl<R> Records<R> {
    /// The reader behind the iterator, for its stats and problems.
    pub fn reader(&self) -> &RecordReader<R> {
        &self.reader
    }
}

impl<R: Read> Iterator for Records<R> {
    type Item = Result<Vec<u8>, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader.next_record().map(|r| r.map(<[u8]>::to_vec)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordWriter;

    fn framed(records: &[&[u8]]) -> Vec<u8> {
        let mut w = RecordWriter::new(Vec::new());
        for r in records {
            w.write_record(r).unwrap();
        }
        w.finish().unwrap()
    }

    fn read_all<R: Read>(reader: &mut RecordReader<R>) -> Result<Vec<Vec<u8>>, RecordError> {
        let mut out = Vec::new();
        while let Some(r) = reader.next_record()? {
            out.push(r.to_vec());
        }
        Ok(out)
    }

    /// Hands out its bytes a few at a time, as a pipe or a growing file would.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn partial_reads_give_the_same_records() {
        let data = framed(&[b"a", b"", b"hello world", &[7u8; 3000]]);
        for step in [1, 2, 5, 13, 4096] {
            let mut reader = RecordReader::new(Trickle { data: &data, step });
            let got = read_all(&mut reader).unwrap();
            assert_eq!(got.len(), 4, "step {step}");
            assert_eq!(got[3], vec![7u8; 3000]);
        }
    }

    #[test]
    fn records_larger_than_the_window_use_the_large_buffer() {
        let big = vec![0xabu8; 300_000];
        let data = framed(&[b"x", &big, b"y", &big[..70_000]]);
        let options = ReaderOptions::default().buffer_size(64 << 10);
        let mut reader = RecordReader::with_options(
            Trickle {
                data: &data,
                step: 10_000,
            },
            Compression::None,
            options,
        );
        let got = read_all(&mut reader).unwrap();
        assert_eq!(
            got,
            vec![b"x".to_vec(), big.clone(), b"y".to_vec(), big[..70_000].to_vec()]
        );
        assert_eq!(reader.stats().records, 4);
    }

    #[test]
    fn data_crc_error_names_the_data_offset() {
        let mut data = framed(&[b"first", b"second"]);
        let second = HEADER_LEN + 5 + FOOTER_LEN;
        data[second + HEADER_LEN + 1] ^= 0x40;
        let mut reader = RecordReader::new(data.as_slice());
        assert_eq!(reader.next_record().unwrap(), Some(&b"first"[..]));
        let err = reader.next_record().unwrap_err();
        assert!(matches!(err.kind, RecordErrorKind::DataCrcMismatch { .. }), "{err}");
        assert_eq!(err.location.offset, second as u64);
        assert_eq!(err.tf_offset(), (second + HEADER_LEN) as u64);
        assert_eq!(err.location.record_index, 1);
        assert!(
            reader.next_record().unwrap().is_none(),
            "the reader ends after an error"
        );
    }

    #[test]
    fn unverified_reads_skip_the_data_crc() {
        let mut data = framed(&[b"first"]);
        data[HEADER_LEN] = b'F';
        let options = ReaderOptions::default().verify_data_crc(false);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
        assert_eq!(read_all(&mut reader).unwrap(), vec![b"First".to_vec()]);
    }

    #[test]
    fn resync_skips_a_bad_length_and_finds_the_next_record() {
        let records: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 40 + i as usize]).collect();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let mut data = framed(&refs);
        let second = HEADER_LEN + 40 + FOOTER_LEN;
        data[second + 2] ^= 1; // the length of record 1
        let options = ReaderOptions::default().on_corruption(OnCorruption::Resync);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
        let got = read_all(&mut reader).unwrap();
        assert_eq!(
            got,
            vec![
                records[0].clone(),
                records[2].clone(),
                records[3].clone(),
                records[4].clone()
            ]
        );
        let stats = reader.stats();
        assert_eq!(stats.skipped_regions, 1);
        assert_eq!(stats.skipped_bytes, (HEADER_LEN + 41 + FOOTER_LEN) as u64);
        assert_eq!(reader.problems().len(), 1);
        assert_eq!(reader.problems()[0].kind_name(), "length_crc_mismatch");
    }

    #[test]
    fn resync_after_a_bad_data_crc_loses_only_that_record() {
        let mut data = framed(&[b"aaaa", b"bbbb", b"cccc"]);
        data[HEADER_LEN + 8 + FOOTER_LEN + HEADER_LEN] ^= 1;
        let options = ReaderOptions::default().on_corruption(OnCorruption::Resync);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
        assert_eq!(read_all(&mut reader).unwrap(), vec![b"aaaa".to_vec(), b"cccc".to_vec()]);
        assert_eq!(reader.stats().skipped_regions, 1);
    }

    #[test]
    fn skip_file_abandons_the_rest() {
        let mut data = framed(&[b"aaaa", b"bbbb", b"cccc"]);
        data[HEADER_LEN + 8 + FOOTER_LEN] ^= 1;
        let options = ReaderOptions::default().on_corruption(OnCorruption::SkipFile);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
        assert_eq!(read_all(&mut reader).unwrap(), vec![b"aaaa".to_vec()]);
        assert_eq!(reader.stats().skipped_files, 1);
    }

    #[test]
    fn torn_tail_is_an_error_unless_tolerated() {
        let mut data = framed(&[b"aaaa"]);
        data.extend_from_slice(&[1, 2, 3]);
        let mut reader = RecordReader::new(data.as_slice());
        assert_eq!(reader.next_record().unwrap(), Some(&b"aaaa"[..]));
        let err = reader.next_record().unwrap_err();
        assert!(matches!(err.kind, RecordErrorKind::PartialHeader { available: 3 }));

        let options = ReaderOptions::default().torn_tail(TornTail::Skip);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
        assert_eq!(read_all(&mut reader).unwrap(), vec![b"aaaa".to_vec()]);
        assert_eq!(reader.stats().torn_tail_bytes, 3);
    }

    #[test]
    fn a_huge_length_on_a_stream_allocates_only_what_follows() {
        let mut data = crate::record::format::encode_header(1 << 40).to_vec();
        data.extend_from_slice(&[0u8; 5000]);
        let options = ReaderOptions::default().max_record_len(u64::MAX);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
        let err = reader.next_record().unwrap_err();
        assert!(
            matches!(err.kind, RecordErrorKind::Truncated { available: 5000, .. }),
            "{err}"
        );
        assert!(reader.large.len() <= LARGE_RECORD_FIRST_CHUNK);

        let mut reader = RecordReader::new(data.as_slice());
        let err = reader.next_record().unwrap_err();
        assert!(matches!(err.kind, RecordErrorKind::LengthOverLimit { .. }), "{err}");
    }

    #[test]
    fn resync_rescans_a_truncated_large_record() {
        // A damaged length that passes its CRC by construction: a header claiming 10 MB, then
        // two real records. Resync must find them inside the bytes the large read consumed.
        let mut data = crate::record::format::encode_header(10 << 20).to_vec();
        data.extend_from_slice(&framed(&[&[5u8; 200_000], b"tail"]));
        let options = ReaderOptions::default()
            .on_corruption(OnCorruption::Resync)
            .buffer_size(64 << 10);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
        let got = read_all(&mut reader).unwrap();
        assert_eq!(got, vec![vec![5u8; 200_000], b"tail".to_vec()]);
        assert_eq!(reader.stats().skipped_bytes, HEADER_LEN as u64);
    }

    #[test]
    fn seek_reads_a_record_in_the_middle() {
        let data = framed(&[b"zero", b"one", b"two"]);
        let mut reader = RecordReader::new_seekable(io::Cursor::new(data), ReaderOptions::default()).unwrap();
        reader.seek_to((HEADER_LEN + 4 + FOOTER_LEN) as u64, 1).unwrap();
        assert_eq!(reader.next_record().unwrap(), Some(&b"one"[..]));
    }

    fn resync() -> ReaderOptions {
        ReaderOptions::default().on_corruption(OnCorruption::Resync)
    }

    fn numbered(n: usize, len: usize) -> Vec<Vec<u8>> {
        (0..n).map(|i| vec![i as u8; len + i]).collect()
    }

    fn framed_owned(records: &[Vec<u8>]) -> Vec<u8> {
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        framed(&refs)
    }

    #[test]
    fn resync_after_a_deleted_byte_rescans_instead_of_trusting_the_length() {
        // Deleting a byte of record 1's data leaves its valid length pointing one byte into
        // record 2; jumping by that length would lose record 2.
        let records = numbered(5, 30);
        let mut data = framed_owned(&records);
        data.remove(HEADER_LEN + 30 + FOOTER_LEN + HEADER_LEN + 3);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, resync());
        let got = read_all(&mut reader).unwrap();
        let expected: Vec<Vec<u8>> = [0, 2, 3, 4].iter().map(|&i| records[i].clone()).collect();
        assert_eq!(got, expected);
        assert_eq!(reader.problems().len(), 1);
        assert_eq!(reader.problems()[0].kind_name(), "data_crc_mismatch");
        assert_eq!(reader.stats().skipped_regions, 1);
    }

    #[test]
    fn resync_after_a_torn_write_and_an_append_keeps_the_appended_records() {
        // A writer died half-way through record 1, then later records were appended.
        let records = numbered(4, 50);
        let whole = framed_owned(&records[..2]);
        let mut data = whole[..whole.len() - 20].to_vec();
        data.extend_from_slice(&framed_owned(&records[2..]));
        for stream_len_known in [false, true] {
            let mut reader = if stream_len_known {
                let mut r = RecordReader::with_options(data.as_slice(), Compression::None, resync());
                r.stream_len = Some(data.len() as u64);
                r
            } else {
                RecordReader::with_options(data.as_slice(), Compression::None, resync())
            };
            let got = read_all(&mut reader).unwrap();
            assert_eq!(got, vec![records[0].clone(), records[2].clone(), records[3].clone()]);
        }
    }

    #[test]
    fn a_truncated_large_record_under_resync_gives_back_what_followed_its_header() {
        // A torn large record followed by an appended one: its bytes are scanned again.
        let big = vec![3u8; 100_000];
        let torn = framed(&[&big]);
        let mut data = torn[..50_000].to_vec();
        data.extend_from_slice(&framed(&[b"after", &big]));
        let options = resync().buffer_size(64 << 10);
        let mut reader = RecordReader::with_options(
            Trickle {
                data: &data,
                step: 7000,
            },
            Compression::None,
            options,
        );
        assert_eq!(read_all(&mut reader).unwrap(), vec![b"after".to_vec(), big.clone()]);
    }

    #[test]
    fn a_torn_tail_under_resync_is_skipped_and_reported() {
        let mut data = framed(&[b"aaaa"]);
        data.extend_from_slice(&[1, 2, 3]);
        let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, resync());
        assert_eq!(read_all(&mut reader).unwrap(), vec![b"aaaa".to_vec()]);
        assert_eq!(reader.problems().len(), 1);
        assert_eq!(reader.problems()[0].kind_name(), "partial_header");
        assert_eq!(reader.stats().skipped_bytes, 3);
    }

    #[test]
    fn a_length_past_the_end_of_a_file_is_length_exceeds_file_and_recoverable() {
        let mut data = crate::record::format::encode_header(1000).to_vec();
        data.extend_from_slice(&framed(&[b"inside"]));
        let mut reader = RecordReader::new_seekable(io::Cursor::new(data.clone()), ReaderOptions::default()).unwrap();
        let err = reader.next_record().unwrap_err();
        assert!(
            matches!(err.kind, RecordErrorKind::LengthExceedsFile { len: 1000, .. }),
            "{err}"
        );
        assert!(err.is_recoverable());
        let mut reader = RecordReader::new_seekable(io::Cursor::new(data), resync()).unwrap();
        assert_eq!(read_all(&mut reader).unwrap(), vec![b"inside".to_vec()]);

        let mut stream = crate::record::format::encode_header(1000).to_vec();
        stream.extend_from_slice(&[0; 10]);
        let err = RecordReader::new(stream.as_slice()).next_record().unwrap_err();
        assert!(matches!(err.kind, RecordErrorKind::Truncated { .. }), "{err}");
        assert!(err.is_recoverable(), "resync rescans a truncated record");
    }

    fn compressed(records: &[Vec<u8>], compression: Compression) -> Vec<u8> {
        use crate::record::WriterOptions;
        let mut w = RecordWriter::with_options(Vec::new(), WriterOptions::default().compression(compression));
        for r in records {
            w.write_record(r).unwrap();
        }
        w.finish().unwrap()
    }

    fn read_stream(bytes: &[u8], options: ReaderOptions) -> (Vec<Vec<u8>>, Option<RecordError>, Vec<String>) {
        let mut reader = RecordReader::from_stream(bytes, options).unwrap();
        let mut got = Vec::new();
        let error = loop {
            match reader.next_record() {
                Ok(Some(r)) => got.push(r.to_vec()),
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        let problems = reader.problems().iter().map(|p| p.kind_name().to_owned()).collect();
        (got, error, problems)
    }

    #[test]
    fn a_damaged_zlib_checksum_still_gives_every_record() {
        let records = numbered(259, 20);
        let mut bytes = compressed(&records, Compression::Zlib);
        let last = bytes.len() - 2;
        bytes[last] ^= 0x55;
        let options = ReaderOptions::default().compression(Compression::Zlib);
        let (got, error, _) = read_stream(&bytes, options.clone());
        assert_eq!(got, records);
        let error = error.expect("the checksum error");
        assert_eq!(error.kind_name(), "decompress");
        let plain_len = framed_owned(&records).len() as u64;
        assert_eq!(error.location.offset, plain_len);
        let damage = error.stream_damage().expect("offsets");
        assert_eq!(damage.decompressed_offset, plain_len);
        assert!(damage.compressed_offset > 0 && damage.compressed_offset <= bytes.len() as u64);
        assert!(error.to_string().contains("compressed byte"), "{error}");

        let (got, error, problems) = read_stream(&bytes, options.on_corruption(OnCorruption::Resync));
        assert_eq!(got, records);
        assert!(error.is_none(), "resync ends the file instead of failing");
        assert_eq!(problems, ["decompress"]);
    }

    #[test]
    fn a_cut_gzip_stream_gives_the_records_before_the_cut_in_every_mode() {
        let records = numbered(40, 200);
        let bytes = compressed(&records, Compression::Gzip);
        let cut = &bytes[..bytes.len() / 2];
        let base = ReaderOptions::default().compression(Compression::Gzip);
        let (strict, error, _) = read_stream(cut, base.clone());
        assert!(!strict.is_empty() && strict.len() < records.len());
        assert_eq!(strict[..], records[..strict.len()]);
        let error = error.expect("an error");
        assert_eq!(error.kind_name(), "decompress");
        let offset: usize = records[..strict.len()].iter().map(|r| r.len() + FRAMING_LEN).sum();
        assert_eq!(
            error.location.offset, offset as u64,
            "names the record the cut went into"
        );
        for policy in [OnCorruption::Resync, OnCorruption::SkipFile] {
            let (got, error, problems) = read_stream(cut, base.clone().on_corruption(policy));
            assert_eq!(got, strict, "{policy:?}");
            assert!(error.is_none(), "{policy:?}");
            assert_eq!(problems, ["decompress"], "{policy:?}");
            let mut reader = RecordReader::from_stream(cut, base.clone().on_corruption(policy)).unwrap();
            while reader.next_record().unwrap().is_some() {}
            assert_eq!(reader.problems()[0].location.offset, offset as u64, "{policy:?}");
            assert_eq!(reader.stats().skipped_files, 1, "{policy:?}");
        }
    }

    #[test]
    fn a_plain_file_with_a_damaged_first_header_is_never_read_as_compressed() {
        let dir = tempfile::tempdir().unwrap();
        for len in [376usize, 35_615] {
            let records = vec![vec![9u8; len], b"second".to_vec()];
            let mut data = framed_owned(&records);
            data[9] ^= 0x20; // the first header's CRC
            for name in ["data.tfrecord", "data-00000-of-00001"] {
                let path = dir.path().join(name);
                std::fs::write(&path, &data).unwrap();
                let mut reader = RecordReader::open(&path, resync()).unwrap();
                assert_eq!(reader.compression(), Compression::None, "{name} {len}");
                assert_eq!(read_all(&mut reader).unwrap(), vec![b"second".to_vec()], "{name} {len}");
            }
        }
    }
}

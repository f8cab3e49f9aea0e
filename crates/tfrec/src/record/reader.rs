//! Streaming TFRecord reader: framing, CRC checks, corruption policies and resynchronisation.
//!
//! The reader owns a window buffer over its input. A record that fits in the window is
//! checked and returned as a slice of it, so reading many small records neither allocates nor
//! copies per record; a larger record is assembled in a second, reusable buffer. Because a
//! record is only consumed once it is valid, the reader can step back to one byte after a
//! damaged header and scan for the next valid one (see [`OnCorruption::Resync`]).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::compression::{decoder, peek_prefix, Compression, CompressionChoice};
use super::error::{Location, RecordError, RecordErrorKind};
use super::format::{decode_footer, masked_crc32c, Header, FOOTER_LEN, FRAMING_LEN, HEADER_LEN};

/// What the reader does when a record is damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnCorruption {
    /// Return the error; the reader then ends. The default, as in TensorFlow.
    #[default]
    Fail,
    /// Skip the damaged record and go on. After a bad data CRC the length was valid, so the
    /// reader jumps to the next record; after a bad or implausible length it scans forward to
    /// the next offset where a length and its CRC agree, so one bad byte does not lose the rest
    /// of the file. Skips are counted in [`ReadStats`] and kept in [`RecordReader::problems`].
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
    /// `large[..len]`.
    Large { len: usize },
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
pub struct RecordReader<R> {
    src: R,
    options: ReaderOptions,
    /// Bytes read from `src`; `window[pos..end]` are not consumed yet. Its length is fixed at
    /// construction and is at least [`MIN_BUFFER_SIZE`].
    window: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Holds a record larger than the window. Its length is a high-water mark; only the prefix
    /// of the current record is meaningful.
    large: Vec<u8>,
    /// Bytes to read again before `src`, after a failed large record under resynchronisation.
    replay: Vec<u8>,
    replay_pos: usize,
    /// Stream offset of `window[pos]`: everything before it has been consumed.
    offset: u64,
    /// The total length of the stream, when known up front (a plain file).
    stream_len: Option<u64>,
    /// `src` has returned end of file.
    src_eof: bool,
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
            replay_pos: 0,
            offset: 0,
            stream_len: None,
            src_eof: false,
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
            Span::Large { len } => &self.large[..len],
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
        loop {
            if self.ended {
                return Ok(None);
            }
            let record_offset = self.offset;
            match self.read_one() {
                Ok(Some(span)) => {
                    self.last_offset = record_offset;
                    self.next_index += 1;
                    self.stats.records += 1;
                    self.stats.data_bytes += match span {
                        Span::Window { len, .. } | Span::Large { len } => len as u64,
                    };
                    return Ok(Some(span));
                }
                Ok(None) => {
                    self.ended = true;
                    return Ok(None);
                }
                Err(kind) => {
                    let error = self.error_at(kind, record_offset);
                    self.recover(error)?;
                }
            }
        }
    }

    /// Applies the corruption policy to `error`: `Err` to give it to the caller, `Ok` to go on
    /// (the reader is then positioned where reading resumes, or ended).
    fn recover(&mut self, error: RecordError) -> Result<(), RecordError> {
        if let RecordErrorKind::PartialHeader { available } = error.kind {
            if self.options.torn_tail == TornTail::Skip {
                self.stats.torn_tail_bytes += available as u64;
                self.consume(available);
                self.ended = true;
                return Ok(());
            }
        }
        let is_io = matches!(error.kind, RecordErrorKind::Io(_) | RecordErrorKind::Open(_));
        match self.options.on_corruption {
            OnCorruption::Fail => {
                self.ended = true;
                Err(error)
            }
            _ if is_io || matches!(error.kind, RecordErrorKind::PartialHeader { .. }) => {
                self.ended = true;
                Err(error)
            }
            OnCorruption::SkipFile => {
                self.stats.skipped_files += 1;
                self.keep_problem(error);
                self.ended = true;
                Ok(())
            }
            OnCorruption::Resync => {
                let record_offset = error.location.offset;
                match error.kind {
                    RecordErrorKind::DataCrcMismatch { .. } => {
                        // The length was valid: read_one already stepped past the record.
                        self.stats.skipped_regions += 1;
                        self.stats.skipped_bytes += self.offset - record_offset;
                        self.keep_problem(error);
                        Ok(())
                    }
                    RecordErrorKind::Decompress(_) => {
                        self.stats.skipped_files += 1;
                        self.keep_problem(error);
                        self.ended = true;
                        Ok(())
                    }
                    _ => {
                        self.keep_problem(error);
                        self.resync(record_offset)
                    }
                }
            }
        }
    }

    /// Scans forward from one byte after `record_offset` (where `window[pos]` still is) to the
    /// next plausible header.
    fn resync(&mut self, record_offset: u64) -> Result<(), RecordError> {
        debug_assert_eq!(self.offset, record_offset);
        self.stats.skipped_regions += 1;
        // A large record's bytes may have been put back for rescanning: refill first.
        if self.fill_to(1).map_err(|kind| self.error_at(kind, self.offset))? > 0 {
            self.consume(1);
        }
        loop {
            let available = self
                .fill_to(HEADER_LEN)
                .map_err(|kind| self.error_at(kind, self.offset))?;
            if available < HEADER_LEN {
                // Nothing valid is left: the rest was part of the damage.
                self.stats.skipped_bytes += self.offset - record_offset + available as u64;
                self.consume(available);
                self.ended = true;
                return Ok(());
            }
            let header = self.header_at_pos();
            if header.is_valid() && self.check_length(header.len).is_ok() {
                self.stats.skipped_bytes += self.offset - record_offset;
                return Ok(());
            }
            self.consume(1);
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
            let available = stream_len.saturating_sub(self.offset + HEADER_LEN as u64);
            if len.saturating_add(FOOTER_LEN as u64) > available {
                return Err(RecordErrorKind::Truncated { len, available });
            }
        }
        Ok(())
    }

    /// Reads one record at `window[pos]`. On success the record is consumed; on a header
    /// problem nothing is consumed; on a data CRC mismatch the record is consumed.
    fn read_one(&mut self) -> Result<Option<Span>, RecordErrorKind> {
        let available = self.fill_to(HEADER_LEN)?;
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
        let len = usize::try_from(header.len).map_err(|_| RecordErrorKind::LengthOverLimit {
            len: header.len,
            limit: usize::MAX as u64,
        })?;
        let data_offset = self.offset + HEADER_LEN as u64;
        match len.checked_add(FRAMING_LEN) {
            Some(framed) if framed <= self.window.len() => {
                let available = self.fill_to(framed)?;
                if available < framed {
                    return Err(RecordErrorKind::Truncated {
                        len: header.len,
                        available: (available - HEADER_LEN) as u64,
                    });
                }
                let start = self.pos + HEADER_LEN;
                let mut footer = [0u8; FOOTER_LEN];
                footer.copy_from_slice(&self.window[start + len..start + len + FOOTER_LEN]);
                let stored = decode_footer(&footer);
                let verify = self.options.verify_data_crc;
                let computed = if verify {
                    masked_crc32c(&self.window[start..start + len])
                } else {
                    stored
                };
                self.consume(framed);
                if computed != stored {
                    return Err(RecordErrorKind::DataCrcMismatch {
                        stored,
                        computed,
                        data_offset,
                    });
                }
                Ok(Some(Span::Window { start, len }))
            }
            _ => self.read_large(len, data_offset),
        }
    }

    /// Reads a record that does not fit in the window into `large`.
    fn read_large(&mut self, len: usize, data_offset: u64) -> Result<Option<Span>, RecordErrorKind> {
        let mut header = [0u8; HEADER_LEN];
        header.copy_from_slice(&self.window[self.pos..self.pos + HEADER_LEN]);
        self.consume(HEADER_LEN);
        let need = len + FOOTER_LEN;
        let mut filled = 0usize;
        // Take what the window already holds, then read straight from the source.
        let from_window = (self.end - self.pos).min(need);
        self.grow_large(from_window);
        self.large[..from_window].copy_from_slice(&self.window[self.pos..self.pos + from_window]);
        self.consume(from_window);
        filled += from_window;
        while filled < need {
            let target = need.min(filled.saturating_mul(2).max(LARGE_RECORD_FIRST_CHUNK));
            self.grow_large(target);
            while filled < target {
                let n = self.read_source_into_large(filled, target)?;
                if n == 0 {
                    return self.truncated_large(header, filled, len);
                }
                filled += n;
                self.offset += n as u64;
            }
        }
        let mut footer = [0u8; FOOTER_LEN];
        footer.copy_from_slice(&self.large[len..need]);
        let stored = decode_footer(&footer);
        if self.options.verify_data_crc {
            let computed = masked_crc32c(&self.large[..len]);
            if computed != stored {
                return Err(RecordErrorKind::DataCrcMismatch {
                    stored,
                    computed,
                    data_offset,
                });
            }
        }
        Ok(Some(Span::Large { len }))
    }

    /// A large record ended early. Under resynchronisation its bytes must be scanned again, so
    /// they are put back in front of the source and the reader steps back to the header.
    fn truncated_large(
        &mut self,
        header: [u8; HEADER_LEN],
        filled: usize,
        len: usize,
    ) -> Result<Option<Span>, RecordErrorKind> {
        if self.options.on_corruption == OnCorruption::Resync {
            let mut again = Vec::with_capacity(HEADER_LEN + filled + self.end - self.pos);
            again.extend_from_slice(&header);
            again.extend_from_slice(&self.large[..filled]);
            again.extend_from_slice(&self.window[self.pos..self.end]);
            again.extend_from_slice(&self.replay[self.replay_pos..]);
            self.offset -= (HEADER_LEN + filled) as u64;
            self.pos = 0;
            self.end = 0;
            self.replay = again;
            self.replay_pos = 0;
        }
        Err(RecordErrorKind::Truncated {
            len: len as u64,
            available: filled as u64,
        })
    }

    fn grow_large(&mut self, len: usize) {
        if self.large.len() < len {
            self.large.resize(len, 0);
        }
    }

    fn read_source_into_large(&mut self, from: usize, to: usize) -> Result<usize, RecordErrorKind> {
        if self.replay_pos < self.replay.len() {
            let n = (self.replay.len() - self.replay_pos).min(to - from);
            self.large[from..from + n].copy_from_slice(&self.replay[self.replay_pos..self.replay_pos + n]);
            self.replay_pos += n;
            return Ok(n);
        }
        read_retrying(
            &mut self.src,
            &mut self.large[from..to],
            self.compression,
            &mut self.src_eof,
        )
    }

    fn consume(&mut self, n: usize) {
        debug_assert!(self.pos + n <= self.end);
        self.pos += n;
        self.offset += n as u64;
    }

    /// Makes at least `n` (≤ window size) bytes available at `window[pos..]` unless the input
    /// ends first; returns how many are available.
    fn fill_to(&mut self, n: usize) -> Result<usize, RecordErrorKind> {
        debug_assert!(n <= self.window.len());
        if self.end - self.pos >= n {
            return Ok(self.end - self.pos);
        }
        if self.window.len() - self.pos < n {
            self.window.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end - self.pos < n {
            let read = if self.replay_pos < self.replay.len() {
                let k = (self.replay.len() - self.replay_pos).min(self.window.len() - self.end);
                self.window[self.end..self.end + k].copy_from_slice(&self.replay[self.replay_pos..self.replay_pos + k]);
                self.replay_pos += k;
                if self.replay_pos == self.replay.len() {
                    self.replay = Vec::new();
                    self.replay_pos = 0;
                }
                k
            } else {
                read_retrying(
                    &mut self.src,
                    &mut self.window[self.end..],
                    self.compression,
                    &mut self.src_eof,
                )?
            };
            if read == 0 {
                break;
            }
            self.end += read;
        }
        Ok(self.end - self.pos)
    }
}

/// One `read` call, retried on `Interrupted`, with errors classified: a decoder's failure is
/// damage to the compressed stream, anything else is I/O.
fn read_retrying<R: Read>(
    src: &mut R,
    buf: &mut [u8],
    compression: Compression,
    eof: &mut bool,
) -> Result<usize, RecordErrorKind> {
    if *eof {
        return Ok(0);
    }
    loop {
        match src.read(buf) {
            Ok(0) => {
                *eof = true;
                return Ok(0);
            }
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if compression != Compression::None
                    && matches!(
                        e.kind(),
                        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::UnexpectedEof
                    ) =>
            {
                return Err(RecordErrorKind::Decompress(e))
            }
            Err(e) => return Err(RecordErrorKind::Io(e)),
        }
    }
}

/// A reader over a file, whatever its compression.
pub type FileRecordReader = RecordReader<Box<dyn Read + Send>>;

impl<'a> RecordReader<Box<dyn Read + Send + 'a>> {
    /// A reader over any stream, decompressing as `options.compression` says (sniffing the
    /// first bytes when it is [`CompressionChoice::Auto`]).
    pub fn from_stream<S: Read + Send + 'a>(src: S, options: ReaderOptions) -> io::Result<Self> {
        match options.compression {
            CompressionChoice::Exactly(c) => Ok(Self::decompressing(src, c, options)),
            CompressionChoice::Auto => {
                let src = peek_prefix(src, HEADER_LEN)?;
                let compression = Compression::sniff(src.get_ref().0.get_ref());
                Ok(Self::decompressing(src, compression, options))
            }
        }
    }

    fn decompressing<S: Read + Send + 'a>(src: S, compression: Compression, options: ReaderOptions) -> Self {
        RecordReader::with_options(decoder(src, compression), compression, options)
    }
}

impl RecordReader<Box<dyn Read + Send>> {
    /// Opens a file. With [`CompressionChoice::Auto`] the extension decides, else the first
    /// bytes. For a plain file the size is taken now, so a length that runs past the end is
    /// reported before anything is read for it.
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
                    let mut prefix = Vec::with_capacity(HEADER_LEN);
                    (&mut file)
                        .take(HEADER_LEN as u64)
                        .read_to_end(&mut prefix)
                        .map_err(io_err)?;
                    file.seek(SeekFrom::Start(0)).map_err(io_err)?;
                    Compression::sniff(&prefix)
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
        self.replay = Vec::new();
        self.replay_pos = 0;
        self.offset = offset;
        self.src_eof = false;
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
}

//! Streaming TFRecord reader: framing, CRC checks, corruption policies and resynchronisation.
//!
//! The reader owns a window buffer over its input. A record that fits in the window is
//! checked and returned as a slice of it, so reading many small records neither allocates nor
//! copies per record; a larger record is assembled in a second, reusable buffer. Because a
//! record is only consumed once both its CRCs hold, the reader can step back to one byte after
//! any damaged record and scan for the next intact one (see [`OnCorruption::Resync`]); the
//! scan itself is in `scan.rs`, decompression that keeps what decoded before damage in
//! `inflate.rs`.
//!
//! The reader is split by job: `options` holds the settings and counters, `framing`
//! the hot path (the window, headers, CRCs), `large` records bigger than the window, `resync`
//! the corruption policies, `open` choosing the compression, opening files and seeking.

mod framing;
mod large;
mod open;
mod options;
mod resync;
#[cfg(test)]
mod tests;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::compression::Compression;
use super::error::{RecordError, RecordErrorKind};

pub(crate) use open::file_compression;
pub use open::FileRecordReader;
use options::MIN_BUFFER_SIZE;
pub use options::{OnCorruption, ReadStats, ReaderOptions, TornTail, DEFAULT_MAX_RECORD_LEN};

/// Where the last valid record's data lies.
#[derive(Clone, Copy)]
pub(crate) enum Span {
    /// `window[start..start + len]`.
    Window { start: usize, len: usize },
    /// `large[HEADER_LEN..HEADER_LEN + len]`.
    Large { len: usize },
}

impl Span {
    pub(super) fn len(self) -> usize {
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
/// # Ok::<(), tfrec::Error>(())
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
/// # Ok::<(), tfrec::Error>(())
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
    /// Records are returned without checking their data CRC, which is left to the caller (see
    /// [`RecordReader::defer_data_crc`]).
    defer_data_crc: bool,
    /// The stored data CRC of the record most recently returned, when its check is deferred.
    deferred_crc: u32,
}

impl<R: Read> RecordReader<R> {
    /// A reader of plain (uncompressed) records with default options.
    pub fn new(src: R) -> Self {
        Self::with_options(src, Compression::None, ReaderOptions::default())
    }

    /// A reader of already-decompressed records. `compression` is only recorded for error
    /// messages; use [`RecordReader::from_stream`] to decompress.
    pub(super) fn with_options(src: R, compression: Compression, options: ReaderOptions) -> Self {
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
            defer_data_crc: false,
            deferred_crc: 0,
        }
    }

    /// Sets the path named in errors (for a stream that came from a file).
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(Arc::from(path.into()));
        self
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
    pub fn records(self) -> OwnedRecords<R> {
        OwnedRecords { reader: self }
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

    /// Returns records without checking their data CRC: the caller checks each against
    /// [`RecordReader::deferred_crc`] and, on a mismatch, reports the error this reader would
    /// have ([`check_deferred_crc`]). A pipeline does so to move the
    /// check off the reading it serialises and onto its workers.
    ///
    /// Takes effect only where a mismatch would end the reader with that error and nothing
    /// else: data CRCs checked, [`OnCorruption::Fail`], [`TornTail::Error`] (a torn tail's
    /// scan judges records by their CRCs). Returns whether it did.
    #[cfg(feature = "pipeline")]
    pub(crate) fn defer_data_crc(&mut self) -> bool {
        self.defer_data_crc = self.options.verify_data_crc
            && self.options.on_corruption == OnCorruption::Fail
            && self.options.torn_tail == TornTail::Error;
        self.defer_data_crc
    }

    /// The data CRC stored for the record most recently returned, when its check was left to
    /// the caller.
    #[cfg(feature = "pipeline")]
    pub(crate) fn deferred_crc(&self) -> Option<u32> {
        self.defer_data_crc.then_some(self.deferred_crc)
    }

    /// Gives back the underlying reader (buffered bytes are lost).
    pub fn into_inner(self) -> R {
        self.src
    }
}

/// Checks the data of a record whose CRC check a reader left to its caller
/// ([`RecordReader::defer_data_crc`]) against the CRC `stored` in its footer. A mismatch is the
/// error the reader would have returned: the same kind, at `location` (the record's header,
/// as the reader names it), made only then.
#[cfg(feature = "pipeline")]
pub(crate) fn check_deferred_crc(
    data: &[u8],
    stored: u32,
    location: impl FnOnce() -> super::error::Location,
) -> Result<(), RecordError> {
    use super::format::{masked_crc32c, HEADER_LEN};
    let computed = masked_crc32c(data);
    if computed == stored {
        return Ok(());
    }
    let location = location();
    Err(RecordError {
        kind: RecordErrorKind::DataCrcMismatch {
            stored,
            computed,
            data_offset: location.offset + HEADER_LEN as u64,
        },
        location,
    })
}

/// Owned records from a [`RecordReader`], see [`RecordReader::records`].
pub struct OwnedRecords<R> {
    reader: RecordReader<R>,
}

impl<R> OwnedRecords<R> {
    /// The reader behind the iterator, for its stats and problems.
    pub fn reader(&self) -> &RecordReader<R> {
        &self.reader
    }
}

impl<R: Read> Iterator for OwnedRecords<R> {
    type Item = Result<Vec<u8>, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader.next_record().map(|r| r.map(<[u8]>::to_vec)).transpose()
    }
}

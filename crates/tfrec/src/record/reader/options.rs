//! The reader's settings ([`ReaderOptions`], [`OnCorruption`], [`TornTail`]) and its counters
//! ([`ReadStats`]).

use super::super::compression::CompressionChoice;

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
    /// [`RecordReader::problems`](crate::record::RecordReader::problems).
    Resync,
    /// Abandon the rest of the file at the first damaged record (counted in
    /// [`ReadStats::skipped_files`]). A multi-file reader goes on with the next file.
    SkipFile,
}

/// What the reader does with a last record cut off by the end of the stream: a partial header
/// (1 to 11 bytes), or a valid header whose data and footer the stream ends inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TornTail {
    /// Report it ([`RecordErrorKind::PartialHeader`](crate::record::RecordErrorKind::PartialHeader),
    /// [`RecordErrorKind::Truncated`](crate::record::RecordErrorKind::Truncated) or
    /// [`RecordErrorKind::LengthExceedsFile`](crate::record::RecordErrorKind::LengthExceedsFile)).
    /// The default: TensorFlow silently drops a partial header, which hides a torn write.
    #[default]
    Error,
    /// Treat it as the end of the data (a file still being written) and count its bytes in
    /// [`ReadStats::torn_tail_bytes`]. A cut-off record that an intact record follows is not a
    /// tail: it is damage, which [`OnCorruption`] decides on.
    Skip,
}

/// Settings of a [`RecordReader`](crate::record::RecordReader). `Default` gives TensorFlow's behaviour, except that a torn
/// tail is reported.
///
/// New settings may be added: build it from `Default` and the setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReaderOptions {
    /// How the compression is chosen. Default: [`CompressionChoice::Auto`] (extension, then
    /// sniffing). Set it to read a file whose name and content disagree.
    pub compression: CompressionChoice,
    /// Check every record's data CRC. Default: true. Turning it off roughly halves the work
    /// per byte for data that is verified elsewhere; lengths are always checked.
    pub verify_data_crc: bool,
    /// The largest record accepted, in bytes. Default: 2 GiB, the largest message protobuf
    /// can parse. A valid-looking length above it is [`RecordErrorKind::LengthOverLimit`](crate::record::RecordErrorKind::LengthOverLimit).
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
pub(super) const DEFAULT_BUFFER_SIZE: usize = 1 << 20;
pub(super) const MIN_BUFFER_SIZE: usize = 64 << 10;
/// A large record's buffer grows by doubling from here, never straight to the claimed length,
/// so a lying length costs at most twice the bytes that really follow it.
pub(super) const LARGE_RECORD_FIRST_CHUNK: usize = 1 << 20;
/// How many skipped problems a reader keeps for [`RecordReader::problems`](crate::record::RecordReader::problems).
pub(super) const MAX_KEPT_PROBLEMS: usize = 1024;

/// Counters of what a reader has read and skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
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
    /// Bytes of a cut-off last record (partial header, or header and part of its data) ignored
    /// under [`TornTail::Skip`].
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

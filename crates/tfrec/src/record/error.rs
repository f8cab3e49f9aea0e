//! Errors of the TFRecord layer: what went wrong, and exactly where.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::compression::Compression;
use super::inflate::StreamDamage;

/// How to read a stream as `compression`, in the CLI's and Python's words.
fn how_to_read(compression: Compression) -> String {
    match compression {
        Compression::None => "read it without compression (`--compression none` in the CLI, \
                              `compression_type=\"\"` in Python)"
            .to_owned(),
        c => format!(
            "read it as {name} (`--compression {c}` in the CLI, `compression_type=\"{name}\"` in Python)",
            name = c.tf_name()
        ),
    }
}

/// What a stream read as `expected` is instead.
fn wrong_compression(expected: Compression, found: Compression) -> String {
    let is = match found {
        Compression::None => "a plain TFRecord".to_owned(),
        c => format!("a {} stream", c.tf_name()),
    };
    format!(
        "not a {} stream: this file is {is}; {}",
        expected.tf_name(),
        how_to_read(found)
    )
}

/// The end of a first-header error's text when the stream looks compressed: how to read it.
fn compressed_hint(looks_compressed: Option<Compression>) -> String {
    match looks_compressed {
        Some(c @ (Compression::Gzip | Compression::Zlib)) => {
            format!("; the data starts like a {} stream: {}", c.tf_name(), how_to_read(c))
        }
        _ => String::new(),
    }
}

/// Where in the input a problem was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The file, when the reader was opened on one (`None` for an anonymous stream).
    pub path: Option<Arc<Path>>,
    /// Byte offset of the start of the record's header in the (decompressed) stream.
    pub offset: u64,
    /// Zero-based index of the record in its file or stream.
    pub record_index: u64,
    /// Whether `offset` counts decompressed bytes (the file was GZIP or ZLIB).
    pub decompressed: bool,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}: ", path.display())?,
            None => f.write_str("<stream>: ")?,
        }
        write!(f, "record {} at ", self.record_index)?;
        if self.decompressed {
            write!(f, "decompressed ")?;
        }
        write!(f, "byte {}", self.offset)
    }
}

/// What is wrong with the input. Each variant says whether reading can go on after it.
///
/// New kinds may be added; match with a wildcard arm (or use [`RecordError::is_recoverable`]
/// and [`RecordError::kind_name`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordErrorKind {
    /// The length field does not match its CRC. The length cannot be trusted, so the reader
    /// can only go on by resynchronising (scanning for the next valid header).
    #[error("corrupted record: the length's CRC does not match (stored {stored:#010x}, computed {computed:#010x}){}", compressed_hint(*looks_compressed))]
    LengthCrcMismatch {
        /// The masked CRC-32C stored after the length.
        stored: u32,
        /// The masked CRC-32C of the length bytes as read.
        computed: u32,
        /// At the first byte of a stream read as plain: the compression its first bytes look
        /// like (GZIP or ZLIB), the likelier story than damage.
        looks_compressed: Option<Compression>,
    },

    /// The data does not match its CRC (or the CRC itself was damaged). The length was valid,
    /// so the next record starts right after this one and reading can go on past it.
    #[error("corrupted record: the data's CRC does not match (stored {stored:#010x}, computed {computed:#010x}; data starts at byte {data_offset})")]
    DataCrcMismatch {
        /// The masked CRC-32C stored in the footer.
        stored: u32,
        /// The masked CRC-32C of the data as read.
        computed: u32,
        /// Stream offset of the record's first data byte (TensorFlow names this one).
        data_offset: u64,
    },

    /// The header was complete and valid but the stream ended inside the data or footer.
    /// The length may be a lie: under [`OnCorruption::Resync`](crate::record::OnCorruption::Resync)
    /// the bytes it claimed are scanned again for intact records. A growing file may also be
    /// read again later.
    #[error("truncated record: the header promises {len} data bytes plus a 4-byte footer but the stream ends {available} bytes later")]
    Truncated {
        /// The data length the header promises.
        len: u64,
        /// Bytes that followed the header before the stream ended.
        available: u64,
    },

    /// 1 to 11 bytes at the end of the stream: a torn write of a record header. TensorFlow
    /// silently ignores it; tfrec reports it unless told to tolerate a torn tail. Nothing
    /// follows it; under resynchronisation it is skipped and kept as a problem.
    #[error("partial record header at the end of the stream: {available} of 12 bytes (a torn write?)")]
    PartialHeader {
        /// Bytes of the header present (1 to 11).
        available: usize,
    },

    /// A length with a valid CRC that is larger than what is left of a file whose size is known
    /// (a plain file): the record would run past the end. Nothing is allocated for it; reading
    /// can only go on by resynchronising. (In a stream of unknown size the same damage is
    /// found when the data ends: [`RecordErrorKind::Truncated`].)
    #[error("record length {len} is larger than the {remaining} bytes left in the file")]
    LengthExceedsFile {
        /// The data length the header promises.
        len: u64,
        /// Bytes left in the file after the header.
        remaining: u64,
    },

    /// A length with a valid CRC above the configured limit ([`ReaderOptions::max_record_len`](crate::record::ReaderOptions::max_record_len)).
    /// Reading can only go on by resynchronising.
    #[error("record length {len} exceeds the limit of {limit} bytes")]
    LengthOverLimit {
        /// The data length the header promises.
        len: u64,
        /// The largest length accepted.
        limit: u64,
    },

    /// The compressed stream is damaged (bad deflate data, wrong gzip/zlib checksum, cut
    /// short). Every record decoded before the damage has been returned; nothing after it can
    /// be read. The location names the record the damage cut into; the compressed offset is in
    /// the [`StreamDamage`] inside ([`RecordError::stream_damage`]). Under resynchronisation it
    /// ends the file and is kept as a problem.
    #[error("the compressed stream is damaged: {0}")]
    Decompress(io::Error),

    /// The stream is not of the compression it was read as: it was read as GZIP or ZLIB, and
    /// its first bytes are a plain TFRecord (a header whose length CRC holds) or a stream of
    /// the other compression. Nothing was read; it ends reading under every
    /// [`OnCorruption`](crate::record::OnCorruption), as it is the setting that is wrong, not
    /// the data.
    #[error("{}", wrong_compression(*expected, *found))]
    WrongCompression {
        /// The compression the stream was read as.
        expected: Compression,
        /// What the stream is.
        found: Compression,
    },

    /// Reading the underlying file or stream failed.
    #[error("I/O error: {0}")]
    Io(io::Error),

    /// The file could not be opened or listed (it does not exist, a glob matched nothing, no
    /// permission). Nothing was read.
    #[error("cannot open: {0}")]
    Open(io::Error),
}

/// An error of the TFRecord layer, with the place it happened.
#[derive(Debug)]
pub struct RecordError {
    /// What is wrong.
    pub kind: RecordErrorKind,
    /// Where: file, byte offset of the record and record index.
    pub location: Location,
}

impl RecordError {
    /// Whether records after this damage can still be found, by resynchronising: true for CRC
    /// mismatches, implausible lengths and truncated records (whose claimed bytes are scanned
    /// again); false for a partial header and a damaged compressed stream (nothing follows
    /// them; resynchronisation skips them as problems) and for I/O failures (fatal).
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self.kind,
            RecordErrorKind::LengthCrcMismatch { .. }
                | RecordErrorKind::DataCrcMismatch { .. }
                | RecordErrorKind::LengthExceedsFile { .. }
                | RecordErrorKind::LengthOverLimit { .. }
                | RecordErrorKind::Truncated { .. }
        )
    }

    /// For a damaged compressed stream, where the damage is: compressed and decompressed
    /// offsets.
    pub fn stream_damage(&self) -> Option<&StreamDamage> {
        match &self.kind {
            RecordErrorKind::Decompress(e) => e.get_ref()?.downcast_ref::<StreamDamage>(),
            _ => None,
        }
    }

    /// A short stable name for the kind of problem, used in machine-readable reports.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            RecordErrorKind::LengthCrcMismatch { .. } => "length_crc_mismatch",
            RecordErrorKind::DataCrcMismatch { .. } => "data_crc_mismatch",
            RecordErrorKind::Truncated { .. } => "truncated",
            RecordErrorKind::PartialHeader { .. } => "partial_header",
            RecordErrorKind::LengthExceedsFile { .. } => "length_exceeds_file",
            RecordErrorKind::LengthOverLimit { .. } => "length_over_limit",
            RecordErrorKind::Decompress(_) => "decompress",
            RecordErrorKind::WrongCompression { .. } => "wrong_compression",
            RecordErrorKind::Io(_) => "io",
            RecordErrorKind::Open(_) => "open",
        }
    }

    /// The offset TensorFlow would name for this problem: the data offset for a data CRC
    /// mismatch ("corrupted record at <offset+12>"), else the record's offset.
    pub fn tf_offset(&self) -> u64 {
        match self.kind {
            RecordErrorKind::DataCrcMismatch { data_offset, .. } => data_offset,
            _ => self.location.offset,
        }
    }

    /// The file the error happened in, if known.
    pub fn path(&self) -> Option<&Path> {
        self.location.path.as_deref()
    }

    /// A file that could not be opened, listed or inspected.
    pub(crate) fn open_failed(error: io::Error, path: Option<PathBuf>) -> RecordError {
        RecordError {
            kind: RecordErrorKind::Open(error),
            location: Location {
                path: path.map(Arc::from),
                ..Location::default()
            },
        }
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.kind, &self.location.path) {
            // Nothing was read, so only the file is worth naming.
            (RecordErrorKind::Open(_) | RecordErrorKind::WrongCompression { .. }, Some(path)) => {
                write!(f, "{}: {}", path.display(), self.kind)
            }
            _ => write!(f, "{}: {}", self.location, self.kind),
        }
    }
}

/// Self-contained: the text already includes the I/O error's (the crate's rule, see
/// [`crate::Error`]), so there is no `source()`; the I/O error is in [`RecordError::kind`].
impl std::error::Error for RecordError {}

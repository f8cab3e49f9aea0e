//! Random access into a plain TFRecord file through an index of record offsets.
//!
//! The index is the plain-text format other TFRecord tools use (the `tfrecord` Python package's
//! `tfrecord2idx`, NVIDIA DALI): one line per record, `offset length`, where `offset` is where
//! the record's header starts and `length` is the whole framed record (12 + data + 4 bytes).

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::compression::{Compression, CompressionChoice};
use super::error::RecordError;
use super::format::FRAMING_LEN;
use super::reader::{ReaderOptions, RecordReader};
use super::remote::Source;

/// How a [`IndexError::Stale`] names its index.
fn index_name(index_file: Option<&Path>) -> String {
    match index_file {
        Some(path) => path.display().to_string(),
        None => "the index built in memory".to_owned(),
    }
}

/// One record's place in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Byte offset of the record's header.
    pub offset: u64,
    /// Length of the framed record: 16 + data length.
    pub len: u64,
}

/// What can go wrong building, loading or using an index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Reading the records failed.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Offsets into a compressed stream cannot be sought to.
    #[error("{path}: cannot index a {compression}-compressed file: offsets into it cannot be sought to (decompress it first, e.g. with `tfrec convert`)")]
    Compressed {
        /// The records file.
        path: PathBuf,
        /// Its compression.
        compression: Compression,
    },
    /// A line of an index file is not `offset length`.
    #[error("{path}:{line}: not an index line (`offset length`): {text:?}")]
    Parse {
        /// The index file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// The line as read.
        text: String,
    },
    /// Reading or writing the index file failed.
    #[error("{path}: {error}")]
    Io {
        /// The index file.
        path: PathBuf,
        /// What failed (its text is part of this error's).
        error: io::Error,
    },
    /// A record number past the end of the index.
    #[error("record {index} is out of range: the index has {len} records")]
    OutOfRange {
        /// The record asked for.
        index: u64,
        /// Records in the index.
        len: u64,
    },
    /// Random access into a compressed file: record N could only be reached by decompressing
    /// everything before it, so it is refused rather than done silently on every read.
    #[error("{path}: random access needs an uncompressed file, and this one is {compression}-compressed (reaching record N would decompress everything before it); write a plain copy first, e.g. `tfrec shard {path} -o DIR --output-compression none`, or decompress it (`gunzip`)")]
    NeedsUncompressed {
        /// The records file.
        path: PathBuf,
        /// Its compression.
        compression: Compression,
    },
    /// An index that does not describe its records file (the file changed after indexing, or
    /// the index belongs to another file): an entry runs past the end of the file, or the
    /// record found at an indexed offset has another length.
    #[error("{}: stale index for {path}: record {record} at byte {offset}: {problem} (rebuild the index, e.g. with `tfrec index`)", index_name(index_file.as_deref()))]
    Stale {
        /// The index file, or `None` for an index built in memory.
        index_file: Option<PathBuf>,
        /// The records file.
        path: PathBuf,
        /// The record whose entry is wrong, in its file.
        record: u64,
        /// The byte offset the index gives for it.
        offset: u64,
        /// What does not match.
        problem: String,
    },
    /// A seek index file (of a compressed file) that cannot be read: not one, of another
    /// format version, damaged, or with checkpoints out of order.
    #[error("{}: not a usable seek index: {problem} (rebuild it, e.g. with `tfrec index`)", index_file.display())]
    BadSeekIndex {
        /// The index file.
        index_file: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A seek index of another file, or of another version of its file (size or modification
    /// time differ).
    #[error("{}: stale seek index for {path}: {problem} (rebuild it, e.g. with `tfrec index`)", index_file.display())]
    StaleSeekIndex {
        /// The index file.
        index_file: PathBuf,
        /// The records file.
        path: PathBuf,
        /// What does not match.
        problem: String,
    },
    /// The record found at an indexed offset does not have the indexed length (stale index).
    #[error("record {index} at byte {offset}: the file has a record of {actual} framed bytes where the index says {expected} (is the index stale?)")]
    Mismatch {
        /// The record asked for.
        index: u64,
        /// Its offset in the index.
        offset: u64,
        /// Framed length in the index.
        expected: u64,
        /// Framed length of the record found there.
        actual: u64,
    },
}

/// The offsets and lengths of every record of a file, to read record N directly
/// ([`IndexedReader`]). Only plain files can be indexed: offsets into a compressed stream
/// cannot be sought to.
///
/// ```
/// use tfrec::record::{IndexedReader, RecordIndex, RecordWriter, WriterOptions};
///
/// let dir = std::env::temp_dir().join(format!("tfrec-index-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("data.tfrecord");
/// let mut writer = RecordWriter::create(&path, WriterOptions::default())?;
/// for i in 0..1000 {
///     writer.write_record(format!("record {i}").as_bytes())?;
/// }
/// writer.finish()?;
///
/// let index = RecordIndex::build(&path)?;
/// index.save(RecordIndex::default_path(&path))?; // for the next run: RecordIndex::load
/// assert_eq!(index.len(), 1000);
///
/// let mut reader = IndexedReader::open(&path, index)?;
/// assert_eq!(reader.get(777)?, b"record 777");
/// assert!(reader.get(1000).is_err());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), tfrec::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordIndex {
    entries: Vec<IndexEntry>,
}

impl RecordIndex {
    /// Reads a plain file once and records where each record is (CRCs are checked).
    pub fn build(path: impl AsRef<Path>) -> Result<Self, IndexError> {
        let path = path.as_ref();
        let reader = RecordReader::open(path, ReaderOptions::default())?;
        if reader.compression() != Compression::None {
            return Err(IndexError::Compressed {
                path: path.to_path_buf(),
                compression: reader.compression(),
            });
        }
        Self::from_reader(reader)
    }

    /// Indexes the records a reader yields from here on.
    pub fn from_reader<R: io::Read>(mut reader: RecordReader<R>) -> Result<Self, IndexError> {
        let mut entries = Vec::new();
        while let Some(record) = reader.next_record()? {
            let len = (record.len() + FRAMING_LEN) as u64;
            entries.push(IndexEntry {
                offset: reader.last_record_offset(),
                len,
            });
        }
        Ok(RecordIndex { entries })
    }

    /// Loads an index file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, IndexError> {
        let path = path.as_ref();
        let io_err = |error| IndexError::Io {
            path: path.to_path_buf(),
            error,
        };
        let file = Source::open(path).map_err(io_err)?;
        let mut entries = Vec::new();
        for (i, line) in BufReader::new(file).lines().enumerate() {
            let line = line.map_err(io_err)?;
            if line.trim().is_empty() {
                continue;
            }
            let mut fields = line.split_ascii_whitespace().map(str::parse::<u64>);
            match (fields.next(), fields.next(), fields.next()) {
                (Some(Ok(offset)), Some(Ok(len)), None) => entries.push(IndexEntry { offset, len }),
                _ => {
                    return Err(IndexError::Parse {
                        path: path.to_path_buf(),
                        line: i + 1,
                        text: line,
                    })
                }
            }
        }
        Ok(RecordIndex { entries })
    }

    /// Writes the index as `offset length` lines.
    pub fn write_to<W: Write>(&self, out: W) -> io::Result<()> {
        let mut out = BufWriter::new(out);
        for e in &self.entries {
            writeln!(out, "{} {}", e.offset, e.len)?;
        }
        out.flush()
    }

    /// Saves the index to `path`, under a temporary name in the same directory first, renamed
    /// into place once complete: a reader never sees a partial index, even after a crash.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), IndexError> {
        let path = path.as_ref();
        let io_err = |error| IndexError::Io {
            path: path.to_path_buf(),
            error,
        };
        let temp = temp_path(path);
        let written = File::create_new(&temp)
            .and_then(|file| {
                self.write_to(&file)?;
                file.sync_all()
            })
            .and_then(|()| fs::rename(&temp, path));
        if written.is_err() {
            // Best effort: the error that matters is the one returned.
            let _ = fs::remove_file(&temp);
        }
        written.map_err(io_err)
    }

    /// Builds the entries from a list (for indexes kept elsewhere, or made by hand in tests).
    pub fn from_entries(entries: Vec<IndexEntry>) -> Self {
        RecordIndex { entries }
    }

    /// The conventional index path for a data file: `FILE.idx`.
    pub fn default_path(data_path: &Path) -> PathBuf {
        let mut name = data_path.as_os_str().to_owned();
        name.push(".idx");
        PathBuf::from(name)
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file has no records.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }
}

/// A name beside `path` that no other writer uses: hidden, with the process id and a counter.
fn temp_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

/// Reads record N of a plain file by seeking to it.
pub struct IndexedReader {
    reader: RecordReader<Source>,
    index: RecordIndex,
}

impl IndexedReader {
    /// Opens `path` with an index (for example from [`RecordIndex::load`]).
    pub fn open(path: impl AsRef<Path>, index: RecordIndex) -> Result<Self, IndexError> {
        let path = path.as_ref();
        let io_err = |error| IndexError::Io {
            path: path.to_path_buf(),
            error,
        };
        let file = Source::open(path).map_err(io_err)?;
        // Random access only reads records the index names, so a small window suffices.
        let options = ReaderOptions::default()
            .compression(CompressionChoice::Exactly(Compression::None))
            .buffer_size(64 << 10);
        let reader = RecordReader::new_seekable(file, options)
            .map_err(io_err)?
            .with_path(path);
        Ok(IndexedReader { reader, index })
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The data of record `n`, CRC-checked. Valid until the next call.
    pub fn get(&mut self, n: u64) -> Result<&[u8], IndexError> {
        let entry = usize::try_from(n)
            .ok()
            .and_then(|i| self.index.entries.get(i))
            .copied()
            .ok_or(IndexError::OutOfRange {
                index: n,
                len: self.index.len() as u64,
            })?;
        self.reader.seek_to(entry.offset, n)?;
        match self.reader.next_record()? {
            Some(data) if (data.len() + FRAMING_LEN) as u64 == entry.len => Ok(data),
            Some(data) => Err(IndexError::Mismatch {
                index: n,
                offset: entry.offset,
                expected: entry.len,
                actual: (data.len() + FRAMING_LEN) as u64,
            }),
            None => Err(IndexError::Mismatch {
                index: n,
                offset: entry.offset,
                expected: entry.len,
                actual: 0,
            }),
        }
    }
}

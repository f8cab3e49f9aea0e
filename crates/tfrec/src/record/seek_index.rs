//! The seek index of a GZIP or ZLIB TFRecord file: checkpoints every few MiB of inflated
//! output at deflate block boundaries, each with what inflating needs to start there (the bit
//! position in the compressed file and the 32 KiB window before it) and the record boundary
//! it falls in, so that record N is reached by inflating from the nearest checkpoint instead of
//! from the start. This is the zran method of zlib's `examples/zran.c` and the `indexed_gzip`
//! package; the inflater is [`super::zran`].
//!
//! Records between two checkpoints form a *span*: span `c` holds the records
//! `checkpoints[c].first_record ..` the next checkpoint's (or the file's last). Decoding a span
//! checks it against the index: as many records as the index says, ending exactly where the
//! next span starts, with every record's length CRC holding, so a checkpoint whose bit
//! position, window, offsets or record number is wrong gives an error, not wrong records. (What
//! a span cannot see alone is every later record number shifted by the same amount, with the
//! file's total shifted too: the index's CRC-32 and its file's size and time stamp are the
//! guard against that, as damage or a copy from another file are what would make it.)
//!
//! The file format (`FILE.zidx`), little-endian, written once here:
//!
//! ```text
//! magic        8 bytes  "TFRZIDX\0"
//! version      u32      1
//! compression  u8       1 GZIP, 2 ZLIB; then 3 zero bytes
//! file_len     u64      size of the compressed file indexed
//! mtime_secs   i64      its modification time (seconds since the epoch) ...
//! mtime_nanos  u32      ... and nanoseconds; u32::MAX when unknown (an object)
//! spacing      u64      inflated bytes asked for between checkpoints
//! records      u64      records in the file
//! inflated_len u64      inflated bytes in the file
//! count        u64      checkpoints, then each:
//!   compressed_offset u64  first compressed byte not consumed at the boundary
//!   bits              u8   0..=7 high bits of the byte before it that belong to the next block
//!   last_byte         u8   that byte (0 when bits is 0)
//!   inflated_offset   u64  inflated bytes before the boundary
//!   first_record      u64  number of the first record starting at or after it
//!   first_record_at   u64  inflated offset where that record starts
//!   window_len        u32  min(32 KiB, inflated_offset)
//!   deflated_len      u32  then the window, raw-deflated, in that many bytes
//! crc32        u32      CRC-32 (IEEE) of every byte before it
//! ```

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use flate2::Crc;

use super::compression::Compression;
use super::error::{Location, RecordError, RecordErrorKind};
use super::format::{Header, FRAMING_LEN, HEADER_LEN};
use super::index::IndexError;
use super::inflate::{gzip_header_len, StreamDamage};
use super::remote::{Positional, Source};
use super::zran::{adler32_update, RawInflater, Stop, WINDOW_LEN};

const MAGIC: &[u8; 8] = b"TFRZIDX\0";
/// The format version this code writes and reads.
pub const SEEK_INDEX_VERSION: u32 = 1;
/// Inflated bytes between checkpoints unless asked otherwise: a read inflates half of it on
/// average, and each checkpoint stores a 32 KiB window (deflated).
pub const DEFAULT_SPACING: u64 = 1 << 20;
/// The fixed part of a checkpoint in the file.
const CHECKPOINT_FIXED_LEN: usize = 8 + 1 + 1 + 8 + 8 + 8 + 4 + 4;
/// Compressed bytes read at a time.
const READ_CHUNK: usize = 256 << 10;

/// One place inflating can start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The first compressed byte not consumed at the block boundary.
    pub compressed_offset: u64,
    /// How many high bits of the byte before `compressed_offset` belong to the next block
    /// (0..=7).
    pub bits: u8,
    /// That byte (0 when `bits` is 0).
    pub last_byte: u8,
    /// Inflated bytes before the boundary.
    pub inflated_offset: u64,
    /// The first record starting at or after `inflated_offset`.
    pub first_record: u64,
    /// Where that record starts in the inflated stream (`>= inflated_offset`).
    pub first_record_at: u64,
    /// Length of the window (`min(32 KiB, inflated_offset)`).
    window_len: u32,
    /// The window, raw-deflated (as stored in the file).
    window_deflated: Arc<[u8]>,
}

impl Checkpoint {
    /// The start of a compressed stream at `compressed_offset`: nothing inflated, no window.
    fn stream_start(compressed_offset: u64) -> Checkpoint {
        Checkpoint {
            compressed_offset,
            bits: 0,
            last_byte: 0,
            inflated_offset: 0,
            first_record: 0,
            first_record_at: 0,
            window_len: 0,
            window_deflated: Arc::from(deflate_window(&[])),
        }
    }

    /// The 32 KiB (or fewer) of inflated output before the boundary.
    fn window(&self) -> Result<Vec<u8>, String> {
        let mut window = vec![0u8; self.window_len as usize];
        let mut inflate = flate2::Decompress::new(false);
        let status = inflate
            .decompress(&self.window_deflated, &mut window, flate2::FlushDecompress::Finish)
            .map_err(|e| format!("a checkpoint's window does not inflate ({e})"))?;
        if inflate.total_out() != u64::from(self.window_len) || status != flate2::Status::StreamEnd {
            return Err("a checkpoint's window has not its stated length".to_owned());
        }
        Ok(window)
    }
}

/// The seek index of one compressed file (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeekIndex {
    compression: Compression,
    file_len: u64,
    /// Seconds and nanoseconds since the epoch; `None` when the source has no such time.
    file_mtime: Option<(i64, u32)>,
    spacing: u64,
    records: u64,
    inflated_len: u64,
    /// At least one (the start of the stream); in increasing order of every offset.
    checkpoints: Vec<Checkpoint>,
}

/// What identifies a version of a file: its size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    pub(crate) len: u64,
    pub(crate) mtime: Option<(i64, u32)>,
}

impl FileStamp {
    /// The stamp of a local file or an object (an object has no modification time here).
    pub(crate) fn of(path: &Path) -> io::Result<FileStamp> {
        if super::remote::is_url_path(path) {
            return Ok(FileStamp {
                len: super::remote::size_of(path)?,
                mtime: None,
            });
        }
        let meta = fs::metadata(path)?;
        let mtime = meta.modified().ok().map(|t| match t.duration_since(UNIX_EPOCH) {
            Ok(d) => (d.as_secs() as i64, d.subsec_nanos()),
            Err(before) => (-(before.duration().as_secs() as i64), before.duration().subsec_nanos()),
        });
        Ok(FileStamp { len: meta.len(), mtime })
    }
}

/// Errors while building, in the crate's record-error terms.
struct BuildError {
    kind: RecordErrorKind,
    record_index: u64,
    offset: u64,
}

fn damage(what: impl Into<String>, compressed_offset: u64, inflated_offset: u64) -> RecordErrorKind {
    RecordErrorKind::Decompress(io::Error::new(
        io::ErrorKind::InvalidData,
        StreamDamage {
            what: what.into(),
            compressed_offset,
            decompressed_offset: inflated_offset,
        },
    ))
}

/// Follows the record framing through the inflated stream as it arrives.
#[derive(Debug, Default)]
struct RecordWalker {
    /// Records whose start has been passed.
    count: u64,
    /// Where record `count` starts.
    next_at: u64,
    /// The bytes of its header seen so far (fewer than 12).
    header: Vec<u8>,
}

impl RecordWalker {
    /// Takes in the inflated bytes `chunk`, which start at inflated offset `at`.
    fn feed(&mut self, chunk: &[u8], at: u64) -> Result<(), BuildError> {
        let end = at + chunk.len() as u64;
        while self.next_at + (self.header.len() as u64) < end {
            let from = (self.next_at + self.header.len() as u64 - at) as usize;
            let take = (HEADER_LEN - self.header.len()).min(chunk.len() - from);
            self.header.extend_from_slice(&chunk[from..from + take]);
            if self.header.len() < HEADER_LEN {
                break;
            }
            let mut bytes = [0u8; HEADER_LEN];
            bytes.copy_from_slice(&self.header);
            let header = Header::decode(&bytes);
            if !header.is_valid() {
                return Err(BuildError {
                    kind: RecordErrorKind::LengthCrcMismatch {
                        stored: header.stored_crc,
                        computed: header.actual_crc,
                        looks_compressed: None,
                    },
                    record_index: self.count,
                    offset: self.next_at,
                });
            }
            self.header.clear();
            self.next_at = self
                .next_at
                .saturating_add(header.len)
                .saturating_add(FRAMING_LEN as u64);
            self.count += 1;
        }
        Ok(())
    }

    /// Whether a record boundary is known at or after inflated offset `at`.
    fn settled_at(&self, at: u64) -> bool {
        self.header.is_empty() && self.next_at >= at
    }
}

/// Inflated output with at least the last 32 KiB kept, for checkpoint windows.
struct History {
    buf: Vec<u8>,
    filled: usize,
    /// Inflated bytes so far.
    total: u64,
}

impl History {
    fn new() -> Self {
        History {
            buf: vec![0; WINDOW_LEN + READ_CHUNK * 4],
            filled: 0,
            total: 0,
        }
    }

    /// Room for more output, keeping the last 32 KiB.
    fn space(&mut self) -> &mut [u8] {
        if self.buf.len() - self.filled < READ_CHUNK {
            let keep = self.filled.min(WINDOW_LEN);
            self.buf.copy_within(self.filled - keep..self.filled, 0);
            self.filled = keep;
        }
        &mut self.buf[self.filled..]
    }

    fn window(&self) -> &[u8] {
        &self.buf[self.filled - self.filled.min(WINDOW_LEN)..self.filled]
    }
}

fn deflate_window(window: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(window.len() / 2 + 64);
    let mut compress = flate2::Compress::new(flate2::Compression::new(6), false);
    loop {
        let rest = &window[(compress.total_in() as usize).min(window.len())..];
        if out.capacity() - out.len() < 1024 {
            out.reserve(window.len().max(1024));
        }
        // Deflating from memory into memory: the only error is a stream misuse, and every
        // call here is a plain Finish; stop on it rather than loop.
        match compress.compress_vec(rest, &mut out, flate2::FlushCompress::Finish) {
            Ok(flate2::Status::StreamEnd) | Err(_) => return out,
            Ok(_) => {}
        }
    }
}

/// Compressed input with its absolute offset.
struct Input<R> {
    src: BufReader<R>,
    at: u64,
    last_byte: u8,
}

impl<R: Read> Input<R> {
    fn fill(&mut self) -> io::Result<&[u8]> {
        self.src.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if n > 0 {
            if let Ok(buf) = self.src.fill_buf() {
                if let Some(&b) = buf.get(n - 1) {
                    self.last_byte = b;
                }
            }
        }
        self.src.consume(n);
        self.at += n as u64;
    }

    /// Exactly `n` bytes (a trailer), or `None` if the input ends first.
    fn take(&mut self, n: usize) -> io::Result<Option<Vec<u8>>> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let buf = self.fill()?;
            if buf.is_empty() {
                return Ok(None);
            }
            let k = (n - out.len()).min(buf.len());
            out.extend_from_slice(&buf[..k]);
            self.consume(k);
        }
        Ok(Some(out))
    }

    /// A whole GZIP member header, or `None` at the end of the input.
    fn gzip_header(&mut self) -> Result<Option<()>, String> {
        let mut header = Vec::new();
        loop {
            match gzip_header_len(&header) {
                Err(what) => return Err(what.to_owned()),
                Ok(Some(_)) => return Ok(Some(())),
                Ok(None) if header.len() >= 1 << 20 => return Err("gzip header longer than 1 MiB".to_owned()),
                Ok(None) => {}
            }
            let buf = self.fill().map_err(|e| e.to_string())?;
            match buf.first() {
                None if header.is_empty() => return Ok(None),
                None => return Err("the stream ends inside a gzip header".to_owned()),
                Some(&b) => {
                    header.push(b);
                    self.consume(1);
                }
            }
        }
    }
}

impl SeekIndex {
    /// Reads the compressed file at `path` once and indexes it, a checkpoint about every
    /// `spacing` inflated bytes. Every record's length CRC, and the GZIP CRC-32 or ZLIB
    /// Adler-32, are checked.
    pub fn build(path: &Path, compression: Compression, spacing: u64) -> Result<Self, IndexError> {
        let open_failed = |e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf())));
        let stamp = FileStamp::of(path).map_err(open_failed)?;
        let file = Source::open(path).map_err(open_failed)?;
        let mut index = Self::build_from_stream(path, file, compression, spacing)?;
        index.check_stamp(path, path, stamp)?;
        index.file_mtime = stamp.mtime;
        Ok(index)
    }

    /// Indexes the compressed stream `src` from its first byte to its end (`name` stands for
    /// it in errors); the index records no modification time.
    pub fn build_from_stream<R: Read>(
        name: &Path,
        src: R,
        compression: Compression,
        spacing: u64,
    ) -> Result<Self, IndexError> {
        Self::build_from(src, compression, spacing).map_err(|e| {
            IndexError::Record(RecordError {
                kind: e.kind,
                location: Location {
                    path: Some(Arc::from(name)),
                    offset: e.offset,
                    record_index: e.record_index,
                    decompressed: true,
                },
            })
        })
    }

    /// The index, built from a stream of the file at `path`, stamped with that file's size and
    /// modification time now (refused as stale when the size is not the one indexed).
    #[cfg(feature = "pipeline")]
    pub(crate) fn stamped(mut self, path: &Path) -> Result<Self, IndexError> {
        let stamp = FileStamp::of(path)
            .map_err(|e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf()))))?;
        self.check_stamp(path, path, stamp)?;
        self.file_mtime = stamp.mtime;
        Ok(self)
    }

    /// Indexes a compressed stream (its stamp left empty: [`SeekIndex::build`] sets it).
    fn build_from<R: Read>(src: R, compression: Compression, spacing: u64) -> Result<Self, BuildError> {
        let spacing = spacing.max(WINDOW_LEN as u64);
        let mut input = Input {
            src: BufReader::with_capacity(READ_CHUNK, src),
            at: 0,
            last_byte: 0,
        };
        let mut inflater = RawInflater::new().map_err(|e| build_damage(e, 0, 0, &RecordWalker::default()))?;
        let mut history = History::new();
        let mut walker = RecordWalker::default();
        let mut checkpoints: Vec<Checkpoint> = Vec::new();
        let mut first_member = true;
        loop {
            // The container's header.
            match compression {
                Compression::Gzip => match input.gzip_header() {
                    Ok(Some(())) => {}
                    Ok(None) if first_member => break,
                    Ok(None) => break,
                    Err(what) => {
                        let what = if first_member {
                            what
                        } else {
                            format!("bytes after a gzip member: {what}")
                        };
                        return Err(build_damage(what, input.at, history.total, &walker));
                    }
                },
                _ => {
                    let header = input
                        .take(2)
                        .map_err(|e| io_build_error(e, history.total, walker.count))?;
                    let Some(header) = header else {
                        if input.at == 0 {
                            break;
                        }
                        return Err(build_damage(
                            "the stream ends inside a zlib header",
                            input.at,
                            0,
                            &walker,
                        ));
                    };
                    let (cmf, flg) = (header[0], header[1]);
                    if cmf & 0x0f != 8 || cmf >> 4 > 7 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 {
                        return Err(build_damage("not a zlib stream (bad header)", 0, 0, &walker));
                    }
                    if flg & 0x20 != 0 {
                        return Err(build_damage(
                            "a zlib stream with a preset dictionary, which TFRecord readers do not use",
                            2,
                            0,
                            &walker,
                        ));
                    }
                }
            }
            inflater.reset();
            if checkpoints.is_empty() {
                checkpoints.push(Checkpoint::stream_start(input.at));
            }
            let mut crc = Crc::new();
            let mut adler = 1u32;
            let mut member_out = 0u64;
            // The deflate data.
            loop {
                let (total, count) = (history.total, walker.count);
                let space = history.space();
                let buf = input.src.fill_buf().map_err(|e| io_build_error(e, total, count))?;
                if buf.is_empty() {
                    return Err(build_damage(
                        "the compressed stream ends early",
                        input.at,
                        history.total,
                        &walker,
                    ));
                }
                let step = inflater.inflate(buf, space, true).map_err(|what| {
                    build_damage(
                        format!("invalid compressed data ({what})"),
                        input.at,
                        history.total,
                        &walker,
                    )
                })?;
                input.consume(step.consumed);
                let start = history.filled;
                let produced = &history.buf[start..start + step.produced];
                match compression {
                    Compression::Gzip => crc.update(produced),
                    _ => adler = adler32_update(adler, produced),
                }
                walker.feed(produced, history.total)?;
                history.filled += step.produced;
                history.total += step.produced as u64;
                member_out += step.produced as u64;
                match step.stop {
                    Stop::StreamEnd => break,
                    Stop::BlockBoundary { unused_bits } => {
                        let last = checkpoints.last().map_or(0, |c| c.inflated_offset);
                        if history.total - last >= spacing && walker.settled_at(history.total) {
                            let window = history.window();
                            // Inside one long record only the last checkpoint is ever used
                            // (the one nearest the next record), so it replaces the one before.
                            if checkpoints.len() > 1 && checkpoints.last().map(|c| c.first_record) == Some(walker.count)
                            {
                                checkpoints.pop();
                            }
                            checkpoints.push(Checkpoint {
                                compressed_offset: input.at,
                                bits: unused_bits,
                                last_byte: if unused_bits > 0 { input.last_byte } else { 0 },
                                inflated_offset: history.total,
                                first_record: walker.count,
                                first_record_at: walker.next_at,
                                window_len: window.len() as u32,
                                window_deflated: Arc::from(deflate_window(window)),
                            });
                        }
                    }
                    Stop::More if step.consumed == 0 && step.produced == 0 => {
                        return Err(build_damage(
                            "the inflater made no progress",
                            input.at,
                            history.total,
                            &walker,
                        ));
                    }
                    Stop::More => {}
                }
            }
            // The container's trailer.
            match compression {
                Compression::Gzip => {
                    let trailer = input
                        .take(8)
                        .map_err(|e| io_build_error(e, history.total, walker.count))?;
                    let Some(t) = trailer else {
                        return Err(build_damage(
                            "the stream ends inside a gzip trailer",
                            input.at,
                            history.total,
                            &walker,
                        ));
                    };
                    let stored_crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
                    let stored_len = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
                    if stored_crc != crc.sum() || stored_len != member_out as u32 {
                        return Err(build_damage(
                            "the gzip member's CRC-32 or size does not match its data",
                            input.at,
                            history.total,
                            &walker,
                        ));
                    }
                    first_member = false;
                }
                _ => {
                    let trailer = input
                        .take(4)
                        .map_err(|e| io_build_error(e, history.total, walker.count))?;
                    match trailer {
                        Some(t) if u32::from_be_bytes([t[0], t[1], t[2], t[3]]) == adler => {}
                        _ => {
                            return Err(build_damage(
                                "the zlib stream's Adler-32 does not match its data",
                                input.at,
                                history.total,
                                &walker,
                            ))
                        }
                    }
                    let rest = input
                        .fill()
                        .map_err(|e| io_build_error(e, history.total, walker.count))?;
                    let more = !rest.is_empty();
                    if more {
                        return Err(build_damage(
                            "bytes after the end of the zlib stream",
                            input.at,
                            history.total,
                            &walker,
                        ));
                    }
                    break;
                }
            }
        }
        if !walker.settled_at(history.total) || walker.next_at != history.total {
            let available = history.total.saturating_sub(walker.next_at);
            let kind = if walker.header.is_empty() {
                RecordErrorKind::Truncated {
                    len: walker.next_at - history.total,
                    available,
                }
            } else {
                RecordErrorKind::PartialHeader {
                    available: walker.header.len(),
                }
            };
            return Err(BuildError {
                kind,
                record_index: walker.count.saturating_sub(1),
                offset: history.total,
            });
        }
        if checkpoints.is_empty() {
            // An empty file: no stream at all, as TensorFlow reads it.
            checkpoints.push(Checkpoint::stream_start(0));
        }
        Ok(SeekIndex {
            compression,
            file_len: input.at,
            file_mtime: None,
            spacing,
            records: walker.count,
            inflated_len: history.total,
            checkpoints,
        })
    }

    /// The conventional index path for a compressed data file: `FILE.zidx`.
    pub fn default_path(data_path: &Path) -> PathBuf {
        let mut name = data_path.as_os_str().to_owned();
        name.push(".zidx");
        PathBuf::from(name)
    }

    /// Records in the file.
    pub fn len(&self) -> u64 {
        self.records
    }

    /// Whether the file holds no record.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// The compression of the indexed file.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The size of the compressed file indexed.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Inflated bytes in the file.
    pub fn inflated_len(&self) -> u64 {
        self.inflated_len
    }

    /// The checkpoints, in file order.
    pub fn checkpoints(&self) -> &[Checkpoint] {
        &self.checkpoints
    }

    /// The checkpoints, to make lying indexes in tests.
    #[cfg(test)]
    pub(crate) fn checkpoints_mut(&mut self) -> &mut Vec<Checkpoint> {
        &mut self.checkpoints
    }

    /// The index in its file format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&SEEK_INDEX_VERSION.to_le_bytes());
        out.extend_from_slice(&[compression_code(self.compression), 0, 0, 0]);
        out.extend_from_slice(&self.file_len.to_le_bytes());
        let (secs, nanos) = self.file_mtime.unwrap_or((0, u32::MAX));
        out.extend_from_slice(&secs.to_le_bytes());
        out.extend_from_slice(&nanos.to_le_bytes());
        for v in [
            self.spacing,
            self.records,
            self.inflated_len,
            self.checkpoints.len() as u64,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for c in &self.checkpoints {
            out.extend_from_slice(&c.compressed_offset.to_le_bytes());
            out.extend_from_slice(&[c.bits, c.last_byte]);
            for v in [c.inflated_offset, c.first_record, c.first_record_at] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&c.window_len.to_le_bytes());
            out.extend_from_slice(&(c.window_deflated.len() as u32).to_le_bytes());
            out.extend_from_slice(&c.window_deflated);
        }
        let mut crc = Crc::new();
        crc.update(&out);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out
    }

    /// Reads an index from its file format, checking its checksum and that its checkpoints
    /// are in order and within what it says of its file; `problem` names what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        let body_len = bytes.len().checked_sub(4).ok_or("shorter than an index header")?;
        let (body, stored) = bytes.split_at(body_len);
        if body.len() < 8 || &body[..8] != MAGIC {
            return Err("not a tfrec seek index (bad magic bytes)".to_owned());
        }
        let mut r = Fields { bytes: body, at: 8 };
        let version = r.u32()?;
        if version != SEEK_INDEX_VERSION {
            return Err(format!(
                "seek index format version {version}; this tfrec reads version {SEEK_INDEX_VERSION}"
            ));
        }
        let mut crc = Crc::new();
        crc.update(body);
        if crc.sum().to_le_bytes() != stored {
            return Err("the index's checksum does not match (damaged or cut short)".to_owned());
        }
        let compression = match r.bytes(4)? {
            [1, 0, 0, 0] => Compression::Gzip,
            [2, 0, 0, 0] => Compression::Zlib,
            other => return Err(format!("unknown compression code {other:?}")),
        };
        let file_len = r.u64()?;
        let secs = r.u64()? as i64;
        let nanos = r.u32()?;
        let file_mtime = (nanos != u32::MAX).then_some((secs, nanos));
        let spacing = r.u64()?;
        let records = r.u64()?;
        let inflated_len = r.u64()?;
        let count = r.u64()?;
        // Bounded by what the bytes can hold, before anything is allocated for it.
        let room = (r.bytes.len() - r.at) / CHECKPOINT_FIXED_LEN;
        if count == 0 || count > room as u64 {
            return Err(format!("{count} checkpoints cannot fit in the index"));
        }
        let mut checkpoints: Vec<Checkpoint> = Vec::with_capacity(count as usize);
        for i in 0..count {
            let compressed_offset = r.u64()?;
            let [bits, last_byte] = <[u8; 2]>::try_from(r.bytes(2)?).map_err(|_| "cut short")?;
            let inflated_offset = r.u64()?;
            let first_record = r.u64()?;
            let first_record_at = r.u64()?;
            let window_len = r.u32()?;
            let deflated_len = r.u32()?;
            let window_deflated = Arc::from(r.bytes(deflated_len as usize)?);
            let c = Checkpoint {
                compressed_offset,
                bits,
                last_byte,
                inflated_offset,
                first_record,
                first_record_at,
                window_len,
                window_deflated,
            };
            let bad = |what: &str| Err(format!("checkpoint {i}: {what}"));
            if bits > 7 {
                return bad("more than 7 bits");
            }
            if u64::from(window_len) != inflated_offset.min(WINDOW_LEN as u64) {
                return bad("the window is not the 32 KiB before it");
            }
            if compressed_offset > file_len || inflated_offset > inflated_len || first_record_at > inflated_len {
                return bad("beyond the end of the file");
            }
            if first_record_at < inflated_offset || first_record > records {
                return bad("its record boundary is before it or past the last record");
            }
            match checkpoints.last() {
                None if inflated_offset != 0 || first_record != 0 || first_record_at != 0 => {
                    return bad("the first checkpoint is not at the start of the stream")
                }
                Some(prev)
                    if compressed_offset <= prev.compressed_offset
                        || inflated_offset <= prev.inflated_offset
                        || first_record < prev.first_record
                        || first_record_at < prev.first_record_at =>
                {
                    return bad("not after the one before it")
                }
                _ => {}
            }
            checkpoints.push(c);
        }
        if r.at != r.bytes.len() {
            return Err("bytes after the last checkpoint".to_owned());
        }
        Ok(SeekIndex {
            compression,
            file_len,
            file_mtime,
            spacing,
            records,
            inflated_len,
            checkpoints,
        })
    }

    /// Loads the index at `index_path` for the data file `data_path` as it is now: an index
    /// of another file or of another version of it (size or modification time differs) is
    /// refused as stale.
    pub fn load(index_path: &Path, data_path: &Path) -> Result<Self, IndexError> {
        let io_err = |error| IndexError::Io {
            path: index_path.to_path_buf(),
            error,
        };
        let mut bytes = Vec::new();
        Source::open(index_path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(io_err)?;
        let index = Self::from_bytes(&bytes).map_err(|problem| IndexError::BadSeekIndex {
            index_file: index_path.to_path_buf(),
            problem,
        })?;
        let stamp = FileStamp::of(data_path)
            .map_err(|e| IndexError::Record(RecordError::open_failed(e, Some(data_path.to_path_buf()))))?;
        index.check_stamp(index_path, data_path, stamp)?;
        Ok(index)
    }

    fn check_stamp(&self, index_path: &Path, data_path: &Path, stamp: FileStamp) -> Result<(), IndexError> {
        let stale = |problem: String| IndexError::StaleSeekIndex {
            index_file: index_path.to_path_buf(),
            path: data_path.to_path_buf(),
            problem,
        };
        if stamp.len != self.file_len {
            return Err(stale(format!(
                "it indexes a file of {} bytes and this one has {}",
                self.file_len, stamp.len
            )));
        }
        if let (Some(indexed), Some(now)) = (self.file_mtime, stamp.mtime) {
            if indexed != now {
                return Err(stale("the file was modified after it was indexed".to_owned()));
            }
        }
        Ok(())
    }

    /// Saves the index to `path` atomically (a temporary name beside it, renamed into place).
    pub fn save(&self, path: &Path) -> Result<(), IndexError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let io_err = |error| IndexError::Io {
            path: path.to_path_buf(),
            error,
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()));
        let written = File::create_new(&temp)
            .and_then(|mut file| {
                file.write_all(&self.to_bytes())?;
                file.sync_all()
            })
            .and_then(|()| fs::rename(&temp, path));
        if written.is_err() {
            // Best effort: the error that matters is the one returned.
            let _ = fs::remove_file(&temp);
        }
        written.map_err(io_err)
    }

    /// The span holding record `i`: the last checkpoint whose first record is at most `i`.
    pub(crate) fn span_of(&self, i: u64) -> usize {
        self.checkpoints
            .partition_point(|c| c.first_record <= i)
            .saturating_sub(1)
    }

    /// The records of span `c` (`first..end`) and the inflated range they fill.
    pub(crate) fn span_bounds(&self, c: usize) -> (std::ops::Range<u64>, std::ops::Range<u64>) {
        let start = &self.checkpoints[c];
        let next = self.checkpoints[c + 1..]
            .iter()
            .find(|n| n.first_record > start.first_record);
        let (end_record, end_at) = next.map_or((self.records, self.inflated_len), |n| {
            (n.first_record, n.first_record_at)
        });
        (start.first_record..end_record, start.first_record_at..end_at)
    }

    /// Inflates span `c` of `file` (named `path` in errors) and splits it into records.
    pub(crate) fn decode_span(&self, file: &Positional, path: &Arc<Path>, c: usize) -> Result<Span, IndexError> {
        self.decode_span_into(file, path, c, Vec::new())
    }

    /// [`SeekIndex::decode_span`] into `buffer` (a span's data given back, say: see
    /// [`buffer_for_overwrite`]).
    pub(crate) fn decode_span_into(
        &self,
        file: &Positional,
        path: &Arc<Path>,
        c: usize,
        buffer: Vec<u8>,
    ) -> Result<Span, IndexError> {
        let (records, range) = self.span_bounds(c);
        let start = &self.checkpoints[c];
        let fail = |kind: RecordErrorKind, record: u64, offset: u64| {
            IndexError::Record(RecordError {
                kind,
                location: Location {
                    path: Some(path.clone()),
                    offset,
                    record_index: record,
                    decompressed: true,
                },
            })
        };
        let lie = |what: String, compressed: u64, inflated: u64| {
            fail(
                damage(
                    format!("{what} (is the seek index wrong for this file?)"),
                    compressed,
                    inflated,
                ),
                records.start,
                range.start,
            )
        };
        let len = usize::try_from(range.end - range.start).map_err(|_| {
            lie(
                "a span too large for memory".to_owned(),
                start.compressed_offset,
                range.start,
            )
        })?;
        let window = start
            .window()
            .map_err(|what| lie(what, start.compressed_offset, start.inflated_offset))?;
        let mut inflater = RawInflater::new().map_err(|e| lie(e, start.compressed_offset, start.inflated_offset))?;
        inflater
            .resume(start.bits, start.last_byte, &window)
            .map_err(|e| lie(e, start.compressed_offset, start.inflated_offset))?;
        let file_len = file
            .len()
            .map_err(|e| fail(RecordErrorKind::Io(e), records.start, range.start))?;
        // Every byte of `data` is inflated into (the loop ends when the span's range is), so
        // what the buffer held before is never read.
        let mut data = buffer_for_overwrite(buffer, len);
        let mut filled = 0usize;
        // The bytes before the first record of the span are inflated into `skip` and dropped
        // (mostly part of one record: `skip` is no longer than they are).
        let before_first = range.start.saturating_sub(start.inflated_offset);
        let mut skip = vec![0u8; before_first.min(READ_CHUNK as u64) as usize];
        let mut at_in = start.compressed_offset;
        let mut at_out = start.inflated_offset;
        let mut input = vec![0u8; READ_CHUNK];
        let mut input_range = 0..0;
        let mut between_members = false;
        while at_out < range.end {
            if input_range.is_empty() || between_members {
                let n = (file_len.saturating_sub(at_in)).min(READ_CHUNK as u64) as usize;
                if n == 0 {
                    let what = "the compressed stream ends early".to_owned();
                    return Err(fail(damage(what, at_in, at_out), records.start, range.start));
                }
                file.read_exact_at(&mut input[..n], at_in)
                    .map_err(|e| fail(RecordErrorKind::Io(e), records.start, range.start))?;
                input_range = 0..n;
            }
            if between_members {
                // A GZIP member ended inside the span: its 8-byte trailer, then the next header.
                let header = match input[input_range.clone()].get(8..).map(gzip_header_len) {
                    Some(Ok(Some(n))) => n,
                    _ => {
                        let what = "no gzip member header where the last member ends".to_owned();
                        return Err(fail(damage(what, at_in, at_out), records.start, range.start));
                    }
                };
                input_range.start += 8 + header;
                at_in += (8 + header) as u64;
                inflater.reset();
                between_members = false;
                continue;
            }
            let into_data = at_out >= range.start;
            let out: &mut [u8] = if into_data {
                &mut data[filled..]
            } else {
                let n = ((range.start - at_out) as usize).min(skip.len());
                &mut skip[..n]
            };
            let step = inflater
                .inflate(&input[input_range.clone()], out, false)
                .map_err(|what| {
                    let what = format!("invalid compressed data ({what})");
                    fail(damage(what, at_in, at_out), records.start, range.start)
                })?;
            input_range.start += step.consumed;
            at_in += step.consumed as u64;
            at_out += step.produced as u64;
            if into_data {
                filled += step.produced;
            }
            match step.stop {
                Stop::StreamEnd if at_out < range.end => match self.compression {
                    Compression::Gzip => between_members = true,
                    _ => {
                        let what = "the compressed stream ends before the records the index promises".to_owned();
                        return Err(lie(what, at_in, at_out));
                    }
                },
                Stop::More if step.consumed == 0 && step.produced == 0 && !input_range.is_empty() => {
                    let what = "the inflater made no progress".to_owned();
                    return Err(fail(damage(what, at_in, at_out), records.start, range.start));
                }
                _ => {}
            }
        }
        // Split into records, checking the framing against the index.
        let mut starts = Vec::with_capacity((records.end - records.start) as usize);
        let mut at = 0usize;
        while at < data.len() {
            let record = records.start + starts.len() as u64;
            let Some(bytes) = data.get(at..at + HEADER_LEN) else {
                return Err(lie(
                    "a record header runs past the span's end".to_owned(),
                    start.compressed_offset,
                    range.start + at as u64,
                ));
            };
            let mut header = [0u8; HEADER_LEN];
            header.copy_from_slice(bytes);
            let header = Header::decode(&header);
            if !header.is_valid() {
                let kind = RecordErrorKind::LengthCrcMismatch {
                    stored: header.stored_crc,
                    computed: header.actual_crc,
                    looks_compressed: None,
                };
                return Err(fail(kind, record, range.start + at as u64));
            }
            starts.push(at);
            at = usize::try_from(header.len)
                .ok()
                .and_then(|l| at.checked_add(l)?.checked_add(FRAMING_LEN))
                .unwrap_or(usize::MAX);
        }
        if at != data.len() || starts.len() as u64 != records.end - records.start {
            return Err(lie(
                format!(
                    "the span holds {} records where the index says {}",
                    starts.len(),
                    records.end - records.start
                ),
                start.compressed_offset,
                range.start,
            ));
        }
        starts.push(data.len());
        Ok(Span {
            first_record: records.start,
            first_at: range.start,
            data,
            starts,
        })
    }
}

/// `buffer` made `len` bytes long for a read that writes every one of them: the bytes it
/// held stay as they are (a buffer used again is not zeroed again, nor its pages faulted in
/// again); only bytes it never held are zeroed.
pub(crate) fn buffer_for_overwrite(mut buffer: Vec<u8>, len: usize) -> Vec<u8> {
    if buffer.len() >= len {
        buffer.truncate(len);
    } else {
        buffer.resize(len, 0);
    }
    buffer
}

/// The inflated records of one span.
#[derive(Debug)]
pub(crate) struct Span {
    /// The number of its first record in the file.
    pub(crate) first_record: u64,
    /// The inflated offset of its first record.
    pub(crate) first_at: u64,
    /// The framed records, one after another.
    pub(crate) data: Vec<u8>,
    /// Where each record starts in `data`, and `data.len()` last.
    pub(crate) starts: Vec<usize>,
}

fn build_damage(what: impl Into<String>, compressed: u64, inflated: u64, walker: &RecordWalker) -> BuildError {
    BuildError {
        kind: damage(what, compressed, inflated),
        record_index: walker.count,
        offset: walker.next_at.min(inflated),
    }
}

fn io_build_error(e: io::Error, offset: u64, record_index: u64) -> BuildError {
    BuildError {
        kind: RecordErrorKind::Io(e),
        record_index,
        offset,
    }
}

fn compression_code(c: Compression) -> u8 {
    match c {
        Compression::Gzip => 1,
        _ => 2,
    }
}

/// Little-endian fields read from the front of a byte slice.
struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or("the index is cut short")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::test_files::compressed;
    use proptest::prelude::*;
    use std::sync::Mutex;

    /// Every record of `bytes` (a compressed stream) through `index`, span by span.
    fn read_all(index: &SeekIndex, bytes: &[u8]) -> Vec<Vec<u8>> {
        let file = Positional::Stream {
            stream: Mutex::new(Box::new(io::Cursor::new(bytes.to_vec()))),
            len: bytes.len() as u64,
        };
        let path: Arc<Path> = Arc::from(Path::new("memory"));
        let mut out = Vec::new();
        for i in 0..index.len() {
            let span = index.decode_span(&file, &path, index.span_of(i)).expect("decode");
            let k = (i - span.first_record) as usize;
            let frame = &span.data[span.starts[k]..span.starts[k + 1]];
            out.push(frame[HEADER_LEN..frame.len() - 4].to_vec());
        }
        out
    }

    #[test]
    fn a_buffer_for_overwrite_keeps_what_it_held_and_zeroes_only_what_it_never_held() {
        assert_eq!(buffer_for_overwrite(vec![7; 5], 3), vec![7; 3]);
        assert_eq!(buffer_for_overwrite(vec![7; 2], 4), vec![7, 7, 0, 0]);
        assert_eq!(buffer_for_overwrite(Vec::new(), 2), vec![0, 0]);
    }

    #[test]
    fn a_span_decoded_into_another_span_s_buffer_is_the_span_decoded_afresh() {
        // Bytes that hardly compress, so that checkpoints come every few records.
        let mut rng = crate::rng::SplitMix64::new(58);
        let records: Vec<Vec<u8>> = (0..300usize)
            .map(|i| (0..(i * 37) % 5000).map(|_| rng.next_u64() as u8).collect())
            .collect();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let bytes = compressed(&refs, Compression::Gzip);
        let index = SeekIndex::build_from(bytes.as_slice(), Compression::Gzip, 40_000)
            .map_err(|e| e.kind)
            .expect("build");
        let file = Positional::Stream {
            stream: Mutex::new(Box::new(io::Cursor::new(bytes.clone()))),
            len: bytes.len() as u64,
        };
        let path: Arc<Path> = Arc::from(Path::new("memory"));
        let mut spans: Vec<usize> = (0..index.len()).map(|i| index.span_of(i)).collect();
        spans.dedup();
        assert!(spans.len() > 4, "spans of several sizes");
        // Each span read into the buffer of the one before (longer or shorter, full of other
        // records' bytes), in both directions.
        let mut buffer = vec![0xA5; 3 * 40_000];
        for &c in spans.iter().chain(spans.iter().rev()) {
            let fresh = index.decode_span(&file, &path, c).expect("decode");
            let reused = index.decode_span_into(&file, &path, c, buffer).expect("decode");
            assert_eq!(reused.data, fresh.data, "span {c}");
            assert_eq!(reused.starts, fresh.starts, "span {c}");
            buffer = reused.data;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn every_record_reads_back_and_the_index_round_trips(
            records in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..4000), 0..80),
            zlib in any::<bool>(),
            spacing in 32_768u64..120_000,
        ) {
            let compression = if zlib { Compression::Zlib } else { Compression::Gzip };
            let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
            let bytes = compressed(&refs, compression);
            let index = SeekIndex::build_from(bytes.as_slice(), compression, spacing).map_err(|e| e.kind).expect("build");
            prop_assert_eq!(index.len(), records.len() as u64);
            prop_assert_eq!(SeekIndex::from_bytes(&index.to_bytes()).expect("read back"), index.clone());
            prop_assert_eq!(read_all(&index, &bytes), records);
        }

        #[test]
        fn damaged_index_bytes_are_refused_or_read_the_same(at in any::<usize>(), bit in 0u8..8) {
            let records: Vec<Vec<u8>> = (0..200u32).map(|i| format!("{i}").repeat(300).into_bytes()).collect();
            let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
            let bytes = compressed(&refs, Compression::Gzip);
            let index = SeekIndex::build_from(bytes.as_slice(), Compression::Gzip, 40_000).map_err(|e| e.kind).expect("build");
            let mut stored = index.to_bytes();
            let at = at % stored.len();
            stored[at] ^= 1 << bit;
            // The checksum sees every single-bit change.
            prop_assert!(SeekIndex::from_bytes(&stored).is_err());
        }
    }

    #[test]
    fn a_checkpoint_sits_on_a_record_boundary_it_names() {
        let mut rng = crate::rng::SplitMix64::new(3);
        let records: Vec<Vec<u8>> = (0..3000)
            .map(|_| (0..rng.below(300)).map(|_| b"0123456789"[rng.below(10)]).collect())
            .collect();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let bytes = compressed(&refs, Compression::Zlib);
        let index = SeekIndex::build_from(bytes.as_slice(), Compression::Zlib, 40_000)
            .map_err(|e| e.kind)
            .expect("build");
        assert!(index.checkpoints().len() > 3);
        let framed: Vec<u64> = records.iter().map(|r| (r.len() + FRAMING_LEN) as u64).collect();
        for c in index.checkpoints() {
            let before: u64 = framed[..c.first_record as usize].iter().sum();
            assert_eq!(before, c.first_record_at);
            assert!(c.first_record_at >= c.inflated_offset);
        }
    }
}

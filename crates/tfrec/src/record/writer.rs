//! Streaming TFRecord writer, plain or as one GZIP/ZLIB stream.

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::GzBuilder;

use super::compression::{Compression, CompressionChoice};
use super::format::{encode_header, masked_crc32c};

/// Settings of a [`RecordWriter`]. New settings may be added: build it from `Default` and the
/// setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WriterOptions {
    /// The compression. Default: [`CompressionChoice::Auto`], which for [`RecordWriter::create`]
    /// means from the file extension (`.gz` gzip, `.zz`/`.zlib` zlib, else none) and for
    /// [`RecordWriter::with_options`] means none.
    pub compression: CompressionChoice,
    /// The deflate level, 0 (store) to 9 (smallest). Default: 6, zlib's default and
    /// TensorFlow's (`Z_DEFAULT_COMPRESSION`).
    pub level: u32,
    /// Bytes buffered before they reach the output (or the compressor). Default: 256 KiB.
    pub buffer_size: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            compression: CompressionChoice::Auto,
            level: 6,
            buffer_size: 256 << 10,
        }
    }
}

impl WriterOptions {
    /// Sets [`WriterOptions::compression`].
    pub fn compression(mut self, choice: impl Into<CompressionChoice>) -> Self {
        self.compression = choice.into();
        self
    }
    /// Sets [`WriterOptions::level`] (clamped to 0..=9).
    pub fn level(mut self, level: u32) -> Self {
        self.level = level.min(9);
        self
    }
}

/// A failed write, with the file and the record it was writing.
#[derive(Debug)]
pub struct WriteError {
    /// The file, for a writer created on one.
    pub path: Option<Arc<Path>>,
    /// Index of the record being written, or the number written when finishing.
    pub record_index: u64,
    /// What failed. Its text is part of this error's, so it is not also given as `source()`
    /// (see [`crate::Error`]).
    pub source: io::Error,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: ", p.display())?,
            None => f.write_str("<stream>: ")?,
        }
        write!(f, "writing record {} failed: {}", self.record_index, self.source)
    }
}

impl std::error::Error for WriteError {}

/// The caller's writer, which can be shut so that nothing more reaches it: a writer dropped
/// without `finish` shuts it before its compressor's own `Drop` would write the stream's end.
struct Gate<W: Write> {
    inner: W,
    /// False once the [`RecordWriter`] was abandoned; every write then fails.
    open: bool,
}

impl<W: Write> Write for Gate<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.open {
            self.inner.write(buf)
        } else {
            Err(io::Error::other("the record writer was dropped without finish"))
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        if self.open {
            self.inner.flush()
        } else {
            Ok(())
        }
    }
}

/// The output below the buffer: the raw writer or a compressor over it.
enum Encoder<W: Write> {
    Plain(W),
    Gzip(GzEncoder<W>),
    Zlib(ZlibEncoder<W>),
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::Plain(w) => w.write(buf),
            Encoder::Gzip(w) => w.write(buf),
            Encoder::Zlib(w) => w.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Encoder::Plain(w) => w.write_all(buf),
            Encoder::Gzip(w) => w.write_all(buf),
            Encoder::Zlib(w) => w.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Plain(w) => w.flush(),
            Encoder::Gzip(w) => w.flush(),
            Encoder::Zlib(w) => w.flush(),
        }
    }
}

impl<W: Write> Encoder<Gate<W>> {
    fn shut(&mut self) {
        let gate = match self {
            Encoder::Plain(w) => w,
            Encoder::Gzip(w) => w.get_mut(),
            Encoder::Zlib(w) => w.get_mut(),
        };
        gate.open = false;
    }
}

impl<W: Write> Encoder<W> {
    fn finish(self) -> io::Result<W> {
        match self {
            Encoder::Plain(w) => Ok(w),
            Encoder::Gzip(w) => w.finish(),
            Encoder::Zlib(w) => w.finish(),
        }
    }
}

/// Writes framed records to any [`Write`].
///
/// Call [`RecordWriter::finish`] at the end: it completes the compressed stream and reports any
/// error. Only `finish` completes a stream. A writer dropped without it (after an error, or on
/// an early return) abandons the output: the records still in its buffer are discarded and a
/// GZIP/ZLIB stream is left without its end, so a reader reports it as truncated instead of
/// reading it as complete. A plain output keeps what had already reached it, which may end
/// inside a record or, by chance, on a record boundary: write to a temporary file and rename it
/// after `finish` when a partial output must never be mistaken for a whole one.
///
/// A GZIP file, read back with its compression found from the name:
///
/// ```
/// use tfrec::record::{Compression, ReaderOptions, RecordReader, RecordWriter, WriterOptions};
///
/// let dir = std::env::temp_dir().join(format!("tfrec-writer-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("part-0.tfrecord.gz");
///
/// let options = WriterOptions::default().compression(Compression::Gzip);
/// let mut writer = RecordWriter::create(&path, options)?;
/// for i in 0..100u32 {
///     writer.write_record(&i.to_le_bytes())?;
/// }
/// writer.finish()?; // completes the GZIP stream
///
/// let reader = RecordReader::open(&path, ReaderOptions::default())?;
/// assert_eq!(reader.compression(), Compression::Gzip);
/// assert_eq!(reader.records().count(), 100);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), tfrec::Error>(())
/// ```
pub struct RecordWriter<W: Write> {
    /// `None` once finished or abandoned.
    out: Option<BufWriter<Encoder<Gate<W>>>>,
    compression: Compression,
    path: Option<Arc<Path>>,
    records: u64,
    data_bytes: u64,
}

impl<W: Write> RecordWriter<W> {
    /// A writer of plain records with default options.
    pub fn new(out: W) -> Self {
        Self::with_options(out, WriterOptions::default())
    }

    /// A writer with `options`; [`CompressionChoice::Auto`] means no compression here.
    pub fn with_options(out: W, options: WriterOptions) -> Self {
        let compression = match options.compression {
            CompressionChoice::Exactly(c) => c,
            CompressionChoice::Auto => Compression::None,
        };
        let level = flate2::Compression::new(options.level.min(9));
        let out = Gate { inner: out, open: true };
        let encoder = match compression {
            Compression::None => Encoder::Plain(out),
            // TensorFlow's gzip header has no name, mtime 0 and OS 3 (Unix); we write the same.
            Compression::Gzip => Encoder::Gzip(GzBuilder::new().operating_system(3).write(out, level)),
            Compression::Zlib => Encoder::Zlib(ZlibEncoder::new(out, level)),
        };
        RecordWriter {
            out: Some(BufWriter::with_capacity(options.buffer_size.max(1), encoder)),
            compression,
            path: None,
            records: 0,
            data_bytes: 0,
        }
    }

    /// Appends one record.
    pub fn write_record(&mut self, data: &[u8]) -> Result<(), WriteError> {
        let result = match self.out.as_mut() {
            Some(out) => write_framed(out, data),
            None => Err(io::Error::other("the writer was already finished")),
        };
        result.map_err(|source| self.error(source))?;
        self.records += 1;
        self.data_bytes += data.len() as u64;
        Ok(())
    }

    /// Pushes buffered records down to the output. A compressed stream stays open (a sync
    /// flush is written, so what was written so far can be decompressed).
    pub fn flush(&mut self) -> Result<(), WriteError> {
        let result = match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        };
        result.map_err(|source| self.error(source))
    }

    /// Completes the stream (the compressor's trailer), flushes it, and returns the output.
    pub fn finish(mut self) -> Result<W, WriteError> {
        self.finish_inner()
    }

    /// Records written so far.
    pub fn records_written(&self) -> u64 {
        self.records
    }

    /// Data bytes written so far (framing and compression excluded).
    pub fn data_bytes_written(&self) -> u64 {
        self.data_bytes
    }

    /// The compression this writer applies.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Sets the path named in errors, for a writer on a stream that will become that file (a
    /// temporary file renamed into place when complete, say).
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(Arc::from(path.into()));
        self
    }

    fn finish_inner(&mut self) -> Result<W, WriteError> {
        let out = self
            .out
            .take()
            .ok_or_else(|| self.error(io::Error::other("the writer was already finished")))?;
        let encoder = out.into_inner().map_err(|e| self.error(e.into_error()))?;
        let mut w = encoder.finish().map_err(|e| self.error(e))?.inner;
        w.flush().map_err(|e| self.error(e))?;
        Ok(w)
    }

    fn error(&self, source: io::Error) -> WriteError {
        WriteError {
            path: self.path.clone(),
            record_index: self.records,
            source,
        }
    }
}

fn write_framed<W: Write>(out: &mut W, data: &[u8]) -> io::Result<()> {
    out.write_all(&encode_header(data.len() as u64))?;
    out.write_all(data)?;
    out.write_all(&masked_crc32c(data).to_le_bytes())
}

impl RecordWriter<File> {
    /// Creates (or truncates) a file. With [`CompressionChoice::Auto`] the extension decides.
    pub fn create(path: impl AsRef<Path>, options: WriterOptions) -> Result<Self, WriteError> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|source| WriteError {
            path: Some(Arc::from(path)),
            record_index: 0,
            source,
        })?;
        let options = match options.compression {
            CompressionChoice::Auto => {
                let c = Compression::from_extension(path).unwrap_or(Compression::None);
                options.compression(c)
            }
            CompressionChoice::Exactly(_) => options,
        };
        let mut writer = RecordWriter::with_options(file, options);
        writer.path = Some(Arc::from(PathBuf::from(path)));
        Ok(writer)
    }
}

impl<W: Write> Drop for RecordWriter<W> {
    /// Abandons the output if `finish` was not called: the buffer is discarded and the gate
    /// shut before the compressor is dropped, so no stream end is written (see [`RecordWriter`]).
    fn drop(&mut self) {
        if let Some(out) = self.out.take() {
            // `into_parts` hands back the buffer without writing it.
            let (mut encoder, _unwritten) = out.into_parts();
            encoder.shut();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// A disk that is full from the first byte.
    struct FullDisk;
    impl Write for FullDisk {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::StorageFull))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_names_the_file_it_will_become() {
        let mut writer = RecordWriter::new(FullDisk).with_path("out/part-0.tfrecord");
        let error = writer
            .write_record(&[7; 1 << 20])
            .err()
            .or_else(|| writer.finish().err())
            .expect("the disk is full");
        assert!(error.to_string().starts_with("out/part-0.tfrecord: "), "{error}");
    }

    fn abandoned(compression: Compression, records: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let options = WriterOptions::default().compression(compression);
        let mut writer = RecordWriter::with_options(&mut out, options);
        for i in 0..records {
            writer
                .write_record(format!("record {i}").repeat(50).as_bytes())
                .unwrap();
        }
        drop(writer);
        out
    }

    #[test]
    fn drop_without_finish_never_ends_a_compressed_stream() {
        // Enough records that part of the stream has reached the output before the drop.
        let gzip = abandoned(Compression::Gzip, 20_000);
        assert!(!gzip.is_empty());
        let mut all = Vec::new();
        let read = flate2::read::MultiGzDecoder::new(gzip.as_slice()).read_to_end(&mut all);
        assert!(read.is_err(), "an abandoned gzip stream decompressed as complete");

        let zlib = abandoned(Compression::Zlib, 20_000);
        let read = flate2::read::ZlibDecoder::new(zlib.as_slice()).read_to_end(&mut Vec::new());
        assert!(read.is_err(), "an abandoned zlib stream decompressed as complete");
    }

    #[test]
    fn drop_without_finish_discards_the_buffer() {
        assert!(abandoned(Compression::None, 3).is_empty());
        assert!(abandoned(Compression::Gzip, 3).is_empty());
    }

    #[test]
    fn finish_completes_the_stream() {
        let mut out = Vec::new();
        let mut writer = RecordWriter::with_options(&mut out, WriterOptions::default().compression(Compression::Gzip));
        writer.write_record(b"one").unwrap();
        writer.finish().unwrap();
        let mut all = Vec::new();
        flate2::read::MultiGzDecoder::new(out.as_slice())
            .read_to_end(&mut all)
            .unwrap();
        assert_eq!(all.len(), 12 + 3 + 4);
    }
}

//! Opening: the compression chosen (by name, extension or sniffing), files opened with their
//! size known, and seeking in a plain seekable stream.

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::super::compression::DETECT_PREFIX;
use super::super::compression::{decoder, peek_prefix, Compression, CompressionChoice};
use super::super::error::{RecordError, RecordErrorKind};
use super::super::remote::Source;
use super::{ReaderOptions, RecordReader};

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
    /// Opens a file, or with the `remote` feature an object a URL names (`s3://`, `gs://`,
    /// `az://`, `http(s)://`, see [`crate::record::remote`]). With [`CompressionChoice::Auto`] a compressed extension decides (`.gz`
    /// GZIP, `.zz` ZLIB, see [`Compression::from_extension`]); any other file, `.tfrecord` ones
    /// included, is detected from its first bytes ([`Compression::detect`]), so a GZIP file
    /// named `.tfrecord` is read as GZIP ([`RecordReader::compression`] says which was chosen). For a plain
    /// file the size is taken now, so a length that runs past the end is reported before
    /// anything is read for it.
    pub fn open(path: impl AsRef<Path>, options: ReaderOptions) -> Result<Self, RecordError> {
        Self::open_with(path.as_ref(), options, |file, _| Box::new(file))
    }

    /// [`RecordReader::open`], with the file wrapped by `wrap` (told its compression) before
    /// decompression.
    pub(crate) fn open_with(
        path: &Path,
        options: ReaderOptions,
        wrap: impl FnOnce(Source, Compression) -> Box<dyn Read + Send>,
    ) -> Result<Self, RecordError> {
        let io_err = |e| RecordError::open_failed(e, Some(path.to_path_buf()));
        let mut file = Source::open(path).map_err(io_err)?;
        let compression = file_compression(path, &mut file, options.compression).map_err(io_err)?;
        let stream_len = match compression {
            Compression::None => Some(file.len().map_err(io_err)?),
            _ => None,
        };
        let mut reader = RecordReader::decompressing(wrap(file, compression), compression, options).with_path(path);
        reader.stream_len = stream_len;
        Ok(reader)
    }
}

/// The compression `choice` gives for the file at `path` (opened as `file`, left at its start).
/// With [`CompressionChoice::Auto`] a compressed extension decides; any other name, the first
/// bytes ([`Compression::detect`]).
pub(crate) fn file_compression<F: Read + Seek>(
    path: &Path,
    file: &mut F,
    choice: CompressionChoice,
) -> io::Result<Compression> {
    Ok(match choice {
        CompressionChoice::Exactly(c) => c,
        CompressionChoice::Auto => match Compression::from_extension(path) {
            Some(c @ (Compression::Gzip | Compression::Zlib)) => c,
            // A plain name is no proof: compressed files are often named `.tfrecord`. The
            // first bytes decide, and only a GZIP or ZLIB stream that decodes to a valid
            // header is read as one; a plain file with a damaged first header stays plain.
            Some(Compression::None) | None => {
                let mut prefix = Vec::with_capacity(DETECT_PREFIX);
                (&mut *file).take(DETECT_PREFIX as u64).read_to_end(&mut prefix)?;
                file.seek(SeekFrom::Start(0))?;
                Compression::detect(&prefix)
            }
        },
    })
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

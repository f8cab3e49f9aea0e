//! Where a path is opened: a local file, or an object in a store named by a URL (`s3://`,
//! `gs://`, `az://`, `abfs://`, `http(s)://`; `file://` is a local path). Owns telling the two
//! apart, the sequential and positional readers every opener uses, and (with the `remote`
//! feature) the object store client: `RemoteReader` (ranged GETs with read-ahead and retries),
//! `RemoteWriter` (multipart upload, visible only once finished) and the listings that globs and
//! prefixes expand over. Without the feature a URL is refused with
//! an error that says so, instead of reading as a missing file.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[cfg(feature = "remote")]
mod client;
#[cfg(feature = "remote")]
mod list;
#[cfg(feature = "remote")]
mod writer;

#[cfg(feature = "remote")]
pub use client::{RemoteObject, RemoteOptions, RemoteReader};
#[cfg(feature = "remote")]
pub(crate) use list::expand_url;
#[cfg(feature = "remote")]
pub use list::{delete, list_dir};
#[cfg(feature = "remote")]
pub use writer::RemoteWriter;

/// The URL schemes read through an object store (`file://` is not one: it names a local path).
const SCHEMES: [&str; 10] = [
    "s3://", "s3a://", "gs://", "az://", "azure://", "abfs://", "abfss://", "adl://", "http://", "https://",
];

/// Whether `input` names an object in a store (a URL of one of the object store schemes) rather
/// than a local path.
pub fn is_url(input: &str) -> bool {
    let lower = input.get(..8).unwrap_or(input).to_ascii_lowercase();
    SCHEMES.iter().any(|s| lower.starts_with(s))
}

/// [`is_url`] for a path (URLs travel through the library as paths).
pub fn is_url_path(path: &Path) -> bool {
    path.to_str().is_some_and(is_url)
}

/// The local path a `file://` URL names (`file:///data/x` is `/data/x`), `None` for anything
/// else.
pub(crate) fn file_url_path(input: &str) -> Option<PathBuf> {
    let rest = input.strip_prefix("file://")?;
    // `file://localhost/x` is `/x`; any other host is not a local file.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    rest.starts_with('/').then(|| PathBuf::from(rest))
}

/// `Ok` when this build reads and writes URLs (the `remote` feature); else the error every
/// opener gives for `url`, so a command can refuse one before doing any work.
pub fn ensure_supported(url: &str) -> io::Result<()> {
    if cfg!(feature = "remote") {
        Ok(())
    } else {
        Err(unsupported(url))
    }
}

/// Uploads the local file `local` as the object `url` names, atomically (see `RemoteWriter`
/// when the feature is on).
pub fn upload_file(local: &Path, url: &str) -> io::Result<()> {
    ensure_supported(url)?;
    #[cfg(feature = "remote")]
    {
        let mut writer = RemoteWriter::create(url)?;
        io::copy(&mut File::open(local)?, &mut writer)?;
        writer.finish()
    }
    #[cfg(not(feature = "remote"))]
    {
        let _ = local;
        Ok(())
    }
}

/// The error for a URL in a build without the `remote` feature.
fn unsupported(url: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("built without object-store support: {url} (enable the `remote` feature)"),
    )
}

#[cfg(not(feature = "remote"))]
pub(crate) fn expand_url(url: &str, _allow_empty: bool) -> Result<Vec<PathBuf>, super::RecordError> {
    Err(super::RecordError::open_failed(unsupported(url), Some(url.into())))
}

/// A file or an object read from its start, seekable.
pub(crate) enum Source {
    File(File),
    #[cfg(feature = "remote")]
    Remote(Box<RemoteReader>),
}

impl Source {
    /// Opens `path`: a local file, or the object a URL names.
    pub(crate) fn open(path: &Path) -> io::Result<Source> {
        match path.to_str().filter(|p| is_url(p)) {
            None => File::open(path).map(Source::File),
            #[cfg(feature = "remote")]
            Some(url) => Ok(Source::Remote(Box::new(
                RemoteObject::open(url, RemoteOptions::from_env())?.reader(),
            ))),
            #[cfg(not(feature = "remote"))]
            Some(url) => Err(unsupported(url)),
        }
    }

    /// The size in bytes.
    pub(crate) fn len(&self) -> io::Result<u64> {
        match self {
            Source::File(f) => Ok(f.metadata()?.len()),
            #[cfg(feature = "remote")]
            Source::Remote(r) => Ok(r.object().len()),
        }
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File(f) => f.read(buf),
            #[cfg(feature = "remote")]
            Source::Remote(r) => r.read(buf),
        }
    }
}

impl Seek for Source {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Source::File(f) => f.seek(pos),
            #[cfg(feature = "remote")]
            Source::Remote(r) => r.seek(pos),
        }
    }
}

/// The size in bytes of a local file, or of the object a URL names (one HEAD request).
pub fn size_of(path: &Path) -> io::Result<u64> {
    match path.to_str().filter(|p| is_url(p)) {
        None => Ok(std::fs::metadata(path)?.len()),
        #[cfg(feature = "remote")]
        Some(url) => Ok(RemoteObject::open(url, RemoteOptions::from_env())?.len()),
        #[cfg(not(feature = "remote"))]
        Some(url) => Err(unsupported(url)),
    }
}

/// A file or an object read at given offsets through `&self` (no shared position), for random
/// access.
pub(crate) enum Positional {
    File(File),
    #[cfg(feature = "remote")]
    Remote(RemoteObject),
    /// Any seekable stream (a buffer in memory, a binding's file object): reads take turns
    /// behind the lock, since a stream has one position.
    Stream {
        stream: Mutex<Box<dyn SeekRead>>,
        len: u64,
    },
}

/// A stream [`Positional`] can read at offsets.
pub(crate) trait SeekRead: Read + Seek + Send {}
impl<T: Read + Seek + Send> SeekRead for T {}

impl std::fmt::Debug for Positional {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Positional::File(file) => f.debug_tuple("File").field(file).finish(),
            #[cfg(feature = "remote")]
            Positional::Remote(o) => f.debug_tuple("Remote").field(o).finish(),
            Positional::Stream { len, .. } => f.debug_struct("Stream").field("len", len).finish_non_exhaustive(),
        }
    }
}

impl Positional {
    /// Turns an opened [`Source`] into positional reads of the same file or object.
    pub(crate) fn from_source(source: Source) -> Positional {
        match source {
            Source::File(f) => Positional::File(f),
            #[cfg(feature = "remote")]
            Source::Remote(r) => Positional::Remote(r.object().clone()),
        }
    }

    /// The size in bytes.
    pub(crate) fn len(&self) -> io::Result<u64> {
        match self {
            Positional::File(f) => Ok(f.metadata()?.len()),
            #[cfg(feature = "remote")]
            Positional::Remote(o) => Ok(o.len()),
            Positional::Stream { len, .. } => Ok(*len),
        }
    }

    /// Fills `buf` from `offset`.
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        match self {
            Positional::File(f) => read_exact_at(f, buf, offset),
            #[cfg(feature = "remote")]
            Positional::Remote(o) => o.read_exact_at(buf, offset),
            Positional::Stream { stream, .. } => {
                let mut stream = stream
                    .lock()
                    .map_err(|_| io::Error::other("an earlier read of this stream panicked"))?;
                stream.seek(SeekFrom::Start(offset))?;
                stream.read_exact(buf)
            }
        }
    }

    /// Whether this reads an object or a stream rather than a local file (so nothing is
    /// written beside it).
    pub(crate) fn is_remote(&self) -> bool {
        !matches!(self, Positional::File(_))
    }
}

/// Fills `buf` from `offset` of `file` (`pread`), without moving a shared position.
#[cfg(unix)]
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
pub(crate) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    // `seek_read` moves the file's cursor too, which nothing here relies on.
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
pub(crate) fn read_exact_at(_file: &File, _buf: &mut [u8], _offset: u64) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "positional reads are not available on this platform",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        for url in [
            "s3://b/k",
            "GS://b/k",
            "az://c/k",
            "abfs://c@a/k",
            "https://h/x",
            "http://h:1/x",
        ] {
            assert!(is_url(url), "{url}");
        }
        for path in ["data/s3://x", "/tmp/a.tfrecord", "file:///tmp/a", "s3:/b", ""] {
            assert!(!is_url(path), "{path}");
        }
        assert_eq!(file_url_path("file:///tmp/a"), Some(PathBuf::from("/tmp/a")));
        assert_eq!(file_url_path("file://localhost/tmp/a"), Some(PathBuf::from("/tmp/a")));
        assert_eq!(file_url_path("file://host/tmp/a"), None);
    }

    #[cfg(not(feature = "remote"))]
    #[test]
    fn a_url_without_the_feature_says_so() {
        let error = Source::open(Path::new("s3://bucket/data.tfrecord"))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("built without object-store support: s3://bucket/data.tfrecord (enable the `remote` feature)")
        );
    }
}

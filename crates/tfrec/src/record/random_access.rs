//! Random access to plain TFRecord files: record N read with one positional read (`pread`) and
//! both its CRCs checked, through an index loaded from beside the file or built once and cached
//! there. [`RecordFile`] is one file, [`RecordFiles`] many files as one sequence.
//!
//! Reads take `&self` (no seek position is shared), so threads can share one `RecordFile`.

use std::io;
use std::io::Read as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::compression::{Compression, CompressionChoice, DETECT_PREFIX};
use super::error::{Location, RecordError, RecordErrorKind};
use super::format::{decode_footer, masked_crc32c, Header, FOOTER_LEN, FRAMING_LEN, HEADER_LEN};
use super::index::{IndexEntry, IndexError, RecordIndex};
use super::reader::{file_compression, RecordReader};
use super::remote::{Positional, Source};

/// A plain TFRecord file opened for random access.
///
/// ```
/// use tfrec::record::{RecordFile, RecordWriter, WriterOptions};
///
/// let dir = std::env::temp_dir().join(format!("tfrec-random-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("data.tfrecord");
/// let mut writer = RecordWriter::create(&path, WriterOptions::default())?;
/// for i in 0..1000 {
///     writer.write_record(format!("record {i}").as_bytes())?;
/// }
/// writer.finish()?;
///
/// // Builds the index (and saves it as `data.tfrecord.idx`); the next open loads it.
/// let file = RecordFile::open(&path)?;
/// assert_eq!(file.len(), 1000);
/// assert_eq!(file.get(777)?, b"record 777");
/// assert_eq!(file.get_many(&[3, 1])?, [b"record 3".to_vec(), b"record 1".to_vec()]);
/// assert!(file.get(1000).is_err());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), tfrec::Error>(())
/// ```
#[derive(Debug)]
pub struct RecordFile {
    file: Positional,
    path: Arc<Path>,
    index: RecordIndex,
    /// Where the index was loaded from or saved to; `None` when it lives only in memory.
    index_file: Option<PathBuf>,
}

impl RecordFile {
    /// Opens `path` with the index beside it ([`RecordIndex::default_path`], `FILE.idx`). A
    /// missing index is built by reading the file once and saved there when the directory is
    /// writable, else kept in memory.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, IndexError> {
        let path = path.as_ref();
        Self::open_with_index_file(path, RecordIndex::default_path(path))
    }

    /// As [`RecordFile::open`], with the index at `index_path` (loaded if it exists, else built
    /// and saved there when possible). Any `offset length` index works: `tfrec index`'s, DALI's
    /// `tfrecord2idx`, the `tfrecord` package's.
    pub fn open_with_index_file(path: impl AsRef<Path>, index_path: impl Into<PathBuf>) -> Result<Self, IndexError> {
        let path = path.as_ref();
        let index_path = index_path.into();
        let file = open_plain(path)?;
        let (index, index_file) = match RecordIndex::load(&index_path) {
            Ok(index) => (index, Some(index_path)),
            Err(IndexError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => {
                let index = RecordIndex::build(path)?;
                // A read-only directory only costs the next process a scan. Nothing is
                // written into a bucket unasked: an object's index stays in memory.
                let saved = !file.is_remote() && index.save(&index_path).is_ok();
                (index, saved.then_some(index_path))
            }
            Err(e) => return Err(e),
        };
        Self::from_parts(file, path, index, index_file)
    }

    /// Opens `path` with an index already in memory.
    pub fn with_index(path: impl AsRef<Path>, index: RecordIndex) -> Result<Self, IndexError> {
        let path = path.as_ref();
        Self::from_parts(open_plain(path)?, path, index, None)
    }

    /// Random access to a plain TFRecord stream that can seek: a buffer in memory, or a file
    /// object a binding hands over. The stream is read once to build the index (kept in
    /// memory); `name` stands for it in errors. A compressed stream is refused, as
    /// [`RecordFile::open`] refuses a compressed file.
    ///
    /// ```
    /// use tfrec::record::{RecordFile, RecordWriter, WriterOptions};
    ///
    /// let mut writer = RecordWriter::with_options(Vec::new(), WriterOptions::default());
    /// for i in 0..10 {
    ///     writer.write_record(format!("record {i}").as_bytes())?;
    /// }
    /// let bytes = writer.finish()?;
    /// let file = RecordFile::from_seekable("<memory>", std::io::Cursor::new(bytes))?;
    /// assert_eq!(file.get(7)?, b"record 7");
    /// # Ok::<(), tfrec::Error>(())
    /// ```
    pub fn from_seekable<S>(name: impl AsRef<Path>, mut stream: S) -> Result<Self, IndexError>
    where
        S: io::Read + io::Seek + Send + 'static,
    {
        let path = name.as_ref();
        let open_failed = |e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf())));
        let len = stream.seek(io::SeekFrom::End(0)).map_err(open_failed)?;
        stream.seek(io::SeekFrom::Start(0)).map_err(open_failed)?;
        let mut prefix = Vec::new();
        io::Read::by_ref(&mut stream)
            .take(DETECT_PREFIX as u64)
            .read_to_end(&mut prefix)
            .map_err(open_failed)?;
        let compression = Compression::detect(&prefix);
        if compression != Compression::None {
            return Err(IndexError::NeedsUncompressed {
                path: path.to_path_buf(),
                compression,
            });
        }
        stream.seek(io::SeekFrom::Start(0)).map_err(open_failed)?;
        let reader = RecordReader::new(io::Read::by_ref(&mut stream)).with_path(path);
        let index = RecordIndex::from_reader(reader)?;
        let file = Positional::Stream {
            stream: Mutex::new(Box::new(stream)),
            len,
        };
        Self::from_parts(file, path, index, None)
    }

    /// Checks every entry against the file's size now, so that an index of another file or
    /// of an older, longer version is refused before any read.
    fn from_parts(
        file: Positional,
        path: &Path,
        index: RecordIndex,
        index_file: Option<PathBuf>,
    ) -> Result<Self, IndexError> {
        let file_len = file
            .len()
            .map_err(|e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf()))))?;
        let file = RecordFile {
            file,
            path: Arc::from(path),
            index,
            index_file,
        };
        for (i, e) in file.index.entries().iter().enumerate() {
            if e.len < FRAMING_LEN as u64 {
                return Err(file.stale(
                    i,
                    e.offset,
                    format!("{} bytes is shorter than a record's framing", e.len),
                ));
            }
            if e.offset.checked_add(e.len).is_none_or(|end| end > file_len) {
                return Err(file.stale(
                    i,
                    e.offset,
                    format!(
                        "a record of {} bytes there runs past the end of the file ({file_len} bytes)",
                        e.len
                    ),
                ));
            }
        }
        Ok(file)
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the file has no records.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The records file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The index file in use, or `None` when the index lives only in memory.
    pub fn index_file(&self) -> Option<&Path> {
        self.index_file.as_deref()
    }

    /// The index.
    pub fn index(&self) -> &RecordIndex {
        &self.index
    }

    /// The data of record `i`, CRC-checked.
    pub fn get(&self, i: usize) -> Result<Vec<u8>, IndexError> {
        let mut out = Vec::new();
        self.get_into(i, &mut out)?;
        Ok(out)
    }

    /// Replaces the contents of `out` with the data of record `i`, CRC-checked.
    pub fn get_into(&self, i: usize, out: &mut Vec<u8>) -> Result<(), IndexError> {
        out.clear();
        let data = self.read_record(i, out)?;
        out.copy_within(data.clone(), 0);
        out.truncate(data.len());
        Ok(())
    }

    /// Reads record `i` framed into `scratch` (grown when too small, never shrunk, so a buffer
    /// reused across calls is not zeroed again) and returns where its data lies in it: the
    /// copy-free form of [`RecordFile::get`].
    pub fn read_record(&self, i: usize, scratch: &mut Vec<u8>) -> Result<Range<usize>, IndexError> {
        let entry = self.entry(i)?;
        let len = self.frame_len(i, entry)?;
        if scratch.len() < len {
            scratch.resize(len, 0);
        }
        self.read_checked(i, entry, &mut scratch[..len])
    }

    /// The data of each record of `indices`, in that order.
    pub fn get_many(&self, indices: &[usize]) -> Result<Vec<Vec<u8>>, IndexError> {
        indices.iter().map(|&i| self.get(i)).collect()
    }

    /// Reads the records of `indices` framed one after another into `scratch` (grown when too
    /// small, never shrunk) and sets `spans` to where each one's data lies in it: the copy-free
    /// form of [`RecordFile::get_many`].
    pub fn read_many(
        &self,
        indices: &[usize],
        scratch: &mut Vec<u8>,
        spans: &mut Vec<Range<usize>>,
    ) -> Result<(), IndexError> {
        read_many_with(indices, scratch, spans, |i| Ok((self, i)))
    }

    fn entry(&self, i: usize) -> Result<IndexEntry, IndexError> {
        self.index.entries().get(i).copied().ok_or(IndexError::OutOfRange {
            index: i as u64,
            len: self.len() as u64,
        })
    }

    fn frame_len(&self, i: usize, entry: IndexEntry) -> Result<usize, IndexError> {
        usize::try_from(entry.len)
            .map_err(|_| self.stale(i, entry.offset, format!("{} bytes do not fit in memory", entry.len)))
    }

    /// Reads record `i` (at `entry`) into `frame`, exactly its framed length, and checks the
    /// length against its CRC and the index, then the data's CRC. Returns the data's range.
    fn read_checked(&self, i: usize, entry: IndexEntry, frame: &mut [u8]) -> Result<Range<usize>, IndexError> {
        self.file
            .read_exact_at(frame, entry.offset)
            .map_err(|e| self.damage(RecordErrorKind::Io(e), i, entry.offset))?;
        let end = frame.len() - FOOTER_LEN;
        let (header_bytes, rest) = frame.split_at(HEADER_LEN);
        let header_bytes =
            <&[u8; HEADER_LEN]>::try_from(header_bytes).map_err(|_| self.stale(i, entry.offset, "too short".into()))?;
        let header = Header::decode(header_bytes);
        if !header.is_valid() {
            let kind = RecordErrorKind::LengthCrcMismatch {
                stored: header.stored_crc,
                computed: header.actual_crc,
                looks_compressed: None,
            };
            return Err(self.damage(kind, i, entry.offset));
        }
        if header.len.checked_add(FRAMING_LEN as u64) != Some(entry.len) {
            let problem = format!(
                "the record there holds {} data bytes where the index says {}",
                header.len,
                entry.len - FRAMING_LEN as u64
            );
            return Err(self.stale(i, entry.offset, problem));
        }
        let (data, footer) = rest.split_at(end - HEADER_LEN);
        let stored = decode_footer(
            <&[u8; FOOTER_LEN]>::try_from(footer).map_err(|_| self.stale(i, entry.offset, "too short".into()))?,
        );
        let computed = masked_crc32c(data);
        if stored != computed {
            let kind = RecordErrorKind::DataCrcMismatch {
                stored,
                computed,
                data_offset: entry.offset + HEADER_LEN as u64,
            };
            return Err(self.damage(kind, i, entry.offset));
        }
        Ok(HEADER_LEN..end)
    }

    fn damage(&self, kind: RecordErrorKind, i: usize, offset: u64) -> IndexError {
        IndexError::Record(RecordError {
            kind,
            location: Location {
                path: Some(self.path.clone()),
                offset,
                record_index: i as u64,
                decompressed: false,
            },
        })
    }

    fn stale(&self, i: usize, offset: u64, problem: String) -> IndexError {
        IndexError::Stale {
            index_file: self.index_file.clone(),
            path: self.path.to_path_buf(),
            record: i as u64,
            offset,
            problem,
        }
    }
}

/// Opens a file for random access, refusing a compressed one.
fn open_plain(path: &Path) -> Result<Positional, IndexError> {
    let open_failed = |e| IndexError::Record(RecordError::open_failed(e, Some(path.to_path_buf())));
    let mut file = Source::open(path).map_err(open_failed)?;
    match file_compression(path, &mut file, CompressionChoice::Auto).map_err(open_failed)? {
        Compression::None => Ok(Positional::from_source(file)),
        compression => Err(IndexError::NeedsUncompressed {
            path: path.to_path_buf(),
            compression,
        }),
    }
}

/// [`RecordFile::read_many`] for records that `locate` finds in one file or many.
fn read_many_with<'f>(
    indices: &[usize],
    scratch: &mut Vec<u8>,
    spans: &mut Vec<Range<usize>>,
    locate: impl Fn(usize) -> Result<(&'f RecordFile, usize), IndexError>,
) -> Result<(), IndexError> {
    spans.clear();
    let mut places = Vec::with_capacity(indices.len());
    let mut total = 0usize;
    for &i in indices {
        let (file, local) = locate(i)?;
        let entry = file.entry(local)?;
        let len = file.frame_len(local, entry)?;
        places.push((file, local, entry, total..total + len));
        total = total
            .checked_add(len)
            .ok_or_else(|| file.stale(local, entry.offset, "the batch does not fit in memory".into()))?;
    }
    if scratch.len() < total {
        scratch.resize(total, 0);
    }
    for (file, local, entry, slot) in places {
        let data = file.read_checked(local, entry, &mut scratch[slot.clone()])?;
        spans.push(slot.start + data.start..slot.start + data.end);
    }
    Ok(())
}

/// Many plain TFRecord files as one sequence of records, numbered file after file.
#[derive(Debug)]
pub struct RecordFiles {
    files: Vec<RecordFile>,
    /// `starts[k]`: the number of the first record of `files[k]`.
    starts: Vec<usize>,
    len: usize,
}

impl RecordFiles {
    /// Opens each file with [`RecordFile::open`] (indexes beside the files, built if missing).
    pub fn open<I, P>(paths: I) -> Result<Self, IndexError>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        paths
            .into_iter()
            .map(RecordFile::open)
            .collect::<Result<Vec<_>, _>>()
            .map(Self::new)
    }

    /// The files, in order.
    pub fn new(files: Vec<RecordFile>) -> Self {
        let mut starts = Vec::with_capacity(files.len());
        let mut len = 0;
        for f in &files {
            starts.push(len);
            len += f.len();
        }
        RecordFiles { files, starts, len }
    }

    /// Number of records in all files.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The files.
    pub fn files(&self) -> &[RecordFile] {
        &self.files
    }

    /// The file holding record `i` and the record's number in it.
    pub fn locate(&self, i: usize) -> Result<(&RecordFile, usize), IndexError> {
        if i >= self.len {
            return Err(IndexError::OutOfRange {
                index: i as u64,
                len: self.len as u64,
            });
        }
        // The last file starting at or before `i`: empty files share their start with the next.
        let k = self.starts.partition_point(|&s| s <= i).saturating_sub(1);
        let file = self.files.get(k).ok_or(IndexError::OutOfRange {
            index: i as u64,
            len: self.len as u64,
        })?;
        Ok((file, i - self.starts[k]))
    }

    /// The data of record `i`, CRC-checked.
    pub fn get(&self, i: usize) -> Result<Vec<u8>, IndexError> {
        let (file, local) = self.locate(i)?;
        file.get(local)
    }

    /// Replaces the contents of `out` with the data of record `i`.
    pub fn get_into(&self, i: usize, out: &mut Vec<u8>) -> Result<(), IndexError> {
        let (file, local) = self.locate(i)?;
        file.get_into(local, out)
    }

    /// [`RecordFile::read_record`] for record `i` of all files.
    pub fn read_record(&self, i: usize, scratch: &mut Vec<u8>) -> Result<Range<usize>, IndexError> {
        let (file, local) = self.locate(i)?;
        file.read_record(local, scratch)
    }

    /// The data of each record of `indices`, in that order.
    pub fn get_many(&self, indices: &[usize]) -> Result<Vec<Vec<u8>>, IndexError> {
        indices.iter().map(|&i| self.get(i)).collect()
    }

    /// [`RecordFile::read_many`] over all files.
    pub fn read_many(
        &self,
        indices: &[usize],
        scratch: &mut Vec<u8>,
        spans: &mut Vec<Range<usize>>,
    ) -> Result<(), IndexError> {
        read_many_with(indices, scratch, spans, |i| self.locate(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::test_files::{compressed, framed};

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        path
    }

    fn records() -> Vec<Vec<u8>> {
        (0..50u8).map(|i| vec![i; usize::from(i) * 7]).collect()
    }

    fn refs(records: &[Vec<u8>]) -> Vec<&[u8]> {
        records.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn reads_every_record_and_caches_the_index() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recs = records();
        let path = write(dir.path(), "a.tfrecord", &framed(&refs(&recs)));
        let file = RecordFile::open(&path).expect("open");
        let idx = RecordIndex::default_path(&path);
        assert_eq!(file.index_file(), Some(idx.as_path()));
        assert!(idx.exists(), "the index is saved beside the file");
        assert_eq!(file.len(), recs.len());
        for (i, r) in recs.iter().enumerate().rev() {
            assert_eq!(&file.get(i).expect("get"), r);
        }
        let again = RecordFile::open(&path).expect("open with the saved index");
        assert_eq!(again.index(), file.index());
        let mut scratch = Vec::new();
        let mut spans = Vec::new();
        again
            .read_many(&[3, 0, 49, 3], &mut scratch, &mut spans)
            .expect("read_many");
        let got: Vec<&[u8]> = spans.iter().map(|s| &scratch[s.clone()]).collect();
        assert_eq!(got, [&recs[3][..], &recs[0][..], &recs[49][..], &recs[3][..]]);
        assert!(matches!(
            again.get(50),
            Err(IndexError::OutOfRange { index: 50, len: 50 })
        ));
    }

    #[test]
    fn an_unwritable_index_path_keeps_the_index_in_memory() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = write(dir.path(), "a.tfrecord", &framed(&[b"x", b"yz"]));
        let file = RecordFile::open_with_index_file(&path, dir.path().join("no/such/dir/a.idx")).expect("open");
        assert_eq!(file.index_file(), None);
        assert_eq!(file.get(1).expect("get"), b"yz");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
        assert_eq!(leftovers.len(), 1, "no temporary index left behind");
    }

    #[test]
    fn damage_names_the_file_offset_and_record() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut bytes = framed(&[b"first", b"second", b"third"]);
        let path = write(dir.path(), "a.tfrecord", &bytes);
        let index = RecordIndex::build(&path).expect("build");
        let second = index.entries()[1].offset as usize;
        bytes[second + HEADER_LEN + 2] ^= 1;
        std::fs::write(&path, &bytes).expect("damage");
        let file = RecordFile::with_index(&path, index).expect("open");
        assert_eq!(file.get(2).expect("intact"), b"third");
        let err = file.get(1).expect_err("damaged");
        let text = err.to_string();
        assert!(text.contains(&format!("record 1 at byte {second}")), "{text}");
        assert!(text.contains("a.tfrecord"), "{text}");
        assert!(matches!(
            err,
            IndexError::Record(RecordError {
                kind: RecordErrorKind::DataCrcMismatch { .. },
                ..
            })
        ));
        bytes[second] ^= 1;
        std::fs::write(&path, &bytes).expect("damage the length");
        let err = file.get(1).expect_err("damaged length");
        assert!(matches!(
            err,
            IndexError::Record(RecordError {
                kind: RecordErrorKind::LengthCrcMismatch { .. },
                ..
            })
        ));
    }

    #[test]
    fn a_stale_index_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = write(dir.path(), "a.tfrecord", &framed(&[b"first", b"second"]));
        let idx = dir.path().join("a.idx");
        std::fs::write(&idx, "0 21\n21 22\n43 30\n").expect("index");
        let err = RecordFile::open_with_index_file(&path, &idx).expect_err("past the end");
        assert!(matches!(err, IndexError::Stale { record: 2, .. }), "{err}");
        assert!(
            err.to_string().starts_with(&format!("{}: stale index", idx.display())),
            "{err}"
        );
        std::fs::write(&idx, "0 22\n").expect("index");
        let file = RecordFile::open_with_index_file(&path, &idx).expect("in bounds");
        let err = file.get(0).expect_err("wrong length");
        assert!(
            err.to_string().contains("holds 5 data bytes where the index says 6"),
            "{err}"
        );
        std::fs::write(&idx, "0 3\n").expect("index");
        assert!(matches!(
            RecordFile::open_with_index_file(&path, &idx),
            Err(IndexError::Stale { .. })
        ));
    }

    #[test]
    fn a_compressed_file_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, c) in [
            ("a.tfrecord.gz", Compression::Gzip),
            ("b.tfrecord", Compression::Gzip),
            ("c.zz", Compression::Zlib),
        ] {
            let path = write(dir.path(), name, &compressed(&[b"abc"], c));
            let err = RecordFile::open(&path).expect_err("compressed");
            assert!(matches!(err, IndexError::NeedsUncompressed { .. }), "{err}");
            assert!(
                err.to_string().contains("random access needs an uncompressed file"),
                "{err}"
            );
        }
    }

    #[test]
    fn many_files_number_records_file_after_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = write(dir.path(), "a.tfrecord", &framed(&[b"a0", b"a1"]));
        let empty = write(dir.path(), "e.tfrecord", &[]);
        let b = write(dir.path(), "b.tfrecord", &framed(&[b"b0", b"b1", b"b2"]));
        let files = RecordFiles::open([&empty, &a, &empty, &b, &empty]).expect("open");
        assert_eq!(files.len(), 5);
        let all: Vec<Vec<u8>> = (0..5).map(|i| files.get(i).expect("get")).collect();
        assert_eq!(
            all,
            [
                b"a0".to_vec(),
                b"a1".to_vec(),
                b"b0".to_vec(),
                b"b1".to_vec(),
                b"b2".to_vec()
            ]
        );
        assert_eq!(files.get_many(&[4, 0]).expect("many"), [b"b2".to_vec(), b"a0".to_vec()]);
        let mut out = Vec::new();
        files.get_into(3, &mut out).expect("get_into");
        assert_eq!(out, b"b1");
        assert!(matches!(files.get(5), Err(IndexError::OutOfRange { index: 5, len: 5 })));
        assert!(RecordFiles::new(Vec::new()).get(0).is_err());
    }
}

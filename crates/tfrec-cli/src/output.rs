//! Writing outputs safely, for every command that writes: an output is never one of the inputs
//! (checked by file identity before anything is touched), and it is written under a temporary
//! name in its target directory, renamed into place only when the command succeeds. On any
//! failure the temporary file is removed, so nothing partial is ever left to read as whole.
//! A command that writes a whole directory (`shard`, `shuffle`) claims it for the run, so two
//! runs never mix their files. An output named by an object store URL is written to a local
//! temporary file the same way and uploaded at the commit (the object appears only whole). A
//! bucket prefix is checked for other objects as a directory is, but has no lock to claim.
//!
//! A run killed outright (`kill -9`, a power cut) cannot remove its temporary files, so each is
//! locked by its writer for as long as the writer lives (an advisory lock, which the operating
//! system releases when the process dies): the next run that writes into the directory removes
//! every temporary file that nobody holds, and says so, and leaves the ones a live run is
//! writing. The directory claim is such a lock too.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use clap::Args;
use tempfile::NamedTempFile;
use tfrec::record::remote::{ensure_supported, is_url_path, upload_file};
use tfrec::record::{Compression, CompressionChoice, ReaderOptions, RecordReader, RecordWriter, WriterOptions};

use crate::error::CliError;

/// The file an output path names, or would name once created: its canonical path, and its
/// device and inode when it exists.
struct Identity {
    canonical: PathBuf,
    inode: Option<(u64, u64)>,
}

fn identity(path: &Path) -> io::Result<Identity> {
    if is_url_path(path) {
        return Ok(Identity {
            canonical: path.to_path_buf(),
            inode: None,
        });
    }
    if let Ok(meta) = fs::metadata(path) {
        return Ok(Identity {
            canonical: fs::canonicalize(path)?,
            inode: Some((meta.dev(), meta.ino())),
        });
    }
    // Not there yet: its directory must be, and decides where it will be.
    let parent = parent_dir(path);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{}: not a file name", path.display())))?;
    Ok(Identity {
        canonical: fs::canonicalize(parent)?.join(name),
        inode: None,
    })
}

/// The directory a file path is in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Refuses (a usage error) when `output` is one of `inputs`: the same path after resolving
/// links, or the same file by device and inode (a hard link).
pub fn refuse_same_file(output: &Path, inputs: &[PathBuf]) -> Result<(), CliError> {
    let out = identity(output).map_err(|e| format!("{}: {e}", output.display()))?;
    for input in inputs {
        let same = if is_url_path(input) || is_url_path(output) {
            input.as_path() == out.canonical
        } else {
            let Ok(meta) = fs::metadata(input) else { continue };
            let same_inode = out.inode == Some((meta.dev(), meta.ino()));
            same_inode || fs::canonicalize(input).is_ok_and(|c| c == out.canonical)
        };
        if same {
            return Err(format!(
                "the output {} is the input {}: refusing to overwrite an input",
                output.display(),
                input.display()
            )
            .into());
        }
    }
    Ok(())
}

/// Refuses (a usage error) any overlap among the files a command touches: every path it writes
/// against every path it reads (record inputs, spec files, …) and against every other path it
/// writes. Called before anything is written.
pub fn refuse_overlaps(reads: &[PathBuf], writes: &[&Path]) -> Result<(), CliError> {
    for (i, write) in writes.iter().enumerate() {
        refuse_same_file(write, reads)?;
        let this = identity(write).map_err(|e| format!("{}: {e}", write.display()))?;
        for other in &writes[..i] {
            let that = identity(other).map_err(|e| format!("{}: {e}", other.display()))?;
            let same_inode = this.inode.is_some() && this.inode == that.inode;
            if same_inode || this.canonical == that.canonical {
                return Err(format!(
                    "{} and {} name the same file: give each output its own path",
                    other.display(),
                    write.display()
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Refuses (a usage error) when the output directory `dir` holds one of `inputs` (at any depth)
/// or is one of them.
pub fn refuse_dir_holding_inputs(dir: &Path, inputs: &[PathBuf]) -> Result<(), CliError> {
    let dir_canonical = if is_url_path(dir) {
        dir.to_path_buf()
    } else if let Ok(c) = fs::canonicalize(dir) {
        c
    } else {
        return Ok(()); // Not there yet, so it holds nothing.
    };
    for input in inputs {
        let canonical = if is_url_path(input) {
            Ok(input.clone())
        } else {
            fs::canonicalize(input)
        };
        if let Ok(c) = canonical {
            if c.starts_with(&dir_canonical) {
                return Err(format!(
                    "the output directory {} holds the input {}: refusing to write among the inputs",
                    dir.display(),
                    input.display()
                )
                .into());
            }
        }
    }
    Ok(())
}

/// An exclusive claim on an output directory for the length of a run: an advisory lock on a
/// lock file inside it, which the operating system releases if the process dies, so a killed
/// run never leaves the directory claimed. The file is removed when the claim is dropped.
pub struct DirClaim {
    path: PathBuf,
    /// Holds the lock; closing it releases the lock.
    _file: File,
}

impl DirClaim {
    /// The lock file's name inside the claimed directory.
    pub const FILE_NAME: &'static str = ".tfrec-lock";

    /// Claims `dir` (which must exist), or says that another run holds it.
    pub fn take(dir: &Path) -> Result<DirClaim, CliError> {
        let path = dir.join(Self::FILE_NAME);
        let named = |e: io::Error| format!("{}: {e}", path.display());
        loop {
            let left_before = path.exists();
            let file = fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(named)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(format!(
                    "another run is writing into {} (it holds {}): wait for it to finish, or choose another directory",
                    dir.display(),
                    path.display()
                )
                    .into())
                }
                Err(fs::TryLockError::Error(e)) => return Err(named(e).into()),
            }
            // The run before may have removed the file between our open and our lock: a lock on
            // a removed file claims nothing, so try again on the file the name now gives.
            let held = file.metadata().map_err(named)?;
            let named_now = fs::metadata(&path).ok();
            if named_now.is_some_and(|m| (m.dev(), m.ino()) == (held.dev(), held.ino())) {
                if left_before {
                    say!(
                        "tfrec: {} was left by a run that did not finish; taking it over",
                        path.display()
                    );
                }
                return Ok(DirClaim { path, _file: file });
            }
        }
    }
}

impl Drop for DirClaim {
    fn drop(&mut self) {
        // Removed while still locked, so no other run can lock this file and then find it gone
        // (that run sees another inode under the name and tries again).
        let _ = fs::remove_file(&self.path);
    }
}

/// A file being written under a temporary name beside its final path; removed if dropped
/// before [`PendingFile::commit`].
pub struct PendingFile {
    temp: NamedTempFile,
    path: PathBuf,
}

impl PendingFile {
    /// The temporary files' names: `.tfrec-XXXXXX.partial`.
    const PREFIX: &'static str = ".tfrec-";
    const SUFFIX: &'static str = ".partial";

    /// Starts writing what will become `path` (whose directory must exist; for a URL, in the
    /// system's temporary directory). Temporary files that dead runs left in that directory are
    /// removed first (see the module's documentation).
    pub fn create(path: &Path) -> io::Result<PendingFile> {
        let dir = match path.to_str().filter(|_| is_url_path(path)) {
            Some(url) => {
                ensure_supported(url)?;
                std::env::temp_dir()
            }
            None => parent_dir(path).to_path_buf(),
        };
        clear_debris_once(&dir);
        loop {
            // Created as a new file would be (0666 less the umask), not private as temp files are.
            let temp = tempfile::Builder::new()
                .prefix(Self::PREFIX)
                .suffix(Self::SUFFIX)
                .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
                .tempfile_in(&dir)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
            let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", temp.path().display()));
            temp.as_file().lock().map_err(named)?;
            // Another run's clean-up may have found the file between its creation and the lock,
            // taken it for a dead run's and removed it: then write under a new name.
            let held = temp.as_file().metadata().map_err(named)?;
            let named_now = fs::symlink_metadata(temp.path()).ok();
            if named_now.is_some_and(|m| (m.dev(), m.ino()) == (held.dev(), held.ino())) {
                return Ok(PendingFile {
                    temp,
                    path: path.to_path_buf(),
                });
            }
        }
    }

    /// A second handle on the temporary file, to write through.
    pub fn file(&self) -> io::Result<File> {
        self.temp.as_file().try_clone()
    }

    /// Where the file is being written.
    pub fn temp_path(&self) -> &Path {
        self.temp.path()
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file into place (uploads it, for a URL; the temporary file is removed).
    pub fn commit(self) -> io::Result<()> {
        if let Some(url) = self.path.to_str().filter(|_| is_url_path(&self.path)) {
            return upload_file(self.temp.path(), url);
        }
        let path = self.path;
        self.temp
            .persist(&path)
            .map(drop)
            .map_err(|e| io::Error::new(e.error.kind(), format!("{}: {}", path.display(), e.error)))
    }
}

/// Removes the temporary files of dead runs from `dir` ([`clear_debris`]), once per directory
/// and process: a command that writes many files into one directory looks at it once.
pub fn clear_debris_once(dir: &Path) {
    static CLEARED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let first = CLEARED
        .get_or_init(Default::default)
        .lock()
        .map_or(true, |mut cleared| cleared.insert(key));
    if first {
        clear_debris(dir);
    }
}

/// Removes from `dir` every temporary file of ours (`.tfrec-*.partial`) that no live run holds,
/// saying so on stderr. A file a live run is writing is locked, and left alone. Failing to look
/// or to remove is not an error of the command's: the debris stays.
fn clear_debris(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with(PendingFile::PREFIX) && name.ends_with(PendingFile::SUFFIX)) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = File::open(&path) else { continue };
        // Held: a live run is writing it. Locked by us: removed while we hold it, so that a run
        // that created it just now (and has yet to lock it) sees it gone and starts another.
        if file.try_lock().is_ok() && fs::remove_file(&path).is_ok() {
            say!("tfrec: removed {}, left by a run that did not finish", path.display());
        }
    }
}

/// Where and how to write records.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// The TFRecord file to write (written under a temporary name, renamed when complete).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Compression of the output: auto (from the extension: .gz, .zz/.zlib), none, gzip, zlib.
    #[arg(long = "output-compression", default_value = "auto")]
    pub compression: CompressionChoice,
}

/// A record file being written to a temporary name.
pub struct PendingRecords {
    pub writer: RecordWriter<File>,
    file: PendingFile,
    compression: Compression,
}

impl OutputArgs {
    fn resolved_compression(&self) -> Compression {
        match self.compression {
            CompressionChoice::Exactly(c) => c,
            CompressionChoice::Auto => Compression::from_extension(&self.output).unwrap_or(Compression::None),
        }
    }

    /// Checks that the output is none of `inputs` (every file the command reads), then starts
    /// writing it.
    pub fn create(&self, inputs: &[PathBuf]) -> Result<PendingRecords, CliError> {
        refuse_same_file(&self.output, inputs)?;
        let file = PendingFile::create(&self.output)?;
        let compression = self.resolved_compression();
        let writer = RecordWriter::with_options(
            file.file()?,
            WriterOptions::default().compression(CompressionChoice::Exactly(compression)),
        )
        .with_path(&self.output);
        Ok(PendingRecords {
            writer,
            file,
            compression,
        })
    }
}

impl PendingRecords {
    /// Finishes the file, reads it back (the command succeeds only if every record written is
    /// there with valid CRCs), then renames it into place.
    pub fn finish_verified(self) -> Result<u64, CliError> {
        let written = finish_and_check(self.writer, self.file.temp_path(), self.compression)
            .map_err(|e| format!("{}: {e}", self.file.path().display()))?;
        self.file.commit()?;
        Ok(written)
    }
}

/// Finishes `writer`, then reads `path` back and checks the count and every CRC.
pub fn finish_and_check(writer: RecordWriter<File>, path: &Path, compression: Compression) -> Result<u64, CliError> {
    let written = writer.records_written();
    writer.finish()?.sync_all()?;
    let mut reader = RecordReader::open(path, ReaderOptions::default().compression(compression))?;
    let mut read = 0u64;
    while reader.next_record()?.is_some() {
        read += 1;
    }
    if read != written {
        return Err(format!("wrote {written} records but read back {read}").into());
    }
    Ok(written)
}

//! Writing outputs safely, for every writer that replaces a file (the CLI's commands,
//! `tfrec.arrow.write_parquet`): an output is never one of the inputs (checked by file
//! identity before anything is touched, [`refuse_same_file`], [`refuse_overlaps`],
//! [`refuse_dir_holding_inputs`]), and it is written under a temporary name in its target
//! directory ([`PendingFile`]), renamed into place only when the writer succeeds. On any failure
//! the temporary file is removed, so nothing partial is ever left to read as whole. A writer of
//! a whole directory claims it for the run ([`DirClaim`]), so two runs never mix their files. An
//! output named by an object store URL is written to a local temporary file the same way and
//! uploaded at the commit (the object appears only whole). A bucket prefix is checked for other
//! objects as a directory is, but has no lock to claim.
//!
//! A run killed outright (`kill -9`, a power cut) cannot remove its temporary files, so each is
//! locked by its writer for as long as the writer lives (an advisory lock, which the operating
//! system releases when the process dies): the next run that writes into the directory removes
//! every temporary file that nobody holds, and tells its caller so
//! ([`PendingFile::removed_debris`]), and leaves the ones a live run is writing. The directory
//! claim is such a lock too.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use tempfile::NamedTempFile;

use super::remote::{ensure_supported, is_url_path, upload_file};

/// Why an output was refused, or could not be started.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output is one of the inputs (the same path after resolving links, or the same
    /// file by device and inode).
    #[error("the output {} is the input {}: refusing to overwrite an input", output.display(), input.display())]
    IsAnInput {
        /// The output as named.
        output: PathBuf,
        /// The input it is, as named.
        input: PathBuf,
    },
    /// Two outputs of one call name the same file.
    #[error("{} and {} name the same file: give each output its own path", first.display(), second.display())]
    SameOutput {
        /// The output named first.
        first: PathBuf,
        /// The output named after it.
        second: PathBuf,
    },
    /// An output directory holds an input (at any depth), or is one.
    #[error("the output directory {} holds the input {}: refusing to write among the inputs", dir.display(), input.display())]
    DirHoldsInput {
        /// The output directory.
        dir: PathBuf,
        /// The input inside it.
        input: PathBuf,
    },
    /// Another live run holds the directory's claim.
    #[error("another run is writing into {} (it holds {}): wait for it to finish, or choose another directory", dir.display(), lock.display())]
    Claimed {
        /// The directory.
        dir: PathBuf,
        /// Its lock file.
        lock: PathBuf,
    },
    /// Looking at or creating a file failed; the text names the file.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl OutputError {
    /// Whether this is a refusal of the paths given (a usage error), not a failure of I/O.
    pub fn is_refusal(&self) -> bool {
        !matches!(self, OutputError::Io(_))
    }
}

/// The file an output path names, or would name once created: its canonical path, and its
/// device and inode when it exists.
struct Identity {
    canonical: PathBuf,
    inode: Option<(u64, u64)>,
}

/// A file's device and inode, where the platform has them.
#[cfg(unix)]
fn file_id(meta: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_meta: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Whether two metadata describe the same file (never, where the platform cannot tell).
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    file_id(a).is_some_and(|id| Some(id) == file_id(b))
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
            inode: file_id(&meta),
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

fn identity_named(path: &Path) -> Result<Identity, OutputError> {
    identity(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())).into())
}

/// The directory a file path is in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Refuses when `output` is one of `inputs`: the same path after resolving links, or the same
/// file by device and inode (a hard link). An input that does not exist is none.
pub fn refuse_same_file(output: &Path, inputs: &[PathBuf]) -> Result<(), OutputError> {
    let out = identity_named(output)?;
    for input in inputs {
        let same = if is_url_path(input) || is_url_path(output) {
            input.as_path() == out.canonical
        } else {
            let Ok(meta) = fs::metadata(input) else { continue };
            let same_inode = out.inode.is_some() && out.inode == file_id(&meta);
            same_inode || fs::canonicalize(input).is_ok_and(|c| c == out.canonical)
        };
        if same {
            return Err(OutputError::IsAnInput {
                output: output.to_path_buf(),
                input: input.clone(),
            });
        }
    }
    Ok(())
}

/// Refuses any overlap among the files a call touches: every path it writes against every path
/// it reads (record inputs, spec files, …) and against every other path it writes. Called
/// before anything is written.
pub fn refuse_overlaps(reads: &[PathBuf], writes: &[&Path]) -> Result<(), OutputError> {
    for (i, write) in writes.iter().enumerate() {
        refuse_same_file(write, reads)?;
        let this = identity_named(write)?;
        for other in &writes[..i] {
            let that = identity_named(other)?;
            let same_inode = this.inode.is_some() && this.inode == that.inode;
            if same_inode || this.canonical == that.canonical {
                return Err(OutputError::SameOutput {
                    first: other.to_path_buf(),
                    second: write.to_path_buf(),
                });
            }
        }
    }
    Ok(())
}

/// Refuses when the output directory `dir` holds one of `inputs` (at any depth) or is one of
/// them.
pub fn refuse_dir_holding_inputs(dir: &Path, inputs: &[PathBuf]) -> Result<(), OutputError> {
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
                return Err(OutputError::DirHoldsInput {
                    dir: dir.to_path_buf(),
                    input: input.clone(),
                });
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
    /// Whether the lock file was there, left by a run that died, before this claim.
    taken_over: bool,
}

impl DirClaim {
    /// The lock file's name inside the claimed directory.
    pub const FILE_NAME: &'static str = ".tfrec-lock";

    /// Claims `dir` (which must exist), or says that another run holds it.
    pub fn take(dir: &Path) -> Result<DirClaim, OutputError> {
        let path = dir.join(Self::FILE_NAME);
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
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
                    return Err(OutputError::Claimed {
                        dir: dir.to_path_buf(),
                        lock: path,
                    })
                }
                Err(fs::TryLockError::Error(e)) => return Err(named(e).into()),
            }
            // The run before may have removed the file between our open and our lock: a lock on
            // a removed file claims nothing, so try again on the file the name now gives.
            let held = file.metadata().map_err(named)?;
            let named_now = fs::metadata(&path).ok();
            if named_now.is_some_and(|m| same_file(&m, &held)) {
                return Ok(DirClaim {
                    path,
                    _file: file,
                    taken_over: left_before,
                });
            }
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a run that did not finish had left the lock file, which this claim took over.
    pub fn taken_over(&self) -> bool {
        self.taken_over
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
    /// Temporary files of dead runs that starting this one removed.
    removed_debris: Vec<PathBuf>,
}

impl PendingFile {
    /// The temporary files' names: `.tfrec-XXXXXX.partial`.
    pub const PREFIX: &'static str = ".tfrec-";
    /// See [`PendingFile::PREFIX`].
    pub const SUFFIX: &'static str = ".partial";

    /// Starts writing what will become `path` (whose directory must exist; for a URL, in the
    /// system's temporary directory). Temporary files that dead runs left in that directory are
    /// removed first (see the module's documentation and [`removed_debris`](Self::removed_debris)).
    pub fn create(path: &Path) -> io::Result<PendingFile> {
        let dir = match path.to_str().filter(|_| is_url_path(path)) {
            Some(url) => {
                ensure_supported(url)?;
                std::env::temp_dir()
            }
            None => parent_dir(path).to_path_buf(),
        };
        let removed_debris = clear_debris_once(&dir);
        loop {
            // Created as a new file would be (0666 less the umask), not private as temp files are.
            let mut builder = tempfile::Builder::new();
            builder.prefix(Self::PREFIX).suffix(Self::SUFFIX);
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
            let temp = builder
                .tempfile_in(&dir)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
            let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", temp.path().display()));
            temp.as_file().lock().map_err(named)?;
            // Another run's clean-up may have found the file between its creation and the lock,
            // taken it for a dead run's and removed it: then write under a new name.
            let held = temp.as_file().metadata().map_err(named)?;
            let named_now = fs::symlink_metadata(temp.path()).ok();
            if named_now.is_some_and(|m| same_file(&m, &held)) {
                return Ok(PendingFile {
                    temp,
                    path: path.to_path_buf(),
                    removed_debris,
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

    /// The temporary files of runs that did not finish that [`create`](Self::create) removed
    /// from the directory (each directory is looked at once per process).
    pub fn removed_debris(&self) -> &[PathBuf] {
        &self.removed_debris
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
/// and process: a writer of many files into one directory looks at it once. Returns the files
/// removed (none when the directory was looked at before).
pub fn clear_debris_once(dir: &Path) -> Vec<PathBuf> {
    static CLEARED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let first = CLEARED
        .get_or_init(Default::default)
        .lock()
        .map_or(true, |mut cleared| cleared.insert(key));
    if first {
        clear_debris(dir)
    } else {
        Vec::new()
    }
}

/// Removes from `dir` every temporary file of ours (`.tfrec-*.partial`) that no live run holds;
/// returns those removed. A file a live run is writing is locked, and left alone. Failing to
/// look or to remove is not an error of the writer's: the debris stays.
pub fn clear_debris(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
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
            removed.push(path);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output that is an input by another name (a symbolic link, a hard link, `./`) is
    /// refused; an output beside the inputs is not; two outputs naming one file are refused.
    #[test]
    fn an_input_by_any_name_is_refused_as_an_output() {
        let dir = tempfile::tempdir().expect("temp");
        let input = dir.path().join("in.tfrecord");
        fs::write(&input, b"x").expect("write");
        let hard = dir.path().join("hard.tfrecord");
        fs::hard_link(&input, &hard).expect("hard link");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&input, dir.path().join("soft.tfrecord")).expect("symlink");
        let inputs = [input.clone()];
        let mut others = vec![hard, dir.path().join(".").join("in.tfrecord")];
        if cfg!(unix) {
            others.push(dir.path().join("soft.tfrecord"));
        }
        for other in &others {
            let refused = refuse_same_file(other, &inputs).expect_err("refused");
            assert!(refused.is_refusal(), "{other:?}");
            assert!(
                refused.to_string().contains("refusing to overwrite an input"),
                "{refused}"
            );
        }
        let beside = dir.path().join("out.tfrecord");
        refuse_same_file(&beside, &inputs).expect("a new file beside the input");
        let twice = refuse_overlaps(&[], &[&beside, &dir.path().join(".").join("out.tfrecord")]);
        assert!(matches!(twice, Err(OutputError::SameOutput { .. })), "{twice:?}");
        let holding = refuse_dir_holding_inputs(dir.path(), &inputs);
        assert!(matches!(holding, Err(OutputError::DirHoldsInput { .. })), "{holding:?}");
    }

    /// A pending file appears under its name only when committed; dropped, it leaves nothing;
    /// a temporary file no live writer holds is removed by the next writer into the directory,
    /// one held is left.
    #[test]
    fn a_pending_file_is_renamed_into_place_and_dead_ones_are_cleared() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("out.bin");
        let dropped = PendingFile::create(&path).expect("create");
        std::io::Write::write_all(&mut dropped.file().expect("file"), b"partial").expect("write");
        drop(dropped);
        assert_eq!(fs::read_dir(dir.path()).expect("list").count(), 0);

        let held = PendingFile::create(&path).expect("create");
        let dead = dir
            .path()
            .join(format!("{}dead{}", PendingFile::PREFIX, PendingFile::SUFFIX));
        fs::write(&dead, b"left by a killed run").expect("write");
        assert_eq!(clear_debris(dir.path()), vec![dead.clone()]);
        assert!(held.temp_path().exists(), "a live writer's file is left");
        std::io::Write::write_all(&mut held.file().expect("file"), b"whole").expect("write");
        held.commit().expect("commit");
        assert_eq!(fs::read(&path).expect("read"), b"whole");
        assert_eq!(fs::read_dir(dir.path()).expect("list").count(), 1);
    }

    /// A directory claimed by a live claim cannot be claimed again; once dropped it can, and
    /// the lock file is gone.
    #[test]
    fn a_directory_is_claimed_once_at_a_time() {
        let dir = tempfile::tempdir().expect("temp");
        let claim = DirClaim::take(dir.path()).expect("claim");
        assert!(!claim.taken_over());
        assert!(matches!(DirClaim::take(dir.path()), Err(OutputError::Claimed { .. })));
        drop(claim);
        assert!(!dir.path().join(DirClaim::FILE_NAME).exists());
        DirClaim::take(dir.path()).expect("claimed again");
    }
}

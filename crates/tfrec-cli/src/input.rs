//! Command-line options shared by every command that reads records.

use std::path::{Path, PathBuf};

use clap::Args;
use tfrec::pipeline::Dataset;
use tfrec::record::{CompressionChoice, MultiFileReader, OnCorruption, ReaderOptions, TornTail};

use crate::error::CliError;

// How to read the input files.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Input files, directories (read recursively) or glob patterns (quote globs to keep the
    /// shell off them); each may be an object store URL (s3://, gs://, az://, http(s)://).
    #[arg(required = true, value_name = "FILES")]
    pub inputs: Vec<String>,
    /// Compression of the inputs: auto (from the extension, else the first bytes), none, gzip, zlib.
    #[arg(long, default_value = "auto")]
    pub compression: CompressionChoice,
    /// Accept a partial record header at the end of a file (a file still being written).
    #[arg(long)]
    pub allow_torn_tail: bool,
    /// Accept a directory that holds no record files (otherwise an error: a typo must not read
    /// as an empty data set).
    #[arg(long)]
    pub allow_empty: bool,
}

// `--skip-corrupt`, for the commands that can go on past damage.
#[derive(Args, Debug, Clone, Copy)]
pub struct SkipArgs {
    /// Skip damaged records (resynchronising on the next valid record) instead of failing;
    /// what was skipped is reported on stderr and in --json.
    #[arg(long)]
    pub skip_corrupt: bool,
}

/// Opens an input file the user named, with the file and the cause in the error. A directory
/// is refused here: it opens, and fails only at the first read with no word of which file.
pub fn open_input(path: &Path) -> Result<std::fs::File, CliError> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!("{}: is a directory, not a file; name the files in it", path.display()).into());
    }
    Ok(file)
}

/// Opens (and closes) each local file of `files`, so that one that cannot be read fails before
/// anything is written. An object was found by a request already; it is opened when read.
pub fn check_openable(files: &[PathBuf]) -> Result<(), CliError> {
    for f in files.iter().filter(|f| !tfrec::record::remote::is_url_path(f)) {
        std::fs::File::open(f).map_err(|e| format!("{}: cannot open: {e}", f.display()))?;
    }
    Ok(())
}

impl InputArgs {
    /// Reader options; data CRCs are always checked.
    pub fn reader_options(&self, skip: SkipArgs) -> ReaderOptions {
        ReaderOptions::default()
            .compression(self.compression)
            .verify_data_crc(true)
            .on_corruption(if skip.skip_corrupt {
                OnCorruption::Resync
            } else {
                OnCorruption::Fail
            })
            .torn_tail(if self.allow_torn_tail {
                TornTail::Skip
            } else {
                TornTail::Error
            })
    }

    /// The files the inputs name, in order.
    pub fn files(&self) -> Result<Vec<PathBuf>, CliError> {
        let files = if self.allow_empty {
            tfrec::record::expand_inputs_allow_empty(&self.inputs)?
        } else {
            tfrec::record::expand_inputs(&self.inputs).map_err(|e| {
                // Only when nothing was found: a server's error is not an empty directory.
                if matches!(&e.kind, tfrec::record::RecordErrorKind::Open(io) if io.kind() == std::io::ErrorKind::NotFound) {
                    format!("{e} (--allow-empty accepts an empty directory)")
                } else {
                    e.to_string()
                }
            })?
        };
        Ok(files)
    }

    /// The files the inputs name, each opened (and closed) first so that a file that cannot be
    /// read fails before anything is written.
    fn checked_files(&self) -> Result<Vec<PathBuf>, CliError> {
        let files = self.files()?;
        check_openable(&files)?;
        Ok(files)
    }

    /// A reader over the inputs (their files checked first, see `checked_files`).
    pub fn open(&self, skip: SkipArgs) -> Result<MultiFileReader, CliError> {
        Ok(MultiFileReader::new(self.checked_files()?, self.reader_options(skip)))
    }

    /// The inputs as the library's pipeline data set, with the same files, checks and reader
    /// options as [`InputArgs::open`].
    pub fn dataset(&self, skip: SkipArgs) -> Result<Dataset, CliError> {
        Ok(Dataset::from_files(self.checked_files()?).reader_options(self.reader_options(skip)))
    }
}

//! Writing outputs safely, for every command that writes, through the library's
//! [`tfrec::record::output`]: an output is never one of the inputs (checked by file identity
//! before anything is touched), and it is written under a temporary name in its target
//! directory, renamed into place only when the command succeeds. On any failure the temporary
//! file is removed, so nothing partial is ever left to read as whole. A command that writes a
//! whole directory (`shard`, `shuffle`) claims it for the run, so two runs never mix their
//! files. An output named by an object store URL is written to a local temporary file the same
//! way and uploaded at the commit (the object appears only whole). A bucket prefix is checked
//! for other objects as a directory is, but has no lock to claim.
//!
//! A run killed outright (`kill -9`, a power cut) cannot remove its temporary files: the next
//! run that writes into the directory removes every one that nobody holds, and says so here,
//! on stderr, and leaves the ones a live run is writing.

use std::fs::File;
use std::path::{Path, PathBuf};

use clap::Args;
pub use tfrec::record::output::{
    parent_dir, refuse_dir_holding_inputs, refuse_overlaps, refuse_same_file, DirClaim, PendingFile,
};
use tfrec::record::{Compression, CompressionChoice, ReaderOptions, RecordReader, RecordWriter, WriterOptions};

use crate::error::CliError;

/// Starts writing what will become `path` ([`PendingFile::create`]), saying on stderr which
/// temporary files of runs that did not finish it removed from the directory.
pub fn pending_file(path: &Path) -> std::io::Result<PendingFile> {
    let pending = PendingFile::create(path)?;
    for removed in pending.removed_debris() {
        say_removed(removed);
    }
    Ok(pending)
}

/// Removes the temporary files of dead runs from `dir` (once per directory and process), and
/// says so on stderr.
pub fn clear_debris_once(dir: &Path) {
    for removed in tfrec::record::output::clear_debris_once(dir) {
        say_removed(&removed);
    }
}

fn say_removed(path: &Path) {
    say!("tfrec: removed {}, left by a run that did not finish", path.display());
}

/// Claims the output directory `dir` for the run ([`DirClaim::take`]), saying on stderr when a
/// run that did not finish had left its claim, which this one takes over.
pub fn claim_dir(dir: &Path) -> Result<DirClaim, CliError> {
    let claim = DirClaim::take(dir)?;
    if claim.taken_over() {
        say!(
            "tfrec: {} was left by a run that did not finish; taking it over",
            claim.path().display()
        );
    }
    Ok(claim)
}

// Where and how to write records.
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
        let file = pending_file(&self.output)?;
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

/// Writes `bytes` as the whole of `path` (under a temporary name, renamed when complete), or to
/// standard output when there is no path.
pub fn write_whole_output(path: Option<&Path>, bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write as _;
    match path {
        Some(path) => {
            let pending = pending_file(path).map_err(|e| CliError::from(e).writing(path))?;
            let mut file = pending.file()?;
            file.write_all(bytes).map_err(|e| CliError::from(e).writing(path))?;
            file.sync_all().map_err(|e| CliError::from(e).writing(path))?;
            pending.commit()?;
        }
        None => {
            let mut stdout = crate::report::report_stdout();
            stdout.write_all(bytes)?;
            stdout.flush()?;
        }
    }
    Ok(())
}

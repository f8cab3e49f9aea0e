//! The exit-code convention of every command: 0 success, 1 the data has problems (damage found,
//! a record that does not parse or convert), 2 a usage or I/O error.
//!
//! A closed standard output (`tfrec cat … | head -1`) never turns damage into success. A
//! command that checks its input or writes files (`count`, `verify`, `schema`, `index`,
//! `shard`, …) finishes its work when its reader goes away and exits with the data's status (the
//! report is lost, not the verdict; see [`crate::report::report_stdout`]). A command whose
//! output *is* the data (`cat`, `parse`) stops there, quietly, with [`EXIT_OUTPUT_CLOSED`], as a
//! process killed by SIGPIPE would: it did not check the records it did not read. When the
//! reader goes away only after the command has read all it was asked to, the data's status
//! stands ([`crate::report::flush_at_end`]).
//!
//! Commands fail with a [`CliError`]; [`CliError::exit_code`] is the one place that turns it
//! into a status, and a library error's status follows its [`tfrec::ErrorCategory`].

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use tfrec::pipeline::PipelineError;
use tfrec::record::{IndexError, RecordError};
use tfrec::ErrorCategory;

/// Exit status when the data has problems.
pub const EXIT_DATA: u8 = 1;
/// Exit status for a usage or I/O error.
pub const EXIT_USAGE: u8 = 2;
/// Exit status when standard output closed before the command had read all its input: the
/// status a shell reports for a process that SIGPIPE ended (128 + 13), so a pipeline run with
/// `set -o pipefail` treats `tfrec cat` as it treats `cat`.
pub const EXIT_OUTPUT_CLOSED: u8 = 141;

/// A command's exit status. A number rather than `std::process::ExitCode`, so that
/// [`crate::run`] can hand it to any caller (the binary, or Python through the extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitCode(pub u8);

impl ExitCode {
    pub const SUCCESS: ExitCode = ExitCode(0);
}

impl From<u8> for ExitCode {
    fn from(code: u8) -> Self {
        ExitCode(code)
    }
}

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// A problem in the data, in the command's own words: exits with 1.
    Data(String),
    /// A usage or I/O problem in the command's own words: exits with 2.
    Usage(String),
    /// An error of the library: its category decides the status (boxed: it is large).
    Library(Box<tfrec::Error>),
    /// The command's own reading or writing failed (standard output, an output file): 2, or
    /// [`EXIT_OUTPUT_CLOSED`] for a closed pipe.
    Io(io::Error),
    /// An error met writing an output file, which its text names (Arrow's, Parquet's and the
    /// npz writer's own errors do not): the status of the error under it.
    Writing { path: PathBuf, error: Box<CliError> },
    /// An error of another library (Arrow, Parquet, JSON, images): 2, or
    /// [`EXIT_OUTPUT_CLOSED`] when a closed pipe is in its `source()` chain (Arrow's writers
    /// wrap the I/O error).
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// A data problem (exit status 1), for `Err(data(…))?` and `.map_err(|e| data(…))`.
pub fn data(message: impl Into<String>) -> CliError {
    CliError::Data(message.into())
}

impl CliError {
    /// This error as one met writing the output `path`, so that its text names the file.
    pub fn writing(self, path: &Path) -> CliError {
        CliError::Writing {
            path: path.to_path_buf(),
            error: Box::new(self),
        }
    }

    /// What the command exits with.
    pub fn exit_code(&self) -> u8 {
        if self.is_closed_pipe() {
            return EXIT_OUTPUT_CLOSED;
        }
        match self {
            CliError::Writing { error, .. } => error.exit_code(),
            CliError::Data(_) => EXIT_DATA,
            CliError::Usage(_) | CliError::Io(_) | CliError::Other(_) => EXIT_USAGE,
            CliError::Library(e) => match e.category() {
                ErrorCategory::Data => EXIT_DATA,
                _ => EXIT_USAGE,
            },
        }
    }

    /// A write to a closed pipe.
    pub fn is_closed_pipe(&self) -> bool {
        self.io_cause().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The I/O error under this one, if any: the library's errors hold theirs as data, not as
    /// `source()` (their text already includes it), so it is looked for there.
    fn io_cause(&self) -> Option<&io::Error> {
        match self {
            CliError::Io(e) => Some(e),
            CliError::Writing { error, .. } => error.io_cause(),
            CliError::Library(e) => match &**e {
                tfrec::Error::Io(e) => Some(e),
                tfrec::Error::Write(w) => Some(&w.source),
                _ => None,
            },
            CliError::Other(e) => {
                let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e.as_ref());
                while let Some(e) = cause {
                    if let Some(io) = e.downcast_ref::<io::Error>() {
                        return Some(io);
                    }
                    cause = e.source();
                }
                None
            }
            CliError::Data(_) | CliError::Usage(_) => None,
        }
    }

    /// The damaged or unreadable record the error is about, however it reached the command,
    /// for [`crate::report::describe`]'s wording.
    fn record(&self) -> Option<&RecordError> {
        let CliError::Library(e) = self else { return None };
        match &**e {
            tfrec::Error::Record(e)
            | tfrec::Error::Pipeline(PipelineError::Record(e))
            | tfrec::Error::Index(IndexError::Record(e))
            | tfrec::Error::Batch(tfrec::columnar::BatchError::Record(e)) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(e) = self.record() {
            return f.write_str(&crate::report::describe(e));
        }
        match self {
            // The cause in the I/O error's words ("No space left on device"), without the
            // wrapping library's ("External: …").
            CliError::Writing { path, error } => match error.io_cause() {
                Some(io) => write!(f, "{}: {io}", path.display()),
                None => write!(f, "{}: {error}", path.display()),
            },
            CliError::Data(m) | CliError::Usage(m) => f.write_str(m),
            CliError::Library(e) => write!(f, "{e}"),
            CliError::Io(e) => write!(f, "{e}"),
            CliError::Other(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CliError {}

/// A message of the command's own, like a bad combination of flags: a usage error.
impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError::Usage(message)
    }
}

/// A refused output is a usage error in the library's words; failing to look at or create it,
/// an I/O error.
impl From<tfrec::record::output::OutputError> for CliError {
    fn from(e: tfrec::record::output::OutputError) -> Self {
        match e {
            tfrec::record::output::OutputError::Io(e) => CliError::Io(e),
            refused => CliError::Usage(refused.to_string()),
        }
    }
}

impl From<&str> for CliError {
    fn from(message: &str) -> Self {
        CliError::Usage(message.to_owned())
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Io(e)
    }
}

macro_rules! library_errors {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                CliError::Library(Box::new(e.into()))
            }
        }
    )*};
}

library_errors!(
    tfrec::Error,
    RecordError,
    IndexError,
    PipelineError,
    tfrec::record::WriteError,
    tfrec::pipeline::DatasetError,
    tfrec::columnar::BatchError,
    tfrec::columnar::ColumnarError,
    tfrec::example::DecodeError,
    tfrec::example::BuildError,
    tfrec::stats::StatsError,
);

macro_rules! other_errors {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                CliError::Other(Box::new(e))
            }
        }
    )*};
}

other_errors!(
    arrow_schema::ArrowError,
    parquet::errors::ParquetError,
    serde_json::Error,
    image::ImageError,
);

/// Reports a record error that ended a command after its output, and the status to exit with.
pub fn report_record_failure(error: RecordError) -> ExitCode {
    let error = CliError::from(error);
    say!("tfrec: {error}");
    ExitCode::from(error.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct ClosedPipe;
    impl io::Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn broken_pipe_is_141_and_data_is_one() {
        assert_eq!(
            CliError::from(io::Error::from(io::ErrorKind::BrokenPipe)).exit_code(),
            EXIT_OUTPUT_CLOSED
        );
        assert_eq!(data("bad").exit_code(), EXIT_DATA);
        let mut writer = tfrec::record::RecordWriter::new(ClosedPipe);
        let write = writer.write_record(b"x").err().or_else(|| writer.finish().err());
        let write = CliError::from(write.expect("the pipe is closed"));
        assert!(write.is_closed_pipe());
        assert_eq!(write.exit_code(), EXIT_OUTPUT_CLOSED);
        assert_eq!(CliError::from("no such flag").exit_code(), EXIT_USAGE);
        assert_eq!(CliError::from(io::Error::other("disk full")).exit_code(), EXIT_USAGE);
    }

    #[test]
    fn library_errors_exit_by_category() {
        let decode = tfrec::example::Example::decode(b"\x0a\x05ab").err().map(CliError::from);
        assert_eq!(decode.map(|e| e.exit_code()), Some(EXIT_DATA));
        let open = tfrec::record::expand_inputs(["no/such/dir/*.tfrecord"])
            .err()
            .map(CliError::from);
        assert_eq!(open.map(|e| e.exit_code()), Some(EXIT_USAGE));
        let shards = tfrec::pipeline::DatasetError::NoShards;
        assert_eq!(CliError::from(shards).exit_code(), EXIT_USAGE);
    }
}

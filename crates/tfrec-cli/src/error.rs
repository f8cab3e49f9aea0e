//! The exit-code convention of every command: 0 success, 1 the data has problems (damage found,
//! a record that does not parse or convert), 2 a usage or I/O error. A closed standard output
//! (`tfrec count … | head -1`) is a normal way to stop and ends with 0, quietly.

use std::error::Error;
use std::fmt;
use std::io;

use tfrec::parse::ParseErrorKind;
use tfrec::record::{RecordError, RecordErrorKind};

/// Exit status when the data has problems.
pub const EXIT_DATA: u8 = 1;
/// Exit status for a usage or I/O error.
pub const EXIT_USAGE: u8 = 2;

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

/// A problem in the data rather than in how the command was called: exits with 1.
#[derive(Debug)]
pub struct DataError(pub String);

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for DataError {}

/// A data problem, boxed for `?`.
pub fn data(message: impl Into<String>) -> Box<dyn Error> {
    Box::new(DataError(message.into()))
}

/// What a failed command exits with, or `None` when it only lost its reader (a closed pipe).
pub fn exit_code(error: &(dyn Error + 'static)) -> Option<u8> {
    let mut cause: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(e) = cause {
        // tfrec's errors carry their I/O error as data, not as `source()` (their text already
        // includes it), so a failed write to a closed pipe is looked for there too.
        let io = e
            .downcast_ref::<io::Error>()
            .or_else(|| e.downcast_ref::<tfrec::record::WriteError>().map(|w| &w.source));
        if io.is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe) {
            return None;
        }
        cause = e.source();
    }
    Some(if is_data_problem(error) { EXIT_DATA } else { EXIT_USAGE })
}

fn is_data_problem(error: &(dyn Error + 'static)) -> bool {
    if error.is::<DataError>()
        || error.is::<tfrec::example::DecodeError>()
        || error.is::<tfrec::example::FriendlyJsonError>()
        || error.is::<tfrec::example::TextError>()
    {
        return true;
    }
    if let Some(e) = error.downcast_ref::<RecordError>() {
        return !matches!(e.kind, RecordErrorKind::Open(_) | RecordErrorKind::Io(_));
    }
    if let Some(e) = error.downcast_ref::<tfrec::parse::ParseError>() {
        return !matches!(e.kind, ParseErrorKind::Spec(_));
    }
    false
}

/// Reports a record error that ended a command after its output, and the status to exit with.
pub fn report_record_failure(error: &RecordError) -> ExitCode {
    say!("tfrec: {}", crate::report::describe(error));
    ExitCode::from(exit_code(error).unwrap_or(EXIT_USAGE))
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
    fn broken_pipe_is_quiet_and_data_is_one() {
        let pipe: Box<dyn Error> = Box::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(exit_code(pipe.as_ref()), None);
        assert_eq!(exit_code(data("bad").as_ref()), Some(EXIT_DATA));
        let mut writer = tfrec::record::RecordWriter::new(ClosedPipe);
        let write = writer.write_record(b"x").err().or_else(|| writer.finish().err());
        let write: Box<dyn Error> = Box::new(write.expect("the pipe is closed"));
        assert_eq!(exit_code(write.as_ref()), None);
        let usage: Box<dyn Error> = "no such flag".into();
        assert_eq!(exit_code(usage.as_ref()), Some(EXIT_USAGE));
    }
}

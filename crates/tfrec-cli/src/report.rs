//! What every command reports about damaged input, in the same words and the same JSON fields:
//! `path`, `offset`, `record_index`, `kind`, `message` for a problem; `skipped` for what
//! `--skip-corrupt` left out.

use std::io::Write;

use serde_json::{json, Value};
use tfrec::record::{MultiFileReader, ReadStats, RecordError, RecordErrorKind};

/// Problems named one by one in a skip report; the rest are only counted.
pub const FIRST_PROBLEMS: usize = 5;

/// A record error as a sentence. Damage at a file's first byte is reported as such (the
/// records after it may be intact, and `--skip-corrupt` reads them), with a word on the other
/// likely story.
pub fn describe(error: &RecordError) -> String {
    let first_header = error.location.offset == 0 && error.location.record_index == 0;
    match &error.kind {
        RecordErrorKind::LengthCrcMismatch {
            looks_compressed: None, ..
        } if first_header && !error.location.decompressed => {
            format!("{error} (the file's first header: damaged, or this is not a TFRecord file)")
        }
        _ => error.to_string(),
    }
}

/// One problem as JSON.
pub fn problem_json(error: &RecordError) -> Value {
    json!({
        "path": error.path().map(|p| p.display().to_string()),
        "offset": error.location.offset,
        "offset_is_decompressed": error.location.decompressed,
        "record_index": error.location.record_index,
        "kind": error.kind_name(),
        "message": describe(error),
    })
}

/// What was skipped under `--skip-corrupt`, as the `skipped` field of a `--json` report.
pub fn skipped_json(reader: &MultiFileReader) -> Value {
    let stats = reader.stats();
    let problems = reader.problems();
    json!({
        "regions": stats.skipped_regions,
        "bytes": stats.skipped_bytes,
        "files": stats.skipped_files,
        "torn_tail_bytes": stats.torn_tail_bytes,
        "problems": problems.iter().take(FIRST_PROBLEMS).map(|p| problem_json(p)).collect::<Vec<_>>(),
        "problem_count": problems.len(),
    })
}

/// Says on stderr what a reader skipped, if anything: counts and the first places.
pub fn print_skipped(reader: &MultiFileReader) {
    print_skipped_stats(&reader.stats(), &reader.problems());
}

/// Says on stderr what was skipped, if anything, from the counters of any reading path (a
/// reader's, or a pipeline's).
pub fn print_skipped_stats(stats: &ReadStats, problems: &[&RecordError]) {
    if stats.skipped_regions + stats.skipped_files == 0 && problems.is_empty() {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "tfrec: skipped {} damaged regions ({} bytes) and {} files:",
        stats.skipped_regions, stats.skipped_bytes, stats.skipped_files
    );
    for p in problems.iter().take(FIRST_PROBLEMS) {
        let _ = writeln!(err, "  {}", describe(p));
    }
    if problems.len() > FIRST_PROBLEMS {
        let _ = writeln!(err, "  … and {} more", problems.len() - FIRST_PROBLEMS);
    }
}

/// Buffered standard output for a command's data (records, tensors). Write with
/// `writeln!(out, …)?`: a closed pipe then stops the command, which exits with
/// [`crate::error::EXIT_OUTPUT_CLOSED`] since it did not check the input it had left (see
/// [`crate::error`]), instead of panicking as `println!` does. End with [`flush_at_end`].
pub fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::new(std::io::stdout().lock())
}

/// Flushes a command's data output after the command has read all the input it was asked to
/// (to the end, or to `--limit`). A reader that went away only now lost nothing the command
/// still had to check, so the command's verdict on the data stands: a closed pipe is not an
/// error here. Any other failure is.
pub fn flush_at_end(out: &mut impl Write) -> std::io::Result<()> {
    unless_closed(out.flush()).map(drop)
}

/// `Ok(false)` for a write that failed because the reader went away; other failures stay
/// errors.
fn unless_closed(result: std::io::Result<()>) -> std::io::Result<bool> {
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        other => other.map(|()| true),
    }
}

/// Standard output for a report about work the command finishes whatever happens to its
/// reader: a check (`count`, `verify`, `schema`) or the summary of written outputs (`shard`,
/// `index`). Once the reader has gone, what is written is dropped and the command goes on, so
/// its exit status is still the data's: `tfrec verify data | head -0` exits 1 on damage.
pub fn report_stdout() -> ReportOut {
    ReportOut {
        inner: stdout(),
        closed: false,
    }
}

/// See [`report_stdout`].
pub struct ReportOut {
    inner: std::io::BufWriter<std::io::StdoutLock<'static>>,
    closed: bool,
}

impl ReportOut {
    /// Notes a closed reader, so later writes are dropped.
    fn lossy(&mut self, result: std::io::Result<()>) -> std::io::Result<()> {
        self.closed = !unless_closed(result)?;
        Ok(())
    }
}

impl Write for ReportOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let written = self.inner.write_all(buf);
        self.lossy(written).map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let flushed = self.inner.flush();
        self.lossy(flushed)
    }
}

/// An `io::Write` seen as a `fmt::Write`, keeping the I/O error (a closed pipe) it meets.
pub struct FmtToIo<'a, W: Write> {
    inner: &'a mut W,
    error: Option<std::io::Error>,
}

impl<W: Write> std::fmt::Write for FmtToIo<'_, W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.inner.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            std::fmt::Error
        })
    }
}

/// Lets a renderer that writes to a `fmt::Write` write straight to an `io::Write`, so a huge
/// record is never rendered into memory first.
pub fn render_to<W: Write>(
    out: &mut W,
    render: impl FnOnce(&mut FmtToIo<'_, W>) -> std::fmt::Result,
) -> std::io::Result<()> {
    let mut adapter = FmtToIo {
        inner: out,
        error: None,
    };
    let result = render(&mut adapter);
    match (result, adapter.error) {
        (_, Some(e)) => Err(e),
        (Err(_), None) => Err(std::io::Error::other("formatting failed")),
        (Ok(()), None) => Ok(()),
    }
}

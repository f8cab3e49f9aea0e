//! `tfrec count`: records per file and in total, every CRC checked.

use std::io::Write;

use clap::Args as ClapArgs;
use serde_json::json;

use crate::error::{CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::progress::Progress;
use crate::report::{print_skipped, problem_json, report_stdout, skipped_json};

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    skip: SkipArgs,
    /// Check only the framing (lengths and their CRCs), not each record's data CRC: faster, and
    /// the report says so.
    #[arg(long)]
    lengths_only: bool,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
    /// Read each file on this many threads where it can be cut into spans at record
    /// boundaries: a plain file (from its FILE.idx, or by a scan of its record headers ahead
    /// of the threads), or a GZIP or ZLIB file with a seek index (FILE.zidx, as `tfrec index`
    /// writes), each span inflated from its own checkpoint. Other files read on one thread.
    /// The counts, and the problems reported or skipped (--skip-corrupt), are the same.
    #[arg(long, default_value_t = 1, value_name = "N")]
    threads: usize,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let options = args.input.reader_options(args.skip).verify_data_crc(!args.lengths_only);
    let mut reader = tfrec::record::MultiFileReader::new(args.input.files()?, options).threads(args.threads);
    let mut counts = vec![0u64; reader.files().len()];
    let progress = Progress::for_reader(&reader);
    let failure = reader
        .for_each_record(|_, file| {
            if let Some(n) = counts.get_mut(file) {
                *n += 1;
            }
        })
        .err();
    progress.finish();
    let total: u64 = counts.iter().sum();
    let checked = if args.lengths_only { "lengths only" } else { "all" };
    let mut out = report_stdout();
    if args.json {
        let files: Vec<_> = reader
            .files()
            .iter()
            .zip(&counts)
            .enumerate()
            .map(|(i, (path, n))| {
                // As read: a compressed file under a plain name is detected from its content.
                let compression = reader.compression_of(i).map(|c| c.to_string());
                json!({"path": path.display().to_string(), "records": n, "compression": compression})
            })
            .collect();
        let report = json!({
            "ok": failure.is_none(),
            "files": files,
            "total": total,
            "data_crcs_checked": !args.lengths_only,
            "skipped": skipped_json(&reader),
            "problems": failure.iter().map(problem_json).collect::<Vec<_>>(),
        });
        writeln!(out, "{report}")?;
    } else {
        for (path, n) in reader.files().iter().zip(&counts) {
            writeln!(out, "{n:>12}  {}", path.display())?;
        }
        writeln!(out, "{total:>12}  total (CRCs checked: {checked})")?;
    }
    out.flush()?;
    print_skipped(&reader);
    match failure {
        Some(error) => Ok(crate::error::report_record_failure(error)),
        None => Ok(ExitCode::SUCCESS),
    }
}

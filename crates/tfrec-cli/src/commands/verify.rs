//! `tfrec verify`: every CRC of every record, every problem with its file and offset.

use std::io::Write;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use serde_json::json;
use tfrec::record::{OnCorruption, RecordError, RecordReader};

use crate::input::{InputArgs, SkipArgs};
use crate::progress::Progress;
use crate::report::{describe, problem_json, stdout};

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

/// Reads every file to the end, resynchronising past damage so that every problem is seen.
pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let files = args.input.files()?;
    let options = args
        .input
        .reader_options(SkipArgs { skip_corrupt: true })
        .on_corruption(OnCorruption::Resync);
    let total: u64 = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let progress = Progress::new(total, std::sync::Arc::clone(&done));
    let mut out = stdout();
    let mut reports = Vec::new();
    let mut bad_files = 0;
    let mut unreadable = false;
    for path in &files {
        let mut problems: Vec<RecordError> = Vec::new();
        let mut records = 0u64;
        let mut data_bytes = 0u64;
        match RecordReader::open(path, options.clone()) {
            Err(error) => {
                unreadable = true;
                problems.push(error);
            }
            Ok(mut reader) => {
                let end = loop {
                    match reader.next_record() {
                        Ok(Some(_)) => {}
                        Ok(None) => break None,
                        Err(error) => break Some(error),
                    }
                };
                records = reader.stats().records;
                data_bytes = reader.stats().data_bytes;
                problems.extend(reader.take_problems());
                if let Some(e) = end {
                    unreadable |= crate::error::exit_code(&e) == Some(crate::error::EXIT_USAGE);
                    problems.push(e);
                }
            }
        }
        done.fetch_add(std::fs::metadata(path).map_or(0, |m| m.len()), std::sync::atomic::Ordering::Relaxed);
        if !problems.is_empty() {
            bad_files += 1;
        }
        if !args.json {
            let status = if problems.is_empty() { "ok" } else { "DAMAGED" };
            writeln!(out, "{status:>8}  {records:>10} records  {}", path.display())?;
            for p in &problems {
                writeln!(out, "          {}", describe(p))?;
            }
        }
        reports.push(json!({
            "path": path.display().to_string(),
            "ok": problems.is_empty(),
            "records": records,
            "data_bytes": data_bytes,
            "problems": problems.iter().map(problem_json).collect::<Vec<_>>(),
        }));
    }
    progress.finish();
    if args.json {
        writeln!(out, "{}", json!({"ok": bad_files == 0, "files": reports}))?;
    }
    out.flush()?;
    if bad_files > 0 && !args.json {
        eprintln!("tfrec: {bad_files} of {} files have problems", files.len());
    }
    Ok(if unreadable {
        ExitCode::from(crate::error::EXIT_USAGE)
    } else if bad_files > 0 {
        ExitCode::from(crate::error::EXIT_DATA)
    } else {
        ExitCode::SUCCESS
    })
}

//! `tfrec verify`: every CRC of every record, every problem with its file and offset.

use std::io::Write;

use clap::Args as ClapArgs;
use serde_json::{json, Value};
use tfrec::record::{MultiFileReader, OnCorruption, RecordError};

use crate::error::{CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::progress::Progress;
use crate::report::{describe, problem_json, report_stdout};

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
    /// Read each file on this many threads where it can be cut into spans (as `tfrec count
    /// --threads`); the report is the same.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    threads: usize,
}

/// A damaged region: its first problem, and how far the damage reaches when more followed
/// before the next good record (damage inside a compressed stream garbles everything after it).
fn region_json(region: &[RecordError]) -> Value {
    let mut value = region.first().map(problem_json).unwrap_or(Value::Null);
    if let (Some(last), Value::Object(map)) = (region.last(), &mut value) {
        map.insert("region_problems".into(), json!(region.len()));
        map.insert("region_end_offset".into(), json!(last.location.offset));
        if region.len() > 1 {
            map.insert("last_message".into(), json!(describe(last)));
        }
    }
    value
}

fn region_text(region: &[RecordError]) -> String {
    match region {
        [] => String::new(),
        [one] => describe(one),
        [first, .., last] => format!(
            "{} — and {} more problems up to byte {} with no good record between (last: {})",
            describe(first),
            region.len() - 1,
            last.location.offset,
            last.kind
        ),
    }
}

/// Reads every file to the end, resynchronising past damage so that every problem is seen.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let files = args.input.files()?;
    let options = args
        .input
        .reader_options(SkipArgs { skip_corrupt: true })
        .on_corruption(OnCorruption::Resync);
    let (progress, done) = Progress::for_files(&files);
    let mut out = report_stdout();
    let mut reports = Vec::new();
    let mut bad_files = 0;
    let mut unreadable = false;
    for path in &files {
        // Problems met with no good record between them are one damaged region.
        let mut regions: Vec<Vec<RecordError>> = Vec::new();
        let mut records = 0u64;
        let mut data_bytes = 0u64;
        let mut torn_tail_bytes = 0u64;
        let mut compression = None;
        // A file that could not be read through (not found, the wrong compression): not damage.
        let mut unreadable_file = false;
        let mut reader = MultiFileReader::new(vec![path.clone()], options.clone()).threads(args.threads);
        let first = reader.next_located().map(|r| r.is_some());
        match first {
            // Not opened: the file could not be read at all.
            Err(error) if reader.compression_of(0).is_none() => {
                unreadable_file = true;
                regions.push(vec![error]);
            }
            first => {
                compression = reader.compression_of(0).map(|c| c.to_string());
                let mut step = first;
                let end = loop {
                    match step {
                        Ok(true) => {
                            if !reader.problems().is_empty() {
                                regions.push(reader.take_problems());
                            }
                        }
                        Ok(false) => break None,
                        Err(error) => break Some(error),
                    }
                    step = reader.next_located().map(|r| r.is_some());
                };
                records = reader.stats().records;
                data_bytes = reader.stats().data_bytes;
                torn_tail_bytes = reader.stats().torn_tail_bytes;
                let mut last = reader.take_problems();
                if let Some(e) = end {
                    unreadable_file |= e.category() != tfrec::ErrorCategory::Data;
                    last.push(e);
                }
                if !last.is_empty() {
                    regions.push(last);
                }
            }
        }
        let problems: Vec<Value> = regions.iter().map(|r| region_json(r)).collect();
        done.fetch_add(
            std::fs::metadata(path).map_or(0, |m| m.len()),
            std::sync::atomic::Ordering::Relaxed,
        );
        if !problems.is_empty() {
            bad_files += 1;
        }
        unreadable |= unreadable_file;
        if !args.json {
            let status = match (problems.is_empty(), unreadable_file) {
                (true, _) => "ok",
                (false, true) => "ERROR",
                (false, false) => "DAMAGED",
            };
            writeln!(out, "{status:>8}  {records:>10} records  {}", path.display())?;
            for region in &regions {
                writeln!(out, "          {}", region_text(region))?;
            }
        }
        reports.push(json!({
            "path": path.display().to_string(),
            "ok": problems.is_empty(),
            "records": records,
            "data_bytes": data_bytes,
            "torn_tail_bytes": torn_tail_bytes,
            "compression": compression,
            "problems": problems,
        }));
    }
    progress.finish();
    if args.json {
        writeln!(out, "{}", json!({"ok": bad_files == 0, "files": reports}))?;
    }
    out.flush()?;
    if bad_files > 0 && !args.json {
        say!("tfrec: {bad_files} of {} files have problems", files.len());
    }
    Ok(if unreadable {
        ExitCode::from(crate::error::EXIT_USAGE)
    } else if bad_files > 0 {
        ExitCode::from(crate::error::EXIT_DATA)
    } else {
        ExitCode::SUCCESS
    })
}

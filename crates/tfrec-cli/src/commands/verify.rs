//! `tfrec verify`: every CRC of every record, every problem with its file and offset.

use std::process::ExitCode;

use clap::Args as ClapArgs;
use serde_json::{json, Value};
use tfrec::record::{OnCorruption, RecordError, RecordReader};

use crate::input::InputArgs;

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// Print a machine-readable JSON report.
    #[arg(long)]
    json: bool,
}

fn problem_json(error: &RecordError) -> Value {
    json!({
        "kind": error.kind_name(),
        "offset": error.location.offset,
        "record_index": error.location.record_index,
        "decompressed_offset": error.location.decompressed,
        "message": error.kind.to_string(),
    })
}

/// Reads every file to the end, resynchronising past damage so that every problem is seen.
pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let files = tfrec::record::expand_inputs(&args.input.inputs)?;
    let options = args.input.reader_options(true).on_corruption(OnCorruption::Resync);
    let mut reports = Vec::new();
    let mut bad_files = 0;
    for path in &files {
        let mut problems: Vec<RecordError> = Vec::new();
        let mut records = 0u64;
        let mut data_bytes = 0u64;
        match RecordReader::open(path, options.clone()) {
            Err(error) => problems.push(error),
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
                problems.extend(end);
            }
        }
        if !problems.is_empty() {
            bad_files += 1;
        }
        if !args.json {
            let status = if problems.is_empty() { "ok" } else { "DAMAGED" };
            println!("{status:>8}  {records:>10} records  {}", path.display());
            for p in &problems {
                println!("          {p}");
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
    if args.json {
        println!("{:#}", json!({"ok": bad_files == 0, "files": reports}));
    } else if bad_files > 0 {
        eprintln!("{bad_files} of {} files have problems", files.len());
    }
    Ok(if bad_files == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

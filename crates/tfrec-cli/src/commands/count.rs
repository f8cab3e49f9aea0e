//! `tfrec count`: records per file and in total.

use std::process::ExitCode;

use clap::Args as ClapArgs;
use serde_json::json;

use crate::input::InputArgs;
use crate::progress::Progress;

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// Also check each record's data CRC (lengths are always checked). Slower.
    #[arg(long)]
    verify: bool,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut reader = args.input.open(args.verify)?;
    let mut counts = vec![0u64; reader.files().len()];
    let mut progress = Progress::for_reader(&reader);
    let mut failure = None;
    loop {
        match reader.next_record() {
            Ok(Some(_)) => {
                counts[reader.file_index()] += 1;
                progress.record();
            }
            Ok(None) => break,
            Err(error) => {
                failure = Some(error);
                break;
            }
        }
    }
    progress.finish();
    let total: u64 = counts.iter().sum();
    let stats = reader.stats();
    if args.json {
        let files: Vec<_> = reader
            .files()
            .iter()
            .zip(&counts)
            .map(|(path, n)| json!({"path": path.display().to_string(), "records": n}))
            .collect();
        let report = json!({
            "files": files,
            "total": total,
            "skipped_regions": stats.skipped_regions,
            "skipped_files": stats.skipped_files,
            "error": failure.as_ref().map(|e| e.to_string()),
        });
        println!("{report:#}");
    } else {
        for (path, n) in reader.files().iter().zip(&counts) {
            println!("{n:>12}  {}", path.display());
        }
        println!("{total:>12}  total");
        if stats.skipped_regions + stats.skipped_files > 0 {
            eprintln!(
                "skipped {} damaged regions ({} bytes) and {} files",
                stats.skipped_regions, stats.skipped_bytes, stats.skipped_files
            );
        }
    }
    match failure {
        Some(error) => {
            eprintln!("tfrec: {error}");
            Ok(ExitCode::from(1))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

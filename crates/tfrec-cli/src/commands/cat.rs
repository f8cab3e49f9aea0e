//! `tfrec cat`: prints records.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Args as ClapArgs;

use crate::input::InputArgs;

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// Print each record's place and length and the start of its bytes in hex.
    #[arg(long)]
    raw: bool,
    /// Print at most this many records.
    #[arg(long)]
    limit: Option<u64>,
    /// Skip this many records first.
    #[arg(long, default_value_t = 0)]
    skip: u64,
}

const HEX_PREFIX: usize = 32;

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut reader = args.input.open(true)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut seen = 0u64;
    let mut printed = 0u64;
    while let Some(record) = reader.next_record()? {
        seen += 1;
        if seen <= args.skip {
            continue;
        }
        if args.limit.is_some_and(|limit| printed >= limit) {
            break;
        }
        let hex: String = record.iter().take(HEX_PREFIX).map(|b| format!("{b:02x}")).collect();
        let more = if record.len() > HEX_PREFIX { "…" } else { "" };
        let len = record.len();
        let offset = reader.last_record_offset();
        let path = reader
            .current_path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        if writeln!(out, "{path}@{offset}\t{len}\t{hex}{more}").is_err() {
            // A closed pipe (`tfrec cat … | head`) is a normal way to stop.
            return Ok(ExitCode::SUCCESS);
        }
        printed += 1;
    }
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}

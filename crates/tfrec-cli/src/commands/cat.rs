//! `tfrec cat`: prints records as protobuf text, protobuf JSON, friendly JSON lines, or raw.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Args as ClapArgs, ValueEnum};
use tfrec::example::{Example, SequenceExample};

use crate::input::InputArgs;
use crate::messages::{MessageArgs, DETECT_RECORDS};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    /// Protobuf text format, as Python's `print(example)`.
    Text,
    /// Protobuf's JSON mapping, as `json_format.MessageToJson`.
    Json,
    /// One friendly JSON object per line: `{"age": [19], "name": ["goat"]}`.
    Jsonl,
    /// Each record's place, length and first bytes in hex.
    Raw,
}

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    message: MessageArgs,
    /// How to print each record.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Same as --format raw.
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

struct Printer {
    format: Format,
    sequence: bool,
}

impl Printer {
    fn print(
        &self,
        out: &mut impl Write,
        record: &[u8],
        index: u64,
        place: &str,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let decode_error = |e: tfrec::example::DecodeError| format!("{place}: record {index}: {e}");
        match self.format {
            Format::Raw => {
                let hex: String = record.iter().take(HEX_PREFIX).map(|b| format!("{b:02x}")).collect();
                let more = if record.len() > HEX_PREFIX { "…" } else { "" };
                writeln!(out, "{place}\t{}\t{hex}{more}", record.len())?;
            }
            _ if self.sequence => {
                let seq = SequenceExample::decode(record).map_err(decode_error)?;
                match self.format {
                    Format::Text => write!(out, "# {place} record {index}\n{}", seq.to_text())?,
                    Format::Json => writeln!(out, "{}", seq.to_json())?,
                    _ => writeln!(out, "{}", seq.to_friendly_json())?,
                }
            }
            _ => {
                let ex = Example::decode(record).map_err(decode_error)?;
                match self.format {
                    Format::Text => write!(out, "# {place} record {index}\n{}", ex.to_text())?,
                    Format::Json => writeln!(out, "{}", ex.to_json())?,
                    _ => writeln!(out, "{}", ex.to_friendly_json())?,
                }
            }
        }
        Ok(())
    }
}

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut reader = args.input.open(true)?;
    // Read ahead a few records to tell Example from SequenceExample.
    let mut first = Vec::new();
    while first.len() < DETECT_RECORDS {
        match reader.next_located()? {
            Some(r) => first.push((r.data.to_vec(), r.to_string())),
            None => break,
        }
    }
    let format = if args.raw { Format::Raw } else { args.format };
    let sequence = matches!(format, Format::Raw) || args.message.is_sequence(first.iter().map(|(r, _)| r.as_slice()));
    let printer = Printer { format, sequence };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut index = 0u64;
    let mut printed = 0u64;
    let mut emit = |record: &[u8], place: &str| -> Result<bool, Box<dyn std::error::Error>> {
        let i = index;
        index += 1;
        if i < args.skip {
            return Ok(true);
        }
        if args.limit.is_some_and(|limit| printed >= limit) {
            return Ok(false);
        }
        printed += 1;
        match printer.print(&mut out, record, i, place) {
            // A closed pipe (`tfrec cat … | head`) is a normal way to stop.
            Err(e)
                if e.downcast_ref::<io::Error>()
                    .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) =>
            {
                Ok(false)
            }
            other => other.map(|()| true),
        }
    };
    for (record, place) in &first {
        if !emit(record, place)? {
            return Ok(ExitCode::SUCCESS);
        }
    }
    while let Some(record) = reader.next_located()? {
        if !emit(record.data, &record.to_string())? {
            break;
        }
    }
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}

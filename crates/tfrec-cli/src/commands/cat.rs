//! `tfrec cat`: prints records as protobuf text format, protobuf JSON, friendly JSON lines, or
//! raw.

use std::io::{IsTerminal, Write};

use clap::{Args as ClapArgs, ValueEnum};
use tfrec::example::{ExampleView, RenderFormat, SequenceExampleView};
use tfrec::record::{LocatedRecord, MultiFileReader, RecordError};

use crate::error::{CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::messages::{MessageArgs, DETECT_BYTES, DETECT_RECORDS};
use crate::report::{flush_at_end, print_skipped, render_to, stdout};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    /// Protobuf text format (as Python's `text_format.MessageToString`), one message per record
    /// after a `# FILE@OFFSET record N` comment.
    Text,
    /// Protobuf's JSON mapping (as `json_format.MessageToJson`), one record per line.
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
    skip_corrupt: SkipArgs,
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
    /// Print at most this many bytes of each feature's values (longer values and lists are cut,
    /// and a note says so on stderr); 0 prints everything. Default: 4096 when standard output
    /// is a terminal, else everything.
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<usize>,
}

const HEX_PREFIX: usize = 32;
const TERMINAL_MAX_BYTES: usize = 4096;

struct Printer {
    format: Format,
    sequence: bool,
    /// 0: no cap.
    max_bytes: usize,
    cut_any: bool,
}

impl Printer {
    fn print(&mut self, out: &mut impl Write, record: &[u8], index: u64, place: &str) -> Result<(), CliError> {
        let decode_error = |e: tfrec::example::DecodeError| {
            let kind = if self.sequence { "SequenceExample" } else { "Example" };
            crate::error::data(format!(
                "{place}: record {index} is not a valid {kind}: {e} (--kind to choose)"
            ))
        };
        match self.format {
            Format::Raw => {
                write!(out, "{place}\t{}\t", record.len())?;
                for b in record.iter().take(HEX_PREFIX) {
                    write!(out, "{b:02x}")?;
                }
                let more = if record.len() > HEX_PREFIX { "…" } else { "" };
                writeln!(out, "{more}")?;
            }
            _ => {
                // Checked whole before anything of it is printed: a malformed record prints
                // nothing, and its error is decoding's.
                let (example, sequence) = (ExampleView::new(record), SequenceExampleView::new(record));
                if self.sequence {
                    sequence.validate()
                } else {
                    example.validate()
                }
                .map_err(decode_error)?;
                let format = match self.format {
                    Format::Text => {
                        writeln!(out, "# {place} record {index}")?;
                        RenderFormat::Text
                    }
                    Format::Json => RenderFormat::JsonLine,
                    _ => RenderFormat::FriendlyJson,
                };
                let max = self.max_bytes;
                let mut cut = false;
                render_to(out, |w| {
                    cut = if self.sequence {
                        sequence.render(w, format, max)?
                    } else {
                        example.render(w, format, max)?
                    };
                    Ok(())
                })?;
                self.cut_any |= cut;
                if format != RenderFormat::Text {
                    writeln!(out)?;
                }
            }
        }
        Ok(())
    }
}

fn place(r: &LocatedRecord<'_>) -> String {
    r.to_string()
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let mut reader: MultiFileReader = args.input.open(args.skip_corrupt)?;
    let format = if args.raw { Format::Raw } else { args.format };
    let limit = args.limit.unwrap_or(u64::MAX);
    let wanted = args.skip.saturating_add(limit);
    // Read ahead to tell Example from SequenceExample, only when that must be guessed, and no
    // further than the records that will be printed. An error met there is reported after
    // the good records before it are printed, as TensorFlow's `take` would give them.
    let guess = !matches!(format, Format::Raw) && args.message.forced().is_none();
    let look = wanted.min(DETECT_RECORDS as u64);
    let max_bytes = match args.max_bytes {
        Some(n) => n,
        None if std::io::stdout().is_terminal() => TERMINAL_MAX_BYTES,
        None => 0,
    };
    // The records looked at, copied until the kind is decided; `None` once it is.
    let mut first: Option<Vec<(Vec<u8>, String)>> = (guess && look > 0).then(Vec::new);
    let mut printer = Printer {
        format,
        sequence: args.message.forced().unwrap_or(false),
        max_bytes,
        cut_any: false,
    };
    let mut held = 0;
    let mut pending_error: Option<RecordError> = None;
    let mut out = stdout();
    let mut index = 0u64;
    let mut emit = |out: &mut std::io::BufWriter<std::io::StdoutLock<'static>>,
                    printer: &mut Printer,
                    record: &[u8],
                    place: &str|
     -> Result<bool, CliError> {
        let i = index;
        index += 1;
        if i < args.skip {
            return Ok(true);
        }
        if i >= wanted {
            return Ok(false);
        }
        printer.print(out, record, i, place)?;
        Ok(index < wanted)
    };
    let mut more = true;
    while more {
        let r = match reader.next_located() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                pending_error = Some(e);
                break;
            }
        };
        let place = place(&r);
        if let Some(looked) = first.as_mut() {
            let last = looked.len() as u64 + 1 >= look || held + r.data.len() >= DETECT_BYTES;
            if !last {
                held += r.data.len();
                looked.push((r.data.to_vec(), place));
                continue;
            }
            // The record that ends the look is looked at, and printed, where the reader holds
            // it: a copy of a huge record would double what `cat` holds.
            let looked = first.take().unwrap_or_default();
            printer.sequence = args
                .message
                .is_sequence(looked.iter().map(|(r, _)| r.as_slice()).chain([r.data]));
            for (record, place) in &looked {
                more = emit(&mut out, &mut printer, record, place)?;
                if !more {
                    break;
                }
            }
            if !more {
                break;
            }
        }
        more = emit(&mut out, &mut printer, r.data, &place)?;
    }
    // The input (or its readable part) ended while looking: the kind is decided from what was.
    if let Some(looked) = first.take() {
        printer.sequence = args.message.is_sequence(looked.iter().map(|(r, _)| r.as_slice()));
        for (record, place) in &looked {
            more = emit(&mut out, &mut printer, record, place)?;
            if !more {
                break;
            }
        }
    }
    // Every record asked for was read (or the damage that ended the reading was met).
    flush_at_end(&mut out)?;
    if printer.cut_any {
        say!("note: values longer than {max_bytes} bytes were cut (--max-bytes 0 prints everything)");
    }
    print_skipped(&reader);
    match pending_error {
        // Only an error before the records asked for matters.
        Some(e) if more => Ok(crate::error::report_record_failure(e)),
        _ => Ok(ExitCode::SUCCESS),
    }
}

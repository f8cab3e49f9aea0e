//! `tfrec from-jsonl`: writes records from friendly JSON lines (`{"age": [19], "name": ["goat"]}`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use clap::Args as ClapArgs;
use serde_json::Value;
use tfrec::example::{encode_friendly_json, FriendlyMessage, Kind, TypeHints};

use crate::error::{CliError, ExitCode};
use crate::messages::KindChoice;
use crate::output::OutputArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// JSON-lines files, one record per line (`-` for standard input).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
    /// Kinds of features whose values do not show them: `name=int64,score=float,raw=bytes`.
    #[arg(long, value_delimiter = ',')]
    types: Vec<String>,
    /// A feature spec JSON file (as `tfrec schema --json` prints): every feature's kind.
    #[arg(long)]
    spec: Option<PathBuf>,
    /// The message each line holds (auto: a line whose keys are `context` and/or
    /// `feature_lists` is a SequenceExample).
    #[arg(long, value_enum, default_value = "auto")]
    kind: KindChoice,
}

fn kind_named(name: &str) -> Option<Kind> {
    // The library's names, and Python's for the same types.
    match name {
        "int" => Some(Kind::Int64),
        "str" => Some(Kind::Bytes),
        other => Kind::from_name(other),
    }
}

fn hints(args: &Args) -> Result<TypeHints, CliError> {
    let mut hints = TypeHints::new();
    if let Some(path) = &args.spec {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let spec: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: not a JSON spec: {e}", path.display()))?;
        let mut add = |map: &serde_json::Map<String, Value>| {
            for (name, s) in map {
                if let Some(kind) = s.get("dtype").and_then(Value::as_str).and_then(kind_named) {
                    hints.insert(name.clone(), kind);
                }
            }
        };
        let object = spec.as_object().ok_or("the spec must be a JSON object")?;
        match (object.get("context_features"), object.get("sequence_features")) {
            (None, None) => add(object),
            (c, s) => {
                for part in [c, s].into_iter().flatten() {
                    add(part
                        .as_object()
                        .ok_or("context_features/sequence_features must be objects")?);
                }
            }
        }
    }
    for pair in &args.types {
        let (name, kind) = pair
            .split_once('=')
            .ok_or_else(|| format!("--types wants name=kind, got {pair:?}"))?;
        let kind = kind_named(kind).ok_or_else(|| format!("unknown kind {kind:?} (int64, float or bytes)"))?;
        hints.insert(name.to_owned(), kind);
    }
    Ok(hints)
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let hints = hints(&args)?;
    let reads: Vec<PathBuf> = args.inputs.iter().chain(&args.spec).cloned().collect();
    let mut output = args.output.create(&reads)?;
    let (progress, done) = crate::progress::Progress::for_files(&args.inputs);
    for path in &args.inputs {
        let stdin = path.as_os_str() == "-";
        let name = if stdin {
            "standard input".to_owned()
        } else {
            path.display().to_string()
        };
        let mut input: Box<dyn BufRead> = if stdin {
            Box::new(BufReader::new(std::io::stdin()))
        } else {
            Box::new(BufReader::new(crate::input::open_input(path)?))
        };
        // One buffer for all lines: a new one per line would leave the longest line's block and
        // the next line's both held by the allocator.
        let mut buffer = Vec::new();
        for i in 0usize.. {
            buffer.clear();
            let read = input
                .read_until(b'\n', &mut buffer)
                .map_err(|e| format!("{name}:{}: cannot read: {e}", i + 1))?;
            if read == 0 {
                break;
            }
            // As `BufRead::lines`: without the `\n` or `\r\n`.
            let bytes = buffer
                .strip_suffix(b"\n")
                .map_or(&buffer[..], |l| l.strip_suffix(b"\r").unwrap_or(l));
            let line = std::str::from_utf8(bytes).map_err(|e| {
                crate::error::data(format!(
                    "{name}:{}: not UTF-8 text (byte {:#04x} at byte {} of the line); JSON lines must be UTF-8",
                    i + 1,
                    bytes.get(e.valid_up_to()).copied().unwrap_or_default(),
                    e.valid_up_to() + 1
                ))
            })?;
            done.fetch_add(line.len() as u64 + 1, std::sync::atomic::Ordering::Relaxed);
            if line.trim().is_empty() {
                continue;
            }
            let place = |e: tfrec::example::FriendlyJsonError| crate::error::data(format!("{name}:{}: {e}", i + 1));
            let message = match args.kind {
                KindChoice::Auto => FriendlyMessage::Auto,
                KindChoice::Example => FriendlyMessage::Example,
                KindChoice::Sequence => FriendlyMessage::SequenceExample,
            };
            let (bytes, _) = encode_friendly_json(line, &hints, message).map_err(place)?;
            output.writer.write_record(&bytes)?;
        }
    }
    progress.finish();
    let n = output.finish_verified()?;
    say!("wrote {n} records to {}", args.output.output.display());
    Ok(ExitCode::SUCCESS)
}

//! `tfrec from-text`: writes records from protobuf text format.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use tfrec::example::{Example, SequenceExample};

use crate::error::{CliError, ExitCode};
use crate::messages::KindChoice;
use crate::output::OutputArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// Text-format files: one message each, or several separated by lines holding only `---`.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
    /// The message each holds (auto: detected from its top-level fields).
    #[arg(long, value_enum, default_value = "auto")]
    kind: KindChoice,
}

/// Splits a file into messages at lines holding only `---`.
fn messages(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.lines() {
        if line.trim() == "---" {
            out.push(String::new());
        } else if let Some(last) = out.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    out.retain(|m| {
        m.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    out
}

/// A SequenceExample's top-level fields are `context` and `feature_lists`; an Example's is
/// `features`. The first field name tells.
fn looks_like_sequence(text: &str) -> bool {
    let first_field = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    first_field.starts_with("context") || first_field.starts_with("feature_lists")
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let mut output = args.output.create(&args.inputs)?;
    let (progress, done) = crate::progress::Progress::for_files(&args.inputs);
    for path in &args.inputs {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut crate::input::open_input(path)?, &mut text).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => crate::error::data(format!(
                "{}: not UTF-8 text; text-format files must be UTF-8",
                path.display()
            )),
            _ => format!("{}: cannot read: {e}", path.display()).into(),
        })?;
        done.fetch_add(text.len() as u64, std::sync::atomic::Ordering::Relaxed);
        for (i, message) in messages(&text).iter().enumerate() {
            let place =
                |e: tfrec::example::TextError| crate::error::data(format!("{} message {i}: {e}", path.display()));
            let sequence = match args.kind {
                KindChoice::Auto => looks_like_sequence(message),
                KindChoice::Example => false,
                KindChoice::Sequence => true,
            };
            let bytes = if sequence {
                SequenceExample::from_text(message).map_err(place)?.encode()
            } else {
                Example::from_text(message).map_err(place)?.encode()
            };
            output.writer.write_record(&bytes)?;
        }
    }
    progress.finish();
    let n = output.finish_verified()?;
    say!("wrote {n} records to {}", args.output.output.display());
    Ok(ExitCode::SUCCESS)
}

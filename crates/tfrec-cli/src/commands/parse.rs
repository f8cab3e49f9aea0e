//! `tfrec parse`: parses records with a feature spec, as `tf.io.parse_example` /
//! `parse_sequence_example` do, and prints, saves or just times the tensors.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args as ClapArgs, ValueEnum};
use serde_json::{json, Value};
use tfrec::parse::{ExampleParser, ParseError, SequenceParser, SpecFile, TensorMap};

use crate::input::InputArgs;
use crate::npz::NpzWriter;
use crate::progress::Progress;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Format {
    /// One JSON object per batch (the tensor JSON of the golden vectors).
    Json,
    /// A NumPy .npz file (needs -o): arrays named `b<batch>/<feature>[/part]`.
    Npz,
    /// Parse everything, keep nothing (with --stats, a throughput measurement).
    None,
}

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// The feature spec: a JSON object of name → spec, or
    /// {"context_features": …, "sequence_features": …} for SequenceExamples.
    #[arg(long)]
    spec: PathBuf,
    /// Records per batch.
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Parse at most this many records.
    #[arg(long)]
    limit: Option<u64>,
    /// Threads parsing each batch (minibatches on a thread pool).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// What to do with the tensors.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Where to write the .npz file.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Print records/s and MB/s to stderr at the end.
    #[arg(long)]
    stats: bool,
}

enum Parser {
    Example(ExampleParser),
    Sequence(SequenceParser),
}

impl Parser {
    fn parse(&self, batch: &[&[u8]], threads: usize) -> Result<Value, ParseError> {
        let minibatch = batch.len().div_ceil(threads.max(1));
        let to_json = |m: &TensorMap| Value::Object(m.iter().map(|(k, t)| (k.clone(), t.to_json())).collect());
        Ok(match self {
            Parser::Example(p) => json!({"features": to_json(&p.parse_batch_parallel(batch, minibatch)?)}),
            Parser::Sequence(p) => {
                let parsed = p.parse_batch_parallel(batch, minibatch)?;
                json!({"context": to_json(&parsed.context), "feature_lists": to_json(&parsed.feature_lists),
                       "lengths": to_json(&parsed.lengths)})
            }
        })
    }

    fn tensors(&self, batch: &[&[u8]], threads: usize) -> Result<Vec<(&'static str, TensorMap)>, ParseError> {
        let minibatch = batch.len().div_ceil(threads.max(1));
        Ok(match self {
            Parser::Example(p) => vec![("", p.parse_batch_parallel(batch, minibatch)?)],
            Parser::Sequence(p) => {
                let parsed = p.parse_batch_parallel(batch, minibatch)?;
                vec![
                    ("context/", parsed.context),
                    ("feature_lists/", parsed.feature_lists),
                    ("lengths/", parsed.lengths),
                ]
            }
        })
    }
}

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let spec_text = std::fs::read_to_string(&args.spec).map_err(|e| format!("{}: {e}", args.spec.display()))?;
    let spec: Value = serde_json::from_str(&spec_text).map_err(|e| format!("{}: {e}", args.spec.display()))?;
    let parser = match SpecFile::from_json(&spec)? {
        SpecFile::Example(specs) => Parser::Example(ExampleParser::new(&specs)?),
        SpecFile::Sequence(specs) => Parser::Sequence(SequenceParser::new(&specs)?),
    };
    let mut npz = match (args.format, &args.output) {
        (Format::Npz, Some(path)) => Some(NpzWriter::create(path)?),
        (Format::Npz, None) => return Err("--format npz needs -o FILE.npz".into()),
        _ => None,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.max(1))
        .build()?;
    let mut reader = args.input.open(true)?;
    let mut progress = Progress::for_reader(&reader);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let batch_size = args.batch.max(1);
    let limit = args.limit.unwrap_or(u64::MAX);
    let started = Instant::now();
    let (mut records, mut bytes, mut batches) = (0u64, 0u64, 0u64);
    let mut arena: Vec<u8> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(batch_size);
    loop {
        arena.clear();
        spans.clear();
        while spans.len() < batch_size && records + (spans.len() as u64) < limit {
            let Some(record) = reader.next_record()? else { break };
            let start = arena.len();
            arena.extend_from_slice(record);
            spans.push((start, arena.len()));
            progress.record();
        }
        if spans.is_empty() {
            break;
        }
        let batch: Vec<&[u8]> = spans.iter().map(|&(s, e)| &arena[s..e]).collect();
        let first = records;
        let fail = |e: ParseError| format!("batch {batches} (records {first}..): {e}");
        match args.format {
            Format::Json => {
                let value = pool.install(|| parser.parse(&batch, args.threads)).map_err(fail)?;
                writeln!(out, "{value}")?;
            }
            Format::Npz => {
                let parts = pool.install(|| parser.tensors(&batch, args.threads)).map_err(fail)?;
                if let Some(npz) = npz.as_mut() {
                    for (prefix, tensors) in &parts {
                        npz.add(&format!("b{batches}/{prefix}"), tensors)?;
                    }
                }
            }
            Format::None => {
                pool.install(|| parser.tensors(&batch, args.threads)).map_err(fail)?;
            }
        }
        records += batch.len() as u64;
        bytes += arena.len() as u64;
        batches += 1;
    }
    progress.finish();
    out.flush()?;
    if let Some(npz) = npz {
        npz.finish()?;
    }
    if args.stats {
        let seconds = started.elapsed().as_secs_f64();
        eprintln!(
            "parsed {records} records ({:.1} MB) in {batches} batches in {seconds:.3} s: {:.0} records/s, {:.1} MB/s",
            bytes as f64 / 1e6,
            records as f64 / seconds,
            bytes as f64 / 1e6 / seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}

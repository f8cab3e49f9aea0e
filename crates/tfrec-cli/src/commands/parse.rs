//! `tfrec parse`: parses records with a feature spec, as `tf.io.parse_example` /
//! `parse_sequence_example` do, and prints, saves or just times the tensors.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args as ClapArgs, ValueEnum};
use serde_json::Value;
use tfrec::example::{detect_message, MessageKind};
use tfrec::npz::NpzWriter;
use tfrec::parse::{ExampleParser, ParseError, SequenceParser, SpecError, SpecFile, TensorMap};

use crate::error::{CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::output::{parent_dir, pending_file, refuse_same_file};
use crate::progress::Progress;
use crate::report::{flush_at_end, print_skipped_stats, render_to, stdout};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Format {
    /// One JSON object per batch, one per line (the tensor JSON of the golden vectors).
    Json,
    /// A NumPy .npz file (needs -o): one array per tensor for the whole input, named
    /// `<feature>[/part]` (`context/`, `feature_lists/`, `lengths/` for SequenceExamples).
    /// Bytes are lossless: `A/bytes` (uint8), `A/offsets` (int64) and `A/shape`.
    Npz,
    /// Parse everything, keep nothing (with --stats, a throughput measurement).
    None,
}

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    skip: SkipArgs,
    /// The feature spec: a JSON object of name → spec, or
    /// {"context_features": …, "sequence_features": …} for SequenceExamples.
    #[arg(long)]
    spec: PathBuf,
    /// Records per batch (1 to 1048576).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    batch: u64,
    /// Parse at most this many records.
    #[arg(long)]
    limit: Option<u64>,
    /// Threads reading and parsing batches, 1 to 256 (default: one per core). These are the
    /// library pipeline's workers: each in turn reads a whole batch, then parses it while
    /// another reads; output stays in input order. Where the process may use one CPU only,
    /// one thread both parses and writes (a second could not run alongside it).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: Option<u64>,
    /// Save the index of each input that has none while reading it, beside the file
    /// (FILE.zidx for GZIP and ZLIB, FILE.idx for plain files, as `tfrec index` writes them;
    /// only for a file read to its end without damage). With an index, later runs with two
    /// threads or more read each file on every thread. Also set by TFREC_WRITE_INDEX=1.
    #[arg(long)]
    write_index: bool,
    /// What to do with the tensors.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Where to write the .npz file (written under a temporary name, renamed when complete).
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
    fn tensors(&self, batch: &[&[u8]]) -> Result<Vec<(&'static str, TensorMap)>, ParseError> {
        Ok(match self {
            Parser::Example(p) => vec![("", p.parse_batch(batch)?)],
            Parser::Sequence(p) => {
                let parsed = p.parse_batch(batch)?;
                vec![
                    ("context/", parsed.context),
                    ("feature_lists/", parsed.feature_lists),
                    ("lengths/", parsed.lengths),
                ]
            }
        })
    }

    /// One batch as a JSON line: `{"features":{name:tensor,…}}`, or the context, feature
    /// lists and lengths of SequenceExamples, each tensor in the library's tensor JSON.
    fn write_json(&self, out: &mut impl std::fmt::Write, parts: &[(&'static str, TensorMap)]) -> std::fmt::Result {
        let names: &[&str] = match (self, parts.len()) {
            (Parser::Example(_), 1) => &["features"],
            (Parser::Sequence(_), 3) => &["context", "feature_lists", "lengths"],
            _ => return out.write_str("null"),
        };
        out.write_char('{')?;
        for (i, (name, (_, map))) in names.iter().zip(parts).enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            write!(out, "\"{name}\":{{")?;
            for (j, (key, tensor)) in map.iter().enumerate() {
                if j > 0 {
                    out.write_char(',')?;
                }
                out.write_str(&Value::from(key.as_str()).to_string())?;
                out.write_char(':')?;
                tensor.write_json(out)?;
            }
            out.write_char('}')?;
        }
        out.write_char('}')
    }

    /// Warns when the first records look like the other message kind than the spec's. Each is
    /// walked, not decoded: a decoded record would take many times its size.
    fn check_kind(&self, batch: &[&[u8]]) {
        let kinds: Vec<MessageKind> = batch.iter().take(64).map(|r| detect_message(r)).collect();
        match self {
            Parser::Example(_) if kinds.contains(&MessageKind::SequenceExample) => say!(
                "warning: the records look like SequenceExamples (they have feature lists) but the spec is \
                 for Examples; a SequenceExample spec is {{\"context_features\": …, \"sequence_features\": …}}"
            ),
            Parser::Sequence(_)
                if !kinds.is_empty()
                    && !kinds.contains(&MessageKind::SequenceExample)
                    && batch.iter().any(|r| !r.is_empty()) =>
            {
                say!(
                    "warning: no record has feature lists, so they look like Examples, but the spec is for \
                     SequenceExamples; an Example spec is a plain {{name: spec}} object"
                )
            }
            _ => {}
        }
    }
}

/// One parsed batch, with what it counts for the statistics.
struct Parsed {
    parts: Vec<(&'static str, TensorMap)>,
    records: u64,
    bytes: u64,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let spec_text = std::fs::read_to_string(&args.spec).map_err(|e| format!("{}: {e}", args.spec.display()))?;
    let spec_error = |e: &dyn std::fmt::Display| format!("{}: {e}", args.spec.display());
    let spec = SpecFile::from_json_str(&spec_text).map_err(|e| match e {
        // Text that is not JSON is reported in serde_json's words alone.
        SpecError::JsonSyntax { message, .. } => spec_error(&message),
        other => spec_error(&other),
    })?;
    let parser = match spec {
        SpecFile::Example(specs) => Parser::Example(ExampleParser::new(&specs).map_err(|e| spec_error(&e))?),
        SpecFile::Sequence(specs) => Parser::Sequence(SequenceParser::new(&specs).map_err(|e| spec_error(&e))?),
    };
    let parser = Arc::new(parser);
    let write_index = args.write_index || std::env::var_os("TFREC_WRITE_INDEX").is_some_and(|v| v == "1");
    let dataset = args.input.dataset(args.skip)?.write_indexes(write_index);
    // Every file the command reads, the spec too, is checked against the output.
    let files: Vec<PathBuf> = dataset.files().to_vec();
    let reads: Vec<PathBuf> = files.iter().chain([&args.spec]).cloned().collect();
    let npz_file = match (args.format, &args.output) {
        (Format::Npz, Some(path)) => {
            refuse_same_file(path, &reads)?;
            let pending = pending_file(path)?;
            // Spooled beside the temporary file: the output's own directory, or for a URL the
            // local one the file is written in before its upload.
            let stream = NpzWriter::new(pending.file()?, parent_dir(pending.temp_path()));
            Some((pending, stream))
        }
        (Format::Npz, None) => return Err("--format npz needs -o FILE.npz".into()),
        (_, Some(_)) => return Err("-o is for --format npz".into()),
        _ => None,
    };
    let dataset = match args.limit {
        Some(limit) => dataset.take(limit),
        None => dataset,
    };
    let worker_parser = Arc::clone(&parser);
    let threads = match args.threads {
        Some(n) => n as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    // The library pipeline: `threads` workers take turns at reading a batch and parse theirs
    // in parallel; results come back in input order.
    let batches = dataset
        .batch(args.batch as usize, false)?
        .map_batches(move |batch| {
            let records = batch.records();
            if batch.index == 0 {
                worker_parser.check_kind(&records);
            }
            let parts = worker_parser.tensors(&records).map_err(|e| batch.parse_error(e))?;
            Ok(Parsed {
                parts,
                records: batch.len() as u64,
                bytes: batch.data_len() as u64,
            })
        })
        .threads(threads)
        .prefetch(2)
        .iter();
    let counters = batches.counters();
    let progress = Progress::for_pipeline(&files, Arc::clone(&counters));
    let mut out = stdout();
    let started = Instant::now();
    let (mut records, mut bytes, mut count) = (0u64, 0u64, 0u64);
    // An early return drops the iterator, which stops and joins the pipeline's threads.
    let mut npz_file = npz_file;
    for batch in batches {
        let Parsed {
            parts,
            records: n,
            bytes: b,
        } = batch?;
        match args.format {
            // Written as it is rendered: a batch's line can be many times its tensors.
            Format::Json => {
                render_to(&mut out, |w| parser.write_json(w, &parts))?;
                writeln!(out)?;
            }
            Format::Npz => {
                if let Some((file, npz)) = &mut npz_file {
                    npz.push(parts).map_err(|e| CliError::from(e).writing(file.path()))?;
                }
            }
            Format::None => {}
        }
        records += n;
        bytes += b;
        count += 1;
    }
    progress.finish();
    flush_at_end(&mut out)?;
    if let Some((file, npz)) = npz_file {
        npz.finish().map_err(|e| CliError::from(e).writing(file.path()))?;
        file.commit()?;
    }
    if let Ok(problems) = counters.problems.lock() {
        print_skipped_stats(&counters.read_stats(), &problems.iter().collect::<Vec<_>>());
    }
    if args.stats {
        let seconds = started.elapsed().as_secs_f64();
        say!(
            "parsed {records} records ({:.1} MB) in {count} batches in {seconds:.3} s: {:.0} records/s, {:.1} MB/s",
            bytes as f64 / 1e6,
            records as f64 / seconds,
            bytes as f64 / 1e6 / seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}

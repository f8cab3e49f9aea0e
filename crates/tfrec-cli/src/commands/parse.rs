//! `tfrec parse`: parses records with a feature spec, as `tf.io.parse_example` /
//! `parse_sequence_example` do, and prints, saves or just times the tensors.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Instant;

use clap::{Args as ClapArgs, ValueEnum};
use serde_json::{json, Value};
use tfrec::example::{detect_message, MessageKind};
use tfrec::parse::{concat_batch, ExampleParser, ParseError, SequenceParser, SpecFile, TensorMap};
use tfrec::record::{MultiFileReader, RecordError};

use crate::input::{InputArgs, SkipArgs};
use crate::npz::NpzWriter;
use crate::output::{refuse_same_file, PendingFile};
use crate::progress::Progress;
use crate::report::{print_skipped, stdout};

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
    /// Threads parsing each batch (1 to 256; minibatches on a thread pool).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
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

    fn to_json(&self, parts: &[(&'static str, TensorMap)]) -> Value {
        let to_json = |m: &TensorMap| Value::Object(m.iter().map(|(k, t)| (k.clone(), t.to_json())).collect());
        match (self, parts) {
            (Parser::Example(_), [(_, features)]) => json!({"features": to_json(features)}),
            (_, [(_, context), (_, lists), (_, lengths)]) => {
                json!({"context": to_json(context), "feature_lists": to_json(lists), "lengths": to_json(lengths)})
            }
            _ => Value::Null,
        }
    }

    /// Warns when the first records look like the other message kind than the spec's.
    fn check_kind(&self, batch: &[&[u8]]) {
        let kinds: Vec<MessageKind> = batch.iter().take(64).map(|r| detect_message(r)).collect();
        match self {
            Parser::Example(_) if kinds.contains(&MessageKind::SequenceExample) => eprintln!(
                "warning: the records look like SequenceExamples (they have feature lists) but the spec is \
                 for Examples; a SequenceExample spec is {{\"context_features\": …, \"sequence_features\": …}}"
            ),
            Parser::Sequence(_)
                if !kinds.is_empty()
                    && !kinds.contains(&MessageKind::SequenceExample)
                    && batch.iter().any(|r| !r.is_empty()) =>
            {
                eprintln!(
                    "warning: no record has feature lists, so they look like Examples, but the spec is for \
                     SequenceExamples; an Example spec is a plain {{name: spec}} object"
                )
            }
            _ => {}
        }
    }
}

/// Where a record of the batch came from: its file, byte offset and index in the file.
struct Place {
    file: usize,
    offset: u64,
    index_in_file: u64,
}

/// A batch of raw records, read ahead on the reader thread into one buffer. Its buffers go
/// back to the reader to be filled again, so batches cost no allocation after the first few.
#[derive(Default)]
struct RawBatch {
    arena: Vec<u8>,
    spans: Vec<(usize, usize)>,
    places: Vec<Place>,
}

/// Batches read ahead of the parse: the reader thread fills the next ones while this thread
/// parses (reading, checking CRCs and copying were ~40% of a one-thread run on sequences).
const READ_AHEAD: usize = 2;

/// Reads batches of `batch_size` records (at most `limit` in all) on a thread of its own,
/// sending them on `full` and refilling the ones that come back on `empty`. Returns the reader
/// (for its counters) when the input ends or the receiver hangs up.
fn read_batches(
    mut reader: MultiFileReader,
    batch_size: usize,
    limit: u64,
    full: mpsc::SyncSender<Result<RawBatch, RecordError>>,
    empty: mpsc::Receiver<RawBatch>,
) -> MultiFileReader {
    let (mut taken, mut last_file, mut in_file) = (0u64, usize::MAX, 0u64);
    while taken < limit {
        let mut batch = empty.try_recv().unwrap_or_default();
        batch.arena.clear();
        batch.spans.clear();
        batch.places.clear();
        while batch.spans.len() < batch_size && taken + (batch.spans.len() as u64) < limit {
            let record = match reader.next_located() {
                Ok(Some(record)) => record,
                Ok(None) => break,
                Err(e) => {
                    let _ = full.send(Err(e));
                    return reader;
                }
            };
            if record.file_index != last_file {
                (last_file, in_file) = (record.file_index, 0);
            }
            let start = batch.arena.len();
            batch.arena.extend_from_slice(record.data);
            batch.spans.push((start, batch.arena.len()));
            batch.places.push(Place {
                file: record.file_index,
                offset: record.offset,
                index_in_file: in_file,
            });
            in_file += 1;
        }
        if batch.spans.is_empty() {
            break;
        }
        taken += batch.spans.len() as u64;
        if full.send(Ok(batch)).is_err() {
            break;
        }
    }
    reader
}

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let spec_text = std::fs::read_to_string(&args.spec).map_err(|e| format!("{}: {e}", args.spec.display()))?;
    let spec: Value = serde_json::from_str(&spec_text).map_err(|e| format!("{}: {e}", args.spec.display()))?;
    let spec_error = |e: &dyn std::fmt::Display| format!("{}: {e}", args.spec.display());
    let parser = match SpecFile::from_json(&spec).map_err(|e| spec_error(&e))? {
        SpecFile::Example(specs) => Parser::Example(ExampleParser::new(&specs).map_err(|e| spec_error(&e))?),
        SpecFile::Sequence(specs) => Parser::Sequence(SequenceParser::new(&specs).map_err(|e| spec_error(&e))?),
    };
    let threads = args.threads as usize;
    let batch_size = args.batch as usize;
    let reader = args.input.open(args.skip)?;
    let npz_file = match (args.format, &args.output) {
        (Format::Npz, Some(path)) => {
            refuse_same_file(path, reader.files())?;
            Some(PendingFile::create(path)?)
        }
        (Format::Npz, None) => return Err("--format npz needs -o FILE.npz".into()),
        (_, Some(_)) => return Err("-o is for --format npz".into()),
        _ => None,
    };
    // One thread parses in place; more parse minibatches on a pool (with one, handing each
    // batch to a pool thread and waiting for it only added a wake-up per batch).
    let pool = match threads {
        1 => None,
        _ => Some(rayon::ThreadPoolBuilder::new().num_threads(threads).build()?),
    };
    let progress = Progress::for_reader(&reader);
    let files: Vec<PathBuf> = reader.files().to_vec();
    let mut out = stdout();
    let limit = args.limit.unwrap_or(u64::MAX);
    let started = Instant::now();
    let (mut records, mut bytes, mut batches) = (0u64, 0u64, 0u64);
    let (full_tx, full_rx) = mpsc::sync_channel(READ_AHEAD);
    let (empty_tx, empty_rx) = mpsc::channel();
    let read_thread = std::thread::Builder::new()
        .name("tfrec-read".into())
        .spawn(move || read_batches(reader, batch_size, limit, full_tx, empty_rx))?;
    // For npz: every batch's tensors, joined per tensor at the end.
    let mut collected: Vec<Vec<(&'static str, TensorMap)>> = Vec::new();
    // An early return drops `full_rx`, which stops the reader thread at its next batch.
    for raw in full_rx.iter() {
        let raw = raw?;
        let RawBatch { arena, spans, places } = &raw;
        let batch: Vec<&[u8]> = spans.iter().map(|&(s, e)| &arena[s..e]).collect();
        if batches == 0 {
            parser.check_kind(&batch);
        }
        let first = records;
        let fail = |e: ParseError| {
            let place = e.example.and_then(|i| places.get(i)).map(|p| {
                let path = files.get(p.file).map(|f| f.display().to_string()).unwrap_or_default();
                format!("{path}: record {} at byte {}", p.index_in_file, p.offset)
            });
            match place {
                Some(place) => crate::error::data(format!("{place}: {e}")),
                None => crate::error::data(format!("records {first}..{}: {e}", first + batch.len() as u64)),
            }
        };
        let parts = match &pool {
            None => parser.tensors(&batch, 1),
            Some(pool) => pool.install(|| parser.tensors(&batch, threads)),
        }
        .map_err(fail)?;
        match args.format {
            Format::Json => {
                crate::jsonout::write_value(&mut out, &parser.to_json(&parts))?;
                writeln!(out)?;
            }
            Format::Npz => collected.push(parts),
            Format::None => {}
        }
        records += batch.len() as u64;
        bytes += arena.len() as u64;
        batches += 1;
        drop(batch);
        // The reader may have ended already; then the buffers are simply dropped.
        let _ = empty_tx.send(raw);
    }
    let reader = read_thread.join().map_err(|_| "the reader thread panicked")?;
    progress.finish();
    out.flush()?;
    if let Some(file) = npz_file {
        let mut npz = NpzWriter::new(file.file()?);
        for (prefix, joined) in join_batches(collected)? {
            npz.add(prefix, &joined)?;
        }
        npz.finish()?;
        file.commit()?;
    }
    print_skipped(&reader);
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

/// Joins every batch's tensors along the batch dimension, per part and feature, with the
/// library's concatenation (dense features padded to the widest batch).
fn join_batches(
    batches: Vec<Vec<(&'static str, TensorMap)>>,
) -> Result<Vec<(&'static str, TensorMap)>, Box<dyn std::error::Error>> {
    let mut joined: Vec<(
        &'static str,
        std::collections::BTreeMap<String, Vec<tfrec::parse::Tensor>>,
    )> = Vec::new();
    for batch in batches {
        for (i, (prefix, tensors)) in batch.into_iter().enumerate() {
            if joined.len() <= i {
                joined.push((prefix, Default::default()));
            }
            for (name, tensor) in tensors {
                joined[i].1.entry(name).or_default().push(tensor);
            }
        }
    }
    joined
        .into_iter()
        .map(|(prefix, parts)| {
            let map = parts
                .into_iter()
                .map(|(name, tensors)| {
                    concat_batch(tensors)
                        .map(|t| (name.clone(), t))
                        .map_err(|e| format!("{prefix}{name}: {e}").into())
                })
                .collect::<Result<TensorMap, Box<dyn std::error::Error>>>()?;
            Ok((prefix, map))
        })
        .collect()
}

//! `tfrec shard` and `tfrec shuffle`: rewrite a data set into N shards (round robin or by a
//! feature's hash), optionally shuffled, in a chosen compression; every shard is read back and
//! checked before the command reports success.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::Args as ClapArgs;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tfrec::example::ExampleView;
use tfrec::pipeline::{Counters, Dataset};
use tfrec::record::{Compression, CompressionChoice, ReaderOptions, RecordReader, RecordWriter, WriterOptions};

use crate::input::InputArgs;

#[derive(ClapArgs)]
pub struct ShardArgs {
    #[command(flatten)]
    input: InputArgs,
    /// The directory to write the shards to (created if needed).
    #[arg(short, long)]
    output: PathBuf,
    /// How many shards.
    #[arg(long, default_value_t = 1)]
    shards: usize,
    /// Put each record in the shard its feature KEY's values hash to (so equal values share a
    /// shard) instead of round robin. Records are read as Examples.
    #[arg(long, value_name = "KEY")]
    by_feature: Option<String>,
    /// Shuffle through a buffer of this many records first.
    #[arg(long, value_name = "RECORDS")]
    shuffle: Option<usize>,
    /// The shuffle's seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Compression of the shards: none, gzip, zlib.
    #[arg(long = "output-compression", default_value = "none")]
    output_compression: Compression,
    /// Shard file names: PREFIX-00000-of-00004.tfrecord.
    #[arg(long, default_value = "part")]
    prefix: String,
}

#[derive(ClapArgs)]
pub struct ShuffleArgs {
    #[command(flatten)]
    input: InputArgs,
    /// The directory to write the shuffled shards to.
    #[arg(short, long)]
    output: PathBuf,
    /// Records in the shuffle buffer (more: a better shuffle, more memory).
    #[arg(long, default_value_t = 100_000)]
    buffer: usize,
    /// The seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How many shards.
    #[arg(long, default_value_t = 1)]
    shards: usize,
    /// Compression of the shards: none, gzip, zlib.
    #[arg(long = "output-compression", default_value = "none")]
    output_compression: Compression,
}

pub fn run_shuffle(args: ShuffleArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    run(ShardArgs {
        input: args.input,
        output: args.output,
        shards: args.shards,
        by_feature: None,
        shuffle: Some(args.buffer),
        seed: args.seed,
        output_compression: args.output_compression,
        prefix: "shuffled".into(),
    })
}

fn shard_name(dir: &Path, prefix: &str, i: usize, n: usize, compression: Compression) -> PathBuf {
    let ext = match compression {
        Compression::None => "tfrecord",
        Compression::Gzip => "tfrecord.gz",
        Compression::Zlib => "tfrecord.zz",
    };
    dir.join(format!("{prefix}-{i:05}-of-{n:05}.{ext}"))
}

/// The shard of a record by the hash of a feature's values (CRC-32C of their encoding, which
/// is stable across runs and versions); a record without the feature hashes as empty.
fn shard_by_feature(record: &[u8], key: &str, shards: usize) -> Result<usize, String> {
    let view = ExampleView::new(record)
        .get(key.as_bytes())
        .map_err(|e| format!("a record is not an Example: {e}"))?;
    let mut hash = 0u32;
    if let Some(v) = view {
        let mut ints = Vec::new();
        let mut floats = Vec::new();
        v.extend_int64s(&mut ints).map_err(|e| e.to_string())?;
        v.extend_floats(&mut floats).map_err(|e| e.to_string())?;
        for i in ints {
            hash = crc32c::crc32c_append(hash, &i.to_le_bytes());
        }
        for f in floats {
            hash = crc32c::crc32c_append(hash, &f.to_le_bytes());
        }
        v.for_each_bytes(|b| hash = crc32c::crc32c_append(hash, b))
            .map_err(|e| e.to_string())?;
    }
    Ok(hash as usize % shards)
}

pub fn run(args: ShardArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let shards = args.shards.max(1);
    std::fs::create_dir_all(&args.output)?;
    let files = tfrec::record::expand_inputs(&args.input.inputs)?;
    let total_bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let mut dataset = Dataset::from_files(files).reader_options(args.input.reader_options(true));
    if let Some(buffer) = args.shuffle {
        dataset = dataset.shuffle(buffer, args.seed);
    }
    let paths: Vec<PathBuf> = (0..shards)
        .map(|i| shard_name(&args.output, &args.prefix, i, shards, args.output_compression))
        .collect();
    let options = WriterOptions::default().compression(CompressionChoice::Exactly(args.output_compression));
    let mut writers = paths
        .iter()
        .map(|p| RecordWriter::create(p, options.clone()))
        .collect::<Result<Vec<_>, _>>()?;

    let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let batches = dataset.batch(1024, false).raw().iter();
    let counters: std::sync::Arc<Counters> = batches.counters();
    let mut written = 0u64;
    for batch in batches {
        let batch = batch?;
        for record in batch.records() {
            let shard = match &args.by_feature {
                Some(key) => shard_by_feature(record, key, shards)?,
                None => (written % shards as u64) as usize,
            };
            writers[shard].write_record(record)?;
            written += 1;
        }
        // Decompressed bytes, an estimate of progress through compressed files.
        bar.set_position(counters.bytes.load(Ordering::Relaxed).min(total_bytes));
        bar.set_message(format!("{written} records"));
    }
    let counts: Vec<u64> = writers.iter().map(|w| w.records_written()).collect();
    for w in writers {
        w.finish()?;
    }
    bar.finish_and_clear();

    // Read every shard back: the command succeeds only if all of it is there and valid.
    let mut verified = 0u64;
    for (path, &expected) in paths.iter().zip(&counts) {
        let mut reader = RecordReader::open(path, ReaderOptions::default())?;
        let mut n = 0u64;
        while reader.next_record()?.is_some() {
            n += 1;
        }
        if n != expected {
            return Err(format!("{}: wrote {expected} records, read back {n}", path.display()).into());
        }
        verified += n;
    }
    let skipped = counters.skipped_regions.load(Ordering::Relaxed) + counters.skipped_files.load(Ordering::Relaxed);
    for (path, n) in paths.iter().zip(&counts) {
        println!("{n:>12}  {}", path.display());
    }
    println!("{verified:>12}  records in {shards} shards, verified");
    if skipped > 0 {
        eprintln!("skipped {skipped} damaged regions or files of the input");
    }
    Ok(ExitCode::SUCCESS)
}

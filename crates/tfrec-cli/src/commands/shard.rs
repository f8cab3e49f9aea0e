//! `tfrec shard` and `tfrec shuffle`: rewrite a data set into N shards (round robin or by a
//! feature's hash), optionally shuffled, in a chosen compression; every shard is read back and
//! checked before the command reports success.
//!
//! The output directory is created only once the inputs open, may not hold an input, is claimed
//! for the run (a second run into it fails at once instead of mixing its shards in), and must
//! be empty of anything but the shards of an earlier run with the same prefix, which
//! `--overwrite` replaces. Shards are written under temporary names and renamed into place only
//! when all of them are complete, so a failed run leaves the directory as it found it.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use serde_json::json;
use tfrec::example::ExampleView;
use tfrec::record::{
    is_shard_name, shard_name, Compression, CompressionChoice, RecordShuffler, RecordWriter, WriterOptions,
};

use crate::error::{CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::output::{
    claim_dir, clear_debris_once, finish_and_check, pending_file, refuse_dir_holding_inputs, DirClaim, PendingFile,
};
use crate::progress::Progress;
use crate::report::{print_skipped, report_stdout, skipped_json};

/// The most shards one run writes (each is an open file).
pub const MAX_SHARDS: u64 = 10_000;

#[derive(ClapArgs)]
pub struct ShardArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    skip: SkipArgs,
    /// The directory to write the shards to (created if needed).
    #[arg(short, long)]
    output: PathBuf,
    /// How many shards (1 to 10000).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=MAX_SHARDS))]
    shards: u64,
    /// Put each record in the shard its feature KEY's values hash to (so equal values share a
    /// shard) instead of round robin. Records are read as Examples; a key that no record has is
    /// an error.
    #[arg(long, value_name = "KEY")]
    by_feature: Option<String>,
    /// Shuffle through a buffer of this many records first.
    #[arg(long, value_name = "RECORDS", value_parser = clap::value_parser!(u64).range(1..))]
    shuffle: Option<u64>,
    #[command(flatten)]
    common: CommonArgs,
    /// Shard file names: PREFIX-00000-of-00004.tfrecord.
    #[arg(long, default_value = "part")]
    prefix: String,
}

// Options `shard` and `shuffle` share.
#[derive(ClapArgs, Clone)]
pub struct CommonArgs {
    /// The most bytes of records the shuffle buffer holds, whatever its record count.
    #[arg(long, default_value_t = 256 << 20, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    buffer_bytes: u64,
    /// The shuffle's seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Compression of the shards: none, gzip, zlib.
    #[arg(long = "output-compression", default_value = "none")]
    output_compression: Compression,
    /// Replace the shards an earlier run wrote into the output directory (files named as this
    /// command names them); nothing else is ever removed.
    #[arg(long)]
    overwrite: bool,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(ClapArgs)]
pub struct ShuffleArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    skip: SkipArgs,
    /// The directory to write the shuffled shards to.
    #[arg(short, long)]
    output: PathBuf,
    /// Records in the shuffle buffer (more: a better shuffle, more memory; --buffer-bytes also
    /// bounds it).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    buffer: u64,
    /// How many shards (1 to 10000).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=MAX_SHARDS))]
    shards: u64,
    #[command(flatten)]
    common: CommonArgs,
}

pub fn run_shuffle(args: ShuffleArgs) -> Result<ExitCode, CliError> {
    run(ShardArgs {
        input: args.input,
        skip: args.skip,
        output: args.output,
        shards: args.shards,
        by_feature: None,
        shuffle: Some(args.buffer),
        common: args.common,
        prefix: "shuffled".into(),
    })
}

/// The shards of an earlier run in `dir`; an error if it holds anything else.
fn earlier_shards(dir: &Path, prefix: &str, overwrite: bool) -> Result<Vec<PathBuf>, CliError> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(Vec::new()); // Not there yet.
    };
    let mut ours = Vec::new();
    for entry in entries {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == DirClaim::FILE_NAME {
            continue; // Our own claim.
        }
        if path.is_file() && is_shard_name(name, prefix) {
            ours.push(path);
        } else {
            return Err(format!(
                "the output directory {} holds {}, which this command did not write: choose an empty directory",
                dir.display(),
                path.display()
            )
            .into());
        }
    }
    if !ours.is_empty() && !overwrite {
        return Err(format!(
            "the output directory {} holds {} shards of an earlier run (--overwrite replaces them)",
            dir.display(),
            ours.len()
        )
        .into());
    }
    Ok(ours)
}

/// The shards of an earlier run under a bucket prefix; an error if it holds anything else, as
/// [`earlier_shards`] for a directory. (A bucket has no lock to take: two runs into one prefix
/// at the same time are not kept apart, as they are in a directory.)
#[cfg(feature = "remote")]
fn earlier_shards_in_bucket(output: &Path, prefix: &str, overwrite: bool) -> Result<Vec<PathBuf>, CliError> {
    let url = output.to_string_lossy();
    let dir = if url.ends_with('/') {
        url.to_string()
    } else {
        format!("{url}/")
    };
    let (objects, subdirs) = tfrec::record::remote::list_dir(&dir).map_err(|e| format!("{url}: {e}"))?;
    let foreign = |what: &str| -> CliError {
        format!("the output prefix {url} holds {what}, which this command did not write: choose an empty prefix").into()
    };
    if let Some(sub) = subdirs.first() {
        return Err(foreign(sub));
    }
    let mut ours = Vec::new();
    for object in objects {
        let name = object.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !is_shard_name(name, prefix) {
            return Err(foreign(&object.to_string_lossy()));
        }
        ours.push(object);
    }
    if !ours.is_empty() && !overwrite {
        return Err(format!(
            "the output prefix {url} holds {} shards of an earlier run (--overwrite replaces them)",
            ours.len()
        )
        .into());
    }
    Ok(ours)
}

#[cfg(not(feature = "remote"))]
fn earlier_shards_in_bucket(_output: &Path, _prefix: &str, _overwrite: bool) -> Result<Vec<PathBuf>, CliError> {
    // Not reached: a URL output is refused before, as this build cannot write one.
    Ok(Vec::new())
}

/// Removes an earlier run's shard: a file, or an object.
fn remove_earlier(old: &Path) -> Result<(), CliError> {
    #[cfg(feature = "remote")]
    if let Some(url) = old.to_str().filter(|_| tfrec::record::remote::is_url_path(old)) {
        return tfrec::record::remote::delete(url).map_err(|e| CliError::from(e.to_string()));
    }
    fs::remove_file(old).map_err(|e| format!("{}: {e}", old.display()).into())
}

/// The shards being written.
struct Shards {
    writers: Vec<RecordWriter<fs::File>>,
    files: Vec<PendingFile>,
    by_feature: Option<String>,
    found_feature: bool,
    written: u64,
}

impl Shards {
    fn write(&mut self, record: &[u8]) -> Result<(), CliError> {
        let n = self.writers.len() as u64;
        let shard = match &self.by_feature {
            Some(key) => {
                let (shard, found) = ExampleView::new(record).shard_of(key, n).map_err(|e| {
                    crate::error::data(format!("record {}: a record is not an Example: {e}", self.written))
                })?;
                self.found_feature |= found;
                shard
            }
            None => self.written % n,
        };
        self.writers[shard as usize].write_record(record)?;
        self.written += 1;
        Ok(())
    }
}

pub fn run(args: ShardArgs) -> Result<ExitCode, CliError> {
    let shards = args.shards;
    let common = &args.common;
    // Everything that can be refused is checked before anything is created or written.
    let mut reader = args.input.open(args.skip)?;
    refuse_dir_holding_inputs(&args.output, reader.files())?;
    let result = if tfrec::record::remote::is_url_path(&args.output) {
        // A prefix in a bucket: nothing to create or claim; what it holds is checked as a
        // directory's is, and each shard is uploaded whole.
        let earlier = earlier_shards_in_bucket(&args.output, &args.prefix, args.common.overwrite)?;
        write_shards(&args, &mut reader, shards, &earlier)
    } else {
        write_local(&args, &mut reader, shards)
    };
    let (paths, counts) = result?;

    let mut out = report_stdout();
    let verified: u64 = counts.iter().sum();
    if common.json {
        let report = json!({
            "ok": true,
            "shards": paths.iter().zip(&counts).map(|(p, n)| json!({"path": p.display().to_string(), "records": n})).collect::<Vec<_>>(),
            "total": verified,
            "skipped": skipped_json(&reader),
        });
        writeln!(out, "{report}")?;
    } else {
        for (path, n) in paths.iter().zip(&counts) {
            writeln!(out, "{n:>12}  {}", path.display())?;
        }
        writeln!(out, "{verified:>12}  records in {shards} shards, verified")?;
    }
    out.flush()?;
    print_skipped(&reader);
    Ok(ExitCode::SUCCESS)
}

/// Writes the shards into a local directory, created if missing and claimed for the run.
fn write_local(
    args: &ShardArgs,
    reader: &mut tfrec::record::MultiFileReader,
    shards: u64,
) -> Result<(Vec<PathBuf>, Vec<u64>), CliError> {
    let created_dir = !args.output.exists();
    fs::create_dir_all(&args.output).map_err(|e| format!("{}: {e}", args.output.display()))?;
    // What the directory holds is looked at only under the claim: checked before it, a second
    // run could find it empty, then write beside (or over) the first one's shards.
    let result = claim_dir(&args.output).and_then(|_claim| {
        // A dead run's temporary shards are no reason to refuse the directory.
        clear_debris_once(&args.output);
        let earlier = earlier_shards(&args.output, &args.prefix, args.common.overwrite)?;
        write_shards(args, reader, shards, &earlier)
    });
    if result.is_err() && created_dir {
        let _ = fs::remove_dir(&args.output); // Only if still empty.
    }
    result
}

/// Writes, checks and renames the shards into place; returns their paths and record counts.
fn write_shards(
    args: &ShardArgs,
    reader: &mut tfrec::record::MultiFileReader,
    shards: u64,
    earlier: &[PathBuf],
) -> Result<(Vec<PathBuf>, Vec<u64>), CliError> {
    let common = &args.common;
    let compression = common.output_compression;
    let paths: Vec<PathBuf> = (0..shards)
        .map(|i| shard_name(&args.output, &args.prefix, i, shards, compression))
        .collect();
    let options = WriterOptions::default().compression(CompressionChoice::Exactly(compression));
    let mut files = Vec::with_capacity(paths.len());
    let mut writers = Vec::with_capacity(paths.len());
    for p in &paths {
        let file = pending_file(p)?;
        writers.push(RecordWriter::with_options(file.file()?, options.clone()).with_path(p));
        files.push(file);
    }
    let mut out = Shards {
        writers,
        files,
        by_feature: args.by_feature.clone(),
        found_feature: false,
        written: 0,
    };
    let progress = Progress::for_reader(reader);
    let mut shuffler = args.shuffle.map(|n| {
        RecordShuffler::new(
            usize::try_from(n).unwrap_or(usize::MAX),
            common.buffer_bytes,
            common.seed,
        )
    });
    while let Some(record) = reader.next_record()? {
        match shuffler.as_mut() {
            None => out.write(record)?,
            Some(shuffler) => shuffler.push(record, |r| out.write(r))?,
        }
    }
    if let Some(shuffler) = shuffler {
        shuffler.finish(|r| out.write(r))?;
    }
    progress.finish();
    if let (Some(key), false, true) = (&args.by_feature, out.found_feature, out.written > 0) {
        return Err(crate::error::data(format!(
            "no record has the feature {key:?}: nothing written"
        )));
    }
    // Complete and check every shard before any takes the place of an earlier run's.
    let mut counts = Vec::with_capacity(paths.len());
    for (writer, file) in out.writers.into_iter().zip(&out.files) {
        let n = finish_and_check(writer, file.temp_path(), compression)
            .map_err(|e| format!("{}: {e}", file.path().display()))?;
        counts.push(n);
    }
    for old in earlier {
        if !paths.contains(old) {
            remove_earlier(old)?;
        }
    }
    for file in out.files {
        file.commit()?;
    }
    Ok((paths, counts))
}

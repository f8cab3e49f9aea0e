//! `tfrec count`: records per file and in total, every CRC checked.

use std::io::Write;

use clap::Args as ClapArgs;
use serde_json::json;

use crate::error::{CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::progress::Progress;
use crate::report::{print_skipped, problem_json, report_stdout, skipped_json};

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    skip: SkipArgs,
    /// Check only the framing (lengths and their CRCs), not each record's data CRC: faster, and
    /// the report says so.
    #[arg(long)]
    lengths_only: bool,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
    /// Read each file on this many threads when it has an index beside it (FILE.idx, or
    /// FILE.zidx for a GZIP or ZLIB file, as `tfrec index` writes): ranges of a plain file, or
    /// a compressed file's spans each inflated from its own checkpoint. Files without one, and
    /// --skip-corrupt or --lengths-only, read on one thread as usual.
    #[arg(long, default_value_t = 1, value_name = "N")]
    threads: usize,
}

/// What [`count_indexed`] found: per file its records and compression, and the damage that
/// ended the count (the counts then stop there).
struct IndexedCount {
    files: Vec<(std::path::PathBuf, u64, tfrec::record::Compression)>,
    failure: Option<tfrec::record::RecordError>,
}

/// Counts the records of every file on `threads` threads each, through the indexes saved
/// beside them; `None` when a file has no usable index (or another option asks for the
/// sequential reader), so the caller reads them as usual.
fn count_indexed(args: &Args, files: &[std::path::PathBuf]) -> Option<IndexedCount> {
    use tfrec::record::{Compression, IndexError, RecordFile, RecordIndex, SeekIndex};
    if args.threads < 2 || args.skip.skip_corrupt || args.lengths_only || args.input.allow_torn_tail {
        return None;
    }
    if !matches!(args.input.compression, tfrec::record::CompressionChoice::Auto) {
        return None;
    }
    let mut opened = Vec::with_capacity(files.len());
    for path in files {
        let saved = [RecordIndex::default_path(path), SeekIndex::default_path(path)];
        if tfrec::record::remote::is_url_path(path) || !saved.iter().any(|p| p.exists()) {
            return None;
        }
        match RecordFile::open(path) {
            // Only an index that was there already, never one built now.
            Ok(file) if file.index_file().is_some_and(|p| saved.iter().any(|s| s == p)) => opened.push(file),
            _ => return None,
        }
    }
    let mut count = IndexedCount {
        files: Vec::with_capacity(opened.len()),
        failure: None,
    };
    for file in &opened {
        let compression = file.seek_index().map_or(Compression::None, |s| s.compression());
        let mut n = 0u64;
        let read = file.for_each_record_parallel(args.threads, |_, _| n += 1);
        count.files.push((file.path().to_path_buf(), n, compression));
        match read {
            Ok(()) => {}
            Err(IndexError::Record(e)) => {
                count.failure = Some(e);
                break;
            }
            Err(_) => return None,
        }
    }
    for path in &files[count.files.len()..] {
        count.files.push((path.clone(), 0, Compression::None));
    }
    Some(count)
}

/// Prints [`count_indexed`]'s result as the sequential count prints its own.
fn report_indexed(args: &Args, count: IndexedCount) -> Result<ExitCode, CliError> {
    let total: u64 = count.files.iter().map(|f| f.1).sum();
    let mut out = report_stdout();
    if args.json {
        let files: Vec<_> = count
            .files
            .iter()
            .map(|(path, n, c)| json!({"path": path.display().to_string(), "records": n, "compression": c.to_string()}))
            .collect();
        let report = json!({
            "ok": count.failure.is_none(),
            "files": files,
            "total": total,
            "data_crcs_checked": true,
            "skipped": {"regions": 0, "bytes": 0, "files": 0, "torn_tail_bytes": 0, "problems": [], "problem_count": 0},
            "problems": count.failure.iter().map(problem_json).collect::<Vec<_>>(),
        });
        writeln!(out, "{report}")?;
    } else {
        for (path, n, _) in &count.files {
            writeln!(out, "{n:>12}  {}", path.display())?;
        }
        writeln!(out, "{total:>12}  total (CRCs checked: all)")?;
    }
    out.flush()?;
    match count.failure {
        Some(error) => Ok(crate::error::report_record_failure(error)),
        None => Ok(ExitCode::SUCCESS),
    }
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    if let Some(counted) = count_indexed(&args, &args.input.files()?) {
        return report_indexed(&args, counted);
    }
    let options = args.input.reader_options(args.skip).verify_data_crc(!args.lengths_only);
    let mut reader = tfrec::record::MultiFileReader::new(args.input.files()?, options);
    let mut counts = vec![0u64; reader.files().len()];
    let progress = Progress::for_reader(&reader);
    let failure = reader
        .for_each_record(|_, file| {
            if let Some(n) = counts.get_mut(file) {
                *n += 1;
            }
        })
        .err();
    progress.finish();
    let total: u64 = counts.iter().sum();
    let checked = if args.lengths_only { "lengths only" } else { "all" };
    let mut out = report_stdout();
    if args.json {
        let files: Vec<_> = reader
            .files()
            .iter()
            .zip(&counts)
            .enumerate()
            .map(|(i, (path, n))| {
                // As read: a compressed file under a plain name is detected from its content.
                let compression = reader.compression_of(i).map(|c| c.to_string());
                json!({"path": path.display().to_string(), "records": n, "compression": compression})
            })
            .collect();
        let report = json!({
            "ok": failure.is_none(),
            "files": files,
            "total": total,
            "data_crcs_checked": !args.lengths_only,
            "skipped": skipped_json(&reader),
            "problems": failure.iter().map(problem_json).collect::<Vec<_>>(),
        });
        writeln!(out, "{report}")?;
    } else {
        for (path, n) in reader.files().iter().zip(&counts) {
            writeln!(out, "{n:>12}  {}", path.display())?;
        }
        writeln!(out, "{total:>12}  total (CRCs checked: {checked})")?;
    }
    out.flush()?;
    print_skipped(&reader);
    match failure {
        Some(error) => Ok(crate::error::report_record_failure(error)),
        None => Ok(ExitCode::SUCCESS),
    }
}

//! `tfrec index`: writes FILE.idx (`offset length` per record) for random access, for each
//! plain file the inputs name, and FILE.zidx (the seek index, checkpoints to inflate from) for
//! each GZIP or ZLIB file.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::Args as ClapArgs;
use tfrec::record::{Compression, ReaderOptions, RecordIndex, RecordReader, SeekIndex, DEFAULT_SPACING};

use crate::error::{CliError, ExitCode};
use crate::output::{pending_file, refuse_same_file};
use crate::report::report_stdout;

#[derive(ClapArgs)]
pub struct Args {
    /// TFRecord files, directories or glob patterns to index: plain files get FILE.idx, GZIP
    /// and ZLIB files a seek index, FILE.zidx.
    #[arg(required = true, value_name = "FILES")]
    inputs: Vec<String>,
    /// Where to write the index, for a single input file. Default: FILE.idx (FILE.zidx for a
    /// compressed file) beside each file.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// For compressed files: inflated bytes between checkpoints. Smaller makes a read of one
    /// record faster and the index larger (a checkpoint keeps a 32 KiB window, deflated).
    #[arg(long, default_value_t = DEFAULT_SPACING, value_name = "BYTES")]
    spacing: u64,
    /// Print one JSON document instead of a line per file.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let files = tfrec::record::expand_inputs(&args.inputs)?;
    if args.output.is_some() && files.len() != 1 {
        return Err(format!("-o names one index, but the inputs are {} files", files.len()).into());
    }
    let targets = files
        .iter()
        .map(|f| {
            let compression = RecordReader::open(f, ReaderOptions::default())?.compression();
            let default = match compression {
                Compression::None => RecordIndex::default_path(f),
                _ => SeekIndex::default_path(f),
            };
            let out = args.output.clone().unwrap_or(default);
            Ok((f.clone(), out, compression))
        })
        .collect::<Result<Vec<_>, tfrec::record::RecordError>>()?;
    for (_, out, _) in &targets {
        refuse_same_file(out, &files)?;
    }
    let mut stdout = report_stdout();
    let mut reports = Vec::new();
    let (progress, done) = crate::progress::Progress::for_files(&files);
    for (file, output, compression) in &targets {
        let (bytes, records, checkpoints) = if *compression == Compression::None {
            let index = RecordIndex::build(file)?;
            let mut bytes = Vec::new();
            index.write_to(&mut bytes)?;
            (bytes, index.len() as u64, None)
        } else {
            let seek = SeekIndex::build(file, *compression, args.spacing)?;
            (seek.to_bytes(), seek.len(), Some(seek.checkpoints().len()))
        };
        let pending = pending_file(output)?;
        let write = || -> std::io::Result<()> {
            let mut w = BufWriter::new(pending.file()?);
            w.write_all(&bytes)?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        write().map_err(|e| CliError::from(e).writing(output))?;
        pending.commit()?;
        done.fetch_add(
            std::fs::metadata(file).map_or(0, |m| m.len()),
            std::sync::atomic::Ordering::Relaxed,
        );
        if args.json {
            let mut report = serde_json::json!({
                "path": file.display().to_string(),
                "index": output.display().to_string(),
                "records": records,
                "index_bytes": bytes.len(),
            });
            if let Some(n) = checkpoints {
                report["checkpoints"] = n.into();
            }
            reports.push(report);
        } else if let Some(n) = checkpoints {
            writeln!(
                stdout,
                "{records} records indexed in {} ({n} checkpoints, {} bytes)",
                output.display(),
                bytes.len()
            )?;
        } else {
            writeln!(stdout, "{records} records indexed in {}", output.display())?;
        }
    }
    progress.finish();
    if args.json {
        writeln!(stdout, "{}", serde_json::json!({"ok": true, "files": reports}))?;
    }
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

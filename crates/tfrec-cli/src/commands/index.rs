//! `tfrec index`: writes FILE.idx (`offset length` per record) for random access, for each
//! plain file the inputs name.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::Args as ClapArgs;
use tfrec::record::{IndexError, RecordIndex};

use crate::error::{CliError, ExitCode};
use crate::output::{pending_file, refuse_same_file};
use crate::report::report_stdout;

#[derive(ClapArgs)]
pub struct Args {
    /// Plain (uncompressed) TFRecord files, directories or glob patterns to index.
    #[arg(required = true, value_name = "FILES")]
    inputs: Vec<String>,
    /// Where to write the index, for a single input file. Default: FILE.idx beside each file.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Print one JSON document instead of a line per file.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let files = tfrec::record::expand_inputs(&args.inputs)?;
    if args.output.is_some() && files.len() != 1 {
        return Err(format!("-o names one index, but the inputs are {} files", files.len()).into());
    }
    let targets: Vec<(PathBuf, PathBuf)> = files
        .iter()
        .map(|f| {
            let out = args.output.clone().unwrap_or_else(|| RecordIndex::default_path(f));
            (f.clone(), out)
        })
        .collect();
    for (_, out) in &targets {
        refuse_same_file(out, &files)?;
    }
    let mut stdout = report_stdout();
    let mut reports = Vec::new();
    let (progress, done) = crate::progress::Progress::for_files(&files);
    for (file, output) in &targets {
        let index = RecordIndex::build(file).map_err(|e| match e {
            IndexError::Compressed { path, compression } => format!(
                "{}: cannot index a {compression}-compressed file (offsets into it cannot be sought \
                 to); write a plain copy first, e.g. `tfrec shard {} -o DIR --output-compression none`",
                path.display(),
                path.display()
            )
            .into(),
            // Damage is data, a failed read or write I/O (the library's categories).
            other => CliError::from(other),
        })?;
        let pending = pending_file(output)?;
        let write = || -> std::io::Result<()> {
            let mut w = BufWriter::new(pending.file()?);
            index.write_to(&mut w)?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        write().map_err(|e| CliError::from(e).writing(output))?;
        pending.commit()?;
        done.fetch_add(
            std::fs::metadata(file).map_or(0, |m| m.len()),
            std::sync::atomic::Ordering::Relaxed,
        );
        if args.json {
            reports.push(serde_json::json!({
                "path": file.display().to_string(),
                "index": output.display().to_string(),
                "records": index.len(),
            }));
        } else {
            writeln!(stdout, "{} records indexed in {}", index.len(), output.display())?;
        }
    }
    progress.finish();
    if args.json {
        writeln!(stdout, "{}", serde_json::json!({"ok": true, "files": reports}))?;
    }
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

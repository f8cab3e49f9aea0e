//! `tfrec index`: writes FILE.idx (`offset length` per record) for random access, for each
//! plain file the inputs name.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use tfrec::record::{IndexError, RecordIndex};

use crate::output::{refuse_same_file, PendingFile};
use crate::report::stdout;

#[derive(ClapArgs)]
pub struct Args {
    /// Plain (uncompressed) TFRecord files, directories or glob patterns to index.
    #[arg(required = true, value_name = "FILES")]
    inputs: Vec<String>,
    /// Where to write the index, for a single input file. Default: FILE.idx beside each file.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
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
    let mut stdout = stdout();
    for (file, output) in &targets {
        let index = RecordIndex::build(file).map_err(|e| match e {
            IndexError::Compressed { path, compression } => format!(
                "{}: cannot index a {compression}-compressed file (offsets into it cannot be sought \
                 to); write a plain copy first, e.g. `tfrec shard {} -o DIR --output-compression none`",
                path.display(),
                path.display()
            )
            .into(),
            IndexError::Record(e) => Box::new(e) as Box<dyn std::error::Error>,
            other => crate::error::data(other.to_string()),
        })?;
        let pending = PendingFile::create(output)?;
        let mut w = BufWriter::new(pending.file()?);
        index.write_to(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        pending.commit()?;
        writeln!(stdout, "{} records indexed in {}", index.len(), output.display())?;
    }
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

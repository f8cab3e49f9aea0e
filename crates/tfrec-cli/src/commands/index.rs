//! `tfrec index`: writes FILE.idx (`offset length` per record) for random access.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use tfrec::record::RecordIndex;

#[derive(ClapArgs)]
pub struct Args {
    /// The plain (uncompressed) TFRecord file to index.
    file: PathBuf,
    /// Where to write the index. Default: FILE.idx.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let index = RecordIndex::build(&args.file)?;
    let output = args.output.unwrap_or_else(|| RecordIndex::default_path(&args.file));
    index.save(&output)?;
    println!("{} records indexed in {}", index.len(), output.display());
    Ok(ExitCode::SUCCESS)
}

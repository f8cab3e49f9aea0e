//! The `tfrec` command: thin glue between the command line and the `tfrec` library.

mod commands;
mod input;
mod progress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Read, check and convert TFRecord files without TensorFlow.
#[derive(Parser)]
#[command(name = "tfrec", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count the records of each file and in total.
    Count(commands::count::Args),
    /// Check every record's framing and CRCs; report every problem with file and offset.
    Verify(commands::verify::Args),
    /// Write FILE.idx, the `offset length` index other TFRecord tools read.
    Index(commands::index::Args),
    /// Print records.
    Cat(commands::cat::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Count(args) => commands::count::run(args),
        Command::Verify(args) => commands::verify::run(args),
        Command::Index(args) => commands::index::run(args),
        Command::Cat(args) => commands::cat::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("tfrec: {error}");
            ExitCode::from(2)
        }
    }
}

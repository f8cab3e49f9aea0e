//! The `tfrec` command as a library: [`run`] parses a command line and runs it, so the binary
//! (`main.rs`) and the Python package's `tfrec` command (through the extension) are one CLI.
//! The commands are thin glue between the command line and the `tfrec` library.

/// Writes a line to standard error, ignoring failure. Messages on stderr are a courtesy: a
/// closed or full stderr must not panic (as `eprintln!` does) or change the exit status, which
/// the data decides. `eprintln!` is refused by clippy in this crate (see clippy.toml).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod commands;
mod error;
mod input;
mod memory;
mod messages;
mod output;
mod progress;
mod report;

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Read, check and convert TFRecord files without TensorFlow.
#[derive(Parser)]
#[command(name = "tfrec", version, about, long_about = None, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXIT_CODES: &str = "Exit status, the same for every command: 0 success; 1 the data has problems \
(damage found, a record that does not parse or convert); 2 a usage or I/O error. \
A closed standard output (`| head`) never hides damage: a command that checks or writes files \
finishes and exits with the data's status; `cat` and `parse` stop quietly with 141 \
(as SIGPIPE would) unless they had already read all they were asked to.";

// `defer`: each command's options are built only when that command runs (or its help is
// asked for); the names and summaries above are built at once for the top-level help. Building
// every command's options on every run had become a noticeable share of a short command's work
// (`tfrec count` of a small file) as commands were added. A deferred command's options are
// added after its summary, so a doc comment on an options struct would replace the summary in
// that command's own help: the options structs carry plain comments (tests/conventions.rs checks
// every command's help against the top-level list).
#[derive(Subcommand)]
#[command(defer = true)]
enum Command {
    /// Count the records of each file and in total.
    Count(commands::count::Args),
    /// Check every record's framing and CRCs; report every problem with file and offset.
    Verify(commands::verify::Args),
    /// Write FILE.idx for each plain file, the `offset length` index other TFRecord tools read.
    Index(commands::index::Args),
    /// Print records as protobuf text format, protobuf JSON, friendly JSON lines, or raw.
    Cat(commands::cat::Args),
    /// Statistics of Examples as TFDV computes them (a DatasetFeatureStatisticsList).
    Stats(commands::stats::Args),
    /// Infer the features the records hold (kind, values per record, presence) and their spec.
    Schema(commands::schema::Args),
    /// Infer a TFDV schema (tensorflow_metadata Schema, protobuf text) from statistics.
    InferSchema(commands::infer_schema::Args),
    /// Check statistics against a TFDV schema (and for drift and skew); exit 1 on anomalies.
    Validate(commands::validate::Args),
    /// Parse records with a feature spec into tensors (JSON, .npz, or timed and discarded).
    Parse(commands::parse::Args),
    /// Rewrite a data set into N shards (round robin or by a feature's hash), verified.
    Shard(commands::shard::ShardArgs),
    /// Rewrite a data set shuffled (through a buffer, seeded) into shards, verified.
    Shuffle(commands::shard::ShuffleArgs),
    /// Convert TFRecord files to and from Parquet and Arrow IPC, or to JSON lines and CSV.
    Convert(commands::convert::Args),
    /// Write records from protobuf text format.
    FromText(commands::from_text::Args),
    /// Write records from friendly JSON lines.
    FromJsonl(commands::from_jsonl::Args),
    /// Write one Example per image (height, width, depth, label, image_raw).
    FromImages(commands::from_images::Args),
}

/// Runs the command line `args` (the program's name first) and gives the exit status: 0
/// success, 1 the data has problems, 2 a usage or I/O error (clap's own codes for `--help`,
/// `--version` and bad arguments). Never exits the process itself, so the Python package can
/// call it.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let parsed = Cli::command()
        .mut_subcommands(|c| c.after_help(EXIT_CODES))
        .try_get_matches_from(args)
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout and succeed; a usage error prints to stderr.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let result = match cli.command {
        Command::Count(args) => commands::count::run(args),
        Command::Verify(args) => commands::verify::run(args),
        Command::Index(args) => commands::index::run(args),
        Command::Cat(args) => commands::cat::run(args),
        Command::Schema(args) => commands::schema::run(args),
        Command::Stats(args) => commands::stats::run(args),
        Command::InferSchema(args) => commands::infer_schema::run(args),
        Command::Validate(args) => commands::validate::run(args),
        Command::Parse(args) => commands::parse::run(args),
        Command::Shard(args) => commands::shard::run(args),
        Command::Shuffle(args) => commands::shard::run_shuffle(args),
        Command::Convert(args) => commands::convert::run(args),
        Command::FromText(args) => commands::from_text::run(args),
        Command::FromJsonl(args) => commands::from_jsonl::run(args),
        Command::FromImages(args) => commands::from_images::run(args),
    };
    match result {
        Ok(code) => code.0,
        // A closed standard output is a normal way for a reader to stop: no message.
        Err(error) if error.is_closed_pipe() => error.exit_code(),
        Err(error) => {
            say!("tfrec: {error}");
            error.exit_code()
        }
    }
}

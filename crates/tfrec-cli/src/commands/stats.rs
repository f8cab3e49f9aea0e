//! `tfrec stats`: statistics of Examples as TFDV computes them, written as a binary
//! `DatasetFeatureStatisticsList` (what `tfdv.load_statistics` reads) or as protobuf text.

use std::io::Write;
use std::path::PathBuf;

use clap::Args as ClapArgs;
use tfrec::stats::RecordMessage;

use crate::error::{CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::messages::{KindChoice, MessageArgs};
use crate::output::{pending_file, refuse_same_file};
use crate::report::{print_skipped_stats, report_stdout};

use super::stats_report::{ReportArgs, StatsRun};

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    skip: SkipArgs,
    /// `example` reads every record as an Example, as TFDV's generate_statistics_from_tfrecord
    /// does (a SequenceExample's context only); `sequence` as a SequenceExample (context
    /// features, then the feature lists under `##SEQUENCE##`, as TFDV computes them from
    /// tfx_bsl's SequenceExample decoder); `auto` each record by whether it has feature lists.
    #[command(flatten)]
    message: MessageArgs,
    /// Write the statistics to this file instead of standard output (under a temporary name,
    /// renamed when complete; never over an input).
    #[arg(short = 'o', long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Protobuf text format instead of binary (the default on a terminal).
    #[arg(long)]
    text: bool,
    /// Threads, 1 to 256 (default: one per core); the records, of one file or many, are
    /// counted in chunks of about a MiB shared out among them, and the statistics are the same
    /// bytes whatever the number.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: Option<u64>,
    /// Most frequent values kept per string feature.
    #[arg(long, default_value_t = 20, value_name = "N")]
    num_top_values: usize,
    /// Buckets of the numeric features' standard histograms.
    #[arg(long, default_value_t = 10, value_name = "N")]
    num_histogram_buckets: usize,
    /// Rank error of the quantiles (TFDV's epsilon).
    #[arg(long, default_value_t = 0.01, value_name = "EPS")]
    epsilon: f64,
    #[command(flatten)]
    report: ReportArgs,
    /// Count a share of the records, in (0, 1]: each kept by a hash of its file and offset
    /// (the same sample every run; TFDV's sample_rate keeps random batches instead).
    #[arg(long, value_name = "RATE")]
    sample_rate: Option<f64>,
    /// Statistics of these top-level features only (TFDV's feature_allowlist; repeat or
    /// separate by commas; `##SEQUENCE##` keeps the feature lists).
    #[arg(long = "feature", value_name = "NAME", value_delimiter = ',')]
    feature_allowlist: Vec<String>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let reader = args.input.reader_options(args.skip);
    let files = args.input.files()?;
    if let Some(path) = &args.output {
        refuse_same_file(path, &files)?;
    }
    args.report.check_paths(&files)?;
    let options = tfrec::stats::StatsOptions::default()
        .num_top_values(args.num_top_values)
        .num_histogram_buckets(args.num_histogram_buckets)
        .epsilon(args.epsilon)
        .sample_rate(args.sample_rate)
        .feature_allowlist((!args.feature_allowlist.is_empty()).then_some(args.feature_allowlist))
        .message(match args.message.kind {
            KindChoice::Auto => RecordMessage::Detect,
            KindChoice::Example => RecordMessage::Example,
            KindChoice::Sequence => RecordMessage::SequenceExample,
        });
    let threads = match args.threads {
        Some(n) => n as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let run = StatsRun {
        files: &files,
        reader: &reader,
        options: &options,
        threads,
    };
    let out = run.statistics_of(&files)?;
    let compared = args.report.compared(&run)?;
    let statistics = args.report.to_write(&out, compared.as_ref().map(|(_, c)| c));
    let bytes = if args.text || (args.output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout())) {
        tfrec::stats::statistics_to_text(&statistics)?.into_bytes()
    } else {
        tfrec::stats::encode_statistics(&statistics)
    };
    args.report
        .write_html(&run, &statistics, compared.as_ref().map(|(files, _)| files.as_slice()))?;
    match &args.output {
        Some(path) => {
            let pending = pending_file(path)?;
            let mut file = pending.file()?;
            file.write_all(&bytes).map_err(|e| CliError::from(e).writing(path))?;
            file.sync_all().map_err(|e| CliError::from(e).writing(path))?;
            pending.commit()?;
        }
        None => {
            let mut stdout = report_stdout();
            stdout.write_all(&bytes)?;
            stdout.flush()?;
        }
    }
    print_skipped_stats(&out.read_stats, &[]);
    Ok(ExitCode::SUCCESS)
}

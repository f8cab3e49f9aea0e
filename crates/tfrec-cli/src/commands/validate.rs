//! `tfrec validate`: statistics checked against a schema as `tfdv.validate_statistics` checks
//! them, with drift against `--previous` and skew against `--serving` statistics where the
//! schema's comparators set thresholds. Writes TFDV's `Anomalies` in the protobuf text format;
//! exits 1 when there is an anomaly (so a pipeline stops on bad data), 0 when none, 2 when a
//! file cannot be read or does not parse.

use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use tfrec::stats::proto::DatasetFeatureStatisticsList;

use crate::error::{CliError, ExitCode, EXIT_DATA};
use crate::output::write_whole_output;

#[derive(ClapArgs)]
pub struct Args {
    /// Statistics to check (binary or text `DatasetFeatureStatisticsList`).
    #[arg(value_name = "STATS")]
    stats: PathBuf,
    /// The schema (protobuf text, as `tfrec infer-schema` or TFDV's `write_schema_text` writes it).
    #[arg(long, value_name = "SCHEMA")]
    schema: PathBuf,
    /// Statistics of the previous span, for the schema's `drift_comparator`s.
    #[arg(long, value_name = "STATS")]
    previous: Option<PathBuf>,
    /// Statistics of the serving data, for the schema's `skew_comparator`s.
    #[arg(long, value_name = "STATS")]
    serving: Option<PathBuf>,
    /// Write the anomalies (protobuf text) to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "PATH")]
    output: Option<PathBuf>,
}

fn statistics(path: &Path) -> Result<DatasetFeatureStatisticsList, CliError> {
    tfrec::stats::read_statistics_file(path).map_err(|e| CliError::Usage(e.to_string()))
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let stats = statistics(&args.stats)?;
    let schema = tfrec::stats::read_schema_file(&args.schema).map_err(|e| CliError::Usage(e.to_string()))?;
    let previous = args.previous.as_deref().map(statistics).transpose()?;
    let serving = args.serving.as_deref().map(statistics).transpose()?;
    let anomalies = tfrec::stats::validate_statistics(&stats, &schema, previous.as_ref(), serving.as_ref())
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let text = tfrec::stats::anomalies_to_text(&anomalies)?;
    write_whole_output(args.output.as_deref(), text.as_bytes())?;
    if tfrec::stats::has_anomalies(&anomalies) {
        let features = anomalies.anomaly_info.len();
        say!("tfrec validate: anomalies in {features} feature(s)");
        return Ok(ExitCode(EXIT_DATA));
    }
    Ok(ExitCode::SUCCESS)
}

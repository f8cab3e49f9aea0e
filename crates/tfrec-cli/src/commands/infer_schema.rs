//! `tfrec infer-schema`: the tensorflow_metadata `Schema` that `tfdv.infer_schema` infers from
//! statistics (`tfrec stats`' or TFDV's), in the protobuf text format TFDV writes. (`tfrec
//! schema` is another question: the feature spec that parses the records.)

use std::path::PathBuf;

use clap::Args as ClapArgs;
use tfrec::stats::InferSchemaOptions;

use crate::error::{CliError, ExitCode};
use crate::output::write_whole_output;

#[derive(ClapArgs)]
pub struct Args {
    /// Statistics file (binary or text `DatasetFeatureStatisticsList`, as `tfrec stats` or TFDV
    /// writes it).
    #[arg(value_name = "STATS")]
    stats: PathBuf,
    /// Write the schema (protobuf text) to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Do not infer fixed shapes (TFDV's `infer_feature_shape=False`): `value_count` only.
    #[arg(long)]
    no_infer_feature_shape: bool,
    /// Most distinct values a string feature may have to get a string domain.
    #[arg(long, default_value_t = 100, value_name = "N")]
    max_string_domain_size: usize,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let stats = tfrec::stats::read_statistics_file(&args.stats).map_err(|e| CliError::Usage(e.to_string()))?;
    let options = InferSchemaOptions {
        infer_feature_shape: !args.no_infer_feature_shape,
        max_string_domain_size: args.max_string_domain_size,
    };
    let schema = tfrec::stats::infer_schema(&stats, options).map_err(|e| CliError::Usage(e.to_string()))?;
    let text = tfrec::stats::schema_to_text(&schema)?;
    write_whole_output(args.output.as_deref(), text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

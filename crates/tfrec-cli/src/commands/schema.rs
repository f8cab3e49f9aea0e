//! `tfrec schema`: which features the records hold, and the spec that parses them (the
//! library's one inference, `tfrec::parse::SpecInferrer`, as `convert` and Python use).

use std::io::Write;

use clap::Args as ClapArgs;
use tfrec::example::FeatureStats;
use tfrec::parse::SpecInferrer;

use crate::error::{CliError, ExitCode};
use crate::input::{InputArgs, SkipArgs};
use crate::messages::{MessageArgs, DETECT_BYTES, DETECT_RECORDS};
use crate::progress::Progress;
use crate::report::{print_skipped, report_stdout};

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    skip: SkipArgs,
    #[command(flatten)]
    message: MessageArgs,
    /// Look at no more than this many records.
    #[arg(long)]
    limit: Option<u64>,
    /// Print the inferred feature spec as one JSON document (the spec format `tfrec parse`
    /// reads).
    #[arg(long)]
    json: bool,
}

fn kinds(stats: &FeatureStats) -> String {
    let names: Vec<&str> = stats.kinds.iter().map(|k| k.word()).collect();
    match names.as_slice() {
        [] => "(no kind)".to_owned(),
        [one] => (*one).to_owned(),
        many => format!("MIXED {}", many.join("+")),
    }
}

fn range(min: usize, max: usize) -> String {
    if min == max {
        min.to_string()
    } else {
        format!("{min}..{max}")
    }
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let mut reader = args.input.open(args.skip)?;
    let progress = Progress::for_reader(&reader);
    let limit = args.limit.unwrap_or(u64::MAX);
    // Records held to decide the message kind (when not forced), with their places.
    let mut first: Vec<(Vec<u8>, String)> = Vec::new();
    let mut held = 0;
    let mut inferrer = args.message.forced().map(SpecInferrer::new);
    let mut seen = 0u64;
    let observe = |record: &[u8], place: &str, inferrer: &mut SpecInferrer| -> Result<(), CliError> {
        let index = inferrer.schema().records;
        inferrer.observe(record).map_err(|e| {
            let kind = if inferrer.is_sequence() {
                "SequenceExample"
            } else {
                "Example"
            };
            crate::error::data(format!(
                "{place}: record {index} is not a valid {kind}: {e} (--kind to choose)"
            ))
        })
    };
    let decide = |first: &mut Vec<(Vec<u8>, String)>| -> Result<SpecInferrer, CliError> {
        let mut inferrer = SpecInferrer::new(args.message.is_sequence(first.iter().map(|(r, _)| r.as_slice())));
        for (r, place) in first.drain(..) {
            observe(&r, &place, &mut inferrer)?;
        }
        Ok(inferrer)
    };
    while seen < limit {
        let Some(record) = reader.next_located()? else { break };
        seen += 1;
        match &mut inferrer {
            Some(inferrer) => observe(record.data, &record.to_string(), inferrer)?,
            None => {
                held += record.data.len();
                first.push((record.data.to_vec(), record.to_string()));
                if first.len() == DETECT_RECORDS || held >= DETECT_BYTES {
                    inferrer = Some(decide(&mut first)?);
                }
            }
        }
    }
    let inferrer = match inferrer {
        Some(inferrer) => inferrer,
        None => decide(&mut first)?,
    };
    progress.finish();
    print_skipped(&reader);
    let mut out = report_stdout();
    if args.json {
        let inferred = inferrer.finish();
        for (name, why) in &inferred.skipped {
            say!("warning: feature '{name}' left out: {why}");
        }
        let spec: serde_json::Value = serde_json::from_str(&inferred.to_json_string())?;
        writeln!(out, "{spec:#}")?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let schema = inferrer.schema();
    let records = schema.records;
    let heading = if schema.feature_lists.is_empty() {
        "feature"
    } else {
        "context feature"
    };
    writeln!(out, "{records} records (every CRC checked)")?;
    writeln!(
        out,
        "{heading:<24} {:<10} {:>14} {:>12}",
        "kind", "values/record", "present"
    )?;
    for (name, s) in &schema.features {
        writeln!(
            out,
            "{name:<24} {:<10} {:>14} {:>12}",
            kinds(s),
            range(s.min_values, s.max_values),
            format!("{}/{records}", s.present)
        )?;
    }
    if !schema.feature_lists.is_empty() {
        writeln!(
            out,
            "\n{:<24} {:<10} {:>14} {:>12} {:>12}",
            "feature list", "kind", "values/step", "steps", "present"
        )?;
        for (name, s) in &schema.feature_lists {
            writeln!(
                out,
                "{name:<24} {:<10} {:>14} {:>12} {:>12}",
                kinds(s),
                range(s.min_values, s.max_values),
                range(s.min_steps, s.max_steps),
                format!("{}/{records}", s.present)
            )?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

//! `tfrec stats`' report options: `--html` (the library's self-contained report page),
//! `--compare` (a second data set, TFDV's rhs, beside the first) and `--anomalies` (features
//! to mark, from `tfdv.validate_statistics`' text output).

use std::io::Write;
use std::path::PathBuf;

use clap::Args as ClapArgs;
use tfrec::record::ReaderOptions;
use tfrec::stats::proto::DatasetFeatureStatisticsList;
use tfrec::stats::report::{comparison, Report, ReportSamples, SampleLimits, LHS_NAME, RHS_NAME};
use tfrec::stats::{GenerateOutput, StatsOptions};

use crate::error::CliError;
use crate::output::{pending_file, refuse_same_file};
use crate::progress::Progress;
use crate::report::print_skipped_stats;

#[derive(ClapArgs)]
pub struct ReportArgs {
    /// Also write a report of the statistics as one self-contained HTML page (no network
    /// request): features sortable and filterable, with histograms, top values, example values
    /// and image thumbnails; drift beside each feature with --compare.
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Statistics of these files too (TFDV's rhs, e.g. the evaluation data), written as the
    /// second data set of the output and shown beside the first in the report. Takes every
    /// following word up to the next option.
    #[arg(long, value_name = "FILES", num_args = 1..)]
    compare: Vec<String>,
    /// Mark the features named in this Anomalies file (protobuf text, as
    /// tfdv.write_anomalies_text writes it) in the report.
    #[arg(long, value_name = "PATH", requires = "html")]
    anomalies: Option<PathBuf>,
    /// Name of the first data set with --compare.
    #[arg(long, value_name = "NAME", default_value = LHS_NAME, requires = "compare")]
    lhs_name: String,
    /// Name of the --compare data set.
    #[arg(long, value_name = "NAME", default_value = RHS_NAME, requires = "compare")]
    rhs_name: String,
}

/// What the report options need from the statistics run.
pub struct StatsRun<'a> {
    pub files: &'a [PathBuf],
    pub reader: &'a ReaderOptions,
    pub options: &'a StatsOptions,
    pub threads: usize,
}

impl StatsRun<'_> {
    /// The statistics of `files` with the run's reader, options and threads, and a progress
    /// bar by on-disk bytes on a terminal (a pass over a large data set takes minutes).
    pub fn statistics_of(&self, files: &[PathBuf]) -> Result<GenerateOutput, CliError> {
        let (progress, done) = Progress::for_files(files);
        let out = tfrec::stats::statistics_of_files_counting(
            files.to_vec(),
            self.reader.clone(),
            self.options,
            self.threads,
            &done,
        )?;
        progress.finish();
        Ok(out)
    }
}

impl ReportArgs {
    /// Refuses a report path or a compared file that would overwrite an input.
    pub fn check_paths(&self, inputs: &[PathBuf]) -> Result<(), CliError> {
        if let Some(path) = &self.html {
            refuse_same_file(path, inputs)?;
        }
        Ok(())
    }

    /// Statistics of the `--compare` files, when given.
    pub fn compared(&self, run: &StatsRun<'_>) -> Result<Option<(Vec<PathBuf>, GenerateOutput)>, CliError> {
        if self.compare.is_empty() {
            return Ok(None);
        }
        let files = tfrec::record::expand_inputs(&self.compare)?;
        if let Some(path) = &self.html {
            refuse_same_file(path, &files)?;
        }
        let out = run.statistics_of(&files)?;
        print_skipped_stats(&out.read_stats, &[]);
        Ok(Some((files, out)))
    }

    /// The list to write: the statistics alone, or both data sets named as TFDV names lhs and rhs.
    pub fn to_write(&self, lhs: &GenerateOutput, rhs: Option<&GenerateOutput>) -> DatasetFeatureStatisticsList {
        match (
            lhs.statistics.datasets.first(),
            rhs.and_then(|r| r.statistics.datasets.first()),
        ) {
            (Some(a), Some(b)) => comparison(a, b, &self.lhs_name, &self.rhs_name),
            _ => lhs.statistics.clone(),
        }
    }

    /// Writes the `--html` report of `written` (under a temporary name, renamed when complete).
    pub fn write_html(
        &self,
        run: &StatsRun<'_>,
        written: &DatasetFeatureStatisticsList,
        compared: Option<&[PathBuf]>,
    ) -> Result<(), CliError> {
        let Some(path) = &self.html else {
            return Ok(());
        };
        let anomalies = match &self.anomalies {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| CliError::Usage(format!("cannot read the anomalies {}: {e}", p.display())))?;
                Some(
                    tfrec::stats::report::anomalies_from_text(&text)
                        .map_err(|e| CliError::Usage(format!("the anomalies {} do not parse: {e}", p.display())))?,
                )
            }
            None => None,
        };
        let limits = SampleLimits::default();
        let lhs_samples = ReportSamples::collect(run.files.to_vec(), run.reader.clone(), &limits)?;
        let rhs_samples = match compared {
            Some(files) => Some(ReportSamples::collect(files.to_vec(), run.reader.clone(), &limits)?),
            None => None,
        };
        let mut report = Report::of_list(written)?.samples(&lhs_samples);
        if let Some(samples) = &rhs_samples {
            report = report.rhs_samples(samples);
        }
        if let Some(anomalies) = &anomalies {
            report = report.anomalies(anomalies);
        }
        let html = report.to_html();
        let pending = pending_file(path)?;
        let mut file = pending.file()?;
        file.write_all(html.as_bytes())
            .map_err(|e| CliError::from(e).writing(path))?;
        file.sync_all().map_err(|e| CliError::from(e).writing(path))?;
        pending.commit()?;
        Ok(())
    }
}

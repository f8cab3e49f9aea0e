//! `tfrec.stats.visualize_statistics`' call into the library: the statistics report page
//! (`tfrec::stats::report`), of one data set or two side by side.

use pyo3::prelude::*;
use tfrec::stats::report::{Report, ReportSamples, SampleLimits};
use tfrec::stats::{decode_statistics, StatsError};

use crate::errors::PyTfrecError;
use crate::records::reader_options;

/// The report page of binary statistics ``lhs`` (its first data set, and its second when it
/// has two) beside ``rhs``'s first; example values and thumbnails from the first records of
/// ``lhs_inputs`` / ``rhs_inputs`` when given; features marked from binary or text
/// ``Anomalies``.
#[pyfunction]
#[pyo3(signature = (lhs, rhs=None, *, lhs_name=None, rhs_name=None, anomalies=None, anomalies_text=None,
    lhs_inputs=None, rhs_inputs=None, title=None, compression_type=None, on_corruption="raise"))]
#[allow(clippy::too_many_arguments)]
pub fn stats_report_html(
    py: Python<'_>,
    lhs: &[u8],
    rhs: Option<&[u8]>,
    lhs_name: Option<&str>,
    rhs_name: Option<&str>,
    anomalies: Option<&[u8]>,
    anomalies_text: Option<&str>,
    lhs_inputs: Option<Vec<String>>,
    rhs_inputs: Option<Vec<String>>,
    title: Option<&str>,
    compression_type: Option<&str>,
    on_corruption: &str,
) -> PyResult<String> {
    let reader = reader_options(compression_type, on_corruption, "raise", true, None)?;
    let html = py.detach(|| -> Result<String, StatsError> {
        let lhs = decode_statistics(lhs)?;
        let rhs = rhs.map(decode_statistics).transpose()?;
        let anomalies = match (anomalies, anomalies_text) {
            (Some(bytes), _) => Some(tfrec::stats::report::decode_anomalies(bytes)?),
            (None, Some(text)) => Some(tfrec::stats::report::anomalies_from_text(text)?),
            (None, None) => None,
        };
        let sample = |inputs: &Option<Vec<String>>| -> Result<Option<ReportSamples>, StatsError> {
            match inputs {
                Some(inputs) => {
                    let files = tfrec::record::expand_inputs(inputs)?;
                    Ok(Some(ReportSamples::collect(
                        files,
                        reader.clone(),
                        &SampleLimits::default(),
                    )?))
                }
                None => Ok(None),
            }
        };
        let (lhs_samples, rhs_samples) = (sample(&lhs_inputs)?, sample(&rhs_inputs)?);
        let mut report = Report::of_list(&lhs)?;
        if let Some(rhs) = &rhs {
            let first = rhs
                .datasets
                .first()
                .ok_or_else(|| StatsError::InvalidOption("the rhs statistics hold no data set".to_owned()))?;
            report = report.compare(first);
        }
        if let Some(name) = lhs_name {
            report = report.name(name);
        }
        if let Some(name) = rhs_name {
            report = report.rhs_name(name);
        }
        if let Some(title) = title {
            report = report.title(title);
        }
        if let Some(samples) = &lhs_samples {
            report = report.samples(samples);
        }
        if let Some(samples) = &rhs_samples {
            report = report.rhs_samples(samples);
        }
        if let Some(anomalies) = &anomalies {
            report = report.anomalies(anomalies);
        }
        Ok(report.to_html())
    });
    html.map_err(|e| PyTfrecError::from(tfrec::Error::from(e)).into())
}

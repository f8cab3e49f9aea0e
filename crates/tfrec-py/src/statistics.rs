//! `tfrec.stats`' calls into the library: statistics of TFRecord files as TFDV computes them,
//! and their bytes to and from the protobuf text format.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tfrec::stats::{RecordMessage, StatsError, StatsOptions};

use crate::errors::PyTfrecError;
use crate::records::reader_options;

/// The binary ``DatasetFeatureStatisticsList`` of the Examples in ``inputs``.
#[pyfunction]
#[pyo3(signature = (inputs, *, num_top_values, num_rank_histogram_buckets, num_values_histogram_buckets,
    num_histogram_buckets, num_quantiles_histogram_buckets, epsilon, threads, compression_type=None,
    on_corruption="raise", kind="auto", sample_rate=None, feature_allowlist=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_generate<'py>(
    py: Python<'py>,
    inputs: Vec<String>,
    num_top_values: usize,
    num_rank_histogram_buckets: usize,
    num_values_histogram_buckets: usize,
    num_histogram_buckets: usize,
    num_quantiles_histogram_buckets: usize,
    epsilon: f64,
    threads: usize,
    compression_type: Option<&str>,
    on_corruption: &str,
    kind: &str,
    sample_rate: Option<f64>,
    feature_allowlist: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let reader = reader_options(compression_type, on_corruption, "raise", true, None)?;
    let message = match kind {
        "auto" => RecordMessage::Detect,
        "example" => RecordMessage::Example,
        "sequence" => RecordMessage::SequenceExample,
        other => {
            return Err(PyValueError::new_err(format!(
                "kind must be 'auto', 'example' or 'sequence', not {other:?}"
            )))
        }
    };
    let options = StatsOptions {
        num_top_values,
        num_rank_histogram_buckets,
        num_values_histogram_buckets,
        num_histogram_buckets,
        num_quantiles_histogram_buckets,
        epsilon,
        message,
        sample_rate,
        feature_allowlist,
    };
    let bytes = py.detach(|| -> Result<Vec<u8>, StatsError> {
        let out = tfrec::stats::generate_statistics(&inputs, reader, &options, threads)?;
        Ok(tfrec::stats::encode_statistics(&out.statistics))
    });
    let bytes = bytes.map_err(|e| PyTfrecError::from(tfrec::Error::from(e)))?;
    Ok(PyBytes::new(py, &bytes))
}

/// Binary statistics as protobuf text.
#[pyfunction]
pub fn stats_to_text(data: &[u8]) -> PyResult<String> {
    let run =
        || -> Result<String, StatsError> { tfrec::stats::statistics_to_text(&tfrec::stats::decode_statistics(data)?) };
    run().map_err(|e| PyTfrecError::from(tfrec::Error::from(e)).into())
}

/// Protobuf text statistics as binary.
#[pyfunction]
pub fn stats_from_text<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyBytes>> {
    let stats = tfrec::stats::statistics_from_text(text).map_err(|e| PyTfrecError::from(tfrec::Error::from(e)))?;
    Ok(PyBytes::new(py, &tfrec::stats::encode_statistics(&stats)))
}

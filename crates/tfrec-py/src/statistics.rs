//! `tfrec.stats`' calls into the library: statistics of TFRecord files as TFDV computes them,
//! and their bytes to and from the protobuf text format.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tfrec::record::ReadStats;
use tfrec::stats::{RecordMessage, StatsAccumulator, StatsError, StatsOptions};

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;

use crate::arrow::stream_reader;
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
    let options = stats_options(
        [
            num_top_values,
            num_rank_histogram_buckets,
            num_values_histogram_buckets,
            num_histogram_buckets,
            num_quantiles_histogram_buckets,
        ],
        epsilon,
        kind,
        sample_rate,
        feature_allowlist,
    )?;
    let bytes = py.detach(|| -> Result<Vec<u8>, StatsError> {
        let out = tfrec::stats::generate_statistics(&inputs, reader, &options, threads)?;
        Ok(tfrec::stats::encode_statistics(&out.statistics))
    });
    let bytes = bytes.map_err(|e| PyTfrecError::from(tfrec::Error::from(e)))?;
    Ok(PyBytes::new(py, &bytes))
}

/// `StatsOptions` of the binding's arguments (the five bucket and value counts in their order).
fn stats_options(
    sizes: [usize; 5],
    epsilon: f64,
    kind: &str,
    sample_rate: Option<f64>,
    feature_allowlist: Option<Vec<String>>,
) -> PyResult<StatsOptions> {
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
    let [num_top_values, num_rank_histogram_buckets, num_values_histogram_buckets, num_histogram_buckets, num_quantiles_histogram_buckets] =
        sizes;
    Ok(StatsOptions {
        num_top_values,
        num_rank_histogram_buckets,
        num_values_histogram_buckets,
        num_histogram_buckets,
        num_quantiles_histogram_buckets,
        epsilon,
        message,
        sample_rate,
        feature_allowlist,
    })
}

/// What reading a file found, as the tuple `tfrec.ray` carries between processes.
type ReadCounts = (u64, u64, u64, u64, u64, u64);

fn read_counts(s: &ReadStats) -> ReadCounts {
    (
        s.records,
        s.data_bytes,
        s.skipped_regions,
        s.skipped_bytes,
        s.skipped_files,
        s.torn_tail_bytes,
    )
}

fn read_stats(counts: ReadCounts) -> ReadStats {
    let mut stats = ReadStats::default();
    (
        stats.records,
        stats.data_bytes,
        stats.skipped_regions,
        stats.skipped_bytes,
        stats.skipped_files,
        stats.torn_tail_bytes,
    ) = counts;
    stats
}

/// The partial statistics of one file (`StatsAccumulator::to_partial_bytes`) and what reading
/// it found, for `tfrec.ray`'s workers.
#[pyfunction]
#[pyo3(signature = (path, *, num_top_values, num_rank_histogram_buckets, num_values_histogram_buckets,
    num_histogram_buckets, num_quantiles_histogram_buckets, epsilon, compression_type=None,
    on_corruption="raise", kind="auto", sample_rate=None, feature_allowlist=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_partial_of_file<'py>(
    py: Python<'py>,
    path: String,
    num_top_values: usize,
    num_rank_histogram_buckets: usize,
    num_values_histogram_buckets: usize,
    num_histogram_buckets: usize,
    num_quantiles_histogram_buckets: usize,
    epsilon: f64,
    compression_type: Option<&str>,
    on_corruption: &str,
    kind: &str,
    sample_rate: Option<f64>,
    feature_allowlist: Option<Vec<String>>,
) -> PyResult<(Bound<'py, PyBytes>, ReadCounts)> {
    let reader = reader_options(compression_type, on_corruption, "raise", true, None)?;
    let options = stats_options(
        [
            num_top_values,
            num_rank_histogram_buckets,
            num_values_histogram_buckets,
            num_histogram_buckets,
            num_quantiles_histogram_buckets,
        ],
        epsilon,
        kind,
        sample_rate,
        feature_allowlist,
    )?;
    let out = py.detach(|| -> Result<(Vec<u8>, ReadCounts), StatsError> {
        options.validate()?;
        let (acc, read) = tfrec::stats::statistics_of_file(std::path::Path::new(&path), reader, &options)?;
        Ok((acc.to_partial_bytes(), read_counts(&read)))
    });
    let (bytes, counts) = out.map_err(|e| PyTfrecError::from(tfrec::Error::from(e)))?;
    Ok((PyBytes::new(py, &bytes), counts))
}

/// The partial statistics of the serialized records in the one binary column of an Arrow
/// stream (a capsule from `__arrow_c_stream__`: one Ray block's records, in row order) and
/// what reading them found, for `tfrec.ray`'s workers. A null row, or a column that is not
/// binary, is a `ValueError`.
#[pyfunction]
#[pyo3(signature = (stream, *, num_top_values, num_rank_histogram_buckets, num_values_histogram_buckets,
    num_histogram_buckets, num_quantiles_histogram_buckets, epsilon, kind="auto", feature_allowlist=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_partial_of_arrow<'py>(
    py: Python<'py>,
    stream: &Bound<'py, PyAny>,
    num_top_values: usize,
    num_rank_histogram_buckets: usize,
    num_values_histogram_buckets: usize,
    num_histogram_buckets: usize,
    num_quantiles_histogram_buckets: usize,
    epsilon: f64,
    kind: &str,
    feature_allowlist: Option<Vec<String>>,
) -> PyResult<(Bound<'py, PyBytes>, ReadCounts)> {
    let options = stats_options(
        [
            num_top_values,
            num_rank_histogram_buckets,
            num_values_histogram_buckets,
            num_histogram_buckets,
            num_quantiles_histogram_buckets,
        ],
        epsilon,
        kind,
        None,
        feature_allowlist,
    )?;
    let reader = stream_reader(stream)?;
    let batches = py.detach(|| reader.collect::<Result<Vec<RecordBatch>, _>>());
    let batches = batches.map_err(|e| PyValueError::new_err(format!("reading the Arrow stream: {e}")))?;
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batches.len());
    for batch in &batches {
        if batch.num_columns() != 1 {
            return Err(PyValueError::new_err(format!(
                "expected one column of serialized records, found {}",
                batch.num_columns()
            )));
        }
        let column = batch.column(0);
        if !matches!(column.data_type(), DataType::Binary | DataType::LargeBinary) {
            return Err(PyValueError::new_err(format!(
                "the column of serialized records must be binary, not {}",
                column.data_type()
            )));
        }
        if let Some(row) = (0..column.len()).find(|&i| column.is_null(i)) {
            let before: usize = columns.iter().map(|c| c.len()).sum();
            return Err(PyValueError::new_err(format!(
                "row {} of the block is null, not a serialized record",
                before + row
            )));
        }
        columns.push(column.clone());
    }
    let out = py.detach(|| -> Result<(Vec<u8>, ReadCounts), StatsError> {
        let records = columns.iter().flat_map(|column| -> Box<dyn Iterator<Item = &[u8]>> {
            match (column.as_binary_opt::<i32>(), column.as_binary_opt::<i64>()) {
                (Some(values), _) => Box::new(values.iter().flatten()),
                (None, Some(values)) => Box::new(values.iter().flatten()),
                (None, None) => Box::new(std::iter::empty()),
            }
        });
        let (acc, read) = tfrec::stats::statistics_of_records(records, &options)?;
        Ok((acc.to_partial_bytes(), read_counts(&read)))
    });
    let (bytes, counts) = out.map_err(|e| PyTfrecError::from(tfrec::Error::from(e)))?;
    Ok((PyBytes::new(py, &bytes), counts))
}

/// The binary statistics of partials (each `(partial bytes, read counts)`) merged in the order
/// given, as one process merges its files'; empty partials give the statistics of nothing with
/// the options given.
#[pyfunction]
#[pyo3(signature = (partials, *, num_top_values, num_rank_histogram_buckets, num_values_histogram_buckets,
    num_histogram_buckets, num_quantiles_histogram_buckets, epsilon, kind="auto", sample_rate=None,
    feature_allowlist=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_merge_partials<'py>(
    py: Python<'py>,
    partials: Vec<(Vec<u8>, ReadCounts)>,
    num_top_values: usize,
    num_rank_histogram_buckets: usize,
    num_values_histogram_buckets: usize,
    num_histogram_buckets: usize,
    num_quantiles_histogram_buckets: usize,
    epsilon: f64,
    kind: &str,
    sample_rate: Option<f64>,
    feature_allowlist: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let options = stats_options(
        [
            num_top_values,
            num_rank_histogram_buckets,
            num_values_histogram_buckets,
            num_histogram_buckets,
            num_quantiles_histogram_buckets,
        ],
        epsilon,
        kind,
        sample_rate,
        feature_allowlist,
    )?;
    let bytes = py.detach(|| -> Result<Vec<u8>, StatsError> {
        let decoded = partials
            .iter()
            .map(|(bytes, counts)| Ok((StatsAccumulator::from_partial_bytes(bytes)?, read_stats(*counts))));
        let out = tfrec::stats::merge_partials(&options, decoded)?;
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

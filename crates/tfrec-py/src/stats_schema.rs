//! `tfrec.stats`' schema calls into the library: a TFDV schema inferred from statistics,
//! statistics validated against a schema, and schemas and anomalies to and from the protobuf
//! text format. Messages cross as their protobuf bytes.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tfrec::stats::{InferSchemaOptions, StatsError};

use crate::errors::PyTfrecError;

fn raise(e: StatsError) -> PyErr {
    PyTfrecError::from(tfrec::Error::from(e)).into()
}

/// The binary ``Schema`` ``tfdv.infer_schema`` infers from binary statistics.
#[pyfunction]
#[pyo3(signature = (stats, *, infer_feature_shape, max_string_domain_size))]
pub fn stats_infer_schema<'py>(
    py: Python<'py>,
    stats: &[u8],
    infer_feature_shape: bool,
    max_string_domain_size: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let options = InferSchemaOptions {
        infer_feature_shape,
        max_string_domain_size,
    };
    let stats = tfrec::stats::decode_statistics(stats).map_err(raise)?;
    let schema = tfrec::stats::infer_schema(&stats, options).map_err(raise)?;
    Ok(PyBytes::new(py, &tfrec::stats::encode_schema(&schema)))
}

/// The binary ``Anomalies`` of binary statistics against a binary schema.
#[pyfunction]
#[pyo3(signature = (stats, schema, *, previous=None, serving=None))]
pub fn stats_validate<'py>(
    py: Python<'py>,
    stats: &[u8],
    schema: &[u8],
    previous: Option<&[u8]>,
    serving: Option<&[u8]>,
) -> PyResult<Bound<'py, PyBytes>> {
    let decode = |bytes: Option<&[u8]>| bytes.map(tfrec::stats::decode_statistics).transpose();
    let stats = tfrec::stats::decode_statistics(stats).map_err(raise)?;
    let schema = tfrec::stats::decode_schema(schema).map_err(raise)?;
    let previous = decode(previous).map_err(raise)?;
    let serving = decode(serving).map_err(raise)?;
    let anomalies =
        tfrec::stats::validate_statistics(&stats, &schema, previous.as_ref(), serving.as_ref()).map_err(raise)?;
    Ok(PyBytes::new(py, &tfrec::stats::encode_anomalies(&anomalies)))
}

/// A binary schema as protobuf text (TFDV's ``write_schema_text``).
#[pyfunction]
pub fn schema_to_text(data: &[u8]) -> PyResult<String> {
    tfrec::stats::decode_schema(data)
        .and_then(|s| tfrec::stats::schema_to_text(&s))
        .map_err(raise)
}

/// A protobuf text schema as binary (TFDV's ``load_schema_text``).
#[pyfunction]
pub fn schema_from_text<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyBytes>> {
    let schema = tfrec::stats::schema_from_text(text).map_err(raise)?;
    Ok(PyBytes::new(py, &tfrec::stats::encode_schema(&schema)))
}

/// The binary schema of a protobuf text file (TFDV's ``load_schema_text``); an error names the
/// file and line.
#[pyfunction]
pub fn schema_read_file<'py>(py: Python<'py>, path: std::path::PathBuf) -> PyResult<Bound<'py, PyBytes>> {
    let schema = tfrec::stats::read_schema_file(&path).map_err(raise)?;
    Ok(PyBytes::new(py, &tfrec::stats::encode_schema(&schema)))
}

/// Binary anomalies as protobuf text.
#[pyfunction]
pub fn anomalies_to_text(data: &[u8]) -> PyResult<String> {
    tfrec::stats::decode_anomalies(data)
        .and_then(|a| tfrec::stats::anomalies_to_text(&a))
        .map_err(raise)
}

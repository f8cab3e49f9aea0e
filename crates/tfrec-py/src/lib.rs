//! `tfrec._tfrec`: the Python extension module. A thin layer over the `tfrec` library: it turns
//! Python values into the library's types and back (numeric tensors into NumPy arrays without a
//! copy of their values), releases the GIL while the library works, and turns the library's
//! errors into the exceptions of `tfrec.errors`. The Python API itself lives in `python/tfrec`.

mod arrow;
mod cli;
mod convert;
mod dataset;
mod elements;
mod errors;
mod messages;
mod parsing;
mod pyfile;
mod random_access;
mod records;
mod state_saver;
mod statistics;
mod stats;
mod stats_report;
mod stats_schema;
mod string_tensors;
mod tensors;

use pyo3::prelude::*;

// Batch buffers are allocated by the workers and freed by the consumer once NumPy lets go of
// them. The C library's allocator hands buffers this large back to the kernel, so every batch
// paid page faults again (and its free crossed threads through an arena lock); mimalloc keeps
// and reuses them, as the `tfrec` binary does. Python objects still use the interpreter's own.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The Rust extension module: a thin layer over the ``tfrec`` library (the Python API is in
/// ``tfrec``'s other modules). Private: its names and signatures may change between versions.
#[pymodule]
fn _tfrec(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Whether this is a build with debug assertions (the dev profile the tests use): a
    // benchmark says so beside a figure timed on it, which is not a speed figure.
    m.add("DEBUG_BUILD", cfg!(debug_assertions))?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_class::<records::RecordWriter>()?;
    m.add_class::<records::RecordIterator>()?;
    m.add_function(wrap_pyfunction!(records::expand_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(records::file_size, m)?)?;
    m.add_function(wrap_pyfunction!(records::plan_read_units, m)?)?;
    m.add_function(wrap_pyfunction!(records::is_url, m)?)?;
    m.add_function(wrap_pyfunction!(records::refuse_same_file, m)?)?;
    m.add_class::<parsing::Parser>()?;
    m.add_class::<random_access::RecordFiles>()?;
    m.add_class::<dataset::Dataset>()?;
    m.add_class::<dataset::DatasetIterator>()?;
    m.add_class::<elements::ElementsIterator>()?;
    m.add_class::<state_saver::StateSaver>()?;
    m.add_class::<state_saver::SaverBatch>()?;
    m.add_function(wrap_pyfunction!(messages::encode_feature, m)?)?;
    m.add_function(wrap_pyfunction!(messages::decode_feature, m)?)?;
    m.add_function(wrap_pyfunction!(messages::encode_example, m)?)?;
    m.add_function(wrap_pyfunction!(messages::decode_example, m)?)?;
    m.add_function(wrap_pyfunction!(messages::encode_sequence_example, m)?)?;
    m.add_function(wrap_pyfunction!(messages::decode_sequence_example, m)?)?;
    m.add_function(wrap_pyfunction!(messages::message_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(messages::message_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(messages::message_to_friendly_json, m)?)?;
    m.add_function(wrap_pyfunction!(messages::message_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(messages::message_from_friendly_json, m)?)?;
    m.add_function(wrap_pyfunction!(tensors::serialize_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(tensors::parse_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(tensors::tensor_dtype_names, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::arrow_infer_spec, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::arrow_check_spec, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::arrow_batches, m)?)?;
    m.add_class::<arrow::ArrowBatches>()?;
    m.add_class::<dataset::ArrowPlan>()?;
    m.add_class::<arrow::ArrowBatch>()?;
    m.add_class::<arrow::ArrowArray>()?;
    m.add_function(wrap_pyfunction!(arrow::arrow_write, m)?)?;
    m.add_function(wrap_pyfunction!(statistics::stats_generate, m)?)?;
    m.add_function(wrap_pyfunction!(statistics::stats_partial_of_file, m)?)?;
    m.add_function(wrap_pyfunction!(statistics::stats_merge_partials, m)?)?;
    m.add_function(wrap_pyfunction!(statistics::stats_partial_of_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(statistics::stats_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(statistics::stats_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(stats_report::stats_report_html, m)?)?;
    m.add_function(wrap_pyfunction!(stats_schema::stats_infer_schema, m)?)?;
    m.add_function(wrap_pyfunction!(stats_schema::stats_validate, m)?)?;
    m.add_function(wrap_pyfunction!(stats_schema::schema_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(stats_schema::schema_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(stats_schema::schema_read_file, m)?)?;
    m.add_function(wrap_pyfunction!(stats_schema::anomalies_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::arrow_write_parquet, m)?)?;
    Ok(())
}

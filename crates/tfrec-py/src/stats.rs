//! The read counters of a running pipeline as the dict Python's `stats()` gives, shared by the
//! data set's iterator and the Arrow batches it feeds.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use tfrec::pipeline::Counters;

/// A pipeline's counters as the dict `stats()` gives: records, bytes, files done, skipped
/// regions, bytes and files, batches, and the problems skipped (messages naming file and
/// offset).
pub(crate) fn counters_dict<'py>(py: Python<'py>, c: &Counters) -> PyResult<Bound<'py, PyDict>> {
    use std::sync::atomic::Ordering::Relaxed;
    let d = PyDict::new(py);
    d.set_item("records", c.records.load(Relaxed))?;
    d.set_item("bytes", c.bytes.load(Relaxed))?;
    d.set_item("files_done", c.files_done.load(Relaxed))?;
    d.set_item("skipped_regions", c.skipped_regions.load(Relaxed))?;
    d.set_item("skipped_bytes", c.skipped_bytes.load(Relaxed))?;
    d.set_item("skipped_files", c.skipped_files.load(Relaxed))?;
    d.set_item("batches", c.batches.load(Relaxed))?;
    d.set_item("spans", c.spans.load(Relaxed))?;
    let problems: Vec<String> = c
        .problems
        .lock()
        .map(|p| p.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    d.set_item("problems", problems)?;
    Ok(d)
}

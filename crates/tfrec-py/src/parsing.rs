//! The parse ops from Python: a `Parser` built once from specs (in the JSON spec form that
//! `tfrec.io` makes from its spec objects), then run on batches with the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use serde_json::Value;
use tfrec::parse::{specs_from_json_str, ExampleParser, ParsedSequences, SequenceParser, SequenceSpecs};

use crate::convert::{serialized_batch, tensors_to_dict};
use crate::errors::PyTfrecError;
use crate::string_tensors::StringForm;

/// Records per parallel work unit when `num_threads > 1`.
const PARALLEL_MINIBATCH: usize = 256;

enum Kind {
    Example(ExampleParser),
    Sequence(SequenceParser),
}

/// A compiled set of specs.
#[pyclass(module = "tfrec._tfrec", frozen)]
pub struct Parser {
    kind: Kind,
}

fn spec_json(text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("bad spec JSON: {e}")))
}

/// `(context, feature_lists, lengths)` as Python dicts, strings in the form `strings`.
pub(crate) fn sequences_to_py<'py>(
    py: Python<'py>,
    parsed: ParsedSequences,
    strings: StringForm,
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            tensors_to_dict(py, parsed.context, strings)?,
            tensors_to_dict(py, parsed.feature_lists, strings)?,
            tensors_to_dict(py, parsed.lengths, strings)?,
        ],
    )
}

#[pymethods]
impl Parser {
    /// `specs`: the JSON spec form, `{name: spec}` for Examples, or
    /// `{"context_features": …, "sequence_features": …}` when `sequence` is true.
    #[new]
    #[pyo3(signature = (specs, sequence=false))]
    fn new(specs: &str, sequence: bool) -> PyResult<Self> {
        spec_json(specs)?;
        let kind = if sequence {
            let specs = SequenceSpecs::from_json_str(specs).map_err(PyTfrecError::from)?;
            Kind::Sequence(SequenceParser::new(&specs).map_err(PyTfrecError::from)?)
        } else {
            let specs = specs_from_json_str(specs).map_err(PyTfrecError::from)?;
            Kind::Example(ExampleParser::new(&specs).map_err(PyTfrecError::from)?)
        };
        Ok(Parser { kind })
    }

    /// `parse_example` (or `parse_single_example` when `single`): a dict of tensors, strings
    /// in the form `strings` names ("object", "numpy" or "arrow").
    #[pyo3(signature = (serialized, single=false, num_threads=1, strings="object"))]
    fn parse_example<'py>(
        &self,
        py: Python<'py>,
        serialized: &Bound<'py, PyAny>,
        single: bool,
        num_threads: usize,
        strings: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let strings = StringForm::from_name(strings)?;
        let Kind::Example(parser) = &self.kind else {
            return Err(PyValueError::new_err("this parser was built for SequenceExamples"));
        };
        let objects = serialized_batch(serialized)?;
        let records = record_slices(&objects);
        let result = py.detach(|| run_example(parser, &records, single, num_threads));
        let tensors = result.map_err(PyTfrecError::from)?;
        tensors_to_dict(py, tensors, strings)
    }

    /// `parse_sequence_example` (or the single form): `(context, feature_lists, lengths)`,
    /// strings in the form `strings` names.
    #[pyo3(signature = (serialized, single=false, num_threads=1, strings="object"))]
    fn parse_sequence_example<'py>(
        &self,
        py: Python<'py>,
        serialized: &Bound<'py, PyAny>,
        single: bool,
        num_threads: usize,
        strings: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let strings = StringForm::from_name(strings)?;
        let Kind::Sequence(parser) = &self.kind else {
            return Err(PyValueError::new_err("this parser was built for Examples"));
        };
        let objects = serialized_batch(serialized)?;
        let records = record_slices(&objects);
        let result = py.detach(|| {
            if single {
                parser.parse_single(records.first().copied().unwrap_or_default())
            } else if num_threads > 1 {
                parser.parse_batch_parallel(&records, PARALLEL_MINIBATCH)
            } else {
                parser.parse_batch(&records)
            }
        });
        let parsed = result.map_err(PyTfrecError::from)?;
        sequences_to_py(py, parsed, strings)
    }
}

/// The records' bytes. `objects` holds a reference to each `bytes` object, so the buffers stay
/// alive (and, `bytes` being immutable, unchanged) while the GIL is released.
fn record_slices<'a>(objects: &'a [Bound<'_, PyBytes>]) -> Vec<&'a [u8]> {
    objects.iter().map(|b| b.as_bytes()).collect()
}

fn run_example(
    parser: &ExampleParser,
    records: &[&[u8]],
    single: bool,
    num_threads: usize,
) -> Result<tfrec::parse::TensorMap, tfrec::parse::ParseError> {
    if single {
        parser.parse_single(records.first().copied().unwrap_or_default())
    } else if num_threads > 1 {
        parser.parse_batch_parallel(records, PARALLEL_MINIBATCH)
    } else {
        parser.parse_batch(records)
    }
}

//! `tfrec.Dataset`: the library's input pipeline (`pipeline::Dataset`) from Python. Each
//! builder call returns a new object, as `tf.data` does; iterating starts the pipeline's
//! threads, and every wait for the next batch releases the GIL. The library places each stage:
//! on the records, on the batches, parsing on the worker threads, or, after a Python `map` or
//! `filter` (or a parse), on the elements (`pipeline::Elements`, with Python's functions as its
//! callbacks, see `elements.rs`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use serde_json::Value;
use tfrec::parse::{specs_from_json_str, ExampleParser, ParsedSequences, SequenceSpecs, TensorMap};
use tfrec::pipeline::{
    Batched, Cardinality, Dataset as Pipeline, DatasetError, ElementStage, Elements, PipelineError, PipelineIter,
    RecordBatch, ShardBy,
};

use tfrec::columnar::{BatchError, ColumnSpecs, ColumnarError};

use crate::arrow::{strings, ArrowBatches, BatchSource};
use crate::convert::tensors_to_dict;
use crate::elements::{self as callbacks, Element, ElementsIterator};
use crate::errors::PyTfrecError;
use crate::parsing::sequences_to_py;
use crate::records::reader_options;
use crate::stats::counters_dict;
use crate::string_tensors::StringForm;

/// What the workers do with each batch.
#[derive(Clone)]
enum Stage {
    /// Hand the raw records over.
    Raw,
    /// `parse_example` with these specs (JSON form).
    Examples(Value),
    /// `parse_sequence_example` with these specs.
    Sequences(Value),
}

/// A pipeline description. Immutable: builder methods return a changed copy.
#[pyclass(module = "tfrec._tfrec", frozen)]
#[derive(Clone)]
pub struct Dataset {
    pipeline: Pipeline,
    /// The pipeline in batches, once `batch` was called; the stages after it work on batches.
    batched: Option<Batched>,
    stage: Stage,
    threads: usize,
    prefetch: usize,
    deterministic: bool,
    /// Elements from Python instead of files: a callable giving an iterable for each
    /// iteration, and how many elements it gives, when known.
    source: Option<(Arc<Py<PyAny>>, Cardinality)>,
    /// The stages over elements, once one had to run there (a `map`, a `filter`, anything
    /// after a `parse`, every stage over Python elements), in call order.
    elements: Vec<ElementStage<Element>>,
    /// The first stage called that works on records (or elements), which a file-level stage
    /// must come before.
    first_stage: Option<&'static str>,
    /// The form of the parsed string tensors (`parse(strings=...)`).
    strings: StringForm,
}

/// One item of the worker stage.
enum Output {
    Records(RecordBatch),
    Tensors(TensorMap),
    Sequences(ParsedSequences),
}

/// Records per batch when the user asked for none (records are then handed out one by one).
const UNBATCHED_CHUNK: usize = 256;

impl Dataset {
    fn with(&self, f: impl FnOnce(&mut Dataset)) -> Dataset {
        let mut d = self.clone();
        f(&mut d);
        d
    }

    /// A copy with a stage added that tf.data might refuse (a `ValueError` then, as TF's
    /// `InvalidArgumentError` for these is raised when the stage is made): on the records,
    /// or on the batches once `batch` was called.
    fn try_with(
        &self,
        stage: &'static str,
        on_records: impl FnOnce(Pipeline) -> Result<Pipeline, DatasetError>,
        on_batches: impl FnOnce(Batched) -> Result<Batched, DatasetError>,
        on_elements: impl FnOnce() -> Result<ElementStage<Element>, DatasetError>,
    ) -> PyResult<Dataset> {
        let mut d = self.clone();
        d.first_stage.get_or_insert(stage);
        if self.on_elements() {
            d.elements.push(on_elements().map_err(PyTfrecError::from)?);
            return Ok(d);
        }
        match &self.batched {
            Some(batched) => d.batched = Some(on_batches(batched.clone()).map_err(PyTfrecError::from)?),
            None => d.pipeline = on_records(self.pipeline.clone()).map_err(PyTfrecError::from)?,
        }
        Ok(d)
    }

    /// Whether the next stage works on elements: after a Python function or a parse, or over
    /// Python's own elements.
    fn on_elements(&self) -> bool {
        self.source.is_some() || !self.elements.is_empty() || !matches!(self.stage, Stage::Raw)
    }

    /// A copy with a stage over elements added.
    fn with_element_stage(&self, name: &'static str, stage: ElementStage<Element>) -> Dataset {
        self.with(|d| {
            d.first_stage.get_or_insert(name);
            d.elements.push(stage);
        })
    }

    /// A file-level stage: refused over Python's elements, and after any other stage.
    fn file_stage(
        &self,
        stage: &'static str,
        f: impl FnOnce(Pipeline) -> Result<Pipeline, DatasetError>,
    ) -> PyResult<Dataset> {
        if self.source.is_some() {
            return Err(PyValueError::new_err(format!(
                "`{stage}` chooses files: it needs a data set of files"
            )));
        }
        if let Some(after) = self.first_stage {
            return Err(PyValueError::new_err(format!(
                "`{stage}` chooses or orders files, so it must come before `{after}`, which works on the files' records"
            )));
        }
        let mut d = self.clone();
        d.pipeline = f(self.pipeline.clone()).map_err(PyTfrecError::from)?;
        Ok(d)
    }
}

#[pymethods]
impl Dataset {
    #[new]
    #[pyo3(signature = (paths, compression_type=None, on_corruption="raise", torn_tail="raise", verify_crc=true))]
    fn new(
        paths: Vec<String>,
        compression_type: Option<&str>,
        on_corruption: &str,
        torn_tail: &str,
        verify_crc: bool,
    ) -> PyResult<Self> {
        let options = reader_options(compression_type, on_corruption, torn_tail, verify_crc, None)?;
        let pipeline = Pipeline::from_inputs(&paths)
            .map_err(PyTfrecError::from)?
            .reader_options(options);
        Ok(Dataset::of(pipeline, None))
    }

    /// A data set of Python's elements: `open()` gives an iterable of them, called anew for
    /// each iteration; `count`, how many it gives, when known.
    #[staticmethod]
    #[pyo3(signature = (open, count=None))]
    fn from_python(open: Py<PyAny>, count: Option<u64>) -> Dataset {
        let cardinality = count.map_or(Cardinality::Unknown, Cardinality::Finite);
        Dataset::of(Pipeline::from_files(Vec::new()), Some((Arc::new(open), cardinality)))
    }

    #[pyo3(signature = (cycle_length, block_length=1))]
    fn interleave(&self, cycle_length: usize, block_length: usize) -> PyResult<Dataset> {
        self.file_stage("interleave", |p| p.interleave(cycle_length, block_length))
    }

    /// Part `index` of `num_shards`: every `num_shards`-th record of the stream so far
    /// (`by="record"`, tf.data's meaning), or whole files (`by="file"`).
    #[pyo3(signature = (num_shards, index, by="record"))]
    fn shard(&self, num_shards: usize, index: usize, by: &str) -> PyResult<Dataset> {
        let by = match by {
            "file" => ShardBy::File,
            "record" => ShardBy::Record,
            other => {
                return Err(PyValueError::new_err(format!(
                    "by must be 'record' or 'file', not {other:?}"
                )))
            }
        };
        match by {
            ShardBy::File => self.file_stage("shard", |p| p.shard_by(num_shards, index, by)),
            _ => self.try_with(
                "shard",
                |p| p.shard_by(num_shards, index, by),
                |b| b.shard(num_shards, index),
                || ElementStage::shard(num_shards, index),
            ),
        }
    }

    #[pyo3(signature = (buffer_size, seed=0, reshuffle_each_iteration=true))]
    fn shuffle(&self, buffer_size: usize, seed: u64, reshuffle_each_iteration: bool) -> PyResult<Dataset> {
        self.try_with(
            "shuffle",
            |p| p.shuffle_with(buffer_size, seed, reshuffle_each_iteration),
            |b| b.shuffle_with(buffer_size, seed, reshuffle_each_iteration),
            || ElementStage::shuffle(buffer_size, seed, reshuffle_each_iteration),
        )
    }

    /// `count=None` repeats forever.
    #[pyo3(signature = (count=None))]
    fn repeat(&self, count: Option<u64>) -> PyResult<Dataset> {
        match count {
            Some(n) => self.try_with(
                "repeat",
                |p| Ok(p.repeat(n)),
                |b| Ok(b.repeat(n)),
                || Ok(ElementStage::repeat(Some(n))),
            ),
            None => self.try_with(
                "repeat",
                |p| Ok(p.repeat_forever()),
                |b| Ok(b.repeat_forever()),
                || Ok(ElementStage::repeat(None)),
            ),
        }
    }

    fn skip(&self, count: u64) -> PyResult<Dataset> {
        self.try_with(
            "skip",
            |p| Ok(p.skip(count)),
            |b| Ok(b.skip(count)),
            || Ok(ElementStage::skip(count)),
        )
    }

    fn take(&self, count: u64) -> PyResult<Dataset> {
        self.try_with(
            "take",
            |p| Ok(p.take(count)),
            |b| Ok(b.take(count)),
            || Ok(ElementStage::take(count)),
        )
    }

    /// Groups records into batches; batches of anything else (batches, parsed values, Python
    /// values) are made by `stack`, Python's batch of a list of elements.
    #[pyo3(signature = (batch_size, drop_remainder=false, stack=None))]
    fn batch(&self, batch_size: usize, drop_remainder: bool, stack: Option<Py<PyAny>>) -> PyResult<Dataset> {
        if self.on_elements() || self.batched.is_some() {
            let stack = stack.ok_or_else(|| {
                PyValueError::new_err("`batch` of batches or of parsed values needs a stack function")
            })?;
            return Ok(self.with_element_stage("batch", callbacks::batch(batch_size, drop_remainder, stack)?));
        }
        let batched = self
            .pipeline
            .clone()
            .batch(batch_size, drop_remainder)
            .map_err(PyTfrecError::from)?;
        Ok(self.with(|d| {
            d.first_stage.get_or_insert("batch");
            d.batched = Some(batched);
        }))
    }

    /// Applies `f` to each element (a tuple element is its arguments), on the iterating thread.
    fn map(&self, f: Py<PyAny>) -> Dataset {
        self.with_element_stage("map", callbacks::map(f))
    }

    /// Keeps the elements for which `predicate` is true, on the iterating thread.
    fn filter(&self, predicate: Py<PyAny>) -> Dataset {
        self.with_element_stage("filter", callbacks::filter(predicate))
    }

    /// How many elements there are, by tf.data's rules: -1 infinite, -2 unknown.
    fn cardinality(&self) -> i64 {
        let before = match (&self.source, &self.batched) {
            (Some((_, n)), _) => *n,
            (None, Some(batched)) => batched.cardinality(),
            (None, None) => self.pipeline.cardinality(),
        };
        self.elements
            .iter()
            .fold(before, |n, stage| stage.cardinality(n))
            .as_tf()
    }

    /// Whether some stage runs over elements (after a Python function or a parse, or over
    /// Python's elements): such a data set is iterated with [`Dataset::elements`].
    #[getter]
    fn has_element_stages(&self) -> bool {
        self.source.is_some() || !self.elements.is_empty()
    }

    /// Parses with specs in the JSON form; `sequence` for SequenceExamples. Checked now, so a
    /// bad spec fails here rather than on the worker threads. Where records are already
    /// parsed or mapped, `parse_element` (Python's parse of one element) does it instead.
    /// `strings` names the form of string tensors ("object", "numpy" or "arrow").
    #[pyo3(signature = (specs, sequence=false, parse_element=None, strings="object"))]
    fn parse(
        &self,
        py: Python<'_>,
        specs: &str,
        sequence: bool,
        parse_element: Option<Py<PyAny>>,
        strings: &str,
    ) -> PyResult<Dataset> {
        let strings = StringForm::from_name(strings)?;
        strings.check_available(py)?;
        if self.on_elements() {
            let parse = parse_element
                .ok_or_else(|| PyValueError::new_err("`parse` of parsed or mapped values needs a parse function"))?;
            return Ok(self.with_element_stage("parse", callbacks::apply(parse)));
        }
        let value: Value =
            serde_json::from_str(specs).map_err(|e| PyValueError::new_err(format!("bad spec JSON: {e}")))?;
        let stage = if sequence {
            let s = SequenceSpecs::from_json_str(specs).map_err(PyTfrecError::from)?;
            tfrec::parse::SequenceParser::new(&s).map_err(PyTfrecError::from)?;
            Stage::Sequences(value)
        } else {
            let s = specs_from_json_str(specs).map_err(PyTfrecError::from)?;
            ExampleParser::new(&s).map_err(PyTfrecError::from)?;
            Stage::Examples(value)
        };
        Ok(self.with(|d| {
            d.first_stage.get_or_insert("parse");
            d.stage = stage;
            d.strings = strings;
        }))
    }

    fn threads(&self, threads: usize) -> Dataset {
        self.with(|d| d.threads = threads.max(1))
    }

    fn prefetch(&self, batches: usize) -> Dataset {
        self.with(|d| d.prefetch = batches.max(1))
    }

    fn deterministic(&self, deterministic: bool) -> Dataset {
        self.with(|d| d.deterministic = deterministic)
    }

    #[getter]
    fn batch_size(&self) -> Option<usize> {
        self.batched.as_ref().map(Batched::batch_size)
    }

    /// The elements of a data set with stages over elements, the library running every stage
    /// and calling Python's functions; `wrap` is applied to each parsed value first (what
    /// Python makes of the tensors it is given).
    fn elements(&self, wrap: Py<PyAny>) -> PyResult<ElementsIterator> {
        let elements = match &self.source {
            Some((open, cardinality)) => {
                Elements::from_source(Arc::new(callbacks::source(Arc::clone(open))), *cardinality)
            }
            None => {
                let (pipeline, records_one_by_one) = self.pipeline_of()?;
                let before = match &self.batched {
                    Some(batched) => batched.cardinality(),
                    None => self.pipeline.cardinality(),
                };
                let strings = self.strings;
                let lift = move |output: Output, out: &mut VecDeque<Element>| {
                    Python::attach(|py| lift(py, output, records_one_by_one, strings, &wrap, out))
                        .map_err(|e| Box::new(e) as _)
                };
                Elements::from_pipeline(pipeline, Arc::new(lift), Some(callbacks::without_the_gil()), before)
            }
        };
        Ok(ElementsIterator::new(elements.stages(&self.elements).iter()))
    }

    fn __iter__(&self) -> PyResult<DatasetIterator> {
        if self.has_element_stages() {
            return Err(PyValueError::new_err(
                "a data set with stages over elements is iterated with elements()",
            ));
        }
        let (iter, records_one_by_one) = self.start()?;
        Ok(DatasetIterator {
            state: Mutex::new(IterState {
                iter,
                pending: VecDeque::new(),
                done: false,
            }),
            records_one_by_one,
            strings: self.strings,
        })
    }

    /// The pipeline's output planned as Arrow columns: the specs read and checked now,
    /// without starting a thread or opening a file; see [`ArrowPlan`].
    #[pyo3(signature = (spec=None, utf8=false, utf8_columns=None, batch_rows=65536))]
    fn to_arrow(
        &self,
        spec: Option<&str>,
        utf8: bool,
        utf8_columns: Option<Vec<String>>,
        batch_rows: usize,
    ) -> PyResult<ArrowPlan> {
        let text = match (&self.stage, spec) {
            (_, Some(text)) => text.to_owned(),
            (Stage::Examples(v) | Stage::Sequences(v), None) => v.to_string(),
            (Stage::Raw, None) => {
                return Err(PyValueError::new_err(
                    "to_arrow needs specs: call parse(...) first, or give spec=",
                ))
            }
        };
        let columns = Arc::new(crate::arrow::column_specs(&text, &strings(utf8, utf8_columns))?);
        Ok(ArrowPlan {
            dataset: self.clone(),
            columns,
            spec: text,
            batch_rows: batch_rows.max(1),
        })
    }

    /// Runs the whole pipeline in Rust, making no Python objects, with the GIL released:
    /// `(records read, batches)`. The benchmark's baseline for what iterating from Python
    /// costs on top of the pipeline itself.
    fn _drain(&self, py: Python<'_>) -> PyResult<(u64, u64)> {
        if self.has_element_stages() {
            return Err(PyValueError::new_err("_drain runs no Python stage"));
        }
        let (mut iter, _) = self.start()?;
        let result = py.detach(|| {
            let mut batches = 0u64;
            for item in iter.by_ref() {
                item?;
                batches += 1;
            }
            Ok::<_, PipelineError>(batches)
        });
        let batches = result.map_err(PyTfrecError::from)?;
        let records = iter.counters().records.load(std::sync::atomic::Ordering::Relaxed);
        Ok((records, batches))
    }
}

impl Dataset {
    fn of(pipeline: Pipeline, source: Option<(Arc<Py<PyAny>>, Cardinality)>) -> Dataset {
        Dataset {
            pipeline,
            batched: None,
            stage: Stage::Raw,
            threads: 1,
            prefetch: 2,
            deterministic: true,
            source,
            elements: Vec::new(),
            first_stage: None,
            strings: StringForm::Object,
        }
    }

    /// The pipeline in batches: its own, or chunks of `size` records when it has none.
    fn batches(&self, size: usize) -> PyResult<Batched> {
        match &self.batched {
            Some(batched) => Ok(batched.clone()),
            None => self
                .pipeline
                .clone()
                .chunks(size)
                .map_err(|e| PyTfrecError::from(e).into()),
        }
    }

    /// Starts the pipeline; also says whether records are handed out one by one.
    fn start(&self) -> PyResult<(PipelineIter<Output>, bool)> {
        let (pipeline, records_one_by_one) = self.pipeline_of()?;
        Ok((pipeline.iter(), records_one_by_one))
    }

    /// The pipeline, not started; also says whether records are handed out one by one.
    fn pipeline_of(&self) -> PyResult<(tfrec::pipeline::Pipeline<Output>, bool)> {
        let unbatched = self.batched.is_none();
        // Unbatched parsing parses each record alone (parse_single_example), in batches of one.
        let batched = self.batches(if matches!(self.stage, Stage::Raw) {
            UNBATCHED_CHUNK
        } else {
            1
        })?;
        let pipeline = match &self.stage {
            Stage::Raw => batched.map_batches(|b| Ok(Output::Records(b))),
            Stage::Examples(v) => {
                let parser = ExampleParser::new(&specs_from_json_str(&v.to_string()).map_err(PyTfrecError::from)?)
                    .map_err(PyTfrecError::from)?;
                batched.map_batches(move |b| {
                    let records = b.records();
                    let parsed = if unbatched {
                        parser.parse_single(records.first().copied().unwrap_or_default())
                    } else {
                        parser.parse_batch(&records)
                    };
                    parsed.map(Output::Tensors).map_err(|error| b.parse_error(error))
                })
            }
            Stage::Sequences(v) => {
                let specs = SequenceSpecs::from_json_str(&v.to_string()).map_err(PyTfrecError::from)?;
                let parser = tfrec::parse::SequenceParser::new(&specs).map_err(PyTfrecError::from)?;
                batched.map_batches(move |b| {
                    let records = b.records();
                    let parsed = if unbatched {
                        parser.parse_single(records.first().copied().unwrap_or_default())
                    } else {
                        parser.parse_batch(&records)
                    };
                    parsed.map(Output::Sequences).map_err(|error| b.parse_error(error))
                })
            }
        };
        let pipeline = pipeline
            .threads(self.threads)
            .prefetch(self.prefetch)
            .deterministic(self.deterministic);
        Ok((pipeline, unbatched && matches!(self.stage, Stage::Raw)))
    }
}

/// One output of the pipeline as Python elements, appended to `out`: each record of a chunk
/// (`records_one_by_one`), or the batch or parsed value (strings in the form `strings`),
/// `wrap`ped as Python wraps parsed values.
fn lift(
    py: Python<'_>,
    output: Output,
    records_one_by_one: bool,
    strings: StringForm,
    wrap: &Py<PyAny>,
    out: &mut VecDeque<Element>,
) -> PyResult<()> {
    let element = match output {
        Output::Records(batch) if records_one_by_one => {
            out.extend(
                batch
                    .records()
                    .into_iter()
                    .map(|r| PyBytes::new(py, r).into_any().unbind()),
            );
            return Ok(());
        }
        Output::Records(batch) => PyList::new(py, batch.records().into_iter().map(|r| PyBytes::new(py, r)))?.into_any(),
        Output::Tensors(map) => wrap.bind(py).call1((tensors_to_dict(py, map, strings)?,))?,
        Output::Sequences(parsed) => wrap.bind(py).call1((sequences_to_py(py, parsed, strings)?,))?,
    };
    out.push_back(element.unbind());
    Ok(())
}

/// A batch's columns error as a pipeline error: a parse error as the pipeline reports it, any
/// other one naming the file and offset of the record at fault.
fn columns_error(batch: &RecordBatch, error: ColumnarError) -> PipelineError {
    let error = match error {
        ColumnarError::Parse(e) => return batch.parse_error(e),
        other => other,
    };
    let row = error.row().unwrap_or(0);
    let at = match (batch.path(row), batch.origin(row)) {
        (Some(path), Some(origin)) => format!("{}@{}", path.display(), origin.offset),
        _ => format!("batch {}", batch.index),
    };
    let first_record = batch.origin(0).map_or(0, |o| o.index);
    PipelineError::Map {
        batch: batch.index,
        error: Box::new(BatchError::Columns {
            at,
            first_record,
            error: Box::new(error),
        }),
    }
}

struct IterState {
    iter: PipelineIter<Output>,
    /// Records of the current chunk not yet handed out (unbatched raw records).
    pending: VecDeque<Vec<u8>>,
    done: bool,
}

/// A running pipeline.
#[pyclass(module = "tfrec._tfrec")]
pub struct DatasetIterator {
    state: Mutex<IterState>,
    records_one_by_one: bool,
    /// The form of parsed string tensors.
    strings: StringForm,
}

#[pymethods]
impl DatasetIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// A batch: a list of `bytes` (raw), a dict of arrays (parsed Examples), or
    /// `(context, feature_lists, lengths)` (parsed SequenceExamples); or one record when no
    /// batching was asked for.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut guard = self
            .state
            .lock()
            .map_err(|_| PyValueError::new_err("the iterator was poisoned by an earlier failure"))?;
        let state: &mut IterState = &mut guard;
        loop {
            if let Some(record) = state.pending.pop_front() {
                return Ok(Some(PyBytes::new(py, &record).into_any()));
            }
            if state.done {
                return Ok(None);
            }
            let iter = &mut state.iter;
            let next = py.detach(|| iter.next());
            let output = match next {
                None => {
                    state.done = true;
                    return Ok(None);
                }
                Some(Err(e)) => {
                    state.done = true;
                    return Err(PyTfrecError::from(e).into());
                }
                Some(Ok(output)) => output,
            };
            match output {
                Output::Records(batch) if self.records_one_by_one => {
                    state.pending.extend(batch.records().into_iter().map(<[u8]>::to_vec));
                }
                Output::Records(batch) => {
                    let list = PyList::new(py, batch.records().into_iter().map(|r| PyBytes::new(py, r)))?;
                    return Ok(Some(list.into_any()));
                }
                Output::Tensors(map) => return tensors_to_dict(py, map, self.strings).map(Some),
                Output::Sequences(parsed) => {
                    return sequences_to_py(py, parsed, self.strings).map(|t| Some(t.into_any()))
                }
            }
        }
    }

    /// The pipeline's counters so far (records read, bytes, files done, skipped…).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let guard = self
            .state
            .lock()
            .map_err(|_| PyValueError::new_err("the iterator was poisoned by an earlier failure"))?;
        counters_dict(py, &guard.iter.counters())
    }
}

/// A pipeline's output as Arrow columns, planned once: the specs were read and their columns
/// built when `Dataset.to_arrow` was called, so a bad spec fails there, and the spec text
/// crossed from Python once. Each [`ArrowPlan::batches`] runs the pipeline afresh, since an
/// Arrow C stream is read once and a stream may be asked for again.
#[pyclass(module = "tfrec._tfrec", frozen)]
pub struct ArrowPlan {
    dataset: Dataset,
    columns: Arc<ColumnSpecs>,
    spec: String,
    batch_rows: usize,
}

#[pymethods]
impl ArrowPlan {
    /// The specs the columns follow, as JSON text.
    #[getter]
    fn spec(&self) -> &str {
        &self.spec
    }

    /// The pipeline started: its batches as Arrow record batches, the columns made by the
    /// worker threads.
    fn batches(&self) -> PyResult<ArrowBatches> {
        let d = &self.dataset;
        let columns = Arc::clone(&self.columns);
        let schema = columns.schema();
        let iter = d
            .batches(self.batch_rows)?
            .map_batches(move |b| columns.to_batch(&b.records()).map_err(|error| columns_error(&b, error)))
            .threads(d.threads)
            .prefetch(d.prefetch)
            .deterministic(d.deterministic)
            .iter();
        Ok(ArrowBatches::new(
            BatchSource::Pipeline { iter, schema },
            self.spec.clone(),
        ))
    }
}

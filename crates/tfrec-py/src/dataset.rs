//! `tfrec.Dataset`: the library's input pipeline (`pipeline::Dataset`) from Python. Each
//! builder call returns a new object, as `tf.data` does; iterating starts the pipeline's
//! threads, and every wait for the next batch releases the GIL.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use serde_json::Value;
use tfrec::parse::{specs_from_json_str, ExampleParser, ParsedSequences, SequenceSpecs, TensorMap};
use tfrec::pipeline::{Batched, Dataset as Pipeline, DatasetError, PipelineError, PipelineIter, RecordBatch, ShardBy};

use tfrec::columnar::{BatchError, ColumnSpecs, ColumnarError};

use crate::arrow::{strings, ArrowBatches, BatchSource};
use crate::convert::tensors_to_dict;
use crate::errors::PyTfrecError;
use crate::records::reader_options;
use crate::stats::counters_dict;

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
        stage: &str,
        on_records: impl FnOnce(Pipeline) -> Result<Pipeline, DatasetError>,
        on_batches: impl FnOnce(Batched) -> Result<Batched, DatasetError>,
    ) -> PyResult<Dataset> {
        if !matches!(self.stage, Stage::Raw) {
            // The Python layer runs the stages after a parse; reaching here would reorder.
            return Err(PyValueError::new_err(format!(
                "`{stage}` after `parse` is not a stage of the Rust pipeline"
            )));
        }
        let mut d = self.clone();
        match &self.batched {
            Some(batched) => d.batched = Some(on_batches(batched.clone()).map_err(PyTfrecError::from)?),
            None => d.pipeline = on_records(self.pipeline.clone()).map_err(PyTfrecError::from)?,
        }
        Ok(d)
    }

    /// A file-level stage: refused once records are batched.
    fn file_stage(&self, stage: &str, f: impl FnOnce(Pipeline) -> Result<Pipeline, DatasetError>) -> PyResult<Dataset> {
        if self.batched.is_some() {
            return Err(PyValueError::new_err(format!(
                "`{stage}` chooses or orders files, so it must come before `batch`"
            )));
        }
        self.try_with(stage, f, Ok)
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
        Ok(Dataset {
            pipeline,
            batched: None,
            stage: Stage::Raw,
            threads: 1,
            prefetch: 2,
            deterministic: true,
        })
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
            ),
        }
    }

    #[pyo3(signature = (buffer_size, seed=0, reshuffle_each_iteration=true))]
    fn shuffle(&self, buffer_size: usize, seed: u64, reshuffle_each_iteration: bool) -> PyResult<Dataset> {
        self.try_with(
            "shuffle",
            |p| p.shuffle_with(buffer_size, seed, reshuffle_each_iteration),
            |b| b.shuffle_with(buffer_size, seed, reshuffle_each_iteration),
        )
    }

    /// `count=None` repeats forever.
    #[pyo3(signature = (count=None))]
    fn repeat(&self, count: Option<u64>) -> PyResult<Dataset> {
        match count {
            Some(n) => self.try_with("repeat", |p| Ok(p.repeat(n)), |b| Ok(b.repeat(n))),
            None => self.try_with("repeat", |p| Ok(p.repeat_forever()), |b| Ok(b.repeat_forever())),
        }
    }

    fn skip(&self, count: u64) -> PyResult<Dataset> {
        self.try_with("skip", |p| Ok(p.skip(count)), |b| Ok(b.skip(count)))
    }

    fn take(&self, count: u64) -> PyResult<Dataset> {
        self.try_with("take", |p| Ok(p.take(count)), |b| Ok(b.take(count)))
    }

    #[pyo3(signature = (batch_size, drop_remainder=false))]
    fn batch(&self, batch_size: usize, drop_remainder: bool) -> PyResult<Dataset> {
        if self.batched.is_some() || !matches!(self.stage, Stage::Raw) {
            return Err(PyValueError::new_err(
                "`batch` of batches or of parsed records is not a stage of the Rust pipeline",
            ));
        }
        let batched = self
            .pipeline
            .clone()
            .batch(batch_size, drop_remainder)
            .map_err(PyTfrecError::from)?;
        Ok(self.with(|d| d.batched = Some(batched)))
    }

    /// Parses with specs in the JSON form; `sequence` for SequenceExamples. Checked now, so a
    /// bad spec fails here rather than on the worker threads.
    #[pyo3(signature = (specs, sequence=false))]
    fn parse(&self, specs: &str, sequence: bool) -> PyResult<Dataset> {
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
        Ok(self.with(|d| d.stage = stage))
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

    fn __iter__(&self) -> PyResult<DatasetIterator> {
        let (iter, records_one_by_one) = self.start()?;
        Ok(DatasetIterator {
            state: Mutex::new(IterState {
                iter,
                pending: VecDeque::new(),
                done: false,
            }),
            records_one_by_one,
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
        let iter = pipeline
            .threads(self.threads)
            .prefetch(self.prefetch)
            .deterministic(self.deterministic)
            .iter();
        Ok((iter, unbatched && matches!(self.stage, Stage::Raw)))
    }
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
                Output::Tensors(map) => return tensors_to_dict(py, map).map(Some),
                Output::Sequences(parsed) => {
                    let tuple = (
                        tensors_to_dict(py, parsed.context)?,
                        tensors_to_dict(py, parsed.feature_lists)?,
                        tensors_to_dict(py, parsed.lengths)?,
                    );
                    return Ok(Some(tuple.into_pyobject(py)?.into_any()));
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

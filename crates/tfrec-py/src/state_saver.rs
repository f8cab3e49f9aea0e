//! `tfrec.batch_sequences_with_states`: the library's state saver (`tfrec::state_saver`) from
//! Python. `StateSaver` runs it over a Python iterator of examples or over SequenceExample
//! files; `SaverBatch` is one batch, its fields as NumPy arrays, with `save_state`.
//!
//! Threads and the GIL: waiting for a batch and dropping the saver (which joins its reader
//! threads) release the GIL. Reader threads take the GIL only to pull the next item of a
//! Python iterator and copy its arrays into Rust; the library's input mutex lets one thread
//! pull at a time, so a generator is never entered twice at once. Checking, padding and
//! batching then run without the GIL.

use numpy::{PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyIterator, PyString, PyTuple};
use serde_json::Value;
use tfrec::parse::SparseTensor;
use tfrec::parse::{DenseTensor, SequenceSpecs};
use tfrec::pipeline::Dataset as Pipeline;
use tfrec::state_saver::{
    element_type, is_native, key_text, restore_raw, Batch, DTypeError, KeySource, SaverTensor, SequenceInput,
    SparseInput, StateSaver as Saver, StateSaverError as LibStateSaverError, StateSaverOptions, TensorDType,
};

use crate::convert::{dense_to_py, type_name};
use crate::errors::{obj, state_dtype_error, PyTfrecError};
use crate::records::reader_options;
use crate::string_tensors::StringForm;

/// Why an array could not be taken: not an array the saver holds (its type or dtype named),
/// or one the library refuses (a dtype with no TensorFlow counterpart).
enum NotATensor {
    Found(String),
    Refused(DTypeError),
}

/// A NumPy array as the saver takes it: int64, float32 and `bytes` objects as they are, the
/// other numeric dtypes as their bytes, which the library carries losslessly.
fn to_tensor(value: &Bound<'_, PyAny>) -> Result<SaverTensor, NotATensor> {
    // rust-numpy's array view panics on an empty array whose strides are not zero (NumPy makes
    // those, e.g. `np.array([]).reshape(0, 2)`); an empty array needs only its shape.
    if let Ok(a) = value.cast::<PyArrayDyn<f32>>() {
        if a.len() == 0 {
            return Ok(DenseTensor::from(ndarray::ArrayD::<f32>::zeros(a.shape())).into());
        }
        return Ok(DenseTensor::from(a.to_owned_array()).into());
    }
    if let Ok(a) = value.cast::<PyArrayDyn<i64>>() {
        if a.len() == 0 {
            return Ok(DenseTensor::from(ndarray::ArrayD::<i64>::zeros(a.shape())).into());
        }
        return Ok(DenseTensor::from(a.to_owned_array()).into());
    }
    if let Ok(a) = value.cast::<PyArrayDyn<Py<PyAny>>>() {
        if a.len() == 0 {
            return Ok(DenseTensor::from(ndarray::ArrayD::<Vec<u8>>::default(a.shape())).into());
        }
        let py = value.py();
        let ro = a.readonly();
        let mut bad = None;
        let bytes = ro.as_array().map(|o| match o.bind(py).cast::<PyBytes>() {
            Ok(b) => b.as_bytes().to_vec(),
            Err(_) => {
                bad.get_or_insert_with(|| type_name(o.bind(py)));
                Vec::new()
            }
        });
        return match bad {
            None => Ok(DenseTensor::from(bytes).into()),
            Some(t) => Err(NotATensor::Found(format!("object array holding {t} (expected bytes)"))),
        };
    }
    if let Ok(a) = value.cast::<numpy::PyUntypedArray>() {
        let found = |e: PyErr| NotATensor::Found(e.to_string());
        // Native byte order first: the library reads the elements' bytes as this machine's.
        let dtype = a.dtype();
        let a = if dtype.is_native_byteorder() == Some(false) {
            a.call_method1("astype", (dtype.call_method1("newbyteorder", ("=",)).map_err(found)?,))
                .map_err(found)?
        } else {
            a.clone().into_any()
        };
        let name = a.getattr("dtype").and_then(|d| d.str()).map_err(found)?.to_string();
        let element = element_type(&name).map_err(NotATensor::Refused)?;
        let shape: Vec<usize> = a.getattr("shape").and_then(|s| s.extract()).map_err(found)?;
        let raw = a.call_method0("tobytes").map_err(found)?;
        let raw = raw.cast::<PyBytes>().map_err(|e| NotATensor::Found(e.to_string()))?;
        return SaverTensor::from_raw(element, &shape, raw.as_bytes()).map_err(NotATensor::Refused);
    }
    Err(NotATensor::Found(type_name(value)))
}

/// A carrier from the library as a NumPy array of its element type (a view of the restored
/// bytes, for the types the library carries).
fn from_tensor<'py>(py: Python<'py>, element: Option<TensorDType>, t: DenseTensor) -> PyResult<Bound<'py, PyAny>> {
    let Some(element) = element.filter(|e| !is_native(*e)) else {
        return dense_to_py(py, t, StringForm::Object, "tensor");
    };
    let Some((raw, shape)) = restore_raw(element, &t) else {
        return dense_to_py(py, t, StringForm::Object, "tensor");
    };
    numpy::PyArray1::from_vec(py, raw)
        .into_any()
        .call_method1("view", (element.name(),))?
        .call_method1("reshape", (shape,))
}

/// A value of an example's dict: an array, or a sparse tensor (any object with `indices`,
/// `values` and `dense_shape` that is not an array; the Python layer makes them NumPy arrays).
enum DictValue {
    Dense(SaverTensor),
    Sparse(SparseInput),
}

/// An int64 NumPy array (rust-numpy's view panics on an empty array with non-zero strides,
/// so an empty one is made from its shape).
fn int64_array(value: &Bound<'_, PyAny>) -> Option<ndarray::ArrayD<i64>> {
    let a = value.cast::<PyArrayDyn<i64>>().ok()?;
    if a.len() == 0 {
        return Some(ndarray::ArrayD::<i64>::zeros(a.shape()));
    }
    Some(a.to_owned_array())
}

fn is_sparse(value: &Bound<'_, PyAny>) -> bool {
    value.cast::<numpy::PyUntypedArray>().is_err()
        && ["indices", "values", "dense_shape"]
            .iter()
            .all(|a| value.hasattr(*a).unwrap_or(false))
}

/// A sparse tensor's parts, handed to the library as they are (it checks them).
fn to_sparse(value: &Bound<'_, PyAny>, key: &str, what: &str, name: &str) -> Result<SparseInput, String> {
    let part = |attr: &str| value.getattr(attr).map_err(|e| e.to_string());
    let not_int64 = |attr: &str| format!("example {key:?}: {what} {name:?}: {attr} must be an int64 array");
    let indices = int64_array(&part("indices")?).ok_or_else(|| not_int64("indices"))?;
    let dense_shape = int64_array(&part("dense_shape")?).ok_or_else(|| not_int64("dense_shape"))?;
    let values = tensor_or_message(&part("values")?, key, what, name)?;
    Ok(SparseInput::new(indices, values, dense_shape.iter().copied().collect()))
}

fn tensor_or_message(value: &Bound<'_, PyAny>, key: &str, what: &str, name: &str) -> Result<SaverTensor, String> {
    to_tensor(value).map_err(|e| match e {
        NotATensor::Found(found) => {
            format!("example {key:?}: {what} {name:?} must be int64, float32 or bytes, not {found}")
        }
        // As NumPy's own refusal of a dtype reads.
        NotATensor::Refused(e) => format!("TypeError: {e}"),
    })
}

/// The values of dict `d` (`None`: none); sparse tensors only where `sparse` allows them.
fn dict_tensors(
    d: &Bound<'_, PyAny>,
    key: &str,
    what: &str,
    sparse: bool,
    mut add: impl FnMut(String, DictValue),
) -> Result<(), String> {
    if d.is_none() {
        return Ok(());
    }
    let d = d
        .cast::<PyDict>()
        .map_err(|_| format!("example {key:?}: {what} must be a dict, not {}", type_name(d)))?;
    for (name, value) in d.iter() {
        let name: String = name
            .extract()
            .map_err(|_| format!("example {key:?}: {what} names must be str"))?;
        let value = if sparse && is_sparse(&value) {
            DictValue::Sparse(to_sparse(&value, key, what, &name)?)
        } else {
            DictValue::Dense(tensor_or_message(&value, key, what, &name)?)
        };
        add(name, value);
    }
    Ok(())
}

/// The dense values of dict `d` (initial states: never sparse).
fn dict_dense(
    d: &Bound<'_, PyAny>,
    key: &str,
    what: &str,
    mut add: impl FnMut(String, SaverTensor),
) -> Result<(), String> {
    dict_tensors(d, key, what, false, |n, v| {
        // Never sparse: `sparse` is false.
        if let DictValue::Dense(t) = v {
            add(n, t);
        }
    })
}

/// An example's key: `bytes` as they are (any bytes, not only UTF-8), `str` as its UTF-8.
fn example_key(key: &Bound<'_, PyAny>) -> Result<Vec<u8>, String> {
    if let Ok(b) = key.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(s.to_cow().map_err(|e| e.to_string())?.as_bytes().to_vec());
    }
    Err(format!(
        "TypeError: input_key must be str or bytes, not {}",
        type_name(key)
    ))
}

/// One item of the Python layer's normalised stream: `(key, sequences, context, length,
/// initial_states)`, the arrays already int64, float32 or `bytes` objects.
fn to_input(item: &Bound<'_, PyAny>) -> Result<SequenceInput, String> {
    let t = item
        .cast::<PyTuple>()
        .map_err(|_| format!("internal: expected a 5-tuple, got {}", type_name(item)))?;
    if t.len() != 5 {
        return Err("internal: expected a 5-tuple".into());
    }
    let get = |i: usize| t.get_item(i).map_err(|e| e.to_string());
    let key = example_key(&get(0)?)?;
    let mut input = SequenceInput::new(key);
    let key = key_text(&input.key);
    dict_tensors(&get(1)?, &key, "sequence", true, |n, v| match v {
        DictValue::Dense(t) => {
            input.sequences.insert(n, t);
        }
        DictValue::Sparse(t) => {
            input.sparse_sequences.insert(n, t);
        }
    })?;
    dict_tensors(&get(2)?, &key, "context", true, |n, v| match v {
        DictValue::Dense(t) => {
            input.context.insert(n, t);
        }
        DictValue::Sparse(t) => {
            input.sparse_context.insert(n, t);
        }
    })?;
    let length = get(3)?;
    if !length.is_none() {
        let n: usize = length
            .extract()
            .map_err(|_| format!("example {key:?}: input_length must be a non-negative int"))?;
        input.length = Some(n);
    }
    dict_dense(&get(4)?, &key, "initial state", |n, v| {
        input.initial_states.insert(n, v);
    })?;
    Ok(input)
}

/// A Python iterator read by the saver's reader threads, which take the GIL for each item.
struct PyInputs {
    iter: Py<PyIterator>,
}

impl Iterator for PyInputs {
    type Item = Result<SequenceInput, String>;

    fn next(&mut self) -> Option<Self::Item> {
        Python::attach(|py| {
            let mut it = self.iter.bind(py).clone();
            match it.next()? {
                Err(e) => Some(Err(e.to_string())),
                Ok(item) => Some(to_input(&item)),
            }
        })
    }
}

/// A running state saver; iterate it for `SaverBatch`es.
///
/// Frozen (no `&mut self` methods): a waiting `__next__` must not hold a PyO3 borrow, or
/// `close` and `in_flight` from another thread fail with "Already borrowed". The library's
/// saver is `Sync` and does its own locking.
#[pyclass(module = "tfrec._tfrec", frozen)]
pub struct StateSaver {
    saver: Option<Saver>,
}

#[allow(clippy::too_many_arguments)]
fn options(
    num_unroll: usize,
    batch_size: usize,
    initial_states: &Bound<'_, PyAny>,
    num_threads: usize,
    capacity: Option<usize>,
    allow_small_batch: bool,
    pad: bool,
    make_keys_unique_seed: Option<u64>,
) -> PyResult<StateSaverOptions> {
    let mut o = StateSaverOptions::new(batch_size, num_unroll)
        .num_threads(num_threads)
        .capacity(capacity.unwrap_or(usize::MAX))
        .allow_small_batch(allow_small_batch)
        .pad(pad);
    if let Some(seed) = make_keys_unique_seed {
        o = o.make_keys_unique(seed);
    }
    let mut states = Vec::new();
    dict_dense(initial_states, "", "initial state", |n, v| states.push((n, v))).map_err(|m| {
        let m = m.trim_start_matches("example \"\": ");
        PyTypeError::new_err(m.trim_start_matches("TypeError: ").to_owned())
    })?;
    for (n, v) in states {
        o = o.initial_state(n, v);
    }
    Ok(o)
}

#[pymethods]
impl StateSaver {
    /// A saver over a Python iterator of `(key, sequences, context, length, initial_states)`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (inputs, num_unroll, batch_size, initial_states, num_threads, capacity,
                        allow_small_batch, pad, make_keys_unique_seed))]
    fn from_iterator(
        inputs: &Bound<'_, PyAny>,
        num_unroll: usize,
        batch_size: usize,
        initial_states: &Bound<'_, PyAny>,
        num_threads: usize,
        capacity: Option<usize>,
        allow_small_batch: bool,
        pad: bool,
        make_keys_unique_seed: Option<u64>,
    ) -> PyResult<StateSaver> {
        let o = options(
            num_unroll,
            batch_size,
            initial_states,
            num_threads,
            capacity,
            allow_small_batch,
            pad,
            make_keys_unique_seed,
        )?;
        let iter = PyInputs {
            iter: inputs.try_iter()?.unbind(),
        };
        let saver = o.build_fallible(iter).map_err(PyTfrecError::from)?;
        Ok(StateSaver { saver: Some(saver) })
    }

    /// A saver over the SequenceExample records of `paths`, parsed with `specs` (the JSON
    /// form of `{"context_features": …, "sequence_features": …}`); the key is the context
    /// feature `key_feature`, or the record's position when it is `None`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (paths, compression_type, specs, key_feature, num_unroll, batch_size, initial_states,
                        num_threads, capacity, allow_small_batch, pad, make_keys_unique_seed,
                        length_feature=None))]
    fn from_files(
        paths: Vec<String>,
        compression_type: Option<&str>,
        specs: &str,
        key_feature: Option<String>,
        num_unroll: usize,
        batch_size: usize,
        initial_states: &Bound<'_, PyAny>,
        num_threads: usize,
        capacity: Option<usize>,
        allow_small_batch: bool,
        pad: bool,
        make_keys_unique_seed: Option<u64>,
        length_feature: Option<String>,
    ) -> PyResult<StateSaver> {
        let mut o = options(
            num_unroll,
            batch_size,
            initial_states,
            num_threads,
            capacity,
            allow_small_batch,
            pad,
            make_keys_unique_seed,
        )?;
        if let Some(feature) = length_feature {
            o = o.length_feature(feature);
        }
        serde_json::from_str::<Value>(specs).map_err(|e| PyValueError::new_err(format!("bad spec JSON: {e}")))?;
        let specs = SequenceSpecs::from_json_str(specs).map_err(PyTfrecError::from)?;
        let reader = reader_options(compression_type, "raise", "raise", true, None)?;
        let dataset = Pipeline::from_inputs(&paths)
            .map_err(PyTfrecError::from)?
            .reader_options(reader);
        let key = key_feature.map_or(KeySource::Index, KeySource::Feature);
        let saver = o.build_from_dataset(dataset, &specs, key).map_err(PyTfrecError::from)?;
        Ok(StateSaver { saver: Some(saver) })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next batch (waiting with the GIL released), or the end of the input.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<SaverBatch>> {
        let Some(saver) = self.saver.as_ref() else {
            return Ok(None);
        };
        match py.detach(|| saver.next_batch()) {
            Ok(Some(batch)) => SaverBatch::new(py, batch).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(PyTfrecError::from(e).into()),
        }
    }

    /// Examples in flight now.
    fn in_flight(&self) -> usize {
        self.saver.as_ref().map_or(0, Saver::in_flight)
    }

    /// The most examples that were in flight at once (at most `capacity`).
    fn max_in_flight(&self) -> usize {
        self.saver.as_ref().map_or(0, Saver::max_in_flight)
    }

    /// Stops the input, from any thread. With `cancel_pending`, iteration (also a `__next__`
    /// waiting now) ends at once; without, the sequences in flight are handed out first.
    #[pyo3(signature = (cancel_pending=false))]
    fn close(&self, cancel_pending: bool) {
        if let Some(saver) = self.saver.as_ref() {
            saver.close(cancel_pending);
        }
    }
}

impl Drop for StateSaver {
    fn drop(&mut self) {
        // Joining the readers with the GIL held would deadlock with a reader waiting for it
        // to pull the next Python item.
        if let Some(saver) = self.saver.take() {
            Python::attach(|py| py.detach(move || drop(saver)));
        }
    }
}

/// A batched sparse tensor as a `tfrec.io.SparseTensor` (`class`), its values of `element`.
fn sparse_to_py<'py>(
    class: &Bound<'py, PyAny>,
    element: Option<TensorDType>,
    t: SparseTensor,
) -> PyResult<Bound<'py, PyAny>> {
    use numpy::IntoPyArray;
    let py = class.py();
    let values = from_tensor(py, element, t.values)?;
    let dense_shape = numpy::PyArray1::from_vec(py, t.dense_shape);
    class.call1((t.indices.into_pyarray(py), values, dense_shape))
}

/// One batch: the per-entry fields as NumPy arrays (made once), the states on request.
#[pyclass(module = "tfrec._tfrec", frozen)]
pub struct SaverBatch {
    batch: Batch,
    fields: Py<PyDict>,
}

fn keys(py: Python<'_>, v: &[Vec<u8>]) -> PyResult<Py<PyAny>> {
    let a = ndarray::Array1::from_iter(v.iter().cloned()).into_dyn();
    Ok(dense_to_py(py, DenseTensor::from(a), StringForm::Object, "keys")?.unbind())
}

impl SaverBatch {
    fn new(py: Python<'_>, mut batch: Batch) -> PyResult<SaverBatch> {
        use numpy::IntoPyArray;
        let fields = PyDict::new(py);
        fields.set_item("key", keys(py, &batch.key)?)?;
        fields.set_item("next_key", keys(py, &batch.next_key)?)?;
        fields.set_item("sequence", batch.sequence.clone().into_pyarray(py))?;
        fields.set_item("sequence_count", batch.sequence_count.clone().into_pyarray(py))?;
        fields.set_item("length", batch.length.clone().into_pyarray(py))?;
        fields.set_item("total_length", batch.total_length.clone().into_pyarray(py))?;
        fields.set_item("insertion_index", batch.insertion_index.clone().into_pyarray(py))?;
        let sequences = PyDict::new(py);
        for (name, t) in std::mem::take(&mut batch.sequences) {
            let element = batch.sequence_type(&name);
            sequences.set_item(&name, from_tensor(py, element, t)?)?;
        }
        let sparse_class = py.import("tfrec.io")?.getattr("SparseTensor")?;
        for (name, t) in std::mem::take(&mut batch.sparse_sequences) {
            let element = batch.sequence_type(&name);
            sequences.set_item(&name, sparse_to_py(&sparse_class, element, t)?)?;
        }
        fields.set_item("sequences", sequences)?;
        let context = PyDict::new(py);
        for (name, t) in std::mem::take(&mut batch.context) {
            let element = batch.context_type(&name);
            context.set_item(&name, from_tensor(py, element, t)?)?;
        }
        for (name, t) in std::mem::take(&mut batch.sparse_context) {
            let element = batch.context_type(&name);
            context.set_item(&name, sparse_to_py(&sparse_class, element, t)?)?;
        }
        fields.set_item("context", context)?;
        Ok(SaverBatch {
            batch,
            fields: fields.unbind(),
        })
    }
}

#[pymethods]
impl SaverBatch {
    /// `key`, `next_key` (object arrays of bytes), `sequence`, `sequence_count`, `length`,
    /// `total_length` (int32), `insertion_index` (int64), `sequences`, `context` (dicts).
    #[getter]
    fn fields(&self, py: Python<'_>) -> Py<PyDict> {
        self.fields.clone_ref(py)
    }

    #[getter]
    fn batch_size(&self) -> usize {
        self.batch.batch_size()
    }

    /// The state names.
    fn state_names(&self) -> Vec<String> {
        self.batch.states().keys().cloned().collect()
    }

    /// State `name` as the batch's segments start from it, `[batch, ...]` (a fresh array).
    fn state<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let t = self.batch.state(name).map_err(PyTfrecError::from)?;
        from_tensor(py, self.batch.state_type(name), t.clone())
    }

    /// The NumPy name of state `name`'s dtype (`"string"` for bytes), `None` for no such state.
    fn state_dtype(&self, name: &str) -> Option<&'static str> {
        self.batch.state_type(name).map(TensorDType::name)
    }

    /// Saves state `name` for each entry's next segment.
    fn save_state(&self, py: Python<'_>, name: &str, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let tensor = match to_tensor(values) {
            Ok(t) => t,
            Err(NotATensor::Refused(e)) => return Err(PyTfrecError::from(LibStateSaverError::from(e)).into()),
            Err(NotATensor::Found(found)) => {
                // Not an array of a dtype: report it as the library reports a wrong dtype.
                let expected = self.batch.state_type(name);
                let expected = expected
                    .ok_or_else(|| PyTfrecError::from(LibStateSaverError::UnknownState { state: name.to_owned() }))?;
                let keys: Vec<String> = self.batch.key.iter().map(|k| key_text(k)).collect();
                let e = format!("state {name:?} has dtype {expected}, but saw {found} (keys: {keys:?})");
                return Err(state_dtype_error(
                    py,
                    e,
                    &[
                        ("kind", obj(py, "state_dtype")),
                        ("state", obj(py, name)),
                        ("keys", obj(py, keys)),
                    ],
                ));
            }
        };
        py.detach(|| self.batch.save_state(name, tensor))
            .map_err(|e| PyTfrecError::from(e).into())
    }
}

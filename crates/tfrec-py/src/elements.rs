//! Python's functions as the library's callback stages (`pipeline::ElementStage`): `map`,
//! `filter`, a `batch` of Python values, a `parse` after a `map`, and a data set whose elements
//! come from Python (in-memory slices, a generator, file objects). The iterating thread
//! ([`ElementsIterator`]) keeps the GIL for the stages over elements and the callbacks, and
//! lets go of it for every wait for the pipeline below ([`without_the_gil`]), whose threads
//! never take it. A Python exception raised in a callback reaches the caller as itself.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyIterator, PyList, PyTuple};
use tfrec::pipeline::{CallbackError, ElementIter, ElementIterator, ElementStage, PipelineError, WaitFn};

use crate::errors::PyTfrecError;

/// An element: any Python value.
pub(crate) type Element = Py<PyAny>;

fn boxed(e: PyErr) -> CallbackError {
    Box::new(e)
}

/// tf.data's calling convention: a tuple element is the function's arguments.
fn call<'py>(f: &Bound<'py, PyAny>, element: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    match element.cast::<PyTuple>() {
        Ok(args) => f.call1(args.clone()),
        Err(_) => f.call1((element,)),
    }
}

/// `map(f)`, with tf.data's calling convention.
pub(crate) fn map(f: Py<PyAny>) -> ElementStage<Element> {
    ElementStage::map(move |x: Element| {
        Python::attach(|py| call(f.bind(py), x.bind(py)).map(Bound::unbind)).map_err(boxed)
    })
}

/// `f` of each element, whatever it is (a `parse` after a map, `f` being Python's parse).
pub(crate) fn apply(f: Py<PyAny>) -> ElementStage<Element> {
    ElementStage::map(move |x: Element| Python::attach(|py| f.call1(py, (x,))).map_err(boxed))
}

/// `filter(predicate)`: the elements for which it is true (Python's truth).
pub(crate) fn filter(predicate: Py<PyAny>) -> ElementStage<Element> {
    ElementStage::filter(move |x: &Element| {
        Python::attach(|py| call(predicate.bind(py), x.bind(py))?.is_truthy()).map_err(boxed)
    })
}

/// `batch` of Python values: `stack` makes one element of a list of them.
pub(crate) fn batch(size: usize, drop_remainder: bool, stack: Py<PyAny>) -> PyResult<ElementStage<Element>> {
    let stage = ElementStage::batch(size, drop_remainder, move |items: Vec<Element>| {
        Python::attach(|py| {
            let list = PyList::new(py, items)?;
            stack.call1(py, (list,))
        })
        .map_err(boxed)
    });
    Ok(stage.map_err(PyTfrecError::from)?)
}

/// The elements `open()` gives: an iterable, called anew for each iteration.
pub(crate) fn source(
    open: Arc<Py<PyAny>>,
) -> impl Fn() -> Result<ElementIterator<Element>, CallbackError> + Send + Sync {
    move || {
        let iterator = Python::attach(|py| open.call0(py)?.bind(py).try_iter().map(Bound::unbind)).map_err(boxed)?;
        Ok(Box::new(PythonIterator(iterator)) as ElementIterator<Element>)
    }
}

/// A Python iterator as a Rust one; its exceptions are the items' errors.
struct PythonIterator(Py<PyIterator>);

impl Iterator for PythonIterator {
    type Item = Result<Element, CallbackError>;

    fn next(&mut self) -> Option<Self::Item> {
        Python::attach(|py| {
            let next = self.0.bind(py).clone().next()?;
            Some(next.map(Bound::unbind).map_err(boxed))
        })
    }
}

/// The pipeline's waits run with the GIL let go (the iterating thread holds it otherwise).
pub(crate) fn without_the_gil() -> WaitFn {
    Arc::new(|wait: &mut (dyn FnMut() + Send)| Python::attach(|py| py.detach(wait)))
}

/// A pipeline error as the Python exception to raise: a callback's own exception unchanged.
pub(crate) fn to_py_err(e: PipelineError) -> PyErr {
    match e {
        PipelineError::Callback { error, .. } if error.is::<PyErr>() => match error.downcast::<PyErr>() {
            Ok(e) => *e,
            Err(other) => PyValueError::new_err(other.to_string()),
        },
        other => PyTfrecError::from(other).into(),
    }
}

/// The running elements of a data set with Python stages.
#[pyclass(module = "tfrec._tfrec")]
pub struct ElementsIterator {
    iter: Mutex<ElementIter<Element>>,
}

impl ElementsIterator {
    pub(crate) fn new(iter: ElementIter<Element>) -> Self {
        ElementsIterator { iter: Mutex::new(iter) }
    }
}

#[pymethods]
impl ElementsIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next element. The GIL is held for the stages over elements and let go while the
    /// pipeline below is waited for.
    fn __next__(&self) -> PyResult<Option<Element>> {
        // Never waits for the lock with the GIL held: another thread inside `next` may be
        // waiting for the GIL to come back from a wait. Iterating one iterator from two
        // threads at once is refused, as a generator refuses it.
        let mut iter = self
            .iter
            .try_lock()
            .map_err(|_| PyValueError::new_err("the data set's iterator is already running"))?;
        match iter.next() {
            None => Ok(None),
            Some(Ok(element)) => Ok(Some(element)),
            Some(Err(e)) => Err(to_py_err(e)),
        }
    }
}

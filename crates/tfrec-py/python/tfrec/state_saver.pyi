"""``batch_sequences_with_states``: TensorFlow 1's sequence state saver
(``tf.contrib.training.batch_sequences_with_states``) for truncated back-propagation through
time, built on the Rust library's ``state_saver``.

Each example (a key, time-major sequences, context, a length) is cut into segments of
``num_unroll`` steps; batches take segments from many examples, and each example's states are
handed from one segment to the next through ``save_state``. Misuse raises
:class:`StateSaverError` naming the keys and states (TensorFlow would hang or answer wrongly).

The input comes in one of three forms; TensorFlow's argument names keep their meaning, each
now giving the stream of what TF took for one example:

1. Parallel iterables: ``input_key`` (keys, ``str`` or any ``bytes``), ``input_sequences``
   (dicts name -> array ``[steps, ...]``), ``input_context`` (dicts name -> array, or ``None``)
   and ``input_length`` (ints, or ``None`` for the sequences' length), read in step.
2. One iterable of per-example dicts, passed as ``input_sequences`` with ``input_key``,
   ``input_context`` and ``input_length`` left ``None``. Each dict holds what TF took for one
   example under TF's names: ``{"input_key": "seq7", "input_sequences": {"x": x},
   "input_context": {"label": 1}, "input_length": 5}`` (``input_context``, ``input_length``
   and a per-example ``initial_states`` overriding the defaults are optional).
3. SequenceExample files: ``input_sequences=SequenceExampleFiles(paths, sequence_features,
   context_features)``; FixedLenSequenceFeature lists become the sequences, FixedLen context
   features the context, and ``input_key`` names a scalar string/int64 context feature for the
   key (``None``: the record's position, ``"0"``, ``"1"``, …). Records are read and parsed on
   the Rust reader threads.

NumPy arrays keep their dtype: every numeric dtype (bool, int8…int64, uint8…uint64, float16,
float32, float64, complex64, complex128) and bytes (``str`` is encoded as UTF-8) go in and come
out of batches and states as given, never cast; each name keeps the first example's dtype.
Python numbers and lists become int64 or float32. The Rust library checks and carries the
dtypes (``tfrec::state_saver::SaverTensor``); this layer only hands it the arrays' bytes.

Sparse inputs: a :class:`tfrec.io.SparseTensor` (or any object with ``indices``, ``values``
and ``dense_shape``) may stand for a sequence (``[steps, d...]``) or a context value, as TF
1.15 allows. They are split as TF splits them: a sequence into one sparse tensor per step
(``pad`` extends its ``dense_shape[0]`` to the padded length; indices must be in row-major
order and in bounds), the context repeated on every segment. In a batch a sparse sequence is a
``SparseTensor`` with indices ``[entry, step, ...]`` and ``dense_shape`` ``[batch_size,
num_unroll, max...]``, a sparse context one with ``[entry, ...]`` and ``[batch_size,
max...]``, where ``max`` is the largest ``dense_shape`` of the batch's entries and
``batch_size`` the option's, also in a small last batch (both as TF has them). The Rust
library checks, splits and batches them (``tfrec::state_saver::SparseInput``); this layer only
hands it the arrays.

Threads: ``num_threads`` Rust reader threads check and pad examples ahead of the consumer. For
a Python iterable they take the GIL only to pull the next item and copy its arrays, one thread
at a time, so a generator is never entered twice at once; waiting for a batch releases the GIL.

>>> batches = tfrec.batch_sequences_with_states(
...     input_key=None, input_sequences=examples, input_context=None, input_length=None,
...     initial_states={"h": np.zeros(16, np.float32)}, num_unroll=20, batch_size=32)
>>> for batch in batches:
...     h = batch.state("h")
...     for t in range(20):
...         h = step(h, batch.sequences["x"][:, t], valid=t < batch.length)
...     batch.save_state("h", h)
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypedDict, overload

import numpy as np
import numpy.typing as npt
from typing_extensions import NotRequired, Self, TypeAlias

from . import _tfrec
from ._records import TFRecordOptions, _Paths
from .errors import TfrecError
from .io import SparseTensor, _Features

__all__ = [
    "NextQueuedSequenceBatch",
    "OutOfRangeError",
    "SequenceBatches",
    "SequenceExampleFiles",
    "SequenceQueueingStateSaver",
    "StateSaverError",
    "batch_sequences_with_states",
    "state_saving_rnn",
]

# An example's key: ``str`` or any ``bytes``.
_Key: TypeAlias = str | bytes | np.bytes_
# A value of a sequence, the context or a state: an array (any numeric dtype or bytes), a
# Python number, list or string, or a sparse tensor (sequences and context).
_Value: TypeAlias = npt.ArrayLike | SparseTensor
_Tensors: TypeAlias = Mapping[str, _Value]
_States: TypeAlias = Mapping[str, npt.ArrayLike]

class _ExampleDict(TypedDict):
    """One example of the per-example-dict input form, under TensorFlow's argument names."""

    input_key: _Key
    input_sequences: _Tensors
    input_context: NotRequired[_Tensors | None]
    input_length: NotRequired[int | None]
    initial_states: NotRequired[_States | None]

class StateSaverError(TfrecError):
    """A misuse of the state saver or an example it cannot take.

    Attributes (those that apply): ``kind`` (``"unsaved_states"``, ``"saved_twice"``,
    ``"state_shape"``, ``"state_dtype"``, ``"unknown_state"``, ``"key_in_flight"``,
    ``"unequal_lengths"``, ``"not_multiple"``, ``"empty_sequence"``, ``"input"``, …), ``key``
    (the example's), ``name`` (a tensor's), ``state``, ``states``, ``keys`` (the batch's
    segment keys) and ``example_index`` (for an error raised by the input iterable).
    """
    kind: str | None
    key: str | bytes | None
    name: str | None
    state: str | None
    states: list[str] | None
    keys: list[str] | None
    example_index: int | None

class OutOfRangeError(StateSaverError):
    """The end of the input: with ``allow_small_batch=False``, fewer segments left than
    ``batch_size``; from :meth:`SequenceQueueingStateSaver.next_batch`, no segment left."""

class SequenceExampleFiles:
    """SequenceExample records in TFRecord files as state saver input.

    ``sequence_features`` maps names to ``tfrec.io.FixedLenSequenceFeature`` and
    ``context_features`` to ``tfrec.io.FixedLenFeature``.
    """
    paths: list[str]
    compression_type: str | None
    specs: str
    def __init__(
        self,
        filenames: _Paths,
        sequence_features: _Features,
        context_features: _Features | None = None,
        compression_type: str | TFRecordOptions | None = None,
    ) -> None: ...

class NextQueuedSequenceBatch:
    """One batch of segments (TensorFlow's ``NextQueuedSequenceBatch``), fields as NumPy arrays.

    ``key`` / ``next_key`` (object arrays of bytes: ``b"00001_of_00003:seq7"``, and
    ``b"STOP:…"`` on a last segment), ``sequence``, ``sequence_count``, ``length`` (valid steps
    of each segment), ``total_length`` (int32), ``insertion_index`` (int64),
    ``sequences[name]`` ``[batch, num_unroll, ...]``, ``context[name]`` ``[batch, ...]``,
    ``state(name)`` and ``batch_size``. A sparse input comes out as a
    :class:`tfrec.io.SparseTensor` (see the module's doc for its indices and dense shape).
    Before taking the next batch, call ``save_state`` for every state.
    """
    key: npt.NDArray[np.object_]
    next_key: npt.NDArray[np.object_]
    sequence: npt.NDArray[np.int32]
    sequence_count: npt.NDArray[np.int32]
    length: npt.NDArray[np.int32]
    total_length: npt.NDArray[np.int32]
    insertion_index: npt.NDArray[np.int64]
    sequences: dict[str, npt.NDArray[Any] | SparseTensor]
    context: dict[str, npt.NDArray[Any] | SparseTensor]
    def __init__(self, inner: _tfrec.SaverBatch) -> None: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def state_names(self) -> list[str]: ...
    def state(self, name: str) -> npt.NDArray[Any]:
        """The states the segments start from, ``[batch, ...]``: the initial state on an
        example's first segment, afterwards what was saved for it."""
    def save_state(self, name: str, values: npt.ArrayLike) -> None:
        """Saves state ``name`` (shaped and typed like ``state(name)``) for each entry's next
        segment. Each state is saved exactly once per batch."""

class SequenceBatches:
    """The running state saver: iterate it for :class:`NextQueuedSequenceBatch` es. ``close()``
    (or leaving a ``with`` block) stops its reader threads."""
    def __init__(self, inner: _tfrec.StateSaver) -> None: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> NextQueuedSequenceBatch: ...
    def next_batch(self) -> NextQueuedSequenceBatch | None:
        """The next batch, or ``None`` at the end of the input."""
    @property
    def in_flight(self) -> int:
        """Examples in flight now."""
    @property
    def max_in_flight(self) -> int:
        """The most examples in flight at once so far (at most ``capacity``)."""
    def close(self, cancel_pending: bool = False) -> None:
        """Stops the input; safe from any thread, also while another waits for a batch.

        With ``cancel_pending=False`` (TensorFlow's default) no new example enters, but the
        sequences in flight still hand out their remaining segments, then iteration ends. With
        ``True`` iteration ends at once, also for a ``next`` waiting now."""
    def __enter__(self) -> Self: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

# Parallel iterables: keys, sequences, contexts (or None), lengths (or None).
@overload
def batch_sequences_with_states(
    input_key: Iterable[_Key],
    input_sequences: Iterable[_Tensors],
    input_context: Iterable[_Tensors | None] | None,
    input_length: Iterable[int | None] | None,
    initial_states: _States,
    num_unroll: int,
    batch_size: int,
    num_threads: int = 3,
    capacity: int | None = 1000,
    allow_small_batch: bool = True,
    pad: bool = True,
    make_keys_unique: bool = False,
    make_keys_unique_seed: int | None = None,
    name: str | None = None,
) -> SequenceBatches:
    """Batches segments of ``num_unroll`` steps of many sequences, handing each sequence's
    states from segment to segment. The input forms are in the module's doc.

    ``initial_states`` maps state names to their initial values (fixed shapes, any numeric
    dtype or bytes; not empty). ``capacity`` (>= ``batch_size``, or ``None`` for unbounded)
    bounds the examples in flight; memory does not grow with it (at most ``batch_size + 64``
    examples are in flight). ``allow_small_batch`` hands out a last smaller batch; ``pad``
    pads sequences to a multiple of ``num_unroll`` with zeros / ``b""`` (with ``pad=False``
    their length must be a multiple); ``make_keys_unique`` appends a random number (from
    ``make_keys_unique_seed``) to every key. ``name`` is accepted for TensorFlow
    compatibility. Batches depend only on the input and the options, never on thread timing.
    With :class:`SequenceExampleFiles`, ``input_length`` may name a scalar int64 context
    feature holding each example's length.

    Returns a :class:`SequenceBatches` iterator.
    """
# One iterable of per-example dicts under TensorFlow's argument names.
@overload
def batch_sequences_with_states(
    input_key: None,
    input_sequences: Iterable[_ExampleDict],
    input_context: None,
    input_length: None,
    initial_states: _States,
    num_unroll: int,
    batch_size: int,
    num_threads: int = 3,
    capacity: int | None = 1000,
    allow_small_batch: bool = True,
    pad: bool = True,
    make_keys_unique: bool = False,
    make_keys_unique_seed: int | None = None,
    name: str | None = None,
) -> SequenceBatches:
    """Batches segments of ``num_unroll`` steps of many sequences, handing each sequence's
    states from segment to segment. The input forms are in the module's doc.

    ``initial_states`` maps state names to their initial values (fixed shapes, any numeric
    dtype or bytes; not empty). ``capacity`` (>= ``batch_size``, or ``None`` for unbounded)
    bounds the examples in flight; memory does not grow with it (at most ``batch_size + 64``
    examples are in flight). ``allow_small_batch`` hands out a last smaller batch; ``pad``
    pads sequences to a multiple of ``num_unroll`` with zeros / ``b""`` (with ``pad=False``
    their length must be a multiple); ``make_keys_unique`` appends a random number (from
    ``make_keys_unique_seed``) to every key. ``name`` is accepted for TensorFlow
    compatibility. Batches depend only on the input and the options, never on thread timing.
    With :class:`SequenceExampleFiles`, ``input_length`` may name a scalar int64 context
    feature holding each example's length.

    Returns a :class:`SequenceBatches` iterator.
    """
# SequenceExample files: the key and the length name context features (or are None).
@overload
def batch_sequences_with_states(
    input_key: str | None,
    input_sequences: SequenceExampleFiles,
    input_context: None,
    input_length: str | None,
    initial_states: _States,
    num_unroll: int,
    batch_size: int,
    num_threads: int = 3,
    capacity: int | None = 1000,
    allow_small_batch: bool = True,
    pad: bool = True,
    make_keys_unique: bool = False,
    make_keys_unique_seed: int | None = None,
    name: str | None = None,
) -> SequenceBatches:
    """Batches segments of ``num_unroll`` steps of many sequences, handing each sequence's
    states from segment to segment. The input forms are in the module's doc.

    ``initial_states`` maps state names to their initial values (fixed shapes, any numeric
    dtype or bytes; not empty). ``capacity`` (>= ``batch_size``, or ``None`` for unbounded)
    bounds the examples in flight; memory does not grow with it (at most ``batch_size + 64``
    examples are in flight). ``allow_small_batch`` hands out a last smaller batch; ``pad``
    pads sequences to a multiple of ``num_unroll`` with zeros / ``b""`` (with ``pad=False``
    their length must be a multiple); ``make_keys_unique`` appends a random number (from
    ``make_keys_unique_seed``) to every key. ``name`` is accepted for TensorFlow
    compatibility. Batches depend only on the input and the options, never on thread timing.
    With :class:`SequenceExampleFiles`, ``input_length`` may name a scalar int64 context
    feature holding each example's length.

    Returns a :class:`SequenceBatches` iterator.
    """

class SequenceQueueingStateSaver:
    """TensorFlow's ``SequenceQueueingStateSaver``, fed push-style: :meth:`insert` (or
    :meth:`put`) one example at a time, from any thread, and take batches with
    :meth:`next_batch` (or by iterating). :meth:`close` ends the input.

    As in TensorFlow, ``allow_small_batch`` defaults to False and there is no padding: every
    sequence's length must be a non-zero multiple of ``num_unroll``. ``capacity=None`` is
    unbounded. :meth:`next_batch` raises :class:`OutOfRangeError` once the saver is closed and
    drained (iteration ends with ``StopIteration``). :func:`batch_sequences_with_states` is the
    same saver fed from an iterable, with padding.

    >>> sqss = SequenceQueueingStateSaver(batch_size=2, num_unroll=5, initial_states={"h": h0})
    >>> sqss.insert("seq0", {"x": x0})   # producer thread(s)
    >>> sqss.close()
    >>> batch = sqss.next_batch()         # consumer
    """
    batch_size: int
    num_unroll: int
    def __init__(
        self,
        batch_size: int,
        num_unroll: int,
        initial_states: _States,
        capacity: int | None = None,
        allow_small_batch: bool = False,
        pad: bool = False,
        num_threads: int = 1,
        name: str | None = None,
    ) -> None: ...
    def __del__(self) -> None: ...
    def insert(
        self,
        input_key: _Key,
        input_sequences: _Tensors,
        input_context: _Tensors | None = None,
        input_length: int | None = None,
        initial_states: _States | None = None,
    ) -> None:
        """Adds one example (TensorFlow's ``prefetch_op`` for one input). Its arrays are checked
        as the saver reads it; an error then stops the saver and is raised by ``next_batch``."""
    def put(
        self,
        input_key: _Key,
        input_sequences: _Tensors,
        input_context: _Tensors | None = None,
        input_length: int | None = None,
        initial_states: _States | None = None,
    ) -> None: ...
    def close(self, cancel_pending_enqueues: bool = False) -> None:
        """Ends the input, from any thread. Without ``cancel_pending_enqueues`` every example
        inserted so far still goes through; with it, the saver stops at once and a waiting
        :meth:`next_batch` raises :class:`OutOfRangeError`."""
    def next_batch(self) -> NextQueuedSequenceBatch:
        """The next :class:`NextQueuedSequenceBatch`; :class:`OutOfRangeError` at the end."""
    def __iter__(self) -> SequenceBatches: ...
    @property
    def in_flight(self) -> int: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

# ``step(x_t, state) -> (output_t, new_state)``: ``x_t`` is an array (or a dict of them when
# ``inputs`` is a dict); ``state`` one array for one state name, a tuple of them for several.
@overload
def state_saving_rnn(
    step: Callable[[Any, npt.NDArray[Any]], tuple[npt.ArrayLike, npt.ArrayLike]],
    batch: NextQueuedSequenceBatch,
    state_name: str,
    inputs: npt.NDArray[Any] | Mapping[str, npt.NDArray[Any]] | None = None,
    sequence_length: npt.ArrayLike | None = None,
) -> tuple[list[npt.NDArray[Any]], npt.NDArray[Any]]:
    """TensorFlow's ``static_state_saving_rnn`` for NumPy: runs ``step`` over the ``num_unroll``
    steps of ``batch`` starting from its saved states, and saves the final states.

    ``step(x_t, state) -> (output_t, new_state)`` gets the inputs of step ``t`` (``inputs[:, t]``,
    or a dict of them when ``inputs`` is a dict; default ``batch.sequences``) and the state:
    one array when ``state_name`` is a string, else a tuple of arrays in the order of the names.
    As in TensorFlow, where ``t >= sequence_length`` (default ``batch.length``) the output is
    zero and the state is carried through unchanged. Returns ``(outputs, final_state)`` with
    ``outputs`` a list of ``num_unroll`` arrays ``[batch, ...]``; every state is saved."""
@overload
def state_saving_rnn(
    step: Callable[[Any, tuple[npt.NDArray[Any], ...]], tuple[npt.ArrayLike, Sequence[npt.ArrayLike]]],
    batch: NextQueuedSequenceBatch,
    state_name: Sequence[str],
    inputs: npt.NDArray[Any] | Mapping[str, npt.NDArray[Any]] | None = None,
    sequence_length: npt.ArrayLike | None = None,
) -> tuple[list[npt.NDArray[Any]], tuple[npt.NDArray[Any], ...]]:
    """TensorFlow's ``static_state_saving_rnn`` for NumPy: runs ``step`` over the ``num_unroll``
    steps of ``batch`` starting from its saved states, and saves the final states.

    ``step(x_t, state) -> (output_t, new_state)`` gets the inputs of step ``t`` (``inputs[:, t]``,
    or a dict of them when ``inputs`` is a dict; default ``batch.sequences``) and the state:
    one array when ``state_name`` is a string, else a tuple of arrays in the order of the names.
    As in TensorFlow, where ``t >= sequence_length`` (default ``batch.length``) the output is
    zero and the state is carried through unchanged. Returns ``(outputs, final_state)`` with
    ``outputs`` a list of ``num_unroll`` arrays ``[batch, ...]``; every state is saved."""

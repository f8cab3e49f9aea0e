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

import numbers
import queue
import random
import threading

import numpy as np

from . import _tfrec
from ._records import compression as _compression, paths as _paths
from ._specs import sequence_specs_json
from .errors import TfrecError
from .io import SparseTensor

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


class StateSaverError(TfrecError):
    """A misuse of the state saver or an example it cannot take.

    Attributes (those that apply): ``kind`` (``"unsaved_states"``, ``"saved_twice"``,
    ``"state_shape"``, ``"state_dtype"``, ``"unknown_state"``, ``"key_in_flight"``,
    ``"unequal_lengths"``, ``"not_multiple"``, ``"empty_sequence"``, ``"input"``, …), ``key``
    (the example's), ``name`` (a tensor's), ``state``, ``states``, ``keys`` (the batch's
    segment keys) and ``example_index`` (for an error raised by the input iterable).
    """

    kind = None
    key = None
    name = None
    state = None
    states = None
    keys = None
    example_index = None


class OutOfRangeError(StateSaverError):
    """The end of the input: with ``allow_small_batch=False``, fewer segments left than
    ``batch_size``; from :meth:`SequenceQueueingStateSaver.next_batch`, no segment left."""


class SequenceExampleFiles:
    """SequenceExample records in TFRecord files as state saver input.

    ``sequence_features`` maps names to ``tfrec.io.FixedLenSequenceFeature`` and
    ``context_features`` to ``tfrec.io.FixedLenFeature``.
    """

    def __init__(self, filenames, sequence_features, context_features=None, compression_type=None):
        self.paths = _paths(filenames)
        self.compression_type = _compression(compression_type)
        self.specs = sequence_specs_json(context_features, sequence_features)


def _bytes_array(a):
    flat = [x.encode("utf-8") if isinstance(x, str) else bytes(x) if isinstance(x, np.bytes_) else x for x in a.ravel()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(a.shape)


def _is_sparse(v):
    return all(hasattr(v, a) for a in ("indices", "values", "dense_shape")) and not isinstance(v, np.ndarray)


def _array(value):
    """A NumPy array the binding takes: NumPy arrays keep their dtype (the library carries
    every numeric one and names a wrong one), text and bytes become objects of bytes, Python
    numbers int64 or float32; a sparse tensor's parts become arrays (int64 indices and dense
    shape), which the library checks."""
    if _is_sparse(value):
        return SparseTensor(np.asarray(value.indices, dtype=np.int64), _array(value.values),
                            np.asarray(value.dense_shape, dtype=np.int64).reshape(-1))
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "USO":
            return _bytes_array(value)
        return value
    if isinstance(value, (str, bytes)):
        return _bytes_array(np.array(value, dtype=object))
    a = np.asarray(value)
    if a.dtype.kind == "f":
        return a.astype(np.float32)
    if a.dtype.kind in "iub":
        return a.astype(np.int64)
    if a.dtype.kind in "USO":
        return _bytes_array(a)
    return a


def _arrays(d, what):
    """The values of ``d`` as arrays (:func:`_array`)."""
    if d is None:
        return None
    if not isinstance(d, dict):
        raise TypeError(f"{what} must be a dict of name -> array, not {type(d).__name__}")
    return {str(k): _array(v) for k, v in d.items()}


def _length(length):
    return None if length is None else int(length)


def _item(key, sequences, context, length, states):
    return (key, _arrays(sequences, "input_sequences"), _arrays(context, "input_context"), _length(length),
            _arrays(states, "initial_states"))


_FIELDS = {"input_key", "input_sequences", "input_context", "input_length", "initial_states"}


def _from_dicts(examples):
    for i, ex in enumerate(examples):
        if not isinstance(ex, dict):
            raise TypeError(f"example {i} must be a dict, not {type(ex).__name__}")
        unknown = set(ex) - _FIELDS
        if unknown:
            raise KeyError(f"example {i} has unknown fields {sorted(unknown)} (expected {sorted(_FIELDS)})")
        if "input_key" not in ex or "input_sequences" not in ex:
            raise KeyError(f"example {i} needs 'input_key' and 'input_sequences'")
        yield _item(ex["input_key"], ex["input_sequences"], ex.get("input_context"), ex.get("input_length"),
                    ex.get("initial_states"))


_END = object()


def _zipped(keys, sequences, contexts, lengths):
    streams = [iter(keys), iter(sequences)]
    names = ["input_key", "input_sequences"]
    for name, s in (("input_context", contexts), ("input_length", lengths)):
        if s is not None:
            streams.append(iter(s))
            names.append(name)
    i = 0
    while True:
        values = [next(s, _END) for s in streams]
        ended = [n for n, v in zip(names, values) if v is _END]
        if len(ended) == len(values):
            return
        if ended:
            raise ValueError(f"{', '.join(ended)} ended after {i} examples, before {names[0]} and the others")
        got = dict(zip(names, values))
        yield _item(got["input_key"], got["input_sequences"], got.get("input_context"), got.get("input_length"), None)
        i += 1


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

    def __init__(self, inner):
        self._inner = inner
        f = inner.fields
        self.key = f["key"]
        self.next_key = f["next_key"]
        self.sequence = f["sequence"]
        self.sequence_count = f["sequence_count"]
        self.length = f["length"]
        self.total_length = f["total_length"]
        self.insertion_index = f["insertion_index"]
        self.sequences = f["sequences"]
        self.context = f["context"]

    @property
    def batch_size(self):
        return self._inner.batch_size

    @property
    def state_names(self):
        return self._inner.state_names()

    def state(self, name):
        """The states the segments start from, ``[batch, ...]``: the initial state on an
        example's first segment, afterwards what was saved for it."""
        return self._inner.state(name)

    def save_state(self, name, values):
        """Saves state ``name`` (shaped and typed like ``state(name)``) for each entry's next
        segment. Each state is saved exactly once per batch."""
        if not isinstance(values, np.ndarray):
            # Python values take the state's dtype.
            dtype = self._inner.state_dtype(name)
            if dtype not in (None, "string"):
                values = np.asarray(values, dtype=dtype)
        values = _array(values)
        self._inner.save_state(name, values)

    def __repr__(self):
        return f"NextQueuedSequenceBatch(batch_size={self.batch_size}, key={list(self.key)!r})"


class SequenceBatches:
    """The running state saver: iterate it for :class:`NextQueuedSequenceBatch` es. ``close()``
    (or leaving a ``with`` block) stops its reader threads."""

    def __init__(self, inner):
        self._inner = inner

    def __iter__(self):
        return self

    def __next__(self):
        inner = next(self._inner)
        return NextQueuedSequenceBatch(inner)

    def next_batch(self):
        """The next batch, or ``None`` at the end of the input."""
        return next(self, None)

    @property
    def in_flight(self):
        """Examples in flight now."""
        return self._inner.in_flight()

    @property
    def max_in_flight(self):
        """The most examples in flight at once so far (at most ``capacity``)."""
        return self._inner.max_in_flight()

    def close(self, cancel_pending=False):
        """Stops the input; safe from any thread, also while another waits for a batch.

        With ``cancel_pending=False`` (TensorFlow's default) no new example enters, but the
        sequences in flight still hand out their remaining segments, then iteration ends. With
        ``True`` iteration ends at once, also for a ``next`` waiting now."""
        self._inner.close(bool(cancel_pending))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(cancel_pending=True)


def _options(num_unroll, batch_size, initial_states, num_threads, capacity, allow_small_batch, pad, seed):
    """The options as the Rust saver takes them, with the checks TensorFlow makes in Python when
    the saver is built, in its wording (the library makes the others: capacity, colons)."""
    if not isinstance(num_unroll, numbers.Integral):
        raise ValueError("Unsupported num_unroll expected int, got: %s" % str(num_unroll))
    if not isinstance(initial_states, dict):
        raise TypeError("initial_states must be a dictionary")
    if not initial_states:
        raise ValueError("initial_states may not be empty: at least one state variable is required to properly "
                         "enqueue split sequences to run in separate iterations")
    for k in initial_states:
        if not isinstance(k, str):
            raise TypeError("state name must be a string: %s" % k)
    return dict(
        num_unroll=int(num_unroll),
        batch_size=int(batch_size),
        initial_states=_arrays(initial_states, "initial_states"),
        num_threads=int(num_threads),
        capacity=None if capacity is None else int(capacity),
        allow_small_batch=bool(allow_small_batch),
        pad=bool(pad),
        make_keys_unique_seed=seed,
    )


def batch_sequences_with_states(
    input_key,
    input_sequences,
    input_context,
    input_length,
    initial_states,
    num_unroll,
    batch_size,
    num_threads=3,
    capacity=1000,
    allow_small_batch=True,
    pad=True,
    make_keys_unique=False,
    make_keys_unique_seed=None,
    name=None,
):
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
    del name
    seed = None
    if make_keys_unique:
        seed = make_keys_unique_seed if make_keys_unique_seed is not None else random.SystemRandom().getrandbits(63)
    options = _options(num_unroll, batch_size, initial_states, num_threads, capacity, allow_small_batch, pad, seed)
    if isinstance(input_sequences, SequenceExampleFiles):
        if input_context is not None:
            raise ValueError("with SequenceExampleFiles, the context comes from the records: pass input_context=None")
        if input_length is not None and not isinstance(input_length, str):
            raise TypeError("with SequenceExampleFiles, input_length is the name of a scalar int64 context feature "
                            "or None")
        if input_key is not None and not isinstance(input_key, str):
            raise TypeError("with SequenceExampleFiles, input_key is the name of a context feature or None")
        files = input_sequences
        inner = _tfrec.StateSaver.from_files(
            files.paths, files.compression_type, files.specs, input_key, length_feature=input_length, **options
        )
    elif input_key is None:
        if input_context is not None or input_length is not None:
            raise ValueError("with per-example dicts (input_key=None), give input_context and input_length "
                             "inside each dict")
        inner = _tfrec.StateSaver.from_iterator(_from_dicts(input_sequences), **options)
    else:
        if isinstance(input_key, (str, bytes)):
            raise TypeError("input_key must be an iterable of keys (one per example), not a single key")
        inner = _tfrec.StateSaver.from_iterator(
            _zipped(input_key, input_sequences, input_context, input_length), **options
        )
    return SequenceBatches(inner)


_CLOSE = object()


def _pull(q):
    # Holds the queue, not the saver, so that an unclosed saver can still be collected.
    while True:
        item = q.get()
        if item is _CLOSE:
            return
        yield _item(*item)


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

    def __init__(self, batch_size, num_unroll, initial_states, capacity=None, allow_small_batch=False, pad=False,
                 num_threads=1, name=None):
        del name
        options = _options(num_unroll, batch_size, initial_states, num_threads, capacity, allow_small_batch, pad,
                           None)
        # The Rust readers pull from this queue; the saver bounds what it holds in flight, and
        # the queue holds what was inserted and not read yet (unbounded, so that one thread
        # can insert everything and then take batches without deadlocking).
        self._queue = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        inner = _tfrec.StateSaver.from_iterator(_pull(self._queue), **options)
        self._batches = SequenceBatches(inner)
        self.batch_size = int(batch_size)
        self.num_unroll = int(num_unroll)

    def __del__(self):
        # The reader thread waits in the queue; the sentinel lets it end, so that dropping the
        # Rust saver (which joins it) does not wait forever.
        q = getattr(self, "_queue", None)
        if q is not None:
            q.put(_CLOSE)

    def insert(self, input_key, input_sequences, input_context=None, input_length=None, initial_states=None):
        """Adds one example (TensorFlow's ``prefetch_op`` for one input). Its arrays are checked
        as the saver reads it; an error then stops the saver and is raised by ``next_batch``."""
        with self._lock:
            if self._closed:
                raise OutOfRangeError(f"the saver is closed, but attempted to insert a brand new key: {input_key!r}")
            self._queue.put((input_key, input_sequences, input_context, input_length, initial_states))

    put = insert

    def close(self, cancel_pending_enqueues=False):
        """Ends the input, from any thread. Without ``cancel_pending_enqueues`` every example
        inserted so far still goes through; with it, the saver stops at once and a waiting
        :meth:`next_batch` raises :class:`OutOfRangeError`."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._queue.put(_CLOSE)
        if cancel_pending_enqueues:
            self._batches.close(cancel_pending=True)

    def next_batch(self):
        """The next :class:`NextQueuedSequenceBatch`; :class:`OutOfRangeError` at the end."""
        try:
            return next(self._batches)
        except StopIteration:
            raise OutOfRangeError("the state saver is closed and has no segments left") from None

    def __iter__(self):
        return self._batches

    @property
    def in_flight(self):
        return self._batches.in_flight

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(cancel_pending_enqueues=True)


def state_saving_rnn(step, batch, state_name, inputs=None, sequence_length=None):
    """TensorFlow's ``static_state_saving_rnn`` for NumPy: runs ``step`` over the ``num_unroll``
    steps of ``batch`` starting from its saved states, and saves the final states.

    ``step(x_t, state) -> (output_t, new_state)`` gets the inputs of step ``t`` (``inputs[:, t]``,
    or a dict of them when ``inputs`` is a dict; default ``batch.sequences``) and the state:
    one array when ``state_name`` is a string, else a tuple of arrays in the order of the names.
    As in TensorFlow, where ``t >= sequence_length`` (default ``batch.length``) the output is
    zero and the state is carried through unchanged. Returns ``(outputs, final_state)`` with
    ``outputs`` a list of ``num_unroll`` arrays ``[batch, ...]``; every state is saved."""
    names = (state_name,) if isinstance(state_name, str) else tuple(state_name)
    if not names:
        raise ValueError("state_name must name at least one state")
    single = isinstance(state_name, str)
    if inputs is None:
        inputs = batch.sequences
    if sequence_length is None:
        sequence_length = batch.length
    sequence_length = np.asarray(sequence_length)
    steps = (next(iter(inputs.values())) if isinstance(inputs, dict) else inputs).shape[1]
    state = tuple(batch.state(n) for n in names)
    outputs = []

    def where(valid, new, old):
        mask = valid.reshape((-1,) + (1,) * (np.ndim(old) - 1))
        return np.where(mask, new, old).astype(np.asarray(old).dtype, copy=False)

    for t in range(steps):
        x_t = {k: v[:, t] for k, v in inputs.items()} if isinstance(inputs, dict) else inputs[:, t]
        out, new = step(x_t, state[0] if single else state)
        new = (new,) if single else tuple(new)
        if len(new) != len(names):
            raise ValueError("#elems(state_name) != #elems(new_state): %d vs. %d" % (len(names), len(new)))
        valid = t < sequence_length
        state = tuple(where(valid, n, o) for n, o in zip(new, state))
        out = np.asarray(out)
        outputs.append(where(valid, out, np.zeros_like(out)))
    for n, v in zip(names, state):
        batch.save_state(n, v)
    return outputs, (state[0] if single else state)

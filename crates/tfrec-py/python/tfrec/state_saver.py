"""``batch_sequences_with_states``: TensorFlow 1's sequence state saver
(``tf.contrib.training.batch_sequences_with_states``) for truncated back-propagation through
time, built on the Rust library's ``state_saver``.

Each example (a key, time-major sequences, context, a length) is cut into segments of
``num_unroll`` steps; batches take segments from many examples, and each example's states are
handed from one segment to the next through ``save_state``. Misuse raises
:class:`StateSaverError` naming the keys and states (TensorFlow would hang or answer wrongly).

The input comes in one of three forms; TensorFlow's argument names keep their meaning, each
now giving the stream of what TF took for one example:

1. Parallel iterables: ``input_key`` (keys, ``str`` or UTF-8 ``bytes``), ``input_sequences``
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

Arrays are int64, float32 or bytes (``str`` is encoded as UTF-8). Python numbers and lists
become int64 or float32; NumPy arrays of any other dtype are an error, not a silent cast.

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

import json
import random

import numpy as np

from . import _tfrec
from .errors import TfrecError

__all__ = [
    "NextQueuedSequenceBatch",
    "OutOfRangeError",
    "SequenceBatches",
    "SequenceExampleFiles",
    "StateSaverError",
    "batch_sequences_with_states",
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
    """The input ended with fewer segments than ``batch_size`` and ``allow_small_batch=False``."""


class SequenceExampleFiles:
    """SequenceExample records in TFRecord files as state saver input.

    ``sequence_features`` maps names to ``tfrec.io.FixedLenSequenceFeature`` and
    ``context_features`` to ``tfrec.io.FixedLenFeature``.
    """

    def __init__(self, filenames, sequence_features, context_features=None, compression_type=None):
        from .data import _compression, _paths
        from .io import specs_to_json

        self.paths = _paths(filenames)
        self.compression_type = _compression(compression_type)
        self.specs = json.dumps(
            {
                "context_features": specs_to_json(context_features),
                "sequence_features": specs_to_json(sequence_features),
            }
        )


def _bytes_array(a):
    flat = [x.encode("utf-8") if isinstance(x, str) else bytes(x) if isinstance(x, np.bytes_) else x for x in a.ravel()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(a.shape)


def _array(value):
    """An int64, float32 or bytes-object array; NumPy arrays keep their dtype (the Rust side
    names a wrong one), Python values are converted."""
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
    if d is None:
        return None
    if not isinstance(d, dict):
        raise TypeError(f"{what} must be a dict of name -> array, not {type(d).__name__}")
    return {str(k): _array(v) for k, v in d.items()}


def _key(key):
    if isinstance(key, (bytes, np.bytes_)):
        return bytes(key).decode("utf-8")
    if isinstance(key, str):
        return key
    raise TypeError(f"input_key must be str or bytes, not {type(key).__name__}")


def _length(length):
    return None if length is None else int(length)


def _item(key, sequences, context, length, states):
    return (_key(key), _arrays(sequences, "input_sequences"), _arrays(context, "input_context"),
            _length(length), _arrays(states, "initial_states"))


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
    ``state(name)`` and ``batch_size``. Before taking the next batch, call ``save_state`` for
    every state.
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
        self._inner.save_state(name, _array(values))

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
        return NextQueuedSequenceBatch(next(self._inner))

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

    def close(self):
        self._inner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


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

    ``initial_states`` maps state names to their initial values (fixed shapes; int64, float32
    or bytes). ``capacity`` (>= ``batch_size``) bounds the examples in flight;
    ``allow_small_batch`` hands out a last smaller batch; ``pad`` pads sequences to a
    multiple of ``num_unroll`` with zeros / ``b""`` (with ``pad=False`` their length must be a
    multiple); ``make_keys_unique`` appends a random number (from ``make_keys_unique_seed``)
    to every key. ``name`` is accepted for TensorFlow compatibility. Batches depend only on the
    input and the options, never on thread timing.

    Returns a :class:`SequenceBatches` iterator.
    """
    del name
    seed = None
    if make_keys_unique:
        seed = make_keys_unique_seed if make_keys_unique_seed is not None else random.SystemRandom().getrandbits(63)
    defaults = _arrays(initial_states, "initial_states") or {}
    options = dict(
        num_unroll=int(num_unroll),
        batch_size=int(batch_size),
        initial_states=defaults,
        num_threads=int(num_threads),
        capacity=int(capacity),
        allow_small_batch=bool(allow_small_batch),
        pad=bool(pad),
        make_keys_unique_seed=seed,
    )
    if isinstance(input_sequences, SequenceExampleFiles):
        if input_context is not None or input_length is not None:
            raise ValueError("with SequenceExampleFiles, the context and length come from the records: "
                             "pass input_context=None and input_length=None")
        if input_key is not None and not isinstance(input_key, str):
            raise TypeError("with SequenceExampleFiles, input_key is the name of a context feature or None")
        files = input_sequences
        inner = _tfrec.StateSaver.from_files(
            files.paths, files.compression_type, files.specs, input_key, **options
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


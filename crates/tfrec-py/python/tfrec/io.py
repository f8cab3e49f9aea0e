"""``tf.io`` without TensorFlow: feature specs, the four parse ops, and
``serialize_tensor`` / ``parse_tensor``.

Specs are the ``tf.io`` names with TensorFlow's signatures. A dtype may be ``"int64"`` /
``"float32"`` / ``"string"``, a NumPy dtype or type, or any object whose ``.name`` is one of
those (so ``tf.int64`` works). TensorFlow's own spec objects are accepted too, by duck typing,
so an existing ``feature_description`` dict works unchanged.

Outputs: a dense feature is a ``numpy.ndarray`` (int64, float32, or an object array of
``bytes`` for strings, as TF's ``.numpy()`` gives); sparse is a :class:`SparseTensor`; ragged is
a :class:`RaggedTensor`.

String features come in the form each parse call's ``strings=`` names, the values of sparse
and ragged ones too: ``"object"`` (the default: object arrays of ``bytes``), ``"numpy"``
(NumPy 2's ``StringDType`` arrays of ``str``, made without a Python object per value; a value
that is not UTF-8 is a ``UnicodeDecodeError`` naming the feature), or ``"arrow"`` (pyarrow
``binary`` arrays, bytes as TensorFlow holds them: a tensor's first dimension is the array's
length, each further one a ``FixedSizeList``; a scalar is a pyarrow scalar).
"""

import collections

import numpy as np

from . import _tfrec
from ._dtypes import NUMPY_OF_TENSOR, bfloat16, dtype_name
from ._records import TFRecordOptions, TFRecordWriter  # noqa: F401  (tf.io's names)
from . import _specs
from ._specs import spec_to_json, specs_to_json  # noqa: F401  (tfrec.io's names)
from .train import as_bytes

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "VarLenFeature",
    "SparseFeature",
    "RaggedFeature",
    "SparseTensor",
    "RaggedTensor",
    "parse_example",
    "parse_single_example",
    "parse_sequence_example",
    "parse_single_sequence_example",
    "serialize_tensor",
    "parse_tensor",
    "TFRecordWriter",
]


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A fixed-shape feature; a missing one takes ``default_value`` (or is an error)."""

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(
    collections.namedtuple("FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])
):
    """A feature with a variable first dimension: a feature list, or a padded batch."""

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length feature, parsed into a :class:`SparseTensor`."""

    __slots__ = ()


class SparseFeature(
    collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])
):
    """A sparse tensor from index feature(s) and a value feature."""

    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class RaggedFeature(
    collections.namedtuple("RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])
):
    """A ragged tensor from a value feature and partition features (TF's six kinds)."""

    __slots__ = ()

    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype="int32", validate=False):
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype, validate)


class SparseTensor:
    """A sparse tensor: ``indices`` (int64, [N, rank]), ``values`` and ``dense_shape``."""

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices, values, dense_shape):
        self.indices = indices
        self.values = values
        self.dense_shape = dense_shape

    @property
    def shape(self):
        return tuple(int(d) for d in self.dense_shape)

    @property
    def dtype(self):
        return self.values.dtype

    def to_dense(self, default_value=None):
        """The dense array (``tf.sparse.to_dense``): missing entries are ``default_value``
        (0, 0.0, ``b""``, or ``""`` for ``StringDType`` values, by default)."""
        if default_value is None:
            default_value = {"O": b"", "T": ""}.get(self.values.dtype.kind, 0)
        out = np.full(self.shape, default_value, dtype=self.values.dtype)
        if len(self.values):
            out[tuple(self.indices.T)] = self.values
        return out

    def __repr__(self):
        return (
            f"SparseTensor(indices={self.indices!r}, values={self.values!r}, "
            f"dense_shape={self.dense_shape!r})"
        )


class RaggedTensor:
    """A ragged tensor: ``flat_values`` and ``nested_row_splits`` (outermost first), with
    ``uniform_row_lengths`` (``None`` per level, or the length of a uniform level)."""

    __slots__ = ("flat_values", "nested_row_splits", "uniform_row_lengths")

    def __init__(self, flat_values, nested_row_splits, uniform_row_lengths=None):
        self.flat_values = flat_values
        self.nested_row_splits = tuple(nested_row_splits)
        self.uniform_row_lengths = tuple(uniform_row_lengths or [None] * len(self.nested_row_splits))

    @property
    def row_splits(self):
        return self.nested_row_splits[0]

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype

    def nrows(self):
        return len(self.nested_row_splits[0]) - 1

    def to_list(self):
        """Nested Python lists, as TF's ``RaggedTensor.to_list()``."""
        flat = self.flat_values
        # pyarrow's arrays (strings="arrow") name it to_pylist.
        values = flat.tolist() if hasattr(flat, "tolist") else flat.to_pylist()
        for splits in reversed(self.nested_row_splits):
            values = [values[int(a) : int(b)] for a, b in zip(splits[:-1], splits[1:])]
        return values

    def __repr__(self):
        return f"<tfrec.io.RaggedTensor {self.to_list()!r}>"


def _wrap(value):
    if isinstance(value, tuple):
        if value[0] == "sparse":
            return SparseTensor(value[1], value[2], value[3])
        if value[0] == "ragged":
            return RaggedTensor(value[1], value[2], value[3])
    return value


def _wrap_dict(d):
    for k, v in d.items():
        if isinstance(v, tuple):
            d[k] = _wrap(v)
    return d


_PARSERS = {}


def _parser(spec_json, sequence):
    key = (spec_json, sequence)
    parser = _PARSERS.get(key)
    if parser is None:
        if len(_PARSERS) >= 64:
            _PARSERS.clear()
        parser = _PARSERS[key] = _tfrec.Parser(spec_json, sequence)
    return parser


def _call_with_serialized(run, serialized):
    """Runs ``run(serialized)``; on a non-bytes element, serializes message objects (anything
    with ``SerializeToString()``) and tries again."""
    try:
        return run(serialized)
    except TypeError:
        if isinstance(serialized, (bytes, str)) or not hasattr(serialized, "__iter__"):
            if hasattr(serialized, "SerializeToString"):
                return run(serialized.SerializeToString())
            raise
        items = list(serialized)
        if not any(hasattr(x, "SerializeToString") for x in items):
            raise
        return run([as_bytes(x) if hasattr(x, "SerializeToString") else x for x in items])


def parse_example(serialized, features, example_names=None, name=None, num_threads=1, *, strings="object"):
    """``tf.io.parse_example``: a batch (list or array of ``bytes``) into a dict of tensors
    with a leading batch dimension. ``num_threads > 1`` parses on a thread pool. ``strings``:
    the form of string features (``"object"``, ``"numpy"`` or ``"arrow"``, see the module)."""
    parser = _parser(_specs.specs_json(features), False)
    out = _call_with_serialized(lambda s: parser.parse_example(s, False, num_threads, strings), serialized)
    return _wrap_dict(out)


def parse_single_example(serialized, features, example_names=None, name=None, *, strings="object"):
    """``tf.io.parse_single_example``: one record, no batch dimension. ``strings``: the form of
    string features."""
    parser = _parser(_specs.specs_json(features), False)
    if not isinstance(serialized, bytes):
        serialized = _single(serialized)
    return _wrap_dict(parser.parse_example(serialized, True, 1, strings))


def _sequence_parser(context_features, sequence_features):
    return _parser(_specs.sequence_specs_json(context_features, sequence_features), True)


def parse_sequence_example(
    serialized,
    context_features=None,
    sequence_features=None,
    example_names=None,
    name=None,
    num_threads=1,
    *,
    strings="object",
):
    """``tf.io.parse_sequence_example``: ``(context, feature_lists, feature_list_lengths)``.
    ``strings``: the form of string features."""
    parser = _sequence_parser(context_features, sequence_features)
    context, lists, lengths = _call_with_serialized(
        lambda s: parser.parse_sequence_example(s, False, num_threads, strings), serialized
    )
    return _wrap_dict(context), _wrap_dict(lists), _wrap_dict(lengths)


def parse_single_sequence_example(
    serialized, context_features=None, sequence_features=None, example_name=None, name=None, *, strings="object"
):
    """``tf.io.parse_single_sequence_example``: ``(context, feature_lists)``. ``strings``: the
    form of string features."""
    parser = _sequence_parser(context_features, sequence_features)
    if not isinstance(serialized, bytes):
        serialized = _single(serialized)
    context, lists, _ = parser.parse_sequence_example(serialized, True, 1, strings)
    return _wrap_dict(context), _wrap_dict(lists)


def _single(serialized):
    if isinstance(serialized, np.ndarray) and serialized.shape == () and isinstance(serialized.item(), bytes):
        return serialized.item()
    if hasattr(serialized, "numpy"):  # a scalar tf.Tensor
        serialized = serialized.numpy()
        if isinstance(serialized, bytes):
            return serialized
    if hasattr(serialized, "SerializeToString"):
        return serialized.SerializeToString()
    raise TypeError(f"serialized must be one bytes object, not {type(serialized).__name__}")


# serialize_tensor / parse_tensor ------------------------------------------------------------

def _to_bfloat16_bits(arr):
    """bfloat16 bit patterns of float values, rounded to nearest even (NaN: TF's 0x7FC0)."""
    f32 = np.asarray(arr, dtype=np.float32).reshape(-1)
    bits = f32.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    rounded[np.isnan(f32)] = 0x7FC0
    return rounded


def serialize_tensor(tensor, name=None, dtype=None):
    """``tf.io.serialize_tensor``: TensorFlow's ``TensorProto`` bytes for an array.

    Python scalars and lists follow ``tf.constant``: ints become int32 and floats float32; a
    NumPy array keeps its dtype. Strings (``str`` is encoded as UTF-8) become a string tensor.
    ``dtype`` converts first (as ``tf.cast`` would); ``dtype="bfloat16"`` makes a bfloat16
    tensor from floats without needing a NumPy bfloat16 type.
    """
    if hasattr(tensor, "numpy") and not isinstance(tensor, np.ndarray):
        tensor = tensor.numpy()
    if not isinstance(tensor, (np.ndarray, np.generic)):
        arr = np.asarray(tensor)
        if arr.dtype == np.int64:
            arr = arr.astype(np.int32)
        elif arr.dtype == np.float64:
            arr = arr.astype(np.float32)
    else:
        arr = np.asarray(tensor)
    shape = list(arr.shape)
    target = None if dtype is None else dtype_name(dtype)
    if target == "string" or (target is None and arr.dtype.kind in "OSU"):
        values = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in arr.ravel().tolist()]
        return _tfrec.serialize_tensor("string", shape, values)
    if target == "bfloat16" and arr.dtype.name != "bfloat16":
        return _tfrec.serialize_tensor("bfloat16", shape, _to_bfloat16_bits(arr).astype("<u2").tobytes())
    if target is not None and target != arr.dtype.name:
        if target not in NUMPY_OF_TENSOR:
            raise TypeError(f"serialize_tensor does not support dtype {dtype!r}")
        arr = arr.astype(NUMPY_OF_TENSOR[target])
    if arr.dtype.name == "bfloat16":
        name_, raw = "bfloat16", np.ascontiguousarray(arr).view(np.uint16).astype("<u2").tobytes()
    else:
        name_ = arr.dtype.name
        if name_ not in NUMPY_OF_TENSOR:
            raise TypeError(f"serialize_tensor does not support dtype {arr.dtype}")
        raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
    return _tfrec.serialize_tensor(name_, shape, raw)


def parse_tensor(serialized, out_type, name=None):
    """``tf.io.parse_tensor``: the array in ``TensorProto`` bytes, which must hold ``out_type``.

    ``bfloat16`` comes back as ``ml_dtypes.bfloat16`` when that package is installed, else as
    float32 (every bfloat16 value is exactly a float32).
    """
    if hasattr(serialized, "numpy") and not isinstance(serialized, (bytes, np.ndarray)):
        serialized = serialized.numpy()
    if isinstance(serialized, np.ndarray) and serialized.shape == ():
        serialized = serialized.item()
    out_name = dtype_name(out_type)
    dtype, shape, values = _tfrec.parse_tensor(serialized, out_name)
    if dtype == "string":
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        return arr.reshape(shape)
    if dtype == "bfloat16":
        bits = np.frombuffer(values, dtype="<u2").astype(np.uint16)
        bf16 = bfloat16()
        if bf16 is not None:
            return bits.view(bf16).reshape(shape)
        return (bits.astype(np.uint32) << 16).view(np.float32).reshape(shape)
    np_dtype = np.dtype(NUMPY_OF_TENSOR[dtype]).newbyteorder("<")
    return np.frombuffer(values, dtype=np_dtype).astype(np_dtype.newbyteorder("="), copy=True).reshape(shape)


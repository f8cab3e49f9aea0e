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

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, overload

import numpy as np
import numpy.typing as npt
from typing_extensions import Self, TypeAlias

from . import _tfrec
from ._records import TFRecordOptions as TFRecordOptions, TFRecordWriter as TFRecordWriter
from .train import _Serializable

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

class _Named(Protocol):
    """A dtype object with a ``.name`` (``tf.int64``, ``tfrec.int64``)."""

    @property
    def name(self) -> str: ...

# A dtype: its name, a NumPy dtype or scalar type, ``int``/``float``/``bytes``/``str``, or any
# object with a ``.name``.
_DTypeLike: TypeAlias = str | type[Any] | np.dtype[Any] | _Named
# A shape: a list of dimensions (``None``: unknown), one int, a ``tf.TensorShape``, or ``None``.
_Shape: TypeAlias = int | Sequence[int | None] | None
_Partition: TypeAlias = (
    RaggedFeature.RowSplits
    | RaggedFeature.RowLengths
    | RaggedFeature.RowStarts
    | RaggedFeature.RowLimits
    | RaggedFeature.ValueRowIds
    | RaggedFeature.UniformRowLength
)
# One feature's spec: ours, or the JSON spec form (``{"type": "FixedLenFeature", ...}``).
# Every spec class is a named tuple, as TensorFlow's are (accepted too, by duck typing);
# ``tuple[Any, ...]`` is there because mypy infers a dict of specs of different kinds
# (``{"a": FixedLenFeature(...), "b": VarLenFeature(...)}``) as a dict of tuples.
_FeatureSpec: TypeAlias = (
    FixedLenFeature
    | FixedLenSequenceFeature
    | VarLenFeature
    | SparseFeature
    | RaggedFeature
    | tuple[Any, ...]
    | Mapping[str, Any]
)
_Features: TypeAlias = Mapping[str, _FeatureSpec]
_T = TypeVar("_T")
# A parsed feature: a dense array, or a sparse or ragged tensor.
_Tensor: TypeAlias = npt.NDArray[Any] | SparseTensor | RaggedTensor
# The form of parsed string features, the ``strings=`` of every parse call: object arrays of
# ``bytes``, NumPy ``StringDType`` arrays, or pyarrow ``binary`` arrays.
_Strings: TypeAlias = Literal["object", "numpy", "arrow"]
_NumpyStrings: TypeAlias = Literal["object", "numpy"]
# A parsed feature with ``strings="arrow"``: as ``_Tensor``, but a string feature (or the values
# of a sparse or ragged one) is a pyarrow array or scalar, which has no stubs here.
_ArrowTensor: TypeAlias = Any
# A batch of serialized records: a list (or object array) of ``bytes`` or messages.
_Batch: TypeAlias = Iterable[bytes | _Serializable] | npt.NDArray[Any]
# One serialized record: ``bytes``, a message, or a scalar object array of bytes.
_Single: TypeAlias = bytes | _Serializable | npt.NDArray[Any]

class _FixedLenFeatureFields(NamedTuple):
    shape: _Shape
    dtype: _DTypeLike
    default_value: Any

class FixedLenFeature(_FixedLenFeatureFields):
    """A fixed-shape feature; a missing one takes ``default_value`` (or is an error)."""

    def __new__(cls, shape: _Shape, dtype: _DTypeLike, default_value: Any = None) -> Self: ...

class _FixedLenSequenceFeatureFields(NamedTuple):
    shape: _Shape
    dtype: _DTypeLike
    allow_missing: bool
    default_value: Any

class FixedLenSequenceFeature(_FixedLenSequenceFeatureFields):
    """A feature with a variable first dimension: a feature list, or a padded batch."""

    def __new__(cls, shape: _Shape, dtype: _DTypeLike, allow_missing: bool = False, default_value: Any = None) -> Self: ...

class VarLenFeature(NamedTuple):
    """A variable-length feature, parsed into a :class:`SparseTensor`."""

    dtype: _DTypeLike

class _SparseFeatureFields(NamedTuple):
    index_key: str | Sequence[str]
    value_key: str
    dtype: _DTypeLike
    size: int | Sequence[int]
    already_sorted: bool

class SparseFeature(_SparseFeatureFields):
    """A sparse tensor from index feature(s) and a value feature."""

    def __new__(
        cls,
        index_key: str | Sequence[str],
        value_key: str,
        dtype: _DTypeLike,
        size: int | Sequence[int],
        already_sorted: bool = False,
    ) -> Self: ...

class _RaggedFeatureFields(NamedTuple):
    dtype: _DTypeLike
    value_key: str | None
    partitions: tuple[_Partition, ...]
    row_splits_dtype: _DTypeLike
    validate: bool

class RaggedFeature(_RaggedFeatureFields):
    """A ragged tensor from a value feature and partition features (TF's six kinds)."""

    class RowSplits(NamedTuple):
        key: str

    class RowLengths(NamedTuple):
        key: str

    class RowStarts(NamedTuple):
        key: str

    class RowLimits(NamedTuple):
        key: str

    class ValueRowIds(NamedTuple):
        key: str

    class UniformRowLength(NamedTuple):
        length: int

    def __new__(
        cls,
        dtype: _DTypeLike,
        value_key: str | None = None,
        # ``tuple[Any, ...]``: mypy infers a list of partitions of different kinds as a list of
        # tuples (the partition classes are named tuples).
        partitions: Iterable[_Partition | tuple[Any, ...]] = (),
        row_splits_dtype: _DTypeLike = "int32",
        validate: bool = False,
    ) -> Self: ...

def dtype_name(dtype: _DTypeLike) -> str:
    """The TensorFlow name of a dtype given as a string, a NumPy dtype or type, a Python type,
    or any object with a ``.name`` (``tf.int64``)."""

def spec_to_json(key: str, spec: _FeatureSpec) -> dict[str, Any]:
    """One spec in the JSON spec form (the golden vectors' and the CLI's)."""

def specs_to_json(features: _Features | None) -> dict[str, dict[str, Any]]: ...

class SparseTensor:
    """A sparse tensor: ``indices`` (int64, [N, rank]), ``values`` and ``dense_shape``."""

    indices: npt.NDArray[np.int64]
    values: npt.NDArray[Any]
    dense_shape: npt.NDArray[np.int64]
    def __init__(self, indices: npt.NDArray[Any], values: npt.NDArray[Any], dense_shape: npt.NDArray[Any]) -> None: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    def to_dense(self, default_value: Any = None) -> npt.NDArray[Any]:
        """The dense array (``tf.sparse.to_dense``): missing entries are ``default_value``
        (0, 0.0, ``b""``, or ``""`` for ``StringDType`` values, by default)."""

class RaggedTensor:
    """A ragged tensor: ``flat_values`` and ``nested_row_splits`` (outermost first), with
    ``uniform_row_lengths`` (``None`` per level, or the length of a uniform level)."""

    flat_values: npt.NDArray[Any]
    nested_row_splits: tuple[npt.NDArray[np.integer[Any]], ...]
    uniform_row_lengths: tuple[int | None, ...]
    def __init__(
        self,
        flat_values: npt.NDArray[Any],
        nested_row_splits: Iterable[npt.NDArray[np.integer[Any]]],
        uniform_row_lengths: Iterable[int | None] | None = None,
    ) -> None: ...
    @property
    def row_splits(self) -> npt.NDArray[np.integer[Any]]: ...
    @property
    def ragged_rank(self) -> int: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    def nrows(self) -> int: ...
    def to_list(self) -> list[Any]:
        """Nested Python lists, as TF's ``RaggedTensor.to_list()``."""

@overload
def parse_example(
    serialized: _Batch,
    features: _Features,
    example_names: Sequence[str] | None = None,
    name: str | None = None,
    num_threads: int = 1,
    *,
    strings: _NumpyStrings = "object",
) -> dict[str, _Tensor]:
    """``tf.io.parse_example``: a batch (list or array of ``bytes``) into a dict of tensors
    with a leading batch dimension. ``num_threads > 1`` parses on a thread pool. ``strings``:
    the form of string features (``"object"``, ``"numpy"`` or ``"arrow"``, see the module)."""
@overload
def parse_example(
    serialized: _Batch,
    features: _Features,
    example_names: Sequence[str] | None = None,
    name: str | None = None,
    num_threads: int = 1,
    *,
    strings: Literal["arrow"],
) -> dict[str, _ArrowTensor]: ...
@overload
def parse_single_example(
    serialized: _Single,
    features: _Features,
    example_names: Sequence[str] | None = None,
    name: str | None = None,
    *,
    strings: _NumpyStrings = "object",
) -> dict[str, _Tensor]:
    """``tf.io.parse_single_example``: one record, no batch dimension. ``strings``: the form of
    string features."""
@overload
def parse_single_example(
    serialized: _Single,
    features: _Features,
    example_names: Sequence[str] | None = None,
    name: str | None = None,
    *,
    strings: Literal["arrow"],
) -> dict[str, _ArrowTensor]: ...
@overload
def parse_sequence_example(
    serialized: _Batch,
    context_features: _Features | None = None,
    sequence_features: _Features | None = None,
    example_names: Sequence[str] | None = None,
    name: str | None = None,
    num_threads: int = 1,
    *,
    strings: _NumpyStrings = "object",
) -> tuple[dict[str, _Tensor], dict[str, _Tensor], dict[str, npt.NDArray[np.int64]]]:
    """``tf.io.parse_sequence_example``: ``(context, feature_lists, feature_list_lengths)``.
    ``strings``: the form of string features."""
@overload
def parse_sequence_example(
    serialized: _Batch,
    context_features: _Features | None = None,
    sequence_features: _Features | None = None,
    example_names: Sequence[str] | None = None,
    name: str | None = None,
    num_threads: int = 1,
    *,
    strings: Literal["arrow"],
) -> tuple[dict[str, _ArrowTensor], dict[str, _ArrowTensor], dict[str, npt.NDArray[np.int64]]]: ...
@overload
def parse_single_sequence_example(
    serialized: _Single,
    context_features: _Features | None = None,
    sequence_features: _Features | None = None,
    example_name: str | None = None,
    name: str | None = None,
    *,
    strings: _NumpyStrings = "object",
) -> tuple[dict[str, _Tensor], dict[str, _Tensor]]:
    """``tf.io.parse_single_sequence_example``: ``(context, feature_lists)``. ``strings``: the
    form of string features."""
@overload
def parse_single_sequence_example(
    serialized: _Single,
    context_features: _Features | None = None,
    sequence_features: _Features | None = None,
    example_name: str | None = None,
    name: str | None = None,
    *,
    strings: Literal["arrow"],
) -> tuple[dict[str, _ArrowTensor], dict[str, _ArrowTensor]]: ...

def serialize_tensor(tensor: npt.ArrayLike, name: str | None = None, dtype: _DTypeLike | None = None) -> bytes:
    """``tf.io.serialize_tensor``: TensorFlow's ``TensorProto`` bytes for an array.

    Python scalars and lists follow ``tf.constant``: ints become int32 and floats float32; a
    NumPy array keeps its dtype. Strings (``str`` is encoded as UTF-8) become a string tensor.
    ``dtype`` converts first (as ``tf.cast`` would); ``dtype="bfloat16"`` makes a bfloat16
    tensor from floats without needing a NumPy bfloat16 type.
    """

def parse_tensor(serialized: bytes | npt.NDArray[Any], out_type: _DTypeLike, name: str | None = None) -> npt.NDArray[Any]:
    """``tf.io.parse_tensor``: the array in ``TensorProto`` bytes, which must hold ``out_type``.

    ``bfloat16`` comes back as ``ml_dtypes.bfloat16`` when that package is installed, else as
    float32 (every bfloat16 value is exactly a float32).
    """

# Private helpers the data pipeline's Python parse stage shares (tfrec/_stages.py).
def _wrap_dict(d: dict[str, Any]) -> dict[str, Any]: ...
def _call_with_serialized(run: Callable[[Any], _T], serialized: object) -> _T: ...
def _sequence_parser(context_features: _Features | None, sequence_features: _Features | None) -> _tfrec.Parser: ...
def _parser(spec_json: str, sequence: bool) -> _tfrec.Parser: ...

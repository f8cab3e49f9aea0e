"""``tf.train`` messages without TensorFlow: ``Example``, ``SequenceExample`` and their parts.

The classes mirror protobuf's generated ones as the TFRecord notebook uses them (constructor
keywords, ``.value`` lists, ``SerializeToString``/``FromString``/``ParseFromString``,
``WhichOneof``, ``HasField``, ``str()`` as protobuf text format) and check values as protobuf
does: an ``Int64List`` rejects floats, a ``BytesList`` rejects ``str``, an int64 out of range is
a ``ValueError``. Encoding, decoding and rendering are done by the Rust library.
"""

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol, TypedDict

import numpy as np
import numpy.typing as npt
from typing_extensions import ReadOnly, Self, TypeAlias

class _Serializable(Protocol):
    """A message: ours, TensorFlow's ``tf.train.Example``, protobuf's."""

    def SerializeToString(self) -> bytes: ...

# The values of one feature as ``to_dict`` gives them.
_Values: TypeAlias = list[bytes] | list[float] | list[int]
# What ``Example.from_dict`` turns into one feature (the notebook's coercions).
_FeatureValue: TypeAlias = (
    Feature | npt.NDArray[Any] | str | bytes | float | np.generic | Iterable[str | bytes | float | np.generic] | None
)
_Kind: TypeAlias = Literal["bytes_list", "float_list", "int64_list"]

class _SequenceDict(TypedDict, total=False):
    context: dict[str, _Values]
    feature_lists: dict[str, list[_Values]]

class _SequenceDictIn(TypedDict, total=False):
    context: ReadOnly[Mapping[str, _FeatureValue]]
    feature_lists: ReadOnly[Mapping[str, Iterable[_FeatureValue]]]

class _List:
    value: list[Any]
    def __init__(self, value: Iterable[Any] | None = None) -> None: ...
    def __eq__(self, other: object) -> bool: ...

class BytesList(_List):
    """``tf.train.BytesList``: ``value`` is a list of ``bytes``."""

    value: list[bytes]
    def __init__(self, value: Iterable[bytes] | None = None) -> None: ...

class FloatList(_List):
    """``tf.train.FloatList``: ``value`` is a list of floats (stored as float32)."""

    value: list[float]
    def __init__(self, value: Iterable[float | np.floating[Any] | np.integer[Any]] | None = None) -> None: ...

class Int64List(_List):
    """``tf.train.Int64List``: ``value`` is a list of ints in the int64 range."""

    value: list[int]
    def __init__(self, value: Iterable[int | np.integer[Any] | np.bool_] | None = None) -> None: ...

class _Message:
    """What every message class shares: bytes in and out, text format, equality."""

    def SerializeToString(self, deterministic: bool | None = None) -> bytes: ...
    @classmethod
    def FromString(cls, serialized: bytes | bytearray | memoryview) -> Self: ...
    def ByteSize(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def to_json(self) -> str:
        """Protobuf's JSON mapping, as ``json_format.MessageToJson`` prints it."""
    def to_friendly_json(self) -> str:
        """One line: ``{"age": [19], "name": ["goat"]}`` (bytes as UTF-8 where valid)."""
    @classmethod
    def from_text(cls, text: str) -> Self:
        """A message from protobuf text format (what ``str()`` prints)."""
    @classmethod
    def from_message(cls, message: _Serializable | bytes) -> Self:
        """A copy of any message object with ``SerializeToString()`` (TensorFlow's own
        ``tf.train.Example``, protobuf's, or ours)."""

class Feature:
    """``tf.train.Feature``: one of ``bytes_list``, ``float_list``, ``int64_list``."""

    def __init__(
        self,
        bytes_list: BytesList | Iterable[bytes] | None = None,
        float_list: FloatList | Iterable[float] | None = None,
        int64_list: Int64List | Iterable[int] | None = None,
    ) -> None: ...
    def WhichOneof(self, name: Literal["kind"]) -> _Kind | None: ...
    def HasField(self, name: str) -> bool: ...
    @property
    def bytes_list(self) -> BytesList: ...
    @property
    def float_list(self) -> FloatList: ...
    @property
    def int64_list(self) -> Int64List: ...
    def __eq__(self, other: object) -> bool: ...
    def SerializeToString(self, deterministic: bool | None = None) -> bytes:
        """The ``Feature`` message's bytes (as protobuf writes them: packed numbers)."""
    @classmethod
    def FromString(cls, serialized: bytes) -> Feature: ...

class Features:
    """``tf.train.Features``: ``feature`` maps names to :class:`Feature`."""

    feature: dict[str, Feature]
    def __init__(self, feature: Mapping[str, Feature] | None = None) -> None: ...

class FeatureList:
    """``tf.train.FeatureList``: ``feature`` is a list of :class:`Feature`, one per step."""

    feature: list[Feature]
    def __init__(self, feature: Iterable[Feature] | None = None) -> None: ...

class FeatureLists:
    """``tf.train.FeatureLists``: ``feature_list`` maps names to :class:`FeatureList`."""

    feature_list: dict[str, FeatureList]
    def __init__(self, feature_list: Mapping[str, FeatureList] | None = None) -> None: ...

class Example(_Message):
    """``tf.train.Example``."""

    def __init__(self, features: Features | None = None) -> None: ...
    @property
    def features(self) -> Features: ...
    @features.setter
    def features(self, value: Features | None) -> None: ...
    def HasField(self, name: Literal["features"]) -> bool: ...
    def ParseFromString(self, serialized: bytes | bytearray | memoryview) -> int: ...
    def to_dict(self) -> dict[str, _Values]:
        """``{name: [values]}``: bytes as ``bytes``, floats and ints as Python numbers."""
    @classmethod
    def from_dict(cls, d: Mapping[str, _FeatureValue]) -> Self:
        """An Example from ``{name: value or list or ndarray}`` with the notebook's coercions."""
    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """From protobuf's JSON mapping (``MessageToJson``) or the friendly one-line form."""

class SequenceExample(_Message):
    """``tf.train.SequenceExample``: ``context`` features and ``feature_lists``."""

    def __init__(self, context: Features | None = None, feature_lists: FeatureLists | None = None) -> None: ...
    @property
    def context(self) -> Features: ...
    @context.setter
    def context(self, value: Features | None) -> None: ...
    @property
    def feature_lists(self) -> FeatureLists: ...
    @feature_lists.setter
    def feature_lists(self, value: FeatureLists | None) -> None: ...
    def HasField(self, name: Literal["context", "feature_lists"]) -> bool: ...
    def ParseFromString(self, serialized: bytes | bytearray | memoryview) -> int: ...
    def to_dict(self) -> _SequenceDict:
        """``{"context": {name: [values]}, "feature_lists": {name: [[values per step]...]}}``."""
    @classmethod
    def from_dict(cls, d: _SequenceDictIn | Mapping[str, Mapping[str, Any]]) -> Self:
        """From ``{"context": {...}, "feature_lists": {name: [step values...]}}``."""
    @classmethod
    def from_json(cls, text: str) -> Self:
        """From the friendly JSON form (``to_friendly_json``)."""

def as_bytes(message_or_bytes: _Serializable | bytes | bytearray | memoryview) -> bytes:
    """``bytes`` as they are; any message with ``SerializeToString()`` serialized."""

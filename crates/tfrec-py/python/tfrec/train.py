"""``tf.train`` messages without TensorFlow: ``Example``, ``SequenceExample`` and their parts.

The classes mirror protobuf's generated ones as the TFRecord notebook uses them (constructor
keywords, ``.value`` lists, ``SerializeToString``/``FromString``/``ParseFromString``,
``WhichOneof``, ``HasField``, ``str()`` as protobuf text format) and check values as protobuf
does: an ``Int64List`` rejects floats, a ``BytesList`` rejects ``str``, an int64 out of range is
a ``ValueError``. Encoding, decoding and rendering are done by the Rust library.
"""

import base64
import json
import numbers
import operator

import numpy as np

from . import _tfrec

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _describe(v):
    return f"{v!r} has type {type(v).__name__}"


def _check_int64(v):
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (float, np.floating, str, bytes)):
        raise TypeError(f"{_describe(v)}, but expected one of: int")
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"{_describe(v)}, but expected one of: int") from None
    if not _INT64_MIN <= i <= _INT64_MAX:
        raise ValueError(f"Value out of range: {i} does not fit in an int64")
    return i


def _check_float(v):
    if isinstance(v, (str, bytes)) or not isinstance(v, (numbers.Real, np.number, np.bool_)):
        raise TypeError(f"{_describe(v)}, but expected one of: int, float")
    return float(v)


def _check_bytes(v):
    if not isinstance(v, bytes):
        raise TypeError(f"{_describe(v)}, but expected one of: bytes")
    return v


def _values(value, check):
    if value is None:
        return []
    if isinstance(value, (bytes, str)) or not hasattr(value, "__iter__"):
        raise TypeError(f"value must be a list, not {type(value).__name__}")
    return [check(v) for v in value]


class _List:
    __slots__ = ("value",)
    _check = None

    def __init__(self, value=None):
        self.value = _values(value, type(self)._check)

    def __eq__(self, other):
        return type(self) is type(other) and self.value == other.value

    def __repr__(self):
        return f"{type(self).__name__}(value={self.value!r})"


class BytesList(_List):
    """``tf.train.BytesList``: ``value`` is a list of ``bytes``."""

    __slots__ = ()
    _check = staticmethod(_check_bytes)


class FloatList(_List):
    """``tf.train.FloatList``: ``value`` is a list of floats (stored as float32)."""

    __slots__ = ()
    _check = staticmethod(_check_float)


class Int64List(_List):
    """``tf.train.Int64List``: ``value`` is a list of ints in the int64 range."""

    __slots__ = ()
    _check = staticmethod(_check_int64)


_KINDS = {"bytes_list": BytesList, "float_list": FloatList, "int64_list": Int64List}


class _Message:
    """What every message class shares: bytes in and out, text format, equality."""

    _message_name = None

    def SerializeToString(self, deterministic=None):
        return self._encode()

    @classmethod
    def FromString(cls, serialized):
        msg = cls()
        msg.ParseFromString(serialized)
        return msg

    def ByteSize(self):
        return len(self.SerializeToString())

    def __str__(self):
        return _tfrec.message_to_text(self.SerializeToString(), self._message_name)

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return type(self) is type(other) and self.SerializeToString() == other.SerializeToString()

    def to_json(self):
        """Protobuf's JSON mapping, as ``json_format.MessageToJson`` prints it."""
        return _tfrec.message_to_json(self.SerializeToString(), self._message_name)

    def to_friendly_json(self):
        """One line: ``{"age": [19], "name": ["goat"]}`` (bytes as UTF-8 where valid)."""
        return _tfrec.message_to_friendly_json(self.SerializeToString(), self._message_name)

    @classmethod
    def from_text(cls, text):
        """A message from protobuf text format (what ``str()`` prints)."""
        return cls.FromString(_tfrec.message_from_text(text, cls._message_name))

    @classmethod
    def from_message(cls, message):
        """A copy of any message object with ``SerializeToString()`` (TensorFlow's own
        ``tf.train.Example``, protobuf's, or ours)."""
        return cls.FromString(as_bytes(message))


class Feature:
    """``tf.train.Feature``: one of ``bytes_list``, ``float_list``, ``int64_list``."""

    __slots__ = ("_kind", "_list")

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        given = [
            (k, v)
            for k, v in (("bytes_list", bytes_list), ("float_list", float_list), ("int64_list", int64_list))
            if v is not None
        ]
        if len(given) > 1:
            raise ValueError("a Feature holds one of bytes_list, float_list, int64_list")
        self._kind, self._list = given[0] if given else (None, None)
        if self._list is not None and not isinstance(self._list, _KINDS[self._kind]):
            self._list = _KINDS[self._kind](getattr(self._list, "value", self._list))

    def WhichOneof(self, name):
        if name != "kind":
            raise ValueError(f"Feature has no oneof {name!r}")
        return self._kind

    def HasField(self, name):
        return self._kind == name

    def _get(self, kind):
        if self._kind == kind:
            return self._list
        return _KINDS[kind]()

    @property
    def bytes_list(self):
        return self._get("bytes_list")

    @property
    def float_list(self):
        return self._get("float_list")

    @property
    def int64_list(self):
        return self._get("int64_list")

    def _plain(self):
        return self._kind, (self._list.value if self._list is not None else [])

    @classmethod
    def _from_plain(cls, kind, values):
        f = cls()
        if kind is not None:
            lst = _KINDS[kind].__new__(_KINDS[kind])
            lst.value = values
            f._kind, f._list = kind, lst
        return f

    def __eq__(self, other):
        return isinstance(other, Feature) and self._plain() == other._plain()

    def SerializeToString(self, deterministic=None):
        """The ``Feature`` message's bytes (as protobuf writes them: packed numbers)."""
        kind, values = self._plain()
        return _tfrec.encode_feature(kind, values)

    @classmethod
    def FromString(cls, serialized):
        return cls._from_plain(*_tfrec.decode_feature(as_bytes(serialized)))

    def __str__(self):
        ex = Example(features=Features(feature={"_": self}))
        text = str(ex)
        # The feature's own text: the body of the map entry's value, dedented.
        lines = text.splitlines()[4:-3]
        return "".join(line[6:] + "\n" for line in lines)

    __repr__ = __str__


class Features:
    """``tf.train.Features``: ``feature`` maps names to :class:`Feature`."""

    __slots__ = ("feature",)

    def __init__(self, feature=None):
        self.feature = dict(feature or {})
        for k, v in self.feature.items():
            if not isinstance(v, Feature):
                raise TypeError(f"feature {k!r} is {type(v).__name__}, expected tfrec.train.Feature")

    def _plain(self):
        return [(k, *v._plain()) for k, v in self.feature.items()]

    @classmethod
    def _from_plain(cls, plain):
        f = cls()
        f.feature = {k: Feature._from_plain(kind, values) for k, kind, values in plain}
        return f


class FeatureList:
    """``tf.train.FeatureList``: ``feature`` is a list of :class:`Feature`, one per step."""

    __slots__ = ("feature",)

    def __init__(self, feature=None):
        self.feature = list(feature or [])


class FeatureLists:
    """``tf.train.FeatureLists``: ``feature_list`` maps names to :class:`FeatureList`."""

    __slots__ = ("feature_list",)

    def __init__(self, feature_list=None):
        self.feature_list = dict(feature_list or {})


def _feature_from_value(key, value):
    """The notebook's coercions: bool/int -> int64, float -> float, str/bytes -> bytes; a list
    or NumPy array becomes a list feature; an int64 out of range raises."""
    if isinstance(value, Feature):
        return value
    if isinstance(value, np.ndarray):
        arr = value.ravel()
        if arr.dtype.kind in "iub":
            if arr.dtype.kind == "u" and arr.size and int(arr.max()) > _INT64_MAX:
                raise ValueError(f"feature {key!r}: {int(arr.max())} does not fit in an int64")
            return Feature._from_plain("int64_list", arr.astype(np.int64).tolist())
        if arr.dtype.kind == "f":
            return Feature._from_plain("float_list", arr.astype(np.float64).tolist())
        value = arr.tolist()
    elif isinstance(value, (str, bytes, numbers.Number, np.generic)) or value is None:
        value = [] if value is None else [value]
    values = list(value)
    if not values:
        return Feature()
    if all(isinstance(v, (bytes, str, np.bytes_, np.str_)) for v in values):
        return Feature._from_plain("bytes_list", [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values])
    if all(isinstance(v, (bool, np.bool_, numbers.Integral, np.integer)) for v in values):
        try:
            return Feature._from_plain("int64_list", [_check_int64(int(v)) for v in values])
        except ValueError as e:
            raise ValueError(f"feature {key!r}: {e}") from None
    if all(isinstance(v, (numbers.Real, np.number, np.bool_)) for v in values):
        return Feature._from_plain("float_list", [float(v) for v in values])
    kinds = sorted({type(v).__name__ for v in values})
    raise TypeError(f"feature {key!r}: cannot make one feature of values of types {', '.join(kinds)}")


def _plain_values(feature):
    return list(feature._list.value) if feature._list is not None else []


class Example(_Message):
    """``tf.train.Example``."""

    __slots__ = ("_features",)
    _message_name = "Example"

    def __init__(self, features=None):
        if features is not None and not isinstance(features, Features):
            raise TypeError(f"features must be tfrec.train.Features, not {type(features).__name__}")
        self._features = features

    @property
    def features(self):
        if self._features is None:
            self._features = Features()
        return self._features

    @features.setter
    def features(self, value):
        self._features = value

    def HasField(self, name):
        if name != "features":
            raise ValueError(f"Example has no field {name!r}")
        return self._features is not None

    def _encode(self):
        return _tfrec.encode_example(None if self._features is None else self._features._plain())

    def ParseFromString(self, serialized):
        plain = _tfrec.decode_example(as_bytes(serialized))
        self._features = None if plain is None else Features._from_plain(plain)
        return len(serialized)

    def to_dict(self):
        """``{name: [values]}``: bytes as ``bytes``, floats and ints as Python numbers."""
        if self._features is None:
            return {}
        return {k: _plain_values(f) for k, f in self._features.feature.items()}

    @classmethod
    def from_dict(cls, d):
        """An Example from ``{name: value or list or ndarray}`` with the notebook's coercions."""
        return cls(features=Features(feature={k: _feature_from_value(k, v) for k, v in d.items()}))

    @classmethod
    def from_json(cls, text):
        """From protobuf's JSON mapping (``MessageToJson``) or the friendly one-line form."""
        obj = json.loads(text)
        if isinstance(obj, dict) and set(obj) <= {"features"} and _is_proto_features(obj.get("features", {})):
            return cls(features=None if "features" not in obj else _features_from_proto_json(obj["features"]))
        return cls.FromString(_tfrec.message_from_friendly_json(text, "Example"))


class SequenceExample(_Message):
    """``tf.train.SequenceExample``: ``context`` features and ``feature_lists``."""

    __slots__ = ("_context", "_feature_lists")
    _message_name = "SequenceExample"

    def __init__(self, context=None, feature_lists=None):
        self._context = context
        self._feature_lists = feature_lists

    @property
    def context(self):
        if self._context is None:
            self._context = Features()
        return self._context

    @context.setter
    def context(self, value):
        self._context = value

    @property
    def feature_lists(self):
        if self._feature_lists is None:
            self._feature_lists = FeatureLists()
        return self._feature_lists

    @feature_lists.setter
    def feature_lists(self, value):
        self._feature_lists = value

    def HasField(self, name):
        if name == "context":
            return self._context is not None
        if name == "feature_lists":
            return self._feature_lists is not None
        raise ValueError(f"SequenceExample has no field {name!r}")

    def _encode(self):
        context = None if self._context is None else self._context._plain()
        lists = None
        if self._feature_lists is not None:
            lists = [(k, [f._plain() for f in fl.feature]) for k, fl in self._feature_lists.feature_list.items()]
        return _tfrec.encode_sequence_example(context, lists)

    def ParseFromString(self, serialized):
        context, lists = _tfrec.decode_sequence_example(as_bytes(serialized))
        self._context = None if context is None else Features._from_plain(context)
        if lists is None:
            self._feature_lists = None
        else:
            self._feature_lists = FeatureLists(
                {k: FeatureList([Feature._from_plain(kind, v) for kind, v in steps]) for k, steps in lists}
            )
        return len(serialized)

    def to_dict(self):
        """``{"context": {name: [values]}, "feature_lists": {name: [[values per step]...]}}``."""
        out = {}
        if self._context is not None:
            out["context"] = {k: _plain_values(f) for k, f in self._context.feature.items()}
        if self._feature_lists is not None:
            out["feature_lists"] = {
                k: [_plain_values(f) for f in fl.feature] for k, fl in self._feature_lists.feature_list.items()
            }
        return out

    @classmethod
    def from_dict(cls, d):
        """From ``{"context": {...}, "feature_lists": {name: [step values...]}}``."""
        context = d.get("context")
        lists = d.get("feature_lists")
        return cls(
            context=None
            if context is None
            else Features(feature={k: _feature_from_value(k, v) for k, v in context.items()}),
            feature_lists=None
            if lists is None
            else FeatureLists(
                {k: FeatureList([_feature_from_value(k, step) for step in steps]) for k, steps in lists.items()}
            ),
        )

    @classmethod
    def from_json(cls, text):
        """From the friendly JSON form (``to_friendly_json``)."""
        return cls.FromString(_tfrec.message_from_friendly_json(text, "SequenceExample"))


def _is_proto_features(obj):
    return isinstance(obj, dict) and set(obj) <= {"feature"}


def _features_from_proto_json(obj):
    features = {}
    for name, f in obj.get("feature", {}).items():
        if "bytesList" in f:
            features[name] = Feature._from_plain(
                "bytes_list", [base64.b64decode(v) for v in f["bytesList"].get("value", [])]
            )
        elif "floatList" in f:
            # float() reads the mapping's "NaN", "Infinity" and "-Infinity" strings.
            features[name] = Feature._from_plain("float_list", [float(v) for v in f["floatList"].get("value", [])])
        elif "int64List" in f:
            features[name] = Feature._from_plain("int64_list", [int(v) for v in f["int64List"].get("value", [])])
        else:
            features[name] = Feature()
    return Features._from_plain([(k, *v._plain()) for k, v in features.items()])


def as_bytes(message_or_bytes):
    """``bytes`` as they are; any message with ``SerializeToString()`` serialized."""
    if isinstance(message_or_bytes, bytes):
        return message_or_bytes
    serialize = getattr(message_or_bytes, "SerializeToString", None)
    if serialize is not None:
        return serialize()
    if isinstance(message_or_bytes, (bytearray, memoryview)):
        return bytes(message_or_bytes)
    raise TypeError(f"expected bytes or a message with SerializeToString(), not {type(message_or_bytes).__name__}")


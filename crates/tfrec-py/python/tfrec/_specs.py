"""Feature specs in their JSON form, the one form a spec crosses into the extension in:
``tfrec.io`` spec objects, TensorFlow's own (by duck typing: the same class names), or dicts
already in that form."""

import json
import math
import numbers

import numpy as np

from ._dtypes import dtype_name

_PARTITION_KINDS = {
    "RowSplits": "row_splits",
    "RowLengths": "row_lengths",
    "RowStarts": "row_starts",
    "RowLimits": "row_limits",
    "ValueRowIds": "value_row_ids",
    "UniformRowLength": "uniform_row_length",
}

def _shape(shape, key):
    if shape is None:
        return None
    if hasattr(shape, "as_list"):  # tf.TensorShape
        shape = shape.as_list()
    if isinstance(shape, numbers.Integral):
        return [int(shape)]
    try:
        return [None if d is None else int(d) for d in shape]
    except TypeError:
        raise ValueError(f"feature {key}: shape must be a list of ints, not {shape!r}") from None


def _json_value(v):
    """A default value as the JSON spec form writes it."""
    if hasattr(v, "numpy") and not isinstance(v, np.ndarray):  # a tf.Tensor
        v = v.numpy()
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, (bytes, np.bytes_)):
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            import base64

            return {"base64": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (numbers.Integral, np.integer)):
        return int(v)
    if isinstance(v, (numbers.Real, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return f
    return v


def _spec_kind(spec):
    """The spec's type name: ours, TensorFlow's (same class names), or a stand-in's."""
    return type(spec).__name__


def spec_to_json(key, spec):
    """One spec in the JSON spec form (the golden vectors' and the CLI's)."""
    kind = _spec_kind(spec)
    if kind == "FixedLenFeature":
        return {
            "type": kind,
            "shape": _shape(spec.shape, key),
            "dtype": dtype_name(spec.dtype),
            "default_value": None if spec.default_value is None else _json_value(spec.default_value),
        }
    if kind == "FixedLenSequenceFeature":
        return {
            "type": kind,
            "shape": _shape(spec.shape, key),
            "dtype": dtype_name(spec.dtype),
            "allow_missing": bool(spec.allow_missing),
            "default_value": None if spec.default_value is None else _json_value(spec.default_value),
        }
    if kind == "VarLenFeature":
        return {"type": kind, "dtype": dtype_name(spec.dtype)}
    if kind == "SparseFeature":
        size = spec.size
        size = list(size) if isinstance(size, (list, tuple)) else size
        return {
            "type": kind,
            "index_key": spec.index_key if isinstance(spec.index_key, str) else list(spec.index_key),
            "value_key": spec.value_key,
            "dtype": dtype_name(spec.dtype),
            "size": size,
            "already_sorted": bool(spec.already_sorted),
        }
    if kind == "RaggedFeature":
        partitions = []
        for p in spec.partitions or ():
            pkind = _PARTITION_KINDS.get(type(p).__name__)
            if pkind is None:
                raise ValueError(f"feature {key}: unknown ragged partition {p!r}")
            if pkind == "uniform_row_length":
                partitions.append({"kind": pkind, "length": int(p.length)})
            else:
                partitions.append({"kind": pkind, "key": p.key})
        return {
            "type": kind,
            "dtype": dtype_name(spec.dtype),
            "value_key": spec.value_key,
            "partitions": partitions,
            "row_splits_dtype": dtype_name(spec.row_splits_dtype),
            "validate": bool(spec.validate),
        }
    if isinstance(spec, dict) and "type" in spec:  # already in the JSON form
        return spec
    raise ValueError(f"feature {key}: unsupported feature spec {spec!r}")


def specs_to_json(features):
    if features is None:
        return {}
    if not isinstance(features, dict):
        raise TypeError(f"features must be a dict of name -> spec, not {type(features).__name__}")
    return {str(k): spec_to_json(k, v) for k, v in features.items()}



def spec_dict(spec):
    """The JSON spec form of ``spec``: a dict of ``tfrec.io`` spec objects, a dict already in
    the JSON form, or a sequence spec ``{"context_features": …, "sequence_features": …}``."""
    if isinstance(spec, (str, bytes)):
        return json.loads(spec)
    spec = dict(spec)
    if "context_features" in spec or "sequence_features" in spec:
        return {part: spec_dict(spec.get(part) or {}) for part in ("context_features", "sequence_features")}
    if all(isinstance(v, dict) for v in spec.values()):
        return spec
    return specs_to_json(spec)


def specs_json(features):
    """``features`` (a dict of specs) as the JSON text the extension reads."""
    return json.dumps(specs_to_json(features))


def sequence_specs_json(context_features, sequence_features):
    """A SequenceExample's two dicts of specs as the JSON text the extension reads."""
    return json.dumps(
        {"context_features": specs_to_json(context_features), "sequence_features": specs_to_json(sequence_features)}
    )

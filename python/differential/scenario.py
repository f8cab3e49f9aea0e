"""One random scenario: an op, a spec (in the golden JSON form) and serialized records.

``scenario(seed, case)`` is a pure function of its arguments. Records are drawn from the
spec (so most scenarios parse), with the usual accidents mixed in: missing and empty features,
a wrong kind, counts off by one, partition values that do not describe the values.
"""

import base64
import random

from . import wire

OPS = ["parse_example", "parse_single_example", "parse_sequence_example", "parse_single_sequence_example"]
KEYS = ["a", "b", "v", "p", "q", "ln", "", "s.t", "é"]
DTYPES = ["int64", "float32", "string"]
KIND = {"int64": "int64", "float32": "float", "string": "bytes"}
PARTITION_KINDS = ["row_splits", "row_lengths", "row_starts", "row_limits", "value_row_ids", "uniform_row_length"]
SHAPES = [[], [1], [2], [2, 1], [0], [1, 2]]


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _default(rng, dtype, n):
    if dtype == "int64":
        vals = [rng.choice([0, -1, 7, 2**63 - 1]) for _ in range(n)]
    elif dtype == "float32":
        vals = [rng.choice([0.0, -0.0, 1.5, "NaN", "-Infinity"]) for _ in range(n)]
    else:
        vals = [rng.choice(["", "d", {"base64": base64.b64encode(b"\xff").decode()}]) for _ in range(n)]
    return vals


class Schema:
    """The dtype each key's values have (partition keys are int64)."""

    def __init__(self, rng):
        self.dtype = {k: rng.choice(DTYPES) for k in KEYS}
        self.role = {}  # key -> ("fixed", stride) | ("partition", kind) | ("values",)

    def pick_dtype(self, rng, key):
        if rng.random() < 0.05:
            return rng.choice(DTYPES)
        return self.dtype[key]


def _ragged(rng, schema, name, keys):
    value_key = None if rng.random() < 0.5 else rng.choice(keys)
    vk = name if value_key is None else value_key
    dtype = schema.pick_dtype(rng, vk)
    schema.role.setdefault(vk, ("values",))
    parts = []
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
        kind = rng.choice(PARTITION_KINDS)
        if kind == "uniform_row_length":
            parts.append({"kind": kind, "length": rng.choice([0, 1, 2, 2, 3])})
        else:
            key = rng.choice(keys)
            schema.dtype[key] = "int64" if rng.random() < 0.95 else schema.dtype[key]
            schema.role[key] = ("partition", kind)
            parts.append({"kind": kind, "key": key})
    return {
        "type": "RaggedFeature",
        "dtype": dtype,
        "value_key": value_key,
        "partitions": parts,
        "row_splits_dtype": rng.choice(["int32", "int64"]),
        "validate": rng.random() < 0.4,
    }


def _example_spec(rng, schema, name, kinds):
    t = rng.choice(kinds)
    if t == "FixedLenFeature":
        shape = rng.choice(SHAPES)
        dtype = schema.pick_dtype(rng, name)
        schema.role[name] = ("fixed", _count(shape))
        default = None
        if rng.random() < 0.4:
            n = _count(shape) if rng.random() < 0.9 else _count(shape) + 1
            default = _default(rng, dtype, n)
        return {"type": t, "shape": shape, "dtype": dtype, "default_value": default}
    if t == "FixedLenSequenceFeature":
        shape = rng.choice([[], [2], [1]])
        schema.role[name] = ("seq", _count(shape))
        dtype = schema.pick_dtype(rng, name)
        default = _default(rng, dtype, 1)[0] if rng.random() < 0.2 else None
        return {"type": t, "shape": shape, "dtype": dtype, "allow_missing": rng.random() < 0.85, "default_value": default}
    if t == "VarLenFeature":
        return {"type": t, "dtype": schema.pick_dtype(rng, name)}
    if t == "SparseFeature":
        r = rng.random()
        if r < 0.05:
            index_key = [""]
        elif r < 0.6:
            index_key = rng.choice(KEYS)
        else:
            index_key = rng.sample(KEYS, rng.choice([1, 2]))
        for k in [index_key] if isinstance(index_key, str) else index_key:
            schema.dtype[k] = "int64" if rng.random() < 0.95 else schema.dtype[k]
            schema.role[k] = ("index",)
        n = 1 if isinstance(index_key, str) else len(index_key)
        size = [rng.choice([1, 3, 5]) if rng.random() < 0.97 else -1 for _ in range(n)]
        value_key = rng.choice(KEYS)
        return {
            "type": t,
            "index_key": index_key,
            "value_key": value_key,
            "dtype": schema.pick_dtype(rng, value_key),
            "size": size[0] if isinstance(index_key, str) and rng.random() < 0.5 else size,
            "already_sorted": rng.random() < 0.3,
        }
    return _ragged(rng, schema, name, KEYS)


def _values(rng, schema, key, kind):
    role = schema.role.get(key, ("values",))
    if kind == "int64" and role[0] in ("partition", "index") and rng.random() < 0.85:
        n = rng.choice([0, 1, 2, 3])
        if role[0] == "index":
            return [rng.randrange(-1, 6) for _ in range(n)] if rng.random() < 0.1 else [rng.randrange(0, 5) for _ in range(n)]
        pk = role[1]
        vals = sorted(rng.randrange(0, 5) for _ in range(n))
        if pk == "row_splits":
            return [0] + vals if rng.random() < 0.9 else vals
        if pk == "row_lengths":
            return [rng.randrange(0, 3) for _ in range(n)]
        if pk == "row_starts":
            return ([0] + vals)[: max(n, 1)] if rng.random() < 0.9 else vals
        return vals if rng.random() < 0.9 else [rng.randrange(-2, 5) for _ in range(n)]
    if role[0] in ("fixed", "seq") and rng.random() < 0.85:
        stride = role[1]
        n = stride if role[0] == "fixed" else stride * rng.choice([0, 1, 2])
    else:
        n = rng.choice([0, 1, 2, 3, 4, 6])
    return [wire.draw_value(rng, kind) for _ in range(n)]


def _feature(rng, schema, key):
    r = rng.random()
    if r < 0.03:
        return None  # no kind set
    kind = KIND[schema.dtype[key]] if r < 0.96 else rng.choice(["int64", "float", "bytes"])
    return (kind, _values(rng, schema, key, kind))


def _features(rng, schema):
    out = {}
    for key in rng.sample(KEYS, len(KEYS)):
        if rng.random() < (0.8 if key in schema.role else 0.15):
            out[key] = _feature(rng, schema, key)
    return out


def _lists(rng, schema):
    out = {}
    for key in rng.sample(KEYS, len(KEYS)):
        if rng.random() < (0.75 if key in schema.role else 0.1):
            out[key] = [_feature(rng, schema, key) if rng.random() < 0.9 else None for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    return out


def _names(rng, n):
    return rng.sample(KEYS, n)


def scenario(seed, case):
    rng = random.Random(f"tfrec-diff:{seed}:{case}")
    op = rng.choice(OPS)
    canonical = rng.random() < 0.6
    schema = Schema(rng)
    sequence = "sequence" in op
    if sequence:
        ctx_schema, seq_schema = schema, Schema(rng)
        context = {
            n: _example_spec(rng, ctx_schema, n, ["FixedLenFeature", "VarLenFeature", "RaggedFeature"])
            for n in _names(rng, rng.choice([0, 1, 1, 2]))
        }
        sequence_features = {
            n: _example_spec(rng, seq_schema, n, ["FixedLenSequenceFeature", "VarLenFeature", "RaggedFeature"])
            for n in _names(rng, rng.choice([0, 1, 2, 2]))
        }
        if rng.random() < 0.01:
            kinds = ["SparseFeature", "FixedLenSequenceFeature"]
            context[rng.choice(KEYS)] = _example_spec(rng, ctx_schema, "a", kinds)
        for spec in sequence_features.values():
            if spec["type"] == "FixedLenSequenceFeature" and rng.random() < 0.9:
                spec["default_value"] = None
        spec = {"context_features": context, "sequence_features": sequence_features}
    else:
        kinds = ["FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "SparseFeature", "RaggedFeature"]
        spec = {"features": {n: _example_spec(rng, schema, n, kinds) for n in _names(rng, rng.choice([1, 1, 2, 3]))}}
        if rng.random() < 0.01:
            spec["features"] = {}
    batch = 1 if "single" in op else rng.choice([0, 1, 2, 2, 3, 4])
    records = []
    for _ in range(batch):
        if rng.random() < 0.02:
            records.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))))
            continue
        if sequence:
            records.append(
                wire.encode_sequence_example(rng, _features(rng, ctx_schema), _lists(rng, seq_schema), canonical)
            )
        else:
            records.append(wire.encode_example(rng, _features(rng, schema), canonical))
    case_json = {"id": f"diff/{seed}/{case}", "op": op, "serialized": [base64.b64encode(r).decode() for r in records]}
    case_json.update(spec)
    return case_json

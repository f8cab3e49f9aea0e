"""TensorFlow 2.21 as the oracle: a case (golden JSON form, without its answer) in, the
golden ``expected`` / ``error`` (and ``lenient``) out."""

import base64
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf.message import DecodeError  # noqa: E402

from .wire import ld  # noqa: E402

tf.get_logger().setLevel("ERROR")

PARTITIONS = {
    "row_splits": tf.io.RaggedFeature.RowSplits,
    "row_lengths": tf.io.RaggedFeature.RowLengths,
    "row_starts": tf.io.RaggedFeature.RowStarts,
    "row_limits": tf.io.RaggedFeature.RowLimits,
    "value_row_ids": tf.io.RaggedFeature.ValueRowIds,
}
DTYPES = {"int64": tf.int64, "float32": tf.float32, "string": tf.string, "int32": tf.int32}


def _value(v, dtype):
    if isinstance(v, list):
        return [_value(x, dtype) for x in v]
    if isinstance(v, dict):
        return base64.b64decode(v["base64"])
    if dtype == "string":
        return v.encode() if isinstance(v, str) else v
    if isinstance(v, str):
        return float(v)
    return v


def tf_spec(s):
    t, dtype = s["type"], DTYPES.get(s.get("dtype"), s.get("dtype"))
    default = s.get("default_value")
    if default is not None:
        default = _value(default, s.get("dtype"))
        if s.get("dtype") == "float32":
            # Not a Python float: TF caches eager constants of Python scalars by value, and
            # -0.0 == 0.0, so a -0.0 default could come back as an earlier 0.0.
            default = np.asarray(default, dtype=np.float32)
    if t == "FixedLenFeature":
        return tf.io.FixedLenFeature(s["shape"], dtype, default)
    if t == "FixedLenSequenceFeature":
        return tf.io.FixedLenSequenceFeature(s["shape"], dtype, s.get("allow_missing", False), default)
    if t == "VarLenFeature":
        return tf.io.VarLenFeature(dtype)
    if t == "SparseFeature":
        return tf.io.SparseFeature(s["index_key"], s["value_key"], dtype, s["size"], s.get("already_sorted", False))
    parts = [
        tf.io.RaggedFeature.UniformRowLength(p["length"]) if p["kind"] == "uniform_row_length" else PARTITIONS[p["kind"]](p["key"])
        for p in s.get("partitions") or []
    ]
    return tf.io.RaggedFeature(
        dtype, s.get("value_key"), parts, DTYPES[s.get("row_splits_dtype", "int32")], s.get("validate", False)
    )


def _specs(d):
    return None if d is None else {k: tf_spec(v) for k, v in d.items()}


def _scalar(v, dtype):
    if dtype == "float32":
        f = float(v)
        if f != f:
            return "NaN"
        if f in (float("inf"), float("-inf")):
            return "Infinity" if f > 0 else "-Infinity"
        return f
    if dtype == "string":
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(v).decode()}
    return int(v)


def _dtype(t):
    return {tf.int64: "int64", tf.float32: "float32", tf.string: "string", tf.int32: "int32"}[t]


def _dense(t):
    a = t.numpy() if hasattr(t, "numpy") else np.asarray(t)
    dtype = _dtype(t.dtype)
    return {"kind": "dense", "dtype": dtype, "shape": list(a.shape), "values": [_scalar(v, dtype) for v in a.ravel().tolist()]}


def tensor_json(t):
    if isinstance(t, tf.SparseTensor):
        dtype = _dtype(t.values.dtype)
        return {
            "kind": "sparse",
            "dtype": dtype,
            "indices": t.indices.numpy().tolist(),
            "values": [_scalar(v, dtype) for v in t.values.numpy().tolist()],
            "dense_shape": t.dense_shape.numpy().tolist(),
        }
    if isinstance(t, tf.RaggedTensor):
        splits, uniform, rt = [], [], t
        while isinstance(rt, tf.RaggedTensor):
            splits.append(rt.row_splits.numpy().tolist())
            u = rt.uniform_row_length
            uniform.append(None if u is None else int(u.numpy()))
            rt = rt.values
        return {
            "kind": "ragged",
            "dtype": _dtype(t.dtype),
            "row_splits_dtype": _dtype(t.row_splits.dtype),
            "nested_row_splits": splits,
            "uniform_row_lengths": uniform,
            "flat_values": _dense(rt),
        }
    return _dense(t)


def _strip(message):
    """TF's message without the op-name prefix and the ``[Op:...]`` suffix."""
    message = message.split(" [Op:")[0].strip()
    if message.startswith("{{function_node"):
        message = message.split("}}", 1)[-1].strip()
    return message


def run_tf(case, serialized):
    op = case["op"]
    if op in ("parse_example", "parse_single_example"):
        feats = _specs(case["features"])
        if op == "parse_example":
            out = tf.io.parse_example(tf.constant(serialized, dtype=tf.string, shape=[len(serialized)]), feats)
        else:
            out = tf.io.parse_single_example(tf.constant(serialized[0]), feats)
        return {"features": {k: tensor_json(v) for k, v in out.items()}}
    ctx, seq = _specs(case.get("context_features")), _specs(case.get("sequence_features"))
    if op == "parse_sequence_example":
        c, f, n = tf.io.parse_sequence_example(
            tf.constant(serialized, dtype=tf.string, shape=[len(serialized)]), ctx, seq
        )
        return {
            "context": {k: tensor_json(v) for k, v in c.items()},
            "feature_lists": {k: tensor_json(v) for k, v in f.items()},
            "lengths": {k: tensor_json(v) for k, v in n.items()},
        }
    c, f = tf.io.parse_single_sequence_example(tf.constant(serialized[0]), ctx, seq)
    return {"context": {k: tensor_json(v) for k, v in c.items()}, "feature_lists": {k: tensor_json(v) for k, v in f.items()}}


def answer(case, serialized):
    """``(expected, error)`` of TensorFlow on these records."""
    try:
        return run_tf(case, serialized), None
    except Exception as e:  # noqa: BLE001 - every TF failure is an answer
        name = type(e).__name__
        message = _strip(getattr(e, "message", None) or str(e))
        return None, {"class": name, "message": message}


def _fields(data):
    """The (field number, wire type, payload) of each field of a message's bytes, in order."""
    at, out = 0, []

    def read_varint():
        nonlocal at
        n, shift = 0, 0
        while True:
            b = data[at]
            at += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return n

    while at < len(data):
        key = read_varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            start = at
            read_varint()
            out.append((field, wire, data[start:at]))
        elif wire == 1:
            out.append((field, wire, data[at : at + 8]))
            at += 8
        elif wire == 2:
            n = read_varint()
            out.append((field, wire, data[at : at + n]))
            at += n
        elif wire == 5:
            out.append((field, wire, data[at : at + 4]))
            at += 4
        else:
            raise ValueError("groups are not walked")
    return out


def _keys_in_wire_order(maps, read_map):
    """The keys of a protobuf map spread over the given map-holding messages, each at its last
    occurrence in wire order (where the last duplicate, the one protobuf keeps, stands);
    ``read_map`` reads one entry (as a one-entry map message) into its map."""
    keys = []
    for data in maps:
        for field, wire, entry in _fields(data):
            if field == 1 and wire == 2:
                key = next(iter(read_map(ld(1, entry))), "")
                if key in keys:
                    keys.remove(key)
                keys.append(key)
    return keys


def _canonical_map(keys, values):
    """Map entries in the given key order, each value the protobuf library's own encoding."""
    return b"".join(ld(1, ld(1, k.encode()) + ld(2, values[k].SerializeToString(deterministic=True))) for k in keys)


def _canonical(msg, s, sequence):
    """The record as protobuf reads it, written as TF's fast parser expects (one packed block
    per list, no unknown fields, one map field), with the map entries in the wire order of the
    original (each key at its last occurrence): protobuf's own serialisation would reorder
    them and with them the order TensorFlow checks features in."""
    top = _fields(s)
    if not sequence:
        maps = [p for f, w, p in top if f == 1 and w == 2]
        keys = _keys_in_wire_order(maps, lambda b: tf.train.Features.FromString(b).feature)
        return ld(1, _canonical_map(keys, msg.features.feature)) if msg.HasField("features") else b""
    out = b""
    if msg.HasField("context"):
        maps = [p for f, w, p in top if f == 1 and w == 2]
        keys = _keys_in_wire_order(maps, lambda b: tf.train.Features.FromString(b).feature)
        out += ld(1, _canonical_map(keys, msg.context.feature))
    if msg.HasField("feature_lists"):
        maps = [p for f, w, p in top if f == 2 and w == 2]
        keys = _keys_in_wire_order(maps, lambda b: tf.train.FeatureLists.FromString(b).feature_list)
        out += ld(2, _canonical_map(keys, msg.feature_lists.feature_list))
    return out


def reencoded(case, serialized):
    """The records as protobuf reads them, in the encoding TF's fast parser reads the same way
    (see ``_canonical``), or None when protobuf refuses them or they come out the same."""
    sequence = "sequence" in case["op"]
    cls = tf.train.SequenceExample if sequence else tf.train.Example
    out = []
    for s in serialized:
        try:
            msg = cls.FromString(s)
        except (DecodeError, RuntimeError, ValueError):
            # Left as it is: both readers refuse it (or TF reads it otherwise; see
            # compare.deviation).
            out.append(s)
            continue
        # TF's fast parser refuses unknown fields where protobuf keeps them.
        msg.DiscardUnknownFields()
        try:
            out.append(_canonical(msg, s, sequence))
        except (ValueError, IndexError):
            # Groups in unknown fields: protobuf's own order.
            out.append(msg.SerializeToString(deterministic=True))
    return None if out == list(serialized) else out


def _same_answer(a, b):
    """Answers compared as the golden rules compare them: floats bit for bit (-0.0 is not 0.0)."""
    import json

    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _protobuf_reads(case, s):
    cls = tf.train.SequenceExample if "sequence" in case["op"] else tf.train.Example
    try:
        cls.FromString(s)
        return True
    except (DecodeError, RuntimeError, ValueError):
        return False


def solve(case):
    """The case with TF's ``expected``, ``error`` and, for non-canonical bytes TF's fast parser
    reads otherwise than protobuf, the ``lenient`` answer."""
    serialized = [base64.b64decode(s) for s in case["serialized"]]
    case = dict(case)
    case["expected"], case["error"] = answer(case, serialized)
    refused = [i for i, s in enumerate(serialized) if not _protobuf_reads(case, s)]
    if refused:
        case["protobuf_refuses"] = refused
    again = reencoded(case, serialized)
    if again is not None:
        expected, error = answer(case, again)
        if not _same_answer((expected, error), (case["expected"], case["error"])):
            case["lenient"] = {"expected": expected, "error": error}
    return case


class Isolated:
    """``solve`` in a child process (``differential.worker``), so that a TensorFlow crash is an
    answer (error class ``crash``, as in the golden README) rather than the end of the run."""

    def __init__(self):
        self.child = None

    def _start(self):
        import pathlib
        import subprocess
        import sys

        tests = pathlib.Path(__file__).resolve().parents[1]  # the directory holding this package
        env = dict(os.environ, PYTHONPATH=str(tests) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.child = subprocess.Popen(
            [sys.executable, "-m", "differential.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=tests,
            env=env,
            text=True,
        )

    def solve(self, case):
        import json

        if self.child is None or self.child.poll() is not None:
            self._start()
        try:
            self.child.stdin.write(json.dumps(case) + "\n")
            self.child.stdin.flush()
            line = self.child.stdout.readline()
        except BrokenPipeError:
            line = ""
        if line:
            return json.loads(line)
        code = self.child.wait()
        self.child = None
        case = dict(case)
        case["expected"], case["error"] = None, {"class": "crash", "message": f"TensorFlow crashed (exit {code})"}
        return case

    def close(self):
        if self.child is not None:
            self.child.stdin.close()
            self.child.wait()
            self.child = None

"""Every case of ``parse_cases.jsonl`` through the Python API (spec objects built with
``tfrec.io``'s classes, outputs as NumPy arrays / SparseTensor / RaggedTensor), under the
golden README's matching rules: tensors exact (floats bit for bit, NaN equal to NaN); where TF
failed, an exception naming what TF's message names and of the same kind."""

import base64
import json
import math

import numpy as np
import pytest

import tfrec
from tfrec import io

from conftest import REPO, golden_lines, summary

CASES = golden_lines("parse_cases.jsonl")
# The project's own regression cases (TensorFlow's answers, golden format), whatever golden
# set TFREC_GOLDEN_DIR points at.
REGRESSIONS = [
    json.loads(line)
    for line in (REPO / "testdata" / "regressions" / "parse_cases.jsonl").read_text().splitlines()
    if line.strip()
]
RESULTS = {}

PARTITIONS = {
    "row_splits": io.RaggedFeature.RowSplits,
    "row_lengths": io.RaggedFeature.RowLengths,
    "row_starts": io.RaggedFeature.RowStarts,
    "row_limits": io.RaggedFeature.RowLimits,
    "value_row_ids": io.RaggedFeature.ValueRowIds,
}


def value_of(v, dtype):
    """A golden JSON value as the Python value a user would write."""
    if isinstance(v, list):
        return [value_of(x, dtype) for x in v]
    if isinstance(v, dict):
        return base64.b64decode(v["base64"])
    if dtype == "string":
        return v.encode("utf-8") if isinstance(v, str) else v
    if isinstance(v, str):
        return float(v)  # "NaN", "Infinity", "-Infinity"
    return v


def spec_of(s):
    t, dtype = s["type"], s.get("dtype")
    default = s.get("default_value")
    default = None if default is None else value_of(default, dtype)
    if t == "FixedLenFeature":
        return io.FixedLenFeature(s["shape"], dtype, default)
    if t == "FixedLenSequenceFeature":
        return io.FixedLenSequenceFeature(s["shape"], dtype, s.get("allow_missing", False), default)
    if t == "VarLenFeature":
        return io.VarLenFeature(dtype)
    if t == "SparseFeature":
        return io.SparseFeature(s["index_key"], s["value_key"], dtype, s["size"], s.get("already_sorted", False))
    if t == "RaggedFeature":
        parts = [
            io.RaggedFeature.UniformRowLength(p["length"])
            if p["kind"] == "uniform_row_length"
            else PARTITIONS[p["kind"]](p["key"])
            for p in s.get("partitions") or []
        ]
        return io.RaggedFeature(
            dtype, s.get("value_key"), parts, s.get("row_splits_dtype", "int32"), s.get("validate", False)
        )
    raise AssertionError(f"unknown spec type {t}")


def specs_of(d):
    return None if d is None else {k: spec_of(v) for k, v in d.items()}


def dtype_of(arr):
    return {"int64": "int64", "float32": "float32", "object": "string", "int32": "int32"}[arr.dtype.name]


def dense_json(arr):
    arr = np.asarray(arr)
    return {"kind": "dense", "dtype": dtype_of(arr), "shape": list(arr.shape), "values": arr.ravel().tolist()}


def tensor_json(t):
    if isinstance(t, io.SparseTensor):
        return {
            "kind": "sparse",
            "dtype": dtype_of(t.values),
            "indices": t.indices.tolist(),
            "values": t.values.tolist(),
            "dense_shape": t.dense_shape.tolist(),
        }
    if isinstance(t, io.RaggedTensor):
        return {
            "kind": "ragged",
            "dtype": dtype_of(t.flat_values),
            "row_splits_dtype": t.nested_row_splits[0].dtype.name,
            "nested_row_splits": [s.tolist() for s in t.nested_row_splits],
            "uniform_row_lengths": list(t.uniform_row_lengths),
            "flat_values": dense_json(t.flat_values),
        }
    assert isinstance(t, np.ndarray), type(t)
    return dense_json(t)


def run(case):
    serialized = [base64.b64decode(s) for s in case["serialized"]]
    op = case["op"]
    if op == "parse_example":
        out = io.parse_example(serialized, specs_of(case["features"]))
        return {"features": {k: tensor_json(v) for k, v in out.items()}}
    if op == "parse_single_example":
        out = io.parse_single_example(serialized[0] if serialized else b"", specs_of(case["features"]))
        return {"features": {k: tensor_json(v) for k, v in out.items()}}
    ctx, seq = specs_of(case.get("context_features")), specs_of(case.get("sequence_features"))
    if op == "parse_sequence_example":
        c, f, n = io.parse_sequence_example(serialized, ctx, seq)
        return {
            "context": {k: tensor_json(v) for k, v in c.items()},
            "feature_lists": {k: tensor_json(v) for k, v in f.items()},
            "lengths": {k: tensor_json(v) for k, v in n.items()},
        }
    c, f = io.parse_single_sequence_example(serialized[0] if serialized else b"", ctx, seq)
    return {
        "context": {k: tensor_json(v) for k, v in c.items()},
        "feature_lists": {k: tensor_json(v) for k, v in f.items()},
    }


def f32_bits(v):
    if isinstance(v, str):
        v = float(v)
    return np.float32(v).view(np.uint32).item()


def expected_value(v):
    if isinstance(v, dict) and "base64" in v:
        return base64.b64decode(v["base64"])
    if isinstance(v, str):
        return v.encode("utf-8")
    return v


def same(ours, expected, floats=False, path=""):
    if isinstance(expected, dict) and "base64" not in expected:
        assert isinstance(ours, dict) and set(ours) == set(expected), f"{path}: keys {sorted(ours)} vs {sorted(expected)}"
        fl = ours.get("dtype") == "float32"
        for k in ours:
            same(ours[k], expected[k], (fl and k in ("values", "flat_values")) or (floats and k == "values"), f"{path}.{k}")
        return
    if isinstance(expected, list):
        assert isinstance(ours, list) and len(ours) == len(expected), f"{path}: {ours!r} vs {expected!r}"
        for i, (a, b) in enumerate(zip(ours, expected)):
            same(a, b, floats, f"{path}[{i}]")
        return
    if floats:
        assert f32_bits(ours) == f32_bits(expected) or (
            math.isnan(float(ours)) and math.isnan(float(expected))
        ), f"{path}: {ours!r} vs {expected!r}"
        return
    if isinstance(ours, bytes):
        assert ours == expected_value(expected), f"{path}: {ours!r} vs {expected!r}"
        return
    assert ours == expected, f"{path}: {ours!r} vs {expected!r}"


def category(message):
    m = message.lower()
    if "required" in m:
        return "missing"
    if "data types don't match" in m or "conflicting type" in m:
        return "type"
    if any(s in m for s in ("can't parse", "could not parse", "malformed", "codec")):
        return "malformed"
    if any(
        s in m
        for s in ("number of", "values size", "multiple", "inconsistent", "not consistent", "not compatible", "same number")
    ):
        return "count"
    return "other"


def named_things(message):
    things = []
    for marker in ("Key: ", "Feature: ", "Feature list: ", "Feature list '", "for feature ", "Context feature: "):
        for part in message.split(marker)[1:]:
            name = ""
            for ch in part:
                if ch in ",. ':":
                    break
                name += ch
            if name:
                things.append(name)
    for part in message.split("Index: ")[1:]:
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        things.append(f"Index: {digits}")
    return things


def check(case):
    try:
        ours, error = run(case), None
    except (tfrec.TfrecError, ValueError, TypeError) as e:
        ours, error = None, e
    # A PanicException (or anything else) propagates and fails the case.
    answers = [case] + ([case["lenient"]] if case.get("lenient") else [])
    why = []
    for answer in answers:
        if error is None and answer["error"] is None:
            try:
                same(ours, answer["expected"])
                return
            except AssertionError as e:
                why.append(f"tensors differ: {e}")
        elif error is not None and answer["error"] is not None:
            tf = answer["error"]["message"]
            message = str(error)
            missing = [t for t in named_things(tf) if t not in message]
            want, got = category(tf), category(message)
            if missing:
                why.append(f"our error {message!r} does not name {missing} (TF: {tf!r})")
            elif want != "other" and want != got:
                why.append(f"our error {message!r} is about {got}, TF's {tf!r} about {want}")
            else:
                return
        elif error is None:
            why.append(f"TF failed with {answer['error']}, we did not")
        else:
            why.append(f"we failed: {type(error).__name__}: {error}")
    raise AssertionError("; ".join(why))


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_parse_case(case):
    try:
        check(case)
    except BaseException:
        RESULTS[case["id"]] = False
        raise
    RESULTS[case["id"]] = True


@pytest.mark.parametrize("case", REGRESSIONS, ids=[c["id"] for c in REGRESSIONS])
def test_regression_case(case):
    check(case)


def test_parse_cases_summary():
    """Runs last in this module (pytest keeps file order): prints the conformance line."""
    for case in CASES:
        if case["id"] not in RESULTS:
            try:
                check(case)
                RESULTS[case["id"]] = True
            except BaseException:
                RESULTS[case["id"]] = False
    passed = sum(RESULTS[c["id"]] for c in CASES)
    summary(f"python parse cases: {len(CASES)} run, {passed} passed")
    assert passed == len(CASES)

"""Every case of ``tensor_cases.jsonl`` through ``tfrec.io.serialize_tensor`` /
``parse_tensor``: writing gives TF's bytes exactly; reading gives TF's dtype, shape and
values (floats bit for bit, NaN equal to NaN); TF's failures are exceptions of the same kind."""

import base64
import math

import numpy as np
import pytest

import tfrec
from tfrec import io

from conftest import golden_lines, summary

CASES = golden_lines("tensor_cases.jsonl")
RESULTS = {}

def scalar(v):
    return float(v) if isinstance(v, str) else v


def to_bytes(v):
    return base64.b64decode(v["base64"]) if isinstance(v, dict) else v.encode("utf-8")


def input_array(case):
    dtype, shape, values = case["dtype"], case["shape"], case["values"]
    if dtype == "string":
        arr = np.empty(len(values), dtype=object)
        arr[:] = [to_bytes(v) for v in values]
        return arr.reshape(shape)
    if dtype == "bfloat16":
        # NumPy has no bfloat16: floats, converted by serialize_tensor(dtype="bfloat16").
        return np.array([scalar(v) for v in values], dtype=np.float32).reshape(shape)
    if dtype.startswith("complex"):
        return np.array([complex(scalar(re), scalar(im)) for re, im in values], dtype=np.dtype(dtype)).reshape(shape)
    if dtype == "float16":
        arr = np.array([scalar(v) for v in values], dtype=np.float64).astype(np.float16)
        # TF writes NaN as the canonical quiet NaN.
        arr = arr.view(np.uint16)
        arr[np.isnan(arr.view(np.float16))] = 0x7E00
        return arr.view(np.float16).reshape(shape)
    return np.array([scalar(v) for v in values], dtype=np.dtype(dtype)).reshape(shape)


def flat_items(arr, dtype):
    flat = np.asarray(arr).ravel()
    if dtype == "string":
        return [("b", x) for x in flat.tolist()]
    if dtype.startswith("complex"):
        return [("f", float(x)) for c in flat.tolist() for x in (c.real, c.imag)]
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        return [("f", float(x)) for x in flat.astype(np.float64).tolist()]
    return [("i", int(x)) for x in flat.tolist()]


def expected_items(values, dtype):
    if dtype == "string":
        return [("b", to_bytes(v)) for v in values]
    if dtype.startswith("complex"):
        return [("f", scalar(x)) for pair in values for x in pair]
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        return [("f", scalar(v)) for v in values]
    return [("i", int(v)) for v in values]


def same_items(a, b):
    if len(a) != len(b):
        return False
    for (ka, va), (kb, vb) in zip(a, b):
        if ka != kb:
            return False
        if ka == "f":
            if not ((math.isnan(va) and math.isnan(vb)) or (va == vb and math.copysign(1, va) == math.copysign(1, vb))):
                return False
        elif va != vb:
            return False
    return True


def check(case):
    serialized = base64.b64decode(case["serialized"])
    if case["op"] == "serialize_tensor":
        dtype = "bfloat16" if case["dtype"] == "bfloat16" else None
        ours = io.serialize_tensor(input_array(case), dtype=dtype)
        assert ours == serialized, f"{ours!r} vs TF's {serialized!r}"
        return
    expected = case["expected"]
    if expected is None:
        with pytest.raises(tfrec.InvalidArgumentError) as info:
            io.parse_tensor(serialized, case["out_type"])
        tf = case["error"]["message"]
        ours = str(info.value)
        if tf.startswith("Type mismatch"):
            assert ours.startswith("Type mismatch"), ours
        elif tf.startswith("Could not parse"):
            assert "could not parse" in ours.lower(), ours
        else:
            assert "cannot parse tensor" in ours.lower(), ours
        return
    arr = io.parse_tensor(serialized, case["out_type"])
    dtype = expected["dtype"]
    if dtype == "string":
        assert arr.dtype == object
    elif dtype == "bfloat16":
        assert arr.dtype.name in ("bfloat16", "float32"), arr.dtype
    else:
        assert arr.dtype == np.dtype(dtype), arr.dtype
    assert list(arr.shape) == expected["shape"]
    ours, want = flat_items(arr, dtype), expected_items(expected["values"], dtype)
    assert same_items(ours, want), f"{ours} vs TF's {want}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_tensor_case(case):
    try:
        check(case)
    except BaseException:
        RESULTS[case["id"]] = False
        raise
    RESULTS[case["id"]] = True


def test_tensor_cases_summary():
    for case in CASES:
        if case["id"] not in RESULTS:
            try:
                check(case)
                RESULTS[case["id"]] = True
            except BaseException:
                RESULTS[case["id"]] = False
    passed = sum(RESULTS[c["id"]] for c in CASES)
    summary(f"python tensor cases: {len(CASES)} run, {passed} passed")
    assert passed == len(CASES)

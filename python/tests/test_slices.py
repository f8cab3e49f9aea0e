"""``tfrec._slices.tensor_slices`` against TensorFlow's own ``from_tensor_slices``: for each input,
the elements of ``list(tf.data.Dataset.from_tensor_slices(x).as_numpy_iterator())`` and ours,
compared element by element (structure, Python type, dtype, shape, values), and the same
``ValueError`` where TensorFlow refuses the input."""

import collections
import subprocess
import sys

import numpy as np
import pytest

from tfrec._slices import tensor_slices

Point = collections.namedtuple("Point", "x y")

N = 5
rng = np.random.default_rng(7)
feature0 = rng.choice([False, True], N)
feature1 = rng.integers(0, 5, N)
feature2 = np.array([b"cat", b"dog", b"chicken", b"horse", b"goat"])[feature1]
feature3 = rng.standard_normal(N)

CASES = {
    "ints": [1, 2, 3],
    "floats": [1.5, 2.0],
    "ints and floats": [1, 2.5],
    "bools": [True, False],
    "str": ["a", "b"],
    "str utf-8": ["é", "a"],
    "bytes": [b"a", b"bc"],
    "nested ints": [[1, 2], [3, 4]],
    "nested floats and ints": [[1.0, 2], [3, 4]],
    "list of tuples": [(1, 2), (3, 4)],
    "nested bytes": [[b"a"], [b"b"]],
    "int32 array": np.array([1, 2], dtype=np.int32),
    "float64 array": np.array([1.0, 2.0]),
    "uint8 array": np.array([1, 2], dtype=np.uint8),
    "float16 array": np.array([1.0, 2.0], dtype=np.float16),
    "bool array": np.array([True, False]),
    "complex array": np.array([1 + 2j]),
    "complex list": [1 + 2j, 3.0],
    "unicode array": np.array(["ab", "c"]),
    "2-d unicode array": np.array([["a", "b"], ["c", "d"]]),
    "bytes array": np.array([b"ab", b"c"]),
    "object bytes array": np.array([b"a", b"bb"], dtype=object),
    "3-d array": np.arange(24, dtype=np.int16).reshape(2, 3, 4),
    "large ints": [2**40, 1],
    "int32 bounds": [2**31 - 1, -(2**31)],
    "past int32": [2**31, 0],
    "numpy float64 scalars": [np.float64(1.0), np.float64(2)],
    "numpy int32 scalars": [np.int32(1), np.int32(2)],
    "numpy int64 and int": [np.int64(1), 2],
    "float and numpy float64": [1.5, np.float64(2)],
    "numpy 0-d and float": [np.array(1.0, dtype=np.float32), 2.0],
    "list of arrays": [np.zeros(2), np.ones(2)],
    "range": range(3),
    "empty list": [],
    "empty rows": [[], []],
    "empty 2-d array": np.zeros((0, 2)),
    "tuple": ([1, 2], [3.0, 4.0]),
    "one-tuple": (np.arange(3),),
    "dict": {"a": [1, 2], "b": ["x", "y"]},
    "dict order": {"b": [1], "a": [2]},
    "nested structure": {"a": ([1, 2], [3, 4]), "b": {"c": np.zeros((2, 3))}},
    "namedtuple": Point([1, 2], [3, 4]),
    "tuple of str list and array": (["é"], np.array([1])),
    "tutorial features": (feature0, feature1, feature2, feature3),
    "tutorial feature1": feature1,
    "inf and nan": [float("inf"), float("nan")],
    "lengths differ": ([1, 2], [1, 2, 3]),
    "dict lengths differ": {"a": np.zeros(4), "b": [1, 2]},
    "ragged": [[1, 2], [3]],
    "ragged str": [["a", "b"], ["c"]],
    "ragged depth": [[1, 2], 3],
    "scalar": 5,
    "scalar in tuple": ([1, 2], 3),
    "scalar dict": {"a": 1},
    "str scalar": "abc",
    "numpy scalar": np.float64(3),
    "mixed bool int": [True, 1],
    "mixed str int": ["a", 1],
    "mixed int str": [1, "a"],
    "out of int64": [2**63, 1],
    "out of float range": [1e300, 1.0],
    "object ints": np.array([[1, 2], [3, 4]], dtype=object),
    "nones": [None, None],
}

# TensorFlow's own texts, where tfrec copies them.
SAME_TEXT = {"lengths differ", "dict lengths differ", "ragged", "ragged str", "scalar", "mixed bool int",
             "mixed str int", "out of int64", "out of float range"}


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def tf_elements(tf, value):
    try:
        return list(tf.data.Dataset.from_tensor_slices(value).as_numpy_iterator()), None
    except (ValueError, TypeError) as e:
        return None, e


def assert_same(ours, theirs, where):
    assert type(ours) is type(theirs), f"{where}: {type(ours).__name__} != {type(theirs).__name__}"
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), f"{where}: keys {list(ours)} != {list(theirs)}"
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{where}[{k!r}]")
    elif isinstance(theirs, tuple):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, bytes):
        assert ours == theirs, where
    else:
        assert ours.dtype == theirs.dtype, f"{where}: dtype {ours.dtype} != {theirs.dtype}"
        assert np.shape(ours) == np.shape(theirs), f"{where}: shape {np.shape(ours)} != {np.shape(theirs)}"
        if theirs.dtype == object:
            assert np.asarray(ours).tolist() == np.asarray(theirs).tolist(), where
        else:
            assert np.array_equal(ours, theirs, equal_nan=theirs.dtype.kind in "fc"), f"{where}: {ours} != {theirs}"


@pytest.mark.parametrize("name", list(CASES))
def test_elements_equal_tensorflows(tf, name):
    value = CASES[name]
    want, error = tf_elements(tf, value)
    if error is not None:
        with pytest.raises(ValueError) as info:
            tensor_slices(value)
        if name in SAME_TEXT:
            assert str(info.value) == str(error).splitlines()[0], name
        return
    got = tensor_slices(value)
    assert len(got) == len(want), f"{name}: {len(got)} elements, TensorFlow {len(want)}"
    for i, (a, b) in enumerate(zip(got, want)):
        assert_same(a, b, f"{name} element {i}")


def test_elements_are_copies():
    data = np.zeros((2, 3))
    first = tensor_slices(data)[0]
    first[0] = 7
    assert data[0, 0] == 0


def test_tensor_slices_imports_no_tensorflow():
    code = ("import sys, tfrec._slices as s; s.tensor_slices(([1, 2], {'a': ['x', 'y']})); "
            "print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

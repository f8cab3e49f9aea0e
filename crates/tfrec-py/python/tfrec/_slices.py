"""The elements of ``tf.data.Dataset.from_tensor_slices``, without TensorFlow.

``tensor_slices(value)`` cuts ``value`` along its first axis as TensorFlow does and gives the
elements as ``Dataset.as_numpy_iterator()`` would: a dict stays a dict (in its key order), a
tuple (a namedtuple too) stays a tuple, anything else (a NumPy array, a list, nested lists, a
list of tuples) is one tensor. TensorFlow's conversions are kept: Python ints become
``int32`` (``int64`` when one does not fit), Python floats ``float32``, strings ``bytes`` (a
scalar string element is a ``bytes`` object, a string array an object array of ``bytes``),
NumPy arrays keep their dtype. A scalar element is a NumPy scalar (``np.int32(3)``).

Errors are TensorFlow's ``ValueError`` texts: components of different lengths ("Dimensions 2
and 3 are not compatible"), a ragged list ("Can't convert non-rectangular Python sequence to
Tensor."), a scalar ("Unbatching a tensor is only supported for rank >= 1"), a list mixing
strings, booleans and numbers ("Can't convert Python sequence with mixed types to Tensor.").
"""

import numpy as np

__all__ = ["tensor_slices"]

_INT32 = np.iinfo(np.int32)
_INT64 = np.iinfo(np.int64)
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def tensor_slices(value):
    """The elements of ``tf.data.Dataset.from_tensor_slices(value)``, as a list."""
    leaves = []
    structure = _flatten(value, leaves)
    if not leaves:
        raise ValueError("Invalid `element`. `element` should not be empty.")
    arrays = [_to_array(leaf) for leaf in leaves]
    n = None
    for a in arrays:
        if a.ndim == 0:
            raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        if n is None:
            n = a.shape[0]
        elif a.shape[0] != n:
            raise ValueError(f"Dimensions {n} and {a.shape[0]} are not compatible")
    columns = [_slices(a) for a in arrays]
    return [_rebuild(structure, iter([c[i] for c in columns])) for i in range(n)]


# A structure is a tree of ("dict", keys, children), ("tuple", type, children) and None (a
# leaf: one tensor); leaves are collected depth first, in the order the tree is rebuilt in.
def _flatten(value, leaves):
    if isinstance(value, dict):
        keys = list(value)
        return ("dict", keys, [_flatten(value[k], leaves) for k in keys])
    if isinstance(value, tuple):
        return ("tuple", type(value), [_flatten(v, leaves) for v in value])
    leaves.append(value)
    return None


def _rebuild(structure, leaves):
    if structure is None:
        return next(leaves)
    kind, what, children = structure
    if kind == "dict":
        return {k: _rebuild(c, leaves) for k, c in zip(what, children)}
    items = [_rebuild(c, leaves) for c in children]
    # A namedtuple is made from its fields, a plain tuple from an iterable.
    return what(*items) if hasattr(what, "_fields") else what(items)


def _slices(array):
    if array.ndim == 1:
        # A scalar element: a NumPy scalar, or the bytes object itself for strings.
        return list(array)
    return [array[i].copy() for i in range(array.shape[0])]


def _to_array(value):
    """``value`` as the NumPy array of the tensor TensorFlow would make of it."""
    if isinstance(value, (np.ndarray, np.generic)) or (
        hasattr(value, "__array__") and not isinstance(value, (list, range, str, bytes))
    ):
        return _numpy_array(np.asarray(value))
    if value is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) to a Tensor.")
    if isinstance(value, (str, bytes)):
        return _strings([value], ())
    if isinstance(value, (bool, int, float, complex)):
        return _python_numbers([value], ())
    if isinstance(value, (list, range, tuple)):
        return _sequence(value)
    raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type ({type(value)}) to a Tensor.")


def _numpy_array(a):
    kind = a.dtype.kind
    if kind in "biufc":
        return a
    if kind in "US":
        return _strings(a.reshape(-1).tolist(), a.shape)
    if kind == "O":
        flat = a.reshape(-1).tolist()
        if all(isinstance(v, (bytes, str)) for v in flat):
            return _strings(flat, a.shape)
        bad = next(type(v).__name__ for v in flat if not isinstance(v, (bytes, str)))
        raise ValueError(f"Failed to convert a NumPy array to a Tensor (Unsupported object type {bad}).")
    raise ValueError(f"Failed to convert a NumPy array to a Tensor (Unsupported numpy type: {a.dtype}).")


def _strings(flat, shape):
    out = np.empty(len(flat), dtype=object)
    out[:] = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in flat]
    return out.reshape(shape)


def _sequence(seq):
    """A (nested) Python sequence as TensorFlow converts it: its shape from the nesting (every
    sub-sequence of one level the same length), its dtype from the leaves."""
    flat = []
    shape = _walk(seq, flat)
    if flat and all(isinstance(v, (np.ndarray, np.generic)) for v in flat):
        # Only NumPy values: they keep their dtype if they share one (float64 stays float64).
        arrays = [np.asarray(v) for v in flat]
        if len({a.dtype for a in arrays}) == 1:
            return _numpy_array(np.stack(arrays).reshape(shape))
    # Python scalars; a NumPy value among them counts as the Python kind it holds.
    leaves = []
    for v in flat:
        if isinstance(v, (np.ndarray, np.generic)):
            leaves.extend(np.asarray(v).reshape(-1).tolist())
        else:
            leaves.append(v)
    if not leaves:
        return np.zeros(shape, dtype=np.float32)
    if all(isinstance(v, (str, bytes)) for v in leaves):
        return _strings(leaves, shape)
    if any(isinstance(v, (str, bytes)) for v in leaves):
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    return _python_numbers(leaves, shape)


def _walk(value, flat):
    """The shape of ``value``, its leaves appended to ``flat``."""
    if isinstance(value, (list, tuple, range)):
        shapes = [_walk(v, flat) for v in value]
        if any(s != shapes[0] for s in shapes):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
        return (len(shapes),) + (shapes[0] if shapes else ())
    if isinstance(value, (np.ndarray, np.generic)):
        flat.append(value)
        return np.shape(value)
    if value is None or not isinstance(value, (bool, int, float, complex, str, bytes)):
        raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type ({type(value)}) to a Tensor.")
    flat.append(value)
    return ()


def _python_numbers(leaves, shape):
    bools = [isinstance(v, (bool, np.bool_)) for v in leaves]
    if any(bools):
        if not all(bools):
            raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
        return np.array(leaves, dtype=np.bool_).reshape(shape)
    if any(isinstance(v, complex) for v in leaves):
        return np.array(leaves, dtype=np.complex128).reshape(shape)
    if any(isinstance(v, float) for v in leaves):
        if any(abs(v) > _FLOAT32_MAX and abs(v) != float("inf") for v in leaves):
            raise ValueError("Can't convert Python sequence with a value out of range for a double-precision float.")
        return np.array(leaves, dtype=np.float32).reshape(shape)
    lo, hi = min(leaves), max(leaves)
    if _INT32.min <= lo and hi <= _INT32.max:
        return np.array(leaves, dtype=np.int32).reshape(shape)
    if _INT64.min <= lo and hi <= _INT64.max:
        return np.array(leaves, dtype=np.int64).reshape(shape)
    raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.")

"""The package's one dtype table: TensorFlow's dtype names (the extension's list, which the
Rust library owns), the aliases TensorFlow accepts for them, and their NumPy types."""

import numpy as np

from . import _tfrec

#: Every dtype ``serialize_tensor`` / ``parse_tensor`` know, by TensorFlow's name.
TENSOR_DTYPE_NAMES = tuple(_tfrec.tensor_dtype_names())

# Other spellings of those names: TensorFlow's aliases (`tf.float`, `tf.double`, `tf.half`)
# and the Python / NumPy names of a string tensor's element.
_ALIASES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "bytes": "string",
    "str": "string",
    "object": "string",
}

#: The NumPy type of each dtype NumPy has natively: all but ``string`` (an object array of
#: ``bytes``) and ``bfloat16`` (see :func:`bfloat16`).
NUMPY_OF_TENSOR = {
    name: np.dtype(name) for name in TENSOR_DTYPE_NAMES if name not in ("string", "bfloat16")
}


def dtype_name(dtype):
    """The TensorFlow name of a dtype given as a string, a NumPy dtype or type, a Python type,
    or any object with a ``.name`` (``tf.int64``)."""
    if isinstance(dtype, str):
        name = dtype
    elif dtype is int:
        name = "int64"
    elif dtype is float:
        name = "float32"
    elif dtype in (bytes, str):
        name = "string"
    elif isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        d = np.dtype(dtype)
        name = "string" if d.kind in "OSU" else d.name
    elif hasattr(dtype, "name") and isinstance(dtype.name, str):
        name = dtype.name
    else:
        raise TypeError(f"not a dtype: {dtype!r}")
    return _ALIASES.get(name, name)


def bfloat16():
    """``ml_dtypes.bfloat16`` when installed (NumPy has no bfloat16), else ``None``."""
    try:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return None

"""tfrec: TensorFlow's TFRecord files, ``tf.train.Example`` and ``tf.io`` parsing for NumPy
users, without TensorFlow. Built on the tfrec Rust library.

>>> import tfrec
>>> ex = tfrec.Example.from_dict({"age": 19, "name": "goat", "score": [0.5, 0.25]})
>>> with tfrec.TFRecordWriter("data.tfrecord") as w:
...     w.write(ex.SerializeToString())
>>> spec = {"age": tfrec.io.FixedLenFeature([], tfrec.int64)}
>>> tfrec.io.parse_example(list(tfrec.TFRecordDataset("data.tfrecord")), spec)
{'age': array([19])}
"""

from . import _dtypes, _tfrec, data, errors, io, state_saver, train
from .data import AUTOTUNE, Dataset, RandomAccessDataset, TFRecordDataset, TFRecordOptions, TFRecordWriter
from .state_saver import (
    OutOfRangeError,
    SequenceExampleFiles,
    SequenceQueueingStateSaver,
    StateSaverError,
    batch_sequences_with_states,
    state_saving_rnn,
)
from .errors import DataLossError, DecodeError, InvalidArgumentError, NotFoundError, ParseError, TfrecError
from .train import (
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)


class DType(str):
    """A dtype name with ``.name``, like ``tf.int64`` (a ``str``, so it works anywhere a dtype
    name does)."""

    @property
    def name(self):
        return str(self)


# TensorFlow's dtypes by name (tfrec.int64, tfrec.float64, …): the extension's one list.
for _name in _dtypes.TENSOR_DTYPE_NAMES:
    globals()[_name] = DType(_name)
half, double = globals()["float16"], globals()["float64"]
del _name

__all__ = [
    "AUTOTUNE",
    "BytesList",
    "DataLossError",
    "Dataset",
    "DecodeError",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "InvalidArgumentError",
    "NotFoundError",
    "OutOfRangeError",
    "ParseError",
    "RandomAccessDataset",
    "SequenceExample",
    "SequenceExampleFiles",
    "SequenceQueueingStateSaver",
    "StateSaverError",
    "TFRecordDataset",
    "TFRecordOptions",
    "TFRecordWriter",
    "TfrecError",
    "__version__",
    "batch_sequences_with_states",
    "data",
    "errors",
    "float32",
    "int32",
    "int64",
    "io",
    "state_saver",
    "state_saving_rnn",
    "string",
    "train",
]

#: The package's version: the Rust crates' (one source, the workspace's Cargo.toml).
__version__ = _tfrec.__version__

# The integrations import their libraries (pyarrow, Polars, Ray, PyTorch) when loaded, so they
# load on first use (PEP 562): `import tfrec` stays light, and `tfrec.arrow.read(...)` works
# without importing `tfrec.arrow` first. Not in `__all__`: `from tfrec import *` would load them.
_LAZY_SUBMODULES = ("arrow", "polars", "ray", "stats", "torch")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib

        # Importing the submodule also sets it as an attribute, so this runs once per name.
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))

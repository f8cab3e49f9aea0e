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

from . import errors, io, state_saver, train
from .data import Dataset, TFRecordDataset, TFRecordOptions, TFRecordWriter
from .random_access import RandomAccessDataset
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


int64 = DType("int64")
float32 = DType("float32")
string = DType("string")
int32 = DType("int32")
# The rest of TensorFlow's dtypes, for serialize_tensor / parse_tensor (tfrec.float64, …).
for _name in ("float16", "bfloat16", "float64", "int8", "int16", "uint8", "uint16", "uint32", "uint64",
              "bool", "complex64", "complex128"):
    globals()[_name] = DType(_name)
half, double = globals()["float16"], globals()["float64"]
del _name

__all__ = [
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
    "batch_sequences_with_states",
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

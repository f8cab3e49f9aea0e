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

from . import _tfrec as _tfrec, data as data, errors as errors, io as io, state_saver as state_saver, train as train
# Loaded on first use (the package's ``__getattr__``): ``import tfrec`` then ``tfrec.arrow.read``
# works without importing ``tfrec.arrow`` first.
from . import arrow as arrow, polars as polars, ray as ray, stats as stats, torch as torch
from .data import (
    AUTOTUNE as AUTOTUNE,
    Dataset as Dataset,
    RandomAccessDataset as RandomAccessDataset,
    TFRecordDataset as TFRecordDataset,
    TFRecordOptions as TFRecordOptions,
    TFRecordWriter as TFRecordWriter,
)
from .errors import (
    DataLossError as DataLossError,
    DecodeError as DecodeError,
    InvalidArgumentError as InvalidArgumentError,
    NotFoundError as NotFoundError,
    ParseError as ParseError,
    TfrecError as TfrecError,
)
from .state_saver import (
    OutOfRangeError as OutOfRangeError,
    SequenceExampleFiles as SequenceExampleFiles,
    SequenceQueueingStateSaver as SequenceQueueingStateSaver,
    StateSaverError as StateSaverError,
    batch_sequences_with_states as batch_sequences_with_states,
    state_saving_rnn as state_saving_rnn,
)
from .train import (
    BytesList as BytesList,
    Example as Example,
    Feature as Feature,
    FeatureList as FeatureList,
    FeatureLists as FeatureLists,
    Features as Features,
    FloatList as FloatList,
    Int64List as Int64List,
    SequenceExample as SequenceExample,
)

class DType(str):
    """A dtype name with ``.name``, like ``tf.int64`` (a ``str``, so it works anywhere a dtype
    name does)."""
    @property
    def name(self) -> str: ...

int64: DType
float32: DType
string: DType
int32: DType
# The rest of TensorFlow's dtypes, for serialize_tensor / parse_tensor.
float16: DType
bfloat16: DType
float64: DType
int8: DType
int16: DType
uint8: DType
uint16: DType
uint32: DType
uint64: DType
bool: DType
complex64: DType
complex128: DType
half: DType
double: DType

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

__version__: str

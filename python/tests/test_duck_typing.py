"""TensorFlow objects accepted by duck typing, with small stand-ins carrying TF's class and
attribute names (TensorFlow itself is not a test dependency): ``tf.int64``-like dtypes, the
``tf.io`` spec classes (namedtuples named as TF names them), ``tf.TensorShape``, and any
message with ``SerializeToString()``."""

import collections

import numpy as np
import pytest

import tfrec
from tfrec import io


class DType:
    """Like ``tf.dtypes.DType``: only ``.name`` matters."""

    def __init__(self, name):
        self.name = name


class TensorShape:
    """Like ``tf.TensorShape``."""

    def __init__(self, dims):
        self._dims = dims

    def as_list(self):
        return list(self._dims)


# TF's spec classes are namedtuples with these names and fields.
FixedLenFeature = collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])
VarLenFeature = collections.namedtuple("VarLenFeature", ["dtype"])
SparseFeature = collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])
FixedLenSequenceFeature = collections.namedtuple(
    "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"]
)
RaggedFeature = collections.namedtuple(
    "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"]
)
RowLengths = collections.namedtuple("RowLengths", ["key"])
UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

tf_int64, tf_float32, tf_string, tf_int32 = DType("int64"), DType("float32"), DType("string"), DType("int32")


class ForeignExample:
    """A message from another library (protobuf's own ``tf.train.Example``): only
    ``SerializeToString()``."""

    def __init__(self, serialized):
        self._serialized = serialized

    def SerializeToString(self):
        return self._serialized


def records():
    return [
        tfrec.Example.from_dict(
            {"age": 30 + i, "score": [0.5 * i, 1.0], "tags": [b"a", b"b"][: i + 1], "v": list(range(i + 2)), "n": [i + 2], "idx": [i], "val": [10 * i]}
        ).SerializeToString()
        for i in range(2)
    ]


def test_tf_spec_objects_and_dtypes_work_unchanged():
    feature_description = {
        "age": FixedLenFeature(TensorShape([]), tf_int64, 0),
        "score": FixedLenFeature([2], tf_float32, None),
        "tags": VarLenFeature(tf_string),
        "sparse": SparseFeature("idx", "val", tf_int64, 10, False),
        "ragged": RaggedFeature(tf_int64, "v", (RowLengths("n"),), tf_int32, False),
    }
    out = io.parse_example(records(), feature_description)
    np.testing.assert_array_equal(out["age"], [30, 31])
    assert out["score"].dtype == np.float32 and out["score"].shape == (2, 2)
    assert out["tags"].values.tolist() == [b"a", b"a", b"b"]
    assert out["sparse"].dense_shape.tolist() == [2, 10]
    assert out["sparse"].to_dense()[1, 1] == 10
    assert out["ragged"].to_list() == [[[0, 1]], [[0, 1, 2]]]
    assert out["ragged"].nested_row_splits[0].dtype == np.int32


def test_the_same_specs_as_ours_give_the_same_results():
    ours = {
        "age": io.FixedLenFeature([], tfrec.int64, 0),
        "ragged": io.RaggedFeature(tfrec.int64, "v", [io.RaggedFeature.RowLengths("n")]),
    }
    theirs = {
        "age": FixedLenFeature([], tf_int64, 0),
        "ragged": RaggedFeature(tf_int64, "v", (RowLengths("n"),), tf_int32, False),
    }
    a, b = io.parse_example(records(), ours), io.parse_example(records(), theirs)
    np.testing.assert_array_equal(a["age"], b["age"])
    assert a["ragged"].to_list() == b["ragged"].to_list()


def test_sequence_specs_by_duck_typing():
    seq = tfrec.SequenceExample.from_dict(
        {"context": {"id": 7}, "feature_lists": {"tok": [[1, 2], [3, 4], [5, 6]]}}
    ).SerializeToString()
    ctx, lists = io.parse_single_sequence_example(
        seq,
        context_features={"id": FixedLenFeature([], tf_int64, None)},
        sequence_features={"tok": FixedLenSequenceFeature([2], tf_int64, False, None)},
    )
    assert ctx["id"].item() == 7
    assert lists["tok"].tolist() == [[1, 2], [3, 4], [5, 6]]


@pytest.mark.parametrize("dtype", ["int64", np.int64, np.dtype("int64"), int, tf_int64, tfrec.int64])
def test_every_dtype_spelling(dtype):
    out = io.parse_example(records(), {"age": io.FixedLenFeature([], dtype)})
    assert out["age"].dtype == np.int64


@pytest.mark.parametrize("dtype", ["string", bytes, str, np.object_, np.bytes_, tf_string])
def test_string_dtype_spellings(dtype):
    out = io.parse_example(records(), {"tags": io.VarLenFeature(dtype)})
    assert out["tags"].values.dtype == object


def test_any_message_with_serialize_to_string_is_accepted(tmp_path):
    foreign = [ForeignExample(r) for r in records()]
    out = io.parse_example(foreign, {"age": FixedLenFeature([], tf_int64, None)})
    np.testing.assert_array_equal(out["age"], [30, 31])
    single = io.parse_single_example(foreign[0], {"age": FixedLenFeature([], tf_int64, None)})
    assert single["age"].item() == 30
    path = tmp_path / "foreign.tfrecord"
    with tfrec.TFRecordWriter(str(path)) as w:
        for m in foreign:
            w.write(m)
    assert list(tfrec.TFRecordDataset(str(path))) == records()
    assert tfrec.Example.from_message(foreign[1]).to_dict()["age"] == [31]


def test_parse_tensor_takes_tf_dtypes():
    data = io.serialize_tensor(np.arange(4, dtype=np.int64))
    assert io.parse_tensor(data, tf_int64).tolist() == [0, 1, 2, 3]
    data = io.serialize_tensor(np.ones(2, dtype=np.float16))
    assert io.parse_tensor(data, DType("float16")).dtype == np.float16

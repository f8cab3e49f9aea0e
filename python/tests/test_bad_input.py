"""Bad input through Python: each is a Python exception with a clear message, never a crash,
and never pyo3's PanicException (which derives from BaseException, so it would escape the
``pytest.raises(Exception)`` checks below)."""

import numpy as np
import pytest

import tfrec
from tfrec import io

SPEC = {"age": io.FixedLenFeature([], tfrec.int64), "name": io.VarLenFeature(tfrec.string)}


def good(n=3):
    return [tfrec.Example.from_dict({"age": i, "name": f"n{i}"}).SerializeToString() for i in range(n)]


def write(path, records):
    with tfrec.TFRecordWriter(str(path)) as w:
        for r in records:
            w.write(r)


def test_corrupt_file_names_file_offset_and_record(tmp_path):
    path = tmp_path / "data.tfrecord"
    write(path, good(5))
    data = bytearray(path.read_bytes())
    first = 16 + len(good(1)[0])
    data[first + 12 + 3] ^= 0xFF  # a byte of the second record's data
    path.write_bytes(bytes(data))
    ds = tfrec.TFRecordDataset(str(path))
    it = iter(ds)
    assert next(it) == good(5)[0]
    with pytest.raises(tfrec.DataLossError) as info:
        next(it)
    e = info.value
    assert e.path == str(path) and e.record_index == 1 and e.offset == first
    assert str(path) in str(e) and "record 1" in str(e) and "CRC" in str(e)
    # The same damage through the pipeline, and skipped when asked.
    with pytest.raises(tfrec.DataLossError):
        list(tfrec.Dataset(str(path)))
    assert len(list(tfrec.TFRecordDataset(str(path), on_corruption="skip"))) == 4
    assert len(list(tfrec.Dataset(str(path), on_corruption="skip"))) == 4


def test_garbage_and_truncated_files(tmp_path):
    path = tmp_path / "garbage.tfrecord"
    path.write_bytes(b"this is not a tfrecord file at all" * 10)
    with pytest.raises(tfrec.DataLossError):
        list(tfrec.TFRecordDataset(str(path)))
    path = tmp_path / "torn.tfrecord"
    write(path, good(2))
    path.write_bytes(path.read_bytes() + b"\x05\x00\x00")  # a torn header at the end
    with pytest.raises(tfrec.DataLossError) as info:
        list(tfrec.TFRecordDataset(str(path)))
    assert "partial record header" in str(info.value)
    assert list(tfrec.TFRecordDataset(str(path), torn_tail="skip")) == good(2)


def test_missing_file():
    with pytest.raises(tfrec.NotFoundError):
        tfrec.TFRecordDataset("/nonexistent/dir/file.tfrecord")
    with pytest.raises(FileNotFoundError):
        tfrec.Dataset("/nonexistent/*.tfrecord")


def test_wrong_dtype_in_the_data_names_key_and_example():
    with pytest.raises(tfrec.ParseError) as info:
        io.parse_example(good(3), {"age": io.FixedLenFeature([], tfrec.float32)})
    e = info.value
    assert e.key == "age" and e.example_index == 0
    assert "age" in str(e) and "Data types don't match" in str(e)


def test_wrong_dtype_in_a_spec():
    with pytest.raises(ValueError):
        io.parse_example(good(), {"age": io.FixedLenFeature([], "complex64")})
    with pytest.raises(TypeError):
        io.parse_example(good(), {"age": io.FixedLenFeature([], object())})


def test_spec_with_a_missing_key_names_it():
    with pytest.raises(tfrec.ParseError) as info:
        io.parse_example(good(2), {"height": io.FixedLenFeature([], tfrec.int64)})
    assert info.value.key == "height" and info.value.example_index == 0
    assert "height" in str(info.value) and "required" in str(info.value)
    with pytest.raises(tfrec.ParseError) as info:
        io.parse_single_sequence_example(good(1)[0], sequence_features={"s": io.FixedLenSequenceFeature([], tfrec.int64)})
    assert "s" in str(info.value)


def test_bad_specs_are_value_errors():
    with pytest.raises(ValueError):
        io.parse_example(good(), {})
    with pytest.raises(ValueError):
        io.parse_example(good(), {"age": io.FixedLenFeature([None], tfrec.int64)})
    with pytest.raises(ValueError):
        io.parse_example(good(), {"age": io.FixedLenFeature([2], tfrec.int64, default_value=[1, 2, 3])})
    with pytest.raises(ValueError):
        io.parse_example(good(), {"age": "not a spec"})


def test_non_bytes_element_in_the_serialized_list():
    for bad in ([good(1)[0], 42], [good(1)[0], "a str"], [None], np.array([1, 2])):
        with pytest.raises(TypeError) as info:
            io.parse_example(bad, SPEC)
        assert "expected bytes" in str(info.value) or "serialized" in str(info.value)
    with pytest.raises(TypeError):
        io.parse_example("a str", SPEC)
    with pytest.raises(TypeError):
        io.parse_example(12, SPEC)


def test_numpy_object_array_of_bytes_is_accepted():
    arr = np.array(good(3), dtype=object)
    assert io.parse_example(arr, SPEC)["age"].tolist() == [0, 1, 2]


def test_bytes_that_are_not_an_example():
    with pytest.raises(tfrec.ParseError):
        io.parse_example([b"\xff\xff\xff"], SPEC)
    with pytest.raises(tfrec.DecodeError):
        tfrec.Example.FromString(b"\xff\xff\xff")


def test_bad_tensor_bytes():
    with pytest.raises(tfrec.InvalidArgumentError):
        io.parse_tensor(b"\xff\xff\xff", tfrec.float32)
    data = io.serialize_tensor(np.zeros(3, np.float32))
    with pytest.raises(tfrec.InvalidArgumentError) as info:
        io.parse_tensor(data, tfrec.int64)
    assert "Type mismatch" in str(info.value)
    with pytest.raises(TypeError):
        io.parse_tensor(data, "complex256")


def test_random_bytes_never_crash():
    rng = np.random.default_rng(1)
    spec = {
        "a": io.FixedLenFeature([], tfrec.int64, default_value=0),
        "b": io.VarLenFeature(tfrec.float32),
        "c": io.RaggedFeature(tfrec.string),
    }
    base = good(1)[0]
    for _ in range(300):
        data = bytearray(base)
        for _ in range(rng.integers(1, 4)):
            data[rng.integers(0, len(data))] = rng.integers(0, 256)
        for call in (
            lambda: io.parse_example([bytes(data)], spec),
            lambda: tfrec.Example.FromString(bytes(data)),
            lambda: io.parse_tensor(bytes(data), tfrec.int64),
        ):
            try:
                call()
            except Exception:
                pass  # any ordinary exception is fine; a panic or crash is not


def test_message_coercion_errors():
    with pytest.raises(ValueError):
        tfrec.Example.from_dict({"big": np.array([2**64 - 1], dtype=np.uint64)})
    with pytest.raises(ValueError):
        tfrec.Example.from_dict({"big": 2**63})
    with pytest.raises(TypeError):
        tfrec.Example.from_dict({"mixed": [1, b"x"]})
    with pytest.raises(TypeError):
        tfrec.train.Int64List(value=[1.5])


def test_writer_errors(tmp_path):
    with pytest.raises(tfrec.errors.WriteError):
        tfrec.TFRecordWriter(str(tmp_path / "no" / "such" / "dir.tfrecord"))
    w = tfrec.TFRecordWriter(str(tmp_path / "x.tfrecord"))
    w.close()
    with pytest.raises(ValueError):
        w.write(b"after close")
    with pytest.raises(TypeError):
        tfrec.TFRecordWriter(str(tmp_path / "y.tfrecord")).write(12)
    with pytest.raises(ValueError):
        tfrec.TFRecordWriter(str(tmp_path / "z.tfrecord"), compression="BZIP2")

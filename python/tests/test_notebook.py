"""The TFRecord notebook (the ``tf.train.Example`` walkthrough) with tfrec in place of tf:
its helpers and their coercion errors, 10,000 observations written and read back, parsing
with a feature description, the image example on the bundled images, and serialize_tensor for
a non-scalar feature. ``examples/notebook.py`` is the same walkthrough as a script; it is run
here too."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tfrec

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))
import notebook  # noqa: E402

N = 10_000


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory):
    return notebook.main(str(tmp_path_factory.mktemp("notebook")), N, verbose=False)


def test_helpers_make_the_notebooks_features():
    assert str(notebook._bytes_feature(b"test_string")) == 'bytes_list {\n  value: "test_string"\n}\n'
    assert str(notebook._float_feature(np.exp(1))) == "float_list {\n  value: 2.7182817\n}\n"
    assert str(notebook._int64_feature(True)) == "int64_list {\n  value: 1\n}\n"
    assert str(notebook._int64_feature(1)) == "int64_list {\n  value: 1\n}\n"
    # The notebook's serialized float feature.
    assert notebook._float_feature(np.exp(1)).SerializeToString() == b"\x12\x06\n\x04T\xf8-@"


@pytest.mark.parametrize(
    "helper, value, error",
    [
        (notebook._int64_feature, 1.0, TypeError),
        (notebook._int64_feature, "1", TypeError),
        (notebook._int64_feature, 2**63, ValueError),
        (notebook._int64_feature, np.uint64(2**64 - 1), ValueError),
        (notebook._float_feature, "1.0", TypeError),
        (notebook._float_feature, b"1.0", TypeError),
        (notebook._bytes_feature, "a str, not bytes", TypeError),
        (notebook._bytes_feature, 1, TypeError),
    ],
)
def test_helpers_reject_what_protobuf_rejects(helper, value, error):
    with pytest.raises(error):
        helper(value)


def test_helpers_accept_what_protobuf_accepts():
    assert notebook._float_feature(1).float_list.value == [1.0]
    assert notebook._int64_feature(np.int32(-3)).int64_list.value == [-3]
    assert notebook._int64_feature(np.bool_(True)).int64_list.value == [1]
    assert notebook._bytes_feature(np.bytes_(b"x")).bytes_list.value == [b"x"]


def test_one_observation_round_trips(walkthrough):
    proto = walkthrough["example_proto"]
    assert proto.to_dict() == {
        "feature0": [0],
        "feature1": [4],
        "feature2": [b"goat"],
        "feature3": [float(np.float32(0.9876))],
    }
    assert proto.features.feature["feature2"].WhichOneof("kind") == "bytes_list"
    assert tfrec.train.Example.FromString(proto.SerializeToString()) == proto


def test_ten_thousand_observations_read_back_exactly(walkthrough):
    feature0, feature1, feature2, feature3 = walkthrough["observations"]
    records = list(tfrec.TFRecordDataset([walkthrough["filename"]]))
    assert len(records) == N
    batch = tfrec.io.parse_example(records, notebook.feature_description)
    np.testing.assert_array_equal(batch["feature0"], feature0.astype(np.int64))
    np.testing.assert_array_equal(batch["feature1"], feature1)
    assert batch["feature2"].dtype == object and batch["feature2"].tolist() == feature2.tolist()
    np.testing.assert_array_equal(batch["feature3"], feature3.astype(np.float32))
    assert batch["feature3"].dtype == np.float32 and batch["feature0"].dtype == np.int64


def test_parse_function_over_the_dataset(walkthrough):
    parsed = walkthrough["parsed"]
    feature0, feature1, feature2, feature3 = walkthrough["observations"]
    assert len(parsed) == N
    first = parsed[0]
    assert set(first) == set(notebook.feature_description)
    assert first["feature1"].shape == () and first["feature1"].item() == feature1[0]
    assert first["feature2"].item() == feature2[0]
    assert first["feature3"].item() == np.float32(feature3[0])


def test_reading_in_python_gives_the_dict_of_arrays(walkthrough):
    result = walkthrough["first_as_dict"]
    feature0, feature1, feature2, feature3 = walkthrough["observations"]
    assert result["feature1"].tolist() == [feature1[0]]
    assert result["feature2"].tolist() == [feature2[0]]


def test_image_example(walkthrough):
    parsed = walkthrough["parsed_images"]
    images = walkthrough["images"]
    assert len(parsed) == len(images) > 0
    for (path, label), features in zip(images, parsed):
        raw = features["image_raw"].item()
        assert raw == path.read_bytes()
        assert features["label"].item() == label
        assert (features["height"].item(), features["width"].item(), features["depth"].item()) == notebook.jpeg_shape(raw)
        assert features["depth"].item() in (1, 3)


def test_non_scalar_feature_via_serialize_tensor(walkthrough):
    np.testing.assert_array_equal(walkthrough["matrix_back"], walkthrough["matrix"])
    assert walkthrough["matrix_back"].dtype == np.float32


def test_the_example_script_runs(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "notebook.py"), "--out", str(tmp_path), "--observations", "200"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert 'value: "goat"' in result.stdout
    assert (tmp_path / "test.tfrecord").exists() and (tmp_path / "images.tfrecords").exists()

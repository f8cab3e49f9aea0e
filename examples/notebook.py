#!/usr/bin/env python3
"""The TensorFlow "TFRecord and tf.train.Example" notebook, with tfrec in place of tf.

Run it after installing the package (``pip install ./crates/tfrec-py`` or ``scripts/test``):

    python examples/notebook.py [--out DIR] [--observations N]

Each step is the notebook's, with the notebook's names; where TensorFlow is needed for
something that is not TFRecord work (``tf.io.decode_jpeg`` for an image's shape), a few lines
of Python stand in.
"""

import argparse
import os
import pathlib
import struct
import tempfile

import numpy as np

import tfrec

REPO = pathlib.Path(__file__).resolve().parents[1]


# -- tf.train.Example: the three helpers -------------------------------------------------------
def _bytes_feature(value):
    """Returns a bytes_list from a string / byte."""
    return tfrec.train.Feature(bytes_list=tfrec.train.BytesList(value=[value]))


def _float_feature(value):
    """Returns a float_list from a float / double."""
    return tfrec.train.Feature(float_list=tfrec.train.FloatList(value=[value]))


def _int64_feature(value):
    """Returns an int64_list from a bool / enum / int / uint."""
    return tfrec.train.Feature(int64_list=tfrec.train.Int64List(value=[value]))


def serialize_example(feature0, feature1, feature2, feature3):
    """Creates a tf.train.Example message ready to be written to a file."""
    feature = {
        "feature0": _int64_feature(feature0),
        "feature1": _int64_feature(feature1),
        "feature2": _bytes_feature(feature2),
        "feature3": _float_feature(feature3),
    }
    example_proto = tfrec.train.Example(features=tfrec.train.Features(feature=feature))
    return example_proto.SerializeToString()


feature_description = {
    "feature0": tfrec.io.FixedLenFeature([], tfrec.int64, default_value=0),
    "feature1": tfrec.io.FixedLenFeature([], tfrec.int64, default_value=0),
    "feature2": tfrec.io.FixedLenFeature([], tfrec.string, default_value=""),
    "feature3": tfrec.io.FixedLenFeature([], tfrec.float32, default_value=0.0),
}


def _parse_function(example_proto):
    # Parse the input `tf.train.Example` proto using the dictionary above.
    return tfrec.io.parse_single_example(example_proto, feature_description)


def observations(n, seed=0):
    """The notebook's synthetic data set: four features of n observations."""
    rng = np.random.default_rng(seed)
    feature0 = rng.choice([False, True], n)  # boolean
    feature1 = rng.integers(0, 5, n)  # integer
    strings = np.array([b"cat", b"dog", b"chicken", b"horse", b"goat"])
    feature2 = strings[feature1]  # string
    feature3 = rng.standard_normal(n)  # float
    return feature0, feature1, feature2, feature3


# -- images -------------------------------------------------------------------------------------
def jpeg_shape(image_string):
    """(height, width, channels) of a JPEG: what the notebook gets from tf.io.decode_jpeg."""
    data = memoryview(image_string)
    if bytes(data[:2]) != b"\xff\xd8":
        raise ValueError("not a JPEG")
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ValueError("bad JPEG marker")
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return height, width, data[pos + 9]
        pos += 2 + length
    raise ValueError("no frame header in the JPEG")


def image_example(image_string, label):
    image_shape = jpeg_shape(image_string)
    feature = {
        "height": _int64_feature(image_shape[0]),
        "width": _int64_feature(image_shape[1]),
        "depth": _int64_feature(image_shape[2]),
        "label": _int64_feature(label),
        "image_raw": _bytes_feature(image_string),
    }
    return tfrec.train.Example(features=tfrec.train.Features(feature=feature))


image_feature_description = {
    "height": tfrec.io.FixedLenFeature([], tfrec.int64),
    "width": tfrec.io.FixedLenFeature([], tfrec.int64),
    "depth": tfrec.io.FixedLenFeature([], tfrec.int64),
    "label": tfrec.io.FixedLenFeature([], tfrec.int64),
    "image_raw": tfrec.io.FixedLenFeature([], tfrec.string),
}


def _parse_image_function(example_proto):
    return tfrec.io.parse_single_example(example_proto, image_feature_description)


def bundled_images():
    """(path, label) of the bundled sample images: one label per folder of samples/images."""
    root = REPO / "samples" / "images"
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    return [(path, label) for label, folder in enumerate(folders) for path in sorted(folder.glob("*.jpg"))]


def main(out_dir, n_observations=10_000, verbose=True):
    say = print if verbose else (lambda *a, **k: None)
    out = {}

    # The helpers and what they make.
    say(_bytes_feature(b"test_string"))
    say(_bytes_feature("test_bytes".encode("utf-8")))
    say(_float_feature(np.exp(1)))
    say(_int64_feature(True))
    say(_int64_feature(1))
    feature = _float_feature(np.exp(1))
    say(feature.SerializeToString())

    # One observation, serialized and decoded.
    serialized_example = serialize_example(False, 4, b"goat", 0.9876)
    say(serialized_example)
    example_proto = tfrec.train.Example.FromString(serialized_example)
    say(example_proto)
    out["example_proto"] = example_proto

    # 10,000 observations written to a TFRecord file.
    feature0, feature1, feature2, feature3 = observations(n_observations)
    filename = os.path.join(out_dir, "test.tfrecord")
    with tfrec.io.TFRecordWriter(filename) as writer:
        for i in range(n_observations):
            example = serialize_example(feature0[i], feature1[i], feature2[i], feature3[i])
            writer.write(example)
    out["filename"] = filename
    out["observations"] = (feature0, feature1, feature2, feature3)

    # Read it back: raw records, then parsed with the feature description.
    filenames = [filename]
    raw_dataset = tfrec.TFRecordDataset(filenames)
    for raw_record in raw_dataset.take(10):
        say(repr(raw_record))
    parsed_dataset = raw_dataset.map(_parse_function)
    for parsed_record in parsed_dataset.take(10):
        say(repr(parsed_record))
    out["parsed"] = list(parsed_dataset)

    # Reading in Python: the Example message and a dict of NumPy arrays.
    for raw_record in raw_dataset.take(1):
        example = tfrec.train.Example()
        example.ParseFromString(raw_record)
        say(example)
    result = {}
    for key, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        result[key] = np.array(getattr(feature, kind).value)
    say(result)
    out["first_as_dict"] = result

    # Images: height, width, depth, label and the JPEG bytes.
    record_file = os.path.join(out_dir, "images.tfrecords")
    images = bundled_images()
    with tfrec.io.TFRecordWriter(record_file) as writer:
        for path, label in images:
            image_string = open(path, "rb").read()
            tf_example = image_example(image_string, label)
            writer.write(tf_example.SerializeToString())
    raw_image_dataset = tfrec.TFRecordDataset(record_file)
    parsed_image_dataset = raw_image_dataset.map(_parse_image_function)
    for image_features in parsed_image_dataset:
        say({k: v for k, v in image_features.items() if k != "image_raw"}, len(image_features["image_raw"].item()))
    out["images"] = images
    out["parsed_images"] = list(parsed_image_dataset)

    # A non-scalar feature: serialize_tensor into a bytes feature, parse_tensor back.
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    serialized_matrix = tfrec.io.serialize_tensor(matrix)
    tensor_example = tfrec.train.Example(
        features=tfrec.train.Features(feature={"matrix": _bytes_feature(serialized_matrix)})
    )
    parsed = tfrec.io.parse_single_example(
        tensor_example.SerializeToString(), {"matrix": tfrec.io.FixedLenFeature([], tfrec.string)}
    )
    back = tfrec.io.parse_tensor(parsed["matrix"].item(), out_type=tfrec.float32)
    say(back)
    out["matrix"], out["matrix_back"] = matrix, back
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="directory for the files (default: a temporary one)")
    parser.add_argument("--observations", type=int, default=10_000)
    args = parser.parse_args()
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        main(args.out, args.observations)
    else:
        with tempfile.TemporaryDirectory() as d:
            main(d, args.observations)

#!/usr/bin/env python3
# TensorFlow's tutorial "TFRecord and tf.train.Example", ported cell by cell to tfrec.
#
# Source: github.com/tensorflow/docs, site/en/tutorials/load_data/tfrecord.ipynb at 7c36502
# (March 2026): 29 code cells, numbered here as in the notebook (the license cell is cell 1).
# Cells A1-A10 at the end are the notebook's section "TFRecord files using tf.data" (its
# from_tensor_slices / map / tf.data.experimental.TFRecordWriter writing cells), which the
# tutorial dropped in September 2023 (last at 8903008): ported too, as they are what a tf.data
# user writes.
#
# A name change is: `tf` -> `tfrec` (tf.train, tf.io, tf.data.TFRecordDataset ->
# tfrec.TFRecordDataset, tf.data.Dataset -> tfrec.data.Dataset), and a notebook cell's last
# expression, which a notebook displays, printed. Anything more is marked `# changed: <why>`.
#
# Count: 29 + 10 = 39 cells; 12 needed more than a name change:
#   - 7 for TensorFlow's tensors and graph functions (no tensors in tfrec: records are bytes,
#     parsed values NumPy arrays): cells 3, 7, 9, 11, 14, 29, A4;
#   - 1 for TensorFlow's image decoding: cell 25 (a JPEG header read stands in for
#     tf.io.decode_jpeg);
#   - 4 for the setting (a script without IPython or network): cell 2 (IPython.display), 12 and
#     27 (`!du`), 21 (downloads: the repository's bundled sample JPEGs stand in for the photos);
# Of the tutorial's current 29 cells: 11 (3, 7, 9, 11, 14, 29 for tensors; 25 for image
# decoding; 2, 12, 21, 27 for the setting), and 7 of them for TensorFlow's tensors or images.
#
#
# Run it in an empty directory (it writes test.tfrecord, images.tfrecords and
# test_from_slices.tfrecord there): python examples/tfrecord_tutorial.py
# No network and no TensorFlow needed. Lines marked `# check:` are not the tutorial's: they
# make the run fail if a result is wrong.

# cell 1: the license
# @title Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# https://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# cell 2: setup
# changed: IPython.display is for notebooks; in a script without IPython a stand-in prints a
# line for each image instead of showing it.
import os
import pathlib
import sys
import types

import numpy as np

import tfrec

try:
    import IPython.display as display
except ImportError:
    display = types.SimpleNamespace(
        display=print,
        Image=lambda filename=None, data=None: (
            f"<image: {len(data) if data is not None else os.path.getsize(filename)} bytes>"
        ),
        HTML=lambda html: html,
    )

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from notebook import jpeg_shape  # noqa: E402  (examples/notebook.py's JPEG header reader)

# cell 3: helpers that make a tf.train.Feature of a scalar
# changed: no `if isinstance(value, type(tf.constant(0))): value = value.numpy()`: tfrec has no
# tensors, a value is already Python or NumPy.


def _bytes_feature(value):
    """Returns a bytes_list from a string / byte."""
    return tfrec.train.Feature(bytes_list=tfrec.train.BytesList(value=[value]))


def _float_feature(value):
    """Returns a float_list from a float / double."""
    return tfrec.train.Feature(float_list=tfrec.train.FloatList(value=[value]))


def _int64_feature(value):
    """Returns an int64_list from a bool / enum / int / uint."""
    return tfrec.train.Feature(int64_list=tfrec.train.Int64List(value=[value]))


# cell 4: what the helpers make
print(_bytes_feature(b"test_string"))
print(_bytes_feature("test_bytes".encode("utf-8")))

print(_float_feature(np.exp(1)))

print(_int64_feature(True))
print(_int64_feature(1))

# cell 5: a Feature serialized
feature = _float_feature(np.exp(1))

print(feature.SerializeToString())

# cell 6: the data set: four features of 10,000 observations
# The number of observations in the dataset.
n_observations = int(1e4)

# Boolean feature, encoded as False or True.
feature0 = np.random.choice([False, True], n_observations)

# Integer feature, random from 0 to 4.
feature1 = np.random.randint(0, 5, n_observations)

# String feature.
strings = np.array([b"cat", b"dog", b"chicken", b"horse", b"goat"])
feature2 = strings[feature1]

# Float feature, from a standard normal distribution.
feature3 = np.random.randn(n_observations)


# cell 7: one observation as a serialized tf.train.Example
# changed: no `@tf.py_function(Tout=tf.string)`: there is no graph to leave, the function is
# plain Python and returns bytes.
def serialize_example(feature0, feature1, feature2, feature3):
    """
    Creates a tf.train.Example message ready to be written to a file.
    """
    # Create a dictionary mapping the feature name to the tf.train.Example-compatible
    # data type.
    feature = {
        "feature0": _int64_feature(feature0),
        "feature1": _int64_feature(feature1),
        "feature2": _bytes_feature(feature2),
        "feature3": _float_feature(feature3),
    }

    # Create a Features message using tf.train.Example.

    example_proto = tfrec.train.Example(features=tfrec.train.Features(feature=feature))
    return example_proto.SerializeToString()


# cell 8: an example observation, serialized
# This is an example observation from the dataset.

example_observation = [False, 4, b"goat", 0.9876]
serialized_example = serialize_example(*example_observation)
print(serialized_example)

# cell 9: decoded again
# changed: `serialized_example` is bytes, not a tensor: no `.numpy()`.
example_proto = tfrec.train.Example.FromString(serialized_example)
print(example_proto)
assert example_proto.features.feature["feature2"].bytes_list.value == [b"goat"]  # check:

# cell 10: the file name
filename = "test.tfrecord"

# cell 11: the 10,000 observations written to the file
# changed: `serialize_example` returns bytes: `writer.write(example)`, no `.numpy()`.
# Write the `tf.train.Example` observations to the file.
with tfrec.io.TFRecordWriter(filename) as writer:
    for i in range(n_observations):
        example = serialize_example(feature0[i], feature1[i], feature2[i], feature3[i])
        writer.write(example)

# cell 12: the file's size
# changed: `!du -sh {filename}` is a notebook shell command.
print(f"{os.path.getsize(filename) / 1024:.0f}K\t{filename}")

# cell 13: a TFRecordDataset of the file
filenames = [filename]
raw_dataset = tfrec.TFRecordDataset(filenames)
print(repr(raw_dataset))

# cell 14: the first record, parsed into an Example message
# changed: a record is bytes, not a tensor: `example.ParseFromString(raw_record)`, no `.numpy()`.
for raw_record in raw_dataset.take(1):
    example = tfrec.train.Example()
    example.ParseFromString(raw_record)
    print(example)

# cell 15: the Example as a dict of NumPy arrays, by hand
result = {}
# example.features.feature is the dictionary
for key, feature in example.features.feature.items():
    # The values are the Feature objects which contain a `kind` which contains:
    # one of three fields: bytes_list, float_list, int64_list

    kind = feature.WhichOneof("kind")
    result[key] = np.array(getattr(feature, kind).value)

print(result)
assert result["feature1"][0] == feature1[0] and result["feature2"][0] == feature2[0]  # check:

# cell 16: the TFRecordDataset again
filenames = [filename]
raw_dataset = tfrec.TFRecordDataset(filenames)
print(repr(raw_dataset))

# cell 17: the first 10 records
for raw_record in raw_dataset.take(10):
    print(repr(raw_record))

# cell 18: the feature description and a parse function
# Create a description of the features.
feature_description = {
    "feature0": tfrec.io.FixedLenFeature([], tfrec.int64, default_value=0),
    "feature1": tfrec.io.FixedLenFeature([], tfrec.int64, default_value=0),
    "feature2": tfrec.io.FixedLenFeature([], tfrec.string, default_value=""),
    "feature3": tfrec.io.FixedLenFeature([], tfrec.float32, default_value=0.0),
}


def _parse_function(example_proto):
    # Parse the input `tf.train.Example` proto using the dictionary above.
    return tfrec.io.parse_single_example(example_proto, feature_description)


# cell 19: the records parsed, with map
parsed_dataset = raw_dataset.map(_parse_function)
print(repr(parsed_dataset))

# cell 20: the first 10 parsed records
for parsed_record in parsed_dataset.take(10):
    print(repr(parsed_record))

parsed_all = list(parsed_dataset)  # check:
assert len(parsed_all) == n_observations  # check:
assert [int(p["feature1"]) for p in parsed_all] == feature1.tolist()  # check:
assert np.allclose([float(p["feature3"]) for p in parsed_all], feature3.astype(np.float32))  # check:

# cell 21: the two images
# changed: no network here, so no download (tf.keras.utils.get_file): two small JPEGs bundled
# with tfrec (samples/images) stand in for the cat and the bridge photos.
samples = pathlib.Path(__file__).resolve().parents[1] / "samples" / "images"
cat_in_snow = str(samples / "circles" / "circle_0.jpg")

williamsburg_bridge = str(samples / "stripes" / "stripes_0.jpg")

# cell 22: the first image shown
display.display(display.Image(filename=cat_in_snow))
display.display(
    display.HTML(
        'Image cc-by: <a "href=https://commons.wikimedia.org/wiki/File:Felis_catus-cat_on_snow.jpg">Von.grzanka</a>'
    )
)

# cell 23: the second image shown
display.display(display.Image(filename=williamsburg_bridge))
display.display(
    display.HTML(
        '<a "href=https://commons.wikimedia.org/wiki/File:New_East_River_Bridge_from_Brooklyn_det.4a09796u.jpg">'
        "From Wikimedia</a>"
    )
)

# cell 24: a label for each image
image_labels = {
    cat_in_snow: 0,
    williamsburg_bridge: 1,
}

# cell 25: an image as a tf.train.Example
# changed: `tf.io.decode_jpeg(image_string).shape` decodes the image for its shape; tfrec does
# not decode images, so the shape is read from the JPEG's frame header (`jpeg_shape`).
# This is an example, just using the cat image.
image_string = open(cat_in_snow, "rb").read()

label = image_labels[cat_in_snow]


# Create a dictionary with features that may be relevant.
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


for line in str(image_example(image_string, label)).split("\n")[:15]:
    print(line)
print("...")

# cell 26: both images written to images.tfrecords
# Write the raw image files to `images.tfrecords`.
# First, process the two images into `tf.train.Example` messages.
# Then, write to a `.tfrecords` file.
record_file = "images.tfrecords"
with tfrec.io.TFRecordWriter(record_file) as writer:
    for filename, label in image_labels.items():
        image_string = open(filename, "rb").read()
        tf_example = image_example(image_string, label)
        writer.write(tf_example.SerializeToString())

# cell 27: the file's size
# changed: `!du -sh {record_file}` is a notebook shell command.
print(f"{os.path.getsize(record_file) / 1024:.0f}K\t{record_file}")

# cell 28: the image records parsed
raw_image_dataset = tfrec.TFRecordDataset("images.tfrecords")

# Create a dictionary describing the features.
image_feature_description = {
    "height": tfrec.io.FixedLenFeature([], tfrec.int64),
    "width": tfrec.io.FixedLenFeature([], tfrec.int64),
    "depth": tfrec.io.FixedLenFeature([], tfrec.int64),
    "label": tfrec.io.FixedLenFeature([], tfrec.int64),
    "image_raw": tfrec.io.FixedLenFeature([], tfrec.string),
}


def _parse_image_function(example_proto):
    # Parse the input tf.train.Example proto using the dictionary above.
    return tfrec.io.parse_single_example(example_proto, image_feature_description)


parsed_image_dataset = raw_image_dataset.map(_parse_image_function)
print(repr(parsed_image_dataset))

# cell 29: the images read back and shown
# changed: a parsed string is a 0-d NumPy array of bytes, not a tensor: `.item()`, not `.numpy()`.
for image_features in parsed_image_dataset:
    image_raw = image_features["image_raw"].item()
    display.display(display.Image(data=image_raw))

images_back = [f["image_raw"].item() for f in parsed_image_dataset]  # check:
assert images_back == [open(p, "rb").read() for p in image_labels]  # check:

# The section "TFRecord files using tf.data" of the tutorial until September 2023 (commit
# 8903008), where it came after cell 9: the observations written through a tf.data pipeline.
# Written to its own file here, which must hold the records cell 11 wrote.
filename = "test_from_slices.tfrecord"

# cell A1: from_tensor_slices on an array: a dataset of its scalars
print(repr(tfrec.data.Dataset.from_tensor_slices(feature1)))

# cell A2: on a tuple of arrays: a dataset of tuples
features_dataset = tfrec.data.Dataset.from_tensor_slices((feature0, feature1, feature2, feature3))
print(repr(features_dataset))

# cell A3: one element
# Use `take(1)` to only pull one example from the dataset.
for f0, f1, f2, f3 in features_dataset.take(1):
    print(f0)
    print(f1)
    print(f2)
    print(f3)


# cell A4: serialize_example wrapped for map
# changed: tf.data's map runs in graph mode, so the tutorial wraps serialize_example in
# tf.py_function and reshapes its result to a scalar; tfrec's map calls Python directly.
def tf_serialize_example(f0, f1, f2, f3):
    return serialize_example(f0, f1, f2, f3)


# cell A5: the wrapper on one element
print(tf_serialize_example(f0, f1, f2, f3))

# cell A6: the wrapper mapped over the data set (a tuple element is passed as arguments, as
# tf.data does)
serialized_features_dataset = features_dataset.map(tf_serialize_example)
print(repr(serialized_features_dataset))


# cell A7: the same with a generator
def generator():
    for features in features_dataset:
        yield serialize_example(*features)


# cell A8: a dataset from the generator
serialized_features_dataset = tfrec.data.Dataset.from_generator(generator, output_types=tfrec.string, output_shapes=())

# cell A9: show it
print(repr(serialized_features_dataset))

# cell A10: the records written to a file
writer = tfrec.data.experimental.TFRecordWriter(filename)
writer.write(serialized_features_dataset)

assert list(tfrec.TFRecordDataset(filename)) == list(tfrec.TFRecordDataset("test.tfrecord"))  # check:
print("done: every cell ran")

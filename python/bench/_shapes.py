"""Benchmark inputs written from a seed, in several shapes per kind of data (issue 28).

A figure measured on one hand-picked file can be tuned to; so each kind of data (``narrow``
and ``wide`` Examples, ``sequence`` SequenceExamples) comes here in several shapes: few and
many features, small and large varints, scalars and lists, present and missing, short and
long steps, dense and ``VarLen`` feature lists, int64, float and bytes. A shape owns how one
record is drawn and the spec (the JSON ``tfrec parse --spec`` reads) that parses it; this
module owns writing a shape's file, its spec and its GZIP copy. Nothing here reads the clock,
so the tests use it as it is.

Used by ``bench_shapes.py`` (tfrec against TensorFlow), ``bench_before_after.py`` (two builds'
instruction counts) and ``python/tests/test_bench_shapes.py``.
"""

import collections
import json
import os

import numpy as np

import tfrec

# A record is drawn by ``make(rng)``; ``records`` is how many a file holds at scale 1 (about
# 50-150 MB each); ``gzip`` says whether a GZIP copy is written and timed too.
Shape = collections.namedtuple("Shape", "name kind about records spec make gzip")

ANIMALS = np.array([b"cat", b"dog", b"chicken", b"horse", b"goat"], dtype=object)
LANGS = np.array([b"en", b"de", b"fr", b"ja"], dtype=object)


# Spec entries in the JSON form (`tfrec parse --spec`, TensorFlow's class names).
def fixed(dtype, shape=(), default=None):
    s = {"type": "FixedLenFeature", "shape": list(shape), "dtype": dtype}
    if default is not None:
        s["default_value"] = default
    return s


def varlen(dtype):
    return {"type": "VarLenFeature", "dtype": dtype}


def steps_of(dtype, shape=()):
    """A dense feature list: ``shape`` values a step, absent when the record has no steps."""
    return {"type": "FixedLenSequenceFeature", "shape": list(shape), "dtype": dtype, "allow_missing": True}


# Value drawers: each returns one feature's values as a typed array (or a list of bytes), so
# that an empty list is still written with its kind (TensorFlow checks the kind of a
# VarLen step even when it holds nothing).
def ints(hi, n_lo=1, n_hi=1):
    return lambda rng: rng.integers(0, hi, int(rng.integers(n_lo, n_hi + 1)), dtype=np.int64)


def floats(n_lo=1, n_hi=1, normal=False):
    def draw(rng):
        n = int(rng.integers(n_lo, n_hi + 1))
        return (rng.standard_normal(n) if normal else rng.random(n)).astype(np.float32)

    return draw


def tokens(n_lo=1, n_hi=1, len_lo=1, len_hi=11):
    """Short lower-case ASCII strings."""

    def draw(rng):
        return [bytes(rng.integers(97, 123, int(rng.integers(len_lo, len_hi + 1)), dtype=np.uint8))
                for _ in range(int(rng.integers(n_lo, n_hi + 1)))]

    return draw


def choice(words):
    return lambda rng: [words[int(rng.integers(0, len(words)))]]


# Step drawers, for feature lists: ``draw(rng, steps)`` returns one array a step, drawn
# together (a record holds up to hundreds of steps; one draw a step would dominate writing).
def dense_steps(width, hi=None):
    """``width`` int64 values below ``hi`` a step, or floats in [0, 1) when ``hi`` is None."""

    def draw(rng, steps):
        if hi is None:
            return list(rng.random((steps, width), dtype=np.float32))
        return list(rng.integers(0, hi, (steps, width), dtype=np.int64))

    return draw


def ragged_steps(max_values, hi=None):
    """0 to ``max_values`` values a step, int64 below ``hi`` or floats when ``hi`` is None."""

    def draw(rng, steps):
        lengths = rng.integers(0, max_values + 1, steps)
        flat = dense_steps(int(lengths.sum()), hi)(rng, 1)[0]
        return np.split(flat, np.cumsum(lengths)[:-1]) if steps else []

    return draw


def token_steps(len_lo=1, len_hi=8):
    """One lower-case ASCII token of ``len_lo``-``len_hi`` bytes a step."""

    def draw(rng, steps):
        ends = np.cumsum(rng.integers(len_lo, len_hi + 1, steps))
        text = rng.integers(97, 123, int(ends[-1]) if steps else 0, dtype=np.uint8).tobytes()
        return [[text[a:b]] for a, b in zip(np.concatenate([[0], ends[:-1]]), ends)]

    return draw


def example_shape(name, kind, about, records, columns, gzip=False):
    """An Example shape from ``columns``: ``(feature, spec, draw, presence)``; a feature is
    written with probability ``presence`` (1: always)."""

    def make(rng):
        return tfrec.Example.from_dict(
            {f: draw(rng) for f, _, draw, presence in columns if presence >= 1 or rng.random() < presence})

    return Shape(name, kind, about, records, {f: s for f, s, _, _ in columns}, make, gzip)


def sequence_shape(name, about, records, max_steps, lists, gzip=False):
    """A SequenceExample shape: the context ``id`` (int64) and ``lang`` (string) as FixedLen
    features, and ``lists``: ``(name, spec, step drawer)``, 0 to ``max_steps`` steps (the
    same count for every list of a record)."""
    spec = {
        "context_features": {"id": fixed("int64"), "lang": fixed("string")},
        "sequence_features": {n: s for n, s, _ in lists},
    }
    draw_lang = choice(LANGS)

    def make(rng):
        steps = int(rng.integers(0, max_steps + 1))
        return tfrec.SequenceExample.from_dict({
            "context": {"id": [int(rng.integers(0, 1 << 30))], "lang": draw_lang(rng)},
            "feature_lists": {n: draw(rng, steps) for n, _, draw in lists},
        })

    return Shape(name, "sequence", about, records, spec, make, gzip)


def _wide_columns(int_hi, list_presence, list_min):
    """The issue's 48 features: 30 int64 scalars below ``int_hi``, 10 floats, 5 int64 lists
    of ``list_min``-20 values (each written with probability ``list_presence``), 3 short
    strings."""
    return ([(f"i{k}", fixed("int64"), ints(int_hi), 1) for k in range(30)]
            + [(f"f{k}", fixed("float32"), floats(), 1) for k in range(10)]
            + [(f"l{k}", varlen("int64"), ints(min(int_hi, 1000), list_min, 20), list_presence) for k in range(5)]
            + [(f"s{k}", fixed("string"), tokens(), 1) for k in range(3)])


def _sparse_columns(presence=0.7):
    """120 features, each missing 30% of the time: FixedLen scalars with a default, and
    VarLen lists."""
    return ([(f"i{k}", fixed("int64", default=0), ints(1 << 20), presence) for k in range(50)]
            + [(f"f{k}", fixed("float32", default=0.0), floats(), presence) for k in range(30)]
            + [(f"l{k}", varlen("int64"), ints(1 << 16, 1, 10), presence) for k in range(25)]
            + [(f"s{k}", varlen("string"), tokens(1, 3), presence) for k in range(15)])


SHAPES = [
    example_shape("narrow_tutorial", "narrow", "the tutorial's 4 scalars", 1_000_000, [
        ("feature0", fixed("int64"), ints(2), 1),
        ("feature1", fixed("int64"), ints(5), 1),
        ("feature2", fixed("string"), choice(ANIMALS), 1),
        ("feature3", fixed("float32"), floats(normal=True), 1),
    ], gzip=True),
    example_shape("narrow_big_varints", "narrow", "4 int64 scalars up to 2^62", 800_000,
                  [(f"v{k}", fixed("int64"), ints(1 << 62), 1) for k in range(4)]),
    example_shape("narrow_short_lists", "narrow", "a label, 0-5 ids, 3 weights, 0-3 tags", 600_000, [
        ("label", fixed("int64"), ints(2), 1),
        ("ids", varlen("int64"), ints(1 << 20, 0, 5), 1),
        ("weights", fixed("float32", [3]), floats(3, 3), 1),
        ("tags", varlen("string"), tokens(0, 3, 2, 6), 1),
    ]),
    example_shape("wide_issue", "wide", "48 features, ints < 2^40, lists 90% present", 100_000,
                  _wide_columns(1 << 40, 0.9, 0), gzip=True),
    example_shape("wide_small_varints", "wide", "48 features, ints < 128, all present", 120_000,
                  _wide_columns(128, 1, 1)),
    example_shape("wide_sparse", "wide", "120 features, 30% missing", 60_000, _sparse_columns()),
    sequence_shape("seq_issue", "0-100 steps of 8 floats + 1 int64", 40_000, 100, [
        ("x", steps_of("float32", [8]), dense_steps(8)),
        ("y", steps_of("int64"), dense_steps(1, 100)),
    ], gzip=True),
    sequence_shape("seq_long_rows", "0-20 steps of 64 floats + 1 int64", 40_000, 20, [
        ("x", steps_of("float32", [64]), dense_steps(64)),
        ("y", steps_of("int64"), dense_steps(1, 100)),
    ], gzip=True),
    sequence_shape("seq_many_steps", "0-500 steps of 1 int64", 60_000, 500, [
        ("y", steps_of("int64"), dense_steps(1, 1000)),
    ]),
    sequence_shape("seq_varlen", "0-100 ragged steps of 0-5 int64 and 0-5 floats", 60_000, 100, [
        ("a", varlen("int64"), ragged_steps(5, 1 << 20)),
        ("b", varlen("float32"), ragged_steps(5)),
    ]),
    sequence_shape("seq_bytes", "0-100 steps of a 1-8 byte token", 100_000, 100, [
        ("tok", steps_of("string"), token_steps()),
    ]),
]
BY_NAME = {s.name: s for s in SHAPES}
KINDS = ["narrow", "wide", "sequence"]


def count_at(shape, scale):
    """How many records ``shape`` has at ``scale`` (at least one)."""
    return max(1, int(shape.records * scale))


def write_shape(directory, shape, rng, records, name=None):
    """Writes ``NAME.tfrecord`` (``records`` records of ``shape``), ``NAME.spec.json`` and,
    for a GZIP shape, ``NAME.tfrecord.gz`` into ``directory``; returns the plain file's path.
    ``name`` defaults to the shape's."""
    path = os.path.join(directory, f"{name or shape.name}.tfrecord")
    with tfrec.TFRecordWriter(path) as w:
        for _ in range(records):
            w.write(shape.make(rng).SerializeToString())
    with open(spec_path(path), "w") as f:
        json.dump(shape.spec, f, indent=1)
    if shape.gzip:
        with tfrec.TFRecordWriter(path + ".gz", "GZIP") as w:
            for record in tfrec.TFRecordDataset(path):
                w.write(record)
    return path


def spec_path(path):
    """The spec file beside a shape's ``NAME.tfrecord``."""
    return path[: -len(".tfrecord")] + ".spec.json"


def write_all(directory, seed, scale, names=None):
    """Every shape (or those ``names``) at ``scale``, from one generator seeded ``seed``, in
    the order of ``SHAPES``; returns ``[(shape, path, records)]``."""
    rng = np.random.default_rng(seed)
    out = []
    for shape in SHAPES:
        if names is None or shape.name in names:
            n = count_at(shape, scale)
            out.append((shape, write_shape(directory, shape, rng, n), n))
    return out

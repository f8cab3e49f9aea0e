"""tfrec's pipelines against tf.data itself: random chains of 1–6 stages (interleave, shard,
skip, take, repeat, batch with and without drop_remainder, shuffle with a seed, map, filter,
parse) over several small files, built once with ``tfrec.TFRecordDataset`` and once with
``tf.data``. Without a shuffle the two must give the same elements in the same order; with
one, the same multiset (or count, when a later take/skip/shard picks by position), and tfrec
the same output twice under its seed. Cardinality and errors must agree too.

A shuffle's order is tfrec's own (tf.data's generator is not reproduced), but like tf.data's it
does not depend on where a ``map`` stands: every chain with a ``map`` is also run with its maps
moved to the end (and its keep-everything filters left out), which must give the very same
elements in the same order, shuffles, repeats and all.

``TFREC_TFDATA_CHAINS`` (default 2000) chains per run, in ``PARTS`` tests of consecutive chain
numbers so that pytest-xdist spreads them over the workers (the cost is TensorFlow's: building
and running its pipelines). Each chain is drawn from the seed and its number alone; the seed is
printed on failure and ``TFREC_TFDATA_SEED`` replays it.
"""

import os
import random

import numpy as np
import pytest

import tfrec
from conftest import summary

tf = pytest.importorskip("tensorflow")

CHAINS = int(os.environ.get("TFREC_TFDATA_CHAINS", "2000"))
PARTS = 4

SCALAR_SPEC = {"i": ("FixedLen", "int64"), "s": ("FixedLen", "string")}
BATCH_SPEC = {**SCALAR_SPEC, "v": ("VarLen", "float32")}


def tfrec_spec(spec):
    return {
        k: tfrec.io.FixedLenFeature([], dtype) if kind == "FixedLen" else tfrec.io.VarLenFeature(dtype)
        for k, (kind, dtype) in spec.items()
    }


def tf_spec(spec):
    dtypes = {"int64": tf.int64, "string": tf.string, "float32": tf.float32}
    return {
        k: tf.io.FixedLenFeature([], dtypes[dtype]) if kind == "FixedLen" else tf.io.VarLenFeature(dtypes[dtype])
        for k, (kind, dtype) in spec.items()
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Five files of 0–11 Examples (one empty), numbered across files."""
    d = tmp_path_factory.mktemp("tfdata")
    rng = random.Random(20261125)
    paths, n = [], 0
    for f, count in enumerate([7, 0, 11, 3, 9]):
        path = str(d / f"part-{f}.tfrecord")
        with tfrec.TFRecordWriter(path) as w:
            for _ in range(count):
                values = [rng.uniform(-1, 1) for _ in range(rng.randrange(4))]
                ex = tfrec.Example.from_dict({"i": n, "s": f"r{n}".encode(), "v": values})
                w.write(ex.SerializeToString())
                n += 1
        paths.append(path)
    return paths


# Element kinds as a chain goes: "rec" (a record), "recs" (a batch of records), "dict" (one
# parsed Example of scalars), "dicts" (a parsed batch), "int" (a scalar), "ints" (a vector).
SCALAR_KINDS = ("rec", "dict", "int")
MAPPED_KIND = {"rec": "int", "recs": "ints", "dict": "int", "dicts": "ints", "int": "int", "ints": "ints"}


def stage_choices(kind, has_interleave_slot):
    choices = ["shard", "skip", "take", "repeat", "shuffle", "map"]
    if kind in SCALAR_KINDS:
        choices += ["batch", "filter"]
    if kind in ("rec", "recs"):
        choices.append("parse")
    if has_interleave_slot:
        choices.append("interleave")
    return choices


def random_chain(rng):
    kind, chain = "rec", []
    for position in range(rng.randint(1, 6)):
        name = rng.choice(stage_choices(kind, position == 0))
        if name == "interleave":
            chain.append(("interleave", rng.randint(1, 4), rng.randint(1, 3)))
        elif name == "shard":
            n = rng.randint(1, 4)
            chain.append(("shard", n, rng.randrange(n)))
        elif name in ("skip", "take"):
            chain.append((name, rng.choice([-1, 0, 1, 2, 3, 5, 8, 13, 40])))
        elif name == "repeat":
            chain.append(("repeat", rng.randint(0, 3)))
        elif name == "shuffle":
            chain.append(("shuffle", rng.choice([1, 2, 5, 50]), rng.randrange(2**31)))
        elif name == "batch":
            chain.append(("batch", rng.randint(1, 7), rng.random() < 0.5))
            kind = {"rec": "recs", "dict": "dicts", "int": "ints"}[kind]
        elif name == "parse":
            chain.append(("parse", kind))
            kind = {"rec": "dict", "recs": "dicts"}[kind]
        elif name == "map":
            chain.append(("map", kind))
            kind = MAPPED_KIND[kind]
        elif name == "filter":
            chain.append(("filter", kind, rng.choice(["all", "even"])))
    return chain


def number(kind, lib):
    """The number an element of a scalar kind stands for: a record's or a dict's ``i``, or the
    value itself."""
    if kind == "rec" and lib == "tf":
        spec = tf_spec(SCALAR_SPEC)
        return lambda x: tf.io.parse_single_example(x, spec)["i"]
    if kind == "rec":
        spec = tfrec_spec(SCALAR_SPEC)
        return lambda x: tfrec.io.parse_single_example(x, spec)["i"]
    if kind == "dict":
        return lambda d: d["i"]
    return lambda v: v


def filter_function(kind, which, lib):
    """Keeps everything (``all``: numbers are never negative) or the even numbers."""
    of = number(kind, lib)
    if which == "all":
        return lambda x: of(x) >= 0
    return lambda x: of(x) % 2 == 0


def map_function(kind, lib):
    """The same function for both libraries: records to their number, dicts to 3·i+1."""
    if lib == "tf":
        if kind == "rec":
            spec = tf_spec(SCALAR_SPEC)
            return lambda x: tf.io.parse_single_example(x, spec)["i"]
        if kind == "recs":
            spec = tf_spec(BATCH_SPEC)
            return lambda x: tf.io.parse_example(x, spec)["i"]
    else:
        if kind == "rec":
            spec = tfrec_spec(SCALAR_SPEC)
            return lambda x: tfrec.io.parse_single_example(x, spec)["i"]
        if kind == "recs":
            spec = tfrec_spec(BATCH_SPEC)
            return lambda x: tfrec.io.parse_example(x, spec)["i"]
    if kind in ("dict", "dicts"):
        return lambda d: d["i"] * 3 + 1
    return lambda v: v * 3 + 1


def build_tf(files, chain):
    stages = list(chain)
    if stages and stages[0][0] == "interleave":
        _, cycle, block = stages.pop(0)
        ds = tf.data.Dataset.from_tensor_slices(files).interleave(
            tf.data.TFRecordDataset, cycle_length=cycle, block_length=block, deterministic=True
        )
    else:
        ds = tf.data.TFRecordDataset(files)
    for stage in stages:
        name = stage[0]
        if name == "shard":
            ds = ds.shard(stage[1], stage[2])
        elif name in ("skip", "take", "repeat"):
            ds = getattr(ds, name)(stage[1])
        elif name == "shuffle":
            ds = ds.shuffle(stage[1], seed=stage[2])
        elif name == "batch":
            ds = ds.batch(stage[1], drop_remainder=stage[2])
        elif name == "parse":
            if stage[1] == "rec":
                spec = tf_spec(SCALAR_SPEC)
                ds = ds.map(lambda x: tf.io.parse_single_example(x, spec))
            else:
                spec = tf_spec(BATCH_SPEC)
                ds = ds.map(lambda x: tf.io.parse_example(x, spec))
        elif name == "map":
            ds = ds.map(map_function(stage[1], "tf"))
        elif name == "filter":
            ds = ds.filter(filter_function(stage[1], stage[2], "tf"))
    # tf.data fuses shuffle + repeat into one op that refuses repeat(0) ("count must be greater
    # than zero or equal to -1"), though an unfused repeat(0) is simply empty; the fusion only
    # changes the shuffled order, which is not compared.
    options = tf.data.Options()
    options.experimental_optimization.shuffle_and_repeat_fusion = False
    return ds.with_options(options)


def build_tfrec(files, chain):
    ds = tfrec.TFRecordDataset(files)
    for stage in chain:
        name = stage[0]
        if name == "interleave":
            ds = ds.interleave(stage[1], stage[2])
        elif name == "shard":
            ds = ds.shard(stage[1], stage[2])
        elif name in ("skip", "take", "repeat"):
            ds = getattr(ds, name)(stage[1])
        elif name == "shuffle":
            ds = ds.shuffle(stage[1], seed=stage[2])
        elif name == "batch":
            ds = ds.batch(stage[1], drop_remainder=stage[2])
        elif name == "parse":
            ds = ds.parse(tfrec_spec(SCALAR_SPEC if stage[1] == "rec" else BATCH_SPEC))
        elif name == "map":
            ds = ds.map(map_function(stage[1], "tfrec"))
        elif name == "filter":
            ds = ds.filter(filter_function(stage[1], stage[2], "tfrec"))
    return ds


def maps_moved_to_the_end(chain):
    """``chain`` with its maps applied after every other stage instead, and its keep-everything
    filters left out: the same elements in the same order, since each map is applied to each
    element alone (a map of records and a map of their batch give the same numbers). ``None``
    where that does not hold (a filter that drops elements, whose count a shuffle's order
    depends on), or with no map to move."""
    maps = sum(stage[0] == "map" for stage in chain)
    if maps == 0 or any(stage[0] == "filter" and stage[2] != "all" for stage in chain):
        return None
    kind, moved = "rec", []
    for stage in chain:
        if stage[0] in ("map", "filter"):
            continue
        moved.append(stage)
        if stage[0] == "batch":
            kind = {"rec": "recs", "dict": "dicts", "int": "ints"}[kind]
        elif stage[0] == "parse":
            kind = {"rec": "dict", "recs": "dicts"}[kind]
    for _ in range(maps):
        moved.append(("map", kind))
        kind = MAPPED_KIND[kind]
    return moved


def norm(x):
    """A comparable plain-Python form of an element of either library."""
    if isinstance(x, dict):
        return tuple(sorted((k, norm(v)) for k, v in x.items()))
    if hasattr(x, "to_dense"):
        return norm(x.to_dense())  # tf.data's as_numpy_iterator makes sparse values dense
    if hasattr(x, "indices") and hasattr(x, "dense_shape"):
        dense = np.zeros(tuple(x.dense_shape), dtype=np.asarray(x.values).dtype)
        for index, value in zip(x.indices, x.values):
            dense[tuple(index)] = value
        return norm(dense)
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return norm(x.item())  # tf.data gives NumPy scalars for 0-d values
    if isinstance(x, np.ndarray):
        return ("array", x.shape, norm(x.tolist()))
    if isinstance(x, (list, tuple)):
        return tuple(norm(v) for v in x)
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float):
        return round(x, 5)
    return x


def leaves(x):
    """The values of an output, whatever their grouping into batches. Zero floats are left
    out: they are the padding of a VarLen feature made dense, whose amount depends on which
    records share a batch (the data's own floats are never zero)."""
    if isinstance(x, tuple) and x and x[0] == "array":
        return leaves(x[2])
    if isinstance(x, tuple):
        out = []
        for v in x:
            out.extend(leaves(v))
        return out
    return [] if x == 0.0 and isinstance(x, float) else [x]


def run(ds):
    try:
        return [norm(e) for e in ds.as_numpy_iterator()], None
    except Exception as e:  # noqa: BLE001 — both sides' failures are compared as failures
        return None, e


def comparison(chain):
    """"exact", "multiset", "leaves" (a batch regrouped shuffled elements), "count", or "none"
    (a filter dropped elements picked by a shuffled order: even their count is the order's)."""
    shuffled = False
    mode = "exact"
    for stage in chain:
        if mode == "count":
            if stage[0] == "filter" and stage[2] != "all":
                return "none"
            continue
        if stage[0] == "shuffle":
            shuffled = True
            mode = "multiset" if mode == "exact" else mode
        elif shuffled and stage[0] in ("take", "skip", "shard"):
            mode = "count"
        elif shuffled and stage[0] == "batch" and stage[2]:
            return "count"  # which elements drop_remainder drops depends on the order
        elif shuffled and stage[0] == "batch":
            mode = "leaves"
    return mode


@pytest.mark.parametrize("part", range(PARTS))
def test_random_chains_match_tf_data(files, part):
    seed = int(os.environ.get("TFREC_TFDATA_SEED", random.SystemRandom().randrange(2**32)))
    chains = range(CHAINS * part // PARTS, CHAINS * (part + 1) // PARTS)
    counts = {"exact": 0, "multiset": 0, "leaves": 0, "count": 0, "none": 0, "both failed": 0, "maps moved": 0}
    for case in chains:
        chain = random_chain(random.Random(f"{seed}/{case}"))
        where = f"seed {seed} (TFREC_TFDATA_SEED), chain {case}: {chain}"
        tf_ds, ours = build_tf(files, chain), build_tfrec(files, chain)
        assert ours.cardinality() == int(tf_ds.cardinality()), f"cardinality, {where}"
        expected, tf_error = run(tf_ds)
        got, error = run(ours)
        if tf_error is not None or error is not None:
            assert tf_error is not None and error is not None, f"{where}: tf.data {tf_error!r}, tfrec {error!r}"
            counts["both failed"] += 1
            continue
        mode = comparison(chain)
        counts[mode] += 1
        if mode == "exact":
            assert got == expected, where
        elif mode == "multiset":
            assert sorted(map(repr, got)) == sorted(map(repr, expected)), where
        elif mode == "leaves":
            assert len(got) == len(expected), where
            assert sorted(map(repr, leaves(tuple(got)))) == sorted(map(repr, leaves(tuple(expected)))), where
        elif mode == "count":
            assert len(got) == len(expected), where
        if mode != "exact":
            again, _ = run(build_tfrec(files, chain))
            assert again == got, f"the same seed gave another order, {where}"
        moved = maps_moved_to_the_end(chain)
        if moved is not None:
            counts["maps moved"] += 1
            same, moved_error = run(build_tfrec(files, moved))
            assert moved_error is None and same == got, f"moving the maps to the end changed the output, {where}"
    summary(
        f"tf.data differential: seed {seed}, chains {chains.start}-{chains.stop - 1} of {CHAINS}, "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
    )
    assert sum(counts.values()) - counts["maps moved"] == len(chains)

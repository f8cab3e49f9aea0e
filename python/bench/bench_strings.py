#!/usr/bin/env python3
"""The Python pipeline on SequenceExamples of many short strings against TensorFlow per core,
for each form of string tensors (issue 58): ``strings="numpy"`` (NumPy ``StringDType``,
no Python object per value), ``"arrow"`` (pyarrow ``binary``) and the default ``"object"``
(object arrays of ``bytes``, as TensorFlow's ``.numpy()`` gives).

The data comes in several shapes from a seed (``SHAPES`` below: one token a step, lists of
tokens a step, pairs, context tags), each a file of about 20-60 MB at scale 1:

  tf       TFRecordDataset(path).batch(1024).map(parse_sequence_example), iterated
           (bench_shapes.py's TensorFlow side: one inter-op and one intra-op thread, a
           private pool of one, autotune off)
  FORM     tfrec.Dataset(path).batch(1024).parse(**spec, strings=FORM).threads(1), iterated

Each side runs in a child process of its own, pinned to ``--core`` (as `taskset -c 0`), which
times its passes over the file after its imports and set-up and prints the seconds; a figure
is the median of ``--rounds`` (each round runs every side in turn). The table gives each
form's ratio to TensorFlow per shape and the minimum over the shapes.

  python python/bench/bench_strings.py                       # writes to a temporary directory
  python python/bench/bench_strings.py --scale 0.05 --rounds 1
  python python/bench/bench_strings.py run numpy FILE       # one side, one pass: prints seconds

Needs tensorflow-cpu (2.21 for the issue's figures), pyarrow and NumPy 2.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import _shapes
from _shapes import sequence_shape, steps_of, token_steps, tokens, varlen

BATCH = 1024
FORMS = ["numpy", "arrow", "object"]


def token_lists(n_hi, len_lo=1, len_hi=10):
    """0 to ``n_hi`` lower-case ASCII tokens of ``len_lo``-``len_hi`` bytes a step."""

    def draw(rng, steps):
        draw_tokens = tokens(0, n_hi, len_lo, len_hi)
        return [draw_tokens(rng) for _ in range(steps)]

    return draw


def token_pairs(len_lo=1, len_hi=6):
    """Two tokens a step."""
    one = token_steps(len_lo, len_hi)

    def draw(rng, steps):
        return [a + b for a, b in zip(one(rng, steps), one(rng, steps))]

    return draw


def tagged_tokens(records):
    """The context's ``id`` and ``lang`` and 0-20 ``tags`` of 2-8 bytes; 0-100 steps of a 2-4
    byte token."""
    base = sequence_shape("tagged_tokens", "0-20 context tags, 0-100 steps of a 2-4 byte token", records, 100,
                          [("tok", steps_of("string"), token_steps(2, 4))])
    draw_tags, draw_tok, draw_lang = tokens(0, 20, 2, 8), token_steps(2, 4), _shapes.choice(_shapes.LANGS)
    train = _shapes.tfrec.train
    no_tags = train.Feature(bytes_list=train.BytesList(value=[]))

    def make(rng):
        steps = int(rng.integers(0, 101))
        return _shapes.tfrec.SequenceExample.from_dict({
            "context": {"id": [int(rng.integers(0, 1 << 30))], "lang": draw_lang(rng),
                        "tags": draw_tags(rng) or no_tags},
            "feature_lists": {"tok": draw_tok(rng, steps)},
        })

    spec = {**base.spec, "context_features": {**base.spec["context_features"], "tags": varlen("string")}}
    return base._replace(spec=spec, make=make)


SHAPES = [
    sequence_shape("tokens", "0-100 steps of a 1-8 byte token", 60_000, 100, [
        ("tok", steps_of("string"), token_steps()),
    ]),
    sequence_shape("token_lists", "0-50 steps of 0-6 tokens of 1-10 bytes", 40_000, 50, [
        ("words", varlen("string"), token_lists(6)),
    ]),
    sequence_shape("pairs_and_ids", "0-200 steps of 2 tokens of 1-6 bytes + 1 int64", 30_000, 200, [
        ("pair", steps_of("string", [2]), token_pairs()),
        ("id", steps_of("int64"), _shapes.dense_steps(1, 1000)),
    ]),
    tagged_tokens(50_000),
]


def write_all(directory, seed, scale):
    rng = np.random.default_rng(seed)
    return [(shape, _shapes.write_shape(directory, shape, rng, _shapes.count_at(shape, scale)))
            for shape in SHAPES]


def run_side(side, path, passes):
    """One side's ``passes`` over ``path`` after its set-up: the seconds they took."""
    spec = json.load(open(_shapes.spec_path(path)))
    if side == "tf":
        from bench_shapes import quiet_tensorflow
        from bench_tf import tf_parser

        tf, options = quiet_tensorflow()
        ds = tf.data.TFRecordDataset(path).batch(BATCH).map(tf_parser(tf, spec)).with_options(options)
    else:
        import tfrec

        ds = tfrec.Dataset(path).batch(BATCH).parse(**spec, strings=side).threads(1)
    t = time.perf_counter()
    for _ in range(passes):
        for _ in ds:
            pass
    return time.perf_counter() - t


def child(side, path, passes, core):
    preexec = None if core is None else (lambda: os.sched_setaffinity(0, {core}))
    out = subprocess.run([sys.executable, __file__, "run", side, path, "--passes", str(passes)],
                         check=True, capture_output=True, text=True, preexec_fn=preexec)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        p = argparse.ArgumentParser()
        p.add_argument("run")
        p.add_argument("side", choices=["tf", *FORMS])
        p.add_argument("path")
        p.add_argument("--passes", type=int, default=1)
        a = p.parse_args()
        print(run_side(a.side, a.path, a.passes))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", help="directory for the files (default: a temporary one, deleted after)")
    p.add_argument("--seed", type=int, default=58)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--core", type=int, default=0, help="the core every side runs on (-1: any)")
    p.add_argument("--json", help="also write the figures here")
    a = p.parse_args()
    core = None if a.core < 0 else a.core
    directory = a.data or tempfile.mkdtemp(prefix="tfrec-bench-strings-")
    os.makedirs(directory, exist_ok=True)
    try:
        inputs = write_all(directory, a.seed, a.scale)
        sides = ["tf", *FORMS]
        for _, path in inputs:  # warm-up: page cache, TensorFlow's tracing
            for side in sides:
                child(side, path, 1, core)
        times = {(shape.name, side): [] for shape, _ in inputs for side in sides}
        for r in range(a.rounds):
            print(f"round {r + 1} of {a.rounds}", file=sys.stderr)
            for shape, path in inputs:
                for side in sides:
                    times[shape.name, side].append(child(side, path, 1, core))
        rows = []
        for shape, path in inputs:
            tf_s = statistics.median(times[shape.name, "tf"])
            row = {"shape": shape.name, "about": shape.about, "bytes": os.path.getsize(path), "tf_seconds": tf_s}
            for form in FORMS:
                s = statistics.median(times[shape.name, form])
                row[f"{form}_seconds"] = s
                row[f"{form}_ratio"] = tf_s / s
            rows.append(row)
        print("| shape | what | MB | TF s | " + " | ".join(f"`{f}` × TF" for f in FORMS) + " |")
        print("|---|---|---|---|" + "---|" * len(FORMS))
        for row in rows:
            print(f"| {row['shape']} | {row['about']} | {row['bytes'] / 1e6:.1f} | {row['tf_seconds']:.2f} | "
                  + " | ".join(f"{row[f'{f}_ratio']:.2f}" for f in FORMS) + " |")
        print("| **minimum** | | | | " + " | ".join(f"**{min(r[f'{f}_ratio'] for r in rows):.2f}**" for f in FORMS)
              + " |")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"rows": rows, "times": {f"{k[0]}/{k[1]}": v for k, v in times.items()}}, f, indent=1)
    finally:
        if not a.data:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

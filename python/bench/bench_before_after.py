#!/usr/bin/env python3
"""Two tfrec builds side by side, command by command: instruction counts for a reshaping.

A reshaping (moving code, one path instead of two) must not slow the product down. Wall time
on a shared machine drifts by more than the 2% such a change may cost, so this counts the
instructions each whole command executes under valgrind's callgrind (the same count on every
run, whatever else the machine does) for an earlier build and a later one, on the same files,
and prints the ratio later / earlier per command.

The inputs are written here from a seed, in several shapes (narrow and wide Examples, scalars
and lists, features present and missing, SequenceExamples with short and long rows, a GZIP
copy), so no figure rests on one file:

  python python/bench/bench_before_after.py --before /tmp/tfrec-old --after target/release/tfrec

Needs valgrind, and the tfrec Python package (it writes the inputs).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import tfrec


def narrow_examples(rng, n):
    """The tutorial's shape: four scalar features."""
    for _ in range(n):
        yield tfrec.Example.from_dict({
            "feature0": [int(rng.integers(0, 2))],
            "feature1": [int(rng.integers(0, 5))],
            "feature2": [rng.choice([b"cat", b"dog", b"chicken", b"horse", b"goat"]).item()],
            "feature3": [float(rng.standard_normal())],
        })


def wide_examples(rng, n):
    """48 features: int64 scalars up to 2^40, floats, int64 lists of 0-20 values (some
    missing), short strings."""
    for _ in range(n):
        d = {f"i{k}": [int(rng.integers(0, 1 << 40))] for k in range(30)}
        d.update({f"f{k}": [float(rng.random())] for k in range(10)})
        for k in range(5):
            if rng.random() < 0.9:
                d[f"l{k}"] = [int(v) for v in rng.integers(0, 1000, int(rng.integers(0, 21)))]
        d.update({f"s{k}": [bytes(rng.integers(97, 123, int(rng.integers(1, 12))).astype(np.uint8))] for k in range(3)})
        yield tfrec.Example.from_dict(d)


def sequences(rng, n, max_steps, width):
    """SequenceExamples: two context features, a dense float list of ``width`` values and an
    int64 per step, 0 to ``max_steps`` steps."""
    for _ in range(n):
        steps = int(rng.integers(0, max_steps + 1))
        yield tfrec.SequenceExample.from_dict({
            "context": {"id": [int(rng.integers(0, 1 << 30))], "lang": [b"en"]},
            "feature_lists": {
                "x": [[float(v) for v in rng.random(width)] for _ in range(steps)],
                "y": [[int(rng.integers(0, 100))] for _ in range(steps)],
            },
        })


def spec_of(name):
    fixed = lambda dtype, shape=(): {"type": "FixedLenFeature", "shape": list(shape), "dtype": dtype}  # noqa: E731
    if name == "narrow":
        return {"feature0": fixed("int64"), "feature1": fixed("int64"), "feature2": fixed("string"),
                "feature3": fixed("float32")}
    if name == "wide":
        spec = {f"i{k}": fixed("int64") for k in range(30)}
        spec.update({f"f{k}": fixed("float32") for k in range(10)})
        spec.update({f"l{k}": {"type": "VarLenFeature", "dtype": "int64"} for k in range(5)})
        spec.update({f"s{k}": fixed("string") for k in range(3)})
        return spec
    width = 8 if name == "seq_short_rows" else 64
    return {
        "context_features": {"id": fixed("int64"), "lang": fixed("string")},
        "sequence_features": {
            "x": {"type": "FixedLenSequenceFeature", "shape": [width], "dtype": "float32", "allow_missing": True},
            "y": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": True},
        },
    }


def write_inputs(directory, seed, scale):
    rng = np.random.default_rng(seed)
    sets = {
        "narrow": narrow_examples(rng, int(40000 * scale)),
        "wide": wide_examples(rng, int(6000 * scale)),
        "seq_short_rows": sequences(rng, int(3000 * scale), 100, 8),
        "seq_long_rows": sequences(rng, int(600 * scale), 20, 64),
    }
    import json

    for name, messages in sets.items():
        path = os.path.join(directory, f"{name}.tfrecord")
        with tfrec.TFRecordWriter(path) as w:
            for m in messages:
                w.write(m.SerializeToString())
        with open(os.path.join(directory, f"{name}.spec.json"), "w") as f:
            json.dump(spec_of(name), f)
    with tfrec.TFRecordWriter(os.path.join(directory, "wide.tfrecord.gz"), "GZIP") as w:
        for record in tfrec.TFRecordDataset(os.path.join(directory, "wide.tfrecord")):
            w.write(record)
    return list(sets)


def commands(d, names):
    """``(label, args)`` of each command timed, over every shape where it applies."""
    out = []
    for name in names:
        f, spec = os.path.join(d, f"{name}.tfrecord"), os.path.join(d, f"{name}.spec.json")
        out.append((f"count {name}", ["count", f]))
        out.append((f"parse {name}", ["parse", "--spec", spec, "--format", "none", "--threads", "1", "--batch", "1024", f]))
        out.append((f"schema {name}", ["schema", f]))
        out.append((f"convert {name} to parquet", ["convert", f, "-o", os.path.join(d, "out.parquet")]))
    wide, spec = os.path.join(d, "wide.tfrecord"), os.path.join(d, "wide.spec.json")
    out += [
        ("count wide GZIP", ["count", wide + ".gz"]),
        ("parse wide, 2 threads", ["parse", "--spec", spec, "--format", "none", "--threads", "2", "--batch", "1024", wide]),
        ("parse wide to npz", ["parse", "--spec", spec, "--format", "npz", "-o", os.path.join(d, "out.npz"), wide]),
        ("cat narrow as text", ["cat", "--format", "text", os.path.join(d, "narrow.tfrecord")]),
        ("cat wide as json", ["cat", "--format", "json", wide]),
        ("cat seq_short_rows as text", ["cat", "--format", "text", os.path.join(d, "seq_short_rows.tfrecord")]),
        ("shuffle wide", ["shuffle", "--seed", "7", "--buffer", "1000", "--overwrite", "-o",
                          os.path.join(d, "shuffled.tfrecord"), wide]),
    ]
    return out


def instructions(binary, args):
    """Instructions the whole process executed (every thread), by callgrind."""
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary, *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    m = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or m is None:
        sys.exit(f"bench_before_after.py: {binary} {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the earlier tfrec binary")
    ap.add_argument("--after", required=True, help="the later tfrec binary")
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--scale", type=float, default=1.0, help="input sizes, relative to the default")
    ap.add_argument("--dir", help="keep the inputs here (default: a temporary directory)")
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="tfrec-before-after-")
    os.makedirs(d, exist_ok=True)
    try:
        names = write_inputs(d, a.seed, a.scale)
        print(f"inputs: seed {a.seed}, scale {a.scale}, {sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) >> 20} MB in {d}")
        print("| command | before (M instructions) | after | after / before |")
        print("|---|---|---|---|")
        ratios = []
        for label, args in commands(d, names):
            before, after = instructions(a.before, args), instructions(a.after, args)
            ratios.append(after / before)
            print(f"| {label} | {before / 1e6:,.1f} | {after / 1e6:,.1f} | {after / before:.4f} |", flush=True)
        print(f"largest after / before: {max(ratios):.4f}; smallest: {min(ratios):.4f}")
    finally:
        if not a.dir:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()

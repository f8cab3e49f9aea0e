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

import _shapes


# This benchmark's file names (its commands name them) and the shared shapes they hold, with
# their record counts at scale 1: small enough for valgrind.
SETS = {
    "narrow": ("narrow_tutorial", 40000),
    "wide": ("wide_issue", 6000),
    "seq_short_rows": ("seq_issue", 3000),
    "seq_long_rows": ("seq_long_rows", 600),
}


def write_inputs(directory, seed, scale):
    """Writes each of ``SETS`` from one generator seeded ``seed`` (with the GZIP copies of
    the shapes that have one: ``count wide GZIP`` reads wide's); returns the names."""
    rng = np.random.default_rng(seed)
    for name, (shape, records) in SETS.items():
        _shapes.write_shape(directory, _shapes.BY_NAME[shape], rng, max(1, int(records * scale)), name=name)
    return list(SETS)


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

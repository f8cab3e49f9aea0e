#!/usr/bin/env python3
"""tfrec against TensorFlow per core on every shape of each kind of data: the minimum ratio.

Issue 28: a ratio measured on one hand-picked file can be tuned to. This writes each kind of
data (narrow and wide Examples, SequenceExamples) in several shapes from a seed (the shapes
are ``_shapes.py``'s), times both sides on every one, and reports the **minimum** ratio to
TensorFlow per kind, beside every shape's own:

  parse      TensorFlow: TFRecordDataset(path).batch(1024).map(parse_example or
             parse_sequence_example), iterated in this process (import excluded);
             tfrec: `tfrec parse --spec S --format none --threads 1 --batch 1024 FILE`, the
             whole process
  gzip read  TensorFlow: TFRecordDataset(path.gz, "GZIP").batch(1024), iterated;
             tfrec: `tfrec count FILE.gz` (a whole process; it checks every CRC)

Both sides run on one core: the script pins itself (and so the tfrec processes it starts) to
``--core`` before TensorFlow is imported, the same as `taskset -c 0`; TensorFlow has one
inter-op and one intra-op thread, a private thread pool of one and autotune off. Every
configuration runs once as a warm-up (page cache, TF tracing), then the rounds take the
configurations in turn; each figure is the median of ``--rounds``.

  python python/bench/bench_shapes.py --tfrec target/release/tfrec            # ~1 GB of inputs
  python python/bench/bench_shapes.py --scale 0.02 --rounds 1 --json out.json  # CI's size

The Markdown table goes to stdout; ``--json`` writes the same figures (and every round's
time). Needs tensorflow-cpu (2.21 for the issue's figures) and the tfrec Python package.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import _shapes
from bench_tf import BATCH, drain, tf_parser


def pin(core):
    """Runs this process, and every process it starts, on ``core`` alone (``None``: as is);
    returns the cores it may use. Linux pins a thread at a time, so every thread there is now
    (NumPy's pool, say) is pinned; done before TensorFlow is imported, so its threads inherit
    the same single core."""
    if core is not None:
        for tid in os.listdir("/proc/self/task"):
            os.sched_setaffinity(int(tid), {core})
    return sorted(os.sched_getaffinity(0))


def quiet_tensorflow():
    """TensorFlow with one thread of each kind, and dataset options that keep it on one
    (private pool of one, autotune off); returns ``(tf, options)``."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    options.autotune.enabled = False
    return tf, options


def configurations(tf, options, tfrec_bin, inputs):
    """The pairs timed: ``[(row, tensorflow_fn, tfrec_fn)]``, a row being a dict of the
    shape's facts (kind, shape, what, records, bytes); one parse pair per shape, then a GZIP
    pair per shape that has a GZIP copy."""

    def cli(*args):
        subprocess.run([tfrec_bin, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    parse_pairs, gzip_pairs = [], []
    for shape, path, records in inputs:
        spec = _shapes.spec_path(path)
        parse = tf_parser(tf, shape.spec)
        row = {"kind": shape.kind, "shape": shape.name, "about": shape.about, "records": records,
               "bytes": os.path.getsize(path)}
        parse_pairs.append((
            dict(row, what="parse"),
            lambda path=path, parse=parse: drain(tf.data.TFRecordDataset(path).batch(BATCH).map(parse).with_options(options)),
            lambda path=path, spec=spec: cli("parse", "--spec", spec, "--format", "none", "--threads", "1",
                                             "--batch", str(BATCH), path),
        ))
        if shape.gzip:
            gz = path + ".gz"
            gzip_pairs.append((
                dict(row, kind="gzip", what="gzip read", gz_bytes=os.path.getsize(gz)),
                lambda gz=gz: drain(tf.data.TFRecordDataset(gz, compression_type="GZIP").batch(BATCH).with_options(options)),
                lambda gz=gz: cli("count", gz),
            ))
    return parse_pairs + gzip_pairs


def timed(fn):
    """``(wall seconds, CPU seconds)`` of ``fn``: CPU time of this process and of the
    processes it waited for (the tfrec commands), user and system. On a shared machine the
    wall time also holds the waits for the core; the CPU time does not."""

    def cpu():
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    t, c = time.perf_counter(), cpu()
    fn()
    return time.perf_counter() - t, cpu() - c


def measure(pairs, rounds, log):
    """Each pair's TensorFlow and tfrec times, ``rounds`` of them after one warm-up run of
    everything; a round runs every configuration once, in turn, so that drift on a shared
    machine falls on both sides alike. Returns the rows, each with every round's wall and CPU
    seconds, and the ratios of the medians."""
    for _, tf_fn, tfrec_fn in pairs:
        tf_fn()
        tfrec_fn()
    times = [([], []) for _ in pairs]
    for r in range(rounds):
        log(f"round {r + 1} of {rounds}")
        for (_, tf_fn, tfrec_fn), (tf_times, tfrec_times) in zip(pairs, times):
            tf_times.append(timed(tf_fn))
            tfrec_times.append(timed(tfrec_fn))
    rows = []
    for (row, _, _), (tf_times, tfrec_times) in zip(pairs, times):
        (tf_s, tf_cpu), (tfrec_s, tfrec_cpu) = (
            [statistics.median(column) for column in zip(*t)] for t in (tf_times, tfrec_times))
        rows.append(dict(row, tf_seconds=[w for w, _ in tf_times], tfrec_seconds=[w for w, _ in tfrec_times],
                         tf_cpu_seconds=[c for _, c in tf_times], tfrec_cpu_seconds=[c for _, c in tfrec_times],
                         tf_records_per_s=row["records"] / tf_s, tfrec_records_per_s=row["records"] / tfrec_s,
                         ratio=tf_s / tfrec_s, cpu_ratio=tf_cpu / max(tfrec_cpu, 1e-6)))
    return rows


def minima(rows):
    """Per kind (``narrow``, ``wide``, ``sequence``, ``gzip``): the smallest ratio and the
    shape it was on."""
    out = {}
    for row in rows:
        best = out.get(row["kind"])
        if best is None or row["ratio"] < best["ratio"]:
            out[row["kind"]] = {"ratio": row["ratio"], "shape": row["shape"]}
    return out


def rate(x):
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.0f} k"


def table(rows, lows):
    """The Markdown report: every shape's row, grouped by kind, then the minimum per kind."""
    lines = ["| kind | shape | records | MB | TensorFlow rec/s | tfrec rec/s | × TF | × TF, CPU time |",
             "|---|---|--:|--:|--:|--:|--:|--:|"]
    for kind in _shapes.KINDS + ["gzip"]:
        for row in (r for r in rows if r["kind"] == kind):
            mb = row.get("gz_bytes", row["bytes"]) / 1e6
            lines.append(f"| {kind} | {row['shape']} ({row['about']}) | {row['records']:,} | {mb:.1f} | "
                         f"{rate(row['tf_records_per_s'])} | {rate(row['tfrec_records_per_s'])} | {row['ratio']:.2f}× | "
                         f"{row['cpu_ratio']:.2f}× |")
    lines += ["", "| kind | minimum × TF | on shape |", "|---|--:|---|"]
    lines += [f"| {kind} | **{lows[kind]['ratio']:.2f}×** | {lows[kind]['shape']} |"
              for kind in _shapes.KINDS + ["gzip"] if kind in lows]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tfrec", default="target/release/tfrec", help="the tfrec binary timed")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--scale", type=float, default=1.0, help="input sizes; 1.0 is about 50-150 MB a shape")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--core", type=int, default=0, help="the one core both sides run on (-1: do not pin)")
    ap.add_argument("--shapes", nargs="+", choices=list(_shapes.BY_NAME), metavar="SHAPE",
                    help=f"only these shapes (default: all of {', '.join(_shapes.BY_NAME)})")
    ap.add_argument("--dir", help="write the inputs here and keep them (default: a temporary directory)")
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    if not os.path.isfile(a.tfrec):
        sys.exit(f"bench_shapes.py: no tfrec binary at {a.tfrec} (--tfrec)")

    def log(msg):
        print(f"bench_shapes.py: {msg}", file=sys.stderr, flush=True)

    cores = pin(None if a.core < 0 else a.core)
    d = a.dir or tempfile.mkdtemp(prefix="tfrec-bench-shapes-")
    os.makedirs(d, exist_ok=True)
    try:
        log(f"writing inputs (seed {a.seed}, scale {a.scale}) to {d}")
        inputs = _shapes.write_all(d, a.seed, a.scale, a.shapes)
        tf, options = quiet_tensorflow()
        rows = measure(configurations(tf, options, a.tfrec, inputs), a.rounds, log)
    finally:
        if not a.dir:
            shutil.rmtree(d, ignore_errors=True)
    lows = minima(rows)
    print(f"## tfrec against TensorFlow {tf.__version__}, per core\n")
    print(f"seed {a.seed}, scale {a.scale}, median of {a.rounds} round(s), cores {cores}, "
          f"batch {BATCH}, tfrec: {a.tfrec}\n")
    print(table(rows, lows))
    print("\nparse: TFRecordDataset.batch(1024).map(parse) against `tfrec parse --format none --threads 1`;"
          " gzip: TFRecordDataset(GZIP).batch(1024) against `tfrec count` (MB: the .gz file's)."
          " × TF: wall time, the figure the minimum is of; CPU time (user + system) beside it.")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": a.seed, "scale": a.scale, "rounds": a.rounds, "cores": cores, "batch": BATCH,
                       "tensorflow": tf.__version__, "tfrec": a.tfrec, "rows": rows, "minimum": lows}, f, indent=1)


if __name__ == "__main__":
    main()

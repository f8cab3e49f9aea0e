#!/usr/bin/env python3
"""tfrec against TensorFlow per core, same run, same files: issue 14's table.

For each data set written by the Rust `table` benchmark (notebook, ctr, seq; a directory of
NAME.tfrecord, NAME.tfrecord.gz and NAME.spec.json):

  parse      TensorFlow: TFRecordDataset(path).batch(1024).map(parse_example or
             parse_sequence_example), iterated in this process (import excluded);
             tfrec: `tfrec parse --format none --threads 1 --batch 1024` as a whole process,
             and `--format npz` to a file in the same directory
  gzip read  TensorFlow: TFRecordDataset(path.gz, "GZIP").batch(1024), iterated;
             tfrec: `tfrec count` on the same file (a whole process; it checks every CRC)

Configurations run in turn, round after round; each figure is the median of its rounds.
Run it pinned to one core for per-core figures:

  TFREC_BENCH_DIR=/tmp/tfrec-bench cargo bench -p tfrec-cli --bench table   # writes the files
  taskset -c 0 python python/bench/bench_tf.py --data /tmp/tfrec-bench --tfrec target/release/tfrec

Needs tensorflow-cpu (2.21 was used for the figures in the notes).

Superseded by ``bench_shapes.py`` (issue 28), which writes each kind of data in several shapes
from a seed and reports the minimum ratio per kind instead of one file's; this script stays
for the `table` benchmark's files (CI runs it), and lends ``bench_shapes.py`` its TensorFlow
parser (``tf_parser``) and ``drain``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

BATCH = 1024


def tf_feature(tf, s):
    dtype = {"int64": tf.int64, "float32": tf.float32, "string": tf.string}[s["dtype"]]
    kind = s["type"]
    if kind == "FixedLenFeature":
        return tf.io.FixedLenFeature(s.get("shape", []), dtype, default_value=s.get("default_value"))
    if kind == "VarLenFeature":
        return tf.io.VarLenFeature(dtype)
    if kind == "FixedLenSequenceFeature":
        return tf.io.FixedLenSequenceFeature(s.get("shape", []), dtype, allow_missing=s.get("allow_missing", False))
    sys.exit(f"bench_tf.py: no TensorFlow form here for {kind}")


def tf_parser(tf, spec):
    if "sequence_features" in spec or "context_features" in spec:
        context = {k: tf_feature(tf, v) for k, v in spec.get("context_features", {}).items()}
        sequence = {k: tf_feature(tf, v) for k, v in spec.get("sequence_features", {}).items()}
        return lambda b: tf.io.parse_sequence_example(b, context_features=context, sequence_features=sequence)
    features = {k: tf_feature(tf, v) for k, v in spec.items()}
    return lambda b: tf.io.parse_example(b, features)


def drain(dataset):
    n = 0
    for _ in dataset:
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="directory of NAME.tfrecord, NAME.tfrecord.gz, NAME.spec.json")
    ap.add_argument("--sets", nargs="+", default=["notebook", "ctr", "seq"])
    ap.add_argument("--tfrec", default="target/release/tfrec")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", help="another tfrec binary (an earlier build) timed beside, for before/after")
    args = ap.parse_args()

    import tensorflow as tf

    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    options.autotune.enabled = False

    def run_cli(*cli_args, binary=None):
        subprocess.run([binary or args.tfrec, *cli_args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    jobs = []  # (set, row, count, fn)
    for name in args.sets:
        plain = os.path.join(args.data, f"{name}.tfrecord")
        gz = plain + ".gz"
        spec_path = os.path.join(args.data, f"{name}.spec.json")
        with open(spec_path) as f:
            spec = json.load(f)
        parse = tf_parser(tf, spec)
        records = int(tf.data.TFRecordDataset(plain).reduce(0, lambda n, _: n + 1))
        mb = os.path.getsize(plain) / 1e6
        npz = os.path.join(args.data, f"{name}.bench.npz")

        def tf_parse(plain=plain, parse=parse):
            drain(tf.data.TFRecordDataset(plain).batch(BATCH).map(parse).with_options(options))

        def tfrec_parse(plain=plain, spec_path=spec_path):
            run_cli("parse", "--spec", spec_path, "--format", "none", "--threads", "1", "--batch", str(BATCH), plain)

        def tfrec_npz(plain=plain, spec_path=spec_path, npz=npz, binary=None):
            run_cli("parse", "--spec", spec_path, "--format", "npz", "-o", npz,
                    "--threads", "1", "--batch", str(BATCH), plain, binary=binary)

        def before_parse(plain=plain, spec_path=spec_path):
            run_cli("parse", "--spec", spec_path, "--format", "none", "--threads", "1", "--batch", str(BATCH),
                    plain, binary=args.before)

        def tf_gzip(gz=gz):
            drain(tf.data.TFRecordDataset(gz, compression_type="GZIP").batch(BATCH).with_options(options))

        def tfrec_gzip(gz=gz):
            run_cli("count", gz)

        jobs += [
            (name, records, mb, "parse: TensorFlow", tf_parse),
            (name, records, mb, "parse: tfrec parse --format none", tfrec_parse),
            (name, records, mb, "parse: tfrec parse --format npz", tfrec_npz),
        ]
        if args.before:
            jobs += [
                (name, records, mb, "parse: before --format none", before_parse),
                (name, records, mb, "parse: before --format npz",
                 lambda f=tfrec_npz: f(binary=args.before)),
            ]
        jobs += [
            (name, records, mb, "gzip read: TensorFlow", tf_gzip),
            (name, records, mb, "gzip read: tfrec count", tfrec_gzip),
        ]

    def remove_npz():
        for name in args.sets:
            npz = os.path.join(args.data, f"{name}.bench.npz")
            if os.path.exists(npz):
                os.remove(npz)

    for job in jobs:  # warm-up: page cache, TF graph tracing
        remove_npz()
        job[4]()
    times = {i: [] for i in range(len(jobs))}
    for _ in range(args.rounds):
        for i, job in enumerate(jobs):
            remove_npz()
            t = time.perf_counter()
            job[4]()
            times[i].append(time.perf_counter() - t)

    print(f"per core (affinity: {sorted(os.sched_getaffinity(0))}), median of {args.rounds} rounds")
    print(f"{'data set':10} {'':36} {'seconds':>8} {'records/s':>12} {'MB/s':>8} {'x TF':>7}")
    print("(MB/s: of the plain file, for the gzip rows too; 'before': --before)" if args.before else "(MB/s: of the plain file, for the gzip rows too)")
    base = None
    for i, (name, records, mb, row, _) in enumerate(jobs):
        t = statistics.median(times[i])
        if row.endswith("TensorFlow"):
            base = t
        print(f"{name:10} {row:36} {t:8.3f} {records / t:12,.0f} {mb / t:8.0f} {base / t:6.2f}x")
    remove_npz()


if __name__ == "__main__":
    main()

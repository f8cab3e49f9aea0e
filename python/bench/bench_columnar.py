#!/usr/bin/env python3
"""TFRecord → Parquet and dataframe queries, tfrec against the usual tools, same run, same
files (the 48-feature ctr-like data set of bench_parse.py, 200 k records at --scale 1):

  tfrec convert         the CLI, TFRecord → Parquet, pinned to one core (taskset)
  ray read_tfrecords    ray.data.read_tfrecords(..., tf_schema=...).write_parquet(...) with
                        ray.init(num_cpus=1) (TensorFlow parses the Examples): the baseline.
                        The schema (tensorflow-metadata) is needed: without one Ray turns
                        one-value lists into scalars and fails on the list features
  tfrec.ray             tfrec.ray.read_tfrecords(...).write_parquet(...), same Ray setup
  scan_tfrecord         a Polars query (filter, select 3 features, aggregate) parsing the
                        TFRecord files with tfrec.polars.scan_tfrecord
  polars parquet        the same query on the converted Parquet (pl.scan_parquet)
  pyarrow parquet       the same query with pyarrow (read 3 columns, filter, sum)

Prints seconds, records/s and the ratio to the baseline of each group. The tfrec
measurements run first, then the baseline, which takes about 15 ms a record (50 minutes at
--scale 1). For per-core figures pin the whole run, and let Ray's workers run at normal
priority (Ray nices them by default):

  RAY_worker_niceness=0 taskset -c 0 python python/bench/bench_columnar.py --scale 1

Usage: python python/bench/bench_columnar.py [--scale 0.1] [--rounds 1] [--tfrec target/release/tfrec]
Needs pyarrow, polars, ray[data], tensorflow-cpu and tensorflow-metadata.
Build the CLI and the extension with --release first (cargo build --release -p tfrec-cli;
cd crates/tfrec-py && maturin develop --release).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_parse import make_records, spec  # noqa: E402

import tfrec  # noqa: E402
from tfrec.io import specs_to_json  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FULL_RECORDS = 200_000


def find_cli(given):
    for p in (given, os.environ.get("TFREC_BIN"), "target/release/tfrec", "target/debug/tfrec"):
        if p and os.path.isfile(os.path.join(REPO, p) if not os.path.isabs(p) else p):
            return os.path.join(REPO, p) if not os.path.isabs(p) else p
    sys.exit("tfrec CLI not found: cargo build --release -p tfrec-cli, or --tfrec PATH")


def write_files(directory, records, files):
    paths = []
    per = -(-len(records) // files)
    for f in range(files):
        path = os.path.join(directory, f"ctr-{f:02d}.tfrecord")
        with tfrec.TFRecordWriter(path) as w:
            for r in records[f * per : (f + 1) * per]:
                w.write(r)
        paths.append(path)
    return paths


def ray_schema(features):
    """The TensorFlow Metadata schema Ray's reader needs to keep list features lists."""
    from tensorflow_metadata.proto.v0 import schema_pb2

    kinds = {"int64": schema_pb2.INT, "float32": schema_pb2.FLOAT, "string": schema_pb2.BYTES}
    schema = schema_pb2.Schema()
    for name, s in specs_to_json(features).items():
        f = schema.feature.add()
        f.name = name
        f.type = kinds[s["dtype"]]
    return schema


def timed(fn, rounds):
    best = None
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1, help="fraction of the 200k-record data set")
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1, help="rounds of Ray's TensorFlow reader (the slow baseline)")
    ap.add_argument("--fast-rounds", type=int, default=3, help="rounds of every other measurement")
    ap.add_argument("--tfrec", help="the tfrec CLI binary")
    ap.add_argument("--no-ray-tf", action="store_true", help="skip Ray's TensorFlow reader")
    args = ap.parse_args()

    cli = find_cli(args.tfrec)
    fast_rounds = args.fast_rounds
    n = max(1000, int(FULL_RECORDS * args.scale))
    tmp = tempfile.mkdtemp(prefix="bench-columnar-")
    rows = []
    try:
        print(f"generating {n} records, 48 features, {args.files} files ...", flush=True)
        paths = write_files(tmp, make_records(n), args.files)
        size = sum(os.path.getsize(p) for p in paths)
        spec_path = os.path.join(tmp, "spec.json")
        with open(spec_path, "w") as f:
            json.dump(specs_to_json(spec()), f)
        parquet = os.path.join(tmp, "tfrec.parquet")

        # --- TFRecord → Parquet, per core
        pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []

        def convert():
            if os.path.exists(parquet):
                os.remove(parquet)
            subprocess.run(
                pin + [cli, "convert", *paths, "-o", parquet, "--spec", spec_path],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

        t_cli = None
        has_convert = subprocess.run([cli, "convert", "--help"], capture_output=True).returncode == 0
        if has_convert:
            t_cli = timed(convert, fast_rounds)
            print(f"tfrec convert: {t_cli:.2f} s", flush=True)
        else:
            print(f"{cli} has no convert command: Parquet for the queries written via tfrec.arrow + pyarrow")
            import pyarrow.parquet as pq

            import tfrec.arrow

            pq.write_table(tfrec.arrow.read(paths, spec()).read_all(), parquet)

        import ray

        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        import tfrec.ray

        def ray_write(make_ds, name):
            def run():
                out = os.path.join(tmp, name)
                shutil.rmtree(out, ignore_errors=True)
                make_ds().write_parquet(out)

            return run

        # Untimed warm-up on one file: starts the worker and imports what its tasks import,
        # which a long job pays once. The fast tfrec measurements run first so that they
        # finish on a quiet machine before the long baseline starts.
        tfrec.ray.read_tfrecords(paths[:1], spec()).count()
        t_tfray = timed(ray_write(lambda: tfrec.ray.read_tfrecords(paths, spec()), "tfrec-ray"), fast_rounds)
        print(f"tfrec.ray + write_parquet: {t_tfray:.2f} s", flush=True)

        # --- the same dataframe query three ways
        import polars as pl
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        from tfrec.polars import scan_tfrecord

        def query(lf):
            return lf.filter(pl.col("i0") > (1 << 19)).select(pl.col("i1").sum(), pl.col("f0").mean(), pl.len()).collect()

        def q_scan():
            return query(scan_tfrecord(paths, spec()))

        def q_polars():
            return query(pl.scan_parquet(parquet))

        def q_pyarrow():
            t = pq.read_table(parquet, columns=["i0", "i1", "f0"])
            t = t.filter(pc.greater(t["i0"], 1 << 19))
            return pc.sum(t["i1"]).as_py(), pc.mean(t["f0"]).as_py(), t.num_rows

        a, b, c = q_scan(), q_polars(), q_pyarrow()
        assert a.equals(b), (a, b)
        assert a["len"][0] == c[2] and a["i1"][0] == c[0], (a, c)
        t_scan = timed(q_scan, fast_rounds)
        t_pl = timed(q_polars, fast_rounds)
        t_pa = timed(q_pyarrow, fast_rounds)
        rows.append(("query (filter, 3 columns, sum/mean/len)", None, None, None))
        rows.append(("  pyarrow on the converted Parquet", t_pa, n / t_pa, 1.0))
        rows.append(("  polars scan_parquet on the converted Parquet", t_pl, n / t_pl, t_pa / t_pl))
        rows.append(("  tfrec.polars.scan_tfrecord on the TFRecords", t_scan, n / t_scan, t_pa / t_scan))

        t_ray = None
        if not args.no_ray_tf:
            print("Ray's read_tfrecords (TensorFlow parses; slow: about 15 ms a record) ...", flush=True)
            ray.data.read_tfrecords(paths[:1], tf_schema=ray_schema(spec())).count()
            t_ray = timed(ray_write(lambda: ray.data.read_tfrecords(paths, tf_schema=ray_schema(spec())), "ray-tf"), args.rounds)
        ray.shutdown()

        base = t_ray if t_ray is not None else t_tfray
        rows.insert(0, ("TFRecord -> Parquet, 1 core", None, None, None))
        conversion = []
        if t_ray is not None:
            conversion.append(("  ray.data.read_tfrecords + write_parquet", t_ray, n / t_ray, base / t_ray))
        conversion.append(("  tfrec.ray.read_tfrecords + write_parquet", t_tfray, n / t_tfray, base / t_tfray))
        if t_cli is not None:
            conversion.append(("  tfrec convert (CLI)", t_cli, n / t_cli, base / t_cli))
        rows[1:1] = conversion

        print(f"\n{n} records, {size / 1e6:.1f} MB of TFRecord in {args.files} files; "
              f"Parquet {os.path.getsize(parquet) / 1e6:.1f} MB; best of {fast_rounds} "
              f"(Ray's TensorFlow reader: best of {args.rounds})")
        print(f"{'':50} {'seconds':>9} {'records/s':>12} {'x baseline':>10}")
        for name, t, rate, ratio in rows:
            if t is None:
                print(name)
            else:
                print(f"{name:50} {t:9.3f} {rate:12,.0f} {ratio:9.2f}x")
        print("baselines: Ray's read_tfrecords path (conversion), pyarrow (query)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

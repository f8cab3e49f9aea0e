#!/usr/bin/env python3
"""Python-side throughput on the 48-feature data set of the Rust benchmarks (30 int64 and 10
float scalars, 5 int64 lists of 0-20 values, 3 short strings), all in one process on the same
files, reported as ratios:

  rust pipeline      tfrec.Dataset(...).batch(1024).parse(...) run to the end inside Rust
                     (no Python objects): the baseline for the Python pipeline
  python Dataset     the same pipeline iterated from Python (dicts of NumPy arrays)
  parse_example      tfrec.io.parse_example over batches of 1024 records already in memory
  tfrecord package   the `tfrecord` PyPI package's reader + parse on the same files (it does
                     no CRC check), if installed: pip install tfrecord

Usage: python python/bench/bench_parse.py [--records 200000] [--threads 1 2] [--rounds 3]
Build the extension with --release first (cd crates/tfrec-py && maturin develop --release).
"""

import argparse
import os
import tempfile
import time

import numpy as np

import tfrec
from tfrec import io

BATCH = 1024


def make_records(n, seed=2):
    """The records, encoded by the library from plain lists (no message objects: quick)."""
    from tfrec import _tfrec

    rng = np.random.default_rng(seed)
    ints = rng.integers(0, 1 << 20, size=(n, 30)).tolist()
    floats = rng.random((n, 10), dtype=np.float32).astype(np.float64).tolist()
    lens = rng.integers(0, 21, size=(n, 5)).tolist()
    values = rng.integers(0, 100_000, size=(n, 5, 20)).tolist()
    slens = rng.integers(3, 13, size=(n, 3)).tolist()
    letters = rng.integers(97, 123, size=(n, 3, 12), dtype=np.uint8)
    int_names = [f"i{i}" for i in range(30)]
    float_names = [f"f{i}" for i in range(10)]
    records = []
    for r in range(n):
        plain = [(int_names[i], "int64_list", [ints[r][i]]) for i in range(30)]
        plain += [(float_names[i], "float_list", [floats[r][i]]) for i in range(10)]
        plain += [(f"l{i}", "int64_list", values[r][i][: lens[r][i]]) for i in range(5)]
        plain += [(f"s{i}", "bytes_list", [letters[r, i, : slens[r][i]].tobytes()]) for i in range(3)]
        records.append(_tfrec.encode_example(plain))
    return records


def spec():
    s = {f"i{i}": io.FixedLenFeature([], tfrec.int64) for i in range(30)}
    s.update({f"f{i}": io.FixedLenFeature([], tfrec.float32) for i in range(10)})
    s.update({f"l{i}": io.VarLenFeature(tfrec.int64) for i in range(5)})
    s.update({f"s{i}": io.FixedLenFeature([], tfrec.string) for i in range(3)})
    return s


def best(rounds, fn):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tfrecord-records", type=int, default=20_000, help="records for the (slow) tfrecord package")
    args = ap.parse_args()
    n = args.records

    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        records = make_records(n)
        files = [os.path.join(d, f"wide-{i}.tfrecord") for i in range(4)]
        for i, path in enumerate(files):
            with tfrec.TFRecordWriter(path) as w:
                for r in records[i * n // 4 : (i + 1) * n // 4]:
                    w.write(r)
        print(f"data: {n} records, 48 features, 4 files, {sum(map(len, records)) / 1e6:.1f} MB "
              f"(made in {time.perf_counter() - t0:.1f}s)")
        features = spec()
        batches = [records[i : i + BATCH] for i in range(0, n, BATCH)]
        results = {}

        def dataset(threads):
            return tfrec.Dataset(files).interleave(4, 16).batch(BATCH).parse(features).threads(threads).prefetch(4)

        def iterate(threads):
            count = 0
            for b in dataset(threads):
                count += len(b["i0"])
            assert count == n, count

        def drain(threads):
            records_read, _ = dataset(threads)._inner._drain()
            assert records_read == n, records_read

        def parse_in_memory():
            for b in batches:
                io.parse_example(b, features)

        # Interleave the configurations round by round so a slow spell on the shared machine
        # does not fall on one of them only.
        configs = {"parse_example (1 thread, in memory)": parse_in_memory}
        for t in args.threads:
            configs[f"rust pipeline, {t} thread(s)"] = lambda t=t: drain(t)
            configs[f"python Dataset, {t} thread(s)"] = lambda t=t: iterate(t)
        for name in configs:
            results[name] = float("inf")
        for _ in range(args.rounds):
            for name, fn in configs.items():
                results[name] = min(results[name], best(1, fn))
        rate = {name: n / t for name, t in results.items()}

        tf_rate = None
        try:
            from tfrecord.reader import tfrecord_loader

            m = min(args.tfrecord_records, n // 4)
            description = {f"i{i}": "int" for i in range(30)}
            description.update({f"f{i}": "float" for i in range(10)})
            description.update({f"l{i}": "int" for i in range(5)})
            description.update({f"s{i}": "byte" for i in range(3)})

            def tfrecord_run():
                count = 0
                for _ in tfrecord_loader(files[0], None, description):
                    count += 1
                    if count == m:
                        break

            tf_rate = m / best(args.rounds, tfrecord_run)
        except ImportError:
            pass

        print(f"\n{'configuration':42} {'records/s':>12}")
        for name, r in rate.items():
            print(f"{name:42} {r:12,.0f}")
        if tf_rate is not None:
            print(f"{'tfrecord package (reader + parse)':42} {tf_rate:12,.0f}")
        print("\nratios")
        for t in args.threads:
            py, rs = rate[f"python Dataset, {t} thread(s)"], rate[f"rust pipeline, {t} thread(s)"]
            print(f"  python Dataset / rust pipeline, {t} thread(s): {py / rs:.3f}  (target >= 0.90)")
        if tf_rate is not None:
            p = rate["parse_example (1 thread, in memory)"]
            print(f"  parse_example / tfrecord package: {p / tf_rate:.1f}x  (target >= 50x)")
            for t in args.threads:
                print(f"  python Dataset ({t} thread(s)) / tfrecord package: "
                      f"{rate[f'python Dataset, {t} thread(s)'] / tf_rate:.1f}x")
        else:
            print("  (tfrecord package not installed: pip install tfrecord for that comparison)")


if __name__ == "__main__":
    main()

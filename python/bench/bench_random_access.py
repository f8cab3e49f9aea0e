#!/usr/bin/env python3
"""Random access against sequential reading, from Python, on one page-cached plain file per
record size (100 B, 10 KB, 100 KB; about 200 MB or 200,000 records, whichever is fewer),
written from a seed and deleted afterwards. Records/s of:

  sequential      iterating tfrec.TFRecordDataset(path) (each record as bytes)
  random ds[i]    tfrec.RandomAccessDataset(path)[i] for every i of a random permutation
  random batch    ds.__getitems__(indices) over the same permutation, 256 indices at a time

and the ratio of each random form to sequential (target: at least 0.5 for 10 KB and above).
Each figure is the best of --rounds passes; the index is built before timing (its build time is
printed apart).

Usage: python python/bench/bench_random_access.py [--rounds 3] [--max-mb 200] [--dir DIR]
Build the extension with --release first (cd crates/tfrec-py && maturin develop --release).
"""

import argparse
import os
import shutil
import tempfile
import time

import numpy as np

import tfrec

SIZES = [100, 10_000, 100_000]
BATCH = 256


def write_file(path, size, count, seed):
    rng = np.random.default_rng(seed)
    block = rng.bytes(size * min(count, 256))
    with tfrec.TFRecordWriter(str(path)) as w:
        for i in range(count):
            j = i % 256
            w.write(block[j * size : (j + 1) * size])


def best(rounds, fn):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench(path, rounds, seed):
    with open(path, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    start = time.perf_counter()
    ds = tfrec.RandomAccessDataset(str(path))
    index_s = time.perf_counter() - start
    n = len(ds)
    perm = np.random.default_rng(seed).permutation(n).tolist()

    def sequential():
        count = 0
        for _ in tfrec.TFRecordDataset(str(path)):
            count += 1
        assert count == n

    def one_at_a_time():
        get = ds.__getitem__
        for i in perm:
            get(i)

    def batches():
        getitems = ds.__getitems__
        for s in range(0, n, BATCH):
            getitems(perm[s : s + BATCH])

    seq = n / best(rounds, sequential)
    one = n / best(rounds, one_at_a_time)
    many = n / best(rounds, batches)
    return n, index_s, seq, one, many


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-mb", type=int, default=200)
    ap.add_argument("--max-records", type=int, default=200_000)
    ap.add_argument("--dir", default=None, help="where to write the files (default: a temporary directory)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tfrec-bench-ra-", dir=args.dir)
    rows = []
    try:
        for k, size in enumerate(SIZES):
            count = min(args.max_records, args.max_mb * 1_000_000 // (size + 16))
            path = os.path.join(work, f"r{size}.tfrecord")
            write_file(path, size, count, seed=k)
            rows.append((size, *bench(path, args.rounds, seed=k)))
            os.remove(path)
            os.remove(path + ".idx")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'record':>8} {'records':>8} {'index s':>8} {'sequential/s':>13} {'ds[i]/s':>11} {'ratio':>6} "
          f"{'batch256/s':>11} {'ratio':>6}")
    for size, n, index_s, seq, one, many in rows:
        label = f"{size // 1000} KB" if size >= 1000 else f"{size} B"
        print(f"{label:>8} {n:>8} {index_s:>8.2f} {seq:>13,.0f} {one:>11,.0f} {one / seq:>6.2f} "
              f"{many:>11,.0f} {many / seq:>6.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`tfrec stats` against TFDV per core, same run, same files: issue 55's benchmark.

For each file written by the Rust `stats` benchmark (wide48, narrow, strings, sequence;
shapes drawn from a seed; write them with
``TFREC_BENCH_DIR=DIR TFREC_BENCH_WRITE_ONLY=1 cargo bench -p tfrec-cli --bench stats``):

  TFDV   ``tfdv.generate_statistics_from_tfrecord(path, output_path=...)`` on the DirectRunner
         (its default), called in this process after the import (the import is left out); for
         SequenceExamples, tfx_bsl's ``TFSequenceExampleRecord`` (no schema, its default batch
         size) into ``tfdv.GenerateStatistics``, as TFX's StatisticsGen runs it;
  tfrec  ``tfrec stats --threads 1 -o ... path`` as a whole process (``--kind sequence`` for
         SequenceExamples).

Both are measured in CPU seconds (user + system: this process's for TFDV, the child's for
tfrec), so that a busy machine's waiting is not counted; run it pinned to one core
(``taskset -c 0``) so that neither gets a second one. Rounds alternate TFDV and tfrec; each
figure is the median of its rounds. The last line is the minimum ratio over the files.

    taskset -c 0 .venv-tfdv/bin/python python/bench/bench_stats_tfdv.py --data DIR --tfrec BIN

Runs in TFDV's environment (``python/tfdv_oracle/README.md``).
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def self_cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


#: The `tfrec stats` arguments that read each shape.
SHAPE_ARGS = {"sequence": ["--kind", "sequence"]}


def tfdv_statistics(tfdv, name, path, output_path):
    """TFDV's statistics of one shape's file, written to `output_path`."""
    if name != "sequence":
        tfdv.generate_statistics_from_tfrecord(path, output_path=output_path)
        return
    import apache_beam as beam
    from tfx_bsl.public import tfxio

    source = tfxio.TFSequenceExampleRecord(file_pattern=path, schema=None, telemetry_descriptors=["tfrec"])
    with beam.Pipeline() as p:
        _ = (p | source.BeamSource()
             | tfdv.GenerateStatistics(tfdv.StatsOptions())
             | tfdv.WriteStatisticsToTFRecord(output_path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="directory of NAME.tfrecord files")
    ap.add_argument("--shapes", nargs="+", default=["wide48", "narrow", "strings", "sequence"])
    ap.add_argument("--tfrec", default="target/release/tfrec")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tfdv-rounds", type=int, default=1, help="TFDV is slow: one run of it by default")
    args = ap.parse_args()

    import tensorflow_data_validation as tfdv

    out_dir = tempfile.mkdtemp(prefix="tfrec-bench-stats-")
    print(f"{'shape':<10} {'MB':>7} {'TFDV cpu':>10} {'tfrec cpu':>10} {'TFDV wall':>10} {'tfrec wall':>10} {'per core':>9}")
    ratios = []
    for name in args.shapes:
        path = os.path.join(args.data, f"{name}.tfrecord")
        mb = os.path.getsize(path) / 1e6
        tfdv_cpu, tfdv_wall, tfrec_cpu, tfrec_wall = [], [], [], []
        for r in range(max(args.rounds, args.tfdv_rounds)):
            if r < args.tfdv_rounds:
                c, w = self_cpu(), time.perf_counter()
                tfdv_statistics(tfdv, name, path, os.path.join(out_dir, "tfdv.pb"))
                tfdv_cpu.append(self_cpu() - c)
                tfdv_wall.append(time.perf_counter() - w)
            if r < args.rounds:
                c, w = child_cpu(), time.perf_counter()
                subprocess.run(
                    [args.tfrec, "stats", "--threads", "1", *SHAPE_ARGS.get(name, []), "-o",
                     os.path.join(out_dir, "tfrec.pb"), path],
                    check=True,
                )
                tfrec_cpu.append(child_cpu() - c)
                tfrec_wall.append(time.perf_counter() - w)
        t_cpu, r_cpu = statistics.median(tfdv_cpu), statistics.median(tfrec_cpu)
        ratio = t_cpu / r_cpu
        ratios.append((ratio, name))
        print(
            f"{name:<10} {mb:>7.1f} {t_cpu:>9.2f}s {r_cpu:>9.3f}s {statistics.median(tfdv_wall):>9.2f}s"
            f" {statistics.median(tfrec_wall):>9.3f}s {ratio:>8.1f}×",
            flush=True,
        )
    worst, name = min(ratios)
    print(f"minimum over shapes, tfrec vs TFDV per core (CPU time): {worst:.1f}× ({name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

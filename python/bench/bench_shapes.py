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
  pipeline   the parse rows' TensorFlow times against the Python package's pipeline,
             ``Dataset(path).batch(1024).parse(spec).threads(1)`` iterated in a child process
             (its import excluded), NumPy arrays out: the parse as a Python user gets it

Then tfrec against itself, on every wide and sequence shape:

  two workers  two threads against one, on two cores (``--worker-cores``), in the ways a user
               runs them: `tfrec parse --threads N` on the file and on the same records split
               into 4 files, the Python ``Dataset(path).batch(1024).parse(spec).threads(N)``
               iterated in a child process (its import excluded), `tfrec convert --threads N`
               to Parquet (the plain file has no ``.idx``: its spans are found by a scan of
               its headers), and where a shape has a GZIP copy, the same three on it with its
               seek index (``tfrec index``); each figure is the median over rounds of the round's one-thread time
               over its two-thread time, with the two-thread run's CPU time over the
               one-thread run's beside it (issue 28: at least 1.8x, CPU within 10%)
  arrow        on one core, in one process: the Python package's pipeline parse run inside
               Rust (``Dataset(path).batch(8192).parse(spec).threads(1)``, drained) over
               ``tfrec.arrow.read(path, spec, batch_rows=8192)`` iterated as pyarrow batches:
               what building Arrow costs over the parse it wraps (target 0.9x), every shape

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
import tfrec._tfrec
from bench_tf import BATCH, drain, tf_parser

# A build of the extension with debug assertions (the tests' dev profile, which CI times) runs
# unoptimised code: what is timed through it (the Python pipeline, Arrow) is then no speed figure.
DEBUG_NOTE = ("The Python package's extension here is a debug build (the tests' dev profile): the figures"
              " timed through it are not speed figures. Install it with `maturin develop --release` for them.")


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


def run_cli(tfrec_bin, *args, cores=None):
    """Runs ``tfrec ARGS``, output thrown away; ``cores``: the set it may run on (default: this
    process's)."""
    preexec = None if cores is None else (lambda: os.sched_setaffinity(0, cores))
    subprocess.run([tfrec_bin, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   preexec_fn=preexec)


def configurations(tf, options, tfrec_bin, inputs):
    """The pairs timed: ``[(row, tensorflow_fn, tfrec_fn, pipeline_run)]``, a row being a dict
    of the shape's facts (kind, shape, what, records, bytes); one parse pair per shape, whose
    ``pipeline_run`` times the Python pipeline on the same file, then a GZIP pair per shape
    that has a GZIP copy (``pipeline_run`` None)."""

    def cli(*args):
        run_cli(tfrec_bin, *args)

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
            lambda path=path, spec=spec: run_dataset([path], spec, 1),
        ))
        if shape.gzip:
            gz = path + ".gz"
            gzip_pairs.append((
                dict(row, kind="gzip", what="gzip read", gz_bytes=os.path.getsize(gz)),
                lambda gz=gz: drain(tf.data.TFRecordDataset(gz, compression_type="GZIP").batch(BATCH).with_options(options)),
                lambda gz=gz: cli("count", gz),
                None,
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
    """Each pair's TensorFlow and tfrec times (and the Python pipeline's, where a pair has it),
    ``rounds`` of them after one warm-up run of everything; a round runs every configuration
    once, in turn, so that drift on a shared machine falls on all sides alike. Returns the
    rows, each with every round's wall and CPU seconds, and the ratios of the medians."""
    for _, tf_fn, tfrec_fn, pipeline_run in pairs:
        tf_fn()
        tfrec_fn()
        if pipeline_run:
            pipeline_run()
    times = [([], [], []) for _ in pairs]
    for r in range(rounds):
        log(f"round {r + 1} of {rounds}")
        for (_, tf_fn, tfrec_fn, pipeline_run), (tf_times, tfrec_times, pipeline_times) in zip(pairs, times):
            tf_times.append(timed(tf_fn))
            tfrec_times.append(timed(tfrec_fn))
            if pipeline_run:
                pipeline_times.append(pipeline_run())
    rows = []
    for (row, _, _, _), (tf_times, tfrec_times, pipeline_times) in zip(pairs, times):
        (tf_s, tf_cpu), (tfrec_s, tfrec_cpu) = (
            [statistics.median(column) for column in zip(*t)] for t in (tf_times, tfrec_times))
        rows.append(dict(row, tf_seconds=[w for w, _ in tf_times], tfrec_seconds=[w for w, _ in tfrec_times],
                         tf_cpu_seconds=[c for _, c in tf_times], tfrec_cpu_seconds=[c for _, c in tfrec_times],
                         tf_records_per_s=row["records"] / tf_s, tfrec_records_per_s=row["records"] / tfrec_s,
                         ratio=tf_s / tfrec_s, cpu_ratio=tf_cpu / max(tfrec_cpu, 1e-6)))
        if pipeline_times:
            pipeline_s = statistics.median(w for w, _ in pipeline_times)
            rows[-1].update(pipeline_seconds=[w for w, _ in pipeline_times],
                            pipeline_cpu_seconds=[c for _, c in pipeline_times],
                            pipeline_records_per_s=row["records"] / pipeline_s, pipeline_ratio=tf_s / pipeline_s)
    return rows


# The Python pipeline, timed inside a child process so that its import is not in the figure:
# argv is the files (a JSON list), the spec file and the thread count; it prints wall and CPU
# seconds.
DATASET_CHILD = """
import json, resource, sys, time
import tfrec
paths, spec_path, threads = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
spec = json.load(open(spec_path))
ds = tfrec.Dataset(paths).batch(1024)
ds = ds.parse(**spec) if "sequence_features" in spec or "context_features" in spec else ds.parse(spec)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t, c = time.perf_counter(), cpu()
for _ in ds.threads(threads):
    pass
print(json.dumps([time.perf_counter() - t, cpu() - c]))
"""


def run_dataset(paths, spec, threads, cores=None):
    """``(wall seconds, CPU seconds)`` of one pass of the Python pipeline over ``paths``, as
    the child measures it (its import excluded); ``cores``: the set the child may run on
    (default: this process's)."""
    preexec = None if cores is None else (lambda: os.sched_setaffinity(0, cores))
    out = subprocess.run([sys.executable, "-c", DATASET_CHILD, json.dumps(paths), spec, str(threads)],
                         check=True, capture_output=True, text=True, preexec_fn=preexec)
    wall, cpu = json.loads(out.stdout.strip().splitlines()[-1])
    return wall, cpu


def split_into(path, parts):
    """The records of ``path`` dealt round-robin into ``parts`` files beside it; their paths."""
    stem = path[: -len(".tfrecord")]
    paths = [f"{stem}.part{i}of{parts}.tfrecord" for i in range(parts)]
    writers = [tfrec.TFRecordWriter(p) for p in paths]
    for i, record in enumerate(tfrec.TFRecordDataset(path)):
        writers[i % parts].write(record)
    for w in writers:
        w.close()
    return paths


def worker_configurations(tfrec_bin, inputs, cores, scratch, repeat):
    """The two-worker pairs: ``[(row, run(threads) -> (wall, cpu))]`` for every wide and
    sequence shape; each run reads its files ``repeat`` times over (a longer run on the same
    data, so that starting a process weighs less). Also the files the conversions write (the
    caller deletes them)."""

    def cli(*args):
        return lambda threads: timed(lambda: run_cli(tfrec_bin, *args, "--threads", str(threads), cores=cores))

    def dataset(paths, spec):
        return lambda threads: run_dataset(paths, spec, threads, cores)

    out_dir = "/dev/shm" if os.access("/dev/shm", os.W_OK) else scratch
    pairs, outputs = [], []
    for shape, path, records in inputs:
        if shape.kind not in ("wide", "sequence"):
            continue
        spec = _shapes.spec_path(path)
        parts = split_into(path, 4) * repeat
        paths = [path] * repeat
        row = {"kind": shape.kind, "shape": shape.name, "about": shape.about, "records": records,
               "bytes": os.path.getsize(path)}
        parse = ("parse", "--spec", spec, "--format", "none", "--batch", str(BATCH))
        # On tmpfs when there is one: the disk's write-back is not what is measured.
        out = os.path.join(out_dir, f"tfrec-bench-{os.getpid()}-{shape.name}.parquet")
        outputs.append(out)
        pairs += [
            (dict(row, what="tfrec parse, 1 file"), cli(*parse, *paths)),
            (dict(row, what="tfrec parse, 4 files"), cli(*parse, *parts)),
            (dict(row, what="Python Dataset"), dataset(paths, spec)),
            (dict(row, what="tfrec convert to Parquet"),
             cli("convert", "--spec", spec, "-o", out, *paths)),
        ]
        if shape.gzip:
            # One compressed stream with its seek index (`tfrec index`): each worker inflates
            # its own spans from their checkpoints, as the plain file's spans are found by a
            # scan of its headers ahead of the workers.
            gz = path + ".gz"
            run_cli(tfrec_bin, "index", gz)
            gzs = [gz] * repeat
            gz_out = os.path.join(out_dir, f"tfrec-bench-{os.getpid()}-{shape.name}.gz.parquet")
            outputs.append(gz_out)
            pairs += [
                (dict(row, what="tfrec parse, 1 indexed GZIP file"), cli(*parse, *gzs)),
                (dict(row, what="Python Dataset, indexed GZIP"), dataset(gzs, spec)),
                (dict(row, what="tfrec convert to Parquet, indexed GZIP"),
                 cli("convert", "--spec", spec, "-o", gz_out, *gzs)),
            ]
    return pairs, outputs


def measure_workers(pairs, rounds, log):
    """Each pair at one thread and at two, in turn, after a warm-up of both; the figures are
    medians of the per-round ratios."""
    for _, run in pairs:
        run(1)
        run(2)
    times = [[] for _ in pairs]
    for r in range(rounds):
        log(f"two workers: round {r + 1} of {rounds}")
        for (_, run), t in zip(pairs, times):
            t.append((run(1), run(2)))
    rows = []
    for (row, _), t in zip(pairs, times):
        rows.append(dict(row, one_thread=[a for a, _ in t], two_threads=[b for _, b in t],
                         speedup=statistics.median(a[0] / b[0] for a, b in t),
                         cpu_ratio=statistics.median(b[1] / max(a[1], 1e-6) for a, b in t)))
    return rows


# Arrow against the parse it wraps, in one child process on this process's core: argv is the
# file, the spec file and the batch size; after a warm-up pass of each it times five passes of
# each, in turn, and prints the pair with the median ratio.
ARROW_CHILD = """
import json, sys, time
import tfrec, tfrec.arrow
path, spec_path, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = json.load(open(spec_path))
ds = tfrec.Dataset(path).batch(batch)
ds = (ds.parse(**spec) if "sequence_features" in spec or "context_features" in spec else ds.parse(spec)).threads(1)
stream = tfrec.arrow.read(path, spec, batch_rows=batch)
def parse():
    ds._drain()
def arrow():
    for _ in stream:
        pass
def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t
parse(), arrow()
pairs = [(timed(parse), timed(arrow)) for _ in range(5)]
print(json.dumps(sorted(pairs, key=lambda p: p[0] / p[1])[2]))
"""
ARROW_BATCH = 8192


def arrow_configurations(inputs):
    """Per shape: ``(row, run() -> (parse seconds, arrow seconds))``."""

    def run(path, spec):
        out = subprocess.run([sys.executable, "-c", ARROW_CHILD, path, spec, str(ARROW_BATCH)], check=True,
                             capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    return [({"kind": shape.kind, "shape": shape.name, "about": shape.about, "records": records,
              "bytes": os.path.getsize(path), "what": "arrow"},
             lambda path=path, spec=_shapes.spec_path(path): run(path, spec))
            for shape, path, records in inputs]


def measure_arrow(pairs, rounds, log):
    """Per shape and round, one child process times the parse and the conversion; the figure
    is the median over rounds of the round's parse time over its conversion time."""
    times = [[] for _ in pairs]
    for r in range(rounds):
        log(f"arrow: round {r + 1} of {rounds}")
        for (_, run), t in zip(pairs, times):
            t.append(run())
    return [dict(row, parse_seconds=[a for a, _ in t], arrow_seconds=[b for _, b in t],
                 of_parse=statistics.median(a / b for a, b in t))
            for (row, _), t in zip(pairs, times)]


def worker_table(rows):
    lines = ["| kind | shape | consumer | 2 threads / 1, wall | 2 threads / 1, CPU time |",
             "|---|---|---|--:|--:|"]
    lines += [f"| {r['kind']} | {r['shape']} | {r['what']} | {r['speedup']:.2f}× | {r['cpu_ratio']:.2f} |"
              for r in rows]
    lines += ["", "| consumer | minimum 2 threads / 1 | on shape | largest CPU ratio | on shape |",
              "|---|--:|---|--:|---|"]
    for what in dict.fromkeys(r["what"] for r in rows):
        of = [r for r in rows if r["what"] == what]
        low = min(of, key=lambda r: r["speedup"])
        high = max(of, key=lambda r: r["cpu_ratio"])
        lines.append(f"| {what} | **{low['speedup']:.2f}×** | {low['shape']} | {high['cpu_ratio']:.2f} | "
                     f"{high['shape']} |")
    return "\n".join(lines)


def arrow_table(rows):
    lines = [f"| kind | shape | Arrow record batches ({ARROW_BATCH} rows), × the parse's speed |", "|---|---|--:|"]
    lines += [f"| {r['kind']} | {r['shape']} | {r['of_parse']:.2f}× |" for r in rows]
    low = min(rows, key=lambda r: r["of_parse"])
    lines += ["", f"Arrow minimum: **{low['of_parse']:.2f}×** the parse ({low['shape']})"]
    return "\n".join(lines)


def minima(rows, of="ratio"):
    """Per kind (``narrow``, ``wide``, ``sequence``, ``gzip``): the smallest ratio ``of`` (the
    CLI's ``ratio``, the Python pipeline's ``pipeline_ratio``) and the shape it was on; kinds
    with no row that has it are left out."""
    out = {}
    for row in rows:
        if of not in row:
            continue
        best = out.get(row["kind"])
        if best is None or row[of] < best["ratio"]:
            out[row["kind"]] = {"ratio": row[of], "shape": row["shape"]}
    return out


def rate(x):
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.0f} k"


def table(rows, lows, pipeline_lows):
    """The Markdown report: every shape's row, grouped by kind, then the minimum per kind, of
    the CLI and of the Python pipeline."""
    lines = ["| kind | shape | records | MB | TensorFlow rec/s | tfrec rec/s | × TF | × TF, CPU time "
             "| Python Dataset rec/s | Python Dataset × TF |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for kind in _shapes.KINDS + ["gzip"]:
        for row in (r for r in rows if r["kind"] == kind):
            mb = row.get("gz_bytes", row["bytes"]) / 1e6
            pipeline = (f"{rate(row['pipeline_records_per_s'])} | {row['pipeline_ratio']:.2f}×"
                        if "pipeline_ratio" in row else "— | —")
            lines.append(f"| {kind} | {row['shape']} ({row['about']}) | {row['records']:,} | {mb:.1f} | "
                         f"{rate(row['tf_records_per_s'])} | {rate(row['tfrec_records_per_s'])} | {row['ratio']:.2f}× | "
                         f"{row['cpu_ratio']:.2f}× | {pipeline} |")
    lines += ["", "| kind | minimum × TF | on shape | Python Dataset: minimum × TF | on shape |",
              "|---|--:|---|--:|---|"]
    for kind in _shapes.KINDS + ["gzip"]:
        if kind not in lows:
            continue
        low = pipeline_lows.get(kind)
        pipeline = f"**{low['ratio']:.2f}×** | {low['shape']}" if low else "— | —"
        lines.append(f"| {kind} | **{lows[kind]['ratio']:.2f}×** | {lows[kind]['shape']} | {pipeline} |")
    return "\n".join(lines)


def inputs_stamp(a):
    """What decides the inputs' bytes."""
    return {"seed": a.seed, "scale": a.scale, "shapes": a.shapes}


def reused_inputs(d, a):
    """The inputs ``d`` holds from an earlier run with the same seed and scale, and the same
    shapes or all of them, as ``write_all`` returns them; ``None`` when it holds none."""
    try:
        with open(os.path.join(d, "inputs.json")) as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return None
    wanted = inputs_stamp(a)
    # Inputs written for every shape also serve a run of some of them (the shapes' files are
    # then those of the full set, which one generator draws in turn).
    if stamp != wanted and stamp != dict(wanted, shapes=None):
        return None
    shapes = [s for s in _shapes.SHAPES if a.shapes is None or s.name in a.shapes]
    return [(s, os.path.join(d, f"{s.name}.tfrecord"), _shapes.count_at(s, a.scale)) for s in shapes]


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
    ap.add_argument("--reuse-inputs", action="store_true",
                    help="with --dir: use the inputs an earlier run wrote there with the same seed, scale and shapes")
    ap.add_argument("--parts", nargs="+", choices=["tf", "arrow", "workers"], default=["tf", "arrow", "workers"],
                    help="which tables to make (default: all three)")
    ap.add_argument("--worker-cores", default="0,1", help="the two cores of the two-worker rows (comma-separated)")
    ap.add_argument("--worker-repeat", type=int, default=1,
                    help="two-worker rows read each file this many times over (longer runs, same data)")
    a = ap.parse_args()
    if not os.path.isfile(a.tfrec):
        sys.exit(f"bench_shapes.py: no tfrec binary at {a.tfrec} (--tfrec)")

    def log(msg):
        print(f"bench_shapes.py: {msg}", file=sys.stderr, flush=True)

    cores = pin(None if a.core < 0 else a.core)
    d = a.dir or tempfile.mkdtemp(prefix="tfrec-bench-shapes-")
    os.makedirs(d, exist_ok=True)
    try:
        inputs = reused_inputs(d, a) if a.reuse_inputs else None
        if inputs is None:
            log(f"writing inputs (seed {a.seed}, scale {a.scale}) to {d}")
            inputs = _shapes.write_all(d, a.seed, a.scale, a.shapes)
            with open(os.path.join(d, "inputs.json"), "w") as f:
                json.dump(inputs_stamp(a), f)
        rows, tf_version = [], None
        if "tf" in a.parts:
            tf, options = quiet_tensorflow()
            tf_version = tf.__version__
            rows = measure(configurations(tf, options, a.tfrec, inputs), a.rounds, log)
        arrow_rows = []
        if "arrow" in a.parts:
            arrow_rows = measure_arrow(arrow_configurations(inputs), a.rounds, log)
        worker_rows = []
        if "workers" in a.parts:
            two = {int(c) for c in a.worker_cores.split(",")}
            pairs, outputs = worker_configurations(a.tfrec, inputs, two, d, a.worker_repeat)
            try:
                worker_rows = measure_workers(pairs, a.rounds, log)
            finally:
                for out in outputs:
                    if os.path.exists(out):
                        os.remove(out)
    finally:
        if not a.dir:
            shutil.rmtree(d, ignore_errors=True)
    lows, pipeline_lows = minima(rows), minima(rows, "pipeline_ratio")
    debug_build = tfrec._tfrec.DEBUG_BUILD
    if rows:
        print(f"## tfrec against TensorFlow {tf_version}, per core\n")
        print(f"seed {a.seed}, scale {a.scale}, median of {a.rounds} round(s), cores {cores}, "
              f"batch {BATCH}, tfrec: {a.tfrec}\n")
        print(table(rows, lows, pipeline_lows))
        print("\nparse: TFRecordDataset.batch(1024).map(parse) against `tfrec parse --format none --threads 1`;"
              " gzip: TFRecordDataset(GZIP).batch(1024) against `tfrec count` (MB: the .gz file's)."
              " × TF: wall time, the figure the minimum is of; CPU time (user + system) beside it."
              " Python Dataset: the parse rows' TensorFlow time against"
              " `Dataset(path).batch(1024).parse(spec).threads(1)` iterated (NumPy out), wall time.")
        if debug_build:
            print(f"\n**{DEBUG_NOTE}**")
    if arrow_rows:
        print("\n## Arrow conversion against the parse it wraps, one core\n")
        print(arrow_table(arrow_rows))
        if debug_build:
            print(f"\n**{DEBUG_NOTE}**")
    if worker_rows:
        print(f"\n## Two workers against one, cores {a.worker_cores}\n")
        print(worker_table(worker_rows))
        print("\nwall: median over rounds of (one-thread seconds / two-thread seconds); CPU: median of"
              " (two-thread CPU seconds / one-thread CPU seconds), user + system.")
        if debug_build:
            print(f"\n**{DEBUG_NOTE}** (the Python Dataset rows)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": a.seed, "scale": a.scale, "rounds": a.rounds, "cores": cores, "batch": BATCH,
                       "tensorflow": tf_version, "tfrec": a.tfrec, "rows": rows, "minimum": lows,
                       "pipeline_minimum": pipeline_lows, "extension_debug_build": debug_build,
                       "arrow": arrow_rows, "workers": worker_rows}, f, indent=1)


if __name__ == "__main__":
    main()

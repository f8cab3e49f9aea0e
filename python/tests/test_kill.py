"""Python's writers killed with SIGKILL at random moments (issue 54's kill campaign; the CLI's
writers are in crates/tfrec-cli/tests/kill.rs): the same call run again succeeds, leaves
nothing but its output, and writes the bytes of a run that was never interrupted.

``TFREC_KILL_ROUNDS`` sets the kills per writer (3 by default). A kill comes a seeded number of
milliseconds after the start; no assertion depends on where it lands."""

import os
import random
import signal
import subprocess
import sys
import time

import pytest

ROUNDS = int(os.environ.get("TFREC_KILL_ROUNDS", "3"))
MAX_DELAY_S = 0.4

# Each writes enough that a kill usually lands mid-run, and exits 0 when it is done.
WRITERS = {
    "TFRecordWriter": """
import tfrec
with tfrec.io.TFRecordWriter("out.tfrecord") as w:
    for i in range(200_000):
        w.write(b"record-%d-" % i + b"x" * 200)
""",
    "TFRecordWriter gzip": """
import tfrec
with tfrec.io.TFRecordWriter("out.tfrecord.gz", "GZIP") as w:
    for i in range(100_000):
        w.write(b"record-%d-" % i + b"y" * 300)
""",
    "data.experimental.TFRecordWriter": """
import tfrec
records = (b"r%d" % i * 20 for i in range(200_000))
tfrec.data.experimental.TFRecordWriter("out.tfrecord").write(records)
""",
    "arrow.write": """
import pyarrow as pa, tfrec
table = pa.table({"id": list(range(300_000)), "name": ["n%d" % i for i in range(300_000)]})
tfrec.arrow.write(table, "out.tfrecord")
""",
}


def _run(code, cwd):
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)


def _contents(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_killed_writer_reruns_to_the_same_bytes_and_leaves_no_debris(tmp_path, name):
    code = WRITERS[name]
    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    done = _run(code, reference_dir)
    assert done.returncode == 0, done.stderr
    reference = _contents(reference_dir)
    assert reference

    work = tmp_path / "work"
    work.mkdir()
    rng = random.Random(f"{name}-54")
    for round_ in range(ROUNDS):
        child = subprocess.Popen([sys.executable, "-c", code], cwd=work,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, MAX_DELAY_S))
        child.send_signal(signal.SIGKILL)
        child.wait()
        rerun = _run(code, work)
        assert rerun.returncode == 0, f"round {round_}: {rerun.stderr}"
        now = _contents(work)
        assert sorted(now) == sorted(reference), f"round {round_}: files after the rerun"
        for file, data in reference.items():
            assert now[file] == data, f"round {round_}: {file} differs from the uninterrupted run's"

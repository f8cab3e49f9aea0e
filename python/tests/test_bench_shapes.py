"""The shapes ``bench_shapes.py`` times (``python/bench/_shapes.py``), each written at a tiny
scale: every file parses with its spec file, and TensorFlow's parse of its first batch equals
tfrec's (Python, and the ``tfrec parse`` CLI when one is built) under the golden matching
rules. A benchmark figure is worth nothing if the two sides do not read the same tensors; and
shapes nobody picked for a differential test are one more differential test. No timing here."""

import base64
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("tensorflow")

PYTHON = pathlib.Path(__file__).resolve().parents[1]
# The shapes live with the benchmarks, the TensorFlow oracle and the comparison with the
# differential harness (python/differential).
sys.path.insert(0, str(PYTHON / "bench"))
sys.path.insert(0, str(PYTHON))

import tfrec  # noqa: E402

import _shapes  # noqa: E402
from differential import compare, oracle  # noqa: E402

SEED = 28
# At this scale every file holds at most one batch (1000 records at the most), so the
# first batch is the whole file.
SCALE = 0.001
BATCH = 1024


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every shape written once: ``{name: (shape, path)}``."""
    d = tmp_path_factory.mktemp("shapes")
    return {shape.name: (shape, path) for shape, path, _ in _shapes.write_all(str(d), SEED, SCALE)}


def case_of(shape, records):
    """The first batch as a golden-format case (the differential harness's input)."""
    case = {"serialized": [base64.b64encode(r).decode() for r in records[:BATCH]]}
    if shape.kind == "sequence":
        case.update(op="parse_sequence_example", **shape.spec)
    else:
        case.update(op="parse_example", features=shape.spec)
    return case


def test_every_kind_has_several_shapes():
    kinds = [s.kind for s in _shapes.SHAPES]
    assert all(kinds.count(k) >= 3 for k in _shapes.KINDS), kinds
    assert {s.kind for s in _shapes.SHAPES if s.gzip} >= {"narrow", "wide", "sequence"}


@pytest.mark.parametrize("name", list(_shapes.BY_NAME))
def test_shape_parses_as_tensorflow_does(written, name):
    shape, path = written[name]
    records = list(tfrec.TFRecordDataset(path))
    assert len(records) == _shapes.count_at(shape, SCALE)
    if shape.gzip:
        assert list(tfrec.TFRecordDataset(path + ".gz", compression_type="GZIP")) == records
    case = case_of(shape, records)
    case["expected"], case["error"] = oracle.answer(case, records[:BATCH])
    assert case["error"] is None, f"TensorFlow refuses {name}: {case['error']}"
    assert compare.check_python(case) is None, compare.check_python(case)
    cli = compare.cli_path()
    if cli is None:
        return
    # The spec file as written, through the command the benchmark times, on the whole file.
    p = subprocess.run([cli, "parse", "--spec", _shapes.spec_path(path), "--format", "none", "--threads", "1",
                        "--batch", str(BATCH), path], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert compare.check_cli(case, cli) is None, compare.check_cli(case, cli)

"""tfrec against TensorFlow 2.21 on random records and specs (see ``differential``): a few
thousand scenarios from a fresh seed each run, the seed printed. ``TFREC_DIFF_SEED`` replays a
seed, ``TFREC_DIFF_SCENARIOS`` sets the size; the long mode is ``python -m differential``.
Mismatches, minimised, are written in the golden case format to
``$TFREC_DIFF_OUT`` (default: a file in pytest's temporary directory)."""

import os
import pathlib
import random
import sys

import pytest

pytest.importorskip("tensorflow")

# The harness lives beside the tests (python/differential): its long mode reads the clock for
# its time budget, which no test does.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from conftest import summary  # noqa: E402
from differential.compare import cli_path  # noqa: E402
from differential.driver import Run  # noqa: E402


# Scenario n depends on the seed and n alone, so the run is cut into parts of consecutive
# scenarios that pytest-xdist spreads over its workers.
PARTS = 2


@pytest.mark.parametrize("part", range(PARTS))
def test_differential_against_tensorflow(tmp_path, part):
    seed = int(os.environ.get("TFREC_DIFF_SEED") or random.SystemRandom().randrange(1 << 32))
    total = int(os.environ.get("TFREC_DIFF_SCENARIOS") or 5000)
    start, stop = total * part // PARTS, total * (part + 1) // PARTS
    out = os.environ.get("TFREC_DIFF_OUT") or str(tmp_path / "mismatches.jsonl")
    cli = cli_path()
    print(f"differential seed {seed} (TFREC_DIFF_SEED={seed} replays it); tfrec parse CLI: {cli or 'not built, skipped'}")
    run = Run(seed, cli=cli, cli_every=8, out=out).go(scenarios=stop - start, start=start)
    summary(
        f"differential vs TensorFlow: seed {seed}, scenarios {start}-{stop - 1} of {total}, "
        + ", ".join(f"{k} {v}" for k, v in sorted(run.totals.items()))
    )
    assert run.unexplained() == 0, f"seed {seed}: mismatches written to {out}:\n" + "\n".join(
        m["note"] for m in run.mismatches[:10]
    )

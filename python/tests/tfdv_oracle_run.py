"""Runs one of ``python/tfdv_oracle``'s differential scripts in TFDV's own environment
(``.venv-tfdv``, made by ``scripts/tfdv-venv``, or ``TFREC_TFDV_PYTHON``) against this
interpreter's ``tfrec``, for the statistics and schema tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tfdv_python():
    given = os.environ.get("TFREC_TFDV_PYTHON")
    if given:
        return given
    local = ROOT / ".venv-tfdv" / "bin" / "python"
    return str(local) if local.exists() else None


needs_tfdv = pytest.mark.skipif(
    tfdv_python() is None,
    reason="TFDV's environment is absent: make it with scripts/tfdv-venv (or set TFREC_TFDV_PYTHON)",
)


def assert_same_as_tfdv(script, default_seeds, tmp_path):
    """Runs ``script`` on ``TFREC_TFDV_SEEDS`` seeds (or ``default_seeds``) in ``tmp_path``; fails
    with the script's per-seed report when any seed differs."""
    seeds = int(os.environ.get("TFREC_TFDV_SEEDS", str(default_seeds)))
    ran = subprocess.run(
        [tfdv_python(), str(ROOT / "python" / "tfdv_oracle" / script),
         f"{sys.executable} -m tfrec", "0", str(seeds), str(tmp_path)],
        capture_output=True, text=True, timeout=60 * (5 + seeds),
    )
    report = [line for line in ran.stdout.splitlines() if line.startswith("seed")]
    assert ran.returncode == 0, "\n".join(report) or ran.stderr[-3000:]

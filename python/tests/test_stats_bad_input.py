"""Statistics of bad input against TFDV (issue 55): python/tfdv_oracle/bad_input.py writes each
case with TensorFlow and compares TFDV's ``generate_statistics_from_tfrecord`` with ``tfrec
stats`` field by field, in TFDV's own environment (``.venv-tfdv``): an empty file, empty lists,
a feature of no kind, NaN and infinities, non-UTF-8 strings, a record of 300,000 floats and
100,000 strings, 1,500 features: equal statistics; a kind that changes and a damaged record:
refused by both, tfrec naming the file; with ``--skip-corrupt``, tfrec's statistics those TFDV
gives of the file without the damaged record. The sizes TFDV cannot take in test time (100,000
features, millions of values in a record) are in ``crates/tfrec/tests/stats_bad_input.rs``.

The cases run in two halves (TensorFlow's import is most of each)."""

import subprocess
import sys

import pytest

from tfdv_oracle_run import ROOT, needs_tfdv, tfdv_python


def run_cases(cases, tmp_path):
    ran = subprocess.run(
        [tfdv_python(), str(ROOT / "python" / "tfdv_oracle" / "bad_input.py"), f"{sys.executable} -m tfrec",
         str(tmp_path), *cases],
        capture_output=True, text=True, timeout=600,
    )
    report = [line for line in ran.stdout.splitlines() if line.startswith("case")]
    assert ran.returncode == 0, "\n".join(report) or ran.stderr[-3000:]
    assert len(report) >= len(cases), ran.stdout[-3000:]
    return report


@needs_tfdv
def test_small_bad_input_gives_tfdv_statistics_or_both_refuse(tmp_path):
    report = run_cases(["empty_file", "empty_lists", "no_kind", "nan_inf", "non_utf8", "kind_change"], tmp_path)
    assert any("kind_change: both refuse" in line and '"k"' in line for line in report), report


@needs_tfdv
def test_large_records_wide_files_and_damage_give_tfdv_statistics(tmp_path):
    report = run_cases(["many_values", "wide", "damaged"], tmp_path)
    assert any("damaged --skip-corrupt: equal" in line for line in report), report

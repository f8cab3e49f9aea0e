"""Shared fixtures: where the golden vectors are, the CLI binary the tests compare with, and
the conformance summaries printed at the end of the run (``python parse cases: N run, N
passed`` …)."""

import json
import os
import pathlib
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SUMMARIES = []


def tfrec_binary():
    """The `tfrec` command of this checkout's build (debug, else release), else the one on
    PATH (an installed wheel's), else None."""
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    for candidate in (target / "debug" / "tfrec", target / "release" / "tfrec"):
        if candidate.exists():
            return str(candidate)
    return shutil.which("tfrec")


def golden_dir():
    """``$TFREC_GOLDEN_DIR``, else the repository's copy (``testdata/golden``)."""
    d = pathlib.Path(os.environ.get("TFREC_GOLDEN_DIR") or REPO / "testdata" / "golden")
    if not d.is_dir():
        pytest.fail(f"golden vectors not found at {d} (set TFREC_GOLDEN_DIR)")
    return d


def golden_lines(name):
    path = golden_dir() / name
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert cases, f"{path} has no cases"
    return cases


def summary(line):
    """Records a line for the end-of-run summary (and prints it for ``-s`` runs).

    The line travels on the test's report (``user_properties``), so that under pytest-xdist
    the controller, which prints the summary, gets the lines its workers recorded."""
    print(line)
    if _CURRENT_TEST is None:
        SUMMARIES.append(line)
    else:
        _CURRENT_TEST.user_properties.append(("summary", line))


_CURRENT_TEST = None


@pytest.fixture(autouse=True)
def _current_test(request):
    global _CURRENT_TEST
    _CURRENT_TEST = request.node
    yield
    _CURRENT_TEST = None


def pytest_runtest_logreport(report):
    # Every phase's report carries the test's properties so far; teardown's has them all.
    if report.when == "teardown":
        SUMMARIES.extend(value for name, value in report.user_properties if name == "summary")


def pytest_terminal_summary(terminalreporter):
    for line in SUMMARIES:
        terminalreporter.write_line(line)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray of two CPUs for one test module (``pytestmark =
    pytest.mark.usefixtures("ray_cluster")``), without progress bars; shut down after it."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()

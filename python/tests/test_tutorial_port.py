"""The port of TensorFlow's tutorial "TFRecord and tf.train.Example" (examples/tfrecord_tutorial.py):
it runs end to end in an empty directory without TensorFlow, and its header's count of cells
that needed more than a name change is the number of cells marked ``# changed:``."""

import ast
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "tfrecord_tutorial.py"


def cells(text):
    """``{cell name: its source}`` in order."""
    parts = re.split(r"^# cell (\w+): .*$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_cell_is_there_and_the_count_is_right():
    text = SCRIPT.read_text()
    found = cells(text)
    assert list(found) == [str(i) for i in range(1, 30)] + [f"A{i}" for i in range(1, 11)]
    changed = [name for name, source in found.items() if "# changed:" in source]
    total, count = map(int, re.search(r"^# Count: .*= (\d+) cells; (\d+) needed more", text, flags=re.M).groups())
    assert total == len(found)
    assert count == len(changed), changed
    # No TensorFlow in the code (comments and docstrings name it).
    tree = ast.parse(text)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "tensorflow" not in imported
    assert "tf" not in {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def test_the_port_runs_without_tensorflow(tmp_path):
    runner = (
        "import runpy, sys\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
        "assert 'tensorflow' not in sys.modules, 'the port imported TensorFlow'\n"
    )
    out = subprocess.run([sys.executable, "-c", runner], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.rstrip().endswith("done: every cell ran")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["images.tfrecords", "test.tfrecord",
                                                          "test_from_slices.tfrecord"]

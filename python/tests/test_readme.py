"""The README's first-screen Python example runs as written (its command-line example is run by
crates/tfrec-cli/tests/readme.rs; scripts/docs runs both again with the guide's blocks)."""

import pathlib
import re
import shutil

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_the_readme_python_example_runs_as_written(tmp_path, monkeypatch, capsys):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Try it\n", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(code.strip().splitlines()) <= 6, "the first-screen example stays short"
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md (Try it)", "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out
    assert "'age': array([19])" in printed and "values=array([0.5, 1.5], dtype=float32)" in printed

"""``tfrec.arrow``, ``tfrec.polars``, ``tfrec.ray`` and ``tfrec.torch`` load on first attribute
access after a plain ``import tfrec``, and ``import tfrec`` alone imports none of the libraries
they wrap. Each check runs in a fresh interpreter: this test session has them imported."""

import json
import subprocess
import sys

import pytest

HEAVY = ["pyarrow", "polars", "ray", "torch", "tensorflow"]


def run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_tfrec_imports_no_integration_library():
    loaded = run(
        "import sys, json, tfrec\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "ours = [m for m in sys.modules if m.split('.')[:2] in "
        "[['tfrec', 'arrow'], ['tfrec', 'polars'], ['tfrec', 'ray'], ['tfrec', 'torch']]]\n"
        "print(json.dumps(heavy + ours))"
    )
    assert loaded == []


def test_dir_lists_the_lazy_submodules():
    names = run("import json, tfrec; print(json.dumps(dir(tfrec)))")
    for name in ["arrow", "polars", "ray", "torch", "TFRecordDataset", "io"]:
        assert name in names


def test_arrow_on_attribute_access(tmp_path):
    path = tmp_path / "a.tfrecord"
    code = (
        "import json, sys, tfrec\n"
        f"with tfrec.TFRecordWriter({str(path)!r}) as w:\n"
        "    w.write(tfrec.Example.from_dict({'x': 3}).SerializeToString())\n"
        "before = 'tfrec.arrow' in sys.modules\n"
        f"t = tfrec.arrow.read({str(path)!r}, {{'x': tfrec.io.FixedLenFeature([], tfrec.int64)}}).read_all()\n"
        "print(json.dumps([before, t.column('x').to_pylist(), tfrec.arrow is sys.modules['tfrec.arrow']]))"
    )
    assert run(code) == [False, [3], True]


@pytest.mark.parametrize("name, library", [("polars", "polars"), ("ray", "ray"), ("torch", None)])
def test_other_submodules_on_attribute_access(name, library):
    # tfrec.torch imports torch only when its class is first used, so it loads without torch.
    if library:
        pytest.importorskip(library)
    code = (
        "import json, sys, tfrec\n"
        f"m = tfrec.{name}\n"
        f"print(json.dumps([m.__name__, m is sys.modules['tfrec.{name}'], {library!r} in sys.modules]))"
    )
    assert run(code) == [f"tfrec.{name}", True, library is not None]


def test_unknown_attribute_is_still_an_attribute_error():
    import tfrec

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tfrec.nope  # noqa: B018
    assert not hasattr(tfrec, "_nope")

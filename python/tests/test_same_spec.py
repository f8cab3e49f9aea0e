"""One inferred spec whoever asks: ``tfrec.arrow.infer_spec``, ``tfrec schema --json`` and the
spec ``tfrec convert --save-spec`` writes are the same dict for the same generated files
(scalars, fixed and ragged lists, empty features, varying presence, a kind that varies,
SequenceExamples); the features left out are a ``UserWarning`` in Python."""

import json
import subprocess
import warnings

import pytest

import tfrec
import tfrec.arrow
from tfrec.train import Feature, Int64List

from conftest import tfrec_binary


@pytest.fixture(scope="module")
def binary():
    found = tfrec_binary()
    if found is None:
        pytest.skip("the tfrec binary is not built (cargo build -p tfrec-cli)")
    return found


def empty_int64():
    """An ``int64_list`` with no values (a kind, unlike an empty ``Feature``)."""
    return Feature(int64_list=Int64List(value=[]))


def examples(name):
    if name == "scalars":
        return [{"id": i, "score": i / 4, "name": f"n{i}", "raw": bytes([0xFF, i])} for i in range(12)]
    if name == "lists":
        return [{"pair": [float(i), -1.0], "matrix": list(range(6)), "tags": list(range(i % 4)) or empty_int64()}
                for i in range(12)]
    if name == "empty":
        return [{"id": i, "never_values": empty_int64(), "empty_message_once": [] if i == 2 else [i],
                 "only_empty_messages": []} for i in range(6)]
    if name == "presence":
        rows = []
        for i in range(10):
            d = {"id": i}
            if i % 2 == 0:
                d["even"] = [i, i]
            if i == 9:
                d["last"] = b"x"
            rows.append(d)
        return rows
    if name == "mixed":
        return [{"id": i, "x": 0.5 if i % 3 == 0 else i} for i in range(6)]
    raise KeyError(name)


def sequences():
    rows = []
    for i in range(8):
        lists = {"tokens": [[b"w"] * (t % 3) for t in range(i)], "always": [[i], [i]]}
        if i % 3 != 0:
            lists["frames"] = [[float(t), 1.0] for t in range(i)]
        rows.append({"context": {"id": i, "lang": b"en"}, "feature_lists": lists})
    return rows


def write(path, name):
    with tfrec.TFRecordWriter(str(path)) as w:
        if name == "sequences":
            for d in sequences():
                w.write(tfrec.SequenceExample.from_dict(d).SerializeToString())
        else:
            for d in examples(name):
                w.write(tfrec.Example.from_dict(d).SerializeToString())


def run(binary, *args, cwd):
    return subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, check=True)


@pytest.mark.parametrize("name", ["scalars", "lists", "empty", "presence", "mixed", "sequences"])
def test_python_cli_schema_and_convert_infer_one_spec(tmp_path, binary, name):
    path = tmp_path / f"{name}.tfrecord"
    write(path, name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        python_spec = tfrec.arrow.infer_spec(str(path))
    schema = run(binary, "schema", "--json", path.name, cwd=tmp_path)
    convert = run(binary, "convert", path.name, "-o", f"{name}.parquet", "--save-spec", "saved.json", cwd=tmp_path)
    assert json.loads(schema.stdout) == python_spec
    assert json.loads((tmp_path / "saved.json").read_text()) == python_spec
    # What one leaves out, all say they leave out.
    python_left_out = sorted(str(w.message).split("'")[1] for w in caught if "left out" in str(w.message))
    cli_left_out = sorted(line.split("'")[1] for line in schema.stderr.splitlines() if "left out" in line)
    assert python_left_out == cli_left_out
    assert [line for line in convert.stderr.splitlines() if "left out" in line] == \
        [line for line in schema.stderr.splitlines() if "left out" in line]
    # The spec reads every record it was inferred from.
    assert tfrec.arrow.read(str(path), python_spec).read_all().num_rows == len(
        sequences() if name == "sequences" else examples(name))


def test_the_rules_where_the_two_inferences_disagreed(tmp_path):
    write(tmp_path / "empty.tfrecord", "empty")
    with pytest.warns(UserWarning, match="'only_empty_messages' left out"):
        spec = tfrec.arrow.infer_spec(str(tmp_path / "empty.tfrecord"))
    # No values anywhere: a list, not a FixedLenFeature of shape [0].
    assert spec["never_values"] == {"type": "VarLenFeature", "dtype": "int64"}
    write(tmp_path / "mixed.tfrecord", "mixed")
    # A kind that varies is left out, saying why, rather than failing the whole inference.
    with pytest.warns(UserWarning, match=r"'x' left out.*int64_list, float_list|'x' left out.*float_list, int64_list"):
        spec = tfrec.arrow.infer_spec(str(tmp_path / "mixed.tfrecord"))
    assert list(spec) == ["id"]
    with pytest.warns(UserWarning, match="'x' left out"):
        table = tfrec.arrow.read(str(tmp_path / "mixed.tfrecord")).read_all()
    assert table.column_names == ["id"]

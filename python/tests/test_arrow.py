"""tfrec.arrow: TFRecord files as Arrow streams (PyCapsule interface) read by pyarrow and
Polars, spec inference, projection, byte ranges, Parquet written by `tfrec convert` read by
pyarrow, and Arrow data written back as Examples."""

import json
import math
import os
import pathlib
import subprocess

import numpy as np
import pytest

import tfrec
import tfrec.arrow

from conftest import tfrec_binary

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

REPO = pathlib.Path(__file__).resolve().parents[2]


def make_records(path, n=50):
    with tfrec.TFRecordWriter(str(path)) as w:
        for i in range(n):
            d = {"id": i, "score": [i * 0.5, -i * 0.25], "name": f"row{i}"}
            if i % 3 == 0:
                d["tags"] = [i, i + 1, i + 2][: 1 + (i // 3) % 3]
            w.write(tfrec.Example.from_dict(d).SerializeToString())
    return n


SPEC = {
    "id": tfrec.io.FixedLenFeature([], tfrec.int64),
    "score": tfrec.io.FixedLenFeature([2], tfrec.float32),
    "name": tfrec.io.FixedLenFeature([], tfrec.string),
    "tags": tfrec.io.VarLenFeature(tfrec.int64),
}


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.tfrecord"
    n = make_records(path)
    return path, n


def test_pyarrow_table_equals_the_spec_parse(data):
    path, n = data
    stream = tfrec.arrow.read(str(path), SPEC, batch_rows=16)
    table = pa.table(stream)
    assert table.num_rows == n
    parsed = tfrec.io.parse_example(list(tfrec.TFRecordDataset(str(path))), SPEC)
    assert table.column("id").to_pylist() == parsed["id"].tolist()
    assert np.array_equal(np.array(table.column("score").to_pylist(), dtype=np.float32), parsed["score"])
    assert table.column("name").to_pylist() == list(parsed["name"])
    tags = table.column("tags").to_pylist()
    sparse = parsed["tags"]
    for row in range(n):
        want = [int(v) for (r, _), v in zip(sparse.indices, sparse.values) if r == row]
        if row % 3 == 0:
            assert tags[row] == want
        else:
            assert tags[row] is None  # missing is NULL, not []
    # Batches of at most batch_rows, iterated as pyarrow RecordBatches.
    sizes = [b.num_rows for b in stream]
    assert sum(sizes) == n and max(sizes) <= 16


def test_schema_is_a_spec_dict_and_inference(data):
    path, _ = data
    spec = tfrec.arrow.infer_spec(str(path))
    assert spec["id"]["type"] == "FixedLenFeature" and spec["id"]["shape"] == []
    assert spec["score"]["shape"] == [2]
    assert spec["tags"]["type"] == "VarLenFeature"
    stream = tfrec.arrow.read(str(path), utf8=True)
    assert stream.schema == spec
    table = stream.read_all()
    assert table.schema.field("name").type == pa.string()
    assert table.schema.field("tags").nullable


def test_projection_parses_only_the_columns(data):
    path, n = data
    table = tfrec.arrow.read(str(path), SPEC, columns=["id"]).read_all()
    assert table.column_names == ["id"]
    assert table.column("id").to_pylist() == list(range(n))
    with pytest.raises(KeyError):
        tfrec.arrow.read(str(path), SPEC, columns=["nope"])


def test_byte_ranges_split_the_records(data):
    path, n = data
    size = os.path.getsize(path)
    cut = size // 3
    parts = [tfrec.arrow.read(str(path), SPEC, byte_range=r).read_all() for r in [(0, cut), (cut, size)]]
    ids = parts[0].column("id").to_pylist() + parts[1].column("id").to_pylist()
    assert ids == list(range(n))
    assert parts[0].num_rows > 0 and parts[1].num_rows > 0


def test_polars_from_arrow(data):
    pl = pytest.importorskip("polars")
    path, n = data
    df = pl.from_arrow(tfrec.arrow.read(str(path), SPEC).read_all())
    assert df.height == n
    assert df["id"].sum() == sum(range(n))


def test_write_round_trip(data, tmp_path):
    path, n = data
    table = tfrec.arrow.read(str(path), SPEC).read_all()
    out = tmp_path / "back.tfrecord"
    assert tfrec.arrow.write(table, out) == n
    originals = [tfrec.Example.FromString(r) for r in tfrec.TFRecordDataset(str(path))]
    back = [tfrec.Example.FromString(r) for r in tfrec.TFRecordDataset(str(out))]
    for o, b in zip(originals, back):
        assert o.to_dict() == b.to_dict()


def test_write_types_and_errors(tmp_path):
    table = pa.table({
        "flag": pa.array([True, None]),
        "x": pa.array([1.5, 2.5], type=pa.float64()),
        "words": pa.array([["a", "b"], []]),
    })
    out = tmp_path / "t.tfrecord"
    assert tfrec.arrow.write(table, out) == 2
    got = tfrec.arrow.read(str(out), {"flag": tfrec.io.VarLenFeature(tfrec.int64),
                                      "x": tfrec.io.FixedLenFeature([], tfrec.float32),
                                      "words": tfrec.io.VarLenFeature(tfrec.string)}).read_all()
    assert got.column("flag").to_pylist() == [[1], None]
    assert got.column("x").to_pylist() == [1.5, 2.5]
    assert got.column("words").to_pylist() == [[b"a", b"b"], []]
    bad = pa.table({"when": pa.array([1], type=pa.date32())})
    with pytest.raises(ValueError, match="when"):
        tfrec.arrow.write(bad, tmp_path / "bad.tfrecord")
    with pytest.raises(TypeError):
        tfrec.arrow.write([1, 2], tmp_path / "bad2.tfrecord")




def test_pyarrow_reads_our_parquet(data, tmp_path):
    binary = tfrec_binary()
    if binary is None:
        pytest.skip("the tfrec binary is not built (cargo build -p tfrec-cli)")
    path, n = data
    spec_path = tmp_path / "spec.json"
    import json
    spec_path.write_text(json.dumps(tfrec.arrow.read(str(path), SPEC).schema))
    out = tmp_path / "data.parquet"
    subprocess.run([binary, "convert", str(path), "-o", str(out), "--spec", str(spec_path)], check=True)
    table = pq.read_table(out)
    parsed = tfrec.io.parse_example(list(tfrec.TFRecordDataset(str(path))), SPEC)
    assert table.column("id").to_pylist() == parsed["id"].tolist()
    assert all(math.isclose(a, b) for a, b in zip(table.column("score").to_pylist()[3], parsed["score"][3]))
    assert table.column("name").to_pylist() == list(parsed["name"])
    assert table.column_names == list(SPEC)  # the spec file's order


def damage(path, record):
    """Flips a byte inside the data of record ``record`` of ``path``; returns its offset."""
    data = bytearray(path.read_bytes())
    off = 0
    for _ in range(record):
        off += int.from_bytes(data[off : off + 8], "little") + 16
    data[off + 12 + 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return off


def test_damage_is_a_typed_error_or_skipped_and_counted(data):
    path, n = data
    offset = damage(path, 20)
    stream = tfrec.arrow.read(str(path), SPEC, batch_rows=8)
    # Iterating (and read_all) raises tfrec's class, with where the damage is.
    with pytest.raises(tfrec.errors.DataLossError) as info:
        stream.read_all()
    assert info.value.path == str(path) and info.value.offset == offset
    # Through the C stream, a consumer gets the same text as its own error type.
    with pytest.raises(Exception) as info:
        pa.table(stream)
    assert str(path) in str(info.value) and str(offset) in str(info.value)
    # Skipping loses only the damaged record, and says what it skipped.
    skipping = tfrec.arrow.read(str(path), SPEC, batch_rows=8, on_corruption="skip")
    ids = skipping.read_all().column("id").to_pylist()
    assert ids == [i for i in range(n) if i != 20]
    stats = skipping.stats()
    assert stats["skipped_regions"] == 1 and stats["records"] == n - 1
    assert any(str(path) in p and str(offset) in p for p in stats["problems"])
    with pytest.raises(ValueError):
        tfrec.arrow.read(str(path), SPEC, on_corruption="sometimes")


def test_spec_that_does_not_match_names_file_offset_and_feature(data):
    path, _ = data
    offsets = [0]
    for r in tfrec.TFRecordDataset(str(path)):
        offsets.append(offsets[-1] + len(r) + 16)
    # "name" holds bytes: an int64 spec for it fails at the first record, naming the feature.
    wrong_type = {**SPEC, "name": tfrec.io.FixedLenFeature([], tfrec.int64)}
    with pytest.raises(tfrec.errors.ParseError) as info:
        tfrec.arrow.read(str(path), wrong_type).read_all()
    assert info.value.key == "name"
    assert info.value.path == str(path) and info.value.record_offset == offsets[0]
    assert f"{path}@{offsets[0]}" in str(info.value)
    # "tags" is missing from record 1: required without a default, the read fails there.
    required = {**SPEC, "tags": tfrec.io.FixedLenFeature([1], tfrec.int64)}
    with pytest.raises(tfrec.errors.ParseError) as info:
        tfrec.arrow.read(str(path), required, batch_rows=4).read_all()
    assert info.value.key == "tags" and info.value.record_offset == offsets[1]
    # A value with no column form (bytes that are not UTF-8 in a utf8 column) names the column.
    bad = path.parent / "latin1.tfrecord"
    with tfrec.TFRecordWriter(str(bad)) as w:
        w.write(tfrec.Example.from_dict({"name": b"ok"}).SerializeToString())
        w.write(tfrec.Example.from_dict({"name": b"caf\xe9"}).SerializeToString())
    spec = {"name": tfrec.io.FixedLenFeature([], tfrec.string)}
    with pytest.raises(tfrec.errors.InvalidArgumentError) as info:
        tfrec.arrow.read(str(bad), spec, utf8=True).read_all()
    assert info.value.column == "name" and info.value.path == str(bad)
    assert info.value.record_offset == os.path.getsize(bad) - (len(tfrec.Example.from_dict({"name": b"caf\xe9"}).SerializeToString()) + 16)
    assert tfrec.arrow.read(str(bad), spec).read_all().column("name").to_pylist() == [b"ok", b"caf\xe9"]


def test_dataset_to_arrow(data):
    path, n = data
    ds = tfrec.Dataset(str(path)).batch(16).parse(SPEC)
    table = pa.table(ds.to_arrow())
    assert table.equals(tfrec.arrow.read(str(path), SPEC).read_all())
    batches = list(ds.to_arrow())
    assert [b.num_rows for b in batches] == [16, 16, 16, n - 48]
    # Shuffled and parsed on two threads: the same rows in another order.
    shuffled = tfrec.Dataset(str(path)).shuffle(100, seed=5).batch(7).parse(SPEC).threads(2).to_arrow().read_all()
    assert sorted(shuffled.column("id").to_pylist()) == list(range(n))
    assert shuffled.column("id").to_pylist() != list(range(n))
    # Without a parse stage the spec is given here; without either it is an error.
    taken = tfrec.Dataset(str(path)).take(5).to_arrow({"id": tfrec.io.FixedLenFeature([], tfrec.int64)})
    assert pa.table(taken).column("id").to_pylist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError):
        tfrec.Dataset(str(path)).to_arrow()
    # A record that does not fit: the typed error names the record's file and offset.
    wrong = {**SPEC, "name": tfrec.io.FixedLenFeature([], tfrec.int64)}
    with pytest.raises(tfrec.errors.ParseError) as info:
        tfrec.Dataset(str(path)).batch(8).parse(wrong).to_arrow().read_all()
    assert info.value.key == "name" and info.value.path == str(path)


def test_dataset_to_arrow_checks_the_spec_when_made(data):
    path, n = data
    ds = tfrec.Dataset(str(path)).batch(4)
    # A spec TensorFlow refuses fails when the stream is made, not at its first read.
    bad = {"id": tfrec.io.FixedLenFeature([2], tfrec.int64, default_value=[1, 2, 3])}
    with pytest.raises(ValueError):
        ds.to_arrow(bad)
    stream = ds.parse(SPEC).to_arrow()
    assert list(stream.schema) == list(SPEC)
    # Each read runs the pipeline afresh, with the same rows.
    assert stream.read_all().equals(stream.read_all())


def test_sequence_examples_inferred(tmp_path):
    path = tmp_path / "seq.tfrecord"
    with tfrec.TFRecordWriter(str(path)) as w:
        for i in range(6):
            lists = {"frames": [[float(i), float(t)] for t in range(i)], "words": [[b"w"] * (t % 3) for t in range(i)]}
            if i == 0:
                lists = {}
            seq = tfrec.SequenceExample.from_dict({"context": {"id": i, "lang": b"en"}, "feature_lists": lists})
            w.write(seq.SerializeToString())
    spec = tfrec.arrow.infer_spec(str(path))
    assert spec["context_features"]["id"] == {"type": "FixedLenFeature", "shape": [], "dtype": "int64",
                                              "default_value": None}
    frames = spec["sequence_features"]["frames"]
    assert frames["type"] == "FixedLenSequenceFeature" and frames["shape"] == [2] and frames["allow_missing"]
    assert spec["sequence_features"]["words"]["type"] == "VarLenFeature"
    table = tfrec.arrow.read(str(path), utf8=True).read_all()
    assert table.column("id").to_pylist() == list(range(6))
    assert table.column("lang").to_pylist() == ["en"] * 6
    assert table.column("frames").to_pylist()[0] is None
    assert table.column("frames").to_pylist()[3] == [[3.0, 0.0], [3.0, 1.0], [3.0, 2.0]]
    assert table.column("words").to_pylist()[4] == [[], ["w"], ["w", "w"], []]


def test_columns_in_the_specs_order(data):
    path, n = data
    # SPEC names id, score, name, tags: not name order.
    assert tfrec.arrow.read(str(path), SPEC).read_all().column_names == list(SPEC)
    backwards = dict(reversed(list(SPEC.items())))
    stream = tfrec.arrow.read(str(path), backwards)
    assert pa.table(stream).column_names == list(backwards)
    assert stream.arrow_schema.names == list(backwards)
    assert all(b.schema.names == list(backwards) for b in stream)
    assert stream.to_reader().schema.names == list(backwards)
    # The JSON form, as a dict and as text, keeps its key order too.
    as_json = stream.schema
    assert list(as_json) == list(backwards)
    assert tfrec.arrow.read(str(path), json.dumps(as_json)).read_all().column_names == list(backwards)
    # A projection gives its columns in the order asked for, as pyarrow's readers do.
    assert tfrec.arrow.read(str(path), SPEC, columns=["tags", "id"]).read_all().column_names == ["tags", "id"]
    # The values are the same whatever the order.
    assert tfrec.arrow.read(str(path), backwards).read_all().select(list(SPEC)).equals(
        tfrec.arrow.read(str(path), SPEC).read_all())


def test_sequence_columns_in_the_specs_order(tmp_path):
    path = tmp_path / "seq.tfrecord"
    with tfrec.TFRecordWriter(str(path)) as w:
        for i in range(3):
            lists = {"frames": [[float(i)] for _ in range(i)], "words": [[b"w"] * i]}
            w.write(tfrec.SequenceExample.from_dict(
                {"context": {"id": i, "lang": b"en"}, "feature_lists": lists}).SerializeToString())
    spec = {
        "sequence_features": {"words": tfrec.io.VarLenFeature(tfrec.string),
                              "frames": tfrec.io.FixedLenSequenceFeature([1], tfrec.float32, allow_missing=True)},
        "context_features": {"lang": tfrec.io.FixedLenFeature([], tfrec.string),
                             "id": tfrec.io.FixedLenFeature([], tfrec.int64)},
    }
    table = tfrec.arrow.read(str(path), spec).read_all()
    # Context columns first, each part in its own order.
    assert table.column_names == ["lang", "id", "words", "frames"]
    assert table.column("id").to_pylist() == [0, 1, 2]
    projected = tfrec.arrow.read(str(path), spec, columns=["frames", "id"]).read_all()
    assert projected.column_names == ["id", "frames"]


def test_dataset_to_arrow_columns_in_the_specs_order(data):
    path, _ = data
    backwards = dict(reversed(list(SPEC.items())))
    table = pa.table(tfrec.Dataset(str(path)).batch(16).parse(backwards).to_arrow())
    assert table.column_names == list(backwards)


def test_polars_dataframe_from_a_stream(data):
    pl = pytest.importorskip("polars")
    path, n = data
    stream = tfrec.arrow.read(str(path), SPEC)
    # Polars (2.1) makes any Arrow stream that is not pyarrow's a Series of structs: the
    # docstrings name the calls that give a DataFrame instead.
    series = pl.from_arrow(stream)
    if isinstance(series, pl.Series):
        assert series.dtype == pl.Struct and series.len() == n
    for df in [pl.DataFrame(stream), tfrec.polars.read(str(path), SPEC), pl.from_arrow(pa.table(stream))]:
        assert isinstance(df, pl.DataFrame)
        assert df.columns == list(SPEC)
        assert df["id"].to_list() == list(range(n))
    assert tfrec.polars.read(str(path), SPEC, columns=["name", "id"], n_rows=3).columns == ["name", "id"]
    assert tfrec.polars.read(str(path), SPEC, n_rows=3).height == 3


@pytest.mark.parametrize("kind", ["data", "length_crc", "gzip"])
def test_damage_names_file_and_offset_whoever_consumes_the_stream(tmp_path, kind):
    """Item 8 of issue 22: in raise mode, damage reaches every consumer (pyarrow's table and
    reader, Polars, tfrec's own iteration, byte ranges) with a text that names the file and the
    offset, and tfrec's own class where tfrec raises it."""
    path = tmp_path / "data.tfrecord"
    make_records(path)
    data = bytearray(path.read_bytes())
    offset = 0
    for _ in range(20):
        offset += int.from_bytes(data[offset : offset + 8], "little") + 16
    data[offset + (9 if kind == "length_crc" else 14)] ^= 0xFF
    if kind == "gzip":
        import gzip

        path = tmp_path / "data.tfrecord.gz"
        path.write_bytes(gzip.compress(bytes(data)))
    else:
        path.write_bytes(bytes(data))
    consumers = {
        "pyarrow table": lambda s: pa.table(s),
        "pyarrow reader": lambda s: pa.RecordBatchReader.from_stream(s).read_all(),
        "tfrec read_all": lambda s: s.read_all(),
    }
    try:
        import polars as pl

        consumers["polars"] = lambda s: pl.DataFrame(s)
    except ImportError:
        pass
    for name, consume in consumers.items():
        with pytest.raises(Exception) as info:
            consume(tfrec.arrow.read(str(path), SPEC, batch_rows=8))
        text = str(info.value)
        assert str(path) in text and f"byte {offset}" in text, (name, text)
    if kind != "gzip":
        with pytest.raises(tfrec.errors.DataLossError) as info:
            tfrec.arrow.read(str(path), SPEC, batch_rows=8, byte_range=(0, len(data))).read_all()
        assert info.value.path == str(path) and info.value.offset == offset

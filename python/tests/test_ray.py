"""tfrec.ray on a real local Ray cluster (2 CPUs): read a multi-file data set with
read_tfrecords (per file, and per byte range with and without an index), count and sum,
write it back with write_tfrecords and read that with tfrec; Ray's own read_tfrecords (through
TensorFlow) gives the same rows for the features both support; a damaged file fails the job
naming file and offset, or is skipped and counted."""

import gzip
import json
import os
import shutil
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import ray
from conftest import tfrec_binary
from ray.data.aggregate import Count, Sum

import tfrec
import tfrec.arrow
import tfrec.ray
from tfrec import _tfrec, io

FILES = 4
ROWS = 600


pytestmark = pytest.mark.usefixtures("ray_cluster")


def spec():
    return {
        "id": io.FixedLenFeature([], tfrec.int64),
        "x": io.FixedLenFeature([], tfrec.float32),
        "tags": io.VarLenFeature(tfrec.int64),
        "name": io.FixedLenFeature([], tfrec.string),
    }


def write_dataset(directory, files=FILES, rows=ROWS, seed=3):
    """``files`` plain TFRecord files; returns their paths and the rows as Python lists."""
    rng = np.random.default_rng(seed)
    os.makedirs(directory, exist_ok=True)
    paths, truth = [], {"id": [], "x": [], "tags": [], "name": []}
    for f in range(files):
        path = os.path.join(directory, f"data-{f:02d}.tfrecord")
        with tfrec.TFRecordWriter(path) as w:
            for r in range(rows):
                i = f * rows + r
                x = float(np.float32(rng.random() * 10))
                # Never one tag: Ray's own reader turns one-value lists into scalars, which
                # then clash with the other rows' lists (its limitation, not the data's).
                tags = rng.integers(0, 50, size=int(rng.choice([0, 2, 3]))).tolist()
                name = f"row{i}".encode()
                w.write(
                    _tfrec.encode_example(
                        [("id", "int64_list", [i]), ("x", "float_list", [x]), ("tags", "int64_list", tags), ("name", "bytes_list", [name])]
                    )
                )
                for k, v in zip(("id", "x", "tags", "name"), (i, x, tags, name)):
                    truth[k].append(v)
        paths.append(path)
    return paths, truth


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_dataset(str(tmp_path_factory.mktemp("ray") / "in"))


def sorted_table(table):
    return table.sort_by("id")


def table_of(ds):
    """The dataset's rows as one Arrow table, sorted by id."""
    tables = [t.select(sorted(t.column_names)) for t in ray.get(ds.to_arrow_refs())]
    return sorted_table(pa.concat_tables(tables, promote_options="permissive"))


def test_read_count_sum(dataset):
    paths, truth = dataset
    ds = tfrec.ray.read_tfrecords(paths, spec()).materialize()
    assert ds.count() == FILES * ROWS
    sums = ds.aggregate(Sum("id"), Sum("x"), Count())
    assert sums["sum(id)"] == sum(truth["id"])
    assert sums["sum(x)"] == pytest.approx(sum(truth["x"]), rel=1e-5)
    assert sums["count()"] == FILES * ROWS
    table = table_of(ds)
    assert table.column("id").to_pylist() == truth["id"]
    assert table.column("x").to_pylist() == truth["x"]
    assert table.column("tags").to_pylist() == truth["tags"]
    assert table.column("name").to_pylist() == truth["name"]
    tags_type = table.schema.field("tags").type
    assert pa.types.is_list(tags_type) and tags_type.value_type == pa.int64()


def test_one_task_per_file_and_metadata(dataset, tmp_path):
    paths, _ = dataset
    source = tfrec.ray.TFRecordDatasource(paths, spec())
    tasks = source.get_read_tasks(16)
    assert len(tasks) == FILES
    assert [t.metadata.input_files for t in tasks] == [(p,) for p in paths]
    assert all(t.metadata.size_bytes == os.path.getsize(p) for t, p in zip(tasks, paths))
    assert all(t.metadata.num_rows is None for t in tasks)  # no index: unknown until read
    # Fewer tasks than files when asked for fewer.
    assert len(source.get_read_tasks(2)) == 2


def index_file(path):
    """Writes ``path.idx`` (``offset length`` per record), as ``tfrec index`` does."""
    with open(path, "rb") as f:
        data = f.read()
    lines, off = [], 0
    while off < len(data):
        n = int.from_bytes(data[off : off + 8], "little")
        lines.append(f"{off} {n + 16}\n")
        off += n + 16
    with open(path + ".idx", "w") as f:
        f.writelines(lines)


@pytest.mark.parametrize("indexed", [False, True], ids=["no-index", "index"])
def test_byte_ranges(dataset, tmp_path, indexed):
    """A file split into byte ranges (small split_bytes) reads back every record once; with an
    index the ranges start at records and their row counts are known up front."""
    paths, truth = dataset
    copies = []
    for p in paths[:2]:
        q = str(tmp_path / os.path.basename(p))
        shutil.copy(p, q)
        if indexed:
            index_file(q)
        copies.append(q)
    split = os.path.getsize(copies[0]) // 5
    source = tfrec.ray.TFRecordDatasource(copies, spec(), split_bytes=split)
    tasks = source.get_read_tasks(100)
    assert len(tasks) >= 10
    if indexed:
        assert sum(t.metadata.num_rows for t in tasks) == 2 * ROWS
    ds = tfrec.ray.read_tfrecords(copies, spec(), split_bytes=split, override_num_blocks=100)
    table = table_of(ds)
    assert table.column("id").to_pylist() == truth["id"][: 2 * ROWS]
    assert table.column("tags").to_pylist() == truth["tags"][: 2 * ROWS]


def test_projection_pushdown(dataset):
    paths, truth = dataset
    ds = tfrec.ray.read_tfrecords(paths, spec()).select_columns(["id", "name"])
    table = table_of(ds)
    assert table.column_names == ["id", "name"]
    assert table.column("name").to_pylist() == truth["name"]


def test_write_back_and_read_with_tfrec(dataset, tmp_path):
    paths, truth = dataset
    ds = tfrec.ray.read_tfrecords(paths, spec()).filter(lambda row: row["id"] % 3 != 0)
    out = tmp_path / "out"
    sink = tfrec.ray.write_tfrecords(ds, str(out))
    files = sorted(os.listdir(out))
    assert files and all(f.startswith("part-") and f.endswith(".tfrecord") for f in files)
    assert sorted(sink.files) == [str(out / f) for f in files]
    keep = [i for i, v in enumerate(truth["id"]) if v % 3 != 0]
    assert sink.records_written == len(keep)
    back = sorted_table(tfrec.arrow.read([str(out / f) for f in files], spec()).read_all())
    assert back.column("id").to_pylist() == [truth["id"][i] for i in keep]
    assert back.column("x").to_pylist() == [truth["x"][i] for i in keep]
    assert back.column("tags").to_pylist() == [truth["tags"][i] for i in keep]
    assert back.column("name").to_pylist() == [truth["name"][i] for i in keep]


def test_same_rows_as_rays_tensorflow_reader(dataset):
    """ray.data.read_tfrecords (TensorFlow's parser) on the same files: the same values for the
    scalar features (Ray turns one-value lists into scalars, so the lists are compared as
    lists of values)."""
    paths, _ = dataset
    ours = table_of(tfrec.ray.read_tfrecords(paths, spec()))
    theirs = table_of(ray.data.read_tfrecords(paths))
    assert theirs.num_rows == ours.num_rows
    for name in ("id", "name"):
        assert theirs.column(name).to_pylist() == ours.column(name).to_pylist(), name
    np.testing.assert_array_equal(
        np.asarray(theirs.column("x").to_pylist(), dtype=np.float32), ours.column("x").to_numpy()
    )

    def as_list(v):
        return [] if v is None else v if isinstance(v, list) else [v]

    assert [as_list(v) for v in theirs.column("tags").to_pylist()] == ours.column("tags").to_pylist()


def damaged_copy(paths, tmp_path):
    """A copy of the data set whose second file has one byte flipped inside record 100's data."""
    out = []
    for p in paths:
        q = str(tmp_path / os.path.basename(p))
        shutil.copy(p, q)
        out.append(q)
    with open(out[1], "rb") as f:
        data = bytearray(f.read())
    off = 0
    for _ in range(100):
        off += int.from_bytes(data[off : off + 8], "little") + 16
    data[off + 12 + 3] ^= 0xFF
    with open(out[1], "wb") as f:
        f.write(data)
    return out, off


def test_damaged_file_fails_the_job_naming_file_and_offset(dataset, tmp_path):
    paths, _ = dataset
    damaged, offset = damaged_copy(paths, tmp_path)
    ds = tfrec.ray.read_tfrecords(damaged, spec())
    with pytest.raises(Exception) as info:
        ds.materialize()
    text = str(info.value)
    assert damaged[1] in text, text
    assert str(offset) in text, text
    assert "TFRecordReadError" in text or isinstance(info.value, tfrec.ray.TFRecordReadError), text


def test_damaged_file_skipped_and_counted(dataset, tmp_path):
    paths, truth = dataset
    damaged, _ = damaged_copy(paths, tmp_path)
    ds = tfrec.ray.read_tfrecords(damaged, spec(), on_corruption="skip")
    table = table_of(ds)
    ids = set(table.column("id").to_pylist())
    # The intact files whole; the damaged one up to its damage, and its records after it.
    assert all(i in ids for i in truth["id"][:ROWS] + truth["id"][2 * ROWS :])
    assert all(i in ids for i in truth["id"][ROWS : ROWS + 100])
    assert ROWS + 100 not in ids
    assert len(ids) == table.num_rows
    report = ds.tfrec_source.skipped()
    assert report["skipped_regions"] >= 1
    assert report["by_file"] == {damaged[1]: report["skipped_regions"]}
    assert any(damaged[1] in p for p in report["problems"])
    assert int(pc.sum(table.column("id")).as_py()) <= sum(truth["id"])


def test_ray_dataset_and_cli_see_the_same_files(tmp_path):
    """Issue 56: one directory rule for every door. Nested directories are walked; names that
    start with ``_`` (Spark's ``_temporary/``, ``_SUCCESS``) or ``.`` are left out, and so are
    index files; a GZIP file under a plain name is read; a file named explicitly is read
    whatever its name."""
    root = tmp_path / "out"
    counts = {
        "part-0.tfrecord": 30,
        "sub/deeper/part-1.tfrecord": 20,
        "gz-under-plain-name.tfrecord": 10,
        "_temporary/0/part-0.tfrecord": 7,
        ".staging/part-9.tfrecord": 5,
        "sub/_attempt.tfrecord": 3,
    }
    ids = 0
    for name, n in counts.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with tfrec.TFRecordWriter(str(path)) as w:
            for _ in range(n):
                w.write(_tfrec.encode_example([("id", "int64_list", [ids])]))
                ids += 1
    plain = root / "gz-under-plain-name.tfrecord"
    plain.write_bytes(gzip.compress(plain.read_bytes()))
    (root / "_SUCCESS").write_bytes(b"")
    subprocess.run([tfrec_binary(), "index", str(root / "part-0.tfrecord")], check=True, capture_output=True)
    assert (root / "part-0.tfrecord.idx").exists()
    expected = sum(n for name, n in counts.items() if not any(p.startswith(("_", ".")) for p in name.split("/")))

    id_spec = {"id": io.FixedLenFeature([], tfrec.int64)}
    files = tfrec.ray.TFRecordDatasource(str(root), id_spec)._files
    assert sorted(os.path.relpath(f, root) for f in files) == sorted(
        ["part-0.tfrecord", "sub/deeper/part-1.tfrecord", "gz-under-plain-name.tfrecord"]
    )
    assert tfrec.ray.read_tfrecords(str(root), id_spec).count() == expected
    assert sum(1 for _ in tfrec.data.Dataset(str(root))) == expected
    out = subprocess.run([tfrec_binary(), "count", str(root), "--json"], check=True, capture_output=True, text=True)
    report = json.loads(out.stdout)
    assert report["total"] == expected
    assert sorted(f["path"] for f in report["files"]) == sorted(files)
    # Named explicitly, a file under `_` is read.
    named = str(root / "_temporary" / "0" / "part-0.tfrecord")
    assert tfrec.ray.read_tfrecords(named, id_spec).count() == counts["_temporary/0/part-0.tfrecord"]

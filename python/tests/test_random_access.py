"""Random access (``tfrec.RandomAccessDataset``, ``tfrec.torch.MapDataset``): every record by
position equals sequential reading, with every kind of index (none, ``tfrec index``'s, the
one built on first use, a DALI-style ``offset length`` file written here), parsed forms equal
``tfrec.io``'s, compressed and damaged files are clear errors, and the data set pickles for
``spawn`` workers and serves Grain."""

import multiprocessing
import os
import pathlib
import pickle
import random
import struct
import subprocess
import sys
import types

import numpy as np
import pytest

import tfrec

from conftest import tfrec_binary

SEED = 20261125
SPEC = {
    "id": tfrec.io.FixedLenFeature([], tfrec.int64),
    "x": tfrec.io.FixedLenFeature([2], tfrec.float32),
    "payload": tfrec.io.FixedLenFeature([], tfrec.string),
}
SPARSE_SPEC = {"id": tfrec.io.FixedLenFeature([], tfrec.int64), "tags": tfrec.io.VarLenFeature(tfrec.int64)}


def make_files(tmp_path, files=3, seed=SEED):
    """``files`` plain files of Examples with payloads of random sizes (some files empty)."""
    rng = random.Random(seed)
    paths, n = [], 0
    for k in range(files):
        path = tmp_path / f"part-{k}.tfrecord"
        count = 0 if k == 1 else rng.randrange(20, 80)
        with tfrec.TFRecordWriter(str(path)) as w:
            for _ in range(count):
                size = rng.choice([0, 1, 50, 300, 5000, rng.randrange(20000)])
                ex = tfrec.Example.from_dict(
                    {
                        "id": n,
                        "x": [rng.random(), float(n)],
                        "payload": rng.randbytes(size),
                        "tags": list(range(n % 4)),
                    }
                )
                w.write(ex.SerializeToString())
                n += 1
        paths.append(str(path))
    return paths


def sequential(paths):
    return list(tfrec.TFRecordDataset(paths))


def dali_index(path, index_path):
    """Writes ``offset length`` lines by walking the framing, as DALI's tfrecord2idx does."""
    data = pathlib.Path(path).read_bytes()
    lines, pos = [], 0
    while pos < len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        lines.append(f"{pos} {length + 16}\n")
        pos += length + 16
    pathlib.Path(index_path).write_text("".join(lines))




@pytest.mark.parametrize("index", ["none", "built", "tfrec-index", "dali"])
def test_every_record_by_position_equals_sequential_reading(tmp_path, index):
    paths = make_files(tmp_path)
    expected = sequential(paths)
    index_paths = None
    if index == "built":
        tfrec.RandomAccessDataset(paths)  # builds and saves FILE.idx, loaded below
        assert all(os.path.exists(p + ".idx") for p in paths)
    elif index == "tfrec-index":
        binary = tfrec_binary()
        if binary is None:
            pytest.skip("the tfrec binary is not built (cargo build -p tfrec-cli)")
        subprocess.run([binary, "index", *paths], check=True, capture_output=True)
    elif index == "dali":
        index_paths = [tmp_path / f"dali-{k}.index" for k in range(len(paths))]
        for p, ip in zip(paths, index_paths):
            dali_index(p, ip)
        index_paths[1] = None  # the empty file: FILE.idx, built
        assert not os.path.exists(paths[1] + ".idx")
    ds = tfrec.RandomAccessDataset(paths, index_paths=index_paths)
    assert len(ds) == len(expected) > 50
    for i in range(len(ds)):
        assert ds[i] == expected[i], i
    order = list(range(len(ds)))
    random.Random(SEED).shuffle(order)
    assert [ds[i] for i in order] == [expected[i] for i in order]
    assert ds.__getitems__(order) == [expected[i] for i in order]
    if index == "none":
        assert ds._files.index_paths == [p + ".idx" for p in paths]
    if index == "dali":
        assert ds._files.index_paths == [str(index_paths[0]), paths[1] + ".idx", str(index_paths[2])]
        assert [os.path.exists(p + ".idx") for p in paths] == [False, True, False]


def test_indexing_forms(tmp_path):
    paths = make_files(tmp_path)
    expected = sequential(paths)
    ds = tfrec.RandomAccessDataset(tmp_path / "part-*.tfrecord")  # a glob, a PathLike
    n = len(expected)
    assert len(ds) == n and ds.filenames == paths
    assert ds[-1] == expected[-1] and ds[-n] == expected[0]
    assert ds[np.int64(5)] == expected[5] and ds[np.array(7)] == expected[7]
    assert ds[3:20:4] == expected[3:20:4]
    assert ds[::-1] == expected[::-1]
    assert ds[n - 5 :] == expected[n - 5 :] and ds[5:5] == []
    assert ds[[0, -1, 2, 2]] == [expected[0], expected[-1], expected[2], expected[2]]
    assert ds[np.array([4, 1], dtype=np.int32)] == [expected[4], expected[1]]
    assert ds[(1, 2)] == expected[1:3]
    assert ds.get_batch(range(3)) == expected[:3]
    assert list(ds) == expected
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            ds[bad]
    with pytest.raises(IndexError):
        ds[[0, n]]
    with pytest.raises(TypeError):
        ds["0"]
    assert "records=" in repr(ds) and "3 files" in repr(ds)


def test_parsed_items_equal_tfrec_io(tmp_path):
    paths = make_files(tmp_path)
    expected = sequential(paths)
    ds = tfrec.RandomAccessDataset(paths, features=SPEC)
    for i in [0, 7, len(ds) - 1, -2]:
        want = tfrec.io.parse_single_example(expected[i], SPEC)
        got = ds[i]
        assert got.keys() == want.keys()
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
    idx = [9, 0, 33, 9]
    batch = ds.get_batch(idx)
    want = tfrec.io.parse_example([expected[i] for i in idx], SPEC)
    for k in want:
        np.testing.assert_array_equal(batch[k], want[k])
    assert [int(item["id"]) for item in ds.__getitems__(idx)] == idx
    sparse = tfrec.RandomAccessDataset(paths, features=SPARSE_SPEC)
    got = sparse.get_batch([5, 6, 7])
    want = tfrec.io.parse_example(expected[5:8], SPARSE_SPEC)
    np.testing.assert_array_equal(got["tags"].values, want["tags"].values)
    np.testing.assert_array_equal(got["tags"].indices, want["tags"].indices)


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_a_compressed_file_reads_through_its_seek_index(tmp_path, compression):
    rng = random.Random(compression)
    records = [bytes(rng.getrandbits(8) for _ in range(rng.choice([10, 500, 30_000]))) for _ in range(60)]
    path = tmp_path / "data.tfrecord"
    with tfrec.TFRecordWriter(str(path), compression=compression) as w:
        for r in records:
            w.write(r)
    ds = tfrec.RandomAccessDataset(str(path))
    assert len(ds) == len(records)
    order = list(range(len(records)))
    rng.shuffle(order)
    assert [ds[i] for i in order] == [records[i] for i in order]
    assert ds[-1] == records[-1]
    assert os.path.exists(str(path) + ".zidx")
    assert not os.path.exists(str(path) + ".idx")
    again = tfrec.RandomAccessDataset(str(path))
    assert [again[i] for i in order[:10]] == [records[i] for i in order[:10]]
    with pytest.raises(IndexError):
        ds[len(records)]
    # The index `tfrec index` writes, with dense checkpoints, reads the same.
    os.remove(str(path) + ".zidx")
    assert tfrec._tfrec.cli_main(["tfrec", "index", "--spacing", "40000", str(path)]) == 0
    by_cli = tfrec.RandomAccessDataset(str(path))
    assert [by_cli[i] for i in order] == [records[i] for i in order]
    # A stale index (the file rewritten since) is refused, naming the index.
    with tfrec.TFRecordWriter(str(path), compression=compression) as w:
        for r in records[1:]:
            w.write(r)
    with pytest.raises(tfrec.DataLossError, match="stale seek index"):
        tfrec.RandomAccessDataset(str(path))


def test_damage_and_stale_indexes_are_errors(tmp_path):
    paths = make_files(tmp_path, files=1)
    expected = sequential(paths)
    ds = tfrec.RandomAccessDataset(paths)
    offsets = [int(line.split()[0]) for line in pathlib.Path(paths[0] + ".idx").read_text().splitlines()]
    data = bytearray(pathlib.Path(paths[0]).read_bytes())
    target = next(i for i, r in enumerate(expected) if len(r) > 100)
    data[offsets[target] + 12 + 50] ^= 0xFF
    pathlib.Path(paths[0]).write_bytes(bytes(data))
    assert ds[target + 1] == expected[target + 1]
    with pytest.raises(tfrec.DataLossError) as e:
        ds[target]
    assert (e.value.offset, e.value.record_index, e.value.path) == (offsets[target], target, paths[0])
    assert f"at byte {offsets[target]}" in str(e.value)
    # An index of a longer file: refused when opening, naming the index.
    stale = tmp_path / "stale.idx"
    stale.write_text(f"0 {len(data) + 100}\n")
    with pytest.raises(tfrec.DataLossError, match="stale index") as e:
        tfrec.RandomAccessDataset(paths, index_paths=[str(stale)])
    assert e.value.path == str(stale)
    with pytest.raises(ValueError, match="index_paths"):
        tfrec.RandomAccessDataset(paths, index_paths=[str(stale), str(stale)])


def test_pickles_as_its_description(tmp_path):
    paths = make_files(tmp_path)
    ds = tfrec.RandomAccessDataset(paths, features=SPEC)
    clone = pickle.loads(pickle.dumps(ds))
    assert clone._files is None, "the files are opened where the clone is used"
    assert len(clone) == len(ds) and repr(clone) == repr(ds)
    for i in (0, -1):
        assert int(clone[i]["id"]) == int(ds[i]["id"])


def _read_part(args):
    ds, indices = args
    return [(i, ds[i]) for i in indices]


def test_spawn_pool_reads_every_record_once(tmp_path):
    paths = make_files(tmp_path)
    expected = sequential(paths)
    ds = tfrec.RandomAccessDataset(paths)
    order = list(range(len(ds)))
    random.Random(SEED).shuffle(order)
    halves = [(ds, order[0::2]), (ds, order[1::2])]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        parts = pool.map(_read_part, halves)
    got = sorted(item for part in parts for item in part)
    assert [i for i, _ in got] == list(range(len(expected)))
    assert [r for _, r in got] == expected


def test_grain_reads_it_as_a_random_access_data_source(tmp_path):
    grain = pytest.importorskip("grain")
    paths = make_files(tmp_path)
    expected = sequential(paths)
    ds = tfrec.RandomAccessDataset(paths, features=SPEC)
    m = grain.MapDataset.source(ds).shuffle(seed=7).map(lambda d: int(d["id"]))
    ids = list(m)
    assert sorted(ids) == list(range(len(expected))) and ids != sorted(ids)
    import grain.python as gp

    sampler = gp.IndexSampler(
        num_records=len(ds), num_epochs=1, shard_options=gp.NoSharding(), shuffle=True, seed=1
    )
    loader = gp.DataLoader(data_source=tfrec.RandomAccessDataset(paths), sampler=sampler, worker_count=0)
    assert sorted(loader) == sorted(expected)


def fake_torch(monkeypatch):
    """A stand-in for the parts of torch ``MapDataset`` uses."""
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch.utils")
    data = types.ModuleType("torch.utils.data")

    class Dataset:
        pass

    class Tensor:
        def __init__(self, a):
            self.a = a

        def __getitem__(self, k):
            return Tensor(self.a[k])

    data.Dataset = Dataset
    torch.utils, utils.data = utils, data
    torch.from_numpy = Tensor
    for name, mod in {"torch": torch, "torch.utils": utils, "torch.utils.data": data}.items():
        monkeypatch.setitem(sys.modules, name, mod)
    import tfrec.torch as adapter

    monkeypatch.setattr(adapter, "_CLASSES", {})
    return adapter, Tensor


def test_torch_map_dataset(tmp_path, monkeypatch):
    adapter, Tensor = fake_torch(monkeypatch)
    paths = make_files(tmp_path)
    expected = sequential(paths)
    ds = adapter.MapDataset(paths, features=SPEC)
    assert isinstance(ds, sys.modules["torch"].utils.data.Dataset)
    assert len(ds) == len(expected)
    assert isinstance(ds[3]["x"], Tensor) and int(ds[3]["id"].a) == 3
    items = ds.__getitems__([5, 2, 5])
    assert [int(item["id"].a) for item in items] == [5, 2, 5]
    assert items[1]["payload"] == tfrec.io.parse_single_example(expected[2], SPEC)["payload"]
    batch = ds[[4, 1]]
    np.testing.assert_array_equal(batch["id"].a, [4, 1])
    raw = adapter.MapDataset(tfrec.RandomAccessDataset(paths))
    assert raw.__getitems__([0, 1]) == expected[:2] and raw[-1] == expected[-1]
    sparse = adapter.MapDataset(paths, features=SPARSE_SPEC)
    assert [int(item["id"].a) for item in sparse.__getitems__([6, 7])] == [6, 7]
    clone = pickle.loads(pickle.dumps(ds))
    assert type(clone) is adapter.MapDataset and int(clone[9]["id"].a) == 9

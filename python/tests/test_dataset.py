"""``tfrec.Dataset`` (the Rust pipeline from Python), the PyTorch adapter with a stand-in
``torch`` module, zero-copy outputs, the GIL released while Rust works, and the message
classes' dict and JSON forms."""

import sys
import threading
import time
import types

import numpy as np
import pytest

import tfrec
from tfrec import io

SPEC = {
    "id": io.FixedLenFeature([], tfrec.int64),
    "x": io.FixedLenFeature([3], tfrec.float32),
    "name": io.FixedLenFeature([], tfrec.string),
    "tags": io.VarLenFeature(tfrec.int64),
}


def make_files(tmp_path, files=4, per_file=25, compression=None):
    paths = []
    for f in range(files):
        suffix = ".tfrecord.gz" if compression == "GZIP" else ".tfrecord"
        path = tmp_path / f"part-{f}{suffix}"
        with tfrec.TFRecordWriter(str(path), compression=compression) as w:
            for i in range(per_file):
                n = f * per_file + i
                w.write(
                    tfrec.Example.from_dict(
                        {"id": n, "x": [n, n + 0.5, -n], "name": f"r{n}", "tags": list(range(n % 3))}
                    )
                )
        paths.append(str(path))
    return paths


def ids(batches):
    return [int(i) for b in batches for i in b["id"]]


def test_batches_parse_and_keep_order(tmp_path):
    paths = make_files(tmp_path)
    batches = list(tfrec.Dataset(paths).batch(10).parse(SPEC))
    assert ids(batches) == list(range(100))
    b = batches[0]
    assert b["x"].shape == (10, 3) and b["x"].dtype == np.float32
    assert b["name"].dtype == object and b["name"][3] == b"r3"
    assert isinstance(b["tags"], io.SparseTensor) and b["tags"].dense_shape.tolist() == [10, 2]
    # The same as parse_example on the same records.
    records = list(tfrec.TFRecordDataset(paths))[:10]
    direct = io.parse_example(records, SPEC)
    np.testing.assert_array_equal(direct["x"], b["x"])


def test_glob_and_compression(tmp_path):
    make_files(tmp_path, compression="GZIP")
    assert len(list(tfrec.Dataset(str(tmp_path / "*.tfrecord.gz")))) == 100
    assert len(list(tfrec.TFRecordDataset(str(tmp_path / "part-*")))) == 100


def test_unbatched_records_and_unbatched_parse(tmp_path):
    paths = make_files(tmp_path, files=1, per_file=7)
    records = list(tfrec.Dataset(paths))
    assert records == list(tfrec.TFRecordDataset(paths))
    parsed = list(tfrec.Dataset(paths).parse(SPEC))
    assert len(parsed) == 7 and parsed[2]["id"].shape == () and parsed[2]["x"].shape == (3,)


def test_skip_take_repeat_and_remainder(tmp_path):
    paths = make_files(tmp_path)
    assert ids(tfrec.Dataset(paths).skip(5).take(12).batch(5).parse(SPEC)) == list(range(5, 17))
    assert len(list(tfrec.Dataset(paths).repeat(3))) == 300
    sizes = [len(b) for b in tfrec.Dataset(paths).batch(30)]
    assert sizes == [30, 30, 30, 10]
    sizes = [len(b) for b in tfrec.Dataset(paths).batch(30, drop_remainder=True)]
    assert sizes == [30, 30, 30]
    forever = iter(tfrec.Dataset(paths).repeat())
    assert len([next(forever) for _ in range(250)]) == 250


def test_shards_cover_the_data_once(tmp_path):
    paths = make_files(tmp_path)
    for by in ("file", "record"):
        seen = []
        for i in range(3):
            seen += ids(tfrec.Dataset(paths).shard(3, i, by=by).batch(7).parse(SPEC))
        assert sorted(seen) == list(range(100)), by
    with pytest.raises(ValueError):
        tfrec.Dataset(paths).shard(2, 2)
    with pytest.raises(ValueError):
        tfrec.Dataset(paths).shard(0, 0)


def test_shard_is_by_record_unless_by_file_is_asked(tmp_path):
    paths = make_files(tmp_path, files=4, per_file=5)
    # tf.data's meaning: every 8th record, so four files still feed eight shards.
    assert ids(tfrec.Dataset(paths).shard(8, 4).batch(10).parse(SPEC)) == [4, 12]
    with pytest.raises(ValueError, match="no file"):
        tfrec.Dataset(paths).shard(8, 4, by="file")
    assert ids(tfrec.Dataset(paths).shard(2, 1, by="file").batch(10).parse(SPEC)) == list(range(5, 10)) + list(
        range(15, 20)
    )
    with pytest.raises(ValueError, match="before"):
        tfrec.Dataset(paths).shuffle(10, seed=1).shard(2, 0, by="file")
    with pytest.raises(ValueError, match="before"):
        tfrec.Dataset(paths).take(3).interleave(2)


def test_stages_apply_in_call_order(tmp_path):
    paths = make_files(tmp_path, files=1, per_file=100)
    take_first = ids(tfrec.Dataset(paths).take(5).shuffle(1000, seed=3).batch(100).parse(SPEC))
    assert sorted(take_first) == [0, 1, 2, 3, 4] and take_first != [0, 1, 2, 3, 4]
    shuffle_first = ids(tfrec.Dataset(paths).shuffle(1000, seed=3).take(5).batch(100).parse(SPEC))
    assert len(shuffle_first) == 5 and sorted(shuffle_first) != [0, 1, 2, 3, 4]
    # shuffle then shard with one seed: the shards split one shuffled order.
    whole = ids(tfrec.Dataset(paths).shuffle(30, seed=9).batch(100).parse(SPEC))
    parts = [ids(tfrec.Dataset(paths).shuffle(30, seed=9).shard(3, i).batch(100).parse(SPEC)) for i in range(3)]
    assert [whole[i::3] for i in range(3)] == parts
    # shard then shuffle: each shard's own records, shuffled.
    own = ids(tfrec.Dataset(paths).shard(3, 1).shuffle(30, seed=9).batch(100).parse(SPEC))
    assert sorted(own) == list(range(1, 100, 3)) and own != list(range(1, 100, 3))
    # take then repeat repeats the first records; repeat then take stops early.
    assert ids(tfrec.Dataset(paths).take(2).repeat(3).batch(10).parse(SPEC)) == [0, 1] * 3
    assert ids(tfrec.Dataset(paths).repeat(3).take(2).batch(10).parse(SPEC)) == [0, 1]
    assert len(list(tfrec.Dataset(paths).repeat(0))) == 0


def test_shuffle_is_seeded_and_a_permutation(tmp_path):
    paths = make_files(tmp_path)
    a = ids(tfrec.Dataset(paths).shuffle(50, seed=7).batch(10).parse(SPEC))
    b = ids(tfrec.Dataset(paths).shuffle(50, seed=7).batch(10).parse(SPEC))
    c = ids(tfrec.Dataset(paths).shuffle(50, seed=8).batch(10).parse(SPEC))
    assert a == b and a != c and sorted(a) == list(range(100)) and a != list(range(100))


def test_reshuffle_each_iteration(tmp_path):
    paths = make_files(tmp_path, files=1, per_file=40)
    for reshuffle in (True, False):
        got = ids(
            tfrec.Dataset(paths)
            .shuffle(40, seed=2, reshuffle_each_iteration=reshuffle)
            .repeat(2)
            .batch(80)
            .parse(SPEC)
        )
        assert sorted(got[:40]) == sorted(got[40:]) == list(range(40))
        assert (got[:40] != got[40:]) == reshuffle


def record_id(record):
    return int(io.parse_single_example(record, SPEC)["id"])


def test_a_seeded_shuffle_gives_one_order_whether_a_map_comes_before_it_or_not(tmp_path):
    # As in tf.data: one shuffle and one generator, wherever the shuffle stands; so also the
    # second pass of a repeat (reshuffled) and a shuffle of batches.
    paths = make_files(tmp_path, files=3, per_file=20)
    keep_all = lambda r: record_id(r) >= 0  # noqa: E731
    for threads in (1, 2):
        ds = tfrec.Dataset(paths).threads(threads)
        after = list(ds.shuffle(16, seed=5).map(record_id))
        assert sorted(after) == list(range(60)) and after != list(range(60))
        assert list(ds.map(record_id).shuffle(16, seed=5)) == after
        assert list(ds.filter(keep_all).shuffle(16, seed=5).map(record_id)) == after
        twice = list(ds.shuffle(16, seed=5).repeat(2).map(record_id))
        assert twice[:60] == after and twice[60:] != after
        assert list(ds.map(record_id).shuffle(16, seed=5).repeat(2)) == twice
        assert list(ds.shuffle(16, seed=5).map(record_id).repeat(2)) == twice
        batches = [b.tolist() for b in ds.batch(7).shuffle(4, seed=9).parse(SPEC).map(lambda d: d["id"])]
        mapped = [b.tolist() for b in ds.map(record_id).batch(7).shuffle(4, seed=9)]
        assert mapped == batches and sorted(sum(batches, [])) == list(range(60))


def test_a_map_error_is_raised_as_itself_and_ends_the_iterator(tmp_path):
    paths = make_files(tmp_path, files=2, per_file=10)
    failure = KeyError("no such thing")

    def fails_at_seven(record):
        if record_id(record) == 7:
            raise failure
        return record_id(record)

    for ds in (tfrec.Dataset(paths).map(fails_at_seven), tfrec.Dataset(paths).shuffle(4, seed=1).map(fails_at_seven).batch(3)):
        it = iter(ds)
        with pytest.raises(KeyError) as raised:
            for _ in it:
                pass
        assert raised.value is failure
        assert list(it) == []
    with pytest.raises(ZeroDivisionError):
        list(tfrec.Dataset(paths).filter(lambda r: 1 / 0))


def threads_of_this_process():
    import os

    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")
def test_an_iterator_abandoned_midway_stops_its_threads(tmp_path):
    import gc

    paths = make_files(tmp_path, files=4, per_file=50)
    before = threads_of_this_process()
    # Both read without end: a reading that can end (the stages up to a Python map run on the
    # workers apart from those after it) may have taken all of these few records, and its
    # threads ended, before the iterator is abandoned; one that cannot is always midway.
    for ds in (
        tfrec.Dataset(paths).repeat().map(record_id).shuffle(10, seed=1).threads(3),
        tfrec.Dataset(paths).batch(4).threads(2).parse(SPEC).map(lambda d: d["id"]).repeat(),
    ):
        it = iter(ds)
        next(it)
        next(it)
        assert threads_of_this_process() > before
        del it
        gc.collect()
        assert threads_of_this_process() == before


def test_python_stages_on_two_threads_at_once(tmp_path):
    # Each callback takes the GIL for its call only, with the pipeline waiting without it:
    # two iterating threads and their workers never wait on each other for good.
    paths = make_files(tmp_path, files=4, per_file=50)
    ds = tfrec.Dataset(paths).threads(2).map(record_id).shuffle(8, seed=3).batch(5)
    want = [b.tolist() for b in ds]
    got = {}

    def run(k):
        got[k] = [b.tolist() for b in ds]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {0: want, 1: want}


def test_a_map_that_iterates_its_own_iterator_is_refused(tmp_path):
    paths = make_files(tmp_path, files=1, per_file=5)
    it = None

    def reenters(record):
        return next(it)

    it = iter(tfrec.Dataset(paths).map(reenters))
    with pytest.raises(ValueError, match="already running"):
        next(it)


def test_interleave_threads_prefetch_deterministic(tmp_path):
    paths = make_files(tmp_path)
    base = ids(tfrec.Dataset(paths).interleave(4, 2).batch(8).parse(SPEC))
    assert base[:4] == [0, 1, 25, 26]
    threaded = ids(tfrec.Dataset(paths).interleave(4, 2).batch(8).parse(SPEC).threads(2).prefetch(4))
    assert threaded == base
    loose = ids(tfrec.Dataset(paths).interleave(4, 2).batch(8).parse(SPEC).threads(2).deterministic(False))
    assert sorted(loose) == sorted(base)


def one_file_of_many_spans(tmp_path, index):
    """A file of Examples of many sizes (some longer than a span of a plain file, about a
    MiB) and the records in it, with the index ``index`` names beside it: ``None`` (a plain
    file, cut by a scan of its headers), ``"idx"`` (a plain file and its ``.idx``) or
    ``"zidx"`` (a GZIP file and its seek index, with checkpoints close together)."""
    rng = np.random.default_rng(58)
    compression = "GZIP" if index == "zidx" else None
    path = tmp_path / ("one.tfrecord.gz" if compression else "one.tfrecord")
    records = []
    with tfrec.TFRecordWriter(str(path), compression=compression) as w:
        for n in range(1500):
            size = int(rng.choice([0, 10, 3_000, 1_200_000], p=[0.1, 0.6, 0.298, 0.002]))
            record = tfrec.Example.from_dict(
                {"id": n, "x": [n, n + 0.5, -n], "name": f"r{n}", "tags": list(range(n % 3)),
                 "pad": rng.bytes(size)}
            ).SerializeToString()
            w.write(record)
            records.append(record)
    if index is not None:
        assert tfrec._tfrec.cli_main(["tfrec", "index", "--spacing", "200000", str(path)]) == 0
        assert (tmp_path / f"{path.name}.{index}").exists()
    return str(path), records


@pytest.mark.parametrize("index", [None, "idx", "zidx"], ids=["plain", "plain with .idx", "GZIP with index"])
def test_one_file_on_two_threads_gives_the_records_of_one_in_order(tmp_path, index):
    path, records = one_file_of_many_spans(tmp_path, index)
    spans = {}
    for threads in (1, 2, 3):
        it = tfrec.Dataset(path).batch(64).threads(threads).iterator()
        got = [record for batch in it for record in batch]
        assert got == records, f"{threads} threads"
        spans[threads] = it.stats()["spans"]
        parsed = ids(tfrec.Dataset(path).batch(64).parse(SPEC).threads(threads))
        assert parsed == list(range(len(records))), f"{threads} threads"
    # One thread reads the file as one stream; more read it in spans on every worker.
    assert spans[1] == 0 and spans[2] > 2 and spans[3] == spans[2]


def test_sequence_examples_in_a_pipeline(tmp_path):
    path = tmp_path / "seq.tfrecord"
    with tfrec.TFRecordWriter(str(path)) as w:
        for i in range(5):
            w.write(
                tfrec.SequenceExample.from_dict(
                    {"context": {"id": i}, "feature_lists": {"tok": [[t] for t in range(i + 1)]}}
                )
            )
    batches = list(
        tfrec.Dataset(str(path))
        .batch(5)
        .parse(
            context_features={"id": io.FixedLenFeature([], tfrec.int64)},
            sequence_features={"tok": io.FixedLenSequenceFeature([], tfrec.int64)},
        )
    )
    (ctx, lists, lengths), = batches
    assert ctx["id"].tolist() == [0, 1, 2, 3, 4]
    assert lists["tok"].shape == (5, 5) and lengths["tok"].tolist() == [1, 2, 3, 4, 5]


def test_parse_errors_in_a_pipeline_name_the_batch(tmp_path):
    paths = make_files(tmp_path, files=1)
    with pytest.raises(tfrec.ParseError) as info:
        list(tfrec.Dataset(paths).batch(10).parse({"missing": io.FixedLenFeature([], tfrec.int64)}))
    assert info.value.key == "missing" and info.value.batch_index == 0
    assert info.value.path == paths[0] and info.value.record_index == 0 and info.value.record_offset == 0
    with pytest.raises(ValueError):
        tfrec.Dataset(paths).batch(4).parse({"x": io.FixedLenFeature([None], tfrec.int64)})


def test_numeric_columns_are_not_copied(tmp_path):
    paths = make_files(tmp_path, files=1)
    batch = next(iter(tfrec.Dataset(paths).batch(10).parse(SPEC)))
    for key in ("id", "x"):
        arr = batch[key]
        # NumPy borrows the Rust buffer: it does not own its data, and the owner is the
        # container the Rust array was moved into, not another NumPy array.
        assert not arr.flags.owndata and not isinstance(arr.base, np.ndarray), key
        assert arr.flags.writeable and arr.flags.c_contiguous
    out = io.parse_example(list(tfrec.TFRecordDataset(paths)), SPEC)
    assert not out["x"].flags.owndata and not isinstance(out["x"].base, np.ndarray)


def test_the_gil_is_released_while_rust_parses():
    records = [
        tfrec.Example.from_dict({f"f{k}": [float(i + k)] * 8 for k in range(16)}).SerializeToString()
        for i in range(2000)
    ] * 25
    spec = {f"f{k}": io.FixedLenFeature([8], tfrec.float32) for k in range(16)}
    io.parse_example(records[:10], spec)  # build the parser outside the count
    done = threading.Event()
    started = threading.Event()
    ticks = []

    def counter():
        started.set()
        while not done.is_set():
            ticks.append(None)
            time.sleep(0)

    # No forced switches: a thread gets the GIL only when its holder lets it go, so the counter
    # runs during the call only if the call releases the GIL (no clock is read).
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=counter)
        t.start()
        started.wait()
        before = len(ticks)
        io.parse_example(records, spec)
        during = len(ticks) - before
        done.set()
        t.join()
    finally:
        sys.setswitchinterval(interval)
    assert during > 100, during


def fake_torch(monkeypatch, worker=None, rank=None):
    """A stand-in for the parts of torch the adapter uses."""
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch.utils")
    data = types.ModuleType("torch.utils.data")
    dist = types.ModuleType("torch.distributed")

    class IterableDataset:
        def __init__(self):
            pass

    data.IterableDataset = IterableDataset
    data.get_worker_info = lambda: worker
    dist.is_available = lambda: True
    dist.is_initialized = lambda: rank is not None
    dist.get_rank = lambda: rank[0]
    dist.get_world_size = lambda: rank[1]
    torch.utils, utils.data, torch.distributed = utils, data, dist
    torch.from_numpy = lambda a: ("tensor", a)
    for name, mod in {"torch": torch, "torch.utils": utils, "torch.utils.data": data, "torch.distributed": dist}.items():
        monkeypatch.setitem(sys.modules, name, mod)
    import tfrec.torch as adapter

    monkeypatch.setattr(adapter, "_CLASSES", {})
    return adapter


def test_torch_adapter_shards_by_worker_and_rank(tmp_path, monkeypatch):
    paths = make_files(tmp_path, files=8, per_file=5)
    ds = tfrec.Dataset(paths).batch(5).parse(SPEC)
    seen = []
    for rank in range(2):
        for worker_id in range(2):
            worker = types.SimpleNamespace(num_workers=2, id=worker_id)
            adapter = fake_torch(monkeypatch, worker=worker, rank=(rank, 2))
            it = adapter.IterableDataset(ds)
            assert isinstance(it, sys.modules["torch"].utils.data.IterableDataset)
            batches = list(it)
            assert all(b["x"][0] == "tensor" for b in batches)
            mine = [int(i) for b in batches for i in b["id"][1]]
            assert len(mine) == 10  # 2 of the 8 files
            seen += mine
    assert sorted(seen) == list(range(40))


@pytest.mark.parametrize("files,stage", [(2, None), (8, "take"), (8, "shuffle")])
def test_torch_adapter_falls_back_to_records_where_files_cannot_be_split(tmp_path, monkeypatch, files, stage):
    # Fewer files than workers, or a stage that picks records by position (take): by-file
    # sharding is refused, and the default splits the output instead. A shuffle does not stop
    # it (each worker shuffles its own files' records). Every record is read exactly once.
    paths = make_files(tmp_path, files=files, per_file=40 // files)
    ds = tfrec.Dataset(paths)
    if stage == "shuffle":
        ds = ds.shuffle(16, seed=3)
    elif stage == "take":
        ds = ds.take(1000)
    ds = ds.batch(5).parse(SPEC)
    seen = []
    for worker_id in range(4):
        worker = types.SimpleNamespace(num_workers=4, id=worker_id)
        adapter = fake_torch(monkeypatch, worker=worker)
        if stage == "shuffle":
            seen_by_file = ids(list(adapter.IterableDataset(ds, shard_by="file", to_tensors=False)))
            assert len(seen_by_file) == 10  # 2 of the 8 files
        else:
            with pytest.raises(ValueError):
                list(adapter.IterableDataset(ds, shard_by="file"))
        seen += ids(list(adapter.IterableDataset(ds, to_tensors=False)))
    assert sorted(seen) == list(range(40))
    with pytest.raises(ValueError, match="shard_by"):
        adapter.IterableDataset(ds, shard_by="files")


def test_torch_adapter_single_process_reads_everything(tmp_path, monkeypatch):
    paths = make_files(tmp_path, files=2, per_file=5)
    adapter = fake_torch(monkeypatch)
    batches = list(adapter.IterableDataset(tfrec.Dataset(paths).batch(5).parse(SPEC), to_tensors=False))
    assert ids(batches) == list(range(10))


def test_torch_is_only_needed_when_used(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    import tfrec.torch as adapter

    monkeypatch.setattr(adapter, "_CLASSES", {})
    with pytest.raises(ImportError, match="PyTorch"):
        adapter.IterableDataset


def test_from_dict_coercions_and_json():
    ex = tfrec.Example.from_dict(
        {
            "flag": True,
            "count": np.int32(3),
            "ints": np.arange(3, dtype=np.uint8),
            "score": 0.5,
            "floats": np.array([1.5, 2.5]),
            "name": "goat",
            "raw": b"\xff",
            "names": ["a", b"b"],
            "empty": [],
        }
    )
    assert ex.to_dict() == {
        "flag": [1],
        "count": [3],
        "ints": [0, 1, 2],
        "score": [0.5],
        "floats": [1.5, 2.5],
        "name": [b"goat"],
        "raw": [b"\xff"],
        "names": [b"a", b"b"],
        "empty": [],
    }
    assert ex.features.feature["flag"].WhichOneof("kind") == "int64_list"
    assert ex.features.feature["floats"].WhichOneof("kind") == "float_list"
    assert tfrec.Example.from_json(ex.to_json()) == ex
    friendly = tfrec.Example.from_dict({"a": [1, 2], "b": [0.5], "c": ["x"]})
    assert friendly.to_friendly_json() == '{"a": [1, 2], "b": [0.5], "c": ["x"]}'
    assert tfrec.Example.from_json(friendly.to_friendly_json()) == friendly
    seq = tfrec.SequenceExample.from_dict({"context": {"id": 1}, "feature_lists": {"t": [[1], [2, 3]]}})
    assert tfrec.SequenceExample.FromString(seq.SerializeToString()).to_dict() == {
        "context": {"id": [1]},
        "feature_lists": {"t": [[1], [2, 3]]},
    }
    assert tfrec.SequenceExample.from_json(seq.to_friendly_json()) == seq
    assert "feature_lists" in str(seq)


def test_presence_of_features_is_kept():
    assert tfrec.Example().SerializeToString() == b""
    assert tfrec.Example(features=tfrec.Features()).SerializeToString() == b"\n\x00"
    assert not tfrec.Example.FromString(b"").HasField("features")
    assert tfrec.Example.FromString(b"\n\x00").HasField("features")


def test_stages_after_batch_work_on_batches_as_in_tf_data(tmp_path):
    # The cases: 20 records holding i = 0..19.
    paths = make_files(tmp_path, files=1, per_file=20)
    spec = SPEC
    got = [list(b["id"]) for b in tfrec.Dataset(paths).batch(5).take(2).parse(spec)]
    assert got == [list(range(0, 5)), list(range(5, 10))]
    got = [list(b["id"]) for b in tfrec.Dataset(paths).batch(5).repeat(2).take(3).parse(spec)]
    assert got == [list(range(0, 5)), list(range(5, 10)), list(range(10, 15))]
    got = [list(b["id"]) for b in tfrec.Dataset(paths).batch(5).shard(2, 1).parse(spec)]
    assert got == [list(range(5, 10)), list(range(15, 20))]
    got = [sorted(b["id"]) for b in tfrec.Dataset(paths).batch(5).shuffle(4, seed=1).parse(spec)]
    assert sorted(got) == [list(range(k, k + 5)) for k in range(0, 20, 5)]
    # After parse and map, the same stages run in Python with the same meaning.
    got = [list(b["id"]) for b in tfrec.Dataset(paths).batch(5).parse(spec).skip(1).take(2)]
    assert got == [list(range(5, 10)), list(range(10, 15))]
    got = list(tfrec.Dataset(paths).parse(spec).map(lambda d: int(d["id"])).batch(8, drop_remainder=True))
    assert [list(b) for b in got] == [list(range(0, 8)), list(range(8, 16))]


def test_tf_data_habits(tmp_path):
    paths = make_files(tmp_path, files=2, per_file=5)
    ds = tfrec.TFRecordDataset(paths)
    assert ds.cardinality() == tfrec.data.UNKNOWN_CARDINALITY
    assert ds.take(3).cardinality() == tfrec.data.UNKNOWN_CARDINALITY  # as tf.data: unknown stays unknown
    assert ds.repeat().cardinality() == tfrec.data.INFINITE_CARDINALITY
    with pytest.raises(TypeError, match="infinite"):
        len(ds.repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(ds)
    shuffled = ds.shuffle(4, seed=2).repeat(2).prefetch(tfrec.data.AUTOTUNE)
    assert sorted(shuffled) == sorted(list(ds) * 2)
    assert len(list(ds.batch(3).map(len, num_parallel_calls=tfrec.AUTOTUNE))) == 4
    arrays = list(ds.batch(4).as_numpy_iterator())
    assert arrays[0].dtype == object and arrays[0].shape == (4,)
    text = repr(ds.shuffle(4, seed=2).batch(3).parse(SPEC))
    assert "2 files" in text and "shuffle(4, seed=2) -> batch(3) -> parse(4 features)" in text
    assert "dict of arrays" in text
    with pytest.raises(ValueError, match="interleave"):
        ds.take(3).interleave(2)
    with pytest.raises(ValueError, match="batch_size"):
        ds.batch(0)
    assert list(ds.filter(lambda r: len(r) > 0).take(2)) == list(ds)[:2]

"""Data sets in other processes: they pickle as their description (files, stages, options)
and start their pipeline where they are iterated, so loaders work under the ``spawn`` start
method (the default on macOS and Windows, and on Linux from Python 3.14). Two DataLoader
workers on each of two ranks read every record exactly once."""

import multiprocessing
import pickle
import sys
import textwrap

import pytest

import tfrec

SPEC = {"id": tfrec.io.FixedLenFeature([], tfrec.int64)}


def make_files(tmp_path, files, per_file):
    paths, n = [], 0
    for f in range(files):
        path = tmp_path / f"part-{f}.tfrecord"
        with tfrec.TFRecordWriter(str(path)) as w:
            for _ in range(per_file):
                w.write(tfrec.Example.from_dict({"id": n}).SerializeToString())
                n += 1
        paths.append(str(path))
    return paths


def ids(batches):
    return [int(i) for b in batches for i in b["id"]]


def read_shard(args):
    """What one DataLoader worker of one rank does (run in a spawned process)."""
    blob, num_shards, index = args
    import tfrec.torch  # noqa: F401  (what a worker imports)
    from tfrec.torch import shard_for

    ds = pickle.loads(blob)
    return ids(shard_for(ds, num_shards, index))


def pipelines(paths):
    base = tfrec.Dataset(paths)
    return {
        "by file": base.shuffle(7, seed=1).batch(4).parse(SPEC),
        "positional stage: by output": base.take(1000).batch(4).parse(SPEC),
        "python stages": base.batch(4).parse(SPEC).map(lambda_free_double).map(lambda_free_halve),
    }


def lambda_free_double(d):
    return {"id": d["id"] * 2}


def lambda_free_halve(d):
    return {"id": d["id"] // 2}


def test_a_data_set_pickles_as_its_description(tmp_path):
    paths = make_files(tmp_path, files=3, per_file=7)
    for name, ds in pipelines(paths).items():
        again = pickle.loads(pickle.dumps(ds))
        assert repr(again) == repr(ds), name
        assert ids(again) == ids(ds), name


@pytest.mark.parametrize("files", [8, 3])
def test_two_workers_on_two_ranks_under_spawn_read_every_record_once(tmp_path, files):
    paths = make_files(tmp_path, files=files, per_file=40 // files)
    total = files * (40 // files)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        for name, ds in pipelines(paths).items():
            blob = pickle.dumps(ds)
            # Shard rank * num_workers + worker of world_size * num_workers, as tfrec.torch does.
            jobs = [(blob, 4, rank * 2 + worker) for rank in range(2) for worker in range(2)]
            parts = pool.map(read_shard, jobs)
            seen = sorted(i for part in parts for i in part)
            assert seen == list(range(total)), name
            assert all(parts), f"{name}: every worker got records"


FAKE_TORCH = '''
"""A stand-in for the parts of torch that tfrec.torch uses, importable in a spawned process."""
import types, os
utils = types.ModuleType("torch.utils")
data = types.ModuleType("torch.utils.data")
distributed = types.ModuleType("torch.distributed")
class IterableDataset:
    def __init__(self):
        pass
data.IterableDataset = IterableDataset
WORKER = None
def get_worker_info():
    return WORKER
data.get_worker_info = get_worker_info
distributed.is_available = lambda: True
distributed.is_initialized = lambda: "FAKE_RANK" in os.environ
distributed.get_rank = lambda: int(os.environ["FAKE_RANK"])
distributed.get_world_size = lambda: 2
utils.data = data
def from_numpy(a):
    return ("tensor", a)
import sys
sys.modules["torch.utils"] = utils
sys.modules["torch.utils.data"] = data
sys.modules["torch.distributed"] = distributed
'''


def worker_of_a_loader(args):
    """A DataLoader worker: unpickles the adapter (as torch does under spawn) and iterates.
    Like a real spawned worker, it has no process group: the rank comes from the parent."""
    blob, worker_id = args
    import types

    import torch

    torch.WORKER = types.SimpleNamespace(num_workers=2, id=worker_id)
    adapter = pickle.loads(blob)
    return [int(i) for batch in adapter for i in batch["id"][1]]


def test_the_torch_adapter_pickles_into_spawned_workers(tmp_path, monkeypatch):
    fake = tmp_path / "fake_torch"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(textwrap.dedent(FAKE_TORCH))
    monkeypatch.syspath_prepend(str(fake))
    monkeypatch.setenv("PYTHONPATH", str(fake))
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        monkeypatch.delitem(sys.modules, name)
    import tfrec.torch as adapter

    monkeypatch.setattr(adapter, "_CLASSES", {})
    paths = make_files(tmp_path, files=8, per_file=5)
    blobs = []
    for rank in range(2):
        # Each rank makes its loader's data set where its process group is initialised.
        monkeypatch.setenv("FAKE_RANK", str(rank))
        blobs.append(pickle.dumps(adapter.IterableDataset(tfrec.Dataset(paths).batch(5).parse(SPEC))))
    monkeypatch.delenv("FAKE_RANK")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        parts = pool.map(worker_of_a_loader, [(blob, w) for blob in blobs for w in range(2)])
    assert sorted(i for p in parts for i in p) == list(range(40))
    assert [len(p) for p in parts] == [10, 10, 10, 10]  # two whole files each

"""tfrec with real PyTorch: a DataLoader with 2 workers under the ``spawn`` start method on each
of 2 distributed ranks (gloo, on loopback), reading TFRecord files through
``tfrec.torch.IterableDataset``; then a map-style ``tfrec.torch.MapDataset`` with a
``RandomSampler`` (a global shuffle each epoch), when the random-access module is there.
Checks that every record arrives exactly once and prints what it saw.

    python examples/torch_loader.py            # needs torch and tfrec importable
"""

import os
import socket
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader

import tfrec
import tfrec.torch  # noqa: F401  (also loads on first use of tfrec.torch)

SPEC = {"id": tfrec.io.FixedLenFeature([], tfrec.int64), "x": tfrec.io.FixedLenFeature([3], tfrec.float32)}
FILES, PER_FILE, BATCH = 8, 250, 32


def write_files(directory):
    paths, n = [], 0
    for f in range(FILES):
        path = os.path.join(directory, f"train-{f:02d}.tfrecord")
        with tfrec.TFRecordWriter(path) as w:
            for _ in range(PER_FILE):
                w.write(tfrec.Example.from_dict({"id": n, "x": [n, n + 0.5, -n]}).SerializeToString())
                n += 1
        paths.append(path)
    return paths


def rank_main(rank, world_size, port, paths, out):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    ds = tfrec.Dataset(paths).shuffle(500, seed=7).batch(BATCH).parse(SPEC)
    loader = DataLoader(
        tfrec.torch.IterableDataset(ds),
        batch_size=None,  # tfrec batches
        num_workers=2,
        multiprocessing_context="spawn",
        collate_fn=tfrec.torch.collate,
    )
    ids = []
    for batch in loader:
        assert isinstance(batch["id"], torch.Tensor) and batch["x"].shape[1:] == (3,)
        ids.extend(batch["id"].tolist())
    gathered = [None] * world_size
    dist.all_gather_object(gathered, ids)
    if rank == 0:
        seen = sorted(i for part in gathered for i in part)
        ok = seen == list(range(FILES * PER_FILE))
        with open(out, "w") as f:
            f.write(f"{ok} {[len(p) for p in gathered]}\n")
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    print(f"torch {torch.__version__}, tfrec from {os.path.dirname(tfrec.__file__)}, python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as d:
        paths = write_files(d)
        out = os.path.join(d, "result.txt")
        mp.spawn(rank_main, args=(2, free_port(), paths, out), nprocs=2, join=True)
        ok, counts = open(out).read().split(" ", 1)
        print(f"IterableDataset, 2 ranks x 2 spawn workers: every record exactly once: {ok}; records per rank: {counts.strip()}")
        assert ok == "True"
        map_dataset = getattr(tfrec.torch, "MapDataset", None) if hasattr(tfrec, "torch") else None
        if map_dataset is None:
            print("MapDataset: not in this build")
            return
        mds = map_dataset(paths, features=SPEC)
        loader = DataLoader(mds, batch_size=BATCH, shuffle=True, num_workers=2, multiprocessing_context="spawn",
                            generator=torch.Generator().manual_seed(1))
        epochs = []
        for _ in range(2):
            ids = []
            for batch in loader:
                ids.extend(batch["id"].tolist())
            epochs.append(ids)
        for e, ids in enumerate(epochs):
            assert sorted(ids) == list(range(FILES * PER_FILE)), "every record once per epoch"
        print(f"MapDataset, RandomSampler, 2 spawn workers: len {len(mds)}, every record once per epoch: True; "
              f"epochs in different orders: {epochs[0] != epochs[1]}; first ids {epochs[0][:6]} / {epochs[1][:6]}")


if __name__ == "__main__":
    main()

"""PyTorch adapter: ``tfrec.torch.IterableDataset(dataset)`` feeds a :class:`tfrec.Dataset` to
a ``torch.utils.data.DataLoader``, each DataLoader worker of each distributed rank reading its
own shard. ``torch`` is imported only when the class is first used, so tfrec does not depend
on it.
"""

import importlib

__all__ = ["IterableDataset", "shard_index"]


def shard_index(torch):
    """``(num_shards, index)`` of this process and DataLoader worker: rank-major, so shard
    ``rank * num_workers + worker_id`` of ``world_size * num_workers``."""
    world_size, rank = 1, 0
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        world_size, rank = dist.get_world_size(), dist.get_rank()
    info = torch.utils.data.get_worker_info()
    num_workers, worker_id = (1, 0) if info is None else (info.num_workers, info.id)
    return world_size * num_workers, rank * num_workers + worker_id


_CLASS = None


def _make_class():
    torch = importlib.import_module("torch")
    importlib.import_module("torch.utils.data")

    class IterableDataset(torch.utils.data.IterableDataset):
        """A :class:`tfrec.Dataset` as a ``torch.utils.data.IterableDataset``.

        ``shard_by``: ``"auto"`` (the default: whole files where the data set allows it, that is
        with at least as many files as workers and no record-level stage before, else records),
        ``"file"`` (each worker reads whole files; a ``ValueError`` when the data set does not
        allow it) or ``"record"`` (every worker reads every file and keeps its records).
        ``to_tensors``: NumPy arrays become tensors with ``torch.from_numpy`` (no copy).
        """

        def __init__(self, dataset, shard_by="auto", to_tensors=True):
            super().__init__()
            if shard_by not in ("auto", "file", "record"):
                raise ValueError(f"shard_by must be 'auto', 'file' or 'record', not {shard_by!r}")
            self.dataset = dataset
            self.shard_by = shard_by
            self.to_tensors = to_tensors

        def __iter__(self):
            num_shards, index = shard_index(torch)
            ds = self.dataset
            if num_shards > 1:
                if self.shard_by == "auto":
                    # Every worker makes the same choice: it depends only on the data set and
                    # the number of shards, so the shards still partition the data.
                    try:
                        ds = ds.shard(num_shards, index, by="file")
                    except ValueError:
                        ds = ds.shard(num_shards, index, by="record")
                else:
                    ds = ds.shard(num_shards, index, by=self.shard_by)
            for item in ds:
                yield self._convert(item) if self.to_tensors else item

        def _convert(self, item):
            import numpy as np

            if isinstance(item, dict):
                return {k: self._convert(v) for k, v in item.items()}
            if isinstance(item, tuple):
                return tuple(self._convert(v) for v in item)
            if isinstance(item, np.ndarray) and item.dtype != object:
                return torch.from_numpy(item)
            return item

    return IterableDataset


def __getattr__(name):
    global _CLASS
    if name == "IterableDataset":
        if _CLASS is None:
            try:
                _CLASS = _make_class()
            except ImportError as e:
                raise ImportError("tfrec.torch needs PyTorch: pip install torch") from e
        return _CLASS
    raise AttributeError(f"module 'tfrec.torch' has no attribute {name!r}")

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

        ``shard_by``: ``"file"`` (each worker reads whole files; needs at least as many files
        as workers) or ``"record"`` (every worker reads every file and keeps its records).
        ``to_tensors``: NumPy arrays become tensors with ``torch.from_numpy`` (no copy).
        """

        def __init__(self, dataset, shard_by="file", to_tensors=True):
            super().__init__()
            self.dataset = dataset
            self.shard_by = shard_by
            self.to_tensors = to_tensors

        def __iter__(self):
            num_shards, index = shard_index(torch)
            ds = self.dataset
            if num_shards > 1:
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

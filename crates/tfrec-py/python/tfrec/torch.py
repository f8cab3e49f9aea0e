"""PyTorch adapter: ``tfrec.torch.IterableDataset(dataset)`` feeds a :class:`tfrec.Dataset` to
a ``torch.utils.data.DataLoader``, each DataLoader worker of each distributed rank reading its
own shard. ``torch`` is imported only when the class is first used, so tfrec does not depend
on it.
"""

import importlib

__all__ = ["IterableDataset", "MapDataset", "shard_index"]


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


# -- Map-style: random access -------------------------------------------------------------------
# ``tfrec.torch.MapDataset``: a ``RandomAccessDataset`` as a ``torch.utils.data.Dataset``, made on
# first use like ``IterableDataset`` above; this block and its ``__getattr__`` are its own.

_MAP_CLASS = None


def _to_tensors(torch, item):
    """NumPy numeric arrays (in dicts and tuples) as tensors sharing their memory; the rest
    (``bytes``, object arrays of strings, sparse and ragged values) unchanged."""
    import numpy as np

    if isinstance(item, dict):
        return {k: _to_tensors(torch, v) for k, v in item.items()}
    if isinstance(item, tuple):
        return tuple(_to_tensors(torch, v) for v in item)
    if isinstance(item, np.ndarray) and item.dtype != object:
        return torch.from_numpy(item)
    return item


def _make_map_class():
    torch = importlib.import_module("torch")
    importlib.import_module("torch.utils.data")
    import numpy as np

    from .random_access import RandomAccessDataset

    class MapDataset(torch.utils.data.Dataset):
        """Plain TFRecord files as a map-style ``torch.utils.data.Dataset``: any sampler works,
        ``RandomSampler`` gives a true global shuffle each epoch.

        ``MapDataset(filenames, features=None, index_paths=None)`` (as
        :class:`tfrec.RandomAccessDataset` takes them), or ``MapDataset(random_access_dataset)``.
        ``ds[i]``: the record's ``bytes``, or with ``features`` its parsed dict, numeric arrays as
        tensors (``torch.from_numpy``, no copy). ``__getitems__(indices)`` (what ``DataLoader``
        calls with each batch of indices) parses the whole batch at once and returns one item
        per index, for the collate to stack. ``ds[list_of_indices]`` returns ONE parsed batch:
        with ``DataLoader(ds, sampler=BatchSampler(RandomSampler(ds), 256, False),
        batch_size=None)`` each step gets that batch without a collate copying it again.
        String features stay NumPy object arrays, which the default collate refuses: give
        ``collate_fn`` or use the batch form above. Pickles (for ``spawn`` workers) as its
        description; each worker opens the files itself.
        """

        def __init__(self, filenames, features=None, index_paths=None, to_tensors=True):
            super().__init__()
            if isinstance(filenames, RandomAccessDataset):
                if features is not None or index_paths is not None:
                    raise ValueError("give features and index_paths to the RandomAccessDataset, not here")
                self.dataset = filenames
            else:
                self.dataset = RandomAccessDataset(filenames, features=features, index_paths=index_paths)
            self.to_tensors = to_tensors

        def __len__(self):
            return len(self.dataset)

        def _convert(self, item):
            return _to_tensors(torch, item) if self.to_tensors else item

        def __getitem__(self, key):
            if isinstance(key, (list, tuple, range)) or getattr(key, "ndim", 0) > 0:
                return self._convert(self.dataset.get_batch(key))
            return self._convert(self.dataset[key])

        def __getitems__(self, indices):
            if self.dataset.features is None:
                return self.dataset.__getitems__(indices)
            batch = self.dataset.get_batch(indices)
            if not all(isinstance(v, np.ndarray) for v in batch.values()):
                # Sparse and ragged values have no per-row views: parse record by record.
                return [self._convert(item) for item in self.dataset.__getitems__(indices)]
            batch = self._convert(batch)
            return [{k: v[row] for k, v in batch.items()} for row in range(len(indices))]

        def __repr__(self):
            return f"tfrec.torch.MapDataset({self.dataset!r})"

    # Found by pickle as ``tfrec.torch.MapDataset`` (the module's ``__getattr__`` gives it).
    MapDataset.__module__ = __name__
    MapDataset.__qualname__ = "MapDataset"
    return MapDataset


_iterable_getattr = __getattr__


def __getattr__(name):  # noqa: F811  (wraps the one above)
    global _MAP_CLASS
    if name == "MapDataset":
        if _MAP_CLASS is None:
            try:
                _MAP_CLASS = _make_map_class()
            except ImportError as e:
                raise ImportError("tfrec.torch needs PyTorch: pip install torch") from e
        return _MAP_CLASS
    return _iterable_getattr(name)

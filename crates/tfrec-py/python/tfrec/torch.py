"""PyTorch adapters: ``tfrec.torch.MapDataset`` (map-style, random access: any sampler, a true
global shuffle each epoch) and ``tfrec.torch.IterableDataset(dataset)``, which feeds a :class:`tfrec.data.Dataset`
to a ``torch.utils.data.DataLoader``, each DataLoader worker of each distributed rank reading
its own shard, under every start method (``fork``, ``spawn``, ``forkserver``): the data set
pickles as its description and starts its pipeline in the worker. ``collate`` turns tfrec's
outputs into tensors. ``torch`` is imported only when a class is first used, so tfrec does not
depend on it.

When tfrec batches (``.batch(n)`` in the data set), give the DataLoader ``batch_size=None``,
so it hands tfrec's batches on instead of batching them again::

    loader = DataLoader(tfrec.torch.IterableDataset(ds), batch_size=None, num_workers=2,
                        multiprocessing_context="spawn", collate_fn=tfrec.torch.collate)

Strings stay lists of ``bytes`` (or NumPy object arrays): torch has no string tensor.
"""

import importlib

__all__ = ["IterableDataset", "MapDataset", "collate", "shard_index"]


def _rank(torch):
    """``(world_size, rank)`` of this process in ``torch.distributed``, or ``None``."""
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return None


def shard_index(torch, rank=None):
    """``(num_shards, index)`` of this process and DataLoader worker: rank-major, so shard
    ``rank * num_workers + worker_id`` of ``world_size * num_workers``. ``rank``:
    ``(world_size, rank)`` as seen where the data set was made; a spawned DataLoader worker
    has no process group of its own, so it cannot ask ``torch.distributed`` itself."""
    world_size, rank = _rank(torch) or rank or (1, 0)
    info = torch.utils.data.get_worker_info()
    num_workers, worker_id = (1, 0) if info is None else (info.num_workers, info.id)
    return world_size * num_workers, rank * num_workers + worker_id


def shard_for(dataset, num_shards, index, shard_by="auto"):
    """Part ``index`` of ``num_shards`` of ``dataset``: whole files (``"file"``; ``"auto"``
    where the data set allows it: enough files, and no stage that picks by position), else
    every ``num_shards``-th element of its output (``"record"``). Either way the parts
    partition the data: every element is in exactly one."""
    if num_shards <= 1:
        return dataset
    if shard_by in ("auto", "file"):
        try:
            return dataset._shard_files_first(num_shards, index)
        except ValueError:
            if shard_by == "file":
                raise
    return dataset.shard(num_shards, index)


def collate(item):
    """tfrec's outputs as tensors: numeric NumPy arrays with ``torch.from_numpy`` (no copy),
    dicts and tuples element by element; strings (lists of ``bytes``, object arrays) and
    sparse or ragged values are left as they are. For ``DataLoader(collate_fn=...)`` with
    ``batch_size=None``."""
    import numpy as np

    torch = importlib.import_module("torch")
    if isinstance(item, dict):
        return {k: collate(v) for k, v in item.items()}
    if isinstance(item, tuple):
        return tuple(collate(v) for v in item)
    if isinstance(item, np.ndarray) and item.dtype != object:
        return torch.from_numpy(item)
    return item


def _iterable_dataset_class(torch):
    class IterableDataset(torch.utils.data.IterableDataset):
        """A :class:`tfrec.data.Dataset` as a ``torch.utils.data.IterableDataset``.

        ``shard_by``: ``"auto"`` (the default: whole files where the data set allows it, that is
        with at least as many files as workers and no ``take``/``skip``/``shard``; else every
        n-th element of the output), ``"file"`` (a ``ValueError`` when the data set does not
        allow it) or ``"record"`` (every worker runs the whole pipeline and keeps its share
        of the output). ``to_tensors``: NumPy arrays become tensors (:func:`collate`).
        It pickles as the data set's description, so spawned workers work.
        """

        def __init__(self, dataset, shard_by="auto", to_tensors=True):
            super().__init__()
            if shard_by not in ("auto", "file", "record"):
                raise ValueError(f"shard_by must be 'auto', 'file' or 'record', not {shard_by!r}")
            self.dataset = dataset
            self.shard_by = shard_by
            self.to_tensors = to_tensors
            # Read here, in the rank's own process: its DataLoader workers have no process group.
            self.rank = _rank(torch)

        def __iter__(self):
            num_shards, index = shard_index(torch, self.rank)
            ds = shard_for(self.dataset, num_shards, index, self.shard_by)
            for item in ds:
                yield collate(item) if self.to_tensors else item

    return IterableDataset


def _map_dataset_class(torch):
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
            return collate(item) if self.to_tensors else item

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

    return MapDataset


_CLASSES = {}
_FACTORIES = {"IterableDataset": _iterable_dataset_class, "MapDataset": _map_dataset_class}


def __getattr__(name):
    factory = _FACTORIES.get(name)
    if factory is None:
        raise AttributeError(f"module 'tfrec.torch' has no attribute {name!r}")
    if name not in _CLASSES:
        try:
            torch = importlib.import_module("torch")
            importlib.import_module("torch.utils.data")
        except ImportError as e:
            raise ImportError("tfrec.torch needs PyTorch: pip install torch") from e
        cls = factory(torch)
        # Named as this module's attribute, so pickle finds the class in a spawned worker.
        cls.__module__, cls.__qualname__ = __name__, name
        _CLASSES[name] = cls
    return _CLASSES[name]

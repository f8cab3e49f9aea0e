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

from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any, Literal

# PyTorch is optional (``tfrec-rs[torch]``): without it the base class is ``Any``.
from torch.utils.data import (  # type: ignore[import-not-found, unused-ignore]
    Dataset as _TorchDataset,
    IterableDataset as _TorchIterableDataset,
)
from typing_extensions import TypeAlias

from ._records import _PathArg, _Paths
from .data import Dataset
from .io import _Features
from .random_access import RandomAccessDataset, _Indices

__all__ = ["IterableDataset", "MapDataset", "collate", "shard_index"]

_ShardBy: TypeAlias = Literal["auto", "file", "record"]

def shard_index(torch: ModuleType, rank: tuple[int, int] | None = None) -> tuple[int, int]:
    """``(num_shards, index)`` of this process and DataLoader worker: rank-major, so shard
    ``rank * num_workers + worker_id`` of ``world_size * num_workers``. ``rank``:
    ``(world_size, rank)`` as seen where the data set was made; a spawned DataLoader worker
    has no process group of its own, so it cannot ask ``torch.distributed`` itself."""
def shard_for(dataset: Dataset, num_shards: int, index: int, shard_by: _ShardBy = "auto") -> Dataset:
    """Part ``index`` of ``num_shards`` of ``dataset``: whole files (``"file"``; ``"auto"``
    where the data set allows it: enough files, and no stage that picks by position), else
    every ``num_shards``-th element of its output (``"record"``). Either way the parts
    partition the data: every element is in exactly one."""

# Takes any element of a tfrec data set (dicts, tuples, arrays, bytes, sparse values) and
# gives the same structure with numeric arrays as ``torch.Tensor``s.
def collate(item: Any) -> Any:
    """tfrec's outputs as tensors: numeric NumPy arrays with ``torch.from_numpy`` (no copy),
    dicts and tuples element by element; strings (lists of ``bytes``, object arrays) and
    sparse or ragged values are left as they are. For ``DataLoader(collate_fn=...)`` with
    ``batch_size=None``."""

# Made on first use (the module's ``__getattr__``), so that tfrec does not import torch.
class IterableDataset(_TorchIterableDataset[Any]):  # type: ignore[misc, unused-ignore]
    """A :class:`tfrec.data.Dataset` as a ``torch.utils.data.IterableDataset``.

    ``shard_by``: ``"auto"`` (the default: whole files where the data set allows it, that is
    with at least as many files as workers and no ``take``/``skip``/``shard``; else every
    n-th element of the output), ``"file"`` (a ``ValueError`` when the data set does not
    allow it) or ``"record"`` (every worker runs the whole pipeline and keeps its share
    of the output). ``to_tensors``: NumPy arrays become tensors (:func:`collate`).
    It pickles as the data set's description, so spawned workers work.
    """

    dataset: Dataset
    shard_by: _ShardBy
    to_tensors: bool
    rank: tuple[int, int] | None
    def __init__(self, dataset: Dataset, shard_by: _ShardBy = "auto", to_tensors: bool = True) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...

# Made on first use, as ``IterableDataset``. Items are what ``RandomAccessDataset`` gives, with
# numeric arrays as ``torch.Tensor``s when ``to_tensors``.
class MapDataset(_TorchDataset[Any]):  # type: ignore[misc, unused-ignore]
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

    dataset: RandomAccessDataset[Any]
    to_tensors: bool
    def __init__(
        self,
        filenames: _Paths | RandomAccessDataset[Any],
        features: _Features | None = None,
        index_paths: _PathArg | Iterable[_PathArg | None] | None = None,
        to_tensors: bool = True,
    ) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, key: int | slice | _Indices) -> Any: ...
    def __getitems__(self, indices: _Indices) -> list[Any]: ...

"""PyTorch adapters. ``tfrec.torch.IterableDataset(dataset)`` feeds a :class:`tfrec.data.Dataset`
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

from collections.abc import Iterator
from types import ModuleType
from typing import Any, Literal

# PyTorch is optional (``tfrec-rs[torch]``): without it the base class is ``Any``.
from torch.utils.data import IterableDataset as _TorchIterableDataset  # type: ignore[import-not-found, unused-ignore]
from typing_extensions import TypeAlias

from .data import Dataset

__all__ = ["IterableDataset", "collate", "shard_index"]

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

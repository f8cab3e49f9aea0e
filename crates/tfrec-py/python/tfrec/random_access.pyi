"""Random access to TFRecord files: :class:`RandomAccessDataset`, a map-style data set
(``len(ds)``, ``ds[i]``, ``ds[[i, j]]``, slices) over one file or many, for a global shuffle
each epoch with PyTorch's samplers (``tfrec.torch.MapDataset``) or Grain, which read any
``__len__`` + ``__getitem__`` source.

Records are read with one positional read each and both CRCs checked. Each file needs an
index of record offsets: ``FILE.idx`` beside it (what ``tfrec index`` writes; DALI's
``tfrecord2idx`` and the ``tfrecord`` package's ``offset length`` files are the same format),
built on first use and saved there when the directory is writable, else kept in memory.
A GZIP or ZLIB file has a seek index instead, ``FILE.zidx`` (``tfrec index`` writes it too;
built and saved the same way): checkpoints about every MiB of inflated records, so record N
is inflated from the nearest one. Inflated spans are kept in a cache of up to 256 MiB of
inflated records shared by the process (least recently used evicted first), so while the
records read fit in it each span is inflated once, whatever the order of the reads.
"""

from collections.abc import Iterable, Iterator
from typing import Any, Generic, SupportsIndex, TypeVar, overload

import numpy as np
import numpy.typing as npt

from ._records import _PathArg, _Inputs, _Paths
from .io import _Features, _Strings, _Tensor

__all__ = ["RandomAccessDataset"]

# An item: a record's ``bytes``, or with ``features`` its parsed dict.
_Item = TypeVar("_Item", bytes, dict[str, _Tensor])
# Several positions: a list, a range, a NumPy array of ints, any iterable of ints.
_Indices = Iterable[SupportsIndex] | npt.NDArray[np.integer[Any]]

class RandomAccessDataset(Generic[_Item]):
    """The records of TFRecord files (plain, GZIP or ZLIB) by position: ``ds[i]`` is the i-th record of
    reading the files in order (as ``tfrec.TFRecordDataset`` yields them).

    ``filenames``: a path, glob, directory or object store URL, or a list of them; or file
    objects with ``read()`` and ``seek()`` (indexed by reading each once, kept in memory). ``features``: a parse spec
    (``{name: tfrec.io.FixedLenFeature(...), ...}`` as ``tfrec.io.parse_example`` takes); with it
    ``ds[i]`` is ``parse_single_example``'s dict, without it the record's ``bytes``; ``strings``:
    the form of its string features (``"object"``, ``"numpy"`` or ``"arrow"``, as in
    :mod:`tfrec.io`). ``index_paths``: one index path (or ``None`` for ``FILE.idx``, ``FILE.zidx`` for a compressed
    file) per file after expansion.

    - ``ds[i]`` (negative from the end), ``ds[[i, j, k]]`` or ``ds[np.array([...])]`` (a list),
      ``ds[a:b:c]`` (a list); ``IndexError`` past the end.
    - ``ds.__getitems__(indices)``: a list of items, the contract PyTorch's ``DataLoader`` calls
      with each batch of sampled indices (its collate then makes the batch).
    - ``ds.get_batch(indices)``: with ``features``, ONE ``parse_example`` dict for all of
      ``indices`` (parsed at once, with a leading batch dimension); without, a list of ``bytes``.

    It pickles as its description (files, features, index paths) and opens the files again
    lazily in the process that uses it, so it can be sent to workers started with ``spawn``.
    ``__len__`` and ``__getitem__`` make it a Grain ``RandomAccessDataSource``."""
    @overload
    def __init__(
        self: RandomAccessDataset[bytes],
        filenames: _Inputs,
        features: None = None,
        index_paths: _PathArg | Iterable[_PathArg | None] | None = None,
        *,
        strings: _Strings = "object",
    ) -> None: ...
    @overload
    def __init__(
        self: RandomAccessDataset[dict[str, _Tensor]],
        filenames: _Inputs,
        features: _Features,
        index_paths: _PathArg | Iterable[_PathArg | None] | None = None,
        *,
        strings: _Strings = "object",
    ) -> None: ...
    def __getstate__(self) -> dict[str, Any]: ...
    def __setstate__(self, state: dict[str, Any]) -> None: ...
    def __len__(self) -> int: ...
    @property
    def features(self) -> _Features | None:
        """The parse spec, or ``None`` (items are ``bytes``)."""
    @property
    def filenames(self) -> list[str]:
        """The files, after expansion, in record order."""
    @overload
    def __getitem__(self, key: int | np.integer[Any]) -> _Item: ...
    @overload
    def __getitem__(self, key: slice | _Indices) -> list[_Item]: ...
    def __getitems__(self, indices: _Indices) -> list[_Item]:
        """A list with one item per index (``bytes``, or a parsed dict with ``features``): the
        contract of ``torch.utils.data.Dataset.__getitems__``, whose caller collates the list."""
    @overload
    def get_batch(self: RandomAccessDataset[bytes], indices: _Indices) -> list[bytes]:
        """With ``features``: one ``parse_example`` dict for the records of ``indices``, parsed
        at once. Without: the records as a list of ``bytes``."""
    @overload
    def get_batch(self: RandomAccessDataset[dict[str, _Tensor]], indices: _Indices) -> dict[str, _Tensor]:
        """With ``features``: one ``parse_example`` dict for the records of ``indices``, parsed
        at once. Without: the records as a list of ``bytes``."""
    def __iter__(self) -> Iterator[_Item]: ...

"""Input pipelines with tf.data's meaning: :class:`Dataset` (files or in-memory elements, then
stages in call order) and ``TFRecordDataset`` (a ``Dataset`` of records as ``bytes``), with
``TFRecordWriter``.

Every stage applies to what the stage before it yields, as in tf.data: records before
``batch``, batches after it (``.batch(5).take(2)`` is two batches of five), parsed values
after ``parse``. The library's pipeline runs every stage: choosing files (``interleave``,
``shard(by="file")``), the record stages (``shard``, ``shuffle``, ``repeat``, ``skip``,
``take``), one ``batch``, the same stages over whole batches, and ``parse`` on its own threads
with the GIL released; after a ``map`` or ``filter`` (or a ``parse``) the same stages over the
elements, on the iterating thread, calling the Python functions with the GIL taken for each
call. One shuffle and one seeded generator serve every level, so ``shuffle(n, seed=s)`` gives
the same order with or without a ``map`` before it, as in tf.data. A stage that cannot run
where it is called (``interleave`` after a record stage) is a ``ValueError`` naming it, never
a silent reorder.

A data set is a description (files, stages, options): it pickles as one, and starts its
pipeline in the process that iterates it, so PyTorch's spawned DataLoader workers can each read
their shard.
"""

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, Literal

import numpy.typing as npt
from typing_extensions import Self, TypeAlias

from . import _tfrec
from ._records import TFRecordOptions as TFRecordOptions, TFRecordWriter as TFRecordWriter, _Inputs, _Paths, _Record
from .arrow import ArrowStream, _SpecArg
from .io import _Features, _Strings
from .random_access import RandomAccessDataset as RandomAccessDataset

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "RandomAccessDataset",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "TFRecordDataset",
    "TFRecordOptions",
    "TFRecordWriter",
    "experimental",
]

_OnCorruption: TypeAlias = Literal["raise", "skip", "skip_file"]
_TornTail: TypeAlias = Literal["raise", "skip"]
# In-memory elements for ``from_tensor_slices``: arrays or lists, and tuples and dicts of them.
_Slices: TypeAlias = npt.ArrayLike | tuple[_Slices, ...] | Mapping[str, _Slices]

AUTOTUNE: Final = -1
INFINITE_CARDINALITY: Final = -1
UNKNOWN_CARDINALITY: Final = -2

class Dataset:
    """A pipeline over TFRecord files (paths, directories, glob patterns or object store URLs
    such as ``s3://bucket/train-*.tfrecord``), over file objects (anything with ``read()``:
    ``open(path, "rb")``, ``io.BytesIO``, fsspec's files; read on the iterating thread), or over
    in-memory elements (:meth:`from_tensor_slices`), with tf.data's stages in call order.

    Iterating yields what the last stage makes: ``bytes`` (records), lists of ``bytes``
    (batches of records), dicts of NumPy arrays (parsed Examples, ``SparseTensor`` /
    ``RaggedTensor`` for sparse and ragged features), ``(context, feature_lists, lengths)``
    (parsed SequenceExamples), or whatever a ``map`` returns.

    >>> ds = (tfrec.Dataset("train-*.tfrecord").shuffle(10_000, seed=1)
    ...       .batch(1024).parse({"age": tfrec.io.FixedLenFeature([], "int64")}).threads(2))
    >>> for batch in ds: ..."""
    def __init__(
        self,
        filenames: _Inputs,
        compression_type: str | TFRecordOptions | None = None,
        on_corruption: _OnCorruption = "raise",
        torn_tail: _TornTail = "raise",
        verify_crc: bool = True,
    ) -> None: ...
    @classmethod
    def from_tensor_slices(cls, tensors: _Slices) -> Dataset:
        """``tf.data.Dataset.from_tensor_slices``: the slices of NumPy arrays or lists (and
        tuples and dicts of them) along their first axis, as elements."""
    # The elements are whatever the generator yields; the tf.data type arguments are ignored.
    @classmethod
    def from_generator(
        cls,
        generator: Callable[..., Iterable[Any]],
        output_types: object = None,
        output_shapes: object = None,
        args: Iterable[Any] | None = None,
        output_signature: object = None,
    ) -> Dataset:
        """``tf.data.Dataset.from_generator``: the elements ``generator(*args)`` yields, called
        anew for each iteration. The type arguments are accepted for tf.data's sake (elements
        are Python and NumPy values here, so nothing is converted)."""
    def interleave(self, cycle_length: int, block_length: int = 1) -> Self:
        """Reads ``cycle_length`` files at a time, ``block_length`` records from each in turn
        (tf.data's ``interleave`` of a ``TFRecordDataset`` per file of the list). It chooses and
        orders files, so it comes before every record stage."""
    def shard(self, num_shards: int, index: int, by: Literal["record", "file"] = "record") -> Self:
        """Keeps part ``index`` of ``num_shards``: every ``num_shards``-th element of the
        stream so far (``by="record"``, tf.data's meaning; batches after ``batch``), or whole
        files (``by="file"``: a file-level stage, a ``ValueError`` with fewer files than
        shards)."""
    def shuffle(self, buffer_size: int, seed: int | None = None, reshuffle_each_iteration: bool = True) -> Self:
        """Shuffles through a buffer of ``buffer_size`` elements. ``seed=None`` draws a seed
        for each iteration, as tf.data does; with ``reshuffle_each_iteration`` each pass of a
        later ``repeat`` gets a new order."""
    def repeat(self, count: int | None = None) -> Self:
        """Goes over the stream so far ``count`` times (``None`` or -1: forever)."""
    def skip(self, count: int) -> Self:
        """Drops the first ``count`` elements (-1: all of them)."""
    def take(self, count: int) -> Self:
        """Keeps at most ``count`` elements (-1: all of them)."""
    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
    ) -> Self:
        """Groups ``batch_size`` elements; the last, smaller batch is dropped with
        ``drop_remainder``. Records become lists of ``bytes``; arrays are stacked."""
    def parse(
        self,
        features: _Features | None = None,
        context_features: _Features | None = None,
        sequence_features: _Features | None = None,
        *,
        strings: _Strings = "object",
    ) -> Self:
        """Parses Examples with ``features`` (``parse_example`` of each batch, or
        ``parse_single_example`` of each record when not batched), or SequenceExamples with
        ``context_features`` / ``sequence_features`` (yielding ``(context, feature_lists,
        lengths)``). ``strings``: the form of string features, ``"object"`` (object arrays of
        ``bytes``), ``"numpy"`` (``StringDType``) or ``"arrow"`` (pyarrow ``binary``), as in
        :mod:`tfrec.io`. The specs are checked now."""
    # The element type depends on the stages (records, batches, parsed dicts, what a map
    # returns): a map function takes and returns anything.
    def map(
        self,
        map_func: Callable[..., Any],
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Self:
        """Applies ``map_func`` to each element (a tuple element is its arguments, as in
        tf.data). It runs on the iterating thread; ``num_parallel_calls`` (``AUTOTUNE``
        included) is accepted for tf.data's sake: reading and parsing already run on the
        pipeline's threads."""
    def filter(self, predicate: Callable[..., object], name: str | None = None) -> Self:
        """Keeps the elements for which ``predicate`` is true."""
    def prefetch(self, buffer_size: int | None, name: str | None = None) -> Self:
        """Batches kept ready ahead of the consumer (``AUTOTUNE``: the default, 2)."""
    def threads(self, threads: int) -> Self:
        """Worker threads reading and parsing (default 1: one core; each worker in turn reads a
        batch, then parses it while another reads). With two or more, one file is also read on
        every worker, in spans taken back in file order: a plain file, or a GZIP or ZLIB file
        with its seek index (``tfrec index FILE``); the batches are those of one thread."""
    def deterministic(self, deterministic: bool = True) -> Self:
        """``False`` hands batches over as they finish rather than in order."""
    def cardinality(self) -> int:
        """The number of elements when known (tf.data's rules): ``INFINITE_CARDINALITY``
        (-1) after an endless ``repeat``, ``UNKNOWN_CARDINALITY`` (-2) for records of files
        (their count is only known by reading them) unless a ``take`` bounds it."""
    def __len__(self) -> int: ...
    @property
    def element_spec(self) -> str:
        """What an element is, in words (``"bytes"``, ``"list of bytes"``, ``"dict of
        arrays"``, …)."""
    @property
    def batch_size(self) -> int | None:
        """The size of the first ``batch`` stage, or ``None``."""
    def __getstate__(self) -> dict[str, Any]: ...
    def __setstate__(self, state: dict[str, Any]) -> None: ...
    # Elements are ``bytes``, lists of ``bytes``, dicts of arrays, ``(context, feature_lists,
    # lengths)`` tuples or what a ``map`` returns, depending on the stages.
    def __iter__(self) -> Iterator[Any]: ...
    def as_numpy_iterator(self) -> Iterator[Any]:
        """The elements with lists of ``bytes`` as NumPy object arrays, as tf.data's
        ``as_numpy_iterator`` gives them (everything else is NumPy already)."""
    def iterator(self) -> _tfrec.DatasetIterator:
        """The running Rust pipeline, with ``stats()``; iterate it for the raw (unwrapped)
        items. Only for data sets whose every stage runs in Rust."""
    def to_arrow(self, spec: _SpecArg | None = None, *, utf8: bool = False, batch_rows: int = 65536) -> ArrowStream:
        """The pipeline's output as Arrow record batches: a :class:`tfrec.arrow.ArrowStream`
        (``__arrow_c_stream__``, so ``pyarrow.table(ds.to_arrow())`` and
        ``polars.DataFrame(ds.to_arrow())`` take it without a copy). The columns follow the
        specs of ``parse`` (or ``spec``, when the pipeline has no parse stage; see
        :func:`tfrec.arrow.read` for the column types) and are made by the worker threads; a
        batch holds the pipeline's ``batch`` size, or ``batch_rows`` rows when it has none."""

class _DatasetWriter:
    """``tf.data.experimental.TFRecordWriter``: ``write(dataset)`` writes every record of a data
    set (or any iterable of records) to ``filename`` and closes it."""
    def __init__(self, filename: str | os.PathLike[str], compression_type: str | None = None) -> None: ...
    def write(self, dataset: Iterable[_Record]) -> None: ...

class experimental:
    """``tf.data.experimental``: what of it tfrec has."""
    TFRecordWriter = _DatasetWriter
    AUTOTUNE: Final = -1
    INFINITE_CARDINALITY: Final = -1
    UNKNOWN_CARDINALITY: Final = -2

class TFRecordDataset(Dataset):
    """``tf.data.TFRecordDataset``: the records of files (paths, glob patterns, object store
    URLs, or file objects with ``read()``) as ``bytes``, with every stage of :class:`Dataset`.

    ``compression_type``: ``None`` decides per file from its extension, else its first bytes;
    ``""``/``"NONE"``, ``"GZIP"``, ``"ZLIB"`` force one. ``num_parallel_reads`` reads that
    many files at a time, a record from each in turn (tf.data's deterministic order). A
    damaged record raises :class:`tfrec.errors.DataLossError` naming the file, byte offset and
    record index, unless ``on_corruption`` is ``"skip"`` (skip the damaged record,
    resynchronising) or ``"skip_file"`` (skip the rest of that file). ``torn_tail="skip"``
    accepts a partial record header at the end of a file (one still being written); by
    default it is reported, where TensorFlow silently drops it."""
    def __init__(
        self,
        filenames: _Inputs,
        compression_type: str | TFRecordOptions | None = None,
        buffer_size: int | None = None,
        num_parallel_reads: int | None = None,
        on_corruption: _OnCorruption = "raise",
        torn_tail: _TornTail = "raise",
        verify_crc: bool = True,
    ) -> None: ...
    def records(self) -> _tfrec.RecordIterator:
        """The files' records through the plain reader (with ``stats()`` and ``problems()``),
        ignoring the stages."""

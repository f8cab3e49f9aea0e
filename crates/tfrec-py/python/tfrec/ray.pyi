"""Ray Data on TFRecord files: :func:`read_tfrecords` (a ``ray.data.Datasource`` whose read
tasks parse with tfrec in the workers, one task per file or per byte range of a large plain
file), :func:`write_tfrecords` (a ``ray.data.Datasink`` writing one shard per block), and
:func:`generate_statistics` (``tfrec.stats``' statistics computed on Ray's workers, the same bytes
as one process).

Ray schedules the work, on one machine or a cluster; tfrec only reads and writes.

>>> import ray, tfrec.ray
>>> ds = tfrec.ray.read_tfrecords("gs-mount/train-*.tfrecord")
>>> ds = ds.filter(lambda row: row["label"] == 1)
>>> tfrec.ray.write_tfrecords(ds, "/data/positives")
"""

import os
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypedDict

import ray.data
from ray.data import Datasink, Datasource, ReadTask
from ray.data._internal.execution.interfaces import TaskContext
from ray.data.block import Block
from ray.data.context import DataContext
from ray.data.datasource.datasink import WriteResult

from ._records import _Paths
from .arrow import _SpecArg
from .errors import DataLossError
from .stats import StatsOptions

__all__ = ["TFRecordDatasource", "TFRecordDatasink", "TFRecordReadError", "generate_statistics", "read_tfrecords",
           "write_tfrecords"]

MIN_SPLIT_BYTES: int

class _Skipped(TypedDict):
    skipped_regions: int
    skipped_bytes: int
    by_file: dict[str, int]
    problems: list[str]

class TFRecordReadError(DataLossError):
    """A damaged record met by a Ray read task: ``path``, ``offset`` and ``record_index`` of
    the damage (kept across the process boundary, unlike a plain exception's attributes)."""
    def __reduce__(self) -> tuple[Callable[[str, dict[str, Any]], TFRecordReadError], tuple[str, dict[str, Any]]]: ...

class TFRecordDatasource(Datasource):
    """A Ray Data source of ``tf.train.Example`` TFRecord files, parsed to Arrow by tfrec in the
    read tasks. See :func:`read_tfrecords`."""
    def __init__(
        self,
        paths: _Paths,
        spec: _SpecArg | None = None,
        *,
        compression: str | None = None,
        utf8: bool = False,
        on_corruption: Literal["fail", "skip"] = "fail",
        batch_rows: int = 65536,
        infer_rows: int = 1000,
        split_bytes: int | None = None,
    ) -> None: ...
    def supports_projection_pushdown(self) -> bool: ...
    def estimate_inmemory_data_size(self) -> int: ...
    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, data_context: DataContext | None = None
    ) -> list[ReadTask]: ...
    def skipped(self) -> _Skipped:
        """What the read tasks skipped so far with ``on_corruption="skip"``: a dict with
        ``skipped_regions``, ``skipped_bytes``, ``by_file`` and ``problems`` (messages naming
        file and offset). Complete once the dataset has been consumed."""

def read_tfrecords(
    paths: _Paths,
    spec: _SpecArg | None = None,
    *,
    compression: str | None = None,
    utf8: bool = False,
    on_corruption: Literal["fail", "skip"] = "fail",
    override_num_blocks: int | None = None,
    batch_rows: int = 65536,
    infer_rows: int = 1000,
    split_bytes: int | None = None,
    **ray_kwargs: Any,
) -> ray.data.Dataset:
    """A ``ray.data.Dataset`` of the Examples in TFRecord files, one column per feature.

    ``paths``: files, directories or globs. ``spec``: the features (``tfrec.io`` specs or the
    JSON spec form); ``None`` infers one from the first ``infer_rows`` records (once, on the
    driver, so every block has the same schema). ``utf8``: strings as Arrow ``utf8`` rather
    than ``binary``. ``compression``: ``None`` (per file), ``""``, ``"GZIP"``, ``"ZLIB"``.

    Each read task parses its files (or byte ranges of plain files larger than
    ``split_bytes``, by default their share of the data set and at least 64 MiB) with tfrec
    into Arrow tables; with a ``FILE.idx`` index (``tfrec index``) beside a plain file, the
    ranges start at records and each task's row count is known before reading. Only the
    columns the pipeline uses are parsed (Ray's projection pushdown).

    ``on_corruption="fail"``: a damaged record fails the job with :class:`TFRecordReadError`
    naming file and offset. ``"skip"``: damaged regions are skipped (the reader resyncs),
    with a warning; the dataset's ``tfrec_source.skipped()`` counts them once it has run.
    Other keyword arguments go to ``ray.data.read_datasource`` (``num_cpus``, ``concurrency``…).
    """

class TFRecordDatasink(Datasink[list[tuple[str, int]]]):
    # Set by ``on_write_complete``, once the write has run.
    """A Ray Data sink writing each block as one TFRecord file of ``tf.train.Example``
    (``part-{task:05d}-{block:05d}.tfrecord`` in a directory). See :func:`write_tfrecords`."""
    files: list[str]
    records_written: int
    def __init__(self, path: str | os.PathLike[str], *, compression: str | None = None) -> None: ...
    def on_write_start(self, schema: Any | None = None) -> None: ...
    def write(self, blocks: Iterable[Block], ctx: TaskContext) -> list[tuple[str, int]]: ...
    def on_write_complete(self, write_result: WriteResult[list[tuple[str, int]]]) -> None: ...

def write_tfrecords(
    dataset: ray.data.Dataset, path: str | os.PathLike[str], *, compression: str | None = None, **ray_kwargs: Any
) -> TFRecordDatasink:
    """Writes a ``ray.data.Dataset`` as TFRecord files of ``tf.train.Example`` in directory
    ``path`` (or under an object store URL prefix such as ``s3://bucket/out/``), one file per block (``part-{task:05d}-{block:05d}.tfrecord``, ``.gz``/``.zlib``
    with ``compression="GZIP"``/``"ZLIB"``), each written by its write task through
    ``tfrec.arrow.write`` (integers → int64, floating → float, strings/binary → bytes, lists
    → list features, nulls → absent features). Returns the sink (``files``,
    ``records_written``)."""

def generate_statistics(
    data_location: _Paths | ray.data.Dataset,
    stats_options: StatsOptions | None = None,
    output_path: str | os.PathLike[str] | None = None,
    *,
    compression_type: str | None = None,
    on_corruption: str = "raise",
    kind: str = "auto",
    column: str | None = None,
    **ray_kwargs: Any,
) -> Any:
    """``tfrec.stats.generate_statistics_from_tfrecord`` on Ray.

    ``data_location`` is either TFRecord files or a ``ray.data.Dataset`` of serialized records.

    Files (paths, globs, directories or object store URLs, expanded by the library's rules):
    each file is read and accumulated by a Ray task into partial statistics (bytes), and the
    driver merges them in file order and finishes them, as one process merges its files'
    partials: the result is the same bytes as ``tfrec.stats.generate_statistics_from_tfrecord``
    on the same files with the same options. ``ray_kwargs`` go to ``map_batches``
    (``num_cpus``, ``concurrency``...).

    A ``ray.data.Dataset``: one row per serialized ``tf.train.Example`` (or SequenceExample,
    by ``kind``) in a binary column, ``column`` or else the Dataset's only binary column (so
    ``ray.data.read_binary_files`` of files that each hold one serialized record, or
    ``ray.data.from_items([{"record": data}, ...])``). The Dataset is run, a Ray task per block
    computes the block's partial statistics through the library, and the driver merges them in
    block order: the same bytes as ``generate_statistics_from_tfrecord`` on files that each hold
    one block's records, in block order (and, for a Dataset of one block, as on one file of its
    records). ``compression_type``, ``on_corruption`` and ``sample_rate`` concern files and are
    refused; ``ray_kwargs`` go to the block tasks' ``options`` (``num_cpus``, ``memory``...).

    Written to ``output_path`` (binary) when given; returns the statistics as ``tfrec.stats``
    gives them."""

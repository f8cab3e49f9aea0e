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

import functools
import logging
import os
import warnings

import ray
from ray.data import Datasink, Datasource, ReadTask
from ray.data.block import BlockAccessor, BlockMetadata

from . import _tfrec, arrow as _arrow
from ._records import is_stream as _is_stream
from .errors import DataLossError

__all__ = ["TFRecordDatasource", "TFRecordDatasink", "TFRecordReadError", "generate_statistics", "read_tfrecords",
           "write_tfrecords"]

logger = logging.getLogger(__name__)

# A plain file larger than this (or than its share of the data set, if larger) is read by
# several tasks, each taking the records that start in its byte range.
MIN_SPLIT_BYTES = 64 << 20


class TFRecordReadError(DataLossError):
    """A damaged record met by a Ray read task: ``path``, ``offset`` and ``record_index`` of
    the damage (kept across the process boundary, unlike a plain exception's attributes)."""

    def __reduce__(self):
        attrs = {k: getattr(self, k, None) for k in ("path", "offset", "record_index", "kind", "tf_offset")}
        return (_rebuild_read_error, (self.message, attrs))


def _rebuild_read_error(message, attrs):
    return TFRecordReadError(message, **attrs)


def _expand(paths):
    """The files of paths, directories and globs, by the library's rules (as ``tfrec.Dataset``
    and ``tfrec count`` take them): directories walked at any depth, leaving out names that
    start with ``.`` or ``_`` (Spark's ``_temporary/``), index files and other files that hold
    no records; a file named or matched by a glob is read."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    inputs = []
    for p in paths:
        if _is_stream(p):
            raise TypeError("Ray's read tasks open their inputs themselves: give paths or object store URLs, "
                            "not file objects")
        inputs.append(os.fsdecode(p))
    if not inputs:
        raise ValueError("no input files given")
    return _tfrec.expand_inputs(inputs)


def _is_url(path):
    """Whether ``path`` names an object in a store, by the library's rules (``file://`` is a
    local path)."""
    return _tfrec.is_url(path)


@ray.remote(num_cpus=0)
class _SkipCounter:
    """Where read tasks report what they skipped with ``on_corruption="skip"``."""

    def __init__(self):
        self.regions = {}
        self.bytes = 0
        self.problems = []

    def add(self, path, regions, skipped_bytes, problems):
        self.regions[path] = self.regions.get(path, 0) + regions
        self.bytes += skipped_bytes
        self.problems += problems

    def report(self):
        return {
            "skipped_regions": sum(self.regions.values()),
            "skipped_bytes": self.bytes,
            "by_file": dict(self.regions),
            "problems": list(self.problems),
        }


def _read_unit(unit, spec, columns, batch_rows, utf8, compression, on_corruption, counter):
    """The Arrow batches of one read unit (a file, or a byte range of a plain file)."""
    path, byte_range, _, _ = unit
    stream = _arrow.read(
        path,
        spec,
        columns=columns,
        batch_rows=batch_rows,
        byte_range=byte_range,
        utf8=utf8,
        compression=compression,
        on_corruption="skip" if on_corruption == "skip" else "raise",
    )
    try:
        yield from stream
    except DataLossError as e:
        # Raised again as a class that keeps its attributes across Ray's process boundary.
        where = f"{e.path or path} at offset {e.offset}" if e.offset is not None else (e.path or path)
        raise TFRecordReadError(
            f"tfrec.ray read task: damaged record in {where}: {e.message}",
            path=e.path or path,
            offset=e.offset,
            record_index=e.record_index,
            kind=e.kind,
            tf_offset=getattr(e, "tf_offset", None),
        ) from None
    stats = stream.stats() or {}
    regions = stats.get("skipped_regions", 0) + stats.get("skipped_files", 0)
    if regions:
        problems = stats.get("problems", [])
        msg = f"tfrec.ray: {path}: skipped {regions} damaged region(s), {stats.get('skipped_bytes', 0)} bytes"
        warnings.warn(msg)
        logger.warning("%s: %s", msg, "; ".join(problems))
        if counter is not None:
            ray.get(counter.add.remote(path, regions, stats.get("skipped_bytes", 0), problems))


def _read_units(units, spec, columns, batch_rows, utf8, compression, on_corruption, counter):
    import pyarrow as pa

    for unit in units:
        for batch in _read_unit(unit, spec, columns, batch_rows, utf8, compression, on_corruption, counter):
            yield pa.Table.from_batches([batch])


class TFRecordDatasource(Datasource):
    """A Ray Data source of ``tf.train.Example`` TFRecord files, parsed to Arrow by tfrec in the
    read tasks. See :func:`read_tfrecords`."""

    def __init__(
        self,
        paths,
        spec=None,
        *,
        compression=None,
        utf8=False,
        on_corruption="fail",
        batch_rows=65536,
        infer_rows=1000,
        split_bytes=None,
    ):
        super().__init__()
        if on_corruption not in ("fail", "skip"):
            raise ValueError(f"on_corruption must be 'fail' or 'skip', not {on_corruption!r}")
        self._projection_map = None
        self._files = _expand(paths)
        self._total_size = None
        self._spec = spec if spec is not None else _arrow.infer_spec(self._files, rows=infer_rows)
        self._compression = compression
        self._utf8 = utf8
        self._on_corruption = on_corruption
        self._batch_rows = batch_rows
        self._split_bytes = split_bytes
        self._counter = _SkipCounter.remote() if on_corruption == "skip" else None
        self._schema = self._arrow_schema()

    def _arrow_schema(self):
        stream = _arrow.read(self._files[0], self._spec, batch_rows=1, utf8=self._utf8, compression=self._compression)
        return stream.arrow_schema

    def supports_projection_pushdown(self):
        return True

    def estimate_inmemory_data_size(self):
        # Asked for more than once (by Ray and by `get_read_tasks`): an object's size costs a
        # request, so it is taken once.
        if self._total_size is None:
            self._total_size = sum(_tfrec.file_size(f) for f in self._files)
        return self._total_size

    def _units(self, parallelism):
        total = self.estimate_inmemory_data_size()
        split = self._split_bytes or max(MIN_SPLIT_BYTES, -(-total // max(parallelism, 1)))
        if self._on_corruption == "skip":
            # Skipping resynchronises past damage from the start of a file, so each file is
            # read whole by one task.
            split = None
        # (path, byte_range or None, num_rows or None, size), by the library's rules.
        return _tfrec.plan_read_units(self._files, self._compression, split)

    def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
        columns = self._get_data_columns()
        read_columns = columns
        schema = self._schema
        if columns is not None:
            names = set(schema.names)
            unknown = [c for c in columns if c not in names]
            if unknown:
                raise KeyError(f"tfrec.ray: no feature {unknown[0]!r} in the spec")
            if not columns:
                # No column at all (count()): Ray takes a table without columns for an empty
                # block, so one feature is parsed and kept for the row count.
                columns = schema.names[:1]
            read_columns = columns
            schema = schema.empty_table().select(columns).schema
        units = self._units(parallelism)
        # One task per unit when there are no more units than asked for; else consecutive
        # units share tasks, so thousands of small files do not make thousands of tasks.
        n_tasks = max(1, min(len(units), parallelism if parallelism > 0 else len(units)))
        groups = [units[i * len(units) // n_tasks : (i + 1) * len(units) // n_tasks] for i in range(n_tasks)]
        tasks = []
        for group in groups:
            rows = [u[2] for u in group]
            metadata = BlockMetadata(
                num_rows=None if any(r is None for r in rows) else sum(rows),
                size_bytes=sum(u[3] for u in group),
                input_files=sorted({u[0] for u in group}),
                exec_stats=None,
            )
            read_fn = functools.partial(
                _select_columns,
                columns,
                _read_units,
                group,
                self._spec,
                read_columns,
                self._batch_rows,
                self._utf8,
                self._compression,
                self._on_corruption,
                self._counter,
            )
            tasks.append(ReadTask(read_fn, metadata, schema=schema, per_task_row_limit=per_task_row_limit))
        return tasks

    def skipped(self):
        """What the read tasks skipped so far with ``on_corruption="skip"``: a dict with
        ``skipped_regions``, ``skipped_bytes``, ``by_file`` and ``problems`` (messages naming
        file and offset). Complete once the dataset has been consumed."""
        if self._counter is None:
            return {"skipped_regions": 0, "skipped_bytes": 0, "by_file": {}, "problems": []}
        return ray.get(self._counter.report.remote())


def _select_columns(columns, read, *args):
    for table in read(*args):
        yield table if columns is None else table.select(columns)


def read_tfrecords(
    paths,
    spec=None,
    *,
    compression=None,
    utf8=False,
    on_corruption="fail",
    override_num_blocks=None,
    batch_rows=65536,
    infer_rows=1000,
    split_bytes=None,
    **ray_kwargs,
):
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
    source = TFRecordDatasource(
        paths,
        spec,
        compression=compression,
        utf8=utf8,
        on_corruption=on_corruption,
        batch_rows=batch_rows,
        infer_rows=infer_rows,
        split_bytes=split_bytes,
    )
    ds = ray.data.read_datasource(source, override_num_blocks=override_num_blocks, **ray_kwargs)
    try:
        ds.tfrec_source = source
    except AttributeError:  # a Dataset that refuses attributes: the source is still reachable
        pass
    return ds


class TFRecordDatasink(Datasink):
    """A Ray Data sink writing each block as one TFRecord file of ``tf.train.Example``
    (``part-{task:05d}-{block:05d}.tfrecord`` in a directory). See :func:`write_tfrecords`."""

    def __init__(self, path, *, compression=None):
        self._path = os.fspath(path)
        self._compression = compression or None

    def on_write_start(self, schema=None):
        if not _is_url(self._path):
            os.makedirs(self._path, exist_ok=True)

    def _suffix(self):
        c = (self._compression or "").upper()
        return {"GZIP": ".tfrecord.gz", "ZLIB": ".tfrecord.zlib"}.get(c, ".tfrecord")

    def write(self, blocks, ctx):
        written = []
        for i, block in enumerate(blocks):
            table = BlockAccessor.for_block(block).to_arrow()
            if table.num_rows == 0:
                continue
            part = f"part-{ctx.task_idx:05d}-{i:05d}{self._suffix()}"
            if _is_url(self._path):
                # An upload is atomic already: the object appears whole when it completes.
                name = self._path.rstrip("/") + "/" + part
                n = _arrow.write(table, name, compression=self._compression)
            else:
                name = os.path.join(self._path, part)
                tmp = name + ".tmp"
                n = _arrow.write(table, tmp, compression=self._compression)
                os.replace(tmp, name)
            written.append((name, n))
        return written

    def on_write_complete(self, write_result):
        self.files = [name for ret in write_result.write_returns for name, _ in ret]
        self.records_written = sum(n for ret in write_result.write_returns for _, n in ret)


def write_tfrecords(dataset, path, *, compression=None, **ray_kwargs):
    """Writes a ``ray.data.Dataset`` as TFRecord files of ``tf.train.Example`` in directory
    ``path`` (or under an object store URL prefix such as ``s3://bucket/out/``), one file per block (``part-{task:05d}-{block:05d}.tfrecord``, ``.gz``/``.zlib``
    with ``compression="GZIP"``/``"ZLIB"``), each written by its write task through
    ``tfrec.arrow.write`` (integers → int64, floating → float, strings/binary → bytes, lists
    → list features, nulls → absent features). Returns the sink (``files``,
    ``records_written``)."""
    sink = TFRecordDatasink(path, compression=compression)
    dataset.write_datasink(sink, **ray_kwargs)
    return sink


def _option_kwargs(stats_options, kind):
    from .stats import StatsOptions

    options = stats_options or StatsOptions()
    return dict(
        num_top_values=options.num_top_values,
        num_rank_histogram_buckets=options.num_rank_histogram_buckets,
        num_values_histogram_buckets=options.num_values_histogram_buckets,
        num_histogram_buckets=options.num_histogram_buckets,
        num_quantiles_histogram_buckets=options.num_quantiles_histogram_buckets,
        epsilon=options.epsilon,
        kind=kind,
        sample_rate=options.sample_rate,
        feature_allowlist=options.feature_allowlist,
    )


def _partials_of_files(batch, options, compression_type, on_corruption):
    """A Ray batch of files (``index``, ``path``) → their partial statistics, in a worker."""
    partials, counts = [], []
    for path in batch["path"]:
        partial, read = _tfrec.stats_partial_of_file(
            str(path), compression_type=compression_type, on_corruption=on_corruption, **options)
        partials.append(partial)
        counts.append(list(read))
    import pyarrow as pa

    # Arrow's binary type keeps the bytes whole (NumPy's fixed-width bytes would drop
    # trailing zero bytes).
    return pa.table({
        "index": pa.array([int(i) for i in batch["index"]], pa.int64()),
        "partial": pa.array(partials, pa.binary()),
        "read": pa.array(counts, pa.list_(pa.uint64())),
    })


def _records_column(dataset, column):
    """The column of ``dataset`` that holds the serialized records: ``column`` when given (it
    must be binary), else the only binary column (``bytes`` of ``ray.data.read_binary_files``)."""
    import pyarrow as pa

    schema = dataset.schema(fetch_if_missing=True)
    if schema is None:
        return column
    names, types = list(schema.names), list(schema.types)
    binary = [n for n, t in zip(names, types) if isinstance(t, pa.DataType) and (pa.types.is_binary(t) or pa.types.is_large_binary(t))]
    if column is None:
        if len(binary) != 1:
            raise ValueError(
                f"tfrec.ray.generate_statistics: the Dataset has {len(binary)} binary columns ({binary}) among "
                f"{names}: name the one holding the serialized records with column=")
        return binary[0]
    if column not in names:
        raise KeyError(f"tfrec.ray.generate_statistics: no column {column!r} in the Dataset (columns: {names})")
    return column


def _partial_of_block(block, index, column, options):
    """One block's partial statistics (bytes) and read counts, in a worker: the serialized
    records of ``column``, in row order."""
    from .errors import TfrecError

    table = BlockAccessor.for_block(block).to_arrow().select([column])
    try:
        partial, read = _tfrec.stats_partial_of_arrow(table.__arrow_c_stream__(), **options)
    except TfrecError as e:
        # The library names the record by its row in the block; the block is named here.
        raise type(e)(f"tfrec.ray: block {index}: {e.message}") from None
    except ValueError as e:
        raise ValueError(f"tfrec.ray: block {index}: {e}") from None
    return partial, tuple(read)


def _statistics_of_dataset(dataset, options, column, ray_kwargs):
    """The partials of a Dataset's blocks, in block order: the Dataset is run to the end (its
    blocks kept in Ray's object store, spilled to disk as Ray does), and one task per block
    computes that block's partial."""
    if options["sample_rate"] is not None:
        raise ValueError("tfrec.ray.generate_statistics: sample_rate applies to files; sample a Dataset "
                         "with Dataset.random_sample before")
    column = _records_column(dataset, column)
    materialized = dataset.materialize()
    refs = materialized.to_arrow_refs()
    task = ray.remote(_partial_of_block)
    if ray_kwargs:
        task = task.options(**ray_kwargs)
    block_options = {k: v for k, v in options.items() if k != "sample_rate"}
    partials = ray.get([task.remote(ref, i, column, block_options) for i, ref in enumerate(refs)])
    counted, expected = sum(read[0] for _, read in partials), materialized.count()
    if counted != expected:
        # Blocks that Ray hands over sliced (rows of a block that are not the Dataset's) would
        # be counted whole: refused rather than wrong figures.
        raise RuntimeError(f"tfrec.ray.generate_statistics: the blocks held {counted} records, the Dataset "
                           f"{expected}")
    return partials


def generate_statistics(data_location, stats_options=None, output_path=None, *, compression_type=None,
                        on_corruption="raise", kind="auto", column=None, **ray_kwargs):
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
    from . import stats as _stats

    options = _option_kwargs(stats_options, kind)
    if isinstance(data_location, ray.data.Dataset):
        if compression_type is not None or on_corruption != "raise":
            raise ValueError("tfrec.ray.generate_statistics: compression_type and on_corruption apply to "
                             "files, not to a Dataset of records")
        partials = _statistics_of_dataset(data_location, options, column, ray_kwargs)
    else:
        if column is not None:
            raise ValueError("tfrec.ray.generate_statistics: column applies to a Dataset, not to files")
        partials = _statistics_of_files(data_location, options, compression_type, on_corruption, ray_kwargs)
    data = _tfrec.stats_merge_partials(partials, **options)
    if output_path is not None:
        with open(output_path, "wb") as f:
            f.write(data)
    return _stats._message(data)


def _statistics_of_files(data_location, options, compression_type, on_corruption, ray_kwargs):
    """The partials of the files of ``data_location``, in file order, one Ray task per file."""
    files = _expand(data_location)
    items = [{"index": i, "path": path} for i, path in enumerate(files)]
    ds = ray.data.from_items(items, override_num_blocks=max(1, len(items)))
    ds = ds.map_batches(_partials_of_files, batch_size=1, batch_format="numpy", fn_kwargs=dict(
        options=options, compression_type=compression_type, on_corruption=on_corruption), **ray_kwargs)
    rows = sorted(ds.take_all(), key=lambda row: row["index"])
    return [(bytes(row["partial"]), tuple(int(n) for n in row["read"])) for row in rows]

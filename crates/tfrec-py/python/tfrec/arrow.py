"""TFRecord files as Apache Arrow data, and Arrow data as TFRecord files.

``read`` parses Examples (or SequenceExamples) with a spec into Arrow record batches, exported
through the Arrow PyCapsule interface (``__arrow_c_stream__``): ``pyarrow.table(stream)`` (a
``pyarrow.Table``), ``polars.DataFrame(stream)`` (a ``polars.DataFrame``) and DuckDB take the
batches without a copy; ``tfrec.polars.read(...)`` gives the DataFrame in one call. Note that
``polars.from_arrow(stream)`` gives one ``Struct`` Series, not a DataFrame: Polars makes any
stream that is not a pyarrow object a Series (``polars.from_arrow(pyarrow.table(stream))`` is a
DataFrame). Without a spec, one is inferred from the first ``infer_rows`` records
(``infer_spec``). ``write`` turns anything with ``__arrow_c_stream__`` (a pyarrow Table or
RecordBatchReader, a Polars DataFrame) into Examples; ``write_parquet`` writes it (or the
stream of ``read``) as a Parquet file, with the writer and the bytes of ``tfrec convert``.

The columns come in the spec's order: the order of the keys of the dict (or JSON) given, for
a sequence spec the context features then the feature lists; with ``columns=``, that list's
order.

Column types follow the spec: a ``FixedLenFeature`` is a primitive column (``FixedSizeList`` for
a shape), a ``VarLenFeature`` a ``List``, a ``RaggedFeature`` nested ``List``s, a
``SparseFeature`` a struct of index and value lists, a sequence feature list a list of steps. A
record that lacks a feature is NULL there (a ``FixedLenFeature`` takes its default, or the read
fails as ``tf.io.parse_example`` does).

>>> stream = tfrec.arrow.read("data.tfrecord", {"age": tfrec.io.FixedLenFeature([], tfrec.int64)})
>>> table = stream.read_all()                      # a pyarrow.Table
>>> df = polars.DataFrame(stream)                  # a polars.DataFrame
>>> tfrec.arrow.write(table, "copy.tfrecord")
>>> tfrec.arrow.write_parquet(tfrec.arrow.read("data.tfrecord", spec), "data.parquet")
"""

import json
import os
import warnings

from . import _tfrec
from ._records import is_stream as _is_stream, streams as _streams
from ._specs import spec_dict

__all__ = ["ArrowStream", "infer_spec", "read", "write", "write_parquet"]


def _paths(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    if any(_is_stream(p) for p in paths):
        raise TypeError("file objects are copied to a temporary file first: use tfrec.arrow.read (or pass paths)")
    return [os.fsdecode(p) for p in paths]


def _spooled(paths):
    """``(paths, directory)``: file objects (anything with ``read()``) copied into files of a
    temporary directory, which lives as long as the returned object, since Arrow batches are
    read by byte ranges and each use of a stream reads the files again; paths as they are
    (``directory`` is then ``None``)."""
    objs = _streams(paths)
    if objs is None:
        return _paths(paths), None
    import shutil
    import tempfile

    directory = tempfile.TemporaryDirectory(prefix="tfrec-arrow-")
    out = []
    for i, obj in enumerate(objs):
        target = os.path.join(directory.name, f"stream-{i:05d}")
        with open(target, "wb") as f:
            shutil.copyfileobj(obj, f, 1 << 20)
        out.append(target)
    return out, directory


def _project(spec, columns):
    if columns is None:
        return spec
    columns = list(columns)
    if "context_features" in spec or "sequence_features" in spec:
        known = set(spec.get("context_features", {})) | set(spec.get("sequence_features", {}))
    else:
        known = set(spec)
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise KeyError(f"columns not in the spec: {unknown}")
    # In the order of `columns`, as pyarrow's and Polars' readers give a projection.
    if "context_features" in spec or "sequence_features" in spec:
        return {part: {k: spec[part][k] for k in columns if k in (spec.get(part) or {})}
                for part in ("context_features", "sequence_features")}
    return {k: spec[k] for k in columns}


def infer_spec(paths, rows=1000, *, compression=None):
    """A spec (JSON form: ``{name: {"type": …}}``) inferred from the first ``rows`` records of
    ``paths``, by the rules ``tfrec schema --json`` and ``tfrec convert`` follow (the same spec
    for the same records): a ``FixedLenFeature`` of shape ``[]`` (one value) or ``[n]`` when every
    sampled record has the feature with the same number n ≥ 1 of values, else a
    ``VarLenFeature``. For SequenceExamples, ``{"context_features": …, "sequence_features": …}``,
    a feature list being a ``FixedLenSequenceFeature`` when all its sampled steps have one number
    n ≥ 1 of values (``allow_missing`` when a record lacks it), else a ``VarLenFeature``. A
    feature with no kind set, or whose kind varies between records, is left out with a
    ``UserWarning`` saying why."""
    files, _directory = _spooled(paths)
    return _infer(files, rows, compression)[0]


def _infer(paths, rows, compression):
    """The inferred spec dict and the string features found UTF-8; warns of the features left
    out (the ``stacklevel`` names the caller of the public function)."""
    text, utf8_names, skipped = _tfrec.arrow_infer_spec(paths, rows, compression)
    for name, why in skipped:
        warnings.warn(f"tfrec: feature {name!r} left out of the inferred spec: {why}", stacklevel=3)
    return json.loads(text), utf8_names


class ArrowStream:
    """TFRecord files read as Arrow record batches. Each use (an iteration, ``read_all``,
    ``pyarrow.table(stream)`` or ``polars.DataFrame(stream)`` through ``__arrow_c_stream__``)
    reads the files again. (``polars.from_arrow(stream)`` gives a ``Struct`` Series: Polars
    treats every stream that is not pyarrow's as one column.)

    Errors: iterating (and ``read_all``) raises tfrec's own classes with their attributes —
    :class:`tfrec.errors.DataLossError` with ``path`` and ``offset`` for a damaged file,
    :class:`tfrec.errors.ParseError` with ``key``, ``path`` and ``record_offset`` for a record
    that does not fit the spec, :class:`tfrec.errors.InvalidArgumentError` with ``column`` for
    a value with no column form. A consumer of the C stream (pyarrow, Polars, DuckDB) gets the
    same message, which names the file and offset, as its own error type: Arrow's C stream
    carries a message only."""

    def __init__(self, paths, spec=None, *, columns=None, batch_rows=65536, byte_range=None, utf8=False,
                 compression=None, infer_rows=1000, n_rows=None, on_corruption="raise"):
        self._paths, self._spooled = _spooled(paths)
        self._utf8_columns = None
        if spec is None:
            spec, utf8_names = _infer(self._paths, infer_rows, compression)
            # Inferred: UTF-8 only for the string features whose sampled values were all UTF-8.
            self._utf8_columns = utf8_names
        self._spec = _project(spec_dict(spec), columns)
        self._spec_text = json.dumps(self._spec)
        self._utf8 = bool(utf8)
        _tfrec.arrow_check_spec(self._spec_text, self._utf8, self._utf8_columns)
        byte_range = None if byte_range is None else (int(byte_range[0]), int(byte_range[1]))
        args = (self._paths, self._spec_text, int(batch_rows), byte_range, self._utf8, self._utf8_columns,
                compression, n_rows, on_corruption)
        # Checked now, so a bad argument fails here rather than at the first batch.
        _tfrec.arrow_batches(*args)
        self._make = lambda: _tfrec.arrow_batches(*args)
        self._last = None

    def _inputs(self):
        """The files the stream reads (none for a pipeline's stream), for the writers' check
        that an output is none of them."""
        return [] if self._paths is None else _tfrec.expand_inputs(self._paths)

    @classmethod
    def _of(cls, plan):
        """A stream over a pipeline's batches (a ``_tfrec.ArrowPlan``: each read starts the
        pipeline afresh)."""
        stream = cls.__new__(cls)
        stream._paths = None
        stream._spec_text = plan.spec
        stream._make = plan.batches
        stream._last = None
        return stream

    @property
    def schema(self):
        """The spec the columns follow, in the JSON spec form (a dict)."""
        return json.loads(self._spec_text)

    def __arrow_c_stream__(self, requested_schema=None):
        # The requested schema is a hint the protocol lets a producer ignore; the columns are
        # the spec's.
        self._last = self._make()
        return self._last.__arrow_c_stream__(requested_schema)

    def __arrow_c_schema__(self):
        return self._make().__arrow_c_schema__()

    def __iter__(self):
        """``pyarrow.RecordBatch``es, raising tfrec's typed errors."""
        import pyarrow as pa

        batches = self._last = self._make()
        for batch in batches:
            yield pa.record_batch(batch)

    def to_reader(self):
        """A ``pyarrow.RecordBatchReader`` over the batches (through the C stream)."""
        import pyarrow as pa

        return pa.RecordBatchReader.from_stream(self)

    def read_all(self):
        """All batches as one ``pyarrow.Table`` (errors typed, as when iterating)."""
        import pyarrow as pa

        return pa.Table.from_batches(list(self), schema=self.arrow_schema)

    def stats(self):
        """What the last read read and skipped: ``records``, ``skipped_regions``,
        ``skipped_bytes``, ``skipped_files`` and ``problems`` (messages naming file and offset);
        ``None`` before any read."""
        return None if self._last is None else self._last.stats()

    @property
    def arrow_schema(self):
        """The ``pyarrow.Schema`` of the batches (nothing is read)."""
        import pyarrow as pa

        return pa.schema(self)

    def __repr__(self):
        return f"ArrowStream({self._paths!r}, columns={list(self._columns_of())!r})"

    def _columns_of(self):
        spec = self.schema
        if "context_features" in spec or "sequence_features" in spec:
            return [*spec.get("context_features", {}), *spec.get("sequence_features", {})]
        return list(spec)


def read(paths, spec=None, *, columns=None, batch_rows=65536, byte_range=None, utf8=False, compression=None,
         infer_rows=1000, n_rows=None, on_corruption="raise"):
    """TFRecord files as an :class:`ArrowStream` of record batches of at most ``batch_rows``.

    ``paths``: a path, glob, directory or object store URL, or a list of them; or file objects
    with ``read()``, copied to a temporary file first (Arrow reads files by byte ranges).

    ``spec``: a dict of ``tfrec.io`` feature specs (or their JSON form, or a sequence spec with
    ``context_features`` / ``sequence_features``); ``None`` infers one from the first
    ``infer_rows`` records (Examples or SequenceExamples). The columns follow the spec's key
    order. ``columns``: parse only these features, in this order. ``byte_range=(start, end)``: only the records of one uncompressed file whose
    headers start in ``[start, end)`` (splits of a file for parallel readers). ``utf8``: strings
    as ``utf8`` columns instead of ``binary`` (a value that is not UTF-8 is then an error).
    ``n_rows``: stop after so many. ``on_corruption``: ``"raise"`` (the default, as
    TensorFlow), ``"skip"`` (skip damaged regions, losing no intact record) or ``"skip_file"``
    (abandon a damaged file's rest); :meth:`ArrowStream.stats` then counts what was skipped."""
    return ArrowStream(paths, spec, columns=columns, batch_rows=batch_rows, byte_range=byte_range, utf8=utf8,
                       compression=compression, infer_rows=infer_rows, n_rows=n_rows, on_corruption=on_corruption)


def write(data, path, compression=None):
    """Writes ``data`` (anything with ``__arrow_c_stream__``: a pyarrow Table or
    RecordBatchReader, a Polars DataFrame, an :class:`ArrowStream`) to ``path`` (a file, an
    object store URL, uploaded whole or not at all, or a file object with ``write()``) as
    Examples, one per row; returns the number written. Integers become ``int64_list``, floating point
    ``float_list``, binary and strings ``bytes_list``, booleans ``int64_list`` of 0 / 1; lists
    are flattened; a struct column gives one feature per field; NULL is an absent feature."""
    if not hasattr(data, "__arrow_c_stream__"):
        raise TypeError(f"write() needs an object with __arrow_c_stream__, not {type(data).__name__}")
    if isinstance(data, ArrowStream) and isinstance(path, (str, os.PathLike)):
        # The records are read as they are written: never over one of the files they come from.
        _tfrec.refuse_same_file(os.fsdecode(path), data._inputs())
    capsule = data.__arrow_c_stream__()
    # A path, a URL or a file object with write(): the extension tells them apart.
    return _tfrec.arrow_write(capsule, path, compression)


def write_parquet(data, path, *, threads=None):
    """Writes ``data`` to ``path`` (a file or an object store URL) as a Parquet file, a row group
    per batch, with the writer of ``tfrec convert``: Snappy-compressed, dictionary-encoded (for up
    to 4096 columns), the Arrow schema in the footer; the row groups' columns encoded on
    ``threads`` threads (default: one per core), the file's bytes the same whatever the number,
    and the encoders' memory bounded as ``convert``'s is. Returns the rows written.

    ``data`` is an :class:`ArrowStream` (``tfrec.arrow.read(...)``), whose records are then read
    and parsed as ``convert`` reads them, so the file is byte for byte the one ``tfrec convert
    --spec … -o out.parquet`` writes from the same files, spec and ``batch_rows``; or anything with
    ``__arrow_c_stream__`` (a pyarrow Table or RecordBatchReader, a Polars DataFrame), each of its
    batches a row group.

    The file is written under a temporary name beside ``path`` (``.tfrec-*.partial``) and renamed
    into place (an object uploaded) only when complete, as ``convert`` does; temporary files that
    a killed run left in that directory are removed. An output that is one of the stream's input
    files is refused (``ValueError``) before anything is written."""
    if not hasattr(data, "__arrow_c_stream__"):
        raise TypeError(f"write_parquet() needs an object with __arrow_c_stream__, not {type(data).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"write_parquet() writes to a path or a URL, not {type(path).__name__}")
    path = os.fsdecode(path)
    if isinstance(data, ArrowStream):
        _tfrec.refuse_same_file(path, data._inputs())
        # The stream's own batches, so that Rust reads and parses the records as convert does.
        source = data._last = data._make()
    else:
        source = data.__arrow_c_stream__()
    return _tfrec.arrow_write_parquet(source, path, threads)

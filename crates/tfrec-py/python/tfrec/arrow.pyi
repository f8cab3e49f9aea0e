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

import os
from collections.abc import Iterable, Iterator
from typing import Any, Literal, Protocol

# pyarrow ships no type information: its classes are ``Any`` here unless pyarrow-stubs is
# installed.
import pyarrow as pa  # type: ignore[import-untyped, import-not-found, unused-ignore]
from typing_extensions import TypeAlias

from ._records import _Inputs, _Paths, _Writable
from ._tfrec import _ArrowStats
from .io import _Features

__all__ = ["ArrowStream", "infer_spec", "read", "write", "write_parquet"]

# A spec: ``tfrec.io`` spec objects or their JSON form by feature name, a sequence spec
# (``{"context_features": …, "sequence_features": …}``), or the JSON text of one.
_SpecArg: TypeAlias = _Features | str | bytes
_OnCorruption: TypeAlias = Literal["raise", "skip", "skip_file"]

def infer_spec(paths: _Inputs, rows: int = 1000, *, compression: str | None = None) -> dict[str, Any]:
    """A spec (JSON form: ``{name: {"type": …}}``) inferred from the first ``rows`` records of
    ``paths``, by the rules ``tfrec schema --json`` and ``tfrec convert`` follow (the same spec
    for the same records): a ``FixedLenFeature`` of shape ``[]`` (one value) or ``[n]`` when every
    sampled record has the feature with the same number n ≥ 1 of values, else a
    ``VarLenFeature``. For SequenceExamples, ``{"context_features": …, "sequence_features": …}``,
    a feature list being a ``FixedLenSequenceFeature`` when all its sampled steps have one number
    n ≥ 1 of values (``allow_missing`` when a record lacks it), else a ``VarLenFeature``. A
    feature with no kind set, or whose kind varies between records, is left out with a
    ``UserWarning`` saying why."""

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
    def __init__(
        self,
        paths: _Inputs,
        spec: _SpecArg | None = None,
        *,
        columns: Iterable[str] | None = None,
        batch_rows: int = 65536,
        byte_range: tuple[int, int] | None = None,
        utf8: bool = False,
        compression: str | None = None,
        infer_rows: int = 1000,
        n_rows: int | None = None,
        on_corruption: _OnCorruption = "raise",
    ) -> None: ...
    @property
    def schema(self) -> dict[str, Any]:
        """The spec the columns follow, in the JSON spec form (a dict)."""
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...
    def __iter__(self) -> Iterator[pa.RecordBatch]:
        """``pyarrow.RecordBatch``es, raising tfrec's typed errors."""
    def to_reader(self) -> pa.RecordBatchReader:
        """A ``pyarrow.RecordBatchReader`` over the batches (through the C stream)."""
    def read_all(self) -> pa.Table:
        """All batches as one ``pyarrow.Table`` (errors typed, as when iterating)."""
    def stats(self) -> _ArrowStats | None:
        """What the last read read and skipped: ``records``, ``skipped_regions``,
        ``skipped_bytes``, ``skipped_files`` and ``problems`` (messages naming file and offset);
        ``None`` before any read."""
    @property
    def arrow_schema(self) -> pa.Schema:
        """The ``pyarrow.Schema`` of the batches (nothing is read)."""

def read(
    paths: _Inputs,
    spec: _SpecArg | None = None,
    *,
    columns: Iterable[str] | None = None,
    batch_rows: int = 65536,
    byte_range: tuple[int, int] | None = None,
    utf8: bool = False,
    compression: str | None = None,
    infer_rows: int = 1000,
    n_rows: int | None = None,
    on_corruption: _OnCorruption = "raise",
) -> ArrowStream:
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
def write(data: _ArrowStreamExportable, path: str | os.PathLike[str] | _Writable, compression: str | None = None) -> int:
    """Writes ``data`` (anything with ``__arrow_c_stream__``: a pyarrow Table or
    RecordBatchReader, a Polars DataFrame, an :class:`ArrowStream`) to ``path`` (a file, an
    object store URL, uploaded whole or not at all, or a file object with ``write()``) as
    Examples, one per row; returns the number written. Integers become ``int64_list``, floating point
    ``float_list``, binary and strings ``bytes_list``, booleans ``int64_list`` of 0 / 1; lists
    are flattened; a struct column gives one feature per field; NULL is an absent feature."""

def write_parquet(
    data: _ArrowStreamExportable, path: str | os.PathLike[str], *, threads: int | None = None
) -> int:
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

class _ArrowStreamExportable(Protocol):

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

"""Polars on TFRecord files: :func:`read`, a ``polars.DataFrame`` at once, and
:func:`scan_tfrecord`, a lazy Polars IO source parsed by tfrec.

The calls that give a DataFrame: ``tfrec.polars.read(paths, spec)``,
``scan_tfrecord(paths, spec).collect()``, ``polars.DataFrame(tfrec.arrow.read(paths, spec))``
and ``polars.from_arrow(pyarrow.table(tfrec.arrow.read(paths, spec)))``. Not
``polars.from_arrow(tfrec.arrow.read(...))``: Polars makes any Arrow stream that is not a
pyarrow object one ``Struct`` Series. Columns come in the spec's order.

The scan pushes the query's column selection down into the parse (only the features a query
uses are parsed), stops after ``n_rows``, filters each batch with the query's predicate, and
streams the files batch by batch (``tfrec.arrow.read``), so a query over files larger than
memory runs in bounded memory.

>>> import polars as pl
>>> from tfrec.polars import scan_tfrecord
>>> df = tfrec.polars.read("train-*.tfrecord", spec)     # a DataFrame
>>> (scan_tfrecord("train-*.tfrecord").select("label", "age")
...     .filter(pl.col("age") > 30).collect())
"""

from collections.abc import Iterable

import polars as pl

from ._records import _Inputs, _Paths
from .arrow import _SpecArg

__all__ = ["read", "scan_tfrecord"]

DEFAULT_BATCH_ROWS: int

def read(
    paths: _Inputs,
    spec: _SpecArg | None = None,
    *,
    columns: Iterable[str] | None = None,
    compression: str | None = None,
    utf8: bool = True,
    infer_rows: int = 1000,
    n_rows: int | None = None,
) -> pl.DataFrame:
    """TFRecord files of ``tf.train.Example`` (or SequenceExample) as a ``polars.DataFrame``,
    read now: ``polars.DataFrame(tfrec.arrow.read(...))``, with :func:`scan_tfrecord`'s string
    default (``utf8=True``: string features as ``pl.String``). The columns follow the spec's
    order (``columns``: only these, in this order); ``n_rows`` stops the read early. For a
    query over files larger than memory, :func:`scan_tfrecord`."""
def scan_tfrecord(
    paths: _Inputs, spec: _SpecArg | None = None, *, compression: str | None = None, utf8: bool = True, infer_rows: int = 1000
) -> pl.LazyFrame:
    """A ``polars.LazyFrame`` over TFRecord files of ``tf.train.Example``.

    ``paths``: a path, glob or object store URL, or a list of them; or file objects (copied
    to a temporary file once). ``spec``: the features (``tfrec.io`` specs, or the
    JSON spec form); ``None`` infers one from the first ``infer_rows`` records. ``utf8``: string
    features as ``pl.String`` (an Example holding bytes that are not UTF-8 is then an error),
    else ``pl.Binary``. ``compression``: ``None`` (per file), ``""``, ``"GZIP"`` or ``"ZLIB"``.

    Only the columns the query uses are parsed; ``head``/``limit`` stop the read early; the
    filter runs on each batch as it is parsed."""

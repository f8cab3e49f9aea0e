"""Polars on TFRecord files: :func:`scan_tfrecord`, a lazy Polars IO source parsed by tfrec.

The scan pushes the query's column selection down into the parse (only the features a query
uses are parsed), stops after ``n_rows``, filters each batch with the query's predicate, and
streams the files batch by batch (``tfrec.arrow.read``), so a query over files larger than
memory runs in bounded memory.

>>> import polars as pl
>>> from tfrec.polars import scan_tfrecord
>>> (scan_tfrecord("train-*.tfrecord").select("label", "age")
...     .filter(pl.col("age") > 30).collect())
"""

import polars as pl

from ._records import _Paths
from .arrow import _SpecArg

__all__ = ["scan_tfrecord"]

DEFAULT_BATCH_ROWS: int

def scan_tfrecord(
    paths: _Paths, spec: _SpecArg | None = None, *, compression: str | None = None, utf8: bool = True, infer_rows: int = 1000
) -> pl.LazyFrame:
    """A ``polars.LazyFrame`` over TFRecord files of ``tf.train.Example``.

    ``paths``: a path, glob or list of them. ``spec``: the features (``tfrec.io`` specs, or the
    JSON spec form); ``None`` infers one from the first ``infer_rows`` records. ``utf8``: string
    features as ``pl.String`` (an Example holding bytes that are not UTF-8 is then an error),
    else ``pl.Binary``. ``compression``: ``None`` (per file), ``""``, ``"GZIP"`` or ``"ZLIB"``.

    Only the columns the query uses are parsed; ``head``/``limit`` stop the read early; the
    filter runs on each batch as it is parsed.
    """

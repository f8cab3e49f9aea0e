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

import polars as pl
from polars.io.plugins import register_io_source

from . import arrow as _arrow

__all__ = ["read", "scan_tfrecord"]

DEFAULT_BATCH_ROWS = 65536


def _polars_schema(arrow_schema):
    """The Polars schema of the frames an Arrow schema converts to."""
    return pl.from_arrow(arrow_schema.empty_table()).schema


def _arrow_schema(paths, spec, compression, utf8):
    """The Arrow schema ``tfrec.arrow.read`` gives for ``spec``, read from the stream's header
    (no records are parsed for it)."""
    import pyarrow as pa

    stream = _arrow.read(paths, spec, compression=compression, utf8=utf8, batch_rows=1)
    reader = pa.RecordBatchReader.from_stream(stream)
    try:
        return reader.schema
    finally:
        reader.close()


def read(paths, spec=None, *, columns=None, compression=None, utf8=True, infer_rows=1000, n_rows=None):
    """TFRecord files of ``tf.train.Example`` (or SequenceExample) as a ``polars.DataFrame``,
    read now: ``polars.DataFrame(tfrec.arrow.read(...))``, with :func:`scan_tfrecord`'s string
    default (``utf8=True``: string features as ``pl.String``). The columns follow the spec's
    order (``columns``: only these, in this order); ``n_rows`` stops the read early. For a
    query over files larger than memory, :func:`scan_tfrecord`."""
    return pl.DataFrame(_arrow.read(paths, spec, columns=columns, compression=compression, utf8=utf8,
                                    infer_rows=infer_rows, n_rows=n_rows))


def scan_tfrecord(paths, spec=None, *, compression=None, utf8=True, infer_rows=1000):
    """A ``polars.LazyFrame`` over TFRecord files of ``tf.train.Example``.

    ``paths``: a path, glob or object store URL, or a list of them; or file objects (copied
    to a temporary file once). ``spec``: the features (``tfrec.io`` specs, or the
    JSON spec form); ``None`` infers one from the first ``infer_rows`` records. ``utf8``: string
    features as ``pl.String`` (an Example holding bytes that are not UTF-8 is then an error),
    else ``pl.Binary``. ``compression``: ``None`` (per file), ``""``, ``"GZIP"`` or ``"ZLIB"``.

    Only the columns the query uses are parsed; ``head``/``limit`` stop the read early; the
    filter runs on each batch as it is parsed.
    """
    # File objects are copied once, to files that live as long as the LazyFrame's source.
    paths, spooled = _arrow._spooled(paths)
    if spec is None:
        spec = _arrow.infer_spec(paths, rows=infer_rows)
    schema = _polars_schema(_arrow_schema(paths, spec, compression, utf8))
    names = list(schema.names())

    def source(with_columns, predicate, n_rows, batch_size):
        _ = spooled
        wanted = names if with_columns is None else list(with_columns)
        parse = list(wanted)
        if predicate is not None:
            # The predicate may use columns the query does not return.
            parse += [c for c in predicate.meta.root_names() if c not in parse]
        if not parse:
            parse = names[:1]
        if n_rows is not None and n_rows <= 0:
            return
        batch_rows = batch_size or DEFAULT_BATCH_ROWS
        if n_rows is not None and predicate is None:
            # Every row read is kept: parse no more than asked for.
            batch_rows = min(batch_rows, n_rows)
        stream = _arrow.read(
            paths,
            spec,
            columns=parse,
            batch_rows=batch_rows,
            compression=compression,
            utf8=utf8,
        )
        left = n_rows
        for batch in stream:
            df = pl.from_arrow(batch)
            if not isinstance(df, pl.DataFrame):  # a one-column batch may come back as a Series
                df = df.to_frame()
            if predicate is not None:
                df = df.filter(predicate)
            df = df.select(wanted)
            if left is not None:
                if df.height >= left:
                    yield df.head(left)
                    return
                left -= df.height
            yield df

    return register_io_source(
        io_source=source,
        schema=schema,
        is_pure=True,
        explain_name="tfrec",
        explain_detail=f"{len(names)} features",
    )

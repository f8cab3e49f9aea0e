"""TFRecord files and input pipelines: ``TFRecordWriter``, ``TFRecordDataset`` (records as
``bytes``) and :class:`Dataset` (the Rust pipeline: interleave, shard, shuffle, repeat,
skip/take, batch, parse on worker threads, prefetch)."""

import itertools
import json
import os

from . import _tfrec
from .train import as_bytes

__all__ = ["TFRecordWriter", "TFRecordDataset", "Dataset", "TFRecordOptions"]


def _paths(filenames):
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    out = []
    for f in filenames:
        if isinstance(f, bytes):
            f = f.decode("utf-8")
        out.append(os.fspath(f))
    if not out:
        raise ValueError("no input files given")
    return out


def _compression(compression_type):
    """TF's names; an options object with ``compression_type`` too."""
    if compression_type is None:
        return None
    ct = getattr(compression_type, "compression_type", compression_type)
    return "" if ct is None else str(ct)


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: ``compression_type`` (``""``, ``"GZIP"``, ``"ZLIB"``) and
    ``compression_level``."""

    def __init__(self, compression_type=None, compression_level=None, **_ignored):
        self.compression_type = compression_type or ""
        self.compression_level = compression_level


class TFRecordWriter:
    """``tf.io.TFRecordWriter``: writes records (``bytes``, or any message with
    ``SerializeToString()``) to ``path``, optionally GZIP or ZLIB compressed.

    Use it as a context manager; ``close()`` finishes the compressed stream.
    """

    def __init__(self, path, options=None, compression=None, compression_level=None):
        if isinstance(options, str):
            compression = options
        elif options is not None:
            compression = options.compression_type
            compression_level = getattr(options, "compression_level", compression_level)
        compression = compression or None
        if compression is not None and compression.upper() == "NONE":
            compression = None
        self._writer = _tfrec.RecordWriter(os.fspath(path), compression, compression_level)

    def write(self, record):
        self._writer.write(as_bytes(record))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    @property
    def records_written(self):
        return self._writer.records_written

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class TFRecordDataset:
    """``tf.data.TFRecordDataset``: the records of files (paths or glob patterns) as ``bytes``.

    ``compression_type``: ``None`` decides per file from its extension, else its first bytes;
    ``""``/``"NONE"``, ``"GZIP"``, ``"ZLIB"`` force one. A damaged record raises
    :class:`tfrec.errors.DataLossError` naming the file, byte offset and record index, unless
    ``on_corruption`` is ``"skip"`` (skip the damaged record, resynchronising) or
    ``"skip_file"`` (skip the rest of that file). ``torn_tail="skip"`` accepts a partial
    record header at the end of a file (one still being written); by default it is reported,
    where TensorFlow silently drops it.
    """

    def __init__(
        self,
        filenames,
        compression_type=None,
        buffer_size=None,
        num_parallel_reads=None,
        on_corruption="raise",
        torn_tail="raise",
        verify_crc=True,
    ):
        self._paths = _paths(filenames)
        self._kwargs = dict(
            compression_type=_compression(compression_type),
            on_corruption=on_corruption,
            torn_tail=torn_tail,
            verify_crc=verify_crc,
            buffer_size=buffer_size,
        )
        self._ops = []
        # Fail early on a missing file or bad option, as TF does.
        _tfrec.RecordIterator(self._paths, **self._kwargs)

    def _with(self, op):
        ds = object.__new__(TFRecordDataset)
        ds._paths, ds._kwargs, ds._ops = self._paths, self._kwargs, self._ops + [op]
        return ds

    def records(self):
        """The underlying reader (with ``stats()`` and ``problems()``)."""
        return _tfrec.RecordIterator(self._paths, **self._kwargs)

    def __iter__(self):
        it = iter(self.records())
        for op in self._ops:
            it = op(it)
        return it

    def take(self, count):
        return self._with(lambda it: itertools.islice(it, count) if count >= 0 else it)

    def skip(self, count):
        return self._with(lambda it: itertools.islice(it, count, None))

    def map(self, fn):
        return self._with(lambda it: map(fn, it))

    def filter(self, predicate):
        return self._with(lambda it: filter(predicate, it))

    def batch(self, batch_size, drop_remainder=False):
        def batches(it):
            while True:
                chunk = list(itertools.islice(it, batch_size))
                if not chunk or (drop_remainder and len(chunk) < batch_size):
                    return
                yield chunk

        return self._with(batches)

    def as_numpy_iterator(self):
        return iter(self)


def _wrap_outputs(item):
    if isinstance(item, dict):
        return _wrap_dict(item)
    if isinstance(item, tuple):
        return tuple(_wrap_dict(d) for d in item)
    return item


class Dataset:
    """The Rust input pipeline over TFRecord files (paths, directories or globs).

    Stages apply in the order of the calls, as in ``tf.data``: ``.take(5).shuffle(100)``
    shuffles the first five records, ``.shuffle(100).take(5)`` takes five of the shuffled
    stream; ``.shard(n, i).shuffle(...)`` shuffles a worker's own records, while
    ``.shuffle(..., seed=s).shard(n, i)`` splits one shuffled order (same seed on every
    worker). ``interleave`` and ``shard(..., by="file")`` choose and order files, so they must
    come before the record-level stages (a ``ValueError`` says so). Then ``batch``, and
    ``parse`` on ``threads`` worker threads with ``prefetch`` batches kept ready. Iterating
    yields ``bytes`` (no batch), lists of ``bytes`` (batched), dicts of NumPy arrays (parsed
    Examples), or ``(context, feature_lists, lengths)`` (parsed SequenceExamples). The GIL is
    released while Rust reads and parses, so other Python threads run meanwhile.

    >>> ds = (tfrec.Dataset("train-*.tfrecord").shuffle(10_000, seed=1)
    ...       .batch(1024).parse({"age": tfrec.io.FixedLenFeature([], "int64")}).threads(2))
    >>> for batch in ds: ...
    """

    def __init__(
        self, filenames, compression_type=None, on_corruption="raise", torn_tail="raise", verify_crc=True, _inner=None
    ):
        if _inner is None:
            _inner = _tfrec.Dataset(
                _paths(filenames), _compression(compression_type), on_corruption, torn_tail, verify_crc
            )
        self._inner = _inner

    def _with(self, inner):
        return Dataset(None, _inner=inner)

    def interleave(self, cycle_length, block_length=1):
        """Reads ``cycle_length`` files at a time, ``block_length`` records from each in turn."""
        return self._with(self._inner.interleave(cycle_length, block_length))

    def shard(self, num_shards, index, by="record"):
        """Keeps part ``index`` of ``num_shards``: every ``num_shards``-th record of the stream
        so far (``by="record"``, ``tf.data``'s meaning), or whole files (``by="file"``: a
        file-level stage, and a ``ValueError`` with fewer files than shards)."""
        return self._with(self._inner.shard(num_shards, index, by))

    def shuffle(self, buffer_size, seed=0, reshuffle_each_iteration=True):
        """Shuffles through a buffer of ``buffer_size`` records; with
        ``reshuffle_each_iteration`` each pass of a later ``repeat`` gets a new order."""
        return self._with(self._inner.shuffle(buffer_size, seed, reshuffle_each_iteration))

    def repeat(self, count=None):
        """Goes over the data ``count`` times (``None``: forever)."""
        return self._with(self._inner.repeat(count))

    def skip(self, count):
        return self._with(self._inner.skip(count))

    def take(self, count):
        return self._with(self._inner.take(count))

    def batch(self, batch_size, drop_remainder=False):
        return self._with(self._inner.batch(batch_size, drop_remainder))

    def parse(self, features=None, context_features=None, sequence_features=None):
        """Parses Examples with ``features`` (``parse_example`` per batch, or
        ``parse_single_example`` per record when not batched), or SequenceExamples with
        ``context_features`` / ``sequence_features``."""
        from .io import specs_to_json

        if context_features is not None or sequence_features is not None:
            specs = {
                "context_features": specs_to_json(context_features),
                "sequence_features": specs_to_json(sequence_features),
            }
            return self._with(self._inner.parse(json.dumps(specs), True))
        return self._with(self._inner.parse(json.dumps(specs_to_json(features)), False))

    def threads(self, threads):
        """Worker threads reading and parsing (default 1: one core; each worker in turn reads a
        batch, then parses it while another reads)."""
        return self._with(self._inner.threads(threads))

    def prefetch(self, batches):
        """Batches kept ready ahead of the consumer (default 2)."""
        return self._with(self._inner.prefetch(batches))

    def deterministic(self, deterministic=True):
        """``False`` hands batches over as they finish rather than in order."""
        return self._with(self._inner.deterministic(deterministic))

    def to_arrow(self, spec=None, *, utf8=False, batch_rows=65536):
        """The pipeline's output as Arrow record batches: a :class:`tfrec.arrow.ArrowStream`
        (``__arrow_c_stream__``, so ``pyarrow.table(ds.to_arrow())`` and
        ``polars.from_arrow(...)`` take it without a copy). The columns follow the specs of
        ``parse`` (or ``spec``, when the pipeline has no parse stage; see
        :func:`tfrec.arrow.read` for the column types) and are made by the worker threads; a
        batch holds the pipeline's ``batch`` size, or ``batch_rows`` rows when it has none."""
        from .arrow import ArrowStream, _spec_dict

        text = None if spec is None else json.dumps(_spec_dict(spec))
        inner = self._inner
        # Checked now: a missing or bad spec fails here, not at the first batch.
        spec_text = inner.to_arrow(text, utf8, None, batch_rows).spec
        return ArrowStream._of(lambda: inner.to_arrow(text, utf8, None, batch_rows), json.loads(spec_text))

    @property
    def batch_size(self):
        return self._inner.batch_size

    def iterator(self):
        """The running pipeline, with ``stats()``; iterate it for the raw (unwrapped) items."""
        return iter(self._inner)

    def __iter__(self):
        it = iter(self._inner)
        for item in it:
            yield _wrap_outputs(item)


from .io import _wrap_dict  # noqa: E402  (io imports this module)

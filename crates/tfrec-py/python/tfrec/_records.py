"""Writing TFRecord files (``TFRecordWriter``, ``TFRecordOptions``) and the input rules every
reader shares (paths, compression names). A leaf module: the readers, ``tfrec.io`` and the
state saver import it, and it imports none of them."""

import os

from . import _tfrec
from .train import as_bytes

__all__ = ["TFRecordWriter", "TFRecordOptions"]


def paths(filenames):
    """Paths, directories or glob patterns as a list of ``str``: one path, or any iterable of
    them (``bytes`` and ``os.PathLike`` too). A ``str`` is one path, never its characters."""
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    out = []
    for f in filenames:
        if isinstance(f, bytes):
            f = f.decode("utf-8")
        if not isinstance(f, (str, os.PathLike)):
            raise TypeError(f"a file name must be a str, bytes or os.PathLike, not {type(f).__name__}")
        out.append(os.fspath(f))
    if not out:
        raise ValueError("no input files given")
    return out


def compression(compression_type):
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

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r}, compression_level={self.compression_level!r})"


class TFRecordWriter:
    """``tf.io.TFRecordWriter``: writes records (``bytes``, or any message with
    ``SerializeToString()``) to ``path``, optionally GZIP or ZLIB compressed.

    ``write`` also takes an iterable of records (a list, a generator, an unbatched
    :class:`tfrec.data.Dataset` of records), as ``tf.data.experimental.TFRecordWriter(path).write(dataset)`` does.
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
        self._path = os.fspath(path)
        self._writer = _tfrec.RecordWriter(self._path, compression, compression_level)

    def write(self, record):
        """Writes one record, or every record of an iterable of them."""
        if isinstance(record, (bytes, bytearray, memoryview)) or hasattr(record, "SerializeToString"):
            self._writer.write(as_bytes(record))
            return
        if isinstance(record, str):
            raise TypeError("a record must be bytes (or a message), not str: encode it first")
        try:
            items = iter(record)
        except TypeError:
            raise TypeError(f"a record must be bytes or a message, not {type(record).__name__}") from None
        for item in items:
            self._writer.write(as_bytes(item))

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

    def __repr__(self):
        return f"<tfrec.TFRecordWriter {self._path!r}, {self.records_written} records>"

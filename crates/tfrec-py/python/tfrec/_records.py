"""Writing TFRecord files (``TFRecordWriter``, ``TFRecordOptions``) and the input rules every
reader shares (paths, compression names). A leaf module: the readers, ``tfrec.io`` and the
state saver import it, and it imports none of them."""

import io
import os

from . import _tfrec
from .train import as_bytes

__all__ = ["TFRecordWriter", "TFRecordOptions"]


def is_stream(obj):
    """Whether ``obj`` is read as a file object: it has ``read()`` and is not a path. A file
    opened in text mode is refused here, before its first read fails to decode records."""
    if not hasattr(obj, "read") or isinstance(obj, (str, bytes, os.PathLike)):
        return False
    if isinstance(obj, io.TextIOBase):
        raise TypeError("TFRecord files are binary: open the file in binary mode ('rb'), not text mode")
    return True


def paths(filenames):
    """Paths, directories, glob patterns or object store URLs as a list of ``str``: one, or any
    iterable of them (``bytes`` and ``os.PathLike`` too). A ``str`` is one path, never its
    characters."""
    if isinstance(filenames, (str, bytes, os.PathLike)) or is_stream(filenames):
        filenames = [filenames]
    out = []
    for f in filenames:
        if isinstance(f, bytes):
            f = f.decode("utf-8")
        if is_stream(f):
            raise TypeError("file objects are read one stream at a time: pass a file object, or a list of them, "
                            "without paths among them")
        if not isinstance(f, (str, os.PathLike)):
            raise TypeError(f"a file name must be a str, bytes or os.PathLike, not {type(f).__name__}")
        out.append(os.fspath(f))
    if not out:
        raise ValueError("no input files given")
    return out


def streams(filenames):
    """The file objects given (one, or a list or tuple of them), or ``None`` when the input is
    paths. A mix of the two is refused."""
    if is_stream(filenames):
        return [filenames]
    if isinstance(filenames, (list, tuple)) and filenames and any(is_stream(f) for f in filenames):
        if not all(is_stream(f) for f in filenames):
            raise TypeError("pass either file objects or paths, not both in one list")
        return list(filenames)
    return None


def stream_records(stream, reader, buffer_size=None):
    """The records of one file object, from where it stood when the data set was made: a
    seekable stream is read from there again on each pass, a one-way stream once."""
    stream_obj, start = stream
    if start is not None:
        stream_obj.seek(start)
    return _tfrec.RecordIterator.from_stream(stream_obj, buffer_size=buffer_size, **reader)


def stream_starts(objs):
    """``(stream, position)`` for each file object: where a new pass starts reading it
    (``None`` for a stream that cannot seek)."""
    out = []
    for obj in objs:
        start = None
        try:
            if obj.seekable():
                start = obj.tell()
        except (AttributeError, OSError, ValueError):
            start = None
        out.append((obj, start))
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

    ``path`` is a file path, an object store URL (``s3://``, ``gs://``, ``az://``: uploaded as
    it is written, the object appearing only when ``close()`` completes, and never if the
    ``with`` block raises), or a file object with ``write()`` (``BytesIO``, an fsspec file).

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
        # A path, a URL or a file object with write(): the extension tells them apart.
        self._writer = _tfrec.RecordWriter(path, compression, compression_level)

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

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            # An object upload is abandoned (nothing appears under its name); a file keeps
            # what was written, as TensorFlow's does.
            self._writer.abort()
        return False

    def __repr__(self):
        return f"<tfrec.TFRecordWriter {self._writer.path!r}, {self.records_written} records>"

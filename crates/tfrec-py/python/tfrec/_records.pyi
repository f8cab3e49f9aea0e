"""Writing TFRecord files (``TFRecordWriter``, ``TFRecordOptions``) and the input rules every
reader shares (paths, compression names). A leaf module: the readers, ``tfrec.io`` and the
state saver import it, and it imports none of them."""

import os
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Literal, Protocol

from typing_extensions import Self, TypeAlias

from .train import _Serializable

__all__ = ["TFRecordWriter", "TFRecordOptions"]

# One path or object store URL (a ``str`` is one path, never its characters), or any iterable
# of them.
_PathArg: TypeAlias = str | bytes | os.PathLike[str]
_Paths: TypeAlias = _PathArg | Iterable[_PathArg]

class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...

class _Writable(Protocol):
    def write(self, data: bytes, /) -> object: ...

# Paths, or file objects with ``read()`` (one, or a list or tuple of them).
_Inputs: TypeAlias = _Paths | _Readable | list[_Readable] | tuple[_Readable, ...]
# A record: ``bytes`` (or a buffer of them), or a message with ``SerializeToString()``.
_Record: TypeAlias = bytes | bytearray | memoryview | _Serializable

def is_stream(obj: object) -> bool:
    """Whether ``obj`` is read as a file object: it has ``read()`` and is not a path. A file
    opened in text mode is refused here, before its first read fails to decode records."""
def streams(filenames: _Inputs) -> list[_Readable] | None:
    """The file objects given (one, or a list or tuple of them), or ``None`` when the input is
    paths. A mix of the two is refused."""
def stream_records(stream: tuple[_Readable, int | None], reader: dict[str, Any], buffer_size: int | None = None) -> Any:
    """The records of one file object, from where it stood when the data set was made: a
    seekable stream is read from there again on each pass, a one-way stream once."""
def stream_starts(objs: Iterable[_Readable]) -> list[tuple[_Readable, int | None]]:
    """``(stream, position)`` for each file object: where a new pass starts reading it
    (``None`` for a stream that cannot seek)."""
def paths(filenames: _Paths) -> list[str]:
    """Paths, directories, glob patterns or object store URLs as a list of ``str``: one, or any
    iterable of them (``bytes`` and ``os.PathLike`` too). A ``str`` is one path, never its
    characters."""

def compression(compression_type: str | TFRecordOptions | None) -> str | None:
    """TF's names; an options object with ``compression_type`` too."""

class TFRecordOptions:
    """``tf.io.TFRecordOptions``: ``compression_type`` (``""``, ``"GZIP"``, ``"ZLIB"``) and
    ``compression_level``."""

    compression_type: str
    compression_level: int | None
    def __init__(
        self, compression_type: str | None = None, compression_level: int | None = None, **_ignored: Any
    ) -> None: ...

class TFRecordWriter:
    """``tf.io.TFRecordWriter``: writes records (``bytes``, or any message with
    ``SerializeToString()``) to ``path``, optionally GZIP or ZLIB compressed.

    ``path`` is a file path, an object store URL (``s3://``, ``gs://``, ``az://``: uploaded as
    it is written, the object appearing only when ``close()`` completes, and never if the
    ``with`` block raises), or a file object with ``write()`` (``BytesIO``, an fsspec file).

    ``write`` also takes an iterable of records (a list, a generator, an unbatched
    :class:`tfrec.data.Dataset` of records), as ``tf.data.experimental.TFRecordWriter(path).write(dataset)`` does.
    Use it as a context manager; ``close()`` finishes the compressed stream."""

    def __init__(
        self,
        path: str | os.PathLike[str] | _Writable,
        options: TFRecordOptions | str | None = None,
        compression: str | None = None,
        compression_level: int | None = None,
    ) -> None: ...
    def write(self, record: _Record | Iterable[_Record]) -> None:
        """Writes one record, or every record of an iterable of them."""
    def flush(self) -> None: ...
    def close(self) -> None: ...
    @property
    def records_written(self) -> int: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Literal[False]: ...

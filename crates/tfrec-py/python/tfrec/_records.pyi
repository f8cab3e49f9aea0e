"""Writing TFRecord files (``TFRecordWriter``, ``TFRecordOptions``) and the input rules every
reader shares (paths, compression names). A leaf module: the readers, ``tfrec.io`` and the
state saver import it, and it imports none of them."""

import os
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Literal

from typing_extensions import Self, TypeAlias

from .train import _Serializable

__all__ = ["TFRecordWriter", "TFRecordOptions"]

# One path (a ``str`` is one path, never its characters), or any iterable of them.
_PathArg: TypeAlias = str | bytes | os.PathLike[str]
_Paths: TypeAlias = _PathArg | Iterable[_PathArg]
# A record: ``bytes`` (or a buffer of them), or a message with ``SerializeToString()``.
_Record: TypeAlias = bytes | bytearray | memoryview | _Serializable

def paths(filenames: _Paths) -> list[str]:
    """Paths, directories or glob patterns as a list of ``str``: one path, or any iterable of
    them (``bytes`` and ``os.PathLike`` too). A ``str`` is one path, never its characters."""

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

    ``write`` also takes an iterable of records (a list, a generator, an unbatched
    :class:`tfrec.data.Dataset` of records), as ``tf.data.experimental.TFRecordWriter(path).write(dataset)`` does.
    Use it as a context manager; ``close()`` finishes the compressed stream.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
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

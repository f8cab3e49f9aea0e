"""Exceptions raised by tfrec. Every one derives from :class:`TfrecError`.

The classes carry the context the Rust library reports as attributes, so a caller can act on
them without parsing the message: ``path``, ``offset`` and ``record_index`` for damaged files;
``key``, ``example_index`` and ``row`` for parse failures.
"""

from typing import Any

class TfrecError(Exception):
    """Base class of tfrec's errors."""

    message: str
    def __init__(self, message: str, **attrs: Any) -> None: ...

class DataLossError(TfrecError):
    """A damaged TFRecord file (bad CRC, truncated record, torn tail, bad compression).

    Attributes: ``path``, ``offset`` (byte offset of the record), ``record_index``, ``kind``,
    ``tf_offset`` (the offset TensorFlow's message names: the data's, for a bad data CRC).
    """

    tf_offset: int | None
    path: str | None
    offset: int | None
    record_index: int | None
    kind: str | None

class NotFoundError(TfrecError, FileNotFoundError):
    """A file that does not exist, or a glob that matched nothing."""

    path: str | None
    offset: int | None
    record_index: int | None
    kind: str | None

class InvalidArgumentError(TfrecError, ValueError):
    """Input TensorFlow rejects as an invalid argument (e.g. bytes that are not a TensorProto)."""

class ParseError(InvalidArgumentError):
    """A serialized Example that does not fit the specs.

    Attributes: ``key`` (the feature), ``example_index`` (in the batch), ``row`` (the row of a
    feature list, for SequenceExamples), ``batch_index`` (for ``Dataset`` pipelines).
    """

    key: str | None
    example_index: int | None
    row: int | None
    batch_index: int | None
    # Set when a pipeline or an Arrow read knows where the record came from.
    path: str | None
    record_offset: int | None
    record_index: int | None

class DecodeError(TfrecError, ValueError):
    """Bytes that are not a valid message (``Example.FromString`` on garbage)."""

class WriteError(TfrecError, OSError):
    """A TFRecord file could not be written."""

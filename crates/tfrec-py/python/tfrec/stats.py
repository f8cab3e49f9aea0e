"""Statistics of TFRecord files of ``tf.train.Example``\\ s as TensorFlow Data Validation computes
them, with TFDV's names: ``generate_statistics_from_tfrecord``, ``StatsOptions``,
``load_statistics``, ``load_stats_binary``, ``write_stats_text``, ``load_stats_text``; and
from statistics, a schema and the anomalies against it: ``infer_schema``,
``validate_statistics``, ``load_schema_text``, ``write_schema_text``,
``write_anomalies_text``.

The statistics are tensorflow_metadata's ``DatasetFeatureStatisticsList``: when the
``tensorflow-metadata`` package is installed, the functions give and take its message class
(what ``tfdv.visualize_statistics`` and TFX take); otherwise a :class:`Statistics` holding the
same bytes. The figures are computed by the tfrec library, TFDV's rules ported (see the Rust
crate's ``stats`` module), on every core, without TensorFlow or Beam.

>>> import tfrec
>>> with tfrec.TFRecordWriter("animals.tfrecord") as w:
...     for word in ["cat", "dog", "cat"]:
...         w.write(tfrec.train.Example.from_dict({"animal": word}).SerializeToString())
>>> stats = tfrec.stats.generate_statistics_from_tfrecord("animals.tfrecord")
>>> "num_examples: 3" in tfrec.stats.Statistics.of(stats).to_text()
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from html import escape as _html_escape
from typing import Any, Callable, List, Optional, Sequence, Union

from . import _tfrec

__all__ = [
    "Anomalies",
    "Schema",
    "Statistics",
    "StatsOptions",
    "StatisticsReport",
    "generate_statistics_from_tfrecord",
    "get_statistics_html",
    "infer_schema",
    "load_schema_text",
    "load_statistics",
    "load_stats_binary",
    "load_stats_text",
    "validate_statistics",
    "visualize_statistics",
    "write_anomalies_text",
    "write_schema_text",
    "write_stats_binary",
    "write_stats_text",
]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class StatsOptions:
    """TFDV's ``StatsOptions``, the options tfrec computes (with TFDV's defaults)."""

    num_top_values: int = 20
    num_rank_histogram_buckets: int = 1000
    num_values_histogram_buckets: int = 10
    num_histogram_buckets: int = 10
    num_quantiles_histogram_buckets: int = 10
    epsilon: float = 0.01
    #: The share of records counted, in (0, 1]; ``None``: all. tfrec keeps each record by a
    #: hash of its file and offset (the same sample every run); TFDV keeps random batches, so
    #: the figures differ from TFDV's beyond the expected counts.
    sample_rate: Optional[float] = None
    #: The top-level features kept (context features by name, the feature lists together by
    #: ``"##SEQUENCE##"``); ``None``: all.
    feature_allowlist: Optional[List[str]] = None


class Statistics:
    """A serialized ``DatasetFeatureStatisticsList``, for when ``tensorflow-metadata`` is not
    installed: ``SerializeToString()`` as a protobuf message has it, and its text form."""

    def __init__(self, data: bytes) -> None:
        self._data = bytes(data)

    @classmethod
    def of(cls, stats: Any) -> "Statistics":
        """``stats`` (a :class:`Statistics` or tensorflow_metadata's message) as a
        :class:`Statistics`."""
        if isinstance(stats, Statistics):
            return stats
        return cls(stats.SerializeToString())

    def SerializeToString(self) -> bytes:  # noqa: N802  (protobuf's name)
        """The message's bytes."""
        return self._data

    def to_text(self) -> str:
        """The protobuf text format, as TFDV's ``write_stats_text`` writes it."""
        return _tfrec.stats_to_text(self._data)

    def __str__(self) -> str:
        return self.to_text()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Statistics) and other._data == self._data

    def __hash__(self) -> int:
        return hash(self._data)

    def _repr_html_(self) -> str:
        """The report page, shown by notebooks (see :func:`visualize_statistics`)."""
        return visualize_statistics(self)._repr_html_()


def _metadata_message(data: bytes, module: str, name: str, fallback: Callable[[bytes], Any]) -> Any:
    """tensorflow_metadata's message ``module.name`` parsed from ``data`` when the package is
    there, else ``fallback(data)``."""
    try:
        from importlib import import_module

        message = getattr(import_module("tensorflow_metadata.proto.v0." + module), name)()
    except ImportError:
        return fallback(data)
    message.ParseFromString(data)
    return message


def _message(data: bytes) -> Any:
    """tensorflow_metadata's statistics list when the package is there, else a :class:`Statistics`."""
    return _metadata_message(data, "statistics_pb2", "DatasetFeatureStatisticsList", Statistics)


def generate_statistics_from_tfrecord(
    data_location: Union[PathLike, Sequence[PathLike]],
    stats_options: Optional[StatsOptions] = None,
    output_path: Optional[PathLike] = None,
    *,
    threads: Optional[int] = None,
    compression_type: Optional[str] = None,
    on_corruption: str = "raise",
    kind: str = "auto",
) -> Any:
    """Statistics of the Examples in ``data_location`` (a path, glob, directory or URL, or a
    list of them), as TFDV's function of the same name computes them; written to
    ``output_path`` (binary) when given. ``threads`` defaults to one per core (one file is
    read on every thread, and the figures are the same bytes for any number);
    ``on_corruption`` (``"raise"``, ``"skip"``, ``"skip_file"``) is the readers' policy for
    damaged records.

    ``kind`` says what the records hold: ``"example"`` reads every record as an Example, as
    TFDV's function does (a SequenceExample's context features only); ``"sequence"`` as a
    SequenceExample (its context features, then its feature lists under the
    ``##SEQUENCE##`` struct, as TFDV computes them from tfx_bsl's ``TFSequenceExampleRecord``);
    ``"auto"`` decides per record by whether it has feature lists."""
    options = stats_options or StatsOptions()
    locations = [data_location] if isinstance(data_location, (str, os.PathLike)) else list(data_location)
    data = _tfrec.stats_generate(
        [os.fspath(p) for p in locations],
        num_top_values=options.num_top_values,
        num_rank_histogram_buckets=options.num_rank_histogram_buckets,
        num_values_histogram_buckets=options.num_values_histogram_buckets,
        num_histogram_buckets=options.num_histogram_buckets,
        num_quantiles_histogram_buckets=options.num_quantiles_histogram_buckets,
        epsilon=options.epsilon,
        threads=threads or os.cpu_count() or 1,
        compression_type=compression_type,
        on_corruption=on_corruption,
        kind=kind,
        sample_rate=options.sample_rate,
        feature_allowlist=options.feature_allowlist,
    )
    if output_path is not None:
        with open(output_path, "wb") as f:
            f.write(data)
    return _message(data)


def load_stats_binary(input_path: PathLike) -> Any:
    """Statistics from a binary ``DatasetFeatureStatisticsList`` file (TFDV's
    ``load_stats_binary``)."""
    with open(input_path, "rb") as f:
        data = f.read()
    # Decoding checks the bytes are the message (a text file or another message fails here).
    _tfrec.stats_to_text(data)
    return _message(data)


def load_stats_text(input_path: PathLike) -> Any:
    """Statistics from a protobuf text file (TFDV's ``load_stats_text``)."""
    with open(input_path, encoding="utf-8") as f:
        return _message(_tfrec.stats_from_text(f.read()))


def load_statistics(input_path: PathLike) -> Any:
    """Statistics from a file in either form (TFDV's ``load_statistics``: binary first, then
    text)."""
    try:
        return load_stats_binary(input_path)
    except Exception:  # not binary statistics: try the text form, whose error is the one shown
        return load_stats_text(input_path)


def write_stats_text(stats: Any, output_path: PathLike) -> None:
    """Writes ``stats`` in the protobuf text format (TFDV's ``write_stats_text``)."""
    with open(output_path, "w", encoding="utf-8") as f:
        f.write(Statistics.of(stats).to_text())


def write_stats_binary(stats: Any, output_path: PathLike) -> None:
    """Writes ``stats`` as binary protobuf."""
    with open(output_path, "wb") as f:
        f.write(Statistics.of(stats).SerializeToString())


class StatisticsReport:
    """The statistics report: one self-contained HTML page (no network request) that a
    notebook shows (``_repr_html_``) and :meth:`save` writes."""

    def __init__(self, html: str) -> None:
        self.html = html

    def save(self, path: PathLike) -> None:
        """Writes the page to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)

    def _repr_html_(self) -> str:
        # In a frame of its own, so that the page's style and script meet nothing of the
        # notebook's; the frame's document is the page itself, its policy included.
        return (
            '<iframe style="width:100%;height:720px;border:1px solid #d1d9e0" '
            'sandbox="allow-scripts" srcdoc="' + _html_escape(self.html, quote=True) + '"></iframe>'
        )

    def __str__(self) -> str:
        return self.html


def _anomalies_arguments(anomalies: Any) -> "dict[str, Any]":
    if anomalies is None:
        return {}
    if isinstance(anomalies, (bytes, bytearray)):
        return {"anomalies": bytes(anomalies)}
    if isinstance(anomalies, (str, os.PathLike)):
        with open(anomalies, encoding="utf-8") as f:
            return {"anomalies_text": f.read()}
    return {"anomalies": anomalies.SerializeToString()}


def _locations(data_location: Union[None, PathLike, Sequence[PathLike]]) -> Optional[List[str]]:
    if data_location is None:
        return None
    if isinstance(data_location, (str, os.PathLike)):
        return [os.fspath(data_location)]
    return [os.fspath(p) for p in data_location]


def get_statistics_html(
    lhs_statistics: Any,
    rhs_statistics: Any = None,
    lhs_name: str = "lhs_statistics",
    rhs_name: str = "rhs_statistics",
    *,
    anomalies: Any = None,
    lhs_data_location: Union[None, PathLike, Sequence[PathLike]] = None,
    rhs_data_location: Union[None, PathLike, Sequence[PathLike]] = None,
    title: Optional[str] = None,
) -> str:
    """The report page of ``lhs_statistics`` (beside ``rhs_statistics`` when given, with the
    drift of each feature), as TFDV's function of the same name; without ``rhs_statistics`` a
    list of two data sets (``tfrec stats --compare``) shows both under their own names.
    ``anomalies`` (an ``Anomalies`` message, its bytes, or the path of its text form) marks
    features; ``lhs_data_location`` / ``rhs_data_location`` (the record files) give example
    values and image thumbnails from their first records."""
    compared = rhs_statistics is not None
    return _tfrec.stats_report_html(
        Statistics.of(lhs_statistics).SerializeToString(),
        Statistics.of(rhs_statistics).SerializeToString() if compared else None,
        lhs_name=lhs_name if compared else None,
        rhs_name=rhs_name if compared else None,
        lhs_inputs=_locations(lhs_data_location),
        rhs_inputs=_locations(rhs_data_location),
        title=title,
        **_anomalies_arguments(anomalies),
    )


def visualize_statistics(
    lhs_statistics: Any,
    rhs_statistics: Any = None,
    lhs_name: str = "lhs_statistics",
    rhs_name: str = "rhs_statistics",
    *,
    anomalies: Any = None,
    lhs_data_location: Union[None, PathLike, Sequence[PathLike]] = None,
    rhs_data_location: Union[None, PathLike, Sequence[PathLike]] = None,
    title: Optional[str] = None,
) -> StatisticsReport:
    """The report of :func:`get_statistics_html` as an object a notebook shows and
    :meth:`StatisticsReport.save` writes (TFDV's function of the same name shows it at once)."""
    return StatisticsReport(
        get_statistics_html(
            lhs_statistics,
            rhs_statistics,
            lhs_name,
            rhs_name,
            anomalies=anomalies,
            lhs_data_location=lhs_data_location,
            rhs_data_location=rhs_data_location,
            title=title,
        )
    )


class _Serialized:
    """A serialized tensorflow_metadata message, for when ``tensorflow-metadata`` is not
    installed: ``SerializeToString()`` as a protobuf message has it, and its text form."""

    def __init__(self, data: bytes) -> None:
        self._data = bytes(data)

    def SerializeToString(self) -> bytes:  # noqa: N802  (protobuf's name)
        """The message's bytes."""
        return self._data

    def to_text(self) -> str:
        """The protobuf text format, as TFDV writes it."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.to_text()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and isinstance(other, _Serialized) and other._data == self._data

    def __hash__(self) -> int:
        return hash(self._data)


class Schema(_Serialized):
    """A serialized tensorflow_metadata ``Schema`` (when ``tensorflow-metadata`` is not
    installed)."""

    def to_text(self) -> str:
        """The protobuf text format, as TFDV's ``write_schema_text`` writes it."""
        return _tfrec.schema_to_text(self._data)


class Anomalies(_Serialized):
    """A serialized tensorflow_metadata ``Anomalies`` (when ``tensorflow-metadata`` is not
    installed)."""

    def to_text(self) -> str:
        """The protobuf text format, as TFDV's ``write_anomalies_text`` writes it."""
        return _tfrec.anomalies_to_text(self._data)


def _schema_message(data: bytes) -> Any:
    """tensorflow_metadata's ``Schema`` when the package is there, else a :class:`Schema`."""
    return _metadata_message(data, "schema_pb2", "Schema", Schema)


def _anomalies_message(data: bytes) -> Any:
    """tensorflow_metadata's ``Anomalies`` when the package is there, else an :class:`Anomalies`."""
    return _metadata_message(data, "anomalies_pb2", "Anomalies", Anomalies)


def infer_schema(
    statistics: Any,
    infer_feature_shape: bool = True,
    max_string_domain_size: int = 100,
    schema_transformations: Optional[Sequence[Callable[[Any, Any], Any]]] = None,
) -> Any:
    """The schema ``tfdv.infer_schema`` infers from ``statistics`` (their default slice):
    types, presence, values per example (a fixed ``shape`` with ``infer_feature_shape``),
    and bool, int and string domains (a string domain for at most ``max_string_domain_size``
    distinct values). ``schema_transformations`` are applied in order, as TFDV does, each
    given the schema and the statistics' first data set (which needs ``tensorflow-metadata``)."""
    data = _tfrec.stats_infer_schema(
        Statistics.of(statistics).SerializeToString(),
        infer_feature_shape=infer_feature_shape,
        max_string_domain_size=max_string_domain_size,
    )
    schema = _schema_message(data)
    if schema_transformations:
        dataset = _message(Statistics.of(statistics).SerializeToString())
        first = dataset.datasets[0] if hasattr(dataset, "datasets") else dataset
        for transformation in schema_transformations:
            schema = transformation(schema, first)
    return schema


def validate_statistics(
    statistics: Any,
    schema: Any,
    environment: Optional[str] = None,
    previous_statistics: Optional[Any] = None,
    serving_statistics: Optional[Any] = None,
) -> Any:
    """The anomalies ``tfdv.validate_statistics`` finds in ``statistics`` against ``schema``:
    new and missing features, types, out-of-domain values, values per example, presence, and
    drift against ``previous_statistics`` and skew against ``serving_statistics`` where the
    schema's ``drift_comparator`` / ``skew_comparator`` set thresholds. Environments are not
    supported (``environment`` must be None)."""
    if environment is not None:
        raise ValueError("tfrec.stats.validate_statistics does not support environments yet")

    def serialized(stats: Optional[Any]) -> Optional[bytes]:
        return None if stats is None else Statistics.of(stats).SerializeToString()

    data = _tfrec.stats_validate(
        Statistics.of(statistics).SerializeToString(),
        schema.SerializeToString(),
        previous=serialized(previous_statistics),
        serving=serialized(serving_statistics),
    )
    return _anomalies_message(data)


def load_schema_text(input_path: PathLike) -> Any:
    """A schema from a protobuf text file (TFDV's ``load_schema_text``); a file that does not
    parse raises ``ValueError`` naming the file, line and column."""
    return _schema_message(_tfrec.schema_read_file(os.fspath(input_path)))


def write_schema_text(schema: Any, output_path: PathLike) -> None:
    """Writes ``schema`` in the protobuf text format (TFDV's ``write_schema_text``)."""
    with open(output_path, "w", encoding="utf-8") as f:
        f.write(_tfrec.schema_to_text(schema.SerializeToString()))


def write_anomalies_text(anomalies: Any, output_path: PathLike) -> None:
    """Writes ``anomalies`` in the protobuf text format (TFDV's ``write_anomalies_text``)."""
    with open(output_path, "w", encoding="utf-8") as f:
        f.write(_tfrec.anomalies_to_text(anomalies.SerializeToString()))

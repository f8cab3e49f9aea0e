import os
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Union

__all__ = [
    "Anomalies",
    "Schema",
    "Statistics",
    "StatisticsReport",
    "StatsOptions",
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

PathLike = Union[str, os.PathLike[str]]

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

    def __init__(self, data: bytes) -> None: ...
    @classmethod
    def of(cls, stats: Any) -> Statistics: ...
    def SerializeToString(self) -> bytes: ...
    def to_text(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def _repr_html_(self) -> str: ...

def generate_statistics_from_tfrecord(
    data_location: Union[PathLike, Sequence[PathLike]],
    stats_options: Optional[StatsOptions] = None,
    output_path: Optional[PathLike] = None,
    *,
    threads: Optional[int] = None,
    compression_type: Optional[str] = None,
    on_corruption: str = "raise",
    kind: str = "auto",
) -> Any: ...
def load_stats_binary(input_path: PathLike) -> Any: ...
def load_stats_text(input_path: PathLike) -> Any: ...
def load_statistics(input_path: PathLike) -> Any: ...
def write_stats_text(stats: Any, output_path: PathLike) -> None: ...
def write_stats_binary(stats: Any, output_path: PathLike) -> None: ...

class StatisticsReport:
    """The statistics report: one self-contained HTML page (no network request) that a
    notebook shows (``_repr_html_``) and :meth:`save` writes."""

    html: str
    def __init__(self, html: str) -> None: ...
    def save(self, path: PathLike) -> None: ...
    def _repr_html_(self) -> str: ...

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
) -> str: ...
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
) -> StatisticsReport: ...
class _Serialized:
    """A serialized tensorflow_metadata message, for when ``tensorflow-metadata`` is not
    installed: ``SerializeToString()`` as a protobuf message has it, and its text form."""

    def __init__(self, data: bytes) -> None: ...
    def SerializeToString(self) -> bytes: ...
    def to_text(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Schema(_Serialized):
    """A serialized tensorflow_metadata ``Schema`` (when ``tensorflow-metadata`` is not
    installed)."""

class Anomalies(_Serialized):
    """A serialized tensorflow_metadata ``Anomalies`` (when ``tensorflow-metadata`` is not
    installed)."""

def infer_schema(
    statistics: Any,
    infer_feature_shape: bool = True,
    max_string_domain_size: int = 100,
    schema_transformations: Optional[Sequence[Callable[[Any, Any], Any]]] = None,
) -> Any: ...
def validate_statistics(
    statistics: Any,
    schema: Any,
    environment: Optional[str] = None,
    previous_statistics: Optional[Any] = None,
    serving_statistics: Optional[Any] = None,
) -> Any: ...
def load_schema_text(input_path: PathLike) -> Any: ...
def write_schema_text(schema: Any, output_path: PathLike) -> None: ...
def write_anomalies_text(anomalies: Any, output_path: PathLike) -> None: ...

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

__all__ = [
    "Anomalies",
    "Schema",
    "Statistics",
    "StatsOptions",
    "generate_statistics_from_tfrecord",
    "infer_schema",
    "load_schema_text",
    "load_statistics",
    "load_stats_binary",
    "load_stats_text",
    "validate_statistics",
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

def generate_statistics_from_tfrecord(
    data_location: Union[PathLike, Sequence[PathLike]],
    stats_options: Optional[StatsOptions] = None,
    output_path: Optional[PathLike] = None,
    *,
    threads: Optional[int] = None,
    compression_type: Optional[str] = None,
    on_corruption: str = "raise",
) -> Any: ...
def load_stats_binary(input_path: PathLike) -> Any: ...
def load_stats_text(input_path: PathLike) -> Any: ...
def load_statistics(input_path: PathLike) -> Any: ...
def write_stats_text(stats: Any, output_path: PathLike) -> None: ...
def write_stats_binary(stats: Any, output_path: PathLike) -> None: ...

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

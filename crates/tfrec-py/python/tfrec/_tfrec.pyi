"""The Rust extension module: a thin layer over the ``tfrec`` library (the Python API is in
``tfrec``'s other modules). Private: its names and signatures may change between versions."""

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, TypedDict, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Self, TypeAlias

__all__ = [
    "__version__",
    "DEBUG_BUILD",
    "cli_main",
    "RecordWriter",
    "RecordIterator",
    "expand_inputs",
    "is_url",
    "refuse_same_file",
    "file_size",
    "plan_read_units",
    "Parser",
    "RecordFiles",
    "Dataset",
    "DatasetIterator",
    "ElementsIterator",
    "StateSaver",
    "SaverBatch",
    "encode_feature",
    "decode_feature",
    "encode_example",
    "decode_example",
    "encode_sequence_example",
    "decode_sequence_example",
    "message_to_text",
    "message_to_json",
    "message_to_friendly_json",
    "message_from_text",
    "message_from_friendly_json",
    "serialize_tensor",
    "parse_tensor",
    "tensor_dtype_names",
    "arrow_infer_spec",
    "arrow_check_spec",
    "arrow_batches",
    "ArrowBatches",
    "ArrowPlan",
    "ArrowBatch",
    "ArrowArray",
    "arrow_write",
    "stats_generate",
    "stats_merge_partials",
    "stats_partial_of_file",
    "stats_partial_of_arrow",
    "stats_to_text",
    "stats_from_text",
    "stats_report_html",
    "stats_infer_schema",
    "stats_validate",
    "schema_to_text",
    "schema_from_text",
    "schema_read_file",
    "anomalies_to_text",
    "arrow_write_parquet",
]

__version__: str
# True for a build with debug assertions (the dev profile the tests use): not one to time.
DEBUG_BUILD: bool

# A feature in the plain form the message functions use: ``(name, kind, values)``, ``kind``
# being "bytes_list", "float_list", "int64_list" or ``None`` (no kind set).
_PlainFeature: TypeAlias = tuple[str, str | None, list[Any]]
# A parsed feature as the parser gives it: a dense array, ``("sparse", indices, values,
# dense_shape)`` or ``("ragged", flat_values, [row_splits...], [uniform_row_length...])``.
_RawTensor: TypeAlias = npt.NDArray[Any] | tuple[Any, ...]

class _ReaderStats(TypedDict):
    records: int
    data_bytes: int
    skipped_regions: int
    skipped_bytes: int
    skipped_files: int
    torn_tail_bytes: int

class _PipelineStats(TypedDict):
    records: int
    bytes: int
    files_done: int
    skipped_regions: int
    skipped_bytes: int
    skipped_files: int
    batches: int
    # Spans of a file read on every worker (two threads or more), taken in file order.
    spans: int
    problems: list[str]

class _ArrowStats(TypedDict, total=False):
    # Files read directly; a pipeline's batches (``Dataset.to_arrow``) give the pipeline's
    # counters (``bytes``, ``files_done``, ``batches``, ``spans`` too).
    records: int
    skipped_regions: int
    skipped_bytes: int
    skipped_files: int
    problems: list[str]
    bytes: int
    files_done: int
    batches: int
    spans: int

@final
class ArrowBatch:
    """A record batch handed to Python through the Arrow PyCapsule interface
    (`__arrow_c_array__`), so `pyarrow.record_batch(b)` takes it without a copy."""
    @property
    def num_rows(self) -> int: ...
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """`(schema capsule, array capsule)` of the batch as a struct array."""
    def __arrow_c_schema__(self) -> object:
        """The batch's schema as an `arrow_schema` capsule."""

@final
class ArrowArray:
    """One Arrow array handed to Python through the Arrow PyCapsule interface
    (`__arrow_c_array__`), so `pyarrow.array(a)` takes it without a copy: a parsed string
    tensor with `strings="arrow"`."""
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """`(schema capsule, array capsule)` of the array."""

@final
class ArrowPlan:
    """A pipeline's output as Arrow columns, planned once: the specs were read and their columns
    built when `Dataset.to_arrow` was called, so a bad spec fails there, and the spec text
    crossed from Python once. Each [`ArrowPlan::batches`] runs the pipeline afresh, since an
    Arrow C stream is read once and a stream may be asked for again."""
    @property
    def spec(self) -> str:
        """The specs the columns follow, as JSON text."""
    def batches(self) -> ArrowBatches:
        """The pipeline started: its batches as Arrow record batches, the columns made by the
        worker threads."""

@final
class ArrowBatches:
    """Arrow record batches read and parsed by Rust: a Python iterator of [`ArrowBatch`]es whose
    errors are `tfrec.errors` classes with their attributes, and an Arrow C stream
    (`__arrow_c_stream__`, which hands the rest of the batches over). Either way once."""
    @property
    def spec(self) -> str:
        """The specs the columns follow, as JSON text."""
    def stats(self) -> _ArrowStats:
        """What was read and skipped so far: `records`, `skipped_regions`, `skipped_bytes`,
        `skipped_files` and `problems` (messages naming file and offset)."""
    def __arrow_c_schema__(self) -> object:
        """The schema of the batches as an `arrow_schema` capsule."""
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The batches not yet taken, as an `arrow_array_stream` capsule."""
    def __iter__(self) -> Self: ...
    def __next__(self) -> ArrowBatch: ...

@final
class Dataset:
    """A pipeline description. Immutable: builder methods return a changed copy."""
    def __new__(
        cls,
        paths: Sequence[str],
        compression_type: str | None = None,
        on_corruption: str = "raise",
        torn_tail: str = "raise",
        verify_crc: bool = True,
    ) -> Self: ...
    @staticmethod
    def from_python(open: Callable[[], Iterable[Any]], count: int | None = None) -> Dataset:
        """A data set of Python's elements: `open()` gives an iterable of them, called anew for
        each iteration; `count`, how many it gives, when known."""
    @property
    def batch_size(self) -> int | None: ...
    @property
    def has_element_stages(self) -> bool:
        """Whether some stage runs over elements (after a Python function or a parse, or over
        Python's elements): such a data set is iterated with [`Dataset::elements`]."""
    def batch(
        self, batch_size: int, drop_remainder: bool = False, stack: Callable[[list[Any]], Any] | None = None
    ) -> Dataset:
        """Groups records into batches; batches of anything else (batches, parsed values, Python
        values) are made by `stack`, Python's batch of a list of elements."""
    def cardinality(self) -> int:
        """How many elements there are, by tf.data's rules: -1 infinite, -2 unknown."""
    def deterministic(self, deterministic: bool) -> Dataset: ...
    def elements(self, wrap: Callable[[Any], Any]) -> ElementsIterator:
        """The elements of a data set with stages over elements, the library running every stage
        and calling Python's functions; `wrap` is applied to each parsed value first (what
        Python makes of the tensors it is given)."""
    def filter(self, predicate: Callable[..., object]) -> Dataset:
        """Keeps the elements for which `predicate` is true, on the iterating thread."""
    def interleave(self, cycle_length: int, block_length: int = 1) -> Dataset: ...
    def map(self, f: Callable[..., Any]) -> Dataset:
        """Applies `f` to each element (a tuple element is its arguments), on the iterating thread."""
    def parse(
        self,
        specs: str,
        sequence: bool = False,
        parse_element: Callable[[Any], Any] | None = None,
        strings: Literal["object", "numpy", "arrow"] = "object",
    ) -> Dataset:
        """Parses with specs in the JSON form; `sequence` for SequenceExamples. Checked now, so a
        bad spec fails here rather than on the worker threads. Where records are already
        parsed or mapped, `parse_element` (Python's parse of one element) does it instead.
        `strings` names the form of string tensors ("object", "numpy" or "arrow")."""
    def prefetch(self, batches: int) -> Dataset: ...
    def repeat(self, count: int | None = None) -> Dataset:
        """`count=None` repeats forever."""
    def shard(self, num_shards: int, index: int, by: str = "record") -> Dataset:
        """Part `index` of `num_shards`: every `num_shards`-th record of the stream so far
        (`by="record"`, tf.data's meaning), or whole files (`by="file"`)."""
    def shuffle(self, buffer_size: int, seed: int = 0, reshuffle_each_iteration: bool = True) -> Dataset: ...
    def skip(self, count: int) -> Dataset: ...
    def take(self, count: int) -> Dataset: ...
    def threads(self, threads: int) -> Dataset: ...
    def to_arrow(
        self, spec: str | None = None, utf8: bool = False, utf8_columns: Sequence[str] | None = None, batch_rows: int = 65536
    ) -> ArrowPlan:
        """The pipeline's output planned as Arrow columns: the specs read and checked now,
        without starting a thread or opening a file; see [`ArrowPlan`]."""
    def _drain(self) -> tuple[int, int]:
        """Runs the whole pipeline in Rust, making no Python objects, with the GIL released:
        `(records read, batches)`. The benchmark's baseline for what iterating from Python
        costs on top of the pipeline itself."""
    def __iter__(self) -> DatasetIterator: ...

@final
class ElementsIterator:
    """The running elements of a data set with Python stages."""
    def __iter__(self) -> Self: ...
    # The next element: the GIL is let go while the library works, and each Python callback
    # takes it back for its call.
    def __next__(self) -> Any: ...

@final
class DatasetIterator:
    """A running pipeline."""
    def stats(self) -> _PipelineStats:
        """The pipeline's counters so far (records read, bytes, files done, skipped…)."""
    def __iter__(self) -> Self: ...
    # ``bytes``, a list of ``bytes``, a dict of parsed features or a ``(context,
    # feature_lists, lengths)`` tuple, depending on the pipeline's stages.
    def __next__(self) -> Any: ...

@final
class Parser:
    """A compiled set of specs."""
    def __new__(cls, specs: str, sequence: bool = False) -> Self: ...
    def parse_example(
        self,
        serialized: bytes | Iterable[bytes],
        single: bool = False,
        num_threads: int = 1,
        strings: Literal["object", "numpy", "arrow"] = "object",
    ) -> dict[str, _RawTensor]:
        """`parse_example` (or `parse_single_example` when `single`): a dict of tensors, strings
        in the form `strings` names ("object", "numpy" or "arrow")."""
    def parse_sequence_example(
        self,
        serialized: bytes | Iterable[bytes],
        single: bool = False,
        num_threads: int = 1,
        strings: Literal["object", "numpy", "arrow"] = "object",
    ) -> tuple[dict[str, _RawTensor], dict[str, _RawTensor], dict[str, npt.NDArray[np.int64]]]:
        """`parse_sequence_example` (or the single form): `(context, feature_lists, lengths)`,
        strings in the form `strings` names."""

@final
class RecordFiles:
    """TFRecord files (plain, GZIP or ZLIB) opened for random access, their records numbered
    file after file."""
    def __new__(cls, paths: Sequence[str], index_paths: Sequence[str | None] | None = None) -> Self: ...
    @staticmethod
    def from_streams(streams: Sequence[object]) -> RecordFiles:
        """Random access to Python file objects that can `seek` (a file opened `"rb"`, `BytesIO`,
        fsspec's files): each is read once to index it, then read at the records' offsets."""
    def __len__(self) -> int:
        """Return len(self)."""
    def get(self, i: int) -> bytes:
        """Record `i` (negative from the end) as `bytes`; `IndexError` past the end."""
    def get_many(self, indices: Sequence[int]) -> list[bytes]:
        """The records of `indices` (each negative from the end, or not) as a list of `bytes`."""
    @property
    def paths(self) -> list[str]:
        """The files, after expansion."""
    @property
    def index_paths(self) -> list[str | None]:
        """Each file's index file, or `None` where the index lives only in memory."""
    @property
    def lengths(self) -> list[int]:
        """Records in each file."""

@final
class RecordIterator:
    """Iterates over the records of many files as `bytes`."""
    def __new__(
        cls,
        paths: Sequence[str],
        compression_type: str | None = None,
        on_corruption: str = "raise",
        torn_tail: str = "raise",
        verify_crc: bool = True,
        buffer_size: int | None = None,
    ) -> Self: ...
    def next_many(self, n: int) -> list[bytes]:
        """Reads up to `n` records at once (fewer at the end): one GIL release for many records."""
    def problems(self) -> list[str]:
        """The problems skipped so far, as messages naming file and offset."""
    def stats(self) -> _ReaderStats:
        """What was read and skipped so far."""
    def __iter__(self) -> Self: ...
    def __next__(self) -> bytes: ...
    @staticmethod
    def from_stream(
        stream: object,
        compression_type: str | None = None,
        on_corruption: str = "raise",
        torn_tail: str = "raise",
        verify_crc: bool = True,
        buffer_size: int | None = None,
    ) -> RecordIterator:
        """The records of a Python file object (anything with `read(n)` giving `bytes`), read from
        where it stands; errors name it by its `name` attribute."""

@final
class RecordWriter:
    """Writes framed records to a file, an object store URL or a Python file object."""
    def __new__(cls, path: object, compression: str | None = None, level: int | None = None) -> Self: ...
    def abort(self) -> None:
        """Closes the writer after a failure: an object being uploaded is abandoned, so nothing
        appears under its name; a file or file object is ended as `close` ends it (TensorFlow
        keeps what was written to a file)."""
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def records_written(self) -> int: ...
    def close(self) -> None: ...
    def flush(self) -> None: ...
    def write(self, record: bytes) -> None: ...

@final
class SaverBatch:
    """One batch: the per-entry fields as NumPy arrays (made once), the states on request."""
    @property
    def batch_size(self) -> int: ...
    @property
    def fields(self) -> dict[str, Any]:
        """`key`, `next_key` (object arrays of bytes), `sequence`, `sequence_count`, `length`,
        `total_length` (int32), `insertion_index` (int64), `sequences`, `context` (dicts)."""
    def save_state(self, name: str, values: npt.NDArray[Any]) -> None:
        """Saves state `name` for each entry's next segment."""
    def state(self, name: str) -> npt.NDArray[Any]:
        """State `name` as the batch's segments start from it, `[batch, ...]` (a fresh array)."""
    def state_dtype(self, name: str) -> str | None:
        """The NumPy name of state `name`'s dtype (`"string"` for bytes), `None` for no such state."""
    def state_names(self) -> list[str]:
        """The state names."""

@final
class StateSaver:
    """A running state saver; iterate it for `SaverBatch`es.

    Frozen (no `&mut self` methods): a waiting `__next__` must not hold a PyO3 borrow, or
    `close` and `in_flight` from another thread fail with "Already borrowed". The library's
    saver is `Sync` and does its own locking."""
    def close(self, cancel_pending: bool = False) -> None:
        """Stops the input, from any thread. With `cancel_pending`, iteration (also a `__next__`
        waiting now) ends at once; without, the sequences in flight are handed out first."""
    @staticmethod
    def from_files(
        paths: Sequence[str],
        compression_type: str | None,
        specs: str,
        key_feature: str | None,
        num_unroll: int,
        batch_size: int,
        initial_states: dict[str, Any],
        num_threads: int,
        capacity: int | None,
        allow_small_batch: bool,
        pad: bool,
        make_keys_unique_seed: int | None,
        length_feature: str | None = None,
    ) -> StateSaver:
        """A saver over the SequenceExample records of `paths`, parsed with `specs` (the JSON
        form of `{"context_features": …, "sequence_features": …}`); the key is the context
        feature `key_feature`, or the record's position when it is `None`."""
    @staticmethod
    def from_iterator(
        inputs: Iterable[tuple[str, dict[str, Any] | None, dict[str, Any] | None, int | None, dict[str, Any] | None]],
        num_unroll: int,
        batch_size: int,
        initial_states: dict[str, Any],
        num_threads: int,
        capacity: int | None,
        allow_small_batch: bool,
        pad: bool,
        make_keys_unique_seed: int | None,
    ) -> StateSaver:
        """A saver over a Python iterator of `(key, sequences, context, length, initial_states)`."""
    def in_flight(self) -> int:
        """Examples in flight now."""
    def max_in_flight(self) -> int:
        """The most examples that were in flight at once (at most `capacity`)."""
    def __iter__(self) -> Self: ...
    def __next__(self) -> SaverBatch: ...

def arrow_batches(
    paths: Sequence[str],
    spec: str,
    batch_rows: int = 65536,
    byte_range: tuple[int, int] | None = None,
    utf8: bool = False,
    utf8_columns: Sequence[str] | None = None,
    compression: str | None = None,
    limit: int | None = None,
    on_corruption: str = "raise",
) -> ArrowBatches:
    """The record batches of `paths` parsed with `spec` (JSON), read by Rust."""
def arrow_check_spec(spec: str, utf8: bool = False, utf8_columns: Sequence[str] | None = None) -> None:
    """The Arrow schema a spec gives, as a C stream of no batches (so Python can read the schema
    with pyarrow without reading data); raises on a spec with no columnar form."""
def arrow_infer_spec(
    paths: Sequence[str], rows: int = 1000, compression: str | None = None
) -> tuple[str, list[str], list[tuple[str, str]]]:
    """Infers Example specs from the first `rows` records of `paths` (the library's one inference,
    as `tfrec schema --json` and `tfrec convert`): `(spec JSON, names of the string features
    found UTF-8, (name, why) of the features left out)`."""
def arrow_write(stream: object, path: object, compression: str | None = None) -> int:
    """Writes the batches of an `arrow_array_stream` capsule (from `__arrow_c_stream__`) to
    `path` as Examples; returns the number of records written."""
def arrow_write_parquet(source: object, path: str, threads: int | None = None) -> int:
    """Writes `source` to `path` as Parquet through the library's `ParquetWriter` (the writer
    `tfrec convert` uses): row groups encoded on `threads` threads (default: one per core), a
    row group per batch, the file's bytes the same whatever the number. `source` is the
    `ArrowBatches` of TFRecord files (then read, parsed and handed over in the pieces
    `convert` hands its writer, so the file is byte for byte `convert`'s), or any
    `arrow_array_stream` capsule. The file is written under a temporary name beside `path` and
    renamed (an object store URL: uploaded) only when complete. Returns the rows written."""
def cli_main(argv: Sequence[str]) -> int:
    """Runs the `tfrec` command line `argv` (the program's name first) and returns its exit
    status. The GIL is released meanwhile."""
def decode_example(serialized: bytes) -> list[tuple[str, str | None, list[Any]]] | None:
    """The plain form of an `Example`'s features (`None` when absent)."""
def decode_sequence_example(
    serialized: bytes,
) -> tuple[list[_PlainFeature] | None, list[tuple[str, list[tuple[str | None, list[Any]]]]] | None]:
    """`(context, feature_lists)` of a `SequenceExample` in the plain form (`None` when absent)."""
def encode_feature(kind: str | None, values: Iterable[Any]) -> bytes:
    """`Feature` bytes from its kind (`"int64_list"`…, or `None` for no kind) and values."""
def decode_feature(serialized: bytes) -> tuple[str | None, list[Any]]:
    """The kind (`None` when unset) and values of serialized `Feature` bytes."""
def encode_example(features: Iterable[_PlainFeature] | None) -> bytes:
    """`Example` bytes from the plain form of its features (`None`: no `features` field)."""
def encode_sequence_example(
    context: Iterable[_PlainFeature] | None, feature_lists: Iterable[tuple[str, Iterable[tuple[str | None, Any]]]] | None
) -> bytes:
    """`SequenceExample` bytes from its context and feature lists (`(name, [(kind, values)...])`)."""
def is_url(path: str) -> bool:
    """Whether `path` names an object in a store (`s3://`, `gs://`, `az://`, `http(s)://`, …) rather
    than a local file (`file://` is one), by the rules every reader follows."""
def refuse_same_file(path: str, inputs: Sequence[str]) -> None:
    """Raises `ValueError` when the output `path` is one of `inputs` (the same path after
    resolving links, or the same file by device and inode), by the library's rule the CLI's
    commands follow: a writer never writes over a file it reads in the same call."""
def file_size(path: str) -> int:
    """The size in bytes of a local file, or of the object a URL names (one request)."""
def plan_read_units(
    files: Sequence[str], compression: str | None = None, split_bytes: int | None = None
) -> list[tuple[str, tuple[int, int] | None, int | None, int]]:
    """The read units of `files` for workers that read apart (`record::plan_read_units`): `(path,
    (start, end) or None, records or None, bytes)` each. `split_bytes=None` keeps every file
    whole."""
def expand_inputs(inputs: Sequence[str]) -> list[str]:
    """The files that paths, directories and glob patterns name, in the order the readers take
    them (`record::expand_inputs`): a data set expands its inputs once, so every process it is
    pickled to reads the same list."""
def message_from_friendly_json(text: str, message: str) -> bytes:
    """Bytes of a message given in the friendly JSON form."""
def message_from_text(text: str, message: str) -> bytes:
    """Bytes of a message given in protobuf text format."""
def message_to_friendly_json(serialized: bytes, message: str) -> str:
    """The friendly one-line JSON form (`{"age": [19], "name": ["goat"]}`)."""
def message_to_json(serialized: bytes, message: str) -> str:
    """Protobuf's JSON mapping, as `json_format.MessageToJson` prints it."""
def message_to_text(serialized: bytes, message: str) -> str:
    """Protobuf text format, exactly as `print(tf.train.Example)` shows it."""
def parse_tensor(serialized: bytes, out_type: str) -> tuple[str, tuple[int, ...], bytes | list[bytes]]:
    """`(dtype_name, shape, values)` of serialized `TensorProto` bytes read as `out_type`:
    values as a little-endian `bytes` buffer, or a list of `bytes` for strings."""
def serialize_tensor(dtype_name: str, shape: Sequence[int], values: bytes | Iterable[bytes]) -> bytes:
    """`TensorProto` bytes for a tensor given as `dtype`, `shape` and either a little-endian
    buffer (numeric dtypes) or a list of `bytes` (strings)."""
def tensor_dtype_names() -> list[str]:
    """The dtype names `serialize_tensor` and `parse_tensor` accept."""
def stats_generate(
    inputs: Sequence[str],
    *,
    num_top_values: int,
    num_rank_histogram_buckets: int,
    num_values_histogram_buckets: int,
    num_histogram_buckets: int,
    num_quantiles_histogram_buckets: int,
    epsilon: float,
    threads: int,
    compression_type: str | None = None,
    on_corruption: str = "raise",
    kind: str = "auto",
    sample_rate: float | None = None,
    feature_allowlist: Sequence[str] | None = None,
) -> bytes:
    """The binary ``DatasetFeatureStatisticsList`` of the Examples in ``inputs``."""

def stats_partial_of_file(
    path: str,
    *,
    num_top_values: int,
    num_rank_histogram_buckets: int,
    num_values_histogram_buckets: int,
    num_histogram_buckets: int,
    num_quantiles_histogram_buckets: int,
    epsilon: float,
    compression_type: str | None = None,
    on_corruption: str = "raise",
    kind: str = "auto",
    sample_rate: float | None = None,
    feature_allowlist: Sequence[str] | None = None,
) -> tuple[bytes, tuple[int, int, int, int, int, int]]:
    """The partial statistics of one file (`StatsAccumulator::to_partial_bytes`) and what reading
it found, for `tfrec.ray`'s workers."""

def stats_partial_of_arrow(
    stream: object,
    *,
    num_top_values: int,
    num_rank_histogram_buckets: int,
    num_values_histogram_buckets: int,
    num_histogram_buckets: int,
    num_quantiles_histogram_buckets: int,
    epsilon: float,
    kind: str = "auto",
    feature_allowlist: Sequence[str] | None = None,
) -> tuple[bytes, tuple[int, int, int, int, int, int]]:
    """The partial statistics of the serialized records in the one binary column of an Arrow
stream (a capsule from `__arrow_c_stream__`: one Ray block's records, in row order) and
what reading them found, for `tfrec.ray`'s workers. A null row, or a column that is not
binary, is a `ValueError`."""

def stats_merge_partials(
    partials: Sequence[tuple[bytes, tuple[int, int, int, int, int, int]]],
    *,
    num_top_values: int,
    num_rank_histogram_buckets: int,
    num_values_histogram_buckets: int,
    num_histogram_buckets: int,
    num_quantiles_histogram_buckets: int,
    epsilon: float,
    kind: str = "auto",
    sample_rate: float | None = None,
    feature_allowlist: Sequence[str] | None = None,
) -> bytes:
    """The binary statistics of partials (each `(partial bytes, read counts)`) merged in the order
given, as one process merges its files'; empty partials give the statistics of nothing with
the options given."""

def stats_to_text(data: bytes) -> str:
    """Binary statistics as protobuf text."""

def stats_from_text(text: str) -> bytes:
    """Protobuf text statistics as binary."""

def stats_report_html(
    lhs: bytes,
    rhs: bytes | None = None,
    *,
    lhs_name: str | None = None,
    rhs_name: str | None = None,
    anomalies: bytes | None = None,
    anomalies_text: str | None = None,
    lhs_inputs: Sequence[str] | None = None,
    rhs_inputs: Sequence[str] | None = None,
    title: str | None = None,
    compression_type: str | None = None,
    on_corruption: str = "raise",
) -> str:
    """The report page of binary statistics ``lhs`` (its first data set, and its second when it
    has two) beside ``rhs``'s first; example values and thumbnails from the first records of
    ``lhs_inputs`` / ``rhs_inputs`` when given; features marked from binary or text
    ``Anomalies``."""
def stats_infer_schema(stats: bytes, *, infer_feature_shape: bool, max_string_domain_size: int) -> bytes:
    """The binary ``Schema`` ``tfdv.infer_schema`` infers from binary statistics."""

def stats_validate(
    stats: bytes, schema: bytes, *, previous: bytes | None = None, serving: bytes | None = None
) -> bytes:
    """The binary ``Anomalies`` of binary statistics against a binary schema."""

def schema_to_text(data: bytes) -> str:
    """A binary schema as protobuf text (TFDV's ``write_schema_text``)."""

def schema_from_text(text: str) -> bytes:
    """A protobuf text schema as binary (TFDV's ``load_schema_text``)."""

def schema_read_file(path: str | os.PathLike[str]) -> bytes:
    """The binary schema of a protobuf text file (TFDV's ``load_schema_text``); an error names the
    file and line."""

def anomalies_to_text(data: bytes) -> str:
    """Binary anomalies as protobuf text."""

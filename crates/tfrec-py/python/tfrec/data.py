"""Input pipelines with tf.data's meaning: :class:`Dataset` (files or in-memory elements, then
stages in call order) and ``TFRecordDataset`` (a ``Dataset`` of records as ``bytes``), with
``TFRecordWriter``.

Every stage applies to what the stage before it yields, as in tf.data: records before
``batch``, batches after it (``.batch(5).take(2)`` is two batches of five), parsed values
after ``parse``. The library's pipeline runs every stage: choosing files (``interleave``,
``shard(by="file")``), the record stages (``shard``, ``shuffle``, ``repeat``, ``skip``,
``take``), one ``batch``, the same stages over whole batches, and ``parse`` on its own threads
with the GIL released; after a ``map`` or ``filter`` (or a ``parse``) the same stages over the
elements, on the iterating thread, calling the Python functions with the GIL taken for each
call. One shuffle and one seeded generator serve every level, so ``shuffle(n, seed=s)`` gives
the same order with or without a ``map`` before it, as in tf.data. A stage that cannot run
where it is called (``interleave`` after a record stage) is a ``ValueError`` naming it, never
a silent reorder.

A data set is a description (files, stages, options): it pickles as one, and starts its
pipeline in the process that iterates it, so PyTorch's spawned DataLoader workers can each read
their shard.
"""

from io import BytesIO as _BytesIO
import json
import os
import random

from . import _specs, _stages, _tfrec
from . import io as _io
from ._records import TFRecordOptions, TFRecordWriter, compression as _compression, paths as _paths
from ._records import stream_records as _stream_records, stream_starts as _stream_starts, streams as _streams
from .random_access import RandomAccessDataset

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "RandomAccessDataset",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "TFRecordDataset",
    "TFRecordOptions",
    "TFRecordWriter",
    "experimental",
]

#: ``tf.data.AUTOTUNE``: accepted wherever tf.data accepts it (``prefetch``,
#: ``num_parallel_calls``, ``num_parallel_reads``); tfrec picks its own default there.
AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2

_U64_MAX = 2**64 - 1


def _wrap_outputs(item):
    if isinstance(item, dict):
        return _io._wrap_dict(item)
    if isinstance(item, tuple):
        return tuple(_io._wrap_dict(d) for d in item)
    return item


def _count(n, name):
    if n is None:
        return None
    n = int(n)
    if n < -1:
        raise ValueError(f"`{name}` count must be -1 or more, not {n}")
    return n


# What `threads`, `prefetch` and `deterministic` set, before they are called.
_DEFAULT_OPTIONS = {"threads": 1, "prefetch": 2, "deterministic": True}


class Dataset:
    """A pipeline over TFRecord files (paths, directories, glob patterns or object store URLs
    such as ``s3://bucket/train-*.tfrecord``), over file objects (anything with ``read()``:
    ``open(path, "rb")``, ``io.BytesIO``, fsspec's files; read on the iterating thread), or over
    in-memory elements (:meth:`from_tensor_slices`), with tf.data's stages in call order.

    Iterating yields what the last stage makes: ``bytes`` (records), lists of ``bytes``
    (batches of records), dicts of NumPy arrays (parsed Examples, ``SparseTensor`` /
    ``RaggedTensor`` for sparse and ragged features), ``(context, feature_lists, lengths)``
    (parsed SequenceExamples), or whatever a ``map`` returns.

    >>> ds = (tfrec.Dataset("train-*.tfrecord").shuffle(10_000, seed=1)
    ...       .batch(1024).parse({"age": tfrec.io.FixedLenFeature([], "int64")}).threads(2))
    >>> for batch in ds: ...
    """

    def __init__(
        self, filenames, compression_type=None, on_corruption="raise", torn_tail="raise", verify_crc=True
    ):
        reader = dict(
            compression_type=_compression(compression_type),
            on_corruption=on_corruption,
            torn_tail=torn_tail,
            verify_crc=verify_crc,
        )
        objs = _streams(filenames)
        if objs is not None:
            # File objects: their records come through the stream reader on the iterating
            # thread (a stream cannot be split by file or read by the Rust threads), and the
            # library runs every stage over them as over Python's elements.
            _tfrec.RecordIterator.from_stream(_BytesIO(b""), **reader)
            self._start(("streams", tuple(_stream_starts(objs)), reader))
            return
        files = tuple(_tfrec.expand_inputs(_paths(filenames)))
        # Checks the reader options now, as tf.data checks its arguments when the stage is made.
        _tfrec.Dataset(list(files[:1]), *reader.values())
        self._start(("files", files, reader))

    def _start(self, source):
        """Sets the data set up with ``source`` and no stages yet."""
        self._source = source
        self._stages = ()
        self._options = dict(_DEFAULT_OPTIONS)
        self._native = self._library_plan()

    # -- sources ------------------------------------------------------------------------

    @classmethod
    def from_tensor_slices(cls, tensors):
        """``tf.data.Dataset.from_tensor_slices``: the slices of NumPy arrays or lists (and
        tuples and dicts of them) along their first axis, as elements."""
        from ._slices import tensor_slices

        ds = object.__new__(Dataset)
        ds._start(("slices", tuple(tensor_slices(tensors)), {}))
        return ds

    @classmethod
    def from_generator(cls, generator, output_types=None, output_shapes=None, args=None, output_signature=None):
        """``tf.data.Dataset.from_generator``: the elements ``generator(*args)`` yields, called
        anew for each iteration. The type arguments are accepted for tf.data's sake (elements
        are Python and NumPy values here, so nothing is converted)."""
        if not callable(generator):
            raise TypeError(f"generator must be callable, not {type(generator).__name__}")
        ds = object.__new__(Dataset)
        ds._start(("generator", (generator, tuple(args or ())), {}))
        return ds

    # -- stages -------------------------------------------------------------------------

    def _with(self, stage=None, **options):
        ds = object.__new__(type(self))
        ds.__dict__.update(self.__dict__)
        if stage is not None:
            ds._stages = self._stages + (stage,)
            # The library places the stage now: a misplaced one fails here, when it is called.
            ds._native = stage.add_to(self._native, None)
        ds._options = {**self._options, **options}
        return ds

    def interleave(self, cycle_length, block_length=1):
        """Reads ``cycle_length`` files at a time, ``block_length`` records from each in turn
        (tf.data's ``interleave`` of a ``TFRecordDataset`` per file of the list). It chooses and
        orders files, so it comes before every record stage."""
        if cycle_length == AUTOTUNE:
            import os

            cycle_length = os.cpu_count() or 1
        if cycle_length < 1 or block_length < 1:
            raise ValueError("cycle_length and block_length must be at least 1")
        return self._with(_stages.Interleave(int(cycle_length), int(block_length)))

    def shard(self, num_shards, index, by="record"):
        """Keeps part ``index`` of ``num_shards``: every ``num_shards``-th element of the
        stream so far (``by="record"``, tf.data's meaning; batches after ``batch``), or whole
        files (``by="file"``: a file-level stage, a ``ValueError`` with fewer files than
        shards)."""
        if by not in ("record", "file"):
            raise ValueError(f"by must be 'record' or 'file', not {by!r}")
        if num_shards < 1:
            raise ValueError("num_shards must be at least 1")
        if not 0 <= index < num_shards:
            raise ValueError(f"shard index {index} is not below num_shards {num_shards}")
        if by == "file" and self._source[0] == "files" and len(self._source[1]) < num_shards:
            raise ValueError(
                f"sharding {len(self._source[1])} file(s) by file into {num_shards} shards leaves a shard "
                "with no file; shard by record instead"
            )
        return self._with(_stages.Shard(int(num_shards), int(index), by))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """Shuffles through a buffer of ``buffer_size`` elements. ``seed=None`` draws a seed
        for each iteration, as tf.data does; with ``reshuffle_each_iteration`` each pass of a
        later ``repeat`` gets a new order."""
        if buffer_size == AUTOTUNE:
            raise ValueError("shuffle's buffer_size must be at least 1 (AUTOTUNE is not a size)")
        if buffer_size < 1:
            raise ValueError("buffer_size must be at least 1")
        seed = None if seed is None else int(seed) & _U64_MAX
        return self._with(_stages.Shuffle(int(buffer_size), seed, bool(reshuffle_each_iteration)))

    def repeat(self, count=None):
        """Goes over the stream so far ``count`` times (``None`` or -1: forever)."""
        count = _count(count, "repeat")
        return self._with(_stages.Repeat(None if count == -1 else count))

    def skip(self, count):
        """Drops the first ``count`` elements (-1: all of them)."""
        return self._with(_stages.Skip(_count(count, "skip")))

    def take(self, count):
        """Keeps at most ``count`` elements (-1: all of them)."""
        return self._with(_stages.Take(_count(count, "take")))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None):
        """Groups ``batch_size`` elements; the last, smaller batch is dropped with
        ``drop_remainder``. Records become lists of ``bytes``; arrays are stacked."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        return self._with(_stages.Batch(int(batch_size), bool(drop_remainder)))

    def parse(self, features=None, context_features=None, sequence_features=None, *, strings="object"):
        """Parses Examples with ``features`` (``parse_example`` of each batch, or
        ``parse_single_example`` of each record when not batched), or SequenceExamples with
        ``context_features`` / ``sequence_features`` (yielding ``(context, feature_lists,
        lengths)``). ``strings``: the form of string features, ``"object"`` (object arrays of
        ``bytes``), ``"numpy"`` (``StringDType``) or ``"arrow"`` (pyarrow ``binary``), as in
        :mod:`tfrec.io`. The specs are checked now."""
        if context_features is not None or sequence_features is not None:
            specs = ({**(context_features or {})}, {**(sequence_features or {})})
            _io._sequence_parser(*specs)
            return self._with(_stages.Parse("sequence", specs, strings))
        _io._parser(_specs.specs_json(features), False)
        return self._with(_stages.Parse("example", {**(features or {})}, strings))

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies ``map_func`` to each element (a tuple element is its arguments, as in
        tf.data). It runs on the iterating thread; ``num_parallel_calls`` (``AUTOTUNE``
        included) is accepted for tf.data's sake: reading and parsing already run on the
        pipeline's threads."""
        if not callable(map_func):
            raise TypeError(f"map_func must be callable, not {type(map_func).__name__}")
        return self._with(_stages.Map(map_func))

    def filter(self, predicate, name=None):
        """Keeps the elements for which ``predicate`` is true."""
        if not callable(predicate):
            raise TypeError(f"predicate must be callable, not {type(predicate).__name__}")
        return self._with(_stages.Filter(predicate))

    def prefetch(self, buffer_size, name=None):
        """Batches kept ready ahead of the consumer (``AUTOTUNE``: the default, 2)."""
        buffer_size = 2 if buffer_size in (None, AUTOTUNE) else int(buffer_size)
        if buffer_size < 0:
            raise ValueError("prefetch buffer_size must be AUTOTUNE (-1) or at least 0")
        return self._with(prefetch=max(buffer_size, 1))

    def threads(self, threads):
        """Worker threads reading and parsing (default 1: one core; each worker in turn reads a
        batch, then parses it while another reads). With two or more, one file is also read on
        every worker, in spans taken back in file order: a plain file, or a GZIP or ZLIB file
        with its seek index (``tfrec index FILE``); the batches are those of one thread."""
        return self._with(threads=max(1, int(threads)))

    def deterministic(self, deterministic=True):
        """``False`` hands batches over as they finish rather than in order."""
        return self._with(deterministic=bool(deterministic))

    # -- what it is -----------------------------------------------------------------------

    def cardinality(self):
        """The number of elements when known (tf.data's rules): ``INFINITE_CARDINALITY``
        (-1) after an endless ``repeat``, ``UNKNOWN_CARDINALITY`` (-2) for records of files
        (their count is only known by reading them) unless a ``take`` bounds it."""
        return self._native.cardinality()

    def __len__(self):
        n = self.cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    @property
    def element_spec(self):
        """What an element is, in words (``"bytes"``, ``"list of bytes"``, ``"dict of
        arrays"``, …)."""
        element = "bytes" if self._source[0] == "files" else "element"
        for stage in self._stages:
            if stage.name == "batch":
                element = {"bytes": "list of bytes"}.get(element, f"batch of ({element})")
            elif stage.name == "parse":
                batched = element == "list of bytes"
                if stage.kind == "example":
                    element = "dict of arrays" if element in ("bytes", "list of bytes") else "parsed"
                else:
                    element = "(context, feature_lists, lengths)"
                element = element if batched or element == "parsed" else element + ", one record"
            elif stage.name == "map":
                element = "what the map function returns"
        return element

    @property
    def batch_size(self):
        """The size of the first ``batch`` stage, or ``None``."""
        sizes = [s.batch_size for s in self._stages if s.name == "batch"]
        return sizes[0] if sizes else None

    def __repr__(self):
        kind, source, _ = self._source
        if kind == "files":
            what = f"{len(source)} file{'s' if len(source) != 1 else ''}"
        elif kind == "streams":
            what = f"{len(source)} file object{'s' if len(source) != 1 else ''}"
        elif kind == "slices":
            what = f"{len(source)} slices"
        else:
            what = f"generator {getattr(source[0], '__name__', type(source[0]).__name__)}"
        stages = " -> ".join(s.text() for s in self._stages) or "no stages"
        return f"<tfrec.data.{type(self).__name__} {what}: {stages}; elements: {self.element_spec}>"

    def __getstate__(self):
        return {"_source": self._source, "_stages": self._stages, "_options": self._options}

    def _shard_files_first(self, num_shards, index):
        """This data set split between ``num_shards`` readers by whole files, before every
        stage: what a loader's workers do so that each reads only its files. Refused (a
        ``ValueError``) with fewer files than shards, or where a stage picks elements by
        position (``take``, ``skip``, ``shard``), whose meaning splitting first would change."""
        if self._source[0] != "files":
            raise ValueError("only a data set of files can be split by file")
        positional = [s.name for s in self._stages if s.name in ("take", "skip", "shard")]
        if positional:
            raise ValueError(f"`{positional[0]}` picks elements by position: split the output instead")
        if len(self._source[1]) < num_shards:
            raise ValueError(f"{len(self._source[1])} file(s) cannot be split by file into {num_shards} shards")
        ds = self._with()
        ds._stages = (_stages.Shard(int(num_shards), int(index), "file"),) + self._stages
        ds._native = ds._library_plan()
        return ds

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._native = self._library_plan()

    # -- the library's plan --------------------------------------------------------------

    def _library_plan(self, seeds=None):
        """The library's plan of this data set (``_tfrec.Dataset``), which places and runs every
        stage; ``seeds``: the seed of each ``shuffle`` given none, by stage index."""
        kind, source, reader = self._source
        if kind == "files":
            ds = _tfrec.Dataset(list(source), *reader.values())
        elif kind == "slices":
            ds = _tfrec.Dataset.from_python(lambda: iter(source), len(source))
        elif kind == "generator":
            generator, args = source
            ds = _tfrec.Dataset.from_python(lambda: generator(*args))
        else:
            ds = _tfrec.Dataset.from_python(self._stream_elements)
        for i, stage in enumerate(self._stages):
            ds = stage.add_to(ds, (seeds or {}).get(i))
        return ds

    def _stream_elements(self):
        _, objs, reader = self._source
        buffer_size = getattr(self, "_buffer_size", None)
        return (r for obj in objs for r in _stream_records(obj, reader, buffer_size))

    def _running_plan(self):
        """The plan to run now, with its options, each unseeded shuffle seeded for this
        iteration as tf.data seeds it."""
        seeds = self._draw_seeds()
        ds = self._library_plan(seeds) if seeds else self._native
        o = self._options
        return ds.threads(o["threads"]).prefetch(o["prefetch"]).deterministic(o["deterministic"])

    # -- running ------------------------------------------------------------------------

    def __iter__(self):
        ds = self._running_plan()
        if ds.has_element_stages:
            return ds.elements(_wrap_outputs)
        return map(_wrap_outputs, iter(ds))

    def as_numpy_iterator(self):
        """The elements with lists of ``bytes`` as NumPy object arrays, as tf.data's
        ``as_numpy_iterator`` gives them (everything else is NumPy already)."""
        return (_to_numpy(x) for x in self)

    def iterator(self):
        """The running Rust pipeline, with ``stats()``; iterate it for the raw (unwrapped)
        items. Only for data sets whose every stage runs in Rust."""
        return iter(self._rust_only("iterator"))

    def _rust_only(self, what):
        ds = self._running_plan()
        if ds.has_element_stages:
            raise ValueError(f"{what}() needs a data set whose every stage runs in the Rust pipeline (no map after it)")
        return ds

    def _draw_seeds(self):
        """A seed for each ``shuffle`` given none (by stage index), drawn for each iteration as
        tf.data draws it."""
        draw = random.SystemRandom()
        return {i: draw.getrandbits(64) for i, s in enumerate(self._stages) if s.name == "shuffle" and s.seed is None}

    def _drain(self):
        return self._rust_only("_drain")._drain()

    def to_arrow(self, spec=None, *, utf8=False, batch_rows=65536):
        """The pipeline's output as Arrow record batches: a :class:`tfrec.arrow.ArrowStream`
        (``__arrow_c_stream__``, so ``pyarrow.table(ds.to_arrow())`` and
        ``polars.DataFrame(ds.to_arrow())`` take it without a copy). The columns follow the
        specs of ``parse`` (or ``spec``, when the pipeline has no parse stage; see
        :func:`tfrec.arrow.read` for the column types) and are made by the worker threads; a
        batch holds the pipeline's ``batch`` size, or ``batch_rows`` rows when it has none."""
        from .arrow import ArrowStream

        text = None if spec is None else json.dumps(_specs.spec_dict(spec))
        # Planned now, without starting the pipeline: a missing or bad spec fails here.
        return ArrowStream._of(self._rust_only("to_arrow").to_arrow(text, utf8, None, batch_rows))


def _to_numpy(x):
    import numpy as np

    if isinstance(x, dict):
        return {k: _to_numpy(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_to_numpy(v) for v in x)
    if isinstance(x, list):
        return np.array(x, dtype=object) if x and isinstance(x[0], bytes) else np.asarray(x)
    return x


class _DatasetWriter:
    """``tf.data.experimental.TFRecordWriter``: ``write(dataset)`` writes every record of a data
    set (or any iterable of records) to ``filename`` and closes it."""

    def __init__(self, filename, compression_type=None):
        self._filename = filename
        self._compression = compression_type or None

    def write(self, dataset):
        # TensorFlow's writer truncates its file before reading the data set, so writing over
        # one of its files loses it: refused here, before anything is opened.
        source = getattr(dataset, "_source", None)
        if source is not None and source[0] == "files" and isinstance(self._filename, (str, os.PathLike)):
            _tfrec.refuse_same_file(os.fsdecode(self._filename), list(source[1]))
        with TFRecordWriter(self._filename, compression=self._compression) as writer:
            writer.write(dataset)

    def __repr__(self):
        return f"<tfrec.data.experimental.TFRecordWriter {self._filename!r}>"


class experimental:  # noqa: N801  (tf.data.experimental's name)
    """``tf.data.experimental``: what of it tfrec has."""

    TFRecordWriter = _DatasetWriter
    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY


class TFRecordDataset(Dataset):
    """``tf.data.TFRecordDataset``: the records of files (paths, glob patterns, object store
    URLs, or file objects with ``read()``) as ``bytes``, with every stage of :class:`Dataset`.

    ``compression_type``: ``None`` decides per file from its extension, else its first bytes;
    ``""``/``"NONE"``, ``"GZIP"``, ``"ZLIB"`` force one. ``num_parallel_reads`` reads that
    many files at a time, a record from each in turn (tf.data's deterministic order). A
    damaged record raises :class:`tfrec.errors.DataLossError` naming the file, byte offset and
    record index, unless ``on_corruption`` is ``"skip"`` (skip the damaged record,
    resynchronising) or ``"skip_file"`` (skip the rest of that file). ``torn_tail="skip"``
    accepts a partial record header at the end of a file (one still being written); by
    default it is reported, where TensorFlow silently drops it.
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
        super().__init__(filenames, compression_type, on_corruption, torn_tail, verify_crc)
        self._buffer_size = buffer_size
        if num_parallel_reads is not None and num_parallel_reads != 1:
            interleaved = self.interleave(num_parallel_reads, 1)
            self._stages, self._native = interleaved._stages, interleaved._native

    def __getstate__(self):
        return {**super().__getstate__(), "_buffer_size": self._buffer_size}

    def records(self):
        """The files' records through the plain reader (with ``stats()`` and ``problems()``),
        ignoring the stages."""
        kind, files, reader = self._source
        if kind == "streams":
            if len(files) != 1:
                raise ValueError("records() reads one file object; iterate the data set for several")
            return _stream_records(files[0], reader, self._buffer_size)
        return _tfrec.RecordIterator(list(files), buffer_size=self._buffer_size, **reader)

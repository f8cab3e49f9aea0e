"""Random access to TFRecord files: :class:`RandomAccessDataset`, a map-style data set
(``len(ds)``, ``ds[i]``, ``ds[[i, j]]``, slices) over one file or many, for a global shuffle
each epoch with PyTorch's samplers (``tfrec.torch.MapDataset``) or Grain, which read any
``__len__`` + ``__getitem__`` source.

Records are read with one positional read each and both CRCs checked. Each file needs an
index of record offsets: ``FILE.idx`` beside it (what ``tfrec index`` writes; DALI's
``tfrecord2idx`` and the ``tfrecord`` package's ``offset length`` files are the same format),
built on first use and saved there when the directory is writable, else kept in memory.
A GZIP or ZLIB file has a seek index instead, ``FILE.zidx`` (``tfrec index`` writes it too;
built and saved the same way): checkpoints about every MiB of inflated records, so record N
is inflated from the nearest one. Inflated spans are kept in a cache of up to 256 MiB of
inflated records shared by the process (least recently used evicted first), so while the
records read fit in it each span is inflated once, whatever the order of the reads.
"""

import operator
import os

from . import _specs, _tfrec
from . import io as _io
from ._records import streams as _streams

__all__ = ["RandomAccessDataset"]


def _as_list(filenames):
    """One path or many, as ``str`` (globs and directories are expanded by the Rust side)."""
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    return [os.fsdecode(f) for f in filenames]


class RandomAccessDataset:
    """The records of TFRecord files (plain, GZIP or ZLIB) by position: ``ds[i]`` is the i-th record of
    reading the files in order (as ``tfrec.TFRecordDataset`` yields them).

    ``filenames``: a path, glob, directory or object store URL, or a list of them; or file
    objects with ``read()`` and ``seek()`` (indexed by reading each once, kept in memory). ``features``: a parse spec
    (``{name: tfrec.io.FixedLenFeature(...), ...}`` as ``tfrec.io.parse_example`` takes); with it
    ``ds[i]`` is ``parse_single_example``'s dict, without it the record's ``bytes``; ``strings``:
    the form of its string features (``"object"``, ``"numpy"`` or ``"arrow"``, as in
    :mod:`tfrec.io`). ``index_paths``: one index path (or ``None`` for ``FILE.idx``, ``FILE.zidx`` for a compressed
    file) per file after expansion.

    - ``ds[i]`` (negative from the end), ``ds[[i, j, k]]`` or ``ds[np.array([...])]`` (a list),
      ``ds[a:b:c]`` (a list); ``IndexError`` past the end.
    - ``ds.__getitems__(indices)``: a list of items, the contract PyTorch's ``DataLoader`` calls
      with each batch of sampled indices (its collate then makes the batch).
    - ``ds.get_batch(indices)``: with ``features``, ONE ``parse_example`` dict for all of
      ``indices`` (parsed at once, with a leading batch dimension); without, a list of ``bytes``.

    It pickles as its description (files, features, index paths) and opens the files again
    lazily in the process that uses it, so it can be sent to workers started with ``spawn``.
    ``__len__`` and ``__getitem__`` make it a Grain ``RandomAccessDataSource``.
    """

    def __init__(self, filenames, features=None, index_paths=None, *, strings="object"):
        if index_paths is not None:
            if isinstance(index_paths, (str, bytes, os.PathLike)):
                index_paths = [index_paths]
            index_paths = [None if p is None else os.fsdecode(p) for p in index_paths]
        objs = _streams(filenames)
        if objs is not None:
            if index_paths is not None:
                raise ValueError("index_paths is for files: a file object is indexed by reading it once")
            self._files = _tfrec.RecordFiles.from_streams(objs)
        else:
            self._files = _tfrec.RecordFiles(_as_list(filenames), index_paths)
        self._streams = objs is not None
        self._paths = self._files.paths
        # The indexes in use: a worker loads them instead of scanning the files again.
        self._index_paths = self._files.index_paths
        self._len = len(self._files)
        self._features = features
        self._strings = strings
        self._parser = None
        if features is not None:
            # Checks the spec and `strings` now, on an empty batch.
            self._parse([], False)

    # -- opening lazily -------------------------------------------------------------------

    def _reader(self):
        files = self._files
        if files is None:
            files = self._files = _tfrec.RecordFiles(self._paths, self._index_paths)
            if len(files) != self._len:
                raise ValueError(
                    f"the files now hold {len(files)} records where this data set had {self._len}: "
                    "they changed since it was made"
                )
        return files

    def _spec_parser(self):
        """``(parser, wrap)``: the compiled spec and ``tfrec.io``'s wrapping of its outputs."""
        if self._parser is None:
            self._parser = (_io._parser(_specs.specs_json(self._features), False), _io._wrap_dict)
        return self._parser

    def __getstate__(self):
        if getattr(self, "_streams", False):
            raise TypeError("a RandomAccessDataset over file objects cannot be pickled (a worker cannot open "
                            "the same file object): give it paths or URLs")
        return {
            "paths": self._paths,
            "index_paths": self._index_paths,
            "len": self._len,
            "features": self._features,
            "strings": self._strings,
        }

    def __setstate__(self, state):
        self._paths = state["paths"]
        self._index_paths = state["index_paths"]
        self._len = state["len"]
        self._features = state["features"]
        self._strings = state.get("strings", "object")
        self._files = None
        self._parser = None

    # -- the sequence ---------------------------------------------------------------------

    def __len__(self):
        return self._len

    @property
    def features(self):
        """The parse spec, or ``None`` (items are ``bytes``)."""
        return self._features

    @property
    def filenames(self):
        """The files, after expansion, in record order."""
        return list(self._paths)

    def _parse(self, records, single):
        parser, wrap = self._spec_parser()
        return wrap(parser.parse_example(records, single, 1, self._strings))

    def _one(self, record):
        if self._features is None:
            return record
        return self._parse(record, True)

    def _records(self, indices):
        if hasattr(indices, "tolist"):  # a NumPy array: one conversion, not one per element
            indices = indices.tolist()
        elif isinstance(indices, range):
            indices = list(indices)
        elif not isinstance(indices, list):
            indices = [operator.index(i) for i in indices]
        return self._reader().get_many(indices)

    def __getitem__(self, key):
        if isinstance(key, int):
            # The hot path of one-at-a-time reading: no further Python calls for raw records.
            files = self._files
            if files is None:
                files = self._reader()
            record = files.get(key)
            return record if self._features is None else self._one(record)
        if isinstance(key, slice):
            return self.__getitems__(range(*key.indices(self._len)))
        if isinstance(key, (str, bytes)):
            raise TypeError(f"record indices must be integers, slices or lists, not {type(key).__name__}")
        if getattr(key, "ndim", None) == 0:  # NumPy integers and 0-d arrays
            return self._one(self._reader().get(operator.index(key)))
        return self.__getitems__(key)

    def __getitems__(self, indices):
        """A list with one item per index (``bytes``, or a parsed dict with ``features``): the
        contract of ``torch.utils.data.Dataset.__getitems__``, whose caller collates the list."""
        records = self._records(indices)
        if self._features is None:
            return records
        return [self._one(r) for r in records]

    def get_batch(self, indices):
        """With ``features``: one ``parse_example`` dict for the records of ``indices``, parsed
        at once. Without: the records as a list of ``bytes``."""
        records = self._records(indices)
        if self._features is None:
            return records
        return self._parse(records, False)

    def __iter__(self):
        for start in range(0, self._len, 256):
            yield from self.__getitems__(range(start, min(start + 256, self._len)))

    def __repr__(self):
        n = len(self._paths)
        files = repr(self._paths[0]) if n == 1 else f"{n} files"
        what = "bytes" if self._features is None else "{" + ", ".join(map(str, self._features)) + "}"
        return f"RandomAccessDataset({files}, records={self._len}, items={what})"

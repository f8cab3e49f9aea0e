"""The stages of a :class:`tfrec.Dataset` as typed values, in call order: what a data set is
(it pickles as its source, these and its options) and what each adds to the library's plan
(``_tfrec.Dataset``), which places every stage (on records, on batches, on the worker threads,
or on elements after a Python function) and runs them all. Here too are the two things the
library asks of Python for elements it cannot know: a ``batch`` of Python values (``stack``)
and a ``parse`` of values a ``map`` made (``parse_element``)."""

from typing import Any, Callable, Literal, NamedTuple, Optional, Union

from . import _specs, _tfrec
from . import io as _io

_U64_MAX = 2**64 - 1


def _name(f: object) -> str:
    return str(getattr(f, "__name__", type(f).__name__))


class Interleave(NamedTuple):
    cycle_length: int
    block_length: int

    @property
    def name(self) -> str:
        return "interleave"

    def text(self) -> str:
        return f"interleave({self.cycle_length!r}, {self.block_length!r})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        return ds.interleave(self.cycle_length, self.block_length)


class Shard(NamedTuple):
    num_shards: int
    shard_index: int
    by: str

    @property
    def name(self) -> str:
        return "shard"

    def text(self) -> str:
        return f"shard({self.num_shards}, {self.shard_index}{', by=file' if self.by == 'file' else ''})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        return ds.shard(self.num_shards, self.shard_index, self.by)


class Shuffle(NamedTuple):
    buffer_size: int
    # None: drawn for each iteration (``seed`` of ``add_to``).
    seed: Optional[int]
    reshuffle_each_iteration: bool

    @property
    def name(self) -> str:
        return "shuffle"

    def text(self) -> str:
        return f"shuffle({self.buffer_size}, seed={self.seed})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        chosen = self.seed if self.seed is not None else (seed or 0)
        return ds.shuffle(self.buffer_size, chosen, self.reshuffle_each_iteration)


class Repeat(NamedTuple):
    # None: forever.
    times: Optional[int]

    @property
    def name(self) -> str:
        return "repeat"

    def text(self) -> str:
        return f"repeat({self.times!r})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        return ds.repeat(self.times)


class Skip(NamedTuple):
    # -1: all of them.
    n: int

    @property
    def name(self) -> str:
        return "skip"

    def text(self) -> str:
        return f"skip({self.n!r})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        return ds.skip(_U64_MAX if self.n == -1 else self.n)


class Take(NamedTuple):
    # -1: all of them.
    n: int

    @property
    def name(self) -> str:
        return "take"

    def text(self) -> str:
        return f"take({self.n!r})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        return ds if self.n == -1 else ds.take(self.n)


class Batch(NamedTuple):
    batch_size: int
    drop_remainder: bool

    @property
    def name(self) -> str:
        return "batch"

    def text(self) -> str:
        return f"batch({self.batch_size}{', drop_remainder=True' if self.drop_remainder else ''})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        return ds.batch(self.batch_size, self.drop_remainder, stack)


class Parse(NamedTuple):
    # "example" (specs: a dict of features) or "sequence" (specs: context and sequence features).
    kind: str
    specs: Any
    # The form of string tensors.
    strings: Literal["object", "numpy", "arrow"] = "object"

    @property
    def name(self) -> str:
        return "parse"

    def text(self) -> str:
        n = len(self.specs) if self.kind == "example" else sum(len(s or {}) for s in self.specs)
        return f"parse({n} feature{'s' if n != 1 else ''}{', sequence' if self.kind == 'sequence' else ''})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        if self.kind == "sequence":
            return ds.parse(_specs.sequence_specs_json(*self.specs), True, self.parse_element, self.strings)
        return ds.parse(_specs.specs_json(self.specs), False, self.parse_element, self.strings)

    def parse_element(self, x: Any) -> Any:
        """``parse`` in Python (after a ``map`` or another parse, or over in-memory elements):
        one record, or a batch (a list or array of records)."""
        single = isinstance(x, bytes)
        if self.kind == "sequence":
            parser = _io._sequence_parser(*self.specs)
            if single:
                context, lists, lengths = parser.parse_sequence_example(x, True, 1, self.strings)
            else:
                context, lists, lengths = _io._call_with_serialized(
                    lambda s: parser.parse_sequence_example(s, False, 1, self.strings), x
                )
            return _io._wrap_dict(context), _io._wrap_dict(lists), _io._wrap_dict(lengths)
        parser = _io._parser(_specs.specs_json(self.specs), False)
        if single:
            return _io._wrap_dict(parser.parse_example(x, True, 1, self.strings))
        return _io._wrap_dict(_io._call_with_serialized(lambda s: parser.parse_example(s, False, 1, self.strings), x))


class Map(NamedTuple):
    func: Callable[..., Any]

    @property
    def name(self) -> str:
        return "map"

    def text(self) -> str:
        return f"map({_name(self.func)})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        return ds.map(self.func)


class Filter(NamedTuple):
    predicate: Callable[..., object]

    @property
    def name(self) -> str:
        return "filter"

    def text(self) -> str:
        return f"filter({_name(self.predicate)})"

    def add_to(self, ds: _tfrec.Dataset, seed: Optional[int]) -> _tfrec.Dataset:
        return ds.filter(self.predicate)


Stage = Union[Interleave, Shard, Shuffle, Repeat, Skip, Take, Batch, Parse, Map, Filter]


def stack(elements: list[Any]) -> Any:
    """tf.data's ``batch`` of Python values: dicts and tuples component by component; records
    (``bytes``) as a list, as the library's batches of records; arrays stacked on a new first
    axis (they must have one shape, as tf.data requires)."""
    import numpy as np

    first = elements[0]
    if isinstance(first, dict):
        return {k: stack([e[k] for e in elements]) for k in first}
    if isinstance(first, tuple):
        return tuple(stack(list(c)) for c in zip(*elements))
    if isinstance(first, (bytes, str)):
        return list(elements)
    if hasattr(first, "indices") or hasattr(first, "nested_row_splits"):
        raise ValueError(
            "`batch` of parsed sparse or ragged values runs only before `parse` "
            "(batch the records, then parse them with parse_example)"
        )
    arrays = [np.asarray(e) for e in elements]
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError(
            f"`batch` needs elements of one shape, as tf.data's does; these have {sorted(shapes)} "
            "(use `batch` before `parse`, or pad them in a `map`)"
        )
    return np.stack(arrays)

"""The stages of a data set that run in Python: those after a ``map`` (a Python function), a
second ``batch``, and every stage over in-memory elements (``from_tensor_slices``). Each is
tf.data's stage over whatever the stage before yields; the Rust pipeline runs the stages
before them (see :mod:`tfrec.data`)."""

import itertools
import random

import numpy as np

INFINITE = -1
UNKNOWN = -2


def mix(seed, epoch):
    """The seed of iteration ``epoch`` of a reshuffling stage: fixed by the seed, new each
    iteration (SplitMix64's finaliser, so nearby epochs give unrelated seeds)."""
    if epoch == 0:
        return seed
    z = (seed ^ (epoch * 0xD1B54A32D192ED03)) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def call(fn, element):
    """tf.data's calling convention: a tuple element is the function's arguments."""
    return fn(*element) if isinstance(element, tuple) else fn(element)


def shuffle(items, buffer_size, seed):
    rng = random.Random(seed)
    buffer = []
    for item in items:
        buffer.append(item)
        if len(buffer) >= buffer_size:
            i = rng.randrange(len(buffer))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()
    while buffer:
        i = rng.randrange(len(buffer))
        buffer[i], buffer[-1] = buffer[-1], buffer[i]
        yield buffer.pop()


def repeat(upstream, count, epoch):
    """``upstream(epoch)`` again and again: ``count`` times, or forever (``None``) unless an
    iteration yields nothing."""
    for e in itertools.count() if count is None else range(count):
        produced = False
        for item in upstream(mix(epoch, e + 1) if e else epoch):
            produced = True
            yield item
        if count is None and not produced:
            return


def batch(items, size, drop_remainder):
    while True:
        chunk = list(itertools.islice(items, size))
        if not chunk or (drop_remainder and len(chunk) < size):
            return
        yield stack(chunk)


def stack(elements):
    """tf.data's ``batch`` of elements: dicts and tuples component by component; records
    (``bytes``) as a list, as the Rust pipeline's batches of records; arrays stacked on a new
    first axis (they must have one shape, as tf.data requires)."""
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


def cardinality(count, stage):
    """The number of elements after ``stage`` given ``count`` before it (tf.data's rules)."""
    name = stage[0]
    if name in ("map", "parse", "shuffle"):
        return count
    if name in ("filter", "interleave"):
        return UNKNOWN
    if name == "shard" and stage[3] == "file":
        return UNKNOWN
    if name == "repeat":
        n = stage[1]
        if n == 0 or count == 0:
            return 0
        if n is None or count == INFINITE:
            return INFINITE
        return UNKNOWN if count == UNKNOWN else count * n
    if count == UNKNOWN:
        return UNKNOWN
    if name == "take":
        n = stage[1]
        return count if n < 0 else (n if count == INFINITE else min(count, n))
    if name == "skip":
        n = stage[1]
        return INFINITE if count == INFINITE else (0 if n < 0 else max(count - n, 0))
    if name == "batch":
        if count == INFINITE:
            return INFINITE
        size, drop = stage[1], stage[2]
        return count // size if drop else -(-count // size)
    if name == "shard":
        if count == INFINITE:
            return INFINITE
        n, i = stage[1], stage[2]
        return count // n + (1 if i < count % n else 0)
    return UNKNOWN

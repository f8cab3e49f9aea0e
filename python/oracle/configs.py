"""Random state saver configurations for the TF 1.15 differential test, shared by the TF side
(``tf115_run.py``, Python 3.7 + tensorflow-cpu 1.15) and the tfrec side (``compare.py``).
Plain ``random.Random`` and lists only, so that both interpreters and NumPy versions build the
same data."""

import random

# Dtype names as NumPy and TensorFlow both spell them.
SEQ_DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "int8", "int16", "bool", "string"]
STATE_DTYPES = ["float32", "float64", "int32", "int64", "int16", "float16"]


def values(rng, dtype, n):
    """``n`` values of ``dtype``: small integers (sums stay exact in every float type)."""
    if dtype == "string":
        return [("s%d" % rng.randint(0, 99)).encode() * rng.randint(0, 2) for _ in range(n)]
    if dtype == "bool":
        return [bool(rng.randint(0, 1)) for _ in range(n)]
    lo = 0 if dtype.startswith("uint") else -9
    return [rng.randint(lo, 9) for _ in range(n)]


def config(seed):
    rng = random.Random(seed)
    u = rng.randint(1, 8)
    b = rng.randint(1, 8)
    pad = rng.random() < 0.6
    cap_kind = rng.random()
    if cap_kind < 0.15:
        capacity = None
    elif cap_kind < 0.55:
        capacity = rng.randint(b, b + 4)
    else:
        capacity = rng.randint(b, 1000)
    n = rng.randint(1, 14)
    a_dtype = rng.choice(SEQ_DTYPES)
    b_dtype = rng.choice(SEQ_DTYPES)
    c_dtype = rng.choice(SEQ_DTYPES)
    s_dtype = rng.choice(STATE_DTYPES)
    feat = rng.randint(1, 3)
    examples = []
    for i in range(n):
        if pad:
            steps = rng.randint(1, 50)
        else:
            steps = u * rng.randint(1, max(1, 50 // u))
        length = None if rng.random() < 0.5 else rng.randint(0, steps)
        examples.append({
            "key": "k%d" % i,
            "steps": steps,
            "length": length,
            "a": values(rng, a_dtype, steps * feat),
            "b": values(rng, b_dtype, steps),
            "c": values(rng, c_dtype, 2),
        })
    return {
        "seed": seed,
        "num_unroll": u,
        "batch_size": b,
        "capacity": capacity,
        "pad": pad,
        "allow_small_batch": rng.random() < 0.5,
        "feat": feat,
        "dtypes": {"a": a_dtype, "b": b_dtype, "c": c_dtype, "s": s_dtype},
        "examples": examples,
    }


SPARSE_DTYPES = ["int64", "float32", "string", "int32", "float64"]


def sparse(rng, dtype, outer, inner_rank, inner_max):
    """A sparse tensor ``[outer, d...]`` (``d`` drawn per call, so that shapes differ between
    examples) as ``(indices, values, dense_shape)`` lists, indices in row-major order as TF's
    sparse ops require; ``outer=None`` leaves the leading dimension out (a context tensor)."""
    dims = [rng.randint(1, inner_max) for _ in range(inner_rank)]
    shape = ([] if outer is None else [outer]) + dims
    cells = 1
    for d in shape:
        cells *= d
    chosen = sorted(rng.sample(range(cells), min(cells, rng.randint(0, 6)))) if cells else []
    indices = []
    for c in chosen:
        idx = []
        for d in reversed(shape):
            idx.append(c % d)
            c //= d
        indices.append(idx[::-1])
    return {"indices": indices, "values": values(rng, dtype, len(indices)), "dense_shape": shape}


def config_v2(seed):
    """Version 2: lengths 1-50, and 0 for one example in some configurations, a sparse
    sequence ``sp`` ``[steps, d]`` and a sparse context ``sc`` (rank 1 or 2) in some, and keys
    that are not UTF-8 in some. Drawn from its own stream, so that version 1 is unchanged."""
    cfg = config(seed)
    rng = random.Random(seed * 7919 + 2)
    u, pad = cfg["num_unroll"], cfg["pad"]
    with_sp = rng.random() < 0.5
    with_sc = rng.random() < 0.4
    raw_keys = rng.random() < 0.4
    zero_at = rng.randrange(len(cfg["examples"])) if rng.random() < 0.15 else None
    sp_dtype = rng.choice(SPARSE_DTYPES)
    sc_dtype = rng.choice(SPARSE_DTYPES)
    sc_rank = rng.randint(1, 2)
    if pad:
        # TF 1.15 cannot pad bool sequences (a graph-building TypeError that version 1 counts);
        # version 2 spends those configurations on uint8 instead.
        for k in ("a", "b"):
            if cfg["dtypes"][k] == "bool":
                cfg["dtypes"][k] = "uint8"
    for i, e in enumerate(cfg["examples"]):
        e["key"] = (b"\xff\x00k%d\x80" % i) if raw_keys else (b"k%d" % i)
        if pad:
            steps = rng.randint(1, 50)
        else:
            steps = u * rng.randint(1, max(1, 50 // u))
        # TF 1.15 rejects a zero-length sequence (an assertion in the input thread, which ends
        # the run), so only some configurations have one.
        if i == zero_at:
            steps = 0
        feat = cfg["feat"]
        e["steps"] = steps
        e["length"] = None if rng.random() < 0.5 else rng.randint(0, steps)
        e["a"] = values(rng, cfg["dtypes"]["a"], steps * feat)
        e["b"] = values(rng, cfg["dtypes"]["b"], steps)
        if with_sp:
            e["sp"] = sparse(rng, sp_dtype, steps, 1, 4)
        if with_sc:
            e["sc"] = sparse(rng, sc_dtype, None, sc_rank, 5)
    cfg["version"] = 2
    cfg["sparse"] = {"sp": sp_dtype if with_sp else None, "sc": sc_dtype if with_sc else None}
    cfg["raw_keys"] = raw_keys
    cfg["zero_length"] = zero_at is not None
    return cfg

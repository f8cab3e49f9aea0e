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

"""The tfrec side of the differential test: runs ``tfrec.batch_sequences_with_states`` on the
configurations that ``tf115_run.py`` ran under TensorFlow 1.15 and compares every field of
every batch (keys, next keys, sequence numbers and counts, lengths, total lengths, insertion
indices, padded sequences, context, both states) with TensorFlow's.

    python python/oracle/compare.py python/oracle/tf115_results.pickle.gz

Where TensorFlow hung at the end of the input (``end: timeout``), its batches must be a prefix
of tfrec's, which goes on to hand out the remaining segments as small batches. tfrec is run
with a thread count and, where TF's capacity was bounded, also ``capacity=None``: batches must
not depend on either."""

import gzip
import os
import pickle
import sys

import numpy as np

import tfrec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from configs import config, config_v2  # noqa: E402

FIELDS = ["key", "next_key", "sequence", "sequence_count", "length", "total_length", "insertion_index", "a", "b",
          "c", "s", "t"]


def np_dtype(d):
    return object if d == "string" else np.dtype(d)


def sparse_in(sp, dtype):
    rank = len(sp["dense_shape"])
    return tfrec.io.SparseTensor(np.array(sp["indices"], dtype=np.int64).reshape(len(sp["values"]), rank),
                                 np.array(sp["values"], dtype=np_dtype(dtype)),
                                 np.array(sp["dense_shape"], dtype=np.int64))


def plain(v):
    if isinstance(v, tfrec.io.SparseTensor):
        return {"indices": v.indices.tolist(), "values": v.values.tolist(), "dense_shape": v.dense_shape.tolist()}
    return v.tolist()


def run(cfg, threads, capacity):
    feat, dt = cfg["feat"], cfg["dtypes"]
    sparse = cfg.get("sparse", {})
    exs = []
    for e in cfg["examples"]:
        n = e["steps"]
        d = {
            "input_key": e["key"],
            "input_sequences": {
                "a": np.array(e["a"], dtype=np_dtype(dt["a"])).reshape(n, feat),
                "b": np.array(e["b"], dtype=np_dtype(dt["b"])).reshape(n),
            },
            "input_context": {"c": np.array(e["c"], dtype=np_dtype(dt["c"])).reshape(2)},
        }
        if sparse.get("sp"):
            d["input_sequences"]["sp"] = sparse_in(e["sp"], sparse["sp"])
        if sparse.get("sc"):
            d["input_context"]["sc"] = sparse_in(e["sc"], sparse["sc"])
        if e["length"] is not None:
            d["input_length"] = e["length"]
        exs.append(d)
    s_dtype = np.dtype(dt["s"])
    batches = tfrec.batch_sequences_with_states(
        None, exs, None, None,
        {"s": np.zeros(2, s_dtype), "t": np.zeros((), np.int64)},
        num_unroll=cfg["num_unroll"], batch_size=cfg["batch_size"], num_threads=threads, capacity=capacity,
        allow_small_batch=cfg["allow_small_batch"], pad=cfg["pad"],
    )
    out, end = [], "done"
    try:
        for b in batches:
            s, t = b.state("s"), b.state("t")
            r = {
                "key": b.key, "next_key": b.next_key, "sequence": b.sequence, "sequence_count": b.sequence_count,
                "length": b.length, "total_length": b.total_length, "insertion_index": b.insertion_index,
                "a": b.sequences["a"], "b": b.sequences["b"], "c": b.context["c"], "s": s, "t": t,
            }
            for k in ("sp", "sc"):
                if sparse.get(k):
                    r[k] = b.sequences[k] if k == "sp" else b.context[k]
            out.append({k: plain(v) for k, v in r.items()})
            b.save_state("s", s + (b.length + 1).astype(s_dtype)[:, None])
            b.save_state("t", (t * 7 + b.sequence.astype(np.int64) + 1) % 1000003)
    except tfrec.OutOfRangeError:
        end = "out_of_range"
    except tfrec.StateSaverError as e:
        end = "error: %s: %s" % (e.kind, e)
    return out, end


def same(x, y):
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    return x == y and type(x) is type(y) if not isinstance(x, list) else (
        isinstance(y, list) and len(x) == len(y) and all(same(a, b) for a, b in zip(x, y)))


def main():
    path = sys.argv[1]
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        tf_results = pickle.load(f)
    stats = {"configs": 0, "batches": 0, "tf_hung": 0, "tf_killed": 0, "tf_error": 0, "mismatch": 0, "variants": 0,
             "tf_run_error": 0, "sparse": 0, "raw_keys": 0, "tf_ended_early": 0}
    kinds = {"capacity_none": 0, "pad": 0, "no_pad": 0, "small": 0, "no_small": 0}
    dtypes = set()
    for res in tf_results:
        cfg = config_v2(res["seed"]) if res.get("version") == 2 else config(res["seed"])
        stats["configs"] += 1
        if res["end"].startswith("error"):
            stats["tf_error"] += 1
            print("seed %d: TF error %s" % (res["seed"], res["end"]))
            continue
        kinds["capacity_none" if cfg["capacity"] is None else "_"] = kinds.get(
            "capacity_none" if cfg["capacity"] is None else "_", 0) + 1
        kinds["pad" if cfg["pad"] else "no_pad"] += 1
        kinds["small" if cfg["allow_small_batch"] else "no_small"] += 1
        dtypes.update(cfg["dtypes"].values())
        dtypes.update("sparse " + d for d in cfg.get("sparse", {}).values() if d)
        stats["sparse"] += any(cfg.get("sparse", {}).values())
        stats["raw_keys"] += bool(cfg.get("raw_keys"))
        hung = res["end"].startswith("timeout")
        # TF rejected an example at run time (a zero-length sequence): its input thread died,
        # the coordinator cancelled the barrier. tfrec must stop with a StateSaverError too;
        # the batches both handed out before must agree (how many depends on TF's prefetch).
        run_error = res["end"].startswith("run error") or res["end"] == "cancelled"
        stats["tf_run_error"] += run_error
        if res["end"] == "timeout (killed)":
            stats["tf_killed"] += 1
        stats["tf_hung"] += hung
        variants = [(0, cfg["capacity"]), (2, cfg["capacity"]), (1, None)]
        for threads, capacity in variants:
            stats["variants"] += 1
            got, end = run(cfg, threads, capacity)
            want = res["batches"]
            if run_error:
                n = min(len(got), len(want))
                ok = end.startswith("error") and same(got[:n], want[:n])
                if not end.startswith("error"):
                    print("seed %d: TF %s, tfrec ended %s" % (res["seed"], res["end"], end))
            else:
                # TF's barrier can also end early with OutOfRangeError while later segments are
                # still to come (with allow_small_batch, when its ready queue is empty at that
                # moment); those runs are compared as a prefix and counted.
                early = res["end"] == "out_of_range" and len(got) > len(want)
                ok = got[:len(want)] == want if hung or early else got == want
                # Compare types too (bytes vs str, bool vs int, float vs int).
                ok = ok and same(got[:len(want)], want)
                if ok and early:
                    stats["tf_ended_early"] += 1
            if not ok:
                stats["mismatch"] += 1
                bad = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
                fields = [f for f in FIELDS if bad < len(got) and bad < len(want) and got[bad][f] != want[bad][f]]
                print("seed %d threads %d capacity %s: MISMATCH at batch %d of %d/%d, fields %s" % (
                    res["seed"], threads, capacity, bad, len(got), len(want), fields))
        stats["batches"] += len(res["batches"])
    print("configurations:", stats["configs"], "| TF batches compared:", stats["batches"],
          "| tfrec runs (threads 0/2, and capacity=None):", stats["variants"])
    print("TF blocked (prefix compared):", stats["tf_hung"], "of which killed without output:", stats["tf_killed"],
          "| TF errors:", stats["tf_error"], "| TF run-time errors (tfrec must raise too):", stats["tf_run_error"])
    print("with sparse inputs:", stats["sparse"], "| with non-UTF-8 keys:", stats["raw_keys"],
          "| tfrec runs where TF's OutOfRangeError came before its last segments (prefix compared):",
          stats["tf_ended_early"])
    print("kinds:", {k: v for k, v in kinds.items() if k != "_"}, "| dtypes:", sorted(dtypes))
    print("MISMATCHES:", stats["mismatch"])
    return 1 if stats["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())

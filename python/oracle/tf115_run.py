"""The TF 1.15 side of the differential test: runs ``batch_sequences_with_states`` on every
configuration of ``configs.py`` and pickles every field of every batch (plain Python values;
a sparse tensor as a dict of its indices, values and dense shape).

    /work/tf115/bin/python python/oracle/tf115_run.py FIRST_SEED COUNT OUT.pickle [--v2]

(Python 3.7, ``pip install tensorflow-cpu==1.15.0 protobuf==3.20.3 'numpy<1.19'``; ``--v2``:
the configurations of ``configs.config_v2``.) One prefetch thread, so that TensorFlow inserts
examples in input order; every batch reads its states and saves the updated ones in the same
``session.run``, the usual training-loop pattern. A run that blocks for 4 s is recorded as
``end: timeout``: at the end of the input, TF's closed barrier (``barrier_ops.cc``,
``TryTakeMany``) without ``allow_small_batch`` counts the incomplete segments (later segments
waiting for their states) as available and waits for them, but they only complete when a batch
that needs them is taken: a deadlock whenever fewer than ``batch_size`` segments are ready. An
example TF rejects at run time (a zero-length sequence) kills its input thread; the run ends
``run error: ...`` with the batches handed out before."""

import os
import pickle
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.contrib.training import batch_sequences_with_states  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from configs import config, config_v2  # noqa: E402

tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)


def np_dtype(d):
    return object if d == "string" else np.dtype(d)


def tf_dtype(d):
    return tf.string if d == "string" else tf.as_dtype(np.dtype(d))


def run(cfg):
    tf.reset_default_graph()
    feat, dt, exs = cfg["feat"], cfg["dtypes"], cfg["examples"]

    sp_names = [k for k in ("sp", "sc") if cfg.get("sparse", {}).get(k)]

    def sparse_parts(e, k):
        sp, d = e[k], cfg["sparse"][k]
        rank = len(sp["dense_shape"])
        return (np.array(sp["indices"], dtype=np.int64).reshape(len(sp["values"]), rank),
                np.array(sp["values"], dtype=np_dtype(d)).reshape(len(sp["values"])),
                np.array(sp["dense_shape"], dtype=np.int64))

    def gen():
        for e in exs:
            n = e["steps"]
            out = (
                e["key"] if isinstance(e["key"], bytes) else e["key"].encode(),
                np.array(e["a"], dtype=np_dtype(dt["a"])).reshape(n, feat),
                np.array(e["b"], dtype=np_dtype(dt["b"])).reshape(n),
                np.array(e["c"], dtype=np_dtype(dt["c"])).reshape(2),
                np.int32(-1 if e["length"] is None else e["length"]),
            )
            for k in sp_names:
                out += sparse_parts(e, k)
            yield out

    types = (tf.string, tf_dtype(dt["a"]), tf_dtype(dt["b"]), tf_dtype(dt["c"]), tf.int32)
    shapes = ([], [None, feat], [None], [2], [])
    for k in sp_names:
        rank = 2 if k == "sp" else len(exs[0][k]["dense_shape"])
        types += (tf.int64, tf_dtype(cfg["sparse"][k]), tf.int64)
        shapes += ([None, rank], [None], [rank])
    ds = tf.data.Dataset.from_generator(gen, output_types=types, output_shapes=shapes)
    got = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
    key, a, b, c, ln = got[:5]
    sparse_in = {k: tf.SparseTensor(*got[5 + 3 * i:8 + 3 * i]) for i, k in enumerate(sp_names)}
    # None (the sequences' own length) travels as -1.
    length = tf.where(ln < 0, tf.shape(a, out_type=tf.int32)[0], ln)
    sequences = {"a": a, "b": b}
    context = {"c": c}
    if "sp" in sparse_in:
        sequences["sp"] = sparse_in["sp"]
    if "sc" in sparse_in:
        context["sc"] = sparse_in["sc"]
    s_dtype = tf_dtype(dt["s"])
    batch = batch_sequences_with_states(
        input_key=key,
        input_sequences=sequences,
        input_context=context,
        input_length=length,
        initial_states={"s": tf.zeros([2], s_dtype), "t": tf.constant(0, tf.int64)},
        num_unroll=cfg["num_unroll"],
        batch_size=cfg["batch_size"],
        num_threads=1,
        capacity=cfg["capacity"],
        allow_small_batch=cfg["allow_small_batch"],
        pad=cfg["pad"],
    )
    s = batch.state("s")
    t = batch.state("t")
    new_s = s + tf.cast(batch.length + 1, s_dtype)[:, None]
    new_t = tf.math.floormod(t * 7 + tf.cast(batch.sequence, tf.int64) + 1, 1000003)
    save = tf.group(batch.save_state("s", new_s), batch.save_state("t", new_t))
    fetch = {
        "key": batch.key,
        "next_key": batch.next_key,
        "sequence": batch.sequence,
        "sequence_count": batch.sequence_count,
        "length": batch.length,
        "total_length": batch.total_length,
        "insertion_index": batch.insertion_index,
        "a": batch.sequences["a"],
        "b": batch.sequences["b"],
        "c": batch.context["c"],
        "s": s,
        "t": t,
    }
    for k in sp_names:
        fetch[k] = batch.sequences[k] if k == "sp" else batch.context[k]
    out, end = [], None
    timeout_ms = int(os.environ.get("TF115_TIMEOUT_MS", "4000"))
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=timeout_ms)) as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        while True:
            try:
                r, _ = sess.run([fetch, save])
            except tf.errors.OutOfRangeError:
                end = "out_of_range"
                break
            except tf.errors.DeadlineExceededError:
                end = "timeout"
                break
            except tf.errors.CancelledError:
                # The input thread failed (its error comes out of ``join`` below) and the
                # coordinator cancelled the barrier.
                end = "cancelled"
                break
            out.append({k: plain(v) for k, v in r.items()})
        coord.request_stop()
        try:
            coord.join(threads, stop_grace_period_secs=2, ignore_live_threads=True)
        except Exception as e:  # an example TF rejected at run time, after ``out``
            end = "run error: %s: %s" % (type(e).__name__, str(e).splitlines()[0])
    return {"seed": cfg["seed"], "end": end, "batches": out}


def plain(v):
    if isinstance(v, tf.compat.v1.SparseTensorValue):
        return {"indices": v.indices.tolist(), "values": v.values.tolist(), "dense_shape": v.dense_shape.tolist()}
    return v.tolist()


def worker(first, last, path, version):
    """Runs seeds [first, last), appending one pickled record per configuration."""
    with open(path, "ab") as f:
        for seed in range(first, last):
            cfg = config_v2(seed) if version == 2 else config(seed)
            try:
                res = run(cfg)
            except Exception as e:  # recorded, compared as a failure of the configuration
                res = {"seed": seed, "end": "error: %s: %s" % (type(e).__name__, e), "batches": []}
            res["version"] = version
            pickle.dump(res, f, protocol=2)
            f.flush()


def records(path):
    out = []
    if os.path.exists(path):
        with open(path, "rb") as f:
            while True:
                try:
                    out.append(pickle.load(f))
                except EOFError:
                    return out
    return out


def main():
    """Runs the worker in a child process and restarts it past a configuration that blocks
    TensorFlow for longer than the session's operation timeout (recorded as a timeout)."""
    import subprocess

    if sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
        return
    first, count, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    version = 2 if "--v2" in sys.argv[4:] else 1
    part = path + ".part"
    last = first + count
    t0 = time.time()
    while True:
        done = records(part)
        nxt = done[-1]["seed"] + 1 if done else first
        if nxt >= last:
            break
        child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(nxt), str(last), part,
                                  str(version)])
        seen, since = len(done), time.time()
        while child.poll() is None:
            time.sleep(1)
            n = len(records(part))
            if n != seen:
                seen, since = n, time.time()
                print("%d configurations (%.0fs)" % (n, time.time() - t0), flush=True)
            elif time.time() - since > 120:  # TF's import alone can take a minute on a loaded machine
                child.kill()
                child.wait()
                with open(part, "ab") as f:
                    pickle.dump({"seed": first + n, "end": "timeout (killed)", "batches": [], "version": version}, f,
                                protocol=2)
                break
    with open(path, "wb") as f:
        pickle.dump(records(part), f, protocol=2)
    os.remove(part)


if __name__ == "__main__":
    main()

"""Peak memory of the state saver on an endless input with unbounded capacity (issue 29,
item 1): the peak RSS after N batches should not grow with N.

    python scripts/state_saver_memory.py [CAPACITY]   # default None (unbounded)

Each example is 1,000 steps of 64 float32 (256 KB); a saver that read ahead without bound
would grow by that much per example pulled."""

import itertools
import resource
import sys
import time

import numpy as np

import tfrec


def endless(pulled):
    x = np.ones((1000, 64), np.float32)
    for i in itertools.count():
        pulled[0] += 1
        yield {"input_key": f"e{i}", "input_sequences": {"x": x}}


def main():
    capacity = None if len(sys.argv) < 2 or sys.argv[1] == "None" else int(sys.argv[1])
    pulled = [0]
    t0 = time.perf_counter()
    batches = tfrec.batch_sequences_with_states(
        None, endless(pulled), None, None, {"h": np.zeros(64, np.float32)}, num_unroll=100, batch_size=8,
        capacity=capacity, num_threads=2)
    checkpoints = {1, 100, 1000, 5000, 20000}
    for n, b in enumerate(batches, 1):
        if n == 1:
            print(f"first batch after {time.perf_counter() - t0:.3f} s")
        b.save_state("h", b.state("h") + b.sequences["x"].sum(axis=1))
        if n in checkpoints:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"batches {n:6d}: examples pulled {pulled[0]:6d}, in flight {batches.in_flight:3d}, "
                  f"max in flight {batches.max_in_flight:3d}, peak RSS {rss:.1f} MiB")
        if n == max(checkpoints):
            break
    batches.close(cancel_pending=True)


if __name__ == "__main__":
    main()

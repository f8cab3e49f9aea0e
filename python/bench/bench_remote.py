"""Reading TFRecord objects from an S3 server on the loopback address (``moto_server``) against
the server's own raw throughput, measured in the same run (issue 26).

    python python/bench/bench_remote.py --tfrec target/release/tfrec --size-mb 1024 --rounds 3

It starts ``moto_server`` (next to this Python, or on PATH), writes ``--objects`` files of
Examples totalling ``--size-mb`` from a seed into ``--dir`` and uploads them under
``s3://tfrec-bench/data/``, then, rounds alternating:

- ``raw GET``: the objects read one after another by plain ranged GETs with boto3, with the
  concurrency tfrec uses (``TFREC_REMOTE_BLOCKS`` ranges of ``TFREC_REMOTE_BLOCK_SIZE`` in
  flight, 4 × 8 MiB by default), the bytes thrown away;
- ``tfrec count`` and ``tfrec parse --format none --threads 1`` of the same objects;
- ``tfrec count`` of the local files (page cache warm), the local-disk reference.

Each is a whole process, timed from outside (the raw GET process includes importing boto3,
which the printed ``raw in-process`` figure leaves out). It prints MB/s per figure (medians) and
the median of the per-round ratios tfrec / raw GET. Target: tfrec count at 80% of raw GET or
more.
"""

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

BUCKET = "tfrec-bench"
HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = {"id": {"type": "FixedLenFeature", "dtype": "int64", "shape": []},
        "score": {"type": "FixedLenFeature", "dtype": "float32", "shape": [4]},
        "payload": {"type": "VarLenFeature", "dtype": "string"}}


def _env(endpoint):
    env = dict(os.environ)
    env.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1",
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint, AWS_ALLOW_HTTP="true")
    return env


def write_files(directory, size_mb, objects, seed):
    """``objects`` files of Examples (an id, 4 floats and a payload of 200–1,800 bytes)
    totalling about ``size_mb`` MB; a few thousand distinct records, cycled."""
    import tfrec

    rng = random.Random(seed)
    pool = []
    for i in range(4096):
        payload = rng.randbytes(rng.randint(200, 1800))
        pool.append(tfrec.train.Example(features=tfrec.train.Features(feature={
            "id": tfrec.train.Feature(int64_list=tfrec.train.Int64List(value=[i])),
            "score": tfrec.train.Feature(float_list=tfrec.train.FloatList(value=[rng.random() for _ in range(4)])),
            "payload": tfrec.train.Feature(bytes_list=tfrec.train.BytesList(value=[payload])),
        })).SerializeToString())
    per_file = size_mb * 1_000_000 // objects
    paths = []
    for k in range(objects):
        path = os.path.join(directory, f"part-{k:03d}.tfrecord")
        written = 0
        with tfrec.io.TFRecordWriter(path) as w:
            j = k
            while written < per_file:
                r = pool[j % len(pool)]
                w.write(r)
                written += len(r) + 16
                j += 7
        paths.append(path)
    return paths


def raw_get(endpoint, keys, block_size, in_flight):
    """Reads each object in turn by ranged GETs, ``in_flight`` at a time; returns the bytes
    read and the seconds it took (after the client was made)."""
    import concurrent.futures

    import boto3
    from botocore.config import Config

    client = boto3.client("s3", endpoint_url=endpoint, config=Config(max_pool_connections=max(10, in_flight)))
    start = time.perf_counter()
    total = 0
    with concurrent.futures.ThreadPoolExecutor(in_flight) as pool:
        for key in keys:
            size = client.head_object(Bucket=BUCKET, Key=key)["ContentLength"]

            def get(offset, key=key, size=size):
                end = min(offset + block_size, size) - 1
                body = client.get_object(Bucket=BUCKET, Key=key, Range=f"bytes={offset}-{end}")["Body"]
                n = 0
                while True:
                    chunk = body.read(1 << 20)
                    if not chunk:
                        return n
                    n += len(chunk)

            total += sum(pool.map(get, range(0, size, block_size)))
    return total, time.perf_counter() - start


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _moto():
    beside = os.path.join(os.path.dirname(sys.executable), "moto_server")
    exe = beside if os.path.exists(beside) else shutil.which("moto_server")
    if exe is None:
        sys.exit("moto_server not found: pip install 'moto[server]'")
    return exe


def _timed(cmd, env):
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr.decode(errors='replace')}")
    return elapsed, out.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tfrec", required=True, help="the tfrec binary (a release build)")
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--objects", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--dir", help="where the local files go (default: a temporary directory)")
    ap.add_argument("--raw-get", nargs=2, metavar=("ENDPOINT", "KEYS_JSON"), help=argparse.SUPPRESS)
    args = ap.parse_args()

    block_size = int(os.environ.get("TFREC_REMOTE_BLOCK_SIZE", 8 << 20))
    in_flight = int(os.environ.get("TFREC_REMOTE_BLOCKS", 4))
    if args.raw_get:
        total, seconds = raw_get(args.raw_get[0], json.loads(args.raw_get[1]), block_size, in_flight)
        print(json.dumps({"bytes": total, "seconds": seconds}))
        return

    directory = args.dir or tempfile.mkdtemp(prefix="tfrec-bench-remote-")
    os.makedirs(directory, exist_ok=True)
    paths = sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".tfrecord"))
    if len(paths) != args.objects:
        paths = write_files(directory, args.size_mb, args.objects, args.seed)
    total_bytes = sum(os.path.getsize(p) for p in paths)
    spec_path = os.path.join(directory, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(SPEC, f)

    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = open(os.path.join(directory, "moto.log"), "wb")
    server = subprocess.Popen([_moto(), "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(endpoint, timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        env = _env(endpoint)
        os.environ.update({k: env[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")})
        import boto3

        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket=BUCKET)
        keys = []
        for p in paths:
            key = f"data/{os.path.basename(p)}"
            client.upload_file(p, BUCKET, key)
            keys.append(key)
        prefix = f"s3://{BUCKET}/data/"
        commands = {
            "raw GET (boto3)": [sys.executable, __file__, "--tfrec", args.tfrec, "--raw-get", endpoint, json.dumps(keys)],
            "tfrec count s3": [args.tfrec, "count", prefix],
            "tfrec parse s3": [args.tfrec, "parse", "--spec", spec_path, "--format", "none", "--threads", "1",
                               "--batch", "1024", prefix],
            "tfrec count local": [args.tfrec, "count", directory],
        }
        _timed(commands["tfrec count local"], env)  # page cache warm
        times = {name: [] for name in commands}
        in_process = []
        for _ in range(args.rounds):
            for name, cmd in commands.items():
                seconds, out = _timed(cmd, env)
                times[name].append(seconds)
                if name.startswith("raw"):
                    in_process.append(json.loads(out)["seconds"])
        mb = total_bytes / 1e6
        print(f"{len(paths)} objects, {mb:.0f} MB, blocks {block_size >> 20} MiB x {in_flight} in flight, "
              f"{args.rounds} rounds (medians; whole processes)")
        print(f"{'':22} {'s':>7} {'MB/s':>8} {'/ raw GET':>10}")
        raw = times["raw GET (boto3)"]
        for name, ts in times.items():
            ratio = statistics.median(r / t for r, t in zip(raw, ts))
            print(f"{name:22} {statistics.median(ts):7.2f} {mb / statistics.median(ts):8.0f} {ratio:10.2f}")
        print(f"{'raw GET in-process':22} {statistics.median(in_process):7.2f} "
              f"{mb / statistics.median(in_process):8.0f} "
              f"{statistics.median(r / t for r, t in zip(in_process, times['tfrec count s3'])):10.2f}  (count s3 / this)")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        if not args.dir:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

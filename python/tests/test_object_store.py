"""Object store URLs and file objects in the Python package: every reader gives the records of
the local copy, byte for byte, from an S3 bucket served by a real ``moto_server`` on the
loopback address and from file objects (``BytesIO``, ``open(..., "rb")``, one-way streams);
writers to a bucket appear whole when closed and never after a failure.

Without ``moto_server`` (``pip install 'moto[server]'``, which ``scripts/test`` does) the S3
tests are skipped with the reason, except under CI, where they fail."""

import gzip
import io
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

import tfrec
from tfrec import data as tfdata
from tfrec import io as tfio
from tfrec.errors import NotFoundError

BUCKET = "tfrec-py-tests"
SPEC = {
    "id": tfio.FixedLenFeature([], tfrec.int64),
    "score": tfio.FixedLenFeature([2], tfrec.float32),
    "tags": tfio.VarLenFeature(tfrec.string),
}


def _example(i):
    return tfrec.train.Example(
        features=tfrec.train.Features(
            feature={
                "id": tfrec.train.Feature(int64_list=tfrec.train.Int64List(value=[i])),
                "score": tfrec.train.Feature(float_list=tfrec.train.FloatList(value=[i * 0.5, -i])),
                "tags": tfrec.train.Feature(bytes_list=tfrec.train.BytesList(value=[b"t%d" % j for j in range(i % 4)])),
            }
        )
    ).SerializeToString()


def _write(path, records, compression=None):
    with tfio.TFRecordWriter(str(path), compression=compression) as w:
        for r in records:
            w.write(r)


@pytest.fixture(scope="module")
def local_files(tmp_path_factory):
    """Three files (one GZIP) whose records differ, as ``{name: (path, records)}``."""
    root = tmp_path_factory.mktemp("local")
    files = {}
    for name, n, compression in [("a.tfrecord", 50, None), ("b.tfrecord", 7, None), ("c.tfrecord.gz", 30, "GZIP")]:
        records = [_example(i + len(name) * 100) for i in range(n)]
        _write(root / name, records, compression)
        files[name] = (root / name, records)
    return files


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _moto_server():
    beside = os.path.join(os.path.dirname(sys.executable), "moto_server")
    exe = beside if os.path.exists(beside) else shutil.which("moto_server")
    if exe is None:
        reason = "moto_server is not installed (pip install 'moto[server]'; scripts/test installs it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return exe


@pytest.fixture(scope="module")
def s3(local_files, tmp_path_factory):
    """A moto S3 server on loopback with the local files uploaded under ``data/``; the
    environment points tfrec (and boto3) at it."""
    boto3 = pytest.importorskip("boto3")
    exe = _moto_server()
    port = _free_port()
    log = open(tmp_path_factory.mktemp("moto") / "moto.log", "wb")
    server = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(endpoint, timeout=1).close()
            break
        except OSError:
            if server.poll() is not None:
                pytest.fail(f"moto_server exited with {server.returncode}")
            time.sleep(0.05)
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION",
                                            "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP")}
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_REGION="us-east-1",
        AWS_ENDPOINT_URL=endpoint,
        AWS_ALLOW_HTTP="true",
    )
    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket=BUCKET)
    for name, (path, _) in local_files.items():
        client.upload_file(str(path), BUCKET, f"data/{name}")
    try:
        yield client
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _url(key):
    return f"s3://{BUCKET}/{key}"


def _keys(client, prefix=""):
    listing = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for o in listing.get("Contents", []))


# -- object store URLs -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a.tfrecord", "b.tfrecord", "c.tfrecord.gz"])
def test_tfrecord_dataset_reads_an_object_as_the_local_file(s3, local_files, name):
    path, records = local_files[name]
    assert list(tfdata.TFRecordDataset(_url(f"data/{name}"))) == records
    assert list(tfdata.TFRecordDataset(str(path))) == records


def test_globs_and_prefixes_list_the_bucket_as_a_directory_is_listed(s3, local_files):
    everything = [r for name in sorted(local_files) for r in local_files[name][1]]
    assert list(tfdata.TFRecordDataset(_url("data/"))) == everything
    plain = local_files["a.tfrecord"][1] + local_files["b.tfrecord"][1]
    assert list(tfdata.TFRecordDataset(_url("data/*.tfrecord"))) == plain
    with pytest.raises(NotFoundError, match=r"s3://tfrec-py-tests/data/nothing-\*"):
        tfdata.TFRecordDataset(_url("data/nothing-*"))


def test_a_missing_object_is_not_found_naming_the_url(s3):
    with pytest.raises(NotFoundError, match="s3://tfrec-py-tests/data/missing.tfrecord"):
        list(tfdata.TFRecordDataset(_url("data/missing.tfrecord")))


def test_the_pipeline_parses_objects_as_local_files(s3, local_files):
    local_dir = os.path.dirname(local_files["a.tfrecord"][0])
    remote = tfdata.Dataset(_url("data/")).batch(16).parse(SPEC).threads(2)
    local = tfdata.Dataset(local_dir).batch(16).parse(SPEC).threads(2)
    got, want = list(remote), list(local)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g["id"], w["id"])
        np.testing.assert_array_equal(g["score"], w["score"])
        np.testing.assert_array_equal(g["tags"].values, w["tags"].values)


def test_random_access_reads_objects_by_ranges(s3, local_files):
    records = local_files["a.tfrecord"][1] + local_files["b.tfrecord"][1]
    ds = tfrec.RandomAccessDataset([_url("data/a.tfrecord"), _url("data/b.tfrecord")])
    assert len(ds) == len(records)
    assert ds[3] == records[3] and ds[-1] == records[-1]
    assert ds[[10, 0, 55]] == [records[10], records[0], records[55]]
    # No index is written into the bucket unasked.
    assert not [k for k in _keys(s3, "data/") if k.endswith(".idx")]


def test_random_access_reads_a_gzip_object_through_its_seek_index(s3, local_files):
    records = local_files["c.tfrecord.gz"][1]
    ds = tfrec.RandomAccessDataset(_url("data/c.tfrecord.gz"))
    assert len(ds) == len(records)
    order = list(range(len(records)))[::-3] + list(range(len(records)))[1::3]
    assert [ds[i] for i in order] == [records[i] for i in order]
    assert not [k for k in _keys(s3, "data/") if k.endswith(".zidx")]


def test_arrow_and_polars_read_objects(s3, local_files):
    pa = pytest.importorskip("pyarrow")
    url, path = _url("data/a.tfrecord"), str(local_files["a.tfrecord"][0])
    spec = {"id": SPEC["id"], "score": SPEC["score"]}
    remote = pa.table(tfrec.arrow.read(url, spec))
    assert remote.equals(pa.table(tfrec.arrow.read(path, spec)))
    pl = pytest.importorskip("polars")
    import tfrec.polars as tpl

    assert tpl.read(url, spec).equals(pl.DataFrame(tfrec.arrow.read(path, spec)))


def test_a_writer_to_a_bucket_uploads_the_file_it_would_write(s3, tmp_path):
    records = [_example(i) for i in range(300)]
    for compression, name in [(None, "plain.tfrecord"), ("GZIP", "zipped.tfrecord.gz")]:
        _write(tmp_path / name, records, compression)
        with tfio.TFRecordWriter(_url(f"out/{name}"), compression=compression) as w:
            for r in records:
                w.write(r)
            # Nothing is visible before the upload completes.
            assert f"out/{name}" not in _keys(s3, "out/")
        body = s3.get_object(Bucket=BUCKET, Key=f"out/{name}")["Body"].read()
        assert body == (tmp_path / name).read_bytes()
        assert list(tfdata.TFRecordDataset(_url(f"out/{name}"))) == records


def test_a_writer_that_fails_leaves_no_object(s3):
    with pytest.raises(RuntimeError, match="boom"):
        with tfio.TFRecordWriter(_url("out/failed.tfrecord")) as w:
            w.write(b"x" * 1000)
            raise RuntimeError("boom")
    assert "out/failed.tfrecord" not in _keys(s3, "out/")


def test_arrow_write_to_a_bucket(s3, tmp_path):
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    assert tfrec.arrow.write(table, _url("out/table.tfrecord")) == 3
    assert tfrec.arrow.write(table, tmp_path / "table.tfrecord") == 3
    body = s3.get_object(Bucket=BUCKET, Key="out/table.tfrecord")["Body"].read()
    assert body == (tmp_path / "table.tfrecord").read_bytes()


# -- file objects ------------------------------------------------------------------------


def test_file_objects_are_read_as_their_files(local_files):
    for name, (path, records) in local_files.items():
        raw = path.read_bytes()
        assert list(tfdata.TFRecordDataset(io.BytesIO(raw))) == records, name
        with open(path, "rb") as f:
            assert list(tfdata.TFRecordDataset(f)) == records, name
    a, b = (local_files[n] for n in ("a.tfrecord", "b.tfrecord"))
    both = [io.BytesIO(a[0].read_bytes()), io.BytesIO(b[0].read_bytes())]
    assert list(tfdata.TFRecordDataset(both)) == a[1] + b[1]


def test_a_seekable_stream_is_read_again_from_where_it_stood(local_files):
    path, records = local_files["a.tfrecord"]
    prefix = b"not records"
    stream = io.BytesIO(prefix + path.read_bytes())
    stream.seek(len(prefix))
    ds = tfdata.TFRecordDataset(stream)
    assert list(ds) == records
    assert list(ds) == records


class _OneWay(io.RawIOBase):
    """A stream that cannot seek and hands out a few bytes at a time (a socket, a pipe)."""

    def __init__(self, data):
        self._data, self._at = data, 0

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), 7, len(self._data) - self._at)
        b[:n] = self._data[self._at:self._at + n]
        self._at += n
        return n


def test_one_way_streams_and_compressed_streams(local_files):
    path, records = local_files["c.tfrecord.gz"]
    assert list(tfdata.TFRecordDataset(_OneWay(path.read_bytes()))) == records
    plain = gzip.decompress(path.read_bytes())
    assert list(tfdata.TFRecordDataset(_OneWay(plain))) == records


def test_stages_run_on_file_objects(local_files):
    path, records = local_files["a.tfrecord"]
    got = list(tfdata.TFRecordDataset(io.BytesIO(path.read_bytes())).batch(16).parse(SPEC))
    want = list(tfdata.TFRecordDataset(str(path)).batch(16).parse(SPEC))
    assert len(got) == len(want) == 4
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g["id"], w["id"])
        np.testing.assert_array_equal(g["tags"].values, w["tags"].values)


def test_damage_in_a_stream_names_the_stream_and_offset(local_files):
    path, records = local_files["a.tfrecord"]
    raw = bytearray(path.read_bytes())
    raw[len(records[0]) + 16 + 20] ^= 0xFF
    stream = io.BytesIO(bytes(raw))
    stream.name = "damaged-stream"
    with pytest.raises(tfrec.errors.DataLossError, match="damaged-stream") as e:
        list(tfdata.TFRecordDataset(stream))
    assert e.value.offset == len(records[0]) + 16
    stream.seek(0)
    assert list(tfdata.TFRecordDataset(stream, on_corruption="skip")) == records[:1] + records[2:]


def test_random_access_over_seekable_file_objects(local_files):
    path, records = local_files["a.tfrecord"]
    ds = tfrec.RandomAccessDataset(io.BytesIO(path.read_bytes()))
    assert len(ds) == len(records) and ds[7] == records[7] and ds[-1] == records[-1]
    with open(path, "rb") as f:
        assert tfrec.RandomAccessDataset(f)[[2, 1]] == [records[2], records[1]]
    with pytest.raises(TypeError, match="pickled"):
        import pickle

        pickle.dumps(ds)
    gz, gz_records = local_files["c.tfrecord.gz"]
    compressed = tfrec.RandomAccessDataset(io.BytesIO(gz.read_bytes()))
    assert len(compressed) == len(gz_records)
    assert compressed[[29, 0, 13]] == [gz_records[29], gz_records[0], gz_records[13]]


def test_writers_write_to_file_objects_what_they_write_to_files(tmp_path):
    records = [_example(i) for i in range(40)]
    for compression in (None, "GZIP", "ZLIB"):
        out = io.BytesIO()
        with tfio.TFRecordWriter(out, compression=compression) as w:
            w.write(records)
        _write(tmp_path / "f", records, compression)
        assert out.getvalue() == (tmp_path / "f").read_bytes(), compression


def test_arrow_reads_and_writes_file_objects(local_files):
    pa = pytest.importorskip("pyarrow")
    path, _ = local_files["a.tfrecord"]
    spec = {"id": SPEC["id"]}
    assert pa.table(tfrec.arrow.read(io.BytesIO(path.read_bytes()), spec)).equals(pa.table(tfrec.arrow.read(str(path), spec)))
    out = io.BytesIO()
    assert tfrec.arrow.write(pa.table({"id": [1, 2]}), out) == 2
    assert [r for r in tfdata.TFRecordDataset(io.BytesIO(out.getvalue()))] == list(
        tfdata.TFRecordDataset(io.BytesIO(out.getvalue()))
    )
    assert len(list(tfdata.TFRecordDataset(io.BytesIO(out.getvalue())))) == 2


def test_text_mode_files_and_mixed_inputs_are_refused(local_files, tmp_path):
    path, _ = local_files["a.tfrecord"]
    with open(path, encoding="latin-1") as f, pytest.raises(TypeError, match="binary mode"):
        tfdata.TFRecordDataset(f)
    with open(path, "rb") as f, pytest.raises(TypeError, match="not both"):
        tfdata.TFRecordDataset([f, str(path)])
    # A str is one path, never a list of one-letter paths.
    with pytest.raises(NotFoundError, match="abc"):
        tfdata.TFRecordDataset(str(tmp_path / "abc"))


def test_ray_reads_objects_and_writes_under_a_prefix(s3):
    ray = pytest.importorskip("ray")
    pytest.importorskip("pyarrow")
    import tfrec.ray as tray

    env = {k: os.environ[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL",
                                      "AWS_ALLOW_HTTP")}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    try:
        ds = tray.read_tfrecords(_url("data/*.tfrecord"), {"id": SPEC["id"]})
        ids = sorted(int(row["id"]) for row in ds.take_all())
        assert ids == sorted(list(range(1000, 1050)) + list(range(1000, 1007)))
        # With an index object beside it (`tfrec index URL` writes one), an object is cut into
        # byte ranges at record starts, each read by its own task with ranged GETs.
        assert tfrec._tfrec.cli_main(["tfrec", "index", _url("data/a.tfrecord")]) == 0
        split = s3.head_object(Bucket=BUCKET, Key="data/a.tfrecord")["ContentLength"] // 4
        source = tray.TFRecordDatasource([_url("data/a.tfrecord"), _url("data/b.tfrecord")], {"id": SPEC["id"]},
                                         split_bytes=split)
        tasks = source.get_read_tasks(100)
        assert len(tasks) >= 5
        assert sum(t.metadata.num_rows for t in tasks[:-1]) == 50
        split_ds = tray.read_tfrecords([_url("data/a.tfrecord"), _url("data/b.tfrecord")], {"id": SPEC["id"]},
                                       split_bytes=split, override_num_blocks=100)
        assert sorted(int(row["id"]) for row in split_ds.take_all()) == ids
        s3.delete_object(Bucket=BUCKET, Key="data/a.tfrecord.idx")
        sink = tray.write_tfrecords(ds, _url("ray-out/"))
        assert sink.records_written == 57
        assert all(f.startswith(f"s3://{BUCKET}/ray-out/part-") for f in sink.files)
        assert len(list(tfdata.TFRecordDataset(_url("ray-out/")))) == 57
    finally:
        ray.shutdown()


def test_a_writer_killed_mid_upload_leaves_no_object(s3):
    """A process killed while its upload is under way (a part sent, the rest not) leaves no
    object under the name: only a completed multipart upload makes one."""
    script = (
        "import os, sys, tfrec\n"
        "w = tfrec.io.TFRecordWriter(sys.argv[1])\n"
        "block = os.urandom(1 << 20)\n"
        "for _ in range(12):\n"
        "    w.write(block)\n"
        "print('written', flush=True)\n"
        "sys.stdin.read()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, _url("out/killed.tfrecord")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ))
    try:
        assert child.stdout.readline().strip() == b"written"
        # 12 MiB written: the first 8 MiB part is uploaded, the rest waits for close().
        assert s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads"), "no upload under way"
    finally:
        child.kill()
        child.wait()
    assert "out/killed.tfrecord" not in _keys(s3, "out/")


def test_fsspec_files_are_read_and_written_as_file_objects(local_files):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    path, records = local_files["c.tfrecord.gz"]
    with fs.open("/tfrec-test/c.tfrecord.gz", "wb") as f:
        f.write(path.read_bytes())
    with fs.open("/tfrec-test/c.tfrecord.gz", "rb") as f:
        assert list(tfdata.TFRecordDataset(f)) == records
    with fs.open("/tfrec-test/out.tfrecord", "wb") as f:
        with tfio.TFRecordWriter(f) as w:
            w.write(records)
    with fs.open("/tfrec-test/out.tfrecord", "rb") as f:
        ds = tfrec.RandomAccessDataset(f)
        assert len(ds) == len(records) and ds[3] == records[3]
    fs.rm("/tfrec-test", recursive=True)

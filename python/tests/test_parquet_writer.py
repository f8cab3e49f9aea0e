"""tfrec.arrow.write_parquet: the library's Parquet writer, the one `tfrec convert` wires. Its file
is byte for byte `convert`'s for the same records, spec and batch size, whatever the threads of
either; and Python's writers refuse an output that is one of the files they read, as the CLI
does, before anything is written."""

import json
import subprocess
import sys

import pytest

import tfrec
import tfrec.arrow

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def write_records(path, rows, columns, seed):
    """`rows` Examples of `columns` features from `seed`: int64 scalars, float pairs, strings and
    a variable-length list present in some records (so that a column has nulls)."""
    import random

    rng = random.Random(seed)
    with tfrec.TFRecordWriter(str(path)) as w:
        for i in range(rows):
            d = {}
            for c in range(columns):
                kind = c % 4
                if kind == 0:
                    d[f"c{c:03d}"] = rng.randrange(-(10**12), 10**12)
                elif kind == 1:
                    d[f"c{c:03d}"] = [rng.random(), rng.random()]
                elif kind == 2:
                    d[f"c{c:03d}"] = f"v{rng.randrange(50)}-{i % 7}"
                elif rng.random() < 0.6:
                    d[f"c{c:03d}"] = [rng.randrange(1000) for _ in range(rng.randrange(4))]
            w.write(tfrec.Example.from_dict(d).SerializeToString())


def convert(*args):
    """`tfrec convert` of this build (the command inside the extension)."""
    done = subprocess.run([sys.executable, "-m", "tfrec", "convert", *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


# A narrow table, encoded part by part as the parts are parsed, in several row groups (batches
# of more than one part, and a short last one); and a wide one, whose batches come whole.
SHAPES = [
    pytest.param(9000, 4, 5000, id="narrow-parts"),
    pytest.param(700, 40, 256, id="wide-whole"),
]


@pytest.mark.parametrize("rows, columns, batch_rows", SHAPES)
def test_write_parquet_is_byte_identical_to_convert(tmp_path, rows, columns, batch_rows):
    records = tmp_path / "data.tfrecord"
    write_records(records, rows, columns, seed=rows + columns)
    spec = tfrec.arrow.infer_spec(records)
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))

    cli = tmp_path / "cli.parquet"
    convert(records, "--spec", spec_path, "--batch-rows", batch_rows, "--threads", 3, "-o", cli)
    for threads in (1, 2):
        out = tmp_path / f"python-{threads}.parquet"
        written = tfrec.arrow.write_parquet(tfrec.arrow.read(records, spec, batch_rows=batch_rows), out,
                                            threads=threads)
        assert written == rows
        assert out.read_bytes() == cli.read_bytes(), f"{threads} threads"
    assert pq.ParquetFile(cli).metadata.num_row_groups == -(-rows // batch_rows)
    # Nothing but the outputs is left beside them.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["data.tfrecord", "spec.json", "cli.parquet", "python-1.parquet", "python-2.parquet"])


def test_write_parquet_takes_any_arrow_stream(tmp_path):
    table = pa.table({"id": list(range(1000)), "name": [f"n{i}" for i in range(1000)],
                      "xs": [[i, i + 1] if i % 3 else None for i in range(1000)]})
    out = tmp_path / "t.parquet"
    assert tfrec.arrow.write_parquet(table.to_reader(max_chunksize=300), out, threads=2) == 1000
    read = pq.read_table(out)
    assert read.equals(table)
    assert pq.ParquetFile(out).metadata.num_row_groups == 4
    with pytest.raises(TypeError):
        tfrec.arrow.write_parquet([1, 2], out)


def test_writers_refuse_to_overwrite_their_input(tmp_path):
    records = tmp_path / "data.tfrecord"
    write_records(records, 20, 3, seed=1)
    before = records.read_bytes()
    spec = tfrec.arrow.infer_spec(records)
    # The same file by another name: a hard link.
    linked = tmp_path / "linked.tfrecord"
    linked.hardlink_to(records)

    with pytest.raises(ValueError, match="refusing to overwrite an input"):
        tfrec.arrow.write_parquet(tfrec.arrow.read(records, spec), linked)
    with pytest.raises(ValueError, match="refusing to overwrite an input"):
        tfrec.arrow.write(tfrec.arrow.read(str(tmp_path / "*.tfrecord"), spec), records)
    with pytest.raises(ValueError, match="refusing to overwrite an input"):
        tfrec.data.experimental.TFRecordWriter(str(records)).write(tfrec.data.TFRecordDataset(str(linked)))
    assert records.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.tfrecord", "linked.tfrecord"]

    # Beside the input, every one of them writes.
    copy = tmp_path / "copy.tfrecord"
    tfrec.data.experimental.TFRecordWriter(str(copy)).write(tfrec.data.TFRecordDataset(str(records)))
    assert copy.read_bytes() == before
    assert tfrec.arrow.write(tfrec.arrow.read(records, spec), tmp_path / "again.tfrecord") == 20
    assert tfrec.arrow.write_parquet(tfrec.arrow.read(records, spec), tmp_path / "t.parquet") == 20

"""tfrec.ray.generate_statistics on a ``ray.data.Dataset`` of serialized records, on a real
local Ray cluster (2 CPUs): each block's partial statistics computed by a Ray task through the
library, merged by the driver in block order, give the same bytes as tfrec.stats in one process
on files that each hold one block's records (and on one file, for a Dataset of one block);
``ray.data.read_binary_files`` of files of one record each is taken as it comes; bad records
and bad columns are errors naming the block."""

import numpy as np
import pyarrow as pa
import pytest
import ray

import tfrec
import tfrec.ray
import tfrec.stats as tfstats


pytestmark = pytest.mark.usefixtures("ray_cluster")


def data_of(stats):
    return tfstats.Statistics.of(stats).SerializeToString()


def records(n, seed=3):
    """Serialized Examples: ints past the sketch's exact range, floats whose sums round by
    grouping, NaN, strings (some not UTF-8), a feature missing from some."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(-(10**6), 10**6))
        row = {"n": [k, k // 7], "x": [float(rng.normal()), float("nan")] if k % 11 == 0 else [float(rng.normal())]}
        if k % 3:
            row["s"] = [b"\xff\xfe" if k % 5 == 0 else f"w{k % 17}".encode()]
        out.append(tfrec.train.Example.from_dict(row).SerializeToString())
    return out


def write_blocks(directory, blocks):
    paths = []
    for i, block in enumerate(blocks):
        path = directory / f"block-{i}.tfrecord"
        with tfrec.TFRecordWriter(str(path)) as w:
            for record in block:
                w.write(record)
        paths.append(str(path))
    return paths


def block_records(ds, column):
    return [list(ray.get(ref).column(column).to_pylist()) for ref in ds.to_arrow_refs()]


def test_blocks_give_the_bytes_of_one_process_over_their_files(tmp_path):
    data = records(30000)
    ds = ray.data.from_arrow([pa.table({"record": pa.array(data[i:i + 7500], pa.binary())})
                              for i in range(0, len(data), 7500)])
    options = tfstats.StatsOptions(num_top_values=5)
    on_ray = data_of(tfrec.ray.generate_statistics(ds, options, output_path=tmp_path / "ray.pb"))
    blocks = block_records(ds, "record")
    assert len(blocks) == 4 and sum(blocks, []) == data
    one = data_of(tfstats.generate_statistics_from_tfrecord(write_blocks(tmp_path, blocks), options, threads=2))
    assert on_ray == one
    assert (tmp_path / "ray.pb").read_bytes() == on_ray


def test_one_block_is_one_file(tmp_path):
    data = records(500, seed=9)
    ds = ray.data.from_items([{"record": r} for r in data], override_num_blocks=1)
    on_ray = data_of(tfrec.ray.generate_statistics(ds))
    assert on_ray == data_of(tfstats.generate_statistics_from_tfrecord(write_blocks(tmp_path, [data])))


def test_read_binary_files_of_one_record_each(tmp_path):
    data = records(40, seed=11)
    for i, r in enumerate(data):
        (tmp_path / f"r{i:03d}.pb").write_bytes(r)
    ds = ray.data.read_binary_files(str(tmp_path), include_paths=True)
    on_ray = data_of(tfrec.ray.generate_statistics(ds))
    blocks = block_records(ds, "bytes")
    assert sorted(sum(blocks, [])) == sorted(data)
    assert on_ray == data_of(tfstats.generate_statistics_from_tfrecord(write_blocks(tmp_path, blocks)))


def test_sequence_examples_by_kind(tmp_path):
    data = [tfrec.train.SequenceExample.from_dict(
        {"context": {"id": i}, "feature_lists": {"clicks": [[i, i + 1], [i % 5]]} if i % 3 else {}}).SerializeToString()
        for i in range(300)]
    ds = ray.data.from_items([{"record": r} for r in data], override_num_blocks=3)
    blocks = block_records(ds, "record")
    paths = write_blocks(tmp_path, blocks)
    for kind in ["auto", "sequence", "example"]:
        on_ray = data_of(tfrec.ray.generate_statistics(ds, kind=kind))
        assert on_ray == data_of(tfstats.generate_statistics_from_tfrecord(paths, kind=kind)), kind


def test_bad_records_columns_and_options_are_errors(tmp_path):
    good = records(20)
    bad = ray.data.from_items([{"record": r} for r in good] + [{"record": b"\x0a\x05garbage"}], override_num_blocks=2)
    with pytest.raises(ValueError, match=r"block 1: record \d+: the record is not a valid Example"):
        tfrec.ray.generate_statistics(bad, kind="example")
    kinds = [tfrec.train.Example.from_dict({"k": [1]}).SerializeToString(),
             tfrec.train.Example.from_dict({"k": [1.5]}).SerializeToString()]
    with pytest.raises(ValueError, match='feature "k".*INT and FLOAT'):
        tfrec.ray.generate_statistics(ray.data.from_items([{"record": r} for r in kinds], override_num_blocks=2))
    two = ray.data.from_items([{"a": r, "b": r} for r in good])
    with pytest.raises(ValueError, match="2 binary columns.*column="):
        tfrec.ray.generate_statistics(two)
    assert data_of(tfrec.ray.generate_statistics(two, column="b")) == data_of(
        tfrec.ray.generate_statistics(two, column="a"))
    with pytest.raises(KeyError, match="no column 'c'"):
        tfrec.ray.generate_statistics(two, column="c")
    text = ray.data.from_items([{"record": "not bytes"}])
    with pytest.raises(ValueError, match="binary"):
        tfrec.ray.generate_statistics(text, column="record")
    nulls = ray.data.from_arrow(pa.table({"record": pa.array([good[0], None], pa.binary())}))
    with pytest.raises(ValueError, match="row 1 of the block is null"):
        tfrec.ray.generate_statistics(nulls)
    one = ray.data.from_items([{"record": r} for r in good])
    for kwargs in [dict(compression_type="GZIP"), dict(on_corruption="skip")]:
        with pytest.raises(ValueError, match="files"):
            tfrec.ray.generate_statistics(one, **kwargs)
    with pytest.raises(ValueError, match="random_sample"):
        tfrec.ray.generate_statistics(one, tfstats.StatsOptions(sample_rate=0.5))
    with pytest.raises(ValueError, match="column applies to a Dataset"):
        tfrec.ray.generate_statistics(str(tmp_path), column="record")

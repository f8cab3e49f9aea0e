"""tfrec.ray.generate_statistics on a real local Ray cluster (2 CPUs): each file's partial
statistics computed in a Ray task, merged by the driver in file order, give the same bytes as
tfrec.stats in one process (any thread count), for Examples past the sketches' exact range and
for SequenceExamples; damage is counted the same; bad partial bytes are an error."""

import numpy as np
import pytest
import ray

import tfrec
import tfrec.ray
import tfrec.stats as tfstats
from tfrec import _tfrec


pytestmark = pytest.mark.usefixtures("ray_cluster")


def data_of(stats):
    return tfstats.Statistics.of(stats).SerializeToString()


def write_examples(directory, sizes, seed=5):
    """Files of ``sizes`` Examples: ints past the sketch's exact range, floats whose sums
    round by grouping, NaN, strings (some not UTF-8), a feature missing from some."""
    rng = np.random.default_rng(seed)
    paths = []
    for f, size in enumerate(sizes):
        path = directory / f"part-{f}.tfrecord"
        with tfrec.TFRecordWriter(str(path)) as w:
            for _ in range(size):
                n = int(rng.integers(-(10**6), 10**6))
                row = {"n": [n, n // 7], "x": [float(rng.normal()), float("nan")] if n % 11 == 0 else [float(rng.normal())]}
                if n % 3:
                    row["s"] = [b"\xff\xfe" if n % 5 == 0 else f"w{n % 17}".encode()]
                w.write(tfrec.train.Example.from_dict(row).SerializeToString())
        paths.append(str(path))
    return paths


def write_sequences(directory, files=3, rows=200, seed=7):
    rng = np.random.default_rng(seed)
    paths = []
    for f in range(files):
        path = directory / f"seq-{f}.tfrecord"
        with tfrec.TFRecordWriter(str(path)) as w:
            for r in range(rows):
                steps = [[int(v) for v in rng.integers(0, 50, size=int(rng.integers(0, 4)))]
                         for _ in range(int(rng.integers(0, 5)))]
                row = {"context": {"id": f * rows + r}, "feature_lists": {"clicks": steps} if r % 4 else {}}
                w.write(tfrec.train.SequenceExample.from_dict(row).SerializeToString())
        paths.append(str(path))
    return paths


def test_examples_give_the_bytes_of_one_process(tmp_path):
    paths = write_examples(tmp_path, [9000, 14000, 3, 0, 12000])
    options = tfstats.StatsOptions(num_top_values=5)
    on_ray = data_of(tfrec.ray.generate_statistics(paths, options, output_path=tmp_path / "ray.pb"))
    for threads in [1, 2, 5]:
        one = data_of(tfstats.generate_statistics_from_tfrecord(paths, options, threads=threads))
        assert on_ray == one, threads
    assert (tmp_path / "ray.pb").read_bytes() == on_ray
    # A glob expands to the same files, in the same order.
    assert data_of(tfrec.ray.generate_statistics(str(tmp_path / "part-*.tfrecord"), options)) == on_ray


def test_sequence_examples_give_the_bytes_of_one_process(tmp_path):
    paths = write_sequences(tmp_path)
    for kind in ["auto", "sequence", "example"]:
        on_ray = data_of(tfrec.ray.generate_statistics(paths, kind=kind))
        assert on_ray == data_of(tfstats.generate_statistics_from_tfrecord(paths, kind=kind, threads=2)), kind
        assert ("##SEQUENCE##" in tfstats.Statistics(on_ray).to_text()) == (kind != "example"), kind


def test_damage_is_skipped_and_noted_as_in_one_process(tmp_path):
    paths = write_examples(tmp_path, [500, 400])
    damaged = bytearray(open(paths[1], "rb").read())
    damaged[len(damaged) // 2] ^= 0xFF
    open(paths[1], "wb").write(bytes(damaged))
    with pytest.raises(Exception, match="part-1"):
        tfrec.ray.generate_statistics(paths)
    on_ray = data_of(tfrec.ray.generate_statistics(paths, on_corruption="skip"))
    assert on_ray == data_of(tfstats.generate_statistics_from_tfrecord(paths, on_corruption="skip"))
    assert "tfrec_damaged_regions_skipped" in tfstats.Statistics(on_ray).to_text()


def test_bad_partial_bytes_are_an_error(tmp_path):
    paths = write_examples(tmp_path, [50])
    options = dict(num_top_values=20, num_rank_histogram_buckets=1000, num_values_histogram_buckets=10,
                   num_histogram_buckets=10, num_quantiles_histogram_buckets=10, epsilon=0.01)
    partial, read = _tfrec.stats_partial_of_file(paths[0], **options)
    assert _tfrec.stats_merge_partials([(partial, read)], **options) == data_of(
        tfstats.generate_statistics_from_tfrecord(paths))
    for bad in [partial[:-1], partial[:20], b"", b"not partial statistics", partial + b"\0"]:
        with pytest.raises(ValueError, match="partial statistics"):
            _tfrec.stats_merge_partials([(bad, read)], **options)
    other = dict(options, num_top_values=3)
    with pytest.raises(ValueError, match="different options"):
        _tfrec.stats_merge_partials([(partial, read)], **other)

"""``tfrec.stats``: TFDV's statistics API (issue 55). The figures are checked against TFDV
itself by ``python/tfdv_oracle/differential.py`` (run here on a few seeds when TFDV's
environment is there: ``scripts/tfdv-venv`` makes it); the other tests need no TFDV."""

import pytest

import tfrec
from tfrec import stats as tfstats

from tfdv_oracle_run import assert_same_as_tfdv, needs_tfdv


def write(path, rows):
    with tfrec.TFRecordWriter(str(path)) as w:
        for row in rows:
            w.write(tfrec.train.Example.from_dict(row).SerializeToString())


def text_of(stats):
    return tfstats.Statistics.of(stats).to_text()


def test_counts_and_top_values(tmp_path):
    path = tmp_path / "a.tfrecord"
    write(path, [{"animal": "cat", "n": [1, 2]}, {"animal": "dog"}, {"animal": ["cat", "cat"], "n": 3}])
    text = text_of(tfstats.generate_statistics_from_tfrecord(str(path)))
    assert "num_examples: 3\n" in text
    assert 'top_values {\n        value: "cat"\n        frequency: 3.0\n' in text
    assert "unique: 2\n" in text
    # n: present in 2 of 3 examples, 3 values, mean 2.
    assert "num_non_missing: 2\n        num_missing: 1\n" in text
    assert "mean: 2.0\n" in text


def test_text_and_binary_round_trip(tmp_path):
    path = tmp_path / "a.tfrecord"
    write(path, [{"x": [0.5, float("nan")], "s": b"\xff"}, {"x": 2.5}])
    out = tmp_path / "stats.pb"
    stats = tfstats.generate_statistics_from_tfrecord(str(path), output_path=str(out))
    binary = tfstats.Statistics.of(tfstats.load_stats_binary(out))
    assert binary == tfstats.Statistics.of(stats)
    tfstats.write_stats_text(stats, tmp_path / "stats.txt")
    again = tfstats.load_stats_text(tmp_path / "stats.txt")
    assert tfstats.Statistics.of(again) == binary
    assert tfstats.Statistics.of(tfstats.load_statistics(tmp_path / "stats.txt")) == binary
    assert tfstats.Statistics.of(tfstats.load_statistics(out)) == binary


def test_options_reach_the_library(tmp_path):
    path = tmp_path / "a.tfrecord"
    write(path, [{"w": [str(i) for i in range(30)]}])
    stats = tfstats.generate_statistics_from_tfrecord(str(path), tfstats.StatsOptions(num_top_values=3))
    assert text_of(stats).count("top_values {") == 3


def test_kind_change_is_an_error_naming_the_feature(tmp_path):
    path = tmp_path / "a.tfrecord"
    write(path, [{"k": 1}, {"k": 1.5}])
    with pytest.raises(tfrec.errors.InvalidArgumentError, match="feature \"k\".*INT and FLOAT"):
        tfstats.generate_statistics_from_tfrecord(str(path))


def test_not_statistics_is_refused(tmp_path):
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\xff\xff\xff")
    with pytest.raises(Exception):
        tfstats.load_statistics(bad)


@needs_tfdv
def test_same_statistics_as_tfdv(tmp_path):
    assert_same_as_tfdv("differential.py", 6, tmp_path)


def write_sequences(path, rows):
    with tfrec.TFRecordWriter(str(path)) as w:
        for row in rows:
            w.write(tfrec.train.SequenceExample.from_dict(row).SerializeToString())


SEQUENCES = [
    {"context": {"id": 1}, "feature_lists": {"clicks": [[1, 2], [3]]}},
    {"context": {"id": 2}, "feature_lists": {"clicks": [[4]]}},
    {"context": {"id": 3}},
]


def test_sequence_examples_give_their_feature_lists_unless_read_as_examples(tmp_path):
    path = tmp_path / "s.tfrecord"
    write_sequences(path, SEQUENCES)
    for kind in ["auto", "sequence"]:
        text = text_of(tfstats.generate_statistics_from_tfrecord(str(path), kind=kind))
        assert 'step: "##SEQUENCE##"\n      step: "clicks"\n' in text, kind
        # Steps per example (2 examples of 3 have the list), then values per step.
        assert "presence_and_valency_stats {\n          num_non_missing: 2\n          num_missing: 1\n" in text
        assert 'name: "level_2_value_list_length_quantiles"' in text
    context_only = text_of(tfstats.generate_statistics_from_tfrecord(str(path), kind="example"))
    assert "##SEQUENCE##" not in context_only and 'step: "id"' in context_only
    with pytest.raises(ValueError, match="kind must be"):
        tfstats.generate_statistics_from_tfrecord(str(path), kind="sequences")


def test_allowlist_keeps_the_named_features_and_sample_rate_counts_about_the_share(tmp_path):
    path = tmp_path / "s.tfrecord"
    write_sequences(path, SEQUENCES)
    only_id = text_of(tfstats.generate_statistics_from_tfrecord(
        str(path), tfstats.StatsOptions(feature_allowlist=["id"])))
    assert 'step: "id"' in only_id and "##SEQUENCE##" not in only_id and "num_examples: 3\n" in only_id
    only_lists = text_of(tfstats.generate_statistics_from_tfrecord(
        str(path), tfstats.StatsOptions(feature_allowlist=["##SEQUENCE##"])))
    assert 'step: "id"' not in only_lists and 'step: "clicks"' in only_lists

    many = tmp_path / "many.tfrecord"
    write(many, [{"x": i} for i in range(4000)])
    half = tfstats.Statistics.of(tfstats.generate_statistics_from_tfrecord(
        str(many), tfstats.StatsOptions(sample_rate=0.5))).to_text()
    num_examples = int(half.split("num_examples: ")[1].split("\n")[0])
    assert 1800 < num_examples < 2200
    again = tfstats.Statistics.of(tfstats.generate_statistics_from_tfrecord(
        str(many), tfstats.StatsOptions(sample_rate=0.5))).to_text()
    assert again == half

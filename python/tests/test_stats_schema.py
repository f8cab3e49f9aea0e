"""``tfrec.stats``' schema half (issue 55): ``infer_schema``, ``validate_statistics``,
``load_schema_text``, ``write_schema_text``. The rules are checked against TFDV itself by
``python/tfdv_oracle/schema_differential.py`` (run here on a few seeds when TFDV's environment
is there); the other tests need no TFDV."""

import pytest

import tfrec
from tfrec import stats as tfstats

from tfdv_oracle_run import assert_same_as_tfdv, needs_tfdv


def stats_of(path, rows):
    with tfrec.TFRecordWriter(str(path)) as w:
        for row in rows:
            w.write(tfrec.train.Example.from_dict(row).SerializeToString())
    return tfstats.generate_statistics_from_tfrecord(str(path))


def text(message):
    if hasattr(message, "to_text"):
        return message.to_text()
    from google.protobuf import text_format

    return text_format.MessageToString(message)


def test_infer_schema_gives_presence_shape_and_domain(tmp_path):
    stats = stats_of(tmp_path / "a.tfrecord", [{"animal": "cat", "n": [1, 2]}, {"animal": "dog", "n": [3, 4]}])
    schema = text(tfstats.infer_schema(stats))
    assert 'name: "animal"\n  type: BYTES\n  domain: "animal"\n' in schema
    assert 'string_domain {\n  name: "animal"\n  value: "cat"\n  value: "dog"\n}' in schema
    assert "shape {\n    dim {\n      size: 2\n" in schema
    flat = text(tfstats.infer_schema(stats, infer_feature_shape=False, max_string_domain_size=1))
    assert "value_count {\n    min: 2\n    max: 2\n  }" in flat
    assert "string_domain" not in flat


def test_validate_statistics_finds_tfdv_anomalies(tmp_path):
    train = stats_of(tmp_path / "train.tfrecord", [{"animal": "cat", "n": 1}, {"animal": "dog", "n": 2}])
    schema = tfstats.infer_schema(train)
    assert "anomaly_info" not in text(tfstats.validate_statistics(train, schema))
    evaluated = stats_of(tmp_path / "eval.tfrecord", [{"animal": "emu", "extra": 1.5}, {"animal": "cat"}])
    anomalies = text(tfstats.validate_statistics(evaluated, schema, previous_statistics=train))
    for kind in ("ENUM_TYPE_UNEXPECTED_STRING_VALUES", "SCHEMA_NEW_COLUMN", "SCHEMA_MISSING_COLUMN"):
        assert f"type: {kind}" in anomalies, anomalies
    assert "Examples contain values missing from the schema: emu (~50%). " in anomalies
    with pytest.raises(ValueError, match="environments"):
        tfstats.validate_statistics(evaluated, schema, environment="SERVING")


def test_schema_text_round_trip_and_bad_text(tmp_path):
    stats = stats_of(tmp_path / "a.tfrecord", [{"x": 1.5}])
    schema = tfstats.infer_schema(stats)
    tfstats.write_schema_text(schema, tmp_path / "schema.pbtxt")
    again = tfstats.load_schema_text(tmp_path / "schema.pbtxt")
    assert again.SerializeToString() == schema.SerializeToString()
    (tmp_path / "bad.pbtxt").write_text('feature {\n  name: "x"\n  kind: FLOAT\n}\n')
    with pytest.raises(ValueError, match=r"bad\.pbtxt.*line 3"):
        tfstats.load_schema_text(tmp_path / "bad.pbtxt")


@needs_tfdv
def test_same_schema_and_anomalies_as_tfdv(tmp_path):
    assert_same_as_tfdv("schema_differential.py", 4, tmp_path)

"""The golden text-format cases through ``str(Example)`` / ``to_json()``, and the golden
TFRecord files through ``TFRecordDataset``: TF's records where TF read them, a
``DataLossError`` naming file, offset and record index where TF failed, torn tails reported
by default and skipped when asked."""

import base64
import hashlib
import json

import pytest

import tfrec

from conftest import golden_dir, golden_lines, summary

TEXT_CASES = golden_lines("text_format.jsonl")
MESSAGES = {"Example": tfrec.Example, "SequenceExample": tfrec.SequenceExample}


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c["id"] for c in TEXT_CASES])
def test_text_format_case(case):
    cls = MESSAGES[case["message"]]
    serialized = base64.b64decode(case["serialized"])
    msg = cls.FromString(serialized)
    assert str(msg) == case["text_format"]
    assert json.loads(msg.to_json()) == case["json_format"]
    assert cls.from_text(case["text_format"]) == msg
    if case["message"] == "Example":
        assert tfrec.Example.from_json(msg.to_json()) == msg


def test_text_format_summary():
    passed = 0
    for case in TEXT_CASES:
        msg = MESSAGES[case["message"]].FromString(base64.b64decode(case["serialized"]))
        passed += str(msg) == case["text_format"]
    summary(f"python text format cases: {len(TEXT_CASES)} run, {passed} passed")
    assert passed == len(TEXT_CASES)


RECORD_ENTRIES = json.loads((golden_dir() / "records" / "records.json").read_text())


def read(path, **kwargs):
    """(digests of the records read, the exception that ended the reading or None)."""
    digests = []
    try:
        for record in tfrec.TFRecordDataset(str(path), **kwargs):
            digests.append(hashlib.sha256(record).hexdigest())
    except tfrec.TfrecError as e:
        return digests, e
    return digests, None


def tf_offset(message):
    rest = message.split(" at ", 1)[1]
    return int("".join(c for c in rest[: len(rest) - len(rest.lstrip("0123456789"))]))


@pytest.mark.parametrize("entry", RECORD_ENTRIES, ids=[e["file"] for e in RECORD_ENTRIES])
def test_record_file(entry):
    path = golden_dir() / "records" / entry["file"]
    digests, error = read(path)
    tf_error = entry["error"]
    if tf_error is None:
        expected = entry["records_sha256"]
        framed = sum(n + 16 for n in entry["record_lengths"])
        if entry["compression"] == "NONE" and framed != path.stat().st_size:
            # TF silently dropped a torn tail: we report it, with its offset...
            assert digests == expected
            assert isinstance(error, tfrec.DataLossError), error
            assert error.kind == "partial_header" and error.offset == framed and error.path == str(path)
            # ...and read like TF when told to tolerate it.
            digests, error = read(path, torn_tail="skip")
            assert error is None and digests == expected
        else:
            assert error is None, error
            assert digests == expected
    elif tf_error["class"] == "DataLossError":
        assert digests == entry["records_sha256"]
        assert isinstance(error, tfrec.DataLossError), error
        assert error.tf_offset == tf_offset(tf_error["message"])
        assert error.path == str(path) and error.record_index == len(digests)
        assert str(path) in str(error) and f"record {error.record_index}" in str(error)
    else:  # TF crashed: we give what precedes the damage, then a clear error.
        assert tf_error["class"] == "crash"
        assert isinstance(error, tfrec.DataLossError), error
        assert len(digests) >= 1


def test_compression_types_are_tfs_names():
    gz = next(e for e in RECORD_ENTRIES if e["compression"] == "GZIP" and e["error"] is None)
    path = golden_dir() / "records" / gz["file"]
    digests, error = read(path, compression_type="GZIP")
    assert error is None and digests == gz["records_sha256"]
    _, error = read(path, compression_type="")
    assert isinstance(error, tfrec.DataLossError)
    with pytest.raises(ValueError):
        tfrec.TFRecordDataset(str(path), compression_type="BZIP2")


def test_skipping_corrupt_records_goes_on_past_the_damage():
    entry = next(e for e in RECORD_ENTRIES if e["file"] == "corrupt_data_crc.tfrecord")
    plain = next(e for e in RECORD_ENTRIES if e["file"] == "plain.tfrecord")
    path = golden_dir() / "records" / entry["file"]
    ds = tfrec.TFRecordDataset(str(path), on_corruption="skip")
    it = ds.records()
    records = list(it)
    assert len(records) == plain["num_records"] - 1
    assert it.stats()["skipped_regions"] == 1
    assert str(path) in it.problems()[0]


def test_records_summary():
    passed = 0
    for entry in RECORD_ENTRIES:
        try:
            test_record_file(entry)
            passed += 1
        except AssertionError:
            pass
    summary(f"python record files: {len(RECORD_ENTRIES)} run, {passed} passed")
    assert passed == len(RECORD_ENTRIES)

"""tfrec against TensorFlow on one case, through the Python ``parse_*`` functions (the
library's own outputs: the binding is a thin layer over it) and, for the batch ops, the
``tfrec parse`` CLI. The golden README's matching rules decide; a disagreement is put in a
category, and the known, deliberate ones (README "Deliberate deviations") are told apart."""

import base64
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import tfrec

REPO = pathlib.Path(__file__).resolve().parents[2]
# The golden matching rules are the conformance test's own, written once there.
sys.path.insert(0, str(REPO / "python" / "tests"))

from test_golden_parse import category, named_things, run as run_python, same  # noqa: E402


def cli_path():
    """The ``tfrec`` binary: ``$TFREC_CLI``, else the cargo target dir's debug build."""
    if os.environ.get("TFREC_CLI"):
        return os.environ["TFREC_CLI"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    for profile in ("debug", "release"):
        p = target / profile / "tfrec"
        if p.is_file():
            return str(p)
    return None


def _tfrecord(records):
    """TFRecord framing (CRC-32C as tf.io's writer computes it)."""
    import tensorflow as tf

    fd, path = tempfile.mkstemp(suffix=".tfrecord")
    os.close(fd)
    with tf.io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return path


def run_cli(case, cli):
    """``tfrec parse`` on the case's records as one batch: the JSON line, or an error
    (``RuntimeError`` with the CLI's stderr)."""
    records = [base64.b64decode(s) for s in case["serialized"]]
    if "sequence" in case["op"]:
        spec = {"context_features": case.get("context_features") or {}, "sequence_features": case.get("sequence_features") or {}}
    else:
        spec = case["features"]
    path = _tfrecord(records)
    fd, spec_path = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(spec, f)
        p = subprocess.run(
            [cli, "parse", path, "--spec", spec_path, "--batch", str(max(len(records), 1)), "--threads", "1"],
            capture_output=True,
            timeout=60,
        )
    finally:
        os.unlink(path)
        os.unlink(spec_path)
    if p.returncode != 0:
        if b"panicked" in p.stderr:
            raise AssertionError(f"tfrec parse panicked: {p.stderr.decode(errors='replace')}")
        raise RuntimeError(p.stderr.decode(errors="replace").strip())
    return json.loads(p.stdout.decode().strip())


def _has_negative_size(case):
    for group in ("features", "context_features", "sequence_features"):
        for spec in (case.get(group) or {}).values():
            if spec.get("type") == "SparseFeature":
                size = spec.get("size")
                sizes = size if isinstance(size, list) else [size]
                if any(isinstance(s, int) and s < 0 for s in sizes):
                    return True
    return False


def _class_ok(tf_class, ours):
    """Python's classes: TF's InvalidArgumentError and ValueError are ValueErrors of ours
    (tfrec's InvalidArgumentError is one), its TypeError a TypeError or ValueError; anything
    else of ours (KeyError, AttributeError, ...) is a bug. The CLI's stderr carries no class."""
    if isinstance(ours, RuntimeError):
        return True
    return isinstance(ours, (ValueError, TypeError))


def _empty_splits(tensors):
    for t in (tensors or {}).values():
        if isinstance(t, dict) and t.get("kind") == "ragged" and any(not s for s in t["nested_row_splits"]):
            return True
        if isinstance(t, dict) and "kind" not in t and _empty_splits(t):
            return True
    return False


def deviation(case, error):
    """The README's deliberate deviation that explains a disagreement, or None."""
    message = str(error) if error is not None else ""
    tf_error = case["error"] or {}
    if error is not None and _has_negative_size(case) and "SparseFeature" in message and "size:" in message:
        return "deviation: negative SparseFeature size refused"
    crashes = ("crash", "AttributeError", "KeyError", "IndexError")
    lenient_error = (case.get("lenient") or {}).get("error") or {}
    if tf_error.get("class") in crashes or lenient_error.get("class") in crashes:
        return "deviation: TensorFlow crashes, tfrec reports an error or a result"
    expected = [case["expected"], (case.get("lenient") or {}).get("expected")]
    if error is not None and "Dimension -1" in message and any(_empty_splits(x) for x in expected):
        return "deviation: TensorFlow returns a malformed RaggedTensor (empty row splits), tfrec refuses"
    if error is not None and "Dimension -1 must be >= 0: the row_splits partition" in message and tf_error:
        # TF went on with the malformed tensor and failed a step later.
        return "deviation: TensorFlow returns a malformed RaggedTensor (empty row splits), tfrec refuses"
    mismatch = "Data types don't match"
    for answer in [case] + ([case["lenient"]] if case.get("lenient") else []):
        tf_msg = (answer.get("error") or {}).get("message", "")
        for part in ("Context feature: ", "Feature list: ", "Key: "):
            if mismatch in tf_msg and mismatch in message and part in tf_msg and part in message:
                return "deviation: several features of the wrong type, TensorFlow names another (its hash-map order)"
    refused = case.get("protobuf_refuses") or []
    if error is not None and refused and "could not parse" in message.lower():
        single = "single" in case["op"]
        if single or any(f"example {i}:" in message or f"example {i})" in message for i in refused):
            return "deviation: TensorFlow reads bytes that are not a valid message, tfrec refuses them"
    return None


def judge(case, ours, error):
    """``None`` when ``ours`` (or ``error``) matches the case's answer, else (category, why)."""
    answers = [case] + ([case["lenient"]] if case.get("lenient") else [])
    why = []
    kinds = []
    for answer in answers:
        if error is None and answer["error"] is None:
            try:
                same(ours, answer["expected"])
                return None
            except AssertionError as e:
                kinds.append("values differ")
                why.append(f"tensors differ: {e}")
        elif error is not None and answer["error"] is not None:
            if answer["error"]["class"] == "UnicodeDecodeError":
                # TF failed, but its message (holding the raw record) could not be decoded.
                return None
            tf_msg = answer["error"]["message"]
            message = str(error)
            missing = [t for t in named_things(tf_msg) if t not in message]
            want, got = category(tf_msg), category(message)
            if missing:
                kinds.append("error names another thing")
                why.append(f"our error {message!r} does not name {missing} (TF: {tf_msg!r})")
            elif want != "other" and want != got:
                kinds.append("error of another kind")
                why.append(f"our error {message!r} is about {got}, TF's {tf_msg!r} about {want}")
            elif not _class_ok(answer["error"]["class"], error):
                kinds.append("error of another class")
                why.append(f"our {type(error).__name__} {message!r}, TF's {answer['error']}")
            else:
                return None
        elif error is None:
            kinds.append("tf raises, tfrec returns")
            why.append(f"TF failed with {answer['error']}, we did not")
        else:
            kinds.append("tfrec raises, tf returns")
            why.append(f"we failed: {type(error).__name__}: {error}")
    known = deviation(case, error)
    return (known or kinds[0], "; ".join(why))


def check_python(case):
    try:
        ours, error = run_python(case), None
    except (tfrec.TfrecError, ValueError, TypeError) as e:
        ours, error = None, e
    return judge(case, ours, error)


def check_cli(case, cli):
    try:
        ours, error = run_cli(case, cli), None
    except RuntimeError as e:
        ours, error = None, e
    if error is None and "lengths" not in ours and case["op"] == "parse_sequence_example":
        ours["lengths"] = {}
    return judge(case, ours, error)

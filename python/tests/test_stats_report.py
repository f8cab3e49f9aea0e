"""The statistics report from Python and the CLI (``tfrec.stats.visualize_statistics``,
``tfrec stats --html --compare``), without a browser: what the page holds and what it must
not (a URL); test_stats_report_browser.py opens it in Chromium."""

import json
import re
import subprocess
import sys

import pytest

import tfrec
from tfrec import stats as tfstats

from report_data import feature_names, rows, write


def data_block(html):
    found = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S)
    assert found
    return json.loads(found.group(1))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    train = write(root / "train.tfrecord", rows(60, 6, 4))
    eval_ = write(root / "eval.tfrecord", rows(40, 6, 4, shift=1.0))
    return root, train, eval_


def test_visualize_statistics_shows_every_feature_with_examples_and_thumbnails(files, tmp_path):
    _, train, _ = files
    stats = tfstats.generate_statistics_from_tfrecord(str(train))
    report = tfstats.visualize_statistics(stats, lhs_data_location=str(train))
    data = data_block(report.html)
    assert sorted(f["name"] for f in data["features"]) == sorted(feature_names(6, 4))
    images = next(f for f in data["features"] if f["name"] == "cat_00")["images"][0]
    assert images and all(i["uri"].startswith("data:image/png;base64,") for i in images)
    assert images[0]["width"] == 16
    assert "http://" not in report.html and "https://" not in report.html
    report.save(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == report.html
    # A notebook shows the same page in a frame of its own.
    frame = report._repr_html_()
    assert frame.startswith("<iframe") and 'srcdoc="&lt;!DOCTYPE html&gt;' in frame
    assert "<script" not in frame
    assert tfstats.Statistics.of(stats)._repr_html_().startswith("<iframe")
    assert tfstats.get_statistics_html(stats) == tfstats.visualize_statistics(stats).html


def test_two_data_sets_side_by_side_with_drift(files):
    _, train, eval_ = files
    lhs = tfstats.generate_statistics_from_tfrecord(str(train))
    rhs = tfstats.generate_statistics_from_tfrecord(str(eval_))
    data = data_block(tfstats.get_statistics_html(lhs, rhs, "train", "eval"))
    assert [d["name"] for d in data["datasets"]] == ["train", "eval"]
    drifts = {f["name"]: f.get("drift") for f in data["features"]}
    assert drifts["num_00"]["measure"] == "jensen_shannon_divergence"
    assert drifts["cat_01"]["measure"] == "infinity_norm"
    assert drifts["num_00"]["value"] > 0
    same = data_block(tfstats.get_statistics_html(lhs, lhs))
    assert all(f["drift"]["value"] == 0 for f in same["features"] if f.get("drift"))


def test_anomalies_mark_features(files, tmp_path):
    _, train, _ = files
    stats = tfstats.generate_statistics_from_tfrecord(str(train))
    text = tmp_path / "anomalies.pbtxt"
    text.write_text(
        'anomaly_info { key: "cat_01" value { severity: ERROR short_description: "Unexpected string values" '
        'description: "Examples contain values missing from the schema." } }\n'
    )
    data = data_block(tfstats.get_statistics_html(stats, anomalies=text))
    marked = {f["name"]: f["anomaly"]["short"] for f in data["features"] if "anomaly" in f}
    assert marked == {"cat_01": "Unexpected string values"}
    text.write_text("anomaly_info { key: ")
    with pytest.raises(tfrec.errors.TfrecError):
        tfstats.get_statistics_html(stats, anomalies=text)


def test_cli_html_and_compare(files, tmp_path):
    root, train, eval_ = files
    html, pb = tmp_path / "report.html", tmp_path / "stats.pb"
    cmd = [sys.executable, "-m", "tfrec", "stats", str(train), "--compare", str(eval_),
           "--html", str(html), "-o", str(pb), "--threads", "1"]
    subprocess.run(cmd, check=True)
    text = tfstats.Statistics.of(tfstats.load_stats_binary(pb)).to_text()
    # Both data sets in the list, named as tfdv.visualize_statistics names lhs and rhs.
    assert 'name: "lhs_statistics"' in text and 'name: "rhs_statistics"' in text
    assert text.count("num_examples:") == 2
    page = html.read_text(encoding="utf-8")
    data = data_block(page)
    assert [d["examples"] for d in data["datasets"]] == [60, 40]
    assert sorted(f["name"] for f in data["features"]) == sorted(feature_names(6, 4))
    assert not re.search(r"https?://", page)
    # The written list shows both sides again from Python, under their own names.
    again = data_block(tfstats.get_statistics_html(tfstats.load_statistics(pb)))
    assert [d["name"] for d in again["datasets"]] == ["lhs_statistics", "rhs_statistics"]

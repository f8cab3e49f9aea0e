"""The statistics report in a real browser (headless Chromium through Selenium): every feature
row is there, sorting and filtering work, the console shows no error and no request leaves the
page, for a 50-feature report and for a train/eval comparison.

Chromium and its driver come from Debian (``apt-get install chromium chromium-driver``). A new
user's ``scripts/test`` does not need them: without them this test skips, saying so. ``.ci/run``
runs the README's test command as a new user does, then installs them and runs this file in a
step of its own with ``TFREC_BROWSER_TEST=required``, where an absent browser is a failure.
``TFREC_REPORT_SHOTS=DIR`` saves screenshots of the pages."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import tfrec
from tfrec import stats as tfstats

from report_data import feature_names, rows, write

NUMERIC, STRINGS = 30, 20


def _binary(*names):
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def _browser_or_skip():
    chromium = os.environ.get("TFREC_CHROMIUM") or _binary("chromium", "chromium-browser", "google-chrome")
    driver = os.environ.get("TFREC_CHROMEDRIVER") or _binary("chromedriver")
    if chromium and driver:
        return chromium, driver
    reason = (
        "Chromium or chromedriver is absent: apt-get install chromium chromium-driver "
        "(.ci/run installs them and runs this test in its own step)"
    )
    if os.environ.get("TFREC_BROWSER_TEST") == "required":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    chromium, driver_path = _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="tfrec-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1500,1100",
    ]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("report-browser")
    train = write(root / "train.tfrecord", rows(120, NUMERIC, STRINGS))
    eval_ = write(root / "eval.tfrecord", rows(80, NUMERIC, STRINGS, shift=1.0))
    single = root / "features.html"
    stats = tfstats.generate_statistics_from_tfrecord(str(train))
    tfstats.visualize_statistics(stats, lhs_data_location=str(train), title="50 features").save(single)
    compared = root / "train-eval.html"
    subprocess.run(
        [sys.executable, "-m", "tfrec", "stats", str(train), "--compare", str(eval_), "--lhs-name", "train",
         "--rhs-name", "eval", "--html", str(compared), "-o", str(root / "stats.pb"), "--threads", "1"],
        check=True,
    )
    return {"single": single, "compared": compared}


def open_page(driver, path):
    driver.get_log("browser")  # drop what an earlier page logged
    driver.get_log("performance")
    driver.get(path.resolve().as_uri())
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))


def row_names(driver, kind):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#' + arguments[0] + ' tbody tr.feature'))"
        ".map(function (tr) { return tr.dataset.name; });",
        kind,
    )


def set_page_size(driver, value):
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "page-size")).select_by_value(value)


def click_header(driver, kind, key):
    driver.find_element("css selector", f"#{kind} th[data-key='{key}']").click()
    return driver.find_element("css selector", f"#{kind} th[data-key='{key}']").get_attribute("aria-sort")


def check_quiet(driver, path):
    """No console error, no request but the page itself."""
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == [], errors
    requested = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] != "Network.requestWillBeSent":
            continue
        # Chromium's own pages (the new tab page it opens at start, still loading on a busy
        # machine after the report's page has been asked for) log their requests here too;
        # they are the browser's, made by chrome:// documents. Every request of the report's
        # page, or of any frame or worker it would make, has another document.
        if message["params"].get("documentURL", "").startswith("chrome://"):
            continue
        requested.append(message["params"]["request"]["url"])
    page = path.resolve().as_uri()
    assert [u for u in requested if u != page and not u.startswith("data:")] == []
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert not re.search(r"https?://", path.read_text(encoding="utf-8"))


def shoot(driver, name):
    shots = os.environ.get("TFREC_REPORT_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1500, min(max(height + 120, 900), 6000))
        driver.save_screenshot(str(Path(shots) / name))
        driver.set_window_size(1500, 1100)


def page_data(driver):
    return driver.execute_script("return JSON.parse(document.getElementById('report-data').textContent)")


def sort_key(value):
    return float("nan") if isinstance(value, str) else value


def check_rows_and_sorting(driver):
    set_page_size(driver, "all")
    numeric, strings = row_names(driver, "numeric"), row_names(driver, "string")
    names = feature_names(NUMERIC, STRINGS)
    assert sorted(numeric + strings) == sorted(names)
    assert numeric == sorted(n for n in names if n.startswith("num_"))
    assert strings == sorted(n for n in names if n.startswith("cat_"))

    # Sorting: by mean, largest first, then smallest first; by name backwards.
    means = {f["name"]: f["stats"][0]["mean"] for f in page_data(driver)["features"] if f["kind"] == "numeric"}
    assert click_header(driver, "numeric", "mean") == "descending"
    assert row_names(driver, "numeric") == sorted(means, key=lambda n: (-means[n], n))
    assert click_header(driver, "numeric", "mean") == "ascending"
    assert row_names(driver, "numeric") == sorted(means, key=lambda n: (means[n], n))
    click_header(driver, "string", "name")
    assert row_names(driver, "string") == sorted(strings, reverse=True)
    click_header(driver, "string", "name")

    # Filtering by name, in both tables at once; nothing matching shows the empty note.
    search = driver.find_element("id", "search")
    search.send_keys("_1")
    assert row_names(driver, "numeric") == sorted([n for n in means if "_1" in n], key=lambda n: (means[n], n))
    assert row_names(driver, "string") == sorted(n for n in strings if "_1" in n)
    search.send_keys("zzz")
    assert row_names(driver, "numeric") == [] and row_names(driver, "string") == []
    assert driver.find_element("css selector", "#numeric .empty").is_displayed()
    search.clear()
    driver.execute_script("document.getElementById('search').dispatchEvent(new Event('input'))")
    assert len(row_names(driver, "numeric")) == NUMERIC

    # Paging: 25 rows a page, the rest on the next.
    set_page_size(driver, "25")
    first = row_names(driver, "numeric")
    assert len(first) == 25
    driver.find_element("css selector", "#numeric .pager .next").click()
    assert len(row_names(driver, "numeric")) == NUMERIC - 25
    set_page_size(driver, "50")


def test_a_50_feature_report(browser, pages):
    open_page(browser, pages["single"])
    assert len(browser.find_elements("css selector", "#string tr[data-name='cat_00'] img")) >= 1
    shoot(browser, "report-50-features.png")
    check_rows_and_sorting(browser)
    check_quiet(browser, pages["single"])


def test_a_train_eval_comparison(browser, pages):
    open_page(browser, pages["compared"])
    names = [d["name"] for d in page_data(browser)["datasets"]]
    assert names == ["train", "eval"]
    # A drift figure on every row, both sides in every histogram.
    set_page_size(browser, "all")
    drifts = browser.find_elements("css selector", "td.drift .drift")
    assert len(drifts) == NUMERIC + STRINGS
    assert browser.find_elements("css selector", "#numeric svg.hist rect.s1")
    set_page_size(browser, "50")
    assert click_header(browser, "numeric", "drift") == "descending"
    shoot(browser, "report-train-eval.png")
    click_header(browser, "numeric", "name")
    check_rows_and_sorting(browser)
    check_quiet(browser, pages["compared"])


def test_a_100000_feature_report_stays_usable(browser, tmp_path):
    """Issue 55's bad input: a page of 100,000 features (about 580 bytes each) opens, draws one
    page of rows, filters by name and sorts, with nothing asked of the network."""
    wide = 100_000
    path = tmp_path / "wide.tfrecord"
    with tfrec.TFRecordWriter(str(path)) as w:
        for r in range(2):
            w.write(tfrec.train.Example.from_dict(
                {f"f{i:06d}": [r + i] if i % 2 else [f"v{(r + i) % 3}".encode()] for i in range(wide)}
            ).SerializeToString())
    page = tmp_path / "wide.html"
    subprocess.run([sys.executable, "-m", "tfrec", "stats", str(path), "-o", str(tmp_path / "wide.pb"),
                    "--html", str(page), "--threads", "1"], check=True)
    assert page.stat().st_size < wide * 1024
    open_page(browser, page)
    assert len(page_data(browser)["features"]) == wide
    assert len(row_names(browser, "numeric")) == 50 and len(row_names(browser, "string")) == 50
    browser.find_element("id", "search").send_keys("f09999")
    assert row_names(browser, "numeric") == ["f099991", "f099993", "f099995", "f099997", "f099999"]
    assert row_names(browser, "string") == ["f099990", "f099992", "f099994", "f099996", "f099998"]
    assert click_header(browser, "numeric", "name") == "descending"
    assert row_names(browser, "numeric")[0] == "f099999"
    check_quiet(browser, page)

use super::*;
use crate::example::Example;
use crate::stats::proto::{AnomalyInfo, DatasetFeatureStatistics};
use crate::stats::{StatsAccumulator, StatsOptions};

/// Statistics of `rows` Examples with `numeric` float features `num_i` and `strings` string
/// features `str_i`; `shift` moves the numeric values and changes the string values' mix.
fn dataset(numeric: usize, strings: usize, rows: usize, shift: f32) -> (DatasetFeatureStatistics, ReportSamples) {
    let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
    let mut samples = ReportSamples::default();
    let limits = SampleLimits::default();
    for r in 0..rows {
        let mut b = Example::builder();
        for i in 0..numeric {
            b = b.float(&format!("num_{i:04}"), [(r % 17) as f32 * (i + 1) as f32 + shift]);
        }
        for i in 0..strings {
            let word = ["cat", "dog", "fox", "owl"][(r + i + shift as usize) % if shift > 0.0 { 2 } else { 4 }];
            b = b.bytes(&format!("str_{i:04}"), [word]);
        }
        let bytes = b.build().unwrap().encode();
        acc.add_example(&bytes, None).unwrap();
        samples.add_record(&bytes, &limits);
    }
    (acc.finish().datasets.remove(0), samples)
}

/// The JSON of the page's data block, read back.
fn data_block(html: &str) -> Value {
    let start = html
        .find(r#"<script id="report-data" type="application/json">"#)
        .unwrap();
    let body = &html[start..];
    let body = &body[body.find('>').unwrap() + 1..];
    let end = body.find("</script>").unwrap();
    serde_json::from_str(&body[..end]).unwrap()
}

/// Checks that the tags of `html` nest and close (void elements aside; the text of `script`
/// and `style` elements skipped, as an HTML parser skips it) and that no attribute is left
/// unquoted; returns the element names met, in order.
fn check_well_formed(html: &str) -> Vec<String> {
    const VOID: [&str; 6] = ["meta", "input", "img", "br", "hr", "link"];
    let mut stack: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    let mut rest = html.strip_prefix("<!DOCTYPE html>").expect("a doctype");
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt..];
        let gt = rest.find('>').expect("a tag closes");
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(open, name, "</{name}> closes <{open}>");
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        assert!(!name.is_empty(), "a tag without a name: <{tag}>");
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in <{tag}>");
        seen.push(name.clone());
        if name == "script" || name == "style" {
            let close = format!("</{name}>");
            let end = rest.find(&close).expect("raw text closes");
            rest = &rest[end + close.len()..];
        } else if !VOID.contains(&name.as_str()) && !tag.ends_with('/') {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "left open: {stack:?}");
    seen
}

/// `html` without the text of its `script` and `style` elements.
fn without_raw_text(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script").into_iter().chain(rest.find("<style")).min() {
        let name = if rest[start..].starts_with("<script") {
            "script"
        } else {
            "style"
        };
        out.push_str(&rest[..start]);
        let close = format!("</{name}>");
        let end = rest[start..].find(&close).unwrap() + start + close.len();
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn names(data: &Value) -> Vec<String> {
    data["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_page_is_well_formed_and_holds_every_feature() {
    let (train, samples) = dataset(30, 20, 40, 0.0);
    let html = Report::new(&train).samples(&samples).to_html();
    let elements = check_well_formed(&html);
    assert_eq!(elements.iter().filter(|e| *e == "script").count(), 2);
    let data = data_block(&html);
    let mut expected: Vec<String> = train.features.iter().map(feature_name).collect();
    expected.sort();
    assert_eq!(names(&data), expected);
    assert_eq!(expected.len(), 50);
    let kinds: Vec<&str> = data["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "numeric").count(), 30);
    assert_eq!(kinds.iter().filter(|k| **k == "string").count(), 20);
}

#[test]
fn the_page_asks_for_nothing_from_the_network() {
    // Values that look like URLs or markup are data, escaped where they sit.
    let example = Example::builder()
        .bytes("url", ["https://example.com/a.png", "http://example.com/"])
        .bytes("</script><script>alert(1)</script>", ["<img src=x onerror=alert(1)>"])
        .build()
        .unwrap();
    let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
    let mut samples = ReportSamples::default();
    acc.add_example(&example.encode(), None).unwrap();
    samples.add_record(&example.encode(), &SampleLimits::default());
    let stats = acc.finish();
    let html = Report::new(&stats.datasets[0]).samples(&samples).to_html();
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("http://") && !lower.contains("https://"));
    assert!(!lower.contains("//example.com"));
    assert_eq!(lower.matches("<script").count(), 2);
    assert_eq!(lower.matches("</script>").count(), 2);
    // Outside the script and style text, no element refers to anything; inside them, no
    // style loads anything.
    let markup = without_raw_text(&lower);
    for attr in ["<img", "src=", "href=", "url(", "@import"] {
        assert!(!markup.contains(attr), "{attr} in the page's markup");
    }
    for what in ["url(", "@import", "fetch(", "xmlhttprequest", "websocket", "sendbeacon"] {
        assert!(!lower.contains(what), "{what} in the page");
    }
    assert!(html.contains("default-src 'none'; img-src data:"));
    check_well_formed(&html);
    // The values come back intact from the data block.
    let data = data_block(&html);
    let all = names(&data);
    assert!(all.contains(&"</script><script>alert(1)</script>".to_owned()));
    let url = &data["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "url")
        .unwrap()["examples"][0];
    assert_eq!(url[0], "[https://example.com/a.png, http://example.com/]");
}

#[test]
fn a_comparison_shows_both_sides_and_their_drift() {
    let (train, _) = dataset(3, 2, 60, 0.0);
    let (eval, _) = dataset(3, 2, 60, 5.0);
    let list = comparison(&train, &eval, "train", "eval");
    assert_eq!(list.datasets[0].name, "train");
    assert_eq!(list.datasets[1].name, "eval");
    let html = Report::of_list(&list).unwrap().to_html();
    check_well_formed(&html);
    let data = data_block(&html);
    assert_eq!(data["datasets"][0]["name"], "train");
    assert_eq!(data["datasets"][1]["name"], "eval");
    for f in data["features"].as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        let lhs = train.features.iter().find(|x| feature_name(x) == name).unwrap();
        let rhs = eval.features.iter().find(|x| feature_name(x) == name).unwrap();
        let expected = feature_drift(lhs, rhs).unwrap();
        assert_eq!(f["drift"]["value"].as_f64().unwrap(), expected.value, "{name}");
        assert_eq!(f["drift"]["measure"], expected.measure.name());
        assert!(expected.value > 0.0, "{name}: the shifted data drifts");
        assert_eq!(f["stats"].as_array().unwrap().len(), 2);
        if f["kind"] == "numeric" {
            // Both histograms redrawn on the same edges, each keeping its count.
            let (a, b) = (&f["hist"][0], &f["hist"][1]);
            assert_eq!(a["edges"], b["edges"]);
            for (h, side) in [(a, lhs), (b, rhs)] {
                let total: f64 = h["counts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_f64().unwrap())
                    .sum();
                let count = side_stats_json(side)["count"].as_f64().unwrap();
                assert!((total - count).abs() < 1e-6, "{name}: {total} vs {count}");
            }
        } else {
            // Bars carry the value and one fraction per side.
            for bar in f["bars"].as_array().unwrap() {
                assert_eq!(bar.as_array().unwrap().len(), 3);
            }
        }
    }
    // The same data set on both sides: no drift.
    let same = Report::new(&train).compare(&train).data();
    for f in same["features"].as_array().unwrap() {
        assert_eq!(f["drift"]["value"].as_f64(), Some(0.0), "{}", f["name"]);
    }
}

#[test]
fn anomalies_mark_their_features() {
    let (train, _) = dataset(2, 1, 10, 0.0);
    let text = r#"
anomaly_info {
  key: "str_0000"
  value {
    severity: ERROR
    short_description: "Unexpected string values"
    description: "Examples contain values missing from the schema: zebra."
    reason { type: ENUM_TYPE_UNEXPECTED_STRING_VALUES short_description: "Unexpected string values" }
  }
}
anomaly_info {
  key: "gone"
  value { severity: WARNING short_description: "Column dropped" description: "The feature was present in fewer examples than expected." }
}
"#;
    let anomalies = anomalies_from_text(text).unwrap();
    let data = Report::new(&train).anomalies(&anomalies).data();
    let feature = |n: &str| {
        data["features"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == n)
            .cloned()
    };
    assert_eq!(feature("str_0000").unwrap()["anomaly"]["severity"], "ERROR");
    assert_eq!(feature("gone").unwrap()["anomaly"]["short"], "Column dropped");
    assert!(feature("num_0000").unwrap().get("anomaly").is_none());
    assert!(anomalies_from_text("anomaly_info { key: ").is_err());
    let _ = AnomalyInfo::default();
}

#[test]
fn a_thousand_features_make_a_bounded_page() {
    let (train, train_samples) = dataset(600, 400, 20, 0.0);
    let (eval, eval_samples) = dataset(600, 400, 20, 3.0);
    let html = Report::new(&train)
        .compare(&eval)
        .samples(&train_samples)
        .rhs_samples(&eval_samples)
        .to_html();
    assert_eq!(names(&data_block(&html)).len(), 1000);
    // About a kilobyte and a half a feature with both sides; the page draws 50 rows at a time.
    assert!(html.len() < 3 * 1024 * 1024, "{} bytes", html.len());
    check_well_formed(&html);
}

#[test]
fn an_empty_list_is_an_error_and_empty_statistics_a_page() {
    assert!(Report::of_list(&DatasetFeatureStatisticsList::default()).is_err());
    let html = Report::new(&DatasetFeatureStatistics::default()).to_html();
    check_well_formed(&html);
    assert_eq!(names(&data_block(&html)).len(), 0);
}

#[test]
fn histograms_on_common_edges_keep_points() {
    use crate::stats::proto::histogram::Bucket;
    let h = Histogram {
        buckets: vec![Bucket {
            low_value: 2.0,
            high_value: 2.0,
            sample_count: 5.0,
        }],
        ..Default::default()
    };
    assert_eq!(counts_on(&h, &[0.0, 1.0, 2.0]), vec![0.0, 5.0]);
    assert_eq!(counts_on(&h, &[2.0, 2.0]), vec![5.0]);
}

#[test]
fn the_page_holds_the_data_written_feature_by_feature_as_the_whole_tree_gives_it() {
    let (train, train_samples) = dataset(6, 4, 20, 0.0);
    let (eval, _) = dataset(5, 4, 20, 3.0);
    let mut anomalies = Anomalies::default();
    anomalies.anomaly_info.insert("gone".into(), AnomalyInfo::default());
    let report = Report::new(&train)
        .compare(&eval)
        .samples(&train_samples)
        .anomalies(&anomalies)
        .title("</script> & <b>");
    assert_eq!(report.data_text(), script_safe_json(&report.data()));
    let empty = DatasetFeatureStatistics::default();
    assert_eq!(
        Report::new(&empty).data_text(),
        script_safe_json(&Report::new(&empty).data())
    );
}

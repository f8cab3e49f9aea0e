//! Conformance of the parse ops with TensorFlow 2.21: every case of `parse_cases.jsonl`, under
//! the matching rules of the golden README (tensors exact, floats bit for bit; where TF failed,
//! an error that names what TF's names; a `lenient` answer accepted where given).

mod common;

use base64::Engine;
use serde_json::Value;
use tfrec::parse::{specs_from_json_str, ExampleParser, SequenceParser, SequenceSpecs, TensorMap};

/// What we returned for a case, as JSON like the golden `expected`, or our error message.
fn run_case(case: &Value) -> Result<Value, String> {
    let records: Vec<Vec<u8>> = case["serialized"]
        .as_array()
        .expect("serialized")
        .iter()
        .map(|s| {
            base64::engine::general_purpose::STANDARD
                .decode(s.as_str().expect("base64 string"))
                .expect("base64")
        })
        .collect();
    let to_json = |m: &TensorMap| {
        Value::Object(
            m.iter()
                .map(|(k, t)| {
                    (
                        k.clone(),
                        serde_json::from_str::<serde_json::Value>(&t.to_json_string()).expect("tensor JSON"),
                    )
                })
                .collect(),
        )
    };
    match case["op"].as_str().expect("op") {
        op @ ("parse_example" | "parse_single_example") => {
            let specs = specs_from_json_str(&case["features"].to_string()).map_err(|e| e.to_string())?;
            let parser = ExampleParser::new(&specs).map_err(|e| e.to_string())?;
            let tensors = if op == "parse_example" {
                parser.parse_batch(&records)
            } else {
                parser.parse_single(records.first().map_or(&[][..], |r| r))
            }
            .map_err(|e| e.to_string())?;
            Ok(serde_json::json!({"features": to_json(&tensors)}))
        }
        op @ ("parse_sequence_example" | "parse_single_sequence_example") => {
            let spec_json = serde_json::json!({
                "context_features": case["context_features"],
                "sequence_features": case["sequence_features"],
            });
            let specs = SequenceSpecs::from_json_str(&spec_json.to_string()).map_err(|e| e.to_string())?;
            let parser = SequenceParser::new(&specs).map_err(|e| e.to_string())?;
            if op == "parse_sequence_example" {
                let parsed = parser.parse_batch(&records).map_err(|e| e.to_string())?;
                Ok(serde_json::json!({
                    "context": to_json(&parsed.context),
                    "feature_lists": to_json(&parsed.feature_lists),
                    "lengths": to_json(&parsed.lengths),
                }))
            } else {
                let parsed = parser
                    .parse_single(records.first().map_or(&[][..], |r| r))
                    .map_err(|e| e.to_string())?;
                Ok(serde_json::json!({
                    "context": to_json(&parsed.context),
                    "feature_lists": to_json(&parsed.feature_lists),
                }))
            }
        }
        other => panic!("unknown op {other}"),
    }
}

/// Exact comparison, with float32 values compared bit for bit (NaN equals NaN).
fn same(ours: &Value, expected: &Value, float_values: bool, path: &str) -> Result<(), String> {
    match (ours, expected) {
        (Value::Object(a), Value::Object(b)) => {
            if a.len() != b.len() || a.keys().any(|k| !b.contains_key(k)) {
                return Err(format!(
                    "{path}: keys {:?} vs expected {:?}",
                    a.keys().collect::<Vec<_>>(),
                    b.keys().collect::<Vec<_>>()
                ));
            }
            let floats = a.get("dtype").and_then(Value::as_str) == Some("float32");
            for (k, v) in a {
                let values = floats && (k == "values" || k == "flat_values");
                same(
                    v,
                    &b[k],
                    values || (float_values && k == "values"),
                    &format!("{path}.{k}"),
                )?;
            }
            Ok(())
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!("{path}: {} elements vs expected {}", a.len(), b.len()));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same(x, y, float_values, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        (x, y) if float_values => {
            let bits = |v: &Value| match v {
                Value::Number(n) => n.as_f64().map(|f| (f as f32).to_bits()),
                Value::String(s) if s == "NaN" => Some(f32::NAN.to_bits()),
                Value::String(s) if s == "Infinity" => Some(f32::INFINITY.to_bits()),
                Value::String(s) if s == "-Infinity" => Some(f32::NEG_INFINITY.to_bits()),
                _ => None,
            };
            if bits(x) == bits(y) && bits(x).is_some() {
                Ok(())
            } else {
                Err(format!("{path}: {x} vs expected {y}"))
            }
        }
        (x, y) if x == y => Ok(()),
        (x, y) => Err(format!("{path}: {x} vs expected {y}")),
    }
}

/// The kind of problem a message describes.
fn category(message: &str) -> &'static str {
    let m = message.to_ascii_lowercase();
    if m.contains("required") {
        "missing"
    } else if m.contains("data types don't match") || m.contains("conflicting type") {
        "type"
    } else if m.contains("can't parse")
        || m.contains("could not parse")
        || m.contains("malformed")
        || m.contains("codec")
    {
        "malformed"
    } else if m.contains("number of")
        || m.contains("values size")
        || m.contains("multiple")
        || m.contains("inconsistent")
        || m.contains("not consistent")
        || m.contains("not compatible")
        || m.contains("same number")
    {
        "count"
    } else {
        "other"
    }
}

/// The names TF's message gives (keys, indices) that ours must give too.
fn named_things(message: &str) -> Vec<String> {
    let mut things = Vec::new();
    for marker in [
        "Key: ",
        "Feature: ",
        "Feature list: ",
        "Feature list '",
        "for feature ",
        "Context feature: ",
    ] {
        for part in message.split(marker).skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| !matches!(c, ',' | '.' | ' ' | '\'' | ':'))
                .collect();
            if !name.is_empty() {
                things.push(name);
            }
        }
    }
    for part in message.split("Index: ").skip(1) {
        let index: String = part.chars().take_while(char::is_ascii_digit).collect();
        things.push(format!("Index: {index}"));
    }
    things
}

fn check(case: &Value) -> Result<(), String> {
    let ours = run_case(case);
    let answers: Vec<&Value> = std::iter::once(case)
        .chain(case.get("lenient").filter(|l| !l.is_null()))
        .collect();
    let mut why = Vec::new();
    for answer in answers {
        match (&ours, answer["error"].is_null()) {
            (Ok(got), true) => match same(got, &answer["expected"], false, "") {
                Ok(()) => return Ok(()),
                Err(e) => why.push(format!("tensors differ: {e}")),
            },
            (Err(message), false) => {
                let tf = answer["error"]["message"].as_str().unwrap_or("");
                let missing: Vec<String> = named_things(tf)
                    .into_iter()
                    .filter(|t| !message.contains(t.as_str()))
                    .collect();
                let (want, got) = (category(tf), category(message));
                if !missing.is_empty() {
                    why.push(format!("our error {message:?} does not name {missing:?} (TF: {tf:?})"));
                } else if want != "other" && want != got {
                    why.push(format!(
                        "our error {message:?} is about {got}, TF's {tf:?} about {want}"
                    ));
                } else {
                    return Ok(());
                }
            }
            (Ok(_), false) => why.push(format!("TF failed with {}, we did not", answer["error"])),
            (Err(message), true) => why.push(format!("we failed: {message}")),
        }
    }
    Err(why.join("; "))
}

/// Runs every case of a file in the golden format; panics with the failures.
fn run_cases_of(path: &std::path::Path, what: &str) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON case"))
        .collect();
    assert!(!cases.is_empty(), "{} has no cases", path.display());
    let mut failures = Vec::new();
    for case in &cases {
        let id = case["id"].as_str().expect("id");
        let result = std::panic::catch_unwind(|| check(case)).unwrap_or_else(|_| Err("panicked".into()));
        if let Err(why) = result {
            failures.push(format!("{id}: {why}"));
        }
    }
    let passed = cases.len() - failures.len();
    println!("{what}: {} run, {passed} passed", cases.len());
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} {what} failed",
        failures.len(),
        cases.len()
    );
}

#[test]
fn every_parse_case_matches_tensorflow() {
    run_cases_of(&common::golden_dir().join("parse_cases.jsonl"), "parse cases");
}

/// The project's own regression cases (TensorFlow's answers, in the golden format), whatever
/// golden set `TFREC_GOLDEN_DIR` points at.
#[test]
fn every_regression_case_matches_tensorflow() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/regressions/parse_cases.jsonl");
    run_cases_of(&path, "regression parse cases");
}

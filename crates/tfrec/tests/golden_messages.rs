//! Conformance of the message layer with TensorFlow's protobuf library: every case of
//! `text_format.jsonl` (bytes, text format and JSON mapping), and the wire-format cases of
//! `parse_cases.jsonl` (which inputs protobuf decodes and which it rejects).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use base64::Engine;
use serde_json::Value;
use tfrec::example::{Example, ExampleView, Feature, SequenceExample};

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(s).expect("base64")
}

fn cases(file: &str) -> Vec<Value> {
    let path = common::golden_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(!cases.is_empty(), "{file} has no cases");
    cases
}

/// What one message renders to.
struct Rendered {
    reencoded: Vec<u8>,
    text: String,
    json: String,
    text_reparsed: Vec<u8>,
}

fn render(message: &str, bytes: &[u8], text: &str) -> Rendered {
    match message {
        "Example" => {
            let ex = Example::decode(bytes).expect("decode");
            // The zero-copy view sees the same features as the owned decoder.
            let viewed: Vec<(Vec<u8>, Feature)> = ExampleView::new(bytes)
                .entries()
                .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_feature().expect("values"))))
                .collect::<Result<_, _>>()
                .expect("view");
            let owned: Vec<(Vec<u8>, Feature)> = ex
                .features()
                .iter()
                .map(|(k, f)| (k.as_bytes().to_vec(), f.clone()))
                .collect();
            assert_eq!(format!("{viewed:?}"), format!("{owned:?}"));
            Rendered {
                reencoded: ex.encode(),
                text: ex.to_text(),
                json: ex.to_json(),
                text_reparsed: Example::from_text(text).expect("parse text").encode(),
            }
        }
        "SequenceExample" => {
            let seq = SequenceExample::decode(bytes).expect("decode");
            Rendered {
                reencoded: seq.encode(),
                text: seq.to_text(),
                json: seq.to_json(),
                text_reparsed: SequenceExample::from_text(text).expect("parse text").encode(),
            }
        }
        other => panic!("unknown message type {other}"),
    }
}

/// Python's own `json.dumps(obj, indent=2)` of each golden JSON object: what
/// `MessageToJson` printed. Asked of python3 so the expected strings are not ours.
fn python_json_dumps(objects: &[&Value]) -> Vec<String> {
    let script =
        "import json,sys\nfor line in sys.stdin:\n    print(json.dumps(json.dumps(json.loads(line), indent=2)))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed to print the expected JSON");
    let mut stdin = child.stdin.take().expect("stdin");
    for o in objects {
        writeln!(stdin, "{o}").expect("write");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("python3 ran");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str::<String>(l).expect("a JSON string"))
        .collect()
}

#[test]
fn every_text_format_case_matches_protobuf() {
    let cases = cases("text_format.jsonl");
    let expected_json = python_json_dumps(&cases.iter().map(|c| &c["json_format"]).collect::<Vec<_>>());
    for (case, expected_json) in cases.iter().zip(&expected_json) {
        let id = case["id"].as_str().expect("id");
        let bytes = b64(case["serialized"].as_str().expect("serialized"));
        let text = case["text_format"].as_str().expect("text_format");
        let r = render(case["message"].as_str().expect("message"), &bytes, text);
        assert_eq!(r.reencoded, bytes, "{id}: decode then encode");
        assert_eq!(r.text, text, "{id}: text format");
        assert_eq!(r.text_reparsed, bytes, "{id}: text parsed back");
        assert_eq!(&r.json, expected_json, "{id}: JSON mapping");
        let ours: Value = serde_json::from_str(&r.json).expect("our JSON parses");
        assert_eq!(ours, case["json_format"], "{id}: JSON value");
    }
    println!("text format cases: {} run, {} passed", cases.len(), cases.len());
}

#[test]
fn wire_cases_decode_exactly_when_protobuf_does() {
    let mut run = 0;
    for case in cases("parse_cases.jsonl") {
        let id = case["id"].as_str().expect("id");
        if !id.starts_with("wire/") {
            continue;
        }
        // The protobuf-correct answer is `lenient` where TF's fast parser differs.
        let answer = case.get("lenient").filter(|l| !l.is_null()).unwrap_or(&case);
        let protobuf_accepts = answer["error"].is_null();
        for s in case["serialized"].as_array().expect("serialized") {
            let bytes = b64(s.as_str().expect("base64"));
            let decoded = Example::decode(&bytes);
            assert_eq!(decoded.is_ok(), protobuf_accepts, "{id}: {decoded:?}");
            let viewed: Result<Vec<_>, _> = ExampleView::new(&bytes)
                .entries()
                .map(|e| e.and_then(|(k, v)| Ok((k.to_vec(), v.to_feature()?))))
                .collect();
            assert_eq!(viewed.is_ok(), protobuf_accepts, "{id}: view {viewed:?}");
        }
        run += 1;
    }
    assert!(run > 0, "no wire/* cases");
    println!("wire cases: {run} run, {run} passed");
}

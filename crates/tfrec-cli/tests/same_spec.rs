//! One inferred spec whoever asks: `tfrec schema --json`, the spec `tfrec convert` saves
//! (`--save-spec`) and the library's `infer_specs` agree on generated files of every shape the
//! rules tell apart, and the spec parses every record it was inferred from (`tfrec parse`).

mod common;

use std::path::Path;

use common::*;
use serde_json::{json, Value};
use tfrec::example::{Example, Feature, FeatureList, SequenceExample};
use tfrec::record::{RecordWriter, WriterOptions};

fn example(features: Vec<(&str, Feature)>) -> Vec<u8> {
    let mut e = Example::default();
    for (k, f) in features {
        e.features_mut().insert(k, f);
    }
    e.encode()
}

fn sequence(context: Vec<(&str, Feature)>, lists: Vec<(&str, Vec<Feature>)>) -> Vec<u8> {
    let mut s = SequenceExample::default();
    for (k, f) in context {
        s.context_mut().insert(k, f);
    }
    for (k, steps) in lists {
        s.feature_lists_mut()
            .feature_list
            .insert(k.to_owned(), FeatureList { feature: steps });
    }
    s.encode()
}

fn write(path: &Path, records: &[Vec<u8>]) {
    let mut w = RecordWriter::create(path, WriterOptions::default()).expect("create");
    for r in records {
        w.write_record(r).expect("write");
    }
    w.finish().expect("finish");
}

fn ints(values: impl IntoIterator<Item = i64>) -> Feature {
    Feature::Int64(values.into_iter().collect())
}

/// The generated files: name → records.
fn files() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let scalars = (0..12)
        .map(|i| {
            example(vec![
                ("id", ints([i])),
                ("score", Feature::Float(vec![i as f32 / 4.0])),
                ("name", Feature::Bytes(vec![format!("n{i}").into_bytes()])),
                ("raw", Feature::Bytes(vec![vec![0xff, i as u8]])),
            ])
        })
        .collect();
    let lists = (0..12)
        .map(|i| {
            example(vec![
                ("pair", Feature::Float(vec![i as f32, -1.0])),
                ("matrix", ints(0..6)),
                ("tags", ints(0..i % 4)),
            ])
        })
        .collect();
    let empty = (0..6)
        .map(|i| {
            example(vec![
                ("id", ints([i])),
                ("never_values", ints([])),
                ("empty_message_once", if i == 2 { Feature::None } else { ints([i]) }),
                ("only_empty_messages", Feature::None),
            ])
        })
        .collect();
    let presence = (0..10)
        .map(|i| {
            let mut f = vec![("id", ints([i]))];
            if i % 2 == 0 {
                f.push(("even", ints([i, i])));
            }
            if i == 9 {
                f.push(("last", Feature::Bytes(vec![b"x".to_vec()])));
            }
            example(f)
        })
        .collect();
    let mixed = (0..6)
        .map(|i| {
            let x = if i % 3 == 0 {
                Feature::Float(vec![0.5])
            } else {
                ints([i])
            };
            example(vec![("id", ints([i])), ("x", x)])
        })
        .collect();
    let sequences = (0..8)
        .map(|i| {
            let mut lists = vec![
                (
                    "tokens",
                    (0..i)
                        .map(|t| Feature::Bytes(vec![b"w".to_vec(); t as usize % 3]))
                        .collect(),
                ),
                ("always", vec![ints([i]); 2]),
            ];
            if i % 3 != 0 {
                lists.push(("frames", (0..i).map(|t| Feature::Float(vec![t as f32, 1.0])).collect()));
            }
            sequence(
                vec![("id", ints([i])), ("lang", Feature::Bytes(vec![b"en".to_vec()]))],
                lists,
            )
        })
        .collect();
    vec![
        ("scalars", scalars),
        ("lists", lists),
        ("empty", empty),
        ("presence", presence),
        ("mixed", mixed),
        ("sequences", sequences),
    ]
}

fn json_of(text: &str, what: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"))
}

#[test]
fn schema_convert_and_the_library_infer_one_spec() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for (name, records) in files() {
        let file = format!("{name}.tfrecord");
        write(&d.join(&file), &records);

        let out = tfrec_in(d, &["schema", "--json", &file]);
        let schema = json_of(&expect_code(&out, 0, &format!("schema {file}")), "schema --json");
        let schema_warnings = text(&out.stderr);

        let saved = format!("{name}.spec.json");
        let parquet = format!("{name}.parquet");
        let out = tfrec_in(d, &["convert", &file, "-o", &parquet, "--save-spec", &saved]);
        expect_code(&out, 0, &format!("convert {file}"));
        let convert_warnings = text(&out.stderr);
        let converted = json_of(
            &std::fs::read_to_string(d.join(&saved)).expect("saved spec"),
            "saved spec",
        );

        let library = json_of(
            &tfrec::columnar::infer_specs(&records).expect("infer").to_json_string(),
            "infer_specs",
        );
        assert_eq!(schema, converted, "{file}: schema --json and convert --save-spec");
        assert_eq!(schema, library, "{file}: schema --json and infer_specs");
        assert_eq!(
            schema_warnings.contains("left out"),
            convert_warnings.contains("left out"),
            "{file}: both say what they left out: {schema_warnings} / {convert_warnings}"
        );

        // The spec parses every record it was inferred from.
        let out = tfrec_in(d, &["parse", "--spec", &saved, &file, "--format", "none"]);
        expect_code(&out, 0, &format!("parse {file} with its inferred spec"));
    }
}

#[test]
fn the_rules_where_the_two_inferences_disagreed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let all = files();
    let records = |name: &str| &all.iter().find(|(n, _)| *n == name).expect("file").1;
    write(&d.join("empty.tfrecord"), records("empty"));
    write(&d.join("mixed.tfrecord"), records("mixed"));

    let empty = json_of(
        &expect_code(&tfrec_in(d, &["schema", "--json", "empty.tfrecord"]), 0, "schema"),
        "spec",
    );
    // No values anywhere: a list, not a FixedLenFeature of shape [0].
    assert_eq!(
        empty["never_values"],
        json!({"type": "VarLenFeature", "dtype": "int64"})
    );
    assert_eq!(empty["empty_message_once"]["type"], "VarLenFeature");
    assert!(empty.get("only_empty_messages").is_none(), "{empty}");

    // A kind that varies: left out with a warning saying why, not an error.
    let out = tfrec_in(d, &["convert", "mixed.tfrecord", "-o", "mixed.arrow", "--print-spec"]);
    expect_code(&out, 0, "convert mixed");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("feature 'x' left out") && stderr.contains("int64_list") && stderr.contains("float_list"),
        "{stderr}"
    );
    let out = tfrec_in(d, &["schema", "--json", "mixed.tfrecord"]);
    let mixed = json_of(&expect_code(&out, 0, "schema mixed"), "spec");
    assert_eq!(mixed.as_object().map(|m| m.len()), Some(1), "{mixed}");
    assert!(text(&out.stderr).contains("feature 'x' left out"));
}

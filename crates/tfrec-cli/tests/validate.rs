//! `tfrec infer-schema` and `tfrec validate` end to end: the schema inferred from a file's
//! statistics validates them with no anomaly (exit 0), a schema the data breaks gives TFDV's
//! anomaly and exit 1, and a schema or statistics file that does not read or parse exits 2
//! with the file (and line) named.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tfrec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfrec"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run tfrec")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Statistics of the notebook sample and the schema inferred from them, in `dir`.
fn stats_and_schema(dir: &Path) -> (PathBuf, PathBuf) {
    let stats = dir.join("stats.pb");
    let schema = dir.join("schema.pbtxt");
    let out = tfrec(&["stats", "samples/notebook.tfrecord", "-o", path_str(&stats)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = tfrec(&["infer-schema", path_str(&stats), "-o", path_str(&schema)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    (stats, schema)
}

#[test]
fn the_inferred_schema_validates_its_own_statistics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stats, schema) = stats_and_schema(dir.path());
    let written = std::fs::read_to_string(&schema).expect("schema written");
    assert!(
        written.contains("name: \"feature0\"") && written.contains("min_fraction: 1.0"),
        "{written}"
    );
    let out = tfrec(&["validate", path_str(&stats), "--schema", path_str(&schema)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let anomalies = text(&out.stdout);
    assert!(
        anomalies.contains("baseline {") && !anomalies.contains("anomaly_info"),
        "{anomalies}"
    );
}

#[test]
fn anomalies_exit_1_and_name_the_feature() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stats, schema) = stats_and_schema(dir.path());
    let mut edited = std::fs::read_to_string(&schema).expect("schema");
    edited.push_str("feature {\n  name: \"absent\"\n  type: INT\n  presence {\n    min_count: 1\n  }\n}\n");
    std::fs::write(&schema, edited).expect("edit schema");
    let report = dir.path().join("anomalies.pbtxt");
    let out = tfrec(&[
        "validate",
        path_str(&stats),
        "--schema",
        path_str(&schema),
        "-o",
        path_str(&report),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let anomalies = std::fs::read_to_string(&report).expect("anomalies written");
    assert!(anomalies.contains("key: \"absent\""), "{anomalies}");
    assert!(anomalies.contains("type: SCHEMA_MISSING_COLUMN"), "{anomalies}");
    assert!(
        anomalies.contains("description: \"Column is completely missing\""),
        "{anomalies}"
    );
}

#[test]
fn a_schema_that_does_not_parse_exits_2_naming_file_and_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stats, _) = stats_and_schema(dir.path());
    let bad = dir.path().join("bad.pbtxt");
    std::fs::write(&bad, "feature {\n  name: \"a\"\n  type: INTEGER\n}\n").expect("write");
    let out = tfrec(&["validate", path_str(&stats), "--schema", path_str(&bad)]);
    assert_eq!(out.status.code(), Some(2));
    let error = text(&out.stderr);
    assert!(error.contains("bad.pbtxt") && error.contains("line 3"), "{error}");
}

#[test]
fn statistics_that_do_not_read_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, schema) = stats_and_schema(dir.path());
    let missing = dir.path().join("missing.pb");
    let out = tfrec(&["validate", path_str(&missing), "--schema", path_str(&schema)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("missing.pb"));
    let garbage = dir.path().join("garbage.pb");
    std::fs::write(&garbage, "datasets {").expect("write");
    let out = tfrec(&["infer-schema", path_str(&garbage)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("garbage.pb"));
}

//! Data safety: no command destroys an input, leaves a partial output, mixes runs, or loses or
//! fakes data silently. Each test reproduces a failure the CLI once had (run with
//! `TFREC_BIN=<old tfrec>` to see it).

mod common;

use std::path::Path;

use common::*;

const SPEC: &str = r#"{"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
 "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"}}"#;

#[test]
fn converters_refuse_to_write_over_their_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let jsonl = d.join("x.jsonl");
    let lines = "{\"a\": [1]}\n{\"a\": [2]}\n";
    std::fs::write(&jsonl, lines).expect("write");
    let out = tfrec_in(d, &["from-jsonl", "x.jsonl", "-o", "x.jsonl"]);
    expect_code(&out, 2, "from-jsonl onto its input");
    assert_eq!(
        std::fs::read_to_string(&jsonl).expect("read"),
        lines,
        "the input is intact"
    );
    // The same file under another name: a path through `.`, and a hard link.
    let out = tfrec_in(d, &["from-jsonl", "x.jsonl", "-o", "./x.jsonl"]);
    expect_code(&out, 2, "from-jsonl onto ./input");
    std::fs::hard_link(&jsonl, d.join("link.jsonl")).expect("hard link");
    let out = tfrec_in(d, &["from-jsonl", "x.jsonl", "-o", "link.jsonl"]);
    expect_code(&out, 2, "from-jsonl onto a hard link of its input");
    assert_eq!(std::fs::read_to_string(&jsonl).expect("read"), lines);

    let txt = d.join("m.txtpb");
    let message = "features { feature { key: \"a\" value { int64_list { value: 1 } } } }\n";
    std::fs::write(&txt, message).expect("write");
    let out = tfrec_in(d, &["from-text", "m.txtpb", "-o", "m.txtpb"]);
    expect_code(&out, 2, "from-text onto its input");
    assert_eq!(std::fs::read_to_string(&txt).expect("read"), message);
}

#[test]
fn readers_refuse_to_write_over_their_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let data = d.join("nb.tfrecord");
    write_examples(&data, 50);
    let before = std::fs::read(&data).expect("read");
    std::fs::write(d.join("spec.json"), SPEC).expect("spec");

    let cases: [&[&str]; 4] = [
        &[
            "parse",
            "--spec",
            "spec.json",
            "nb.tfrecord",
            "--format",
            "npz",
            "-o",
            "nb.tfrecord",
        ],
        &["index", "nb.tfrecord", "-o", "nb.tfrecord"],
        &["shard", "nb.tfrecord", "-o", "."],
        &["shuffle", "nb.tfrecord", "-o", "."],
    ];
    for args in cases {
        let out = tfrec_in(d, args);
        expect_code(&out, 2, &format!("{args:?}"));
        assert!(
            text(&out.stderr).contains("refusing"),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            std::fs::read(&data).expect("read"),
            before,
            "{args:?} changed its input"
        );
        assert_eq!(names_in(d), ["nb.tfrecord", "spec.json"], "{args:?} left files");
    }
    // An output directory that holds an input deeper down.
    std::fs::create_dir(d.join("sub")).expect("mkdir");
    std::fs::rename(&data, d.join("sub/nb.tfrecord")).expect("move");
    let out = tfrec_in(d, &["shard", "sub/nb.tfrecord", "-o", "."]);
    expect_code(&out, 2, "shard into a directory above its input");
}

#[test]
fn a_failed_conversion_leaves_nothing_behind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    // Many good lines (more than the writer buffers), then a bad one.
    let mut lines: String = (0..20_000)
        .map(|i| format!("{{\"a\": [{i}], \"b\": [\"{}\"]}}\n", "x".repeat(20)))
        .collect();
    lines.push_str("{\"a\": not json}\n");
    std::fs::write(d.join("in.jsonl"), lines).expect("write");
    for output in ["out.tfrecord", "out.tfrecord.gz"] {
        let out = tfrec_in(d, &["from-jsonl", "in.jsonl", "-o", output]);
        assert_eq!(names_in(d), ["in.jsonl"], "{output}: a partial output was left");
        expect_code(&out, 1, "a bad line is a data problem");
        assert!(text(&out.stderr).contains("in.jsonl:20001"), "{}", text(&out.stderr));
    }
}

#[test]
fn shard_by_an_absent_feature_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), 30);
    let out = tfrec_in(
        d,
        &[
            "shard",
            "in.tfrecord",
            "-o",
            "shards",
            "--shards",
            "3",
            "--by-feature",
            "nosuch",
        ],
    );
    expect_code(&out, 1, "an unknown key");
    assert!(text(&out.stderr).contains("nosuch"), "{}", text(&out.stderr));
    assert!(!d.join("shards").exists(), "nothing is written");
    // A key that some records lack is fine.
    let out = tfrec_in(
        d,
        &[
            "shard",
            "in.tfrecord",
            "-o",
            "shards",
            "--shards",
            "3",
            "--by-feature",
            "id",
        ],
    );
    expect_code(&out, 0, "a known key");
}

fn count_total(d: &Path, input: &str) -> u64 {
    let out = tfrec_in(d, &["count", "--json", input]);
    let report: serde_json::Value = serde_json::from_str(&expect_code(&out, 0, "count")).expect("json");
    report["total"].as_u64().expect("total")
}

#[test]
fn shard_output_directories_hold_one_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), 40);
    let args = ["shard", "in.tfrecord", "-o", "out", "--shards", "4"];
    expect_code(&tfrec_in(d, &args), 0, "first run");
    assert_eq!(count_total(d, "out"), 40);
    // Again into the same directory: refused, and the shards are untouched.
    let out = tfrec_in(d, &args);
    expect_code(&out, 2, "a second run without --overwrite");
    assert!(text(&out.stderr).contains("--overwrite"), "{}", text(&out.stderr));
    assert_eq!(count_total(d, "out"), 40);
    // --overwrite replaces the earlier shards, whatever their number.
    let out = tfrec_in(
        d,
        &["shard", "in.tfrecord", "-o", "out", "--shards", "2", "--overwrite"],
    );
    expect_code(&out, 0, "--overwrite");
    assert_eq!(names_in(&d.join("out")).len(), 2);
    assert_eq!(count_total(d, "out"), 40, "no record twice");
    // A directory holding anything else is refused even with --overwrite, and kept.
    std::fs::write(d.join("out/notes.txt"), "mine").expect("write");
    let out = tfrec_in(d, &["shard", "in.tfrecord", "-o", "out", "--overwrite"]);
    expect_code(&out, 2, "a foreign file");
    assert!(d.join("out/notes.txt").exists());
    assert_eq!(names_in(&d.join("out")).len(), 3);
}

#[test]
fn output_directories_are_made_only_once_the_inputs_open() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for command in ["shard", "shuffle"] {
        let out = tfrec_in(d, &[command, "no-such.tfrecord", "-o", "new"]);
        expect_code(&out, 2, "a missing input");
        assert!(!d.join("new").exists(), "{command} created its output directory");
    }
    // Too many shards is refused before anything is written.
    write_examples(&d.join("in.tfrecord"), 5);
    let out = tfrec_in(d, &["shard", "in.tfrecord", "-o", "new", "--shards", "100000"]);
    expect_code(&out, 2, "--shards 100000");
    assert!(!d.join("new").exists());
}

#[test]
fn count_walks_a_nested_data_set_and_refuses_an_empty_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for (split, n) in [("Split-train", 7), ("Split-eval", 3)] {
        std::fs::create_dir_all(d.join("data").join(split)).expect("mkdir");
        write_examples(&d.join("data").join(split).join("data_tfrecord-00000-of-00001.gz"), n);
    }
    assert_eq!(count_total(d, "data"), 10);
    std::fs::create_dir(d.join("empty")).expect("mkdir");
    let out = tfrec_in(d, &["count", "empty"]);
    expect_code(&out, 2, "a directory without records");
    assert!(text(&out.stderr).contains("--allow-empty"), "{}", text(&out.stderr));
    let out = tfrec_in(d, &["count", "--allow-empty", "empty"]);
    assert!(expect_code(&out, 0, "--allow-empty").contains("0  total"));
}

#[test]
fn npz_keeps_bytes_exactly_and_joins_batches() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let values: [&[u8]; 5] = [b"ab\x00", b"\x00", b"", b"\xff\x00\x01", b"plain"];
    let mut w = tfrec::record::RecordWriter::create(d.join("b.tfrecord"), Default::default()).expect("create");
    for (i, v) in values.iter().enumerate() {
        let ex = tfrec::example::Example::builder()
            .int64("id", i as i64)
            .bytes("name", v.to_vec())
            .build()
            .expect("example");
        w.write_record(&ex.encode()).expect("write");
    }
    w.finish().expect("finish");
    std::fs::write(d.join("spec.json"), SPEC).expect("spec");
    let out = tfrec_in(
        d,
        &[
            "parse",
            "--spec",
            "spec.json",
            "b.tfrecord",
            "--batch",
            "2",
            "--format",
            "npz",
            "-o",
            "b.npz",
        ],
    );
    expect_code(&out, 0, "parse to npz");
    let check = format!(
        "import numpy as np, sys\n\
         z = np.load(sys.argv[1])\n\
         b, o, shape = z['name/bytes'], z['name/offsets'], tuple(z['name/shape'])\n\
         vals = [bytes(b[o[i]:o[i+1]]) for i in range(len(o) - 1)]\n\
         assert shape == (5,), shape\n\
         assert [list(v) for v in vals] == {}, vals\n\
         assert list(z['id']) == [0, 1, 2, 3, 4], z['id']\n\
         assert sorted(z.files) == ['id', 'name/bytes', 'name/offsets', 'name/shape'], z.files\n",
        format!("{:?}", values.iter().map(|v| v.to_vec()).collect::<Vec<_>>()).replace(' ', "")
    );
    let status = std::process::Command::new(python_with_numpy())
        .args(["-c", &check, s(&d.join("b.npz"))])
        .status()
        .expect("run Python");
    assert!(status.success(), "numpy did not read the bytes back exactly");
}

#[test]
fn skipped_records_are_reported_by_every_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_damaged(&d.join("bad.tfrecord"), 20, 4);
    std::fs::write(d.join("spec.json"), SPEC).expect("spec");
    let cases: [&[&str]; 5] = [
        &["count", "--skip-corrupt", "bad.tfrecord"],
        &["cat", "--skip-corrupt", "bad.tfrecord", "--format", "jsonl"],
        &["parse", "--skip-corrupt", "--spec", "spec.json", "bad.tfrecord"],
        &["schema", "--skip-corrupt", "bad.tfrecord"],
        &["shard", "--skip-corrupt", "bad.tfrecord", "-o", "shards"],
    ];
    for args in cases {
        let out = tfrec_in(d, args);
        expect_code(&out, 0, &format!("{args:?}"));
        let err = text(&out.stderr);
        assert!(
            err.contains("skipped 1 damaged regions") && err.contains("bad.tfrecord"),
            "{args:?}: {err}"
        );
    }
    let out = tfrec_in(d, &["count", "--skip-corrupt", "--json", "bad.tfrecord"]);
    let report: serde_json::Value = serde_json::from_str(&expect_code(&out, 0, "count --json")).expect("json");
    assert_eq!(report["total"], 19);
    assert_eq!(report["skipped"]["regions"], 1);
    assert!(report["skipped"]["problems"][0]["offset"].is_u64(), "{report}");
    assert!(report["skipped"]["problems"][0]["path"]
        .as_str()
        .is_some_and(|p| p.ends_with("bad.tfrecord")));
}

#[test]
fn parsing_sequence_examples_with_an_example_spec_warns() {
    let out = tfrec_in(
        &repo(),
        &[
            "parse",
            "--spec",
            "samples/notebook.spec.json",
            "samples/movie.tfrecord",
        ],
    );
    assert!(
        text(&out.stderr).contains("look like SequenceExamples"),
        "{}",
        text(&out.stderr)
    );
    let out = tfrec_in(
        &repo(),
        &[
            "parse",
            "--spec",
            "samples/movie.spec.json",
            "samples/notebook.tfrecord",
        ],
    );
    assert!(
        text(&out.stderr).contains("look like Examples"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn outputs_get_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::write(d.join("in.jsonl"), "{\"a\": [1]}\n").expect("write");
    expect_code(
        &tfrec_in(d, &["from-jsonl", "in.jsonl", "-o", "out.tfrecord"]),
        0,
        "from-jsonl",
    );
    let made = std::fs::metadata(d.join("out.tfrecord"))
        .expect("out")
        .permissions()
        .mode()
        & 0o777;
    let reference = std::fs::metadata(d.join("in.jsonl")).expect("in").permissions().mode() & 0o777;
    assert_eq!(made, reference, "as a file created by write");
}

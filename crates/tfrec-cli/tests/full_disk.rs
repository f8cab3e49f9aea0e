//! A full disk (issue 54): every command that writes a file says which file it could not
//! write, and why, and leaves nothing behind. The disk is "full" by a file size limit
//! (RLIMIT_FSIZE, with SIGXFSZ ignored so that a write past it fails with EFBIG): the same
//! failing `write` a full disk gives, with no mount and no privilege.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::*;

/// Runs `tfrec args` in `dir` with files limited to `blocks` of 512 bytes.
fn tfrec_limited(dir: &Path, blocks: u32, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\""))
        .arg(binary())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrec under sh")
}

#[test]
fn every_writer_names_the_file_it_could_not_write() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), 20_000);
    fs::write(
        d.join("spec.json"),
        r#"{"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"}}"#,
    )
    .expect("spec");
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "parse",
                "--spec",
                "spec.json",
                "in.tfrecord",
                "--format",
                "npz",
                "-o",
                "out.npz",
            ],
            "out.npz",
        ),
        (&["convert", "in.tfrecord", "-o", "out.parquet"], "out.parquet"),
        (&["convert", "in.tfrecord", "-o", "out.csv"], "out.csv"),
        (&["convert", "in.tfrecord", "-o", "out.arrow"], "out.arrow"),
        (&["convert", "in.tfrecord", "-o", "out.jsonl"], "out.jsonl"),
        (&["index", "in.tfrecord", "-o", "in.idx"], "in.idx"),
        (
            &["shard", "in.tfrecord", "-o", "shards", "--shards", "1"],
            "part-00000-of-00001.tfrecord",
        ),
        (&["from-jsonl", "rows.jsonl", "-o", "rows.tfrecord"], "rows.tfrecord"),
    ];
    let mut jsonl = String::new();
    for i in 0..20_000 {
        jsonl.push_str(&format!("{{\"id\": [{i}], \"name\": [\"record-{i}\"]}}\n"));
    }
    fs::write(d.join("rows.jsonl"), jsonl).expect("jsonl");
    let before: Vec<_> = fs::read_dir(d)
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    for (args, output) in cases {
        let out = tfrec_limited(d, 64, args);
        let err = text(&out.stderr);
        expect_code(&out, 2, &format!("{args:?} on a full disk"));
        assert!(
            err.contains(output),
            "{args:?}: the error does not name {output}: {err}"
        );
        assert!(
            err.contains("File too large"),
            "{args:?}: the error hides the cause: {err}"
        );
        assert!(
            !err.contains("External:") && !err.contains("Io error:"),
            "{args:?}: {err}"
        );
        let _ = fs::remove_dir(d.join("shards"));
        let after: Vec<_> = fs::read_dir(d)
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(after, before, "{args:?} left files behind");
    }
}

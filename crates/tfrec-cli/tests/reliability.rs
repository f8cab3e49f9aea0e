//! What a reliability campaign found at the edges (issue 22): a closed standard error, two runs
//! into one directory, a spec file named as an output, a torn record body, damage at the first
//! byte, compressed files under plain names, and `convert --batch-rows 0`. Each test failed on the build before the fix
//! (run with `TFREC_BIN=<old tfrec>` to see it).

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::*;

/// Runs `tfrec args` in `dir` with standard error closed at the reading end: every write to it
/// fails (EPIPE), as it does when the terminal or the log reader went away.
fn tfrec_closed_stderr(dir: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    Command::new(binary())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(writer)
        .output()
        .expect("run tfrec")
}

fn copy_samples(to: &Path) {
    for name in [
        "notebook.tfrecord",
        "notebook.spec.json",
        "notebook.jsonl",
        "movie.tfrecord",
        "movie.txtpb",
        "movie.spec.json",
    ] {
        fs::copy(repo().join("samples").join(name), to.join(name)).expect("copy sample");
    }
}

#[test]
fn a_closed_stderr_changes_neither_the_output_nor_the_exit_status() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    copy_samples(d);
    let mut damaged = fs::read(d.join("notebook.tfrecord")).expect("read");
    damaged[200] ^= 1;
    fs::write(d.join("damaged.tfrecord"), damaged).expect("write");
    let forms: &[&[&str]] = &[
        &["cat", "notebook.tfrecord"],
        &["cat", "notebook.tfrecord", "--format", "jsonl"],
        &["cat", "damaged.tfrecord"],
        &["cat", "movie.tfrecord", "--kind", "auto"],
        &["schema", "notebook.tfrecord"],
        &["parse", "--spec", "notebook.spec.json", "notebook.tfrecord"],
        &["parse", "--spec", "notebook.spec.json", "damaged.tfrecord"],
        &["count", "damaged.tfrecord", "--skip-corrupt"],
        &["verify", "damaged.tfrecord"],
        &["verify", "no-such-file.tfrecord"],
        &["convert", "notebook.tfrecord", "-o", "out.parquet", "--print-spec"],
        &["from-text", "movie.txtpb", "-o", "from-text.tfrecord"],
        &["from-jsonl", "notebook.jsonl", "-o", "from-jsonl.tfrecord"],
        &["parse", "--spec", "missing.json", "notebook.tfrecord"],
    ];
    for args in forms {
        let open = tfrec_in(d, args);
        let closed = tfrec_closed_stderr(d, args);
        assert_eq!(
            closed.status.code(),
            open.status.code(),
            "{args:?}: the exit status with stderr closed (stderr open: {})",
            text(&open.stderr)
        );
        assert_eq!(closed.stdout, open.stdout, "{args:?}: stdout with stderr closed");
        for output in ["out.parquet", "from-text.tfrecord", "from-jsonl.tfrecord"] {
            let _ = fs::remove_file(d.join(output));
        }
    }
}

#[test]
fn a_second_run_into_a_claimed_directory_fails_and_mixes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    copy_samples(d);
    let out = d.join("D");
    fs::create_dir(&out).expect("mkdir");
    // Another run holds the directory: the claim is an advisory lock on its lock file.
    let lock = fs::File::create(out.join(".tfrec-lock")).expect("lock file");
    lock.lock().expect("lock");
    for command in ["shard", "shuffle"] {
        let run = tfrec_in(d, &[command, "notebook.tfrecord", "-o", "D", "--shards", "3"]);
        expect_code(&run, 2, &format!("{command} into a directory another run holds"));
        assert!(text(&run.stderr).contains("another run"), "{}", text(&run.stderr));
        assert_eq!(names_in(&out), [".tfrec-lock"], "{command} wrote nothing");
    }
    drop(lock);
    fs::remove_file(out.join(".tfrec-lock")).expect("remove");

    // Two real runs at once, again and again: one set of shards or the other, never both.
    for round in 0..12 {
        let target = d.join(format!("R{round}"));
        let spawn = |input: &str, shards: &str| {
            Command::new(binary())
                .args(["shard", input, "-o", s(&target), "--shards", shards])
                .current_dir(d)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        };
        let a = spawn("notebook.tfrecord", "3");
        let b = spawn("movie.tfrecord", "5");
        let a = a.wait_with_output().expect("wait");
        let b = b.wait_with_output().expect("wait");
        let ok = [a.status.success(), b.status.success()];
        assert_eq!(
            ok.iter().filter(|s| **s).count(),
            1,
            "round {round}: exactly one run wins"
        );
        let names = names_in(&target);
        let expected = if ok[0] { 3 } else { 5 };
        assert_eq!(names.len(), expected, "round {round}: {names:?}");
        let loser = if ok[0] { &b } else { &a };
        let why = text(&loser.stderr);
        assert!(
            why.contains("another run") || why.contains("shards of an earlier run"),
            "round {round}: {why}"
        );
    }
}

#[test]
fn no_command_writes_over_a_spec_it_reads_or_one_output_over_another() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    copy_samples(d);
    let spec = fs::read(d.join("notebook.spec.json")).expect("read");
    let cases: &[&[&str]] = &[
        &[
            "parse",
            "--spec",
            "notebook.spec.json",
            "notebook.tfrecord",
            "--format",
            "npz",
            "-o",
            "notebook.spec.json",
        ],
        &[
            "from-jsonl",
            "notebook.jsonl",
            "--spec",
            "notebook.spec.json",
            "-o",
            "./notebook.spec.json",
        ],
        &[
            "convert",
            "notebook.tfrecord",
            "--spec",
            "notebook.spec.json",
            "--to",
            "parquet",
            "-o",
            "notebook.spec.json",
        ],
        &[
            "convert",
            "notebook.tfrecord",
            "--spec",
            "notebook.spec.json",
            "-o",
            "x.parquet",
            "--save-spec",
            "notebook.spec.json",
        ],
        &[
            "convert",
            "notebook.tfrecord",
            "-o",
            "x.parquet",
            "--save-spec",
            "x.parquet",
        ],
    ];
    for args in cases {
        let out = tfrec_in(d, args);
        expect_code(&out, 2, &format!("{args:?}"));
        assert_eq!(fs::read(d.join("notebook.spec.json")).expect("read"), spec, "{args:?}");
        assert!(!d.join("x.parquet").exists(), "{args:?} wrote x.parquet");
    }
}

#[test]
fn a_torn_record_body_is_a_torn_tail_under_allow_torn_tail() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let whole = fs::read(repo().join("samples/notebook.tfrecord")).expect("read");
    let second = record_offset(&whole, 1);
    let third = record_offset(&whole, 2);
    // Cut inside record 1's header, inside its data, and inside its footer.
    for cut in [second + 5, second + 20, third - 2] {
        fs::write(d.join("t.tfrecord"), &whole[..cut]).expect("write");
        for command in ["count", "verify"] {
            let strict = tfrec_in(d, &[command, "t.tfrecord"]);
            expect_code(&strict, 1, &format!("{command} on a file cut at {cut}"));
            let out = tfrec_in(d, &[command, "--allow-torn-tail", "t.tfrecord", "--json"]);
            let report = expect_code(&out, 0, &format!("{command} --allow-torn-tail, cut at {cut}"));
            let json: serde_json::Value = serde_json::from_str(report.trim()).expect("json");
            let torn = (cut - second) as u64;
            assert!(
                report.contains(&format!("\"torn_tail_bytes\":{torn}")),
                "{command} reports the torn tail: {json}"
            );
        }
    }
    // A cut-off record that intact records follow is damage, not a tail.
    let mut patched = whole[..second + 20].to_vec();
    patched.extend_from_slice(&whole[third..]);
    fs::write(d.join("t.tfrecord"), &patched).expect("write");
    let out = tfrec_in(d, &["count", "--allow-torn-tail", "t.tfrecord"]);
    expect_code(&out, 1, "a torn record in the middle");
    let out = tfrec_in(d, &["count", "--allow-torn-tail", "--skip-corrupt", "t.tfrecord"]);
    let counted = expect_code(&out, 0, "resynchronised past it");
    assert!(counted.contains("99"), "{counted}");
}

#[test]
fn damage_at_the_first_byte_is_reported_there_and_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let mut bytes = fs::read(repo().join("samples/notebook.tfrecord")).expect("read");
    bytes[9] ^= 1;
    fs::write(d.join("n.tfrecord"), &bytes).expect("write");
    let out = tfrec_in(d, &["verify", "n.tfrecord"]);
    expect_code(&out, 1, "verify");
    let why = text(&out.stderr) + &text(&out.stdout);
    assert!(why.contains("record 0 at byte 0"), "{why}");
    assert!(why.contains("length's CRC"), "{why}");
    let out = tfrec_in(d, &["count", "--skip-corrupt", "n.tfrecord", "--json"]);
    let report = expect_code(&out, 0, "count --skip-corrupt");
    assert!(report.contains("\"records\":99"), "{report}");
}

#[test]
fn compressed_files_under_plain_names_are_read_as_what_they_are() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_examples(&d.join("a.tfrecord.gz"), 30);
    write_examples(&d.join("b.tfrecord.zz"), 20);
    fs::rename(d.join("a.tfrecord.gz"), d.join("a.tfrecord")).expect("rename");
    fs::rename(d.join("b.tfrecord.zz"), d.join("b.tfrecord")).expect("rename");
    for (name, n, compression) in [("a.tfrecord", 30, "gzip"), ("b.tfrecord", 20, "zlib")] {
        let out = tfrec_in(d, &["count", name, "--json"]);
        let report = expect_code(&out, 0, name);
        assert!(report.contains(&format!("\"records\":{n}")), "{report}");
        assert!(
            report.contains(&format!("\"compression\":\"{compression}\"")),
            "{report}"
        );
    }
    // Damaged right after the magic bytes: not readable, but the error says what it looks like.
    let mut gz = fs::read(d.join("a.tfrecord")).expect("read");
    for b in &mut gz[10..40] {
        *b ^= 0xff;
    }
    fs::write(d.join("c.tfrecord"), &gz).expect("write");
    let out = tfrec_in(d, &["count", "c.tfrecord"]);
    expect_code(&out, 1, "a damaged GZIP file named .tfrecord");
    let why = text(&out.stderr);
    assert!(why.contains("GZIP") && why.contains("--compression gzip"), "{why}");
}

#[test]
fn convert_refuses_batches_of_no_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    copy_samples(d);
    let out = tfrec_in(
        d,
        &["convert", "notebook.tfrecord", "-o", "x.parquet", "--batch-rows", "0"],
    );
    expect_code(&out, 2, "--batch-rows 0");
    assert!(!d.join("x.parquet").exists());
}

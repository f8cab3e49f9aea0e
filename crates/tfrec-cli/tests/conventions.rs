//! One convention for every command: exit 0 success, 1 data problems, 2 usage or I/O errors;
//! a closed standard output ends quietly and never turns damage into success; JSON output is
//! valid JSON; errors name the file, the byte offset and the record index.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

use common::*;

const SPEC: &str = r#"{"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}"#;

fn data_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write_examples(&dir.path().join("big.tfrecord"), 3000);
    write_damaged(&dir.path().join("bad.tfrecord"), 20, 4);
    std::fs::write(dir.path().join("spec.json"), SPEC).expect("spec");
    dir
}

/// Every command that prints to stdout, on enough data to fill a pipe.
fn printing_commands() -> Vec<Vec<&'static str>> {
    vec![
        vec!["count", "big.tfrecord", "big.tfrecord", "big.tfrecord"],
        vec!["count", "--json", "big.tfrecord"],
        vec!["verify", "big.tfrecord", "big.tfrecord"],
        vec!["verify", "--json", "big.tfrecord"],
        vec!["cat", "big.tfrecord"],
        vec!["cat", "--format", "json", "big.tfrecord"],
        vec!["cat", "--format", "jsonl", "big.tfrecord"],
        vec!["cat", "--raw", "big.tfrecord"],
        vec!["schema", "big.tfrecord"],
        vec!["schema", "--json", "big.tfrecord"],
        vec!["parse", "--spec", "spec.json", "big.tfrecord", "--batch", "10"],
        vec!["index", "big.tfrecord", "-o", "out.idx"],
        vec!["shard", "big.tfrecord", "-o", "shards", "--shards", "50"],
        vec!["shuffle", "big.tfrecord", "-o", "shuffled", "--shards", "50"],
    ]
}

/// Runs `tfrec args` in `dir` with its standard output closed before it writes, as `| head -0`
/// does; gives the exit status (a signal as 128 + its number) and stderr.
fn with_closed_stdout(dir: &std::path::Path, args: &[&str]) -> (i32, String) {
    let mut child = Command::new(binary())
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("stderr");
    let status = child.wait().expect("wait");
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or(status.signal().map(|s| 128 + s)).expect("a status");
    (code, err)
}

/// The commands whose output is the data itself, which stop when their reader goes away.
fn prints_the_data(args: &[&str]) -> bool {
    matches!(args[0], "cat" | "parse")
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let dir = data_dir();
    for args in printing_commands() {
        let (code, err) = with_closed_stdout(dir.path(), &args);
        // The checks and the writers finish their work and succeed on good data; cat and parse
        // stop at once, as a process killed by SIGPIPE (they did not read the rest).
        let expected = if prints_the_data(&args) { 141 } else { 0 };
        assert_eq!(code, expected, "{args:?}: stderr {err}");
        // Notes may come (the message kind guessed); no error and no panic.
        assert!(
            !err.contains("tfrec:") && !err.contains("panicked"),
            "{args:?}: not quiet: {err}"
        );
        let _ = std::fs::remove_dir_all(dir.path().join("shards"));
        let _ = std::fs::remove_dir_all(dir.path().join("shuffled"));
    }
}

/// Issue 54: `tfrec verify damaged | head -0` exited 0. A closed standard output never turns
/// damage into success: every command exits non-zero on a damaged input, and the ones that
/// check exit 1, as with their output open.
#[test]
fn a_closed_stdout_never_turns_damage_into_success() {
    let dir = data_dir();
    for args in printing_commands() {
        let args: Vec<&str> = args
            .iter()
            .map(|&a| if a == "big.tfrecord" { "bad.tfrecord" } else { a })
            .collect();
        let open = tfrec_in(dir.path(), &args);
        let _ = std::fs::remove_dir_all(dir.path().join("shards"));
        let _ = std::fs::remove_dir_all(dir.path().join("shuffled"));
        let (code, err) = with_closed_stdout(dir.path(), &args);
        assert_eq!(open.status.code(), Some(1), "{args:?} with stdout open");
        if prints_the_data(&args) {
            assert_ne!(code, 0, "{args:?}: stderr {err}");
        } else {
            assert_eq!(code, 1, "{args:?}: stderr {err}");
        }
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // The issue's own reproduction: one flipped bit in a sample, `verify | head -0`.
    let mut damaged = std::fs::read(repo().join("samples/notebook.tfrecord")).expect("sample");
    damaged[500] ^= 1;
    std::fs::write(dir.path().join("dmg.tfrecord"), damaged).expect("write");
    for command in ["verify", "count", "cat"] {
        let (code, err) = with_closed_stdout(dir.path(), &[command, "dmg.tfrecord"]);
        assert_eq!(code, 1, "{command} dmg.tfrecord | head -0: stderr {err}");
    }
}

#[test]
fn every_reading_command_exits_1_on_damaged_data_and_2_on_a_missing_file() {
    let dir = data_dir();
    let d = dir.path();
    let commands: [&[&str]; 8] = [
        &["count"],
        &["verify"],
        &["cat"],
        &["schema"],
        &["parse", "--spec", "spec.json"],
        &["index"],
        &["shard", "-o", "shards"],
        &["shuffle", "-o", "shuffled"],
    ];
    for command in commands {
        for (input, code) in [("bad.tfrecord", 1), ("missing.tfrecord", 2)] {
            let mut args = command.to_vec();
            args.push(input);
            let out = tfrec_in(d, &args);
            expect_code(&out, code, &format!("{args:?}"));
            // verify reports on stdout, the others on stderr.
            let err = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert!(err.contains(input), "{args:?} does not name the file: {err}");
            if code == 1 {
                // File, byte offset and record index, as verify reports them.
                let offset = record_offset(&std::fs::read(d.join(input)).expect("read"), 4);
                assert!(err.contains(&format!("record 4 at byte {offset}")), "{args:?}: {err}");
            }
        }
        assert!(!d.join("shards").exists() && !d.join("shuffled").exists());
    }
}

#[test]
fn count_and_verify_agree() {
    let dir = data_dir();
    let out = tfrec_in(dir.path(), &["verify", "--json", "bad.tfrecord"]);
    let verify: serde_json::Value = serde_json::from_str(&expect_code(&out, 1, "verify")).expect("json");
    let out = tfrec_in(dir.path(), &["count", "--json", "bad.tfrecord"]);
    let count: serde_json::Value = serde_json::from_str(&expect_code(&out, 1, "count")).expect("json");
    assert_eq!(
        verify["files"][0]["problems"][0]["record_index"],
        count["problems"][0]["record_index"]
    );
    assert_eq!(
        verify["files"][0]["problems"][0]["offset"],
        count["problems"][0]["offset"]
    );
    assert_eq!(count["total"], 4, "the records before the damage");
    assert_eq!(count["data_crcs_checked"], true);
}

#[test]
fn usage_errors_exit_2_before_anything_is_written() {
    let dir = data_dir();
    let d = dir.path();
    let cases: [&[&str]; 9] = [
        &["parse", "--spec", "spec.json", "big.tfrecord", "--batch", "0"],
        &["parse", "--spec", "spec.json", "big.tfrecord", "--threads", "0"],
        &["parse", "--spec", "spec.json", "big.tfrecord", "--threads", "100000"],
        &["shard", "big.tfrecord", "-o", "shards", "--shards", "0"],
        &["shard", "big.tfrecord", "-o", "shards", "--shards", "100000"],
        &["shuffle", "big.tfrecord", "-o", "shards", "--buffer", "0"],
        &["verify", "--skip-corrupt", "big.tfrecord"],
        &["cat", "--sequence", "big.tfrecord"],
        &["count", "'no-match-*.tfrecord'"],
    ];
    for args in cases {
        let out = tfrec_in(d, args);
        expect_code(&out, 2, &format!("{args:?}"));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!d.join("shards").exists(), "{args:?}");
    }
}

#[test]
fn cat_json_is_json_lines_and_floats_read_back() {
    let dir = data_dir();
    let out = tfrec_in(dir.path(), &["cat", "--format", "json", "big.tfrecord", "--limit", "3"]);
    let lines = expect_code(&out, 0, "cat json");
    assert_eq!(lines.lines().count(), 3);
    for line in lines.lines() {
        let _: serde_json::Value = serde_json::from_str(line).expect("each line is JSON");
    }
    // parse prints a float32 as the shortest text that reads back as it, as cat does.
    let spec = r#"{"score": {"type": "FixedLenFeature", "shape": [], "dtype": "float32"}}"#;
    std::fs::write(dir.path().join("f.json"), spec).expect("spec");
    let out = tfrec_in(
        dir.path(),
        &["parse", "--spec", "f.json", "big.tfrecord", "--limit", "3"],
    );
    let json = expect_code(&out, 0, "parse");
    assert!(json.contains("[0.0,0.25,0.5]"), "{json}");
    let out = tfrec_in(
        dir.path(),
        &[
            "cat",
            "--format",
            "jsonl",
            "big.tfrecord",
            "--limit",
            "2",
            "--skip",
            "1",
        ],
    );
    assert!(expect_code(&out, 0, "cat jsonl").contains("\"score\": [0.25]"));
}

#[test]
fn cat_prints_the_good_records_before_an_error() {
    let dir = data_dir();
    let d = dir.path();
    // Record 4 is damaged: the first records are printed (as TF's take() gives them).
    let out = tfrec_in(d, &["cat", "--format", "jsonl", "bad.tfrecord", "--limit", "2"]);
    assert_eq!(expect_code(&out, 0, "before the damage").lines().count(), 2);
    let out = tfrec_in(d, &["cat", "--format", "jsonl", "bad.tfrecord"]);
    assert_eq!(expect_code(&out, 1, "through the damage").lines().count(), 4);
    let out = tfrec_in(d, &["cat", "--raw", "bad.tfrecord", "--limit", "1"]);
    assert_eq!(expect_code(&out, 0, "raw").lines().count(), 1);
}

#[test]
fn cat_caps_printed_values() {
    let dir = tempfile::tempdir().expect("temp dir");
    let big = tfrec::example::Example::builder()
        .bytes("blob", vec![b'x'; 100_000])
        .build()
        .expect("example");
    let mut w = tfrec::record::RecordWriter::create(dir.path().join("blob.tfrecord"), Default::default()).expect("w");
    w.write_record(&big.encode()).expect("write");
    w.finish().expect("finish");
    let out = tfrec_in(dir.path(), &["cat", "blob.tfrecord", "--max-bytes", "100"]);
    let printed = expect_code(&out, 0, "cat --max-bytes");
    assert!(printed.len() < 400, "{}", printed.len());
    assert!(text(&out.stderr).contains("--max-bytes 0"));
    let out = tfrec_in(dir.path(), &["cat", "blob.tfrecord"]);
    assert!(
        expect_code(&out, 0, "cat").len() > 100_000,
        "everything when not a terminal"
    );
}

#[test]
fn a_file_that_is_not_tfrecord_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("notes.tfrecord"),
        "hello, this is not a record file at all\n",
    )
    .expect("write");
    for command in ["count", "verify", "cat", "schema", "shard -o out"] {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("notes.tfrecord");
        let out = tfrec_in(dir.path(), &args);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(all.contains("not a TFRecord file"), "{command}: {all}");
        assert_eq!(out.status.code(), Some(1));
    }
}

#[test]
fn index_takes_many_files_and_writes_a_seek_index_for_compressed_ones() {
    let dir = data_dir();
    let d = dir.path();
    write_examples(&d.join("small.tfrecord"), 3);
    let out = tfrec_in(d, &["index", "big.tfrecord", "small.tfrecord"]);
    let printed = expect_code(&out, 0, "index two files");
    assert_eq!(printed.lines().count(), 2);
    assert!(d.join("big.tfrecord.idx").exists() && d.join("small.tfrecord.idx").exists());
    write_examples(&d.join("c.tfrecord.gz"), 3);
    let out = tfrec_in(d, &["index", "c.tfrecord.gz"]);
    let printed = expect_code(&out, 0, "a compressed file");
    assert!(
        printed.contains("3 records indexed") && printed.contains("checkpoints"),
        "{printed}"
    );
    assert!(d.join("c.tfrecord.gz.zidx").exists());
}

#[test]
fn help_documents_the_convention() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tfrec_in(dir.path(), &["--help"]);
    assert!(expect_code(&out, 0, "help").contains("1 the data has problems"));
    let out = tfrec_in(dir.path(), &["cat", "--help"]);
    let help = expect_code(&out, 0, "cat help");
    assert!(
        help.contains("protobuf text format") && help.contains("Exit status"),
        "{help}"
    );
}

/// Every command's own help opens with the summary the top-level help lists for it (the
/// commands' options are built only when a command runs, after its summary: a doc comment on
/// an options struct would replace it).
#[test]
fn each_command_help_opens_with_its_summary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let top = expect_code(&tfrec_in(dir.path(), &["--help"]), 0, "help");
    let listed: Vec<(&str, &str)> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.trim().split_once(' '))
        .map(|(name, summary)| (name, summary.trim()))
        .filter(|(name, _)| *name != "help")
        .collect();
    assert!(listed.len() > 10, "{top}");
    for (name, summary) in listed {
        for flag in ["--help", "-h"] {
            let help = expect_code(&tfrec_in(dir.path(), &[name, flag]), 0, name);
            assert_eq!(help.lines().next(), Some(summary), "tfrec {name} {flag}:\n{help}");
        }
    }
}

#[test]
fn damage_inside_a_gzip_stream_is_one_problem() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("d.tfrecord.gz");
    write_examples(&path, 500);
    let mut bytes = std::fs::read(&path).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&path, bytes).expect("write");
    let out = tfrec_in(dir.path(), &["verify", "--json", "d.tfrecord.gz"]);
    let report: serde_json::Value = serde_json::from_str(&expect_code(&out, 1, "verify")).expect("json");
    let problems = report["files"][0]["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1, "{report}");
    let out = tfrec_in(dir.path(), &["verify", "d.tfrecord.gz"]);
    assert_eq!(text(&out.stdout).lines().count(), 2, "{}", text(&out.stdout));
}

#[test]
fn the_shuffle_buffer_is_bounded_in_bytes_too() {
    let dir = data_dir();
    let d = dir.path();
    // A buffer of one byte holds one record at a time: the order cannot change.
    let args = [
        "shuffle",
        "big.tfrecord",
        "-o",
        "one",
        "--buffer",
        "100000",
        "--buffer-bytes",
        "1",
    ];
    expect_code(&tfrec_in(d, &args), 0, "shuffle");
    let read = |p: std::path::PathBuf| -> Vec<Vec<u8>> {
        tfrec::record::RecordReader::open(p, Default::default())
            .expect("open")
            .records()
            .collect::<Result<_, _>>()
            .expect("read")
    };
    let shuffled = read(d.join("one/shuffled-00000-of-00001.tfrecord"));
    assert_eq!(shuffled, read(d.join("big.tfrecord")));
    let args = ["shuffle", "big.tfrecord", "-o", "many", "--buffer", "100000"];
    expect_code(&tfrec_in(d, &args), 0, "shuffle");
    assert_ne!(read(d.join("many/shuffled-00000-of-00001.tfrecord")), shuffled);
}

#[test]
fn count_on_threads_through_saved_indexes_says_what_one_thread_says() {
    let dir = data_dir();
    let d = dir.path();
    write_examples(&d.join("c.tfrecord.gz"), 4000);
    expect_code(
        &tfrec_in(d, &["index", "--spacing", "40000", "c.tfrecord.gz", "big.tfrecord"]),
        0,
        "index",
    );
    for args in [
        vec!["count", "c.tfrecord.gz", "big.tfrecord"],
        vec!["count", "--json", "c.tfrecord.gz", "big.tfrecord"],
    ] {
        let one = expect_code(&tfrec_in(d, &args), 0, "one thread");
        let mut threaded = args.clone();
        threaded.extend(["--threads", "2"]);
        let two = expect_code(&tfrec_in(d, &threaded), 0, "two threads");
        assert_eq!(one, two, "{args:?}");
    }
    // Damage in the compressed data: the same exit status, and the error names the file.
    let path = d.join("c.tfrecord.gz");
    let mut bytes = std::fs::read(&path).expect("read");
    let meta = std::fs::metadata(&path).expect("meta");
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    bytes[at + 1] ^= 0xff;
    std::fs::write(&path, &bytes).expect("damage");
    let f = std::fs::File::options().write(true).open(&path).expect("open");
    f.set_modified(meta.modified().expect("mtime")).expect("keep the stamp");
    drop(f);
    let out = tfrec_in(d, &["count", "--threads", "2", "c.tfrecord.gz"]);
    expect_code(&out, 1, "damaged");
    assert!(text(&out.stderr).contains("c.tfrecord.gz"), "{}", text(&out.stderr));
}

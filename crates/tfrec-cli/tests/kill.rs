//! A kill campaign (issue 54): every command that writes files is killed with SIGKILL at random
//! moments, then run again as a user would (with `--overwrite` where the output directory is
//! taken). Every rerun must succeed, leave nothing but its outputs (no `.tfrec-*.partial`, no
//! `.tfrec-lock`) and write the same bytes as a run that was never interrupted.
//!
//! `TFREC_KILL_ROUNDS` sets the kills per command (3 by default; the long mode is e.g. 50) and
//! `TFREC_KILL_SEED` the seed of the moments. A kill is a seeded number of milliseconds after
//! the start; nothing here reads the clock, and the assertions hold wherever the kill lands
//! (some land after the run has finished, which is counted, not relied on).

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use tfrec::example::Example;
use tfrec::record::{RecordWriter, WriterOptions};
use tfrec::rng::SplitMix64;

/// The longest wait before a kill. The inputs are large enough that most writers are still
/// running then in a test build.
const MAX_DELAY_MS: u64 = 400;

fn rounds() -> usize {
    std::env::var("TFREC_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

fn seed() -> u64 {
    std::env::var("TFREC_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(54)
}

/// Inputs of some size, outside the directories the commands write into.
fn write_inputs(dir: &Path) {
    let payload = vec![b'x'; 700];
    let mut w = RecordWriter::create(dir.join("big.tfrecord"), WriterOptions::default()).expect("create");
    for i in 0..40_000i64 {
        let record = Example::builder()
            .int64("id", i)
            .bytes("name", format!("record-{i}"))
            .bytes("payload", payload.as_slice())
            .float("score", [i as f32 * 0.5])
            .build()
            .expect("example")
            .encode();
        w.write_record(&record).expect("write");
    }
    w.finish().expect("finish");
    fs::write(
        dir.join("spec.json"),
        r#"{"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
            "score": {"type": "VarLenFeature", "dtype": "float32"}}"#,
    )
    .expect("spec");
    let mut jsonl = String::new();
    for i in 0..60_000 {
        jsonl.push_str(&format!(
            "{{\"id\": [{i}], \"name\": [\"record-{i}\"], \"score\": [{}.5, 2.25]}}\n",
            i % 97
        ));
    }
    fs::write(dir.join("big.jsonl"), jsonl).expect("jsonl");
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!(
            "features {{ feature {{ key: \"id\" value {{ int64_list {{ value: {i} }} }} }} \
             feature {{ key: \"name\" value {{ bytes_list {{ value: \"record-{i}\" }} }} }} }}\n---\n"
        ));
    }
    fs::write(dir.join("big.txtpb"), text).expect("text");
}

/// The writers, each as it is run into an empty directory (inputs named from `..`), and the
/// flag that its rerun adds when its output directory is already there.
fn writers() -> Vec<(&'static str, Vec<&'static str>, Option<&'static str>)> {
    let images = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/images");
    vec![
        (
            "shard",
            vec!["shard", "../big.tfrecord", "-o", "shards", "--shards", "4"],
            Some("--overwrite"),
        ),
        (
            "shard gzip",
            vec![
                "shard",
                "../big.tfrecord",
                "-o",
                "shards",
                "--shards",
                "2",
                "--output-compression",
                "gzip",
            ],
            Some("--overwrite"),
        ),
        (
            "shuffle",
            vec![
                "shuffle",
                "../big.tfrecord",
                "-o",
                "shuffled",
                "--shards",
                "3",
                "--seed",
                "7",
                "--buffer",
                "5000",
            ],
            Some("--overwrite"),
        ),
        (
            "convert parquet",
            vec!["convert", "../big.tfrecord", "-o", "out.parquet"],
            None,
        ),
        (
            "convert jsonl",
            vec!["convert", "../big.tfrecord", "-o", "out.jsonl"],
            None,
        ),
        (
            "parse npz",
            vec![
                "parse",
                "--spec",
                "../spec.json",
                "../big.tfrecord",
                "--format",
                "npz",
                "-o",
                "out.npz",
            ],
            None,
        ),
        ("index", vec!["index", "../big.tfrecord", "-o", "big.idx"], None),
        (
            "from-jsonl",
            vec!["from-jsonl", "../big.jsonl", "-o", "j.tfrecord.gz"],
            None,
        ),
        ("from-text", vec!["from-text", "../big.txtpb", "-o", "t.tfrecord"], None),
        ("from-images", vec!["from-images", images, "-o", "i.tfrecord"], None),
    ]
}

/// Every file under `dir` (relative path → bytes).
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).expect("under dir").display().to_string();
                out.insert(name, fs::read(&path).expect("read"));
            }
        }
    }
    out
}

fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(binary())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run tfrec")
}

#[test]
fn every_writer_killed_at_random_reruns_to_the_same_bytes_and_leaves_no_debris() {
    let top = tempfile::tempdir().expect("temp dir");
    write_inputs(top.path());
    let mut rng = SplitMix64::new(seed());
    let (mut kills, mut mid_run) = (0, 0);
    for (name, args, rerun_flag) in writers() {
        let reference_dir = top.path().join("reference");
        fs::create_dir(&reference_dir).expect("mkdir");
        let out = run_in(&reference_dir, &args);
        expect_code(&out, 0, &format!("{name}: the uninterrupted run"));
        let reference = contents(&reference_dir);
        assert!(!reference.is_empty(), "{name} wrote nothing");

        let work = top.path().join("work");
        fs::create_dir(&work).expect("mkdir");
        for round in 0..rounds() {
            let mut child = Command::new(binary())
                .args(&args)
                .current_dir(&work)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn");
            std::thread::sleep(Duration::from_millis(rng.next_u64() % MAX_DELAY_MS));
            if child.try_wait().expect("try_wait").is_none() {
                mid_run += 1;
            }
            kills += 1;
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();

            // Rerun as a user would: a taken output directory needs --overwrite.
            let mut rerun = args.clone();
            let output_dir = args.iter().position(|a| *a == "-o").map(|i| work.join(args[i + 1]));
            if let (Some(flag), Some(dir)) = (rerun_flag, &output_dir) {
                if dir.is_dir() && fs::read_dir(dir).expect("read dir").next().is_some() {
                    rerun.push(flag);
                }
            }
            let out = run_in(&work, &rerun);
            expect_code(
                &out,
                0,
                &format!("{name}, round {round}: the rerun after a kill {rerun:?}"),
            );
            let now = contents(&work);
            let names: Vec<&String> = now.keys().collect();
            let expected: Vec<&String> = reference.keys().collect();
            assert_eq!(names, expected, "{name}, round {round}: the files after the rerun");
            for (file, bytes) in &reference {
                assert!(
                    now[file] == *bytes,
                    "{name}, round {round}: {file} differs from the uninterrupted run's"
                );
            }
        }
        fs::remove_dir_all(&reference_dir).expect("clean");
        fs::remove_dir_all(&work).expect("clean");
    }
    // The campaign's summary, in the test log whether or not output is captured.
    let _ = writeln!(
        std::io::stdout(),
        "kill campaign: {kills} kills, {mid_run} while the writer was running, every rerun whole"
    );
    assert!(
        mid_run > 0,
        "no kill landed while a writer was running: the campaign tested nothing"
    );
}

/// A dead run's debris beside a single-file output is removed by the next run into that
/// directory, and a live run's temporary file is left alone.
#[test]
fn debris_of_dead_runs_is_cleared_and_live_files_are_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), 50);
    // What a killed run leaves: a temporary file nobody holds.
    fs::write(d.join(".tfrec-dead01.partial"), b"half a file").expect("debris");
    // What a live run holds: the same name pattern, locked.
    let live = fs::File::create(d.join(".tfrec-live01.partial")).expect("live");
    live.lock().expect("lock");
    let out = tfrec_in(d, &["index", "in.tfrecord", "-o", "in.idx"]);
    expect_code(&out, 0, "index");
    let err = text(&out.stderr);
    assert!(
        !d.join(".tfrec-dead01.partial").exists(),
        "the dead run's file is still there"
    );
    assert!(
        err.contains(".tfrec-dead01.partial") && err.contains("did not finish"),
        "{err}"
    );
    assert!(
        d.join(".tfrec-live01.partial").exists(),
        "a live run's file was removed"
    );
    drop(live);
}

/// Issue 54's reproduction: `shard` killed mid-run leaves a lock and temporary shards in the
/// directory; the next `shard -o d --overwrite` refused ("holds d/.tfrec-….partial, which this
/// command did not write"). A second run while a live one holds the lock is still refused.
#[test]
fn a_dead_shard_runs_debris_does_not_block_the_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), 100);
    let out_dir = d.join("d");
    fs::create_dir(&out_dir).expect("mkdir");
    // A dead run's debris, as `kill -9` leaves it: the lock file and temporary shards.
    fs::write(out_dir.join(".tfrec-lock"), b"").expect("lock file");
    for name in [".tfrec-a1b2c3.partial", ".tfrec-d4e5f6.partial"] {
        fs::write(out_dir.join(name), b"partial shard").expect("debris");
    }
    for args in [
        &["shard", "in.tfrecord", "-o", "d", "--shards", "4", "--overwrite"][..],
        &["shard", "in.tfrecord", "-o", "d", "--shards", "4", "--overwrite"][..],
    ] {
        let out = tfrec_in(d, args);
        expect_code(&out, 0, "shard into a directory with a dead run's debris");
    }
    let mut left: Vec<String> = fs::read_dir(&out_dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "part-00000-of-00004.tfrecord",
            "part-00001-of-00004.tfrecord",
            "part-00002-of-00004.tfrecord",
            "part-00003-of-00004.tfrecord"
        ]
    );
    // A live run's claim still refuses a second run.
    let lock = fs::File::create(out_dir.join(".tfrec-lock")).expect("lock file");
    lock.lock().expect("lock");
    let out = tfrec_in(d, &["shard", "in.tfrecord", "-o", "d", "--shards", "4", "--overwrite"]);
    expect_code(&out, 2, "a second run while one holds the directory");
    assert!(
        text(&out.stderr).contains("another run is writing"),
        "{}",
        text(&out.stderr)
    );
    drop(lock);
}

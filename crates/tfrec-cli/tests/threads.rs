//! One file on many threads: `count`, `verify` and `convert` give the same bytes out with 1, 2
//! and 3 threads, on a plain file with and without its `.idx`, a GZIP file with its seek index,
//! and damaged plain files (where the sequential reader takes over and reports, or skips, the
//! damage as it always does). A span that overlapped another or skipped records would change
//! the counts, the converted rows or the offsets in the reports.

mod common;

use std::path::{Path, PathBuf};

use common::{expect_code, text, tfrec_in};
use tfrec::example::Example;
use tfrec::record::{Compression, RecordWriter, WriterOptions};

/// Records of sizes from a few bytes to over a MiB (a span of a plain file holds about a
/// MiB), so that spans end inside and between records.
fn records() -> Vec<Vec<u8>> {
    let mut rng = tfrec::rng::SplitMix64::new(58);
    (0..3000)
        .map(|i| {
            let len = match rng.below(200) {
                0 => (1 << 20) + rng.below(4000),
                1..=40 => rng.below(12_000),
                _ => rng.below(400),
            };
            let blob: Vec<u8> = (0..len).map(|k| (i * 7 + k) as u8).collect();
            Example::builder()
                .int64("id", i as i64)
                .bytes("blob", blob)
                .float("score", [i as f32 * 0.5])
                .build()
                .expect("example")
                .encode()
        })
        .collect()
}

fn write(path: &Path, records: &[Vec<u8>], compression: Compression) {
    let mut w = RecordWriter::create(path, WriterOptions::default().compression(compression)).expect("create");
    for r in records {
        w.write_record(r).expect("write");
    }
    w.finish().expect("finish");
}

/// Where the frame of record `i` starts in a plain file of `records`.
fn frame_at(records: &[Vec<u8>], i: usize) -> usize {
    records[..i].iter().map(|r| r.len() + 16).sum()
}

struct Files {
    dir: tempfile::TempDir,
    names: Vec<&'static str>,
}

fn files() -> Files {
    let dir = tempfile::tempdir().expect("temp dir");
    let records = records();
    let d = dir.path();
    write(&d.join("indexed.tfrecord"), &records, Compression::None);
    write(&d.join("scanned.tfrecord"), &records, Compression::None);
    write(&d.join("indexed.tfrecord.gz"), &records, Compression::Gzip);
    let out = tfrec_in(
        d,
        &[
            "index",
            "indexed.tfrecord",
            "indexed.tfrecord.gz",
            "--spacing",
            "200000",
        ],
    );
    expect_code(&out, 0, "index");
    assert!(d.join("indexed.tfrecord.idx").exists() && d.join("indexed.tfrecord.gz.zidx").exists());
    let plain = std::fs::read(d.join("scanned.tfrecord")).expect("read");
    // A bad data byte two thirds in, a bad length byte in a later header, a cut-off tail.
    let mut damaged = plain.clone();
    damaged[frame_at(&records, 2000) + 30] ^= 0x10;
    damaged[frame_at(&records, 2600) + 2] ^= 0x01;
    damaged.truncate(damaged.len() - 9);
    std::fs::write(d.join("damaged.tfrecord"), damaged).expect("write");
    // Damage in the first span and a header whose length runs past the end of the file.
    let mut early = plain;
    early[frame_at(&records, 3) + 20] ^= 0x04;
    let last = frame_at(&records, records.len() - 1);
    early[last..last + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(d.join("early.tfrecord"), early).expect("write");
    Files {
        dir,
        names: vec![
            "indexed.tfrecord",
            "scanned.tfrecord",
            "indexed.tfrecord.gz",
            "damaged.tfrecord",
            "early.tfrecord",
        ],
    }
}

/// Status, stdout and stderr of `tfrec args` in `dir`.
fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = tfrec_in(dir, args);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// Runs `args` followed by `--threads N` for N in 1, 2, 3 and checks every run gives what
/// one thread gives; returns that.
fn same_for_every_thread_count(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let with = |n: &str| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--threads", n]);
        run(dir, &all)
    };
    let one = with("1");
    for n in ["2", "3"] {
        assert_eq!(with(n), one, "tfrec {} --threads {n}", args.join(" "));
    }
    one
}

#[test]
fn count_and_verify_are_the_same_whatever_the_threads() {
    let files = files();
    let dir = files.dir.path();
    for name in &files.names {
        for extra in [&[][..], &["--json"], &["--skip-corrupt"], &["--skip-corrupt", "--json"]] {
            let mut args = vec!["count", *name];
            args.extend(extra);
            let (code, out, _) = same_for_every_thread_count(dir, &args);
            if name.starts_with("indexed") || *name == "scanned.tfrecord" {
                assert_eq!(code, Some(0), "{args:?}");
                assert!(out.contains("3000"), "{args:?}: {out}");
            } else {
                assert_eq!(
                    code,
                    Some(if extra.contains(&"--skip-corrupt") { 0 } else { 1 }),
                    "{args:?}"
                );
            }
        }
        for extra in [&[][..], &["--json"]] {
            let mut args = vec!["verify", *name];
            args.extend(extra);
            let (code, out, _) = same_for_every_thread_count(dir, &args);
            let damaged = !(name.starts_with("indexed") || *name == "scanned.tfrecord");
            assert_eq!(code, Some(if damaged { 1 } else { 0 }), "{args:?}: {out}");
        }
    }
    // The damage is found where it is: the data CRC of record 2000, the length of 2600.
    let (_, out, _) = run(dir, &["verify", "damaged.tfrecord", "--json", "--threads", "2"]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let problems = report["files"][0]["problems"].as_array().expect("problems").clone();
    assert_eq!(problems.len(), 3, "{out}");
    assert_eq!(problems[0]["record_index"], 2000, "{out}");
}

#[test]
fn convert_writes_the_same_bytes_whatever_the_threads() {
    let files = files();
    let dir = files.dir.path();
    for name in &files.names {
        for (to, skip) in [("jsonl", false), ("parquet", false), ("jsonl", true)] {
            let mut outputs: Vec<(Option<i32>, String, Option<Vec<u8>>)> = Vec::new();
            for threads in ["1", "2", "3"] {
                let output: PathBuf = dir.join(format!("out-{threads}.{to}"));
                let _ = std::fs::remove_file(&output);
                let output_str = output.to_str().expect("utf-8 path").to_string();
                let mut args = vec!["convert", *name, "-o", &output_str, "--threads", threads];
                if skip {
                    args.push("--skip-corrupt");
                }
                let (code, _, err) = run(dir, &args);
                // The output file, if any, is the same; so is what is said of the damage.
                let err = err.replace(&output_str, "OUT");
                outputs.push((code, err, std::fs::read(&output).ok()));
            }
            assert!(
                outputs.iter().all(|o| *o == outputs[0]),
                "{name} to {to} (skip {skip}): {:?}",
                outputs.iter().map(|o| (o.0, &o.1)).collect::<Vec<_>>()
            );
            let clean = name.starts_with("indexed") || *name == "scanned.tfrecord";
            if clean || skip {
                assert_eq!(outputs[0].0, Some(0), "{name} to {to}: {}", outputs[0].1);
            } else {
                assert_eq!(outputs[0].0, Some(1), "{name} to {to}: {}", outputs[0].1);
            }
        }
    }
}

//! `tfrec stats` (issue 55) on data of several shapes generated from a seed: two threads
//! against one on the same file, as whole processes, and the files for the TFDV comparison
//! (`python/bench/bench_stats_tfdv.py`, which runs TFDV's `generate_statistics_from_tfrecord`
//! and `tfrec stats --threads 1` on them, pinned to one core).
//!
//! Shapes (one file each):
//! - `wide48`: 48 features of every kind: 16 int64 (scalars, some missing, and short lists), 16
//!   float (scalars with NaN now and then, and short lists), 16 bytes (categories of 5 to
//!   10,000 values, free text, and ids unique per record);
//! - `narrow`: a label, 0-5 int64 ids, 3 float weights, 0-3 short tags;
//! - `strings`: 12 bytes features, lists of 1-8 values of 2-40 bytes, cardinalities from 3 to
//!   one per value;
//! - `sequence`: SequenceExamples (read with `--kind sequence`): 6 context features of every
//!   kind, and 6 feature lists of 5 to 40 steps (int64 ids, float dwell times, bytes terms).
//!
//! `cargo bench -p tfrec-cli --bench stats`. `TFREC_BENCH_SCALE=0.05` for a small run (each file
//! is about 200 MB at scale 1), `TFREC_BENCH_ROUNDS` (default 3), `TFREC_BENCH_DIR=dir` writes
//! (and keeps) the files there, `TFREC_BENCH_WRITE_ONLY=1` only writes them, `TFREC_BENCH_SEED`
//! (default 55), `TFREC_BIN` the `tfrec` binary (default: the one cargo builds with this
//! benchmark). Each row is the median of its rounds, the two thread counts run in turn.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use data::Rng;
use tfrec::example::{Example, Feature, SequenceExample};

/// Bytes of records each file holds at scale 1.
const FILE_BYTES: f64 = 200e6;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Lowercase letters, `min` to `min + spread - 1` of them.
fn word(rng: &mut Rng, min: u64, spread: u64) -> Vec<u8> {
    let len = min + rng.below(spread);
    (0..len).map(|_| b'a' + rng.below(26) as u8).collect()
}

/// A category out of `n`, skewed (the square of a uniform draw) as real categories are.
fn category(rng: &mut Rng, n: u64) -> Vec<u8> {
    let u = rng.below(1 << 20) as f64 / f64::from(1 << 20);
    format!("cat{}", ((u * u) * n as f64) as u64).into_bytes()
}

fn wide48(rng: &mut Rng, row: u64) -> Vec<u8> {
    let mut ex = Example::default();
    let f = ex.features_mut();
    for i in 0..16u64 {
        if i % 4 == 3 && rng.below(10) == 0 {
            continue;
        }
        let values = if i < 10 {
            vec![rng.below(1 << (4 * (i % 8) + 2)) as i64 - 3]
        } else {
            (0..rng.below(6)).map(|_| rng.below(100_000) as i64).collect()
        };
        f.insert(format!("int_{i:02}"), Feature::Int64(values));
    }
    for i in 0..16u64 {
        if i % 4 == 1 && rng.below(8) == 0 {
            continue;
        }
        let values = if i < 10 {
            let v = rng.float() * 10f32.powi(i as i32 % 5);
            vec![if i == 9 && rng.below(50) == 0 { f32::NAN } else { v }]
        } else {
            (0..rng.below(5)).map(|_| rng.float()).collect()
        };
        f.insert(format!("float_{i:02}"), Feature::Float(values));
    }
    for i in 0..16u64 {
        if i % 4 == 2 && rng.below(12) == 0 {
            continue;
        }
        let values = match i {
            0..=9 => vec![category(rng, [5, 20, 100, 1000, 10_000][i as usize % 5])],
            10..=13 => (0..1 + rng.below(3)).map(|_| word(rng, 3, 8)).collect(),
            _ => vec![format!("id-{row:012}-{i}").into_bytes()],
        };
        f.insert(format!("bytes_{i:02}"), Feature::Bytes(values));
    }
    ex.encode()
}

fn narrow(rng: &mut Rng, _row: u64) -> Vec<u8> {
    let mut ex = Example::default();
    let f = ex.features_mut();
    f.insert("label", Feature::Int64(vec![rng.below(2) as i64]));
    f.insert(
        "ids",
        Feature::Int64((0..rng.below(6)).map(|_| rng.below(1_000_000) as i64).collect()),
    );
    f.insert("weights", Feature::Float((0..3).map(|_| rng.float()).collect()));
    f.insert(
        "tags",
        Feature::Bytes((0..rng.below(4)).map(|_| word(rng, 2, 5)).collect()),
    );
    ex.encode()
}

fn strings(rng: &mut Rng, row: u64) -> Vec<u8> {
    let mut ex = Example::default();
    let f = ex.features_mut();
    for i in 0..12u64 {
        let n = 1 + rng.below(8);
        let values = (0..n)
            .map(|k| match i % 4 {
                0 => category(rng, 3 + 100 * i),
                1 => word(rng, 2, 39),
                2 => format!("{row}-{k}").into_bytes(),
                _ => category(rng, 50_000),
            })
            .collect();
        f.insert(format!("s{i:02}"), Feature::Bytes(values));
    }
    ex.encode()
}

fn sequence(rng: &mut Rng, row: u64) -> Vec<u8> {
    let steps = 5 + rng.below(36) as usize;
    let mut b = SequenceExample::builder()
        .context_int64("user", [rng.below(1_000_000) as i64])
        .context_int64("label", [rng.below(2) as i64])
        .context_float("score", [rng.float()])
        .context_float("embedding", (0..4).map(|_| rng.float()).collect::<Vec<_>>())
        .context_bytes("country", [category(rng, 200)])
        .context_bytes("id", [format!("seq-{row:012}").into_bytes()]);
    let ids: Vec<Vec<i64>> = (0..steps)
        .map(|_| (0..1 + rng.below(3)).map(|_| rng.below(100_000) as i64).collect())
        .collect();
    let positions: Vec<Vec<i64>> = (0..steps as i64).map(|s| vec![s]).collect();
    let dwell: Vec<Vec<f32>> = (0..steps).map(|_| vec![rng.float() * 60.0]).collect();
    let scores: Vec<Vec<f32>> = (0..steps)
        .map(|_| (0..rng.below(3)).map(|_| rng.float()).collect())
        .collect();
    let terms: Vec<Vec<Vec<u8>>> = (0..steps)
        .map(|_| (0..1 + rng.below(4)).map(|_| category(rng, 5_000)).collect())
        .collect();
    let pages: Vec<Vec<Vec<u8>>> = (0..steps).map(|_| vec![category(rng, 50)]).collect();
    b = b
        .int64_list("item_ids", ids)
        .int64_list("position", positions)
        .float_list("dwell", dwell)
        .float_list("scores", scores)
        .bytes_list("terms", terms)
        .bytes_list("page", pages);
    b.build().expect("a SequenceExample of the bench's shape").encode()
}

type Shape = (&'static str, fn(&mut Rng, u64) -> Vec<u8>, &'static [&'static str]);

/// The shapes, each with the `tfrec stats` arguments that read it.
const SHAPES: [Shape; 4] = [
    ("wide48", wide48, &[]),
    ("narrow", narrow, &[]),
    ("strings", strings, &[]),
    ("sequence", sequence, &["--kind", "sequence"]),
];

/// Writes `bytes` of `shape`'s records to `path` (from `seed`); returns the record count.
fn write_shape(path: &Path, shape: fn(&mut Rng, u64) -> Vec<u8>, seed: u64, bytes: u64) -> u64 {
    let mut rng = Rng::new(seed);
    let mut written = 0u64;
    let mut row = 0u64;
    let records = std::iter::from_fn(|| {
        (written < bytes).then(|| {
            let record = shape(&mut rng, row);
            written += record.len() as u64 + 16;
            row += 1;
            record
        })
    });
    data::write(path, records).0
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let scale = data::scale();
    let rounds: usize = env_or("TFREC_BENCH_ROUNDS", 3);
    let seed: u64 = env_or("TFREC_BENCH_SEED", 55);
    let (dir, keep) = match std::env::var_os("TFREC_BENCH_DIR") {
        Some(d) => (PathBuf::from(d), true),
        None => (
            std::env::temp_dir().join(format!("tfrec-bench-stats-{}", std::process::id())),
            false,
        ),
    };
    std::fs::create_dir_all(&dir).expect("bench dir");
    let bytes = (FILE_BYTES * scale) as u64;
    let mut files = Vec::new();
    for (k, (name, shape, args)) in SHAPES.iter().enumerate() {
        let path = dir.join(format!("{name}.tfrecord"));
        let records = write_shape(&path, *shape, seed + k as u64, bytes);
        println!("{name}: {records} records, {} MB", bytes / 1_000_000);
        files.push((*name, path, *args));
    }
    if std::env::var_os("TFREC_BENCH_WRITE_ONLY").is_some() {
        return;
    }
    let bin = std::env::var_os("TFREC_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tfrec")));
    let run = |path: &Path, args: &[&str], threads: usize| {
        let out = dir.join("stats.pb");
        let t = Instant::now();
        let status = Command::new(&bin)
            .args(["stats", "--threads", &threads.to_string()])
            .args(args)
            .arg("-o")
            .arg(&out)
            .arg(path)
            .status()
            .expect("run tfrec");
        assert!(status.success(), "tfrec stats failed on {}", path.display());
        let elapsed = t.elapsed();
        (elapsed, std::fs::read(&out).expect("stats written"))
    };
    println!(
        "{:<10} {:>12} {:>12} {:>9} {:>11}",
        "shape", "1 thread", "2 threads", "2 vs 1", "same bytes"
    );
    let mut worst = f64::INFINITY;
    for (name, path, args) in &files {
        let (mut one, mut two) = (Vec::new(), Vec::new());
        let mut same = true;
        for _ in 0..rounds {
            let (t1, s1) = run(path, args, 1);
            let (t2, s2) = run(path, args, 2);
            same &= s1 == s2;
            one.push(t1);
            two.push(t2);
        }
        let (one, two) = (median(one), median(two));
        let ratio = one.as_secs_f64() / two.as_secs_f64();
        worst = worst.min(ratio);
        println!(
            "{name:<10} {:>10.3} s {:>10.3} s {ratio:>8.2}× {same:>11}",
            one.as_secs_f64(),
            two.as_secs_f64()
        );
    }
    println!("minimum over shapes, 2 threads vs 1: {worst:.2}×");
    if !keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

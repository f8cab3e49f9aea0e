//! `tfrec count FILE.gz` against `igzip -dc FILE.gz > /dev/null` (ISA-L, Debian's `isal`), both
//! pinned to one core, on GZIP files of four shapes written from seeds (about 100 MB of records
//! each at scale 1): short Examples of about 60 bytes, Examples of about 10 KB, wide Examples
//! and SequenceExamples. igzip is the fastest inflater here, so its time is what reading a GZIP
//! TFRecord can cost at best; tfrec's count also frames every record and checks both its CRCs
//! and the gzip trailer's CRC-32.
//!
//! `cargo bench -p tfrec-cli --bench gzip_count`. Per shape, the median over
//! `TFREC_BENCH_ROUNDS` (default 5) rounds run in turn of each command's CPU seconds (user +
//! system of the child), and the ratio igzip's time / tfrec's (1 is as fast as ISA-L); then the
//! minimum ratio over the shapes. `TFREC_BENCH_SCALE` scales the files, `TFREC_BENCH_DIR=dir`
//! keeps them there (and reuses those already written), `TFREC_BIN` names the `tfrec` binary to
//! time (default: the one cargo builds with this benchmark), `TFREC_BENCH_ROUNDS=0` only writes
//! the files.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use data::children_cpu;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tfrec::example::{Example, Feature};
use tfrec::record::{Compression, RecordWriter, WriterOptions};

/// CPU seconds of one run of `program args` on CPU 0 (its output thrown away).
fn cpu_seconds(program: &Path, args: &[&str]) -> f64 {
    let before = children_cpu();
    let status = Command::new("taskset")
        .args(["-c", "0"])
        .arg(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("taskset {}: {e}", program.display()));
    assert!(status.success(), "{} {args:?} failed", program.display());
    children_cpu() - before
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Examples of one float list of 2,500 values from a thousand (about 10 KB encoded, and
/// compressible as measurements are), with a label.
fn ten_kb(n: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut rng = data::Rng::new(5);
    (0..n).map(move |_| {
        let mut ex = Example::default();
        let f = ex.features_mut();
        f.insert("label".to_owned(), Feature::Int64(vec![rng.below(10) as i64]));
        let values = (0..2500).map(|_| rng.below(1000) as f32 / 1000.0).collect();
        f.insert("values".to_owned(), Feature::Float(values));
        ex.encode()
    })
}

/// A shape's records, drawn as they are written.
type Records = Box<dyn Iterator<Item = Vec<u8>>>;

/// Writes `records` as a GZIP TFRecord file at `path` (as TensorFlow's `GZIP` option does),
/// unless `reuse` and it is there already.
fn write_gzip(path: &Path, reuse: bool, records: impl Iterator<Item = Vec<u8>>) {
    if reuse && path.exists() {
        return;
    }
    let options = WriterOptions::default().compression(Compression::Gzip);
    let mut writer = RecordWriter::create(path, options).expect("create");
    for record in records {
        writer.write_record(&record).expect("write");
    }
    writer.finish().expect("finish");
}

fn main() {
    let temp = tempfile::tempdir().expect("temp dir");
    let kept = std::env::var_os("TFREC_BENCH_DIR").map(PathBuf::from);
    let dir = kept.clone().unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&dir).expect("bench dir");
    let rounds = std::env::var("TFREC_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5usize);
    let bin = std::env::var_os("TFREC_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tfrec")), PathBuf::from);
    let igzip = Path::new("/usr/bin/igzip");
    let scale = data::scale();
    let n = |at_scale_1: f64| (at_scale_1 * scale) as usize;
    let shapes: [(&str, Records); 4] = [
        ("small", Box::new(data::short_lists(n(1_600_000.0)))),
        ("10kb", Box::new(ten_kb(n(10_000.0)))),
        ("wide", Box::new(data::wide(n(110_000.0)))),
        ("sequences", Box::new(data::sequences(n(60_000.0)))),
    ];
    let mut worst = f64::INFINITY;
    for (name, records) in shapes {
        let file = dir.join(format!("{name}.tfrecord.gz"));
        write_gzip(&file, kept.is_some(), records);
        if rounds == 0 {
            continue;
        }
        if !igzip.exists() {
            println!("{name}: no {} (apt-get install isal)", igzip.display());
            continue;
        }
        let file = file.to_string_lossy().into_owned();
        let (mut tfrec, mut isal) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            tfrec.push(cpu_seconds(&bin, &["count", &file]));
            isal.push(cpu_seconds(igzip, &["-dc", &file]));
        }
        let (tfrec, isal) = (median(tfrec), median(isal));
        let ratio = isal / tfrec;
        worst = worst.min(ratio);
        let mb = std::fs::metadata(&file).map_or(0.0, |m| m.len() as f64 / 1e6);
        println!(
            "{name:>10} ({mb:.0} MB gzip): tfrec count {tfrec:.3} s, igzip -dc {isal:.3} s: {ratio:.2}x igzip's speed"
        );
    }
    if worst.is_finite() {
        println!("minimum over the shapes: {worst:.2}x");
    }
}

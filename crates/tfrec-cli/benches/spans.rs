//! One file on every core (issue 58): whole `tfrec` processes on one GZIP file and one plain
//! file of each shape, with their indexes beside them.
//!
//! ```text
//! cargo bench -p tfrec-cli --bench spans
//! TFREC_BENCH_SCALE=0.1 TFREC_BENCH_ROUNDS=1 cargo bench -p tfrec-cli --bench spans   # smoke run
//! ```
//!
//! Data: wide Examples and SequenceExamples from the benchmarks' seeded generators
//! (`data::wide`, `data::sequences`), about 100 MB of records each at scale 1, written plain
//! (`SHAPE.tfrecord` with `SHAPE.tfrecord.idx`) and GZIP (`SHAPE.tfrecord.gz` with its seek
//! index `SHAPE.tfrecord.gz.zidx`, default spacing). Rows, each the median of
//! `TFREC_BENCH_ROUNDS` (default 3) rounds run in turn, wall and CPU seconds of the child:
//! - the index's size as a share of its file;
//! - `tfrec count FILE.gz` against `igzip -dc FILE.gz > /dev/null` (Debian's `isal`), one core
//!   each: the ratio igzip's time / tfrec's (1 is as fast as ISA-L);
//! - `tfrec count --threads 2` against `--threads 1` on the indexed files;
//! - `tfrec parse --format none --threads 2` against `--threads 1`, on the GZIP file and the
//!   plain file: the speed-up and the CPU time of two threads as a share of one's.
//!
//! Random reads of an indexed GZIP file against sequential reading are `--bench seek_index`.
//! `TFREC_BENCH_DIR=dir` keeps the generated files there; `TFREC_BIN` the `tfrec` binary to
//! time (default: the one cargo builds with this benchmark). The machine should be quiet: the
//! two-thread rows measure what a second core gives.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use data::children_cpu;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use tfrec::record::{Compression, RecordIndex, RecordWriter, SeekIndex, WriterOptions, DEFAULT_SPACING};

/// Wall and CPU seconds of one run of `program args` (its output thrown away).
fn run(program: &Path, args: &[&str]) -> (f64, f64) {
    let cpu = children_cpu();
    let t = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let wall = t.elapsed().as_secs_f64();
    assert!(status.success(), "{} {args:?} failed", program.display());
    (wall, children_cpu() - cpu)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Runs each command `rounds` times in turn; the median wall and CPU seconds of each.
fn compare(rounds: usize, commands: &[(&Path, Vec<&str>)]) -> Vec<(f64, f64)> {
    let mut times = vec![(Vec::new(), Vec::new()); commands.len()];
    for _ in 0..rounds {
        for (k, (program, args)) in commands.iter().enumerate() {
            let (wall, cpu) = run(program, args);
            times[k].0.push(wall);
            times[k].1.push(cpu);
        }
    }
    times.into_iter().map(|(w, c)| (median(w), median(c))).collect()
}

/// Writes `records` plain and GZIP with their indexes; the two paths.
fn write_shape(dir: &Path, name: &str, records: impl Iterator<Item = Vec<u8>>) -> (PathBuf, PathBuf) {
    let plain = dir.join(format!("{name}.tfrecord"));
    let gzip = dir.join(format!("{name}.tfrecord.gz"));
    let mut p = RecordWriter::create(&plain, WriterOptions::default()).expect("create");
    let mut g = RecordWriter::create(&gzip, WriterOptions::default().compression(Compression::Gzip)).expect("create");
    for r in records {
        p.write_record(&r).expect("write");
        g.write_record(&r).expect("write");
    }
    p.finish().expect("finish");
    g.finish().expect("finish");
    RecordIndex::build(&plain)
        .expect("index")
        .save(RecordIndex::default_path(&plain))
        .expect("save");
    SeekIndex::build(&gzip, Compression::Gzip, DEFAULT_SPACING)
        .expect("seek index")
        .save(&SeekIndex::default_path(&gzip))
        .expect("save");
    (plain, gzip)
}

fn main() {
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = std::env::var_os("TFREC_BENCH_DIR").map_or_else(|| temp.path().to_path_buf(), PathBuf::from);
    std::fs::create_dir_all(&dir).expect("bench dir");
    let rounds = std::env::var("TFREC_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3usize);
    let bin = std::env::var_os("TFREC_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tfrec")), PathBuf::from);
    let igzip = Path::new("/usr/bin/igzip");
    let scale = data::scale();
    // About 100 MB of records each at scale 1.
    let shapes = [
        ("wide", (110_000.0 * scale) as usize, true),
        ("sequences", (60_000.0 * scale) as usize, false),
    ];
    for (name, n, wide) in shapes {
        let records: Box<dyn Iterator<Item = Vec<u8>>> = if wide {
            Box::new(data::wide(n))
        } else {
            Box::new(data::sequences(n))
        };
        let (plain, gzip) = write_shape(&dir, name, records);
        let spec = dir.join(format!("{name}.spec.json"));
        let spec_json = if wide {
            tfrec::parse::specs_to_json_string(&data::wide_spec())
        } else {
            data::sequence_spec().to_json_string()
        };
        std::fs::write(&spec, spec_json).expect("spec");
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        println!(
            "{name}: {n} records, plain {:.1} MB, GZIP {:.1} MB; index {:.3}% of the plain file, seek index {:.3}% of the GZIP file",
            size(&plain) as f64 / 1e6,
            size(&gzip) as f64 / 1e6,
            100.0 * size(&RecordIndex::default_path(&plain)) as f64 / size(&plain) as f64,
            100.0 * size(&SeekIndex::default_path(&gzip)) as f64 / size(&gzip) as f64,
        );
        let (plain, gzip, spec) = (
            plain.to_string_lossy().into_owned(),
            gzip.to_string_lossy().into_owned(),
            spec.to_string_lossy().into_owned(),
        );
        if igzip.exists() {
            let t = compare(rounds, &[(&bin, vec!["count", &gzip]), (igzip, vec!["-dc", &gzip])]);
            println!(
                "  count GZIP {:.3} s, igzip -dc {:.3} s: tfrec at {:.2}x igzip's speed",
                t[0].0,
                t[1].0,
                t[1].0 / t[0].0
            );
        }
        for (what, file) in [("GZIP", &gzip), ("plain", &plain)] {
            let count = |threads: &'static str| (bin.as_path(), vec!["count", "--threads", threads, file.as_str()]);
            let t = compare(rounds, &[count("1"), count("2")]);
            row(&format!("count {what}"), &t);
            let parse = |threads: &'static str| {
                (
                    bin.as_path(),
                    vec![
                        "parse",
                        "--spec",
                        spec.as_str(),
                        "--format",
                        "none",
                        "--threads",
                        threads,
                        file.as_str(),
                    ],
                )
            };
            let t = compare(rounds, &[parse("1"), parse("2")]);
            row(&format!("parse {what}"), &t);
        }
    }
}

/// A two-thread row: one thread's and two threads' wall and CPU, the speed-up and the CPU share.
fn row(what: &str, t: &[(f64, f64)]) {
    println!(
        "  {what}: 1 thread {:.3} s ({:.3} s CPU), 2 threads {:.3} s ({:.3} s CPU): {:.2}x, CPU {:.2}x",
        t[0].0,
        t[0].1,
        t[1].0,
        t[1].1,
        t[0].0 / t[1].0,
        t[1].1 / t[0].1.max(1e-9)
    );
}

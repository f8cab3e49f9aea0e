//! Issue 14's whole table from one run: for the notebook, ctr and seq data sets, the `tfrec`
//! command line (`parse --format none` and `--format npz`) and the pipeline (1 and 2 workers)
//! from files, each as a ratio to the library's own parse of the same batches in memory on one
//! thread; then GZIP read against plain read of the same records. Two rows measure the machine
//! rather than tfrec: the in-memory parse on two threads (what two cores give here with nothing
//! shared, the ceiling for two workers), and writing and syncing as many bytes as the npz
//! output has (the least any output of that size costs on this disk).
//!
//! `cargo bench -p tfrec-cli --bench table`. `TFREC_BENCH_SCALE=0.05` for a small run (CI),
//! `TFREC_BENCH_ROUNDS` (default 3) rounds, `TFREC_BENCH_DIR=dir` keeps the generated files there
//! (for profiling), `TFREC_BIN` the `tfrec` binary to time (default: the one cargo builds with
//! this benchmark, in the same profile). Configurations are run in turn, round after round, and
//! each row is the median of its rounds: the machine is shared and noisy.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tfrec::parse::{ExampleParser, FeatureSpecs, SequenceParser, SequenceSpecs};
use tfrec::pipeline::Dataset;
use tfrec::record::{Compression, ReaderOptions, RecordReader, WriterOptions};

// As the command line does: the application picks the allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCH: usize = 1024;

enum Specs {
    Example(FeatureSpecs),
    Sequence(SequenceSpecs),
}

struct Set {
    name: &'static str,
    records: Vec<Vec<u8>>,
    specs: Specs,
    plain: PathBuf,
    gzip: PathBuf,
    spec_file: PathBuf,
}

fn spec_json(which: &str) -> serde_json::Value {
    let scalar = |dtype: &str| serde_json::json!({"type": "FixedLenFeature", "shape": [], "dtype": dtype});
    let mut m = serde_json::Map::new();
    match which {
        "notebook" => {
            m.insert("feature0".into(), scalar("int64"));
            m.insert("feature1".into(), scalar("int64"));
            m.insert("feature2".into(), scalar("string"));
            m.insert("feature3".into(), scalar("float32"));
        }
        "ctr" => {
            for i in 0..30 {
                m.insert(format!("i{i}"), scalar("int64"));
            }
            for i in 0..10 {
                m.insert(format!("f{i}"), scalar("float32"));
            }
            for i in 0..5 {
                m.insert(
                    format!("l{i}"),
                    serde_json::json!({"type": "VarLenFeature", "dtype": "int64"}),
                );
            }
            for i in 0..3 {
                m.insert(format!("s{i}"), scalar("string"));
            }
        }
        _ => {
            return serde_json::json!({
                "sequence_features": {
                    "x": {"type": "FixedLenSequenceFeature", "shape": [8], "dtype": "float32", "allow_missing": true},
                    "y": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
                }
            })
        }
    }
    serde_json::Value::Object(m)
}

fn make_set(dir: &Path, name: &'static str, records: Vec<Vec<u8>>, specs: Specs) -> Set {
    let plain = dir.join(format!("{name}.tfrecord"));
    let gzip = dir.join(format!("{name}.tfrecord.gz"));
    data::write(&plain, records.iter().cloned());
    let mut w = tfrec::record::RecordWriter::create(&gzip, WriterOptions::default().compression(Compression::Gzip))
        .expect("create");
    for r in &records {
        w.write_record(r).expect("write");
    }
    w.finish().expect("finish");
    // The command line reads the same spec as the library is given, from a file.
    let spec_file = dir.join(format!("{name}.spec.json"));
    std::fs::write(&spec_file, spec_json(name).to_string()).expect("spec file");
    Set {
        name,
        records,
        specs,
        plain,
        gzip,
        spec_file,
    }
}

fn timed(f: &mut dyn FnMut()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn read_all(path: &Path) -> u64 {
    let mut reader = RecordReader::open(path, ReaderOptions::default()).expect("open");
    let mut n = 0;
    while let Some(r) = reader.next_record().expect("valid") {
        std::hint::black_box(r);
        n += 1;
    }
    n
}

/// Writes `bytes` zero bytes to `path` in 1 MiB writes and syncs them: the least any output of
/// that size costs on this disk, whatever makes it.
fn write_and_sync(path: &Path, bytes: u64) {
    use std::io::Write;
    let mut file = std::fs::File::create(path).expect("create");
    let block = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n]).expect("write");
        left -= n as u64;
    }
    file.sync_all().expect("sync");
    drop(file);
    let _ = std::fs::remove_file(path);
}

fn cli(bin: &Path, set: &Set, format: &str, out: &Path) {
    let mut cmd = Command::new(bin);
    cmd.args([
        "parse",
        "--threads",
        "1",
        "--batch",
        "1024",
        "--format",
        format,
        "--spec",
    ])
    .arg(&set.spec_file)
    .arg(&set.plain);
    if format == "npz" {
        cmd.arg("-o").arg(out);
    }
    let status = cmd.status().expect("run tfrec");
    assert!(status.success(), "tfrec parse failed: {status}");
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let scale = data::scale();
    let rounds: usize = std::env::var("TFREC_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let n = |full: f64| ((full * scale) as usize).max(2 * BATCH);
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = std::env::var_os("TFREC_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&dir).expect("bench dir");
    let bin = std::env::var_os("TFREC_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tfrec")));
    let bin = bin.exists().then_some(bin);

    let sets = [
        make_set(
            &dir,
            "notebook",
            data::notebook(n(1_000_000.0)).collect(),
            Specs::Example(data::notebook_spec()),
        ),
        make_set(
            &dir,
            "ctr",
            data::wide(n(200_000.0)).collect(),
            Specs::Example(data::wide_spec()),
        ),
        make_set(
            &dir,
            "seq",
            data::sequences(n(50_000.0)).collect(),
            Specs::Sequence(data::sequence_spec()),
        ),
    ];
    let out = dir.join("out.npz");

    println!("\ntfrec performance table (issue 14), median of {rounds} rounds, batches of {BATCH}");
    println!("(two-thread rows: median over rounds of the ratio to the one-thread row of the same round)");
    match &bin {
        Some(b) => println!("command line: {}", b.display()),
        None => println!("command line: TFREC_BIN names no file, rows left out"),
    }
    for set in &sets {
        let batches: Vec<Vec<&[u8]>> = set
            .records
            .chunks(BATCH)
            .map(|c| c.iter().map(Vec::as_slice).collect())
            .collect();
        // Thread `t` of `threads` parses batches t, t + threads, …
        let parse_share = |t: usize, threads: usize| match &set.specs {
            Specs::Example(s) => {
                let p = ExampleParser::new(s).expect("spec");
                for b in batches.iter().skip(t).step_by(threads) {
                    std::hint::black_box(p.parse_batch(b).expect("parse"));
                }
            }
            Specs::Sequence(s) => {
                let p = SequenceParser::new(s).expect("spec");
                for b in batches.iter().skip(t).step_by(threads) {
                    std::hint::black_box(p.parse_batch(b).expect("parse"));
                }
            }
        };
        let mut in_memory = || parse_share(0, 1);
        // What two cores give with nothing shared but the allocator: the ceiling for the
        // two-worker pipeline on this machine.
        let mut in_memory_2 = || {
            std::thread::scope(|scope| {
                scope.spawn(|| parse_share(1, 2));
                parse_share(0, 2);
            })
        };
        let pipeline = |threads: usize| {
            let batched = Dataset::from_files(vec![set.plain.clone()])
                .batch(BATCH, false)
                .expect("batch size");
            match &set.specs {
                Specs::Example(s) => {
                    for b in batched
                        .parse_examples(s)
                        .expect("spec")
                        .threads(threads)
                        .prefetch(4)
                        .iter()
                    {
                        std::hint::black_box(b.expect("batch"));
                    }
                }
                Specs::Sequence(s) => {
                    for b in batched
                        .parse_sequences(s)
                        .expect("spec")
                        .threads(threads)
                        .prefetch(4)
                        .iter()
                    {
                        std::hint::black_box(b.expect("batch"));
                    }
                }
            }
        };
        let names = [
            "library parse in memory, 1 thread (baseline)",
            "library parse in memory, 2 threads",
            "tfrec parse --format none --threads 1",
            "tfrec parse --format npz --threads 1",
            "pipeline from file, 1 worker",
            "pipeline from file, 2 workers",
            "read only, plain file",
            "read only, GZIP file",
            "write + fsync of the npz's bytes alone",
        ];
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
        for _ in 0..rounds {
            times[0].push(timed(&mut in_memory));
            times[1].push(timed(&mut in_memory_2));
            if let Some(bin) = &bin {
                times[2].push(timed(&mut || cli(bin, set, "none", &out)));
                times[3].push(timed(&mut || cli(bin, set, "npz", &out)));
                let bytes = std::fs::metadata(&out).map_or(0, |m| m.len());
                let floor = dir.join("floor.bin");
                times[8].push(timed(&mut || write_and_sync(&floor, bytes)));
            }
            times[4].push(timed(&mut || pipeline(1)));
            times[5].push(timed(&mut || pipeline(2)));
            times[6].push(timed(&mut || {
                read_all(&set.plain);
            }));
            times[7].push(timed(&mut || {
                read_all(&set.gzip);
            }));
        }
        // The two-thread rows against their one-thread rows run just before them in the same
        // round: the median of those ratios drifts less than a ratio of medians when the
        // machine's second core comes and goes.
        let paired = |one: usize, two: usize| {
            let mut ratios: Vec<f64> = times[one]
                .iter()
                .zip(&times[two])
                .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
                .collect();
            ratios.sort_by(f64::total_cmp);
            ratios.get(ratios.len() / 2).copied().unwrap_or(0.0)
        };
        let (memory_two, pipeline_two) = (paired(0, 1), paired(4, 5));
        let medians: Vec<Duration> = times.into_iter().map(median).collect();
        let records = set.records.len() as f64;
        let rate = |d: Duration| records / d.as_secs_f64() / 1e6;
        println!("\n{}: {} records", set.name, set.records.len());
        for (i, name) in names.iter().enumerate() {
            let d = medians[i];
            if d.is_zero() {
                continue;
            }
            let vs = match i {
                0 => String::new(),
                7 => format!("  = {:.2}x plain read", medians[6].as_secs_f64() / d.as_secs_f64()),
                1 => format!("  = {memory_two:.2}x baseline (the machine's two-core ceiling)"),
                5 => format!(
                    "  = {:.2}x baseline, {pipeline_two:.2}x one worker",
                    medians[0].as_secs_f64() / d.as_secs_f64(),
                ),
                3 if !medians[2].is_zero() => format!(
                    "  = {:.2}x baseline, {:.2}x --format none",
                    medians[0].as_secs_f64() / d.as_secs_f64(),
                    medians[2].as_secs_f64() / d.as_secs_f64()
                ),
                8 => format!(
                    "; npz takes {:.0} ms more than none",
                    (medians[3].as_secs_f64() - medians[2].as_secs_f64()) * 1e3
                ),
                _ => format!("  = {:.2}x baseline", medians[0].as_secs_f64() / d.as_secs_f64()),
            };
            if i == 8 {
                println!("  {name:<46} {:>8.0} ms{vs}", d.as_secs_f64() * 1e3);
                continue;
            }
            println!("  {name:<46} {:>8.3} M rec/s{vs}", rate(d));
        }
    }
    let _ = std::fs::remove_file(&out);
}

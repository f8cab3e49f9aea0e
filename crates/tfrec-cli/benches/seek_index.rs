//! Random access to a GZIP file through its seek index, against reading it sequentially.
//!
//! `cargo bench -p tfrec-cli --bench seek_index` writes GZIP files of wide Examples packed into
//! records of about 10 KB and 100 KB, then for each:
//! - `sequential`: `RecordReader` returning every record (both CRCs checked);
//! - `every record in order`: `RecordFile::for_each_record_parallel` with one and two threads,
//!   on the indexed GZIP file and on a plain copy (ranges at record boundaries from its index);
//! - for the default checkpoint spacing and a quarter of it: building the seek index (one full
//!   read) and its size as a share of the file, then `RecordFile::get_into` of every record in
//!   a shuffled order through it, with the default cache (the process-wide byte budget, which
//!   holds these files' inflated records) and with a cache of a quarter of them (a file four
//!   times the budget); the figures are its throughput as a share of sequential reading's, by
//!   wall time and by the CPU time of this thread (steadier on a loaded machine), and the
//!   inflated bytes the cache held at the end.
//!
//! Set `TFREC_BENCH_SCALE=0.1` (for example) for a quick smoke run,
//! `TFREC_BENCH_RECORD_LENS=10,10000,1000000` for other record sizes (default 10000,100000),
//! `TFREC_BENCH_SEEDS=1,2,3` for other shuffles (default 7), `TFREC_BENCH_PARALLEL=0` to leave
//! out the parallel reads.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use std::path::Path;
use std::time::{Duration, Instant};

use tfrec::record::{
    Compression, ReaderOptions, RecordFile, RecordReader, RecordWriter, SeekIndex, WriterOptions, DEFAULT_SPACING,
};

/// Writes `bytes` inflated bytes of records of about `record_len`, each wide Examples one after
/// another (so the data compresses as real records do). Returns the record count.
fn write_gzip(path: &Path, bytes: usize, record_len: usize) -> usize {
    let mut w = RecordWriter::create(path, WriterOptions::default().compression(Compression::Gzip)).expect("create");
    let mut examples = data::wide(usize::MAX);
    let (mut written, mut records) = (0, 0);
    while written < bytes {
        let mut record = Vec::with_capacity(record_len + 4096);
        while record.len() < record_len {
            record.extend_from_slice(&examples.next().expect("endless"));
        }
        w.write_record(&record).expect("write");
        written += record.len();
        records += 1;
    }
    w.finish().expect("finish");
    records
}

fn sequential(path: &Path) -> u64 {
    let mut reader = RecordReader::open(path, ReaderOptions::default()).expect("open");
    let mut n = 0;
    while let Some(r) = reader.next_record().expect("read") {
        n += r.len() as u64;
    }
    n
}

fn random(file: &RecordFile, order: &[usize]) -> u64 {
    let mut out = Vec::new();
    let mut n = 0;
    for &i in order {
        file.get_into(i, &mut out).expect("get");
        n += out.len() as u64;
    }
    n
}

/// `RecordFile::for_each_record_parallel` with 1 and 2 threads, on the indexed GZIP file and on
/// a plain copy with its offset index: the wall time of each and the ratio.
fn parallel_reads(gzip: &Path, expected: &u64) {
    let plain = gzip.with_extension("plain");
    let mut w = RecordWriter::create(&plain, WriterOptions::default()).expect("create");
    let mut reader = RecordReader::open(gzip, ReaderOptions::default()).expect("open");
    while let Some(r) = reader.next_record().expect("read") {
        w.write_record(r).expect("write");
    }
    w.finish().expect("finish");
    for (name, path) in [("gzip", gzip), ("plain", plain.as_path())] {
        let file = RecordFile::open(path).expect("open");
        let mut times = Vec::new();
        for threads in [1, 2] {
            let (took, n) = timed(&mut || {
                let mut n = 0u64;
                file.for_each_record_parallel(threads, |_, data| n += data.len() as u64)
                    .expect("parallel read");
                n
            });
            assert_eq!(n, *expected);
            times.push(took);
        }
        println!(
            "  every record in order, {name}: 1 thread {:.3} s, 2 threads {:.3} s = {:.2}x",
            times[0].as_secs_f64(),
            times[1].as_secs_f64(),
            times[0].as_secs_f64() / times[1].as_secs_f64()
        );
    }
}

fn timed(f: &mut dyn FnMut() -> u64) -> (Duration, u64) {
    let t = Instant::now();
    let n = f();
    (t.elapsed(), n)
}

/// CPU seconds this thread has run, from `/proc/thread-self/schedstat` (nanoseconds); 0 where
/// there is no such file.
fn thread_cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

/// Wall time, this thread's CPU seconds and the result of `f`.
fn timed_cpu(f: &mut dyn FnMut() -> u64) -> (Duration, f64, u64) {
    let cpu = thread_cpu();
    let (wall, n) = timed(f);
    (wall, thread_cpu() - cpu, n)
}

/// A list of numbers from the environment variable `name`, or `default`.
fn env_list(name: &str, default: &[u64]) -> Vec<u64> {
    std::env::var(name)
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect::<Vec<u64>>())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_vec())
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inflated = (200e6 * data::scale()) as usize;
    let seeds = env_list("TFREC_BENCH_SEEDS", &[7]);
    let parallel = std::env::var("TFREC_BENCH_PARALLEL").map_or(true, |v| v != "0");
    for record_len in env_list("TFREC_BENCH_RECORD_LENS", &[10_000, 100_000]) {
        let record_len = record_len as usize;
        let path = dir.path().join(format!("r{record_len}.tfrecord.gz"));
        let records = write_gzip(&path, inflated, record_len);
        let file_len = std::fs::metadata(&path).expect("file").len();
        let (seq, seq_cpu, seq_bytes) = timed_cpu(&mut || sequential(&path));
        println!(
            "records of {record_len} B: {records} records, {:.1} MB GZIP, {:.1} MB inflated; sequential read {:.3} s ({:.3} s CPU)",
            file_len as f64 / 1e6,
            seq_bytes as f64 / 1e6,
            seq.as_secs_f64(),
            seq_cpu
        );
        if parallel {
            parallel_reads(&path, &seq_bytes);
        }
        for spacing in [DEFAULT_SPACING, DEFAULT_SPACING / 4] {
            let t = Instant::now();
            let seek = SeekIndex::build(&path, Compression::Gzip, spacing).expect("index");
            let build = t.elapsed();
            let index_len = seek.to_bytes().len();
            println!(
                "  spacing {} KiB: index built in {:.2} s, {} checkpoints, {index_len} bytes = {:.2}% of the file",
                spacing >> 10,
                build.as_secs_f64(),
                seek.checkpoints().len(),
                100.0 * index_len as f64 / file_len as f64
            );
            for &seed in &seeds {
                let mut order: Vec<usize> = (0..records).collect();
                let mut rng = data::Rng::new(seed);
                for k in (1..order.len()).rev() {
                    order.swap(k, rng.below(k as u64 + 1) as usize);
                }
                // The default budget holds this file's inflated records, so each span is
                // inflated once; a file four times the budget is read with a quarter of it.
                let caches = [
                    ("default cache", None),
                    ("cache of a quarter of the records", Some(seq_bytes as usize / 4)),
                ];
                for (cache_name, cache_bytes) in caches {
                    let file = RecordFile::with_seek_index(&path, seek.clone()).expect("open");
                    let file = match cache_bytes {
                        Some(bytes) => file.with_cache_bytes(bytes),
                        None => file,
                    };
                    let (took, cpu, got) = timed_cpu(&mut || random(&file, &order));
                    assert_eq!(got, seq_bytes, "random reads return every byte");
                    println!(
                        "    random order (seed {seed}), {cache_name}: {:.3} s ({:.3} s CPU) = {:.1}% of sequential throughput ({:.1}% by CPU time); cache held {:.1} MiB",
                        took.as_secs_f64(),
                        cpu,
                        100.0 * seq.as_secs_f64() / took.as_secs_f64(),
                        100.0 * seq_cpu / cpu.max(1e-9),
                        file.cached_bytes() as f64 / f64::from(1 << 20)
                    );
                }
            }
        }
    }
}

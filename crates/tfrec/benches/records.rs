//! Read+verify throughput of the TFRecord reader against plainly reading the same file.
//!
//! `cargo bench -p tfrec --bench records` writes two files to a temporary directory:
//! 200 MB of 100 KB records, and 1 M records of about 100 bytes. For each it times, in the
//! same run and alternating so that machine noise hits both alike:
//! - `plain read`: the file read sequentially into one reused 1 MiB buffer (the floor: every
//!   reader must at least bring the bytes in);
//! - `read+verify`: `RecordReader` returning every record with both CRCs checked;
//! - `read, no data CRC`: the same with `verify_data_crc(false)`.
//!
//! Set `TFREC_BENCH_SCALE=0.05` (for example) for a quick smoke run.

use std::fs::File;
mod data;

use std::hint::black_box;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use tfrec::record::{ReaderOptions, RecordReader, RecordWriter, WriterOptions};

const ROUNDS: usize = 5;

/// Deterministic, poorly compressible bytes.
fn fill(buf: &mut [u8], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bytes = x.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

fn write_file(path: &Path, records: usize, len_of: impl Fn(usize) -> usize) -> u64 {
    let mut writer = RecordWriter::create(path, WriterOptions::default()).expect("create bench file");
    let mut buf = Vec::new();
    for i in 0..records {
        buf.resize(len_of(i), 0);
        fill(&mut buf, i as u64);
        writer.write_record(&buf).expect("write bench record");
    }
    writer.finish().expect("finish bench file");
    std::fs::metadata(path).expect("bench file").len()
}

fn plain_read(path: &Path) -> u64 {
    let mut file = File::open(path).expect("open");
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf).expect("read");
        if n == 0 {
            return total;
        }
        total += n as u64;
        black_box(&buf[..n]);
    }
}

fn record_read(path: &Path, verify: bool) -> u64 {
    let options = ReaderOptions::default().verify_data_crc(verify);
    let mut reader = RecordReader::open(path, options).expect("open");
    let mut records = 0u64;
    while let Some(record) = reader.next_record().expect("valid bench file") {
        black_box(record);
        records += 1;
    }
    records
}

fn best_of(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

fn report(name: &str, bytes: u64, records: u64, plain: Duration, verify: Duration, no_crc: Duration) {
    let mb = bytes as f64 / 1e6;
    let rate = |d: Duration| mb / d.as_secs_f64();
    let recs = |d: Duration| records as f64 / d.as_secs_f64() / 1e6;
    println!("\n{name}: {records} records, {mb:.0} MB (best of {ROUNDS})");
    println!("  plain read          {:>8.0} MB/s", rate(plain));
    println!(
        "  read+verify         {:>8.0} MB/s  {:>6.2} M records/s  = {:>5.1}% of plain read",
        rate(verify),
        recs(verify),
        100.0 * plain.as_secs_f64() / verify.as_secs_f64()
    );
    println!(
        "  read, no data CRC   {:>8.0} MB/s  {:>6.2} M records/s  = {:>5.1}% of plain read",
        rate(no_crc),
        recs(no_crc),
        100.0 * plain.as_secs_f64() / no_crc.as_secs_f64()
    );
}

fn bench(name: &str, path: &Path, records: usize, len_of: impl Fn(usize) -> usize) {
    let bytes = write_file(path, records, len_of);
    // Warm the page cache so both sides read from memory.
    plain_read(path);
    let (mut plain, mut verify, mut no_crc) = (vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        assert_eq!(plain_read(path), bytes);
        plain.push(t.elapsed());
        let t = Instant::now();
        assert_eq!(record_read(path, true), records as u64);
        verify.push(t.elapsed());
        let t = Instant::now();
        assert_eq!(record_read(path, false), records as u64);
        no_crc.push(t.elapsed());
    }
    report(
        name,
        bytes,
        records as u64,
        best_of(&plain),
        best_of(&verify),
        best_of(&no_crc),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and then we do nothing.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let s = data::scale();
    let big = ((2000.0 * s) as usize).max(10);
    bench("100 KB records", &dir.path().join("big.tfrecord"), big, |_| 100_000);
    let small = ((1_000_000.0 * s) as usize).max(1000);
    bench("~100 B records", &dir.path().join("small.tfrecord"), small, |i| {
        80 + i % 41
    });
}

//! Read+verify throughput of the TFRecord reader against plainly reading the same file.
//!
//! `cargo bench -p tfrec-cli --bench records` writes two files to a temporary directory:
//! 200 MB of 100 KB records, and 1 M records of about 100 bytes. For each it times, in the
//! same run and alternating so that machine noise hits both alike:
//! - `plain read`: the file read sequentially into one reused 1 MiB buffer (the floor: every
//!   reader must at least bring the bytes in);
//! - `read+verify`: `RecordReader` returning every record with both CRCs checked;
//! - `read, no data CRC`: the same with `verify_data_crc(false)`.
//!
//! Then GZIP: notebook Examples written plain and as GZIP, timed as read+verify of the plain
//! file (the baseline), `RecordReader` over the GZIP file, and flate2's own `MultiGzDecoder`
//! decompressing the same file to nowhere (the decoder the reader used before).
//!
//! Then resynchronisation: a record, a run of garbage (zeros, then random bytes), a record,
//! read with `OnCorruption::Resync`, against a plain read of the same file; and for the scan's
//! hand-written CRC, the `crc32c` crate called at every offset of the same bytes in memory.
//!
//! Set `TFREC_BENCH_SCALE=0.05` (for example) for a quick smoke run.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

use std::fs::File;
mod data;

use std::hint::black_box;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use tfrec::record::{Compression, OnCorruption, ReaderOptions, RecordReader, RecordWriter, WriterOptions};

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

fn gzip_bench(dir: &Path, records: usize) {
    let plain = dir.join("notebook.tfrecord");
    let gz = dir.join("notebook.tfrecord.gz");
    for (path, compression) in [(&plain, Compression::None), (&gz, Compression::Gzip)] {
        let options = WriterOptions::default().compression(compression);
        let mut writer = RecordWriter::create(path, options).expect("create");
        for record in data::notebook(records) {
            writer.write_record(&record).expect("write");
        }
        writer.finish().expect("finish");
    }
    let bytes = std::fs::metadata(&plain).expect("plain").len();
    let on_disk = std::fs::metadata(&gz).expect("gz").len();
    plain_read(&gz);
    plain_read(&plain);
    let flate2_read = |path: &Path| {
        let file = std::io::BufReader::with_capacity(256 << 10, File::open(path).expect("open"));
        let mut decoder = flate2::bufread::MultiGzDecoder::new(file);
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0u64;
        loop {
            let n = decoder.read(&mut buf).expect("valid gzip");
            if n == 0 {
                return total;
            }
            total += n as u64;
            black_box(&buf[..n]);
        }
    };
    let (mut base, mut ours, mut flate) = (vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        assert_eq!(record_read(&plain, true), records as u64);
        base.push(t.elapsed());
        let t = Instant::now();
        assert_eq!(record_read(&gz, true), records as u64);
        ours.push(t.elapsed());
        let t = Instant::now();
        assert_eq!(flate2_read(&gz), bytes);
        flate.push(t.elapsed());
    }
    let mb = bytes as f64 / 1e6;
    let rate = |d: Duration| mb / d.as_secs_f64();
    let (base, ours, flate) = (best_of(&base), best_of(&ours), best_of(&flate));
    println!(
        "\nGZIP: {records} notebook Examples, {mb:.0} MB decompressed, {:.0} MB on disk (best of {ROUNDS})",
        on_disk as f64 / 1e6
    );
    println!("  plain read+verify           {:>8.0} MB/s", rate(base));
    println!(
        "  gzip read+verify (tfrec)    {:>8.0} MB/s  = {:>5.1}% of plain read+verify",
        rate(ours),
        100.0 * base.as_secs_f64() / ours.as_secs_f64()
    );
    println!(
        "  flate2 MultiGzDecoder only  {:>8.0} MB/s  (tfrec takes {:.2}x its time)",
        rate(flate),
        ours.as_secs_f64() / flate.as_secs_f64()
    );
}

fn resync_bench(dir: &Path, garbage_len: usize) {
    let mut framed = RecordWriter::new(Vec::new());
    framed.write_record(b"a record").expect("write");
    let framed = framed.finish().expect("finish");
    for (name, seed) in [("zeros", None), ("random bytes", Some(7u64))] {
        let path = dir.join("garbage.tfrecord");
        let mut bytes = framed.clone();
        let mut garbage = vec![0u8; garbage_len];
        if let Some(seed) = seed {
            fill(&mut garbage, seed);
        }
        bytes.extend_from_slice(&garbage);
        bytes.extend_from_slice(&framed);
        std::fs::write(&path, &bytes).expect("write");
        plain_read(&path);
        let options = ReaderOptions::default().on_corruption(OnCorruption::Resync);
        let (mut plain, mut resync, mut crate_crc) = (vec![], vec![], vec![]);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            plain_read(&path);
            plain.push(t.elapsed());
            let t = Instant::now();
            let mut reader = RecordReader::open(&path, options.clone()).expect("open");
            let mut found = 0;
            while let Some(record) = reader.next_record().expect("resync never fails here") {
                black_box(record);
                found += 1;
            }
            assert_eq!(found, 2);
            resync.push(t.elapsed());
            let t = Instant::now();
            let mut hits = 0u32;
            for window in bytes.windows(12) {
                let crc = crc32c::crc32c(&window[..8]).rotate_right(15).wrapping_add(0xa282_ead8);
                hits += u32::from(crc.to_le_bytes() == window[8..12]);
            }
            black_box(hits);
            crate_crc.push(t.elapsed());
        }
        let mb = bytes.len() as f64 / 1e6;
        let rate = |d: Duration| mb / d.as_secs_f64();
        let (plain, resync, crate_crc) = (best_of(&plain), best_of(&resync), best_of(&crate_crc));
        println!("\nresync scan through {mb:.0} MB of {name} (best of {ROUNDS})");
        println!("  plain read                  {:>8.0} MB/s", rate(plain));
        println!(
            "  resync read (tfrec)         {:>8.0} MB/s  = {:>5.1}% of plain read",
            rate(resync),
            100.0 * plain.as_secs_f64() / resync.as_secs_f64()
        );
        println!(
            "  crc32c crate at every offset {:>7.0} MB/s  (in memory; the reader is {:.1}x faster)",
            rate(crate_crc),
            crate_crc.as_secs_f64() / resync.as_secs_f64()
        );
    }
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
    gzip_bench(dir.path(), ((1_000_000.0 * s) as usize).max(1000));
    resync_bench(dir.path(), ((256.0 * s) as usize).max(4) << 20);
}

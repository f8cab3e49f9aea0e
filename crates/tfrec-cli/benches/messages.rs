//! Decode throughput of the zero-copy view over 1 M small Examples (the TFRecord notebook's
//! four features), next to a plain byte scan of the same buffer in the same run.
//!
//! `cargo bench -p tfrec-cli --bench messages`. Each round times, over one contiguous buffer:
//! - `byte scan`: summing every byte (the floor: touching the data once);
//! - `view, all values`: walking every entry and decoding every value into reused vectors;
//! - `view, one key`: finding one feature per record and skipping the rest undecoded;
//! - `owned decode`: `Example::decode` into owned maps, for comparison.
//!
//! Set `TFREC_BENCH_SCALE=0.05` for a quick smoke run.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use std::hint::black_box;
use std::time::{Duration, Instant};

use tfrec::example::{Example, ExampleView, Kind};

const ROUNDS: usize = 5;

fn records(n: usize) -> (Vec<u8>, Vec<(usize, usize)>) {
    let animals = ["cat", "dog", "chicken", "horse", "goat"];
    let mut buf = Vec::new();
    let mut spans = Vec::with_capacity(n);
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f1 = (x % 5) as usize;
        let ex = Example::builder()
            .int64("feature0", (x >> 8) & 1)
            .int64("feature1", f1 as i64)
            .bytes("feature2", animals[f1])
            .float("feature3", ((x >> 16) % 20_000) as f32 / 10_000.0 - 1.0)
            .build()
            .expect("valid example");
        let start = buf.len();
        ex.encode_to(&mut buf);
        spans.push((start, buf.len()));
    }
    (buf, spans)
}

fn time(f: impl FnMut()) -> Duration {
    let mut f = f;
    let t = Instant::now();
    f();
    t.elapsed()
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let scale = data::scale();
    let n = ((1_000_000.0 * scale) as usize).max(1000);
    let (buf, spans) = records(n);
    let mb = buf.len() as f64 / 1e6;
    let (mut scan, mut all, mut one, mut owned) = (vec![], vec![], vec![], vec![]);
    let mut ints = Vec::new();
    let mut floats = Vec::new();
    for _ in 0..ROUNDS {
        scan.push(time(|| {
            let sum: u64 = buf.iter().map(|&b| u64::from(b)).sum();
            black_box(sum);
        }));
        all.push(time(|| {
            let mut bytes_seen = 0usize;
            for &(s, e) in &spans {
                ints.clear();
                floats.clear();
                for entry in ExampleView::new(&buf[s..e]).entries() {
                    let (_, v) = entry.expect("valid");
                    match v.kind() {
                        Some(Kind::Int64) => drop(v.extend_int64s(&mut ints)),
                        Some(Kind::Float) => drop(v.extend_floats(&mut floats)),
                        Some(Kind::Bytes) => drop(v.for_each_bytes(|b| bytes_seen += b.len())),
                        None => {}
                    }
                }
                black_box((&ints, &floats));
            }
            black_box(bytes_seen);
        }));
        one.push(time(|| {
            for &(s, e) in &spans {
                let v = ExampleView::new(&buf[s..e])
                    .get(b"feature3")
                    .expect("valid")
                    .expect("present");
                floats.clear();
                v.extend_floats(&mut floats).expect("valid");
                black_box(&floats);
            }
        }));
        owned.push(time(|| {
            for &(s, e) in &spans {
                black_box(Example::decode(&buf[s..e]).expect("valid"));
            }
        }));
    }
    let best = |d: &[Duration]| d.iter().copied().min().unwrap_or_default();
    let scan = best(&scan);
    println!("\n{n} notebook Examples, {mb:.1} MB in one buffer (best of {ROUNDS})");
    println!("  byte scan          {:>8.0} MB/s", mb / scan.as_secs_f64());
    for (name, d) in [
        ("view, all values", best(&all)),
        ("view, one key", best(&one)),
        ("owned decode", best(&owned)),
    ] {
        println!(
            "  {name:<18} {:>8.0} MB/s  {:>6.2} M records/s  = {:>5.1}% of byte scan",
            mb / d.as_secs_f64(),
            n as f64 / d.as_secs_f64() / 1e6,
            100.0 * scan.as_secs_f64() / d.as_secs_f64()
        );
    }
}

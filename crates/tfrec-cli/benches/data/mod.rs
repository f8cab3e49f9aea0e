//! The benchmark data sets of the parsing and pipeline issues, generated deterministically,
//! and the timing helper the benchmarks share.
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use tfrec::example::{Example, Feature, SequenceExample};
use tfrec::parse::{specs_from_json_str, FeatureSpecs, SequenceSpecs};
use tfrec::record::{RecordWriter, WriterOptions};

/// xorshift64: deterministic, fast, good enough for benchmark data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn float(&mut self) -> f32 {
        (self.below(2_000_000) as f32 / 1_000_000.0) - 1.0
    }
}

pub fn write(path: &Path, records: impl Iterator<Item = Vec<u8>>) -> (u64, u64) {
    let mut w = RecordWriter::create(path, WriterOptions::default()).expect("create");
    for r in records {
        w.write_record(&r).expect("write");
    }
    let n = w.records_written();
    w.finish().expect("finish");
    (n, std::fs::metadata(path).expect("file").len())
}

/// (a) The notebook's 4 scalar features.
pub fn notebook(n: usize) -> impl Iterator<Item = Vec<u8>> {
    let animals = ["cat", "dog", "chicken", "horse", "goat"];
    let mut rng = Rng::new(1);
    (0..n).map(move |_| {
        let f1 = rng.below(5);
        Example::builder()
            .int64("feature0", rng.below(2))
            .int64("feature1", f1)
            .bytes("feature2", animals[f1 as usize])
            .float("feature3", rng.float())
            .build()
            .expect("valid")
            .encode()
    })
}

pub fn notebook_spec() -> FeatureSpecs {
    specs_from_json_str(
        &serde_json::json!({
            "feature0": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            "feature1": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            "feature2": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
            "feature3": {"type": "FixedLenFeature", "shape": [], "dtype": "float32"},
        })
        .to_string(),
    )
    .expect("spec")
}

/// (b) 30 int64 + 10 float scalars, 5 int64 VarLen lists of 0–20 values, 3 short strings.
pub fn wide(n: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut rng = Rng::new(2);
    (0..n).map(move |_| {
        let mut ex = Example::default();
        let f = ex.features_mut();
        for i in 0..30 {
            f.insert(format!("i{i}"), Feature::Int64(vec![rng.below(1 << 20) as i64]));
        }
        for i in 0..10 {
            f.insert(format!("f{i}"), Feature::Float(vec![rng.float()]));
        }
        for i in 0..5 {
            let len = rng.below(21) as usize;
            f.insert(
                format!("l{i}"),
                Feature::Int64((0..len).map(|_| rng.below(100_000) as i64).collect()),
            );
        }
        for i in 0..3 {
            let len = 3 + rng.below(10) as usize;
            f.insert(
                format!("s{i}"),
                Feature::Bytes(vec![(0..len).map(|_| b'a' + rng.below(26) as u8).collect()]),
            );
        }
        ex.encode()
    })
}

pub fn wide_spec() -> FeatureSpecs {
    let mut spec = serde_json::Map::new();
    for i in 0..30 {
        spec.insert(
            format!("i{i}"),
            serde_json::json!({"type": "FixedLenFeature", "shape": [], "dtype": "int64"}),
        );
    }
    for i in 0..10 {
        spec.insert(
            format!("f{i}"),
            serde_json::json!({"type": "FixedLenFeature", "shape": [], "dtype": "float32"}),
        );
    }
    for i in 0..5 {
        spec.insert(
            format!("l{i}"),
            serde_json::json!({"type": "VarLenFeature", "dtype": "int64"}),
        );
    }
    for i in 0..3 {
        spec.insert(
            format!("s{i}"),
            serde_json::json!({"type": "FixedLenFeature", "shape": [], "dtype": "string"}),
        );
    }
    specs_from_json_str(&serde_json::Value::Object(spec).to_string()).expect("spec")
}

/// Narrow Examples of short lists (`narrow_short_lists` of python/bench/_shapes.py): a label,
/// 0–5 int64 ids, 3 float weights, 0–3 tags of 2–6 bytes.
pub fn short_lists(n: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut rng = Rng::new(3);
    (0..n).map(move |_| {
        let mut ex = Example::default();
        let f = ex.features_mut();
        f.insert("label".to_owned(), Feature::Int64(vec![rng.below(2) as i64]));
        let ids = rng.below(6) as usize;
        f.insert(
            "ids".to_owned(),
            Feature::Int64((0..ids).map(|_| rng.below(1 << 20) as i64).collect()),
        );
        f.insert(
            "weights".to_owned(),
            Feature::Float((0..3).map(|_| rng.float()).collect()),
        );
        let tags = rng.below(4) as usize;
        f.insert(
            "tags".to_owned(),
            Feature::Bytes(
                (0..tags)
                    .map(|_| {
                        let len = 2 + rng.below(5) as usize;
                        (0..len).map(|_| b'a' + rng.below(26) as u8).collect()
                    })
                    .collect(),
            ),
        );
        ex.encode()
    })
}

pub fn short_lists_spec() -> FeatureSpecs {
    specs_from_json_str(
        &serde_json::json!({
            "label": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            "ids": {"type": "VarLenFeature", "dtype": "int64"},
            "weights": {"type": "FixedLenFeature", "shape": [3], "dtype": "float32"},
            "tags": {"type": "VarLenFeature", "dtype": "string"},
        })
        .to_string(),
    )
    .expect("spec")
}

/// (c) SequenceExamples of 0–100 frames: x 8 floats, y one int64 per frame.
pub fn sequences(n: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut rng = Rng::new(3);
    (0..n).map(move |_| {
        let frames = rng.below(101) as usize;
        let x: Vec<Vec<f32>> = (0..frames).map(|_| (0..8).map(|_| rng.float()).collect()).collect();
        let y: Vec<i64> = (0..frames).map(|_| rng.below(1000) as i64).collect();
        SequenceExample::builder()
            .float_list("x", x)
            .int64_list("y", y)
            .build()
            .expect("valid")
            .encode()
    })
}

pub fn sequence_spec() -> SequenceSpecs {
    SequenceSpecs::from_json_str(
        &serde_json::json!({
            "sequence_features": {
                "x": {"type": "FixedLenSequenceFeature", "shape": [8], "dtype": "float32", "allow_missing": true},
                "y": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
            }
        })
        .to_string(),
    )
    .expect("spec")
}

/// The fastest of `rounds` runs of `f`: on a shared machine, the least disturbed one.
pub fn best_of(rounds: usize, f: &mut dyn FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// `TFREC_BENCH_SCALE` (default 1): a fraction of the full data set, for quick runs.
pub fn scale() -> f64 {
    std::env::var("TFREC_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0)
}

/// CPU seconds used by the finished children of this process so far (user + system), from
/// `/proc/self/stat`; 0 where there is no such file.
pub fn children_cpu() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) in parentheses: cutime and cstime
    // are the 16th and 17th fields of the line, in clock ticks (100 a second on Linux).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |k: usize| fields.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(13) + ticks(14)) / 100.0
}

//! Helpers shared by the integration tests: where the golden vectors are, and a seeded
//! generator for test data.
#![allow(dead_code)]

use std::path::PathBuf;

/// The golden vectors: `$TFREC_GOLDEN_DIR`, else the copy in the repository (`testdata/golden`).
/// A missing directory fails the test: conformance is never silently skipped.
pub fn golden_dir() -> PathBuf {
    let dir = match std::env::var_os("TFREC_GOLDEN_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/golden"),
    };
    assert!(
        dir.is_dir(),
        "golden vectors not found at {} (set TFREC_GOLDEN_DIR)",
        dir.display()
    );
    dir
}

pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// xorshift64 for test data: the same cases on every run.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

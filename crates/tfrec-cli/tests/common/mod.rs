//! Helpers shared by the CLI's integration tests: running the binary (or the one
//! `TFREC_BIN` names, to show a test failing on an older build) and making test data.

#![allow(dead_code)]

pub mod servers;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tfrec::example::Example;
use tfrec::record::{RecordWriter, WriterOptions};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn binary() -> PathBuf {
    std::env::var_os("TFREC_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tfrec")))
}

/// Runs `tfrec args` in `dir`.
pub fn tfrec_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrec")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts the exit status and returns stdout.
#[track_caller]
pub fn expect_code(out: &Output, code: i32, what: &str) -> String {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: stdout {} stderr {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// An Example with an id, a label and some bytes.
pub fn example(i: usize) -> Vec<u8> {
    Example::builder()
        .int64("id", i as i64)
        .bytes("name", format!("record-{i}"))
        .float("score", [i as f32 * 0.25])
        .build()
        .expect("example")
        .encode()
}

/// Writes `n` Examples to `path` (compression by extension).
pub fn write_examples(path: &Path, n: usize) {
    let mut w = RecordWriter::create(path, WriterOptions::default()).expect("create");
    for i in 0..n {
        w.write_record(&example(i)).expect("write");
    }
    w.finish().expect("finish");
}

/// Byte offset of record `index` in a plain file of records.
pub fn record_offset(bytes: &[u8], index: usize) -> usize {
    let mut offset = 0;
    for _ in 0..index {
        let len = u64::from_le_bytes(bytes[offset..offset + 8].try_into().expect("8 bytes")) as usize;
        offset += 16 + len;
    }
    offset
}

/// Writes `n` Examples to `path` with record `bad`'s data damaged (its data CRC fails).
pub fn write_damaged(path: &Path, n: usize, bad: usize) {
    write_examples(path, n);
    let mut bytes = std::fs::read(path).expect("read");
    let at = record_offset(&bytes, bad) + 12 + 3;
    bytes[at] ^= 0x55;
    std::fs::write(path, bytes).expect("write");
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The names in a directory, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The Python interpreter the checks against NumPy run: `TFREC_TEST_PYTHON` (which
/// `scripts/test` sets to its `.venv`), else `python3`. Fails, saying what to do, when that
/// interpreter has no NumPy: these checks read our output with an independent implementation
/// and are never skipped.
pub fn python_with_numpy() -> PathBuf {
    let python = std::env::var_os("TFREC_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let has_numpy = Command::new(&python)
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        has_numpy,
        "this test reads tfrec's output with NumPy, and {} has none: run it through scripts/test \
         (which makes .venv with NumPy), or set TFREC_TEST_PYTHON to a Python that has NumPy",
        python.display()
    );
    python
}

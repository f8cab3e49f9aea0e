//! `tfrec cat` renders a huge record within the memory bound the guide promises: twice the
//! largest record, and 64 MB (issue 54: `cat --format jsonl --limit 1` on a file of huge
//! records held the record three times, a copy kept to tell Example from SequenceExample, and
//! `--format json` more, the value's whole base64). It failed on the build before the fix (run
//! with `TFREC_BIN=<old tfrec>` to see it).
//!
//! The peak is the kernel's high-water mark of the running command's resident memory
//! (`VmHWM` in `/proc/PID/status`), read once the command has started writing the record: by
//! then the record was read, looked at and (before the fix) copied, and the rest is written
//! from it as the pipe takes it. No clock is read.

#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use common::*;

const MIB: usize = 1 << 20;
/// The size of the record's one value: large enough that holding the record once more is
/// beyond the allowance.
const VALUE: usize = 256 * MIB;

fn varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `body` (the first bytes of a message of `len` bytes) as field `number` of its parent: the
/// field's header, then `body`; and the parent's length so far.
fn wrap(number: u8, body: &[u8], len: usize) -> (Vec<u8>, usize) {
    let mut out = vec![number << 3 | 2];
    varint(&mut out, len);
    let header = out.len();
    out.extend_from_slice(body);
    (out, header + len)
}

/// An Example of one bytes feature `x` whose one value is `value_len` bytes: the record's
/// bytes before the value (the value follows them and ends the record).
fn example_head(value_len: usize) -> Vec<u8> {
    let (value, len) = wrap(1, &[], value_len); // BytesList.value
    let (list, len) = wrap(1, &value, len); // Feature.bytes_list
    let (feature, len) = wrap(2, &list, len); // the map entry's value
    let mut entry = vec![0x0a, 0x01, b'x']; // the map entry's key
    entry.extend_from_slice(&feature);
    let (entry, len) = wrap(1, &entry, 3 + len); // Features.feature
    wrap(1, &entry, len).0 // Example.features
}

#[test]
fn cat_holds_a_huge_record_once() {
    let dir = tempfile::tempdir().expect("temp");
    let path = dir.path().join("huge.tfrecord");
    {
        let mut record = example_head(VALUE);
        record.resize(record.len() + VALUE, b'a');
        let mut writer =
            tfrec::record::RecordWriter::create(&path, tfrec::record::WriterOptions::default()).expect("create");
        writer.write_record(&record).expect("write");
        writer.finish().expect("finish");
    }
    let record_len = std::fs::metadata(&path).expect("size").len() as usize - 16;
    let bound = 2 * record_len + 64 * MIB;
    for format in ["jsonl", "json", "text"] {
        let mut child = Command::new(binary())
            .args(["cat", "--format", format, "--limit", "1", "huge.tfrecord"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run tfrec");
        let mut out = child.stdout.take().expect("stdout");
        let mut started = vec![0u8; MIB];
        out.read_exact(&mut started).expect("the record's first bytes");
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).expect("status");
        let peak_kb: usize = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM");
        let mut rest = std::io::sink();
        let written = std::io::copy(&mut out, &mut rest).expect("the rest") as usize + MIB;
        rest.flush().expect("flush");
        assert!(child.wait().expect("wait").success(), "{format}");
        assert!(written > VALUE, "{format}: {written} bytes written");
        assert!(
            peak_kb * 1024 <= bound,
            "{format}: peak {} MiB for a {} MiB record (bound {} MiB)",
            peak_kb / 1024,
            record_len / MIB,
            bound / MIB
        );
    }
}

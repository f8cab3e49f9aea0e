//! Conformance of the TFRecord layer with what TensorFlow 2.21 read from the golden files
//! (`records/records.json`), plus the writer checked byte for byte against TF's file.

mod common;
#[path = "common/records.rs"]
mod oracle;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tfrec::record::{
    Compression, CompressionChoice, OnCorruption, ReaderOptions, RecordError, RecordErrorKind, RecordReader,
    RecordWriter, TornTail, WriterOptions,
};

/// Records the largest single allocation, to prove a lying length allocates nothing near it.
struct LargestAllocation;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// allocator contract holds exactly as it does for `System`; the only addition is an atomic
// counter update, which neither allocates nor touches the returned memory.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: LargestAllocation = LargestAllocation;

/// No single allocation while reading the golden files may exceed this (the largest golden
/// record is about 2 MiB; the reader's large-record buffer at most doubles it).
const ALLOCATION_BOUND: usize = 64 << 20;

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

struct Outcome {
    digests: Vec<String>,
    error: Option<RecordError>,
    torn_tail_bytes: u64,
}

fn read_file(path: &Path, options: ReaderOptions) -> Outcome {
    let mut reader = match RecordReader::open(path, options) {
        Ok(r) => r,
        Err(error) => {
            return Outcome {
                digests: vec![],
                error: Some(error),
                torn_tail_bytes: 0,
            }
        }
    };
    let mut digests = Vec::new();
    let error = loop {
        match reader.next_record() {
            Ok(Some(data)) => digests.push(sha256_hex(data)),
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    Outcome {
        digests,
        error,
        torn_tail_bytes: reader.stats().torn_tail_bytes,
    }
}

fn expected_digests(entry: &Value) -> Option<Vec<String>> {
    entry["records_sha256"]
        .as_array()
        .map(|a| a.iter().map(|d| d.as_str().expect("digest").to_owned()).collect())
}

/// The offset in a TF DataLoss message: "corrupted record at 311", "truncated record at 299' …".
fn tf_offset(message: &str) -> u64 {
    let rest = message
        .split(" at ")
        .nth(1)
        .unwrap_or_else(|| panic!("no offset in {message:?}"));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or_else(|_| panic!("no offset in {message:?}"))
}

/// The framed size of the records TF read, to tell whether TF left bytes unread.
fn framed_size(entry: &Value) -> Option<u64> {
    let lengths = entry["record_lengths"].as_array()?;
    Some(lengths.iter().map(|l| l.as_u64().expect("length") + 16).sum())
}

fn compression_of(entry: &Value) -> Compression {
    match entry["compression"].as_str().expect("compression") {
        "NONE" => Compression::None,
        other => other.parse().expect("known compression"),
    }
}

#[test]
fn every_golden_record_file_reads_as_tensorflow_read_it() {
    let dir = common::golden_dir().join("records");
    let manifest = common::read_json(&dir.join("records.json"));
    let entries = manifest.as_array().expect("records.json is a list");
    assert!(!entries.is_empty(), "records.json lists no files");

    let mut checked = 0;
    for entry in entries {
        let name = entry["file"].as_str().expect("file name");
        let path = dir.join(name);
        let file_size = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{name}: {e}")).len();
        let compression = compression_of(entry);
        let ours = read_file(&path, ReaderOptions::default());
        let expected = expected_digests(entry);
        let tf_error = &entry["error"];

        // The compression we detect on our own (extension, then sniffing) is TF's.
        let sniffed = read_file(&path, ReaderOptions::default());
        assert_eq!(sniffed.digests, ours.digests, "{name}");
        let reader = RecordReader::open(&path, ReaderOptions::default()).expect("open");
        assert_eq!(reader.compression(), compression, "{name}: detected compression");

        match tf_error["class"].as_str() {
            None => {
                let expected = expected.expect("digests when TF read without error");
                assert_eq!(ours.digests, expected, "{name}: records");
                let tf_left_bytes = compression == Compression::None && framed_size(entry) != Some(file_size);
                if tf_left_bytes {
                    // TF silently dropped a torn tail: we must say so by default...
                    let error = ours
                        .error
                        .unwrap_or_else(|| panic!("{name}: TF dropped bytes silently; we must report them"));
                    assert!(
                        matches!(error.kind, RecordErrorKind::PartialHeader { .. }),
                        "{name}: {error}"
                    );
                    let tail = file_size - framed_size(entry).expect("lengths");
                    assert_eq!(
                        error.location.offset,
                        file_size - tail,
                        "{name}: offset of the torn tail"
                    );
                    // ...and read it like TF, but counted, when told to tolerate it.
                    let tolerant = read_file(&path, ReaderOptions::default().torn_tail(TornTail::Skip));
                    assert!(tolerant.error.is_none(), "{name}");
                    assert_eq!(tolerant.digests, expected, "{name}");
                    assert_eq!(tolerant.torn_tail_bytes, tail, "{name}");
                } else {
                    assert!(
                        ours.error.is_none(),
                        "{name}: unexpected error {:?}",
                        ours.error.map(|e| e.to_string())
                    );
                }
            }
            Some("DataLossError") => {
                let expected = expected.expect("digests before a DataLoss");
                assert_eq!(ours.digests, expected, "{name}: records before the error");
                let error = ours.error.unwrap_or_else(|| panic!("{name}: TF failed, we did not"));
                let message = tf_error["message"].as_str().expect("message");
                assert_eq!(
                    error.tf_offset(),
                    tf_offset(message),
                    "{name}: {error} vs TF's {message:?}"
                );
                let same_kind = match error.kind {
                    RecordErrorKind::LengthCrcMismatch { .. } | RecordErrorKind::DataCrcMismatch { .. } => {
                        message.starts_with("corrupted record")
                    }
                    RecordErrorKind::Truncated { .. }
                    | RecordErrorKind::LengthExceedsFile { .. }
                    | RecordErrorKind::Decompress(_) => message.starts_with("truncated record"),
                    _ => false,
                };
                assert!(same_kind, "{name}: our {error} is not TF's {message:?}");
            }
            Some("crash") => {
                // TF died; we must read what precedes the damage and then fail cleanly.
                let error = ours
                    .error
                    .unwrap_or_else(|| panic!("{name}: TF crashed, we must report an error"));
                assert!(!ours.digests.is_empty(), "{name}: the records before the damage");
                if let Some(source) = source_digests(entries, entry) {
                    assert!(ours.digests.iter().all(|d| source.contains(d)), "{name}: wrong data");
                }
                assert!(
                    matches!(
                        error.kind,
                        RecordErrorKind::Truncated { .. }
                            | RecordErrorKind::LengthExceedsFile { .. }
                            | RecordErrorKind::LengthOverLimit { .. }
                    ),
                    "{name}: {error}"
                );
                // Even with no length limit at all, nothing near the claimed length is allocated.
                let unlimited = read_file(&path, ReaderOptions::default().max_record_len(u64::MAX));
                assert!(unlimited.error.is_some(), "{name}");
            }
            Some(other) => panic!("{name}: unknown TF error class {other}"),
        }

        // Whatever the damage, resynchronising yields exactly what a rescan from every byte
        // offset finds, never a record the source did not hold, and never less than strict mode.
        let resynced = read_file(&path, ReaderOptions::default().on_corruption(OnCorruption::Resync));
        if compression == Compression::None {
            let bytes = std::fs::read(&path).expect("read golden file");
            let rescan: Vec<String> = oracle::rescan(&bytes).iter().map(|r| sha256_hex(r)).collect();
            assert_eq!(resynced.digests, rescan, "{name}: resync vs a rescan of every offset");
            if matches!(
                resynced.error.as_ref().map(|e| &e.kind),
                Some(RecordErrorKind::Io(_) | RecordErrorKind::Open(_))
            ) {
                panic!("{name}: resync failed");
            }
        }
        if let Some(source) = source_digests(entries, entry) {
            assert!(
                resynced.digests.iter().all(|d| source.contains(d)),
                "{name}: resync gave wrong data"
            );
        }
        assert!(resynced.error.is_none(), "{name}: resync must not fail");
        assert!(
            resynced.digests.len() >= ours.digests.len(),
            "{name}: resync read less than strict mode"
        );
        checked += 1;
    }
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest < ALLOCATION_BOUND,
        "an allocation of {largest} bytes while reading golden files"
    );
    println!("golden record files: {checked} checked");
}

/// The file a damaged golden file was made from, by its note ("corrupted from <file>").
fn source_entry<'a>(entries: &'a [Value], entry: &Value) -> Option<&'a Value> {
    let source = entry["note"].as_str()?.strip_prefix("corrupted from ")?.trim();
    entries.iter().find(|e| e["file"] == source)
}

fn source_digests(entries: &[Value], entry: &Value) -> Option<HashSet<String>> {
    expected_digests(source_entry(entries, entry)?).map(|d| d.into_iter().collect())
}

/// Every file damaged in place (the same size as its source) on which TensorFlow failed is
/// recovered by resync except the one damaged record: the records before it and after it all
/// come back, in order.
#[test]
fn resync_recovers_all_but_the_damaged_record() {
    let dir = common::golden_dir().join("records");
    let manifest = common::read_json(&dir.join("records.json"));
    let entries = manifest.as_array().expect("records.json is a list");
    let mut checked = 0;
    for entry in entries {
        let Some(source) = source_entry(entries, entry) else {
            continue;
        };
        let name = entry["file"].as_str().expect("file name");
        let source_name = source["file"].as_str().expect("file name");
        let size = |file: &str| std::fs::metadata(dir.join(file)).expect("golden file").len();
        if entry["error"].is_null() || size(name) != size(source_name) {
            continue;
        }
        let original = expected_digests(source).expect("source digests");
        let resynced = read_file(
            &dir.join(name),
            ReaderOptions::default().on_corruption(OnCorruption::Resync),
        );
        assert!(resynced.error.is_none(), "{name}");
        let lost: Vec<usize> = (0..original.len())
            .filter(|&i| !resynced.digests.contains(&original[i]))
            .collect();
        assert_eq!(lost.len(), 1, "{name}: exactly the damaged record is lost");
        let kept: Vec<&String> = original.iter().filter(|d| resynced.digests.contains(d)).collect();
        assert_eq!(resynced.digests.iter().collect::<Vec<_>>(), kept, "{name}: order");
        if let Some(read_by_tf) = expected_digests(entry) {
            assert_eq!(lost[0], read_by_tf.len(), "{name}: the record TF stopped at");
        }
        checked += 1;
    }
    assert!(checked > 0, "no file damaged in place in records.json");
    println!("files damaged in place: {checked} checked");
}

fn plain_payloads() -> Vec<Vec<u8>> {
    let path = common::golden_dir().join("records/plain.payloads.json");
    common::read_json(&path)
        .as_array()
        .expect("payload list")
        .iter()
        .map(|p| {
            base64::engine::general_purpose::STANDARD
                .decode(p.as_str().expect("base64 string"))
                .expect("valid base64")
        })
        .collect()
}

#[test]
fn writing_tf_payloads_gives_tf_bytes() {
    let payloads = plain_payloads();
    let mut writer = RecordWriter::new(Vec::new());
    for p in &payloads {
        writer.write_record(p).expect("write");
    }
    let ours = writer.finish().expect("finish");
    let tf = std::fs::read(common::golden_dir().join("records/plain.tfrecord")).expect("plain.tfrecord");
    assert!(
        ours == tf,
        "our plain file differs from TF's ({} vs {} bytes)",
        ours.len(),
        tf.len()
    );
}

fn write_compressed(payloads: &[Vec<u8>], compression: Compression) -> Vec<u8> {
    let options = WriterOptions::default().compression(compression);
    let mut writer = RecordWriter::with_options(Vec::new(), options);
    for p in payloads {
        writer.write_record(p).expect("write");
    }
    writer.finish().expect("finish")
}

/// Runs an external checker over `bytes` on stdin; true when it exits 0.
fn external_check(program: &str, args: &[&str], bytes: &[u8]) -> bool {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} is needed for this check: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("write to checker");
    child.wait().expect("checker ran").success()
}

#[test]
fn compressed_output_round_trips_and_is_a_valid_stream() {
    let payloads = plain_payloads();
    for compression in [Compression::Gzip, Compression::Zlib] {
        let bytes = write_compressed(&payloads, compression);
        let framed: usize = payloads.iter().map(|p| p.len() + 16).sum();
        assert!(bytes.len() < framed, "{compression}: output should be compressed");
        let reader = RecordReader::from_stream(bytes.as_slice(), ReaderOptions::default()).expect("sniff");
        assert_eq!(reader.compression(), compression);
        let read: Vec<Vec<u8>> = reader.records().collect::<Result<_, _>>().expect("read back");
        assert_eq!(read, payloads, "{compression}: round trip");
        let explicit = ReaderOptions::default().compression(CompressionChoice::Exactly(compression));
        let read: Vec<Vec<u8>> = RecordReader::from_stream(bytes.as_slice(), explicit)
            .expect("open")
            .records()
            .collect::<Result<_, _>>()
            .expect("read back");
        assert_eq!(read.len(), payloads.len());
    }
    let gzip = write_compressed(&payloads, Compression::Gzip);
    assert_eq!(&gzip[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3], "TF's gzip header");
    assert!(
        external_check("gzip", &["-t"], &gzip),
        "gzip -t rejects our gzip output"
    );
    let zlib = write_compressed(&payloads, Compression::Zlib);
    let python_zlib = "import sys, zlib; d = zlib.decompressobj(); d.decompress(sys.stdin.buffer.read()); sys.exit(0 if d.eof and not d.unused_data else 1)";
    assert!(
        external_check("python3", &["-c", python_zlib], &zlib),
        "zlib rejects our zlib output"
    );
}

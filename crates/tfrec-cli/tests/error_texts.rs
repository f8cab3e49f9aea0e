//! Issue 54, items 4 and 5: `verify` on a compressed file reports every damaged region before
//! a stream error, and errors name their file and a cause a user can act on (damaged deflate
//! data in zlib's words, a JSON-lines file that is not UTF-8, a missing directory, a directory
//! given as a file, a plain file read as GZIP). Each test failed on the build before the fix
//! (run with `TFREC_BIN=<old tfrec>` to see it).

mod common;

use std::fs;
use std::io::Write;

use common::*;
use serde_json::Value;
use tfrec::record::format::encode_header;
use tfrec::record::RecordWriter;

fn framed(records: &[&[u8]]) -> Vec<u8> {
    let mut writer = RecordWriter::new(Vec::new());
    for r in records {
        writer.write_record(r).expect("write to memory");
    }
    writer.finish().expect("write to memory")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("compress");
    encoder.finish().expect("compress")
}

#[test]
fn verify_reports_each_damaged_region_of_a_compressed_file_before_its_stream_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    // A record, then twice a header promising a million bytes and an intact empty record.
    let mut plain = framed(&[b"abc"]);
    for _ in 0..2 {
        plain.extend_from_slice(&encode_header(1_000_000));
        plain.extend_from_slice(&framed(&[b""]));
    }
    let mut compressed = gzip(&plain);
    let crc = compressed.len() - 8;
    compressed[crc] ^= 1; // the gzip trailer's CRC-32
    fs::write(d.join("r.tfrecord"), &plain).expect("write");
    fs::write(d.join("r.tfrecord.gz"), &compressed).expect("write");

    let regions = |name: &str| -> Vec<(u64, String)> {
        let out = tfrec_in(d, &["verify", "--json", name]);
        let report: Value = serde_json::from_str(&expect_code(&out, 1, name)).expect("JSON");
        report["files"][0]["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .map(|p| {
                let offset = p["offset"].as_u64().expect("offset");
                (offset, p["kind"].as_str().expect("kind").to_owned())
            })
            .collect()
    };
    let plain_regions = regions("r.tfrecord");
    assert_eq!(
        plain_regions.iter().map(|r| r.0).collect::<Vec<_>>(),
        [19, 47],
        "{plain_regions:?}"
    );
    let gzip_regions = regions("r.tfrecord.gz");
    let end = plain.len() as u64;
    assert_eq!(
        gzip_regions,
        [
            (19, "truncated".to_owned()),
            (47, "truncated".to_owned()),
            (end, "decompress".to_owned())
        ]
    );
    // `count --skip-corrupt` names the same places.
    let out = tfrec_in(d, &["count", "--skip-corrupt", "r.tfrecord.gz"]);
    expect_code(&out, 0, "count --skip-corrupt");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("skipped 2 damaged regions"), "{stderr}");
    for place in ["decompressed byte 19:", "decompressed byte 47:"] {
        assert!(stderr.contains(place), "{stderr}");
    }
}

#[test]
fn damaged_deflate_data_is_named_in_zlibs_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut bytes = fs::read(repo().join("testdata/golden/records/gzip.tfrecord.gz")).expect("golden file");
    bytes[74] ^= 1; // zlib: "invalid distance too far back"
    fs::write(dir.path().join("m.tfrecord.gz"), bytes).expect("write");
    let out = tfrec_in(dir.path(), &["count", "m.tfrecord.gz"]);
    expect_code(&out, 1, "count");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("m.tfrecord.gz: "), "{stderr}");
    assert!(stderr.contains("invalid distance too far back"), "{stderr}");
    assert!(!stderr.contains("repeated call"), "{stderr}");
}

#[test]
fn a_json_lines_file_that_is_not_utf8_is_named_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::write(dir.path().join("b.jsonl"), b"{\"a\": [1]}\n{\"a\": \"\xff\"}\n").expect("write");
    let out = tfrec_in(dir.path(), &["from-jsonl", "-o", "x.tfrecord", "b.jsonl"]);
    expect_code(&out, 1, "from-jsonl");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("b.jsonl:2: not UTF-8 text"), "{stderr}");
    assert!(!dir.path().join("x.tfrecord").exists(), "no output left behind");
}

#[test]
fn a_missing_directory_or_a_directory_given_as_a_file_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    fs::create_dir(d.join("a_dir")).expect("mkdir");
    let forms: &[(&[&str], &str)] = &[
        (
            &["from-images", "-o", "x.tfrecord", "nonexistent_dir"],
            "nonexistent_dir: ",
        ),
        (&["from-jsonl", "-o", "x.tfrecord", "a_dir"], "a_dir: is a directory"),
        (&["from-text", "-o", "x.tfrecord", "a_dir"], "a_dir: is a directory"),
    ];
    for (args, words) in forms {
        let out = tfrec_in(d, args);
        expect_code(&out, 2, &args.join(" "));
        let stderr = text(&out.stderr);
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    }
}

#[test]
fn a_file_read_as_the_wrong_compression_says_what_it_is() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    fs::copy(repo().join("samples/notebook.tfrecord"), d.join("notebook.tfrecord")).expect("copy");
    fs::copy(repo().join("samples/notebook.tfrecord"), d.join("plain.gz")).expect("copy");
    fs::write(d.join("g.tfrecord"), gzip(&framed(&[b"one"]))).expect("write");
    let forms: &[(&[&str], &str)] = &[
        (
            &["count", "--compression", "gzip", "notebook.tfrecord"],
            "notebook.tfrecord: not a GZIP stream: this file is a plain TFRecord; read it without compression",
        ),
        (
            &["verify", "--compression", "zlib", "notebook.tfrecord"],
            "notebook.tfrecord: not a ZLIB stream: this file is a plain TFRecord",
        ),
        (&["count", "plain.gz"], "`--compression none`"),
        (
            &["count", "--skip-corrupt", "--compression", "zlib", "g.tfrecord"],
            "g.tfrecord: not a ZLIB stream: this file is a GZIP stream; read it as GZIP",
        ),
    ];
    for (args, words) in forms {
        let out = tfrec_in(d, args);
        // The setting is wrong, not the data: a usage error, even under --skip-corrupt.
        expect_code(&out, 2, &args.join(" "));
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(all.contains(words), "{args:?}: {all}");
        assert!(!all.contains("magic"), "{args:?}: {all}");
        // verify's table does not call a file read with the wrong setting damaged.
        assert!(!text(&out.stdout).contains("DAMAGED"), "{args:?}: {all}");
    }
}

//! Mutation test of the record reader: a plain, a GZIP and a ZLIB file of generated records,
//! damaged in seeded ways (bit flips, deletions, insertions, truncations, torn writes with
//! appends, zeroed runs, damaged stream bytes), each read with and without resynchronisation
//! and compared with simple oracles:
//! - plain, resync: exactly the records a rescan from every byte offset finds;
//! - plain, strict: the records before the first problem, and that problem at its offset;
//! - compressed: decompressed independently (flate2's low-level inflater, our own framing
//!   checks), the same two oracles on the bytes decoded before the stream's error, and every
//!   record returned is one of the originals.

#[path = "common/records.rs"]
mod oracle;

use std::collections::HashSet;
use std::io::{self, Read};

use flate2::{Crc, Decompress, FlushDecompress, Status};
use oracle::At;
use tfrec::record::{Compression, OnCorruption, ReaderOptions, RecordError, RecordReader, RecordWriter, WriterOptions};

/// xorshift64*: deterministic and good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn payloads(rng: &mut Rng, count: usize, large: usize) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (0..count)
        .map(|_| {
            let len = rng.below(300);
            rng.bytes(len)
        })
        .collect();
    // Records larger than the smallest window take the large-record path.
    for _ in 0..large {
        let at = rng.below(out.len());
        let len = 66_000 + rng.below(30_000);
        out.insert(at, rng.bytes(len));
    }
    out
}

fn write(payloads: &[Vec<u8>], compression: Compression) -> Vec<u8> {
    let mut writer = RecordWriter::with_options(Vec::new(), WriterOptions::default().compression(compression));
    for p in payloads {
        writer.write_record(p).expect("write to a Vec");
    }
    writer.finish().expect("finish a Vec")
}

/// One seeded mutation of `bytes`; `extra` are framed records a torn append may add.
fn mutate(rng: &mut Rng, bytes: &[u8], extra: &[u8]) -> (String, Vec<u8>) {
    let mut out = bytes.to_vec();
    let at = rng.below(out.len());
    let what = match rng.below(7) {
        0 => {
            let bit = rng.below(8);
            out[at] ^= 1 << bit;
            format!("flip bit {bit} at {at}")
        }
        1 => {
            let n = 1 + rng.below(16.min(out.len() - at));
            out.drain(at..at + n);
            format!("delete {n} at {at}")
        }
        2 => {
            let n = 1 + rng.below(16);
            let inserted = rng.bytes(n);
            out.splice(at..at, inserted);
            format!("insert {n} at {at}")
        }
        3 => {
            out.truncate(at);
            format!("truncate at {at}")
        }
        4 => {
            // A writer died at `at`; later writes were appended.
            out.truncate(at);
            let from = rng.below(extra.len());
            out.extend_from_slice(&extra[..from.max(1)]);
            out.extend_from_slice(extra);
            format!("torn at {at}, {} + {} bytes appended", from.max(1), extra.len())
        }
        5 => {
            let n = 1 + rng.below(5000.min(out.len() - at));
            out[at..at + n].fill(0);
            format!("zero {n} at {at}")
        }
        _ => {
            // Several flips: damage in more than one place.
            let flips = 2 + rng.below(4);
            for _ in 0..flips {
                let at = rng.below(out.len());
                out[at] ^= 1 << rng.below(8);
            }
            format!("{flips} flips from seed state {at}")
        }
    };
    (what, out)
}

/// Hands out its bytes a few at a time, as a pipe would.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

struct Outcome {
    records: Vec<Vec<u8>>,
    error: Option<RecordError>,
    problems: usize,
}

fn drain<R: Read>(mut reader: RecordReader<R>) -> Outcome {
    let mut records = Vec::new();
    let error = loop {
        match reader.next_record() {
            Ok(Some(r)) => records.push(r.to_vec()),
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    Outcome {
        records,
        error,
        problems: reader.problems().len(),
    }
}

fn options(policy: OnCorruption, compression: Compression) -> ReaderOptions {
    ReaderOptions::default()
        .compression(compression)
        .on_corruption(policy)
        .buffer_size(64 << 10)
}

/// The reader's name for what the oracle found at the first problem.
fn kind_names(at: &At, known_size: bool) -> &'static [&'static str] {
    match at {
        At::PartialHeader => &["partial_header"],
        At::LengthCrc => &["length_crc_mismatch"],
        At::OverLimit => &["length_over_limit"],
        At::PastEnd if known_size => &["length_exceeds_file"],
        At::PastEnd => &["truncated"],
        At::DataCrc => &["data_crc_mismatch"],
        At::End | At::Record { .. } => &[],
    }
}

fn check_strict(what: &str, got: &Outcome, expected: &(Vec<Vec<u8>>, Option<(At, usize)>), known_size: bool) {
    assert_eq!(
        got.records.len(),
        expected.0.len(),
        "{what}: records before the first error"
    );
    assert!(
        got.records == expected.0,
        "{what}: records before the first error differ"
    );
    match (&expected.1, &got.error) {
        (None, None) => {}
        (Some((at, offset)), Some(error)) => {
            assert!(
                kind_names(at, known_size).contains(&error.kind_name()),
                "{what}: expected {at:?}, got {error}"
            );
            assert_eq!(error.location.offset, *offset as u64, "{what}: {error}");
        }
        (expected, got) => panic!(
            "{what}: expected {expected:?}, got {:?}",
            got.as_ref().map(|e| e.to_string())
        ),
    }
}

#[test]
fn plain_mutants_lose_no_intact_record() {
    let mut rng = Rng(0x5eed_0001);
    let originals = payloads(&mut rng, 40, 2);
    let file = write(&originals, Compression::None);
    let extra = write(&payloads(&mut rng, 3, 0), Compression::None);
    let mut recovered = 0;
    for mutant in 0..300 {
        let (what, bytes) = mutate(&mut rng, &file, &extra);
        let what = format!("mutant {mutant} ({what})");
        let rescan = oracle::rescan(&bytes);

        let step = [1usize << 20, 4096, 1000][mutant % 3];
        let trickle = RecordReader::from_stream(
            Trickle { data: &bytes, step },
            options(OnCorruption::Resync, Compression::None),
        )
        .expect("open");
        let got = drain(trickle);
        assert!(
            got.error.is_none(),
            "{what}: resync failed: {:?}",
            got.error.map(|e| e.to_string())
        );
        assert!(
            got.records == rescan,
            "{what}: resync found {} records, a rescan {}",
            got.records.len(),
            rescan.len()
        );
        assert_eq!(got.problems > 0, bytes != file, "{what}: damage is reported");

        let seekable = RecordReader::new_seekable(
            io::Cursor::new(bytes.clone()),
            options(OnCorruption::Resync, Compression::None),
        )
        .expect("open");
        let got = drain(seekable);
        assert!(got.error.is_none(), "{what}: resync (known size) failed");
        assert!(
            got.records == rescan,
            "{what}: resync with a known size differs from a rescan"
        );
        recovered += got.records.len();

        let strict = oracle::strict(&bytes);
        let got = drain(
            RecordReader::from_stream(bytes.as_slice(), options(OnCorruption::Fail, Compression::None)).expect("open"),
        );
        check_strict(&what, &got, &strict, false);
        let got = drain(
            RecordReader::new_seekable(
                io::Cursor::new(bytes.clone()),
                options(OnCorruption::Fail, Compression::None),
            )
            .expect("open"),
        );
        check_strict(&what, &got, &strict, true);
    }
    println!("300 plain mutants: {recovered} records recovered");
}

/// What an independent decoder gets from a damaged stream: the bytes decoded before the
/// damage, and whether the stream was whole. `None` when a gzip header is not the plain
/// 10-byte one our writer makes (its optional fields are not modelled here).
fn reference_decode(bytes: &[u8], compression: Compression) -> Option<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    let inflate = |input: &[u8], zlib: bool, out: &mut Vec<u8>| -> (usize, bool) {
        let mut d = Decompress::new(zlib);
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            let before = (d.total_in(), d.total_out());
            let result = d.decompress(&input[d.total_in() as usize..], &mut chunk, FlushDecompress::None);
            let written = (d.total_out() - before.1) as usize;
            out.extend_from_slice(&chunk[..written]);
            match result {
                Ok(Status::StreamEnd) => return (d.total_in() as usize, true),
                Ok(_) if d.total_in() == before.0 && written == 0 => return (d.total_in() as usize, false),
                Ok(_) => {}
                Err(_) => return (d.total_in() as usize, false),
            }
        }
    };
    match compression {
        Compression::Zlib if bytes.is_empty() => Some((out, true)),
        Compression::Zlib => {
            let (_, whole) = inflate(bytes, true, &mut out);
            Some((out, whole))
        }
        _ => {
            let mut at = 0;
            loop {
                match bytes.get(at..at + 10) {
                    Some([0x1f, 0x8b, 8, 0, ..]) => {}
                    // Optional header fields are not modelled here.
                    Some([0x1f, 0x8b, 8, flags, ..]) if flags & 0xe0 == 0 => return None,
                    // An empty stream is an empty file.
                    None if bytes.is_empty() => return Some((out, true)),
                    // Not a member: the stream is broken here.
                    _ => return Some((out, false)),
                }
                let start = out.len();
                let (used, whole) = inflate(&bytes[at + 10..], false, &mut out);
                if !whole {
                    return Some((out, false));
                }
                at += 10 + used;
                let Some(trailer) = bytes.get(at..at + 8) else {
                    return Some((out, false));
                };
                let mut crc = Crc::new();
                crc.update(&out[start..]);
                let stored_crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
                let stored_len = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
                if stored_crc != crc.sum() || stored_len != crc.amount() {
                    return Some((out, false));
                }
                at += 8;
                if at == bytes.len() {
                    return Some((out, true));
                }
            }
        }
    }
}

fn compressed_mutants(compression: Compression, seed: u64) {
    let mut rng = Rng(seed);
    let originals = payloads(&mut rng, 60, 1);
    let known: HashSet<&Vec<u8>> = originals.iter().collect();
    let file = write(&originals, compression);
    let extra_payloads = payloads(&mut rng, 3, 0);
    let extra = write(&extra_payloads, compression);
    let appended: HashSet<&Vec<u8>> = extra_payloads.iter().collect();
    let (mut modelled, mut recovered) = (0, 0);
    for mutant in 0..150 {
        let (what, bytes) = mutate(&mut rng, &file, &extra);
        let what = format!("{compression} mutant {mutant} ({what})");
        let resynced = drain(
            RecordReader::from_stream(bytes.as_slice(), options(OnCorruption::Resync, compression)).expect("open"),
        );
        assert!(resynced.error.is_none(), "{what}: resync must end the file, not fail");
        assert!(
            resynced
                .records
                .iter()
                .all(|r| known.contains(r) || appended.contains(r)),
            "{what}: a record that was never written"
        );
        recovered += resynced.records.len();
        let strict =
            drain(RecordReader::from_stream(bytes.as_slice(), options(OnCorruption::Fail, compression)).expect("open"));
        assert!(
            resynced.records.starts_with(&strict.records),
            "{what}: resync and strict mode differ before the first error"
        );

        let Some((decoded, whole)) = reference_decode(&bytes, compression) else {
            continue;
        };
        modelled += 1;
        let rescan = oracle::rescan(&decoded);
        assert!(
            resynced.records == rescan,
            "{what}: resync found {} records; {} are decodable before the damage",
            resynced.records.len(),
            rescan.len()
        );
        let (records, problem) = oracle::strict(&decoded);
        let problem = match problem {
            // Where the decoded bytes run out, a broken stream is the error.
            Some((At::PartialHeader | At::PastEnd, offset)) if !whole => Some((None, offset)),
            None if !whole => Some((None, decoded.len())),
            Some((at, offset)) => Some((Some(at), offset)),
            None => None,
        };
        assert!(
            strict.records == records,
            "{what}: strict mode records before the error"
        );
        match (problem, &strict.error) {
            (None, None) => {}
            (Some((at, offset)), Some(error)) => {
                let expected: &[&str] = match &at {
                    None => &["decompress"],
                    Some(at) => kind_names(at, false),
                };
                assert!(
                    expected.contains(&error.kind_name()),
                    "{what}: expected {at:?}, got {error}"
                );
                assert_eq!(error.location.offset, offset as u64, "{what}: {error}");
                if at.is_none() {
                    let damage = error.stream_damage().expect("stream damage offsets");
                    assert!(damage.compressed_offset <= bytes.len() as u64, "{what}");
                    assert_eq!(damage.decompressed_offset, decoded.len() as u64, "{what}");
                }
            }
            (expected, got) => panic!(
                "{what}: expected {expected:?}, got {:?}",
                got.as_ref().map(|e| e.to_string())
            ),
        }
    }
    assert!(modelled > 100, "{compression}: only {modelled} mutants modelled");
    println!("150 {compression} mutants ({modelled} modelled): {recovered} records recovered");
}

#[test]
fn gzip_mutants_give_every_record_decodable_before_the_damage() {
    compressed_mutants(Compression::Gzip, 0x5eed_0002);
}

#[test]
fn zlib_mutants_give_every_record_decodable_before_the_damage() {
    compressed_mutants(Compression::Zlib, 0x5eed_0003);
}

/// A broken compressed file among others, under resync: its records before the damage are
/// read, the damage is a problem of that file, and the run goes on with the next file.
#[test]
fn a_broken_stream_ends_its_file_and_the_run_goes_on() {
    let mut rng = Rng(0x5eed_0004);
    let first = payloads(&mut rng, 30, 0);
    let second = payloads(&mut rng, 5, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = dir.path().join("a.tfrecord.zz");
    let mut bytes = write(&first, Compression::Zlib);
    let adler = bytes.len() - 1;
    bytes[adler] ^= 0xff;
    std::fs::write(&broken, &bytes).expect("write");
    let cut = dir.path().join("b.tfrecord.gz");
    let gz = write(&first, Compression::Gzip);
    std::fs::write(&cut, &gz[..gz.len() / 2]).expect("write");
    let fine = dir.path().join("c.tfrecord");
    std::fs::write(&fine, write(&second, Compression::None)).expect("write");

    let files = vec![broken, cut, fine];
    let options = ReaderOptions::default().on_corruption(OnCorruption::Resync);
    let mut reader = tfrec::record::MultiFileReader::new(files, options);
    let mut got = Vec::new();
    while let Some(record) = reader.next_record().expect("the run goes on") {
        got.push(record.to_vec());
    }
    assert_eq!(
        got[..first.len()],
        first[..],
        "every record of the file with a bad checksum"
    );
    assert!(got.ends_with(&second), "the file after the broken ones");
    let from_cut = got.len() - first.len() - second.len();
    assert!(from_cut > 0 && got[first.len()..first.len() + from_cut] == first[..from_cut]);
    let problems: Vec<&str> = reader.problems().iter().map(|p| p.kind_name()).collect();
    assert_eq!(problems, ["decompress", "decompress"]);
    assert_eq!(reader.stats().skipped_files, 2);
}

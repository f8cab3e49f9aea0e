//! Unit tests of the reader: framing, large records, resynchronisation, compressed input.

use std::io;

use super::options::LARGE_RECORD_FIRST_CHUNK;
use super::*;
use crate::record::format::{FOOTER_LEN, FRAMING_LEN, HEADER_LEN};
use crate::record::RecordWriter;

fn framed(records: &[&[u8]]) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new());
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap()
}

fn read_all<R: Read>(reader: &mut RecordReader<R>) -> Result<Vec<Vec<u8>>, RecordError> {
    let mut out = Vec::new();
    while let Some(r) = reader.next_record()? {
        out.push(r.to_vec());
    }
    Ok(out)
}

/// Hands out its bytes a few at a time, as a pipe or a growing file would.
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

#[test]
fn partial_reads_give_the_same_records() {
    let data = framed(&[b"a", b"", b"hello world", &[7u8; 3000]]);
    for step in [1, 2, 5, 13, 4096] {
        let mut reader = RecordReader::new(Trickle { data: &data, step });
        let got = read_all(&mut reader).unwrap();
        assert_eq!(got.len(), 4, "step {step}");
        assert_eq!(got[3], vec![7u8; 3000]);
    }
}

#[test]
fn records_larger_than_the_window_use_the_large_buffer() {
    let big = vec![0xabu8; 300_000];
    let data = framed(&[b"x", &big, b"y", &big[..70_000]]);
    let options = ReaderOptions::default().buffer_size(64 << 10);
    let mut reader = RecordReader::with_options(
        Trickle {
            data: &data,
            step: 10_000,
        },
        Compression::None,
        options,
    );
    let got = read_all(&mut reader).unwrap();
    assert_eq!(
        got,
        vec![b"x".to_vec(), big.clone(), b"y".to_vec(), big[..70_000].to_vec()]
    );
    assert_eq!(reader.stats().records, 4);
}

#[test]
fn data_crc_error_names_the_data_offset() {
    let mut data = framed(&[b"first", b"second"]);
    let second = HEADER_LEN + 5 + FOOTER_LEN;
    data[second + HEADER_LEN + 1] ^= 0x40;
    let mut reader = RecordReader::new(data.as_slice());
    assert_eq!(reader.next_record().unwrap(), Some(&b"first"[..]));
    let err = reader.next_record().unwrap_err();
    assert!(matches!(err.kind, RecordErrorKind::DataCrcMismatch { .. }), "{err}");
    assert_eq!(err.location.offset, second as u64);
    assert_eq!(err.tf_offset(), (second + HEADER_LEN) as u64);
    assert_eq!(err.location.record_index, 1);
    assert!(
        reader.next_record().unwrap().is_none(),
        "the reader ends after an error"
    );
}

#[test]
fn unverified_reads_skip_the_data_crc() {
    let mut data = framed(&[b"first"]);
    data[HEADER_LEN] = b'F';
    let options = ReaderOptions::default().verify_data_crc(false);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
    assert_eq!(read_all(&mut reader).unwrap(), vec![b"First".to_vec()]);
}

#[test]
fn resync_skips_a_bad_length_and_finds_the_next_record() {
    let records: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 40 + i as usize]).collect();
    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut data = framed(&refs);
    let second = HEADER_LEN + 40 + FOOTER_LEN;
    data[second + 2] ^= 1; // the length of record 1
    let options = ReaderOptions::default().on_corruption(OnCorruption::Resync);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
    let got = read_all(&mut reader).unwrap();
    assert_eq!(
        got,
        vec![
            records[0].clone(),
            records[2].clone(),
            records[3].clone(),
            records[4].clone()
        ]
    );
    let stats = reader.stats();
    assert_eq!(stats.skipped_regions, 1);
    assert_eq!(stats.skipped_bytes, (HEADER_LEN + 41 + FOOTER_LEN) as u64);
    assert_eq!(reader.problems().len(), 1);
    assert_eq!(reader.problems()[0].kind_name(), "length_crc_mismatch");
}

#[test]
fn resync_after_a_bad_data_crc_loses_only_that_record() {
    let mut data = framed(&[b"aaaa", b"bbbb", b"cccc"]);
    data[HEADER_LEN + 8 + FOOTER_LEN + HEADER_LEN] ^= 1;
    let options = ReaderOptions::default().on_corruption(OnCorruption::Resync);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
    assert_eq!(read_all(&mut reader).unwrap(), vec![b"aaaa".to_vec(), b"cccc".to_vec()]);
    assert_eq!(reader.stats().skipped_regions, 1);
}

#[test]
fn skip_file_abandons_the_rest() {
    let mut data = framed(&[b"aaaa", b"bbbb", b"cccc"]);
    data[HEADER_LEN + 8 + FOOTER_LEN] ^= 1;
    let options = ReaderOptions::default().on_corruption(OnCorruption::SkipFile);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
    assert_eq!(read_all(&mut reader).unwrap(), vec![b"aaaa".to_vec()]);
    assert_eq!(reader.stats().skipped_files, 1);
}

#[test]
fn torn_tail_is_an_error_unless_tolerated() {
    let mut data = framed(&[b"aaaa"]);
    data.extend_from_slice(&[1, 2, 3]);
    let mut reader = RecordReader::new(data.as_slice());
    assert_eq!(reader.next_record().unwrap(), Some(&b"aaaa"[..]));
    let err = reader.next_record().unwrap_err();
    assert!(matches!(err.kind, RecordErrorKind::PartialHeader { available: 3 }));

    let options = ReaderOptions::default().torn_tail(TornTail::Skip);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
    assert_eq!(read_all(&mut reader).unwrap(), vec![b"aaaa".to_vec()]);
    assert_eq!(reader.stats().torn_tail_bytes, 3);
}

#[test]
fn a_huge_length_on_a_stream_allocates_only_what_follows() {
    let mut data = crate::record::format::encode_header(1 << 40).to_vec();
    data.extend_from_slice(&[0u8; 5000]);
    let options = ReaderOptions::default().max_record_len(u64::MAX);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
    let err = reader.next_record().unwrap_err();
    assert!(
        matches!(err.kind, RecordErrorKind::Truncated { available: 5000, .. }),
        "{err}"
    );
    assert!(reader.large.len() <= LARGE_RECORD_FIRST_CHUNK);

    let mut reader = RecordReader::new(data.as_slice());
    let err = reader.next_record().unwrap_err();
    assert!(matches!(err.kind, RecordErrorKind::LengthOverLimit { .. }), "{err}");
}

#[test]
fn resync_rescans_a_truncated_large_record() {
    // A damaged length that passes its CRC by construction: a header claiming 10 MB, then
    // two real records. Resync must find them inside the bytes the large read consumed.
    let mut data = crate::record::format::encode_header(10 << 20).to_vec();
    data.extend_from_slice(&framed(&[&[5u8; 200_000], b"tail"]));
    let options = ReaderOptions::default()
        .on_corruption(OnCorruption::Resync)
        .buffer_size(64 << 10);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
    let got = read_all(&mut reader).unwrap();
    assert_eq!(got, vec![vec![5u8; 200_000], b"tail".to_vec()]);
    assert_eq!(reader.stats().skipped_bytes, HEADER_LEN as u64);
}

#[test]
fn seek_reads_a_record_in_the_middle() {
    let data = framed(&[b"zero", b"one", b"two"]);
    let mut reader = RecordReader::new_seekable(io::Cursor::new(data), ReaderOptions::default()).unwrap();
    reader.seek_to((HEADER_LEN + 4 + FOOTER_LEN) as u64, 1).unwrap();
    assert_eq!(reader.next_record().unwrap(), Some(&b"one"[..]));
}

fn resync() -> ReaderOptions {
    ReaderOptions::default().on_corruption(OnCorruption::Resync)
}

fn numbered(n: usize, len: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![i as u8; len + i]).collect()
}

fn framed_owned(records: &[Vec<u8>]) -> Vec<u8> {
    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    framed(&refs)
}

#[test]
fn resync_after_a_deleted_byte_rescans_instead_of_trusting_the_length() {
    // Deleting a byte of record 1's data leaves its valid length pointing one byte into
    // record 2; jumping by that length would lose record 2.
    let records = numbered(5, 30);
    let mut data = framed_owned(&records);
    data.remove(HEADER_LEN + 30 + FOOTER_LEN + HEADER_LEN + 3);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, resync());
    let got = read_all(&mut reader).unwrap();
    let expected: Vec<Vec<u8>> = [0, 2, 3, 4].iter().map(|&i| records[i].clone()).collect();
    assert_eq!(got, expected);
    assert_eq!(reader.problems().len(), 1);
    assert_eq!(reader.problems()[0].kind_name(), "data_crc_mismatch");
    assert_eq!(reader.stats().skipped_regions, 1);
}

#[test]
fn resync_after_a_torn_write_and_an_append_keeps_the_appended_records() {
    // A writer died half-way through record 1, then later records were appended.
    let records = numbered(4, 50);
    let whole = framed_owned(&records[..2]);
    let mut data = whole[..whole.len() - 20].to_vec();
    data.extend_from_slice(&framed_owned(&records[2..]));
    for stream_len_known in [false, true] {
        let mut reader = if stream_len_known {
            let mut r = RecordReader::with_options(data.as_slice(), Compression::None, resync());
            r.stream_len = Some(data.len() as u64);
            r
        } else {
            RecordReader::with_options(data.as_slice(), Compression::None, resync())
        };
        let got = read_all(&mut reader).unwrap();
        assert_eq!(got, vec![records[0].clone(), records[2].clone(), records[3].clone()]);
    }
}

#[test]
fn a_truncated_large_record_under_resync_gives_back_what_followed_its_header() {
    // A torn large record followed by an appended one: its bytes are scanned again.
    let big = vec![3u8; 100_000];
    let torn = framed(&[&big]);
    let mut data = torn[..50_000].to_vec();
    data.extend_from_slice(&framed(&[b"after", &big]));
    let options = resync().buffer_size(64 << 10);
    let mut reader = RecordReader::with_options(
        Trickle {
            data: &data,
            step: 7000,
        },
        Compression::None,
        options,
    );
    assert_eq!(read_all(&mut reader).unwrap(), vec![b"after".to_vec(), big.clone()]);
}

#[test]
fn a_torn_tail_under_resync_is_skipped_and_reported() {
    let mut data = framed(&[b"aaaa"]);
    data.extend_from_slice(&[1, 2, 3]);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, resync());
    assert_eq!(read_all(&mut reader).unwrap(), vec![b"aaaa".to_vec()]);
    assert_eq!(reader.problems().len(), 1);
    assert_eq!(reader.problems()[0].kind_name(), "partial_header");
    assert_eq!(reader.stats().skipped_bytes, 3);
}

#[test]
fn a_length_past_the_end_of_a_file_is_length_exceeds_file_and_recoverable() {
    let mut data = crate::record::format::encode_header(1000).to_vec();
    data.extend_from_slice(&framed(&[b"inside"]));
    let mut reader = RecordReader::new_seekable(io::Cursor::new(data.clone()), ReaderOptions::default()).unwrap();
    let err = reader.next_record().unwrap_err();
    assert!(
        matches!(err.kind, RecordErrorKind::LengthExceedsFile { len: 1000, .. }),
        "{err}"
    );
    assert!(err.is_recoverable());
    let mut reader = RecordReader::new_seekable(io::Cursor::new(data), resync()).unwrap();
    assert_eq!(read_all(&mut reader).unwrap(), vec![b"inside".to_vec()]);

    let mut stream = crate::record::format::encode_header(1000).to_vec();
    stream.extend_from_slice(&[0; 10]);
    let err = RecordReader::new(stream.as_slice()).next_record().unwrap_err();
    assert!(matches!(err.kind, RecordErrorKind::Truncated { .. }), "{err}");
    assert!(err.is_recoverable(), "resync rescans a truncated record");
}

fn compressed(records: &[Vec<u8>], compression: Compression) -> Vec<u8> {
    use crate::record::WriterOptions;
    let mut w = RecordWriter::with_options(Vec::new(), WriterOptions::default().compression(compression));
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap()
}

fn read_stream(bytes: &[u8], options: ReaderOptions) -> (Vec<Vec<u8>>, Option<RecordError>, Vec<String>) {
    let mut reader = RecordReader::from_stream(bytes, options).unwrap();
    let mut got = Vec::new();
    let error = loop {
        match reader.next_record() {
            Ok(Some(r)) => got.push(r.to_vec()),
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    let problems = reader.problems().iter().map(|p| p.kind_name().to_owned()).collect();
    (got, error, problems)
}

#[test]
fn a_damaged_zlib_checksum_still_gives_every_record() {
    let records = numbered(259, 20);
    let mut bytes = compressed(&records, Compression::Zlib);
    let last = bytes.len() - 2;
    bytes[last] ^= 0x55;
    let options = ReaderOptions::default().compression(Compression::Zlib);
    let (got, error, _) = read_stream(&bytes, options.clone());
    assert_eq!(got, records);
    let error = error.expect("the checksum error");
    assert_eq!(error.kind_name(), "decompress");
    let plain_len = framed_owned(&records).len() as u64;
    assert_eq!(error.location.offset, plain_len);
    let damage = error.stream_damage().expect("offsets");
    assert_eq!(damage.decompressed_offset, plain_len);
    assert!(damage.compressed_offset > 0 && damage.compressed_offset <= bytes.len() as u64);
    assert!(error.to_string().contains("compressed byte"), "{error}");

    let (got, error, problems) = read_stream(&bytes, options.on_corruption(OnCorruption::Resync));
    assert_eq!(got, records);
    assert!(error.is_none(), "resync ends the file instead of failing");
    assert_eq!(problems, ["decompress"]);
}

#[test]
fn a_cut_gzip_stream_gives_the_records_before_the_cut_in_every_mode() {
    let records = numbered(40, 200);
    let bytes = compressed(&records, Compression::Gzip);
    let cut = &bytes[..bytes.len() / 2];
    let base = ReaderOptions::default().compression(Compression::Gzip);
    let (strict, error, _) = read_stream(cut, base.clone());
    assert!(!strict.is_empty() && strict.len() < records.len());
    assert_eq!(strict[..], records[..strict.len()]);
    let error = error.expect("an error");
    assert_eq!(error.kind_name(), "decompress");
    let offset: usize = records[..strict.len()].iter().map(|r| r.len() + FRAMING_LEN).sum();
    assert_eq!(
        error.location.offset, offset as u64,
        "names the record the cut went into"
    );
    for policy in [OnCorruption::Resync, OnCorruption::SkipFile] {
        let (got, error, problems) = read_stream(cut, base.clone().on_corruption(policy));
        assert_eq!(got, strict, "{policy:?}");
        assert!(error.is_none(), "{policy:?}");
        assert_eq!(problems, ["decompress"], "{policy:?}");
        let mut reader = RecordReader::from_stream(cut, base.clone().on_corruption(policy)).unwrap();
        while reader.next_record().unwrap().is_some() {}
        assert_eq!(reader.problems()[0].location.offset, offset as u64, "{policy:?}");
        assert_eq!(reader.stats().skipped_files, 1, "{policy:?}");
    }
}

#[test]
fn a_plain_file_with_a_damaged_first_header_is_never_read_as_compressed() {
    let dir = tempfile::tempdir().unwrap();
    for len in [376usize, 35_615] {
        let records = vec![vec![9u8; len], b"second".to_vec()];
        let mut data = framed_owned(&records);
        data[9] ^= 0x20; // the first header's CRC
        for name in ["data.tfrecord", "data-00000-of-00001"] {
            let path = dir.path().join(name);
            std::fs::write(&path, &data).unwrap();
            let mut reader = RecordReader::open(&path, resync()).unwrap();
            assert_eq!(reader.compression(), Compression::None, "{name} {len}");
            assert_eq!(read_all(&mut reader).unwrap(), vec![b"second".to_vec()], "{name} {len}");
        }
    }
}

#[test]
fn a_torn_record_body_is_a_torn_tail_when_tolerated() {
    // Small records in the window, and one larger than the window (the large buffer), cut
    // inside their data; with the stream's length known (a plain file) and not (a stream).
    let small = numbered(3, 50);
    let large = vec![vec![1u8; 10], vec![2u8; 200_000]];
    for records in [&small, &large] {
        let whole = framed_owned(records);
        let cut = whole.len() - 30;
        let torn = &whole[..cut];
        for stream_len_known in [false, true] {
            for policy in [OnCorruption::Fail, OnCorruption::Resync, OnCorruption::SkipFile] {
                let options = ReaderOptions::default()
                    .torn_tail(TornTail::Skip)
                    .on_corruption(policy)
                    .buffer_size(64 << 10);
                let mut reader = RecordReader::with_options(torn, Compression::None, options);
                if stream_len_known {
                    reader.stream_len = Some(torn.len() as u64);
                }
                let got = read_all(&mut reader).unwrap();
                assert_eq!(got, records[..records.len() - 1].to_vec(), "{policy:?}");
                let last = (whole.len() - FRAMING_LEN - records[records.len() - 1].len()) as u64;
                assert_eq!(reader.stats().torn_tail_bytes, cut as u64 - last, "{policy:?}");
                assert!(reader.problems().is_empty(), "{policy:?}");
                // Without the tolerance it is the error it always was.
                let mut strict = RecordReader::with_options(torn, Compression::None, ReaderOptions::default());
                assert!(read_all(&mut strict).is_err());
            }
        }
    }
}

#[test]
fn a_cut_record_that_intact_records_follow_is_damage_not_a_tail() {
    let records = numbered(4, 50);
    let whole = framed_owned(&records[..2]);
    let mut data = whole[..whole.len() - 20].to_vec();
    data.extend_from_slice(&framed_owned(&records[2..]));
    let tolerant = ReaderOptions::default().torn_tail(TornTail::Skip);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, tolerant.clone());
    assert_eq!(reader.next_record().unwrap(), Some(&records[0][..]));
    let err = reader.next_record().unwrap_err();
    assert_eq!(err.location.record_index, 1);
    let options = tolerant.on_corruption(OnCorruption::Resync);
    let mut reader = RecordReader::with_options(data.as_slice(), Compression::None, options);
    let got = read_all(&mut reader).unwrap();
    assert_eq!(got, vec![records[0].clone(), records[2].clone(), records[3].clone()]);
    assert_eq!(reader.problems().len(), 1);
    assert_eq!(reader.stats().torn_tail_bytes, 0);
}

#[test]
fn a_compressed_stream_read_as_plain_says_what_it_looks_like() {
    let records = numbered(3, 50);
    for (compression, name) in [(Compression::Gzip, "GZIP"), (Compression::Zlib, "ZLIB")] {
        let bytes = compressed(&records, compression);
        let err = read_all(&mut RecordReader::new(bytes.as_slice())).unwrap_err();
        assert!(
            matches!(err.kind, RecordErrorKind::LengthCrcMismatch { looks_compressed: Some(c), .. } if c == compression),
            "{err}"
        );
        assert!(
            err.to_string().contains(&format!("compression_type=\"{name}\"")),
            "{err}"
        );
    }
    // Damage at the first byte of a plain stream is only damage.
    let mut plain = framed_owned(&records);
    plain[9] ^= 1;
    let err = read_all(&mut RecordReader::new(plain.as_slice())).unwrap_err();
    assert!(
        matches!(
            err.kind,
            RecordErrorKind::LengthCrcMismatch {
                looks_compressed: None,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.location.offset, 0);
    let mut reader = RecordReader::with_options(plain.as_slice(), Compression::None, resync());
    assert_eq!(read_all(&mut reader).unwrap(), records[1..].to_vec());
}

#[test]
fn damaged_records_before_a_stream_error_are_each_reported() {
    use std::io::Write;
    // A record, then twice a header promising more bytes than the stream holds and an intact
    // empty record; then the gzip trailer's CRC is damaged. Read as plain, the two headers are
    // two damaged regions (at 19 and 47); read as GZIP they must be too, before the stream error.
    let mut plain = framed(&[b"abc"]);
    for _ in 0..2 {
        plain.extend_from_slice(&crate::record::format::encode_header(1_000_000));
        plain.extend_from_slice(&framed(&[b""]));
    }
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(&plain).unwrap();
    let mut bytes = gzip.finish().unwrap();
    let crc = bytes.len() - 8;
    bytes[crc] ^= 1;
    let options = ReaderOptions::default()
        .compression(Compression::Gzip)
        .on_corruption(OnCorruption::Resync);
    let mut reader = RecordReader::from_stream(bytes.as_slice(), options).unwrap();
    assert_eq!(read_all(&mut reader).unwrap(), [b"abc".to_vec(), vec![], vec![]]);
    let problems: Vec<(u64, &str)> = reader
        .problems()
        .iter()
        .map(|p| (p.location.offset, p.kind_name()))
        .collect();
    let end = plain.len() as u64;
    assert_eq!(problems, [(19, "truncated"), (47, "truncated"), (end, "decompress")]);
    assert_eq!(reader.stats().skipped_regions, 2);
    assert_eq!(reader.stats().skipped_files, 1);
}

#[test]
fn a_stream_read_as_the_wrong_compression_says_what_it_is_under_every_policy() {
    let records = numbered(3, 50);
    let plain = framed_owned(&records);
    let gzip = compressed(&records, Compression::Gzip);
    let cases = [
        (
            &plain,
            Compression::Gzip,
            Compression::None,
            "this file is a plain TFRecord",
        ),
        (&plain, Compression::Zlib, Compression::None, "`--compression none`"),
        (
            &gzip,
            Compression::Zlib,
            Compression::Gzip,
            "this file is a GZIP stream",
        ),
    ];
    for (bytes, expected, found, words) in cases {
        for policy in [OnCorruption::Fail, OnCorruption::Resync, OnCorruption::SkipFile] {
            let options = ReaderOptions::default().compression(expected).on_corruption(policy);
            let (got, error, problems) = read_stream(bytes, options);
            let what = format!("{found} read as {expected}, {policy:?}");
            assert!(got.is_empty(), "{what}");
            assert!(problems.is_empty(), "{what}: not skipped as damage");
            let error = error.expect("an error");
            assert!(
                matches!(error.kind, RecordErrorKind::WrongCompression { expected: e, found: f } if e == expected && f == found),
                "{what}: {error}"
            );
            assert!(error.to_string().contains(words), "{what}: {error}");
            assert_eq!(error.category(), crate::ErrorCategory::Usage);
        }
    }
}

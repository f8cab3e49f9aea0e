//! The crate's error rule: a chained printer (anyhow's `{:#}`, a loop over `source()`) never
//! prints the same text twice. For an error of every layer, alone and inside `tfrec::Error`,
//! the texts along the `source()` chain must not contain one another.

use std::io::{self, Write};

use tfrec::example::{Example, SequenceExample, TypeHints};
use tfrec::parse::{ExampleParser, FeatureSpecs, ParseError, ParseErrorKind};
use tfrec::pipeline::PipelineError;
use tfrec::record::{
    Compression, IndexEntry, IndexError, OnCorruption, ReaderOptions, RecordError, RecordFile, RecordIndex,
    RecordReader, RecordWriter, SeekIndex, WriterOptions,
};
use tfrec::state_saver::{SequenceInput, StateSaverError, StateSaverOptions};
use tfrec::tensor_proto::{decode_tensor, TensorProtoError};

/// The texts of `error` and of every `source()` below it.
fn chain(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut texts = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        texts.push(e.to_string());
        next = e.source();
    }
    texts
}

/// Fails when a text of the chain repeats (is contained in) an earlier one, or is empty.
fn assert_no_repeats(error: &(dyn std::error::Error + 'static)) {
    let texts = chain(error);
    for (i, outer) in texts.iter().enumerate() {
        assert!(!outer.is_empty(), "empty text in chain {texts:?}");
        for inner in &texts[i + 1..] {
            assert!(
                !outer.contains(inner.as_str()),
                "chained printing would repeat {inner:?} (already in {outer:?}); chain: {texts:?}"
            );
        }
    }
    // The anyhow-style rendering, as a user would see it.
    let printed = texts.join(": ");
    assert!(printed.len() >= texts[0].len());
}

/// Checks the error alone and as `tfrec::Error`, whose text must be the same.
fn check<E>(error: E)
where
    E: std::error::Error + Into<tfrec::Error> + 'static,
{
    assert_no_repeats(&error);
    let text = error.to_string();
    let wrapped: tfrec::Error = error.into();
    assert_eq!(wrapped.to_string(), text, "tfrec::Error adds no text of its own");
    assert_no_repeats(&wrapped);
}

fn framed(records: &[&[u8]]) -> Vec<u8> {
    let mut writer = RecordWriter::new(Vec::new());
    for r in records {
        writer.write_record(r).expect("write to memory");
    }
    writer.finish().expect("finish in memory")
}

fn read_error(bytes: &[u8], options: ReaderOptions) -> RecordError {
    let mut reader = RecordReader::from_stream(bytes, options).expect("a stream in memory");
    loop {
        match reader.next_record() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("expected an error"),
            Err(e) => return e,
        }
    }
}

fn record_errors() -> Vec<RecordError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = RecordReader::open(dir.path().join("missing.tfrecord"), ReaderOptions::default())
        .err()
        .expect("no such file");
    let mut data_crc = framed(&[b"hello", b"world"]);
    data_crc[12 + 2] ^= 1;
    let mut length_crc = framed(&[b"hello"]);
    length_crc[9] ^= 1;
    let plain = ReaderOptions::default().compression(Compression::None);
    let mut gzip = RecordWriter::with_options(
        Vec::new(),
        tfrec::record::WriterOptions::default().compression(Compression::Gzip),
    );
    gzip.write_record(&[7u8; 5000]).expect("write");
    let mut gzip = gzip.finish().expect("finish");
    let n = gzip.len();
    gzip[n - 6] ^= 0x55; // the GZIP trailer's CRC-32
    vec![
        missing,
        read_error(&data_crc, plain.clone()),
        read_error(&length_crc, plain.clone()),
        read_error(&data_crc[..data_crc.len() - 3], plain.clone()),
        read_error(&gzip, ReaderOptions::default().compression(Compression::Gzip)),
        read_error(&framed(&[b"x"])[..5], plain.clone().on_corruption(OnCorruption::Fail)),
    ]
}

#[test]
fn record_layer_errors_print_each_text_once() {
    let errors = record_errors();
    assert!(errors
        .iter()
        .any(|e| matches!(e.kind, tfrec::record::RecordErrorKind::Open(_))));
    assert!(
        errors.iter().any(|e| e.stream_damage().is_some()),
        "a damaged GZIP stream is among them"
    );
    for e in errors {
        assert_no_repeats(&e.kind);
        check(e);
    }

    struct Failing;
    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("disk on fire"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut writer = RecordWriter::new(Failing);
    let write_error = writer
        .write_record(b"x")
        .err()
        .or_else(|| writer.finish().err())
        .expect("the sink fails");
    assert!(write_error.to_string().contains("disk on fire"));
    check(write_error);

    let dir = tempfile::tempdir().expect("temp dir");
    let index_error = RecordIndex::load(dir.path().join("missing.index")).expect_err("no index file");
    assert!(matches!(index_error, IndexError::Io { .. }));
    check(index_error);
    check(IndexError::from(record_errors().remove(1)));
    // Random access: a compressed file whose seek index is not one, a stale index.
    let gz = dir.path().join("data.tfrecord.gz");
    let mut writer = RecordWriter::with_options(Vec::new(), WriterOptions::default().compression(Compression::Gzip));
    writer.write_record(b"x").expect("write to memory");
    std::fs::write(&gz, writer.finish().expect("finish")).expect("write");
    std::fs::write(SeekIndex::default_path(&gz), b"not a seek index").expect("write");
    check(RecordFile::open(&gz).expect_err("a damaged seek index"));
    let plain = dir.path().join("data.tfrecord");
    std::fs::write(&plain, framed(&[b"x"])).expect("write");
    let stale = RecordIndex::from_entries(vec![IndexEntry { offset: 0, len: 99 }]);
    check(RecordFile::with_index(&plain, stale).expect_err("stale"));
    check("bogus".parse::<Compression>().expect_err("not a compression"));
}

#[test]
fn message_layer_errors_print_each_text_once() {
    let decode = Example::decode(b"\x0a\x05ab").expect_err("cut short");
    check(decode.clone());
    check(SequenceExample::decode(b"\xff\xff").expect_err("bad tag"));
    check(Example::from_text("features { nonsense").expect_err("bad text"));
    check(Example::from_friendly_json("[1, 2", &TypeHints::default()).expect_err("bad JSON"));
}

#[test]
fn parse_layer_errors_print_each_text_once() {
    let spec = ExampleParser::new(&FeatureSpecs::new()).expect_err("no features");
    check(spec.clone());
    check(ParseError::from(spec));
    let decode = Example::decode(b"\x0a\x05ab").expect_err("cut short");
    let malformed = ParseError::new(ParseErrorKind::Malformed(decode)).example(3);
    check(malformed.clone());
    check(PipelineError::Parse {
        batch: 2,
        path: Some("data/part-0.tfrecord".into()),
        origin: None,
        error: Box::new(malformed),
    });
    for e in record_errors() {
        check(PipelineError::from(e));
    }
}

#[test]
fn state_saver_errors_print_each_text_once() {
    let options = StateSaverOptions::new(0, 2).capacity(4);
    let inputs: Vec<SequenceInput> = Vec::new();
    let Err(zero) = options.build(inputs) else {
        panic!("batch_size 0 is refused")
    };
    assert!(matches!(zero, StateSaverError::ZeroOption { option: "batch_size" }));
    check(zero);
    for e in record_errors() {
        check(StateSaverError::from(PipelineError::from(e)));
    }
    check(StateSaverError::Stopped {
        cause: "input",
        message: "input example 1: boom".into(),
    });
}

#[test]
fn tensor_proto_errors_print_each_text_once() {
    let e = decode_tensor(b"\x08").expect_err("cut short");
    assert!(matches!(e, TensorProtoError::Malformed(_)));
    check(e);
}

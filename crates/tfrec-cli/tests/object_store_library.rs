//! The library's object store writer and random access, in a process of their own: the store
//! reads its endpoint from the environment, set here for the whole process.

mod common;

use std::io::Write as _;
use std::path::Path;

use common::servers::{BUCKET, S3};

#[test]
fn s3_writer_dropped_mid_upload_leaves_no_object() {
    use tfrec::record::remote::RemoteWriter;
    let Some(s3) = S3::start() else { return };
    // The only test in this process, so nothing else reads the environment while it is set; the
    // store reads it when the bucket's client is first built.
    for (k, v) in s3.env() {
        std::env::set_var(k, v);
    }
    let url = format!("s3://{BUCKET}/partial.tfrecord");
    let chunk = vec![7u8; 1 << 20];
    {
        let mut writer = RemoteWriter::create(&url).expect("create");
        // Past the first parts, which are uploaded while the rest is written.
        for _ in 0..20 {
            writer.write_all(&chunk).expect("write");
        }
    }
    assert_eq!(s3.keys(), Vec::<String>::new(), "a dropped writer left an object");
    let mut writer = RemoteWriter::create(&url).expect("create");
    writer.write_all(&chunk).expect("write");
    assert_eq!(s3.keys(), Vec::<String>::new(), "an object before finish");
    writer.finish().expect("finish");
    assert_eq!(s3.keys(), ["partial.tfrecord"]);

    // Random access over ranged reads: the index is built in memory, nothing is written beside
    // the object; an index object beside it is used.
    let scratch = tempfile::tempdir().expect("temp dir");
    let local = scratch.path().join("notebook.tfrecord");
    common::write_examples(&local, 100);
    s3.upload(&local, "ra/notebook.tfrecord");
    let url = format!("s3://{BUCKET}/ra/notebook.tfrecord");
    let here = tfrec::record::RecordFile::with_index(&local, tfrec::record::RecordIndex::build(&local).expect("index"))
        .expect("open local");
    let there = tfrec::record::RecordFile::open(&url).expect("open the object");
    assert_eq!(there.len(), here.len());
    assert_eq!(there.index_file(), None);
    for i in [0, here.len() / 2, here.len() - 1] {
        assert_eq!(there.get(i).expect("get"), here.get(i).expect("get"), "record {i}");
    }
    assert_eq!(s3.keys(), ["partial.tfrecord", "ra/notebook.tfrecord"]);
    let index = tempfile::NamedTempFile::new().expect("temp file");
    here.index().save(index.path()).expect("save");
    s3.upload(index.path(), "ra/notebook.tfrecord.idx");
    let there = tfrec::record::RecordFile::open(&url).expect("open with its index");
    assert_eq!(
        there.index_file().and_then(Path::to_str),
        Some(format!("{url}.idx").as_str())
    );
    assert_eq!(there.get(3).expect("get"), here.get(3).expect("get"));
    let mut seeking = tfrec::record::IndexedReader::open(&url, here.index().clone()).expect("open seeking");
    assert_eq!(seeking.get(7).expect("get"), here.get(7).expect("get"));
    assert_eq!(seeking.get(2).expect("get"), here.get(2).expect("get"));

    // The pipeline over a GZIP object with its seek index beside it: read in spans on two
    // workers, the records of the local file in order.
    use tfrec::record::{Compression, RecordReader, RecordWriter, SeekIndex, WriterOptions};
    let gz = scratch.path().join("big.tfrecord.gz");
    let mut w = RecordWriter::create(&gz, WriterOptions::default().compression(Compression::Gzip)).expect("create");
    // Bytes of little redundancy, so that deflate blocks (where checkpoints go) stay short.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in 0..3000u32 {
        let record: Vec<u8> = (0..600 + i % 700)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 64) as u8
            })
            .collect();
        w.write_record(&record).expect("write");
    }
    w.finish().expect("finish");
    let seek = SeekIndex::build(&gz, Compression::Gzip, 64 << 10).expect("seek index");
    assert!(seek.checkpoints().len() > 4);
    seek.save(&SeekIndex::default_path(&gz)).expect("save");
    s3.upload(&gz, "ra/big.tfrecord.gz");
    s3.upload(&SeekIndex::default_path(&gz), "ra/big.tfrecord.gz.zidx");
    let mut expected = Vec::new();
    let mut reader = RecordReader::open(&gz, Default::default()).expect("open");
    while let Some(r) = reader.next_record().expect("read") {
        expected.push(r.to_vec());
    }
    let url = format!("s3://{BUCKET}/ra/big.tfrecord.gz");
    let mut iter = tfrec::pipeline::Dataset::from_files(vec![url.into()])
        .batch(100, false)
        .expect("batch")
        .raw()
        .threads(2)
        .iter();
    let counters = iter.counters();
    let mut got = Vec::new();
    for batch in iter.by_ref() {
        let batch = batch.expect("batch");
        got.extend(batch.records().into_iter().map(<[u8]>::to_vec));
    }
    drop(iter);
    assert!(
        counters.spans.load(std::sync::atomic::Ordering::Relaxed) > 4,
        "read in spans"
    );
    assert_eq!(got, expected);
}

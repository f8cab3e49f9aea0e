//! One file on many cores: files with an index beside them (a GZIP or ZLIB file's seek index,
//! a plain file's `.idx`) read in spans by the pipeline's workers give the records, origins,
//! batches, errors and skip counts of a sequential read, damaged files included.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

mod common;

use common::Rng;
use tfrec::pipeline::{Counters, Dataset, RecordOrigin};
use tfrec::record::{
    Compression, MultiFileReader, OnCorruption, ReaderOptions, RecordIndex, RecordWriter, SeekIndex, WriterOptions,
};

/// Checkpoints this far apart (the smallest spacing), so that small files have many spans.
const SPACING: u64 = 32 << 10;

/// A file of `records` records of seeded sizes (10 B to about 60 KB, a few of 200 KB), each
/// record's bytes naming its number.
fn write_file(path: &Path, compression: Compression, records: usize, seed: u64) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let options = WriterOptions::default().compression(compression);
    let mut w = RecordWriter::create(path, options).expect("create");
    for r in 0..records {
        let len = match rng.below(20) {
            0 => 200_000,
            1..=5 => 10 + rng.below(60_000),
            _ => 10 + rng.below(3_000),
        } as usize;
        let mut data = format!("record {r} of seed {seed}:").into_bytes();
        data.extend((0..len).map(|i| (rng.below(7) as u8).wrapping_add((i % 251) as u8)));
        w.write_record(&data).expect("write");
    }
    w.finish().expect("finish");
}

/// Saves the index of `path` beside it.
fn index_file(path: &Path, compression: Compression) {
    match compression {
        Compression::None => RecordIndex::build(path)
            .expect("index")
            .save(RecordIndex::default_path(path))
            .expect("save"),
        c => SeekIndex::build(path, c, SPACING)
            .expect("seek index")
            .save(&SeekIndex::default_path(path))
            .expect("save"),
    }
}

/// What a run gave: each batch's records and origins, then the error that ended it.
#[derive(Debug, PartialEq)]
struct Run {
    batches: Vec<Vec<(Vec<u8>, RecordOrigin)>>,
    error: Option<String>,
    skipped: (u64, u64, u64),
}

fn run(dataset: Dataset, batch: usize, threads: usize) -> (Run, std::sync::Arc<Counters>) {
    let pipeline = dataset.batch(batch, false).expect("batch").raw().threads(threads);
    let mut iter = pipeline.iter();
    let counters = iter.counters();
    let mut out = Run {
        batches: Vec::new(),
        error: None,
        skipped: (0, 0, 0),
    };
    for batch in iter.by_ref() {
        match batch {
            Ok(b) => out.batches.push(
                (0..b.len())
                    .map(|i| (b.get(i).expect("record").to_vec(), b.origin(i).expect("origin")))
                    .collect(),
            ),
            Err(e) => {
                out.error = Some(e.to_string());
                break;
            }
        }
    }
    drop(iter);
    out.skipped = (
        counters.skipped_regions.load(Ordering::Relaxed),
        counters.skipped_bytes.load(Ordering::Relaxed),
        counters.skipped_files.load(Ordering::Relaxed),
    );
    (out, counters)
}

fn spans(counters: &Counters) -> u64 {
    counters.spans.load(Ordering::Relaxed)
}

#[test]
fn indexed_files_in_spans_give_the_batches_of_a_sequential_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    for seed in 1..=3u64 {
        for compression in [Compression::Gzip, Compression::Zlib, Compression::None] {
            let ext = match compression {
                Compression::Gzip => "gz",
                Compression::Zlib => "zz",
                Compression::None => "tfrecord",
            };
            // Two indexed files around one without an index.
            let files: Vec<PathBuf> = (0..3)
                .map(|k| {
                    let path = dir.path().join(format!("s{seed}-{k}.{ext}"));
                    write_file(&path, compression, 150 + 40 * k, seed * 10 + k as u64);
                    if k != 1 {
                        index_file(&path, compression);
                    }
                    path
                })
                .collect();
            let dataset = || Dataset::from_files(files.clone());
            let (sequential, counters) = run(dataset(), 7, 0);
            assert_eq!(spans(&counters), 0, "one thread reads sequentially");
            assert_eq!(sequential.error, None);
            assert_eq!(sequential.batches.iter().map(Vec::len).sum::<usize>(), 150 + 190 + 230);
            for threads in [2, 3] {
                let (parallel, counters) = run(dataset(), 7, threads);
                assert!(spans(&counters) > 2, "{compression} seed {seed}: read in spans");
                assert_eq!(parallel, sequential, "{compression} seed {seed}, {threads} threads");
            }
            // Interleaved, sharded and cut short: the same stream either way.
            let staged = || {
                dataset()
                    .interleave(2, 3)
                    .expect("interleave")
                    .shard(2, 1)
                    .expect("shard")
                    .take(200)
            };
            let (sequential, _) = run(staged(), 5, 0);
            let (parallel, counters) = run(staged(), 5, 3);
            assert!(spans(&counters) > 0);
            assert_eq!(parallel, sequential, "{compression} seed {seed}, staged");
        }
    }
}

/// Overwrites byte `at` of `path` with its complement, keeping the file's modification time
/// (so its index still looks current, as after damage in place).
fn damage(path: &Path, at: u64) {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).expect("mtime");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open");
    let mut b = [0u8];
    f.seek(SeekFrom::Start(at)).expect("seek");
    f.read_exact(&mut b).expect("read");
    f.seek(SeekFrom::Start(at)).expect("seek");
    f.write_all(&[!b[0]]).expect("write");
    f.set_modified(mtime).expect("set mtime");
}

#[test]
fn a_damaged_indexed_file_fails_or_skips_as_the_sequential_read_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    for compression in [Compression::Gzip, Compression::Zlib, Compression::None] {
        let path = dir.path().join(format!("damaged.{compression}"));
        write_file(&path, compression, 400, 7);
        index_file(&path, compression);
        let len = std::fs::metadata(&path).expect("size").len();
        damage(&path, len * 2 / 3);
        for skip in [false, true] {
            let dataset = || {
                let d = Dataset::from_files(vec![path.clone()]);
                if skip {
                    d.skip_corrupt()
                } else {
                    d
                }
            };
            let (sequential, _) = run(dataset(), 3, 0);
            let (parallel, counters) = run(dataset(), 3, 3);
            assert!(spans(&counters) > 2, "{compression}: the spans before the damage");
            assert_eq!(parallel, sequential, "{compression}, skip_corrupt {skip}");
            if skip {
                assert_eq!(sequential.error, None, "{compression}: skipped");
                assert!(sequential.skipped.0 > 0, "{compression}: a region skipped");
            } else {
                let error = sequential.error.expect("the damage is an error");
                assert!(error.contains(&path.display().to_string()), "{error}");
                assert!(error.contains("record"), "{error}");
            }
        }
    }
}

#[test]
fn an_index_of_another_version_of_the_file_is_not_used() {
    let dir = tempfile::tempdir().expect("temp dir");
    for compression in [Compression::Gzip, Compression::None] {
        let path = dir.path().join(format!("grown.{compression}"));
        let other = dir.path().join(format!("other.{compression}"));
        write_file(&path, compression, 100, 3);
        index_file(&path, compression);
        // The file rewritten longer after its index was made.
        write_file(&other, compression, 160, 4);
        std::fs::rename(&other, &path).expect("replace");
        let (sequential, _) = run(Dataset::from_files(vec![path.clone()]), 4, 0);
        let (parallel, counters) = run(Dataset::from_files(vec![path.clone()]), 4, 3);
        if compression == Compression::None {
            // Passed over for a scan of the file's headers: the spans hold its 160 records,
            // not the index's 100.
            assert!(spans(&counters) > 0, "the plain file is scanned");
        } else {
            assert_eq!(spans(&counters), 0, "{compression}: the stale index is passed over");
        }
        assert_eq!(parallel, sequential);
        assert_eq!(parallel.batches.iter().map(Vec::len).sum::<usize>(), 160);
    }
}

#[test]
fn indexes_made_while_reading_are_saved_and_then_read_in_spans() {
    let dir = tempfile::tempdir().expect("temp dir");
    for compression in [Compression::Gzip, Compression::Zlib, Compression::None] {
        let path = dir.path().join(format!("unindexed.{compression}"));
        write_file(&path, compression, 300, 11);
        let index_path = match compression {
            Compression::None => RecordIndex::default_path(&path),
            _ => SeekIndex::default_path(&path),
        };
        let dataset = || Dataset::from_files(vec![path.clone()]);
        // The first epoch makes the index; the second reads with it, in spans.
        let (made, counters) = run(dataset().write_indexes(true).repeat(2), 6, 2);
        assert!(spans(&counters) > 0, "{compression}: the second epoch in spans");
        let saved = std::fs::read(&index_path).expect("the index is saved beside the file");
        // The same index `tfrec index` would make.
        let expected = match compression {
            Compression::None => {
                let mut bytes = Vec::new();
                RecordIndex::build(&path)
                    .expect("index")
                    .write_to(&mut bytes)
                    .expect("write");
                bytes
            }
            c => SeekIndex::build(&path, c, tfrec::record::DEFAULT_SPACING)
                .expect("seek index")
                .to_bytes(),
        };
        assert_eq!(saved, expected, "{compression}: the index made while reading");
        let (sequential, _) = run(dataset().repeat(2), 6, 0);
        assert_eq!(made, sequential, "{compression}");
        // Nothing is left beside the file but the index.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "temporary files left: {names:?}");
    }
}

#[test]
fn no_index_is_saved_for_a_damaged_file_or_unasked() {
    let dir = tempfile::tempdir().expect("temp dir");
    for compression in [Compression::Gzip, Compression::None] {
        let path = dir.path().join(format!("bad.{compression}"));
        write_file(&path, compression, 200, 5);
        let (_, _) = run(Dataset::from_files(vec![path.clone()]), 8, 2);
        let damaged_len = std::fs::metadata(&path).expect("size").len();
        damage(&path, damaged_len / 2);
        let (read, _) = run(
            Dataset::from_files(vec![path.clone()])
                .write_indexes(true)
                .skip_corrupt(),
            8,
            2,
        );
        assert!(read.skipped.0 > 0, "{compression}: damage skipped");
        for index in [RecordIndex::default_path(&path), SeekIndex::default_path(&path)] {
            assert!(!index.exists(), "{compression}: {} written", index.display());
        }
    }
}

#[test]
fn a_plain_file_without_index_is_scanned_ahead_and_gives_the_batches_of_a_sequential_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    for seed in [21, 22] {
        let path = dir.path().join(format!("plain-{seed}.tfrecord"));
        write_file(&path, Compression::None, 300, seed);
        let dataset = || Dataset::from_files(vec![path.clone()]);
        let (sequential, _) = run(dataset(), 7, 0);
        for threads in [2, 3] {
            let (parallel, counters) = run(dataset(), 7, threads);
            assert!(spans(&counters) > 0, "seed {seed}, {threads} threads: read in spans");
            assert_eq!(parallel, sequential, "seed {seed}, {threads} threads");
        }
        assert!(
            !RecordIndex::default_path(&path).exists(),
            "nothing written beside the file"
        );
        // Damage half way: the same error, or the same records skipped.
        let len = std::fs::metadata(&path).expect("size").len();
        damage(&path, len / 2);
        for skip in [false, true] {
            let dataset = || {
                let d = dataset();
                if skip {
                    d.skip_corrupt()
                } else {
                    d
                }
            };
            let (sequential, _) = run(dataset(), 7, 0);
            let (parallel, counters) = run(dataset(), 7, 3);
            assert!(spans(&counters) > 0, "seed {seed}: the spans before the damage");
            assert_eq!(parallel, sequential, "seed {seed}, skip {skip}");
        }
    }
}

#[test]
fn batches_kept_while_the_stream_reads_on_still_hold_their_records() {
    // Batches of many records take most spans' records in one run, which they hold where the
    // span was read instead of copying it: kept until the end, they must still give the
    // records of a sequential read, and at every batch size.
    let dir = tempfile::tempdir().expect("temp dir");
    for (k, compression) in [Compression::None, Compression::None, Compression::Gzip]
        .into_iter()
        .enumerate()
    {
        let path = dir.path().join(format!("kept-{k}.tfrecord"));
        write_file(&path, compression, 400, 40 + k as u64);
        // The first plain file is scanned ahead; the second has its `.idx`.
        if k > 0 {
            index_file(&path, compression);
        }
        let dataset = || Dataset::from_files(vec![path.clone(), path.clone()]);
        for batch in [1, 60, 1000] {
            let (sequential, _) = run(dataset(), batch, 0);
            for threads in [2, 3] {
                let pipeline = dataset().batch(batch, false).expect("batch").raw().threads(threads);
                let mut iter = pipeline.iter();
                let counters = iter.counters();
                let kept: Vec<_> = iter.by_ref().map(|b| b.expect("batch")).collect();
                drop(iter);
                assert!(spans(&counters) > 2, "{compression} batch {batch}: read in spans");
                let batches: Vec<Vec<(Vec<u8>, RecordOrigin)>> = kept
                    .iter()
                    .map(|b| {
                        (0..b.len())
                            .map(|i| (b.get(i).expect("record").to_vec(), b.origin(i).expect("origin")))
                            .collect()
                    })
                    .collect();
                assert_eq!(
                    batches, sequential.batches,
                    "{compression} batch {batch}, {threads} threads"
                );
                let bytes: usize = kept.iter().map(|b| b.data_len()).sum();
                let expected: usize = batches.iter().flatten().map(|(r, _)| r.len()).sum();
                assert_eq!(bytes, expected, "{compression} batch {batch}: data_len");
            }
        }
    }
}

/// What a multi-file reader read: each record with its file and offset, then the error that
/// ended it, and the regions it skipped.
type Read = (Vec<(Vec<u8>, usize, u64)>, Option<String>, u64);

/// What a multi-file reader on `threads` threads reads.
fn read_all(files: &[PathBuf], skip: bool, threads: usize) -> Read {
    let mut options = ReaderOptions::default();
    if skip {
        options = options.on_corruption(OnCorruption::Resync);
    }
    let mut reader = MultiFileReader::new(files.to_vec(), options).threads(threads);
    let mut records = Vec::new();
    let error = loop {
        match reader.next_located() {
            Ok(Some(r)) => records.push((r.data.to_vec(), r.file_index, r.offset)),
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    (records, error, reader.stats().skipped_regions)
}

#[test]
fn a_multi_file_reader_on_many_threads_reads_what_one_thread_reads() {
    // `count`, `verify` and `convert` read through it: its reading thread takes spans as the
    // helpers read them, and reads later ones itself while the next is being read.
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = Vec::new();
    for (k, compression) in [
        Compression::Gzip,
        Compression::Zlib,
        Compression::None,
        Compression::None,
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("many-{k}.{compression}"));
        write_file(&path, compression, 300, 60 + k as u64);
        // The last plain file has no index: it is scanned ahead.
        if k < 3 {
            index_file(&path, compression);
        }
        files.push(path);
    }
    let (sequential, error, _) = read_all(&files, false, 1);
    assert_eq!(error, None);
    assert_eq!(sequential.len(), 1200);
    for threads in [2, 3] {
        assert_eq!(
            read_all(&files, false, threads),
            (sequential.clone(), None, 0),
            "{threads} threads"
        );
    }
    // Damage two thirds into each: the same error, or the same records and regions skipped.
    for path in &files {
        let len = std::fs::metadata(path).expect("size").len();
        damage(path, len * 2 / 3);
    }
    for skip in [false, true] {
        let one = read_all(&files, skip, 1);
        assert_eq!(one.1.is_some(), !skip, "skip_corrupt {skip}: {:?}", one.1);
        for threads in [2, 3] {
            assert_eq!(
                read_all(&files, skip, threads),
                one,
                "skip_corrupt {skip}, {threads} threads"
            );
        }
    }
}

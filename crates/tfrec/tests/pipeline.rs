//! Tests of the input pipeline: stages in call order (as tf.data), sharding, determinism,
//! shuffling, epochs, batching, errors, and shutting down.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

mod common;

use common::Rng;
use tfrec::example::Example;
use tfrec::parse::specs_from_json_str;
use tfrec::pipeline::{Dataset, DatasetError, PipelineError, ShardBy};
use tfrec::record::{RecordWriter, WriterOptions};

/// `files` files of `per_file` records each; record text is `f<file>-r<record>`.
fn write_files(dir: &std::path::Path, files: usize, per_file: usize) -> Vec<PathBuf> {
    (0..files)
        .map(|f| {
            let path = dir.join(format!("part-{f:03}.tfrecord"));
            let mut w = RecordWriter::create(&path, WriterOptions::default()).expect("create");
            for r in 0..per_file {
                w.write_record(format!("f{f}-r{r}").as_bytes()).expect("write");
            }
            w.finish().expect("finish");
            path
        })
        .collect()
}

fn all_records(dataset: Dataset) -> Vec<String> {
    dataset
        .records()
        .map(|r| String::from_utf8(r.expect("record")).expect("utf-8"))
        .collect()
}

#[test]
fn shards_read_every_record_exactly_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 7, 13);
    let expected: HashSet<String> = all_records(Dataset::from_files(files.clone())).into_iter().collect();
    assert_eq!(expected.len(), 7 * 13);
    for by in [ShardBy::File, ShardBy::Record] {
        for n in [1, 2, 3, 5, 7] {
            let mut seen = Vec::new();
            for i in 0..n {
                seen.extend(all_records(
                    Dataset::from_files(files.clone())
                        .interleave(3, 2)
                        .expect("interleave")
                        .shard_by(n, i, by)
                        .expect("shard"),
                ));
            }
            assert_eq!(seen.len(), expected.len(), "{by:?} {n}: every record once");
            assert_eq!(seen.into_iter().collect::<HashSet<_>>(), expected, "{by:?} {n}");
        }
    }
}

#[test]
fn interleave_takes_blocks_in_turn() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 3, 3);
    let order = all_records(Dataset::from_files(files).interleave(2, 2).expect("interleave"));
    assert_eq!(
        order,
        ["f0-r0", "f0-r1", "f1-r0", "f1-r1", "f0-r2", "f1-r2", "f2-r0", "f2-r1", "f2-r2"],
        "an exhausted file's place goes to the next file"
    );
}

#[test]
fn shuffle_is_a_permutation_with_bounded_displacement() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 1, 500);
    let plain = all_records(Dataset::from_files(files.clone()));
    for buffer in [1, 10, 100] {
        let shuffled = all_records(Dataset::from_files(files.clone()).shuffle(buffer, 7).expect("shuffle"));
        let mut sorted = shuffled.clone();
        sorted.sort();
        let mut expected = plain.clone();
        expected.sort();
        assert_eq!(sorted, expected, "a permutation");
        // Output k is drawn from inputs [0, k + buffer): nothing arrives from further ahead.
        for (k, record) in shuffled.iter().enumerate() {
            let input = plain.iter().position(|p| p == record).expect("present");
            assert!(input < k + buffer, "buffer {buffer}: input {input} came out at {k}");
        }
        if buffer == 1 {
            assert_eq!(shuffled, plain, "a buffer of one keeps the order");
        } else {
            assert_ne!(shuffled, plain, "buffer {buffer} shuffles");
        }
    }
    let again = all_records(Dataset::from_files(files.clone()).shuffle(100, 7).expect("shuffle"));
    assert_eq!(
        again,
        all_records(Dataset::from_files(files.clone()).shuffle(100, 7).expect("shuffle")),
        "same seed, same order"
    );
    assert_ne!(
        again,
        all_records(Dataset::from_files(files).shuffle(100, 8).expect("shuffle")),
        "another seed, another order"
    );
}

#[test]
fn epochs_reshuffle_when_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 2, 50);
    let epochs = |reshuffle: bool| {
        let all = all_records(
            Dataset::from_files(files.clone())
                .shuffle_with(30, 3, reshuffle)
                .expect("shuffle")
                .repeat(2),
        );
        assert_eq!(all.len(), 200);
        let (first, second) = all.split_at(100);
        let set = |s: &[String]| s.iter().cloned().collect::<HashSet<_>>();
        assert_eq!(set(first), set(second), "each epoch holds every record once");
        (first.to_vec(), second.to_vec())
    };
    let (a, b) = epochs(true);
    assert_ne!(a, b, "a new order each epoch");
    let (a, b) = epochs(false);
    assert_eq!(a, b, "the same order each epoch");
}

#[test]
fn skip_take_and_drop_remainder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 1, 10);
    let taken = all_records(Dataset::from_files(files.clone()).skip(2).take(5));
    assert_eq!(taken, ["f0-r2", "f0-r3", "f0-r4", "f0-r5", "f0-r6"]);
    let sizes = |drop: bool| {
        Dataset::from_files(files.clone())
            .batch(4, drop)
            .expect("batch size")
            .raw()
            .iter()
            .map(|b| b.expect("batch").len())
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes(true), [4, 4]);
    assert_eq!(sizes(false), [4, 4, 2]);
}

fn numbered_examples(dir: &std::path::Path, files: usize, per_file: usize) -> Vec<PathBuf> {
    (0..files)
        .map(|f| {
            let path = dir.join(format!("ex-{f}.tfrecord"));
            let mut w = RecordWriter::create(&path, WriterOptions::default()).expect("create");
            for r in 0..per_file {
                let ex = Example::builder()
                    .int64("id", (f * 1000 + r) as i64)
                    .build()
                    .expect("ok");
                w.write_record(&ex.encode()).expect("write");
            }
            w.finish().expect("finish");
            path
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_order_with_1_and_4_threads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = numbered_examples(dir.path(), 5, 200);
    let specs = specs_from_json_str(
        &serde_json::json!({"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}).to_string(),
    )
    .expect("spec");
    let run = |threads: usize| -> Vec<String> {
        Dataset::from_files(files.clone())
            .interleave(3, 7)
            .expect("interleave")
            .shuffle(64, 99)
            .expect("shuffle")
            .repeat(2)
            .batch(16, false)
            .expect("batch size")
            .parse_examples(&specs)
            .expect("spec")
            .threads(threads)
            .prefetch(3)
            .iter()
            .map(|b| b.expect("batch")["id"].to_json_string())
            .collect()
    };
    let one = run(1);
    assert_eq!(one.len(), (5 * 200 * 2usize).div_ceil(16));
    assert_eq!(one, run(4));
    // On the iterating thread, as on a process limited to one CPU.
    assert_eq!(one, run(0));
    // Unordered delivery still delivers every batch.
    let unordered: usize = Dataset::from_files(files)
        .batch(16, false)
        .expect("batch size")
        .parse_examples(&specs)
        .expect("spec")
        .threads(4)
        .deterministic(false)
        .iter()
        .map(|b| b.expect("batch")["id"].as_dense().expect("dense").len())
        .sum();
    assert_eq!(unordered, 1000);
}

#[test]
fn a_corrupt_file_is_reported_with_its_path_or_skipped_and_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 3, 20);
    let mut bytes = std::fs::read(&files[1]).expect("read");
    bytes[40] ^= 0x55;
    std::fs::write(&files[1], bytes).expect("write");

    // Whichever worker reads the damage, the consumer sees the same thing; also when batches
    // are handed over as they finish.
    for (threads, deterministic) in [(0, true), (1, true), (2, true), (4, true), (2, false), (4, false)] {
        let results: Vec<_> = Dataset::from_files(files.clone())
            .batch(8, false)
            .expect("batch size")
            .raw()
            .threads(threads)
            .deterministic(deterministic)
            .iter()
            .collect();
        let error = results.iter().find_map(|r| r.as_ref().err()).expect("an error");
        assert!(matches!(error, PipelineError::Record(_)));
        assert!(error.to_string().contains("part-001.tfrecord"), "{error}");
        assert!(
            results.last().is_some_and(Result::is_err),
            "the stream ends at the error"
        );
        // As in tf.data, the batches completed before the damage arrive; the batch the damaged
        // record falls in is replaced by the error (records 16..23 hold file 1's second record).
        let before: Vec<usize> = results
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|b| b.len())
            .collect();
        assert_eq!(before, [8, 8], "{threads} threads, deterministic {deterministic}");
    }

    for threads in [2, 0] {
        let pipeline = Dataset::from_files(files.clone())
            .skip_corrupt()
            .batch(8, false)
            .expect("batch size")
            .raw()
            .threads(threads)
            .iter();
        let counters = pipeline.counters();
        let total: usize = pipeline.map(|b| b.expect("skipped, not failed").len()).sum();
        assert_eq!(total, 59, "only the damaged record (its footer was hit) is lost");
        assert_eq!(counters.skipped_regions.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert!(counters.problems.lock().expect("lock")[0]
            .path()
            .is_some_and(|p| p.ends_with("part-001.tfrecord")));
    }

    let pipeline = Dataset::from_files(files)
        .skip_corrupt_files()
        .batch(8, false)
        .expect("batch size")
        .raw()
        .iter();
    let counters = pipeline.counters();
    let total: usize = pipeline.map(|b| b.expect("skipped").len()).sum();
    assert!(total < 60);
    assert_eq!(counters.skipped_files.load(std::sync::atomic::Ordering::Relaxed), 1);
}

#[test]
fn worker_panics_and_parse_errors_reach_the_consumer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 2, 40);
    for threads in [2, 0] {
        let results: Vec<_> = Dataset::from_files(files.clone())
            .batch(10, false)
            .expect("batch size")
            .map_batches(|b| {
                if b.index == 3 {
                    panic!("worker fails on batch 3")
                } else {
                    Ok(b.len())
                }
            })
            .threads(threads)
            .iter()
            .collect();
        assert_eq!(results.len(), 4, "batches 0-2, then the panic, then the end");
        assert!(matches!(&results[3], Err(PipelineError::Panic(m)) if m.contains("batch 3")));
    }

    // The records are not Examples with an int64 "id": a parse error names the batch.
    let specs = specs_from_json_str(
        &serde_json::json!({"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}).to_string(),
    )
    .expect("spec");
    let first = Dataset::from_files(files)
        .batch(10, false)
        .expect("batch size")
        .parse_examples(&specs)
        .expect("spec")
        .iter()
        .next();
    assert!(
        matches!(&first, Some(Err(PipelineError::Parse { batch: 0, path: Some(p), origin: Some(o), .. }))
            if p.ends_with("part-000.tfrecord") && o.index == 0 && o.offset == 0),
        "{first:?}"
    );
    let message = first.and_then(Result::err).map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("part-000.tfrecord: record 0 at byte 0: "), "{message}");
}

#[test]
fn dropping_early_stops_every_thread() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 4, 500);
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut it = Dataset::from_files(files)
            .repeat_forever()
            .shuffle(100, 1)
            .expect("shuffle")
            .batch(32, false)
            .expect("batch size")
            .map_batches(|b| Ok(b.len()))
            .threads(4)
            .prefetch(2)
            .iter();
        assert_eq!(it.next().map(|b| b.expect("batch")), Some(32));
        drop(it); // joins the reader and the four workers
        done_tx.send(()).expect("report");
    });
    done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("dropping the iterator must stop and join every thread promptly");
}

fn set(records: &[String]) -> HashSet<String> {
    records.iter().cloned().collect()
}

#[test]
fn take_before_shuffle_shuffles_only_the_first_records() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 1, 100);
    let plain = all_records(Dataset::from_files(files.clone()));
    let take_then_shuffle = all_records(
        Dataset::from_files(files.clone())
            .take(5)
            .shuffle(1000, 11)
            .expect("shuffle"),
    );
    assert_eq!(set(&take_then_shuffle), set(&plain[..5]), "the first five, shuffled");
    assert_ne!(take_then_shuffle, plain[..5], "in another order");
    let shuffle_then_take = all_records(Dataset::from_files(files).shuffle(1000, 11).expect("shuffle").take(5));
    assert_eq!(shuffle_then_take.len(), 5);
    assert_ne!(
        set(&shuffle_then_take),
        set(&plain[..5]),
        "five records of the whole shuffled stream"
    );
}

#[test]
fn shard_before_and_after_shuffle_differ_as_in_tf_data() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 3, 40);
    let plain = all_records(Dataset::from_files(files.clone()));
    let n = 4;
    let mut shuffled_then_sharded = Vec::new();
    let mut differs = false;
    for i in 0..n {
        // shard then shuffle: the shard's own records (every n-th of the file order), shuffled.
        let own: Vec<String> = plain.iter().skip(i).step_by(n).cloned().collect();
        let shard_first = all_records(
            Dataset::from_files(files.clone())
                .shard(n, i)
                .expect("shard")
                .shuffle(64, 5)
                .expect("shuffle"),
        );
        assert_eq!(set(&shard_first), set(&own), "shard {i}: its records");
        assert_ne!(shard_first, own, "shard {i}: shuffled");
        // shuffle then shard: every worker shuffles the whole stream the same way (same seed)
        // and keeps every n-th record of that order.
        let shuffle_first = all_records(
            Dataset::from_files(files.clone())
                .shuffle(64, 5)
                .expect("shuffle")
                .shard(n, i)
                .expect("shard"),
        );
        let whole = all_records(Dataset::from_files(files.clone()).shuffle(64, 5).expect("shuffle"));
        let expected: Vec<String> = whole.iter().skip(i).step_by(n).cloned().collect();
        assert_eq!(shuffle_first, expected, "shard {i} of the shuffled order");
        differs |= set(&shuffle_first) != set(&own);
        shuffled_then_sharded.extend(shuffle_first);
    }
    assert_eq!(
        shuffled_then_sharded.len(),
        plain.len(),
        "each record in exactly one shard"
    );
    assert_eq!(set(&shuffled_then_sharded), set(&plain));
    assert!(differs, "shuffling first puts other records in the shards");
}

#[test]
fn sharding_by_file_with_too_few_files_and_bad_arguments_are_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 4, 10);
    let error = Dataset::from_files(files.clone()).shard_files(8, 4).err();
    assert_eq!(
        error,
        Some(DatasetError::TooFewFiles {
            files: 4,
            num_shards: 8
        })
    );
    // By record (tf.data's meaning), eight shards of four files each get their records.
    let records = all_records(Dataset::from_files(files.clone()).shard(8, 4).expect("shard"));
    assert_eq!(records.len(), 5);
    let dataset = || Dataset::from_files(files.clone());
    assert_eq!(dataset().shard(0, 0).err(), Some(DatasetError::NoShards));
    assert_eq!(
        dataset().shard(3, 3).err(),
        Some(DatasetError::ShardIndex {
            index: 3,
            num_shards: 3
        })
    );
    assert_eq!(
        dataset().shard_files(2, 2).err(),
        Some(DatasetError::ShardIndex {
            index: 2,
            num_shards: 2
        })
    );
    // File-level stages after record-level ones say so.
    let after_take = dataset().take(3).shard_files(2, 0).err();
    assert_eq!(
        after_take,
        Some(DatasetError::FileStageAfterRecordStage {
            stage: "shard_files",
            after: "take"
        })
    );
    assert!(after_take.is_some_and(|e| e.to_string().contains("before `take`")));
    let after_shuffle = dataset().shuffle(10, 1).expect("shuffle").interleave(2, 1).err();
    assert!(matches!(
        after_shuffle,
        Some(DatasetError::FileStageAfterRecordStage {
            stage: "interleave",
            ..
        })
    ));
    assert!(dataset().shuffle(0, 1).is_err());
    assert!(dataset().interleave(0, 1).is_err());
    // Sharding by file twice composes: two of four, then one of two.
    let nested = all_records(
        dataset()
            .shard_files(2, 1)
            .expect("shard")
            .shard_files(2, 1)
            .expect("shard"),
    );
    assert_eq!(
        set(&nested),
        set(&all_records(Dataset::from_files(vec![files[3].clone()])))
    );
}

fn times(records: &[String], n: usize) -> Vec<String> {
    (0..n).flat_map(|_| records.iter().cloned()).collect()
}

#[test]
fn repeat_counts_and_their_order_with_skip_and_take() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 2, 5);
    let plain = all_records(Dataset::from_files(files.clone()));
    let dataset = || Dataset::from_files(files.clone());
    assert!(all_records(dataset().repeat(0)).is_empty());
    assert_eq!(all_records(dataset().repeat(1)), plain);
    assert_eq!(all_records(dataset().repeat(3)), times(&plain, 3));
    assert_eq!(all_records(dataset().repeat_forever().take(25)).len(), 25);
    assert_eq!(all_records(dataset().take(3).repeat(2)), times(&plain[..3], 2));
    assert_eq!(all_records(dataset().repeat(2).take(3)), plain[..3]);
    assert_eq!(all_records(dataset().skip(8).repeat(2)), times(&plain[8..], 2));
    assert_eq!(all_records(dataset().repeat(2).skip(8)).len(), 12);
    assert_eq!(all_records(dataset().repeat(2).repeat(3)).len(), 60);
    // Forever over nothing ends rather than spinning.
    assert!(all_records(dataset().take(0).repeat_forever()).is_empty());
    // Repeating before a shuffle mixes the epochs in one buffer; after it, each epoch is whole.
    let before = all_records(dataset().repeat(2).shuffle(20, 4).expect("shuffle"));
    assert_eq!(before.len(), 20);
    assert_ne!(set(&before[..10]).len(), 10, "the first ten hold a record twice");
    let after = all_records(dataset().shuffle(20, 4).expect("shuffle").repeat(2));
    assert_eq!(set(&after[..10]), set(&plain));
    assert_ne!(after[..10], after[10..], "reshuffled each iteration");
}

#[test]
fn map_takes_any_error_type_and_keeps_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 1, 30);
    let results: Vec<_> = Dataset::from_files(files)
        .batch(10, false)
        .expect("batch size")
        .raw()
        .map(|b| {
            if b.index == 1 {
                Err(std::io::Error::other("no room"))
            } else {
                Ok(b.len())
            }
        })
        .iter()
        .collect();
    assert_eq!(results.len(), 2);
    let error = results[1].as_ref().expect_err("an error");
    let PipelineError::Map { batch: 1, error: inner } = error else {
        panic!("a map error of batch 1: {error:?}")
    };
    assert!(
        inner.downcast_ref::<std::io::Error>().is_some(),
        "the function's own error type"
    );
    assert_eq!(error.to_string(), "batch 1: the map function failed: no room");
    // The crate's rule: the text is self-contained, so a chained printer does not repeat it.
    assert!(std::error::Error::source(error).is_none());
}

#[test]
fn batches_know_where_each_record_was_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 2, 3);
    let batch = Dataset::from_files(files.clone())
        .interleave(2, 1)
        .expect("interleave")
        .batch(6, false)
        .expect("batch size")
        .raw()
        .iter()
        .next()
        .and_then(Result::ok)
        .expect("a batch");
    assert_eq!(batch.get(1), Some(&b"f1-r0"[..]));
    let origin = batch.origin(3).expect("origin");
    assert_eq!((origin.file, origin.index), (1, 1));
    assert_eq!(origin.offset, (12 + 5 + 4) as u64, "the second record's header");
    assert_eq!(batch.path(3), Some(files[1].as_path()));
}

#[test]
fn a_batch_of_zero_records_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 1, 3);
    for drop_remainder in [false, true] {
        let error = Dataset::from_files(files.clone()).batch(0, drop_remainder).err();
        assert_eq!(error, Some(DatasetError::Zero { argument: "batch_size" }));
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some("batch_size must be at least 1")
        );
    }
    // One record per batch is the smallest batch.
    let batches = Dataset::from_files(files)
        .batch(1, false)
        .expect("batch")
        .raw()
        .iter()
        .count();
    assert_eq!(batches, 3);
}

/// The batches of a pipeline as lists of record texts.
fn batches_of(batched: tfrec::pipeline::Batched, threads: usize) -> Vec<Vec<String>> {
    batched
        .raw()
        .threads(threads)
        .iter()
        .map(|b| {
            let b = b.expect("batch");
            b.records()
                .iter()
                .map(|r| String::from_utf8(r.to_vec()).expect("utf-8"))
                .collect()
        })
        .collect()
}

fn names(file: usize, records: std::ops::Range<usize>) -> Vec<String> {
    records.map(|r| format!("f{file}-r{r}")).collect()
}

#[test]
fn stages_after_batch_work_on_whole_batches_as_in_tf_data() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 1, 20);
    let batched = || Dataset::from_files(files.clone()).batch(5, false).expect("batch");
    for threads in [1, 3] {
        // tf.data: batch(5).take(2) is [0..5), [5..10).
        assert_eq!(
            batches_of(batched().take(2), threads),
            vec![names(0, 0..5), names(0, 5..10)]
        );
        assert_eq!(batches_of(batched().skip(3), threads), vec![names(0, 15..20)]);
        // batch(5).repeat(2).take(3): three batches of five, the third from the second pass.
        assert_eq!(
            batches_of(batched().repeat(2).take(3), threads),
            vec![names(0, 0..5), names(0, 5..10), names(0, 10..15)]
        );
        assert_eq!(batches_of(batched().repeat_forever().take(5), threads).len(), 5);
        assert_eq!(
            batches_of(batched().shard(2, 1).expect("shard"), threads),
            vec![names(0, 5..10), names(0, 15..20)]
        );
    }
    // A shuffle of batches moves whole batches; every pass of a repeat has every batch once.
    let shuffled = batches_of(batched().shuffle(4, 9).expect("shuffle").repeat(3), 2);
    assert_eq!(shuffled.len(), 12);
    for pass in shuffled.chunks(4) {
        let mut pass = pass.to_vec();
        pass.sort();
        assert_eq!(
            pass,
            vec![names(0, 0..5), names(0, 10..15), names(0, 15..20), names(0, 5..10)]
        );
    }
    let again = batches_of(batched().shuffle(4, 9).expect("shuffle").repeat(3), 1);
    assert_eq!(shuffled, again, "the seed fixes the order, whatever the thread count");
    assert_ne!(shuffled[..4], shuffled[4..8], "each pass reshuffles");
    // The remainder is dropped before the batch stages see it.
    let dropped = Dataset::from_files(files.clone())
        .take(13)
        .batch(5, true)
        .expect("batch")
        .repeat(2);
    assert_eq!(batches_of(dropped, 2).len(), 4);
    assert!(matches!(
        batched().shard(2, 2).map(|_| ()),
        Err(DatasetError::ShardIndex { .. })
    ));
    assert!(matches!(
        batched().shuffle(0, 1).map(|_| ()),
        Err(DatasetError::Zero {
            argument: "buffer_size"
        })
    ));
}

/// Header offsets of the records `write_files` wrote in one file (`f<file>-r<record>`).
fn record_offsets(file: usize, per_file: usize) -> Vec<usize> {
    let mut at = 0;
    (0..per_file)
        .map(|r| {
            let offset = at;
            at += 16 + format!("f{file}-r{r}").len();
            offset
        })
        .collect()
}

/// What a pipeline delivered: the sizes of the batches, then the error's text, if any.
fn sizes_then_error(batched: tfrec::pipeline::Batched, threads: usize, deterministic: bool) -> (Vec<usize>, String) {
    let mut sizes = Vec::new();
    for result in batched.raw().threads(threads).deterministic(deterministic).iter() {
        match result {
            Ok(batch) => sizes.push(batch.len()),
            Err(e) => {
                assert!(matches!(e, PipelineError::Record(_)), "{e}");
                return (sizes, e.to_string());
            }
        }
    }
    (sizes, String::new())
}

#[test]
fn a_data_crc_mismatch_is_the_same_error_whichever_thread_checks_it() {
    // With two workers or more, a record's data CRC is checked by its batch's worker, not
    // while reading; the consumer must not be able to tell.
    let dir = tempfile::tempdir().expect("temp dir");
    let files = write_files(dir.path(), 1, 40);
    let offsets = record_offsets(0, 40);
    let damage = |record: usize| {
        let mut bytes = std::fs::read(&files[0]).expect("read");
        bytes[offsets[record] + 12 + 1] ^= 0x20;
        std::fs::write(&files[0], &bytes).expect("write");
        bytes
    };
    let bytes = damage(21);
    let plain = |size, drop_remainder| {
        Dataset::from_files(files.clone())
            .batch(size, drop_remainder)
            .expect("batch")
    };
    let (sizes, error) = sizes_then_error(plain(8, false), 0, true);
    assert_eq!(sizes, [8, 8], "batch 2 (records 16..23) holds the damage");
    assert!(error.contains("part-000.tfrecord"), "{error}");
    assert!(
        error.contains(&format!("record 21 at byte {}: ", offsets[21]))
            && error.contains("the data's CRC does not match"),
        "{error}"
    );
    let cases: [(&str, &dyn Fn() -> tfrec::pipeline::Batched); 4] = [
        ("batch", &|| plain(8, false)),
        // The damage in a batch a stage drops, or in a remainder dropped, still fails.
        ("skip", &|| plain(8, false).skip(3)),
        ("shard", &|| plain(8, false).shard(2, 1).expect("shard")),
        ("drop_remainder", &|| plain(16, true)),
    ];
    for (name, batched) in cases {
        let (expected_sizes, expected) = sizes_then_error(batched(), 0, true);
        assert!(!expected.is_empty(), "{name}: the reader reports the damage");
        for (threads, deterministic) in [(1, true), (2, true), (4, true), (2, false), (4, false)] {
            let (sizes, error) = sizes_then_error(batched(), threads, deterministic);
            assert_eq!(
                error, expected,
                "{name}, {threads} threads, deterministic {deterministic}"
            );
            if deterministic {
                assert_eq!(sizes, expected_sizes, "{name}, {threads} threads");
            }
        }
    }

    // In the remainder that `drop_remainder` drops: records 32..40.
    damage(21);
    damage(35);
    let (expected_sizes, expected) = sizes_then_error(plain(16, true), 0, true);
    assert_eq!((expected_sizes.as_slice(), expected.is_empty()), (&[16, 16][..], false));
    for threads in [2, 4] {
        assert_eq!(
            sizes_then_error(plain(16, true), threads, true),
            (expected_sizes.clone(), expected.clone())
        );
    }

    // A GZIP file: the offset counts decompressed bytes, and the error says so.
    let gz = dir.path().join("part-000.tfrecord.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut encoder, &bytes).expect("compress");
    std::fs::write(&gz, encoder.finish().expect("compress")).expect("write");
    let gzip = || Dataset::from_files(vec![gz.clone()]).batch(8, false).expect("batch");
    let (expected_sizes, expected) = sizes_then_error(gzip(), 0, true);
    assert_eq!(expected_sizes, [8, 8]);
    for threads in [2, 3] {
        assert_eq!(
            sizes_then_error(gzip(), threads, true),
            (expected_sizes.clone(), expected.clone())
        );
    }
}

/// What a pipeline delivered: each batch's records and origins, or the error's text.
type Delivered = Vec<Result<(Vec<Vec<u8>>, Vec<(usize, u64, u64)>), String>>;

fn delivered(batched: tfrec::pipeline::Batched, threads: usize) -> (Delivered, [u64; 6]) {
    let pipeline = batched.raw().threads(threads).iter();
    let counters = pipeline.counters();
    let out = pipeline
        .map(|result| {
            result
                .map(|b| {
                    let records = b.records().iter().map(|r| r.to_vec()).collect();
                    let origins = (0..b.len())
                        .filter_map(|i| b.origin(i))
                        .map(|o| (o.file, o.offset, o.index))
                        .collect();
                    (records, origins)
                })
                .map_err(|e| e.to_string())
        })
        .collect();
    let get = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    let c = &*counters;
    let counts = [
        get(&c.records),
        get(&c.bytes),
        get(&c.skipped_regions),
        get(&c.skipped_bytes),
        get(&c.skipped_files),
        get(&c.torn_tail_bytes),
    ];
    (out, counts)
}

#[test]
fn batches_take_from_the_window_exactly_what_the_record_path_reads() {
    // Batches take the records that lie whole in a reader's window in one loop, and leave
    // everything else (refills, records larger than the window, damage, torn tails, the ends
    // of files) to the record-by-record path. A record stage (`shard(1, 0)`, which keeps
    // everything) makes a batch take every record by that path: both must deliver the same
    // records, origins, errors and counts, whatever the sizes, damage and policies.
    use tfrec::record::{OnCorruption, ReaderOptions, TornTail};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for case in 0..80 {
        let files: Vec<PathBuf> = (0..1 + rng.below(3))
            .map(|f| {
                let path = dir.path().join(format!("case{case}-{f}.tfrecord"));
                let mut w = RecordWriter::create(&path, WriterOptions::default()).expect("create");
                for r in 0..rng.below(120) {
                    let len = match rng.below(10) {
                        0 => 60_000 + rng.below(90_000),
                        1 | 2 => 1_000 + rng.below(20_000),
                        _ => rng.below(300),
                    };
                    let record: Vec<u8> = (0..len).map(|i| (i as u8) ^ (r as u8) ^ (f as u8)).collect();
                    w.write_record(&record).expect("write");
                }
                w.finish().expect("finish");
                path
            })
            .collect();
        for path in &files {
            let mut bytes = std::fs::read(path).expect("read");
            match rng.below(5) {
                0 | 1 if !bytes.is_empty() => {
                    let at = rng.below(bytes.len() as u64) as usize;
                    bytes[at] ^= 1 << rng.below(8);
                }
                2 if !bytes.is_empty() => bytes.truncate(rng.below(bytes.len() as u64) as usize),
                _ => {}
            }
            std::fs::write(path, bytes).expect("write");
        }
        let mut options = ReaderOptions::default();
        options.buffer_size = 64 << 10;
        options.on_corruption =
            [OnCorruption::Fail, OnCorruption::Resync, OnCorruption::SkipFile][rng.below(3) as usize];
        options.torn_tail = [TornTail::Error, TornTail::Skip][rng.below(2) as usize];
        let (cycle, block) = (1 + rng.below(3) as usize, 1 + rng.below(3) as usize);
        let (size, drop_remainder) = (1 + rng.below(40) as usize, rng.below(2) == 0);
        let dataset = || {
            Dataset::from_files(files.clone())
                .reader_options(options.clone())
                .interleave(cycle, block)
                .expect("interleave")
        };
        let (expected, expected_counts) = delivered(
            dataset()
                .shard(1, 0)
                .expect("shard")
                .batch(size, drop_remainder)
                .expect("batch"),
            0,
        );
        let failed = expected.iter().any(Result::is_err);
        for threads in [0, 2] {
            let (got, counts) = delivered(dataset().batch(size, drop_remainder).expect("batch"), threads);
            let what = format!("case {case}, {threads} threads, {options:?}, batch {size}");
            assert_eq!(got, expected, "{what}");
            // Two workers may read past a damaged record whose check they were left.
            if threads == 0 || !failed {
                assert_eq!(counts, expected_counts, "{what}");
            }
        }
        // A `take` (the CLI's `--limit`) passes batches down to the files' loop.
        let limit = rng.below(150);
        let (expected, expected_counts) = delivered(
            dataset()
                .shard(1, 0)
                .expect("shard")
                .take(limit)
                .batch(size, drop_remainder)
                .expect("batch"),
            0,
        );
        for threads in [0, 2] {
            let batched = dataset().take(limit).batch(size, drop_remainder).expect("batch");
            assert_eq!(
                delivered(batched, threads),
                (expected.clone(), expected_counts),
                "case {case}, take {limit}"
            );
        }
    }
}

#[test]
fn batches_kept_while_the_readers_read_on_keep_their_records() {
    // Batches kept while the readers go on reading into their buffers (a consumer that
    // collects them, a shuffle of batches) keep their records as read, however they hold them:
    // plain and GZIP files, records larger than the window and smaller, one worker or several.
    use tfrec::record::{Compression, ReaderOptions};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let files: Vec<PathBuf> = (0..4)
        .map(|f| {
            let name = format!("kept-{f}.tfrecord{}", if f % 2 == 1 { ".gz" } else { "" });
            let path = dir.path().join(name);
            let compression = if f % 2 == 1 {
                Compression::Gzip
            } else {
                Compression::None
            };
            let mut w = RecordWriter::create(&path, WriterOptions::default().compression(compression)).expect("create");
            for r in 0..600u32 {
                let len = match rng.below(20) {
                    0 => 66_000 + rng.below(30_000),
                    1..=4 => 2_000 + rng.below(10_000),
                    _ => rng.below(400),
                } as usize;
                let mut record = format!("{f}/{r}/").into_bytes();
                record.extend((0..len).map(|i| (i as u8) ^ (r as u8)));
                w.write_record(&record).expect("write");
            }
            w.finish().expect("finish");
            path
        })
        .collect();
    let mut options = ReaderOptions::default();
    options.buffer_size = 64 << 10;
    let dataset = || {
        Dataset::from_files(files.clone())
            .reader_options(options.clone())
            .interleave(2, 3)
            .expect("interleave")
    };
    let mut expected: Vec<Vec<u8>> = dataset().records().map(|r| r.expect("record")).collect();
    assert_eq!(expected.len(), 4 * 600);
    expected.sort();
    for threads in [0, 1, 3] {
        for shuffled in [false, true] {
            let batched = dataset().batch(1 + rng.below(50) as usize, false).expect("batch");
            let batched = if shuffled {
                batched.shuffle(8, 5).expect("shuffle")
            } else {
                batched
            };
            let kept: Vec<tfrec::pipeline::RecordBatch> = batched
                .raw()
                .threads(threads)
                .prefetch(4)
                .iter()
                .collect::<Result<_, _>>()
                .expect("batches");
            let mut got: Vec<Vec<u8>> = kept.iter().flat_map(|b| b.records()).map(<[u8]>::to_vec).collect();
            got.sort();
            assert!(got == expected, "{threads} threads, shuffled: {shuffled}");
            let bytes: usize = kept.iter().map(|b| b.data_len()).sum();
            assert_eq!(bytes, expected.iter().map(Vec::len).sum::<usize>());
        }
    }
}

//! Statistics, schema inference, validation and the report on the bad input of issue 55: a
//! clear error or the right figures, never a panic, and memory bounded by what TFDV bounds it
//! by. TFDV's own answers on the small cases (NaN and infinities, non-UTF-8 bytes, empty files
//! and lists, kinds that change) are compared in `python/tests/test_stats_bad_input.py`.
//!
//! - 100,000 features: statistics, an inferred schema that validates them with no anomaly, a
//!   validation that finds the one feature changed, and a report page of bounded size per
//!   feature that holds them all (the page draws a page of rows at a time);
//! - a record of millions of values: a numeric feature costs its quantiles sketch, not its
//!   values; a string feature its distinct values (TFDV counts those exactly too), with the
//!   figures right;
//! - a feature whose kind changes between records, or between files: an error naming the
//!   feature, and the file, offset and record where the record shows it;
//! - damaged records: an error naming file and offset, or with skipping, the intact records'
//!   statistics with the damage counted on every feature.
//!
//! The heap is counted by a per-thread counting allocator (`common/heap.rs`), so each test sees
//! only its own work.

#![cfg(feature = "stats")]

use std::path::{Path, PathBuf};

use tfrec::example::Example;
use tfrec::record::{OnCorruption, ReaderOptions, RecordWriter, WriterOptions};
use tfrec::stats::proto::feature_name_statistics::Stats;
use tfrec::stats::proto::{DatasetFeatureStatisticsList, FeatureNameStatistics, FeatureType};
use tfrec::stats::{
    generate_statistics, has_anomalies, infer_schema, statistics_of_file, validate_statistics, InferSchemaOptions,
    StatsAccumulator, StatsError, StatsOptions,
};

#[path = "common/heap.rs"]
mod heap;
use heap::peak_heap;

const MIB: usize = 1 << 20;

fn write(path: &Path, records: impl IntoIterator<Item = Vec<u8>>) -> PathBuf {
    let mut writer = RecordWriter::create(path, WriterOptions::default()).expect("create");
    for record in records {
        writer.write_record(&record).expect("write");
    }
    writer.finish().expect("finish");
    path.to_path_buf()
}

fn statistics(
    paths: &[&Path],
    reader: ReaderOptions,
    threads: usize,
) -> Result<DatasetFeatureStatisticsList, StatsError> {
    let inputs: Vec<&str> = paths.iter().map(|p| p.to_str().expect("UTF-8 temp path")).collect();
    generate_statistics(&inputs, reader, &StatsOptions::default(), threads).map(|out| out.statistics)
}

fn feature<'a>(stats: &'a DatasetFeatureStatisticsList, name: &str) -> &'a FeatureNameStatistics {
    let found = stats.datasets[0]
        .features
        .iter()
        .find(|f| tfrec::stats::report::feature_name(f) == name);
    found.unwrap_or_else(|| panic!("no feature {name}"))
}

/// A feature of each kind in turn, named so that name order is index order.
fn wide_example(features: usize, row: i64) -> Vec<u8> {
    let mut builder = Example::builder();
    for i in 0..features {
        let name = format!("f{i:06}");
        builder = match i % 3 {
            0 => builder.int64(&name, [row + i as i64]),
            1 => builder.float(&name, [row as f32 / (i + 1) as f32]),
            _ => builder.bytes(&name, [format!("v{}", (row + i as i64) % 5)]),
        };
    }
    builder.build().expect("example").encode()
}

#[test]
fn a_hundred_thousand_features_give_statistics_a_schema_anomalies_and_a_bounded_report() {
    const FEATURES: usize = 100_000;
    let dir = tempfile::tempdir().expect("temp");
    let train = write(
        &dir.path().join("train.tfrecord"),
        (0..2).map(|row| wide_example(FEATURES, row)),
    );
    let stats = statistics(&[&train], ReaderOptions::default(), 1).expect("statistics");
    let dataset = &stats.datasets[0];
    assert_eq!((dataset.num_examples, dataset.features.len()), (2, FEATURES));
    let schema = infer_schema(&stats, InferSchemaOptions::default()).expect("schema");
    assert_eq!(schema.feature.len(), FEATURES);
    let anomalies = validate_statistics(&stats, &schema, None, None).expect("validates");
    assert!(
        !has_anomalies(&anomalies),
        "a schema inferred from statistics fits them"
    );

    // A schema that expects one feature of another kind: that feature is found, and only it.
    let mut expects_float = schema.clone();
    expects_float.feature[0].r#type = Some(FeatureType::Float as i32);
    let anomalies = validate_statistics(&stats, &expects_float, None, None).expect("validates");
    let flagged: Vec<&String> = anomalies.anomaly_info.keys().collect();
    assert_eq!(flagged, ["f000000"]);

    // The report holds every feature, in well under a kilobyte each; its script draws one page
    // of rows at a time, so the browser stays usable (python/tests/test_stats_report_browser.py).
    let report = tfrec::stats::report::Report::of_list(&stats).expect("report");
    let (html, peak) = peak_heap(|| report.to_html());
    // Written feature by feature: the page and its data text, not every feature's JSON tree
    // at once.
    assert!(
        peak < 4 * html.len(),
        "peak heap {} MiB for a page of {} MiB",
        peak / MIB,
        html.len() / MIB
    );
    assert!(
        html.len() < FEATURES * 1024,
        "{} bytes for {FEATURES} features",
        html.len()
    );
    for name in ["f000000", "f050001", "f099999"] {
        assert!(html.contains(&format!("\"{name}\"")), "{name} missing from the report");
    }
}

/// One Example: feature `x`, the floats `0, 1, …, n-1`; feature `s`, `strings` values of which
/// `distinct` differ.
fn huge_example(floats: usize, strings: usize, distinct: usize) -> Vec<u8> {
    let values: Vec<f32> = (0..floats).map(|i| i as f32).collect();
    let words: Vec<Vec<u8>> = (0..strings)
        .map(|i| format!("value-{:07}", i % distinct).into_bytes())
        .collect();
    Example::builder()
        .float("x", values)
        .bytes("s", words)
        .build()
        .expect("example")
        .encode()
}

#[test]
fn a_record_of_millions_of_floats_costs_its_sketch_not_its_values() {
    const FLOATS: usize = 5_000_000;
    let dir = tempfile::tempdir().expect("temp");
    let path = write(&dir.path().join("floats.tfrecord"), [huge_example(FLOATS, 1, 1)]);
    let record_len = std::fs::metadata(&path).expect("size").len() as usize;
    let ((acc, _), peak) = peak_heap(|| {
        statistics_of_file(&path, ReaderOptions::default(), &StatsOptions::default()).expect("statistics")
    });
    // The reader holds the record (at most twice, growing its buffer as bytes arrive); the
    // values go into the quantiles sketch, whose size grows with the log of their number.
    let allowed = 2 * record_len + 16 * MIB;
    assert!(
        peak < allowed,
        "peak heap {} MiB, allowed {} MiB",
        peak / MIB,
        allowed / MIB
    );
    let stats = acc.finish();
    let Some(Stats::NumStats(x)) = &feature(&stats, "x").stats else {
        panic!("numeric stats")
    };
    let n = FLOATS as f64;
    assert_eq!(x.common_stats.as_ref().map(|c| c.tot_num_values), Some(FLOATS as u64));
    assert_eq!((x.min, x.max, x.num_zeros), (0.0, n - 1.0, 1));
    assert!((x.mean - (n - 1.0) / 2.0).abs() < 1e-6 * n, "mean {}", x.mean);
    // The median is within the sketch's epsilon (0.01) in rank.
    assert!((x.median - n / 2.0).abs() <= 0.01 * n, "median {}", x.median);
}

#[test]
fn a_record_of_millions_of_strings_costs_its_distinct_values() {
    const STRINGS: usize = 2_000_000;
    let dir = tempfile::tempdir().expect("temp");
    for distinct in [100, STRINGS] {
        let path = write(
            &dir.path().join(format!("strings-{distinct}.tfrecord")),
            [huge_example(1, STRINGS, distinct)],
        );
        let record_len = std::fs::metadata(&path).expect("size").len() as usize;
        let ((acc, _), peak) = peak_heap(|| {
            statistics_of_file(&path, ReaderOptions::default(), &StatsOptions::default()).expect("statistics")
        });
        // TFDV counts every distinct value exactly (its default top-k and uniques generator is
        // a combine over them), and so does tfrec: a value costs its bytes and a table entry.
        let allowed = 2 * record_len + distinct * 96 + MIB;
        assert!(
            peak < allowed,
            "{distinct} distinct: peak heap {} MiB, allowed {} MiB",
            peak / MIB,
            allowed / MIB
        );
        let stats = acc.finish();
        let Some(Stats::StringStats(s)) = &feature(&stats, "s").stats else {
            panic!("string stats")
        };
        assert_eq!(s.unique, distinct as u64);
        assert_eq!(s.common_stats.as_ref().map(|c| c.tot_num_values), Some(STRINGS as u64));
        assert_eq!(s.top_values.len(), 20);
        let top = &s.top_values[0];
        // Ties in count rank by the value's bytes, descending.
        assert_eq!(
            (top.value.as_str(), top.frequency),
            (
                if distinct == 100 {
                    "value-0000099"
                } else {
                    "value-1999999"
                },
                (STRINGS / distinct) as f64
            )
        );
    }
}

#[test]
fn a_kind_that_changes_names_the_feature_and_the_record_that_shows_it() {
    let dir = tempfile::tempdir().expect("temp");
    let example = |k: tfrec::example::Feature| {
        let e = Example::builder().int64("other", 1).feature("k", k);
        e.build().expect("example").encode()
    };
    use tfrec::example::Feature::{Bytes, Float, Int64};
    let one = write(
        &dir.path().join("one.tfrecord"),
        [
            example(Int64(vec![1])),
            example(Int64(vec![])),
            example(Float(vec![1.5])),
        ],
    );
    let error = statistics(&[&one], ReaderOptions::default(), 1)
        .expect_err("kinds differ")
        .to_string();
    for part in [one.to_str().expect("UTF-8"), "(record 2)", "\"k\"", "INT and FLOAT"] {
        assert!(error.contains(part), "{part:?} not in {error}");
    }
    // Across files, each of one kind: the file whose record shows it, whatever the threads.
    let a = write(&dir.path().join("a.tfrecord"), [example(Int64(vec![1]))]);
    let b = write(&dir.path().join("b.tfrecord"), [example(Bytes(vec![b"x".to_vec()]))]);
    for threads in [1, 2] {
        let error = statistics(&[&a, &b], ReaderOptions::default(), threads)
            .expect_err("kinds differ")
            .to_string();
        for part in [b.to_str().expect("UTF-8"), "(record 0)", "\"k\"", "INT and STRING"] {
            assert!(error.contains(part), "{part:?} not in {error}");
        }
    }
}

#[test]
fn damaged_records_are_an_error_or_skipped_and_counted() {
    let dir = tempfile::tempdir().expect("temp");
    let records: Vec<Vec<u8>> = (0..50)
        .map(|i| Example::builder().int64("n", [i]).build().expect("example").encode())
        .collect();
    let path = write(&dir.path().join("damaged.tfrecord"), records.clone());
    let mut bytes = std::fs::read(&path).expect("read");
    let framed = 16 + records[0].len();
    let damaged_offset = 10 * framed;
    bytes[damaged_offset + 12 + 2] ^= 0xff; // a byte of record 10's data: its data CRC fails
    std::fs::write(&path, &bytes).expect("write");

    let error = statistics(&[&path], ReaderOptions::default(), 1)
        .expect_err("damaged")
        .to_string();
    assert!(
        error.contains(path.to_str().expect("UTF-8")) && error.contains(&damaged_offset.to_string()),
        "{error}"
    );

    let skip = ReaderOptions::default().on_corruption(OnCorruption::Resync);
    let stats = statistics(&[&path], skip, 1).expect("damage skipped");
    assert_eq!(stats.datasets[0].num_examples, 49);
    let n = feature(&stats, "n");
    let noted: Vec<(&str, f64)> = n
        .custom_stats
        .iter()
        .filter_map(|c| match c.val {
            Some(tfrec::stats::proto::custom_statistic::Val::Num(v)) => Some((c.name.as_str(), v)),
            _ => None,
        })
        .collect();
    assert_eq!(noted[0], ("tfrec_damaged_regions_skipped", 1.0));
    // The intact records' figures: those of the file without record 10.
    let mut intact = records;
    intact.remove(10);
    let mut acc = StatsAccumulator::new(StatsOptions::default()).expect("options");
    for record in &intact {
        acc.add_example(record, None).expect("adds");
    }
    let mut expected = acc.finish();
    let mut got = stats;
    for list in [&mut expected, &mut got] {
        for f in &mut list.datasets[0].features {
            f.custom_stats.clear();
        }
    }
    assert_eq!(got, expected);
}

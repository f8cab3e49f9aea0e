//! Batch parse throughput, end to end from files, on the parsing issue's three data sets.
//!
//! `cargo bench -p tfrec-cli --bench parse`. For each data set, in one run: `read only` (records
//! read and verified, batched, not parsed: the floor), then read + parse in batches of 1024 on
//! one thread and on two (minibatches on the rayon pool). Reported as records/s and MB/s, and
//! against TensorFlow 2.21's records/s on this kind of machine (TFRecordDataset → batch(1024) →
//! parse_example, one thread), as given in the issue: 0.76 M/s (a), 0.14 M/s (b), 0.10 M/s (c).
//!
//! `TFREC_BENCH_SCALE=0.05` for a quick smoke run; `TFREC_BENCH_ONLY=b` (a, b, c or d) for one set.
//!
//! (d) is a complexity check, not a throughput: 100 records under a RaggedFeature of 25 k and of
//! 100 k `row_lengths` partitions; 4x the partitions should take about 4x the time (16x would be
//! quadratic, as an old version was). The tests check the same parse by counted heap, not time.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

// The application picks the allocator: mimalloc keeps freed batch buffers for reuse instead of
// returning them to the kernel, which otherwise costs page faults on every batch.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::time::Duration;

use tfrec::parse::{ExampleParser, SequenceParser};
use tfrec::record::{ReaderOptions, RecordReader};

const BATCH: usize = 1024;
const ROUNDS: usize = 3;

/// Reads a file in batches of `BATCH` records into one reused arena, calling `each` per batch.
fn for_each_batch(path: &Path, mut each: impl FnMut(&[&[u8]])) {
    let mut reader = RecordReader::open(path, ReaderOptions::default()).expect("open");
    let mut arena: Vec<u8> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(BATCH);
    loop {
        arena.clear();
        spans.clear();
        while spans.len() < BATCH {
            match reader.next_record().expect("valid bench file") {
                Some(r) => {
                    let start = arena.len();
                    arena.extend_from_slice(r);
                    spans.push((start, arena.len()));
                }
                None => break,
            }
        }
        if spans.is_empty() {
            return;
        }
        let batch: Vec<&[u8]> = spans.iter().map(|&(s, e)| &arena[s..e]).collect();
        each(&batch);
        if spans.len() < BATCH {
            return;
        }
    }
}

/// All batches of a file, read once into memory (for timing the parse alone).
fn batches_in_memory(path: &Path) -> Vec<Vec<Vec<u8>>> {
    let mut all = Vec::new();
    for_each_batch(path, |b| all.push(b.iter().map(|r| r.to_vec()).collect()));
    all
}

fn report(name: &str, records: u64, bytes: u64, tf: f64, read: Duration, one: Duration, two: Duration) {
    let rate = |d: Duration| records as f64 / d.as_secs_f64() / 1e6;
    let mb = |d: Duration| bytes as f64 / d.as_secs_f64() / 1e6;
    println!(
        "\n{name}: {records} records, {:.0} MB (best of {ROUNDS})",
        bytes as f64 / 1e6
    );
    println!(
        "  read only            {:>6.2} M rec/s {:>7.0} MB/s",
        rate(read),
        mb(read)
    );
    println!(
        "  read+parse, 1 thread {:>6.2} M rec/s {:>7.0} MB/s  = {:.1}x TensorFlow ({tf} M/s)",
        rate(one),
        mb(one),
        rate(one) / tf
    );
    println!(
        "  read+parse, 2 threads{:>6.2} M rec/s {:>7.0} MB/s  = {:.1}x TensorFlow, {:.2}x one thread",
        rate(two),
        mb(two),
        rate(two) / tf,
        one.as_secs_f64() / two.as_secs_f64()
    );
}

/// A data set of Examples: how to make `n` records, and TensorFlow's records/s on it.
struct DataSet {
    name: &'static str,
    full: f64,
    which: usize,
    make: Box<dyn Fn(usize) -> Box<dyn Iterator<Item = Vec<u8>>>>,
    tf: f64,
}

fn in_memory(records: u64, one: Duration, two: Duration) {
    let rate = |d: Duration| records as f64 / d.as_secs_f64() / 1e6;
    println!(
        "  parse in memory: 1 thread {:.2} M rec/s, 2 threads {:.2} M rec/s ({:.2}x)",
        rate(one),
        rate(two),
        one.as_secs_f64() / two.as_secs_f64()
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let scale = data::scale();
    let n = |full: f64| ((full * scale) as usize).max(2 * BATCH);
    let dir = tempfile::tempdir().expect("temp dir");
    let two_threads = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");

    let sets = [
        DataSet {
            name: "(a) notebook, 4 scalars",
            full: 1_000_000.0,
            which: 0,
            make: Box::new(|k| Box::new(data::notebook(k))),
            tf: 0.76,
        },
        DataSet {
            name: "(b) 48 features",
            full: 200_000.0,
            which: 1,
            make: Box::new(|k| Box::new(data::wide(k))),
            tf: 0.14,
        },
    ];
    let only = std::env::var("TFREC_BENCH_ONLY").unwrap_or_default();
    let wanted = |set: &str| only.is_empty() || only == set;
    for DataSet {
        name,
        full,
        which,
        make,
        tf,
    } in sets
    {
        if !wanted(if which == 0 { "a" } else { "b" }) {
            continue;
        }
        let path = dir.path().join(format!("set{which}.tfrecord"));
        let (records, bytes) = data::write(&path, make(n(full)));
        let spec = if which == 0 {
            data::notebook_spec()
        } else {
            data::wide_spec()
        };
        let parser = ExampleParser::new(&spec).expect("spec");
        measure(name, &path, records, bytes, tf, &parser, &two_threads);
    }
    if wanted("d") {
        partitions_ratio();
    }
    if wanted("c") {
        let path = dir.path().join("sequences.tfrecord");
        let (records, bytes) = data::write(&path, data::sequences(n(50_000.0)));
        let parser = SequenceParser::new(&data::sequence_spec()).expect("spec");
        measure(
            "(c) SequenceExamples, 0-100 frames",
            &path,
            records,
            bytes,
            0.10,
            &parser,
            &two_threads,
        );
    }
}

/// The best of three parses of 100 records under `n` `row_lengths` partitions.
fn time_partitions(n: usize) -> Duration {
    let partitions = vec![r#"{"kind": "row_lengths", "key": "l"}"#; n].join(",");
    let spec = format!(
        r#"{{"r": {{"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "partitions": [{partitions}]}}}}"#
    );
    let parser = ExampleParser::new(&tfrec::parse::specs_from_json_str(&spec).expect("spec")).expect("parser");
    let records: Vec<Vec<u8>> = (0..100)
        .map(|i| {
            tfrec::example::Example::builder()
                .int64("v", vec![i as i64])
                .int64("l", vec![1i64])
                .build()
                .expect("example")
                .encode()
        })
        .collect();
    (0..3)
        .map(|_| {
            let started = std::time::Instant::now();
            std::hint::black_box(parser.parse_batch(&records).expect("parses"));
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn partitions_ratio() {
    let small = time_partitions(25_000);
    let large = time_partitions(100_000);
    println!(
        "(d) ragged partitions, 100 records: 25 k {:.1} ms, 100 k {:.1} ms: {:.1}x for 4x the partitions (linear 4, quadratic 16)",
        small.as_secs_f64() * 1e3,
        large.as_secs_f64() * 1e3,
        large.as_secs_f64() / small.as_secs_f64()
    );
}

/// The two parsers, as the benchmark drives them.
trait BatchParse: Sync {
    fn parse(&self, batch: &[&[u8]]);
    fn parse_parallel(&self, batch: &[&[u8]]);
}

impl BatchParse for ExampleParser {
    fn parse(&self, batch: &[&[u8]]) {
        std::hint::black_box(self.parse_batch(batch).expect("parse"));
    }
    fn parse_parallel(&self, batch: &[&[u8]]) {
        std::hint::black_box(self.parse_batch_parallel(batch, BATCH / 2).expect("parse"));
    }
}

impl BatchParse for SequenceParser {
    fn parse(&self, batch: &[&[u8]]) {
        std::hint::black_box(self.parse_batch(batch).expect("parse"));
    }
    fn parse_parallel(&self, batch: &[&[u8]]) {
        std::hint::black_box(self.parse_batch_parallel(batch, BATCH / 2).expect("parse"));
    }
}

/// Reads only, then reads and parses on one thread and on two, then parses from memory.
fn measure(
    name: &str,
    path: &Path,
    records: u64,
    bytes: u64,
    tf: f64,
    parser: &dyn BatchParse,
    two_threads: &rayon::ThreadPool,
) {
    let read = data::best_of(ROUNDS, &mut || {
        for_each_batch(path, |b| {
            std::hint::black_box(b);
        })
    });
    let one = data::best_of(ROUNDS, &mut || for_each_batch(path, |b| parser.parse(b)));
    let two = data::best_of(ROUNDS, &mut || {
        two_threads.install(|| for_each_batch(path, |b| parser.parse_parallel(b)))
    });
    report(name, records, bytes, tf, read, one, two);
    let memory = batches_in_memory(path);
    fn as_slices(b: &[Vec<u8>]) -> Vec<&[u8]> {
        b.iter().map(Vec::as_slice).collect()
    }
    let mem_one = data::best_of(ROUNDS, &mut || memory.iter().for_each(|b| parser.parse(&as_slices(b))));
    let mem_two = data::best_of(ROUNDS, &mut || {
        two_threads.install(|| memory.iter().for_each(|b| parser.parse_parallel(&as_slices(b))))
    });
    in_memory(records, mem_one, mem_two);
}

//! The input pipeline end to end, from files to parsed batches of 1024, on the parsing issue's
//! 200 k-record, 48-feature data set: with 1 and 2 worker threads, next to the same parse run
//! directly on batches already in memory (one thread), so the pipeline's overhead shows as a
//! ratio. `cargo bench -p tfrec-cli --bench pipeline`; `TFREC_BENCH_SCALE=0.05` for a smoke run.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use std::time::{Duration, Instant};

use tfrec::parse::ExampleParser;
use tfrec::pipeline::Dataset;
use tfrec::record::{ReaderOptions, RecordReader};

// See the parse bench: the application picks the allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCH: usize = 1024;
const ROUNDS: usize = 5;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let scale = data::scale();
    let n = ((200_000.0 * scale) as usize).max(4 * BATCH);
    let dir = tempfile::tempdir().expect("temp dir");
    // Four shards, as a data set usually comes.
    let files: Vec<_> = (0..4)
        .map(|i| {
            let path = dir.path().join(format!("wide-{i}.tfrecord"));
            data::write(&path, data::wide(n).skip(i * n / 4).take(n / 4));
            path
        })
        .collect();
    let specs = data::wide_spec();
    let parser = ExampleParser::new(&specs).expect("spec");

    // The baseline: the same batches, already in memory, parsed on one thread.
    let mut records: Vec<Vec<u8>> = Vec::with_capacity(n);
    for f in &files {
        let mut reader = RecordReader::open(f, ReaderOptions::default()).expect("open");
        while let Some(r) = reader.next_record().expect("valid") {
            records.push(r.to_vec());
        }
    }
    let total = records.len() as f64;
    let in_memory = || {
        for batch in records.chunks(BATCH) {
            std::hint::black_box(parser.parse_batch(batch).expect("parse"));
        }
    };
    let reader_only = || {
        for b in Dataset::from_files(files.clone())
            .interleave(4, 16)
            .expect("interleave")
            .batch(BATCH, false)
            .expect("batch size")
            .raw()
            .iter()
        {
            std::hint::black_box(b.expect("batch"));
        }
    };
    let pipeline = |threads: usize| {
        let batches = Dataset::from_files(files.clone())
            .interleave(4, 16)
            .expect("interleave")
            .batch(BATCH, false)
            .expect("batch size")
            .parse_examples(&specs)
            .expect("spec")
            .threads(threads)
            .prefetch(4)
            .iter();
        for b in batches {
            std::hint::black_box(b.expect("batch"));
        }
    };
    // The machine is shared: run the configurations in turn, round after round, and keep each
    // one's best, so a slow spell does not fall on one configuration only.
    let mut times = [Duration::MAX; 4];
    for _ in 0..ROUNDS {
        let runs: [&dyn Fn(); 4] = [&reader_only, &in_memory, &|| pipeline(1), &|| pipeline(2)];
        for (slot, run) in times.iter_mut().zip(runs) {
            let t = Instant::now();
            run();
            *slot = (*slot).min(t.elapsed());
        }
    }
    let [reader_only, in_memory, one, two] = times;
    // No pipeline at all: two plain threads, each parsing half of the batches in memory. This
    // is the most two threads can give this parse on this machine.
    let halves = data::best_of(ROUNDS, &mut || {
        let batches: Vec<&[Vec<u8>]> = records.chunks(BATCH).collect();
        let (a, b) = batches.split_at(batches.len() / 2);
        std::thread::scope(|s| {
            for part in [a, b] {
                let parser = &parser;
                s.spawn(move || {
                    for batch in part {
                        std::hint::black_box(parser.parse_batch(batch).expect("parse"));
                    }
                });
            }
        });
    });
    let rate = |d: Duration| total / d.as_secs_f64() / 1e6;
    println!(
        "\npipeline, 48-feature Examples: {} records in 4 files, batches of {BATCH} (best of {ROUNDS})",
        records.len()
    );
    println!("  reader only (no parsing)    {:>6.3} M rec/s", rate(reader_only));
    println!("  parse in memory, 1 thread   {:>6.3} M rec/s", rate(in_memory));
    println!(
        "  pipeline, 1 worker          {:>6.3} M rec/s  = {:>5.1}% of the in-memory parse (overhead {:+.1}%)",
        rate(one),
        100.0 * in_memory.as_secs_f64() / one.as_secs_f64(),
        100.0 * (one.as_secs_f64() / in_memory.as_secs_f64() - 1.0)
    );
    println!(
        "  pipeline, 2 workers         {:>6.3} M rec/s  = {:.2}x one worker",
        rate(two),
        one.as_secs_f64() / two.as_secs_f64()
    );
    println!(
        "  (ceiling: in-memory parse on 2 plain threads {:.3} M rec/s = {:.2}x one thread)",
        rate(halves),
        in_memory.as_secs_f64() / halves.as_secs_f64()
    );
}

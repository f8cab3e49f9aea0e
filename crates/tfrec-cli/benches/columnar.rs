//! Issue 13: the ctr-like 48-feature data set into Arrow record batches and Parquet, as ratios
//! to parsing the same batches into tensors (what `tfrec parse --format none` does) in the same
//! run; then Parquet back to serialized Examples. `ExampleColumns::to_batch` parses a batch of
//! more than 4,096 records on rayon's threads, so the baseline parses them the same way: the
//! ratios are what the conversion to Arrow costs, not a difference in threads.
//!
//! `cargo bench -p tfrec-cli --bench columnar`; `TFREC_BENCH_SCALE=0.05` for a
//! small run (CI), `TFREC_BENCH_ROUNDS` (default 3): each row is the best of its rounds.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use std::time::Duration;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use tfrec::columnar::{batch_to_records, ExampleColumns, StringColumns};
use tfrec::parse::ExampleParser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCH: usize = 8192;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rounds: usize = std::env::var("TFREC_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let n = ((200_000.0 * data::scale()) as usize).max(2 * BATCH);
    let records: Vec<Vec<u8>> = data::wide(n).collect();
    let bytes: usize = records.iter().map(Vec::len).sum();
    let specs = data::wide_spec();
    let parser = ExampleParser::new(&specs).expect("spec");
    let columns = ExampleColumns::new(&specs, &StringColumns::Binary).expect("columns");
    let temp = tempfile::tempdir().expect("temp dir");
    let parquet_path = temp.path().join("ctr.parquet");

    let parse = data::best_of(rounds, &mut || {
        for chunk in records.chunks(BATCH) {
            std::hint::black_box(parser.parse_batch_parallel(chunk, 2048).expect("parse"));
        }
    });
    let arrow = data::best_of(rounds, &mut || {
        for chunk in records.chunks(BATCH) {
            std::hint::black_box(columns.to_batch(chunk).expect("batch"));
        }
    });
    let to_parquet = data::best_of(rounds, &mut || {
        let file = std::fs::File::create(&parquet_path).expect("create");
        let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
        let mut writer = ArrowWriter::try_new(file, columns.schema(), Some(props)).expect("writer");
        for chunk in records.chunks(BATCH) {
            writer.write(&columns.to_batch(chunk).expect("batch")).expect("write");
        }
        writer.close().expect("close");
    });
    let parquet_size = std::fs::metadata(&parquet_path).map_or(0, |m| m.len());
    let back = data::best_of(rounds, &mut || {
        let file = std::fs::File::open(&parquet_path).expect("open");
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .expect("reader")
            .with_batch_size(BATCH)
            .build()
            .expect("reader");
        let mut count = 0;
        for batch in reader {
            count += batch_to_records(&batch.expect("batch")).expect("records").len();
        }
        assert_eq!(count, records.len());
    });

    println!(
        "\ncolumnar (issue 13): ctr-like, {} records of 48 features, {:.1} MB; best of {rounds}, batches of {BATCH} parsed on rayon's threads",
        records.len(),
        bytes as f64 / 1e6
    );
    let row = |what: &str, d: Duration| {
        let s = d.as_secs_f64();
        println!(
            "  {what:<40} {:>10.0} records/s {:>8.1} MB/s   {:.2}x parse",
            records.len() as f64 / s,
            bytes as f64 / 1e6 / s,
            parse.as_secs_f64() / s
        );
    };
    row("parse into tensors (the baseline)", parse);
    row("into Arrow record batches", arrow);
    row("into Parquet (Snappy) file", to_parquet);
    row("Parquet back to serialized Examples", back);
    println!(
        "  Parquet file: {:.1} MB ({:.2}x the TFRecord data)",
        parquet_size as f64 / 1e6,
        parquet_size as f64 / bytes as f64
    );

    short_lists(rounds);
}

/// Narrow Examples of short lists (the shape where Arrow was furthest behind the parse, issue
/// 28), on one thread: Arrow record batches against the parse into tensors they wrap.
fn short_lists(rounds: usize) {
    let n = ((600_000.0 * data::scale()) as usize).max(2 * BATCH);
    let records: Vec<Vec<u8>> = data::short_lists(n).collect();
    let specs = data::short_lists_spec();
    let parser = ExampleParser::new(&specs).expect("spec");
    let columns = ExampleColumns::new(&specs, &StringColumns::Binary).expect("columns");
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    let (parse, arrow) = one.install(|| {
        let parse = data::best_of(rounds, &mut || {
            for chunk in records.chunks(BATCH) {
                std::hint::black_box(parser.parse_batch(chunk).expect("parse"));
            }
        });
        let arrow = data::best_of(rounds, &mut || {
            for chunk in records.chunks(BATCH) {
                std::hint::black_box(columns.to_batch(chunk).expect("batch"));
            }
        });
        (parse, arrow)
    });
    println!(
        "\ncolumnar, short lists (a label, 0-5 ids, 3 weights, 0-3 tags), {} records, one thread, best of {rounds}:",
        records.len()
    );
    println!(
        "  parse {:.0} records/s, Arrow {:.0} records/s: Arrow {:.2}x the parse",
        records.len() as f64 / parse.as_secs_f64(),
        records.len() as f64 / arrow.as_secs_f64(),
        parse.as_secs_f64() / arrow.as_secs_f64()
    );
}

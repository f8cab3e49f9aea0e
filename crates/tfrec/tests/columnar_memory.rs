//! A wide schema's batch parsed in column slices (`ExampleColumns::to_column_slices`, which
//! `tfrec convert` uses for JSON lines) is never whole in memory as Arrow arrays: the heap it
//! needs is less than the whole batch's. (Slices that kept the batch's arrays, or a batch
//! made whole and then cut, would need as much or more.) Each slice is dropped here as soon
//! as it is handed out, as a writer that has written it does. For one-value columns the
//! parse's own columns, which both hold before any array is made, are the larger share.
//!
//! The heap is counted by a per-thread counting allocator (as in `parse_edge_cases.rs`); a
//! batch of a few records is parsed on the calling thread.

use tfrec::columnar::{ColumnSpecs, StringColumns, COLUMN_SLICE_WIDTH};
use tfrec::parse::SpecFile;

#[path = "common/heap.rs"]
mod heap;
use heap::{held_heap, peak_heap};
#[path = "common/wire.rs"]
mod wire;
use wire::field;

/// A spec of `columns` scalar int64 features named `f0`, `f1`, ….
fn one_int64_each(columns: usize) -> SpecFile {
    let mut spec = String::from("{");
    for c in 0..columns {
        let sep = if c + 1 == columns { "}" } else { ", " };
        spec.push_str(&format!(
            r#""f{c}": {{"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}{sep}"#
        ));
    }
    SpecFile::from_json_str(&spec).expect("spec")
}

/// Three records of `columns` one-value int64 features, `f0`, `f1`, ….
fn wide_records(columns: usize) -> Vec<Vec<u8>> {
    (0..3u8)
        .map(|r| {
            let mut entries = Vec::new();
            for c in 0..columns {
                let int64_list = field(0x1a, &field(0x0a, &[r + (c % 100) as u8]));
                let entry = [field(0x0a, format!("f{c}").as_bytes()), field(0x12, &int64_list)].concat();
                entries.extend(field(0x0a, &entry));
            }
            field(0x0a, &entries)
        })
        .collect()
}

/// `wide_records(columns)` and the compiled columns of `one_int64_each(columns)` (the spec
/// itself dropped, as `convert` drops it before the first batch).
fn wide_table(columns: usize) -> (Vec<Vec<u8>>, ColumnSpecs) {
    let spec = one_int64_each(columns);
    let specs = ColumnSpecs::new(&spec, &StringColumns::Binary).expect("columns");
    (wide_records(columns), specs)
}

#[test]
fn a_wide_batch_in_column_slices_never_holds_its_arrays() {
    let columns = 40 * COLUMN_SLICE_WIDTH;
    let (records, specs) = wide_table(columns);
    let (batch, whole) = peak_heap(|| specs.to_batch(&records).expect("batch"));
    let arrays = batch.get_array_memory_size();
    drop(batch);
    let (slices, sliced) = peak_heap(|| {
        let mut slices = 0;
        specs
            .to_column_slices(&records, COLUMN_SLICE_WIDTH, |_, slice| {
                assert!(slice.num_columns() <= COLUMN_SLICE_WIDTH);
                slices += 1;
                Ok(())
            })
            .expect("slices");
        slices
    });
    assert_eq!(slices, columns / COLUMN_SLICE_WIDTH);
    assert!(
        sliced < whole,
        "in slices {sliced} bytes, whole {whole} bytes, of which the arrays take {arrays}"
    );
}

/// A wide batch written to Arrow IPC a slice of columns at a time (`IpcColumnsWriter`, as
/// `tfrec convert` writes a wide schema) needs less heap than arrow-ipc's `FileWriter` given the
/// whole batch, and holds of each column, until the batch's message is written, only what the
/// message needs: its field node, its buffers' places and its bytes (here a validity byte and
/// a value, each padded to 8), not its array.
#[cfg(feature = "ipc")]
#[test]
fn a_wide_batch_written_to_arrow_ipc_in_slices_holds_little_a_column() {
    use tfrec::columnar::{ColumnarError, IpcColumnsWriter};
    let columns = 40 * COLUMN_SLICE_WIDTH;
    let (records, specs) = wide_table(columns);
    let schema = specs.schema();
    let ((), whole) = peak_heap(|| {
        let batch = specs.to_batch(&records).expect("batch");
        let mut writer = arrow_ipc::writer::FileWriter::try_new(std::io::sink(), &schema).expect("writer");
        writer.write(&batch).expect("write");
        writer.finish().expect("finish");
    });
    let (writer, held) = held_heap(|| {
        let mut writer = IpcColumnsWriter::try_new(std::io::sink(), schema.clone()).expect("writer");
        specs
            .to_column_slices(&records, COLUMN_SLICE_WIDTH, |first, slice| {
                writer
                    .write_columns(first, &slice)
                    .map_err(|error| ColumnarError::Arrow {
                        column: String::new(),
                        error,
                    })
            })
            .expect("slices");
        writer
    });
    let per_column = held / columns;
    println!("an open batch in Arrow IPC: {per_column} bytes a column");
    // 16 for the node, 32 for the two buffers' places, 8 + 24 for their bytes; at most as much
    // again of room the vectors grew into. A column's array alone takes more than that.
    assert!(per_column <= 2 * 80, "the open batch holds {per_column} bytes a column");
    let ((), sliced) = peak_heap(|| {
        let mut writer = writer;
        writer.end_batch().expect("end");
        writer.finish().expect("finish");
    });
    let sliced = sliced + held;
    assert!(sliced < whole, "in slices {sliced} bytes, whole {whole} bytes");
}

/// A wide batch written to Parquet a slice of columns at a time (as `tfrec convert` writes a
/// wide schema) needs less heap than `ArrowWriter` given the whole batch, and holds of each
/// column, until the file's footer is written, only the footer's pieces: its column chunk's
/// metadata and page indexes, encoded and compressed, and their lengths; not its array, nor
/// the parquet crate's structures of its metadata (several times as much: the performance
/// guide has the figures).
#[cfg(feature = "parquet")]
#[test]
fn a_wide_batch_written_to_parquet_in_slices_holds_little_a_column() {
    let columns = 40 * COLUMN_SLICE_WIDTH;
    let (held, sliced, whole) = parquet_in_slices(columns);
    // What a column adds, apart from what any file holds (its spools' open blocks, the
    // writer's own state): the difference between two widths.
    let (held_half, _, _) = parquet_in_slices(columns / 2);
    let per_column = held.saturating_sub(held_half) / (columns - columns / 2);
    println!("a Parquet file's footer pieces: {per_column} bytes a column, {held} bytes in all");
    // A column's footer pieces are its schema element, column order, `ColumnChunk`, column
    // index and offset index, encoded, compressed once a spool's block is full, and 16 bytes
    // of lengths (the performance guide has their sizes). At this width a good share is still
    // in the spools' open blocks, uncompressed.
    assert!(
        per_column <= 100,
        "the file holds {per_column} bytes a column until it closes"
    );
    let sliced = sliced + held;
    println!("Parquet in slices: {sliced} bytes at the peak, whole: {whole}");
    assert!(sliced < whole / 4, "in slices {sliced} bytes, whole {whole} bytes");
}

/// For a batch of `columns` one-value int64 columns written to Parquet in slices: the heap
/// the open file holds when its last row group has ended, the peak while it closes, and the
/// peak of `ArrowWriter` given the whole batch.
#[cfg(feature = "parquet")]
fn parquet_in_slices(columns: usize) -> (usize, usize, usize) {
    use tfrec::columnar::{ColumnarError, ParquetWriter};
    let (records, specs) = wide_table(columns);
    let schema = specs.schema();
    let ((), whole) = peak_heap(|| {
        let batch = specs.to_batch(&records).expect("batch");
        let mut writer = parquet::arrow::ArrowWriter::try_new(std::io::sink(), schema.clone(), None).expect("writer");
        writer.write(&batch).expect("write");
        writer.close().expect("close");
    });
    // All on the pool's one thread, whose heap the counts are: the encoders drop the slices'
    // arrays there.
    let pool = std::sync::Arc::new(rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool"));
    let (held, closing) = pool.clone().install(|| {
        let (writer, held) = held_heap(|| {
            let mut writer = ParquetWriter::new(std::io::sink(), schema.clone(), pool).expect("writer");
            specs
                .to_column_slices(&records, COLUMN_SLICE_WIDTH, |first, slice| {
                    writer
                        .write_columns(first, &slice)
                        .map_err(|error| ColumnarError::Unsupported {
                            column: String::new(),
                            reason: error.to_string(),
                        })
                })
                .expect("slices");
            writer.end_row_group().expect("end");
            writer
        });
        let ((), closing) = peak_heap(|| {
            writer.close().expect("close");
        });
        (held, closing)
    });
    (held, closing, whole)
}

/// What a wide spec's compiled columns hold a column (parser slots, outputs, key table and
/// size hints, column plans and the Arrow schema's fields), counted as the bytes asked of the
/// allocator: issue 56's bound allows a wide record's conversion 600 bytes a column for all it
/// holds beside the record, the batch's arrays and the output's own structures included (the
/// performance guide has the figures before and after the parser was made smaller).
#[test]
fn a_wide_spec_compiles_to_few_bytes_a_column() {
    let columns = 40_000;
    let spec = one_int64_each(columns);
    let (specs, held) = held_heap(|| ColumnSpecs::new(&spec, &StringColumns::Binary).expect("columns"));
    let per_column = held / columns;
    println!("compiled columns: {per_column} bytes a column");
    assert!(
        per_column <= 360,
        "the compiled columns hold {per_column} bytes a column"
    );
    drop(specs);
}

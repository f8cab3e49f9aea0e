//! `tfrec convert`: TFRecord ↔ Parquet / Arrow IPC round trips keep every feature, JSON lines and
//! CSV outputs, spec inference and saving, and the data-safety conventions (output is never an
//! input, nothing partial left behind, clear errors naming the column).

use std::path::Path;
use std::process::{Command, Output};

use tfrec::example::{Example, Feature};
use tfrec::record::{ReaderOptions, RecordReader, RecordWriter, WriterOptions};

fn tfrec(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfrec"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrec")
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = tfrec(dir, args);
    assert!(
        out.status.success(),
        "tfrec {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fails(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = tfrec(dir, args);
    assert!(!out.status.success(), "tfrec {args:?} succeeded");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn example(i: i64) -> Example {
    let mut e = Example::default();
    let f = e.features_mut();
    f.insert("id", Feature::Int64(vec![i]));
    f.insert("pair", Feature::Float(vec![i as f32 * 0.5, -1.25]));
    f.insert("name", Feature::Bytes(vec![format!("n{i}").into_bytes()]));
    if i % 2 == 0 {
        f.insert("tags", Feature::Int64((0..i % 5).collect()));
    }
    if i % 7 == 3 {
        f.insert("raw", Feature::Bytes(vec![vec![0xff, 0x00, i as u8]]));
    }
    e
}

fn write_examples(path: &Path, examples: &[Example], gzip: bool) {
    let options = if gzip {
        WriterOptions::default().compression(tfrec::record::CompressionChoice::Exactly(
            tfrec::record::Compression::Gzip,
        ))
    } else {
        WriterOptions::default()
    };
    let mut w = RecordWriter::create(path, options).expect("create");
    for e in examples {
        w.write_record(&e.encode()).expect("write");
    }
    w.finish().expect("finish");
}

fn read_examples(path: &Path) -> Vec<Example> {
    let mut r = RecordReader::open(path, ReaderOptions::default()).expect("open");
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().expect("read") {
        out.push(Example::decode(rec).expect("decode"));
    }
    out
}

fn same(a: &Example, b: &Example) {
    let mut x: Vec<_> = a.features().iter().collect();
    let mut y: Vec<_> = b.features().iter().collect();
    x.sort_by_key(|p| p.0);
    y.sort_by_key(|p| p.0);
    assert_eq!(x, y);
}

/// The Parquet file `tfrec convert INPUT -o OUT ARGS --threads N` writes, for N of 1, 2 and 3:
/// the same bytes each time (those bytes).
fn same_file_whatever_the_threads(d: &Path, input: &str, args: &[&str]) -> Vec<u8> {
    let outputs: Vec<Vec<u8>> = ["1", "2", "3"]
        .iter()
        .map(|threads| {
            let out = format!("t{threads}.parquet");
            let mut all = vec!["convert", input, "-o", &out];
            all.extend_from_slice(args);
            all.extend_from_slice(&["--threads", threads]);
            ok(d, &all);
            std::fs::read(d.join(&out)).expect("output")
        })
        .collect();
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{input}: the files differ");
    outputs.into_iter().next().unwrap_or_default()
}

/// The error of `tfrec convert INPUT -o OUT ARGS --threads N`, for each N of `threads`: the
/// same each time (exit status 1, the output's name aside), with no output left behind.
fn same_error_whatever_the_threads(d: &Path, input: &str, args: &[&str], threads: &[&str]) -> String {
    let errors: Vec<String> = threads
        .iter()
        .map(|threads| {
            let out = format!("late{threads}.parquet");
            let mut all = vec!["convert", input, "-o", &out];
            all.extend_from_slice(args);
            all.extend_from_slice(&["--threads", threads]);
            let (code, stderr) = fails(d, &all);
            assert_eq!(code, 1, "{stderr}");
            assert!(!d.join(&out).exists());
            stderr.replace(&out, "OUT")
        })
        .collect();
    assert!(errors.windows(2).all(|w| w[0] == w[1]), "{errors:?}");
    errors.into_iter().next().unwrap_or_default()
}

/// Every record of `got` has the features `keys` of the record of `want` at its place (an
/// empty list and no feature alike: a column cannot tell them apart).
fn same_features(want: &[Example], got: &[Example], keys: &[&str]) {
    assert_eq!(got.len(), want.len());
    for (a, b) in want.iter().zip(got) {
        for key in keys {
            let feature = |e: &Example| e.features().get(key).cloned().filter(|f| !f.is_empty());
            assert_eq!(feature(b), feature(a), "{key}");
        }
    }
}

#[test]
fn parquet_and_ipc_round_trips_keep_every_feature() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    let examples: Vec<Example> = (0..300).map(example).collect();
    write_examples(&d.join("in.tfrecord.gz"), &examples, true);
    for out in ["data.parquet", "data.arrow", "data.feather"] {
        let back = format!("back-{out}.tfrecord");
        ok(
            d,
            &[
                "convert",
                "in.tfrecord.gz",
                "-o",
                out,
                "--batch-rows",
                "64",
                "--infer-rows",
                "300",
            ],
        );
        ok(d, &["convert", out, "-o", &back, "--batch-rows", "50"]);
        let got = read_examples(&d.join(&back));
        assert_eq!(got.len(), examples.len(), "{out}");
        for (a, b) in examples.iter().zip(&got) {
            same(a, b);
        }
    }
}

/// More columns than Parquet encodes at once (1,024) and than get dictionary pages (4,096):
/// the row groups are spliced from several column slices, in schema order, and read back
/// whole; mixed kinds make a misplaced slice show as a type error or a wrong value.
#[test]
fn wide_records_round_trip_through_parquet() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    let wide = |i: i64| {
        let mut e = Example::default();
        let f = e.features_mut();
        for k in 0..5000i64 {
            let key = format!("f{k:05}");
            match k % 3 {
                0 => f.insert(key, Feature::Int64(vec![k * 10 + i])),
                1 => f.insert(key, Feature::Float(vec![k as f32 + 0.5, i as f32])),
                _ => f.insert(key, Feature::Bytes(vec![format!("{k}/{i}").into_bytes()])),
            };
        }
        e
    };
    let examples: Vec<Example> = (0..3).map(wide).collect();
    write_examples(&d.join("wide.tfrecord"), &examples, false);
    ok(
        d,
        &["convert", "wide.tfrecord", "-o", "wide.parquet", "--batch-rows", "2"],
    );
    ok(d, &["convert", "wide.parquet", "-o", "back.tfrecord"]);
    let got = read_examples(&d.join("back.tfrecord"));
    assert_eq!(got.len(), examples.len());
    for (a, b) in examples.iter().zip(&got) {
        same(a, b);
    }
}

#[test]
fn spec_is_inferred_printed_and_saved() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), &(0..20).map(example).collect::<Vec<_>>(), false);
    let stderr = ok(
        d,
        &[
            "convert",
            "in.tfrecord",
            "-o",
            "a.parquet",
            "--print-spec",
            "--save-spec",
            "spec.json",
        ],
    );
    assert!(
        stderr.contains("FixedLenFeature") && stderr.contains("VarLenFeature"),
        "{stderr}"
    );
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("spec.json")).expect("spec")).expect("json");
    assert_eq!(spec["id"]["type"], "FixedLenFeature");
    assert_eq!(spec["pair"]["shape"], serde_json::json!([2]));
    assert_eq!(spec["tags"]["type"], "VarLenFeature");
    // The saved spec is what --spec reads, and gives the same file.
    ok(d, &["convert", "in.tfrecord", "-o", "b.parquet", "--spec", "spec.json"]);
}

#[test]
fn jsonl_and_csv_outputs() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), &(0..10).map(example).collect::<Vec<_>>(), false);
    ok(d, &["convert", "in.tfrecord", "-o", "out.jsonl", "--utf8"]);
    let text = std::fs::read_to_string(d.join("out.jsonl")).expect("jsonl");
    assert_eq!(text.lines().count(), 10);
    let first: serde_json::Value = serde_json::from_str(text.lines().next().expect("line")).expect("json");
    assert_eq!(first["id"], 0);
    assert_eq!(first["name"], "n0");
    // CSV holds flat columns only: a list column is an error naming it, and nothing is written.
    let (code, stderr) = fails(d, &["convert", "in.tfrecord", "-o", "out.csv"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("'pair'") || stderr.contains("'tags'"), "{stderr}");
    assert!(!d.join("out.csv").exists());
    std::fs::write(
        d.join("flat.json"),
        r#"{"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}, "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"}}"#,
    )
    .expect("spec");
    ok(
        d,
        &[
            "convert",
            "in.tfrecord",
            "-o",
            "out.csv",
            "--spec",
            "flat.json",
            "--utf8",
        ],
    );
    let csv = std::fs::read_to_string(d.join("out.csv")).expect("csv");
    assert_eq!(csv.lines().next(), Some("id,name"));
    assert_eq!(csv.lines().count(), 11);
}

#[test]
fn refuses_output_that_is_an_input_and_reports_bad_data() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), &(0..10).map(example).collect::<Vec<_>>(), false);
    let (code, stderr) = fails(d, &["convert", "in.tfrecord", "-o", "in.tfrecord", "--to", "parquet"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("refusing"), "{stderr}");
    assert_eq!(read_examples(&d.join("in.tfrecord")).len(), 10);
    // A spec that does not match the data: exit 1, the file and offset named, nothing left.
    std::fs::write(
        d.join("bad.json"),
        r#"{"id": {"type": "FixedLenFeature", "shape": [], "dtype": "float32"}}"#,
    )
    .expect("spec");
    let (code, stderr) = fails(d, &["convert", "in.tfrecord", "-o", "x.parquet", "--spec", "bad.json"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("in.tfrecord@"), "{stderr}");
    assert!(!d.join("x.parquet").exists());
    assert!(std::fs::read_dir(d).expect("dir").all(|e| !e
        .expect("entry")
        .file_name()
        .to_string_lossy()
        .contains("partial")));
    // Invalid UTF-8 with --utf8 and a spec saying so: names the column.
    std::fs::write(
        d.join("raw.json"),
        r#"{"raw": {"type": "VarLenFeature", "dtype": "string"}}"#,
    )
    .expect("spec");
    let (_, stderr) = fails(
        d,
        &[
            "convert",
            "in.tfrecord",
            "-o",
            "y.parquet",
            "--spec",
            "raw.json",
            "--utf8",
        ],
    );
    assert!(stderr.contains("'raw'"), "{stderr}");
}

/// The columns come in the order the spec file names the features (as a user reads a table),
/// not in name order: in CSV's header and in the Parquet schema.
#[test]
fn columns_follow_the_spec_files_order() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    write_examples(&d.join("in.tfrecord"), &(0..10).map(example).collect::<Vec<_>>(), false);
    std::fs::write(
        d.join("order.json"),
        r#"{"name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
            "pair": {"type": "FixedLenFeature", "shape": [2], "dtype": "float32"},
            "id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}"#,
    )
    .expect("spec");
    std::fs::write(
        d.join("flat.json"),
        r#"{"name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
            "id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}"#,
    )
    .expect("spec");
    ok(
        d,
        &["convert", "in.tfrecord", "-o", "o.csv", "--spec", "flat.json", "--utf8"],
    );
    let csv = std::fs::read_to_string(d.join("o.csv")).expect("csv");
    assert_eq!(csv.lines().take(2).collect::<Vec<_>>(), ["name,id", "n0,0"]);
    ok(
        d,
        &["convert", "in.tfrecord", "-o", "o.parquet", "--spec", "order.json"],
    );
    let file = std::fs::File::open(d.join("o.parquet")).expect("parquet");
    let reader = parquet::file::reader::SerializedFileReader::new(file).expect("reader");
    let schema = parquet::file::reader::FileReader::metadata(&reader)
        .file_metadata()
        .schema_descr_ptr();
    let top: Vec<&str> = schema.root_schema().get_fields().iter().map(|f| f.name()).collect();
    assert_eq!(top, ["name", "pair", "id"]);
}

/// With two threads a batch is read and parsed while the one before it is written: the same
/// file, byte for byte, as one thread writes; and a record that fails in a late batch is the
/// same error, with nothing left behind.
#[test]
fn threads_write_the_same_file_and_the_same_error() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    write_examples(
        &d.join("in.tfrecord"),
        &(0..500).map(example).collect::<Vec<_>>(),
        false,
    );
    same_file_whatever_the_threads(d, "in.tfrecord", &["--batch-rows", "64"]);
    assert_eq!(read_examples(&d.join("in.tfrecord")).len(), 500);

    // Record 400 of 500 has a float `id` where the spec says int64.
    let mut examples: Vec<Example> = (0..500).map(example).collect();
    examples[400].features_mut().insert("id", Feature::Float(vec![1.5]));
    write_examples(&d.join("late.tfrecord"), &examples, false);
    std::fs::write(
        d.join("ids.json"),
        r#"{"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}"#,
    )
    .expect("spec");
    let error = same_error_whatever_the_threads(
        d,
        "late.tfrecord",
        &["--spec", "ids.json", "--batch-rows", "64"],
        &["1", "2"],
    );
    assert!(error.contains("late.tfrecord@"), "{error}");
}

/// A column of several MB is given to its Parquet encoder in slices, and with two threads
/// or more the columns are encoded at once: the file is the same, byte for byte, whatever the
/// number of threads, and it reads back as the records it came from (a long float list, a
/// sparse feature whose struct has two Parquet leaves, strings, lists of none).
#[test]
fn large_columns_encode_in_slices_whatever_the_threads() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    let record = |i: i64| {
        let mut e = Example::default();
        let f = e.features_mut();
        let len = (i * 7919 % 9000) as usize;
        f.insert(
            "big",
            Feature::Float((0..len).map(|k| (k as f32).mul_add(0.25, i as f32)).collect()),
        );
        f.insert(
            "ids",
            Feature::Int64((0..i % 4).map(|k| k * 1_000_000_007 + i).collect()),
        );
        f.insert("name", Feature::Bytes(vec![format!("record {i}").into_bytes()]));
        f.insert("at", Feature::Int64((0..i % 3).map(|k| k * 10 + i % 10).collect()));
        f.insert("w", Feature::Float((0..i % 3).map(|k| k as f32 - 0.5).collect()));
        e
    };
    let examples: Vec<Example> = (0..300).map(record).collect();
    write_examples(&d.join("in.tfrecord"), &examples, false);
    std::fs::write(
        d.join("spec.json"),
        r#"{"big": {"type": "VarLenFeature", "dtype": "float32"},
            "ids": {"type": "VarLenFeature", "dtype": "int64"},
            "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
            "s": {"type": "SparseFeature", "index_key": "at", "value_key": "w", "dtype": "float32", "size": 100}}"#,
    )
    .expect("spec");
    same_file_whatever_the_threads(d, "in.tfrecord", &["--spec", "spec.json"]);
    // More floats than one slice of the column (1 MB) holds.
    let floats: usize = examples
        .iter()
        .filter_map(|e| match e.features().get("big") {
            Some(Feature::Float(v)) => Some(v.len()),
            _ => None,
        })
        .sum();
    assert!(floats * 4 > 4 << 20, "{floats}");

    ok(d, &["convert", "t2.parquet", "-o", "back.tfrecord"]);
    same_features(
        &examples,
        &read_examples(&d.join("back.tfrecord")),
        &["big", "ids", "name", "at", "w"],
    );
}

/// A batch of more records than a part holds (4,096) goes to Parquet in parts, parsed a few at
/// a time while the row group is written: the same file whatever the number of threads, one
/// row group per batch, every record back; a bad record in a late part is the error a whole
/// batch gives, at that record, whatever the number of threads.
#[test]
fn batches_larger_than_a_part_convert_the_same_whatever_the_threads() {
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    let examples: Vec<Example> = (0..10_000).map(example).collect();
    write_examples(&d.join("in.tfrecord"), &examples, false);
    std::fs::write(
        d.join("spec.json"),
        r#"{"id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            "pair": {"type": "FixedLenFeature", "shape": [2], "dtype": "float32"},
            "name": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
            "tags": {"type": "VarLenFeature", "dtype": "int64"}}"#,
    )
    .expect("spec");
    same_file_whatever_the_threads(d, "in.tfrecord", &["--spec", "spec.json", "--batch-rows", "9000"]);
    let file = std::fs::File::open(d.join("t2.parquet")).expect("parquet");
    let reader = parquet::file::reader::SerializedFileReader::new(file).expect("reader");
    let groups: Vec<i64> = parquet::file::reader::FileReader::metadata(&reader)
        .row_groups()
        .iter()
        .map(|g| g.num_rows())
        .collect();
    assert_eq!(groups, [9000, 1000]);
    ok(d, &["convert", "t2.parquet", "-o", "back.tfrecord"]);
    same_features(
        &examples,
        &read_examples(&d.join("back.tfrecord")),
        &["id", "pair", "name", "tags"],
    );

    // Record 8,500 of the first batch, in its third part, has a float `id`.
    let mut bad = examples.clone();
    bad[8500].features_mut().insert("id", Feature::Float(vec![1.5]));
    write_examples(&d.join("late.tfrecord"), &bad, false);
    let offset = {
        let mut r = RecordReader::open(d.join("late.tfrecord"), ReaderOptions::default()).expect("open");
        (0..8500).for_each(|_| {
            r.next_record().expect("read").expect("record");
        });
        r.position()
    };
    let error = same_error_whatever_the_threads(
        d,
        "late.tfrecord",
        &["--spec", "spec.json", "--batch-rows", "9000"],
        &["1", "2", "3"],
    );
    assert!(
        error.contains(&format!("late.tfrecord@{offset}")),
        "{error} (record at {offset})"
    );
}

/// JSON lines, Arrow IPC and Parquet of a wide schema (written a slice of columns at a time, so
/// that a batch is never whole as Arrow arrays) hold the whole batches: the Parquet file is byte
/// for byte the one converted from the Arrow IPC file, whose batches come whole, the Arrow IPC
/// file's batches are those read from the Parquet file, and the JSON lines are the lines
/// arrow_json writes of them. Features missing from some records (NULLs left out of a line,
/// whole slices of a line empty), strings, lists, a spec whose order is not the names' (a slice
/// waits for its last column), several batches and both thread counts.
#[test]
fn wide_outputs_in_column_slices_hold_the_whole_batches() {
    let dir = tempfile::tempdir().expect("temp");
    let width = tfrec::columnar::WIDE_SCHEMA_COLUMNS + 700;
    let examples: Vec<Example> = (0..23i64)
        .map(|i| {
            let mut e = Example::default();
            let f = e.features_mut();
            for c in 0..width as i64 {
                // Record 5 has only the first features; others skip a run of columns or every
                // third one.
                if (i == 5 && c > 40) || (i % 4 == 1 && (1500..3000).contains(&c)) || (i % 3 == 2 && c % 3 == 0) {
                    continue;
                }
                match c % 4 {
                    0 => f.insert(format!("f{c:05}"), Feature::Int64(vec![i * c])),
                    1 => f.insert(format!("f{c:05}"), Feature::Float(vec![c as f32 * 0.25, -(i as f32)])),
                    2 => f.insert(
                        format!("f{c:05}"),
                        Feature::Bytes(vec![format!("v\n\"{i}").into_bytes()]),
                    ),
                    _ => f.insert(format!("f{c:05}"), Feature::Int64((0..(i + c) % 3).collect())),
                };
            }
            e
        })
        .collect();
    write_examples(&dir.path().join("wide.tfrecord"), &examples, false);
    // Every feature a VarLenFeature (NULL when missing), listed from the last name to the first.
    let mut spec = String::from("{");
    for c in (0..width).rev() {
        let dtype = ["int64", "float32", "string", "int64"][c % 4];
        spec.push_str(&format!(
            r#""f{c:05}": {{"type": "VarLenFeature", "dtype": "{dtype}"}}"#
        ));
        spec.push_str(if c == 0 { "}" } else { ", " });
    }
    std::fs::write(dir.path().join("spec.json"), spec).expect("spec");
    for (threads, batch_rows) in [("1", "10"), ("2", "23"), ("2", "4")] {
        let common = [
            "--spec",
            "spec.json",
            "--threads",
            threads,
            "--batch-rows",
            batch_rows,
            "--utf8",
        ];
        for out in ["wide.jsonl", "wide.arrow", "wide.parquet"] {
            let mut args = vec!["convert", "wide.tfrecord", "-o", out];
            args.extend(common);
            ok(dir.path(), &args);
        }
        ok(
            dir.path(),
            &[
                "convert",
                "wide.arrow",
                "-o",
                "whole.parquet",
                "--threads",
                threads,
                "--batch-rows",
                batch_rows,
            ],
        );
        let read = |name: &str| std::fs::read(dir.path().join(name)).expect("parquet");
        assert!(
            read("wide.parquet") == read("whole.parquet"),
            "threads {threads}, batches of {batch_rows}"
        );
        let file = std::fs::File::open(dir.path().join("wide.parquet")).expect("parquet");
        let rows = batch_rows.parse().expect("rows");
        let whole: Vec<arrow_array::RecordBatch> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                .expect("parquet reader")
                .with_batch_size(rows)
                .build()
                .expect("parquet reader")
                .collect::<Result<_, _>>()
                .expect("parquet batches");
        let file = std::fs::File::open(dir.path().join("wide.arrow")).expect("arrow");
        let reader = arrow_ipc::reader::FileReader::try_new(file, None).expect("arrow reader");
        let sliced: Vec<arrow_array::RecordBatch> = reader.collect::<Result<_, _>>().expect("arrow batches");
        assert_eq!(sliced.len(), whole.len(), "threads {threads}, batches of {batch_rows}");
        for (s, w) in sliced.iter().zip(&whole) {
            assert_eq!(s.schema().fields(), w.schema().fields());
            assert!(s.columns() == w.columns(), "threads {threads}, batches of {batch_rows}");
        }
        let mut expected = arrow_json::LineDelimitedWriter::new(Vec::new());
        for batch in &sliced {
            expected.write(batch).expect("json");
        }
        expected.finish().expect("finish");
        let got = std::fs::read(dir.path().join("wide.jsonl")).expect("jsonl");
        assert_eq!(got.iter().filter(|&&b| b == b'\n').count(), examples.len());
        assert!(
            got == expected.into_inner(),
            "threads {threads}, batches of {batch_rows}"
        );
    }
}

//! The columnar layer against the golden parse cases: for every case whose spec has a columnar
//! form, the Arrow columns hold exactly the parse op's tensors (floats bit for bit, NULL only
//! where the tensor row is empty); where the parse op fails, the batch fails too. Then round
//! trips of every case's Examples (with an inferred spec) through Parquet and Arrow IPC give
//! back the same features, kinds and values. Cases without a columnar form are counted with
//! their reason and printed; none is skipped silently.

mod common;

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use base64::Engine;
use serde_json::{json, Value};
use tfrec::columnar::{batch_to_examples, infer_specs, ColumnarError, ExampleColumns, SequenceColumns, StringColumns};
use tfrec::example::{Example, Feature};
use tfrec::parse::{
    specs_from_json_str, DenseTensor, ExampleParser, Nested, SequenceParser, SequenceSpecs, SpecFile, Tensor, Values,
};

fn records_of(case: &Value) -> Vec<Vec<u8>> {
    case["serialized"]
        .as_array()
        .expect("serialized")
        .iter()
        .map(|s| {
            base64::engine::general_purpose::STANDARD
                .decode(s.as_str().expect("base64 string"))
                .expect("base64")
        })
        .collect()
}

fn cases() -> Vec<Value> {
    let path = common::golden_dir().join("parse_cases.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("case JSON"))
        .collect()
}

fn name(case: &Value) -> String {
    case["id"].as_str().or(case["name"].as_str()).unwrap_or("?").to_owned()
}

/// A value in a comparable form: floats by their bits, bytes as arrays of numbers.
fn float(v: f32) -> Value {
    json!({"f32": v.to_bits()})
}

fn bytes(b: &[u8]) -> Value {
    json!(b)
}

/// Row `row` of an Arrow array as nested JSON.
fn cell(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Int64 => json!(array.as_primitive::<Int64Type>().value(row)),
        DataType::Float32 => float(array.as_primitive::<Float32Type>().value(row)),
        DataType::Binary => bytes(array.as_binary::<i32>().value(row)),
        DataType::Utf8 => bytes(array.as_string::<i32>().value(row).as_bytes()),
        DataType::List(_) => {
            let v = array.as_list::<i32>().value(row);
            Value::Array((0..v.len()).map(|i| cell(v.as_ref(), i)).collect())
        }
        DataType::FixedSizeList(..) => {
            let v = array.as_fixed_size_list().value(row);
            Value::Array((0..v.len()).map(|i| cell(v.as_ref(), i)).collect())
        }
        DataType::Struct(_) => {
            let s = array.as_struct();
            Value::Object(
                s.fields()
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| (f.name().clone(), cell(c.as_ref(), row)))
                    .collect(),
            )
        }
        other => panic!("unexpected type {other}"),
    }
}

fn dense_flat(t: &DenseTensor) -> Vec<Value> {
    match t.values() {
        Values::Int64(a) => a.iter().map(|v| json!(v)).collect(),
        Values::Float32(a) => a.iter().map(|&v| float(v)).collect(),
        Values::String(a) => a.iter().map(bytes).collect(),
    }
}

/// Groups flat values into nested arrays of `dims` (row-major).
fn shape_values(flat: &[Value], dims: &[usize]) -> Value {
    match dims.split_first() {
        None => flat.first().cloned().unwrap_or(Value::Null),
        Some((&d, rest)) => {
            let per: usize = rest.iter().product();
            Value::Array(
                (0..d)
                    .map(|i| shape_values(&flat[i * per..(i + 1) * per], rest))
                    .collect(),
            )
        }
    }
}

fn nested(n: &Nested) -> Value {
    match n {
        Nested::Int64(v) => json!(v),
        Nested::Float32(v) => float(*v),
        Nested::Bytes(b) => bytes(b),
        Nested::List(items) => Value::Array(items.iter().map(nested).collect()),
    }
}

/// The rows of a batch tensor as nested JSON, as its column should hold them (ignoring NULL,
/// which stands for an empty row here). `steps`: the step count of each row of a feature list.
/// The rows of a parse tensor in the form of the column built for it (`sparse_feature`: the
/// tensor of a `SparseFeature`, whose column is a struct of index lists and values at any rank).
fn tensor_rows(
    t: &Tensor,
    nrows: usize,
    lengths: Option<&[i64]>,
    steps: Option<&[usize]>,
    sparse_feature: bool,
) -> Vec<Value> {
    match t {
        Tensor::Dense(d) => {
            let flat = dense_flat(d);
            let shape = d.shape();
            let per: usize = shape[1..].iter().product();
            (0..nrows)
                .map(|r| {
                    let row = &flat[r * per..(r + 1) * per];
                    match lengths {
                        None => shape_values(row, &shape[1..]),
                        Some(l) => {
                            let step: usize = shape[2..].iter().product();
                            let n = l[r] as usize;
                            Value::Array(
                                (0..n)
                                    .map(|s| shape_values(&row[s * step..(s + 1) * step], &shape[2..]))
                                    .collect(),
                            )
                        }
                    }
                })
                .collect()
        }
        Tensor::Sparse(s) => {
            let values = dense_flat(&s.values);
            let rank = s.indices.ncols();
            let mut rows: Vec<Value> = vec![Value::Array(Vec::new()); nrows];
            if let Some(steps) = steps {
                for (r, row) in rows.iter_mut().enumerate() {
                    *row = Value::Array(vec![Value::Array(Vec::new()); steps[r]]);
                }
                for (i, v) in values.iter().enumerate() {
                    let (b, t) = (s.indices[[i, 0]] as usize, s.indices[[i, 1]] as usize);
                    rows[b][t].as_array_mut().unwrap().push(v.clone());
                }
            } else if rank == 2 && !sparse_feature {
                for (i, v) in values.iter().enumerate() {
                    rows[s.indices[[i, 0]] as usize].as_array_mut().unwrap().push(v.clone());
                }
            } else {
                // A SparseFeature: its index columns and values per row.
                let mut per: Vec<(Vec<Vec<i64>>, Vec<Value>)> = vec![(vec![Vec::new(); rank - 1], Vec::new()); nrows];
                for (i, v) in values.iter().enumerate() {
                    let b = s.indices[[i, 0]] as usize;
                    for d in 1..rank {
                        per[b].0[d - 1].push(s.indices[[i, d]]);
                    }
                    per[b].1.push(v.clone());
                }
                return per
                    .into_iter()
                    .map(|p| json!({"indices": p.0, "values": p.1}))
                    .collect();
            }
            rows
        }
        Tensor::Ragged(r) => match nested(&r.to_nested()) {
            Value::Array(rows) => rows,
            other => panic!("ragged rows {other}"),
        },
    }
}

/// A struct cell of a SparseFeature in the same form as `tensor_rows` gives.
fn sparse_cell(value: Value, index_keys: &[String], value_key: &str) -> Value {
    match value {
        Value::Null => json!({"indices": vec![Vec::<i64>::new(); index_keys.len()], "values": []}),
        Value::Object(m) => json!({
            "indices": index_keys.iter().map(|k| m[k].clone()).collect::<Vec<_>>(),
            "values": m[value_key].clone(),
        }),
        other => panic!("sparse cell {other}"),
    }
}

fn is_empty_row(v: &Value) -> bool {
    matches!(v, Value::Array(a) if a.is_empty())
}

/// Compares a column with a tensor's rows; NULL must stand where the tensor row is empty.
fn compare_column(case: &str, column: &str, array: &dyn Array, expected: &[Value], sparse: Option<(&[String], &str)>) {
    assert_eq!(array.len(), expected.len(), "{case}: column {column} rows");
    for (row, want) in expected.iter().enumerate() {
        let got = cell(array, row);
        let got = match sparse {
            Some((keys, value_key)) => sparse_cell(got, keys, value_key),
            None => got,
        };
        if got.is_null() {
            assert!(
                is_empty_row(want),
                "{case}: column {column} row {row} is NULL but the tensor has {want}"
            );
        } else {
            assert_eq!(&got, want, "{case}: column {column} row {row}");
        }
    }
}

/// The step count of each record's feature list `key` (0 when absent).
fn step_counts(records: &[Vec<u8>], key: &str) -> Vec<usize> {
    records
        .iter()
        .map(|r| {
            tfrec::example::SequenceExample::decode(r)
                .ok()
                .and_then(|s| s.feature_list(key).map(|l| l.feature.len()))
                .unwrap_or(0)
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    mapped: usize,
    errors_agree: usize,
    no_form: BTreeMap<String, usize>,
}

impl Tally {
    fn no_form(&mut self, reason: &str) {
        *self.no_form.entry(reason.to_owned()).or_default() += 1;
    }
}

fn reason_of(e: &ColumnarError) -> String {
    match e {
        ColumnarError::Unsupported { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

/// The columns of a case's spec, or `None` (tallied) when the spec has no columnar form.
fn columns_or_tally<C>(columns: Result<C, ColumnarError>, tally: &mut Tally) -> Option<C> {
    match columns {
        Ok(c) => Some(c),
        Err(ColumnarError::Spec(_)) => {
            tally.no_form("the spec is refused by the parse layer (a spec-error case)");
            None
        }
        Err(e) => {
            tally.no_form(&reason_of(&e));
            None
        }
    }
}

/// The parse op's output when it succeeds, checking that the columns then succeed too; when
/// it fails, that the columns fail as well (tallied, `None`).
fn outcome<T, B: std::fmt::Debug>(
    label: &str,
    parsed: Result<T, impl std::fmt::Debug>,
    batch: Result<B, ColumnarError>,
    tally: &mut Tally,
) -> Option<(T, B)> {
    match parsed {
        Err(_) => {
            assert!(batch.is_err(), "{label}: the parse op fails but the columns were built");
            tally.errors_agree += 1;
            None
        }
        Ok(t) => Some((t, batch.unwrap_or_else(|e| panic!("{label}: {e}")))),
    }
}

fn check_example_case(case: &Value, tally: &mut Tally) {
    let label = name(case);
    let records = records_of(case);
    let Ok(specs) = specs_from_json_str(&case["features"].to_string()) else {
        tally.no_form("the spec is refused by the parse layer (a spec-error case)");
        return;
    };
    let Some(columns) = columns_or_tally(ExampleColumns::new(&specs, &StringColumns::Binary), tally) else {
        return;
    };
    let parsed = ExampleParser::new(&specs).expect("parser").parse_batch(&records);
    let Some((tensors, batch)) = outcome(&label, parsed, columns.to_batch(&records), tally) else {
        return;
    };
    assert_eq!(batch.num_rows(), records.len());
    for (key, spec) in &specs {
        let array = batch
            .column_by_name(key)
            .unwrap_or_else(|| panic!("{label}: no column {key}"));
        let sparse = match spec {
            tfrec::parse::FeatureSpec::Sparse(s) => Some((s.index_keys.as_slice(), s.value_key.as_str())),
            _ => None,
        };
        let rows = tensor_rows(&tensors[key], records.len(), None, None, sparse.is_some());
        compare_column(&label, key, array.as_ref(), &rows, sparse);
    }
    tally.mapped += 1;
}

fn check_sequence_case(case: &Value, tally: &mut Tally) {
    let label = name(case);
    let records = records_of(case);
    let spec_json =
        json!({"context_features": case["context_features"], "sequence_features": case["sequence_features"]});
    let Ok(specs) = SequenceSpecs::from_json_str(&spec_json.to_string()) else {
        tally.no_form("the spec is refused by the parse layer (a spec-error case)");
        return;
    };
    let Some(columns) = columns_or_tally(SequenceColumns::new(&specs, &StringColumns::Binary), tally) else {
        return;
    };
    let parsed = SequenceParser::new(&specs).expect("parser").parse_batch(&records);
    let Some((parsed, batch)) = outcome(&label, parsed, columns.to_batch(&records), tally) else {
        return;
    };
    for key in specs.context_features.keys() {
        let array = batch.column_by_name(key).expect("context column");
        compare_column(
            &label,
            key,
            array.as_ref(),
            &tensor_rows(&parsed.context[key], records.len(), None, None, false),
            None,
        );
    }
    for (key, spec) in &specs.sequence_features {
        let array = batch.column_by_name(key).expect("feature-list column");
        let lengths: Option<Vec<i64>> = parsed
            .lengths
            .get(key)
            .and_then(Tensor::as_dense)
            .map(|d| d.as_i64().expect("lengths dtype").to_vec());
        let steps = matches!(spec, tfrec::parse::FeatureSpec::VarLen(_)).then(|| step_counts(&records, key));
        let rows = tensor_rows(
            &parsed.feature_lists[key],
            records.len(),
            lengths.as_deref(),
            steps.as_deref(),
            false,
        );
        compare_column(&label, key, array.as_ref(), &rows, None);
    }
    tally.mapped += 1;
}

#[test]
fn golden_columns_equal_the_parse_tensors() {
    let mut tally = Tally::default();
    let all = cases();
    for case in &all {
        match case["op"].as_str().expect("op") {
            "parse_example" | "parse_single_example" => check_example_case(case, &mut tally),
            "parse_sequence_example" | "parse_single_sequence_example" => check_sequence_case(case, &mut tally),
            other => panic!("unknown op {other}"),
        }
    }
    let no_form: usize = tally.no_form.values().sum();
    println!(
        "{} cases: {} map to columns equal to the tensors, {} fail in both, {} have no columnar form:",
        all.len(),
        tally.mapped,
        tally.errors_agree,
        no_form
    );
    for (reason, n) in &tally.no_form {
        println!("  {n}: {reason}");
    }
    assert_eq!(tally.mapped + tally.errors_agree + no_form, all.len());
    assert!(tally.mapped > 0, "no golden case mapped to columns");
}

fn feature_eq(a: &Feature, b: &Feature) -> bool {
    match (a, b) {
        (Feature::Float(x), Feature::Float(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        _ => a == b,
    }
}

fn same_features(label: &str, original: &Example, back: &Example) {
    let want: BTreeMap<&str, &Feature> = original.features().iter().collect();
    let got: BTreeMap<&str, &Feature> = back.features().iter().collect();
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "{label}: feature names"
    );
    for (k, f) in &want {
        assert!(
            feature_eq(f, got[k]),
            "{label}: feature {k}: {f:?} came back as {:?}",
            got[k]
        );
    }
}

fn parquet_round_trip(batch: &RecordBatch) -> Vec<RecordBatch> {
    let mut file = tempfile::tempfile().expect("temp file");
    let mut writer = parquet::arrow::ArrowWriter::try_new(file.try_clone().expect("file"), batch.schema(), None)
        .expect("parquet writer");
    writer.write(batch).expect("parquet write");
    writer.close().expect("parquet close");
    std::io::Seek::rewind(&mut file).expect("rewind");
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("parquet reader")
        .build()
        .expect("parquet reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("parquet read")
}

fn ipc_round_trip(batch: &RecordBatch) -> Vec<RecordBatch> {
    let mut buffer = Vec::new();
    let mut writer = arrow_ipc::writer::FileWriter::try_new(&mut buffer, &batch.schema()).expect("ipc writer");
    writer.write(batch).expect("ipc write");
    writer.finish().expect("ipc finish");
    drop(writer);
    arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(buffer), None)
        .expect("ipc reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("ipc read")
}

#[test]
fn golden_examples_round_trip_through_parquet_and_ipc() {
    let all = cases();
    let mut tripped = 0;
    let mut no_form: BTreeMap<String, usize> = BTreeMap::new();
    let mut inputs = 0;
    for case in &all {
        let op = case["op"].as_str().expect("op");
        let label = name(case);
        let records = records_of(case);
        inputs += 1;
        let mut skip = |reason: &str| *no_form.entry(reason.to_owned()).or_default() += 1;
        if op.contains("sequence") {
            skip("SequenceExamples: columns come back as Examples only");
            continue;
        }
        if records.is_empty() {
            skip("no records");
            continue;
        }
        let Ok(originals) = records
            .iter()
            .map(|r| Example::decode(r))
            .collect::<Result<Vec<_>, _>>()
        else {
            skip("a record that is not a valid Example");
            continue;
        };
        if originals
            .iter()
            .any(|e| e.features().iter().any(|(_, f)| f.kind().is_none()))
        {
            skip("a Feature with no kind set (it has no typed column)");
            continue;
        }
        let inferred = match infer_specs(&records) {
            Ok(i) => i,
            Err(e) => {
                skip(&format!("no spec to infer: {}", reason_of(&e)));
                continue;
            }
        };
        if !inferred.skipped.is_empty() {
            // Left out of the spec (a kind that varies), so not in the columns either.
            skip("a feature the inferred spec leaves out");
            continue;
        }
        let SpecFile::Example(specs) = &inferred.spec else {
            skip("records that read as SequenceExamples");
            continue;
        };
        if specs.is_empty() {
            // TF refuses a spec with no features; so does the column builder.
            skip("no record has a feature");
            continue;
        }
        for utf8 in [false, true] {
            let columns =
                ExampleColumns::new(specs, &inferred.string_columns(utf8)).unwrap_or_else(|e| panic!("{label}: {e}"));
            let batch = columns.to_batch(&records).unwrap_or_else(|e| panic!("{label}: {e}"));
            for (how, batches) in [("parquet", parquet_round_trip(&batch)), ("ipc", ipc_round_trip(&batch))] {
                let back: Vec<Example> = batches
                    .iter()
                    .flat_map(|b| batch_to_examples(b).unwrap_or_else(|e| panic!("{label} {how}: {e}")))
                    .collect();
                assert_eq!(back.len(), originals.len(), "{label} {how}: rows");
                for (o, b) in originals.iter().zip(&back) {
                    same_features(&format!("{label} via {how} (utf8 {utf8})"), o, b);
                }
            }
        }
        tripped += 1;
    }
    let skipped: usize = no_form.values().sum();
    println!(
        "{inputs} golden parse inputs: {tripped} round trip through Parquet and IPC, {skipped} have no columnar form:"
    );
    for (reason, n) in &no_form {
        println!("  {n}: {reason}");
    }
    assert_eq!(tripped + skipped, inputs);
    assert!(tripped > 0);
}

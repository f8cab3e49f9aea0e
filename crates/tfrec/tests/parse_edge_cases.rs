//! Edge cases of the parse layer found by differential campaigns against TensorFlow 2.21
//! (issue 9): inputs and specs that must give a clean error (never a panic, an abort or a huge
//! allocation), and the cases where TensorFlow's answer is well defined and tfrec must give it.
//! Every record and spec is built here.
//!
//! Where a case is about cost, it counts work instead of reading the clock (a busy machine is not
//! a defect): the bytes this thread allocates, through a counting allocator. The time of many
//! ragged partitions is measured in the parse benchmark (`cargo bench -p tfrec-cli --bench parse`).

use serde_json::{json, Value};
use tfrec::example::{Example, Feature, SequenceExample};
use tfrec::parse::{specs_from_json_str, ExampleParser, SequenceParser, SequenceSpecs, Tensor, TensorMap};

#[path = "common/heap.rs"]
mod heap;
use heap::peak_heap;

fn parser(spec: Value) -> ExampleParser {
    ExampleParser::new(&specs_from_json_str(&spec.to_string()).expect("spec loads")).expect("spec compiles")
}

fn seq_parser(spec: Value) -> SequenceParser {
    SequenceParser::new(&SequenceSpecs::from_json_str(&spec.to_string()).expect("spec loads")).expect("spec compiles")
}

fn example(build: impl FnOnce(tfrec::example::ExampleBuilder) -> tfrec::example::ExampleBuilder) -> Vec<u8> {
    build(Example::builder()).build().expect("example").encode()
}

fn splits(map: &TensorMap, key: &str) -> Vec<Vec<i64>> {
    map[key].as_ragged().expect("ragged").nested_row_splits().to_vec()
}

fn spec_error(spec: Value) -> String {
    match specs_from_json_str(&spec.to_string()) {
        Err(e) => e.to_string(),
        Ok(specs) => ExampleParser::new(&specs).expect_err("refused").to_string(),
    }
}

const MIB: usize = 1 << 20;

// ---- never a panic --------------------------------------------------------------------------

#[test]
fn misaligned_feature_list_partitions_are_an_error() {
    // Feature lists x: [[0,0,2],[0,2]] and no value feature: the values have 0 rows, the
    // partition 2 (TF: "values and partitions are not aligned" / "not compatible").
    let record = SequenceExample::builder()
        .int64_list("x", vec![vec![0i64, 0, 2], vec![0, 2]])
        .build()
        .expect("sequence example")
        .encode();
    for validate in [false, true] {
        let parser = seq_parser(json!({"sequence_features": {"r": {
            "type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": validate,
            "partitions": [{"kind": "row_splits", "key": "x"}]}}}));
        let batch = parser
            .parse_batch(&[record.clone(), record.clone()])
            .expect_err("batch refused");
        assert!(batch.to_string().contains("not aligned"), "{batch}");
        let single = parser.parse_single(&record).expect_err("single refused");
        assert!(single.to_string().contains("not aligned"), "{single}");
    }
}

#[test]
fn huge_value_row_ids_are_an_error_not_an_allocation() {
    for id in [1_000_000_000_000i64, i64::MAX, i64::MAX - 1, i64::from(i32::MAX)] {
        for dtype in ["int32", "int64"] {
            let parser = parser(
                json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v",
                "row_splits_dtype": dtype, "partitions": [{"kind": "value_row_ids", "key": "i"}]}}),
            );
            let record = example(|b| b.int64("v", vec![7i64]).int64("i", vec![id]));
            // Either a clean error or (where the id wraps to a small int32) a small tensor.
            if let Ok(t) = parser.parse_batch(std::slice::from_ref(&record)) {
                assert!(splits(&t, "r").iter().all(|s| s.len() < 1 << 20));
            }
            let _ = parser.parse_single(&record);
        }
    }
    let parser = parser(
        json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "row_splits_dtype": "int64",
        "partitions": [{"kind": "value_row_ids", "key": "i"}]}}),
    );
    let e = parser
        .parse_batch(&[example(|b| {
            b.int64("v", vec![7i64]).int64("i", vec![1_000_000_000_000i64])
        })])
        .expect_err("refused");
    assert!(e.to_string().contains("Feature r"), "{e}");
}

#[test]
fn partition_arithmetic_wraps_instead_of_overflowing() {
    for kind in ["row_splits", "row_lengths", "row_starts", "row_limits", "value_row_ids"] {
        for validate in [false, true] {
            for dtype in ["int32", "int64"] {
                let parser = parser(
                    json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v",
                    "validate": validate, "row_splits_dtype": dtype,
                    "partitions": [{"kind": kind, "key": "p"}, {"kind": "row_lengths", "key": "q"}]}}),
                );
                let records = [
                    example(|b| {
                        b.int64("v", vec![1i64, 2])
                            .int64("p", vec![i64::MAX, i64::MIN])
                            .int64("q", vec![i64::MAX])
                    }),
                    example(|b| {
                        b.int64("v", vec![3i64])
                            .int64("p", vec![-1i64, i64::MAX])
                            .int64("q", vec![i64::MIN, 1])
                    }),
                ];
                let _ = parser.parse_batch(&records);
                for r in &records {
                    if let Ok(t) = parser.parse_single(r) {
                        if let Tensor::Ragged(rt) = &t["r"] {
                            let _ = rt.to_nested();
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn shapes_are_checked_before_anything_is_allocated() {
    let e = spec_error(json!({"a": {"type": "FixedLenFeature", "shape": [18446744073709551615u64], "dtype": "int64"}}));
    assert!(e.contains("shape"), "{e}");
    let e = spec_error(
        json!({"a": {"type": "FixedLenFeature", "shape": [4294967296u64, 4294967296u64], "dtype": "int64"}}),
    );
    assert!(e.contains("2**63 - 1"), "{e}");
    let e = spec_error(
        json!({"a": {"type": "FixedLenSequenceFeature", "shape": [-3], "dtype": "int64", "allow_missing": true}}),
    );
    assert!(e.contains("Dimension -3 must be >= 0"), "{e}");
    let e = spec_error(
        json!({"s": {"type": "SparseFeature", "index_key": "i", "value_key": "v", "dtype": "int64", "size": -5}}),
    );
    assert!(e.contains("Dimension -5 must be >= 0"), "{e}");
    // 10^11 elements: a valid spec; one record with one value is a count error, at once.
    let parser = parser(json!({"a": {"type": "FixedLenFeature", "shape": [100_000_000_000u64], "dtype": "int64"}}));
    let record = example(|b| b.int64("a", vec![1i64]));
    let (e, heap) = peak_heap(|| parser.parse_batch(&[record]).expect_err("count"));
    assert!(e.to_string().contains("Values size: 1"), "{e}");
    assert!(heap < MIB, "{heap} bytes of heap for a one-value record");
}

/// Parses 100 records under a RaggedFeature of `n` row_lengths partitions; the peak heap.
fn parse_partitions(n: usize) -> usize {
    let partitions: Vec<Value> = (0..n).map(|_| json!({"kind": "row_lengths", "key": "l"})).collect();
    let parser =
        parser(json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "partitions": partitions}}));
    let records: Vec<Vec<u8>> = (0..100)
        .map(|i| example(|b| b.int64("v", vec![i as i64]).int64("l", vec![1i64])))
        .collect();
    let (t, heap) = peak_heap(|| parser.parse_batch(&records).expect("parses"));
    let rt = t["r"].as_ragged().expect("ragged");
    assert_eq!(rt.nested_row_splits().len(), n + 1);
    assert!(rt.check().is_ok());
    heap
}

#[test]
fn many_partitions_take_linear_heap() {
    // 4x the partitions: 4x the heap when linear (the old code was quadratic: 207 s for 100 k
    // partitions and 100 records). Their time is in the parse benchmark's partitions row.
    let small = parse_partitions(25_000);
    let large = parse_partitions(100_000);
    assert!(
        large < 5 * small,
        "peak heap: 25 k partitions {small} bytes, 100 k {large} bytes"
    );
}

// ---- TF-exact -------------------------------------------------------------------------------

#[test]
fn value_row_ids_need_one_id_per_value_even_without_validate() {
    let parser = parser(
        json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v",
        "partitions": [{"kind": "value_row_ids", "key": "i"}]}}),
    );
    let record = example(|b| b.int64("i", vec![0i64, 1]));
    let e = parser.parse_batch(std::slice::from_ref(&record)).expect_err("refused");
    assert!(e.to_string().contains("Shapes (0,) and (2,) are incompatible"), "{e}");
    assert!(parser.parse_single(&record).is_err());
}

#[test]
fn row_starts_without_a_partition_feature() {
    // TF: from_row_starts(values, []) gives splits [nvals]: zero rows, and it validates.
    let parser = parser(
        json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": true,
        "partitions": [{"kind": "row_starts", "key": "s"}]}}),
    );
    let record = example(|b| b.int64("v", vec![5i64]));
    assert_eq!(
        splits(&parser.parse_single(&record).expect("single"), "r"),
        vec![vec![1]]
    );
    assert_eq!(
        splits(&parser.parse_batch(&[record]).expect("batch"), "r"),
        vec![vec![0, 0], vec![1]]
    );
}

#[test]
fn validate_false_passes_invalid_partitions_through() {
    let spec = |validate: bool, dtype: &str| {
        parser(
            json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": validate,
            "row_splits_dtype": dtype, "partitions": [{"kind": "row_splits", "key": "s"}]}}),
        )
    };
    // A missing row_splits feature: the single op's splits would be empty, which no ragged
    // tensor can hold; TensorFlow refuses them even without validate ("Dimension -1 must be
    // >= 0"), and so do we (issue 24).
    let record = example(|b| b.int64("v", vec![5i64]));
    let err = spec(false, "int32").parse_single(&record).expect_err("empty splits");
    assert!(err.to_string().contains("Dimension -1"), "{err}");
    assert!(err.to_string().contains('r'), "{err}");
    // With validate, empty splits are refused.
    assert!(spec(true, "int32").parse_single(&record).is_err());
    // Invalid splits are returned unchanged.
    let record = example(|b| b.int64("v", vec![5i64]).int64("s", vec![1i64, 2]));
    assert_eq!(
        splits(&spec(false, "int64").parse_single(&record).expect("single"), "r"),
        vec![vec![1, 2]]
    );
    assert!(spec(true, "int64").parse_single(&record).is_err());
    // int32 splits wrap int64 partition values to 32 bits.
    let record = example(|b| b.int64("v", vec![5i64]).int64("s", vec![1i64 << 32, (1i64 << 32) + 1]));
    assert_eq!(
        splits(&spec(false, "int32").parse_single(&record).expect("single"), "r"),
        vec![vec![0, 1]]
    );
    assert!(spec(true, "int32").parse_single(&record).is_ok());
    assert_eq!(
        splits(&spec(false, "int64").parse_single(&record).expect("single"), "r"),
        vec![vec![1 << 32, (1 << 32) + 1]]
    );
}

#[test]
fn uniform_row_length_zero() {
    let spec = json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v",
        "partitions": [{"kind": "uniform_row_length", "length": 0}, {"kind": "row_lengths", "key": "l"}]}});
    let parser = parser(spec);
    let record = example(|b| b.int64("v", vec![1i64, 2]).int64("l", vec![2i64]));
    // Batch ops divide the row splits by the length: an error.
    assert!(parser.parse_batch(std::slice::from_ref(&record)).is_err());
    // The single op makes a partition of no rows.
    let single = parser.parse_single(&record).expect("single");
    assert_eq!(splits(&single, "r"), vec![vec![0], vec![0, 2]]);
}

#[test]
fn spec_checks_tf_makes() {
    let e = spec_error(
        json!({"s": {"type": "SparseFeature", "index_key": [], "value_key": "v", "dtype": "int64", "size": []}}),
    );
    assert_eq!(e, "Missing index_key for SparseFeature s.");
    let e = spec_error(json!({
        "a": {"type": "VarLenFeature", "dtype": "int64"},
        "r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "partitions": [{"kind": "row_lengths", "key": "a"}]},
    }));
    assert!(e.contains("Ragged and sparse keys must not intersect"), "{e}");
    let e = spec_error(json!({
        "r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "row_splits_dtype": "int64"},
        "q": {"type": "RaggedFeature", "dtype": "int64", "value_key": "w", "partitions": [{"kind": "row_lengths", "key": "v"}]},
    }));
    assert!(e.contains("Conflicting partition type"), "{e}");
    // Sequence specs get the same checks.
    let e = SequenceParser::new(
        &SequenceSpecs::from_json_str(
            &json!({"sequence_features": {
                "a": {"type": "VarLenFeature", "dtype": "int64"},
                "r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "a"},
            }})
            .to_string(),
        )
        .expect("loads"),
    )
    .expect_err("refused");
    assert!(
        e.to_string().contains("Ragged and sparse keys must not intersect"),
        "{e}"
    );
}

#[test]
fn a_zero_element_default_is_no_default() {
    let parser = parser(json!({"a": {"type": "FixedLenFeature", "shape": [0], "dtype": "int64", "default_value": []}}));
    let e = parser
        .parse_batch(&[example(|b| b.int64("b", vec![1i64]))])
        .expect_err("required");
    assert!(e.to_string().contains("is required"), "{e}");
    let t = parser
        .parse_batch(&[example(|b| b.int64("a", Vec::<i64>::new()))])
        .expect("present, empty");
    assert_eq!(t["a"].as_dense().expect("dense").shape(), &[1, 0]);
}

#[test]
fn context_zero_element_feature_may_be_kind_less() {
    let parser =
        seq_parser(json!({"context_features": {"c": {"type": "FixedLenFeature", "shape": [0], "dtype": "int64"}}}));
    let mut record = SequenceExample::default();
    record.context_mut().insert("c", Feature::None);
    let t = parser.parse_batch(&[record.encode()]).expect("parses");
    assert_eq!(t.context["c"].as_dense().expect("dense").shape(), &[1, 0]);
}

#[test]
fn the_last_bad_feature_in_wire_order_is_reported() {
    let parser = parser(json!({
        "a": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
        "b": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
    }));
    let record = example(|b| b.float("a", vec![1.0f32]).float("b", vec![1.0f32]));
    let e = parser.parse_batch(&[record]).expect_err("refused");
    assert_eq!(e.key.as_deref(), Some("b"), "{e}");
    let record = example(|b| b.float("b", vec![1.0f32]).float("a", vec![1.0f32]));
    let e = parser.parse_batch(&[record]).expect_err("refused");
    assert_eq!(e.key.as_deref(), Some("a"), "{e}");
}

#[test]
fn too_many_strings_cannot_be_parsed() {
    let parser = parser(json!({"s": {"type": "FixedLenFeature", "shape": [1], "dtype": "string"}}));
    let e = parser
        .parse_batch(&[example(|b| b.bytes("s", vec!["x", "y"]))])
        .expect_err("refused");
    assert!(e.to_string().contains("Can't parse serialized Example."), "{e}");
    assert!(e.to_string().contains("Key: s, Index: 0"), "{e}");
    // Too few is still a count error.
    let parser2 = parser_of_two();
    let e = parser2
        .parse_batch(&[example(|b| b.bytes("s", vec!["x"]))])
        .expect_err("refused");
    assert!(e.to_string().contains("Values size: 1"), "{e}");
}

fn parser_of_two() -> ExampleParser {
    parser(json!({"s": {"type": "FixedLenFeature", "shape": [2], "dtype": "string"}}))
}

#[test]
fn sequence_errors_do_not_depend_on_the_thread_count() {
    // A context VarLen of the wrong type in example 3 of 8.
    let parser = seq_parser(json!({
        "context_features": {"c": {"type": "VarLenFeature", "dtype": "int64"}},
        "sequence_features": {"x": {"type": "VarLenFeature", "dtype": "int64"}},
    }));
    let records: Vec<Vec<u8>> = (0..8)
        .map(|i| {
            let b = SequenceExample::builder().int64_list("x", vec![vec![i as i64]]);
            let b = if i == 3 {
                b.context_float("c", vec![1.0f32])
            } else {
                b.context_int64("c", vec![1i64])
            };
            b.build().expect("ok").encode()
        })
        .collect();
    let one = parser.parse_batch(&records).expect_err("refused").to_string();
    for minibatch in 1..8 {
        let many = parser
            .parse_batch_parallel(&records, minibatch)
            .expect_err("refused")
            .to_string();
        assert_eq!(one, many, "minibatch {minibatch}");
    }
}

#[test]
fn duplicate_sparse_indices_keep_tensorflows_order() {
    // `sparse_reorder` sorts with libstdc++'s `std::sort`: up to 16 entries an insertion sort
    // (equal indices keep their order), beyond that introsort, which moves them.
    let parser = parser(
        json!({"s": {"type": "SparseFeature", "index_key": "i", "value_key": "v", "dtype": "int64", "size": 4}}),
    );
    let values = |n: i64| -> Vec<i64> {
        let t = parser
            .parse_single(&example(|b| {
                b.int64("i", vec![0i64; n as usize])
                    .int64("v", (0..n).collect::<Vec<_>>())
            }))
            .expect("parses");
        match t["s"].as_sparse().expect("sparse").values.to_values() {
            tfrec::parse::Values::Int64(v) => v,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(values(16), (0..16).collect::<Vec<_>>());
    // 20 equal keys: the median of three (entry 10) goes first, the partition swaps the
    // pairs (1,19) … (9,11), and the final insertion sort leaves equal keys alone.
    let mut expected = vec![10];
    expected.extend((11..20).rev());
    expected.push(0);
    expected.extend((1..10).rev());
    assert_eq!(values(20), expected);
}

#[test]
fn stacked_uniform_partitions_do_not_overflow() {
    // No values, 40 uniform partitions of 4: every reshape divides, the shape [0, 4, 4, …]
    // would have 4^40 elements per row.
    let partitions: Vec<Value> = (0..40)
        .map(|_| json!({"kind": "uniform_row_length", "length": 4}))
        .collect();
    let parser =
        parser(json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "partitions": partitions}}));
    let record = example(|b| b.int64("v", Vec::<i64>::new()));
    assert!(parser.parse_batch(std::slice::from_ref(&record)).is_err());
    assert!(parser.parse_single(&record).is_err());
}

#[test]
fn ragged_errors_carry_the_partition_and_the_sizes() {
    use tfrec::parse::{ParseErrorKind, RaggedPartitionError};
    let parser = parser(
        json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v",
        "validate": true, "partitions": [{"kind": "row_lengths", "key": "l"}]}}),
    );
    let record = example(|b| b.int64("v", vec![1i64, 2, 3]).int64("l", vec![5i64, -2]));
    let err = parser
        .parse_batch(&[record])
        .expect_err("a negative row length is refused");
    assert_eq!(err.key.as_deref(), Some("r"));
    assert_eq!(
        err.kind,
        ParseErrorKind::Ragged(Box::new(RaggedPartitionError::NegativeLength { length: -2 }))
    );
    assert!(
        err.to_string().ends_with("row length -2 is negative"),
        "the text names the length: {err}"
    );

    // Lengths that cover other than the values: both counts are on the error.
    let record = example(|b| b.int64("v", vec![1i64, 2, 3]).int64("l", vec![1i64, 1]));
    let err = parser.parse_batch(&[record]).expect_err("uncovered values are refused");
    assert_eq!(
        err.kind,
        ParseErrorKind::Ragged(Box::new(RaggedPartitionError::Coverage { covered: 2, values: 3 }))
    );
}

#[test]
fn many_empty_rows_under_a_wide_shape_are_an_error_not_an_allocation() {
    // 4,000 empty rows cost 8 KB of input; padded to a shape of a million floats they would be
    // 16 GB. Rows are checked before the padded tensor is sized, so this is a quick error.
    let parser = seq_parser(json!({"sequence_features": {
        "x": {"type": "FixedLenSequenceFeature", "shape": [1_000_000], "dtype": "float32", "allow_missing": true}}}));
    let rows: Vec<Vec<f32>> = vec![Vec::new(); 4000];
    let record = SequenceExample::builder()
        .float_list("x", rows)
        .build()
        .expect("sequence example")
        .encode();
    let (e, heap) = peak_heap(|| parser.parse_batch(&[record]).expect_err("rows of no values"));
    assert!(e.to_string().contains("x"), "{e}");
    assert!(heap < 16 * MIB, "{heap} bytes of heap for 4,000 empty rows");
}

#[test]
fn a_record_holding_bytes_like_a_wrapped_row_header_parses_to_its_values() {
    // An empty list's row is `0a 02 1a 00`; a row of 254 bytes after it starts `0a fe 01`.
    // Six bytes from the first row, `0a 02 1a 00 0a fe`, are not a header of one-byte lengths
    // (in a byte, 254 + 2 wraps to the empty Feature's 0). The fast path's unit test reads
    // such headers against the step-by-step reading; this is the whole record's answer.
    let rows: Vec<Vec<i64>> = vec![Vec::new(), vec![1; 248], vec![7]];
    let record = SequenceExample::builder()
        .int64_list("a", rows.clone())
        .build()
        .expect("sequence example")
        .encode();
    let header = [0x0a, 0x02, 0x1a, 0x00, 0x0a, 0xfe];
    assert!(record.windows(6).any(|w| w == header), "the record holds the six bytes");
    for spec in [
        json!({"sequence_features": {"a": {"type": "VarLenFeature", "dtype": "int64"}}}),
        json!({"sequence_features": {"a": {"type": "RaggedFeature", "dtype": "int64"}}}),
    ] {
        let parsed = seq_parser(spec)
            .parse_batch(std::slice::from_ref(&record))
            .expect("parses");
        let values = match &parsed.feature_lists["a"] {
            Tensor::Sparse(t) => t.values.to_values(),
            Tensor::Ragged(t) => t.flat_values().to_values(),
            other => panic!("{other:?}"),
        };
        assert_eq!(values, tfrec::parse::Values::Int64(rows.concat()));
    }
}

#[test]
fn a_malformed_context_is_an_error_with_no_context_feature_asked_for() {
    // Found by the `parse_paths` fuzz target: the context map's second entry starts with a
    // zero byte (field number 0). TensorFlow 2.21 refuses the record ("Invalid protocol
    // message input") though the spec asks for feature lists only; the fast walk of the
    // feature lists used to skip the context without looking into it and parse the record.
    let record: [u8; 41] = [
        0x0a, 0x27, 0x0a, 0x0a, 0x0a, 0x01, 0x69, 0x12, 0x05, 0x1a, 0x03, 0x0a, 0x2b, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x08, 0x12, 0x06, 0x0a, 0x04, 0x00, 0x00, 0xc0, 0x3f, 0x0a, 0x0a, 0x0a, 0x01, 0x73, 0x12, 0x05,
        0x0a, 0x03, 0x0a, 0x01, 0x78,
    ];
    let spec = json!({"sequence_features": {
        "i": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
        "f": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32", "allow_missing": true},
        "s": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "string", "allow_missing": true}}});
    let fast = seq_parser(spec.clone());
    let careful = seq_parser(spec).without_fast_path();
    let err = fast.parse_batch(&[record]).expect_err("a malformed context");
    assert_eq!(
        err.to_string(),
        careful.parse_batch(&[record]).expect_err("careful").to_string()
    );
    assert!(fast.parse_single(&record).is_err());
}

/// `tag <len> payload`, for records built by hand (every length here is below 128).
fn field(tag: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 128);
    [&[tag, payload.len() as u8][..], payload].concat()
}

/// An Example from its features' map entries, each `(key, serialized Feature)`, in order.
fn example_of(features: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let entries: Vec<u8> = features
        .iter()
        .flat_map(|(key, feature)| field(0x0a, &[field(0x0a, key.as_bytes()), field(0x12, feature)].concat()))
        .collect();
    field(0x0a, &entries)
}

/// An int64 Feature in the canonical encoding (one packed block) of values below 128, each a
/// one-byte varint.
fn packed_ints(values: &[u8]) -> Vec<u8> {
    field(0x1a, &field(0x0a, values))
}

/// A float Feature in the canonical encoding.
fn floats(values: &[f32]) -> Vec<u8> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    field(0x12, &field(0x0a, &bytes))
}

#[test]
fn a_record_the_fast_path_gives_up_on_midway_leaves_nothing_behind() {
    // The fast path takes the canonical encoding only. The middle record's `c` is an int64
    // list with each value its own field (valid protobuf, which the careful path reads), after
    // `a` and `b` were taken: what the fast path added for them must be undone, or the batch
    // holds them twice.
    let unpacked = field(0x1a, &[0x08, 6, 0x08, 7, 0x08, 8]);
    let records = [
        example_of(&[
            ("a", packed_ints(&[1])),
            ("b", floats(&[0.5])),
            ("c", packed_ints(&[3, 4])),
            ("d", packed_ints(&[2])),
        ]),
        example_of(&[("a", packed_ints(&[5])), ("b", floats(&[1.5, 2.5])), ("c", unpacked)]),
        example_of(&[
            ("a", packed_ints(&[9])),
            ("b", floats(&[])),
            ("c", packed_ints(&[10])),
            ("d", packed_ints(&[11])),
        ]),
    ];
    let spec = json!({
        "a": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
        "b": {"type": "VarLenFeature", "dtype": "float32"},
        "c": {"type": "VarLenFeature", "dtype": "int64"},
        "d": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": 7},
    });
    let fast = parser(spec.clone());
    let careful = parser(spec).without_fast_path();
    let batch = fast.parse_batch(&records).expect("parses");
    assert_eq!(
        format!("{batch:?}"),
        format!("{:?}", careful.parse_batch(&records).expect("parses"))
    );
    assert_eq!(batch["a"].as_dense().expect("dense").as_i64(), Some(&[1, 5, 9][..]));
    assert_eq!(batch["d"].as_dense().expect("dense").as_i64(), Some(&[2, 7, 11][..]));
    let b = batch["b"].as_sparse().expect("sparse");
    assert_eq!((b.values.shape(), b.dense_shape.as_slice()), (&[3][..], &[3, 2][..]));
    let c = batch["c"].as_sparse().expect("sparse");
    assert_eq!(c.values.as_i64(), Some(&[3, 4, 6, 7, 8, 10][..]));
    assert_eq!(c.dense_shape, vec![3, 3]);
}

//! Property tests of the parse ops: the batch parse is the single parses stacked; the parallel
//! path equals the sequential one (errors included); a ragged feature padded to dense equals
//! the FixedLenSequenceFeature parse.

use proptest::prelude::*;
use serde_json::json;
use tfrec::example::{Example, Feature, SequenceExample};
use tfrec::parse::{
    concat_batch, specs_from_json, DenseTensor, ExampleParser, FeatureSpecs, SequenceParser, SequenceSpecs, Tensor,
    TensorMap, Values,
};

/// A feature of kind `k` (0 int64, 1 float, 2 bytes) with `n` values, sometimes of the wrong
/// kind or with no kind set, so that errors are exercised too.
fn feature(kind: u8) -> impl Strategy<Value = Option<Feature>> {
    let right = prop::collection::vec(-50i64..50, 0..4).prop_map(move |v| match kind {
        0 => Feature::Int64(v),
        1 => Feature::Float(v.iter().map(|&x| x as f32 * 0.5).collect()),
        _ => Feature::Bytes(v.iter().map(|x| x.to_string().into_bytes()).collect()),
    });
    prop_oneof![
        8 => right.prop_map(Some),
        2 => Just(None),
        1 => Just(Some(Feature::None)),
        1 => Just(Some(Feature::Float(vec![1.0]))).prop_map(move |f| if kind == 1 { Some(Feature::Int64(vec![1])) } else { f }),
    ]
}

fn example() -> impl Strategy<Value = Vec<u8>> {
    (feature(0), feature(1), feature(2)).prop_map(|(a, b, c)| {
        let mut ex = Example::default();
        let f = ex.features_mut();
        for (k, v) in [("a", a), ("b", b), ("c", c)] {
            if let Some(v) = v {
                f.insert(k, v);
            }
        }
        ex.encode()
    })
}

/// A spec for one key of dtype `dtype`.
fn spec_for(dtype: &'static str) -> impl Strategy<Value = serde_json::Value> {
    let default = match dtype {
        "int64" => json!(7),
        "float32" => json!(0.25),
        _ => json!("d"),
    };
    prop_oneof![
        Just(json!({"type": "FixedLenFeature", "shape": [], "dtype": dtype})),
        Just(json!({"type": "FixedLenFeature", "shape": [], "dtype": dtype, "default_value": default})),
        Just(json!({"type": "FixedLenFeature", "shape": [2], "dtype": dtype, "default_value": [default, default]})),
        Just(json!({"type": "VarLenFeature", "dtype": dtype})),
        Just(json!({"type": "FixedLenSequenceFeature", "shape": [], "dtype": dtype, "allow_missing": true})),
        Just(json!({"type": "RaggedFeature", "dtype": dtype})),
    ]
}

fn specs() -> impl Strategy<Value = FeatureSpecs> {
    (spec_for("int64"), spec_for("float32"), spec_for("string"))
        .prop_map(|(a, b, c)| specs_from_json(&json!({"a": a, "b": b, "c": c})).expect("valid spec"))
}

fn stacked(parts: Vec<TensorMap>) -> Result<TensorMap, String> {
    let Some(first) = parts.first() else {
        return Ok(TensorMap::new());
    };
    first
        .keys()
        .map(|k| {
            let pieces: Vec<Tensor> = parts.iter().map(|p| p[k].clone()).collect();
            concat_batch(pieces).map(|t| (k.clone(), t)).map_err(|e| e.to_string())
        })
        .collect()
}

fn json_of(m: &TensorMap) -> serde_json::Value {
    serde_json::Value::Object(m.iter().map(|(k, t)| (k.clone(), t.to_json())).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn batch_is_the_stacked_single_parses(specs in specs(), records in prop::collection::vec(example(), 1..6)) {
        let parser = ExampleParser::new(&specs).expect("compiles");
        let batch = parser.parse_batch(&records);
        let singles: Vec<_> = records.iter().map(|r| parser.parse_batch(std::slice::from_ref(r))).collect();
        match batch {
            Ok(batch) => {
                let singles: Vec<TensorMap> = singles.into_iter().map(|s| s.expect("a batch parses, so each example does")).collect();
                // FixedLenSequence pads with zeros (no default in these specs), as concat does.
                prop_assert_eq!(json_of(&batch), json_of(&stacked(singles).expect("stackable")));
            }
            Err(e) => {
                let first_failing = singles.iter().position(Result::is_err);
                prop_assert_eq!(e.example, first_failing, "{}", e);
            }
        }
        // The single-example op is the batch of one without its batch dimension.
        for r in &records {
            let single = parser.parse_single(r);
            let one = parser.parse_batch(std::slice::from_ref(r));
            prop_assert_eq!(single.is_ok(), one.is_ok());
        }
    }

    #[test]
    fn parallel_equals_sequential(specs in specs(), records in prop::collection::vec(example(), 0..40), minibatch in 1usize..9) {
        let parser = ExampleParser::new(&specs).expect("compiles");
        let sequential = parser.parse_batch(&records).map(|m| json_of(&m)).map_err(|e| e.to_string());
        let parallel = parser.parse_batch_parallel(&records, minibatch).map(|m| json_of(&m)).map_err(|e| e.to_string());
        prop_assert_eq!(&sequential, &parallel);
        let from_iter = parser.parse_iter(records.iter()).map(|m| json_of(&m)).map_err(|e| e.to_string());
        prop_assert_eq!(sequential, from_iter);
    }

    #[test]
    fn ragged_padded_equals_fixed_len_sequence(lists in prop::collection::vec(prop::collection::vec(-9i64..9, 0..5), 1..6)) {
        let records: Vec<Vec<u8>> = lists.iter().map(|v| Example::builder().int64("x", v.clone()).build().expect("ok").encode()).collect();
        let ragged = ExampleParser::new(&specs_from_json(&json!({"x": {"type": "RaggedFeature", "dtype": "int64"}})).expect("spec")).expect("compiles");
        let dense = ExampleParser::new(&specs_from_json(&json!({"x": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true}})).expect("spec")).expect("compiles");
        let r = ragged.parse_batch(&records).expect("parses");
        let d = dense.parse_batch(&records).expect("parses");
        let padded: DenseTensor = r["x"].as_ragged().expect("ragged").to_dense(&Values::Int64(vec![0])).expect("pads");
        prop_assert_eq!(Some(&padded), d["x"].as_dense());
    }

    #[test]
    fn sequence_parallel_equals_sequential(
        seqs in prop::collection::vec((prop::collection::vec(prop::collection::vec(-5i64..5, 1..2), 0..6), any::<bool>()), 0..30),
        minibatch in 1usize..9,
    ) {
        let records: Vec<Vec<u8>> = seqs
            .iter()
            .map(|(rows, with_tags)| {
                let mut b = SequenceExample::builder().int64_list("tok", rows.clone());
                if *with_tags {
                    b = b.bytes_list("tags", rows.iter().map(|r| vec![format!("{}", r[0])]).collect::<Vec<_>>());
                }
                b.build().expect("ok").encode()
            })
            .collect();
        let specs = SequenceSpecs::from_json(&json!({
            "sequence_features": {
                "tok": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
                "tags": {"type": "VarLenFeature", "dtype": "string"},
            }
        })).expect("spec");
        let parser = SequenceParser::new(&specs).expect("compiles");
        let sequential = parser.parse_batch(&records).map(|p| (json_of(&p.feature_lists), json_of(&p.lengths))).map_err(|e| e.to_string());
        let parallel = parser.parse_batch_parallel(&records, minibatch).map(|p| (json_of(&p.feature_lists), json_of(&p.lengths))).map_err(|e| e.to_string());
        prop_assert_eq!(sequential, parallel);
    }
}

//! Arbitrary specs with arbitrary records: the spec JSON loading of the library and the CLI
//! (`SpecFile::from_json_str`), then both parse ops on a batch. Loading returns a spec or an error,
//! parsing returns tensors or an error, nothing panics, and the parallel path agrees with the
//! sequential one.
//!
//! Input: `spec 0xff record 0xfe record ...`. A spec starting with `{` is JSON text; otherwise
//! its bytes choose a RaggedFeature's partitions (kind, key, length, dtype, validate), so deep
//! and invalid partition stacks are reached without the fuzzer having to learn JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tfrec::parse::{ExampleParser, SequenceParser, SpecFile, TensorMap};

const KINDS: [&str; 5] = ["row_splits", "row_lengths", "row_starts", "row_limits", "value_row_ids"];

/// A RaggedFeature spec (or a sequence spec holding it) from bytes.
fn ragged_spec(bytes: &[u8]) -> Value {
    let flags = bytes.first().copied().unwrap_or(0);
    let partitions: Vec<Value> = bytes
        .iter()
        .skip(1)
        .map(|&b| match b % 6 {
            5 => json!({"kind": "uniform_row_length", "length": i64::from(b >> 5)}),
            k => json!({"kind": KINDS[k as usize], "key": format!("p{}", (b >> 3) % 4)}),
        })
        .collect();
    let feature = json!({
        "type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": flags & 1 != 0,
        "row_splits_dtype": if flags & 2 != 0 { "int64" } else { "int32" }, "partitions": partitions,
    });
    if flags & 4 != 0 {
        json!({"sequence_features": {"r": feature}})
    } else {
        json!({"r": feature})
    }
}

fn json_of(m: &TensorMap) -> Value {
    let tensor = |t: &tfrec::parse::Tensor| serde_json::from_str(&t.to_json_string()).expect("tensor JSON");
    Value::Object(m.iter().map(|(k, t)| (k.clone(), tensor(t))).collect())
}

fuzz_target!(|data: &[u8]| {
    let (spec_bytes, rest) = match data.iter().position(|&b| b == 0xff) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let spec = if spec_bytes.first() == Some(&b'{') {
        match serde_json::from_slice::<Value>(spec_bytes) {
            Ok(v) => v,
            Err(_) => return,
        }
    } else {
        ragged_spec(spec_bytes)
    };
    let Ok(spec) = SpecFile::from_json_str(&spec.to_string()) else {
        return;
    };
    let records: Vec<&[u8]> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(|&b| b == 0xfe).collect()
    };
    match spec {
        SpecFile::Example(specs) => {
            let Ok(parser) = ExampleParser::new(&specs) else { return };
            let sequential = parser.parse_batch(&records).map_err(|e| e.to_string());
            let parallel = parser.parse_batch_parallel(&records, 2).map_err(|e| e.to_string());
            assert_eq!(sequential.is_ok(), parallel.is_ok());
            if let (Ok(a), Ok(b)) = (&sequential, &parallel) {
                // As JSON: NaN equals NaN there.
                assert_eq!(json_of(a), json_of(b));
            }
            for r in &records {
                let _ = parser.parse_single(r);
            }
        }
        SpecFile::Sequence(specs) => {
            let Ok(parser) = SequenceParser::new(&specs) else {
                return;
            };
            let as_json = |r: Result<tfrec::parse::ParsedSequences, _>| {
                r.map(|p| (json_of(&p.context), json_of(&p.feature_lists), json_of(&p.lengths)))
                    .map_err(|e: tfrec::parse::ParseError| e.to_string())
            };
            let sequential = as_json(parser.parse_batch(&records));
            let parallel = as_json(parser.parse_batch_parallel(&records, 2));
            assert_eq!(sequential, parallel);
            for r in &records {
                let _ = parser.parse_single(r);
            }
        }
    }
});

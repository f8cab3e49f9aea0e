//! Any bytes as a batch of Examples and SequenceExamples, parsed by the hand-written fast path
//! and by the careful path alone (`without_fast_path`): the two must give the same tensors or
//! the same error, for every record, since the fast path only answers where its reading is
//! protobuf's. Specs cover every numeric and string feature kind, feature lists of each, and
//! a context.
//!
//! Input: records, each a two-byte little-endian length and that many bytes (the last one
//! takes what is left), so that every byte value can occur inside a record.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tfrec::parse::{specs_from_json_str, ExampleParser, SequenceParser, SequenceSpecs};

struct Parsers {
    examples: Vec<(ExampleParser, ExampleParser)>,
    sequences: Vec<(SequenceParser, SequenceParser)>,
}

fn parsers() -> &'static Parsers {
    static PARSERS: OnceLock<Parsers> = OnceLock::new();
    PARSERS.get_or_init(|| {
        let example_specs = [
            serde_json::json!({
                "a": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": 7},
                "b": {"type": "FixedLenFeature", "shape": [2], "dtype": "float32", "default_value": [1.0, 2.0]},
                "c": {"type": "FixedLenFeature", "shape": [], "dtype": "string", "default_value": "x"},
                "d": {"type": "VarLenFeature", "dtype": "int64"},
                "e": {"type": "VarLenFeature", "dtype": "float32"},
                "f": {"type": "VarLenFeature", "dtype": "string"},
                "g": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
            }),
            serde_json::json!({
                "r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v",
                      "partitions": [{"kind": "row_lengths", "key": "l"}]},
                "s": {"type": "SparseFeature", "index_key": ["i"], "value_key": "w", "dtype": "int64", "size": [10]},
            }),
        ];
        let sequence_specs = [
            serde_json::json!({
                "context_features": {
                    "id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": 0},
                    "tags": {"type": "VarLenFeature", "dtype": "string"},
                },
                "sequence_features": {
                    "i": {"type": "VarLenFeature", "dtype": "int64"},
                    "f": {"type": "VarLenFeature", "dtype": "float32"},
                    "s": {"type": "VarLenFeature", "dtype": "string"},
                },
            }),
            serde_json::json!({
                "sequence_features": {
                    "i": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
                    "f": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32", "allow_missing": true},
                    "s": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "string", "allow_missing": true},
                },
            }),
            serde_json::json!({
                "sequence_features": {
                    "i": {"type": "RaggedFeature", "dtype": "int64"},
                    "f": {"type": "RaggedFeature", "dtype": "float32"},
                },
            }),
        ];
        let example = |s: &serde_json::Value| {
            ExampleParser::new(&specs_from_json_str(&s.to_string()).expect("spec")).expect("compiles")
        };
        let sequence = |s: &serde_json::Value| {
            SequenceParser::new(&SequenceSpecs::from_json_str(&s.to_string()).expect("spec")).expect("compiles")
        };
        Parsers {
            examples: example_specs
                .iter()
                .map(|s| (example(s), example(s).without_fast_path()))
                .collect(),
            sequences: sequence_specs
                .iter()
                .map(|s| (sequence(s), sequence(s).without_fast_path()))
                .collect(),
        }
    })
}

/// The records of the input (see the module's comment).
fn records(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while let [lo, hi, rest @ ..] = data {
        let len = usize::from(u16::from_le_bytes([*lo, *hi])).min(rest.len());
        out.push(&rest[..len]);
        data = &rest[len..];
    }
    out
}

/// Asserts the fast path's answer is the careful path's. Debug text compares NaN values as
/// equal, where `==` on the tensors would not.
fn same<T: std::fmt::Debug, E: std::fmt::Display>(what: &str, fast: Result<T, E>, careful: Result<T, E>) {
    let text = |r: Result<T, E>| format!("{:?}", r.map_err(|e| e.to_string()));
    assert_eq!(text(fast), text(careful), "{what}");
}

fuzz_target!(|data: &[u8]| {
    let records = records(data);
    let parsers = parsers();
    for (fast, careful) in &parsers.examples {
        same(
            "Example batch",
            fast.parse_batch(&records),
            careful.parse_batch(&records),
        );
        for record in &records {
            same("Example", fast.parse_single(record), careful.parse_single(record));
        }
    }
    for (fast, careful) in &parsers.sequences {
        same(
            "SequenceExample batch",
            fast.parse_batch(&records),
            careful.parse_batch(&records),
        );
        for record in &records {
            same(
                "SequenceExample",
                fast.parse_single(record),
                careful.parse_single(record),
            );
        }
    }
});

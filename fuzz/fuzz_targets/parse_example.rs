//! Any bytes as a batch of Examples and SequenceExamples under a fixed set of specs covering
//! every feature type and ragged partition: the parsers must return tensors or errors, never
//! panic, and the parallel path must agree with the sequential one.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tfrec::parse::{specs_from_json_str, ExampleParser, SequenceParser, SequenceSpecs};

fn parsers() -> &'static (Vec<ExampleParser>, SequenceParser) {
    static PARSERS: OnceLock<(Vec<ExampleParser>, SequenceParser)> = OnceLock::new();
    PARSERS.get_or_init(|| {
        let specs = [
            serde_json::json!({
                "a": {"type": "FixedLenFeature", "shape": [2], "dtype": "int64", "default_value": [1, 2]},
                "b": {"type": "VarLenFeature", "dtype": "float32"},
                "c": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "string", "allow_missing": true},
                "s": {"type": "SparseFeature", "index_key": ["i"], "value_key": "v", "dtype": "int64", "size": [10]},
            }),
            serde_json::json!({
                "r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": false,
                      "partitions": [{"kind": "row_lengths", "key": "l"}, {"kind": "value_row_ids", "key": "i"},
                                     {"kind": "uniform_row_length", "length": 2}]},
                "q": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": true,
                      "partitions": [{"kind": "row_splits", "key": "p"}, {"kind": "row_starts", "key": "t"}]},
            }),
        ];
        let examples = specs.iter().map(|s| ExampleParser::new(&specs_from_json_str(&s.to_string()).expect("spec")).expect("compiles")).collect();
        let sequence = SequenceParser::new(
            &SequenceSpecs::from_json_str(&serde_json::json!({
                "context_features": {"k": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": 0}},
                "sequence_features": {
                    "x": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32", "allow_missing": true},
                    "y": {"type": "VarLenFeature", "dtype": "string"},
                    "z": {"type": "RaggedFeature", "dtype": "int64"},
                },
            }).to_string())
            .expect("spec"),
        )
        .expect("compiles");
        (examples, sequence)
    })
}

fuzz_target!(|data: &[u8]| {
    // The input is a batch: records separated by the byte 0xfe.
    let records: Vec<&[u8]> = data.split(|&b| b == 0xfe).collect();
    let (examples, sequence) = parsers();
    for parser in examples {
        let sequential = parser.parse_batch(&records).map_err(|e| e.to_string());
        let parallel = parser.parse_batch_parallel(&records, 2).map_err(|e| e.to_string());
        assert_eq!(sequential.is_ok(), parallel.is_ok());
        let _ = parser.parse_single(data);
    }
    let _ = sequence.parse_batch(&records);
    let _ = sequence.parse_single(data);
});

//! Memory of reading friendly JSON lines (`tfrec from-jsonl`): a line becomes its encoded
//! record in one streaming pass, with no JSON tree and no owned message in between, so the heap
//! it needs is bounded by the line's own size (the README's promise for from-jsonl is twice the
//! longest line in all, the line itself included).
//!
//! The heap is counted by a per-thread counting allocator (as in `parse_edge_cases.rs`), so
//! tests running at once do not see each other's bytes. A `realloc` counts as growing in place
//! (`mremap` for blocks this large).

use tfrec::example::{Example, Feature, Kind, SequenceExample, TypeHints};

#[path = "common/heap.rs"]
mod heap;
use heap::peak_heap;

const LINE: usize = 8 << 20;

/// `{"x": [v0, v1, ...]}` of about [`LINE`] bytes; the values' count.
fn long_line(value: impl Fn(usize) -> String) -> (String, usize) {
    let mut line = String::from(r#"{"x": ["#);
    let mut n = 0;
    while line.len() < LINE {
        if n > 0 {
            line.push_str(", ");
        }
        line.push_str(&value(n));
        n += 1;
    }
    line.push_str("]}");
    (line, n)
}

/// Reads `line` as an Example and checks the heap it took against 1.5 times its length.
fn check_example(line: &str, hints: &TypeHints) -> Vec<u8> {
    let (bytes, heap) = peak_heap(|| Example::encode_friendly_json(line, hints).expect("the line reads"));
    assert!(
        heap < line.len() * 3 / 2,
        "a {} byte line took {heap} bytes of heap to encode",
        line.len()
    );
    bytes
}

#[test]
fn a_long_line_of_small_ints_needs_less_heap_than_its_length() {
    let (line, n) = long_line(|i| (i % 100).to_string());
    let bytes = check_example(&line, &TypeHints::new());
    let example = Example::decode(&bytes).expect("valid record");
    let x = example.get("x").and_then(Feature::as_int64).expect("int64");
    assert_eq!((x.len(), &x[..3]), (n, &[0, 1, 2][..]));
}

#[test]
fn a_long_line_of_floats_needs_less_heap_than_its_length() {
    let (line, n) = long_line(|i| format!("{}.5", i % 100));
    let bytes = check_example(&line, &TypeHints::new());
    let example = Example::decode(&bytes).expect("valid record");
    let x = example.get("x").and_then(Feature::as_float).expect("float");
    assert_eq!((x.len(), &x[..3]), (n, &[0.5, 1.5, 2.5][..]));
}

#[test]
fn a_long_line_of_ints_read_as_floats_needs_less_heap_than_its_length() {
    let (line, n) = long_line(|i| (i % 1000).to_string());
    let hints = TypeHints::from([("x".to_owned(), Kind::Float)]);
    let bytes = check_example(&line, &hints);
    assert_eq!(
        Example::decode(&bytes).expect("valid").get("x").map(|f| f.len()),
        Some(n)
    );
}

#[test]
fn a_long_feature_list_needs_less_heap_than_its_length() {
    let mut line = String::from(r#"{"feature_lists": {"x": ["#);
    let mut steps = 0;
    while line.len() < LINE {
        if steps > 0 {
            line.push_str(", ");
        }
        line.push_str(&format!("[{}, {}]", steps % 100, steps % 7));
        steps += 1;
    }
    line.push_str("]}}");
    let (bytes, heap) = peak_heap(|| SequenceExample::encode_friendly_json(&line, &TypeHints::new()).expect("reads"));
    assert!(
        heap < line.len() * 3 / 2,
        "a {} byte line took {heap} bytes",
        line.len()
    );
    let seq = SequenceExample::decode(&bytes).expect("valid record");
    let x = &seq.feature_list("x").expect("x").feature;
    assert_eq!((x.len(), &x[1]), (steps, &Feature::Int64(vec![1, 1])));
}

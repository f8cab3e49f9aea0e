//! What parsing a huge record costs in heap: at most its tensors and a fraction of the record
//! (the README's bound for `tfrec parse`, less the reader's share), for the hostile records of
//! `scripts/bench-memory`: 1-byte packed int64s and empty byte strings, where each input byte
//! is up to 8 bytes of tensor. Also that `tfrec parse`'s look at its first records (Example or
//! SequenceExample?) costs nothing, and says what decoding them says.
//!
//! The heap is counted by a per-thread counting allocator, as in `parse_edge_cases.rs` (the
//! test harness runs tests on several threads at once). A `realloc` counts its new size only:
//! for blocks this large the system allocator moves pages rather than copying them.

use tfrec::example::{detect_message, Example, MessageKind, SequenceExample};
use tfrec::parse::{specs_from_json_str, ExampleParser, TensorMap};

#[path = "common/heap.rs"]
mod heap;
use heap::peak_heap;
#[path = "common/wire.rs"]
mod wire;
use wire::field;

const MIB: usize = 1 << 20;

/// An Example of one feature, `name`, of serialized Feature `feature`.
fn example(name: &str, feature: &[u8]) -> Vec<u8> {
    let entry = [field(0x0a, name.as_bytes()), field(0x12, feature)].concat();
    field(0x0a, &field(0x0a, &entry))
}

/// `n` int64s 0..127 as one packed block of 1-byte varints.
fn packed_int64s(n: usize) -> Vec<u8> {
    let block: Vec<u8> = (0..n).map(|i| (i % 128) as u8).collect();
    example("x", &field(0x1a, &field(0x0a, &block)))
}

/// `n` empty byte strings (2 bytes each).
fn empty_strings(n: usize) -> Vec<u8> {
    example("b", &field(0x0a, &[0x0a, 0x00].repeat(n)))
}

fn parser(spec: &str) -> ExampleParser {
    ExampleParser::new(&specs_from_json_str(spec).expect("spec loads")).expect("spec compiles")
}

/// What `tfrec parse` does with a batch: looks at what its records are, then parses them. The
/// peak heap, and the tensors.
fn parse_as_the_cli_does(spec: &str, record: &[u8]) -> (TensorMap, usize) {
    let parser = parser(spec);
    peak_heap(|| {
        detect_message(record);
        parser.parse_batch(&[record]).expect("parses")
    })
}

/// The heap a record may take beyond its tensors: 1.25 times the record (it need not even be
/// that much: the values are decoded straight into the tensors).
fn allowed(tensors: usize, record: &[u8]) -> usize {
    tensors + record.len() * 5 / 4
}

#[test]
fn packed_int64s_take_their_tensor_and_no_more() {
    let n = 3 << 20;
    let record = packed_int64s(n);
    let spec = format!(r#"{{"x": {{"type": "FixedLenFeature", "shape": [{n}], "dtype": "int64"}}}}"#);
    let (t, heap) = parse_as_the_cli_does(&spec, &record);
    let tensor = t["x"].as_dense().expect("dense");
    assert_eq!(tensor.shape(), &[1, n]);
    assert_eq!(tensor.as_i64().map(|v| v[n - 1]), Some(((n - 1) % 128) as i64));
    let limit = allowed(8 * n, &record);
    assert!(heap <= limit, "{heap} bytes of heap, {limit} allowed");
}

#[test]
fn empty_strings_take_their_offsets_and_no_more() {
    let n = 3 << 20;
    let record = empty_strings(n);
    let spec = format!(r#"{{"b": {{"type": "FixedLenFeature", "shape": [{n}], "dtype": "string"}}}}"#);
    let (t, heap) = parse_as_the_cli_does(&spec, &record);
    let tensor = t["b"].as_dense().expect("dense");
    assert_eq!(tensor.shape(), &[1, n]);
    assert_eq!(tensor.as_bytes().map(|b| (b.len(), b.data().len())), Some((n, 0)));
    // A string tensor is its bytes (none here) and n + 1 offsets.
    let limit = allowed(8 * (n + 1), &record);
    assert!(heap <= limit, "{heap} bytes of heap, {limit} allowed");
}

#[test]
fn one_huge_string_takes_its_bytes_and_no_more() {
    let n = 12 << 20;
    let record = example("b", &field(0x0a, &field(0x0a, &vec![7u8; n])));
    let (t, heap) = parse_as_the_cli_does(
        r#"{"b": {"type": "FixedLenFeature", "shape": [], "dtype": "string"}}"#,
        &record,
    );
    assert_eq!(
        t["b"].as_dense().and_then(|d| d.as_bytes()).map(|b| b.data().len()),
        Some(n)
    );
    let limit = allowed(n + 16, &record);
    assert!(heap <= limit, "{heap} bytes of heap, {limit} allowed");
}

#[test]
fn a_huge_varlen_feature_takes_its_sparse_tensor_and_no_more() {
    let n = 3 << 20;
    let record = packed_int64s(n);
    let (t, heap) = parse_as_the_cli_does(r#"{"x": {"type": "VarLenFeature", "dtype": "int64"}}"#, &record);
    assert_eq!(
        t["x"].as_sparse().map(|s| s.dense_shape.clone()),
        Some(vec![1, n as i64])
    );
    // Values, and 2 indices per value.
    let limit = allowed(8 * n + 16 * n, &record);
    assert!(heap <= limit, "{heap} bytes of heap, {limit} allowed");
}

#[test]
fn telling_the_message_kind_decodes_nothing() {
    for record in [packed_int64s(3 << 20), empty_strings(3 << 20)] {
        let (kind, heap) = peak_heap(|| detect_message(&record));
        assert_eq!(kind, decoded_kind(&record));
        assert!(heap < MIB, "{heap} bytes of heap");
    }
}

/// The answer from whole decodes, as `detect_message` gave it before it validated in place.
fn decoded_kind(bytes: &[u8]) -> MessageKind {
    match (Example::decode(bytes), SequenceExample::decode(bytes)) {
        (_, Ok(seq)) if seq.feature_lists.is_some() => MessageKind::SequenceExample,
        (Ok(_), Ok(_)) => MessageKind::Either,
        (Ok(_), Err(_)) => MessageKind::Example,
        (Err(_), Ok(_)) => MessageKind::SequenceExample,
        (Err(_), Err(_)) => MessageKind::Neither,
    }
}

/// A small xorshift generator: the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn the_message_kind_is_what_decoding_says() {
    let seq = SequenceExample::builder()
        .context_int64("c", [1i64, 2])
        .int64_list("x", vec![vec![0i64, 300], vec![5]])
        .bytes_list("s", vec![vec!["a"], vec![]])
        .build()
        .expect("sequence example")
        .encode();
    let ex = Example::builder()
        .int64("i", [1i64, -1, 1 << 40])
        .float("f", [0.5f32, 2.0])
        .bytes("b", ["xy", ""])
        .build()
        .expect("example")
        .encode();
    let mut cases: Vec<Vec<u8>> = vec![
        vec![],
        seq.clone(),
        ex.clone(),
        [ex.clone(), seq.clone()].concat(),
        // A key that is not UTF-8; an oneof kind replaced after a bad list; a bad packed float
        // list; a group; an unpacked int64 and float; a feature list field holding junk.
        example("\u{80}", &field(0x1a, &[]))
            .into_iter()
            .map(|b| if b == 0xc2 { 0xff } else { b })
            .collect(),
        example("k", &[field(0x1a, &[0x0a, 0x01, 0x80]), field(0x0a, &[])].concat()),
        example("k", &field(0x12, &field(0x0a, &[0; 3]))),
        example("k", &field(0x1a, &[0x0b, 0x08, 0x01, 0x0c])),
        example(
            "k",
            &[field(0x1a, &[0x08, 0x96, 0x01]), field(0x12, &[0x0d, 0, 0, 0, 0])].concat(),
        ),
        [ex.clone(), field(0x12, &[0x0a, 0x02, 0x0a, 0x05])].concat(),
        [
            ex.clone(),
            field(
                0x12,
                &field(0x0a, &field(0x12, &field(0x0a, &field(0x1a, &[0x0a, 0x01, 0xff])))),
            ),
        ]
        .concat(),
    ];
    // Every truncation and many corruptions of the well-formed ones.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for base in [&seq, &ex] {
        for len in 0..base.len() {
            cases.push(base[..len].to_vec());
        }
        for _ in 0..4000 {
            let mut bytes = base.clone();
            for _ in 0..=rng.next() % 3 {
                let at = (rng.next() % bytes.len() as u64) as usize;
                bytes[at] = match rng.next() % 4 {
                    0 => rng.next() as u8,
                    1 => bytes[at] ^ 0x80,
                    2 => bytes[at].wrapping_add(1),
                    _ => bytes[at].wrapping_sub(1),
                };
            }
            cases.push(bytes);
        }
    }
    let mut kinds = std::collections::HashSet::new();
    for bytes in &cases {
        let want = decoded_kind(bytes);
        assert_eq!(detect_message(bytes), want, "{bytes:02x?}");
        kinds.insert(format!("{want:?}"));
    }
    // The cases reach every answer.
    assert_eq!(kinds.len(), 4, "{kinds:?}");
}

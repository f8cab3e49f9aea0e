//! Property tests of the parse ops: the batch parse is the single parses stacked; the parallel
//! path equals the sequential one (errors included); a ragged feature padded to dense equals
//! the FixedLenSequenceFeature parse; packed steps are the padded ones without their padding.

use proptest::prelude::*;
use serde_json::json;
use tfrec::example::{Example, Feature, SequenceExample, SequenceExampleBuilder};
use tfrec::parse::{
    concat_batch, specs_from_json_str, DenseTensor, ExampleParser, FeatureSpecs, SequenceParser, SequenceSpecs,
    StepLayout, Tensor, TensorMap, Values,
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

/// A SequenceExample context spec for one key of dtype `dtype`: FixedLen (the sequence op's
/// own rules) or VarLen (parse_example's).
fn context_spec_for(dtype: &'static str) -> impl Strategy<Value = serde_json::Value> {
    spec_for(dtype).prop_filter("a context feature", |s| {
        matches!(s["type"].as_str(), Some("FixedLenFeature" | "VarLenFeature"))
    })
}

fn specs() -> impl Strategy<Value = FeatureSpecs> {
    (spec_for("int64"), spec_for("float32"), spec_for("string"))
        .prop_map(|(a, b, c)| specs_from_json_str(&json!({"a": a, "b": b, "c": c}).to_string()).expect("valid spec"))
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
    serde_json::Value::Object(
        m.iter()
            .map(|(k, t)| {
                (
                    k.clone(),
                    serde_json::from_str::<serde_json::Value>(&t.to_json_string()).expect("tensor JSON"),
                )
            })
            .collect(),
    )
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
        let ragged = ExampleParser::new(&specs_from_json_str(&json!({"x": {"type": "RaggedFeature", "dtype": "int64"}}).to_string()).expect("spec")).expect("compiles");
        let dense = ExampleParser::new(&specs_from_json_str(&json!({"x": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true}}).to_string()).expect("spec")).expect("compiles");
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
        let specs = SequenceSpecs::from_json_str(&json!({
            "sequence_features": {
                "tok": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
                "tags": {"type": "VarLenFeature", "dtype": "string"},
            }
        }).to_string()).expect("spec");
        let parser = SequenceParser::new(&specs).expect("compiles");
        let sequential = parser.parse_batch(&records).map(|p| (json_of(&p.feature_lists), json_of(&p.lengths))).map_err(|e| e.to_string());
        let parallel = parser.parse_batch_parallel(&records, minibatch).map(|p| (json_of(&p.feature_lists), json_of(&p.lengths))).map_err(|e| e.to_string());
        prop_assert_eq!(sequential, parallel);
    }
}

/// 0-5 frames of two floats: a dense feature list of shape [2].
fn frames() -> impl Strategy<Value = Vec<Vec<f32>>> {
    prop::collection::vec(prop::collection::vec(-1e6f32..1e6, 2..3), 0..6)
}

/// The "frame" list, when `present`; with `odd`, its first row holds three values where the
/// shape says two (an error whichever path parses it).
fn add_frames(b: SequenceExampleBuilder, frames: &[Vec<f32>], odd: bool, present: bool) -> SequenceExampleBuilder {
    let mut frames = frames.to_vec();
    if odd {
        if let Some(row) = frames.first_mut() {
            row.push(0.5);
        }
    }
    if present {
        b.float_list("frame", frames)
    } else {
        b
    }
}

/// 0-5 int64 ids: a scalar dense feature list.
fn ids() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(-1_000_000_000i64..1_000_000_000, 0..6)
}

proptest! {
    /// Dense feature lists are decoded in place on the sequential path and through columns on
    /// the parallel one: the same tensors, or the same error (a row of the wrong size).
    #[test]
    fn sequence_dense_in_place_equals_columns(
        seqs in prop::collection::vec(
            (
                frames(),
                ids(),
                any::<bool>(),
                // Strings around the 16 bytes below which they are copied in a fixed size.
                prop::collection::vec(prop::collection::vec("[a-z]{0,20}", 1..4), 0..6),
            ),
            1..30,
        ),
        odd_row in prop::option::of(0usize..30),
        minibatch in 1usize..9,
    ) {
        let records: Vec<Vec<u8>> = seqs
            .iter()
            .enumerate()
            .map(|(e, (frames, ids, with_frames, words))| {
                let mut b = SequenceExample::builder().int64_list("id", ids.iter().map(|&i| vec![i]).collect::<Vec<_>>());
                b = add_frames(b, frames, odd_row == Some(e), *with_frames);
                // A scalar string list (each row's first word) and one of shape [2], whose
                // rows of one or three words are errors.
                b = b.bytes_list("word", words.iter().map(|w| vec![w[0].clone()]).collect::<Vec<_>>());
                if odd_row == Some(e) {
                    b = b.bytes_list("pair", words.clone());
                } else {
                    let pairs: Vec<Vec<String>> = words.iter().map(|w| w.iter().chain(w).take(2).cloned().collect()).collect();
                    b = b.bytes_list("pair", pairs);
                }
                b.build().expect("ok").encode()
            })
            .collect();
        let specs = SequenceSpecs::from_json_str(&json!({
            "sequence_features": {
                "frame": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32", "allow_missing": true},
                "id": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
                "word": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "string", "allow_missing": true},
                "pair": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "string", "allow_missing": true},
            }
        }).to_string()).expect("spec");
        let parser = SequenceParser::new(&specs).expect("compiles");
        let outcome = |r: Result<tfrec::parse::ParsedSequences, tfrec::parse::ParseError>| {
            r.map(|p| (json_of(&p.feature_lists), json_of(&p.lengths))).map_err(|e| e.to_string())
        };
        prop_assert_eq!(outcome(parser.parse_batch(&records)), outcome(parser.parse_batch_parallel(&records, minibatch)));
    }
}

/// Every element of a dense tensor, row-major, as text (for comparing across dtypes).
fn elements(t: &DenseTensor) -> Vec<String> {
    match t.values() {
        Values::Int64(v) => v.iter().map(|x| x.to_string()).collect(),
        Values::Float32(v) => v.iter().map(|x| format!("{x:?}")).collect(),
        Values::String(b) => (0..b.len()).map(|i| format!("{:?}", b.value(i))).collect(),
    }
}

proptest! {
    /// `StepLayout::Packed` gives each dense feature list's steps one record after another:
    /// exactly the padded tensor's rows cut to their lengths, on the in-place path (numbers),
    /// the column path (strings), the careful path (a context entry written value first) and
    /// the parallel path; everything else, errors included, as with padding.
    #[test]
    fn sequence_packed_steps_are_the_padded_ones_without_padding(
        seqs in prop::collection::vec(
            (
                frames(),
                ids(),
                prop::collection::vec("[a-z]{0,3}", 0..4),
                any::<bool>(),
                prop::option::of(prop::collection::vec(prop::collection::vec(-9i64..9, 0..4), 0..5)),
            ),
            1..20,
        ),
        odd_row in prop::option::of(0usize..20),
        careful in any::<bool>(),
        minibatch in 1usize..6,
    ) {
        let records: Vec<Vec<u8>> = seqs
            .iter()
            .enumerate()
            .map(|(e, (frames, ids, tags, with_frames, varlen))| {
                let mut b = SequenceExample::builder()
                    .context_int64("c", vec![e as i64])
                    .int64_list("id", ids.iter().map(|&i| vec![i]).collect::<Vec<_>>())
                    .bytes_list("tag", tags.iter().map(|t| vec![t.clone()]).collect::<Vec<_>>());
                b = add_frames(b, frames, odd_row == Some(e), *with_frames);
                if let Some(steps) = varlen {
                    b = b.int64_list("v", steps.clone());
                }
                let record = b.build().expect("ok").encode();
                if careful { value_first(&record) } else { record }
            })
            .collect();
        let specs = SequenceSpecs::from_json_str(&json!({
            "context_features": {"c": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}},
            "sequence_features": {
                "frame": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32", "allow_missing": true},
                "id": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true},
                "tag": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "string", "allow_missing": true},
                "v": {"type": "VarLenFeature", "dtype": "int64"},
            }
        }).to_string()).expect("spec");
        let parser = SequenceParser::new(&specs).expect("compiles");
        let padded = parser.parse_batch(&records).map_err(|e| e.to_string());
        for packed in [
            parser.parse_batch_with(&records, StepLayout::Packed),
            parser.parse_batch_parallel_with(&records, minibatch, StepLayout::Packed),
        ] {
            let packed = packed.map_err(|e| e.to_string());
            let (padded, packed) = match (&padded, packed) {
                (Ok(a), Ok(b)) => (a, b),
                (a, b) => {
                    prop_assert_eq!(a.as_ref().err(), b.as_ref().err());
                    continue;
                }
            };
            prop_assert_eq!(json_of(&padded.context), json_of(&packed.context));
            prop_assert_eq!(json_of(&padded.lengths), json_of(&packed.lengths));
            for (name, stride) in [("frame", 2usize), ("id", 1), ("tag", 1)] {
                let lengths = elements(padded.lengths[name].as_dense().expect("dense"));
                let lengths: Vec<usize> = lengths.iter().map(|l| l.parse().expect("a count")).collect();
                let full = padded.feature_lists[name].as_dense().expect("dense");
                let width = full.shape()[1] * stride;
                let all = elements(full);
                let expected: Vec<String> = lengths
                    .iter()
                    .enumerate()
                    .flat_map(|(b, &len)| all[b * width..b * width + len * stride].to_vec())
                    .collect();
                let got = packed.feature_lists[name].as_dense().expect("dense");
                prop_assert_eq!(got.shape()[0], lengths.iter().sum::<usize>());
                prop_assert_eq!(&got.shape()[1..], &full.shape()[2..]);
                prop_assert_eq!(elements(got), expected);
            }
            // A VarLen list: the sparse tensor's (example, step, position, value), from splits.
            let sparse = padded.feature_lists["v"].as_sparse().expect("sparse");
            let values = elements(&sparse.values);
            let expected: Vec<(i64, i64, i64, String)> = sparse
                .indices
                .rows()
                .into_iter()
                .zip(values)
                .map(|(at, v)| (at[0], at[1], at[2], v))
                .collect();
            let ragged = packed.feature_lists["v"].as_ragged().expect("ragged");
            let (steps, positions) = (&ragged.nested_row_splits()[0], &ragged.nested_row_splits()[1]);
            let flat = elements(ragged.flat_values());
            let mut got = Vec::new();
            for b in 0..steps.len() - 1 {
                for step in steps[b]..steps[b + 1] {
                    for k in positions[step as usize]..positions[step as usize + 1] {
                        got.push((b as i64, step - steps[b], k - positions[step as usize], flat[k as usize].clone()));
                    }
                }
            }
            prop_assert_eq!(got, expected);
            let written: Vec<i64> = seqs.iter().map(|s| s.4.as_ref().map_or(0, |v| v.len() as i64)).collect();
            prop_assert_eq!(steps.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>(), written);
        }
    }
}

proptest! {
    /// The keys the parse reports seeing are the records' own (an empty or kind-less feature
    /// counts), on the fast and careful paths (value-first entries) and in parallel; the
    /// tensors (or the error) are `parse_batch`'s.
    #[test]
    fn keys_seen_are_the_records_keys(
        parts in prop::collection::vec((feature(0), feature(1), feature(2), any::<bool>()), 0..12),
        specs in specs(),
        minibatch in 1usize..5,
    ) {
        let mut records = Vec::new();
        let mut held = Vec::new();
        for (a, b, c, careful) in &parts {
            let mut ex = Example::default();
            let f = ex.features_mut();
            let mut h = Vec::new();
            for (k, v) in [("a", a), ("b", b), ("c", c)] {
                h.push(v.is_some());
                if let Some(v) = v {
                    f.insert(k, v.clone());
                }
            }
            let bytes = ex.encode();
            records.push(if *careful { value_first(&bytes) } else { bytes });
            held.push(h);
        }
        let parser = ExampleParser::new(&specs).expect("compiles");
        let plain = parser.parse_batch(&records).map(|t| json_of(&t)).map_err(|e| e.to_string());
        for result in [
            parser.parse_batch_seeing_keys(&records),
            parser.parse_batch_parallel_seeing_keys(&records, minibatch),
        ] {
            let result = result.map_err(|e| e.to_string());
            prop_assert_eq!(result.as_ref().map(|(t, _)| json_of(t)).map_err(Clone::clone), plain.clone());
            if let Ok((_, seen)) = result {
                for (i, key) in ["a", "b", "c"].iter().enumerate() {
                    let expected: Vec<bool> = held.iter().map(|h| h[i]).collect();
                    prop_assert_eq!(seen.rows(key), Some(expected));
                }
                prop_assert_eq!(seen.rows("zz"), None);
            }
        }
    }
}

// ---- differential: fast vs careful path, batch vs single op (ragged partitions) ------------

/// A varint, as protobuf writes it.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The (key, value) of each `0a <entry>` of a serialized map field, each entry
/// `0a <key> 12 <value>`.
fn map_entries(map: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < map.len() {
        at += 1;
        let entry = get_len_delimited(map, &mut at);
        let mut e = 1;
        let key = get_len_delimited(entry, &mut e);
        e += 1;
        out.push((key, get_len_delimited(entry, &mut e)));
    }
    out
}

/// A length-delimited field: its one-byte tag, the length, the bytes.
fn put_field(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn get_len_delimited<'a>(buf: &'a [u8], pos: &mut usize) -> &'a [u8] {
    let (mut len, mut shift) = (0usize, 0);
    loop {
        let b = buf[*pos];
        *pos += 1;
        len |= usize::from(b & 0x7f) << shift;
        shift += 7;
        if b < 0x80 {
            break;
        }
    }
    let out = &buf[*pos..*pos + len];
    *pos += len;
    out
}

/// The same Example (or SequenceExample context) with every map entry written value first
/// (`12 <value> 0a <key>`): valid protobuf that TensorFlow reads the same, and that only the
/// careful path takes. A SequenceExample's feature lists are copied as they are.
fn value_first(canonical: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < canonical.len() {
        if canonical[pos] == 0x12 {
            let start = pos;
            pos += 1;
            get_len_delimited(canonical, &mut pos);
            out.extend_from_slice(&canonical[start..pos]);
            continue;
        }
        assert_eq!(canonical[pos], 0x0a, "an Example holds only features");
        pos += 1;
        let features = get_len_delimited(canonical, &mut pos);
        let mut entries = Vec::new();
        for (key, value) in map_entries(features) {
            let mut swapped = Vec::new();
            put_field(&mut swapped, 0x12, value);
            put_field(&mut swapped, 0x0a, key);
            put_field(&mut entries, 0x0a, &swapped);
        }
        put_field(&mut out, 0x0a, &entries);
    }
    out
}

const KINDS: [&str; 6] = [
    "row_splits",
    "row_lengths",
    "row_starts",
    "row_limits",
    "value_row_ids",
    "uniform_row_length",
];

/// A RaggedFeature over values `v` with up to three partitions on the features `p0..p2`.
fn ragged_spec() -> impl Strategy<Value = serde_json::Value> {
    (
        prop::collection::vec((0usize..6, 0i64..3), 0..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(parts, validate, int64)| {
            let partitions: Vec<serde_json::Value> = parts
                .iter()
                .enumerate()
                .map(|(i, &(kind, length))| match KINDS[kind] {
                    "uniform_row_length" => json!({"kind": "uniform_row_length", "length": length}),
                    k => json!({"kind": k, "key": format!("p{i}")}),
                })
                .collect();
            json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": validate,
                         "row_splits_dtype": if int64 { "int64" } else { "int32" }, "partitions": partitions}})
        })
}

/// Values and partition features that may or may not fit each other (or be missing).
fn ragged_record() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(-9i64..9, 0..7),
        prop::collection::vec(prop::option::of(prop::collection::vec(-2i64..7, 0..5)), 3),
    )
        .prop_map(|(v, parts)| {
            let mut b = Example::builder().int64("v", v);
            for (i, p) in parts.into_iter().enumerate() {
                if let Some(p) = p {
                    b = b.int64(&format!("p{i}"), p);
                }
            }
            b.build().expect("ok").encode()
        })
}

/// `n` values split into rows of these lengths, written as each partition kind.
fn valid_partition(kind: &str, lengths: &[i64]) -> Vec<i64> {
    let mut splits = vec![0];
    for l in lengths {
        splits.push(splits.last().copied().unwrap_or(0) + l);
    }
    match kind {
        "row_splits" => splits,
        "row_lengths" => lengths.to_vec(),
        "row_starts" => splits[..splits.len() - 1].to_vec(),
        "row_limits" => splits[1..].to_vec(),
        _ => lengths
            .iter()
            .enumerate()
            .flat_map(|(row, &l)| std::iter::repeat_n(row as i64, l as usize))
            .collect(),
    }
}

fn result_json(r: Result<TensorMap, tfrec::parse::ParseError>) -> Result<serde_json::Value, String> {
    r.map(|m| json_of(&m)).map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn fast_and_careful_paths_agree(
        specs in prop_oneof![specs().prop_map(|s| serde_json::from_str::<serde_json::Value>(&tfrec::parse::specs_to_json_string(&s)).expect("spec JSON")), ragged_spec()],
        records in prop::collection::vec(prop_oneof![example(), ragged_record()], 1..6),
    ) {
        let parser = ExampleParser::new(&specs_from_json_str(&specs.to_string()).expect("spec")).expect("compiles");
        let careful: Vec<Vec<u8>> = records.iter().map(|r| value_first(r)).collect();
        prop_assert_eq!(result_json(parser.parse_batch(&records)), result_json(parser.parse_batch(&careful)));
        for (fast, slow) in records.iter().zip(&careful) {
            prop_assert_eq!(result_json(parser.parse_single(fast)), result_json(parser.parse_single(slow)));
        }
    }

    #[test]
    fn sequence_context_fast_and_careful_paths_agree(
        contexts in prop::collection::vec(example(), 1..6),
        steps in prop::collection::vec(prop::collection::vec(-5i64..5, 1..2), 0..4),
        a in context_spec_for("int64"),
        b in context_spec_for("float32"),
        c in context_spec_for("string"),
        minibatch in 1usize..4,
    ) {
        // The context is an Example's features; the feature lists follow as field 2.
        let lists = SequenceExample::builder().int64_list("s", steps).build().expect("ok").encode();
        let records: Vec<Vec<u8>> = contexts.iter().map(|c| [c.as_slice(), &lists].concat()).collect();
        let careful: Vec<Vec<u8>> = records.iter().map(|r| value_first(r)).collect();
        let specs = SequenceSpecs::from_json_str(&json!({
            "context_features": {"a": a, "b": b, "c": c},
            "sequence_features": {"s": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true}},
        }).to_string()).expect("spec");
        let parser = SequenceParser::new(&specs).expect("compiles");
        let outcome = |r: Result<tfrec::parse::ParsedSequences, tfrec::parse::ParseError>| {
            r.map(|p| (json_of(&p.context), json_of(&p.feature_lists), json_of(&p.lengths))).map_err(|e| e.to_string())
        };
        let slow = outcome(parser.parse_batch(&careful));
        prop_assert_eq!(outcome(parser.parse_batch(&records)), slow.clone());
        prop_assert_eq!(outcome(parser.parse_batch_parallel(&records, minibatch)), slow);
        for (fast, slow) in records.iter().zip(&careful) {
            prop_assert_eq!(outcome(parser.parse_single(fast)), outcome(parser.parse_single(slow)));
        }
    }

    #[test]
    fn ragged_results_are_valid_when_validated(spec in ragged_spec(), records in prop::collection::vec(ragged_record(), 0..5)) {
        let parser = ExampleParser::new(&specs_from_json_str(&spec.to_string()).expect("spec")).expect("compiles");
        // TensorFlow's `from_row_starts` checks the starts, not that a partition with no
        // starts begins at 0 (no starts give splits `[nvals]`), so that one may pass through.
        let validate = spec["r"]["validate"].as_bool().unwrap_or(false) && !spec.to_string().contains("row_starts");
        // Any partitions, valid or not: tensors or errors, never a panic; with validate, only
        // consistent tensors.
        if let Ok(t) = parser.parse_batch(&records) {
            let rt = t["r"].as_ragged().expect("ragged");
            prop_assert!(!validate || rt.check().is_ok(), "{:?}", rt);
            let _ = rt.to_nested();
        }
        for r in &records {
            if let Ok(t) = parser.parse_single(r) {
                if let Some(rt) = t["r"].as_ragged() {
                    prop_assert!(!validate || rt.check().is_ok(), "{:?}", rt);
                    let _ = rt.to_nested();
                }
            }
        }
        let sequential = result_json(parser.parse_batch(&records));
        prop_assert_eq!(sequential, result_json(parser.parse_batch_parallel(&records, 2)));
    }

    #[test]
    fn valid_partitions_agree_between_batch_and_single_ops(
        kind in 0usize..5,
        examples in prop::collection::vec(prop::collection::vec(0i64..4, 0..4), 1..5),
        validate in any::<bool>(),
        int64 in any::<bool>(),
    ) {
        let kind = KINDS[kind];
        let spec = json!({"r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": validate,
            "row_splits_dtype": if int64 { "int64" } else { "int32" },
            "partitions": [{"kind": kind, "key": "p"}]}});
        let parser = ExampleParser::new(&specs_from_json_str(&spec.to_string()).expect("spec")).expect("compiles");
        let records: Vec<Vec<u8>> = examples
            .iter()
            .enumerate()
            .map(|(e, lengths)| {
                let n: i64 = lengths.iter().sum();
                let values: Vec<i64> = (0..n).map(|i| 10 * e as i64 + i).collect();
                Example::builder().int64("v", values).int64("p", valid_partition(kind, lengths)).build().expect("ok").encode()
            })
            .collect();
        let batch = parser.parse_batch(&records).expect("valid partitions parse");
        let singles: Vec<TensorMap> = records.iter().map(|r| parser.parse_single(r).expect("valid partitions parse")).collect();
        // Row i of the batch is the single op's answer for record i.
        let rt = batch["r"].as_ragged().expect("ragged");
        prop_assert!(rt.check().is_ok());
        let tfrec::parse::Nested::List(rows) = rt.to_nested() else { unreachable!("a list") };
        for (row, single) in rows.iter().zip(&singles) {
            let single = single["r"].as_ragged().expect("ragged").to_nested();
            prop_assert_eq!(row, &single);
        }
        // A ValueRowIds partition in the batch counts rows up to the example's largest id, as
        // the single op does; trailing empty rows are not representable in either.
        let _ = kind;
    }

    #[test]
    fn sequence_ragged_partitions_never_panic(
        rows in prop::collection::vec((prop::collection::vec(prop::collection::vec(-2i64..5, 0..4), 0..4),
                                       prop::collection::vec(prop::collection::vec(-2i64..5, 0..4), 0..4)), 1..4),
        kind in 0usize..6,
        validate in any::<bool>(),
    ) {
        let partition = match KINDS[kind] {
            "uniform_row_length" => json!({"kind": "uniform_row_length", "length": 2}),
            k => json!({"kind": k, "key": "p"}),
        };
        let specs = SequenceSpecs::from_json_str(&json!({"sequence_features": {"r": {
            "type": "RaggedFeature", "dtype": "int64", "value_key": "v", "validate": validate, "partitions": [partition]}}}).to_string())
            .expect("spec");
        let parser = SequenceParser::new(&specs).expect("compiles");
        let records: Vec<Vec<u8>> = rows
            .iter()
            .map(|(v, p)| SequenceExample::builder().int64_list("v", v.clone()).int64_list("p", p.clone()).build().expect("ok").encode())
            .collect();
        let sequential = parser.parse_batch(&records).map(|p| json_of(&p.feature_lists)).map_err(|e| e.to_string());
        // (Row starts with no starts pass TensorFlow's validation inconsistent; see above.)
        if validate && KINDS[kind] != "row_starts" {
            if let Ok(p) = parser.parse_batch(&records) {
                prop_assert!(p.feature_lists["r"].as_ragged().expect("ragged").check().is_ok());
            }
        }
        let parallel = parser.parse_batch_parallel(&records, 1).map(|p| json_of(&p.feature_lists)).map_err(|e| e.to_string());
        prop_assert_eq!(sequential, parallel);
        for r in &records {
            let _ = parser.parse_single(r);
        }
    }
}

/// The same SequenceExample with an unknown field (`10 00`: field 2, varint 0) after the
/// rows of every feature list: protobuf, and TensorFlow, skip it, and only the careful path
/// takes a list that holds it. The context is copied as it is.
fn lists_with_unknown_field(canonical: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < canonical.len() {
        let tag = canonical[pos];
        let start = pos;
        pos += 1;
        let body = get_len_delimited(canonical, &mut pos);
        if tag != 0x12 {
            out.extend_from_slice(&canonical[start..pos]);
            continue;
        }
        let mut entries = Vec::new();
        for (key, list) in map_entries(body) {
            let mut list = list.to_vec();
            list.extend([0x10, 0x00]);
            let mut rebuilt = Vec::new();
            put_field(&mut rebuilt, 0x0a, key);
            put_field(&mut rebuilt, 0x12, &list);
            put_field(&mut entries, 0x0a, &rebuilt);
        }
        put_field(&mut out, 0x12, &entries);
    }
    out
}

/// A feature list's row: no kind, or 0 to 70 int64s of 1 to 10 bytes each (so rows of one-
/// and two-byte lengths, and about 128 and 254 bytes), or 0 to 70 floats.
fn list_row(int64: bool) -> impl Strategy<Value = Feature> {
    let values = prop::collection::vec((0u32..64, any::<i64>()), 0..70);
    prop_oneof![
        1 => Just(Feature::None),
        8 => values.prop_map(move |vs| {
            if int64 {
                Feature::Int64(vs.into_iter().map(|(bits, v)| if bits == 63 { v } else { v & ((1 << bits) - 1) }).collect())
            } else {
                Feature::Float(vs.into_iter().map(|(bits, v)| (v >> bits) as f32).collect())
            }
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Feature lists of every numeric kind of spec, read by the fast walk (rows read at once
    /// when their lengths fit a byte, values written in whole runs) and by the careful path:
    /// the same tensors, or the same error.
    #[test]
    fn sequence_lists_fast_and_careful_paths_agree(
        seqs in prop::collection::vec(
            (prop::collection::vec(list_row(true), 0..12), prop::collection::vec(list_row(false), 0..12)),
            1..8,
        ),
        kind in 0usize..3,
        minibatch in 1usize..4,
    ) {
        let records: Vec<Vec<u8>> = seqs
            .iter()
            .map(|(ints, floats)| {
                SequenceExample::builder()
                    .feature_list("i", ints.clone())
                    .feature_list("f", floats.clone())
                    .build()
                    .expect("ok")
                    .encode()
            })
            .collect();
        let careful: Vec<Vec<u8>> = records.iter().map(|r| lists_with_unknown_field(r)).collect();
        let spec = |dtype: &str| match kind {
            0 => json!({"type": "VarLenFeature", "dtype": dtype}),
            1 => json!({"type": "RaggedFeature", "dtype": dtype}),
            _ => json!({"type": "FixedLenSequenceFeature", "shape": [], "dtype": dtype, "allow_missing": true}),
        };
        let specs = SequenceSpecs::from_json_str(&json!({
            "sequence_features": {"i": spec("int64"), "f": spec("float32")},
        }).to_string()).expect("spec");
        let parser = SequenceParser::new(&specs).expect("compiles");
        let outcome = |r: Result<tfrec::parse::ParsedSequences, tfrec::parse::ParseError>| {
            r.map(|p| (json_of(&p.feature_lists), json_of(&p.lengths))).map_err(|e| e.to_string())
        };
        let slow = outcome(parser.parse_batch(&careful));
        prop_assert_eq!(outcome(parser.parse_batch(&records)), slow.clone());
        prop_assert_eq!(outcome(parser.parse_batch_parallel(&records, minibatch)), slow);
        for (fast, slow) in records.iter().zip(&careful) {
            prop_assert_eq!(outcome(parser.parse_single(fast)), outcome(parser.parse_single(slow)));
        }
    }
}

/// A byte to write over a record's: the tags and lengths the fast path reads, bytes about the
/// continuation bit and the top of a byte, or any.
fn damage_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        prop::sample::select(vec![
            0x00u8, 0x01, 0x02, 0x04, 0x0a, 0x12, 0x1a, 0x22, 0x7f, 0x80, 0xfe, 0xff
        ]),
        any::<u8>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Records with a few bytes written over, read with the fast path and without it
    /// (`without_fast_path`): the same tensors or the same error, for SequenceExamples under
    /// each kind of feature-list spec with a context, and for Examples.
    #[test]
    fn damaged_records_read_the_same_with_and_without_the_fast_path(
        seqs in prop::collection::vec(
            (prop::collection::vec(list_row(true), 0..8), prop::collection::vec(list_row(false), 0..8), example()),
            1..5,
        ),
        damage in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), damage_byte()), 0..4),
        kind in 0usize..3,
    ) {
        let mut records: Vec<Vec<u8>> = seqs
            .iter()
            .map(|(ints, floats, context)| {
                let lists = SequenceExample::builder()
                    .feature_list("i", ints.clone())
                    .feature_list("f", floats.clone())
                    .build()
                    .expect("ok")
                    .encode();
                [context.as_slice(), &lists].concat()
            })
            .collect();
        for (record, at, byte) in &damage {
            let record = record.get_mut(&mut records);
            if !record.is_empty() {
                let at = at.index(record.len());
                record[at] = *byte;
            }
        }
        let spec = |dtype: &str| match kind {
            0 => json!({"type": "VarLenFeature", "dtype": dtype}),
            1 => json!({"type": "RaggedFeature", "dtype": dtype}),
            _ => json!({"type": "FixedLenSequenceFeature", "shape": [], "dtype": dtype, "allow_missing": true}),
        };
        let context = json!({
            "a": {"type": "VarLenFeature", "dtype": "int64"},
            "b": {"type": "VarLenFeature", "dtype": "float32"},
            "c": {"type": "VarLenFeature", "dtype": "string"},
        });
        let sequence_specs = SequenceSpecs::from_json_str(&json!({
            "context_features": context,
            "sequence_features": {"i": spec("int64"), "f": spec("float32")},
        }).to_string()).expect("spec");
        let fast = SequenceParser::new(&sequence_specs).expect("compiles");
        let careful = SequenceParser::new(&sequence_specs).expect("compiles").without_fast_path();
        let outcome = |r: Result<tfrec::parse::ParsedSequences, tfrec::parse::ParseError>| {
            format!("{:?}", r.map_err(|e| e.to_string()))
        };
        prop_assert_eq!(outcome(fast.parse_batch(&records)), outcome(careful.parse_batch(&records)));
        for record in &records {
            prop_assert_eq!(outcome(fast.parse_single(record)), outcome(careful.parse_single(record)));
        }
        // The same bytes as Examples: the context is an Example's features, and the feature
        // lists a field an Example does not have.
        let example_specs = specs_from_json_str(&context.to_string()).expect("spec");
        let fast = ExampleParser::new(&example_specs).expect("compiles");
        let careful = ExampleParser::new(&example_specs).expect("compiles").without_fast_path();
        let outcome = |r: Result<TensorMap, tfrec::parse::ParseError>| format!("{:?}", r.map_err(|e| e.to_string()));
        prop_assert_eq!(outcome(fast.parse_batch(&records)), outcome(careful.parse_batch(&records)));
    }
}

/// How a record of [`long_batch_record`] is written.
#[derive(Clone, Copy, Debug)]
enum Form {
    Canonical,
    /// `c` written one field per value: valid protobuf that only the careful path reads.
    Unpacked,
    /// Every map entry value first (see [`value_first`]): only the careful path reads it.
    ValueFirst,
    /// `a` holds floats: an error.
    WrongKind,
}

/// An Example of `a` (one int64, or missing), `b` (0-3 floats) and `c` (0-3 int64s), written
/// in the canonical encoding, or in one only the careful path reads, or with an error.
fn long_batch_record() -> impl Strategy<Value = Vec<u8>> {
    let form = prop_oneof![
        90 => Just(Form::Canonical),
        5 => Just(Form::Unpacked),
        4 => Just(Form::ValueFirst),
        1 => Just(Form::WrongKind),
    ];
    (
        prop::option::of(-99i64..99),
        prop::collection::vec(-9i64..9, 0..4),
        prop::collection::vec(-99i64..99, 0..4),
        form,
    )
        .prop_map(|(a, b, c, form)| {
            let int64s = |values: &[i64], packed: bool| {
                let mut list = Vec::new();
                if packed {
                    let mut block = Vec::new();
                    values.iter().for_each(|&v| put_varint(&mut block, v as u64));
                    put_field(&mut list, 0x0a, &block);
                } else {
                    for &v in values {
                        list.push(0x08);
                        put_varint(&mut list, v as u64);
                    }
                }
                let mut feature = Vec::new();
                put_field(&mut feature, 0x1a, &list);
                feature
            };
            let floats = |values: &[i64]| {
                let block: Vec<u8> = values.iter().flat_map(|&v| (v as f32 * 0.5).to_le_bytes()).collect();
                let mut list = Vec::new();
                put_field(&mut list, 0x0a, &block);
                let mut feature = Vec::new();
                put_field(&mut feature, 0x12, &list);
                feature
            };
            let mut entries = Vec::new();
            let mut entry = |key: &[u8], feature: Vec<u8>| {
                let mut e = Vec::new();
                put_field(&mut e, 0x0a, key);
                put_field(&mut e, 0x12, &feature);
                put_field(&mut entries, 0x0a, &e);
            };
            match (a, form) {
                (Some(a), Form::WrongKind) => entry(b"a", floats(&[a])),
                (Some(a), _) => entry(b"a", int64s(&[a], true)),
                (None, _) => {}
            }
            entry(b"b", floats(&b));
            entry(b"c", int64s(&c, !matches!(form, Form::Unpacked)));
            let mut record = Vec::new();
            put_field(&mut record, 0x0a, &entries);
            match form {
                Form::ValueFirst => value_first(&record),
                _ => record,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Batches of up to a few hundred Examples, some written in forms only the careful path
    /// reads, and now and then one with an error, at any place: the fast path takes records a
    /// chunk at a time and gives a chunk back to the record-by-record path when a record of it
    /// needs the careful one, and gives the careful path's tensors, error (the lowest failing
    /// example's) and keys seen.
    #[test]
    fn long_batches_read_the_same_with_and_without_the_fast_path(
        records in prop::collection::vec(long_batch_record(), 0..300),
        default_a in any::<bool>(),
    ) {
        let a = if default_a {
            json!({"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": 7})
        } else {
            json!({"type": "VarLenFeature", "dtype": "int64"})
        };
        let specs = specs_from_json_str(&json!({
            "a": a,
            "b": {"type": "VarLenFeature", "dtype": "float32"},
            "c": {"type": "VarLenFeature", "dtype": "int64"},
        }).to_string()).expect("spec");
        let fast = ExampleParser::new(&specs).expect("compiles");
        let careful = ExampleParser::new(&specs).expect("compiles").without_fast_path();
        prop_assert_eq!(result_json(fast.parse_batch(&records)), result_json(careful.parse_batch(&records)));
        // The error names the first record that fails alone (the two paths above share the
        // loop that counts the records).
        let first_bad = records.iter().position(|r| careful.parse_batch(std::slice::from_ref(r)).is_err());
        prop_assert_eq!(fast.parse_batch(&records).err().and_then(|e| e.example), first_bad);
        let seen = |r: Result<(TensorMap, tfrec::parse::KeysSeen), tfrec::parse::ParseError>| {
            r.map(|(t, seen)| (json_of(&t), ["a", "b", "c"].map(|k| seen.rows(k)))).map_err(|e| e.to_string())
        };
        prop_assert_eq!(seen(fast.parse_batch_seeing_keys(&records)), seen(careful.parse_batch_seeing_keys(&records)));
    }
}

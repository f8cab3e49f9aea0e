//! Property tests of the message layer: builder → encode → decode, text and friendly-JSON
//! round trips, the zero-copy view agreeing with the owned decoder, and no panic on any bytes.

use proptest::prelude::*;
use tfrec::example::{
    Example, ExampleView, Feature, FeatureList, Kind, SequenceExample, SequenceExampleView, TypeHints,
};

/// Floats whose text and JSON forms name them exactly (every NaN is printed as the same one).
fn float() -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => any::<f32>().prop_filter("NaN payloads do not survive text", |f| !f.is_nan()),
        1 => Just(f32::NAN),
        1 => prop_oneof![Just(f32::INFINITY), Just(f32::NEG_INFINITY), Just(-0.0f32), Just(f32::MIN_POSITIVE)],
    ]
}

fn feature() -> impl Strategy<Value = Feature> {
    prop_oneof![
        1 => Just(Feature::None),
        3 => prop::collection::vec(any::<i64>(), 0..6).prop_map(Feature::Int64),
        3 => prop::collection::vec(float(), 0..6).prop_map(Feature::Float),
        3 => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..12), 0..4).prop_map(Feature::Bytes),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![4 => "[a-z_]{1,8}", 1 => any::<String>()]
}

fn example() -> impl Strategy<Value = Example> {
    (any::<bool>(), prop::collection::vec((key(), feature()), 0..6)).prop_map(|(present, features)| {
        let mut ex = Example::default();
        if present || !features.is_empty() {
            let f = ex.features_mut();
            for (k, v) in features {
                f.insert(k, v);
            }
        }
        ex
    })
}

fn sequence_example() -> impl Strategy<Value = SequenceExample> {
    (
        example(),
        prop::option::of(prop::collection::vec(
            (key(), prop::collection::vec(feature(), 0..4)),
            0..4,
        )),
    )
        .prop_map(|(context, lists)| {
            let mut seq = SequenceExample {
                context: context.features,
                feature_lists: None,
            };
            if let Some(lists) = lists {
                let l = seq.feature_lists_mut();
                for (k, rows) in lists {
                    l.feature_list.insert(k, FeatureList { feature: rows });
                }
            }
            seq
        })
}

/// Each feature's kind, for reading the friendly form back exactly.
fn hints(ex: &Example) -> TypeHints {
    ex.features()
        .iter()
        .filter_map(|(k, f)| f.kind().map(|kind| (k.to_owned(), kind)))
        .collect()
}

fn view_features(bytes: &[u8]) -> Result<Vec<(Vec<u8>, Feature)>, String> {
    let mut out: Vec<(Vec<u8>, Feature)> = Vec::new();
    for entry in ExampleView::new(bytes).entries() {
        let (k, v) = entry.map_err(|e| e.to_string())?;
        let f = v.to_feature().map_err(|e| e.to_string())?;
        // Last entry wins, in the first entry's place, as the owned map does.
        match out.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = f,
            None => out.push((k.to_vec(), f)),
        }
    }
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn encode_decode_round_trips(ex in example()) {
        let bytes = ex.encode();
        prop_assert_eq!(bytes.len(), ex.encoded_len());
        let back = Example::decode(&bytes).expect("our own bytes decode");
        prop_assert_eq!(back.encode(), bytes);
    }

    #[test]
    fn sequence_encode_decode_round_trips(seq in sequence_example()) {
        let bytes = seq.encode();
        let back = SequenceExample::decode(&bytes).expect("our own bytes decode");
        prop_assert_eq!(back.encode(), bytes);
    }

    #[test]
    fn text_round_trips(ex in example(), seq in sequence_example()) {
        // Text sorts map keys, so compare after the parse of both sides' text.
        let back = Example::from_text(&ex.to_text()).expect("our own text parses");
        prop_assert_eq!(back.to_text(), ex.to_text());
        for (k, f) in ex.features().iter() {
            prop_assert_eq!(back.get(k).map(|b| format!("{b:?}")), Some(format!("{f:?}")));
        }
        let back = SequenceExample::from_text(&seq.to_text()).expect("our own text parses");
        prop_assert_eq!(back.to_text(), seq.to_text());
    }

    #[test]
    fn friendly_json_round_trips_with_hints(ex in example()) {
        let line = ex.to_friendly_json();
        let back = Example::from_friendly_json(&line, &hints(&ex)).expect("our own JSON parses");
        prop_assert_eq!(back.to_friendly_json(), line);
    }

    #[test]
    fn view_agrees_with_decoder(ex in example(), cut in any::<prop::sample::Index>(), flip in any::<Option<(prop::sample::Index, u8)>>()) {
        let mut bytes = ex.encode();
        if let Some((at, bits)) = flip {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] ^= bits;
            }
        }
        let len = if bytes.is_empty() { 0 } else { cut.index(bytes.len() + 1) };
        let bytes = &bytes[..len.max(if flip.is_some() { 0 } else { bytes.len() })];
        let owned = Example::decode(bytes);
        let viewed = view_features(bytes);
        match (&owned, &viewed) {
            (Ok(ex), Ok(v)) => {
                let owned: Vec<(Vec<u8>, Feature)> =
                    ex.features().iter().map(|(k, f)| (k.as_bytes().to_vec(), f.clone())).collect();
                prop_assert_eq!(format!("{owned:?}"), format!("{v:?}"));
            }
            // The owned decoder also insists on UTF-8 keys, which the view does not check.
            (Err(e), Ok(_)) => prop_assert_eq!(e.kind.clone(), tfrec::example::DecodeErrorKind::InvalidUtf8),
            (Ok(_), Err(e)) => prop_assert!(false, "view failed where the decoder did not: {}", e),
            (Err(_), Err(_)) => {}
        }
    }

    #[test]
    fn counts_agree_with_values(ex in example()) {
        let bytes = ex.encode();
        for entry in ExampleView::new(&bytes).entries() {
            let (_, v) = entry.expect("valid");
            let f = v.to_feature().expect("valid");
            prop_assert_eq!(v.count().expect("valid"), f.len());
            prop_assert_eq!(v.kind(), f.kind());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = Example::decode(&bytes);
        let _ = SequenceExample::decode(&bytes);
        let _ = view_features(&bytes);
        let seq = SequenceExampleView::new(&bytes);
        for (_, list) in seq.feature_lists().flatten() {
            for row in list.rows().flatten() {
                let _ = tfrec::example::FeatureView::from_feature_bytes(row.0, row.1).map(|v| v.count());
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>(), prefix in prop_oneof![Just(""), Just("features { feature { key: \"a\" value { ")]) {
        let text = format!("{prefix}{text}");
        let _ = Example::from_text(&text);
        let _ = SequenceExample::from_text(&text);
        let _ = Example::from_friendly_json(&text, &TypeHints::from([("a".to_owned(), Kind::Float)]));
    }
}

//! Any bytes as an Example and a SequenceExample: the owned decoder and the zero-copy views
//! must agree, never panic, and whatever decodes must re-encode to bytes that decode the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfrec::example::{Example, ExampleView, FeatureView, SequenceExample, SequenceExampleView};

fuzz_target!(|data: &[u8]| {
    let owned = Example::decode(data);
    let mut viewed = Vec::new();
    let mut view_ok = true;
    for entry in ExampleView::new(data).entries() {
        match entry.and_then(|(k, v)| Ok((k, v.count()?, v.to_feature()?))) {
            Ok((k, n, f)) => {
                assert_eq!(n, f.len());
                viewed.push((k, f));
            }
            Err(_) => view_ok = false,
        }
    }
    if let Ok(ex) = &owned {
        assert!(view_ok, "the view rejected what the decoder accepted");
        let again = Example::decode(&ex.encode()).expect("re-encoded bytes decode");
        assert_eq!(again.encode(), ex.encode());
    }
    if let Ok(seq) = SequenceExample::decode(data) {
        let again = SequenceExample::decode(&seq.encode()).expect("re-encoded bytes decode");
        assert_eq!(again.encode(), seq.encode());
    }
    for (_, list) in SequenceExampleView::new(data).feature_lists().flatten() {
        for (row, at) in list.rows().flatten() {
            let _ = FeatureView::from_feature_bytes(row, at).and_then(|v| v.to_feature());
        }
    }
});

//! Any text as a text-format Example / SequenceExample and as friendly JSON: errors, never
//! panics, and what parses renders to text that parses to the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfrec::example::{Example, SequenceExample, TypeHints};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(ex) = Example::from_text(text) {
        let again = Example::from_text(&ex.to_text()).expect("our own text parses");
        assert_eq!(again.to_text(), ex.to_text());
    }
    if let Ok(seq) = SequenceExample::from_text(text) {
        let again = SequenceExample::from_text(&seq.to_text()).expect("our own text parses");
        assert_eq!(again.to_text(), seq.to_text());
    }
    let _ = Example::from_friendly_json(text, &TypeHints::new());
    let _ = SequenceExample::from_friendly_json(text, &TypeHints::new());
});

//! Any bytes, read as each statistics input a user or a Ray worker hands over: an
//! accumulator's partial state, a binary `DatasetFeatureStatisticsList`, and (as text) the
//! statistics and schema text formats. Each must be refused or read, never panic or allocate
//! beyond what the input holds; a partial state that is read must finish, and write back to
//! bytes that read again to the same state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfrec::stats::{decode_statistics, schema_from_text, statistics_from_text, StatsAccumulator};

fuzz_target!(|data: &[u8]| {
    if let Ok(state) = StatsAccumulator::from_partial_bytes(data) {
        let _ = state.finish();
        let again = state.to_partial_bytes();
        let reread = StatsAccumulator::from_partial_bytes(&again).expect("a written state reads back");
        assert_eq!(reread.to_partial_bytes(), again, "a state writes back differently once read");
    }
    let _ = decode_statistics(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = statistics_from_text(text);
        let _ = schema_from_text(text);
    }
});

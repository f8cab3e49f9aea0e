//! Any bytes, read as a seek index file (`FILE.zidx`): the reader must refuse them or return an
//! index, never panic or allocate beyond what the input holds, and an index it accepts must
//! write back to the same bytes (the format has one spelling).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfrec::record::SeekIndex;

fuzz_target!(|data: &[u8]| {
    if let Ok(index) = SeekIndex::from_bytes(data) {
        assert!(index.checkpoints().len() <= data.len() / 40, "more checkpoints than bytes hold");
        assert_eq!(index.to_bytes(), data, "an accepted index writes back differently");
    }
});

//! Any bytes, read as a TFRecord stream in every compression and corruption policy: the reader
//! must return records or errors, never panic, hang or allocate beyond what the input holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfrec::record::{Compression, CompressionChoice, OnCorruption, ReaderOptions, RecordReader, TornTail};

fuzz_target!(|data: &[u8]| {
    for compression in [
        CompressionChoice::Auto,
        CompressionChoice::Exactly(Compression::Gzip),
        CompressionChoice::Exactly(Compression::Zlib),
    ] {
        for policy in [OnCorruption::Fail, OnCorruption::Resync, OnCorruption::SkipFile] {
            let options = ReaderOptions::default()
                .compression(compression)
                .on_corruption(policy)
                .torn_tail(TornTail::Skip)
                .max_record_len(u64::MAX)
                .buffer_size(64 << 10);
            let Ok(mut reader) = RecordReader::from_stream(data, options) else { continue };
            while let Ok(Some(record)) = reader.next_record() {
                assert!(record.len() <= data.len() * 1032 + 1024, "a record larger than the input can hold");
            }
        }
    }
});

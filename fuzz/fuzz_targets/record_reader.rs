//! Any bytes, read as a TFRecord stream in every compression and corruption policy: the reader
//! must return records or errors, never panic, hang or allocate beyond what the input holds.
//! Under resynchronisation every record returned must be intact where it lies (both CRCs hold
//! in the decompressed bytes), and a plain stream must give exactly what a rescan from every
//! byte offset finds. The first byte picks a window size, so large-record, put-back and
//! rescanning paths are all reached with small inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfrec::record::format::masked_crc32c;
use tfrec::record::{Compression, CompressionChoice, OnCorruption, ReaderOptions, RecordReader, TornTail};

/// The records a rescan from every offset finds in plain bytes (the reader's contract).
fn rescan(bytes: &[u8]) -> Vec<&[u8]> {
    let mut found = Vec::new();
    let mut at = 0;
    while at + 16 <= bytes.len() {
        let header = &bytes[at..at + 12];
        let len = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
        let crc = u32::from_le_bytes(header[8..].try_into().expect("4 bytes"));
        let fits = len <= (bytes.len() - at - 16) as u64;
        if fits && masked_crc32c(&header[..8]) == crc {
            let data = &bytes[at + 12..at + 12 + len as usize];
            let footer = &bytes[at + 12 + len as usize..at + 16 + len as usize];
            if masked_crc32c(data).to_le_bytes() == footer {
                found.push(data);
                at += 16 + len as usize;
                continue;
            }
        }
        at += 1;
    }
    found
}

fuzz_target!(|input: &[u8]| {
    let Some((&knob, data)) = input.split_first() else { return };
    let buffer_size = if knob & 1 == 0 { 64 << 10 } else { 1 << 20 };
    for compression in [
        CompressionChoice::Auto,
        CompressionChoice::Exactly(Compression::None),
        CompressionChoice::Exactly(Compression::Gzip),
        CompressionChoice::Exactly(Compression::Zlib),
    ] {
        for policy in [OnCorruption::Fail, OnCorruption::Resync, OnCorruption::SkipFile] {
            let torn_tail = if knob & 2 == 0 { TornTail::Skip } else { TornTail::Error };
            let options = ReaderOptions::default()
                .compression(compression)
                .on_corruption(policy)
                .torn_tail(torn_tail)
                .max_record_len(u64::MAX)
                .buffer_size(buffer_size);
            let Ok(mut reader) = RecordReader::from_stream(data, options) else { continue };
            let plain = reader.compression() == Compression::None;
            let mut got: Vec<Vec<u8>> = Vec::new();
            loop {
                match reader.next_record() {
                    Ok(Some(record)) => {
                        assert!(record.len() <= data.len() * 1032 + 1024, "a record larger than the input can hold");
                        got.push(record.to_vec());
                    }
                    Ok(None) => break,
                    Err(error) => {
                        assert!(policy != OnCorruption::Resync, "resync failed: {error}");
                        break;
                    }
                }
            }
            if plain && policy == OnCorruption::Resync {
                let expected = rescan(data);
                assert!(got.iter().map(Vec::as_slice).eq(expected), "resync differs from a rescan");
            }
        }
    }
});

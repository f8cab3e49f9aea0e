//! Property tests of the TFRecord layer: round trips, and damage is always detected.

use proptest::prelude::*;
use tfrec::record::{Compression, CompressionChoice, ReaderOptions, RecordReader, RecordWriter, WriterOptions};

fn write(payloads: &[Vec<u8>], compression: Compression) -> Vec<u8> {
    let mut writer = RecordWriter::with_options(Vec::new(), WriterOptions::default().compression(compression));
    for p in payloads {
        writer.write_record(p).expect("write to a Vec");
    }
    writer.finish().expect("finish a Vec")
}

/// Reads everything; `Err` as soon as the reader reports a problem.
fn read(bytes: &[u8], compression: Compression, buffer_size: usize) -> Result<Vec<Vec<u8>>, String> {
    let options = ReaderOptions::default()
        .compression(CompressionChoice::Exactly(compression))
        .buffer_size(buffer_size);
    let reader = RecordReader::from_stream(bytes, options).map_err(|e| e.to_string())?;
    reader.records().map(|r| r.map_err(|e| e.to_string())).collect()
}

fn payloads() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop_oneof![
            3 => prop::collection::vec(any::<u8>(), 0..64),
            1 => prop::collection::vec(any::<u8>(), 0..3000),
            // Larger than the smallest window, to take the large-record path.
            1 => (70_000usize..140_000).prop_map(|n| (0..n).map(|i| (i * 31 % 251) as u8).collect()),
        ],
        0..12,
    )
}

fn compressions() -> impl Strategy<Value = Compression> {
    prop_oneof![
        Just(Compression::None),
        Just(Compression::Gzip),
        Just(Compression::Zlib)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_payloads_round_trip(payloads in payloads(), compression in compressions(), small_window in any::<bool>()) {
        let bytes = write(&payloads, compression);
        let window = if small_window { 64 << 10 } else { 1 << 20 };
        prop_assert_eq!(read(&bytes, compression, window), Ok(payloads));
    }

    #[test]
    fn a_flipped_bit_in_a_plain_file_is_always_detected(
        payloads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 1..8),
        position in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let mut bytes = write(&payloads, Compression::None);
        let at = position.index(bytes.len());
        bytes[at] ^= 1 << bit;
        let result = read(&bytes, Compression::None, 64 << 10);
        prop_assert!(result.is_err(), "flip at byte {} bit {} went unnoticed: {:?}", at, bit, result);
    }

    #[test]
    fn a_flipped_bit_in_a_compressed_file_never_gives_wrong_data(
        payloads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 1..8),
        compression in prop_oneof![Just(Compression::Gzip), Just(Compression::Zlib)],
        position in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let mut bytes = write(&payloads, compression);
        let at = position.index(bytes.len());
        bytes[at] ^= 1 << bit;
        // Some gzip header bytes (MTIME, XFL, OS) are covered by no checksum; flipping them
        // leaves the data intact. Anything else must be an error.
        if let Ok(read_back) = read(&bytes, compression, 64 << 10) {
            prop_assert_eq!(read_back, payloads, "flip at byte {} bit {}", at, bit);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512), compression in compressions()) {
        let _ = read(&bytes, compression, 64 << 10);
        let options = ReaderOptions::default().on_corruption(tfrec::record::OnCorruption::Resync);
        if let Ok(reader) = RecordReader::from_stream(bytes.as_slice(), options) {
            for record in reader.records() {
                let _ = record;
            }
        }
    }
}

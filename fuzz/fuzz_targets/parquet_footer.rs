//! Any bytes, read as a Parquet file whose row count `convert` checks before it commits its
//! output (`columnar::parquet_rows`): the footer's Thrift must be refused or read, never panic,
//! and its length never makes an allocation larger than the file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tfrec::columnar::parquet_rows(&mut std::io::Cursor::new(data));
});

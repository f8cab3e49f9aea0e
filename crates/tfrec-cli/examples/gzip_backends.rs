//! Deflate speed of flate2's zlib-rs backend (what tfrec uses) against miniz_oxide (flate2's
//! default backend), on the same TFRecord bytes in the same run, at TensorFlow's level 6:
//! `cargo run -p tfrec-cli --example gzip_backends` (dependencies are optimised in every
//! profile).

// A measurement printed to a terminal, not a command whose stdout may be a closed pipe.
#![allow(clippy::disallowed_macros)]

use std::io::{Read, Write};
use std::time::Instant;

use tfrec::example::Example;
use tfrec::record::RecordWriter;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let animals = ["cat", "dog", "chicken", "horse", "goat"];
    let mut writer = RecordWriter::new(Vec::new());
    for i in 0..300_000i64 {
        let example = Example::builder()
            .int64("feature0", i % 2)
            .int64("feature1", i % 5)
            .bytes("feature2", animals[(i % 5) as usize])
            .float("feature3", [(i as f32 * 0.618).sin()])
            .build()?;
        writer.write_record(&example.encode())?;
    }
    let data = writer.finish()?;
    let mb = data.len() as f64 / 1e6;
    let time = |f: &mut dyn FnMut() -> usize| {
        let start = Instant::now();
        let n = f();
        (start.elapsed().as_secs_f64(), n)
    };

    let (zlib_rs_c, packed_len) = time(&mut || {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(&data).ok();
        e.finish().map(|v| v.len()).unwrap_or(0)
    });
    let (miniz_c, _) = time(&mut || miniz_oxide::deflate::compress_to_vec(&data, 6).len());
    let packed = miniz_oxide::deflate::compress_to_vec(&data, 6);
    let (zlib_rs_d, a) = time(&mut || {
        let mut out = Vec::new();
        flate2::bufread::DeflateDecoder::new(packed.as_slice())
            .read_to_end(&mut out)
            .ok();
        out.len()
    });
    let (miniz_d, b) = time(&mut || {
        miniz_oxide::inflate::decompress_to_vec(&packed)
            .map(|v| v.len())
            .unwrap_or(0)
    });
    assert_eq!((a, b), (data.len(), data.len()));
    println!("{mb:.1} MB of records, {packed_len} bytes deflated");
    println!(
        "compress:   zlib-rs {:.0} MB/s, miniz_oxide {:.0} MB/s: {:.2}x",
        mb / zlib_rs_c,
        mb / miniz_c,
        miniz_c / zlib_rs_c
    );
    println!(
        "decompress: zlib-rs {:.0} MB/s, miniz_oxide {:.0} MB/s: {:.2}x",
        mb / zlib_rs_d,
        mb / miniz_d,
        miniz_d / zlib_rs_d
    );
    Ok(())
}

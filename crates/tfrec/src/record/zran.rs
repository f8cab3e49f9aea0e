//! A raw deflate inflater that stops at block boundaries and resumes from one: the two things
//! the zran method (zlib's `examples/zran.c`) needs and flate2 does not expose. It wraps
//! zlib-rs's C-shaped API (`libz-rs-sys`): `inflate` with `Z_BLOCK` and the `data_type` it sets
//! tell where a block ends and how many bits of the last byte read belong to the next one;
//! `inflatePrime` feeds those bits back and `inflateSetDictionary` the 32 KiB window, so that
//! inflating can start at that boundary in another process.
//!
//! Every `unsafe` call is here, each with why it is sound; the rest of the crate sees safe
//! methods taking slices.

use libz_rs_sys::{
    adler32, inflate, inflateEnd, inflateInit2_, inflatePrime, inflateReset, inflateSetDictionary, uInt, z_stream,
    zlibVersion, Z_BLOCK, Z_BUF_ERROR, Z_NEED_DICT, Z_NO_FLUSH, Z_OK, Z_STREAM_END,
};

/// The deflate window: how far back a match may reach, so what must be restored to resume.
pub(crate) const WINDOW_LEN: usize = 32 << 10;

/// `data_type` bit: `inflate` stopped at the end of a block (before the next one's header).
const AT_BLOCK_BOUNDARY: i32 = 128;
/// `data_type` bit: the block just ended was the stream's last.
const LAST_BLOCK: i32 = 64;

/// How an [`RawInflater::inflate`] call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Input used up or output full; call again.
    More,
    /// At the end of a block that is not the last (only when asked to stop there). The next
    /// block starts `unused_bits` bits before the end of the input consumed so far: those are
    /// the high bits of the last byte read.
    BlockBoundary { unused_bits: u8 },
    /// The deflate stream ended (its last block is done).
    StreamEnd,
}

/// What one call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// Input bytes consumed.
    pub(crate) consumed: usize,
    /// Output bytes written.
    pub(crate) produced: usize,
    pub(crate) stop: Stop,
}

/// A raw (headerless) deflate decoder with a 32 KiB window.
pub(crate) struct RawInflater {
    /// Boxed so that its address never changes between calls; initialised by `inflateInit2_`
    /// in [`RawInflater::new`] and ended by `inflateEnd` in `Drop`, and nothing else frees it.
    stream: Box<z_stream>,
}

// SAFETY: the stream owns its state (allocated through Rust's allocator, no thread-local
// data); the raw pointers in `z_stream` point only into that state or, during a call to
// `inflate`, into slices borrowed for that call.
unsafe impl Send for RawInflater {}

impl RawInflater {
    /// A decoder of raw deflate data.
    pub(crate) fn new() -> Result<Self, String> {
        let mut stream = Box::<z_stream>::default();
        // SAFETY: `stream` is a valid, exclusively borrowed z_stream whose allocator fields
        // `Default` set; the version is libz-rs-sys's own NUL-terminated string and the size
        // that of the struct it defines, so the version check passes.
        let ret = unsafe { inflateInit2_(&mut *stream, -15, zlibVersion(), std::mem::size_of::<z_stream>() as i32) };
        if ret != Z_OK {
            return Err(format!("the inflater could not start (zlib code {ret})"));
        }
        Ok(RawInflater { stream })
    }

    /// Forgets all state, ready for a new raw stream (a new GZIP member).
    pub(crate) fn reset(&mut self) {
        // SAFETY: the stream was initialised in `new` and is not ended until `drop`.
        unsafe { inflateReset(&mut *self.stream) };
    }

    /// Restarts at a block boundary: the `bits` high bits of `last_byte` come first, then the
    /// input of the next call; `window` is the output that preceded the boundary (its last
    /// 32 KiB), which later matches may reach into.
    pub(crate) fn resume(&mut self, bits: u8, last_byte: u8, window: &[u8]) -> Result<(), String> {
        self.reset();
        if bits > 0 {
            let value = i32::from(last_byte >> (8 - bits.min(8)));
            // SAFETY: initialised stream; `bits` is at most 7, within inflatePrime's 16.
            let ret = unsafe { inflatePrime(&mut *self.stream, i32::from(bits.min(7)), value) };
            if ret != Z_OK {
                return Err(format!("could not restore the bit position (zlib code {ret})"));
            }
        }
        if !window.is_empty() {
            let window = &window[window.len().saturating_sub(WINDOW_LEN)..];
            // SAFETY: initialised raw stream (a raw inflater takes a dictionary at any time);
            // the pointer and length are those of a live slice of at most 32 KiB, which the
            // call copies into the stream's own window before returning.
            let ret = unsafe { inflateSetDictionary(&mut *self.stream, window.as_ptr(), window.len() as uInt) };
            if ret != Z_OK {
                return Err(format!("could not restore the window (zlib code {ret})"));
            }
        }
        Ok(())
    }

    /// Decodes from `input` into `output`; with `stop_at_blocks`, returns at each block
    /// boundary. Errors carry zlib's message.
    pub(crate) fn inflate(&mut self, input: &[u8], output: &mut [u8], stop_at_blocks: bool) -> Result<Step, String> {
        let avail_in = input.len().min(uInt::MAX as usize);
        let avail_out = output.len().min(uInt::MAX as usize);
        self.stream.next_in = input.as_ptr();
        self.stream.avail_in = avail_in as uInt;
        self.stream.next_out = output.as_mut_ptr();
        self.stream.avail_out = avail_out as uInt;
        let flush = if stop_at_blocks { Z_BLOCK } else { Z_NO_FLUSH };
        // SAFETY: initialised stream; `next_in`/`avail_in` describe the live slice `input`
        // and `next_out`/`avail_out` the live, exclusively borrowed `output`, both valid for
        // the whole call; the pointers are cleared again before the borrows end.
        let ret = unsafe { inflate(&mut *self.stream, flush) };
        let consumed = avail_in - self.stream.avail_in as usize;
        let produced = avail_out - self.stream.avail_out as usize;
        let message = self.message();
        self.stream.next_in = std::ptr::null();
        self.stream.avail_in = 0;
        self.stream.next_out = std::ptr::null_mut();
        self.stream.avail_out = 0;
        let data_type = self.stream.data_type;
        let stop = match ret {
            Z_STREAM_END => Stop::StreamEnd,
            Z_OK | Z_BUF_ERROR
                if stop_at_blocks && data_type & AT_BLOCK_BOUNDARY != 0 && data_type & LAST_BLOCK == 0 =>
            {
                Stop::BlockBoundary {
                    unused_bits: (data_type & 7) as u8,
                }
            }
            Z_OK | Z_BUF_ERROR => Stop::More,
            Z_NEED_DICT => return Err("the stream needs a preset dictionary".to_owned()),
            code => {
                return Err(message.unwrap_or_else(|| format!("invalid deflate data (zlib code {code})")));
            }
        };
        Ok(Step {
            consumed,
            produced,
            stop,
        })
    }

    fn message(&self) -> Option<String> {
        if self.stream.msg.is_null() {
            return None;
        }
        // SAFETY: a non-null `msg` points to one of zlib-rs's static NUL-terminated messages.
        let text = unsafe { std::ffi::CStr::from_ptr(self.stream.msg) };
        Some(text.to_string_lossy().into_owned())
    }
}

impl Drop for RawInflater {
    fn drop(&mut self) {
        // SAFETY: the stream was initialised in `new` and is ended only here.
        unsafe { inflateEnd(&mut *self.stream) };
    }
}

/// The Adler-32 of `data` continued from `adler` (1 for a new stream): ZLIB's trailer.
pub(crate) fn adler32_update(mut adler: u32, data: &[u8]) -> u32 {
    for chunk in data.chunks(1 << 30) {
        // SAFETY: the pointer and length are those of a live slice, read only during the call.
        adler = unsafe { adler32(u64::from(adler) as _, chunk.as_ptr(), chunk.len() as uInt) } as u32;
    }
    adler
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::DeflateEncoder;
    use std::io::Write;

    fn deflated(data: &[u8]) -> Vec<u8> {
        let mut e = DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).expect("memory");
        e.finish().expect("memory")
    }

    fn sample() -> Vec<u8> {
        let mut state = 1u64;
        (0..600_000)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if i % 7 == 0 {
                    (state >> 59) as u8
                } else {
                    b"abcdefgh"[(i / 13) % 8]
                }
            })
            .collect()
    }

    /// Inflates the whole stream, returning the output and every block boundary as
    /// (input consumed, unused bits, output so far).
    fn boundaries(compressed: &[u8]) -> (Vec<u8>, Vec<(usize, u8, usize)>) {
        let mut inf = RawInflater::new().expect("init");
        let (mut at, mut out, mut buf) = (0, Vec::new(), vec![0u8; 1 << 16]);
        let mut found = Vec::new();
        loop {
            let step = inf.inflate(&compressed[at..], &mut buf, true).expect("inflate");
            at += step.consumed;
            out.extend_from_slice(&buf[..step.produced]);
            match step.stop {
                Stop::StreamEnd => return (out, found),
                Stop::BlockBoundary { unused_bits } => found.push((at, unused_bits, out.len())),
                Stop::More => {}
            }
        }
    }

    #[test]
    fn resumes_at_every_block_boundary() {
        let data = sample();
        let compressed = deflated(&data);
        let (out, found) = boundaries(&compressed);
        assert_eq!(out, data);
        assert!(found.len() > 3, "several blocks: {found:?}");
        assert!(found.iter().any(|&(_, bits, _)| bits != 0), "some boundary is mid-byte");
        for &(at, bits, produced) in &found {
            let mut inf = RawInflater::new().expect("init");
            let last = if bits > 0 { compressed[at - 1] } else { 0 };
            inf.resume(bits, last, &data[..produced]).expect("resume");
            let mut rest = vec![0u8; data.len() - produced + 10];
            let (mut at, mut written) = (at, 0);
            loop {
                let step = inf
                    .inflate(&compressed[at..], &mut rest[written..], false)
                    .expect("inflate");
                at += step.consumed;
                written += step.produced;
                if step.stop == Stop::StreamEnd {
                    break;
                }
            }
            assert_eq!(&rest[..written], &data[produced..], "resumed at byte {at} bit {bits}");
        }
    }

    #[test]
    fn a_wrong_window_or_bit_count_does_not_give_the_data() {
        let data = sample();
        let compressed = deflated(&data);
        let (_, found) = boundaries(&compressed);
        let &(at, bits, produced) = found.iter().find(|b| b.2 > WINDOW_LEN).expect("a late boundary");
        let mut inf = RawInflater::new().expect("init");
        inf.resume((bits + 1) % 8, compressed[at - 1], &data[..produced])
            .expect("resume");
        let mut rest = vec![0u8; 1 << 16];
        let got = inf.inflate(&compressed[at..], &mut rest, false);
        assert!(got.map_or(true, |s| rest[..s.produced] != data[produced..produced + s.produced]));
        assert_eq!(adler32_update(1, b"Wikipedia"), 0x11E6_0398);
    }
}

//! The TFRecord framing, written down once next to the constants that encode it.
//!
//! Every record in the (decompressed) stream is laid out as, all integers little-endian:
//!
//! ```text
//! u64 length | u32 masked_crc32c(length's 8 bytes) | data[length] | u32 masked_crc32c(data)
//! ```
//!
//! CRC-32C is the Castagnoli CRC (reflected polynomial 0x82F63B78); TensorFlow stores it
//! "masked" so that a CRC of data that itself contains CRCs does not degenerate. Source:
//! TensorFlow's `core/lib/io/record_writer.cc` and `tsl/lib/hash/crc32c.h`.

/// Bytes before the data: the length and its masked CRC.
pub const HEADER_LEN: usize = 12;
/// Bytes after the data: the data's masked CRC.
pub const FOOTER_LEN: usize = 4;
/// Bytes a record adds around its data.
pub const FRAMING_LEN: usize = HEADER_LEN + FOOTER_LEN;

const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC the way TensorFlow stores it: `((c >> 15) | (c << 17)) + 0xa282ead8`.
#[inline]
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask_crc`].
#[inline]
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// The masked CRC-32C of `bytes`, as stored in a record.
#[inline]
pub fn masked_crc32c(bytes: &[u8]) -> u32 {
    mask_crc(crc32c(bytes))
}

/// Below this many bytes the `crc32c` crate runs one chain of CRC instructions, as
/// [`short_crc32c`] does; from here it runs three interleaved chains, which pay.
const SHORT_CRC: usize = 768;

/// From this many bytes, on a CPU that folds 64 bytes at a time with carry-less
/// multiplication (AVX-512 VPCLMULQDQ), a CRC goes to `crc-fast`: faster than the `crc32c`
/// crate and than [`short_crc32c`] above a few hundred bytes, slower below (the figures are in
/// the guide's performance page), so the switch sits a margin above where it starts to pay.
/// Its other paths (PCLMULQDQ with SSE, ARMv8) were not measured here, so CPUs without the
/// wide folding keep the crate.
const FOLDED_CRC: usize = 512;

/// CRC-32C of `bytes`. A short input (every header's length, and each record of a narrow
/// Example) goes on x86-64 through [`short_crc32c`]: the `crc32c` crate steps byte by byte
/// up to the first 8-byte-aligned address and after the last, each step waiting on the one
/// before, and on records of about 100 bytes that was a sixth of a whole parse.
///
/// `inline(always)`, as [`Header::decode`]: both run for every record, and the record source's
/// loop (`pipeline::source`) grew past where the compiler still inlined a plain `#[inline]`
/// into it; called out of line they cost `tfrec parse` of a narrow file measurably more
/// (python/bench/bench_before_after.py).
#[inline(always)]
fn crc32c(bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected;
        if bytes.len() >= FOLDED_CRC && is_x86_feature_detected!("avx512vl") && is_x86_feature_detected!("vpclmulqdq") {
            // The algorithm's CRC is 32 bits wide; the crate returns every width as a u64.
            return crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, bytes) as u32;
        }
        if bytes.len() < SHORT_CRC && is_x86_feature_detected!("sse4.2") {
            // SAFETY: `short_crc32c` needs SSE4.2 and nothing else, and the CPU was just
            // found to have it.
            return unsafe { short_crc32c(bytes) };
        }
    }
    crc32c::crc32c(bytes)
}

/// CRC-32C of `bytes` in unaligned 8-byte steps (x86-64 loads need no alignment), then at
/// most one 4-, one 2- and one 1-byte step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn short_crc32c(bytes: &[u8]) -> u32 {
    !short_crc32c_from(u32::MAX, bytes)
}

/// [`short_crc32c`]'s steps from the running (not yet inverted) CRC `crc`; the running CRC
/// after `bytes`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn short_crc32c_from(crc: u32, bytes: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64, _mm_crc32_u8};
    let (words, rest) = bytes.as_chunks::<8>();
    let mut crc = u64::from(crc);
    for word in words {
        crc = _mm_crc32_u64(crc, u64::from_le_bytes(*word));
    }
    // The 64-bit instruction leaves the upper half zero.
    let mut crc = crc as u32;
    let (quad, rest) = rest.as_chunks::<4>();
    if let [quad] = quad {
        crc = _mm_crc32_u32(crc, u32::from_le_bytes(*quad));
    }
    let (pair, rest) = rest.as_chunks::<2>();
    if let [pair] = pair {
        crc = _mm_crc32_u16(crc, u16::from_le_bytes(*pair));
    }
    if let [byte] = rest {
        crc = _mm_crc32_u8(crc, *byte);
    }
    crc
}

/// How many records' CRCs [`masked_crc32c_each`] computes side by side. The CRC instruction
/// takes three cycles but can start one every cycle, so a single chain (one short record)
/// leaves two thirds of it idle; four chains keep it busy with a step to spare.
pub(crate) const CRC_LANES: usize = 4;

/// The masked CRC-32C of each of `records`, as [`masked_crc32c`] gives them one at a time.
/// When all are short (a narrow Example's records, of about 100 bytes), their 8-byte steps
/// run interleaved, one chain a record, which is where reading small records spent its time
/// after inflating.
#[inline]
pub(crate) fn masked_crc32c_each(records: [&[u8]; CRC_LANES]) -> [u32; CRC_LANES] {
    #[cfg(target_arch = "x86_64")]
    if records.iter().all(|r| r.len() < SHORT_CRC) && std::arch::is_x86_feature_detected!("sse4.2") {
        // SAFETY: `interleaved_short_crc32c` needs SSE4.2 and nothing else, and the CPU was
        // just found to have it.
        return unsafe { interleaved_short_crc32c(records) }.map(mask_crc);
    }
    records.map(masked_crc32c)
}

/// CRC-32C of each of four inputs: the 8-byte steps they all have run as four interleaved
/// chains, then each input's rest as [`short_crc32c`] would.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn interleaved_short_crc32c([a, b, c, d]: [&[u8]; CRC_LANES]) -> [u32; CRC_LANES] {
    use std::arch::x86_64::_mm_crc32_u64;
    let common = a.len().min(b.len()).min(c.len()).min(d.len()) / 8;
    fn words(bytes: &[u8], n: usize) -> impl Iterator<Item = u64> + '_ {
        bytes[..n * 8].as_chunks::<8>().0.iter().map(|w| u64::from_le_bytes(*w))
    }
    let mut crcs = [u64::from(u32::MAX); CRC_LANES];
    for (((wa, wb), wc), wd) in words(a, common)
        .zip(words(b, common))
        .zip(words(c, common))
        .zip(words(d, common))
    {
        crcs[0] = _mm_crc32_u64(crcs[0], wa);
        crcs[1] = _mm_crc32_u64(crcs[1], wb);
        crcs[2] = _mm_crc32_u64(crcs[2], wc);
        crcs[3] = _mm_crc32_u64(crcs[3], wd);
    }
    let mut out = [0; CRC_LANES];
    for ((out, crc), bytes) in out.iter_mut().zip(crcs).zip([a, b, c, d]) {
        // The 64-bit instruction leaves the upper half zero.
        *out = !short_crc32c_from(crc as u32, &bytes[common * 8..]);
    }
    out
}

/// The masked CRC-32C of a length field's 8 bytes (little-endian `len`): one CRC instruction
/// where the CPU has it, since every record's header needs one.
#[inline]
fn masked_length_crc(len: u64) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sse4.2") {
        // SAFETY: `length_crc32c` needs SSE4.2 and nothing else, and the CPU was just found
        // to have it.
        return mask_crc(unsafe { length_crc32c(len) });
    }
    masked_crc32c(&len.to_le_bytes())
}

/// CRC-32C of the 8 bytes of `len` in little-endian order: the instruction reads its operand
/// as those bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn length_crc32c(len: u64) -> u32 {
    // The 64-bit instruction leaves the upper half zero.
    !(std::arch::x86_64::_mm_crc32_u64(u64::from(u32::MAX), len) as u32)
}

/// Encodes the 12-byte header of a record of `len` data bytes.
#[inline]
pub fn encode_header(len: u64) -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(&len.to_le_bytes());
    let crc = masked_crc32c(&header[..8]);
    header[8..].copy_from_slice(&crc.to_le_bytes());
    header
}

/// What a 12-byte header says, before anything is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The data length the header claims.
    pub len: u64,
    /// The masked CRC stored after the length.
    pub stored_crc: u32,
    /// The masked CRC computed over the 8 length bytes.
    pub actual_crc: u32,
}

impl Header {
    /// Splits a header into its fields and computes the CRC of the length bytes.
    /// (`inline(always)`: see [`crc32c`].)
    #[inline(always)]
    pub fn decode(bytes: &[u8; HEADER_LEN]) -> Header {
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&bytes[..8]);
        let mut crc_bytes = [0u8; 4];
        crc_bytes.copy_from_slice(&bytes[8..]);
        let len = u64::from_le_bytes(len_bytes);
        Header {
            len,
            stored_crc: u32::from_le_bytes(crc_bytes),
            actual_crc: masked_length_crc(len),
        }
    }

    /// Whether the length's CRC matches, i.e. the length can be trusted.
    #[inline]
    pub fn is_valid(&self) -> bool {
        self.stored_crc == self.actual_crc
    }
}

/// Reads the little-endian u32 footer.
#[inline]
pub fn decode_footer(bytes: &[u8; FOOTER_LEN]) -> u32 {
    u32::from_le_bytes(*bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crcs_side_by_side_match_one_at_a_time() {
        let bytes: Vec<u8> = (0..2100u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        // Every mix of lengths around the 8-byte steps, short and long.
        for lens in [
            [0, 1, 2, 3],
            [7, 8, 9, 15],
            [100, 13, 64, 71],
            [767, 768, 5, 1999],
            [0, 0, 0, 0],
        ] {
            let records = [0, 1, 2, 3].map(|k| &bytes[k * 3..k * 3 + lens[k]]);
            assert_eq!(masked_crc32c_each(records), records.map(masked_crc32c), "{lens:?}");
        }
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn inputs_agree_with_the_crc32c_crate_at_every_length_and_alignment() {
        let bytes: Vec<u8> = (0..70_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        // Every length about the switches (to `crc-fast`, to the crate's three chains) and
        // through `crc-fast`'s first blocks (64 bytes and their remainders), then a few long
        // ones, each from 8 alignments.
        let lengths = (0..=3 * SHORT_CRC).chain([8191, 8192, 8193, 65_535, 65_536, 69_990]);
        for len in lengths {
            for start in 0..8 {
                let part = &bytes[start..start + len];
                assert_eq!(crc32c(part), crc32c::crc32c(part), "start {start}, len {len}");
            }
        }
    }

    #[test]
    fn the_length_crc_is_the_crc_of_its_eight_bytes() {
        let mut len = 0x9E37_79B9_7F4A_7C15_u64;
        let edges = [0, 1, 283, u32::MAX as u64, u64::MAX, 1 << 63];
        for value in edges.into_iter().chain((0..1000).map(|_| {
            len = len.rotate_left(7).wrapping_mul(0x2545_F491_4F6C_DD1D);
            len
        })) {
            assert_eq!(
                masked_length_crc(value),
                masked_crc32c(&value.to_le_bytes()),
                "{value:#x}"
            );
        }
    }

    #[test]
    fn mask_round_trips() {
        for crc in [0u32, 1, 0xdead_beef, u32::MAX, 0xE306_9283] {
            assert_eq!(unmask_crc(mask_crc(crc)), crc);
        }
    }

    #[test]
    fn spec_test_vectors() {
        // TF_SEMANTICS.md §4: "" and "hello" framed.
        let empty = encode_header(0);
        let mut framed = empty.to_vec();
        framed.extend_from_slice(&masked_crc32c(b"").to_le_bytes());
        assert_eq!(hex(&framed), "000000000000000029039807d8ea82a2");

        let mut framed = encode_header(5).to_vec();
        framed.extend_from_slice(b"hello");
        framed.extend_from_slice(&masked_crc32c(b"hello").to_le_bytes());
        assert_eq!(hex(&framed), "0500000000000000eab2043e68656c6c6fbb1f1c19");
    }

    #[test]
    fn header_decode_checks_crc() {
        let mut header = encode_header(283);
        assert!(Header::decode(&header).is_valid());
        assert_eq!(Header::decode(&header).len, 283);
        header[0] ^= 1;
        assert!(!Header::decode(&header).is_valid());
    }
}

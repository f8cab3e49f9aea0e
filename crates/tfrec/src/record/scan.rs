//! The resynchronisation scan: finding the next offset where a plausible record header starts,
//! fast enough to cross gigabytes of garbage.
//!
//! A header is plausible when its length is within bounds (the configured limit, and what is
//! left of a stream of known size) and the length's masked CRC-32C matches. The bound rejects
//! almost every offset of random bytes with one load and compare; runs that pass it (zeros
//! claim length 0) need the CRC of 8 bytes at every offset, computed here with
//! slicing-by-8 tables: four table loads for any length below 4 GiB, with no call or dispatch. The `records` benchmark
//! ("resync scan") compares it with calling the `crc32c` crate at each offset.

use super::format::{mask_crc, FRAMING_LEN, HEADER_LEN};

/// CRC-32C (reflected polynomial 0x82F63B78) tables for slicing-by-8: `TABLES[0]` is the
/// byte-at-a-time table, `TABLES[k][b]` the CRC of byte `b` followed by `k` zero bytes.
static TABLES: [[u32; 256]; 8] = make_tables();

const fn make_tables() -> [[u32; 256]; 8] {
    let mut tables = [[0u32; 256]; 8];
    let mut b = 0;
    while b < 256 {
        let mut crc = b as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][b] = crc;
        b += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut b = 0;
        while b < 256 {
            let prev = tables[k - 1][b];
            tables[k][b] = (prev >> 8) ^ tables[0][(prev & 0xff) as usize];
            b += 1;
        }
        k += 1;
    }
    tables
}

/// The masked CRC-32C of exactly 8 bytes, as a record header stores it for its length.
#[cfg(test)]
fn masked_crc_of_length(bytes: &[u8; 8]) -> u32 {
    let lo = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let hi = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    masked_crc_of_halves(lo, hi)
}

/// [`masked_crc_of_length`] of the length `hi << 32 | lo`. Any length below 4 GiB has
/// `hi == 0`, whose four table entries are all 0 (`TABLES[k][0] == 0`), so it takes four loads.
#[inline]
fn masked_crc_of_halves(lo: u32, hi: u32) -> u32 {
    let t = &TABLES;
    let lo = lo ^ 0xFFFF_FFFF;
    let mut crc = t[7][(lo & 0xff) as usize]
        ^ t[6][((lo >> 8) & 0xff) as usize]
        ^ t[5][((lo >> 16) & 0xff) as usize]
        ^ t[4][(lo >> 24) as usize];
    if hi != 0 {
        crc ^= t[3][(hi & 0xff) as usize]
            ^ t[2][((hi >> 8) & 0xff) as usize]
            ^ t[1][((hi >> 16) & 0xff) as usize]
            ^ t[0][(hi >> 24) as usize];
    }
    mask_crc(!crc)
}

/// The first `i` at which `bytes[i..i + 12]` is a plausible header, if any.
///
/// `limit` is the largest length accepted; `rest`, when the stream's size is known, is the
/// number of stream bytes from `bytes[0]` to the end, so that a record must fit in it.
pub(crate) fn find_header(bytes: &[u8], limit: u64, rest: Option<u64>) -> Option<usize> {
    for (i, window) in bytes.windows(HEADER_LEN).enumerate() {
        let Some(header) = window.first_chunk::<HEADER_LEN>() else {
            continue;
        };
        let lo = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let hi = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let len = u64::from(hi) << 32 | u64::from(lo);
        let bound = match rest.map(|rest| rest.checked_sub((i + FRAMING_LEN) as u64)) {
            Some(Some(room)) => limit.min(room),
            // No record fits in what is left, here or later.
            Some(None) => return None,
            None => limit,
        };
        if len > bound {
            continue;
        }
        let stored = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
        if masked_crc_of_halves(lo, hi) == stored {
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::format::{encode_header, masked_crc32c};

    #[test]
    fn table_crc_matches_the_crate() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = x.to_le_bytes();
            assert_eq!(masked_crc_of_length(&bytes), masked_crc32c(&bytes));
        }
        assert_eq!(masked_crc_of_length(&[0; 8]), masked_crc32c(&[0; 8]));
    }

    #[test]
    fn finds_the_first_plausible_header_within_bounds() {
        let mut bytes = vec![0u8; 100];
        bytes[37..49].copy_from_slice(&encode_header(20));
        assert_eq!(find_header(&bytes, u64::MAX, None), Some(37));
        assert_eq!(find_header(&bytes, 19, None), None, "over the limit");
        // 37 + 12 + 20 + 4 = 73 bytes needed.
        assert_eq!(find_header(&bytes, u64::MAX, Some(73)), Some(37));
        assert_eq!(find_header(&bytes, u64::MAX, Some(72)), None, "runs past the end");
        assert_eq!(find_header(&bytes[..48], u64::MAX, None), None, "header cut off");
        assert_eq!(find_header(&[0u8; 4096], u64::MAX, None), None);
    }
}

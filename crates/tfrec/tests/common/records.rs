//! Test oracles for the TFRecord framing, written as plainly as possible and independently of
//! the reader: what a byte-by-byte rescan finds, and what a strict reader must stop at.
#![allow(dead_code)]

/// The reader's default length limit (2 GiB).
pub const MAX_RECORD_LEN: u64 = 2 << 30;

fn masked_crc(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes).rotate_right(15).wrapping_add(0xa282_ead8)
}

fn le_u32(bytes: &[u8]) -> u32 {
    u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// What is at `at`: an intact record (its data range and framed size), or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum At {
    Record {
        data: std::ops::Range<usize>,
        framed: usize,
    },
    End,
    PartialHeader,
    LengthCrc,
    OverLimit,
    PastEnd,
    DataCrc,
}

pub fn record_at(bytes: &[u8], at: usize) -> At {
    let rest = bytes.len() - at;
    if rest == 0 {
        return At::End;
    }
    if rest < 12 {
        return At::PartialHeader;
    }
    let header = &bytes[at..at + 12];
    if masked_crc(&header[..8]) != le_u32(&header[8..]) {
        return At::LengthCrc;
    }
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&header[..8]);
    let len = u64::from_le_bytes(len_bytes);
    if len > MAX_RECORD_LEN {
        return At::OverLimit;
    }
    if len + 16 > rest as u64 {
        return At::PastEnd;
    }
    let len = len as usize;
    let data = at + 12..at + 12 + len;
    if masked_crc(&bytes[data.clone()]) != le_u32(&bytes[data.end..]) {
        return At::DataCrc;
    }
    At::Record { data, framed: len + 16 }
}

/// The records a rescan from every byte offset finds: at each offset, an intact record is taken
/// and the scan goes on after it; anything else moves the scan one byte on.
pub fn rescan(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match record_at(bytes, at) {
            At::Record { data, framed } => {
                found.push(bytes[data].to_vec());
                at += framed;
            }
            _ => at += 1,
        }
    }
    found
}

/// What a strict reader returns: the records before the first problem, and the problem with
/// its offset (`None` at a clean end).
pub fn strict(bytes: &[u8]) -> (Vec<Vec<u8>>, Option<(At, usize)>) {
    let mut found = Vec::new();
    let mut at = 0;
    loop {
        match record_at(bytes, at) {
            At::Record { data, framed } => {
                found.push(bytes[data].to_vec());
                at += framed;
            }
            At::End => return (found, None),
            other => return (found, Some((other, at))),
        }
    }
}

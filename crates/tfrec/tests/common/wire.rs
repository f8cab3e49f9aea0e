//! Protobuf fields written by hand, for tests that build hostile records byte by byte.
//! Included by a test file with `#[path = "common/wire.rs"] mod wire;`.

/// `n` as a protobuf varint, appended to `out`.
pub fn varint(mut n: usize, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A length-delimited field with a one-byte tag.
pub fn field(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    varint(payload.len(), &mut out);
    out.extend_from_slice(payload);
    out
}

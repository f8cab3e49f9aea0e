//! Example keys: bytes, as TensorFlow's `tf.string` keys are (any bytes, not only UTF-8), the
//! segment keys made from them (`"%05d_of_%05d:<key>"`, `"STOP:<key>"`), and how a key reads in
//! an error message.

/// Appends `n` in decimal, zero-padded to at least 5 digits (`%05d`).
fn push_padded(s: &mut Vec<u8>, n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for _ in (digits.len() - i)..5 {
        s.push(b'0');
    }
    s.extend_from_slice(&digits[i..]);
}

/// `"%05d_of_%05d:%s"`: a segment's key. Written by hand: `format!` was a visible share of
/// the state saver bench.
pub(crate) fn segment_key(segment: usize, count: usize, key: &[u8]) -> Vec<u8> {
    let mut s = Vec::with_capacity(key.len() + 16);
    push_padded(&mut s, segment);
    s.extend_from_slice(b"_of_");
    push_padded(&mut s, count);
    s.push(b':');
    s.extend_from_slice(key);
    s
}

/// `"STOP:<key>"`: the next key of an example's last segment.
pub(crate) fn stop_key(key: &[u8]) -> Vec<u8> {
    let mut s = Vec::with_capacity(key.len() + 5);
    s.extend_from_slice(b"STOP:");
    s.extend_from_slice(key);
    s
}

/// A key as text for messages and error fields: its UTF-8 as is, every byte that is not part
/// of valid UTF-8 as `\xNN` (Python's `backslashreplace`), so a key that is text reads as
/// itself and any other key still names its bytes.
///
/// ```
/// use tfrec::state_saver::key_text;
///
/// assert_eq!(key_text("seq-é".as_bytes()), "seq-é");
/// assert_eq!(key_text(b"\xff\x00k"), "\\xff\u{0}k");
/// ```
pub fn key_text(key: &[u8]) -> String {
    let mut out = String::with_capacity(key.len());
    for chunk in key.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_keys_are_zero_padded_to_five_digits_and_grow() {
        assert_eq!(segment_key(0, 3, b"k"), b"00000_of_00003:k");
        assert_eq!(segment_key(12345, 99999, b"a:b"), b"12345_of_99999:a:b");
        assert_eq!(segment_key(100000, 1234567, b""), b"100000_of_1234567:");
        assert_eq!(
            segment_key(usize::MAX, usize::MAX, b"k"),
            format!("{0:05}_of_{0:05}:k", usize::MAX).into_bytes()
        );
    }

    #[test]
    fn keys_that_are_not_utf8_keep_their_bytes() {
        let raw = b"\xff\x00k\x80";
        let mut want = b"00001_of_00002:".to_vec();
        want.extend_from_slice(raw);
        assert_eq!(segment_key(1, 2, raw), want);
        assert_eq!(stop_key(raw), b"STOP:\xff\x00k\x80");
    }

    #[test]
    fn key_text_shows_utf8_as_is_and_other_bytes_escaped() {
        assert_eq!(key_text(b""), "");
        assert_eq!(key_text("ünï".as_bytes()), "ünï");
        assert_eq!(key_text(b"\xff\x00k"), "\\xff\u{0}k");
        // A truncated UTF-8 sequence: each of its bytes is escaped, the rest still decodes.
        assert_eq!(key_text(b"a\xc3"), "a\\xc3");
        assert_eq!(key_text(b"\xe2\x82z\xc3\xa9"), "\\xe2\\x82zé");
    }
}

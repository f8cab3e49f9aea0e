//! The protobuf wire format, as far as the crate's messages need it (`Example`,
//! `SequenceExample`, `TensorProto`): varints, tags, length-delimited fields, skipping unknown
//! fields, and the matching encoders. A ground-floor module: it names no other module of the
//! crate, so each message layer builds on it without building on another.
//!
//! Every read is bounds-checked and every error carries the absolute byte offset where the
//! input stopped making sense.

use std::fmt;

/// Protobuf wire types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireType {
    Varint,
    Fixed64,
    Len,
    StartGroup,
    EndGroup,
    Fixed32,
}

impl WireType {
    fn from_bits(bits: u8) -> Option<WireType> {
        Some(match bits {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            _ => return None,
        })
    }
}

/// What is malformed about a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The input ends inside a field.
    Truncated,
    /// A varint longer than 10 bytes.
    OverlongVarint,
    /// A tag with wire type 6 or 7.
    InvalidWireType(u8),
    /// A tag with field number 0.
    FieldNumberZero,
    /// A tag whose field number is above protobuf's largest, 2^29 - 1.
    FieldNumberTooLarge(u64),
    /// An end-group tag without its start, or with another field number.
    UnmatchedEndGroup,
    /// Groups nested deeper than protobuf's recursion limit.
    TooDeep,
    /// A packed float list whose length is not a multiple of 4.
    PackedFloatLength(usize),
    /// A string field (a feature name) that is not valid UTF-8.
    InvalidUtf8,
}

/// A malformed message (`Example`, `SequenceExample`, `TensorProto`), with the byte offset of
/// the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct DecodeError {
    /// Offset from the start of the serialized message.
    pub offset: usize,
    /// What is wrong there.
    pub kind: DecodeErrorKind,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.kind {
            DecodeErrorKind::Truncated => "the message ends inside a field".to_owned(),
            DecodeErrorKind::OverlongVarint => "a varint is longer than 10 bytes".to_owned(),
            DecodeErrorKind::InvalidWireType(t) => format!("invalid wire type {t}"),
            DecodeErrorKind::FieldNumberZero => "a field number is 0".to_owned(),
            DecodeErrorKind::FieldNumberTooLarge(n) => {
                format!("a field number is {n}, above protobuf's largest (2^29 - 1)")
            }
            DecodeErrorKind::UnmatchedEndGroup => "an end-group tag does not match a start-group tag".to_owned(),
            DecodeErrorKind::TooDeep => "groups are nested too deeply".to_owned(),
            DecodeErrorKind::PackedFloatLength(n) => format!("a packed float list of {n} bytes (not a multiple of 4)"),
            DecodeErrorKind::InvalidUtf8 => "a feature name is not valid UTF-8".to_owned(),
        };
        write!(f, "malformed protobuf at byte {}: {what}", self.offset)
    }
}

/// Protobuf's default recursion limit, applied to nested groups.
const MAX_GROUP_DEPTH: u32 = 100;

/// A bounds-checked reader over one message's bytes.
#[derive(Debug, Clone, Copy)]
pub struct WireReader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Absolute offset of `buf[0]` in the outermost message, for error messages.
    base: usize,
}

impl<'a> WireReader<'a> {
    /// A reader over a whole message.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        WireReader { buf, pos: 0, base: 0 }
    }

    /// A reader over a sub-message found at absolute offset `base`.
    #[inline]
    pub fn nested(buf: &'a [u8], base: usize) -> Self {
        WireReader { buf, pos: 0, base }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Absolute offset of the next byte.
    #[inline]
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    #[inline]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError {
            offset: self.offset(),
            kind,
        }
    }

    #[inline]
    pub fn read_varint(&mut self) -> Result<u64, DecodeError> {
        // Fast path: a one-byte varint (tags, short lengths, small values).
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(u64::from(b));
            }
        }
        self.read_varint_slow()
    }

    fn read_varint_slow(&mut self) -> Result<u64, DecodeError> {
        let start = self.pos;
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                self.pos = start;
                return Err(self.error(DecodeErrorKind::Truncated));
            };
            self.pos += 1;
            // The tenth byte contributes one bit; protobuf ignores what overflows.
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        self.pos = start;
        Err(self.error(DecodeErrorKind::OverlongVarint))
    }

    /// Reads a tag: field number and wire type.
    #[inline]
    pub fn read_tag(&mut self) -> Result<(u32, WireType), DecodeError> {
        let start = self.pos;
        let tag = self.read_varint()?;
        let wire_bits = (tag & 7) as u8;
        let Some(wire_type) = WireType::from_bits(wire_bits) else {
            self.pos = start;
            return Err(self.error(DecodeErrorKind::InvalidWireType(wire_bits)));
        };
        let field = tag >> 3;
        if field == 0 {
            self.pos = start;
            return Err(self.error(DecodeErrorKind::FieldNumberZero));
        }
        if field > u64::from(u32::MAX >> 3) {
            self.pos = start;
            return Err(self.error(DecodeErrorKind::FieldNumberTooLarge(field)));
        }
        Ok((field as u32, wire_type))
    }

    /// Reads a length-delimited payload; returns it and its absolute offset.
    #[inline]
    pub fn read_len(&mut self) -> Result<(&'a [u8], usize), DecodeError> {
        let len = self.read_varint()?;
        let start = self.pos;
        let remaining = self.buf.len() - start;
        if len > remaining as u64 {
            return Err(self.error(DecodeErrorKind::Truncated));
        }
        let len = len as usize;
        self.pos += len;
        Ok((&self.buf[start..start + len], self.base + start))
    }

    #[inline]
    pub fn read_fixed32(&mut self) -> Result<u32, DecodeError> {
        let bytes = self
            .buf
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error(DecodeErrorKind::Truncated))?;
        self.pos += 4;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn skip_bytes(&mut self, n: usize) -> Result<(), DecodeError> {
        if self.buf.len() - self.pos < n {
            return Err(self.error(DecodeErrorKind::Truncated));
        }
        self.pos += n;
        Ok(())
    }

    /// Skips the value of a field whose tag was just read (an unknown field, or a known one
    /// with an unexpected wire type, which protobuf also treats as unknown).
    pub fn skip(&mut self, field: u32, wire_type: WireType) -> Result<(), DecodeError> {
        self.skip_at_depth(field, wire_type, 0)
    }

    fn skip_at_depth(&mut self, field: u32, wire_type: WireType, depth: u32) -> Result<(), DecodeError> {
        match wire_type {
            WireType::Varint => self.read_varint().map(drop),
            WireType::Fixed64 => self.skip_bytes(8),
            WireType::Fixed32 => self.skip_bytes(4),
            WireType::Len => self.read_len().map(drop),
            WireType::StartGroup => {
                if depth >= MAX_GROUP_DEPTH {
                    return Err(self.error(DecodeErrorKind::TooDeep));
                }
                loop {
                    if self.is_empty() {
                        return Err(self.error(DecodeErrorKind::Truncated));
                    }
                    let tag_offset = self.pos;
                    let (inner, inner_type) = self.read_tag()?;
                    if inner_type == WireType::EndGroup {
                        if inner == field {
                            return Ok(());
                        }
                        self.pos = tag_offset;
                        return Err(self.error(DecodeErrorKind::UnmatchedEndGroup));
                    }
                    self.skip_at_depth(inner, inner_type, depth + 1)?;
                }
            }
            WireType::EndGroup => Err(self.error(DecodeErrorKind::UnmatchedEndGroup)),
        }
    }
}

/// Appends a varint.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The encoded size of a varint.
// Only the messages size their encodings ahead; `TensorProto` writing appends as it goes.
#[cfg_attr(not(feature = "example"), allow(dead_code))]
#[inline]
pub fn varint_len(value: u64) -> usize {
    // 1 byte per started group of 7 bits; 0 takes one byte.
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends a tag.
#[inline]
pub fn put_tag(out: &mut Vec<u8>, field: u32, wire_type: WireType) {
    let bits = match wire_type {
        WireType::Varint => 0,
        WireType::Fixed64 => 1,
        WireType::Len => 2,
        WireType::StartGroup => 3,
        WireType::EndGroup => 4,
        WireType::Fixed32 => 5,
    };
    put_varint(out, (u64::from(field) << 3) | bits);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_size() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX, (-5i64) as u64] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            assert_eq!(WireReader::new(&out).read_varint(), Ok(v));
        }
    }

    #[test]
    fn overlong_and_truncated_varints_fail_at_their_offset() {
        let overlong = [0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
        let err = WireReader::nested(&overlong, 7).read_varint().unwrap_err();
        assert_eq!(
            err,
            DecodeError {
                offset: 7,
                kind: DecodeErrorKind::OverlongVarint
            }
        );
        let err = WireReader::new(&[0x80, 0x80]).read_varint().unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::Truncated);
    }

    #[test]
    fn groups_are_skipped_when_well_formed() {
        // field 15 start group, a varint field inside, field 15 end group.
        let mut r = WireReader::new(&[0x7b, 0x08, 0x01, 0x7c, 0x99]);
        let (field, wt) = r.read_tag().unwrap();
        r.skip(field, wt).unwrap();
        assert_eq!(r.offset(), 4);
        let mut r = WireReader::new(&[0x7b, 0x08, 0x01, 0x84, 0x01]);
        let (field, wt) = r.read_tag().unwrap();
        assert_eq!(r.skip(field, wt).unwrap_err().kind, DecodeErrorKind::UnmatchedEndGroup);
        let mut r = WireReader::new(&[0x7c]);
        let (field, wt) = r.read_tag().unwrap();
        assert_eq!(r.skip(field, wt).unwrap_err().kind, DecodeErrorKind::UnmatchedEndGroup);
    }

    #[test]
    fn bad_tags_are_errors() {
        assert_eq!(
            WireReader::new(&[0x0e]).read_tag().unwrap_err().kind,
            DecodeErrorKind::InvalidWireType(6)
        );
        assert_eq!(
            WireReader::new(&[0x02]).read_tag().unwrap_err().kind,
            DecodeErrorKind::FieldNumberZero
        );
        // Field 2^29 (tag varint 2^32 | wire type 0) is one past protobuf's largest.
        assert_eq!(
            WireReader::new(&[0x80, 0x80, 0x80, 0x80, 0x10])
                .read_tag()
                .unwrap_err()
                .kind,
            DecodeErrorKind::FieldNumberTooLarge(1 << 29)
        );
        assert_eq!(
            WireReader::new(&[0x0a, 0x05, 1]).read_len().unwrap_err().kind,
            DecodeErrorKind::Truncated
        );
    }
}

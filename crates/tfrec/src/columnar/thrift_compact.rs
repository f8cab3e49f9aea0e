//! The few pieces of Thrift's compact protocol that [`ParquetFile`](super::parquet_file) needs to
//! splice a Parquet footer from parts the parquet crate encoded: reading a struct's fields as
//! byte ranges (values skipped, not decoded), and writing field and list headers and integers.
//!
//! The parquet crate encodes its metadata with a Thrift writer of its own that it does not
//! export, and the `thrift` crate's protocols neither tell where in the input a value starts
//! nor take a value as bytes, which is all a splice needs: so these few functions are written
//! here. Their input is the parquet crate's own output, but they still read it as untrusted:
//! a short or malformed input is an error, never a panic.

use parquet::errors::{ParquetError, Result};

/// Compact protocol type codes (in field headers and list headers).
pub(crate) const TYPE_I16: u8 = 4;
pub(crate) const TYPE_I32: u8 = 5;
pub(crate) const TYPE_I64: u8 = 6;
pub(crate) const TYPE_BINARY: u8 = 8;
pub(crate) const TYPE_LIST: u8 = 9;
pub(crate) const TYPE_STRUCT: u8 = 12;

/// How deep values may nest before the input is taken to be malformed (Parquet's metadata
/// nests a few levels).
const MAX_DEPTH: usize = 32;

fn malformed(what: &str) -> ParquetError {
    ParquetError::General(format!("malformed Thrift compact bytes: {what}"))
}

/// A field of a struct: its id, its type code (for a bool, the value too), and where its value
/// lies in the input (empty for a bool).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    pub id: i16,
    pub kind: u8,
    pub value: std::ops::Range<usize>,
}

/// A reader of compact-protocol bytes that skips over values, telling where each lies.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// The position in the input of the next byte to read.
    pub fn position(&self) -> usize {
        self.at
    }

    fn byte(&mut self) -> Result<u8> {
        let byte = *self.bytes.get(self.at).ok_or_else(|| malformed("input ends early"))?;
        self.at += 1;
        Ok(byte)
    }

    fn take(&mut self, n: usize) -> Result<()> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| malformed("input ends early"))?;
        self.at = end;
        Ok(())
    }

    pub fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(malformed("varint longer than ten bytes"))
    }

    /// A zigzag-encoded integer (i16, i32 or i64 in the compact protocol).
    pub fn integer(&mut self) -> Result<i64> {
        let raw = self.varint()?;
        Ok((raw >> 1) as i64 ^ -((raw & 1) as i64))
    }

    /// A list's (or set's) header: its length and its elements' type.
    pub fn list_header(&mut self) -> Result<(usize, u8)> {
        let header = self.byte()?;
        let kind = header & 0x0f;
        let len = match header >> 4 {
            15 => usize::try_from(self.varint()?).map_err(|_| malformed("list length"))?,
            short => usize::from(short),
        };
        Ok((len, kind))
    }

    /// The next field of the struct being read, or `None` at its end; `last` is the id of the
    /// field before (0 at the struct's start), which the header's id is relative to.
    pub fn field(&mut self, last: &mut i16) -> Result<Option<Field>> {
        let header = self.byte()?;
        if header == 0 {
            return Ok(None);
        }
        let kind = header & 0x0f;
        let id = match header >> 4 {
            0 => i16::try_from(self.integer()?).map_err(|_| malformed("field id"))?,
            delta => last
                .checked_add(i16::from(delta))
                .ok_or_else(|| malformed("field id"))?,
        };
        *last = id;
        let start = self.at;
        if !is_bool(kind) {
            self.skip_value(kind, 0)?;
        }
        Ok(Some(Field {
            id,
            kind,
            value: start..self.at,
        }))
    }

    /// Every field of the struct being read, to its end.
    pub fn fields(&mut self) -> Result<Vec<Field>> {
        let mut last = 0;
        let mut fields = Vec::new();
        while let Some(field) = self.field(&mut last)? {
            fields.push(field);
        }
        Ok(fields)
    }

    /// Skips a whole struct (its fields and its stop byte).
    pub fn skip_struct(&mut self) -> Result<()> {
        self.skip_value(TYPE_STRUCT, 0)
    }

    fn skip_value(&mut self, kind: u8, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(malformed("values nested too deep"));
        }
        match kind {
            // A bool here is a list's or map's element, a byte (a bool field's value is in
            // its header, and is never skipped).
            1..=3 => self.take(1),
            TYPE_I16 | TYPE_I32 | TYPE_I64 => self.varint().map(drop),
            7 => self.take(8),
            TYPE_BINARY => {
                let len = usize::try_from(self.varint()?).map_err(|_| malformed("binary length"))?;
                self.take(len)
            }
            TYPE_LIST | 10 => {
                let (len, element) = self.list_header()?;
                (0..len).try_for_each(|_| self.skip_value(element, depth + 1))
            }
            11 => {
                let len = usize::try_from(self.varint()?).map_err(|_| malformed("map length"))?;
                if len == 0 {
                    return Ok(());
                }
                let kinds = self.byte()?;
                (0..len).try_for_each(|_| {
                    self.skip_value(kinds >> 4, depth + 1)?;
                    self.skip_value(kinds & 0x0f, depth + 1)
                })
            }
            TYPE_STRUCT => {
                let mut last = 0i16;
                loop {
                    let header = self.byte()?;
                    if header == 0 {
                        return Ok(());
                    }
                    let field_kind = header & 0x0f;
                    match header >> 4 {
                        0 => {
                            last = i16::try_from(self.integer()?).map_err(|_| malformed("field id"))?;
                        }
                        delta => last = last.wrapping_add(i16::from(delta)),
                    }
                    if !is_bool(field_kind) {
                        self.skip_value(field_kind, depth + 1)?;
                    }
                }
            }
            other => Err(malformed(&format!("unknown type code {other}"))),
        }
    }
}

/// Whether a field of type code `kind` is a bool, whose value is its header's type code.
fn is_bool(kind: u8) -> bool {
    matches!(kind, 1 | 2)
}

/// Appends `value` as an unsigned varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends `value` zigzag-encoded (the compact protocol's i16, i32 and i64).
pub(crate) fn put_integer(out: &mut Vec<u8>, value: i64) {
    put_varint(out, ((value << 1) ^ (value >> 63)) as u64);
}

/// Appends the header of field `id` of type `kind`, the field before it being `last`.
pub(crate) fn put_field_header(out: &mut Vec<u8>, last: i16, id: i16, kind: u8) {
    match id.checked_sub(last) {
        Some(delta @ 1..=15) => out.push(((delta as u8) << 4) | kind),
        _ => {
            out.push(kind);
            put_integer(out, i64::from(id));
        }
    }
}

/// Appends a list header: `len` elements of type `kind`.
pub(crate) fn put_list_header(out: &mut Vec<u8>, len: usize, kind: u8) {
    if len < 15 {
        out.push(((len as u8) << 4) | kind);
    } else {
        out.push(0xf0 | kind);
        put_varint(out, len as u64);
    }
}

/// Appends an integer field (i16, i32 or i64, by `kind`).
pub(crate) fn put_integer_field(out: &mut Vec<u8>, last: i16, id: i16, kind: u8, value: i64) {
    put_field_header(out, last, id, kind);
    put_integer(out, value);
}

/// Appends a binary (string) field.
pub(crate) fn put_binary_field(out: &mut Vec<u8>, last: i16, id: i16, value: &[u8]) {
    put_field_header(out, last, id, TYPE_BINARY);
    put_varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// The end of a struct.
pub(crate) const STOP: u8 = 0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_headers_read_back() {
        let mut out = Vec::new();
        put_integer_field(&mut out, 0, 1, TYPE_I32, -3);
        put_integer_field(&mut out, 1, 40, TYPE_I64, 1 << 40);
        put_binary_field(&mut out, 40, 41, b"name");
        put_field_header(&mut out, 41, 42, TYPE_LIST);
        put_list_header(&mut out, 20, TYPE_I16);
        for i in 0..20 {
            put_integer(&mut out, i - 10);
        }
        // A bool field (its value in the header), then a struct holding one.
        put_field_header(&mut out, 42, 43, 1);
        put_field_header(&mut out, 43, 44, TYPE_STRUCT);
        put_field_header(&mut out, 0, 1, 2);
        out.push(STOP);
        out.push(STOP);
        let mut reader = Reader::new(&out);
        let fields = reader.fields().expect("fields");
        assert_eq!(reader.position(), out.len());
        let ids: Vec<i16> = fields.iter().map(|f| f.id).collect();
        assert_eq!(ids, [1, 40, 41, 42, 43, 44]);
        assert_eq!(Reader::new(&out[fields[0].value.clone()]).integer().expect("i32"), -3);
        assert_eq!(
            Reader::new(&out[fields[1].value.clone()]).integer().expect("i64"),
            1 << 40
        );
        assert_eq!(&out[fields[2].value.clone()], b"\x04name");
        assert!(fields[4].value.is_empty());
    }

    #[test]
    fn short_or_malformed_input_is_an_error() {
        let mut out = Vec::new();
        put_binary_field(&mut out, 0, 1, b"abc");
        out.push(STOP);
        for end in 0..out.len() {
            assert!(Reader::new(&out[..end]).fields().is_err(), "cut at {end}");
        }
        assert!(Reader::new(&[0x1d]).fields().is_err(), "unknown type");
        assert!(
            Reader::new(&[0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])
                .fields()
                .is_err()
        );
        let deep = [vec![0x1c; 40], vec![0; 40]].concat();
        assert!(Reader::new(&deep).fields().is_err(), "too deep");
    }
}

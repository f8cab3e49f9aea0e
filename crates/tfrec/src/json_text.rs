//! The JSON text conventions shared by every JSON the library writes (messages, specs,
//! tensors): floats as the shortest text that reads back to the same float32 with `"NaN"`,
//! `"Infinity"` and `"-Infinity"` as strings, string escaping, bytes as base64, and the three
//! layouts (Python's `json.dumps` with and without `indent=2`, and a compact one).
//!
//! A ground-floor module (only [`crate::pyfloat`] below it). Each convention is written once
//! here; the spec and tensor modules only say which tree to write, as a borrowed [`Json`] whose
//! value lists stay the caller's own slices, and messages (`example/render.rs`) stream their
//! members through [`Items`] as they read them from the record.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;

use crate::pyfloat::write_shortest_repr;

/// How a tree is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Python's `json.dumps(value, indent=2)`: one item per line, two spaces per level, ASCII
    /// only (`ensure_ascii`).
    Indented,
    /// Python's `json.dumps(value)`: one line, `", "` and `": "`, ASCII only.
    Line,
    /// One line, no spaces, UTF-8 as is (serde_json's `to_string`).
    Compact,
}

impl Layout {
    fn item_separator(self) -> &'static str {
        match self {
            Layout::Compact => ",",
            // With indentation the line break follows the comma.
            Layout::Indented => ",",
            Layout::Line => ", ",
        }
    }

    fn key_separator(self) -> &'static str {
        match self {
            Layout::Compact => ":",
            Layout::Indented | Layout::Line => ": ",
        }
    }

    pub(crate) fn ascii(self) -> bool {
        self != Layout::Compact
    }
}

/// A list of byte strings, as tensors hold them (slices of one buffer).
#[cfg_attr(not(feature = "parse"), allow(dead_code))]
pub(crate) enum ByteList<'a> {
    /// One slice per value.
    Slices(Vec<&'a [u8]>),
}

// Only the tensors and specs of the `parse` feature write a tree; messages stream.
#[cfg_attr(not(feature = "parse"), allow(dead_code))]
impl ByteList<'_> {
    fn len(&self) -> usize {
        match self {
            ByteList::Slices(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> &[u8] {
        match self {
            ByteList::Slices(v) => v[i],
        }
    }
}

/// A JSON tree borrowed from what it renders: lists of values stay the owner's slices and are
/// formatted one value at a time as they are written, so rendering a huge record needs little
/// more than its output.
#[cfg_attr(not(feature = "parse"), allow(dead_code))]
pub(crate) enum Json<'a> {
    /// Keys and values, in this order.
    Object(Vec<(&'a str, Json<'a>)>),
    /// Items.
    Array(Vec<Json<'a>>),
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A string.
    Str(&'a str),
    /// An integer.
    Int(i64),
    /// A float32 (see [`write_float`]).
    Float(f32),
    /// Bytes as a UTF-8 string where valid, else `{"base64": "…"}`.
    Bytes(&'a [u8]),
    /// A list of float32s.
    Floats(&'a [f32]),
    /// A list of int64s as numbers.
    Ints(Cow<'a, [i64]>),
    /// A list of sizes as numbers.
    Sizes(&'a [usize]),
    /// A list of bytes, each as [`Json::Bytes`].
    BytesList(ByteList<'a>),
}

// Only the tensors and specs of the `parse` feature write a tree; messages stream.
#[cfg_attr(not(feature = "parse"), allow(dead_code))]
impl Json<'_> {
    /// The text in `layout`.
    pub(crate) fn to_text(&self, layout: Layout) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = self.write(&mut out, layout);
        out
    }

    /// Writes the text in `layout` into `out`.
    pub(crate) fn write<W: fmt::Write>(&self, out: &mut W, layout: Layout) -> fmt::Result {
        let level = (layout == Layout::Indented).then_some(0);
        self.write_at(out, layout, level)
    }

    fn write_at<W: fmt::Write>(&self, out: &mut W, layout: Layout, level: Option<usize>) -> fmt::Result {
        let ascii = layout.ascii();
        // A list of scalars: items are written by index, at no deeper level.
        macro_rules! list {
            ($len:expr, |$out:ident, $i:ident| $item:expr) => {
                write_items(out, layout, level, ('[', ']'), $len, |$out, $i, _| $item)
            };
        }
        match self {
            Json::Null => out.write_str("null"),
            Json::Bool(b) => out.write_str(if *b { "true" } else { "false" }),
            Json::Str(s) => write_string(out, s, ascii),
            Json::Int(v) => write!(out, "{v}"),
            Json::Float(v) => write_float(out, *v),
            Json::Bytes(b) => write_bytes(out, b, layout),
            Json::Array(items) => write_items(out, layout, level, ('[', ']'), items.len(), |out, i, l| {
                items[i].write_at(out, layout, l)
            }),
            Json::Object(items) => write_items(out, layout, level, ('{', '}'), items.len(), |out, i, l| {
                write_string(out, items[i].0, ascii)?;
                out.write_str(layout.key_separator())?;
                items[i].1.write_at(out, layout, l)
            }),
            Json::Floats(v) => list!(v.len(), |out, i| write_float(out, v[i])),
            Json::Ints(v) => list!(v.len(), |out, i| write!(out, "{}", v[i])),
            Json::Sizes(v) => list!(v.len(), |out, i| write!(out, "{}", v[i])),
            Json::BytesList(v) => list!(v.len(), |out, i| write_bytes(out, v.get(i), layout)),
        }
    }
}

/// The items of an array or an object (written by `item`, given its index and level), as
/// `json.dumps` lays them out: on one line when `level` is `None`, else one per line, indented
/// two spaces per level.
// Only the tensors and specs of the `parse` feature write a tree; messages stream.
#[cfg_attr(not(feature = "parse"), allow(dead_code))]
fn write_items<W: fmt::Write>(
    out: &mut W,
    layout: Layout,
    level: Option<usize>,
    (open, close): (char, char),
    len: usize,
    mut item: impl FnMut(&mut W, usize, Option<usize>) -> fmt::Result,
) -> fmt::Result {
    let mut items = Items::open(out, layout, level, open, close)?;
    for i in 0..len {
        let level = items.next(out)?;
        item(out, i, level)?;
    }
    items.close(out)
}

/// An array or object being written item by item, for callers that stream their items
/// (a message's values, read from its bytes as they are written) rather than index them.
pub(crate) struct Items {
    layout: Layout,
    level: Option<usize>,
    close: char,
    count: usize,
}

impl Items {
    /// Writes the opening bracket.
    pub(crate) fn open<W: fmt::Write>(
        out: &mut W,
        layout: Layout,
        level: Option<usize>,
        open: char,
        close: char,
    ) -> Result<Items, fmt::Error> {
        out.write_char(open)?;
        Ok(Items {
            layout,
            level,
            close,
            count: 0,
        })
    }

    fn newline<W: fmt::Write>(out: &mut W, level: usize) -> fmt::Result {
        out.write_char('\n')?;
        for _ in 0..level {
            out.write_str("  ")?;
        }
        Ok(())
    }

    /// Starts the next item (separator, line break): returns the level to write it at.
    ///
    /// `#[inline]`, as the text format's `open`/`close` are: it runs for every value a record's
    /// JSON holds, and out of line (where the compiler's placement of it had put it) `cat` as
    /// JSON ran measurably slower.
    #[inline]
    pub(crate) fn next<W: fmt::Write>(&mut self, out: &mut W) -> Result<Option<usize>, fmt::Error> {
        if self.count > 0 {
            out.write_str(self.layout.item_separator())?;
        }
        self.count += 1;
        if let Some(l) = self.level {
            Self::newline(out, l + 1)?;
        }
        Ok(self.level.map(|l| l + 1))
    }

    /// Starts the next member of an object: its key and separator; returns the level to
    /// write its value at.
    pub(crate) fn key<W: fmt::Write>(&mut self, out: &mut W, key: &str) -> Result<Option<usize>, fmt::Error> {
        let level = self.next(out)?;
        write_string(out, key, self.layout.ascii())?;
        out.write_str(self.layout.key_separator())?;
        Ok(level)
    }

    /// Writes the closing bracket.
    pub(crate) fn close<W: fmt::Write>(self, out: &mut W) -> fmt::Result {
        if let (Some(l), true) = (self.level, self.count > 0) {
            Self::newline(out, l)?;
        }
        out.write_char(self.close)
    }
}

/// A JSON string. With `ascii`, Python's `ensure_ascii` escaping (everything outside
/// printable ASCII as `\uXXXX`, UTF-16 surrogate pairs above the BMP); without it, serde_json's
/// (only quotes, backslashes and control characters escaped).
pub(crate) fn write_string<W: fmt::Write>(out: &mut W, s: &str, ascii: bool) -> fmt::Result {
    out.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            '\t' => out.write_str("\\t")?,
            '\u{8}' => out.write_str("\\b")?,
            '\u{c}' => out.write_str("\\f")?,
            ' '..='~' => out.write_char(c)?,
            c if !ascii && c >= ' ' => out.write_char(c)?,
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(out, "\\u{unit:04x}")?;
                }
            }
        }
    }
    out.write_char('"')
}

/// Input bytes base64-encoded at a time by [`write_base64`]: a multiple of 3, so that only the
/// last piece is padded.
const BASE64_PIECE: usize = 3 * 1024;

/// Values of at most this many bytes (a multiple of 3) are encoded through a buffer this size
/// instead: the stack buffer is zeroed on every call, and zeroing [`BASE64_PIECE`]'s for each of
/// a record's many short values cost more than encoding them.
const BASE64_SHORT: usize = 3 * 32;

/// Bytes as a JSON string of their standard base64, as both the messages' and the tensors'
/// JSON write them. Encoded a piece at a time into a buffer on the stack: an encoding of the
/// whole value would hold a third more than the value, and a huge record (`tfrec cat` of a
/// gigabyte `bytes_list`) must render in memory that does not grow with it. The base64
/// alphabet needs no escaping, so the pieces are written as they are.
pub(crate) fn write_base64<W: fmt::Write>(out: &mut W, bytes: &[u8]) -> fmt::Result {
    out.write_char('"')?;
    if bytes.len() <= BASE64_SHORT {
        write_base64_pieces::<W, { BASE64_SHORT / 3 * 4 }>(out, bytes)?;
    } else {
        write_base64_pieces::<W, { BASE64_PIECE / 3 * 4 }>(out, bytes)?;
    }
    out.write_char('"')
}

/// [`write_base64`]'s text without its quotes, encoded `TEXT / 4 * 3` input bytes at a time
/// through a `TEXT`-byte buffer on the stack.
fn write_base64_pieces<W: fmt::Write, const TEXT: usize>(out: &mut W, bytes: &[u8]) -> fmt::Result {
    let mut text = [0u8; TEXT];
    for piece in bytes.chunks(TEXT / 4 * 3) {
        let n = base64::engine::general_purpose::STANDARD
            .encode_slice(piece, &mut text)
            .map_err(|_| fmt::Error)?;
        out.write_str(std::str::from_utf8(&text[..n]).map_err(|_| fmt::Error)?)?;
    }
    Ok(())
}

/// Bytes read back from standard base64.
pub(crate) fn from_base64(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    base64::engine::general_purpose::STANDARD.decode(text)
}

/// The JSON string of a float32 that JSON numbers cannot hold (`NaN`, `Infinity`,
/// `-Infinity`); what [`float_from_special`] reads back.
pub(crate) fn special_float(v: f32) -> Option<&'static str> {
    if v.is_nan() {
        Some("NaN")
    } else if v == f32::INFINITY {
        Some("Infinity")
    } else if v == f32::NEG_INFINITY {
        Some("-Infinity")
    } else {
        None
    }
}

/// The float32 a JSON string names (see [`special_float`]), if it names one.
pub(crate) fn float_from_special(s: &str) -> Option<f32> {
    match s {
        "NaN" => Some(f32::NAN),
        "Infinity" => Some(f32::INFINITY),
        "-Infinity" => Some(f32::NEG_INFINITY),
        _ => None,
    }
}

/// A float32 as every JSON of the library writes it: the shortest text that reads back to the
/// same float32 (`0.1`, `19.0`, `1e-05`), the non-finite ones as [`special_float`] strings.
pub(crate) fn write_float<W: fmt::Write>(out: &mut W, v: f32) -> fmt::Result {
    match special_float(v) {
        Some(s) => write_string(out, s, true),
        None => write_shortest_repr(out, v),
    }
}

/// Bytes as a UTF-8 string where valid, else `{"base64": "…"}`.
pub(crate) fn write_bytes<W: fmt::Write>(out: &mut W, bytes: &[u8], layout: Layout) -> fmt::Result {
    match std::str::from_utf8(bytes) {
        Ok(s) => write_string(out, s, layout.ascii()),
        Err(_) => {
            out.write_char('{')?;
            write_string(out, "base64", true)?;
            out.write_str(layout.key_separator())?;
            write_base64(out, bytes)?;
            out.write_char('}')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(s: &str, ascii: bool) -> String {
        let mut out = String::new();
        write_string(&mut out, s, ascii).unwrap();
        out
    }

    /// Written a piece at a time, the text is the whole value's encoding: every length about
    /// the pieces' bounds, where padding and the last piece meet, and about the bound between
    /// short values and long ones.
    #[test]
    fn base64_in_pieces_is_base64_whole() {
        let bytes: Vec<u8> = (0..3 * BASE64_PIECE + 7).map(|i| (i * 37 % 256) as u8).collect();
        let bounds = [0, BASE64_SHORT, BASE64_PIECE, 2 * BASE64_PIECE, 3 * BASE64_PIECE];
        for len in bounds.iter().flat_map(|&b| b.saturating_sub(4)..b + 5) {
            let mut out = String::new();
            write_base64(&mut out, &bytes[..len]).expect("writes");
            let whole = base64::engine::general_purpose::STANDARD.encode(&bytes[..len]);
            assert_eq!(out, format!("\"{whole}\""), "{len} bytes");
        }
    }

    #[test]
    fn strings_escape_as_python_and_as_serde_json() {
        let text = "é\u{1F600}\"\n\u{1}\u{7f}";
        assert_eq!(string(text, true), r#""\u00e9\ud83d\ude00\"\n\u0001\u007f""#);
        assert_eq!(string(text, false), serde_json::to_string(text).unwrap());
    }

    #[test]
    fn layouts() {
        let floats = [0.1f32, f32::NAN, 19.0];
        let tree = Json::Object(vec![
            ("a", Json::Floats(&floats)),
            ("b", Json::Array(vec![])),
            ("c", Json::Bytes(&[0xff])),
        ]);
        assert_eq!(
            tree.to_text(Layout::Line),
            r#"{"a": [0.1, "NaN", 19.0], "b": [], "c": {"base64": "/w=="}}"#
        );
        assert_eq!(
            tree.to_text(Layout::Compact),
            r#"{"a":[0.1,"NaN",19.0],"b":[],"c":{"base64":"/w=="}}"#
        );
        assert_eq!(
            tree.to_text(Layout::Indented),
            "{\n  \"a\": [\n    0.1,\n    \"NaN\",\n    19.0\n  ],\n  \"b\": [],\n  \"c\": {\"base64\": \"/w==\"}\n}"
        );
    }

    #[test]
    fn floats_read_back_exactly() {
        for f in [0.1f32, 1.0 / 3.0, 1e-40, f32::MAX, -2.5e-7, 16_777_217.0, -0.0] {
            let mut out = String::new();
            write_float(&mut out, f).unwrap();
            let back: f64 = serde_json::from_str(&out).unwrap();
            assert_eq!((back as f32).to_bits(), f.to_bits(), "{out}");
        }
        for f in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let name = special_float(f).unwrap();
            assert_eq!(float_from_special(name).map(f32::to_bits), Some(f.to_bits()));
        }
    }
}

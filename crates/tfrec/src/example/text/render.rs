//! Protobuf text format written as the protobuf Python library prints it: the pieces (indent,
//! fields opened and closed, map keys, floats, C-escaped bytes) that `render.rs` puts together
//! as it reads a record.

use std::fmt;

use crate::pyfloat::write_shortest_repr;

// `indent`, `open` and `close` run for every feature of every record `cat` prints; marked
// `#[inline]` so that each codegen unit holding a renderer gets its own copy to inline. Without
// it, whether they inline depends on which unit the compiler happens to place them in, and `cat`
// as text ran measurably slower when they landed apart from the renderer
// (python/bench/bench_before_after.py's `cat` rows).
#[inline]
pub(in crate::example) fn indent<W: fmt::Write>(out: &mut W, level: usize) -> fmt::Result {
    for _ in 0..level {
        out.write_str("  ")?;
    }
    Ok(())
}

#[inline]
pub(in crate::example) fn open<W: fmt::Write>(out: &mut W, level: usize, name: &str) -> fmt::Result {
    indent(out, level)?;
    out.write_str(name)?;
    out.write_str(" {\n")
}

#[inline]
pub(in crate::example) fn close<W: fmt::Write>(out: &mut W, level: usize) -> fmt::Result {
    indent(out, level)?;
    out.write_str("}\n")
}

/// A map entry's key, as Python's `text_format.MessageToString` prints it: a `string` field, so
/// non-ASCII characters print as themselves (UTF-8, `as_utf8=True`) and only ASCII specials are
/// escaped; the empty key is the field's default and is not printed at all.
pub(in crate::example) fn render_key<W: fmt::Write>(out: &mut W, level: usize, key: &str) -> fmt::Result {
    if key.is_empty() {
        return Ok(());
    }
    indent(out, level)?;
    out.write_str("key: \"")?;
    for c in key.chars() {
        if c.is_ascii() {
            escape_bytes(out, &[c as u8])?;
        } else {
            out.write_char(c)?;
        }
    }
    out.write_str("\"\n")
}

/// A float as text format writes it: `nan`, `inf`, `-inf`, else [`shortest_repr`](crate::example::shortest_repr).
pub(in crate::example) fn write_text_float<W: fmt::Write>(out: &mut W, v: f32) -> fmt::Result {
    if v.is_nan() {
        out.write_str("nan")
    } else if v.is_infinite() {
        out.write_str(if v > 0.0 { "inf" } else { "-inf" })
    } else {
        write_shortest_repr(out, v)
    }
}

/// C-style escaping as protobuf's `CEscape`: printable ASCII as is, `\n \r \t \" \' \\`, and
/// every other byte as three octal digits.
pub(crate) fn escape_bytes<W: fmt::Write>(out: &mut W, bytes: &[u8]) -> fmt::Result {
    // Runs of plain printable bytes go out in one write.
    let mut plain = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = match b {
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            b'"' => "\\\"",
            b'\'' => "\\'",
            b'\\' => "\\\\",
            0x20..=0x7e => continue,
            _ => "",
        };
        out.write_str(std::str::from_utf8(&bytes[plain..i]).unwrap_or(""))?;
        plain = i + 1;
        if escape.is_empty() {
            write!(out, "\\{b:03o}")?;
        } else {
            out.write_str(escape)?;
        }
    }
    out.write_str(std::str::from_utf8(&bytes[plain..]).unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use crate::example::{Example, Feature};

    #[test]
    fn map_keys_print_as_utf8_and_the_empty_key_is_omitted() {
        let mut ex = Example::default();
        ex.features_mut().insert("größe", Feature::Int64(vec![1]));
        ex.features_mut().insert("", Feature::Int64(vec![2]));
        ex.features_mut().insert("a\"b", Feature::Int64(vec![3]));
        let text = ex.to_text();
        assert!(text.contains("key: \"größe\"\n"), "{text}");
        assert!(text.contains("key: \"a\\\"b\"\n"), "{text}");
        assert!(!text.contains("key: \"\""), "{text}");
        assert_eq!(Example::from_text(&text).unwrap(), ex.clone());
    }

    #[test]
    fn renders_like_protobuf() {
        let ex = Example::builder()
            .bytes("s", vec![vec![0u8, 255, b'"', b'\\']])
            .build()
            .unwrap();
        assert_eq!(
            ex.to_text(),
            "features {\n  feature {\n    key: \"s\"\n    value {\n      bytes_list {\n        value: \"\\000\\377\\\"\\\\\"\n      }\n    }\n  }\n}\n"
        );
        assert_eq!(Example::from_text(&ex.to_text()).unwrap(), ex);
    }
}

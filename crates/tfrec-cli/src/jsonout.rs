//! JSON output with the CLI's one float formatting: a number that is an f32 widened to f64
//! (every float of a parsed tensor) prints as the shortest text that reads back as that f32
//! (protobuf's Python spelling, as `cat` prints floats), not as the widened double.

use std::io::{self, Write};

use serde_json::Value;
use tfrec::example::write_shortest_repr;

/// Writes `value` on one line.
pub fn write_value(out: &mut impl Write, value: &Value) -> io::Result<()> {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.is_finite() && f64::from(f as f32) == f => {
                let mut text = String::with_capacity(16);
                let _ = write_shortest_repr(&mut text, f as f32);
                out.write_all(text.as_bytes())
            }
            _ => write!(out, "{n}"),
        },
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_value(out, item)?;
            }
            out.write_all(b"]")
        }
        Value::Object(map) => {
            out.write_all(b"{")?;
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                write_value(out, item)?;
            }
            out.write_all(b"}")
        }
        other => serde_json::to_writer(&mut *out, other).map_err(io::Error::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_their_f32() {
        let value = serde_json::json!({"x": [f64::from(0.1f32), 2.5, 7], "s": "a\"b"});
        let mut out = Vec::new();
        write_value(&mut out, &value).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"x":[0.1,2.5,7],"s":"a\"b"}"#);
    }
}

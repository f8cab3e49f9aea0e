//! Floats printed as the protobuf Python library prints a `float` field, in text format and
//! JSON alike: the shortest `%g` precision (from 6 up) that reads back as the same f32, then
//! Python's `repr` of that number (`19.0`, `0.9876`, `1.4013e-45`, `-0.0`, `1e+16`).
//!
//! A ground-floor module, public as `tfrec::example::{shortest_repr, python_repr, …}`.
//!
//! Written without allocating: it is most of the time of printing float features as JSON
//! lines (`tfrec cat --format jsonl`), so digits are formatted into a stack buffer.

use std::fmt::{self, Write};

/// Formats an f32 the way protobuf's Python text format and `json_format` do. NaN and the
/// infinities are left to the caller, whose spellings differ (`nan` / `"NaN"`).
pub fn shortest_repr(value: f32) -> String {
    let mut out = String::with_capacity(16);
    let _ = write_shortest_repr(&mut out, value);
    out
}

/// [`shortest_repr`] into `out`, without allocating.
///
/// Protobuf tries `%.6g`, `%.7g`, … until the text reads back as the f32; so does this, in a
/// stack buffer. No precision below the f32's shortest round-trip length (the digits of
/// Rust's `{:e}`) can read back, so after 6 the search starts there: one or two tries.
pub fn write_shortest_repr<W: Write>(out: &mut W, value: f32) -> fmt::Result {
    debug_assert!(value.is_finite());
    let wide = f64::from(value);
    let mut buf = StackText::new();
    let try_precision = |buf: &mut StackText, precision: usize| -> Result<bool, fmt::Error> {
        buf.clear();
        write!(buf, "{:.*e}", precision - 1, wide)?;
        Ok(buf.as_str().parse::<f64>().is_ok_and(|c| c as f32 == value))
    };
    if !try_precision(&mut buf, 6)? {
        buf.clear();
        write!(buf, "{value:e}")?;
        let shortest = buf
            .as_str()
            .bytes()
            .take_while(|&b| b != b'e')
            .filter(u8::is_ascii_digit)
            .count();
        let mut precision = shortest.max(7);
        while !try_precision(&mut buf, precision)? && precision < 17 {
            precision += 1;
        }
    }
    write_python_digits(out, buf.as_str())
}

/// Python's `repr(float)` for a finite f64: the shortest round-trip digits, in positional form
/// when the decimal exponent is in [-4, 16), else scientific with at least two exponent digits.
pub fn python_repr(value: f64) -> String {
    let mut out = String::with_capacity(24);
    let _ = write_python_repr(&mut out, value);
    out
}

/// [`python_repr`] into `out`, without allocating.
pub fn write_python_repr<W: Write>(out: &mut W, value: f64) -> fmt::Result {
    let mut buf = StackText::new();
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.4013e-45", "1.9e1", "0e0".
    write!(buf, "{value:e}")?;
    write_python_digits(out, buf.as_str())
}

/// Lays out Rust scientific text (`-1.2300e5`; trailing zeros of the mantissa are dropped) as
/// Python's `repr` does.
fn write_python_digits<W: Write>(out: &mut W, sci: &str) -> fmt::Result {
    // A byte search rather than `split_once('e')`, whose char searcher the compiler may leave
    // out of line: this runs for every float `cat` prints.
    let (mantissa, exponent) = match sci.bytes().position(|b| b == b'e') {
        Some(e) => (&sci[..e], &sci[e + 1..]),
        None => (sci, "0"),
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let mut digits = [0u8; 40];
    let mut n = 0;
    for &b in mantissa.as_bytes().iter().filter(|b| b.is_ascii_digit()) {
        if n < digits.len() {
            digits[n] = b;
            n += 1;
        }
    }
    // `{:.5e}` keeps trailing zeros (`1.00000e0`); repr does not.
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    let digits = &digits[..n.max(1)];
    if negative {
        out.write_char('-')?;
    }
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        if point <= 0 {
            out.write_str("0.")?;
            for _ in 0..point.unsigned_abs() {
                out.write_char('0')?;
            }
            out.write_str(text(digits))
        } else if point as usize >= digits.len() {
            out.write_str(text(digits))?;
            for _ in 0..point as usize - digits.len() {
                out.write_char('0')?;
            }
            out.write_str(".0")
        } else {
            let (int_part, frac_part) = digits.split_at(point as usize);
            out.write_str(text(int_part))?;
            out.write_char('.')?;
            out.write_str(text(frac_part))
        }
    } else {
        out.write_str(text(&digits[..1]))?;
        if digits.len() > 1 {
            out.write_char('.')?;
            out.write_str(text(&digits[1..]))?;
        }
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        write!(out, "e{exp_sign}{:02}", exponent.unsigned_abs())
    }
}

/// ASCII digits as text.
fn text(digits: &[u8]) -> &str {
    std::str::from_utf8(digits).unwrap_or("0")
}

/// A fixed buffer for formatting one number; text beyond its capacity is an error (a float's
/// scientific form is at most ~30 bytes).
struct StackText {
    bytes: [u8; 64],
    len: usize,
}

impl StackText {
    fn new() -> Self {
        StackText { bytes: [0; 64], len: 0 }
    }
    fn clear(&mut self) {
        self.len = 0;
    }
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Protobuf's algorithm spelled out with allocations, as this module first had it: the
    /// reference the allocation-free version must match.
    fn reference_shortest_repr(value: f32) -> String {
        let wide = f64::from(value);
        let mut precision = 6;
        let rounded = loop {
            let candidate: f64 = format!("{:.*e}", precision - 1, wide).parse().unwrap_or(wide);
            if candidate as f32 == value || precision >= 17 {
                break candidate;
            }
            precision += 1;
        };
        reference_python_repr(rounded)
    }

    fn reference_python_repr(value: f64) -> String {
        let sci = format!("{value:e}");
        let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let (sign, mantissa) = match mantissa.strip_prefix('-') {
            Some(m) => ("-", m),
            None => ("", mantissa),
        };
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        if (-4..16).contains(&exponent) {
            let point = exponent + 1;
            let (int_part, frac_part) = if point <= 0 {
                (
                    "0".to_owned(),
                    format!("{}{digits}", "0".repeat(point.unsigned_abs() as usize)),
                )
            } else if point as usize >= digits.len() {
                (
                    format!("{digits}{}", "0".repeat(point as usize - digits.len())),
                    String::new(),
                )
            } else {
                (digits[..point as usize].to_owned(), digits[point as usize..].to_owned())
            };
            let frac_part = if frac_part.is_empty() {
                "0".to_owned()
            } else {
                frac_part
            };
            format!("{sign}{int_part}.{frac_part}")
        } else {
            let mantissa = if digits.len() == 1 {
                digits
            } else {
                format!("{}.{}", &digits[..1], &digits[1..])
            };
            let exp_sign = if exponent < 0 { '-' } else { '+' };
            format!("{sign}{mantissa}e{exp_sign}{:02}", exponent.unsigned_abs())
        }
    }

    #[test]
    fn matches_protobuf_python() {
        let cases: [(f32, &str); 12] = [
            (0.9876, "0.9876"),
            (19.0, "19.0"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1.4013e-45, "1.4013e-45"),
            (std::f32::consts::E, "2.7182817"),
            (4.5, "4.5"),
            (1e16, "1e+16"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (123456789.0, "123456790.0"),
            (f32::MAX, "3.4028235e+38"),
        ];
        for (value, expected) in cases {
            assert_eq!(shortest_repr(value), expected, "{value:e}");
        }
    }

    #[test]
    fn python_repr_of_doubles() {
        for (value, expected) in [(0.1, "0.1"), (1e22, "1e+22"), (-2.5e-7, "-2.5e-07"), (123.0, "123.0")] {
            assert_eq!(python_repr(value), expected);
            assert_eq!(python_repr(value), reference_python_repr(value));
        }
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_reference(bits in proptest::prelude::any::<u32>()) {
            let value = f32::from_bits(bits);
            proptest::prop_assume!(value.is_finite());
            let text = shortest_repr(value);
            proptest::prop_assert_eq!(&text, &reference_shortest_repr(value));
            proptest::prop_assert_eq!(text.parse::<f32>().map(f32::to_bits).ok(), Some(bits));
        }
    }

    #[test]
    fn agrees_with_the_reference_on_every_exponent() {
        for exp in 0..=254u32 {
            for mantissa in [0u32, 1, 0x7f_ffff, 0x40_0000, 0x12_3456] {
                let value = f32::from_bits((exp << 23) | mantissa);
                assert_eq!(shortest_repr(value), reference_shortest_repr(value), "{value:e}");
            }
        }
    }

    /// `cargo test -p tfrec --release --lib pyfloat::tests::speed -- --ignored --nocapture`:
    /// the formatter against the allocating reference, in the same run.
    #[test]
    #[ignore]
    fn speed() {
        let values: Vec<f32> = (0..1_000_000u32)
            .map(|i| (i as f32) * 0.37 + 1.0 / (i as f32 + 3.0))
            .collect();
        let time = |f: &dyn Fn(f32) -> usize| {
            let start = std::time::Instant::now();
            let total: usize = values.iter().map(|&v| f(v)).sum();
            (start.elapsed().as_secs_f64(), total)
        };
        let mut out = String::new();
        let cell = std::cell::RefCell::new(&mut out);
        let (new, a) = time(&|v| {
            let mut o = cell.borrow_mut();
            o.clear();
            let _ = write_shortest_repr(&mut **o, v);
            o.len()
        });
        let (old, b) = time(&|v| reference_shortest_repr(v).len());
        assert_eq!(a, b);
        println!(
            "shortest_repr: {new:.3} s vs reference {old:.3} s: {:.2}x faster",
            old / new
        );
    }
}

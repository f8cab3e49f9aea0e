//! Floats printed as the protobuf Python library prints a `float` field, in text format and
//! JSON alike: the shortest `%g` precision (from 6 up) that reads back as the same f32, then
//! Python's `repr` of that number (`19.0`, `0.9876`, `1.4013e-45`, `-0.0`, `1e+16`).

/// Formats an f32 the way protobuf's Python text format and `json_format` do. NaN and the
/// infinities are left to the caller, whose spellings differ (`nan` / `"NaN"`).
pub fn shortest_repr(value: f32) -> String {
    debug_assert!(value.is_finite());
    let wide = f64::from(value);
    let mut precision = 6;
    let rounded = loop {
        // `{:.N$e}` rounds correctly to N+1 significant digits, as C's `%.*g` does.
        let candidate: f64 = format!("{:.*e}", precision - 1, wide).parse().unwrap_or(wide);
        if candidate as f32 == value || precision >= 17 {
            break candidate;
        }
        precision += 1;
    };
    python_repr(rounded)
}

/// Python's `repr(float)` for a finite f64: the shortest round-trip digits, in positional form
/// when the decimal exponent is in [-4, 16), else scientific with at least two exponent digits.
pub fn python_repr(value: f64) -> String {
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.4013e-45", "1.9e1", "0e0".
    let sci = format!("{value:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

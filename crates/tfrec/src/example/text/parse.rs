//! Protobuf text format read back into `Example` and `SequenceExample`: the `[a, b]` list
//! shorthand, `<...>` message brackets, comments and adjacent string concatenation included,
//! with line and column in every error.

use std::fmt;

use crate::example::model::{Example, Feature, FeatureList, FeatureLists, Features, Kind, SequenceExample};

/// Text that is not a valid `Example` / `SequenceExample` in text format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TextError {
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column (in characters) of the problem.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

/// Parses an Example from protobuf text format ([`Message::from_text`](crate::example::Message::from_text)).
pub(in crate::example) fn example_from_text(text: &str) -> Result<Example, TextError> {
    let mut p = Parser::new(text);
    let mut example = Example::default();
    p.fields(None, |p, name| match name {
        "features" => p.message(|p| parse_features(p, example.features_mut())),
        _ => Err(p.unknown_field(name, "Example")),
    })?;
    Ok(example)
}

/// Parses a SequenceExample from protobuf text format.
pub(in crate::example) fn sequence_example_from_text(text: &str) -> Result<SequenceExample, TextError> {
    let mut p = Parser::new(text);
    let mut seq = SequenceExample::default();
    p.fields(None, |p, name| match name {
        "context" => p.message(|p| parse_features(p, seq.context_mut())),
        "feature_lists" => p.message(|p| parse_feature_lists(p, seq.feature_lists_mut())),
        _ => Err(p.unknown_field(name, "SequenceExample")),
    })?;
    Ok(seq)
}

fn parse_features(p: &mut Parser<'_>, into: &mut Features) -> Result<(), TextError> {
    p.fields(Some(p.closer()), |p, name| match name {
        "feature" => p.message(|p| {
            let mut key = String::new();
            let mut value = Feature::None;
            p.fields(Some(p.closer()), |p, name| match name {
                "key" => {
                    key = p.string_field()?;
                    Ok(())
                }
                "value" => p.message(|p| parse_feature(p, &mut value)),
                _ => Err(p.unknown_field(name, "Features.FeatureEntry")),
            })?;
            into.insert(key, value);
            Ok(())
        }),
        _ => Err(p.unknown_field(name, "Features")),
    })
}

fn parse_feature_lists(p: &mut Parser<'_>, into: &mut FeatureLists) -> Result<(), TextError> {
    p.fields(Some(p.closer()), |p, name| match name {
        "feature_list" => p.message(|p| {
            let mut key = String::new();
            let mut value = FeatureList::default();
            p.fields(Some(p.closer()), |p, name| match name {
                "key" => {
                    key = p.string_field()?;
                    Ok(())
                }
                "value" => p.message(|p| {
                    p.fields(Some(p.closer()), |p, name| match name {
                        "feature" => p.message(|p| {
                            let mut feature = Feature::None;
                            parse_feature(p, &mut feature)?;
                            value.feature.push(feature);
                            Ok(())
                        }),
                        _ => Err(p.unknown_field(name, "FeatureList")),
                    })
                }),
                _ => Err(p.unknown_field(name, "FeatureLists.FeatureListEntry")),
            })?;
            into.feature_list.insert(key, value);
            Ok(())
        }),
        _ => Err(p.unknown_field(name, "FeatureLists")),
    })
}

/// Parses the body of a `Feature`, merging as binary decoding does (a new kind replaces).
fn parse_feature(p: &mut Parser<'_>, into: &mut Feature) -> Result<(), TextError> {
    p.fields(Some(p.closer()), |p, name| match Kind::from_list_name(name) {
        Some(Kind::Bytes) => {
            let mut values = match std::mem::take(into) {
                Feature::Bytes(v) => v,
                _ => Vec::new(),
            };
            let result = p.message(|p| {
                p.list_values("BytesList", |p| {
                    values.push(p.bytes_value()?);
                    Ok(())
                })
            });
            *into = Feature::Bytes(values);
            result
        }
        Some(Kind::Float) => {
            let mut values = match std::mem::take(into) {
                Feature::Float(v) => v,
                _ => Vec::new(),
            };
            let result = p.message(|p| {
                p.list_values("FloatList", |p| {
                    values.push(p.float_value()?);
                    Ok(())
                })
            });
            *into = Feature::Float(values);
            result
        }
        Some(Kind::Int64) => {
            let mut values = match std::mem::take(into) {
                Feature::Int64(v) => v,
                _ => Vec::new(),
            };
            let result = p.message(|p| {
                p.list_values("Int64List", |p| {
                    values.push(p.int_value()?);
                    Ok(())
                })
            });
            *into = Feature::Int64(values);
            result
        }
        None => Err(p.unknown_field(name, "Feature")),
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    /// A string literal, escapes resolved, adjacent literals concatenated.
    Str(Vec<u8>),
    /// A number as written (sign excluded).
    Number(String),
    Punct(char),
    End,
}

struct Parser<'t> {
    text: &'t str,
    pos: usize,
    peeked: Option<(Token, usize)>,
    /// The bracket that closes the message being parsed: `}` or `>`.
    closers: Vec<char>,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Self {
        Parser {
            text,
            pos: 0,
            peeked: None,
            closers: Vec::new(),
        }
    }

    fn closer(&self) -> char {
        self.closers.last().copied().unwrap_or('}')
    }

    fn error_at(&self, offset: usize, message: impl Into<String>) -> TextError {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        TextError {
            line,
            column,
            message: message.into(),
        }
    }

    fn unknown_field(&mut self, name: &str, message: &str) -> TextError {
        let at = self.pos.saturating_sub(name.len());
        self.error_at(at, format!("{message} has no field named {name:?}"))
    }

    fn skip_space_and_comments(&mut self) {
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() {
            match bytes[self.pos] {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'#' => {
                    while self.pos < bytes.len() && bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// The next token and where it starts.
    fn next(&mut self) -> Result<(Token, usize), TextError> {
        if let Some(t) = self.peeked.take() {
            return Ok(t);
        }
        self.skip_space_and_comments();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let Some(&c) = bytes.get(self.pos) else {
            return Ok((Token::End, start));
        };
        let token = match c {
            b'"' | b'\'' => {
                let mut value = Vec::new();
                loop {
                    self.string_literal(&mut value)?;
                    self.skip_space_and_comments();
                    if !matches!(bytes.get(self.pos), Some(b'"' | b'\'')) {
                        break;
                    }
                }
                Token::Str(value)
            }
            b'0'..=b'9' | b'.' => {
                while self.pos < bytes.len()
                    && (bytes[self.pos].is_ascii_alphanumeric()
                        || bytes[self.pos] == b'.'
                        || ((bytes[self.pos] == b'-' || bytes[self.pos] == b'+')
                            && matches!(bytes[self.pos - 1], b'e' | b'E')
                            && !self.text[start..self.pos].starts_with("0x")))
                {
                    self.pos += 1;
                }
                Token::Number(self.text[start..self.pos].to_owned())
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while self.pos < bytes.len() && (bytes[self.pos].is_ascii_alphanumeric() || bytes[self.pos] == b'_') {
                    self.pos += 1;
                }
                Token::Ident(self.text[start..self.pos].to_owned())
            }
            b'{' | b'}' | b'<' | b'>' | b'[' | b']' | b':' | b',' | b';' | b'-' => {
                self.pos += 1;
                Token::Punct(c as char)
            }
            _ => {
                let ch = self.text[start..].chars().next().unwrap_or('?');
                return Err(self.error_at(start, format!("unexpected character {ch:?}")));
            }
        };
        Ok((token, start))
    }

    fn peek(&mut self) -> Result<&Token, TextError> {
        if self.peeked.is_none() {
            let t = self.next()?;
            self.peeked = Some(t);
        }
        Ok(self.peeked.as_ref().map(|(t, _)| t).unwrap_or(&Token::End))
    }

    fn expect_punct(&mut self, c: char) -> Result<(), TextError> {
        match self.next()? {
            (Token::Punct(p), _) if p == c => Ok(()),
            (t, at) => Err(self.error_at(at, format!("expected {c:?}, found {}", describe(&t)))),
        }
    }

    fn eat_punct(&mut self, c: char) -> Result<bool, TextError> {
        if self.peek()? == &Token::Punct(c) {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Reads one quoted literal at `pos`, appending its bytes.
    fn string_literal(&mut self, out: &mut Vec<u8>) -> Result<(), TextError> {
        let bytes = self.text.as_bytes();
        let quote = bytes[self.pos];
        let start = self.pos;
        self.pos += 1;
        loop {
            let Some(&c) = bytes.get(self.pos) else {
                return Err(self.error_at(start, "unterminated string"));
            };
            self.pos += 1;
            match c {
                b'\n' => return Err(self.error_at(start, "a string may not span lines")),
                c if c == quote => return Ok(()),
                b'\\' => self.escape(out)?,
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), TextError> {
        let bytes = self.text.as_bytes();
        let at = self.pos - 1;
        let Some(&c) = bytes.get(self.pos) else {
            return Err(self.error_at(at, "unterminated escape"));
        };
        self.pos += 1;
        let simple = match c {
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'v' => Some(11),
            b'?' => Some(b'?'),
            b'"' | b'\'' | b'\\' => Some(c),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            return Ok(());
        }
        let digits = |p: &mut Self, radix: u32, max: usize| {
            let start = p.pos;
            while p.pos < bytes.len() && p.pos - start < max && (bytes[p.pos] as char).is_digit(radix) {
                p.pos += 1;
            }
            u32::from_str_radix(&p.text[start..p.pos], radix).ok()
        };
        match c {
            b'0'..=b'7' => {
                self.pos -= 1;
                let v = digits(self, 8, 3).filter(|&v| v <= 255);
                out.push(v.ok_or_else(|| self.error_at(at, "octal escape above \\377"))? as u8);
            }
            b'x' => {
                let v = digits(self, 16, 2).ok_or_else(|| self.error_at(at, "\\x needs hex digits"))?;
                out.push(v as u8);
            }
            b'u' | b'U' => {
                let n = if c == b'u' { 4 } else { 8 };
                let v = digits(self, 16, n).ok_or_else(|| self.error_at(at, "bad unicode escape"))?;
                let ch = char::from_u32(v).ok_or_else(|| self.error_at(at, "not a unicode scalar value"))?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            _ => return Err(self.error_at(at, format!("unknown escape \\{}", c as char))),
        }
        Ok(())
    }

    /// Reads fields until `end` (or the end of input for the top level), calling `field` with
    /// each name; `field` consumes the value. `,` or `;` may follow any field.
    fn fields(
        &mut self,
        end: Option<char>,
        mut field: impl FnMut(&mut Self, &str) -> Result<(), TextError>,
    ) -> Result<(), TextError> {
        loop {
            match self.next()? {
                (Token::End, at) => {
                    return match end {
                        None => Ok(()),
                        Some(c) => Err(self.error_at(at, format!("expected {c:?} before the end of the text"))),
                    }
                }
                (Token::Punct(c), _) if Some(c) == end => return Ok(()),
                (Token::Ident(name), _) => {
                    field(self, &name)?;
                    if !self.eat_punct(',')? {
                        self.eat_punct(';')?;
                    }
                }
                (t, at) => return Err(self.error_at(at, format!("expected a field name, found {}", describe(&t)))),
            }
        }
    }

    /// A message value: `[:] { ... }` or `[:] < ... >`, or a list of them `: [ {...}, {...} ]`;
    /// `body` parses each message's fields (it ends at [`Parser::closer`]).
    fn message(&mut self, mut body: impl FnMut(&mut Self) -> Result<(), TextError>) -> Result<(), TextError> {
        let colon = self.eat_punct(':')?;
        if colon && self.eat_punct('[')? {
            if self.eat_punct(']')? {
                return Ok(());
            }
            loop {
                self.one_message(&mut body)?;
                if self.eat_punct(']')? {
                    return Ok(());
                }
                self.expect_punct(',')?;
            }
        }
        self.one_message(&mut body)
    }

    fn one_message(&mut self, body: &mut impl FnMut(&mut Self) -> Result<(), TextError>) -> Result<(), TextError> {
        let closer = match self.next()? {
            (Token::Punct('{'), _) => '}',
            (Token::Punct('<'), _) => '>',
            (t, at) => return Err(self.error_at(at, format!("expected '{{' or '<', found {}", describe(&t)))),
        };
        self.closers.push(closer);
        let result = body(self);
        self.closers.pop();
        result
    }

    /// The fields of a `*List` message: only `value`, as `value: x` or `value: [x, y]`.
    fn list_values(
        &mut self,
        message: &str,
        mut value: impl FnMut(&mut Self) -> Result<(), TextError>,
    ) -> Result<(), TextError> {
        let end = self.closer();
        self.fields(Some(end), |p, name| {
            if name != "value" {
                return Err(p.unknown_field(name, message));
            }
            p.expect_punct(':')?;
            if p.eat_punct('[')? {
                if p.eat_punct(']')? {
                    return Ok(());
                }
                loop {
                    value(p)?;
                    if p.eat_punct(']')? {
                        return Ok(());
                    }
                    p.expect_punct(',')?;
                }
            }
            value(p)
        })
    }

    fn string_field(&mut self) -> Result<String, TextError> {
        self.expect_punct(':')?;
        let (token, at) = self.next()?;
        match token {
            Token::Str(bytes) => String::from_utf8(bytes).map_err(|_| self.error_at(at, "a key must be valid UTF-8")),
            t => Err(self.error_at(at, format!("expected a string, found {}", describe(&t)))),
        }
    }

    fn bytes_value(&mut self) -> Result<Vec<u8>, TextError> {
        match self.next()? {
            (Token::Str(bytes), _) => Ok(bytes),
            (t, at) => Err(self.error_at(at, format!("expected a string, found {}", describe(&t)))),
        }
    }

    /// An optional minus sign, then a number or identifier.
    fn signed(&mut self) -> Result<(bool, Token, usize), TextError> {
        let negative = self.eat_punct('-')?;
        let (token, at) = self.next()?;
        Ok((negative, token, at))
    }

    fn int_value(&mut self) -> Result<i64, TextError> {
        let (negative, token, at) = self.signed()?;
        let Token::Number(text) = &token else {
            return Err(self.error_at(at, format!("expected an integer, found {}", describe(&token))));
        };
        let (digits, radix) = if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (hex, 16)
        } else if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text.as_str(), 10)
        };
        let magnitude =
            u64::from_str_radix(digits, radix).map_err(|_| self.error_at(at, format!("not an integer: {text}")))?;
        let value = if negative {
            0i64.checked_sub_unsigned(magnitude)
        } else {
            i64::try_from(magnitude).ok()
        };
        value.ok_or_else(|| {
            self.error_at(
                at,
                format!("integer out of int64 range: {}{text}", if negative { "-" } else { "" }),
            )
        })
    }

    fn float_value(&mut self) -> Result<f32, TextError> {
        let (negative, token, at) = self.signed()?;
        let magnitude = match &token {
            Token::Number(text) => {
                let trimmed = text.trim_end_matches(['f', 'F']);
                let parsed = if trimmed.starts_with("0x") || trimmed.starts_with("0X") {
                    u64::from_str_radix(&trimmed[2..], 16).ok().map(|v| v as f64)
                } else {
                    trimmed.parse::<f64>().ok()
                };
                parsed.ok_or_else(|| self.error_at(at, format!("not a number: {text}")))? as f32
            }
            Token::Ident(word) => match word.to_ascii_lowercase().as_str() {
                "inf" | "infinity" => f32::INFINITY,
                "nan" => f32::NAN,
                _ => return Err(self.error_at(at, format!("not a number: {word}"))),
            },
            t => return Err(self.error_at(at, format!("expected a number, found {}", describe(t)))),
        };
        Ok(if negative { -magnitude } else { magnitude })
    }
}

fn describe(token: &Token) -> String {
    match token {
        Token::Ident(s) => format!("{s:?}"),
        Token::Str(_) => "a string".to_owned(),
        Token::Number(n) => n.clone(),
        Token::Punct(c) => format!("{c:?}"),
        Token::End => "the end of the text".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorthand_comments_and_brackets() {
        let text = r#"
            # a comment
            features <
              feature { key: "v" value { int64_list { value: [3, 1, 4] } } }
              feature: { key: 'w' 'x', value: { float_list: { value: -1.5 value: inf value: 2 } } };
              feature { key: "b\x41\101\n" value { bytes_list { value: ["a", "b" "c"] } } }
            >"#;
        let ex = Example::from_text(text).unwrap();
        assert_eq!(ex.get("v"), Some(&Feature::Int64(vec![3, 1, 4])));
        assert_eq!(ex.get("wx"), Some(&Feature::Float(vec![-1.5, f32::INFINITY, 2.0])));
        assert_eq!(
            ex.get("bAA\n"),
            Some(&Feature::Bytes(vec![b"a".to_vec(), b"bc".to_vec()]))
        );
    }

    #[test]
    fn int64_extremes_and_errors() {
        let ex = Example::from_text(
            r#"features { feature { key: "i" value { int64_list { value: -9223372036854775808 value: 0x10 } } } }"#,
        )
        .unwrap();
        assert_eq!(ex.get("i"), Some(&Feature::Int64(vec![i64::MIN, 16])));
        let err = Example::from_text("features {\n  feature { key: \"i\" value { int64_list { value: 1.5 } } }\n}")
            .unwrap_err();
        assert_eq!(err.line, 2);
        assert!(Example::from_text("featurez {}")
            .unwrap_err()
            .message
            .contains("featurez"));
        assert!(Example::from_text("features { feature {").is_err());
    }
}

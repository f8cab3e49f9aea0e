//! JSON renderings of `Example` and `SequenceExample`.
//!
//! - Protobuf's JSON mapping, laid out exactly as Python's `json_format.MessageToJson` prints it
//!   (two-space indent, ASCII only): int64 as strings, bytes as base64, `NaN`/`Infinity` as
//!   strings, camelCase field names.
//! - A friendlier one-line form for humans and scripts: `{"age": [19], "name": ["goat"]}`, with
//!   bytes as UTF-8 strings where valid (else `{"base64": "…"}`), floats always with a decimal
//!   point or exponent (`19.0`), NaN and the infinities as the strings `"NaN"`, `"Infinity"`,
//!   `"-Infinity"`, and a feature with no kind as `null`. It converts back exactly given the
//!   kind of each feature ([`TypeHints`]); without hints the kind is inferred from the values.

use std::collections::HashMap;
use std::fmt;

use base64::Engine;
use serde_json::Value;

use super::model::{Example, Feature, FeatureList, FeatureLists, Features, Kind, SequenceExample};
use super::pyfloat::write_shortest_repr;

/// A JSON tree borrowed from a message: lists of values stay the message's own slices and are
/// formatted one value at a time as they are written, so rendering a huge record needs little
/// more than its output.
enum Json<'a> {
    Object(Vec<(&'a str, Json<'a>)>),
    Array(Vec<Json<'a>>),
    Null,
    /// Floats (NaN and the infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`).
    Floats(&'a [f32]),
    /// int64s as numbers.
    Ints(&'a [i64]),
    /// int64s as strings, as protobuf's JSON mapping writes them.
    IntStrings(&'a [i64]),
    /// Bytes as base64 strings (protobuf's mapping).
    Base64(&'a [Vec<u8>]),
    /// Bytes as UTF-8 strings where valid, else `{"base64": "…"}` (the friendly form).
    FriendlyBytes(&'a [Vec<u8>]),
}

impl Json<'_> {
    /// Python's `json.dumps(value, indent=2)` (ensure_ascii on).
    fn pretty(&self) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out, Some(0));
        out
    }

    /// Python's `json.dumps(value)`: one line, `", "` and `": "` separators.
    fn compact(&self) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out, None);
        out
    }

    fn write<W: fmt::Write>(&self, out: &mut W, level: Option<usize>) -> fmt::Result {
        let brackets = ('[', ']');
        match self {
            Json::Null => out.write_str("null"),
            Json::Array(items) => write_items(out, level, brackets, items.len(), |out, i, l| items[i].write(out, l)),
            Json::Object(items) => write_items(out, level, ('{', '}'), items.len(), |out, i, l| {
                write_json_string(out, items[i].0)?;
                out.write_str(": ")?;
                items[i].1.write(out, l)
            }),
            Json::Floats(v) => write_items(out, level, brackets, v.len(), |out, i, _| write_float(out, v[i])),
            Json::Ints(v) => write_items(out, level, brackets, v.len(), |out, i, _| write!(out, "{}", v[i])),
            Json::IntStrings(v) => write_items(out, level, brackets, v.len(), |out, i, _| write!(out, "\"{}\"", v[i])),
            Json::Base64(v) => write_items(out, level, brackets, v.len(), |out, i, _| {
                write_json_string(out, &base64(&v[i]))
            }),
            Json::FriendlyBytes(v) => {
                write_items(out, level, brackets, v.len(), |out, i, _| {
                    match std::str::from_utf8(&v[i]) {
                        Ok(s) => write_json_string(out, s),
                        Err(_) => {
                            out.write_str("{\"base64\": ")?;
                            write_json_string(out, &base64(&v[i]))?;
                            out.write_char('}')
                        }
                    }
                })
            }
        }
    }
}

/// The items of an array or an object (written by `item`, given its index and level), as
/// `json.dumps` lays them out: on one line with `", "` when `level` is `None`, else one per
/// line, indented two spaces per level.
fn write_items<W: fmt::Write>(
    out: &mut W,
    level: Option<usize>,
    (open, close): (char, char),
    len: usize,
    mut item: impl FnMut(&mut W, usize, Option<usize>) -> fmt::Result,
) -> fmt::Result {
    let newline = |out: &mut W, level: usize| -> fmt::Result {
        out.write_char('\n')?;
        for _ in 0..level {
            out.write_str("  ")?;
        }
        Ok(())
    };
    out.write_char(open)?;
    for i in 0..len {
        if i > 0 {
            out.write_char(',')?;
            if level.is_none() {
                out.write_char(' ')?;
            }
        }
        if let Some(l) = level {
            newline(out, l + 1)?;
        }
        item(out, i, level.map(|l| l + 1))?;
    }
    if let (Some(l), true) = (level, len > 0) {
        newline(out, l)?;
    }
    out.write_char(close)
}

/// A JSON string with Python's `ensure_ascii` escaping.
fn write_json_string<W: fmt::Write>(out: &mut W, s: &str) -> fmt::Result {
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

/// Bytes in standard base64, as both the messages' and the tensors' JSON write them.
pub(crate) fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The JSON string of a float32 that JSON numbers cannot hold (`NaN`, `Infinity`,
/// `-Infinity`), for the messages' and the tensors' JSON alike.
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

fn write_float<W: fmt::Write>(out: &mut W, v: f32) -> fmt::Result {
    match special_float(v) {
        Some(s) => write_json_string(out, s),
        None => write_shortest_repr(out, v),
    }
}

// ---- protobuf JSON mapping --------------------------------------------------------------------

fn proto_feature(feature: &Feature) -> Json<'_> {
    let (name, values, empty) = match feature {
        Feature::None => return Json::Object(vec![]),
        Feature::Bytes(v) => ("bytesList", Json::Base64(v), v.is_empty()),
        Feature::Float(v) => ("floatList", Json::Floats(v), v.is_empty()),
        Feature::Int64(v) => ("int64List", Json::IntStrings(v), v.is_empty()),
    };
    let list = if empty { vec![] } else { vec![("value", values)] };
    Json::Object(vec![(name, Json::Object(list))])
}

fn proto_features(features: &Features) -> Json<'_> {
    if features.is_empty() {
        return Json::Object(vec![]);
    }
    let map = features.iter().map(|(k, f)| (k, proto_feature(f))).collect();
    Json::Object(vec![("feature", Json::Object(map))])
}

fn proto_feature_list(list: &FeatureList) -> Json<'_> {
    if list.feature.is_empty() {
        return Json::Object(vec![]);
    }
    let rows = list.feature.iter().map(proto_feature).collect();
    Json::Object(vec![("feature", Json::Array(rows))])
}

fn proto_feature_lists(lists: &FeatureLists) -> Json<'_> {
    if lists.feature_list.is_empty() {
        return Json::Object(vec![]);
    }
    let map = lists.iter().map(|(k, l)| (k, proto_feature_list(l))).collect();
    Json::Object(vec![("featureList", Json::Object(map))])
}

/// Writes `json` into an `fmt::Write` on one line.
fn write_line<W: fmt::Write>(json: &Json<'_>, out: &mut W) -> fmt::Result {
    json.write(out, None)
}

impl Example {
    /// Protobuf's JSON mapping, as `json_format.MessageToJson(example)` prints it.
    pub fn to_json(&self) -> String {
        self.proto_json().pretty()
    }

    /// Protobuf's JSON mapping on one line (a JSON-lines item): [`Example::to_json`] without
    /// the line breaks and indentation.
    pub fn to_json_line(&self) -> String {
        self.proto_json().compact()
    }

    /// [`Example::to_json_line`] written piece by piece into `out`.
    pub fn write_json_line<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        write_line(&self.proto_json(), out)
    }

    fn proto_json(&self) -> Json<'_> {
        let mut fields = vec![];
        if let Some(f) = &self.features {
            fields.push(("features", proto_features(f)));
        }
        Json::Object(fields)
    }

    /// The friendly one-line JSON form: `{"age": [19], "name": ["goat"]}`, bytes as UTF-8 strings
    /// where valid (else `{"base64": "…"}`), floats always with a decimal point or exponent.
    pub fn to_friendly_json(&self) -> String {
        friendly_features(self.features()).compact()
    }

    /// [`Example::to_friendly_json`] written piece by piece into `out`.
    pub fn write_friendly_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        write_line(&friendly_features(self.features()), out)
    }

    /// Reads the friendly JSON form; `hints` gives the kind of features whose values do not
    /// show it (empty lists, integers meant as floats, strings that look like NaN).
    pub fn from_friendly_json(text: &str, hints: &TypeHints) -> Result<Example, FriendlyJsonError> {
        let value: Value = serde_json::from_str(text).map_err(syntax_error)?;
        let object = value.as_object().ok_or(FriendlyJsonError::NotAnObject)?;
        let mut example = Example::default();
        let features = example.features_mut();
        for (key, v) in object {
            features.insert(key.clone(), friendly_feature(key, v, hints.get(key))?);
        }
        Ok(example)
    }
}

impl SequenceExample {
    /// Protobuf's JSON mapping, as `json_format.MessageToJson(seq)` prints it.
    pub fn to_json(&self) -> String {
        self.proto_json().pretty()
    }

    /// Protobuf's JSON mapping on one line (a JSON-lines item).
    pub fn to_json_line(&self) -> String {
        self.proto_json().compact()
    }

    /// [`SequenceExample::to_json_line`] written piece by piece into `out`.
    pub fn write_json_line<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        write_line(&self.proto_json(), out)
    }

    fn proto_json(&self) -> Json<'_> {
        let mut fields = vec![];
        if let Some(c) = &self.context {
            fields.push(("context", proto_features(c)));
        }
        if let Some(l) = &self.feature_lists {
            fields.push(("featureLists", proto_feature_lists(l)));
        }
        Json::Object(fields)
    }

    /// The friendly one-line form: `{"context": {...}, "feature_lists": {"k": [[...], ...]}}`.
    pub fn to_friendly_json(&self) -> String {
        self.friendly_json().compact()
    }

    /// [`SequenceExample::to_friendly_json`] written piece by piece into `out`.
    pub fn write_friendly_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        write_line(&self.friendly_json(), out)
    }

    fn friendly_json(&self) -> Json<'_> {
        let mut fields = vec![];
        if let Some(c) = &self.context {
            fields.push(("context", friendly_features(c)));
        }
        if let Some(lists) = &self.feature_lists {
            let map = lists
                .iter()
                .map(|(k, l)| (k, Json::Array(l.feature.iter().map(friendly_values).collect())))
                .collect();
            fields.push(("feature_lists", Json::Object(map)));
        }
        Json::Object(fields)
    }

    /// Reads the friendly form; hints apply to context features and feature lists by name.
    pub fn from_friendly_json(text: &str, hints: &TypeHints) -> Result<SequenceExample, FriendlyJsonError> {
        let value: Value = serde_json::from_str(text).map_err(syntax_error)?;
        let object = value.as_object().ok_or(FriendlyJsonError::NotAnObject)?;
        let mut seq = SequenceExample::default();
        for (field, v) in object {
            match field.as_str() {
                "context" => {
                    let context = seq.context_mut();
                    for (key, v) in v.as_object().ok_or(FriendlyJsonError::NotAnObject)? {
                        context.insert(key.clone(), friendly_feature(key, v, hints.get(key))?);
                    }
                }
                "feature_lists" => {
                    let lists = seq.feature_lists_mut();
                    for (key, steps) in v.as_object().ok_or(FriendlyJsonError::NotAnObject)? {
                        let steps = steps.as_array().ok_or_else(|| FriendlyJsonError::Value {
                            key: key.clone(),
                            reason: "a feature list must be a list of steps".into(),
                        })?;
                        // All steps of a list share one kind: infer it over all of them.
                        let kind = match hints.get(key) {
                            Some(k) => Some(*k),
                            None => infer_kind(steps.iter().flat_map(|s| s.as_array().into_iter().flatten())),
                        };
                        let feature = steps
                            .iter()
                            .map(|s| friendly_feature(key, s, kind.as_ref()))
                            .collect::<Result<_, _>>()?;
                        lists.feature_list.insert(key.clone(), FeatureList { feature });
                    }
                }
                other => {
                    return Err(FriendlyJsonError::Value {
                        key: other.to_owned(),
                        reason: "a SequenceExample has only \"context\" and \"feature_lists\"".into(),
                    })
                }
            }
        }
        Ok(seq)
    }
}

// ---- the friendly form ----------------------------------------------------------------------

fn syntax_error(e: serde_json::Error) -> FriendlyJsonError {
    FriendlyJsonError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    }
}

/// The kind of each feature, by name, for reading the friendly JSON form back exactly.
pub type TypeHints = HashMap<String, Kind>;

/// Friendly JSON that cannot become a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FriendlyJsonError {
    /// Text that is not JSON.
    #[error("invalid JSON: {message}")]
    Syntax {
        /// The line of the error (1-based; 0 at the end of the text).
        line: usize,
        /// The column of the error (1-based).
        column: usize,
        /// serde_json's message, with the place.
        message: String,
    },
    /// JSON that is not an object.
    #[error("expected a JSON object of features")]
    NotAnObject,
    /// A feature whose values cannot be read.
    #[error("feature {key:?}: {reason}")]
    Value {
        /// The feature.
        key: String,
        /// Why its values cannot be read.
        reason: String,
    },
}

fn friendly_values(feature: &Feature) -> Json<'_> {
    match feature {
        Feature::None => Json::Null,
        Feature::Int64(v) => Json::Ints(v),
        Feature::Float(v) => Json::Floats(v),
        Feature::Bytes(v) => Json::FriendlyBytes(v),
    }
}

fn friendly_features(features: &Features) -> Json<'_> {
    Json::Object(features.iter().map(|(k, f)| (k, friendly_values(f))).collect())
}

/// The kind the values show: integers only → int64; any non-integer number or a NaN /
/// Infinity string among numbers → float; strings or base64 objects → bytes.
fn infer_kind<'v>(values: impl Iterator<Item = &'v Value>) -> Option<Kind> {
    let (mut ints, mut floats, mut strings, mut specials) = (0, 0, 0, 0);
    for v in values {
        match v {
            Value::Number(n) if n.is_i64() || n.is_u64() => ints += 1,
            Value::Number(_) => floats += 1,
            Value::String(s) if matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") => specials += 1,
            _ => strings += 1,
        }
    }
    if strings > 0 || (specials > 0 && ints + floats == 0) {
        Some(Kind::Bytes)
    } else if floats + specials > 0 {
        Some(Kind::Float)
    } else if ints > 0 {
        Some(Kind::Int64)
    } else {
        None
    }
}

fn friendly_feature(key: &str, value: &Value, hint: Option<&Kind>) -> Result<Feature, FriendlyJsonError> {
    let bad = |reason: String| FriendlyJsonError::Value {
        key: key.to_owned(),
        reason,
    };
    let one;
    let values: &[Value] = match value {
        Value::Null => return Ok(Feature::None),
        Value::Array(items) => items,
        scalar => {
            one = [scalar.clone()];
            &one
        }
    };
    let kind = match hint {
        Some(k) => *k,
        None => match infer_kind(values.iter()) {
            Some(k) => k,
            None => return Err(bad("an empty list does not show its kind: give a type hint".into())),
        },
    };
    Ok(match kind {
        Kind::Int64 => Feature::Int64(
            values
                .iter()
                .map(|v| v.as_i64().ok_or_else(|| bad(format!("{v} is not an int64"))))
                .collect::<Result<_, _>>()?,
        ),
        Kind::Float => Feature::Float(
            values
                .iter()
                .map(|v| match v {
                    Value::Number(n) => n
                        .as_f64()
                        .map(|f| f as f32)
                        .ok_or_else(|| bad(format!("{v} is not a float"))),
                    Value::String(s) => match s.as_str() {
                        "NaN" => Ok(f32::NAN),
                        "Infinity" => Ok(f32::INFINITY),
                        "-Infinity" => Ok(f32::NEG_INFINITY),
                        _ => Err(bad(format!("{v} is not a float"))),
                    },
                    _ => Err(bad(format!("{v} is not a float"))),
                })
                .collect::<Result<_, _>>()?,
        ),
        Kind::Bytes => Feature::Bytes(
            values
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.as_bytes().to_vec()),
                    Value::Object(o) => match o.get("base64").and_then(Value::as_str) {
                        Some(b) if o.len() == 1 => base64::engine::general_purpose::STANDARD
                            .decode(b)
                            .map_err(|e| bad(format!("bad base64: {e}"))),
                        _ => Err(bad(format!("{v} is not bytes (a string or {{\"base64\": …}})"))),
                    },
                    _ => Err(bad(format!("{v} is not bytes (a string or {{\"base64\": …}})"))),
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn friendly_round_trip_with_and_without_hints() {
        let ex = Example::builder()
            .int64("age", 19)
            .float("score", [19.0f32, f32::NAN, -0.0])
            .bytes("name", "goat")
            .bytes("raw", vec![vec![0xffu8, 0]])
            .build()
            .unwrap();
        let line = ex.to_friendly_json();
        assert_eq!(
            line,
            r#"{"age": [19], "score": [19.0, "NaN", -0.0], "name": ["goat"], "raw": [{"base64": "/wA="}]}"#
        );
        let back = Example::from_friendly_json(&line, &TypeHints::new()).unwrap();
        assert_eq!(back.to_friendly_json(), line);

        let empty = Example::builder().int64("ids", Vec::<i64>::new()).build().unwrap();
        let line = empty.to_friendly_json();
        assert!(Example::from_friendly_json(&line, &TypeHints::new()).is_err());
        let hints = TypeHints::from([("ids".to_owned(), Kind::Int64)]);
        assert_eq!(Example::from_friendly_json(&line, &hints).unwrap(), empty);
    }

    #[test]
    fn ensure_ascii_escapes() {
        let mut out = String::new();
        write_json_string(&mut out, "é\u{1F600}\"\n").unwrap();
        assert_eq!(out, r#""\u00e9\ud83d\ude00\"\n""#);
    }
}

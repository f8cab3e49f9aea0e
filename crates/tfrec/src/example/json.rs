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
use std::fmt::Write as _;

use base64::Engine;
use serde_json::Value;

use super::model::{Example, Feature, FeatureList, FeatureLists, Features, Kind, SequenceExample};
use super::pyfloat::write_shortest_repr;

/// A JSON tree whose floats print as protobuf's Python library prints them.
enum Json {
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
    String(String),
    /// A finite float, printed by [`write_shortest_repr`] as it is written out.
    Float(f32),
    /// An integer.
    Int(i64),
    Null,
}

impl Json {
    /// Python's `json.dumps(value, indent=2)` (ensure_ascii on).
    fn pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(0));
        out
    }

    /// Python's `json.dumps(value)`: one line, `", "` and `": "` separators.
    fn compact(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None);
        out
    }

    fn write(&self, out: &mut String, level: Option<usize>) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Float(v) => {
                let _ = write_shortest_repr(out, *v);
            }
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::String(s) => write_json_string(out, s),
            Json::Array(items) => write_items(out, level, ('[', ']'), items.iter().map(|item| (None, item))),
            Json::Object(items) => write_items(
                out,
                level,
                ('{', '}'),
                items.iter().map(|(key, item)| (Some(key.as_str()), item)),
            ),
        }
    }
}

/// The items of an array (no keys) or an object, as `json.dumps` lays them out: on one line
/// with `", "` when `level` is `None`, else one per line, indented two spaces per level.
fn write_items<'a>(
    out: &mut String,
    level: Option<usize>,
    (open, close): (char, char),
    items: impl ExactSizeIterator<Item = (Option<&'a str>, &'a Json)>,
) {
    let newline = |out: &mut String, level: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(level));
    };
    out.push(open);
    let empty = items.len() == 0;
    for (i, (key, item)) in items.enumerate() {
        if i > 0 {
            out.push(',');
            if level.is_none() {
                out.push(' ');
            }
        }
        if let Some(l) = level {
            newline(out, l + 1);
        }
        if let Some(key) = key {
            write_json_string(out, key);
            out.push_str(": ");
        }
        item.write(out, level.map(|l| l + 1));
    }
    if let (Some(l), false) = (level, empty) {
        newline(out, l);
    }
    out.push(close);
}

/// A JSON string with Python's `ensure_ascii` escaping.
fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn special_float(v: f32) -> Option<&'static str> {
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

fn float_json(v: f32) -> Json {
    match special_float(v) {
        Some(s) => Json::String(s.to_owned()),
        None => Json::Float(v),
    }
}

// ---- protobuf JSON mapping --------------------------------------------------------------------

fn proto_feature(feature: &Feature) -> Json {
    let (name, values) = match feature {
        Feature::None => return Json::Object(vec![]),
        Feature::Bytes(v) => (
            "bytesList",
            v.iter().map(|b| Json::String(base64(b))).collect::<Vec<_>>(),
        ),
        Feature::Float(v) => ("floatList", v.iter().map(|&f| float_json(f)).collect()),
        Feature::Int64(v) => ("int64List", v.iter().map(|i| Json::String(i.to_string())).collect()),
    };
    let list = if values.is_empty() {
        vec![]
    } else {
        vec![("value".to_owned(), Json::Array(values))]
    };
    Json::Object(vec![(name.to_owned(), Json::Object(list))])
}

fn proto_features(features: &Features) -> Json {
    if features.is_empty() {
        return Json::Object(vec![]);
    }
    let map = features.iter().map(|(k, f)| (k.to_owned(), proto_feature(f))).collect();
    Json::Object(vec![("feature".to_owned(), Json::Object(map))])
}

fn proto_feature_list(list: &FeatureList) -> Json {
    if list.feature.is_empty() {
        return Json::Object(vec![]);
    }
    let rows = list.feature.iter().map(proto_feature).collect();
    Json::Object(vec![("feature".to_owned(), Json::Array(rows))])
}

fn proto_feature_lists(lists: &FeatureLists) -> Json {
    if lists.feature_list.is_empty() {
        return Json::Object(vec![]);
    }
    let map = lists
        .iter()
        .map(|(k, l)| (k.to_owned(), proto_feature_list(l)))
        .collect();
    Json::Object(vec![("featureList".to_owned(), Json::Object(map))])
}

impl Example {
    /// Protobuf's JSON mapping, as `json_format.MessageToJson(example)` prints it.
    pub fn to_json(&self) -> String {
        let mut fields = vec![];
        if let Some(f) = &self.features {
            fields.push(("features".to_owned(), proto_features(f)));
        }
        Json::Object(fields).pretty()
    }

    /// Protobuf's JSON mapping on one line (a JSON-lines item): [`Example::to_json`] without
    /// the line breaks and indentation.
    pub fn to_json_line(&self) -> String {
        let mut fields = vec![];
        if let Some(f) = &self.features {
            fields.push(("features".to_owned(), proto_features(f)));
        }
        Json::Object(fields).compact()
    }

    /// The friendly one-line JSON form (see the [module docs](self)).
    pub fn to_friendly_json(&self) -> String {
        friendly_features(self.features()).compact()
    }

    /// Reads the friendly JSON form; `hints` gives the kind of features whose values do not
    /// show it (empty lists, integers meant as floats, strings that look like NaN).
    pub fn from_friendly_json(text: &str, hints: &TypeHints) -> Result<Example, FriendlyJsonError> {
        let value: Value = serde_json::from_str(text).map_err(|e| FriendlyJsonError::Syntax(e.to_string()))?;
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

    fn proto_json(&self) -> Json {
        let mut fields = vec![];
        if let Some(c) = &self.context {
            fields.push(("context".to_owned(), proto_features(c)));
        }
        if let Some(l) = &self.feature_lists {
            fields.push(("featureLists".to_owned(), proto_feature_lists(l)));
        }
        Json::Object(fields)
    }

    /// The friendly one-line form: `{"context": {...}, "feature_lists": {"k": [[...], ...]}}`.
    pub fn to_friendly_json(&self) -> String {
        let mut fields = vec![];
        if let Some(c) = &self.context {
            fields.push(("context".to_owned(), friendly_features(c)));
        }
        if let Some(lists) = &self.feature_lists {
            let map = lists
                .iter()
                .map(|(k, l)| {
                    (
                        k.to_owned(),
                        Json::Array(l.feature.iter().map(friendly_values).collect()),
                    )
                })
                .collect();
            fields.push(("feature_lists".to_owned(), Json::Object(map)));
        }
        Json::Object(fields).compact()
    }

    /// Reads the friendly form; hints apply to context features and feature lists by name.
    pub fn from_friendly_json(text: &str, hints: &TypeHints) -> Result<SequenceExample, FriendlyJsonError> {
        let value: Value = serde_json::from_str(text).map_err(|e| FriendlyJsonError::Syntax(e.to_string()))?;
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

/// The kind of each feature, by name, for reading the friendly JSON form back exactly.
pub type TypeHints = HashMap<String, Kind>;

/// Friendly JSON that cannot become a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FriendlyJsonError {
    #[error("invalid JSON: {0}")]
    Syntax(String),
    #[error("expected a JSON object of features")]
    NotAnObject,
    #[error("feature {key:?}: {reason}")]
    Value { key: String, reason: String },
}

fn friendly_values(feature: &Feature) -> Json {
    match feature {
        Feature::None => Json::Null,
        Feature::Int64(v) => Json::Array(v.iter().map(|i| Json::Int(*i)).collect()),
        Feature::Float(v) => Json::Array(v.iter().map(|&f| float_json(f)).collect()),
        Feature::Bytes(v) => Json::Array(
            v.iter()
                .map(|b| match std::str::from_utf8(b) {
                    Ok(s) => Json::String(s.to_owned()),
                    Err(_) => Json::Object(vec![("base64".to_owned(), Json::String(base64(b)))]),
                })
                .collect(),
        ),
    }
}

fn friendly_features(features: &Features) -> Json {
    Json::Object(
        features
            .iter()
            .map(|(k, f)| (k.to_owned(), friendly_values(f)))
            .collect(),
    )
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
        write_json_string(&mut out, "é\u{1F600}\"\n");
        assert_eq!(out, r#""\u00e9\ud83d\ude00\"\n""#);
    }
}

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

use serde_json::Value;

use super::json_text::{float_from_special, from_base64};
use super::model::{Example, Feature, FeatureList, Kind, SequenceExample};
use super::render::RenderFormat;

// ---- rendering (render.rs writes every form) ----------------------------------------------

impl Example {
    /// Protobuf's JSON mapping, as `json_format.MessageToJson(example)` prints it.
    pub fn to_json(&self) -> String {
        self.render_to_string(RenderFormat::Json)
    }

    /// Protobuf's JSON mapping on one line (a JSON-lines item): [`Example::to_json`] without
    /// the line breaks and indentation.
    pub fn to_json_line(&self) -> String {
        self.render_to_string(RenderFormat::JsonLine)
    }

    /// [`Example::to_json_line`] written piece by piece into `out`.
    pub fn write_json_line<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.render(out, RenderFormat::JsonLine)
    }

    /// The friendly one-line JSON form: `{"age": [19], "name": ["goat"]}`, bytes as UTF-8 strings
    /// where valid (else `{"base64": "…"}`), floats always with a decimal point or exponent.
    pub fn to_friendly_json(&self) -> String {
        self.render_to_string(RenderFormat::FriendlyJson)
    }

    /// [`Example::to_friendly_json`] written piece by piece into `out`.
    pub fn write_friendly_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.render(out, RenderFormat::FriendlyJson)
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
        self.render_to_string(RenderFormat::Json)
    }

    /// Protobuf's JSON mapping on one line (a JSON-lines item).
    pub fn to_json_line(&self) -> String {
        self.render_to_string(RenderFormat::JsonLine)
    }

    /// [`SequenceExample::to_json_line`] written piece by piece into `out`.
    pub fn write_json_line<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.render(out, RenderFormat::JsonLine)
    }

    /// The friendly one-line form: `{"context": {...}, "feature_lists": {"k": [[...], ...]}}`.
    pub fn to_friendly_json(&self) -> String {
        self.render_to_string(RenderFormat::FriendlyJson)
    }

    /// [`SequenceExample::to_friendly_json`] written piece by piece into `out`.
    pub fn write_friendly_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.render(out, RenderFormat::FriendlyJson)
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

/// The kind the values show: integers only → int64; any non-integer number or a NaN /
/// Infinity string among numbers → float; strings or base64 objects → bytes.
fn infer_kind<'v>(values: impl Iterator<Item = &'v Value>) -> Option<Kind> {
    let (mut ints, mut floats, mut strings, mut specials) = (0, 0, 0, 0);
    for v in values {
        match v {
            Value::Number(n) if n.is_i64() || n.is_u64() => ints += 1,
            Value::Number(_) => floats += 1,
            Value::String(s) if float_from_special(s).is_some() => specials += 1,
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
                    Value::String(s) => float_from_special(s).ok_or_else(|| bad(format!("{v} is not a float"))),
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
                        Some(b) if o.len() == 1 => from_base64(b).map_err(|e| bad(format!("bad base64: {e}"))),
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
}

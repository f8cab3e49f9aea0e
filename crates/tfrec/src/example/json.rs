//! JSON renderings of `Example` and `SequenceExample` (written by `render.rs`; the friendly
//! form is read back by `json_read.rs`).
//!
//! - Protobuf's JSON mapping, laid out exactly as Python's `json_format.MessageToJson` prints it
//!   (two-space indent, ASCII only): int64 as strings, bytes as base64, `NaN`/`Infinity` as
//!   strings, camelCase field names.
//! - A friendlier one-line form for humans and scripts: `{"age": [19], "name": ["goat"]}`, with
//!   bytes as UTF-8 strings where valid (else `{"base64": "…"}`), floats always with a decimal
//!   point or exponent (`19.0`), NaN and the infinities as the strings `"NaN"`, `"Infinity"`,
//!   `"-Infinity"`, and a feature with no kind as `null`. It converts back exactly given the
//!   kind of each feature ([`TypeHints`]); without hints the kind is inferred from the values.

use std::fmt;

use super::model::{Example, SequenceExample};
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::{Kind, TypeHints};

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

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

use std::fmt;

use super::json_text::{ByteList, Json, Layout};
use super::model::{Example, Feature, FeatureList, FeatureLists, Features, SequenceExample};

// ---- protobuf JSON mapping --------------------------------------------------------------------

fn proto_feature(feature: &Feature) -> Json<'_> {
    let (name, values, empty) = match feature {
        Feature::None => return Json::Object(vec![]),
        Feature::Bytes(v) => ("bytesList", Json::Base64List(ByteList::Vecs(v)), v.is_empty()),
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

/// Writes `json` into an `fmt::Write` on one line, as Python's `json.dumps(value)`.
fn write_line<W: fmt::Write>(json: &Json<'_>, out: &mut W) -> fmt::Result {
    json.write(out, Layout::Line)
}

impl Example {
    /// Protobuf's JSON mapping, as `json_format.MessageToJson(example)` prints it.
    pub fn to_json(&self) -> String {
        self.proto_json().to_text(Layout::Indented)
    }

    /// Protobuf's JSON mapping on one line (a JSON-lines item): [`Example::to_json`] without
    /// the line breaks and indentation.
    pub fn to_json_line(&self) -> String {
        self.proto_json().to_text(Layout::Line)
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
        friendly_features(self.features()).to_text(Layout::Line)
    }

    /// [`Example::to_friendly_json`] written piece by piece into `out`.
    pub fn write_friendly_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        write_line(&friendly_features(self.features()), out)
    }
}

impl SequenceExample {
    /// Protobuf's JSON mapping, as `json_format.MessageToJson(seq)` prints it.
    pub fn to_json(&self) -> String {
        self.proto_json().to_text(Layout::Indented)
    }

    /// Protobuf's JSON mapping on one line (a JSON-lines item).
    pub fn to_json_line(&self) -> String {
        self.proto_json().to_text(Layout::Line)
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
        self.friendly_json().to_text(Layout::Line)
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
}

// ---- the friendly form ----------------------------------------------------------------------

fn friendly_values(feature: &Feature) -> Json<'_> {
    match feature {
        Feature::None => Json::Null,
        Feature::Int64(v) => Json::Ints(v.as_slice().into()),
        Feature::Float(v) => Json::Floats(v),
        Feature::Bytes(v) => Json::BytesList(ByteList::Vecs(v)),
    }
}

fn friendly_features(features: &Features) -> Json<'_> {
    Json::Object(features.iter().map(|(k, f)| (k, friendly_values(f))).collect())
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

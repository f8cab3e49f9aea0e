//! [`Message`]: what `Example` and `SequenceExample` both do — decode, encode, and convert to
//! and from protobuf text format, protobuf JSON and the friendly JSON form — as one trait, so
//! code over either message is written once. Each type's own part (its fields' wire layout,
//! its text fields) stays in `codec.rs` and `text/parse.rs`; every rendering goes through
//! `render.rs` and friendly JSON is read by `json_read.rs`.
//!
//! The JSON forms:
//! - Protobuf's JSON mapping, laid out exactly as Python's `json_format.MessageToJson` prints it
//!   (two-space indent, ASCII only): int64 as strings, bytes as base64, `NaN`/`Infinity` as
//!   strings, camelCase field names.
//! - A friendlier one-line form for humans and scripts: `{"age": [19], "name": ["goat"]}`, with
//!   bytes as UTF-8 strings where valid (else `{"base64": "…"}`), floats always with a decimal
//!   point or exponent (`19.0`), NaN and the infinities as the strings `"NaN"`, `"Infinity"`,
//!   `"-Infinity"`, and a feature with no kind as `null`. It converts back exactly given the
//!   kind of each feature ([`TypeHints`]); without hints the kind is inferred from the values.
//!
//! The types keep these as inherent methods too (`Example::decode`, `example.to_text()`, …), so
//! callers need not import the trait; each forwards to the trait.

use std::fmt;

use super::codec;
use super::json_read::{encode_friendly_json, FriendlyJsonError, FriendlyMessage, TypeHints};
use super::model::{Example, Feature, SequenceExample};
use super::render::RenderFormat;
use super::text::{self, TextError};
use super::view::{ExampleView, SequenceExampleView};
use crate::wire::DecodeError;

mod sealed {
    /// Only the crate's two messages are [`Message`](super::Message)s: the trait's provided
    /// methods rely on what this adds.
    pub trait Sealed {
        /// Which message friendly JSON is read as.
        const FRIENDLY: super::FriendlyMessage;
    }
}

/// A top-level message: [`Example`] or [`SequenceExample`].
///
/// ```
/// use tfrec::example::{Example, Message, SequenceExample};
///
/// // One function for both messages: text format in, friendly JSON out.
/// fn text_to_friendly<M: Message>(text: &str) -> Result<String, tfrec::Error> {
///     Ok(M::from_text(text)?.to_friendly_json())
/// }
///
/// let line = text_to_friendly::<Example>(
///     r#"features { feature { key: "v" value { int64_list { value: [3, 1, 4] } } } }"#,
/// )?;
/// assert_eq!(line, r#"{"v": [3, 1, 4]}"#);
/// assert_eq!(text_to_friendly::<SequenceExample>("")?, "{}");
/// assert_eq!((Example::NAME, SequenceExample::NAME), ("Example", "SequenceExample"));
/// # Ok::<(), tfrec::Error>(())
/// ```
pub trait Message: sealed::Sealed + Sized {
    /// The protobuf message's name: `"Example"` or `"SequenceExample"`.
    const NAME: &'static str;

    /// Decodes the serialized message, exactly as protobuf does (see `codec.rs`).
    fn decode(bytes: &[u8]) -> Result<Self, DecodeError>;

    /// Appends the canonical encoding to `out`.
    fn encode_to(&self, out: &mut Vec<u8>);

    /// The size of the canonical encoding.
    fn encoded_len(&self) -> usize;

    /// Encodes canonically.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_to(&mut out);
        out
    }

    /// Writes the message in `format` (its canonical encoding, rendered as a record is).
    fn render<W: fmt::Write>(&self, out: &mut W, format: RenderFormat) -> fmt::Result;

    /// The message in `format`, as a string.
    fn render_to_string(&self, format: RenderFormat) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail, and an owned message encodes validly.
        let _ = self.render(&mut out, format);
        out
    }

    /// The protobuf text format, as `print(message)` shows it in Python.
    fn to_text(&self) -> String {
        self.render_to_string(RenderFormat::Text)
    }

    /// [`Message::to_text`] written piece by piece into `out`, so a huge message needs no
    /// rendering of its own size in memory.
    fn write_text<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.render(out, RenderFormat::Text)
    }

    /// Protobuf's JSON mapping, as `json_format.MessageToJson(message)` prints it.
    fn to_json(&self) -> String {
        self.render_to_string(RenderFormat::Json)
    }

    /// Protobuf's JSON mapping on one line (a JSON-lines item): [`Message::to_json`] without
    /// the line breaks and indentation.
    fn to_json_line(&self) -> String {
        self.render_to_string(RenderFormat::JsonLine)
    }

    /// [`Message::to_json_line`] written piece by piece into `out`.
    fn write_json_line<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.render(out, RenderFormat::JsonLine)
    }

    /// The friendly one-line JSON form: `{"age": [19], "name": ["goat"]}` for an Example,
    /// `{"context": {...}, "feature_lists": {"k": [[...], ...]}}` for a SequenceExample.
    fn to_friendly_json(&self) -> String {
        self.render_to_string(RenderFormat::FriendlyJson)
    }

    /// [`Message::to_friendly_json`] written piece by piece into `out`.
    fn write_friendly_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.render(out, RenderFormat::FriendlyJson)
    }

    /// Parses the message from protobuf text format (the `[a, b]` list shorthand, `<...>`
    /// brackets, comments and adjacent strings included).
    fn from_text(text: &str) -> Result<Self, TextError>;

    /// Reads the friendly JSON form; `hints` gives the kind of features whose values do not
    /// show it (empty lists, integers meant as floats, strings that look like NaN), by name
    /// (context features and feature lists alike).
    fn from_friendly_json(text: &str, hints: &TypeHints) -> Result<Self, FriendlyJsonError> {
        let bytes = Self::encode_friendly_json(text, hints)?;
        Ok(Self::decode(&bytes).expect("the encoding json_read.rs wrote decodes"))
    }

    /// [`Message::from_friendly_json`] straight into the canonical encoding, with no owned
    /// message in between.
    fn encode_friendly_json(text: &str, hints: &TypeHints) -> Result<Vec<u8>, FriendlyJsonError> {
        encode_friendly_json(text, hints, Self::FRIENDLY).map(|(bytes, _)| bytes)
    }
}

impl sealed::Sealed for Example {
    const FRIENDLY: FriendlyMessage = FriendlyMessage::Example;
}

impl Feature {
    /// Decodes a serialized `tf.train.Feature` (as protobuf does: a repeated kind field merges
    /// into the last, another kind replaces it).
    pub fn decode(bytes: &[u8]) -> Result<Feature, DecodeError> {
        codec::decode_feature(bytes)
    }

    /// The canonical encoding, as protobuf writes it (numbers packed).
    pub fn encode(&self) -> Vec<u8> {
        codec::encode_feature(self)
    }
}

impl Message for Example {
    const NAME: &'static str = "Example";

    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        codec::decode_example(bytes)
    }

    fn encode_to(&self, out: &mut Vec<u8>) {
        codec::encode_example_to(self, out)
    }

    fn encoded_len(&self) -> usize {
        codec::example_len(self)
    }

    fn render<W: fmt::Write>(&self, out: &mut W, format: RenderFormat) -> fmt::Result {
        ExampleView::new(&self.encode()).render(out, format, 0).map(drop)
    }

    fn from_text(text: &str) -> Result<Self, TextError> {
        text::example_from_text(text)
    }
}

impl sealed::Sealed for SequenceExample {
    const FRIENDLY: FriendlyMessage = FriendlyMessage::SequenceExample;
}

impl Message for SequenceExample {
    const NAME: &'static str = "SequenceExample";

    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        codec::decode_sequence_example(bytes)
    }

    fn encode_to(&self, out: &mut Vec<u8>) {
        codec::encode_sequence_example_to(self, out)
    }

    fn encoded_len(&self) -> usize {
        codec::sequence_example_len(self)
    }

    fn render<W: fmt::Write>(&self, out: &mut W, format: RenderFormat) -> fmt::Result {
        SequenceExampleView::new(&self.encode())
            .render(out, format, 0)
            .map(drop)
    }

    fn from_text(text: &str) -> Result<Self, TextError> {
        text::sequence_example_from_text(text)
    }
}

/// The trait's methods as inherent methods of `$ty`, each forwarding to [`Message`], so the
/// two types' method lists are written once and callers need no `use` of the trait.
macro_rules! inherent_message_methods {
    ($ty:ident) => {
        impl $ty {
            #[doc = concat!("Decodes a serialized `tf.train.", stringify!($ty), "` ([`Message::decode`]).")]
            #[inline]
            pub fn decode(bytes: &[u8]) -> Result<$ty, DecodeError> {
                <$ty as Message>::decode(bytes)
            }

            /// Encodes canonically ([`Message::encode`]).
            #[inline]
            pub fn encode(&self) -> Vec<u8> {
                Message::encode(self)
            }

            /// Appends the canonical encoding to `out` ([`Message::encode_to`]).
            #[inline]
            pub fn encode_to(&self, out: &mut Vec<u8>) {
                Message::encode_to(self, out)
            }

            /// The size of the canonical encoding ([`Message::encoded_len`]).
            #[inline]
            pub fn encoded_len(&self) -> usize {
                Message::encoded_len(self)
            }

            /// Writes the message in `format` ([`Message::render`]).
            pub fn render<W: fmt::Write>(&self, out: &mut W, format: RenderFormat) -> fmt::Result {
                Message::render(self, out, format)
            }

            /// The message in `format`, as a string ([`Message::render_to_string`]).
            pub fn render_to_string(&self, format: RenderFormat) -> String {
                Message::render_to_string(self, format)
            }

            /// The protobuf text format, as `print(message)` shows it in Python
            /// ([`Message::to_text`]).
            pub fn to_text(&self) -> String {
                Message::to_text(self)
            }

            /// The text format written piece by piece into `out` ([`Message::write_text`]).
            pub fn write_text<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
                Message::write_text(self, out)
            }

            /// Protobuf's JSON mapping, as `json_format.MessageToJson` prints it
            /// ([`Message::to_json`]).
            pub fn to_json(&self) -> String {
                Message::to_json(self)
            }

            /// Protobuf's JSON mapping on one line ([`Message::to_json_line`]).
            pub fn to_json_line(&self) -> String {
                Message::to_json_line(self)
            }

            /// The one-line JSON written piece by piece into `out` ([`Message::write_json_line`]).
            pub fn write_json_line<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
                Message::write_json_line(self, out)
            }

            /// The friendly one-line JSON form ([`Message::to_friendly_json`]).
            pub fn to_friendly_json(&self) -> String {
                Message::to_friendly_json(self)
            }

            /// The friendly form written piece by piece into `out`
            /// ([`Message::write_friendly_json`]).
            pub fn write_friendly_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
                Message::write_friendly_json(self, out)
            }

            #[doc = concat!("Parses a ", stringify!($ty), " from protobuf text format ([`Message::from_text`]).")]
            pub fn from_text(text: &str) -> Result<$ty, TextError> {
                <$ty as Message>::from_text(text)
            }

            /// Reads the friendly JSON form, `hints` giving the kinds the values do not show
            /// ([`Message::from_friendly_json`]).
            pub fn from_friendly_json(text: &str, hints: &TypeHints) -> Result<$ty, FriendlyJsonError> {
                <$ty as Message>::from_friendly_json(text, hints)
            }

            /// The friendly JSON form straight into the canonical encoding
            /// ([`Message::encode_friendly_json`]).
            pub fn encode_friendly_json(text: &str, hints: &TypeHints) -> Result<Vec<u8>, FriendlyJsonError> {
                <$ty as Message>::encode_friendly_json(text, hints)
            }
        }
    };
}

inherent_message_methods!(Example);
inherent_message_methods!(SequenceExample);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::Kind;

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

    /// The same generic code runs both messages, each through its own wire layout.
    fn round_trip<M: Message + PartialEq + fmt::Debug>(message: &M) {
        let bytes = message.encode();
        assert_eq!(bytes.len(), message.encoded_len());
        assert_eq!(&M::decode(&bytes).unwrap(), message);
        assert_eq!(&M::from_text(&message.to_text()).unwrap(), message);
        let back = M::from_friendly_json(&message.to_friendly_json(), &TypeHints::new()).unwrap();
        assert_eq!(&back, message);
    }

    #[test]
    fn generic_round_trips_of_both_messages() {
        let example = Example::builder()
            .int64("id", [3i64, -1])
            .float("pair", [1.5f32, 2.0])
            .bytes("name", "goat")
            .build()
            .unwrap();
        round_trip(&example);
        let seq = SequenceExample::builder()
            .context_float("age", 19.0)
            .float_list("ratings", [4.5f32, 5.0])
            .bytes_list("actors", [vec!["a", "b"], vec!["c"]])
            .build()
            .unwrap();
        round_trip(&seq);
    }
}

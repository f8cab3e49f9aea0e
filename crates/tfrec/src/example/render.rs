//! Rendering messages straight from their serialized bytes: protobuf text format, protobuf
//! JSON (indented or on one line) and the friendly JSON form, written value by value as the
//! views decode them, so a huge record costs no decoded copy of itself. The owned messages
//! render through here too (their canonical encoding, viewed), so each form is written once.
//!
//! What decoding would do is done here on the fly: several `features` fields are one map, the
//! last entry of a duplicated key wins (at the place of the first, as protobuf's maps keep
//! it), a oneof keeps the last kind, packed and unpacked pieces of a list concatenate, and
//! unknown fields are skipped. The only memory used is one small slot per distinct feature.

use std::fmt;
use std::ops::ControlFlow;

use super::model::Kind;
use super::text::{close, escape_bytes, indent, open, render_key, write_text_float};
use super::view::{
    feature_view_of, has_field, Entry, ExampleView, FeatureListView, FeatureView, Lists, MapEntries,
    SequenceExampleView, Value,
};
use crate::json_text::{write_base64, write_bytes, write_float, Items, Layout};
use crate::wire::{DecodeError, DecodeErrorKind, WireReader};

/// The forms a message renders in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenderFormat {
    /// Protobuf text format, as Python's `print(message)` shows it (map keys sorted).
    Text,
    /// Protobuf's JSON mapping, as `json_format.MessageToJson` prints it (indented).
    Json,
    /// Protobuf's JSON mapping on one line.
    JsonLine,
    /// The friendly one-line JSON form: `{"age": [19], "name": ["goat"]}`.
    FriendlyJson,
}

impl ExampleView<'_> {
    /// Writes the message in `format`, each feature's values cut to about `max_bytes` bytes
    /// as `tfrec cat --max-bytes` does (0: everything); says whether anything was cut.
    ///
    /// Call [`ExampleView::validate`] first: a malformed message ends the output with a
    /// `fmt::Error` wherever its problem is met.
    ///
    /// ```
    /// use tfrec::example::{Example, ExampleView, RenderFormat};
    ///
    /// let record = Example::builder().int64("ids", [3i64, 1, 4]).build()?.encode();
    /// let view = ExampleView::new(&record);
    /// view.validate()?;
    /// let mut out = String::new();
    /// // Writing to a `String` cannot fail, and the message was validated.
    /// let cut = view.render(&mut out, RenderFormat::FriendlyJson, 16).expect("validated");
    /// assert_eq!((out.as_str(), cut), (r#"{"ids": [3, 1]}"#, true));
    /// # Ok::<(), tfrec::Error>(())
    /// ```
    pub fn render<W: fmt::Write>(
        &self,
        out: &mut W,
        format: RenderFormat,
        max_bytes: usize,
    ) -> Result<bool, fmt::Error> {
        let mut r = Renderer::new(max_bytes);
        let has_features = has_field(self.bytes, 1).map_err(malformed)?;
        let features = || slots(self.bytes, 1, format == RenderFormat::Text).map_err(malformed);
        match format {
            RenderFormat::Text => {
                if has_features {
                    open(out, 0, "features")?;
                    r.text_features(out, 1, &features()?)?;
                    close(out, 0)?;
                }
            }
            RenderFormat::Json | RenderFormat::JsonLine => {
                let layout = proto_layout(format);
                let mut message = Items::open(out, layout, top_level(layout), '{', '}')?;
                if has_features {
                    let level = message.key(out, "features")?;
                    r.proto_features(out, layout, level, &features()?)?;
                }
                message.close(out)?;
            }
            RenderFormat::FriendlyJson => r.friendly_features(out, &features()?)?,
        }
        Ok(r.cut)
    }
}

impl SequenceExampleView<'_> {
    /// Writes the message in `format`, each feature's values cut to about `max_bytes` bytes
    /// (0: everything); says whether anything was cut. Call
    /// [`SequenceExampleView::validate`] first, as for [`ExampleView::render`].
    pub fn render<W: fmt::Write>(
        &self,
        out: &mut W,
        format: RenderFormat,
        max_bytes: usize,
    ) -> Result<bool, fmt::Error> {
        let mut r = Renderer::new(max_bytes);
        let sorted = format == RenderFormat::Text;
        let context = section(self.bytes, 1, sorted).map_err(malformed)?;
        let lists = section(self.bytes, 2, sorted).map_err(malformed)?;
        match format {
            RenderFormat::Text => {
                if let Some(context) = context {
                    open(out, 0, "context")?;
                    r.text_features(out, 1, &context)?;
                    close(out, 0)?;
                }
                if let Some(lists) = lists {
                    open(out, 0, "feature_lists")?;
                    r.text_feature_lists(out, 1, &lists)?;
                    close(out, 0)?;
                }
            }
            RenderFormat::Json | RenderFormat::JsonLine => {
                let layout = proto_layout(format);
                let mut message = Items::open(out, layout, top_level(layout), '{', '}')?;
                if let Some(context) = context {
                    let level = message.key(out, "context")?;
                    r.proto_features(out, layout, level, &context)?;
                }
                if let Some(lists) = lists {
                    let level = message.key(out, "featureLists")?;
                    r.proto_feature_lists(out, layout, level, &lists)?;
                }
                message.close(out)?;
            }
            RenderFormat::FriendlyJson => {
                let layout = Layout::Line;
                let mut message = Items::open(out, layout, None, '{', '}')?;
                if let Some(context) = context {
                    message.key(out, "context")?;
                    r.friendly_features(out, &context)?;
                }
                if let Some(lists) = lists {
                    message.key(out, "feature_lists")?;
                    let mut map = Items::open(out, layout, None, '{', '}')?;
                    for slot in &lists {
                        map.key(out, slot.key)?;
                        let mut steps = Items::open(out, layout, None, '[', ']')?;
                        for row in rows(&slot.value) {
                            steps.next(out)?;
                            r.friendly_values(out, &row.map_err(malformed)?)?;
                        }
                        steps.close(out)?;
                    }
                    map.close(out)?;
                }
                message.close(out)?;
            }
        }
        Ok(r.cut)
    }
}

fn proto_layout(format: RenderFormat) -> Layout {
    if format == RenderFormat::Json {
        Layout::Indented
    } else {
        Layout::Line
    }
}

fn top_level(layout: Layout) -> Option<usize> {
    (layout == Layout::Indented).then_some(0)
}

/// A problem met while rendering is malformed input the caller did not validate: the output
/// stops there.
fn malformed(_: DecodeError) -> fmt::Error {
    fmt::Error
}

/// The distinct entries of the map in field `field`, if the message has that field.
fn section(bytes: &[u8], field: u32, sorted: bool) -> Result<Option<Vec<Slot<'_>>>, DecodeError> {
    if !has_field(bytes, field)? {
        return Ok(None);
    }
    slots(bytes, field, sorted).map(Some)
}

/// One distinct key of a map: the value of its last entry, at the place of its first.
struct Slot<'a> {
    key: &'a str,
    first: usize,
    value: Lists<'a>,
}

/// The distinct entries of the map in field `field` (all its occurrences), sorted by key
/// (`sorted`, as text format prints them) or in the order the keys first appear (as decoding
/// into an insertion-ordered map keeps them).
fn slots(bytes: &[u8], field: u32, sorted: bool) -> Result<Vec<Slot<'_>>, DecodeError> {
    let mut entries = MapEntries::new(WireReader::new(bytes), field);
    let mut slots = Vec::new();
    while let Some(Entry { key, value, .. }) = entries.next_entry()? {
        let key = std::str::from_utf8(key).map_err(|_| DecodeError {
            offset: 0,
            kind: DecodeErrorKind::InvalidUtf8,
        })?;
        slots.push(Slot {
            key,
            first: slots.len(),
            value,
        });
    }
    // Stable: the entries of one key stay in wire order, so the last one's value moves into
    // the first one's slot.
    slots.sort_by(|a, b| a.key.cmp(b.key));
    slots.dedup_by(|later, earlier| {
        let same = later.key == earlier.key;
        if same {
            std::mem::swap(&mut later.value, &mut earlier.value);
        }
        same
    });
    if !sorted {
        slots.sort_unstable_by_key(|s| s.first);
    }
    Ok(slots)
}

/// The steps of a feature list, each a feature.
fn rows<'a>(list: &Lists<'a>) -> impl Iterator<Item = Result<FeatureView<'a>, DecodeError>> {
    FeatureListView { parts: list.clone() }
        .rows()
        .map(|row| row.and_then(|(bytes, base)| FeatureView::from_feature_bytes(bytes, base)))
}

/// Why a walk over values stopped early.
enum Stop {
    /// The limit was reached with values left.
    Cut,
    /// The output failed.
    Write,
}

/// Writes features, remembering whether any of their values were cut.
struct Renderer {
    /// 0: no limit.
    max_bytes: usize,
    cut: bool,
}

impl Renderer {
    fn new(max_bytes: usize) -> Self {
        Renderer { max_bytes, cut: false }
    }

    /// Calls `f` with each value of `feature`, cut as `--max-bytes` cuts: int64s to
    /// `max_bytes / 8` values, floats to `max_bytes / 4` (at least one), bytes to `max_bytes`
    /// bytes in all (a value across the limit is shortened, the values after it dropped).
    fn each_value<'a>(
        &mut self,
        feature: &FeatureView<'a>,
        mut f: impl FnMut(Value<'a>) -> fmt::Result,
    ) -> fmt::Result {
        let (keep, mut budget) = match (self.max_bytes, feature.kind()) {
            (0, _) => (usize::MAX, usize::MAX),
            (max, Some(Kind::Int64)) => ((max / 8).max(1), usize::MAX),
            (max, Some(Kind::Float)) => ((max / 4).max(1), usize::MAX),
            (max, _) => (usize::MAX, max),
        };
        let mut shortened = false;
        let mut n = 0;
        let flow = feature
            .try_for_each_value(|v| {
                if n == keep {
                    return ControlFlow::Break(Stop::Cut);
                }
                n += 1;
                let v = match v {
                    Value::Bytes(_) if budget == 0 => return ControlFlow::Break(Stop::Cut),
                    Value::Bytes(b) => {
                        shortened |= b.len() > budget;
                        let b = &b[..b.len().min(budget)];
                        budget -= b.len();
                        Value::Bytes(b)
                    }
                    v => v,
                };
                match f(v) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(fmt::Error) => ControlFlow::Break(Stop::Write),
                }
            })
            .map_err(malformed)?;
        self.cut |= shortened;
        match flow {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(Stop::Cut) => {
                self.cut = true;
                Ok(())
            }
            ControlFlow::Break(Stop::Write) => Err(fmt::Error),
        }
    }

    // ---- text format ------------------------------------------------------------------------

    fn text_features<W: fmt::Write>(&mut self, out: &mut W, level: usize, slots: &[Slot<'_>]) -> fmt::Result {
        for slot in slots {
            open(out, level, "feature")?;
            render_key(out, level + 1, slot.key)?;
            open(out, level + 1, "value")?;
            self.text_feature(out, level + 2, &feature_view_of(&slot.value).map_err(malformed)?)?;
            close(out, level + 1)?;
            close(out, level)?;
        }
        Ok(())
    }

    fn text_feature_lists<W: fmt::Write>(&mut self, out: &mut W, level: usize, slots: &[Slot<'_>]) -> fmt::Result {
        for slot in slots {
            open(out, level, "feature_list")?;
            render_key(out, level + 1, slot.key)?;
            open(out, level + 1, "value")?;
            for row in rows(&slot.value) {
                open(out, level + 2, "feature")?;
                self.text_feature(out, level + 3, &row.map_err(malformed)?)?;
                close(out, level + 2)?;
            }
            close(out, level + 1)?;
            close(out, level)?;
        }
        Ok(())
    }

    fn text_feature<W: fmt::Write>(&mut self, out: &mut W, level: usize, feature: &FeatureView<'_>) -> fmt::Result {
        let Some(kind) = feature.kind() else { return Ok(()) };
        open(out, level, kind.list_name())?;
        self.each_value(feature, |v| {
            indent(out, level + 1)?;
            out.write_str("value: ")?;
            match v {
                Value::Bytes(b) => {
                    out.write_char('"')?;
                    escape_bytes(out, b)?;
                    out.write_str("\"\n")
                }
                Value::Float(x) => {
                    write_text_float(out, x)?;
                    out.write_char('\n')
                }
                Value::Int64(i) => writeln!(out, "{i}"),
            }
        })?;
        close(out, level)
    }

    // ---- protobuf JSON ------------------------------------------------------------------------

    fn proto_features<W: fmt::Write>(
        &mut self,
        out: &mut W,
        layout: Layout,
        level: Option<usize>,
        slots: &[Slot<'_>],
    ) -> fmt::Result {
        let mut features = Items::open(out, layout, level, '{', '}')?;
        if !slots.is_empty() {
            let level = features.key(out, "feature")?;
            let mut map = Items::open(out, layout, level, '{', '}')?;
            for slot in slots {
                let level = map.key(out, slot.key)?;
                self.proto_feature(out, layout, level, &feature_view_of(&slot.value).map_err(malformed)?)?;
            }
            map.close(out)?;
        }
        features.close(out)
    }

    fn proto_feature_lists<W: fmt::Write>(
        &mut self,
        out: &mut W,
        layout: Layout,
        level: Option<usize>,
        slots: &[Slot<'_>],
    ) -> fmt::Result {
        let mut lists = Items::open(out, layout, level, '{', '}')?;
        if !slots.is_empty() {
            let level = lists.key(out, "featureList")?;
            let mut map = Items::open(out, layout, level, '{', '}')?;
            for slot in slots {
                let level = map.key(out, slot.key)?;
                let mut list = Items::open(out, layout, level, '{', '}')?;
                let mut steps = rows(&slot.value).peekable();
                if steps.peek().is_some() {
                    let level = list.key(out, "feature")?;
                    let mut array = Items::open(out, layout, level, '[', ']')?;
                    for row in steps {
                        let level = array.next(out)?;
                        self.proto_feature(out, layout, level, &row.map_err(malformed)?)?;
                    }
                    array.close(out)?;
                }
                list.close(out)?;
            }
            map.close(out)?;
        }
        lists.close(out)
    }

    fn proto_feature<W: fmt::Write>(
        &mut self,
        out: &mut W,
        layout: Layout,
        level: Option<usize>,
        feature: &FeatureView<'_>,
    ) -> fmt::Result {
        let mut message = Items::open(out, layout, level, '{', '}')?;
        if let Some(kind) = feature.kind() {
            let name = match kind {
                Kind::Bytes => "bytesList",
                Kind::Float => "floatList",
                Kind::Int64 => "int64List",
            };
            let level = message.key(out, name)?;
            let mut list = Items::open(out, layout, level, '{', '}')?;
            // Protobuf's JSON leaves out an empty repeated field.
            if feature.has_values().map_err(malformed)? {
                let level = list.key(out, "value")?;
                let mut values = Items::open(out, layout, level, '[', ']')?;
                self.each_value(feature, |v| {
                    values.next(out)?;
                    match v {
                        Value::Bytes(b) => write_base64(out, b),
                        Value::Float(x) => write_float(out, x),
                        Value::Int64(i) => write!(out, "\"{i}\""),
                    }
                })?;
                values.close(out)?;
            }
            list.close(out)?;
        }
        message.close(out)
    }

    // ---- friendly JSON ------------------------------------------------------------------------

    fn friendly_features<W: fmt::Write>(&mut self, out: &mut W, slots: &[Slot<'_>]) -> fmt::Result {
        let mut map = Items::open(out, Layout::Line, None, '{', '}')?;
        for slot in slots {
            map.key(out, slot.key)?;
            self.friendly_values(out, &feature_view_of(&slot.value).map_err(malformed)?)?;
        }
        map.close(out)
    }

    fn friendly_values<W: fmt::Write>(&mut self, out: &mut W, feature: &FeatureView<'_>) -> fmt::Result {
        if feature.kind().is_none() {
            return out.write_str("null");
        }
        let layout = Layout::Line;
        let mut values = Items::open(out, layout, None, '[', ']')?;
        self.each_value(feature, |v| {
            values.next(out)?;
            match v {
                Value::Bytes(b) => write_bytes(out, b, layout),
                Value::Float(x) => write_float(out, x),
                Value::Int64(i) => write!(out, "{i}"),
            }
        })?;
        values.close(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::{Example, SequenceExample};

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A length-delimited field.
    fn len(number: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, u64::from(number) << 3 | 2);
        varint(&mut out, payload.len() as u64);
        out.extend_from_slice(payload);
        out
    }

    /// A varint field.
    fn int(number: u32, value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, u64::from(number) << 3);
        varint(&mut out, value);
        out
    }

    fn fixed32(number: u32, value: f32) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, u64::from(number) << 3 | 5);
        out.extend_from_slice(&value.to_le_bytes());
        out
    }

    fn entry(key: &str, value: &[u8]) -> Vec<u8> {
        len(1, &[len(1, key.as_bytes()), len(2, value)].concat())
    }

    fn packed_ints(values: &[i64]) -> Vec<u8> {
        let mut block = Vec::new();
        for &v in values {
            varint(&mut block, v as u64);
        }
        len(1, &block)
    }

    fn packed_floats(values: &[f32]) -> Vec<u8> {
        len(1, &values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())
    }

    /// Example records that exercise every rule decoding applies.
    fn tricky_examples() -> Vec<Vec<u8>> {
        let ints = len(
            3,
            &[int(1, 1), packed_ints(&[2, -3, 300]), int(1, 4), int(9, 7)].concat(),
        );
        let floats = len(
            2,
            &[
                fixed32(1, f32::NAN),
                packed_floats(&[f32::INFINITY, -0.0, 0.1]),
                fixed32(1, f32::NEG_INFINITY),
            ]
            .concat(),
        );
        let bytes = len(
            1,
            &[
                len(1, b"plain"),
                len(1, &[0xff, 0, b'"', b'\\', b'\n']),
                len(1, "é😀".as_bytes()),
                len(1, b""),
            ]
            .concat(),
        );
        let oneof = [
            len(3, &packed_ints(&[5])),
            len(2, &packed_floats(&[1.5])),
            len(3, &packed_ints(&[6, 7])),
        ]
        .concat();
        let same_kind = [len(1, &len(1, b"a")), len(1, &len(1, b"b"))].concat();
        let features = [
            entry("x", &ints),
            entry("f", &floats),
            entry("b", &bytes),
            entry("", &len(3, &packed_ints(&[8]))),
            entry("none", &[]),
            entry("oneof", &oneof),
            entry("same", &same_kind),
            entry("empty_list", &len(3, &[])),
            entry("größe \"q\"", &len(2, &[])),
            entry("b2", &len(1, &len(1, b"old"))),
            entry("dup", &len(3, &packed_ints(&[1]))),
            // A duplicate key: the last entry wins, at the place of the first.
            entry("dup", &len(1, &len(1, b"replaced"))),
            // An entry with its value field twice (they merge), no key, an unknown field.
            len(
                1,
                &[
                    len(2, &len(3, &packed_ints(&[1]))),
                    int(3, 1),
                    len(2, &len(3, &packed_ints(&[2]))),
                ]
                .concat(),
            ),
        ];
        let second = [
            entry("z", &len(3, &packed_ints(&[9]))),
            entry("b2", &len(3, &packed_ints(&[10]))),
        ]
        .concat();
        vec![
            // Two `features` fields merge; unknown fields around and inside them.
            [
                len(1, &features.concat()),
                int(7, 3),
                len(1, &[second, int(2, 5)].concat()),
                len(9, b"junk"),
            ]
            .concat(),
            Vec::new(),
            len(1, &[]),
            int(5, 1),
            len(1, &entry("only", &[])),
        ]
    }

    fn tricky_sequences() -> Vec<Vec<u8>> {
        let row = |feature: Vec<u8>| len(1, &feature);
        let list = [
            row(len(3, &packed_ints(&[1, 2]))),
            row(Vec::new()),
            int(4, 1),
            row(len(1, &[len(1, &[0xfe]), len(1, b"s")].concat())),
            row([len(3, &packed_ints(&[3])), len(2, &packed_floats(&[f32::NAN]))].concat()),
        ]
        .concat();
        let lists = [
            entry("steps", &list),
            entry("empty", &[]),
            entry("a", &row(len(3, &[]))),
            entry("a", &row(len(3, &packed_ints(&[4])))),
            // The value field twice: the steps of both.
            len(
                1,
                &[
                    len(1, b"twice"),
                    len(2, &row(Vec::new())),
                    len(2, &row(len(3, &packed_ints(&[5])))),
                ]
                .concat(),
            ),
        ];
        let context = [
            entry("c", &len(2, &packed_floats(&[2.5]))),
            entry("c", &len(3, &packed_ints(&[1]))),
        ];
        vec![
            [
                len(1, &context.concat()),
                len(2, &lists.concat()),
                len(2, &entry("late", &[])),
            ]
            .concat(),
            len(2, &[]),
            len(1, &[]),
            [len(2, &[]), len(1, &entry("k", &len(1, &[])))].concat(),
            Vec::new(),
        ]
    }

    fn view_text(record: &[u8], format: RenderFormat, sequence: bool) -> String {
        let mut out = String::new();
        if sequence {
            SequenceExampleView::new(record).validate().unwrap();
            SequenceExampleView::new(record).render(&mut out, format, 0).unwrap();
        } else {
            ExampleView::new(record).validate().unwrap();
            ExampleView::new(record).render(&mut out, format, 0).unwrap();
        }
        out
    }

    const FORMATS: [RenderFormat; 4] = [
        RenderFormat::Text,
        RenderFormat::Json,
        RenderFormat::JsonLine,
        RenderFormat::FriendlyJson,
    ];

    #[test]
    fn a_view_renders_as_its_decoded_message() {
        for record in tricky_examples() {
            let decoded = Example::decode(&record).unwrap();
            for format in FORMATS {
                assert_eq!(
                    view_text(&record, format, false),
                    decoded.render_to_string(format),
                    "{format:?}"
                );
            }
        }
        for record in tricky_sequences() {
            let decoded = SequenceExample::decode(&record).unwrap();
            for format in FORMATS {
                assert_eq!(
                    view_text(&record, format, true),
                    decoded.render_to_string(format),
                    "{format:?}"
                );
            }
        }
    }

    #[test]
    fn decoding_rules_show_in_the_output() {
        let record = &tricky_examples()[0];
        let friendly = view_text(record, RenderFormat::FriendlyJson, false);
        assert_eq!(
            friendly,
            r#"{"x": [1, 2, -3, 300, 4], "f": ["NaN", "Infinity", -0.0, 0.1, "-Infinity"], "b": ["plain", {"base64": "/wAiXAo="}, "\u00e9\ud83d\ude00", ""], "": [1, 2], "none": null, "oneof": [6, 7], "same": ["a", "b"], "empty_list": [], "größe \"q\"": [], "b2": [10], "dup": ["replaced"], "z": [9]}"#
                .replace("größe", "gr\\u00f6\\u00dfe")
        );
        let text = view_text(record, RenderFormat::Text, false);
        let keys: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("key:")).collect();
        assert_eq!(keys.len(), 11, "{text}");
        assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{keys:?}");
        let line = view_text(record, RenderFormat::JsonLine, false);
        assert!(
            line.contains(r#""dup": {"bytesList": {"value": ["cmVwbGFjZWQ="]}}"#),
            "{line}"
        );
        assert!(
            line.contains(r#""x": {"int64List": {"value": ["1", "2", "-3", "300", "4"]}}"#),
            "{line}"
        );
        assert!(line.contains(r#""empty_list": {"int64List": {}}"#), "{line}");
        assert!(line.contains(r#""none": {}"#), "{line}");
        let seq = view_text(&tricky_sequences()[0], RenderFormat::FriendlyJson, true);
        assert_eq!(
            seq,
            r#"{"context": {"c": [1]}, "feature_lists": {"steps": [[1, 2], null, [{"base64": "/g=="}, "s"], ["NaN"]], "empty": [], "a": [[4]], "twice": [null, [5]], "late": []}}"#
        );
    }

    fn cut(record: &[u8], max: usize) -> (String, bool) {
        let mut out = String::new();
        let cut = ExampleView::new(record)
            .render(&mut out, RenderFormat::FriendlyJson, max)
            .unwrap();
        (out, cut)
    }

    #[test]
    fn max_bytes_cuts_each_feature_as_cat_always_did() {
        let ints = entry("i", &len(3, &packed_ints(&[1, 2, 3])));
        let record = len(1, &ints);
        assert_eq!(cut(&record, 16), (r#"{"i": [1, 2]}"#.into(), true));
        assert_eq!(cut(&record, 24), (r#"{"i": [1, 2, 3]}"#.into(), false));
        assert_eq!(cut(&record, 1), (r#"{"i": [1]}"#.into(), true));
        let floats = len(1, &entry("f", &len(2, &packed_floats(&[0.5, 1.5]))));
        assert_eq!(cut(&floats, 7), (r#"{"f": [0.5]}"#.into(), true));
        assert_eq!(cut(&floats, 8), (r#"{"f": [0.5, 1.5]}"#.into(), false));
        let bytes = |values: &[&[u8]]| {
            let list: Vec<u8> = values.iter().flat_map(|v| len(1, v)).collect();
            len(1, &entry("b", &len(1, &list)))
        };
        assert_eq!(
            cut(&bytes(&[b"abc", b"de", b"f"]), 4),
            (r#"{"b": ["abc", "d"]}"#.into(), true)
        );
        assert_eq!(cut(&bytes(&[b"ab", b""]), 2), (r#"{"b": ["ab"]}"#.into(), true));
        assert_eq!(cut(&bytes(&[b"ab"]), 2), (r#"{"b": ["ab"]}"#.into(), false));
        assert_eq!(cut(&bytes(&[b"", b"ab"]), 2), (r#"{"b": ["", "ab"]}"#.into(), false));
        // A cut never empties a list, so protobuf JSON still writes its values.
        let mut line = String::new();
        ExampleView::new(&bytes(&[b"abc"]))
            .render(&mut line, RenderFormat::JsonLine, 1)
            .unwrap();
        assert_eq!(
            line,
            r#"{"features": {"feature": {"b": {"bytesList": {"value": ["YQ=="]}}}}}"#
        );
    }

    #[test]
    fn validation_fails_as_decoding_does() {
        // Every prefix and many one-byte changes of the tricky records: validation must agree
        // with decoding on success and on the exact error.
        let mut cases = 0;
        for (sequence, records) in [(false, tricky_examples()), (true, tricky_sequences())] {
            for record in records {
                let mut variants: Vec<Vec<u8>> = (0..record.len()).map(|n| record[..n].to_vec()).collect();
                for i in 0..record.len() {
                    for b in [0x00, 0x80, 0xff, 0x0a, 0x12, 0x1a, 0x0b, 0x0e, 0x05, 0x03] {
                        let mut v = record.clone();
                        v[i] = b;
                        variants.push(v);
                    }
                }
                for v in variants {
                    cases += 1;
                    // A variant that still decodes must also render as its decoded message.
                    if sequence {
                        let decoded = SequenceExample::decode(&v);
                        assert_eq!(
                            SequenceExampleView::new(&v).validate(),
                            decoded.clone().map(drop),
                            "{v:02x?}"
                        );
                        if let Ok(seq) = decoded {
                            for format in FORMATS {
                                assert_eq!(view_text(&v, format, true), seq.render_to_string(format));
                            }
                        }
                    } else {
                        let decoded = Example::decode(&v);
                        assert_eq!(ExampleView::new(&v).validate(), decoded.clone().map(drop), "{v:02x?}");
                        if let Ok(ex) = decoded {
                            for format in FORMATS {
                                assert_eq!(view_text(&v, format, false), ex.render_to_string(format));
                            }
                        }
                    }
                }
            }
        }
        assert!(cases > 1000);
    }
}

//! Reading the friendly JSON form (`{"age": [19], "name": ["goat"]}`, described in
//! [`super::json`]) in one streaming pass: each feature's values go straight into their protobuf
//! encoding (packed varints, packed little-endian floats, length-delimited bytes) with no JSON
//! tree and no owned message in between, so a line needs about its own size again in memory.
//!
//! The rules are those of the tree-based reader this replaced, kept exactly: without a hint a
//! feature's kind is inferred from all its values (integers → int64; any other number, or a
//! `"NaN"`/`"Infinity"`/`"-Infinity"` string among numbers → float; other strings or base64
//! objects → bytes); a feature list infers one kind over the values of all its list steps; a
//! duplicated key keeps its first place and its last value; and of all the problems of a line
//! the one reported is its syntax error if any, else the first in key order, and within a
//! feature the first value (or step) that does not fit its kind.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use indexmap::IndexMap;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::model::Kind;
use crate::json_text::{float_from_special, from_base64};
use crate::wire::{put_varint, varint_len};

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

/// The message a friendly JSON line is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FriendlyMessage {
    /// A `tf.train.Example`: the line's keys are feature names.
    Example,
    /// A `tf.train.SequenceExample`: `{"context": {...}, "feature_lists": {...}}`.
    SequenceExample,
    /// A SequenceExample when the line is a non-empty object whose keys are all `context` or
    /// `feature_lists`, else an Example.
    Auto,
}

/// Reads one friendly JSON line straight into the serialized message, and says which message it
/// became ([`FriendlyMessage::Auto`] decides by the line's keys).
pub fn encode_friendly_json(
    text: &str,
    hints: &TypeHints,
    message: FriendlyMessage,
) -> Result<(Vec<u8>, FriendlyMessage), FriendlyJsonError> {
    match read(text, hints, message)? {
        Some(done) => Ok(done),
        // The first key said SequenceExample and a later one said otherwise: the line is an
        // Example with a feature called `context` or `feature_lists`.
        None => read(text, hints, FriendlyMessage::Example)?.ok_or(FriendlyJsonError::NotAnObject),
    }
}

const EMPTY_LIST: &str = "an empty list does not show its kind: give a type hint";
/// Room left at the front of the buffer for the (at most two) top-level field headers, so the
/// finished message is moved into place without a second buffer.
const FRONT: usize = 22;

fn syntax_error(e: serde_json::Error) -> FriendlyJsonError {
    FriendlyJsonError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    }
}

/// `Ok(None)`: an [`FriendlyMessage::Auto`] reading found the line is not a SequenceExample
/// after it had started as one.
fn read(
    text: &str,
    hints: &TypeHints,
    message: FriendlyMessage,
) -> Result<Option<(Vec<u8>, FriendlyMessage)>, FriendlyJsonError> {
    let mut r = Reader {
        hints,
        buf: Buf::new(text.len()),
        restart: false,
    };
    r.buf.push(&[0; FRONT]);
    let mut de = serde_json::Deserializer::from_str(text);
    let top = Any(TopSeed { r: &mut r, message })
        .deserialize(&mut de)
        .and_then(|top| de.end().map(|()| top));
    let top = match top {
        Ok(top) => top,
        Err(_) if r.restart => return Ok(None),
        Err(e) => return Err(syntax_error(e)),
    };
    let (pieces, kind) = match top {
        Top::NotAnObject => return Err(FriendlyJsonError::NotAnObject),
        Top::Example(slots) => (vec![(0x0a, segments(slots)?)], FriendlyMessage::Example),
        Top::Sequence(parts) => {
            let (mut context, mut lists) = (None, None);
            for (_, part) in parts {
                match part {
                    Part::Context(slots) => context = Some(segments(slots?)?),
                    Part::Lists(slots) => lists = Some(segments(slots?)?),
                    Part::Unknown(e) => return Err(e),
                }
            }
            let pieces = [(0x0a, context), (0x12, lists)]
                .into_iter()
                .filter_map(|(tag, segs)| segs.map(|s| (tag, s)))
                .collect();
            (pieces, FriendlyMessage::SequenceExample)
        }
    };
    Ok(Some((assemble(r.buf.bytes, &pieces), kind)))
}

type Segment = (usize, usize);
/// Each key's framed map entry in the buffer, or why it could not be read.
type Slots = IndexMap<String, Result<Segment, FriendlyJsonError>>;

fn segments(slots: Slots) -> Result<Vec<Segment>, FriendlyJsonError> {
    slots.into_values().collect()
}

/// Writes each top-level field's header and moves its entries after it, in place when the
/// entries lie in the buffer in their final order (duplicated keys and a `context` after the
/// `feature_lists` are the exceptions, which take a second buffer).
fn assemble(mut buf: Vec<u8>, pieces: &[(u8, Vec<Segment>)]) -> Vec<u8> {
    let header = |tag: u8, segs: &[Segment]| {
        let mut h = vec![tag];
        put_varint(&mut h, segs.iter().map(|(s, e)| e - s).sum::<usize>() as u64);
        h
    };
    let in_order = pieces
        .iter()
        .flat_map(|(_, segs)| segs)
        .try_fold(FRONT, |at, &(s, e)| (s >= at).then_some(e))
        .is_some();
    if !in_order {
        let mut out = Vec::new();
        for (tag, segs) in pieces {
            out.extend_from_slice(&header(*tag, segs));
            for &(s, e) in segs {
                out.extend_from_slice(&buf[s..e]);
            }
        }
        return out;
    }
    // The headers (at most 11 bytes each) fit in the FRONT bytes, so writing never overtakes
    // an entry not yet moved.
    let mut at = 0;
    for (tag, segs) in pieces {
        let h = header(*tag, segs);
        buf[at..at + h.len()].copy_from_slice(&h);
        at += h.len();
        for &(s, e) in segs {
            buf.copy_within(s..e, at);
            at += e - s;
        }
    }
    buf.truncate(at);
    buf
}

// ---- the output buffer ----------------------------------------------------------------------

/// The one buffer a line is encoded into.
struct Buf {
    bytes: Vec<u8>,
    /// The most it grows by at once: doubling would leave up to half of a line-sized buffer
    /// unused, an eighth of the line at most.
    step: usize,
}

impl Buf {
    fn new(line: usize) -> Buf {
        Buf {
            bytes: Vec::new(),
            step: (line / 8).max(4096),
        }
    }

    fn len(&self) -> usize {
        self.bytes.len()
    }

    fn room(&mut self, n: usize) {
        if self.bytes.capacity() - self.bytes.len() < n {
            let grow = self.bytes.capacity().clamp(64, self.step).max(n);
            self.bytes.reserve_exact(grow);
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.room(bytes.len());
        self.bytes.extend_from_slice(bytes);
    }

    fn insert(&mut self, at: usize, bytes: &[u8]) {
        let old = self.bytes.len();
        self.room(bytes.len());
        self.bytes.resize(old + bytes.len(), 0);
        self.bytes.copy_within(at..old, at + bytes.len());
        self.bytes[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// Replaces everything from `at` on.
    fn replace_tail(&mut self, at: usize, bytes: &[u8]) {
        self.bytes.truncate(at);
        self.push(bytes);
    }
}

// ---- protobuf pieces ------------------------------------------------------------------------

fn list_tag(kind: Kind) -> u8 {
    match kind {
        Kind::Bytes => 0x0a,
        Kind::Float => 0x12,
        Kind::Int64 => 0x1a,
    }
}

/// Size of the `*_list` message holding `n` bytes of encoded values: bytes values are already
/// fields; numbers are one packed field, absent when empty.
fn list_len(kind: Kind, n: usize) -> usize {
    match kind {
        Kind::Bytes => n,
        _ if n == 0 => 0,
        _ => 1 + varint_len(n as u64) + n,
    }
}

fn feature_len(kind: Kind, n: usize) -> usize {
    let list = list_len(kind, n);
    1 + varint_len(list as u64) + list
}

/// The bytes of a `Feature` of `kind` that come before its `n` bytes of encoded values.
fn put_feature_header(out: &mut Vec<u8>, kind: Kind, n: usize) {
    out.push(list_tag(kind));
    put_varint(out, list_len(kind, n) as u64);
    if kind != Kind::Bytes && n > 0 {
        out.push(0x0a);
        put_varint(out, n as u64);
    }
}

/// The header of a map entry (`key`, then a value of `value_len` bytes) in its field 1.
fn entry_header(key: &str, value_len: usize) -> Vec<u8> {
    let entry = 1 + varint_len(key.len() as u64) + key.len() + 1 + varint_len(value_len as u64) + value_len;
    let mut h = Vec::with_capacity(entry - value_len + 11);
    h.push(0x0a);
    put_varint(&mut h, entry as u64);
    h.push(0x0a);
    put_varint(&mut h, key.len() as u64);
    h.extend_from_slice(key.as_bytes());
    h.push(0x12);
    put_varint(&mut h, value_len as u64);
    h
}

/// Reads the varint at `*at` of bytes this module wrote.
fn varint_at(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&b) = bytes.get(*at) else { break };
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
    }
    v
}

/// The payload of the length-delimited field at `*at` (one-byte tag), moving past it.
fn field_at<'b>(bytes: &'b [u8], at: &mut usize) -> &'b [u8] {
    *at += 1;
    let n = varint_at(bytes, at) as usize;
    let start = (*at).min(bytes.len());
    let end = start.saturating_add(n).min(bytes.len());
    *at = end;
    &bytes[start..end]
}

/// Rewrites values encoded as `from` (int64 varints, or bytes fields holding NaN / Infinity
/// strings) as packed floats: the values of a list that turned out to be float.
fn values_to_floats(raw: &[u8], from: Kind, out: &mut Vec<u8>) {
    let mut at = 0;
    while at < raw.len() {
        let v = match from {
            Kind::Int64 => varint_at(raw, &mut at) as i64 as f64 as f32,
            // Only NaN / Infinity strings are held as bytes while a list may still be float.
            _ => std::str::from_utf8(field_at(raw, &mut at))
                .ok()
                .and_then(float_from_special)
                .unwrap_or(f32::NAN),
        };
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends a list step (a `Feature` field of a `FeatureList`) of `kind` holding `raw` values.
fn put_step(out: &mut Vec<u8>, kind: Kind, raw: &[u8]) {
    out.push(0x0a);
    put_varint(out, feature_len(kind, raw.len()) as u64);
    put_feature_header(out, kind, raw.len());
    out.extend_from_slice(raw);
}

// ---- values ---------------------------------------------------------------------------------

/// One JSON value in a feature's list (or a feature or list step given as a single value).
#[derive(Clone, Copy)]
enum Elem<'a> {
    Int(i64),
    /// An integer above `i64::MAX`: an integer for kind inference, yet no int64.
    Big(u64),
    Float(f64),
    Str(&'a str),
    Other(&'a Value),
}

/// An [`Elem`] kept until the kind it is read as is known.
enum Scalar {
    Int(i64),
    Big(u64),
    Float(f64),
    Str(String),
    Other(Value),
}

impl Scalar {
    fn new(e: Elem<'_>) -> Scalar {
        match e {
            Elem::Int(i) => Scalar::Int(i),
            Elem::Big(u) => Scalar::Big(u),
            Elem::Float(f) => Scalar::Float(f),
            Elem::Str(s) => Scalar::Str(s.to_owned()),
            Elem::Other(v) => Scalar::Other(v.clone()),
        }
    }

    fn elem(&self) -> Elem<'_> {
        match self {
            Scalar::Int(i) => Elem::Int(*i),
            Scalar::Big(u) => Elem::Big(*u),
            Scalar::Float(f) => Elem::Float(*f),
            Scalar::Str(s) => Elem::Str(s),
            Scalar::Other(v) => Elem::Other(v),
        }
    }
}

impl Elem<'_> {
    fn value(self) -> Value {
        match self {
            Elem::Int(i) => i.into(),
            Elem::Big(u) => u.into(),
            Elem::Float(f) => f.into(),
            Elem::Str(s) => s.into(),
            Elem::Other(v) => v.clone(),
        }
    }

    /// The kind a list of this one value shows.
    fn own_kind(self) -> Kind {
        match self {
            Elem::Int(_) | Elem::Big(_) => Kind::Int64,
            Elem::Float(_) => Kind::Float,
            _ => Kind::Bytes,
        }
    }
}

enum Conv<'a> {
    Int(i64),
    Float(f32),
    Bytes(Cow<'a, [u8]>),
}

enum Fail {
    Not,
    Base64(base64::DecodeError),
}

fn convert(e: Elem<'_>, kind: Kind) -> Result<Conv<'_>, Fail> {
    match (kind, e) {
        (Kind::Int64, Elem::Int(i)) => Ok(Conv::Int(i)),
        (Kind::Int64, _) => Err(Fail::Not),
        // As `serde_json::Number::as_f64`, then to float32.
        (Kind::Float, Elem::Int(i)) => Ok(Conv::Float(i as f64 as f32)),
        (Kind::Float, Elem::Big(u)) => Ok(Conv::Float(u as f64 as f32)),
        (Kind::Float, Elem::Float(f)) => Ok(Conv::Float(f as f32)),
        (Kind::Float, Elem::Str(s)) => float_from_special(s).map(Conv::Float).ok_or(Fail::Not),
        (Kind::Float, Elem::Other(_)) => Err(Fail::Not),
        (Kind::Bytes, Elem::Str(s)) => Ok(Conv::Bytes(Cow::Borrowed(s.as_bytes()))),
        (Kind::Bytes, Elem::Other(Value::Object(o))) => match o.get("base64").and_then(Value::as_str) {
            Some(b) if o.len() == 1 => from_base64(b).map(|v| Conv::Bytes(Cow::Owned(v))).map_err(Fail::Base64),
            _ => Err(Fail::Not),
        },
        (Kind::Bytes, _) => Err(Fail::Not),
    }
}

fn fail_message(e: Elem<'_>, kind: Kind, fail: Fail) -> String {
    match (fail, kind) {
        (Fail::Base64(err), _) => format!("bad base64: {err}"),
        (Fail::Not, Kind::Int64) => format!("{} is not an int64", e.value()),
        (Fail::Not, Kind::Float) => format!("{} is not a float", e.value()),
        (Fail::Not, Kind::Bytes) => format!("{} is not bytes (a string or {{\"base64\": …}})", e.value()),
    }
}

fn put_conv(out: &mut Vec<u8>, c: &Conv<'_>) {
    match c {
        Conv::Int(i) => put_varint(out, *i as u64),
        Conv::Float(f) => out.extend_from_slice(&f.to_le_bytes()),
        Conv::Bytes(b) => {
            out.push(0x0a);
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
    }
}

const KINDS: [Kind; 3] = [Kind::Bytes, Kind::Float, Kind::Int64];

fn slot(kind: Kind) -> usize {
    match kind {
        Kind::Bytes => 0,
        Kind::Float => 1,
        Kind::Int64 => 2,
    }
}

/// The values of one feature, or of all the steps of one feature list, encoded as they arrive
/// in the kind they show so far; re-encoded when a later value changes that kind.
struct Values {
    hint: Option<Kind>,
    /// Values seen by class: integers, other numbers, NaN / Infinity strings, anything else.
    ints: bool,
    floats: bool,
    specials: bool,
    others: bool,
    /// By kind: the first value (and its step) that kind cannot hold, with the reason.
    errs: [Option<(usize, String)>; 3],
    /// How the values written so far are encoded.
    repr: Kind,
    /// The result is an error whatever follows: nothing more is encoded.
    dead: bool,
    /// Where this feature's encoding starts in the buffer.
    start: usize,
    /// Where the current list step's values start (`start` for a feature).
    open: usize,
    step: usize,
    step_values: usize,
    /// Feature lists without a hint: single-value steps, read once the list's kind is known.
    scalars: Vec<(usize, Scalar)>,
    first_empty: Option<usize>,
}

impl Values {
    fn new(hint: Option<Kind>, start: usize) -> Values {
        Values {
            hint,
            ints: false,
            floats: false,
            specials: false,
            others: false,
            errs: [None, None, None],
            repr: hint.unwrap_or(Kind::Int64),
            dead: false,
            start,
            open: start,
            step: 0,
            step_values: 0,
            scalars: vec![],
            first_empty: None,
        }
    }

    fn kind(&self) -> Option<Kind> {
        if self.hint.is_some() {
            return self.hint;
        }
        if self.others || (self.specials && !self.ints && !self.floats) {
            Some(Kind::Bytes)
        } else if self.floats || self.specials {
            Some(Kind::Float)
        } else if self.ints {
            Some(Kind::Int64)
        } else {
            None
        }
    }

    fn push(&mut self, e: Elem<'_>, buf: &mut Buf) {
        self.step_values += 1;
        if self.dead {
            return;
        }
        let kinds: &[Kind] = match &self.hint {
            Some(k) => std::slice::from_ref(k),
            None => {
                match e {
                    Elem::Int(_) | Elem::Big(_) => self.ints = true,
                    Elem::Float(_) => self.floats = true,
                    Elem::Str(s) if float_from_special(s).is_some() => self.specials = true,
                    _ => self.others = true,
                }
                &KINDS
            }
        };
        let mut got: [Option<Conv<'_>>; 3] = [None, None, None];
        for &k in kinds {
            if self.errs[slot(k)].is_none() {
                match convert(e, k) {
                    Ok(c) => got[slot(k)] = Some(c),
                    Err(f) => self.errs[slot(k)] = Some((self.step, fail_message(e, k, f))),
                }
            }
        }
        let Some(kind) = self.kind() else { return };
        if (self.hint.is_some() || self.others) && self.errs[slot(kind)].is_some() {
            // The kind can no longer change and it cannot hold this list: an error.
            buf.bytes.truncate(self.start);
            self.dead = true;
            return;
        }
        // An integer above i64::MAX leaves float as the only kind that can hold the list.
        let want = if kind == Kind::Int64 && self.errs[slot(Kind::Int64)].is_some() {
            Kind::Float
        } else {
            kind
        };
        if want != self.repr {
            self.reencode(want, buf);
        }
        let c = match got[slot(self.repr)].take() {
            Some(c) => c,
            None => match convert(e, self.repr) {
                Ok(c) => c,
                Err(_) => return,
            },
        };
        let n = match &c {
            Conv::Bytes(b) => b.len() + 11,
            _ => 10,
        };
        buf.room(n);
        put_conv(&mut buf.bytes, &c);
    }

    /// Re-encodes the values written so far (closed list steps and the open one) as `to`.
    fn reencode(&mut self, to: Kind, buf: &mut Buf) {
        let from = self.repr;
        let mut out = Vec::new();
        let closed = &buf.bytes[self.start..self.open];
        let mut at = 0;
        while at < closed.len() {
            let feature = field_at(closed, &mut at);
            if feature.is_empty() {
                // A null step, or a single value read later: no kind to change.
                out.extend_from_slice(&[0x0a, 0x00]);
                continue;
            }
            let mut p = 0;
            let payload = field_at(feature, &mut p);
            let raw = match from {
                Kind::Bytes => payload,
                _ if payload.is_empty() => payload,
                _ => field_at(payload, &mut 0),
            };
            let mut values = Vec::new();
            values_to_floats(raw, from, &mut values);
            put_step(&mut out, to, &values);
        }
        let open = out.len();
        values_to_floats(&buf.bytes[self.open..], from, &mut out);
        buf.replace_tail(self.start, &out);
        self.open = self.start + open;
        self.repr = to;
    }

    fn close_step(&mut self, buf: &mut Buf) {
        if self.step_values == 0 && self.hint.is_none() {
            self.first_empty.get_or_insert(self.step);
        }
        if !self.dead {
            let n = buf.len() - self.open;
            let mut h = vec![0x0a];
            put_varint(&mut h, feature_len(self.repr, n) as u64);
            put_feature_header(&mut h, self.repr, n);
            buf.insert(self.open, &h);
        }
        self.next_step(buf);
    }

    fn next_step(&mut self, buf: &mut Buf) {
        self.step += 1;
        self.step_values = 0;
        self.open = buf.len();
    }

    /// A step that is one value, not a list: read with the list's kind, which without a hint
    /// only the list steps show, so it waits for the end of the list.
    fn scalar_step(&mut self, e: Elem<'_>, buf: &mut Buf) {
        if self.hint.is_some() {
            self.push(e, buf);
            return self.close_step(buf);
        }
        self.scalars.push((self.step, Scalar::new(e)));
        if !self.dead {
            buf.push(&[0x0a, 0x00]);
        }
        self.next_step(buf);
    }

    fn null_step(&mut self, buf: &mut Buf) {
        if !self.dead {
            buf.push(&[0x0a, 0x00]);
        }
        self.next_step(buf);
    }

    /// The first error of a feature list, by step: a value its kind cannot hold, a single-value
    /// step that cannot be read, or an empty step when no step shows the kind.
    fn list_error(&self) -> Option<String> {
        let kind = self.kind();
        let mut err = match kind {
            Some(k) => self.errs[slot(k)].clone(),
            None => self.first_empty.map(|s| (s, EMPTY_LIST.to_owned())),
        };
        for (step, s) in &self.scalars {
            if err.as_ref().is_some_and(|(at, _)| at < step) {
                break;
            }
            let e = s.elem();
            let k = kind.unwrap_or(e.own_kind());
            if let Err(f) = convert(e, k) {
                err = Some((*step, fail_message(e, k, f)));
                break;
            }
        }
        err.map(|(_, reason)| reason)
    }

    /// Puts the single-value steps in place of their placeholders.
    fn fill_scalars(&self, buf: &mut Buf) {
        let kind = self.kind();
        let steps = &buf.bytes[self.start..];
        let mut out = Vec::with_capacity(steps.len());
        let mut scalars = self.scalars.iter().peekable();
        let (mut at, mut step) = (0, 0);
        while at < steps.len() {
            let from = at;
            field_at(steps, &mut at);
            match scalars.next_if(|(s, _)| *s == step) {
                Some((_, s)) => {
                    let e = s.elem();
                    let k = kind.unwrap_or(e.own_kind());
                    let mut raw = Vec::new();
                    if let Ok(c) = convert(e, k) {
                        put_conv(&mut raw, &c);
                    }
                    put_step(&mut out, k, &raw);
                }
                None => out.extend_from_slice(&steps[from..at]),
            }
            step += 1;
        }
        buf.replace_tail(self.start, &out);
    }
}

/// Frames the encoding from `start` on as the map entry `key`.
fn frame_entry(buf: &mut Buf, start: usize, key: &str) -> Segment {
    let h = entry_header(key, buf.len() - start);
    buf.insert(start, &h);
    (start, buf.len())
}

// ---- the streaming reader -------------------------------------------------------------------

struct Reader<'h> {
    hints: &'h TypeHints,
    buf: Buf,
    /// Set when an [`FriendlyMessage::Auto`] reading stops: the line is not a SequenceExample.
    restart: bool,
}

enum Top {
    NotAnObject,
    Example(Slots),
    Sequence(IndexMap<String, Part>),
}

enum Part {
    Context(Result<Slots, FriendlyJsonError>),
    Lists(Result<Slots, FriendlyJsonError>),
    Unknown(FriendlyJsonError),
}

/// What to do with each kind of JSON value; [`Any`] sends every value the deserializer meets to
/// one of these, so every value is read by `deserialize_any` exactly as `serde_json::Value`
/// reads it (same syntax errors, same nesting limit).
trait Handler<'de>: Sized {
    type Out;
    fn scalar(self, e: Elem<'_>) -> Self::Out;
    fn null(self) -> Self::Out;
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error>;
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error>;
}

struct Any<H>(H);

impl<'de, H: Handler<'de>> DeserializeSeed<'de> for Any<H> {
    type Value = H::Out;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<H::Out, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, H: Handler<'de>> Visitor<'de> for Any<H> {
    type Value = H::Out;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<H::Out, E> {
        Ok(self.0.scalar(Elem::Other(&Value::Bool(v))))
    }
    fn visit_i64<E>(self, v: i64) -> Result<H::Out, E> {
        Ok(self.0.scalar(Elem::Int(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<H::Out, E> {
        Ok(self.0.scalar(match i64::try_from(v) {
            Ok(i) => Elem::Int(i),
            Err(_) => Elem::Big(v),
        }))
    }
    fn visit_f64<E>(self, v: f64) -> Result<H::Out, E> {
        Ok(self.0.scalar(Elem::Float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<H::Out, E> {
        Ok(self.0.scalar(Elem::Str(v)))
    }
    fn visit_unit<E>(self) -> Result<H::Out, E> {
        Ok(self.0.null())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<H::Out, A::Error> {
        self.0.seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<H::Out, A::Error> {
        self.0.map(map)
    }
}

/// A map key, read as `serde_json::Value` reads one.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Key {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
}

/// Reads a value and keeps nothing of it.
struct Skip;

impl<'de> Handler<'de> for Skip {
    type Out = ();
    fn scalar(self, _: Elem<'_>) {}
    fn null(self) {}
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Any(Skip))?.is_some() {}
        Ok(())
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Key)?.is_some() {
            map.next_value_seed(Any(Skip))?;
        }
        Ok(())
    }
}

/// An object inside a list (a base64 value, or an error to quote) as a whole `Value`.
fn object<'de, A: MapAccess<'de>>(map: A) -> Result<Value, A::Error> {
    Value::deserialize(MapAccessDeserializer::new(map))
}

/// One value of a feature's list, or of a list step.
struct ElemSeed<'a> {
    values: &'a mut Values,
    buf: &'a mut Buf,
}

impl<'de> Handler<'de> for ElemSeed<'_> {
    type Out = ();
    fn scalar(self, e: Elem<'_>) {
        self.values.push(e, self.buf);
    }
    fn null(self) {
        self.scalar(Elem::Other(&Value::Null));
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let v = Value::deserialize(SeqAccessDeserializer::new(seq))?;
        self.scalar(Elem::Other(&v));
        Ok(())
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let v = object(map)?;
        self.scalar(Elem::Other(&v));
        Ok(())
    }
}

/// A feature of an Example or a context: a list of values, one value, or `null`.
struct FeatureSeed<'a, 'h> {
    r: &'a mut Reader<'h>,
    key: &'a str,
}

impl FeatureSeed<'_, '_> {
    fn values(&self) -> Values {
        Values::new(self.r.hints.get(self.key).copied(), self.r.buf.len())
    }

    fn finish(self, values: Values) -> Result<Segment, FriendlyJsonError> {
        let buf = &mut self.r.buf;
        let bad = |reason: String| FriendlyJsonError::Value {
            key: self.key.to_owned(),
            reason,
        };
        let Some(kind) = values.kind() else {
            return Err(bad(EMPTY_LIST.to_owned()));
        };
        if let Some((_, reason)) = &values.errs[slot(kind)] {
            buf.bytes.truncate(values.start);
            return Err(bad(reason.clone()));
        }
        let mut h = Vec::new();
        put_feature_header(&mut h, kind, buf.len() - values.start);
        buf.insert(values.start, &h);
        Ok(frame_entry(buf, values.start, self.key))
    }
}

impl<'de> Handler<'de> for FeatureSeed<'_, '_> {
    type Out = Result<Segment, FriendlyJsonError>;
    fn scalar(self, e: Elem<'_>) -> Self::Out {
        let mut values = self.values();
        values.push(e, &mut self.r.buf);
        self.finish(values)
    }
    fn null(self) -> Self::Out {
        let start = self.r.buf.len();
        Ok(frame_entry(&mut self.r.buf, start, self.key))
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let mut values = self.values();
        while seq
            .next_element_seed(Any(ElemSeed {
                values: &mut values,
                buf: &mut self.r.buf,
            }))?
            .is_some()
        {}
        Ok(self.finish(values))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        let v = object(map)?;
        Ok(self.scalar(Elem::Other(&v)))
    }
}

/// One step of a feature list.
struct StepSeed<'a> {
    values: &'a mut Values,
    buf: &'a mut Buf,
}

impl<'de> Handler<'de> for StepSeed<'_> {
    type Out = ();
    fn scalar(self, e: Elem<'_>) {
        self.values.scalar_step(e, self.buf);
    }
    fn null(self) {
        self.values.null_step(self.buf);
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Any(ElemSeed {
                values: &mut *self.values,
                buf: &mut *self.buf,
            }))?
            .is_some()
        {}
        self.values.close_step(self.buf);
        Ok(())
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let v = object(map)?;
        self.scalar(Elem::Other(&v));
        Ok(())
    }
}

/// A feature list: a list of steps.
struct ListSeed<'a, 'h> {
    r: &'a mut Reader<'h>,
    key: &'a str,
}

impl ListSeed<'_, '_> {
    fn not_steps(&self) -> Result<Segment, FriendlyJsonError> {
        Err(FriendlyJsonError::Value {
            key: self.key.to_owned(),
            reason: "a feature list must be a list of steps".into(),
        })
    }
}

impl<'de> Handler<'de> for ListSeed<'_, '_> {
    type Out = Result<Segment, FriendlyJsonError>;
    fn scalar(self, _: Elem<'_>) -> Self::Out {
        self.not_steps()
    }
    fn null(self) -> Self::Out {
        self.not_steps()
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let buf = &mut self.r.buf;
        let mut values = Values::new(self.r.hints.get(self.key).copied(), buf.len());
        while seq
            .next_element_seed(Any(StepSeed {
                values: &mut values,
                buf: &mut *buf,
            }))?
            .is_some()
        {}
        if let Some(reason) = values.list_error() {
            buf.bytes.truncate(values.start);
            return Ok(Err(FriendlyJsonError::Value {
                key: self.key.to_owned(),
                reason,
            }));
        }
        if !values.scalars.is_empty() {
            values.fill_scalars(buf);
        }
        Ok(Ok(frame_entry(buf, values.start, self.key)))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        Skip.map(map)?;
        Ok(self.not_steps())
    }
}

/// An object of features (an Example, a context) or of feature lists, as map entries.
struct EntriesSeed<'a, 'h> {
    r: &'a mut Reader<'h>,
    lists: bool,
}

impl EntriesSeed<'_, '_> {
    fn read<'de, A: MapAccess<'de>>(self, first: Option<String>, mut map: A) -> Result<Slots, A::Error> {
        let mut slots = Slots::new();
        let mut key = first;
        if key.is_none() {
            key = map.next_key_seed(Key)?;
        }
        while let Some(k) = key {
            let result = if self.lists {
                map.next_value_seed(Any(ListSeed {
                    r: &mut *self.r,
                    key: &k,
                }))?
            } else {
                map.next_value_seed(Any(FeatureSeed {
                    r: &mut *self.r,
                    key: &k,
                }))?
            };
            slots.insert(k, result);
            key = map.next_key_seed(Key)?;
        }
        Ok(slots)
    }
}

impl<'de> Handler<'de> for EntriesSeed<'_, '_> {
    type Out = Result<Slots, FriendlyJsonError>;
    fn scalar(self, _: Elem<'_>) -> Self::Out {
        Err(FriendlyJsonError::NotAnObject)
    }
    fn null(self) -> Self::Out {
        Err(FriendlyJsonError::NotAnObject)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error> {
        Skip.seq(seq)?;
        Ok(Err(FriendlyJsonError::NotAnObject))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        self.read(None, map).map(Ok)
    }
}

/// The whole line.
struct TopSeed<'a, 'h> {
    r: &'a mut Reader<'h>,
    message: FriendlyMessage,
}

fn is_sequence_key(key: &str) -> bool {
    key == "context" || key == "feature_lists"
}

impl<'de> Handler<'de> for TopSeed<'_, '_> {
    type Out = Top;
    fn scalar(self, _: Elem<'_>) -> Top {
        Top::NotAnObject
    }
    fn null(self) -> Top {
        Top::NotAnObject
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        Skip.seq(seq)?;
        Ok(Top::NotAnObject)
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let first = map.next_key_seed(Key)?;
        let sequence = match self.message {
            FriendlyMessage::Example => false,
            FriendlyMessage::SequenceExample => true,
            FriendlyMessage::Auto => first.as_deref().is_some_and(is_sequence_key),
        };
        if !sequence {
            let entries = EntriesSeed {
                r: &mut *self.r,
                lists: false,
            };
            return entries.read(first, map).map(Top::Example);
        }
        let mut parts = IndexMap::new();
        let mut key = first;
        while let Some(k) = key {
            let part = match k.as_str() {
                "context" => Part::Context(map.next_value_seed(Any(EntriesSeed {
                    r: &mut *self.r,
                    lists: false,
                }))?),
                "feature_lists" => Part::Lists(map.next_value_seed(Any(EntriesSeed {
                    r: &mut *self.r,
                    lists: true,
                }))?),
                _ if self.message == FriendlyMessage::Auto => {
                    self.r.restart = true;
                    return Err(A::Error::custom("not a SequenceExample"));
                }
                other => {
                    map.next_value_seed(Any(Skip))?;
                    Part::Unknown(FriendlyJsonError::Value {
                        key: other.to_owned(),
                        reason: "a SequenceExample has only \"context\" and \"feature_lists\"".into(),
                    })
                }
            };
            parts.insert(k, part);
            key = map.next_key_seed(Key)?;
        }
        Ok(Top::Sequence(parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::{Example, SequenceExample};
    use crate::example::{Feature, FeatureList};

    fn example(text: &str) -> Result<Example, String> {
        hinted(text, &[])
    }

    fn hinted(text: &str, hints: &[(&str, Kind)]) -> Result<Example, String> {
        let hints = hints.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Example::from_friendly_json(text, &hints).map_err(|e| e.to_string())
    }

    fn feature(text: &str) -> Feature {
        example(text).expect("reads").get("x").cloned().expect("x")
    }

    fn seq(text: &str) -> Result<SequenceExample, String> {
        SequenceExample::from_friendly_json(text, &TypeHints::new()).map_err(|e| e.to_string())
    }

    fn steps(text: &str) -> Vec<Feature> {
        let seq = seq(text).expect("reads");
        seq.feature_list("x").expect("x").feature.clone()
    }

    #[test]
    fn ints_become_floats_when_a_float_or_nan_follows() {
        assert_eq!(feature(r#"{"x": [1, 2, 300]}"#), Feature::Int64(vec![1, 2, 300]));
        assert_eq!(
            feature(r#"{"x": [1, -2, 300, 2.5]}"#),
            Feature::Float(vec![1.0, -2.0, 300.0, 2.5])
        );
        let Feature::Float(v) = feature(r#"{"x": [1, "NaN", "-Infinity"]}"#) else {
            panic!("float")
        };
        assert!(v[0] == 1.0 && v[1].is_nan() && v[2] == f32::NEG_INFINITY);
        // Double rounding as before: through f64, then f32.
        assert_eq!(
            feature(r#"{"x": [16777217, 0.5]}"#),
            Feature::Float(vec![16777216.0, 0.5])
        );
        // Above i64::MAX: an integer for inference, a float when the list is float.
        assert_eq!(
            feature(r#"{"x": [18446744073709551615, 0.5]}"#),
            Feature::Float(vec![1.8446744e19, 0.5])
        );
        assert_eq!(
            example(r#"{"x": [1, 18446744073709551615]}"#).unwrap_err(),
            r#"feature "x": 18446744073709551615 is not an int64"#
        );
    }

    #[test]
    fn nan_strings_alone_are_bytes() {
        assert_eq!(
            feature(r#"{"x": ["NaN", "Infinity"]}"#),
            Feature::Bytes(vec![b"NaN".to_vec(), b"Infinity".to_vec()])
        );
        let Feature::Float(v) = feature(r#"{"x": ["NaN", "Infinity", 2]}"#) else {
            panic!("float")
        };
        assert!(v[0].is_nan() && v[1] == f32::INFINITY && v[2] == 2.0);
        assert_eq!(
            example(r#"{"x": ["NaN", 2, "y"]}"#).unwrap_err(),
            r#"feature "x": 2 is not bytes (a string or {"base64": …})"#
        );
    }

    #[test]
    fn hints_fix_the_kind() {
        let float = [("x", Kind::Float)];
        assert_eq!(
            hinted(r#"{"x": [1, 2]}"#, &float).unwrap().get("x"),
            Some(&Feature::Float(vec![1.0, 2.0]))
        );
        let bytes = [("x", Kind::Bytes)];
        assert_eq!(
            hinted(r#"{"x": "NaN"}"#, &bytes).unwrap().get("x"),
            Some(&Feature::Bytes(vec![b"NaN".to_vec()]))
        );
        assert_eq!(
            hinted(r#"{"x": []}"#, &[("x", Kind::Int64)]).unwrap().get("x"),
            Some(&Feature::Int64(vec![]))
        );
        assert_eq!(hinted(r#"{"x": null}"#, &float).unwrap().get("x"), Some(&Feature::None));
        assert_eq!(
            hinted(r#"{"x": [1, "a", 2.5]}"#, &float).unwrap_err(),
            r#"feature "x": "a" is not a float"#
        );
        assert_eq!(
            hinted(r#"{"x": [1, 2.5]}"#, &[("x", Kind::Int64)]).unwrap_err(),
            r#"feature "x": 2.5 is not an int64"#
        );
    }

    #[test]
    fn base64_objects_and_scalars() {
        assert_eq!(
            feature(r#"{"x": ["a", {"base64": "/wA="}]}"#),
            Feature::Bytes(vec![b"a".to_vec(), vec![0xff, 0]])
        );
        assert_eq!(
            feature(r#"{"x": {"base64": "/wA="}}"#),
            Feature::Bytes(vec![vec![0xff, 0]])
        );
        assert_eq!(feature(r#"{"x": 7}"#), Feature::Int64(vec![7]));
        assert!(example(r#"{"x": [{"base64": "!!"}]}"#)
            .unwrap_err()
            .starts_with(r#"feature "x": bad base64: "#));
        assert_eq!(
            example(r#"{"x": [{"base64": "AA==", "y": 1}]}"#).unwrap_err(),
            r#"feature "x": {"base64":"AA==","y":1} is not bytes (a string or {"base64": …})"#
        );
        assert_eq!(
            example(r#"{"x": [1, true, "a"]}"#).unwrap_err(),
            r#"feature "x": 1 is not bytes (a string or {"base64": …})"#
        );
    }

    #[test]
    fn null_empty_and_duplicated_keys() {
        let ex = example(r#"{"a": null, "b": [1], "a": ["s"]}"#).unwrap();
        let keys: Vec<_> = ex.features().iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(ex.get("a"), Some(&Feature::Bytes(vec![b"s".to_vec()])));
        // The bad first value of a key is forgotten when the key comes again.
        assert!(example(r#"{"a": [1, "x", 2.5], "a": [1]}"#).is_ok());
        assert_eq!(
            example(r#"{"a": []}"#).unwrap_err(),
            r#"feature "a": an empty list does not show its kind: give a type hint"#
        );
        assert_eq!(
            Example::encode_friendly_json("{}", &TypeHints::new()),
            Ok(vec![0x0a, 0x00])
        );
    }

    #[test]
    fn errors_come_in_key_order_after_syntax() {
        assert_eq!(
            example(r#"{"a": [1, "x", 2.5], "b": []}"#).unwrap_err(),
            r#"feature "a": 1 is not bytes (a string or {"base64": …})"#
        );
        assert!(example(r#"{"a": [1, "x", 2.5], "b": [}"#)
            .unwrap_err()
            .starts_with("invalid JSON: "));
        assert_eq!(example("[1, 2]").unwrap_err(), "expected a JSON object of features");
        assert_eq!(
            example(r#"{"a": [1e400]}"#).unwrap_err(),
            "invalid JSON: number out of range at line 1 column 12"
        );
    }

    #[test]
    fn sequence_form() {
        let s = seq(r#"{"feature_lists": {"x": [[1], [2, 3]]}, "context": {"c": ["a"]}}"#).unwrap();
        assert_eq!(s.context_feature("c"), Some(&Feature::Bytes(vec![b"a".to_vec()])));
        let list = FeatureList {
            feature: vec![Feature::Int64(vec![1]), Feature::Int64(vec![2, 3])],
        };
        assert_eq!(s.feature_list("x"), Some(&list));
        // One kind over all steps: a float in a later step makes earlier steps float.
        assert_eq!(
            steps(r#"{"feature_lists": {"x": [[1], [], null, [2.5]]}}"#),
            [
                Feature::Float(vec![1.0]),
                Feature::Float(vec![]),
                Feature::None,
                Feature::Float(vec![2.5])
            ]
        );
        // Single-value steps take the kind of the list steps, or their own when none shows it.
        assert_eq!(
            steps(r#"{"feature_lists": {"x": [5, [0.5]]}}"#),
            [Feature::Float(vec![5.0]), Feature::Float(vec![0.5])]
        );
        assert_eq!(
            steps(r#"{"feature_lists": {"x": [5, "a", null]}}"#),
            [
                Feature::Int64(vec![5]),
                Feature::Bytes(vec![b"a".to_vec()]),
                Feature::None
            ]
        );
        assert_eq!(
            seq(r#"{"feature_lists": {"x": [2.5, [1]]}}"#).unwrap_err(),
            r#"feature "x": 2.5 is not an int64"#
        );
        assert_eq!(
            seq(r#"{"feature_lists": {"x": [[], 5]}}"#).unwrap_err(),
            r#"feature "x": an empty list does not show its kind: give a type hint"#
        );
        assert_eq!(
            seq(r#"{"feature_lists": {"x": 5}}"#).unwrap_err(),
            r#"feature "x": a feature list must be a list of steps"#
        );
        assert_eq!(
            seq(r#"{"context": {}, "other": 1}"#).unwrap_err(),
            r#"feature "other": a SequenceExample has only "context" and "feature_lists""#
        );
        assert_eq!(
            seq(r#"{"context": [1]}"#).unwrap_err(),
            "expected a JSON object of features"
        );
    }

    #[test]
    fn auto_decides_by_all_the_keys() {
        let auto = |text: &str| encode_friendly_json(text, &TypeHints::new(), FriendlyMessage::Auto).map(|r| r.1);
        assert_eq!(auto(r#"{"context": {"a": [1]}}"#), Ok(FriendlyMessage::SequenceExample));
        assert_eq!(auto(r#"{"context": [1], "age": [2]}"#), Ok(FriendlyMessage::Example));
        assert_eq!(auto("{}"), Ok(FriendlyMessage::Example));
        assert_eq!(auto(r#"{"context": [1]}"#), Err(FriendlyJsonError::NotAnObject));
    }
}

//! Zero-copy views of serialized `Example`s and `SequenceExample`s, for the parsing hot path.
//!
//! A view walks the bytes in place: map entries are yielded one by one with their key as a
//! slice, and a feature's values are decoded only when asked for. Features nobody asks for are
//! skipped without looking at their values. The semantics are protobuf's, the same as
//! [`Example::decode`](super::Example::decode): several `features` fields are one map, the
//! last entry of a duplicated key wins, a oneof keeps the last kind (merging repeats of it),
//! packed and unpacked elements may mix, unknown fields are skipped.
//!
//! ```
//! use tfrec::example::{Example, ExampleView, Kind};
//!
//! let bytes = Example::builder().int64("age", 19).float("score", [0.5, 1.5]).build()?.encode();
//! let view = ExampleView::new(&bytes);
//! let score = view.get(b"score")?.expect("present");
//! assert_eq!(score.kind(), Some(Kind::Float));
//! let mut values = Vec::new();
//! score.extend_floats(&mut values)?;
//! assert_eq!(values, [0.5, 1.5]);
//! # Ok::<(), tfrec::Error>(())
//! ```

use std::convert::Infallible;
use std::ops::ControlFlow;

use super::codec::{merge_float_list, merge_int64_list};
use super::model::{Feature, Kind};
use crate::wire::{DecodeError, DecodeErrorKind, WireReader, WireType};

/// The serialized body of a message and its absolute offset (for errors).
type Part<'a> = (&'a [u8], usize);

/// One value of a feature, as the value walkers yield them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// A `bytes_list` value, borrowed from the record.
    Bytes(&'a [u8]),
    /// A `float_list` value.
    Float(f32),
    /// An `int64_list` value.
    Int64(i64),
}

/// The list messages of a feature's final oneof kind: usually exactly one.
#[derive(Debug, Clone)]
pub(super) enum Lists<'a> {
    None,
    One(Part<'a>),
    Many(Vec<Part<'a>>),
}

impl<'a> Lists<'a> {
    fn push(&mut self, part: Part<'a>) {
        *self = match std::mem::replace(self, Lists::None) {
            Lists::None => Lists::One(part),
            Lists::One(first) => Lists::Many(vec![first, part]),
            Lists::Many(mut v) => {
                v.push(part);
                Lists::Many(v)
            }
        }
    }

    pub(super) fn as_slice(&self) -> &[Part<'a>] {
        match self {
            Lists::None => &[],
            Lists::One(p) => std::slice::from_ref(p),
            Lists::Many(v) => v,
        }
    }
}

/// One feature's value, not yet decoded.
#[derive(Debug, Clone)]
pub struct FeatureView<'a> {
    kind: Option<Kind>,
    lists: Lists<'a>,
}

impl<'a> FeatureView<'a> {
    /// A view of one serialized `Feature` message found at absolute offset `base`.
    #[inline]
    pub fn from_feature_bytes(bytes: &'a [u8], base: usize) -> Result<Self, DecodeError> {
        if let Some(view) = Self::one_list(bytes, base) {
            return Ok(view);
        }
        let mut view = FeatureView {
            kind: None,
            lists: Lists::None,
        };
        view.merge(bytes, base)?;
        Ok(view)
    }

    /// The fast path: a `Feature` that is exactly one list field, as every standard writer
    /// produces, or no field at all.
    #[inline]
    fn one_list(bytes: &'a [u8], base: usize) -> Option<Self> {
        let Some((&tag, rest)) = bytes.split_first() else {
            return Some(FeatureView {
                kind: None,
                lists: Lists::None,
            });
        };
        let kind = match tag {
            0x0a => Kind::Bytes,
            0x12 => Kind::Float,
            0x1a => Kind::Int64,
            _ => return None,
        };
        let mut r = WireReader::nested(rest, base + 1);
        let part = r.read_len().ok()?;
        r.is_empty().then_some(FeatureView {
            kind: Some(kind),
            lists: Lists::One(part),
        })
    }

    /// Merges another serialized `Feature` into this one (a repeated `value` field).
    fn merge(&mut self, bytes: &'a [u8], base: usize) -> Result<(), DecodeError> {
        let mut r = WireReader::nested(bytes, base);
        while !r.is_empty() {
            let kind = match r.read_tag()? {
                (1, WireType::Len) => Kind::Bytes,
                (2, WireType::Len) => Kind::Float,
                (3, WireType::Len) => Kind::Int64,
                (field, wt) => {
                    r.skip(field, wt)?;
                    continue;
                }
            };
            let part = r.read_len()?;
            if self.kind != Some(kind) {
                self.kind = Some(kind);
                self.lists = Lists::None;
            }
            self.lists.push(part);
        }
        Ok(())
    }

    /// The kind, or `None` when no kind is set (an empty `Feature`).
    #[inline]
    pub fn kind(&self) -> Option<Kind> {
        self.kind
    }

    /// Number of values, counted without decoding them where the encoding allows (a packed
    /// int64 block is counted by its varint terminators, a packed float block by its length).
    pub fn count(&self) -> Result<usize, DecodeError> {
        let mut n = 0;
        for &(bytes, base) in self.lists.as_slice() {
            let mut r = WireReader::nested(bytes, base);
            while !r.is_empty() {
                match (self.kind, r.read_tag()?) {
                    (Some(Kind::Int64), (1, WireType::Varint)) => {
                        r.read_varint()?;
                        n += 1;
                    }
                    (Some(Kind::Int64), (1, WireType::Len)) => {
                        let (packed, at) = r.read_len()?;
                        n += count_varints(packed, at)?;
                    }
                    (Some(Kind::Float), (1, WireType::Fixed32)) => {
                        r.read_fixed32()?;
                        n += 1;
                    }
                    (Some(Kind::Float), (1, WireType::Len)) => {
                        let (packed, at) = r.read_len()?;
                        if packed.len() % 4 != 0 {
                            return Err(DecodeError {
                                offset: at,
                                kind: DecodeErrorKind::PackedFloatLength(packed.len()),
                            });
                        }
                        n += packed.len() / 4;
                    }
                    (Some(Kind::Bytes), (1, WireType::Len)) => {
                        r.read_len()?;
                        n += 1;
                    }
                    (_, (field, wt)) => r.skip(field, wt)?,
                }
            }
        }
        Ok(n)
    }

    /// Appends the int64 values to `out` (nothing unless the kind is int64); returns how many.
    pub fn extend_int64s(&self, out: &mut Vec<i64>) -> Result<usize, DecodeError> {
        if self.kind != Some(Kind::Int64) {
            return Ok(0);
        }
        let before = out.len();
        for &(bytes, base) in self.lists.as_slice() {
            // Fast path: exactly one packed block, as every standard writer produces.
            if let Some((packed, at)) = single_packed_block(bytes, base) {
                let mut r = WireReader::nested(packed, at);
                while !r.is_empty() {
                    out.push(r.read_varint()? as i64);
                }
            } else {
                merge_int64_list(out, WireReader::nested(bytes, base))?;
            }
        }
        Ok(out.len() - before)
    }

    /// Appends the float values to `out` (nothing unless the kind is float); returns how many.
    pub fn extend_floats(&self, out: &mut Vec<f32>) -> Result<usize, DecodeError> {
        if self.kind != Some(Kind::Float) {
            return Ok(0);
        }
        let before = out.len();
        for &(bytes, base) in self.lists.as_slice() {
            match single_packed_block(bytes, base) {
                // Fast path: one packed block of little-endian floats, copied in one pass.
                Some((packed, _)) if packed.len() % 4 == 0 => out.extend(
                    packed
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                ),
                _ => merge_float_list(out, WireReader::nested(bytes, base))?,
            }
        }
        Ok(out.len() - before)
    }

    /// Calls `f` with each value in order, as decoding would list them, until `f` breaks;
    /// nothing is allocated, so a huge list costs no memory of its own.
    #[inline]
    pub fn try_for_each_value<B>(
        &self,
        mut f: impl FnMut(Value<'a>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>, DecodeError> {
        let Some(kind) = self.kind else {
            return Ok(ControlFlow::Continue(()));
        };
        for &(bytes, base) in self.lists.as_slice() {
            if let ControlFlow::Break(b) = walk_list(kind, bytes, base, &mut f)? {
                return Ok(ControlFlow::Break(b));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Calls `f` with each value of `kind` (nothing unless the feature has that kind);
    /// returns how many.
    #[inline]
    fn for_each_of<T>(
        &self,
        kind: Kind,
        pick: impl Fn(Value<'a>) -> Option<T>,
        mut f: impl FnMut(T),
    ) -> Result<usize, DecodeError> {
        if self.kind != Some(kind) {
            return Ok(0);
        }
        let mut n = 0;
        let flow = self.try_for_each_value(|v| {
            if let Some(v) = pick(v) {
                f(v);
                n += 1;
            }
            ControlFlow::<Infallible>::Continue(())
        })?;
        let ControlFlow::Continue(()) = flow;
        Ok(n)
    }

    /// Calls `f` with each bytes value (nothing unless the kind is bytes); returns how many.
    #[inline]
    pub fn for_each_bytes(&self, f: impl FnMut(&'a [u8])) -> Result<usize, DecodeError> {
        let pick = |v| match v {
            Value::Bytes(b) => Some(b),
            _ => None,
        };
        self.for_each_of(Kind::Bytes, pick, f)
    }

    /// Calls `f` with each int64 value, packed and unpacked alike, without collecting them
    /// (nothing unless the kind is int64); returns how many.
    #[inline]
    pub fn for_each_int64(&self, f: impl FnMut(i64)) -> Result<usize, DecodeError> {
        let pick = |v| match v {
            Value::Int64(i) => Some(i),
            _ => None,
        };
        self.for_each_of(Kind::Int64, pick, f)
    }

    /// Calls `f` with each float value, packed and unpacked alike, without collecting them
    /// (nothing unless the kind is float); returns how many.
    #[inline]
    pub fn for_each_float(&self, f: impl FnMut(f32)) -> Result<usize, DecodeError> {
        let pick = |v| match v {
            Value::Float(x) => Some(x),
            _ => None,
        };
        self.for_each_of(Kind::Float, pick, f)
    }

    /// Whether the feature has at least one value (looking no further than the first).
    pub fn has_values(&self) -> Result<bool, DecodeError> {
        Ok(self.try_for_each_value(|_| ControlFlow::Break(()))?.is_break())
    }

    /// Decodes into an owned [`Feature`].
    pub fn to_feature(&self) -> Result<Feature, DecodeError> {
        Ok(match self.kind {
            None => Feature::None,
            Some(Kind::Int64) => {
                let mut v = Vec::new();
                self.extend_int64s(&mut v)?;
                Feature::Int64(v)
            }
            Some(Kind::Float) => {
                let mut v = Vec::new();
                self.extend_floats(&mut v)?;
                Feature::Float(v)
            }
            Some(Kind::Bytes) => {
                let mut v = Vec::new();
                self.for_each_bytes(|b| v.push(b.to_vec()))?;
                Feature::Bytes(v)
            }
        })
    }
}

/// Walks the values of one serialized `*List` message of `kind` in wire order, with the
/// checks and the errors of decoding (`merge_*_list` in codec.rs), until `f` breaks.
fn walk_list<'a, B>(
    kind: Kind,
    bytes: &'a [u8],
    base: usize,
    f: &mut impl FnMut(Value<'a>) -> ControlFlow<B>,
) -> Result<ControlFlow<B>, DecodeError> {
    let mut r = WireReader::nested(bytes, base);
    while !r.is_empty() {
        let flow = match (kind, r.read_tag()?) {
            (Kind::Bytes, (1, WireType::Len)) => f(Value::Bytes(r.read_len()?.0)),
            (Kind::Float, (1, WireType::Fixed32)) => f(Value::Float(f32::from_bits(r.read_fixed32()?))),
            (Kind::Float, (1, WireType::Len)) => {
                let (packed, at) = r.read_len()?;
                if packed.len() % 4 != 0 {
                    return Err(DecodeError {
                        offset: at,
                        kind: DecodeErrorKind::PackedFloatLength(packed.len()),
                    });
                }
                packed
                    .chunks_exact(4)
                    .try_for_each(|c| f(Value::Float(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))))
            }
            (Kind::Int64, (1, WireType::Varint)) => f(Value::Int64(r.read_varint()? as i64)),
            (Kind::Int64, (1, WireType::Len)) => {
                let (packed, at) = r.read_len()?;
                let mut packed = WireReader::nested(packed, at);
                let mut flow = ControlFlow::Continue(());
                while flow.is_continue() && !packed.is_empty() {
                    flow = f(Value::Int64(packed.read_varint()? as i64));
                }
                flow
            }
            (_, (field, wt)) => {
                r.skip(field, wt)?;
                ControlFlow::Continue(())
            }
        };
        if flow.is_break() {
            return Ok(flow);
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// `Some(block)` when a list message is exactly one packed field `0a <len> <block>`.
#[inline]
fn single_packed_block(bytes: &[u8], base: usize) -> Option<Part<'_>> {
    if bytes.first() != Some(&0x0a) {
        return None;
    }
    let mut r = WireReader::nested(&bytes[1..], base + 1);
    let (block, at) = r.read_len().ok()?;
    r.is_empty().then_some((block, at))
}

fn count_varints(packed: &[u8], base: usize) -> Result<usize, DecodeError> {
    // Every varint ends in exactly one byte below 0x80; a block must end on one.
    if packed.last().is_some_and(|&b| b >= 0x80) {
        return Err(DecodeError {
            offset: base + packed.len(),
            kind: DecodeErrorKind::Truncated,
        });
    }
    // Every varint ends in one byte below 0x80. A varint of ten bytes or more (nine
    // continuation bytes before its end) may be one the decoder refuses, so those blocks are
    // decoded to fail as it fails; an average length cannot tell, one such varint may hide
    // among short ones.
    let (mut n, mut run, mut long) = (0usize, 0usize, false);
    for &b in packed {
        if b < 0x80 {
            n += 1;
            long |= run >= 9;
            run = 0;
        } else {
            run += 1;
        }
    }
    if long {
        let mut r = WireReader::nested(packed, base);
        while !r.is_empty() {
            r.read_varint()?;
        }
    }
    Ok(n)
}

/// Iterates the map entries of one or more serialized `Features` (or `FeatureLists`) fields:
/// yields `(key, value parts)` for each entry in wire order.
pub(super) struct MapEntries<'a> {
    /// The enclosing message: the fields holding maps are read from it in turn.
    outer: WireReader<'a>,
    /// Which field of `outer` holds the map (1 for `features`/`context`, 2 for `feature_lists`).
    map_field: u32,
    /// The map message being walked.
    inner: Option<WireReader<'a>>,
    /// Set after an error: a malformed message yields its error once, then ends.
    failed: bool,
}

/// A map entry: its key and its value message(s) (more than one only when `value` repeats).
pub(super) struct Entry<'a> {
    pub(super) key: &'a [u8],
    pub(super) value: Lists<'a>,
    /// Whether the entry is exactly `0a <key> 12 <value>`, as every standard writer makes it.
    pub(super) plain: bool,
}

impl<'a> MapEntries<'a> {
    pub(super) fn new(outer: WireReader<'a>, map_field: u32) -> Self {
        MapEntries {
            outer,
            map_field,
            inner: None,
            failed: false,
        }
    }

    pub(super) fn next_entry(&mut self) -> Result<Option<Entry<'a>>, DecodeError> {
        if self.failed {
            return Ok(None);
        }
        let result = self.advance();
        self.failed = result.is_err();
        result
    }

    fn advance(&mut self) -> Result<Option<Entry<'a>>, DecodeError> {
        loop {
            if let Some(inner) = self.inner.as_mut() {
                while !inner.is_empty() {
                    match inner.read_tag()? {
                        (1, WireType::Len) => {
                            let (entry, at) = inner.read_len()?;
                            return parse_entry(entry, at).map(Some);
                        }
                        (field, wt) => inner.skip(field, wt)?,
                    }
                }
                self.inner = None;
            }
            if self.outer.is_empty() {
                return Ok(None);
            }
            match self.outer.read_tag()? {
                (field, WireType::Len) if field == self.map_field => {
                    let (map, at) = self.outer.read_len()?;
                    self.inner = Some(WireReader::nested(map, at));
                }
                (field, wt) => self.outer.skip(field, wt)?,
            }
        }
    }
}

#[inline]
fn parse_entry(entry: &[u8], base: usize) -> Result<Entry<'_>, DecodeError> {
    // Fast path: `0a <key> 12 <value>` and nothing else, as every standard writer produces.
    if entry.first() == Some(&0x0a) {
        let mut r = WireReader::nested(&entry[1..], base + 1);
        if let Ok((key, _)) = r.read_len() {
            let value_tag_at = r.offset() - base;
            if entry.get(value_tag_at) == Some(&0x12) {
                let mut v = WireReader::nested(&entry[value_tag_at + 1..], base + value_tag_at + 1);
                if let Ok(value) = v.read_len() {
                    if v.is_empty() {
                        return Ok(Entry {
                            key,
                            value: Lists::One(value),
                            plain: true,
                        });
                    }
                }
            }
        }
    }
    let mut r = WireReader::nested(entry, base);
    let mut key: &[u8] = &[];
    let mut value = Lists::None;
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => key = r.read_len()?.0,
            (2, WireType::Len) => value.push(r.read_len()?),
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(Entry {
        key,
        value,
        plain: false,
    })
}

#[inline]
pub(super) fn feature_view_of<'a>(value: &Lists<'a>) -> Result<FeatureView<'a>, DecodeError> {
    if let Lists::One((bytes, base)) = value {
        return FeatureView::from_feature_bytes(bytes, *base);
    }
    let mut view = FeatureView {
        kind: None,
        lists: Lists::None,
    };
    for &(bytes, base) in value.as_slice() {
        view.merge(bytes, base)?;
    }
    Ok(view)
}

/// A zero-copy view of a serialized `tf.train.Example`: features are found and their values
/// read straight from the record's bytes, without decoding the whole message.
///
/// ```
/// use tfrec::example::{Example, ExampleView, Kind};
///
/// let record = Example::builder().int64("ids", [3i64, 1, 4]).bytes("name", "goat").build()?.encode();
/// let view = ExampleView::new(&record);
/// let ids = view.get("ids")?.expect("present");
/// assert_eq!(ids.kind(), Some(Kind::Int64));
/// let mut values = Vec::new();
/// ids.extend_int64s(&mut values)?;
/// assert_eq!(values, [3, 1, 4]);
/// assert!(view.get("missing")?.is_none());
/// # Ok::<(), tfrec::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ExampleView<'a> {
    pub(super) bytes: &'a [u8],
}

impl<'a> ExampleView<'a> {
    /// A view of `bytes`; nothing is checked until the view is walked.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Self {
        ExampleView { bytes }
    }

    /// Checks everything [`Example::decode`](super::Example::decode) checks, and fails with
    /// the same error, without allocating anything per value: once it passes, walking the view
    /// cannot fail.
    pub fn validate(&self) -> Result<(), DecodeError> {
        validate_message(self.bytes, false)
    }

    /// The map entries in wire order, duplicates included (the last one counts).
    pub fn entries(&self) -> FeatureEntries<'a> {
        FeatureEntries {
            inner: MapEntries::new(WireReader::new(self.bytes), 1),
        }
    }

    /// The feature called `key` (the last entry when the key repeats): a `&str`, or bytes for
    /// keys that are not UTF-8.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<FeatureView<'a>>, DecodeError> {
        let key = key.as_ref();
        let mut found = None;
        let mut entries = self.entries();
        while let Some((k, view)) = entries.next_raw()? {
            if k == key {
                found = Some(view);
            }
        }
        found.map(|v| feature_view_of(&v)).transpose()
    }

    /// The shard, of `shards`, that the values of feature `key` hash to
    /// ([`ShardHash`](crate::record::ShardHash): integers, then floats, then bytes, so equal
    /// values share a shard whatever the run), and whether the record has the feature (one
    /// without it hashes as no values). `tfrec shard --by-feature` puts records where this says.
    pub fn shard_of(&self, key: impl AsRef<[u8]>, shards: u64) -> Result<(u64, bool), DecodeError> {
        let mut hash = crate::record::ShardHash::new();
        let Some(feature) = self.get(key)? else {
            return Ok((hash.shard(shards), false));
        };
        let (mut ints, mut floats) = (Vec::new(), Vec::new());
        feature.extend_int64s(&mut ints)?;
        feature.extend_floats(&mut floats)?;
        ints.into_iter().for_each(|i| hash.add_int64(i));
        floats.into_iter().for_each(|f| hash.add_float(f));
        feature.for_each_bytes(|b| hash.add_bytes(b))?;
        Ok((hash.shard(shards), true))
    }
}

/// A map entry's key, its feature, and whether the feature is all the entry holds (see
/// [`FeatureEntries::next_feature`]).
pub type KeyedFeature<'a> = (&'a [u8], FeatureView<'a>, bool);

/// The entries of a `Features` map: `(key, feature)` pairs in wire order.
pub struct FeatureEntries<'a> {
    inner: MapEntries<'a>,
}

/// A map entry's value, not yet inspected: cheap to keep for the entries a caller wants.
#[derive(Debug, Clone)]
pub struct RawFeature<'a> {
    value: Lists<'a>,
}

impl<'a> RawFeature<'a> {
    /// Looks at the feature's kind (not its values).
    pub fn view(&self) -> Result<FeatureView<'a>, DecodeError> {
        feature_view_of(&self.value)
    }
}

impl<'a> FeatureEntries<'a> {
    /// The next entry: its key, and its value unexamined (so skipping costs nothing more).
    fn next_raw(&mut self) -> Result<Option<(&'a [u8], Lists<'a>)>, DecodeError> {
        Ok(self.inner.next_entry()?.map(|e| (e.key, e.value)))
    }

    /// The next entry with its value as a [`RawFeature`].
    pub fn next_entry(&mut self) -> Result<Option<(&'a [u8], RawFeature<'a>)>, DecodeError> {
        Ok(self.inner.next_entry()?.map(|e| (e.key, RawFeature { value: e.value })))
    }

    /// The next entry's key and feature, and whether the feature is all the entry holds: a key
    /// and one `value` field that is one list field (or none), as every standard writer makes
    /// them.
    /// When it is, walking the feature's values checks everything [`ExampleView::validate`]
    /// checks of the entry but the key's UTF-8; when it is not, some of the entry's bytes are
    /// not seen by the view (a list a later kind replaced, a repeated `value`).
    #[inline]
    pub fn next_feature(&mut self) -> Result<Option<KeyedFeature<'a>>, DecodeError> {
        let Some(entry) = self.inner.next_entry()? else {
            return Ok(None);
        };
        if let (Lists::One((bytes, base)), true) = (&entry.value, entry.plain) {
            if let Some(view) = FeatureView::one_list(bytes, *base) {
                return Ok(Some((entry.key, view, true)));
            }
        }
        Ok(Some((entry.key, feature_view_of(&entry.value)?, false)))
    }
}

impl<'a> Iterator for FeatureEntries<'a> {
    type Item = Result<(&'a [u8], FeatureView<'a>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.inner.next_entry() {
            Ok(Some(entry)) => Some(feature_view_of(&entry.value).map(|v| (entry.key, v))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// A zero-copy view of a serialized `tf.train.SequenceExample`.
#[derive(Debug, Clone, Copy)]
pub struct SequenceExampleView<'a> {
    pub(super) bytes: &'a [u8],
}

impl<'a> SequenceExampleView<'a> {
    /// A view of `bytes`; nothing is checked until the view is walked.
    pub fn new(bytes: &'a [u8]) -> Self {
        SequenceExampleView { bytes }
    }

    /// Checks everything [`SequenceExample::decode`](super::SequenceExample::decode) checks,
    /// and fails with the same error, without allocating anything per value.
    pub fn validate(&self) -> Result<(), DecodeError> {
        validate_message(self.bytes, true)
    }

    /// The context entries in wire order.
    pub fn context(&self) -> FeatureEntries<'a> {
        FeatureEntries {
            inner: MapEntries::new(WireReader::new(self.bytes), 1),
        }
    }

    /// The feature-list entries in wire order: `(key, list)`.
    pub fn feature_lists(&self) -> FeatureListEntries<'a> {
        FeatureListEntries {
            inner: MapEntries::new(WireReader::new(self.bytes), 2),
        }
    }
}

/// A feature-list map entry's key, its list, and whether the list is all the entry holds (see
/// [`FeatureListEntries::next_list`]).
pub type KeyedFeatureList<'a> = (&'a [u8], FeatureListView<'a>, bool);

/// The entries of a `FeatureLists` map.
pub struct FeatureListEntries<'a> {
    inner: MapEntries<'a>,
}

impl<'a> FeatureListEntries<'a> {
    /// The next entry's key and list, and whether the entry is exactly a key and one `value`
    /// field, as every standard writer makes it. When it is, walking the list's steps (with
    /// [`FeatureRows::next_step`]) sees every byte [`SequenceExampleView::validate`] checks of
    /// the entry but the key's UTF-8; when it is not, an earlier `key` field is not seen.
    #[inline]
    pub fn next_list(&mut self) -> Result<Option<KeyedFeatureList<'a>>, DecodeError> {
        let Some(entry) = self.inner.next_entry()? else {
            return Ok(None);
        };
        let plain = entry.plain && matches!(entry.value, Lists::One(_));
        Ok(Some((entry.key, FeatureListView { parts: entry.value }, plain)))
    }
}

impl<'a> Iterator for FeatureListEntries<'a> {
    type Item = Result<(&'a [u8], FeatureListView<'a>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.inner.next_entry() {
            Ok(Some(entry)) => Some(Ok((entry.key, FeatureListView { parts: entry.value }))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// A `FeatureList`: one `Feature` per step.
#[derive(Debug, Clone)]
pub struct FeatureListView<'a> {
    pub(super) parts: Lists<'a>,
}

impl<'a> FeatureListView<'a> {
    /// The steps in order, each a serialized `Feature` and its absolute offset.
    pub fn rows(&self) -> FeatureRows<'a> {
        FeatureRows {
            parts: self.parts.clone(),
            next_part: 0,
            current: None,
            failed: false,
        }
    }
}

/// The rows of a [`FeatureListView`], as raw `Feature` bytes with their offsets.
pub struct FeatureRows<'a> {
    parts: Lists<'a>,
    next_part: usize,
    current: Option<WireReader<'a>>,
    /// Set after an error: the rows end there.
    failed: bool,
}

impl<'a> Iterator for FeatureRows<'a> {
    type Item = Result<(&'a [u8], usize), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = self.advance().transpose();
        self.failed = matches!(next, Some(Err(_)));
        next
    }
}

impl<'a> FeatureRows<'a> {
    /// The next step as a [`FeatureView`], and whether the step's `Feature` is one list field
    /// (or none): when it is, walking the view's values checks everything
    /// [`SequenceExampleView::validate`] checks of the step; when it is not, a list that a
    /// later kind replaced is not seen.
    #[inline]
    pub fn next_step(&mut self) -> Result<Option<(FeatureView<'a>, bool)>, DecodeError> {
        let Some((bytes, base)) = self.next().transpose()? else {
            return Ok(None);
        };
        if let Some(view) = FeatureView::one_list(bytes, base) {
            return Ok(Some((view, true)));
        }
        Ok(Some((FeatureView::from_feature_bytes(bytes, base)?, false)))
    }

    fn advance(&mut self) -> Result<Option<(&'a [u8], usize)>, DecodeError> {
        loop {
            if let Some(r) = self.current.as_mut() {
                while !r.is_empty() {
                    match r.read_tag()? {
                        (1, WireType::Len) => return r.read_len().map(Some),
                        (field, wt) => r.skip(field, wt)?,
                    }
                }
            }
            let Some(&(bytes, base)) = self.parts.as_slice().get(self.next_part) else {
                return Ok(None);
            };
            self.next_part += 1;
            self.current = Some(WireReader::nested(bytes, base));
        }
    }
}

/// Whether the message has field `field` as a sub-message (present even when empty).
pub(super) fn has_field(bytes: &[u8], field: u32) -> Result<bool, DecodeError> {
    let mut r = WireReader::new(bytes);
    while !r.is_empty() {
        match r.read_tag()? {
            (f, WireType::Len) if f == field => return Ok(true),
            (f, wt) => r.skip(f, wt)?,
        }
    }
    Ok(false)
}

// ---- validation ----------------------------------------------------------------------------
//
// The same walk as decoding (codec.rs), in the same order and with the same checks, so the
// first error met is the one decoding reports; values are walked and dropped.

/// Walks a whole `Example` (`sequence`: a `SequenceExample`).
fn validate_message(bytes: &[u8], sequence: bool) -> Result<(), DecodeError> {
    let mut r = WireReader::new(bytes);
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (map, at) = r.read_len()?;
                validate_map(WireReader::nested(map, at), validate_feature)?;
            }
            (2, WireType::Len) if sequence => {
                let (map, at) = r.read_len()?;
                validate_map(WireReader::nested(map, at), validate_feature_list)?;
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

/// Walks a `map<string, V>`: every entry's keys must be UTF-8, its values pass `value`.
fn validate_map(
    mut r: WireReader<'_>,
    value: fn(WireReader<'_>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (entry, base) = r.read_len()?;
                let mut r = WireReader::nested(entry, base);
                while !r.is_empty() {
                    match r.read_tag()? {
                        (1, WireType::Len) => {
                            let (key, at) = r.read_len()?;
                            if std::str::from_utf8(key).is_err() {
                                return Err(DecodeError {
                                    offset: at,
                                    kind: DecodeErrorKind::InvalidUtf8,
                                });
                            }
                        }
                        (2, WireType::Len) => {
                            let (bytes, at) = r.read_len()?;
                            value(WireReader::nested(bytes, at))?;
                        }
                        (field, wt) => r.skip(field, wt)?,
                    }
                }
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

fn validate_feature_list(mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (bytes, at) = r.read_len()?;
                validate_feature(WireReader::nested(bytes, at))?;
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

fn validate_feature(mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        let kind = match r.read_tag()? {
            (1, WireType::Len) => Kind::Bytes,
            (2, WireType::Len) => Kind::Float,
            (3, WireType::Len) => Kind::Int64,
            (field, wt) => {
                r.skip(field, wt)?;
                continue;
            }
        };
        // Every list is checked, also one a later kind replaces: decoding reads it all.
        let (bytes, at) = r.read_len()?;
        let ControlFlow::Continue(()) = walk_list(kind, bytes, at, &mut |_| ControlFlow::<Infallible>::Continue(()))?;
    }
    Ok(())
}

/// Which message a serialized record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// Only an Example reading makes sense of it.
    Example,
    /// It has feature lists: a SequenceExample.
    SequenceExample,
    /// It reads the same as either (an Example's `features` is a SequenceExample's `context`,
    /// and empty bytes are both).
    Either,
    /// It is malformed as both.
    Neither,
}

/// Tells Example from SequenceExample where the bytes allow it.
pub fn detect_message(bytes: &[u8]) -> MessageKind {
    // Validated in place rather than decoded: a huge record costs no decoded copy.
    let example = ExampleView::new(bytes).validate();
    let seq = SequenceExampleView::new(bytes).validate();
    match (example, seq) {
        (_, Ok(())) if has_field(bytes, 2) == Ok(true) => MessageKind::SequenceExample,
        (Ok(_), Ok(_)) => MessageKind::Either,
        (Ok(_), Err(_)) => MessageKind::Example,
        (Err(_), Ok(_)) => MessageKind::SequenceExample,
        (Err(_), Err(_)) => MessageKind::Neither,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_message_yields_one_error_then_ends() {
        // A features field whose map entry claims more bytes than there are.
        let bytes = [0x0a, 0x04, 0x0a, 0x09, 0x0a, 0x01];
        let items: Vec<_> = ExampleView::new(&bytes).entries().take(5).collect();
        assert_eq!(items.len(), 1);
        assert!(items[0].is_err());
        let seq = SequenceExampleView::new(&[0x12, 0x03, 0x0a, 0x05, 0x00]);
        assert_eq!(seq.feature_lists().take(5).count(), 1);
    }

    #[test]
    fn counting_fails_where_decoding_fails() {
        // One overlong (11-byte) varint among thirty one-byte ones: the block's average length
        // is short, yet the list is malformed.
        let mut packed = vec![0x01; 30];
        packed.extend([0x80; 10]);
        packed.push(0x01);
        let mut list = vec![0x0a, packed.len() as u8];
        list.extend(&packed);
        let mut feature = vec![0x1a, list.len() as u8];
        feature.extend(&list);
        let view = FeatureView::from_feature_bytes(&feature, 0).expect("feature");
        let decoded = view.extend_int64s(&mut Vec::new());
        assert!(decoded.is_err());
        assert_eq!(view.count().map_err(|e| e.kind), decoded.map_err(|e| e.kind));
    }
}

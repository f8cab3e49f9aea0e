//! The hand-written hot path of parsing, for the encoding every standard writer produces:
//! map entries `0a <key> 12 <value>`, a Feature holding exactly one list, a packed numeric
//! list in one block. It decodes values straight into the output columns with no intermediate
//! views.
//!
//! It only ever answers for inputs whose meaning is unambiguous; anything else (another
//! encoding, a type or count problem, a malformed byte) makes it give up, and the caller
//! re-runs that example through the careful path, which has the exact protobuf semantics and
//! TensorFlow's errors. So results and errors are identical whichever path ran.
//! `cargo bench -p tfrec-cli --bench parse` measures what it buys.

use std::mem::MaybeUninit;

use super::values::{BytesArray, Values};

/// The order in which records list their keys, learned from them, each key with what it was
/// looked up to (its slot, or `None` for a key nobody asked for). Records of one writer list
/// their features in one order, so a record's next key is most often the one after its last
/// in this order, or a few further on when the record lacks some: checking those replaces
/// the hash lookup, a large share of a wide parse's instructions. A key learned from the record
/// before by position alone would miss on most keys of a record that lacks a few features,
/// since each missing feature puts every later key out of place.
pub(crate) struct KeyOrder<'r> {
    /// Each key, its slot, and its id: its slot, or for a key nobody asked for, a number
    /// after the slots' (see `unknown`). The slot could be derived from the id; it is kept
    /// beside it, since deriving it on each match costs instructions on the hot path.
    order: Vec<(&'r [u8], Option<usize>, usize)>,
    /// Per id, its key's place in `order` (`usize::MAX`: not there yet).
    place: Vec<usize>,
    /// The ids of the keys nobody asked for.
    unknown: rustc_hash::FxHashMap<&'r [u8], usize>,
    /// The place after the key the record matched last.
    next: usize,
    /// Keys that were not the next in the order, and those of them found by hash alone.
    further: u32,
    hashed: u32,
    /// Records in no order: every key goes to the hash, as looking ahead finds nothing.
    off: bool,
}

impl<'r> KeyOrder<'r> {
    /// Keys checked past the next one before the hash lookup: a record may lack this many in
    /// a row and still find its key without it.
    const LOOK_AHEAD: usize = 4;
    /// Keys not next in the order counted before the order may be turned off, and the share
    /// of them (in quarters) that must have needed the hash for that: for records that shuffle
    /// their keys, the order's misses cost more than a hash lookup for every key.
    const PROBE: u32 = 512;
    const OFF_QUARTERS: u32 = 3;
    /// Keys nobody asked for that get an id; later ones go to the hash each time.
    const MOST_UNKNOWN: usize = 4096;
    /// An order this long only grows at its end: putting a key in its place moves every key
    /// after it, and learning a very wide spec's keys so would take the square of their number.
    const MOST_MOVED: usize = 4096;

    pub(crate) fn new(slots: usize) -> Self {
        KeyOrder {
            // Room for the requested keys from the start: grown by doubling, a wide spec's
            // order held its old and new buffers at once, and up to twice the room it needs.
            order: Vec::with_capacity(slots),
            place: vec![usize::MAX; slots],
            unknown: rustc_hash::FxHashMap::default(),
            next: 0,
            further: 0,
            hashed: 0,
            off: false,
        }
    }

    /// An order that starts as `slots` (the requested keys, each once, as an earlier batch
    /// left them; see [`KeyOrder::remember_slots`]), `key` giving each slot's key.
    pub(crate) fn starting_with(slots: usize, order: &[usize], key: impl Fn(usize) -> &'r [u8]) -> Self {
        let mut start = KeyOrder::new(slots);
        for &slot in order {
            if start.place.get(slot) == Some(&usize::MAX) {
                start.place[slot] = start.order.len();
                start.order.push((key(slot), Some(slot), slot));
            }
        }
        start
    }

    /// The requested keys' slots in the order learned, for the next batch to start from
    /// (left as they are when the order was turned off: those records are in no order).
    pub(crate) fn remember_slots(&self, slots: &mut Vec<usize>) {
        if !self.off {
            slots.clear();
            slots.extend(self.order.iter().filter_map(|&(_, slot, _)| slot));
        }
    }

    /// Each record starts at the beginning of the order.
    #[inline(always)]
    pub(crate) fn start_record(&mut self) {
        self.next = 0;
    }

    /// What `lookup` gives for `key`, the record's next key.
    #[inline(always)]
    pub(crate) fn get(&mut self, key: &'r [u8], lookup: impl FnOnce(&[u8]) -> Option<usize>) -> Option<usize> {
        if self.off {
            return lookup(key);
        }
        if let Some(&(k, slot, _)) = self.order.get(self.next) {
            if same_key(k, key) {
                self.next += 1;
                return slot;
            }
        }
        self.look_further(key, lookup)
    }

    /// [`KeyOrder::get`] when the key is not the next one in the order: a few further on,
    /// or by its hash.
    #[inline(never)]
    fn look_further(&mut self, key: &'r [u8], lookup: impl FnOnce(&[u8]) -> Option<usize>) -> Option<usize> {
        let end = self.order.len().min(self.next + Self::LOOK_AHEAD + 1);
        for at in self.next + 1..end {
            let (k, slot, _) = self.order[at];
            if same_key(k, key) {
                self.next = at + 1;
                self.further = (self.further + 1).min(Self::PROBE);
                return slot;
            }
        }
        let slot = lookup(key);
        let new = self.learn(key, slot);
        if self.further < Self::PROBE {
            self.further += 1;
            // A key the order did not hold yet is learned, not missed: a record of more
            // keys than the probe would otherwise turn the order off while it learns them.
            self.hashed += u32::from(!new);
        }
        if self.further == Self::PROBE && self.hashed * 4 > Self::PROBE * Self::OFF_QUARTERS {
            self.off = true;
        }
        slot
    }

    /// `key`, found by its hash, goes where this record has it: after the record's last key,
    /// if new or if the order has it earlier. The writer's order is learned so from records
    /// that lack keys: a key learned in the wrong place (before a key the record lacked) moves
    /// when a record shows its place. Whether the key was new to the order.
    fn learn(&mut self, key: &'r [u8], slot: Option<usize>) -> bool {
        let id = match slot {
            Some(slot) => slot,
            None => match self.unknown.get(key) {
                Some(&id) => id,
                None if self.unknown.len() < Self::MOST_UNKNOWN => {
                    let id = self.place.len();
                    self.place.push(usize::MAX);
                    self.unknown.insert(key, id);
                    id
                }
                None => return false,
            },
        };
        let Some(&from) = self.place.get(id) else {
            return false;
        };
        let at_end = self.next >= self.order.len();
        let (to, first, last) = if from == usize::MAX {
            if self.order.len() >= Self::MOST_MOVED && !at_end {
                return true;
            }
            self.order.insert(self.next, (key, slot, id));
            (self.next, self.next, self.order.len() - 1)
        } else {
            // Further on than looked: the record lacks the keys between, and the order holds.
            if from >= self.next || self.order.len() >= Self::MOST_MOVED {
                self.next = from + 1;
                return false;
            }
            let entry = self.order.remove(from);
            let to = self.next - 1;
            self.order.insert(to, entry);
            (to, from, to)
        };
        for at in first..=last {
            if let Some(&(_, _, id)) = self.order.get(at) {
                if let Some(place) = self.place.get_mut(id) {
                    *place = at;
                }
            }
        }
        self.next = to + 1;
        from == usize::MAX
    }
}

/// `a == b` for keys: feature names are short, and comparing them in a few word loads beats
/// a call to `memcmp` for each feature of each record.
#[inline(always)]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two loads from each end, overlapping when the key is shorter than both together.
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
    match n {
        0 => true,
        // The first, middle and last bytes are all of them.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        9..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// Reads a varint at `*pos`; `None` if truncated or longer than 10 bytes.
#[inline(always)]
pub(crate) fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let b = *buf.get(*pos)?;
    if b < 0x80 {
        *pos += 1;
        return Some(u64::from(b));
    }
    // Two and three bytes (values below 2^21: ids, counts, offsets) without the loop's
    // bookkeeping; longer ones continue in it.
    let mut value = u64::from(b & 0x7f);
    let b = *buf.get(*pos + 1)?;
    value |= u64::from(b & 0x7f) << 7;
    if b < 0x80 {
        *pos += 2;
        return Some(value);
    }
    let b = *buf.get(*pos + 2)?;
    value |= u64::from(b & 0x7f) << 14;
    *pos += 3;
    if b < 0x80 {
        return Some(value);
    }
    for shift in (21..70).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(value);
        }
    }
    None
}

/// A length-delimited payload at `*pos`; `None` if it runs past the end.
#[inline(always)]
pub(crate) fn len_delimited<'a>(buf: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(varint(buf, pos)?).ok()?;
    let end = pos.checked_add(len)?;
    let payload = buf.get(*pos..end)?;
    *pos = end;
    Some(payload)
}

/// `Some(payload)` when `buf` is exactly `tag <len> payload`.
#[inline(always)]
pub(crate) fn single_field(buf: &[u8], tag: u8) -> Option<&[u8]> {
    if buf.first() != Some(&tag) {
        return None;
    }
    let mut pos = 1;
    let payload = len_delimited(buf, &mut pos)?;
    (pos == buf.len()).then_some(payload)
}

/// The packed block of a numeric Feature that is exactly `list_tag <len> List`, the List
/// empty (an empty block) or exactly `0a <len> block`; `None` for anything else.
#[inline(always)]
fn feature_block(feature: &[u8], list_tag: u8) -> Option<&[u8]> {
    // A Feature of fewer than 130 bytes (a scalar, a short list) has one-byte lengths, the
    // outer two more than the inner: four bytes checked at once (compared as wider numbers,
    // which cannot wrap as a byte's 254 + 2 does).
    if let Some(&[tag, list, 0x0a, block]) = feature.get(..4) {
        let (list, block) = (usize::from(list), usize::from(block));
        if tag == list_tag && list < 0x80 && list == block + 2 && feature.len() == list + 2 {
            return feature.get(4..);
        }
    }
    let list = single_field(feature, list_tag)?;
    if list.is_empty() {
        return Some(list);
    }
    single_field(list, 0x0a)
}

/// What the fast path made of one Feature.
pub(crate) enum Taken {
    /// The values were appended; this many.
    Values(usize),
    /// An empty Feature: no kind set.
    KindUnset,
    /// Anything else: leave it to the careful path.
    GiveUp,
}

/// Appends the values of a serialized Feature to `values` if it is one list of their type in
/// the canonical encoding.
///
/// Never inlined, so that every build gets the same code. The compiler chose differently per
/// crate: the CLI called it, the Python extension inlined it into the Example loop, and there
/// the loop took more instructions and more time.
#[inline(never)]
pub(crate) fn take_feature(feature: &[u8], values: &mut Values) -> Taken {
    match values {
        Values::Int64(out) => take_int64s(feature, out),
        Values::Float32(out) => take_floats(feature, out),
        Values::String(out) => take_bytes(feature, out),
    }
}

/// The packed block of a numeric Feature (see [`feature_block`]), or what the fast path makes
/// of a Feature without one: no kind set (an empty Feature), or anything else.
#[inline(always)]
fn numeric_block(feature: &[u8], list_tag: u8) -> Result<&[u8], Taken> {
    if feature.is_empty() {
        return Err(Taken::KindUnset);
    }
    feature_block(feature, list_tag).ok_or(Taken::GiveUp)
}

/// [`take_feature`] for an int64 column.
#[inline(always)]
pub(crate) fn take_int64s(feature: &[u8], out: &mut Vec<i64>) -> Taken {
    let block = match numeric_block(feature, 0x1a) {
        Ok(block) => block,
        Err(taken) => return taken,
    };
    // Sized from the block's varint terminators when it may not fit: growing by
    // doubling would leave up to twice a huge list's values allocated.
    if block.len() > out.capacity() - out.len() {
        out.reserve(block.iter().filter(|&&b| b < 0x80).count());
    }
    let before = out.len();
    let mut pos = 0;
    while pos < block.len() {
        match varint(block, &mut pos) {
            Some(v) => out.push(v as i64),
            None => {
                out.truncate(before);
                return Taken::GiveUp;
            }
        }
    }
    Taken::Values(out.len() - before)
}

/// [`take_feature`] for a float column.
#[inline(always)]
pub(crate) fn take_floats(feature: &[u8], out: &mut Vec<f32>) -> Taken {
    let block = match numeric_block(feature, 0x12) {
        Ok(block) => block,
        Err(taken) => return taken,
    };
    let (values, []) = block.as_chunks::<4>() else {
        return Taken::GiveUp;
    };
    // A scalar (most float features) is one push; a list goes by a plain loop into
    // reserved room: `extend` over the chunks cost about 70 instructions a call,
    // which a short list (a sequence step's) pays in full.
    if let [v] = values {
        out.push(f32::from_le_bytes(*v));
        return Taken::Values(1);
    }
    out.reserve(values.len());
    for v in values {
        out.push(f32::from_le_bytes(*v));
    }
    Taken::Values(values.len())
}

/// [`take_feature`] for a string column.
#[inline(always)]
pub(crate) fn take_bytes(feature: &[u8], out: &mut BytesArray) -> Taken {
    take_bytes_in(feature, 0, feature.len(), out)
}

/// [`take_bytes`] of the Feature `buf[start..end]`. The positions stay within `buf`, so that
/// a short value near the Feature's end can still be copied with the bytes after it (see
/// [`BytesArray::push_within`]): a sequence's rows are often a few short strings each, and
/// most of them lie within 16 bytes of their row's end.
#[inline(always)]
fn take_bytes_in(buf: &[u8], start: usize, end: usize, out: &mut BytesArray) -> Taken {
    if start == end {
        return Taken::KindUnset;
    }
    // Exactly `0a <len> BytesList`, filling the Feature.
    let mut pos = start;
    if tagged_end(buf, &mut pos, 0x0a) != Some(end) {
        return Taken::GiveUp;
    }
    let Some(list) = buf.get(pos..end) else {
        return Taken::GiveUp;
    };
    // A value takes at least two bytes of the list, and its bytes at most all of
    // them: when that may not fit, count first and grow once (by doubling, a huge
    // list of short strings would leave twice its offsets allocated).
    let (spare_values, spare_bytes) = out.spare();
    if list.len() / 2 > spare_values || list.len() > spare_bytes {
        let (mut values, mut bytes) = (0, 0);
        for value in list_rows(list) {
            let Some(value) = value else {
                return Taken::GiveUp;
            };
            values += 1;
            bytes += value.len();
        }
        out.reserve(values, bytes);
    }
    let before = out.len();
    match take_strings(buf, pos, end, out) {
        Some(n) => Taken::Values(n),
        None => {
            out.truncate(before);
            Taken::GiveUp
        }
    }
}

/// Appends the values of the rows of a serialized FeatureList to `values`, `stride` values a
/// row, when each row is one list of their type in the canonical encoding holding exactly
/// `stride` values; how many rows, or `None` otherwise (`values` may then hold some rows).
/// The caller reserves the room: a row that does not fit is refused, not grown into. For a
/// dense output written in order: no column, no copy, and no zeros written under values.
#[inline]
pub(crate) fn append_rows(list: &[u8], values: &mut Values, stride: usize) -> Option<usize> {
    let mut pos = 0;
    let mut rows = 0;
    match values {
        Values::Int64(out) => {
            while pos < list.len() {
                let block = row_block(list, &mut pos, 0x1a)?;
                append_in_spare(out, |spare| {
                    let mut read = 0;
                    for _ in 0..stride {
                        spare.push(varint(block, &mut read)? as i64)?;
                    }
                    (read == block.len()).then_some(())
                })?;
                rows += 1;
            }
        }
        Values::Float32(out) => {
            while pos < list.len() {
                let block = row_block(list, &mut pos, 0x12)?;
                let (floats, []) = block.as_chunks::<4>() else {
                    return None;
                };
                if floats.len() != stride {
                    return None;
                }
                append_in_spare(out, |spare| {
                    spare.push_all(floats.iter().map(|v| f32::from_le_bytes(*v)))
                })?;
                rows += 1;
            }
        }
        Values::String(_) => return None,
    }
    Some(rows)
}

/// Appends the values of every row of a serialized FeatureList to `values`, each row's count
/// to `counts`, when each row is one list of their type in the canonical encoding (as
/// [`take_feature`] takes a Feature) and, with `stride`, holds exactly that many values; how
/// many rows, or `None` for anything else (`values` and `counts` may then hold some rows).
/// One walk over the list, with no call and no iterator a row: a sequence's rows are often a
/// few values each, and that overhead was most of their cost.
#[inline]
pub(crate) fn take_rows(
    list: &[u8],
    values: &mut Values,
    stride: Option<usize>,
    counts: &mut Vec<usize>,
) -> Option<usize> {
    match values {
        Values::Int64(out) => walk_rows(list, 0x1a, stride, counts, |block, _| {
            // Each value ends in one byte below 0x80: that many fit, if the block does not.
            if block.len() > out.capacity() - out.len() {
                out.reserve(block.iter().filter(|&&b| b < 0x80).count());
            }
            append_in_spare(out, |spare| {
                let mut pos = 0;
                while pos < block.len() {
                    spare.push(varint(block, &mut pos)? as i64)?;
                }
                Some(())
            })
        }),
        Values::Float32(out) => walk_rows(list, 0x12, stride, counts, |block, ahead| {
            let (floats, []) = block.as_chunks::<4>() else {
                return None;
            };
            out.reserve(floats.len().max(SHORT_ROW));
            append_in_spare(out, |spare| spare.push_floats(floats, ahead))
        }),
        Values::String(out) => {
            let mut rows = 0;
            let mut pos = 0;
            while pos < list.len() {
                let row_end = tagged_end(list, &mut pos, 0x0a)?;
                let row = pos;
                pos = row_end;
                let n = match take_bytes_in(list, row, row_end, out) {
                    Taken::Values(n) => n,
                    Taken::KindUnset => 0,
                    Taken::GiveUp => return None,
                };
                if stride.is_some_and(|s| s != n) {
                    return None;
                }
                counts.push(n);
                rows += 1;
            }
            Some(rows)
        }
    }
}

/// The walk of [`take_rows`] for a numeric type: each row's block (see [`row_block`]) goes
/// to `block`, with the rest of the list from its start, and `block` decodes it and says how
/// many values.
#[inline(always)]
fn walk_rows(
    list: &[u8],
    list_tag: u8,
    stride: Option<usize>,
    counts: &mut Vec<usize>,
    mut block: impl FnMut(&[u8], &[u8]) -> Option<usize>,
) -> Option<usize> {
    let mut pos = 0;
    let mut rows = 0;
    while pos < list.len() {
        let payload = row_block(list, &mut pos, list_tag)?;
        // The block and the rest of the list from it, for a decoder that reads ahead.
        let ahead = list.get(pos - payload.len()..).unwrap_or(payload);
        let n = block(payload, ahead)?;
        if stride.is_some_and(|s| s != n) {
            return None;
        }
        counts.push(n);
        rows += 1;
    }
    Some(rows)
}

/// The packed block of the numeric row at `*pos` of a serialized FeatureList, which it moves
/// past the row: the row is `0a <len> Feature`, the Feature empty (no kind: an empty block) or
/// `list_tag <len> List`, the List empty (an empty block) or `0a <len> block`, each part
/// filling the one around it. `None` for anything else.
#[inline(always)]
fn row_block<'a>(list: &'a [u8], pos: &mut usize, list_tag: u8) -> Option<&'a [u8]> {
    // A row of fewer than 128 bytes, as most sequence steps are, has one-byte lengths, each
    // two more than the one inside it: six bytes checked at once, not three tags and three
    // varints read one after another.
    if let Some(&[0x0a, row, tag, feature, 0x0a, block]) = list.get(*pos..*pos + 6) {
        // Compared as wider numbers: in a byte, a length of 254 "plus two" would be 0.
        let (row, feature, block) = (usize::from(row), usize::from(feature), usize::from(block));
        if tag == list_tag && row < 0x80 && row == feature + 2 && feature == block + 2 {
            let start = *pos + 6;
            let end = start + block;
            let payload = list.get(start..end)?;
            *pos = end;
            return Some(payload);
        }
    }
    // A row of 128 bytes to 16 KB (32 floats or more) has two-byte lengths, each three more
    // than the one inside it: nine bytes checked at once, since reading them in steps showed
    // in the parse of sequences with long rows.
    if let Some(&[0x0a, r0, r1, tag, f0, f1, 0x0a, b0, b1]) = list.get(*pos..*pos + 9) {
        let two_bytes = |low: u8, high: u8| usize::from(low & 0x7f) | usize::from(high) << 7;
        let (row, feature, block) = (two_bytes(r0, r1), two_bytes(f0, f1), two_bytes(b0, b1));
        if tag == list_tag
            && r0 & f0 & b0 >= 0x80
            && (r1 | f1 | b1) < 0x80
            && row == feature + 3
            && feature == block + 3
        {
            let start = *pos + 9;
            let end = start + block;
            let payload = list.get(start..end)?;
            *pos = end;
            return Some(payload);
        }
    }
    // An empty step (`0a 02 <list tag> 00`: a list of no values), which a VarLen feature
    // list has often, in one check too.
    if let Some(&[0x0a, 0x02, tag, 0x00]) = list.get(*pos..*pos + 4) {
        if tag == list_tag {
            *pos += 4;
            return list.get(*pos..*pos);
        }
    }
    row_block_in_steps(list, pos, list_tag)
}

/// [`row_block`] read a part at a time: any length of a row, each tag and length in turn.
#[inline]
fn row_block_in_steps<'a>(list: &'a [u8], pos: &mut usize, list_tag: u8) -> Option<&'a [u8]> {
    let row_end = tagged_end(list, pos, 0x0a)?;
    if *pos < row_end {
        if tagged_end(list, pos, list_tag)? != row_end {
            return None;
        }
        if *pos < row_end && tagged_end(list, pos, 0x0a)? != row_end {
            return None;
        }
    }
    let payload = list.get(*pos..row_end)?;
    *pos = row_end;
    Some(payload)
}

/// The spare room at the end of a vector, filled from its start (see [`append_in_spare`]).
pub(crate) struct Spare<'a, T> {
    room: &'a mut [MaybeUninit<T>],
    filled: usize,
}

impl<T> Spare<'_, T> {
    /// Writes the next slot; `None` when the room is full.
    #[inline(always)]
    pub(crate) fn push(&mut self, value: T) -> Option<()> {
        self.room.get_mut(self.filled)?.write(value);
        self.filled += 1;
        Some(())
    }

    /// Writes the next `values.len()` slots; `None` (writing none) when they do not fit.
    #[inline(always)]
    pub(crate) fn push_all(&mut self, values: impl ExactSizeIterator<Item = T>) -> Option<()> {
        let n = values.len();
        let slots = self.room.get_mut(self.filled..self.filled.checked_add(n)?)?;
        for (slot, value) in slots.iter_mut().zip(values) {
            slot.write(value);
        }
        self.filled += n;
        Some(())
    }
}

impl<T> Spare<'_, T> {
    /// Writes `index(0)` to `index(n - 1)`, the sparse indices of a row of `n` values; `None`
    /// (writing none) when they do not fit. A row of up to [`SHORT_ROW`] values is written as
    /// that many whole slots, of which only the first `n` count (the next row writes over the
    /// rest): a row's length then costs no branch, where a loop of `n` steps missed the
    /// prediction of its end on most rows of varying length.
    #[inline(always)]
    pub(crate) fn push_positions(&mut self, n: usize, mut index: impl FnMut(i64) -> T) -> Option<()> {
        if n <= SHORT_ROW {
            if let Some(slots) = self.room.get_mut(self.filled..self.filled + SHORT_ROW) {
                for (p, slot) in slots.iter_mut().enumerate() {
                    slot.write(index(p as i64));
                }
                self.filled += n;
                return Some(());
            }
        }
        let slots = self.room.get_mut(self.filled..self.filled.checked_add(n)?)?;
        for (p, slot) in slots.iter_mut().enumerate() {
            slot.write(index(p as i64));
        }
        self.filled += n;
        Some(())
    }
}

impl Spare<'_, f32> {
    /// Writes the little-endian `floats`, which `ahead` starts with. Up to [`SHORT_ROW`] of
    /// them are written as that many whole slots from `ahead` when it has the bytes, of which
    /// only the first `floats.len()` count (as [`Spare::push_positions`] does, and for the same
    /// reason); `None` (writing none) when they do not fit.
    #[inline(always)]
    pub(crate) fn push_floats(&mut self, floats: &[[u8; 4]], ahead: &[u8]) -> Option<()> {
        let n = floats.len();
        if n <= SHORT_ROW {
            let slots = self.room.get_mut(self.filled..self.filled + SHORT_ROW);
            if let (Some(slots), Some((wide, _))) = (slots, ahead.split_first_chunk::<{ 4 * SHORT_ROW }>()) {
                for (slot, bytes) in slots.iter_mut().zip(wide.as_chunks::<4>().0) {
                    slot.write(f32::from_le_bytes(*bytes));
                }
                self.filled += n;
                return Some(());
            }
        }
        self.push_all(floats.iter().map(|v| f32::from_le_bytes(*v)))
    }
}

/// The longest row [`Spare::push_positions`] writes without a loop; a caller reserves this
/// many slots more than it needs, or longer rows' loop writes the last ones.
pub(crate) const SHORT_ROW: usize = 8;

/// Appends to `out` what `fill` writes into its spare capacity, and says how many; nothing
/// when `fill` fails (or runs out of room). The caller reserves the room. A sequence's rows
/// hold a few values each: a `push` each paid a capacity check and a reload of the vector,
/// and `extend` a call of about 70 instructions a row.
#[inline(always)]
pub(crate) fn append_in_spare<T>(
    out: &mut Vec<T>,
    fill: impl FnOnce(&mut Spare<'_, T>) -> Option<()>,
) -> Option<usize> {
    let mut spare = Spare {
        room: out.spare_capacity_mut(),
        filled: 0,
    };
    fill(&mut spare)?;
    let filled = spare.filled;
    let len = out.len() + filled;
    // SAFETY: `filled` only grows in `Spare`'s `push`, `push_all`, `push_positions` and
    // `push_floats`, each after writing at least the slots it counts, in order from the
    // first, so slots `0..filled` of the spare capacity (the vector's elements
    // `len - filled..len`) are initialized; `room` is the spare capacity, so `len` is within it.
    unsafe { out.set_len(len) };
    Some(filled)
}

/// Appends the values of a serialized FeatureList whose rows are each a BytesList of exactly
/// `stride` values in the canonical encoding (`0a <row> 0a <list> (0a <len> <bytes>)...`);
/// how many rows, or `None` for anything else (`out` may then hold some of the values).
/// Positions are kept within the whole list, so that a short value can be copied with the
/// bytes after it (see [`BytesArray::push_within`]).
#[inline]
pub(crate) fn take_string_rows(list: &[u8], stride: usize, out: &mut BytesArray) -> Option<usize> {
    let mut pos = 0;
    let mut rows = 0;
    while pos < list.len() {
        let row_end = tagged_end(list, &mut pos, 0x0a)?;
        // The BytesList fills the Feature, which holds nothing else.
        if tagged_end(list, &mut pos, 0x0a)? != row_end {
            return None;
        }
        if take_strings(list, pos, row_end, out)? != stride {
            return None;
        }
        pos = row_end;
        rows += 1;
    }
    Some(rows)
}

/// Appends the strings of the BytesList `buf[start..end]` (`0a <len> <bytes>` each) to `out`;
/// how many, or `None` if it is not that (`out` may then hold some of them). The strings are
/// taken from `buf`, so a short one can be copied with the bytes after it (see
/// [`BytesArray::push_within`]).
#[inline(always)]
fn take_strings(buf: &[u8], start: usize, end: usize, out: &mut BytesArray) -> Option<usize> {
    let mut pos = start;
    let mut values = 0;
    while pos < end {
        let value_end = tagged_end(buf, &mut pos, 0x0a)?;
        if value_end > end {
            return None;
        }
        out.push_within(buf, pos, value_end - pos)?;
        pos = value_end;
        values += 1;
    }
    Some(values)
}

/// Reads `tag <len>` at `*pos` and returns where the payload after it ends; `None` if the tag
/// is another or the payload runs past `buf`.
#[inline(always)]
fn tagged_end(buf: &[u8], pos: &mut usize, tag: u8) -> Option<usize> {
    if buf.get(*pos) != Some(&tag) {
        return None;
    }
    *pos += 1;
    delimited_end(buf, pos)
}

/// Reads a length at `*pos` and returns where the payload after it ends; `None` if it runs
/// past `buf`.
#[inline(always)]
fn delimited_end(buf: &[u8], pos: &mut usize) -> Option<usize> {
    let len = usize::try_from(varint(buf, pos)?).ok()?;
    let end = pos.checked_add(len)?;
    (end <= buf.len()).then_some(end)
}

/// The rows of a serialized FeatureList in the canonical encoding (`0a <len> <row>` each, as
/// [`list_rows`] walks them); `None` otherwise.
#[inline]
pub(crate) fn count_rows(list: &[u8]) -> Option<usize> {
    let mut pos = 0;
    let mut rows = 0;
    while pos < list.len() {
        pos = tagged_end(list, &mut pos, 0x0a)?;
        rows += 1;
    }
    Some(rows)
}

/// The rows (`0a <len> <row>` each) of a serialized FeatureList in the canonical encoding, in
/// order (or the values of a BytesList: the same form); an item is `None` where the encoding
/// is anything else, and the walk ends there.
#[inline]
pub(crate) fn list_rows(list: &[u8]) -> impl Iterator<Item = Option<&[u8]>> + '_ {
    let mut pos = 0;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || pos >= list.len() {
            return None;
        }
        let row = if list[pos] == 0x0a {
            pos += 1;
            len_delimited(list, &mut pos)
        } else {
            None
        };
        failed = row.is_none();
        Some(row)
    })
}

/// Walks the map entries of a serialized Example (or a SequenceExample's map field
/// `map_tag`), calling `each(key, value)` for each entry in the canonical form. `false` when
/// anything is not canonical (the caller then takes the careful path); fields other than the
/// map are skipped as protobuf does, if they are simple to skip.
#[inline]
pub(crate) fn walk_entries<'a>(message: &'a [u8], map_tag: u8, mut each: impl FnMut(&'a [u8], &'a [u8])) -> bool {
    let mut pos = 0;
    while pos < message.len() {
        let tag = message[pos];
        pos += 1;
        if tag == map_tag {
            let Some(map) = len_delimited(message, &mut pos) else {
                return false;
            };
            let mut at = 0;
            while at < map.len() {
                if map[at] != 0x0a {
                    return false;
                }
                at += 1;
                let Some(entry) = len_delimited(map, &mut at) else {
                    return false;
                };
                // `0a <key> 12 <value>` exactly.
                if entry.first() != Some(&0x0a) {
                    return false;
                }
                let mut e = 1;
                let Some(key) = len_delimited(entry, &mut e) else {
                    return false;
                };
                if entry.get(e) != Some(&0x12) {
                    return false;
                }
                e += 1;
                let Some(value) = len_delimited(entry, &mut e) else {
                    return false;
                };
                if e != entry.len() {
                    return false;
                }
                each(key, value);
            }
        } else {
            // Another field: skip it if it is a one-byte-tag varint or length-delimited field.
            if !(0x08..0x80).contains(&tag) {
                return false;
            }
            let skipped = match tag & 7 {
                0 => varint(message, &mut pos).is_some(),
                2 => len_delimited(message, &mut pos).is_some(),
                _ => false,
            };
            if !skipped {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next of a seeded xorshift sequence (the tests' inputs are generated, not stored).
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Records of keys in the writer's order with some left out, shuffled, or repeated, with
    /// keys nobody asked for among them: the order always gives what the hash lookup gives,
    /// finds most keys of ordered records without it, and turns itself off for shuffled ones.
    #[test]
    fn key_order_gives_the_lookups_answer() {
        let keys: Vec<Vec<u8>> = (0..40).map(|k| format!("feature_{k}").into_bytes()).collect();
        // Every third key is not asked for.
        let slot_of = |key: &[u8]| keys.iter().position(|k| k == key).filter(|p| p % 3 != 0);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for shape in ["ordered", "shuffled", "repeated"] {
            let mut records: Vec<Vec<&[u8]>> = Vec::new();
            for _ in 0..400 {
                let mut record: Vec<&[u8]> = keys
                    .iter()
                    .filter(|_| xorshift(&mut state) % 10 < 7)
                    .map(Vec::as_slice)
                    .collect();
                match shape {
                    "shuffled" => {
                        for i in (1..record.len()).rev() {
                            record.swap(i, (xorshift(&mut state) % (i as u64 + 1)) as usize);
                        }
                    }
                    "repeated" if !record.is_empty() => {
                        let again = record[(xorshift(&mut state) % record.len() as u64) as usize];
                        record.push(again);
                    }
                    _ => {}
                }
                records.push(record);
            }
            let mut order = KeyOrder::new(keys.len());
            let mut hashed = 0;
            let mut looked = 0;
            for record in &records {
                order.start_record();
                for &key in record {
                    looked += 1;
                    let got = order.get(key, |k| {
                        hashed += 1;
                        slot_of(k)
                    });
                    assert_eq!(got, slot_of(key), "{shape}: {:?}", String::from_utf8_lossy(key));
                }
            }
            match shape {
                "ordered" => assert!(hashed * 50 < looked, "{shape}: {hashed} of {looked} hashed"),
                "shuffled" => assert!(order.off, "{shape}: the order stayed on"),
                _ => {}
            }
            // The next batch starts from the requested keys' order: an ordered record with
            // every requested key then needs no hash lookup for them.
            let mut slots = Vec::new();
            order.remember_slots(&mut slots);
            if shape == "ordered" {
                let mut next = KeyOrder::starting_with(keys.len(), &slots, |s| keys[s].as_slice());
                next.start_record();
                for key in keys.iter().filter(|k| slot_of(k).is_some()) {
                    assert_eq!(next.get(key, |_| panic!("{key:?} looked up by hash")), slot_of(key));
                }
            } else if shape == "shuffled" {
                assert!(slots.is_empty(), "an order turned off is not passed on");
            }
        }
    }

    /// Records of more keys than the probe counts, all asked for, in order: learning them does
    /// not turn the order off, and the next batch finds every key without the hash.
    #[test]
    fn key_order_learns_a_record_of_many_keys() {
        let keys: Vec<Vec<u8>> = (0..2000).map(|k| format!("f{k}").into_bytes()).collect();
        let slot_of = |key: &[u8]| keys.iter().position(|k| k == key);
        let mut slots = Vec::new();
        for batch in 0..2 {
            let mut order = KeyOrder::starting_with(keys.len(), &slots, |s| keys[s].as_slice());
            let mut hashed = 0;
            for _ in 0..3 {
                order.start_record();
                for key in &keys {
                    let got = order.get(key, |k| {
                        hashed += 1;
                        slot_of(k)
                    });
                    assert_eq!(got, slot_of(key));
                }
            }
            assert!(!order.off, "batch {batch}: learning turned the order off");
            assert_eq!(hashed, if batch == 0 { keys.len() } else { 0 }, "batch {batch}");
            order.remember_slots(&mut slots);
        }
    }

    fn put(out: &mut Vec<u8>, v: u64) {
        out.extend(encode(v));
    }

    fn encode(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    }

    #[test]
    fn a_row_read_at_once_is_the_row_read_in_steps() {
        // Lists made of the bytes that matter (tags, lengths about each other, a length's
        // continuation bit) and others, read at every position: the reading at once (six
        // bytes, or four for an empty step) must give the same block and stop at the same
        // place as the step-by-step one, or fail where it fails.
        let alphabet = [
            0x0a, 0x12, 0x1a, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x7f, 0x80, 0x81, 0x22, 0xfe, 0xff,
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || xorshift(&mut state);
        let mut lists: Vec<Vec<u8>> = Vec::new();
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            lists.push(
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect(),
            );
        }
        // Well-formed rows of 0 to 20,000 bytes (one-, two- and three-byte lengths), whole and
        // cut.
        for n in [
            0usize, 1, 2, 3, 30, 121, 122, 123, 124, 125, 126, 127, 128, 200, 256, 16_370, 16_377, 16_378, 16_380,
            16_383, 16_384, 20_000,
        ] {
            let block: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let mut list = vec![0x0a];
            list.extend(encode(n as u64));
            list.extend(&block);
            let mut feature = vec![0x1a];
            feature.extend(encode(list.len() as u64));
            feature.extend(&list);
            let mut row = vec![0x0a];
            row.extend(encode(feature.len() as u64));
            row.extend(&feature);
            for cut in (0..=row.len()).filter(|&cut| cut < 300 || row.len() - cut < 40) {
                lists.push(row[..cut].to_vec());
            }
            row.extend([0x0a, 0x00]);
            lists.push(row);
        }
        // The six bytes of the header with lengths about each other, about the continuation
        // bit and about wrapping around a byte, followed by enough bytes or not.
        let lengths = [
            0x00u8, 0x01, 0x02, 0x03, 0x04, 0x06, 0x7b, 0x7d, 0x7e, 0x7f, 0x80, 0x81, 0xfc, 0xfe, 0xff,
        ];
        for row in lengths {
            for feature in lengths {
                for block in lengths {
                    for tail in [0usize, 8, 300] {
                        let mut list = vec![0x0a, row, 0x1a, feature, 0x0a, block];
                        list.resize(6 + tail, 0x55);
                        lists.push(list);
                    }
                }
            }
        }
        // Nine-byte headers `0a <row> 1a <feature> 0a <block>` whose lengths are each two
        // bytes of the given first and second bytes.
        let headers = |lows: &[u8], highs: &[u8]| {
            let lengths: Vec<[u8; 2]> = lows
                .iter()
                .flat_map(|&low| highs.iter().map(move |&high| [low, high]))
                .collect();
            let mut headers = Vec::new();
            for [r0, r1] in &lengths {
                for [f0, f1] in &lengths {
                    for [b0, b1] in &lengths {
                        headers.push([0x0a, *r0, *r1, 0x1a, *f0, *f1, 0x0a, *b0, *b1]);
                    }
                }
            }
            headers
        };
        // Two-byte lengths, each about the others, about the continuation bits and about a
        // byte's wrapping, followed by enough bytes or not.
        for header in headers(&[0x7f, 0x80, 0x83, 0x86, 0xfd, 0xfe, 0xff], &[0x00, 0x01, 0x7f, 0x80]) {
            for tail in [0usize, 400] {
                let mut list = header.to_vec();
                list.resize(9 + tail, 0x55);
                lists.push(list);
            }
        }
        // The same with one-byte and three-byte lengths among them, before enough bytes for
        // any two-byte length: a header read as two-byte lengths where it is not must not be
        // taken for one, nor a one-byte length's tag for a length's second byte. Read from the
        // start only (these are long).
        let mut long = vec![0x55u8; 9 + 16_500];
        for header in headers(&[0x06, 0x0a, 0x1a, 0x80, 0x83, 0x86], &[0x00, 0x0a, 0x1a, 0x80]) {
            long[..9].copy_from_slice(&header);
            for tag in [0x12, 0x1a] {
                let (mut a, mut b) = (0, 0);
                let at_once = row_block(&long, &mut a, tag);
                assert_eq!(at_once, row_block_in_steps(&long, &mut b, tag), "{header:02x?}");
                if at_once.is_some() {
                    assert_eq!(a, b, "{header:02x?}");
                }
            }
        }
        // Empty steps (`0a 02 <tag> 00`) of either list tag and another, alone, before more
        // rows and before stray bytes; and the same four bytes with the lengths off by one.
        for head in [
            [0x0a, 0x02, 0x1a, 0x00],
            [0x0a, 0x02, 0x12, 0x00],
            [0x0a, 0x02, 0x22, 0x00],
        ] {
            for tail in [
                &[][..],
                &[0x0a, 0x02, 0x1a, 0x00],
                &[0x0a, 0x05, 0x12, 0x03, 0x0a, 0x01, 0x07],
                &[0xff],
            ] {
                lists.push([&head[..], tail].concat());
            }
        }
        lists.push(vec![0x0a, 0x03, 0x1a, 0x00, 0x00]);
        lists.push(vec![0x0a, 0x02, 0x1a, 0x01, 0x00]);
        let (mut fast_reads, mut two_byte_reads) = (0, 0);
        for list in &lists {
            for tag in [0x12, 0x1a] {
                for start in 0..list.len() {
                    let (mut a, mut b) = (start, start);
                    let at_once = row_block(list, &mut a, tag);
                    let in_steps = row_block_in_steps(list, &mut b, tag);
                    assert_eq!(at_once, in_steps, "{list:02x?} from {start}");
                    if at_once.is_some() {
                        assert_eq!(a, b, "{list:02x?} from {start}");
                        fast_reads += usize::from(list.len() >= start + 6 && list[start + 1] < 0x80);
                        two_byte_reads +=
                            usize::from(list.len() >= start + 9 && list[start + 1] >= 0x80 && list[start + 2] < 0x80);
                    }
                }
            }
        }
        assert!(fast_reads > 100, "only {fast_reads} rows were read at once");
        assert!(
            two_byte_reads > 100,
            "only {two_byte_reads} rows of two-byte lengths were read"
        );
    }

    #[test]
    fn rows_written_in_whole_runs_count_only_their_values() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |below: u64| (xorshift(&mut state) % below) as usize;
        for case in 0..300 {
            // Rows of 0 to 12 values, about SHORT_ROW; room for exactly them, or with the
            // spare slots the runs need.
            let lengths: Vec<usize> = (0..next(20)).map(|_| next(13)).collect();
            let total: usize = lengths.iter().sum();
            let extra = if case % 2 == 0 { 0 } else { SHORT_ROW };
            let mut expected: Vec<[i64; 3]> = Vec::new();
            for (r, &n) in lengths.iter().enumerate() {
                expected.extend((0..n).map(|p| [7, r as i64, p as i64]));
            }
            let mut indices: Vec<[i64; 3]> = Vec::with_capacity(total + extra);
            let written = append_in_spare(&mut indices, |spare| {
                for (r, &n) in lengths.iter().enumerate() {
                    spare.push_positions(n, |p| [7, r as i64, p])?;
                }
                Some(())
            });
            // Without the spare slots a run may not fit where the row does: it is written
            // value by value then.
            assert_eq!(written, Some(total));
            assert_eq!(indices, expected, "{lengths:?}");

            // Floats, from a list that has the bytes after each row or ends with it.
            let mut floats: Vec<f32> = Vec::with_capacity(total + extra);
            let mut expected_floats: Vec<f32> = Vec::new();
            for &n in &lengths {
                let values: Vec<f32> = (0..n).map(|_| next(1000) as f32 / 8.0).collect();
                expected_floats.extend(&values);
                let mut list: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                let block_len = list.len();
                list.extend((0..next(40)).map(|_| 0xee));
                let (block, []) = list[..block_len].as_chunks::<4>() else {
                    unreachable!("whole floats")
                };
                if floats.capacity() - floats.len() < n {
                    floats.reserve(n);
                }
                assert_eq!(
                    append_in_spare(&mut floats, |spare| spare.push_floats(block, &list)),
                    Some(n)
                );
            }
            assert_eq!(floats, expected_floats, "{lengths:?}");
        }
    }

    #[test]
    fn a_feature_read_at_once_is_the_feature_read_in_steps() {
        let in_steps = |feature: &[u8], tag: u8| -> Option<Vec<u8>> {
            let list = single_field(feature, tag)?;
            if list.is_empty() {
                return Some(Vec::new());
            }
            single_field(list, 0x0a).map(<[u8]>::to_vec)
        };
        let lengths = [
            0x00u8, 0x01, 0x02, 0x03, 0x04, 0x7d, 0x7e, 0x7f, 0x80, 0x81, 0xfc, 0xfe, 0xff,
        ];
        let mut features: Vec<Vec<u8>> = Vec::new();
        for tag in [0x12, 0x1a, 0x0a] {
            for list in lengths {
                for block in lengths {
                    for tail in [0usize, 1, 2, 3, 123, 124, 125, 126, 127, 252, 254, 256, 300] {
                        let mut f = vec![tag, list, 0x0a, block];
                        f.resize(4 + tail, 0x01);
                        for cut in [f.len(), f.len().saturating_sub(1), 3, 2, 1] {
                            features.push(f[..cut.min(f.len())].to_vec());
                        }
                    }
                }
            }
        }
        // Well-formed Features of every block length that one-byte lengths can hold, and
        // longer, with a byte more or less.
        for block in 0..140usize {
            let mut f = vec![0x1a];
            put(&mut f, block as u64 + 1 + encode(block as u64).len() as u64);
            f.push(0x0a);
            put(&mut f, block as u64);
            f.resize(f.len() + block, 0x05);
            features.push(f[..f.len() - 1].to_vec());
            features.push([f.as_slice(), &[0x05]].concat());
            features.push(f);
        }
        let mut at_once_reads = 0;
        for f in &features {
            for tag in [0x12, 0x1a] {
                let got = feature_block(f, tag).map(<[u8]>::to_vec);
                assert_eq!(got, in_steps(f, tag), "{f:02x?}");
                at_once_reads += usize::from(got.is_some() && f.len() >= 4 && f[1] < 0x80 && f[2] == 0x0a);
            }
        }
        assert!(at_once_reads > 100, "only {at_once_reads}");
    }

    /// String rows read in one walk over the FeatureList (values copied from within the whole
    /// list) are what each row's Feature gives alone: the same values and counts, and a refusal
    /// where any row is refused; rows of short strings, empty Features, and rows whose lengths
    /// or tags are wrong, at every place in the list.
    #[test]
    fn string_rows_read_in_one_walk_are_each_feature_read_alone() {
        let one_by_one = |list: &[u8], stride: Option<usize>| -> Option<(Vec<Vec<u8>>, Vec<usize>)> {
            let mut out = BytesArray::new();
            let mut counts = Vec::new();
            for row in list_rows(list) {
                let n = match take_bytes(row?, &mut out) {
                    Taken::Values(n) => n,
                    Taken::KindUnset => 0,
                    Taken::GiveUp => return None,
                };
                if stride.is_some_and(|s| s != n) {
                    return None;
                }
                counts.push(n);
            }
            Some((out.to_vecs(), counts))
        };
        let row_of = |strings: &[Vec<u8>]| -> Vec<u8> {
            let mut bytes_list = Vec::new();
            for v in strings {
                bytes_list.push(0x0a);
                put(&mut bytes_list, v.len() as u64);
                bytes_list.extend_from_slice(v);
            }
            let mut feature = Vec::new();
            if !strings.is_empty() {
                feature.push(0x0a);
                put(&mut feature, bytes_list.len() as u64);
                feature.extend_from_slice(&bytes_list);
            }
            feature
        };
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |below: u64| (xorshift(&mut state) % below) as usize;
        let mut refused = 0;
        for case in 0..3000 {
            let mut rows: Vec<Vec<u8>> = (0..next(6))
                .map(|_| {
                    let strings: Vec<Vec<u8>> = (0..next(4))
                        .map(|_| (0..next(20)).map(|_| next(256) as u8).collect())
                        .collect();
                    row_of(&strings)
                })
                .collect();
            // Damage one row in a third of the cases: a length one more or one less (so that
            // it runs into the next row, or stops short of its end), another tag, a byte more.
            if case % 3 == 0 && !rows.is_empty() {
                let r = next(rows.len() as u64);
                let row = &mut rows[r];
                match (next(4), row.len()) {
                    (0, n) if n >= 2 => row[1] = row[1].wrapping_add(1),
                    (1, n) if n >= 2 => row[1] = row[1].wrapping_sub(1),
                    (2, n) if n >= 1 => row[0] = 0x12,
                    _ => row.push(0x0a),
                }
            }
            let mut list = Vec::new();
            for row in &rows {
                list.push(0x0a);
                put(&mut list, row.len() as u64);
                list.extend_from_slice(row);
            }
            for stride in [None, Some(1), Some(2)] {
                let expected = one_by_one(&list, stride);
                let mut values = Values::String(BytesArray::new());
                let mut counts = Vec::new();
                let got = take_rows(&list, &mut values, stride, &mut counts).map(|n| {
                    assert_eq!(n, counts.len());
                    (values.as_bytes().map(BytesArray::to_vecs).unwrap_or_default(), counts)
                });
                refused += usize::from(expected.is_none());
                assert_eq!(got, expected, "case {case}, stride {stride:?}: {list:02x?}");
            }
        }
        assert!(refused > 1000, "only {refused} refusals");
    }

    #[test]
    fn keys_compare_as_slices_do() {
        let keys: Vec<Vec<u8>> = (0usize..24)
            .flat_map(|n| {
                let base: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
                // The key itself, and one byte changed at each end and in the middle.
                let mut variants = vec![base.clone()];
                for at in [0, n / 2, n.saturating_sub(1)] {
                    if n > 0 {
                        let mut v = base.clone();
                        v[at] ^= 1;
                        variants.push(v);
                    }
                }
                variants
            })
            .collect();
        for a in &keys {
            for b in &keys {
                assert_eq!(same_key(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn varints_read_at_the_end_of_a_buffer_and_before_more_bytes() {
        // Every length from one byte to ten: the largest value of k bytes and the smallest of
        // k + 1.
        let edges = (1..10u32).flat_map(|k| [(1u64 << (7 * k)) - 1, 1u64 << (7 * k)]);
        for v in [0, 1, 300, 1 << 40, (1 << 62) + 5, u64::MAX].into_iter().chain(edges) {
            let bytes = encode(v);
            // At the very end of the buffer, and with bytes after it.
            for tail in [0usize, 12] {
                let mut buf = bytes.clone();
                buf.resize(bytes.len() + tail, 0x55);
                let mut pos = 0;
                assert_eq!(varint(&buf, &mut pos), Some(v), "{v} with {tail} bytes after");
                assert_eq!(pos, bytes.len());
            }
        }
        // Cut short after one, two and three bytes; eleven bytes long, at the end and with
        // more after.
        assert_eq!(varint(&[0x80], &mut 0), None);
        assert_eq!(varint(&[0x80, 0x80], &mut 0), None);
        assert_eq!(varint(&[0x80, 0x80, 0x80], &mut 0), None);
        assert_eq!(varint(&[0xff; 11], &mut 0), None);
        assert_eq!(varint(&[0xff; 23], &mut 0), None);
    }

    /// A plain byte loop, for the unrolled decoding to agree with.
    fn reference(buf: &[u8], pos: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = *buf.get(*pos + i)?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                *pos += i + 1;
                return Some(value);
            }
        }
        None
    }

    #[test]
    fn varints_agree_with_the_byte_loop_at_every_length_and_cut() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || xorshift(&mut state);
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for _ in 0..4000 {
            let bits = next() % 65;
            let v = if bits == 64 {
                next()
            } else {
                next() & ((1u64 << bits) - 1)
            };
            cases.push(encode(v));
        }
        // Tenth bytes with more than bit 0 set, overlong encodings and runs of continuation
        // bytes of every length.
        for last in [0x01u8, 0x02, 0x7f, 0x80] {
            let mut b = vec![0xffu8; 9];
            b.push(last);
            cases.push(b);
        }
        for n in 1..=12 {
            let mut b = vec![0x80u8; n];
            b.push(0);
            cases.push(b);
            cases.push(vec![0xff; n]);
        }
        for bytes in &cases {
            // Cut at every length, with filler bytes after it or not.
            for cut in 0..=bytes.len() {
                for tail in [0usize, 3, 9] {
                    let mut buf = bytes[..cut].to_vec();
                    buf.extend(std::iter::repeat_n(0x81u8, tail));
                    let (mut a, mut b) = (0, 0);
                    let value = varint(&buf, &mut a);
                    assert_eq!(value, reference(&buf, &mut b), "{buf:02x?}");
                    // Where a failed read leaves the position is not part of its contract.
                    if value.is_some() {
                        assert_eq!(a, b, "{buf:02x?}");
                    }
                }
            }
        }
    }
}

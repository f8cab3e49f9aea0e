//! Telling a serialized Example from a SequenceExample without building either: the answer of
//! [`detect_message`](crate::example::detect_message), from one walk that checks every field
//! the two decoders would read and keeps nothing, so a huge record costs no heap.
//!
//! `tfrec parse` looks at its first records this way to warn about a spec for the other kind.

use crate::example::wire::{DecodeError, DecodeErrorKind, WireReader, WireType};
use crate::example::MessageKind;

/// Which message `bytes` is, exactly as [`detect_message`](crate::example::detect_message)
/// says (which decodes the bytes as both messages, holding both at once).
pub fn message_kind(bytes: &[u8]) -> MessageKind {
    match walk_message(bytes) {
        // A SequenceExample reads everything an Example reads, and its `feature_lists` too;
        // so when the Example reading fails, the SequenceExample reading fails with it.
        Err(_) => MessageKind::Neither,
        Ok(Walked { lists: Some(true), .. }) => MessageKind::SequenceExample,
        Ok(Walked { lists: Some(false), .. }) => MessageKind::Example,
        Ok(Walked { lists: None, .. }) => MessageKind::Either,
    }
}

/// What a walk found in a message that reads as an Example.
struct Walked {
    /// `None`: no `feature_lists` field; else whether every one reads as `FeatureLists`.
    lists: Option<bool>,
}

/// Checks the top level and every `features`/`context` field (an error: not an Example);
/// `feature_lists` fields are checked on the side, as only the SequenceExample reading sees them.
fn walk_message(bytes: &[u8]) -> Result<Walked, DecodeError> {
    let mut r = WireReader::new(bytes);
    let mut lists = None;
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (map, at) = r.read_len()?;
                walk_map(WireReader::nested(map, at), walk_feature)?;
            }
            (2, WireType::Len) => {
                let (map, at) = r.read_len()?;
                let ok = walk_map(WireReader::nested(map, at), walk_feature_list).is_ok();
                lists = Some(lists.unwrap_or(true) && ok);
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(Walked { lists })
}

/// A `map<string, V>`: entries (field 1), each a UTF-8 key (field 1) and values (field 2).
fn walk_map(mut r: WireReader<'_>, value: fn(WireReader<'_>) -> Result<(), DecodeError>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (entry, base) = r.read_len()?;
                let mut e = WireReader::nested(entry, base);
                while !e.is_empty() {
                    match e.read_tag()? {
                        (1, WireType::Len) => {
                            if std::str::from_utf8(e.read_len()?.0).is_err() {
                                return Err(e.error(DecodeErrorKind::InvalidUtf8));
                            }
                        }
                        (2, WireType::Len) => {
                            let (v, at) = e.read_len()?;
                            value(WireReader::nested(v, at))?;
                        }
                        (field, wt) => e.skip(field, wt)?,
                    }
                }
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

fn walk_feature_list(mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (feature, at) = r.read_len()?;
                walk_feature(WireReader::nested(feature, at))?;
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

/// A `Feature`: every list it holds is read, a replaced oneof kind's too (the decoder reads
/// each as it comes).
fn walk_feature(mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (kind @ 1..=3, WireType::Len) => {
                let (list, at) = r.read_len()?;
                walk_list(kind, WireReader::nested(list, at))?;
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

/// A bytes (1), float (2) or int64 (3) list: its values read, packed or not.
fn walk_list(kind: u32, mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match (kind, r.read_tag()?) {
            (1, (1, WireType::Len)) => drop(r.read_len()?),
            (2, (1, WireType::Fixed32)) => drop(r.read_fixed32()?),
            (2, (1, WireType::Len)) => {
                let (packed, _) = r.read_len()?;
                if packed.len() % 4 != 0 {
                    return Err(r.error(DecodeErrorKind::PackedFloatLength(packed.len())));
                }
            }
            (3, (1, WireType::Varint)) => drop(r.read_varint()?),
            (3, (1, WireType::Len)) => {
                let (packed, at) = r.read_len()?;
                let mut p = WireReader::nested(packed, at);
                while !p.is_empty() {
                    p.read_varint()?;
                }
            }
            (_, (field, wt)) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

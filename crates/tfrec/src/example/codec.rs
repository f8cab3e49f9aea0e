//! Decoding and encoding owned messages, exactly as protobuf defines it.
//!
//! Decoding follows protobuf, not TensorFlow's fast-parser shortcuts: packed and unpacked
//! elements may mix; unknown fields (and known fields with an unexpected wire type) are skipped
//! at every level; a repeated sub-message field merges; a duplicated map key keeps the last
//! entry; a oneof set twice keeps the last kind, or merges when the kind repeats.
//!
//! Encoding is canonical, as protobuf's serializers write it: fields in number order, packed
//! lists, map entries in the map's order with both key and value written.

use super::model::{Example, Feature, FeatureList, FeatureLists, Features, SequenceExample};
use crate::wire::{put_tag, put_varint, varint_len, DecodeError, DecodeErrorKind, WireReader, WireType};

/// Decodes a serialized `tf.train.Example` ([`Message::decode`](super::Message::decode)).
pub(super) fn decode_example(bytes: &[u8]) -> Result<Example, DecodeError> {
    let mut r = WireReader::new(bytes);
    let mut example = Example::default();
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (sub, base) = r.read_len()?;
                merge_features(example.features_mut(), WireReader::nested(sub, base))?;
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(example)
}

/// Decodes a serialized `tf.train.Feature` ([`Feature::decode`]).
pub(super) fn decode_feature(bytes: &[u8]) -> Result<Feature, DecodeError> {
    let mut feature = Feature::None;
    merge_feature(&mut feature, WireReader::new(bytes))?;
    Ok(feature)
}

/// The canonical encoding of `feature` ([`Feature::encode`]).
pub(super) fn encode_feature(feature: &Feature) -> Vec<u8> {
    let mut out = Vec::with_capacity(feature_len(feature));
    put_feature(&mut out, feature);
    out
}

/// Appends the canonical encoding of `example` to `out`.
pub(super) fn encode_example_to(example: &Example, out: &mut Vec<u8>) {
    if let Some(features) = &example.features {
        put_message(out, 1, features_len(features), |out| put_features(out, features));
    }
}

/// The size of the canonical encoding of `example`.
pub(super) fn example_len(example: &Example) -> usize {
    example.features.as_ref().map_or(0, |f| field_len(features_len(f)))
}

/// Decodes a serialized `tf.train.SequenceExample`.
pub(super) fn decode_sequence_example(bytes: &[u8]) -> Result<SequenceExample, DecodeError> {
    let mut r = WireReader::new(bytes);
    let mut seq = SequenceExample::default();
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (sub, base) = r.read_len()?;
                merge_features(seq.context_mut(), WireReader::nested(sub, base))?;
            }
            (2, WireType::Len) => {
                let (sub, base) = r.read_len()?;
                merge_feature_lists(seq.feature_lists_mut(), WireReader::nested(sub, base))?;
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(seq)
}

/// Appends the canonical encoding of `seq` to `out`.
pub(super) fn encode_sequence_example_to(seq: &SequenceExample, out: &mut Vec<u8>) {
    if let Some(context) = &seq.context {
        put_message(out, 1, features_len(context), |out| put_features(out, context));
    }
    if let Some(lists) = &seq.feature_lists {
        put_message(out, 2, feature_lists_len(lists), |out| put_feature_lists(out, lists));
    }
}

/// The size of the canonical encoding of `seq`.
pub(super) fn sequence_example_len(seq: &SequenceExample) -> usize {
    seq.context.as_ref().map_or(0, |c| field_len(features_len(c)))
        + seq
            .feature_lists
            .as_ref()
            .map_or(0, |l| field_len(feature_lists_len(l)))
}

fn utf8_key(bytes: &[u8], offset: usize) -> Result<String, DecodeError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError {
        offset,
        kind: DecodeErrorKind::InvalidUtf8,
    })
}

/// Reads the entries of a protobuf `map<string, V>` (field 1 of `r`): each entry's key, and
/// its value fields merged by `merge_value`; `insert` gets each entry (a repeated key replaces
/// the earlier entry's value, as protobuf's maps do).
fn merge_map<V: Default>(
    mut r: WireReader<'_>,
    merge_value: impl Fn(&mut V, WireReader<'_>) -> Result<(), DecodeError>,
    mut insert: impl FnMut(String, V),
) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (entry, base) = r.read_len()?;
                let mut r = WireReader::nested(entry, base);
                let mut key = String::new();
                let mut value = V::default();
                while !r.is_empty() {
                    match r.read_tag()? {
                        (1, WireType::Len) => {
                            let (bytes, at) = r.read_len()?;
                            key = utf8_key(bytes, at)?;
                        }
                        (2, WireType::Len) => {
                            let (bytes, at) = r.read_len()?;
                            merge_value(&mut value, WireReader::nested(bytes, at))?;
                        }
                        (field, wt) => r.skip(field, wt)?,
                    }
                }
                insert(key, value);
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

fn merge_features(into: &mut Features, r: WireReader<'_>) -> Result<(), DecodeError> {
    merge_map(r, merge_feature, |key, value| {
        into.feature.insert(key, value);
    })
}

fn merge_feature_lists(into: &mut FeatureLists, r: WireReader<'_>) -> Result<(), DecodeError> {
    merge_map(r, merge_feature_list, |key, value| {
        into.feature_list.insert(key, value);
    })
}

fn merge_feature_list(into: &mut FeatureList, mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (bytes, at) = r.read_len()?;
                let mut feature = Feature::None;
                merge_feature(&mut feature, WireReader::nested(bytes, at))?;
                into.feature.push(feature);
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

/// Merges a serialized `Feature` into `into`: a different oneof kind replaces, the same merges.
pub(crate) fn merge_feature(into: &mut Feature, mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => {
                let (bytes, at) = r.read_len()?;
                if !matches!(into, Feature::Bytes(_)) {
                    *into = Feature::Bytes(Vec::new());
                }
                if let Feature::Bytes(values) = into {
                    merge_bytes_list(values, WireReader::nested(bytes, at))?;
                }
            }
            (2, WireType::Len) => {
                let (bytes, at) = r.read_len()?;
                if !matches!(into, Feature::Float(_)) {
                    *into = Feature::Float(Vec::new());
                }
                if let Feature::Float(values) = into {
                    merge_float_list(values, WireReader::nested(bytes, at))?;
                }
            }
            (3, WireType::Len) => {
                let (bytes, at) = r.read_len()?;
                if !matches!(into, Feature::Int64(_)) {
                    *into = Feature::Int64(Vec::new());
                }
                if let Feature::Int64(values) = into {
                    merge_int64_list(values, WireReader::nested(bytes, at))?;
                }
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

fn merge_bytes_list(into: &mut Vec<Vec<u8>>, mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Len) => into.push(r.read_len()?.0.to_vec()),
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

pub(crate) fn merge_float_list(into: &mut Vec<f32>, mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Fixed32) => into.push(f32::from_bits(r.read_fixed32()?)),
            (1, WireType::Len) => {
                let (bytes, at) = r.read_len()?;
                if bytes.len() % 4 != 0 {
                    return Err(DecodeError {
                        offset: at,
                        kind: DecodeErrorKind::PackedFloatLength(bytes.len()),
                    });
                }
                into.extend(
                    bytes
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                );
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

pub(crate) fn merge_int64_list(into: &mut Vec<i64>, mut r: WireReader<'_>) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.read_tag()? {
            (1, WireType::Varint) => into.push(r.read_varint()? as i64),
            (1, WireType::Len) => {
                let (bytes, at) = r.read_len()?;
                // Sized once from the block's varint terminators: growing by doubling would
                // hold up to 1.5 times a huge list while it is copied to a larger buffer.
                into.reserve(bytes.iter().filter(|&&b| b < 0x80).count());
                let mut packed = WireReader::nested(bytes, at);
                while !packed.is_empty() {
                    into.push(packed.read_varint()? as i64);
                }
            }
            (field, wt) => r.skip(field, wt)?,
        }
    }
    Ok(())
}

// ---- encoding -------------------------------------------------------------------------------

/// Size of a length-delimited field with a one-byte tag and a payload of `len` bytes.
#[inline]
fn field_len(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

#[inline]
fn put_message(out: &mut Vec<u8>, field: u32, len: usize, body: impl FnOnce(&mut Vec<u8>)) {
    put_tag(out, field, WireType::Len);
    put_varint(out, len as u64);
    let start = out.len();
    body(out);
    debug_assert_eq!(out.len() - start, len, "precomputed size of field {field}");
}

fn list_payload_len(feature: &Feature) -> usize {
    match feature {
        Feature::None => 0,
        Feature::Bytes(values) => values.iter().map(|v| field_len(v.len())).sum(),
        Feature::Float(values) if values.is_empty() => 0,
        Feature::Float(values) => field_len(4 * values.len()),
        Feature::Int64(values) if values.is_empty() => 0,
        Feature::Int64(values) => field_len(values.iter().map(|&v| varint_len(v as u64)).sum()),
    }
}

pub(crate) fn feature_len(feature: &Feature) -> usize {
    match feature {
        Feature::None => 0,
        _ => field_len(list_payload_len(feature)),
    }
}

pub(crate) fn put_feature(out: &mut Vec<u8>, feature: &Feature) {
    let field = match feature {
        Feature::None => return,
        Feature::Bytes(_) => 1,
        Feature::Float(_) => 2,
        Feature::Int64(_) => 3,
    };
    put_message(out, field, list_payload_len(feature), |out| match feature {
        Feature::None => {}
        Feature::Bytes(values) => {
            for v in values {
                put_message(out, 1, v.len(), |out| out.extend_from_slice(v));
            }
        }
        Feature::Float(values) if values.is_empty() => {}
        Feature::Float(values) => put_message(out, 1, 4 * values.len(), |out| {
            for v in values {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }),
        Feature::Int64(values) if values.is_empty() => {}
        Feature::Int64(values) => {
            let len = values.iter().map(|&v| varint_len(v as u64)).sum();
            put_message(out, 1, len, |out| {
                for &v in values {
                    put_varint(out, v as u64);
                }
            })
        }
    });
}

fn entry_len(key: &str, value_len: usize) -> usize {
    field_len(key.len()) + field_len(value_len)
}

fn features_len(features: &Features) -> usize {
    features
        .feature
        .iter()
        .map(|(k, v)| field_len(entry_len(k, feature_len(v))))
        .sum()
}

fn put_features(out: &mut Vec<u8>, features: &Features) {
    for (key, value) in &features.feature {
        let value_len = feature_len(value);
        put_message(out, 1, entry_len(key, value_len), |out| {
            put_message(out, 1, key.len(), |out| out.extend_from_slice(key.as_bytes()));
            put_message(out, 2, value_len, |out| put_feature(out, value));
        });
    }
}

fn feature_list_len(list: &FeatureList) -> usize {
    list.feature.iter().map(|f| field_len(feature_len(f))).sum()
}

fn feature_lists_len(lists: &FeatureLists) -> usize {
    lists
        .feature_list
        .iter()
        .map(|(k, v)| field_len(entry_len(k, feature_list_len(v))))
        .sum()
}

fn put_feature_lists(out: &mut Vec<u8>, lists: &FeatureLists) {
    for (key, list) in &lists.feature_list {
        let list_len = feature_list_len(list);
        put_message(out, 1, entry_len(key, list_len), |out| {
            put_message(out, 1, key.len(), |out| out.extend_from_slice(key.as_bytes()));
            put_message(out, 2, list_len, |out| {
                for f in &list.feature {
                    put_message(out, 1, feature_len(f), |out| put_feature(out, f));
                }
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn spec_test_vector() {
        // TF_SEMANTICS.md §1: Example{"a": int64_list [1,2]}.
        let bytes = hex("0a0d0a0b0a016112061a040a020102");
        let example = Example::decode(&bytes).unwrap();
        assert_eq!(example.get("a"), Some(&Feature::Int64(vec![1, 2])));
        assert_eq!(example.encode(), bytes);
    }

    #[test]
    fn a_feature_alone_is_the_bytes_inside_its_example() {
        // The spec vector's feature: int64_list [1, 2].
        let bytes = hex("1a040a020102");
        assert_eq!(Feature::decode(&bytes).unwrap(), Feature::Int64(vec![1, 2]));
        for feature in [
            Feature::None,
            Feature::Bytes(vec![]),
            Feature::Bytes(vec![b"a".to_vec(), vec![]]),
            Feature::Float(vec![]),
            Feature::Float(vec![2.5, -0.0]),
            Feature::Int64(vec![-1, i64::MAX]),
        ] {
            let mut example = Example::default();
            example.features_mut().insert("k", feature.clone());
            let inside = example.encode();
            let alone = feature.encode();
            let found = alone.is_empty() || inside.windows(alone.len()).any(|w| w == alone.as_slice());
            assert!(found, "{feature:?}");
            assert_eq!(Feature::decode(&alone).unwrap(), feature);
        }
        assert!(Feature::decode(&hex("1a05")).is_err());
    }

    #[test]
    fn mixed_packing_and_oneof_merge() {
        // int64_list: unpacked 1, packed [2, 3], unpacked 4.
        let ex = Example::decode(&hex("0a110a0f0a0178120a1a0808010a0202030804")).unwrap();
        assert_eq!(ex.get("x"), Some(&Feature::Int64(vec![1, 2, 3, 4])));
        // int64_list then float_list: the float wins.
        let ex = Example::decode(&hex("0a140a120a0178120d1a030a010112060a0400002040")).unwrap();
        assert_eq!(ex.get("x"), Some(&Feature::Float(vec![2.5])));
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_in_the_first_place() {
        let ex = Example::decode(&hex("0a180a0a0a017812051a030a01010a0a0a017812051a030a0102")).unwrap();
        assert_eq!(ex.features().len(), 1);
        assert_eq!(ex.get("x"), Some(&Feature::Int64(vec![2])));
    }

    #[test]
    fn presence_round_trips() {
        assert_eq!(Example::decode(&[]).unwrap(), Example::default());
        let empty_features = Example::decode(&[0x0a, 0x00]).unwrap();
        assert!(empty_features.features.is_some());
        assert_eq!(empty_features.encode(), vec![0x0a, 0x00]);
    }

    #[test]
    fn negative_int64_takes_ten_bytes() {
        let mut ex = Example::default();
        ex.features_mut().insert("x", Feature::Int64(vec![-5]));
        let bytes = ex.encode();
        assert_eq!(bytes, hex("0a150a130a0178120e1a0c0a0afbffffffffffffffff01"));
        assert_eq!(Example::decode(&bytes).unwrap(), ex);
    }
}

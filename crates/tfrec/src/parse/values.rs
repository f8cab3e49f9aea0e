//! Value types and their storage: the dtypes TensorFlow's parsing ops produce ([`DType`],
//! [`SplitsDType`]) and flat typed value lists ([`Values`]) laid out like arrow-rs buffers:
//! numbers in one `Vec`, strings as one byte buffer plus offsets ([`BytesArray`]).

use std::fmt;

use crate::example::Kind;

/// The value types TensorFlow's parsing ops support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `tf.int64`.
    Int64,
    /// `tf.float32`.
    Float32,
    /// `tf.string`: bytes.
    String,
}

impl DType {
    /// The name TensorFlow's error messages use: `int64`, `float`, `string`.
    pub fn tf_name(self) -> &'static str {
        self.kind().tf_dtype_name()
    }

    /// The name of the JSON forms: `int64`, `float32`, `string`.
    pub fn json_name(self) -> &'static str {
        self.kind().json_dtype_name()
    }

    /// The feature kind that holds values of this type.
    pub fn kind(self) -> Kind {
        match self {
            DType::Int64 => Kind::Int64,
            DType::Float32 => Kind::Float,
            DType::String => Kind::Bytes,
        }
    }

    /// The dtype of values of a feature kind.
    pub fn of_kind(kind: Kind) -> DType {
        match kind {
            Kind::Int64 => DType::Int64,
            Kind::Float => DType::Float32,
            Kind::Bytes => DType::String,
        }
    }

    /// Reads a dtype name: the JSON names, TensorFlow's (`float`) and the kind words (`bytes`).
    pub fn from_name(name: &str) -> Option<DType> {
        Kind::from_name(name).map(DType::of_kind)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tf_name())
    }
}

/// The integer type of a ragged tensor's row splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SplitsDType {
    /// TensorFlow's default for `RaggedFeature`.
    #[default]
    Int32,
    /// `tf.int64` row splits.
    Int64,
}

impl SplitsDType {
    /// The name of the JSON forms: `int32` or `int64`.
    pub fn json_name(self) -> &'static str {
        match self {
            SplitsDType::Int32 => "int32",
            SplitsDType::Int64 => "int64",
        }
    }
}

/// A list of byte strings in one buffer: value `i` is `data[offsets[i]..offsets[i + 1]]`, as
/// arrow-rs stores a binary array (one allocation for all values, not one per value).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BytesArray {
    data: Vec<u8>,
    /// Always starts with 0 and has one more entry than there are values.
    offsets: Vec<usize>,
}

impl Default for BytesArray {
    fn default() -> Self {
        BytesArray::new()
    }
}

impl fmt::Debug for BytesArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(String::from_utf8_lossy))
            .finish()
    }
}

impl BytesArray {
    /// An empty array.
    pub fn new() -> BytesArray {
        BytesArray {
            data: Vec::new(),
            offsets: vec![0],
        }
    }

    /// An empty array with room for `values` values of `bytes` bytes in all.
    pub fn with_capacity(values: usize, bytes: usize) -> BytesArray {
        let mut offsets = Vec::with_capacity(values + 1);
        offsets.push(0);
        BytesArray {
            data: Vec::with_capacity(bytes),
            offsets,
        }
    }

    /// `n` copies of `value`.
    pub fn repeat(value: &[u8], n: usize) -> BytesArray {
        let mut out = BytesArray::with_capacity(n, value.len() * n);
        out.extend_repeat(value, n);
        out
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let start = *self.offsets.get(i)?;
        let end = *self.offsets.get(i + 1)?;
        Some(&self.data[start..end])
    }

    /// Value `i`; panics when `i >= len()`, as slice indexing does.
    pub fn value(&self, i: usize) -> &[u8] {
        &self.data[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The values in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + DoubleEndedIterator + '_ {
        self.offsets.windows(2).map(|w| &self.data[w[0]..w[1]])
    }

    /// Every value's bytes, concatenated.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// `len() + 1` offsets into [`BytesArray::data`], starting at 0.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// The buffer and offsets (as [`BytesArray::data`] and [`BytesArray::offsets`]).
    pub fn into_parts(self) -> (Vec<u8>, Vec<usize>) {
        (self.data, self.offsets)
    }

    /// Appends one value.
    #[inline]
    pub fn push(&mut self, value: &[u8]) {
        self.data.extend_from_slice(value);
        self.offsets.push(self.data.len());
    }

    /// Appends the value `src[at..at + len]`. A short value is copied as the 16 bytes from
    /// `at`, when `src` has them, and the extra bytes cut off again: a copy of a fixed size
    /// is a couple of moves, where one of a variable size is a call to `memcpy`, which took a
    /// fifth of the parse of short string steps. `None` if the value runs past `src`.
    #[inline(always)]
    pub(crate) fn push_within(&mut self, src: &[u8], at: usize, len: usize) -> Option<()> {
        let end = at.checked_add(len)?;
        if len <= 16 {
            let window = at.checked_add(16).and_then(|to| src.get(at..to));
            if let Some(window) = window.and_then(|w| <&[u8; 16]>::try_from(w).ok()) {
                let base = self.data.len();
                self.data.extend_from_slice(window);
                self.data.truncate(base + len);
                self.offsets.push(base + len);
                return Some(());
            }
        }
        self.push(src.get(at..end)?);
        Some(())
    }

    /// The values in groups of `counts[i]` (which must add up to `len()`), each group followed
    /// by empty values up to `width`: a padded tensor of strings, for the price of its offsets.
    /// `None` if the counts do not fit.
    pub(crate) fn spaced_out(self, counts: &[usize], width: usize) -> Option<BytesArray> {
        if counts.iter().sum::<usize>() != self.len() || counts.iter().any(|&n| n > width) {
            return None;
        }
        let mut offsets = Vec::with_capacity(counts.len().checked_mul(width)?.checked_add(1)?);
        offsets.push(0);
        let mut at = 1;
        for &n in counts {
            offsets.extend_from_slice(&self.offsets[at..at + n]);
            at += n;
            let end = self.offsets[at - 1];
            offsets.extend(std::iter::repeat_n(end, width - n));
        }
        Some(BytesArray {
            data: self.data,
            offsets,
        })
    }

    /// Appends `n` copies of `value`.
    pub fn extend_repeat(&mut self, value: &[u8], n: usize) {
        self.offsets.reserve(n);
        for _ in 0..n {
            self.push(value);
        }
    }

    /// Appends values `range` of `other`, in one copy of their bytes.
    pub fn extend_from_range(&mut self, other: &BytesArray, range: std::ops::Range<usize>) {
        let (start, end) = (other.offsets[range.start], other.offsets[range.end]);
        let base = self.data.len();
        self.data.extend_from_slice(&other.data[start..end]);
        self.offsets.extend(
            other.offsets[range.start + 1..=range.end]
                .iter()
                .map(|&o| o - start + base),
        );
    }

    /// Appends every value of `other`.
    pub fn extend_from_array(&mut self, other: &BytesArray) {
        self.extend_from_range(other, 0..other.len());
    }

    /// Keeps the first `len` values.
    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.offsets.truncate(len + 1);
            self.data.truncate(self.offsets[len]);
        }
    }

    /// Removes every value, keeping the buffers.
    pub fn clear(&mut self) {
        self.data.clear();
        self.offsets.truncate(1);
    }

    /// Reserves room for `values` more values of `bytes` more bytes.
    pub fn reserve(&mut self, values: usize, bytes: usize) {
        self.offsets.reserve(values);
        self.data.reserve(bytes);
    }

    /// Room for how many more values, and how many more bytes, there is without growing.
    pub(crate) fn spare(&self) -> (usize, usize) {
        (
            self.offsets.capacity() - self.offsets.len(),
            self.data.capacity() - self.data.len(),
        )
    }

    /// The values as separately owned byte strings.
    pub fn to_vecs(&self) -> Vec<Vec<u8>> {
        self.iter().map(<[u8]>::to_vec).collect()
    }
}

impl<T: AsRef<[u8]>> Extend<T> for BytesArray {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.offsets.reserve(iter.size_hint().0);
        for v in iter {
            self.push(v.as_ref());
        }
    }
}

impl<T: AsRef<[u8]>> FromIterator<T> for BytesArray {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut out = BytesArray::new();
        out.extend(iter);
        out
    }
}

impl std::ops::Index<usize> for BytesArray {
    type Output = [u8];

    fn index(&self, i: usize) -> &[u8] {
        self.value(i)
    }
}

/// A typed, flat list of values: a default value or a tensor's contents.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// int64 values.
    Int64(Vec<i64>),
    /// float32 values.
    Float32(Vec<f32>),
    /// Byte strings.
    String(BytesArray),
}

impl Default for Values {
    fn default() -> Self {
        Values::Int64(Vec::new())
    }
}

impl Values {
    /// An empty list of `dtype`.
    pub fn empty(dtype: DType) -> Values {
        match dtype {
            DType::Int64 => Values::Int64(Vec::new()),
            DType::Float32 => Values::Float32(Vec::new()),
            DType::String => Values::String(BytesArray::new()),
        }
    }

    /// An empty list of `dtype` with room for `n` values.
    pub fn with_capacity(dtype: DType, n: usize) -> Values {
        match dtype {
            DType::Int64 => Values::Int64(Vec::with_capacity(n)),
            DType::Float32 => Values::Float32(Vec::with_capacity(n)),
            DType::String => Values::String(BytesArray::with_capacity(n, 0)),
        }
    }

    /// The values' type.
    pub fn dtype(&self) -> DType {
        match self {
            Values::Int64(_) => DType::Int64,
            Values::Float32(_) => DType::Float32,
            Values::String(_) => DType::String,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Values::Int64(v) => v.len(),
            Values::Float32(v) => v.len(),
            Values::String(v) => v.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The zero of `dtype`: 0, 0.0 or `""` (TensorFlow's padding).
    pub fn zero(dtype: DType) -> Values {
        match dtype {
            DType::Int64 => Values::Int64(vec![0]),
            DType::Float32 => Values::Float32(vec![0.0]),
            DType::String => Values::String(BytesArray::repeat(b"", 1)),
        }
    }

    /// The int64 values, if these are int64s.
    pub fn as_i64(&self) -> Option<&[i64]> {
        match self {
            Values::Int64(v) => Some(v),
            _ => None,
        }
    }

    /// The float32 values, if these are floats.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match self {
            Values::Float32(v) => Some(v),
            _ => None,
        }
    }

    /// The byte strings, if these are strings.
    pub fn as_bytes(&self) -> Option<&BytesArray> {
        match self {
            Values::String(v) => Some(v),
            _ => None,
        }
    }

    /// Appends values `range` of `other`; false (and nothing appended) when the dtypes differ.
    pub fn extend_from_range(&mut self, other: &Values, range: std::ops::Range<usize>) -> bool {
        match (self, other) {
            (Values::Int64(a), Values::Int64(b)) => a.extend_from_slice(&b[range]),
            (Values::Float32(a), Values::Float32(b)) => a.extend_from_slice(&b[range]),
            (Values::String(a), Values::String(b)) => a.extend_from_range(b, range),
            _ => return false,
        }
        true
    }

    /// Appends every value of `other`; false (and nothing appended) when the dtypes differ.
    #[inline]
    pub fn extend_from(&mut self, other: &Values) -> bool {
        match (self, other) {
            // A scalar (a missing feature's default, most often) is one push, not a call to
            // copy a slice.
            (Values::Int64(a), Values::Int64(b)) if b.len() == 1 => a.push(b[0]),
            (Values::Float32(a), Values::Float32(b)) if b.len() == 1 => a.push(b[0]),
            (a, b) => return a.extend_from_range(b, 0..b.len()),
        }
        true
    }

    /// Moves every value of `other` to the end of these; false when the dtypes differ.
    pub fn append(&mut self, other: Values) -> bool {
        match (self, other) {
            (Values::Int64(a), Values::Int64(mut b)) if a.is_empty() => std::mem::swap(a, &mut b),
            (Values::Int64(a), Values::Int64(mut b)) => a.append(&mut b),
            (Values::Float32(a), Values::Float32(mut b)) if a.is_empty() => std::mem::swap(a, &mut b),
            (Values::Float32(a), Values::Float32(mut b)) => a.append(&mut b),
            (Values::String(a), Values::String(b)) if a.is_empty() => *a = b,
            (Values::String(a), Values::String(b)) => a.extend_from_array(&b),
            _ => return false,
        }
        true
    }

    /// Appends `n` copies of the first value of `pad` (or of the dtype's zero when `pad` is
    /// empty or of another dtype).
    pub fn extend_pad(&mut self, pad: &Values, n: usize) {
        match self {
            Values::Int64(a) => a.extend(std::iter::repeat_n(
                pad.as_i64().and_then(|p| p.first()).copied().unwrap_or(0),
                n,
            )),
            Values::Float32(a) => a.extend(std::iter::repeat_n(
                pad.as_f32().and_then(|p| p.first()).copied().unwrap_or(0.0),
                n,
            )),
            Values::String(a) => a.extend_repeat(pad.as_bytes().and_then(|p| p.get(0)).unwrap_or(b""), n),
        }
    }

    /// Reserves room for the values of `parts` (a string's bytes too), before appending them:
    /// the column then grows once, not by doubling.
    pub(crate) fn reserve_for_parts<'a>(&mut self, parts: impl Iterator<Item = &'a Values> + Clone) {
        let n = parts.clone().map(Values::len).sum();
        match self {
            Values::String(v) => v.reserve(n, parts.filter_map(Values::as_bytes).map(|b| b.data().len()).sum()),
            _ => self.reserve(n),
        }
    }

    /// Reserves room for `n` more values (and no bytes of strings: their sizes are unknown).
    pub(crate) fn reserve(&mut self, n: usize) {
        match self {
            Values::Int64(v) => v.reserve(n),
            Values::Float32(v) => v.reserve(n),
            Values::String(v) => v.reserve(n, 0),
        }
    }

    /// Room for exactly `n` more values (see `Vec::reserve_exact`).
    pub(crate) fn reserve_exact(&mut self, n: usize) {
        match self {
            Values::Int64(v) => v.reserve_exact(n),
            Values::Float32(v) => v.reserve_exact(n),
            Values::String(v) => v.offsets.reserve_exact(n),
        }
    }

    /// Keeps the first `len` values.
    pub fn truncate(&mut self, len: usize) {
        match self {
            Values::Int64(v) => v.truncate(len),
            Values::Float32(v) => v.truncate(len),
            Values::String(v) => v.truncate(len),
        }
    }

    /// Values `order[0]`, `order[1]`, ... (each index below `len()`).
    pub fn select(&self, order: &[usize]) -> Values {
        match self {
            Values::Int64(v) => Values::Int64(order.iter().map(|&i| v[i]).collect()),
            Values::Float32(v) => Values::Float32(order.iter().map(|&i| v[i]).collect()),
            Values::String(v) => Values::String(order.iter().map(|&i| v.value(i)).collect()),
        }
    }
}

impl From<Vec<i64>> for Values {
    fn from(v: Vec<i64>) -> Self {
        Values::Int64(v)
    }
}

impl From<Vec<f32>> for Values {
    fn from(v: Vec<f32>) -> Self {
        Values::Float32(v)
    }
}

impl From<BytesArray> for Values {
    fn from(v: BytesArray) -> Self {
        Values::String(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_pushed_within_a_buffer_are_its_slices() {
        let src: Vec<u8> = (0u8..40).collect();
        let mut a = BytesArray::new();
        // Short values with 16 bytes after their start, short ones near the end, long ones.
        let cases = [
            (0, 0),
            (0, 1),
            (3, 16),
            (20, 5),
            (30, 10),
            (36, 4),
            (2, 17),
            (0, 40),
            (40, 0),
        ];
        for (at, len) in cases {
            a.push_within(&src, at, len).expect("in the buffer");
        }
        let expected: Vec<&[u8]> = cases.iter().map(|&(at, len)| &src[at..at + len]).collect();
        assert_eq!(a.iter().collect::<Vec<_>>(), expected);
        assert_eq!(a.push_within(&src, 38, 3), None);
        assert_eq!(a.push_within(&src, usize::MAX, 2), None);
        assert_eq!(a.len(), expected.len());
    }

    #[test]
    fn spaced_out_pads_each_group_with_empty_values() {
        let a: BytesArray = ["a", "bc", "d", "ef", "g"].into_iter().collect();
        let spaced = a.clone().spaced_out(&[2, 0, 3], 3).expect("fits");
        let got: Vec<&[u8]> = spaced.iter().collect();
        let expected: Vec<&[u8]> = vec![b"a", b"bc", b"", b"", b"", b"", b"d", b"ef", b"g"];
        assert_eq!(got, expected);
        assert!(a.clone().spaced_out(&[2, 2], 3).is_none(), "counts short of the values");
        assert!(a.spaced_out(&[5], 4).is_none(), "a group wider than the width");
    }

    #[test]
    fn bytes_array_basics() {
        let mut a: BytesArray = ["ab", "", "c"].into_iter().collect();
        assert_eq!(a.len(), 3);
        assert_eq!(a.get(0), Some(&b"ab"[..]));
        assert_eq!(a.get(1), Some(&b""[..]));
        assert_eq!(a.get(3), None);
        assert_eq!(&a[2], b"c");
        let b: BytesArray = ["x", "yz"].into_iter().collect();
        a.extend_from_range(&b, 1..2);
        assert_eq!(a.to_vecs(), vec![b"ab".to_vec(), vec![], b"c".to_vec(), b"yz".to_vec()]);
        assert_eq!(a.offsets(), &[0, 2, 2, 3, 5]);
        a.truncate(1);
        assert_eq!(a, ["ab"].into_iter().collect());
        assert_eq!(a.iter().rev().count(), 1);
    }

    #[test]
    fn values_append_and_pad() {
        let mut v = Values::empty(DType::String);
        assert!(v.append(Values::String(["a"].into_iter().collect())));
        v.extend_pad(&Values::String(["p"].into_iter().collect()), 2);
        assert_eq!(
            v.as_bytes().map(BytesArray::to_vecs),
            Some(vec![b"a".to_vec(), b"p".to_vec(), b"p".to_vec()])
        );
        assert!(!v.append(Values::Int64(vec![1])));
        let mut n = Values::Int64(vec![1]);
        n.extend_pad(&Values::Int64(vec![]), 1);
        assert_eq!(n.select(&[1, 0]), Values::Int64(vec![0, 1]));
    }
}

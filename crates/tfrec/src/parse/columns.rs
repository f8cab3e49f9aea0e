//! Per-feature accumulation of parsed values across a batch (the parse-time builders below the
//! tensors): values and per-example counts, padding rows, row splits from counts.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::values::{DType, Values};
use crate::example::{DecodeError, FeatureView};

/// All values of one feature over a run of examples, and how many each example had.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub values: Values,
    /// Values per example (for a feature list: per row; see the sequence parser).
    pub counts: Vec<usize>,
}

/// A column's size in the last batch, per 1,024 records: counts, values, and for strings
/// their bytes. The next batch's column starts that large instead of growing by doubling (a
/// realloc and a copy each time; a 120-feature parse made about 600 a batch). Shared by a
/// parser's clones and threads; only a size hint, and never more than the next batch's records
/// could hold: records can change kind between batches (a batch of large images, then one of
/// many small records), and a hint taken from other records must not size this batch.
#[derive(Debug, Default)]
pub(crate) struct ColumnSize {
    counts: AtomicUsize,
    values: AtomicUsize,
    bytes: AtomicUsize,
}

impl ColumnSize {
    /// Room for `records` records holding `bytes` bytes, as the last batch had and an eighth
    /// more: a batch only a little larger than the last would otherwise double a column
    /// (copying it) near its end.
    pub fn reserve(&self, records: usize, bytes: usize, column: &mut Column) {
        // Every count is of a row, a Feature of at least two bytes (its tag and length).
        column.counts.reserve(scaled(&self.counts, records).min(bytes / 2));
        self.reserve_values(records, bytes, &mut column.values);
    }

    /// [`ColumnSize::reserve`] for the values (and string bytes) alone, for a column whose
    /// counts are sized otherwise (an Example column has one a record).
    pub fn reserve_values(&self, records: usize, bytes: usize, values: &mut Values) {
        let most = most_values(values.dtype(), bytes);
        match values {
            Values::String(v) => v.reserve(
                scaled(&self.values, records).min(most),
                scaled(&self.bytes, records).min(bytes),
            ),
            values => values.reserve(scaled(&self.values, records).min(most)),
        }
    }

    /// Notes the size of `column`, which holds `records` records.
    pub fn remember(&self, records: usize, column: &Column) {
        if records > 0 {
            let per_k = |n: usize| n.saturating_mul(1024) / records;
            self.counts.store(per_k(column.counts.len()), Ordering::Relaxed);
            self.values.store(per_k(column.values.len()), Ordering::Relaxed);
            if let Values::String(v) = &column.values {
                self.bytes.store(per_k(v.data().len()), Ordering::Relaxed);
            }
        }
    }
}

/// The most values of `dtype` that `bytes` bytes of records can hold: each takes at least one
/// byte (a packed int64), four (a packed float) or two (a string's tag and length).
pub(crate) fn most_values(dtype: DType, bytes: usize) -> usize {
    bytes
        / match dtype {
            DType::Int64 => 1,
            DType::Float32 => 4,
            DType::String => 2,
        }
}

/// `records` records' worth of a per-1,024 size, and an eighth more.
fn scaled(per_k: &AtomicUsize, records: usize) -> usize {
    let n = per_k.load(Ordering::Relaxed).saturating_mul(records) >> 10;
    n.saturating_add(n / 8).saturating_add(16)
}

impl Column {
    pub fn new(dtype: DType) -> Column {
        Column {
            values: Values::empty(dtype),
            counts: Vec::new(),
        }
    }

    /// Room for a feature's values, counted without decoding them, so that a huge feature
    /// grows the column once (by doubling, up to twice its values would be allocated). A
    /// count that fails reserves nothing: decoding the feature then reports the error.
    pub fn reserve_for(&mut self, view: &FeatureView<'_>) {
        if let Ok(n) = view.count() {
            self.values.reserve(n);
        }
    }

    /// Appends a feature's values (which must be of this column's kind); returns how many.
    #[inline]
    pub fn extend_from(&mut self, view: &FeatureView<'_>) -> Result<usize, DecodeError> {
        match &mut self.values {
            Values::Int64(v) => view.extend_int64s(v),
            Values::Float32(v) => view.extend_floats(v),
            Values::String(v) => view.for_each_bytes(|b| v.push(b)),
        }
    }

    /// Keeps the first `len` values (after a failed feature, so the column stays consistent).
    pub fn truncate_values(&mut self, len: usize) {
        self.values.truncate(len);
    }

    /// Appends another run of examples.
    pub fn append(&mut self, mut other: Column) {
        self.values.append(other.values);
        self.counts.append(&mut other.counts);
    }
}

/// Places each group of `counts[i]` values at the start of a row of `width`, padding with `pad`.
pub(crate) fn pad_rows(values: &Values, counts: &[usize], width: usize, pad: &Values) -> Values {
    let mut out = Values::with_capacity(values.dtype(), counts.len() * width);
    pad_rows_into(&mut out, values, counts, width, pad);
    out
}

/// As [`pad_rows`], appending to `out` (of the same dtype).
pub(crate) fn pad_rows_into(out: &mut Values, values: &Values, counts: &[usize], width: usize, pad: &Values) {
    let mut at = 0;
    for &n in counts {
        out.extend_from_range(values, at..at + n);
        out.extend_pad(pad, width - n);
        at += n;
    }
}

/// Row splits `[0, c0, c0+c1, ...]` from per-row counts.
pub(crate) fn splits_of(counts: &[usize]) -> Vec<i64> {
    let mut splits = Vec::with_capacity(counts.len() + 1);
    let mut total = 0i64;
    splits.push(0);
    for &c in counts {
        total += c as i64;
        splits.push(total);
    }
    splits
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Room a column has for more values and, for strings, more bytes.
    fn spare(values: &Values) -> (usize, usize) {
        match values {
            Values::Int64(v) => (v.capacity() - v.len(), 0),
            Values::Float32(v) => (v.capacity() - v.len(), 0),
            Values::String(v) => v.spare(),
        }
    }

    /// Records that change kind between batches: a batch of one large string (an image), then
    /// a batch of many small records. The hint from the first must not size the second for
    /// strings of that size (issue 54: a hint of 64 KiB a record, times the rows of the next
    /// batch, is gigabytes for a batch of kilobytes); it still sizes a batch that could hold
    /// what it says.
    #[test]
    fn a_hint_never_reserves_more_than_the_records_hold() {
        let size = ColumnSize::default();
        let mut image = Column::new(DType::String);
        if let Values::String(v) = &mut image.values {
            v.push(&vec![7u8; 64 << 10]);
        }
        image.counts.push(1);
        size.remember(1, &image);
        let mut small = Column::new(DType::String);
        size.reserve(1_000, 20_000, &mut small);
        let (values, bytes) = spare(&small.values);
        assert!(bytes <= 20_000, "{bytes} bytes of room for 20,000 bytes of records");
        assert!(values <= 10_000, "room for {values} strings in 20,000 bytes");
        assert!(
            small.counts.capacity() <= 10_000,
            "room for {} rows",
            small.counts.capacity()
        );
        let mut like_it = Column::new(DType::String);
        size.reserve(2, 140_000, &mut like_it);
        assert!(
            spare(&like_it.values).1 >= 128 << 10,
            "records as large are still sized ahead"
        );

        let numbers = ColumnSize::default();
        let mut many = Column::new(DType::Int64);
        many.values = Values::Int64(vec![1; 100_000]);
        many.counts.push(100_000);
        numbers.remember(1, &many);
        for (dtype, most) in [(DType::Int64, 5_000), (DType::Float32, 1_250)] {
            let mut values = Values::empty(dtype);
            numbers.reserve_values(1_000, 5_000, &mut values);
            assert!(
                spare(&values).0 <= most,
                "{dtype:?}: room for {} values",
                spare(&values).0
            );
        }
    }
}

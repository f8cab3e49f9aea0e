//! The one-pass accumulator: per feature, what TFDV's basic and top-k generators keep, fed one
//! `Example` at a time, mergeable across threads and shards, finished into the protos.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::error::{type_name, RecordPlace, StatsError};
use super::histogram::{self, quantiles_histogram};
use super::lengths::LengthCounts;
use super::options::{RecordMessage, StatsOptions};
use super::parallel::map_on_threads;
use super::proto;
use super::quantiles::QuantilesSketch;
use super::select::keep_allowed;
use super::sequence::{has_feature_lists, DecodedValues, FeatureListsAcc, ValuesAcc};
use super::string_counts::StringCounts;
use crate::example::{ExampleView, FeatureView, Kind, SequenceExampleView};
use crate::wire::{DecodeError, DecodeErrorKind};

/// TFDV's `_NUM_QUANTILES_FACTOR_FOR_STD_HISTOGRAM`: the standard histogram is interpolated
/// from a quantiles histogram this many times finer than the quantiles histogram shown.
const STD_HISTOGRAM_QUANTILES_FACTOR: usize = 100;

/// TFDV's label for a string value that is not UTF-8 (`constants.NON_UTF8_PLACEHOLDER`).
const NON_UTF8_PLACEHOLDER: &str = "__BYTES_VALUE__";

/// Mean and variance of the finite values: the sum kept compensated (Neumaier), the squared
/// deviations by Welford's update, partial results combined as TFDV's `MeanVarAccumulator`
/// combines batches. TFDV's own figures carry numpy's rounding, so the two agree to rounding,
/// not bit for bit.
#[derive(Debug, Clone, Default)]
pub(super) struct MeanVar {
    pub(super) count: u64,
    pub(super) sum: f64,
    pub(super) compensation: f64,
    pub(super) mean: f64,
    /// Sum of squared deviations from `mean`.
    pub(super) m2: f64,
    /// Whether an infinite value was seen: TFDV's mean is then NaN and its std_dev 0.
    pub(super) saw_infinity: bool,
}

impl MeanVar {
    fn add(&mut self, x: f64) {
        if x.is_infinite() {
            self.saw_infinity = true;
            return;
        }
        self.count += 1;
        let t = self.sum + x;
        self.compensation += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    fn merge(&mut self, other: &MeanVar) {
        self.saw_infinity |= other.saw_infinity;
        let count = self.count + other.count;
        if count == 0 {
            return;
        }
        let delta = other.mean - self.mean;
        let ratio = other.count as f64 / count as f64;
        self.m2 += other.m2 + delta * delta * self.count as f64 * ratio;
        self.mean += delta * ratio;
        let t = self.sum + other.sum;
        self.compensation += other.compensation
            + if self.sum.abs() >= other.sum.abs() {
                (self.sum - t) + other.sum
            } else {
                (other.sum - t) + self.sum
            };
        self.sum = t;
        self.count = count;
    }

    /// TFDV's `(mean, std_dev)`: NaN and 0 once an infinity was seen.
    fn mean_and_std_dev(&self) -> (f64, f64) {
        if self.saw_infinity || self.count == 0 {
            return (f64::NAN, 0.0);
        }
        let mean = (self.sum + self.compensation) / self.count as f64;
        (mean, (self.m2 / self.count as f64).max(0.0).sqrt())
    }
}

/// What TFDV keeps of one feature's numeric values.
#[derive(Debug, Clone)]
pub(super) struct NumericAcc {
    pub(super) num_zeros: u64,
    pub(super) num_nan: u64,
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) finite_min: f64,
    pub(super) finite_max: f64,
    pub(super) pos_inf_count: u64,
    pub(super) mean_var: MeanVar,
    pub(super) sketch: QuantilesSketch,
}

impl NumericAcc {
    fn new(eps: f64) -> Self {
        NumericAcc {
            num_zeros: 0,
            num_nan: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            finite_min: f64::INFINITY,
            finite_max: f64::NEG_INFINITY,
            pos_inf_count: 0,
            mean_var: MeanVar::default(),
            sketch: QuantilesSketch::new(eps),
        }
    }

    #[inline]
    fn add(&mut self, x: f64) {
        if x.is_nan() {
            self.num_nan += 1;
            return;
        }
        self.mean_var.add(x);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        if x.is_finite() {
            self.finite_min = self.finite_min.min(x);
            self.finite_max = self.finite_max.max(x);
        } else if x > 0.0 {
            self.pos_inf_count += 1;
        }
        if x == 0.0 {
            self.num_zeros += 1;
        }
        self.sketch.add(x);
    }

    fn merge(&mut self, other: &NumericAcc) {
        self.num_zeros += other.num_zeros;
        self.num_nan += other.num_nan;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.finite_min = self.finite_min.min(other.finite_min);
        self.finite_max = self.finite_max.max(other.finite_max);
        self.pos_inf_count += other.pos_inf_count;
        self.mean_var.merge(&other.mean_var);
        self.sketch.merge(&other.sketch);
    }
}

/// What TFDV keeps of one feature's string values: their lengths, and every distinct value
/// with its count (TFDV's top-k and uniques are exact). Whether a value is UTF-8 is asked once
/// per distinct value, when the figures are read.
#[derive(Debug, Clone, Default)]
pub(super) struct StringAcc {
    pub(super) total_bytes: u64,
    pub(super) counts: StringCounts,
}

impl StringAcc {
    #[inline]
    fn add(&mut self, value: &[u8]) {
        self.total_bytes += value.len() as u64;
        self.counts.add(value);
    }

    fn merge(&mut self, other: &StringAcc) {
        self.total_bytes += other.total_bytes;
        self.counts.merge(&other.counts);
    }

    /// [`StringAcc::merge`], taking `other`'s values instead of copying them.
    fn merge_owned(&mut self, other: StringAcc) {
        self.total_bytes += other.total_bytes;
        self.counts.merge_owned(other.counts);
    }

    /// Occurrences of values that are not UTF-8.
    pub(super) fn invalid_utf8(&self) -> u64 {
        self.counts
            .iter()
            .filter(|(value, _)| std::str::from_utf8(value).is_err())
            .map(|(_, n)| n)
            .sum()
    }
}

/// Whose distinct string values: a feature's, or a feature list's (a SequenceExample may have
/// a context feature and a feature list of one name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct StringsKey {
    pub(super) list: bool,
    pub(super) name: Box<[u8]>,
}

/// One feature's partial statistics.
#[derive(Debug, Clone)]
pub(super) struct FeatureAcc {
    /// The kind of the first record that gave the feature one; `None` while every record that
    /// had the feature left its kind unset (TFDV then reports it as a STRING, all missing).
    pub(super) kind: Option<Kind>,
    /// Examples where the feature has a kind (an empty list counts; an unset kind does not).
    pub(super) num_non_missing: u64,
    pub(super) min_num_values: u64,
    pub(super) max_num_values: u64,
    pub(super) total_num_values: u64,
    /// Examples by their number of values.
    pub(super) num_values_counts: LengthCounts,
    pub(super) numeric: Option<NumericAcc>,
    pub(super) strings: Option<StringAcc>,
}

impl FeatureAcc {
    fn new() -> Self {
        FeatureAcc {
            kind: None,
            num_non_missing: 0,
            min_num_values: u64::MAX,
            max_num_values: 0,
            total_num_values: 0,
            num_values_counts: LengthCounts::default(),
            numeric: None,
            strings: None,
        }
    }

    /// Counts `examples` examples holding the feature with `count` values each.
    #[inline]
    fn add_count(&mut self, count: u64, examples: u64) {
        self.num_non_missing += examples;
        self.min_num_values = self.min_num_values.min(count);
        self.max_num_values = self.max_num_values.max(count);
        self.total_num_values += count * examples;
        self.num_values_counts.add(count, examples);
    }

    /// `(values per example, examples)`, by values per example.
    pub(super) fn values_per_example(&self) -> Vec<(u64, u64)> {
        self.num_values_counts.sorted()
    }

    /// [`FeatureAcc::merge`], taking `other`'s distinct strings instead of copying them.
    fn merge_owned(&mut self, name: &[u8], mut other: FeatureAcc) -> Result<(), StatsError> {
        let strings = other.strings.take();
        self.merge(name, &other)?;
        match (&mut self.strings, strings) {
            (Some(ours), Some(theirs)) => ours.merge_owned(theirs),
            (ours @ None, Some(theirs)) => *ours = Some(theirs),
            _ => {}
        }
        Ok(())
    }

    fn merge(&mut self, name: &[u8], other: &FeatureAcc) -> Result<(), StatsError> {
        match (self.kind, other.kind) {
            (Some(a), Some(b)) if a != b => {
                return Err(StatsError::KindChanged {
                    place: RecordPlace {
                        path: Default::default(),
                        offset: 0,
                        record_index: 0,
                    },
                    feature: String::from_utf8_lossy(name).into_owned(),
                    first: type_name(a),
                    second: type_name(b),
                })
            }
            (None, Some(b)) => self.kind = Some(b),
            _ => {}
        }
        self.num_non_missing += other.num_non_missing;
        self.min_num_values = self.min_num_values.min(other.min_num_values);
        self.max_num_values = self.max_num_values.max(other.max_num_values);
        self.total_num_values += other.total_num_values;
        self.num_values_counts.merge(&other.num_values_counts);
        match (&mut self.numeric, &other.numeric) {
            (Some(a), Some(b)) => a.merge(b),
            (a @ None, Some(b)) => *a = Some(b.clone()),
            _ => {}
        }
        match (&mut self.strings, &other.strings) {
            (Some(a), Some(b)) => a.merge(b),
            (a @ None, Some(b)) => *a = Some(b.clone()),
            _ => {}
        }
        Ok(())
    }
}

/// Feature lists count their values as plain features do (see `sequence`).
impl ValuesAcc for FeatureAcc {
    fn empty() -> Self {
        FeatureAcc::new()
    }

    /// The kind its values have, once one was seen.
    fn kind(&self) -> Option<Kind> {
        self.kind
    }

    /// Adds the values of `feature` (of `kind`) to the numeric or string figures, and gives
    /// their count; the per-example figures are `count_examples`'.
    fn add_values(&mut self, kind: Kind, feature: &FeatureView<'_>, eps: f64) -> Result<u64, DecodeError> {
        self.kind = Some(kind);
        let count = match kind {
            Kind::Int64 => {
                let numeric = self.numeric.get_or_insert_with(|| NumericAcc::new(eps));
                feature.for_each_int64(|v| numeric.add(v as f64))
            }
            Kind::Float => {
                let numeric = self.numeric.get_or_insert_with(|| NumericAcc::new(eps));
                feature.for_each_float(|v| numeric.add(f64::from(v)))
            }
            Kind::Bytes => {
                let strings = self.strings.get_or_insert_with(StringAcc::default);
                feature.for_each_bytes(|v| strings.add(v))
            }
        }?;
        Ok(count as u64)
    }

    /// Adds values already decoded to the numeric or string figures.
    #[inline]
    fn add_decoded(&mut self, kind: Kind, values: DecodedValues<'_>, eps: f64) {
        self.kind = Some(kind);
        match values {
            DecodedValues::Int64(values) => {
                let numeric = self.numeric.get_or_insert_with(|| NumericAcc::new(eps));
                for &x in values {
                    numeric.add(x as f64);
                }
            }
            DecodedValues::Float(values) => {
                let numeric = self.numeric.get_or_insert_with(|| NumericAcc::new(eps));
                for &x in values {
                    numeric.add(f64::from(x));
                }
            }
            DecodedValues::Bytes { record, ranges } => {
                let strings = self.strings.get_or_insert_with(StringAcc::default);
                for &(from, to) in ranges {
                    strings.add(&record[from..to]);
                }
            }
        }
    }

    /// Counts `examples` examples where the feature is present with `count` values each.
    fn count_examples(&mut self, count: u64, examples: u64) {
        if examples == 0 {
            return;
        }
        self.add_count(count, examples);
    }

    fn merge(&mut self, name: &[u8], other: &FeatureAcc) -> Result<(), StatsError> {
        FeatureAcc::merge(self, name, other)
    }
}

/// Statistics of a stream of `Example`s, one pass, in memory bounded by the features and (for
/// string features) their distinct values; partial accumulators of shards or threads merge.
///
/// ```
/// use tfrec::example::Example;
/// use tfrec::stats::{StatsAccumulator, StatsOptions};
///
/// let mut acc = StatsAccumulator::new(StatsOptions::default())?;
/// for age in [19, 23, 31] {
///     acc.add_example(&Example::builder().int64("age", age).build()?.encode(), None)?;
/// }
/// let stats = acc.finish();
/// let dataset = &stats.datasets[0];
/// assert_eq!(dataset.num_examples, 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct StatsAccumulator {
    pub(super) options: StatsOptions,
    pub(super) num_examples: u64,
    /// Every feature seen, in the order first seen (`names[i]` is `features[i]`'s name).
    pub(super) names: Vec<Box<[u8]>>,
    pub(super) features: Vec<FeatureAcc>,
    /// A feature's place in `features`, by name.
    pub(super) positions: FxHashMap<Box<[u8]>, usize>,
    /// The feature lists of SequenceExamples (empty for Examples).
    pub(super) feature_lists: FeatureListsAcc<FeatureAcc>,
    /// What one record leaves behind for the next (kept to spare allocations).
    scratch: RecordScratch,
}

/// One record's entries, decoded before any of them is counted (so that an error leaves the
/// figures whole), and what the record before it looked like.
#[derive(Debug, Clone, Default)]
struct RecordScratch {
    /// The feature of each entry of the last record, by the entry's place: records of a data
    /// set list the same keys in the same order, so a key is compared, not hashed.
    feature_at: Vec<usize>,
    entries: Vec<PendingEntry>,
    /// The int64 and float values of the entries, one run per entry.
    ints: Vec<i64>,
    floats: Vec<f32>,
    /// The bytes values of the entries, as ranges of the record.
    strings: Vec<(usize, usize)>,
    /// Per feature: 1 + the index in `entries` of its entry in the record being read, or 0.
    entry_of: Vec<u32>,
}

/// Records longer than this have their values walked twice (checked, then counted) instead
/// of copied into [`RecordScratch`]: a record of millions of values then costs no memory
/// beside its own bytes, and a copy would cost more than a second walk only on small records.
const STREAMED_RECORD_BYTES: usize = 1 << 20;

fn is_streamed(record: &[u8]) -> bool {
    record.len() > STREAMED_RECORD_BYTES
}

/// One entry of the record being read.
#[derive(Debug, Clone)]
struct PendingEntry {
    feature: usize,
    kind: Option<Kind>,
    /// Its values: a run of `ints`, `floats` or `strings`, by kind.
    values: std::ops::Range<usize>,
    /// A later entry of the same key replaced it (the last one counts, as in decoding).
    replaced: bool,
}

/// Why a record was not counted, before its place is known.
enum EntryError {
    Decode(DecodeError),
    KindChanged {
        feature: String,
        first: &'static str,
        second: &'static str,
    },
}

impl EntryError {
    /// The error of the record at `place` (`sequence`: read as a `SequenceExample`).
    fn at(self, place: RecordPlace, sequence: bool) -> StatsError {
        match self {
            EntryError::Decode(error) if sequence => StatsError::DecodeSequence { place, error },
            EntryError::Decode(error) => StatsError::Decode { place, error },
            EntryError::KindChanged { feature, first, second } => StatsError::KindChanged {
                place,
                feature,
                first,
                second,
            },
        }
    }
}

impl StatsAccumulator {
    /// An empty accumulator; fails when `options` are out of range.
    pub fn new(options: StatsOptions) -> Result<Self, StatsError> {
        options.validate()?;
        Ok(StatsAccumulator {
            options,
            num_examples: 0,
            names: Vec::new(),
            features: Vec::new(),
            positions: FxHashMap::default(),
            feature_lists: FeatureListsAcc::default(),
            scratch: RecordScratch::default(),
        })
    }

    /// The options it computes with.
    pub fn options(&self) -> &StatsOptions {
        &self.options
    }

    /// Examples added so far.
    pub fn num_examples(&self) -> u64 {
        self.num_examples
    }

    /// Adds one serialized `Example`; `place` names it in errors. On error nothing of the
    /// record has been counted.
    pub fn add_example(&mut self, record: &[u8], place: Option<&dyn Fn() -> RecordPlace>) -> Result<(), StatsError> {
        self.add_message(record, place, false)
    }

    /// Adds one serialized `Example` (`sequence`: a `SequenceExample`, its context features
    /// read as the `Example`'s features and its feature lists beside them). Every value is
    /// decoded once, and nothing counted until the whole record is known to decode and to
    /// keep its features' kinds.
    fn add_message(
        &mut self,
        record: &[u8],
        place: Option<&dyn Fn() -> RecordPlace>,
        sequence: bool,
    ) -> Result<(), StatsError> {
        let known = self.features.len();
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = self.read_message(record, &mut scratch, sequence);
        if result.is_ok() {
            if sequence {
                self.feature_lists
                    .count(record, is_streamed(record), self.options.epsilon);
            }
            self.count_entries(record, &scratch);
            self.num_examples += 1;
        } else {
            // Features met first in this record are forgotten with it.
            for name in self.names.drain(known..) {
                self.positions.remove(&name);
            }
            self.features.truncate(known);
            scratch.feature_at.clear();
        }
        for entry in &scratch.entries {
            if let Some(slot) = scratch.entry_of.get_mut(entry.feature) {
                *slot = 0;
            }
        }
        self.scratch = scratch;
        result.map_err(|error| {
            let place = place.map_or(
                RecordPlace {
                    path: Default::default(),
                    offset: 0,
                    record_index: self.num_examples,
                },
                |p| p(),
            );
            error.at(place, sequence)
        })
    }

    /// Decodes `record` into `scratch` (and, for a `sequence`, its feature lists into the
    /// feature lists' scratch) and checks the kinds: the feature lists' first, then the
    /// context's (an `Example`'s features).
    fn read_message(&mut self, record: &[u8], scratch: &mut RecordScratch, sequence: bool) -> Result<(), EntryError> {
        if !sequence {
            let view = ExampleView::new(record);
            self.read_entries(record, scratch, &|| view.validate())?;
            return self.check_kinds(scratch);
        }
        let view = SequenceExampleView::new(record);
        let validate = || view.validate();
        self.read_entries(record, scratch, &validate)?;
        self.feature_lists
            .read(record, is_streamed(record), &validate)
            .map_err(EntryError::Decode)?;
        self.feature_lists
            .check_kinds(record)
            .map_err(|change| EntryError::KindChanged {
                feature: change.feature,
                first: type_name(change.first),
                second: type_name(change.second),
            })?;
        self.check_kinds(scratch)
    }

    /// Decodes every entry of `record` into `scratch`, checking all that decoding checks;
    /// learns the features not seen before (without counting anything). The values of a
    /// record longer than [`STREAMED_RECORD_BYTES`] are checked and counted but not kept: each
    /// entry's range is then only its number of values, and [`Self::count_entries`] walks the
    /// record again. `validate` checks the whole record as decoding does; its error is the one
    /// given for a record that does not decode.
    fn read_entries(
        &mut self,
        record: &[u8],
        scratch: &mut RecordScratch,
        validate: &dyn Fn() -> Result<(), DecodeError>,
    ) -> Result<(), EntryError> {
        let streamed = is_streamed(record);
        scratch.entries.clear();
        scratch.ints.clear();
        scratch.floats.clear();
        scratch.strings.clear();
        let view = ExampleView::new(record);
        // The canonical error of a record that does not decode: the one decoding gives.
        let refused = |fallback: DecodeError| EntryError::Decode(validate().err().unwrap_or(fallback));
        let mut validated = false;
        let mut entries = view.entries();
        let mut at = 0;
        while let Some((key, feature, whole)) = entries.next_feature().map_err(refused)? {
            if !whole && !validated {
                // Some of the entry's bytes are not walked below: check the record as a whole.
                validate().map_err(EntryError::Decode)?;
                validated = true;
            }
            let index = match scratch.feature_at.get(at) {
                Some(&i) if *self.names[i] == *key => i,
                _ => {
                    let i = match self.positions.get(key) {
                        Some(&i) => i,
                        None => {
                            if std::str::from_utf8(key).is_err() {
                                // Decoding refuses a key that is not UTF-8.
                                return Err(refused(DecodeError {
                                    offset: 0,
                                    kind: DecodeErrorKind::InvalidUtf8,
                                }));
                            }
                            self.learn(key)
                        }
                    };
                    if at < scratch.feature_at.len() {
                        scratch.feature_at[at] = i;
                    } else {
                        scratch.feature_at.push(i);
                    }
                    i
                }
            };
            at += 1;
            if scratch.entry_of.len() < self.features.len() {
                scratch.entry_of.resize(self.features.len(), 0);
            }
            let kind = feature.kind();
            let values = match kind {
                None => 0..0,
                Some(Kind::Int64) if streamed => 0..feature.for_each_int64(|_| ()).map_err(refused)?,
                Some(Kind::Float) if streamed => 0..feature.for_each_float(|_| ()).map_err(refused)?,
                Some(Kind::Bytes) if streamed => 0..feature.for_each_bytes(|_| ()).map_err(refused)?,
                Some(Kind::Int64) => {
                    let start = scratch.ints.len();
                    feature.extend_int64s(&mut scratch.ints).map_err(refused)?;
                    start..scratch.ints.len()
                }
                Some(Kind::Float) => {
                    let start = scratch.floats.len();
                    feature.extend_floats(&mut scratch.floats).map_err(refused)?;
                    start..scratch.floats.len()
                }
                Some(Kind::Bytes) => {
                    let start = scratch.strings.len();
                    let strings = &mut scratch.strings;
                    let base = record.as_ptr() as usize;
                    // Each value is a slice of `record`: kept as its range.
                    feature
                        .for_each_bytes(|v| {
                            let from = v.as_ptr() as usize - base;
                            strings.push((from, from + v.len()));
                        })
                        .map_err(refused)?;
                    start..scratch.strings.len()
                }
            };
            let slot = &mut scratch.entry_of[index];
            if *slot != 0 {
                scratch.entries[*slot as usize - 1].replaced = true;
            }
            scratch.entries.push(PendingEntry {
                feature: index,
                kind,
                values,
                replaced: false,
            });
            *slot = scratch.entries.len() as u32;
        }
        scratch.feature_at.truncate(at);
        Ok(())
    }

    /// A new feature's place.
    pub(super) fn learn(&mut self, name: &[u8]) -> usize {
        let i = self.features.len();
        self.names.push(name.into());
        self.features.push(FeatureAcc::new());
        self.positions.insert(name.into(), i);
        i
    }

    /// Fails when an entry's kind is not the kind its feature had (the first such feature by
    /// name).
    fn check_kinds(&self, scratch: &RecordScratch) -> Result<(), EntryError> {
        let mut changed: Option<(&[u8], Kind, Kind)> = None;
        for entry in scratch.entries.iter().filter(|e| !e.replaced) {
            let (Some(kind), Some(first)) = (entry.kind, self.features[entry.feature].kind) else {
                continue;
            };
            let name = &self.names[entry.feature][..];
            if kind != first && changed.is_none_or(|(n, _, _)| name < n) {
                changed = Some((name, first, kind));
            }
        }
        match changed {
            None => Ok(()),
            Some((name, first, second)) => Err(EntryError::KindChanged {
                feature: String::from_utf8_lossy(name).into_owned(),
                first: type_name(first),
                second: type_name(second),
            }),
        }
    }

    /// Counts the entries `read_entries` left in `scratch`.
    fn count_entries(&mut self, record: &[u8], scratch: &RecordScratch) {
        if is_streamed(record) {
            return self.count_entries_streamed(record, scratch);
        }
        let eps = self.options.epsilon;
        for entry in scratch.entries.iter().filter(|e| !e.replaced) {
            let acc = &mut self.features[entry.feature];
            let Some(kind) = entry.kind else { continue };
            let values = match kind {
                Kind::Int64 => DecodedValues::Int64(&scratch.ints[entry.values.clone()]),
                Kind::Float => DecodedValues::Float(&scratch.floats[entry.values.clone()]),
                Kind::Bytes => DecodedValues::Bytes {
                    record,
                    ranges: &scratch.strings[entry.values.clone()],
                },
            };
            acc.add_decoded(kind, values, eps);
            acc.add_count(entry.values.len() as u64, 1);
        }
    }

    /// Counts the entries of a record whose values `read_entries` did not keep, walking the
    /// record's entries again: the walk meets them in the order `scratch` lists them, and
    /// meets no error, since the same bytes decoded once.
    fn count_entries_streamed(&mut self, record: &[u8], scratch: &RecordScratch) {
        let eps = self.options.epsilon;
        let view = ExampleView::new(record);
        let mut features = view.entries();
        for entry in &scratch.entries {
            let Ok(Some((_, feature, _))) = features.next_feature() else {
                break;
            };
            let Some(kind) = entry.kind.filter(|_| !entry.replaced) else {
                continue;
            };
            let acc = &mut self.features[entry.feature];
            acc.kind = Some(kind);
            let walked = match kind {
                Kind::Int64 => {
                    let numeric = acc.numeric.get_or_insert_with(|| NumericAcc::new(eps));
                    feature.for_each_int64(|x| numeric.add(x as f64))
                }
                Kind::Float => {
                    let numeric = acc.numeric.get_or_insert_with(|| NumericAcc::new(eps));
                    feature.for_each_float(|x| numeric.add(f64::from(x)))
                }
                Kind::Bytes => {
                    let strings = acc.strings.get_or_insert_with(StringAcc::default);
                    feature.for_each_bytes(|v| strings.add(v))
                }
            };
            debug_assert_eq!(walked.ok(), Some(entry.values.len()));
            acc.add_count(entry.values.len() as u64, 1);
        }
    }

    /// Adds one record, read as [`StatsOptions::message`] says.
    pub fn add_record(&mut self, record: &[u8], place: Option<&dyn Fn() -> RecordPlace>) -> Result<(), StatsError> {
        match self.options.message {
            RecordMessage::Example => self.add_example(record, place),
            RecordMessage::SequenceExample => self.add_sequence_example(record, place),
            RecordMessage::Detect if has_feature_lists(record) => self.add_sequence_example(record, place),
            RecordMessage::Detect => self.add_example(record, place),
        }
    }

    /// Adds one serialized `SequenceExample`: its context features as an `Example`'s features,
    /// its feature lists as TFDV computes them from tfx_bsl's SequenceExample decoder (under
    /// the `##SEQUENCE##` struct; see the `sequence` module). `place` names it in errors. On
    /// error nothing of the record has been counted.
    ///
    /// ```
    /// use tfrec::example::SequenceExample;
    /// use tfrec::stats::{StatsAccumulator, StatsOptions};
    ///
    /// let mut acc = StatsAccumulator::new(StatsOptions::default())?;
    /// let record = SequenceExample::builder().context_int64("id", 7).int64_list("clicks", [vec![1, 2], vec![3]]).build()?;
    /// acc.add_sequence_example(&record.encode(), None)?;
    /// let paths: Vec<String> = acc.finish().datasets[0].features.iter().map(|f| match &f.field_id {
    ///     Some(tfrec::stats::proto::feature_name_statistics::FieldId::Path(p)) => p.step.join("."),
    ///     _ => String::new(),
    /// }).collect();
    /// assert_eq!(paths, ["id", "##SEQUENCE##", "##SEQUENCE##.clicks"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_sequence_example(
        &mut self,
        record: &[u8],
        place: Option<&dyn Fn() -> RecordPlace>,
    ) -> Result<(), StatsError> {
        self.add_message(record, place, true)
    }

    /// Takes every string feature's distinct values and counts out (features, then feature
    /// lists), each with its key, leaving the rest. The figures made of them (top values,
    /// rank histogram, unique, invalid UTF-8) are the same whatever order the counts of
    /// several accumulators merge in, so they may merge apart from the rest, which merges in
    /// file order; [`StatsAccumulator::put_string_counts`] gives them back.
    pub(super) fn take_string_counts(&mut self) -> Vec<(StringsKey, StringCounts)> {
        let features = self
            .names
            .iter()
            .zip(&mut self.features)
            .map(|(name, f)| (false, name, f));
        let lists = self
            .feature_lists
            .lists
            .iter_mut()
            .map(|(name, l)| (true, name, &mut l.values));
        features
            .chain(lists)
            .filter_map(|(list, name, feature)| {
                let strings = feature.strings.as_mut()?;
                let key = StringsKey {
                    list,
                    name: name.clone(),
                };
                Some((key, std::mem::take(&mut strings.counts)))
            })
            .collect()
    }

    /// Adds string counts taken out of accumulators merged into this one
    /// ([`StatsAccumulator::take_string_counts`]) and merged elsewhere; counts of a feature
    /// this one does not have are dropped.
    pub(super) fn put_string_counts(&mut self, key: StringsKey, counts: StringCounts) {
        let feature = if key.list {
            self.feature_lists.lists.get_mut(&key.name).map(|l| &mut l.values)
        } else {
            self.positions.get(&key.name).map(|&i| &mut self.features[i])
        };
        if let Some(feature) = feature {
            feature
                .strings
                .get_or_insert_with(StringAcc::default)
                .counts
                .merge_owned(counts);
        }
    }

    /// Adds `other`'s examples (a shard's or a thread's partial statistics).
    pub fn merge(&mut self, other: &StatsAccumulator) -> Result<(), StatsError> {
        self.check_mergeable(other)?;
        for (name, theirs) in other.names.iter().zip(&other.features) {
            match self.positions.get(name) {
                Some(&i) => self.features[i].merge(name, theirs)?,
                None => {
                    let i = self.learn(name);
                    self.features[i] = theirs.clone();
                }
            }
        }
        self.feature_lists.merge(&other.feature_lists)?;
        self.num_examples += other.num_examples;
        Ok(())
    }

    /// [`StatsAccumulator::merge`], taking `other`'s figures instead of copying them: the same
    /// result, without a copy of every distinct string.
    pub fn merge_from(&mut self, other: StatsAccumulator) -> Result<(), StatsError> {
        self.check_mergeable(&other)?;
        self.feature_lists.merge(&other.feature_lists)?;
        self.num_examples += other.num_examples;
        for (name, theirs) in other.names.into_iter().zip(other.features) {
            match self.positions.get(&name) {
                Some(&i) => self.features[i].merge_owned(&name, theirs)?,
                None => {
                    let i = self.learn(&name);
                    self.features[i] = theirs;
                }
            }
        }
        Ok(())
    }

    /// Fails, changing nothing, when `other` was computed with other options or a feature's
    /// kind differs between the two.
    pub(super) fn check_mergeable(&self, other: &StatsAccumulator) -> Result<(), StatsError> {
        if self.options != other.options {
            return Err(StatsError::OptionsDiffer);
        }
        for (name, theirs) in other.names.iter().zip(&other.features) {
            if let Some(&i) = self.positions.get(name) {
                if let (Some(a), Some(b)) = (self.features[i].kind, theirs.kind) {
                    if a != b {
                        return Err(StatsError::KindChanged {
                            place: RecordPlace {
                                path: Default::default(),
                                offset: 0,
                                record_index: self.num_examples,
                            },
                            feature: String::from_utf8_lossy(name).into_owned(),
                            first: type_name(a),
                            second: type_name(b),
                        });
                    }
                }
            }
        }
        match self.feature_lists.kind_conflict(&other.feature_lists) {
            Some(conflict) => Err(conflict),
            None => Ok(()),
        }
    }

    /// The statistics, as TFDV's `generate_statistics_from_tfrecord` gives them with these
    /// options: one dataset, its features in name order.
    pub fn finish(&self) -> proto::DatasetFeatureStatisticsList {
        self.finish_on(1)
    }

    /// [`StatsAccumulator::finish`], the features' statistics made on `threads` threads (the
    /// same bytes): the last step, which no other overlaps, and on many distinct strings the
    /// longest one after counting.
    pub(super) fn finish_on(&self, threads: usize) -> proto::DatasetFeatureStatisticsList {
        let sorted: BTreeMap<&[u8], &FeatureAcc> = self.names.iter().map(|k| &k[..]).zip(&self.features).collect();
        let sorted: Vec<(&[u8], &FeatureAcc)> = sorted.into_iter().collect();
        let mut features = map_on_threads(&sorted, threads, |&(name, acc)| self.feature_stats(name, acc));
        features.extend(
            self.feature_lists
                .finish(self.num_examples, &self.options, threads, |name, acc| {
                    self.feature_stats(name, acc)
                }),
        );
        let mut dataset = proto::DatasetFeatureStatistics {
            num_examples: self.num_examples,
            features,
            ..Default::default()
        };
        if let Some(allowlist) = &self.options.feature_allowlist {
            keep_allowed(&mut dataset, allowlist);
        }
        proto::DatasetFeatureStatisticsList {
            datasets: vec![dataset],
        }
    }

    fn feature_stats(&self, name: &[u8], acc: &FeatureAcc) -> proto::FeatureNameStatistics {
        use proto::feature_name_statistics::{FieldId, Stats, Type};
        let common = self.common_stats(acc);
        let (r#type, stats) = match acc.kind {
            Some(Kind::Int64) | Some(Kind::Float) => {
                let t = if acc.kind == Some(Kind::Int64) {
                    Type::Int
                } else {
                    Type::Float
                };
                (t, Stats::NumStats(self.numeric_stats(acc, common)))
            }
            Some(Kind::Bytes) | None => (Type::String, Stats::StringStats(self.string_stats(acc, common))),
        };
        proto::FeatureNameStatistics {
            r#type: r#type as i32,
            field_id: Some(FieldId::Path(proto::Path {
                step: vec![String::from_utf8_lossy(name).into_owned()],
            })),
            stats: Some(stats),
            ..Default::default()
        }
    }

    fn common_stats(&self, acc: &FeatureAcc) -> proto::CommonStatistics {
        let mut common = proto::CommonStatistics {
            num_non_missing: acc.num_non_missing,
            num_missing: self.num_examples - acc.num_non_missing,
            tot_num_values: acc.total_num_values,
            ..Default::default()
        };
        if acc.num_non_missing > 0 {
            common.min_num_values = acc.min_num_values;
            common.max_num_values = acc.max_num_values;
            common.avg_num_values = (acc.total_num_values as f64 / acc.num_non_missing as f64) as f32;
            let mut sketch = QuantilesSketch::new(self.options.epsilon);
            for (n, c) in acc.values_per_example() {
                sketch.add_count(n as f64, c);
            }
            sketch.compact();
            let (bounds, cumulative) =
                sketch.quantiles_and_cumulative_weights(self.options.num_values_histogram_buckets);
            common.num_values_histogram = Some(quantiles_histogram(
                &histogram::quantiles_buckets(&bounds, &cumulative),
                0,
            ));
        }
        common
    }

    fn numeric_stats(&self, acc: &FeatureAcc, common: proto::CommonStatistics) -> proto::NumericStatistics {
        use proto::histogram::HistogramType;
        let mut stats = proto::NumericStatistics {
            common_stats: Some(common),
            ..Default::default()
        };
        let Some(numeric) = &acc.numeric else { return stats };
        let values = acc.total_num_values - numeric.num_nan;
        if values == 0 {
            if numeric.num_nan > 0 {
                for t in [HistogramType::Standard, HistogramType::Quantiles] {
                    stats.histograms.push(proto::Histogram {
                        num_nan: numeric.num_nan,
                        r#type: t as i32,
                        ..Default::default()
                    });
                }
            }
            return stats;
        }
        (stats.mean, stats.std_dev) = numeric.mean_var.mean_and_std_dev();
        stats.num_zeros = numeric.num_zeros;
        stats.min = numeric.min;
        stats.max = numeric.max;
        // TFDV compacts each sketch once before extracting (its combiner's `compact`).
        let mut sketch = numeric.sketch.clone();
        sketch.compact();
        let num_quantiles = STD_HISTOGRAM_QUANTILES_FACTOR * self.options.num_quantiles_histogram_buckets;
        let (bounds, cumulative) = sketch.quantiles_and_cumulative_weights(num_quantiles);
        stats.median = histogram::median(&bounds);
        let standard = histogram::equi_width_buckets(
            &bounds,
            &cumulative,
            numeric.finite_min,
            numeric.finite_max,
            self.options.num_histogram_buckets,
            numeric.pos_inf_count as f64,
        );
        let mut standard = quantiles_histogram(&standard, numeric.num_nan);
        standard.r#type = HistogramType::Standard as i32;
        stats.histograms.push(standard);
        let (bounds, cumulative) = histogram::rebin(&bounds, &cumulative, STD_HISTOGRAM_QUANTILES_FACTOR);
        stats.histograms.push(quantiles_histogram(
            &histogram::quantiles_buckets(&bounds, &cumulative),
            numeric.num_nan,
        ));
        stats
    }

    fn string_stats(&self, acc: &FeatureAcc, common: proto::CommonStatistics) -> proto::StringStatistics {
        use proto::rank_histogram::Bucket as RankBucket;
        use proto::string_statistics::FreqAndValue;
        let mut stats = proto::StringStatistics {
            common_stats: Some(common),
            ..Default::default()
        };
        let Some(strings) = &acc.strings else { return stats };
        if acc.total_num_values > 0 {
            stats.avg_length = (strings.total_bytes as f64 / acc.total_num_values as f64) as f32;
        }
        stats.invalid_utf8_count = strings.invalid_utf8();
        stats.unique = strings.counts.len() as u64;
        // TFDV's order: by count, then by the value's bytes, both descending.
        let keep = self.options.num_top_values.max(self.options.num_rank_histogram_buckets);
        let mut ranked: Vec<(&[u8], u64)> = strings.counts.iter().collect();
        let by_rank = |a: &(&[u8], u64), b: &(&[u8], u64)| b.1.cmp(&a.1).then_with(|| b.0.cmp(a.0));
        if ranked.len() > keep {
            ranked.select_nth_unstable_by(keep, by_rank);
            ranked.truncate(keep);
        }
        ranked.sort_unstable_by(by_rank);
        for (rank, (value, count)) in ranked.into_iter().enumerate() {
            let label = std::str::from_utf8(value).unwrap_or(NON_UTF8_PLACEHOLDER).to_owned();
            if rank < self.options.num_top_values {
                stats.top_values.push(FreqAndValue {
                    value: label.clone(),
                    frequency: count as f64,
                });
            }
            if rank < self.options.num_rank_histogram_buckets {
                let rank_histogram = stats.rank_histogram.get_or_insert_with(Default::default);
                rank_histogram.buckets.push(RankBucket {
                    low_rank: rank as u64,
                    high_rank: rank as u64,
                    label,
                    sample_count: count as f64,
                });
            }
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::Example;
    use proto::feature_name_statistics::{Stats, Type};

    fn feature<'a>(stats: &'a proto::DatasetFeatureStatisticsList, name: &str) -> &'a proto::FeatureNameStatistics {
        let found = stats.datasets[0].features.iter().find(
            |f| matches!(&f.field_id, Some(proto::feature_name_statistics::FieldId::Path(p)) if p.step == [name]),
        );
        found.expect("feature present")
    }

    fn records() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for i in 0..40i64 {
            let mut b = Example::builder()
                .int64("i", [i, i * i % 7])
                .float("f", [i as f32 / 3.0]);
            if i % 3 == 0 {
                b = b.bytes("s", [format!("w{}", i % 5)]);
            }
            out.push(b.build().unwrap().encode());
        }
        out
    }

    #[test]
    fn shards_merge_to_the_single_pass_figures() {
        let mut whole = StatsAccumulator::new(StatsOptions::default()).unwrap();
        let mut parts = [whole.clone(), whole.clone(), whole.clone()];
        for (n, r) in records().iter().enumerate() {
            whole.add_example(r, None).unwrap();
            parts[n % 3].add_example(r, None).unwrap();
        }
        let [mut a, b, c] = parts;
        a.merge(&b).unwrap();
        a.merge(&c).unwrap();
        // Below a block, the sketches are exact: everything equal but rounding in the mean.
        let (x, y) = (whole.finish(), a.finish());
        for name in ["i", "f", "s"] {
            let (fx, fy) = (feature(&x, name), feature(&y, name));
            match (&fx.stats, &fy.stats) {
                (Some(Stats::NumStats(p)), Some(Stats::NumStats(q))) => {
                    assert!((p.mean - q.mean).abs() <= 1e-12 * p.mean.abs().max(1.0));
                    assert!((p.std_dev - q.std_dev).abs() <= 1e-12 * p.std_dev.max(1.0));
                    assert_eq!(
                        (&p.common_stats, &p.histograms, p.median),
                        (&q.common_stats, &q.histograms, q.median)
                    );
                }
                (s, t) => assert_eq!(s, t),
            }
        }
    }

    #[test]
    fn a_kind_change_names_the_feature_and_counts_nothing_of_the_record() {
        let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
        acc.add_example(&Example::builder().int64("k", 1).build().unwrap().encode(), None)
            .unwrap();
        let bad = Example::builder()
            .int64("other", 5)
            .float("k", 1.5)
            .build()
            .unwrap()
            .encode();
        let err = acc.add_example(&bad, None).unwrap_err();
        assert!(
            err.to_string().contains("\"k\"") && err.to_string().contains("INT and FLOAT"),
            "{err}"
        );
        assert_eq!(acc.num_examples(), 1);
        assert_eq!(feature(&acc.finish(), "k").r#type, Type::Int as i32);
    }

    #[test]
    fn kindless_features_are_missing_strings_and_empty_lists_are_present() {
        let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
        let record = Example::builder()
            .feature("none", crate::example::Feature::None)
            .int64("empty", Vec::<i64>::new());
        acc.add_example(&record.build().unwrap().encode(), None).unwrap();
        let stats = acc.finish();
        let none = feature(&stats, "none");
        assert_eq!(none.r#type, Type::String as i32);
        let Some(Stats::StringStats(s)) = &none.stats else {
            panic!("string stats")
        };
        assert_eq!(
            s.common_stats.as_ref().map(|c| (c.num_missing, c.num_non_missing)),
            Some((1, 0))
        );
        let Some(Stats::NumStats(n)) = &feature(&stats, "empty").stats else {
            panic!("num stats")
        };
        assert_eq!(
            n.common_stats.as_ref().map(|c| (c.num_non_missing, c.tot_num_values)),
            Some((1, 0))
        );
        assert!(n.histograms.is_empty());
    }

    #[test]
    fn text_round_trips() {
        let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
        for r in records() {
            acc.add_example(&r, None).unwrap();
        }
        let stats = acc.finish();
        let text = crate::stats::statistics_to_text(&stats).unwrap();
        assert!(text.starts_with("datasets {\n  num_examples: 40\n"), "{text}");
        assert_eq!(crate::stats::statistics_from_text(&text).unwrap(), stats);
    }
}

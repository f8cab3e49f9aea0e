//! The feature lists of `SequenceExample`s, as TFDV 1.16.1 computes them from tfx_bsl's
//! SequenceExample decoder (`TFSequenceExampleRecord` with no schema), the context features
//! being counted as an `Example`'s features.
//!
//! The decoder puts the feature lists in a struct column, `##SEQUENCE##`, with one child per
//! feature-list key, each a list of lists (steps, then values). TFDV's basic statistics
//! generator then gives (`basic_stats_generator.py`):
//! - `##SEQUENCE##`: a `STRUCT` present in every example with one value, when any record of
//!   the data set has a feature-list key (no feature at all otherwise);
//! - `##SEQUENCE##.<key>`: the type of its values; `num_non_missing` the examples that have
//!   the key (an empty list counts); `min/max/avg/tot_num_values` and `num_values_histogram`
//!   counted over the values of all steps of an example; `presence_and_valency_stats` per
//!   level: steps per example, then values per step (a step with no kind set is a missing
//!   inner list: it counts in the steps, not as a present step); the value figures (numeric or
//!   string statistics) over all values;
//! - custom statistics `level_2_value_list_length_quantiles` and `_standard`: histograms of the
//!   values per step, with `num_values_histogram_buckets` buckets, once the type is known.
//!
//! A feature list whose steps hold two kinds, in one record or across records, is refused, as
//! the decoder refuses it. tfrec takes the whole data set as one batch; TFDV decodes batch by
//! batch, and a batch where no record has a feature-list key has no `##SEQUENCE##` column, so
//! TFDV's `##SEQUENCE##` count and the children's `num_missing` can be lower than tfrec's when
//! its batches split such records apart (not when every batch has a feature list).

use rustc_hash::FxHashMap;

use super::error::{type_name, RecordPlace, StatsError};
use super::histogram::{self, quantiles_histogram};
use super::lengths::LengthCounts;
use super::options::StatsOptions;
use super::parallel::map_on_threads;
use super::proto;
use super::quantiles::QuantilesSketch;
use crate::example::{FeatureView, Kind, SequenceExampleView};
use crate::wire::{DecodeError, DecodeErrorKind, WireReader, WireType};

/// The struct feature the decoder puts the feature lists in (tfx_bsl's
/// `_SEQUENCE_COLUMN_NAME`).
pub const SEQUENCE_FEATURE: &str = "##SEQUENCE##";

/// Values of one kind decoded from a record, in order.
#[derive(Clone, Copy)]
pub(super) enum DecodedValues<'r> {
    Int64(&'r [i64]),
    Float(&'r [f32]),
    /// Each value is `record[from..to]`.
    Bytes {
        record: &'r [u8],
        ranges: &'r [(usize, usize)],
    },
}

/// What a feature list's values are counted with: the accumulator of a plain feature's
/// figures (`accumulate`'s), which also builds the feature's statistics at the end.
pub(super) trait ValuesAcc: Clone + std::fmt::Debug {
    /// An empty accumulator.
    fn empty() -> Self;
    /// The kind its values have, once one was seen.
    fn kind(&self) -> Option<Kind>;
    /// Adds the values of `feature` (of `kind`) and gives their count.
    fn add_values(&mut self, kind: Kind, feature: &FeatureView<'_>, eps: f64) -> Result<u64, DecodeError>;
    /// Adds values already decoded (of `kind`, even when there are none).
    fn add_decoded(&mut self, kind: Kind, values: DecodedValues<'_>, eps: f64);
    /// Counts `examples` examples where the feature is present with `count` values each.
    fn count_examples(&mut self, count: u64, examples: u64);
    /// Adds `other`'s figures (`name` for errors).
    fn merge(&mut self, name: &[u8], other: &Self) -> Result<(), StatsError>;
}

/// One nesting level's presence and valency (TFDV's `_PresenceAndValencyStats`).
#[derive(Debug, Clone)]
pub(super) struct Level {
    /// Lists present at this level (not null).
    pub(super) num_non_missing: u64,
    /// Fewest values in a present list (`u64::MAX` until one is counted).
    pub(super) min_num_values: u64,
    pub(super) max_num_values: u64,
    pub(super) total_num_values: u64,
    /// Present lists by their number of values, exact.
    pub(super) counts: LengthCounts,
}

impl Default for Level {
    fn default() -> Self {
        Level {
            num_non_missing: 0,
            min_num_values: u64::MAX,
            max_num_values: 0,
            total_num_values: 0,
            counts: LengthCounts::default(),
        }
    }
}

impl Level {
    fn add(&mut self, n: u64) {
        self.num_non_missing += 1;
        self.min_num_values = self.min_num_values.min(n);
        self.max_num_values = self.max_num_values.max(n);
        self.total_num_values += n;
        self.counts.add(n, 1);
    }

    fn merge(&mut self, other: &Level) {
        self.num_non_missing += other.num_non_missing;
        self.min_num_values = self.min_num_values.min(other.min_num_values);
        self.max_num_values = self.max_num_values.max(other.max_num_values);
        self.total_num_values += other.total_num_values;
        self.counts.merge(&other.counts);
    }

    /// The proto of this level; `parent_total` is the number of lists the level above holds
    /// (for the outer level, the examples).
    fn proto(&self, parent_total: u64) -> proto::PresenceAndValencyStatistics {
        let mut out = proto::PresenceAndValencyStatistics {
            num_non_missing: self.num_non_missing,
            num_missing: parent_total.saturating_sub(self.num_non_missing),
            ..Default::default()
        };
        if self.num_non_missing > 0 {
            out.min_num_values = self.min_num_values;
            out.max_num_values = self.max_num_values;
            out.tot_num_values = self.total_num_values;
        }
        out
    }

    /// The sketch of the counts, as TFDV's compacted `num_values_summary`.
    fn sketch(&self, eps: f64) -> QuantilesSketch {
        let mut sketch = QuantilesSketch::new(eps);
        for (n, c) in self.counts.sorted() {
            sketch.add_count(n as f64, c);
        }
        sketch.compact();
        sketch
    }
}

/// One feature list's partial statistics.
#[derive(Debug, Clone)]
pub(super) struct FeatureListAcc<V> {
    /// The values of every step, and per example the number of values over its steps
    /// (TFDV's figures for the whole feature: innermost values per example).
    pub(super) values: V,
    /// Steps per example that has the key (level 1).
    pub(super) steps: Level,
    /// Values per step that has a kind (level 2).
    pub(super) step_values: Level,
}

impl<V: ValuesAcc> FeatureListAcc<V> {
    fn new() -> Self {
        FeatureListAcc {
            values: V::empty(),
            steps: Level::default(),
            step_values: Level::default(),
        }
    }
}

/// The feature lists of the SequenceExamples counted so far, by key (empty for Examples).
#[derive(Debug, Clone)]
pub(super) struct FeatureListsAcc<V> {
    pub(super) lists: FxHashMap<Box<[u8]>, FeatureListAcc<V>>,
    /// The feature lists of the record being read (kept to spare allocations).
    scratch: ListsScratch,
}

impl<V> Default for FeatureListsAcc<V> {
    fn default() -> Self {
        FeatureListsAcc {
            lists: FxHashMap::default(),
            scratch: ListsScratch::default(),
        }
    }
}

/// A record's feature lists, each decoded once ([`FeatureListsAcc::read`]) before any is
/// counted ([`FeatureListsAcc::count`]), so that an error leaves the figures whole.
#[derive(Debug, Clone, Default)]
struct ListsScratch {
    /// The record's feature-list entries in wire order.
    lists: Vec<PendingList>,
    /// Every entry's steps, one run per entry: a step's number of values, `None` for a step
    /// with no kind set. Empty for a streamed record, whose steps are walked again instead.
    steps: Vec<Option<u64>>,
    /// The int64 and float values of the entries, one run per entry (empty when streamed).
    ints: Vec<i64>,
    floats: Vec<f32>,
    /// The bytes values of the entries, as ranges of the record (empty when streamed).
    strings: Vec<(usize, usize)>,
    /// Indices into `lists`, by key, the last entry of a key first.
    by_key: Vec<usize>,
}

/// One feature-list entry of the record being read.
#[derive(Debug, Clone)]
struct PendingList {
    /// Where its key is in the record.
    key: std::ops::Range<usize>,
    /// The kind of its first step that has one (`None` when no step has one).
    kind: Option<Kind>,
    /// The first kind and the first other kind its steps hold, when they hold two.
    mixed: Option<(Kind, Kind)>,
    /// Its run of `steps`.
    steps: std::ops::Range<usize>,
    /// Its run of `ints`, `floats` or `strings`, by `kind` (meaningless when `mixed`).
    values: std::ops::Range<usize>,
    /// A later entry of the same key replaced it (the last one counts, as in decoding).
    replaced: bool,
}

/// A feature list whose kind is not the kind it had, or whose steps hold two kinds.
pub(super) struct ListKindChange {
    /// The list's name as it shows in the statistics.
    pub(super) feature: String,
    pub(super) first: Kind,
    pub(super) second: Kind,
}

/// Whether a record has a `feature_lists` field (field 2) at its top level, read no further
/// than its tags: what [`RecordMessage::Detect`](super::RecordMessage::Detect) looks at. A
/// record that is not valid wire format says no; reading it as an `Example` reports why.
pub(super) fn has_feature_lists(record: &[u8]) -> bool {
    let mut r = WireReader::new(record);
    while !r.is_empty() {
        match r.read_tag() {
            Ok((2, WireType::Len)) => return true,
            Ok((field, wt)) => {
                if r.skip(field, wt).is_err() {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
    false
}

/// The path-like name of a feature list in errors, as it shows in the statistics.
fn list_name(key: &[u8]) -> String {
    format!("{SEQUENCE_FEATURE}.{}", String::from_utf8_lossy(key))
}

impl<V: ValuesAcc> FeatureListsAcc<V> {
    /// Decodes the feature lists of `record` (a `SequenceExample`) into the scratch, each
    /// value once, checking all that decoding checks: nothing is counted. `validate` checks
    /// the whole record as decoding does; its error is the one given for a record that does
    /// not decode. A `streamed` record's values are walked but not kept: [`Self::count`] walks
    /// them again.
    pub(super) fn read(
        &mut self,
        record: &[u8],
        streamed: bool,
        validate: &dyn Fn() -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let refused = |fallback: DecodeError| validate().err().unwrap_or(fallback);
        let s = &mut self.scratch;
        s.lists.clear();
        s.steps.clear();
        s.ints.clear();
        s.floats.clear();
        s.strings.clear();
        let base = record.as_ptr() as usize;
        // Whether every byte `validate` checks is seen by the walk below.
        let mut whole = true;
        let mut entries = SequenceExampleView::new(record).feature_lists();
        while let Some((key, list, plain)) = entries.next_list().map_err(refused)? {
            whole &= plain;
            if std::str::from_utf8(key).is_err() {
                // Decoding refuses a key that is not UTF-8.
                return Err(refused(DecodeError {
                    offset: 0,
                    kind: DecodeErrorKind::InvalidUtf8,
                }));
            }
            let starts = (s.steps.len(), s.ints.len(), s.floats.len(), s.strings.len());
            let (mut kind, mut mixed) = (None, None);
            let mut rows = list.rows();
            while let Some((step, one_list)) = rows.next_step().map_err(refused)? {
                whole &= one_list;
                let Some(step_kind) = step.kind() else {
                    if !streamed {
                        s.steps.push(None);
                    }
                    continue;
                };
                match kind {
                    None => kind = Some(step_kind),
                    Some(first) if first != step_kind && mixed.is_none() => mixed = Some((first, step_kind)),
                    Some(_) => {}
                }
                let count = match step_kind {
                    Kind::Int64 if streamed => step.for_each_int64(|_| ()),
                    Kind::Float if streamed => step.for_each_float(|_| ()),
                    Kind::Bytes if streamed => step.for_each_bytes(|_| ()),
                    Kind::Int64 => step.extend_int64s(&mut s.ints),
                    Kind::Float => step.extend_floats(&mut s.floats),
                    Kind::Bytes => {
                        let strings = &mut s.strings;
                        // Each value is a slice of `record`: kept as its range.
                        step.for_each_bytes(|v| {
                            let from = v.as_ptr() as usize - base;
                            strings.push((from, from + v.len()));
                        })
                    }
                }
                .map_err(refused)?;
                if !streamed {
                    s.steps.push(Some(count as u64));
                }
            }
            let values = match kind {
                None => 0..0,
                Some(Kind::Int64) => starts.1..s.ints.len(),
                Some(Kind::Float) => starts.2..s.floats.len(),
                Some(Kind::Bytes) => starts.3..s.strings.len(),
            };
            // A key is a slice of `record`, or empty (an entry with no key field).
            let key_at = if key.is_empty() {
                0
            } else {
                key.as_ptr() as usize - base
            };
            s.lists.push(PendingList {
                key: key_at..key_at + key.len(),
                kind,
                mixed,
                steps: starts.0..s.steps.len(),
                values,
                replaced: false,
            });
        }
        if !whole {
            // Some bytes were not walked (an earlier key of an entry, a list a later kind
            // replaced): check the record as a whole.
            validate()?;
        }
        // The last entry of a key wins: by key, the last of a key first, the others replaced.
        let lists = &mut s.lists;
        s.by_key.clear();
        s.by_key.extend(0..lists.len());
        s.by_key.sort_unstable_by(|&a, &b| {
            record[lists[a].key.clone()]
                .cmp(&record[lists[b].key.clone()])
                .then(b.cmp(&a))
        });
        for pair in s.by_key.windows(2) {
            if record[lists[pair[0]].key.clone()] == record[lists[pair[1]].key.clone()] {
                lists[pair[1]].replaced = true;
            }
        }
        Ok(())
    }

    /// Fails when a list [`Self::read`] decoded holds two kinds, or a kind other than the one
    /// the list had: the first such list by key.
    pub(super) fn check_kinds(&self, record: &[u8]) -> Result<(), ListKindChange> {
        let s = &self.scratch;
        for list in s.by_key.iter().map(|&i| &s.lists[i]).filter(|l| !l.replaced) {
            let key = &record[list.key.clone()];
            let change = match (list.mixed, list.kind) {
                (Some(mixed), _) => Some(mixed),
                (None, Some(now)) => match self.lists.get(key).and_then(|acc| acc.values.kind()) {
                    Some(first) if first != now => Some((first, now)),
                    _ => None,
                },
                (None, None) => None,
            };
            if let Some((first, second)) = change {
                return Err(ListKindChange {
                    feature: list_name(key),
                    first,
                    second,
                });
            }
        }
        Ok(())
    }

    /// Counts the feature lists [`Self::read`] decoded from `record` (read with the same
    /// `streamed`), checked by [`Self::check_kinds`].
    pub(super) fn count(&mut self, record: &[u8], streamed: bool, eps: f64) {
        let scratch = std::mem::take(&mut self.scratch);
        if streamed {
            self.count_streamed(record, &scratch, eps);
        } else {
            for list in scratch.lists.iter().filter(|l| !l.replaced) {
                let key = &record[list.key.clone()];
                let acc = match self.lists.get_mut(key) {
                    Some(acc) => acc,
                    None => self.lists.entry(key.into()).or_insert_with(FeatureListAcc::new),
                };
                let steps = &scratch.steps[list.steps.clone()];
                let mut example_values = 0;
                // Every step with a kind has the list's kind (checked).
                if let Some(kind) = list.kind {
                    for &count in steps.iter().flatten() {
                        acc.step_values.add(count);
                        example_values += count;
                    }
                    let values = match kind {
                        Kind::Int64 => DecodedValues::Int64(&scratch.ints[list.values.clone()]),
                        Kind::Float => DecodedValues::Float(&scratch.floats[list.values.clone()]),
                        Kind::Bytes => DecodedValues::Bytes {
                            record,
                            ranges: &scratch.strings[list.values.clone()],
                        },
                    };
                    acc.values.add_decoded(kind, values, eps);
                }
                acc.steps.add(steps.len() as u64);
                acc.values.count_examples(example_values, 1);
            }
        }
        self.scratch = scratch;
    }

    /// [`Self::count`] of a streamed record: its feature lists walked again, met in the order
    /// the scratch lists them, without error, since the same bytes decoded once.
    fn count_streamed(&mut self, record: &[u8], scratch: &ListsScratch, eps: f64) {
        let mut entries = SequenceExampleView::new(record).feature_lists();
        for list in &scratch.lists {
            let Ok(Some((_, view, _))) = entries.next_list() else {
                break;
            };
            if list.replaced {
                continue;
            }
            let key = &record[list.key.clone()];
            let acc = match self.lists.get_mut(key) {
                Some(acc) => acc,
                None => self.lists.entry(key.into()).or_insert_with(FeatureListAcc::new),
            };
            let (mut steps, mut example_values) = (0, 0);
            let mut rows = view.rows();
            while let Ok(Some((step, _))) = rows.next_step() {
                steps += 1;
                // Every step with a kind has the list's kind (checked).
                let Some(kind) = step.kind() else { continue };
                if let Ok(count) = acc.values.add_values(kind, &step, eps) {
                    acc.step_values.add(count);
                    example_values += count;
                }
            }
            acc.steps.add(steps);
            acc.values.count_examples(example_values, 1);
        }
    }

    /// Adds `other`'s feature lists.
    pub(super) fn merge(&mut self, other: &FeatureListsAcc<V>) -> Result<(), StatsError> {
        for (key, theirs) in &other.lists {
            match self.lists.get_mut(key) {
                Some(ours) => {
                    ours.values.merge(list_name(key).as_bytes(), &theirs.values)?;
                    ours.steps.merge(&theirs.steps);
                    ours.step_values.merge(&theirs.step_values);
                }
                None => {
                    self.lists.insert(key.clone(), theirs.clone());
                }
            }
        }
        Ok(())
    }

    /// Whether two partial results disagree on a list's kind (checked before merging).
    pub(super) fn kind_conflict(&self, other: &FeatureListsAcc<V>) -> Option<StatsError> {
        other.lists.iter().find_map(|(key, theirs)| {
            let ours = self.lists.get(key)?;
            match (ours.values.kind(), theirs.values.kind()) {
                (Some(a), Some(b)) if a != b => Some(kind_changed(
                    &|| RecordPlace {
                        path: Default::default(),
                        offset: 0,
                        record_index: 0,
                    },
                    key,
                    a,
                    b,
                )),
                _ => None,
            }
        })
    }

    /// The `##SEQUENCE##` struct and its children, in key order, of `num_examples` examples;
    /// nothing when no record had a feature-list key. `feature_stats` gives a plain feature's
    /// statistics (path, type, common, numeric or string figures) of its accumulator.
    pub(super) fn finish(
        &self,
        num_examples: u64,
        options: &StatsOptions,
        threads: usize,
        feature_stats: impl Fn(&[u8], &V) -> proto::FeatureNameStatistics + Sync,
    ) -> Vec<proto::FeatureNameStatistics>
    where
        V: Sync,
    {
        use proto::feature_name_statistics::{FieldId, Stats, Type};
        if self.lists.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(self.lists.len() + 1);
        let mut sequence = V::empty();
        sequence.count_examples(1, num_examples);
        let mut parent = feature_stats(SEQUENCE_FEATURE.as_bytes(), &sequence);
        let common = match parent.stats.take() {
            Some(Stats::StringStats(s)) => s.common_stats,
            _ => None,
        };
        parent.r#type = Type::Struct as i32;
        parent.stats = Some(Stats::StructStats(proto::StructStatistics { common_stats: common }));
        out.push(parent);
        let mut lists: Vec<(&Box<[u8]>, &FeatureListAcc<V>)> = self.lists.iter().collect();
        lists.sort_unstable_by_key(|&(key, _)| key);
        out.extend(map_on_threads(&lists, threads, |&(key, acc)| {
            let mut feature = feature_stats(key, &acc.values);
            feature.field_id = Some(FieldId::Path(proto::Path {
                step: vec![SEQUENCE_FEATURE.to_owned(), String::from_utf8_lossy(key).into_owned()],
            }));
            let levels = [
                acc.steps.proto(num_examples),
                acc.step_values.proto(acc.steps.total_num_values),
            ];
            let common = match &mut feature.stats {
                Some(Stats::NumStats(s)) => s.common_stats.as_mut(),
                Some(Stats::StringStats(s)) => s.common_stats.as_mut(),
                _ => None,
            };
            if let Some(common) = common {
                common.presence_and_valency_stats.extend(levels);
            }
            if acc.values.kind().is_some() {
                feature.custom_stats.extend(step_length_histograms(
                    &acc.step_values,
                    options.epsilon,
                    options.num_values_histogram_buckets,
                ));
            }
            feature
        }));
        out
    }
}

/// TFDV's `level_2_value_list_length_quantiles` and `_standard` custom statistics.
fn step_length_histograms(level: &Level, eps: f64, buckets: usize) -> [proto::CustomStatistic; 2] {
    use proto::custom_statistic::Val;
    use proto::histogram::HistogramType;
    let (bounds, cumulative) = level.sketch(eps).quantiles_and_cumulative_weights(buckets);
    let quantiles = quantiles_histogram(&histogram::quantiles_buckets(&bounds, &cumulative), 0);
    let (low, high) = if level.num_non_missing > 0 {
        (level.min_num_values as f64, level.max_num_values as f64)
    } else {
        (0.0, 0.0)
    };
    let mut standard = quantiles_histogram(
        &histogram::equi_width_buckets(&bounds, &cumulative, low, high, buckets, 0.0),
        0,
    );
    standard.r#type = HistogramType::Standard as i32;
    [
        proto::CustomStatistic {
            name: "level_2_value_list_length_quantiles".to_owned(),
            val: Some(Val::Histogram(quantiles)),
        },
        proto::CustomStatistic {
            name: "level_2_value_list_length_standard".to_owned(),
            val: Some(Val::Histogram(standard)),
        },
    ]
}

fn kind_changed(place: &dyn Fn() -> RecordPlace, key: &[u8], first: Kind, second: Kind) -> StatsError {
    StatsError::KindChanged {
        place: place(),
        feature: list_name(key),
        first: type_name(first),
        second: type_name(second),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::{Example, Feature, SequenceExample};
    use crate::stats::{RecordMessage, StatsAccumulator};
    use proto::feature_name_statistics::{FieldId, Stats, Type};

    fn find<'a>(stats: &'a proto::DatasetFeatureStatisticsList, path: &[&str]) -> &'a proto::FeatureNameStatistics {
        let found = stats.datasets[0]
            .features
            .iter()
            .find(|f| matches!(&f.field_id, Some(FieldId::Path(p)) if p.step == path));
        found.expect("feature present")
    }

    fn common(feature: &proto::FeatureNameStatistics) -> &proto::CommonStatistics {
        let common = match &feature.stats {
            Some(Stats::NumStats(s)) => s.common_stats.as_ref(),
            Some(Stats::StringStats(s)) => s.common_stats.as_ref(),
            Some(Stats::StructStats(s)) => s.common_stats.as_ref(),
            _ => None,
        };
        common.expect("common stats")
    }

    fn level(non_missing: u64, missing: u64, min: u64, max: u64, total: u64) -> proto::PresenceAndValencyStatistics {
        proto::PresenceAndValencyStatistics {
            num_non_missing: non_missing,
            num_missing: missing,
            min_num_values: min,
            max_num_values: max,
            tot_num_values: total,
        }
    }

    /// Four records: `f` missing in one, empty in one, steps of 0-2 values with a step of no
    /// kind; `none` has only a step of no kind.
    fn records() -> Vec<Vec<u8>> {
        let steps = |values: &[&[f32]]| values.iter().map(|v| Feature::Float(v.to_vec())).collect::<Vec<_>>();
        let mut with_none = steps(&[&[1.0], &[]]);
        with_none.push(Feature::None);
        let seqs = [
            SequenceExample::builder()
                .context_int64("id", 0)
                .feature_list("f", steps(&[])),
            SequenceExample::builder().context_int64("id", 1),
            SequenceExample::builder()
                .context_int64("id", 2)
                .feature_list("f", with_none)
                .feature_list("none", [Feature::None]),
            SequenceExample::builder()
                .context_int64("id", 3)
                .feature_list("f", steps(&[&[2.0, 2.0], &[f32::NAN]])),
        ];
        seqs.into_iter().map(|s| s.build().unwrap().encode()).collect()
    }

    fn statistics(records: &[Vec<u8>]) -> proto::DatasetFeatureStatisticsList {
        let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
        for r in records {
            acc.add_sequence_example(r, None).unwrap();
        }
        acc.finish()
    }

    #[test]
    fn feature_lists_are_nested_features_of_the_sequence_struct() {
        let stats = statistics(&records());
        let paths: Vec<Vec<String>> = stats.datasets[0]
            .features
            .iter()
            .map(|f| match &f.field_id {
                Some(FieldId::Path(p)) => p.step.clone(),
                _ => Vec::new(),
            })
            .collect();
        let seq = SEQUENCE_FEATURE.to_owned();
        assert_eq!(
            paths,
            [
                vec!["id".to_owned()],
                vec![seq.clone()],
                vec![seq.clone(), "f".to_owned()],
                vec![seq, "none".to_owned()]
            ]
        );
        let sequence = find(&stats, &[SEQUENCE_FEATURE]);
        assert_eq!(sequence.r#type, Type::Struct as i32);
        let c = common(sequence);
        assert_eq!(
            (c.num_non_missing, c.min_num_values, c.max_num_values, c.tot_num_values),
            (4, 1, 1, 4)
        );

        let f = find(&stats, &[SEQUENCE_FEATURE, "f"]);
        assert_eq!(f.r#type, Type::Float as i32);
        let c = common(f);
        // Examples with the list: 3 (one empty); values over their steps: 0, 1, 3.
        assert_eq!(
            (
                c.num_non_missing,
                c.num_missing,
                c.min_num_values,
                c.max_num_values,
                c.tot_num_values
            ),
            (3, 1, 0, 3, 4)
        );
        // Steps per example 0, 3, 2; values per step with a kind 1, 0, 2, 1 (the step of no
        // kind is a missing inner list).
        assert_eq!(
            c.presence_and_valency_stats,
            [level(3, 1, 0, 3, 5), level(4, 1, 0, 2, 4)]
        );
        let Some(Stats::NumStats(n)) = &f.stats else {
            panic!("numeric")
        };
        assert_eq!((n.min, n.max, n.num_zeros), (1.0, 2.0, 0));
        assert_eq!(n.histograms[0].num_nan, 1);
        let names: Vec<&str> = f.custom_stats.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "level_2_value_list_length_quantiles",
                "level_2_value_list_length_standard"
            ]
        );

        let none = find(&stats, &[SEQUENCE_FEATURE, "none"]);
        assert_eq!(none.r#type, Type::String as i32);
        assert_eq!(
            common(none).presence_and_valency_stats,
            [level(1, 3, 1, 1, 1), level(0, 1, 0, 0, 0)]
        );
        assert!(none.custom_stats.is_empty());
    }

    #[test]
    fn shards_merge_to_the_single_pass_figures() {
        let records = records();
        let mut parts = [
            StatsAccumulator::new(StatsOptions::default()).unwrap(),
            StatsAccumulator::new(StatsOptions::default()).unwrap(),
        ];
        for (i, r) in records.iter().enumerate() {
            parts[i % 2].add_sequence_example(r, None).unwrap();
        }
        let [mut a, b] = parts;
        a.merge(&b).unwrap();
        assert_eq!(a.finish(), statistics(&records));
    }

    #[test]
    fn a_list_whose_kind_changes_is_refused_and_nothing_of_the_record_counts() {
        let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
        let first = SequenceExample::builder()
            .int64_list("x", [vec![1i64]])
            .build()
            .unwrap();
        acc.add_sequence_example(&first.encode(), None).unwrap();
        let across = SequenceExample::builder()
            .context_int64("c", 1)
            .bytes_list("x", [vec!["a"]])
            .build()
            .unwrap();
        let err = acc.add_sequence_example(&across.encode(), None).unwrap_err();
        assert!(
            err.to_string().contains("\"##SEQUENCE##.x\"") && err.to_string().contains("record 1"),
            "{err}"
        );
        let within = SequenceExample::builder()
            .feature_list("y", [Feature::Int64(vec![1]), Feature::Float(vec![1.0])])
            .build()
            .unwrap();
        let err = acc.add_sequence_example(&within.encode(), None).unwrap_err();
        assert!(err.to_string().contains("INT and FLOAT"), "{err}");
        assert_eq!(acc.num_examples(), 1);
        let stats = acc.finish();
        assert_eq!(stats.datasets[0].features.len(), 2, "no `c` nor `y` counted");

        let mut other = StatsAccumulator::new(StatsOptions::default()).unwrap();
        other
            .add_sequence_example(
                &SequenceExample::builder()
                    .float_list("x", [[1.0f32]])
                    .build()
                    .unwrap()
                    .encode(),
                None,
            )
            .unwrap();
        assert!(matches!(acc.merge(&other), Err(StatsError::KindChanged { .. })));
        assert_eq!(acc.num_examples(), 1);
    }

    #[test]
    fn without_feature_lists_there_is_no_sequence_struct_and_detection_reads_examples_as_examples() {
        let example = Example::builder()
            .int64("a", [1, 2])
            .bytes("b", "x")
            .build()
            .unwrap()
            .encode();
        let as_example = {
            let mut acc = StatsAccumulator::new(StatsOptions::default().message(RecordMessage::Example)).unwrap();
            acc.add_record(&example, None).unwrap();
            acc.finish()
        };
        for message in [RecordMessage::Detect, RecordMessage::SequenceExample] {
            let mut acc = StatsAccumulator::new(StatsOptions::default().message(message)).unwrap();
            acc.add_record(&example, None).unwrap();
            let mut stats = acc.finish();
            assert_eq!(stats, as_example, "{message:?}");
            // Detection reads a record with feature lists as a SequenceExample.
            let mut acc = StatsAccumulator::new(StatsOptions::default().message(message)).unwrap();
            acc.add_record(&records()[0], None).unwrap();
            stats = acc.finish();
            assert_eq!(stats.datasets[0].features.len(), 3, "{message:?}");
        }
    }

    /// The features under `##SEQUENCE##` of the statistics of `records`.
    fn list_statistics(records: &[Vec<u8>]) -> Vec<proto::FeatureNameStatistics> {
        let stats = statistics(records);
        let lists = stats.datasets[0]
            .features
            .iter()
            .filter(|f| matches!(&f.field_id, Some(FieldId::Path(p)) if p.step[0] == SEQUENCE_FEATURE));
        lists.cloned().collect()
    }

    /// A length-delimited field: its tag, length and bytes.
    fn field(number: u32, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        crate::wire::put_tag(&mut out, number, WireType::Len);
        crate::wire::put_varint(&mut out, bytes.len() as u64);
        out.extend_from_slice(bytes);
        out
    }

    /// A SequenceExample of one feature list `key` whose steps are the `Feature` bytes given.
    fn one_list_record(key: &str, steps: &[Vec<u8>]) -> Vec<u8> {
        let list: Vec<u8> = steps.iter().flat_map(|step| field(1, step)).collect();
        let entry = [field(1, key.as_bytes()), field(2, &list)].concat();
        field(2, &field(1, &entry))
    }

    #[test]
    fn the_last_entry_of_a_key_counts_and_a_replaced_one_needs_only_decode() {
        let mixed = SequenceExample::builder()
            .feature_list("x", [Feature::Int64(vec![1]), Feature::Float(vec![1.0])])
            .build()
            .unwrap()
            .encode();
        let last = SequenceExample::builder()
            .context_int64("c", 1)
            .float_list("x", [vec![2.0f32, 3.0], vec![4.0]])
            .build()
            .unwrap()
            .encode();
        // Concatenated messages merge: the later entry of `x` replaces the earlier.
        let merged = [mixed.clone(), last.clone()].concat();
        assert_eq!(statistics(&[merged]), statistics(std::slice::from_ref(&last)));
        let err = statistics_error(&[[last, mixed].concat()]);
        assert!(err.contains("INT and FLOAT"), "{err}");
    }

    fn statistics_error(records: &[Vec<u8>]) -> String {
        let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
        let errors = records.iter().filter_map(|r| acc.add_sequence_example(r, None).err());
        errors.map(|e| e.to_string()).next().unwrap_or_default()
    }

    #[test]
    fn a_step_of_two_lists_counts_its_last_kind_and_its_replaced_list_must_decode() {
        let ints = |list: &[u8]| field(3, &field(1, list));
        let floats = field(2, &field(1, &2.5f32.to_le_bytes()));
        let two_kinds = one_list_record("x", &[[ints(&[1]), floats.clone()].concat()]);
        let plain = one_list_record("x", std::slice::from_ref(&floats));
        assert_eq!(statistics(&[two_kinds]), statistics(&[plain]));
        // The replaced int64 list ends inside a varint: decoding refuses the record.
        let damaged = one_list_record("x", &[[ints(&[0x80]), floats].concat()]);
        let err = statistics_error(&[damaged]);
        assert!(err.contains("not a valid SequenceExample"), "{err}");
    }

    #[test]
    fn a_record_too_long_to_copy_gives_the_figures_of_its_lists_copied() {
        let with_context = |context: Vec<u8>| {
            SequenceExample::builder()
                .context_bytes("blob", [context])
                .int64_list("ids", [vec![3i64, 1 << 40], vec![], vec![-7]])
                .feature_list("f", [Feature::Float(vec![0.5, f32::NAN]), Feature::None])
                .bytes_list("terms", [vec!["a", "b"], vec!["a"]])
                .build()
                .unwrap()
                .encode()
        };
        let long = with_context(vec![b'x'; 2 << 20]);
        let short = with_context(b"x".to_vec());
        assert!(long.len() > 2 << 20);
        for n in [1, 3] {
            assert_eq!(
                list_statistics(&vec![long.clone(); n]),
                list_statistics(&vec![short.clone(); n]),
                "{n} records"
            );
        }
    }

    #[test]
    fn damaged_bytes_are_an_error_never_a_panic() {
        let good = records().concat();
        let mut acc = StatsAccumulator::new(StatsOptions::default()).unwrap();
        for cut in 0..good.len().min(200) {
            for bytes in [&good[..cut], &good[cut..]] {
                let _ = acc.add_sequence_example(bytes, None);
                let _ = acc.add_record(bytes, None);
            }
        }
        let mut flipped = records()[2].clone();
        for i in 0..flipped.len() {
            flipped[i] ^= 0x5a;
            let _ = acc.add_sequence_example(&flipped, None);
            flipped[i] ^= 0x5a;
        }
        let err = acc.add_sequence_example(&[0x12, 0x05, 0xff], None).unwrap_err();
        assert!(err.to_string().contains("not a valid SequenceExample"), "{err}");
    }
}

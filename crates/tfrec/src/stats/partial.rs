//! Partial statistics as bytes: a [`StatsAccumulator`]'s whole state, so that the partial
//! statistics of shards computed in other processes (Ray's workers) merge in one, to the same
//! figures, bit for bit, as if they had been computed there.
//!
//! The encoding is explicit and versioned: a magic, a version, the options, then every counter,
//! float (by its bits, NaN payloads kept) and sketch entry, maps in key order so that one state
//! has one encoding. Decoding checks lengths against the bytes left before allocating, and the
//! invariants that finishing relies on (counts within the examples, a sketch where values were
//! counted, histograms of at most 10,000 buckets), so bad bytes are an error, never a panic
//! or a huge allocation.
//!
//! [`statistics_of_records`] gives the partial statistics of records held in memory (a Ray
//! block of serialized records), the counterpart of a file's partial for data that never was
//! a file.

use rustc_hash::FxHashMap;

use super::accumulate::{FeatureAcc, MeanVar, NumericAcc, StatsAccumulator, StringAcc};
use super::error::{RecordPlace, StatsError};
use super::lengths::LengthCounts;
use super::options::{RecordMessage, StatsOptions};
use super::quantiles::{Entry, QuantilesSketch, Summary};
use super::sequence::{FeatureListAcc, FeatureListsAcc, Level};
use super::string_counts::StringCounts;
use crate::example::Kind;
use crate::record::ReadStats;

const MAGIC: &[u8; 8] = b"TFRSTATP";
const VERSION: u32 = 1;

/// The most buckets a histogram option may ask for in partial bytes: the histograms are
/// allocated at finishing, so damaged bytes must not ask for billions.
const MAX_BUCKETS: usize = 10_000;

/// The largest counter accepted: the sketches weigh values as `f64`, exact to 2^53, and 2,048
/// partials at this bound still sum within a `u64`.
const MAX_COUNT: u64 = 1 << 53;

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.0.extend_from_slice(v);
    }
    /// Counts by length, given sorted by length.
    fn counts(&mut self, sorted: &[(u64, u64)]) {
        self.u64(sorted.len() as u64);
        for &(k, v) in sorted {
            self.u64(k);
            self.u64(v);
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

type Decoded<T> = Result<T, StatsError>;

impl<'a> Reader<'a> {
    fn error<T>(&self, reason: impl Into<String>) -> Decoded<T> {
        Err(StatsError::PartialState {
            offset: self.pos,
            reason: reason.into(),
        })
    }
    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        match self.bytes.get(self.pos..).and_then(|rest| rest.get(..n)) {
            Some(out) => {
                self.pos += n;
                Ok(out)
            }
            None => self.error(format!("cut short: {n} more bytes expected")),
        }
    }
    fn u8(&mut self) -> Decoded<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Decoded<u64> {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(buf))
    }
    /// A counter, at most [`MAX_COUNT`].
    fn count(&mut self) -> Decoded<u64> {
        let v = self.u64()?;
        if v > MAX_COUNT {
            return self.error(format!("count {v} is out of range"));
        }
        Ok(v)
    }
    fn usize(&mut self) -> Decoded<usize> {
        let v = self.count()?;
        usize::try_from(v).or_else(|_| self.error("size out of range"))
    }
    fn f64(&mut self) -> Decoded<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn flag(&mut self) -> Decoded<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => self.error(format!("flag {other} is neither 0 nor 1")),
        }
    }
    /// A number of items of at least `item_bytes` bytes each, checked against the bytes left.
    fn len(&mut self, item_bytes: usize) -> Decoded<usize> {
        let n = self.u64()?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n.saturating_mul(item_bytes.max(1) as u64) > left {
            return self.error(format!("{n} items announced, {left} bytes left"));
        }
        Ok(n as usize)
    }
    fn bytes(&mut self) -> Decoded<&'a [u8]> {
        let n = self.len(1)?;
        self.take(n)
    }
    fn counts(&mut self) -> Decoded<FxHashMap<u64, u64>> {
        let n = self.len(16)?;
        let mut out = FxHashMap::default();
        for _ in 0..n {
            let (k, v) = (self.count()?, self.count()?);
            if out.insert(k, v).is_some() {
                return self.error("a count is repeated");
            }
        }
        Ok(out)
    }
}

impl StatsAccumulator {
    /// The whole state as bytes, for [`StatsAccumulator::from_partial_bytes`] in another
    /// process; the same state always gives the same bytes.
    ///
    /// ```
    /// use tfrec::example::Example;
    /// use tfrec::stats::{encode_statistics, StatsAccumulator, StatsOptions};
    ///
    /// let mut shard = StatsAccumulator::new(StatsOptions::default())?;
    /// shard.add_example(&Example::builder().int64("age", 31).build()?.encode(), None)?;
    /// let bytes = shard.to_partial_bytes();
    /// let mut total = StatsAccumulator::new(StatsOptions::default())?;
    /// total.merge(&StatsAccumulator::from_partial_bytes(&bytes)?)?;
    /// assert_eq!(encode_statistics(&total.finish()), encode_statistics(&{
    ///     let mut same = StatsAccumulator::new(StatsOptions::default())?;
    ///     same.merge(&shard)?;
    ///     same.finish()
    /// }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_partial_bytes(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.0.extend_from_slice(MAGIC);
        w.0.extend_from_slice(&VERSION.to_le_bytes());
        write_options(&mut w, &self.options);
        w.u64(self.num_examples);
        let mut features: Vec<(&Box<[u8]>, &FeatureAcc)> = self.names.iter().zip(&self.features).collect();
        features.sort_unstable_by(|a, b| a.0.cmp(b.0));
        w.u64(features.len() as u64);
        for (name, acc) in features {
            w.bytes(name);
            write_feature(&mut w, acc);
        }
        let mut lists: Vec<_> = self.feature_lists.lists.iter().collect();
        lists.sort_unstable_by(|a, b| a.0.cmp(b.0));
        w.u64(lists.len() as u64);
        for (key, list) in lists {
            w.bytes(key);
            write_feature(&mut w, &list.values);
            write_level(&mut w, &list.steps);
            write_level(&mut w, &list.step_values);
        }
        w.0
    }

    /// The accumulator whose [`StatsAccumulator::to_partial_bytes`] gave `bytes`, options
    /// included; an error when the bytes are not such (damaged, cut, another version).
    pub fn from_partial_bytes(bytes: &[u8]) -> Result<StatsAccumulator, StatsError> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(MAGIC.len()).ok() != Some(&MAGIC[..]) {
            return Err(StatsError::PartialState {
                offset: 0,
                reason: "no partial statistics magic".to_owned(),
            });
        }
        let mut version = [0u8; 4];
        version.copy_from_slice(r.take(4)?);
        let version = u32::from_le_bytes(version);
        if version != VERSION {
            return r.error(format!("version {version}; this tfrec reads version {VERSION}"));
        }
        let options = read_options(&mut r)?;
        let eps = options.epsilon;
        let mut acc = StatsAccumulator::new(options).or_else(|e| r.error(e.to_string()))?;
        acc.num_examples = r.count()?;
        for _ in 0..r.len(8)? {
            let name: Box<[u8]> = r.bytes()?.into();
            let feature = read_feature(&mut r, eps, acc.num_examples)?;
            if acc.positions.contains_key(&name) {
                return r.error("a feature is repeated");
            }
            let i = acc.learn(&name);
            acc.features[i] = feature;
        }
        let mut lists = FeatureListsAcc::default();
        for _ in 0..r.len(8)? {
            let key: Box<[u8]> = r.bytes()?.into();
            let values = read_feature(&mut r, eps, acc.num_examples)?;
            let steps = read_level(&mut r)?;
            let step_values = read_level(&mut r)?;
            let list = FeatureListAcc {
                values,
                steps,
                step_values,
            };
            if lists.lists.insert(key, list).is_some() {
                return r.error("a feature list is repeated");
            }
        }
        acc.feature_lists = lists;
        if r.pos != bytes.len() {
            return r.error("bytes left over after the state");
        }
        Ok(acc)
    }
}

/// The partial statistics of serialized records held in memory (one Ray block's, say), read
/// as `options.message` says, with what reading them found (records and their bytes; nothing
/// is damaged in memory): the counterpart of [`statistics_of_file`](super::statistics_of_file)
/// for records that are not in a file. Merged in order with [`merge_partials`](super::merge_partials),
/// the partials of groups of records give the same bytes as the files holding those groups.
///
/// Errors name the record by its index among `records`. `sample_rate` is refused: the
/// statistics sample records by their file and offset, which records in memory do not have
/// (sample them before, as Ray's `Dataset.random_sample` does).
///
/// ```
/// use tfrec::example::Example;
/// use tfrec::stats::{merge_partials, statistics_of_records, StatsOptions};
///
/// let records: Vec<Vec<u8>> = [3, 5, 8].iter().map(|&n| Example::builder().int64("n", n).build().map(|e| e.encode())).collect::<Result<_, _>>()?;
/// let options = StatsOptions::default();
/// let blocks = [&records[..1], &records[1..]];
/// let partials = blocks.iter().map(|block| statistics_of_records(block.iter().map(|r| &r[..]), &options));
/// let out = merge_partials(&options, partials)?;
/// assert_eq!(out.statistics.datasets[0].num_examples, 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn statistics_of_records<'a>(
    records: impl IntoIterator<Item = &'a [u8]>,
    options: &StatsOptions,
) -> Result<(StatsAccumulator, ReadStats), StatsError> {
    if options.sample_rate.is_some() {
        return Err(StatsError::InvalidOption(
            "sample_rate samples records by their file and offset, and records given in memory have none: \
             sample them before (Ray: Dataset.random_sample)"
                .to_owned(),
        ));
    }
    let mut acc = StatsAccumulator::new(options.clone())?;
    let mut read = ReadStats::default();
    for (index, record) in records.into_iter().enumerate() {
        let place = || RecordPlace {
            path: Default::default(),
            offset: 0,
            record_index: index as u64,
        };
        acc.add_record(record, Some(&place))?;
        read.records += 1;
        read.data_bytes += record.len() as u64;
    }
    Ok((acc, read))
}

fn write_options(w: &mut Writer, o: &StatsOptions) {
    for n in [
        o.num_top_values,
        o.num_rank_histogram_buckets,
        o.num_values_histogram_buckets,
        o.num_histogram_buckets,
        o.num_quantiles_histogram_buckets,
    ] {
        w.u64(n as u64);
    }
    w.f64(o.epsilon);
    w.u8(match o.message {
        RecordMessage::Detect => 0,
        RecordMessage::Example => 1,
        RecordMessage::SequenceExample => 2,
    });
    w.u8(u8::from(o.sample_rate.is_some()));
    w.f64(o.sample_rate.unwrap_or(0.0));
    match &o.feature_allowlist {
        None => w.u8(0),
        Some(names) => {
            w.u8(1);
            w.u64(names.len() as u64);
            for name in names {
                w.bytes(name.as_bytes());
            }
        }
    }
}

fn read_options(r: &mut Reader<'_>) -> Decoded<StatsOptions> {
    let mut sizes = [0usize; 5];
    for size in &mut sizes {
        *size = r.usize()?;
    }
    let [num_top_values, num_rank_histogram_buckets, num_values_histogram_buckets, num_histogram_buckets, num_quantiles_histogram_buckets] =
        sizes;
    if num_values_histogram_buckets
        .max(num_histogram_buckets)
        .max(num_quantiles_histogram_buckets)
        > MAX_BUCKETS
    {
        return r.error(format!("a histogram of more than {MAX_BUCKETS} buckets"));
    }
    let epsilon = r.f64()?;
    let message = match r.u8()? {
        0 => RecordMessage::Detect,
        1 => RecordMessage::Example,
        2 => RecordMessage::SequenceExample,
        other => return r.error(format!("unknown record message {other}")),
    };
    let has_rate = r.flag()?;
    let rate = r.f64()?;
    let feature_allowlist = if r.flag()? {
        let mut names = Vec::new();
        for _ in 0..r.len(8)? {
            let name = r.bytes()?;
            match std::str::from_utf8(name) {
                Ok(name) => names.push(name.to_owned()),
                Err(_) => return r.error("a feature_allowlist name is not UTF-8"),
            }
        }
        Some(names)
    } else {
        None
    };
    Ok(StatsOptions {
        num_top_values,
        num_rank_histogram_buckets,
        num_values_histogram_buckets,
        num_histogram_buckets,
        num_quantiles_histogram_buckets,
        epsilon,
        message,
        sample_rate: has_rate.then_some(rate),
        feature_allowlist,
    })
}

fn write_feature(w: &mut Writer, acc: &FeatureAcc) {
    w.u8(match acc.kind {
        None => 0,
        Some(Kind::Int64) => 1,
        Some(Kind::Float) => 2,
        Some(Kind::Bytes) => 3,
    });
    for n in [
        acc.num_non_missing,
        acc.min_num_values,
        acc.max_num_values,
        acc.total_num_values,
    ] {
        w.u64(n);
    }
    w.counts(&acc.values_per_example());
    match &acc.numeric {
        None => w.u8(0),
        Some(numeric) => {
            w.u8(1);
            write_numeric(w, numeric);
        }
    }
    match &acc.strings {
        None => w.u8(0),
        Some(strings) => {
            w.u8(1);
            w.u64(strings.total_bytes);
            w.u64(strings.invalid_utf8());
            let mut values: Vec<(&[u8], u64)> = strings.counts.iter().collect();
            values.sort_unstable();
            w.u64(values.len() as u64);
            for (value, n) in values {
                w.bytes(value);
                w.u64(n);
            }
        }
    }
}

fn read_feature(r: &mut Reader<'_>, eps: f64, num_examples: u64) -> Decoded<FeatureAcc> {
    let kind = match r.u8()? {
        0 => None,
        1 => Some(Kind::Int64),
        2 => Some(Kind::Float),
        3 => Some(Kind::Bytes),
        other => return r.error(format!("unknown feature kind {other}")),
    };
    let num_non_missing = r.count()?;
    // The minimum is `u64::MAX` until a count is seen.
    let min_num_values = r.u64()?;
    let max_num_values = r.count()?;
    let total_num_values = r.count()?;
    if num_non_missing > num_examples {
        return r.error("a feature is present in more examples than there are");
    }
    let num_values_counts = LengthCounts::from_map(r.counts()?);
    let numeric = if r.flag()? {
        if !matches!(kind, Some(Kind::Int64 | Kind::Float)) {
            return r.error("numeric figures for a feature that is not numeric");
        }
        let numeric = read_numeric(r, eps)?;
        if numeric.num_nan > total_num_values {
            return r.error("more NaN values than values");
        }
        if numeric.num_nan < total_num_values && numeric.sketch.is_empty() {
            return r.error("values counted but no quantiles sketch");
        }
        Some(numeric)
    } else {
        None
    };
    let strings = if r.flag()? {
        if kind != Some(Kind::Bytes) {
            return r.error("string figures for a feature that is not a string");
        }
        let total_bytes = r.count()?;
        let invalid_utf8 = r.count()?;
        let mut counts = StringCounts::default();
        for _ in 0..r.len(16)? {
            let value = r.bytes()?;
            let n = r.count()?;
            if !counts.insert_new(value, n) {
                return r.error("a string value is repeated");
            }
        }
        let strings = StringAcc { total_bytes, counts };
        // Kept in the state for its readers; the figure comes from the values.
        if strings.invalid_utf8() != invalid_utf8 {
            return r.error("the count of values that are not UTF-8 disagrees with the values");
        }
        Some(strings)
    } else {
        None
    };
    Ok(FeatureAcc {
        kind,
        num_non_missing,
        min_num_values,
        max_num_values,
        total_num_values,
        num_values_counts,
        numeric,
        strings,
    })
}

fn write_numeric(w: &mut Writer, n: &NumericAcc) {
    w.u64(n.num_zeros);
    w.u64(n.num_nan);
    for v in [n.min, n.max, n.finite_min, n.finite_max] {
        w.f64(v);
    }
    w.u64(n.pos_inf_count);
    let m = &n.mean_var;
    w.u64(m.count);
    for v in [m.sum, m.compensation, m.mean, m.m2] {
        w.f64(v);
    }
    w.u8(u8::from(m.saw_infinity));
    let s = &n.sketch;
    w.u64(s.buffer.len() as u64);
    for &(value, weight) in &s.buffer {
        w.f64(value);
        w.f64(weight);
    }
    // `local` is empty between values: it holds a summary only while one propagates.
    w.u64(s.levels.len() as u64);
    for level in &s.levels {
        w.u64(level.entries.len() as u64);
        for e in &level.entries {
            for v in [e.value, e.weight, e.min_rank, e.max_rank] {
                w.f64(v);
            }
        }
    }
}

fn read_numeric(r: &mut Reader<'_>, eps: f64) -> Decoded<NumericAcc> {
    let num_zeros = r.count()?;
    let num_nan = r.count()?;
    let (min, max, finite_min, finite_max) = (r.f64()?, r.f64()?, r.f64()?, r.f64()?);
    let pos_inf_count = r.count()?;
    let mean_var = MeanVar {
        count: r.count()?,
        sum: r.f64()?,
        compensation: r.f64()?,
        mean: r.f64()?,
        m2: r.f64()?,
        saw_infinity: r.flag()?,
    };
    let mut sketch = QuantilesSketch::new(eps);
    let buffered = r.len(16)?;
    if buffered as u64 >= (sketch.block_size as u64) << 1 {
        return r.error("the sketch's buffer is over its capacity");
    }
    for _ in 0..buffered {
        sketch.buffer.push((r.f64()?, r.f64()?));
    }
    for _ in 0..r.len(8)? {
        let mut entries = Vec::new();
        for _ in 0..r.len(32)? {
            entries.push(Entry {
                value: r.f64()?,
                weight: r.f64()?,
                min_rank: r.f64()?,
                max_rank: r.f64()?,
            });
        }
        sketch.levels.push(Summary { entries });
    }
    Ok(NumericAcc {
        num_zeros,
        num_nan,
        min,
        max,
        finite_min,
        finite_max,
        pos_inf_count,
        mean_var,
        sketch,
    })
}

fn write_level(w: &mut Writer, level: &Level) {
    for n in [
        level.num_non_missing,
        level.min_num_values,
        level.max_num_values,
        level.total_num_values,
    ] {
        w.u64(n);
    }
    w.counts(&level.counts.sorted());
}

fn read_level(r: &mut Reader<'_>) -> Decoded<Level> {
    Ok(Level {
        num_non_missing: r.count()?,
        min_num_values: r.u64()?,
        max_num_values: r.count()?,
        total_num_values: r.count()?,
        counts: LengthCounts::from_map(r.counts()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::{Example, Feature, SequenceExample};
    use crate::stats::encode_statistics;
    use proptest::prelude::*;

    fn finished(acc: &StatsAccumulator) -> Vec<u8> {
        encode_statistics(&acc.finish())
    }

    /// Records of every kind: ints (extremes), floats (NaN, infinities), strings (not all
    /// UTF-8), kinds left unset, and SequenceExamples.
    fn record() -> impl Strategy<Value = Vec<u8>> {
        let value = prop_oneof![
            prop::collection::vec(any::<i64>(), 0..4).prop_map(Feature::Int64),
            prop::collection::vec(
                prop_oneof![any::<f32>(), Just(f32::NAN), Just(f32::INFINITY), -10.0f32..10.0],
                0..4
            )
            .prop_map(Feature::Float),
            prop::collection::vec(prop::collection::vec(any::<u8>(), 0..3), 0..4).prop_map(Feature::Bytes),
            Just(Feature::None),
        ];
        let example = prop::collection::vec(("[a-d]", value.clone()), 0..4).prop_map(|features| {
            let mut b = Example::builder();
            for (name, feature) in features {
                b = b.feature(&name, feature);
            }
            b.build().map(|e| e.encode()).unwrap_or_default()
        });
        let sequence = prop::collection::vec(("[x-y]", prop::collection::vec(value, 0..3)), 1..3).prop_map(|lists| {
            let mut b = SequenceExample::builder().context_int64("c", 1);
            for (key, steps) in lists {
                b = b.feature_list(&key, steps);
            }
            b.build().map(|s| s.encode()).unwrap_or_default()
        });
        prop_oneof![example, sequence]
    }

    fn accumulate(records: &[Vec<u8>], options: &StatsOptions) -> StatsAccumulator {
        let mut acc = StatsAccumulator::new(options.clone()).unwrap();
        for r in records {
            // Records whose kinds clash with earlier ones are refused; the rest count.
            let _ = acc.add_record(r, None);
        }
        acc
    }

    proptest! {
        #[test]
        fn partial_bytes_round_trip_and_merge_to_the_same_bytes(
            shards in prop::collection::vec(prop::collection::vec(record(), 0..12), 1..4),
            top in 1usize..5,
        ) {
            let options = StatsOptions::default().num_top_values(top);
            let partials: Vec<StatsAccumulator> = shards.iter().map(|s| accumulate(s, &options)).collect();
            let mut direct = StatsAccumulator::new(options.clone()).unwrap();
            let mut through_bytes = StatsAccumulator::new(options.clone()).unwrap();
            for partial in &partials {
                let bytes = partial.to_partial_bytes();
                let decoded = StatsAccumulator::from_partial_bytes(&bytes).unwrap();
                prop_assert_eq!(decoded.to_partial_bytes(), bytes);
                prop_assert_eq!(finished(&decoded), finished(partial));
                let (a, b) = (direct.merge(partial), through_bytes.merge(&decoded));
                prop_assert_eq!(a.is_ok(), b.is_ok());
                if a.is_err() {
                    return Ok(());
                }
            }
            prop_assert_eq!(through_bytes.to_partial_bytes(), direct.to_partial_bytes());
            prop_assert_eq!(finished(&through_bytes), finished(&direct));
        }

        #[test]
        fn damaged_bytes_are_an_error_or_a_state_that_finishes(
            records in prop::collection::vec(record(), 1..8),
            cut in any::<prop::sample::Index>(),
            flip in any::<prop::sample::Index>(),
            mask in 1u8..,
        ) {
            let bytes = accumulate(&records, &StatsOptions::default()).to_partial_bytes();
            let cut = cut.index(bytes.len());
            prop_assert!(StatsAccumulator::from_partial_bytes(&bytes[..cut]).is_err());
            let mut flipped = bytes.clone();
            flipped[flip.index(bytes.len())] ^= mask;
            if let Ok(acc) = StatsAccumulator::from_partial_bytes(&flipped) {
                let _ = acc.finish();
                let mut total = StatsAccumulator::new(acc.options().clone()).unwrap();
                if total.merge(&acc).is_ok() && total.merge(&acc).is_ok() {
                    let _ = total.finish();
                }
            }
        }
    }

    #[test]
    fn large_sketches_round_trip_past_the_exact_range() {
        let options = StatsOptions::default();
        let mut acc = StatsAccumulator::new(options).unwrap();
        for i in 0..30_000i64 {
            let record = Example::builder().int64("n", [(i * 7919) % 100_003]).build().unwrap();
            acc.add_example(&record.encode(), None).unwrap();
        }
        let decoded = StatsAccumulator::from_partial_bytes(&acc.to_partial_bytes()).unwrap();
        assert_eq!(finished(&decoded), finished(&acc));
    }

    #[test]
    fn other_versions_and_trailing_bytes_are_refused() {
        let mut bytes = StatsAccumulator::new(StatsOptions::default())
            .unwrap()
            .to_partial_bytes();
        let mut newer = bytes.clone();
        newer[8] = 2;
        let err = StatsAccumulator::from_partial_bytes(&newer).unwrap_err();
        assert!(err.to_string().contains("version 2"), "{err}");
        bytes.push(0);
        let err = StatsAccumulator::from_partial_bytes(&bytes).unwrap_err();
        assert!(err.to_string().contains("left over"), "{err}");
        assert!(StatsAccumulator::from_partial_bytes(b"").is_err());
    }
}

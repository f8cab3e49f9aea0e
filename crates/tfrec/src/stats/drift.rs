//! How far apart two data sets' distributions of one feature are, by TFDV's drift and skew
//! measures (TFDV 1.16.1: `UpdateFeatureComparatorDirect` in `anomalies/feature_util.cc` and
//! `anomalies/metrics.cc`): the L-infinity distance and the normalized absolute difference of
//! the value counts, and the Jensen–Shannon divergence (base 2) of the value counts or, for
//! numeric features, of the histograms.
//!
//! The one home of these measures: schema validation (`validate`) takes its drift and skew
//! measurements from [`measure_drift`], and the HTML report shows [`feature_drift`]. Both work
//! on the statistics only, as TFDV's comparators do, so they can be measured for any two
//! `DatasetFeatureStatistics`, whoever computed them.

use std::collections::{BTreeMap, BTreeSet};

use super::proto::feature_name_statistics::Stats;
use super::proto::histogram::HistogramType;
use super::proto::{FeatureNameStatistics, Histogram};

/// Which measure a [`Drift`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftMeasure {
    /// The largest difference between the two sides' value frequencies (each count over its
    /// side's total).
    LInfinity,
    /// The largest difference between the two sides' value counts, over both sides' total.
    NormalizedAbsDifference,
    /// The Jensen–Shannon divergence of the value counts, or of the histograms when a side has
    /// no value counts (numeric features).
    JensenShannon,
}

impl DriftMeasure {
    /// The measure's name as TFDV's schema calls it (`infinity_norm`,
    /// `normalized_abs_difference`, `jensen_shannon_divergence`).
    pub fn name(self) -> &'static str {
        match self {
            DriftMeasure::LInfinity => "infinity_norm",
            DriftMeasure::NormalizedAbsDifference => "normalized_abs_difference",
            DriftMeasure::JensenShannon => "jensen_shannon_divergence",
        }
    }
}

/// The drift of one feature between two data sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// Which measure `value` is.
    pub measure: DriftMeasure,
    /// In [0, 1]: 0 for the same distribution.
    pub value: f64,
    /// For the L-infinity distance and the normalized absolute difference, the value whose
    /// counts differ most; empty otherwise.
    pub at: String,
}

/// The drift the report shows for a feature between `lhs` and `rhs`: the L-infinity distance
/// when both are string features, the Jensen–Shannon divergence of the standard histograms
/// when both are numeric; `None` when the kinds differ or there is nothing to compare (no
/// value counts on either side, or a numeric side without values).
pub fn feature_drift(lhs: &FeatureNameStatistics, rhs: &FeatureNameStatistics) -> Option<Drift> {
    match (lhs.stats.as_ref()?, rhs.stats.as_ref()?) {
        (Stats::StringStats(_), Stats::StringStats(_)) => {
            if string_value_counts(lhs).is_empty() && string_value_counts(rhs).is_empty() {
                return None;
            }
            measure_drift(DriftMeasure::LInfinity, lhs, rhs, HistogramType::Standard)
        }
        (Stats::NumStats(_), Stats::NumStats(_)) => {
            measure_drift(DriftMeasure::JensenShannon, lhs, rhs, HistogramType::Standard)
        }
        _ => None,
    }
}

/// One of TFDV's comparator measures between a feature's statistics in the data checked
/// (`treatment`) and in the control data (`control`), as `UpdateFeatureComparatorDirect` takes
/// it. The Jensen–Shannon divergence compares the value counts when both sides have some, else
/// the `histogram` kind (`STANDARD` or `QUANTILES`) of both sides; `None` where TFDV records no
/// measurement (a divergence of empty histograms, or of histograms of different kinds).
pub fn measure_drift(
    measure: DriftMeasure,
    treatment: &FeatureNameStatistics,
    control: &FeatureNameStatistics,
    histogram: HistogramType,
) -> Option<Drift> {
    let (counts, control_counts) = (string_value_counts(treatment), string_value_counts(control));
    let (at, value) = match measure {
        DriftMeasure::LInfinity => l_infinity_distance(&counts, &control_counts),
        DriftMeasure::NormalizedAbsDifference => normalized_abs_difference(&counts, &control_counts),
        DriftMeasure::JensenShannon => {
            let value = if !counts.is_empty() && !control_counts.is_empty() {
                categorical_jensen_shannon_divergence(&counts, &control_counts)?
            } else {
                jensen_shannon_divergence(histogram_of(treatment, histogram)?, histogram_of(control, histogram)?)?
            };
            (String::new(), value)
        }
    };
    Some(Drift { measure, value, at })
}

/// The counts of a string feature's values, as TFDV's `GetStringValuesWithCounts` takes them:
/// the rank histogram's buckets by label (the first of a repeated label), in byte order; empty
/// for a feature without one.
pub fn string_value_counts(feature: &FeatureNameStatistics) -> BTreeMap<String, f64> {
    let mut counts = BTreeMap::new();
    if let Some(Stats::StringStats(s)) = &feature.stats {
        for bucket in s.rank_histogram.iter().flat_map(|h| &h.buckets) {
            counts.entry(bucket.label.clone()).or_insert(bucket.sample_count);
        }
    }
    counts
}

/// A numeric feature's histogram of a kind.
fn histogram_of(feature: &FeatureNameStatistics, kind: HistogramType) -> Option<&Histogram> {
    match &feature.stats {
        Some(Stats::NumStats(s)) => s.histograms.iter().find(|h| h.r#type == kind as i32),
        _ => None,
    }
}

/// The largest difference between the frequencies (each count over its side's total) of a
/// value in `a` and in `b`, with the value (TFDV's `GetLInftyNorm` of the normalized counts; a
/// side with no counts has frequencies of 0).
pub fn l_infinity_distance(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> (String, f64) {
    max_difference(&normalized(a), &normalized(b))
}

/// The largest difference between the counts of a value in `a` and in `b`, over both sides'
/// total, with the value (TFDV's normalized absolute difference).
pub fn normalized_abs_difference(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> (String, f64) {
    let scale: f64 = a.values().sum::<f64>() + b.values().sum::<f64>();
    max_difference(&scaled(a, scale), &scaled(b, scale))
}

fn scaled(counts: &BTreeMap<String, f64>, scale: f64) -> BTreeMap<String, f64> {
    if scale == 0.0 {
        return counts.clone();
    }
    counts.iter().map(|(k, v)| (k.clone(), v / scale)).collect()
}

fn normalized(counts: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    scaled(counts, counts.values().sum())
}

/// The largest absolute difference between two maps and its key (the last key among equals,
/// as TFDV's `GetLInftyNorm` keeps it).
fn max_difference(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> (String, f64) {
    let mut difference = a.clone();
    for (key, value) in b {
        *difference.entry(key.clone()).or_insert(0.0) -= value;
    }
    let mut best = (String::new(), 0.0);
    for (key, value) in difference {
        if value.abs() >= best.1 {
            best = (key, value.abs());
        }
    }
    best
}

/// The Jensen–Shannon divergence (base 2) of two value-count maps; `None` when a count is
/// not positive.
pub fn categorical_jensen_shannon_divergence(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> Option<f64> {
    if a.values().chain(b.values()).any(|&c| c <= 0.0) {
        return None;
    }
    let (a_sum, b_sum): (f64, f64) = (a.values().sum(), b.values().sum());
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut kl_sum = 0.0;
    for key in keys {
        let (ca, cb) = (a.get(key).copied().unwrap_or(0.0), b.get(key).copied().unwrap_or(0.0));
        let (p, q) = (ca / a_sum, cb / b_sum);
        let m = (p + q) / 2.0;
        if ca != 0.0 {
            kl_sum += p * (p / m).log2();
        }
        if cb != 0.0 {
            kl_sum += q * (q / m).log2();
        }
    }
    Some(kl_sum / 2.0)
}

/// TFDV's approximate Jensen–Shannon divergence (base 2) of two numeric histograms: both
/// rebucketed to the union of their boundaries (values spread uniformly within a bucket),
/// point buckets, buckets with an infinite bound and NaN counts compared apart; `None` when
/// either side holds no values or the histograms are of different kinds.
pub fn jensen_shannon_divergence(a: &Histogram, b: &Histogram) -> Option<f64> {
    if a.r#type != b.r#type {
        return None;
    }
    let (mut h1, mut h2) = align_histograms(a, b);
    normalize(&mut h1)?;
    normalize(&mut h2)?;
    let kl = |p: &[f64], m: &[f64]| -> f64 {
        p.iter()
            .zip(m)
            .filter(|(p, q)| **p > 0.0 && **q > 0.0)
            .map(|(p, q)| p * (p / q).log2())
            .sum()
    };
    let m: Vec<f64> = h1.iter().zip(&h2).map(|(x, y)| (x + y) / 2.0).collect();
    Some((kl(&h1, &m) + kl(&h2, &m)) / 2.0)
}

fn normalize(counts: &mut [f64]) -> Option<()> {
    let total: f64 = counts.iter().sum();
    if total == 0.0 {
        return None;
    }
    counts.iter_mut().for_each(|c| *c /= total);
    Some(())
}

/// A histogram bucket with finite, distinct bounds.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    low: f64,
    high: f64,
    count: f64,
}

/// Ranged buckets, point masses by value, and the mass of buckets with an infinite bound.
fn strip_points_and_infinities(h: &Histogram) -> (Vec<Bucket>, BTreeMap<u64, (f64, f64)>, f64) {
    let mut ranged = Vec::new();
    let mut points: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    let mut infinite = 0.0;
    for b in &h.buckets {
        if !b.low_value.is_finite() || !b.high_value.is_finite() {
            infinite += b.sample_count;
        } else if b.low_value == b.high_value {
            points.entry(ordered_key(b.low_value)).or_insert((b.low_value, 0.0)).1 += b.sample_count;
        } else {
            ranged.push(Bucket {
                low: b.low_value,
                high: b.high_value,
                count: b.sample_count,
            });
        }
    }
    (ranged, points, infinite)
}

/// A key that orders finite doubles as numbers (for maps of point masses).
fn ordered_key(v: f64) -> u64 {
    let v = if v == 0.0 { 0.0 } else { v };
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The sorted, distinct values of `values`.
fn sorted_distinct(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values.dedup_by(|a, b| a == b);
    values
}

fn boundaries(buckets: &[Bucket]) -> Vec<f64> {
    sorted_distinct(buckets.iter().flat_map(|b| [b.low, b.high]).collect())
}

/// TFDV's `RebucketHistogram`: the counts of `buckets` spread over the buckets between
/// `bounds` (which hold every boundary of `buckets`).
fn rebucket(bounds: &[f64], buckets: &[Bucket]) -> Vec<f64> {
    let mut out = Vec::new();
    let last = bounds.len().saturating_sub(1);
    let mut index = 0;
    for b in buckets {
        while index < last && b.low > bounds[index] {
            out.push(0.0);
            index += 1;
        }
        if b.low == b.high && index < last && b.low == bounds[index] {
            out.push(b.count);
            index += 1;
            continue;
        }
        let mut covered = Vec::new();
        while index < last && b.high > bounds[index] {
            covered.push(bounds[index]);
            index += 1;
        }
        covered.push(bounds[index.min(last)]);
        for pair in covered.windows(2) {
            out.push((pair[1] - pair[0]) / (b.high - b.low) * b.count);
        }
    }
    while index < last {
        out.push(0.0);
        index += 1;
    }
    out
}

/// TFDV's `AlignHistograms`: two histograms as counts over the same buckets.
fn align_histograms(a: &Histogram, b: &Histogram) -> (Vec<f64>, Vec<f64>) {
    let (r1, p1, inf1) = strip_points_and_infinities(a);
    let (r2, p2, inf2) = strip_points_and_infinities(b);
    let (b1, b2) = (boundaries(&r1), boundaries(&r2));
    let (mut h1, mut h2): (Vec<f64>, Vec<f64>) = if b1 == b2 {
        (
            r1.iter().map(|b| b.count).collect(),
            r2.iter().map(|b| b.count).collect(),
        )
    } else {
        let union = sorted_distinct(b1.iter().chain(&b2).copied().collect());
        (rebucket(&union, &r1), rebucket(&union, &r2))
    };
    let points: BTreeSet<u64> = p1.keys().chain(p2.keys()).copied().collect();
    for point in points {
        h1.push(p1.get(&point).map_or(0.0, |p| p.1));
        h2.push(p2.get(&point).map_or(0.0, |p| p.1));
    }
    if inf1 != 0.0 {
        h1.push(inf1);
        h2.push(0.0);
    }
    if inf2 != 0.0 {
        h1.push(0.0);
        h2.push(inf2);
    }
    if a.num_nan > 0 || b.num_nan > 0 {
        h1.extend([0.0, a.num_nan as f64]);
        h2.extend([b.num_nan as f64, 0.0]);
    }
    (h1, h2)
}

/// The counts of `h`'s buckets with finite bounds, low below high, on the buckets between `edges`
/// (sorted), spread as the divergence spreads them ([`rebucket`] on the union of both sets of
/// bounds); what lies outside `edges` is dropped. For drawing two histograms on one range.
pub(crate) fn ranged_counts_on(h: &Histogram, edges: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; edges.len().saturating_sub(1)];
    let (Some(&first), Some(&end)) = (edges.first(), edges.last()) else {
        return out;
    };
    if out.is_empty() {
        return out;
    }
    let (ranged, _, _) = strip_points_and_infinities(h);
    let ranged: Vec<Bucket> = ranged.into_iter().filter(|b| b.high > b.low).collect();
    let bounds = sorted_distinct(boundaries(&ranged).into_iter().chain(edges.iter().copied()).collect());
    for (i, count) in rebucket(&bounds, &ranged).into_iter().enumerate() {
        let Some(&low) = bounds.get(i) else { break };
        if low < first || low >= end {
            continue;
        }
        let slot = edges
            .partition_point(|&e| e <= low)
            .saturating_sub(1)
            .min(out.len() - 1);
        out[slot] += count;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::proto::histogram::Bucket as ProtoBucket;
    use crate::stats::proto::rank_histogram::Bucket as RankBucket;
    use crate::stats::proto::{NumericStatistics, RankHistogram, StringStatistics};

    fn hist(buckets: &[(f64, f64, f64)], num_nan: u64) -> Histogram {
        Histogram {
            buckets: buckets
                .iter()
                .map(|&(low_value, high_value, sample_count)| ProtoBucket {
                    low_value,
                    high_value,
                    sample_count,
                })
                .collect(),
            num_nan,
            ..Default::default()
        }
    }

    fn counts(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn string_feature(ranks: &[(&str, f64)]) -> FeatureNameStatistics {
        FeatureNameStatistics {
            stats: Some(Stats::StringStats(StringStatistics {
                rank_histogram: Some(RankHistogram {
                    buckets: ranks
                        .iter()
                        .map(|&(label, sample_count)| RankBucket {
                            label: label.to_string(),
                            sample_count,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }),
                ..Default::default()
            })),
            ..Default::default()
        }
    }

    fn numeric_feature(histograms: Vec<Histogram>) -> FeatureNameStatistics {
        FeatureNameStatistics {
            stats: Some(Stats::NumStats(NumericStatistics {
                histograms,
                ..Default::default()
            })),
            ..Default::default()
        }
    }

    #[test]
    fn l_infinity_is_the_largest_frequency_difference() {
        // a: cat 0.5, dog 0.5; b: cat 0.25, dog 0.25, fox 0.5.
        let a = counts(&[("cat", 2.0), ("dog", 2.0)]);
        let b = counts(&[("cat", 1.0), ("dog", 1.0), ("fox", 2.0)]);
        assert_eq!(l_infinity_distance(&a, &b), ("fox".to_string(), 0.5));
        assert_eq!(l_infinity_distance(&a, &a), ("dog".to_string(), 0.0));
        // An empty side has frequencies of 0, as in TFDV: the last of the equal differences.
        assert_eq!(l_infinity_distance(&a, &BTreeMap::new()), ("dog".to_string(), 0.5));
        assert_eq!(
            l_infinity_distance(&BTreeMap::new(), &BTreeMap::new()),
            (String::new(), 0.0)
        );
    }

    #[test]
    fn l_infinity_picks_the_largest_difference_and_the_last_among_equals() {
        // a: x 0.75, y 0.25; b: x 0.5, y 0.5: both differ by 0.25, y is the last.
        let a = counts(&[("x", 3.0), ("y", 1.0)]);
        let b = counts(&[("x", 1.0), ("y", 1.0)]);
        let (key, distance) = l_infinity_distance(&a, &b);
        assert_eq!(key, "y");
        assert!((distance - 0.25).abs() < 1e-12);
    }

    #[test]
    fn l_infinity_of_disjoint_values_is_one() {
        let a = counts(&[("x", 3.0)]);
        let b = counts(&[("y", 5.0)]);
        assert_eq!(l_infinity_distance(&a, &b).1, 1.0);
    }

    #[test]
    fn normalized_abs_difference_scales_by_both_totals() {
        // Total 6: x differs by (3 - 1) / 6, y by 0.
        let a = counts(&[("x", 3.0), ("y", 1.0)]);
        let b = counts(&[("x", 1.0), ("y", 1.0)]);
        let (key, distance) = normalized_abs_difference(&a, &b);
        assert_eq!(key, "x");
        assert!((distance - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn categorical_jensen_shannon_of_disjoint_and_equal_distributions() {
        let a = counts(&[("x", 2.0)]);
        let b = counts(&[("y", 5.0)]);
        assert_eq!(categorical_jensen_shannon_divergence(&a, &b), Some(1.0));
        assert_eq!(categorical_jensen_shannon_divergence(&a, &a), Some(0.0));
        assert_eq!(categorical_jensen_shannon_divergence(&a, &counts(&[("x", 0.0)])), None);
    }

    #[test]
    fn jensen_shannon_of_equal_histograms_is_zero() {
        let h = hist(&[(0.0, 1.0, 3.0), (1.0, 2.0, 5.0)], 0);
        assert_eq!(jensen_shannon_divergence(&h, &h), Some(0.0));
    }

    #[test]
    fn jensen_shannon_of_disjoint_histograms_is_one() {
        let a = hist(&[(0.0, 1.0, 4.0)], 0);
        let b = hist(&[(2.0, 3.0, 4.0)], 0);
        assert_eq!(jensen_shannon_divergence(&a, &b), Some(1.0));
        let c = hist(&[(1.0, 2.0, 10.0)], 0);
        assert_eq!(jensen_shannon_divergence(&hist(&[(0.0, 1.0, 10.0)], 0), &c), Some(1.0));
    }

    #[test]
    fn jensen_shannon_rebuckets_on_the_union_of_bounds() {
        // a is uniform on [0, 2); b has all its mass on [0, 1): after alignment p = (.5, .5),
        // q = (1, 0), m = (.75, .25).
        let a = hist(&[(0.0, 2.0, 10.0)], 0);
        let b = hist(&[(0.0, 1.0, 7.0)], 0);
        let kl_p = 0.5 * (0.5f64 / 0.75).log2() + 0.5 * (0.5f64 / 0.25).log2();
        let kl_q = (1.0f64 / 0.75).log2();
        let expected = (kl_p + kl_q) / 2.0;
        let d = jensen_shannon_divergence(&a, &b).unwrap();
        assert!((d - expected).abs() < 1e-12, "{d} vs {expected}");
        // Symmetric.
        assert!((jensen_shannon_divergence(&b, &a).unwrap() - d).abs() < 1e-15);
    }

    #[test]
    fn jensen_shannon_keeps_points_infinities_and_nans_apart() {
        // Same ranged mass, but b's extra mass is NaN: p = (1, 0, 0), q = (.5, .5, 0) after
        // the NaN buckets (0, nan_a) and (nan_b, 0).
        let a = hist(&[(0.0, 1.0, 2.0)], 0);
        let b = hist(&[(0.0, 1.0, 2.0)], 2);
        let m = [0.75f64, 0.25f64];
        let expected = ((1.0 / m[0]).log2() + (0.5 * (0.5 / m[0]).log2() + 0.5 * (0.5 / m[1]).log2())) / 2.0;
        assert!((jensen_shannon_divergence(&a, &b).unwrap() - expected).abs() < 1e-12);
        // A point bucket equal on both sides and an infinite bucket on one side.
        let a = hist(&[(5.0, 5.0, 1.0)], 0);
        let b = hist(&[(5.0, 5.0, 1.0), (f64::NEG_INFINITY, 0.0, 1.0)], 0);
        let expected = ((1.0f64 / 0.75).log2() + (0.5 * (0.5f64 / 0.75).log2() + 0.5 * (0.5f64 / 0.25).log2())) / 2.0;
        assert!((jensen_shannon_divergence(&a, &b).unwrap() - expected).abs() < 1e-12);
    }

    #[test]
    fn jensen_shannon_of_an_empty_side_or_different_kinds_is_none() {
        let a = hist(&[(0.0, 1.0, 2.0)], 0);
        assert_eq!(jensen_shannon_divergence(&a, &hist(&[], 0)), None);
        let quantiles = Histogram {
            r#type: HistogramType::Quantiles as i32,
            ..a.clone()
        };
        assert_eq!(jensen_shannon_divergence(&a, &quantiles), None);
    }

    #[test]
    fn rebucketing_shares_counts_by_overlap() {
        let h = hist(&[(0.0, 4.0, 8.0), (4.0, 6.0, 1.0)], 0);
        assert_eq!(
            ranged_counts_on(&h, &[0.0, 1.0, 3.0, 4.0, 5.0, 6.0]),
            vec![2.0, 4.0, 2.0, 0.5, 0.5]
        );
        // Edges that are not the buckets' bounds.
        let out = ranged_counts_on(&hist(&[(0.3, 0.7, 5.0)], 0), &[0.0, 0.5, 1.0]);
        assert_eq!(out.len(), 2);
        assert!((out[0] - 2.5).abs() < 1e-12 && (out[1] - 2.5).abs() < 1e-12, "{out:?}");
        assert!(ranged_counts_on(&h, &[0.0]).is_empty());
    }

    #[test]
    fn value_counts_are_the_rank_histogram_first_label_first() {
        let f = string_feature(&[("a", 3.0), ("b", 1.0), ("a", 7.0)]);
        assert_eq!(string_value_counts(&f), counts(&[("a", 3.0), ("b", 1.0)]));
        assert!(string_value_counts(&numeric_feature(Vec::new())).is_empty());
    }

    #[test]
    fn measures_pick_counts_or_histograms_as_tfdv_does() {
        let a = string_feature(&[("x", 3.0), ("y", 1.0)]);
        let b = string_feature(&[("x", 1.0), ("y", 1.0)]);
        let drift = measure_drift(DriftMeasure::NormalizedAbsDifference, &a, &b, HistogramType::Standard).unwrap();
        assert_eq!(drift.at, "x");
        assert!((drift.value - 1.0 / 3.0).abs() < 1e-12);
        let drift = feature_drift(&a, &b).unwrap();
        assert_eq!((drift.measure, drift.at.as_str()), (DriftMeasure::LInfinity, "y"));
        let js = measure_drift(DriftMeasure::JensenShannon, &a, &b, HistogramType::Standard).unwrap();
        assert_eq!(
            Some(js.value),
            categorical_jensen_shannon_divergence(&string_value_counts(&a), &string_value_counts(&b))
        );
        // Nothing to compare on either side.
        assert_eq!(feature_drift(&string_feature(&[]), &string_feature(&[])), None);
        // Numeric features: the histograms of the kind asked for.
        let (left, right) = (hist(&[(0.0, 1.0, 10.0)], 0), hist(&[(1.0, 2.0, 10.0)], 0));
        let (x, y) = (numeric_feature(vec![left]), numeric_feature(vec![right]));
        let drift = feature_drift(&x, &y).unwrap();
        assert_eq!((drift.measure, drift.value), (DriftMeasure::JensenShannon, 1.0));
        assert_eq!(
            measure_drift(DriftMeasure::JensenShannon, &x, &y, HistogramType::Quantiles),
            None
        );
        assert_eq!(feature_drift(&x, &a), None);
    }
}

//! How far apart two data sets' distributions of one feature are, by TFDV's two measures
//! (tensorflow_data_validation/anomalies/metrics.cc): the L-infinity distance of the value
//! frequencies for string features, and the Jensen–Shannon divergence (base 2, at most 1) of
//! the standard histograms for numeric ones.
//!
//! Both work on the statistics only, as TFDV's drift and skew comparators do, so they can be
//! shown for any two `DatasetFeatureStatistics`, whoever computed them.

use std::collections::BTreeMap;

use super::proto::feature_name_statistics::Stats;
use super::proto::{FeatureNameStatistics, Histogram};

/// Which measure a [`Drift`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftMeasure {
    /// The largest difference between the two value frequencies (string features).
    LInfinity,
    /// The Jensen–Shannon divergence of the two standard histograms (numeric features).
    JensenShannon,
}

impl DriftMeasure {
    /// The measure's name as TFDV's schema calls it (`infinity_norm`, `jensen_shannon_divergence`).
    pub fn name(self) -> &'static str {
        match self {
            DriftMeasure::LInfinity => "infinity_norm",
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
    /// For [`DriftMeasure::LInfinity`], the value whose frequencies differ most; empty otherwise.
    pub at: String,
}

/// The drift of a feature between `lhs` and `rhs`: L-infinity when both are string features,
/// Jensen–Shannon when both are numeric; `None` when the kinds differ or either side has no
/// values to compare (TFDV reports nothing there either).
pub fn feature_drift(lhs: &FeatureNameStatistics, rhs: &FeatureNameStatistics) -> Option<Drift> {
    match (lhs.stats.as_ref()?, rhs.stats.as_ref()?) {
        (Stats::StringStats(_), Stats::StringStats(_)) => {
            let (at, value) = l_infinity_distance(&string_value_counts(lhs), &string_value_counts(rhs))?;
            Some(Drift {
                measure: DriftMeasure::LInfinity,
                value,
                at,
            })
        }
        (Stats::NumStats(a), Stats::NumStats(b)) => {
            let standard = |h: &[Histogram]| {
                h.iter()
                    .find(|h| h.r#type == super::proto::histogram::HistogramType::Standard as i32)
                    .cloned()
            };
            let value = jensen_shannon_divergence(&standard(&a.histograms)?, &standard(&b.histograms)?)?;
            Some(Drift {
                measure: DriftMeasure::JensenShannon,
                value,
                at: String::new(),
            })
        }
        _ => None,
    }
}

/// The counts of a string feature's values, as TFDV's `GetStringValuesWithCounts` takes them:
/// the rank histogram when there is one (it holds more values), else the top values.
pub fn string_value_counts(feature: &FeatureNameStatistics) -> BTreeMap<String, f64> {
    let mut counts = BTreeMap::new();
    let Some(Stats::StringStats(s)) = &feature.stats else {
        return counts;
    };
    match &s.rank_histogram {
        Some(rank) if !rank.buckets.is_empty() => {
            for b in &rank.buckets {
                *counts.entry(b.label.clone()).or_insert(0.0) += b.sample_count;
            }
        }
        _ => {
            for v in &s.top_values {
                *counts.entry(v.value.clone()).or_insert(0.0) += v.frequency;
            }
        }
    }
    counts
}

/// The largest difference between the frequencies (each count over its side's total) of a value
/// in `a` and in `b`, with the value; ties go to the last value in byte order, as in TFDV.
/// `None` when either side is empty.
pub fn l_infinity_distance(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> Option<(String, f64)> {
    let (total_a, total_b): (f64, f64) = (a.values().sum(), b.values().sum());
    if !(total_a > 0.0 && total_b > 0.0) {
        return None;
    }
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut best = (String::new(), 0.0);
    for key in keys {
        let fa = a.get(key).copied().unwrap_or(0.0) / total_a;
        let fb = b.get(key).copied().unwrap_or(0.0) / total_b;
        let d = (fa - fb).abs();
        if d >= best.1 {
            best = (key.clone(), d);
        }
    }
    Some(best)
}

/// The Jensen–Shannon divergence (log base 2, capped at 1) of two histograms, aligned as TFDV
/// aligns them: finite buckets re-bucketed on the union of both sides' bounds (values taken as
/// uniform within a bucket), point buckets and buckets with an infinite bound kept as buckets
/// of their own, NaNs as one more. `None` when either side holds no values.
pub fn jensen_shannon_divergence(a: &Histogram, b: &Histogram) -> Option<f64> {
    let (p, q) = align(a, b);
    let (sp, sq): (f64, f64) = (p.iter().sum(), q.iter().sum());
    if !(sp > 0.0 && sq > 0.0) {
        return None;
    }
    let p: Vec<f64> = p.iter().map(|x| x / sp).collect();
    let q: Vec<f64> = q.iter().map(|x| x / sq).collect();
    let m: Vec<f64> = p.iter().zip(&q).map(|(x, y)| (x + y) / 2.0).collect();
    let kl = |x: &[f64]| -> f64 {
        x.iter()
            .zip(&m)
            .filter(|(xi, mi)| **xi > 0.0 && **mi > 0.0)
            .map(|(xi, mi)| xi * (xi / mi).log2())
            .sum()
    };
    Some(((kl(&p) + kl(&q)) / 2.0).clamp(0.0, 1.0))
}

/// A histogram taken apart as TFDV aligns it.
struct Split {
    /// Buckets with finite, distinct bounds: (low, high, count).
    ranged: Vec<(f64, f64, f64)>,
    /// The counts of buckets of no width, by their value.
    points: BTreeMap<OrdF64, f64>,
    /// The count of buckets with an infinite bound.
    infinite: f64,
}

/// The finite ranged buckets, the point masses by value, and the mass of buckets with an
/// infinite bound, of a histogram.
fn split(h: &Histogram) -> Split {
    let (mut ranged, mut points, mut infinite) = (Vec::new(), BTreeMap::new(), 0.0);
    for bucket in &h.buckets {
        let (lo, hi, n) = (bucket.low_value, bucket.high_value, bucket.sample_count);
        if !lo.is_finite() || !hi.is_finite() {
            infinite += n;
        } else if lo == hi {
            *points.entry(OrdF64(lo)).or_insert(0.0) += n;
        } else {
            ranged.push((lo, hi, n));
        }
    }
    Split {
        ranged,
        points,
        infinite,
    }
}

/// The two histograms' counts on common buckets.
fn align(a: &Histogram, b: &Histogram) -> (Vec<f64>, Vec<f64>) {
    let Split {
        ranged: ranged_a,
        points: points_a,
        infinite: inf_a,
    } = split(a);
    let Split {
        ranged: ranged_b,
        points: points_b,
        infinite: inf_b,
    } = split(b);
    let mut bounds: Vec<f64> = ranged_a
        .iter()
        .chain(&ranged_b)
        .flat_map(|&(lo, hi, _)| [lo, hi])
        .collect();
    bounds.sort_by(f64::total_cmp);
    bounds.dedup();
    let mut p = rebucket_uniform(&ranged_a, &bounds);
    let mut q = rebucket_uniform(&ranged_b, &bounds);
    let point_values: std::collections::BTreeSet<&OrdF64> = points_a.keys().chain(points_b.keys()).collect();
    for v in point_values {
        p.push(points_a.get(v).copied().unwrap_or(0.0));
        q.push(points_b.get(v).copied().unwrap_or(0.0));
    }
    if inf_a != 0.0 {
        p.push(inf_a);
        q.push(0.0);
    }
    if inf_b != 0.0 {
        p.push(0.0);
        q.push(inf_b);
    }
    if a.num_nan > 0 || b.num_nan > 0 {
        p.extend([0.0, a.num_nan as f64]);
        q.extend([b.num_nan as f64, 0.0]);
    }
    (p, q)
}

/// The counts of `buckets` (low, high, count; low < high) spread over the buckets between
/// consecutive `bounds` (sorted), each count shared in proportion to the overlap (values taken
/// as uniform within a bucket).
pub(crate) fn rebucket_uniform(buckets: &[(f64, f64, f64)], bounds: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; bounds.len().saturating_sub(1)];
    for &(lo, hi, n) in buckets {
        let width = hi - lo;
        if width.is_nan() || width <= 0.0 {
            continue;
        }
        // The first target bucket whose upper bound is above `lo`.
        let start = bounds.partition_point(|&b| b <= lo).saturating_sub(1);
        for (i, slot) in out.iter_mut().enumerate().skip(start) {
            let (blo, bhi) = (bounds[i], bounds[i + 1]);
            if blo >= hi {
                break;
            }
            let overlap = bhi.min(hi) - blo.max(lo);
            if overlap > 0.0 {
                *slot += n * overlap / width;
            }
        }
    }
    out
}

/// An `f64` ordered by `total_cmp`, as a map key.
#[derive(Debug, Clone, Copy)]
struct OrdF64(f64);

impl PartialEq for OrdF64 {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::proto::histogram::Bucket;

    fn hist(buckets: &[(f64, f64, f64)], num_nan: u64) -> Histogram {
        Histogram {
            buckets: buckets
                .iter()
                .map(|&(low_value, high_value, sample_count)| Bucket {
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

    #[test]
    fn l_infinity_is_the_largest_frequency_difference() {
        // a: cat 0.5, dog 0.5; b: cat 0.25, dog 0.25, fox 0.5.
        let a = counts(&[("cat", 2.0), ("dog", 2.0)]);
        let b = counts(&[("cat", 1.0), ("dog", 1.0), ("fox", 2.0)]);
        assert_eq!(l_infinity_distance(&a, &b), Some(("fox".to_string(), 0.5)));
        assert_eq!(l_infinity_distance(&a, &a), Some(("dog".to_string(), 0.0)));
        assert_eq!(l_infinity_distance(&a, &BTreeMap::new()), None);
    }

    #[test]
    fn l_infinity_of_disjoint_values_is_one() {
        let a = counts(&[("x", 3.0)]);
        let b = counts(&[("y", 5.0)]);
        assert_eq!(l_infinity_distance(&a, &b).map(|(_, d)| d), Some(1.0));
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
        let d = jensen_shannon_divergence(&a, &b).unwrap();
        assert!((d - 1.0).abs() < 1e-12, "{d}");
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
    fn jensen_shannon_of_an_empty_side_is_none() {
        let a = hist(&[(0.0, 1.0, 2.0)], 0);
        assert_eq!(jensen_shannon_divergence(&a, &hist(&[], 0)), None);
    }

    #[test]
    fn rebucketing_shares_counts_by_overlap() {
        let out = rebucket_uniform(&[(0.0, 4.0, 8.0), (4.0, 6.0, 1.0)], &[0.0, 1.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(out, vec![2.0, 4.0, 2.0, 0.5, 0.5]);
        let total: f64 = rebucket_uniform(&[(0.3, 0.7, 5.0)], &[0.0, 0.5, 1.0]).iter().sum();
        assert!((total - 5.0).abs() < 1e-12);
    }
}

//! Histograms from quantiles, as TFDV builds them (`tensorflow_data_validation/utils/
//! quantiles_util.py`, 1.16.1): the quantiles histogram (one bucket between consecutive
//! boundaries, the weight of repeated boundaries spread evenly), its rebinning, the median, and
//! the standard (equal-width) histogram, whose counts are interpolated from a finer quantiles
//! histogram, not counted: TFDV's standard histogram counts are fractional estimates, and
//! tfrec gives the same ones.

/// One histogram bucket: `[low, high]` and its (possibly fractional) count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bucket {
    pub(crate) low: f64,
    pub(crate) high: f64,
    pub(crate) count: f64,
}

/// The median from quantile boundaries (`find_median`): the middle one, or the mean of the two
/// middle ones. `boundaries` must not be empty.
pub(crate) fn median(boundaries: &[f64]) -> f64 {
    let n = boundaries.len();
    let mid = n / 2;
    if n.is_multiple_of(2) {
        (boundaries[mid - 1] + boundaries[mid]) / 2.0
    } else {
        boundaries[mid]
    }
}

/// The buckets between consecutive boundaries with the weight of each (`_get_bin_weights`):
/// the weight of buckets sharing an upper bound is spread evenly over them, and the weight at
/// the lowest boundary over the leading buckets identical to the first.
pub(crate) fn quantiles_buckets(boundaries: &[f64], cumulative: &[f64]) -> Vec<Bucket> {
    if boundaries.len() < 2 {
        return Vec::new();
    }
    let n = boundaries.len() - 1;
    let low = &boundaries[..n];
    let high = &boundaries[1..];
    let mut counts: Vec<f64> = cumulative.windows(2).map(|w| w[1] - w[0]).collect();
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && high[i] == high[j] {
            j += 1;
        }
        if j > i + 1 {
            // numpy's sum of a slice: pairwise for long runs, in order for short ones; these
            // runs are short and the values small integers, where the order does not matter.
            let spread = counts[i..j].iter().sum::<f64>() / (j - i) as f64;
            counts[i..j].iter_mut().for_each(|c| *c = spread);
        }
        i = j;
    }
    let mut same = 0;
    while same < n && low[0] == low[same] && high[0] == high[same] {
        same += 1;
    }
    if same > 0 {
        let share = cumulative[0] / same as f64;
        counts[..same].iter_mut().for_each(|c| *c += share);
    }
    (0..n)
        .map(|k| Bucket {
            low: low[k],
            high: high[k],
            count: counts[k],
        })
        .collect()
}

/// Keeps every `factor`-th boundary (`rebin_quantiles`); `factor` must divide the number of
/// buckets.
pub(crate) fn rebin(boundaries: &[f64], cumulative: &[f64], factor: usize) -> (Vec<f64>, Vec<f64>) {
    let pick = |v: &[f64]| -> Vec<f64> {
        std::iter::once(v[0])
            .chain(v.iter().skip(factor).step_by(factor).copied())
            .collect()
    };
    (pick(boundaries), pick(cumulative))
}

/// `_strip_infinities`: drops the buckets ending in -inf (returning their count) and those
/// ending in +inf, closing with a bucket at the largest finite value.
fn strip_infinities(
    boundaries: &[f64],
    cumulative: &[f64],
    finite_max: f64,
    num_pos_inf: f64,
) -> (Vec<f64>, Vec<f64>, f64) {
    let neg_inf_end = boundaries.partition_point(|&b| b <= f64::NEG_INFINITY);
    let (mut bounds, mut cum, num_neg_inf) = if neg_inf_end > 0 {
        let num_neg_inf = cumulative[neg_inf_end - 1];
        (
            boundaries[neg_inf_end..].to_vec(),
            cumulative[neg_inf_end..]
                .iter()
                .map(|c| c - num_neg_inf)
                .collect::<Vec<_>>(),
            num_neg_inf,
        )
    } else {
        (boundaries.to_vec(), cumulative.to_vec(), 0.0)
    };
    if num_pos_inf != 0.0 {
        let pos_inf_start = bounds.partition_point(|&b| b < f64::INFINITY);
        let finite_max_count = cum.last().copied().unwrap_or(0.0) - num_pos_inf;
        bounds.truncate(pos_inf_start);
        cum.truncate(pos_inf_start);
        bounds.push(finite_max);
        cum.push(finite_max_count);
    }
    (bounds, cum, num_neg_inf)
}

/// `_overlap`: the share of `bucket` inside `[low, high]`, whether the bucket lies wholly
/// before it, and whether wholly after.
fn overlap(bucket: &Bucket, low: f64, high: f64, first: bool) -> (f64, bool, bool) {
    if bucket.high == bucket.low && bucket.low == low {
        return if first { (1.0, false, false) } else { (0.0, true, false) };
    }
    if bucket.high < low {
        return (0.0, true, false);
    }
    if bucket.low > high {
        return (0.0, false, true);
    }
    if low <= bucket.low && high >= bucket.high {
        return (1.0, false, false);
    }
    let width = bucket.high - bucket.low;
    if low <= bucket.low {
        return ((high - bucket.low) / width, false, false);
    }
    if high >= bucket.high {
        return ((bucket.high - low) / width, false, false);
    }
    // The interval lies inside the bucket (TFDV raises for anything else; NaN bounds, which
    // never reach here, would be that).
    ((high - low) / width, false, false)
}

/// numpy's `linspace(start, stop, num + 1)`: `start + i * step`, the last exactly `stop`.
fn linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    let delta = stop - start;
    let step = delta / num as f64;
    let mut out: Vec<f64> = (0..=num)
        .map(|i| {
            if step == 0.0 {
                (i as f64 / num as f64) * delta + start
            } else {
                i as f64 * step + start
            }
        })
        .collect();
    out[num] = stop;
    out
}

/// The standard histogram of `num_buckets` equal-width buckets from `finite_min` to
/// `finite_max` (`generate_equi_width_histogram`), with a point bucket for -inf and +inf values
/// when there are any; empty when the bounds overflow.
pub(crate) fn equi_width_buckets(
    boundaries: &[f64],
    cumulative: &[f64],
    finite_min: f64,
    finite_max: f64,
    num_buckets: usize,
    num_pos_inf: f64,
) -> Vec<Bucket> {
    let mut out = Vec::new();
    if !finite_min.is_finite() && !finite_max.is_finite() {
        out.push(Bucket {
            low: finite_min,
            high: finite_max,
            count: cumulative.last().copied().unwrap_or(0.0),
        });
        return out;
    }
    let (bounds, cum, num_neg_inf) = strip_infinities(boundaries, cumulative, finite_max, num_pos_inf);
    let quantiles = quantiles_buckets(&bounds, &cum);
    let edges = if finite_min == finite_max {
        vec![finite_min, finite_max]
    } else {
        let edges = linspace(finite_min, finite_max, num_buckets);
        if !edges.iter().all(|e| e.is_finite()) {
            return out;
        }
        edges
    };
    if num_neg_inf != 0.0 {
        out.push(Bucket {
            low: f64::NEG_INFINITY,
            high: f64::NEG_INFINITY,
            count: num_neg_inf,
        });
    }
    let mut start = 0;
    for i in 0..edges.len() - 1 {
        let (low, high) = (edges[i], edges[i + 1]);
        let mut count = 0.0;
        for (index, bucket) in quantiles.iter().enumerate().skip(start) {
            let (share, precedes, follows) = overlap(bucket, low, high, i == 0);
            if follows {
                break;
            }
            if precedes {
                start = index;
            }
            count += share * bucket.count;
        }
        out.push(Bucket { low, high, count });
    }
    if num_pos_inf != 0.0 {
        out.push(Bucket {
            low: f64::INFINITY,
            high: f64::INFINITY,
            count: num_pos_inf,
        });
    }
    out
}

/// A `QUANTILES` histogram of `buckets`.
pub(crate) fn quantiles_histogram(buckets: &[Bucket], num_nan: u64) -> super::proto::Histogram {
    super::proto::Histogram {
        num_nan,
        buckets: buckets
            .iter()
            .map(|b| super::proto::histogram::Bucket {
                low_value: b.low,
                high_value: b.high,
                sample_count: b.count,
            })
            .collect(),
        r#type: super::proto::histogram::HistogramType::Quantiles as i32,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_boundaries_share_their_weight() {
        // Two examples with no values: every boundary 0, the weight 2 at the lowest one.
        let buckets = quantiles_buckets(&[0.0; 11], &[2.0; 11]);
        assert_eq!(buckets.len(), 10);
        assert!(buckets.iter().all(|b| b.count == 0.2 && b.low == 0.0 && b.high == 0.0));
    }

    #[test]
    fn median_of_odd_and_even_boundaries() {
        assert_eq!(median(&[1.0, 2.0, 5.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 5.0]), 3.0);
    }

    #[test]
    fn linspace_matches_numpy() {
        // numpy.linspace(-2.0, 1.5, 11)
        let edges = linspace(-2.0, 1.5, 10);
        assert_eq!(edges[2], -1.3);
        assert_eq!(edges[3], -0.9500000000000002);
        assert_eq!(edges[10], 1.5);
    }
}

//! The quantiles sketch TFDV uses (tfx_bsl's `QuantilesSketch`, on TensorFlow's boosted-trees
//! `WeightedQuantilesStream`), ported rule for rule so that tfrec's quantiles are TFDV's.
//!
//! Values go into a buffer; a full buffer is sorted, equal values merged, and pushed as a
//! summary (entries with their value, weight and rank bounds) up a ladder of levels, each
//! compressed to `block_size` entries within `eps` of rank. While fewer than `2 * block_size`
//! values have arrived (about 10,000 with TFDV's `epsilon = 0.01`), the final summary is exact,
//! and so are the quantiles; past that they are within `eps` in rank. Sketches of shards merge
//! ([`QuantilesSketch::merge`]) as tfx_bsl's do.
//!
//! Sources: tfx_bsl 1.16.1 `tfx_bsl/cc/sketches/{quantiles_sketch.cc,
//! weighted_quantiles_stream.h, weighted_quantiles_summary.h, weighted_quantiles_buffer.h}`.

/// One summary entry: a value, its weight, and the bounds of its rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Entry {
    pub(super) value: f64,
    pub(super) weight: f64,
    pub(super) min_rank: f64,
    pub(super) max_rank: f64,
}

impl Entry {
    fn prev_max_rank(&self) -> f64 {
        self.max_rank - self.weight
    }
    fn next_min_rank(&self) -> f64 {
        self.min_rank + self.weight
    }
}

/// A summary: entries sorted by value, with rank bounds.
#[derive(Debug, Clone, Default)]
pub(super) struct Summary {
    pub(super) entries: Vec<Entry>,
}

impl Summary {
    /// From sorted, deduplicated `(value, weight)` pairs: exact ranks.
    fn from_buffer(buffer: &[(f64, f64)]) -> Summary {
        let mut cumulative = 0.0;
        let entries = buffer
            .iter()
            .map(|&(value, weight)| {
                let entry = Entry {
                    value,
                    weight,
                    min_rank: cumulative,
                    max_rank: cumulative + weight,
                };
                cumulative += weight;
                entry
            })
            .collect();
        Summary { entries }
    }

    fn total_weight(&self) -> f64 {
        self.entries.last().map_or(0.0, |e| e.max_rank)
    }

    fn merge(&mut self, other: &Summary) {
        if other.entries.is_empty() {
            return;
        }
        if self.entries.is_empty() {
            self.entries.clone_from(&other.entries);
            return;
        }
        let base = std::mem::take(&mut self.entries);
        let other = &other.entries;
        let mut out = Vec::with_capacity(base.len() + other.len());
        let (mut i, mut j) = (0, 0);
        let (mut next_min_rank1, mut next_min_rank2) = (0.0, 0.0);
        while i < base.len() && j < other.len() {
            let (a, b) = (base[i], other[j]);
            if a.value < b.value {
                out.push(Entry {
                    min_rank: a.min_rank + next_min_rank2,
                    max_rank: a.max_rank + b.prev_max_rank(),
                    ..a
                });
                next_min_rank1 = a.next_min_rank();
                i += 1;
            } else if b.value < a.value {
                out.push(Entry {
                    min_rank: b.min_rank + next_min_rank1,
                    max_rank: b.max_rank + a.prev_max_rank(),
                    ..b
                });
                next_min_rank2 = b.next_min_rank();
                j += 1;
            } else {
                out.push(Entry {
                    value: a.value,
                    weight: a.weight + b.weight,
                    min_rank: a.min_rank + b.min_rank,
                    max_rank: a.max_rank + b.max_rank,
                });
                next_min_rank1 = a.next_min_rank();
                next_min_rank2 = b.next_min_rank();
                i += 1;
                j += 1;
            }
        }
        let (base_last, other_last) = (base[base.len() - 1].max_rank, other[other.len() - 1].max_rank);
        for a in &base[i..] {
            out.push(Entry {
                min_rank: a.min_rank + next_min_rank2,
                max_rank: a.max_rank + other_last,
                ..*a
            });
        }
        for b in &other[j..] {
            out.push(Entry {
                min_rank: b.min_rank + next_min_rank1,
                max_rank: b.max_rank + base_last,
                ..*b
            });
        }
        self.entries = out;
    }

    /// Keeps about `size_hint` entries, each step within `max(1/size_hint, min_eps)` of the
    /// total weight in rank.
    fn compress(&mut self, size_hint: i64, min_eps: f64) {
        let size_hint = size_hint.max(2);
        if self.entries.len() as i64 <= size_hint {
            return;
        }
        let eps_delta = self.total_weight() * (1.0 / size_hint as f64).max(min_eps);
        let entries = &mut self.entries;
        let (mut add_accumulator, add_step) = (0i64, entries.len() as i64);
        let mut write = 1;
        let mut last = 1;
        let mut read = 0;
        while read + 1 != entries.len() {
            let mut next = read + 1;
            while next != entries.len()
                && add_accumulator < add_step
                && entries[next].prev_max_rank() - entries[read].next_min_rank() <= eps_delta
            {
                add_accumulator += size_hint;
                next += 1;
            }
            if read == next - 1 {
                read += 1;
            } else {
                read = next - 1;
            }
            entries[write] = entries[read];
            write += 1;
            last = read;
            add_accumulator -= add_step;
        }
        if last + 1 != entries.len() {
            entries[write] = entries[entries.len() - 1];
            write += 1;
        }
        entries.truncate(write);
    }

    /// `num_quantiles + 1` boundaries (the minimum first, the maximum last) and the cumulative
    /// weight up to each; nothing when the summary is empty.
    fn quantiles_and_cumulative_weights(&self, num_quantiles: usize) -> (Vec<f64>, Vec<f64>) {
        let entries = &self.entries;
        let (mut values, mut weights) = (Vec::new(), Vec::new());
        let Some(last) = entries.last() else {
            return (values, weights);
        };
        let num_quantiles = num_quantiles.max(2);
        let mut cur = 0;
        for rank in 0..=num_quantiles {
            let d_2 = 2.0 * (rank as f64 * last.max_rank / num_quantiles as f64);
            let mut next = cur + 1;
            while next < entries.len() && d_2 >= entries[next].min_rank + entries[next].max_rank {
                next += 1;
            }
            cur = next - 1;
            let chosen = if next == entries.len() || d_2 < entries[cur].next_min_rank() + entries[next].prev_max_rank()
            {
                &entries[cur]
            } else {
                &entries[next]
            };
            values.push(chosen.value);
            weights.push(chosen.max_rank);
        }
        (values, weights)
    }
}

/// A mergeable quantiles sketch of unweighted values, as TFDV makes one for each feature
/// (`QuantilesSketch(eps, max_num_elements=1 << 32, num_streams=1)`).
#[derive(Debug, Clone)]
pub struct QuantilesSketch {
    /// The stream's error bound: a third of the sketch's (tfx_bsl's allowance for its three
    /// levels of compression).
    pub(super) eps: f64,
    /// Entries per compressed summary (and half the buffer's capacity).
    pub(super) block_size: i64,
    /// Values not yet summarised, at most `2 * block_size`.
    pub(super) buffer: Vec<(f64, f64)>,
    /// The summary being propagated (empty between pushes).
    pub(super) local: Summary,
    /// One summary per level, each within `block_size + 1` entries.
    pub(super) levels: Vec<Summary>,
}

/// TFDV's bound on the number of values a sketch is sized for.
const MAX_NUM_ELEMENTS: i64 = 1 << 32;

impl QuantilesSketch {
    /// An empty sketch with rank error `eps` (TFDV's `StatsOptions.epsilon`, 0.01 by
    /// default); `eps` must be in (0, 1).
    pub fn new(eps: f64) -> QuantilesSketch {
        let eps = eps / 3.0;
        let block_size = quantile_block_size(eps, MAX_NUM_ELEMENTS);
        QuantilesSketch {
            eps,
            block_size,
            buffer: Vec::new(),
            local: Summary::default(),
            levels: Vec::new(),
        }
    }

    /// Adds one value of weight 1; NaN is ignored, as tfx_bsl ignores it.
    pub fn add(&mut self, value: f64) {
        self.push_entry(value, 1.0);
    }

    /// Adds one value `count` times (a pre-aggregated run, as TFDV adds value counts).
    pub fn add_count(&mut self, value: f64, count: u64) {
        self.push_entry(value, count as f64);
    }

    fn push_entry(&mut self, value: f64, weight: f64) {
        if value.is_nan() || weight <= 0.0 {
            return;
        }
        self.buffer.push((value, weight));
        if self.buffer.len() as i64 >= (self.block_size << 1).min(MAX_NUM_ELEMENTS) {
            self.push_buffer();
        }
    }

    fn push_buffer(&mut self) {
        // The buffer is sorted and summarised in place, and keeps its allocation.
        let mut entries = std::mem::take(&mut self.buffer);
        // Sorted on values (order among equal values does not matter: equal keys are equal
        // bits, merged next with weights that are whole numbers, so summed exactly in any
        // order; -0.0 sorts just before 0.0, which it equals and is merged with).
        sort_by_value(&mut entries);
        entries.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 += later.1;
            }
            same
        });
        self.local = Summary::from_buffer(&entries);
        entries.clear();
        self.buffer = entries;
        self.local.compress(self.block_size, self.eps);
        self.propagate_local();
    }

    fn push_summary(&mut self, summary: &Summary) {
        self.local = summary.clone();
        self.local.compress(self.block_size, self.eps);
        self.propagate_local();
    }

    fn propagate_local(&mut self) {
        if self.local.entries.is_empty() {
            return;
        }
        let mut level = 0;
        loop {
            if self.levels.len() <= level {
                self.levels.push(Summary::default());
            }
            let current = &mut self.levels[level];
            self.local.merge(current);
            if current.entries.is_empty() || self.local.entries.len() as i64 <= self.block_size + 1 {
                let mut entries = std::mem::take(&mut self.local.entries);
                // A level holds its summary until a later push reaches it, and a merged or
                // compressed summary has up to twice its entries' room: what a sketch keeps
                // over a long stream is its levels, a feature each, so they keep only their
                // entries.
                if entries.capacity() > entries.len() + entries.len() / 8 {
                    entries = entries.as_slice().to_vec();
                }
                current.entries = entries;
                return;
            }
            self.local.compress(self.block_size, self.eps);
            // An emptied level gives its room back: the summary it held moves up a level.
            current.entries = Vec::new();
            level += 1;
        }
    }

    /// Adds everything `other` holds (tfx_bsl's `Merge`: its buffer value by value, then its
    /// summaries).
    pub fn merge(&mut self, other: &QuantilesSketch) {
        for &(value, weight) in &other.buffer {
            self.push_entry(value, weight);
        }
        for summary in other.levels.iter().chain(std::iter::once(&other.local)) {
            if !summary.entries.is_empty() {
                self.push_summary(summary);
            }
        }
    }

    /// The final summary (tfx_bsl's `Finalize`), leaving `self` as it was.
    fn final_summary(&self) -> Summary {
        let mut copy = self.clone();
        copy.push_buffer();
        let mut summary = Summary::default();
        for level in &copy.levels {
            summary.merge(level);
        }
        summary
    }

    /// `num_quantiles + 1` boundaries and the cumulative weight at each (tfx_bsl's
    /// `GetQuantilesAndCumulativeWeights`); both empty when no value was added.
    pub fn quantiles_and_cumulative_weights(&self, num_quantiles: usize) -> (Vec<f64>, Vec<f64>) {
        self.final_summary().quantiles_and_cumulative_weights(num_quantiles)
    }

    /// tfx_bsl's `Compact`: the final summary pushed into a fresh stream (one more compression
    /// when it holds more than a block), as TFDV's combiner does once before extracting.
    pub fn compact(&mut self) {
        let summary = self.final_summary();
        self.buffer.clear();
        self.local = Summary::default();
        self.levels.clear();
        if !summary.entries.is_empty() {
            self.push_summary(&summary);
        }
    }

    /// Whether no value has been added.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty() && self.levels.iter().all(|s| s.entries.is_empty())
    }
}

/// An integer that orders as `f64::total_cmp` orders its value (the same bit trick).
#[inline]
fn total_order_key(value: f64) -> i64 {
    let bits = value.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// Buffers shorter than this are sorted by comparison: below it, a radix sort's passes over
/// its byte counts cost more than the comparisons they save.
const RADIX_SORT_MIN_LEN: usize = 512;

/// Sorts `entries` by value in `f64::total_cmp`'s order (order among equal values
/// unspecified). A full buffer is radix-sorted (`radsort`: a pass per byte of the value's
/// order key, skipping the bytes every key shares, such as the low bytes of whole numbers and
/// of widened `f32`s): the sort of the buffer is the sketch's largest cost, and this is a few
/// linear passes instead of `log2(len)` comparisons per value. When every weight is 1 (values
/// added one by one, the usual case), only the values are sorted, half the bytes to move, and
/// the weights put back.
fn sort_by_value(entries: &mut [(f64, f64)]) {
    if entries.len() < RADIX_SORT_MIN_LEN {
        entries.sort_unstable_by_key(|&(value, _)| total_order_key(value));
        return;
    }
    if entries.iter().all(|&(_, weight)| weight == 1.0) {
        let mut values: Vec<f64> = entries.iter().map(|&(value, _)| value).collect();
        radsort::sort(&mut values);
        for (entry, value) in entries.iter_mut().zip(values) {
            *entry = (value, 1.0);
        }
    } else {
        radsort::sort_by_key(entries, |&(value, _)| value);
    }
}

/// `GetQuantileSpecs`' block size for a stream of at most `max_elements` values.
fn quantile_block_size(eps: f64, max_elements: i64) -> i64 {
    let mut block_size: i64 = 2;
    if eps <= f64::EPSILON {
        return max_elements.max(2);
    }
    let mut max_level: i64 = 1;
    while (1i64 << max_level) * block_size < max_elements {
        block_size = (max_level as f64 / eps).ceil() as i64 + 1;
        max_level += 1;
    }
    block_size.max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_inputs_are_exact() {
        let mut sketch = QuantilesSketch::new(0.01);
        for v in [3.0, 1.0, 2.0, 2.0, f64::NAN] {
            sketch.add(v);
        }
        let (q, w) = sketch.quantiles_and_cumulative_weights(4);
        // tfx_bsl 1.16.1's answer to the same calls.
        assert_eq!(q, [1.0, 2.0, 2.0, 3.0, 3.0]);
        assert_eq!(w, [1.0, 3.0, 3.0, 4.0, 4.0]);
    }

    /// tfx_bsl 1.16.1's `QuantilesSketch(0.01, 1 << 32, 1)` on `(i * 7919) % 100003` for `i`
    /// below 50,000 (past one buffer, so compressed), without and with `Compact`.
    #[test]
    fn compressed_quantiles_are_tfx_bsl_s() {
        let mut sketch = QuantilesSketch::new(0.01);
        for i in 0..50_000u64 {
            sketch.add(((i * 7919) % 100_003) as f64);
        }
        let (q, w) = sketch.quantiles_and_cumulative_weights(10);
        let want_q = [
            0.0, 9991.0, 19994.0, 30007.0, 40001.0, 50006.0, 60003.0, 70001.0, 79998.0, 90003.0, 100001.0,
        ];
        let want_w = [
            1.0, 5000.0, 10007.0, 15007.0, 20006.0, 25006.0, 30004.0, 35002.0, 40002.0, 45001.0, 50000.0,
        ];
        assert_eq!((q, w), (want_q.to_vec(), want_w.to_vec()));
        sketch.compact();
        let (q, w) = sketch.quantiles_and_cumulative_weights(10);
        let want_q = [
            0.0, 9991.0, 19989.0, 30007.0, 40001.0, 50006.0, 60003.0, 70001.0, 80011.0, 90016.0, 100001.0,
        ];
        let want_w = [
            1.0, 5000.0, 9999.0, 15007.0, 20006.0, 25006.0, 30004.0, 35002.0, 40010.0, 45009.0, 50000.0,
        ];
        assert_eq!((q, w), (want_q.to_vec(), want_w.to_vec()));
    }

    #[test]
    fn the_radix_sort_orders_as_total_cmp() {
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -f64::MAX,
            1e-310,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let values: Vec<f64> = (0..5_000)
            .map(|i| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                match i % 4 {
                    0 => specials[(state >> 33) as usize % specials.len()],
                    1 => ((state >> 40) % 100) as f64 - 50.0,
                    2 => {
                        f64::from(f32::from_bits((state >> 32) as u32 & 0x7f7f_ffff))
                            * if state & 1 == 0 { 1.0 } else { -1.0 }
                    }
                    _ => f64::from_bits(state & !(0x7ff << 52) | (((state >> 52) % 0x7ff) << 52)),
                }
            })
            .collect();
        for len in [0, 1, 2, RADIX_SORT_MIN_LEN - 1, RADIX_SORT_MIN_LEN, values.len()] {
            let mut entries: Vec<(f64, f64)> = values[..len].iter().map(|&v| (v, 1.0)).collect();
            sort_by_value(&mut entries);
            // With weights other than 1, the entries move whole.
            let mut weighted: Vec<(f64, f64)> = values[..len].iter().map(|&v| (v, v.abs().max(2.0))).collect();
            sort_by_value(&mut weighted);
            assert!(weighted.iter().all(|&(v, w)| w == v.abs().max(2.0)));
            assert!(weighted
                .iter()
                .map(|e| e.0.to_bits())
                .eq(entries.iter().map(|e| e.0.to_bits())));
            let mut want = values[..len].to_vec();
            want.sort_unstable_by(f64::total_cmp);
            let sorted: Vec<u64> = entries.iter().map(|e| e.0.to_bits()).collect();
            let want: Vec<u64> = want.iter().map(|v| v.to_bits()).collect();
            assert_eq!(sorted, want, "{len} values");
        }
    }

    #[test]
    fn large_inputs_stay_within_eps_in_rank() {
        let n = 200_000u32;
        let mut sketch = QuantilesSketch::new(0.01);
        // A permutation of 0..n, so that the true rank of value v is v.
        for i in 0..n {
            sketch.add(f64::from((i.wrapping_mul(7919)) % n));
        }
        let (q, _) = sketch.quantiles_and_cumulative_weights(10);
        for (k, value) in q.iter().enumerate() {
            let want = k as f64 / 10.0 * f64::from(n);
            assert!(
                (value - want).abs() <= 0.01 * f64::from(n),
                "quantile {k}: {value} vs {want}"
            );
        }
    }

    /// A long stream's sketch holds its levels in little more room than their entries, and an
    /// empty level in none: the levels are what a statistics pass keeps per feature to its
    /// end.
    #[test]
    fn levels_keep_only_their_entries_room() {
        let mut sketch = QuantilesSketch::new(0.01);
        let buffer = (sketch.block_size * 2) as u64;
        // Enough full buffers for several levels, some of them empty at the end.
        for i in 0..buffer * 45 {
            sketch.add(((i * 7919) % 1_000_003) as f64);
        }
        assert!(sketch.levels.len() >= 5, "{} levels", sketch.levels.len());
        assert!(sketch.levels.iter().any(|level| level.entries.is_empty()));
        for (n, level) in sketch.levels.iter().enumerate() {
            let (len, room) = (level.entries.len(), level.entries.capacity());
            assert!(room <= len + len / 8, "level {n}: {len} entries in room for {room}");
        }
    }

    #[test]
    fn merged_shards_stay_within_eps_in_rank() {
        let n = 100_000u32;
        let mut shards: Vec<QuantilesSketch> = (0..4).map(|_| QuantilesSketch::new(0.01)).collect();
        for i in 0..n {
            shards[(i % 4) as usize].add(f64::from(i));
        }
        let mut merged = QuantilesSketch::new(0.01);
        for shard in &shards {
            merged.merge(shard);
        }
        let (q, w) = merged.quantiles_and_cumulative_weights(4);
        assert_eq!(w.last().copied(), Some(f64::from(n)));
        for (k, value) in q.iter().enumerate() {
            let want = k as f64 / 4.0 * f64::from(n);
            assert!(
                (value - want).abs() <= 0.01 * f64::from(n),
                "quantile {k}: {value} vs {want}"
            );
        }
    }
}

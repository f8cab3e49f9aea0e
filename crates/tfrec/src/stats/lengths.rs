//! Lists counted by their number of values, exactly: the values per example of a feature,
//! and a feature list's steps per example and values per step, from which the values-per-list
//! histograms are drawn.

use rustc_hash::FxHashMap;

/// Lengths below this are counted by index in a vector, larger ones in a map.
const SMALL_LENGTHS: u64 = 64;

/// Lists by their number of values, exact (TFDV sketches counts aggregated per batch, which
/// is exact for the few distinct counts data has): counted once per list, so the common short
/// lengths are counted by index in a vector, and only long ones hashed.
#[derive(Debug, Clone, Default)]
pub(super) struct LengthCounts {
    /// Lists of `i` values, for `i` below `SMALL_LENGTHS`.
    small: Vec<u64>,
    /// Lists by their length: the longer ones, and whatever a partial state read back held.
    large: FxHashMap<u64, u64>,
}

impl LengthCounts {
    /// Counts `lists` lists of `length` values each.
    #[inline]
    pub(super) fn add(&mut self, length: u64, lists: u64) {
        if length < SMALL_LENGTHS {
            let i = length as usize;
            if self.small.len() <= i {
                self.small.resize(i + 1, 0);
            }
            self.small[i] += lists;
        } else {
            *self.large.entry(length).or_insert(0) += lists;
        }
    }

    pub(super) fn merge(&mut self, other: &LengthCounts) {
        if self.small.len() < other.small.len() {
            self.small.resize(other.small.len(), 0);
        }
        for (ours, theirs) in self.small.iter_mut().zip(&other.small) {
            *ours += theirs;
        }
        for (&length, &lists) in &other.large {
            *self.large.entry(length).or_insert(0) += lists;
        }
    }

    /// `(length, lists)`, by length, each length once.
    pub(super) fn sorted(&self) -> Vec<(u64, u64)> {
        let mut counts: Vec<(u64, u64)> = (0u64..)
            .zip(&self.small)
            .filter(|(_, &c)| c > 0)
            .map(|(n, &c)| (n, c))
            .chain(self.large.iter().map(|(&n, &c)| (n, c)))
            .collect();
        counts.sort_unstable();
        // A length can be in both places only after a partial state put it in the map.
        counts.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 += later.1;
            }
            same
        });
        counts
    }

    /// The counts a partial state held.
    pub(super) fn from_map(large: FxHashMap<u64, u64>) -> LengthCounts {
        LengthCounts {
            small: Vec::new(),
            large,
        }
    }
}

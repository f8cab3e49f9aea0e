//! How many elements a data set has, by tf.data's rules (`Dataset.cardinality`): known from
//! the plan alone where tf.data knows it, unknown where only reading would tell.

use super::items::ItemStage;
use super::stages::Stage;

/// The number of elements of a data set, as tf.data's `cardinality` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cardinality {
    /// This many elements.
    Finite(u64),
    /// Endless (after a `repeat` without a count over a non-empty input).
    Infinite,
    /// Not known without reading (records of files, anything after a `filter`).
    Unknown,
}

impl Cardinality {
    /// tf.data's number for it: the count, -1 for infinite, -2 for unknown.
    pub fn as_tf(self) -> i64 {
        match self {
            Cardinality::Finite(n) => i64::try_from(n).unwrap_or(i64::MAX),
            Cardinality::Infinite => -1,
            Cardinality::Unknown => -2,
        }
    }
}

impl Stage {
    /// The elements after this stage, given `before` of them.
    pub(super) fn cardinality(&self, before: Cardinality) -> Cardinality {
        use Cardinality::{Finite, Infinite, Unknown};
        match (*self, before) {
            (Stage::Shuffle { .. }, n) => n,
            (Stage::Repeat(Some(0)), _) | (Stage::Repeat(_), Finite(0)) => Finite(0),
            (Stage::Repeat(None), _) | (Stage::Repeat(_), Infinite) => Infinite,
            (Stage::Repeat(Some(count)), Finite(n)) => Finite(n.saturating_mul(count)),
            (_, Unknown) => Unknown,
            (Stage::Take(count), Infinite) => Finite(count),
            (Stage::Take(count), Finite(n)) => Finite(n.min(count)),
            (Stage::Skip(_) | Stage::Shard { .. }, Infinite) => Infinite,
            (Stage::Skip(count), Finite(n)) => Finite(n.saturating_sub(count)),
            (Stage::Shard { num_shards, index }, Finite(n)) => {
                let (shards, index) = (num_shards as u64, index as u64);
                Finite(n / shards + u64::from(index < n % shards))
            }
        }
    }
}

/// The elements after `batch(size, drop_remainder)`, given `before` of them.
pub(super) fn batched(before: Cardinality, size: usize, drop_remainder: bool) -> Cardinality {
    let size = size.max(1) as u64;
    match before {
        Cardinality::Finite(n) if drop_remainder => Cardinality::Finite(n / size),
        Cardinality::Finite(n) => Cardinality::Finite(n.div_ceil(size)),
        other => other,
    }
}

impl<E> ItemStage<E> {
    /// The elements after this stage, given `before` of them.
    pub(super) fn cardinality(&self, before: Cardinality) -> Cardinality {
        match self {
            ItemStage::Stage(stage) => stage.cardinality(before),
            ItemStage::Map(_) => before,
            ItemStage::Filter(_) => Cardinality::Unknown,
            ItemStage::Batch {
                size, drop_remainder, ..
            } => batched(before, *size, *drop_remainder),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cardinality::{Finite, Infinite, Unknown};
    use super::*;

    #[test]
    fn follows_tf_data() {
        let shard = Stage::Shard {
            num_shards: 3,
            index: 1,
        };
        assert_eq!(shard.cardinality(Finite(7)), Finite(2));
        assert_eq!(shard.cardinality(Finite(5)), Finite(2));
        assert_eq!(shard.cardinality(Finite(4)), Finite(1));
        assert_eq!(Stage::Repeat(Some(0)).cardinality(Unknown), Finite(0));
        assert_eq!(Stage::Repeat(None).cardinality(Finite(0)), Finite(0));
        assert_eq!(Stage::Repeat(None).cardinality(Unknown), Infinite);
        assert_eq!(Stage::Repeat(Some(3)).cardinality(Unknown), Unknown);
        assert_eq!(Stage::Repeat(Some(3)).cardinality(Finite(4)), Finite(12));
        assert_eq!(Stage::Take(5).cardinality(Infinite), Finite(5));
        assert_eq!(Stage::Take(5).cardinality(Unknown), Unknown);
        assert_eq!(Stage::Skip(5).cardinality(Finite(3)), Finite(0));
        assert_eq!(Stage::Skip(5).cardinality(Infinite), Infinite);
        assert_eq!(batched(Finite(10), 3, false), Finite(4));
        assert_eq!(batched(Finite(10), 3, true), Finite(3));
        assert_eq!(batched(Infinite, 3, true), Infinite);
        assert_eq!(Infinite.as_tf(), -1);
        assert_eq!(Unknown.as_tf(), -2);
    }
}

//! Inferring what features a set of records holds: kind, values per record, presence. The
//! feature spec that would parse them is `Schema::to_spec`, in the parse layer.

use indexmap::IndexMap;

use super::model::{Example, Feature, Features, Kind, SequenceExample};

/// What was seen of one feature (or one feature list) over the records observed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureStats {
    /// Kinds seen (more than one means the data disagrees with itself).
    pub kinds: Vec<Kind>,
    /// Records in which the feature is present.
    pub present: u64,
    /// Records in which it is present but has no kind set.
    pub no_kind: u64,
    /// Fewest and most values in one record (for a feature list: in one step).
    pub min_values: usize,
    /// Most values in one record (for a feature list: in one step).
    pub max_values: usize,
    /// For a feature list: fewest and most steps in one record.
    pub min_steps: usize,
    /// For a feature list: most steps in one record.
    pub max_steps: usize,
}

impl FeatureStats {
    fn observe_values(&mut self, feature: &Feature) {
        self.observe_count(feature.kind(), feature.len());
    }

    /// Notes one value set (a feature of a record, or a step of a feature list) of `kind` with
    /// `n` values; the caller counts [`present`](Self::present).
    pub(crate) fn observe_count(&mut self, kind: Option<Kind>, n: usize) {
        // Every observation sets a kind or counts a missing one; `present` is no guide, as a
        // feature list's steps are all observed before its record is counted.
        let first = self.kinds.is_empty() && self.no_kind == 0;
        match kind {
            None => self.no_kind += 1,
            Some(kind) => {
                if !self.kinds.contains(&kind) {
                    self.kinds.push(kind);
                }
            }
        }
        self.min_values = if first { n } else { self.min_values.min(n) };
        self.max_values = self.max_values.max(n);
    }

    /// Notes a feature list's number of steps in one record, before the record is counted
    /// [`present`](Self::present).
    pub(crate) fn observe_steps(&mut self, steps: usize) {
        let first = self.present == 0;
        self.min_steps = if first { steps } else { self.min_steps.min(steps) };
        self.max_steps = self.max_steps.max(steps);
    }

    /// The one kind seen, if the data agrees on it.
    pub fn kind(&self) -> Option<Kind> {
        match self.kinds.as_slice() {
            [k] => Some(*k),
            _ => None,
        }
    }
}

/// Feature statistics over many records, in the order features were first seen.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// Records observed.
    pub records: u64,
    /// Features of Examples, or context features of SequenceExamples.
    pub features: IndexMap<String, FeatureStats>,
    /// Feature lists of SequenceExamples.
    pub feature_lists: IndexMap<String, FeatureStats>,
}

impl Schema {
    /// Adds one Example.
    pub fn observe_example(&mut self, example: &Example) {
        self.records += 1;
        observe_features(&mut self.features, example.features());
    }

    /// Adds one SequenceExample.
    pub fn observe_sequence(&mut self, seq: &SequenceExample) {
        self.records += 1;
        if let Some(context) = &seq.context {
            observe_features(&mut self.features, context);
        }
        for (name, list) in seq.feature_lists.iter().flat_map(|l| l.iter()) {
            let stats = self.feature_lists.entry(name.to_owned()).or_default();
            for step in &list.feature {
                stats.observe_values(step);
            }
            stats.observe_steps(list.feature.len());
            stats.present += 1;
        }
    }
}

fn observe_features(into: &mut IndexMap<String, FeatureStats>, features: &Features) {
    for (name, feature) in features.iter() {
        let stats = into.entry(name.to_owned()).or_default();
        stats.observe_values(feature);
        stats.present += 1;
    }
}

/// A schema of three Examples: `id` (one int64), `pair` (two floats), `tags` (0, 1, 2 int64s).
#[cfg(test)]
pub(crate) fn three_examples() -> Schema {
    let mut schema = Schema::default();
    for i in 0..3 {
        let ex = Example::builder()
            .int64("id", i)
            .float("pair", [1.0f32, 2.0])
            .int64("tags", vec![1i64; i as usize])
            .build()
            .expect("a valid example");
        schema.observe_example(&ex);
    }
    schema
}

/// A schema of one SequenceExample: context `age` (a float), lists `ratings` (two floats per
/// step) and `actors` (two, then one string).
#[cfg(test)]
pub(crate) fn one_sequence() -> Schema {
    let mut schema = Schema::default();
    let seq = SequenceExample::builder()
        .context_float("age", 19.0)
        .float_list("ratings", [4.5f32, 5.0])
        .bytes_list("actors", [vec!["a", "b"], vec!["c"]])
        .build()
        .expect("a valid sequence example");
    schema.observe_sequence(&seq);
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_follow_the_records() {
        let mut schema = three_examples();
        schema.observe_example(
            &Example::builder()
                .int64("id", 3)
                .float("pair", [0.0f32, 1.0])
                .build()
                .unwrap(),
        );
        assert_eq!(schema.features["pair"].min_values, 2);
        assert_eq!(schema.features["tags"].min_values, 0);
        assert_eq!(schema.features["tags"].present, 3);
    }

    #[test]
    fn sequences_are_counted_per_step() {
        let schema = one_sequence();
        assert_eq!(schema.features["age"].kind(), Some(Kind::Float));
        assert_eq!(schema.feature_lists["actors"].min_values, 1);
        assert_eq!(schema.feature_lists["actors"].max_values, 2);
    }
}

//! Read-only questions about one feature's statistics that schema inference and validation
//! both ask (TFDV's `FeatureStatsView`, `anomalies/statistics_view.cc` in TFDV 1.16.1): its
//! path, type, presence, values per example and string values with their counts.

use std::collections::BTreeMap;

use super::error::StatsError;
use super::proto::{
    feature_name_statistics, CommonStatistics, DatasetFeatureStatistics, DatasetFeatureStatisticsList,
    FeatureNameStatistics, FeatureType,
};

/// The slice TFDV validates and infers from when a list holds several (`constants.DEFAULT_SLICE_KEY`).
const DEFAULT_SLICE: &str = "All Examples";

/// The data set TFDV works on (`_get_default_dataset_statistics`): the only one, or the one
/// named `All Examples`.
pub(crate) fn default_dataset(list: &DatasetFeatureStatisticsList) -> Result<&DatasetFeatureStatistics, StatsError> {
    match list.datasets.as_slice() {
        [only] => Ok(only),
        datasets => datasets
            .iter()
            .find(|d| d.name == DEFAULT_SLICE)
            .ok_or(StatsError::NoDefaultSlice {
                datasets: datasets.len(),
            }),
    }
}

/// A feature's path as TFDV serializes it (`Path::Serialize`): its steps joined by `.`, a step
/// that holds `.`, `(` or `)` written in parentheses.
pub(crate) fn serialize_path(steps: &[String]) -> String {
    steps
        .iter()
        .map(|step| {
            if step.contains(['.', '(', ')']) {
                format!("({step})")
            } else {
                step.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// One feature's statistics within its data set.
#[derive(Clone, Copy)]
pub(crate) struct FeatureView<'a> {
    pub(crate) stats: &'a FeatureNameStatistics,
    pub(crate) num_examples: u64,
}

impl<'a> FeatureView<'a> {
    /// The features of a data set that carry common statistics (TFDV drops the others first:
    /// `_remove_features_missing_common_stats`).
    pub(crate) fn all(dataset: &'a DatasetFeatureStatistics) -> Vec<FeatureView<'a>> {
        dataset
            .features
            .iter()
            .filter(|f| common_stats(f).is_some())
            .map(|stats| FeatureView {
                stats,
                num_examples: dataset.num_examples,
            })
            .collect()
    }

    /// The feature's path steps (a bare `name` is a one-step path).
    pub(crate) fn steps(&self) -> Vec<String> {
        match &self.stats.field_id {
            Some(feature_name_statistics::FieldId::Path(path)) => path.step.clone(),
            Some(feature_name_statistics::FieldId::Name(name)) => vec![name.clone()],
            None => vec![String::new()],
        }
    }

    /// The statistics' own type (`FeatureNameStatistics.Type`).
    pub(crate) fn stats_type(&self) -> feature_name_statistics::Type {
        feature_name_statistics::Type::try_from(self.stats.r#type).unwrap_or(feature_name_statistics::Type::Int)
    }

    /// The schema type the statistics' type maps to (`GetFeatureType`).
    pub(crate) fn feature_type(&self) -> FeatureType {
        use feature_name_statistics::Type;
        match feature_name_statistics::Type::try_from(self.stats.r#type) {
            Ok(Type::Bytes | Type::String) => FeatureType::Bytes,
            Ok(Type::Int) => FeatureType::Int,
            Ok(Type::Float) => FeatureType::Float,
            Ok(Type::Struct) => FeatureType::Struct,
            Err(_) => FeatureType::TypeUnknown,
        }
    }

    fn common(&self) -> CommonStatistics {
        common_stats(self.stats).cloned().unwrap_or_default()
    }

    pub(crate) fn num_present(&self) -> f64 {
        self.common().num_non_missing as f64
    }

    pub(crate) fn num_missing(&self) -> f64 {
        self.common().num_missing as f64
    }

    /// The fraction of examples holding the feature; none when there are no examples.
    pub(crate) fn fraction_present(&self) -> Option<f64> {
        if self.num_examples == 0 {
            return None;
        }
        if self.num_missing() == 0.0 {
            return Some(1.0);
        }
        Some(self.num_present() / self.num_examples as f64)
    }

    /// Missing counts per nesting level (one level for an Example's feature).
    pub(crate) fn num_missing_nested(&self) -> Vec<f64> {
        let common = self.common();
        if common.presence_and_valency_stats.is_empty() {
            vec![common.num_missing as f64]
        } else {
            common
                .presence_and_valency_stats
                .iter()
                .map(|p| p.num_missing as f64)
                .collect()
        }
    }

    /// (min, max) values per example, per nesting level.
    pub(crate) fn min_max_num_values(&self) -> Vec<(i64, i64)> {
        let common = self.common();
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        if common.presence_and_valency_stats.is_empty() {
            vec![(clamp(common.min_num_values), clamp(common.max_num_values))]
        } else {
            common
                .presence_and_valency_stats
                .iter()
                .map(|p| (clamp(p.min_num_values), clamp(p.max_num_values)))
                .collect()
        }
    }

    pub(crate) fn has_nested_values(&self) -> bool {
        self.common().presence_and_valency_stats.len() > 1
    }

    /// Values in all examples (`GetTotalValueCountInExamples`).
    pub(crate) fn total_value_count(&self) -> f64 {
        let common = self.common();
        if common.tot_num_values == 0 {
            common.num_non_missing as f64 * f64::from(common.avg_num_values)
        } else {
            common.tot_num_values as f64
        }
    }

    fn string_stats(&self) -> Option<&'a super::proto::StringStatistics> {
        match &self.stats.stats {
            Some(feature_name_statistics::Stats::StringStats(s)) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn num_stats(&self) -> Option<&'a super::proto::NumericStatistics> {
        match &self.stats.stats {
            Some(feature_name_statistics::Stats::NumStats(s)) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn has_invalid_utf8(&self) -> bool {
        self.string_stats().is_some_and(|s| s.invalid_utf8_count > 0)
    }

    /// The distinct values of the rank histogram with their counts, in byte order.
    pub(crate) fn string_values_with_counts(&self) -> BTreeMap<String, f64> {
        super::drift::string_value_counts(self.stats)
    }

    pub(crate) fn string_values(&self) -> Vec<String> {
        self.string_values_with_counts().into_keys().collect()
    }

    pub(crate) fn num_unique(&self) -> Option<u64> {
        self.string_stats().map(|s| s.unique)
    }
}

fn common_stats(stats: &FeatureNameStatistics) -> Option<&CommonStatistics> {
    use feature_name_statistics::Stats;
    match stats.stats.as_ref()? {
        Stats::NumStats(s) => s.common_stats.as_ref(),
        Stats::StringStats(s) => s.common_stats.as_ref(),
        Stats::BytesStats(s) => s.common_stats.as_ref(),
        Stats::StructStats(s) => s.common_stats.as_ref(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_serialize_as_tfdv_does() {
        assert_eq!(serialize_path(&["a".into(), "b".into()]), "a.b");
        assert_eq!(serialize_path(&["a.b".into()]), "(a.b)");
    }
}

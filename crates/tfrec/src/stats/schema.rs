//! A tensorflow_metadata `Schema` inferred from statistics, by `tfdv.infer_schema`'s rules
//! (TFDV 1.16.1: `Schema::Updater::CreateColumn` and `InitPresenceAndShape` in its C++
//! `anomalies/`), and schemas to and from the protobuf text format.
//!
//! Per feature, in the statistics' order:
//! - type: `INT`, `FLOAT`, `BYTES` (strings), `STRUCT`;
//! - presence: `min_count: 1` when some example holds it (0 otherwise), and
//!   `min_fraction: 1.0` when none misses it;
//! - values per example: with `infer_feature_shape` and the feature in every example with the
//!   same positive number of values, `shape { dim { size: N } }`; otherwise, when every
//!   example present has at least one value, `value_count { min: N max: N }` for a fixed
//!   count or `value_count { min: 1 }` for a varying one (`value_counts` per level for nested
//!   values);
//! - domain, first that fits: none when a string is not UTF-8; `bool_domain` for an integer
//!   in [0, 1] with max 1 or for strings that are at most one true and one false spelling;
//!   an empty `int_domain` for strings that are all integers; a `string_domain` named after
//!   the feature, with the rank histogram's values in byte order, when there are at most
//!   `max_string_domain_size` of them.

use std::collections::HashSet;

use super::error::StatsError;
use super::proto::{
    feature, feature_name_statistics, fixed_shape, BoolDomain, DatasetFeatureStatisticsList, Feature, FeaturePresence,
    FixedShape, IntDomain, Schema, StringDomain, ValueCount, ValueCountList,
};
use super::text::{message_from_text, message_to_text};
use super::view::{default_dataset, serialize_path, FeatureView};

const SCHEMA_MESSAGE: &str = "tensorflow.metadata.v0.Schema";

/// How [`infer_schema`] infers (the arguments of `tfdv.infer_schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InferSchemaOptions {
    /// Infer a fixed `shape` for features in every example with the same number of values
    /// (default true); otherwise only `value_count`.
    pub infer_feature_shape: bool,
    /// The most distinct values a string feature may have to get a `string_domain`
    /// (default 100).
    pub max_string_domain_size: usize,
}

impl Default for InferSchemaOptions {
    fn default() -> Self {
        InferSchemaOptions {
            infer_feature_shape: true,
            max_string_domain_size: 100,
        }
    }
}

/// The schema `tfdv.infer_schema(statistics, infer_feature_shape, max_string_domain_size)`
/// infers from the statistics' default data set.
pub fn infer_schema(stats: &DatasetFeatureStatisticsList, options: InferSchemaOptions) -> Result<Schema, StatsError> {
    let dataset = default_dataset(stats)?;
    let mut schema = Schema::default();
    let mut domain_names = HashSet::new();
    for view in FeatureView::all(dataset) {
        create_feature(&mut schema, &mut domain_names, &view, options);
    }
    Ok(schema)
}

/// Adds the feature `view` describes to `schema`, as TFDV's `CreateColumn` does (a nested
/// path goes into its parent's `struct_domain`; one whose parent is not in the schema is left
/// out, as TFDV never reaches it). `domain_names` holds the names of `schema`'s string
/// domains (a set, so that a schema of many features is not inferred in quadratic time).
fn create_feature(
    schema: &mut Schema,
    domain_names: &mut HashSet<String>,
    view: &FeatureView<'_>,
    options: InferSchemaOptions,
) {
    let steps = view.steps();
    let Some((name, parents)) = steps.split_last() else {
        return;
    };
    let mut feature = Feature {
        name: Some(name.clone()),
        r#type: Some(view.feature_type() as i32),
        ..Feature::default()
    };
    init_presence_and_shape(view, options.infer_feature_shape, &mut feature);
    let mut new_string_domain = None;
    if view.has_invalid_utf8() || view.stats_type() == feature_name_statistics::Type::Bytes {
        // Bytes that are not text get no domain.
    } else if is_bool_domain_candidate(view) {
        feature.domain_info = Some(feature::DomainInfo::BoolDomain(bool_domain_from_stats(view)));
    } else if is_int_domain_candidate(view) {
        feature.domain_info = Some(feature::DomainInfo::IntDomain(IntDomain::default()));
    } else {
        let values = view.string_values();
        if !values.is_empty() && values.len() <= options.max_string_domain_size {
            let domain_name = unused_domain_name(domain_names, &serialize_path(&steps));
            feature.domain_info = Some(feature::DomainInfo::Domain(domain_name.clone()));
            new_string_domain = Some(StringDomain {
                name: Some(domain_name),
                value: values,
                ..StringDomain::default()
            });
        }
    }
    let siblings = if parents.is_empty() {
        &mut schema.feature
    } else {
        match find_feature_mut(&mut schema.feature, parents) {
            Some(Feature {
                domain_info: Some(feature::DomainInfo::StructDomain(domain)),
                ..
            }) => &mut domain.feature,
            _ => return,
        }
    };
    siblings.push(feature);
    if let Some(domain) = new_string_domain {
        domain_names.extend(domain.name.clone());
        schema.string_domain.push(domain);
    }
}

/// The feature at `steps` among `features` and their struct domains.
pub(crate) fn find_feature_mut<'a>(features: &'a mut [Feature], steps: &[String]) -> Option<&'a mut Feature> {
    let (first, rest) = steps.split_first()?;
    let found = features
        .iter_mut()
        .find(|f| f.name.as_deref() == Some(first.as_str()))?;
    if rest.is_empty() {
        return Some(found);
    }
    match &mut found.domain_info {
        Some(feature::DomainInfo::StructDomain(domain)) => find_feature_mut(&mut domain.feature, rest),
        _ => None,
    }
}

/// `candidate`, or `candidate2`, `candidate3`… when a string domain has the name already.
fn unused_domain_name(domain_names: &HashSet<String>, candidate: &str) -> String {
    let taken = |name: &str| domain_names.contains(name);
    let mut name = candidate.to_string();
    let mut index = 1;
    while taken(&name) {
        index += 1;
        name = format!("{candidate}{index}");
    }
    name
}

fn init_presence_and_shape(view: &FeatureView<'_>, infer_shape: bool, feature: &mut Feature) {
    let num_present = view.num_present();
    let mut presence = FeaturePresence {
        min_count: Some(if num_present < 1.0 { 0 } else { 1 }),
        ..FeaturePresence::default()
    };
    if num_present <= 0.0 {
        feature.presence_constraints = Some(feature::PresenceConstraints::Presence(presence));
        return;
    }
    if view.num_missing() == 0.0 {
        presence.min_fraction = Some(1.0);
    }
    feature.presence_constraints = Some(feature::PresenceConstraints::Presence(presence));
    if infer_shape {
        if let Some(shape) = fixed_shape(view) {
            feature.shape_type = Some(feature::ShapeType::Shape(shape));
            return;
        }
    }
    feature.shape_type = inferred_value_count(view);
}

/// The shape of a feature in every example (at every level) with the same positive number of
/// values (`InitFixedShape`).
fn fixed_shape(view: &FeatureView<'_>) -> Option<FixedShape> {
    if view.feature_type() == super::proto::FeatureType::Struct {
        return None;
    }
    let mut dims = Vec::new();
    for ((min, max), missing) in view.min_max_num_values().into_iter().zip(view.num_missing_nested()) {
        if missing != 0.0 || min != max || min <= 0 {
            return None;
        }
        dims.push(fixed_shape::Dim {
            size: Some(min),
            name: None,
        });
    }
    Some(FixedShape { dim: dims })
}

/// `InitValueCount`: min and max when fixed, `min: 1` when varying, nothing when some example
/// has none.
fn inferred_value_count(view: &FeatureView<'_>) -> Option<feature::ShapeType> {
    let count = |(min, max): (i64, i64)| {
        let mut value_count = ValueCount::default();
        if min > 0 {
            if min == max {
                value_count.min = Some(min);
                value_count.max = Some(max);
            } else {
                value_count.min = Some(1);
            }
        }
        value_count
    };
    let levels = view.min_max_num_values();
    if view.has_nested_values() {
        Some(feature::ShapeType::ValueCounts(ValueCountList {
            value_count: levels.into_iter().map(count).collect(),
        }))
    } else {
        match levels.as_slice() {
            [level] if level.0 > 0 => Some(feature::ShapeType::ValueCount(count(*level))),
            _ => None,
        }
    }
}

/// The strings TFDV reads as true (`GetTrueValues` in `bool_domain_util.cc`).
pub(crate) const TRUE_STRINGS: [&str; 6] = ["TRUE", "true", "SET", "set", "1", ""];
/// The strings TFDV reads as false.
pub(crate) const FALSE_STRINGS: [&str; 5] = ["FALSE", "false", "CLEAR", "clear", "0"];

fn is_bool_domain_candidate(view: &FeatureView<'_>) -> bool {
    match view.stats_type() {
        feature_name_statistics::Type::Int => view.num_stats().is_some_and(|n| n.min >= 0.0 && n.max == 1.0),
        feature_name_statistics::Type::String => {
            let tokens = view.string_values();
            if tokens.is_empty() || tokens.len() > 2 {
                return false;
            }
            let (mut true_seen, mut false_seen) = (false, false);
            for token in &tokens {
                if !true_seen && TRUE_STRINGS.contains(&token.as_str()) {
                    true_seen = true;
                } else if !false_seen && FALSE_STRINGS.contains(&token.as_str()) {
                    false_seen = true;
                } else {
                    return false;
                }
            }
            true
        }
        _ => false,
    }
}

fn bool_domain_from_stats(view: &FeatureView<'_>) -> BoolDomain {
    let mut domain = BoolDomain::default();
    if view.stats_type() == feature_name_statistics::Type::String {
        let values = view.string_values();
        domain.true_value = values.iter().find(|v| TRUE_STRINGS.contains(&v.as_str())).cloned();
        domain.false_value = values.iter().find(|v| FALSE_STRINGS.contains(&v.as_str())).cloned();
    }
    domain
}

/// A string feature whose every value reads as an integer (`IsIntDomainCandidate`).
fn is_int_domain_candidate(view: &FeatureView<'_>) -> bool {
    if view.stats_type() != feature_name_statistics::Type::String || view.has_invalid_utf8() {
        return false;
    }
    let values = view.string_values();
    !values.is_empty() && values.iter().all(|v| parse_int_like_abseil(v).is_some())
}

/// An integer as abseil's `SimpleAtoi` reads one: ASCII whitespace around, an optional sign,
/// decimal digits, within `i64`.
pub(crate) fn parse_int_like_abseil(text: &str) -> Option<i64> {
    let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = trimmed.strip_prefix(['+', '-']).unwrap_or(trimmed);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let unsigned = trimmed.strip_prefix('+').unwrap_or(trimmed);
    unsigned.parse().ok()
}

/// The schema in the protobuf text format as TFDV's `write_schema_text` writes it.
pub fn schema_to_text(schema: &Schema) -> Result<String, StatsError> {
    message_to_text(schema, SCHEMA_MESSAGE)
}

/// A schema from the protobuf text format (TFDV's `load_schema_text`); an error names the
/// line and column where the text stops parsing.
pub fn schema_from_text(text: &str) -> Result<Schema, StatsError> {
    message_from_text(text, SCHEMA_MESSAGE).map_err(|e| match e {
        StatsError::Text(message) => StatsError::SchemaText(message),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::super::proto::{
        feature_name_statistics::{FieldId, Stats, Type},
        rank_histogram, CommonStatistics, DatasetFeatureStatistics, FeatureNameStatistics, NumericStatistics, Path,
        RankHistogram, StringStatistics,
    };
    use super::*;

    fn common(missing: u64, present: u64, min: u64, max: u64) -> Option<CommonStatistics> {
        Some(CommonStatistics {
            num_missing: missing,
            num_non_missing: present,
            min_num_values: min,
            max_num_values: max,
            ..CommonStatistics::default()
        })
    }

    fn feature_stats(name: &str, kind: Type, stats: Stats) -> FeatureNameStatistics {
        FeatureNameStatistics {
            field_id: Some(FieldId::Path(Path {
                step: vec![name.into()],
            })),
            r#type: kind as i32,
            stats: Some(stats),
            ..FeatureNameStatistics::default()
        }
    }

    fn strings(name: &str, common: Option<CommonStatistics>, values: &[&str]) -> FeatureNameStatistics {
        let buckets = values
            .iter()
            .enumerate()
            .map(|(i, v)| rank_histogram::Bucket {
                low_rank: i as u64,
                high_rank: i as u64,
                label: (*v).into(),
                sample_count: 1.0,
            })
            .collect();
        feature_stats(
            name,
            Type::String,
            Stats::StringStats(StringStatistics {
                common_stats: common,
                unique: values.len() as u64,
                rank_histogram: Some(RankHistogram {
                    buckets,
                    name: String::new(),
                }),
                ..StringStatistics::default()
            }),
        )
    }

    fn infer(features: Vec<FeatureNameStatistics>, options: InferSchemaOptions) -> String {
        let stats = DatasetFeatureStatisticsList {
            datasets: vec![DatasetFeatureStatistics {
                num_examples: 6,
                features,
                ..DatasetFeatureStatistics::default()
            }],
        };
        schema_to_text(&infer_schema(&stats, options).unwrap()).unwrap()
    }

    #[test]
    fn presence_and_shape_follow_tfdv() {
        let ints = |missing, present, min, max| {
            feature_stats(
                "f",
                Type::Int,
                Stats::NumStats(NumericStatistics {
                    common_stats: common(missing, present, min, max),
                    min: 3.0,
                    max: 7.0,
                    ..NumericStatistics::default()
                }),
            )
        };
        let shape = InferSchemaOptions::default();
        let no_shape = InferSchemaOptions {
            infer_feature_shape: false,
            ..shape
        };
        let text = infer(vec![ints(0, 6, 2, 2)], shape);
        assert!(
            text.contains("presence {\n    min_fraction: 1.0\n    min_count: 1\n  }"),
            "{text}"
        );
        assert!(text.contains("shape {\n    dim {\n      size: 2\n    }\n  }"), "{text}");
        let text = infer(vec![ints(0, 6, 2, 2)], no_shape);
        assert!(text.contains("value_count {\n    min: 2\n    max: 2\n  }"), "{text}");
        let text = infer(vec![ints(2, 4, 2, 5)], shape);
        assert!(text.contains("value_count {\n    min: 1\n  }"), "{text}");
        assert!(!text.contains("min_fraction"), "{text}");
        let text = infer(vec![ints(0, 6, 0, 3)], shape);
        assert!(!text.contains("value_count") && !text.contains("shape"), "{text}");
        let text = infer(vec![ints(6, 0, 0, 0)], shape);
        assert!(text.contains("presence {\n    min_count: 0\n  }"), "{text}");
    }

    #[test]
    fn domains_follow_tfdv() {
        let one = common(0, 6, 1, 1);
        let text = infer(
            vec![strings("s", one.clone(), &["b", "a"])],
            InferSchemaOptions::default(),
        );
        assert!(text.contains("domain: \"s\""), "{text}");
        assert!(
            text.contains("string_domain {\n  name: \"s\"\n  value: \"a\"\n  value: \"b\"\n}"),
            "{text}"
        );
        let small = InferSchemaOptions {
            max_string_domain_size: 1,
            ..InferSchemaOptions::default()
        };
        assert!(!infer(vec![strings("s", one.clone(), &["b", "a"])], small).contains("domain"));
        let text = infer(
            vec![strings("s", one.clone(), &["true", "0"])],
            InferSchemaOptions::default(),
        );
        assert!(
            text.contains("bool_domain {\n    true_value: \"true\"\n    false_value: \"0\"\n  }"),
            "{text}"
        );
        let text = infer(
            vec![strings("s", one.clone(), &["12", "-3"])],
            InferSchemaOptions::default(),
        );
        assert!(text.contains("int_domain {\n  }"), "{text}");
        let text = infer(
            vec![strings("s", one, &["yes", "no", "maybe"])],
            InferSchemaOptions::default(),
        );
        assert!(text.contains("value: \"maybe\""), "{text}");
    }

    #[test]
    fn abseil_integers() {
        assert_eq!(parse_int_like_abseil(" +12 "), Some(12));
        assert_eq!(parse_int_like_abseil("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int_like_abseil("9223372036854775808"), None);
        assert_eq!(parse_int_like_abseil("1.5"), None);
        assert_eq!(parse_int_like_abseil(""), None);
    }

    #[test]
    fn schema_text_round_trips_and_bad_text_names_the_line() {
        let schema = Schema {
            feature: vec![Feature {
                name: Some("a".into()),
                r#type: Some(2),
                ..Feature::default()
            }],
            ..Schema::default()
        };
        let text = schema_to_text(&schema).unwrap();
        assert_eq!(text, "feature {\n  name: \"a\"\n  type: INT\n}\n");
        assert_eq!(schema_from_text(&text).unwrap(), schema);
        let error = schema_from_text("feature {\n  name: \"a\"\n  typo: 1\n}\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 3"), "{error}");
    }
}

//! Statistics checked against a schema, as `tfdv.validate_statistics` checks them (TFDV 1.16.1:
//! `SchemaAnomalies::FindChanges` and `Schema::UpdateFeatureInternal` in its C++ `anomalies/`):
//! the answer is tensorflow_metadata's `Anomalies`, one `AnomalyInfo` per feature with a
//! problem, with TFDV's anomaly types, short descriptions and descriptions.
//!
//! Checked per feature, in TFDV's order: present at all when required
//! (`FEATURE_TYPE_NOT_PRESENT`), values per example against `value_count`/`value_counts`
//! (`FEATURE_TYPE_LOW_NUMBER_VALUES`, `FEATURE_TYPE_HIGH_NUMBER_VALUES`) and `shape`
//! (`INVALID_FEATURE_SHAPE`), presence (`FEATURE_TYPE_LOW_NUMBER_PRESENT`,
//! `FEATURE_TYPE_LOW_FRACTION_PRESENT`), type (`UNEXPECTED_DATA_TYPE`), string and bool
//! domains (`ENUM_TYPE_UNEXPECTED_STRING_VALUES`, `ENUM_TYPE_INVALID_UTF8`, `BOOL_TYPE_*`),
//! unique counts, and drift (against `previous`) and skew (against `serving`) by L-infinity
//! distance, normalized absolute difference and Jensen–Shannon divergence where the feature's
//! `drift_comparator`/`skew_comparator` sets a threshold. Features in the data and not in the
//! schema are `SCHEMA_NEW_COLUMN`; required features in the schema and not in the data
//! `SCHEMA_MISSING_COLUMN`. Not checked (TFDV checks them; tfrec's statistics never call for
//! them): environments, sparse and weighted features' custom statistics, int and float domain
//! ranges, semantic domains, dataset-level constraints and nested (struct) features.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::drift::{measure_drift, Drift, DriftMeasure};
use super::error::StatsError;
use super::proto::histogram::HistogramType;
use super::proto::{
    anomalies, anomaly_info, drift_skew_info, feature, feature_name_statistics, histogram, Anomalies, AnomalyInfo,
    DatasetFeatureStatistics, DatasetFeatureStatisticsList, DriftSkewInfo, Feature, FeatureComparator, FeaturePresence,
    FeatureType, LifecycleStage, Path, Schema, StringDomain,
};
use super::text::message_to_text;
use super::view::{default_dataset, FeatureView};

use anomaly_info::Type as Kind;

const ANOMALIES_MESSAGE: &str = "tensorflow.metadata.v0.Anomalies";

/// One reason for an anomaly (TFDV's `Description`).
#[derive(Debug, Clone)]
struct Description {
    kind: Kind,
    short: String,
    long: String,
}

fn describe(kind: Kind, short: &str, long: impl Into<String>) -> Description {
    Description {
        kind,
        short: short.to_string(),
        long: long.into(),
    }
}

/// The anomalies `tfdv.validate_statistics(statistics, schema, previous_statistics=…,
/// serving_statistics=…)` finds: the statistics' default data set against `schema`, drift
/// against `previous` and skew against `serving` where the schema's comparators ask.
pub fn validate_statistics(
    stats: &DatasetFeatureStatisticsList,
    schema: &Schema,
    previous: Option<&DatasetFeatureStatisticsList>,
    serving: Option<&DatasetFeatureStatisticsList>,
) -> Result<Anomalies, StatsError> {
    let dataset = default_dataset(stats)?;
    let previous = previous.map(default_dataset).transpose()?;
    let serving = serving.map(default_dataset).transpose()?;
    let mut result = Anomalies {
        baseline_schema: Some(anomalies::BaselineSchema::Baseline(schema.clone())),
        ..Anomalies::default()
    };
    if dataset.num_examples == 0 {
        result.data_missing = Some(true);
        return Ok(result);
    }
    result.anomaly_name_format = Some(anomalies::AnomalyNameFormat::SerializedPath as i32);
    let controls = Controls {
        previous: previous.map(ControlViews::of),
        serving: serving.map(ControlViews::of),
    };
    let index = SchemaIndex::of(schema);
    let mut found: BTreeMap<Vec<String>, Vec<Description>> = BTreeMap::new();
    let mut drift_skew: BTreeMap<Vec<String>, DriftSkewInfo> = BTreeMap::new();
    let views = FeatureView::all(dataset);
    for view in views.iter().filter(|v| v.steps().len() == 1) {
        let steps = view.steps();
        let name = &steps[0];
        if let Some(&baseline) = index.features.get(name.as_str()) {
            if is_deprecated(baseline) {
                continue;
            }
            let mut feature = baseline.clone();
            let mut info = DriftSkewInfo::default();
            let descriptions = update_feature(view, &mut feature, &index, &controls, &mut info);
            if !info.drift_measurements.is_empty() || !info.skew_measurements.is_empty() {
                info.path = Some(Path { step: steps.clone() });
                drift_skew.insert(steps.clone(), info);
            }
            if !descriptions.is_empty() {
                found.insert(steps, descriptions);
            }
        } else if index.sparse_or_weighted.contains(name.as_str()) {
            // Sparse and weighted features are checked on custom statistics tfrec does not compute.
        } else {
            found.insert(
                steps,
                vec![describe(
                    Kind::SchemaNewColumn,
                    "New column",
                    "New column (column in data but not in schema)",
                )],
            );
        }
    }
    let present: BTreeSet<Vec<String>> = views.iter().map(FeatureView::steps).collect();
    for feature in &schema.feature {
        let steps = vec![feature.name.clone().unwrap_or_default()];
        if is_existence_required(feature) && !present.contains(&steps) {
            found.entry(steps).or_default().push(describe(
                Kind::SchemaMissingColumn,
                "Column dropped",
                "Column is completely missing",
            ));
        }
    }
    for (steps, descriptions) in found {
        let descriptions = if descriptions.iter().all(|d| d.kind == Kind::SchemaNewColumn) {
            descriptions.into_iter().take(1).collect()
        } else {
            descriptions
        };
        let unified = unify(&descriptions);
        let info = AnomalyInfo {
            path: Some(Path { step: steps.clone() }),
            severity: Some(anomaly_info::Severity::Error as i32),
            description: Some(unified.long),
            short_description: Some(unified.short),
            reason: descriptions
                .iter()
                .map(|d| anomaly_info::Reason {
                    r#type: Some(d.kind as i32),
                    short_description: Some(d.short.clone()),
                    description: Some(d.long.clone()),
                })
                .collect(),
            ..AnomalyInfo::default()
        };
        result.anomaly_info.insert(super::view::serialize_path(&steps), info);
    }
    result.drift_skew_info = drift_skew.into_values().collect();
    Ok(result)
}

/// Whether TFDV would report anything: an anomaly on a feature or on the data set, or no data.
pub fn has_anomalies(anomalies: &Anomalies) -> bool {
    !anomalies.anomaly_info.is_empty()
        || anomalies
            .dataset_anomaly_info
            .as_ref()
            .is_some_and(|info| !info.reason.is_empty())
        || anomalies.data_missing == Some(true)
}

/// The anomalies in the protobuf text format, as Python's `text_format` writes them (TFDV's
/// `write_anomalies_text`).
pub fn anomalies_to_text(anomalies: &Anomalies) -> Result<String, StatsError> {
    message_to_text(anomalies, ANOMALIES_MESSAGE)
}

/// TFDV's `UnifyDescriptions`: one reason as it is, several as `Multiple errors` with the
/// descriptions joined.
fn unify(descriptions: &[Description]) -> Description {
    let mut unified = describe(Kind::UnknownType, "", "");
    for d in descriptions {
        if unified.long.is_empty() {
            unified = d.clone();
        } else if !d.long.is_empty() {
            unified = describe(
                Kind::MultipleReasons,
                "Multiple errors",
                format!("{} {}", unified.long, d.long),
            );
        }
    }
    unified
}

struct Controls<'a> {
    previous: Option<ControlViews<'a>>,
    serving: Option<ControlViews<'a>>,
}

/// A control data set's features by path, looked up once per feature with a comparator (a
/// scan per feature made statistics of 100,000 features take minutes).
struct ControlViews<'a>(HashMap<Vec<String>, FeatureView<'a>>);

impl<'a> ControlViews<'a> {
    fn of(dataset: &'a DatasetFeatureStatistics) -> Self {
        let mut views = HashMap::new();
        for view in FeatureView::all(dataset) {
            // The first of a repeated path, as a scan in order finds it.
            views.entry(view.steps()).or_insert(view);
        }
        ControlViews(views)
    }
}

/// The schema's features, string domains and sparse and weighted feature names by name (the
/// first of a repeated name, as a scan in order finds it), so that validating many features
/// is not quadratic.
struct SchemaIndex<'a> {
    features: HashMap<&'a str, &'a Feature>,
    string_domains: HashMap<&'a str, &'a StringDomain>,
    sparse_or_weighted: HashSet<&'a str>,
}

impl<'a> SchemaIndex<'a> {
    fn of(schema: &'a Schema) -> Self {
        let mut features = HashMap::new();
        for feature in &schema.feature {
            if let Some(name) = feature.name.as_deref() {
                features.entry(name).or_insert(feature);
            }
        }
        let mut string_domains = HashMap::new();
        for domain in &schema.string_domain {
            if let Some(name) = domain.name.as_deref() {
                string_domains.entry(name).or_insert(domain);
            }
        }
        let sparse = schema.sparse_feature.iter().filter_map(|f| f.name.as_deref());
        let weighted = schema.weighted_feature.iter().filter_map(|f| f.name.as_deref());
        SchemaIndex {
            features,
            string_domains,
            sparse_or_weighted: sparse.chain(weighted).collect(),
        }
    }
}

fn is_deprecated(feature: &Feature) -> bool {
    #[allow(deprecated)]
    let flagged = feature.deprecated == Some(true);
    flagged
        || matches!(
            feature.lifecycle_stage.and_then(|s| LifecycleStage::try_from(s).ok()),
            Some(
                LifecycleStage::Planned
                    | LifecycleStage::Alpha
                    | LifecycleStage::Deprecated
                    | LifecycleStage::DebugOnly
                    | LifecycleStage::Disabled
            )
        )
}

fn deprecate(feature: &mut Feature) {
    feature.lifecycle_stage = Some(LifecycleStage::Deprecated as i32);
}

fn presence(feature: &Feature) -> FeaturePresence {
    match &feature.presence_constraints {
        Some(feature::PresenceConstraints::Presence(p)) => *p,
        _ => FeaturePresence::default(),
    }
}

/// `IsExistenceRequired` (no environment: every feature is in it).
fn is_existence_required(feature: &Feature) -> bool {
    let p = presence(feature);
    !is_deprecated(feature) && (p.min_count.unwrap_or(0) > 0 || p.min_fraction.unwrap_or(0.0) > 0.0)
}

/// TFDV's `UpdateFeatureInternal`: the reasons the statistics do not fit the feature.
fn update_feature(
    view: &FeatureView<'_>,
    feature: &mut Feature,
    schema: &SchemaIndex<'_>,
    controls: &Controls<'_>,
    drift_skew: &mut DriftSkewInfo,
) -> Vec<Description> {
    let mut out = update_feature_self(feature, schema);
    if is_deprecated(feature) {
        return out;
    }
    if view.num_present() == 0.0 {
        if is_existence_required(feature) {
            out.push(describe(
                Kind::FeatureTypeNotPresent,
                "Column dropped",
                "The feature was not present in any examples.",
            ));
        }
        return out;
    }
    match &feature.shape_type {
        Some(feature::ShapeType::ValueCount(count)) => out.extend(check_value_count(view, *count)),
        Some(feature::ShapeType::ValueCounts(counts)) => out.extend(check_value_counts(view, &counts.value_count)),
        Some(feature::ShapeType::Shape(shape)) => {
            let expected: i64 = shape.dim.iter().map(|d| d.size.unwrap_or(0)).product();
            out.extend(check_shape(view, expected));
        }
        None => {}
    }
    if let Some(feature::PresenceConstraints::Presence(p)) = &feature.presence_constraints {
        out.extend(check_presence(view, *p));
    }
    let schema_type = feature
        .r#type
        .and_then(|t| FeatureType::try_from(t).ok())
        .unwrap_or(FeatureType::TypeUnknown);
    if view.feature_type() != schema_type {
        deprecate(feature);
        out.push(describe(
            Kind::UnexpectedDataType,
            "Unexpected data type",
            format!(
                "Expected data of type: {} but got {}",
                schema_type.as_str_name(),
                view.stats_type().as_str_name()
            ),
        ));
    }
    use feature::DomainInfo;
    if view.stats_type() == feature_name_statistics::Type::Bytes
        && !matches!(
            feature.domain_info,
            None | Some(DomainInfo::NaturalLanguageDomain(_) | DomainInfo::ImageDomain(_) | DomainInfo::UrlDomain(_))
        )
    {
        feature.domain_info = None;
        out.push(describe(
            Kind::DomainInvalidForType,
            "Invalid domain type",
            format!(
                "Data is marked as BYTES with incompatible domain_info: name: {:?}",
                feature.name.clone().unwrap_or_default()
            ),
        ));
    }
    let max_off_domain = feature
        .distribution_constraints
        .as_ref()
        .and_then(|c| c.min_domain_mass)
        .map_or(0.0, |mass| 1.0 - mass);
    match &feature.domain_info {
        Some(DomainInfo::Domain(name)) => {
            if let Some(&domain) = schema.string_domains.get(name.as_str()) {
                out.extend(check_string_domain(view, domain, max_off_domain));
            }
        }
        Some(DomainInfo::StringDomain(domain)) => out.extend(check_string_domain(view, domain, max_off_domain)),
        Some(DomainInfo::BoolDomain(domain)) => out.extend(check_bool_domain(view, domain)),
        _ => {}
    }
    if let Some(unique) = &feature.unique_constraints {
        out.extend(check_unique(view, unique));
    }
    if let Some(comparator) = &feature.drift_comparator {
        let measured = compare(view, comparator, controls.previous.as_ref(), "previous", "current");
        out.extend(measured.descriptions);
        drift_skew.drift_measurements.extend(measured.measurements);
    }
    if let Some(comparator) = &feature.skew_comparator {
        let measured = compare(view, comparator, controls.serving.as_ref(), "serving", "training");
        out.extend(measured.descriptions);
        drift_skew.skew_measurements.extend(measured.measurements);
    }
    out
}

/// The schema's own mistakes about a feature (the checks of TFDV's `UpdateFeatureSelf` that
/// a hand-edited schema can trip).
fn update_feature_self(feature: &mut Feature, schema: &SchemaIndex<'_>) -> Vec<Description> {
    let mut out = Vec::new();
    if is_deprecated(feature) {
        return out;
    }
    if feature.r#type.is_none() {
        if matches!(
            feature.domain_info,
            Some(feature::DomainInfo::Domain(_) | feature::DomainInfo::StringDomain(_))
        ) {
            out.push(describe(
                Kind::FeatureMissingType,
                "unspecified type: inferring the type to be BYTES, given the domain specified.",
                "",
            ));
            feature.r#type = Some(FeatureType::Bytes as i32);
        } else {
            out.push(describe(
                Kind::FeatureMissingType,
                "unspecified type: determine the type and set it, rather than deprecating.",
                "",
            ));
            deprecate(feature);
            return out;
        }
    }
    if let Some(feature::DomainInfo::Domain(name)) = &feature.domain_info {
        if !schema.string_domains.contains_key(name.as_str()) {
            let name = name.clone();
            feature.domain_info = None;
            out.push(describe(
                Kind::InvalidDomainSpecification,
                &format!("missing domain: {name}"),
                "",
            ));
        }
    }
    out
}

fn check_value_count(view: &FeatureView<'_>, count: super::proto::ValueCount) -> Vec<Description> {
    let levels = view.min_max_num_values();
    let mut out = Vec::new();
    if levels.len() > 1 {
        out.push(describe(
            Kind::ValueNestednessMismatch,
            "Mismatched value nest level",
            "This feature has a value_count, but the nestedness level of the feature > 1. For features with \
             nestedness levels greater than 1, value_counts, not value_count, should be specified.",
        ));
        return out;
    }
    let (min, max) = levels[0];
    if count.min.is_some_and(|expected| min < expected) {
        out.push(describe(
            Kind::FeatureTypeLowNumberValues,
            "Missing values",
            "Some examples have fewer values than expected.",
        ));
    }
    if count.max.is_some_and(|expected| max > expected) {
        out.push(describe(
            Kind::FeatureTypeHighNumberValues,
            "Superfluous values",
            "Some examples have more values than expected.",
        ));
    }
    out
}

fn check_value_counts(view: &FeatureView<'_>, counts: &[super::proto::ValueCount]) -> Vec<Description> {
    let levels = view.min_max_num_values();
    if levels.len() != counts.len() {
        return vec![describe(
            Kind::ValueNestednessMismatch,
            "Mismatched value nest level",
            "The values have a different nest level than expected. Value counts will not be checked.",
        )];
    }
    let mut out = Vec::new();
    for (level, (count, (min, max))) in counts.iter().zip(levels).enumerate() {
        if count.min.is_some_and(|expected| min < expected) {
            out.push(describe(
                Kind::FeatureTypeLowNumberValues,
                "Missing values",
                format!("Some examples have fewer values than expected at nestedness level {level}."),
            ));
        }
        if count.max.is_some_and(|expected| max > expected) {
            out.push(describe(
                Kind::FeatureTypeHighNumberValues,
                "Superfluous values",
                format!("Some examples have more values than expected at nestedness level {level}."),
            ));
        }
    }
    out
}

fn check_shape(view: &FeatureView<'_>, expected: i64) -> Vec<Description> {
    let mut actual: i64 = 1;
    for (min, max) in view.min_max_num_values() {
        if min == max && min != 0 {
            actual = actual.saturating_mul(min);
        } else {
            actual = -1;
            break;
        }
    }
    let has_missing = view.num_missing_nested().iter().any(|&m| m != 0.0);
    if actual <= 0 || has_missing {
        vec![describe(
            Kind::InvalidFeatureShape,
            "Feature shape dropped",
            "The feature has a shape, but it's not always present (if the feature is nested, then it should always \
             be present at each nested level) or its value lengths vary.",
        )]
    } else if actual != expected {
        vec![describe(
            Kind::InvalidFeatureShape,
            "Feature shape dropped",
            format!("The feature has fixed value length {actual} but it's not compatible with the specified shape."),
        )]
    } else {
        Vec::new()
    }
}

fn check_presence(view: &FeatureView<'_>, presence: FeaturePresence) -> Vec<Description> {
    let mut out = Vec::new();
    let num_present = view.num_present();
    if let Some(min_count) = presence.min_count {
        if num_present < min_count as f64 {
            out.push(describe(
                Kind::FeatureTypeLowNumberPresent,
                "Column dropped",
                format!(
                    "The feature was present in fewer examples than expected: minimum count = {min_count}, actual = {}",
                    num_present as i64
                ),
            ));
        }
    }
    if let (Some(mut min_fraction), Some(fraction)) = (presence.min_fraction, view.fraction_present()) {
        if fraction < min_fraction {
            out.push(describe(
                Kind::FeatureTypeLowFractionPresent,
                "Column dropped",
                format!(
                    "The feature was present in fewer examples than expected: minimum fraction = {:.6}, actual = {:.6}",
                    f64::from(min_fraction as f32),
                    fraction
                ),
            ));
            min_fraction = fraction;
        }
        if min_fraction == 1.0 && view.num_missing() != 0.0 {
            out.push(describe(
                Kind::FeatureTypeLowFractionPresent,
                "Column dropped",
                format!(
                    "The feature was expected everywhere, but was missing in {} examples.",
                    six_digits(view.num_missing())
                ),
            ));
        }
    }
    out
}

fn check_string_domain(view: &FeatureView<'_>, domain: &StringDomain, max_off_domain: f64) -> Vec<Description> {
    if view.has_invalid_utf8() {
        return vec![describe(
            Kind::EnumTypeInvalidUtf8,
            "Invalid UTF8 strings",
            "Found strings that were not valid UTF8 strings.",
        )];
    }
    let valid: BTreeSet<&str> = domain.value.iter().map(String::as_str).collect();
    let missing: Vec<(String, f64)> = view
        .string_values_with_counts()
        .into_iter()
        .filter(|(value, _)| !valid.contains(value.as_str()))
        .collect();
    let missing_count: f64 = missing.iter().map(|(_, count)| count).sum();
    let total = view.total_value_count();
    if missing_count / total > max_off_domain || (max_off_domain == 0.0 && !missing.is_empty()) {
        let listed: Vec<String> = missing
            .iter()
            .map(|(value, count)| format!("{} ({})", c_escape(value), percentage(*count as i64 as f64, total)))
            .collect();
        return vec![describe(
            Kind::EnumTypeUnexpectedStringValues,
            "Unexpected string values",
            format!(
                "Examples contain values missing from the schema: {}. ",
                listed.join(", ")
            ),
        )];
    }
    Vec::new()
}

fn check_bool_domain(view: &FeatureView<'_>, domain: &super::proto::BoolDomain) -> Vec<Description> {
    let non_boolean = "Non-boolean values";
    match view.stats_type() {
        feature_name_statistics::Type::Int => {
            let Some(n) = view.num_stats() else { return Vec::new() };
            if n.min < 0.0 {
                vec![describe(
                    Kind::BoolTypeSmallInt,
                    non_boolean,
                    format!(
                        "Integers (such as {}) not in {{0, 1}}: converting to an integer.",
                        six_digits(n.min)
                    ),
                )]
            } else if n.max > 1.0 {
                vec![describe(
                    Kind::BoolTypeBigInt,
                    non_boolean,
                    format!(
                        "Integers (such as {}) not in {{0, 1}}: converting to an integer.",
                        six_digits(n.max)
                    ),
                )]
            } else {
                Vec::new()
            }
        }
        feature_name_statistics::Type::Float => {
            let Some(n) = view.num_stats() else { return Vec::new() };
            let float = |text: String| vec![describe(Kind::BoolTypeUnexpectedFloat, non_boolean, text)];
            if n.min != 0.0 && n.min != 1.0 {
                return float(format!(
                    "Floats (such as {}) not in {{0, 1}}: converting to float_domain.",
                    six_digits(n.min)
                ));
            }
            if n.max != 0.0 && n.max != 1.0 {
                return float(format!(
                    "Floats (such as {}) not in {{0, 1}}: converting to float_domain.",
                    six_digits(n.max)
                ));
            }
            for h in &n.histograms {
                if h.num_nan > 0 {
                    return float("Floats (such as NaN) not in {0, 1}: converting to float_domain.".into());
                }
                for b in h.buckets.iter().filter(|b| b.sample_count > 0.0) {
                    if b.high_value < 0.0 {
                        return float("Float values < 0 not in {0, 1}: converting to float_domain.".into());
                    } else if b.low_value > 1.0 {
                        return float("Float values > 1 not in {0, 1}: converting to float_domain.".into());
                    } else if h.r#type == histogram::HistogramType::Quantiles as i32
                        && b.high_value < 1.0
                        && b.low_value > 0.0
                    {
                        return float("Float values falling between 0 and 1: converting to float_domain.".into());
                    }
                }
            }
            Vec::new()
        }
        feature_name_statistics::Type::String => {
            let valid: BTreeSet<&str> = domain
                .true_value
                .iter()
                .chain(domain.false_value.iter())
                .map(String::as_str)
                .collect();
            for value in view.string_values() {
                if !valid.contains(value.as_str()) {
                    let listed = if valid.is_empty() {
                        "{}".to_string()
                    } else {
                        format!("{{\"{}\"}}", valid.iter().copied().collect::<Vec<_>>().join("\", \""))
                    };
                    return vec![describe(
                        Kind::BoolTypeUnexpectedString,
                        non_boolean,
                        format!("Saw unexpected value \"{value}\" instead of {listed}."),
                    )];
                }
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

fn check_unique(view: &FeatureView<'_>, unique: &super::proto::UniqueConstraints) -> Vec<Description> {
    let Some(found) = view.num_unique() else {
        return vec![describe(
            Kind::FeatureTypeNoUnique,
            "No unique values",
            "UniqueConstraints specified for the feature, but unique values were not counted (i.e., feature is not \
             string or categorical).",
        )];
    };
    let found = i64::try_from(found).unwrap_or(i64::MAX);
    let mut out = Vec::new();
    let (min, max) = (unique.min.unwrap_or(0), unique.max.unwrap_or(0));
    if found < min {
        out.push(describe(
            Kind::FeatureTypeLowUnique,
            "Low number of unique values",
            format!("Expected at least {min} unique values but found only {found}."),
        ));
    }
    if found > max {
        out.push(describe(
            Kind::FeatureTypeHighUnique,
            "High number of unique values",
            format!("Expected no more than {max} unique values but found {found}."),
        ));
    }
    out
}

#[derive(Default)]
struct Comparison {
    descriptions: Vec<Description>,
    measurements: Vec<drift_skew_info::Measurement>,
}

/// TFDV's `UpdateFeatureComparatorDirect`: the comparator's distances between the feature here
/// (`treatment`) and in the control data set (`control`).
fn compare(
    view: &FeatureView<'_>,
    comparator: &FeatureComparator,
    control: Option<&ControlViews<'_>>,
    control_name: &str,
    treatment_name: &str,
) -> Comparison {
    use drift_skew_info::measurement::Type as Measure;
    let mut result = Comparison::default();
    let linf = comparator.infinity_norm.and_then(|c| c.threshold);
    let nad = comparator.normalized_abs_difference.and_then(|c| c.threshold);
    let jsd = comparator.jensen_shannon_divergence.as_ref().and_then(|c| c.threshold);
    if linf.is_none() && nad.is_none() && jsd.is_none() {
        return result;
    }
    let Some(control) = control else { return result };
    let Some(control_view) = control.0.get(&view.steps()) else {
        result.descriptions.push(describe(
            Kind::ComparatorControlDataMissing,
            &format!("{control_name} data missing"),
            format!("{control_name} data is missing."),
        ));
        return result;
    };
    let measure = |kind: Measure, value: f64, threshold: f64| drift_skew_info::Measurement {
        r#type: Some(kind as i32),
        value: Some(value),
        threshold: Some(threshold),
    };
    let quantiles = comparator
        .jensen_shannon_divergence
        .as_ref()
        .and_then(|c| c.source.as_ref())
        .and_then(|s| s.r#type)
        .is_some_and(|t| t == super::proto::histogram_selection::Type::Quantiles as i32);
    let histogram = if quantiles {
        HistogramType::Quantiles
    } else {
        HistogramType::Standard
    };
    let drift = |kind: DriftMeasure| measure_drift(kind, view.stats, control_view.stats, histogram);
    if let Some(threshold) = linf {
        if let Some(Drift { value, at, .. }) = drift(DriftMeasure::LInfinity) {
            result.measurements.push(measure(Measure::LInfty, value, threshold));
            if value > threshold {
                result.descriptions.push(describe(
                    Kind::ComparatorLInftyHigh,
                    &format!("High Linfty distance between {treatment_name} and {control_name}"),
                    format!(
                        "The Linfty distance between {treatment_name} and {control_name} is {} (up to six \
                         significant digits), above the threshold {}. The feature value with maximum difference \
                         is: {at}",
                        six_digits(value),
                        six_digits(threshold)
                    ),
                ));
            }
        }
    }
    if let Some(threshold) = nad {
        if let Some(Drift { value, at, .. }) = drift(DriftMeasure::NormalizedAbsDifference) {
            result
                .measurements
                .push(measure(Measure::NormalizedAbsoluteDifference, value, threshold));
            if value > threshold {
                result.descriptions.push(describe(
                    Kind::ComparatorNormalizedAbsoluteDifferenceHigh,
                    &format!("High normalized absolute difference between {treatment_name} and {control_name}"),
                    format!(
                        "The normalized absolute difference between {treatment_name} and {control_name} is {} (up \
                         to six significant digits), above the threshold {}. The feature value with maximum \
                         difference is: {at}",
                        six_digits(value),
                        six_digits(threshold)
                    ),
                ));
            }
        }
    }
    if let Some(threshold) = jsd {
        if let Some(Drift { value, .. }) = drift(DriftMeasure::JensenShannon) {
            result
                .measurements
                .push(measure(Measure::JensenShannonDivergence, value, threshold));
            if value > threshold {
                result.descriptions.push(describe(
                    Kind::ComparatorJensenShannonDivergenceHigh,
                    &format!("High approximate Jensen-Shannon divergence between {treatment_name} and {control_name}"),
                    format!(
                        "The approximate Jensen-Shannon divergence between {treatment_name} and {control_name} is {} \
                         (up to six significant digits), above the threshold {}.",
                        six_digits(value),
                        six_digits(threshold)
                    ),
                ));
            }
        }
    }
    result
}

/// A count as a share of `total` as TFDV writes it: `<1%`, `~N%` (floored), `?` without a total.
fn percentage(count: f64, total: f64) -> String {
    if total == 0.0 {
        return "?".into();
    }
    let percent = 100.0 * count / total;
    if percent < 1.0 {
        "<1%".into()
    } else {
        format!("~{}%", percent.floor() as i64)
    }
}

/// abseil's `Utf8SafeCEscape`: quotes, backslashes and control bytes escaped, UTF-8 kept.
fn c_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A double with six significant digits as abseil's `SixDigits` (C's `%g`) writes it.
fn six_digits(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return "0".into();
    }
    let scientific = format!("{v:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    } else {
        let decimals = usize::try_from(5 - exponent).unwrap_or(0);
        trim(&format!("{v:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_digits_is_printf_g() {
        assert_eq!(six_digits(0.5), "0.5");
        assert_eq!(six_digits(3.0), "3");
        assert_eq!(six_digits(0.123456789), "0.123457");
        assert_eq!(six_digits(1234567.0), "1.23457e+06");
        assert_eq!(six_digits(0.00001234), "1.234e-05");
        assert_eq!(six_digits(-2.5), "-2.5");
    }

    #[test]
    fn percentages_and_escapes() {
        assert_eq!(percentage(1.0, 200.0), "<1%");
        assert_eq!(percentage(2.0, 3.0), "~66%");
        assert_eq!(percentage(1.0, 0.0), "?");
        assert_eq!(c_escape("a\"b\n\u{1}é"), "a\\\"b\\n\\001é");
    }
}

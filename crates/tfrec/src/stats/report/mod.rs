//! The statistics report: one self-contained HTML file (inline CSS, script and SVG, a
//! Content-Security-Policy that forbids every network request) showing a data set's features,
//! or two data sets side by side with their drift, as Facets Overview shows TFDV's statistics.
//!
//! The figures the page shows (drift, aligned histograms, top-value bars) are computed here,
//! in Rust, and written into the page as JSON; the page's script only lays them out, sorts,
//! filters and pages the rows, so a report of 1,000 features draws a page of rows at a time.
//! The CLI (`tfrec stats --html`) and Python (`tfrec.stats.visualize_statistics`) both call
//! [`Report`].

mod samples;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

pub use samples::{FeatureSamples, ImageFormat, ImageSample, ReportSamples, SampleLimits};

use super::drift::{feature_drift, ranged_counts_on, string_value_counts, DriftMeasure};
use super::error::StatsError;
use super::proto::feature_name_statistics::{FieldId, Stats, Type};
use super::proto::{
    histogram::HistogramType, Anomalies, DatasetFeatureStatistics, DatasetFeatureStatisticsList, FeatureNameStatistics,
    Histogram,
};

const PAGE: &str = include_str!("page.html");
const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// TFDV's names of the two sides of a comparison (`tfdv.visualize_statistics`' defaults).
pub const LHS_NAME: &str = "lhs_statistics";
/// See [`LHS_NAME`].
pub const RHS_NAME: &str = "rhs_statistics";

/// Top values drawn per string feature.
const BARS_SHOWN: usize = 8;
/// Buckets of the histograms redrawn on a common range when two data sets are compared.
const COMPARED_BUCKETS: usize = 10;

/// One data set of a report.
#[derive(Debug, Clone, Copy)]
struct Side<'a> {
    stats: &'a DatasetFeatureStatistics,
    name: &'a str,
    samples: Option<&'a ReportSamples>,
}

/// A report of one data set, or of two side by side (TFDV's lhs and rhs).
///
/// ```
/// use tfrec::stats::proto::DatasetFeatureStatistics;
/// use tfrec::stats::report::Report;
///
/// let train = DatasetFeatureStatistics { num_examples: 10, ..Default::default() };
/// let html = Report::new(&train).name("train").to_html();
/// assert!(html.starts_with("<!DOCTYPE html>"));
/// ```
#[derive(Debug, Clone)]
pub struct Report<'a> {
    lhs: Side<'a>,
    rhs: Option<Side<'a>>,
    anomalies: Option<&'a Anomalies>,
    title: String,
}

impl<'a> Report<'a> {
    /// A report of `stats` alone, named by its `name` or else [`LHS_NAME`].
    pub fn new(stats: &'a DatasetFeatureStatistics) -> Self {
        Report {
            lhs: Side {
                stats,
                name: side_name(stats, LHS_NAME),
                samples: None,
            },
            rhs: None,
            anomalies: None,
            title: "Data set statistics".to_owned(),
        }
    }

    /// A report of a statistics list as Facets shows one: its first data set, compared with
    /// its second when there is one (what [`comparison`] writes). An error for an empty list.
    pub fn of_list(list: &'a DatasetFeatureStatisticsList) -> Result<Self, StatsError> {
        let first = list
            .datasets
            .first()
            .ok_or_else(|| StatsError::InvalidOption("the statistics hold no data set".to_owned()))?;
        let mut report = Report::new(first);
        if let Some(second) = list.datasets.get(1) {
            report = report.compare(second);
        }
        Ok(report)
    }

    /// Sets the name shown for the (left) data set.
    pub fn name(mut self, name: &'a str) -> Self {
        self.lhs.name = name;
        self
    }

    /// Compares with `rhs` (TFDV's rhs: the evaluation or serving data), named by its `name`
    /// or else [`RHS_NAME`].
    pub fn compare(mut self, rhs: &'a DatasetFeatureStatistics) -> Self {
        self.rhs = Some(Side {
            stats: rhs,
            name: side_name(rhs, RHS_NAME),
            samples: None,
        });
        self
    }

    /// Sets the name shown for the compared data set (no effect before [`Report::compare`]).
    pub fn rhs_name(mut self, name: &'a str) -> Self {
        if let Some(rhs) = &mut self.rhs {
            rhs.name = name;
        }
        self
    }

    /// Example values and thumbnails of the (left) data set.
    pub fn samples(mut self, samples: &'a ReportSamples) -> Self {
        self.lhs.samples = Some(samples);
        self
    }

    /// Example values and thumbnails of the compared data set.
    pub fn rhs_samples(mut self, samples: &'a ReportSamples) -> Self {
        if let Some(rhs) = &mut self.rhs {
            rhs.samples = Some(samples);
        }
        self
    }

    /// Marks the features `anomalies` names (as `tfdv.validate_statistics` gives them), and
    /// shows its data-set-wide anomaly.
    pub fn anomalies(mut self, anomalies: &'a Anomalies) -> Self {
        self.anomalies = Some(anomalies);
        self
    }

    /// Sets the page's title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// The figures the page shows, as the JSON its script reads, as one tree (the tests read
    /// it; the page is written from [`Report::data_text`]).
    #[cfg(test)]
    pub(crate) fn data(&self) -> Value {
        let mut features = Vec::new();
        self.for_each_feature(|feature| features.push(feature));
        let (datasets, dataset_anomaly) = self.header();
        json!({
            "title": self.title,
            "datasets": datasets,
            "datasetAnomaly": dataset_anomaly,
            "features": features,
        })
    }

    /// [`Report::data`] as the script-safe JSON text the page holds, each feature's JSON
    /// written out as it is made: a page of 100,000 features never holds their JSON trees
    /// at once, which took several times the page's size.
    fn data_text(&self) -> String {
        let (datasets, dataset_anomaly) = self.header();
        let mut out = String::from("{\"title\":");
        out.push_str(&script_safe_json(&json!(self.title)));
        out.push_str(",\"datasets\":");
        out.push_str(&script_safe_json(&json!(datasets)));
        out.push_str(",\"datasetAnomaly\":");
        out.push_str(&script_safe_json(&json!(dataset_anomaly)));
        out.push_str(",\"features\":[");
        let mut first = true;
        self.for_each_feature(|feature| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
            out.push_str(&script_safe_json(&feature));
        });
        out.push_str("]}");
        out
    }

    /// The data sets' JSON and the data set's anomaly, if any.
    fn header(&self) -> (Vec<Value>, Option<Value>) {
        let sides: Vec<Side<'_>> = std::iter::once(self.lhs).chain(self.rhs).collect();
        let datasets: Vec<Value> = sides
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "examples": s.stats.num_examples,
                    "sampled": s.samples.map(|x| x.records),
                })
            })
            .collect();
        let dataset_anomaly = self
            .anomalies
            .and_then(|a| a.dataset_anomaly_info.as_ref())
            .map(anomaly_json);
        (datasets, dataset_anomaly)
    }

    /// Each feature's JSON in turn, in name order.
    fn for_each_feature(&self, mut each: impl FnMut(Value)) {
        let sides: Vec<Side<'_>> = std::iter::once(self.lhs).chain(self.rhs).collect();
        let by_name: Vec<BTreeMap<String, &FeatureNameStatistics>> = sides
            .iter()
            .map(|s| s.stats.features.iter().map(|f| (feature_name(f), f)).collect())
            .collect();
        let anomaly_info = self.anomalies.map(|a| &a.anomaly_info);
        let mut names: BTreeSet<&String> = by_name.iter().flat_map(|m| m.keys()).collect();
        if let Some(info) = anomaly_info {
            names.extend(info.keys());
        }
        for name in names {
            let per_side: Vec<Option<&FeatureNameStatistics>> = by_name.iter().map(|m| m.get(name).copied()).collect();
            let anomaly = anomaly_info.and_then(|info| info.get(name));
            each(feature_json(name, &per_side, &sides, anomaly));
        }
    }

    /// The page: one HTML file that needs nothing else.
    pub fn to_html(&self) -> String {
        let data = self.data_text();
        let title = escape_html(&self.title);
        let mut html = String::with_capacity(PAGE.len() + STYLE.len() + SCRIPT.len() + data.len() + title.len());
        // The template is split at its slots, so nothing filled in is read as a slot.
        let mut rest = PAGE;
        while let Some(start) = rest.find("{{") {
            let Some(len) = rest[start..].find("}}") else { break };
            html.push_str(&rest[..start]);
            match &rest[start + 2..start + len] {
                "TITLE" => html.push_str(&title),
                "STYLE" => html.push_str(STYLE),
                "SCRIPT" => html.push_str(SCRIPT),
                "DATA" => html.push_str(&data),
                other => html.push_str(other),
            }
            rest = &rest[start + len + 2..];
        }
        html.push_str(rest);
        html
    }
}

/// The two data sets of a comparison in one list, named as `tfdv.visualize_statistics` names
/// them when it shows lhs and rhs together: what `tfrec stats --compare` writes.
pub fn comparison(
    lhs: &DatasetFeatureStatistics,
    rhs: &DatasetFeatureStatistics,
    lhs_name: &str,
    rhs_name: &str,
) -> DatasetFeatureStatisticsList {
    let named = |d: &DatasetFeatureStatistics, name: &str| DatasetFeatureStatistics {
        name: name.to_owned(),
        ..d.clone()
    };
    DatasetFeatureStatisticsList {
        datasets: vec![named(lhs, lhs_name), named(rhs, rhs_name)],
    }
}

/// An `Anomalies` message from the protobuf text format (what `tfdv.write_anomalies_text`
/// writes), to mark a report's features with.
pub fn anomalies_from_text(text: &str) -> Result<Anomalies, StatsError> {
    use prost::Message as _;
    const ANOMALIES: &str = "tensorflow.metadata.v0.Anomalies";
    let pool = prost_reflect::DescriptorPool::decode(super::proto::FILE_DESCRIPTOR_SET)
        .map_err(|e| StatsError::Proto(format!("the built-in descriptors do not load: {e}")))?;
    let descriptor = pool
        .get_message_by_name(ANOMALIES)
        .ok_or_else(|| StatsError::Proto(format!("the built-in descriptors lack {ANOMALIES}")))?;
    let message = prost_reflect::DynamicMessage::parse_text_format(descriptor, text)
        .map_err(|e| StatsError::Text(e.to_string()))?;
    decode_anomalies(&message.encode_to_vec())
}

/// An `Anomalies` message from its protobuf bytes (`SerializeToString()` of
/// `tfdv.validate_statistics`' result).
pub fn decode_anomalies(bytes: &[u8]) -> Result<Anomalies, StatsError> {
    use prost::Message as _;
    Anomalies::decode(bytes).map_err(|e| StatsError::Proto(e.to_string()))
}

/// A feature's name as TFDV shows it: its path's steps joined by `.` (or its old `name`).
pub fn feature_name(feature: &FeatureNameStatistics) -> String {
    match &feature.field_id {
        Some(FieldId::Path(path)) => path.step.join("."),
        Some(FieldId::Name(name)) => name.clone(),
        None => String::new(),
    }
}

fn side_name<'a>(stats: &'a DatasetFeatureStatistics, default: &'a str) -> &'a str {
    if stats.name.is_empty() {
        default
    } else {
        &stats.name
    }
}

fn feature_json(
    name: &str,
    per_side: &[Option<&FeatureNameStatistics>],
    sides: &[Side<'_>],
    anomaly: Option<&super::proto::AnomalyInfo>,
) -> Value {
    let first = per_side.iter().flatten().next();
    let numeric = matches!(first.and_then(|f| f.stats.as_ref()), Some(Stats::NumStats(_)));
    let type_name = first
        .and_then(|f| Type::try_from(f.r#type).ok())
        .map_or("", |t| t.as_str_name());
    let drift = match per_side {
        [Some(a), Some(b)] => feature_drift(a, b),
        _ => None,
    };
    let stats: Vec<Value> = per_side
        .iter()
        .map(|f| f.map_or(Value::Null, side_stats_json))
        .collect();
    let mut examples = Vec::new();
    let mut images = Vec::new();
    for (side, f) in sides.iter().zip(per_side) {
        let sampled = side.samples.and_then(|s| s.features.get(name));
        let values: Vec<String> = match sampled {
            Some(s) if !s.values.is_empty() => s.values.clone(),
            // Without samples, a string feature's most frequent values stand for it.
            _ => top_values(*f).into_iter().take(3).map(|(v, _)| v).collect(),
        };
        examples.push(json!(values));
        images.push(Value::Array(
            sampled
                .map(|s| s.images.iter().map(image_json).collect())
                .unwrap_or_default(),
        ));
    }
    let mut out = Map::new();
    out.insert("name".into(), json!(name));
    out.insert("kind".into(), json!(if numeric { "numeric" } else { "string" }));
    out.insert("type".into(), json!(type_name));
    out.insert("stats".into(), Value::Array(stats));
    out.insert("examples".into(), Value::Array(examples));
    if images.iter().any(|i| i.as_array().is_some_and(|a| !a.is_empty())) {
        out.insert("images".into(), Value::Array(images));
    }
    if numeric {
        out.insert("hist".into(), histograms_json(per_side));
    } else {
        out.insert("bars".into(), bars_json(per_side));
    }
    if let Some(d) = drift {
        out.insert(
            "drift".into(),
            json!({
                "measure": d.measure.name(),
                "label": match d.measure {
                    DriftMeasure::LInfinity => "L-infinity distance",
                    DriftMeasure::NormalizedAbsDifference => "normalized absolute difference",
                    DriftMeasure::JensenShannon => "Jensen–Shannon divergence",
                },
                "value": number(d.value),
                "at": d.at,
            }),
        );
    }
    if let Some(a) = anomaly {
        out.insert("anomaly".into(), anomaly_json(a));
    }
    Value::Object(out)
}

fn anomaly_json(a: &super::proto::AnomalyInfo) -> Value {
    let severity = a.severity().as_str_name();
    json!({
        "severity": severity,
        "short": a.short_description(),
        "description": a.description(),
    })
}

fn image_json(image: &ImageSample) -> Value {
    json!({
        "format": image.format.label(),
        "width": image.size.map(|s| s.0),
        "height": image.size.map(|s| s.1),
        "bytes": image.byte_len,
        "uri": image.data_uri,
    })
}

/// A float as JSON: a number, or `"NaN"`, `"inf"`, `"-inf"` (which JSON cannot spell).
fn number(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else if x.is_nan() {
        json!("NaN")
    } else if x > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

fn side_stats_json(feature: &FeatureNameStatistics) -> Value {
    let common = match &feature.stats {
        Some(Stats::NumStats(s)) => s.common_stats.as_ref(),
        Some(Stats::StringStats(s)) => s.common_stats.as_ref(),
        Some(Stats::BytesStats(s)) => s.common_stats.as_ref(),
        Some(Stats::StructStats(s)) => s.common_stats.as_ref(),
        None => None,
    };
    let mut out = Map::new();
    if let Some(c) = common {
        let total = c.num_non_missing + c.num_missing;
        out.insert("count".into(), json!(c.num_non_missing));
        out.insert(
            "missing".into(),
            number(if total > 0 {
                c.num_missing as f64 / total as f64
            } else {
                0.0
            }),
        );
        out.insert("avgValues".into(), number(f64::from(c.avg_num_values)));
        out.insert("minValues".into(), json!(c.min_num_values));
        out.insert("maxValues".into(), json!(c.max_num_values));
    }
    match &feature.stats {
        Some(Stats::NumStats(s)) => {
            let values = common.map_or(0, |c| c.tot_num_values);
            out.insert("mean".into(), number(s.mean));
            out.insert("stdDev".into(), number(s.std_dev));
            out.insert(
                "zeros".into(),
                number(if values > 0 {
                    s.num_zeros as f64 / values as f64
                } else {
                    0.0
                }),
            );
            out.insert("min".into(), number(s.min));
            out.insert("median".into(), number(s.median));
            out.insert("max".into(), number(s.max));
        }
        Some(Stats::StringStats(s)) => {
            out.insert("unique".into(), json!(s.unique));
            out.insert("avgLength".into(), number(f64::from(s.avg_length)));
            if let Some(top) = s.top_values.first() {
                out.insert("top".into(), json!(top.value));
                out.insert("topCount".into(), number(top.frequency));
            }
        }
        _ => {}
    }
    Value::Object(out)
}

fn standard_histogram(feature: Option<&FeatureNameStatistics>) -> Option<&Histogram> {
    match feature?.stats.as_ref()? {
        Stats::NumStats(s) => s.histograms.iter().find(|h| h.r#type == HistogramType::Standard as i32),
        _ => None,
    }
}

/// Each side's histogram as `{edges, counts, nan}`: as computed for one data set; for two,
/// both redrawn on equal buckets over their common range (values taken as uniform within a
/// bucket) so that their bars line up.
fn histograms_json(per_side: &[Option<&FeatureNameStatistics>]) -> Value {
    let hists: Vec<Option<&Histogram>> = per_side.iter().map(|f| standard_histogram(*f)).collect();
    let all_finite = hists
        .iter()
        .flatten()
        .flat_map(|h| &h.buckets)
        .all(|b| b.low_value.is_finite() && b.high_value.is_finite());
    let range = hists
        .iter()
        .flatten()
        .flat_map(|h| &h.buckets)
        .fold(None, |acc: Option<(f64, f64)>, b| {
            let (lo, hi) = acc.unwrap_or((b.low_value, b.high_value));
            Some((lo.min(b.low_value), hi.max(b.high_value)))
        });
    let common_edges = match range {
        Some((lo, hi)) if hists.len() > 1 && all_finite => Some(if hi > lo {
            (0..=COMPARED_BUCKETS)
                .map(|i| lo + (hi - lo) * i as f64 / COMPARED_BUCKETS as f64)
                .collect::<Vec<f64>>()
        } else {
            vec![lo, hi]
        }),
        _ => None,
    };
    Value::Array(
        hists
            .iter()
            .map(|h| {
                let Some(h) = h else { return Value::Null };
                let (edges, counts) = match &common_edges {
                    Some(edges) => (edges.clone(), counts_on(h, edges)),
                    None => {
                        let mut edges: Vec<f64> = h.buckets.iter().map(|b| b.low_value).collect();
                        edges.extend(h.buckets.last().map(|b| b.high_value));
                        (edges, h.buckets.iter().map(|b| b.sample_count).collect())
                    }
                };
                json!({
                    "edges": edges.into_iter().map(number).collect::<Vec<_>>(),
                    "counts": counts.into_iter().map(number).collect::<Vec<_>>(),
                    "nan": h.num_nan,
                })
            })
            .collect(),
    )
}

/// `h`'s counts on the buckets between `edges`; a bucket of no width (a point) counts in the
/// bucket holding its value.
fn counts_on(h: &Histogram, edges: &[f64]) -> Vec<f64> {
    let mut counts = ranged_counts_on(h, edges);
    if counts.is_empty() {
        return counts;
    }
    for b in h.buckets.iter().filter(|b| b.high_value <= b.low_value) {
        let i = edges
            .partition_point(|&e| e <= b.low_value)
            .saturating_sub(1)
            .min(counts.len() - 1);
        counts[i] += b.sample_count;
    }
    counts
}

/// A string feature's most frequent values, with their counts.
fn top_values(feature: Option<&FeatureNameStatistics>) -> Vec<(String, f64)> {
    match feature.and_then(|f| f.stats.as_ref()) {
        Some(Stats::StringStats(s)) => s.top_values.iter().map(|v| (v.value.clone(), v.frequency)).collect(),
        _ => Vec::new(),
    }
}

/// The string feature's top values as bars `[value, fraction per side…]`: the most frequent
/// of the first data set (of the second when the first has none), each side's fraction of
/// its values (taken from its rank histogram, so a value outside its top values still shows).
fn bars_json(per_side: &[Option<&FeatureNameStatistics>]) -> Value {
    let counts: Vec<BTreeMap<String, f64>> = per_side
        .iter()
        .map(|f| {
            let counts = f.map(string_value_counts).unwrap_or_default();
            // Statistics without a rank histogram still have their top values to show.
            if counts.is_empty() {
                top_values(*f).into_iter().collect()
            } else {
                counts
            }
        })
        .collect();
    let totals: Vec<f64> = per_side
        .iter()
        .zip(&counts)
        .map(|(f, c)| {
            let values = f.and_then(|f| match f.stats.as_ref()? {
                Stats::StringStats(s) => s.common_stats.as_ref().map(|c| c.tot_num_values as f64),
                _ => None,
            });
            values.filter(|v| *v > 0.0).unwrap_or_else(|| c.values().sum())
        })
        .collect();
    let leader = per_side.iter().position(|f| !top_values(*f).is_empty()).unwrap_or(0);
    let labels: Vec<String> = top_values(per_side.get(leader).copied().flatten())
        .into_iter()
        .take(BARS_SHOWN)
        .map(|(v, _)| v)
        .collect();
    Value::Array(
        labels
            .into_iter()
            .map(|label| {
                let mut bar = vec![json!(label)];
                for (c, total) in counts.iter().zip(&totals) {
                    let n = c.get(&label).copied().unwrap_or(0.0);
                    bar.push(number(if *total > 0.0 { n / total } else { 0.0 }));
                }
                Value::Array(bar)
            })
            .collect(),
    )
}

/// JSON that can sit inside a `<script>` element: every `<`, `>`, `&` and `/` escaped (they
/// only occur inside strings, where `\u003c` and `\/` mean the same), so no value can close
/// the element or read as a URL to the HTML parser.
fn script_safe_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '/' => out.push_str("\\/"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;

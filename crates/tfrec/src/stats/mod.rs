//! Statistics of Examples as TensorFlow Data Validation (TFDV) computes them, in its format:
//! tensorflow_metadata's `DatasetFeatureStatisticsList`, so that TFDV, TFX and Facets read
//! tfrec's files and tfrec reads theirs.
//!
//! Start with [`generate_statistics`] (files in, statistics out) or, for records from
//! elsewhere, a [`StatsAccumulator`]. The figures follow TFDV 1.16.1 with its default
//! options, rule for rule (the sources are named where each rule is kept):
//! - per feature, its type (`INT`, `FLOAT`, `STRING`; a feature whose kind is never set is a
//!   `STRING` with every example missing), presence and values per example, and the
//!   values-per-example quantiles histogram;
//! - numeric features: mean, std_dev (population; NaN values left out, an infinite value makes
//!   the mean NaN and std_dev 0, as TFDV's batch combine does), zeros, min, median, max, a
//!   standard histogram interpolated from a 1000-quantile sketch (`histogram`) and a
//!   quantiles histogram, with NaN counts;
//! - string features: distinct values, top values and rank histogram (exact counts, ties by
//!   the value's bytes, descending; values that are not UTF-8 shown as `__BYTES_VALUE__`),
//!   average length in bytes and the count of values that are not UTF-8.
//!
//! Quantiles come from a port of TFDV's sketch (`quantiles`): exact below about 10,000 values
//! per feature, within `epsilon` in rank above. A feature whose kind changes between records
//! is an error, as it is for TFDV. SequenceExamples ([`RecordMessage`]): the context features
//! as features, the feature lists as TFDV computes them from tfx_bsl's SequenceExample decoder
//! (`sequence`). `sample_rate` and `feature_allowlist` as TFDV's options, and the damage the
//! readers skipped noted on the features (`select`). Weights, slicing and the schema-driven
//! options are not computed yet.
//!
//! Two data sets are compared by TFDV's drift and skew measures ([`measure_drift`],
//! [`feature_drift`]; `drift`, which validation uses too), and [`report`]
//! draws the statistics, of one data set or two side by side, as one self-contained HTML page.
//! From statistics, [`infer_schema`] infers a tensorflow_metadata `Schema` by
//! `tfdv.infer_schema`'s rules (`schema`), and [`validate_statistics`] checks statistics
//! against a schema, with drift and skew against other statistics, giving TFDV's `Anomalies`
//! (`validate`).

mod accumulate;
mod drift;
mod error;
mod files;
mod generate;
mod histogram;
mod lengths;
mod options;
mod parallel;
mod partial;
pub mod proto;
mod quantiles;
pub mod report;
mod schema;
mod select;
mod sequence;
mod string_counts;
mod text;
mod validate;
mod view;

pub use accumulate::StatsAccumulator;
pub use drift::{
    categorical_jensen_shannon_divergence, feature_drift, jensen_shannon_divergence, l_infinity_distance,
    measure_drift, normalized_abs_difference, string_value_counts, Drift, DriftMeasure,
};
pub use error::{RecordPlace, StatsError};
pub use files::{
    decode_anomalies, decode_schema, encode_anomalies, encode_schema, read_schema_file, read_statistics_file,
};
pub use generate::{
    generate_statistics, merge_partials, statistics_of_file, statistics_of_files, statistics_of_files_counting,
    GenerateOutput, CHUNK_BYTES,
};
pub use options::{RecordMessage, StatsOptions};
pub use partial::statistics_of_records;
pub use quantiles::QuantilesSketch;
pub use schema::{infer_schema, schema_from_text, schema_to_text, InferSchemaOptions};
pub use sequence::SEQUENCE_FEATURE;
pub use text::{decode_statistics, encode_statistics, statistics_from_text, statistics_to_text};
pub use validate::{anomalies_to_text, has_anomalies, validate_statistics};

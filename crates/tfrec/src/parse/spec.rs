//! Feature specs (`tf.io.FixedLenFeature`, `VarLenFeature`, `SparseFeature`,
//! `FixedLenSequenceFeature`, `RaggedFeature`), their validation with TensorFlow's reasons, and
//! their JSON form (the spec objects of the golden vectors' README).

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine;
use serde_json::{json, Value};

use crate::example::Kind;

/// The value types TensorFlow's parsing ops support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    Int64,
    Float32,
    /// `tf.string`: bytes.
    String,
}

impl DType {
    /// The name TensorFlow's error messages use: `int64`, `float`, `string`.
    pub fn tf_name(self) -> &'static str {
        match self {
            DType::Int64 => "int64",
            DType::Float32 => "float",
            DType::String => "string",
        }
    }

    /// The name of the JSON forms: `int64`, `float32`, `string`.
    pub fn json_name(self) -> &'static str {
        match self {
            DType::Int64 => "int64",
            DType::Float32 => "float32",
            DType::String => "string",
        }
    }

    /// The feature kind that holds values of this type.
    pub fn kind(self) -> Kind {
        match self {
            DType::Int64 => Kind::Int64,
            DType::Float32 => Kind::Float,
            DType::String => Kind::Bytes,
        }
    }

    /// The dtype of values of a feature kind.
    pub fn of_kind(kind: Kind) -> DType {
        match kind {
            Kind::Int64 => DType::Int64,
            Kind::Float => DType::Float32,
            Kind::Bytes => DType::String,
        }
    }

    pub(crate) fn from_json_name(name: &str) -> Option<DType> {
        match name {
            "int64" => Some(DType::Int64),
            "float32" | "float" => Some(DType::Float32),
            "string" | "bytes" => Some(DType::String),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tf_name())
    }
}

/// The integer type of a ragged tensor's row splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SplitsDType {
    /// TensorFlow's default for `RaggedFeature`.
    #[default]
    Int32,
    Int64,
}

impl SplitsDType {
    pub fn json_name(self) -> &'static str {
        match self {
            SplitsDType::Int32 => "int32",
            SplitsDType::Int64 => "int64",
        }
    }
}

/// A typed, flat list of values: a default value or a tensor's contents.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Int64(Vec<i64>),
    Float32(Vec<f32>),
    String(Vec<Vec<u8>>),
}

impl Values {
    /// An empty list of `dtype`.
    pub fn empty(dtype: DType) -> Values {
        match dtype {
            DType::Int64 => Values::Int64(Vec::new()),
            DType::Float32 => Values::Float32(Vec::new()),
            DType::String => Values::String(Vec::new()),
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            Values::Int64(_) => DType::Int64,
            Values::Float32(_) => DType::Float32,
            Values::String(_) => DType::String,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Values::Int64(v) => v.len(),
            Values::Float32(v) => v.len(),
            Values::String(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The zero of `dtype`: 0, 0.0 or `""` (TensorFlow's padding).
    pub fn zero(dtype: DType) -> Values {
        match dtype {
            DType::Int64 => Values::Int64(vec![0]),
            DType::Float32 => Values::Float32(vec![0.0]),
            DType::String => Values::String(vec![Vec::new()]),
        }
    }
}

/// One partition of a [`RaggedFeature`], from the outermost in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partition {
    /// Row splits from the int64 feature `key`.
    RowSplits(String),
    /// Row lengths from the int64 feature `key`.
    RowLengths(String),
    /// Row starts from the int64 feature `key`.
    RowStarts(String),
    /// Row limits from the int64 feature `key`.
    RowLimits(String),
    /// Value row ids from the int64 feature `key`.
    ValueRowIds(String),
    /// Rows of this many elements; innermost, it reshapes the values into a dense dimension.
    UniformRowLength(i64),
}

impl Partition {
    /// The feature the partition reads, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            Partition::RowSplits(k)
            | Partition::RowLengths(k)
            | Partition::RowStarts(k)
            | Partition::RowLimits(k)
            | Partition::ValueRowIds(k) => Some(k),
            Partition::UniformRowLength(_) => None,
        }
    }
}

/// `tf.io.FixedLenFeature`: a dense tensor of a fixed shape.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedLenFeature {
    pub shape: Vec<usize>,
    pub dtype: DType,
    /// `prod(shape)` values in row-major order; `None` makes the feature required.
    pub default_value: Option<Values>,
}

/// `tf.io.FixedLenSequenceFeature`: a dense tensor with a variable first dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedLenSequenceFeature {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub allow_missing: bool,
    /// A single padding value (0 / 0.0 / `""` when `None`).
    pub default_value: Option<Values>,
}

/// `tf.io.VarLenFeature`: a sparse tensor of all values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarLenFeature {
    pub dtype: DType,
}

/// `tf.io.SparseFeature`: a sparse tensor whose indices come from other features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparseFeature {
    pub index_keys: Vec<String>,
    pub value_key: String,
    pub dtype: DType,
    pub size: Vec<i64>,
    pub already_sorted: bool,
}

/// `tf.io.RaggedFeature`: a ragged tensor, optionally partitioned by other features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaggedFeature {
    pub dtype: DType,
    /// The feature holding the values; `None` means the feature's own name.
    pub value_key: Option<String>,
    /// Partitions from the outermost in.
    pub partitions: Vec<Partition>,
    pub row_splits_dtype: SplitsDType,
    /// Check that the partitions form a valid ragged tensor.
    pub validate: bool,
}

/// A feature spec.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureSpec {
    FixedLen(FixedLenFeature),
    FixedLenSequence(FixedLenSequenceFeature),
    VarLen(VarLenFeature),
    Sparse(SparseFeature),
    Ragged(RaggedFeature),
}

impl FeatureSpec {
    /// TensorFlow's class name for this spec.
    pub fn type_name(&self) -> &'static str {
        match self {
            FeatureSpec::FixedLen(_) => "FixedLenFeature",
            FeatureSpec::FixedLenSequence(_) => "FixedLenSequenceFeature",
            FeatureSpec::VarLen(_) => "VarLenFeature",
            FeatureSpec::Sparse(_) => "SparseFeature",
            FeatureSpec::Ragged(_) => "RaggedFeature",
        }
    }

    /// The dtype of the feature's values.
    pub fn dtype(&self) -> DType {
        match self {
            FeatureSpec::FixedLen(s) => s.dtype,
            FeatureSpec::FixedLenSequence(s) => s.dtype,
            FeatureSpec::VarLen(s) => s.dtype,
            FeatureSpec::Sparse(s) => s.dtype,
            FeatureSpec::Ragged(s) => s.dtype,
        }
    }
}

/// Specs by feature name, kept sorted as TensorFlow processes them.
pub type FeatureSpecs = BTreeMap<String, FeatureSpec>;

/// The two spec dicts of `parse_sequence_example`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SequenceSpecs {
    pub context_features: FeatureSpecs,
    pub sequence_features: FeatureSpecs,
}

/// A spec TensorFlow would refuse before parsing anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// No features were asked for.
    #[error("{0}")]
    NoFeatures(&'static str),
    /// A spec that is wrong on its own.
    #[error("{0}")]
    Invalid(String),
    /// A spec JSON that cannot be read.
    #[error("spec JSON: {0}")]
    Json(String),
}

fn invalid(message: impl Into<String>) -> SpecError {
    SpecError::Invalid(message.into())
}

pub(crate) fn shape_string(dims: &[Option<usize>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| d.map_or_else(|| "?".to_owned(), |n| n.to_string()))
        .collect();
    format!("[{}]", parts.join(","))
}

/// `[2,3]`, as TensorFlow prints a shape.
pub(crate) fn known_shape_string(dims: &[usize]) -> String {
    shape_string(&dims.iter().map(|&d| Some(d)).collect::<Vec<_>>())
}

/// The number of elements of `shape`, refused (as `tf.TensorShape` does) when it would not fit
/// an int64. Only a count: nothing is allocated from a spec before data needs it.
pub(crate) fn checked_elements(shape: &[usize], name: &str) -> Result<usize, SpecError> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| i64::try_from(n).is_ok() && shape.iter().all(|&d| i64::try_from(d).is_ok()))
        .ok_or_else(|| {
            invalid(format!(
                "Shape {} of feature {name} would have more than 2**63 - 1 elements",
                known_shape_string(shape)
            ))
        })
}

// ---- JSON -----------------------------------------------------------------------------------

fn flatten_json<'v>(value: &'v Value, out: &mut Vec<&'v Value>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| flatten_json(v, out)),
        other => out.push(other),
    }
}

/// Reads JSON values (a scalar or nested lists) as flat typed values.
pub fn values_from_json(value: &Value, dtype: DType) -> Result<Values, String> {
    let mut flat = Vec::new();
    flatten_json(value, &mut flat);
    Ok(match dtype {
        DType::Int64 => Values::Int64(
            flat.iter()
                .map(|v| v.as_i64().ok_or_else(|| format!("{v} is not an int64")))
                .collect::<Result<_, _>>()?,
        ),
        DType::Float32 => Values::Float32(
            flat.iter()
                .map(|v| match v {
                    Value::Number(n) => n
                        .as_f64()
                        .map(|f| f as f32)
                        .ok_or_else(|| format!("{v} is not a float")),
                    Value::String(s) if s == "NaN" => Ok(f32::NAN),
                    Value::String(s) if s == "Infinity" => Ok(f32::INFINITY),
                    Value::String(s) if s == "-Infinity" => Ok(f32::NEG_INFINITY),
                    _ => Err(format!("{v} is not a float")),
                })
                .collect::<Result<_, _>>()?,
        ),
        DType::String => Values::String(
            flat.iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.as_bytes().to_vec()),
                    Value::Object(o) => o
                        .get("base64")
                        .and_then(Value::as_str)
                        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
                        .ok_or_else(|| format!("{v} is not bytes")),
                    _ => Err(format!("{v} is not a string")),
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// Values as JSON: numbers, `"NaN"`/`"Infinity"`, strings or `{"base64": …}` (a flat list).
pub fn values_to_json(values: &Values) -> Value {
    match values {
        Values::Int64(v) => json!(v),
        Values::Float32(v) => Value::Array(v.iter().map(|&f| float_to_json(f)).collect()),
        Values::String(v) => Value::Array(v.iter().map(|b| bytes_to_json(b)).collect()),
    }
}

pub(crate) fn float_to_json(f: f32) -> Value {
    if f.is_nan() {
        json!("NaN")
    } else if f.is_infinite() {
        json!(if f > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(f64::from(f))
    }
}

pub(crate) fn bytes_to_json(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => json!(s),
        Err(_) => json!({"base64": base64::engine::general_purpose::STANDARD.encode(b)}),
    }
}

impl FeatureSpec {
    /// Reads one spec object strictly (unknown keys and wrongly typed values are errors naming
    /// the key), then checks it as TensorFlow's constructors and `_ParseOpParams` do.
    pub fn from_json(name: &str, value: &Value) -> Result<FeatureSpec, SpecError> {
        super::spec_json::spec_from_json(name, value)
    }

    /// The JSON form of this spec.
    pub fn to_json(&self) -> Value {
        let default = |d: &Option<Values>| d.as_ref().map_or(Value::Null, values_to_json);
        match self {
            FeatureSpec::FixedLen(s) => json!({
                "type": "FixedLenFeature", "shape": s.shape, "dtype": s.dtype.json_name(),
                "default_value": default(&s.default_value),
            }),
            FeatureSpec::FixedLenSequence(s) => json!({
                "type": "FixedLenSequenceFeature", "shape": s.shape, "dtype": s.dtype.json_name(),
                "allow_missing": s.allow_missing, "default_value": match &s.default_value {
                    Some(v) => values_to_json(v).as_array().and_then(|a| a.first().cloned()).unwrap_or(Value::Null),
                    None => Value::Null,
                },
            }),
            FeatureSpec::VarLen(s) => json!({"type": "VarLenFeature", "dtype": s.dtype.json_name()}),
            FeatureSpec::Sparse(s) => json!({
                "type": "SparseFeature", "index_key": s.index_keys, "value_key": s.value_key,
                "dtype": s.dtype.json_name(), "size": s.size, "already_sorted": s.already_sorted,
            }),
            FeatureSpec::Ragged(s) => json!({
                "type": "RaggedFeature", "dtype": s.dtype.json_name(), "value_key": s.value_key,
                "row_splits_dtype": s.row_splits_dtype.json_name(), "validate": s.validate,
                "partitions": s.partitions.iter().map(|p| match p {
                    Partition::UniformRowLength(n) => json!({"kind": "uniform_row_length", "length": n}),
                    other => {
                        let kind = match other {
                            Partition::RowSplits(_) => "row_splits",
                            Partition::RowLengths(_) => "row_lengths",
                            Partition::RowStarts(_) => "row_starts",
                            Partition::RowLimits(_) => "row_limits",
                            _ => "value_row_ids",
                        };
                        json!({"kind": kind, "key": other.key()})
                    }
                }).collect::<Vec<_>>(),
            }),
        }
    }
}

/// Reads a JSON object of name → spec.
pub fn specs_from_json(value: &Value) -> Result<FeatureSpecs, SpecError> {
    let object = value
        .as_object()
        .ok_or_else(|| SpecError::Json("the specs must be a JSON object of name → spec".into()))?;
    object
        .iter()
        .map(|(name, spec)| Ok((name.clone(), FeatureSpec::from_json(name, spec)?)))
        .collect()
}

/// Writes specs as a JSON object of name → spec.
pub fn specs_to_json(specs: &FeatureSpecs) -> Value {
    Value::Object(specs.iter().map(|(k, s)| (k.clone(), s.to_json())).collect())
}

impl SequenceSpecs {
    /// Reads `{"context_features": {...}, "sequence_features": {...}}` (either may be absent or
    /// null; no other key is accepted).
    pub fn from_json(value: &Value) -> Result<SequenceSpecs, SpecError> {
        use serde::Deserialize;
        let parts = super::spec_json::SequenceJson::deserialize(value)
            .map_err(|e| SpecError::Json(format!("sequence specs: {e}")))?;
        let read = |part: Option<serde_json::Map<String, Value>>| match part {
            None => Ok(FeatureSpecs::new()),
            Some(object) => specs_from_json(&Value::Object(object)),
        };
        Ok(SequenceSpecs {
            context_features: read(parts.context_features)?,
            sequence_features: read(parts.sequence_features)?,
        })
    }

    /// Writes the JSON form.
    pub fn to_json(&self) -> Value {
        json!({
            "context_features": specs_to_json(&self.context_features),
            "sequence_features": specs_to_json(&self.sequence_features),
        })
    }
}

/// Either spec form, as a spec file may hold: `parse_example`'s or `parse_sequence_example`'s.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecFile {
    Example(FeatureSpecs),
    Sequence(SequenceSpecs),
}

impl SpecFile {
    /// Reads a spec file's JSON: a sequence spec when it has `context_features` or
    /// `sequence_features`, else a map of name → spec.
    pub fn from_json(value: &Value) -> Result<SpecFile, SpecError> {
        if value.get("context_features").is_some() || value.get("sequence_features").is_some() {
            SequenceSpecs::from_json(value).map(SpecFile::Sequence)
        } else {
            specs_from_json(value).map(SpecFile::Example)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trips() {
        let text = r#"{
            "a": {"type": "FixedLenFeature", "shape": [2], "dtype": "float32", "default_value": [1.5, "NaN"]},
            "b": {"type": "VarLenFeature", "dtype": "string"},
            "c": {"type": "SparseFeature", "index_key": ["i", "j"], "value_key": "v", "dtype": "int64", "size": [3, 4], "already_sorted": true},
            "d": {"type": "RaggedFeature", "dtype": "int64", "value_key": null, "row_splits_dtype": "int64", "validate": true,
                  "partitions": [{"kind": "row_lengths", "key": "l"}, {"kind": "uniform_row_length", "length": 2}]},
            "e": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true, "default_value": -1}
        }"#;
        let specs = specs_from_json(&serde_json::from_str(text).unwrap()).unwrap();
        let again = specs_from_json(&specs_to_json(&specs)).unwrap();
        assert_eq!(format!("{specs:?}"), format!("{again:?}"));
    }

    #[test]
    fn tf_reasons_for_bad_shapes() {
        let bad = |s: &str| {
            FeatureSpec::from_json("k", &serde_json::from_str(s).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            bad(r#"{"type": "FixedLenFeature", "dtype": "int64"}"#),
            "Missing shape for feature k."
        );
        assert_eq!(
            bad(r#"{"type": "FixedLenFeature", "shape": [null, 2], "dtype": "int64"}"#),
            "First dimension of shape for feature k unknown. Consider using FixedLenSequenceFeature."
        );
        assert_eq!(
            bad(r#"{"type": "FixedLenFeature", "shape": [2, null], "dtype": "int64"}"#),
            "All dimensions of shape for feature k need to be known but received [2,?]."
        );
        assert_eq!(bad(r#"{"type": "VarLenFeature"}"#), "Missing type for feature k.");
        assert!(bad(r#"{"type": "VarLenFeature", "dtype": "bool"}"#).contains("Unsupported dtype bool"));
    }
}

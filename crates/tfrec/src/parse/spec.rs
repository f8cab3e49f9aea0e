//! Feature specs (`tf.io.FixedLenFeature`, `VarLenFeature`, `SparseFeature`,
//! `FixedLenSequenceFeature`, `RaggedFeature`) and the errors of specs TensorFlow refuses, with
//! TensorFlow's shape strings. Their JSON form is in `spec_json`.

use std::collections::BTreeMap;

use super::values::{DType, SplitsDType, Values};

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
    /// The shape of each example's tensor.
    pub shape: Vec<usize>,
    /// The values' type.
    pub dtype: DType,
    /// `prod(shape)` values in row-major order; `None` makes the feature required.
    pub default_value: Option<Values>,
}

/// `tf.io.FixedLenSequenceFeature`: a dense tensor with a variable first dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedLenSequenceFeature {
    /// The shape of each row (the dimensions after the variable one).
    pub shape: Vec<usize>,
    /// The values' type.
    pub dtype: DType,
    /// Whether examples may lack the feature (TensorFlow requires it for `parse_example`).
    pub allow_missing: bool,
    /// A single padding value (0 / 0.0 / `""` when `None`).
    pub default_value: Option<Values>,
}

/// `tf.io.VarLenFeature`: a sparse tensor of all values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarLenFeature {
    /// The values' type.
    pub dtype: DType,
}

/// `tf.io.SparseFeature`: a sparse tensor whose indices come from other features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparseFeature {
    /// The int64 features holding each value's index, one per dimension.
    pub index_keys: Vec<String>,
    /// The feature holding the values.
    pub value_key: String,
    /// The values' type.
    pub dtype: DType,
    /// The dense shape beyond the batch dimension, one size per index key.
    pub size: Vec<i64>,
    /// Whether the indices are already in order (no reordering).
    pub already_sorted: bool,
    /// Set when the spec gave `size` in the other form than `index_key` (an int for a list
    /// of keys, a list for one key as a string): `sparse_merge` refuses it once the records
    /// are parsed, which is when we refuse it too. Says what `size` has to be.
    pub size_form_error: Option<&'static str>,
}

/// `tf.io.RaggedFeature`: a ragged tensor, optionally partitioned by other features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaggedFeature {
    /// The values' type.
    pub dtype: DType,
    /// The feature holding the values; `None` means the feature's own name.
    pub value_key: Option<String>,
    /// Partitions from the outermost in.
    pub partitions: Vec<Partition>,
    /// The dtype of the row splits.
    pub row_splits_dtype: SplitsDType,
    /// Check that the partitions form a valid ragged tensor.
    pub validate: bool,
}

/// A feature spec.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureSpec {
    /// `tf.io.FixedLenFeature`.
    FixedLen(FixedLenFeature),
    /// `tf.io.FixedLenSequenceFeature`.
    FixedLenSequence(FixedLenSequenceFeature),
    /// `tf.io.VarLenFeature`.
    VarLen(VarLenFeature),
    /// `tf.io.SparseFeature`.
    Sparse(SparseFeature),
    /// `tf.io.RaggedFeature`.
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
    /// Specs of the context features (one value set per example).
    pub context_features: FeatureSpecs,
    /// Specs of the feature lists (one value set per step).
    pub sequence_features: FeatureSpecs,
}

/// Either spec form, as a spec file may hold: `parse_example`'s or `parse_sequence_example`'s.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecFile {
    /// Specs for `parse_example`: name → spec.
    Example(FeatureSpecs),
    /// Specs for `parse_sequence_example`.
    Sequence(SequenceSpecs),
}

/// A spec TensorFlow would refuse before parsing anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// No features were asked for.
    #[error("{0}")]
    NoFeatures(&'static str),
    /// A spec without a dtype.
    #[error("Missing type for feature {feature}.")]
    MissingType {
        /// The feature.
        feature: String,
    },
    /// A dtype the parsing ops do not support.
    #[error("Unsupported dtype {dtype} for feature {feature}: only int64, float32 and string are supported")]
    UnsupportedDType {
        /// The feature.
        feature: String,
        /// The dtype asked for.
        dtype: String,
    },
    /// A spec without a shape.
    #[error("Missing shape for feature {feature}.")]
    MissingShape {
        /// The feature.
        feature: String,
    },
    /// A negative dimension (other than -1, an unknown one).
    #[error("Dimension {dim} must be >= 0")]
    NegativeDimension {
        /// The dimension.
        dim: i64,
    },
    /// A FixedLenFeature whose first dimension is unknown.
    #[error("First dimension of shape for feature {feature} unknown. Consider using FixedLenSequenceFeature.")]
    FirstDimensionUnknown {
        /// The feature.
        feature: String,
    },
    /// A shape with an unknown dimension where all must be known.
    #[error("All dimensions of shape for feature {feature} need to be known but received {shape}.")]
    UnknownDimension {
        /// The feature.
        feature: String,
        /// The shape, as TensorFlow prints it (`[2,?]`).
        shape: String,
    },
    /// A shape of more elements than an int64 counts.
    #[error("Shape {shape} of feature {feature} would have more than 2**63 - 1 elements")]
    TooManyElements {
        /// The feature.
        feature: String,
        /// The shape, as TensorFlow prints it.
        shape: String,
    },
    /// A default value that cannot be read as the dtype.
    #[error("feature {feature}: default_value: {reason}")]
    BadDefault {
        /// The feature.
        feature: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// A FixedLenFeature default of another number of elements than the shape holds.
    #[error("Cannot reshape a tensor with {count} elements to shape {shape} ({expected} elements) for feature {feature}'s default_value")]
    DefaultShape {
        /// The feature.
        feature: String,
        /// Elements of the default.
        count: usize,
        /// The shape, as TensorFlow prints it.
        shape: String,
        /// Elements of the shape.
        expected: usize,
    },
    /// A context FixedLenFeature default of another number of elements than the shape holds.
    #[error("Default value for context feature {feature} has an incorrect shape: saw [{count}] but expected {shape}")]
    ContextDefaultShape {
        /// The feature.
        feature: String,
        /// Elements of the default.
        count: usize,
        /// The shape, as TensorFlow prints it.
        shape: String,
    },
    /// A FixedLenSequenceFeature default of more than the one padding value.
    #[error("dense_shape[{feature}] is a variable length shape: {shape}, therefore def_value must contain a single element (the padding element)")]
    PaddingNotSingle {
        /// The feature.
        feature: String,
        /// The shape with its unknown first dimension, as TensorFlow prints it.
        shape: String,
    },
    /// A feature-list FixedLenSequenceFeature with a default (`parse_sequence_example`).
    #[error("Value feature_list.dense_defaults[{feature}] must be None")]
    ListDefault {
        /// The feature.
        feature: String,
    },
    /// `parse_example` with a FixedLenSequenceFeature that does not allow missing values.
    #[error("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")]
    AllowMissingRequired,
    /// A spec type the op does not take (`parse_sequence_example`'s context or lists).
    #[error("Unsupported {spec} {feature}.")]
    Unsupported {
        /// The feature.
        feature: String,
        /// TensorFlow's class name of the spec.
        spec: &'static str,
    },
    /// A SparseFeature without index keys.
    #[error("Missing index_key for SparseFeature {feature}.")]
    MissingIndexKey {
        /// The feature.
        feature: String,
    },
    /// A SparseFeature without a value key.
    #[error("Missing value_key for SparseFeature {feature}.")]
    MissingValueKey {
        /// The feature.
        feature: String,
    },
    /// A SparseFeature with a negative size.
    #[error("SparseFeature {feature}: size: Dimension {size} must be >= 0")]
    NegativeSize {
        /// The feature.
        feature: String,
        /// The size.
        size: i64,
    },
    /// A SparseFeature whose `size` is not of the index key's form: an int for one key
    /// given as a string, a list for a list of keys (`sparse_ops.sparse_merge`'s TypeError).
    #[error("SparseFeature {feature}: vocab_size has to be {want}")]
    SizeForm {
        /// The feature.
        feature: String,
        /// What it has to be.
        want: &'static str,
    },
    /// A SparseFeature with not one size per index key (`parse_example`).
    #[error("SparseFeature {feature}: sp_ids and vocab_size have to have equal lengths ({index_keys} index keys, {sizes} sizes).")]
    SizeCount {
        /// The feature.
        feature: String,
        /// Index keys.
        index_keys: usize,
        /// Sizes.
        sizes: usize,
    },
    /// A RaggedFeature whose value key is the empty string.
    #[error("feature {feature}: value_key may not be empty")]
    EmptyValueKey {
        /// The feature.
        feature: String,
    },
    /// A negative uniform row length.
    #[error("uniform_row_length must be >= 0.")]
    NegativeUniformRowLength,
    /// Row splits of another type than int32 or int64.
    #[error("row_splits_dtype must be int32 or int64; got {dtype}")]
    SplitsDType {
        /// The type asked for.
        dtype: String,
    },
    /// One key read with two dtypes.
    #[error("Conflicting type {existing} vs {dtype} for feature {key}.")]
    ConflictingType {
        /// The key.
        key: String,
        /// The dtype of the first use.
        existing: DType,
        /// The dtype of this use.
        dtype: DType,
    },
    /// One ragged key read with two row-splits dtypes.
    #[error("Conflicting partition type {} vs {} for feature {key}.", existing.json_name(), dtype.json_name())]
    ConflictingPartitionType {
        /// The key.
        key: String,
        /// The splits dtype of the first use.
        existing: SplitsDType,
        /// The splits dtype of this use.
        dtype: SplitsDType,
    },
    /// One key in two key sets (dense, sparse, ragged).
    #[error("{sets} keys must not intersect; intersection: {{{}}}", keys.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", "))]
    KeySetsIntersect {
        /// The two sets, as TensorFlow names them (`Dense and sparse`).
        sets: &'static str,
        /// The keys in both, sorted.
        keys: Vec<String>,
    },
    /// Spec text that is not JSON.
    #[error("spec JSON: {message}")]
    JsonSyntax {
        /// The line of the error (1-based; 0 at the end of the text).
        line: usize,
        /// The column of the error (1-based).
        column: usize,
        /// serde_json's message, with the place.
        message: String,
    },
    /// Spec JSON that is not a JSON object of name → spec.
    #[error("spec JSON: the specs must be a JSON object of name → spec")]
    JsonNotAnObject,
    /// One feature's spec JSON that does not have the spec file's fields.
    #[error("spec JSON: feature {feature}: {message}")]
    JsonFeature {
        /// The feature.
        feature: String,
        /// What is wrong with its fields.
        message: String,
    },
    /// Sequence spec JSON without (or with wrong) `context_features` / `sequence_features`.
    #[error("spec JSON: sequence specs: {message}")]
    JsonSequence {
        /// What is wrong with its fields.
        message: String,
    },
    /// A spec file that cannot be read from disk.
    #[error("{path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// Why it could not be read.
        message: String,
    },
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
        .ok_or_else(|| SpecError::TooManyElements {
            feature: name.to_owned(),
            shape: known_shape_string(shape),
        })
}

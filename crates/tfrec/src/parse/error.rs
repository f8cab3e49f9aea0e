//! Errors of the parsing layer: what is wrong, with the feature key, the example index in the
//! batch and the row of a feature list, worded close to TensorFlow's messages.

use std::fmt;

use super::spec::SpecError;
use super::tensor::ShapeError;
use super::values::DType;
use crate::example::DecodeError;

/// What is wrong with the data (or the spec).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseErrorKind {
    /// The spec is refused before parsing (see [`SpecError`]).
    #[error(transparent)]
    Spec(Box<SpecError>),
    /// The record is not a valid message.
    #[error("Could not parse example input: {0}")]
    Malformed(DecodeError),
    /// A requested feature's values are not valid protobuf.
    #[error("Can't parse serialized Example: {0}")]
    MalformedFeature(DecodeError),
    /// A dense feature of another type than the spec's.
    #[error("Data types don't match. Data type: {actual} but expected type: {expected}")]
    DenseTypeMismatch {
        /// The spec's dtype.
        expected: DType,
        /// The data's dtype.
        actual: DType,
    },
    /// A sparse or ragged feature of another type than the spec's.
    #[error("Data types don't match. Expected type: {expected}, Actual type: {actual}")]
    TypeMismatch {
        /// The spec's dtype.
        expected: DType,
        /// The data's dtype.
        actual: DType,
    },
    /// A fixed-length feature with the wrong number of values.
    #[error("Number of {} values != expected.  Values size: {count} but output shape: {shape}", kind_word(*dtype))]
    WrongCount {
        /// The spec's dtype.
        dtype: DType,
        /// Values found.
        count: usize,
        /// The output shape, as TensorFlow prints it.
        shape: String,
    },
    /// A fixed-length string feature with more values than its shape holds: TensorFlow reads
    /// only what fits and reports the rest as a parse failure.
    #[error("Can't parse serialized Example.")]
    BytesOverflow {
        /// Values found.
        count: usize,
        /// Values the shape holds.
        expected: usize,
    },
    /// A variable-length dense feature whose values do not fill whole rows.
    #[error("Number of {} values is not a multiple of stride length. Saw {count} values but output shape is: {shape}", kind_word(*dtype))]
    NotMultipleOfStride {
        /// The spec's dtype.
        dtype: DType,
        /// Values found.
        count: usize,
        /// The output shape, as TensorFlow prints it.
        shape: String,
    },
    /// A required dense feature is missing.
    #[error("Feature: {key} (data type: {dtype}) is required but could not be found.")]
    Required {
        /// The feature (or feature list) key.
        key: String,
        /// The spec's dtype.
        dtype: DType,
    },
    /// A required feature list is missing.
    #[error("Feature list '{key}' is required but could not be found.  Did you mean to include it in feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?")]
    ListRequired {
        /// The feature (or feature list) key.
        key: String,
    },
    /// A feature-list row of another type than the spec's.
    #[error("Data types don't match. Expected type: {expected}")]
    RowTypeMismatch {
        /// The spec's dtype.
        expected: DType,
    },
    /// A fixed-length feature-list row with the wrong number of values.
    #[error("Number of values != expected.  values size: {count} but output shape: {shape}")]
    RowWrongCount {
        /// Values found.
        count: usize,
        /// The output shape, as TensorFlow prints it.
        shape: String,
    },
    /// The longest feature list does not fill whole rows.
    #[error("Feature list '{key}' has an unexpected number of values.  Total values size: {total} is not consistent with output shape: {shape}")]
    ListNotMultiple {
        /// The feature (or feature list) key.
        key: String,
        /// Values found over all rows.
        total: usize,
        /// The output shape, as TensorFlow prints it.
        shape: String,
    },
    /// A context feature present with the wrong number of values (or no kind).
    #[error("Unexpected number of elements in example {example}")]
    ContextUnexpectedCount {
        /// The example's name (`<unknown>` as TensorFlow writes it).
        example: String,
    },
    /// A context feature whose largest count (or default) is not the spec's size.
    #[error("Inconsistent max number of elements for feature {key}: expected {expected}, but found {found}")]
    ContextInconsistentMax {
        /// The feature (or feature list) key.
        key: String,
        /// The spec's number of values.
        expected: usize,
        /// The largest count found.
        found: usize,
    },
    /// A context feature of another type than the spec's.
    #[error("Data types don't match. Expected type: {expected}")]
    ContextTypeMismatch {
        /// The spec's dtype.
        expected: DType,
    },
    /// A SparseFeature's index and value features disagree in length.
    #[error("SparseFeature index and value features do not have the same number of values: {detail}")]
    SparseLengths {
        /// Which features disagree, and by how much.
        detail: String,
    },
    /// A RaggedFeature's partitions do not form a valid ragged tensor.
    #[error("invalid ragged partition: {0}")]
    Ragged(Box<RaggedPartitionError>),
    /// Parsed values that do not fill the output's shape (an internal inconsistency: every
    /// count is checked before the tensors are built).
    #[error("{0}")]
    Shape(ShapeError),
}

/// Why a RaggedFeature's partitions do not form a valid ragged tensor: the check of
/// TensorFlow's `RaggedTensor.from_*` (or of the ops under them) that refused it. The feature
/// key is on the [`ParseError`]; `from` names the `RaggedTensor` constructor TensorFlow calls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RaggedPartitionError {
    /// Row splits with no entries.
    #[error("Arguments to {from} do not form a valid RaggedTensor: the row splits are empty")]
    SplitsEmpty {
        /// The constructor (`from_row_splits`).
        from: &'static str,
    },
    /// Row splits that do not start at 0.
    #[error("Arguments to {from} do not form a valid RaggedTensor: the row splits start at {first}, not 0")]
    SplitsStart {
        /// The constructor.
        from: &'static str,
        /// The first split.
        first: i64,
    },
    /// Row splits that decrease.
    #[error(
        "Arguments to {from} do not form a valid RaggedTensor: the row splits decrease ({next} follows {previous})"
    )]
    SplitsDecrease {
        /// The constructor.
        from: &'static str,
        /// The split before the decrease.
        previous: i64,
        /// The smaller split after it.
        next: i64,
    },
    /// A partition that does not cover exactly the values below it.
    #[error("Arguments to _from_row_partition do not form a valid RaggedTensor: the partition covers {covered} values but there are {values}")]
    Coverage {
        /// The values the partition's last split reaches.
        covered: i64,
        /// The values there are.
        values: i64,
    },
    /// Row limits, starts or ids that are not sorted.
    #[error("Arguments to {from} do not form a valid RaggedTensor: {next} follows {previous} (not sorted)")]
    NotSorted {
        /// The constructor (`from_row_limits`, `from_row_starts`, `from_value_rowids`).
        from: &'static str,
        /// The value before the decrease.
        previous: i64,
        /// The smaller value after it.
        next: i64,
    },
    /// Row limits whose first is negative.
    #[error("Arguments to from_row_limits do not form a valid RaggedTensor: Condition x >= 0 did not hold: {first}")]
    LimitNegative {
        /// The first limit.
        first: i64,
    },
    /// Row starts that do not begin at 0.
    #[error("Arguments to from_row_starts do not form a valid RaggedTensor: the row starts begin at {first}, not 0")]
    StartsNotZero {
        /// The first start.
        first: i64,
    },
    /// A row start beyond the values.
    #[error(
        "Arguments to from_row_starts do not form a valid RaggedTensor: row start {start} is past the {values} values"
    )]
    StartPastValues {
        /// The last start.
        start: i64,
        /// The values there are.
        values: i64,
    },
    /// A negative row length.
    #[error("Arguments to from_row_lengths do not form a valid RowPartition: row length {length} is negative")]
    NegativeLength {
        /// The length.
        length: i64,
    },
    /// Not one row id per value.
    #[error("value_rowids: Shapes ({values},) and ({ids},) are incompatible (one row id per value)")]
    RowIdCount {
        /// The values there are.
        values: usize,
        /// The row ids there are.
        ids: usize,
    },
    /// A first row id below zero (with `validate`).
    #[error("Arguments to from_value_rowids do not form a valid RowPartition: row id {id} is negative")]
    RowIdNegative {
        /// The first row id.
        id: i64,
    },
    /// A last row id at or past the number of rows it implies (wrapped in int32).
    #[error("Arguments to from_value_rowids do not form a valid RowPartition: the last row id is too large")]
    RowIdTooLarge,
    /// A row id negative in int32, which TensorFlow's bincount refuses.
    #[error("value_rowids: Input arr must be non-negative! (row id {id})")]
    BincountNegative {
        /// The row id as given.
        id: i64,
    },
    /// A number of rows negative in int32.
    #[error("value_rowids: the number of rows ({rows}) must be non-negative")]
    NegativeRows {
        /// The number of rows (last row id + 1).
        rows: i64,
    },
    /// A number of rows (last row id + 1, in the splits dtype) negative in full width, which
    /// the `RaggedTensor` refuses as a static dimension even without `validate`.
    #[error("Dimension {rows} must be >= 0: the number of rows of a value_rowids partition (last row id + 1)")]
    NegativeDimension {
        /// The number of rows (last row id + 1).
        rows: i64,
    },
    /// A row id implying more empty rows than this parser allows.
    #[error("value_rowids: row id {id} implies {rows} rows for {values} values, more than this parser allows ({allowed} empty rows)")]
    TooManyRows {
        /// The largest row id.
        id: usize,
        /// The rows it implies.
        rows: usize,
        /// The values there are.
        values: usize,
        /// Empty rows allowed beyond one per value.
        allowed: usize,
    },
    /// Stacked uniform partitions whose element count overflows.
    #[error("uniform_row_length: the reshaped values would have more than 2**63 - 1 elements")]
    ElementsOverflow,
    /// A partition feature that the batch did not provide.
    #[error("the {partition} partition feature was not parsed")]
    NotParsed {
        /// The partition's kind (`row_splits`, `row_lengths`, ...).
        partition: &'static str,
    },
    /// A uniform row length of zero or less under a ragged dimension.
    #[error("uniform_row_length {length}: Integer division by zero")]
    DivisionByZero {
        /// The length.
        length: i64,
    },
    /// A uniform row length that does not divide the rows (with `validate`).
    #[error("uniform_row_length={length} times nrows={rows} must equal nvals={values}")]
    UniformMismatch {
        /// The length.
        length: i64,
        /// The rows it makes.
        rows: i64,
        /// The values (or rows) below.
        values: i64,
    },
    /// Values that cannot be reshaped into rows of a uniform length.
    #[error(
        "Input to reshape is a tensor with {values} values, but the requested shape requires a multiple of {multiple}"
    )]
    Reshape {
        /// The elements there are.
        values: usize,
        /// What their count must be a multiple of (a length times the elements per value;
        /// wide enough for any product TensorFlow prints).
        multiple: i128,
    },
    /// Values that do not fill the shape a reshape infers (a zero-length row holds nothing).
    #[error("Input to reshape is a tensor with {values} values, but the requested shape has {elements}")]
    ReshapeCount {
        /// The elements there are.
        values: u128,
        /// The elements of the inferred shape.
        elements: u128,
    },
    /// Row splits with no element, which `RaggedTensor` cannot hold even without `validate`
    /// (a missing or empty row_splits feature of one example: TensorFlow's static shape check).
    #[error("Dimension -1 must be >= 0: the {partition} partition has no row splits, so the ragged tensor would have -1 rows")]
    NoSplits {
        /// The partition's kind.
        partition: &'static str,
    },
    /// A partition feature with another number of rows than the values' feature.
    #[error("values and partitions are not aligned: Dimensions {values} and {partition} are not compatible")]
    NotAligned {
        /// The rows of the values.
        values: usize,
        /// The rows of the partition feature.
        partition: usize,
    },
    /// Feature lists (of a SequenceExample) for values and partitions with different numbers
    /// of rows.
    #[error("Feature {feature}: values and partitions are not aligned (feature lists {values} and {partition} have different numbers of rows)")]
    ListsNotAligned {
        /// The RaggedFeature's name.
        feature: String,
        /// The values' feature list.
        values: String,
        /// The partition's feature list.
        partition: String,
    },
    /// Partitions that make another number of rows than the examples have.
    #[error("Arguments to _from_row_partition do not form a valid RaggedTensor: the examples have {rows} rows but the partitions make {made}")]
    RowsMismatch {
        /// The rows the examples have.
        rows: i64,
        /// The rows the partitions make.
        made: i64,
    },
}

fn kind_word(dtype: DType) -> &'static str {
    dtype.kind().word()
}

/// An error of `parse_example` / `parse_sequence_example`, with where it happened.
///
/// Built by the parse ops; [`ParseError::new`] and its `key` / `example` / `row` steps build
/// one elsewhere (a test, a wrapper's own parse). Whether it came from a single-example op
/// (which words some messages differently) is set by those ops only, and read with
/// [`ParseError::is_single_example`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParseError {
    /// What is wrong.
    pub kind: ParseErrorKind,
    /// The feature (or feature list) key, when one is to blame.
    pub key: Option<String>,
    /// The index of the example in the batch (0 for a single example).
    pub example: Option<usize>,
    /// The row of a feature list.
    pub row: Option<usize>,
    /// From a single-example op: messages then omit the example index, as TensorFlow's do.
    /// Not public: the wording it selects must match the op that failed.
    pub(crate) single: bool,
}

impl ParseError {
    /// An error of `kind` with no key, example or row, as a batch op words it.
    ///
    /// ```
    /// use tfrec::parse::{ParseError, ParseErrorKind};
    ///
    /// let e = ParseError::new(ParseErrorKind::ListRequired { key: "frames".into() }).example(3);
    /// assert_eq!(e.example, Some(3));
    /// assert!(!e.is_single_example());
    /// assert!(e.to_string().ends_with("(example 3)"));
    /// ```
    pub fn new(kind: ParseErrorKind) -> Self {
        ParseError {
            kind,
            key: None,
            example: None,
            row: None,
            single: false,
        }
    }

    /// The same error, naming the feature (or feature list) `key`.
    pub fn key(mut self, key: &str) -> Self {
        self.key = Some(key.to_owned());
        self
    }

    /// The same error, naming the example's index in the batch.
    pub fn example(mut self, example: usize) -> Self {
        self.example = Some(example);
        self
    }

    /// The same error, naming the row of a feature list.
    pub fn row(mut self, row: usize) -> Self {
        self.row = Some(row);
        self
    }

    /// Whether a single-example op (`parse_single_example`, `parse_single_sequence_example`)
    /// failed: its messages omit the example index, as TensorFlow's do.
    pub fn is_single_example(&self) -> bool {
        self.single
    }
}

impl From<SpecError> for ParseError {
    fn from(e: SpecError) -> Self {
        ParseError::new(ParseErrorKind::Spec(Box::new(e)))
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ParseErrorKind as K;
        let key = self.key.as_deref().unwrap_or("?");
        let index = self.row.or(self.example).unwrap_or(0);
        match &self.kind {
            K::Spec(e) => write!(f, "{e}"),
            K::Malformed(_) => write!(f, "example {}: {}", self.example.unwrap_or(0), self.kind),
            K::Required { .. } | K::ListRequired { .. } if self.single => write!(f, "{}", self.kind),
            K::Required { .. } | K::ListRequired { .. } => {
                write!(f, "Name: <unknown>, {} (example {})", self.kind, self.example.unwrap_or(0))
            }
            K::RowTypeMismatch { .. } => write!(
                f,
                "Name: <unknown>, Feature list: {key}, Index: {index}.  {} (example {})",
                self.kind,
                self.example.unwrap_or(0)
            ),
            K::ContextTypeMismatch { .. } => write!(
                f,
                "Name: <unknown>, Context feature: {key}.  {} (example {})",
                self.kind,
                self.example.unwrap_or(0)
            ),
            K::RowWrongCount { .. } => write!(
                f,
                "Name: <unknown>, Key: {key}, Index: {index}.  {} (example {})",
                self.kind,
                self.example.unwrap_or(0)
            ),
            K::ListNotMultiple { .. } | K::ContextInconsistentMax { .. } => write!(f, "{}", self.kind),
            K::ContextUnexpectedCount { .. } => write!(f, "Key: {key}.  {}", self.kind),
            K::SparseLengths { .. } | K::Ragged(_) | K::Shape(_) => write!(f, "Feature {key}: {}", self.kind),
            // The single-example op words a wrong count as a parse failure; say both.
            K::WrongCount { dtype, .. } if self.single => write!(
                f,
                "Key: {key}.  Can't parse serialized Example: Some {}_list slice was not parsed. ({})",
                kind_word(*dtype),
                self.kind
            ),
            K::BytesOverflow { count, expected } if self.single => write!(
                f,
                "Key: {key}.  Can't parse serialized Example: Parsing bytes_list failed. ({count} values where {expected} fit)"
            ),
            K::NotMultipleOfStride { count, shape, .. } if self.single => write!(
                f,
                "Error while parsing feature with key {key}: number of elements should be divisible by the row size, found {count} instead (output shape {shape})"
            ),
            _ if self.single => write!(f, "Key: {key}.  {}", self.kind),
            _ => write!(f, "Name: <unknown>, Key: {key}, Index: {index}.  {}", self.kind),
        }
    }
}

// Self-contained text (the crate's rule, see `crate::Error`): the decode or spec error's text
// is part of this one's, so it is not also the `source()`.
impl std::error::Error for ParseError {}

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
    Ragged(String),
    /// Parsed values that do not fill the output's shape (an internal inconsistency: every
    /// count is checked before the tensors are built).
    #[error("{0}")]
    Shape(ShapeError),
}

fn kind_word(dtype: DType) -> &'static str {
    dtype.kind().word()
}

/// An error of `parse_example` / `parse_sequence_example`, with where it happened.
#[derive(Debug, Clone, PartialEq)]
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
    pub single: bool,
}

impl ParseError {
    pub(crate) fn new(kind: ParseErrorKind) -> Self {
        ParseError {
            kind,
            key: None,
            example: None,
            row: None,
            single: false,
        }
    }

    pub(crate) fn key(mut self, key: &str) -> Self {
        self.key = Some(key.to_owned());
        self
    }

    pub(crate) fn example(mut self, example: usize) -> Self {
        self.example = Some(example);
        self
    }

    pub(crate) fn row(mut self, row: usize) -> Self {
        self.row = Some(row);
        self
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

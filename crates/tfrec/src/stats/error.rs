//! The statistics layer's one error: what went wrong, with the file, offset and record where
//! it happened.

use std::path::PathBuf;

use crate::example::{DecodeError, Kind};
use crate::record::RecordError;

/// Where a record came from, for errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordPlace {
    /// The file (empty when the records did not come from a file).
    pub path: PathBuf,
    /// The offset of the record's header in the (decompressed) file.
    pub offset: u64,
    /// The index of the record among all records read (damaged ones not counted).
    pub record_index: u64,
}

impl std::fmt::Display for RecordPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.as_os_str().is_empty() {
            write!(f, "record {}", self.record_index)
        } else {
            write!(
                f,
                "{}@{} (record {})",
                self.path.display(),
                self.offset,
                self.record_index
            )
        }
    }
}

/// Why statistics could not be computed (or read, or written). Reading cannot go on after any
/// of them: the figures would be wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// Reading the records failed (damage not skipped, a missing file, I/O).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A record is not a valid `Example`.
    #[error("{place}: the record is not a valid Example: {error}")]
    Decode {
        /// The record.
        place: RecordPlace,
        /// What is wrong in it.
        error: DecodeError,
    },
    /// A record is not a valid `SequenceExample` (when the records are read as such).
    #[error("{place}: the record is not a valid SequenceExample: {error}")]
    DecodeSequence {
        /// The record.
        place: RecordPlace,
        /// What is wrong in it.
        error: DecodeError,
    },
    /// A feature holds values of two kinds in different records (or, for a feature list, in
    /// two steps of one record): TFDV refuses such data too ("Cannot determine the type of
    /// feature"; "Feature had wrong type" for feature lists). A feature list is named by its
    /// path in the statistics, `##SEQUENCE##.<key>`.
    #[error("{place}: cannot determine the type of feature {feature:?}: found values of types {first} and {second}")]
    KindChanged {
        /// The record where the second kind was found.
        place: RecordPlace,
        /// The feature's key.
        feature: String,
        /// The kind seen first (TFDV's type name).
        first: &'static str,
        /// The kind found in this record.
        second: &'static str,
    },
    /// Two partial statistics with different options were merged.
    #[error("cannot merge statistics computed with different options")]
    OptionsDiffer,
    /// Partial statistics bytes ([`StatsAccumulator::to_partial_bytes`](super::StatsAccumulator::to_partial_bytes))
    /// that do not decode: damaged, cut short, of another version, or not partial statistics.
    #[error("not tfrec partial statistics (at byte {offset}): {reason}")]
    PartialState {
        /// Where in the bytes decoding stopped.
        offset: usize,
        /// What was wrong there.
        reason: String,
    },
    /// An option is out of its range.
    #[error("invalid statistics option: {0}")]
    InvalidOption(String),
    /// Serialized statistics do not decode as a `DatasetFeatureStatisticsList`.
    #[error("not a DatasetFeatureStatisticsList: {0}")]
    Proto(String),
    /// Statistics in the protobuf text format do not parse.
    #[error("statistics text does not parse: {0}")]
    Text(String),
    /// A schema in the protobuf text format does not parse (the message names the line and
    /// column).
    #[error("schema text does not parse: {0}")]
    SchemaText(String),
    /// Statistics hold several data sets and none is the default slice (`All Examples`), so
    /// there is nothing to infer a schema from or validate, as for TFDV.
    #[error("the statistics hold {datasets} data sets and none is the default slice \"All Examples\"")]
    NoDefaultSlice {
        /// How many data sets the statistics hold.
        datasets: usize,
    },
    /// A file's contents are wrong (`error` says how).
    #[error("{}: {error}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        error: Box<StatsError>,
    },
    /// Reading or writing a statistics file failed.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl StatsError {
    /// The error's [`ErrorCategory`](crate::ErrorCategory), as [`crate::Error::category`] gives it.
    pub fn category(&self) -> crate::ErrorCategory {
        use crate::ErrorCategory::{Data, Io, Usage};
        match self {
            StatsError::Record(e) => e.category(),
            StatsError::Decode { .. } | StatsError::DecodeSequence { .. } | StatsError::KindChanged { .. } => Data,
            StatsError::Proto(_) | StatsError::Text(_) | StatsError::PartialState { .. } => Data,
            StatsError::SchemaText(_) | StatsError::NoDefaultSlice { .. } => Usage,
            StatsError::OptionsDiffer | StatsError::InvalidOption(_) => Usage,
            StatsError::File { .. } => Io,
            StatsError::InFile { error, .. } => error.category(),
        }
    }
}

/// TFDV's name of the type a kind gives.
pub(super) fn type_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Int64 => "INT",
        Kind::Float => "FLOAT",
        Kind::Bytes => "STRING",
    }
}

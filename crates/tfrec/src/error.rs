//! The crate-level [`Error`]: one type every layer's error converts into, for callers that use
//! several layers and want one `?`.
//!
//! # How errors chain
//!
//! Every error of the crate follows one rule: **its text is self-contained**. A wrapper's
//! `Display` includes the text of what it wraps (file, offset and record, then the cause), and
//! its `source()` is `None` — so a chained printer (anyhow's `{:#}`, or a loop over
//! `source()`) never prints the same text twice. The wrapped error is still there as data: in
//! the variant's field ([`RecordErrorKind::Io`],
//! [`WriteError::source`](crate::record::WriteError::source), …), to match on.
//!
//! [`Error`] itself adds no text: each variant is transparent, showing (and chaining) exactly
//! what the layer's error does.
//!
//! # Categories
//!
//! [`Error::category`] sorts every error into one of three [`ErrorCategory`]s, so that a tool
//! (the CLI's exit status, the Python binding's exception class) decides from one rule kept
//! here rather than from its own list of types:
//!
//! - [`ErrorCategory::Data`]: the input is damaged, undecodable or does not parse — a bad CRC,
//!   a truncated record, bytes that are not a message, a record that does not fit the spec, a
//!   stale index, a value or column with no form on the other side of a conversion.
//! - [`ErrorCategory::Usage`]: the call is wrong, whatever the data — a spec TensorFlow would
//!   refuse, an argument out of range, a compressed file where an uncompressed one is needed,
//!   a state saver used out of order; also a failure of the caller's own code (a map function)
//!   or of a worker thread, which no data fixes either.
//! - [`ErrorCategory::Io`]: a file could not be opened, read or written (the I/O error itself,
//!   not what was read).
//!
//! An error that wraps another (a pipeline's parse failure, a state saver's file failure, a
//! columnar batch's record failure) takes the category of what it wraps.

use crate::record::output::OutputError;
use crate::record::{IndexError, RecordError, RecordErrorKind, UnknownCompression, WriteError};

#[cfg(feature = "arrow")]
use crate::columnar::{BatchError, ColumnarError};
#[cfg(feature = "example")]
use crate::example::{BuildError, DecodeError, FriendlyJsonError, TextError};
#[cfg(feature = "parse")]
use crate::parse::{ConcatError, ParseError, ParseErrorKind, RaggedError, ShapeError, SpecError};
#[cfg(feature = "pipeline")]
use crate::pipeline::{DatasetError, PipelineError};
#[cfg(feature = "state-saver")]
use crate::state_saver::StateSaverError;
#[cfg(feature = "stats")]
use crate::stats::StatsError;
#[cfg(feature = "tensor-proto")]
use crate::tensor_proto::TensorProtoError;

/// Any error of the crate, by layer. Each variant holds that layer's own error, unchanged.
///
/// ```
/// use tfrec::record::{ReaderOptions, RecordReader};
///
/// fn count(path: &str) -> Result<u64, tfrec::Error> {
///     let mut reader = RecordReader::open(path, ReaderOptions::default())?;
///     let mut n = 0;
///     while reader.next_record()?.is_some() {
///         n += 1;
///     }
///     Ok(n)
/// }
///
/// let err = count("no/such/file.tfrecord").unwrap_err();
/// assert!(matches!(err, tfrec::Error::Record(_)));
/// assert_eq!(err.category(), tfrec::ErrorCategory::Io);
/// assert!(err.to_string().starts_with("no/such/file.tfrecord: cannot open"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error met outside the layers' own reading and writing (which name the file and
    /// record in their errors): the caller's own file handling, with `?`.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Reading TFRecord files.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Writing TFRecord files.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Building, loading or using a record index.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A compression name that is not one of ours or TensorFlow's.
    #[error(transparent)]
    UnknownCompression(#[from] UnknownCompression),
    /// An output refused (one of the inputs, or a directory another run claims) or that could
    /// not be started.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// Bytes that are not a valid `Example` / `SequenceExample` (or `Feature`…) message.
    #[cfg(feature = "example")]
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Text format that does not read as a message.
    #[cfg(feature = "example")]
    #[error(transparent)]
    Text(#[from] TextError),
    /// Friendly JSON that does not read as a message.
    #[cfg(feature = "example")]
    #[error(transparent)]
    Json(#[from] FriendlyJsonError),
    /// A value an `Example` builder cannot hold.
    #[cfg(feature = "example")]
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A feature spec TensorFlow would refuse.
    #[cfg(feature = "parse")]
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A record that does not parse with the spec.
    #[cfg(feature = "parse")]
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// Batch tensors that cannot be joined along the batch dimension.
    #[cfg(feature = "parse")]
    #[error(transparent)]
    Concat(#[from] ConcatError),
    /// Values that do not fill a tensor's shape.
    #[cfg(feature = "parse")]
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// Row splits that do not form a ragged tensor.
    #[cfg(feature = "parse")]
    #[error(transparent)]
    Ragged(#[from] RaggedError),
    /// A data set built with arguments tf.data would refuse.
    #[cfg(feature = "pipeline")]
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The pipeline failed (a file, a parse, a user function, a thread).
    #[cfg(feature = "pipeline")]
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// The state saver failed or was misused.
    #[cfg(feature = "state-saver")]
    #[error(transparent)]
    StateSaver(#[from] StateSaverError),
    /// Bytes that are not a serialized `TensorProto`.
    #[cfg(feature = "tensor-proto")]
    #[error(transparent)]
    TensorProto(#[from] TensorProtoError),
    /// Records that do not become Arrow columns (or Arrow values that do not become records).
    #[cfg(feature = "arrow")]
    #[error(transparent)]
    Columnar(#[from] ColumnarError),
    /// Reading records as Arrow batches failed (a file, a byte range, or the columns).
    #[cfg(feature = "arrow")]
    #[error(transparent)]
    Batch(#[from] BatchError),
    /// Statistics could not be computed, read or written.
    #[cfg(feature = "stats")]
    #[error(transparent)]
    Stats(#[from] StatsError),
}

/// What kind of problem an [`Error`] is: the rule is in the [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCategory {
    /// The input is damaged, undecodable or does not parse.
    Data,
    /// The call is wrong: a bad spec, a bad argument, misuse.
    Usage,
    /// Opening, reading or writing a file failed.
    Io,
}

impl Error {
    /// The error's [`ErrorCategory`], by the rule in the [module documentation](self).
    ///
    /// ```
    /// use tfrec::{Error, ErrorCategory};
    ///
    /// let err = Error::from("lz4".parse::<tfrec::record::Compression>().unwrap_err());
    /// assert_eq!(err.category(), ErrorCategory::Usage);
    /// ```
    pub fn category(&self) -> ErrorCategory {
        use ErrorCategory::{Io, Usage};
        match self {
            Error::Io(_) | Error::Write(_) => Io,
            Error::Record(e) => e.category(),
            Error::Index(e) => e.category(),
            Error::UnknownCompression(_) => Usage,
            Error::Output(e) if e.is_refusal() => Usage,
            Error::Output(_) => Io,
            #[cfg(feature = "example")]
            Error::Decode(_) | Error::Text(_) | Error::Json(_) => ErrorCategory::Data,
            // A value the caller handed the builder, not something read.
            #[cfg(feature = "example")]
            Error::Build(_) => Usage,
            #[cfg(feature = "parse")]
            Error::Spec(_) | Error::Concat(_) | Error::Shape(_) | Error::Ragged(_) => Usage,
            #[cfg(feature = "parse")]
            Error::Parse(e) => e.category(),
            #[cfg(feature = "pipeline")]
            Error::Dataset(_) => Usage,
            #[cfg(feature = "pipeline")]
            Error::Pipeline(e) => e.category(),
            #[cfg(feature = "state-saver")]
            Error::StateSaver(e) => e.category(),
            #[cfg(feature = "tensor-proto")]
            Error::TensorProto(e) => e.category(),
            #[cfg(feature = "arrow")]
            Error::Columnar(e) => e.category(),
            #[cfg(feature = "arrow")]
            Error::Batch(e) => e.category(),
            #[cfg(feature = "stats")]
            Error::Stats(e) => e.category(),
        }
    }
}

// One `category` per layer's error, each matching that layer's kinds without a wildcard where
// the crate may do so: a new kind then has to be placed in a category before the crate builds.
// They are public so that a caller holding a layer's error (not yet an `Error`) can ask too.

impl RecordError {
    /// The error's [`ErrorCategory`], as [`Error::category`] gives it.
    pub fn category(&self) -> ErrorCategory {
        match self.kind {
            RecordErrorKind::Open(_) | RecordErrorKind::Io(_) => ErrorCategory::Io,
            // The setting is wrong, not the data.
            RecordErrorKind::WrongCompression { .. } => ErrorCategory::Usage,
            RecordErrorKind::LengthCrcMismatch { .. }
            | RecordErrorKind::DataCrcMismatch { .. }
            | RecordErrorKind::Truncated { .. }
            | RecordErrorKind::PartialHeader { .. }
            | RecordErrorKind::LengthExceedsFile { .. }
            | RecordErrorKind::LengthOverLimit { .. }
            | RecordErrorKind::Decompress(_) => ErrorCategory::Data,
        }
    }
}

impl IndexError {
    /// The error's [`ErrorCategory`], as [`Error::category`] gives it.
    pub fn category(&self) -> ErrorCategory {
        match self {
            IndexError::Record(r) => r.category(),
            IndexError::Io { .. } => ErrorCategory::Io,
            IndexError::Compressed { .. } | IndexError::NeedsUncompressed { .. } | IndexError::OutOfRange { .. } => {
                ErrorCategory::Usage
            }
            // An index file that does not read as one, or does not describe its records.
            IndexError::Parse { .. }
            | IndexError::Stale { .. }
            | IndexError::Mismatch { .. }
            | IndexError::BadSeekIndex { .. }
            | IndexError::StaleSeekIndex { .. } => ErrorCategory::Data,
        }
    }
}

#[cfg(feature = "parse")]
impl ParseError {
    /// The error's [`ErrorCategory`], as [`Error::category`] gives it.
    pub fn category(&self) -> ErrorCategory {
        match self.kind {
            ParseErrorKind::Spec(_) => ErrorCategory::Usage,
            _ => ErrorCategory::Data,
        }
    }
}

#[cfg(feature = "pipeline")]
impl PipelineError {
    /// The error's [`ErrorCategory`], as [`Error::category`] gives it.
    pub fn category(&self) -> ErrorCategory {
        match self {
            PipelineError::Record(r) => r.category(),
            PipelineError::Parse { error, .. } => error.category(),
            PipelineError::Map { .. } | PipelineError::Callback { .. } | PipelineError::Panic(_) => {
                ErrorCategory::Usage
            }
        }
    }
}

#[cfg(feature = "state-saver")]
impl StateSaverError {
    /// The error's [`ErrorCategory`], as [`Error::category`] gives it.
    pub fn category(&self) -> ErrorCategory {
        use StateSaverError as E;
        match self {
            E::Parse { error, .. } => error.category(),
            E::Pipeline(p) => p.category(),
            _ if self.is_option_error() => ErrorCategory::Usage,
            // The examples themselves are wrong, or run out.
            E::NoSequences { .. }
            | E::NoStates { .. }
            | E::BadName { .. }
            | E::NotASequence { .. }
            | E::UnequalLengths { .. }
            | E::EmptySequence { .. }
            | E::NotMultiple { .. }
            | E::LengthTooLong { .. }
            | E::LengthOverflow { .. }
            | E::Mismatch { .. }
            | E::KeyInFlight { .. }
            | E::Input { .. }
            | E::MissingKey { .. }
            | E::NegativeLength { .. }
            | E::InsufficientElements { .. } => ErrorCategory::Data,
            // The consumer's calls, a call after the end, or a reader thread's panic.
            _ => ErrorCategory::Usage,
        }
    }
}

#[cfg(feature = "tensor-proto")]
impl TensorProtoError {
    /// The error's [`ErrorCategory`], as [`Error::category`] gives it.
    pub fn category(&self) -> ErrorCategory {
        match self {
            // Writing: the caller's shape and values disagree.
            TensorProtoError::ShapeMismatch { .. } => ErrorCategory::Usage,
            _ => ErrorCategory::Data,
        }
    }
}

#[cfg(feature = "arrow")]
impl ColumnarError {
    /// The error's [`ErrorCategory`], as [`Error::category`] gives it.
    pub fn category(&self) -> ErrorCategory {
        match self {
            ColumnarError::Spec(_) => ErrorCategory::Usage,
            ColumnarError::Parse(p) => p.category(),
            // Mostly found in what is read (a column type with no TFRecord form, partitions that
            // are not a ragged tensor, a batch too big for Arrow): data, as the CLI has it.
            ColumnarError::Unsupported { .. }
            | ColumnarError::Decode { .. }
            | ColumnarError::Utf8 { .. }
            | ColumnarError::Value { .. }
            | ColumnarError::Arrow { .. } => ErrorCategory::Data,
        }
    }
}

#[cfg(feature = "arrow")]
impl BatchError {
    /// The error's [`ErrorCategory`], as [`Error::category`] gives it.
    pub fn category(&self) -> ErrorCategory {
        match self {
            BatchError::Record(r) => r.category(),
            BatchError::Index(i) => i.category(),
            BatchError::Io { .. } => ErrorCategory::Io,
            BatchError::Columns { error, .. } => error.category(),
        }
    }
}

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;
    use crate::record::Location;

    fn record(kind: RecordErrorKind) -> RecordError {
        RecordError {
            kind,
            location: Location::default(),
        }
    }

    #[test]
    fn record_errors_are_io_when_the_file_fails_and_data_otherwise() {
        let io = || io::Error::other("disk");
        assert_eq!(
            Error::from(record(RecordErrorKind::Open(io()))).category(),
            ErrorCategory::Io
        );
        assert_eq!(
            Error::from(record(RecordErrorKind::Io(io()))).category(),
            ErrorCategory::Io
        );
        for kind in [
            RecordErrorKind::DataCrcMismatch {
                stored: 1,
                computed: 2,
                data_offset: 12,
            },
            RecordErrorKind::Truncated { len: 9, available: 1 },
            RecordErrorKind::PartialHeader { available: 3 },
            RecordErrorKind::Decompress(io()),
        ] {
            assert_eq!(Error::from(record(kind)).category(), ErrorCategory::Data);
        }
        assert_eq!(Error::from(io()).category(), ErrorCategory::Io);
        let write = WriteError {
            path: None,
            record_index: 0,
            source: io(),
        };
        assert_eq!(Error::from(write).category(), ErrorCategory::Io);
        let bad_name = "lz4".parse::<crate::record::Compression>();
        assert!(matches!(
            bad_name.map_err(|e| Error::from(e).category()),
            Err(ErrorCategory::Usage)
        ));
    }

    #[test]
    fn index_errors_follow_what_failed() {
        let index = |e: IndexError| Error::from(e).category();
        let open = record(RecordErrorKind::Open(io::Error::other("gone")));
        assert_eq!(index(IndexError::Record(open)), ErrorCategory::Io);
        assert_eq!(index(IndexError::OutOfRange { index: 5, len: 2 }), ErrorCategory::Usage);
        let compressed = IndexError::Compressed {
            path: "a.gz".into(),
            compression: crate::record::Compression::Gzip,
        };
        assert_eq!(index(compressed), ErrorCategory::Usage);
        let parse = IndexError::Parse {
            path: "a.idx".into(),
            line: 1,
            text: "x".into(),
        };
        assert_eq!(index(parse), ErrorCategory::Data);
        let io = IndexError::Io {
            path: "a.idx".into(),
            error: io::Error::other("full"),
        };
        assert_eq!(index(io), ErrorCategory::Io);
    }

    #[cfg(feature = "parse")]
    #[test]
    fn a_refused_spec_is_usage_and_a_record_that_does_not_parse_is_data() {
        use crate::parse::{ExampleParser, FeatureSpecs};

        let Err(spec) = ExampleParser::new(&FeatureSpecs::new()) else {
            panic!("an empty spec is refused")
        };
        assert_eq!(Error::from(spec.clone()).category(), ErrorCategory::Usage);
        assert_eq!(Error::from(ParseError::from(spec)).category(), ErrorCategory::Usage);
        let missing = ParseError::new(ParseErrorKind::ListRequired { key: "f".into() }).example(0);
        assert_eq!(Error::from(missing.clone()).category(), ErrorCategory::Data);
        assert_eq!(Error::from(ConcatError::NoTensors).category(), ErrorCategory::Usage);
        #[cfg(feature = "pipeline")]
        {
            let parse = PipelineError::Parse {
                batch: 0,
                path: None,
                origin: None,
                error: Box::new(missing),
            };
            assert_eq!(Error::from(parse).category(), ErrorCategory::Data);
            assert_eq!(
                Error::from(PipelineError::Panic("boom".into())).category(),
                ErrorCategory::Usage
            );
            let open = record(RecordErrorKind::Open(io::Error::other("gone")));
            assert_eq!(Error::from(PipelineError::Record(open)).category(), ErrorCategory::Io);
            assert_eq!(Error::from(DatasetError::NoShards).category(), ErrorCategory::Usage);
        }
    }

    #[cfg(feature = "example")]
    #[test]
    fn messages_that_do_not_decode_are_data() {
        let Err(decode) = crate::example::Example::decode(b"\x0a\x05ab") else {
            panic!("cut short")
        };
        assert_eq!(Error::from(decode).category(), ErrorCategory::Data);
        let Err(text) = crate::example::Example::from_text("features { nonsense") else {
            panic!("bad text")
        };
        assert_eq!(Error::from(text).category(), ErrorCategory::Data);
    }

    #[cfg(feature = "state-saver")]
    #[test]
    fn state_saver_options_and_calls_are_usage_and_its_examples_data() {
        let saver = |e: StateSaverError| Error::from(e).category();
        assert_eq!(
            saver(StateSaverError::ZeroOption { option: "batch_size" }),
            ErrorCategory::Usage
        );
        assert_eq!(
            saver(StateSaverError::UnknownState { state: "h".into() }),
            ErrorCategory::Usage
        );
        assert_eq!(
            saver(StateSaverError::NoSequences { key: "k".into() }),
            ErrorCategory::Data
        );
        let open = record(RecordErrorKind::Open(io::Error::other("gone")));
        assert_eq!(saver(StateSaverError::Pipeline(open.into())), ErrorCategory::Io);
    }

    #[cfg(feature = "arrow")]
    #[test]
    fn columnar_errors_follow_what_they_wrap() {
        let columns = |error: ColumnarError| {
            Error::from(BatchError::Columns {
                at: "a@0".into(),
                first_record: 0,
                error: Box::new(error),
            })
            .category()
        };
        let value = ColumnarError::Value {
            column: "c".into(),
            row: 0,
            reason: "NULL".into(),
        };
        assert_eq!(columns(value), ErrorCategory::Data);
        let Err(spec) = crate::parse::ExampleParser::new(&crate::parse::FeatureSpecs::new()) else {
            panic!("an empty spec is refused")
        };
        assert_eq!(columns(ColumnarError::Spec(spec)), ErrorCategory::Usage);
        let io = BatchError::Io {
            path: "a".into(),
            error: io::Error::other("gone"),
        };
        assert_eq!(Error::from(io).category(), ErrorCategory::Io);
    }
}

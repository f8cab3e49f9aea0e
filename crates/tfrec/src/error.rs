//! The crate-level [`Error`]: one type every layer's error converts into, for callers that use
//! several layers and want one `?`.
//!
//! # How errors chain
//!
//! Every error of the crate follows one rule: **its text is self-contained**. A wrapper's
//! `Display` includes the text of what it wraps (file, offset and record, then the cause), and
//! its `source()` is `None` — so a chained printer (anyhow's `{:#}`, or a loop over
//! `source()`) never prints the same text twice. The wrapped error is still there as data: in
//! the variant's field ([`RecordErrorKind::Io`](crate::record::RecordErrorKind::Io),
//! [`WriteError::source`](crate::record::WriteError::source), …), to match on.
//!
//! [`Error`] itself adds no text: each variant is transparent, showing (and chaining) exactly
//! what the layer's error does.

use crate::record::{IndexError, RecordError, UnknownCompression, WriteError};

#[cfg(feature = "example")]
use crate::example::{BuildError, DecodeError, FriendlyJsonError, TextError};
#[cfg(feature = "parse")]
use crate::parse::{ParseError, SpecError};
#[cfg(feature = "pipeline")]
use crate::pipeline::PipelineError;
#[cfg(feature = "state-saver")]
use crate::state_saver::StateSaverError;
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
}

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

//! Inferred specs for the columnar layer: the parse layer's one inference
//! ([`crate::parse::infer_specs`], whose module documents the rules) with its errors in the
//! columnar layer's terms, and the string columns its UTF-8 findings give.

use super::{ColumnarError, StringColumns};
use crate::parse::{InferError, InferredSpecs};

impl InferredSpecs {
    /// The string columns to use: `Utf8` for the features found UTF-8 when `utf8` is asked.
    pub fn string_columns(&self, utf8: bool) -> StringColumns {
        if utf8 {
            StringColumns::Utf8For(self.utf8.clone())
        } else {
            StringColumns::Binary
        }
    }
}

impl From<InferError> for ColumnarError {
    fn from(e: InferError) -> ColumnarError {
        match e {
            InferError::Decode { record, error } => ColumnarError::Decode { record, error },
            mixed @ InferError::MixedMessages { .. } => ColumnarError::Unsupported {
                column: String::new(),
                reason: mixed.to_string(),
            },
        }
    }
}

/// Infers specs from `records` (serialized Examples, or SequenceExamples):
/// [`crate::parse::infer_specs`], its errors as [`ColumnarError`]s.
pub fn infer_specs<R: AsRef<[u8]>>(records: &[R]) -> Result<InferredSpecs, ColumnarError> {
    Ok(crate::parse::infer_specs(records)?)
}

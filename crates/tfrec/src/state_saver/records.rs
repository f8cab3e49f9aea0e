//! SequenceExample records as state-saver input: FixedLenSequenceFeature lists become the
//! sequences, FixedLen context features the context, and a scalar context feature (or the
//! record's position in the stream) the key.

use std::collections::BTreeMap;

use super::error::StateSaverError;
use super::input::SequenceInput;
use crate::parse::{DType, DenseTensor, FeatureSpec, SequenceParser, SequenceSpecs, Tensor, Values};

/// Where an example's key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A scalar string or int64 context feature (a `FixedLenFeature` of shape `[]` in the spec;
    /// it also stays in the context).
    Feature(String),
    /// The record's position in the stream, in decimal (`"0"`, `"1"`, …). Positions restart
    /// with every saver, so over repeated epochs keep the capacity below the data set's size
    /// or use `make_keys_unique`.
    Index,
}

/// The compiled spec of a record input.
#[derive(Debug)]
pub(crate) struct RecordInput {
    parser: SequenceParser,
    key: KeySource,
    /// The context feature holding `input_length`, if any.
    length: Option<String>,
}

impl RecordInput {
    /// Checks that the spec gives dense sequences and a dense context, and compiles it.
    pub fn new(specs: &SequenceSpecs, key: KeySource, length: Option<String>) -> Result<RecordInput, StateSaverError> {
        for (name, spec) in &specs.sequence_features {
            if !matches!(spec, FeatureSpec::FixedLenSequence(_)) {
                return Err(StateSaverError::SequenceNotDense {
                    feature: name.clone(),
                    found: spec.type_name(),
                });
            }
        }
        if specs.sequence_features.is_empty() {
            return Err(StateSaverError::NoSequenceFeatures);
        }
        for (name, spec) in &specs.context_features {
            if !matches!(spec, FeatureSpec::FixedLen(_)) {
                return Err(StateSaverError::ContextNotDense {
                    feature: name.clone(),
                    found: spec.type_name(),
                });
            }
        }
        if let KeySource::Feature(name) = &key {
            match specs.context_features.get(name) {
                Some(FeatureSpec::FixedLen(f)) if f.shape.is_empty() && f.dtype != DType::Float32 => {}
                _ => return Err(StateSaverError::BadKeyFeature { feature: name.clone() }),
            }
        }
        if let Some(name) = &length {
            match specs.context_features.get(name) {
                Some(FeatureSpec::FixedLen(f)) if f.shape.is_empty() && f.dtype == DType::Int64 => {}
                _ => return Err(StateSaverError::BadLengthFeature { feature: name.clone() }),
            }
        }
        let parser = SequenceParser::new(specs).map_err(StateSaverError::Spec)?;
        Ok(RecordInput { parser, key, length })
    }

    /// Parses record `index` into an input example.
    pub fn convert(&self, index: u64, record: &[u8]) -> Result<SequenceInput, StateSaverError> {
        let parsed = self
            .parser
            .parse_single(record)
            .map_err(|error| StateSaverError::Parse {
                index,
                error: Box::new(error),
            })?;
        let dense = |map: crate::parse::TensorMap| -> BTreeMap<String, DenseTensor> {
            map.into_iter()
                .filter_map(|(name, t)| match t {
                    Tensor::Dense(d) => Some((name, d)),
                    _ => None,
                })
                .collect()
        };
        let context = dense(parsed.context);
        let key = match &self.key {
            KeySource::Index => index.to_string().into_bytes(),
            KeySource::Feature(name) => match context.get(name).map(DenseTensor::values) {
                Some(Values::String(a)) if a.len() == 1 => a[0].to_vec(),
                Some(Values::Int64(a)) if a.len() == 1 => a[0].to_string().into_bytes(),
                _ => {
                    return Err(StateSaverError::MissingKey {
                        index,
                        feature: name.clone(),
                    })
                }
            },
        };
        let length = match &self.length {
            None => None,
            Some(name) => match context.get(name).map(DenseTensor::values) {
                Some(Values::Int64(a)) if a.len() == 1 => match usize::try_from(a[0]) {
                    Ok(n) => Some(n),
                    Err(_) => {
                        return Err(StateSaverError::NegativeLength {
                            index,
                            feature: name.clone(),
                            value: a[0],
                        })
                    }
                },
                // The spec makes it a scalar int64; a record without it fails to parse.
                _ => None,
            },
        };
        let carried = |map: BTreeMap<String, DenseTensor>| map.into_iter().map(|(n, t)| (n, t.into())).collect();
        Ok(SequenceInput {
            key,
            length,
            sequences: carried(dense(parsed.feature_lists)),
            context: carried(context),
            ..SequenceInput::default()
        })
    }
}

//! Specs inferred from a sample of serialized Examples, for data that comes without one.

use std::collections::{BTreeMap, BTreeSet};

use super::{ColumnarError, StringColumns};
use crate::example::{detect_message, ExampleView, Kind, MessageKind};
use crate::parse::{specs_to_json_string, DType, FeatureSpec, FeatureSpecs, FixedLenFeature, VarLenFeature};

/// Specs inferred from a sample, with the string features whose sampled values were all UTF-8.
#[derive(Debug, Clone, PartialEq)]
pub struct InferredSpecs {
    /// One spec per feature seen with a kind: a `FixedLenFeature` (shape `[]` for one value,
    /// `[n]` for n) when every sampled record has it with the same number of values, else a
    /// `VarLenFeature` (NULL where missing).
    pub specs: FeatureSpecs,
    /// String features whose sampled values were all valid UTF-8.
    pub utf8: BTreeSet<String>,
    /// Features left out, with why (no kind set in any sampled record).
    pub skipped: BTreeMap<String, String>,
    /// Number of records sampled.
    pub records: usize,
}

impl InferredSpecs {
    /// The specs as spec-file JSON text (what `--spec` reads).
    pub fn to_json_string(&self) -> String {
        specs_to_json_string(&self.specs)
    }

    /// The string columns to use: `Utf8` for the features found UTF-8 when `utf8` is asked.
    pub fn string_columns(&self, utf8: bool) -> StringColumns {
        if utf8 {
            StringColumns::Utf8For(self.utf8.clone())
        } else {
            StringColumns::Binary
        }
    }
}

#[derive(Default)]
struct Seen {
    kind: Option<Kind>,
    present: usize,
    lengths: BTreeSet<usize>,
    utf8: bool,
}

/// Infers specs from `records` (serialized Examples): scalar, fixed-size list or list per
/// feature, bytes or UTF-8, required or nullable. Two kinds for one feature is an error naming it.
pub fn infer_specs<R: AsRef<[u8]>>(records: &[R]) -> Result<InferredSpecs, ColumnarError> {
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    for (row, record) in records.iter().enumerate() {
        if detect_message(record.as_ref()) == MessageKind::SequenceExample {
            return Err(ColumnarError::Unsupported {
                column: String::new(),
                reason: format!(
                    "record {row} is a SequenceExample: give a spec (specs are inferred for Examples only)"
                ),
            });
        }
        // The last entry of a repeated key is the one parsers read.
        let mut last: BTreeMap<&[u8], _> = BTreeMap::new();
        for entry in ExampleView::new(record.as_ref()).entries() {
            let (key, view) = entry.map_err(|source| ColumnarError::Decode { record: row, source })?;
            last.insert(key, view);
        }
        for (key, view) in last {
            let name = String::from_utf8_lossy(key).into_owned();
            let s = seen.entry(name.clone()).or_insert_with(|| Seen {
                utf8: true,
                ..Seen::default()
            });
            let count = view
                .count()
                .map_err(|source| ColumnarError::Decode { record: row, source })?;
            s.present += 1;
            s.lengths.insert(count);
            if let Some(kind) = view.kind() {
                if s.kind.is_some_and(|k| k != kind) {
                    return Err(ColumnarError::Unsupported {
                        column: name,
                        reason: format!(
                            "record {row} has a {} where earlier records have a {}: give a spec",
                            kind.list_name(),
                            s.kind.map_or("", |k| k.list_name())
                        ),
                    });
                }
                s.kind = Some(kind);
                if kind == Kind::Bytes && s.utf8 {
                    let mut ok = true;
                    view.for_each_bytes(|b| ok &= std::str::from_utf8(b).is_ok())
                        .map_err(|source| ColumnarError::Decode { record: row, source })?;
                    s.utf8 = ok;
                }
            }
        }
    }
    let mut out = InferredSpecs {
        specs: FeatureSpecs::new(),
        utf8: BTreeSet::new(),
        skipped: BTreeMap::new(),
        records: records.len(),
    };
    for (name, s) in seen {
        let Some(kind) = s.kind else {
            out.skipped.insert(
                name,
                "no sampled record gives it a kind (only empty Feature messages)".into(),
            );
            continue;
        };
        let dtype = DType::of_kind(kind);
        let fixed = (s.present == records.len() && s.lengths.len() == 1)
            .then(|| s.lengths.first().copied())
            .flatten();
        let spec = match fixed {
            Some(1) => FeatureSpec::FixedLen(FixedLenFeature {
                shape: Vec::new(),
                dtype,
                default_value: None,
            }),
            Some(n) if n > 1 => FeatureSpec::FixedLen(FixedLenFeature {
                shape: vec![n],
                dtype,
                default_value: None,
            }),
            _ => FeatureSpec::VarLen(VarLenFeature { dtype }),
        };
        if kind == Kind::Bytes && s.utf8 {
            out.utf8.insert(name.clone());
        }
        out.specs.insert(name, spec);
    }
    Ok(out)
}

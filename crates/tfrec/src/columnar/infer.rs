//! Specs inferred from a sample of serialized Examples or SequenceExamples, for data that comes
//! without one.

use std::collections::{BTreeMap, BTreeSet};

use super::{ColumnarError, StringColumns};
use crate::example::{detect_message, FeatureEntries, FeatureView, Kind, MessageKind, SequenceExampleView};
use crate::example::{DecodeError, ExampleView};
use crate::parse::{
    DType, FeatureSpec, FeatureSpecs, FixedLenFeature, FixedLenSequenceFeature, SequenceSpecs, SpecFile, VarLenFeature,
};

/// Specs inferred from a sample, with the string features whose sampled values were all UTF-8.
#[derive(Debug, Clone, PartialEq)]
pub struct InferredSpecs {
    /// Example specs, or SequenceExample specs when the sample holds SequenceExamples.
    ///
    /// A feature (a context feature) is a `FixedLenFeature` (shape `[]` for one value, `[n]`
    /// for n) when every sampled record has it with the same number of values, else a
    /// `VarLenFeature` (NULL where missing). A feature list is a `FixedLenSequenceFeature`
    /// when all its steps in the sample have the same number of values (`allow_missing` when
    /// some sampled record lacks the list), else a `VarLenFeature` (a list of steps of any
    /// length).
    pub spec: SpecFile,
    /// String features (and feature lists) whose sampled values were all valid UTF-8.
    pub utf8: BTreeSet<String>,
    /// Features left out, with why (no kind set in any sampled record).
    pub skipped: BTreeMap<String, String>,
    /// Number of records sampled.
    pub records: usize,
}

impl InferredSpecs {
    /// The specs as spec-file JSON text (what `--spec` reads).
    pub fn to_json_string(&self) -> String {
        self.spec.to_json_string()
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

/// What the sample showed of one feature (or feature list): its kind, in how many records it
/// is, the value counts seen (per record, or per step for a feature list), and whether every
/// string was UTF-8.
struct Seen {
    kind: Option<Kind>,
    present: usize,
    lengths: BTreeSet<usize>,
    utf8: bool,
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            kind: None,
            present: 0,
            lengths: BTreeSet::new(),
            utf8: true,
        }
    }
}

impl Seen {
    /// Notes one value set (a feature of a record, or a step of a feature list).
    fn observe(&mut self, name: &str, view: &FeatureView<'_>, row: usize) -> Result<(), ColumnarError> {
        let decode = |source| ColumnarError::Decode {
            record: row,
            error: source,
        };
        self.lengths.insert(view.count().map_err(decode)?);
        let Some(kind) = view.kind() else {
            return Ok(());
        };
        if let Some(earlier) = self.kind.filter(|&k| k != kind) {
            return Err(ColumnarError::Unsupported {
                column: name.to_owned(),
                reason: format!(
                    "record {row} has a {} where earlier records have a {}: give a spec",
                    kind.list_name(),
                    earlier.list_name()
                ),
            });
        }
        self.kind = Some(kind);
        if kind == Kind::Bytes && self.utf8 {
            let mut ok = true;
            view.for_each_bytes(|b| ok &= std::str::from_utf8(b).is_ok())
                .map_err(decode)?;
            self.utf8 = ok;
        }
        Ok(())
    }

    /// The one value count every observation had, if there was exactly one.
    fn fixed_length(&self) -> Option<usize> {
        (self.lengths.len() == 1)
            .then(|| self.lengths.first().copied())
            .flatten()
    }
}

/// Notes the features of one record's `Features` map (the last entry of a repeated key is the
/// one parsers read).
fn observe_features(
    seen: &mut BTreeMap<String, Seen>,
    entries: FeatureEntries<'_>,
    row: usize,
) -> Result<(), ColumnarError> {
    let mut last = BTreeMap::new();
    for entry in entries {
        let (key, view) = entry.map_err(|source| ColumnarError::Decode {
            record: row,
            error: source,
        })?;
        last.insert(key, view);
    }
    for (key, view) in last {
        let name = String::from_utf8_lossy(key).into_owned();
        let s = seen.entry(name.clone()).or_default();
        s.present += 1;
        s.observe(&name, &view, row)?;
    }
    Ok(())
}

/// Notes the feature lists of one SequenceExample (the last entry of a repeated key wins).
fn observe_lists(seen: &mut BTreeMap<String, Seen>, record: &[u8], row: usize) -> Result<(), ColumnarError> {
    let decode = |source: DecodeError| ColumnarError::Decode {
        record: row,
        error: source,
    };
    let mut last = BTreeMap::new();
    for entry in SequenceExampleView::new(record).feature_lists() {
        let (key, list) = entry.map_err(decode)?;
        last.insert(key, list);
    }
    for (key, list) in last {
        let name = String::from_utf8_lossy(key).into_owned();
        let s = seen.entry(name.clone()).or_default();
        s.present += 1;
        for step in list.rows() {
            let (bytes, base) = step.map_err(decode)?;
            s.observe(
                &name,
                &FeatureView::from_feature_bytes(bytes, base).map_err(decode)?,
                row,
            )?;
        }
    }
    Ok(())
}

/// The specs of the features seen; features with no kind go to `skipped`, UTF-8 strings to
/// `utf8`.
fn specs_of(
    seen: BTreeMap<String, Seen>,
    records: usize,
    sequence: bool,
    utf8: &mut BTreeSet<String>,
    skipped: &mut BTreeMap<String, String>,
) -> FeatureSpecs {
    let mut specs = FeatureSpecs::new();
    for (name, s) in seen {
        let Some(kind) = s.kind else {
            let why = if sequence {
                "no sampled step gives it a kind (only empty Feature messages or no steps)"
            } else {
                "no sampled record gives it a kind (only empty Feature messages)"
            };
            skipped.insert(name, why.into());
            continue;
        };
        let dtype = DType::of_kind(kind);
        let shape = |n: usize| if n == 1 { Vec::new() } else { vec![n] };
        let spec = match (sequence, s.fixed_length()) {
            (false, Some(n)) if n > 0 && s.present == records => FeatureSpec::FixedLen(FixedLenFeature {
                shape: shape(n),
                dtype,
                default_value: None,
            }),
            (true, Some(n)) if n > 0 => FeatureSpec::FixedLenSequence(FixedLenSequenceFeature {
                shape: shape(n),
                dtype,
                allow_missing: s.present < records,
                default_value: None,
            }),
            _ => FeatureSpec::VarLen(VarLenFeature { dtype }),
        };
        if kind == Kind::Bytes && s.utf8 {
            utf8.insert(name.clone());
        }
        specs.insert(name, spec);
    }
    specs
}

/// Infers specs from `records` (serialized Examples, or SequenceExamples): scalar, fixed-size
/// list or list per feature, fixed-shape or ragged steps per feature list, bytes or UTF-8,
/// required or nullable. Two kinds for one feature is an error naming it; so is a sample that
/// mixes Examples and SequenceExamples.
pub fn infer_specs<R: AsRef<[u8]>>(records: &[R]) -> Result<InferredSpecs, ColumnarError> {
    // An Example and a SequenceExample with only a context have the same bytes: the sample is
    // of SequenceExamples when any record has feature lists.
    let kinds: Vec<MessageKind> = records.iter().map(|r| detect_message(r.as_ref())).collect();
    let sequence = kinds.contains(&MessageKind::SequenceExample);
    if sequence {
        if let Some(row) = kinds.iter().position(|k| *k == MessageKind::Example) {
            return Err(ColumnarError::Unsupported {
                column: String::new(),
                reason: format!("record {row} is an Example where others are SequenceExamples: give a spec"),
            });
        }
    }
    let mut features = BTreeMap::new();
    let mut lists = BTreeMap::new();
    for (row, record) in records.iter().enumerate() {
        let record = record.as_ref();
        if sequence {
            observe_features(&mut features, SequenceExampleView::new(record).context(), row)?;
            observe_lists(&mut lists, record, row)?;
        } else {
            observe_features(&mut features, ExampleView::new(record).entries(), row)?;
        }
    }
    let mut utf8 = BTreeSet::new();
    let mut skipped = BTreeMap::new();
    let context = specs_of(features, records.len(), false, &mut utf8, &mut skipped);
    let spec = if sequence {
        if let Some(name) = lists.keys().find(|name| context.contains_key(*name)) {
            return Err(ColumnarError::Unsupported {
                column: name.clone(),
                reason: "it is both a context feature and a feature list: give a spec".into(),
            });
        }
        SpecFile::Sequence(SequenceSpecs {
            context_features: context,
            sequence_features: specs_of(lists, records.len(), true, &mut utf8, &mut skipped),
        })
    } else {
        SpecFile::Example(context)
    };
    Ok(InferredSpecs {
        spec,
        utf8,
        skipped,
        records: records.len(),
    })
}

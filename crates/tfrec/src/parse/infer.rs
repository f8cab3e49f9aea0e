//! Spec inference: the one rule set that turns the records looked at (Examples or
//! SequenceExamples) into the feature specs that parse them. `tfrec schema --json`, `tfrec
//! convert` without `--spec`, and Python's `tfrec.arrow.infer_spec` (and every reader given no
//! spec) all come here, so one file gets one spec whichever asks.
//!
//! The rules, chosen so the spec parses every record it was inferred from:
//!
//! - A feature (of an Example, or a context feature of a SequenceExample) present in every record
//!   with the same number n ≥ 1 of values everywhere is a `FixedLenFeature`: shape `[]` for
//!   n = 1, `[n]` otherwise, no default (required).
//! - Any other feature with one kind is a `VarLenFeature`: missing from some record, value
//!   counts that differ, an empty `Feature` message (no kind set) in some record, or no values
//!   in any record (a `[0]`-shaped tensor says nothing, and a list still fits when values come).
//! - A feature list (SequenceExample) whose steps all hold the same number n ≥ 1 of values is a
//!   `FixedLenSequenceFeature` (shape `[]` or `[n]`), with `allow_missing` when some record
//!   lacks the list; otherwise (counts that differ, empty steps, no values at all) a
//!   `VarLenFeature`. A list with no steps anywhere has no kind (see below).
//! - Left out, each with why ([`InferredSpecs::skipped`]): a feature with no kind in any record
//!   (only empty `Feature` messages, or a list with no steps), and a feature whose kind varies
//!   between records (no spec of it parses every record: give one).
//! - Examples give `parse_example` specs; SequenceExamples give `context_features` and
//!   `sequence_features`. A context feature and a feature list may share a name (each spec dict
//!   has its own); only a columnar form, with one column per name, refuses that.
//! - A repeated key counts once, with its last value (as the parsers read it).
//! - Which records: the caller's choice — `tfrec schema` reads every record (or `--limit`),
//!   `convert` and the Python readers the first `infer_rows` (1000 by default). The message
//!   kind is the caller's too ([`SpecInferrer::new`]); [`infer_specs`] takes SequenceExamples
//!   when any record has feature lists, and refuses a sample that mixes the two.
//!
//! Besides the spec: which string features held only UTF-8 (for `Utf8` columns).

use std::collections::{BTreeMap, BTreeSet};

use super::spec::{
    FeatureSpec, FeatureSpecs, FixedLenFeature, FixedLenSequenceFeature, SequenceSpecs, SpecFile, VarLenFeature,
};
use super::values::DType;
use indexmap::IndexMap;

use crate::example::{
    detect_message, DecodeError, ExampleView, FeatureEntries, FeatureListEntries, FeatureStats, FeatureView, Kind,
    MessageKind, Schema, SequenceExampleView,
};

/// Specs inferred from records, with the string features whose values were all UTF-8.
#[derive(Debug, Clone, PartialEq)]
pub struct InferredSpecs {
    /// Example specs, or SequenceExample specs when the records are SequenceExamples, by the
    /// rules of [the module](self).
    pub spec: SpecFile,
    /// String features (and feature lists) whose values were all valid UTF-8.
    pub utf8: BTreeSet<String>,
    /// Features left out, with why (no kind in any record, or kinds that vary).
    pub skipped: BTreeMap<String, String>,
    /// Number of records looked at.
    pub records: usize,
}

impl InferredSpecs {
    /// The specs as spec-file JSON text (what `--spec` reads).
    pub fn to_json_string(&self) -> String {
        self.spec.to_json_string()
    }
}

/// Why [`infer_specs`] found no spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
    /// A record that is not a valid message of the kind the sample holds.
    #[error("record {record} of the sample: {error}")]
    Decode {
        /// The record's index in the sample.
        record: usize,
        /// What is wrong (in the text too, so not a `source()`: the crate's rule).
        error: DecodeError,
    },
    /// An Example among SequenceExamples: no one spec form parses both.
    #[error("record {record} is an Example where others are SequenceExamples: give a spec")]
    MixedMessages {
        /// The first Example's index in the sample.
        record: usize,
    },
}

/// Records observed one at a time, then the specs that parse them all ([`finish`](Self::finish)).
#[derive(Debug, Clone, Default)]
pub struct SpecInferrer {
    sequence: bool,
    schema: Schema,
    /// Beside `schema.features` and `schema.feature_lists`, entry for entry: what the records
    /// observed showed of each beyond its stats.
    feature_marks: Vec<Marks>,
    list_marks: Vec<Marks>,
}

/// What [`Schema`]'s stats do not keep of one feature (or feature list).
#[derive(Debug, Clone, Copy, Default)]
struct Marks {
    /// Some value was not UTF-8.
    not_utf8: bool,
    /// The last record (by `Schema::records`) that had the key, to spot a key repeated
    /// within one record.
    last_record: u64,
}

impl SpecInferrer {
    /// An inferrer of records that are SequenceExamples (`sequence`) or Examples.
    pub fn new(sequence: bool) -> SpecInferrer {
        SpecInferrer {
            sequence,
            ..SpecInferrer::default()
        }
    }

    /// Adds one serialized record; an error leaves the inferrer as it was.
    pub fn observe(&mut self, record: &[u8]) -> Result<(), DecodeError> {
        // Checked whole before anything is noted (the errors are `decode`'s); after that, the
        // walk cannot fail.
        if self.sequence {
            SequenceExampleView::new(record).validate()?;
        } else {
            ExampleView::new(record).validate()?;
        }
        self.observe_valid(record)
    }

    /// Adds one record that has passed its kind's `validate`, walking it in place: no
    /// decoded copy, nothing allocated per value (inference reads up to thousands of records
    /// before `convert` parses any).
    fn observe_valid(&mut self, record: &[u8]) -> Result<(), DecodeError> {
        self.schema.records += 1;
        let record_number = self.schema.records;
        if self.sequence {
            let view = SequenceExampleView::new(record);
            observe_features(
                &mut self.schema.features,
                &mut self.feature_marks,
                view.context(),
                record_number,
            )?;
            observe_lists(
                &mut self.schema.feature_lists,
                &mut self.list_marks,
                view.feature_lists(),
                record_number,
            )
        } else {
            observe_features(
                &mut self.schema.features,
                &mut self.feature_marks,
                ExampleView::new(record).entries(),
                record_number,
            )
        }
    }

    /// Whether the records are read as SequenceExamples.
    pub fn is_sequence(&self) -> bool {
        self.sequence
    }

    /// What was seen so far: kinds, value counts and presence of every feature.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The specs of the records observed.
    pub fn finish(self) -> InferredSpecs {
        let (spec, skipped) = self.schema.infer(self.sequence);
        // A context feature and a feature list of one name share the verdict.
        let not_utf8: BTreeSet<&str> = marked_not_utf8(&self.schema.features, &self.feature_marks)
            .chain(marked_not_utf8(&self.schema.feature_lists, &self.list_marks))
            .collect();
        let mut utf8 = BTreeSet::new();
        let mut strings = |specs: &FeatureSpecs| {
            for (name, spec) in specs {
                if spec.dtype() == DType::String && !not_utf8.contains(name.as_str()) {
                    utf8.insert(name.clone());
                }
            }
        };
        match &spec {
            SpecFile::Example(specs) => strings(specs),
            SpecFile::Sequence(s) => {
                strings(&s.context_features);
                strings(&s.sequence_features);
            }
        }
        InferredSpecs {
            spec,
            utf8,
            skipped,
            records: usize::try_from(self.schema.records).unwrap_or(usize::MAX),
        }
    }
}

fn marked_not_utf8<'a>(
    stats: &'a IndexMap<String, FeatureStats>,
    marks: &'a [Marks],
) -> impl Iterator<Item = &'a str> + 'a {
    stats
        .keys()
        .zip(marks)
        .filter(|(_, m)| m.not_utf8)
        .map(|(name, _)| name.as_str())
}

/// The stats entry (and its marks) of `key`, made on first sight; whether the key was already
/// in this record.
fn entry_of(
    stats: &mut IndexMap<String, FeatureStats>,
    marks: &mut Vec<Marks>,
    key: &[u8],
    record_number: u64,
) -> (usize, bool) {
    // Validated keys are UTF-8, so this borrows.
    let name = String::from_utf8_lossy(key);
    let index = match stats.get_index_of(name.as_ref()) {
        Some(index) => index,
        None => stats.insert_full(name.into_owned(), FeatureStats::default()).0,
    };
    if marks.len() < stats.len() {
        marks.resize(stats.len(), Marks::default());
    }
    let repeated = marks[index].last_record == record_number;
    marks[index].last_record = record_number;
    (index, repeated)
}

/// Whether entry `at` of `entries` is the last of its key in the record: a repeated key counts
/// once, with its last value (as the parsers read it).
fn counts<T>(entries: &[(usize, T)], at: usize, any_repeated: bool) -> bool {
    !any_repeated || !entries[at + 1..].iter().any(|(later, _)| *later == entries[at].0)
}

/// The number of values in `view`, noting a bytes value that is not UTF-8.
fn count_values(view: &FeatureView<'_>, marks: &mut Marks) -> Result<usize, DecodeError> {
    if view.kind() == Some(Kind::Bytes) && !marks.not_utf8 {
        let mut utf8 = true;
        let n = view.for_each_bytes(|b| utf8 &= std::str::from_utf8(b).is_ok())?;
        marks.not_utf8 = !utf8;
        return Ok(n);
    }
    view.count()
}

/// One record's map entries with the stats entry of each key, and whether a key repeated.
fn resolve_entries<'a, T>(
    stats: &mut IndexMap<String, FeatureStats>,
    marks: &mut Vec<Marks>,
    entries: impl Iterator<Item = Result<(&'a [u8], T), DecodeError>>,
    record_number: u64,
) -> Result<(Vec<(usize, T)>, bool), DecodeError> {
    let mut found = Vec::with_capacity(stats.len());
    let mut any_repeated = false;
    for entry in entries {
        let (key, value) = entry?;
        let (index, repeated) = entry_of(stats, marks, key, record_number);
        any_repeated |= repeated;
        found.push((index, value));
    }
    Ok((found, any_repeated))
}

fn observe_features(
    stats: &mut IndexMap<String, FeatureStats>,
    marks: &mut Vec<Marks>,
    mut entries: FeatureEntries<'_>,
    record_number: u64,
) -> Result<(), DecodeError> {
    let entries = std::iter::from_fn(|| entries.next_entry().transpose());
    let (found, any_repeated) = resolve_entries(stats, marks, entries, record_number)?;
    for at in 0..found.len() {
        if !counts(&found, at, any_repeated) {
            continue;
        }
        let (index, raw) = &found[at];
        let view = raw.view()?;
        let n = count_values(&view, &mut marks[*index])?;
        let s = &mut stats[*index];
        s.observe_count(view.kind(), n);
        s.present += 1;
    }
    Ok(())
}

fn observe_lists(
    stats: &mut IndexMap<String, FeatureStats>,
    marks: &mut Vec<Marks>,
    entries: FeatureListEntries<'_>,
    record_number: u64,
) -> Result<(), DecodeError> {
    let (found, any_repeated) = resolve_entries(stats, marks, entries, record_number)?;
    for at in 0..found.len() {
        if !counts(&found, at, any_repeated) {
            continue;
        }
        let (index, list) = &found[at];
        let (s, m) = (&mut stats[*index], &mut marks[*index]);
        let mut steps = 0;
        for step in list.rows() {
            let (bytes, base) = step?;
            let view = FeatureView::from_feature_bytes(bytes, base)?;
            s.observe_count(view.kind(), count_values(&view, m)?);
            steps += 1;
        }
        s.observe_steps(steps);
        s.present += 1;
    }
    Ok(())
}

/// Infers specs from `records` (serialized Examples, or SequenceExamples when any has feature
/// lists) by the rules of [the module](self).
pub fn infer_specs<R: AsRef<[u8]>>(records: &[R]) -> Result<InferredSpecs, InferError> {
    // An Example and a SequenceExample with only a context have the same bytes: the sample is
    // of SequenceExamples when any record has feature lists.
    let kinds: Vec<MessageKind> = records.iter().map(|r| detect_message(r.as_ref())).collect();
    let sequence = kinds.contains(&MessageKind::SequenceExample);
    if sequence {
        if let Some(record) = kinds.iter().position(|k| *k == MessageKind::Example) {
            return Err(InferError::MixedMessages { record });
        }
    }
    let mut inferrer = SpecInferrer::new(sequence);
    for (record, (bytes, kind)) in records.iter().zip(&kinds).enumerate() {
        // `detect_message` validated the record as each kind, so only the invalid ones are
        // checked again, for their error.
        let valid = match kind {
            MessageKind::Either => true,
            MessageKind::SequenceExample => sequence,
            MessageKind::Example => !sequence,
            MessageKind::Neither => false,
        };
        let observed = if valid {
            inferrer.observe_valid(bytes.as_ref())
        } else {
            inferrer.observe(bytes.as_ref())
        };
        observed.map_err(|error| InferError::Decode { record, error })?;
    }
    Ok(inferrer.finish())
}

/// The spec of one feature (`list`: a feature list) seen in `records` records, or why it has
/// none.
fn spec_of(stats: &FeatureStats, records: u64, list: bool) -> Result<FeatureSpec, String> {
    let kind = match stats.kinds.as_slice() {
        [] if list => return Err("no sampled step gives it a kind (only empty Feature messages or no steps)".into()),
        [] => return Err("no sampled record gives it a kind (only empty Feature messages)".into()),
        [kind] => *kind,
        many => {
            let names: Vec<&str> = many.iter().map(|k| k.list_name()).collect();
            return Err(format!(
                "its kind varies between records ({}), so no spec parses them all: give a spec",
                names.join(", ")
            ));
        }
    };
    let dtype = DType::of_kind(kind);
    // An empty Feature message counts no values, so with n ≥ 1 everywhere there is none.
    let fixed = (stats.no_kind == 0 && stats.min_values == stats.max_values && stats.max_values > 0)
        .then_some(stats.max_values);
    let shape = |n: usize| if n == 1 { Vec::new() } else { vec![n] };
    Ok(match fixed {
        Some(n) if list => FeatureSpec::FixedLenSequence(FixedLenSequenceFeature {
            shape: shape(n),
            dtype,
            allow_missing: stats.present < records,
            default_value: None,
        }),
        Some(n) if stats.present == records => FeatureSpec::FixedLen(FixedLenFeature {
            shape: shape(n),
            dtype,
            default_value: None,
        }),
        _ => FeatureSpec::VarLen(VarLenFeature { dtype }),
    })
}

impl Schema {
    /// The specs that parse these records, by the rules of [the inference module](self): name →
    /// spec for Examples, or context and sequence specs when feature lists were seen. Features
    /// with no kind, or whose kind varies, are left out.
    pub fn to_spec(&self) -> SpecFile {
        self.infer(!self.feature_lists.is_empty()).0
    }

    /// The specs (sequence specs when `sequence`), and the features left out with why.
    fn infer(&self, sequence: bool) -> (SpecFile, BTreeMap<String, String>) {
        let mut skipped = BTreeMap::new();
        let mut specs = |features: &indexmap::IndexMap<String, FeatureStats>, list: bool| {
            // Collected, not inserted one by one: a map built from its entries at once fills
            // its nodes, where inserts in the records' order (not the names') leave them
            // about half full, which doubled a wide spec's memory.
            let mut specs = Vec::with_capacity(features.len());
            for (name, stats) in features {
                match spec_of(stats, self.records, list) {
                    Ok(spec) => specs.push((name.clone(), spec)),
                    Err(why) => {
                        skipped.insert(name.clone(), why);
                    }
                }
            }
            FeatureSpecs::from_iter(specs)
        };
        let context = specs(&self.features, false);
        let spec = if sequence {
            SpecFile::Sequence(SequenceSpecs {
                context_features: context,
                sequence_features: specs(&self.feature_lists, true),
            })
        } else {
            SpecFile::Example(context)
        };
        (spec, skipped)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::example::test_support::{encoded_example as example, encoded_sequence_example as seq};
    use crate::example::Feature;

    fn spec_json(inferred: &InferredSpecs) -> serde_json::Value {
        serde_json::from_str(&inferred.to_json_string()).unwrap()
    }

    fn ints(n: usize) -> Feature {
        Feature::Int64(vec![7; n])
    }

    #[test]
    fn schema_spec_tells_fixed_from_varlen() {
        let schema = crate::example::three_examples();
        let SpecFile::Example(spec) = schema.to_spec() else {
            panic!("Example specs expected")
        };
        let fixed = |name: &str| match &spec[name] {
            FeatureSpec::FixedLen(f) => Some(f.shape.clone()),
            _ => None,
        };
        assert_eq!(fixed("id"), Some(vec![]));
        assert_eq!(fixed("pair"), Some(vec![2]));
        assert_eq!(spec["tags"], FeatureSpec::VarLen(VarLenFeature { dtype: DType::Int64 }));
    }

    #[test]
    fn schema_spec_of_sequences() {
        let schema = crate::example::one_sequence();
        let SpecFile::Sequence(spec) = schema.to_spec() else {
            panic!("sequence specs expected")
        };
        assert!(matches!(spec.context_features["age"], FeatureSpec::FixedLen(_)));
        assert!(matches!(
            spec.sequence_features["ratings"],
            FeatureSpec::FixedLenSequence(_)
        ));
        assert_eq!(
            spec.sequence_features["actors"],
            FeatureSpec::VarLen(VarLenFeature { dtype: DType::String })
        );
    }

    #[test]
    fn one_count_everywhere_is_fixed_anything_else_a_list() {
        let records = vec![
            example(&[
                ("scalar", ints(1)),
                ("pair", Feature::Float(vec![1.0, 2.0])),
                ("ragged", ints(1)),
                ("sometimes", ints(1)),
                ("empty", Feature::Int64(vec![])),
                ("no_kind_once", ints(2)),
                ("name", Feature::Bytes(vec![b"a".to_vec()])),
                ("raw", Feature::Bytes(vec![vec![0xff]])),
            ]),
            example(&[
                ("scalar", ints(1)),
                ("pair", Feature::Float(vec![3.0, 4.0])),
                ("ragged", ints(3)),
                ("empty", Feature::Int64(vec![])),
                ("no_kind_once", Feature::None),
                ("name", Feature::Bytes(vec![b"b".to_vec()])),
                ("raw", Feature::Bytes(vec![b"ok".to_vec()])),
            ]),
        ];
        let inferred = infer_specs(&records).unwrap();
        let fixed = |shape: serde_json::Value, dtype: &str| json!({"type": "FixedLenFeature", "shape": shape, "dtype": dtype, "default_value": null});
        let var = |dtype: &str| json!({"type": "VarLenFeature", "dtype": dtype});
        assert_eq!(
            spec_json(&inferred),
            json!({
                "scalar": fixed(json!([]), "int64"),
                "pair": fixed(json!([2]), "float32"),
                "ragged": var("int64"),
                "sometimes": var("int64"),
                "empty": var("int64"),
                "no_kind_once": var("int64"),
                "name": fixed(json!([]), "string"),
                "raw": fixed(json!([]), "string"),
            })
        );
        assert_eq!(inferred.utf8, BTreeSet::from(["name".to_owned()]));
        assert!(inferred.skipped.is_empty());
        assert_eq!(inferred.records, 2);
    }

    #[test]
    fn no_kind_and_varying_kinds_are_left_out_with_why() {
        let records = vec![
            example(&[("a", ints(1)), ("nothing", Feature::None), ("keep", ints(1))]),
            example(&[("a", Feature::Float(vec![1.0])), ("keep", ints(1))]),
        ];
        let inferred = infer_specs(&records).unwrap();
        assert_eq!(
            spec_json(&inferred),
            json!({"keep": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": null}})
        );
        assert!(
            inferred.skipped["a"].contains("int64_list, float_list"),
            "{:?}",
            inferred.skipped
        );
        assert!(inferred.skipped["nothing"].contains("no sampled record"));
    }

    #[test]
    fn a_repeated_key_counts_once_with_its_last_value() {
        // `v: [1, 2]` then `v: [3]` in one Features map: the parsers read `[3]`.
        let mut record = example(&[("v", ints(2))]);
        let again = example(&[("v", ints(1))]);
        record.extend_from_slice(&again);
        let inferred = infer_specs(&[record.clone(), record]).unwrap();
        assert_eq!(spec_json(&inferred)["v"]["shape"], json!([]));
    }

    #[test]
    fn a_repeated_list_counts_once_with_its_last_steps() {
        // Two entries `s` in one FeatureLists map: two-value steps, then one-value steps.
        let mut record = seq(&[], &[("s", vec![ints(2), ints(2)])]);
        record.extend_from_slice(&seq(&[], &[("s", vec![ints(1)])]));
        let inferred = infer_specs(&[record.clone(), record]).unwrap();
        let list = &inferred.spec.to_json_string();
        assert!(list.contains(r#""shape":[]"#), "{list}");
    }

    #[test]
    fn one_record_at_a_time_as_the_whole_sample() {
        let records = vec![
            seq(
                &[("id", ints(1)), ("raw", Feature::Bytes(vec![vec![0xff]]))],
                &[
                    ("tok", vec![Feature::Bytes(vec![b"a".to_vec()])]),
                    ("raw", vec![ints(1)]),
                ],
            ),
            seq(&[("id", ints(2))], &[("tok", vec![Feature::Bytes(vec![vec![0xfe]])])]),
        ];
        let mut inferrer = SpecInferrer::new(true);
        for record in &records {
            inferrer.observe(record).unwrap();
        }
        // A bad record changes nothing.
        assert!(inferrer.observe(&[0x0a, 0x05, 0x0a]).is_err());
        let one_by_one = inferrer.finish();
        let whole = infer_specs(&records).unwrap();
        assert_eq!(one_by_one, whole);
        assert_eq!(whole.records, 2);
        // `raw` is a context feature that is not UTF-8 and a list of the same name: one verdict.
        assert!(whole.utf8.is_empty(), "{:?}", whole.utf8);
    }

    #[test]
    fn feature_lists_fixed_steps_ragged_steps_and_presence() {
        let records = vec![
            seq(
                &[("id", ints(1)), ("note", Feature::Bytes(vec![b"x".to_vec()]))],
                &[
                    ("xy", vec![Feature::Float(vec![1.0, 2.0]); 2]),
                    ("tok", vec![Feature::Bytes(vec![b"a".to_vec()]), Feature::Bytes(vec![])]),
                    ("zero", vec![Feature::Int64(vec![])]),
                    ("one", vec![ints(1), ints(1), ints(1)]),
                    ("stepless", vec![]),
                ],
            ),
            // Only a context: the bytes of an Example, read as a SequenceExample with no lists.
            seq(&[("id", ints(1))], &[]),
            // A list whose first step is empty but kinded, then three values: not fixed.
            seq(
                &[("id", ints(1))],
                &[("one", vec![ints(1)]), ("late", vec![Feature::Int64(vec![]), ints(3)])],
            ),
        ];
        let inferred = infer_specs(&records).unwrap();
        assert_eq!(
            spec_json(&inferred),
            json!({
                "context_features": {
                    "id": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": null},
                    "note": {"type": "VarLenFeature", "dtype": "string"},
                },
                "sequence_features": {
                    "xy": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32",
                           "allow_missing": true, "default_value": null},
                    "tok": {"type": "VarLenFeature", "dtype": "string"},
                    "zero": {"type": "VarLenFeature", "dtype": "int64"},
                    "one": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64",
                            "allow_missing": true, "default_value": null},
                    "late": {"type": "VarLenFeature", "dtype": "int64"},
                },
            })
        );
        assert!(inferred.skipped["stepless"].contains("no sampled step"));
        assert_eq!(inferred.utf8, BTreeSet::from(["note".to_owned(), "tok".to_owned()]));
        // Present in every record: no missing allowed.
        let always = infer_specs(&[seq(&[], &[("s", vec![ints(2)])]), seq(&[], &[("s", vec![])])]).unwrap();
        assert_eq!(
            spec_json(&always)["sequence_features"]["s"]["allow_missing"],
            json!(false)
        );
    }

    #[test]
    fn a_context_and_a_list_may_share_a_name() {
        let records = vec![seq(&[("tok", ints(1))], &[("tok", vec![ints(1)])])];
        let SpecFile::Sequence(s) = infer_specs(&records).unwrap().spec else {
            panic!("sequence specs expected")
        };
        assert!(s.context_features.contains_key("tok") && s.sequence_features.contains_key("tok"));
    }

    #[test]
    fn message_kinds_and_bad_records() {
        let sequence = seq(&[("id", ints(1))], &[("s", vec![ints(1)])]);
        // An Example with only features reads as a context-only SequenceExample.
        assert!(infer_specs(&[sequence.clone(), example(&[("id", ints(1))])]).is_ok());
        // Field 2 holding a cut-off varint: an unknown field to an Example, broken feature
        // lists to a SequenceExample.
        let only_example = vec![0x12, 0x01, 0xff];
        assert_eq!(
            infer_specs(&[sequence, only_example]),
            Err(InferError::MixedMessages { record: 1 })
        );
        let truncated = vec![0x0a, 0x05, 0x0a];
        assert!(matches!(
            infer_specs(&[example(&[]), truncated]),
            Err(InferError::Decode { record: 1, .. })
        ));
        let none: [&[u8]; 0] = [];
        assert_eq!(infer_specs(&none).unwrap().spec, SpecFile::Example(FeatureSpecs::new()));
    }

    #[test]
    fn a_chosen_kind_gives_its_spec_form() {
        let mut inferrer = SpecInferrer::new(true);
        inferrer.observe(&example(&[("id", ints(1))])).unwrap();
        assert_eq!(inferrer.schema().records, 1);
        let SpecFile::Sequence(s) = inferrer.finish().spec else {
            panic!("sequence specs expected")
        };
        assert!(s.sequence_features.is_empty() && s.context_features.contains_key("id"));
    }
}

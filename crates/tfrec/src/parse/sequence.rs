//! `tf.io.parse_sequence_example` / `parse_single_sequence_example`: SequenceExamples into
//! context tensors, feature-list tensors and `feature_list_dense_lengths`.
//!
//! Errors come in TensorFlow's order of phases, each over the whole batch: extraction, context
//! types, feature-list row types, context dense, context sparse and ragged, then feature-list
//! dense, sparse and ragged.
//!
//! Context VarLen and Ragged features parse exactly as in `parse_example` (a SequenceExample's
//! `context` is field 1, as an Example's `features` is), so they are delegated to an
//! [`ExampleParser`]; context FixedLen features have the sequence op's own rules.

use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::assemble::{dense_fixed, dense_padded, index_matrix, indices_not_filled, RaggedBuild};
use super::columns::{splits_of, Column, ColumnSize};
use super::error::{ParseError, ParseErrorKind, RaggedPartitionError};
use super::example::{check_specs, strip_batch, ExampleParser, TensorMap};
use super::fast;
use super::ragged;
use super::spec::{
    checked_elements, known_shape_string, shape_string, FeatureSpec, FeatureSpecs, FixedLenFeature, Partition,
    SequenceSpecs, SpecError,
};
use super::tensor::{DenseTensor, SparseTensor, Tensor};
use super::values::{BytesArray, DType, SplitsDType, Values};
use crate::example::{FeatureListView, FeatureView, RawFeature, SequenceExampleView};

/// How a `FixedLenSequenceFeature`'s steps are laid out in its parsed tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepLayout {
    /// `[batch, longest, *shape]`, shorter lists padded with zeros: TensorFlow's output.
    Padded,
    /// `[total steps, *shape]`: each record's steps right after the one before's, no padding;
    /// the lengths say whose they are. A `VarLenFeature` list is a ragged tensor
    /// `[batch, (steps), (values)]` (int64 splits) instead of a sparse one. For consumers that
    /// keep their own offsets (Arrow's lists), which would otherwise copy the padding out again
    /// or rebuild the offsets from an index matrix.
    Packed,
}

/// The three outputs of `parse_sequence_example`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedSequences {
    /// Context tensors by name.
    pub context: TensorMap,
    /// Feature-list tensors by name.
    pub feature_lists: TensorMap,
    /// Rows per example of each FixedLenSequenceFeature (`feature_list_dense_lengths`);
    /// empty for the single-example op.
    pub lengths: TensorMap,
}

#[derive(Debug, Clone)]
enum ListRole {
    Dense {
        shape: Vec<usize>,
        stride: usize,
        allow_missing: bool,
    },
    VarLen,
    Ragged {
        partitions: Vec<(Partition, Option<usize>)>,
        splits_dtype: SplitsDType,
        validate: bool,
    },
    /// A feature list read only as another one's partition.
    Partition,
}

impl ListRole {
    fn is_dense(&self) -> bool {
        matches!(self, ListRole::Dense { .. })
    }

    fn is_sparse(&self) -> bool {
        matches!(self, ListRole::VarLen)
    }

    fn is_ragged(&self) -> bool {
        matches!(self, ListRole::Ragged { .. } | ListRole::Partition)
    }
}

#[derive(Debug, Clone)]
struct ListSlot {
    key: String,
    dtype: DType,
    /// The output name, unless the slot is only a partition.
    output: Option<String>,
    role: ListRole,
}

/// Compiled `parse_sequence_example` specs, reusable across batches.
///
/// ```
/// use tfrec::example::SequenceExample;
/// use tfrec::parse::{SequenceParser, SpecFile};
///
/// let spec: SpecFile = r#"{
///     "context_features": {"user": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}},
///     "sequence_features": {
///         "clicks": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true}
///     }
/// }"#
/// .parse()?;
/// let SpecFile::Sequence(specs) = spec else { unreachable!() };
/// let parser = SequenceParser::new(&specs)?;
/// let records: Vec<Vec<u8>> = (1..=2)
///     .map(|n| {
///         let steps: Vec<i64> = (0..n).collect();
///         SequenceExample::builder()
///             .context_int64("user", n)
///             .int64_list("clicks", steps)
///             .build()
///             .map(|s| s.encode())
///     })
///     .collect::<Result<_, _>>()?;
/// let parsed = parser.parse_batch(&records)?;
/// assert_eq!(parsed.context["user"].as_dense().unwrap().as_i64(), Some(&[1, 2][..]));
/// // Two examples of at most two steps, the shorter padded with 0.
/// let clicks = parsed.feature_lists["clicks"].as_dense().unwrap();
/// assert_eq!(clicks.shape(), &[2, 2]);
/// assert_eq!(clicks.as_i64(), Some(&[0, 0, 0, 1][..]));
/// assert_eq!(parsed.lengths["clicks"].as_dense().unwrap().as_i64(), Some(&[1, 2][..]));
/// # Ok::<(), tfrec::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SequenceParser {
    context_fixed: Vec<(String, FixedLenFeature)>,
    /// The context VarLen and Ragged features.
    context_other: Option<ExampleParser>,
    /// Every context key read, with its dtype, for the type phase.
    context_keys: FxHashMap<Box<[u8]>, (usize, DType)>,
    context_key_names: Vec<String>,
    lists: Vec<ListSlot>,
    list_lookup: FxHashMap<Box<[u8]>, usize>,
    /// The hot path applies: no list feeding two outputs.
    fast_ok: bool,
    /// Per feature list, the rows and values per 1,024 records the last batch held: the
    /// next batch's columns start that large instead of growing by doubling (a realloc and
    /// a copy each time). Shared by the parser's clones and threads; only a size hint.
    column_sizes: Arc<[ColumnSize]>,
}

/// One feature list over a batch: its values (counted per row) and its rows per example.
type ListColumn = (Column, Vec<usize>);

/// A feature list found in one example: its rows, already checked for type.
type Rows<'a> = Vec<FeatureView<'a>>;

/// What extraction found, per example: the requested context features and feature lists
/// (by slot), and the slots in the wire order of their keys' first occurrence — TensorFlow
/// checks types in that order and reports the first mismatch.
struct Found<'a> {
    context: Vec<Vec<Option<RawFeature<'a>>>>,
    lists: Vec<Vec<Option<FeatureListView<'a>>>>,
    context_order: Vec<Vec<usize>>,
    list_order: Vec<Vec<usize>>,
}

/// An error of example `example`, numbered unless the op parses a single SequenceExample.
fn numbered(e: ParseError, example: usize, single: bool) -> ParseError {
    if single {
        e
    } else {
        e.example(example)
    }
}

impl SequenceParser {
    /// Checks and compiles the specs as `parse_sequence_example` does.
    pub fn new(specs: &SequenceSpecs) -> Result<SequenceParser, SpecError> {
        SequenceParser::validate(specs)?;
        SequenceParser::compile(specs)
    }

    /// TensorFlow's checks of `parse_sequence_example` specs, in its order: after them,
    /// [`SequenceParser::compile`] cannot fail.
    fn validate(specs: &SequenceSpecs) -> Result<(), SpecError> {
        if specs.context_features.is_empty() && specs.sequence_features.is_empty() {
            return Err(SpecError::NoFeatures("Missing features."));
        }
        check_specs(&specs.context_features, false)?;
        check_specs(&specs.sequence_features, false)?;
        let conflict = |key: &str, existing: DType, dtype: DType| SpecError::ConflictingType {
            key: key.to_owned(),
            existing,
            dtype,
        };
        let mut context_other = FeatureSpecs::new();
        let mut context_keys: Vec<(&str, DType)> = Vec::new();
        for (name, spec) in &specs.context_features {
            match spec {
                FeatureSpec::FixedLen(f) => {
                    check_context_default(name, f)?;
                    context_keys.push((name, f.dtype));
                }
                FeatureSpec::VarLen(f) => {
                    context_other.insert(name.clone(), spec.clone());
                    context_keys.push((name, f.dtype));
                }
                FeatureSpec::Ragged(f) => {
                    context_other.insert(name.clone(), spec.clone());
                    context_keys.push((f.value_key.as_deref().unwrap_or(name), f.dtype));
                    for key in f.partitions.iter().filter_map(Partition::key) {
                        context_keys.push((key, DType::Int64));
                    }
                }
                other => {
                    return Err(SpecError::Unsupported {
                        feature: name.clone(),
                        spec: other.type_name(),
                    })
                }
            }
        }
        if !context_other.is_empty() {
            ExampleParser::check(&context_other)?;
        }
        let mut seen: FxHashMap<&str, DType> = FxHashMap::default();
        for (key, dtype) in context_keys {
            match seen.get(key) {
                Some(&existing) if existing != dtype => return Err(conflict(key, existing, dtype)),
                Some(_) => {}
                None => {
                    seen.insert(key, dtype);
                }
            }
        }
        let mut lists: FxHashMap<&str, DType> = FxHashMap::default();
        let list_key = |key: &str, dtype: DType, lists: &FxHashMap<&str, DType>| match lists.get(key) {
            Some(&existing) if existing != dtype => Err(conflict(key, existing, dtype)),
            _ => Ok(()),
        };
        for (name, spec) in &specs.sequence_features {
            let key = match spec {
                FeatureSpec::FixedLenSequence(f) => {
                    if f.default_value.is_some() {
                        return Err(SpecError::ListDefault { feature: name.clone() });
                    }
                    checked_elements(&f.shape, name)?;
                    name.as_str()
                }
                FeatureSpec::VarLen(_) => name.as_str(),
                FeatureSpec::Ragged(f) => {
                    for key in f.partitions.iter().filter_map(Partition::key) {
                        list_key(key, DType::Int64, &lists)?;
                        lists.entry(key).or_insert(DType::Int64);
                    }
                    f.value_key.as_deref().unwrap_or(name)
                }
                other => {
                    return Err(SpecError::Unsupported {
                        feature: name.clone(),
                        spec: other.type_name(),
                    })
                }
            };
            list_key(key, spec.dtype(), &lists)?;
            lists.entry(key).or_insert(spec.dtype());
        }
        Ok(())
    }

    /// The parser of checked specs (see [`SequenceParser::validate`]).
    fn compile(specs: &SequenceSpecs) -> Result<SequenceParser, SpecError> {
        let mut context_fixed = Vec::new();
        let mut context_other = FeatureSpecs::new();
        let mut context_keys: Vec<(String, DType)> = Vec::new();
        for (name, spec) in &specs.context_features {
            match spec {
                FeatureSpec::FixedLen(f) => {
                    check_context_default(name, f)?;
                    context_fixed.push((name.clone(), f.clone()));
                    context_keys.push((name.clone(), f.dtype));
                }
                FeatureSpec::VarLen(f) => {
                    context_other.insert(name.clone(), spec.clone());
                    context_keys.push((name.clone(), f.dtype));
                }
                FeatureSpec::Ragged(f) => {
                    context_other.insert(name.clone(), spec.clone());
                    context_keys.push((f.value_key.clone().unwrap_or_else(|| name.clone()), f.dtype));
                    for key in f.partitions.iter().filter_map(Partition::key) {
                        context_keys.push((key.to_owned(), DType::Int64));
                    }
                }
                other => {
                    return Err(SpecError::Unsupported {
                        feature: name.clone(),
                        spec: other.type_name(),
                    })
                }
            }
        }
        let context_other = if context_other.is_empty() {
            None
        } else {
            Some(ExampleParser::new(&context_other)?)
        };
        let mut key_map: FxHashMap<Box<[u8]>, (usize, DType)> = FxHashMap::default();
        let mut context_key_names = Vec::new();
        for (key, dtype) in context_keys {
            let boxed: Box<[u8]> = key.as_bytes().into();
            if let Some(&(_, existing)) = key_map.get(&boxed) {
                if existing != dtype {
                    return Err(SpecError::ConflictingType { key, existing, dtype });
                }
                continue;
            }
            key_map.insert(boxed, (context_key_names.len(), dtype));
            context_key_names.push(key);
        }

        let mut lists: Vec<ListSlot> = Vec::new();
        let mut list_lookup: FxHashMap<Box<[u8]>, usize> = FxHashMap::default();
        let mut slot_for = |key: &str, dtype: DType, lists: &mut Vec<ListSlot>| -> Result<usize, SpecError> {
            if let Some(&i) = list_lookup.get(key.as_bytes()) {
                if lists[i].dtype != dtype {
                    return Err(SpecError::ConflictingType {
                        key: key.to_owned(),
                        existing: lists[i].dtype,
                        dtype,
                    });
                }
                return Ok(i);
            }
            lists.push(ListSlot {
                key: key.to_owned(),
                dtype,
                output: None,
                role: ListRole::Partition,
            });
            list_lookup.insert(key.as_bytes().into(), lists.len() - 1);
            Ok(lists.len() - 1)
        };
        for (name, spec) in &specs.sequence_features {
            let (key, role) = match spec {
                FeatureSpec::FixedLenSequence(f) => {
                    if f.default_value.is_some() {
                        return Err(SpecError::ListDefault { feature: name.clone() });
                    }
                    let role = ListRole::Dense {
                        shape: f.shape.clone(),
                        stride: checked_elements(&f.shape, name)?,
                        allow_missing: f.allow_missing,
                    };
                    (name.clone(), role)
                }
                FeatureSpec::VarLen(_) => (name.clone(), ListRole::VarLen),
                FeatureSpec::Ragged(f) => {
                    let mut partitions = Vec::new();
                    for p in &f.partitions {
                        let slot = p.key().map(|k| slot_for(k, DType::Int64, &mut lists)).transpose()?;
                        partitions.push((p.clone(), slot));
                    }
                    let role = ListRole::Ragged {
                        partitions,
                        splits_dtype: f.row_splits_dtype,
                        validate: f.validate,
                    };
                    (f.value_key.clone().unwrap_or_else(|| name.clone()), role)
                }
                other => {
                    return Err(SpecError::Unsupported {
                        feature: name.clone(),
                        spec: other.type_name(),
                    })
                }
            };
            let slot = slot_for(&key, spec.dtype(), &mut lists)?;
            if lists[slot].output.is_some() {
                // Two outputs from one list: keep a second slot of the same key.
                lists.push(ListSlot {
                    key: key.clone(),
                    dtype: spec.dtype(),
                    output: Some(name.clone()),
                    role,
                });
            } else {
                lists[slot].output = Some(name.clone());
                lists[slot].role = role;
            }
        }
        let shared = lists.iter().filter(|s| s.output.is_some()).count()
            != lists
                .iter()
                .filter(|s| s.output.is_some())
                .map(|s| &s.key)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
        let fast_ok = !shared;
        Ok(SequenceParser {
            fast_ok,
            column_sizes: (0..lists.len()).map(|_| ColumnSize::default()).collect(),
            context_fixed,
            context_other,
            context_keys: key_map,
            context_key_names,
            lists,
            list_lookup,
        })
    }

    /// Every record through the careful path, with protobuf's exact semantics and
    /// TensorFlow's errors, and none through the hand-written fast walks (the context's and the
    /// feature lists'). The results are the same either way; this is for checking that, and
    /// for measuring what the fast path buys. Slower.
    pub fn without_fast_path(mut self) -> Self {
        self.fast_ok = false;
        self.context_other = self.context_other.map(ExampleParser::without_fast_path);
        self
    }

    /// `parse_sequence_example` over a batch.
    pub fn parse_batch<R: AsRef<[u8]>>(&self, records: &[R]) -> Result<ParsedSequences, ParseError> {
        self.parse(records, false, StepLayout::Padded)
    }

    /// [`parse_batch`](Self::parse_batch) with the feature lists' steps laid out as `layout`
    /// says; the same errors, and the same values in every other tensor.
    pub fn parse_batch_with<R: AsRef<[u8]>>(
        &self,
        records: &[R],
        layout: StepLayout,
    ) -> Result<ParsedSequences, ParseError> {
        self.parse(records, false, layout)
    }

    /// Parses a batch on the rayon thread pool, in minibatches of `minibatch` records, then
    /// joins the minibatches' tensors in order; identical to [`SequenceParser::parse_batch`].
    pub fn parse_batch_parallel<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        minibatch: usize,
    ) -> Result<ParsedSequences, ParseError> {
        self.parse_batch_parallel_with(records, minibatch, StepLayout::Padded)
    }

    /// [`parse_batch_parallel`](Self::parse_batch_parallel) with the feature lists' steps laid
    /// out as `layout` says.
    pub fn parse_batch_parallel_with<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        minibatch: usize,
        layout: StepLayout,
    ) -> Result<ParsedSequences, ParseError> {
        // Minibatches are parsed into columns in parallel, joined in order and assembled once.
        // Anything the hot path does not take (and every error) is parsed again sequentially,
        // so results and errors are the sequential ones.
        let minibatch = minibatch.max(1);
        if records.len() <= minibatch || !self.fast_ok {
            return self.parse(records, false, layout);
        }
        let parts: Vec<Option<Vec<ListColumn>>> = records
            .par_chunks(minibatch)
            .map(|chunk| self.fast_columns(chunk, false).map(|(columns, _)| columns))
            .collect();
        let Some(parts) = parts.into_iter().collect::<Option<Vec<Vec<ListColumn>>>>() else {
            return self.parse(records, false, layout);
        };
        let mut parts = parts.into_iter();
        let Some(mut columns) = parts.next() else {
            return self.parse(records, false, layout);
        };
        let rest: Vec<Vec<ListColumn>> = parts.collect();
        for (i, (column, rows)) in columns.iter_mut().enumerate() {
            // Each list grows once to its final size rather than by doubling (a copy of every
            // value a doubling, and fresh pages to fault in).
            column.values.reserve_for_parts(rest.iter().map(|p| &p[i].0.values));
            column.counts.reserve(rest.iter().map(|p| p[i].0.counts.len()).sum());
            rows.reserve(rest.iter().map(|p| p[i].1.len()).sum());
        }
        for part in rest {
            for ((column, rows), (c, mut r)) in columns.iter_mut().zip(part) {
                column.append(c);
                rows.append(&mut r);
            }
        }
        let mut out = ParsedSequences::default();
        if let Some(parser) = &self.context_other {
            // An error is reported by the sequential path, so that which error (and its
            // wording) never depends on the number of threads.
            match parser.parse_batch_parallel(records, minibatch) {
                Ok(context) => out.context = context,
                Err(_) => return self.parse(records, false, layout),
            }
        }
        match self.fast_context_fixed(records) {
            Some(fixed) => out.context.extend(fixed),
            None => return self.parse(records, false, layout),
        }
        match self.assemble_lists(
            columns.into_iter().map(Some).collect(),
            records.len(),
            false,
            layout,
            &mut out,
        ) {
            Ok(()) => Ok(out),
            Err(_) => self.parse(records, false, layout),
        }
    }

    /// Parses a batch given as any iterator of records (collected first).
    pub fn parse_iter<I, R>(&self, records: I) -> Result<ParsedSequences, ParseError>
    where
        I: IntoIterator<Item = R>,
        R: AsRef<[u8]>,
    {
        let records: Vec<R> = records.into_iter().collect();
        self.parse_batch(&records)
    }

    /// `parse_single_sequence_example`: no batch dimension, no lengths.
    pub fn parse_single(&self, record: &[u8]) -> Result<ParsedSequences, ParseError> {
        let parsed = self.parse(&[record], true, StepLayout::Padded).map_err(|mut e| {
            e.single = true;
            e
        })?;
        let strip = |m: TensorMap| m.into_iter().map(|(k, t)| (k, strip_batch(t))).collect();
        Ok(ParsedSequences {
            // The context VarLen and Ragged features came from the single-example op already.
            context: parsed
                .context
                .into_iter()
                .map(|(k, t)| {
                    let fixed = self.context_fixed.iter().any(|(name, _)| *name == k);
                    (k.clone(), if fixed { strip_batch(t) } else { t })
                })
                .collect(),
            feature_lists: strip(parsed.feature_lists),
            lengths: TensorMap::new(),
        })
    }

    /// The general path, in TensorFlow's order (its errors are the first TensorFlow meets):
    /// extraction, context types, feature-list row types, context dense, then the feature
    /// lists, then the context's VarLen and Ragged features.
    fn parse<R: AsRef<[u8]>>(
        &self,
        records: &[R],
        single: bool,
        layout: StepLayout,
    ) -> Result<ParsedSequences, ParseError> {
        if let Some(parsed) = self.parse_fast(records, single, layout) {
            return Ok(parsed);
        }
        let found = self.extract(records, single)?;
        let context_views = self.context_types(&found, single)?;
        let rows = self.row_types(&found, single)?;
        let mut out = ParsedSequences::default();
        for (name, spec) in &self.context_fixed {
            let i = self.context_keys[name.as_bytes()].0;
            let tensor = self.context_dense(name, spec, i, &context_views, single)?;
            out.context.insert(name.clone(), Tensor::Dense(tensor));
        }
        // Context sparse and ragged come after the lists: their values were checked with the
        // context's types above, and TensorFlow builds ragged tensors from partitions only
        // once the op has parsed everything.
        let columns = self.list_columns(&rows, single)?;
        if let Some(parser) = &self.context_other {
            out.context.extend(self.context_parse(parser, records, single)?);
        }
        self.assemble_lists(columns, records.len(), single, layout, &mut out)?;
        Ok(out)
    }

    /// Phase 1, extraction: every requested context feature and feature list of every example.
    fn extract<'a, R: AsRef<[u8]>>(&self, records: &'a [R], single: bool) -> Result<Found<'a>, ParseError> {
        let batch = records.len();
        let mut found = Found {
            context: Vec::with_capacity(batch),
            lists: Vec::with_capacity(batch),
            context_order: Vec::with_capacity(batch),
            list_order: Vec::with_capacity(batch),
        };
        for (e, record) in records.iter().enumerate() {
            let view = SequenceExampleView::new(record.as_ref());
            let mut ctx = vec![None; self.context_key_names.len()];
            let mut c_order = Vec::new();
            let mut l_order = Vec::new();
            let mut entries = view.context();
            while let Some((key, raw)) = entries
                .next_entry()
                .map_err(|err| numbered(ParseError::new(ParseErrorKind::Malformed(err)), e, single).example(e))?
            {
                if let Some(&(i, _)) = self.context_keys.get(key) {
                    if ctx[i].is_none() {
                        c_order.push(i);
                    }
                    ctx[i] = Some(raw);
                }
            }
            let mut lists = vec![None; self.lists.len()];
            for entry in view.feature_lists() {
                let (key, list) = entry
                    .map_err(|err| numbered(ParseError::new(ParseErrorKind::Malformed(err)), e, single).example(e))?;
                if let Some(&i) = self.list_lookup.get(key) {
                    // Every slot of this key (a list may feed two outputs) sees it.
                    for (j, slot) in self.lists.iter().enumerate() {
                        if j == i || slot.key.as_bytes() == key {
                            if lists[j].is_none() {
                                l_order.push(j);
                            }
                            lists[j] = Some(list.clone());
                        }
                    }
                }
            }
            found.context.push(ctx);
            found.lists.push(lists);
            found.context_order.push(c_order);
            found.list_order.push(l_order);
        }
        Ok(found)
    }

    /// Phase 2: the context features' types, per example in wire order.
    fn context_types<'a>(
        &self,
        found: &Found<'a>,
        single: bool,
    ) -> Result<Vec<Vec<Option<FeatureView<'a>>>>, ParseError> {
        let mut context_views = Vec::with_capacity(found.context.len());
        for (e, ctx) in found.context.iter().enumerate() {
            let mut views = vec![None; ctx.len()];
            for &i in &found.context_order[e] {
                let key = &self.context_key_names[i];
                let Some(raw) = &ctx[i] else {
                    continue;
                };
                let view = raw.view().map_err(|err| {
                    numbered(
                        ParseError::new(ParseErrorKind::MalformedFeature(err)).key(key),
                        e,
                        single,
                    )
                })?;
                let expected = self.context_keys[key.as_bytes()].1;
                if let Some(kind) = view.kind() {
                    if DType::of_kind(kind) != expected {
                        return Err(numbered(
                            ParseError::new(ParseErrorKind::ContextTypeMismatch { expected }).key(key),
                            e,
                            single,
                        ));
                    }
                }
                views[i] = Some(view);
            }
            context_views.push(views);
        }
        Ok(context_views)
    }

    /// Phase 3: the feature lists' row types, per example in wire order.
    fn row_types<'a>(&self, found: &Found<'a>, single: bool) -> Result<Vec<Vec<Option<Rows<'a>>>>, ParseError> {
        let mut rows = Vec::with_capacity(found.lists.len());
        for (e, lists) in found.lists.iter().enumerate() {
            let mut per_slot = vec![None; lists.len()];
            for &i in &found.list_order[e] {
                let slot = &self.lists[i];
                let Some(list) = &lists[i] else {
                    continue;
                };
                let mut views = Vec::new();
                for (r, row) in list.rows().enumerate() {
                    let malformed = |err| {
                        numbered(
                            ParseError::new(ParseErrorKind::MalformedFeature(err))
                                .key(&slot.key)
                                .row(r),
                            e,
                            single,
                        )
                    };
                    let (bytes, offset) = row.map_err(malformed)?;
                    let view = FeatureView::from_feature_bytes(bytes, offset).map_err(malformed)?;
                    if let Some(kind) = view.kind() {
                        if DType::of_kind(kind) != slot.dtype {
                            return Err(numbered(
                                ParseError::new(ParseErrorKind::RowTypeMismatch { expected: slot.dtype })
                                    .key(&slot.key)
                                    .row(r),
                                e,
                                single,
                            ));
                        }
                    }
                    views.push(view);
                }
                per_slot[i] = Some(views);
            }
            rows.push(per_slot);
        }
        Ok(rows)
    }

    /// The feature lists' columns in TensorFlow's order — dense, then sparse, then ragged (with
    /// the lists read only as partitions) — each checked in turn, so the first error is its.
    fn list_columns(
        &self,
        rows: &[Vec<Option<Rows<'_>>>],
        single: bool,
    ) -> Result<Vec<Option<ListColumn>>, ParseError> {
        let mut columns: Vec<Option<ListColumn>> = vec![None; self.lists.len()];
        for in_phase in [ListRole::is_dense, ListRole::is_sparse, ListRole::is_ragged] {
            for (i, slot) in self.lists.iter().enumerate() {
                if in_phase(&slot.role) {
                    columns[i] = Some(self.list_column(i, rows, single)?);
                }
            }
        }
        Ok(columns)
    }

    /// The context VarLen and Ragged features, by `parse_example`'s rules (the single-example
    /// op's for a single SequenceExample).
    fn context_parse<R: AsRef<[u8]>>(
        &self,
        parser: &ExampleParser,
        records: &[R],
        single: bool,
    ) -> Result<TensorMap, ParseError> {
        match records.first() {
            Some(record) if single => parser.parse_single(record.as_ref()),
            _ => parser.parse_batch(records),
        }
    }

    /// The feature-list tensors (and lengths) from each list's values (counted per row) and
    /// rows per example.
    fn assemble_lists(
        &self,
        mut columns: Vec<Option<ListColumn>>,
        batch: usize,
        single: bool,
        layout: StepLayout,
        out: &mut ParsedSequences,
    ) -> Result<(), ParseError> {
        for (i, slot) in self.lists.iter().enumerate() {
            let name = slot.output.clone().unwrap_or_else(|| slot.key.clone());
            match &slot.role {
                ListRole::Dense { shape, .. } => {
                    let Some((column, row_counts)) = columns[i].take() else {
                        continue;
                    };
                    let lengths: Vec<i64> = row_counts.iter().map(|&r| r as i64).collect();
                    let lengths = DenseTensor::from_values(Values::Int64(lengths), &[batch])
                        .map_err(|err| ParseError::new(ParseErrorKind::Shape(err)))?;
                    out.lengths.insert(name.clone(), Tensor::Dense(lengths));
                    if layout == StepLayout::Packed {
                        // Every row holds exactly the shape's values (checked before), so the
                        // column is the steps one after another.
                        let mut full = vec![row_counts.iter().sum::<usize>()];
                        full.extend_from_slice(shape);
                        let tensor = DenseTensor::from_values(column.values, &full)
                            .map_err(|err| ParseError::new(ParseErrorKind::Shape(err)))?;
                        out.feature_lists.insert(name, Tensor::Dense(tensor));
                        continue;
                    }
                    // Per example, all rows' values together, padded to the longest.
                    let per_example = Column {
                        counts: per_example_totals(&column.counts, &row_counts),
                        values: column.values,
                    };
                    let tensor = dense_padded(per_example, shape, &Values::zero(slot.dtype))?;
                    out.feature_lists.insert(name, Tensor::Dense(tensor));
                }
                ListRole::VarLen => {
                    let Some((column, row_counts)) = columns[i].take() else {
                        continue;
                    };
                    let tensor = match layout {
                        StepLayout::Padded => Tensor::Sparse(sequence_varlen(column, &row_counts)?),
                        // Splits, instead of an index matrix of three numbers a value.
                        StepLayout::Packed => {
                            let mut steps = RaggedBuild::from_column(column);
                            steps.push_outer(splits_of(&row_counts), None);
                            Tensor::Ragged(steps.finish(SplitsDType::Int64)?)
                        }
                    };
                    out.feature_lists.insert(name, tensor);
                }
                _ => {}
            }
        }
        // TensorFlow builds the ragged tensors in the order of their names (its
        // `_construct_tensors_for_composite_features` walks the sorted keys), so that is the
        // order their errors come in.
        let mut ragged_order: Vec<(usize, &str)> = self
            .lists
            .iter()
            .enumerate()
            .filter_map(|(i, slot)| match (&slot.role, &slot.output) {
                (ListRole::Ragged { .. }, Some(name)) => Some((i, name.as_str())),
                _ => None,
            })
            .collect();
        ragged_order.sort_by(|a, b| a.1.cmp(b.1));
        for (i, slot) in ragged_order.into_iter().map(|(i, _)| (i, &self.lists[i])) {
            let (
                ListRole::Ragged {
                    partitions,
                    splits_dtype,
                    validate,
                },
                Some(name),
            ) = (&slot.role, &slot.output)
            else {
                continue;
            };
            let Some((column, row_counts)) = columns[i].clone() else {
                continue;
            };
            // Partitions apply below the rows: treat the rows as the outer dimension, then
            // put the examples back on top (TensorFlow's `outer_splits`).
            let ctx = ragged::Ctx {
                feature: name,
                validate: *validate,
                dtype: *splits_dtype,
            };
            let mut rt = RaggedBuild::from_column(column);
            for (partition, p_slot) in partitions.iter().rev() {
                let p_list = p_slot.and_then(|s| columns[s].as_ref());
                if *validate && !single {
                    if let Some((_, p_rows)) = p_list {
                        if *p_rows != row_counts {
                            return Err(ParseError::new(ParseErrorKind::Ragged(Box::new(
                                RaggedPartitionError::ListsNotAligned {
                                    feature: name.clone(),
                                    values: slot.key.to_string(),
                                    partition: partition.key().unwrap_or_default().to_string(),
                                },
                            )))
                            .key(name));
                        }
                    }
                }
                ragged::apply_batched(&mut rt, partition, p_list.map(|(c, _)| c), &ctx)?;
            }
            let outer = splits_of(&row_counts);
            if *validate && !single && outer.last().copied() != Some(rt.outer().len() as i64 - 1) {
                return Err(
                    ParseError::new(ParseErrorKind::Ragged(Box::new(RaggedPartitionError::RowsMismatch {
                        rows: outer.last().copied().unwrap_or(0),
                        made: rt.outer().len() as i64 - 1,
                    })))
                    .key(name),
                );
            }
            rt.push_outer(outer, None);
            out.feature_lists
                .insert(name.clone(), Tensor::Ragged(rt.finish(*splits_dtype)?));
        }
        Ok(())
    }

    /// The hot path (see [`fast`](super::fast)): feature lists in the canonical encoding,
    /// decoded straight into columns. `None` when anything needs the careful path (context
    /// FixedLen features, a non-canonical encoding, any problem), which then runs instead.
    fn parse_fast<R: AsRef<[u8]>>(&self, records: &[R], single: bool, layout: StepLayout) -> Option<ParsedSequences> {
        let (columns, in_place) = self.fast_columns(records, true)?;
        let mut out = ParsedSequences::default();
        if let Some(parser) = &self.context_other {
            out.context = self.context_parse(parser, records, single).ok()?;
        }
        out.context.extend(self.fast_context_fixed(records)?);
        let mut columns: Vec<Option<ListColumn>> = columns.into_iter().map(Some).collect();
        for (i, (slot, lists)) in self.lists.iter().zip(&in_place).enumerate() {
            let (Some(lists), ListRole::Dense { shape, stride, .. }) = (lists, &slot.role) else {
                continue;
            };
            columns[i] = None;
            let (tensor, lengths) = dense_in_place(slot.dtype, shape, *stride, lists, layout)?;
            let name = slot.output.clone().unwrap_or_else(|| slot.key.clone());
            out.lengths.insert(name.clone(), Tensor::Dense(lengths));
            out.feature_lists.insert(name, Tensor::Dense(tensor));
        }
        self.assemble_lists(columns, records.len(), single, layout, &mut out)
            .ok()?;
        Some(out)
    }

    /// The context FixedLen features of `records` in the canonical encoding, when each example
    /// has exactly its shape's values or lacks it and there is a default — the cases where
    /// [`context_dense`](Self::context_dense) succeeds; `None` for anything else, which the
    /// careful path then reports.
    fn fast_context_fixed<R: AsRef<[u8]>>(&self, records: &[R]) -> Option<Vec<(String, Tensor)>> {
        if self.context_fixed.is_empty() {
            return Some(Vec::new());
        }
        // With no example, only a default sets the largest count the op checks.
        if records.is_empty() {
            return None;
        }
        let mut columns: Vec<Values> = self
            .context_fixed
            .iter()
            .map(|(_, spec)| Column::new(spec.dtype).values)
            .collect();
        let mut found: Vec<Option<&[u8]>> = vec![None; self.context_fixed.len()];
        for record in records {
            found.iter_mut().for_each(|f| *f = None);
            let walked = fast::walk_entries(record.as_ref(), 0x0a, |key, value| {
                if let Some(i) = self.context_fixed.iter().position(|(name, _)| name.as_bytes() == key) {
                    found[i] = Some(value);
                }
            });
            if !walked {
                return None;
            }
            for (((_, spec), values), feature) in self.context_fixed.iter().zip(&mut columns).zip(&found) {
                let stride: usize = spec.shape.iter().product();
                let taken = match (feature, &spec.default_value) {
                    (Some(feature), _) => match fast::take_feature(feature, values) {
                        fast::Taken::Values(n) => n == stride,
                        fast::Taken::KindUnset => stride == 0,
                        fast::Taken::GiveUp => false,
                    },
                    (None, Some(default)) if !default.is_empty() => values.extend_from(default),
                    (None, _) => false,
                };
                if !taken {
                    return None;
                }
            }
        }
        self.context_fixed
            .iter()
            .zip(columns)
            .map(|((name, spec), values)| {
                let tensor = dense_fixed(values, records.len(), &spec.shape).ok()?;
                Some((name.clone(), Tensor::Dense(tensor)))
            })
            .collect()
    }

    /// The feature lists of `records` in the canonical encoding, as columns; `None` when
    /// anything needs the careful path. With `in_place`, numeric dense lists are only found
    /// and their rows counted (their columns stay empty), for [`dense_in_place`] to decode
    /// straight into the padded tensor.
    fn fast_columns<'a, R: AsRef<[u8]>>(
        &self,
        records: &'a [R],
        in_place: bool,
    ) -> Option<(Vec<ListColumn>, Vec<Option<InPlaceList<'a>>>)> {
        if !self.fast_ok {
            return None;
        }
        let batch = records.len();
        let bytes: usize = records.iter().map(|r| r.as_ref().len()).sum();
        let mut columns: Vec<ListColumn> = self
            .lists
            .iter()
            .zip(self.column_sizes.iter())
            .map(|(s, size)| {
                let mut column = (Column::new(s.dtype), Vec::with_capacity(batch));
                size.reserve(batch, bytes, &mut column.0);
                column
            })
            .collect();
        let mut placed: Vec<Option<InPlaceList<'a>>> = self
            .lists
            .iter()
            .map(|s| {
                let dense = matches!(s.role, ListRole::Dense { stride, .. } if stride > 0);
                (in_place && dense).then(|| InPlaceList {
                    lists: Vec::with_capacity(batch),
                    rows: Vec::with_capacity(batch),
                })
            })
            .collect();
        let mut found: Vec<Option<&[u8]>> = vec![None; self.lists.len()];
        // With no context feature asked for, nothing else reads the context; TensorFlow still
        // refuses a record whose context map is malformed, so its entries are walked here (a
        // form the walk does not take goes to the careful path, which reports it or reads it).
        let context_unread = self.context_fixed.is_empty() && self.context_other.is_none();
        for record in records {
            found.iter_mut().for_each(|f| *f = None);
            if context_unread && !fast::walk_entries(record.as_ref(), 0x0a, |_, _| {}) {
                return None;
            }
            let walked = fast::walk_entries(record.as_ref(), 0x12, |key, value| {
                if let Some(&slot) = self.list_lookup.get(key) {
                    found[slot] = Some(value);
                }
            });
            if !walked {
                return None;
            }
            for (((slot, (column, row_counts)), list), placed) in self
                .lists
                .iter()
                .zip(columns.iter_mut())
                .zip(found.iter())
                .zip(placed.iter_mut())
            {
                let Some(list) = list else {
                    if let ListRole::Dense {
                        allow_missing: false, ..
                    } = slot.role
                    {
                        return None;
                    }
                    match placed {
                        Some(p) => p.push(None, 0),
                        None => row_counts.push(0),
                    }
                    continue;
                };
                if let Some(p) = placed {
                    // Strings count their rows as they are decoded (see `strings_in_place`).
                    let rows = if slot.dtype == DType::String {
                        0
                    } else {
                        fast::count_rows(list)?
                    };
                    p.push(Some(list), rows);
                    continue;
                }
                let stride = match slot.role {
                    ListRole::Dense { stride, .. } => Some(stride),
                    _ => None,
                };
                row_counts.push(fast::take_rows(list, &mut column.values, stride, &mut column.counts)?);
            }
        }
        for (size, column) in self.column_sizes.iter().zip(&columns) {
            size.remember(batch, &column.0);
        }
        // A dense list's longest must fill whole rows; otherwise the careful path reports it.
        for (slot, (column, row_counts)) in self.lists.iter().zip(&columns) {
            if let ListRole::Dense { stride, .. } = slot.role {
                let most = per_example_totals(&column.counts, row_counts)
                    .into_iter()
                    .max()
                    .unwrap_or(0);
                if stride > 0 && !most.is_multiple_of(stride) {
                    return None;
                }
            }
        }
        Some((columns, placed))
    }

    /// A context FixedLenFeature, with the sequence op's rules (see TF_SEMANTICS §3).
    fn context_dense(
        &self,
        name: &str,
        spec: &FixedLenFeature,
        i: usize,
        views: &[Vec<Option<FeatureView<'_>>>],
        single: bool,
    ) -> Result<DenseTensor, ParseError> {
        let stride: usize = spec.shape.iter().product();
        let at = |e: ParseError, example: usize| numbered(e, example, single);
        let mut counts = Vec::with_capacity(views.len());
        for (e, v) in views.iter().enumerate() {
            counts.push(match &v[i] {
                Some(view) => Some(
                    view.count()
                        .map_err(|err| at(ParseError::new(ParseErrorKind::MalformedFeature(err)).key(name), e))?,
                ),
                None => None,
            });
        }
        let default_count = spec.default_value.as_ref().map_or(0, Values::len);
        let most = counts
            .iter()
            .flatten()
            .copied()
            .chain(std::iter::once(default_count))
            .max()
            .unwrap_or(0);
        if most != stride {
            return Err(ParseError::new(ParseErrorKind::ContextInconsistentMax {
                key: name.to_owned(),
                expected: stride,
                found: most,
            })
            .key(name));
        }
        let mut column = Column::new(spec.dtype);
        for (e, count) in counts.iter().enumerate() {
            match (count, &views[e][i], &spec.default_value) {
                // An empty Feature adds no elements, which is right only for a zero-element
                // shape (TensorFlow skips empty protos).
                (Some(n), Some(view), _) if *n == stride && (view.kind().is_some() || stride == 0) => {
                    column
                        .extend_from(view)
                        .map_err(|err| at(ParseError::new(ParseErrorKind::MalformedFeature(err)).key(name), e))?;
                }
                (Some(_), _, _) => {
                    return Err(at(
                        ParseError::new(ParseErrorKind::ContextUnexpectedCount {
                            example: "<unknown>".into(),
                        })
                        .key(name),
                        e,
                    ))
                }
                // A default of no elements is no default (TensorFlow's `NumElements() == 0`).
                (None, _, Some(default)) if !default.is_empty() => {
                    column.values.extend_from(default);
                }
                (None, _, _) => {
                    return Err(at(
                        ParseError::new(ParseErrorKind::Required {
                            key: name.to_owned(),
                            dtype: spec.dtype,
                        })
                        .key(name),
                        e,
                    ))
                }
            }
        }
        dense_fixed(column.values, views.len(), &spec.shape)
    }

    /// All values of a feature list over the batch: the column counts values per row; the
    /// second vector counts rows per example. Checks a dense list's presence and row sizes.
    fn list_column(&self, i: usize, rows: &[Vec<Option<Rows<'_>>>], single: bool) -> Result<ListColumn, ParseError> {
        let slot = &self.lists[i];
        let at = |e: ParseError, example: usize| numbered(e, example, single);
        let mut column = Column::new(slot.dtype);
        let mut row_counts = Vec::with_capacity(rows.len());
        // A required list missing from an example is reported in the per-example pass below,
        // with the rows' counts, so that the first example with either problem is named.
        let mut missing = Vec::new();
        for (e, per_slot) in rows.iter().enumerate() {
            let Some(list) = &per_slot[i] else {
                if let ListRole::Dense {
                    allow_missing: false, ..
                } = slot.role
                {
                    missing.push(e);
                }
                row_counts.push(0);
                continue;
            };
            for (r, view) in list.iter().enumerate() {
                let n = column.extend_from(view).map_err(|err| {
                    at(
                        ParseError::new(ParseErrorKind::MalformedFeature(err))
                            .key(&slot.key)
                            .row(r),
                        e,
                    )
                })?;
                column.counts.push(n);
            }
            row_counts.push(list.len());
        }
        if let ListRole::Dense { shape, stride, .. } = &slot.role {
            let totals = per_example_totals(&column.counts, &row_counts);
            let most = totals.iter().max().copied().unwrap_or(0);
            if *stride > 0 && most % stride != 0 {
                let mut dims = vec![None];
                dims.extend(shape.iter().map(|&d| Some(d)));
                return Err(ParseError::new(ParseErrorKind::ListNotMultiple {
                    key: slot.key.clone(),
                    total: most,
                    shape: shape_string(&dims),
                })
                .key(&slot.key));
            }
            let mut at_row = 0;
            for (e, &nrows) in row_counts.iter().enumerate() {
                if missing.first() == Some(&e) {
                    return Err(at(
                        ParseError::new(ParseErrorKind::ListRequired { key: slot.key.clone() }).key(&slot.key),
                        e,
                    ));
                }
                for r in 0..nrows {
                    let n = column.counts[at_row + r];
                    if n != *stride {
                        return Err(at(
                            ParseError::new(ParseErrorKind::RowWrongCount {
                                count: n,
                                shape: known_shape_string(shape),
                            })
                            .key(&slot.key)
                            .row(r),
                            e,
                        ));
                    }
                }
                at_row += nrows;
            }
        }
        Ok((column, row_counts))
    }
}

/// Refuses a context FixedLenFeature whose default has another number of values than its
/// shape holds.
fn check_context_default(name: &str, f: &FixedLenFeature) -> Result<(), SpecError> {
    let stride = checked_elements(&f.shape, name)?;
    if f.default_value.as_ref().is_some_and(|d| d.len() != stride) {
        return Err(SpecError::ContextDefaultShape {
            feature: name.to_owned(),
            count: f.default_value.as_ref().map_or(0, Values::len),
            shape: known_shape_string(&f.shape),
        });
    }
    Ok(())
}

/// Sums per-row counts into per-example totals.
fn per_example_totals(row_values: &[usize], rows: &[usize]) -> Vec<usize> {
    let mut at = 0;
    rows.iter()
        .map(|&n| {
            let total = row_values[at..at + n].iter().sum();
            at += n;
            total
        })
        .collect()
}

/// A numeric dense feature list of each example, found by the fast walk and not yet decoded.
struct InPlaceList<'a> {
    /// The serialized FeatureList of each example, if it has one.
    lists: Vec<Option<&'a [u8]>>,
    /// Its rows (numbers only: string lists count theirs as they are decoded).
    rows: Vec<usize>,
}

impl<'a> InPlaceList<'a> {
    fn push(&mut self, list: Option<&'a [u8]>, rows: usize) {
        self.lists.push(list);
        self.rows.push(rows);
    }
}

/// A FixedLenSequenceFeature's tensor (`[batch, longest, *shape]` padded, or `[steps, *shape]`
/// packed) and its lengths, each row decoded straight into its place (no column, no padding
/// copy); `None` when a row is not `stride` values in the canonical encoding, for the careful
/// path to report.
fn dense_in_place(
    dtype: DType,
    shape: &[usize],
    stride: usize,
    found: &InPlaceList<'_>,
    layout: StepLayout,
) -> Option<(DenseTensor, DenseTensor)> {
    if dtype == DType::String {
        return strings_in_place(shape, stride, found, layout);
    }
    // Every value takes at least a byte: a list too short to fill its rows is refused before
    // the padded tensor is allocated (a crafted row count must not size it).
    for (list, &rows) in found.lists.iter().zip(&found.rows) {
        if list.is_some_and(|l| l.len() < rows.saturating_mul(stride)) {
            return None;
        }
    }
    let batch = found.rows.len();
    let longest = found.rows.iter().copied().max().unwrap_or(0);
    let width = longest.checked_mul(stride)?;
    let steps = found.rows.iter().try_fold(0usize, |sum, &r| sum.checked_add(r))?;
    let total = match layout {
        StepLayout::Padded => batch.checked_mul(width)?,
        StepLayout::Packed => steps.checked_mul(stride)?,
    };
    // Each example's rows in order, then (padded) zeros to the longest: written once each,
    // where zeros written first were written over by most of the values.
    let mut values = match dtype {
        DType::Int64 => Values::Int64(Vec::with_capacity(total)),
        DType::Float32 => Values::Float32(Vec::with_capacity(total)),
        DType::String => return None,
    };
    for (list, &rows) in found.lists.iter().zip(&found.rows) {
        if let Some(list) = list {
            if fast::append_rows(list, &mut values, stride)? != rows {
                return None;
            }
        }
        if layout == StepLayout::Padded {
            values.extend_pad(&Values::zero(dtype), (longest - rows) * stride);
        }
    }
    let mut full = match layout {
        StepLayout::Padded => vec![batch, longest],
        StepLayout::Packed => vec![steps],
    };
    full.extend_from_slice(shape);
    let tensor = DenseTensor::from_values(values, &full).ok()?;
    let lengths: Vec<i64> = found.rows.iter().map(|&r| r as i64).collect();
    let lengths = DenseTensor::from_values(Values::Int64(lengths), &[batch]).ok()?;
    Some((tensor, lengths))
}

/// As [`dense_in_place`], for strings: each list decoded in one pass, its bytes copied once
/// (a column and then a padded copy of it cost two copies, and a call each), its rows counted
/// as it goes. The padding is empty strings, so padding only spaces out the offsets.
fn strings_in_place(
    shape: &[usize],
    stride: usize,
    found: &InPlaceList<'_>,
    layout: StepLayout,
) -> Option<(DenseTensor, DenseTensor)> {
    // A list's values are fewer bytes than the list; the 16 spare bytes serve the last copy.
    // Each value takes several bytes of the list, so a tenth of them is a fair first guess
    // at the count (it only sizes a first allocation).
    let bytes = found.lists.iter().flatten().map(|l| l.len()).sum::<usize>();
    let mut values = BytesArray::with_capacity(bytes / 10, bytes + 16);
    let mut rows = Vec::with_capacity(found.lists.len());
    for list in &found.lists {
        rows.push(match list {
            Some(list) => fast::take_string_rows(list, stride, &mut values)?,
            None => 0,
        });
    }
    let batch = rows.len();
    let mut full = match layout {
        StepLayout::Padded => {
            let longest = rows.iter().copied().max().unwrap_or(0);
            let counts: Vec<usize> = rows.iter().map(|&r| r * stride).collect();
            values = values.spaced_out(&counts, longest.checked_mul(stride)?)?;
            vec![batch, longest]
        }
        StepLayout::Packed => vec![rows.iter().sum()],
    };
    full.extend_from_slice(shape);
    let tensor = DenseTensor::from_values(Values::String(values), &full).ok()?;
    let lengths: Vec<i64> = rows.iter().map(|&r| r as i64).collect();
    let lengths = DenseTensor::from_values(Values::Int64(lengths), &[batch]).ok()?;
    Some((tensor, lengths))
}

/// A VarLenFeature over feature lists: indices `(example, row, position)`.
fn sequence_varlen(column: Column, row_counts: &[usize]) -> Result<SparseTensor, ParseError> {
    let total = column.values.len();
    // A row of three per value, flattened at the end without a copy, written into reserved
    // room a feature-list row at a time (see `push_positions`).
    let mut rows: Vec<[i64; 3]> = Vec::with_capacity(total + fast::SHORT_ROW);
    let mut at = 0;
    let mut longest_row = 0;
    let written = fast::append_in_spare(&mut rows, |spare| {
        for (e, &nrows) in row_counts.iter().enumerate() {
            for (r, &n) in column.counts.get(at..at + nrows)?.iter().enumerate() {
                longest_row = longest_row.max(n);
                spare.push_positions(n, |p| [e as i64, r as i64, p])?;
            }
            at += nrows;
        }
        Some(())
    });
    if written.is_none() {
        return Err(indices_not_filled(total, 3));
    }
    let indices = rows.into_flattened();
    let most_rows = row_counts.iter().max().copied().unwrap_or(0);
    Ok(SparseTensor {
        indices: index_matrix(total, 3, indices)?,
        values: DenseTensor::from_values(column.values, &[total])
            .map_err(|e| ParseError::new(ParseErrorKind::Shape(e)))?,
        dense_shape: vec![row_counts.len() as i64, most_rows as i64, longest_row as i64],
    })
}

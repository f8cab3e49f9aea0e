//! `tf.io.parse_example` / `parse_single_example`: serialized Examples into tensors.
//!
//! The hot path, measured by `cargo bench -p tfrec-cli --bench parse`: the specs are compiled once
//! into a hash table of the requested keys; records are taken a chunk at a time, each record's
//! entries walked to find its features (through the writer's key order, learned as it goes, and
//! the hash table when that misses), so features nobody asked for are skipped without decoding;
//! then each requested key's column takes its values from every record of the chunk, appended
//! straight into one growing column per key (packed floats copied in one pass); tensors are
//! assembled from the columns at the end. Large batches are split into minibatches parsed in
//! parallel (rayon) whose columns are joined in order, so the result is identical to the
//! sequential path, errors included (the lowest failing example wins).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::assemble::{dense_fixed, dense_padded, sparse_feature, varlen_ragged, varlen_sparse, RaggedBuild};
use super::columns::{most_values, Column, ColumnSize};
use super::error::{ParseError, ParseErrorKind};
use super::fast;
use super::ragged;
use super::spec::{
    checked_elements, known_shape_string, shape_string, FeatureSpec, FeatureSpecs, Partition, SpecError,
};
use super::tensor::{DenseTensor, RaggedTensor, SparseTensor, Tensor};
use super::values::{BytesArray, DType, SplitsDType, Values};
use crate::example::{ExampleView, RawFeature};

/// Reusable buffers of the careful path.
struct Careful<'r> {
    found: Vec<Option<RawFeature<'r>>>,
    order: Vec<usize>,
    done: Vec<bool>,
}

/// Parsed tensors by feature name.
pub type TensorMap = BTreeMap<String, Tensor>;

/// How a key is parsed: the three key sets of TensorFlow's parse op.
#[derive(Debug, Clone)]
pub(crate) enum Role {
    /// FixedLenFeature: exactly `stride` values, or the default. (Not boxed, unlike the
    /// rarer parts of [`Output`]: the parse's loops read it, and boxed it cost the narrow
    /// shapes' parse instructions.)
    Fixed {
        shape: Box<[usize]>,
        stride: usize,
        /// Not boxed, though read only for a record that lacks the feature: boxed, it made
        /// the parse of records that lack features slower (the performance guide says how much).
        default: Option<Values>,
    },
    /// FixedLenSequenceFeature in parse_example: a multiple of `stride` values, padded.
    Padded { shape: Box<[usize]>, stride: usize },
    /// VarLenFeature and SparseFeature parts.
    Sparse,
    /// RaggedFeature values and partitions.
    Ragged,
}

#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub key: Box<str>,
    pub dtype: DType,
    pub role: Role,
}

/// How an output tensor is assembled from slots. The variants that hold more than a slot are
/// boxed: a parser holds an output for every feature, and most are `Fixed` or `VarLen`. A
/// padded output holds its slot and its padding value.
#[derive(Debug, Clone)]
enum Output {
    Fixed(usize),
    Padded(Box<(usize, Values)>),
    VarLen(usize),
    Sparse(Box<SparseOutput>),
    Ragged(Box<RaggedOutput>),
}

impl Output {
    /// The one slot an output of one feature reads (FixedLen, VarLen); `None` for those that
    /// read several (SparseFeature, RaggedFeature).
    fn own_slot(&self) -> Option<usize> {
        match self {
            Output::Fixed(slot) | Output::VarLen(slot) => Some(*slot),
            Output::Padded(padded) => Some(padded.0),
            Output::Sparse(_) | Output::Ragged(_) => None,
        }
    }
}

/// A `SparseFeature`'s output: its index and value slots.
#[derive(Debug, Clone)]
struct SparseOutput {
    index_slots: Vec<usize>,
    value_slot: usize,
    size: Vec<i64>,
    already_sorted: bool,
    size_form_error: Option<&'static str>,
}

/// A `RaggedFeature`'s output: its value slot and partitions.
#[derive(Debug, Clone)]
struct RaggedOutput {
    value_slot: usize,
    partitions: Vec<(Partition, Option<usize>)>,
    splits_dtype: SplitsDType,
    validate: bool,
}

/// Compiled `parse_example` specs, reusable across batches.
///
/// ```
/// use tfrec::example::Example;
/// use tfrec::parse::{specs_from_json_str, ExampleParser};
///
/// let specs = specs_from_json_str(
///     r#"{
///         "age": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
///         "tags": {"type": "VarLenFeature", "dtype": "string"}
///     }"#,
/// )?;
/// let parser = ExampleParser::new(&specs)?;
/// let records: Vec<Vec<u8>> = (0..3)
///     .map(|i| Example::builder().int64("age", i).bytes("tags", vec!["a"; i as usize]).build().unwrap().encode())
///     .collect();
/// let tensors = parser.parse_batch(&records)?;
/// assert_eq!(tensors["age"].as_dense().unwrap().shape(), &[3]);
/// assert_eq!(tensors["tags"].as_sparse().unwrap().dense_shape, vec![3, 2]);
/// # Ok::<(), tfrec::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ExampleParser {
    slots: Vec<Slot>,
    /// Feature key → its slot; shared with the [`KeysSeen`] of each batch, which answers by it.
    lookup: Arc<FxHashMap<Box<[u8]>, usize>>,
    /// Each output, in the specs' order.
    outputs: Vec<Output>,
    /// The names of the outputs not named by their slot's key (a `SparseFeature`'s or
    /// `RaggedFeature`'s), by output index in increasing order: a schema of a million
    /// features would otherwise hold every name once more, or a name slot per output (see
    /// [`ExampleParser::output_name`]).
    output_names: Vec<(usize, Box<str>)>,
    /// Per slot, the size its column reached in the last batch (see [`ColumnSize`]).
    column_sizes: Arc<[ColumnSize]>,
    /// The requested keys' slots in the order the last batch's records listed them, which the
    /// next batch starts from (see [`fast::KeyOrder`]): a batch of one record (`parse_single`)
    /// has no record before it to learn from.
    key_order: Arc<std::sync::Mutex<Vec<usize>>>,
    /// VarLen features come out as ragged tensors (see [`ExampleParser::varlen_as_row_splits`]).
    varlen_row_splits: bool,
    /// Records may take the fast path (see [`ExampleParser::without_fast_path`]).
    fast: bool,
}

/// Adds `key` to a key set, or checks it agrees with the dtype it already has there.
/// The sets borrow their keys from the specs: a schema of a million features would otherwise
/// copy every name into each set while it is checked.
fn add_key<'a>(set: &mut BTreeMap<&'a str, DType>, key: &'a str, dtype: DType) -> Result<(), SpecError> {
    match set.get(key) {
        Some(&existing) if existing != dtype => Err(SpecError::ConflictingType {
            key: key.to_owned(),
            existing,
            dtype,
        }),
        _ => {
            set.insert(key, dtype);
            Ok(())
        }
    }
}

fn check_disjoint(a: &BTreeMap<&str, DType>, b: &BTreeMap<&str, DType>, sets: &'static str) -> Result<(), SpecError> {
    let common: BTreeSet<&str> = a.keys().copied().filter(|k| b.contains_key(k)).collect();
    if common.is_empty() {
        Ok(())
    } else {
        Err(SpecError::KeySetsIntersect {
            sets,
            keys: common.into_iter().map(str::to_owned).collect(),
        })
    }
}

/// The checks of TensorFlow's `_ParseOpParams` over one spec dict (keys in sorted order):
/// SparseFeature keys present, sizes not negative; one dtype per key within each key set (and
/// one partition type per ragged key, value keys included); the dense, sparse and ragged key
/// sets disjoint. `example_op` adds what only `parse_example` checks.
pub(crate) fn check_specs<'a>(specs: &'a FeatureSpecs, example_op: bool) -> Result<(), SpecError> {
    let mut dense: BTreeMap<&str, DType> = BTreeMap::new();
    let mut sparse: BTreeMap<&str, DType> = BTreeMap::new();
    let mut ragged_keys: BTreeMap<&str, DType> = BTreeMap::new();
    let mut splits_types: BTreeMap<&str, SplitsDType> = BTreeMap::new();
    let mut add_ragged = |ragged_keys: &mut BTreeMap<&'a str, DType>, key: &'a str, dtype: DType, t: SplitsDType| {
        add_key(ragged_keys, key, dtype)?;
        match splits_types.get(key) {
            Some(&existing) if existing != t => Err(SpecError::ConflictingPartitionType {
                key: key.to_owned(),
                existing,
                dtype: t,
            }),
            _ => {
                splits_types.insert(key, t);
                Ok(())
            }
        }
    };
    for (name, spec) in specs {
        match spec {
            FeatureSpec::FixedLen(f) => {
                checked_elements(&f.shape, name)?;
                add_key(&mut dense, name, f.dtype)?;
            }
            FeatureSpec::FixedLenSequence(f) => {
                checked_elements(&f.shape, name)?;
                add_key(&mut dense, name, f.dtype)?;
            }
            FeatureSpec::VarLen(f) => add_key(&mut sparse, name, f.dtype)?,
            FeatureSpec::Sparse(f) => {
                // A plain "" reads as no keys; [""] is a real key (Python's `not [""]` is false).
                if f.index_keys.is_empty() {
                    return Err(SpecError::MissingIndexKey { feature: name.clone() });
                }
                if f.value_key.is_empty() {
                    return Err(SpecError::MissingValueKey { feature: name.clone() });
                }
                if example_op && f.size.len() != f.index_keys.len() {
                    return Err(SpecError::SizeCount {
                        feature: name.clone(),
                        index_keys: f.index_keys.len(),
                        sizes: f.size.len(),
                    });
                }
                let mut index_keys: Vec<&str> = f.index_keys.iter().map(String::as_str).collect();
                index_keys.sort();
                for key in index_keys {
                    add_key(&mut sparse, key, DType::Int64)?;
                }
                add_key(&mut sparse, &f.value_key, f.dtype)?;
            }
            FeatureSpec::Ragged(f) => {
                if f.value_key.as_deref() == Some("") {
                    return Err(SpecError::EmptyValueKey { feature: name.clone() });
                }
                let value_key = f.value_key.as_deref().unwrap_or(name);
                add_ragged(&mut ragged_keys, value_key, f.dtype, f.row_splits_dtype)?;
                for p in &f.partitions {
                    match p {
                        Partition::UniformRowLength(n) if *n < 0 => return Err(SpecError::NegativeUniformRowLength),
                        Partition::UniformRowLength(_) => {}
                        keyed => {
                            let key = keyed.key().unwrap_or_default();
                            add_ragged(&mut ragged_keys, key, DType::Int64, f.row_splits_dtype)?;
                        }
                    }
                }
            }
        }
    }
    check_disjoint(&dense, &sparse, "Dense and sparse")?;
    check_disjoint(&dense, &ragged_keys, "Dense and ragged")?;
    check_disjoint(&ragged_keys, &sparse, "Ragged and sparse")?;
    // A deliberate deviation: TensorFlow accepts a negative size and returns a dense_shape no
    // later op accepts. Refused last, so that any spec TensorFlow refuses is refused as it is.
    for (name, spec) in specs {
        if let FeatureSpec::Sparse(f) = spec {
            if let Some(&negative) = f.size.iter().find(|&&s| s < 0) {
                return Err(SpecError::NegativeSize {
                    feature: name.clone(),
                    size: negative,
                });
            }
        }
    }
    Ok(())
}

/// Which of a spec's feature keys each record of a batch holds, as the parse found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeysSeen {
    /// Each key's place among a record's flags: the parser's own table, shared rather than
    /// copied (a schema of a million features would hold every key once more per batch).
    keys: Arc<FxHashMap<Box<[u8]>, usize>>,
    /// Record-major: `keys.len()` flags per record.
    seen: Vec<bool>,
}

/// A batch's columns as the parse left them, before they are made tensors.
#[cfg(feature = "arrow")]
pub(crate) struct ParsedBatch {
    columns: Vec<Column>,
    rows: usize,
}

impl KeysSeen {
    /// For each record, whether it holds `key`; `None` for a key the spec does not read.
    pub fn rows(&self, key: &str) -> Option<Vec<bool>> {
        let at = *self.keys.get(key.as_bytes())?;
        Some(self.seen.iter().skip(at).step_by(self.keys.len()).copied().collect())
    }
}

impl ExampleParser {
    /// Checks and compiles `specs` as `parse_example` does.
    pub fn new(specs: &FeatureSpecs) -> Result<ExampleParser, SpecError> {
        ExampleParser::validate(specs)?;
        Ok(ExampleParser::compile(specs))
    }

    /// TensorFlow's checks of `parse_example` specs, in its order.
    fn validate(specs: &FeatureSpecs) -> Result<(), SpecError> {
        if specs.is_empty() {
            return Err(SpecError::NoFeatures(
                "Argument `features` cannot be None or falsy. Got {}",
            ));
        }
        check_specs(specs, true)?;
        for (name, spec) in specs {
            match spec {
                FeatureSpec::FixedLen(f) => {
                    let stride = checked_elements(&f.shape, name)?;
                    if let Some(d) = &f.default_value {
                        if d.len() != stride {
                            return Err(SpecError::DefaultShape {
                                feature: name.clone(),
                                count: d.len(),
                                shape: known_shape_string(&f.shape),
                                expected: stride,
                            });
                        }
                    }
                }
                FeatureSpec::FixedLenSequence(f) => {
                    if !f.allow_missing {
                        return Err(SpecError::AllowMissingRequired);
                    }
                    if f.default_value.as_ref().is_some_and(|d| d.len() != 1) {
                        let mut dims = vec![None];
                        dims.extend(f.shape.iter().map(|&d| Some(d)));
                        return Err(SpecError::PaddingNotSingle {
                            feature: name.clone(),
                            shape: shape_string(&dims),
                        });
                    }
                    checked_elements(&f.shape, name)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The slots and outputs of checked specs ([`ExampleParser::validate`]). Each dense
    /// feature's values per example are counted again here rather than kept in a map by name
    /// from the checks: a schema of a million features would hold that map beside the parser.
    fn compile<'a>(specs: &'a FeatureSpecs) -> ExampleParser {
        let stride = |shape: &[usize], name: &str| checked_elements(shape, name).unwrap_or(0);
        // Sized once: a schema of a million features would otherwise leave vectors grown by
        // doubling with up to twice the room they use, for as long as the parser lives.
        let mut slots: Vec<Slot> = Vec::with_capacity(specs.len());
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        let mut slot_for = |key: &'a str, dtype: DType, role: Role, slots: &mut Vec<Slot>| -> usize {
            *index.entry(key).or_insert_with(|| {
                slots.push(Slot {
                    key: key.into(),
                    dtype,
                    role,
                });
                slots.len() - 1
            })
        };
        let mut outputs = Vec::with_capacity(specs.len());
        let mut output_names = Vec::new();
        for (name, spec) in specs {
            let output = match spec {
                FeatureSpec::FixedLen(f) => {
                    // TF's kernel reads a default of no elements as "no default": the
                    // feature is then required (so a zero-element shape with `[]` is too).
                    let role = Role::Fixed {
                        shape: f.shape.as_slice().into(),
                        stride: stride(&f.shape, name),
                        default: f.default_value.clone().filter(|d| !d.is_empty()),
                    };
                    Output::Fixed(slot_for(name, f.dtype, role, &mut slots))
                }
                FeatureSpec::FixedLenSequence(f) => {
                    let role = Role::Padded {
                        shape: f.shape.as_slice().into(),
                        stride: stride(&f.shape, name),
                    };
                    Output::Padded(Box::new((
                        slot_for(name, f.dtype, role, &mut slots),
                        f.default_value.clone().unwrap_or_else(|| Values::zero(f.dtype)),
                    )))
                }
                FeatureSpec::VarLen(f) => Output::VarLen(slot_for(name, f.dtype, Role::Sparse, &mut slots)),
                FeatureSpec::Sparse(f) => Output::Sparse(Box::new(SparseOutput {
                    index_slots: f
                        .index_keys
                        .iter()
                        .map(|k| slot_for(k, DType::Int64, Role::Sparse, &mut slots))
                        .collect(),
                    value_slot: slot_for(&f.value_key, f.dtype, Role::Sparse, &mut slots),
                    size: f.size.clone(),
                    already_sorted: f.already_sorted,
                    size_form_error: f.size_form_error,
                })),
                FeatureSpec::Ragged(f) => Output::Ragged(Box::new(RaggedOutput {
                    value_slot: slot_for(
                        f.value_key.as_deref().unwrap_or(name),
                        f.dtype,
                        Role::Ragged,
                        &mut slots,
                    ),
                    partitions: f
                        .partitions
                        .iter()
                        .map(|p| {
                            let slot = p.key().map(|k| slot_for(k, DType::Int64, Role::Ragged, &mut slots));
                            (p.clone(), slot)
                        })
                        .collect(),
                    splits_dtype: f.row_splits_dtype,
                    validate: f.validate,
                })),
            };
            // Named by its slot when that is its name (see `output_name`).
            let named = output.own_slot().is_none_or(|slot| *slots[slot].key != **name);
            if named {
                output_names.push((outputs.len(), name.as_str().into()));
            }
            outputs.push(output);
        }
        drop(index);
        // A SparseFeature's or RaggedFeature's keys can outnumber the specs.
        slots.shrink_to_fit();
        let lookup = Arc::new(
            slots
                .iter()
                .enumerate()
                .map(|(i, s)| (s.key.as_bytes().to_vec().into_boxed_slice(), i))
                .collect(),
        );
        let column_sizes = slots.iter().map(|_| ColumnSize::default()).collect();
        ExampleParser {
            slots,
            lookup,
            outputs,
            output_names,
            column_sizes,
            key_order: Arc::default(),
            varlen_row_splits: false,
            fast: true,
        }
    }

    /// The checks of [`ExampleParser::new`] alone, for specs compiled elsewhere.
    pub(crate) fn check(specs: &FeatureSpecs) -> Result<(), SpecError> {
        ExampleParser::validate(specs).map(|_| ())
    }

    /// Parses a batch (`parse_example`): every tensor gets a leading batch dimension.
    pub fn parse_batch<R: AsRef<[u8]>>(&self, records: &[R]) -> Result<TensorMap, ParseError> {
        let columns = self.parse_columns(records, 0, false, None)?;
        self.assemble(columns, records.len(), false)
    }

    /// [`parse_batch`](Self::parse_batch), and which of the spec's feature keys each record
    /// holds (an empty list counts), as the parse found them: a consumer that needs to tell
    /// "missing" from "empty" need not walk the records again.
    pub fn parse_batch_seeing_keys<R: AsRef<[u8]>>(&self, records: &[R]) -> Result<(TensorMap, KeysSeen), ParseError> {
        let mut seen = Vec::with_capacity(records.len() * self.slots.len());
        let columns = self.parse_columns(records, 0, false, Some(&mut seen))?;
        Ok((self.assemble(columns, records.len(), false)?, self.keys_seen(seen)))
    }

    /// For the columnar readers: each VarLenFeature comes out as a ragged tensor of one level
    /// (its row splits are a list column's offsets) instead of a sparse tensor, whose indices
    /// they would only read back into offsets. Values and errors are the same.
    #[cfg(feature = "arrow")]
    pub(crate) fn varlen_as_row_splits(mut self) -> Self {
        self.varlen_row_splits = true;
        self
    }

    /// Every record through the careful path, which has protobuf's exact semantics and
    /// TensorFlow's errors, and none through the hand-written fast path. The results are the
    /// same either way (the fast path gives up on anything it would read differently); this is
    /// for checking that, and for measuring what the fast path buys. Slower.
    pub fn without_fast_path(mut self) -> Self {
        self.fast = false;
        self
    }

    fn keys_seen(&self, seen: Vec<bool>) -> KeysSeen {
        KeysSeen {
            keys: Arc::clone(&self.lookup),
            seen,
        }
    }

    /// Parses a batch given as any iterator of records (collected first).
    pub fn parse_iter<I, R>(&self, records: I) -> Result<TensorMap, ParseError>
    where
        I: IntoIterator<Item = R>,
        R: AsRef<[u8]>,
    {
        let records: Vec<R> = records.into_iter().collect();
        self.parse_batch(&records)
    }

    /// Parses a batch on the rayon thread pool, in minibatches of `minibatch` records; the
    /// result is identical to [`ExampleParser::parse_batch`].
    pub fn parse_batch_parallel<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        minibatch: usize,
    ) -> Result<TensorMap, ParseError> {
        self.parallel(records, minibatch, false).map(|(tensors, _)| tensors)
    }

    /// [`parse_batch_parallel`](Self::parse_batch_parallel), and which keys each record holds
    /// (see [`parse_batch_seeing_keys`](Self::parse_batch_seeing_keys)).
    pub fn parse_batch_parallel_seeing_keys<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        minibatch: usize,
    ) -> Result<(TensorMap, KeysSeen), ParseError> {
        self.parallel(records, minibatch, true)
            .map(|(tensors, seen)| (tensors, self.keys_seen(seen)))
    }

    fn parallel<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        minibatch: usize,
        see_keys: bool,
    ) -> Result<(TensorMap, Vec<bool>), ParseError> {
        let minibatch = minibatch.max(1);
        let mut seen = Vec::new();
        if records.len() <= minibatch {
            let columns = self.parse_columns(records, 0, false, see_keys.then_some(&mut seen))?;
            return Ok((self.assemble(columns, records.len(), false)?, seen));
        }
        // Each part's columns, and with `see_keys` its records' keys.
        type Part = (Vec<Column>, Vec<bool>);
        let parts: Vec<Result<Part, ParseError>> = records
            .par_chunks(minibatch)
            .enumerate()
            .map(|(i, chunk)| {
                let mut seen = Vec::new();
                let columns = self.parse_columns(chunk, i * minibatch, false, see_keys.then_some(&mut seen))?;
                Ok((columns, seen))
            })
            .collect();
        // Chunks are in order, so the first error is the lowest failing example's.
        let parts: Vec<Part> = parts.into_iter().collect::<Result<_, _>>()?;
        let parts: Vec<Vec<Column>> = parts
            .into_iter()
            .map(|(columns, part_seen)| {
                seen.extend(part_seen);
                columns
            })
            .collect();
        let mut parts = parts.into_iter();
        let mut columns = parts.next().unwrap_or_else(|| self.empty_columns());
        let rest: Vec<Vec<Column>> = parts.collect();
        for (i, column) in columns.iter_mut().enumerate() {
            // Each column grows once to its final size rather than by doubling.
            column.values.reserve_for_parts(rest.iter().map(|p| &p[i].values));
            column.counts.reserve(rest.iter().map(|p| p[i].counts.len()).sum());
        }
        for part in rest {
            columns.iter_mut().zip(part).for_each(|(a, p)| a.append(p));
        }
        Ok((self.assemble(columns, records.len(), false)?, seen))
    }

    /// Parses one record (`parse_single_example`): no batch dimension.
    pub fn parse_single(&self, record: &[u8]) -> Result<TensorMap, ParseError> {
        let columns = self.parse_columns(&[record], 0, true, None).map_err(|mut e| {
            e.single = true;
            e
        })?;
        self.assemble(columns, 1, true).map_err(|mut e| {
            e.single = true;
            e
        })
    }

    fn empty_columns(&self) -> Vec<Column> {
        self.slots.iter().map(|s| Column::new(s.dtype)).collect()
    }

    /// Parses records into one column per slot; `first` is the batch index of `records[0]`.
    /// With `seen`, appends for each record whether it holds each slot's key.
    fn parse_columns<R: AsRef<[u8]>>(
        &self,
        records: &[R],
        first: usize,
        single: bool,
        mut seen: Option<&mut Vec<bool>>,
    ) -> Result<Vec<Column>, ParseError> {
        let mut columns = self.empty_columns();
        // A FixedLen column ends with exactly `stride` values per record, so it is sized once.
        // But every value takes some bytes of a record (an int64 at least 1, a float 4, a
        // string 2): never reserve more than the records could hold, whatever the spec says.
        let bytes: usize = records.iter().map(|r| r.as_ref().len()).sum();
        // Exactly: `reserve` would give a batch of one record room for four counts and four
        // values, which a record of a million one-value features holds per feature.
        for ((column, slot), size) in columns.iter_mut().zip(&self.slots).zip(self.column_sizes.iter()) {
            column.counts.reserve_exact(records.len());
            if let Role::Fixed { stride, .. } = &slot.role {
                let most = most_values(slot.dtype, bytes);
                column
                    .values
                    .reserve_exact(records.len().saturating_mul(*stride).min(most));
            }
            // Variable lengths, and strings' bytes, as the last batch had them.
            if !matches!(slot.role, Role::Fixed { .. }) || slot.dtype == DType::String {
                size.reserve_values(records.len(), bytes, &mut column.values);
            }
        }
        // Made when a record first takes the careful path: a wide spec's records mostly take
        // the fast one, and its tables cost tens of bytes a slot.
        let mut careful: Option<Careful> = None;
        let mut found: Vec<Option<&[u8]>> = vec![None; self.slots.len()];
        let mut marks: Vec<(usize, usize)> = vec![(0, 0); self.slots.len()];
        let mut predicted = match self.key_order.lock() {
            Ok(order) => fast::KeyOrder::starting_with(self.slots.len(), &order, |s| self.slots[s].key.as_bytes()),
            Err(_) => fast::KeyOrder::new(self.slots.len()),
        };
        // The records of a chunk: so that its table of features stays small for a wide spec,
        // and is no larger than the records need (one, for `parse_single`).
        let chunk_len = (CHUNK_FEATURES / self.slots.len().max(1))
            .clamp(1, CHUNK)
            .min(records.len().max(1));
        let mut chunk_found: Vec<Option<&[u8]>> = Vec::new();
        for (c, chunk) in records.chunks(chunk_len).enumerate() {
            if self.fast
                && chunk.len() >= FEWEST_IN_CHUNK
                && self.fast_chunk(
                    chunk,
                    chunk_len,
                    &mut columns,
                    &mut chunk_found,
                    &mut predicted,
                    &mut marks,
                )
            {
                if let Some(seen) = seen.as_deref_mut() {
                    for r in 0..chunk.len() {
                        seen.extend((0..self.slots.len()).map(|s| chunk_found[s * chunk_len + r].is_some()));
                    }
                }
                continue;
            }
            for (j, record) in chunk.iter().enumerate() {
                let record = record.as_ref();
                for (mark, column) in marks.iter_mut().zip(&columns) {
                    *mark = (column.values.len(), column.counts.len());
                }
                if self.fast && self.fast_example(record, &mut columns, &mut found, &mut predicted) {
                    if let Some(seen) = seen.as_deref_mut() {
                        seen.extend(found.iter().map(Option::is_some));
                    }
                    continue;
                }
                // Not the canonical encoding, or a problem: undo, then take the careful path.
                for (mark, column) in marks.iter().zip(&mut columns) {
                    column.truncate_values(mark.0);
                    column.counts.truncate(mark.1);
                }
                let careful = careful.get_or_insert_with(|| Careful {
                    found: vec![None; self.slots.len()],
                    order: Vec::with_capacity(self.slots.len()),
                    done: vec![false; self.slots.len()],
                });
                self.careful_example(record, first + c * chunk_len + j, single, &mut columns, careful)?;
                if let Some(seen) = seen.as_deref_mut() {
                    // The careful walk lists every slot whose key the record holds.
                    let at = seen.len();
                    seen.resize(at + self.slots.len(), false);
                    for &slot in &careful.order {
                        seen[at + slot] = true;
                    }
                }
            }
        }
        for (size, column) in self.column_sizes.iter().zip(&columns) {
            size.remember(records.len(), column);
        }
        if let Ok(mut order) = self.key_order.lock() {
            predicted.remember_slots(&mut order);
        }
        Ok(columns)
    }

    /// The hot path (see [`fast`](super::fast)): `false` when the example needs the careful
    /// path, in which case the columns may hold part of it (the caller undoes that).
    ///
    /// `predicted` holds the previous record's keys in order, each with its slot.
    #[inline]
    fn fast_example<'r>(
        &self,
        record: &'r [u8],
        columns: &mut [Column],
        found: &mut [Option<&'r [u8]>],
        predicted: &mut fast::KeyOrder<'r>,
    ) -> bool {
        found.iter_mut().for_each(|f| *f = None);
        predicted.start_record();
        let walked = fast::walk_entries(record, 0x0a, |key, value| {
            if let Some(slot) = predicted.get(key, |key| self.lookup.get(key).copied()) {
                found[slot] = Some(value);
            }
        });
        if !walked {
            return false;
        }
        self.slots
            .iter()
            .zip(columns.iter_mut())
            .zip(found.iter())
            .all(|((spec, column), value)| take_value(spec, column, *value))
    }

    /// The fast path for a chunk of records, a column at a time: each record's keys are
    /// found first, then each column takes its feature from every record of the chunk. A
    /// column's loop keeps one kind of value, one role and one output in play, where a record
    /// at a time goes through every column's in turn. `false` when a record of the chunk needs
    /// the record-by-record path; the columns are then as they were.
    ///
    /// `found` is the chunk's features by slot, then by record (`chunk_len` places a slot).
    fn fast_chunk<'r, R: AsRef<[u8]>>(
        &self,
        chunk: &'r [R],
        chunk_len: usize,
        columns: &mut [Column],
        found: &mut Vec<Option<&'r [u8]>>,
        predicted: &mut fast::KeyOrder<'r>,
        marks: &mut [(usize, usize)],
    ) -> bool {
        found.clear();
        found.resize(self.slots.len() * chunk_len, None);
        for (r, record) in chunk.iter().enumerate() {
            predicted.start_record();
            let walked = fast::walk_entries(record.as_ref(), 0x0a, |key, value| {
                if let Some(slot) = predicted.get(key, |key| self.lookup.get(key).copied()) {
                    found[slot * chunk_len + r] = Some(value);
                }
            });
            if !walked {
                return false;
            }
        }
        for (mark, column) in marks.iter_mut().zip(columns.iter()) {
            *mark = (column.values.len(), column.counts.len());
        }
        let taken = self
            .slots
            .iter()
            .zip(columns.iter_mut())
            .zip(found.chunks_exact(chunk_len))
            .all(|((spec, column), features)| take_column(spec, column, &features[..chunk.len()]));
        if !taken {
            for (mark, column) in marks.iter().zip(columns.iter_mut()) {
                column.truncate_values(mark.0);
                column.counts.truncate(mark.1);
            }
        }
        taken
    }

    /// One example with the exact protobuf semantics and TensorFlow's errors.
    fn careful_example<'r>(
        &self,
        record: &'r [u8],
        example: usize,
        single: bool,
        columns: &mut [Column],
        state: &mut Careful<'r>,
    ) -> Result<(), ParseError> {
        let at = |e: ParseError| if single { e } else { e.example(example) };
        let Careful { found, order, done } = state;
        order.clear();
        found.iter_mut().for_each(|f| *f = None);
        let mut entries = ExampleView::new(record).entries();
        loop {
            let entry = entries
                .next_entry()
                .map_err(|e| at(ParseError::new(ParseErrorKind::Malformed(e)).example(example)))?;
            let Some((key, raw)) = entry else { break };
            if let Some(&slot) = self.lookup.get(key) {
                order.push(slot);
                found[slot] = Some(raw);
            }
        }
        done.iter_mut().for_each(|d| *d = false);
        // Present features first: type, then count. TensorFlow walks the features from the
        // last in wire order back (so that the last of a duplicated key wins), so with several
        // bad features the last one is reported; each key is taken at its last occurrence.
        for &slot in order.iter().rev() {
            if let Some(raw) = found[slot].take() {
                done[slot] = self.take_feature(slot, &raw, &mut columns[slot]).map_err(at)?;
            }
        }
        // Then the missing ones.
        for (slot, spec) in self.slots.iter().enumerate() {
            if done[slot] {
                continue;
            }
            let column = &mut columns[slot];
            match &spec.role {
                Role::Fixed {
                    default: Some(d),
                    stride,
                    ..
                } => {
                    column.values.extend_from(d);
                    column.counts.push(*stride);
                }
                Role::Fixed { default: None, .. } => {
                    return Err(at(ParseError::new(ParseErrorKind::Required {
                        key: spec.key.to_string(),
                        dtype: spec.dtype,
                    })
                    .key(&spec.key)));
                }
                _ => column.counts.push(0),
            }
        }
        Ok(())
    }

    /// Takes a present feature into its column; `false` when it counts as missing (a dense
    /// feature with no kind set).
    #[inline]
    fn take_feature(&self, slot: usize, raw: &RawFeature<'_>, column: &mut Column) -> Result<bool, ParseError> {
        let spec = &self.slots[slot];
        let malformed = |e| ParseError::new(ParseErrorKind::MalformedFeature(e)).key(&spec.key);
        let view = raw.view().map_err(malformed)?;
        let Some(kind) = view.kind() else {
            return match spec.role {
                Role::Fixed { .. } => Ok(false),
                _ => {
                    column.counts.push(0);
                    Ok(true)
                }
            };
        };
        let actual = DType::of_kind(kind);
        if actual != spec.dtype {
            let kind = match spec.role {
                Role::Fixed { .. } | Role::Padded { .. } => ParseErrorKind::DenseTypeMismatch {
                    expected: spec.dtype,
                    actual,
                },
                _ => ParseErrorKind::TypeMismatch {
                    expected: spec.dtype,
                    actual,
                },
            };
            return Err(ParseError::new(kind).key(&spec.key));
        }
        let before = column.values.len();
        // The careful path is rare: the extra walk to count is cheap next to it.
        column.reserve_for(&view);
        let n = column.extend_from(&view).map_err(malformed)?;
        match &spec.role {
            // TensorFlow stops reading a bytes list once it has all it wants, then fails on
            // the rest as unparsed input.
            Role::Fixed { stride, .. } if spec.dtype == DType::String && n > *stride => {
                column.truncate_values(before);
                return Err(ParseError::new(ParseErrorKind::BytesOverflow {
                    count: n,
                    expected: *stride,
                })
                .key(&spec.key));
            }
            Role::Fixed { shape, stride, .. } if n != *stride => {
                column.truncate_values(before);
                return Err(ParseError::new(ParseErrorKind::WrongCount {
                    dtype: spec.dtype,
                    count: n,
                    shape: known_shape_string(shape),
                })
                .key(&spec.key));
            }
            Role::Padded { shape, stride } if (*stride == 0 && n != 0) || (*stride != 0 && n % stride != 0) => {
                let mut dims = vec![None];
                dims.extend(shape.iter().map(|&d| Some(d)));
                return Err(ParseError::new(ParseErrorKind::NotMultipleOfStride {
                    dtype: spec.dtype,
                    count: n,
                    shape: shape_string(&dims),
                })
                .key(&spec.key));
            }
            _ => {}
        }
        column.counts.push(n);
        Ok(true)
    }

    /// Builds the output tensors from the columns of a whole batch; `single` gives the
    /// single-example op's tensors (no batch dimension, TensorFlow's single-example partitions).
    fn assemble(&self, columns: Vec<Column>, batch: usize, single: bool) -> Result<TensorMap, ParseError> {
        let mut out = TensorMap::new();
        self.assemble_each(columns, batch, single, |output, tensor| {
            if let Some(tensor) = tensor {
                out.insert(self.output_name(output).to_owned(), tensor);
            }
            Ok::<(), ParseError>(())
        })?;
        Ok(out)
    }

    /// The output names, in the order of [`ExampleParser::assemble_parsed`]'s outputs.
    #[cfg(feature = "arrow")]
    pub(crate) fn output_names(&self) -> impl Iterator<Item = &str> {
        (0..self.outputs.len()).map(|output| self.output_name(output))
    }

    /// The name of output `output`: its own, or its slot's key when that is its name.
    fn output_name(&self, output: usize) -> &str {
        if let Ok(at) = self.output_names.binary_search_by_key(&output, |(index, _)| *index) {
            return &self.output_names[at].1;
        }
        // An output without a slot of its own was compiled with a name (see `compile`).
        self.outputs[output].own_slot().map_or("", |slot| &self.slots[slot].key)
    }

    /// The first half of [`parse_batch_seeing_keys`](Self::parse_batch_seeing_keys): the
    /// batch's columns, not yet tensors, and the keys each record holds.
    #[cfg(feature = "arrow")]
    pub(crate) fn parse_seeing_keys<R: AsRef<[u8]>>(
        &self,
        records: &[R],
    ) -> Result<(ParsedBatch, KeysSeen), ParseError> {
        let mut seen = Vec::with_capacity(records.len() * self.slots.len());
        let columns = self.parse_columns(records, 0, false, Some(&mut seen))?;
        let parsed = ParsedBatch {
            columns,
            rows: records.len(),
        };
        Ok((parsed, self.keys_seen(seen)))
    }

    /// The second half: each output's tensor handed to `each` with its place among
    /// [`ExampleParser::output_names`] as soon as it is made, so that a consumer can turn it
    /// into something else before the next is made: a schema of a million features then
    /// never holds a million tensors at once.
    #[cfg(feature = "arrow")]
    pub(crate) fn assemble_parsed<E: From<ParseError>>(
        &self,
        parsed: ParsedBatch,
        each: impl FnMut(usize, Option<Tensor>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.assemble_each(parsed.columns, parsed.rows, false, each)
    }

    /// Builds each output's tensor in turn and hands it to `each` (`None` for an output with
    /// no tensor).
    fn assemble_each<E: From<ParseError>>(
        &self,
        columns: Vec<Column>,
        batch: usize,
        single: bool,
        mut each: impl FnMut(usize, Option<Tensor>) -> Result<(), E>,
    ) -> Result<(), E> {
        // A column used by several outputs is cloned for all but its last use.
        let mut uses = vec![0usize; columns.len()];
        for output in &self.outputs {
            for slot in output_slots(output) {
                uses[slot] += 1;
            }
        }
        let mut columns: Vec<Option<Column>> = columns.into_iter().map(Some).collect();
        let mut take = |slot: usize| -> Column {
            uses[slot] -= 1;
            let column = if uses[slot] == 0 {
                columns[slot].take()
            } else {
                columns[slot].clone()
            };
            column.unwrap_or_else(|| Column::new(self.slots[slot].dtype))
        };
        for (index, output) in self.outputs.iter().enumerate() {
            let name = self.output_name(index);
            let tensor = match output {
                Output::Fixed(slot) => {
                    let Role::Fixed { shape, .. } = &self.slots[*slot].role else {
                        each(index, None)?;
                        continue;
                    };
                    Tensor::Dense(dense_fixed(take(*slot).values, batch, shape)?)
                }
                Output::Padded(padded) => {
                    let (slot, pad) = padded.as_ref();
                    let Role::Padded { shape, .. } = &self.slots[*slot].role else {
                        each(index, None)?;
                        continue;
                    };
                    Tensor::Dense(dense_padded(take(*slot), shape, pad)?)
                }
                Output::VarLen(slot) if self.varlen_row_splits => Tensor::Ragged(varlen_ragged(take(*slot))?),
                Output::VarLen(slot) => Tensor::Sparse(varlen_sparse(take(*slot))?),
                Output::Sparse(sparse) => {
                    let SparseOutput {
                        index_slots,
                        value_slot,
                        size,
                        already_sorted,
                        size_form_error,
                    } = sparse.as_ref();
                    if let Some(want) = size_form_error {
                        return Err(ParseError::new(ParseErrorKind::Spec(Box::new(SpecError::SizeForm {
                            feature: name.to_owned(),
                            want,
                        })))
                        .key(name)
                        .into());
                    }
                    let index: Vec<Column> = index_slots.iter().map(|&s| take(s)).collect();
                    let keys: Vec<String> = index_slots.iter().map(|&s| self.slots[s].key.to_string()).collect();
                    let value_key = self.slots[*value_slot].key.to_string();
                    let value = take(*value_slot);
                    let refs: Vec<&Column> = index.iter().collect();
                    Tensor::Sparse(
                        sparse_feature(&refs, &keys, value, &value_key, size, *already_sorted)
                            .map_err(|e| e.key(name))?,
                    )
                }
                Output::Ragged(ragged) => {
                    let RaggedOutput {
                        value_slot,
                        partitions,
                        splits_dtype,
                        validate,
                    } = ragged.as_ref();
                    let ctx = ragged::Ctx {
                        feature: name,
                        validate: *validate,
                        dtype: *splits_dtype,
                    };
                    let values = take(*value_slot);
                    if single {
                        let mut rt = RaggedBuild::flat(values.values);
                        for (partition, slot) in partitions.iter().rev() {
                            let column = slot.map(&mut take);
                            ragged::apply_single(&mut rt, partition, column.as_ref(), &ctx)?;
                        }
                        if rt.ragged_rank() == 0 {
                            let dense = DenseTensor::from_values(rt.flat, &rt.flat_shape)
                                .map_err(|e| ParseError::new(ParseErrorKind::Shape(e)).key(name))?;
                            each(index, Some(Tensor::Dense(dense)))?;
                        } else {
                            each(index, Some(Tensor::Ragged(rt.finish(*splits_dtype)?)))?;
                        }
                        continue;
                    }
                    let mut rt = RaggedBuild::from_column(values);
                    for (partition, slot) in partitions.iter().rev() {
                        let column = slot.map(&mut take);
                        ragged::apply_batched(&mut rt, partition, column.as_ref(), &ctx)?;
                    }
                    Tensor::Ragged(rt.finish(*splits_dtype)?)
                }
            };
            each(index, Some(if single { strip_batch(tensor) } else { tensor }))?;
        }
        Ok(())
    }
}

/// Records the Example fast path takes a column at a time (see `ExampleParser::fast_chunk`):
/// measured against smaller and larger chunks, the fastest (`cargo bench --bench parse`).
const CHUNK: usize = 64;

/// Fewer records than this (a small batch, `parse_single`, a batch's last few) go record by
/// record: a column's loop over one record costs more than it saves.
const FEWEST_IN_CHUNK: usize = 8;

/// The most places in a chunk's table of features (16 bytes each): a wider spec takes fewer
/// records a chunk, down to one.
const CHUNK_FEATURES: usize = 64 * 256;

/// A column's values of one kind, as the fast path's column loop takes them.
trait FastValues {
    fn take(&mut self, feature: &[u8]) -> fast::Taken;
    /// Appends a missing feature's default (of this column's kind).
    fn extend_default(&mut self, default: &Values);
}

/// The numeric columns' [`FastValues`]: the kind's taker, and a default's values (a scalar,
/// most often, is one push rather than a slice copy).
macro_rules! numeric_fast_values {
    ($t:ty, $kind:ident, $take:path) => {
        impl FastValues for Vec<$t> {
            #[inline(always)]
            fn take(&mut self, feature: &[u8]) -> fast::Taken {
                $take(feature, self)
            }
            #[inline(always)]
            fn extend_default(&mut self, default: &Values) {
                match default {
                    Values::$kind(d) if d.len() == 1 => self.push(d[0]),
                    Values::$kind(d) => self.extend_from_slice(d),
                    _ => {}
                }
            }
        }
    };
}

numeric_fast_values!(i64, Int64, fast::take_int64s);
numeric_fast_values!(f32, Float32, fast::take_floats);

impl FastValues for BytesArray {
    #[inline(always)]
    fn take(&mut self, feature: &[u8]) -> fast::Taken {
        fast::take_bytes(feature, self)
    }
    #[inline(always)]
    fn extend_default(&mut self, default: &Values) {
        if let Values::String(d) = default {
            self.extend_from_array(d);
        }
    }
}

/// One column's features from a chunk of records (`None`: the record lacks the key), on the
/// fast path: the column's kind is settled once for the chunk. `false` when a record needs
/// the careful path.
#[inline(never)]
fn take_column(spec: &Slot, column: &mut Column, features: &[Option<&[u8]>]) -> bool {
    let Column { values, counts } = column;
    match values {
        Values::Int64(out) => take_features(&spec.role, out, counts, features),
        Values::Float32(out) => take_features(&spec.role, out, counts, features),
        Values::String(out) => take_features(&spec.role, out, counts, features),
    }
}

/// The loop of [`take_column`], one for each role, so that no role is decided per value.
#[inline(always)]
fn take_features<V: FastValues>(role: &Role, out: &mut V, counts: &mut Vec<usize>, features: &[Option<&[u8]>]) -> bool {
    use fast::Taken;
    match role {
        Role::Fixed { stride, default, .. } => {
            for feature in features {
                match feature.map(|f| out.take(f)) {
                    Some(Taken::Values(n)) if n == *stride => counts.push(n),
                    None | Some(Taken::KindUnset) => match default {
                        Some(d) => {
                            out.extend_default(d);
                            counts.push(*stride);
                        }
                        None => return false,
                    },
                    Some(Taken::Values(_) | Taken::GiveUp) => return false,
                }
            }
        }
        Role::Padded { stride, .. } => {
            for feature in features {
                match feature.map(|f| out.take(f)) {
                    Some(Taken::Values(n)) if n.checked_rem(*stride).unwrap_or(n) == 0 => counts.push(n),
                    None | Some(Taken::KindUnset) => counts.push(0),
                    Some(Taken::Values(_) | Taken::GiveUp) => return false,
                }
            }
        }
        Role::Sparse | Role::Ragged => {
            for feature in features {
                match feature.map(|f| out.take(f)) {
                    Some(Taken::Values(n)) => counts.push(n),
                    None | Some(Taken::KindUnset) => counts.push(0),
                    Some(Taken::GiveUp) => return false,
                }
            }
        }
    }
    true
}

/// One record's feature (`None`: the record lacks the key) into its slot's column, on the
/// fast path; `false` when the record needs the careful path. The rules of [`take_features`]
/// for one record, kept apart: through [`take_column`], a record at a time took more
/// instructions in small batches.
#[inline(always)]
fn take_value(spec: &Slot, column: &mut Column, value: Option<&[u8]>) -> bool {
    let taken = match value {
        Some(v) => fast::take_feature(v, &mut column.values),
        None => fast::Taken::KindUnset,
    };
    match (taken, &spec.role) {
        (fast::Taken::GiveUp, _) => return false,
        (fast::Taken::Values(n), Role::Fixed { stride, .. }) if n != *stride => return false,
        (fast::Taken::Values(n), Role::Padded { stride, .. }) if n.checked_rem(*stride).unwrap_or(n) != 0 => {
            return false
        }
        (fast::Taken::Values(n), _) => column.counts.push(n),
        (
            fast::Taken::KindUnset,
            Role::Fixed {
                default: Some(d),
                stride,
                ..
            },
        ) => {
            column.values.extend_from(d);
            column.counts.push(*stride);
        }
        (fast::Taken::KindUnset, Role::Fixed { default: None, .. }) => return false,
        (fast::Taken::KindUnset, _) => column.counts.push(0),
    }
    true
}

fn output_slots(output: &Output) -> Vec<usize> {
    match output {
        Output::Fixed(s) | Output::VarLen(s) => vec![*s],
        Output::Padded(padded) => vec![padded.0],
        Output::Sparse(sparse) => sparse
            .index_slots
            .iter()
            .copied()
            .chain(std::iter::once(sparse.value_slot))
            .collect(),
        Output::Ragged(ragged) => std::iter::once(ragged.value_slot)
            .chain(ragged.partitions.iter().filter_map(|(_, s)| *s))
            .collect(),
    }
}

/// Removes the batch dimension of a batch of one, giving the single-example op's tensor.
pub(crate) fn strip_batch(tensor: Tensor) -> Tensor {
    match tensor {
        Tensor::Dense(t) => {
            let shape = t.shape().get(1..).unwrap_or(&[]).to_vec();
            match t.reshape(&shape) {
                Ok(d) | Err(d) => Tensor::Dense(d),
            }
        }
        Tensor::Sparse(t) => {
            let indices = t.indices.slice(ndarray::s![.., 1..]).to_owned();
            let dense_shape = t.dense_shape.get(1..).unwrap_or(&[]).to_vec();
            Tensor::Sparse(SparseTensor {
                indices,
                values: t.values,
                dense_shape,
            })
        }
        Tensor::Ragged(t) => {
            let (flat, mut splits, mut uniform, splits_dtype) = t.into_parts();
            if !splits.is_empty() {
                splits.remove(0);
                uniform.remove(0);
            }
            if splits.is_empty() {
                Tensor::Dense(flat)
            } else {
                Tensor::Ragged(RaggedTensor::new_unchecked(flat, splits, uniform, splits_dtype))
            }
        }
    }
}

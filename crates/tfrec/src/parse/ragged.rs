//! Applying a RaggedFeature's partitions to a batch, as TensorFlow's
//! `_add_batched_ragged_partition` does: innermost partition first, each example's partition
//! values applying to that example's rows only.
//!
//! Without `validate`, as in TensorFlow, nothing is checked: partitions that do not fit the
//! values give the same inconsistent splits TensorFlow returns (a [`RaggedTensor`] can hold
//! them; [`RaggedTensor::check`] tells). With `validate`, TensorFlow's checks apply: splits
//! start at 0, never decrease and end at the number of values; lengths are not negative; row
//! ids are sorted. Only what cannot be computed at all (a negative row id) always fails.
//!
//! [`RaggedTensor`]: super::tensor::RaggedTensor
//! [`RaggedTensor::check`]: super::tensor::RaggedTensor::check

use super::columns::{splits_of, Column, RaggedBuild};
use super::error::{ParseError, ParseErrorKind};
use super::spec::{Partition, Values};

fn bad(key: &str, why: String) -> ParseError {
    ParseError::new(ParseErrorKind::Ragged(why)).key(key)
}

/// Rows below the batch level: what a new partition splits.
fn rows_below(rt: &RaggedBuild) -> usize {
    match rt.splits.get(1) {
        Some(s) => s.len().saturating_sub(1),
        None => rt.flat_shape.first().copied().unwrap_or(0),
    }
}

/// Checks that `splits` splits exactly `n` rows: starts at 0, never decreases, ends at `n`.
fn check_splits(key: &str, what: &str, splits: &[i64], n: usize) -> Result<(), ParseError> {
    if splits.first() != Some(&0) {
        return Err(bad(
            key,
            format!("{what}: the row splits must start at 0, got {:?}", splits.first()),
        ));
    }
    if let Some(w) = splits.windows(2).find(|w| w[1] < w[0]) {
        return Err(bad(
            key,
            format!("{what}: row splits must not decrease, but {} follows {}", w[1], w[0]),
        ));
    }
    let last = splits.last().copied().unwrap_or(0);
    if last != n as i64 {
        return Err(bad(
            key,
            format!("{what}: the partition covers {last} values but there are {n}"),
        ));
    }
    Ok(())
}

/// The int64 values and per-example counts of a partition feature.
fn partition_values(column: &Column) -> &[i64] {
    match &column.values {
        Values::Int64(v) => v,
        _ => &[],
    }
}

/// Applies one partition to `rt` (whose outermost level is the batch).
pub(crate) fn apply(
    rt: &mut RaggedBuild,
    partition: &Partition,
    column: Option<&Column>,
    validate: bool,
    feature: &str,
) -> Result<(), ParseError> {
    let n = rows_below(rt);
    if let Partition::UniformRowLength(length) = *partition {
        let len = length as usize;
        if rt.splits.len() > 1 {
            if validate && n % len != 0 {
                return Err(bad(
                    feature,
                    format!("uniform_row_length {length} does not divide the {n} rows below it"),
                ));
            }
            let level: Vec<i64> = (0..=n / len).map(|i| (i * len) as i64).collect();
            rt.splits[0].iter_mut().for_each(|s| *s /= length);
            rt.splits.insert(1, level);
            rt.uniform.insert(1, Some(length));
        } else {
            let rest: usize = rt.flat_shape.get(1..).map_or(1, |r| r.iter().product());
            if n % len != 0 {
                return Err(bad(
                    feature,
                    format!(
                        "Input to reshape is a tensor with {} values, but the requested shape requires a multiple of {}",
                        n * rest,
                        len * rest
                    ),
                ));
            }
            let mut shape = vec![n / len, len];
            shape.extend_from_slice(rt.flat_shape.get(1..).unwrap_or(&[]));
            rt.flat_shape = shape;
            rt.splits[0].iter_mut().for_each(|s| *s /= length);
        }
        return Ok(());
    }
    let Some(column) = column else {
        return Err(bad(feature, "a partition feature was not parsed".into()));
    };
    let key = partition.key().unwrap_or(feature);
    let values = partition_values(column);
    let counts = &column.counts;
    let batch_starts: Vec<i64> = rt.splits[0].clone();
    let mut inner: Vec<i64> = Vec::with_capacity(values.len() + 1);
    let mut new_counts: Vec<usize> = Vec::with_capacity(counts.len());
    let mut at = 0usize;
    let per_example = counts.iter().enumerate().map(|(e, &c)| {
        let v = &values[at..at + c];
        at += c;
        (e, v)
    });
    match partition {
        Partition::RowSplits(_) | Partition::RowLimits(_) => {
            let is_splits = matches!(partition, Partition::RowSplits(_));
            inner.push(0);
            for (e, v) in per_example {
                let v = if is_splits {
                    if validate && v.first().is_some_and(|&f| f != 0) {
                        return Err(
                            bad(feature, format!("row splits {key} of example {e} do not start at 0")).example(e),
                        );
                    }
                    v.get(1..).unwrap_or(&[])
                } else {
                    v
                };
                new_counts.push(v.len());
                inner.extend(v.iter().map(|&x| x + batch_starts[e]));
            }
        }
        Partition::RowStarts(_) => {
            for (e, v) in per_example {
                if validate && v.first().is_some_and(|&f| f != 0) {
                    return Err(bad(feature, format!("row starts {key} of example {e} do not start at 0")).example(e));
                }
                new_counts.push(v.len());
                inner.extend(v.iter().map(|&x| x + batch_starts[e]));
            }
            inner.push(n as i64);
        }
        Partition::RowLengths(_) => {
            inner.push(0);
            let mut total = 0i64;
            for (e, v) in per_example {
                if let Some(&negative) = v.iter().find(|&&x| x < 0).filter(|_| validate) {
                    return Err(bad(feature, format!("row length {negative} in {key} is negative")).example(e));
                }
                new_counts.push(v.len());
                for &x in v {
                    total += x;
                    inner.push(total);
                }
            }
        }
        Partition::ValueRowIds(_) => {
            let mut adjusted: Vec<i64> = Vec::with_capacity(values.len());
            let mut offset = 0i64;
            for (e, v) in per_example {
                if let Some(&negative) = v.iter().find(|&&x| x < 0) {
                    return Err(bad(feature, format!("value row id {negative} in {key} is negative")).example(e));
                }
                if validate && v.windows(2).any(|w| w[1] < w[0]) {
                    return Err(bad(feature, format!("value row ids {key} of example {e} are not sorted")).example(e));
                }
                let rows = v.iter().max().map_or(0, |&m| m + 1);
                new_counts.push(rows as usize);
                adjusted.extend(v.iter().map(|&x| x + offset));
                offset += rows;
            }
            if validate && adjusted.len() != n {
                return Err(bad(
                    feature,
                    format!("{} value row ids in {key} for {n} values", adjusted.len()),
                ));
            }
            // Splits by counting ids per row, as `from_value_rowids` does.
            let mut per_row = vec![0i64; offset as usize];
            for &id in &adjusted {
                per_row[id as usize] += 1;
            }
            inner.push(0);
            let mut total = 0;
            for c in per_row {
                total += c;
                inner.push(total);
            }
        }
        Partition::UniformRowLength(_) => unreachable!("handled above"),
    }
    let what = match partition {
        Partition::RowSplits(_) => "row_splits",
        Partition::RowLengths(_) => "row_lengths",
        Partition::RowStarts(_) => "row_starts",
        Partition::RowLimits(_) => "row_limits",
        _ => "value_row_ids",
    };
    if validate {
        check_splits(feature, &format!("{what} from {key}"), &inner, n)?;
    }
    rt.splits[0] = inner;
    rt.splits.insert(0, splits_of(&new_counts));
    rt.uniform.insert(0, None);
    Ok(())
}

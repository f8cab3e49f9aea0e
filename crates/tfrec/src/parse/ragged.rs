//! Applying a RaggedFeature's partitions, innermost first, as TensorFlow's `parsing_config`
//! does: [`apply_batched`] is `_add_batched_ragged_partition` (a batch of Examples, or the rows
//! of SequenceExamples' feature lists: each outer row's partition values apply to that row's
//! values only), [`apply_single`] is `_add_ragged_partition` (one Example).
//!
//! The arithmetic is TensorFlow's: partition values are cast to the row-splits dtype (int32
//! wraps them to 32 bits) and offsets are added with wrap-around, so nothing here can overflow
//! or panic. Without `validate` nothing is checked beyond what TensorFlow's ops themselves
//! refuse (shapes that cannot be combined: misaligned rows, row ids not one per value, a
//! negative row id in the bincount); inconsistent splits pass through, as in TensorFlow (a
//! [`RaggedTensor`] can hold them; [`RaggedTensor::check`] tells). With `validate`, the checks of
//! `RaggedTensor.from_*` apply.
//!
//! Memory: every level is at most as long as the values or partition values it comes from,
//! except the rows `value_row_ids` implies (ids may skip rows); those are bounded by
//! [`MAX_IMPLIED_ROWS`] beyond the number of values.
//!
//! [`RaggedTensor`]: super::tensor::RaggedTensor
//! [`RaggedTensor::check`]: super::tensor::RaggedTensor::check

use super::assemble::RaggedBuild;
use super::columns::{splits_of, Column};
use super::error::{ParseError, ParseErrorKind, RaggedPartitionError as E};
use super::spec::Partition;
use super::values::{SplitsDType, Values};

/// Empty rows `value_row_ids` may imply beyond one per value: a row id of 10^12 must be an
/// error, not an 8 TB allocation. (TensorFlow itself counts rows in int32.)
pub(crate) const MAX_IMPLIED_ROWS: usize = 1 << 24;

/// What a partition is applied for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    /// The RaggedFeature's output name, for errors.
    pub feature: &'a str,
    pub validate: bool,
    pub dtype: SplitsDType,
}

impl Ctx<'_> {
    fn err(&self, why: E) -> ParseError {
        ParseError::new(ParseErrorKind::Ragged(Box::new(why))).key(self.feature)
    }

    /// `math_ops.cast` to the splits dtype.
    fn cast(&self, v: i64) -> i64 {
        match self.dtype {
            SplitsDType::Int32 => i64::from(v as i32),
            SplitsDType::Int64 => v,
        }
    }

    /// Addition in the splits dtype, wrapping as TensorFlow's integer ops do.
    fn add(&self, a: i64, b: i64) -> i64 {
        self.cast(a.wrapping_add(b))
    }

    /// `_assert_monotonic_increasing`'s test, `x[1:] - x[:-1] >= 0`, in the splits dtype:
    /// the difference wraps, so a drop of more than half the dtype's range passes, as it does
    /// in TensorFlow.
    fn decreases(&self, a: i64, b: i64) -> bool {
        self.cast(b.wrapping_sub(a)) < 0
    }

    /// Exclusive-then-inclusive running sum in the splits dtype: `[0] ++ cumsum(lengths)`.
    fn splits_from_lengths(&self, lengths: impl Iterator<Item = i64>) -> Vec<i64> {
        let mut splits = vec![0];
        let mut total = 0i64;
        for l in lengths {
            total = self.add(total, l);
            splits.push(total);
        }
        splits
    }
}

fn what(partition: &Partition) -> &'static str {
    match partition {
        Partition::RowSplits(_) => "row_splits",
        Partition::RowLengths(_) => "row_lengths",
        Partition::RowStarts(_) => "row_starts",
        Partition::RowLimits(_) => "row_limits",
        Partition::ValueRowIds(_) => "value_rowids",
        Partition::UniformRowLength(_) => "uniform_row_length",
    }
}

/// `from_row_splits`'s checks: not empty, starts at 0, never decreases, ends at `nvals`.
fn check_splits(ctx: &Ctx<'_>, from: &'static str, splits: &[i64], nvals: i64) -> Result<(), ParseError> {
    match splits.first() {
        None => return Err(ctx.err(E::SplitsEmpty { from })),
        Some(&first) if first != 0 => return Err(ctx.err(E::SplitsStart { from, first })),
        _ => {}
    }
    if let Some(w) = splits.windows(2).find(|w| ctx.decreases(w[0], w[1])) {
        return Err(ctx.err(E::SplitsDecrease {
            from,
            previous: w[0],
            next: w[1],
        }));
    }
    check_nvals(ctx, splits, nvals)
}

/// `_from_row_partition`'s check: the partition covers exactly the values.
fn check_nvals(ctx: &Ctx<'_>, splits: &[i64], nvals: i64) -> Result<(), ParseError> {
    let last = splits.last().copied().unwrap_or(0);
    if last != nvals {
        return Err(ctx.err(E::Coverage {
            covered: last,
            values: nvals,
        }));
    }
    Ok(())
}

fn check_sorted(ctx: &Ctx<'_>, from: &'static str, values: &[i64]) -> Result<(), ParseError> {
    match values.windows(2).find(|w| ctx.decreases(w[0], w[1])) {
        Some(w) => Err(ctx.err(E::NotSorted {
            from,
            previous: w[0],
            next: w[1],
        })),
        None => Ok(()),
    }
}

/// `from_row_limits`' checks on the limits, then that they cover the values.
fn check_limits(ctx: &Ctx<'_>, limits: &[i64], nvals: i64) -> Result<(), ParseError> {
    if let Some(&first) = limits.first().filter(|&&f| f < 0) {
        return Err(ctx.err(E::LimitNegative { first }));
    }
    check_sorted(ctx, "from_row_limits", limits)?;
    check_nvals(ctx, &[limits.last().copied().unwrap_or(0)], nvals)
}

/// `from_row_starts`' checks: starts at 0, sorted, no start past the values.
fn check_starts(ctx: &Ctx<'_>, starts: &[i64], nvals: i64) -> Result<(), ParseError> {
    if let Some(&first) = starts.first().filter(|&&f| f != 0) {
        return Err(ctx.err(E::StartsNotZero { first }));
    }
    check_sorted(ctx, "from_row_starts", starts)?;
    match starts.last() {
        Some(&last) if last > nvals => Err(ctx.err(E::StartPastValues {
            start: last,
            values: nvals,
        })),
        _ => Ok(()),
    }
}

fn check_lengths(ctx: &Ctx<'_>, lengths: &[i64]) -> Result<(), ParseError> {
    match lengths.iter().find(|&&l| l < 0) {
        Some(&length) => Err(ctx.err(E::NegativeLength { length })),
        None => Ok(()),
    }
}

/// `from_value_rowids(values, ids)` with `nrows = ids[-1] + 1`: the row splits, counting ids
/// per row as TensorFlow's int32 bincount does (ids past the last row are not counted).
fn splits_from_rowids(ctx: &Ctx<'_>, ids: &[i64], nvals: usize) -> Result<Vec<i64>, ParseError> {
    if ids.len() != nvals {
        return Err(ctx.err(E::RowIdCount {
            values: nvals,
            ids: ids.len(),
        }));
    }
    let nrows = ids.last().map_or(0, |&last| ctx.add(last, 1));
    if ctx.validate {
        if let Some(&first) = ids.first().filter(|&&f| f < 0) {
            return Err(ctx.err(E::RowIdNegative { id: first }));
        }
        check_sorted(ctx, "from_value_rowids", ids)?;
        if ids.last().is_some_and(|&last| last >= nrows) {
            return Err(ctx.err(E::RowIdTooLarge));
        }
    }
    // The bincount runs in int32.
    let nrows32 = i64::from(nrows as i32);
    if let Some(&negative) = ids.iter().find(|&&id| (id as i32) < 0) {
        return Err(ctx.err(E::BincountNegative { id: negative }));
    }
    if nrows32 < 0 {
        return Err(ctx.err(E::NegativeRows { rows: nrows }));
    }
    // The bincount above takes the low 32 bits; the RaggedTensor built after it checks the
    // whole number of rows as a static dimension (a last id of 2^63 - 1 wraps to -2^63).
    if nrows < 0 {
        return Err(ctx.err(E::NegativeDimension { rows: nrows }));
    }
    let rows = usize::try_from(nrows32).unwrap_or(usize::MAX);
    if rows > nvals.saturating_add(MAX_IMPLIED_ROWS) {
        return Err(ctx.err(E::TooManyRows {
            id: rows - 1,
            rows,
            values: nvals,
            allowed: MAX_IMPLIED_ROWS,
        }));
    }
    let mut per_row = vec![0i64; rows];
    for &id in ids {
        if let Some(count) = per_row.get_mut(id as i32 as usize) {
            *count += 1;
        }
    }
    Ok(ctx.splits_from_lengths(per_row.into_iter()))
}

/// Elements per row of the flat values, refused (as TensorFlow's `TensorShape` refuses it)
/// when stacked uniform partitions make it overflow.
fn inner_elements(ctx: &Ctx<'_>, rt: &RaggedBuild) -> Result<usize, ParseError> {
    rt.flat_shape
        .get(1..)
        .unwrap_or(&[])
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| i64::try_from(n).is_ok())
        .ok_or_else(|| ctx.err(E::ElementsOverflow))
}

/// The partition feature's values, cast to the splits dtype, and its rows' lengths.
fn partition_column<'c>(
    ctx: &Ctx<'_>,
    partition: &Partition,
    column: Option<&'c Column>,
) -> Result<(Vec<i64>, &'c [usize]), ParseError> {
    let Some(column) = column else {
        return Err(ctx.err(E::NotParsed {
            partition: what(partition),
        }));
    };
    let values = match &column.values {
        Values::Int64(v) => v.iter().map(|&x| ctx.cast(x)).collect(),
        _ => Vec::new(),
    };
    Ok((values, &column.counts))
}

/// `reshape(values, [-1, length] + shape(values)[1:])` by TensorFlow's reshape rule: zero
/// dimensions stay out of the product the unknown dimension is inferred from, and the
/// divisibility check is skipped when a dimension of the values is zero; only values that the
/// inferred shape cannot hold are refused. So 0 values into rows of 0 make one empty row.
fn reshape_rows(ctx: &Ctx<'_>, rt: &mut RaggedBuild, length: i64) -> Result<(), ParseError> {
    inner_elements(ctx, rt)?;
    let Ok(len) = u128::try_from(length) else {
        return Err(ctx.err(E::Reshape {
            values: rt.flat_shape.iter().product(),
            multiple: i128::from(length),
        }));
    };
    let rest: Vec<u128> = rt
        .flat_shape
        .get(1..)
        .unwrap_or(&[])
        .iter()
        .map(|&d| d as u128)
        .collect();
    let sizes_have_zero = len == 0 || rest.contains(&0);
    let product: u128 = std::iter::once(len)
        .chain(rest.iter().copied())
        .filter(|&d| d != 0)
        .product();
    let input: Vec<u128> = rt.flat_shape.iter().map(|&d| d as u128).collect();
    let values: u128 = input.iter().product();
    let input_has_zero = sizes_have_zero && input.contains(&0);
    let counted: u128 = input.iter().filter(|&&d| d > 0 || !sizes_have_zero).product();
    let missing = counted / product;
    if !input_has_zero && product * missing != counted {
        return Err(ctx.err(E::Reshape {
            values: usize::try_from(counted).unwrap_or(usize::MAX),
            multiple: i128::try_from(product).unwrap_or(i128::MAX),
        }));
    }
    let elements = missing * len * rest.iter().product::<u128>();
    if elements != values {
        return Err(ctx.err(E::ReshapeCount { values, elements }));
    }
    let mut shape = vec![usize::try_from(missing).unwrap_or(usize::MAX), length as usize];
    shape.extend_from_slice(rt.flat_shape.get(1..).unwrap_or(&[]));
    rt.flat_shape = shape;
    Ok(())
}

/// Applies one partition below the outer level of `rt`, whose rows act as the batch.
pub(crate) fn apply_batched(
    rt: &mut RaggedBuild,
    partition: &Partition,
    column: Option<&Column>,
    ctx: &Ctx<'_>,
) -> Result<(), ParseError> {
    let n = rt.rows_below_outer();
    let outer: Vec<i64> = rt.outer().to_vec();
    let outer_rows = outer.len().saturating_sub(1);
    if let Partition::UniformRowLength(length) = *partition {
        if length <= 0 {
            // `rt.row_splits // length`.
            return Err(ctx.err(E::DivisionByZero { length }));
        }
        let len = length as usize;
        let divided: Vec<i64> = outer.iter().map(|&s| s.div_euclid(length)).collect();
        let below = if rt.ragged_rank() > 1 {
            let nrows = n / len;
            if ctx.validate && nrows * len != n {
                return Err(ctx.err(E::UniformMismatch {
                    length,
                    rows: nrows as i64,
                    values: n as i64,
                }));
            }
            rt.pop_outer();
            rt.push_outer((0..=nrows).map(|i| (i * len) as i64).collect(), Some(length));
            nrows
        } else {
            let rest = inner_elements(ctx, rt)?;
            if !n.is_multiple_of(len) {
                return Err(ctx.err(E::Reshape {
                    values: n.saturating_mul(rest),
                    multiple: len.saturating_mul(rest) as i128,
                }));
            }
            let mut shape = vec![n / len, len];
            shape.extend_from_slice(rt.flat_shape.get(1..).unwrap_or(&[]));
            rt.flat_shape = shape;
            rt.pop_outer();
            n / len
        };
        if ctx.validate {
            check_splits(ctx, "from_row_splits", &divided, below as i64)?;
        }
        rt.push_outer(divided, None);
        return Ok(());
    }
    let (p, counts) = partition_column(ctx, partition, column)?;
    // TensorFlow aligns the partition's rows with the values' rows through
    // `tf.repeat(row_starts, partition_lengths)`, which broadcasts a single row: one partition
    // row holding no limits (no starts, or one split) fits any number of value rows, and then
    // adds no row, as in TensorFlow. Any other count mismatch fails there.
    let limits_of_row = |c: usize| match partition {
        Partition::RowSplits(_) => c.saturating_sub(1),
        _ => c,
    };
    let broadcast = counts.len() == 1 && outer_rows != 1 && limits_of_row(counts[0]) == 0;
    let aligned = || {
        if counts.len() == outer_rows || broadcast {
            Ok(())
        } else {
            Err(ctx.err(E::NotAligned {
                values: outer_rows,
                partition: counts.len(),
            }))
        }
    };
    // Under a broadcast row, no start is added to anything.
    let starts = if broadcast {
        &[0][..]
    } else {
        &outer[..outer_rows.min(outer.len())]
    };
    let mut at = 0usize;
    let mut rows = counts.iter().map(|&c| {
        let row = p.get(at..at + c).unwrap_or(&[]);
        at += c;
        row
    });
    let nvals = n as i64;
    let (inner, outer_lengths): (Vec<i64>, Vec<usize>) = match partition {
        Partition::RowSplits(_) | Partition::RowLimits(_) => {
            aligned()?;
            let drop_first = matches!(partition, Partition::RowSplits(_));
            let mut limits = Vec::with_capacity(p.len());
            let mut lengths = Vec::with_capacity(counts.len());
            for &start in starts {
                let row = rows.next().unwrap_or(&[]);
                let row = if drop_first { row.get(1..).unwrap_or(&[]) } else { row };
                lengths.push(row.len());
                limits.extend(row.iter().map(|&x| ctx.add(x, start)));
            }
            if ctx.validate {
                check_limits(ctx, &limits, nvals)?;
            }
            let mut splits = Vec::with_capacity(limits.len() + 1);
            splits.push(0);
            splits.extend(limits);
            (splits, lengths)
        }
        Partition::RowStarts(_) => {
            aligned()?;
            let mut splits = Vec::with_capacity(p.len() + 1);
            let mut lengths = Vec::with_capacity(counts.len());
            for &start in starts {
                let row = rows.next().unwrap_or(&[]);
                lengths.push(row.len());
                splits.extend(row.iter().map(|&x| ctx.add(x, start)));
            }
            if ctx.validate {
                check_starts(ctx, &splits, nvals)?;
            }
            splits.push(ctx.cast(nvals));
            (splits, lengths)
        }
        Partition::RowLengths(_) => {
            if ctx.validate {
                check_lengths(ctx, &p)?;
            }
            let splits = ctx.splits_from_lengths(p.iter().copied());
            if ctx.validate {
                check_nvals(ctx, &splits, nvals)?;
            }
            (splits, counts.to_vec())
        }
        Partition::ValueRowIds(_) => {
            // Each outer row's ids are offset by the rows of the rows before it, where a row
            // has max(id) + 1 rows.
            let mut adjusted = Vec::with_capacity(p.len());
            let mut nrows = Vec::with_capacity(counts.len());
            let mut offset = 0i64;
            for row in rows {
                let most = row.iter().map(|&x| ctx.add(x, 1)).max().unwrap_or(i64::MIN).max(0);
                adjusted.extend(row.iter().map(|&x| ctx.add(x, offset)));
                offset = ctx.add(offset, most);
                nrows.push(most);
            }
            let inner = splits_from_rowids(ctx, &adjusted, n)?;
            // `from_row_lengths(inner, nrows)`: the outer level counts the implied rows.
            let outer_splits = ctx.splits_from_lengths(nrows.iter().copied());
            if ctx.validate {
                check_nvals(ctx, &outer_splits, inner.len() as i64 - 1)?;
            }
            rt.pop_outer();
            rt.push_outer(inner, None);
            rt.push_outer(outer_splits, None);
            return Ok(());
        }
        Partition::UniformRowLength(_) => return Ok(()),
    };
    rt.pop_outer();
    rt.push_outer(inner, None);
    rt.push_outer(splits_of(&outer_lengths), None);
    Ok(())
}

/// Applies one partition to a single example's `rt` (no batch level).
pub(crate) fn apply_single(
    rt: &mut RaggedBuild,
    partition: &Partition,
    column: Option<&Column>,
    ctx: &Ctx<'_>,
) -> Result<(), ParseError> {
    // What the new partition splits: the rows of the ragged tensor so far, or the values.
    let nvals: i64 = if rt.ragged_rank() == 0 {
        rt.flat_shape.first().copied().unwrap_or(0) as i64
    } else {
        rt.outer().len() as i64 - 1
    };
    if let Partition::UniformRowLength(length) = *partition {
        if rt.ragged_rank() == 0 {
            return reshape_rows(ctx, rt, length);
        }
        let nrows = if length == 0 { 0 } else { nvals.div_euclid(length) };
        if ctx.validate && nrows.wrapping_mul(length) != nvals {
            return Err(ctx.err(E::UniformMismatch {
                length,
                rows: nrows,
                values: nvals,
            }));
        }
        let splits: Vec<i64> = (0..=nrows.max(-1)).map(|i| i * length).collect();
        rt.push_outer(splits, Some(length));
        return Ok(());
    }
    let (p, _) = partition_column(ctx, partition, column)?;
    let splits = match partition {
        Partition::RowSplits(_) => {
            if ctx.validate {
                check_splits(ctx, "from_row_splits", &p, nvals)?;
            }
            // Without `validate` TensorFlow still refuses splits with no element: they would
            // make a ragged tensor of -1 rows.
            if p.is_empty() {
                return Err(ctx.err(E::NoSplits {
                    partition: what(partition),
                }));
            }
            p
        }
        Partition::RowLengths(_) => {
            if ctx.validate {
                check_lengths(ctx, &p)?;
            }
            let splits = ctx.splits_from_lengths(p.iter().copied());
            if ctx.validate {
                check_nvals(ctx, &splits, nvals)?;
            }
            splits
        }
        Partition::RowStarts(_) => {
            if ctx.validate {
                check_starts(ctx, &p, nvals)?;
            }
            let mut splits = p;
            splits.push(ctx.cast(nvals));
            splits
        }
        Partition::RowLimits(_) => {
            if ctx.validate {
                check_limits(ctx, &p, nvals)?;
            }
            let mut splits = Vec::with_capacity(p.len() + 1);
            splits.push(0);
            splits.extend(p);
            splits
        }
        Partition::ValueRowIds(_) => splits_from_rowids(ctx, &p, usize::try_from(nvals).unwrap_or(0))?,
        Partition::UniformRowLength(_) => return Ok(()),
    };
    rt.push_outer(splits, None);
    Ok(())
}

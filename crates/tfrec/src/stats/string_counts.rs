//! The distinct values of one string feature with their counts: TFDV's top values, rank
//! histogram and `unique` are exact, so every distinct value is kept.
//!
//! The values live back to back in pages of bytes; the table holds each one's place, count
//! and 32 bits of its hash. A chunk's counts are merged into a file's without hashing
//! a value again, allocating a value, or freeing one: the merge, which runs in file order
//! while the other threads count the next chunks, reads the chunk's table and copies only the
//! bytes of values it did not have. With a map of boxed values it allocated and freed every
//! distinct value of every chunk, and rehashed every value as the map grew.

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Values' bytes are kept in pages of this many bytes (the first grows up to it).
const ARENA_PAGE_BYTES: usize = 1 << 12;

/// `Value::start` of a value that has a page of its own (it was longer than a page).
const WHOLE_PAGE: u32 = u32::MAX;

/// One distinct value: where its bytes are in the arena, 32 bits of its hash, its count.
#[derive(Debug, Clone, Copy)]
struct Value {
    page: u32,
    /// Where the bytes are in the page, or [`WHOLE_PAGE`] (then they are the page).
    start: u32,
    end: u32,
    hash: u32,
    count: u64,
}

/// Distinct byte strings and how often each was seen.
///
/// The values' bytes are kept in pages that never move once full, and the table holds each
/// value's place, hash and count: the table grows without hashing a value again, and a
/// value costs no allocation of its own.
#[derive(Debug, Clone, Default)]
pub(super) struct StringCounts {
    /// Every distinct value's bytes.
    arena: Vec<Vec<u8>>,
    table: HashTable<Value>,
}

/// A value's hash, 32 bits of it kept: both halves of the 64-bit hash folded together.
#[inline(always)]
fn hash_of(value: &[u8]) -> u32 {
    let full = FxBuildHasher.hash_one(value);
    (full ^ (full >> 32)) as u32
}

/// The table's hash of a value whose hash is `hash`: the 32 bits in both halves, so that the
/// table's bucket (low bits) and tag (top bits) both come from them.
#[inline(always)]
fn table_hash(hash: u32) -> u64 {
    (u64::from(hash) << 32) | u64::from(hash)
}

/// `value`'s bytes in `arena`.
#[inline(always)]
fn bytes_of<'a>(arena: &'a [Vec<u8>], value: &Value) -> &'a [u8] {
    let page = &arena[value.page as usize];
    if value.start == WHOLE_PAGE {
        page
    } else {
        &page[value.start as usize..value.end as usize]
    }
}

/// `table`'s entry for `value`, whose hash is `hash`: the value found, or where it goes.
#[inline(always)]
fn entry_of<'t>(table: &'t mut HashTable<Value>, arena: &[Vec<u8>], value: &[u8], hash: u32) -> Entry<'t, Value> {
    table.entry(
        table_hash(hash),
        |v| v.hash == hash && bytes_of(arena, v) == value,
        |v| table_hash(v.hash),
    )
}

/// Keeps `bytes` in `arena`: where they are, as a [`Value`]'s `(page, start, end)`.
fn keep(arena: &mut Vec<Vec<u8>>, bytes: &[u8]) -> (u32, u32, u32) {
    if bytes.len() > ARENA_PAGE_BYTES {
        arena.push(bytes.to_vec());
        return (page_number(arena), WHOLE_PAGE, 0);
    }
    let full = arena
        .last()
        .is_none_or(|page| page.len() + bytes.len() > ARENA_PAGE_BYTES);
    if full {
        // The first page grows as values come (a chunk may hold few); later ones are whole.
        let capacity = if arena.is_empty() { 0 } else { ARENA_PAGE_BYTES };
        arena.push(Vec::with_capacity(capacity));
    }
    let page_at = page_number(arena);
    let page = &mut arena[page_at as usize];
    let start = page.len();
    page.extend_from_slice(bytes);
    // Within a page of at most `ARENA_PAGE_BYTES` (less than `WHOLE_PAGE`).
    (page_at, start as u32, page.len() as u32)
}

/// A value not seen before: its bytes kept in `arena`, with its hash and count.
fn new_value(arena: &mut Vec<Vec<u8>>, bytes: &[u8], hash: u32, count: u64) -> Value {
    let (page, start, end) = keep(arena, bytes);
    Value {
        page,
        start,
        end,
        hash,
        count,
    }
}

/// The number of `arena`'s last page.
fn page_number(arena: &[Vec<u8>]) -> u32 {
    // A page is started only for a value the last one could not take, so any two pages in a
    // row hold more than `ARENA_PAGE_BYTES`: 2^32 pages would be 8 TiB of distinct values.
    (arena.len() - 1) as u32
}

impl StringCounts {
    /// The number of distinct values.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no value was counted.
    pub(super) fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Every distinct value with its count, in no particular order (the same for the same
    /// values counted in the same order). Its length is known, so that collecting it
    /// allocates once.
    pub(super) fn iter(&self) -> impl ExactSizeIterator<Item = (&[u8], u64)> + '_ {
        self.table.iter().map(|v| (bytes_of(&self.arena, v), v.count))
    }

    /// Counts `value` once.
    #[inline]
    pub(super) fn add(&mut self, value: &[u8]) {
        self.add_count(value, hash_of(value), 1);
    }

    /// Counts `value` `count` times; `hash` is its [`hash_of`].
    #[inline]
    fn add_count(&mut self, value: &[u8], hash: u32, count: u64) {
        match entry_of(&mut self.table, &self.arena, value, hash) {
            Entry::Occupied(mut found) => found.get_mut().count += count,
            Entry::Vacant(slot) => {
                slot.insert(new_value(&mut self.arena, value, hash, count));
            }
        }
    }

    /// Adds `value` with `count` when it is not there yet; false (and nothing changed) when
    /// it is.
    pub(super) fn insert_new(&mut self, value: &[u8], count: u64) -> bool {
        let hash = hash_of(value);
        match entry_of(&mut self.table, &self.arena, value, hash) {
            Entry::Occupied(_) => false,
            Entry::Vacant(slot) => {
                slot.insert(new_value(&mut self.arena, value, hash, count));
                true
            }
        }
    }

    /// Adds `other`'s counts.
    pub(super) fn merge(&mut self, other: &StringCounts) {
        if self.is_empty() {
            self.clone_from(other);
            return;
        }
        for v in &other.table {
            self.add_count(bytes_of(&other.arena, v), v.hash, v.count);
        }
    }

    /// [`StringCounts::merge`], taking `other` whole when `self` is empty.
    pub(super) fn merge_owned(&mut self, other: StringCounts) {
        if self.is_empty() {
            *self = other;
        } else {
            self.merge(&other);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(values: &[&[u8]]) -> StringCounts {
        let mut c = StringCounts::default();
        for v in values {
            c.add(v);
        }
        c
    }

    fn sorted(c: &StringCounts) -> Vec<(Vec<u8>, u64)> {
        let mut out: Vec<(Vec<u8>, u64)> = c.iter().map(|(v, n)| (v.to_vec(), n)).collect();
        out.sort();
        out
    }

    #[test]
    fn every_distinct_value_is_counted() {
        let c = counts(&[b"b", b"a", b"b", b"", b"a", b"b"]);
        assert_eq!(
            sorted(&c),
            vec![(b"".to_vec(), 1), (b"a".to_vec(), 2), (b"b".to_vec(), 3)]
        );
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn values_longer_than_a_page_and_values_that_fill_pages_read_back() {
        let long = vec![7u8; ARENA_PAGE_BYTES + 1];
        let values: Vec<Vec<u8>> = (0..3 * ARENA_PAGE_BYTES / 100)
            .map(|i| format!("{i:0100}").into_bytes())
            .chain([long.clone(), Vec::new(), long])
            .collect();
        let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        let c = counts(&refs);
        assert_eq!(c.len(), values.len() - 1);
        let mut expected: Vec<(Vec<u8>, u64)> = values[..values.len() - 1].iter().map(|v| (v.clone(), 1)).collect();
        expected.sort();
        expected
            .iter_mut()
            .filter(|(v, _)| v.len() > ARENA_PAGE_BYTES)
            .for_each(|(_, n)| *n = 2);
        assert_eq!(sorted(&c), expected);
    }

    #[test]
    fn merging_gives_the_counts_of_one_pass() {
        let values: Vec<Vec<u8>> = (0..5_000u32).map(|i| format!("v{}", i % 1_237).into_bytes()).collect();
        let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        let whole = counts(&refs);
        for cut in [0, 1, 999, 2_500, 5_000] {
            let (a, b) = refs.split_at(cut);
            let mut merged = counts(a);
            merged.merge(&counts(b));
            assert_eq!(sorted(&merged), sorted(&whole), "cut at {cut}");
            let mut owned = counts(a);
            owned.merge_owned(counts(b));
            assert_eq!(sorted(&owned), sorted(&whole), "cut at {cut}, owned");
        }
    }

    #[test]
    fn a_value_inserted_twice_is_refused() {
        let mut c = StringCounts::default();
        assert!(c.insert_new(b"x", 4));
        assert!(c.insert_new(b"y", 1));
        assert!(!c.insert_new(b"x", 2));
        assert_eq!(sorted(&c), vec![(b"x".to_vec(), 4), (b"y".to_vec(), 1)]);
    }
}

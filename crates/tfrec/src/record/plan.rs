//! Splitting a data set into read units for workers that read apart, each on its own (Ray's
//! read tasks, one process each): a whole file, or for a large plain file the records that start
//! in one byte range of it. Compression, index files and sizes are judged by the rules every
//! reader here follows, so a unit holds exactly the records a sequential read gives.

use std::io::{self, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::compression::{Compression, CompressionChoice};
use super::error::RecordError;
use super::index::RecordIndex;
use super::remote::{is_url_path, Source};

/// Bytes read from a file's start to judge its compression (as the readers do).
const SNIFF_BYTES: u64 = 4096;

/// One worker's share of a data set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadUnit {
    /// The file or object.
    pub path: PathBuf,
    /// The byte range whose records (those whose header starts in it) the unit reads; `None`
    /// for the whole file. Only plain files are cut into ranges.
    pub range: Option<Range<u64>>,
    /// How many records the unit holds, when the file's index says so.
    pub records: Option<u64>,
    /// The bytes the unit covers: the range's length, or the file's size.
    pub bytes: u64,
}

/// Plans the read units of `files` (as [`super::expand_inputs`] gives them): a file is one
/// unit, but a plain file larger than `split_bytes` is cut into ranges of about `split_bytes`.
/// With a usable index beside it (`FILE.idx`, `tfrec index`'s format), the cuts fall on record
/// starts and each unit knows its record count. An index that does not end where its file ends
/// was written for another version of the file and is not used. An object in a store without an
/// index object is one unit: finding its record starts would read it once more.
pub fn plan_read_units(
    files: &[PathBuf],
    compression: CompressionChoice,
    split_bytes: u64,
) -> Result<Vec<ReadUnit>, RecordError> {
    let split_bytes = split_bytes.max(1);
    let mut units = Vec::new();
    for path in files {
        let opened = |e: io::Error| RecordError::open_failed(e, Some(path.clone()));
        let mut source = Source::open(path).map_err(opened)?;
        let size = source.len().map_err(opened)?;
        let plain = is_plain(path, &mut source, compression).map_err(opened)?;
        let remote = is_url_path(path);
        let index = if plain && (!remote || size > split_bytes) {
            usable_index(path, size)
        } else {
            None
        };
        let whole = |records| ReadUnit {
            path: path.clone(),
            range: None,
            records,
            bytes: size,
        };
        if !plain || size <= split_bytes || (remote && index.is_none()) {
            units.push(whole(index.as_ref().map(|i| i.len() as u64)));
            continue;
        }
        let offsets: Option<Vec<u64>> = index.map(|i| i.entries().iter().map(|e| e.offset).collect());
        let mut cuts: Vec<u64> = (1..size.div_ceil(split_bytes)).map(|k| k * split_bytes).collect();
        if let Some(offsets) = &offsets {
            // Each cut moves to the first record start at or after it.
            cuts = cuts
                .iter()
                .filter_map(|&cut| offsets.get(offsets.partition_point(|&o| o < cut)).copied())
                .collect();
            cuts.dedup();
        }
        let bounds: Vec<u64> = std::iter::once(0)
            .chain(cuts.into_iter().filter(|&c| 0 < c && c < size))
            .chain(std::iter::once(size))
            .collect();
        for pair in bounds.windows(2) {
            let (start, end) = (pair[0], pair[1]);
            let records = offsets.as_ref().map(|o| {
                let below = |at: u64| o.partition_point(|&x| x < at) as u64;
                below(end) - below(start)
            });
            units.push(ReadUnit {
                path: path.clone(),
                range: Some(start..end),
                records,
                bytes: end - start,
            });
        }
    }
    Ok(units)
}

/// Whether `path` holds plain (uncompressed) records: as chosen, else by its extension, else by
/// its first bytes as [`Compression::detect`] judges them.
fn is_plain(path: &Path, source: &mut Source, choice: CompressionChoice) -> io::Result<bool> {
    let compression = match choice {
        CompressionChoice::Exactly(c) => c,
        CompressionChoice::Auto => match Compression::from_extension(path) {
            Some(c @ (Compression::Gzip | Compression::Zlib)) => c,
            _ => {
                let mut prefix = Vec::new();
                source.take(SNIFF_BYTES).read_to_end(&mut prefix)?;
                Compression::detect(&prefix)
            }
        },
    };
    Ok(compression == Compression::None)
}

/// The index beside `path`, if there is one that fits a file of `size` bytes.
fn usable_index(path: &Path, size: u64) -> Option<RecordIndex> {
    let index = RecordIndex::load(RecordIndex::default_path(path)).ok()?;
    let ends_at = index.entries().last().map_or(0, |e| e.offset.saturating_add(e.len));
    let ordered = index
        .entries()
        .windows(2)
        .all(|w| w[0].offset.saturating_add(w[0].len) == w[1].offset);
    let starts_at_zero = index.entries().first().is_none_or(|e| e.offset == 0);
    (ends_at == size && ordered && starts_at_zero).then_some(index)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::super::test_files::{compressed, framed};
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, bytes).expect("write");
        path
    }

    fn records(n: usize) -> Vec<Vec<u8>> {
        (0..n).map(|i| vec![b'r'; 10 + i % 7]).collect()
    }

    #[test]
    fn small_and_compressed_files_are_one_unit_each() {
        let dir = tempfile::tempdir().expect("dir");
        let rs = records(50);
        let refs: Vec<&[u8]> = rs.iter().map(Vec::as_slice).collect();
        let plain = write(dir.path(), "a.tfrecord", &framed(&refs));
        // GZIP under a plain name: judged by its bytes, so never cut.
        let gzip = write(dir.path(), "b.tfrecord", &compressed(&refs, Compression::Gzip));
        let units = plan_read_units(&[plain.clone(), gzip.clone()], CompressionChoice::Auto, 100).expect("plan");
        assert_eq!(units.iter().filter(|u| u.path == gzip).count(), 1);
        assert!(units.iter().filter(|u| u.path == plain).count() > 1);
        let whole = plan_read_units(std::slice::from_ref(&plain), CompressionChoice::Auto, 1 << 20).expect("plan");
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0].range, None);
        assert_eq!(whole[0].records, None);
    }

    #[test]
    fn an_index_puts_cuts_on_record_starts_and_counts_records() {
        let dir = tempfile::tempdir().expect("dir");
        let rs = records(200);
        let refs: Vec<&[u8]> = rs.iter().map(Vec::as_slice).collect();
        let path = write(dir.path(), "a.tfrecord", &framed(&refs));
        let index = RecordIndex::build(&path).expect("index");
        index.save(RecordIndex::default_path(&path)).expect("save");
        let starts: Vec<u64> = index.entries().iter().map(|e| e.offset).collect();
        for split in [1, 7, 100, 333, 1000, 100_000] {
            let units = plan_read_units(std::slice::from_ref(&path), CompressionChoice::Auto, split).expect("plan");
            let total: u64 = units.iter().map(|u| u.records.expect("indexed")).sum();
            assert_eq!(total, 200, "split {split}");
            let mut at = 0;
            for u in &units {
                let range = u.range.clone().unwrap_or(0..u.bytes);
                assert_eq!(range.start, at, "split {split}: units tile the file");
                assert!(
                    range.start == 0 || starts.contains(&range.start),
                    "split {split}: {range:?}"
                );
                at = range.end;
            }
            assert_eq!(at, fs::metadata(&path).expect("size").len());
        }
    }

    #[test]
    fn an_index_of_another_version_of_the_file_is_not_used() {
        let dir = tempfile::tempdir().expect("dir");
        let rs = records(100);
        let refs: Vec<&[u8]> = rs.iter().map(Vec::as_slice).collect();
        let path = write(dir.path(), "a.tfrecord", &framed(&refs[..60]));
        RecordIndex::build(&path)
            .expect("index")
            .save(RecordIndex::default_path(&path))
            .expect("save");
        // The file grew after its index was written.
        fs::write(&path, framed(&refs)).expect("rewrite");
        let units = plan_read_units(std::slice::from_ref(&path), CompressionChoice::Auto, 300).expect("plan");
        assert!(units.len() > 1);
        assert!(units.iter().all(|u| u.records.is_none()), "{units:?}");
    }
}

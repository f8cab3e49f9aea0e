//! Files in, statistics out: the records of every input (paths, globs, directories, and URLs
//! where the `remote` feature reads them) read with the reader's options, damage skipped or
//! fatal as they say (what was skipped noted on the features), sampled at `sample_rate`,
//! spread over threads by file, each file's partial statistics merged in file order (so that
//! the bytes are the same for any number of threads or processes).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use super::accumulate::StatsAccumulator;
use super::error::{RecordPlace, StatsError};
use super::options::StatsOptions;
use super::proto::DatasetFeatureStatisticsList;
use super::select::{in_sample, note_damage};
use crate::record::{expand_inputs, MultiFileReader, ReadStats, ReaderOptions};

/// What [`generate_statistics`] gives: the statistics, and what reading found (records read,
/// damage skipped).
#[derive(Debug, Clone)]
pub struct GenerateOutput {
    /// The statistics, as TFDV's `generate_statistics_from_tfrecord` gives them.
    pub statistics: DatasetFeatureStatisticsList,
    /// The readers' counters, damage skipped included.
    pub read_stats: ReadStats,
}

/// Statistics of the `Example`s in `inputs`, read with `reader` options (its
/// `on_corruption` decides whether damage stops the run or is skipped and counted), on up to
/// `threads` threads (at least one; files are shared out whole, so one file is read by one
/// thread).
///
/// ```
/// use tfrec::example::Example;
/// use tfrec::record::{ReaderOptions, RecordWriter, WriterOptions};
/// use tfrec::stats::{generate_statistics, StatsOptions};
///
/// let dir = std::env::temp_dir().join(format!("tfrec-stats-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("train.tfrecord");
/// let mut writer = RecordWriter::create(&path, WriterOptions::default())?;
/// for word in ["cat", "dog", "cat"] {
///     writer.write_record(&Example::builder().bytes("animal", [word]).build()?.encode())?;
/// }
/// writer.finish()?;
///
/// let out = generate_statistics(&[path.to_str().unwrap()], ReaderOptions::default(), &StatsOptions::default(), 1)?;
/// let dataset = &out.statistics.datasets[0];
/// assert_eq!(dataset.num_examples, 3);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn generate_statistics<S: AsRef<str>>(
    inputs: &[S],
    reader: ReaderOptions,
    options: &StatsOptions,
    threads: usize,
) -> Result<GenerateOutput, StatsError> {
    let files = expand_inputs(inputs.iter().map(|s| s.as_ref()))?;
    statistics_of_files(files, reader, options, threads)
}

/// [`generate_statistics`] of files already listed (in the order given).
///
/// Each file is accumulated by itself ([`statistics_of_file`]) and the files' partial
/// statistics merged in file order ([`merge_partials`]), whatever the threads: the figures,
/// rounding and quantile sketches included, are the same bytes for any thread count, and the
/// same as those of any other process that merges the files' partials in that order (Ray's
/// workers, `tfrec.ray`).
pub fn statistics_of_files(
    files: Vec<PathBuf>,
    reader: ReaderOptions,
    options: &StatsOptions,
    threads: usize,
) -> Result<GenerateOutput, StatsError> {
    options.validate()?;
    let threads = threads.max(1).min(files.len().max(1));
    let next_file = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel();
        for _ in 0..threads {
            let sender = sender.clone();
            let (files, reader, next_file, stop) = (&files, &reader, &next_file, &stop);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let index = next_file.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(index) else { break };
                    let partial = statistics_of_file(path, reader.clone(), options);
                    if sender.send((index, partial)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        // The partials in file order, as they come: a file done early waits for those before.
        let mut waiting = BTreeMap::new();
        let mut next = 0;
        let in_order = std::iter::from_fn(|| loop {
            if let Some(partial) = waiting.remove(&next) {
                next += 1;
                return Some(partial);
            }
            let (index, partial) = receiver.recv().ok()?;
            waiting.insert(index, partial);
        });
        let out = merge_partials(options, in_order);
        stop.store(true, Ordering::Relaxed);
        out
    })
}

/// The partial statistics of one file: its records read with `reader` options, sampled at
/// `sample_rate`, errors naming the file, offset and record index in the file; with what
/// reading it found.
pub fn statistics_of_file(
    path: &Path,
    reader: ReaderOptions,
    options: &StatsOptions,
) -> Result<(StatsAccumulator, ReadStats), StatsError> {
    accumulate_files(vec![path.to_path_buf()], reader, options)
}

/// Merges partial statistics (with what reading found) in the order given into the
/// statistics, with the damage skipped noted on the features; the first error stops it. The
/// merge starts from an empty accumulator and takes each partial in turn, so the same partials
/// in the same order give the same bytes wherever they were computed.
pub fn merge_partials(
    options: &StatsOptions,
    partials: impl IntoIterator<Item = Result<(StatsAccumulator, ReadStats), StatsError>>,
) -> Result<GenerateOutput, StatsError> {
    let mut total = StatsAccumulator::new(options.clone())?;
    let mut read_stats = ReadStats::default();
    for partial in partials {
        let (acc, stats) = partial?;
        total.merge(&acc)?;
        read_stats.add(&stats);
    }
    let mut statistics = total.finish();
    for dataset in &mut statistics.datasets {
        note_damage(dataset, &read_stats);
    }
    Ok(GenerateOutput { statistics, read_stats })
}

fn accumulate_files(
    files: Vec<PathBuf>,
    reader: ReaderOptions,
    options: &StatsOptions,
) -> Result<(StatsAccumulator, ReadStats), StatsError> {
    let mut acc = StatsAccumulator::new(options.clone())?;
    let mut records = MultiFileReader::new(files, reader);
    let mut index = 0u64;
    while let Some(record) = records.next_located()? {
        if !in_sample(options.sample_rate, record.path, record.offset) {
            continue;
        }
        let place = || RecordPlace {
            path: record.path.to_path_buf(),
            offset: record.offset,
            record_index: index,
        };
        acc.add_record(record.data, Some(&place))?;
        index += 1;
    }
    Ok((acc, records.stats()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::Example;
    use crate::record::{RecordWriter, WriterOptions};
    use crate::stats::encode_statistics;

    /// Files of uneven sizes whose numeric values overflow the sketches' exact range and whose
    /// floats round differently when summed in other groupings.
    fn write_files(dir: &Path) -> Vec<PathBuf> {
        let sizes = [9_000u64, 25_000, 3, 14_000, 0, 21_000];
        let mut files = Vec::new();
        let mut n = 0u64;
        for (i, size) in sizes.into_iter().enumerate() {
            let path = dir.join(format!("part-{i}.tfrecord"));
            let mut writer = RecordWriter::create(&path, WriterOptions::default()).unwrap();
            for _ in 0..size {
                n += 1;
                let record = Example::builder()
                    .int64("n", [((n * 7919) % 100_003) as i64])
                    .float("x", [(n as f32).sqrt() * 0.1])
                    .bytes("s", [format!("v{}", n % 13)])
                    .build()
                    .unwrap();
                writer.write_record(&record.encode()).unwrap();
            }
            writer.finish().unwrap();
            files.push(path);
        }
        files
    }

    #[test]
    fn the_bytes_are_the_same_for_any_thread_count_and_equal_the_merged_file_partials() {
        let dir = std::env::temp_dir().join(format!("tfrec-stats-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = write_files(&dir);
        let options = StatsOptions::default();
        let run = |threads| {
            let out = statistics_of_files(files.clone(), ReaderOptions::default(), &options, threads).unwrap();
            encode_statistics(&out.statistics)
        };
        let one = run(1);
        for threads in [2, 3, 6] {
            assert!(run(threads) == one, "{threads} threads differ from one");
        }
        // Partials computed elsewhere, sent as bytes and merged in file order: the same bytes.
        let partials = files.iter().map(|path| {
            let (acc, read) = statistics_of_file(path, ReaderOptions::default(), &options)?;
            Ok((StatsAccumulator::from_partial_bytes(&acc.to_partial_bytes())?, read))
        });
        let merged = merge_partials(&options, partials).unwrap();
        assert!(encode_statistics(&merged.statistics) == one);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

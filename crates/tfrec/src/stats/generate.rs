//! Files in, statistics out: the records of every input (paths, globs, directories, and URLs
//! where the `remote` feature reads them) read with the reader's options, damage skipped or
//! fatal as they say (what was skipped noted on the features), sampled at `sample_rate`,
//! spread over threads by file, the partial statistics merged in file order.

use std::path::PathBuf;

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
pub fn statistics_of_files(
    files: Vec<PathBuf>,
    reader: ReaderOptions,
    options: &StatsOptions,
    threads: usize,
) -> Result<GenerateOutput, StatsError> {
    options.validate()?;
    let threads = threads.max(1).min(files.len().max(1));
    let shares = share_out(files, threads);
    let partials: Vec<Result<(StatsAccumulator, ReadStats), StatsError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                let reader = reader.clone();
                scope.spawn(move || accumulate_files(share, reader, options))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
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

/// `files` in `parts` runs of consecutive files, as even in count as they can be.
fn share_out(files: Vec<PathBuf>, parts: usize) -> Vec<Vec<PathBuf>> {
    let (base, extra) = (files.len() / parts, files.len() % parts);
    let mut files = files.into_iter();
    (0..parts)
        .map(|i| files.by_ref().take(base + usize::from(i < extra)).collect())
        .collect()
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

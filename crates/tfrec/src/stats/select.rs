//! Which records and features a statistics run counts: TFDV's `sample_rate` and
//! `feature_allowlist`, and the damage the readers skipped, noted on the features.

use std::path::Path;

use super::proto;
use crate::record::ReadStats;
use crate::rng::SplitMix64;

/// The seed of the record sample: fixed, so that a run's sample is the same every time.
const SAMPLE_SEED: u64 = 0x7466_7265_635f_7374;

/// Whether the record at `offset` of `path` is in the sample of `rate` (each record kept with
/// probability `rate`, decided by a hash of its file and offset: the same records whatever the
/// threads). TFDV keeps or drops whole record batches at random, so its sample and its
/// figures differ from run to run and from tfrec's; only the expected counts agree.
pub(super) fn in_sample(rate: Option<f64>, path: &Path, offset: u64) -> bool {
    let Some(rate) = rate else { return true };
    if rate >= 1.0 {
        return true;
    }
    let mut key = SAMPLE_SEED;
    for byte in path.as_os_str().as_encoded_bytes() {
        key = SplitMix64::new(key ^ u64::from(*byte)).next_u64();
    }
    let draw = SplitMix64::new(key ^ offset).next_u64();
    // The top 53 bits as a uniform draw in [0, 1).
    ((draw >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < rate
}

/// Keeps the features whose top-level name is in `allowlist`, as TFDV's `feature_allowlist`
/// selects the columns of each record batch: a context feature by its name, the feature lists
/// all together by `##SEQUENCE##`. A batch with none of the features left has no rows for
/// TFDV, so `num_examples` is then 0.
pub(super) fn keep_allowed(dataset: &mut proto::DatasetFeatureStatistics, allowlist: &[String]) {
    use proto::feature_name_statistics::FieldId;
    dataset.features.retain(|f| match &f.field_id {
        Some(FieldId::Path(p)) => p.step.first().is_some_and(|top| allowlist.contains(top)),
        Some(FieldId::Name(name)) => allowlist.contains(name),
        None => false,
    });
    if dataset.features.is_empty() {
        dataset.num_examples = 0;
    }
}

/// Notes on every feature what the readers skipped as damaged (`--skip-corrupt`,
/// `on_corruption`), as custom statistics: `tfrec_damaged_regions_skipped`,
/// `tfrec_damaged_bytes_skipped`, `tfrec_damaged_files_skipped` (the figures of every feature
/// leave those records out; tensorflow_metadata has no field for them, and TFDV and Facets
/// show custom statistics as they are). Nothing when nothing was skipped, so the statistics of
/// sound files are TFDV's.
pub(super) fn note_damage(dataset: &mut proto::DatasetFeatureStatistics, read: &ReadStats) {
    use proto::custom_statistic::Val;
    if read.skipped_regions == 0 && read.skipped_files == 0 {
        return;
    }
    let notes = [
        ("tfrec_damaged_regions_skipped", read.skipped_regions),
        ("tfrec_damaged_bytes_skipped", read.skipped_bytes),
        ("tfrec_damaged_files_skipped", read.skipped_files),
    ];
    for feature in &mut dataset.features {
        for (name, n) in notes {
            feature.custom_stats.push(proto::CustomStatistic {
                name: name.to_owned(),
                val: Some(Val::Num(n as f64)),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_keeps_about_the_rate_and_is_the_same_every_time() {
        let path = Path::new("data/train.tfrecord");
        let kept = (0..20_000u64).filter(|&i| in_sample(Some(0.25), path, i * 37)).count();
        assert!((4_500..5_500).contains(&kept), "{kept}");
        let again = (0..20_000u64).filter(|&i| in_sample(Some(0.25), path, i * 37)).count();
        assert_eq!(kept, again);
        assert!((0..100).all(|i| in_sample(None, path, i) && in_sample(Some(1.0), path, i)));
    }

    fn dataset(paths: &[&[&str]]) -> proto::DatasetFeatureStatistics {
        use proto::feature_name_statistics::FieldId;
        proto::DatasetFeatureStatistics {
            num_examples: 7,
            features: paths
                .iter()
                .map(|p| proto::FeatureNameStatistics {
                    field_id: Some(FieldId::Path(proto::Path {
                        step: p.iter().map(|s| s.to_string()).collect(),
                    })),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_allowlist_keeps_top_level_names_and_no_feature_left_means_no_examples() {
        let all: &[&[&str]] = &[&["a"], &["b"], &["##SEQUENCE##"], &["##SEQUENCE##", "a"]];
        let mut d = dataset(all);
        keep_allowed(&mut d, &["a".to_owned(), "zzz".to_owned()]);
        assert_eq!((d.features.len(), d.num_examples), (1, 7));
        let mut d = dataset(all);
        keep_allowed(&mut d, &["##SEQUENCE##".to_owned()]);
        assert_eq!((d.features.len(), d.num_examples), (2, 7));
        let mut d = dataset(all);
        keep_allowed(&mut d, &["zzz".to_owned()]);
        assert_eq!((d.features.len(), d.num_examples), (0, 0));
    }

    #[test]
    fn damage_is_noted_on_every_feature_only_when_something_was_skipped() {
        let mut d = dataset(&[&["a"], &["b"]]);
        note_damage(&mut d, &ReadStats::default());
        assert!(d.features.iter().all(|f| f.custom_stats.is_empty()));
        let read = ReadStats {
            skipped_regions: 2,
            skipped_bytes: 130,
            ..Default::default()
        };
        note_damage(&mut d, &read);
        for f in &d.features {
            let notes: Vec<(&str, Option<&proto::custom_statistic::Val>)> = f
                .custom_stats
                .iter()
                .map(|c| (c.name.as_str(), c.val.as_ref()))
                .collect();
            use proto::custom_statistic::Val::Num;
            assert_eq!(
                notes,
                [
                    ("tfrec_damaged_regions_skipped", Some(&Num(2.0))),
                    ("tfrec_damaged_bytes_skipped", Some(&Num(130.0))),
                    ("tfrec_damaged_files_skipped", Some(&Num(0.0))),
                ]
            );
        }
    }
}

//! What the statistics compute: TFDV's `StatsOptions`, with its defaults.

use super::error::StatsError;

/// Options of a statistics run, named and defaulted as TFDV's `StatsOptions`.
///
/// ```
/// use tfrec::stats::StatsOptions;
///
/// let options = StatsOptions::default().num_top_values(5);
/// assert_eq!(options.num_histogram_buckets, 10);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StatsOptions {
    /// Most frequent string values kept in `top_values` (default 20).
    pub num_top_values: usize,
    /// Buckets of a string feature's rank histogram (default 1000).
    pub num_rank_histogram_buckets: usize,
    /// Buckets of the values-per-example quantiles histogram (default 10).
    pub num_values_histogram_buckets: usize,
    /// Buckets of a numeric feature's standard (equal-width) histogram (default 10).
    pub num_histogram_buckets: usize,
    /// Buckets of a numeric feature's quantiles histogram (default 10).
    pub num_quantiles_histogram_buckets: usize,
    /// Rank error of the quantiles sketches (default 0.01).
    pub epsilon: f64,
    /// Which message the records hold (default [`RecordMessage::Detect`]).
    pub message: RecordMessage,
    /// The share of records counted, in (0, 1] (default `None`: all). Each record is kept or
    /// not by a hash of its file and offset, the same every run; TFDV keeps whole batches at
    /// random, so the two samples differ (see `select`).
    pub sample_rate: Option<f64>,
    /// The top-level features kept (default `None`: all): context features by name, feature
    /// lists all together by `##SEQUENCE##`, as TFDV's `feature_allowlist`.
    pub feature_allowlist: Option<Vec<String>>,
}

/// Which message the records of a statistics run hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordMessage {
    /// Each record by itself: a record with a `feature_lists` field (field 2) is read as a
    /// `SequenceExample`, any other as an `Example`. The figures are those of
    /// [`RecordMessage::SequenceExample`] for every valid input but an `Example` carrying an
    /// unknown field 2, and those of [`RecordMessage::Example`] for files of Examples.
    #[default]
    Detect,
    /// `tf.train.Example`, as TFDV's `generate_statistics_from_tfrecord` reads every record
    /// (a SequenceExample read so gives its context features only).
    Example,
    /// `tf.train.SequenceExample`, as TFDV computes statistics of tfx_bsl's
    /// `TFSequenceExampleRecord`: context features, then the feature lists under the
    /// `##SEQUENCE##` struct.
    SequenceExample,
}

impl Default for StatsOptions {
    fn default() -> Self {
        StatsOptions {
            num_top_values: 20,
            num_rank_histogram_buckets: 1000,
            num_values_histogram_buckets: 10,
            num_histogram_buckets: 10,
            num_quantiles_histogram_buckets: 10,
            epsilon: 0.01,
            message: RecordMessage::Detect,
            sample_rate: None,
            feature_allowlist: None,
        }
    }
}

impl StatsOptions {
    /// Sets [`StatsOptions::num_top_values`].
    pub fn num_top_values(mut self, n: usize) -> Self {
        self.num_top_values = n;
        self
    }
    /// Sets [`StatsOptions::num_rank_histogram_buckets`].
    pub fn num_rank_histogram_buckets(mut self, n: usize) -> Self {
        self.num_rank_histogram_buckets = n;
        self
    }
    /// Sets [`StatsOptions::num_values_histogram_buckets`].
    pub fn num_values_histogram_buckets(mut self, n: usize) -> Self {
        self.num_values_histogram_buckets = n;
        self
    }
    /// Sets [`StatsOptions::num_histogram_buckets`].
    pub fn num_histogram_buckets(mut self, n: usize) -> Self {
        self.num_histogram_buckets = n;
        self
    }
    /// Sets [`StatsOptions::num_quantiles_histogram_buckets`].
    pub fn num_quantiles_histogram_buckets(mut self, n: usize) -> Self {
        self.num_quantiles_histogram_buckets = n;
        self
    }
    /// Sets [`StatsOptions::epsilon`].
    pub fn epsilon(mut self, eps: f64) -> Self {
        self.epsilon = eps;
        self
    }

    /// Sets [`StatsOptions::message`].
    pub fn message(mut self, message: RecordMessage) -> Self {
        self.message = message;
        self
    }

    /// Sets [`StatsOptions::sample_rate`].
    pub fn sample_rate(mut self, rate: Option<f64>) -> Self {
        self.sample_rate = rate;
        self
    }

    /// Sets [`StatsOptions::feature_allowlist`].
    pub fn feature_allowlist(mut self, names: Option<Vec<String>>) -> Self {
        self.feature_allowlist = names;
        self
    }

    /// Checks the ranges TFDV checks: histograms of at least 2 buckets (1 for the standard
    /// one), `epsilon` in (0, 1), `sample_rate` in (0, 1].
    pub fn validate(&self) -> Result<(), StatsError> {
        let bad = |what: &str| Err(StatsError::InvalidOption(what.to_owned()));
        if self.num_values_histogram_buckets < 2 {
            return bad("num_values_histogram_buckets must be at least 2");
        }
        if self.num_quantiles_histogram_buckets < 2 {
            return bad("num_quantiles_histogram_buckets must be at least 2");
        }
        if self.num_histogram_buckets < 1 {
            return bad("num_histogram_buckets must be at least 1");
        }
        if !(self.epsilon > 0.0 && self.epsilon < 1.0) {
            return bad("epsilon must be in (0, 1)");
        }
        if self.sample_rate.is_some_and(|r| !(r > 0.0 && r <= 1.0)) {
            return bad("sample_rate must be in (0, 1]");
        }
        Ok(())
    }
}

//! A progress bar over the bytes of the input files, drawn only when stderr is a terminal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tfrec::record::MultiFileReader;

/// Updates the bar every this many records, so drawing costs nothing measurable.
const UPDATE_EVERY: u64 = 4096;

pub struct Progress {
    bar: ProgressBar,
    records: u64,
    /// The reader's count of on-disk bytes read.
    disk_bytes: Arc<AtomicU64>,
}

impl Progress {
    /// A bar sized to the files `reader` will read; hidden when stderr is not a terminal.
    pub fn for_reader(reader: &MultiFileReader) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(reader.total_disk_bytes()), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Progress {
            bar,
            records: 0,
            disk_bytes: reader.disk_bytes_counter(),
        }
    }

    /// Notes one record; redraws now and then.
    pub fn record(&mut self) {
        self.records += 1;
        if self.records % UPDATE_EVERY == 0 {
            self.bar.set_position(self.disk_bytes.load(Ordering::Relaxed));
            self.bar.set_message(format!("{} records", self.records));
        }
    }

    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

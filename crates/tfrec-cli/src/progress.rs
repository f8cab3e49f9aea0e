//! One progress bar by bytes, with rate and ETA, for every long command: drawn only when stderr
//! is a terminal, and updated by time (a ticker thread reads a shared byte counter five times a
//! second), so the hot loops pay nothing per record.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tfrec::pipeline::Counters;
use tfrec::record::MultiFileReader;

const TICK: Duration = Duration::from_millis(200);

pub struct Progress {
    bar: ProgressBar,
    stop: Arc<AtomicBool>,
    /// `None` when the bar is hidden (stderr is not a terminal).
    ticker: Option<JoinHandle<()>>,
}

impl Progress {
    /// A bar over `total` bytes whose position is whatever `done` holds.
    pub fn new(total: u64, done: Arc<AtomicU64>) -> Progress {
        Progress::polling(|| total, move || done.load(Ordering::Relaxed))
    }

    /// A bar over `total()` bytes whose position `done` reads (on the ticker thread). `total`
    /// is only called when the bar is drawn: for objects in a store it costs a request each.
    pub fn polling(total: impl FnOnce() -> u64, done: impl Fn() -> u64 + Send + 'static) -> Progress {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let stop = Arc::new(AtomicBool::new(false));
        if bar.is_hidden() {
            return Progress {
                bar,
                stop,
                ticker: None,
            };
        }
        let total = total();
        bar.set_length(total);
        let style = ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        let ticker = {
            let (bar, stop) = (bar.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    bar.set_position(done().min(total));
                    std::thread::park_timeout(TICK);
                }
            })
        };
        Progress {
            bar,
            stop,
            ticker: Some(ticker),
        }
    }

    /// A bar over the on-disk size of `files`, and the byte counter the caller advances as it
    /// reads them (a file whose size cannot be read counts as empty: the bar is only a guide).
    pub fn for_files<P: AsRef<Path>>(files: &[P]) -> (Progress, Arc<AtomicU64>) {
        let done = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&done);
        (
            Progress::polling(|| disk_size(files), move || counter.load(Ordering::Relaxed)),
            done,
        )
    }

    /// A bar over the on-disk size of `files`, read by a pipeline with these `counters`.
    pub fn for_pipeline<P: AsRef<Path>>(files: &[P], counters: Arc<Counters>) -> Progress {
        Progress::polling(|| disk_size(files), move || counters.disk_bytes.load(Ordering::Relaxed))
    }

    /// A bar over the on-disk bytes of the files `reader` reads.
    pub fn for_reader(reader: &MultiFileReader) -> Progress {
        let done = reader.disk_bytes_counter();
        Progress::polling(|| reader.total_disk_bytes(), move || done.load(Ordering::Relaxed))
    }

    /// Removes the bar.
    pub fn finish(self) {}
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(ticker) = self.ticker.take() {
            ticker.thread().unpark();
            let _ = ticker.join();
        }
        self.bar.finish_and_clear();
    }
}

/// The size of `files`, objects in a store too (one that cannot be sized counts as empty: the
/// bar is only a guide).
fn disk_size<P: AsRef<Path>>(files: &[P]) -> u64 {
    files
        .iter()
        .filter_map(|f| tfrec::record::remote::size_of(f.as_ref()).ok())
        .sum()
}

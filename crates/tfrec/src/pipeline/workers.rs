//! The running pipeline: worker threads that take turns reading the next batch from the shared
//! record stream and then work on it, and the [`PipelineIter`] that hands their results over
//! in order (or as they finish), bounded by permits, and stops and joins them when dropped.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::batches::BatchStream;
use super::data::{Counters, RecordBatch};
use super::dataset::{Pipeline, Work};
use super::error::PipelineError;

impl<T: Send + 'static> Pipeline<T> {
    /// Starts the threads and returns the iterator of results.
    pub fn iter(self) -> PipelineIter<T> {
        PipelineIter::start(self)
    }
}

/// What the reader and the workers tell the consumer.
enum Message<T> {
    /// Batch `index` and its result.
    Batch(u64, Result<T, PipelineError>),
    /// The stream ended after this many batches.
    End(u64),
    /// The reader failed after this many batches (a damaged file, or a panic).
    Failed(u64, PipelineError),
}

/// The running pipeline. Dropping it stops and joins every thread.
pub struct PipelineIter<T> {
    results: Option<Receiver<Message<T>>>,
    /// One permit per batch in flight; given back as batches are delivered.
    permits: Option<SyncSender<()>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    counters: Arc<Counters>,
    deterministic: bool,
    /// Batches delivered so far (in deterministic mode, also the next index due).
    delivered: u64,
    pending: BTreeMap<u64, Result<T, PipelineError>>,
    /// The number of batches, once the reader has said.
    end: Option<u64>,
    done: bool,
    /// With no worker thread: the stream and the work, run by `next` itself.
    inline: Option<Inline<T>>,
}

/// A pipeline run on the consumer's thread (see [`Pipeline::threads`]).
struct Inline<T> {
    /// `None` once the stream has ended or failed.
    stream: Option<Box<dyn BatchStream>>,
    work: Work<T>,
    sent: u64,
}

impl<T> Inline<T> {
    /// The next batch's result; `None` at the end. A failure of the stream ends it, after the
    /// batches read before it, as the workers' reader does.
    fn next(&mut self) -> Option<Result<T, PipelineError>> {
        let stream = self.stream.as_mut()?;
        match read_batch(stream.as_mut()) {
            Ok(Some(mut batch)) => {
                batch.index = self.sent;
                self.sent += 1;
                Some(run_work(&self.work, batch))
            }
            // Dropping the stream closes the files, so the counters are complete.
            Ok(None) => {
                self.stream = None;
                None
            }
            Err(e) => {
                self.stream = None;
                Some(Err(e))
            }
        }
    }
}

/// Whether this process may run on one CPU only: its affinity, or its cgroup's CPU quota.
fn one_cpu() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() == 1)
}

/// The stream's next batch; a panic while reading it is an error, not an unwind.
fn read_batch(stream: &mut dyn BatchStream) -> Result<Option<RecordBatch>, PipelineError> {
    match catch_unwind(AssertUnwindSafe(|| stream.next_batch())) {
        Ok(result) => result.map_err(PipelineError::Record),
        Err(payload) => Err(PipelineError::Panic(panic_message(&*payload))),
    }
}

/// `work` on `batch`; a panic in it is the batch's error.
fn run_work<T>(work: &Work<T>, batch: RecordBatch) -> Result<T, PipelineError> {
    catch_unwind(AssertUnwindSafe(|| work(batch)))
        .unwrap_or_else(|payload| Err(PipelineError::Panic(panic_message(&*payload))))
}

/// The record stream, shared by the workers. Each worker takes the lock, fills the next
/// batch, lets go and works on its batch, so one worker reads while the others parse. There
/// is no reader thread of its own: `threads(1)` runs on one core and `threads(n)` on n, and
/// the copy out of the file's buffer is made on the core that then parses the batch.
struct SharedReader {
    /// `None` once the stream has ended, failed or been stopped.
    stream: Option<Box<dyn BatchStream>>,
    /// One permit per batch in flight; the consumer gives them back.
    permits: Receiver<()>,
    /// Batches handed to workers so far (the next batch's index).
    sent: u64,
}

impl SharedReader {
    /// The next batch to work on, or `None` when there is none left. The end of the stream
    /// (or its failure, or a panic while reading) is told to the consumer here, once.
    fn next_batch<T>(&mut self, stop: &AtomicBool, results: &SyncSender<Message<T>>) -> Option<RecordBatch> {
        let stream = self.stream.as_mut()?;
        // A permit first: bounds the batches between here and the consumer.
        if self.permits.recv().is_err() || stop.load(Ordering::Relaxed) {
            self.stream = None;
            return None;
        }
        // Caught here, under the lock, so a panic in a stage neither poisons the lock nor
        // leaves the other workers waiting.
        let end = match read_batch(stream.as_mut()) {
            Ok(Some(mut batch)) => {
                batch.index = self.sent;
                self.sent += 1;
                return Some(batch);
            }
            Ok(None) => Message::End(self.sent),
            Err(e) => Message::Failed(self.sent, e),
        };
        // Closes the files, so the counters are complete before the consumer hears of the end.
        self.stream = None;
        let _ = results.send(end);
        None
    }
}

impl<T: Send + 'static> PipelineIter<T> {
    fn start(p: Pipeline<T>) -> Self {
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let deterministic = p.deterministic;
        let (results, permits, threads, inline) = if p.threads == 0 || (p.threads == 1 && one_cpu()) {
            let inline = Inline {
                stream: Some(p.batched.stream(Arc::clone(&counters), false)),
                work: p.work,
                sent: 0,
            };
            (None, None, Vec::new(), Some(inline))
        } else {
            let (results, permits, threads) = start_workers(p, &counters, &stop);
            (Some(results), Some(permits), threads, None)
        };
        PipelineIter {
            results,
            permits,
            stop,
            threads,
            counters,
            deterministic,
            delivered: 0,
            pending: BTreeMap::new(),
            end: None,
            done: false,
            inline,
        }
    }

    /// The live counters (records, bytes, files done, skipped…).
    pub fn counters(&self) -> Arc<Counters> {
        Arc::clone(&self.counters)
    }

    fn deliver(&mut self, result: Result<T, PipelineError>) -> Result<T, PipelineError> {
        self.delivered += 1;
        self.counters.batches.fetch_add(1, Ordering::Relaxed);
        if result.is_err() {
            self.shut_down();
        } else if let Some(permits) = &self.permits {
            let _ = permits.send(());
        }
        result
    }
}

impl<T: Send + 'static> Iterator for PipelineIter<T> {
    type Item = Result<T, PipelineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(inline) = &mut self.inline {
            if self.done {
                return None;
            }
            return match inline.next() {
                Some(result) => Some(self.deliver(result)),
                None => {
                    self.shut_down();
                    None
                }
            };
        }
        loop {
            if self.done {
                return None;
            }
            if self.end.is_some_and(|end| self.delivered >= end) {
                // A reader failure waits in `pending` at the end position.
                let failure = self.pending.remove(&self.delivered);
                self.shut_down();
                return failure;
            }
            if self.deterministic {
                if let Some(result) = self.pending.remove(&self.delivered) {
                    return Some(self.deliver(result));
                }
            } else if let Some(first) = self.pending.keys().copied().find(|&k| Some(k) != self.end) {
                // A reader failure (kept at the end position) waits for the batches read
                // before it, which workers may still be parsing: delivering it first would
                // shut the pipeline down and lose them.
                if let Some(result) = self.pending.remove(&first) {
                    return Some(self.deliver(result));
                }
            }
            let message = self.results.as_ref().and_then(|rx| rx.recv().ok());
            match message {
                Some(Message::Batch(index, result)) => {
                    if !self.deterministic || index == self.delivered {
                        return Some(self.deliver(result));
                    }
                    self.pending.insert(index, result);
                }
                Some(Message::End(batches)) => self.end = Some(batches),
                Some(Message::Failed(batches, error)) => {
                    self.end = Some(batches);
                    self.pending.insert(batches, Err(error));
                }
                None => {
                    // Every thread is gone: what is pending is all there is.
                    self.end = Some(self.delivered + self.pending.len() as u64);
                    if self.pending.is_empty() {
                        self.shut_down();
                        return None;
                    }
                    let first = self.pending.keys().next().copied().unwrap_or(self.delivered);
                    if let Some(result) = self.pending.remove(&first) {
                        return Some(self.deliver(result));
                    }
                }
            }
        }
    }
}

/// The worker threads of `p`, taking turns at the shared reader; the consumer's ends of the
/// channels: results, and permits (one per batch in flight, given back as batches are taken).
fn start_workers<T: Send + 'static>(
    p: Pipeline<T>,
    counters: &Arc<Counters>,
    stop: &Arc<AtomicBool>,
) -> (Receiver<Message<T>>, SyncSender<()>, Vec<JoinHandle<()>>) {
    let in_flight = p.prefetch + p.threads;
    let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        let _ = permit_tx.send(());
    }
    let (result_tx, result_rx) = mpsc::sync_channel::<Message<T>>(in_flight + 2);
    // Reading is serial (one worker at a time holds the reader), so with two workers or more
    // the data CRCs are checked by each batch's worker instead, in parallel. A mismatch is
    // then that batch's error, which only delivery in order makes the same as the reader's:
    // the batches before it, then the error, and nothing read after it.
    let defer_crc = p.threads > 1 && p.deterministic;
    let reader = Arc::new(Mutex::new(SharedReader {
        stream: Some(p.batched.stream(Arc::clone(counters), defer_crc)),
        permits: permit_rx,
        sent: 0,
    }));
    let mut threads = Vec::with_capacity(p.threads);
    for _ in 0..p.threads {
        let reader = Arc::clone(&reader);
        let result_tx = result_tx.clone();
        let work = Arc::clone(&p.work);
        let stop = Arc::clone(stop);
        threads.push(std::thread::spawn(move || loop {
            let batch = match reader.lock() {
                Ok(mut reader) => reader.next_batch(&stop, &result_tx),
                Err(_) => return,
            };
            let Some(mut batch) = batch else { return };
            let index = batch.index;
            let result = match batch.check_crcs() {
                Ok(()) => run_work(&work, batch),
                Err(e) => Err(PipelineError::Record(e)),
            };
            if result_tx.send(Message::Batch(index, result)).is_err() {
                return;
            }
        }));
    }
    (result_rx, permit_tx, threads)
}

impl<T> PipelineIter<T> {
    /// Stops every thread and waits for them.
    fn shut_down(&mut self) {
        self.done = true;
        self.stop.store(true, Ordering::Relaxed);
        // Closing our ends of the channels wakes every thread blocked on one.
        self.permits = None;
        self.results = None;
        self.inline = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl<T> Drop for PipelineIter<T> {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The text of a caught panic (a worker thread's: the pipeline's or the state saver's), for the error that reports it.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

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
use crate::record::spans::SpanBoard;

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
    work: Work<T>,
    /// Worker threads to start (none: the stream is read and worked on by `next` itself).
    /// (`u32`, as `prefetch`: the iterator is held by value in the bindings' enums, so it is
    /// kept small.)
    worker_threads: u32,
    prefetch: u32,
    deterministic: bool,
    counters: Arc<Counters>,
    results: Option<Receiver<Message<T>>>,
    /// One permit per batch in flight; given back as batches are delivered.
    permits: Option<SyncSender<()>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// Batches delivered so far (in deterministic mode, also the next index due).
    delivered: u64,
    pending: BTreeMap<u64, Result<T, PipelineError>>,
    /// The number of batches, once the reader has said.
    end: Option<u64>,
    done: bool,
    /// With no worker thread: the stream, read by `next` itself.
    inline: Option<Reading>,
    /// With worker threads: the stream they share, kept here too so a restart can take it back.
    shared: Option<Arc<Mutex<SharedReader>>>,
    /// With two worker threads or more: the files read in spans, which workers read ahead
    /// between batches.
    spans: Option<Arc<SpanBoard>>,
}

/// The batch stream of a run, and what can still come of it.
enum StreamState {
    /// Being read.
    Live(Box<BatchStream>),
    /// Read to its end and already restarted (which closed its files, so the counters are
    /// complete): what the next iteration of an enclosing `repeat` reads.
    Parked(Box<BatchStream>),
    /// Failed, or let go of: nothing more comes of it.
    Gone,
}

/// The stream of a run and the number of batches read from it.
struct Reading {
    state: StreamState,
    sent: u64,
}

impl Reading {
    fn new(stream: Box<BatchStream>) -> Self {
        Reading {
            state: StreamState::Live(stream),
            sent: 0,
        }
    }

    fn is_live(&self) -> bool {
        matches!(self.state, StreamState::Live(_))
    }

    /// The next batch, numbered; `None` at the end (and after it). The stream is parked at its
    /// end and let go of on a failure, which is returned once.
    fn next(&mut self) -> Result<Option<RecordBatch>, PipelineError> {
        let StreamState::Live(stream) = &mut self.state else {
            return Ok(None);
        };
        match read_batch(stream.as_mut()) {
            Ok(Some(mut batch)) => {
                batch.index = self.sent;
                self.sent += 1;
                Ok(Some(batch))
            }
            Ok(None) => {
                if let StreamState::Live(mut stream) = std::mem::replace(&mut self.state, StreamState::Gone) {
                    stream.restart();
                    self.state = StreamState::Parked(stream);
                }
                Ok(None)
            }
            Err(e) => {
                self.state = StreamState::Gone;
                Err(e)
            }
        }
    }

    /// Lets go of a stream still being read (closing its files); a parked one stays.
    fn release(&mut self) {
        if self.is_live() {
            self.state = StreamState::Gone;
        }
    }

    /// The stream at the start of its next iteration, or `None` when it failed.
    fn into_restarted(self) -> Option<Box<BatchStream>> {
        match self.state {
            StreamState::Live(mut stream) => {
                stream.restart();
                Some(stream)
            }
            StreamState::Parked(stream) => Some(stream),
            StreamState::Gone => None,
        }
    }
}

/// Whether this process may run on one CPU only: its affinity, or its cgroup's CPU quota.
fn one_cpu() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() == 1)
}

/// The stream's next batch; a panic while reading it is an error, not an unwind.
fn read_batch(stream: &mut BatchStream) -> Result<Option<RecordBatch>, PipelineError> {
    catch_unwind(AssertUnwindSafe(|| stream.next_item()))
        .unwrap_or_else(|payload| Err(PipelineError::Panic(panic_message(&*payload))))
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
    reading: Reading,
    /// One permit per batch in flight; the consumer gives them back.
    permits: Receiver<()>,
}

impl SharedReader {
    /// The next batch to work on, or `None` when there is none left. The end of the stream
    /// (or its failure, or a panic while reading) is told to the consumer here, once.
    fn next_batch<T>(&mut self, stop: &AtomicBool, results: &SyncSender<Message<T>>) -> Option<RecordBatch> {
        if !self.reading.is_live() {
            return None;
        }
        // A permit first: bounds the batches between here and the consumer. Stopped, the
        // stream stays where it is, for the iterator to let go of or restart.
        if self.permits.recv().is_err() || stop.load(Ordering::Relaxed) {
            return None;
        }
        // Caught in `read_batch`, under the lock, so a panic in a stage neither poisons the
        // lock nor leaves the other workers waiting.
        let end = match self.reading.next() {
            Ok(Some(batch)) => return Some(batch),
            Ok(None) => Message::End(self.reading.sent),
            Err(e) => Message::Failed(self.reading.sent, e),
        };
        let _ = results.send(end);
        None
    }
}

impl<T: Send + 'static> PipelineIter<T> {
    fn start(p: Pipeline<T>) -> Self {
        let counters = Arc::new(Counters::default());
        let worker_threads = if p.threads == 1 && one_cpu() { 0 } else { p.threads };
        // Reading is serial (one worker at a time holds the reader), so with two workers or more
        // the data CRCs are checked by each batch's worker instead, in parallel. A mismatch is
        // then that batch's error, which only delivery in order makes the same as the reader's:
        // the batches before it, then the error, and nothing read after it.
        let defer_crc = worker_threads > 1 && p.deterministic;
        // With two workers or more, a file with an index is cut into spans that the workers
        // read (inflate, check) in parallel ahead of the stream, which takes them in order:
        // one file is read on every core, into the same batches.
        let spans = (worker_threads > 1).then(|| Arc::new(SpanBoard::default()));
        let ahead = 2 * worker_threads;
        let small = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let stream = p.batched.stream(
            Arc::clone(&counters),
            defer_crc,
            spans.clone().map(|board| (board, ahead)),
        );
        let mut iter = PipelineIter {
            work: p.work,
            worker_threads: small(worker_threads),
            prefetch: small(p.prefetch),
            deterministic: p.deterministic,
            counters,
            results: None,
            permits: None,
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            delivered: 0,
            pending: BTreeMap::new(),
            end: None,
            done: false,
            inline: None,
            shared: None,
            spans,
        };
        iter.launch(stream);
        iter
    }

    /// Runs `stream` from where it stands: on the iterating thread, or on new worker threads.
    fn launch(&mut self, stream: Box<BatchStream>) {
        self.delivered = 0;
        self.pending.clear();
        self.end = None;
        self.done = false;
        self.stop = Arc::new(AtomicBool::new(false));
        if self.worker_threads == 0 {
            self.inline = Some(Reading::new(stream));
        } else {
            self.start_workers(stream);
        }
    }

    /// Starts the pipeline over, as a `repeat` of everything it runs would: its stream
    /// restarted (its shuffles reshuffled, as [`ShuffleBuffer::restart`](crate::record::ShuffleBuffer::restart)
    /// does), the batches it had read ahead dropped, its counters kept. After a failure it
    /// stays ended.
    pub(crate) fn restart(&mut self) {
        self.stop_threads();
        let reading = match (self.inline.take(), self.shared.take()) {
            (Some(reading), _) => Some(reading),
            (None, Some(shared)) => shared.lock().ok().map(|mut reader| Reading {
                state: std::mem::replace(&mut reader.reading.state, StreamState::Gone),
                sent: 0,
            }),
            (None, None) => None,
        };
        match reading.and_then(Reading::into_restarted) {
            Some(stream) => self.launch(stream),
            None => self.done = true,
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

    /// The next result worked on this thread (no worker threads): a failure of the stream ends
    /// it, after the batches read before it, as the workers' reader does.
    fn next_inline(&mut self) -> Option<Result<T, PipelineError>> {
        let reading = self.inline.as_mut()?;
        let result = match reading.next() {
            Ok(Some(batch)) => run_work(&self.work, batch),
            Ok(None) => {
                self.shut_down();
                return None;
            }
            Err(e) => Err(e),
        };
        Some(self.deliver(result))
    }
}

impl<T: Send + 'static> Iterator for PipelineIter<T> {
    type Item = Result<T, PipelineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.inline.is_some() {
            return self.next_inline();
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

impl<T: Send + 'static> PipelineIter<T> {
    /// Worker threads taking turns at `stream`, and the consumer's ends of the channels:
    /// results, and permits (one per batch in flight, given back as batches are taken).
    fn start_workers(&mut self, stream: Box<BatchStream>) {
        let in_flight = self.prefetch as usize + self.worker_threads as usize;
        let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(in_flight);
        for _ in 0..in_flight {
            let _ = permit_tx.send(());
        }
        let (result_tx, result_rx) = mpsc::sync_channel::<Message<T>>(in_flight + 2);
        let reader = Arc::new(Mutex::new(SharedReader {
            reading: Reading::new(stream),
            permits: permit_rx,
        }));
        for _ in 0..self.worker_threads {
            let reader = Arc::clone(&reader);
            let result_tx = result_tx.clone();
            let work = Arc::clone(&self.work);
            let stop = Arc::clone(&self.stop);
            let spans = self.spans.clone();
            self.threads.push(std::thread::spawn(move || loop {
                // Spans the stream will want first, outside its lock, so that reading one
                // file's spans goes on on every worker while one of them fills a batch.
                if let Some(board) = &spans {
                    while !stop.load(Ordering::Relaxed) && board.help() {}
                }
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
        self.results = Some(result_rx);
        self.permits = Some(permit_tx);
        self.shared = Some(reader);
    }
}

impl<T> PipelineIter<T> {
    /// Stops every thread and waits for them; the stream stays where it is.
    fn stop_threads(&mut self) {
        self.done = true;
        self.stop.store(true, Ordering::Relaxed);
        // Closing our ends of the channels wakes every thread blocked on one.
        self.permits = None;
        self.results = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    /// Stops every thread and lets go of the stream (closing its files, so the counters are
    /// complete); a stream read to its end stays parked for a restart.
    fn shut_down(&mut self) {
        self.stop_threads();
        if let Some(reading) = &mut self.inline {
            reading.release();
        }
        if let Some(Ok(mut reader)) = self.shared.as_ref().map(|r| r.lock()) {
            reader.reading.release();
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

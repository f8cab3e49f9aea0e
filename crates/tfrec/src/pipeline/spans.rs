//! One file on many cores: a file with an index beside it (a GZIP or ZLIB file's seek index,
//! a plain file's `.idx`) is cut into spans that start at record boundaries (from a checkpoint
//! of the seek index, or about a MiB of records of a plain file), and the worker threads
//! read, inflate and check spans ahead of the record stream ([`SpanBoard::help`]), while the
//! stream takes them in file order ([`FileSpans::take_next`]). The records, their order, the
//! batches and so the output are those of a sequential read: only who does the work changes.
//!
//! A span that fails (damage, an index that does not fit, a record over the length limit)
//! hands the file back to the sequential reader at the first record not yet given out, so
//! errors, `--skip-corrupt` and their counts are exactly the sequential reader's.

use std::collections::BTreeMap;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::record::format::FRAMING_LEN;
use crate::record::{RecordFile, Span};

/// The files being read in spans, in the order the stream opened them, for the workers to
/// help with. Shared by the stream and the workers of one running pipeline.
#[derive(Default)]
pub(crate) struct SpanBoard {
    files: Mutex<Vec<Arc<FileSpans>>>,
}

/// A lock that a panic elsewhere cannot leave unusable: the state under it is a plain map of
/// results, consistent after every statement.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SpanBoard {
    /// Puts a file the stream has opened on the board.
    pub(crate) fn add(&self, file: &Arc<FileSpans>) {
        lock(&self.files).push(Arc::clone(file));
    }

    /// Takes a file off the board (the stream is done with it).
    pub(crate) fn remove(&self, file: &Arc<FileSpans>) {
        lock(&self.files).retain(|f| !Arc::ptr_eq(f, file));
    }

    /// Reads one span the stream will want soon, if there is one not yet taken within the
    /// read-ahead; whether it did. Called by a worker between batches, outside the stream's
    /// lock, so that spans are inflated on every core.
    pub(crate) fn help(&self) -> bool {
        let job = lock(&self.files)
            .iter()
            .find_map(|f| f.claim().map(|u| (Arc::clone(f), u)));
        match job {
            Some((file, unit)) => {
                file.read(unit);
                true
            }
            None => false,
        }
    }
}

/// One file read in spans.
pub(crate) struct FileSpans {
    file: RecordFile,
    /// The spans: record ranges, in file order.
    units: Vec<Range<usize>>,
    /// Spans read at most this far ahead of the one the stream takes next.
    ahead: usize,
    /// Records longer than this fail their span (the sequential reader then reports them).
    max_record_len: u64,
    state: Mutex<SpanState>,
    /// Signalled when a span is read.
    read_done: Condvar,
}

#[derive(Default)]
struct SpanState {
    /// The next span nobody has started reading (spans are claimed in order).
    next_claim: usize,
    /// The span the stream takes next (`<= next_claim`).
    wanted: usize,
    /// Spans read and not yet taken; `None` for one that failed.
    ready: BTreeMap<usize, Option<Span>>,
}

/// What [`FileSpans::take_next`] gives the stream.
pub(crate) enum NextSpan {
    /// The next span's records, checked, with the on-disk bytes it covers.
    Records(Span, u64),
    /// The span failed: read the rest of the file sequentially.
    Failed,
    /// Every span was taken.
    End,
}

impl FileSpans {
    /// `file` cut into spans, read up to `ahead` spans ahead of the stream.
    pub(crate) fn new(file: RecordFile, ahead: usize, max_record_len: u64) -> Self {
        FileSpans {
            units: file.read_units(),
            file,
            ahead: ahead.max(1),
            max_record_len,
            state: Mutex::new(SpanState::default()),
            read_done: Condvar::new(),
        }
    }

    /// The next span not yet taken, if it lies within the read-ahead.
    fn claim(&self) -> Option<usize> {
        let mut state = lock(&self.state);
        let u = state.next_claim;
        (u < self.units.len() && u < state.wanted + self.ahead).then(|| {
            state.next_claim += 1;
            u
        })
    }

    /// Span `u` read and checked (both CRCs of every record, lengths within the limit);
    /// `None` when anything is wrong with it, or reading it panicked.
    fn read_checked(&self, u: usize) -> Option<Span> {
        let unit = self.units.get(u)?.clone();
        let span = catch_unwind(AssertUnwindSafe(|| self.file.read_unit(unit)))
            .ok()?
            .ok()?;
        let too_long = span
            .starts
            .windows(2)
            .any(|w| (w[1] - w[0]) as u64 > self.max_record_len.saturating_add(FRAMING_LEN as u64));
        (!too_long).then_some(span)
    }

    /// Reads span `u` (claimed by the caller) and hands it to the stream.
    fn read(&self, u: usize) {
        let span = self.read_checked(u);
        lock(&self.state).ready.insert(u, span);
        self.read_done.notify_all();
    }

    /// The next span in file order: read already, or being read by a worker (waited for), or
    /// read here when nobody has taken it.
    pub(crate) fn take_next(&self) -> NextSpan {
        let mut state = lock(&self.state);
        let u = state.wanted;
        let Some(unit) = self.units.get(u) else {
            return NextSpan::End;
        };
        let span = loop {
            if let Some(span) = state.ready.remove(&u) {
                break span;
            }
            if state.next_claim == u {
                state.next_claim += 1;
                drop(state);
                let span = self.read_checked(u);
                state = lock(&self.state);
                break span;
            }
            state = self
                .read_done
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        };
        state.wanted += 1;
        match span {
            Some(span) => NextSpan::Records(span, self.file.unit_disk_bytes(unit)),
            None => NextSpan::Failed,
        }
    }
}

//! A [`BatchReader`]'s batches parsed ahead on a thread pool while the caller writes them: the
//! one reading loop under `tfrec convert` and `tfrec.arrow.write_parquet`, so both hand a
//! writer the same pieces (and a Parquet file the same bytes) whatever the number of threads.

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
#[cfg(feature = "parquet")]
use arrow_array::RecordBatchReader;
use rayon::ThreadPool;

use super::reader::{BatchError, BatchReader};

/// What the reader hands a writer: a batch's rows, whole or in parts, or its columns in
/// slices, then the batch's end.
#[derive(Debug)]
pub enum BatchPiece {
    /// The next rows of the batch.
    Rows(RecordBatch),
    /// The next columns of the batch, every row of them: the schema's fields `first..`
    /// (see [`BatchReader::into_column_slices`]).
    Columns {
        /// The index in the schema of the slice's first column.
        first: usize,
        /// The slice's columns (its schema is the schema's fields of them).
        batch: RecordBatch,
    },
    /// The batch is complete (a Parquet row group ends here).
    End,
}

/// Pieces parsed ahead of the writer, each an `Ok` or the reader's error (after which none
/// comes).
pub type BatchPieces = Box<dyn Iterator<Item = Result<BatchPiece, BatchError>> + Send>;

impl BatchReader {
    /// The batches as pieces, parsed on `pool`: with `in_parts`, each batch in parts of
    /// [`PART_ROWS`](super::PART_ROWS) rows (see [`next_parts`](Self::next_parts)), else
    /// whole. With one thread they are parsed here as they are asked for; with more, a thread
    /// reads and parses ahead while the caller writes, a few pieces at most waiting between
    /// them (the pool's threads parse and encode; the reading thread and the caller mostly
    /// wait on them, so they are not counted against the pool). Fails only when that thread
    /// cannot start.
    pub fn into_pieces(mut self, pool: Arc<ThreadPool>, in_parts: bool) -> std::io::Result<BatchPieces> {
        let threads = pool.current_num_threads();
        // The next pieces: as many parts as there are threads (the last ones with the batch's
        // end), or a whole batch and its end.
        let mut next = move || -> Option<Result<Vec<BatchPiece>, BatchError>> {
            let pieces = pool.install(|| {
                if in_parts {
                    self.next_parts(threads).map(|got| {
                        got.map(|(parts, ends)| {
                            let end = ends.then_some(BatchPiece::End);
                            parts.into_iter().map(BatchPiece::Rows).chain(end).collect()
                        })
                    })
                } else {
                    self.next_batch()
                        .map(|got| got.map(|batch| vec![BatchPiece::Rows(batch), BatchPiece::End]))
                }
            });
            pieces.transpose()
        };
        if threads < 2 {
            let mut ready = VecDeque::new();
            return Ok(Box::new(std::iter::from_fn(move || loop {
                if let Some(piece) = ready.pop_front() {
                    return Some(Ok(piece));
                }
                match next()? {
                    Ok(pieces) => ready.extend(pieces),
                    Err(e) => return Some(Err(e)),
                }
            })));
        }
        // Waiting: two rounds of parts, or two whole batches (each a batch and its end), so
        // that memory does not grow with the number of threads by whole batches.
        let waiting = if in_parts { 2 * threads } else { 4 };
        let (sender, receiver) = std::sync::mpsc::sync_channel(waiting);
        std::thread::Builder::new()
            .name("tfrec-batches-ahead".into())
            .spawn(move || {
                // Ends after the last batch or an error, or when the writer stops listening.
                while let Some(pieces) = next() {
                    match pieces {
                        Ok(pieces) => {
                            for piece in pieces {
                                if sender.send(Ok(piece)).is_err() {
                                    return;
                                }
                            }
                        }
                        Err(e) => {
                            let _ = sender.send(Err(e));
                            return;
                        }
                    }
                }
            })
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot start the reading thread: {e}")))?;
        Ok(Box::new(receiver.into_iter()))
    }

    /// The batches in the pieces a [`ParquetWriter`](super::ParquetWriter) takes best: a wide
    /// schema's (of [`WIDE_SCHEMA_COLUMNS`](super::WIDE_SCHEMA_COLUMNS) columns or more) in
    /// slices of [`COLUMN_SLICE_WIDTH`](super::COLUMN_SLICE_WIDTH) columns, so that the batch
    /// is never whole ([`into_column_slices`](Self::into_column_slices)); a schema the writer
    /// encodes part by part in parts of rows; any other whole. Given to the writer as they
    /// come, they make the same file, byte for byte, whatever the threads.
    #[cfg(feature = "parquet")]
    pub fn into_parquet_pieces(self, pool: Arc<ThreadPool>) -> std::io::Result<BatchPieces> {
        let schema = self.schema();
        if schema.fields().len() >= super::WIDE_SCHEMA_COLUMNS {
            self.into_column_slices(pool, super::COLUMN_SLICE_WIDTH)
        } else {
            let in_parts = super::ParquetWriter::<std::fs::File>::takes_parts(&schema);
            self.into_pieces(pool, in_parts)
        }
    }

    /// The batches as pieces of columns: each batch parsed on `pool` a slice of `width`
    /// columns at a time ([`next_batch_slices`](Self::next_batch_slices)), each slice a
    /// [`BatchPiece::Columns`] handed over as soon as it is made, then [`BatchPiece::End`].
    /// For a writer that can write a batch's columns apart (JSON lines, Arrow IPC, Parquet): a
    /// wide schema's batch is then never whole as Arrow arrays. A thread of its own parses,
    /// whatever the pool's size, and at most two slices wait for the writer. The writer may
    /// work on the same pool (Parquet's encoders do): while a slice waits, the pool thread
    /// that made it runs the pool's other work. Fails only when that thread cannot start.
    pub fn into_column_slices(mut self, pool: Arc<ThreadPool>, width: usize) -> std::io::Result<BatchPieces> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(2);
        std::thread::Builder::new()
            .name("tfrec-column-slices".into())
            .spawn(move || loop {
                // A writer that stops listening leaves the rest of the batch parsed for nothing,
                // then this thread ends at the batch's end.
                let slices = pool.install(|| {
                    self.next_batch_slices(width, |first, batch| {
                        let _ = send_working(&sender, Ok(BatchPiece::Columns { first, batch }));
                    })
                });
                match slices {
                    Ok(true) => {
                        if sender.send(Ok(BatchPiece::End)).is_err() {
                            return;
                        }
                    }
                    Ok(false) => return,
                    Err(e) => {
                        let _ = sender.send(Err(e));
                        return;
                    }
                }
            })
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot start the reading thread: {e}")))?;
        Ok(Box::new(receiver.into_iter()))
    }
}

/// Sends `item` on `sender`, running the current rayon pool's other work while the channel is
/// full: a slice is made on a pool thread, and a writer that encodes on the same pool would
/// otherwise wait for that thread while it waits for the writer (with one thread, for ever).
/// `Err` when the receiver is gone.
fn send_working<T>(sender: &std::sync::mpsc::SyncSender<T>, mut item: T) -> Result<(), ()> {
    let mut idle = std::time::Duration::from_micros(10);
    loop {
        match sender.try_send(item) {
            Ok(()) => return Ok(()),
            Err(std::sync::mpsc::TrySendError::Disconnected(_)) => return Err(()),
            Err(std::sync::mpsc::TrySendError::Full(back)) => {
                item = back;
                if rayon::yield_now() == Some(rayon::Yield::Executed) {
                    idle = std::time::Duration::from_micros(10);
                } else {
                    // Nothing to run: the writer is busy elsewhere; wait a little longer each time.
                    std::thread::sleep(idle);
                    idle = (idle * 2).min(std::time::Duration::from_millis(1));
                }
            }
        }
    }
}

//! The corruption policies: failing, skipping the file, or resynchronising (scanning for the
//! next intact record), and the problems kept on the way.

use std::io::Read;

use super::super::compression::Compression;
use super::super::error::{Location, RecordError, RecordErrorKind};
use super::super::format::HEADER_LEN;
use super::super::scan;
use super::options::{OnCorruption, TornTail, MAX_KEPT_PROBLEMS};
use super::{RecordReader, Span};

/// What a scan for the next intact record found.
enum Scan {
    /// An intact record, after `skipped` bytes that were not one.
    Found { span: Span, skipped: u64 },
    /// The end of the data, after `skipped` bytes (all consumed).
    End { skipped: u64 },
}

impl<R: Read> RecordReader<R> {
    /// The data ran out (at a record boundary, or under resynchronisation anywhere): clean if
    /// the source ended cleanly, else its error, named at `at` (the record it cut into, or
    /// where the data ran out), is reported as the policy says.
    #[cold]
    #[inline(never)]
    pub(super) fn end_of_data(&mut self, at: u64) -> Result<(), RecordError> {
        let Some(kind) = self.src_error.take() else {
            return Ok(());
        };
        let error = self.error_at(kind, at);
        match (&error.kind, self.options.on_corruption) {
            (RecordErrorKind::Io(_) | RecordErrorKind::WrongCompression { .. }, _) | (_, OnCorruption::Fail) => {
                Err(error)
            }
            _ => {
                self.stats.skipped_files += 1;
                self.keep_problem(error);
                Ok(())
            }
        }
    }

    /// Applies the corruption policy to a damaged record at `at` (nothing of it consumed):
    /// `Err` to give it to the caller; `Ok(Some)` with the next intact record found by
    /// resynchronising; `Ok(None)` when the reader has ended.
    #[cold]
    #[inline(never)]
    pub(super) fn recover(&mut self, kind: RecordErrorKind, at: u64) -> Result<Option<Span>, RecordError> {
        // A record cut short by a damaged source was not torn: the source's error is the news.
        let cut_short = self.src_error.is_some()
            && matches!(
                kind,
                RecordErrorKind::Truncated { .. } | RecordErrorKind::PartialHeader { .. }
            );
        if !cut_short && self.options.torn_tail == TornTail::Skip {
            match kind {
                RecordErrorKind::PartialHeader { available } => {
                    self.stats.torn_tail_bytes += available as u64;
                    self.consume(available);
                    self.ended = true;
                    return Ok(None);
                }
                // A writer is most often cut off inside a record's data, not its header.
                RecordErrorKind::Truncated { .. } | RecordErrorKind::LengthExceedsFile { .. } => {
                    return self.torn_body(kind, at);
                }
                _ => {}
            }
        }
        let fatal = matches!(kind, RecordErrorKind::Io(_) | RecordErrorKind::Open(_));
        match self.options.on_corruption {
            OnCorruption::Resync if !fatal => {
                let error = self.error_at(kind, at);
                if cut_short {
                    self.resync(at, Some(error))
                } else {
                    self.keep_problem(error);
                    self.resync(at, None)
                }
            }
            OnCorruption::SkipFile if !fatal => {
                self.ended = true;
                if cut_short {
                    self.end_of_data(at)?;
                } else {
                    let error = self.error_at(kind, at);
                    self.stats.skipped_files += 1;
                    self.keep_problem(error);
                }
                Ok(None)
            }
            _ => {
                self.ended = true;
                let kind = match (cut_short, self.src_error.take()) {
                    (true, Some(source)) => source,
                    _ => kind,
                };
                Err(self.error_at(kind, at))
            }
        }
    }

    /// Scans from the byte after `at` (where `window[pos]` still is) for the next intact record:
    /// a plausible header at each offset, then the whole record with both CRCs. Returns it, or
    /// `None` when the data ends first (the reader has then ended). `cut_short`: the region
    /// began with this record, cut short where the source's error ended the data.
    #[cold]
    #[inline(never)]
    fn resync(&mut self, at: u64, cut_short: Option<RecordError>) -> Result<Option<Span>, RecordError> {
        self.stats.skipped_regions += 1;
        match self.scan_from(at)? {
            Scan::Found { span, skipped } => {
                // An intact record inside the bytes the cut record claimed: it was damage of its
                // own, not the source's error, so it is a problem here as in a plain file (the
                // source's error comes where the data runs out).
                if let Some(error) = cut_short {
                    self.keep_problem(error);
                }
                self.stats.skipped_bytes += skipped;
                Ok(Some(span))
            }
            Scan::End { skipped } => {
                self.stats.skipped_bytes += skipped;
                // Nothing intact after it: the source's error is what cut it, named there.
                self.end_of_data(if cut_short.is_some() { at } else { self.offset })?;
                Ok(None)
            }
        }
    }

    /// A record cut off by the end of the data under [`TornTail::Skip`]: the tail of a file
    /// still being written, unless an intact record follows it, in which case it was damage and
    /// the corruption policy decides.
    #[cold]
    #[inline(never)]
    fn torn_body(&mut self, kind: RecordErrorKind, at: u64) -> Result<Option<Span>, RecordError> {
        match self.scan_from(at)? {
            Scan::End { skipped } => {
                self.stats.torn_tail_bytes += skipped;
                self.end_of_data(self.offset)?;
                Ok(None)
            }
            Scan::Found { span, skipped } => match self.options.on_corruption {
                OnCorruption::Resync => {
                    let error = self.error_at(kind, at);
                    self.keep_problem(error);
                    self.stats.skipped_regions += 1;
                    self.stats.skipped_bytes += skipped;
                    Ok(Some(span))
                }
                OnCorruption::SkipFile => {
                    self.ended = true;
                    let error = self.error_at(kind, at);
                    self.stats.skipped_files += 1;
                    self.keep_problem(error);
                    Ok(None)
                }
                OnCorruption::Fail => {
                    self.ended = true;
                    Err(self.error_at(kind, at))
                }
            },
        }
    }

    /// Looks for the next intact record from the byte after `at`, counting the bytes passed
    /// over. At the end of the data every byte is consumed and the reader has ended.
    fn scan_from(&mut self, at: u64) -> Result<Scan, RecordError> {
        debug_assert_eq!(self.offset, at);
        if self.fill_to(1) > 0 {
            self.consume(1);
        }
        loop {
            // Find a plausible header.
            loop {
                let available = self.fill_to(HEADER_LEN);
                if available < HEADER_LEN {
                    let skipped = self.offset - at + available as u64;
                    self.consume(available);
                    self.ended = true;
                    return Ok(Scan::End { skipped });
                }
                let rest = self.stream_len.map(|len| len.saturating_sub(self.offset));
                match scan::find_header(&self.window[self.pos..self.end], self.options.max_record_len, rest) {
                    Some(i) => {
                        self.consume(i);
                        break;
                    }
                    // Keep the last 11 bytes: a header may start in them.
                    None => self.consume(available - (HEADER_LEN - 1)),
                }
            }
            let candidate = self.offset;
            match self.read_one() {
                Ok(Some(span)) => {
                    return Ok(Scan::Found {
                        span,
                        skipped: candidate - at,
                    })
                }
                Err(RecordErrorKind::Io(e)) => {
                    self.ended = true;
                    return Err(self.error_at(RecordErrorKind::Io(e), candidate));
                }
                // Not a record after all (or the data ended inside it): on to the next byte.
                Ok(None) | Err(_) => {
                    if self.fill_to(1) > 0 {
                        self.consume(1);
                    }
                }
            }
        }
    }

    pub(super) fn keep_problem(&mut self, error: RecordError) {
        if self.problems.len() < MAX_KEPT_PROBLEMS {
            self.problems.push(error);
        }
    }

    pub(super) fn error_at(&self, kind: RecordErrorKind, offset: u64) -> RecordError {
        RecordError {
            kind,
            location: Location {
                path: self.path.clone(),
                offset,
                record_index: self.next_index,
                decompressed: self.compression != Compression::None,
            },
        }
    }
}

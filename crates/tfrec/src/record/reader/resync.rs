//! The corruption policies: failing, skipping the file, or resynchronising (scanning for the
//! next intact record), and the problems kept on the way.

use std::io::Read;

use super::super::compression::Compression;
use super::super::error::{Location, RecordError, RecordErrorKind};
use super::super::format::HEADER_LEN;
use super::super::scan;
use super::options::{OnCorruption, TornTail, MAX_KEPT_PROBLEMS};
use super::{RecordReader, Span};

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
            (RecordErrorKind::Io(_), _) | (_, OnCorruption::Fail) => Err(error),
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
        if let (RecordErrorKind::PartialHeader { available }, false) = (&kind, cut_short) {
            if self.options.torn_tail == TornTail::Skip {
                self.stats.torn_tail_bytes += *available as u64;
                self.consume(*available);
                self.ended = true;
                return Ok(None);
            }
        }
        let fatal = matches!(kind, RecordErrorKind::Io(_) | RecordErrorKind::Open(_));
        match self.options.on_corruption {
            OnCorruption::Resync if !fatal => {
                // The source's error, if that is what cut the record short, is kept where the
                // scan runs out of bytes.
                if !cut_short {
                    let error = self.error_at(kind, at);
                    self.keep_problem(error);
                }
                self.resync(at, cut_short)
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
    /// began with a record cut short by the source's error, which is then named at `at`.
    #[cold]
    #[inline(never)]
    fn resync(&mut self, at: u64, cut_short: bool) -> Result<Option<Span>, RecordError> {
        debug_assert_eq!(self.offset, at);
        self.stats.skipped_regions += 1;
        if self.fill_to(1) > 0 {
            self.consume(1);
        }
        loop {
            // Find a plausible header.
            loop {
                let available = self.fill_to(HEADER_LEN);
                if available < HEADER_LEN {
                    self.stats.skipped_bytes += self.offset - at + available as u64;
                    self.consume(available);
                    self.ended = true;
                    self.end_of_data(if cut_short { at } else { self.offset })?;
                    return Ok(None);
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
                    self.stats.skipped_bytes += candidate - at;
                    return Ok(Some(span));
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

//! The hot path: one record at the window's position, its header, length checks and CRCs, and
//! the window refilled from the source (or from bytes put back for a rescan).

use std::io::{self, Read};

use super::super::compression::{Compression, DETECT_PREFIX};
use super::super::error::{RecordError, RecordErrorKind};
use super::super::format::{
    decode_footer, masked_crc32c, masked_crc32c_each, Header, CRC_LANES, FOOTER_LEN, FRAMING_LEN, HEADER_LEN,
};
use super::super::inflate::{NotCompressedAs, StreamDamage};
use super::{RecordReader, Span};

impl<R: Read> RecordReader<R> {
    /// The next record's data, `Ok(None)` at the end of the input.
    ///
    /// The slice borrows the reader's buffer and is valid until the next call. After an error
    /// (under [`OnCorruption::Fail`](crate::record::OnCorruption::Fail)) or `None`, every later call returns `Ok(None)`.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>, RecordError> {
        Ok(self.next_span()?.map(|span| self.span_data(span)))
    }

    /// The bytes of a span returned by the latest [`RecordReader::next_span`].
    pub(crate) fn span_data(&self, span: Span) -> &[u8] {
        match span {
            Span::Window { start, len } => &self.window[start..start + len],
            Span::Large { len } => &self.large[HEADER_LEN..HEADER_LEN + len],
        }
    }

    /// Reads the next record and says where its bytes are, without borrowing them.
    pub(crate) fn next_span(&mut self) -> Result<Option<Span>, RecordError> {
        while !self.ended {
            let at = self.offset;
            let found = match self.read_one() {
                Ok(Some(span)) => Some(span),
                Ok(None) => {
                    self.ended = true;
                    self.end_of_data(at)?;
                    None
                }
                Err(kind) => self.recover(kind, at)?,
            };
            if let Some(span) = found {
                self.last_offset = self.offset - (FRAMING_LEN + span.len()) as u64;
                self.next_index += 1;
                self.stats.records += 1;
                self.stats.data_bytes += span.len() as u64;
                return Ok(Some(span));
            }
        }
        Ok(None)
    }

    /// Up to `max` records that lie whole in the window and are intact, each given to `each`
    /// with its header's offset and, when its check is deferred, its stored data CRC; how many.
    ///
    /// The loop of [`next_span`](Self::next_span) without what only its rare cases need: it
    /// stops at the first record it cannot simply take (one not yet whole in the window, too
    /// large for it, damaged, or the end), leaving it unconsumed for `next_span`, which then
    /// refills, reports or resynchronises as usual. So the two read the same records, counted
    /// and numbered the same.
    ///
    /// Records are framed [`CRC_LANES`] at a time and their data CRCs computed side by side
    /// ([`masked_crc32c_each`]): on short records one CRC chain at a time left the CRC unit
    /// mostly idle. Each is still handed out only once it and every record before it checked.
    #[inline]
    pub(crate) fn read_whole_in_window(&mut self, max: usize, mut each: impl FnMut(&[u8], u64, Option<u32>)) -> usize {
        // Put-back bytes come first and are read by `fill_to`, which this loop does not call.
        if self.ended || !self.replay.is_empty() {
            return 0;
        }
        let check_here = self.options.verify_data_crc && !self.defer_data_crc;
        let mut taken = 0;
        while taken < max {
            let batch = self.whole_records_ahead((max - taken).min(CRC_LANES));
            if batch.is_empty() {
                break;
            }
            let computed = match (check_here, batch.records()) {
                (false, _) => None,
                (true, Ok(full)) => Some(masked_crc32c_each(
                    full.map(|(start, len, _)| &self.window[start..start + len]),
                )),
                (true, Err(some)) => {
                    let mut crcs = [0; CRC_LANES];
                    for (crc, &(start, len, _)) in crcs.iter_mut().zip(some) {
                        *crc = masked_crc32c(&self.window[start..start + len]);
                    }
                    Some(crcs)
                }
            };
            for (k, &(start, len, stored)) in batch.as_slice().iter().enumerate() {
                if computed.is_some_and(|crcs| crcs[k] != stored) {
                    return taken;
                }
                let deferred = self.defer_data_crc.then_some(stored);
                let offset = self.offset;
                each(&self.window[start..start + len], offset, deferred);
                self.consume(len + FRAMING_LEN);
                self.last_offset = offset;
                self.next_index += 1;
                self.stats.records += 1;
                self.stats.data_bytes += len as u64;
                taken += 1;
            }
            if batch.len < CRC_LANES {
                break;
            }
        }
        taken
    }

    /// Up to `most` (at most [`CRC_LANES`]) records from `window[pos]` on whose headers hold
    /// and that lie whole in the window, nothing consumed: each one's data start and length
    /// in the window and its stored data CRC.
    #[inline]
    fn whole_records_ahead(&self, most: usize) -> Batch {
        let mut batch = Batch {
            records: [(0, 0, 0); CRC_LANES],
            len: 0,
        };
        let mut at = self.pos;
        while batch.len < most && self.end - at >= HEADER_LEN {
            let Ok(len) = self.trusted_len_at(at) else {
                break;
            };
            if len + FRAMING_LEN > self.end - at {
                break;
            }
            let start = at + HEADER_LEN;
            batch.records[batch.len] = (start, len, decode_footer(&self.footer_at(start + len)));
            batch.len += 1;
            at = start + len + FOOTER_LEN;
        }
        batch
    }

    /// At the start of a stream read as plain, the compression its first bytes show, if any.
    #[cold]
    fn looks_compressed(&self) -> Option<Compression> {
        if self.offset != 0 || self.compression != Compression::None {
            return None;
        }
        let prefix = &self.window[self.pos..self.end];
        match Compression::detect(&prefix[..prefix.len().min(DETECT_PREFIX)]) {
            // GZIP's two magic bytes are telling even when the stream is damaged right after
            // them; ZLIB's are too easily met by chance to name without a decoded header.
            Compression::None => (Compression::sniff(prefix) == Compression::Gzip).then_some(Compression::Gzip),
            c => Some(c),
        }
    }

    /// The data length the header at `window[pos]` (whole there) gives, once its CRC holds
    /// and it passes [`check_length`](Self::check_length); with the framing added it still
    /// fits a `usize`.
    #[inline]
    fn trusted_len(&self) -> Result<usize, RecordErrorKind> {
        self.trusted_len_at(self.pos)
    }

    /// [`trusted_len`](Self::trusted_len) of the header at `window[at]` (whole there, at or
    /// after `pos`).
    #[inline]
    fn trusted_len_at(&self, at: usize) -> Result<usize, RecordErrorKind> {
        let header = self.header_at(at);
        if !header.is_valid() {
            return Err(RecordErrorKind::LengthCrcMismatch {
                stored: header.stored_crc,
                computed: header.actual_crc,
                looks_compressed: self.looks_compressed(),
            });
        }
        self.check_length(header.len, self.offset + (at - self.pos) as u64)?;
        // check_length bounded len by max_record_len, which a usize holds on 64-bit targets;
        // on 32-bit ones a longer record is refused rather than truncated.
        usize::try_from(header.len)
            .ok()
            .filter(|len| len.checked_add(FRAMING_LEN).is_some())
            .ok_or(RecordErrorKind::LengthOverLimit {
                len: header.len,
                limit: (usize::MAX - FRAMING_LEN) as u64,
            })
    }

    #[inline]
    fn header_at(&self, at: usize) -> Header {
        let mut bytes = [0u8; HEADER_LEN];
        bytes.copy_from_slice(&self.window[at..at + HEADER_LEN]);
        Header::decode(&bytes)
    }

    /// Rejects a length that is over the limit, or that cannot fit in what is left of a stream
    /// of known size after the header at stream offset `offset`. Either way nothing is
    /// allocated for it.
    fn check_length(&self, len: u64, offset: u64) -> Result<(), RecordErrorKind> {
        if len > self.options.max_record_len {
            return Err(RecordErrorKind::LengthOverLimit {
                len,
                limit: self.options.max_record_len,
            });
        }
        if let Some(stream_len) = self.stream_len {
            let remaining = stream_len.saturating_sub(offset + HEADER_LEN as u64);
            if len.saturating_add(FOOTER_LEN as u64) > remaining {
                return Err(RecordErrorKind::LengthExceedsFile { len, remaining });
            }
        }
        Ok(())
    }

    /// Reads one record at `window[pos]`. On success the record is consumed. On any problem
    /// nothing is consumed: the stream is as it was, so a resynchronising scan can start at
    /// the next byte (a large record's bytes are put back for it).
    pub(super) fn read_one(&mut self) -> Result<Option<Span>, RecordErrorKind> {
        let available = self.fill_to(HEADER_LEN);
        if available == 0 {
            return Ok(None);
        }
        if available < HEADER_LEN {
            return Err(RecordErrorKind::PartialHeader { available });
        }
        let len = self.trusted_len()?;
        let framed = len + FRAMING_LEN;
        let data_offset = self.offset + HEADER_LEN as u64;
        if framed > self.window.len() {
            return self.read_large(len, data_offset);
        }
        let available = self.fill_to(framed);
        if available < framed {
            return Err(RecordErrorKind::Truncated {
                len: len as u64,
                available: (available - HEADER_LEN) as u64,
            });
        }
        let start = self.pos + HEADER_LEN;
        let stored = decode_footer(&self.footer_at(start + len));
        if self.defer_data_crc {
            self.deferred_crc = stored;
        } else if self.options.verify_data_crc {
            let computed = masked_crc32c(&self.window[start..start + len]);
            if computed != stored {
                return Err(RecordErrorKind::DataCrcMismatch {
                    stored,
                    computed,
                    data_offset,
                });
            }
        }
        self.consume(framed);
        Ok(Some(Span::Window { start, len }))
    }

    fn footer_at(&self, at: usize) -> [u8; FOOTER_LEN] {
        let mut footer = [0u8; FOOTER_LEN];
        footer.copy_from_slice(&self.window[at..at + FOOTER_LEN]);
        footer
    }

    pub(super) fn consume(&mut self, n: usize) {
        debug_assert!(self.pos + n <= self.end);
        self.pos += n;
        self.offset += n as u64;
    }

    /// Makes at least `n` (≤ window size) bytes available at `window[pos..]` unless the input
    /// ends first; returns how many are available.
    pub(super) fn fill_to(&mut self, n: usize) -> usize {
        debug_assert!(n <= self.window.len());
        if self.end - self.pos >= n {
            return self.end - self.pos;
        }
        if self.window.len() - self.pos < n {
            self.window.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end - self.pos < n {
            let read = if let Some(replay) = self.replay.last_mut() {
                let k = (replay.bytes.len() - replay.pos).min(self.window.len() - self.end);
                self.window[self.end..self.end + k].copy_from_slice(&replay.bytes[replay.pos..replay.pos + k]);
                replay.pos += k;
                if replay.pos == replay.bytes.len() {
                    self.replay.pop();
                }
                k
            } else {
                read_source(
                    &mut self.src,
                    &mut self.window[self.end..],
                    &mut self.src_eof,
                    &mut self.src_error,
                )
            };
            if read == 0 && self.replay.is_empty() && self.src_eof {
                break;
            }
            self.end += read;
        }
        self.end - self.pos
    }
}

/// One `read` call, retried on `Interrupted`; 0 at the end of the source. An error ends the
/// source and is kept in `error`: a decoder's report of damage as
/// [`RecordErrorKind::Decompress`], of a stream that is not of its compression as
/// [`RecordErrorKind::WrongCompression`], anything else as [`RecordErrorKind::Io`].
pub(super) fn read_source<R: Read>(
    src: &mut R,
    buf: &mut [u8],
    eof: &mut bool,
    error: &mut Option<RecordErrorKind>,
) -> usize {
    if *eof {
        return 0;
    }
    loop {
        match src.read(buf) {
            Ok(0) => {
                *eof = true;
                return 0;
            }
            Ok(n) => return n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let not = e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<NotCompressedAs>())
                    .copied();
                let damage = e.get_ref().is_some_and(|inner| inner.is::<StreamDamage>());
                *error = Some(match not {
                    Some(NotCompressedAs { expected, found }) => RecordErrorKind::WrongCompression {
                        expected: Compression::of_container(Some(expected)),
                        found: Compression::of_container(found),
                    },
                    None if damage => RecordErrorKind::Decompress(e),
                    None => RecordErrorKind::Io(e),
                });
                *eof = true;
                return 0;
            }
        }
    }
}

/// A record framed ahead of the reader's position: its data's start and length in the window
/// and its stored data CRC.
type Framed = (usize, usize, u32);

/// Records framed ahead of the reader's position (see
/// [`RecordReader::read_whole_in_window`]): `records[..len]`.
struct Batch {
    records: [Framed; CRC_LANES],
    len: usize,
}

impl Batch {
    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn as_slice(&self) -> &[Framed] {
        &self.records[..self.len]
    }

    /// All [`CRC_LANES`] records when the batch is full, else the ones it has.
    #[inline]
    fn records(&self) -> Result<[Framed; CRC_LANES], &[Framed]> {
        if self.len == CRC_LANES {
            Ok(self.records)
        } else {
            Err(self.as_slice())
        }
    }
}

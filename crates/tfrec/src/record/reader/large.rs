//! Records larger than the window: assembled in a second buffer that grows only as bytes
//! arrive, and put back in front of the source when a rescan needs them.

use std::io::{self, Read};

use super::super::error::RecordErrorKind;
use super::super::format::{decode_footer, masked_crc32c, FOOTER_LEN, FRAMING_LEN, HEADER_LEN};
use super::framing::read_source;
use super::options::{OnCorruption, TornTail, LARGE_RECORD_FIRST_CHUNK};
use super::{RecordReader, Replay, Span};

impl<R: Read> RecordReader<R> {
    /// Reads a record that does not fit in the window into `large`, which grows only as bytes
    /// arrive (at most doubling each time, see [`next_size`]), so a lying length costs at most
    /// twice the bytes that really follow it, and a true one exactly one buffer of its size.
    #[cold]
    #[inline(never)]
    pub(super) fn read_large(&mut self, len: usize, data_offset: u64) -> Result<Option<Span>, RecordErrorKind> {
        let framed = len + FRAMING_LEN;
        // The window holds less than a whole record: take all of it, then read from the source.
        let from_window = self.end - self.pos;
        self.grow_large(from_window.max(LARGE_RECORD_FIRST_CHUNK).min(framed))?;
        self.large[..from_window].copy_from_slice(&self.window[self.pos..self.end]);
        self.consume(from_window);
        self.pos = 0;
        self.end = 0;
        let mut filled = from_window;
        while filled < framed {
            let target = next_size(filled, framed);
            self.grow_large(target)?;
            while filled < target {
                let n = self.read_source_into_large(filled, target);
                if n == 0 {
                    return Err(self.put_back_large(
                        filled,
                        RecordErrorKind::Truncated {
                            len: len as u64,
                            available: filled.saturating_sub(HEADER_LEN) as u64,
                        },
                    ));
                }
                filled += n;
                self.offset += n as u64;
            }
        }
        let mut footer = [0u8; FOOTER_LEN];
        footer.copy_from_slice(&self.large[HEADER_LEN + len..framed]);
        let stored = decode_footer(&footer);
        if self.defer_data_crc {
            self.deferred_crc = stored;
        } else if self.options.verify_data_crc {
            let computed = masked_crc32c(&self.large[HEADER_LEN..HEADER_LEN + len]);
            if computed != stored {
                return Err(self.put_back_large(
                    filled,
                    RecordErrorKind::DataCrcMismatch {
                        stored,
                        computed,
                        data_offset,
                    },
                ));
            }
        }
        Ok(Some(Span::Large { len }))
    }

    /// A large candidate failed. Under resynchronisation (or to tell a torn tail from damage)
    /// its bytes must be scanned again, so the buffer holding them is moved in front of the
    /// source and the reader steps back to its header; otherwise the reader ends and they are
    /// dropped.
    #[cold]
    #[inline(never)]
    fn put_back_large(&mut self, filled: usize, kind: RecordErrorKind) -> RecordErrorKind {
        self.offset -= filled as u64;
        let mut bytes = std::mem::take(&mut self.large);
        // Their bytes are scanned again to resynchronise, and to tell a torn tail from damage.
        if self.options.on_corruption == OnCorruption::Resync || self.options.torn_tail == TornTail::Skip {
            bytes.truncate(filled);
            self.replay.push(Replay { bytes, pos: 0 });
        }
        kind
    }

    /// Makes `large` at least `len` bytes long, reserving exactly that (a `Vec` left to itself
    /// would double its capacity past the record's size). A failed allocation is an error,
    /// not an abort.
    fn grow_large(&mut self, len: usize) -> Result<(), RecordErrorKind> {
        if self.large.len() < len {
            let more = len - self.large.len();
            self.large.try_reserve_exact(more).map_err(|e| {
                RecordErrorKind::Io(io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!("cannot allocate {len} bytes for a record: {e}"),
                ))
            })?;
            self.large.resize(len, 0);
        }
        Ok(())
    }

    /// Reads bytes for `large[from..to]` from the replay or the source; 0 when they end.
    fn read_source_into_large(&mut self, from: usize, to: usize) -> usize {
        if let Some(replay) = self.replay.last_mut() {
            let n = (replay.bytes.len() - replay.pos).min(to - from);
            self.large[from..from + n].copy_from_slice(&replay.bytes[replay.pos..replay.pos + n]);
            replay.pos += n;
            if replay.pos == replay.bytes.len() {
                self.replay.pop();
            }
            return n;
        }
        read_source(
            &mut self.src,
            &mut self.large[from..to],
            &mut self.src_eof,
            &mut self.src_error,
        )
    }
}

/// The size to grow a large record's buffer to when `filled` of its `framed` bytes have arrived:
/// the record's size halved as often as still leaves room for more than `filled`. So each step
/// at most doubles the buffer (a lying length costs at most twice what really follows), and the
/// last step is exactly to the record's size from half of it: an allocator that grows a block
/// by copying holds at most 1.5 times the record, where doubling from the smallest chunk and
/// then adding the last few bytes would briefly hold two whole copies.
fn next_size(filled: usize, framed: usize) -> usize {
    let mut target = framed;
    while target / 2 > filled && target / 2 >= LARGE_RECORD_FIRST_CHUNK {
        target /= 2;
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_at_most_doubles_and_ends_at_half_the_record() {
        for framed in [LARGE_RECORD_FIRST_CHUNK + 1, 3 << 20, (1 << 31) + 16, 1_000_000_007] {
            let mut filled = 1 << 16;
            let mut sizes = Vec::new();
            while filled < framed {
                let next = next_size(filled, framed);
                assert!(next > filled && next <= framed);
                assert!(
                    next <= 2 * filled.max(LARGE_RECORD_FIRST_CHUNK) + 1,
                    "{filled} -> {next}"
                );
                sizes.push(next);
                filled = next;
            }
            assert_eq!(sizes.last(), Some(&framed));
            if let [.., before, last] = sizes[..] {
                assert!(2 * before + 1 >= last && before < last, "{sizes:?}");
            }
        }
    }
}

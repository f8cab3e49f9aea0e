//! GZIP and ZLIB decompression that hands out every byte decoded before damage, then says where
//! the damage is (compressed and decompressed offsets), and the validated sniffing built on it.
//!
//! flate2's `Read` decoders drop the output of the call in which they meet an error, so a zlib
//! stream whose Adler-32 trailer is damaged yields nothing at all although every record in it
//! decoded. Here the low-level [`flate2::Decompress`] is driven directly: output produced before
//! an error is returned first, and the error comes on the next call. GZIP member framing
//! (RFC 1952 header, CRC-32 and ISIZE trailer, concatenated members) is done here for the same
//! reason; ZLIB framing (RFC 1950) is left to the inflater.
//!
//! First bytes that are no stream of the expected kind at all (a plain TFRecord, or the other
//! compression) are reported as such, not as damage: that is a setting to change, not data lost.

use std::fmt;
use std::io::{self, BufRead};

use flate2::{Crc, Decompress, FlushDecompress, Status};

/// Damage in a compressed stream, with where it was found. It travels inside the
/// [`io::Error`] of [`RecordErrorKind::Decompress`](super::RecordErrorKind::Decompress); get it
/// back with [`RecordError::stream_damage`](super::RecordError::stream_damage).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamDamage {
    /// What is wrong, e.g. "invalid deflate data" or "the gzip CRC-32 does not match".
    pub what: String,
    /// Compressed bytes consumed from the file when the damage was found.
    pub compressed_offset: u64,
    /// Decompressed bytes delivered before it: everything before this offset was decoded.
    pub decompressed_offset: u64,
}

impl fmt::Display for StreamDamage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at compressed byte {} (after {} decompressed bytes)",
            self.what, self.compressed_offset, self.decompressed_offset
        )
    }
}

impl std::error::Error for StreamDamage {}

/// A stream that is not of the compression it is read as at all: its first bytes are a plain
/// TFRecord header, or a stream of the other compression (checked by decoding it). It travels
/// inside an [`io::Error`] as [`StreamDamage`] does, and the reader turns it into
/// [`RecordErrorKind::WrongCompression`](super::RecordErrorKind::WrongCompression).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotCompressedAs {
    /// The wrapping the stream was read as.
    pub(crate) expected: Container,
    /// What its first bytes are: the other wrapping, or `None` for plain records.
    pub(crate) found: Option<Container>,
}

impl fmt::Display for NotCompressedAs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.found {
            Some(found) => write!(f, "not a {:?} stream but {found:?}", self.expected),
            None => write!(f, "not a {:?} stream but plain records", self.expected),
        }
    }
}

/// Says what first bytes that do not decode as a container are instead, when that is certain
/// (see [`Inflater::with_diagnosis`]); `None` if they are only damage. Given by the layer that
/// knows the record format and the other container, so the decoder needs neither.
pub(crate) type Diagnosis = fn(&[u8], Container) -> Option<NotCompressedAs>;

impl std::error::Error for NotCompressedAs {}

/// Why a decoder stopped; it gives the same error again on every later read.
#[derive(Debug, Clone)]
enum Failure {
    Damage(StreamDamage),
    NotCompressedAs(NotCompressedAs),
}

impl From<StreamDamage> for Failure {
    fn from(damage: StreamDamage) -> Self {
        Failure::Damage(damage)
    }
}

impl Failure {
    fn to_io(&self) -> io::Error {
        match self {
            Failure::Damage(damage) => io::Error::new(io::ErrorKind::InvalidData, damage.clone()),
            Failure::NotCompressedAs(not) => io::Error::new(io::ErrorKind::InvalidData, *not),
        }
    }
}

/// The wrapping around the deflate data: an RFC 1952 GZIP stream (of one or more members) or
/// an RFC 1950 ZLIB stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Container {
    /// GZIP members, one after another.
    Gzip,
    /// One ZLIB stream.
    Zlib,
}

/// Where a GZIP decoder is in its member.
enum GzipState {
    /// Collecting a member header; the bytes so far.
    Header(Vec<u8>),
    Body,
    /// Collecting the 8-byte trailer.
    Trailer(Vec<u8>),
}

/// What [`Inflater::collect`] found.
enum Collected {
    Complete,
    /// The input ended first; `empty` if no byte was collected.
    End {
        empty: bool,
    },
    Invalid(&'static str),
}

enum State {
    Gzip(GzipState),
    Zlib,
    /// The stream ended cleanly; later reads return 0.
    Done,
    /// The stream is damaged, or not of this compression; later reads return this error again.
    Failed(Failure),
}

/// A decompressing reader over a buffered compressed stream (see the module doc).
pub(crate) struct Inflater<R> {
    src: R,
    inflate: Decompress,
    state: State,
    /// CRC-32 and size of the current gzip member's output.
    crc: MemberCrc,
    /// Compressed bytes consumed from `src`.
    consumed: u64,
    /// Decompressed bytes returned.
    produced: u64,
    /// An error met while producing the bytes last returned, to return once they are out.
    pending: Option<Failure>,
    /// Output decompressed for a small read; `spill[spill_range]` is not handed out yet.
    spill: Vec<u8>,
    spill_range: std::ops::Range<usize>,
    /// When the first bytes do not decode, what says whether they are plain records or the
    /// other container (none in the decoder that compression detection runs, which is such a
    /// check itself).
    diagnose: Option<Diagnosis>,
}

/// The CRC-32 (ISO-HDLC, gzip's) and size of a gzip member's output, which its trailer stores.
///
/// Every byte inflated passes through it, so on x86-64 it is computed by `crc-fast`, which
/// folds 64 bytes at a time with AVX-512 VPCLMULQDQ where the CPU has it (flate2's `Crc`
/// folds 16): on short records this CRC was the largest cost after inflating and the records'
/// own CRCs. Elsewhere it is flate2's.
pub(crate) struct MemberCrc {
    #[cfg(target_arch = "x86_64")]
    digest: crc_fast::Digest,
    #[cfg(not(target_arch = "x86_64"))]
    digest: Crc,
}

impl MemberCrc {
    pub(crate) fn new() -> Self {
        MemberCrc {
            #[cfg(target_arch = "x86_64")]
            digest: crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32IsoHdlc),
            #[cfg(not(target_arch = "x86_64"))]
            digest: Crc::new(),
        }
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.digest.update(bytes);
    }

    pub(crate) fn reset(&mut self) {
        self.digest.reset();
    }

    /// The CRC-32 of the bytes so far.
    pub(crate) fn sum(&self) -> u32 {
        #[cfg(target_arch = "x86_64")]
        // The algorithm's CRC is 32 bits wide; the crate returns every width as a u64.
        return self.digest.finalize() as u32;
        #[cfg(not(target_arch = "x86_64"))]
        return self.digest.sum();
    }

    /// How many bytes so far, modulo 2^32 (the trailer's ISIZE).
    pub(crate) fn amount(&self) -> u32 {
        #[cfg(target_arch = "x86_64")]
        return self.digest.get_amount() as u32;
        #[cfg(not(target_arch = "x86_64"))]
        return self.digest.amount();
    }
}

/// Reads into a buffer at least this large decompress straight into it: more than the 32 KiB
/// deflate window, so every byte decoded in a call has room.
const MIN_DIRECT_OUTPUT: usize = 64 << 10;

/// The most header bytes we accept before the deflate data (FEXTRA, FNAME and FCOMMENT can make
/// a header long; a corrupt one must not make us collect forever).
const MAX_GZIP_HEADER: usize = 1 << 20;

const FHCRC: u8 = 1 << 1;
const FEXTRA: u8 = 1 << 2;
const FNAME: u8 = 1 << 3;
const FCOMMENT: u8 = 1 << 4;
const FRESERVED: u8 = 0xe0;

/// The length of a complete gzip header at the start of `bytes`, `Ok(None)` if more bytes are
/// needed, or what is wrong with it.
pub(crate) fn gzip_header_len(bytes: &[u8]) -> Result<Option<usize>, &'static str> {
    let check = |prefix: &[u8]| -> Result<(), &'static str> {
        match prefix {
            [0x1f, 0x8b, ..] | [0x1f] | [] => {}
            _ => return Err("not a gzip member (bad magic bytes)"),
        }
        match prefix.get(2) {
            Some(8) | None => {}
            Some(_) => return Err("gzip member with a compression method other than deflate"),
        }
        match prefix.get(3) {
            Some(flags) if flags & FRESERVED != 0 => Err("gzip member with reserved flag bits set"),
            _ => Ok(()),
        }
    };
    check(bytes)?;
    if bytes.len() < 10 {
        return Ok(None);
    }
    let flags = bytes[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let Some(xlen) = bytes.get(at..at + 2) else {
            return Ok(None);
        };
        at += 2 + usize::from(u16::from_le_bytes([xlen[0], xlen[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            match bytes.get(at..).and_then(|rest| rest.iter().position(|&b| b == 0)) {
                Some(zero) => at += zero + 1,
                None => return Ok(None),
            }
        }
    }
    if flags & FHCRC != 0 {
        let Some(stored) = bytes.get(at..at + 2) else {
            return Ok(None);
        };
        let mut crc = Crc::new();
        crc.update(&bytes[..at]);
        if crc.sum() as u16 != u16::from_le_bytes([stored[0], stored[1]]) {
            return Err("the gzip header's CRC-16 does not match");
        }
        at += 2;
    }
    if at > bytes.len() {
        return Ok(None);
    }
    Ok(Some(at))
}

impl Inflater<&[u8]> {
    /// Whether the whole input has been taken in (a damage report is then no evidence against
    /// a prefix that was cut short).
    pub(crate) fn input_is_empty(&self) -> bool {
        self.src.is_empty()
    }
}

impl<R: BufRead> Inflater<R> {
    /// A decoder of a GZIP or ZLIB stream over `src`.
    pub(crate) fn new(src: R, container: Container) -> Self {
        let (inflate, state) = match container {
            Container::Zlib => (Decompress::new(true), State::Zlib),
            Container::Gzip => (Decompress::new(false), State::Gzip(GzipState::Header(Vec::new()))),
        };
        Inflater {
            src,
            inflate,
            state,
            crc: MemberCrc::new(),
            consumed: 0,
            produced: 0,
            pending: None,
            spill: Vec::new(),
            spill_range: 0..0,
            diagnose: None,
        }
    }

    /// The same decoder, asking `diagnosis` what first bytes that do not decode are instead:
    /// when it knows, that is the error ([`NotCompressedAs`]), not damage.
    pub(crate) fn with_diagnosis(mut self, diagnosis: Diagnosis) -> Self {
        self.diagnose = Some(diagnosis);
        self
    }

    fn damage(&self, what: impl Into<String>) -> StreamDamage {
        StreamDamage {
            what: what.into(),
            compressed_offset: self.consumed,
            decompressed_offset: self.produced,
        }
    }

    fn fail(&mut self, failure: impl Into<Failure>) -> io::Error {
        let failure = failure.into();
        let error = failure.to_io();
        self.state = State::Failed(failure);
        error
    }

    fn consume(&mut self, n: usize) {
        self.src.consume(n);
        self.consumed += n as u64;
    }

    /// Collects bytes into `buf` until `complete(buf)` says they form a whole header or trailer,
    /// which is at least `fixed` bytes long.
    fn collect(
        &mut self,
        buf: &mut Vec<u8>,
        fixed: usize,
        complete: impl Fn(&[u8]) -> Result<Option<usize>, &'static str>,
    ) -> io::Result<Collected> {
        loop {
            match complete(buf) {
                Err(what) => return Ok(Collected::Invalid(what)),
                Ok(Some(_)) => return Ok(Collected::Complete),
                Ok(None) if buf.len() >= MAX_GZIP_HEADER => {
                    return Ok(Collected::Invalid("gzip header longer than 1 MiB"))
                }
                Ok(None) => {}
            }
            let input = self.src.fill_buf()?;
            if input.is_empty() {
                return Ok(Collected::End { empty: buf.is_empty() });
            }
            // Past the fixed part, take one byte at a time so that no deflate data is taken for
            // header; headers are short, so this costs nothing that matters.
            let take = if buf.len() < fixed {
                (fixed - buf.len()).min(input.len())
            } else {
                1
            };
            buf.extend_from_slice(&input[..take]);
            self.consume(take);
        }
    }

    /// Hands out bytes left in `spill`.
    fn take_spill(&mut self, out: &mut [u8]) -> usize {
        let n = self.spill_range.len().min(out.len());
        let from = self.spill_range.start;
        out[..n].copy_from_slice(&self.spill[from..from + n]);
        self.spill_range.start += n;
        n
    }

    fn read_inner(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if !self.spill_range.is_empty() {
            return Ok(self.take_spill(out));
        }
        if let Some(damage) = self.pending.take() {
            return Err(self.fail(damage));
        }
        loop {
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return Ok(0),
                State::Failed(damage) => return Err(self.fail(damage)),
                State::Gzip(GzipState::Header(mut buf)) => {
                    let first = self.consumed == 0;
                    // An I/O error (even `Interrupted`) leaves the decoder where it was.
                    let collected = match self.collect(&mut buf, 10, gzip_header_len) {
                        Ok(collected) => collected,
                        Err(e) => {
                            self.state = State::Gzip(GzipState::Header(buf));
                            return Err(e);
                        }
                    };
                    match collected {
                        Collected::Complete => {
                            self.inflate.reset(false);
                            self.crc.reset();
                            self.state = State::Gzip(GzipState::Body);
                        }
                        // An empty input is an empty stream, as in TensorFlow.
                        Collected::End { empty: true } if first => return Ok(0),
                        Collected::End { .. } => {
                            let damage = self.damage("the stream ends inside a gzip header");
                            return Err(self.fail(damage));
                        }
                        Collected::Invalid(what) => {
                            if first {
                                // Bytes that are not GZIP at all say more than "bad magic":
                                // the header collected so far and the input buffered after it.
                                let mut prefix = buf.clone();
                                if let Ok(more) = self.src.fill_buf() {
                                    prefix.extend_from_slice(more);
                                }
                                let not = self.diagnose.and_then(|diagnose| diagnose(&prefix, Container::Gzip));
                                if let Some(not) = not {
                                    return Err(self.fail(Failure::NotCompressedAs(not)));
                                }
                            }
                            let what = if first {
                                what.to_owned()
                            } else {
                                format!("bytes after a gzip member: {what}")
                            };
                            // Named where the member's header starts, not where it was found bad.
                            let mut damage = self.damage(what);
                            damage.compressed_offset = damage.compressed_offset.saturating_sub(buf.len() as u64);
                            return Err(self.fail(damage));
                        }
                    }
                }
                State::Gzip(GzipState::Trailer(mut trailer)) => {
                    let collected = self.collect(&mut trailer, 8, |b| Ok((b.len() >= 8).then_some(8)));
                    let collected =
                        collected.inspect_err(|_| self.state = State::Gzip(GzipState::Trailer(trailer.clone())))?;
                    match collected {
                        Collected::Complete => {
                            let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
                            let size = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
                            if crc != self.crc.sum() || size != self.crc.amount() {
                                let damage = self.damage("the gzip member's CRC-32 or size does not match its data");
                                return Err(self.fail(damage));
                            }
                            // Another member may follow (TensorFlow reads concatenated members).
                            self.state = State::Gzip(GzipState::Header(Vec::new()));
                            if self.src.fill_buf()?.is_empty() {
                                self.state = State::Done;
                                return Ok(0);
                            }
                        }
                        Collected::End { .. } | Collected::Invalid(_) => {
                            let damage = self.damage("the stream ends inside a gzip trailer");
                            return Err(self.fail(damage));
                        }
                    }
                }
                state @ (State::Gzip(GzipState::Body) | State::Zlib) => {
                    self.state = state;
                    if out.is_empty() {
                        return Ok(0);
                    }
                    // Too small an output buffer can lose data at an error (miniz_oxide drops
                    // what it decoded into its window but could not hand out), so small reads
                    // are decompressed into `spill` and handed out from there.
                    let direct = out.len() >= MIN_DIRECT_OUTPUT;
                    if !direct && self.spill.len() < MIN_DIRECT_OUTPUT {
                        self.spill.resize(MIN_DIRECT_OUTPUT, 0);
                    }
                    let target: &mut [u8] = if direct { &mut *out } else { &mut self.spill };
                    let diagnose = self.diagnose;
                    let input = self.src.fill_buf()?;
                    let eof = input.is_empty();
                    let (in_before, out_before) = (self.inflate.total_in(), self.inflate.total_out());
                    let result = self.inflate.decompress(input, target, FlushDecompress::None);
                    // A ZLIB stream refused from its first bytes may be no ZLIB stream at all.
                    let not_zlib = match (&result, &self.state) {
                        (Err(_), State::Zlib) if in_before == 0 => {
                            diagnose.and_then(|diagnose| diagnose(input, Container::Zlib))
                        }
                        _ => None,
                    };
                    let consumed = (self.inflate.total_in() - in_before) as usize;
                    let written = (self.inflate.total_out() - out_before) as usize;
                    if matches!(self.state, State::Gzip(_)) {
                        self.crc.update(&target[..written]);
                    }
                    self.consume(consumed);
                    if let Some(not) = not_zlib {
                        // What it decoded from bytes that are no ZLIB stream is nothing.
                        return Err(self.fail(Failure::NotCompressedAs(not)));
                    }
                    self.produced += written as u64;
                    let written = if direct {
                        written
                    } else {
                        self.spill_range = 0..written;
                        self.take_spill(out)
                    };
                    let trouble = match result {
                        Ok(Status::StreamEnd) => {
                            self.state = match self.state {
                                State::Gzip(_) => State::Gzip(GzipState::Trailer(Vec::new())),
                                _ => State::Done,
                            };
                            None
                        }
                        // An empty input is an empty stream, as in TensorFlow.
                        Ok(_) if eof && self.consumed == 0 => {
                            self.state = State::Done;
                            None
                        }
                        Ok(_) if eof && written == 0 => Some(self.damage("the compressed stream ends early").into()),
                        // Input left and room for output, yet nothing moved: never spin on it.
                        Ok(_) if consumed == 0 && written == 0 => {
                            Some(self.damage("the decompressor made no progress").into())
                        }
                        Ok(_) => None,
                        Err(e) => Some(
                            self.damage(format!("invalid compressed data ({})", deflate_error(&e)))
                                .into(),
                        ),
                    };
                    match trouble {
                        Some(damage) if written > 0 => {
                            self.pending = Some(damage);
                            return Ok(written);
                        }
                        Some(damage) => return Err(self.fail(damage)),
                        None if written > 0 => return Ok(written),
                        None => {}
                    }
                }
            }
        }
    }
}

/// The inflater's words for what is wrong with the deflate data. zlib-rs reports damage found
/// in its fast decoding loop (an invalid literal/length or distance code, or a distance
/// reaching back before the start of the data) as "repeated call with bad state", as if it had
/// been called again after an error; this decoder never is, so that text always stands for one
/// of those, and zlib's own word for the likeliest is used.
fn deflate_error(error: &flate2::DecompressError) -> String {
    let text = error.to_string();
    match text.strip_suffix("repeated call with bad state") {
        Some(head) => format!("{head}invalid distance too far back, or an invalid code"),
        None => text,
    }
}

impl<R: BufRead> io::Read for Inflater<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.read_inner(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::test_files::{compressed, framed};
    use crate::record::Compression;
    use io::Read;

    /// Reads with small output buffers; the bytes, and the error that ended them.
    fn drain(bytes: &[u8], compression: Compression) -> (Vec<u8>, Option<StreamDamage>) {
        let container = match compression {
            Compression::Zlib => Container::Zlib,
            _ => Container::Gzip,
        };
        let mut decoder = Inflater::new(bytes, container);
        let mut out = Vec::new();
        let mut buf = [0u8; 100];
        loop {
            match decoder.read(&mut buf) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => {
                    let damage = e.get_ref().and_then(|e| e.downcast_ref::<StreamDamage>()).cloned();
                    return (out, Some(damage.expect("stream damage")));
                }
            }
        }
    }

    #[test]
    fn decodes_what_flate2_encodes() {
        let plain = framed(&[b"one", &[9u8; 5000], b""]);
        for compression in [Compression::Gzip, Compression::Zlib] {
            let bytes = compressed(&[b"one", &[9u8; 5000], b""], compression);
            assert_eq!(drain(&bytes, compression), (plain.clone(), None), "{compression}");
        }
    }

    #[test]
    fn a_damaged_zlib_checksum_still_delivers_the_data() {
        let plain = framed(&[b"one", b"two"]);
        let mut bytes = compressed(&[b"one", b"two"], Compression::Zlib);
        let last = bytes.len() - 1;
        bytes[last] ^= 0x10;
        let (out, damage) = drain(&bytes, Compression::Zlib);
        assert_eq!(out, plain);
        let damage = damage.expect("an error");
        assert_eq!(damage.decompressed_offset, plain.len() as u64);
        assert!(damage.compressed_offset <= bytes.len() as u64);
    }

    #[test]
    fn gzip_trailer_damage_and_concatenated_members() {
        let a = compressed(&[b"first"], Compression::Gzip);
        let b = compressed(&[b"second"], Compression::Gzip);
        let mut both = a.clone();
        both.extend_from_slice(&b);
        let mut plain = framed(&[b"first"]);
        plain.extend_from_slice(&framed(&[b"second"]));
        assert_eq!(drain(&both, Compression::Gzip), (plain.clone(), None));

        let mut bad = both.clone();
        bad[a.len() - 5] ^= 1; // the first member's CRC-32
        let (out, damage) = drain(&bad, Compression::Gzip);
        assert_eq!(out, framed(&[b"first"]));
        assert_eq!(damage.expect("crc error").compressed_offset, a.len() as u64);

        let mut garbage = a.clone();
        garbage.extend_from_slice(b"junk");
        let (out, damage) = drain(&garbage, Compression::Gzip);
        assert_eq!(out, framed(&[b"first"]));
        assert!(damage.expect("garbage").what.contains("after a gzip member"));

        let (out, damage) = drain(&a[..a.len() - 3], Compression::Gzip);
        assert_eq!(out, framed(&[b"first"]));
        assert!(damage.is_some());
        assert_eq!(drain(&[], Compression::Gzip), (vec![], None));
    }

    #[test]
    fn gzip_headers_with_optional_fields() {
        let body = compressed(&[b"x"], Compression::Gzip);
        // Rebuild the member with FEXTRA, FNAME, FCOMMENT and FHCRC set.
        let mut header = vec![0x1f, 0x8b, 8, FEXTRA | FNAME | FCOMMENT | FHCRC, 0, 0, 0, 0, 0, 3];
        header.extend_from_slice(&[2, 0, b'a', b'b']);
        header.extend_from_slice(b"name\0comment\0");
        let mut crc = Crc::new();
        crc.update(&header);
        header.extend_from_slice(&(crc.sum() as u16).to_le_bytes());
        header.extend_from_slice(&body[10..]);
        assert_eq!(drain(&header, Compression::Gzip), (framed(&[b"x"]), None));
        let at = header.len() - body.len() + 10 - 1;
        header[at] ^= 1;
        assert!(drain(&header, Compression::Gzip).1.is_some(), "header CRC checked");
    }

    #[test]
    fn damage_found_in_the_fast_loop_is_named_as_zlib_names_it() {
        // zlib says "invalid distance too far back" for this byte flipped.
        let mut bytes = include_bytes!("../../../../testdata/golden/records/gzip.tfrecord.gz").to_vec();
        bytes[74] ^= 1;
        let damage = drain(&bytes, Compression::Gzip).1.expect("damage");
        assert!(damage.what.contains("invalid distance too far back"), "{damage}");
        assert!(!damage.what.contains("repeated call"), "{damage}");
    }
}

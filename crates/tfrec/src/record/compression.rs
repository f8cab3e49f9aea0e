//! Whole-stream compression of TFRecord files (none, GZIP, ZLIB) and how it is chosen.
//!
//! As in TensorFlow, the *whole* file is one compressed stream and the record framing lives
//! inside the decompressed bytes; records are never compressed one by one. ZLIB is an
//! RFC 1950 stream (zlib `window_bits` 15), GZIP an RFC 1952 stream (`window_bits` 31).

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::str::FromStr;

use super::format::{Header, HEADER_LEN};
use super::inflate::{Container, Inflater, NotCompressedAs};

/// The compression of a TFRecord stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// Plain framed records (TensorFlow's `""` / `NONE`).
    #[default]
    None,
    /// An RFC 1952 gzip stream (TensorFlow's `GZIP`). Concatenated members are read in turn.
    Gzip,
    /// An RFC 1950 zlib stream (TensorFlow's `ZLIB`).
    Zlib,
}

/// How a reader decides the compression of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompressionChoice {
    /// Use this compression whatever the file is called or contains.
    Exactly(Compression),
    /// Decide from the file extension (`.gz`/`.gzip`, `.zz`/`.zlib`), else by sniffing the
    /// first bytes. This is the default.
    #[default]
    Auto,
}

impl From<Compression> for CompressionChoice {
    fn from(c: Compression) -> Self {
        CompressionChoice::Exactly(c)
    }
}

impl Compression {
    /// The compression a file name implies, if its extension names one: `.gz`/`.gzip` GZIP,
    /// `.zz`/`.zlib` ZLIB, and the plain record extensions (`.tfrecord`, `.tfrecords`,
    /// `.tfrec`, `.record`) none. `None` for any other name.
    pub fn from_extension(path: &Path) -> Option<Compression> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "gz" | "gzip" => Some(Compression::Gzip),
            "zz" | "zlib" => Some(Compression::Zlib),
            "tfrecord" | "tfrecords" | "tfrec" | "record" => Some(Compression::None),
            _ => None,
        }
    }

    /// The compression of a decoder's container (`None`: plain records).
    pub(crate) fn of_container(container: Option<Container>) -> Compression {
        match container {
            None => Compression::None,
            Some(Container::Gzip) => Compression::Gzip,
            Some(Container::Zlib) => Compression::Zlib,
        }
    }

    /// The decoder's container for a compressed stream; `None` for plain records.
    fn container(self) -> Option<Container> {
        match self {
            Compression::None => None,
            Compression::Gzip => Some(Container::Gzip),
            Compression::Zlib => Some(Container::Zlib),
        }
    }

    /// Decides the compression from the first bytes of a stream (up to 4 KiB), checking the
    /// guess: GZIP or ZLIB only when the magic bytes match *and* the bytes decompress without
    /// error to a valid first record header (or to fewer than 12 bytes); else plain, so that
    /// the record reader reports what is wrong. Unlike [`Compression::sniff`], a plain file
    /// whose first header is damaged is never taken for a compressed one (a first record of
    /// 376 bytes starts `78 01`, a zlib header; one of 35,615 bytes starts `1f 8b`).
    pub fn detect(prefix: &[u8]) -> Compression {
        detect(prefix)
    }

    /// Guesses the compression from the first bytes of a stream, without checking the guess
    /// (cheap, for listing directories; readers use [`Compression::detect`]).
    ///
    /// A plain TFRecord stream is recognised first, by a header whose length CRC agrees, because
    /// a plain length byte can look like a zlib header (a 120-byte record starts with 0x78).
    /// An empty or unrecognisable prefix is taken as plain, so that the record reader reports
    /// what is wrong with it.
    pub fn sniff(prefix: &[u8]) -> Compression {
        if let Some(header) = prefix.get(..HEADER_LEN) {
            let mut bytes = [0u8; HEADER_LEN];
            bytes.copy_from_slice(header);
            if Header::decode(&bytes).is_valid() {
                return Compression::None;
            }
        }
        match prefix {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            // RFC 1950: CM = 8 (deflate), CINFO <= 7, and the check bits make CMF*256+FLG a
            // multiple of 31.
            [cmf, flg, ..]
                if cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(*cmf) * 256 + u16::from(*flg)) % 31 == 0 =>
            {
                Compression::Zlib
            }
            _ => Compression::None,
        }
    }

    /// The name TensorFlow uses for this compression (`""`, `"GZIP"`, `"ZLIB"`).
    pub fn tf_name(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => "GZIP",
            Compression::Zlib => "ZLIB",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zlib => "zlib",
        })
    }
}

/// The error for a compression name that is not one of ours or TensorFlow's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a valid compression type: {0:?} (expected none, gzip or zlib)")]
pub struct UnknownCompression(pub String);

impl FromStr for Compression {
    type Err = UnknownCompression;

    /// Accepts TensorFlow's names (`""`, `NONE`, `GZIP`, `ZLIB`) in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "" | "none" => Ok(Compression::None),
            "gzip" | "gz" => Ok(Compression::Gzip),
            "zlib" | "zz" => Ok(Compression::Zlib),
            _ => Err(UnknownCompression(s.to_owned())),
        }
    }
}

impl FromStr for CompressionChoice {
    type Err = UnknownCompression;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("auto") {
            Ok(CompressionChoice::Auto)
        } else {
            s.parse().map(CompressionChoice::Exactly)
        }
    }
}

/// A stream with its first bytes read ahead and put back in front.
pub(crate) type Peeked<R> = io::Chain<io::Cursor<Vec<u8>>, R>;

/// Reads up to `want` bytes from the start of `reader` without losing them: the returned reader
/// yields the same stream from its first byte, and `peeked.get_ref().0.get_ref()` is the prefix.
pub(crate) fn peek_prefix<R: Read>(mut reader: R, want: usize) -> io::Result<Peeked<R>> {
    let mut prefix = Vec::with_capacity(want);
    (&mut reader).take(want as u64).read_to_end(&mut prefix)?;
    Ok(io::Cursor::new(prefix).chain(reader))
}

/// Wraps a raw stream in the decoder for `compression`.
pub(crate) fn decoder<'a, R: Read + Send + 'a>(reader: R, compression: Compression) -> Box<dyn Read + Send + 'a> {
    match compression {
        Compression::None => Box::new(reader),
        Compression::Gzip | Compression::Zlib => {
            let container = compression.container().unwrap_or(Container::Gzip);
            Box::new(Inflater::new(buffered(reader), container).with_diagnosis(what_it_is))
        }
    }
}

/// TensorFlow reads compressed input through 256 KiB buffers; so do we.
const COMPRESSED_BUFFER: usize = 256 * 1024;

fn buffered<R: Read>(reader: R) -> impl BufRead {
    BufReader::with_capacity(COMPRESSED_BUFFER, reader)
}

/// How many bytes of a stream [`detect`] looks at.
pub(crate) const DETECT_PREFIX: usize = 4096;

/// Decides the compression of a stream from its first bytes (up to [`DETECT_PREFIX`]), checking
/// each guess by decompressing: a plain stream is recognised by a valid first header; GZIP or
/// ZLIB is chosen only when the magic bytes match *and* the prefix decompresses without error
/// to a valid first header (or to fewer than 12 bytes). Anything else is plain, so that the
/// record reader reports what is wrong with it. This keeps a plain file whose first header is
/// damaged (a first record of 376 bytes starts `78 01`, one of 35,615 bytes starts `1f 8b`) from
/// being read as a compressed stream.
fn detect(prefix: &[u8]) -> Compression {
    let valid_header = |bytes: &[u8]| {
        <[u8; HEADER_LEN]>::try_from(bytes.get(..HEADER_LEN).unwrap_or(&[]))
            .is_ok_and(|h| Header::decode(&h).is_valid())
    };
    if valid_header(prefix) {
        return Compression::None;
    }
    let guess = Compression::sniff(prefix);
    if guess == Compression::None {
        return guess;
    }
    // This is the check of what the bytes are: the decoder runs none of its own.
    let mut decoder = Inflater::new(prefix, guess.container().unwrap_or(Container::Gzip));
    let mut out = [0u8; HEADER_LEN];
    let mut filled = 0;
    while filled < HEADER_LEN {
        match io::Read::read(&mut decoder, &mut out[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            // A prefix cut short is no evidence against the guess.
            Err(_) if decoder.input_is_empty() => break,
            Err(_) => return Compression::None,
        }
    }
    if filled < HEADER_LEN || valid_header(&out) {
        guess
    } else {
        Compression::None
    }
}

/// What first bytes that do not decode as `expected` are instead, when that is certain (a plain
/// TFRecord header whose length CRC holds, or a stream of the other compression that decodes to
/// one): the decoders' [`Diagnosis`](super::inflate::Diagnosis). `None` if they are only damage.
fn what_it_is(prefix: &[u8], expected: Container) -> Option<NotCompressedAs> {
    let prefix = &prefix[..prefix.len().min(DETECT_PREFIX)];
    let plain = <[u8; HEADER_LEN]>::try_from(prefix.get(..HEADER_LEN).unwrap_or(&[]))
        .is_ok_and(|header| Header::decode(&header).is_valid());
    let found = if plain {
        None
    } else {
        match detect(prefix) {
            Compression::None => return None,
            other => other.container(),
        }
    };
    (found != Some(expected)).then_some(NotCompressedAs { expected, found })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::format::encode_header;
    use crate::record::inflate::StreamDamage;
    use crate::record::test_files::{compressed, framed};

    #[test]
    fn extension_decides() {
        assert_eq!(
            Compression::from_extension(Path::new("a.tfrecord.gz")),
            Some(Compression::Gzip)
        );
        assert_eq!(Compression::from_extension(Path::new("a.ZZ")), Some(Compression::Zlib));
        assert_eq!(
            Compression::from_extension(Path::new("a.zlib")),
            Some(Compression::Zlib)
        );
        assert_eq!(
            Compression::from_extension(Path::new("a.tfrecord")),
            Some(Compression::None)
        );
        assert_eq!(Compression::from_extension(Path::new("train-00000-of-00010")), None);
    }

    #[test]
    fn sniff_prefers_a_valid_plain_header() {
        // A 120-byte record's first byte is 0x78, a zlib CMF; its valid CRC says plain.
        let header = encode_header(0x78);
        assert_eq!(Compression::sniff(&header), Compression::None);
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(Compression::sniff(&[0x78, 0x9c, 1, 2]), Compression::Zlib);
        assert_eq!(Compression::sniff(&[]), Compression::None);
    }

    #[test]
    fn names_parse() {
        assert_eq!("GZIP".parse::<Compression>(), Ok(Compression::Gzip));
        assert_eq!("".parse::<Compression>(), Ok(Compression::None));
        assert_eq!("auto".parse::<CompressionChoice>(), Ok(CompressionChoice::Auto));
        assert!("snappy".parse::<Compression>().is_err());
    }

    #[test]
    fn detection_checks_its_guess() {
        assert_eq!(detect(&framed(&[b"abc"])), Compression::None);
        assert_eq!(detect(&compressed(&[b"abc"], Compression::Gzip)), Compression::Gzip);
        assert_eq!(detect(&compressed(&[b"abc"], Compression::Zlib)), Compression::Zlib);
        assert_eq!(detect(&compressed(&[], Compression::Zlib)), Compression::Zlib);
        assert_eq!(detect(&[]), Compression::None);
        // Plain files whose first header is damaged and whose length bytes look compressed.
        for len in [376usize, 35_615] {
            let payload = vec![7u8; len];
            let mut file = framed(&[&payload, b"next"]);
            file[8] ^= 0xff;
            assert_ne!(
                Compression::sniff(&file),
                Compression::None,
                "the bytes look compressed"
            );
            assert_eq!(
                detect(&file[..DETECT_PREFIX.min(file.len())]),
                Compression::None,
                "{len}"
            );
        }
    }

    /// What a decoder that refuses `bytes` from the start says they are, if it says.
    fn found_instead(bytes: &[u8], container: Container) -> Option<NotCompressedAs> {
        let decoder = Inflater::new(bytes, container).with_diagnosis(what_it_is);
        let error = io::Read::read_to_end(&mut { decoder }, &mut Vec::new()).err()?;
        error.get_ref()?.downcast_ref::<NotCompressedAs>().copied()
    }

    #[test]
    fn bytes_of_another_kind_are_named_not_called_damage() {
        let plain = framed(&[b"one", b"two"]);
        // A first record of 376 bytes starts `78 01`, a valid ZLIB header.
        let zlib_like = framed(&[&[5u8; 376], b"two"]);
        let gzip = compressed(&[b"one"], Compression::Gzip);
        let zlib = compressed(&[b"one"], Compression::Zlib);
        let not = |expected: Compression, found: Compression| {
            Some(NotCompressedAs {
                expected: expected.container()?,
                found: found.container(),
            })
        };
        assert_eq!(
            found_instead(&plain, Container::Gzip),
            not(Compression::Gzip, Compression::None)
        );
        assert_eq!(
            found_instead(&plain, Container::Zlib),
            not(Compression::Zlib, Compression::None)
        );
        assert_eq!(
            found_instead(&zlib_like, Container::Zlib),
            not(Compression::Zlib, Compression::None)
        );
        assert_eq!(
            found_instead(&gzip, Container::Zlib),
            not(Compression::Zlib, Compression::Gzip)
        );
        assert_eq!(
            found_instead(&zlib, Container::Gzip),
            not(Compression::Gzip, Compression::Zlib)
        );
        // A damaged magic byte is only damage, named where the member starts.
        let mut bad = gzip.clone();
        bad[1] ^= 0x40;
        assert_eq!(found_instead(&bad, Container::Gzip), None);
        let error =
            io::Read::read_to_end(&mut decoder(&bad[..], Compression::Gzip), &mut Vec::new()).expect_err("damage");
        let damage = error
            .get_ref()
            .and_then(|e| e.downcast_ref::<StreamDamage>())
            .expect("damage");
        assert_eq!(damage.compressed_offset, 0, "{damage}");
    }
}

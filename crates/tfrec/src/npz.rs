//! Writing tensors as a NumPy `.npz` file (a zip of `.npy` arrays), so `numpy.load` reads
//! parsed batches directly, without pickle (`tfrec parse --format npz` writes with it).
//!
//! Batches are streamed: each batch's values are appended, little-endian, to an anonymous
//! spool file as the batch comes (each array a list of chunks of it), and the batch is
//! dropped; [`NpzWriter::finish`] then copies every array's chunks into its zip member behind
//! its `.npy` header. An npz member needs
//! its whole array (the header holds the final shape) and zip members cannot interleave, so
//! the spools are what keeps memory bounded to about one batch, whatever the input's size.
//! The batches are joined by the joiner behind [`crate::parse::concat_batch`] (same checks,
//! same arrays: dense tensors padded to the widest batch, sparse indices offset by the rows
//! before, ragged row splits rebased), with the values kept in the spool instead of memory;
//! the padding is written during the copy.
//!
//! Bytes are stored losslessly (NumPy's fixed-width `S<n>` would drop trailing NUL bytes): a
//! string array `A` becomes `A/bytes` (uint8, every value concatenated in row-major order),
//! `A/offsets` (int64, one more than the values: value `i` is `bytes[offsets[i]:offsets[i+1]]`)
//! and `A/shape` (int64, the array's shape).

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::parse::{ConcatError, DType, DenseJoin, JoinStore, Joined, TensorMap, Values};
use crate::record::read_exact_at;

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// Values per block written: 64 KiB of int64s, in a buffer reused across blocks.
const BLOCK: usize = 8192;

/// Writes `values` little-endian, `N` bytes each, a block at a time.
fn write_le<T: Copy, const N: usize>(out: &mut impl Write, values: &[T], le: fn(T) -> [u8; N]) -> io::Result<()> {
    write_le_iter(out, values.iter().copied(), le)
}

/// As [`write_le`], for values computed on the way (rebased offsets, shifted indices).
fn write_le_iter<T, const N: usize>(
    out: &mut impl Write,
    values: impl IntoIterator<Item = T>,
    le: fn(T) -> [u8; N],
) -> io::Result<()> {
    let mut buf = [0u8; BLOCK * 8];
    let block = buf.len() / N;
    let mut values = values.into_iter().peekable();
    while values.peek().is_some() {
        let mut n = 0;
        for (dst, v) in buf.chunks_exact_mut(N).take(block).zip(values.by_ref()) {
            dst.copy_from_slice(&le(v));
            n += N;
        }
        out.write_all(&buf[..n])?;
    }
    Ok(())
}

/// The `.npy` header (format 1.0) of an array of `descr` and `shape`.
fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out
}

/// The one temporary file every array spools into (one file, not one per array: a spec of
/// thousands of features would otherwise run out of file descriptors). Anonymous: it goes
/// away with the process.
#[derive(Debug)]
struct SpoolFile {
    file: File,
    /// Bytes written so far (writes only ever append).
    end: Cell<u64>,
}

/// One output array's values so far: its chunks of the spool file, in order.
#[derive(Debug)]
struct Spool {
    file: Rc<SpoolFile>,
    chunks: Vec<(u64, u64)>,
    /// Bytes written.
    len: u64,
}

impl Spool {
    fn new(file: &Rc<SpoolFile>) -> Spool {
        Spool {
            file: Rc::clone(file),
            chunks: Vec::new(),
            len: 0,
        }
    }

    /// A writer appending to the spool (and counting what it appends).
    fn writer(&mut self) -> SpoolWriter<'_> {
        SpoolWriter(self)
    }

    /// Reads it back from the start.
    fn rewind(&self) -> SpoolReader<'_> {
        SpoolReader {
            file: &self.file.file,
            chunks: &self.chunks,
            at: 0,
        }
    }
}

/// Copies `reader` to its end in 1 MiB reads (`io::copy` would go 8 KiB at a time: a
/// syscall pair per 8 KiB of output).
fn copy_all(reader: &mut impl Read, out: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n])?;
    }
}

struct SpoolWriter<'a>(&'a mut Spool);

impl Write for SpoolWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let spool = &mut *self.0;
        let start = spool.file.end.get();
        let n = (&spool.file.file).write(buf)?;
        spool.file.end.set(start + n as u64);
        spool.len += n as u64;
        match spool.chunks.last_mut() {
            Some((s, l)) if *s + *l == start => *l += n as u64,
            _ => spool.chunks.push((start, n as u64)),
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads a spool's chunks in order (positioned reads: the shared file's offset is not moved).
struct SpoolReader<'a> {
    file: &'a File,
    chunks: &'a [(u64, u64)],
    /// How far into the first chunk.
    at: u64,
}

impl Read for SpoolReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while let Some(&(start, len)) = self.chunks.first() {
            if self.at == len {
                self.chunks = &self.chunks[1..];
                self.at = 0;
                continue;
            }
            let want = buf.len().min((len - self.at) as usize);
            read_exact_at(self.file, &mut buf[..want], start + self.at)?;
            self.at += want as u64;
            return Ok(want);
        }
        Ok(0)
    }
}

/// Why a batch could not be added: it does not join the batches before it, or the spool
/// could not be written.
enum JoinFailure {
    Concat(ConcatError),
    Io(io::Error),
}

impl From<ConcatError> for JoinFailure {
    fn from(e: ConcatError) -> Self {
        JoinFailure::Concat(e)
    }
}

impl From<io::Error> for JoinFailure {
    fn from(e: io::Error) -> Self {
        JoinFailure::Io(e)
    }
}

/// Why a batch's tensor cannot be joined to the batches before it.
fn mismatch(name: &str, batch: usize, what: String) -> io::Error {
    io::Error::other(format!(
        "{name}: cannot join batch {batch} to the batches before it: {what}"
    ))
}

/// The values of one dense array as they come: numbers, or bytes with their end offsets.
#[derive(Debug)]
enum SpooledValues {
    Numbers {
        descr: &'static str,
        size: usize,
        spool: Spool,
    },
    Bytes {
        bytes: Spool,
        ends: Spool,
    },
}

/// The joiner's values in the spool file, little-endian, as the `.npy` members hold them.
struct SpoolStore(Rc<SpoolFile>);

impl JoinStore for SpoolStore {
    type Dense = SpooledValues;
    type Ints = Spool;
    type Error = JoinFailure;

    fn dense(&mut self, dtype: DType) -> Result<SpooledValues, JoinFailure> {
        Ok(match dtype {
            DType::Int64 => SpooledValues::Numbers {
                descr: "<i8",
                size: 8,
                spool: Spool::new(&self.0),
            },
            DType::Float32 => SpooledValues::Numbers {
                descr: "<f4",
                size: 4,
                spool: Spool::new(&self.0),
            },
            DType::String => {
                let mut ends = Spool::new(&self.0);
                ends.writer().write_all(&0i64.to_le_bytes())?;
                SpooledValues::Bytes {
                    bytes: Spool::new(&self.0),
                    ends,
                }
            }
        })
    }

    fn ints(&mut self) -> Result<Spool, JoinFailure> {
        Ok(Spool::new(&self.0))
    }

    fn append_dense(&mut self, to: &mut SpooledValues, values: Values) -> Result<(), JoinFailure> {
        match (to, &values) {
            (SpooledValues::Numbers { spool, .. }, Values::Int64(v)) => {
                write_le(&mut spool.writer(), v, i64::to_le_bytes)?
            }
            (SpooledValues::Numbers { spool, .. }, Values::Float32(v)) => {
                write_le(&mut spool.writer(), v, f32::to_le_bytes)?
            }
            (SpooledValues::Bytes { bytes, ends }, Values::String(a)) => {
                let base = bytes.len as i64;
                bytes.writer().write_all(a.data())?;
                write_le_iter(
                    &mut ends.writer(),
                    a.offsets()[1..].iter().map(|&o| o as i64 + base),
                    i64::to_le_bytes,
                )?
            }
            // The joiner checks every part's dtype against the first's before its values.
            _ => return Err(io::Error::other("values of another dtype than the array's").into()),
        }
        Ok(())
    }

    fn append_ints(&mut self, to: &mut Spool, values: impl Iterator<Item = i64>) -> Result<(), JoinFailure> {
        Ok(write_le_iter(&mut to.writer(), values, i64::to_le_bytes)?)
    }
}

/// Writes the array(s) of a joined dense array named `name` into the zip.
fn write_dense(j: &DenseJoin<SpoolStore>, zip: &mut Zip, name: &str) -> io::Result<()> {
    let shape = j.shape();
    let width = j.padded_width();
    let inner = j.inner();
    let parts = j.parts();
    match j.values() {
        SpooledValues::Numbers { descr, size, spool } => {
            zip.start(name, &npy_header(descr, &shape))?;
            copy_padded_from(&mut spool.rewind(), zip, parts, width, inner * *size, Pad::Zeros)?;
        }
        SpooledValues::Bytes { bytes, ends } => {
            zip.start(&format!("{name}/bytes"), &npy_header("|u1", &[bytes.len as usize]))?;
            copy_all(&mut bytes.rewind(), zip)?;
            let values: usize = shape.iter().product();
            zip.start(&format!("{name}/offsets"), &npy_header("<i8", &[values + 1]))?;
            // The leading 0, then each value's end; padding values are empty strings.
            let mut reader = ends.rewind();
            let mut zero = [0u8; 8];
            reader.read_exact(&mut zero)?;
            zip.write_all(&zero)?;
            copy_padded_from(&mut reader, zip, parts, width, inner * 8, Pad::RepeatLast(zero))?;
            zip.start(&format!("{name}/shape"), &npy_header("<i8", &[shape.len()]))?;
            write_le_iter(zip, shape.iter().map(|&d| d as i64), i64::to_le_bytes)?;
        }
    }
    Ok(())
}

/// Writes the arrays of a joined tensor: `name` for a dense tensor (three for strings, see the
/// module docs); `name/indices`, `name/values`, `name/dense_shape` for a sparse one;
/// `name/flat_values` and `name/row_splits_<level>` for a ragged one.
fn write_joined(joined: &Joined<SpoolStore>, zip: &mut Zip, name: &str) -> io::Result<()> {
    match joined {
        Joined::Dense(j) => write_dense(j, zip, name),
        Joined::Sparse {
            indices,
            values,
            dense_shape,
        } => {
            let rank = dense_shape.len();
            let n = indices.len as usize / 8 / rank.max(1);
            zip.start(&format!("{name}/indices"), &npy_header("<i8", &[n, rank]))?;
            copy_all(&mut indices.rewind(), zip)?;
            write_dense(values, zip, &format!("{name}/values"))?;
            write_i64s(zip, &format!("{name}/dense_shape"), dense_shape)
        }
        Joined::Ragged { flat, splits, .. } => {
            write_dense(flat, zip, &format!("{name}/flat_values"))?;
            for (level, (spool, _)) in splits.iter().enumerate() {
                zip.start(
                    &format!("{name}/row_splits_{level}"),
                    &npy_header("<i8", &[spool.len as usize / 8]),
                )?;
                copy_all(&mut spool.rewind(), zip)?;
            }
            Ok(())
        }
    }
}

/// What pads a row: zeros (numbers) or the last 8-byte value again (string end offsets).
#[derive(Clone, Copy)]
enum Pad {
    Zeros,
    RepeatLast([u8; 8]),
}

/// Copies the batches' rows from `reader`; with `width`, each row of `w` units (of `unit`
/// bytes) is followed by `width - w` units of padding.
fn copy_padded_from(
    reader: &mut impl Read,
    zip: &mut Zip,
    parts: &[(usize, usize)],
    width: Option<usize>,
    unit: usize,
    pad: Pad,
) -> io::Result<()> {
    let Some(width) = width else {
        return copy_all(reader, zip);
    };
    let mut buf = vec![0u8; 1 << 20];
    let mut last = match pad {
        Pad::RepeatLast(l) => l,
        Pad::Zeros => [0; 8],
    };
    let zeros = [0u8; 4096];
    for &(rows, w) in parts {
        if w == width {
            copy_n(reader, zip, rows * w * unit, &mut buf, &mut last)?;
            continue;
        }
        let mut padding = (width - w) * unit;
        let mut fill = Vec::with_capacity(padding);
        for _ in 0..rows {
            copy_n(reader, zip, w * unit, &mut buf, &mut last)?;
            match pad {
                Pad::Zeros => {
                    padding = (width - w) * unit;
                    while padding > 0 {
                        let k = padding.min(zeros.len());
                        zip.write_all(&zeros[..k])?;
                        padding -= k;
                    }
                }
                Pad::RepeatLast(_) => {
                    fill.clear();
                    for _ in 0..(width - w) * unit / 8 {
                        fill.extend_from_slice(&last);
                    }
                    zip.write_all(&fill)?;
                }
            }
        }
    }
    Ok(())
}

/// Copies `n` bytes through `buf`, keeping the last 8 in `last` (`n` and the buffer's size
/// are multiples of 8 where `last` is used: string end offsets).
fn copy_n(
    reader: &mut impl Read,
    out: &mut impl Write,
    mut n: usize,
    buf: &mut [u8],
    last: &mut [u8; 8],
) -> io::Result<()> {
    while n > 0 {
        let k = n.min(buf.len());
        reader.read_exact(&mut buf[..k])?;
        out.write_all(&buf[..k])?;
        if k >= 8 {
            last.copy_from_slice(&buf[k - 8..k]);
        }
        n -= k;
    }
    Ok(())
}

/// Writes a whole small array of int64s.
fn write_i64s(zip: &mut Zip, name: &str, values: &[i64]) -> io::Result<()> {
    zip.start(name, &npy_header("<i8", &[values.len()]))?;
    write_le(zip, values, i64::to_le_bytes)
}

/// The zip being written: stored (uncompressed) members, zip64 when large.
struct Zip(ZipWriter<BufWriter<File>>);

impl Zip {
    /// Starts the member `name.npy` with its `.npy` header.
    fn start(&mut self, name: &str, header: &[u8]) -> io::Result<()> {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(true);
        self.0
            .start_file(format!("{name}.npy"), options)
            .map_err(io::Error::other)?;
        self.0.write_all(header)
    }
}

impl Write for Zip {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Writes an `.npz` file of tensors given a batch at a time, each tensor joined over all the
/// batches into one array per tensor part (see the module docs).
pub struct NpzWriter {
    file: File,
    spool_dir: PathBuf,
    /// Made with the first batch.
    store: Option<SpoolStore>,
    /// Every tensor as `prefix + name`, in the order of the first batch.
    tensors: Vec<(String, Joined<SpoolStore>)>,
    batches: usize,
}

impl NpzWriter {
    /// Writes to `file`, spooling in `spool_dir` (best the output's directory: the spool is as
    /// large as the output).
    pub fn new(file: File, spool_dir: &Path) -> NpzWriter {
        NpzWriter {
            file,
            spool_dir: spool_dir.to_path_buf(),
            store: None,
            tensors: Vec::new(),
            batches: 0,
        }
    }

    /// Appends one batch: its tensor maps, each name prefixed (`""`, or `"context/"` and the
    /// like for the parts of a SequenceExample batch). Every batch must hold the first's
    /// tensors, in the same order.
    pub fn push<'a>(&mut self, parts: impl IntoIterator<Item = (&'a str, TensorMap)>) -> io::Result<()> {
        let batch = self.batches;
        let store = match &mut self.store {
            Some(s) => s,
            None => self.store.insert(SpoolStore(Rc::new(SpoolFile {
                file: tempfile::tempfile_in(&self.spool_dir)?,
                end: Cell::new(0),
            }))),
        };
        let mut i = 0;
        for (prefix, tensors) in parts {
            for (name, tensor) in tensors {
                let failed = |full: &str, e: JoinFailure| match e {
                    JoinFailure::Io(e) => e,
                    JoinFailure::Concat(e) => io::Error::other(format!("{full}: {e}")),
                };
                if batch == 0 {
                    let full = format!("{prefix}{name}");
                    let joined = Joined::new(store, batch, tensor).map_err(|e| failed(&full, e))?;
                    self.tensors.push((full, joined));
                    i += 1;
                    continue;
                }
                let Some((full, joined)) = self.tensors.get_mut(i) else {
                    return Err(mismatch(
                        &format!("{prefix}{name}"),
                        batch,
                        "a tensor the first batch did not have".into(),
                    ));
                };
                if full.strip_prefix(prefix) != Some(name.as_str()) {
                    return Err(mismatch(
                        &format!("{prefix}{name}"),
                        batch,
                        format!("found in place of {full}"),
                    ));
                }
                joined.push(store, batch, tensor).map_err(|e| failed(full, e))?;
                i += 1;
            }
        }
        if i != self.tensors.len() {
            return Err(io::Error::other(format!(
                "batch {batch} has {i} tensors, the first batch {}",
                self.tensors.len()
            )));
        }
        self.batches += 1;
        Ok(())
    }

    /// Writes every joined array into the zip, then syncs the file.
    pub fn finish(self) -> io::Result<()> {
        let mut zip = Zip(ZipWriter::new(BufWriter::with_capacity(1 << 16, self.file)));
        for (name, joined) in &self.tensors {
            write_joined(joined, &mut zip, name)?;
        }
        let file = zip
            .0
            .finish()
            .map_err(io::Error::other)?
            .into_inner()
            .map_err(|e| e.into_error())?;
        file.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::example::{Example, SequenceExample};
    use crate::parse::{concat_batch, ExampleParser, SequenceParser, SpecFile, Tensor};

    use super::*;

    #[test]
    fn blocks_write_every_value_little_endian() {
        // More than two blocks and a partial one, so block boundaries are crossed.
        for n in [0, 1, BLOCK - 1, BLOCK, 2 * BLOCK + 3] {
            let values: Vec<i64> = (0..n as i64).map(|i| i * 0x0101_0101 - 7).collect();
            let mut out = Vec::new();
            write_le(&mut out, &values, i64::to_le_bytes).unwrap();
            let expected: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(out, expected, "{n} values");
            let floats: Vec<f32> = values.iter().map(|&v| v as f32 * 0.5).collect();
            let mut out = Vec::new();
            write_le(&mut out, &floats, f32::to_le_bytes).unwrap();
            let expected: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(out, expected, "{n} floats");
        }
    }

    /// The `.npy` members a whole (already joined) tensor should give, written the simple way.
    fn expected(name: &str, t: &Tensor, out: &mut BTreeMap<String, Vec<u8>>) {
        let i64s = |v: &mut Vec<u8>, xs: &mut dyn Iterator<Item = i64>| xs.for_each(|x| v.extend(x.to_le_bytes()));
        match t {
            Tensor::Dense(d) => match d.values() {
                Values::Int64(v) => {
                    let mut b = npy_header("<i8", d.shape());
                    i64s(&mut b, &mut v.iter().copied());
                    out.insert(name.into(), b);
                }
                Values::Float32(v) => {
                    let mut b = npy_header("<f4", d.shape());
                    v.iter().for_each(|x| b.extend(x.to_le_bytes()));
                    out.insert(name.into(), b);
                }
                Values::String(a) => {
                    let mut b = npy_header("|u1", &[a.data().len()]);
                    b.extend_from_slice(a.data());
                    out.insert(format!("{name}/bytes"), b);
                    let mut o = npy_header("<i8", &[a.offsets().len()]);
                    i64s(&mut o, &mut a.offsets().iter().map(|&x| x as i64));
                    out.insert(format!("{name}/offsets"), o);
                    let mut s = npy_header("<i8", &[d.shape().len()]);
                    i64s(&mut s, &mut d.shape().iter().map(|&x| x as i64));
                    out.insert(format!("{name}/shape"), s);
                }
            },
            Tensor::Sparse(s) => {
                let mut b = npy_header("<i8", s.indices.shape());
                i64s(&mut b, &mut s.indices.iter().copied());
                out.insert(format!("{name}/indices"), b);
                expected(&format!("{name}/values"), &Tensor::Dense(s.values.clone()), out);
                let mut d = npy_header("<i8", &[s.dense_shape.len()]);
                i64s(&mut d, &mut s.dense_shape.iter().copied());
                out.insert(format!("{name}/dense_shape"), d);
            }
            Tensor::Ragged(r) => {
                expected(
                    &format!("{name}/flat_values"),
                    &Tensor::Dense(r.flat_values().clone()),
                    out,
                );
                for (level, splits) in r.nested_row_splits().iter().enumerate() {
                    let mut b = npy_header("<i8", &[splits.len()]);
                    i64s(&mut b, &mut splits.iter().copied());
                    out.insert(format!("{name}/row_splits_{level}"), b);
                }
            }
        }
    }

    /// Streams `batches` into an npz and checks every member against the joined tensors.
    fn check(batches: Vec<Vec<(&'static str, TensorMap)>>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.npz");
        let mut npz = NpzWriter::new(File::create(&path).unwrap(), dir.path());
        for b in &batches {
            npz.push(b.clone()).unwrap();
        }
        npz.finish().unwrap();
        let mut joined: BTreeMap<String, Vec<Tensor>> = BTreeMap::new();
        for b in batches {
            for (prefix, map) in b {
                for (name, t) in map {
                    joined.entry(format!("{prefix}{name}")).or_default().push(t);
                }
            }
        }
        let mut want = BTreeMap::new();
        for (name, parts) in joined {
            expected(&name, &concat_batch(parts).unwrap(), &mut want);
        }
        let mut zip = zip::ZipArchive::new(File::open(&path).unwrap()).unwrap();
        let mut got = BTreeMap::new();
        for i in 0..zip.len() {
            let mut f = zip.by_index(i).unwrap();
            let name = f.name().unwrap().strip_suffix(".npy").unwrap().to_owned();
            let mut b = Vec::new();
            f.read_to_end(&mut b).unwrap();
            got.insert(name, b);
        }
        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
        for (name, b) in &want {
            assert!(got[name] == *b, "{name}: streamed {:?}\nexpected {:?}", got[name], b);
        }
    }

    #[test]
    fn streamed_examples_join_as_concat_batch_does() {
        let spec = serde_json::json!({
            "d": {"type": "FixedLenFeature", "shape": [2], "dtype": "int64", "default_value": [7, 8]},
            "b": {"type": "FixedLenFeature", "shape": [], "dtype": "string", "default_value": "none"},
            "v": {"type": "VarLenFeature", "dtype": "string"},
            "r": {"type": "RaggedFeature", "dtype": "float32"},
        });
        let SpecFile::Example(specs) = SpecFile::from_json_str(&spec.to_string()).unwrap() else {
            panic!("an Example spec")
        };
        let parser = ExampleParser::new(&specs).unwrap();
        let records: Vec<Vec<u8>> = (0..11i64)
            .map(|i| {
                let mut b = Example::builder();
                if i % 3 != 0 {
                    b = b.int64("d", vec![i, -i]).bytes("b", format!("x{i}\0").into_bytes());
                }
                let list: Vec<Vec<u8>> = (0..i % 4).map(|j| vec![b'a' + j as u8; j as usize]).collect();
                b.bytes("v", list)
                    .float("r", (0..i % 5).map(|j| j as f32 * 0.5).collect::<Vec<f32>>())
                    .build()
                    .unwrap()
                    .encode()
            })
            .collect();
        for size in [1, 3, 11] {
            let batches = records
                .chunks(size)
                .map(|c| {
                    let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
                    vec![("", parser.parse_batch(&refs).unwrap())]
                })
                .collect();
            check(batches);
        }
    }

    #[test]
    fn streamed_sequences_are_padded_to_the_longest_batch() {
        let spec = serde_json::json!({
            "context_features": {"c": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": 0}},
            "sequence_features": {
                "x": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32", "allow_missing": true},
                "t": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "string", "allow_missing": true},
                "y": {"type": "VarLenFeature", "dtype": "int64"},
            }
        });
        let SpecFile::Sequence(specs) = SpecFile::from_json_str(&spec.to_string()).unwrap() else {
            panic!("a SequenceExample spec")
        };
        let parser = SequenceParser::new(&specs).unwrap();
        let frames = [0usize, 3, 1, 0, 5, 2, 2, 0, 4];
        let records: Vec<Vec<u8>> = frames
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let x: Vec<Vec<f32>> = (0..n).map(|f| vec![f as f32, i as f32]).collect();
                let t: Vec<Vec<u8>> = (0..n).map(|f| format!("{i}:{f}").into_bytes()).collect();
                let y: Vec<Vec<i64>> = (0..n).map(|f| (0..f as i64).collect()).collect();
                SequenceExample::builder()
                    .context_int64("c", i as i64)
                    .float_list("x", x)
                    .bytes_list("t", t)
                    .int64_list("y", y)
                    .build()
                    .unwrap()
                    .encode()
            })
            .collect();
        for size in [1, 2, 4, 9] {
            let batches = records
                .chunks(size)
                .map(|c| {
                    let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
                    let p = parser.parse_batch(&refs).unwrap();
                    vec![
                        ("context/", p.context),
                        ("feature_lists/", p.feature_lists),
                        ("lengths/", p.lengths),
                    ]
                })
                .collect();
            check(batches);
        }
    }
}

//! Writing tensors as a NumPy `.npz` file (a zip of `.npy` arrays), so `numpy.load` reads the
//! output of `tfrec parse` directly, without pickle.
//!
//! Bytes are stored losslessly (NumPy's fixed-width `S<n>` would drop trailing NUL bytes): a
//! string array `A` becomes `A/bytes` (uint8, every value concatenated in row-major order),
//! `A/offsets` (int64, one more than the values: value `i` is `bytes[offsets[i]:offsets[i+1]]`)
//! and `A/shape` (int64, the array's shape).

use std::fs::File;
use std::io::{self, BufWriter, Write};

use tfrec::parse::{DenseTensor, Tensor, TensorMap, Values};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// One `.npy` array: dtype descriptor, shape, values. Values are written straight from the
/// tensor in blocks (no copy of the whole array: for large outputs the copy and its fresh pages
/// cost more than the parse).
struct Npy<'a> {
    descr: &'static str,
    shape: Vec<usize>,
    data: Data<'a>,
}

enum Data<'a> {
    I64s(&'a [i64]),
    F32s(&'a [f32]),
    /// Offsets into a bytes buffer, written as int64.
    Offsets(&'a [usize]),
    Bytes(&'a [u8]),
    Owned(Vec<i64>),
}

/// Values per block written: 64 KiB of int64s, in a buffer reused across blocks.
const BLOCK: usize = 8192;

/// Writes `values` little-endian, `N` bytes each, a block at a time.
fn write_le<T: Copy, const N: usize>(out: &mut impl Write, values: &[T], le: fn(T) -> [u8; N]) -> io::Result<()> {
    let mut buf = vec![0u8; BLOCK.min(values.len()) * N];
    for chunk in values.chunks(BLOCK) {
        let bytes = &mut buf[..chunk.len() * N];
        for (dst, &v) in bytes.chunks_exact_mut(N).zip(chunk) {
            dst.copy_from_slice(&le(v));
        }
        out.write_all(bytes)?;
    }
    Ok(())
}

impl<'a> Npy<'a> {
    fn i64s(values: impl IntoIterator<Item = i64>, shape: Vec<usize>) -> Npy<'a> {
        Npy {
            descr: "<i8",
            shape,
            data: Data::Owned(values.into_iter().collect()),
        }
    }

    /// The arrays of a dense tensor named `name` (three for strings, see the module docs).
    fn dense(name: &str, t: &'a DenseTensor) -> Vec<(String, Npy<'a>)> {
        let shape = t.shape().to_vec();
        let one = |descr, data| {
            vec![(
                name.to_owned(),
                Npy {
                    descr,
                    shape: shape.clone(),
                    data,
                },
            )]
        };
        match t.values() {
            Values::Int64(v) => one("<i8", Data::I64s(v)),
            Values::Float32(v) => one("<f4", Data::F32s(v)),
            Values::String(a) => vec![
                (
                    format!("{name}/bytes"),
                    Npy {
                        descr: "|u1",
                        shape: vec![a.data().len()],
                        data: Data::Bytes(a.data()),
                    },
                ),
                (
                    format!("{name}/offsets"),
                    Npy {
                        descr: "<i8",
                        shape: vec![a.offsets().len()],
                        data: Data::Offsets(a.offsets()),
                    },
                ),
                (
                    format!("{name}/shape"),
                    Npy::i64s(shape.iter().map(|&d| d as i64), vec![shape.len()]),
                ),
            ],
        }
    }

    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let dims: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        let shape = match dims.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", dims.join(", ")),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
            self.descr
        );
        // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
        let total = 10 + header.len() + 1;
        header.push_str(&" ".repeat((64 - total % 64) % 64));
        header.push('\n');
        out.write_all(b"\x93NUMPY\x01\x00")?;
        out.write_all(&(header.len() as u16).to_le_bytes())?;
        out.write_all(header.as_bytes())?;
        match &self.data {
            Data::I64s(v) => write_le(out, v, i64::to_le_bytes),
            Data::F32s(v) => write_le(out, v, f32::to_le_bytes),
            Data::Offsets(v) => write_le(out, v, |o| (o as i64).to_le_bytes()),
            Data::Owned(v) => write_le(out, v, i64::to_le_bytes),
            Data::Bytes(b) => out.write_all(b),
        }
    }
}

/// The arrays of one tensor: `name` for a dense tensor; `name/indices`, `name/values`,
/// `name/dense_shape` for a sparse one; `name/flat_values` and `name/row_splits_<level>` for a
/// ragged one.
fn arrays<'a>(name: &str, tensor: &'a Tensor) -> Vec<(String, Npy<'a>)> {
    match tensor {
        Tensor::Dense(t) => Npy::dense(name, t),
        Tensor::Sparse(t) => {
            let mut out = vec![(
                format!("{name}/indices"),
                match t.indices.as_slice() {
                    Some(s) => Npy {
                        descr: "<i8",
                        shape: t.indices.shape().to_vec(),
                        data: Data::I64s(s),
                    },
                    None => Npy::i64s(t.indices.iter().copied(), t.indices.shape().to_vec()),
                },
            )];
            out.extend(Npy::dense(&format!("{name}/values"), &t.values));
            out.push((
                format!("{name}/dense_shape"),
                Npy::i64s(t.dense_shape.iter().copied(), vec![t.dense_shape.len()]),
            ));
            out
        }
        Tensor::Ragged(t) => {
            let mut out = Npy::dense(&format!("{name}/flat_values"), t.flat_values());
            for (level, splits) in t.nested_row_splits().iter().enumerate() {
                out.push((
                    format!("{name}/row_splits_{level}"),
                    Npy::i64s(splits.iter().copied(), vec![splits.len()]),
                ));
            }
            out
        }
    }
}

/// Writes an `.npz` file, one tensor map at a time.
pub struct NpzWriter {
    zip: ZipWriter<BufWriter<File>>,
}

impl NpzWriter {
    /// Writes to `file` (see [`crate::output::PendingFile`]).
    pub fn new(file: File) -> NpzWriter {
        NpzWriter {
            zip: ZipWriter::new(BufWriter::new(file)),
        }
    }

    /// Adds every tensor of `tensors`, named `prefix + name`.
    pub fn add(&mut self, prefix: &str, tensors: &TensorMap) -> io::Result<()> {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(true);
        for (name, tensor) in tensors {
            for (array, npy) in arrays(&format!("{prefix}{name}"), tensor) {
                self.zip
                    .start_file(format!("{array}.npy"), options)
                    .map_err(io::Error::other)?;
                npy.write(&mut self.zip)?;
            }
        }
        Ok(())
    }

    pub fn finish(self) -> io::Result<()> {
        let file = self
            .zip
            .finish()
            .map_err(io::Error::other)?
            .into_inner()
            .map_err(|e| e.into_error())?;
        file.sync_all()
    }
}

#[cfg(test)]
mod tests {
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
}

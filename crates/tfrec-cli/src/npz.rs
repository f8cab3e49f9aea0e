//! Writing tensors as a NumPy `.npz` file (a zip of `.npy` arrays), so `numpy.load` reads the
//! output of `tfrec parse` directly.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use tfrec::parse::{DenseTensor, Tensor, TensorMap};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// One `.npy` array: dtype descriptor, shape, raw little-endian data.
struct Npy {
    descr: String,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl Npy {
    fn i64s(values: impl IntoIterator<Item = i64>, shape: Vec<usize>) -> Npy {
        Npy {
            descr: "<i8".into(),
            shape,
            data: values.into_iter().flat_map(i64::to_le_bytes).collect(),
        }
    }

    fn dense(t: &DenseTensor) -> Npy {
        let shape = t.shape().to_vec();
        match t {
            DenseTensor::Int64(a) => Npy::i64s(a.iter().copied(), shape),
            DenseTensor::Float32(a) => Npy {
                descr: "<f4".into(),
                shape,
                data: a.iter().flat_map(|v| v.to_le_bytes()).collect(),
            },
            // Fixed-width bytes (`S<n>`), zero-padded, as NumPy stores `bytes_` arrays.
            DenseTensor::String(a) => {
                let width = a.iter().map(Vec::len).max().unwrap_or(0).max(1);
                let mut data = Vec::with_capacity(a.len() * width);
                for v in a.iter() {
                    data.extend_from_slice(v);
                    data.resize(data.len() + width - v.len(), 0);
                }
                Npy {
                    descr: format!("|S{width}"),
                    shape,
                    data,
                }
            }
        }
    }

    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let dims: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        let shape = match dims.len() {
            1 => format!("({},)", dims[0]),
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
        out.write_all(&self.data)
    }
}

/// The arrays of one tensor: `name` for a dense tensor; `name/indices`, `name/values`,
/// `name/dense_shape` for a sparse one; `name/flat_values` and `name/row_splits_<level>` for a
/// ragged one.
fn arrays(name: &str, tensor: &Tensor) -> Vec<(String, Npy)> {
    match tensor {
        Tensor::Dense(t) => vec![(name.to_owned(), Npy::dense(t))],
        Tensor::Sparse(t) => vec![
            (
                format!("{name}/indices"),
                Npy::i64s(t.indices.iter().copied(), t.indices.shape().to_vec()),
            ),
            (format!("{name}/values"), Npy::dense(&t.values)),
            (
                format!("{name}/dense_shape"),
                Npy::i64s(t.dense_shape.iter().copied(), vec![t.dense_shape.len()]),
            ),
        ],
        Tensor::Ragged(t) => {
            let mut out = vec![(format!("{name}/flat_values"), Npy::dense(&t.flat_values))];
            for (level, splits) in t.nested_row_splits.iter().enumerate() {
                out.push((
                    format!("{name}/row_splits_{level}"),
                    Npy::i64s(splits.iter().copied(), vec![splits.len()]),
                ));
            }
            out
        }
    }
}

/// Writes an `.npz` file incrementally, one batch's tensors at a time.
pub struct NpzWriter {
    zip: ZipWriter<BufWriter<File>>,
}

impl NpzWriter {
    pub fn create(path: &Path) -> io::Result<NpzWriter> {
        Ok(NpzWriter {
            zip: ZipWriter::new(BufWriter::new(File::create(path)?)),
        })
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
        self.zip.finish().map_err(io::Error::other)?.flush()
    }
}

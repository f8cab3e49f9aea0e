//! `TensorProto`, the bytes of `tf.io.serialize_tensor` / `tf.io.parse_tensor`: the form the
//! TFRecord notebook uses to store a non-scalar value in one bytes feature.
//!
//! The message (tensorflow/core/framework/tensor.proto, tensor_shape.proto, types.proto):
//!
//! | field | name | use here |
//! |---|---|---|
//! | 1 | `dtype` (enum `DataType`) | written and read |
//! | 2 | `tensor_shape` { 2: repeated `dim` { 1: `size` }, 3: `unknown_rank` } | written and read |
//! | 4 | `tensor_content` (bytes, little-endian values) | written for every dtype but string |
//! | 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17 | the repeated `*_val` fields | read; `string_val` (8) written |
//!
//! Writing follows TF's `AsProtoTensorContent`: dtype, then the shape (always present, a zero
//! dimension is an empty `dim`), then `tensor_content` when non-empty; strings go to
//! `string_val`. Reading follows `Tensor::FromProto`: a non-empty `tensor_content` must hold
//! exactly the tensor's bytes; otherwise the `*_val` field of the dtype fills the tensor, with
//! fewer values repeating the last one, none giving zeros, and extra values dropped.

use std::fmt;

use crate::wire::{put_tag, put_varint, WireReader, WireType};

/// The wire-format error of a malformed `TensorProto` (the same type as
/// `tfrec::example::DecodeError`, here for builds without the `example` feature).
pub use crate::wire::{DecodeError, DecodeErrorKind};

/// The largest tensor (in bytes of its elements) that reading will build. A `*_val` proto of a
/// few bytes may describe any number of elements (one value repeated), so unlike everything else
/// in tfrec the input's size does not bound the output's; this limit does.
pub const MAX_TENSOR_BYTES: u64 = 1 << 31;

/// The element types `serialize_tensor` / `parse_tensor` support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorDType {
    /// `DT_HALF`: IEEE half precision.
    Float16,
    /// `DT_BFLOAT16`: bfloat16.
    BFloat16,
    /// `DT_FLOAT`: 32-bit float.
    Float32,
    /// `DT_DOUBLE`: 64-bit float.
    Float64,
    /// `DT_INT8`: 8-bit signed integer.
    Int8,
    /// `DT_INT16`: 16-bit signed integer.
    Int16,
    /// `DT_INT32`: 32-bit signed integer.
    Int32,
    /// `DT_INT64`: 64-bit signed integer.
    Int64,
    /// `DT_UINT8`: 8-bit unsigned integer.
    UInt8,
    /// `DT_UINT16`: 16-bit unsigned integer.
    UInt16,
    /// `DT_UINT32`: 32-bit unsigned integer.
    UInt32,
    /// `DT_UINT64`: 64-bit unsigned integer.
    UInt64,
    /// `DT_BOOL`: boolean.
    Bool,
    /// `DT_STRING`: byte string.
    String,
    /// `DT_COMPLEX64`: complex of two 32-bit floats.
    Complex64,
    /// `DT_COMPLEX128`: complex of two 64-bit floats.
    Complex128,
}

impl TensorDType {
    /// Every supported dtype.
    pub const ALL: [TensorDType; 16] = [
        TensorDType::Float16,
        TensorDType::BFloat16,
        TensorDType::Float32,
        TensorDType::Float64,
        TensorDType::Int8,
        TensorDType::Int16,
        TensorDType::Int32,
        TensorDType::Int64,
        TensorDType::UInt8,
        TensorDType::UInt16,
        TensorDType::UInt32,
        TensorDType::UInt64,
        TensorDType::Bool,
        TensorDType::String,
        TensorDType::Complex64,
        TensorDType::Complex128,
    ];

    /// The `DataType` enum value (types.proto).
    pub fn proto_value(self) -> i32 {
        match self {
            TensorDType::Float32 => 1,
            TensorDType::Float64 => 2,
            TensorDType::Int32 => 3,
            TensorDType::UInt8 => 4,
            TensorDType::Int16 => 5,
            TensorDType::Int8 => 6,
            TensorDType::String => 7,
            TensorDType::Complex64 => 8,
            TensorDType::Int64 => 9,
            TensorDType::Bool => 10,
            TensorDType::BFloat16 => 14,
            TensorDType::UInt16 => 17,
            TensorDType::Complex128 => 18,
            TensorDType::Float16 => 19,
            TensorDType::UInt32 => 22,
            TensorDType::UInt64 => 23,
        }
    }

    /// The dtype of a `DataType` enum value, if supported.
    pub fn from_proto_value(value: i32) -> Option<TensorDType> {
        TensorDType::ALL.into_iter().find(|d| d.proto_value() == value)
    }

    /// The NumPy-style name: `float16`, `bfloat16`, `float32`, …, `string`, `complex128`.
    pub fn name(self) -> &'static str {
        match self {
            TensorDType::Float16 => "float16",
            TensorDType::BFloat16 => "bfloat16",
            TensorDType::Float32 => "float32",
            TensorDType::Float64 => "float64",
            TensorDType::Int8 => "int8",
            TensorDType::Int16 => "int16",
            TensorDType::Int32 => "int32",
            TensorDType::Int64 => "int64",
            TensorDType::UInt8 => "uint8",
            TensorDType::UInt16 => "uint16",
            TensorDType::UInt32 => "uint32",
            TensorDType::UInt64 => "uint64",
            TensorDType::Bool => "bool",
            TensorDType::String => "string",
            TensorDType::Complex64 => "complex64",
            TensorDType::Complex128 => "complex128",
        }
    }

    /// The name TensorFlow's messages use (`DataTypeString`): `float`, `double`, `half`, ….
    pub fn tf_name(self) -> &'static str {
        match self {
            TensorDType::Float16 => "half",
            TensorDType::Float32 => "float",
            TensorDType::Float64 => "double",
            other => other.name(),
        }
    }

    /// A dtype from its NumPy-style or TensorFlow name (`float32`/`float`, `float16`/`half`,
    /// `float64`/`double`, `string`/`bytes`, …).
    pub fn from_name(name: &str) -> Option<TensorDType> {
        match name {
            "float" => Some(TensorDType::Float32),
            "double" => Some(TensorDType::Float64),
            "half" => Some(TensorDType::Float16),
            "bytes" | "str" | "object" => Some(TensorDType::String),
            _ => TensorDType::ALL.into_iter().find(|d| d.name() == name),
        }
    }

    /// Bytes per element in `tensor_content`; `None` for strings.
    pub fn width(self) -> Option<usize> {
        Some(match self {
            TensorDType::Int8 | TensorDType::UInt8 | TensorDType::Bool => 1,
            TensorDType::Float16 | TensorDType::BFloat16 | TensorDType::Int16 | TensorDType::UInt16 => 2,
            TensorDType::Float32 | TensorDType::Int32 | TensorDType::UInt32 => 4,
            TensorDType::Float64 | TensorDType::Int64 | TensorDType::UInt64 | TensorDType::Complex64 => 8,
            TensorDType::Complex128 => 16,
            TensorDType::String => return None,
        })
    }
}

impl fmt::Display for TensorDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tensor's values, flat and row-major. Half-precision floats are kept as their bit patterns
/// (Rust has no stable `f16`); complex numbers as `[re, im]`.
#[derive(Debug, Clone, PartialEq)]
pub enum TensorData {
    /// `DT_HALF` values as their bit patterns.
    Float16(Vec<u16>),
    /// `DT_BFLOAT16` values as their bit patterns.
    BFloat16(Vec<u16>),
    /// `DT_FLOAT` values.
    Float32(Vec<f32>),
    /// `DT_DOUBLE` values.
    Float64(Vec<f64>),
    /// `DT_INT8` values.
    Int8(Vec<i8>),
    /// `DT_INT16` values.
    Int16(Vec<i16>),
    /// `DT_INT32` values.
    Int32(Vec<i32>),
    /// `DT_INT64` values.
    Int64(Vec<i64>),
    /// `DT_UINT8` values.
    UInt8(Vec<u8>),
    /// `DT_UINT16` values.
    UInt16(Vec<u16>),
    /// `DT_UINT32` values.
    UInt32(Vec<u32>),
    /// `DT_UINT64` values.
    UInt64(Vec<u64>),
    /// `DT_BOOL` values.
    Bool(Vec<bool>),
    /// `DT_STRING` values, one byte string each.
    String(Vec<Vec<u8>>),
    /// `DT_COMPLEX64` values as `[re, im]`.
    Complex64(Vec<[f32; 2]>),
    /// `DT_COMPLEX128` values as `[re, im]`.
    Complex128(Vec<[f64; 2]>),
}

/// Applies `$body` to the vector inside any [`TensorData`] variant.
macro_rules! with_vec {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            TensorData::Float16($v) => $body,
            TensorData::BFloat16($v) => $body,
            TensorData::Float32($v) => $body,
            TensorData::Float64($v) => $body,
            TensorData::Int8($v) => $body,
            TensorData::Int16($v) => $body,
            TensorData::Int32($v) => $body,
            TensorData::Int64($v) => $body,
            TensorData::UInt8($v) => $body,
            TensorData::UInt16($v) => $body,
            TensorData::UInt32($v) => $body,
            TensorData::UInt64($v) => $body,
            TensorData::Bool($v) => $body,
            TensorData::String($v) => $body,
            TensorData::Complex64($v) => $body,
            TensorData::Complex128($v) => $body,
        }
    };
}

impl TensorData {
    /// The element type.
    pub fn dtype(&self) -> TensorDType {
        match self {
            TensorData::Float16(_) => TensorDType::Float16,
            TensorData::BFloat16(_) => TensorDType::BFloat16,
            TensorData::Float32(_) => TensorDType::Float32,
            TensorData::Float64(_) => TensorDType::Float64,
            TensorData::Int8(_) => TensorDType::Int8,
            TensorData::Int16(_) => TensorDType::Int16,
            TensorData::Int32(_) => TensorDType::Int32,
            TensorData::Int64(_) => TensorDType::Int64,
            TensorData::UInt8(_) => TensorDType::UInt8,
            TensorData::UInt16(_) => TensorDType::UInt16,
            TensorData::UInt32(_) => TensorDType::UInt32,
            TensorData::UInt64(_) => TensorDType::UInt64,
            TensorData::Bool(_) => TensorDType::Bool,
            TensorData::String(_) => TensorDType::String,
            TensorData::Complex64(_) => TensorDType::Complex64,
            TensorData::Complex128(_) => TensorDType::Complex128,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        with_vec!(self, v => v.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as little-endian bytes, the layout of `tensor_content` (empty for strings).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() * self.dtype().width().unwrap_or(0));
        self.put_content(&mut out);
        out
    }

    /// Numeric values of `dtype` from little-endian bytes (the layout of [`Self::to_le_bytes`]);
    /// an error when `bytes` is not a whole number of elements. Strings have no such layout:
    /// for them `bytes` is read as TF's string-list encoding of `tensor_content`.
    pub fn from_le_bytes(dtype: TensorDType, bytes: &[u8]) -> Result<TensorData, TensorProtoError> {
        let n = bytes.len() / dtype.width().unwrap_or(1).max(1);
        from_content(dtype, bytes, n, &[n])
    }

    /// Appends the values as little-endian `tensor_content` bytes (not for strings).
    fn put_content(&self, out: &mut Vec<u8>) {
        match self {
            TensorData::Float16(v) | TensorData::BFloat16(v) | TensorData::UInt16(v) => {
                v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
            }
            TensorData::Float32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::Float64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::Int8(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::Int16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::Int32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::Int64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::UInt8(v) => out.extend_from_slice(v),
            TensorData::UInt32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::UInt64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::Bool(v) => out.extend(v.iter().map(|&b| u8::from(b))),
            TensorData::Complex64(v) => v.iter().flatten().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::Complex128(v) => v.iter().flatten().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            TensorData::String(_) => {}
        }
    }
}

/// A tensor: its shape and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorValue {
    /// Dimension sizes; empty for a scalar. Invariant (for values `parse_tensor` returns, and
    /// checked by `serialize_tensor`): their product is `data.len()`.
    pub shape: Vec<usize>,
    /// The values, flat and row-major.
    pub data: TensorData,
}

impl TensorValue {
    /// A tensor of `shape` holding `data`, checking the element count.
    pub fn new(shape: Vec<usize>, data: TensorData) -> Result<TensorValue, TensorProtoError> {
        let value = TensorValue { shape, data };
        value.check_len()?;
        Ok(value)
    }

    /// The element type.
    pub fn dtype(&self) -> TensorDType {
        self.data.dtype()
    }

    fn check_len(&self) -> Result<(), TensorProtoError> {
        let elements = self.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if elements != Some(self.data.len()) {
            return Err(TensorProtoError::ShapeMismatch {
                shape: self.shape.clone(),
                len: self.data.len(),
            });
        }
        Ok(())
    }
}

/// Why bytes are not a tensor (or a tensor cannot be written).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TensorProtoError {
    /// The bytes are not a protobuf `TensorProto` (TF: "Could not parse `serialized` as
    /// TensorProto").
    #[error("could not parse the bytes as a TensorProto: {0}")]
    Malformed(DecodeError),
    /// No dtype, or `DT_INVALID` (TF: "Cannot parse tensor from proto").
    #[error("cannot parse tensor from proto: it has no dtype")]
    MissingDType,
    /// A dtype tfrec does not read (quantized, resource, variant) or that does not exist.
    #[error("cannot parse tensor from proto: unsupported dtype {0} (DataType enum value)")]
    UnsupportedDType(i32),
    /// A dimension below zero, or `unknown_rank` together with dimensions.
    #[error("cannot parse tensor from proto: invalid shape (dimension {index} has size {size})")]
    InvalidShape {
        /// The dimension's position.
        index: usize,
        /// Its size as stored.
        size: i64,
    },
    /// The shape's element count overflows, or the tensor exceeds [`MAX_TENSOR_BYTES`].
    #[error("cannot parse tensor from proto: a tensor of shape {shape:?} is too large")]
    TooLarge {
        /// The shape as stored.
        shape: Vec<i64>,
    },
    /// `tensor_content` does not hold exactly the shape's elements.
    #[error(
        "cannot parse tensor from proto: tensor_content has {actual} bytes, \
         a {dtype} tensor of shape {shape:?} needs {expected}"
    )]
    ContentSize {
        /// The tensor's element type.
        dtype: TensorDType,
        /// Its shape.
        shape: Vec<usize>,
        /// Bytes the shape needs.
        expected: u64,
        /// Bytes present.
        actual: usize,
    },
    /// A string tensor's `tensor_content` is not a valid encoded string list.
    #[error("cannot parse tensor from proto: string tensor_content is malformed")]
    StringContent,
    /// The tensor's dtype is not the one asked for (TF's message word for word).
    #[error("Type mismatch between parsed tensor ({}) and dtype ({})", parsed.tf_name(), requested.tf_name())]
    TypeMismatch {
        /// The dtype in the bytes.
        parsed: TensorDType,
        /// The dtype asked for.
        requested: TensorDType,
    },
    /// Writing: the shape's element count is not the number of values.
    #[error("{len} values do not fill a tensor of shape {shape:?}")]
    ShapeMismatch {
        /// The shape given.
        shape: Vec<usize>,
        /// The number of values given.
        len: usize,
    },
}

// Not `#[from]`: that would also make the decode error the `source()`, whose text `Malformed`
// already shows (the crate's rule, see `crate::Error`).
impl From<DecodeError> for TensorProtoError {
    fn from(e: DecodeError) -> Self {
        TensorProtoError::Malformed(e)
    }
}

/// `tf.io.serialize_tensor`: TF's bytes for `tensor`, exactly.
pub fn serialize_tensor(tensor: &TensorValue) -> Result<Vec<u8>, TensorProtoError> {
    tensor.check_len()?;
    let mut out = Vec::with_capacity(16 + tensor.data.len() * tensor.dtype().width().unwrap_or(8));
    put_tag(&mut out, 1, WireType::Varint);
    put_varint(&mut out, tensor.dtype().proto_value() as u64);

    let mut shape = Vec::with_capacity(4 * tensor.shape.len());
    for &size in &tensor.shape {
        put_tag(&mut shape, 2, WireType::Len);
        if size == 0 {
            put_varint(&mut shape, 0);
        } else {
            let mut dim = Vec::with_capacity(11);
            put_tag(&mut dim, 1, WireType::Varint);
            put_varint(&mut dim, size as u64);
            put_varint(&mut shape, dim.len() as u64);
            shape.extend_from_slice(&dim);
        }
    }
    put_tag(&mut out, 2, WireType::Len);
    put_varint(&mut out, shape.len() as u64);
    out.extend_from_slice(&shape);

    if let TensorData::String(strings) = &tensor.data {
        for s in strings {
            put_tag(&mut out, 8, WireType::Len);
            put_varint(&mut out, s.len() as u64);
            out.extend_from_slice(s);
        }
    } else if !tensor.data.is_empty() {
        let mut content = Vec::with_capacity(tensor.data.len() * tensor.dtype().width().unwrap_or(1));
        tensor.data.put_content(&mut content);
        put_tag(&mut out, 4, WireType::Len);
        put_varint(&mut out, content.len() as u64);
        out.extend_from_slice(&content);
    }
    Ok(out)
}

/// `tf.io.parse_tensor(serialized, out_type)`.
pub fn parse_tensor(serialized: &[u8], out_type: TensorDType) -> Result<TensorValue, TensorProtoError> {
    let tensor = decode_tensor(serialized)?;
    if tensor.dtype() != out_type {
        return Err(TensorProtoError::TypeMismatch {
            parsed: tensor.dtype(),
            requested: out_type,
        });
    }
    Ok(tensor)
}

/// A `TensorProto` of whatever dtype it declares (what `tfrec cat` needs to describe one).
pub fn decode_tensor(serialized: &[u8]) -> Result<TensorValue, TensorProtoError> {
    let proto = RawTensorProto::decode(serialized)?;
    let dtype = match proto.dtype {
        0 => return Err(TensorProtoError::MissingDType),
        v => TensorDType::from_proto_value(v).ok_or(TensorProtoError::UnsupportedDType(v))?,
    };
    if proto.unknown_rank && !proto.dims.is_empty() {
        return Err(TensorProtoError::InvalidShape {
            index: 0,
            size: proto.dims[0],
        });
    }
    let mut shape = Vec::with_capacity(proto.dims.len());
    let mut elements = 1u64;
    for (index, &size) in proto.dims.iter().enumerate() {
        if size < 0 {
            return Err(TensorProtoError::InvalidShape { index, size });
        }
        elements = elements
            .checked_mul(size as u64)
            .ok_or_else(|| TensorProtoError::TooLarge {
                shape: proto.dims.clone(),
            })?;
        shape.push(size as usize);
    }
    // Strings cost at least a Vec header each.
    let per_element = dtype.width().unwrap_or(std::mem::size_of::<Vec<u8>>()) as u64;
    if elements.saturating_mul(per_element) > MAX_TENSOR_BYTES {
        return Err(TensorProtoError::TooLarge { shape: proto.dims });
    }
    let n = elements as usize;

    let data = if !proto.content.is_empty() || n == 0 {
        from_content(dtype, proto.content, n, &shape)?
    } else {
        from_vals(dtype, &proto, n)
    };
    Ok(TensorValue { shape, data })
}

/// The fields of a `TensorProto` as found on the wire, before any TF rule is applied.
#[derive(Default)]
struct RawTensorProto<'a> {
    dtype: i32,
    dims: Vec<i64>,
    unknown_rank: bool,
    content: &'a [u8],
    /// The numeric `*_val` fields, indexed by field number; each value widened to 64 bits as
    /// read (varint, or fixed32/fixed64 bits).
    vals: [Vec<u64>; 18],
    strings: Vec<&'a [u8]>,
}

/// The wire type of each numeric `*_val` field's elements.
fn val_wire_type(field: u32) -> Option<WireType> {
    match field {
        5 | 9 => Some(WireType::Fixed32),
        6 | 12 => Some(WireType::Fixed64),
        7 | 10 | 11 | 13 | 16 | 17 => Some(WireType::Varint),
        _ => None,
    }
}

fn read_fixed64(r: &mut WireReader<'_>) -> Result<u64, DecodeError> {
    let lo = r.read_fixed32()?;
    let hi = r.read_fixed32()?;
    Ok(u64::from(lo) | (u64::from(hi) << 32))
}

fn read_element(r: &mut WireReader<'_>, wire_type: WireType) -> Result<u64, DecodeError> {
    match wire_type {
        WireType::Fixed32 => r.read_fixed32().map(u64::from),
        WireType::Fixed64 => read_fixed64(r),
        _ => r.read_varint(),
    }
}

impl<'a> RawTensorProto<'a> {
    fn decode(buf: &'a [u8]) -> Result<Self, DecodeError> {
        let mut proto = RawTensorProto::default();
        let mut r = WireReader::new(buf);
        while !r.is_empty() {
            let (field, wire_type) = r.read_tag()?;
            match (field, wire_type) {
                // Protobuf keeps an enum's low 32 bits.
                (1, WireType::Varint) => proto.dtype = r.read_varint()? as u32 as i32,
                (2, WireType::Len) => {
                    let (shape, base) = r.read_len()?;
                    proto.decode_shape(WireReader::nested(shape, base))?;
                }
                (4, WireType::Len) => proto.content = r.read_len()?.0,
                (8, WireType::Len) => proto.strings.push(r.read_len()?.0),
                (field, wire_type) => match val_wire_type(field) {
                    Some(element) => {
                        let vals = &mut proto.vals[field as usize];
                        if wire_type == WireType::Len {
                            let (packed, base) = r.read_len()?;
                            let mut p = WireReader::nested(packed, base);
                            while !p.is_empty() {
                                vals.push(read_element(&mut p, element)?);
                            }
                        } else if wire_type == element {
                            vals.push(read_element(&mut r, element)?);
                        } else {
                            r.skip(field, wire_type)?;
                        }
                    }
                    None => r.skip(field, wire_type)?,
                },
            }
        }
        Ok(proto)
    }

    /// `TensorShapeProto`. A repeated message field seen twice merges, so dims accumulate.
    fn decode_shape(&mut self, mut r: WireReader<'a>) -> Result<(), DecodeError> {
        while !r.is_empty() {
            match r.read_tag()? {
                (2, WireType::Len) => {
                    let (dim, base) = r.read_len()?;
                    let mut d = WireReader::nested(dim, base);
                    let mut size = 0i64;
                    while !d.is_empty() {
                        match d.read_tag()? {
                            (1, WireType::Varint) => size = d.read_varint()? as i64,
                            (field, wire_type) => d.skip(field, wire_type)?,
                        }
                    }
                    self.dims.push(size);
                }
                (3, WireType::Varint) => self.unknown_rank = r.read_varint()? != 0,
                (field, wire_type) => r.skip(field, wire_type)?,
            }
        }
        Ok(())
    }
}

/// Splits `content` into `n` little-endian elements of `W` bytes, which it must hold exactly.
fn chunks<const W: usize>(content: &[u8]) -> impl Iterator<Item = [u8; W]> + '_ {
    content.chunks_exact(W).map(|c| {
        let mut a = [0u8; W];
        a.copy_from_slice(c);
        a
    })
}

fn from_content(dtype: TensorDType, content: &[u8], n: usize, shape: &[usize]) -> Result<TensorData, TensorProtoError> {
    let Some(width) = dtype.width() else {
        return decode_string_list(content, n).map(TensorData::String);
    };
    let expected = n as u64 * width as u64;
    if content.len() as u64 != expected {
        return Err(TensorProtoError::ContentSize {
            dtype,
            shape: shape.to_vec(),
            expected,
            actual: content.len(),
        });
    }
    Ok(match dtype {
        TensorDType::Float16 => TensorData::Float16(chunks::<2>(content).map(u16::from_le_bytes).collect()),
        TensorDType::BFloat16 => TensorData::BFloat16(chunks::<2>(content).map(u16::from_le_bytes).collect()),
        TensorDType::Float32 => TensorData::Float32(chunks::<4>(content).map(f32::from_le_bytes).collect()),
        TensorDType::Float64 => TensorData::Float64(chunks::<8>(content).map(f64::from_le_bytes).collect()),
        TensorDType::Int8 => TensorData::Int8(content.iter().map(|&b| b as i8).collect()),
        TensorDType::Int16 => TensorData::Int16(chunks::<2>(content).map(i16::from_le_bytes).collect()),
        TensorDType::Int32 => TensorData::Int32(chunks::<4>(content).map(i32::from_le_bytes).collect()),
        TensorDType::Int64 => TensorData::Int64(chunks::<8>(content).map(i64::from_le_bytes).collect()),
        TensorDType::UInt8 => TensorData::UInt8(content.to_vec()),
        TensorDType::UInt16 => TensorData::UInt16(chunks::<2>(content).map(u16::from_le_bytes).collect()),
        TensorDType::UInt32 => TensorData::UInt32(chunks::<4>(content).map(u32::from_le_bytes).collect()),
        TensorDType::UInt64 => TensorData::UInt64(chunks::<8>(content).map(u64::from_le_bytes).collect()),
        // TF reads a bool byte as its C++ bool: any non-zero byte is true.
        TensorDType::Bool => TensorData::Bool(content.iter().map(|&b| b != 0).collect()),
        TensorDType::Complex64 => TensorData::Complex64(
            chunks::<8>(content)
                .map(|c| {
                    [
                        f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                        f32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                    ]
                })
                .collect(),
        ),
        TensorDType::Complex128 => TensorData::Complex128(
            chunks::<16>(content)
                .map(|c| {
                    let (re, im) = c.split_at(8);
                    let mut a = [0u8; 8];
                    let mut b = [0u8; 8];
                    a.copy_from_slice(re);
                    b.copy_from_slice(im);
                    [f64::from_le_bytes(a), f64::from_le_bytes(b)]
                })
                .collect(),
        ),
        TensorDType::String => unreachable!("strings have no width and returned above"),
    })
}

/// TF's encoding of a string tensor in `tensor_content` (`port::EncodeStringList`): the `n`
/// lengths as varints, then the bytes of every string, back to back, and nothing after.
fn decode_string_list(content: &[u8], n: usize) -> Result<Vec<Vec<u8>>, TensorProtoError> {
    let mut r = WireReader::new(content);
    let mut lens = Vec::with_capacity(n.min(content.len()));
    for _ in 0..n {
        lens.push(r.read_varint().map_err(|_| TensorProtoError::StringContent)?);
    }
    let mut rest = &content[r.offset()..];
    let mut out = Vec::with_capacity(lens.len());
    for len in lens {
        if len > rest.len() as u64 {
            return Err(TensorProtoError::StringContent);
        }
        let (s, tail) = rest.split_at(len as usize);
        out.push(s.to_vec());
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(TensorProtoError::StringContent);
    }
    Ok(out)
}

/// TF's fill rule for the repeated fields: the first `n` values, the last one repeated when
/// there are fewer, zeros (the default) when there are none.
fn fill<T: Clone + Default, S>(vals: &[S], n: usize, convert: impl Fn(&S) -> T) -> Vec<T> {
    let mut out: Vec<T> = vals.iter().take(n).map(&convert).collect();
    let last = out.last().cloned().unwrap_or_default();
    out.resize(n, last);
    out
}

fn from_vals(dtype: TensorDType, proto: &RawTensorProto<'_>, n: usize) -> TensorData {
    let v = |field: usize| proto.vals[field].as_slice();
    let pairs = |field: usize| -> Vec<[u64; 2]> { v(field).chunks_exact(2).map(|c| [c[0], c[1]]).collect() };
    match dtype {
        TensorDType::Float16 => TensorData::Float16(fill(v(13), n, |&x| x as u16)),
        TensorDType::BFloat16 => TensorData::BFloat16(fill(v(13), n, |&x| x as u16)),
        TensorDType::Float32 => TensorData::Float32(fill(v(5), n, |&x| f32::from_bits(x as u32))),
        TensorDType::Float64 => TensorData::Float64(fill(v(6), n, |&x| f64::from_bits(x))),
        // int_val is an int32; the narrow types take its low bits as C++'s cast does.
        TensorDType::Int8 => TensorData::Int8(fill(v(7), n, |&x| x as i8)),
        TensorDType::Int16 => TensorData::Int16(fill(v(7), n, |&x| x as i16)),
        TensorDType::Int32 => TensorData::Int32(fill(v(7), n, |&x| x as i32)),
        TensorDType::UInt8 => TensorData::UInt8(fill(v(7), n, |&x| x as u8)),
        TensorDType::UInt16 => TensorData::UInt16(fill(v(7), n, |&x| x as u16)),
        TensorDType::Int64 => TensorData::Int64(fill(v(10), n, |&x| x as i64)),
        TensorDType::UInt32 => TensorData::UInt32(fill(v(16), n, |&x| x as u32)),
        TensorDType::UInt64 => TensorData::UInt64(fill(v(17), n, |&x| x)),
        TensorDType::Bool => TensorData::Bool(fill(v(11), n, |&x| x != 0)),
        TensorDType::String => TensorData::String(fill(&proto.strings, n, |s| s.to_vec())),
        TensorDType::Complex64 => TensorData::Complex64(fill(&pairs(9), n, |p| {
            [f32::from_bits(p[0] as u32), f32::from_bits(p[1] as u32)]
        })),
        TensorDType::Complex128 => {
            TensorData::Complex128(fill(&pairs(12), n, |p| [f64::from_bits(p[0]), f64::from_bits(p[1])]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_round_trips() {
        let cases = vec![
            TensorData::Float16(vec![0x3c00, 0x7e00]),
            TensorData::BFloat16(vec![0x3f80, 0x8000]),
            TensorData::Float32(vec![1.5, -0.0]),
            TensorData::Float64(vec![f64::MIN_POSITIVE, 1e300]),
            TensorData::Int8(vec![-128, 127]),
            TensorData::Int16(vec![-1, 2]),
            TensorData::Int32(vec![i32::MIN, 3]),
            TensorData::Int64(vec![i64::MIN, i64::MAX]),
            TensorData::UInt8(vec![0, 255]),
            TensorData::UInt16(vec![65535, 1]),
            TensorData::UInt32(vec![u32::MAX, 0]),
            TensorData::UInt64(vec![u64::MAX, 7]),
            TensorData::Bool(vec![true, false]),
            TensorData::String(vec![b"a".to_vec(), vec![0xff, 0]]),
            TensorData::Complex64(vec![[1.0, -2.0], [0.5, 3.0]]),
            TensorData::Complex128(vec![[1.0, -2.0], [0.25, 3.0]]),
        ];
        for data in cases {
            let dtype = data.dtype();
            let tensor = TensorValue::new(vec![2, 1], data).unwrap();
            let bytes = serialize_tensor(&tensor).unwrap();
            assert_eq!(parse_tensor(&bytes, dtype).unwrap(), tensor, "{dtype}");
            assert_eq!(TensorDType::from_name(dtype.name()), Some(dtype));
            assert_eq!(TensorDType::from_proto_value(dtype.proto_value()), Some(dtype));
        }
    }

    #[test]
    fn a_wrong_count_is_an_error_when_writing() {
        let tensor = TensorValue {
            shape: vec![3],
            data: TensorData::Int32(vec![1, 2]),
        };
        assert!(matches!(
            serialize_tensor(&tensor),
            Err(TensorProtoError::ShapeMismatch { len: 2, .. })
        ));
    }

    #[test]
    fn a_huge_repeated_fill_is_refused_not_allocated() {
        // float32, shape [2^40], float_val: 1.0
        let mut bytes = vec![0x08, 0x01, 0x12, 0x09, 0x12, 0x07, 0x08];
        put_varint(&mut bytes, 1 << 40);
        bytes[3] = (bytes.len() - 4) as u8;
        bytes[5] = (bytes.len() - 6) as u8;
        bytes.extend_from_slice(&[0x2d, 0, 0, 0x80, 0x3f]);
        assert!(matches!(
            parse_tensor(&bytes, TensorDType::Float32),
            Err(TensorProtoError::TooLarge { .. })
        ));
    }

    #[test]
    fn string_content_uses_tf_string_list_encoding() {
        // shape [2], tensor_content = varint 1, varint 2, "a", "bc"
        let bytes = [
            0x08, 0x07, 0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x22, 0x05, 1, 2, b'a', b'b', b'c',
        ];
        let t = parse_tensor(&bytes, TensorDType::String).unwrap();
        assert_eq!(t.data, TensorData::String(vec![b"a".to_vec(), b"bc".to_vec()]));
        let mut bad = bytes;
        bad[11] = 3;
        assert_eq!(
            parse_tensor(&bad, TensorDType::String),
            Err(TensorProtoError::StringContent)
        );
    }

    #[test]
    fn unpacked_repeated_values_are_read() {
        // int64, shape [2], int64_val as two unpacked varints 5 and 6
        let bytes = [0x08, 0x09, 0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x50, 0x05, 0x50, 0x06];
        assert_eq!(
            parse_tensor(&bytes, TensorDType::Int64).unwrap().data,
            TensorData::Int64(vec![5, 6])
        );
    }
}

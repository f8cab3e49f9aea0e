//! The element types a state saver tensor may have (TensorFlow's numeric dtypes and bytes) and
//! how each travels through the saver: the saver holds int64, float32 and bytes, so the other
//! types ride in a lossless carrier (widened to int64 or float32, or their bits viewed as
//! int64) and come back as they went in. Zero bits are zero in every type, so padding a carrier
//! with zeros pads the original with zeros.

use std::fmt;

use super::error::StateSaverError;
use crate::parse::{DType, DenseTensor, Values};

/// The element type of a sequence, context value or state, named as NumPy names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// `bool`, carried as int64 0 / 1.
    Bool,
    /// `int8`, widened to int64.
    Int8,
    /// `int16`, widened to int64.
    Int16,
    /// `int32`, widened to int64.
    Int32,
    /// `int64`, held as it is.
    Int64,
    /// `uint8`, widened to int64.
    UInt8,
    /// `uint16`, widened to int64.
    UInt16,
    /// `uint32`, widened to int64.
    UInt32,
    /// `uint64`, its bits viewed as int64.
    UInt64,
    /// `float16`, widened to float32 (exactly: every float16 is a float32).
    Float16,
    /// `float32`, held as it is.
    Float32,
    /// `float64`, its bits viewed as int64.
    Float64,
    /// `complex64`, its 8 bytes viewed as one int64.
    Complex64,
    /// `complex128`, its 16 bytes viewed as two int64 on a new last axis of 2.
    Complex128,
    /// Byte strings (`tf.string`), held as they are.
    Bytes,
}

/// Every element type, in [`ElementType::name`] order of the table below.
const ALL: [ElementType; 15] = [
    ElementType::Bool,
    ElementType::Int8,
    ElementType::Int16,
    ElementType::Int32,
    ElementType::Int64,
    ElementType::UInt8,
    ElementType::UInt16,
    ElementType::UInt32,
    ElementType::UInt64,
    ElementType::Float16,
    ElementType::Float32,
    ElementType::Float64,
    ElementType::Complex64,
    ElementType::Complex128,
    ElementType::Bytes,
];

impl ElementType {
    /// NumPy's name (`"int32"`, `"float16"`, `"complex128"`…); `"string"` for bytes, as
    /// TensorFlow names `tf.string`.
    pub fn name(self) -> &'static str {
        use ElementType::*;
        match self {
            Bool => "bool",
            Int8 => "int8",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            UInt8 => "uint8",
            UInt16 => "uint16",
            UInt32 => "uint32",
            UInt64 => "uint64",
            Float16 => "float16",
            Float32 => "float32",
            Float64 => "float64",
            Complex64 => "complex64",
            Complex128 => "complex128",
            Bytes => "string",
        }
    }

    /// The type NumPy calls `name`; [`StateSaverError::UnsupportedDType`] for any other
    /// (`datetime64`, `float128`, `str`…: they have no TensorFlow dtype).
    pub fn from_name(name: &str) -> Result<ElementType, StateSaverError> {
        ALL.into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| StateSaverError::UnsupportedDType { dtype: name.to_owned() })
    }

    /// The type a tensor of `dtype` holds as it is.
    pub fn native(dtype: DType) -> ElementType {
        match dtype {
            DType::Int64 => ElementType::Int64,
            DType::Float32 => ElementType::Float32,
            DType::String => ElementType::Bytes,
        }
    }

    /// Whether the saver holds it as it is (no carrier).
    pub fn is_native(self) -> bool {
        matches!(self, ElementType::Int64 | ElementType::Float32 | ElementType::Bytes)
    }

    /// Bytes per element in memory (native byte order); 0 for byte strings.
    pub fn item_size(self) -> usize {
        use ElementType::*;
        match self {
            Bool | Int8 | UInt8 => 1,
            Int16 | UInt16 | Float16 => 2,
            Int32 | UInt32 | Float32 => 4,
            Int64 | UInt64 | Float64 | Complex64 => 8,
            Complex128 => 16,
            Bytes => 0,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tensor as the saver takes it: its element type and its values in their carrier (for
/// [`ElementType::Complex128`] with a last axis of 2 more than the tensor's shape).
#[derive(Debug, Clone, PartialEq)]
pub struct SaverTensor {
    element: ElementType,
    carrier: DenseTensor,
}

impl From<DenseTensor> for SaverTensor {
    fn from(carrier: DenseTensor) -> SaverTensor {
        SaverTensor {
            element: ElementType::native(carrier.dtype()),
            carrier,
        }
    }
}

/// Each `size`-byte chunk of `raw` as an array (`raw`'s length is a multiple of `size`).
fn chunks<const N: usize>(raw: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    raw.chunks_exact(N).map(|c| {
        let mut a = [0u8; N];
        a.copy_from_slice(c);
        a
    })
}

impl SaverTensor {
    /// A tensor of a numeric `element` type and `shape` from its elements' bytes in row-major
    /// order and native byte order (a NumPy array's buffer). Fails if `raw` does not hold
    /// exactly the shape's elements, or for [`ElementType::Bytes`] (whose elements are not of
    /// one size: use a [`DenseTensor`]).
    pub fn from_raw(element: ElementType, shape: &[usize], raw: &[u8]) -> Result<SaverTensor, StateSaverError> {
        use ElementType::*;
        let size = element.item_size();
        let count = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if size == 0 || count.and_then(|n| n.checked_mul(size)) != Some(raw.len()) {
            return Err(StateSaverError::RawSize {
                dtype: element,
                shape: shape.to_vec(),
                bytes: raw.len(),
            });
        }
        let ints = |v: Vec<i64>| Values::Int64(v);
        let values = match element {
            Bool => ints(raw.iter().map(|&b| i64::from(b != 0)).collect()),
            Int8 => ints(raw.iter().map(|&b| i64::from(b as i8)).collect()),
            UInt8 => ints(raw.iter().map(|&b| i64::from(b)).collect()),
            Int16 => ints(chunks(raw).map(|c| i64::from(i16::from_ne_bytes(c))).collect()),
            UInt16 => ints(chunks(raw).map(|c| i64::from(u16::from_ne_bytes(c))).collect()),
            Int32 => ints(chunks(raw).map(|c| i64::from(i32::from_ne_bytes(c))).collect()),
            UInt32 => ints(chunks(raw).map(|c| i64::from(u32::from_ne_bytes(c))).collect()),
            Int64 | UInt64 | Float64 | Complex64 | Complex128 => ints(chunks(raw).map(i64::from_ne_bytes).collect()),
            Float16 => Values::Float32(chunks(raw).map(|c| half::f16::from_ne_bytes(c).to_f32()).collect()),
            Float32 => Values::Float32(chunks(raw).map(f32::from_ne_bytes).collect()),
            Bytes => unreachable!("refused above: byte strings have no item size"),
        };
        let mut carrier_shape = shape.to_vec();
        if element == Complex128 {
            carrier_shape.push(2);
        }
        let carrier = DenseTensor::from_values(values, &carrier_shape).map_err(|_| StateSaverError::RawSize {
            dtype: element,
            shape: shape.to_vec(),
            bytes: raw.len(),
        })?;
        Ok(SaverTensor { element, carrier })
    }

    /// The element type.
    pub fn element(&self) -> ElementType {
        self.element
    }

    /// The tensor's shape (without a carrier's extra axis).
    pub fn shape(&self) -> &[usize] {
        let s = self.carrier.shape();
        match self.element {
            ElementType::Complex128 => &s[..s.len().saturating_sub(1)],
            _ => s,
        }
    }

    /// The values in their carrier.
    pub fn carrier(&self) -> &DenseTensor {
        &self.carrier
    }

    /// The values in their carrier, taken out.
    pub fn into_carrier(self) -> DenseTensor {
        self.carrier
    }
}

/// A carrier of `element` values back as their bytes in row-major and native byte order, with
/// the tensor's shape (the inverse of [`SaverTensor::from_raw`]); `None` for byte strings and
/// for a carrier that is not `element`'s (int64 or float32 as the type says).
pub fn restore_raw(element: ElementType, carrier: &DenseTensor) -> Option<(Vec<u8>, Vec<usize>)> {
    use ElementType::*;
    let mut shape = carrier.shape().to_vec();
    if element == Complex128 {
        shape.pop();
    }
    let raw: Vec<u8> = match (element, carrier.values()) {
        (Bool, Values::Int64(v)) => v.iter().map(|&x| u8::from(x != 0)).collect(),
        // Narrowing wraps, as NumPy's astype does.
        (Int8 | UInt8, Values::Int64(v)) => v.iter().map(|&x| x as u8).collect(),
        (Int16 | UInt16, Values::Int64(v)) => v.iter().flat_map(|&x| (x as u16).to_ne_bytes()).collect(),
        (Int32 | UInt32, Values::Int64(v)) => v.iter().flat_map(|&x| (x as u32).to_ne_bytes()).collect(),
        (Int64 | UInt64 | Float64 | Complex64 | Complex128, Values::Int64(v)) => {
            v.iter().flat_map(|&x| x.to_ne_bytes()).collect()
        }
        (Float16, Values::Float32(v)) => v.iter().flat_map(|&x| half::f16::from_f32(x).to_ne_bytes()).collect(),
        (Float32, Values::Float32(v)) => v.iter().flat_map(|&x| x.to_ne_bytes()).collect(),
        _ => return None,
    };
    Some((raw, shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The carrier dtype of `element` (what the saver's buffers for it hold).
    fn carrier_dtype(element: ElementType) -> DType {
        use ElementType::*;
        match element {
            Float16 | Float32 => DType::Float32,
            Bytes => DType::String,
            _ => DType::Int64,
        }
    }

    fn round_trip(element: ElementType, shape: &[usize], raw: &[u8]) {
        let t = SaverTensor::from_raw(element, shape, raw).expect("carried");
        assert_eq!(t.shape(), shape, "{element}");
        assert_eq!(t.carrier().dtype(), carrier_dtype(element), "{element}");
        let (back, back_shape) = restore_raw(element, t.carrier()).expect("restored");
        assert_eq!((back.as_slice(), back_shape.as_slice()), (raw, shape), "{element}");
    }

    #[test]
    fn every_numeric_type_round_trips_bit_for_bit() {
        let bytes = |v: &[&[u8]]| v.concat();
        round_trip(ElementType::Bool, &[3], &[1, 0, 1]);
        round_trip(
            ElementType::Int8,
            &[2],
            &bytes(&[&(-5i8).to_ne_bytes(), &127i8.to_ne_bytes()]),
        );
        round_trip(ElementType::UInt8, &[2], &[0, 255]);
        round_trip(ElementType::Int16, &[1], &(-300i16).to_ne_bytes());
        round_trip(ElementType::UInt16, &[1], &65535u16.to_ne_bytes());
        round_trip(
            ElementType::Int32,
            &[2],
            &bytes(&[&i32::MIN.to_ne_bytes(), &7i32.to_ne_bytes()]),
        );
        round_trip(ElementType::UInt32, &[1], &u32::MAX.to_ne_bytes());
        round_trip(ElementType::Int64, &[1], &i64::MIN.to_ne_bytes());
        round_trip(ElementType::UInt64, &[1], &(u64::MAX - 1).to_ne_bytes());
        round_trip(
            ElementType::Float16,
            &[2],
            &bytes(&[&half::f16::from_f32(0.1).to_ne_bytes(), &half::f16::NAN.to_ne_bytes()]),
        );
        round_trip(ElementType::Float32, &[1], &(1.0f32 / 3.0).to_ne_bytes());
        round_trip(
            ElementType::Float64,
            &[2, 1],
            &bytes(&[&(0.1f64).to_ne_bytes(), &(-0.0f64).to_ne_bytes()]),
        );
        round_trip(
            ElementType::Complex64,
            &[1],
            &bytes(&[&1.5f32.to_ne_bytes(), &(-2.0f32).to_ne_bytes()]),
        );
        round_trip(
            ElementType::Complex128,
            &[2],
            &bytes(&[
                &1.0f64.to_ne_bytes(),
                &2.0f64.to_ne_bytes(),
                &3.0f64.to_ne_bytes(),
                &4.0f64.to_ne_bytes(),
            ]),
        );
        round_trip(ElementType::Complex128, &[], &[7u8; 16]);
        round_trip(ElementType::Int32, &[0, 3], &[]);
    }

    #[test]
    fn carriers_are_the_widened_values_and_zero_stays_zero() {
        let t = SaverTensor::from_raw(ElementType::Int8, &[2], &[0xff, 0]).expect("carried");
        assert_eq!(t.carrier().values(), &Values::Int64(vec![-1, 0]));
        let t = SaverTensor::from_raw(ElementType::Bool, &[2], &[2, 0]).expect("carried");
        assert_eq!(t.carrier().values(), &Values::Int64(vec![1, 0]));
        let t = SaverTensor::from_raw(ElementType::Complex128, &[1, 1], &[0; 16]).expect("carried");
        assert_eq!(t.carrier().shape(), [1, 1, 2]);
        assert_eq!(t.shape(), [1, 1]);
        for element in ALL.into_iter().filter(|e| *e != ElementType::Bytes) {
            let complex = element == ElementType::Complex128;
            let mut values = Values::empty(carrier_dtype(element));
            values.extend_pad(&Values::empty(carrier_dtype(element)), if complex { 6 } else { 3 });
            let zeros = DenseTensor::from_values(values, if complex { &[3, 2] } else { &[3] }).expect("shape");
            let (raw, _) = restore_raw(element, &zeros).expect("restored");
            assert!(raw.iter().all(|&b| b == 0), "{element}");
        }
    }

    #[test]
    fn names_are_numpys_and_others_are_refused() {
        for element in ALL {
            assert_eq!(ElementType::from_name(element.name()).expect("known"), element);
        }
        assert!(ALL
            .iter()
            .all(|e| e.is_native() == matches!(e, ElementType::Int64 | ElementType::Float32 | ElementType::Bytes)));
        let e = ElementType::from_name("datetime64[s]").expect_err("refused");
        assert_eq!(
            e.to_string(),
            "dtype datetime64[s] is not supported (numeric dtypes and bytes are)"
        );
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_an_error_not_a_panic() {
        let e = SaverTensor::from_raw(ElementType::Int32, &[2, 2], &[0; 15]).expect_err("short");
        assert_eq!(
            e.to_string(),
            "a int32 tensor of shape [2, 2] needs 16 bytes, but 15 were given"
        );
        assert!(SaverTensor::from_raw(ElementType::Int32, &[usize::MAX, 2], &[]).is_err());
        assert!(SaverTensor::from_raw(ElementType::Bytes, &[0], &[]).is_err());
        let wrong_carrier = DenseTensor::from(ndarray::ArrayD::<f32>::zeros(vec![1]));
        assert!(restore_raw(ElementType::Int8, &wrong_carrier).is_none());
    }
}

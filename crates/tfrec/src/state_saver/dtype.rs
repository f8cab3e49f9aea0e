//! The element types a state saver tensor may have (TensorFlow's numeric dtypes and bytes, as
//! `tensor_proto`'s [`TensorDType`] names them) and how each travels through the saver: the
//! saver holds int64, float32 and bytes, so the other types ride in a lossless carrier (widened
//! to int64 or float32, or their bits viewed as int64) and come back as they went in. Zero bits
//! are zero in every type, so padding a carrier with zeros pads the original with zeros.

use crate::parse::{DType, DenseTensor, Values};
pub use crate::tensor_proto::TensorDType;

/// An array the saver cannot take (a [`super::StateSaverError::DType`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DTypeError {
    /// A dtype with no TensorFlow counterpart (NumPy's `datetime64`, `float128`…).
    #[error("dtype {dtype} is not supported (numeric dtypes and bytes are)")]
    Unsupported {
        /// The dtype's name, as NumPy names it.
        dtype: String,
    },
    /// A tensor's element bytes that do not fill its shape.
    #[error("a {dtype} tensor of shape {shape:?} needs {} bytes, but {bytes} were given", raw_size(*.dtype, .shape))]
    RawSize {
        /// The element type.
        dtype: TensorDType,
        /// The tensor's shape.
        shape: Vec<usize>,
        /// The bytes given.
        bytes: usize,
    },
}

/// The bytes a tensor of `dtype` and `shape` holds, for [`DTypeError::RawSize`].
fn raw_size(dtype: TensorDType, shape: &[usize]) -> String {
    shape
        .iter()
        .try_fold(dtype.width().unwrap_or(0), |n, &d| n.checked_mul(d))
        .map_or_else(|| "more than usize::MAX".to_owned(), |n| n.to_string())
}

/// The type NumPy (or `ml_dtypes`) calls `name`: any numeric [`TensorDType`], or `string`;
/// [`DTypeError::Unsupported`] for any other (`datetime64`, `float128`, `<U3`…: they have no
/// TensorFlow dtype).
pub fn element_type(name: &str) -> Result<TensorDType, DTypeError> {
    TensorDType::ALL
        .into_iter()
        .find(|t| t.name() == name)
        .ok_or_else(|| DTypeError::Unsupported { dtype: name.to_owned() })
}

/// The type a tensor of `dtype` holds as it is.
pub fn native_type(dtype: DType) -> TensorDType {
    match dtype {
        DType::Int64 => TensorDType::Int64,
        DType::Float32 => TensorDType::Float32,
        DType::String => TensorDType::String,
    }
}

/// Whether the saver holds `element` as it is (no carrier): int64, float32 and bytes.
pub fn is_native(element: TensorDType) -> bool {
    matches!(element, TensorDType::Int64 | TensorDType::Float32 | TensorDType::String)
}

/// A tensor as the saver takes it: its element type and its values in their carrier (for
/// [`TensorDType::Complex128`] with a last axis of 2 more than the tensor's shape).
#[derive(Debug, Clone, PartialEq)]
pub struct SaverTensor {
    element: TensorDType,
    carrier: DenseTensor,
}

impl From<DenseTensor> for SaverTensor {
    fn from(carrier: DenseTensor) -> SaverTensor {
        SaverTensor {
            element: native_type(carrier.dtype()),
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
    /// exactly the shape's elements, or for [`TensorDType::String`] (whose elements are not of
    /// one size: use a [`DenseTensor`]).
    pub fn from_raw(element: TensorDType, shape: &[usize], raw: &[u8]) -> Result<SaverTensor, DTypeError> {
        use TensorDType::*;
        let size = element.width().unwrap_or(0);
        let count = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if size == 0 || count.and_then(|n| n.checked_mul(size)) != Some(raw.len()) {
            return Err(DTypeError::RawSize {
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
            BFloat16 => Values::Float32(chunks(raw).map(|c| half::bf16::from_ne_bytes(c).to_f32()).collect()),
            Float32 => Values::Float32(chunks(raw).map(f32::from_ne_bytes).collect()),
            String => unreachable!("refused above: byte strings have no item size"),
        };
        let mut carrier_shape = shape.to_vec();
        if element == Complex128 {
            carrier_shape.push(2);
        }
        let carrier = DenseTensor::from_values(values, &carrier_shape).map_err(|_| DTypeError::RawSize {
            dtype: element,
            shape: shape.to_vec(),
            bytes: raw.len(),
        })?;
        Ok(SaverTensor { element, carrier })
    }

    /// The element type.
    pub fn element(&self) -> TensorDType {
        self.element
    }

    /// The tensor's shape (without a carrier's extra axis).
    pub fn shape(&self) -> &[usize] {
        let s = self.carrier.shape();
        match self.element {
            TensorDType::Complex128 => &s[..s.len().saturating_sub(1)],
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
pub fn restore_raw(element: TensorDType, carrier: &DenseTensor) -> Option<(Vec<u8>, Vec<usize>)> {
    use TensorDType::*;
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
        (BFloat16, Values::Float32(v)) => v.iter().flat_map(|&x| half::bf16::from_f32(x).to_ne_bytes()).collect(),
        (Float32, Values::Float32(v)) => v.iter().flat_map(|&x| x.to_ne_bytes()).collect(),
        _ => return None,
    };
    Some((raw, shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The carrier dtype of `element` (what the saver's buffers for it hold).
    fn carrier_dtype(element: TensorDType) -> DType {
        use TensorDType::*;
        match element {
            Float16 | BFloat16 | Float32 => DType::Float32,
            String => DType::String,
            _ => DType::Int64,
        }
    }

    fn round_trip(element: TensorDType, shape: &[usize], raw: &[u8]) {
        let t = SaverTensor::from_raw(element, shape, raw).expect("carried");
        assert_eq!(t.shape(), shape, "{element}");
        assert_eq!(t.carrier().dtype(), carrier_dtype(element), "{element}");
        let (back, back_shape) = restore_raw(element, t.carrier()).expect("restored");
        assert_eq!((back.as_slice(), back_shape.as_slice()), (raw, shape), "{element}");
    }

    #[test]
    fn every_numeric_type_round_trips_bit_for_bit() {
        let bytes = |v: &[&[u8]]| v.concat();
        round_trip(TensorDType::Bool, &[3], &[1, 0, 1]);
        round_trip(
            TensorDType::Int8,
            &[2],
            &bytes(&[&(-5i8).to_ne_bytes(), &127i8.to_ne_bytes()]),
        );
        round_trip(TensorDType::UInt8, &[2], &[0, 255]);
        round_trip(TensorDType::Int16, &[1], &(-300i16).to_ne_bytes());
        round_trip(TensorDType::UInt16, &[1], &65535u16.to_ne_bytes());
        round_trip(
            TensorDType::Int32,
            &[2],
            &bytes(&[&i32::MIN.to_ne_bytes(), &7i32.to_ne_bytes()]),
        );
        round_trip(TensorDType::UInt32, &[1], &u32::MAX.to_ne_bytes());
        round_trip(TensorDType::Int64, &[1], &i64::MIN.to_ne_bytes());
        round_trip(TensorDType::UInt64, &[1], &(u64::MAX - 1).to_ne_bytes());
        round_trip(
            TensorDType::Float16,
            &[2],
            &bytes(&[&half::f16::from_f32(0.1).to_ne_bytes(), &half::f16::NAN.to_ne_bytes()]),
        );
        round_trip(TensorDType::BFloat16, &[1], &half::bf16::from_f32(-1.5).to_ne_bytes());
        round_trip(TensorDType::Float32, &[1], &(1.0f32 / 3.0).to_ne_bytes());
        round_trip(
            TensorDType::Float64,
            &[2, 1],
            &bytes(&[&(0.1f64).to_ne_bytes(), &(-0.0f64).to_ne_bytes()]),
        );
        round_trip(
            TensorDType::Complex64,
            &[1],
            &bytes(&[&1.5f32.to_ne_bytes(), &(-2.0f32).to_ne_bytes()]),
        );
        round_trip(
            TensorDType::Complex128,
            &[2],
            &bytes(&[
                &1.0f64.to_ne_bytes(),
                &2.0f64.to_ne_bytes(),
                &3.0f64.to_ne_bytes(),
                &4.0f64.to_ne_bytes(),
            ]),
        );
        round_trip(TensorDType::Complex128, &[], &[7u8; 16]);
        round_trip(TensorDType::Int32, &[0, 3], &[]);
    }

    #[test]
    fn carriers_are_the_widened_values_and_zero_stays_zero() {
        let t = SaverTensor::from_raw(TensorDType::Int8, &[2], &[0xff, 0]).expect("carried");
        assert_eq!(t.carrier().values(), &Values::Int64(vec![-1, 0]));
        let t = SaverTensor::from_raw(TensorDType::Bool, &[2], &[2, 0]).expect("carried");
        assert_eq!(t.carrier().values(), &Values::Int64(vec![1, 0]));
        let t = SaverTensor::from_raw(TensorDType::Complex128, &[1, 1], &[0; 16]).expect("carried");
        assert_eq!(t.carrier().shape(), [1, 1, 2]);
        assert_eq!(t.shape(), [1, 1]);
        for element in TensorDType::ALL.into_iter().filter(|e| *e != TensorDType::String) {
            let complex = element == TensorDType::Complex128;
            let mut values = Values::empty(carrier_dtype(element));
            values.extend_pad(&Values::empty(carrier_dtype(element)), if complex { 6 } else { 3 });
            let zeros = DenseTensor::from_values(values, if complex { &[3, 2] } else { &[3] }).expect("shape");
            let (raw, _) = restore_raw(element, &zeros).expect("restored");
            assert!(raw.iter().all(|&b| b == 0), "{element}");
        }
    }

    #[test]
    fn names_are_numpys_and_others_are_refused() {
        for element in TensorDType::ALL {
            assert_eq!(element_type(element.name()).expect("known"), element);
            assert_eq!(
                native_type(carrier_dtype(element)) == element,
                is_native(element),
                "{element}"
            );
        }
        assert_eq!(
            element_type("<U3"),
            Err(DTypeError::Unsupported { dtype: "<U3".into() })
        );
        let e = element_type("datetime64[s]").expect_err("refused");
        assert_eq!(
            e.to_string(),
            "dtype datetime64[s] is not supported (numeric dtypes and bytes are)"
        );
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_an_error_not_a_panic() {
        let e = SaverTensor::from_raw(TensorDType::Int32, &[2, 2], &[0; 15]).expect_err("short");
        assert_eq!(
            e.to_string(),
            "a int32 tensor of shape [2, 2] needs 16 bytes, but 15 were given"
        );
        assert!(SaverTensor::from_raw(TensorDType::Int32, &[usize::MAX, 2], &[]).is_err());
        assert!(SaverTensor::from_raw(TensorDType::String, &[0], &[]).is_err());
        let wrong_carrier = DenseTensor::from(ndarray::ArrayD::<f32>::zeros(vec![1]));
        assert!(restore_raw(TensorDType::Int8, &wrong_carrier).is_none());
    }
}

//! One parsed dense tensor as one Arrow array: what the Python parse ops hand out for a string
//! feature with `strings="arrow"` (a dense feature, or the values of a sparse or ragged one).

use arrow_array::ArrayRef;

use super::arrays::fixed_lists;
use super::storage::dense_values_owned;
use super::ColumnarError;
use crate::parse::DenseTensor;

/// `tensor` as an Arrow array of `shape[0]` rows, each trailing dimension a `FixedSizeList`
/// (as [`ExampleColumns`](super::ExampleColumns) lays out a `FixedLenFeature`); a scalar is an
/// array of its one value. Strings are `Binary` (bytes, as TensorFlow holds them), their bytes
/// moved into the array rather than copied one by one. `column` names the tensor in an error
/// (more than 2^31 bytes of strings, which `Binary`'s offsets cannot hold).
pub fn dense_tensor_array(tensor: DenseTensor, column: &str) -> Result<ArrayRef, ColumnarError> {
    let shape = tensor.shape().to_vec();
    let values = dense_values_owned(tensor, false, column, &|i| i)?;
    match shape.split_first() {
        None => Ok(values),
        Some((&rows, inner)) => fixed_lists(values, inner, rows, column),
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_schema::DataType;

    use super::*;
    use crate::parse::{BytesArray, Values};

    fn strings(shape: &[usize], values: &[&[u8]]) -> DenseTensor {
        let mut bytes = BytesArray::new();
        for v in values {
            bytes.push(v);
        }
        DenseTensor::from_values(Values::String(bytes), shape).expect("shape holds the values")
    }

    #[test]
    fn a_scalar_is_one_value() {
        let array = dense_tensor_array(strings(&[], &[b"a"]), "f").expect("converts");
        assert_eq!(array.len(), 1);
        assert_eq!(array.as_binary::<i32>().value(0), b"a");
    }

    #[test]
    fn trailing_dimensions_are_fixed_lists() {
        let values: Vec<&[u8]> = vec![b"a", b"", b"\xff", b"d", b"e", b"f"];
        let array = dense_tensor_array(strings(&[3, 2], &values), "f").expect("converts");
        assert_eq!(array.len(), 3);
        assert!(matches!(array.data_type(), DataType::FixedSizeList(_, 2)));
        let flat = array.as_fixed_size_list().values().as_binary::<i32>().clone();
        assert_eq!(flat.iter().map(|v| v.unwrap_or_default()).collect::<Vec<_>>(), values);
    }

    #[test]
    fn a_zero_dimension_keeps_its_rows() {
        let array = dense_tensor_array(strings(&[4, 0], &[]), "f").expect("converts");
        assert_eq!(array.len(), 4);
    }
}

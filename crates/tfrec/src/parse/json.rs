//! The JSON forms of values and tensors, as the golden vectors write them: numbers, `"NaN"` /
//! `"Infinity"` for non-finite floats, strings (or `{"base64": …}` for bytes that are not
//! UTF-8), and `{"kind": "dense" | "sparse" | "ragged", …}` objects for tensors.

use std::fmt;

use serde_json::Value;

use crate::json_text::{float_from_special, from_base64, ByteList, Json, Layout};

use super::tensor::{DenseTensor, RaggedTensor, SparseTensor, Tensor};
use super::values::{BytesArray, DType, Values};

fn flatten_json<'v>(value: &'v Value, out: &mut Vec<&'v Value>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| flatten_json(v, out)),
        other => out.push(other),
    }
}

/// Reads JSON values (a scalar or nested lists) as flat typed values.
pub(crate) fn values_from_json(value: &Value, dtype: DType) -> Result<Values, String> {
    let mut flat = Vec::new();
    flatten_json(value, &mut flat);
    Ok(match dtype {
        DType::Int64 => Values::Int64(
            flat.iter()
                .map(|v| v.as_i64().ok_or_else(|| format!("{v} is not an int64")))
                .collect::<Result<_, _>>()?,
        ),
        DType::Float32 => Values::Float32(
            flat.iter()
                .map(|v| match v {
                    Value::Number(n) => n
                        .as_f64()
                        .map(|f| f as f32)
                        .ok_or_else(|| format!("{v} is not a float")),
                    Value::String(s) => float_from_special(s).ok_or_else(|| format!("{v} is not a float")),
                    _ => Err(format!("{v} is not a float")),
                })
                .collect::<Result<_, _>>()?,
        ),
        DType::String => {
            let mut out = BytesArray::with_capacity(flat.len(), 0);
            for v in flat {
                match v {
                    Value::String(s) => out.push(s.as_bytes()),
                    Value::Object(o) => out.push(
                        &o.get("base64")
                            .and_then(Value::as_str)
                            .and_then(|b| from_base64(b).ok())
                            .ok_or_else(|| format!("{v} is not bytes"))?,
                    ),
                    _ => return Err(format!("{v} is not a string")),
                }
            }
            Values::String(out)
        }
    })
}

/// Values as a JSON list: numbers, `"NaN"`/`"Infinity"`, strings or `{"base64": …}`.
pub(crate) fn values_json(values: &Values) -> Json<'_> {
    match values {
        Values::Int64(v) => Json::Ints(v.as_slice().into()),
        Values::Float32(v) => Json::Floats(v),
        Values::String(v) => Json::BytesList(ByteList::Slices(v.iter().collect())),
    }
}

/// The first of `values` as one JSON value (`null` when there is none).
pub(crate) fn first_value_json(values: &Values) -> Json<'_> {
    match values {
        Values::Int64(v) => v.first().map_or(Json::Null, |&x| Json::Int(x)),
        Values::Float32(v) => v.first().map_or(Json::Null, |&x| Json::Float(x)),
        Values::String(v) => v.get(0).map_or(Json::Null, Json::Bytes),
    }
}

/// The tensors' JSON text: one line, no spaces, UTF-8 as is.
const TENSOR_LAYOUT: Layout = Layout::Compact;

impl DenseTensor {
    fn json(&self) -> Json<'_> {
        Json::Object(vec![
            ("kind", Json::Str("dense")),
            ("dtype", Json::Str(self.dtype().json_name())),
            ("shape", Json::Sizes(self.shape())),
            ("values", values_json(self.values())),
        ])
    }

    /// The golden JSON form, `{"kind":"dense","dtype":…,"shape":[…],"values":[…]}`: floats as
    /// the shortest text that reads back to the same float32, `"NaN"` / `"Infinity"` /
    /// `"-Infinity"` for the others, bytes as strings where UTF-8, else `{"base64":…}`.
    pub fn to_json_string(&self) -> String {
        self.json().to_text(TENSOR_LAYOUT)
    }

    /// [`DenseTensor::to_json_string`] written piece by piece into `out`.
    pub fn write_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.json().write(out, TENSOR_LAYOUT)
    }
}

impl SparseTensor {
    fn json(&self) -> Json<'_> {
        let indices = self
            .indices
            .rows()
            .into_iter()
            // Rows of a standard-layout matrix are slices of it: borrowed, not copied.
            .map(|r| Json::Ints(r.to_slice().map_or_else(|| r.to_vec().into(), Into::into)))
            .collect();
        Json::Object(vec![
            ("kind", Json::Str("sparse")),
            ("dtype", Json::Str(self.values.dtype().json_name())),
            ("indices", Json::Array(indices)),
            ("values", values_json(self.values.values())),
            ("dense_shape", Json::Ints(self.dense_shape.as_slice().into())),
        ])
    }

    /// The golden JSON form, `{"kind":"sparse","dtype":…,"indices":[[…]],"values":[…],
    /// "dense_shape":[…]}` (values as in [`DenseTensor::to_json_string`]).
    pub fn to_json_string(&self) -> String {
        self.json().to_text(TENSOR_LAYOUT)
    }

    /// [`SparseTensor::to_json_string`] written piece by piece into `out`.
    pub fn write_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.json().write(out, TENSOR_LAYOUT)
    }
}

impl RaggedTensor {
    fn json(&self) -> Json<'_> {
        let splits = self
            .nested_row_splits()
            .iter()
            .map(|s| Json::Ints(s.as_slice().into()))
            .collect();
        let uniform = self
            .uniform_row_lengths()
            .iter()
            .map(|l| l.map_or(Json::Null, Json::Int))
            .collect();
        Json::Object(vec![
            ("kind", Json::Str("ragged")),
            ("dtype", Json::Str(self.flat_values().dtype().json_name())),
            ("row_splits_dtype", Json::Str(self.row_splits_dtype().json_name())),
            ("nested_row_splits", Json::Array(splits)),
            ("uniform_row_lengths", Json::Array(uniform)),
            ("flat_values", self.flat_values().json()),
        ])
    }

    /// The golden JSON form, `{"kind":"ragged","dtype":…,"row_splits_dtype":…,
    /// "nested_row_splits":[[…]],"uniform_row_lengths":[…],"flat_values":{dense}}`.
    pub fn to_json_string(&self) -> String {
        self.json().to_text(TENSOR_LAYOUT)
    }

    /// [`RaggedTensor::to_json_string`] written piece by piece into `out`.
    pub fn write_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.json().write(out, TENSOR_LAYOUT)
    }
}

impl Tensor {
    fn json(&self) -> Json<'_> {
        match self {
            Tensor::Dense(t) => t.json(),
            Tensor::Sparse(t) => t.json(),
            Tensor::Ragged(t) => t.json(),
        }
    }

    /// The golden JSON form of the dense, sparse or ragged tensor (see
    /// [`DenseTensor::to_json_string`]).
    ///
    /// ```
    /// use tfrec::parse::{DenseTensor, Tensor, Values};
    ///
    /// let t = Tensor::Dense(DenseTensor::from_values(Values::Float32(vec![0.1, f32::NAN]), &[2])?);
    /// assert_eq!(t.to_json_string(), r#"{"kind":"dense","dtype":"float32","shape":[2],"values":[0.1,"NaN"]}"#);
    /// # Ok::<(), tfrec::Error>(())
    /// ```
    pub fn to_json_string(&self) -> String {
        self.json().to_text(TENSOR_LAYOUT)
    }

    /// [`Tensor::to_json_string`] written piece by piece into `out`.
    pub fn write_json<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.json().write(out, TENSOR_LAYOUT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_shortest_and_read_back_exactly() {
        let floats = vec![
            0.1f32,
            1.0 / 3.0,
            1e-40,
            f32::MAX,
            -2.5e-7,
            16_777_217.0,
            f32::NEG_INFINITY,
        ];
        let text = values_json(&Values::Float32(floats.clone())).to_text(TENSOR_LAYOUT);
        assert!(text.starts_with("[0.1,"), "{text}");
        let back = values_from_json(&serde_json::from_str(&text).expect("json"), DType::Float32).expect("floats");
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(back.as_f32().map(bits), Some(bits(&floats)), "{text}");
    }

    #[test]
    fn tensors_as_json_text() {
        let dense = DenseTensor::from_values(Values::String(["a\"", "é"].into_iter().collect()), &[2]).expect("dense");
        assert_eq!(
            dense.to_json_string(),
            r#"{"kind":"dense","dtype":"string","shape":[2],"values":["a\"","é"]}"#
        );
        let bytes =
            DenseTensor::from_values(Values::String([vec![0xffu8]].into_iter().collect()), &[1]).expect("dense");
        assert!(bytes.to_json_string().ends_with(r#""values":[{"base64":"/w=="}]}"#));
    }
}

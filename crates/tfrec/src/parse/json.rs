//! The JSON forms of values and tensors, as the golden vectors write them: numbers, `"NaN"` /
//! `"Infinity"` for non-finite floats, strings (or `{"base64": …}` for bytes that are not
//! UTF-8), and `{"kind": "dense" | "sparse" | "ragged", …}` objects for tensors.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::example::{base64 as base64_text, shortest_repr, special_float};

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
                    Value::String(s) if s == "NaN" => Ok(f32::NAN),
                    Value::String(s) if s == "Infinity" => Ok(f32::INFINITY),
                    Value::String(s) if s == "-Infinity" => Ok(f32::NEG_INFINITY),
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
                            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
                            .ok_or_else(|| format!("{v} is not bytes"))?,
                    ),
                    _ => return Err(format!("{v} is not a string")),
                }
            }
            Values::String(out)
        }
    })
}

/// Values as JSON: numbers, `"NaN"`/`"Infinity"`, strings or `{"base64": …}` (a flat list).
pub fn values_to_json(values: &Values) -> Value {
    match values {
        Values::Int64(v) => json!(v),
        Values::Float32(v) => Value::Array(v.iter().map(|&f| float_to_json(f)).collect()),
        Values::String(v) => Value::Array(v.iter().map(bytes_to_json).collect()),
    }
}

/// A float32 as JSON, written as the messages' JSON writes it: the shortest text that reads
/// back to the same float32 (`0.1`, not `0.10000000149011612`).
pub(crate) fn float_to_json(f: f32) -> Value {
    match special_float(f) {
        Some(name) => json!(name),
        None => {
            // The shortest float32 text, read as the nearest double: serde_json then writes
            // the shortest text of that double, which is no longer and reads back the same.
            let shortest = shortest_repr(f).parse::<f64>().unwrap_or(f64::from(f));
            json!(shortest)
        }
    }
}

pub(crate) fn bytes_to_json(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => json!(s),
        Err(_) => json!({"base64": base64_text(b)}),
    }
}

impl DenseTensor {
    /// The golden JSON form: `{"kind": "dense", "dtype", "shape", "values"}`.
    pub fn to_json(&self) -> Value {
        json!({"kind": "dense", "dtype": self.dtype().json_name(), "shape": self.shape(),
               "values": values_to_json(self.values())})
    }
}

impl SparseTensor {
    /// The golden JSON form.
    pub fn to_json(&self) -> Value {
        let indices: Vec<Vec<i64>> = self.indices.rows().into_iter().map(|r| r.to_vec()).collect();
        json!({"kind": "sparse", "dtype": self.values.dtype().json_name(), "indices": indices,
               "values": values_to_json(self.values.values()), "dense_shape": self.dense_shape})
    }
}

impl RaggedTensor {
    /// The golden JSON form.
    pub fn to_json(&self) -> Value {
        json!({"kind": "ragged", "dtype": self.flat_values().dtype().json_name(),
               "row_splits_dtype": self.row_splits_dtype().json_name(),
               "nested_row_splits": self.nested_row_splits(), "uniform_row_lengths": self.uniform_row_lengths(),
               "flat_values": self.flat_values().to_json()})
    }
}

impl Tensor {
    /// The golden JSON form.
    pub fn to_json(&self) -> Value {
        match self {
            Tensor::Dense(t) => t.to_json(),
            Tensor::Sparse(t) => t.to_json(),
            Tensor::Ragged(t) => t.to_json(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_shortest_and_read_back_exactly() {
        for f in [0.1f32, 1.0 / 3.0, 1e-40, f32::MAX, -2.5e-7, 16_777_217.0] {
            let json = float_to_json(f);
            let back = values_from_json(&json, DType::Float32).expect("float");
            assert_eq!(back.as_f32().map(|v| v[0].to_bits()), Some(f.to_bits()), "{json}");
        }
        assert_eq!(float_to_json(0.1).to_string(), "0.1");
    }
}

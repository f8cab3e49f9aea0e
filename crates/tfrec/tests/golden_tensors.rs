//! Conformance of `tensor_proto` with TensorFlow 2.21's `tf.io.serialize_tensor` and
//! `tf.io.parse_tensor`: every case of `tensor_cases.jsonl`. Writing must give TF's bytes
//! exactly; reading must give TF's dtype, shape and values (floats bit for bit, NaN equal to
//! NaN), and fail where TF failed with an error of the same kind.

mod common;

use base64::Engine;
use serde_json::Value;
use tfrec::tensor_proto::{parse_tensor, serialize_tensor, TensorDType, TensorData, TensorProtoError, TensorValue};

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("golden base64")
}

fn float(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "NaN" => f64::NAN,
        Value::String(s) if s == "Infinity" => f64::INFINITY,
        Value::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
        other => other.as_f64().expect("a float value"),
    }
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => s.as_bytes().to_vec(),
        other => b64(other["base64"].as_str().expect("bytes value")),
    }
}

/// IEEE binary16 bits of a value that the golden set gives exactly (NaN as TF writes it).
fn f16_bits(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    let mut exp = a.log2().floor() as i32;
    if a < 2f64.powi(exp) {
        exp -= 1;
    }
    if exp < -14 {
        return sign | (a / 2f64.powi(-24)).round() as u16;
    }
    let mantissa = ((a / 2f64.powi(exp) - 1.0) * 1024.0).round() as u16;
    sign | ((((exp + 15) as u16) << 10) + mantissa)
}

fn f16_value(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let mantissa = f64::from(bits & 0x3ff);
    sign * match exp {
        0 => mantissa * 2f64.powi(-24),
        31 if mantissa == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + mantissa / 1024.0) * 2f64.powi(e - 15),
    }
}

fn bf16_bits(x: f64) -> u16 {
    if x.is_nan() {
        0x7fc0
    } else {
        ((x as f32).to_bits() >> 16) as u16
    }
}

fn int(v: &Value) -> i128 {
    v.as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
        .expect("an integer value")
}

fn data_from_json(dtype: TensorDType, values: &[Value]) -> TensorData {
    let pair = |v: &Value| -> [f64; 2] { [float(&v[0]), float(&v[1])] };
    match dtype {
        TensorDType::Float16 => TensorData::Float16(values.iter().map(|v| f16_bits(float(v))).collect()),
        TensorDType::BFloat16 => TensorData::BFloat16(values.iter().map(|v| bf16_bits(float(v))).collect()),
        TensorDType::Float32 => TensorData::Float32(values.iter().map(|v| float(v) as f32).collect()),
        TensorDType::Float64 => TensorData::Float64(values.iter().map(float).collect()),
        TensorDType::Int8 => TensorData::Int8(values.iter().map(|v| int(v) as i8).collect()),
        TensorDType::Int16 => TensorData::Int16(values.iter().map(|v| int(v) as i16).collect()),
        TensorDType::Int32 => TensorData::Int32(values.iter().map(|v| int(v) as i32).collect()),
        TensorDType::Int64 => TensorData::Int64(values.iter().map(|v| int(v) as i64).collect()),
        TensorDType::UInt8 => TensorData::UInt8(values.iter().map(|v| int(v) as u8).collect()),
        TensorDType::UInt16 => TensorData::UInt16(values.iter().map(|v| int(v) as u16).collect()),
        TensorDType::UInt32 => TensorData::UInt32(values.iter().map(|v| int(v) as u32).collect()),
        TensorDType::UInt64 => TensorData::UInt64(values.iter().map(|v| int(v) as u64).collect()),
        TensorDType::Bool => TensorData::Bool(values.iter().map(|v| v.as_bool().expect("bool")).collect()),
        TensorDType::String => TensorData::String(values.iter().map(bytes).collect()),
        TensorDType::Complex64 => TensorData::Complex64(
            values
                .iter()
                .map(|v| {
                    let [re, im] = pair(v);
                    [re as f32, im as f32]
                })
                .collect(),
        ),
        TensorDType::Complex128 => TensorData::Complex128(values.iter().map(pair).collect()),
    }
}

/// Our values as comparable items: floats as f64 (compared by bits, NaN equal to NaN),
/// integers as i128, bytes as bytes.
#[derive(Debug)]
enum Item {
    F(f64),
    I(i128),
    B(Vec<u8>),
}

impl PartialEq for Item {
    fn eq(&self, other: &Item) -> bool {
        match (self, other) {
            (Item::F(a), Item::F(b)) => (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits(),
            (Item::I(a), Item::I(b)) => a == b,
            (Item::B(a), Item::B(b)) => a == b,
            _ => false,
        }
    }
}

fn items(data: &TensorData) -> Vec<Item> {
    match data {
        TensorData::Float16(v) => v.iter().map(|&b| Item::F(f16_value(b))).collect(),
        TensorData::BFloat16(v) => v
            .iter()
            .map(|&b| Item::F(f64::from(f32::from_bits(u32::from(b) << 16))))
            .collect(),
        TensorData::Float32(v) => v.iter().map(|&x| Item::F(f64::from(x))).collect(),
        TensorData::Float64(v) => v.iter().map(|&x| Item::F(x)).collect(),
        TensorData::Int8(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::Int16(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::Int32(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::Int64(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::UInt8(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::UInt16(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::UInt32(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::UInt64(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::Bool(v) => v.iter().map(|&x| Item::I(x.into())).collect(),
        TensorData::String(v) => v.iter().map(|x| Item::B(x.clone())).collect(),
        TensorData::Complex64(v) => v.iter().flatten().map(|&x| Item::F(f64::from(x))).collect(),
        TensorData::Complex128(v) => v.iter().flatten().map(|&x| Item::F(x)).collect(),
    }
}

fn expected_items(dtype: TensorDType, values: &[Value]) -> Vec<Item> {
    values
        .iter()
        .flat_map(|v| match dtype {
            TensorDType::String => vec![Item::B(bytes(v))],
            TensorDType::Bool => vec![Item::I(v.as_bool().expect("bool").into())],
            TensorDType::Complex64 | TensorDType::Complex128 => vec![Item::F(float(&v[0])), Item::F(float(&v[1]))],
            d if d.name().starts_with("float") || d == TensorDType::BFloat16 => vec![Item::F(float(v))],
            _ => vec![Item::I(int(v))],
        })
        .collect()
}

fn shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect()
}

fn dtype(v: &Value) -> TensorDType {
    TensorDType::from_name(v.as_str().expect("dtype")).expect("a known dtype")
}

fn run_case(case: &Value) -> Result<(), String> {
    let serialized = b64(case["serialized"].as_str().expect("serialized"));
    match case["op"].as_str().expect("op") {
        "serialize_tensor" => {
            let d = dtype(&case["dtype"]);
            let values = case["values"].as_array().expect("values");
            let tensor =
                TensorValue::new(shape(&case["shape"]), data_from_json(d, values)).map_err(|e| e.to_string())?;
            let ours = serialize_tensor(&tensor).map_err(|e| e.to_string())?;
            if ours != serialized {
                return Err(format!("bytes {ours:02x?}, TF wrote {serialized:02x?}"));
            }
            Ok(())
        }
        "parse_tensor" => {
            let out_type = dtype(&case["out_type"]);
            let result = parse_tensor(&serialized, out_type);
            match (&case["expected"], result) {
                (Value::Null, Ok(t)) => Err(format!("TF failed ({}), we returned {t:?}", case["error"])),
                (Value::Null, Err(e)) => {
                    let tf = case["error"]["message"].as_str().unwrap_or_default();
                    let same_kind = match &e {
                        TensorProtoError::TypeMismatch { .. } => tf.starts_with("Type mismatch"),
                        TensorProtoError::Malformed(_) => tf.starts_with("Could not parse"),
                        _ => tf.starts_with("Cannot parse tensor from proto"),
                    };
                    if same_kind {
                        Ok(())
                    } else {
                        Err(format!("our error {e:?} is not of the kind of TF's {tf:?}"))
                    }
                }
                (expected, Err(e)) => Err(format!("we failed ({e}), TF returned {expected}")),
                (expected, Ok(t)) => {
                    let d = dtype(&expected["dtype"]);
                    if t.dtype() != d {
                        return Err(format!("dtype {}, TF {d}", t.dtype()));
                    }
                    if t.shape != shape(&expected["shape"]) {
                        return Err(format!("shape {:?}, TF {}", t.shape, expected["shape"]));
                    }
                    let want = expected_items(d, expected["values"].as_array().expect("values"));
                    let got = items(&t.data);
                    if got != want {
                        return Err(format!("values {got:?}, TF {want:?}"));
                    }
                    Ok(())
                }
            }
        }
        other => Err(format!("unknown op {other}")),
    }
}

#[test]
fn every_tensor_case_matches_tensorflow() {
    let path = common::golden_dir().join("tensor_cases.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut run, mut passed) = (0, 0);
    let mut failures = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("a JSON case");
        run += 1;
        match run_case(&case) {
            Ok(()) => passed += 1,
            Err(e) => failures.push(format!("{}: {e}", case["id"])),
        }
    }
    println!("tensor cases: {run} run, {passed} passed");
    assert!(run > 0, "no tensor cases in {}", path.display());
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

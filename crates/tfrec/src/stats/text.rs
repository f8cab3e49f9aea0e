//! Statistics to and from bytes and the protobuf text format (TFDV's `load_stats_binary`,
//! `write_stats_text`, `load_stats_text`), through prost-reflect's descriptors of the same
//! `.proto` files the messages are generated from.

use std::fmt::Write as _;
use std::sync::OnceLock;

use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value};

use crate::example::escape_bytes;
use crate::pyfloat::{write_python_repr, write_shortest_repr};

use super::error::StatsError;
use super::proto::{DatasetFeatureStatisticsList, FILE_DESCRIPTOR_SET};

const LIST_MESSAGE: &str = "tensorflow.metadata.v0.DatasetFeatureStatisticsList";

fn list_descriptor() -> Result<MessageDescriptor, StatsError> {
    static POOL: OnceLock<Result<DescriptorPool, String>> = OnceLock::new();
    let pool = POOL
        .get_or_init(|| DescriptorPool::decode(FILE_DESCRIPTOR_SET).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| StatsError::Proto(format!("the built-in descriptors do not load: {e}")))?;
    pool.get_message_by_name(LIST_MESSAGE)
        .ok_or_else(|| StatsError::Proto(format!("the built-in descriptors lack {LIST_MESSAGE}")))
}

/// The statistics' protobuf bytes (what TFDV writes to its `output_path`).
pub fn encode_statistics(stats: &DatasetFeatureStatisticsList) -> Vec<u8> {
    stats.encode_to_vec()
}

/// Statistics from protobuf bytes (TFDV's `load_stats_binary`).
pub fn decode_statistics(bytes: &[u8]) -> Result<DatasetFeatureStatisticsList, StatsError> {
    DatasetFeatureStatisticsList::decode(bytes).map_err(|e| StatsError::Proto(e.to_string()))
}

/// The statistics in the protobuf text format as TFDV's `write_stats_text` writes it (Python
/// protobuf's `MessageToString`: fields in number order, one a line, two-space indent, strings
/// C-escaped, doubles as Python's `repr`, floats as their shortest float32 text).
pub fn statistics_to_text(stats: &DatasetFeatureStatisticsList) -> Result<String, StatsError> {
    let message = DynamicMessage::decode(list_descriptor()?, stats.encode_to_vec().as_slice())
        .map_err(|e| StatsError::Proto(e.to_string()))?;
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = write_message(&mut text, &message, 0);
    Ok(text)
}

fn write_message(out: &mut String, message: &DynamicMessage, indent: usize) -> std::fmt::Result {
    let mut fields: Vec<FieldDescriptor> = message.descriptor().fields().collect();
    fields.sort_by_key(|f| f.number());
    for field in fields {
        if !message.has_field(&field) {
            continue;
        }
        match &*message.get_field(&field) {
            Value::List(values) => {
                for value in values {
                    write_field(out, &field, value, indent)?;
                }
            }
            value => write_field(out, &field, value, indent)?,
        }
    }
    Ok(())
}

fn write_field(out: &mut String, field: &FieldDescriptor, value: &Value, indent: usize) -> std::fmt::Result {
    write!(out, "{:indent$}{}", "", field.name())?;
    match value {
        Value::Message(inner) => {
            out.push_str(" {\n");
            write_message(out, inner, indent + 2)?;
            writeln!(out, "{:indent$}}}", "")?;
            return Ok(());
        }
        _ => out.push_str(": "),
    }
    match value {
        Value::Bool(b) => write!(out, "{b}")?,
        Value::I32(v) => write!(out, "{v}")?,
        Value::I64(v) => write!(out, "{v}")?,
        Value::U32(v) => write!(out, "{v}")?,
        Value::U64(v) => write!(out, "{v}")?,
        Value::F32(v) => write_float(out, f64::from(*v), |out| write_shortest_repr(out, *v))?,
        Value::F64(v) => write_float(out, *v, |out| write_python_repr(out, *v))?,
        Value::String(s) => {
            out.push('"');
            escape_bytes(out, s.as_bytes())?;
            out.push('"');
        }
        Value::Bytes(b) => {
            out.push('"');
            escape_bytes(out, b)?;
            out.push('"');
        }
        Value::EnumNumber(n) => match field.kind() {
            Kind::Enum(e) => match e.get_value(*n) {
                Some(v) => out.push_str(v.name()),
                None => write!(out, "{n}")?,
            },
            _ => write!(out, "{n}")?,
        },
        Value::Message(_) | Value::List(_) | Value::Map(_) => {}
    }
    out.push('\n');
    Ok(())
}

/// A float as Python's text format spells it: `nan`, `inf`, `-inf`, or `finite`'s digits.
fn write_float(out: &mut String, v: f64, finite: impl FnOnce(&mut String) -> std::fmt::Result) -> std::fmt::Result {
    if v.is_nan() {
        out.push_str("nan");
        Ok(())
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "inf" } else { "-inf" });
        Ok(())
    } else {
        finite(out)
    }
}

/// Statistics from the protobuf text format (TFDV's `load_stats_text`).
pub fn statistics_from_text(text: &str) -> Result<DatasetFeatureStatisticsList, StatsError> {
    let message =
        DynamicMessage::parse_text_format(list_descriptor()?, text).map_err(|e| StatsError::Text(e.to_string()))?;
    decode_statistics(&message.encode_to_vec())
}

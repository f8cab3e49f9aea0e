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
    descriptor(LIST_MESSAGE)
}

/// The descriptor of one of the vendored messages, by its full name.
fn descriptor(full_name: &str) -> Result<MessageDescriptor, StatsError> {
    static POOL: OnceLock<Result<DescriptorPool, String>> = OnceLock::new();
    let pool = POOL
        .get_or_init(|| DescriptorPool::decode(FILE_DESCRIPTOR_SET).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| StatsError::Proto(format!("the built-in descriptors do not load: {e}")))?;
    pool.get_message_by_name(full_name)
        .ok_or_else(|| StatsError::Proto(format!("the built-in descriptors lack {full_name}")))
}

/// Any vendored message (`full_name` is its protobuf name) in the text format, as
/// [`statistics_to_text`] writes statistics; map fields are written entry by entry in key
/// order, as Python's `text_format` does.
pub(crate) fn message_to_text<M: prost::Message>(message: &M, full_name: &str) -> Result<String, StatsError> {
    let message = DynamicMessage::decode(descriptor(full_name)?, message.encode_to_vec().as_slice())
        .map_err(|e| StatsError::Proto(e.to_string()))?;
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = write_message(&mut text, &message, 0);
    Ok(text)
}

/// Any vendored message from the text format; a [`StatsError::Text`] error names the line and
/// column where the text stops parsing.
pub(crate) fn message_from_text<M: prost::Message + Default>(text: &str, full_name: &str) -> Result<M, StatsError> {
    let message = DynamicMessage::parse_text_format(descriptor(full_name)?, text).map_err(|e| {
        use miette::Diagnostic as _;
        let offset = e
            .labels()
            .and_then(|mut labels| labels.next())
            .map_or(0, |label| label.offset())
            .min(text.len());
        let before = &text.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
        StatsError::Text(format!("line {line}, column {column}: {e}"))
    })?;
    M::decode(message.encode_to_vec().as_slice()).map_err(|e| StatsError::Proto(e.to_string()))
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
            Value::Map(entries) => write_map(out, &field, entries, indent)?,
            value => write_field(out, &field, value, indent)?,
        }
    }
    Ok(())
}

/// A map field as Python's `text_format` writes it: one `name { key: … value … }` per entry,
/// keys in order.
fn write_map(
    out: &mut String,
    field: &FieldDescriptor,
    entries: &std::collections::HashMap<prost_reflect::MapKey, Value>,
    indent: usize,
) -> std::fmt::Result {
    let Kind::Message(entry) = field.kind() else {
        return Ok(());
    };
    let (Some(key_field), Some(value_field)) = (entry.get_field(1), entry.get_field(2)) else {
        return Ok(());
    };
    let mut keys: Vec<&prost_reflect::MapKey> = entries.keys().collect();
    keys.sort();
    for key in keys {
        writeln!(out, "{:indent$}{} {{", "", field.name())?;
        let key_value: Value = key.clone().into();
        write_field(out, &key_field, &key_value, indent + 2)?;
        if let Some(value) = entries.get(key) {
            write_field(out, &value_field, value, indent + 2)?;
        }
        writeln!(out, "{:indent$}}}", "")?;
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

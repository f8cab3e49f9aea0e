//! An Arrow schema as an IPC schema message, built in a buffer sized for it: what the Arrow IPC
//! writer puts at the head of its file and the Parquet writer in its footer (`ARROW:schema`).
//!
//! arrow-ipc's `schema_to_bytes_with_dictionary_tracker` builds the same message, but in a
//! buffer grown by doubling and then copied: for a million fields, a transient of about twice
//! the message.

use arrow_ipc::MetadataVersion;
use arrow_schema::Schema;
use flatbuffers::FlatBufferBuilder;

/// The bytes of `schema`'s IPC schema message (a flatbuffer, unpadded), of metadata `version`:
/// arrow-ipc's bytes for a schema without dictionaries (which take ids from a tracker).
pub(crate) fn schema_message(schema: &Schema, version: MetadataVersion) -> Vec<u8> {
    let mut builder = FlatBufferBuilder::with_capacity(schema_room(schema));
    let fb_schema = arrow_ipc::convert::IpcSchemaEncoder::new().schema_to_fb_offset(&mut builder, schema);
    let mut message = arrow_ipc::MessageBuilder::new(&mut builder);
    message.add_version(version);
    message.add_header_type(arrow_ipc::MessageHeader::Schema);
    message.add_bodyLength(0);
    message.add_header(fb_schema.as_union_value());
    let message = message.finish();
    builder.finish(message, None);
    finished(builder)
}

/// Room enough, most often, for the flatbuffer of `schema` and a message around it: a field
/// of a primitive type and a short name takes about 50 bytes.
pub(crate) fn schema_room(schema: &Schema) -> usize {
    let names: usize = schema.fields().iter().map(|f| f.name().len()).sum();
    1024 + 64 * schema.fields().len() + names
}

/// A finished builder's bytes, without a copy: the builder fills its buffer from the end, and
/// the message is its bytes from `head` on.
pub(crate) fn finished(builder: FlatBufferBuilder<'_>) -> Vec<u8> {
    let (mut bytes, head) = builder.collapse();
    bytes.drain(..head);
    bytes
}

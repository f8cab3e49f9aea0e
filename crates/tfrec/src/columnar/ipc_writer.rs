//! An Arrow IPC file written from a batch's columns in slices (feature `ipc`): the record
//! batch message of a schema too wide for its batch to be whole as Arrow arrays.
//! `tfrec convert` writes a wide schema's Arrow IPC file through [`IpcColumnsWriter`].
//!
//! arrow-ipc's `FileWriter` takes a whole `RecordBatch`, so every column's array lives until
//! the batch is written, and the writer then holds, for each column, its place in a list of
//! dictionaries to encode and its encoded buffers. For a record of a million one-value
//! features that is most of what `convert` holds. Here each slice of columns is encoded as
//! soon as it is made, by arrow-ipc's own encoder, and only what the batch's message needs is
//! kept: each column's field node, its buffers' places and its bytes. The slices' arrays are
//! then dropped. When the batch ends, its message is the one arrow-ipc would write for the whole
//! batch: the nodes and buffers in column order, the buffers' offsets into one body.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_ipc::writer::{
    write_message, DictionaryTracker, EncodedData, IpcDataGenerator, IpcWriteContext, IpcWriteOptions,
};
use arrow_ipc::{Block, FieldNode, MetadataVersion};
use arrow_schema::{ArrowError, SchemaRef};
use flatbuffers::FlatBufferBuilder;

use super::ipc_schema::{finished, schema_message, schema_room};

/// The file's magic, at its start (padded to 8 bytes) and end.
const ARROW_MAGIC: [u8; 6] = *b"ARROW1";

/// The buffers' alignment in the body. The format asks for 8; 64 is arrow-ipc's default, and
/// a wide schema's one-value columns would then take 64 bytes each for their values and 64
/// for their validity, most of it padding, held until the batch's message is written.
const ALIGNMENT: u8 = 8;

/// The format's version, arrow-ipc's default.
const METADATA_VERSION: MetadataVersion = MetadataVersion::V5;

/// An Arrow IPC file (the format of `.arrow` and `.feather` files) whose batches come as slices
/// of their columns, one after the other ([`write_columns`](Self::write_columns), then
/// [`end_batch`](Self::end_batch)), or whole ([`write`](Self::write)).
///
/// The file holds the same schema, batches and values as arrow-ipc's `FileWriter` writes of the
/// whole batches, with the buffers 8-byte aligned rather than 64 (see the module's note).
/// Dictionary-encoded columns are refused: a wide TFRecord schema has none.
pub struct IpcColumnsWriter<W: Write> {
    out: W,
    schema: SchemaRef,
    options: IpcWriteOptions,
    generator: IpcDataGenerator,
    context: IpcWriteContext,
    /// Bytes written so far: where the next message starts.
    written: usize,
    /// The record batches written, for the footer.
    blocks: Vec<Block>,
    /// The batch whose columns are coming.
    open: OpenBatch,
}

/// What a batch's message needs of the columns given so far.
#[derive(Default)]
struct OpenBatch {
    /// The batch's rows (from its first slice).
    rows: Option<usize>,
    /// Columns given so far.
    columns: usize,
    nodes: Vec<FieldNode>,
    buffers: Vec<arrow_ipc::Buffer>,
    /// The view columns' counts of data buffers, in column order.
    variadic_counts: Vec<i64>,
    /// The buffers' bytes, each padded to the alignment.
    body: Vec<u8>,
}

impl<W: Write> IpcColumnsWriter<W> {
    /// A file of `schema` written to `out`; its start (the magic and the schema's message) is
    /// written now.
    pub fn try_new(mut out: W, schema: SchemaRef) -> Result<Self, ArrowError> {
        let options = IpcWriteOptions::try_new(ALIGNMENT.into(), false, METADATA_VERSION)?;
        let generator = IpcDataGenerator::default();
        let padding = (ALIGNMENT as usize - ARROW_MAGIC.len() % ALIGNMENT as usize) % ALIGNMENT as usize;
        out.write_all(&ARROW_MAGIC)?;
        out.write_all(&[0; 8][..padding])?;
        let encoded = EncodedData {
            ipc_message: schema_message(&schema, METADATA_VERSION),
            arrow_data: Vec::new(),
        };
        let (meta, body) = write_message(&mut out, encoded, &options)?;
        Ok(IpcColumnsWriter {
            out,
            schema,
            options,
            generator,
            context: IpcWriteContext::default(),
            written: ARROW_MAGIC.len() + padding + meta + body,
            blocks: Vec::new(),
            open: OpenBatch::default(),
        })
    }

    /// The file's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// A whole batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        self.write_columns(0, batch)?;
        self.end_batch()
    }

    /// The next columns of the open batch, every row of them: the schema's fields `first..`,
    /// `first` being the number of columns given so far. Encoded now; `slice` is not kept.
    pub fn write_columns(&mut self, first: usize, slice: &RecordBatch) -> Result<(), ArrowError> {
        let open = &mut self.open;
        let fields = self.schema.fields();
        let expected = fields.get(first..first + slice.num_columns());
        if first != open.columns
            || expected.is_none_or(|f| {
                f.iter()
                    .zip(slice.schema().fields())
                    .any(|(a, b)| a.data_type() != b.data_type())
            })
        {
            return Err(ArrowError::InvalidArgumentError(format!(
                "columns {first}..{} of the batch given after its first {}: not the schema's next columns",
                first + slice.num_columns(),
                open.columns
            )));
        }
        if open.rows.is_some_and(|rows| rows != slice.num_rows()) {
            return Err(ArrowError::InvalidArgumentError(format!(
                "columns {first}.. have {} rows and the batch's first columns {}",
                slice.num_rows(),
                open.rows.unwrap_or_default()
            )));
        }
        let mut dictionaries = DictionaryTracker::new(true);
        let (dictionary_messages, encoded) =
            self.generator
                .encode(slice, &mut dictionaries, &self.options, &mut self.context)?;
        if !dictionary_messages.is_empty() {
            return Err(ArrowError::InvalidArgumentError(
                "a dictionary-encoded column in a batch written by slices of columns".into(),
            ));
        }
        let message = arrow_ipc::root_as_message(&encoded.ipc_message)
            .map_err(|e| ArrowError::IpcError(format!("a slice's message does not read back: {e}")))?;
        let batch = message
            .header_as_record_batch()
            .ok_or_else(|| ArrowError::IpcError("a slice's message is not a record batch".into()))?;
        let at = open.body.len() as i64;
        open.nodes.extend(batch.nodes().into_iter().flatten().copied());
        open.buffers.extend(
            batch
                .buffers()
                .into_iter()
                .flatten()
                .map(|b| arrow_ipc::Buffer::new(b.offset() + at, b.length())),
        );
        open.variadic_counts
            .extend(batch.variadicBufferCounts().into_iter().flatten());
        open.body.extend_from_slice(&encoded.arrow_data);
        open.rows = Some(slice.num_rows());
        open.columns += slice.num_columns();
        Ok(())
    }

    /// The end of the open batch: its message is written. Every column of the schema must have
    /// been given.
    pub fn end_batch(&mut self) -> Result<(), ArrowError> {
        let open = std::mem::take(&mut self.open);
        if open.columns != self.schema.fields().len() {
            return Err(ArrowError::InvalidArgumentError(format!(
                "a batch ended after {} of its {} columns",
                open.columns,
                self.schema.fields().len()
            )));
        }
        // The message's size is known: building it in a buffer of that size copies nothing.
        let vectors = std::mem::size_of_val(open.nodes.as_slice())
            + std::mem::size_of_val(open.buffers.as_slice())
            + std::mem::size_of_val(open.variadic_counts.as_slice());
        let mut builder = FlatBufferBuilder::with_capacity(vectors + 256);
        let buffers = builder.create_vector(&open.buffers);
        let nodes = builder.create_vector(&open.nodes);
        let variadic_counts = (!open.variadic_counts.is_empty()).then(|| builder.create_vector(&open.variadic_counts));
        drop((open.buffers, open.nodes, open.variadic_counts));
        let mut batch = arrow_ipc::RecordBatchBuilder::new(&mut builder);
        batch.add_length(open.rows.unwrap_or_default() as i64);
        batch.add_nodes(nodes);
        batch.add_buffers(buffers);
        if let Some(counts) = variadic_counts {
            batch.add_variadicBufferCounts(counts);
        }
        let batch = batch.finish();
        let mut message = arrow_ipc::MessageBuilder::new(&mut builder);
        message.add_version(METADATA_VERSION);
        message.add_header_type(arrow_ipc::MessageHeader::RecordBatch);
        message.add_bodyLength(open.body.len() as i64);
        message.add_header(batch.as_union_value());
        let message = message.finish();
        builder.finish(message, None);
        let encoded = EncodedData {
            ipc_message: finished(builder),
            arrow_data: open.body,
        };
        let (meta, body) = write_message(&mut self.out, encoded, &self.options)?;
        let meta_len = i32::try_from(meta)
            .map_err(|_| ArrowError::IpcError(format!("a batch's message of {meta} bytes: over the format's 2 GiB")))?;
        self.blocks.push(Block::new(self.written as i64, meta_len, body as i64));
        self.written += meta + body;
        Ok(())
    }

    /// The file's end (the footer, with the schema and the batches' places) written, and the
    /// output handed back, flushed. A batch still open is an error.
    pub fn finish(mut self) -> Result<W, ArrowError> {
        if self.open.columns > 0 {
            return Err(ArrowError::InvalidArgumentError(
                "the file was finished in the middle of a batch".into(),
            ));
        }
        // The end-of-stream marker, as arrow-ipc's FileWriter writes it.
        self.out.write_all(&u32::MAX.to_le_bytes())?;
        self.out.write_all(&0u32.to_le_bytes())?;
        let blocks = std::mem::size_of_val(self.blocks.as_slice());
        let mut builder = FlatBufferBuilder::with_capacity(schema_room(&self.schema) + blocks);
        let dictionaries = builder.create_vector::<Block>(&[]);
        let batches = builder.create_vector(&self.blocks);
        let schema = arrow_ipc::convert::IpcSchemaEncoder::new().schema_to_fb_offset(&mut builder, &self.schema);
        let mut footer = arrow_ipc::FooterBuilder::new(&mut builder);
        footer.add_version(METADATA_VERSION);
        footer.add_schema(schema);
        footer.add_dictionaries(dictionaries);
        footer.add_recordBatches(batches);
        let footer = footer.finish();
        builder.finish(footer, None);
        let data = builder.finished_data();
        let len = i32::try_from(data.len())
            .map_err(|_| ArrowError::IpcError(format!("a footer of {} bytes: over the format's 2 GiB", data.len())))?;
        self.out.write_all(data)?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&ARROW_MAGIC)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float32Array, Int64Array, ListArray, StringArray};
    use arrow_ipc::reader::FileReader;
    use arrow_ipc::writer::FileWriter;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// Batches of mixed columns (NULLs, strings, lists) in several rows.
    fn batches() -> Vec<RecordBatch> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("l", DataType::new_list(DataType::Float32, true), true),
            Field::new("f", DataType::Float32, true),
            Field::new("b", DataType::Int64, true),
        ]));
        (0..3)
            .map(|k| {
                let n = 5 + k * 7;
                let columns: Vec<ArrayRef> = vec![
                    Arc::new(Int64Array::from_iter_values((0..n).map(|i| i as i64 * 31 + k as i64))),
                    Arc::new(StringArray::from_iter(
                        (0..n).map(|i| (i % 3 != 0).then(|| format!("s{i}{k}"))),
                    )),
                    Arc::new(ListArray::from_iter_primitive::<arrow_array::types::Float32Type, _, _>(
                        (0..n).map(|i| (i % 4 != 1).then(|| (0..i % 5).map(|v| Some(v as f32 / 3.0)))),
                    )),
                    Arc::new(Float32Array::from_iter(
                        (0..n).map(|i| (i % 2 == 0).then_some(i as f32)),
                    )),
                    Arc::new(Int64Array::from_iter(
                        (0..n).map(|i| (i % 5 != 2).then_some(-(i as i64))),
                    )),
                ];
                RecordBatch::try_new(schema.clone(), columns).expect("batch")
            })
            .collect()
    }

    fn read(bytes: Vec<u8>) -> Vec<RecordBatch> {
        FileReader::try_new(std::io::Cursor::new(bytes), None)
            .expect("a file arrow-ipc reads")
            .collect::<Result<_, _>>()
            .expect("batches")
    }

    /// Slices of every width, side by side, are the batch when read back; and a whole batch
    /// gives the message arrow-ipc's FileWriter gives of it, byte for byte.
    #[test]
    fn a_batch_written_in_slices_reads_back_as_the_batch() {
        let batches = batches();
        let schema = batches[0].schema();
        for width in [1, 2, 3, 5, 9] {
            let mut writer = IpcColumnsWriter::try_new(Vec::new(), schema.clone()).expect("writer");
            for batch in &batches {
                let mut first = 0;
                while first < batch.num_columns() {
                    let end = (first + width).min(batch.num_columns());
                    let slice = batch.project(&(first..end).collect::<Vec<_>>()).expect("slice");
                    writer.write_columns(first, &slice).expect("slice");
                    first = end;
                }
                writer.end_batch().expect("end");
            }
            assert_eq!(read(writer.finish().expect("finish")), batches, "width {width}");
        }
        let mut ours = IpcColumnsWriter::try_new(Vec::new(), schema.clone()).expect("writer");
        let options = IpcWriteOptions::try_new(ALIGNMENT.into(), false, MetadataVersion::V5).expect("options");
        let mut theirs = FileWriter::try_new_with_options(Vec::new(), &schema, options).expect("writer");
        for batch in &batches {
            ours.write(batch).expect("write");
            theirs.write(batch).expect("write");
        }
        theirs.finish().expect("finish");
        assert_eq!(ours.finish().expect("finish"), theirs.into_inner().expect("bytes"));
    }

    /// Columns out of turn, a slice of other rows, a batch ended early and a file finished in
    /// a batch are errors, not a file that reads wrong.
    #[test]
    fn slices_out_of_place_are_refused() {
        let batch = batches().swap_remove(1);
        let schema = batch.schema();
        let slice = |cols: std::ops::Range<usize>| batch.project(&cols.collect::<Vec<_>>()).expect("slice");
        let mut writer = IpcColumnsWriter::try_new(Vec::new(), schema.clone()).expect("writer");
        assert!(writer.write_columns(1, &slice(1..3)).is_err(), "a gap");
        writer.write_columns(0, &slice(0..2)).expect("first");
        assert!(writer.write_columns(2, &slice(0..2)).is_err(), "other types");
        assert!(writer.write_columns(2, &slice(2..3).slice(0, 3)).is_err(), "other rows");
        assert!(writer.write_columns(2, &slice(2..9.min(batch.num_columns()))).is_ok());
        let mut short = IpcColumnsWriter::try_new(Vec::new(), schema).expect("writer");
        short.write_columns(0, &slice(0..2)).expect("first");
        assert!(short.end_batch().is_err(), "a batch ended early");
        let mut open = IpcColumnsWriter::try_new(Vec::new(), batch.schema()).expect("writer");
        open.write_columns(0, &slice(0..1)).expect("first");
        assert!(open.finish().is_err(), "finished in a batch");
    }
}

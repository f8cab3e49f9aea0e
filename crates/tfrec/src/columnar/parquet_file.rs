//! A Parquet file whose footer is streamed: what [`ParquetWriter`](super::ParquetWriter) writes
//! its column chunks into. Of a chunk's metadata it keeps only the bytes the footer will hold
//! (its `ColumnChunk`, column index and offset index, encoded), so a file of a million columns
//! does not hold a million `ColumnChunkMetaData` and their page indexes until it closes, as the
//! parquet crate's `SerializedFileWriter` does. The file's bytes are that writer's, footer
//! included (the tests hold them to it).
//!
//! A row group is written as slices of its columns, each through the parquet crate's own
//! `SerializedRowGroupWriter` on a schema descriptor of that slice alone, which puts the chunks
//! in the file and gives back their metadata. The crate then encodes that metadata as the
//! footer of a file of the slice (`ParquetMetaDataWriter`), and the pieces the whole file's
//! footer needs are cut out of those bytes ([`thrift_compact`](super::thrift_compact)): each
//! chunk's `ColumnChunk` up to its page indexes' places (known only at close), its column index
//! and its offset index. The schema's elements and column orders are cut the same way, when the
//! file starts. At close the page indexes are written, then the footer, put together from those
//! pieces and each row group's totals.

use std::io::Write;
use std::sync::Arc;

use arrow_ipc::MetadataVersion;
use arrow_schema::{DataType, Schema, SchemaRef};
use base64::prelude::BASE64_STANDARD;
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter, ARROW_SCHEMA_META_KEY};
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::page_index::PageIndexBuilder;
use parquet::file::metadata::{FileMetaData, ParquetMetaDataBuilder, ParquetMetaDataWriter, RowGroupMetaData};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::page_index::offset_index::OffsetIndexMetaData;
use parquet::file::properties::{WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::{SerializedRowGroupWriter, TrackedWrite};
use parquet::schema::types::SchemaDescPtr;

use super::ipc_schema::schema_message;
use super::thrift_compact::{
    put_binary_field, put_field_header, put_integer_field, put_list_header, put_varint, Field, Reader, STOP,
    TYPE_BINARY, TYPE_I16, TYPE_I32, TYPE_I64, TYPE_LIST, TYPE_STRUCT,
};

/// The schema's fields converted to Parquet elements at a time when the file starts.
const SCHEMA_SLICE_FIELDS: usize = 1024;

/// The size of the blocks a [`Spool`] keeps its bytes in.
const SPOOL_BLOCK: usize = 1 << 20;

/// The footer's bytes gathered before they are written out.
const FOOTER_BUFFER: usize = 1 << 16;

/// Byte strings kept one after the other, in blocks of about [`SPOOL_BLOCK`] (a longer string
/// has a block of its own), each Snappy-compressed when full: a wide file's footer pieces
/// repeat themselves from column to column, and compressed they take a third of the memory.
/// Growing never copies a sealed block.
struct Spool {
    sealed: Vec<Vec<u8>>,
    open: Vec<u8>,
    block: usize,
}

impl Default for Spool {
    fn default() -> Self {
        Spool {
            sealed: Vec::new(),
            open: Vec::new(),
            block: SPOOL_BLOCK,
        }
    }
}

fn snappy(e: snap::Error) -> ParquetError {
    ParquetError::General(format!("Parquet footer pieces: {e}"))
}

impl Spool {
    fn push(&mut self, bytes: &[u8]) -> Result<()> {
        if !self.open.is_empty() && self.open.len() + bytes.len() > self.block {
            self.seal()?;
        }
        // Grown by doubling up to a block, so that a narrow file's spools stay small.
        let needed = self.open.len() + bytes.len();
        if needed > self.open.capacity() {
            let grown = (2 * self.open.capacity()).max(256).min(self.block);
            self.open.reserve_exact(grown.max(needed) - self.open.len());
        }
        self.open.extend_from_slice(bytes);
        Ok(())
    }

    fn seal(&mut self) -> Result<()> {
        // Compressed into room for the worst case, then kept at its size.
        let mut room = vec![0; snap::raw::max_compress_len(self.open.len())];
        let len = snap::raw::Encoder::new()
            .compress(&self.open, &mut room)
            .map_err(snappy)?;
        self.sealed.push(room[..len].to_vec());
        self.open.clear();
        Ok(())
    }

    /// Each block's bytes, in turn (`each` is given them decompressed).
    fn for_each_block(&self, mut each: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let mut block = Vec::new();
        for sealed in &self.sealed {
            block.resize(snap::raw::decompress_len(sealed).map_err(snappy)?, 0);
            let len = snap::raw::Decoder::new()
                .decompress(sealed, &mut block)
                .map_err(snappy)?;
            each(&block[..len])?;
        }
        each(&self.open)
    }

    /// The strings pushed, given their lengths in the order they were pushed, each given to
    /// `each` in turn.
    fn for_each_string(
        &self,
        mut lengths: impl Iterator<Item = usize>,
        mut each: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut pending = lengths.next();
        self.for_each_block(|mut block| {
            // A string never spans blocks: the block ends where the next string does not fit.
            while let Some(len) = pending.filter(|&len| len <= block.len()) {
                let (string, rest) = block.split_at(len);
                each(string)?;
                block = rest;
                pending = lengths.next();
            }
            Ok(())
        })?;
        if pending.is_some() {
            return Err(error("footer pieces missing"));
        }
        Ok(())
    }

    fn write_to(&self, out: &mut impl Write) -> Result<()> {
        self.for_each_block(|block| Ok(out.write_all(block)?))
    }
}

/// Where a length is missing (a chunk without a column index or offset index).
const NONE: u32 = u32::MAX;

/// What the footer needs of a column chunk besides its bytes in the spools.
struct ChunkEntry {
    /// The length of its `ColumnChunk` up to its page indexes' places.
    head: u32,
    /// The id of the last field in those bytes.
    head_last_field: i16,
    column_index: u32,
    offset_index: u32,
}

/// A row group's totals, as the footer gives them.
struct RowGroupTotals {
    chunks: usize,
    num_rows: Option<i64>,
    total_byte_size: i64,
    compressed_size: i64,
    file_offset: i64,
}

/// A Parquet file whose footer is streamed (see the module's documentation).
pub(crate) struct ParquetFile<W: Write> {
    out: TrackedWrite<W>,
    props: WriterPropertiesPtr,
    schema: SchemaRef,
    /// The root schema element's fields, but its number of children.
    root_element: Vec<(Field, Vec<u8>)>,
    /// The schema elements under the root, depth first, and how many.
    elements: Spool,
    element_count: usize,
    /// The leaves' column orders, and how many.
    column_orders: Spool,
    column_order_count: usize,
    column_order_kind: u8,
    row_groups: Vec<RowGroupTotals>,
    open: Option<RowGroupTotals>,
    heads: Spool,
    column_indexes: Spool,
    offset_indexes: Spool,
    chunks: Vec<ChunkEntry>,
}

/// What a slice's row group writer hands back when it closes.
type SliceClosed = (
    RowGroupMetaData,
    Vec<Option<ColumnIndexMetaData>>,
    Vec<Option<OffsetIndexMetaData>>,
    bool,
);

fn error(what: &str) -> ParquetError {
    ParquetError::General(format!("Parquet footer: {what}"))
}

/// The crate's encoding of `metadata`'s footer (page indexes first), and where in it the
/// `FileMetaData` lies.
fn encoded(
    metadata: &parquet::file::metadata::ParquetMetaData,
    props: &WriterProperties,
) -> Result<(Vec<u8>, std::ops::Range<usize>)> {
    let mut bytes = Vec::new();
    ParquetMetaDataWriter::new(&mut bytes, metadata)
        .with_write_path_in_schema(props.write_path_in_schema())
        .finish()?;
    let end = bytes.len().checked_sub(8).ok_or_else(|| error("no footer"))?;
    let len = bytes
        .get(end..end + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| error("no footer"))?;
    let start = end
        .checked_sub(len as usize)
        .ok_or_else(|| error("footer longer than its file"))?;
    Ok((bytes, start..end))
}

/// The number of rows a Parquet file's footer gives, read without decoding the rest of the
/// footer: the parquet crate's reader builds every column chunk's metadata, about a kilobyte a
/// column.
pub fn parquet_rows(file: &mut (impl std::io::Read + std::io::Seek)) -> Result<u64> {
    use std::io::SeekFrom;
    let end = file.seek(SeekFrom::End(0))?;
    let tail_at = end.checked_sub(8).ok_or_else(|| error("file shorter than a footer"))?;
    file.seek(SeekFrom::Start(tail_at))?;
    let mut tail = [0u8; 8];
    file.read_exact(&mut tail)?;
    if &tail[4..] != b"PAR1" {
        return Err(error("no Parquet magic at the end of the file"));
    }
    let len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    let start = tail_at
        .checked_sub(len)
        .ok_or_else(|| error("footer longer than its file"))?;
    file.seek(SeekFrom::Start(start))?;
    let mut footer = vec![0; usize::try_from(len).map_err(|_| error("footer too long"))?];
    file.read_exact(&mut footer)?;
    let rows = field_of(&footer, 3)?;
    u64::try_from(integer(&footer, &rows)?).map_err(|_| error("a negative number of rows"))
}

/// Whether `data_type` holds no dictionary or run-end encoded type, at any depth: the types
/// whose IPC schema needs more than [`schema_message`] gives (dictionary ids, or the crate's
/// normalization of what it stores).
fn without_dictionaries(data_type: &DataType) -> bool {
    match data_type {
        DataType::Dictionary(..) | DataType::RunEndEncoded(..) => false,
        DataType::Struct(fields) => fields.iter().all(|f| without_dictionaries(f.data_type())),
        DataType::Union(fields, _) => fields.iter().all(|(_, f)| without_dictionaries(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::Map(f, _) => without_dictionaries(f.data_type()),
        _ => true,
    }
}

/// The value of field `id` of the struct read from `bytes`.
fn field_of(bytes: &[u8], id: i16) -> Result<Field> {
    Reader::new(bytes)
        .fields()?
        .into_iter()
        .find(|field| field.id == id)
        .ok_or_else(|| error(&format!("field {id} missing")))
}

fn integer(bytes: &[u8], field: &Field) -> Result<i64> {
    Reader::new(&bytes[field.value.clone()]).integer()
}

impl<W: Write + Send> ParquetFile<W> {
    /// Starts a Parquet file of `schema` on `out` (written with `props`, without an Arrow
    /// schema in them: the file's is added at close). The schema is converted to Parquet's
    /// here, so a schema Parquet cannot hold is refused now.
    pub fn new(out: W, schema: SchemaRef, props: WriterProperties) -> Result<Self> {
        let mut out = TrackedWrite::new(out);
        out.write_all(b"PAR1")?;
        let mut file = ParquetFile {
            out,
            props: Arc::new(props),
            schema,
            root_element: Vec::new(),
            elements: Spool::default(),
            element_count: 0,
            column_orders: Spool::default(),
            column_order_count: 0,
            column_order_kind: TYPE_STRUCT,
            row_groups: Vec::new(),
            open: None,
            heads: Spool::default(),
            column_indexes: Spool::default(),
            offset_indexes: Spool::default(),
            chunks: Vec::new(),
        };
        file.take_schema()?;
        Ok(file)
    }

    /// The schema's elements and column orders, cut from the footers of files of slices of it.
    fn take_schema(&mut self) -> Result<()> {
        let converter = ArrowSchemaConverter::new().with_coerce_types(self.props.coerce_types());
        let fields = self.schema.fields();
        // An empty schema is converted too, for the crate's answer to it.
        for start in (0..fields.len().max(1)).step_by(SCHEMA_SLICE_FIELDS) {
            let end = (start + SCHEMA_SLICE_FIELDS).min(fields.len());
            let slice = Schema::new(fields[start.min(end)..end].to_vec());
            let descr = Arc::new(converter.convert(&slice)?);
            let file_metadata = self.file_metadata(0, descr);
            let (bytes, footer) = encoded(&ParquetMetaDataBuilder::new(file_metadata).build(), &self.props)?;
            let footer = &bytes[footer];
            // The schema: the root's fields kept once, the other elements as they are.
            let schema = field_of(footer, 2)?;
            let mut list = Reader::new(&footer[schema.value.clone()]);
            let (count, _) = list.list_header()?;
            let root_start = list.position();
            list.skip_struct()?;
            let root = &footer[schema.value.clone()][root_start..list.position()];
            if self.root_element.is_empty() {
                let mut reader = Reader::new(root);
                self.root_element = reader
                    .fields()?
                    .into_iter()
                    .map(|field| {
                        let value = root[field.value.clone()].to_vec();
                        (field, value)
                    })
                    .collect();
            }
            let under_root = list.position();
            for _ in 1..count {
                list.skip_struct()?;
            }
            self.elements
                .push(&footer[schema.value.clone()][under_root..list.position()])?;
            self.element_count += count.saturating_sub(1);
            // The leaves' column orders.
            let orders = field_of(footer, 7)?;
            let mut list = Reader::new(&footer[orders.value.clone()]);
            let (count, kind) = list.list_header()?;
            self.column_orders
                .push(&footer[orders.value.clone()][list.position()..])?;
            self.column_order_count += count;
            self.column_order_kind = kind;
        }
        Ok(())
    }

    fn file_metadata(&self, num_rows: i64, descr: SchemaDescPtr) -> FileMetaData {
        FileMetaData::new(
            self.props.writer_version().as_num(),
            num_rows,
            Some(self.props.created_by().to_string()),
            None,
            descr,
            None,
        )
    }

    /// Starts the next row group (ending the one open, if one is).
    pub fn start_row_group(&mut self) -> Result<()> {
        self.end_row_group()?;
        if self.row_groups.is_empty() {
            // A wide file's one row group fills the entries without doubling past them.
            self.chunks.reserve_exact(self.element_count);
        }
        self.open = Some(RowGroupTotals {
            chunks: 0,
            num_rows: None,
            total_byte_size: 0,
            compressed_size: 0,
            file_offset: self.out.bytes_written() as i64,
        });
        Ok(())
    }

    /// Writes the next columns of the open row group: `descr` describes them (and only them),
    /// and `append` appends their chunks, in order, to the row group writer it is given.
    pub fn write_slice(
        &mut self,
        descr: SchemaDescPtr,
        append: impl FnOnce(&mut SerializedRowGroupWriter<'_, W>) -> Result<()>,
    ) -> Result<()> {
        let ordinal = i32::try_from(self.row_groups.len()).map_err(|_| error("too many row groups"))?;
        let mut closed: Option<SliceClosed> = None;
        {
            let slot = &mut closed;
            let on_close: parquet::file::writer::OnCloseRowGroup<'_, W> =
                Box::new(move |_, metadata, blooms, column_indexes, offset_indexes| {
                    let blooms = blooms.iter().any(Option::is_some);
                    *slot = Some((metadata, column_indexes, offset_indexes, blooms));
                    Ok(())
                });
            let mut writer = SerializedRowGroupWriter::new(
                descr.clone(),
                Arc::clone(&self.props),
                &mut self.out,
                ordinal,
                Some(on_close),
            );
            append(&mut writer)?;
            writer.close()?;
        }
        let (metadata, column_indexes, offset_indexes, blooms) =
            closed.ok_or_else(|| error("a row group slice closed without its metadata"))?;
        if blooms {
            return Err(error("bloom filters are not written"));
        }
        self.take_slice(descr, metadata, column_indexes, offset_indexes)
    }

    /// The footer's pieces of a slice of a row group, cut from its encoding as a file's.
    fn take_slice(
        &mut self,
        descr: SchemaDescPtr,
        metadata: RowGroupMetaData,
        column_indexes: Vec<Option<ColumnIndexMetaData>>,
        offset_indexes: Vec<Option<OffsetIndexMetaData>>,
    ) -> Result<()> {
        let open = self.open.as_mut().ok_or_else(|| error("a slice outside a row group"))?;
        match open.num_rows {
            Some(rows) if rows != metadata.num_rows() => {
                return Err(error(&format!(
                    "a slice of {} rows in a row group of {rows}",
                    metadata.num_rows()
                )))
            }
            Some(_) => {}
            None => {
                open.num_rows = Some(metadata.num_rows());
                if open.chunks == 0 {
                    open.file_offset = metadata.file_offset().unwrap_or(open.file_offset);
                }
            }
        }
        open.chunks += metadata.num_columns();
        open.total_byte_size += metadata.total_byte_size();
        open.compressed_size += metadata.compressed_size();

        let columns = metadata.num_columns();
        let mut index = PageIndexBuilder::new(1, columns);
        for (column, column_index) in column_indexes.into_iter().enumerate() {
            if let Some(column_index) = column_index {
                index.put_column_index(column_index, 0, column);
            }
        }
        if !self.props.offset_index_disabled() {
            for (column, offset_index) in offset_indexes.into_iter().enumerate() {
                if let Some(offset_index) = offset_index {
                    index.put_offset_index(offset_index, 0, column);
                }
            }
        }
        let slice = ParquetMetaDataBuilder::new(self.file_metadata(metadata.num_rows(), descr))
            .add_row_group(metadata)
            .set_page_index(Some(Arc::new(index.build())))
            .build();
        let (bytes, footer) = encoded(&slice, &self.props)?;
        drop(slice);
        let meta = &bytes[footer];
        let row_groups = field_of(meta, 4)?;
        let mut list = Reader::new(&meta[row_groups.value.clone()]);
        let (count, _) = list.list_header()?;
        if count != 1 {
            return Err(error("a slice of one row group encoded as several"));
        }
        let row_group = &meta[row_groups.value.clone()][list.position()..];
        let chunks = field_of(row_group, 1)?;
        let chunks = &row_group[chunks.value.clone()];
        let mut reader = Reader::new(chunks);
        let (count, _) = reader.list_header()?;
        if count != columns {
            return Err(error("a slice's chunks encoded as another number"));
        }
        for _ in 0..count {
            let start = reader.position();
            let mut head_end = start;
            let mut head_last_field = 0;
            let mut places = [None::<i64>; 4];
            let mut last = 0;
            while let Some(field) = reader.field(&mut last)? {
                match field.id {
                    1..=3 if places.iter().all(Option::is_none) => {
                        head_end = reader.position();
                        head_last_field = field.id;
                    }
                    4..=7 => places[(field.id - 4) as usize] = Some(integer(chunks, &field)?),
                    other => return Err(error(&format!("a column chunk's field {other} in its place"))),
                }
            }
            let head = &chunks[start..head_end];
            self.heads.push(head)?;
            let index_bytes = |offset: Option<i64>, len: Option<i64>| -> Result<Option<&[u8]>> {
                match (offset, len) {
                    (Some(offset), Some(len)) => {
                        let start = usize::try_from(offset).map_err(|_| error("page index place"))?;
                        let len = usize::try_from(len).map_err(|_| error("page index length"))?;
                        bytes
                            .get(start..start.saturating_add(len))
                            .map(Some)
                            .ok_or_else(|| error("page index past its file"))
                    }
                    (None, None) => Ok(None),
                    _ => Err(error("a page index's place without its length")),
                }
            };
            let offset_index = index_bytes(places[0], places[1])?;
            let column_index = index_bytes(places[2], places[3])?;
            let length = |piece: Option<&[u8]>| -> Result<u32> {
                piece.map_or(Ok(NONE), |piece| {
                    u32::try_from(piece.len())
                        .ok()
                        .filter(|&len| len != NONE)
                        .ok_or_else(|| error("page index too long"))
                })
            };
            let entry = ChunkEntry {
                head: u32::try_from(head.len()).map_err(|_| error("column chunk too long"))?,
                head_last_field,
                column_index: length(column_index)?,
                offset_index: length(offset_index)?,
            };
            if let Some(piece) = column_index {
                self.column_indexes.push(piece)?;
            }
            if let Some(piece) = offset_index {
                self.offset_indexes.push(piece)?;
            }
            self.chunks.push(entry);
        }
        Ok(())
    }

    /// Ends the open row group, if one is.
    pub fn end_row_group(&mut self) -> Result<()> {
        if let Some(open) = self.open.take() {
            self.row_groups.push(open);
        }
        Ok(())
    }

    /// Ends the open row group, writes the page indexes and the footer (with `schema` in it,
    /// as `ArrowWriter` writes it) and hands back the output, flushed.
    pub fn close(mut self) -> Result<W> {
        self.end_row_group()?;
        let column_indexes_at = self.out.bytes_written() as i64;
        self.column_indexes.write_to(&mut self.out)?;
        self.column_indexes = Spool::default();
        let offset_indexes_at = self.out.bytes_written() as i64;
        self.offset_indexes.write_to(&mut self.out)?;
        self.offset_indexes = Spool::default();

        let footer_start = self.out.bytes_written();
        let mut buffer = Vec::with_capacity(FOOTER_BUFFER * 2);
        let props = &self.props;
        let out = &mut self.out;
        let spill = |out: &mut TrackedWrite<W>, buffer: &mut Vec<u8>, always: bool| -> Result<()> {
            if always || buffer.len() >= FOOTER_BUFFER {
                out.write_all(buffer)?;
                buffer.clear();
            }
            Ok(())
        };

        put_integer_field(&mut buffer, 0, 1, TYPE_I32, i64::from(props.writer_version().as_num()));
        // The schema: the root with its children counted over the whole schema, then the rest.
        put_field_header(&mut buffer, 1, 2, TYPE_LIST);
        put_list_header(&mut buffer, 1 + self.element_count, TYPE_STRUCT);
        let mut last = 0;
        let mut children_written = false;
        for (field, value) in &self.root_element {
            if field.id == 5 {
                put_integer_field(&mut buffer, last, 5, TYPE_I32, self.schema.fields().len() as i64);
                children_written = true;
            } else {
                put_field_header(&mut buffer, last, field.id, field.kind);
                buffer.extend_from_slice(value);
            }
            last = field.id;
        }
        if !children_written {
            return Err(error("the schema's root without its children's number"));
        }
        buffer.push(STOP);
        spill(out, &mut buffer, true)?;
        self.elements.write_to(out)?;

        let num_rows: i64 = self.row_groups.iter().map(|group| group.num_rows.unwrap_or(0)).sum();
        put_integer_field(&mut buffer, 2, 3, TYPE_I64, num_rows);
        put_field_header(&mut buffer, 3, 4, TYPE_LIST);
        put_list_header(&mut buffer, self.row_groups.len(), TYPE_STRUCT);
        let ordinals = i16::try_from(self.row_groups.len()).is_ok();
        let group_start = |buffer: &mut Vec<u8>, group: &RowGroupTotals| {
            put_field_header(buffer, 0, 1, TYPE_LIST);
            put_list_header(buffer, group.chunks, TYPE_STRUCT);
        };
        let group_end = |buffer: &mut Vec<u8>, ordinal: usize, group: &RowGroupTotals| {
            put_integer_field(buffer, 1, 2, TYPE_I64, group.total_byte_size);
            put_integer_field(buffer, 2, 3, TYPE_I64, group.num_rows.unwrap_or(0));
            put_integer_field(buffer, 3, 5, TYPE_I64, group.file_offset);
            put_integer_field(buffer, 5, 6, TYPE_I64, group.compressed_size);
            if let Some(ordinal) = i16::try_from(ordinal).ok().filter(|_| ordinals) {
                put_integer_field(buffer, 6, 7, TYPE_I16, i64::from(ordinal));
            }
            buffer.push(STOP);
        };
        // The row groups, their chunks' bytes taken in turn from the spool: each group is
        // started before its first chunk and ended after its last (or at once, without chunks).
        let mut groups = self.row_groups.iter().enumerate();
        let mut open: Option<(usize, &RowGroupTotals)> = None;
        let mut left = 0;
        let mut chunks = self.chunks.iter();
        let (mut column_index_at, mut offset_index_at) = (column_indexes_at, offset_indexes_at);
        self.heads
            .for_each_string(self.chunks.iter().map(|chunk| chunk.head as usize), |head| {
                while left == 0 {
                    if let Some((ordinal, group)) = open.take() {
                        group_end(&mut buffer, ordinal, group);
                    }
                    let (ordinal, group) = groups
                        .next()
                        .ok_or_else(|| error("column chunks past the row groups"))?;
                    group_start(&mut buffer, group);
                    open = Some((ordinal, group));
                    left = group.chunks;
                }
                left -= 1;
                let chunk = chunks.next().ok_or_else(|| error("a column chunk missing"))?;
                buffer.extend_from_slice(head);
                let mut last = chunk.head_last_field;
                if chunk.offset_index != NONE {
                    put_integer_field(&mut buffer, last, 4, TYPE_I64, offset_index_at);
                    put_integer_field(&mut buffer, 4, 5, TYPE_I32, i64::from(chunk.offset_index));
                    offset_index_at += i64::from(chunk.offset_index);
                    last = 5;
                }
                if chunk.column_index != NONE {
                    put_integer_field(&mut buffer, last, 6, TYPE_I64, column_index_at);
                    put_integer_field(&mut buffer, 6, 7, TYPE_I32, i64::from(chunk.column_index));
                    column_index_at += i64::from(chunk.column_index);
                }
                buffer.push(STOP);
                spill(out, &mut buffer, false)
            })?;
        if left != 0 {
            return Err(error("a row group's column chunks missing"));
        }
        if let Some((ordinal, group)) = open.take() {
            group_end(&mut buffer, ordinal, group);
        }
        for (ordinal, group) in groups {
            if group.chunks != 0 {
                return Err(error("a row group's column chunks missing"));
            }
            group_start(&mut buffer, group);
            group_end(&mut buffer, ordinal, group);
        }

        // The Arrow schema, as `ArrowWriter` adds it to the file's key-value metadata.
        put_field_header(&mut buffer, 4, 5, TYPE_LIST);
        if props.key_value_metadata().is_none()
            && self.schema.fields().iter().all(|f| without_dictionaries(f.data_type()))
        {
            // The message built in a buffer of its size and encoded straight to the output:
            // the crate's way holds several copies of it, which for a wide schema were most
            // of the file's peak memory.
            let message = schema_message(&self.schema, MetadataVersion::V5);
            put_list_header(&mut buffer, 1, TYPE_STRUCT);
            put_binary_field(&mut buffer, 0, 1, ARROW_SCHEMA_META_KEY.as_bytes());
            put_field_header(&mut buffer, 1, 2, TYPE_BINARY);
            let prefixed = 8 + message.len();
            put_varint(&mut buffer, 4 * prefixed.div_ceil(3) as u64);
            spill(out, &mut buffer, true)?;
            let len = u32::try_from(message.len()).map_err(|_| error("Arrow schema over 4 GB"))?;
            let mut base64 = base64::write::EncoderWriter::new(&mut *out, &BASE64_STANDARD);
            base64.write_all(&[0xff; 4])?;
            base64.write_all(&len.to_le_bytes())?;
            base64.write_all(&message)?;
            base64.finish()?;
            buffer.push(STOP);
        } else {
            let mut with_schema = WriterProperties::clone(props.as_ref());
            add_encoded_arrow_schema_to_metadata(&self.schema, &mut with_schema);
            let pairs = with_schema.key_value_metadata().map_or(&[][..], Vec::as_slice);
            put_list_header(&mut buffer, pairs.len(), TYPE_STRUCT);
            for pair in pairs {
                put_binary_field(&mut buffer, 0, 1, pair.key.as_bytes());
                if let Some(value) = &pair.value {
                    put_binary_field(&mut buffer, 1, 2, value.as_bytes());
                }
                buffer.push(STOP);
                spill(out, &mut buffer, false)?;
            }
        }
        let last = 5;
        put_binary_field(&mut buffer, last, 6, props.created_by().as_bytes());
        // Written for every file, as the crate does, even with no leaves to order.
        put_field_header(&mut buffer, 6, 7, TYPE_LIST);
        put_list_header(&mut buffer, self.column_order_count, self.column_order_kind);
        spill(out, &mut buffer, true)?;
        self.column_orders.write_to(out)?;
        buffer.push(STOP);
        spill(out, &mut buffer, true)?;
        let footer_len = u32::try_from(out.bytes_written() - footer_start).map_err(|_| error("footer over 4 GB"))?;
        out.write_all(&footer_len.to_le_bytes())?;
        out.write_all(b"PAR1")?;
        self.out.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small Parquet file as `ArrowWriter` writes it, of `rows` rows.
    fn small_file(rows: i64) -> Vec<u8> {
        use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
        let ints: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
        let texts: ArrayRef = Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("v{i}"))));
        let batch = RecordBatch::try_from_iter([("i", ints), ("s", texts)]).expect("batch");
        let mut out = Vec::new();
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).expect("writer");
        writer.write(&batch).expect("write");
        writer.close().expect("close");
        out
    }

    /// `parquet_rows` reads the row count from a file's footer, and a footer with any one byte
    /// changed, or a file cut short anywhere, is an error or a count, never a panic (the
    /// footer's length and Thrift are read as untrusted).
    #[test]
    fn a_damaged_footer_is_an_error_not_a_panic() {
        let file = small_file(7);
        assert_eq!(parquet_rows(&mut std::io::Cursor::new(&file)).expect("rows"), 7);
        let footer_len = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().expect("4 bytes"));
        let footer_start = file.len() - 8 - footer_len as usize;
        for at in footer_start..file.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut damaged = file.clone();
                damaged[at] ^= flip;
                let _ = parquet_rows(&mut std::io::Cursor::new(&damaged));
            }
        }
        for len in 0..file.len() {
            assert!(parquet_rows(&mut std::io::Cursor::new(&file[..len])).is_err());
        }
    }

    /// Strings pushed into a spool of small blocks (some longer than a block, some empty) come
    /// back as they went in, one by one and all together.
    #[test]
    fn a_spool_gives_back_what_it_was_given() {
        let strings: Vec<Vec<u8>> = (0..300usize)
            .map(|i| {
                (0..(i * 7) % 40 + usize::from(i % 50 == 0) * 100)
                    .map(|k| (i + k / 3) as u8)
                    .collect()
            })
            .collect();
        let mut spool = Spool {
            block: 64,
            ..Spool::default()
        };
        for string in &strings {
            spool.push(string).expect("push");
        }
        assert!(spool.sealed.len() > 10);
        let mut back = Vec::new();
        spool
            .for_each_string(strings.iter().map(Vec::len), |s| {
                back.push(s.to_vec());
                Ok(())
            })
            .expect("strings");
        assert_eq!(back, strings);
        let mut all = Vec::new();
        spool.write_to(&mut all).expect("write");
        assert_eq!(all, strings.concat());
        let more = strings.iter().map(Vec::len).chain([1]);
        assert!(
            spool.for_each_string(more, |_| Ok(())).is_err(),
            "a string past the end"
        );
    }
}

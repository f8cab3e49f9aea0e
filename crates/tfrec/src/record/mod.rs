//! TFRecord files: the framing, compression, streaming readers and writers, many files as one
//! stream, a random-access index, and a seeded shuffle through a bounded buffer.
//!
//! Start with [`RecordReader::open`] / [`RecordWriter::create`] for one file,
//! [`MultiFileReader`] for paths, globs and directories, [`RecordIndex`] to read record N, and
//! [`RecordFile`] / [`RecordFiles`] for random access (`pread`) to one file or many. With the
//! `remote` feature every path may be an object store URL ([`remote`]). Writers that replace
//! files do it safely through [`output`] (never over an input, under a temporary name renamed
//! when complete); sharded outputs are named by [`shard_name`].

mod compression;
mod error;
mod files;
pub mod format;
mod index;
mod inflate;
mod names;
pub mod output;
mod plan;
mod random_access;
mod reader;
pub mod remote;
mod scan;
mod seek_index;
mod shards;
mod shuffle;
pub(crate) mod spans;
mod writer;
mod zran;

pub use compression::{Compression, CompressionChoice, UnknownCompression};
pub use error::{Location, RecordError, RecordErrorKind};
pub use files::{expand_inputs, expand_inputs_allow_empty, LocatedRecord, MultiFileReader};
pub use index::{IndexEntry, IndexError, IndexedReader, RecordIndex};
pub use inflate::StreamDamage;
pub use plan::{plan_read_units, ReadUnit};
pub(crate) use random_access::KnownIndex;
pub use random_access::{RecordFile, RecordFiles, DEFAULT_CACHE_BYTES};
#[cfg(feature = "pipeline")]
pub(crate) use reader::check_deferred_crc;
pub use reader::{
    FileRecordReader, OnCorruption, OwnedRecords, ReadStats, ReaderOptions, RecordReader, TornTail,
    DEFAULT_MAX_RECORD_LEN,
};
#[cfg(feature = "npz")]
pub(crate) use remote::read_exact_at;
pub(crate) use seek_index::Span;
pub use seek_index::{Checkpoint, SeekIndex, DEFAULT_SPACING, SEEK_INDEX_VERSION};
pub use shards::{is_shard_name, shard_extension, shard_name, ShardHash};
pub use shuffle::{RecordShuffler, ShuffleBuffer};
pub use writer::{RecordWriter, WriteError, WriterOptions};

/// Record files made in memory for the unit tests of the modules here.
#[cfg(test)]
mod test_files {
    use super::{Compression, RecordWriter, WriterOptions};

    /// `records` framed and compressed as a file would hold them.
    pub(crate) fn compressed(records: &[&[u8]], compression: Compression) -> Vec<u8> {
        let mut w = RecordWriter::with_options(Vec::new(), WriterOptions::default().compression(compression));
        for r in records {
            w.write_record(r).expect("writing to memory");
        }
        w.finish().expect("writing to memory")
    }

    /// `records` framed, uncompressed.
    pub(crate) fn framed(records: &[&[u8]]) -> Vec<u8> {
        compressed(records, Compression::None)
    }
}

//! Shards of a data set: their file names (`PREFIX-00003-of-00016.tfrecord[.gz|.zz]`, as
//! TensorFlow's and Beam's sharded writers name them) and the stable hash that puts a record in
//! the shard of its key's values ([`ShardHash`]; the `example` layer feeds it a feature's
//! values, `ExampleView::shard_of`).

use std::path::{Path, PathBuf};

use super::compression::Compression;

/// The extension of a shard compressed with `compression`.
pub fn shard_extension(compression: Compression) -> &'static str {
    match compression {
        Compression::None => "tfrecord",
        Compression::Gzip => "tfrecord.gz",
        Compression::Zlib => "tfrecord.zz",
    }
}

/// The path of shard `index` of `count` in `dir`: `PREFIX-00003-of-00016.tfrecord` (with
/// `.gz` or `.zz` for a compressed shard).
pub fn shard_name(dir: &Path, prefix: &str, index: u64, count: u64, compression: Compression) -> PathBuf {
    dir.join(format!(
        "{prefix}-{index:05}-of-{count:05}.{}",
        shard_extension(compression)
    ))
}

/// Whether `name` (a file name) is one [`shard_name`] gives with `prefix`, for any index,
/// count and compression.
pub fn is_shard_name(name: &str, prefix: &str) -> bool {
    let Some(rest) = name.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    let digits = |s: &str| s.len() >= 5 && s.bytes().all(|b| b.is_ascii_digit());
    let Some((numbers, ext)) = rest.split_once('.') else {
        return false;
    };
    let Some((i, n)) = numbers.split_once("-of-") else {
        return false;
    };
    let extensions = [Compression::None, Compression::Gzip, Compression::Zlib].map(shard_extension);
    digits(i) && digits(n) && extensions.contains(&ext)
}

/// A hash of a key's values that picks a shard: CRC-32C over the values' bytes in order, so it
/// is stable across runs, platforms and versions (a record keeps its shard). Integers and
/// floats go in as their little-endian bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShardHash(u32);

impl ShardHash {
    /// The hash of no values (a record without the key).
    pub fn new() -> Self {
        ShardHash(0)
    }

    /// Adds an integer value.
    pub fn add_int64(&mut self, value: i64) {
        self.add_bytes(&value.to_le_bytes());
    }

    /// Adds a float value.
    pub fn add_float(&mut self, value: f32) {
        self.add_bytes(&value.to_le_bytes());
    }

    /// Adds a bytes value.
    pub fn add_bytes(&mut self, value: &[u8]) {
        self.0 = crc32c::crc32c_append(self.0, value);
    }

    /// The shard, of `shards` (at least 1), of the values added.
    pub fn shard(&self, shards: u64) -> u64 {
        u64::from(self.0) % shards.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_are_recognised() {
        let name = shard_name(Path::new("d"), "part", 3, 16, Compression::Gzip);
        assert_eq!(name, Path::new("d/part-00003-of-00016.tfrecord.gz"));
        let name = name.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(is_shard_name(name, "part"), "{name}");
        assert!(!is_shard_name(name, "shuffled"));
        assert!(!is_shard_name("part-1-of-2.tfrecord", "part"));
        assert!(!is_shard_name("part-00000-of-00002.json", "part"));
    }

    /// The hash is CRC-32C of the values' bytes, one after the other (so `tfrec shard
    /// --by-feature` puts a record where earlier versions put it).
    #[test]
    fn the_hash_is_crc32c_of_the_values_in_order() {
        let mut hash = ShardHash::new();
        hash.add_int64(7);
        hash.add_float(1.5);
        hash.add_bytes(b"abc");
        let mut bytes = 7i64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&1.5f32.to_le_bytes());
        bytes.extend_from_slice(b"abc");
        assert_eq!(hash.shard(1 << 40), u64::from(crc32c::crc32c(&bytes)));
        assert_eq!(ShardHash::new().shard(5), 0);
    }
}

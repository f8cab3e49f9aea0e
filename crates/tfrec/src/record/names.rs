//! What a directory's (or a bucket prefix's) expansion takes as a record file: the names left
//! out, the names that say records, and the first bytes that do when the name says nothing.

use std::path::Path;

use super::compression::Compression;
use super::format::{Header, HEADER_LEN};

/// Whether a file or directory is left out of a directory's expansion for its name: hidden
/// names (`.`), and names starting with `_`, where Hadoop and Spark jobs keep what is not data
/// (`_SUCCESS`, `_temporary/` attempts, partial or duplicate) and which pyarrow.dataset leaves
/// out too. A file named explicitly or matched by a glob is read whatever its name.
pub(super) fn is_hidden_name(name: &str) -> bool {
    name.starts_with(['.', '_'])
}

/// Whether a file's name says it holds records (`Some(true)`: a record extension, or none),
/// `None` when its first bytes must decide.
pub(super) fn looks_like_records_by_name(path: impl AsRef<Path>) -> Option<bool> {
    const RECORD_EXTENSIONS: [&str; 8] = ["tfrecord", "tfrecords", "tfrec", "gz", "gzip", "zz", "zlib", "record"];
    match path.as_ref().extension().and_then(|e| e.to_str()) {
        None => Some(true),
        Some(ext) if RECORD_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()) => Some(true),
        Some(_) => None,
    }
}

/// A valid plain header, or a gzip or zlib stream start.
pub(super) fn sniff_is_record(prefix: &[u8]) -> bool {
    let valid_header = <[u8; HEADER_LEN]>::try_from(prefix).is_ok_and(|h| Header::decode(&h).is_valid());
    valid_header || Compression::sniff(prefix) != Compression::None
}

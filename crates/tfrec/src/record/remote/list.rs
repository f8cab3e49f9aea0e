//! URLs expanded over listings, with the rules local paths follow (see
//! [`expand_inputs`](crate::record::expand_inputs)): an object is itself; a glob (`*`, `?`,
//! `[`) matches the objects listed under the prefix before its first wildcard, a wildcard not
//! crossing a `/`; a URL ending in `/`, or naming no object but a prefix of some, is a
//! directory: the record files under it.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use url::Url;

use super::super::error::RecordError;
use super::super::format::HEADER_LEN;
use super::super::names::{is_hidden_name, looks_like_records_by_name, sniff_is_record};
use super::client::{block_on, display_url, parse_url, retrying, store_for};
use super::{RemoteObject, RemoteOptions};

/// The objects `input` (a URL) names, as paths holding their URLs.
pub(crate) fn expand_url(input: &str, allow_empty: bool) -> Result<Vec<PathBuf>, RecordError> {
    let failed = |e: io::Error| RecordError::open_failed(e, Some(input.into()));
    let not_found = |msg: &str| failed(io::Error::new(io::ErrorKind::NotFound, msg.to_string()));
    // Wildcards are looked for in the key as given (a `?` would start a URL's query), and
    // never in the scheme or bucket.
    let (bucket, raw_key) = split_bucket(input);
    let http = bucket.get(..4).is_some_and(|s| s.eq_ignore_ascii_case("http"));
    if !http && raw_key.contains(['*', '?', '[']) {
        let base = parse_url(&format!("{bucket}/")).map_err(failed)?;
        let (store, _) = store_for(&base).map_err(failed)?;
        let pattern = glob::Pattern::new(raw_key).map_err(|e| not_found(&format!("bad glob pattern: {e}")))?;
        let literal = raw_key.split(['*', '?', '[']).next().unwrap_or("");
        let dir = literal.rsplit_once('/').map_or("", |(dir, _)| dir);
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..glob::MatchOptions::new()
        };
        let mut found: Vec<String> = list(&store, dir)
            .map_err(failed)?
            .into_iter()
            .map(|m| m.location.to_string())
            .filter(|name| pattern.matches_with(name, options))
            .collect();
        if found.is_empty() {
            return Err(not_found("no file matches this pattern"));
        }
        found.sort();
        return Ok(found.iter().map(|name| object_url(&base, name)).collect());
    }
    let url = parse_url(input).map_err(failed)?;
    let (store, path) = store_for(&url).map_err(failed)?;
    let key = url.path();
    if !key.ends_with('/') {
        // Retried as every read is: a server's passing error must not end the command before
        // it reads a byte, and the final error names the URL and the offset, as a read's does.
        match retrying(&RemoteOptions::from_env(), input, 0, || store.head(&path)) {
            Ok(_) => return Ok(vec![PathBuf::from(input)]),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(failed(e)),
        }
    }
    let objects = list(&store, path.as_ref()).map_err(failed)?;
    if objects.is_empty() && !key.ends_with('/') {
        return Err(not_found("no such file or directory"));
    }
    let mut found = Vec::new();
    for object in objects {
        let name = object.location.to_string();
        let below = name.strip_prefix(path.as_ref()).unwrap_or(&name);
        if below.split('/').any(is_hidden_name) {
            continue;
        }
        let url = object_url(&url, &name);
        let is_record = match looks_like_records_by_name(&name) {
            Some(by_name) => by_name,
            None => sniff_object(&url, object.size),
        };
        if is_record {
            found.push(url);
        }
    }
    if found.is_empty() && !allow_empty {
        return Err(not_found("no record files in this directory or its subdirectories"));
    }
    found.sort();
    Ok(found)
}

/// What a prefix URL holds one level down, as a directory's entries: the objects' URLs, and
/// the names of the "subdirectories" (prefixes of deeper objects). Nothing under it is no
/// error: a prefix exists as soon as an object is written below it.
pub fn list_dir(url: &str) -> io::Result<(Vec<PathBuf>, Vec<String>)> {
    let parsed = parse_url(url)?;
    let (store, path) = store_for(&parsed)?;
    let prefix = (!path.as_ref().is_empty()).then_some(&path);
    let listing = block_on(store.list_with_delimiter(prefix))?.map_err(io::Error::from)?;
    let mut objects: Vec<PathBuf> = listing
        .objects
        .iter()
        .map(|o| object_url(&parsed, o.location.as_ref()))
        .collect();
    objects.sort();
    let dirs = listing.common_prefixes.iter().map(|p| p.to_string()).collect();
    Ok((objects, dirs))
}

/// Deletes the object a URL names (a missing one is no error: the outcome is the same).
pub fn delete(url: &str) -> io::Result<()> {
    let parsed = parse_url(url)?;
    let (store, path) = store_for(&parsed)?;
    match block_on(store.delete(&path))? {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(io::Error::other(format!("{}: deleting: {e}", display_url(&parsed)))),
    }
}

/// `scheme://bucket` and the key after its `/` (empty when there is none).
fn split_bucket(input: &str) -> (&str, &str) {
    let after_scheme = input.find("://").map_or(0, |i| i + 3);
    match input[after_scheme..].find('/') {
        Some(i) => (&input[..after_scheme + i], &input[after_scheme + i + 1..]),
        None => (input, ""),
    }
}

/// Every object under `prefix` (whole path segments), at any depth.
fn list(store: &Arc<dyn ObjectStore>, prefix: &str) -> io::Result<Vec<ObjectMeta>> {
    let prefix = (!prefix.is_empty()).then(|| ObjectPath::from(prefix));
    block_on(store.list(prefix.as_ref()).try_collect::<Vec<_>>())?.map_err(io::Error::from)
}

/// The URL of object `name` in the bucket of `base`.
fn object_url(base: &Url, name: &str) -> PathBuf {
    let mut url = base.clone();
    url.set_path(name);
    url.set_query(None);
    url.set_fragment(None);
    // The user's own spelling of the scheme and bucket, credentials left out.
    PathBuf::from(display_url(&url))
}

/// Whether an object whose name says nothing starts as a record file does.
fn sniff_object(url: &std::path::Path, size: u64) -> bool {
    let Some(url) = url.to_str() else { return false };
    let Ok(object) = RemoteObject::open(url, RemoteOptions::from_env()) else {
        return false;
    };
    let mut prefix = vec![0u8; size.min(HEADER_LEN as u64) as usize];
    object.read_exact_at(&mut prefix, 0).is_ok() && sniff_is_record(&prefix)
}

//! The object store client: stores built from a URL and the environment, the runtime their
//! requests run on, and reads of an object by ranged GETs — sequential with read-ahead
//! ([`RemoteReader`]) or positional ([`RemoteObject::read_exact_at`]) — retried with backoff.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use object_store::aws::AmazonS3ConfigKey;
use object_store::azure::AzureConfigKey;
use object_store::gcp::GoogleConfigKey;
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, ObjectStoreExt, ObjectStoreScheme, RetryConfig};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use url::Url;

/// How objects are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptions {
    /// Bytes asked for by one ranged GET.
    pub block_size: usize,
    /// Ranged GETs in flight ahead of a sequential reader (at least 1).
    pub blocks_in_flight: usize,
    /// Attempts of a failed range after the first, before the read fails.
    pub retries: u32,
    /// Wait before the first retry; doubled at each next one.
    pub backoff: Duration,
}

impl Default for RemoteOptions {
    /// 8 MiB blocks, 4 in flight, 5 retries from 100 ms.
    fn default() -> Self {
        RemoteOptions {
            block_size: 8 << 20,
            blocks_in_flight: 4,
            retries: 5,
            backoff: Duration::from_millis(100),
        }
    }
}

impl RemoteOptions {
    /// The defaults, with `TFREC_REMOTE_BLOCK_SIZE` (bytes), `TFREC_REMOTE_BLOCKS` (in flight),
    /// `TFREC_REMOTE_RETRIES` and `TFREC_REMOTE_BACKOFF_MS` where set to a number.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
        let mut options = RemoteOptions::default();
        if let Some(n) = var("TFREC_REMOTE_BLOCK_SIZE").filter(|&n| n > 0) {
            options.block_size = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = var("TFREC_REMOTE_BLOCKS").filter(|&n| n > 0) {
            options.blocks_in_flight = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = var("TFREC_REMOTE_RETRIES") {
            options.retries = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(n) = var("TFREC_REMOTE_BACKOFF_MS") {
            options.backoff = Duration::from_millis(n);
        }
        options
    }
}

/// The runtime every request runs on: the readers and writers are blocking, so they hand their
/// requests to it and wait.
pub(super) fn runtime() -> io::Result<&'static Runtime> {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("tfrec-object-store")
        .enable_all()
        .build()?;
    Ok(RUNTIME.get_or_init(|| rt))
}

/// Runs `future` to completion from blocking code.
pub(super) fn block_on<F: std::future::Future>(future: F) -> io::Result<F::Output> {
    if tokio::runtime::Handle::try_current().is_ok() {
        // Blocking a runtime's own thread would stall it (tokio refuses with a panic).
        return Err(io::Error::other(
            "tfrec's object store reads are blocking: call them outside an async runtime (e.g. in spawn_blocking)",
        ));
    }
    Ok(runtime()?.block_on(future))
}

/// A URL as errors show it: no user name, password, query or fragment, where a credential or a
/// signature could be.
pub(super) fn display_url(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

/// Parses `input` as an object store URL.
pub(super) fn parse_url(input: &str) -> io::Result<Url> {
    Url::parse(input).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("not a valid URL ({e})")))
}

/// The store a URL is in (one per scheme and bucket, shared by every object read from it, so
/// connections and credentials are reused) and the object's path in it. Credentials and
/// endpoints come from the environment as each platform's SDK documents: `AWS_*` (with
/// `AWS_ENDPOINT_URL` and `AWS_ALLOW_HTTP` for an S3-compatible store, `AWS_SKIP_SIGNATURE` for
/// a public bucket), `GOOGLE_*`, `AZURE_*` (`AZURE_STORAGE_USE_EMULATOR` for Azurite).
pub(super) fn store_for(url: &Url) -> io::Result<(Arc<dyn ObjectStore>, ObjectPath)> {
    static STORES: OnceLock<Mutex<HashMap<String, Arc<dyn ObjectStore>>>> = OnceLock::new();
    let invalid = |e: &dyn fmt::Display| io::Error::new(io::ErrorKind::InvalidInput, e.to_string());
    let (scheme, path) = ObjectStoreScheme::parse(url).map_err(|e| invalid(&e))?;
    let key = url[..url::Position::BeforePath].to_string();
    let stores = STORES.get_or_init(Default::default);
    if let Some(store) = stores.lock().ok().and_then(|s| s.get(&key).cloned()) {
        return Ok((store, path));
    }
    // The client's own retries (5xx, resets, timeouts, with jitter) come first and are kept
    // short: a range that still fails is retried whole by `retrying_io`, which also covers a
    // body cut short, and whose last error names the URL and offset.
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: 3,
        retry_timeout: Duration::from_secs(60),
    };
    // A request that has not finished by then (a stalled connection) fails and is retried like
    // a reset one. The stores' own default is 30 s; `TFREC_REMOTE_TIMEOUT_MS` sets it for
    // every scheme (AWS_TIMEOUT and the like still apply to their store when it is unset).
    let timeout = std::env::var("TFREC_REMOTE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map(|ms| format!("{ms}ms"));
    // The HTTP client is built without a TLS provider of its own (see the workspace's
    // Cargo.toml) and takes the process's. One installed before us (by another library in the
    // same process) serves as well, so the error of a second install is no error.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let built: object_store::Result<Arc<dyn ObjectStore>> = match scheme {
        ObjectStoreScheme::AmazonS3 => {
            let mut builder = object_store::aws::AmazonS3Builder::from_env()
                .with_url(url.as_str())
                .with_retry(retry);
            if let Some(t) = &timeout {
                builder = builder.with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), t);
            }
            builder.build().map(|s| Arc::new(s) as _)
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            let mut builder = object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_url(url.as_str())
                .with_retry(retry);
            if let Some(t) = &timeout {
                builder = builder.with_config(GoogleConfigKey::Client(ClientConfigKey::Timeout), t);
            }
            builder.build().map(|s| Arc::new(s) as _)
        }
        ObjectStoreScheme::MicrosoftAzure => {
            let mut builder = object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_url(url.as_str())
                .with_retry(retry);
            if let Some(t) = &timeout {
                builder = builder.with_config(AzureConfigKey::Client(ClientConfigKey::Timeout), t);
            }
            builder.build().map(|s| Arc::new(s) as _)
        }
        // An `http://` URL is plain HTTP by the user's own choice.
        ObjectStoreScheme::Http => {
            let mut client = object_store::ClientOptions::new().with_allow_http(url.scheme() == "http");
            if let Some(t) = &timeout {
                client = client.with_config(ClientConfigKey::Timeout, t);
            }
            object_store::http::HttpBuilder::new()
                .with_url(key.as_str())
                .with_client_options(client)
                .with_retry(retry)
                .build()
                .map(|s| Arc::new(s) as _)
        }
        other => return Err(invalid(&format!("{other:?} URLs are not read through an object store"))),
    };
    let store = built.map_err(|e| invalid(&e))?;
    if let Ok(mut stores) = stores.lock() {
        stores.insert(key, Arc::clone(&store));
    }
    Ok((store, path))
}

/// One object, its size known: the URL, the store and the read settings shared by its readers.
#[derive(Clone)]
pub struct RemoteObject {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    /// The URL as errors show it (see `display_url`).
    url: String,
    len: u64,
    options: RemoteOptions,
}

impl fmt::Debug for RemoteObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteObject")
            .field("url", &self.inner.url)
            .field("len", &self.inner.len)
            .finish()
    }
}

impl RemoteObject {
    /// Looks the object up (one HEAD request, retried like reads) and takes its size.
    pub fn open(url: &str, options: RemoteOptions) -> io::Result<Self> {
        let parsed = parse_url(url)?;
        let (store, path) = store_for(&parsed)?;
        let shown = display_url(&parsed);
        let head = retrying(&options, &shown, 0, || {
            let store = Arc::clone(&store);
            let path = path.clone();
            async move { store.head(&path).await }
        })?;
        Ok(RemoteObject {
            inner: Arc::new(Inner {
                store,
                path,
                url: shown,
                len: head.size,
                options,
            }),
        })
    }

    /// The object's size in bytes.
    pub fn len(&self) -> u64 {
        self.inner.len
    }

    /// Whether the object is empty.
    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// The URL (without any credential).
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// A sequential reader from the start.
    pub fn reader(&self) -> RemoteReader {
        RemoteReader {
            object: self.clone(),
            pos: 0,
            current: Bytes::new(),
            current_start: 0,
            pending: VecDeque::new(),
            next_fetch: 0,
        }
    }

    /// Fills `buf` with the bytes at `offset` (one ranged GET, retried).
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&end| end <= self.inner.len)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{}: {} bytes at offset {offset} run past its end",
                        self.inner.url,
                        buf.len()
                    ),
                )
            })?;
        if buf.is_empty() {
            return Ok(());
        }
        let bytes = self.fetch(offset..end, None)?;
        buf.copy_from_slice(&bytes);
        Ok(())
    }

    /// The bytes of `range`, from a request already made (`first`) or a new one, retried until
    /// they are all there.
    fn fetch(&self, range: Range<u64>, first: Option<io::Result<Bytes>>) -> io::Result<Bytes> {
        let inner = &self.inner;
        let want = range.end - range.start;
        let checked = |bytes: Bytes| {
            if bytes.len() as u64 == want {
                Ok(bytes)
            } else {
                // A short body is a dropped connection, not the data: ask again.
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{} bytes came for a range of {want}", bytes.len()),
                ))
            }
        };
        let mut first = first.map(|r| r.and_then(checked));
        retrying_io(&inner.options, &inner.url, range.start, || {
            if let Some(result) = first.take() {
                return result;
            }
            let (store, path, range) = (Arc::clone(&inner.store), inner.path.clone(), range.clone());
            block_on(async move { store.get_range(&path, range).await })?
                .map_err(io::Error::from)
                .and_then(checked)
        })
    }

    /// Starts a ranged GET on the runtime.
    fn spawn(&self, range: Range<u64>) -> io::Result<JoinHandle<io::Result<Bytes>>> {
        let (store, path) = (Arc::clone(&self.inner.store), self.inner.path.clone());
        Ok(runtime()?.spawn(async move { store.get_range(&path, range).await.map_err(io::Error::from) }))
    }
}

/// `error` and the errors under it, each said once: object_store's own message can stop at
/// "error sending request", and what went wrong (a certificate refused, a connection reset) is
/// further down.
fn with_causes(error: &io::Error) -> String {
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}

/// Runs an async request until it succeeds, as [`retrying_io`] does.
pub(super) fn retrying<T, F, Fut>(options: &RemoteOptions, url: &str, offset: u64, mut request: F) -> io::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = object_store::Result<T>>,
{
    retrying_io(options, url, offset, || block_on(request())?.map_err(io::Error::from))
}

/// Calls `attempt` until it succeeds, `options.retries` more times at most, waiting
/// `options.backoff` (doubled each time) between them. A missing object is not retried. The
/// final error names the URL and the byte offset.
fn retrying_io<T>(
    options: &RemoteOptions,
    url: &str,
    offset: u64,
    mut attempt: impl FnMut() -> io::Result<T>,
) -> io::Result<T> {
    let mut wait = options.backoff;
    let mut tries = 0u32;
    loop {
        tries += 1;
        match attempt() {
            Ok(value) => return Ok(value),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{url}: no such object"),
                ))
            }
            Err(e) if tries > options.retries => {
                let plural = if tries == 1 { "" } else { "s" };
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{url}: reading at byte offset {offset} failed after {tries} attempt{plural}: {}",
                        with_causes(&e)
                    ),
                ));
            }
            Err(_) => {
                std::thread::sleep(wait);
                wait = wait.saturating_mul(2);
            }
        }
    }
}

/// Reads an object from start to end by ranged GETs of [`RemoteOptions::block_size`] bytes,
/// [`RemoteOptions::blocks_in_flight`] of them requested ahead of the reader, so one reader is
/// not bound by one request's latency. A failed block is asked for again (the same byte range,
/// so nothing is lost or read twice). Seeking inside the blocks held or in flight costs nothing;
/// elsewhere it drops them and starts again there.
pub struct RemoteReader {
    object: RemoteObject,
    /// The stream position.
    pos: u64,
    /// The block that holds `pos` (or the last one read) and where it starts.
    current: Bytes,
    current_start: u64,
    /// Blocks requested and not yet taken, in order, each with its range.
    pending: VecDeque<(Range<u64>, JoinHandle<io::Result<Bytes>>)>,
    /// Where the next block to request starts.
    next_fetch: u64,
}

impl fmt::Debug for RemoteReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteReader")
            .field("object", &self.object)
            .field("pos", &self.pos)
            .finish()
    }
}

impl RemoteReader {
    /// The object read.
    pub fn object(&self) -> &RemoteObject {
        &self.object
    }

    /// Makes the block holding `pos` current, requesting it and the read-ahead as needed.
    fn load_block(&mut self) -> io::Result<()> {
        let pos = self.pos;
        while self.pending.front().is_some_and(|(r, _)| r.end <= pos) {
            if let Some((_, handle)) = self.pending.pop_front() {
                handle.abort();
            }
        }
        if self.pending.front().is_none_or(|(r, _)| r.start > pos) {
            self.drop_pending();
            self.next_fetch = pos;
        }
        let options = &self.object.inner.options;
        let (len, block) = (self.object.len(), options.block_size.max(1) as u64);
        while self.pending.len() < options.blocks_in_flight.max(1) && self.next_fetch < len {
            let range = self.next_fetch..len.min(self.next_fetch.saturating_add(block));
            self.next_fetch = range.end;
            let handle = self.object.spawn(range.clone())?;
            self.pending.push_back((range, handle));
        }
        let Some((range, handle)) = self.pending.pop_front() else {
            return Err(io::Error::other("no block to read"));
        };
        let first = match block_on(handle)? {
            Ok(result) => result,
            Err(join) => Err(io::Error::other(join.to_string())),
        };
        self.current = self.object.fetch(range.clone(), Some(first))?;
        self.current_start = range.start;
        Ok(())
    }

    fn drop_pending(&mut self) {
        for (_, handle) in self.pending.drain(..) {
            handle.abort();
        }
    }
}

impl Read for RemoteReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() || self.pos >= self.object.len() {
            return Ok(0);
        }
        let end = self.current_start + self.current.len() as u64;
        if self.pos < self.current_start || self.pos >= end {
            self.load_block()?;
        }
        // `pos` lies in the current block now, so both offsets fit in it.
        let at = (self.pos - self.current_start) as usize;
        let n = buf.len().min(self.current.len() - at);
        buf[..n].copy_from_slice(&self.current[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RemoteReader {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let target = match pos {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.object.len().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek to a negative or overflowing position",
            )
        })?;
        Ok(self.pos)
    }
}

impl Drop for RemoteReader {
    fn drop(&mut self) {
        self.drop_pending();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_errors_carry_no_credentials() {
        let url = Url::parse("https://user:secret@host/b/k?X-Amz-Signature=abc#frag").unwrap();
        assert_eq!(display_url(&url), "https://host/b/k");
    }

    #[test]
    fn a_failure_after_the_retries_names_the_url_and_offset() {
        let options = RemoteOptions {
            retries: 2,
            backoff: Duration::ZERO,
            ..RemoteOptions::default()
        };
        let mut calls = 0;
        let error = retrying_io::<()>(&options, "s3://b/k", 42, || {
            calls += 1;
            Err(io::Error::other("connection reset"))
        })
        .unwrap_err();
        assert_eq!(calls, 3);
        assert_eq!(
            error.to_string(),
            "s3://b/k: reading at byte offset 42 failed after 3 attempts: connection reset"
        );
        let mut calls = 0;
        let value = retrying_io(&options, "s3://b/k", 0, || {
            calls += 1;
            if calls < 3 {
                Err(io::Error::other("503"))
            } else {
                Ok(7)
            }
        });
        assert_eq!(value.unwrap(), 7);
    }
}

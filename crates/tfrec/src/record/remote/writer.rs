//! Writing an object atomically: a multipart upload, completed by [`RemoteWriter::finish`] and
//! aborted if the writer is dropped before, so no partial object ever shows under its name.

use std::fmt;
use std::io::{self, Write};

use object_store::{ObjectStoreExt, WriteMultipart};

use super::client::{block_on, display_url, parse_url, runtime, store_for};

/// Parts sent at once; each holds `PART_SIZE` bytes, so this bounds the memory held.
const PARTS_IN_FLIGHT: usize = 4;
/// Bytes of one part (S3's smallest part but the last is 5 MiB).
const PART_SIZE: usize = 8 << 20;

/// A [`Write`] into an object named by a URL (see [`crate::record::remote`] for the schemes and
/// credentials): the object appears only at [`RemoteWriter::finish`]; dropped before, the
/// upload is aborted and nothing is left under the name.
pub struct RemoteWriter {
    upload: Option<WriteMultipart>,
    url: String,
}

impl fmt::Debug for RemoteWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteWriter").field("url", &self.url).finish()
    }
}

impl RemoteWriter {
    /// Starts the upload of the object `url` names.
    pub fn create(url: &str) -> io::Result<Self> {
        let parsed = parse_url(url)?;
        let (store, path) = store_for(&parsed)?;
        let url = display_url(&parsed);
        let upload = block_on(async move { store.put_multipart(&path).await })?
            .map_err(|e| named(&url, "starting the upload", e.into()))?;
        Ok(RemoteWriter {
            upload: Some(WriteMultipart::new_with_chunk_size(upload, PART_SIZE)),
            url,
        })
    }

    /// The URL written (without any credential).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends what is left and completes the upload: the object is there, whole, once this
    /// returns `Ok`.
    pub fn finish(mut self) -> io::Result<()> {
        let upload = self.upload.take().ok_or_else(|| io::Error::other("finished already"))?;
        block_on(upload.finish())?
            .map(drop)
            .map_err(|e| named(&self.url, "completing the upload", e.into()))
    }

    fn upload(&mut self) -> io::Result<&mut WriteMultipart> {
        self.upload.as_mut().ok_or_else(|| io::Error::other("finished already"))
    }
}

/// An error naming the URL and what was being done.
fn named(url: &str, doing: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{url}: {doing}: {e}"))
}

impl Write for RemoteWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let rt = runtime()?;
        let upload = self.upload()?;
        {
            // A full part is sent on the runtime as soon as it is complete.
            let _in_runtime = rt.enter();
            upload.write(buf);
        }
        let waited = block_on(upload.wait_for_capacity(PARTS_IN_FLIGHT))?;
        waited.map_err(|e| named(&self.url, "uploading a part", e.into()))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        // Parts are sent as they fill; the rest goes at `finish`.
        Ok(())
    }
}

impl Drop for RemoteWriter {
    fn drop(&mut self) {
        if let Some(upload) = self.upload.take() {
            // Best effort: a store that keeps an aborted upload's parts still shows no object.
            let _ = block_on(upload.abort());
        }
    }
}

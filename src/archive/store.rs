//! Archives and datasets on object storage (feature `object-store`): the same
//! readers and writers over an S3-compatible store or the local file system
//! through the [`object_store`] crate (normative text in `format/SPEC.md`,
//! section 9.8).
//!
//! * A [`StoreLocation`] names a dataset (a prefix) or an archive (an object):
//!   [`StoreLocation::from_url`] takes `s3://bucket/prefix` (credentials, region
//!   and endpoint from the usual `AWS_*` environment variables, e.g.
//!   `AWS_ENDPOINT_URL` and `AWS_ALLOW_HTTP=true` for a local server) or
//!   `file:///absolute/path`; [`StoreLocation::new`] takes any configured
//!   [`ObjectStore`].
//! * Reads are ranged: opening an archive fetches its last 64 KiB (the footer,
//!   one request); decoding a row group first fetches the column chunks it reads
//!   (one `get_ranges` call), so a range read fetches only the footers and row
//!   groups it needs. Dataset parts are opened with their size from the
//!   manifest (no `HEAD` request).
//! * Writes stage each part in a local temporary directory and upload it when it
//!   is complete (multipart above 8 MiB); the manifest is uploaded last and is
//!   the commit point: a reader sees the old dataset, none, or the new one.
//!
//! The crate's API stays synchronous: requests run on a small tokio runtime of
//! the crate's own (two worker threads, started on first use), so the calls work
//! from plain threads and from inside another async runtime alike.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_sparse::archive::store::StoreLocation;
//! use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset_to_store};
//! use arrow_sparse::{AnyTensor, CooTensor};
//! let store = Arc::new(object_store::memory::InMemory::new());
//! let at = StoreLocation::new(store, "tensors/a")?;
//! let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![8, 2], 2.0)])?.into();
//! write_dataset_to_store(&at, &t.clone().into(), &DatasetWriteOptions::new(0, 4))?;
//! let r = DatasetReader::open_store(&at, &Default::default())?;
//! assert_eq!((r.parts().len(), r.read()?.tensor), (2, t));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use std::fmt;
use std::future::Future;
use std::io::Read;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};

use crate::error::{Error, Result};

/// Bytes fetched from the end of an archive when it is opened: its footer in
/// one request (the footers the crate writes are a few KiB).
const TAIL: u64 = 64 << 10;
/// The window a sequential read fetches when its bytes were not prefetched.
const WINDOW: u64 = 64 << 10;
/// Parts up to this size are uploaded in one request, larger ones in parts of it.
const UPLOAD_CHUNK: usize = 8 << 20;

/// A dataset (a prefix) or an archive (an object) in an object store.
///
/// ```
/// use std::sync::Arc;
/// use arrow_sparse::archive::store::StoreLocation;
/// let store = Arc::new(object_store::memory::InMemory::new());
/// let at = StoreLocation::new(store, "data/matrices")?;
/// assert_eq!(at.path().as_ref(), "data/matrices");
/// assert_eq!(at.join("a.parquet")?.path().as_ref(), "data/matrices/a.parquet");
/// assert!(StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "a/../b").is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone)]
pub struct StoreLocation {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    url: String,
}

impl fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreLocation")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

/// Whether `s` is a URL (`scheme://...`) rather than a path.
///
/// ```
/// use arrow_sparse::archive::store::is_url;
/// assert!(is_url("s3://bucket/prefix"));
/// assert!(is_url("file:///tmp/ds"));
/// assert!(!is_url("/tmp/ds"));
/// assert!(!is_url("c:/data"));
/// ```
pub fn is_url(s: &str) -> bool {
    match s.split_once("://") {
        Some((scheme, _)) => {
            scheme.len() > 1
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }
        None => false,
    }
}

fn bad_url(url: &str, detail: impl Into<String>) -> Error {
    Error::Parse {
        what: format!("object store URL {url:?}"),
        detail: detail.into(),
    }
}

impl StoreLocation {
    /// `path` (a prefix or an object, `/`-separated, no `.` or `..` segments) in
    /// `store`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_sparse::archive::store::StoreLocation;
    /// let at = StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "/a/b/")?;
    /// assert_eq!(at.path().as_ref(), "a/b");
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn new(store: Arc<dyn ObjectStore>, path: &str) -> Result<Self> {
        let parsed =
            ObjectPath::parse(path.trim_matches('/')).map_err(|e| bad_url(path, e.to_string()))?;
        let url = format!("{store}/{parsed}");
        Ok(StoreLocation {
            store,
            path: parsed,
            url,
        })
    }

    /// The location a URL names, the store configured from the environment:
    ///
    /// * `s3://bucket/prefix` (also `s3a://`): an S3-compatible store, with
    ///   credentials, region and endpoint from the `AWS_*` environment variables
    ///   (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
    ///   `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, ...), as the AWS tools read them;
    /// * `file:///absolute/path`: the local file system.
    ///
    /// Any other scheme is [`Error::Unsupported`]; a malformed URL is
    /// [`Error::Parse`].
    ///
    /// ```
    /// use arrow_sparse::archive::store::StoreLocation;
    /// use arrow_sparse::Error;
    /// let dir = tempfile::tempdir()?;
    /// let url = format!("file://{}/ds", dir.path().display());
    /// let at = StoreLocation::from_url(&url)?;
    /// assert_eq!(at.url(), url);
    /// assert!(matches!(StoreLocation::from_url("ftp://host/x"), Err(Error::Unsupported(_))));
    /// assert!(matches!(StoreLocation::from_url("file://relative/x"), Err(Error::Parse { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_url(url: &str) -> Result<Self> {
        let parsed = url::Url::parse(url).map_err(|e| bad_url(url, e.to_string()))?;
        let (store, path): (Arc<dyn ObjectStore>, String) = match parsed.scheme() {
            "s3" | "s3a" => {
                let bucket = parsed
                    .host_str()
                    .filter(|b| !b.is_empty())
                    .ok_or_else(|| bad_url(url, "no bucket"))?;
                let store = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_retry(retry())
                    .build()?;
                (Arc::new(store), parsed.path().to_string())
            }
            "file" => {
                if parsed.host_str().is_some_and(|h| !h.is_empty()) {
                    return Err(bad_url(
                        url,
                        "a file URL has an absolute path and no host (file:///path)",
                    ));
                }
                let local = parsed
                    .to_file_path()
                    .map_err(|_| bad_url(url, "not a local path"))?;
                let store = object_store::local::LocalFileSystem::new();
                let path = ObjectPath::from_absolute_path(&local)
                    .map_err(|e| bad_url(url, e.to_string()))?;
                (Arc::new(store), path.to_string())
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "object store scheme {other:?} in {url:?} (s3:// and file:// are supported)"
                )));
            }
        };
        let mut at = StoreLocation::new(store, &path)?;
        at.url = url.trim_end_matches('/').to_string();
        Ok(at)
    }

    /// `rel` (a relative `/`-separated path) below this location.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_sparse::archive::store::StoreLocation;
    /// let at = StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "ds")?;
    /// assert_eq!(at.join("dim_0_block=1/part-0.parquet")?.path().as_ref(), "ds/dim_0_block=1/part-0.parquet");
    /// assert!(at.join("../other").is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn join(&self, rel: &str) -> Result<Self> {
        let mut path = self.path.clone();
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            let segment = object_store::path::PathPart::parse(part)
                .map_err(|e| bad_url(rel, e.to_string()))?;
            path = path.clone().join(segment);
        }
        Ok(StoreLocation {
            store: self.store.clone(),
            url: format!("{}/{}", self.url, rel.trim_matches('/')),
            path,
        })
    }

    /// The store.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_sparse::archive::store::StoreLocation;
    /// let at = StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "x")?;
    /// assert_eq!(at.store().to_string(), "InMemory");
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The path in the store.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_sparse::archive::store::StoreLocation;
    /// let at = StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "a/b")?;
    /// assert_eq!(at.path().parts().count(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn path(&self) -> &ObjectPath {
        &self.path
    }

    /// The URL the location was made from (or the store's name and the path),
    /// for messages.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_sparse::archive::store::StoreLocation;
    /// let at = StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "a")?;
    /// assert_eq!(at.url(), "InMemory/a");
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The object's size (a `HEAD` request).
    pub(crate) fn size(&self) -> Result<u64> {
        let (store, path) = (self.store.clone(), self.path.clone());
        block_on(async move { Ok(store.head(&path).await?.size) })
    }

    /// The whole object, refused when larger than `max` bytes.
    pub(crate) fn get_all(&self, max: u64) -> Result<Bytes> {
        let (store, path, url) = (self.store.clone(), self.path.clone(), self.url.clone());
        block_on(async move {
            let got = store.get(&path).await?;
            if got.meta.size > max {
                return Err(Error::Limit {
                    what: format!("the object {url}"),
                    needed: got.meta.size,
                    limit: max,
                });
            }
            Ok(got.bytes().await?)
        })
    }

    /// Whether the object exists.
    pub(crate) fn exists(&self) -> Result<bool> {
        match self.size() {
            Ok(_) => Ok(true),
            Err(Error::ObjectStore(object_store::Error::NotFound { .. })) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether any object lies below this prefix (one listing request).
    pub(crate) fn has_objects(&self) -> Result<bool> {
        let (store, path) = (self.store.clone(), self.path.clone());
        block_on(async move {
            let list = store.list_with_delimiter(Some(&path)).await?;
            Ok(!list.objects.is_empty() || !list.common_prefixes.is_empty())
        })
    }

    /// Write `bytes` as the object (one request).
    pub(crate) fn put(&self, bytes: Bytes) -> Result<()> {
        let (store, path) = (self.store.clone(), self.path.clone());
        block_on(async move {
            store.put(&path, PutPayload::from_bytes(bytes)).await?;
            Ok(())
        })
    }

    /// Upload the local file `local` as the object: one request up to
    /// [`UPLOAD_CHUNK`] bytes, a multipart upload in parts of that size above
    /// (at most two parts in memory).
    pub(crate) fn upload(&self, local: &std::path::Path) -> Result<()> {
        let mut file = std::fs::File::open(local)?;
        let len = file.metadata()?.len();
        if len <= UPLOAD_CHUNK as u64 {
            let mut buf = Vec::with_capacity(len as usize);
            file.read_to_end(&mut buf)?;
            return self.put(buf.into());
        }
        let (store, path) = (self.store.clone(), self.path.clone());
        block_on(async move {
            let upload = store.put_multipart(&path).await?;
            let mut w = WriteMultipart::new_with_chunk_size(upload, UPLOAD_CHUNK);
            let mut buf = vec![0u8; UPLOAD_CHUNK];
            loop {
                let n = read_full(&mut file, &mut buf)?;
                if n == 0 {
                    break;
                }
                w.wait_for_capacity(1).await?;
                w.write(&buf[..n]);
            }
            w.finish().await?;
            Ok(())
        })
    }

    /// Delete the object (one that does not exist is no error).
    pub(crate) fn delete(&self) -> Result<()> {
        let (store, path) = (self.store.clone(), self.path.clone());
        block_on(async move {
            match store.delete(&path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(e.into()),
            }
        })
    }
}

/// Retries of a failed request for stores made from URLs: four, within 20 s
/// (the `object_store` default, ten within three minutes, makes an unreachable
/// server look like a hang at the command line).
fn retry() -> object_store::RetryConfig {
    object_store::RetryConfig {
        max_retries: 4,
        retry_timeout: std::time::Duration::from_secs(20),
        ..Default::default()
    }
}

/// Fill `buf` from `r` as far as it goes: the bytes read (less than the buffer
/// only at the end).
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

/// The crate's runtime for store requests.
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> =
        OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("arrow-sparse-store")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| {
            Error::Io(std::io::Error::other(format!(
                "cannot start the object store runtime: {e}"
            )))
        })
}

/// Run `f` on the crate's runtime and wait for it on this thread (which may
/// itself be a thread of another runtime: `f` never runs on it).
pub(crate) fn block_on<T, F>(f: F) -> Result<T>
where
    F: Future<Output = Result<T>> + Send + 'static,
    T: Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime()?.spawn(async move {
        let _ = tx.send(f.await);
    });
    rx.recv().map_err(|_| {
        Error::Io(std::io::Error::other(
            "an object store request ended without an answer",
        ))
    })?
}

/// An object read by ranges, with the bytes fetched ahead (the tail, then each
/// row group's column chunks) kept until the next prefetch.
#[derive(Debug)]
pub(crate) struct RemoteObject {
    at: StoreLocation,
    len: u64,
    /// Fetched ranges: `(start, bytes)`, the tail first.
    cache: Mutex<Vec<(u64, Bytes)>>,
}

fn io_err(e: Error) -> std::io::Error {
    match e {
        Error::Io(e) => e,
        other => std::io::Error::other(other),
    }
}

impl RemoteObject {
    /// Open the object at `at`, of `len` bytes when known (else asked for), and
    /// fetch its tail.
    pub(crate) fn open(at: StoreLocation, len: Option<u64>) -> Result<Arc<Self>> {
        let len = match len {
            Some(n) => n,
            None => at.size()?,
        };
        let o = RemoteObject {
            at,
            len,
            cache: Mutex::new(Vec::new()),
        };
        let start = len.saturating_sub(TAIL);
        if len > 0 {
            let tail = o.fetch(start..len)?;
            o.lock().push((start, tail));
        }
        Ok(Arc::new(o))
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Bytes)>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn fetch(&self, range: Range<u64>) -> Result<Bytes> {
        let (store, path) = (self.at.store.clone(), self.at.path.clone());
        let want = range.end - range.start;
        let got = block_on(async move { Ok(store.get_range(&path, range).await?) })?;
        if got.len() as u64 != want {
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: asked for {want} bytes, the store sent {}",
                    self.at,
                    got.len()
                ),
            )));
        }
        Ok(got)
    }

    /// The cached bytes from `start` to the end of the fetched range holding it.
    fn cached_from(&self, start: u64) -> Option<Bytes> {
        self.lock().iter().find_map(|(s, b)| {
            (start >= *s && start - s < b.len() as u64).then(|| b.slice((start - s) as usize..))
        })
    }

    /// Bytes `start..start + length` (inside the object): from what was
    /// fetched ahead (one fetched range, or adjacent ones), else one request.
    pub(crate) fn read(&self, start: u64, length: usize) -> std::io::Result<Bytes> {
        if length == 0 {
            return Ok(Bytes::new());
        }
        let mut pieces = Vec::new();
        let (mut at, end) = (start, start + length as u64);
        while at < end {
            match self.cached_from(at) {
                Some(b) => {
                    let take = b.len().min((end - at) as usize);
                    pieces.push(b.slice(..take));
                    at += take as u64;
                }
                None => break,
            }
        }
        if at == end {
            if pieces.len() == 1 {
                return Ok(pieces.pop().unwrap_or_default());
            }
            let mut out = Vec::with_capacity(length);
            for p in pieces {
                out.extend_from_slice(&p);
            }
            return Ok(out.into());
        }
        self.fetch(start..end).map_err(io_err)
    }

    /// Fetch `ranges` in one call, replacing what the last prefetch fetched:
    /// merged where they overlap or touch (so at most the object's size), less
    /// what the tail fetched at opening holds.
    pub(crate) fn prefetch(&self, ranges: &[Range<u64>]) -> Result<()> {
        let tail_start = self.lock().first().map_or(self.len, |(s, _)| *s);
        let mut sorted: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| r.start < r.end && r.end <= self.len)
            .map(|r| r.start..r.end.min(tail_start))
            .filter(|r| r.start < r.end)
            .collect();
        sorted.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::new();
        for r in sorted {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        let (store, path) = (self.at.store.clone(), self.at.path.clone());
        let want = merged.clone();
        let got = if want.is_empty() {
            Vec::new()
        } else {
            block_on(async move { Ok(store.get_ranges(&path, &want).await?) })?
        };
        let mut cache = self.lock();
        cache.truncate(1); // keep the tail
        for (r, b) in merged.iter().zip(got) {
            if b.len() as u64 != r.end - r.start {
                return Err(Error::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("{}: a ranged read came back short", self.at),
                )));
            }
            cache.push((r.start, b));
        }
        Ok(())
    }
}

/// A sequential reader of an object from a position: the fetched-ahead bytes
/// where they hold it, else windows of [`WINDOW`] bytes.
pub(crate) struct RemoteRead {
    object: Arc<RemoteObject>,
    pos: u64,
    buf: Bytes,
}

impl RemoteRead {
    pub(crate) fn new(object: Arc<RemoteObject>, pos: u64) -> Self {
        RemoteRead {
            object,
            pos,
            buf: Bytes::new(),
        }
    }
}

impl Read for RemoteRead {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.buf.is_empty() {
            if self.pos >= self.object.len || out.is_empty() {
                return Ok(0);
            }
            self.buf = match self.object.cached_from(self.pos) {
                Some(b) => b,
                None => {
                    let end = self.object.len.min(self.pos.saturating_add(WINDOW));
                    self.object.fetch(self.pos..end).map_err(io_err)?
                }
            };
        }
        let n = out.len().min(self.buf.len());
        out[..n].copy_from_slice(&self.buf[..n]);
        self.buf = self.buf.slice(n..);
        self.pos += n as u64;
        Ok(n)
    }
}

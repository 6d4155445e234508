//! Arrow IPC: encapsulated `SparseTensor` and `Tensor` messages, streams of them,
//! and zero-copy reading from memory-mapped files.
//!
//! The layering follows arrow-ipc: a pure [`encode`] / [`decode`] core, and thin
//! [`TensorStreamWriter`], [`TensorStreamReader`] and [`MmapReader`] wrappers over it. The
//! byte layout is specified in `format/SPEC.md`.
//!
//! ```
//! use arrow_sparse::{ipc, AnyTensor, CooTensor};
//! let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
//! let meta = vec![("origin".to_string(), "docs".to_string())];
//! let encoded = ipc::encode(&t, &meta, &ipc::StreamWriteOptions::default())?; // no copy of the buffers
//! let bytes = arrow_buffer::Buffer::from(encoded.to_vec());
//! let (msg, used) = ipc::decode(&bytes, &ipc::StreamReadOptions::default())?.expect("one message");
//! assert_eq!((msg.tensor, msg.custom_metadata, used), (t, meta, bytes.len()));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

mod decode;
mod encode;
pub mod extension;
mod mmap;
mod stream;

use std::io::Write;
use std::path::Path;

use arrow_buffer::Buffer;

pub use encode::{EncodedMessage, encode};
pub use mmap::{MessageInfo, MmapReader};
pub use stream::{TensorStreamReader, TensorStreamWriter};

#[doc(hidden)]
#[allow(deprecated)]
pub use crate::compat::ipc::{
    ReadOptions, StreamReader, StreamWriter, WriteOptions, read_file, write_file,
};

use crate::error::{Error, Result};
use crate::tensor::{AnyTensor, Validation};

/// The continuation marker that starts every message (and the end-of-stream marker).
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
/// let bytes = ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?.to_vec();
/// assert_eq!(bytes[..4], ipc::CONTINUATION);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const CONTINUATION: [u8; 4] = [0xFF; 4];

/// The end-of-stream marker: continuation followed by a zero length.
///
/// ```
/// use arrow_sparse::ipc;
/// let bytes = ipc::TensorStreamWriter::new(Vec::new()).finish()?; // a stream of no message
/// assert_eq!(bytes, ipc::END_OF_STREAM);
/// assert_eq!(ipc::TensorStreamReader::new(&bytes[..]).count(), 0);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const END_OF_STREAM: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];

/// A decoded message: the tensor and the Message's `custom_metadata` key/values,
/// in order.
///
/// ```
/// use arrow_sparse::{ipc::TensorMessage, AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
/// let mut msg = TensorMessage::from(t);
/// assert!(msg.custom_metadata.is_empty());
/// msg.custom_metadata.push(("origin".into(), "docs".into()));
/// assert_eq!(msg.tensor.nnz(), 1);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMessage {
    /// The tensor.
    pub tensor: AnyTensor,
    /// The Message's `custom_metadata`, in order (empty when absent).
    pub custom_metadata: Vec<(String, String)>,
}

impl From<AnyTensor> for TensorMessage {
    fn from(tensor: AnyTensor) -> Self {
        TensorMessage {
            tensor,
            custom_metadata: Vec::new(),
        }
    }
}

/// Options for every reader.
///
/// ```
/// use arrow_sparse::{ipc, Validation};
/// let options = ipc::StreamReadOptions { max_broadcast: 1024, ..Default::default() }
///     .with_validation(Validation::Trusted)
///     .with_require_alignment(true);
/// assert_eq!((options.validation, options.require_alignment), (Validation::Trusted, true));
/// assert_eq!(options.max_metadata_len, 64 << 20);
/// ```
#[derive(Clone, Debug)]
pub struct StreamReadOptions {
    /// Full O(nnz) validation (default) or trusted structural checks only.
    pub validation: Validation,
    /// Refuse misaligned buffers with [`Error::Misaligned`] instead of copying them.
    pub require_alignment: bool,
    /// Largest flatbuffer metadata accepted, in bytes (default 64 MiB).
    pub max_metadata_len: usize,
    /// Flatbuffer verifier limit on the number of tables (default 1,000,000).
    pub max_flatbuffer_tables: usize,
    /// Largest number of times broadcast views of a DM tensor may repeat one stored
    /// entry (default 65,536), so that a tiny hostile file cannot describe an
    /// endless tensor.
    pub max_broadcast: u64,
    /// The memory reading a message may lead to, relative to its body (default
    /// [`ReadLimit::DEFAULT`](crate::limit::ReadLimit::DEFAULT)). Messages are
    /// decoded without copying; this bounds the logical entries that the
    /// broadcast views of a DM tensor make (stored entries × repeats × (8 bytes
    /// per dimension + the value)), what a dump or a conversion materializes
    /// (`format/SPEC.md` section 11).
    pub limit: crate::limit::ReadLimit,
}

impl Default for StreamReadOptions {
    fn default() -> Self {
        StreamReadOptions {
            validation: Validation::Full,
            require_alignment: false,
            max_metadata_len: 64 << 20,
            max_flatbuffer_tables: 1_000_000,
            max_broadcast: 1 << 16,
            limit: crate::limit::ReadLimit::DEFAULT,
        }
    }
}

impl StreamReadOptions {
    /// Set the validation level.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, Validation};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
    /// let bytes = arrow_buffer::Buffer::from(ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?.to_vec());
    /// // for data this crate wrote itself: O(ndim) checks instead of O(nnz)
    /// let trusted = ipc::StreamReadOptions::default().with_validation(Validation::Trusted);
    /// let (msg, _) = ipc::decode(&bytes, &trusted)?.expect("a message");
    /// assert_eq!(msg.tensor, t);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_validation(mut self, v: Validation) -> Self {
        self.validation = v;
        self
    }
    /// Require aligned buffers (error instead of copy).
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, Error};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
    /// let mut raw = vec![0u8]; // one byte in front: every buffer of the message is misaligned
    /// raw.extend(ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?.to_vec());
    /// let shifted = arrow_buffer::Buffer::from(raw).slice(1);
    /// // by default misaligned buffers are copied
    /// assert_eq!(ipc::decode(&shifted, &ipc::StreamReadOptions::default())?.expect("a message").0.tensor, t);
    /// let strict = ipc::StreamReadOptions::default().with_require_alignment(true);
    /// assert!(matches!(ipc::decode(&shifted, &strict), Err(Error::Misaligned { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_require_alignment(mut self, require: bool) -> Self {
        self.require_alignment = require;
        self
    }
    /// Set the memory limit (see [`ReadOptions::limit`]).
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// use arrow_sparse::{dims::DimMap, ipc, AnyDm, AnyTensor, DenseTensor, DmTensor, Error};
    /// // a dense [1, 1024] tensor broadcast to [2048, 1024]: 2 Mi logical entries
    /// // of 17 bytes (two coordinates and the value), 34 MiB from a 1 KiB body
    /// let dense = DenseTensor::<i8>::try_new(vec![1, 1024], vec![1; 1024].into())?;
    /// let dm: AnyDm = DmTensor::<i8>::try_new(DimMap::identity(vec![1, 1024])?, dense.into())?.into();
    /// let t = AnyTensor::Dm(dm.broadcast(&[2048, 1024])?);
    /// let bytes = arrow_buffer::Buffer::from(ipc::encode(&t, &[], &ipc::WriteOptions::default())?.to_vec());
    /// let tight = ipc::ReadOptions::default().with_limit(ReadLimit::bytes(1 << 20));
    /// assert!(matches!(ipc::decode(&bytes, &tight), Err(Error::Limit { .. })));
    /// assert_eq!(ipc::decode(&bytes, &ipc::ReadOptions::default())?.expect("a message").0.tensor, t);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_limit(mut self, limit: crate::limit::ReadLimit) -> Self {
        self.limit = limit;
        self
    }
}

/// What a CSF message puts in the `Buffer.length` of its index buffers.
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, Convert, CooTensor};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0), (vec![1, 1], 2.0)])?;
/// let t: AnyTensor = coo.to_csf::<i64, i64>(&[0, 1])?.into();
/// let padded = ipc::StreamWriteOptions { csf_lengths: ipc::CsfLengths::PaddedBytes, ..Default::default() };
/// let a = ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?.to_vec();
/// let b = ipc::encode(&t, &[], &padded)?.to_vec();
/// assert_ne!(a, b);
/// // arrow-sparse reads both
/// for bytes in [a, b] {
///     let (msg, _) = ipc::decode(&arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?.expect("a message");
///     assert_eq!(msg.tensor, t);
/// }
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CsfLengths {
    /// Element counts: what libarrow 26 writes and reads (the default).
    #[default]
    Elements,
    /// Padded byte lengths, like every other buffer (what a fixed libarrow may
    /// write). libarrow 26 misreads this; arrow-sparse reads both.
    PaddedBytes,
}

/// Options for every writer.
///
/// ```
/// use arrow_sparse::ipc::{CsfLengths, StreamWriteOptions};
/// let o = StreamWriteOptions::default();
/// assert_eq!((o.csf_lengths, o.sync), (CsfLengths::Elements, true));
/// ```
#[derive(Clone, Debug)]
pub struct StreamWriteOptions {
    /// How CSF index buffer lengths are written.
    pub csf_lengths: CsfLengths,
    /// Whether [`write_tensor_stream`] syncs the temporary file to storage
    /// (`fsync`) before renaming it over the destination, and the directory after
    /// the rename (the default): when the call returns, the new file survives an
    /// operating-system crash or power loss. Without the syncs the write is still
    /// atomic for readers and survives the writer's crash (the rename publishes a
    /// complete file), but an operating-system crash or power loss shortly after
    /// it may leave the old, an empty or a partial destination, as with writers
    /// that do not sync (numpy's `save`, scipy's `save_npz`).
    /// Streamed writers ([`TensorStreamWriter`]) leave syncing to their caller.
    pub sync: bool,
}

impl Default for StreamWriteOptions {
    fn default() -> Self {
        StreamWriteOptions {
            csf_lengths: CsfLengths::default(),
            sync: true,
        }
    }
}

impl StreamWriteOptions {
    /// Set [`sync`](Self::sync).
    ///
    /// ```
    /// use arrow_sparse::ipc::{self, StreamWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![0], 1.0)])?.into();
    /// let fast = StreamWriteOptions::default().with_sync(false);
    /// ipc::write_tensor_stream(dir.path().join("t.arrow"), &[t.into()], &fast)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_sync(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }
}

/// Decode one encapsulated message at the start of `bytes`; returns the message
/// and the number of bytes it took. The tensor's buffers are slices of `bytes`
/// (zero-copy) unless they are misaligned.
///
/// Returns `Ok(None)` at an end-of-stream marker or when `bytes` is empty.
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2], &[(vec![1], 4.0)])?.into();
/// let mut stream = Vec::new();
/// let mut w = ipc::TensorStreamWriter::new(&mut stream);
/// w.write(&t)?;
/// w.finish()?;
/// let bytes = arrow_buffer::Buffer::from(stream);
/// let (first, used) = ipc::decode(&bytes, &ipc::StreamReadOptions::default())?.expect("a message");
/// assert_eq!(first.tensor, t);
/// // what follows is the end-of-stream marker: no more messages
/// assert!(ipc::decode(&bytes.slice(used), &ipc::StreamReadOptions::default())?.is_none());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn decode(
    bytes: &Buffer,
    options: &StreamReadOptions,
) -> Result<Option<(TensorMessage, usize)>> {
    decode_at(bytes, 0, options)
}

pub(crate) fn decode_at(
    bytes: &Buffer,
    at: u64,
    options: &StreamReadOptions,
) -> Result<Option<(TensorMessage, usize)>> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let (metadata_start, metadata_len) =
        match decode::parse_prefix(bytes.as_slice(), at, options.max_metadata_len)? {
            decode::Frame::End { .. } => return Ok(None),
            decode::Frame::Message {
                metadata_start,
                metadata_len,
            } => (metadata_start, metadata_len),
        };
    let meta_end = metadata_start + metadata_len;
    let metadata = bytes
        .as_slice()
        .get(metadata_start..meta_end)
        .ok_or_else(|| {
            Error::ipc(
                Some(at),
                format!(
                    "truncated metadata: {metadata_len} bytes announced, {} present",
                    bytes.len() - metadata_start
                ),
            )
        })?;
    let (message, body_len) = decode::parse_message(metadata, at, options)?;
    let end = meta_end
        .checked_add(body_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| {
            Error::ipc(
                Some(at),
                format!(
                    "truncated body: {body_len} bytes announced, {} present",
                    bytes.len() - meta_end
                ),
            )
        })?;
    let body = bytes.slice_with_length(meta_end, body_len);
    let msg = decode::decode_parsed(message, &body, at, options)?;
    Ok(Some((msg, end)))
}

/// Encode and write a sequence of tensors (with their metadata) to `path` as a
/// stream ended by the end-of-stream marker. The file is written to a temporary
/// file in the same directory and renamed into place, so a failure never leaves a
/// partial file at `path`.
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("two.arrow");
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![0], 1.0)])?.into();
/// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![4, 5].into())?.into();
/// ipc::write_tensor_stream(&path, &[a.clone().into(), b.clone().into()], &ipc::StreamWriteOptions::default())?;
/// let back = ipc::read_tensor_stream(&path, &ipc::StreamReadOptions::default())?;
/// assert_eq!((&back[0].tensor, &back[1].tensor), (&a, &b));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_tensor_stream<'a>(
    path: impl AsRef<Path>,
    messages: impl IntoIterator<Item = &'a TensorMessage>,
    options: &StreamWriteOptions,
) -> Result<()> {
    let path = path.as_ref();
    crate::atomic::write_atomic_with(path, options.sync, |f| {
        let mut w = TensorStreamWriter::new(std::io::BufWriter::new(f)).with_options(options);
        for m in messages {
            w.write_with_metadata(&m.tensor, &m.custom_metadata)?;
        }
        w.finish()?.flush()?;
        Ok(())
    })
}

/// [`write_tensor_stream`] from an iterator of messages made one at a time
/// (blocks of a larger tensor, say): each is encoded and written as it comes,
/// so memory holds one message. The first error, from the iterator or the
/// write, ends the write and leaves nothing at `path`. Returns the number of
/// messages written.
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor, Error};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("blocks.arrow");
/// let block = |k: usize| -> arrow_sparse::Result<ipc::TensorMessage> {
///     Ok(AnyTensor::from(CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, k], k as f64)])?).into())
/// };
/// assert_eq!(ipc::write_tensor_stream_iter(&path, (0..3).map(block), &ipc::StreamWriteOptions::default())?, 3);
/// assert_eq!(ipc::read_tensor_stream(&path, &ipc::StreamReadOptions::default())?.len(), 3);
/// // an error midway: nothing is written
/// let bad = dir.path().join("bad.arrow");
/// let r = ipc::write_tensor_stream_iter(&bad, (0..5).map(block), &ipc::StreamWriteOptions::default());
/// assert!(matches!(r, Err(Error::IndexOutOfBounds { .. })) && !bad.exists());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn write_tensor_stream_iter(
    path: impl AsRef<Path>,
    messages: impl IntoIterator<Item = Result<TensorMessage>>,
    options: &StreamWriteOptions,
) -> Result<usize> {
    let path = path.as_ref();
    let mut n = 0;
    crate::atomic::write_atomic_with(path, options.sync, |f| {
        let mut w = TensorStreamWriter::new(std::io::BufWriter::new(f)).with_options(options);
        for m in messages {
            let m = m?;
            w.write_with_metadata(&m.tensor, &m.custom_metadata)?;
            n += 1;
        }
        w.finish()?.flush()?;
        Ok(())
    })?;
    Ok(n)
}

/// Read every tensor of a stream file through a memory map (zero-copy).
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("doc_read_file.arrow");
/// let t: AnyTensor = CooTensor::<f32, i32>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?.into();
/// ipc::write_tensor_stream(&path, &[t.clone().into()], &ipc::StreamWriteOptions::default())?;
/// let all = ipc::read_tensor_stream(&path, &ipc::StreamReadOptions::default())?;
/// assert_eq!((all.len(), &all[0].tensor), (1, &t));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn read_tensor_stream(
    path: impl AsRef<Path>,
    options: &StreamReadOptions,
) -> Result<Vec<TensorMessage>> {
    let path = path.as_ref();
    let reader = MmapReader::open_with(path, options)?;
    (0..reader.len()).map(|i| reader.get(i)).collect()
}

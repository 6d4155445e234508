//! [`MmapReader`]: index a stream file by scanning message headers only, then hand
//! out tensors whose buffers point into the mapping.

use std::path::Path;

use arrow_buffer::Buffer;

use super::decode::{Frame, parse_message, parse_prefix};
use super::{StreamReadOptions, TensorMessage};
use crate::buffer::map_file;
use crate::error::{Error, Result};

/// Where one message lies in the file.
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
/// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
/// let bytes = ipc::encode(&a, &[], &Default::default())?.to_vec().into_iter()
///     .chain(ipc::encode(&b, &[], &Default::default())?.to_vec())
///     .collect::<Vec<u8>>();
/// let reader = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?;
/// let info = reader.messages();
/// assert_eq!((info[0].offset, info[0].dense, info[1].dense), (0, false, true));
/// assert!(info[0].body_offset + info[0].body_len <= info[1].offset);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageInfo {
    /// Offset of the message prefix.
    pub offset: usize,
    /// Offset of the body.
    pub body_offset: usize,
    /// Body length in bytes.
    pub body_len: usize,
    /// Whether the message is a dense `Tensor` (else a `SparseTensor`).
    pub dense: bool,
}

/// A memory-mapped stream file, indexed by its message headers.
///
/// Opening maps the file and verifies every message's framing and flatbuffer
/// metadata (O(number of messages), independent of the tensors' sizes). Bodies are
/// decoded and validated on [`get`](Self::get), zero-copy: the returned tensor's
/// buffers point into the mapping (misaligned ones are copied, or refused with
/// [`StreamReadOptions::require_alignment`]).
///
/// The mapping assumes nobody modifies the file in place while it is mapped;
/// arrow-sparse's writers never do (they write a temporary file and rename it).
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("doc_mmap_reader.arrow");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
/// ipc::write_tensor_stream(&path, &[t.clone().into(), t.clone().into()], &ipc::StreamWriteOptions::default())?;
/// let reader = ipc::MmapReader::open(&path)?; // scans the message headers only
/// assert_eq!(reader.len(), 2);
/// assert_eq!(reader.get(1)?.tensor, t); // decoded and validated on demand, zero-copy
/// for msg in reader.iter() {
///     assert_eq!(msg?.tensor.nnz(), 1);
/// }
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct MmapReader {
    map: Buffer,
    messages: Vec<MessageInfo>,
    options: StreamReadOptions,
}

impl MmapReader {
    /// Map and index `path` with default options.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.arrow");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// ipc::write_tensor_stream(&path, &[t.clone().into()], &ipc::StreamWriteOptions::default())?;
    /// let reader = ipc::MmapReader::open(&path)?;
    /// assert_eq!(reader.get(0)?.tensor, t);
    /// assert!(ipc::MmapReader::open(&dir.path().join("missing.arrow")).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        Self::open_with(path, &StreamReadOptions::default())
    }

    /// Map and index `path`.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.arrow");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// ipc::write_tensor_stream(&path, &[t.clone().into()], &ipc::StreamWriteOptions::default())?;
    /// let options = ipc::StreamReadOptions::default().with_validation(arrow_sparse::Validation::Trusted);
    /// let reader = ipc::MmapReader::open_with(&path, &options)?;
    /// assert_eq!(reader.get(0)?.tensor, t);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_with(path: impl AsRef<Path>, options: &StreamReadOptions) -> Result<Self> {
        let path = path.as_ref();
        let map = map_file(path)?;
        Self::from_buffer(map, options)
    }

    /// Index messages held in memory (for example a received buffer).
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
    /// let bytes = ipc::encode(&a, &[], &Default::default())?.to_vec().into_iter()
    ///     .chain(ipc::encode(&b, &[], &Default::default())?.to_vec())
    ///     .collect::<Vec<u8>>();
    /// let reader = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?;
    /// assert_eq!(reader.len(), 2);
    /// assert_eq!(reader.get(1)?.tensor, b);
    /// // framing is checked when indexing: a cut message is an error
    /// let cut = reader.mapping().slice_with_length(0, 12);
    /// assert!(ipc::MmapReader::from_buffer(cut, &ipc::StreamReadOptions::default()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_buffer(map: Buffer, options: &StreamReadOptions) -> Result<Self> {
        let bytes = map.as_slice();
        let mut messages = Vec::new();
        let mut at = 0usize;
        while at < bytes.len() {
            let rest = &bytes[at..];
            match parse_prefix(rest, at as u64, options.max_metadata_len)? {
                Frame::End { .. } => break,
                Frame::Message {
                    metadata_start,
                    metadata_len,
                } => {
                    let meta_end = metadata_start + metadata_len;
                    let metadata = rest.get(metadata_start..meta_end).ok_or_else(|| {
                        Error::ipc(
                            Some(at as u64),
                            format!(
                                "truncated metadata: {metadata_len} bytes announced, {} present",
                                rest.len() - metadata_start
                            ),
                        )
                    })?;
                    let (message, body_len) = parse_message(metadata, at as u64, options)?;
                    let body_offset = at + meta_end;
                    let end = body_offset
                        .checked_add(body_len)
                        .filter(|&e| e <= bytes.len())
                        .ok_or_else(|| {
                            Error::ipc(
                                Some(at as u64),
                                format!(
                                    "truncated body: {body_len} bytes announced, {} present",
                                    bytes.len() - body_offset
                                ),
                            )
                        })?;
                    messages.push(MessageInfo {
                        offset: at,
                        body_offset,
                        body_len,
                        dense: message.header_type() == arrow_ipc::MessageHeader::Tensor,
                    });
                    at = end;
                }
            }
        }
        Ok(MmapReader {
            map,
            messages,
            options: options.clone(),
        })
    }

    /// Number of messages.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
    /// let bytes = ipc::encode(&a, &[], &Default::default())?.to_vec().into_iter()
    ///     .chain(ipc::encode(&b, &[], &Default::default())?.to_vec())
    ///     .collect::<Vec<u8>>();
    /// let reader = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?;
    /// assert_eq!(reader.len(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the file holds no message.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
    /// let bytes = ipc::encode(&a, &[], &Default::default())?.to_vec().into_iter()
    ///     .chain(ipc::encode(&b, &[], &Default::default())?.to_vec())
    ///     .collect::<Vec<u8>>();
    /// let reader = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?;
    /// assert!(!reader.is_empty());
    /// let none = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(ipc::END_OF_STREAM.to_vec()), &ipc::StreamReadOptions::default())?;
    /// assert!(none.is_empty());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Where each message lies.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
    /// let bytes = ipc::encode(&a, &[], &Default::default())?.to_vec().into_iter()
    ///     .chain(ipc::encode(&b, &[], &Default::default())?.to_vec())
    ///     .collect::<Vec<u8>>();
    /// let reader = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?;
    /// assert_eq!(reader.messages().len(), 2);
    /// assert!(reader.messages()[1].dense);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn messages(&self) -> &[MessageInfo] {
        &self.messages
    }

    /// The whole mapping.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
    /// let bytes = ipc::encode(&a, &[], &Default::default())?.to_vec().into_iter()
    ///     .chain(ipc::encode(&b, &[], &Default::default())?.to_vec())
    ///     .collect::<Vec<u8>>();
    /// let reader = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?;
    /// let end = reader.messages()[1].body_offset + reader.messages()[1].body_len;
    /// assert_eq!(reader.mapping().len(), end);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn mapping(&self) -> &Buffer {
        &self.map
    }

    /// Decode and validate message `i`.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
    /// let bytes = ipc::encode(&a, &[], &Default::default())?.to_vec().into_iter()
    ///     .chain(ipc::encode(&b, &[], &Default::default())?.to_vec())
    ///     .collect::<Vec<u8>>();
    /// let reader = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?;
    /// assert_eq!(reader.get(0)?.tensor, a);
    /// assert!(reader.get(2).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get(&self, i: usize) -> Result<TensorMessage> {
        let info = self.messages.get(i).ok_or_else(|| {
            Error::Unsupported(format!(
                "message {i} does not exist ({} messages)",
                self.len()
            ))
        })?;
        let end = info.body_offset + info.body_len;
        let slice = self.map.slice_with_length(info.offset, end - info.offset);
        match super::decode_at(&slice, info.offset as u64, &self.options)? {
            Some((m, _)) => Ok(m),
            None => Err(Error::ipc(Some(info.offset as u64), "message vanished")),
        }
    }

    /// Iterate over all messages, decoding each.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor, DenseTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.5)])?.into();
    /// let b: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
    /// let bytes = ipc::encode(&a, &[], &Default::default())?.to_vec().into_iter()
    ///     .chain(ipc::encode(&b, &[], &Default::default())?.to_vec())
    ///     .collect::<Vec<u8>>();
    /// let reader = ipc::MmapReader::from_buffer(arrow_buffer::Buffer::from(bytes), &ipc::StreamReadOptions::default())?;
    /// let tensors = reader.iter().map(|m| m.map(|m| m.tensor)).collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(tensors, [a, b]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Result<TensorMessage>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

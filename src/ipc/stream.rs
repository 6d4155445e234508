//! [`TensorStreamWriter`] and [`TensorStreamReader`]: sequences of messages ended by the
//! end-of-stream marker.

use std::io::{ErrorKind, Read, Write};

use arrow_buffer::{Buffer, MutableBuffer};

use super::decode::{Frame, parse_message, parse_prefix};
use super::{END_OF_STREAM, StreamReadOptions, StreamWriteOptions, TensorMessage, encode};
use crate::error::{Error, Result};
use crate::tensor::AnyTensor;

/// Writes tensors as consecutive encapsulated messages; [`finish`](Self::finish)
/// appends the end-of-stream marker.
///
/// ```
/// use arrow_sparse::{ipc::TensorStreamWriter, CooTensor};
/// let t = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![2], 7)])?;
/// let mut w = TensorStreamWriter::new(Vec::new());
/// w.write(&t.into())?;
/// let bytes = w.finish()?;
/// assert_eq!(&bytes[bytes.len() - 8..], &arrow_sparse::ipc::END_OF_STREAM);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Debug)]
pub struct TensorStreamWriter<W: Write> {
    out: W,
    options: StreamWriteOptions,
    written: u64,
}

impl<W: Write> TensorStreamWriter<W> {
    /// A writer with default options.
    ///
    /// ```
    /// use arrow_sparse::{ipc::TensorStreamWriter, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![2], 7)])?.into();
    /// let mut w = TensorStreamWriter::new(Vec::new());
    /// w.write(&t)?;
    /// assert!(w.bytes_written() > 0);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn new(out: W) -> Self {
        TensorStreamWriter {
            out,
            options: StreamWriteOptions::default(),
            written: 0,
        }
    }

    /// Replace the write options.
    ///
    /// ```
    /// use arrow_sparse::ipc::{CsfLengths, TensorStreamWriter, StreamWriteOptions};
    /// let w = TensorStreamWriter::new(Vec::new())
    ///     .with_options(&StreamWriteOptions { csf_lengths: CsfLengths::PaddedBytes, ..Default::default() });
    /// assert_eq!(w.bytes_written(), 0);
    /// ```
    pub fn with_options(mut self, options: &StreamWriteOptions) -> Self {
        self.options = options.clone();
        self
    }

    /// Write one tensor.
    ///
    /// ```
    /// use arrow_sparse::{ipc::TensorStreamWriter, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![2], 7)])?.into();
    /// let mut w = TensorStreamWriter::new(Vec::new());
    /// w.write(&t)?;
    /// w.write(&t)?;
    /// let bytes = w.finish()?;
    /// assert_eq!(arrow_sparse::ipc::TensorStreamReader::new(&bytes[..]).count(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn write(&mut self, tensor: &AnyTensor) -> Result<()> {
        self.write_with_metadata(tensor, &[])
    }

    /// Write one tensor with `custom_metadata` key/values on its Message.
    ///
    /// ```
    /// use arrow_sparse::{ipc::TensorStreamWriter, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![2], 7)])?.into();
    /// let mut w = TensorStreamWriter::new(Vec::new());
    /// w.write_with_metadata(&t, &[("unit".into(), "m/s".into())])?;
    /// let bytes = w.finish()?;
    /// let msg = arrow_sparse::ipc::TensorStreamReader::new(&bytes[..]).next().expect("a message")?;
    /// assert_eq!(msg.custom_metadata, [("unit".to_string(), "m/s".to_string())]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn write_with_metadata(
        &mut self,
        tensor: &AnyTensor,
        custom_metadata: &[(String, String)],
    ) -> Result<()> {
        let m = encode(tensor, custom_metadata, &self.options)?;
        m.write_to(&mut self.out)?;
        self.written += m.len() as u64;
        Ok(())
    }

    /// Bytes written so far.
    ///
    /// ```
    /// use arrow_sparse::{ipc::TensorStreamWriter, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![2], 7)])?.into();
    /// let mut w = TensorStreamWriter::new(Vec::new());
    /// w.write(&t)?;
    /// let n = w.bytes_written();
    /// // finish adds the 8-byte end-of-stream marker
    /// assert_eq!(w.finish()?.len() as u64, n + 8);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Write the end-of-stream marker and return the inner writer.
    ///
    /// ```
    /// use arrow_sparse::{ipc::TensorStreamWriter, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![2], 7)])?.into();
    /// let mut w = TensorStreamWriter::new(Vec::new());
    /// w.write(&t)?;
    /// let bytes: Vec<u8> = w.finish()?; // the inner writer back
    /// assert!(bytes.ends_with(&arrow_sparse::ipc::END_OF_STREAM));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn finish(mut self) -> Result<W> {
        self.out.write_all(&END_OF_STREAM)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Reads messages from any [`Read`] until the end-of-stream marker or the end of
/// input at a message boundary. Yields `Result<TensorMessage>`; after an error it
/// yields nothing more.
///
/// Memory grows only as bytes actually arrive: a header announcing a huge body is
/// read in chunks of at most 64 MiB, so a lying length costs an error, not an
/// allocation.
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<i64, i64>::from_entries(vec![3], &[(vec![0], -1)])?.into();
/// let mut bytes = Vec::new();
/// let mut w = ipc::TensorStreamWriter::new(&mut bytes);
/// w.write_with_metadata(&t, &[("k".into(), "v".into())])?;
/// w.finish()?;
/// // any `Read`: a file, a socket, a byte slice
/// let msgs: Vec<_> = ipc::TensorStreamReader::new(&bytes[..]).collect::<Result<_, _>>()?;
/// assert_eq!((&msgs[0].tensor, msgs[0].custom_metadata[0].1.as_str()), (&t, "v"));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Debug)]
pub struct TensorStreamReader<R: Read> {
    input: R,
    options: StreamReadOptions,
    offset: u64,
    done: bool,
}

const CHUNK: usize = 64 << 20;

impl<R: Read> TensorStreamReader<R> {
    /// A reader with default options.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![2], 7)])?.into();
    /// let mut w = ipc::TensorStreamWriter::new(Vec::new());
    /// w.write(&t)?;
    /// let bytes = w.finish()?;
    /// let mut r = ipc::TensorStreamReader::new(&bytes[..]);
    /// assert_eq!(r.next().expect("a message")?.tensor, t);
    /// assert!(r.next().is_none());
    /// // a truncated stream is an error, not a panic
    /// assert!(ipc::TensorStreamReader::new(&bytes[..20]).next().expect("an error").is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn new(input: R) -> Self {
        Self::with_options(input, &StreamReadOptions::default())
    }

    /// A reader with the given options.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![2], 7)])?.into();
    /// let mut w = ipc::TensorStreamWriter::new(Vec::new());
    /// w.write(&t)?;
    /// let bytes = w.finish()?;
    /// // a metadata limit smaller than this message's flatbuffer
    /// let tiny = ipc::StreamReadOptions { max_metadata_len: 8, ..Default::default() };
    /// assert!(ipc::TensorStreamReader::with_options(&bytes[..], &tiny).next().expect("an error").is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_options(input: R, options: &StreamReadOptions) -> Self {
        TensorStreamReader {
            input,
            options: options.clone(),
            offset: 0,
            done: false,
        }
    }

    /// Fill `buf` completely; `Ok(false)` if the input ended before the first byte.
    fn fill(&mut self, buf: &mut [u8]) -> Result<bool> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        if got == 0 && !buf.is_empty() {
            return Ok(false);
        }
        if got < buf.len() {
            return Err(Error::ipc(
                Some(self.offset + got as u64),
                format!("truncated stream: {} more bytes expected", buf.len() - got),
            ));
        }
        Ok(true)
    }

    /// Read exactly `len` bytes into a 64-byte aligned buffer, growing it chunk by
    /// chunk so memory follows the bytes that really arrive.
    fn read_aligned(&mut self, len: usize) -> Result<Buffer> {
        let mut buf = MutableBuffer::new(len.min(CHUNK));
        while buf.len() < len {
            let start = buf.len();
            let step = (len - start).min(CHUNK);
            buf.resize(start + step, 0);
            let at = self.offset + start as u64;
            let ok = self.fill(&mut buf.as_slice_mut()[start..start + step])?;
            if !ok {
                return Err(Error::ipc(
                    Some(at),
                    format!("truncated stream: {} more bytes expected", len - start),
                ));
            }
        }
        Ok(buf.into())
    }

    fn next_message(&mut self) -> Result<Option<TensorMessage>> {
        let at = self.offset;
        let mut first = [0u8; 4];
        if !self.fill(&mut first)? {
            return Ok(None); // a stream that just ends
        }
        let mut prefix = first.to_vec();
        if first == super::CONTINUATION {
            let mut len = [0u8; 4];
            if !self.fill(&mut len)? {
                return Err(Error::ipc(
                    Some(at + 4),
                    "truncated stream: metadata length missing",
                ));
            }
            prefix.extend_from_slice(&len);
        }
        self.offset += prefix.len() as u64;
        let metadata_len = match parse_prefix(&prefix, at, self.options.max_metadata_len)? {
            Frame::End { .. } => return Ok(None),
            Frame::Message { metadata_len, .. } => metadata_len,
        };
        let metadata = self.read_aligned(metadata_len)?;
        self.offset += metadata_len as u64;
        let (message, body_len) = parse_message(metadata.as_slice(), at, &self.options)?;
        let body = self.read_aligned(body_len)?;
        self.offset += body_len as u64;
        super::decode::decode_parsed(message, &body, at, &self.options).map(Some)
    }
}

impl<R: Read> Iterator for TensorStreamReader<R> {
    type Item = Result<TensorMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_message() {
            Ok(Some(m)) => Some(Ok(m)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod sync_tests {
    /// A stream written with and without the sync holds exactly the bytes given
    /// (pieces smaller and larger than a write buffer, at odd offsets); an
    /// unsynced write is renamed into place like a synced one and leaves no
    /// temporary file.
    #[test]
    fn synced_and_unsynced_writes_keep_every_byte_and_are_atomic() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let chunk = 8 << 20;
        let data: Vec<u8> = (0..2 * chunk + 12_345)
            .map(|i| (i * 7 + i / 4096) as u8)
            .collect();
        let cuts = [0, 3, chunk - 1, chunk + 5, 2 * chunk + 12_345];
        for sync in [true, false] {
            let dest = dir.path().join(format!("w-{sync}.bin"));
            crate::atomic::write_atomic_with(&dest, sync, |f| {
                let mut w = std::io::BufWriter::new(f);
                for c in cuts.windows(2) {
                    w.write_all(&data[c[0]..c[1]])?;
                }
                w.flush()?;
                Ok(())
            })
            .unwrap();
            assert!(std::fs::read(&dest).unwrap() == data, "sync {sync}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}

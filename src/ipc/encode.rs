//! Encoding one tensor as an encapsulated IPC message, laid out exactly as libarrow
//! 26 lays it out (flatbuffer build order, padding, buffer lengths).

use std::io::Write;

use arrow_buffer::Buffer;
use arrow_ipc as fb;
use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};

use crate::buffer::IndexBuffer;
use crate::error::{Error, Result};
use crate::tensor::dense::{column_major_strides, row_major_strides};
use crate::tensor::{AnyTensor, CompressedAxis, CoordLayout, DenseTensor};
use crate::types::{IndexType, ValueType};
use crate::with_value_type;

use super::{CONTINUATION, CsfLengths, StreamWriteOptions};

/// A message ready to be written: the framed metadata (continuation marker,
/// length, flatbuffer, padding) and the body buffers, each followed by its padding.
/// The body buffers share memory with the tensor: encoding copies no tensor data.
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
/// let msg = ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?;
/// assert_eq!(msg.header[..4], ipc::CONTINUATION);
/// assert_eq!(msg.header.len() % 8, 0);
/// // COO body: the coordinates, then the values, each padded to a multiple of 8 bytes
/// assert_eq!(msg.body.len(), 2);
/// assert_eq!(msg.body[1].0.as_slice(), 1.5f64.to_le_bytes());
/// assert!(msg.body.iter().all(|(b, pad)| (b.len() + pad) % 8 == 0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct EncodedMessage {
    /// Continuation marker, metadata length, flatbuffer `Message`, zero padding.
    pub header: Vec<u8>,
    /// Body buffers in order, each with the number of zero bytes that follow it.
    pub body: Vec<(Buffer, usize)>,
}

impl EncodedMessage {
    /// Total size in bytes once written.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
    /// let msg = ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?;
    /// let body: usize = msg.body.iter().map(|(b, pad)| b.len() + pad).sum();
    /// assert_eq!(msg.len(), msg.header.len() + body);
    /// assert_eq!(msg.len(), msg.to_vec().len());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.header.len() + self.body.iter().map(|(b, p)| b.len() + p).sum::<usize>()
    }

    /// Whether the message is empty (never true for an encoded message).
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor};
    /// // even a tensor with no entries has a header
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[])?.into();
    /// assert!(!ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?.is_empty());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Write the message to `w`.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
    /// let b: AnyTensor = CooTensor::<i32, i32>::from_entries(vec![2, 2], &[(vec![1, 0], 7)])?.into();
    /// // a stream by hand: the messages back to back, then the end-of-stream marker
    /// let mut out = Vec::new();
    /// for t in [&a, &b] {
    ///     ipc::encode(t, &[], &ipc::StreamWriteOptions::default())?.write_to(&mut out)?;
    /// }
    /// out.extend(ipc::END_OF_STREAM);
    /// let back: Vec<_> = ipc::TensorStreamReader::new(&out[..]).collect::<Result<_, _>>()?;
    /// assert_eq!((&back[0].tensor, &back[1].tensor), (&a, &b));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn write_to<W: Write + ?Sized>(&self, w: &mut W) -> Result<()> {
        const ZEROS: [u8; 64] = [0; 64];
        w.write_all(&self.header)?;
        for (b, pad) in &self.body {
            w.write_all(b.as_slice())?;
            w.write_all(&ZEROS[..*pad])?;
        }
        Ok(())
    }

    /// The whole message as one byte vector.
    ///
    /// ```
    /// use arrow_sparse::{ipc, AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
    /// let msg = ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?;
    /// let bytes = msg.to_vec();
    /// assert_eq!(bytes.len(), msg.len());
    /// let (back, used) = ipc::decode(&bytes.into(), &ipc::StreamReadOptions::default())?.expect("a message");
    /// assert_eq!((back.tensor, used), (t, msg.len()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len());
        // Writing to a Vec cannot fail.
        let _ = self.write_to(&mut v);
        v
    }
}

fn pad8(n: usize) -> usize {
    (n + 7) & !7
}

fn index_int<'a>(fbb: &mut FlatBufferBuilder<'a>, t: IndexType) -> WIPOffset<fb::Int<'a>> {
    fb::Int::create(
        fbb,
        &fb::IntArgs {
            bitWidth: (t.byte_width() * 8) as i32,
            is_signed: t.is_signed(),
        },
    )
}

fn value_type_table(
    fbb: &mut FlatBufferBuilder<'_>,
    t: ValueType,
) -> (fb::Type, WIPOffset<UnionWIPOffset>) {
    let precision = match t {
        ValueType::Float16 => Some(fb::Precision::HALF),
        ValueType::Float32 => Some(fb::Precision::SINGLE),
        ValueType::Float64 => Some(fb::Precision::DOUBLE),
        _ => None,
    };
    match (precision, t.as_index_type()) {
        (Some(p), _) => (
            fb::Type::FloatingPoint,
            fb::FloatingPoint::create(fbb, &fb::FloatingPointArgs { precision: p })
                .as_union_value(),
        ),
        (None, Some(it)) => (fb::Type::Int, index_int(fbb, it).as_union_value()),
        (None, None) => unreachable!("every value type is an integer or a float"),
    }
}

fn shape_vector<'a>(
    fbb: &mut FlatBufferBuilder<'a>,
    shape: &[usize],
    names: &[String],
) -> WIPOffset<flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<fb::TensorDim<'a>>>> {
    let dims: Vec<_> = shape
        .iter()
        .zip(names)
        .map(|(&size, name)| {
            let name = fbb.create_string(name);
            fb::TensorDim::create(
                fbb,
                &fb::TensorDimArgs {
                    size: size as i64,
                    name: Some(name),
                },
            )
        })
        .collect();
    fbb.create_vector(&dims)
}

/// Lay body buffers out back to back, each padded to 8 bytes.
struct Body {
    buffers: Vec<(Buffer, usize)>,
    offset: usize,
}

impl Body {
    fn new() -> Self {
        Body {
            buffers: Vec::new(),
            offset: 0,
        }
    }
    /// Append a buffer; returns (offset, padded length).
    fn push(&mut self, b: &Buffer) -> (i64, i64) {
        let len = b.len();
        let padded = pad8(len);
        let at = self.offset;
        self.buffers.push((b.clone(), padded - len));
        self.offset += padded;
        (at as i64, padded as i64)
    }
}

fn finish(
    mut fbb: FlatBufferBuilder<'_>,
    header_type: fb::MessageHeader,
    header: WIPOffset<UnionWIPOffset>,
    body_length: usize,
    custom_metadata: &[(String, String)],
    alignment: usize,
    body: Vec<(Buffer, usize)>,
) -> EncodedMessage {
    let custom = (!custom_metadata.is_empty()).then(|| {
        let kvs: Vec<_> = custom_metadata
            .iter()
            .map(|(k, v)| {
                let key = fbb.create_string(k);
                let value = fbb.create_string(v);
                fb::KeyValue::create(
                    &mut fbb,
                    &fb::KeyValueArgs {
                        key: Some(key),
                        value: Some(value),
                    },
                )
            })
            .collect();
        fbb.create_vector(&kvs)
    });
    let message = fb::Message::create(
        &mut fbb,
        &fb::MessageArgs {
            version: fb::MetadataVersion::V5,
            header_type,
            header: Some(header),
            bodyLength: body_length as i64,
            custom_metadata: custom,
        },
    );
    fbb.finish(message, None);
    let data = fbb.finished_data();
    let total = (8 + data.len()).div_ceil(alignment) * alignment;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&CONTINUATION);
    out.extend_from_slice(&((total - 8) as i32).to_le_bytes());
    out.extend_from_slice(data);
    out.resize(total, 0);
    EncodedMessage { header: out, body }
}

/// Encode one tensor as an encapsulated `SparseTensor` (or, for a dense tensor,
/// `Tensor`) message, with `custom_metadata` in the Message's key/value list.
/// GCS and DM tensors are written as their storage's message plus extension
/// metadata (see `format/SPEC.md`).
///
/// Refuses uint64 index buffers (libarrow aborts on them) and metadata larger than
/// an int32 length can frame.
///
/// ```
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<u8, i32>::from_entries(vec![4, 4], &[(vec![3, 3], 1)])?.into();
/// let encoded = ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())?;
/// let mut out = Vec::new();
/// encoded.write_to(&mut out)?;
/// assert_eq!((out.len(), out.len() % 8), (encoded.len(), 0)); // 8-byte aligned message
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn encode(
    tensor: &AnyTensor,
    custom_metadata: &[(String, String)],
    options: &StreamWriteOptions,
) -> Result<EncodedMessage> {
    let (plain, meta) = super::extension::lower(tensor, custom_metadata)?;
    let (tensor, custom_metadata) = (&plain, meta.as_slice());
    if let Some(t) = tensor.index_type() {
        t.check_writable()?;
    }
    if let Some(t) = tensor.indptr_type() {
        t.check_writable()?;
    }
    let mut fbb = FlatBufferBuilder::new();
    let (type_type, type_) = value_type_table(&mut fbb, tensor.value_type());
    let shape = shape_vector(&mut fbb, tensor.shape(), tensor.dim_names());
    let mut body = Body::new();

    if let AnyTensor::Dense(d) = tensor {
        return encode_dense(fbb, d, type_type, type_, shape, custom_metadata);
    }

    let (index_type, index) = match tensor {
        AnyTensor::Coo(t) => {
            let it = t.index_type();
            let w = it.byte_width() as i64;
            let int = index_int(&mut fbb, it);
            let (nnz, ndim) = (t.nnz() as i64, t.shape().len() as i64);
            let strides: [i64; 2] = if nnz == 0 {
                [w, w]
            } else {
                match t.layout() {
                    CoordLayout::RowMajor => [w * ndim, w],
                    CoordLayout::ColumnMajor => [w, w * nnz],
                }
            };
            let strides = fbb.create_vector(&strides);
            let (off, len) = body.push(t.coords().inner());
            let buf = fb::Buffer::new(off, len);
            let coo = fb::SparseTensorIndexCOO::create(
                &mut fbb,
                &fb::SparseTensorIndexCOOArgs {
                    indicesType: Some(int),
                    indicesStrides: Some(strides),
                    indicesBuffer: Some(&buf),
                    isCanonical: t.is_canonical(),
                },
            );
            (
                fb::SparseTensorIndex::SparseTensorIndexCOO,
                coo.as_union_value(),
            )
        }
        AnyTensor::Csx(t) => {
            let indptr_int = index_int(&mut fbb, t.indptr_type());
            let (poff, plen) = body.push(t.indptr().inner());
            let indptr_buf = fb::Buffer::new(poff, plen);
            let indices_int = index_int(&mut fbb, t.index_type());
            let (ioff, ilen) = body.push(t.indices().inner());
            let indices_buf = fb::Buffer::new(ioff, ilen);
            let axis = match t.axis() {
                CompressedAxis::Row => fb::SparseMatrixCompressedAxis::Row,
                CompressedAxis::Column => fb::SparseMatrixCompressedAxis::Column,
            };
            let csx = fb::SparseMatrixIndexCSX::create(
                &mut fbb,
                &fb::SparseMatrixIndexCSXArgs {
                    compressedAxis: axis,
                    indptrType: Some(indptr_int),
                    indptrBuffer: Some(&indptr_buf),
                    indicesType: Some(indices_int),
                    indicesBuffer: Some(&indices_buf),
                },
            );
            (
                fb::SparseTensorIndex::SparseMatrixIndexCSX,
                csx.as_union_value(),
            )
        }
        AnyTensor::Csf(t) => {
            let indptr_int = index_int(&mut fbb, t.indptr_type());
            let indices_int = index_int(&mut fbb, t.index_type());
            let entry = |b: &IndexBuffer, body: &mut Body| {
                let (off, padded) = body.push(b.inner());
                let len = match options.csf_lengths {
                    CsfLengths::Elements => b.len() as i64,
                    CsfLengths::PaddedBytes => padded,
                };
                fb::Buffer::new(off, len)
            };
            let indptr: Vec<fb::Buffer> = t.indptr().iter().map(|b| entry(b, &mut body)).collect();
            let indices: Vec<fb::Buffer> =
                t.indices().iter().map(|b| entry(b, &mut body)).collect();
            let indices_v = fbb.create_vector(&indices);
            let indptr_v = fbb.create_vector(&indptr);
            let order: Vec<i32> = t.axis_order().iter().map(|&a| a as i32).collect();
            let order = fbb.create_vector(&order);
            let csf = fb::SparseTensorIndexCSF::create(
                &mut fbb,
                &fb::SparseTensorIndexCSFArgs {
                    indptrType: Some(indptr_int),
                    indptrBuffers: Some(indptr_v),
                    indicesType: Some(indices_int),
                    indicesBuffers: Some(indices_v),
                    axisOrder: Some(order),
                },
            );
            (
                fb::SparseTensorIndex::SparseTensorIndexCSF,
                csf.as_union_value(),
            )
        }
        AnyTensor::Dense(_) => unreachable!("handled above"),
        _ => {
            return Err(Error::Unsupported(format!(
                "{} tensors have no plain message",
                tensor.format()
            )));
        }
    };
    let values = match tensor {
        AnyTensor::Coo(t) => t.values().inner(),
        AnyTensor::Csx(t) => t.values().inner(),
        AnyTensor::Csf(t) => t.values().inner(),
        _ => unreachable!("the index match above returned for every other format"),
    };
    let (doff, dlen) = body.push(values);
    let data = fb::Buffer::new(doff, dlen);
    let st = fb::SparseTensor::create(
        &mut fbb,
        &fb::SparseTensorArgs {
            type_type,
            type_: Some(type_),
            shape: Some(shape),
            non_zero_length: tensor.nnz() as i64,
            sparseIndex_type: index_type,
            sparseIndex: Some(index),
            data: Some(&data),
        },
    );
    let body_length = body.offset;
    Ok(finish(
        fbb,
        fb::MessageHeader::SparseTensor,
        st.as_union_value(),
        body_length,
        custom_metadata,
        8,
        body.buffers,
    ))
}

/// Dense tensors: metadata padded to 64 bytes, body unpadded, as libarrow's
/// `WriteTensor`. Row- or column-major contiguous tensors are written as they are:
/// the body is the `size` elements from the tensor's offset, a slice of its
/// buffer (no copy). Other strides (gaps, broadcasts, and every negative stride,
/// which libarrow's `Tensor` rejects) are first copied into row-major order.
fn encode_dense<'a>(
    mut fbb: FlatBufferBuilder<'a>,
    d: &crate::tensor::AnyDense,
    type_type: fb::Type,
    type_: WIPOffset<UnionWIPOffset>,
    shape: WIPOffset<flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<fb::TensorDim<'a>>>>,
    custom_metadata: &[(String, String)],
) -> Result<EncodedMessage> {
    let w = d.value_type().byte_width();
    let contiguous = d.is_row_major() || d.is_column_major();
    let d = if contiguous {
        d.clone()
    } else {
        with_value_type!(d.value_type(), V => {
            let t: DenseTensor<V> = d.downcast::<V>().ok_or_else(|| Error::Unsupported("dense downcast".into()))?;
            crate::tensor::AnyDense::from(crate::Convert::to_dense(&t)?)
        })
    };
    let size = d.size();
    let strides: Vec<i64> = if size == 0 {
        vec![w as i64; d.shape().len()]
    } else {
        // libarrow writes a tensor's own strides when they are exactly its
        // row- or column-major ones (else it copies it row-major). Along an
        // extent of 1 a stride is never used and may be anything (a view's):
        // such a tensor, packed all the same, gets the exact packed strides it
        // matches, so that libarrow re-encodes the message as it is.
        let (rm, cm) = (
            row_major_strides(d.shape()),
            column_major_strides(d.shape()),
        );
        let exactly = |p: &[usize]| {
            d.strides()
                .iter()
                .zip(p)
                .all(|(&s, &q)| usize::try_from(s) == Ok(q))
        };
        let packed = if exactly(&rm) || (!exactly(&cm) && d.is_row_major()) {
            rm
        } else {
            cm
        };
        packed
            .iter()
            .map(|&s| {
                s.checked_mul(w)
                    .and_then(|b| i64::try_from(b).ok())
                    .ok_or_else(|| Error::overflow("dense stride", s.to_string(), "int64 bytes"))
            })
            .collect::<Result<_>>()?
    };
    let strides = fbb.create_vector(&strides);
    let body_length = size * w;
    let data = fb::Buffer::new(0, body_length as i64);
    let t = fb::Tensor::create(
        &mut fbb,
        &fb::TensorArgs {
            type_type,
            type_: Some(type_),
            shape: Some(shape),
            strides: Some(strides),
            data: Some(&data),
        },
    );
    // the packed elements from the offset (checked by the tensor's constructor)
    let values = d
        .values()
        .slice(d.offset(), size)
        .ok_or_else(|| Error::invariant("dense values", None, "elements outside the buffer"))?
        .inner()
        .clone();
    let body = if body_length > 0 {
        vec![(values, 0)]
    } else {
        vec![]
    };
    Ok(finish(
        fbb,
        fb::MessageHeader::Tensor,
        t.as_union_value(),
        body_length,
        custom_metadata,
        64,
        body,
    ))
}

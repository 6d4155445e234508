//! Decoding one encapsulated IPC message into an [`AnyTensor`]. Every decoded
//! tensor goes through its format's validating constructor.

use crate::tensor::{EntryOrder, TensorOptions};
use arrow_buffer::Buffer;
use arrow_ipc as fb;

use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::error::{Error, Result};
use crate::tensor::{AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyTensor, CompressedAxis, CoordLayout};
use crate::types::{IndexType, ValueType};

use super::{CONTINUATION, StreamReadOptions, TensorMessage};

/// Where a message's parts lie, as read from its prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// End-of-stream marker (8 bytes, or 4 in the legacy format).
    End {
        /// Bytes the marker takes.
        len: usize,
    },
    /// A message: the flatbuffer at `metadata_start..metadata_start + metadata_len`.
    Message {
        metadata_start: usize,
        metadata_len: usize,
    },
}

/// Parse the 8-byte (or legacy 4-byte) prefix at the start of `bytes`.
pub(crate) fn parse_prefix(bytes: &[u8], at: u64, max_metadata_len: usize) -> Result<Frame> {
    let word = |i: usize| -> Result<[u8; 4]> {
        bytes
            .get(i..i + 4)
            .map(|s| [s[0], s[1], s[2], s[3]])
            .ok_or_else(|| Error::ipc(Some(at), "truncated message prefix"))
    };
    let first = word(0)?;
    let (len, prefix) = if first == CONTINUATION {
        (i32::from_le_bytes(word(4)?), 8)
    } else {
        (i32::from_le_bytes(first), 4)
    };
    if len == 0 {
        return Ok(Frame::End { len: prefix });
    }
    if len < 0 {
        return Err(Error::ipc(
            Some(at),
            format!("negative metadata length {len}"),
        ));
    }
    let len = len as usize;
    if len > max_metadata_len {
        return Err(Error::ipc(
            Some(at),
            format!("metadata length {len} exceeds the limit of {max_metadata_len} bytes"),
        ));
    }
    Ok(Frame::Message {
        metadata_start: prefix,
        metadata_len: len,
    })
}

/// Verify and parse the flatbuffer `Message`, returning it and its body length.
pub(crate) fn parse_message<'a>(
    metadata: &'a [u8],
    at: u64,
    options: &StreamReadOptions,
) -> Result<(fb::Message<'a>, usize)> {
    let verifier = flatbuffers::VerifierOptions {
        max_depth: 64,
        max_tables: options.max_flatbuffer_tables,
        max_apparent_size: 1 << 31,
        ignore_missing_null_terminator: false,
    };
    let message = fb::root_as_message_with_opts(&verifier, metadata).map_err(|e| {
        // The verifier's message spans several lines (error, then one line per
        // enclosing field, then blank lines): keep errors on one line.
        let detail = e
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        Error::ipc(Some(at), format!("invalid flatbuffer Message: {detail}"))
    })?;
    match message.version() {
        fb::MetadataVersion::V4 | fb::MetadataVersion::V5 => {}
        v => {
            return Err(Error::ipc(
                Some(at),
                format!(
                    "unsupported metadata version {:?} (only V4 and V5 are read)",
                    v
                ),
            ));
        }
    }
    let body_len = message.bodyLength();
    if body_len < 0 {
        return Err(Error::ipc(
            Some(at),
            format!("negative body length {body_len}"),
        ));
    }
    match message.header_type() {
        fb::MessageHeader::SparseTensor | fb::MessageHeader::Tensor => {}
        other => {
            return Err(Error::ipc(
                Some(at),
                format!("message header is {other:?}, expected SparseTensor or Tensor"),
            ));
        }
    }
    let body_len = usize::try_from(body_len)
        .map_err(|_| Error::ipc(Some(at), "body length does not fit usize"))?;
    Ok((message, body_len))
}

/// Decode a parsed message whose body is `body`.
pub(crate) fn decode_parsed(
    message: fb::Message<'_>,
    body: &Buffer,
    at: u64,
    options: &StreamReadOptions,
) -> Result<TensorMessage> {
    let custom_metadata = message
        .custom_metadata()
        .map(|kvs| {
            kvs.iter()
                .map(|kv| {
                    (
                        kv.key().unwrap_or_default().to_string(),
                        kv.value().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let err_at = |e: Error| match e {
        Error::Ipc {
            offset: None,
            detail,
        } => Error::Ipc {
            offset: Some(at),
            detail,
        },
        other => other,
    };
    let tensor = if let Some(st) = message.header_as_sparse_tensor() {
        decode_sparse(st, body, options).map_err(err_at)?
    } else if let Some(t) = message.header_as_tensor() {
        decode_dense(t, body, options).map_err(err_at)?
    } else {
        return Err(Error::ipc(Some(at), "message has no tensor header"));
    };
    let (tensor, custom_metadata) = super::extension::raise(
        tensor,
        custom_metadata,
        options.max_broadcast,
        options.limit.budget(body.len() as u64),
        options.validation,
    )
    .map_err(err_at)?;
    Ok(TensorMessage {
        tensor,
        custom_metadata,
    })
}

fn value_type(
    type_type: fb::Type,
    int: Option<fb::Int<'_>>,
    float: Option<fb::FloatingPoint<'_>>,
) -> Result<ValueType> {
    match type_type {
        fb::Type::Int => {
            let i = int.ok_or_else(|| Error::ipc(None, "missing Int type table"))?;
            let it = IndexType::from_bits(i.bitWidth(), i.is_signed()).ok_or_else(|| {
                Error::ipc(None, format!("unsupported integer width {}", i.bitWidth()))
            })?;
            Ok(match it {
                IndexType::Int8 => ValueType::Int8,
                IndexType::Int16 => ValueType::Int16,
                IndexType::Int32 => ValueType::Int32,
                IndexType::Int64 => ValueType::Int64,
                IndexType::UInt8 => ValueType::UInt8,
                IndexType::UInt16 => ValueType::UInt16,
                IndexType::UInt32 => ValueType::UInt32,
                IndexType::UInt64 => ValueType::UInt64,
            })
        }
        fb::Type::FloatingPoint => {
            let f = float.ok_or_else(|| Error::ipc(None, "missing FloatingPoint type table"))?;
            match f.precision() {
                fb::Precision::HALF => Ok(ValueType::Float16),
                fb::Precision::SINGLE => Ok(ValueType::Float32),
                fb::Precision::DOUBLE => Ok(ValueType::Float64),
                p => Err(Error::ipc(
                    None,
                    format!("unsupported float precision {p:?}"),
                )),
            }
        }
        other => Err(Error::Type {
            what: "tensor value type".into(),
            expected: "Int or FloatingPoint".into(),
            found: format!("{other:?}"),
        }),
    }
}

fn index_type(int: Option<fb::Int<'_>>, what: &str) -> Result<IndexType> {
    let i = int.ok_or_else(|| Error::ipc(None, format!("missing {what}")))?;
    IndexType::from_bits(i.bitWidth(), i.is_signed()).ok_or_else(|| Error::Type {
        what: what.into(),
        expected: "an 8, 16, 32 or 64-bit integer".into(),
        found: format!("{}-bit", i.bitWidth()),
    })
}

fn shape_of(
    dims: Option<flatbuffers::Vector<'_, flatbuffers::ForwardsUOffset<fb::TensorDim<'_>>>>,
) -> Result<(Vec<usize>, Vec<String>)> {
    let dims = dims.ok_or_else(|| Error::ipc(None, "missing shape"))?;
    let mut shape = Vec::with_capacity(dims.len());
    let mut names = Vec::with_capacity(dims.len());
    for (i, d) in dims.iter().enumerate() {
        let size = usize::try_from(d.size()).map_err(|_| {
            Error::shape(
                format!("dimension {i}"),
                "a non-negative extent",
                d.size().to_string(),
            )
        })?;
        shape.push(size);
        names.push(d.name().unwrap_or("").to_string());
    }
    Ok((shape, names))
}

/// Byte range of a body buffer, checked against the body and against a minimum
/// byte count.
fn buffer_range(b: Option<&fb::Buffer>, what: &str, needed: usize, body: &Buffer) -> Result<usize> {
    buffer_range_unit(b, what, needed, body, 1)
}

/// As [`buffer_range`], for a Buffer whose `length` counts elements of `unit` bytes.
fn buffer_range_unit(
    b: Option<&fb::Buffer>,
    what: &str,
    needed: usize,
    body: &Buffer,
    unit: i64,
) -> Result<usize> {
    let b = b.ok_or_else(|| Error::ipc(None, format!("missing {what} buffer")))?;
    let (off, len) = (b.offset(), b.length().checked_mul(unit).unwrap_or(-1));
    if off < 0 || len < 0 {
        return Err(Error::ipc(
            None,
            format!("{what} buffer has negative offset or length ({off}, {len})"),
        ));
    }
    let (off, len) = (off as u64, len as u64);
    if off
        .checked_add(len)
        .is_none_or(|end| end > body.len() as u64)
    {
        return Err(Error::ipc(
            None,
            format!(
                "{what} buffer {off}..{} lies outside the body of {} bytes",
                off.saturating_add(len),
                body.len()
            ),
        ));
    }
    if (needed as u64) > len {
        return Err(Error::ipc(
            None,
            format!("{what} buffer holds {len} bytes, {needed} needed"),
        ));
    }
    Ok(off as usize)
}

fn checked_bytes(count: usize, width: usize, what: &str) -> Result<usize> {
    count.checked_mul(width).ok_or_else(|| {
        Error::overflow(
            format!("{what} size"),
            format!("{count} x {width}"),
            "usize",
        )
    })
}

fn decode_sparse(
    st: fb::SparseTensor<'_>,
    body: &Buffer,
    opts: &StreamReadOptions,
) -> Result<AnyTensor> {
    let vt = value_type(
        st.type_type(),
        st.type_as_int(),
        st.type_as_floating_point(),
    )?;
    let (shape, names) = shape_of(Some(st.shape()))?;
    let nnz = usize::try_from(st.non_zero_length()).map_err(|_| {
        Error::ipc(
            None,
            format!("negative non_zero_length {}", st.non_zero_length()),
        )
    })?;
    let index_kind = st.sparseIndex_type();
    // libarrow 26's dense -> CSF conversion of a float tensor whose only "non-zeros"
    // are -0.0 describes them in the index but stores no value (format/SPEC.md 3.4).
    let valueless = negative_zero_prone(vt)
        && index_kind == fb::SparseTensorIndex::SparseTensorIndexCSF
        && nnz > 0
        && st.data().length() == 0;
    let stored = if valueless { 0 } else { nnz };
    let data_bytes = checked_bytes(stored, vt.byte_width(), "values")?;
    let data_off = buffer_range(Some(st.data()), "data", data_bytes, body).map_err(|e| {
        let short = st.data().length() >= 0 && (st.data().length() as u64) < data_bytes as u64;
        if short && negative_zero_prone(vt) && index_kind == fb::SparseTensorIndex::SparseTensorIndexCSF {
            lost_entries(
                "values",
                format!(
                    "non_zero_length {nnz} needs {data_bytes} bytes of {vt} values, the data buffer holds {}",
                    st.data().length()
                ),
            )
        } else {
            e
        }
    })?;
    let values =
        ValueBuffer::from_body(vt, body, data_off, stored, "values", opts.require_alignment)?;
    let ra = opts.require_alignment;
    let v = opts.validation;
    match st.sparseIndex_type() {
        fb::SparseTensorIndex::SparseTensorIndexCOO => {
            let coo = st
                .sparseIndex_as_sparse_tensor_index_coo()
                .ok_or_else(|| Error::ipc(None, "missing COO index"))?;
            let it = index_type(Some(coo.indicesType()), "COO indices type")?;
            let w = it.byte_width() as i64;
            let ndim = shape.len();
            let count = nnz.checked_mul(ndim).ok_or_else(|| {
                Error::overflow("COO coordinate count", format!("{nnz} x {ndim}"), "usize")
            })?;
            let off = buffer_range(
                Some(coo.indicesBuffer()),
                "COO indices",
                checked_bytes(count, it.byte_width(), "COO indices")?,
                body,
            )?;
            let layout = match coo.indicesStrides().map(|s| s.iter().collect::<Vec<i64>>()) {
                None => CoordLayout::RowMajor,
                Some(s) if s.len() != 2 => {
                    return Err(Error::ipc(
                        None,
                        format!("COO indicesStrides has {} entries, expected 2", s.len()),
                    ));
                }
                Some(s) if s == [w * ndim as i64, w] => CoordLayout::RowMajor,
                Some(s) if s == [w, w * nnz as i64] => CoordLayout::ColumnMajor,
                Some(s) if nnz <= 1 || ndim <= 1 => {
                    // Both layouts hold the same bytes for these shapes; accept the
                    // other positive strides libarrow writes for them. (Strides that
                    // match one layout exactly keep it above, so what decodes
                    // re-encodes to the same bytes.)
                    if s[0] <= 0 || s[1] <= 0 {
                        return Err(Error::ipc(
                            None,
                            format!("COO indicesStrides {s:?} are not positive"),
                        ));
                    }
                    CoordLayout::RowMajor
                }
                Some(s) => {
                    return Err(Error::ipc(
                        None,
                        format!("COO indicesStrides {s:?} are neither row-major nor column-major"),
                    ));
                }
            };
            let coords = IndexBuffer::from_body(it, body, off, count, "COO indices", ra)?;
            Ok(AnyTensor::Coo(AnyCoo::try_new(
                shape,
                layout,
                EntryOrder::from(coo.isCanonical()),
                coords,
                values,
                &TensorOptions::default()
                    .with_validation(v)
                    .with_dim_names(names),
            )?))
        }
        fb::SparseTensorIndex::SparseMatrixIndexCSX => {
            let csx = st
                .sparseIndex_as_sparse_matrix_index_csx()
                .ok_or_else(|| Error::ipc(None, "missing CSX index"))?;
            if shape.len() != 2 {
                return Err(Error::shape(
                    "CSX sparse tensor",
                    "2 dimensions",
                    format!("{} dimensions", shape.len()),
                ));
            }
            let axis = match csx.compressedAxis() {
                fb::SparseMatrixCompressedAxis::Row => CompressedAxis::Row,
                fb::SparseMatrixCompressedAxis::Column => CompressedAxis::Column,
                other => {
                    return Err(Error::ipc(
                        None,
                        format!("unknown compressed axis {other:?}"),
                    ));
                }
            };
            let pt = index_type(Some(csx.indptrType()), "CSX indptr type")?;
            let it = index_type(Some(csx.indicesType()), "CSX indices type")?;
            let major = shape[axis.dims().0];
            let plen = major
                .checked_add(1)
                .ok_or_else(|| Error::overflow("indptr length", major.to_string(), "usize"))?;
            let poff = buffer_range(
                Some(csx.indptrBuffer()),
                "indptr",
                checked_bytes(plen, pt.byte_width(), "indptr")?,
                body,
            )?;
            let ioff = buffer_range(
                Some(csx.indicesBuffer()),
                "indices",
                checked_bytes(nnz, it.byte_width(), "indices")?,
                body,
            )?;
            let mut indptr = IndexBuffer::from_body(pt, body, poff, plen, "indptr", ra)?;
            let indices = IndexBuffer::from_body(it, body, ioff, nnz, "indices", ra)?;
            let end = indptr.get_usize(plen - 1);
            if negative_zero_prone(vt) && end.is_some_and(|e| e > nnz) {
                // libarrow 26's dense -> CSR / CSC conversion counted -0.0 elements in
                // indptr but stored neither their indices nor their values (SPEC 3.4).
                let minor = shape[axis.dims().1];
                if nnz > 0 || csx.indicesBuffer().length() != 0 || st.data().length() != 0 {
                    return Err(lost_entries(
                        "indptr",
                        format!(
                            "indptr ends at {} but non_zero_length is {nnz}",
                            end.unwrap_or_default()
                        ),
                    ));
                }
                check_valueless_indptr(&indptr, minor)?;
                indptr = IndexBuffer::UInt8(vec![0u8; plen].into()).cast(pt, "indptr")?;
            }
            Ok(AnyTensor::Csx(AnyCsx::try_new(
                shape,
                axis,
                indptr,
                indices,
                values,
                &TensorOptions::default()
                    .with_validation(v)
                    .with_dim_names(names),
            )?))
        }
        fb::SparseTensorIndex::SparseTensorIndexCSF => {
            let csf = st
                .sparseIndex_as_sparse_tensor_index_csf()
                .ok_or_else(|| Error::ipc(None, "missing CSF index"))?;
            decode_csf(csf, shape, names, values, nnz, body, opts)
        }
        other => Err(Error::ipc(
            None,
            format!("unknown sparse index type {other:?}"),
        )),
    }
}

/// Whether libarrow 26's dense -> sparse conversions can write entries without
/// values for this value type: float32 and float64 -0.0 counts as zero when libarrow
/// sizes the buffers and as non-zero when it fills them (format/SPEC.md 3.4).
fn negative_zero_prone(vt: ValueType) -> bool {
    matches!(vt, ValueType::Float32 | ValueType::Float64)
}

/// The error for a message whose index describes entries it stores no values
/// (CSR / CSC: no indices either) for, alongside entries it does store: the lost
/// entries cannot be told apart from the kept ones.
fn lost_entries(what: &str, detail: String) -> Error {
    Error::invariant(
        what,
        None,
        format!(
            "{detail}: the index describes entries whose values are not stored, as libarrow 26 \
             writes when converting a dense float tensor that holds -0.0 besides other \
             non-zeros; values are lost (replace -0.0 by 0.0 before converting; format/SPEC.md 3.4)"
        ),
    )
}

/// Check the indptr of a CSR / CSC message that stores no entries although its
/// indptr counts some (format/SPEC.md 3.4): it starts at 0, never decreases, and
/// no row (column) counts more entries than the other dimension has elements.
fn check_valueless_indptr(indptr: &IndexBuffer, minor: usize) -> Result<()> {
    let mut prev = 0usize;
    for i in 0..indptr.len() {
        let x = indptr
            .get_usize(i)
            .ok_or_else(|| Error::invariant("indptr", Some(i), "negative entry in an indptr"))?;
        let ok = if i == 0 {
            x == 0
        } else {
            x >= prev && x - prev <= minor
        };
        if !ok {
            return Err(Error::invariant(
                "indptr",
                Some(i),
                format!(
                    "an indptr that counts entries the message does not store must start at 0 \
                     and grow by at most {minor} per step, found {prev} then {x}"
                ),
            ));
        }
        prev = x;
    }
    Ok(())
}

fn decode_csf(
    csf: fb::SparseTensorIndexCSF<'_>,
    shape: Vec<usize>,
    names: Vec<String>,
    values: ValueBuffer,
    nnz: usize,
    body: &Buffer,
    opts: &StreamReadOptions,
) -> Result<AnyTensor> {
    // No values for nnz entries: read (and check) the index, keep none of it.
    let valueless = values.len() != nnz;
    let n = shape.len();
    let pt = index_type(Some(csf.indptrType()), "CSF indptr type")?;
    let it = index_type(Some(csf.indicesType()), "CSF indices type")?;
    let order: Vec<usize> = csf
        .axisOrder()
        .iter()
        .map(|a| {
            usize::try_from(a)
                .map_err(|_| Error::invariant("axis_order", None, format!("negative axis {a}")))
        })
        .collect::<Result<_>>()?;
    let ptr_bufs: Vec<fb::Buffer> = csf.indptrBuffers().iter().copied().collect();
    let idx_bufs: Vec<fb::Buffer> = csf.indicesBuffers().iter().copied().collect();
    if n < 1 || ptr_bufs.len() != n - 1 || idx_bufs.len() != n {
        return Err(Error::ipc(
            None,
            format!(
                "CSF with {n} dimensions has {} indptr and {} indices buffers (expected ndim-1 and ndim, ndim >= 1)",
                ptr_bufs.len(),
                idx_bufs.len()
            ),
        ));
    }
    // libarrow 26 writes element counts in Buffer.length; byte lengths are accepted
    // too (see format/SPEC.md): try element counts first, then bytes.
    let as_elements = csf_lengths_elements(&ptr_bufs, &idx_bufs, pt, it);
    let attempt = |lens: (Vec<usize>, Vec<usize>), elements: bool| -> Result<AnyTensor> {
        let (plens, ilens) = lens;
        let read =
            |b: &fb::Buffer, ty: IndexType, len: usize, what: String| -> Result<IndexBuffer> {
                let unit = if elements { ty.byte_width() as i64 } else { 1 };
                let off = buffer_range_unit(
                    Some(b),
                    &what,
                    checked_bytes(len, ty.byte_width(), &what)?,
                    body,
                    unit,
                )?;
                IndexBuffer::from_body(ty, body, off, len, &what, opts.require_alignment)
            };
        let indptr = (0..n - 1)
            .map(|l| read(&ptr_bufs[l], pt, plens[l], format!("indptr[{l}]")))
            .collect::<Result<Vec<_>>>()?;
        let indices = (0..n)
            .map(|l| read(&idx_bufs[l], it, ilens[l], format!("indices[{l}]")))
            .collect::<Result<Vec<_>>>()?;
        if valueless {
            AnyCsf::check_index(&shape, &order, &indptr, &indices, nnz, opts.validation)?;
            let root = IndexBuffer::UInt8(vec![0u8; 1].into()).cast(pt, "indptr")?;
            let none = IndexBuffer::UInt8(Vec::new().into()).cast(it, "indices")?;
            return Ok(AnyTensor::Csf(
                AnyCsf::try_new(
                    shape.clone(),
                    order.clone(),
                    vec![root; n - 1],
                    vec![none; n],
                    values.clone(),
                    &TensorOptions::default()
                        .with_validation(opts.validation)
                        .with_dim_names(names.clone()),
                )?
                .with_indptr_type(pt)?,
            ));
        }
        Ok(AnyTensor::Csf(
            AnyCsf::try_new(
                shape.clone(),
                order.clone(),
                indptr,
                indices,
                values.clone(),
                &TensorOptions::default()
                    .with_validation(opts.validation)
                    .with_dim_names(names.clone()),
            )?
            .with_indptr_type(pt)?,
        ))
    };
    let first = attempt(as_elements, true);
    if first.is_ok() {
        return first;
    }
    match csf_lengths_bytes(&ptr_bufs, &idx_bufs, pt, it, body, nnz) {
        Some(lens) => attempt(lens, false).or(first),
        None => first,
    }
}

fn csf_lengths_elements(
    ptr: &[fb::Buffer],
    idx: &[fb::Buffer],
    _pt: IndexType,
    _it: IndexType,
) -> (Vec<usize>, Vec<usize>) {
    let len = |b: &fb::Buffer| usize::try_from(b.length()).unwrap_or(usize::MAX);
    (ptr.iter().map(len).collect(), idx.iter().map(len).collect())
}

/// Interpret CSF Buffer lengths as (padded) byte counts. Padding may add trailing
/// zero elements, so exact counts are derived from the tree: level 0's indptr ends
/// at the last occurrence of its maximum; every lower level's length is the last
/// indptr value above it.
fn csf_lengths_bytes(
    ptr: &[fb::Buffer],
    idx: &[fb::Buffer],
    pt: IndexType,
    it: IndexType,
    body: &Buffer,
    nnz: usize,
) -> Option<(Vec<usize>, Vec<usize>)> {
    let n = idx.len();
    let cap = |b: &fb::Buffer, w: usize| -> Option<usize> {
        let l = usize::try_from(b.length()).ok()?;
        (l % w == 0).then_some(l / w)
    };
    let read_all = |b: &fb::Buffer, count: usize| -> Option<IndexBuffer> {
        let off = usize::try_from(b.offset()).ok()?;
        IndexBuffer::from_body(pt, body, off, count, "indptr", false).ok()
    };
    if n < 2 {
        // a 1-D tensor: one indices buffer of nnz elements and its padding
        let fits = cap(idx.first()?, it.byte_width())? >= nnz;
        return (n == 1 && fits).then(|| (Vec::new(), vec![nnz]));
    }
    let mut plens = vec![0; n - 1];
    let mut ilens = vec![0; n];
    let cap0 = cap(ptr.first()?, pt.byte_width())?;
    let p0 = read_all(&ptr[0], cap0)?;
    let vals: Vec<usize> = (0..cap0).map(|i| p0.get_usize(i)).collect::<Option<_>>()?;
    let max = vals.iter().copied().max().unwrap_or(0);
    plens[0] = vals.iter().rposition(|&x| x == max).map_or(1, |p| p + 1);
    ilens[0] = plens[0] - 1;
    for l in 1..n {
        let prev = read_all(&ptr[l - 1], plens[l - 1])?;
        ilens[l] = prev.get_usize(plens[l - 1] - 1)?;
        if l < n - 1 {
            plens[l] = ilens[l] + 1;
        }
        if ilens[l] > cap(&idx[l], it.byte_width())? {
            return None;
        }
    }
    (ilens[n - 1] == nnz).then_some((plens, ilens))
}

fn decode_dense(t: fb::Tensor<'_>, body: &Buffer, opts: &StreamReadOptions) -> Result<AnyTensor> {
    let vt = value_type(t.type_type(), t.type_as_int(), t.type_as_floating_point())?;
    let (shape, names) = shape_of(Some(t.shape()))?;
    let w = vt.byte_width();
    let strides: Vec<usize> = match t.strides() {
        Some(s) if !s.is_empty() => {
            if s.len() != shape.len() {
                return Err(Error::shape(
                    "dense strides",
                    format!("{} strides", shape.len()),
                    format!("{} strides", s.len()),
                ));
            }
            s.iter()
                .map(|b| {
                    if b < 0 || !(b as u64).is_multiple_of(w as u64) {
                        Err(Error::Unsupported(format!("dense stride of {b} bytes (only non-negative multiples of the element size {w} are read)")))
                    } else {
                        Ok(b as usize / w)
                    }
                })
                .collect::<Result<_>>()?
        }
        _ => crate::tensor::dense::row_major_strides(&shape),
    };
    let size = crate::tensor::validate::check_shape(&shape, "dense tensor")?
        .ok_or_else(|| Error::overflow("dense element count", format!("{shape:?}"), "usize"))?;
    // Elements the strides can reach (0 for an empty tensor).
    let mut reach = 0usize;
    if size > 0 {
        for (&d, &s) in shape.iter().zip(&strides) {
            reach = (d - 1)
                .checked_mul(s)
                .and_then(|x| x.checked_add(reach))
                .ok_or_else(|| Error::overflow("dense strides", format!("{strides:?}"), "usize"))?;
        }
        reach += 1;
    }
    // A message must carry every element it describes: strides that overlap
    // (a zero stride broadcasting 8 bytes into 2^62 elements) would make reading
    // cost more than the input justifies, and libarrow never writes them.
    if reach < size {
        return Err(Error::invariant(
            "dense strides",
            None,
            format!(
                "shape {shape:?} with strides {strides:?} overlaps: {size} elements in {reach} stored ones (a message must store every element)"
            ),
        ));
    }
    let off = buffer_range(
        Some(t.data()),
        "data",
        checked_bytes(reach, w, "data")?,
        body,
    )?;
    let values = ValueBuffer::from_body(vt, body, off, reach, "data", opts.require_alignment)?;
    let strides = if size == 0 {
        crate::tensor::dense::row_major_strides(&shape)
    } else {
        strides
    };
    Ok(AnyTensor::Dense(AnyDense::try_new(
        shape,
        strides,
        values,
        &TensorOptions::default().with_dim_names(names),
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatbuffer_errors_are_one_line() {
        // the root offset points far outside the metadata
        let e = parse_message(
            &[0xFF, 0xFF, 0, 0, 0, 0, 0, 0],
            0,
            &StreamReadOptions::default(),
        )
        .unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("invalid flatbuffer Message") && !s.contains('\n'),
            "{s:?}"
        );
    }

    #[test]
    fn coo_layouts_of_one_dimension_or_one_entry_re_encode_to_the_same_bytes() {
        use crate::tensor::{AnyCoo, CoordLayout, EntryOrder, TensorOptions};
        use crate::{AnyTensor, IndexBuffer, ValueBuffer};
        use arrow_buffer::ScalarBuffer;
        let cases: [(Vec<usize>, Vec<i64>, Vec<f64>); 3] = [
            (vec![9], vec![3, 6, 7, 8], vec![8.0, 2.0, 1.0, 2.0]), // 1-D, 4 entries
            (vec![4, 5], vec![2, 3], vec![1.5]),                   // 2-D, 1 entry
            (vec![9], vec![5], vec![-1.0]),                        // 1-D, 1 entry
        ];
        for (shape, coords, values) in cases {
            for layout in [CoordLayout::RowMajor, CoordLayout::ColumnMajor] {
                let t = AnyTensor::Coo(
                    AnyCoo::try_new(
                        shape.clone(),
                        layout,
                        EntryOrder::Canonical,
                        IndexBuffer::from(ScalarBuffer::from(coords.clone())),
                        ValueBuffer::from(ScalarBuffer::from(values.clone())),
                        &TensorOptions::default(),
                    )
                    .unwrap(),
                );
                let opts = crate::ipc::StreamWriteOptions::default();
                let bytes = Buffer::from(crate::ipc::encode(&t, &[], &opts).unwrap().to_vec());
                let (back, _) = crate::ipc::decode(&bytes, &StreamReadOptions::default())
                    .unwrap()
                    .unwrap();
                let again = crate::ipc::encode(&back.tensor, &[], &opts)
                    .unwrap()
                    .to_vec();
                assert_eq!(again, bytes.as_slice(), "{shape:?} {layout:?}");
                if shape.len() == 1 && values.len() == 1 {
                    // one entry of one dimension: both layouts have the same strides
                    let AnyTensor::Coo(c) = &back.tensor else {
                        panic!("not COO")
                    };
                    assert_eq!(c.layout(), CoordLayout::RowMajor);
                } else {
                    assert_eq!(back.tensor, t, "{shape:?} {layout:?}");
                }
            }
        }
    }
}

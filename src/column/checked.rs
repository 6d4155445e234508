//! Arrow IPC files and streams of record batches, read without trusting them.
//!
//! arrow-ipc's `FileReader` and `StreamReader` trust the numbers in a file: a
//! negative block length is unwrapped (a panic), a block offset is seeked to
//! (`Invalid argument`), a block or message length is allocated before it is
//! compared with the file (57 PB requests), a buffer range is sliced (a panic in
//! `Buffer::slice`), a FixedSizeList length is multiplied (an overflow panic in
//! arrow-data). Here the whole file is one [`Buffer`] (its own size, read once),
//! and every number is checked against it before arrow-ipc's `FileDecoder`
//! decodes a block: the footer and each message pass the flatbuffer verifier;
//! blocks and messages lie inside the file; every body buffer lies inside its
//! body, and has a whole number of elements of its column's type; field node
//! lengths and null counts are sane, and products such as a FixedSizeList's
//! `length × size` do not overflow. The decoding then runs under the crate's
//! last-resort guard (`crate::guard`) for whatever no check describes.
//! `fuzz/FINDINGS.md` lists the arrow-ipc panics these checks keep away.
//!
//! Batches are zero-copy slices of the file's buffer (arrow-ipc copies only
//! misaligned buffers), so reading takes at most about twice the file's size.

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::reader::FileDecoder;
use arrow_ipc::{Block, MessageHeader, MetadataVersion};
use arrow_schema::{DataType, Field, IntervalUnit, Schema, SchemaRef, UnionMode};
use flatbuffers::VerifierOptions;

use crate::error::{Error, Result};
use crate::guard::{Dependency, guard};

const MAGIC: &[u8; 6] = b"ARROW1";
const CONTINUATION: [u8; 4] = [0xFF; 4];

/// Largest node length accepted: 2^58 elements keeps every `length × width`
/// arrow-data computes (widths up to 32 bytes, FixedSizeList products checked
/// here) inside `usize`.
const MAX_LENGTH: u64 = 1 << 58;

fn bad(what: &str, offset: Option<u64>, detail: impl Into<String>) -> Error {
    Error::Ipc {
        offset,
        detail: format!("{what}: {}", detail.into()),
    }
}

fn verifier() -> VerifierOptions {
    VerifierOptions {
        max_depth: 64,
        max_tables: 1_000_000,
        ..Default::default()
    }
}

/// Which columns to decode, chosen from the schema: `None` for every column, or
/// their positions (the others are walked and checked, not decoded).
pub(crate) type Projection<'a> = &'a dyn Fn(&Schema) -> Result<Option<Vec<usize>>>;

/// Every record batch of an Arrow IPC file held in `data`.
pub(crate) fn read_file(
    data: &Buffer,
    projection: Projection,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let what = "Arrow IPC file";
    let len = data.len();
    // "ARROW1" + 2 padding bytes ... footer, int32 footer length, "ARROW1"
    if len < 18 || &data[..6] != MAGIC || &data[len - 6..] != MAGIC {
        return Err(bad(
            what,
            None,
            "no ARROW1 magic at both ends, or shorter than 18 bytes",
        ));
    }
    let footer_len = i32::from_le_bytes(data[len - 10..len - 6].try_into().expect("4 bytes"));
    let footer_len = usize::try_from(footer_len)
        .ok()
        .filter(|&n| n <= len - 18)
        .ok_or_else(|| {
            bad(
                what,
                Some((len - 10) as u64),
                format!("footer length {footer_len} does not fit in a file of {len} bytes"),
            )
        })?;
    let footer_start = len - 10 - footer_len;
    let footer = arrow_ipc::root_as_footer_with_opts(&verifier(), &data[footer_start..len - 10])
        .map_err(|e| {
            bad(
                what,
                Some(footer_start as u64),
                format!("invalid footer: {e}"),
            )
        })?;
    let version = footer.version();
    check_version(version, what, Some(footer_start as u64))?;
    let fb_schema = footer
        .schema()
        .ok_or_else(|| bad(what, Some(footer_start as u64), "the footer has no schema"))?;
    let schema = Arc::new(guard(Dependency::ArrowIpc, "schema", || {
        Ok(arrow_ipc::convert::try_fb_to_schema(fb_schema)?)
    })?);
    let projection = projection(&schema)?;
    let projection = projection.as_deref();
    let mut decoder = decoder(&schema, version, projection)?;
    // blocks must lie between the leading magic and the footer
    let blocks_end = footer_start as u64;
    for block in footer.dictionaries().into_iter().flatten() {
        let (buf, body) = block_bytes(data, block, blocks_end)?;
        check_message(&buf, block, body, None, version)?;
        guard(Dependency::ArrowIpc, "dictionary batch", || {
            Ok(decoder.read_dictionary(block, &buf)?)
        })?;
    }
    let mut batches = Vec::new();
    for block in footer.recordBatches().into_iter().flatten() {
        let (buf, body) = block_bytes(data, block, blocks_end)?;
        check_message(&buf, block, body, Some(&schema), version)?;
        if let Some(b) = guard(Dependency::ArrowIpc, "record batch", || {
            Ok(decoder.read_record_batch(block, &buf)?)
        })? {
            batches.push(b);
        }
    }
    Ok((projected(&schema, projection)?, batches))
}

/// Every record batch of an Arrow IPC stream held in `data` (a Schema message,
/// then dictionary and record batch messages, up to the end-of-stream marker or
/// the end of the data).
pub(crate) fn read_stream(
    data: &Buffer,
    projection: Projection,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let what = "Arrow IPC stream";
    let mut pos = 0usize;
    let mut state: Option<(SchemaRef, FileDecoder, MetadataVersion)> = None;
    let mut picked: Option<Vec<usize>> = None;
    let mut batches = Vec::new();
    while pos < data.len() {
        let Some((prefix, meta_len)) = frame(&data[pos..], pos as u64)? else {
            break; // end-of-stream marker
        };
        let meta_end = pos + prefix + meta_len;
        let message =
            arrow_ipc::root_as_message_with_opts(&verifier(), &data[pos + prefix..meta_end])
                .map_err(|e| bad(what, Some(pos as u64), format!("invalid message: {e}")))?;
        let body = usize::try_from(message.bodyLength())
            .ok()
            .filter(|&b| b <= data.len() - meta_end)
            .ok_or_else(|| {
                bad(
                    what,
                    Some(pos as u64),
                    format!(
                        "body of {} bytes does not fit in the {} bytes left",
                        message.bodyLength(),
                        data.len() - meta_end
                    ),
                )
            })?;
        let block = Block::new(0, (prefix + meta_len) as i32, body as i64);
        let buf = data.slice_with_length(pos, prefix + meta_len + body);
        match (&mut state, message.header_type()) {
            (None, MessageHeader::Schema) => {
                let version = message.version();
                check_version(version, what, Some(pos as u64))?;
                let fb = message
                    .header_as_schema()
                    .ok_or_else(|| bad(what, Some(pos as u64), "no Schema header"))?;
                let schema = Arc::new(guard(Dependency::ArrowIpc, "schema", || {
                    Ok(arrow_ipc::convert::try_fb_to_schema(fb)?)
                })?);
                picked = projection(&schema)?;
                let d = decoder(&schema, version, picked.as_deref())?;
                state = Some((schema, d, version));
            }
            (None, other) => {
                return Err(bad(
                    what,
                    Some(pos as u64),
                    format!("the first message is a {other:?}, not a Schema"),
                ));
            }
            (Some(_), MessageHeader::Schema) => {
                return Err(bad(what, Some(pos as u64), "a second Schema message"));
            }
            (Some((_, d, version)), MessageHeader::DictionaryBatch) => {
                check_message(&buf, &block, body, None, *version)?;
                guard(Dependency::ArrowIpc, "dictionary batch", || {
                    Ok(d.read_dictionary(&block, &buf)?)
                })?;
            }
            (Some((schema, d, version)), MessageHeader::RecordBatch) => {
                check_message(&buf, &block, body, Some(schema), *version)?;
                if let Some(b) = guard(Dependency::ArrowIpc, "record batch", || {
                    Ok(d.read_record_batch(&block, &buf)?)
                })? {
                    batches.push(b);
                }
            }
            (Some(_), other) => {
                return Err(bad(
                    what,
                    Some(pos as u64),
                    format!("a {other:?} message in a stream of record batches"),
                ));
            }
        }
        pos = meta_end + body;
    }
    let Some((schema, _, _)) = state else {
        return Err(bad(what, None, "no Schema message"));
    };
    Ok((projected(&schema, picked.as_deref())?, batches))
}

fn check_version(v: MetadataVersion, what: &str, offset: Option<u64>) -> Result<()> {
    if v == MetadataVersion::V4 || v == MetadataVersion::V5 {
        Ok(())
    } else {
        Err(bad(
            what,
            offset,
            format!("metadata version {v:?} (V4 and V5 are read)"),
        ))
    }
}

fn decoder(
    schema: &SchemaRef,
    version: MetadataVersion,
    projection: Option<&[usize]>,
) -> Result<FileDecoder> {
    let d = FileDecoder::new(schema.clone(), version);
    Ok(match projection {
        None => d,
        Some(p) => {
            projected(schema, Some(p))?;
            d.with_projection(p.to_vec())
        }
    })
}

fn projected(schema: &SchemaRef, projection: Option<&[usize]>) -> Result<SchemaRef> {
    match projection {
        None => Ok(schema.clone()),
        Some(p) => Ok(Arc::new(schema.project(p)?)),
    }
}

/// The encapsulated message at the start of `rest`: `Some((prefix, metadata
/// length))`, `None` at an end-of-stream marker (or the end of the data).
fn frame(rest: &[u8], offset: u64) -> Result<Option<(usize, usize)>> {
    let what = "Arrow IPC stream";
    let word = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if rest.len() < 4 {
        return Err(bad(what, Some(offset), "truncated message length"));
    }
    let (prefix, len) = if rest[..4] == CONTINUATION {
        if rest.len() < 8 {
            return Err(bad(what, Some(offset), "truncated message length"));
        }
        (8, word(&rest[4..8]))
    } else {
        (4, word(&rest[..4]))
    };
    if len == 0 {
        return Ok(None);
    }
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= rest.len() - prefix && l <= i32::MAX as usize - 8)
        .ok_or_else(|| {
            bad(
                what,
                Some(offset),
                format!(
                    "message metadata of {len} bytes does not fit in the {} bytes left",
                    rest.len() - prefix
                ),
            )
        })?;
    Ok(Some((prefix, len)))
}

/// The bytes of a file block (metadata and body), checked to lie in
/// `..end`, and the body's length.
fn block_bytes(data: &Buffer, block: &Block, end: u64) -> Result<(Buffer, usize)> {
    let what = "Arrow IPC file block";
    let (off, meta, body) = (block.offset(), block.metaDataLength(), block.bodyLength());
    let total = (|| {
        let off = u64::try_from(off).ok().filter(|&o| o >= 8)?;
        let meta = u64::try_from(meta).ok().filter(|&m| m >= 8)?;
        let body = u64::try_from(body).ok()?;
        let stop = off.checked_add(meta)?.checked_add(body)?;
        (stop <= end).then_some((off as usize, (meta + body) as usize, body as usize))
    })();
    let (off, len, body) = total.ok_or_else(|| {
        bad(
            what,
            None,
            format!(
                "offset {off}, metadata {meta} bytes and body {body} bytes do not lie between byte 8 and the footer at byte {end}"
            ),
        )
    })?;
    Ok((data.slice_with_length(off, len), body))
}

/// Check the message at the start of `buf` (a block: prefix, metadata, body of
/// `body` bytes): it is verified, its framing lies inside the block's metadata,
/// and its record batch (that of a dictionary batch, or, with `schema`, walked
/// field by field) only points inside the body.
fn check_message(
    buf: &Buffer,
    block: &Block,
    body: usize,
    schema: Option<&Schema>,
    version: MetadataVersion,
) -> Result<()> {
    let what = "Arrow IPC message";
    let meta_len = buf.len() - body;
    let Some((prefix, len)) = frame(&buf[..meta_len], block.offset().max(0) as u64)? else {
        return Err(bad(what, None, "a block holds an end-of-stream marker"));
    };
    let message = arrow_ipc::root_as_message_with_opts(&verifier(), &buf[prefix..prefix + len])
        .map_err(|e| bad(what, None, format!("invalid message: {e}")))?;
    if message.version() != version {
        return Err(bad(
            what,
            None,
            format!(
                "version {:?} differs from the schema's {version:?}",
                message.version()
            ),
        ));
    }
    let batch = match message.header_type() {
        MessageHeader::RecordBatch => message.header_as_record_batch(),
        MessageHeader::DictionaryBatch => {
            message.header_as_dictionary_batch().and_then(|d| d.data())
        }
        other => {
            return Err(bad(
                what,
                None,
                format!("a {other:?} where a batch was expected"),
            ));
        }
    }
    .ok_or_else(|| bad(what, None, "the batch header is missing"))?;
    if batch.compression().is_some() {
        return Err(Error::Unsupported(
            "compressed Arrow IPC record batches (LZ4 / zstd buffer compression)".into(),
        ));
    }
    if batch.length() < 0 {
        return Err(bad(
            what,
            None,
            format!("negative batch length {}", batch.length()),
        ));
    }
    let nodes: Vec<(u64, u64)> = batch
        .nodes()
        .map(|n| {
            n.iter()
                .map(|n| (n.length(), n.null_count()))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, (len, nulls))| {
            let ok = (0..=MAX_LENGTH as i64).contains(&len) && (0..=len).contains(&nulls);
            ok.then_some((len as u64, nulls as u64)).ok_or_else(|| {
                bad(
                    what,
                    None,
                    format!("field node {i}: length {len}, null count {nulls}"),
                )
            })
        })
        .collect::<Result<_>>()?;
    let buffers: Vec<(u64, u64)> = batch
        .buffers()
        .map(|b| b.iter().map(|b| (b.offset(), b.length())).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, (off, len))| {
            let end = u64::try_from(off)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(o, l)| o.checked_add(l).map(|e| (o, l, e)));
            match end {
                Some((o, l, e)) if e <= body as u64 => Ok((o, l)),
                _ => Err(bad(
                    what,
                    None,
                    format!("buffer {i} (offset {off}, {len} bytes) is not inside the body of {body} bytes"),
                )),
            }
        })
        .collect::<Result<_>>()?;
    let variadic: VecDeque<i64> = batch
        .variadicBufferCounts()
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    if let Some(schema) = schema {
        let mut walk = Walk {
            nodes: nodes.into_iter(),
            buffers: buffers.into_iter(),
            variadic,
            version,
        };
        for f in schema.fields() {
            walk.field(f)?;
        }
    }
    Ok(())
}

/// A walk of a record batch's field nodes and buffers in schema order, as
/// arrow-ipc's `RecordBatchDecoder` consumes them, checking what it would slice
/// or multiply.
struct Walk {
    nodes: std::vec::IntoIter<(u64, u64)>,
    buffers: std::vec::IntoIter<(u64, u64)>,
    variadic: VecDeque<i64>,
    version: MetadataVersion,
}

impl Walk {
    fn node(&mut self, f: &Field) -> Result<u64> {
        self.nodes.next().map(|(len, _)| len).ok_or_else(|| {
            bad(
                "Arrow IPC record batch",
                None,
                format!("no field node for column {:?}", f.name()),
            )
        })
    }

    /// The next buffer, of elements `width` bytes wide (0: any length), holding
    /// at least `min` bytes.
    fn buffer(&mut self, f: &Field, width: u64, min: u64) -> Result<()> {
        let what = "Arrow IPC record batch";
        let (_, len) = self.buffers.next().ok_or_else(|| {
            bad(
                what,
                None,
                format!("too few buffers for column {:?}", f.name()),
            )
        })?;
        if width > 1 && len % width != 0 {
            return Err(bad(
                what,
                None,
                format!(
                    "a buffer of column {:?} ({}) has {len} bytes, not a multiple of its {width}-byte elements",
                    f.name(),
                    f.data_type()
                ),
            ));
        }
        if len < min {
            return Err(bad(
                what,
                None,
                format!(
                    "a buffer of column {:?} has {len} bytes, fewer than {min}",
                    f.name()
                ),
            ));
        }
        Ok(())
    }

    fn field(&mut self, f: &Field) -> Result<()> {
        use DataType::*;
        let what = "Arrow IPC record batch";
        let dt = f.data_type();
        // run-end encoded arrays and unions (from V5) have no validity buffer
        match dt {
            RunEndEncoded(ends, values) => {
                self.node(f)?;
                self.field(ends)?;
                return self.field(values);
            }
            Null => {
                self.node(f)?;
                return Ok(());
            }
            _ => {}
        }
        let len = self.node(f)?;
        if let Union(fields, mode) = dt {
            if self.version < MetadataVersion::V5 {
                self.buffer(f, 0, 0)?;
            }
            self.buffer(f, 1, len)?; // type ids, sliced to `len` by arrow-ipc
            if *mode == UnionMode::Dense {
                self.buffer(f, 4, len * 4)?;
            }
            for (_, child) in fields.iter() {
                self.field(child)?;
            }
            return Ok(());
        }
        self.buffer(f, 0, 0)?; // validity
        match dt {
            Boolean => self.buffer(f, 0, 0),
            Int8 | UInt8 => self.buffer(f, 1, 0),
            Int16 | UInt16 | Float16 => self.buffer(f, 2, 0),
            Int32 | UInt32 | Float32 | Date32 | Time32(_) | Decimal32(_, _) => self.buffer(f, 4, 0),
            Int64
            | UInt64
            | Float64
            | Date64
            | Time64(_)
            | Timestamp(_, _)
            | Duration(_)
            | Decimal64(_, _) => self.buffer(f, 8, 0),
            Decimal128(_, _) => self.buffer(f, 16, 0),
            Decimal256(_, _) => self.buffer(f, 32, 0),
            Interval(IntervalUnit::YearMonth) => self.buffer(f, 4, 0),
            Interval(IntervalUnit::DayTime) => self.buffer(f, 8, 0),
            Interval(IntervalUnit::MonthDayNano) => self.buffer(f, 16, 0),
            Utf8 | Binary => {
                self.buffer(f, 4, 0)?;
                self.buffer(f, 0, 0)
            }
            LargeUtf8 | LargeBinary => {
                self.buffer(f, 8, 0)?;
                self.buffer(f, 0, 0)
            }
            Utf8View | BinaryView => {
                self.buffer(f, 16, 0)?;
                let n = self.variadic.pop_front().unwrap_or(0);
                let n = u64::try_from(n)
                    .ok()
                    .filter(|&n| n <= self.buffers.len() as u64)
                    .ok_or_else(|| {
                        bad(
                            what,
                            None,
                            format!("column {:?}: {n} variadic buffers", f.name()),
                        )
                    })?;
                for _ in 0..n {
                    self.buffer(f, 0, 0)?;
                }
                Ok(())
            }
            FixedSizeBinary(n) => {
                let n = u64::try_from(*n).unwrap_or(u64::MAX);
                if len.checked_mul(n).is_none_or(|t| t > MAX_LENGTH) {
                    return Err(bad(
                        what,
                        None,
                        format!("column {:?}: {len} values of {n} bytes", f.name()),
                    ));
                }
                self.buffer(f, 0, 0)
            }
            List(child) | Map(child, _) => {
                self.buffer(f, 4, 0)?;
                self.field(child)
            }
            LargeList(child) => {
                self.buffer(f, 8, 0)?;
                self.field(child)
            }
            ListView(child) => {
                self.buffer(f, 4, 0)?;
                self.buffer(f, 4, 0)?;
                self.field(child)
            }
            LargeListView(child) => {
                self.buffer(f, 8, 0)?;
                self.buffer(f, 8, 0)?;
                self.field(child)
            }
            FixedSizeList(child, n) => {
                let n = u64::try_from(*n).unwrap_or(u64::MAX);
                if len.checked_mul(n).is_none_or(|t| t > MAX_LENGTH) {
                    return Err(bad(
                        what,
                        None,
                        format!("column {:?}: {len} lists of {n} values overflow", f.name()),
                    ));
                }
                self.field(child)
            }
            Struct(children) => {
                for child in children.iter() {
                    self.field(child)?;
                }
                Ok(())
            }
            Dictionary(key, _) => {
                let w = key.primitive_width().unwrap_or(0) as u64;
                self.buffer(f, w, 0)
            }
            other => Err(Error::Unsupported(format!(
                "column {:?} of type {other} in an Arrow IPC record batch",
                f.name()
            ))),
        }
    }
}

//! What the parquet crate is given, checked first: Parquet files read without
//! trusting their footer or page headers (archives and tables alike).
//!
//! The parquet crate (60.1) trusts several numbers of a file (`fuzz/FINDINGS.md`
//! has the inputs): a column chunk's negative start or length is an assertion
//! panic (`ColumnChunkMetaData::byte_range`); a page's `uncompressed_page_size`
//! is reserved before decompressing (up to 2 GiB from a page of a few bytes); a
//! dictionary page's value count sizes the decoded dictionary (4·10^8 entries
//! from 982 bytes); a `File` chunk read reserves the requested length before
//! reading. Here:
//!
//! * [`BoundedFile`] is the `ChunkReader` handed to the crate: every range it is
//!   asked for must lie inside the file, so no read reserves more than the file.
//! * [`check_chunks`] checks, before a row group is decoded, every column chunk
//!   of it that will be read: its range lies inside the file, and each page
//!   header (parsed here, Thrift compact protocol) is sane (sizes non-negative,
//!   the page inside its chunk, a dictionary's values fitting its page); and the
//!   memory the pages decode to (their uncompressed sizes plus their values at
//!   their physical width) fits the reader's [`ReadLimit`].
//!
//! Decoders deeper than that (RLE, delta, dictionary indices) still run under
//! the crate's last-resort guard.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use ::parquet::basic::Type as PhysicalType;
use ::parquet::file::metadata::ParquetMetaData;
use ::parquet::file::reader::{ChunkReader, Length};
use bytes::Bytes;

use super::thrift::{self, ENDS_EARLY, TResult};
use crate::error::{Error, Result};
use crate::limit::ReadLimit;

/// A file handed to the parquet crate: reads outside it are errors, not
/// allocations of the requested size. The bytes come from a local file or, with
/// the feature `object-store`, from an object in a store (ranged requests, see
/// [`super::store`]).
#[derive(Debug)]
pub(crate) struct BoundedFile {
    src: Src,
    len: u64,
}

#[derive(Debug)]
enum Src {
    File(File),
    #[cfg(feature = "object-store")]
    Remote(std::sync::Arc<super::store::RemoteObject>),
}

impl BoundedFile {
    /// Wrap `file`, whose footer is first walked as the parquet crate will
    /// decode it ([`check_footer_thrift`]).
    pub(crate) fn new(file: File) -> Result<Self> {
        let len = file.metadata()?.len();
        let f = BoundedFile {
            src: Src::File(file),
            len,
        };
        check_footer_thrift(&f)?;
        Ok(f)
    }

    /// Wrap an object of a store, as [`new`](Self::new) a file.
    #[cfg(feature = "object-store")]
    pub(crate) fn remote(object: std::sync::Arc<super::store::RemoteObject>) -> Result<Self> {
        let f = BoundedFile {
            len: object.len(),
            src: Src::Remote(object),
        };
        check_footer_thrift(&f)?;
        Ok(f)
    }

    pub(crate) fn try_clone(&self) -> Result<Self> {
        Ok(BoundedFile {
            src: match &self.src {
                Src::File(f) => Src::File(f.try_clone()?),
                #[cfg(feature = "object-store")]
                Src::Remote(o) => Src::Remote(o.clone()),
            },
            len: self.len,
        })
    }

    /// The file's length in bytes.
    pub(crate) fn bytes(&self) -> u64 {
        self.len
    }

    /// Bytes `start..start + length`, which lie inside the file (checked by the
    /// callers).
    fn read_at(&self, start: u64, length: usize) -> std::io::Result<Bytes> {
        match &self.src {
            Src::File(file) => {
                let mut buf = vec![0u8; length];
                let mut f = file.try_clone()?;
                f.seek(SeekFrom::Start(start))?;
                f.read_exact(&mut buf)?;
                Ok(buf.into())
            }
            #[cfg(feature = "object-store")]
            Src::Remote(o) => o.read(start, length),
        }
    }

    /// Fetch `ranges` at once ahead of the reads that need them (an object's
    /// column chunks before a row group is checked and decoded), replacing what
    /// was fetched before; nothing for a local file.
    pub(crate) fn prefetch(&self, ranges: &[std::ops::Range<u64>]) -> Result<()> {
        match &self.src {
            Src::File(_) => {
                let _ = ranges;
                Ok(())
            }
            #[cfg(feature = "object-store")]
            Src::Remote(o) => o.prefetch(ranges),
        }
    }

    /// Whether the bytes come from a store (so that reads are batched).
    pub(crate) fn is_remote(&self) -> bool {
        !matches!(self.src, Src::File(_))
    }

    fn range(&self, start: u64, length: u64) -> ::parquet::errors::Result<()> {
        match start.checked_add(length) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(::parquet::errors::ParquetError::EOF(format!(
                "the range of {length} bytes at byte {start} is not inside the file of {} bytes",
                self.len
            ))),
        }
    }
}

impl Length for BoundedFile {
    fn len(&self) -> u64 {
        self.len
    }
}

/// What [`BoundedFile::get_read`] gives: a buffered reader of the local file,
/// or of an object's bytes (fetched window by window).
pub(crate) enum ChunkRead {
    File(std::io::Take<std::io::BufReader<File>>),
    #[cfg(feature = "object-store")]
    Remote(super::store::RemoteRead),
}

impl Read for ChunkRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            ChunkRead::File(r) => r.read(buf),
            #[cfg(feature = "object-store")]
            ChunkRead::Remote(r) => r.read(buf),
        }
    }
}

impl ChunkReader for BoundedFile {
    type T = ChunkRead;

    fn get_read(&self, start: u64) -> ::parquet::errors::Result<Self::T> {
        self.range(start, 0)?;
        match &self.src {
            Src::File(file) => {
                let mut f = file.try_clone()?;
                f.seek(SeekFrom::Start(start))?;
                Ok(ChunkRead::File(
                    std::io::BufReader::new(f).take(self.len - start),
                ))
            }
            #[cfg(feature = "object-store")]
            Src::Remote(o) => Ok(ChunkRead::Remote(super::store::RemoteRead::new(
                o.clone(),
                start,
            ))),
        }
    }

    fn get_bytes(&self, start: u64, length: usize) -> ::parquet::errors::Result<Bytes> {
        self.range(start, length as u64)?;
        Ok(self.read_at(start, length)?)
    }
}

fn corrupt(what: String, detail: impl Into<String>) -> Error {
    Error::Parquet(::parquet::errors::ParquetError::General(format!(
        "malformed {what}: {}",
        detail.into()
    )))
}

/// Walk the Thrift `FileMetaData` of a file ending in a plain footer (`PAR1`)
/// as the parquet crate decodes it, and refuse it when that decoding would not
/// run in time linear in its length (a `list<bool>` the crate skips element by
/// element without reading a byte; `fuzz/FINDINGS.md`, M) or when the crate
/// would read a field by another type than its bytes have. A file too short or
/// without the magic is left to the crate, which refuses it.
fn check_footer_thrift(f: &BoundedFile) -> Result<()> {
    if f.len < 12 {
        return Ok(());
    }
    let tail = f.read_at(f.len - 8, 8)?;
    if &tail[4..] != b"PAR1" {
        return Ok(());
    }
    let footer = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if footer + 8 > f.len {
        return Ok(());
    }
    let buf = f.read_at(f.len - 8 - footer, footer as usize)?;
    thrift::walk(&buf, &thrift::FILE_META_DATA, &mut |_, _| {})
        .map_err(|d| corrupt("Parquet footer".into(), d))?;
    Ok(())
}

/// Check the footer's column chunk ranges (every row group, every column): the
/// start (dictionary page, else first data page) and length are non-negative and
/// inside the file, and row counts are non-negative. The parquet crate asserts
/// on negative ones.
pub(crate) fn check_footer(meta: &ParquetMetaData, file_len: u64) -> Result<()> {
    for (g, rg) in meta.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            return Err(corrupt(
                format!("row group {g}"),
                format!("{} rows", rg.num_rows()),
            ));
        }
        for (c, col) in rg.columns().iter().enumerate() {
            chunk_range(col, file_len)
                .map_err(|d| corrupt(format!("column chunk {c} of row group {g}"), d))?;
        }
    }
    Ok(())
}

/// The byte ranges of the column chunks `leaves` of row group `g` (each inside
/// the file of `file_len` bytes).
pub(crate) fn chunk_ranges(
    meta: &ParquetMetaData,
    g: usize,
    leaves: &[usize],
    file_len: u64,
) -> Result<Vec<std::ops::Range<u64>>> {
    let rg = meta.row_groups().get(g).ok_or_else(|| {
        Error::Unsupported(format!(
            "row group {g} does not exist ({} row groups)",
            meta.num_row_groups()
        ))
    })?;
    leaves
        .iter()
        .map(|&c| {
            let col = rg
                .columns()
                .get(c)
                .ok_or_else(|| corrupt(format!("row group {g}"), format!("no column chunk {c}")))?;
            let (start, len) = chunk_range(col, file_len)
                .map_err(|d| corrupt(format!("column chunk {c} of row group {g}"), d))?;
            Ok(start..start + len)
        })
        .collect()
}

fn chunk_range(
    col: &::parquet::file::metadata::ColumnChunkMetaData,
    file_len: u64,
) -> std::result::Result<(u64, u64), String> {
    let start = col
        .dictionary_page_offset()
        .unwrap_or(col.data_page_offset());
    let len = col.compressed_size();
    match (u64::try_from(start), u64::try_from(len)) {
        (Ok(s), Ok(l)) if s.checked_add(l).is_some_and(|e| e <= file_len) => Ok((s, l)),
        _ => Err(format!(
            "starts at byte {start} and is {len} bytes long, outside the file of {file_len} bytes"
        )),
    }
}

/// Bytes per value of a physical type once decoded (byte arrays: their offset
/// and at least a few bytes of data).
fn width(t: PhysicalType, type_length: i32) -> u64 {
    match t {
        PhysicalType::BOOLEAN => 1,
        PhysicalType::INT32 | PhysicalType::FLOAT => 4,
        PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
        PhysicalType::INT96 => 12,
        PhysicalType::BYTE_ARRAY => 8,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => u64::try_from(type_length).unwrap_or(0).max(1),
    }
}

/// Bytes a value of a physical type takes at least in a PLAIN dictionary page.
fn plain_width(t: PhysicalType, type_length: i32) -> u64 {
    match t {
        // bit-packed
        PhysicalType::BOOLEAN => 0,
        // a 4-byte length before each value
        PhysicalType::BYTE_ARRAY => 4,
        _ => width(t, type_length),
    }
}

/// Check the column chunks `columns` (leaf indices; `None`: all) of row groups
/// `groups` before the parquet crate decodes them, and that the memory decoding
/// takes fits `limit` for the file: per column chunk, its largest page
/// (decompressed) and its dictionary (page and decoded values) are alive at
/// once; with `retained`, every decoded value is kept too (a table read whole),
/// else values are consumed batch by batch (an archive, whose rebuilt tensor
/// the caller bounds). `what` names the file.
pub(crate) fn check_chunks(
    file: &BoundedFile,
    meta: &ParquetMetaData,
    groups: &[usize],
    columns: Option<&[usize]>,
    retained: bool,
    limit: &ReadLimit,
    what: &str,
) -> Result<()> {
    let file_len = file.bytes();
    let mut needed: u64 = 0;
    for &g in groups {
        let rg = meta.row_groups().get(g).ok_or_else(|| {
            Error::Unsupported(format!(
                "row group {g} does not exist ({} row groups)",
                meta.num_row_groups()
            ))
        })?;
        let all: Vec<usize>;
        let cols = match columns {
            Some(c) => c,
            None => {
                all = (0..rg.num_columns()).collect();
                &all
            }
        };
        for &c in cols {
            let col = rg
                .columns()
                .get(c)
                .ok_or_else(|| corrupt(format!("row group {g}"), format!("no column chunk {c}")))?;
            let here = format!("column chunk {c} of row group {g}");
            let (start, len) = chunk_range(col, file_len).map_err(|d| corrupt(here.clone(), d))?;
            let descr = col.column_descr();
            let w = width(col.column_type(), descr.type_length());
            let pw = plain_width(col.column_type(), descr.type_length());
            let levels: u64 = if descr.max_def_level() > 0 || descr.max_rep_level() > 0 {
                4
            } else {
                0
            };
            let mut pos = 0u64;
            let mut largest_page = 0u64;
            while pos < len {
                let at = format!("{here}, page at byte {}", start + pos);
                let (h, hlen) = read_header(file, start + pos, len - pos)
                    .map_err(|d| corrupt(at.clone(), d))?;
                let body_end = u64::try_from(h.compressed)
                    .ok()
                    .and_then(|c| (pos + hlen).checked_add(c))
                    .filter(|&e| e <= len);
                let Some(body_end) = body_end else {
                    return Err(corrupt(
                        at,
                        format!(
                            "compressed size {} runs past the end of the column chunk",
                            h.compressed
                        ),
                    ));
                };
                let uncompressed = u64::try_from(h.uncompressed).map_err(|_| {
                    corrupt(at.clone(), format!("uncompressed size {}", h.uncompressed))
                })?;
                let num_values = u64::try_from(h.num_values)
                    .map_err(|_| corrupt(at.clone(), format!("{} values", h.num_values)))?;
                largest_page = largest_page.max(uncompressed);
                if h.dictionary {
                    if num_values.saturating_mul(pw) > uncompressed {
                        return Err(corrupt(
                            at,
                            format!(
                                "a dictionary of {num_values} values does not fit its page of {uncompressed} bytes"
                            ),
                        ));
                    }
                    needed = needed
                        .saturating_add(uncompressed)
                        .saturating_add(num_values.saturating_mul(w));
                } else if retained {
                    needed = needed.saturating_add(num_values.saturating_mul(w + levels));
                }
                pos = body_end;
            }
            needed = needed.saturating_add(largest_page);
        }
    }
    limit.check(format!("decoding the pages of {what}"), needed, file_len)
}

/// The page header at `offset` of `f`, with at most `left` bytes of its column
/// chunk from there: a window of 4 KiB first, larger while the header (whose
/// statistics may be long) does not fit it.
fn read_header(f: &BoundedFile, offset: u64, left: u64) -> TResult<(PageHeader, u64)> {
    let mut window = left.min(4096);
    loop {
        let buf = f
            .read_at(offset, window as usize)
            .map_err(|e| format!("cannot read the page header: {e}"))?;
        match PageHeader::parse(&buf) {
            Ok((h, n)) => return Ok((h, n as u64)),
            Err(e) if e.contains(ENDS_EARLY) && window < left => window = left.min(window * 16),
            Err(e) => return Err(e),
        }
    }
}

/// The fields of a Parquet `PageHeader` that size allocations.
#[derive(Debug, Default)]
struct PageHeader {
    uncompressed: i64,
    compressed: i64,
    dictionary: bool,
    num_values: i64,
}

impl PageHeader {
    /// Parse the header at the start of `buf` as the parquet crate will (see
    /// [`thrift`]): the header and its length.
    fn parse(buf: &[u8]) -> TResult<(PageHeader, usize)> {
        let mut h = PageHeader::default();
        let (mut seen_u, mut seen_c, mut page_type) = (false, false, None);
        // num_values of the data page (v1), dictionary page and data page v2
        // headers (fields 5, 7, 8; field 1 of each)
        let mut values = [0i64; 3];
        let n = thrift::walk(buf, &thrift::PAGE_HEADER, &mut |path, v| match path {
            [1] => page_type = Some(v),
            [2] => {
                h.uncompressed = v;
                seen_u = true;
            }
            [3] => {
                h.compressed = v;
                seen_c = true;
            }
            [5, 1] => values[0] = v,
            [7, 1] => values[1] = v,
            [8, 1] => values[2] = v,
            _ => {}
        })?;
        if !(seen_u && seen_c) {
            return Err("a page header without its sizes".into());
        }
        // PageType: DATA_PAGE 0, INDEX_PAGE 1, DICTIONARY_PAGE 2, DATA_PAGE_V2 3
        match page_type {
            Some(0) => h.num_values = values[0],
            Some(2) => {
                h.dictionary = true;
                h.num_values = values[1];
            }
            Some(3) => h.num_values = values[2],
            Some(_) => {}
            None => return Err("a page header without its type".into()),
        }
        Ok((h, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact-protocol page header: type, sizes, a dictionary header.
    fn header(uncompressed: i64, compressed: i64, dict_values: i64) -> Vec<u8> {
        let zz = |v: i64| -> Vec<u8> {
            let mut u = ((v << 1) ^ (v >> 63)) as u64;
            let mut out = Vec::new();
            loop {
                let b = (u & 0x7F) as u8;
                u >>= 7;
                if u == 0 {
                    out.push(b);
                    return out;
                }
                out.push(b | 0x80);
            }
        };
        let mut b = vec![0x15];
        b.extend(zz(2)); // type = DICTIONARY_PAGE
        b.push(0x15);
        b.extend(zz(uncompressed));
        b.push(0x15);
        b.extend(zz(compressed));
        b.push(0x4C); // field 7 (delta 4), struct
        b.push(0x15);
        b.extend(zz(dict_values));
        b.push(0x15);
        b.extend(zz(0)); // encoding
        b.push(0x00); // end of dictionary header
        b.push(0x00); // end of page header
        b
    }

    #[test]
    fn page_headers_parse_and_lies_are_reported() {
        let b = header(800, 12, 100);
        let (h, n) = PageHeader::parse(&b).unwrap();
        assert_eq!(n, b.len());
        assert_eq!(
            (h.uncompressed, h.compressed, h.num_values, h.dictionary),
            (800, 12, 100, true)
        );
        let b = header(982, 30, 400_000_000);
        let (h, _) = PageHeader::parse(&b).unwrap();
        assert_eq!(h.num_values, 400_000_000);
        // every truncation is an error, not a panic
        for k in 0..b.len() {
            assert!(PageHeader::parse(&b[..k]).is_err(), "{k}");
        }
        // a binary field longer than the bytes left
        let mut b = vec![0x98, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]; // field 9, binary
        b.extend([0; 4]);
        assert!(PageHeader::parse(&b).unwrap_err().contains("bytes left"));
        // a list announcing more elements than bytes
        assert!(
            PageHeader::parse(&[0x99, 0xF5, 0xFF, 0xFF, 0x03])
                .unwrap_err()
                .contains("elements")
        );
        // deep nesting is refused
        let deep: Vec<u8> = std::iter::repeat_n(0x9C, 100).collect(); // field 9, struct
        assert!(PageHeader::parse(&deep).unwrap_err().contains("nested"));
    }
}

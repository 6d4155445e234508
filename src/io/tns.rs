//! FROSTT `.tns` text tensors: one entry per line, `i j k ... value` with 1-based
//! coordinates, any number of dimensions.
//!
//! A plain FROSTT file has no header: the number of dimensions is the number of
//! tokens on the first entry line minus one, and the shape is the largest
//! coordinate along each dimension (or [`ImportOptions::shape`]). The reader also
//! accepts a header before the entries, and keeps its style in the metadata so
//! that the writer reproduces it (see [`TnsHeader`]). Lines starting with `#` or
//! `%` are comments.
//!
//! ```
//! use arrow_sparse::io::{self, tns};
//! let text = "1 1 2 1.5\n2 3 1 -4\n";
//! let msg = tns::read_from(text.as_bytes(), "inline.tns", &io::ImportOptions::default())?;
//! assert_eq!(msg.tensor.shape(), &[2, 3, 2]);
//! assert_eq!(msg.tensor.get::<f64>(&[1, 2, 0])?, Some(-4.0));
//!
//! let mut out = Vec::new();
//! tns::write_to(&mut out, &msg, &tns::TnsWriteOptions::default())?;
//! assert_eq!(String::from_utf8(out).unwrap(), "1 1 2 1.5\n2 3 1 -4.0\n");
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::EntryOrder;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use super::mtx::in_file;
use super::text::{
    Entries, Lines, TextLimit, TextValue, Tokens, is_blank, line_error, one_based, parse_u64,
    push_u64, show,
};
use super::{ImportOptions, meta, meta_get, open, write_atomic};
use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::tensor::validate::MAX_EXTENT;
use crate::tensor::{AnyTensor, CooTensor, CoordLayout};
use crate::types::{IndexType, ValueType};
use crate::{with_index_type, with_value_type};

/// The header lines before the entries of a `.tns` file.
///
/// ```
/// use arrow_sparse::io::{tns, ImportOptions, TnsHeader};
/// assert_eq!(TnsHeader::default(), TnsHeader::None);
/// // a `sptensor` header (Tensor Toolbox): rank, extents, number of entries
/// let text = "sptensor\n2\n5 6\n1\n1 2 3.5\n";
/// let msg = tns::read_from(text.as_bytes(), "mem.tns", &ImportOptions::default())?;
/// assert_eq!(msg.tensor.shape(), &[5, 6]); // from the header, not the entries
/// assert_eq!(msg.tensor.get::<f64>(&[0, 1])?, Some(3.5));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TnsHeader {
    /// No header (FROSTT): the shape is inferred from the entries.
    #[default]
    None,
    /// A line with the rank, then a line with the extents (ParTI, B-CSF).
    RankShape,
    /// Rank line, extents line, then a line with the number of entries.
    RankShapeNnz,
    /// Rank line, a line with the number of entries, then the extents. For a 1-D
    /// tensor this reads like [`RankShapeNnz`](Self::RankShapeNnz), so 1-D tensors
    /// are written that way.
    RankNnzShape,
    /// The Tensor Toolbox text form: a line `sptensor`, then rank, extents and the
    /// number of entries.
    Sptensor,
}

impl TnsHeader {
    /// The name used in the metadata.
    ///
    /// ```
    /// use arrow_sparse::io::TnsHeader;
    /// assert_eq!(TnsHeader::None.name(), "none");
    /// assert_eq!(TnsHeader::RankShape.name(), "rank-shape");
    /// assert_eq!(TnsHeader::RankShapeNnz.name(), "rank-shape-nnz");
    /// assert_eq!(TnsHeader::RankNnzShape.name(), "rank-nnz-shape");
    /// assert_eq!(TnsHeader::Sptensor.name(), "sptensor");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            TnsHeader::None => "none",
            TnsHeader::RankShape => "rank-shape",
            TnsHeader::RankShapeNnz => "rank-shape-nnz",
            TnsHeader::RankNnzShape => "rank-nnz-shape",
            TnsHeader::Sptensor => "sptensor",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [
            TnsHeader::None,
            TnsHeader::RankShape,
            TnsHeader::RankShapeNnz,
            TnsHeader::RankNnzShape,
            TnsHeader::Sptensor,
        ]
        .into_iter()
        .find(|h| h.name() == s)
    }
}

/// Options for writing `.tns` files.
///
/// ```
/// use arrow_sparse::io::{tns, TnsWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// assert_eq!(TnsWriteOptions::default().header, None);
/// let write = |t: AnyTensor| -> arrow_sparse::Result<String> {
///     let mut out = Vec::new();
///     tns::write_to(&mut out, &t.into(), &TnsWriteOptions::default())?;
///     Ok(String::from_utf8(out).unwrap())
/// };
/// // the entries reach the last index of every dimension: no header needed
/// let full = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 1.0)])?;
/// assert_eq!(write(full.into())?, "2 3 1.0\n");
/// // they do not: a rank-shape header keeps the shape
/// let short = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 0], 1.0)])?;
/// assert_eq!(write(short.into())?, "2\n2 3\n1 1 1.0\n");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct TnsWriteOptions {
    /// The header style; `None` takes it from the metadata ([`meta::TNS_HEADER`]),
    /// else writes no header. Without a header the file does not record the
    /// shape: a reader infers it from the largest coordinates. So when the style
    /// is not given here and the entries do not reach the last index of every
    /// dimension (or there are none), a [`TnsHeader::RankShape`] header is written
    /// instead of none, and the shape survives the round trip.
    pub header: Option<TnsHeader>,
}

impl TnsWriteOptions {
    /// Set the header style.
    ///
    /// ```
    /// use arrow_sparse::io::{tns, TnsHeader, TnsWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4, 2, 3], &[(vec![0, 1, 2], 8)])?.into();
    /// let options = TnsWriteOptions::default().with_header(TnsHeader::RankNnzShape);
    /// let mut out = Vec::new();
    /// tns::write_to(&mut out, &t.into(), &options)?;
    /// assert_eq!(String::from_utf8(out).unwrap(), "3\n1\n4 2 3\n1 2 3 8\n");
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_header(mut self, h: TnsHeader) -> Self {
        self.header = Some(h);
        self
    }
}

/// Read a `.tns` file.
///
/// ```
/// use arrow_sparse::io::{self, meta, tns};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.tns");
/// std::fs::write(&path, "3\n4 5 6\n2\n1 1 1 2.5\n4 5 6 -1\n")?; // rank, shape, nnz, entries
/// let msg = tns::read(&path, &io::ImportOptions::default())?;
/// assert_eq!((msg.tensor.shape(), msg.tensor.nnz()), (&[4usize, 5, 6][..], 2));
/// assert_eq!(msg.custom_metadata[0], (meta::TNS_HEADER.to_string(), "rank-shape-nnz".to_string()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read(path: impl AsRef<Path>, options: &ImportOptions) -> Result<TensorMessage> {
    let path = path.as_ref();
    let f = open(path)?;
    let len = f.metadata().ok().map(|m| m.len());
    let lines = Lines::new(f, &path.display().to_string()).with_input_len(len);
    read_lines(lines, options)
}

/// The next line that is neither blank nor a comment, copied.
fn next_content<R: Read>(lines: &mut Lines<R>) -> Result<Option<(u64, Vec<u8>)>> {
    while let Some((ln, line)) = lines.next_line()? {
        if is_comment_or_blank(line) {
            continue;
        }
        return Ok(Some((ln, line.to_vec())));
    }
    Ok(None)
}

#[inline]
fn is_comment_or_blank(line: &[u8]) -> bool {
    match line.first() {
        None | Some(b'#' | b'%') => true,
        Some(b' ' | b'\t') => is_blank(line),
        _ => false,
    }
}

fn tokens(line: &[u8]) -> Vec<&[u8]> {
    let mut t = Tokens::new(line);
    let mut out = Vec::new();
    while let Some(x) = t.next_token() {
        out.push(x);
    }
    out
}

/// What the header said.
struct Header {
    style: TnsHeader,
    shape: Option<Vec<usize>>,
    nnz: Option<(u64, u64)>,
    /// The first entry line, when reading the header consumed it.
    pending: Option<(u64, Vec<u8>)>,
    ndim: usize,
}

fn header_number(name: &str, ln: u64, line: &[u8], what: &str) -> Result<u64> {
    let t = tokens(line);
    match t.as_slice() {
        [x] => parse_u64(x)
            .filter(|&n| n <= MAX_EXTENT as u64)
            .ok_or_else(|| line_error(name, ln, format!("expected {what}, found {}", show(x)))),
        _ => Err(line_error(
            name,
            ln,
            format!(
                "expected {what} alone on the line, found {} tokens",
                t.len()
            ),
        )),
    }
}

fn header_shape(name: &str, ln: u64, line: &[u8], rank: usize) -> Result<Vec<usize>> {
    let t = tokens(line);
    if t.len() != rank {
        return Err(line_error(
            name,
            ln,
            format!(
                "expected the {rank} extents of the shape, found {} tokens",
                t.len()
            ),
        ));
    }
    t.iter()
        .map(|x| {
            parse_u64(x)
                .filter(|&n| n <= MAX_EXTENT as u64)
                .map(|n| n as usize)
                .ok_or_else(|| {
                    line_error(
                        name,
                        ln,
                        format!("expected an extent in 0..={MAX_EXTENT}, found {}", show(x)),
                    )
                })
        })
        .collect()
}

fn need<R: Read>(lines: &mut Lines<R>, what: &str) -> Result<(u64, Vec<u8>)> {
    let name = lines.name().to_string();
    next_content(lines)?.ok_or_else(|| {
        line_error(
            &name,
            lines.line_no() + 1,
            format!("the file ends inside the header: expected {what}"),
        )
    })
}

fn read_header<R: Read>(lines: &mut Lines<R>, options: &ImportOptions) -> Result<Option<Header>> {
    let name = lines.name().to_string();
    let Some((ln, first)) = next_content(lines)? else {
        return Ok(None);
    };
    let t = tokens(&first);
    let sptensor = t.len() == 1 && t[0].eq_ignore_ascii_case(b"sptensor");
    if t.len() >= 2 {
        let ndim = t.len() - 1;
        return Ok(Some(Header {
            style: TnsHeader::None,
            shape: options.shape.clone(),
            nnz: None,
            pending: Some((ln, first)),
            ndim,
        }));
    }
    let (rank_ln, rank_line) = if sptensor {
        need(lines, "the rank")?
    } else {
        (ln, first)
    };
    let rank = header_number(
        &name,
        rank_ln,
        &rank_line,
        "the rank (number of dimensions)",
    )?;
    if rank == 0 || rank > 64 {
        return Err(line_error(
            &name,
            rank_ln,
            format!("expected a rank in 1..=64, found {rank}"),
        ));
    }
    let rank = rank as usize;
    let (ln2, l2) = need(lines, "the shape")?;
    let (style, shape, nnz, pending) = if sptensor {
        let shape = header_shape(&name, ln2, &l2, rank)?;
        let (ln3, l3) = need(lines, "the number of entries")?;
        let nnz = header_number(&name, ln3, &l3, "the number of entries")?;
        (TnsHeader::Sptensor, shape, Some((nnz, ln3)), None)
    } else if rank > 1 && tokens(&l2).len() == 1 {
        let nnz = header_number(&name, ln2, &l2, "the number of entries")?;
        let (ln3, l3) = need(lines, "the shape")?;
        let shape = header_shape(&name, ln3, &l3, rank)?;
        (TnsHeader::RankNnzShape, shape, Some((nnz, ln2)), None)
    } else {
        let shape = header_shape(&name, ln2, &l2, rank)?;
        match next_content(lines)? {
            Some((ln3, l3)) if tokens(&l3).len() == 1 => {
                let nnz = header_number(&name, ln3, &l3, "the number of entries")?;
                (TnsHeader::RankShapeNnz, shape, Some((nnz, ln3)), None)
            }
            other => (TnsHeader::RankShape, shape, None, other),
        }
    };
    if let Some(s) = &options.shape
        && *s != shape
    {
        return Err(line_error(
            &name,
            ln2,
            format!("the header's shape {shape:?} differs from the shape {s:?} asked for"),
        ));
    }
    Ok(Some(Header {
        style,
        shape: Some(shape),
        nnz,
        pending,
        ndim: rank,
    }))
}

/// Read FROSTT text from any byte source; `name` is used in error messages.
///
/// ```
/// use arrow_sparse::io::{tns, ImportOptions};
/// let err = tns::read_from(&b"1 1 1 2.0\n1 2 x\n"[..], "bad.tns", &ImportOptions::default()).unwrap_err();
/// assert_eq!(err.to_string(), "cannot parse bad.tns:2: expected 3 coordinates and a value (4 tokens), found 3 tokens");
/// ```
pub fn read_from<R: Read>(reader: R, name: &str, options: &ImportOptions) -> Result<TensorMessage> {
    read_lines(Lines::new(reader, name), options)
}

fn read_lines<R: Read>(mut lines: Lines<R>, options: &ImportOptions) -> Result<TensorMessage> {
    let name = lines.name().to_string();
    let name = name.as_str();
    let Some(h) = read_header(&mut lines, options)? else {
        let Some(shape) = options.shape.clone() else {
            return Err(line_error(
                name,
                lines.line_no().max(1),
                "no entries and no header: the number of dimensions is unknown (give the shape in the read options)",
            ));
        };
        let empty = with_value_type!(options.value_type.unwrap_or(ValueType::Float64), V => {
            let coo = CooTensor::<V, i64>::try_new(shape, CoordLayout::RowMajor, EntryOrder::Canonical, Vec::<i64>::new().into(), Vec::<V>::new().into()).map_err(|e| in_file(name, e))?;
            finish(coo, name, options)?
        });
        return Ok(message(empty, TnsHeader::None));
    };
    if let Some(s) = &h.shape
        && s.len() != h.ndim
    {
        return Err(line_error(
            name,
            h.pending.as_ref().map_or(1, |p| p.0),
            format!(
                "the entries have {} coordinates but the shape asked for has {} dimensions",
                h.ndim,
                s.len()
            ),
        ));
    }
    let vt = options.value_type.unwrap_or(ValueType::Float64);
    let style = h.style;
    let tensor = with_value_type!(vt, V => {
        let coo = read_entries::<V, R>(&mut lines, h, options)?;
        finish(coo, name, options)?
    });
    Ok(message(tensor, style))
}

fn message(tensor: AnyTensor, style: TnsHeader) -> TensorMessage {
    TensorMessage {
        tensor,
        custom_metadata: vec![(meta::TNS_HEADER.to_string(), style.name().to_string())],
    }
}

fn finish<V: TextValue>(
    coo: CooTensor<V, i64>,
    name: &str,
    options: &ImportOptions,
) -> Result<AnyTensor> {
    let it = options.index_type.unwrap_or(IndexType::Int64);
    with_index_type!(it, I => Ok(AnyTensor::from(coo.cast_indices::<I>().map_err(|e| in_file(name, e))?)))
}

#[cold]
#[inline(never)]
fn entry_error(
    name: &str,
    ln: u64,
    line: &[u8],
    ndim: usize,
    shape: Option<&[usize]>,
    vt: ValueType,
) -> Error {
    let t = tokens(line);
    if t.len() != ndim + 1 {
        return line_error(
            name,
            ln,
            format!(
                "expected {} coordinates and a value ({} tokens), found {} tokens",
                ndim,
                ndim + 1,
                t.len()
            ),
        );
    }
    for (d, x) in t[..ndim].iter().enumerate() {
        let bound = shape.map_or(MAX_EXTENT, |s| s[d]);
        match parse_u64(x) {
            Some(c) if c >= 1 && c <= bound as u64 => {}
            _ => {
                return line_error(
                    name,
                    ln,
                    format!(
                        "expected coordinate {} in 1..={bound}, found {}",
                        d + 1,
                        show(x)
                    ),
                );
            }
        }
    }
    let kind = if vt.is_float() {
        "a real value".to_string()
    } else {
        format!("an {} value", vt.name())
    };
    line_error(
        name,
        ln,
        format!("expected {kind}, found {}", show(t[ndim])),
    )
}

fn read_entries<V: TextValue, R: Read>(
    lines: &mut Lines<R>,
    mut h: Header,
    options: &ImportOptions,
) -> Result<CooTensor<V, i64>> {
    let name = lines.name().to_string();
    let ndim = h.ndim;
    let bounds: Vec<u64> = match &h.shape {
        Some(s) => s.iter().map(|&x| x as u64).collect(),
        None => vec![MAX_EXTENT as u64; ndim],
    };
    let mut max = vec![0i64; ndim];
    // coordinates as int64 and the value
    let mut limit = TextLimit::new(
        options.limit,
        (ndim as u64).saturating_mul(8) + V::TYPE.byte_width() as u64,
        &name,
    );
    if let Some((n, at)) = h.nnz {
        limit.declared(n, at, lines)?;
    }
    let mut e = Entries::<V>::new(ndim, h.nnz.map(|n| n.0));
    let mut c = vec![0i64; ndim];
    let mut count = 0u64;
    let announced = h.nnz;
    let pending = h.pending.take();
    let mut one = |ln: u64, line: &[u8], e: &mut Entries<V>| -> Result<()> {
        if let Some((n, at)) = announced
            && count == n
        {
            return Err(line_error(
                &name,
                ln,
                format!("more entries than the {n} announced by the header (line {at})"),
            ));
        }
        let mut t = Tokens::new(line);
        let fail = || entry_error(&name, ln, line, ndim, h.shape.as_deref(), V::TYPE);
        for d in 0..ndim {
            match t.next_u64() {
                Ok(x) if x >= 1 && x <= bounds[d] => {
                    c[d] = x as i64 - 1;
                    max[d] = max[d].max(c[d]);
                }
                _ => return Err(fail()),
            }
        }
        let v = t.next_value::<V>(false).map_err(|_| fail())?;
        if t.next_token().is_some() {
            return Err(fail());
        }
        e.push(&c, v, ln);
        count += 1;
        Ok(())
    };
    if let Some((ln, line)) = pending {
        one(ln, &line, &mut e)?;
    }
    while let Some((ln, line)) = lines.next_line()? {
        if is_comment_or_blank(line) {
            continue;
        }
        one(ln, line, &mut e)?;
        limit.read_so_far(e.len() as u64, lines)?;
    }
    if let Some((n, at)) = announced
        && count < n
    {
        return Err(line_error(
            &name,
            lines.line_no(),
            format!(
                "the file ends after {count} of the {n} entries announced by the header (line {at}): truncated?"
            ),
        ));
    }
    e.apply_duplicates(options.duplicates, &name, &|c| one_based(c))?;
    let shape = match h.shape {
        Some(s) => s,
        None if e.len() == 0 => vec![0; ndim],
        None => max.iter().map(|&m| m as usize + 1).collect(),
    };
    let canonical = e.is_canonical();
    CooTensor::try_new(
        shape,
        CoordLayout::RowMajor,
        EntryOrder::from(canonical),
        e.coords.into(),
        e.values.into(),
    )
    .map_err(|err| in_file(&name, err))
}

/// Write a tensor of any format and dimensionality as a `.tns` file, atomically.
/// Stored entries are written in storage order (dense tensors: the non-zeros).
///
/// ```
/// use arrow_sparse::io::{tns, TnsHeader};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.tns");
/// let coo = CooTensor::<i64, i32>::from_entries(vec![4, 5, 6], &[(vec![3, 0, 5], 9)])?;
/// let opts = tns::TnsWriteOptions::default().with_header(TnsHeader::RankShape);
/// tns::write(&path, &AnyTensor::from(coo).into(), &opts)?;
/// assert_eq!(std::fs::read_to_string(&path)?, "3\n4 5 6\n4 1 6 9\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write(
    path: impl AsRef<Path>,
    message: &TensorMessage,
    options: &TnsWriteOptions,
) -> Result<()> {
    let path = path.as_ref();
    write_atomic(path, |f| {
        let mut w = BufWriter::with_capacity(1 << 20, f);
        write_to(&mut w, message, options)?;
        w.flush()?;
        Ok(())
    })
}

/// Write a tensor as FROSTT text to any byte sink.
///
/// ```
/// use arrow_sparse::io::tns::{self, TnsHeader, TnsWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<u8, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3)])?.into();
/// let mut out = Vec::new();
/// tns::write_to(&mut out, &t.into(), &TnsWriteOptions::default().with_header(TnsHeader::Sptensor))?;
/// assert_eq!(String::from_utf8(out).unwrap(), "sptensor\n2\n2 2\n1\n2 1 3\n");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn write_to<W: Write>(
    mut out: W,
    message: &TensorMessage,
    options: &TnsWriteOptions,
) -> Result<()> {
    let t = &message.tensor;
    let header = match options.header {
        Some(h) => h,
        None => match meta_get(&message.custom_metadata, meta::TNS_HEADER)
            .and_then(TnsHeader::parse)
            .unwrap_or_default()
        {
            TnsHeader::None if !shape_is_inferable(t)? => TnsHeader::RankShape,
            h => h,
        },
    };
    let nnz = t.nnz();
    let rank = t.shape().len();
    let mut buf: Vec<u8> = Vec::with_capacity((1 << 16) + 256);
    let shape_line = |buf: &mut Vec<u8>| {
        for (k, &x) in t.shape().iter().enumerate() {
            if k > 0 {
                buf.push(b' ');
            }
            push_u64(buf, x as u64);
        }
        buf.push(b'\n');
    };
    let num_line = |buf: &mut Vec<u8>, x: usize| {
        push_u64(buf, x as u64);
        buf.push(b'\n');
    };
    match header {
        TnsHeader::None => {}
        TnsHeader::RankShape => {
            num_line(&mut buf, rank);
            shape_line(&mut buf);
        }
        TnsHeader::RankNnzShape if rank > 1 => {
            num_line(&mut buf, rank);
            num_line(&mut buf, nnz);
            shape_line(&mut buf);
        }
        TnsHeader::RankShapeNnz | TnsHeader::RankNnzShape => {
            num_line(&mut buf, rank);
            shape_line(&mut buf);
            num_line(&mut buf, nnz);
        }
        TnsHeader::Sptensor => {
            buf.extend_from_slice(b"sptensor\n");
            num_line(&mut buf, rank);
            shape_line(&mut buf);
            num_line(&mut buf, nnz);
        }
    }
    with_value_type!(t.value_type(), V => write_entries::<V, W>(&mut out, t, buf, nnz))
}

/// Whether a reader infers the shape of `t` back from its entries: some entry
/// reaches the last index of every dimension.
fn shape_is_inferable(t: &AnyTensor) -> Result<bool> {
    let mut reached = vec![0usize; t.shape().len()];
    with_value_type!(t.value_type(), V => t.for_each_entry::<V>(&mut |c, _| {
        for (r, &x) in reached.iter_mut().zip(c) {
            *r = (*r).max(x + 1);
        }
    }))?;
    Ok(t.nnz() > 0 && reached == t.shape())
}

fn write_entries<V: TextValue, W: Write>(
    out: &mut W,
    t: &AnyTensor,
    mut buf: Vec<u8>,
    nnz: usize,
) -> Result<()> {
    let mut failed: Option<std::io::Error> = None;
    let mut count = 0usize;
    t.for_each_entry::<V>(&mut |c, v| {
        count += 1;
        for &x in c {
            push_u64(&mut buf, x as u64 + 1);
            buf.push(b' ');
        }
        v.write_text(&mut buf);
        buf.push(b'\n');
        if buf.len() >= 1 << 16 && failed.is_none() {
            if let Err(e) = out.write_all(&buf) {
                failed = Some(e);
            }
            buf.clear();
        }
    })?;
    if let Some(e) = failed {
        return Err(Error::Io(e));
    }
    if count != nnz {
        return Err(Error::invariant(
            "tensor entries",
            None,
            format!("nnz() is {nnz} but {count} entries were visited"),
        ));
    }
    out.write_all(&buf)?;
    Ok(())
}

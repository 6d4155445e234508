//! The `.npy` array format (NumPy NEP 1) of the arrays inside an npz archive: a
//! magic string, a version, a Python-literal header dict (`descr`,
//! `fortran_order`, `shape`) and the raw elements.
//!
//! Reading checks the header against the number of bytes the archive entry
//! declares, then reads the elements into a 64-byte aligned buffer that grows as
//! data arrives (so a hostile header cannot make it allocate more than the data
//! that actually follows), in native byte order.

use std::io::{ErrorKind, Read, Write};

use arrow_buffer::{Buffer, MutableBuffer};

use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::error::{Error, Result};
use crate::types::{IndexType, ValueType};

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// The longest header accepted.
const MAX_HEADER: usize = 1 << 16;
/// The most bytes reserved before the data arrives.
const MAX_RESERVE: usize = 64 << 20;

/// An element type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dtype {
    /// A numeric type this crate has.
    Num(ValueType),
    /// `|b1`.
    Bool,
    /// `|Sn`: byte strings of `n` bytes.
    Bytes(usize),
    /// `<Un`: UTF-32 strings of `n` characters.
    Unicode(usize),
    /// Anything else (object, complex, structured, datetime...), by its descr.
    Other(String),
}

impl Dtype {
    fn itemsize(&self) -> Option<usize> {
        match self {
            Dtype::Num(v) => Some(v.byte_width()),
            Dtype::Bool => Some(1),
            Dtype::Bytes(n) => Some(*n),
            Dtype::Unicode(n) => n.checked_mul(4),
            Dtype::Other(_) => None,
        }
    }
}

/// One decoded array.
#[derive(Debug)]
pub(crate) struct Npy {
    pub(crate) dtype: Dtype,
    pub(crate) descr: String,
    pub(crate) shape: Vec<usize>,
    pub(crate) fortran: bool,
    /// Number of elements (the product of `shape`, checked).
    count: usize,
    /// The elements in native byte order, 64-byte aligned.
    pub(crate) data: Buffer,
    /// The name used in errors (`file.npz: indices.npy`).
    pub(crate) what: String,
}

fn err(what: &str, detail: impl Into<String>) -> Error {
    Error::Parse {
        what: what.to_string(),
        detail: detail.into(),
    }
}

impl Npy {
    /// An array decoded by another container (HDF5): the elements of `shape`
    /// in native byte order. The element count is the product of `shape`
    /// (saturating; the caller checked it against the data).
    #[cfg_attr(not(feature = "hdf5"), allow(dead_code))]
    pub(crate) fn from_parts(
        dtype: Dtype,
        descr: String,
        shape: Vec<usize>,
        data: Buffer,
        what: String,
    ) -> Npy {
        let count = shape.iter().fold(1usize, |a, &x| a.saturating_mul(x));
        Npy {
            dtype,
            descr,
            shape,
            fortran: false,
            count,
            data,
            what,
        }
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Fail unless the array has `ndim` dimensions.
    pub(crate) fn expect_ndim(&self, ndim: usize) -> Result<()> {
        if self.shape.len() != ndim {
            return Err(err(
                &self.what,
                format!("expected a {ndim}-D array, found shape {:?}", self.shape),
            ));
        }
        Ok(())
    }

    /// The elements as values.
    pub(crate) fn values(&self) -> Result<ValueBuffer> {
        match self.dtype {
            Dtype::Num(vt) => {
                ValueBuffer::from_body(vt, &self.data, 0, self.len(), &self.what, false)
            }
            _ => Err(err(
                &self.what,
                format!(
                    "unsupported value dtype {:?} (expected int8..int64, uint8..uint64, float16, float32 or float64)",
                    self.descr
                ),
            )),
        }
    }

    /// The elements as indices (an integer dtype).
    pub(crate) fn indices(&self) -> Result<IndexBuffer> {
        match self.dtype {
            Dtype::Num(vt) => match vt.as_index_type() {
                Some(it) => {
                    IndexBuffer::from_body(it, &self.data, 0, self.len(), &self.what, false)
                }
                None => Err(self.not_integer()),
            },
            _ => Err(self.not_integer()),
        }
    }

    fn not_integer(&self) -> Error {
        err(
            &self.what,
            format!("expected an integer dtype, found {:?}", self.descr),
        )
    }

    /// A 1-D integer array as non-negative `usize`s.
    pub(crate) fn usizes(&self) -> Result<Vec<usize>> {
        self.expect_ndim(1)?;
        let idx = self.indices()?;
        (0..idx.len())
            .map(|i| {
                idx.get_usize(i)
                    .ok_or_else(|| err(&self.what, format!("element {i} is negative or too large")))
            })
            .collect()
    }

    /// A single string (0-d, or one element): `|S` or `<U`.
    pub(crate) fn string(&self) -> Result<String> {
        if self.len() != 1 {
            return Err(err(
                &self.what,
                format!("expected one string, found shape {:?}", self.shape),
            ));
        }
        let b = self.data.as_slice();
        match self.dtype {
            Dtype::Bytes(_) => {
                let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
                Ok(String::from_utf8_lossy(&b[..end]).into_owned())
            }
            Dtype::Unicode(_) => Ok(b
                .chunks_exact(4)
                .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .take_while(|&u| u != 0)
                .map(|u| char::from_u32(u).unwrap_or('\u{fffd}'))
                .collect()),
            _ => Err(err(
                &self.what,
                format!("expected a string, found dtype {:?}", self.descr),
            )),
        }
    }

    /// A single boolean (or integer) scalar.
    pub(crate) fn truth(&self) -> Result<bool> {
        if self.len() != 1 || self.dtype.itemsize().is_none() {
            return Err(err(
                &self.what,
                format!(
                    "expected one boolean, found {:?} of shape {:?}",
                    self.descr, self.shape
                ),
            ));
        }
        Ok(self.data.as_slice().iter().any(|&b| b != 0))
    }

    /// Whether a single numeric scalar is zero (`-0.0` included).
    pub(crate) fn is_zero_scalar(&self) -> Result<bool> {
        if self.len() != 1 {
            return Err(err(
                &self.what,
                format!("expected a scalar, found shape {:?}", self.shape),
            ));
        }
        let b = self.data.as_slice();
        Ok(match self.dtype {
            Dtype::Num(ValueType::Float16) => {
                half::f16::from_ne_bytes([b[0], b[1]]).to_f32() == 0.0
            }
            Dtype::Num(ValueType::Float32) => f32::from_ne_bytes([b[0], b[1], b[2], b[3]]) == 0.0,
            Dtype::Num(ValueType::Float64) => {
                f64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) == 0.0
            }
            Dtype::Num(_) | Dtype::Bool => b.iter().all(|&x| x == 0),
            _ => {
                return Err(err(
                    &self.what,
                    format!("expected a number, found dtype {:?}", self.descr),
                ));
            }
        })
    }
}

fn parse_descr(d: &str) -> Dtype {
    let b = d.as_bytes();
    let other = || Dtype::Other(d.to_string());
    if b.len() < 2 || !matches!(b[0], b'<' | b'>' | b'|' | b'=') {
        return other();
    }
    let Ok(n) = d[2..].parse::<usize>() else {
        return other();
    };
    let num = |t: ValueType| {
        if t.byte_width() == n {
            Dtype::Num(t)
        } else {
            other()
        }
    };
    match (b[1], n) {
        (b'i', 1) => num(ValueType::Int8),
        (b'i', 2) => num(ValueType::Int16),
        (b'i', 4) => num(ValueType::Int32),
        (b'i', 8) => num(ValueType::Int64),
        (b'u', 1) => num(ValueType::UInt8),
        (b'u', 2) => num(ValueType::UInt16),
        (b'u', 4) => num(ValueType::UInt32),
        (b'u', 8) => num(ValueType::UInt64),
        (b'f', 2) => num(ValueType::Float16),
        (b'f', 4) => num(ValueType::Float32),
        (b'f', 8) => num(ValueType::Float64),
        (b'b', 1) => Dtype::Bool,
        (b'S', n) => Dtype::Bytes(n),
        (b'U', n) => Dtype::Unicode(n),
        _ => other(),
    }
}

/// Whether the descr's byte order differs from this machine's.
fn swapped(d: &str) -> bool {
    match d.as_bytes().first() {
        Some(b'<') => cfg!(target_endian = "big"),
        Some(b'>') => cfg!(target_endian = "little"),
        _ => false,
    }
}

/// A Python literal of the header dict.
#[derive(Debug)]
enum Lit {
    Str(String),
    Bool(bool),
    Int(u64),
    Seq(Vec<Lit>),
    Dict(Vec<(String, Lit)>),
    None,
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn value(&mut self, depth: usize) -> Option<Lit> {
        if depth > 8 {
            return None;
        }
        self.ws();
        let c = *self.s.get(self.i)?;
        match c {
            b'\'' | b'"' => {
                self.i += 1;
                let start = self.i;
                while *self.s.get(self.i)? != c {
                    if self.s[self.i] == b'\\' {
                        return None;
                    }
                    self.i += 1;
                }
                let out = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.i += 1;
                Some(Lit::Str(out))
            }
            b'(' | b'[' => {
                let close = if c == b'(' { b')' } else { b']' };
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.eat(close) {
                        return Some(Lit::Seq(items));
                    }
                    items.push(self.value(depth + 1)?);
                    if !self.eat(b',') {
                        return self.eat(close).then_some(Lit::Seq(items));
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.eat(b'}') {
                        return Some(Lit::Dict(items));
                    }
                    let Lit::Str(k) = self.value(depth + 1)? else {
                        return None;
                    };
                    if !self.eat(b':') {
                        return None;
                    }
                    items.push((k, self.value(depth + 1)?));
                    if !self.eat(b',') {
                        return self.eat(b'}').then_some(Lit::Dict(items));
                    }
                }
            }
            b'0'..=b'9' => {
                let start = self.i;
                while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                    self.i += 1;
                }
                let n = std::str::from_utf8(&self.s[start..self.i])
                    .ok()?
                    .parse()
                    .ok()?;
                if self.s.get(self.i) == Some(&b'L') {
                    self.i += 1;
                }
                Some(Lit::Int(n))
            }
            _ => {
                for (word, lit) in [
                    (&b"True"[..], Lit::Bool(true)),
                    (b"False", Lit::Bool(false)),
                    (b"None", Lit::None),
                ] {
                    if self.s[self.i..].starts_with(word) {
                        self.i += word.len();
                        return Some(lit);
                    }
                }
                None
            }
        }
    }
}

fn read_exact_or<R: Read>(r: &mut R, buf: &mut [u8], what: &str, part: &str) -> Result<()> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        ErrorKind::UnexpectedEof => {
            err(what, format!("truncated: the file ends inside the {part}"))
        }
        _ => err(what, format!("cannot read the {part}: {e}")),
    })
}

/// Read one array. `declared` is the entry's uncompressed size from the archive.
pub(crate) fn read<R: Read>(mut r: R, declared: u64, what: &str) -> Result<Npy> {
    let mut pre = [0u8; 8];
    read_exact_or(&mut r, &mut pre, what, "npy preamble")?;
    if &pre[..6] != MAGIC {
        return Err(err(
            what,
            "not a .npy array (the magic string \\x93NUMPY is missing)",
        ));
    }
    let (len_bytes, utf8) = match pre[6] {
        1 => (2, false),
        2 => (4, false),
        3 => (4, true),
        v => {
            return Err(err(
                what,
                format!(
                    "unsupported .npy version {v}.{} (expected 1, 2 or 3)",
                    pre[7]
                ),
            ));
        }
    };
    let mut lb = [0u8; 4];
    read_exact_or(&mut r, &mut lb[..len_bytes], what, "npy header length")?;
    let hlen = u32::from_le_bytes(lb) as usize;
    if hlen > MAX_HEADER {
        return Err(err(
            what,
            format!("the npy header is {hlen} bytes, more than the {MAX_HEADER} accepted"),
        ));
    }
    let mut header = vec![0u8; hlen];
    read_exact_or(&mut r, &mut header, what, "npy header")?;
    if !utf8 && !header.is_ascii() {
        return Err(err(what, "the npy header is not ASCII"));
    }
    let bad_header = || {
        err(
            what,
            format!(
                "malformed npy header {} (expected {{'descr': ..., 'fortran_order': ..., 'shape': (...)}})",
                super::text::show(&header)
            ),
        )
    };
    let mut p = Parser { s: &header, i: 0 };
    let Some(Lit::Dict(items)) = p.value(0) else {
        return Err(bad_header());
    };
    let get = |k: &str| items.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let descr = match get("descr") {
        Some(Lit::Str(s)) => s.clone(),
        Some(other) => format!("{other:?}"),
        None => return Err(bad_header()),
    };
    let fortran = match get("fortran_order") {
        Some(Lit::Bool(b)) => *b,
        _ => return Err(bad_header()),
    };
    let shape: Vec<usize> = match get("shape") {
        Some(Lit::Seq(s)) => s
            .iter()
            .map(|x| match x {
                Lit::Int(n) => usize::try_from(*n).ok(),
                _ => None,
            })
            .collect::<Option<_>>()
            .ok_or_else(bad_header)?,
        _ => return Err(bad_header()),
    };
    let dtype = parse_descr(&descr);
    let Some(itemsize) = dtype.itemsize() else {
        let why = if descr.contains('O') {
            format!("object arrays (pickled Python objects) are not read: dtype {descr:?}")
        } else {
            format!(
                "unsupported dtype {descr:?} (expected integers, float16/32/64, bool or strings)"
            )
        };
        return Err(err(what, why));
    };
    let overflow = || {
        err(
            what,
            format!("the array size {shape:?} x {itemsize} bytes overflows"),
        )
    };
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(overflow)?;
    let bytes = count.checked_mul(itemsize).ok_or_else(overflow)?;
    let head = (8 + len_bytes + hlen) as u64;
    if declared.checked_sub(head) != Some(bytes as u64) {
        return Err(err(
            what,
            format!(
                "the header announces {bytes} bytes of data (shape {shape:?}, dtype {descr:?}) but the archive entry holds {}",
                declared.saturating_sub(head)
            ),
        ));
    }
    let mut buf = MutableBuffer::new(bytes.min(MAX_RESERVE));
    let mut chunk = vec![0u8; 1 << 16];
    while buf.len() < bytes {
        let want = chunk.len().min(bytes - buf.len());
        match r.read(&mut chunk[..want]) {
            Ok(0) => {
                return Err(err(
                    what,
                    format!(
                        "truncated: {} of the {bytes} bytes of data are present",
                        buf.len()
                    ),
                ));
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(err(what, format!("cannot read the data: {e}"))),
        }
    }
    // reading to the end lets the archive reader verify the entry's checksum
    loop {
        match r.read(&mut chunk[..1]) {
            Ok(0) => break,
            Ok(_) => return Err(err(what, "unexpected bytes after the array data")),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(err(what, format!("cannot read the data: {e}"))),
        }
    }
    if swapped(&descr) && itemsize > 1 {
        let w = if matches!(dtype, Dtype::Unicode(_)) {
            4
        } else {
            itemsize
        };
        buf.as_slice_mut()
            .chunks_exact_mut(w)
            .for_each(|c| c.reverse());
    }
    Ok(Npy {
        dtype,
        descr,
        shape,
        fortran,
        count,
        data: buf.into(),
        what: what.to_string(),
    })
}

/// The descr of a numeric type in this machine's byte order.
pub(crate) fn descr(vt: ValueType) -> String {
    let order = if vt.byte_width() == 1 {
        '|'
    } else if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    let kind = match vt {
        ValueType::Float16 | ValueType::Float32 | ValueType::Float64 => 'f',
        ValueType::UInt8 | ValueType::UInt16 | ValueType::UInt32 | ValueType::UInt64 => 'u',
        _ => 'i',
    };
    format!("{order}{kind}{}", vt.byte_width())
}

/// The descr of an index type.
pub(crate) fn index_descr(it: IndexType) -> String {
    let vt = match it {
        IndexType::Int8 => ValueType::Int8,
        IndexType::Int16 => ValueType::Int16,
        IndexType::Int32 => ValueType::Int32,
        IndexType::Int64 => ValueType::Int64,
        IndexType::UInt8 => ValueType::UInt8,
        IndexType::UInt16 => ValueType::UInt16,
        IndexType::UInt32 => ValueType::UInt32,
        IndexType::UInt64 => ValueType::UInt64,
    };
    descr(vt)
}

/// Write one array (format version 1.0; 2.0 if the header needs it). `data`
/// holds the elements in the byte order `descr` names.
pub(crate) fn write<W: Write>(w: &mut W, descr: &str, shape: &[usize], data: &[u8]) -> Result<()> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    let v1 = header.len() + 11 < 65536;
    let pre = if v1 { 10 } else { 12 };
    // pad with spaces so that the data starts at a multiple of 64 bytes
    let total = (pre + header.len() + 1).div_ceil(64) * 64;
    header.extend(std::iter::repeat_n(' ', total - pre - header.len() - 1));
    header.push('\n');
    w.write_all(MAGIC)?;
    if v1 {
        w.write_all(&[1, 0])?;
        w.write_all(&(header.len() as u16).to_le_bytes())?;
    } else {
        w.write_all(&[2, 0])?;
        w.write_all(&(header.len() as u32).to_le_bytes())?;
    }
    w.write_all(header.as_bytes())?;
    w.write_all(data)?;
    Ok(())
}

/// The whole serialized size of an array (for choosing zip64).
pub(crate) fn serialized_len(data_len: usize) -> u64 {
    data_len as u64 + 256
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(descr: &str, shape: &[usize], data: &[u8]) -> Npy {
        let mut out = Vec::new();
        write(&mut out, descr, shape, data).unwrap();
        assert_eq!(out.len() % 64, data.len() % 64);
        read(&out[..], out.len() as u64, "t").unwrap()
    }

    #[test]
    fn headers_round_trip() {
        let a = round_trip("<i8", &[3], &[1, 0, 0, 0, 0, 0, 0, 0].repeat(3));
        assert_eq!(
            (a.dtype, a.shape, a.fortran),
            (Dtype::Num(ValueType::Int64), vec![3], false)
        );
        let s = round_trip("|S3", &[], b"csr");
        assert_eq!(s.string().unwrap(), "csr");
        let e = round_trip("<f4", &[0, 2], &[]);
        assert_eq!(e.len(), 0);
    }

    #[test]
    fn big_endian_is_swapped() {
        let mut out = Vec::new();
        write(&mut out, ">i4", &[2], &[0, 0, 0, 7, 0, 0, 1, 0]).unwrap();
        let a = read(&out[..], out.len() as u64, "t").unwrap();
        let IndexBuffer::Int32(v) = a.indices().unwrap() else {
            panic!()
        };
        assert_eq!(v.as_ref(), &[7, 256]);
    }

    #[test]
    fn element_counts_are_checked() {
        // zero-width strings: no data, but a shape whose product overflows
        let mut out = Vec::new();
        let big = 1usize << 40;
        write(&mut out, "|S0", &[big, big], &[]).unwrap();
        let e = read(&out[..], out.len() as u64, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("overflows"), "{e}");
    }

    #[test]
    fn bad_headers_are_errors() {
        let mut out = Vec::new();
        write(&mut out, "|O", &[1], &[0; 8]).unwrap();
        let e = read(&out[..], out.len() as u64, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("object arrays"), "{e}");
        let mut out = Vec::new();
        write(&mut out, "<f8", &[4], &[0; 32]).unwrap();
        let e = read(&out[..40], out.len() as u64, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = read(&out[..], out.len() as u64 - 8, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("announces 32 bytes"), "{e}");
        let e = read(&b"PK\x03\x04xxxxxxxx"[..], 12, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("magic"), "{e}");
    }
}

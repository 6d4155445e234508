//! Binsparse (GraphBLAS binsparse-specification, version 0.1) in the NPZ container,
//! as the Python reference (`binsparse` on PyPI) writes it: a 0-d unicode array
//! `binsparse` holding the JSON descriptor `{"binsparse": {...}}` plus one array per
//! named binary array (`pointers_to_1`, `indices_0`, `values`, ...).
//!
//! Reading ([`npz::read`](super::npz::read) recognises the archive by its
//! `binsparse` entry) maps the formats onto this crate's tensors:
//!
//! | Binsparse | tensor |
//! |---|---|
//! | `DVEC`, `DMAT` / `DMATR` | dense, row-major |
//! | `DMATC` | dense, column-major (strides `[1, rows]`) |
//! | `CVEC` | 1-D COO |
//! | `CSR` / `CSC` | CSR / CSC, the arrays zero-copy |
//! | `COO` / `COOR` | COO, canonical |
//! | `COOC` | COO (entries in the file's order) |
//! | `DCSR` / `DCSC` | 2-D CSF, axis order `[0, 1]` / `[1, 0]` (`indices_0`, `pointers_to_1`, `indices_1` are its levels) |
//! | `custom`: `dense` levels only | dense, the `transpose` as strides |
//! | `custom`: `dense` then `sparse` (rank 1), 2-D | CSR (CSC when transposed) |
//! | `custom`: `sparse` levels of rank 1 only | CSF, axis order = the `transpose` |
//! | `custom`: any other chain of `dense` / `sparse` levels | COO |
//!
//! Writing picks the tensor's own format by default: a 2-D CSF is `DCSR` (axis
//! order `[0, 1]`) or `DCSC` (`[1, 0]`), an N-D CSF a `custom` chain of rank-1
//! sparse levels with its axis order as the `transpose`.
//!
//! The descriptor is checked before any array is trusted: known format, shape of
//! the format's rank, `data_types` naming every array with its real dtype,
//! `number_of_stored_values` equal to the number of values, pointers starting at
//! 0 and non-decreasing, indices inside the shape and sorted without duplicates.
//! Every failure is an [`Error::Parse`] naming the file and the descriptor key
//! or array. Level kinds the crate cannot carry, complex values
//! (`complex[...]`, `hermitian_*`) and non-zero `fill_value`s are
//! [`Error::Unsupported`] naming the level or key. `iso[T]` values are expanded to
//! one value per stored entry; `structure` (`symmetric_*`, `skew_symmetric_*`)
//! is expanded to both triangles, as Matrix Market symmetry is. Memory follows
//! [`ReadLimit`](crate::limit::ReadLimit): positions of dense levels and
//! expanded iso values are checked against it before they are allocated.
//!
//! The whole descriptor (with keys this crate does not know, inside and outside
//! the `binsparse` namespace) is kept in the metadata key
//! [`meta::BINSPARSE_DESCRIPTOR`]; it travels through `.arrow` and `.parquet`
//! files, and writing Binsparse again re-emits its format, `iso` (when all values
//! are still equal), `structure` (when the matrix is still symmetric; one
//! triangle is written), `fill` and the extra keys.
//!
//! ```
//! use std::io::Cursor;
//! use arrow_sparse::io::{npz, binsparse::BinsparseFormat, meta, ImportOptions, NpzWriteOptions};
//! use arrow_sparse::{AnyTensor, CooTensor, Format};
//! let t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![4, 5], &[(vec![0, 4], 1.0), (vec![3, 0], 2.0)])?.into();
//! let options = NpzWriteOptions::default().with_binsparse_format(BinsparseFormat::Dcsr);
//! let bytes = npz::write_to(Cursor::new(Vec::new()), &t.clone().into(), &options)?.into_inner();
//! let back = npz::read_from(Cursor::new(bytes), "m.npz", &ImportOptions::default())?;
//! assert_eq!(back.tensor.to_coo::<f32, i64>()?, t.to_coo::<f32, i64>()?.canonicalize()?);
//! let descriptor = back.custom_metadata.iter().find(|(k, _)| k == meta::BINSPARSE_DESCRIPTOR).unwrap();
//! assert!(descriptor.1.contains("\"format\":\"DCSR\""));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use std::io::{Read, Seek};

use arrow_buffer::{ArrowNativeType, Buffer, ScalarBuffer};
use serde_json::{Map, Value as Json};

use super::npz::{Archive, Array, err, index_array, value_array};
use super::text::TextValue;
use super::{meta, meta_get};
use crate::buffer::{IndexBuffer, ValueBuffer, with_index_slice};
use crate::error::{Error, Result};
use crate::tensor::{
    AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyTensor, CompressedAxis, CoordLayout, EntryOrder, Format,
    TensorOptions,
};
use crate::types::{Index, IndexType, Value, ValueType};
use crate::with_value_type;

/// The Binsparse version written.
const VERSION: &str = "0.1.0";
/// The most levels a custom format may have.
const MAX_LEVELS: usize = 64;

/// A predefined Binsparse format.
///
/// ```
/// use arrow_sparse::io::binsparse::BinsparseFormat;
/// assert_eq!(BinsparseFormat::parse("DCSC"), Some(BinsparseFormat::Dcsc));
/// assert_eq!(BinsparseFormat::Dcsc.name(), "DCSC");
/// assert_eq!(BinsparseFormat::parse("BSR"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinsparseFormat {
    /// Dense vector: `values`.
    Dvec,
    /// Dense matrix, row-major (an alias of `DMATR`): `values`.
    Dmat,
    /// Dense matrix, row-major: `values`.
    Dmatr,
    /// Dense matrix, column-major: `values`.
    Dmatc,
    /// Sparse vector: `indices_0`, `values`.
    Cvec,
    /// Compressed sparse rows: `pointers_to_1`, `indices_1`, `values`.
    Csr,
    /// Compressed sparse columns: `pointers_to_1`, `indices_1`, `values`.
    Csc,
    /// Doubly compressed sparse rows: `indices_0`, `pointers_to_1`, `indices_1`, `values`.
    Dcsr,
    /// Doubly compressed sparse columns: `indices_0`, `pointers_to_1`, `indices_1`, `values`.
    Dcsc,
    /// Coordinates sorted by row (an alias of `COOR`): `indices_0`, `indices_1`, `values`.
    Coo,
    /// Coordinates sorted by row: `indices_0` (rows), `indices_1` (columns), `values`.
    Coor,
    /// Coordinates sorted by column: `indices_0` (columns), `indices_1` (rows), `values`.
    Cooc,
}

const FORMATS: [BinsparseFormat; 12] = [
    BinsparseFormat::Dvec,
    BinsparseFormat::Dmat,
    BinsparseFormat::Dmatr,
    BinsparseFormat::Dmatc,
    BinsparseFormat::Cvec,
    BinsparseFormat::Csr,
    BinsparseFormat::Csc,
    BinsparseFormat::Dcsr,
    BinsparseFormat::Dcsc,
    BinsparseFormat::Coo,
    BinsparseFormat::Coor,
    BinsparseFormat::Cooc,
];

impl BinsparseFormat {
    /// The name in the descriptor.
    ///
    /// ```
    /// use arrow_sparse::io::binsparse::BinsparseFormat;
    /// assert_eq!(BinsparseFormat::Csr.name(), "CSR");
    /// assert_eq!(BinsparseFormat::Dmatc.name(), "DMATC");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            BinsparseFormat::Dvec => "DVEC",
            BinsparseFormat::Dmat => "DMAT",
            BinsparseFormat::Dmatr => "DMATR",
            BinsparseFormat::Dmatc => "DMATC",
            BinsparseFormat::Cvec => "CVEC",
            BinsparseFormat::Csr => "CSR",
            BinsparseFormat::Csc => "CSC",
            BinsparseFormat::Dcsr => "DCSR",
            BinsparseFormat::Dcsc => "DCSC",
            BinsparseFormat::Coo => "COO",
            BinsparseFormat::Coor => "COOR",
            BinsparseFormat::Cooc => "COOC",
        }
    }

    /// The format a descriptor name stands for (exact, upper case).
    ///
    /// ```
    /// use arrow_sparse::io::binsparse::BinsparseFormat;
    /// assert_eq!(BinsparseFormat::parse("COOC"), Some(BinsparseFormat::Cooc));
    /// assert_eq!(BinsparseFormat::parse("csr"), None);
    /// ```
    pub fn parse(s: &str) -> Option<BinsparseFormat> {
        FORMATS.into_iter().find(|f| f.name() == s)
    }

    /// The number of dimensions.
    fn ndim(self) -> usize {
        match self {
            BinsparseFormat::Dvec | BinsparseFormat::Cvec => 1,
            _ => 2,
        }
    }

    /// The level chain and whether the levels are transposed.
    fn levels(self) -> (Vec<Level>, bool) {
        use BinsparseFormat as F;
        use Level::{Dense, Sparse};
        match self {
            F::Dvec => (vec![Dense(1)], false),
            F::Dmat | F::Dmatr => (vec![Dense(1), Dense(1)], false),
            F::Dmatc => (vec![Dense(1), Dense(1)], true),
            F::Cvec => (vec![Sparse(1)], false),
            F::Csr => (vec![Dense(1), Sparse(1)], false),
            F::Csc => (vec![Dense(1), Sparse(1)], true),
            F::Dcsr => (vec![Sparse(1), Sparse(1)], false),
            F::Dcsc => (vec![Sparse(1), Sparse(1)], true),
            F::Coo | F::Coor => (vec![Sparse(2)], false),
            F::Cooc => (vec![Sparse(2)], true),
        }
    }
}

/// A level above the element level, with its rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Dense(usize),
    Sparse(usize),
}

/// The checked descriptor.
struct Descriptor {
    /// The `binsparse` namespace.
    ns: Map<String, Json>,
    shape: Vec<usize>,
    nnz: usize,
    levels: Vec<Level>,
    /// Level dimension `k` is tensor dimension `transpose[k]`.
    transpose: Vec<usize>,
}

fn key_err(name: &str, key: &str, detail: impl Into<String>) -> Error {
    err(&format!("{name}: binsparse descriptor `{key}`"), detail)
}

fn as_usize(v: &Json) -> Option<usize> {
    v.as_u64().and_then(|x| usize::try_from(x).ok())
}

fn parse_descriptor(name: &str, json: &Json) -> Result<Descriptor> {
    let ns = json
        .get("binsparse")
        .and_then(Json::as_object)
        .ok_or_else(|| {
            key_err(
                name,
                "binsparse",
                "the descriptor has no `binsparse` object",
            )
        })?
        .clone();
    if let Some(v) = ns.get("version") {
        let ok = v.as_str().is_some_and(|s| {
            let mut parts = s.split('.');
            parts.next() == Some("0") && parts.next() == Some("1")
        });
        if !ok {
            return Err(key_err(
                name,
                "version",
                format!("expected a 0.1 version string, found {v}"),
            ));
        }
    }
    let format = ns
        .get("format")
        .and_then(Json::as_str)
        .ok_or_else(|| key_err(name, "format", "missing, or not a string"))?
        .to_string();
    let shape: Vec<usize> = ns
        .get("shape")
        .and_then(Json::as_array)
        .and_then(|a| a.iter().map(as_usize).collect::<Option<Vec<_>>>())
        .ok_or_else(|| {
            key_err(
                name,
                "shape",
                "missing, or not an array of non-negative integers",
            )
        })?;
    let nnz = ns
        .get("number_of_stored_values")
        .and_then(as_usize)
        .ok_or_else(|| {
            key_err(
                name,
                "number_of_stored_values",
                "missing, or not a non-negative integer",
            )
        })?;
    if !ns.get("data_types").is_some_and(Json::is_object) {
        return Err(key_err(name, "data_types", "missing, or not an object"));
    }
    let (levels, transpose) = if format == "custom" {
        custom_levels(name, &ns, shape.len())?
    } else {
        let f = BinsparseFormat::parse(&format).ok_or_else(|| {
            key_err(
                name,
                "format",
                format!(
                    "unknown format {format:?} (expected custom or one of {})",
                    FORMATS.map(BinsparseFormat::name).join(", ")
                ),
            )
        })?;
        if shape.len() != f.ndim() {
            return Err(key_err(
                name,
                "shape",
                format!("{format} is {}-D, the shape is {shape:?}", f.ndim()),
            ));
        }
        let (levels, t) = f.levels();
        let transpose = if t {
            vec![1, 0]
        } else {
            (0..f.ndim()).collect()
        };
        (levels, transpose)
    };
    if shape.is_empty() {
        return Err(key_err(name, "shape", "0-D tensors are not supported"));
    }
    Ok(Descriptor {
        ns,
        shape,
        nnz,
        levels,
        transpose,
    })
}

fn custom_levels(
    name: &str,
    ns: &Map<String, Json>,
    ndim: usize,
) -> Result<(Vec<Level>, Vec<usize>)> {
    let custom = ns
        .get("custom")
        .and_then(Json::as_object)
        .ok_or_else(|| key_err(name, "custom", "a custom format needs a `custom` object"))?;
    let mut level = custom
        .get("level")
        .ok_or_else(|| key_err(name, "custom.level", "missing"))?;
    let mut levels = Vec::new();
    let mut rank = 0usize;
    loop {
        let k = levels.len();
        let key = format!("custom.level (level {k})");
        let desc = level
            .get("level_desc")
            .and_then(Json::as_str)
            .ok_or_else(|| key_err(name, &key, "no `level_desc` string"))?;
        if desc == "element" {
            break;
        }
        if k >= MAX_LEVELS {
            return Err(key_err(
                name,
                &key,
                format!("more than {MAX_LEVELS} levels"),
            ));
        }
        let r = level
            .get("rank")
            .and_then(as_usize)
            .filter(|&r| r >= 1 && r <= ndim)
            .ok_or_else(|| {
                key_err(
                    name,
                    &key,
                    format!("`rank` must be an integer from 1 to the tensor's {ndim} dimensions"),
                )
            })?;
        levels.push(match desc {
            "dense" => Level::Dense(r),
            "sparse" => Level::Sparse(r),
            other => {
                return Err(Error::Unsupported(format!(
                    "{name}: binsparse custom level {k} has level_desc {other:?}, which arrow-sparse cannot map (only dense, sparse and element levels)"
                )));
            }
        });
        rank += r;
        level = level
            .get("level")
            .ok_or_else(|| key_err(name, &key, "no sub-level `level`"))?;
    }
    if rank != ndim {
        return Err(key_err(
            name,
            "custom.level",
            format!("the levels have {rank} dimensions in all, the shape has {ndim}"),
        ));
    }
    let transpose = match custom.get("transpose") {
        None | Some(Json::Null) => (0..ndim).collect(),
        Some(t) => {
            let p: Option<Vec<usize>> = t.as_array().and_then(|a| a.iter().map(as_usize).collect());
            let ok = p.as_ref().is_some_and(|p| {
                let mut seen = vec![false; ndim];
                p.len() == ndim
                    && p.iter()
                        .all(|&d| d < ndim && !std::mem::replace(&mut seen[d], true))
            });
            if !ok {
                return Err(key_err(
                    name,
                    "custom.transpose",
                    format!("expected a permutation of 0..{ndim}, found {t}"),
                ));
            }
            p.unwrap_or_default()
        }
    };
    Ok((levels, transpose))
}

/// A `data_types` entry: the element type and whether it is `iso[...]`.
fn data_type(name: &str, ns: &Map<String, Json>, key: &str) -> Result<(ValueType, bool)> {
    let what = format!("data_types.{key}");
    let decl = ns
        .get("data_types")
        .and_then(|d| d.get(key))
        .ok_or_else(|| key_err(name, &what, "missing"))?
        .as_str()
        .ok_or_else(|| key_err(name, &what, "not a string"))?;
    let (base, iso) = match decl.strip_prefix("iso[").and_then(|s| s.strip_suffix(']')) {
        Some(inner) => (inner, true),
        None => (decl, false),
    };
    if base.starts_with("complex[") {
        return Err(Error::Unsupported(format!(
            "{name}: binsparse {what} is {decl:?}: complex values are not supported"
        )));
    }
    let vt = match base {
        "bint8" => Some(ValueType::UInt8),
        "float16" => None,
        other => ValueType::from_name(other),
    }
    .ok_or_else(|| {
        key_err(
            name,
            &what,
            format!("unknown type {decl:?} (expected int8..int64, uint8..uint64, float32, float64, bint8, optionally in iso[...])"),
        )
    })?;
    Ok((vt, iso))
}

trait FromName: Sized {
    fn from_name(s: &str) -> Option<Self>;
}

/// The value types a Binsparse file may hold: every value type but float16,
/// which Binsparse does not have.
fn value_types() -> impl Iterator<Item = ValueType> {
    ValueType::ALL
        .into_iter()
        .filter(|&v| v != ValueType::Float16)
}

impl FromName for ValueType {
    fn from_name(s: &str) -> Option<ValueType> {
        value_types().find(|v| v.name() == s)
    }
}

/// Where the named arrays of a Binsparse file live: an npz archive, or (feature
/// `hdf5`) an HDF5 group. The format logic above and below sees only this.
pub(super) trait Container {
    /// The file name, for errors.
    fn name(&self) -> &str;
    /// How errors name the array `key` (`file.npz: key.npy`, `file.h5: /key`).
    fn what(&self, key: &str) -> String;
    /// The descriptor's JSON text.
    fn header(&mut self) -> Result<String>;
    /// Load the array `key`, which `layout` needs: a typed error when it is
    /// missing, the read limit checked before anything is allocated.
    fn need(&mut self, key: &str, layout: &str) -> Result<super::npy::Npy>;
    /// Fail unless `extra` bytes more than the arrays loaded so far fit the read limit.
    fn budget(&self, what: String, extra: u64) -> Result<()>;
    /// A tensor constructor's error as a parse error naming the file.
    fn fail(&self, e: Error) -> Error {
        match e {
            e @ Error::Parse { .. } => e,
            e => err(self.name(), e.to_string()),
        }
    }
}

impl<R: Read + Seek> Container for Archive<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn what(&self, key: &str) -> String {
        format!("{}: {key}.npy", self.name)
    }

    fn header(&mut self) -> Result<String> {
        self.load("binsparse")?.string()
    }

    fn need(&mut self, key: &str, layout: &str) -> Result<super::npy::Npy> {
        Archive::need(self, key, layout)
    }

    fn budget(&self, what: String, extra: u64) -> Result<()> {
        self.limit
            .check(what, self.loaded.saturating_add(extra), self.input_bytes)
    }
}

/// Load a 1-D array whose dtype must be the declared one.
fn load<C: Container + ?Sized>(
    a: &mut C,
    d: &Descriptor,
    key: &str,
) -> Result<(super::npy::Npy, bool)> {
    let (vt, iso) = data_type(a.name(), &d.ns, key)?;
    let npy = a.need(key, "a Binsparse file of this format")?;
    npy.expect_ndim(1)?;
    if npy.dtype != super::npy::Dtype::Num(vt) {
        return Err(err(
            &npy.what,
            format!(
                "the array has dtype {:?}, data_types.{key} declares {}",
                npy.descr,
                vt.name()
            ),
        ));
    }
    Ok((npy, iso))
}

fn load_index<C: Container + ?Sized>(a: &mut C, d: &Descriptor, key: &str) -> Result<IndexBuffer> {
    let (npy, iso) = load(a, d, key)?;
    if iso {
        return Err(key_err(
            a.name(),
            &format!("data_types.{key}"),
            "iso[...] applies to values only",
        ));
    }
    npy.indices()
}

/// The index array as `i64`s (copied only when of another type).
fn i64s(b: &IndexBuffer, what: &str) -> Result<ScalarBuffer<i64>> {
    if let IndexBuffer::Int64(s) = b {
        return Ok(s.clone());
    }
    let v: Option<Vec<i64>> =
        with_index_slice!(b.as_slice(), s => s.iter().map(|x| x.to_i64()).collect());
    v.map(ScalarBuffer::from)
        .ok_or_else(|| Error::overflow(what, "an element", "int64"))
}

/// The values: `nnz` of them, `iso` ones expanded.
fn load_values<C: Container + ?Sized>(a: &mut C, d: &Descriptor) -> Result<ValueBuffer> {
    let (npy, iso) = load(a, d, "values")?;
    let values = npy.values()?;
    if !iso {
        if values.len() != d.nnz {
            return Err(err(
                &npy.what,
                format!(
                    "{} values, number_of_stored_values says {}",
                    values.len(),
                    d.nnz
                ),
            ));
        }
        return Ok(values);
    }
    if values.len() != 1 {
        return Err(err(
            &npy.what,
            format!(
                "an iso[...] values array holds one value, found {}",
                values.len()
            ),
        ));
    }
    let bytes = (d.nnz as u64).saturating_mul(values.data_type().byte_width() as u64);
    a.budget(
        format!("{}: {} iso values expanded", a.name(), d.nnz),
        bytes,
    )?;
    Ok(with_value_type!(values.data_type(), V => {
        let v: V = values.as_typed::<V>().map(|s| s[0]).unwrap_or(V::ZERO);
        ValueBuffer::from(ScalarBuffer::<V>::from(vec![v; d.nnz]))
    }))
}

/// Read the Binsparse archive `a` (its `binsparse` entry is present).
pub(super) fn read_container<C: Container + ?Sized>(
    a: &mut C,
) -> Result<(AnyTensor, Vec<(String, String)>)> {
    let text = a.header()?;
    let json: Json = serde_json::from_str(&text)
        .map_err(|e| key_err(a.name(), "binsparse", format!("not valid JSON: {e}")))?;
    let d = parse_descriptor(a.name(), &json)?;
    if let Some(f) = d.ns.get("fill") {
        let fill = f.as_bool().ok_or_else(|| {
            key_err(
                a.name(),
                "fill",
                format!("expected true or false, found {f}"),
            )
        })?;
        if fill {
            let v = a.need("fill_value", "a Binsparse file with fill = true")?;
            if !v.is_zero_scalar()? {
                return Err(Error::Unsupported(format!(
                    "{}: binsparse `fill_value` is not zero (arrow-sparse tensors are zero where nothing is stored)",
                    a.name()
                )));
            }
        }
    }
    let structure = match d.ns.get("structure") {
        None => None,
        Some(s) => {
            let s = s
                .as_str()
                .ok_or_else(|| key_err(a.name(), "structure", "not a string"))?;
            parse_structure(a.name(), s)?;
            if d.shape.len() != 2 || d.shape[0] != d.shape[1] {
                return Err(key_err(
                    a.name(),
                    "structure",
                    format!("{s} needs a square matrix, the shape is {:?}", d.shape),
                ));
            }
            Some(s)
        }
    };
    let tensor = build(a, &d)?;
    let tensor = match structure {
        None => tensor,
        Some(s) => expand_structure(a.name(), &tensor, s)?,
    };
    let descriptor =
        serde_json::to_string(&json).map_err(|e| key_err(a.name(), "binsparse", e.to_string()))?;
    Ok((
        tensor,
        vec![(meta::BINSPARSE_DESCRIPTOR.to_string(), descriptor)],
    ))
}

fn build<C: Container + ?Sized>(a: &mut C, d: &Descriptor) -> Result<AnyTensor> {
    let n = d.shape.len();
    let level_shape: Vec<usize> = d.transpose.iter().map(|&t| d.shape[t]).collect();
    let identity = d.transpose.iter().enumerate().all(|(k, &t)| k == t);
    // dense levels only: a dense tensor, the transpose as strides
    if d.levels.iter().all(|l| matches!(l, Level::Dense(_))) {
        let size = d
            .shape
            .iter()
            .try_fold(1usize, |acc, &x| acc.checked_mul(x));
        if size != Some(d.nnz) {
            return Err(key_err(
                a.name(),
                "number_of_stored_values",
                format!("{} for a dense tensor of shape {:?}", d.nnz, d.shape),
            ));
        }
        let values = load_values(a, d)?;
        let mut strides = vec![0usize; n];
        let mut s = 1usize;
        for k in (0..n).rev() {
            strides[d.transpose[k]] = s;
            s = s.saturating_mul(level_shape[k]);
        }
        return Ok(AnyTensor::Dense(
            AnyDense::try_new(d.shape.clone(), strides, values, &TensorOptions::default())
                .map_err(|e| a.fail(e))?,
        ));
    }
    // dense rows of sparse columns: CSR, or CSC when transposed
    if n == 2 && d.levels == [Level::Dense(1), Level::Sparse(1)] {
        let values = load_values(a, d)?;
        let indptr = load_index(a, d, "pointers_to_1")?;
        let indices = load_index(a, d, "indices_1")?;
        check_sorted_segments(&a.what("indices_1"), &indptr, &indices)?;
        let axis = if identity {
            CompressedAxis::Row
        } else {
            CompressedAxis::Column
        };
        return Ok(AnyTensor::Csx(
            AnyCsx::try_new(
                d.shape.clone(),
                axis,
                indptr,
                indices,
                values,
                &TensorOptions::default(),
            )
            .map_err(|e| {
                err(
                    a.name(),
                    format!("the arrays pointers_to_1, indices_1, values do not make a valid matrix: {e}"),
                )
            })?,
        ));
    }
    // rank-1 sparse levels only: a CSF trie (DCSR / DCSC in 2-D)
    if n >= 2 && d.levels.iter().all(|l| *l == Level::Sparse(1)) {
        return build_csf(a, d);
    }
    walk(a, d, &level_shape, identity)
}

/// Check a level's pointers: `npos + 1` of them, from 0, non-decreasing, ending
/// at `m` (the length of the level's indices); `key` names the array.
fn check_pointers(
    what: &str,
    key: &str,
    p: &[i64],
    npos: usize,
    m: usize,
    ikey: &str,
) -> Result<()> {
    if p.len() != npos + 1 {
        return Err(err(
            what,
            format!(
                "{} pointers for {npos} positions (expected {})",
                p.len(),
                npos + 1
            ),
        ));
    }
    if p[0] != 0 {
        return Err(err(what, format!("starts at {}, not 0", p[0])));
    }
    if let Some(w) = p.windows(2).position(|w| w[0] > w[1]) {
        return Err(err(what, format!("decreases at element {}", w + 1)));
    }
    if p[npos] as u64 != m as u64 {
        return Err(err(
            what,
            format!("ends at {}, {ikey} has {m} elements ({key})", p[npos]),
        ));
    }
    Ok(())
}

/// A chain of rank-1 sparse levels as CSF: level `k` holds tensor dimension
/// `transpose[k]` (`axis_order = transpose`), `indices[k]` is `indices_k` and
/// `indptr[k - 1]` is `pointers_to_k`. Indices must be sorted without duplicates in every segment.
fn build_csf<C: Container + ?Sized>(a: &mut C, d: &Descriptor) -> Result<AnyTensor> {
    let n = d.shape.len();
    let name = a.name().to_string();
    let mut indices: Vec<IndexBuffer> = Vec::with_capacity(n);
    let mut indptr: Vec<IndexBuffer> = Vec::with_capacity(n);
    for k in 0..n {
        let ikey = format!("indices_{k}");
        let idx = load_index(a, d, &ikey)?;
        let extent = d.shape[d.transpose[k]];
        let s = i64s(&idx, &ikey)?;
        if let Some(i) = s.iter().position(|&x| x < 0 || x as u64 >= extent as u64) {
            return Err(Error::IndexOutOfBounds {
                buffer: a.what(&ikey),
                position: i,
                value: s[i] as i128,
                bound: extent as u64,
            });
        }
        // level 0 is one segment
        let ptr = if k == 0 {
            IndexBuffer::from(ScalarBuffer::<i64>::from(vec![0, idx.len() as i64]))
        } else {
            let pkey = format!("pointers_to_{k}");
            let p = load_index(a, d, &pkey)?;
            let npos = indices[k - 1].len();
            check_pointers(
                &a.what(&pkey),
                &pkey,
                &i64s(&p, &pkey)?,
                npos,
                idx.len(),
                &ikey,
            )?;
            p
        };
        check_sorted_segments(&a.what(&ikey), &ptr, &idx)?;
        indices.push(idx);
        indptr.push(ptr);
    }
    let values = load_values(a, d)?;
    if values.len() != indices[n - 1].len() {
        return Err(key_err(
            &name,
            "number_of_stored_values",
            format!(
                "{} values, but indices_{} has {} elements",
                values.len(),
                n - 1,
                indices[n - 1].len()
            ),
        ));
    }
    // one type for all pointers and one for all indices: the file's when they
    // agree, else int64
    let unify = |bufs: Vec<IndexBuffer>, what: &str| -> Result<Vec<IndexBuffer>> {
        let t = bufs[0].data_type();
        if bufs.iter().all(|b| b.data_type() == t) {
            return Ok(bufs);
        }
        bufs.iter()
            .map(|b| b.cast(IndexType::Int64, what))
            .collect()
    };
    // CSF's indptr[k - 1] is pointers_to_k (the whole of level 0 is no buffer)
    indptr.remove(0);
    let indptr = unify(indptr, "pointers")?;
    let indices = unify(indices, "indices")?;
    Ok(AnyTensor::Csf(
        AnyCsf::try_new(
            d.shape.clone(),
            d.transpose.clone(),
            indptr,
            indices,
            values,
            &TensorOptions::default(),
        )
        .map_err(|e| {
            err(
                &name,
                format!("the arrays do not make a valid CSF tensor: {e}"),
            )
        })?,
    ))
}

/// Within each segment of `indptr`, `indices` strictly increase.
fn check_sorted_segments(what: &str, indptr: &IndexBuffer, indices: &IndexBuffer) -> Result<()> {
    let bad = with_index_slice!(indices.as_slice(), s => {
        let mut bad = None;
        for r in 0..indptr.len().saturating_sub(1) {
            let (Some(lo), Some(hi)) = (indptr.get_usize(r), indptr.get_usize(r + 1)) else {
                break; // the tensor's own validation names the bad pointer
            };
            if hi > s.len() || lo > hi {
                break;
            }
            if let Some(w) = s[lo..hi].windows(2).position(|w| w[0] >= w[1]) {
                bad = Some(lo + w + 1);
                break;
            }
        }
        bad
    });
    match bad {
        Some(p) => Err(err(
            what,
            format!(
                "element {p} is not greater than the one before it in its segment (indices must be sorted without duplicates)"
            ),
        )),
        None => Ok(()),
    }
}

/// Expand the level chain into the coordinates of every stored value, checked,
/// as a COO tensor.
fn walk<C: Container + ?Sized>(
    a: &mut C,
    d: &Descriptor,
    level_shape: &[usize],
    identity: bool,
) -> Result<AnyTensor> {
    let name = a.name().to_string();
    let mut npos = 1usize;
    let mut coords: Vec<Vec<i64>> = Vec::new();
    let mut dim = 0usize;
    let mut index_types: Vec<IndexType> = Vec::new();
    let budget =
        |a: &C, what: String, elements: usize| a.budget(what, (elements as u64).saturating_mul(8));
    for (li, &level) in d.levels.iter().enumerate() {
        match level {
            Level::Dense(r) => {
                let dims = &level_shape[dim..dim + r];
                let ext = dims.iter().try_fold(1usize, |acc, &x| acc.checked_mul(x));
                let new = ext.and_then(|e| npos.checked_mul(e)).ok_or_else(|| {
                    key_err(&name, "shape", format!("level {li} has too many positions"))
                })?;
                let ext = ext.unwrap_or(0);
                budget(
                    a,
                    format!("{name}: the {new} positions of dense level {li}"),
                    new.saturating_mul(dim + r),
                )?;
                for c in coords.iter_mut() {
                    *c = c
                        .iter()
                        .flat_map(|&x| std::iter::repeat_n(x, ext))
                        .collect();
                }
                for k in 0..r {
                    let inner: usize = dims[k + 1..].iter().product();
                    let size = dims[k];
                    coords.push(
                        (0..new)
                            .map(|i| ((i % ext.max(1)) / inner.max(1) % size.max(1)) as i64)
                            .collect(),
                    );
                }
                npos = new;
                dim += r;
            }
            Level::Sparse(r) => {
                let ptr = if li == 0 {
                    None
                } else {
                    let key = format!("pointers_to_{dim}");
                    let p = load_index(a, d, &key)?;
                    let p = i64s(&p, &key)?;
                    let what = a.what(&key);
                    if p.len() != npos + 1 {
                        return Err(err(
                            &what,
                            format!(
                                "{} pointers for {npos} positions (expected {})",
                                p.len(),
                                npos + 1
                            ),
                        ));
                    }
                    if p[0] != 0 {
                        return Err(err(&what, format!("starts at {}, not 0", p[0])));
                    }
                    if let Some(w) = p.windows(2).position(|w| w[0] > w[1]) {
                        return Err(err(&what, format!("decreases at element {}", w + 1)));
                    }
                    Some(p)
                };
                let mut idx = Vec::with_capacity(r);
                for (k, &extent) in level_shape.iter().enumerate().skip(dim).take(r) {
                    let key = format!("indices_{k}");
                    let b = load_index(a, d, &key)?;
                    index_types.push(b.data_type());
                    let s = i64s(&b, &key)?;
                    let what = a.what(&key);
                    if let Some(i) = s.iter().position(|&x| x < 0 || x as u64 >= extent as u64) {
                        return Err(Error::IndexOutOfBounds {
                            buffer: what,
                            position: i,
                            value: s[i] as i128,
                            bound: extent as u64,
                        });
                    }
                    idx.push(s);
                }
                let m = idx[0].len();
                if let Some(k) = idx.iter().position(|s| s.len() != m) {
                    return Err(err(
                        &a.what(&format!("indices_{}", dim + k)),
                        format!("{} elements, indices_{dim} has {m}", idx[k].len()),
                    ));
                }
                if let Some(p) = &ptr
                    && p[npos] as u64 != m as u64
                {
                    return Err(err(
                        &a.what(&format!("pointers_to_{dim}")),
                        format!("ends at {}, indices_{dim} has {m} elements", p[npos]),
                    ));
                }
                budget(
                    a,
                    format!("{name}: the coordinates of sparse level {li}"),
                    m.saturating_mul(dim + r),
                )?;
                if let Some(p) = &ptr {
                    for c in coords.iter_mut() {
                        let mut out = Vec::with_capacity(m);
                        for q in 0..npos {
                            let len = (p[q + 1] - p[q]) as usize;
                            out.extend(std::iter::repeat_n(c[q], len));
                        }
                        *c = out;
                    }
                }
                coords.extend(idx.into_iter().map(|s| s.to_vec()));
                npos = m;
                dim += r;
            }
        }
    }
    let values = load_values(a, d)?;
    if npos != values.len() {
        return Err(key_err(
            &name,
            "number_of_stored_values",
            format!(
                "{} values, but the levels hold {npos} positions",
                values.len()
            ),
        ));
    }
    // the coordinates in level order must strictly increase
    if let Some(k) = (1..npos).find(|&k| {
        for c in &coords {
            if c[k - 1] != c[k] {
                return c[k - 1] > c[k];
            }
        }
        true
    }) {
        return Err(err(
            &format!("{name}: indices"),
            format!(
                "stored value {k} does not come after the one before it (indices must be sorted without duplicates)"
            ),
        ));
    }
    let n = d.shape.len();
    let mut flat = Vec::with_capacity(npos * n);
    let mut inverse = vec![0usize; n];
    for (k, &t) in d.transpose.iter().enumerate() {
        inverse[t] = k;
    }
    for &k in &inverse {
        flat.extend_from_slice(&coords[k]);
    }
    drop(coords);
    let mut buf = IndexBuffer::from(ScalarBuffer::<i64>::from(flat));
    if let Some(&t) = index_types.first()
        && index_types.iter().all(|&x| x == t)
    {
        buf = buf.cast(t, "coords")?;
    }
    let canonical = identity || super::npz::canonical(&buf, CoordLayout::ColumnMajor, npos, n);
    Ok(AnyTensor::Coo(
        AnyCoo::try_new(
            d.shape.clone(),
            CoordLayout::ColumnMajor,
            EntryOrder::from(canonical),
            buf,
            values,
            &TensorOptions::default(),
        )
        .map_err(|e| a.fail(e))?,
    ))
}

/// The Binsparse structures this crate expands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Structure {
    Lower { skew: bool },
    Upper { skew: bool },
}

fn parse_structure(name: &str, s: &str) -> Result<Structure> {
    Ok(match s {
        "symmetric_lower" => Structure::Lower { skew: false },
        "symmetric_upper" => Structure::Upper { skew: false },
        "skew_symmetric_lower" => Structure::Lower { skew: true },
        "skew_symmetric_upper" => Structure::Upper { skew: true },
        "hermitian_lower" | "hermitian_upper" => {
            return Err(Error::Unsupported(format!(
                "{name}: binsparse structure {s:?} needs complex values, which are not supported"
            )));
        }
        other => {
            return Err(key_err(
                name,
                "structure",
                format!(
                    "unknown structure {other:?} (expected symmetric_lower, symmetric_upper, skew_symmetric_lower, skew_symmetric_upper, hermitian_lower or hermitian_upper)"
                ),
            ));
        }
    })
}

/// Fill in the triangle a `structure` leaves out; the result has the format of
/// `t` (dense stays dense, CSR / CSC stay so, the rest becomes canonical COO).
fn expand_structure(name: &str, t: &AnyTensor, s: &str) -> Result<AnyTensor> {
    let st = parse_structure(name, s)?;
    let shape = t.shape();
    if shape.len() != 2 || shape[0] != shape[1] {
        return Err(key_err(
            name,
            "structure",
            format!("{s} needs a square matrix, the shape is {shape:?}"),
        ));
    }
    let skew = matches!(
        st,
        Structure::Lower { skew: true } | Structure::Upper { skew: true }
    );
    let coo = with_value_type!(t.value_type(), V => {
        let coo = t.to_coo::<V, i64>()?;
        let nnz = coo.nnz();
        let mut coords: Vec<i64> = Vec::with_capacity(4 * nnz);
        let mut values: Vec<V> = Vec::with_capacity(2 * nnz);
        let mut bad: Option<String> = None;
        coo.for_each(|c, v: V| {
            if bad.is_some() {
                return;
            }
            let (i, j) = (c[0], c[1]);
            let inside = match st {
                Structure::Lower { .. } => i >= j,
                Structure::Upper { .. } => i <= j,
            };
            if !inside {
                bad = Some(format!("the entry ({i}, {j}) lies outside the stored triangle of {s}"));
                return;
            }
            if i == j && skew && !v.is_zero() {
                bad = Some(format!("the diagonal entry ({i}, {i}) of a skew-symmetric matrix is not zero"));
                return;
            }
            coords.extend([i as i64, j as i64]);
            values.push(v);
            if i != j {
                let m = if skew {
                    match TextValue::neg(v) {
                        Some(m) => m,
                        None => {
                            bad = Some(format!("the entry ({i}, {j}) cannot be negated in {}", <V as Value>::TYPE.name()));
                            return;
                        }
                    }
                } else {
                    v
                };
                coords.extend([j as i64, i as i64]);
                values.push(m);
            }
        })?;
        if let Some(b) = bad {
            return Err(key_err(name, "structure", b));
        }
        let c = crate::CooTensor::<V, i64>::try_new(
            shape.to_vec(),
            CoordLayout::RowMajor,
            EntryOrder::Any,
            coords.into(),
            values.into(),
        )?
        .canonicalize()?;
        AnyTensor::from(c)
    });
    let it = t.index_type().unwrap_or(IndexType::Int64);
    match t.format() {
        Format::Coo => coo.convert(Format::Coo, it, None),
        f => coo.convert(f, it, None),
    }
}

/// Whether a square matrix's entries agree with `st`; then the entries of the
/// stored triangle, else `None`.
fn stored_triangle(t: &AnyTensor, st: Structure) -> Result<Option<AnyTensor>> {
    let shape = t.shape();
    if shape.len() != 2 || shape[0] != shape[1] {
        return Ok(None);
    }
    let skew = matches!(
        st,
        Structure::Lower { skew: true } | Structure::Upper { skew: true }
    );
    with_value_type!(t.value_type(), V => {
        let coo = t.to_coo::<V, i64>()?.canonicalize()?;
        let n = coo.nnz();
        let at = |k: usize| (coo.coord(k, 0), coo.coord(k, 1));
        let vals = coo.values();
        let find = |i: usize, j: usize| -> Option<usize> {
            let (mut lo, mut hi) = (0usize, n);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if at(mid) < (i, j) { lo = mid + 1 } else { hi = mid }
            }
            (lo < n && at(lo) == (i, j)).then_some(lo)
        };
        let mut keep: Vec<usize> = Vec::new();
        for k in 0..n {
            let (i, j) = at(k);
            let v = vals[k];
            if i == j {
                if skew && !v.is_zero() {
                    return Ok(None);
                }
                keep.push(k);
                continue;
            }
            let mirror = match find(j, i) {
                Some(m) => vals[m],
                None => return Ok(None),
            };
            let expect = if skew { TextValue::neg(v) } else { Some(v) };
            if expect.is_none_or(|e| !TextValue::same(e, mirror)) {
                return Ok(None);
            }
            let inside = match st {
                Structure::Lower { .. } => i > j,
                Structure::Upper { .. } => i < j,
            };
            if inside {
                keep.push(k);
            }
        }
        let mut coords: Vec<i64> = Vec::with_capacity(2 * keep.len());
        let mut values: Vec<V> = Vec::with_capacity(keep.len());
        for &k in &keep {
            let (i, j) = at(k);
            coords.extend([i as i64, j as i64]);
            values.push(vals[k]);
        }
        let c = crate::CooTensor::<V, i64>::try_new(
            shape.to_vec(),
            CoordLayout::RowMajor,
            EntryOrder::Canonical,
            coords.into(),
            values.into(),
        )?;
        // the triangle in the tensor's own format and index type, as the reader
        // builds the expanded tensor: what is read back is what was written
        let it = t.index_type().unwrap_or(IndexType::Int64);
        Ok(Some(AnyTensor::from(c).convert(t.format(), it, None)?))
    })
}

/// The binary arrays and descriptor of `t` in Binsparse NPZ (the descriptor
/// is the 0-d unicode array `binsparse`).
pub(super) fn arrays(
    t: &AnyTensor,
    md: &[(String, String)],
    format: Option<BinsparseFormat>,
) -> Result<Vec<Array>> {
    let (mut out, text) = encode(t, md, format)?;
    out.push(unicode_scalar("binsparse", &text));
    Ok(out)
}

/// The binary arrays of `t` in Binsparse and the descriptor's JSON text.
pub(super) fn encode(
    t: &AnyTensor,
    md: &[(String, String)],
    format: Option<BinsparseFormat>,
) -> Result<(Vec<Array>, String)> {
    let old: Option<Json> = meta_get(md, meta::BINSPARSE_DESCRIPTOR)
        .and_then(|s| serde_json::from_str::<Json>(s).ok())
        .filter(|j| j.get("binsparse").is_some_and(Json::is_object));
    let old_ns = old
        .as_ref()
        .and_then(|j| j.get("binsparse"))
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    if t.value_type() == ValueType::Float16 {
        return Err(Error::Unsupported(
            "Binsparse has no float16 values (cast the tensor to float32 first)".into(),
        ));
    }
    let n = t.shape().len();
    let format = format.or_else(|| {
        old_ns
            .get("format")
            .and_then(Json::as_str)
            .and_then(BinsparseFormat::parse)
            .filter(|f| f.ndim() == n)
    });
    let format = match format {
        Some(f) => {
            if f.ndim() != n {
                return Err(Error::Unsupported(format!(
                    "Binsparse {} is {}-D, the tensor has shape {:?}",
                    f.name(),
                    f.ndim(),
                    t.shape()
                )));
            }
            Some(f)
        }
        None => default_format(t),
    };
    // structure: write one triangle when the matrix still has it
    let mut structure = None;
    let mut stored = None;
    if let Some(s) = old_ns.get("structure").and_then(Json::as_str)
        && let Ok(st) = parse_structure("", s)
        && let Some(tri) = stored_triangle(t, st)?
    {
        structure = Some(s.to_string());
        stored = Some(tri);
    }
    let t = stored.as_ref().unwrap_or(t);
    let mut out: Vec<Array> = Vec::new();
    let mut data_types = Map::new();
    let mut custom = None;
    let values = match format {
        Some(f) => format_arrays(t, f, &mut out, &mut data_types)?,
        None => {
            // a custom format read with a transpose writes back with it
            let transpose: Option<Vec<usize>> = old_ns
                .get("custom")
                .and_then(|c| c.get("transpose"))
                .and_then(Json::as_array)
                .and_then(|a| a.iter().map(as_usize).collect());
            custom_arrays(t, transpose, &mut out, &mut data_types, &mut custom)?
        }
    };
    // values, iso when the old descriptor said so and they are all equal
    let old_iso = old_ns
        .get("data_types")
        .and_then(|d| d.get("values"))
        .and_then(Json::as_str)
        .is_some_and(|s| s.starts_with("iso["));
    let vname = value_name(&values, &old_ns);
    if old_iso && !values.is_empty() && all_equal(&values) {
        let one = with_value_type!(values.data_type(), V => {
            let s = values.as_typed::<V>().map(|s| s[0]).unwrap_or(V::ZERO);
            ValueBuffer::from(ScalarBuffer::<V>::from(vec![s]))
        });
        out.push(value_array("values", &one));
        data_types.insert("values".into(), Json::from(format!("iso[{vname}]")));
    } else {
        out.push(value_array("values", &values));
        data_types.insert("values".into(), Json::from(vname.clone()));
    }
    let mut ns = Map::new();
    // keys this crate does not know, as they were
    for (k, v) in &old_ns {
        if !matches!(
            k.as_str(),
            "version"
                | "format"
                | "shape"
                | "number_of_stored_values"
                | "data_types"
                | "custom"
                | "fill"
                | "structure"
        ) {
            ns.insert(k.clone(), v.clone());
        }
    }
    ns.insert("version".into(), Json::from(VERSION));
    ns.insert(
        "format".into(),
        Json::from(format.map_or("custom", BinsparseFormat::name)),
    );
    if let Some(c) = custom {
        ns.insert("custom".into(), c);
    }
    ns.insert("shape".into(), Json::from(t.shape().to_vec()));
    ns.insert("number_of_stored_values".into(), Json::from(values.len()));
    if let Some(s) = structure {
        ns.insert("structure".into(), Json::from(s));
    }
    if old_ns.get("fill") == Some(&Json::Bool(true)) {
        ns.insert("fill".into(), Json::Bool(true));
        let zero = with_value_type!(values.data_type(), V => ValueBuffer::from(ScalarBuffer::<V>::from(vec![V::ZERO])));
        out.push(value_array("fill_value", &zero));
        data_types.insert("fill_value".into(), Json::from(vname));
    }
    ns.insert("data_types".into(), Json::Object(data_types));
    let mut top = Map::new();
    if let Some(Json::Object(o)) = &old {
        for (k, v) in o {
            if k != "binsparse" {
                top.insert(k.clone(), v.clone());
            }
        }
    }
    top.insert("binsparse".into(), Json::Object(ns));
    let text = serde_json::to_string_pretty(&Json::Object(top))
        .map_err(|e| Error::Unsupported(format!("binsparse descriptor: {e}")))?;
    Ok((out, text))
}

/// The numeric type of an array's npy `descr` (`<i4`, `<f8`, `|u1` ...).
#[cfg_attr(not(feature = "hdf5"), allow(dead_code))]
pub(super) fn descr_type(descr: &str) -> Option<ValueType> {
    value_types().find(|&v| super::npy::descr(v) == descr)
}

/// Options for writing Binsparse HDF5 files (`.h5` / `.hdf5`, cargo feature
/// `hdf5`, see `io::hdf5`).
///
/// ```
/// use arrow_sparse::io::binsparse::{BinsparseFormat, Hdf5WriteOptions};
/// let o = Hdf5WriteOptions::default();
/// assert_eq!((o.binsparse_format, o.compressed), (None, false));
/// let o = Hdf5WriteOptions { binsparse_format: Some(BinsparseFormat::Dcsr), compressed: true };
/// assert_eq!(o.binsparse_format.map(BinsparseFormat::name), Some("DCSR"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hdf5WriteOptions {
    /// The predefined format to write. `None`: the one recorded in the metadata
    /// ([`meta::BINSPARSE_DESCRIPTOR`]), else the tensor's own (as for NPZ).
    pub binsparse_format: Option<BinsparseFormat>,
    /// Write every dataset chunked (1 MiB chunks) and deflated (level 6), as
    /// the C reference does when asked to compress. Default `false`: contiguous
    /// datasets, as the Python reference (h5py) writes them.
    pub compressed: bool,
}

/// `bint8` when the old descriptor said so of `uint8` values, else the type's name.
fn value_name(values: &ValueBuffer, old_ns: &Map<String, Json>) -> String {
    let was_bool = old_ns
        .get("data_types")
        .and_then(|d| d.get("values"))
        .and_then(Json::as_str)
        .is_some_and(|s| s == "bint8" || s == "iso[bint8]");
    if was_bool && values.data_type() == ValueType::UInt8 {
        "bint8".into()
    } else {
        values.data_type().name().into()
    }
}

fn all_equal(v: &ValueBuffer) -> bool {
    let w = v.data_type().byte_width();
    let b = v.inner().as_slice();
    b.chunks_exact(w).all(|c| c == &b[..w])
}

/// A 0-d `<U` array holding `text` (what `numpy.asarray(str)` saves).
fn unicode_scalar(key: &str, text: &str) -> Array {
    let chars: Vec<u32> = text.chars().map(u32::from).collect();
    let order = if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    Array {
        key: key.to_string(),
        descr: format!("{order}U{}", chars.len().max(1)),
        shape: vec![],
        data: Buffer::from_vec(if chars.is_empty() { vec![0u32] } else { chars }),
    }
}

fn default_format(t: &AnyTensor) -> Option<BinsparseFormat> {
    let n = t.shape().len();
    match t {
        AnyTensor::Dense(d) if n == 1 => {
            let _ = d;
            Some(BinsparseFormat::Dvec)
        }
        AnyTensor::Dense(d) if n == 2 => Some(if d.is_column_major() && !d.is_row_major() {
            BinsparseFormat::Dmatc
        } else {
            BinsparseFormat::Dmatr
        }),
        AnyTensor::Csx(m) => Some(if m.axis() == CompressedAxis::Row {
            BinsparseFormat::Csr
        } else {
            BinsparseFormat::Csc
        }),
        AnyTensor::Csf(c) if n == 2 => Some(if c.axis_order() == [0, 1] {
            BinsparseFormat::Dcsr
        } else {
            BinsparseFormat::Dcsc
        }),
        _ if n == 1 => Some(BinsparseFormat::Cvec),
        _ if n == 2 => Some(BinsparseFormat::Coo),
        _ => None,
    }
}

fn index_type_of(t: &AnyTensor) -> IndexType {
    t.index_type().unwrap_or(IndexType::Int64)
}

fn declare(out: &mut Vec<Array>, types: &mut Map<String, Json>, key: &str, b: &IndexBuffer) {
    out.push(index_array(key, b, vec![b.len()]));
    types.insert(key.into(), Json::from(b.data_type().name()));
}

/// A row-major (or, `column_major`, column-major) dense copy of the values.
fn dense_values(t: &AnyTensor, column_major: bool) -> Result<ValueBuffer> {
    let shape = t.shape().to_vec();
    let size = shape
        .iter()
        .try_fold(1usize, |a, &x| a.checked_mul(x))
        .ok_or_else(|| Error::overflow("dense size", format!("{shape:?}"), "usize"))?;
    with_value_type!(t.value_type(), V => {
        let mut out: Vec<V> = crate::buffer::try_zeroed_vec(size, "dense Binsparse values")?;
        let n = shape.len();
        let mut strides = vec![1usize; n];
        if column_major {
            for k in 1..n {
                strides[k] = strides[k - 1] * shape[k - 1];
            }
        } else {
            for k in (0..n.saturating_sub(1)).rev() {
                strides[k] = strides[k + 1] * shape[k + 1];
            }
        }
        t.for_each_entry::<V>(&mut |c: &[usize], v: V| {
            let off: usize = c.iter().zip(&strides).map(|(a, b)| a * b).sum();
            if let Some(x) = out.get_mut(off) {
                *x = v;
            }
        })?;
        Ok(ValueBuffer::from(ScalarBuffer::<V>::from(out)))
    })
}

/// A canonical COO copy with the tensor's index type.
fn canonical_coo(t: &AnyTensor) -> Result<AnyCoo> {
    if let AnyTensor::Coo(c) = t
        && c.is_canonical()
    {
        return Ok(c.clone());
    }
    let it = index_type_of(t);
    let c =
        with_value_type!(t.value_type(), V => AnyCoo::from(t.to_coo::<V, i64>()?.canonicalize()?));
    // the tensor's index type when every coordinate fits it (a CSR matrix's
    // int8 column indices may not hold its row numbers)
    let coords = c
        .coords()
        .cast(it, "coords")
        .unwrap_or_else(|_| c.coords().clone());
    AnyCoo::try_new(
        t.shape().to_vec(),
        c.layout(),
        EntryOrder::Canonical,
        coords,
        c.values().clone(),
        &TensorOptions::trusted(),
    )
}

fn format_arrays(
    t: &AnyTensor,
    f: BinsparseFormat,
    out: &mut Vec<Array>,
    types: &mut Map<String, Json>,
) -> Result<ValueBuffer> {
    use BinsparseFormat as F;
    match f {
        F::Dvec | F::Dmat | F::Dmatr => dense_values(t, false),
        F::Dmatc => dense_values(t, true),
        F::Dcsr | F::Dcsc
            if let AnyTensor::Csf(c) = t
                && c.axis_order() == if f == F::Dcsr { [0, 1] } else { [1, 0] }
                && csf_sorted(c) =>
        {
            // the CSF trie is DCSR / DCSC: its levels as they are
            declare(out, types, "indices_0", &c.indices()[0]);
            declare(out, types, "pointers_to_1", &c.indptr()[0]);
            declare(out, types, "indices_1", &c.indices()[1]);
            Ok(c.values().clone())
        }
        F::Csr | F::Csc | F::Dcsr | F::Dcsc => {
            let (fmt, axis) = if matches!(f, F::Csr | F::Dcsr) {
                (Format::Csr, CompressedAxis::Row)
            } else {
                (Format::Csc, CompressedAxis::Column)
            };
            let m = match t {
                AnyTensor::Csx(m)
                    if m.axis() == axis
                        && check_sorted_segments("", m.indptr(), m.indices()).is_ok() =>
                {
                    m.clone()
                }
                // from sorted entries, so that each row (column) is sorted
                _ => {
                    let c = AnyTensor::Coo(canonical_coo(t)?);
                    let converted = c
                        .convert(fmt, index_type_of(t), None)
                        .or_else(|_| c.convert(fmt, IndexType::Int64, None))?;
                    match converted {
                        AnyTensor::Csx(m) => m,
                        _ => {
                            return Err(Error::Unsupported(
                                "internal: convert did not give CSX".into(),
                            ));
                        }
                    }
                }
            };
            if matches!(f, F::Csr | F::Csc) {
                declare(out, types, "pointers_to_1", m.indptr());
                declare(out, types, "indices_1", m.indices());
            } else {
                // keep the non-empty rows (columns) only
                let ptr = m.indptr();
                let mut rows: Vec<i64> = Vec::new();
                let mut ends: Vec<i64> = vec![0];
                for r in 0..ptr.len().saturating_sub(1) {
                    let (lo, hi) = (
                        ptr.get_usize(r).unwrap_or(0),
                        ptr.get_usize(r + 1).unwrap_or(0),
                    );
                    if hi > lo {
                        rows.push(r as i64);
                        ends.push(hi as i64);
                    }
                }
                // the row (column) numbers in the index type when they fit it
                let rows = IndexBuffer::from(ScalarBuffer::from(rows));
                let rows = rows
                    .cast(m.indices().data_type(), "indices_0")
                    .unwrap_or(rows);
                let ends = IndexBuffer::from(ScalarBuffer::from(ends))
                    .cast(ptr.data_type(), "pointers_to_1")?;
                declare(out, types, "indices_0", &rows);
                declare(out, types, "pointers_to_1", &ends);
                declare(out, types, "indices_1", m.indices());
            }
            Ok(m.values().clone())
        }
        F::Cvec | F::Coo | F::Coor => {
            let c = canonical_coo(t)?;
            coo_columns(&c, &(0..c.shape().len()).collect::<Vec<_>>(), out, types)?;
            Ok(c.values().clone())
        }
        F::Cooc => {
            let c = canonical_coo(t)?;
            // sorted by column, then row
            let (perm, values) = with_value_type!(t.value_type(), V => {
                let typed = t.to_coo::<V, i64>()?;
                let typed = if typed.is_canonical() { typed } else { typed.canonicalize()? };
                let perm = typed.sort_permutation(&[1, 0])?;
                let vals: Vec<V> = perm.iter().map(|&k| typed.values()[k]).collect();
                (perm, ValueBuffer::from(ScalarBuffer::<V>::from(vals)))
            });
            let it = c.index_type();
            for (key, d) in [("indices_0", 1usize), ("indices_1", 0)] {
                let col: Vec<i64> = with_index_slice!(c.coords().as_slice(), s => {
                    perm.iter().map(|&k| coord(s, c.layout(), c.nnz(), 2, k, d)).collect()
                });
                let b = IndexBuffer::from(ScalarBuffer::from(col)).cast(it, key)?;
                declare(out, types, key, &b);
            }
            Ok(values)
        }
    }
}

fn coord<I: Index>(
    s: &[I],
    layout: CoordLayout,
    nnz: usize,
    ndim: usize,
    k: usize,
    d: usize,
) -> i64 {
    let x = match layout {
        CoordLayout::RowMajor => s[k * ndim + d],
        CoordLayout::ColumnMajor => s[d * nnz + k],
    };
    x.index().map_or(-1, |u| u as i64)
}

/// `indices_k` = the coordinates along dimension `dims[k]`.
fn coo_columns(
    c: &AnyCoo,
    dims: &[usize],
    out: &mut Vec<Array>,
    types: &mut Map<String, Json>,
) -> Result<()> {
    let major = super::npz::dimension_major(c);
    for (k, &d) in dims.iter().enumerate() {
        let b = super::npz::slice_dim(&major, d, c.nnz())?;
        declare(out, types, &format!("indices_{k}"), &b);
    }
    Ok(())
}

/// Tensors no predefined format holds (N-D): `custom` dense (rank N) levels for
/// dense tensors, one sparse level of rank N (COO) for the others. A COO tensor
/// whose entries are strictly increasing in the order of `transpose` (the
/// transpose of the custom format it was read from) is written in that order with
/// that transpose, so it reads back as the same tensor; other tensors are written
/// canonical, without a transpose.
fn custom_arrays(
    t: &AnyTensor,
    transpose: Option<Vec<usize>>,
    out: &mut Vec<Array>,
    types: &mut Map<String, Json>,
    custom: &mut Option<Json>,
) -> Result<ValueBuffer> {
    let n = t.shape().len();
    let element = serde_json::json!({"level_desc": "element"});
    if let AnyTensor::Dense(_) = t {
        *custom = Some(
            serde_json::json!({"level": {"level_desc": "dense", "rank": n, "level": element}}),
        );
        return dense_values(t, false);
    }
    if let AnyTensor::Csf(c) = t
        && csf_sorted(c)
    {
        // a chain of rank-1 sparse levels in the CSF's axis order
        let mut level = element;
        for _ in 0..n {
            level = serde_json::json!({"level_desc": "sparse", "rank": 1, "level": level});
        }
        for (k, idx) in c.indices().iter().enumerate() {
            if k > 0 {
                declare(out, types, &format!("pointers_to_{k}"), &c.indptr()[k - 1]);
            }
            declare(out, types, &format!("indices_{k}"), idx);
        }
        let mut desc = serde_json::json!({ "level": level });
        if c.axis_order().iter().enumerate().any(|(k, &d)| k != d) {
            desc["transpose"] = serde_json::json!(c.axis_order());
        }
        *custom = Some(desc);
        return Ok(c.values().clone());
    }
    if let (Some(tr), AnyTensor::Coo(c)) = (transpose, t)
        && tr.len() == n
        && tr.iter().enumerate().any(|(k, &d)| k != d)
        && increasing_in(t, &tr)?
    {
        coo_columns(c, &tr, out, types)?;
        *custom = Some(serde_json::json!({
            "transpose": tr,
            "level": {"level_desc": "sparse", "rank": n, "level": element},
        }));
        return Ok(c.values().clone());
    }
    let c = canonical_coo(t)?;
    coo_columns(&c, &(0..n).collect::<Vec<_>>(), out, types)?;
    *custom =
        Some(serde_json::json!({"level": {"level_desc": "sparse", "rank": n, "level": element}}));
    Ok(c.values().clone())
}

/// Whether every segment of every level of `c` is sorted without duplicates,
/// as Binsparse requires.
fn csf_sorted(c: &AnyCsf) -> bool {
    let top = IndexBuffer::from(ScalarBuffer::<i64>::from(vec![
        0,
        c.indices()[0].len() as i64,
    ]));
    std::iter::once(&top)
        .chain(c.indptr())
        .zip(c.indices())
        .all(|(p, i)| check_sorted_segments("", p, i).is_ok())
}

/// Whether the stored entries of COO tensor `t` strictly increase in the
/// lexicographic order of dimensions `order` (a permutation).
fn increasing_in(t: &AnyTensor, order: &[usize]) -> Result<bool> {
    if order.iter().any(|&d| d >= t.shape().len()) {
        return Ok(false);
    }
    with_value_type!(t.value_type(), V => {
        let c = t.to_coo::<V, i64>()?;
        Ok((1..c.nnz()).all(|k| {
            for &d in order {
                let (a, b) = (c.coord(k - 1, d), c.coord(k, d));
                if a != b {
                    return a < b;
                }
            }
            false
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{ImportOptions, NpzWriteOptions, npz};
    use std::io::Cursor;

    fn round(t: &AnyTensor, f: Option<BinsparseFormat>) -> crate::ipc::TensorMessage {
        let mut o = NpzWriteOptions::default().with_flavor(crate::io::NpzFlavor::Binsparse);
        o.binsparse_format = f;
        let bytes = npz::write_to(Cursor::new(Vec::new()), &t.clone().into(), &o)
            .unwrap()
            .into_inner();
        npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default()).unwrap()
    }

    #[test]
    fn every_format_round_trips() {
        let t: AnyTensor = crate::CooTensor::<f64, i32>::from_entries(
            vec![4, 5],
            &[
                (vec![0, 4], 1.0),
                (vec![3, 0], 2.0),
                (vec![3, 2], -3.0),
                (vec![0, 1], 4.0),
            ],
        )
        .unwrap()
        .into();
        let want = t.to_coo::<f64, i64>().unwrap().canonicalize().unwrap();
        for f in FORMATS.into_iter().filter(|f| f.ndim() == 2) {
            let back = round(&t, Some(f));
            let got = back
                .tensor
                .to_coo::<f64, i64>()
                .unwrap()
                .canonicalize()
                .unwrap();
            assert_eq!(got, want, "{f:?}");
        }
    }

    #[test]
    fn dcsr_row_numbers_wider_than_the_index_type() {
        // 300 rows, int8 column indices: the row numbers of DCSR go to int64
        let coo: AnyTensor = crate::CooTensor::<f64, i64>::from_entries(
            vec![300, 5],
            &[(vec![299, 4], 1.0), (vec![7, 0], 2.0)],
        )
        .unwrap()
        .into();
        let csr = AnyTensor::Csx(
            AnyCsx::try_new(
                vec![300, 5],
                CompressedAxis::Row,
                IndexBuffer::from(ScalarBuffer::<i64>::from({
                    let mut p = vec![0i64; 301];
                    p[8..].iter_mut().for_each(|x| *x = 1);
                    p[300] = 2;
                    p
                })),
                IndexBuffer::from(ScalarBuffer::<i8>::from(vec![0i8, 4])),
                ValueBuffer::from(ScalarBuffer::<f64>::from(vec![2.0, 1.0])),
                &TensorOptions::default(),
            )
            .unwrap(),
        );
        assert_eq!(csr.get::<f64>(&[299, 4]).unwrap(), Some(1.0));
        drop(coo);
        for f in FORMATS.into_iter().filter(|f| f.ndim() == 2) {
            let back = round(&csr, Some(f));
            assert_eq!(
                back.tensor.get::<f64>(&[299, 4]).unwrap(),
                Some(1.0),
                "{f:?}"
            );
            assert_eq!(back.tensor.nnz(), 2);
        }
    }

    #[test]
    fn dcsr_dcsc_and_sparse_chains_are_csf() {
        let t: AnyTensor = crate::CooTensor::<f32, i32>::from_entries(
            vec![4, 6, 3],
            &[
                (vec![0, 5, 2], 1.0),
                (vec![3, 0, 0], 2.0),
                (vec![3, 0, 2], -3.0),
                (vec![0, 1, 1], 4.0),
            ],
        )
        .unwrap()
        .into();
        let m: AnyTensor = crate::CooTensor::<f32, i32>::from_entries(
            vec![4, 6],
            &[(vec![0, 5], 1.0), (vec![3, 0], 2.0), (vec![3, 2], -3.0)],
        )
        .unwrap()
        .into();
        let canon = |t: &AnyTensor| t.to_coo::<f32, i64>().unwrap().canonicalize().unwrap();
        for (f, order) in [
            (BinsparseFormat::Dcsr, [0, 1]),
            (BinsparseFormat::Dcsc, [1, 0]),
        ] {
            let back = round(&m, Some(f));
            let AnyTensor::Csf(c) = &back.tensor else {
                panic!("{f:?} read as {:?}", back.tensor.format())
            };
            assert_eq!(c.axis_order(), order);
            assert_eq!(canon(&back.tensor), canon(&m));
            // a CSF writes back as the same format by default, level for level
            let again = round(&back.tensor, None);
            assert_eq!(again.tensor, back.tensor, "{f:?}");
            let d = again
                .custom_metadata
                .iter()
                .find(|(k, _)| k == meta::BINSPARSE_DESCRIPTOR)
                .unwrap();
            assert!(d.1.contains(&format!("\"{}\"", f.name())), "{}", d.1);
        }
        // N-D CSF in any axis order: a custom chain of sparse levels, back as CSF
        let csf = t
            .convert(Format::Csf, IndexType::Int32, Some(&[2, 0, 1]))
            .unwrap();
        let back = round(&csf, None);
        assert_eq!(back.tensor, csf);
        // a 2-D CSF of either order written as CSR / COO reads as those
        let dcsc = round(&m, Some(BinsparseFormat::Dcsc)).tensor;
        for f in [BinsparseFormat::Csr, BinsparseFormat::Coo] {
            assert_eq!(canon(&round(&dcsc, Some(f)).tensor), canon(&m));
        }
    }

    #[test]
    fn vectors_and_nd() {
        let v: AnyTensor =
            crate::CooTensor::<i16, i64>::from_entries(vec![6], &[(vec![1], 3), (vec![5], -1)])
                .unwrap()
                .into();
        for f in [BinsparseFormat::Cvec, BinsparseFormat::Dvec] {
            let back = round(&v, Some(f));
            assert_eq!(back.tensor.get::<i16>(&[5]).unwrap(), Some(-1));
        }
        let t3: AnyTensor = crate::CooTensor::<f32, i64>::from_entries(
            vec![2, 3, 4],
            &[(vec![1, 2, 3], 1.5), (vec![0, 0, 1], 2.5)],
        )
        .unwrap()
        .into();
        let back = round(&t3, None);
        let canon = |t: &AnyTensor| t.to_coo::<f32, i64>().unwrap().canonicalize().unwrap();
        assert_eq!(canon(&back.tensor), canon(&t3));
    }
}

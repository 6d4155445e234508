//! NumPy zip archives (`.npz`) of sparse arrays, in the two layouts in use:
//!
//! * **scipy** (`scipy.sparse.save_npz` / `load_npz`): arrays `format` (`csr`,
//!   `csc` or `coo`), `shape`, `data`, then `indices` + `indptr` (CSR / CSC),
//!   `row` + `col` (2-D COO) or `coords` (N-D COO, shape `(ndim, nnz)`), and
//!   `_is_array` for sparse arrays (as opposed to sparse matrices). Read as
//!   [`AnyCsx`] / [`AnyCoo`] with the file's dtypes.
//! * **pydata/sparse** (`sparse.save_npz` / `load_npz`): `data`, `shape`,
//!   `fill_value` (must be zero here), then `coords` (COO, `(ndim, nnz)`, sorted
//!   without duplicates) or `indices` + `indptr` + `compressed_axes` (GCXS). A
//!   GCXS array with compressed axes `C` (sorted) is the N-D array transposed to
//!   the axis order `C ++ (the other axes, in order)`, reshaped row-major to a
//!   `prod(C) x prod(rest)` matrix and stored as CSR: that is a GCS tensor with
//!   `dimensions = C ++ rest`, `partitioning = [len(C)]`, compressed rows, read as
//!   [`AnyGcs`].
//!
//! The writer picks the layout from [`NpzWriteOptions::flavor`], else the message
//! metadata ([`meta::NPZ_FLAVOR`]; Binsparse when only a Binsparse descriptor
//! is recorded, as for a tensor read from Binsparse HDF5), else scipy for 2-D tensors (CSR / CSC as
//! such, everything else as COO) and pydata for GCS and for COO and other tensors
//! that are not 2-D. Arrays are deflate-compressed by default, like `save_npz`.
//! Index dtypes are kept (scipy output widens 8- and 16-bit indices to int32 and
//! unsigned 32- and 64-bit ones to int64, the types scipy uses); pydata COO is
//! written canonical (sorted, duplicates summed) because `sparse.load_npz` assumes
//! it.
//!
//! ```
//! use arrow_sparse::io::{self, npz};
//! use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("m.npz");
//! let coo = CooTensor::<f32, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0), (vec![0, 0], 1.0)])?;
//! let csc: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Column)?.into();
//! npz::write(&path, &csc.clone().into(), &npz::NpzWriteOptions::default())?; // scipy csc_array
//! let back = npz::read(&path, &io::ImportOptions::default())?;
//! assert_eq!(back.tensor.format(), Format::Csc);
//! assert_eq!(back.tensor, csc);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::tensor::{EntryOrder, TensorOptions};
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

use arrow_buffer::{Buffer, MutableBuffer};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::npy::{self, Npy};
use super::{ImportOptions, meta, meta_get, open, write_atomic};
use crate::buffer::{IndexBuffer, with_index_slice};
use crate::dims::DimMap;
use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::tensor::{AnyCoo, AnyCsx, AnyGcs, AnyTensor, CompressedAxis, CoordLayout};
use crate::types::IndexType;
use crate::with_value_type;

/// Which library's npz layout.
///
/// ```
/// use std::io::Cursor;
/// use arrow_sparse::io::{npz, NpzFlavor, NpzWriteOptions, ImportOptions};
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format};
/// let csr: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?
///     .to_csx::<i32, i32>(CompressedAxis::Row)?
///     .into();
/// // scipy keeps a CSR matrix as `csr`; pydata/sparse stores it as GCXS, read back as GCS
/// for (flavor, format) in [(NpzFlavor::Scipy, Format::Csr), (NpzFlavor::Pydata, Format::Gcs)] {
///     let options = NpzWriteOptions::default().with_flavor(flavor);
///     let bytes = npz::write_to(Cursor::new(Vec::new()), &csr.clone().into(), &options)?.into_inner();
///     let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?;
///     assert_eq!((back.tensor.format(), back.tensor.get::<f64>(&[1, 2])?), (format, Some(4.0)));
/// }
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NpzFlavor {
    /// `scipy.sparse.save_npz`: csr, csc, coo.
    Scipy,
    /// `sparse.save_npz` of pydata/sparse: COO, GCXS.
    Pydata,
    /// A Binsparse archive (a `binsparse` JSON descriptor and named arrays, see
    /// [`binsparse`](super::binsparse)).
    Binsparse,
}

impl NpzFlavor {
    /// The name used in the metadata.
    ///
    /// ```
    /// use arrow_sparse::io::NpzFlavor;
    /// assert_eq!(NpzFlavor::Scipy.name(), "scipy");
    /// assert_eq!(NpzFlavor::Pydata.name(), "pydata");
    /// assert_eq!(NpzFlavor::Binsparse.name(), "binsparse");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            NpzFlavor::Scipy => "scipy",
            NpzFlavor::Pydata => "pydata",
            NpzFlavor::Binsparse => "binsparse",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        match s {
            "scipy" => Some(NpzFlavor::Scipy),
            "pydata" => Some(NpzFlavor::Pydata),
            "binsparse" => Some(NpzFlavor::Binsparse),
            _ => None,
        }
    }
}

/// Options for writing `.npz` files.
///
/// ```
/// use std::io::Cursor;
/// use arrow_sparse::io::{npz, NpzFlavor, NpzWriteOptions, ImportOptions};
/// use arrow_sparse::{AnyTensor, CooTensor, Format};
/// let defaults = NpzWriteOptions::default();
/// assert_eq!((defaults.flavor, defaults.compressed, defaults.is_array), (None, true, None));
/// // a 2-D COO tensor goes to scipy's `coo` by default; ask for pydata/sparse's COO
/// let t: AnyTensor = CooTensor::<i64, i64>::from_entries(vec![2, 2], &[(vec![1, 1], 3)])?.into();
/// let options = NpzWriteOptions { flavor: Some(NpzFlavor::Pydata), ..Default::default() };
/// let bytes = npz::write_to(Cursor::new(Vec::new()), &t.into(), &options)?.into_inner();
/// let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?;
/// assert_eq!(back.tensor.format(), Format::Coo);
/// assert_eq!(back.custom_metadata, vec![("arrow_sparse.npz.flavor".to_string(), "pydata".to_string())]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct NpzWriteOptions {
    /// The layout; `None` takes it from the metadata, else chooses by tensor (see
    /// the module docs).
    pub flavor: Option<NpzFlavor>,
    /// Deflate the arrays (default `true`, like `save_npz`).
    pub compressed: bool,
    /// scipy: write `_is_array` so that `load_npz` returns a sparse array rather
    /// than a sparse matrix. `None`: from the metadata, else `true`. N-D COO needs
    /// `true`.
    pub is_array: Option<bool>,
    /// Binsparse: the predefined format to write. `None`: the one recorded in
    /// the metadata ([`meta::BINSPARSE_DESCRIPTOR`]), else the tensor's own (see
    /// [`binsparse`](super::binsparse)).
    pub binsparse_format: Option<super::binsparse::BinsparseFormat>,
}

impl Default for NpzWriteOptions {
    fn default() -> Self {
        NpzWriteOptions {
            flavor: None,
            compressed: true,
            is_array: None,
            binsparse_format: None,
        }
    }
}

impl NpzWriteOptions {
    /// Set the layout.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use arrow_sparse::io::{meta, npz, NpzFlavor, NpzWriteOptions, ImportOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// // a 3-D tensor goes to pydata/sparse by default; scipy can hold it as an N-D coo_array
    /// let t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![2, 2, 2], &[(vec![1, 0, 1], 0.5)])?.into();
    /// let options = NpzWriteOptions::default().with_flavor(NpzFlavor::Scipy);
    /// let bytes = npz::write_to(Cursor::new(Vec::new()), &t.clone().into(), &options)?.into_inner();
    /// let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?;
    /// assert!(back.custom_metadata.contains(&(meta::NPZ_FLAVOR.to_string(), "scipy".to_string())));
    /// assert_eq!(back.tensor.get::<f32>(&[1, 0, 1])?, Some(0.5));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_flavor(mut self, f: NpzFlavor) -> Self {
        self.flavor = Some(f);
        self
    }
    /// Compress or store the arrays.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use arrow_sparse::io::{npz, NpzWriteOptions, ImportOptions};
    /// use arrow_sparse::{AnyTensor, DenseTensor};
    /// let t: AnyTensor = DenseTensor::<f64>::try_new(vec![50, 50], vec![1.0; 2500].into())?.into();
    /// let write = |o: &NpzWriteOptions| npz::write_to(Cursor::new(Vec::new()), &t.clone().into(), o).map(Cursor::into_inner);
    /// let deflated = write(&NpzWriteOptions::default())?;
    /// let stored = write(&NpzWriteOptions::default().with_compressed(false))?;
    /// assert!(stored.len() > 2500 * 8 && deflated.len() < stored.len() / 10);
    /// // both read back the same tensor (as COO: dense tensors are written as scipy `coo`)
    /// let read = |b: Vec<u8>| npz::read_from(Cursor::new(b), "mem.npz", &ImportOptions::default());
    /// assert_eq!(read(deflated)?.tensor, read(stored)?.tensor);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_compressed(mut self, c: bool) -> Self {
        self.compressed = c;
        self
    }
    /// Set scipy's `_is_array`.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use arrow_sparse::io::{meta, npz, NpzFlavor, NpzWriteOptions, ImportOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let matrix = NpzWriteOptions::default().with_flavor(NpzFlavor::Scipy).with_is_array(false);
    /// assert_eq!(matrix.is_array, Some(false));
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0)])?.into();
    /// let bytes = npz::write_to(Cursor::new(Vec::new()), &t.into(), &matrix)?.into_inner();
    /// let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?;
    /// assert!(back.custom_metadata.contains(&(meta::NPZ_IS_ARRAY.to_string(), "false".to_string())));
    /// // a scipy sparse matrix is 2-D: a 3-D tensor needs `_is_array`
    /// let t3: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[(vec![0, 1, 1], 1.0)])?.into();
    /// assert!(npz::write_to(Cursor::new(Vec::new()), &t3.into(), &matrix).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_is_array(mut self, a: bool) -> Self {
        self.is_array = Some(a);
        self
    }
    /// Write a Binsparse archive in the given predefined format.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use arrow_sparse::io::{npz, binsparse::BinsparseFormat, NpzWriteOptions, ImportOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor, Format};
    /// let t: AnyTensor = CooTensor::<f64, i32>::from_entries(vec![3, 4], &[(vec![2, 1], 1.5)])?.into();
    /// let options = NpzWriteOptions::default().with_binsparse_format(BinsparseFormat::Csc);
    /// let bytes = npz::write_to(Cursor::new(Vec::new()), &t.into(), &options)?.into_inner();
    /// let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?;
    /// assert_eq!((back.tensor.format(), back.tensor.get::<f64>(&[2, 1])?), (Format::Csc, Some(1.5)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_binsparse_format(mut self, f: super::binsparse::BinsparseFormat) -> Self {
        self.flavor = Some(NpzFlavor::Binsparse);
        self.binsparse_format = Some(f);
        self
    }
}

pub(super) fn err(what: &str, detail: impl Into<String>) -> Error {
    Error::Parse {
        what: what.to_string(),
        detail: detail.into(),
    }
}

/// An open archive and the names of its arrays.
pub(super) struct Archive<R> {
    zip: ZipArchive<R>,
    pub(super) name: String,
    pub(super) arrays: Vec<String>,
    /// The reader's memory limit, the archive's size and the uncompressed bytes
    /// of the arrays loaded so far.
    pub(super) limit: crate::limit::ReadLimit,
    pub(super) input_bytes: u64,
    pub(super) loaded: u64,
}

impl<R: Read + Seek> Archive<R> {
    pub(super) fn has(&self, key: &str) -> bool {
        self.arrays.iter().any(|a| a == key)
    }

    pub(super) fn load(&mut self, key: &str) -> Result<Npy> {
        let what = format!("{}: {key}.npy", self.name);
        let f = self
            .zip
            .by_name(&format!("{key}.npy"))
            .map_err(|e| err(&what, format!("cannot open the archive entry: {e}")))?;
        let size = f.size();
        // a deflated entry can declare (and hold) a thousand times its size:
        // what the arrays inflate to must fit the read limit before it is read
        self.loaded = self.loaded.saturating_add(size);
        self.limit.check(
            format!(
                "{what} ({size} bytes once inflated, {} bytes of arrays in all)",
                self.loaded
            ),
            self.loaded,
            self.input_bytes,
        )?;
        npy::read(f, size, &what)
    }

    /// Load an array the layout requires.
    pub(super) fn need(&mut self, key: &str, layout: &str) -> Result<Npy> {
        if !self.has(key) {
            return Err(err(
                &self.name,
                format!(
                    "{layout} needs the array `{key}`, which is missing (found: {})",
                    self.arrays.join(", ")
                ),
            ));
        }
        self.load(key)
    }

    fn vector(&mut self, key: &str, layout: &str) -> Result<Npy> {
        let a = self.need(key, layout)?;
        a.expect_ndim(1)?;
        Ok(a)
    }

    pub(super) fn fail(&self, e: Error) -> Error {
        match e {
            e @ Error::Parse { .. } => e,
            e => err(&self.name, e.to_string()),
        }
    }
}

/// Read a `.npz` file.
///
/// ```
/// use arrow_sparse::io::{npz, ImportOptions};
/// use arrow_sparse::{AnyTensor, CooTensor, Format, IndexType};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.npz");
/// let t: AnyTensor = CooTensor::<i16, i32>::from_entries(vec![4, 3, 2], &[(vec![3, 2, 1], -5)])?.into();
/// npz::write(&path, &t.into(), &npz::NpzWriteOptions::default())?; // pydata/sparse COO
/// let back = npz::read(&path, &ImportOptions::default())?;
/// assert_eq!((back.tensor.format(), back.tensor.index_type()), (Format::Coo, Some(IndexType::Int32)));
/// assert_eq!((back.tensor.shape(), back.tensor.get::<i16>(&[3, 2, 1])?), (&[4usize, 3, 2][..], Some(-5)));
/// // a missing file is an I/O error naming the path
/// assert!(npz::read(&dir.path().join("missing.npz"), &ImportOptions::default()).unwrap_err().to_string().contains("missing.npz"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read(path: impl AsRef<Path>, options: &ImportOptions) -> Result<TensorMessage> {
    let path = path.as_ref();
    read_from(
        BufReader::new(open(path)?),
        &path.display().to_string(),
        options,
    )
}

/// Read an npz archive from any seekable byte source; `name` is used in error
/// messages. The text-only [`ImportOptions`] do not apply: the file's dtypes are
/// kept. [`ImportOptions::limit`] bounds the bytes the arrays inflate to, checked
/// from the archive's directory before each array is read.
///
/// ```
/// use std::io::Cursor;
/// use arrow_sparse::io::{meta, npz, ImportOptions};
/// use arrow_sparse::{dims::DimMap, AnyTensor, CompressedAxis, CooTensor, IndexType};
/// // a 3-D tensor as GCS with rows = axis 1, columns = axes (0, 2): pydata's GCXS layout
/// let coo: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 5.0)])?.into();
/// let gcs = coo.to_gcs(DimMap::try_new(vec![2, 3, 4], vec![1, 0, 2], vec![1])?, CompressedAxis::Row, IndexType::Int32)?;
/// let bytes = npz::write_to(Cursor::new(Vec::new()), &gcs.clone().into(), &npz::NpzWriteOptions::default())?;
/// let back = npz::read_from(Cursor::new(bytes.into_inner()), "mem.npz", &ImportOptions::default())?;
/// assert_eq!(back.tensor, gcs);
/// assert_eq!(back.custom_metadata[0], (meta::NPZ_FLAVOR.to_string(), "pydata".to_string()));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn read_from<R: Read + Seek>(
    mut reader: R,
    name: &str,
    options: &ImportOptions,
) -> Result<TensorMessage> {
    let input_bytes = reader
        .seek(std::io::SeekFrom::End(0))
        .and_then(|n| reader.rewind().map(|_| n))
        .map_err(|e| err(name, format!("cannot read: {e}")))?;
    let zip =
        ZipArchive::new(reader).map_err(|e| err(name, format!("not an npz (zip) archive: {e}")))?;
    let arrays: Vec<String> = zip
        .file_names()
        .filter_map(|n| {
            n.ok()
                .and_then(|n| n.strip_suffix(".npy").map(str::to_string))
        })
        .collect();
    let mut a = Archive {
        zip,
        name: name.to_string(),
        arrays,
        limit: options.limit,
        input_bytes,
        loaded: 0,
    };
    let (tensor, metadata) = if a.has("binsparse") {
        super::binsparse::read_container(&mut a)?
    } else if a.has("format") {
        read_scipy(&mut a)?
    } else if a.has("coords") {
        (read_pydata_coo(&mut a)?, vec![])
    } else if a.has("indptr") || a.has("compressed_axes") {
        (read_gcxs(&mut a)?, vec![])
    } else {
        return Err(err(
            name,
            format!(
                "not a scipy, pydata/sparse or Binsparse npz: no `format`, `coords`, `indptr` or `binsparse` array (found: {})",
                a.arrays.join(", ")
            ),
        ));
    };
    let flavor = if a.has("binsparse") {
        NpzFlavor::Binsparse
    } else if a.has("format") {
        NpzFlavor::Scipy
    } else {
        NpzFlavor::Pydata
    };
    let mut custom_metadata = vec![(meta::NPZ_FLAVOR.to_string(), flavor.name().to_string())];
    custom_metadata.extend(metadata);
    Ok(TensorMessage {
        tensor,
        custom_metadata,
    })
}

fn read_scipy<R: Read + Seek>(a: &mut Archive<R>) -> Result<(AnyTensor, Vec<(String, String)>)> {
    let format = a.load("format")?.string()?;
    let is_array = if a.has("_is_array") {
        a.load("_is_array")?.truth()?
    } else {
        false
    };
    let md = vec![(meta::NPZ_IS_ARRAY.to_string(), is_array.to_string())];
    let layout = format!("a scipy {format} file");
    let shape = a.vector("shape", &layout)?.usizes()?;
    let tensor = match format.as_str() {
        "csr" | "csc" => {
            if shape.len() != 2 {
                return Err(err(
                    &a.name,
                    format!("a scipy {format} matrix has a 2-D shape, found {shape:?}"),
                ));
            }
            let axis = if format == "csr" {
                CompressedAxis::Row
            } else {
                CompressedAxis::Column
            };
            let data = a.vector("data", &layout)?.values()?;
            let indices = a.vector("indices", &layout)?.indices()?;
            let indptr = a.vector("indptr", &layout)?.indices()?;
            AnyTensor::Csx(
                AnyCsx::try_new(
                    shape,
                    axis,
                    indptr,
                    indices,
                    data,
                    &TensorOptions::default(),
                )
                .map_err(|e| a.fail(e))?,
            )
        }
        "coo" => {
            let data = a.vector("data", &layout)?.values()?;
            let (coords, layout_kind) = if a.has("coords") {
                coords_array(a, shape.len(), data.len())?
            } else {
                if shape.len() != 2 {
                    return Err(err(
                        &a.name,
                        format!("a scipy coo file without `coords` is 2-D, found shape {shape:?}"),
                    ));
                }
                let row = a.vector("row", &layout)?.indices()?;
                let col = a.vector("col", &layout)?.indices()?;
                (
                    concat(&row, &col).map_err(|e| a.fail(e))?,
                    CoordLayout::ColumnMajor,
                )
            };
            coo(a, shape, coords, layout_kind, data)?
        }
        "bsr" | "dia" => {
            return Err(err(
                &a.name,
                format!("scipy {format} matrices are not supported (only csr, csc and coo)"),
            ));
        }
        other => {
            return Err(err(
                &a.name,
                format!("unknown scipy sparse format {other:?} (expected csr, csc or coo)"),
            ));
        }
    };
    Ok((tensor, md))
}

/// A `(ndim, nnz)` coordinates array.
fn coords_array<R: Read + Seek>(
    a: &mut Archive<R>,
    ndim: usize,
    nnz: usize,
) -> Result<(IndexBuffer, CoordLayout)> {
    let c = a.load("coords")?;
    if c.shape != [ndim, nnz] {
        return Err(err(
            &c.what,
            format!(
                "expected shape ({ndim}, {nnz}) (dimensions x entries), found {:?}",
                c.shape
            ),
        ));
    }
    let layout = if c.fortran && ndim > 1 && nnz > 1 {
        CoordLayout::RowMajor
    } else {
        CoordLayout::ColumnMajor
    };
    Ok((c.indices()?, layout))
}

/// Row indices followed by column indices, in one buffer (a common type).
fn concat(row: &IndexBuffer, col: &IndexBuffer) -> Result<IndexBuffer> {
    if row.len() != col.len() {
        return Err(Error::length("col", row.len(), col.len()));
    }
    let ty = if row.data_type() == col.data_type() {
        row.data_type()
    } else {
        IndexType::Int64
    };
    let (r, c) = (row.cast(ty, "row")?, col.cast(ty, "col")?);
    let mut buf = MutableBuffer::new(r.inner().len() + c.inner().len());
    buf.extend_from_slice(r.inner().as_slice());
    buf.extend_from_slice(c.inner().as_slice());
    IndexBuffer::from_body(ty, &buf.into(), 0, 2 * row.len(), "coords", false)
}

/// Whether coordinates are sorted lexicographically without duplicates.
pub(super) fn canonical(
    coords: &IndexBuffer,
    layout: CoordLayout,
    nnz: usize,
    ndim: usize,
) -> bool {
    if Some(coords.len()) != nnz.checked_mul(ndim) {
        return false;
    }
    with_index_slice!(coords.as_slice(), s => {
        let at = |k: usize, d: usize| match layout {
            CoordLayout::RowMajor => s[k * ndim + d],
            CoordLayout::ColumnMajor => s[d * nnz + k],
        };
        (1..nnz).all(|k| {
            for d in 0..ndim {
                let (x, y) = (at(k - 1, d), at(k, d));
                if x != y {
                    return x < y;
                }
            }
            false
        })
    })
}

pub(super) fn coo<R: Read + Seek>(
    a: &Archive<R>,
    shape: Vec<usize>,
    coords: IndexBuffer,
    layout: CoordLayout,
    data: crate::buffer::ValueBuffer,
) -> Result<AnyTensor> {
    if shape.is_empty() {
        return Err(err(&a.name, "0-D arrays are not supported"));
    }
    let canon = canonical(&coords, layout, data.len(), shape.len());
    Ok(AnyTensor::Coo(
        AnyCoo::try_new(
            shape,
            layout,
            EntryOrder::from(canon),
            coords,
            data,
            &TensorOptions::default(),
        )
        .map_err(|e| a.fail(e))?,
    ))
}

fn check_fill_value<R: Read + Seek>(a: &mut Archive<R>, layout: &str) -> Result<()> {
    let f = a.need("fill_value", layout)?;
    if !f.is_zero_scalar()? {
        return Err(err(
            &f.what,
            "only a zero fill value is supported (arrow-sparse tensors are zero where nothing is stored)",
        ));
    }
    Ok(())
}

fn read_pydata_coo<R: Read + Seek>(a: &mut Archive<R>) -> Result<AnyTensor> {
    let layout = "a pydata/sparse COO file";
    let shape = a.vector("shape", layout)?.usizes()?;
    check_fill_value(a, layout)?;
    let data = a.vector("data", layout)?.values()?;
    let (coords, kind) = coords_array(a, shape.len(), data.len())?;
    coo(a, shape, coords, kind, data)
}

fn read_gcxs<R: Read + Seek>(a: &mut Archive<R>) -> Result<AnyTensor> {
    let layout = "a pydata/sparse GCXS file";
    let shape = a.vector("shape", layout)?.usizes()?;
    check_fill_value(a, layout)?;
    let axes = a.need("compressed_axes", layout)?;
    if !matches!(axes.dtype, npy::Dtype::Num(_)) {
        return Err(err(
            &axes.what,
            format!(
                "expected an integer array (1-D GCXS arrays, whose compressed_axes is None, are not supported), found dtype {:?}",
                axes.descr
            ),
        ));
    }
    let compressed = axes.usizes()?;
    let n = shape.len();
    let ok = !compressed.is_empty()
        && compressed.len() < n
        && compressed.windows(2).all(|w| w[0] < w[1])
        && compressed.iter().all(|&x| x < n);
    if !ok {
        return Err(err(
            &axes.what,
            format!(
                "expected sorted distinct axes of the {n}-D shape, at least one and not all, found {compressed:?}"
            ),
        ));
    }
    let mut dims = compressed.clone();
    dims.extend((0..n).filter(|d| !compressed.contains(d)));
    let map = DimMap::try_new(shape, dims, vec![compressed.len()]).map_err(|e| a.fail(e))?;
    let data = a.vector("data", layout)?.values()?;
    let indices = a.vector("indices", layout)?.indices()?;
    let indptr = a.vector("indptr", layout)?.indices()?;
    let matrix = AnyCsx::try_new(
        map.reduced_shape().to_vec(),
        CompressedAxis::Row,
        indptr,
        indices,
        data,
        &TensorOptions::default(),
    )
    .map_err(|e| a.fail(e))?;
    Ok(AnyTensor::Gcs(
        AnyGcs::try_new(map, matrix, &TensorOptions::default()).map_err(|e| a.fail(e))?,
    ))
}

/// One array to write.
pub(super) struct Array {
    pub(super) key: String,
    pub(super) descr: String,
    pub(super) shape: Vec<usize>,
    pub(super) data: Buffer,
}

fn int64s(key: &str, v: &[usize]) -> Array {
    let vals: Vec<i64> = v.iter().map(|&x| x as i64).collect();
    Array {
        key: key.to_string(),
        descr: npy::index_descr(IndexType::Int64),
        shape: vec![v.len()],
        data: Buffer::from_vec(vals),
    }
}

pub(super) fn index_array(key: &str, b: &IndexBuffer, shape: Vec<usize>) -> Array {
    Array {
        key: key.to_string(),
        descr: npy::index_descr(b.data_type()),
        shape,
        data: b.inner().clone(),
    }
}

pub(super) fn value_array(key: &str, b: &crate::buffer::ValueBuffer) -> Array {
    Array {
        key: key.to_string(),
        descr: npy::descr(b.data_type()),
        shape: vec![b.len()],
        data: b.inner().clone(),
    }
}

/// The index type scipy keeps: int32 or int64.
fn scipy_index(b: &IndexBuffer, what: &str) -> Result<IndexBuffer> {
    match b.data_type() {
        IndexType::Int32 | IndexType::Int64 => Ok(b.clone()),
        IndexType::Int8 | IndexType::Int16 | IndexType::UInt8 | IndexType::UInt16 => {
            b.cast(IndexType::Int32, what)
        }
        IndexType::UInt32 | IndexType::UInt64 => b.cast(IndexType::Int64, what),
    }
}

/// The coordinates along each dimension, dimension by dimension (C order
/// `(ndim, nnz)`).
pub(super) fn dimension_major(c: &AnyCoo) -> IndexBuffer {
    if c.layout() == CoordLayout::ColumnMajor || c.shape().len() == 1 || c.nnz() <= 1 {
        return c.coords().clone();
    }
    let (nnz, ndim) = (c.nnz(), c.shape().len());
    with_index_slice!(c.coords().as_slice(), s => {
        let mut out = Vec::with_capacity(s.len());
        for d in 0..ndim {
            out.extend((0..nnz).map(|k| s[k * ndim + d]));
        }
        crate::buffer::IndexBuffer::from(arrow_buffer::ScalarBuffer::from(out))
    })
}

/// The coordinates along dimension `d` of a dimension-major buffer (zero-copy).
pub(super) fn slice_dim(b: &IndexBuffer, d: usize, nnz: usize) -> Result<IndexBuffer> {
    let w = b.data_type().byte_width();
    IndexBuffer::from_body(b.data_type(), b.inner(), d * nnz * w, nnz, "coords", false)
}

fn default_flavor(t: &AnyTensor) -> NpzFlavor {
    match t {
        AnyTensor::Gcs(_) => NpzFlavor::Pydata,
        AnyTensor::Csx(_) => NpzFlavor::Scipy,
        _ if t.shape().len() == 2 => NpzFlavor::Scipy,
        _ => NpzFlavor::Pydata,
    }
}

/// Write a tensor as a `.npz` file, atomically.
///
/// ```
/// use arrow_sparse::io::{npz, ImportOptions};
/// use arrow_sparse::{AnyTensor, CooTensor, Format};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("m.npz");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3, 3], &[(vec![2, 0], 1.25)])?.into();
/// npz::write(&path, &t.clone().into(), &npz::NpzWriteOptions::default())?; // scipy coo_array
/// assert_eq!(&std::fs::read(&path)?[..4], b"PK\x03\x04"); // a zip archive
/// let back = npz::read(&path, &ImportOptions::default())?;
/// assert_eq!((back.tensor.format(), back.tensor.get::<f64>(&[2, 0])?), (Format::Coo, Some(1.25)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write(
    path: impl AsRef<Path>,
    message: &TensorMessage,
    options: &NpzWriteOptions,
) -> Result<()> {
    let path = path.as_ref();
    write_atomic(path, |f| {
        let mut w = write_to(BufWriter::new(f), message, options)?;
        w.flush()?;
        Ok(())
    })
}

/// Write a tensor as an npz archive to a seekable sink; returns the sink.
///
/// ```
/// use std::io::Cursor;
/// use arrow_sparse::io::{npz, NpzWriteOptions, ImportOptions};
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
/// let csc: AnyTensor = CooTensor::<u8, i64>::from_entries(vec![2, 4], &[(vec![0, 3], 9)])?
///     .to_csx::<i64, i64>(CompressedAxis::Column)?
///     .into();
/// let sink = npz::write_to(Cursor::new(Vec::new()), &csc.clone().into(), &NpzWriteOptions::default())?;
/// let bytes = sink.into_inner();
/// assert_eq!(&bytes[..2], b"PK");
/// assert_eq!(npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?.tensor, csc);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn write_to<W: Write + Seek>(
    out: W,
    message: &TensorMessage,
    options: &NpzWriteOptions,
) -> Result<W> {
    let t = &message.tensor;
    let md = &message.custom_metadata;
    let flavor = options
        .flavor
        .or(options.binsparse_format.map(|_| NpzFlavor::Binsparse))
        .or_else(|| meta_get(md, meta::NPZ_FLAVOR).and_then(NpzFlavor::parse))
        // a tensor read from a Binsparse file of another container (HDF5)
        .or_else(|| meta_get(md, meta::BINSPARSE_DESCRIPTOR).map(|_| NpzFlavor::Binsparse))
        .unwrap_or_else(|| default_flavor(t));
    let arrays = match flavor {
        NpzFlavor::Scipy => {
            let is_array = options
                .is_array
                // a recorded `_is_array = false` only means something for 2-D
                // tensors (scipy's sparse matrices are 2-D)
                .or_else(|| {
                    meta_get(md, meta::NPZ_IS_ARRAY).map(|v| v == "true" || t.shape().len() != 2)
                })
                .unwrap_or(true);
            scipy_arrays(t, is_array)?
        }
        NpzFlavor::Pydata => pydata_arrays(t)?,
        NpzFlavor::Binsparse => super::binsparse::arrays(t, md, options.binsparse_format)?,
    };
    write_arrays(out, &arrays, options.compressed)
}

/// Write the arrays as the entries `KEY.npy` of a zip archive.
pub(super) fn write_arrays<W: Write + Seek>(
    out: W,
    arrays: &[Array],
    compressed: bool,
) -> Result<W> {
    let mut zip = ZipWriter::new(out);
    let method = if compressed {
        CompressionMethod::Deflated
    } else {
        CompressionMethod::Stored
    };
    let zerr = |e: zip::result::ZipError| Error::Io(std::io::Error::other(e));
    for a in arrays {
        let opts = SimpleFileOptions::default()
            .compression_method(method)
            .large_file(npy::serialized_len(a.data.len()) >= u32::MAX as u64);
        zip.start_file(format!("{}.npy", a.key), opts)
            .map_err(zerr)?;
        npy::write(&mut zip, &a.descr, &a.shape, a.data.as_slice())?;
    }
    zip.finish().map_err(zerr)
}

fn to_coo_any(t: &AnyTensor) -> Result<AnyCoo> {
    with_value_type!(t.value_type(), V => {
        match AnyTensor::from(t.to_coo::<V, i64>()?) {
            AnyTensor::Coo(c) => Ok(c),
            _ => Err(Error::Unsupported("internal: to_coo did not give COO".into())),
        }
    })
}

fn scipy_arrays(t: &AnyTensor, is_array: bool) -> Result<Vec<Array>> {
    let shape = t.shape();
    let mut out = Vec::new();
    let (format, data): (&[u8], _) = match t {
        AnyTensor::Csx(m) => {
            let indices = scipy_index(m.indices(), "indices")?;
            let indptr = scipy_index(m.indptr(), "indptr")?;
            out.push(index_array("indices", &indices, vec![indices.len()]));
            out.push(index_array("indptr", &indptr, vec![indptr.len()]));
            let f: &[u8] = if m.axis() == CompressedAxis::Row {
                b"csr"
            } else {
                b"csc"
            };
            (f, m.values().clone())
        }
        _ => {
            if shape.len() != 2 && !is_array {
                return Err(Error::Unsupported(format!(
                    "a {}-D tensor can only be saved as a scipy sparse array (is_array = true), not a sparse matrix",
                    shape.len()
                )));
            }
            let c = match t {
                AnyTensor::Coo(c) => c.clone(),
                _ => to_coo_any(t)?,
            };
            let coords = scipy_index(&dimension_major(&c), "coords")?;
            let nnz = c.nnz();
            if shape.len() == 2 {
                out.push(index_array("row", &slice_dim(&coords, 0, nnz)?, vec![nnz]));
                out.push(index_array("col", &slice_dim(&coords, 1, nnz)?, vec![nnz]));
            } else {
                out.push(index_array("coords", &coords, vec![shape.len(), nnz]));
            }
            (b"coo", c.values().clone())
        }
    };
    out.push(Array {
        key: "format".into(),
        descr: "|S3".into(),
        shape: vec![],
        data: Buffer::from(format),
    });
    out.push(int64s("shape", shape));
    out.push(value_array("data", &data));
    if is_array {
        out.push(Array {
            key: "_is_array".into(),
            descr: "|b1".into(),
            shape: vec![],
            data: Buffer::from(&[1u8][..]),
        });
    }
    // scipy's own order: the index arrays, format, shape, data, _is_array
    Ok(out)
}

fn fill_value(v: &crate::buffer::ValueBuffer) -> Array {
    Array {
        key: "fill_value".into(),
        descr: npy::descr(v.data_type()),
        shape: vec![],
        data: Buffer::from_vec(vec![0u8; v.data_type().byte_width()]),
    }
}

fn pydata_arrays(t: &AnyTensor) -> Result<Vec<Array>> {
    let shape = t.shape().to_vec();
    match t {
        AnyTensor::Gcs(g) if shape.len() >= 2 => {
            let map = g.map();
            let (major, minor) = g.matrix().axis().dims();
            let (comp, rest) = (map.part(major), map.part(minor));
            let sorted = |p: &[usize]| p.windows(2).all(|w| w[0] < w[1]);
            if !comp.is_empty() && !rest.is_empty() && sorted(comp) && sorted(rest) {
                let m = g.matrix();
                return gcxs(&shape, comp, m.indices(), m.indptr(), m.values());
            }
            // re-map to a layout GCXS can express: the compressed axes sorted first
            let mut c: Vec<usize> = comp.to_vec();
            c.sort_unstable();
            if c.is_empty() || c.len() == shape.len() {
                c = vec![argmin(&shape)];
            }
            let mut dims = c.clone();
            dims.extend((0..shape.len()).filter(|d| !c.contains(d)));
            let map = DimMap::try_new(shape.clone(), dims, vec![c.len()])?;
            let re = t.to_gcs(map, CompressedAxis::Row, IndexType::Int64)?;
            pydata_arrays(&re)
        }
        AnyTensor::Csx(m) => {
            let axes = [if m.axis() == CompressedAxis::Row {
                0
            } else {
                1
            }];
            gcxs(&shape, &axes, m.indices(), m.indptr(), m.values())
        }
        _ => {
            let c = match t {
                AnyTensor::Coo(c) if c.is_canonical() => c.clone(),
                AnyTensor::Coo(c) => {
                    // canonical in int64, then back to the file's index type
                    let wide = canonical_coo(t)?;
                    let coords = wide.coords().cast(c.index_type(), "coords")?;
                    AnyCoo::try_new(
                        shape.clone(),
                        CoordLayout::RowMajor,
                        EntryOrder::Canonical,
                        coords,
                        wide.values().clone(),
                        &TensorOptions::trusted(),
                    )?
                }
                _ => canonical_coo(t)?,
            };
            let coords = dimension_major(&c);
            Ok(vec![
                value_array("data", c.values()),
                int64s("shape", &shape),
                fill_value(c.values()),
                index_array("coords", &coords, vec![shape.len(), c.nnz()]),
            ])
        }
    }
}

fn canonical_coo(t: &AnyTensor) -> Result<AnyCoo> {
    with_value_type!(t.value_type(), V => {
        let coo = t.to_coo::<V, i64>()?.canonicalize()?;
        Ok(AnyCoo::from(coo))
    })
}

fn argmin(shape: &[usize]) -> usize {
    (0..shape.len()).min_by_key(|&d| shape[d]).unwrap_or(0)
}

fn gcxs(
    shape: &[usize],
    compressed: &[usize],
    indices: &IndexBuffer,
    indptr: &IndexBuffer,
    values: &crate::buffer::ValueBuffer,
) -> Result<Vec<Array>> {
    // one dtype for both, as pydata/sparse builds them
    let (indices, indptr) = if indices.data_type() == indptr.data_type() {
        (indices.clone(), indptr.clone())
    } else {
        (
            indices.cast(IndexType::Int64, "indices")?,
            indptr.cast(IndexType::Int64, "indptr")?,
        )
    };
    Ok(vec![
        value_array("data", values),
        int64s("shape", shape),
        fill_value(values),
        index_array("indices", &indices, vec![indices.len()]),
        index_array("indptr", &indptr, vec![indptr.len()]),
        int64s("compressed_axes", compressed),
    ])
}

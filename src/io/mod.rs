//! Import and export of the common sparse exchange files: Matrix Market (`.mtx`),
//! FROSTT (`.tns`) and NumPy zip archives (`.npz`) as written by scipy's
//! `save_npz` and pydata/sparse's `save_npz`.
//!
//! | file | reader gives | writer takes |
//! |---|---|---|
//! | `.mtx` `coordinate` (real, integer, pattern; general, symmetric, skew-symmetric) | COO, symmetric files expanded to both triangles | any 2-D tensor |
//! | `.mtx` `array` | dense (row-major) | any 2-D tensor (dense by default) |
//! | `.tns` (FROSTT, optional rank / shape / nnz header) | COO | any tensor |
//! | `.npz` scipy `csr` / `csc` / `coo` | CSR / CSC / COO, same dtypes | any tensor |
//! | `.npz` pydata/sparse `COO` / `GCXS` | COO / GCS, same dtypes | any tensor |
//! | `.npz` Binsparse (recognised by its `binsparse` entry; see [`binsparse`]) | dense / COO / CSR / CSC / CSF by format | any tensor (float16 excepted) |
//! | `.h5` / `.hdf5` Binsparse HDF5 (cargo feature `hdf5`; module `hdf5`) | as Binsparse `.npz` | as Binsparse `.npz` |
//!
//! Readers return a [`TensorMessage`]: the tensor plus `custom_metadata` saying
//! what the file's header said (the keys are in [`meta`]: Matrix Market field and
//! symmetry, `.tns` header style, npz flavour). The metadata travels with the
//! tensor through Arrow IPC files, and the writers use it as their defaults, so
//! `.mtx -> .arrow -> .mtx` writes a symmetric file back as symmetric, a pattern
//! file as pattern, and so on. Options given to a writer override the metadata.
//!
//! Text reading is streaming: the input is read in chunks, memory apart from the
//! output tensor stays bounded, and nothing is preallocated on the word of a
//! header. Malformed input gives an [`Error::Parse`] naming
//! `file:line` and what was expected; npz errors name the file and the array.
//! Every tensor is built through the validating constructors. Writers write a
//! temporary file in the destination directory (`.NAME.arrow-sparse-tmp.K`, locked
//! while its writer runs) and rename it into place; a replaced file keeps its
//! permission bits. A writer killed on the way leaves its temporary file behind:
//! the next write to the same file removes it, and [`remove_stale_temporaries`]
//! cleans a whole folder.
//!
//! ```
//! use arrow_sparse::{io, CooTensor, AnyTensor};
//! let dir = tempfile::tempdir()?;
//! let coo = CooTensor::<f64, i64>::from_entries(vec![3, 3], &[(vec![0, 1], 2.5), (vec![2, 0], -1.0)])?;
//! let msg = AnyTensor::from(coo).into();
//! for name in ["m.mtx", "m.tns", "m.npz"] {
//!     let path = dir.path().join(name);
//!     io::write_path(&path, &msg)?;
//!     let back = io::read_path(&path)?;
//!     assert_eq!(back.tensor.nnz(), 2);
//!     assert_eq!(back.tensor.get::<f64>(&[2, 0])?, Some(-1.0));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod binsparse;
#[cfg(feature = "hdf5")]
pub mod hdf5;
pub mod mtx;
mod npy;
pub mod npz;
mod text;
pub mod tns;

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::types::{IndexType, ValueType};

pub use binsparse::Hdf5WriteOptions;
pub use mtx::{MtxField, MtxFormat, MtxSymmetry, MtxWriteOptions};
pub use npz::{NpzFlavor, NpzWriteOptions};
pub use tns::{TnsHeader, TnsWriteOptions};

#[doc(hidden)]
#[allow(deprecated)]
pub use crate::compat::io::{ReadOptions, WriteOptions};

/// The `custom_metadata` keys the readers set and the writers read.
pub mod meta {
    /// Matrix Market format: `coordinate` or `array`.
    ///
    /// ```
    /// use arrow_sparse::io::{meta, mtx, ImportOptions};
    /// let text = "%%MatrixMarket matrix coordinate real symmetric\n% made by hand\n2 2 2\n1 1 1.5\n2 1 -2\n";
    /// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &ImportOptions::default())?;
    /// let get = |k: &str| msg.custom_metadata.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    /// assert_eq!(get(meta::MTX_FORMAT), Some("coordinate"));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub const MTX_FORMAT: &str = "arrow_sparse.mtx.format";
    /// Matrix Market field: `real`, `integer` or `pattern`.
    ///
    /// ```
    /// use arrow_sparse::io::{meta, mtx, ImportOptions};
    /// let text = "%%MatrixMarket matrix coordinate real symmetric\n% made by hand\n2 2 2\n1 1 1.5\n2 1 -2\n";
    /// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &ImportOptions::default())?;
    /// let get = |k: &str| msg.custom_metadata.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    /// assert_eq!(get(meta::MTX_FIELD), Some("real"));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub const MTX_FIELD: &str = "arrow_sparse.mtx.field";
    /// Matrix Market symmetry: `general`, `symmetric` or `skew-symmetric`.
    ///
    /// ```
    /// use arrow_sparse::io::{meta, mtx, ImportOptions};
    /// let text = "%%MatrixMarket matrix coordinate real symmetric\n% made by hand\n2 2 2\n1 1 1.5\n2 1 -2\n";
    /// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &ImportOptions::default())?;
    /// let get = |k: &str| msg.custom_metadata.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    /// assert_eq!(get(meta::MTX_SYMMETRY), Some("symmetric"));
    /// assert_eq!(msg.tensor.nnz(), 3); // the upper triangle is filled in
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub const MTX_SYMMETRY: &str = "arrow_sparse.mtx.symmetry";
    /// The Matrix Market comment lines (without their `%`), joined by `\n`; at most
    /// 64 KiB are kept.
    ///
    /// ```
    /// use arrow_sparse::io::{meta, mtx, ImportOptions};
    /// let text = "%%MatrixMarket matrix coordinate real symmetric\n% made by hand\n2 2 2\n1 1 1.5\n2 1 -2\n";
    /// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &ImportOptions::default())?;
    /// let get = |k: &str| msg.custom_metadata.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    /// assert_eq!(get(meta::MTX_COMMENTS).map(str::trim), Some("made by hand"));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub const MTX_COMMENTS: &str = "arrow_sparse.mtx.comments";
    /// The `.tns` header style (see [`TnsHeader`](super::TnsHeader)): `none`,
    /// `rank-shape`, `rank-shape-nnz`, `rank-nnz-shape` or `sptensor`.
    ///
    /// ```
    /// use arrow_sparse::io::{meta, tns, ImportOptions};
    /// // rank 2, extents 3 x 4, then one entry (1-based coordinates)
    /// let msg = tns::read_from("2\n3 4\n1 2 7.5\n".as_bytes(), "mem.tns", &ImportOptions::default())?;
    /// assert_eq!(msg.tensor.shape(), &[3, 4]);
    /// assert!(msg.custom_metadata.contains(&(meta::TNS_HEADER.to_string(), "rank-shape".to_string())));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub const TNS_HEADER: &str = "arrow_sparse.tns.header";
    /// Which library's npz layout: `scipy` or `pydata`.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use arrow_sparse::io::{meta, npz, NpzFlavor, ImportOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0)])?.into();
    /// let opts = npz::NpzWriteOptions::default().with_flavor(NpzFlavor::Scipy);
    /// let bytes = npz::write_to(Cursor::new(Vec::new()), &t.into(), &opts)?.into_inner();
    /// let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?;
    /// assert!(back.custom_metadata.contains(&(meta::NPZ_FLAVOR.to_string(), "scipy".to_string())));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub const NPZ_FLAVOR: &str = "arrow_sparse.npz.flavor";
    /// scipy only: `true` when the file holds a sparse array (`_is_array`), `false`
    /// for a sparse matrix.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use arrow_sparse::io::{meta, npz, NpzFlavor, ImportOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0)])?.into();
    /// // a scipy sparse matrix rather than a sparse array
    /// let opts = npz::NpzWriteOptions::default().with_flavor(NpzFlavor::Scipy).with_is_array(false);
    /// let bytes = npz::write_to(Cursor::new(Vec::new()), &t.into(), &opts)?.into_inner();
    /// let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?;
    /// assert!(back.custom_metadata.contains(&(meta::NPZ_IS_ARRAY.to_string(), "false".to_string())));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub const NPZ_IS_ARRAY: &str = "arrow_sparse.npz.is_array";
    /// Binsparse: the archive's whole JSON descriptor (the `binsparse` namespace
    /// and any keys beside it), compact. Writing Binsparse re-emits its format,
    /// `iso`, `structure`, `fill` and unknown keys.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use arrow_sparse::io::{meta, npz, NpzFlavor, ImportOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0)])?.into();
    /// let opts = npz::NpzWriteOptions::default().with_flavor(NpzFlavor::Binsparse);
    /// let bytes = npz::write_to(Cursor::new(Vec::new()), &t.into(), &opts)?.into_inner();
    /// let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())?;
    /// let get = |k: &str| back.custom_metadata.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    /// assert_eq!(get(meta::NPZ_FLAVOR).as_deref(), Some("binsparse"));
    /// assert!(get(meta::BINSPARSE_DESCRIPTOR).unwrap().contains("\"format\":\"COO\""));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub const BINSPARSE_DESCRIPTOR: &str = "arrow_sparse.binsparse.descriptor";
}

/// The file formats of this module, known by their extension.
///
/// ```
/// use arrow_sparse::io::FileFormat;
/// let f = FileFormat::from_path("data/matrix.npz");
/// assert_eq!(f, Some(FileFormat::Npz));
/// assert_eq!(f.map(FileFormat::extension), Some("npz"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileFormat {
    /// Matrix Market, `.mtx`.
    Mtx,
    /// FROSTT text tensor, `.tns`.
    Tns,
    /// NumPy zip archive of a scipy or pydata/sparse array, `.npz`.
    Npz,
    /// Binsparse HDF5, `.h5` / `.hdf5` (read and written with the cargo feature
    /// `hdf5`; without it, an [`Error::Unsupported`] naming the feature).
    Hdf5,
}

impl FileFormat {
    /// The format named by a path's extension (case-insensitive), if any.
    ///
    /// ```
    /// use arrow_sparse::io::FileFormat;
    /// assert_eq!(FileFormat::from_path("a/b.MTX"), Some(FileFormat::Mtx));
    /// assert_eq!(FileFormat::from_path("b.arrow"), None);
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Option<FileFormat> {
        let path = path.as_ref();
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "mtx" => FileFormat::Mtx,
            "tns" => FileFormat::Tns,
            "npz" => FileFormat::Npz,
            "h5" | "hdf5" => FileFormat::Hdf5,
            _ => return None,
        })
    }

    /// The extension without its dot.
    ///
    /// ```
    /// use arrow_sparse::io::FileFormat;
    /// assert_eq!(FileFormat::Tns.extension(), "tns");
    /// assert_eq!(FileFormat::from_path("x.mtx").map(FileFormat::extension), Some("mtx"));
    /// ```
    pub fn extension(self) -> &'static str {
        match self {
            FileFormat::Mtx => "mtx",
            FileFormat::Tns => "tns",
            FileFormat::Npz => "npz",
            FileFormat::Hdf5 => "h5",
        }
    }

    fn of(path: &Path) -> Result<FileFormat> {
        FileFormat::from_path(path).ok_or_else(|| {
            Error::Unsupported(format!(
                "{}: unknown file extension (expected .mtx, .tns, .npz, .h5 or .hdf5)",
                path.display()
            ))
        })
    }
}

/// What the text readers do with entries that repeat the coordinates of an
/// earlier one (for a symmetric Matrix Market file: the same unordered pair).
///
/// ```
/// use arrow_sparse::io::{mtx, Duplicates, ImportOptions};
/// // entry (1, 1) appears twice
/// let text = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 3\n1 1 4\n";
/// assert!(mtx::read_from(text.as_bytes(), "mem.mtx", &ImportOptions::default()).is_err());
/// let sum = ImportOptions::default().with_duplicates(Duplicates::Sum);
/// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &sum)?;
/// assert_eq!((msg.tensor.nnz(), msg.tensor.get::<i64>(&[0, 0])?), (1, Some(7)));
/// let keep = ImportOptions::default().with_duplicates(Duplicates::Keep);
/// assert_eq!(mtx::read_from(text.as_bytes(), "mem.mtx", &keep)?.tensor.nnz(), 2);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Duplicates {
    /// Refuse the file, naming both lines (the default).
    #[default]
    Error,
    /// Add them up (integer overflow is an error); the result is sorted and
    /// canonical.
    Sum,
    /// Keep every entry as it is in the file (the COO tensor is then not
    /// canonical).
    Keep,
}

/// Options for every reader of this module.
///
/// ```
/// use arrow_sparse::io::{tns, Duplicates, ImportOptions};
/// use arrow_sparse::{IndexType, ValueType};
/// let options = ImportOptions::default()
///     .with_duplicates(Duplicates::Sum)
///     .with_value_type(ValueType::Float32)
///     .with_index_type(IndexType::Int16)
///     .with_shape(vec![5, 5]);
/// let msg = tns::read_from("1 1 0.5\n1 1 0.25\n".as_bytes(), "mem.tns", &options)?;
/// assert_eq!(msg.tensor.shape(), &[5, 5]);
/// assert_eq!((msg.tensor.value_type(), msg.tensor.index_type()), (ValueType::Float32, Some(IndexType::Int16)));
/// assert_eq!(msg.tensor.get::<f32>(&[0, 0])?, Some(0.75));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Text readers: what to do with repeated coordinates.
    pub duplicates: Duplicates,
    /// Text readers: the value type of the tensor. Default: `float64` for real and
    /// pattern files and `.tns`, `int64` for integer Matrix Market files.
    /// Integer types accept only integer text; floats round to nearest.
    pub value_type: Option<ValueType>,
    /// Text readers: the coordinate type of the COO tensor (default `int64`).
    /// npz files keep the dtypes they hold.
    pub index_type: Option<IndexType>,
    /// `.tns` without a header: the shape (default: the largest coordinate along
    /// each dimension). With a header it must agree with it.
    pub shape: Option<Vec<usize>>,
    /// The memory reading may take (default
    /// [`ReadLimit::DEFAULT`](crate::limit::ReadLimit::DEFAULT): 16 × the file,
    /// at least 64 MiB). npz: the bytes the arrays inflate to, checked before
    /// each is read. Text files: what a header announces is reserved only up to
    /// a fixed cap, the rest grows with the entries read (`format/SPEC.md`
    /// section 11).
    pub limit: crate::limit::ReadLimit,
}

impl ImportOptions {
    /// Set the duplicate policy.
    ///
    /// ```
    /// use arrow_sparse::io::{Duplicates, ImportOptions};
    /// let options = ImportOptions::default().with_duplicates(Duplicates::Keep);
    /// assert_eq!(options.duplicates, Duplicates::Keep);
    /// ```
    pub fn with_duplicates(mut self, d: Duplicates) -> Self {
        self.duplicates = d;
        self
    }
    /// Set the value type.
    ///
    /// ```
    /// use arrow_sparse::io::{mtx, ImportOptions};
    /// use arrow_sparse::ValueType;
    /// let text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2.5\n";
    /// let options = ImportOptions::default().with_value_type(ValueType::Float32);
    /// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &options)?;
    /// assert_eq!(msg.tensor.value_type(), ValueType::Float32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_value_type(mut self, t: ValueType) -> Self {
        self.value_type = Some(t);
        self
    }
    /// Set the coordinate type.
    ///
    /// ```
    /// use arrow_sparse::io::{mtx, ImportOptions};
    /// use arrow_sparse::IndexType;
    /// let text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2.5\n";
    /// let options = ImportOptions::default().with_index_type(IndexType::Int8);
    /// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &options)?;
    /// assert_eq!(msg.tensor.index_type(), Some(IndexType::Int8));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_index_type(mut self, t: IndexType) -> Self {
        self.index_type = Some(t);
        self
    }
    /// Set the `.tns` shape.
    ///
    /// ```
    /// use arrow_sparse::io::{tns, ImportOptions};
    /// // without a header the shape would be inferred as 2 x 3
    /// let text = "2 3 1.0\n".as_bytes();
    /// assert_eq!(tns::read_from(text, "mem.tns", &ImportOptions::default())?.tensor.shape(), &[2, 3]);
    /// let options = ImportOptions::default().with_shape(vec![10, 10]);
    /// assert_eq!(tns::read_from(text, "mem.tns", &options)?.tensor.shape(), &[10, 10]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_shape(mut self, shape: Vec<usize>) -> Self {
        self.shape = Some(shape);
        self
    }
    /// Set the memory limit.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use arrow_sparse::io::{npz, ReadOptions};
    /// use arrow_sparse::{limit::ReadLimit, AnyTensor, DenseTensor, Error};
    /// // 125,000 ones: a pydata COO npz of 2 MB of arrays, deflated to less than 1 MB
    /// let t: AnyTensor = DenseTensor::<f64>::try_new(vec![125_000], vec![1.0; 125_000].into())?.into();
    /// let deflated = npz::NpzWriteOptions::default().with_compressed(true);
    /// let ones = npz::write_to(Cursor::new(Vec::new()), &t.into(), &deflated)?.into_inner();
    /// assert!(ones.len() < 1_000_000);
    /// // at most one byte of arrays per byte of file: refused before inflating
    /// let tight = ReadOptions::default().with_limit(ReadLimit::relative(1, 0));
    /// assert!(matches!(npz::read_from(Cursor::new(&ones), "ones.npz", &tight), Err(Error::Limit { .. })));
    /// assert_eq!(npz::read_from(Cursor::new(&ones), "ones.npz", &ReadOptions::default())?.tensor.nnz(), 125_000);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_limit(mut self, limit: crate::limit::ReadLimit) -> Self {
        self.limit = limit;
        self
    }
}

/// Options for [`write_path_with`]: one set per format.
///
/// ```
/// use arrow_sparse::io::{self, MtxSymmetry, MtxWriteOptions, ExportOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("sym.mtx");
/// // a symmetric matrix, written as one triangle
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 2.0), (vec![1, 0], 2.0)])?.into();
/// let options = ExportOptions { mtx: MtxWriteOptions::default().with_symmetry(MtxSymmetry::Symmetric), ..Default::default() };
/// io::write_path_with(&path, &t.into(), &options)?;
/// let text = std::fs::read_to_string(&path)?;
/// assert!(text.starts_with("%%MatrixMarket matrix coordinate real symmetric"));
/// assert_eq!(io::read_path(&path)?.tensor.nnz(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// For `.mtx` files.
    pub mtx: MtxWriteOptions,
    /// For `.tns` files.
    pub tns: TnsWriteOptions,
    /// For `.npz` files.
    pub npz: NpzWriteOptions,
    /// For Binsparse `.h5` / `.hdf5` files (feature `hdf5`).
    pub hdf5: binsparse::Hdf5WriteOptions,
}

/// Read a `.mtx`, `.tns` or `.npz` file (chosen by extension) with default
/// options.
///
/// ```
/// use arrow_sparse::io;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("m.mtx");
/// std::fs::write(&path, "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 -3.5\n")?;
/// let msg = io::read_path(&path)?;
/// assert_eq!((msg.tensor.shape(), msg.tensor.get::<f64>(&[1, 0])?), (&[2usize, 2][..], Some(-3.5)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_path(path: impl AsRef<Path>) -> Result<TensorMessage> {
    let path = path.as_ref();
    read_path_with(path, &ImportOptions::default())
}

/// Read a `.mtx`, `.tns` or `.npz` file (chosen by extension).
///
/// ```
/// use arrow_sparse::io::{self, Duplicates, ImportOptions};
/// use arrow_sparse::ValueType;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.tns");
/// std::fs::write(&path, "1 1 2\n1 1 3\n")?; // the same coordinates twice
/// assert!(io::read_path(&path).is_err()); // refused by default
/// let options = ImportOptions::default().with_duplicates(Duplicates::Sum).with_value_type(ValueType::Int32);
/// assert_eq!(io::read_path_with(&path, &options)?.tensor.get::<i32>(&[0, 0])?, Some(5));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_path_with(path: impl AsRef<Path>, options: &ImportOptions) -> Result<TensorMessage> {
    let path = path.as_ref();
    match FileFormat::of(path)? {
        FileFormat::Mtx => mtx::read(path, options),
        FileFormat::Tns => tns::read(path, options),
        FileFormat::Npz => npz::read(path, options),
        #[cfg(feature = "hdf5")]
        FileFormat::Hdf5 => hdf5::read(path, options),
        #[cfg(not(feature = "hdf5"))]
        FileFormat::Hdf5 => Err(no_hdf5(path)),
    }
}

/// Write a `.mtx`, `.tns` or `.npz` file (chosen by extension) with default
/// options: the message's metadata decides the details (see the module docs).
///
/// ```
/// use arrow_sparse::{io, AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 0.5)])?.into();
/// io::write_path(&dir.path().join("t.tns"), &t.clone().into())?;
/// assert_eq!(std::fs::read_to_string(dir.path().join("t.tns"))?, "2 3 4 0.5\n");
/// // Matrix Market holds matrices only
/// assert!(io::write_path(&dir.path().join("t.mtx"), &t.into()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_path(path: impl AsRef<Path>, message: &TensorMessage) -> Result<()> {
    let path = path.as_ref();
    write_path_with(path, message, &ExportOptions::default())
}

/// Write a `.mtx`, `.tns` or `.npz` file (chosen by extension).
///
/// ```
/// use arrow_sparse::io::{self, MtxSymmetry, ExportOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("sym.mtx");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0), (vec![1, 0], 1.0)])?.into();
/// let mut options = ExportOptions::default();
/// options.mtx = options.mtx.with_symmetry(MtxSymmetry::Symmetric);
/// io::write_path_with(&path, &t.clone().into(), &options)?;
/// assert!(std::fs::read_to_string(&path)?.contains("symmetric\n2 2 1\n"));
/// assert_eq!(io::read_path(&path)?.tensor.nnz(), 2); // expanded on reading
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_path_with(
    path: impl AsRef<Path>,
    message: &TensorMessage,
    options: &ExportOptions,
) -> Result<()> {
    let path = path.as_ref();
    match FileFormat::of(path)? {
        FileFormat::Mtx => mtx::write(path, message, &options.mtx),
        FileFormat::Tns => tns::write(path, message, &options.tns),
        FileFormat::Npz => npz::write(path, message, &options.npz),
        #[cfg(feature = "hdf5")]
        FileFormat::Hdf5 => hdf5::write(path, message, &options.hdf5),
        #[cfg(not(feature = "hdf5"))]
        FileFormat::Hdf5 => Err(no_hdf5(path)),
    }
}

/// Binsparse HDF5 without the `hdf5` feature.
#[cfg(not(feature = "hdf5"))]
fn no_hdf5(path: &Path) -> Error {
    Error::Unsupported(format!(
        "{}: Binsparse HDF5 files need arrow-sparse built with the cargo feature `hdf5` (cargo build --features hdf5; it links the system's libhdf5)",
        path.display()
    ))
}

/// Open a file for reading; the error names the path.
pub(crate) fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| {
        Error::Io(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        ))
    })
}

pub use crate::atomic::remove_stale_temporaries;
pub(crate) use crate::atomic::write_atomic;

/// The value of a metadata key.
pub(crate) fn meta_get<'a>(metadata: &'a [(String, String)], key: &str) -> Option<&'a str> {
    metadata
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

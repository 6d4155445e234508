//! Parquet archives of tensors: one tensor per file, one row per stored element,
//! readable by pyarrow and query engines, restored exactly by arrow-sparse.
//!
//! Layout (normative text in `format/SPEC.md`, section 9):
//!
//! * one integer column per dimension (named after the dimension, or `dim_0`,
//!   `dim_1`, ...; the narrowest signed type that holds the extent) and a `value`
//!   column of the tensor's value type; one row per stored entry, **in storage
//!   order** (COO: as stored; CSR / CSC: by major slice, then position; CSF: leaf
//!   order; dense: every element, in row-major logical order; GCS: the reduced
//!   matrix's order, with the N-D logical coordinates; DM: the rows of its
//!   storage, a plain or GCS tensor);
//! * the file's key-value metadata `arrow_sparse` holds a versioned JSON document
//!   with the shape, dim names, value type, the original format and its parameters
//!   (COO canonical flag and coordinate layout, CSX axis and index / indptr types,
//!   CSF axis order, dense strides, GCS mapping, DM maps and views as in the IPC
//!   extension metadata), the Message's custom metadata and a CRC-32 per row
//!   group, so that reading restores the very same tensor, buffer for buffer;
//! * coordinates are delta- or dictionary/RLE-encoded where that pays, everything
//!   is zstd-compressed by default ([`ArchiveCompression`]).
//!
//! [`ArchiveWriter`] writes a tensor, or a sequence of chunks, in row groups of
//! bounded size; [`ArchiveReader`] restores the tensor, streams row groups as COO
//! chunks, and reads coordinate ranges skipping row groups by their statistics.
//! Writes are atomic (temporary file + rename).
//!
//! ```
//! use arrow_sparse::{archive, AnyTensor, CompressedAxis, Convert, CooTensor};
//!
//! let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[(vec![0, 1], 2.5), (vec![2, 3], -1.0)])?;
//! let csr: AnyTensor = coo.to_csx::<i32, i64>(CompressedAxis::Row)?.into();
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("doc_parquet_module.parquet");
//! archive::write_archive(&path, &csr.clone().into(), &archive::ArchiveWriteOptions::default())?;
//! let back = archive::read_archive(&path, &archive::ArchiveReadOptions::default())?;
//! assert_eq!(back.tensor, csr); // same format, index and indptr types, buffers
//! let rows = archive::ArchiveReader::open(&path)?.read_range(0, 2..3)?;
//! assert_eq!((rows.tensor.shape(), rows.tensor.nnz()), (&[1, 4][..], 1));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

mod build;
pub(crate) mod checked;
mod dataset;
mod encoding;
mod meta;
mod reader;
mod rows;
#[cfg(feature = "object-store")]
pub mod store;
mod thrift;
mod writer;

use std::fmt;
use std::path::Path;

#[cfg(feature = "object-store")]
pub use dataset::write_dataset_to_store;
pub use dataset::{
    DATASET_BLOCK_KEY, DATASET_MANIFEST, DATASET_VERSION, DatasetBlock, DatasetPart,
    DatasetRangeRead, DatasetReader, DatasetSummary, DatasetWriteOptions, DatasetWriter,
    is_dataset_path, write_dataset,
};
pub use meta::{
    ArchiveLayout, DmChain, METADATA_CRC_KEY, METADATA_KEY, METADATA_VERSION, TensorSpec,
};
pub use reader::{ArchiveReader, RangeRead, RowGroupInfo};
pub use writer::{ArchiveWriter, WriteSummary};

use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::limit::ReadLimit;
use crate::tensor::Validation;

/// The compression applied to every column.
///
/// ```
/// use arrow_sparse::archive::ArchiveCompression;
/// assert_eq!(ArchiveCompression::default(), ArchiveCompression::Zstd(1));
/// assert_eq!("zstd:3".parse::<ArchiveCompression>()?, ArchiveCompression::Zstd(3));
/// assert_eq!("none".parse::<ArchiveCompression>()?, ArchiveCompression::Uncompressed);
/// assert_eq!(ArchiveCompression::Zstd(3).to_string(), "zstd:3");
/// assert!(matches!("zstd:23".parse::<ArchiveCompression>(), Err(arrow_sparse::Error::Parse { .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveCompression {
    /// No compression.
    Uncompressed,
    /// zstd at the given level (1 is fast and the default; up to 22).
    Zstd(i32),
}

impl Default for ArchiveCompression {
    fn default() -> Self {
        ArchiveCompression::Zstd(1)
    }
}

impl ArchiveCompression {
    pub(crate) fn to_parquet(self) -> Result<::parquet::basic::Compression> {
        Ok(match self {
            ArchiveCompression::Uncompressed => ::parquet::basic::Compression::UNCOMPRESSED,
            ArchiveCompression::Zstd(level) => {
                ::parquet::basic::Compression::ZSTD(::parquet::basic::ZstdLevel::try_new(level)?)
            }
        })
    }
}

impl fmt::Display for ArchiveCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveCompression::Uncompressed => f.write_str("none"),
            ArchiveCompression::Zstd(level) => write!(f, "zstd:{level}"),
        }
    }
}

impl std::str::FromStr for ArchiveCompression {
    type Err = Error;
    /// `none`, `zstd` (level 1) or `zstd:LEVEL` (1..=22).
    fn from_str(s: &str) -> Result<Self> {
        let bad = |detail: String| Error::Parse {
            what: "compression".into(),
            detail,
        };
        match s {
            "none" | "uncompressed" => Ok(ArchiveCompression::Uncompressed),
            "zstd" => Ok(ArchiveCompression::Zstd(1)),
            _ => {
                let level = s.strip_prefix("zstd:").ok_or_else(|| {
                    bad(format!(
                        "unknown compression {s:?} (expected none, zstd or zstd:LEVEL)"
                    ))
                })?;
                let level: i32 = level
                    .parse()
                    .map_err(|_| bad(format!("bad zstd level {level:?}")))?;
                if !(1..=22).contains(&level) {
                    return Err(bad(format!("zstd level {level} is not in 1..=22")));
                }
                Ok(ArchiveCompression::Zstd(level))
            }
        }
    }
}

/// Options for writing archives.
///
/// ```
/// use arrow_sparse::archive::{ArchiveCompression, ArchiveWriteOptions};
/// let options = ArchiveWriteOptions::default();
/// assert_eq!((options.row_group_size, options.batch_size), (1 << 20, 1 << 16));
/// assert_eq!(options.compression, ArchiveCompression::Zstd(1));
/// let small = ArchiveWriteOptions { batch_size: 1024, ..ArchiveWriteOptions::default().with_row_group_size(4096) };
/// assert_eq!((small.row_group_size, small.batch_size), (4096, 1024));
/// ```
#[derive(Clone, Debug)]
pub struct ArchiveWriteOptions {
    /// Rows per row group (default 2^20). The writer holds about one row group of
    /// encoded data in memory.
    pub row_group_size: usize,
    /// Compression of every column (default zstd level 1).
    pub compression: ArchiveCompression,
    /// Rows converted from the tensor's buffers at a time (default 2^16).
    pub batch_size: usize,
    /// Float values without a dictionary are BYTE_STREAM_SPLIT-encoded (default
    /// true: smaller with zstd); false writes them PLAIN, which every engine reads
    /// (Spark 4.0's vectorized Parquet reader refuses BYTE_STREAM_SPLIT). Datasets
    /// default to false ([`DatasetWriteOptions::new`]).
    pub byte_stream_split: bool,
}

impl Default for ArchiveWriteOptions {
    fn default() -> Self {
        ArchiveWriteOptions {
            row_group_size: 1 << 20,
            compression: ArchiveCompression::default(),
            batch_size: 1 << 16,
            byte_stream_split: true,
        }
    }
}

impl ArchiveWriteOptions {
    /// Set the number of rows per row group (at least 1).
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, DenseTensor};
    /// let dir = tempfile::tempdir()?;
    /// let t: AnyTensor = DenseTensor::<i32>::try_new(vec![5], vec![1, 2, 3, 4, 5].into())?.into();
    /// let options = ArchiveWriteOptions::default().with_row_group_size(2);
    /// let summary = archive::write_archive(&dir.path().join("t.parquet"), &t.into(), &options)?;
    /// assert_eq!((summary.rows, summary.row_groups), (5, 3)); // 2 + 2 + 1 rows
    /// assert_eq!(ArchiveWriteOptions::default().with_row_group_size(0).row_group_size, 1);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_row_group_size(mut self, rows: usize) -> Self {
        self.row_group_size = rows.max(1);
        self
    }
    /// Set the compression.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveCompression, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{ipc::TensorMessage, AnyTensor, DenseTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: TensorMessage = AnyTensor::from(DenseTensor::<f64>::try_new(vec![4], vec![0.5; 4].into())?).into();
    /// let options = ArchiveWriteOptions::default().with_compression(ArchiveCompression::Uncompressed);
    /// archive::write_archive(&path, &t, &options)?;
    /// let r = ArchiveReader::open(&path)?;
    /// let codec = r.parquet_metadata().row_group(0).column(0).compression();
    /// assert_eq!(codec, ::parquet::basic::Compression::UNCOMPRESSED);
    /// // zstd levels go up to 22
    /// let bad = ArchiveWriteOptions::default().with_compression(ArchiveCompression::Zstd(23));
    /// assert!(archive::write_archive(&path, &t, &bad).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_compression(mut self, compression: ArchiveCompression) -> Self {
        self.compression = compression;
        self
    }

    /// Encode float values BYTE_STREAM_SPLIT (true, the default) or PLAIN (false,
    /// what Spark's vectorized reader needs).
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, DenseTensor};
    /// use ::parquet::basic::Encoding;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: AnyTensor = DenseTensor::<f64>::try_new(vec![64], (0..64).map(|i| i as f64 / 7.0).collect::<Vec<_>>().into())?.into();
    /// for (bss, want) in [(true, Encoding::BYTE_STREAM_SPLIT), (false, Encoding::PLAIN)] {
    ///     let options = ArchiveWriteOptions::default().with_byte_stream_split(bss);
    ///     archive::write_archive(&path, &t.clone().into(), &options)?;
    ///     let r = ArchiveReader::open(&path)?;
    ///     let value = r.parquet_metadata().row_group(0).column(1).encodings().collect::<Vec<_>>();
    ///     assert!(value.contains(&want), "{value:?}");
    /// }
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_byte_stream_split(mut self, byte_stream_split: bool) -> Self {
        self.byte_stream_split = byte_stream_split;
        self
    }
}

/// Options for reading archives.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveReadOptions, ArchiveWriteOptions};
/// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix, Validation};
/// let o = ArchiveReadOptions::default();
/// assert_eq!((o.validation, o.verify_checksums, o.max_indptr_len), (Validation::Full, true, 1 << 28));
/// // a CSR matrix with 3 rows has an indptr of 4 elements
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("csr.parquet");
/// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
///     vec![3, 3], CompressedAxis::Row, vec![0, 1, 1, 2].into(), vec![0, 2].into(), vec![1.0, 2.0].into())?.into();
/// archive::write_archive(&path, &t.clone().into(), &ArchiveWriteOptions::default())?;
/// let tight = ArchiveReadOptions { max_indptr_len: 3, ..ArchiveReadOptions::default() };
/// assert!(matches!(archive::read_archive(&path, &tight), Err(arrow_sparse::Error::Overflow { .. })));
/// assert_eq!(archive::read_archive(&path, &ArchiveReadOptions { max_indptr_len: 4, ..tight })?.tensor, t);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ArchiveReadOptions {
    /// Validation of the restored tensor by its format's constructor (default
    /// [`Validation::Full`]).
    pub validation: Validation,
    /// Verify the CRC-32 of every row group read, when the archive records them
    /// (default true).
    pub verify_checksums: bool,
    /// Rows decoded at a time (default 2^16).
    pub batch_size: usize,
    /// Largest CSR / CSC indptr the reader builds (default 2^28 elements). An
    /// indptr has one element per row (CSR) or column (CSC) whatever the number of
    /// entries, so an archive of a few bytes can declare a matrix whose indptr
    /// does not fit in memory; raise this for matrices with more slices. For a
    /// GCS archive it bounds the reduced matrix's indptr.
    pub max_indptr_len: usize,
    /// Largest number of times the broadcast views of a DM archive's levels may
    /// repeat one stored entry (default 65,536, as [`crate::ipc::StreamReadOptions`]).
    pub max_broadcast: u64,
    /// The memory the reader may use for this file (default [`ReadLimit::DEFAULT`]:
    /// 16 × the file's size, at least 64 MiB). Checked before anything is
    /// decoded or reserved: the pages' uncompressed sizes and decoded values,
    /// the rows' coordinates and values, the CSR / CSC indptr, and the entries
    /// a DM archive's broadcast views make (`format/SPEC.md` section 11).
    pub limit: ReadLimit,
}

impl Default for ArchiveReadOptions {
    fn default() -> Self {
        ArchiveReadOptions {
            validation: Validation::Full,
            verify_checksums: true,
            batch_size: 1 << 16,
            max_indptr_len: 1 << 28,
            max_broadcast: 1 << 16,
            limit: ReadLimit::DEFAULT,
        }
    }
}

impl ArchiveReadOptions {
    /// Set the validation level.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReadOptions, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor, Validation};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4], &[(vec![3], 1.0)])?.into();
    /// archive::write_archive(&path, &t.clone().into(), &ArchiveWriteOptions::default())?;
    /// let options = ArchiveReadOptions::default().with_validation(Validation::Trusted);
    /// assert_eq!(options.validation, Validation::Trusted);
    /// assert_eq!(archive::read_archive(&path, &options)?.tensor, t);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_validation(mut self, v: Validation) -> Self {
        self.validation = v;
        self
    }
    /// Verify (default) or skip the row-group checksums.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReadOptions, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4], &[(vec![3], 1.0)])?.into();
    /// archive::write_archive(&path, &t.clone().into(), &ArchiveWriteOptions::default())?;
    /// let options = ArchiveReadOptions::default().with_verify_checksums(false);
    /// assert!(!options.verify_checksums && ArchiveReadOptions::default().verify_checksums);
    /// assert_eq!(archive::read_archive(&path, &options)?.tensor, t);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_verify_checksums(mut self, verify: bool) -> Self {
        self.verify_checksums = verify;
        self
    }
    /// Set the memory limit.
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// use arrow_sparse::parquet::{self, ReadOptions, WriteOptions};
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix, Error};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("csr.parquet");
    /// // 2^24 rows, one entry: an indptr of 128 MiB from an archive of a few hundred bytes
    /// let rows = 1 << 24;
    /// let mut indptr = vec![0i64; rows + 1];
    /// indptr[rows] = 1;
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![rows, 2], CompressedAxis::Row, indptr.into(), vec![1].into(), vec![2.0].into())?.into();
    /// parquet::write_parquet(&path, &t.clone().into(), &WriteOptions::default())?;
    /// let err = parquet::read_parquet(&path, &ReadOptions::default()).unwrap_err();
    /// assert!(matches!(err, Error::Limit { .. }), "{err}");
    /// let trusted = ReadOptions::default().with_limit(ReadLimit::bytes(1 << 30));
    /// assert_eq!(parquet::read_parquet(&path, &trusted)?.tensor, t);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_limit(mut self, limit: ReadLimit) -> Self {
        self.limit = limit;
        self
    }
}

/// Write one tensor (and its custom metadata) to `path` as a Parquet archive, in
/// row groups of `options.row_group_size` rows, atomically (temporary file in the
/// same directory, then rename: a failure never leaves a partial file at `path`).
///
/// Memory stays near one row group whatever the tensor's size: rows are converted
/// from the tensor's buffers batch by batch, so a tensor memory-mapped from an IPC
/// file is archived without being copied.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveCompression, ArchiveWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("doc_write_parquet.parquet");
/// let t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![100, 3], &[(vec![7, 1], 1.0), (vec![90, 2], 2.0)])?.into();
/// let options = ArchiveWriteOptions::default().with_row_group_size(1).with_compression(ArchiveCompression::Zstd(3));
/// let summary = archive::write_archive(&path, &t.into(), &options)?;
/// assert_eq!((summary.rows, summary.row_groups), (2, 2));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn write_archive(
    path: impl AsRef<Path>,
    message: &TensorMessage,
    options: &ArchiveWriteOptions,
) -> Result<WriteSummary> {
    let path = path.as_ref();
    writer::write_tensor(path, message, options)
}

/// [`write_archive`] to the object at `at` (feature `object-store`): the
/// archive is written to a file in a local temporary directory (the system's),
/// then uploaded, in one PUT up to 8 MiB and a multipart upload above
/// (`format/SPEC.md` 9.8); the local copy is removed in every case. A store
/// makes an object visible only once it is complete, so a reader sees the old
/// object (if any) or the new one, never a part, and a failure leaves the old
/// one in place.
///
/// ```
/// use std::sync::Arc;
/// use arrow_sparse::archive::store::StoreLocation;
/// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let at = StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "t/x.parquet")?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4, 3], &[(vec![3, 1], 2.5)])?.into();
/// assert_eq!(archive::write_archive_to_store(&at, &t.clone().into(), &ArchiveWriteOptions::default())?.rows, 1);
/// assert_eq!(ArchiveReader::open_store(&at, &Default::default())?.read()?.tensor, t);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[cfg(feature = "object-store")]
pub fn write_archive_to_store(
    at: &store::StoreLocation,
    message: &TensorMessage,
    options: &ArchiveWriteOptions,
) -> Result<WriteSummary> {
    let dir = tempfile::Builder::new()
        .prefix(".arrow-sparse-archive-upload.")
        .tempdir()?;
    let local = dir.path().join("archive.parquet");
    let summary = write_archive(&local, message, options)?;
    at.upload(&local)?;
    Ok(summary)
}

/// Read a whole archive: the tensor exactly as it was written (format, index and
/// indptr types, coordinate layout, canonical flag, dim names, buffers) and the
/// custom metadata. The tensor passes its format's validating constructor.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveReadOptions, ArchiveWriteOptions};
/// use arrow_sparse::{AnyTensor, DenseTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("doc_read_parquet.parquet");
/// let t: AnyTensor = DenseTensor::<i16>::try_new(vec![2, 2], vec![1, 0, 0, 4].into())?.into();
/// archive::write_archive(&path, &t.clone().into(), &ArchiveWriteOptions::default())?;
/// assert_eq!(archive::read_archive(&path, &ArchiveReadOptions::default())?.tensor, t);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn read_archive(path: impl AsRef<Path>, options: &ArchiveReadOptions) -> Result<TensorMessage> {
    let path = path.as_ref();
    ArchiveReader::open_with(path, options)?.read()
}

/// Whether `path` names a Parquet archive (extension `.parquet`, any case).
///
/// ```
/// use arrow_sparse::archive::is_archive_path;
/// use std::path::Path;
/// assert!(is_archive_path(Path::new("data/t.parquet")));
/// assert!(is_archive_path(Path::new("T.PARQUET")));
/// assert!(!is_archive_path(Path::new("t.parquet.tmp")));
/// assert!(!is_archive_path(Path::new("parquet")));
/// ```
pub fn is_archive_path(path: impl AsRef<Path>) -> bool {
    let path = path.as_ref();
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

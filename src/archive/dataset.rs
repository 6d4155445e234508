//! Datasets: one tensor in a directory of archives, partitioned by ranges of one
//! dimension (normative text in `format/SPEC.md`, section 9.7).
//!
//! ```text
//! DIR/_arrow_sparse_dataset.json          the manifest: spec, partition, parts
//! DIR/dim_0_block=0/part-0.parquet        an archive of the entries with dim 0 in 0..B
//! DIR/dim_0_block=3/part-0.parquet        ... in 3B..4B (empty blocks have no part)
//! ```
//!
//! Every part is an ordinary archive (section 9) of the **whole** shape holding
//! the entries of its block, with global coordinates: query engines read
//! `DIR/**/*.parquet` as one table of the tensor, and the Hive-style directory
//! names let them prune blocks. [`DatasetWriter`] writes from a stream of chunks
//! holding about one row group in memory (chunks in any order with
//! [`DatasetWriteOptions::with_sorting`], which sorts in runs spilled to disk);
//! [`DatasetReader`] restores the exact tensor, reads coordinate ranges opening
//! only the parts that can hold them, and streams the blocks one by one.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use arrow_array::ArrayRef;
use arrow_buffer::ScalarBuffer;
use serde::{Deserialize, Serialize};

use super::build::{Builder, Limits};
use super::meta::{Archive, ArchiveLayout, TensorSpec, VALUE_COLUMN};
use super::reader::RowFilter;
use super::rows::{Rows, Source, value_array, with_bytes};
use super::{ArchiveReadOptions, ArchiveReader, ArchiveWriteOptions, ArchiveWriter};
use crate::buffer::ValueBuffer;
use crate::error::{Error, Result};
use crate::io::Duplicates;
use crate::ipc::TensorMessage;
use crate::kernels::Numeric;
use crate::tensor::{AnyTensor, Format};
use crate::types::Value;

/// The manifest's file name in a dataset directory (engines skip files whose
/// name starts with `_`).
///
/// ```
/// use arrow_sparse::archive::{DatasetWriteOptions, write_dataset, DATASET_MANIFEST};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4], &[(vec![1], 1.0)])?.into();
/// write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(0, 2))?;
/// assert!(dir.path().join("ds").join(DATASET_MANIFEST).is_file());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const DATASET_MANIFEST: &str = "_arrow_sparse_dataset.json";
/// The manifest's `version`; readers refuse any other.
///
/// ```
/// use arrow_sparse::archive::{DatasetWriteOptions, write_dataset, DATASET_MANIFEST, DATASET_VERSION};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4], &[(vec![1], 1.0)])?.into();
/// write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(0, 2))?;
/// let text = std::fs::read_to_string(dir.path().join("ds").join(DATASET_MANIFEST))?;
/// let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
/// assert_eq!(manifest["version"], DATASET_VERSION);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const DATASET_VERSION: u64 = 1;
/// The custom metadata key of a block of a dataset's tensor written as a message
/// of its own ([`DatasetReader::block_messages`]): JSON
/// `{"dim": D, "offset": O, "shape": [...]}`, the dimension it is a block along,
/// where it starts along it, and the whole tensor's shape ([`DatasetBlock`]).
///
/// ```
/// assert_eq!(arrow_sparse::archive::DATASET_BLOCK_KEY, "arrow_sparse.dataset.block");
/// ```
pub const DATASET_BLOCK_KEY: &str = "arrow_sparse.dataset.block";
/// Manifests larger than this are refused before they are read.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;
/// The merge reads each sorted run through a buffer of this size.
const RUN_BUFFER: usize = 64 << 10;

/// How a dataset is partitioned and written.
///
/// ```
/// use arrow_sparse::archive::{ArchiveWriteOptions, DatasetWriteOptions};
/// let o = DatasetWriteOptions::new(0, 1000)
///     .with_archive_options(ArchiveWriteOptions::default().with_row_group_size(4096))
///     .with_sorting(64 << 20);
/// assert_eq!((o.partition_dim, o.block, o.sort_budget), (0, 1000, Some(64 << 20)));
/// ```
#[derive(Clone, Debug)]
pub struct DatasetWriteOptions {
    /// The dimension whose coordinate ranges make the parts.
    pub partition_dim: usize,
    /// The extent of each part's range: part `k` holds the entries whose
    /// coordinate along `partition_dim` lies in `k * block .. (k + 1) * block`.
    pub block: usize,
    /// Options of each part's archive (by default, float values PLAIN-encoded:
    /// see [`ArchiveWriteOptions::byte_stream_split`]).
    pub archive: ArchiveWriteOptions,
    /// `Some(bytes)`: chunks may come in any order; the entries are sorted in runs
    /// of at most about half these bytes, spilled to the destination's temporary
    /// directory and merged, and the parts' row groups are capped to a quarter of
    /// them. `None` (the default): the chunks' entries must already be in the
    /// order of the parts (non-decreasing along `partition_dim`).
    pub sort_budget: Option<usize>,
    /// With sorting: what to do with entries that repeat coordinates (refuse them,
    /// the default; add them; or keep them as rows of their own).
    pub duplicates: Duplicates,
}

impl DatasetWriteOptions {
    /// Partition along `dim` in ranges of `block` coordinates (default archive
    /// options but PLAIN floats, which every engine reads; no sorting).
    ///
    /// ```
    /// use arrow_sparse::archive::DatasetWriteOptions;
    /// let o = DatasetWriteOptions::new(1, 64);
    /// assert_eq!((o.partition_dim, o.block, o.sort_budget, o.archive.byte_stream_split), (1, 64, None, false));
    /// ```
    pub fn new(dim: usize, block: usize) -> Self {
        DatasetWriteOptions {
            partition_dim: dim,
            block,
            archive: ArchiveWriteOptions::default().with_byte_stream_split(false),
            sort_budget: None,
            duplicates: Duplicates::Error,
        }
    }

    /// The options of each part's archive.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveWriteOptions, DatasetWriteOptions};
    /// let o = DatasetWriteOptions::new(0, 10).with_archive_options(ArchiveWriteOptions::default().with_row_group_size(7));
    /// assert_eq!(o.archive.row_group_size, 7);
    /// ```
    pub fn with_archive_options(mut self, archive: ArchiveWriteOptions) -> Self {
        self.archive = archive;
        self
    }

    /// Accept chunks in any order, sorting within a memory budget of `bytes`
    /// (see [`sort_budget`](Self::sort_budget)).
    ///
    /// ```
    /// use arrow_sparse::archive::DatasetWriteOptions;
    /// assert_eq!(DatasetWriteOptions::new(0, 10).with_sorting(1 << 30).sort_budget, Some(1 << 30));
    /// ```
    pub fn with_sorting(mut self, bytes: usize) -> Self {
        self.sort_budget = Some(bytes);
        self
    }

    /// With sorting: the policy for repeated coordinates.
    ///
    /// ```
    /// use arrow_sparse::archive::DatasetWriteOptions;
    /// use arrow_sparse::io::Duplicates;
    /// let o = DatasetWriteOptions::new(0, 10).with_sorting(1 << 20).with_duplicates(Duplicates::Sum);
    /// assert_eq!(o.duplicates, Duplicates::Sum);
    /// ```
    pub fn with_duplicates(mut self, duplicates: Duplicates) -> Self {
        self.duplicates = duplicates;
        self
    }
}

/// One part of a dataset, as the manifest lists it.
///
/// ```
/// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("ds");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![8, 2], 2.0)])?.into();
/// write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 4))?;
/// let r = DatasetReader::open(&out)?;
/// let parts = r.parts();
/// assert_eq!(parts.len(), 2); // blocks 0 and 2; block 1 (rows 4..8) is empty
/// assert_eq!((parts[1].block, parts[1].range.clone(), parts[1].rows), (2, 8..10, 1));
/// assert_eq!(parts[1].path, std::path::Path::new("dim_0_block=2/part-0.parquet"));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetPart {
    /// The block number `k`.
    pub block: usize,
    /// The coordinates along the partition dimension it may hold.
    pub range: Range<usize>,
    /// Its path relative to the dataset directory.
    pub path: PathBuf,
    /// Its rows (stored entries).
    pub rows: usize,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Where a block lies in the whole tensor: what [`DATASET_BLOCK_KEY`] holds.
///
/// ```
/// use arrow_sparse::archive::{DatasetBlock, DATASET_BLOCK_KEY};
/// use arrow_sparse::{AnyTensor, CooTensor, ipc::TensorMessage};
/// let b = DatasetBlock { dim: 0, offset: 8, shape: vec![10, 3] };
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 1.0)])?.into();
/// let mut m = TensorMessage::from(t);
/// m.custom_metadata.push((DATASET_BLOCK_KEY.into(), b.to_json()));
/// assert_eq!(DatasetBlock::of(&m)?, Some(b));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetBlock {
    /// The dimension the tensor is cut along (the dataset's partition dimension).
    pub dim: usize,
    /// The block's first coordinate along it.
    pub offset: usize,
    /// The whole tensor's shape.
    pub shape: Vec<usize>,
}

impl DatasetBlock {
    /// The block `message` declares under [`DATASET_BLOCK_KEY`], checked
    /// against its tensor (the whole shape but along `dim`, where the block
    /// lies within it); `None` without the key.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetBlock, DATASET_BLOCK_KEY};
    /// use arrow_sparse::{AnyTensor, CooTensor, Error, ipc::TensorMessage};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[])?.into();
    /// let mut m = TensorMessage::from(t);
    /// assert_eq!(DatasetBlock::of(&m)?, None);
    /// m.custom_metadata.push((DATASET_BLOCK_KEY.into(), r#"{"dim":0,"offset":9,"shape":[10,3]}"#.into()));
    /// assert!(matches!(DatasetBlock::of(&m), Err(Error::Parse { .. }))); // rows 9..11 of 10
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn of(message: &TensorMessage) -> Result<Option<DatasetBlock>> {
        let Some((_, text)) = message
            .custom_metadata
            .iter()
            .find(|(k, _)| k == DATASET_BLOCK_KEY)
        else {
            return Ok(None);
        };
        let bad = |detail: String| Error::Parse {
            what: format!("{DATASET_BLOCK_KEY} metadata"),
            detail,
        };
        let b: DatasetBlock = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let shape = message.tensor.shape();
        let fits = b.dim < b.shape.len()
            && shape.len() == b.shape.len()
            && shape.iter().zip(&b.shape).enumerate().all(|(e, (&x, &s))| {
                if e == b.dim {
                    b.offset.checked_add(x).is_some_and(|end| end <= s)
                } else {
                    x == s
                }
            });
        if !fits {
            return Err(bad(format!(
                "a block of shape {shape:?} at {} along dimension {} does not lie in the shape {:?}",
                b.offset, b.dim, b.shape
            )));
        }
        Ok(Some(b))
    }

    /// The JSON text of [`DATASET_BLOCK_KEY`].
    ///
    /// ```
    /// use arrow_sparse::archive::DatasetBlock;
    /// let b = DatasetBlock { dim: 1, offset: 4, shape: vec![3, 8] };
    /// assert_eq!(b.to_json(), r#"{"dim":1,"offset":4,"shape":[3,8]}"#);
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::json!({"dim": self.dim, "offset": self.offset, "shape": self.shape}).to_string()
    }
}

/// What a finished dataset write produced.
///
/// ```
/// use arrow_sparse::archive::{DatasetWriteOptions, write_dataset};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![8, 2], 2.0)])?.into();
/// let s = write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(0, 4))?;
/// assert_eq!((s.rows, s.parts, s.sorted_runs), (2, 2, 0));
/// assert!(s.bytes > 0);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetSummary {
    /// Rows written (stored entries).
    pub rows: usize,
    /// Parts written.
    pub parts: usize,
    /// Total bytes of the parts.
    pub bytes: u64,
    /// With sorting: the sorted runs spilled to disk (0 when everything fitted
    /// the budget).
    pub sorted_runs: usize,
}

#[derive(Serialize, Deserialize)]
struct ManifestJson {
    version: u64,
    /// The dataset's tensor, as an archive's `arrow_sparse` object (section 9.4).
    archive: serde_json::Value,
    partition: PartitionJson,
    rows: u64,
    parts: Vec<PartJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    writer: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct PartitionJson {
    dim: u64,
    block: u64,
    key: String,
}

#[derive(Serialize, Deserialize)]
struct PartJson {
    block: u64,
    path: String,
    range: [u64; 2],
    rows: u64,
    bytes: u64,
}

/// The Hive-style key of the partition directories: `dim_<d>_block`.
fn partition_key(dim: usize) -> String {
    format!("dim_{dim}_block")
}

/// The path of block `k`'s part, relative to the dataset directory.
fn part_path(dim: usize, k: usize) -> PathBuf {
    PathBuf::from(format!("{}={k}/part-0.parquet", partition_key(dim)))
}

/// The formats a dataset holds, and the order its rows must follow: the
/// dimensions of the sort key (the partition dimension first).
fn sort_key(spec: &TensorSpec, dim: usize) -> Result<Vec<usize>> {
    let n = spec.shape.len();
    if dim >= n {
        return Err(Error::shape(
            "dataset partition dimension",
            format!("a dimension < {n}"),
            dim.to_string(),
        ));
    }
    let need = |d: usize, what: &str| -> Result<()> {
        if d == dim {
            Ok(())
        } else {
            Err(Error::Unsupported(format!(
                "a {what} dataset partitioned along dimension {dim}: the partition dimension must lead the storage order (dimension {d})"
            )))
        }
    };
    let rest = |first: usize| -> Vec<usize> {
        std::iter::once(first)
            .chain((0..n).filter(|&d| d != first))
            .collect()
    };
    match &spec.layout {
        ArchiveLayout::Coo { .. } => Ok(rest(dim)),
        ArchiveLayout::Csx { .. } => {
            let major = if spec.format() == Format::Csr { 0 } else { 1 };
            need(major, spec.format().name())?;
            Ok(rest(major))
        }
        ArchiveLayout::Csf { axis_order, .. } => {
            need(axis_order.first().copied().unwrap_or(0), "csf")?;
            Ok(axis_order.clone())
        }
        other => Err(Error::Unsupported(format!(
            "{} datasets (COO, CSR, CSC and CSF tensors can be partitioned)",
            other.format().name()
        ))),
    }
}

/// Rows `a..b` of `rows`.
fn slice_rows(rows: &Rows, a: usize, b: usize) -> Rows {
    Rows {
        coords: rows.coords.iter().map(|c| c[a..b].to_vec()).collect(),
        values: rows.values.slice(a, b - a),
        levels: rows.levels.as_ref().map(|l| l[a..b].to_vec()),
    }
}

fn lex(a: &[usize], rows: &Rows, r: usize) -> Ordering {
    a.iter()
        .zip(&rows.coords)
        .map(|(x, c)| x.cmp(&c[r]))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// Writes one tensor into a dataset directory, part by part, atomically (the
/// directory appears, or replaces an earlier dataset, when
/// [`finish`](Self::finish) succeeds).
///
/// Without sorting, the chunks' entries must come in the order of the parts:
/// non-decreasing along the partition dimension, and within a part in the
/// order its archive needs (section 9.2). Memory: about one row group.
///
/// ```
/// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, DatasetWriter, TensorSpec};
/// use arrow_sparse::{CooTensor, IndexType, ValueType};
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("ds");
/// let spec = TensorSpec::coo(vec![100, 5], ValueType::Float64, IndexType::Int32);
/// let mut w = DatasetWriter::create(&out, spec, &DatasetWriteOptions::new(0, 30))?;
/// for k in 0..4usize {
///     let chunk = CooTensor::<f64, i64>::from_entries(vec![100, 5], &[(vec![k * 25, 1], k as f64), (vec![k * 25 + 2, 4], 1.0)])?;
///     w.write_chunk(&chunk.into())?;
/// }
/// let summary = w.finish()?;
/// assert_eq!((summary.rows, summary.parts), (8, 3)); // rows 0..30, 30..60, 60..90 (75 and 77 are in block 2)
/// let back = DatasetReader::open(&out)?.read()?.tensor;
/// assert_eq!((back.nnz(), back.get::<f64>(&[75, 1])?), (8, Some(3.0)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub struct DatasetWriter {
    dest: Dest,
    tmp: Option<tempfile::TempDir>,
    spec: TensorSpec,
    options: DatasetWriteOptions,
    part_spec: TensorSpec,
    current: Option<(usize, ArchiveWriter)>,
    parts: Vec<DatasetPart>,
    rows: usize,
    prev: Option<Vec<usize>>,
    sorted: bool,
    sorter: Option<Box<dyn Spill>>,
}

impl std::fmt::Debug for DatasetWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatasetWriter")
            .field("dest", &self.dest.name())
            .field("spec", &self.spec)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

/// Where a dataset is written.
enum Dest {
    Dir(PathBuf),
    /// A prefix of an object store: parts are uploaded as they are finished.
    #[cfg(feature = "object-store")]
    Store {
        at: super::store::StoreLocation,
        /// The parts of the dataset found there, to replace.
        old: Option<Vec<DatasetPart>>,
        /// Whether the old manifest has been deleted (before the first upload).
        cleared: bool,
    },
}

impl Dest {
    fn name(&self) -> String {
        match self {
            Dest::Dir(d) => d.display().to_string(),
            #[cfg(feature = "object-store")]
            Dest::Store { at, .. } => at.url().to_string(),
        }
    }

    /// Upload the finished part at `local` (a store) and remove the local copy.
    fn publish(&mut self, local: &Path, rel: &Path) -> Result<()> {
        match self {
            Dest::Dir(_) => {
                let _ = (local, rel);
                Ok(())
            }
            #[cfg(feature = "object-store")]
            Dest::Store { at, old, cleared } => {
                if old.is_some() && !*cleared {
                    // readers see no dataset from here until the new manifest
                    at.join(DATASET_MANIFEST)?.delete()?;
                    *cleared = true;
                }
                at.join(&rel.to_string_lossy())?.upload(local)?;
                std::fs::remove_file(local)?;
                Ok(())
            }
        }
    }
}

/// What a store prefix holds: nothing (`None`), an earlier dataset (its
/// parts), or something else (refused).
#[cfg(feature = "object-store")]
fn check_store_destination(at: &super::store::StoreLocation) -> Result<Option<Vec<DatasetPart>>> {
    if at.join(DATASET_MANIFEST)?.exists()? {
        let old = DatasetReader::open_store(at, &ArchiveReadOptions::default()).map_err(|e| {
            Error::Unsupported(format!(
                "{at} holds a dataset whose manifest cannot be read ({e}): not replaced"
            ))
        })?;
        return Ok(Some(old.parts));
    }
    if at.has_objects()? {
        return Err(Error::Unsupported(format!(
            "{at} holds objects but no dataset (no {DATASET_MANIFEST}): not replaced"
        )));
    }
    Ok(None)
}

/// What a path holds: nothing, an earlier dataset, or something else.
fn check_destination(dest: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(dest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e.into()),
        Ok(m) if m.is_dir() => {
            if dest.join(DATASET_MANIFEST).is_file() {
                return Ok(true);
            }
            if std::fs::read_dir(dest)?.next().is_none() {
                return Ok(false);
            }
            Err(Error::Unsupported(format!(
                "{} is a directory that holds no dataset (no {DATASET_MANIFEST}): not replaced",
                dest.display()
            )))
        }
        Ok(_) => Err(Error::Unsupported(format!(
            "{} exists and is not a directory: a dataset is a directory",
            dest.display()
        ))),
    }
}

impl DatasetWriter {
    /// Start a dataset of `spec` at the directory `path` (written into a
    /// temporary directory beside it until [`finish`](Self::finish)).
    ///
    /// COO tensors can be partitioned along any dimension; CSR only along 0, CSC
    /// along 1, CSF along its first level's dimension (the partition dimension
    /// leads the storage order). Dense, GCS and DM tensors are
    /// [`Error::Unsupported`]. An existing dataset at `path` is replaced; any other
    /// file or non-empty directory is refused.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, DatasetWriteOptions, DatasetWriter, TensorSpec};
    /// use arrow_sparse::{CompressedAxis, Error, IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let csr = TensorSpec::coo(vec![4, 3], ValueType::Float64, IndexType::Int32)
    ///     .with_layout(ArchiveLayout::Csx { axis: CompressedAxis::Row, index_type: IndexType::Int32, indptr_type: IndexType::Int64 });
    /// assert!(DatasetWriter::create(dir.path().join("a"), csr.clone(), &DatasetWriteOptions::new(0, 2)).is_ok());
    /// // a CSR matrix's rows are in row order: it cannot be cut into column ranges
    /// let by_column = DatasetWriter::create(dir.path().join("b"), csr, &DatasetWriteOptions::new(1, 2));
    /// assert!(matches!(by_column, Err(Error::Unsupported(_))));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn create(
        path: impl AsRef<Path>,
        spec: TensorSpec,
        options: &DatasetWriteOptions,
    ) -> Result<Self> {
        Self::create_at(Dest::Dir(path.as_ref().to_path_buf()), spec, options)
    }

    /// Start a dataset of `spec` at the prefix `at` of an object store (feature
    /// `object-store`), as [`create`](Self::create) a directory. Each part is
    /// written to a local temporary directory and uploaded when it is complete
    /// (one request up to 8 MiB, a multipart upload above); the manifest is
    /// uploaded last by [`finish`](Self::finish). An earlier dataset at `at` is
    /// replaced: its manifest is deleted before the first part is uploaded, and
    /// its parts that the new dataset does not overwrite are deleted after the
    /// new manifest is written. A prefix holding other objects is refused.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_sparse::archive::store::StoreLocation;
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, DatasetWriter, TensorSpec};
    /// use arrow_sparse::{CooTensor, IndexType, ValueType};
    /// let at = StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "ds")?;
    /// let spec = TensorSpec::coo(vec![100, 5], ValueType::Float64, IndexType::Int32);
    /// let mut w = DatasetWriter::create_in_store(&at, spec, &DatasetWriteOptions::new(0, 50))?;
    /// w.write_chunk(&CooTensor::<f64, i64>::from_entries(vec![100, 5], &[(vec![3, 1], 1.0), (vec![70, 4], 2.0)])?.into())?;
    /// assert_eq!(w.finish()?.parts, 2);
    /// assert_eq!(DatasetReader::open_store(&at, &Default::default())?.rows(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    #[cfg(feature = "object-store")]
    pub fn create_in_store(
        at: &super::store::StoreLocation,
        spec: TensorSpec,
        options: &DatasetWriteOptions,
    ) -> Result<Self> {
        Self::create_at(
            Dest::Store {
                at: at.clone(),
                old: None,
                cleared: false,
            },
            spec,
            options,
        )
    }

    fn create_at(mut dest: Dest, spec: TensorSpec, options: &DatasetWriteOptions) -> Result<Self> {
        spec.check()?;
        options.archive.compression.to_parquet()?;
        let dim = options.partition_dim;
        let key = sort_key(&spec, dim)?;
        if options.block == 0 {
            return Err(Error::shape("dataset block", "at least 1", "0"));
        }
        let hive = partition_key(dim);
        if spec.column_names().contains(&hive) {
            return Err(Error::Unsupported(format!(
                "a dataset whose column {hive:?} would clash with its partition key"
            )));
        }
        let tmp = match &mut dest {
            Dest::Dir(dest) => {
                check_destination(dest)?;
                let (parent, name) = split_dest(dest)?;
                tempfile::Builder::new()
                    .prefix(&format!(".{name}.arrow-sparse-tmp."))
                    .tempdir_in(parent)?
            }
            #[cfg(feature = "object-store")]
            Dest::Store { at, old, .. } => {
                *old = check_store_destination(at)?;
                tempfile::Builder::new()
                    .prefix(".arrow-sparse-dataset-upload.")
                    .tempdir()?
            }
        };
        let mut part_spec = spec.clone();
        let mut archive = options.archive.clone();
        let sorter: Option<Box<dyn Spill>> = match options.sort_budget {
            None => None,
            Some(budget) => {
                let width = spec.shape.len() * 8 + spec.value_type.byte_width();
                // a row group's raw rows within a quarter of the budget
                archive.row_group_size = archive
                    .row_group_size
                    .min((budget / 4 / width).max(1024))
                    .max(1);
                archive.batch_size = archive.batch_size.min(archive.row_group_size);
                Some(
                    crate::with_value_type!(spec.value_type, V => Box::new(Sorter::<V>::new(
                    key,
                    budget,
                    tmp.path().join("runs"),
                    options.duplicates,
                )?) as Box<dyn Spill>),
                )
            }
        };
        if let ArchiveLayout::Coo { canonical, .. } = &mut part_spec.layout {
            *canonical = None; // each part's own flag
        }
        Ok(DatasetWriter {
            dest,
            tmp: Some(tmp),
            spec,
            options: DatasetWriteOptions {
                archive,
                ..options.clone()
            },
            part_spec,
            current: None,
            parts: Vec::new(),
            rows: 0,
            prev: None,
            sorted: true,
            sorter,
        })
    }

    /// The dataset's spec.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetWriteOptions, DatasetWriter, TensorSpec};
    /// use arrow_sparse::{IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let spec = TensorSpec::coo(vec![4, 3], ValueType::Float64, IndexType::Int32);
    /// let w = DatasetWriter::create(dir.path().join("ds"), spec.clone(), &DatasetWriteOptions::new(0, 2))?;
    /// assert_eq!(w.spec(), &spec);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn spec(&self) -> &TensorSpec {
        &self.spec
    }

    /// Append the stored entries of `chunk` (the dataset's shape and value type).
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetWriteOptions, DatasetWriter, TensorSpec};
    /// use arrow_sparse::{CooTensor, Error, IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let spec = TensorSpec::coo(vec![10, 3], ValueType::Float64, IndexType::Int32);
    /// let mut w = DatasetWriter::create(dir.path().join("ds"), spec, &DatasetWriteOptions::new(0, 5))?;
    /// w.write_chunk(&CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![6, 0], 1.0)])?.into())?;
    /// // without sorting, the stream must not go back along the partition dimension
    /// let back = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![2, 0], 1.0)])?;
    /// assert!(matches!(w.write_chunk(&back.into()), Err(Error::Invariant { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn write_chunk(&mut self, chunk: &AnyTensor) -> Result<()> {
        if chunk.shape() != self.spec.shape.as_slice() {
            return Err(Error::shape(
                "chunk",
                format!("{:?}", self.spec.shape),
                format!("{:?}", chunk.shape()),
            ));
        }
        self.push(chunk, 0)
    }

    /// Append `block`, the slice of the dataset's tensor that starts at `offset`
    /// along the partition dimension: its shape is the dataset's but along that
    /// dimension, where its extent is its own, and its coordinates there are
    /// relative to `offset` (what [`DatasetReader::read_block`] gives back). A
    /// stream of row blocks of one big matrix (SparseTensor messages, say)
    /// becomes a dataset block by block this way; blocks may be of any extent
    /// and need not line up with the parts.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, DatasetWriter, TensorSpec};
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Error, IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let spec = TensorSpec::coo(vec![6, 3], ValueType::Float64, IndexType::Int64);
    /// let mut w = DatasetWriter::create(&out, spec, &DatasetWriteOptions::new(0, 4))?;
    /// // rows 0..2, then rows 2..6 of a 6 x 3 matrix, each with its own row numbers
    /// let top = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 1.0)])?;
    /// let bottom = CooTensor::<f64, i64>::from_entries(vec![4, 3], &[(vec![0, 0], 2.0), (vec![3, 1], 3.0)])?;
    /// w.write_block(0, &top.into())?;
    /// w.write_block(2, &bottom.to_csx::<i32, i32>(CompressedAxis::Row)?.into())?;
    /// assert!(matches!(w.write_block(5, &CooTensor::<f64, i64>::from_entries(vec![2, 3], &[])?.into()), Err(Error::Shape { .. })));
    /// w.finish()?;
    /// let t = DatasetReader::open(&out)?.read()?.tensor;
    /// assert_eq!((t.get::<f64>(&[1, 2])?, t.get::<f64>(&[2, 0])?, t.get::<f64>(&[5, 1])?), (Some(1.0), Some(2.0), Some(3.0)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn write_block(&mut self, offset: usize, block: &AnyTensor) -> Result<()> {
        let d = self.options.partition_dim;
        let shape = block.shape();
        let fits = shape.len() == self.spec.shape.len()
            && shape
                .iter()
                .zip(&self.spec.shape)
                .enumerate()
                .all(|(e, (&b, &s))| {
                    if e == d {
                        offset.checked_add(b).is_some_and(|end| end <= s)
                    } else {
                        b == s
                    }
                });
        if !fits {
            let mut want = self.spec.shape.clone();
            want[d] = self.spec.shape[d].saturating_sub(offset);
            return Err(Error::shape(
                format!("block at {offset} along dimension {d}"),
                format!("{want:?} or less along dimension {d}"),
                format!("{shape:?}"),
            ));
        }
        self.push(block, offset)
    }

    /// The entries of `chunk` (the dataset's shape but along the partition
    /// dimension), shifted by `offset` along it.
    fn push(&mut self, chunk: &AnyTensor, offset: usize) -> Result<()> {
        if chunk.value_type() != self.spec.value_type {
            return Err(Error::Type {
                what: "chunk value type".into(),
                expected: self.spec.value_type.name().into(),
                found: chunk.value_type().name().into(),
            });
        }
        let d = self.options.partition_dim;
        let src = Source::new(chunk, false)?;
        let batch = self.options.archive.batch_size.max(1);
        let mut k = 0;
        while k < src.len() {
            let end = (k + batch).min(src.len());
            let mut rows = src.rows(k, end)?;
            if offset > 0 {
                for c in &mut rows.coords[d] {
                    *c += offset; // within the extent: checked by the callers
                }
            }
            match self.sorter.as_mut() {
                Some(s) => s.push(&rows)?,
                None => self.write_ordered(&rows)?,
            }
            k = end;
        }
        Ok(())
    }

    /// Rows in the order of the parts: split at block boundaries.
    fn write_ordered(&mut self, rows: &Rows) -> Result<()> {
        let d = self.options.partition_dim;
        let n = rows.len();
        let canonical_declared = matches!(
            self.spec.layout,
            ArchiveLayout::Coo {
                canonical: Some(true),
                ..
            }
        );
        for r in 0..n {
            if let Some(p) = &self.prev {
                if p[d] > rows.coords[d][r] {
                    return Err(Error::invariant(
                        "dataset rows",
                        Some(self.rows + r),
                        format!(
                            "coordinate {} along the partition dimension {d} follows {}: without sorting the entries must come in the parts' order",
                            rows.coords[d][r], p[d]
                        ),
                    ));
                }
                if self.sorted && lex(p, rows, r) != Ordering::Less {
                    self.sorted = false;
                    if canonical_declared {
                        return Err(Error::invariant(
                            "dataset rows",
                            Some(self.rows + r),
                            "not strictly increasing, but the spec declares a canonical COO tensor",
                        ));
                    }
                }
            }
            let p = self.prev.get_or_insert_with(Vec::new);
            p.clear();
            p.extend(rows.coords.iter().map(|c| c[r]));
        }
        let mut a = 0;
        while a < n {
            let k = rows.coords[d][a] / self.options.block;
            let limit = (k + 1).saturating_mul(self.options.block);
            let b = a + rows.coords[d][a..].partition_point(|&c| c < limit);
            self.part_for(k)?;
            if let Some((_, w)) = self.current.as_mut() {
                if a == 0 && b == n {
                    w.write_rows(rows)?;
                } else {
                    w.write_rows(&slice_rows(rows, a, b))?;
                }
            }
            a = b;
        }
        self.rows += n;
        Ok(())
    }

    /// Make block `k`'s part the open one, finishing the previous part.
    fn part_for(&mut self, k: usize) -> Result<()> {
        if self.current.as_ref().is_some_and(|(c, _)| *c == k) {
            return Ok(());
        }
        self.end_part()?;
        let Some(tmp) = self.tmp.as_ref() else {
            return Err(Error::invariant("dataset writer", None, "already finished"));
        };
        let rel = part_path(self.options.partition_dim, k);
        let path = tmp.path().join(&rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        let w = ArchiveWriter::create(&path, self.part_spec.clone(), &self.options.archive)?;
        self.current = Some((k, w));
        Ok(())
    }

    fn end_part(&mut self) -> Result<()> {
        if let Some((k, w)) = self.current.take() {
            let s = w.finish()?;
            if let Some(tmp) = self.tmp.as_ref() {
                let rel = part_path(self.options.partition_dim, k);
                self.dest.publish(&tmp.path().join(&rel), &rel)?;
            }
            let block = self.options.block;
            let extent = self.spec.shape[self.options.partition_dim];
            self.parts.push(DatasetPart {
                block: k,
                range: k * block..((k + 1).saturating_mul(block)).min(extent),
                path: part_path(self.options.partition_dim, k),
                rows: s.rows,
                bytes: s.bytes,
            });
        }
        Ok(())
    }

    /// Write the last part and the manifest, and move the directory into place.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, DatasetWriter, TensorSpec};
    /// use arrow_sparse::{AnyTensor, CooTensor, IndexType, ValueType, io::Duplicates};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let spec = TensorSpec::coo(vec![10, 3], ValueType::Int64, IndexType::Int32);
    /// // entries in any order, duplicates added up
    /// let options = DatasetWriteOptions::new(0, 5).with_sorting(1 << 20).with_duplicates(Duplicates::Sum);
    /// let mut w = DatasetWriter::create(&out, spec, &options)?;
    /// w.write_chunk(&CooTensor::<i64, i64>::from_entries(vec![10, 3], &[(vec![7, 0], 1), (vec![2, 2], 5)])?.into())?;
    /// w.write_chunk(&CooTensor::<i64, i64>::from_entries(vec![10, 3], &[(vec![7, 0], 2)])?.into())?;
    /// assert!(!out.exists()); // nothing before finish
    /// assert_eq!(w.finish()?.rows, 2);
    /// let expected: AnyTensor = CooTensor::<i64, i32>::from_entries(vec![10, 3], &[(vec![2, 2], 5), (vec![7, 0], 3)])?.canonicalize()?.into();
    /// assert_eq!(DatasetReader::open(&out)?.read()?.tensor, expected); // sorted: canonical
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn finish(mut self) -> Result<DatasetSummary> {
        let mut sorted_runs = 0;
        if let Some(mut sorter) = self.sorter.take() {
            sorted_runs = sorter.finish(&mut |rows| self.write_ordered(&rows))?;
        }
        self.end_part()?;
        let Some(tmp) = self.tmp.take() else {
            return Err(Error::invariant("dataset writer", None, "already finished"));
        };
        let runs = tmp.path().join("runs");
        if runs.exists() {
            std::fs::remove_dir_all(&runs)?;
        }
        let mut spec = self.spec.clone();
        if let ArchiveLayout::Coo { canonical, .. } = &mut spec.layout
            && canonical.is_none()
        {
            *canonical = Some(self.sorted);
        }
        let manifest = manifest_json(&spec, &self.options, self.rows, &self.parts)?;
        let summary = DatasetSummary {
            rows: self.rows,
            parts: self.parts.len(),
            bytes: self.parts.iter().map(|p| p.bytes).sum(),
            sorted_runs,
        };
        let dest = match &self.dest {
            Dest::Dir(d) => d.clone(),
            #[cfg(feature = "object-store")]
            Dest::Store { at, old, .. } => {
                at.join(DATASET_MANIFEST)?
                    .put(bytes::Bytes::from(manifest.into_bytes()))?;
                // the old parts the new dataset did not overwrite
                for p in old.iter().flatten() {
                    if !self.parts.iter().any(|q| q.path == p.path) {
                        at.join(&p.path.to_string_lossy())?.delete()?;
                    }
                }
                drop(tmp);
                return Ok(summary);
            }
        };
        let mut f = File::create(tmp.path().join(DATASET_MANIFEST))?;
        f.write_all(manifest.as_bytes())?;
        f.sync_all()?;
        drop(f);
        // the parts were synced by their writers: make the directory itself durable
        File::open(tmp.path())?.sync_all()?;
        let replace = check_destination(&dest)?;
        let (parent, name) = split_dest(&dest)?;
        let staged = tmp.keep();
        if replace {
            let old = tempfile::Builder::new()
                .prefix(&format!(".{name}.arrow-sparse-old."))
                .tempdir_in(parent)?
                .keep();
            let moved = std::fs::rename(&dest, &old).and_then(|_| std::fs::rename(&staged, &dest));
            if let Err(e) = moved {
                let _ = std::fs::remove_dir_all(&staged);
                return Err(e.into());
            }
            std::fs::remove_dir_all(&old)?;
        } else if let Err(e) = std::fs::rename(&staged, &dest) {
            let _ = std::fs::remove_dir_all(&staged);
            return Err(e.into());
        }
        if let Ok(d) = File::open(parent) {
            let _ = d.sync_all();
        }
        Ok(summary)
    }
}

fn split_dest(dest: &Path) -> Result<(&Path, String)> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "{} names no directory to write a dataset into",
                dest.display()
            ))
        })?;
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((parent, name))
}

fn manifest_json(
    spec: &TensorSpec,
    options: &DatasetWriteOptions,
    rows: usize,
    parts: &[DatasetPart],
) -> Result<String> {
    let archive = Archive {
        spec: spec.clone(),
        columns: spec.column_names(),
        value_column: VALUE_COLUMN.into(),
        level_column: None,
        rows,
        row_groups: None,
    };
    let archive: serde_json::Value = serde_json::from_str(&archive.to_json()?)
        .map_err(|e| Error::invariant("dataset manifest", None, e.to_string()))?;
    let json = ManifestJson {
        version: DATASET_VERSION,
        archive,
        partition: PartitionJson {
            dim: options.partition_dim as u64,
            block: options.block as u64,
            key: partition_key(options.partition_dim),
        },
        rows: rows as u64,
        parts: parts
            .iter()
            .map(|p| PartJson {
                block: p.block as u64,
                path: p.path.to_string_lossy().into_owned(),
                range: [p.range.start as u64, p.range.end as u64],
                rows: p.rows as u64,
                bytes: p.bytes,
            })
            .collect(),
        writer: Some(format!("arrow-sparse {}", env!("CARGO_PKG_VERSION"))),
    };
    serde_json::to_string_pretty(&json)
        .map_err(|e| Error::invariant("dataset manifest", None, e.to_string()))
}

/// Write `message`'s tensor as a dataset (its entries sorted into the parts'
/// order when they are not in it already, within
/// [`DatasetWriteOptions::sort_budget`] or, without one, in memory).
///
/// ```
/// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("ds");
/// let entries = [(vec![0, 3], 1.0), (vec![2, 1], 2.0), (vec![7, 0], 3.0)];
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 4], &entries)?.into();
/// // partitioned by columns: two parts (columns 0..2 and 2..4)
/// assert_eq!(write_dataset(&out, &t.clone().into(), &DatasetWriteOptions::new(1, 2))?.parts, 2);
/// let back = DatasetReader::open(&out)?.read()?.tensor;
/// assert_eq!((back.nnz(), back.get::<f64>(&[2, 1])?), (3, Some(2.0)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn write_dataset(
    path: impl AsRef<Path>,
    message: &TensorMessage,
    options: &DatasetWriteOptions,
) -> Result<DatasetSummary> {
    write_dataset_at(Dest::Dir(path.as_ref().to_path_buf()), message, options)
}

fn write_dataset_at(
    dest: Dest,
    message: &TensorMessage,
    options: &DatasetWriteOptions,
) -> Result<DatasetSummary> {
    let mut spec = TensorSpec::of(message)?;
    let key = sort_key(&spec, options.partition_dim)?;
    let mut options = options.clone();
    if options.sort_budget.is_none() && !in_key_order(&message.tensor, &key)? {
        // the whole tensor is in memory already: sort it there, in one run
        let width = spec.shape.len() * 8 + spec.value_type.byte_width() + 8;
        let nnz = message.tensor.nnz().saturating_add(1);
        options.sort_budget = Some(nnz.saturating_mul(width).saturating_mul(4));
        options.duplicates = Duplicates::Keep;
    }
    if options.sort_budget.is_some()
        && let ArchiveLayout::Coo { canonical, .. } = &mut spec.layout
    {
        *canonical = None; // the order changes: computed from the sorted rows
    }
    let mut w = DatasetWriter::create_at(dest, spec, &options)?;
    w.write_chunk(&message.tensor)?;
    w.finish()
}

/// [`write_dataset`] to the prefix `at` of an object store (feature
/// `object-store`; see [`DatasetWriter::create_in_store`]).
///
/// ```
/// use std::sync::Arc;
/// use arrow_sparse::archive::store::StoreLocation;
/// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset_to_store};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let at = StoreLocation::new(Arc::new(object_store::memory::InMemory::new()), "ds")?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 4], &[(vec![7, 0], 3.0), (vec![0, 3], 1.0)])?.into();
/// assert_eq!(write_dataset_to_store(&at, &t.into(), &DatasetWriteOptions::new(0, 5))?.parts, 2);
/// assert_eq!(DatasetReader::open_store(&at, &Default::default())?.read()?.tensor.nnz(), 2);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[cfg(feature = "object-store")]
pub fn write_dataset_to_store(
    at: &super::store::StoreLocation,
    message: &TensorMessage,
    options: &DatasetWriteOptions,
) -> Result<DatasetSummary> {
    write_dataset_at(
        Dest::Store {
            at: at.clone(),
            old: None,
            cleared: false,
        },
        message,
        options,
    )
}

/// Whether the tensor's rows are non-decreasing along `key[0]` (CSR / CSC / CSF
/// rows always are along their leading dimension).
fn in_key_order(t: &AnyTensor, key: &[usize]) -> Result<bool> {
    if !matches!(t, AnyTensor::Coo(_)) {
        return Ok(true);
    }
    let src = Source::new(t, false)?;
    let d = key[0];
    let mut last = 0;
    let mut k = 0;
    while k < src.len() {
        let end = (k + (1 << 16)).min(src.len());
        let rows = src.rows(k, end)?;
        for &c in &rows.coords[d] {
            if c < last {
                return Ok(false);
            }
            last = c;
        }
        k = end;
    }
    Ok(true)
}

// ------------------------------------------------------------ sorting and spills

/// Fixed-width little-endian encoding of values in spill files.
trait Le: Value + Copy {
    const W: usize;
    fn get(b: &[u8]) -> Self;
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! le {
    ($($t:ty),*) => {$(
        impl Le for $t {
            const W: usize = std::mem::size_of::<$t>();
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le!(i8, i16, i32, i64, u8, u16, u32, u64, half::f16, f32, f64);

/// The sorter behind [`DatasetWriter`] when entries come in any order.
trait Spill {
    fn push(&mut self, rows: &Rows) -> Result<()>;
    /// Emit every entry in key order (duplicates resolved) to `sink`; returns
    /// the number of runs spilled.
    fn finish(&mut self, sink: &mut dyn FnMut(Rows) -> Result<()>) -> Result<usize>;
}

struct Sorter<V: Le> {
    ndim: usize,
    key: Vec<usize>,
    /// coordinates of the buffered entries, `ndim` per entry, in dimension order
    coords: Vec<usize>,
    values: Vec<V>,
    /// entries per run
    run_len: usize,
    /// runs merged at once
    fan_in: usize,
    dir: PathBuf,
    runs: Vec<PathBuf>,
    spilled: usize,
    duplicates: Duplicates,
}

impl<V: Le> Sorter<V> {
    fn new(key: Vec<usize>, budget: usize, dir: PathBuf, duplicates: Duplicates) -> Result<Self> {
        let ndim = key.len();
        // an entry in the run buffer: its coordinates, its value, its place in the
        // sort permutation; half the budget holds a run
        let per_entry = ndim * 8 + V::W + 8;
        let run_len = (budget / 2 / per_entry).max(1024);
        let fan_in = (budget / 4 / RUN_BUFFER).clamp(2, 64);
        Ok(Sorter {
            ndim,
            key,
            coords: Vec::new(),
            values: Vec::new(),
            run_len,
            fan_in,
            dir,
            runs: Vec::new(),
            spilled: 0,
            duplicates,
        })
    }

    fn cmp_entries(&self, a: &[usize], b: &[usize]) -> Ordering {
        self.key
            .iter()
            .map(|&d| a[d].cmp(&b[d]))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// The buffered entries' order (stable: equal coordinates keep their order).
    fn permutation(&self) -> Vec<usize> {
        let n = self.ndim;
        let mut perm: Vec<usize> = (0..self.values.len()).collect();
        perm.sort_by(|&i, &j| {
            self.cmp_entries(
                &self.coords[i * n..(i + 1) * n],
                &self.coords[j * n..(j + 1) * n],
            )
        });
        perm
    }

    /// Sort the buffer and write it as a run file.
    fn spill(&mut self) -> Result<()> {
        if self.values.is_empty() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir)?;
        let path = self.dir.join(format!("run-{}", self.spilled));
        self.spilled += 1;
        let perm = self.permutation();
        let n = self.ndim;
        let mut w = BufWriter::with_capacity(RUN_BUFFER, File::create(&path)?);
        let mut rec = Vec::with_capacity(n * 8 + V::W);
        for &i in &perm {
            rec.clear();
            for &c in &self.coords[i * n..(i + 1) * n] {
                rec.extend_from_slice(&(c as u64).to_le_bytes());
            }
            self.values[i].put(&mut rec);
            w.write_all(&rec)?;
        }
        w.flush()?;
        self.coords = Vec::new();
        self.values = Vec::new();
        self.runs.push(path);
        Ok(())
    }

    /// Merge `runs` (in run order, so equal coordinates keep the input's order)
    /// into `emit`, one entry at a time.
    fn merge(
        &self,
        runs: &[PathBuf],
        emit: &mut dyn FnMut(&[usize], V) -> Result<()>,
    ) -> Result<()> {
        let n = self.ndim;
        let rec = n * 8 + V::W;
        let mut readers = Vec::with_capacity(runs.len());
        let mut heads: Vec<Option<(Vec<usize>, V)>> = Vec::with_capacity(runs.len());
        let mut buf = vec![0u8; rec];
        let next = |r: &mut BufReader<File>, buf: &mut [u8]| -> Result<Option<(Vec<usize>, V)>> {
            match r.read_exact(buf) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                Err(e) => return Err(e.into()),
            }
            let c = (0..n)
                .map(|d| {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&buf[d * 8..d * 8 + 8]);
                    u64::from_le_bytes(a) as usize
                })
                .collect();
            Ok(Some((c, V::get(&buf[n * 8..]))))
        };
        for p in runs {
            let mut r = BufReader::with_capacity(RUN_BUFFER, File::open(p)?);
            heads.push(next(&mut r, &mut buf)?);
            readers.push(r);
        }
        loop {
            let mut best: Option<usize> = None;
            for (i, h) in heads.iter().enumerate() {
                if let Some((c, _)) = h {
                    best = match best {
                        Some(b) => match &heads[b] {
                            Some((bc, _)) if self.cmp_entries(c, bc) == Ordering::Less => Some(i),
                            _ => Some(b),
                        },
                        None => Some(i),
                    };
                }
            }
            let Some(b) = best else { break };
            let following = next(&mut readers[b], &mut buf)?;
            if let Some((c, v)) = std::mem::replace(&mut heads[b], following) {
                emit(&c, v)?;
            }
        }
        Ok(())
    }
}

/// Entries in key order become rows, with duplicates resolved.
struct Emitter<'a, V: Le> {
    ndim: usize,
    duplicates: Duplicates,
    prev: Option<Vec<usize>>,
    coords: Vec<Vec<usize>>,
    values: Vec<V>,
    sink: &'a mut dyn FnMut(Rows) -> Result<()>,
}

impl<V: Le> Emitter<'_, V> {
    const BATCH: usize = 1 << 16;

    fn entry(&mut self, c: &[usize], v: V) -> Result<()> {
        if self.prev.as_deref() == Some(c) {
            match self.duplicates {
                Duplicates::Keep => {}
                Duplicates::Error => {
                    return Err(Error::invariant(
                        "dataset entries",
                        None,
                        format!(
                            "duplicate entry at {c:?} (0-based): repeated coordinates (sum or keep them with the duplicates option)"
                        ),
                    ));
                }
                Duplicates::Sum => {
                    let last = match self.values.last_mut() {
                        Some(l) => l,
                        None => {
                            // the previous entry went out with the last batch
                            return Err(Error::invariant(
                                "dataset entries",
                                None,
                                "duplicate across a batch boundary",
                            ));
                        }
                    };
                    *last = last.checked_sum(v).ok_or_else(|| {
                        Error::overflow(
                            format!("the sum of the duplicate entries at {c:?}"),
                            "a sum",
                            V::TYPE.name(),
                        )
                    })?;
                    return Ok(());
                }
            }
        }
        if self.values.len() >= Self::BATCH && self.prev.as_deref() != Some(c) {
            self.flush()?;
        }
        for (d, &x) in c.iter().enumerate() {
            self.coords[d].push(x);
        }
        self.values.push(v);
        match &mut self.prev {
            Some(p) => p.copy_from_slice(c),
            None => self.prev = Some(c.to_vec()),
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.values.is_empty() {
            return Ok(());
        }
        let values = std::mem::take(&mut self.values);
        let coords = std::mem::replace(&mut self.coords, vec![Vec::new(); self.ndim]);
        let values: ArrayRef = value_array(&ValueBuffer::from_typed(ScalarBuffer::from(values)));
        (self.sink)(Rows {
            coords,
            values,
            levels: None,
        })
    }
}

impl<V: Le> Spill for Sorter<V> {
    fn push(&mut self, rows: &Rows) -> Result<()> {
        let n = rows.len();
        let mut at = 0;
        while at < n {
            if self.values.capacity() == 0 {
                // one allocation per run (growing by doubling would hold the old
                // and the new buffer at once); without the memory, grow as needed
                let _ = self.values.try_reserve_exact(self.run_len);
                let _ = self.coords.try_reserve_exact(self.run_len * self.ndim);
            }
            let take = (self.run_len - self.values.len()).min(n - at);
            for r in at..at + take {
                self.coords.extend(rows.coords.iter().map(|c| c[r]));
            }
            with_bytes(rows.values.as_ref(), "value column", |b| {
                self.values.extend(
                    b[at * V::W..(at + take) * V::W]
                        .chunks_exact(V::W)
                        .map(V::get),
                )
            })?;
            at += take;
            if self.values.len() >= self.run_len {
                self.spill()?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, sink: &mut dyn FnMut(Rows) -> Result<()>) -> Result<usize> {
        let mut out = Emitter {
            ndim: self.ndim,
            duplicates: self.duplicates,
            prev: None,
            coords: vec![Vec::new(); self.ndim],
            values: Vec::new(),
            sink,
        };
        if self.runs.is_empty() {
            // everything fitted: sort in memory
            let perm = self.permutation();
            let n = self.ndim;
            for &i in &perm {
                out.entry(&self.coords[i * n..(i + 1) * n], self.values[i])?;
            }
            out.flush()?;
            return Ok(0);
        }
        self.spill()?;
        let spilled = self.runs.len();
        // merge passes until one pass can take every run
        while self.runs.len() > self.fan_in {
            let mut merged = Vec::new();
            let runs = std::mem::take(&mut self.runs);
            for group in runs.chunks(self.fan_in) {
                let path = self.dir.join(format!("run-{}", self.spilled));
                self.spilled += 1;
                let mut w = BufWriter::with_capacity(RUN_BUFFER, File::create(&path)?);
                let mut rec = Vec::new();
                self.merge(group, &mut |c, v| {
                    rec.clear();
                    for &x in c {
                        rec.extend_from_slice(&(x as u64).to_le_bytes());
                    }
                    v.put(&mut rec);
                    Ok(w.write_all(&rec)?)
                })?;
                w.flush()?;
                drop(w);
                for p in group {
                    std::fs::remove_file(p)?;
                }
                merged.push(path);
            }
            self.runs = merged;
        }
        let runs = std::mem::take(&mut self.runs);
        self.merge(&runs, &mut |c, v| out.entry(c, v))?;
        out.flush()?;
        Ok(spilled)
    }
}

// ------------------------------------------------------------------- reading

/// The result of [`DatasetReader::read_range`].
///
/// ```
/// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("ds");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![100, 2], &[(vec![5, 0], 1.0), (vec![55, 1], 2.0), (vec![95, 1], 3.0)])?.into();
/// write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 10))?;
/// let part = DatasetReader::open(&out)?.read_range(0, 50..60)?;
/// assert_eq!((part.parts_read, part.parts_total, part.rows_read), (1, 3, 1));
/// assert_eq!(part.tensor.get::<f64>(&[5, 1])?, Some(2.0)); // row 55, shifted by 50
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetRangeRead {
    /// The sub-tensor (as [`super::RangeRead::tensor`]).
    pub tensor: AnyTensor,
    /// Parts opened.
    pub parts_read: usize,
    /// Parts in the dataset.
    pub parts_total: usize,
    /// Row groups decoded, over the parts opened.
    pub row_groups_read: usize,
    /// Row groups of the parts opened.
    pub row_groups_total: usize,
    /// Rows decoded (before filtering by the range).
    pub rows_read: usize,
}

/// An open dataset: its manifest read and checked (parts are opened on demand,
/// each checked against the manifest).
///
/// ```
/// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("ds");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![8, 2], 2.0)])?.into();
/// write_dataset(&out, &t.clone().into(), &DatasetWriteOptions::new(0, 4))?;
/// let r = DatasetReader::open(&out)?;
/// assert_eq!((r.rows(), r.partition_dim(), r.block()), (2, 0, 4));
/// assert_eq!(r.read()?.tensor, t);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Debug)]
pub struct DatasetReader {
    root: Root,
    /// The root as text, for messages.
    name: String,
    spec: TensorSpec,
    dim: usize,
    block: usize,
    rows: usize,
    parts: Vec<DatasetPart>,
    options: ArchiveReadOptions,
}

/// Where a dataset lives: a directory, or a prefix in an object store.
#[derive(Clone, Debug)]
enum Root {
    Dir(PathBuf),
    #[cfg(feature = "object-store")]
    Store(super::store::StoreLocation),
}

impl Root {
    fn name(&self) -> String {
        match self {
            Root::Dir(d) => d.display().to_string(),
            #[cfg(feature = "object-store")]
            Root::Store(at) => at.url().to_string(),
        }
    }

    /// The manifest's text, refused above [`MAX_MANIFEST_BYTES`].
    fn manifest(&self) -> Result<String> {
        let bytes = match self {
            Root::Dir(dir) => {
                let file = File::open(dir.join(DATASET_MANIFEST))?;
                let len = file.metadata()?.len();
                if len > MAX_MANIFEST_BYTES {
                    return Err(manifest_err(
                        &self.name(),
                        format!(
                            "{len} bytes, more than the {MAX_MANIFEST_BYTES} a manifest may have"
                        ),
                    ));
                }
                let mut bytes = Vec::new();
                file.take(MAX_MANIFEST_BYTES)
                    .read_to_end(&mut bytes)
                    .map_err(|e| manifest_err(&self.name(), e.to_string()))?;
                bytes
            }
            #[cfg(feature = "object-store")]
            Root::Store(at) => at
                .join(DATASET_MANIFEST)?
                .get_all(MAX_MANIFEST_BYTES)
                .map_err(|e| match e {
                    Error::Limit { needed, .. } => manifest_err(
                        &self.name(),
                        format!(
                            "{needed} bytes, more than the {MAX_MANIFEST_BYTES} a manifest may have"
                        ),
                    ),
                    other => other,
                })?
                .to_vec(),
        };
        String::from_utf8(bytes).map_err(|e| manifest_err(&self.name(), e.to_string()))
    }

    /// Open `part`'s archive.
    fn open_part(&self, part: &DatasetPart, options: &ArchiveReadOptions) -> Result<ArchiveReader> {
        match self {
            Root::Dir(dir) => ArchiveReader::open_with(dir.join(&part.path), options),
            #[cfg(feature = "object-store")]
            Root::Store(at) => ArchiveReader::open_object(
                &at.join(&part.path.to_string_lossy())?,
                Some(part.bytes),
                options,
            ),
        }
    }

    fn part_name(&self, part: &DatasetPart) -> String {
        format!("{}/{}", self.name(), part.path.display())
    }
}

fn manifest_err(root: &str, detail: impl Into<String>) -> Error {
    Error::Parse {
        what: format!("dataset manifest {root}/{DATASET_MANIFEST}"),
        detail: detail.into(),
    }
}

/// The COO canonical flag left out, to compare a part's spec with the dataset's.
fn without_canonical(spec: &TensorSpec) -> TensorSpec {
    let mut s = spec.clone();
    if let ArchiveLayout::Coo { canonical, .. } = &mut s.layout {
        *canonical = None;
    }
    s
}

impl DatasetReader {
    /// Open the dataset in directory `path` with default options.
    ///
    /// ```
    /// use arrow_sparse::archive::DatasetReader;
    /// use arrow_sparse::Error;
    /// let dir = tempfile::tempdir()?;
    /// // a directory without a manifest is no dataset
    /// assert!(matches!(DatasetReader::open(dir.path()), Err(Error::Io(_))));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, &ArchiveReadOptions::default())
    }

    /// Open the dataset in directory `path`: read its manifest and check it
    /// (parts in block order, each path the one its block gives, ranges within
    /// the shape, row counts adding up). Each part is checked when opened: its
    /// size, its spec (the dataset's), its rows and every coordinate within its
    /// range.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveReadOptions, DatasetReader, DatasetWriteOptions, write_dataset, DATASET_MANIFEST};
    /// use arrow_sparse::{AnyTensor, CooTensor, Error};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0)])?.into();
    /// write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 4))?;
    /// assert!(DatasetReader::open_with(&out, &ArchiveReadOptions::default()).is_ok());
    /// // a manifest pointing outside the dataset is refused
    /// let m = out.join(DATASET_MANIFEST);
    /// let text = std::fs::read_to_string(&m)?.replace("dim_0_block=0/part-0.parquet", "../../etc/passwd");
    /// std::fs::write(&m, text)?;
    /// assert!(matches!(DatasetReader::open(&out), Err(Error::Parse { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn open_with(path: impl AsRef<Path>, options: &ArchiveReadOptions) -> Result<Self> {
        Self::open_root(Root::Dir(path.as_ref().to_path_buf()), options)
    }

    /// Open the dataset at the prefix `at` of an object store (feature
    /// `object-store`), as [`open_with`](Self::open_with) a directory: one
    /// request for the manifest; each part is opened when it is read (one ranged
    /// request for its footer, its size taken from the manifest), and each row
    /// group it decodes is fetched in one call for the column chunks it needs.
    ///
    /// ```
    /// use arrow_sparse::archive::store::StoreLocation;
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![8, 2], 2.0)])?.into();
    /// write_dataset(&out, &t.clone().into(), &DatasetWriteOptions::new(0, 4))?;
    /// let at = StoreLocation::from_url(&format!("file://{}", out.display()))?;
    /// let r = DatasetReader::open_store(&at, &Default::default())?;
    /// assert_eq!(r.read_range(0, 8..10)?.parts_read, 1);
    /// assert_eq!(r.read()?.tensor, t);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    #[cfg(feature = "object-store")]
    pub fn open_store(
        at: &super::store::StoreLocation,
        options: &ArchiveReadOptions,
    ) -> Result<Self> {
        Self::open_root(Root::Store(at.clone()), options)
    }

    fn open_root(root: Root, options: &ArchiveReadOptions) -> Result<Self> {
        let name = root.name();
        let dir = name.as_str();
        let text = root.manifest()?;
        let json: ManifestJson =
            serde_json::from_str(&text).map_err(|e| manifest_err(dir, e.to_string()))?;
        if json.version != DATASET_VERSION {
            return Err(Error::Type {
                what: "dataset manifest version".into(),
                expected: DATASET_VERSION.to_string(),
                found: json.version.to_string(),
            });
        }
        let archive = Archive::parse(&json.archive.to_string())?;
        archive.spec.check_with(options.max_broadcast)?;
        let spec = archive.spec;
        let usize_of = |x: u64, what: &str| -> Result<usize> {
            usize::try_from(x).map_err(|_| manifest_err(dir, format!("{what} {x} does not fit")))
        };
        let dim = usize_of(json.partition.dim, "partition dim")?;
        let block = usize_of(json.partition.block, "block")?;
        sort_key(&spec, dim).map_err(|e| manifest_err(dir, e.to_string()))?;
        if block == 0 {
            return Err(manifest_err(dir, "block 0"));
        }
        if json.partition.key != partition_key(dim) {
            return Err(manifest_err(
                dir,
                format!(
                    "partition key {:?}, expected {:?}",
                    json.partition.key,
                    partition_key(dim)
                ),
            ));
        }
        let extent = spec.shape[dim];
        let mut parts = Vec::with_capacity(json.parts.len().min(1 << 16));
        let mut total: u64 = 0;
        for (i, p) in json.parts.iter().enumerate() {
            let k = usize_of(p.block, "part block")?;
            let lo = k
                .checked_mul(block)
                .filter(|&lo| lo < extent)
                .ok_or_else(|| {
                    manifest_err(
                        dir,
                        format!("part {i}: block {k} lies outside the extent {extent}"),
                    )
                })?;
            let hi = lo.saturating_add(block).min(extent);
            if parts.last().is_some_and(|q: &DatasetPart| q.block >= k) {
                return Err(manifest_err(
                    dir,
                    format!("part {i}: blocks not in increasing order"),
                ));
            }
            let path = part_path(dim, k);
            if Path::new(&p.path) != path {
                return Err(manifest_err(
                    dir,
                    format!("part {i}: path {:?}, expected {:?}", p.path, path.display()),
                ));
            }
            if p.range != [lo as u64, hi as u64] {
                return Err(manifest_err(
                    dir,
                    format!("part {i}: range {:?}, expected [{lo}, {hi}]", p.range),
                ));
            }
            total = total.saturating_add(p.rows);
            parts.push(DatasetPart {
                block: k,
                range: lo..hi,
                path,
                rows: usize_of(p.rows, "part rows")?,
                bytes: p.bytes,
            });
        }
        if total != json.rows || archive.rows as u64 != json.rows {
            return Err(manifest_err(
                dir,
                format!(
                    "rows {} (archive object {}), the parts hold {total}",
                    json.rows, archive.rows
                ),
            ));
        }
        Ok(DatasetReader {
            root,
            name,
            spec,
            dim,
            block,
            rows: archive.rows,
            parts,
            options: options.clone(),
        })
    }

    /// The dataset's tensor spec.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor, Format};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// // entries out of order: sorted into the parts, so the dataset is canonical
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![8, 2], 2.0), (vec![1, 0], 1.0)])?.into();
    /// write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 4))?;
    /// let spec = DatasetReader::open(&out)?.spec().clone();
    /// assert_eq!((spec.format(), spec.shape.as_slice()), (Format::Coo, &[10, 3][..]));
    /// assert!(matches!(spec.layout, ArchiveLayout::Coo { canonical: Some(true), .. }));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn spec(&self) -> &TensorSpec {
        &self.spec
    }

    /// Total rows (stored entries).
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0)])?.into();
    /// write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(0, 4))?;
    /// assert_eq!(DatasetReader::open(dir.path().join("ds"))?.rows(), 1);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The partition dimension.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0)])?.into();
    /// write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(1, 2))?;
    /// assert_eq!(DatasetReader::open(dir.path().join("ds"))?.partition_dim(), 1);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn partition_dim(&self) -> usize {
        self.dim
    }

    /// The extent of each part's range.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0)])?.into();
    /// write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(1, 2))?;
    /// assert_eq!(DatasetReader::open(dir.path().join("ds"))?.block(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn block(&self) -> usize {
        self.block
    }

    /// The parts, in block order (see [`DatasetPart`]).
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![9, 0], 1.0)])?.into();
    /// write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(0, 5))?;
    /// let r = DatasetReader::open(dir.path().join("ds"))?;
    /// assert_eq!(r.parts().iter().map(|p| p.range.clone()).collect::<Vec<_>>(), [0..5, 5..10]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn parts(&self) -> &[DatasetPart] {
        &self.parts
    }

    /// Open part `i`'s archive, checked against the manifest.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![9, 0], 1.0)])?.into();
    /// write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(0, 5))?;
    /// let part = DatasetReader::open(dir.path().join("ds"))?.open_part(1)?;
    /// assert_eq!((part.rows(), part.spec().shape.as_slice()), (1, &[10, 3][..])); // the whole shape
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn open_part(&self, i: usize) -> Result<ArchiveReader> {
        let part = self.parts.get(i).ok_or_else(|| {
            Error::shape(
                "dataset part",
                format!("a part < {}", self.parts.len()),
                i.to_string(),
            )
        })?;
        let r = self.root.open_part(part, &self.options)?;
        let bad = |detail: String| Error::invariant(self.root.part_name(part), None, detail);
        if r.file_bytes() != part.bytes {
            return Err(bad(format!(
                "{} bytes, the manifest says {}",
                r.file_bytes(),
                part.bytes
            )));
        }
        if r.rows() != part.rows {
            return Err(bad(format!(
                "{} rows, the manifest says {}",
                r.rows(),
                part.rows
            )));
        }
        if without_canonical(r.spec()) != without_canonical(&self.spec) {
            return Err(bad(format!(
                "its spec {:?} differs from the dataset's {:?}",
                r.spec(),
                self.spec
            )));
        }
        Ok(r)
    }

    fn limits(&self, bytes: u64) -> Limits<'_> {
        Limits {
            limit: self.options.limit,
            input_bytes: bytes,
            name: &self.name,
            max_indptr_len: self.options.max_indptr_len,
            max_broadcast: self.options.max_broadcast,
        }
    }

    /// Parts `which` (indices into [`parts`](Self::parts)) read into one tensor of
    /// `result`, keeping the rows in `select` (`(dim, lo, hi)`, shifted by `lo`).
    fn read_parts(
        &self,
        which: &[usize],
        result: TensorSpec,
        select: Option<(usize, usize, usize)>,
    ) -> Result<DatasetRangeRead> {
        let mut readers = Vec::with_capacity(which.len());
        let (mut expect, mut bytes) = (0u64, 0u64);
        let (mut groups_read, mut groups_total, mut rows_read) = (0, 0, 0);
        for &i in which {
            let r = self.open_part(i)?;
            let groups = match select {
                Some((d, lo, hi)) => r.groups_in_range(d, lo, hi)?.0,
                None => (0..r.num_row_groups()).collect(),
            };
            let rows = r.rows_of(&groups)?;
            expect = expect.saturating_add(rows);
            rows_read += rows as usize;
            bytes = bytes.saturating_add(r.file_bytes());
            groups_read += groups.len();
            groups_total += r.num_row_groups();
            readers.push((i, r, groups));
        }
        let limits = self.limits(bytes);
        let mut builder = Builder::new(result, expect, &limits)?;
        for (i, r, groups) in &readers {
            let range = &self.parts[*i].range;
            let filter = RowFilter {
                within: Some((self.dim, range.start, range.end)),
                select,
            };
            r.push_groups(groups, &mut builder, filter)?;
        }
        Ok(DatasetRangeRead {
            tensor: builder.finish(self.options.validation)?,
            parts_read: readers.len(),
            parts_total: self.parts.len(),
            row_groups_read: groups_read,
            row_groups_total: groups_total,
            rows_read,
        })
    }

    /// The dataset's tensor, exactly as written (format, types, names, canonical
    /// flag, custom metadata).
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let coo = CooTensor::<f32, i64>::from_entries(vec![6, 4], &[(vec![0, 3], 1.0), (vec![4, 1], 2.0), (vec![5, 0], 3.0)])?;
    /// let csr: AnyTensor = coo.to_csx::<i16, i32>(CompressedAxis::Row)?.into();
    /// write_dataset(&out, &csr.clone().into(), &DatasetWriteOptions::new(0, 2))?;
    /// assert_eq!(DatasetReader::open(&out)?.read()?.tensor, csr); // one indptr over all parts
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn read(&self) -> Result<TensorMessage> {
        let all: Vec<usize> = (0..self.parts.len()).collect();
        let tensor = self.read_parts(&all, self.spec.clone(), None)?.tensor;
        Ok(TensorMessage {
            tensor,
            custom_metadata: self.spec.custom_metadata.clone(),
        })
    }

    /// The sub-tensor of the entries whose coordinate along `dim` lies in
    /// `range` (clamped to the extent), as [`ArchiveReader::read_range`]. Along
    /// the partition dimension only the parts whose range meets `range` are
    /// opened; in each part, row groups are skipped by their statistics.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![100, 4], &[(vec![5, 0], 1.0), (vec![55, 3], 2.0)])?.into();
    /// write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 10))?;
    /// let r = DatasetReader::open(&out)?;
    /// let cols = r.read_range(1, 3..4)?; // not the partition dimension: every part is opened
    /// assert_eq!((cols.parts_read, cols.tensor.shape(), cols.tensor.nnz()), (2, &[100, 1][..], 1));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn read_range(&self, dim: usize, range: Range<usize>) -> Result<DatasetRangeRead> {
        let extent = *self.spec.shape.get(dim).ok_or_else(|| {
            Error::shape(
                "range dimension",
                format!("a dimension < {}", self.spec.shape.len()),
                dim.to_string(),
            )
        })?;
        let hi = range.end.min(extent);
        let lo = range.start.min(hi);
        let which: Vec<usize> = (0..self.parts.len())
            .filter(|&i| {
                let r = &self.parts[i].range;
                dim != self.dim || (r.start < hi && lo < r.end)
            })
            .collect();
        let mut sub = self.spec.clone();
        sub.shape[dim] = hi - lo;
        self.read_parts(&which, sub, Some((dim, lo, hi)))
    }

    /// Part `i`'s entries as a tensor of the dataset's format whose extent along
    /// the partition dimension is the part's range (coordinates shifted down by
    /// its start): one block of a streamed computation.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![8, 2], 2.0)])?.into();
    /// write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 4))?;
    /// let r = DatasetReader::open(&out)?;
    /// let b = r.read_block(1)?; // rows 8..10
    /// assert_eq!((b.shape(), b.get::<f64>(&[0, 2])?), (&[2, 3][..], Some(2.0)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn read_block(&self, i: usize) -> Result<AnyTensor> {
        let range = self
            .parts
            .get(i)
            .ok_or_else(|| {
                Error::shape(
                    "dataset part",
                    format!("a part < {}", self.parts.len()),
                    i.to_string(),
                )
            })?
            .range
            .clone();
        let mut sub = self.spec.clone();
        sub.shape[self.dim] = range.len();
        Ok(self
            .read_parts(&[i], sub, Some((self.dim, range.start, range.end)))?
            .tensor)
    }

    /// Every part in turn, as [`read_block`](Self::read_block), with its range.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![8, 2], 2.0)])?.into();
    /// write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 4))?;
    /// let r = DatasetReader::open(&out)?;
    /// let blocks = r.blocks().collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(blocks.iter().map(|(range, b)| (range.clone(), b.nnz())).collect::<Vec<_>>(), [(0..4, 1), (8..10, 1)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn blocks(&self) -> impl Iterator<Item = Result<(Range<usize>, AnyTensor)>> + '_ {
        (0..self.parts.len()).map(|i| Ok((self.parts[i].range.clone(), self.read_block(i)?)))
    }

    /// Every part in turn as a message: the block ([`read_block`](Self::read_block))
    /// with the dataset's custom metadata and [`DATASET_BLOCK_KEY`] saying where
    /// it lies. Written as a stream ([`crate::ipc::write_tensor_stream_iter`]),
    /// they are the dataset's tensor block by block, and
    /// [`DatasetWriter::write_block`] at each block's offset rebuilds it.
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetBlock, DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let out = dir.path().join("ds");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 3], &[(vec![1, 0], 1.0), (vec![8, 2], 2.0)])?.into();
    /// write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 4))?;
    /// let r = DatasetReader::open(&out)?;
    /// let blocks = r.block_messages().collect::<Result<Vec<_>, _>>()?;
    /// let where_ = blocks.iter().map(DatasetBlock::of).collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(where_[1], Some(DatasetBlock { dim: 0, offset: 8, shape: vec![10, 3] }));
    /// assert_eq!(blocks[1].tensor.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn block_messages(&self) -> impl Iterator<Item = Result<TensorMessage>> + '_ {
        self.blocks().map(|item| {
            let (range, tensor) = item?;
            let mut custom_metadata = self.spec.custom_metadata.clone();
            custom_metadata.push((
                DATASET_BLOCK_KEY.to_string(),
                DatasetBlock {
                    dim: self.dim,
                    offset: range.start,
                    shape: self.spec.shape.clone(),
                }
                .to_json(),
            ));
            Ok(TensorMessage {
                tensor,
                custom_metadata,
            })
        })
    }

    /// `y = A x` for a 2-D dataset, streaming one block at a time through
    /// [`crate::kernels::spmv::spmv_into`] (memory: one block and the vectors).
    /// Partitioned by rows, each block computes its slice of `y` whole, as the
    /// in-memory kernel does; partitioned by columns, the blocks' products are
    /// added (an integer partial sum that overflows is an error even when the
    /// total would fit).
    ///
    /// ```
    /// use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
    /// use arrow_sparse::{AnyTensor, CooTensor, kernels::spmv::spmv};
    /// let dir = tempfile::tempdir()?;
    /// let t: AnyTensor = CooTensor::<i64, i64>::from_entries(vec![5, 4], &[(vec![0, 3], 2), (vec![4, 0], -1), (vec![4, 2], 7)])?.into();
    /// let x = [1i64, 2, 3, 4];
    /// for dim in [0, 1] {
    ///     let out = dir.path().join(format!("ds{dim}"));
    ///     write_dataset(&out, &t.clone().into(), &DatasetWriteOptions::new(dim, 2))?;
    ///     assert_eq!(DatasetReader::open(&out)?.spmv(&x)?, spmv(&t, &x)?);
    /// }
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn spmv<V: Numeric>(&self, x: &[V]) -> Result<Vec<V>> {
        if self.spec.shape.len() != 2 {
            return Err(Error::shape(
                "SpMV operand",
                "a 2-D dataset",
                format!("{}-D", self.spec.shape.len()),
            ));
        }
        if V::TYPE != self.spec.value_type {
            return Err(Error::Type {
                what: "SpMV vector".into(),
                expected: self.spec.value_type.name().into(),
                found: V::TYPE.name().into(),
            });
        }
        let (m, n) = (self.spec.shape[0], self.spec.shape[1]);
        if x.len() != n {
            return Err(Error::length("SpMV vector x", n, x.len()));
        }
        let mut y = vec![V::ZERO; m];
        let one = V::from_acc(V::acc_one())
            .ok_or_else(|| Error::invariant("SpMV", None, "the value type has no one"))?;
        for item in self.blocks() {
            let (range, block) = item?;
            if self.dim == 0 {
                crate::kernels::spmv::spmv_into(&block, x, &mut y[range])?;
            } else {
                crate::kernels::spmv::spmv_scaled_into(one, &block, &x[range], one, &mut y)?;
            }
        }
        Ok(y)
    }
}

/// Whether `path` is a dataset directory (holds a manifest).
///
/// ```
/// use arrow_sparse::archive::{is_dataset_path, DatasetWriteOptions, write_dataset};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// assert!(!is_dataset_path(dir.path()));
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4], &[(vec![1], 1.0)])?.into();
/// write_dataset(&dir.path().join("ds"), &t.into(), &DatasetWriteOptions::new(0, 2))?;
/// assert!(is_dataset_path(dir.path().join("ds")));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn is_dataset_path(path: impl AsRef<Path>) -> bool {
    path.as_ref().join(DATASET_MANIFEST).is_file()
}

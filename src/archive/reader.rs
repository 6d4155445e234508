//! [`ArchiveReader`]: restore an archive's tensor, stream its row groups, read a
//! coordinate range skipping row groups by their statistics.

use std::fs::File;
use std::ops::Range;
use std::path::Path;

use ::parquet::arrow::ProjectionMask;
use ::parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use ::parquet::file::statistics::Statistics;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::{Buffer, MutableBuffer};
use arrow_schema::DataType;

use super::build::{Builder, Limits};
use super::checked::{self, BoundedFile};
use super::meta::{Archive, ArchiveLayout, TensorSpec, packed_strides_like};
use super::rows::{Rows, advance, column_usizes, unravel, value_array, with_bytes};
use super::writer::combine;
use super::{ArchiveReadOptions, METADATA_CRC_KEY, METADATA_KEY};
use crate::buffer::ValueBuffer;
use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::tensor::{AnyTensor, CoordLayout};
use crate::types::IndexType;

/// One row group, as the footer describes it.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.parquet");
/// let entries = [(vec![0, 3], 1.0), (vec![2, 1], 2.0), (vec![7, 0], 3.0)];
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 4], &entries)?.into();
/// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default().with_row_group_size(2))?;
/// let r = ArchiveReader::open(&path)?;
/// let first = r.row_group_info(0)?;
/// assert_eq!((first.rows, first.first_row), (2, 0));
/// assert_eq!(first.ranges, [Some((0, 2)), Some((1, 3))]); // rows (0, 3) and (2, 1)
/// let second = r.row_group_info(1)?;
/// assert_eq!((second.rows, second.first_row, second.ranges[0]), (1, 2, Some((7, 7))));
/// assert!(second.bytes > 0);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowGroupInfo {
    /// Number of rows.
    pub rows: usize,
    /// Position of its first row in the archive.
    pub first_row: usize,
    /// Compressed bytes of its column chunks.
    pub bytes: u64,
    /// Per dimension, the smallest and largest coordinate (from the column
    /// statistics; `None` when the file has none).
    pub ranges: Vec<Option<(i128, i128)>>,
}

/// The result of [`ArchiveReader::read_range`].
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.parquet");
/// let entries = [(vec![0, 3], 1.0), (vec![2, 1], 2.0), (vec![7, 0], 3.0)];
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 4], &entries)?.into();
/// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default().with_row_group_size(2))?;
/// let part = ArchiveReader::open(&path)?.read_range(0, 1..5)?;
/// // row group 1 (row 7 only) is skipped; both rows of group 0 are decoded, one is kept
/// assert_eq!((part.row_groups_read, part.row_groups_total, part.rows_read), (1, 2, 2));
/// assert_eq!((part.tensor.shape(), part.tensor.nnz()), (&[4, 4][..], 1));
/// assert_eq!(part.tensor.get::<f64>(&[1, 1])?, Some(2.0)); // (2, 1) shifted by 1
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RangeRead {
    /// The sub-tensor (same format and types as the archive's tensor; its extent
    /// along the dimension is the range's length, coordinates shifted to start at
    /// zero).
    pub tensor: AnyTensor,
    /// Row groups decoded.
    pub row_groups_read: usize,
    /// Row groups in the archive.
    pub row_groups_total: usize,
    /// Rows decoded (before filtering by the range).
    pub rows_read: usize,
}

/// An open archive: footer and `arrow_sparse` metadata parsed and checked against
/// the file's schema and row counts; row groups are decoded on demand.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("doc_parquet_reader.parquet");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 2], &[(vec![1, 0], 1.0), (vec![8, 1], 2.0)])?.into();
/// archive::write_archive(&path, &t.clone().into(), &ArchiveWriteOptions::default().with_row_group_size(1))?;
/// let r = ArchiveReader::open(&path)?; // reads the footer only
/// assert_eq!((r.rows(), r.num_row_groups(), r.columns()), (2, 2, &["dim_0".to_string(), "dim_1".to_string()][..]));
/// assert_eq!(r.row_group_info(1)?.ranges[0], Some((8, 8)));
/// assert_eq!(r.read()?.tensor, t);
/// let part = r.read_range(0, 5..10)?; // skips row group 0 by its statistics
/// assert_eq!((part.row_groups_read, part.tensor.nnz()), (1, 1));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Debug)]
pub struct ArchiveReader {
    file: BoundedFile,
    /// The path, for messages.
    name: String,
    meta: ArrowReaderMetadata,
    archive: Archive,
    options: ArchiveReadOptions,
    /// Root column index of each archive column: coordinates, value, [level].
    roots: Vec<usize>,
    /// Leaf (statistics) index of each coordinate column.
    leaves: Vec<usize>,
    /// Leaf index of every column read (coordinates, value, level).
    read_leaves: Vec<usize>,
    mask: ProjectionMask,
    /// CRC-32 per row group, when recorded for these row groups.
    checksums: Vec<Option<u32>>,
    /// Position of each row group's first row.
    first_rows: Vec<usize>,
}

fn integer(t: &DataType) -> bool {
    t.is_integer()
}

impl ArchiveReader {
    /// Open `path` with default options.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor, Error};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10], &[(vec![1], 1.0), (vec![8], 2.0)])?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
    /// assert_eq!(ArchiveReader::open(&path)?.rows(), 2);
    /// assert!(matches!(ArchiveReader::open(&dir.path().join("missing.parquet")), Err(Error::Io(_))));
    /// let junk = dir.path().join("junk.parquet");
    /// std::fs::write(&junk, b"not a parquet file")?;
    /// assert!(ArchiveReader::open(&junk).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        Self::open_with(path, &ArchiveReadOptions::default())
    }

    /// Open `path`: read the footer and the `arrow_sparse` metadata and check them
    /// against the schema and the row counts (no row group is decoded yet).
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveReadOptions, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyDm, AnyTensor, CooTensor, DmTensor, Error, Format, IndexType, dims::DimMap};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let b = AnyTensor::Dm(dm.broadcast(&[4, 3])?); // every stored entry appears twice
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("dm.parquet");
    /// archive::write_archive(&path, &b.clone().into(), &ArchiveWriteOptions::default())?;
    /// let strict = ArchiveReadOptions { max_broadcast: 1, ..ArchiveReadOptions::default() };
    /// assert!(matches!(ArchiveReader::open_with(&path, &strict), Err(Error::Parse { .. })));
    /// let r = ArchiveReader::open_with(&path, &ArchiveReadOptions::default().with_verify_checksums(false))?;
    /// assert_eq!(r.read()?.tensor, b);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn open_with(path: impl AsRef<Path>, options: &ArchiveReadOptions) -> Result<Self> {
        let path = path.as_ref();
        let file = BoundedFile::new(File::open(path)?)?;
        Self::from_file(file, path.display().to_string(), options)
    }

    /// Open the archive object at `at` in an object store (feature
    /// `object-store`), as [`open_with`](Self::open_with) a file: one `HEAD`
    /// request for its size and one ranged read of its last 64 KiB (the
    /// footer); row groups are fetched when they are read, each in one call for
    /// the column chunks it needs.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_sparse::archive::store::StoreLocation;
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10], &[(vec![1], 1.0), (vec![8], 2.0)])?.into();
    /// archive::write_archive(&path, &t.clone().into(), &ArchiveWriteOptions::default())?;
    /// let at = StoreLocation::from_url(&format!("file://{}", path.display()))?;
    /// let r = ArchiveReader::open_store(&at, &Default::default())?;
    /// assert_eq!(r.read()?.tensor, t);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    #[cfg(feature = "object-store")]
    pub fn open_store(
        at: &super::store::StoreLocation,
        options: &ArchiveReadOptions,
    ) -> Result<Self> {
        Self::open_object(at, None, options)
    }

    /// [`open_store`](Self::open_store) with the object's size known (a
    /// dataset's part, whose size the manifest gives).
    #[cfg(feature = "object-store")]
    pub(super) fn open_object(
        at: &super::store::StoreLocation,
        len: Option<u64>,
        options: &ArchiveReadOptions,
    ) -> Result<Self> {
        let object = super::store::RemoteObject::open(at.clone(), len)?;
        let file = BoundedFile::remote(object)?;
        Self::from_file(file, at.url().to_string(), options)
    }

    fn from_file(file: BoundedFile, name: String, options: &ArchiveReadOptions) -> Result<Self> {
        let meta = guard("footer", || {
            Ok(ArrowReaderMetadata::load(
                &file,
                ArrowReaderOptions::new().with_skip_arrow_metadata(true),
            )?)
        })?;
        checked::check_footer(meta.metadata(), file.bytes())?;
        let kv = meta.metadata().file_metadata().key_value_metadata();
        let mut texts = kv
            .into_iter()
            .flatten()
            .filter(|k| k.key == METADATA_KEY)
            .map(|k| k.value.as_deref().unwrap_or(""));
        let text = texts.next().ok_or_else(|| Error::Parse {
            what: "Parquet archive".into(),
            detail: format!("no {METADATA_KEY:?} key-value metadata: not an arrow-sparse archive"),
        })?;
        if texts.next().is_some() {
            return Err(Error::Parse {
                what: "Parquet archive".into(),
                detail: format!(
                    "{METADATA_KEY:?} appears more than once in the key-value metadata"
                ),
            });
        }
        // the JSON's own checksum, when written (a flipped digit in the shape would
        // otherwise give another valid tensor)
        let crc = kv
            .into_iter()
            .flatten()
            .find(|k| k.key == METADATA_CRC_KEY)
            .map(|k| k.value.as_deref().unwrap_or(""));
        if let Some(crc) = crc {
            let got = crc32fast::hash(text.as_bytes());
            if crc.parse::<u32>().ok() != Some(got) {
                return Err(Error::invariant(
                    format!("{METADATA_KEY} metadata"),
                    None,
                    format!(
                        "CRC-32 {got} differs from the recorded {crc:?}: the metadata is corrupt"
                    ),
                ));
            }
        }
        let archive = Archive::parse(text)?;
        // DM levels: checked by the parse, here against the broadcast limit too
        archive.spec.check_with(options.max_broadcast)?;
        let schema = meta.schema().clone();
        let descr = meta.parquet_schema();
        let mut names: Vec<&str> = archive.columns.iter().map(String::as_str).collect();
        names.push(&archive.value_column);
        names.extend(archive.level_column.as_deref());
        let mut roots = Vec::new();
        let mut leaves = Vec::new();
        let mut read_leaves = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let found: Vec<usize> = schema
                .fields()
                .iter()
                .enumerate()
                .filter(|(_, f)| f.name() == name)
                .map(|(j, _)| j)
                .collect();
            let [root] = found[..] else {
                return Err(Error::Parse {
                    what: "Parquet archive".into(),
                    detail: format!(
                        "column {name:?} appears {} times in the schema",
                        found.len()
                    ),
                });
            };
            let field = &schema.fields()[root];
            let ty = field.data_type();
            let ok = if i == archive.columns.len() {
                *ty == archive.spec.value_type.data_type()
            } else {
                integer(ty)
            };
            if !ok {
                return Err(Error::Type {
                    what: format!("column {name:?}"),
                    expected: if i == archive.columns.len() {
                        archive.spec.value_type.data_type().to_string()
                    } else {
                        "an integer type".into()
                    },
                    found: ty.to_string(),
                });
            }
            let leaf: Vec<usize> = (0..descr.num_columns())
                .filter(|&l| descr.get_column_root_idx(l) == root)
                .collect();
            let [leaf] = leaf[..] else {
                return Err(Error::Parse {
                    what: "Parquet archive".into(),
                    detail: format!("column {name:?} is not a primitive column"),
                });
            };
            roots.push(root);
            read_leaves.push(leaf);
            if i < archive.columns.len() {
                leaves.push(leaf);
            }
        }
        // row counts: the JSON, the footer and (later) the data must agree
        let groups = meta.metadata().row_groups();
        let footer: Vec<u64> = groups.iter().map(|g| g.num_rows().max(0) as u64).collect();
        let total = footer.iter().try_fold(0u64, |a, &b| a.checked_add(b));
        if total != Some(archive.rows as u64) {
            return Err(Error::invariant(
                "archive rows",
                None,
                format!(
                    "the metadata says {} rows, the Parquet footer {total:?}",
                    archive.rows
                ),
            ));
        }
        // Checksums are per row group: they apply while the row groups are the
        // ones this crate wrote (a tool rewriting the file may regroup the rows and
        // keep the metadata; the totals still have to agree, checked above).
        let checksums = match &archive.row_groups {
            Some(recorded) if recorded.iter().map(|g| g.rows).eq(footer.iter().copied()) => {
                recorded.iter().map(|g| g.crc32).collect()
            }
            _ => vec![None; footer.len()],
        };
        let first_rows = footer
            .iter()
            .scan(0usize, |acc, &n| {
                let first = *acc;
                *acc += n as usize;
                Some(first)
            })
            .collect();
        let mask = ProjectionMask::roots(descr, roots.iter().copied());
        Ok(ArchiveReader {
            file,
            name,
            meta,
            archive,
            options: options.clone(),
            roots,
            leaves,
            read_leaves,
            mask,
            checksums,
            first_rows,
        })
    }

    /// What the archive holds.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix, Format, IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("csr.parquet");
    /// let t: AnyTensor = CsxMatrix::<f32, i32, i64>::try_new(
    ///     vec![3, 4], CompressedAxis::Row, vec![0, 1, 1, 2].into(), vec![0, 3].into(), vec![1.0, 2.0].into())?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
    /// let r = ArchiveReader::open(&path)?;
    /// let spec = r.spec();
    /// assert_eq!((spec.format(), spec.shape.as_slice(), spec.value_type), (Format::Csr, &[3, 4][..], ValueType::Float32));
    /// assert_eq!((spec.index_type(), spec.indptr_type()), (Some(IndexType::Int32), Some(IndexType::Int64)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn spec(&self) -> &TensorSpec {
        &self.archive.spec
    }

    /// Number of rows (stored entries; every element for a dense tensor).
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, DenseTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("dense.parquet");
    /// let t: AnyTensor = DenseTensor::<i16>::try_new(vec![2, 3], vec![0, 1, 0, 0, 0, 2].into())?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
    /// assert_eq!(ArchiveReader::open(&path)?.rows(), 6); // every element, zeros included
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.archive.rows
    }

    /// The coordinate column names, by dimension.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4, 5], &[(vec![1, 2, 3], 1.0)])?
    ///     .with_dim_names(vec!["x".into(), "".into(), "z".into()])?;
    /// archive::write_archive(&path, &AnyTensor::from(coo).into(), &ArchiveWriteOptions::default())?;
    /// assert_eq!(ArchiveReader::open(&path)?.columns(), ["x", "dim_1", "z"]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn columns(&self) -> &[String] {
        &self.archive.columns
    }

    /// The Parquet footer.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 2], &[(vec![1, 0], 1.0), (vec![8, 1], 2.0)])?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
    /// let r = ArchiveReader::open(&path)?;
    /// let footer = r.parquet_metadata().file_metadata();
    /// assert_eq!(footer.num_rows(), 2);
    /// let names: Vec<&str> = footer.schema_descr().columns().iter().map(|c| c.name()).collect();
    /// assert_eq!(names, ["dim_0", "dim_1", "value"]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn parquet_metadata(&self) -> &::parquet::file::metadata::ParquetMetaData {
        self.meta.metadata()
    }

    /// Number of row groups.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, DenseTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: AnyTensor = DenseTensor::<i32>::try_new(vec![5], vec![1, 2, 3, 4, 5].into())?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default().with_row_group_size(2))?;
    /// assert_eq!(ArchiveReader::open(&path)?.num_row_groups(), 3); // 2 + 2 + 1 rows
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn num_row_groups(&self) -> usize {
        self.meta.metadata().num_row_groups()
    }

    /// Row group `i` as the footer describes it.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor, Error};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let entries = [(vec![1, 0], 1.0), (vec![4, 1], 2.0), (vec![8, 1], 3.0)];
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 2], &entries)?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default().with_row_group_size(2))?;
    /// let r = ArchiveReader::open(&path)?;
    /// let info = r.row_group_info(0)?;
    /// assert_eq!((info.rows, info.first_row, info.ranges[0]), (2, 0, Some((1, 4))));
    /// assert_eq!(r.row_group_info(1)?.first_row, 2);
    /// assert!(matches!(r.row_group_info(2), Err(Error::Unsupported(_))));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn row_group_info(&self, i: usize) -> Result<RowGroupInfo> {
        let groups = self.meta.metadata().row_groups();
        let g = groups.get(i).ok_or_else(|| {
            Error::Unsupported(format!(
                "row group {i} does not exist ({} row groups)",
                groups.len()
            ))
        })?;
        let first_row = self.first_rows.get(i).copied().unwrap_or(0);
        let schema = self.meta.schema();
        let ranges = self
            .leaves
            .iter()
            .zip(&self.roots)
            .map(|(&leaf, &root)| {
                let unsigned = schema.fields()[root].data_type().is_unsigned_integer();
                stats_range(g.column(leaf).statistics(), unsigned)
            })
            .collect();
        Ok(RowGroupInfo {
            rows: g.num_rows().max(0) as usize,
            first_row,
            bytes: g.compressed_size().max(0) as u64,
            ranges,
        })
    }

    /// The whole tensor and its custom metadata, exactly as written.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{ipc::TensorMessage, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let coo = CooTensor::<f32, i16>::from_entries(vec![3, 4], &[(vec![2, 3], 1.0), (vec![0, 1], 2.0)])?;
    /// let message = TensorMessage { tensor: coo.into(), custom_metadata: vec![("source".into(), "doc".into())] };
    /// archive::write_archive(&path, &message, &ArchiveWriteOptions::default())?;
    /// // same format, index type, entry order (not canonical) and custom metadata
    /// assert_eq!(ArchiveReader::open(&path)?.read()?, message);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn read(&self) -> Result<TensorMessage> {
        let groups: Vec<usize> = (0..self.num_row_groups()).collect();
        let tensor = self.read_groups(&groups, self.archive.spec.clone(), RowFilter::ALL)?;
        Ok(TensorMessage {
            tensor,
            custom_metadata: self.archive.spec.custom_metadata.clone(),
        })
    }

    /// The sub-tensor of the entries whose coordinate along `dim` lies in `range`
    /// (clamped to the extent): same format, index types, dim names and
    /// parameters as the archive's tensor, extent `range.len()` along `dim`,
    /// coordinates along `dim` shifted down by `range.start`. Row groups whose
    /// statistics show no coordinate in the range are not decoded.
    ///
    /// For CSF, the sub-tree is rebuilt from the selected leaves; for an archive
    /// with a node-level column, leaves on both sides of a skipped row group are
    /// not merged under common nodes.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("csr.parquet");
    /// // [[1, 0, 0], [0, 2, 0], [0, 0, 3], [4, 0, 0]]
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(vec![4, 3], CompressedAxis::Row,
    ///     vec![0, 1, 2, 3, 4].into(), vec![0, 1, 2, 0].into(), vec![1.0, 2.0, 3.0, 4.0].into())?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
    /// let r = ArchiveReader::open(&path)?;
    /// let rows_1_2: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(vec![2, 3], CompressedAxis::Row,
    ///     vec![0, 1, 2].into(), vec![1, 2].into(), vec![2.0, 3.0].into())?.into();
    /// assert_eq!(r.read_range(0, 1..3)?.tensor, rows_1_2);
    /// assert_eq!(r.read_range(0, 3..100)?.tensor.shape(), &[1, 3]); // clamped to the extent
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn read_range(&self, dim: usize, range: Range<usize>) -> Result<RangeRead> {
        let spec = &self.archive.spec;
        if let ArchiveLayout::Dm { .. } = spec.layout {
            return Err(Error::Unsupported(
                "read_range on a DM archive: its rows are the storage's entries, and a sub-range of the storage is not a DM tensor of the same maps (read the archive, then slice the DM tensor, which copies nothing)".into(),
            ));
        }
        let extent = *spec.shape.get(dim).ok_or_else(|| {
            Error::shape(
                "range dimension",
                format!("a dimension < {}", spec.shape.len()),
                dim.to_string(),
            )
        })?;
        let hi = range.end.min(extent);
        let lo = range.start.min(hi);
        let total = self.num_row_groups();
        let (groups, rows_read) = self.groups_in_range(dim, lo, hi)?;
        let mut sub = spec.clone();
        sub.shape[dim] = hi - lo;
        if let ArchiveLayout::Dense { strides } = &mut sub.layout
            && sub.shape != spec.shape
        {
            *strides = packed_strides_like(&sub.shape, strides);
        }
        let tensor = self.read_groups(&groups, sub, RowFilter::select(dim, lo, hi))?;
        Ok(RangeRead {
            tensor,
            row_groups_read: groups.len(),
            row_groups_total: total,
            rows_read,
        })
    }

    /// Row group `i` as a COO tensor with the archive's shape and value type
    /// (row-major coordinates of the archive's index type, or int64 when an extent
    /// does not fit it), rows in storage order: for streaming an archive larger
    /// than memory.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix, Format, IndexType};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("csr.parquet");
    /// // [[1, 0, 0], [0, 2, 0], [0, 0, 3], [4, 0, 0]]
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(vec![4, 3], CompressedAxis::Row,
    ///     vec![0, 1, 2, 3, 4].into(), vec![0, 1, 2, 0].into(), vec![1.0, 2.0, 3.0, 4.0].into())?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default().with_row_group_size(2))?;
    /// let chunk = ArchiveReader::open(&path)?.read_row_group(1)?; // rows 2 and 3
    /// assert_eq!((chunk.format(), chunk.index_type(), chunk.shape()), (Format::Coo, Some(IndexType::Int32), &[4, 3][..]));
    /// assert_eq!((chunk.nnz(), chunk.get::<f64>(&[3, 0])?), (2, Some(4.0)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn read_row_group(&self, i: usize) -> Result<AnyTensor> {
        self.row_group_info(i)?; // an error for a row group that does not exist
        let spec = &self.archive.spec;
        let index_type = match spec.index_type() {
            Some(t)
                if spec
                    .shape
                    .iter()
                    .all(|&e| e.saturating_sub(1) as u64 <= t.max_value()) =>
            {
                t
            }
            _ => IndexType::Int64,
        };
        let canonical = match spec.layout.rows() {
            ArchiveLayout::Coo { canonical, .. } => canonical.unwrap_or(false),
            ArchiveLayout::Dense { .. } => true,
            _ => false,
        };
        let chunk = TensorSpec {
            layout: ArchiveLayout::Coo {
                index_type,
                coord_layout: CoordLayout::RowMajor,
                canonical: Some(canonical),
            },
            custom_metadata: Vec::new(),
            ..spec.clone()
        };
        self.read_groups(&[i], chunk, RowFilter::ALL)
    }

    /// Every row group in turn, as [`read_row_group`](Self::read_row_group).
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, DenseTensor, Format};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("dense.parquet");
    /// let t: AnyTensor = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default().with_row_group_size(4))?;
    /// let r = ArchiveReader::open(&path)?;
    /// let chunks = r.chunks().collect::<Result<Vec<_>, _>>()?;
    /// let sizes: Vec<usize> = chunks.iter().map(|c| c.nnz()).collect();
    /// assert_eq!(sizes, [4, 2]);
    /// assert!(chunks.iter().all(|c| c.format() == Format::Coo));
    /// assert_eq!(chunks[1].get::<i32>(&[1, 2])?, Some(6));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn chunks(&self) -> impl Iterator<Item = Result<AnyTensor>> + '_ {
        (0..self.num_row_groups()).map(|i| self.read_row_group(i))
    }

    /// The row groups whose statistics allow a coordinate in `lo..hi` along
    /// `dim`, and their row count.
    pub(super) fn groups_in_range(
        &self,
        dim: usize,
        lo: usize,
        hi: usize,
    ) -> Result<(Vec<usize>, usize)> {
        let mut groups = Vec::new();
        let mut rows = 0;
        for i in 0..self.num_row_groups() {
            let info = self.row_group_info(i)?;
            let skip =
                info.ranges[dim].is_some_and(|(min, max)| max < lo as i128 || min >= hi as i128);
            if !skip {
                rows += info.rows;
                groups.push(i);
            }
        }
        Ok((groups, rows))
    }

    /// The number of rows of `groups`.
    pub(super) fn rows_of(&self, groups: &[usize]) -> Result<u64> {
        let mut expect: u64 = 0;
        for &g in groups {
            expect = expect.saturating_add(self.row_group_info(g)?.rows as u64);
        }
        Ok(expect)
    }

    /// Size of the file (or object) in bytes.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10], &[(vec![1], 1.0)])?.into();
    /// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
    /// assert_eq!(ArchiveReader::open(&path)?.file_bytes(), std::fs::metadata(&path)?.len());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn file_bytes(&self) -> u64 {
        self.file.bytes()
    }

    /// Decode `groups` (in order) into a tensor of `result`, passing the rows
    /// through `filter`.
    fn read_groups(
        &self,
        groups: &[usize],
        result: TensorSpec,
        filter: RowFilter,
    ) -> Result<AnyTensor> {
        let expect = self.rows_of(groups)?;
        let limit = Limits {
            limit: self.options.limit,
            input_bytes: self.file.bytes(),
            name: &self.name,
            max_indptr_len: self.options.max_indptr_len,
            max_broadcast: self.options.max_broadcast,
        };
        // what the rows become must fit the limit before anything is reserved
        let mut builder = Builder::new(result, expect, &limit)?;
        self.push_groups(groups, &mut builder, filter)?;
        builder.finish(self.options.validation)
    }

    /// Decode `groups` (in order) and push their rows, through `filter`, into
    /// `builder` (several archives may feed one builder: a dataset's parts).
    pub(super) fn push_groups(
        &self,
        groups: &[usize],
        builder: &mut Builder,
        filter: RowFilter,
    ) -> Result<()> {
        let spec = &self.archive.spec;
        // what the pages decode to must fit the limit before anything is
        // decoded: every group at once for a file; for an object, each group
        // when its column chunks have been fetched (one group in memory)
        let remote = self.file.is_remote();
        let check = |groups: &[usize]| {
            checked::check_chunks(
                &self.file,
                self.meta.metadata(),
                groups,
                Some(&self.read_leaves),
                false,
                &self.options.limit,
                &self.name,
            )
        };
        if !remote {
            check(groups)?;
        }
        let dense = matches!(spec.layout.rows(), ArchiveLayout::Dense { .. });
        let mut pending_level = 0usize;
        let mut last_group: Option<usize> = None;
        for &g in groups {
            let info = self.row_group_info(g)?;
            if last_group.is_some_and(|l| l + 1 != g) || (last_group.is_none() && g != 0) {
                pending_level = 0; // rows were skipped: start new nodes
            }
            last_group = Some(g);
            if remote {
                let ranges = checked::chunk_ranges(
                    self.meta.metadata(),
                    g,
                    &self.read_leaves,
                    self.file.bytes(),
                )?;
                self.file.prefetch(&ranges)?;
                check(&[g])?;
            }
            let file = self.file.try_clone()?;
            let mut reader = guard("row group", || {
                Ok(
                    ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.meta.clone())
                        .with_projection(self.mask.clone())
                        .with_row_groups(vec![g])
                        .with_batch_size(self.options.batch_size.max(1))
                        .build()?,
                )
            })?;
            let ncols = self.roots.len();
            let mut hashers = vec![crc32fast::Hasher::new(); ncols];
            let mut row = info.first_row;
            let mut expected_idx = unravel(row, &spec.shape);
            while let Some(batch) = guard("row group", || Ok(reader.next().transpose()?))? {
                let rows = self.decode(&batch, row, &mut hashers)?;
                if dense {
                    for r in 0..rows.len() {
                        if rows
                            .coords
                            .iter()
                            .zip(&expected_idx)
                            .any(|(c, &e)| c[r] != e)
                        {
                            return Err(Error::invariant(
                                "dense archive rows",
                                Some(row + r),
                                format!(
                                    "coordinates differ from row-major position {expected_idx:?}"
                                ),
                            ));
                        }
                        advance(&mut expected_idx, &spec.shape);
                    }
                }
                if let Some((d, lo, hi)) = filter.within
                    && let Some(r) = rows.coords[d].iter().position(|c| !(lo..hi).contains(c))
                {
                    return Err(Error::invariant(
                        format!("{} row {}", self.name, row + r),
                        None,
                        format!(
                            "coordinate {} along dimension {d} lies outside the part's range {lo}..{hi}",
                            rows.coords[d][r]
                        ),
                    ));
                }
                row += rows.len();
                match filter.select {
                    None => builder.push(&rows)?,
                    Some(f) => builder.push(&select(rows, f, &mut pending_level)?)?,
                }
            }
            if row - info.first_row != info.rows {
                return Err(Error::length(
                    format!("rows of row group {g}"),
                    info.rows,
                    row - info.first_row,
                ));
            }
            let recorded = self.checksums.get(g).copied().flatten();
            if let (Some(want), true) = (recorded, self.options.verify_checksums) {
                let got = combine(hashers);
                if got != want {
                    return Err(Error::invariant(
                        format!("row group {g}"),
                        None,
                        format!(
                            "CRC-32 {got:#010x} differs from the recorded {want:#010x}: the data is corrupt"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// One batch as rows: coordinates checked against the shape, value column of
    /// the value type, node levels; every column fed to its row group's CRC.
    fn decode(
        &self,
        batch: &RecordBatch,
        first_row: usize,
        hashers: &mut [crc32fast::Hasher],
    ) -> Result<Rows> {
        let spec = &self.archive.spec;
        let ndim = spec.shape.len();
        let column = |i: usize| -> Result<&ArrayRef> {
            let name = self.meta.schema().fields()[self.roots[i]].name();
            batch.column_by_name(name).ok_or_else(|| {
                Error::invariant("Parquet batch", None, format!("no column {name:?}"))
            })
        };
        let mut coords = Vec::with_capacity(ndim);
        for (d, hasher) in hashers.iter_mut().enumerate().take(ndim) {
            let a = column(d)?;
            with_bytes(a.as_ref(), "coordinate column", |b| hasher.update(b))?;
            let mut out = Vec::with_capacity(a.len());
            let what = format!("column {:?}", self.archive.columns[d]);
            column_usizes(a.as_ref(), spec.shape[d], &what, first_row, &mut out)?;
            coords.push(out);
        }
        let values = column(ndim)?.clone();
        with_bytes(values.as_ref(), "value column", |b| hashers[ndim].update(b))?;
        let levels = match &self.archive.level_column {
            None => None,
            Some(name) => {
                let a = column(ndim + 1)?;
                with_bytes(a.as_ref(), "level column", |b| hashers[ndim + 1].update(b))?;
                let mut out = Vec::with_capacity(a.len());
                column_usizes(
                    a.as_ref(),
                    ndim,
                    &format!("column {name:?}"),
                    first_row,
                    &mut out,
                )?;
                Some(out)
            }
        };
        if coords.iter().any(|c| c.len() != values.len())
            || levels.as_ref().is_some_and(|l| l.len() != values.len())
        {
            return Err(Error::invariant(
                "Parquet batch",
                None,
                "columns of different lengths",
            ));
        }
        Ok(Rows {
            coords,
            values,
            levels,
        })
    }
}

/// What [`ArchiveReader::push_groups`] does with the decoded rows.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RowFilter {
    /// `(dim, lo, hi)`: every row must have its coordinate along `dim` in
    /// `lo..hi`, else the read fails (a dataset part's range).
    pub(super) within: Option<(usize, usize, usize)>,
    /// `(dim, lo, hi)`: keep only the rows whose coordinate along `dim` lies in
    /// `lo..hi`, shifted down by `lo`.
    pub(super) select: Option<(usize, usize, usize)>,
}

impl RowFilter {
    /// Every row, unchanged.
    pub(super) const ALL: RowFilter = RowFilter {
        within: None,
        select: None,
    };

    /// Keep the rows in `lo..hi` along `dim`, shifted down by `lo`.
    pub(super) fn select(dim: usize, lo: usize, hi: usize) -> RowFilter {
        RowFilter {
            within: None,
            select: Some((dim, lo, hi)),
        }
    }
}

/// The rows whose coordinate along `dim` lies in `lo..hi`, shifted down by `lo`;
/// CSF node levels become the smallest level started since the previous kept row.
fn select(
    mut rows: Rows,
    (dim, lo, hi): (usize, usize, usize),
    pending: &mut usize,
) -> Result<Rows> {
    if rows.coords[dim].iter().all(|c| (lo..hi).contains(c)) {
        // every row is kept (a dataset part read whole): shift in place
        for c in &mut rows.coords[dim] {
            *c -= lo;
        }
        if let Some(first) = rows.levels.as_mut().and_then(|l| l.first_mut()) {
            *first = (*pending).min(*first);
        }
        if !rows.values.is_empty() {
            *pending = usize::MAX;
        }
        return Ok(rows);
    }
    let keep: Vec<usize> = (0..rows.len())
        .filter(|&r| (lo..hi).contains(&rows.coords[dim][r]))
        .collect();
    let coords = rows
        .coords
        .iter()
        .enumerate()
        .map(|(d, c)| {
            let shift = if d == dim { lo } else { 0 };
            keep.iter().map(|&r| c[r] - shift).collect()
        })
        .collect();
    let levels = rows.levels.as_ref().map(|given| {
        let mut out = Vec::with_capacity(keep.len());
        let mut k = keep.iter().peekable();
        for (r, &l) in given.iter().enumerate() {
            *pending = (*pending).min(l);
            if k.peek() == Some(&&r) {
                k.next();
                out.push(*pending);
                *pending = usize::MAX;
            }
        }
        out
    });
    let ty = value_type_of(rows.values.data_type())?;
    let w = ty.byte_width();
    let picked = with_bytes(rows.values.as_ref(), "value column", |b| {
        let mut out = MutableBuffer::new(keep.len() * w);
        for &r in &keep {
            out.extend_from_slice(&b[r * w..(r + 1) * w]);
        }
        out
    })?;
    let values = value_array(&ValueBuffer::from_body(
        ty,
        &Buffer::from(picked),
        0,
        keep.len(),
        "values",
        false,
    )?);
    Ok(Rows {
        coords,
        values,
        levels,
    })
}

fn value_type_of(t: &DataType) -> Result<crate::types::ValueType> {
    crate::types::ValueType::ALL
        .into_iter()
        .find(|v| v.data_type() == *t)
        .ok_or_else(|| Error::Type {
            what: "value column".into(),
            expected: "an integer or float type".into(),
            found: t.to_string(),
        })
}

/// Run a step of the Parquet decoder under the crate's last-resort guard.
fn guard<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    crate::guard::guard(crate::guard::Dependency::Parquet, what, f)
}

/// `(min, max)` of an integer column chunk's statistics.
fn stats_range(s: Option<&Statistics>, unsigned: bool) -> Option<(i128, i128)> {
    match s? {
        Statistics::Int32(v) => {
            let f = |x: &i32| {
                if unsigned {
                    *x as u32 as i128
                } else {
                    *x as i128
                }
            };
            Some((f(v.min_opt()?), f(v.max_opt()?)))
        }
        Statistics::Int64(v) => {
            let f = |x: &i64| {
                if unsigned {
                    *x as u64 as i128
                } else {
                    *x as i128
                }
            };
            Some((f(v.min_opt()?), f(v.max_opt()?)))
        }
        _ => None,
    }
}

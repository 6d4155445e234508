//! The archive's description: [`TensorSpec`] (what a writer declares and a reader
//! restores) and its JSON form in the file's `arrow_sparse` key-value metadata.
//!
//! Version 1 of the JSON (normative text in `format/SPEC.md`, section 9.4):
//!
//! ```text
//! {"version":1,"format":"csr","shape":[3,7],"dim_names":["",""],"value_type":"float32",
//!  "index_type":"int32","indptr_type":"int64","columns":["dim_0","dim_1"],
//!  "value_column":"value","rows":2,"row_groups":[{"rows":2,"crc32":3735928559}],
//!  "writer":"arrow-sparse 0.1.0"}
//! ```
//!
//! Readers refuse other versions with a typed error and ignore fields they do not
//! know. GCS archives add `"gcs": {"dimensions", "partitioning",
//! "compressed_axis"}`; DM archives describe their storage with the fields above
//! and add `"dm": {"storage", "maps"}`, the maps being the IPC extension's objects
//! (serialised and checked by [`crate::ipc::extension`]).

use crate::tensor::{EntryOrder, TensorOptions};
use serde::{Deserialize, Serialize};

use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::dims::DimMap;
use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::tensor::dense::row_major_strides;
use crate::tensor::level::{LevelFormat, LevelType, MAX_LEVELS};
use crate::tensor::validate::{check_dim_names, check_permutation, check_shape};
use crate::tensor::{AnyCoo, AnyDm, AnyTensor, CompressedAxis, CoordLayout, Format};
use crate::types::{IndexType, ValueType};

/// The key of the archive's JSON description in the Parquet key-value metadata.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions, METADATA_KEY};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.parquet");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
/// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
/// let r = ArchiveReader::open(&path)?;
/// let kv = r.parquet_metadata().file_metadata().key_value_metadata().unwrap();
/// let json = kv.iter().find(|k| k.key == METADATA_KEY).and_then(|k| k.value.as_deref()).unwrap();
/// assert!(json.starts_with(r#"{"version":1,"format":"coo","shape":[3]"#), "{json}");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const METADATA_KEY: &str = "arrow_sparse";

/// The key of the CRC-32 (decimal) of the JSON text, written next to it.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions, METADATA_CRC_KEY, METADATA_KEY};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.parquet");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
/// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
/// let r = ArchiveReader::open(&path)?;
/// let kv = r.parquet_metadata().file_metadata().key_value_metadata().unwrap();
/// let get = |key: &str| kv.iter().find(|k| k.key == key).and_then(|k| k.value.clone()).unwrap();
/// let crc: u32 = get(METADATA_CRC_KEY).parse().unwrap();
/// assert_eq!(crc, crc32fast::hash(get(METADATA_KEY).as_bytes()));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const METADATA_CRC_KEY: &str = "arrow_sparse.crc32";

/// The version of the JSON description this crate writes and reads.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions, METADATA_KEY, METADATA_VERSION};
/// use arrow_sparse::{AnyTensor, DenseTensor};
/// assert_eq!(METADATA_VERSION, 1);
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.parquet");
/// let t: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![1, 2].into())?.into();
/// archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
/// let r = ArchiveReader::open(&path)?;
/// let kv = r.parquet_metadata().file_metadata().key_value_metadata().unwrap();
/// let json = kv.iter().find(|k| k.key == METADATA_KEY).and_then(|k| k.value.as_deref()).unwrap();
/// assert!(json.starts_with(&format!("{{\"version\":{METADATA_VERSION},")));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const METADATA_VERSION: u64 = 1;

/// Name of the value column.
pub(crate) const VALUE_COLUMN: &str = "value";

/// Name of the CSF node-level column (only written for CSF trees that prefix
/// merging of the rows would not rebuild, see [`crate::archive`] and SPEC 9.3).
pub(crate) const LEVEL_COLUMN: &str = "csf_level";

/// The storage format an archive restores, with its parameters.
///
/// ```
/// use arrow_sparse::archive::{ArchiveLayout, TensorSpec};
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format, IndexType};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[(vec![0, 1], 2.5), (vec![2, 3], -1.0)])?;
/// let csc: AnyTensor = coo.to_csx::<i32, i64>(CompressedAxis::Column)?.into();
/// let spec = TensorSpec::of(&csc.into())?;
/// let expected = ArchiveLayout::Csx { axis: CompressedAxis::Column, index_type: IndexType::Int32, indptr_type: IndexType::Int64 };
/// assert_eq!(spec.layout, expected);
/// assert_eq!(spec.layout.format(), Format::Csc);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArchiveLayout {
    /// A dense tensor; rows are all elements in row-major logical order, restored
    /// into a buffer with these element strides (a packed layout of the shape).
    Dense {
        /// Element strides of the restored tensor.
        strides: Vec<usize>,
    },
    /// A COO tensor; rows are its entries in storage order.
    Coo {
        /// Coordinate type.
        index_type: IndexType,
        /// Layout of the restored coordinate matrix.
        coord_layout: CoordLayout,
        /// The canonical flag; `None` lets the writer compute it (true when the
        /// rows are sorted lexicographically without duplicates).
        canonical: Option<bool>,
    },
    /// A CSR / CSC matrix; rows are its entries by major slice, then position.
    Csx {
        /// Compressed axis.
        axis: CompressedAxis,
        /// Type of `indices`.
        index_type: IndexType,
        /// Type of `indptr`.
        indptr_type: IndexType,
    },
    /// A CSF tensor; rows are its leaves in order.
    Csf {
        /// Dimension stored at each level.
        axis_order: Vec<usize>,
        /// Type of the indices buffers.
        index_type: IndexType,
        /// Type of the indptr buffers.
        indptr_type: IndexType,
    },
    /// A GCS tensor; rows are the entries of its reduced CSR / CSC matrix in
    /// storage order, with their N-D logical coordinates (the spec's shape is the
    /// logical shape).
    Gcs {
        /// The permutation of the logical dimensions ([`DimMap::dimensions`]).
        dimensions: Vec<usize>,
        /// The one split point ([`DimMap::partitioning`]).
        partitioning: Vec<usize>,
        /// Compressed axis of the reduced matrix (CSR: GCRS, CSC: GCCS).
        axis: CompressedAxis,
        /// Type of the matrix `indices`.
        index_type: IndexType,
        /// Type of the matrix `indptr`.
        indptr_type: IndexType,
        /// The reduced matrix's own dimension names (empty when unnamed).
        matrix_dim_names: Vec<String>,
    },
    /// A level tensor; rows are its stored values (those of dense levels too) in
    /// storage order, with their N-D coordinates.
    Level {
        /// The level types and the axis order.
        format: LevelFormat,
        /// Type of the coordinates buffers.
        index_type: IndexType,
        /// Type of the positions buffers.
        indptr_type: IndexType,
    },
    /// A DM tensor. The rows are those of its storage, the first tensor below its
    /// DM levels (a plain or GCS tensor), archived with the `storage` layout; the
    /// spec's shape and dim names are the storage's. `chain` holds the DM levels.
    Dm {
        /// The layout of the storage (not `Dm`).
        storage: Box<ArchiveLayout>,
        /// The DM levels above the storage.
        chain: DmChain,
    },
}

impl ArchiveLayout {
    /// The format this layout restores.
    ///
    /// ```
    /// use arrow_sparse::archive::ArchiveLayout;
    /// use arrow_sparse::{CompressedAxis, Format, IndexType};
    /// let csr = ArchiveLayout::Csx { axis: CompressedAxis::Row, index_type: IndexType::Int32, indptr_type: IndexType::Int64 };
    /// assert_eq!(csr.format(), Format::Csr);
    /// let column_major = ArchiveLayout::Dense { strides: vec![1, 2] };
    /// assert_eq!(column_major.format(), Format::Dense);
    /// ```
    pub fn format(&self) -> Format {
        match self {
            ArchiveLayout::Dense { .. } => Format::Dense,
            ArchiveLayout::Coo { .. } => Format::Coo,
            ArchiveLayout::Csx {
                axis: CompressedAxis::Row,
                ..
            } => Format::Csr,
            ArchiveLayout::Csx { .. } => Format::Csc,
            ArchiveLayout::Csf { .. } => Format::Csf,
            ArchiveLayout::Gcs { .. } => Format::Gcs,
            ArchiveLayout::Dm { .. } => Format::Dm,
            ArchiveLayout::Level { .. } => Format::Level,
        }
    }

    /// The layout of the rows: the storage's for DM, else this one.
    ///
    /// ```
    /// use arrow_sparse::archive::TensorSpec;
    /// use arrow_sparse::{AnyTensor, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let spec = TensorSpec::of(&AnyTensor::from(dm).into())?;
    /// assert_eq!(spec.layout.format(), Format::Dm);
    /// assert_eq!(spec.layout.rows().format(), Format::Csr); // the rows are the CSR storage's
    /// let plain = TensorSpec::of(&AnyTensor::from(coo).into())?.layout;
    /// assert_eq!(plain.rows(), &plain);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn rows(&self) -> &ArchiveLayout {
        match self {
            ArchiveLayout::Dm { storage, .. } => storage,
            other => other,
        }
    }

    fn rows_mut(&mut self) -> &mut ArchiveLayout {
        match self {
            ArchiveLayout::Dm { storage, .. } => storage,
            other => other,
        }
    }
}

/// The DM levels of an archived DM tensor, outermost first: the JSON map objects
/// of `format/SPEC.md` 8.3 (`kind` `dm`, with their views), as the IPC extension
/// metadata writes them.
///
/// ```
/// use arrow_sparse::archive::DmChain;
/// use arrow_sparse::{AnyDm, AnyTensor, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 2], 3.0)])?;
/// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
/// let t = dm.transpose(0, 1)?;
/// let (chain, storage) = DmChain::of(&t)?;
/// assert_eq!((chain.len(), storage.format()), (1, Format::Csr));
/// assert_eq!(chain.wrap(storage, 1)?, AnyTensor::Dm(t)); // the same DM tensor again
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmChain {
    maps: Vec<serde_json::Value>,
}

impl DmChain {
    /// The DM levels of `dm` and the tensor below them (plain or GCS), whose
    /// entries are an archive's rows.
    ///
    /// ```
    /// use arrow_sparse::archive::DmChain;
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let (chain, storage) = DmChain::of(&dm.transpose(0, 1)?)?;
    /// assert_eq!(chain.len(), 1);
    /// // the storage is the untransposed CSR matrix, with the tensor's two entries
    /// assert_eq!((storage.format(), storage.shape(), storage.nnz()), (Format::Csr, &[2, 3][..], 2));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn of(dm: &AnyDm) -> Result<(DmChain, AnyTensor)> {
        let (maps, storage) = crate::ipc::extension::dm_chain(dm)?;
        Ok((DmChain { maps }, storage))
    }

    /// A chain from its JSON map objects (each an object with `kind` `dm`; at
    /// least one). The maps themselves are checked by [`wrap`](Self::wrap).
    pub(crate) fn from_json(maps: Vec<serde_json::Value>) -> Result<DmChain> {
        if maps.is_empty() {
            return Err(parse_err("\"dm\" needs at least one map in \"maps\""));
        }
        if let Some(i) = maps
            .iter()
            .position(|m| m.get("kind").and_then(|k| k.as_str()) != Some("dm"))
        {
            return Err(parse_err(format!(
                "dm map {i} must be an object with \"kind\": \"dm\" (GCS storage is the archive's rows, not a map)"
            )));
        }
        Ok(DmChain { maps })
    }

    /// Number of DM levels.
    ///
    /// ```
    /// use arrow_sparse::archive::DmChain;
    /// use arrow_sparse::{AnyDm, AnyTensor, CooTensor, DmTensor, Format, IndexType, TensorOptions, dims::DimMap};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 2], 3.0)])?;
    /// let inner: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert_eq!(DmChain::of(&inner)?.0.len(), 1);
    /// // a DM level over a DM level: shape (3, 2) mapped onto the (2, 3) tensor below
    /// let outer = AnyDm::try_new(DimMap::try_new(vec![3, 2], vec![1, 0], vec![1])?, AnyTensor::Dm(inner), &TensorOptions::default())?;
    /// assert_eq!(DmChain::of(&outer)?.0.len(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.maps.len()
    }

    /// Whether the chain has no level (never, for a chain read or built here).
    ///
    /// ```
    /// use arrow_sparse::archive::DmChain;
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Coo, IndexType::Int64)?.into();
    /// let (chain, _storage) = DmChain::of(&dm)?;
    /// assert!(!chain.is_empty());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }

    /// The maps as a JSON array (compact).
    ///
    /// ```
    /// use arrow_sparse::archive::DmChain;
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let (chain, _storage) = DmChain::of(&dm.select(0, 1)?)?;
    /// let maps: serde_json::Value = serde_json::from_str(&chain.to_json()).unwrap();
    /// let expected = serde_json::json!([{
    ///     "kind": "dm", "shape": [2, 3], "dimensions": [0, 1], "partitioning": [1],
    ///     "dim_names": [""], "views": [{"op": "select", "dim": 0, "index": 1}],
    /// }]);
    /// assert_eq!(maps, expected);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::Value::Array(self.maps.clone()).to_string()
    }

    /// Wrap `storage` in the DM levels, checking every map and view against the
    /// level below and refusing broadcasts that repeat a stored entry more than
    /// `max_broadcast` times.
    ///
    /// ```
    /// use arrow_sparse::archive::DmChain;
    /// use arrow_sparse::{AnyDm, AnyTensor, CooTensor, DmTensor, Error, Format, IndexType, dims::DimMap};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let b = dm.broadcast(&[4, 3])?; // the two rows repeated twice
    /// let (chain, storage) = DmChain::of(&b)?;
    /// let back = chain.wrap(storage.clone(), 2)?;
    /// assert_eq!((back.get::<f64>(&[3, 2])?, &back), (Some(3.0), &AnyTensor::Dm(b)));
    /// // each stored entry appears twice: a limit of 1 refuses the chain
    /// assert!(matches!(chain.wrap(storage, 1), Err(Error::Parse { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn wrap(&self, storage: AnyTensor, max_broadcast: u64) -> Result<AnyTensor> {
        self.wrap_within(storage, max_broadcast, u64::MAX)
    }

    /// [`wrap`](Self::wrap), also refusing views whose logical entries take more
    /// than `budget` bytes.
    pub(crate) fn wrap_within(
        &self,
        storage: AnyTensor,
        max_broadcast: u64,
        budget: u64,
    ) -> Result<AnyTensor> {
        crate::ipc::extension::raise_levels(&self.maps, storage, max_broadcast, budget)
    }
}

/// What an archive holds: shape, dimension names, value type, storage format and
/// the custom metadata of the tensor's IPC message.
///
/// ```
/// use arrow_sparse::archive::TensorSpec;
/// use arrow_sparse::{ipc::TensorMessage, CooTensor, Format, ValueType};
/// let coo = CooTensor::<f32, i32>::from_entries(vec![4, 5], &[(vec![1, 2], 1.0), (vec![3, 0], 2.0)])?
///     .with_dim_names(vec!["row".into(), "col".into()])?;
/// let message = TensorMessage { tensor: coo.into(), custom_metadata: vec![("source".into(), "doc".into())] };
/// let spec = TensorSpec::of(&message)?;
/// assert_eq!((spec.shape.as_slice(), spec.value_type, spec.format()), (&[4, 5][..], ValueType::Float32, Format::Coo));
/// assert_eq!(spec.dim_names, ["row", "col"]);
/// assert_eq!(spec.custom_metadata, message.custom_metadata);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    /// Extents.
    pub shape: Vec<usize>,
    /// One name per dimension (`""` where unnamed), or empty for none.
    pub dim_names: Vec<String>,
    /// Value type.
    pub value_type: ValueType,
    /// Storage format and parameters.
    pub layout: ArchiveLayout,
    /// The IPC Message's custom metadata, in order.
    pub custom_metadata: Vec<(String, String)>,
}

impl TensorSpec {
    /// The spec that restores `message` exactly.
    ///
    /// A dense tensor whose strides are not a packed layout of its shape (gaps,
    /// broadcast, a negative stride) is declared row-major: it is archived as its
    /// row-major copy, as the IPC writer sends it. A packed layout is kept, also
    /// for a view at an offset into a longer buffer.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, TensorSpec};
    /// use arrow_sparse::{AnyTensor, CooTensor, CoordLayout, DenseTensor, IndexType};
    /// let coo = CooTensor::<f64, i16>::from_entries(vec![3, 4], &[(vec![2, 3], -1.0), (vec![0, 1], 2.5)])?;
    /// let spec = TensorSpec::of(&AnyTensor::from(coo).into())?;
    /// let expected = ArchiveLayout::Coo { index_type: IndexType::Int16, coord_layout: CoordLayout::RowMajor, canonical: Some(false) };
    /// assert_eq!(spec.layout, expected);
    /// // a packed column-major dense tensor keeps its strides
    /// let cm = DenseTensor::<i32>::try_new_strided(vec![2, 3], vec![1, 2], vec![1, 4, 2, 5, 3, 6].into())?;
    /// assert_eq!(TensorSpec::of(&AnyTensor::from(cm).into())?.layout, ArchiveLayout::Dense { strides: vec![1, 2] });
    /// // a broadcast (stride 0) is declared row-major: archived as its row-major copy
    /// let b = DenseTensor::<i32>::try_new_strided(vec![2, 3], vec![1, 0], vec![7, 8].into())?;
    /// assert_eq!(TensorSpec::of(&AnyTensor::from(b).into())?.layout, ArchiveLayout::Dense { strides: vec![3, 1] });
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn of(message: &TensorMessage) -> Result<TensorSpec> {
        let (rows, chain) = match &message.tensor {
            AnyTensor::Dm(d) => {
                let (chain, storage) = DmChain::of(d)?;
                (storage, Some(chain))
            }
            t => (t.clone(), None),
        };
        let mut layout = rows_layout_of(&rows)?;
        if let Some(chain) = chain {
            layout = ArchiveLayout::Dm {
                storage: Box::new(layout),
                chain,
            };
        }
        let spec = TensorSpec {
            shape: rows.shape().to_vec(),
            dim_names: rows.dim_names().to_vec(),
            value_type: rows.value_type(),
            layout,
            custom_metadata: message.custom_metadata.clone(),
        };
        spec.check()?;
        Ok(spec)
    }

    /// A COO spec with unnamed dimensions, row-major coordinates and a computed
    /// canonical flag: the usual target of chunked writing.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, TensorSpec};
    /// use arrow_sparse::{CoordLayout, IndexType, ValueType};
    /// let spec = TensorSpec::coo(vec![1000, 10], ValueType::Float32, IndexType::Int32);
    /// let expected = ArchiveLayout::Coo { index_type: IndexType::Int32, coord_layout: CoordLayout::RowMajor, canonical: None };
    /// assert_eq!(spec.layout, expected);
    /// assert!(spec.dim_names.is_empty() && spec.custom_metadata.is_empty());
    /// assert_eq!(spec.column_names(), ["dim_0", "dim_1"]);
    /// ```
    pub fn coo(shape: Vec<usize>, value_type: ValueType, index_type: IndexType) -> TensorSpec {
        TensorSpec {
            shape,
            dim_names: Vec::new(),
            value_type,
            layout: ArchiveLayout::Coo {
                index_type,
                coord_layout: CoordLayout::RowMajor,
                canonical: None,
            },
            custom_metadata: Vec::new(),
        }
    }

    /// The same spec with another layout.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, TensorSpec};
    /// use arrow_sparse::{CompressedAxis, Format, IndexType, ValueType};
    /// let csr = ArchiveLayout::Csx { axis: CompressedAxis::Row, index_type: IndexType::Int32, indptr_type: IndexType::Int64 };
    /// let spec = TensorSpec::coo(vec![3, 4], ValueType::Float64, IndexType::Int32).with_layout(csr);
    /// assert_eq!((spec.format(), spec.indptr_type()), (Format::Csr, Some(IndexType::Int64)));
    /// assert_eq!((spec.shape.as_slice(), spec.value_type), (&[3, 4][..], ValueType::Float64)); // the rest is kept
    /// ```
    pub fn with_layout(mut self, layout: ArchiveLayout) -> TensorSpec {
        self.layout = layout;
        self
    }

    /// The same spec with dimension names (one per dimension).
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveWriter, TensorSpec, ArchiveWriteOptions};
    /// use arrow_sparse::{IndexType, ValueType};
    /// let spec = TensorSpec::coo(vec![3, 4], ValueType::Float64, IndexType::Int32);
    /// let named = spec.clone().with_dim_names(vec!["row".into(), "col".into()]);
    /// assert_eq!(named.column_names(), ["row", "col"]);
    /// // one name per dimension, checked when an archive is created
    /// let dir = tempfile::tempdir()?;
    /// let bad = spec.with_dim_names(vec!["row".into()]);
    /// assert!(ArchiveWriter::create(&dir.path().join("t.parquet"), bad, &ArchiveWriteOptions::default()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_dim_names(mut self, names: Vec<String>) -> TensorSpec {
        self.dim_names = names;
        self
    }

    /// The format restored (`gcs` / `dm` for GCS / DM tensors).
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, TensorSpec};
    /// use arrow_sparse::{dims::DimMap, AnyTensor, CooTensor, DmTensor, Format, IndexType, ValueType};
    /// let spec = TensorSpec::coo(vec![2, 3], ValueType::Int16, IndexType::Int64);
    /// assert_eq!(spec.format(), Format::Coo);
    /// assert_eq!(spec.with_layout(ArchiveLayout::Dense { strides: vec![3, 1] }).format(), Format::Dense);
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// assert_eq!(TensorSpec::of(&AnyTensor::from(dm).into())?.format(), Format::Dm);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn format(&self) -> Format {
        self.layout.format()
    }

    /// The type of the coordinates / indices buffers (`None` for dense; for DM,
    /// the storage's).
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, TensorSpec};
    /// use arrow_sparse::{dims::DimMap, AnyTensor, CooTensor, DmTensor, Format, IndexType, ValueType};
    /// let spec = TensorSpec::coo(vec![2, 3], ValueType::Int16, IndexType::Int64);
    /// assert_eq!(spec.index_type(), Some(IndexType::Int64));
    /// assert_eq!(spec.with_layout(ArchiveLayout::Dense { strides: vec![3, 1] }).index_type(), None);
    /// // DM: the index type of the storage (here CSR with int64 indices)
    /// let coo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// assert_eq!(TensorSpec::of(&AnyTensor::from(dm).into())?.index_type(), Some(IndexType::Int64));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_type(&self) -> Option<IndexType> {
        match self.layout.rows() {
            ArchiveLayout::Coo { index_type, .. }
            | ArchiveLayout::Csx { index_type, .. }
            | ArchiveLayout::Csf { index_type, .. }
            | ArchiveLayout::Level { index_type, .. }
            | ArchiveLayout::Gcs { index_type, .. } => Some(*index_type),
            _ => None,
        }
    }

    /// The type of the indptr buffers (CSX, CSF and GCS; for DM, the storage's).
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, TensorSpec};
    /// use arrow_sparse::{CompressedAxis, IndexType, ValueType};
    /// let spec = TensorSpec::coo(vec![3, 4], ValueType::Float64, IndexType::Int32);
    /// assert_eq!(spec.indptr_type(), None); // COO has no indptr
    /// let csc = ArchiveLayout::Csx { axis: CompressedAxis::Column, index_type: IndexType::Int32, indptr_type: IndexType::UInt16 };
    /// assert_eq!(spec.with_layout(csc).indptr_type(), Some(IndexType::UInt16));
    /// ```
    pub fn indptr_type(&self) -> Option<IndexType> {
        match self.layout.rows() {
            ArchiveLayout::Csx { indptr_type, .. }
            | ArchiveLayout::Csf { indptr_type, .. }
            | ArchiveLayout::Level { indptr_type, .. }
            | ArchiveLayout::Gcs { indptr_type, .. } => Some(*indptr_type),
            _ => None,
        }
    }

    /// The dimension map of a GCS layout (of the DM storage's, for DM), whose
    /// logical shape is the spec's shape.
    pub(crate) fn gcs_map(&self) -> Result<Option<DimMap>> {
        match self.layout.rows() {
            ArchiveLayout::Gcs {
                dimensions,
                partitioning,
                ..
            } => {
                let map =
                    DimMap::try_new(self.shape.clone(), dimensions.clone(), partitioning.clone())?;
                if map.reduced_ndim() != 2 {
                    return Err(Error::shape(
                        "GCS partitioning",
                        "one split point (2 parts)",
                        format!("{partitioning:?}"),
                    ));
                }
                Ok(Some(map))
            }
            _ => Ok(None),
        }
    }

    pub(crate) fn rows_layout_mut(&mut self) -> &mut ArchiveLayout {
        self.layout.rows_mut()
    }

    /// The names of the coordinate columns: each dimension's name, `dim_<d>` where
    /// unnamed, or `dim_<d>` for every dimension when names would collide with each
    /// other or with the `value` / `csf_level` columns.
    ///
    /// ```
    /// use arrow_sparse::archive::TensorSpec;
    /// use arrow_sparse::{IndexType, ValueType};
    /// let spec = TensorSpec::coo(vec![2, 3, 4], ValueType::Float64, IndexType::Int32);
    /// assert_eq!(spec.column_names(), ["dim_0", "dim_1", "dim_2"]);
    /// let named = spec.clone().with_dim_names(vec!["x".into(), "".into(), "z".into()]);
    /// assert_eq!(named.column_names(), ["x", "dim_1", "z"]);
    /// // a name that clashes with the value column (or with another name): dim_<d> for all
    /// let clash = spec.with_dim_names(vec!["x".into(), "value".into(), "z".into()]);
    /// assert_eq!(clash.column_names(), ["dim_0", "dim_1", "dim_2"]);
    /// ```
    pub fn column_names(&self) -> Vec<String> {
        let n = self.shape.len();
        let named: Vec<String> = (0..n)
            .map(|d| match self.dim_names.get(d) {
                Some(s) if !s.is_empty() => s.clone(),
                _ => format!("dim_{d}"),
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        let clash = named
            .iter()
            .any(|s| s == VALUE_COLUMN || s == LEVEL_COLUMN || !seen.insert(s.as_str()));
        if clash {
            (0..n).map(|d| format!("dim_{d}")).collect()
        } else {
            named
        }
    }

    /// Check the spec's internal consistency.
    pub(crate) fn check(&self) -> Result<()> {
        self.check_with(u64::MAX)
    }

    /// [`check`](Self::check), with the broadcast limit of DM views.
    pub(crate) fn check_with(&self, max_broadcast: u64) -> Result<()> {
        let n = self.shape.len();
        if n == 0 {
            return Err(Error::shape("archived tensor", "ndim >= 1", "ndim 0"));
        }
        check_shape(&self.shape, "archived tensor")?;
        if !self.dim_names.is_empty() {
            check_dim_names(&self.dim_names, n)?;
        }
        if let ArchiveLayout::Dm { storage, chain } = &self.layout {
            if matches!(**storage, ArchiveLayout::Dm { .. }) {
                return Err(Error::invariant(
                    "DM storage layout",
                    None,
                    "a DM layout inside a DM layout (the chain lists every level)",
                ));
            }
            chain.wrap(placeholder(&self.shape, self.value_type)?, max_broadcast)?;
        }
        match self.layout.rows() {
            ArchiveLayout::Gcs {
                matrix_dim_names, ..
            } => {
                self.gcs_map()?;
                if !matrix_dim_names.is_empty() {
                    check_dim_names(matrix_dim_names, 2)?;
                }
            }
            ArchiveLayout::Dense { strides } => {
                if strides.len() != n || !is_packed(&self.shape, strides) {
                    return Err(Error::invariant(
                        "dense strides",
                        None,
                        format!(
                            "{strides:?} is not a packed layout of shape {:?}",
                            self.shape
                        ),
                    ));
                }
                check_shape(&self.shape, "dense tensor")?.ok_or_else(|| {
                    Error::overflow("dense element count", format!("{:?}", self.shape), "usize")
                })?;
            }
            ArchiveLayout::Coo { .. } => {}
            ArchiveLayout::Csx { .. } => {
                if n != 2 {
                    return Err(Error::shape(
                        "CSR/CSC matrix",
                        "2 dimensions",
                        format!("{n} dimensions"),
                    ));
                }
            }
            ArchiveLayout::Csf { axis_order, .. } => {
                if n < 1 {
                    return Err(Error::shape("CSF tensor", "ndim >= 1", format!("ndim {n}")));
                }
                check_permutation("axis_order", axis_order, n)?;
            }
            ArchiveLayout::Level { format, .. } => {
                if format.ndim() != n {
                    return Err(Error::shape(
                        "level tensor",
                        format!("{n} levels (one per dimension)"),
                        format!("{} levels", format.ndim()),
                    ));
                }
            }
            ArchiveLayout::Dm { .. } => {}
        }
        Ok(())
    }
}

/// The layout of a tensor that is not DM (its entries are the rows).
fn rows_layout_of(t: &AnyTensor) -> Result<ArchiveLayout> {
    Ok(match t {
        AnyTensor::Dense(d) => {
            // non-negative packed strides (at any offset, in a buffer of any
            // length: the restored tensor gets exactly its elements) are kept;
            // along an extent of 1 a stride is never used, and its sign dropped
            let strides: Option<Vec<usize>> = d
                .strides()
                .iter()
                .zip(d.shape())
                .map(|(&s, &n)| {
                    if n <= 1 {
                        Some(s.checked_abs().map_or(0, |a| a as usize))
                    } else {
                        usize::try_from(s).ok()
                    }
                })
                .collect();
            ArchiveLayout::Dense {
                strides: match strides {
                    Some(s) if is_packed(d.shape(), &s) => s,
                    _ => row_major_strides(d.shape()),
                },
            }
        }
        AnyTensor::Coo(c) => ArchiveLayout::Coo {
            index_type: c.index_type(),
            coord_layout: c.layout(),
            canonical: Some(c.is_canonical()),
        },
        AnyTensor::Csx(c) => ArchiveLayout::Csx {
            axis: c.axis(),
            index_type: c.index_type(),
            indptr_type: c.indptr_type(),
        },
        AnyTensor::Csf(c) => ArchiveLayout::Csf {
            axis_order: c.axis_order().to_vec(),
            index_type: c.index_type(),
            indptr_type: c.indptr_type(),
        },
        AnyTensor::Gcs(g) => {
            let m = g.matrix();
            ArchiveLayout::Gcs {
                dimensions: g.map().dimensions().to_vec(),
                partitioning: g.map().partitioning().to_vec(),
                axis: m.axis(),
                index_type: m.index_type(),
                indptr_type: m.indptr_type(),
                matrix_dim_names: if m.dim_names().iter().all(String::is_empty) {
                    Vec::new()
                } else {
                    m.dim_names().to_vec()
                },
            }
        }
        AnyTensor::Dm(_) => {
            return Err(Error::invariant(
                "DM storage",
                None,
                "a DM level below the chain (DmChain::of lists them all)",
            ));
        }
        AnyTensor::Level(l) => ArchiveLayout::Level {
            format: l.format().clone(),
            index_type: l.index_type(),
            indptr_type: l.indptr_type(),
        },
    })
}

/// An empty COO tensor of `shape`: the stand-in storage against which a DM chain
/// is checked before any row is read (a DM level only looks at its storage's
/// shape).
fn placeholder(shape: &[usize], value_type: ValueType) -> Result<AnyTensor> {
    let empty = arrow_buffer::Buffer::from_vec(Vec::<u8>::new());
    Ok(AnyTensor::Coo(AnyCoo::try_new(
        shape.to_vec(),
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        IndexBuffer::from_body(IndexType::Int64, &empty, 0, 0, "coords", false)?,
        ValueBuffer::from_body(value_type, &empty, 0, 0, "values", false)?,
        &TensorOptions::default(),
    )?))
}

/// Whether `strides` map the elements of `shape` one-to-one onto `0..size`
/// (row-major, column-major or any other dimension order, no gaps, no overlap).
pub(crate) fn is_packed(shape: &[usize], strides: &[usize]) -> bool {
    if shape.len() != strides.len() {
        return false;
    }
    if shape.contains(&0) {
        return true;
    }
    let mut dims: Vec<(usize, usize)> = shape
        .iter()
        .zip(strides)
        .filter(|&(&d, _)| d > 1)
        .map(|(&d, &s)| (s, d))
        .collect();
    dims.sort_unstable();
    let mut expected = 1usize;
    for (s, d) in dims {
        if s != expected {
            return false;
        }
        match expected.checked_mul(d) {
            Some(e) => expected = e,
            None => return false,
        }
    }
    true
}

/// Packed element strides for `shape` that keep the dimension order of
/// `like` (dimensions sorted by their stride in `like`, ties by position).
pub(crate) fn packed_strides_like(shape: &[usize], like: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..shape.len()).collect();
    order.sort_by_key(|&d| (like.get(d).copied().unwrap_or(0), std::cmp::Reverse(d)));
    let mut strides = vec![1usize; shape.len()];
    let mut acc = 1usize;
    for d in order {
        strides[d] = acc;
        acc = acc.saturating_mul(shape[d].max(1));
    }
    strides
}

/// One row group as recorded in the JSON.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct RowGroupJson {
    pub rows: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crc32: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct CooJson {
    canonical: bool,
    #[serde(default = "row_major")]
    layout: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct CsfJson {
    axis_order: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    level_column: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct LevelsJson {
    levels: Vec<String>,
    axis_order: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    level_column: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct DenseJson {
    strides: Vec<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct GcsJson {
    dimensions: Vec<u64>,
    partitioning: Vec<u64>,
    compressed_axis: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    matrix_dim_names: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct DmJson {
    storage: String,
    maps: Vec<serde_json::Value>,
}

fn row_major() -> String {
    "row_major".into()
}
fn value_column() -> String {
    VALUE_COLUMN.into()
}

/// The JSON document, field order = output order.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Json {
    version: u64,
    format: String,
    shape: Vec<u64>,
    #[serde(default)]
    dim_names: Vec<String>,
    value_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    index_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    indptr_type: Option<String>,
    columns: Vec<String>,
    #[serde(default = "value_column")]
    value_column: String,
    rows: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coo: Option<CooJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    csf: Option<CsfJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dense: Option<DenseJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gcs: Option<GcsJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dm: Option<DmJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    levels: Option<LevelsJson>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    custom_metadata: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    row_groups: Option<Vec<RowGroupJson>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    writer: Option<String>,
}

/// Everything the JSON says about an archive.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Archive {
    /// The tensor (canonical flag resolved for COO).
    pub spec: TensorSpec,
    /// Coordinate column names, by dimension.
    pub columns: Vec<String>,
    /// Value column name.
    pub value_column: String,
    /// CSF node-level column, when present.
    pub level_column: Option<String>,
    /// Total number of rows.
    pub rows: usize,
    /// Rows and CRC-32 per row group, when recorded.
    pub row_groups: Option<Vec<RowGroupJson>>,
}

fn parse_err(detail: impl Into<String>) -> Error {
    Error::Parse {
        what: format!("{METADATA_KEY} Parquet metadata"),
        detail: detail.into(),
    }
}

fn to_usize(x: u64, what: &str) -> Result<usize> {
    usize::try_from(x).map_err(|_| Error::overflow(what, x.to_string(), "usize"))
}

/// The layout of the rows for `format` (not `dm`), with the CSF level column.
fn rows_layout(
    format: &str,
    json: &Json,
    shape: &[usize],
) -> Result<(ArchiveLayout, Option<String>)> {
    let index_type = |field: &Option<String>, name: &str| -> Result<IndexType> {
        field
            .as_deref()
            .ok_or_else(|| parse_err(format!("format {format} needs \"{name}\"")))?
            .parse()
    };
    let usizes = |xs: &[u64], what: &str| -> Result<Vec<usize>> {
        xs.iter().map(|&x| to_usize(x, what)).collect()
    };
    let mut level_column = None;
    let layout = match format {
        "dense" => ArchiveLayout::Dense {
            strides: match &json.dense {
                Some(d) => usizes(&d.strides, "dense strides")?,
                None => row_major_strides(shape),
            },
        },
        "coo" => {
            let coo = json.coo.clone().unwrap_or(CooJson {
                canonical: false,
                layout: row_major(),
            });
            ArchiveLayout::Coo {
                index_type: index_type(&json.index_type, "index_type")?,
                coord_layout: match coo.layout.as_str() {
                    "row_major" => CoordLayout::RowMajor,
                    "column_major" => CoordLayout::ColumnMajor,
                    other => return Err(parse_err(format!("unknown COO layout {other:?}"))),
                },
                canonical: Some(coo.canonical),
            }
        }
        "csr" | "csc" => ArchiveLayout::Csx {
            axis: if format == "csr" {
                CompressedAxis::Row
            } else {
                CompressedAxis::Column
            },
            index_type: index_type(&json.index_type, "index_type")?,
            indptr_type: index_type(&json.indptr_type, "indptr_type")?,
        },
        "csf" => {
            let csf = json
                .csf
                .as_ref()
                .ok_or_else(|| parse_err("format csf needs \"csf\": {\"axis_order\": [..]}"))?;
            level_column = csf.level_column.clone();
            ArchiveLayout::Csf {
                axis_order: usizes(&csf.axis_order, "axis_order")?,
                index_type: index_type(&json.index_type, "index_type")?,
                indptr_type: index_type(&json.indptr_type, "indptr_type")?,
            }
        }
        "gcs" => {
            let gcs = json.gcs.as_ref().ok_or_else(|| {
                parse_err("format gcs needs \"gcs\": {\"dimensions\": [..], \"partitioning\": [..], \"compressed_axis\": ..}")
            })?;
            ArchiveLayout::Gcs {
                dimensions: usizes(&gcs.dimensions, "gcs dimensions")?,
                partitioning: usizes(&gcs.partitioning, "gcs partitioning")?,
                axis: match gcs.compressed_axis.as_str() {
                    "row" => CompressedAxis::Row,
                    "column" => CompressedAxis::Column,
                    other => {
                        return Err(parse_err(format!(
                            "unknown GCS compressed_axis {other:?} (row or column)"
                        )));
                    }
                },
                index_type: index_type(&json.index_type, "index_type")?,
                indptr_type: index_type(&json.indptr_type, "indptr_type")?,
                matrix_dim_names: gcs.matrix_dim_names.clone(),
            }
        }
        "level" => {
            let levels = json.levels.as_ref().ok_or_else(|| {
                parse_err("format level needs \"levels\": {\"levels\": [..], \"axis_order\": [..]}")
            })?;
            if levels.levels.len() > MAX_LEVELS {
                return Err(parse_err(format!(
                    "{} levels (at most {MAX_LEVELS})",
                    levels.levels.len()
                )));
            }
            level_column = levels.level_column.clone();
            let types = levels
                .levels
                .iter()
                .map(|s| s.parse::<LevelType>())
                .collect::<Result<Vec<_>>>()?;
            ArchiveLayout::Level {
                format: LevelFormat::try_new(types, usizes(&levels.axis_order, "axis_order")?)?,
                index_type: index_type(&json.index_type, "index_type")?,
                indptr_type: index_type(&json.indptr_type, "indptr_type")?,
            }
        }
        other => return Err(parse_err(format!("unknown format {other:?}"))),
    };
    Ok((layout, level_column))
}

impl Archive {
    /// The JSON text.
    pub(crate) fn to_json(&self) -> Result<String> {
        let spec = &self.spec;
        let n = spec.shape.len();
        let names = if spec.dim_names.is_empty() {
            vec![String::new(); n]
        } else {
            spec.dim_names.clone()
        };
        let u64s = |xs: &[usize]| xs.iter().map(|&x| x as u64).collect::<Vec<u64>>();
        let mut json = Json {
            version: METADATA_VERSION,
            format: spec.format().name().to_string(),
            shape: u64s(&spec.shape),
            dim_names: names,
            value_type: spec.value_type.name().to_string(),
            index_type: spec.index_type().map(|t| t.name().to_string()),
            indptr_type: spec.indptr_type().map(|t| t.name().to_string()),
            columns: self.columns.clone(),
            value_column: self.value_column.clone(),
            rows: self.rows as u64,
            coo: None,
            csf: None,
            dense: None,
            gcs: None,
            dm: None,
            levels: None,
            custom_metadata: spec.custom_metadata.clone(),
            row_groups: self.row_groups.clone(),
            writer: Some(format!("arrow-sparse {}", env!("CARGO_PKG_VERSION"))),
        };
        if let ArchiveLayout::Dm { storage, chain } = &spec.layout {
            json.dm = Some(DmJson {
                storage: storage.format().name().to_string(),
                maps: chain.maps.clone(),
            });
        }
        match spec.layout.rows() {
            ArchiveLayout::Dense { strides } => {
                json.dense = Some(DenseJson {
                    strides: u64s(strides),
                })
            }
            ArchiveLayout::Coo {
                coord_layout,
                canonical,
                ..
            } => {
                json.coo = Some(CooJson {
                    canonical: canonical.unwrap_or(false),
                    layout: match coord_layout {
                        CoordLayout::RowMajor => "row_major".into(),
                        CoordLayout::ColumnMajor => "column_major".into(),
                    },
                })
            }
            ArchiveLayout::Csx { .. } | ArchiveLayout::Dm { .. } => {}
            ArchiveLayout::Csf { axis_order, .. } => {
                json.csf = Some(CsfJson {
                    axis_order: u64s(axis_order),
                    level_column: self.level_column.clone(),
                })
            }
            ArchiveLayout::Level { format, .. } => {
                json.levels = Some(LevelsJson {
                    levels: format.levels().iter().map(LevelType::to_string).collect(),
                    axis_order: u64s(format.axis_order()),
                    level_column: self.level_column.clone(),
                })
            }
            ArchiveLayout::Gcs {
                dimensions,
                partitioning,
                axis,
                matrix_dim_names,
                ..
            } => {
                json.gcs = Some(GcsJson {
                    dimensions: u64s(dimensions),
                    partitioning: u64s(partitioning),
                    compressed_axis: match axis {
                        CompressedAxis::Row => "row".into(),
                        CompressedAxis::Column => "column".into(),
                    },
                    matrix_dim_names: matrix_dim_names.clone(),
                })
            }
        }
        serde_json::to_string(&json).map_err(|e| parse_err(e.to_string()))
    }

    /// Parse and check the JSON text.
    pub(crate) fn parse(text: &str) -> Result<Archive> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| parse_err(e.to_string()))?;
        let version = value
            .get("version")
            .ok_or_else(|| parse_err("no \"version\" field"))?;
        if version.as_u64() != Some(METADATA_VERSION) {
            return Err(Error::Type {
                what: format!("{METADATA_KEY} metadata version"),
                expected: METADATA_VERSION.to_string(),
                found: version.to_string(),
            });
        }
        let json: Json = serde_json::from_value(value).map_err(|e| parse_err(e.to_string()))?;
        let shape = json
            .shape
            .iter()
            .map(|&x| to_usize(x, "shape"))
            .collect::<Result<Vec<_>>>()?;
        let value_type: ValueType = json.value_type.parse()?;
        let (layout, level_column) = match json.format.as_str() {
            "dm" => {
                let dm = json.dm.as_ref().ok_or_else(|| {
                    parse_err("format dm needs \"dm\": {\"storage\": .., \"maps\": [..]}")
                })?;
                if dm.storage == "dm" {
                    return Err(parse_err(
                        "the storage of a dm archive cannot be dm (\"maps\" lists every level)",
                    ));
                }
                let (storage, level_column) = rows_layout(&dm.storage, &json, &shape)?;
                let layout = ArchiveLayout::Dm {
                    storage: Box::new(storage),
                    chain: DmChain::from_json(dm.maps.clone())?,
                };
                (layout, level_column)
            }
            format => rows_layout(format, &json, &shape)?,
        };
        let spec = TensorSpec {
            shape,
            dim_names: json.dim_names,
            value_type,
            layout,
            custom_metadata: json.custom_metadata,
        };
        spec.check()?;
        let n = spec.shape.len();
        if json.columns.len() != n {
            return Err(Error::shape(
                "archive columns",
                format!("{n} coordinate columns (one per dimension)"),
                format!("{}", json.columns.len()),
            ));
        }
        let mut all: Vec<&str> = json.columns.iter().map(String::as_str).collect();
        all.push(&json.value_column);
        all.extend(level_column.as_deref());
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = all.iter().find(|c| !seen.insert(**c)) {
            return Err(parse_err(format!("column {dup:?} is named twice")));
        }
        let rows = to_usize(json.rows, "rows")?;
        if let Some(groups) = &json.row_groups {
            let total = groups
                .iter()
                .try_fold(0u64, |acc, g| acc.checked_add(g.rows));
            if total != Some(json.rows) {
                return Err(Error::invariant(
                    "archive row groups",
                    None,
                    format!(
                        "row group sizes add up to {total:?}, \"rows\" says {}",
                        json.rows
                    ),
                ));
            }
        }
        Ok(Archive {
            spec,
            columns: json.columns,
            value_column: json.value_column,
            level_column,
            rows,
            row_groups: json.row_groups,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Archive {
        Archive {
            spec: TensorSpec {
                shape: vec![3, 4, 5],
                dim_names: vec!["a".into(), String::new(), "c".into()],
                value_type: ValueType::Float32,
                layout: ArchiveLayout::Csf {
                    axis_order: vec![2, 0, 1],
                    index_type: IndexType::Int16,
                    indptr_type: IndexType::Int32,
                },
                custom_metadata: vec![("k".into(), "v".into())],
            },
            columns: vec!["a".into(), "dim_1".into(), "c".into()],
            value_column: VALUE_COLUMN.into(),
            level_column: Some(LEVEL_COLUMN.into()),
            rows: 7,
            row_groups: Some(vec![RowGroupJson {
                rows: 7,
                crc32: Some(42),
            }]),
        }
    }

    #[test]
    fn json_round_trips_and_starts_with_version_and_format() {
        let a = sample();
        let text = a.to_json().unwrap();
        assert!(
            text.starts_with(r#"{"version":1,"format":"csf","shape":[3,4,5]"#),
            "{text}"
        );
        assert_eq!(Archive::parse(&text).unwrap(), a);
        assert_eq!(a.spec.column_names(), a.columns);
    }

    #[test]
    fn versions_unknown_fields_and_reserved_formats() {
        let text = sample().to_json().unwrap();
        let v2 = text.replacen("\"version\":1", "\"version\":2", 1);
        assert!(matches!(Archive::parse(&v2), Err(Error::Type { .. })));
        let extra = text.replacen("\"rows\":7", "\"rows\":7,\"future\":{\"x\":[1]}", 1);
        assert_eq!(Archive::parse(&extra).unwrap(), sample());
        // gcs / dm need their parameters
        for format in ["gcs", "dm"] {
            let t = text.replacen("\"format\":\"csf\"", &format!("\"format\":\"{format}\""), 1);
            assert!(
                matches!(Archive::parse(&t), Err(Error::Parse { .. })),
                "{t}"
            );
        }
        for bad in [
            "",
            "[]",
            "{\"version\":1}",
            &text.replacen("\"rows\":7", "\"rows\":8", 1),
            &text.replacen("[2,0,1]", "[2,0,0]", 1),
            &text.replacen("\"dim_1\"", "\"value\"", 1),
            &text.replacen("\"int16\"", "\"int128\"", 1),
        ] {
            assert!(Archive::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn gcs_and_dm_json_round_trips() {
        let mut a = sample();
        a.level_column = None;
        a.spec.layout = ArchiveLayout::Gcs {
            dimensions: vec![2, 0, 1],
            partitioning: vec![1],
            axis: CompressedAxis::Column,
            index_type: IndexType::Int32,
            indptr_type: IndexType::Int64,
            matrix_dim_names: vec!["r".into(), String::new()],
        };
        let text = a.to_json().unwrap();
        assert!(
            text.contains(r#""gcs":{"dimensions":[2,0,1],"partitioning":[1],"compressed_axis":"column","matrix_dim_names":["r",""]}"#),
            "{text}"
        );
        assert_eq!(Archive::parse(&text).unwrap(), a);
        // a DM level (with a reshape view) over the GCS rows
        let maps = vec![
            serde_json::json!({"kind": "dm", "shape": [3, 20], "dim_names": [""],
            "dimensions": [0, 1], "partitioning": [1], "views": [{"op": "reshape", "shape": [60]}]}),
        ];
        let mut d = a.clone();
        d.spec.shape = vec![3, 4, 5];
        d.spec.layout = ArchiveLayout::Dm {
            storage: Box::new(a.spec.layout.clone()),
            chain: DmChain::from_json(maps.clone()).unwrap(),
        };
        // (3, 4, 5) is not (3, 20): the chain is checked against the rows' shape
        assert!(matches!(
            d.to_json().map(|t| Archive::parse(&t)),
            Ok(Err(Error::Shape { .. }))
        ));
        let mut maps = maps;
        maps[0]["shape"] = serde_json::json!([3, 4, 5]);
        maps[0]["dimensions"] = serde_json::json!([0, 1, 2]);
        maps[0]["partitioning"] = serde_json::json!([1, 2]);
        d.spec.layout = ArchiveLayout::Dm {
            storage: Box::new(a.spec.layout.clone()),
            chain: DmChain::from_json(maps).unwrap(),
        };
        let text = d.to_json().unwrap();
        assert!(
            text.contains(r#""format":"dm""#)
                && text.contains(r#""dm":{"storage":"gcs","maps":[{"#),
            "{text}"
        );
        let back = Archive::parse(&text).unwrap();
        assert_eq!(back, d);
        assert_eq!(back.spec.format(), Format::Dm);
        assert_eq!(back.spec.index_type(), Some(IndexType::Int32));
        assert!(DmChain::from_json(vec![]).is_err());
        assert!(DmChain::from_json(vec![serde_json::json!({"kind": "gcs"})]).is_err());
    }

    #[test]
    fn column_names_fall_back_on_clashes() {
        let mut s = sample().spec;
        s.dim_names = vec!["x".into(), "value".into(), "y".into()];
        assert_eq!(s.column_names(), ["dim_0", "dim_1", "dim_2"]);
        s.dim_names = vec!["dim_1".into(), String::new(), "y".into()];
        assert_eq!(s.column_names(), ["dim_0", "dim_1", "dim_2"]);
        s.dim_names = vec![];
        assert_eq!(s.column_names(), ["dim_0", "dim_1", "dim_2"]);
    }

    #[test]
    fn packed_layouts() {
        assert!(is_packed(&[2, 3], &[3, 1]));
        assert!(is_packed(&[2, 3], &[1, 2]));
        assert!(is_packed(&[2, 1, 3], &[3, 99, 1]));
        assert!(!is_packed(&[2, 3], &[4, 1]));
        assert!(!is_packed(&[2, 3], &[0, 1]));
        assert!(is_packed(&[0, 3], &[7, 7]));
        assert_eq!(packed_strides_like(&[2, 3, 4], &[1, 2, 6]), [1, 2, 6]);
        assert_eq!(packed_strides_like(&[2, 3, 4], &[12, 4, 1]), [12, 4, 1]);
    }
}

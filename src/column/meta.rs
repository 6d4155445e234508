//! [`SparseTensorType`]: the constants of a sparse tensor column, their JSON form in
//! `ARROW:extension:metadata`, and the storage type they imply.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields};
use serde_json::{Map, Value as J, json};

use crate::dims::DimMap;
use crate::error::{Error, Result};
use crate::ipc::extension::{EXTENSION_METADATA, EXTENSION_NAME};
use crate::tensor::level::{LevelFormat, Plain};
use crate::tensor::validate::check_permutation;
use crate::tensor::{AnyTensor, CompressedAxis, Format};
use crate::types::{IndexType, ValueType};

/// Extension name of COO columns.
///
/// ```
/// use arrow_sparse::column::{SparseTensorType, COO_NAME};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// assert_eq!(SparseTensorType::of(&t)?.extension_name(), COO_NAME);
/// assert_eq!(COO_NAME, "arrow_sparse.coo");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const COO_NAME: &str = "arrow_sparse.coo";
/// Extension name of CSR columns.
///
/// ```
/// use arrow_sparse::column::{SparseTensorType, CSR_NAME};
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?;
/// let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
/// let field = SparseTensorType::of(&csr)?.field("m");
/// assert_eq!(field.extension_type_name(), Some(CSR_NAME));
/// assert_eq!(CSR_NAME, "arrow_sparse.csr");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const CSR_NAME: &str = "arrow_sparse.csr";
/// Extension name of CSC columns.
///
/// ```
/// use arrow_sparse::column::{SparseTensorType, CSC_NAME};
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?;
/// let csc: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Column)?.into();
/// assert_eq!(SparseTensorType::of(&csc)?.extension_name(), CSC_NAME);
/// assert_eq!(CSC_NAME, "arrow_sparse.csc");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const CSC_NAME: &str = "arrow_sparse.csc";
/// Extension name of CSF columns.
///
/// ```
/// use arrow_sparse::column::{SparseTensorType, CSF_NAME};
/// use arrow_sparse::{AnyTensor, Convert, CooTensor};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 3.0)])?;
/// let csf: AnyTensor = coo.to_csf::<i64, i64>(&[0, 1, 2])?.into();
/// assert_eq!(SparseTensorType::of(&csf)?.extension_name(), CSF_NAME);
/// assert_eq!(CSF_NAME, "arrow_sparse.csf");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const CSF_NAME: &str = "arrow_sparse.csf";
/// Extension name of GCS columns: the very name (one item, re-exported) a GCS
/// tensor carries in an IPC message, [`crate::ipc::extension::GCS_NAME`].
///
/// ```
/// use arrow_sparse::column::{SparseTensorType, GCS_NAME};
/// use arrow_sparse::{dims::DimMap, AnyTensor, CompressedAxis, CooTensor, IndexType};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 5.0)])?.into();
/// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2])?;
/// let gcs = t.to_gcs(map, CompressedAxis::Row, IndexType::Int32)?;
/// assert_eq!(SparseTensorType::of(&gcs)?.extension_name(), GCS_NAME);
/// // the same name a GCS tensor carries in an IPC message
/// assert_eq!(GCS_NAME, arrow_sparse::ipc::extension::GCS_NAME);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub use crate::ipc::extension::GCS_NAME;
/// The column metadata version (the `"version"` field of a sparse tensor column's
/// extension metadata) this crate writes and reads.
///
/// ```
/// use arrow_sparse::column::{COLUMN_METADATA_VERSION, SparseTensorType};
/// use arrow_sparse::ipc::extension::EXTENSION_METADATA;
/// use arrow_sparse::{AnyTensor, CooTensor, Error};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// let ty = SparseTensorType::of(&t)?;
/// let json: serde_json::Value = serde_json::from_str(&ty.metadata_json()).expect("valid JSON");
/// assert_eq!(json["version"], COLUMN_METADATA_VERSION);
/// // metadata of another version is refused
/// let mut field = ty.field("t");
/// let newer = ty.metadata_json().replace("\"version\":1", "\"version\":2");
/// field.metadata_mut().insert(EXTENSION_METADATA.to_string(), newer);
/// assert!(matches!(SparseTensorType::from_field(&field), Err(Error::Parse { .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const COLUMN_METADATA_VERSION: u64 = 1;

/// Renamed to [`COLUMN_METADATA_VERSION`] (the crate had two `VERSION` constants:
/// this one and the IPC extension metadata's).
#[deprecated(since = "0.2.0", note = "renamed to `column::COLUMN_METADATA_VERSION`")]
pub const VERSION: u64 = COLUMN_METADATA_VERSION;
/// Most dimensions a column may declare (bounds the children a reader expects).
const MAX_NDIM: usize = 256;

/// The format a column extension name stands for.
pub(crate) fn format_of(name: &str) -> Option<Format> {
    Some(match name {
        COO_NAME => Format::Coo,
        CSR_NAME => Format::Csr,
        CSC_NAME => Format::Csc,
        CSF_NAME => Format::Csf,
        GCS_NAME => Format::Gcs,
        _ => return None,
    })
}

/// What a child of the storage struct holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Child {
    /// `FixedSizeList<int64>[n]`, one per row.
    Fixed(usize),
    /// `List<T>` (or `LargeList<T>` when read) of a primitive type.
    List(DataType),
    /// `Boolean`, one per row.
    Bool,
}

/// The constants of a sparse tensor column: format, element types, number and
/// names of dimensions, and (when all rows share them) the CSF axis order or the
/// GCS dimension map. Stored as the JSON of `ARROW:extension:metadata`
/// (`format/SPEC.md` section 10.2).
///
/// ```
/// use arrow_sparse::column::SparseTensorType;
/// use arrow_sparse::{AnyTensor, CooTensor, Format, IndexType, ValueType};
/// let t: AnyTensor = CooTensor::<f32, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?
///     .with_dim_names(vec!["row".into(), "col".into()])?
///     .into();
/// let ty = SparseTensorType::of(&t)?;
/// assert_eq!((ty.format(), ty.ndim()), (Format::Coo, 2));
/// assert_eq!((ty.value_type(), ty.index_type()), (ValueType::Float32, IndexType::Int32));
/// assert_eq!(ty.dim_names(), ["row", "col"]);
/// // a field carries it as extension name and JSON metadata
/// assert_eq!(SparseTensorType::from_field(&ty.field("t"))?, ty);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseTensorType {
    format: Format,
    ndim: usize,
    value_type: ValueType,
    index_type: IndexType,
    indptr_type: Option<IndexType>,
    dim_names: Vec<String>,
    axis_order: Option<Vec<usize>>,
    compressed_axis: Option<CompressedAxis>,
    map: Option<(Vec<usize>, Vec<usize>)>,
    /// Level tensors stored as their nearest plain tensors: the levels and the
    /// level tensors' own coordinates and positions types.
    levels: Option<(LevelFormat, IndexType, IndexType)>,
}

fn parse_err(detail: impl Into<String>) -> Error {
    Error::Parse {
        what: "sparse tensor column metadata".into(),
        detail: detail.into(),
    }
}

fn mismatch(row: usize, what: &str, expected: String, found: String) -> Error {
    Error::Row {
        row,
        source: Box::new(Error::Type {
            what: format!("{what} of a tensor in this column"),
            expected,
            found,
        }),
    }
}

impl SparseTensorType {
    /// The type of a column holding `tensors`: format, element types, number of
    /// dimensions and dimension names of the first one (the others must agree),
    /// and the CSF axis order / GCS map when every tensor has the same (otherwise
    /// they become per-row children). Dense and DM tensors cannot be stored (use
    /// `arrow.fixed_shape_tensor` for dense data; convert DM tensors first).
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, Convert, CooTensor, Error};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0)])?;
    /// let a: AnyTensor = coo.to_csf::<i64, i64>(&[0, 1])?.into();
    /// let b: AnyTensor = coo.to_csf::<i64, i64>(&[1, 0])?.into();
    /// // a shared axis order is a column constant; differing ones become per row
    /// assert_eq!(SparseTensorType::infer([&a, &a])?.axis_order(), Some(&[0, 1][..]));
    /// assert_eq!(SparseTensorType::infer([&a, &b])?.axis_order(), None);
    /// // value types must agree: row 1 holds int32 values
    /// let c: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1)])?.to_csf::<i64, i64>(&[0, 1])?.into();
    /// assert!(matches!(SparseTensorType::infer([&a, &c]), Err(Error::Row { row: 1, .. })));
    /// assert!(matches!(SparseTensorType::infer([]), Err(Error::Unsupported(_))));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn infer<'a>(tensors: impl IntoIterator<Item = &'a AnyTensor>) -> Result<Self> {
        let mut it = tensors.into_iter();
        let first = it.next().ok_or_else(|| {
            Error::Unsupported(
                "inferring the type of an empty column (use SparseTensorArray::from_rows)".into(),
            )
        })?;
        let mut ty = Self::of(first)?;
        for (row, t) in it.enumerate() {
            if ty.axis_order.as_deref() != t.axis_order() {
                ty.axis_order = None;
            }
            if let (Some((d, p)), AnyTensor::Gcs(g)) = (&ty.map, t)
                && (d != g.map().dimensions() || p != g.map().partitioning())
            {
                ty.map = None;
            }
            ty.check(t, row + 1)?;
        }
        Ok(ty)
    }

    /// The type of a column of tensors like `tensor` (with its axis order / map as
    /// column constants).
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, Convert, CooTensor, DenseTensor, Error, Format};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?;
    /// let csf: AnyTensor = coo.to_csf::<i32, i32>(&[1, 0])?.into();
    /// let ty = SparseTensorType::of(&csf)?;
    /// assert_eq!((ty.format(), ty.axis_order()), (Format::Csf, Some(&[1, 0][..])));
    /// // dense tensors are not stored in sparse tensor columns
    /// let dense: AnyTensor = DenseTensor::<i32>::try_new(vec![2], vec![4, 5].into())?.into();
    /// assert!(matches!(SparseTensorType::of(&dense), Err(Error::Unsupported(_))));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn of(tensor: &AnyTensor) -> Result<Self> {
        if let AnyTensor::Level(l) = tensor {
            let storage = l.to_storage()?;
            if matches!(storage, AnyTensor::Dense(_)) {
                return Err(Error::Unsupported(
                    "all-dense level tensors in a sparse tensor column (their storage is dense)"
                        .into(),
                ));
            }
            let mut ty = Self::of(&storage)?;
            ty.levels = Some((l.format().clone(), l.index_type(), l.indptr_type()));
            return Ok(ty);
        }
        let format = tensor.format();
        let (index_type, indptr_type) = match tensor {
            AnyTensor::Coo(c) => (c.index_type(), None),
            AnyTensor::Csx(c) => (c.index_type(), Some(c.indptr_type())),
            AnyTensor::Csf(c) => (c.index_type(), Some(c.indptr_type())),
            AnyTensor::Gcs(g) => (g.index_type(), Some(g.matrix().indptr_type())),
            other => {
                return Err(Error::Unsupported(format!(
                    "{} tensors in a sparse tensor column (convert to coo, csr, csc, csf or gcs; dense data has arrow.fixed_shape_tensor)",
                    other.format()
                )));
            }
        };
        let (compressed_axis, map) = match tensor {
            AnyTensor::Gcs(g) => (
                Some(g.matrix().axis()),
                Some((
                    g.map().dimensions().to_vec(),
                    g.map().partitioning().to_vec(),
                )),
            ),
            _ => (None, None),
        };
        let ty = SparseTensorType {
            format,
            ndim: tensor.shape().len(),
            value_type: tensor.value_type(),
            index_type,
            indptr_type,
            dim_names: tensor.dim_names().to_vec(),
            axis_order: tensor.axis_order().map(<[usize]>::to_vec),
            compressed_axis,
            map,
            levels: None,
        };
        ty.check_ndim()?;
        Ok(ty)
    }

    /// Error unless `tensor` can be row `row` of a column of this type.
    pub(crate) fn check(&self, tensor: &AnyTensor, row: usize) -> Result<()> {
        let other = Self::of(tensor).map_err(|e| Error::Row {
            row,
            source: Box::new(e),
        })?;
        // the first field that differs, formatted only then
        let field = |what: &str, same: bool, show: &dyn Fn() -> (String, String)| {
            if same {
                return Ok(());
            }
            let (expected, found) = show();
            Err(mismatch(row, what, expected, found))
        };
        let debug =
            |a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| (format!("{a:?}"), format!("{b:?}"));
        let (s, o) = (self, &other);
        field("format", s.format == o.format, &|| {
            (s.format.to_string(), o.format.to_string())
        })?;
        field("ndim", s.ndim == o.ndim, &|| {
            (s.ndim.to_string(), o.ndim.to_string())
        })?;
        field("value type", s.value_type == o.value_type, &|| {
            (s.value_type.to_string(), o.value_type.to_string())
        })?;
        field("index type", s.index_type == o.index_type, &|| {
            (s.index_type.to_string(), o.index_type.to_string())
        })?;
        field("indptr type", s.indptr_type == o.indptr_type, &|| {
            debug(&s.indptr_type, &o.indptr_type)
        })?;
        field("dim names", s.dim_names == o.dim_names, &|| {
            debug(&s.dim_names, &o.dim_names)
        })?;
        field(
            "GCS compressed axis",
            s.compressed_axis == o.compressed_axis,
            &|| debug(&s.compressed_axis, &o.compressed_axis),
        )?;
        field(
            "CSF axis order (a column constant)",
            s.axis_order.is_none() || s.axis_order == o.axis_order,
            &|| debug(&s.axis_order, &o.axis_order),
        )?;
        field("levels (a column constant)", s.levels == o.levels, &|| {
            debug(&s.levels, &o.levels)
        })?;
        field(
            "GCS dimensions and partitioning (column constants)",
            s.map.is_none() || s.map == o.map,
            &|| debug(&s.map, &o.map),
        )?;
        Ok(())
    }

    fn check_ndim(&self) -> Result<()> {
        let ok = match self.format {
            Format::Csr | Format::Csc => self.ndim == 2,
            _ => self.ndim >= 1,
        };
        if !ok || self.ndim > MAX_NDIM {
            return Err(Error::shape(
                format!("{} column", self.extension_name()),
                format!("a number of dimensions the format allows (at most {MAX_NDIM})"),
                format!("ndim {}", self.ndim),
            ));
        }
        Ok(())
    }

    /// The storage format of every row.
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?;
    /// let csc: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Column)?.into();
    /// assert_eq!(SparseTensorType::of(&csc)?.format(), Format::Csc);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn format(&self) -> Format {
        self.format
    }
    /// The number of dimensions of every row.
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 1.0)])?.into();
    /// assert_eq!(SparseTensorType::of(&t)?.ndim(), 3);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.ndim
    }
    /// The value type.
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CooTensor, ValueType};
    /// let t: AnyTensor = CooTensor::<u16, i64>::from_entries(vec![3], &[(vec![2], 7)])?.into();
    /// assert_eq!(SparseTensorType::of(&t)?.value_type(), ValueType::UInt16);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.value_type
    }
    /// The type of coordinates / indices.
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CooTensor, IndexType};
    /// let t: AnyTensor = CooTensor::<f64, i16>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// assert_eq!(SparseTensorType::of(&t)?.index_type(), IndexType::Int16);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_type(&self) -> IndexType {
        self.index_type
    }
    /// The type of indptr (CSR, CSC, CSF, GCS).
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, IndexType};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?;
    /// let csr: AnyTensor = coo.to_csx::<i32, i64>(CompressedAxis::Row)?.into();
    /// let ty = SparseTensorType::of(&csr)?;
    /// assert_eq!((ty.index_type(), ty.indptr_type()), (IndexType::Int32, Some(IndexType::Int64)));
    /// // COO has no indptr
    /// assert_eq!(SparseTensorType::of(&coo.into())?.indptr_type(), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr_type(&self) -> Option<IndexType> {
        self.indptr_type
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?;
    /// let unnamed: AnyTensor = coo.clone().into();
    /// assert_eq!(SparseTensorType::of(&unnamed)?.dim_names(), ["", ""]);
    /// let named: AnyTensor = coo.with_dim_names(vec!["row".into(), "col".into()])?.into();
    /// assert_eq!(SparseTensorType::of(&named)?.dim_names(), ["row", "col"]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }
    /// CSF: the axis order shared by every row, `None` when it is per row.
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, Convert, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 1.0)])?;
    /// let csf: AnyTensor = coo.to_csf::<i64, i64>(&[2, 0, 1])?.into();
    /// assert_eq!(SparseTensorType::of(&csf)?.axis_order(), Some(&[2, 0, 1][..]));
    /// assert_eq!(SparseTensorType::of(&coo.into())?.axis_order(), None); // not CSF
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn axis_order(&self) -> Option<&[usize]> {
        self.axis_order.as_deref()
    }
    /// GCS: the compressed axis of the reduced matrices.
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{dims::DimMap, AnyTensor, CompressedAxis, CooTensor, IndexType};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 5.0)])?.into();
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2])?;
    /// let gcs = t.to_gcs(map, CompressedAxis::Column, IndexType::Int32)?;
    /// assert_eq!(SparseTensorType::of(&gcs)?.compressed_axis(), Some(CompressedAxis::Column));
    /// assert_eq!(SparseTensorType::of(&t)?.compressed_axis(), None); // not GCS
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn compressed_axis(&self) -> Option<CompressedAxis> {
        self.compressed_axis
    }
    /// GCS: the `(dimensions, partitioning)` shared by every row, `None` when per row.
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{dims::DimMap, AnyTensor, CompressedAxis, CooTensor, IndexType};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 5.0)])?.into();
    /// let a = t.to_gcs(DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2])?, CompressedAxis::Row, IndexType::Int32)?;
    /// let b = t.to_gcs(DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?, CompressedAxis::Row, IndexType::Int32)?;
    /// let shared = SparseTensorType::infer([&a, &a])?;
    /// assert_eq!(shared.gcs_map(), Some((&[0, 1, 2][..], &[2][..])));
    /// // different maps: each row stores its own
    /// assert_eq!(SparseTensorType::infer([&a, &b])?.gcs_map(), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn gcs_map(&self) -> Option<(&[usize], &[usize])> {
        self.map.as_ref().map(|(d, p)| (&d[..], &p[..]))
    }

    /// Level tensors: the levels of every row and the level tensors' own
    /// coordinates and positions types (the storage is their nearest plain
    /// tensors, format/SPEC.md 8.6 and 10.2).
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// use arrow_sparse::{AnyTensor, CooTensor, Format, IndexType};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[(vec![2, 1], 1.0)])?;
    /// let t: AnyTensor = LevelTensor::<f64, i32, i64>::dcsc(&coo)?.into();
    /// let ty = SparseTensorType::of(&t)?;
    /// assert_eq!(ty.format(), Format::Csf); // what any reader sees
    /// assert_eq!(ty.levels(), Some((&LevelFormat::dcsc(), IndexType::Int32, IndexType::Int64)));
    /// assert_eq!(SparseTensorType::of(&coo.into())?.levels(), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn levels(&self) -> Option<(&LevelFormat, IndexType, IndexType)> {
        self.levels.as_ref().map(|(f, i, p)| (f, *i, *p))
    }

    /// The extension name (`arrow_sparse.coo`, ...).
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?;
    /// let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
    /// assert_eq!(SparseTensorType::of(&csr)?.extension_name(), "arrow_sparse.csr");
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn extension_name(&self) -> &'static str {
        match self.format {
            Format::Coo => COO_NAME,
            Format::Csr => CSR_NAME,
            Format::Csc => CSC_NAME,
            Format::Csf => CSF_NAME,
            _ => GCS_NAME,
        }
    }

    /// The `ARROW:extension:metadata` JSON (compact, keys sorted).
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?
    ///     .with_dim_names(vec!["i".into(), "j".into()])?
    ///     .into();
    /// assert_eq!(
    ///     SparseTensorType::of(&t)?.metadata_json(),
    ///     r#"{"dim_names":["i","j"],"index_type":"int64","ndim":2,"value_type":"float64","version":1}"#
    /// );
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn metadata_json(&self) -> String {
        let mut m = Map::new();
        m.insert("version".into(), json!(COLUMN_METADATA_VERSION));
        m.insert("ndim".into(), json!(self.ndim));
        m.insert("value_type".into(), json!(self.value_type.name()));
        m.insert("index_type".into(), json!(self.index_type.name()));
        if let Some(p) = self.indptr_type {
            m.insert("indptr_type".into(), json!(p.name()));
        }
        m.insert("dim_names".into(), json!(self.dim_names));
        if let Some(order) = &self.axis_order {
            m.insert("axis_order".into(), json!(order));
        }
        if let Some(axis) = self.compressed_axis {
            let name = match axis {
                CompressedAxis::Row => "row",
                CompressedAxis::Column => "column",
            };
            m.insert("compressed_axis".into(), json!(name));
        }
        if let Some((d, p)) = &self.map {
            m.insert("dimensions".into(), json!(d));
            m.insert("partitioning".into(), json!(p));
        }
        if let Some((f, it, pt)) = &self.levels {
            m.insert(
                "levels".into(),
                crate::ipc::extension::levels_json_of(f, *it, *pt, false),
            );
        }
        J::Object(m).to_string()
    }

    /// The children of the storage struct, in the order they are written.
    pub(crate) fn children(&self) -> Vec<(String, Child)> {
        let n = self.ndim;
        let index = Child::List(index_data_type(self.index_type));
        let indptr = Child::List(index_data_type(self.indptr_type.unwrap_or(self.index_type)));
        let values = Child::List(self.value_type.data_type());
        let mut c = vec![("shape".to_string(), Child::Fixed(n))];
        match self.format {
            Format::Coo => {
                c.push(("coords".into(), index));
                c.push(("values".into(), values));
                c.push(("canonical".into(), Child::Bool));
            }
            Format::Csf => {
                c.extend((0..n - 1).map(|l| (format!("indptr_{l}"), indptr.clone())));
                c.extend((0..n).map(|l| (format!("indices_{l}"), index.clone())));
                c.push(("values".into(), values));
                if self.axis_order.is_none() {
                    c.push(("axis_order".into(), Child::Fixed(n)));
                }
            }
            _ => {
                c.push(("indptr".into(), indptr));
                c.push(("indices".into(), index));
                c.push(("values".into(), values));
                if self.format == Format::Gcs && self.map.is_none() {
                    c.push(("dimensions".into(), Child::Fixed(n)));
                    c.push(("partitioning".into(), Child::Fixed(1)));
                }
            }
        }
        c
    }

    /// The Arrow storage type: a struct of the children `format/SPEC.md` section
    /// 10.1 lists for this format (none nullable).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_schema::{DataType, Field};
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?;
    /// let csr: AnyTensor = coo.to_csx::<i32, i64>(CompressedAxis::Row)?.into();
    /// let DataType::Struct(children) = SparseTensorType::of(&csr)?.storage_type() else { unreachable!() };
    /// let names: Vec<&str> = children.iter().map(|f| f.name().as_str()).collect();
    /// assert_eq!(names, ["shape", "indptr", "indices", "values"]);
    /// let list_of = |t| DataType::List(Arc::new(Field::new("item", t, false)));
    /// assert_eq!(children[1].data_type(), &list_of(DataType::Int64)); // indptr
    /// assert_eq!(children[2].data_type(), &list_of(DataType::Int32)); // indices
    /// assert!(children.iter().all(|f| !f.is_nullable()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn storage_type(&self) -> DataType {
        let fields: Fields = self
            .children()
            .into_iter()
            .map(|(name, child)| Field::new(name, child_type(&child), false))
            .collect();
        DataType::Struct(fields)
    }

    /// A nullable field of this extension type named `name`.
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorType, COO_NAME};
    /// use arrow_sparse::ipc::extension::{EXTENSION_METADATA, EXTENSION_NAME};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let ty = SparseTensorType::of(&t)?;
    /// let field = ty.field("t");
    /// assert_eq!((field.name().as_str(), field.is_nullable()), ("t", true));
    /// assert_eq!(field.data_type(), &ty.storage_type());
    /// assert_eq!(field.metadata()[EXTENSION_NAME], COO_NAME);
    /// assert_eq!(field.metadata()[EXTENSION_METADATA], ty.metadata_json());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn field(&self, name: &str) -> Field {
        Field::new(name, self.storage_type(), true).with_metadata(HashMap::from([
            (
                EXTENSION_NAME.to_string(),
                self.extension_name().to_string(),
            ),
            (EXTENSION_METADATA.to_string(), self.metadata_json()),
        ]))
    }

    /// Parse the type of a field: its extension name and metadata, checked against
    /// its storage type. Errors: [`Error::Type`] for a field that is not a sparse
    /// tensor column or whose storage does not match, [`Error::Parse`] for bad
    /// metadata.
    ///
    /// ```
    /// use arrow_schema::{DataType, Field};
    /// use arrow_sparse::column::SparseTensorType;
    /// use arrow_sparse::ipc::extension::EXTENSION_METADATA;
    /// use arrow_sparse::{AnyTensor, CooTensor, Error};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let ty = SparseTensorType::of(&t)?;
    /// assert_eq!(SparseTensorType::from_field(&ty.field("t"))?, ty);
    /// // not a sparse tensor column
    /// let plain = Field::new("t", DataType::Int64, true);
    /// assert!(matches!(SparseTensorType::from_field(&plain), Err(Error::Type { .. })));
    /// // the right extension name, but metadata that is not JSON
    /// let mut broken = ty.field("t");
    /// broken.metadata_mut().insert(EXTENSION_METADATA, "{");
    /// assert!(matches!(SparseTensorType::from_field(&broken), Err(Error::Parse { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_field(field: &Field) -> Result<Self> {
        let name = field
            .metadata()
            .get(EXTENSION_NAME)
            .map(String::as_str)
            .unwrap_or("");
        let format = format_of(name).ok_or_else(|| Error::Type {
            what: format!("extension type of column {:?}", field.name()),
            expected: "arrow_sparse.coo, .csr, .csc, .csf or .gcs".into(),
            found: if name.is_empty() {
                "no extension name".into()
            } else {
                name.into()
            },
        })?;
        let text = field
            .metadata()
            .get(EXTENSION_METADATA)
            .ok_or_else(|| parse_err(format!("{EXTENSION_METADATA} is missing")))?;
        let ty = Self::parse(format, text)?;
        ty.check_storage(field.name(), field.data_type())?;
        Ok(ty)
    }

    pub(crate) fn parse(format: Format, text: &str) -> Result<Self> {
        let v: J =
            serde_json::from_str(text).map_err(|e| parse_err(format!("invalid JSON: {e}")))?;
        let o = v
            .as_object()
            .ok_or_else(|| parse_err("the metadata must be a JSON object"))?;
        let get = |k: &str| o.get(k).ok_or_else(|| parse_err(format!("missing {k:?}")));
        let string = |k: &str| {
            get(k)?
                .as_str()
                .ok_or_else(|| parse_err(format!("{k} must be a string")))
        };
        let usizes = |k: &str| -> Result<Option<Vec<usize>>> {
            match o.get(k) {
                None => Ok(None),
                Some(J::Array(a)) if a.len() <= MAX_NDIM => a
                    .iter()
                    .map(|x| {
                        x.as_u64()
                            .and_then(|x| usize::try_from(x).ok())
                            .ok_or_else(|| {
                                parse_err(format!("{k} must hold non-negative integers"))
                            })
                    })
                    .collect::<Result<Vec<_>>>()
                    .map(Some),
                Some(_) => Err(parse_err(format!(
                    "{k} must be an array of at most {MAX_NDIM} integers"
                ))),
            }
        };
        if get("version")?.as_u64() != Some(COLUMN_METADATA_VERSION) {
            return Err(parse_err(format!(
                "unsupported version {} (this reader knows version {COLUMN_METADATA_VERSION})",
                o["version"]
            )));
        }
        let ndim = get("ndim")?
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n <= MAX_NDIM)
            .ok_or_else(|| parse_err(format!("ndim must be an integer in 0..={MAX_NDIM}")))?;
        let value_type: ValueType = string("value_type")?.parse()?;
        let index_type: IndexType = string("index_type")?.parse()?;
        let indptr_type = match format {
            Format::Coo => None,
            _ => Some(string("indptr_type")?.parse::<IndexType>()?),
        };
        let dim_names = match o.get("dim_names") {
            None => vec![String::new(); ndim],
            Some(J::Array(a)) if a.len() == ndim => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| parse_err("dim_names must be strings"))
                })
                .collect::<Result<_>>()?,
            Some(_) => return Err(parse_err(format!("dim_names must be {ndim} strings"))),
        };
        let mut ty = SparseTensorType {
            format,
            ndim,
            value_type,
            index_type,
            indptr_type,
            dim_names,
            axis_order: None,
            compressed_axis: None,
            map: None,
            levels: None,
        };
        ty.check_ndim()?;
        if let Some(v) = o.get("levels") {
            let lo = v
                .as_object()
                .ok_or_else(|| parse_err("levels must be an object"))?;
            let (f, it, pt) = crate::ipc::extension::parse_levels(lo)?;
            let fits = f.ndim() == ndim
                && match (f.plain(), format) {
                    (Plain::Coo, Format::Coo) => true,
                    (Plain::Csx(CompressedAxis::Row), Format::Csr) => true,
                    (Plain::Csx(CompressedAxis::Column), Format::Csc) => true,
                    (Plain::Csf, Format::Csf) => {
                        usizes("axis_order")?.is_none_or(|o| o == f.axis_order())
                    }
                    _ => false,
                };
            if !fits {
                return Err(parse_err(format!(
                    "levels {f} do not travel as {format} tensors of {ndim} dimensions"
                )));
            }
            ty.levels = Some((f, it, pt));
        }
        if format == Format::Csf {
            ty.axis_order = usizes("axis_order")?;
            if let Some(order) = &ty.axis_order {
                check_permutation("axis_order", order, ndim)?;
            }
        }
        if format == Format::Gcs {
            ty.compressed_axis = Some(match string("compressed_axis")? {
                "row" => CompressedAxis::Row,
                "column" => CompressedAxis::Column,
                other => {
                    return Err(parse_err(format!(
                        "compressed_axis must be \"row\" or \"column\", found {other:?}"
                    )));
                }
            });
            ty.map = match (usizes("dimensions")?, usizes("partitioning")?) {
                (None, None) => None,
                (Some(d), Some(p)) => {
                    check_gcs_map(&d, &p, ndim)?;
                    Some((d, p))
                }
                _ => return Err(parse_err("dimensions and partitioning go together")),
            };
        }
        Ok(ty)
    }

    /// Error unless `dt` is exactly the storage type of this column, up to list
    /// item names and nullability, with `LargeList` accepted for `List`.
    pub(crate) fn check_storage(&self, column: &str, dt: &DataType) -> Result<()> {
        let bad = |found: String| Error::Type {
            what: format!("storage of {} column {column:?}", self.extension_name()),
            expected: self.storage_type().to_string(),
            found,
        };
        let DataType::Struct(fields) = dt else {
            return Err(bad(dt.to_string()));
        };
        let children = self.children();
        if fields.len() != children.len() {
            return Err(bad(dt.to_string()));
        }
        for (name, child) in &children {
            let f = fields
                .iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| bad(format!("{dt} (no child {name:?})")))?;
            let ok = match (child, f.data_type()) {
                (Child::Fixed(n), DataType::FixedSizeList(item, m)) => {
                    usize::try_from(*m).ok() == Some(*n) && item.data_type() == &DataType::Int64
                }
                (Child::List(t), DataType::List(item) | DataType::LargeList(item)) => {
                    item.data_type() == t
                }
                (Child::Bool, DataType::Boolean) => true,
                _ => false,
            };
            if !ok {
                return Err(bad(format!("{dt} (child {name:?})")));
            }
        }
        Ok(())
    }

    /// The GCS dimension map of a row of shape `shape`, from the column constants
    /// or the row's own `dimensions` / `partitioning`.
    pub(crate) fn gcs_dim_map(
        &self,
        shape: Vec<usize>,
        row: Option<(Vec<usize>, Vec<usize>)>,
    ) -> Result<DimMap> {
        let (d, p) = match (&self.map, row) {
            (Some((d, p)), _) => (d.clone(), p.clone()),
            (None, Some(dp)) => dp,
            (None, None) => return Err(parse_err("a GCS column without dimensions")),
        };
        check_gcs_map(&d, &p, self.ndim)?;
        DimMap::try_new(shape, d, p)
    }
}

fn check_gcs_map(d: &[usize], p: &[usize], ndim: usize) -> Result<()> {
    check_permutation("dimensions", d, ndim)?;
    if p.len() != 1 || p[0] > ndim {
        return Err(Error::shape(
            "GCS partitioning",
            format!("one split point in 0..={ndim}"),
            format!("{p:?}"),
        ));
    }
    Ok(())
}

/// The Arrow type of a child.
pub(crate) fn child_type(child: &Child) -> DataType {
    match child {
        Child::Fixed(n) => DataType::FixedSizeList(
            Arc::new(Field::new("item", DataType::Int64, false)),
            *n as i32,
        ),
        Child::List(t) => DataType::List(Arc::new(Field::new("item", t.clone(), false))),
        Child::Bool => DataType::Boolean,
    }
}

/// The Arrow type of an index type.
fn index_data_type(t: IndexType) -> DataType {
    match t {
        IndexType::Int8 => DataType::Int8,
        IndexType::Int16 => DataType::Int16,
        IndexType::Int32 => DataType::Int32,
        IndexType::Int64 => DataType::Int64,
        IndexType::UInt8 => DataType::UInt8,
        IndexType::UInt16 => DataType::UInt16,
        IndexType::UInt32 => DataType::UInt32,
        IndexType::UInt64 => DataType::UInt64,
    }
}

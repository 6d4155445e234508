//! Conversions between formats: the [`Convert`] trait, implemented by every typed
//! tensor, and the constructors that build one format from another
//! ([`CooTensor::canonicalize`], [`GcsTensor::from_coo`], [`DmTensor::from_coo`],
//! [`AnyTensor::convert`], [`AnyTensor::to_gcs`], [`AnyTensor::to_dm`]).
//!
//! This layer sits above the formats ([`crate::tensor`], which never converts)
//! and below the compute kernels ([`crate::kernels`], which convert an operand
//! once where an operation needs it). Its own kernels, the counting and radix
//! sorts behind every conversion, are public as [`crate::kernels::convert`].
//!
//! ```
//! use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format, IndexType};
//! let coo = CooTensor::<f32, i64>::from_entries(vec![2, 3], &[(vec![1, 0], -2.0), (vec![0, 2], 1.5)])?;
//! let csc = coo.to_csx::<i32, i32>(CompressedAxis::Column)?; // typed
//! let csf = AnyTensor::from(csc).convert(Format::Csf, IndexType::Int16, None)?; // type-erased
//! assert_eq!(csf.get::<f32>(&[1, 0])?, Some(-2.0));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

pub(crate) mod kernels;
mod level;

pub(crate) use level::build_from_coo;

use crate::dims::DimMap;
use crate::error::{Error, Result};
use crate::tensor::TensorOptions;
use crate::tensor::level::LevelTensor;
use crate::tensor::{
    AnyDm, AnyLevel, AnyTensor, CompressedAxis, CooTensor, CsfTensor, CsxMatrix, DenseTensor,
    DmTensor, Format, GcsTensor, LevelFormat, recast,
};
use crate::types::{Index, IndexType, Value};
use crate::{with_index_type, with_value_type};

/// Conversions from one format to every other. Implemented by every typed tensor.
///
/// `to_coo` keeps every stored entry (duplicates included) in storage order; the
/// other conversions go through it and sort as the target format requires, keeping
/// duplicates (except [`to_dense`](Convert::to_dense), which sums them).
///
/// ```
/// use arrow_sparse::{Convert, CooTensor, CompressedAxis};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0), (vec![0, 1], 1.5)])?;
/// let csr = coo.to_csx::<i32, i32>(CompressedAxis::Row)?;
/// assert_eq!(csr.indptr().as_ref(), &[0, 1, 2]);
/// let dense = csr.to_dense()?;
/// assert_eq!(dense.values().as_ref(), &[0.0, 1.5, 0.0, 0.0, 0.0, 5.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub trait Convert<V: Value> {
    /// All stored entries as COO with index type `I` (row-major coordinates, storage
    /// order, duplicates kept; the canonical flag is set when the entries happen to
    /// be sorted and unique). Fails if a coordinate does not fit `I`.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, Convert, CsxMatrix, Error};
    /// // a 200 x 2 CSC matrix, stored column by column: (150, 0) = 3, then (0, 1) = 2
    /// let csc = CsxMatrix::<f64, i32>::try_new(
    ///     vec![200, 2], CompressedAxis::Column, vec![0, 1, 2].into(), vec![150, 0].into(), vec![3.0, 2.0].into())?;
    /// let coo = csc.to_coo::<i64>()?;
    /// assert_eq!(coo.coords().as_ref(), &[150, 0, 0, 1]); // row-major coordinates, storage order
    /// assert_eq!(coo.values().as_ref(), &[3.0, 2.0]);
    /// assert!(!coo.is_canonical()); // (150, 0) comes before (0, 1)
    /// assert!(matches!(csc.to_coo::<i8>(), Err(Error::Overflow { .. }))); // 150 does not fit i8
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    fn to_coo<I: Index>(&self) -> Result<CooTensor<V, I>>;

    /// The dense row-major tensor (duplicates summed). Fails if the element count
    /// overflows or cannot be allocated.
    ///
    /// ```
    /// use arrow_sparse::{Convert, CooTensor};
    /// // (0, 1) is stored twice: the dense tensor holds the sum
    /// let coo = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1), (vec![1, 0], 5), (vec![0, 1], 2)])?;
    /// let dense = coo.to_dense()?;
    /// assert_eq!(dense.shape(), &[2, 2]);
    /// assert_eq!(dense.values().as_ref(), &[0, 3, 5, 0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    fn to_dense(&self) -> Result<DenseTensor<V>> {
        self.to_coo::<i64>()?.coo_to_dense()
    }

    /// A CSR or CSC matrix (2-D tensors only), by a counting sort
    /// ([`kernels::convert::coo_to_csx`](kernels::coo_to_csx)).
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, Convert, CooTensor};
    /// // [[0, 0, 1], [2, 0, 0]] as CSC with int32 indices and int64 indptr
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 0], 2.0), (vec![0, 2], 1.0)])?;
    /// let csc = coo.to_csx::<i32, i64>(CompressedAxis::Column)?;
    /// assert_eq!(csc.indptr().as_ref(), &[0, 1, 1, 2]);
    /// assert_eq!(csc.indices().as_ref(), &[1, 0]);
    /// assert_eq!(csc.values().as_ref(), &[2.0, 1.0]);
    /// // a 3-D tensor is not a matrix
    /// let cube = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[])?;
    /// assert!(cube.to_csx::<i32, i32>(CompressedAxis::Row).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    fn to_csx<I: Index, P: Index>(&self, axis: CompressedAxis) -> Result<CsxMatrix<V, I, P>> {
        kernels::coo_to_csx(&self.to_coo::<I>()?, axis)
    }

    /// A CSF tensor with the given axis order (ndim >= 2), by a radix sort
    /// ([`kernels::convert::coo_to_csf`](kernels::coo_to_csf)).
    ///
    /// ```
    /// use arrow_sparse::{Convert, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 1, 3], 2.0), (vec![0, 1, 2], 1.0)])?;
    /// let csf = coo.to_csf::<i32, i32>(&[1, 0, 2])?; // dimension 1 outermost
    /// assert_eq!(csf.axis_order(), &[1, 0, 2]);
    /// assert_eq!(csf.indices()[0].as_ref(), &[1]); // one fiber, at d1 = 1
    /// assert_eq!(csf.indices()[1].as_ref(), &[0, 1]); // under it, d0 = 0 and d0 = 1
    /// assert_eq!(csf.indptr()[0].as_ref(), &[0, 2]);
    /// assert_eq!(csf.get(&[1, 1, 3]), Some(2.0));
    /// assert!(coo.to_csf::<i32, i32>(&[0, 0, 2]).is_err()); // not a permutation
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    fn to_csf<I: Index, P: Index>(&self, axis_order: &[usize]) -> Result<CsfTensor<V, I, P>> {
        kernels::coo_to_csf(&self.to_coo::<I>()?, axis_order)
    }
}

impl<V: Value, I: Index> Convert<V> for CooTensor<V, I> {
    fn to_coo<J: Index>(&self) -> Result<CooTensor<V, J>> {
        self.coo_entries::<J>()
    }
}

impl<V: Value, I: Index, P: Index> Convert<V> for CsxMatrix<V, I, P> {
    fn to_coo<J: Index>(&self) -> Result<CooTensor<V, J>> {
        self.coo_entries::<J>()
    }
}

impl<V: Value, I: Index, P: Index> Convert<V> for CsfTensor<V, I, P> {
    fn to_coo<J: Index>(&self) -> Result<CooTensor<V, J>> {
        self.coo_entries::<J>()
    }

    fn to_csf<J: Index, Q: Index>(&self, axis_order: &[usize]) -> Result<CsfTensor<V, J, Q>> {
        if axis_order == self.axis_order() {
            let indptr = self
                .indptr()
                .iter()
                .map(|b| recast::<P, Q>(b, "indptr"))
                .collect::<Result<Vec<_>>>()?;
            let indices = self
                .indices()
                .iter()
                .map(|b| recast::<I, J>(b, "indices"))
                .collect::<Result<Vec<_>>>()?;
            return CsfTensor::try_new_with(
                self.shape().to_vec(),
                axis_order.to_vec(),
                indptr,
                indices,
                self.values().clone(),
                &TensorOptions::trusted(),
            )?
            .with_dim_names(self.dim_names().to_vec());
        }
        kernels::coo_to_csf(&self.coo_entries::<J>()?, axis_order)
    }
}

impl<V: Value> Convert<V> for DenseTensor<V> {
    fn to_coo<I: Index>(&self) -> Result<CooTensor<V, I>> {
        self.coo_entries::<I>()
    }

    fn to_dense(&self) -> Result<DenseTensor<V>> {
        self.to_row_major()
    }
}

impl<V: Value, I: Index, P: Index> Convert<V> for GcsTensor<V, I, P> {
    fn to_coo<J: Index>(&self) -> Result<CooTensor<V, J>> {
        self.coo_entries::<J>()
    }
}

impl<V: Value, I: Index, P: Index> Convert<V> for LevelTensor<V, I, P> {
    fn to_coo<J: Index>(&self) -> Result<CooTensor<V, J>> {
        self.coo_entries::<J>()
    }
}

impl<V: Value> Convert<V> for DmTensor<V> {
    fn to_coo<J: Index>(&self) -> Result<CooTensor<V, J>> {
        self.coo_entries::<J>()
    }
}

impl<V: Value, I: Index> CooTensor<V, I> {
    /// Sort lexicographically and sum duplicates. Integer sums are checked: an
    /// overflow is an [`Error::Overflow`]. The result is row-major and canonical.
    /// Runs the radix-sort kernel ([`crate::kernels::convert::canonicalize`]).
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// let t = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![1, 1], 4), (vec![0, 1], 1), (vec![1, 1], 5)])?;
    /// let c = t.canonicalize()?;
    /// assert!(c.is_canonical());
    /// assert_eq!(c.values().as_ref(), &[1, 9]); // (0, 1) then (1, 1) = 4 + 5
    /// // integer sums are checked
    /// let big = CooTensor::<i8, i64>::from_entries(vec![1], &[(vec![0], 100), (vec![0], 100)])?;
    /// assert!(big.canonicalize().is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn canonicalize(&self) -> Result<Self> {
        kernels::canonicalize(self)
    }
}

impl<V: Value, I: Index, P: Index> GcsTensor<V, I, P> {
    /// Reduce a COO tensor of shape `map.shape()` with `map` and compress it along
    /// `axis`. Fails with [`Error::Overflow`] when a reduced coordinate does not
    /// fit `I` or nnz does not fit `P`.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// assert_eq!(g.matrix().indptr().as_ref(), &[0, 1, 2]);
    /// assert_eq!(g.matrix().indices().as_ref(), &[1 * 4 + 2, 2 * 4 + 3]);
    /// // one row of 400 columns: column 399 does not fit int8
    /// let wide = CooTensor::<f64, i64>::from_entries(vec![20, 20], &[(vec![19, 19], 1.0)])?;
    /// let flat = DimMap::try_new(vec![20, 20], vec![0, 1], vec![0])?;
    /// assert!(GcsTensor::<f64, i8>::from_coo(&wide, flat, CompressedAxis::Row).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_coo<J: Index>(
        coo: &CooTensor<V, J>,
        map: DimMap,
        axis: CompressedAxis,
    ) -> Result<Self> {
        if coo.shape() != map.shape() {
            return Err(Error::shape(
                "GCS source",
                format!("shape {:?}", map.shape()),
                format!("{:?}", coo.shape()),
            ));
        }
        if map.reduced_ndim() != 2 {
            return Err(Error::shape(
                "GCS partitioning",
                "one split point",
                format!("{:?}", map.partitioning()),
            ));
        }
        // only the minor (uncompressed) part is stored as indices
        let minor = axis.dims().1;
        let extent = map.reduced_shape()[minor];
        if extent > 0 && (extent - 1) as u64 > I::TYPE.max_value() {
            return Err(Error::overflow(
                format!("reduced extent of dimensions {:?}", map.part(minor)),
                format!("coordinate {}", extent - 1),
                I::TYPE.name(),
            ));
        }
        let mut reduced: Vec<i64> = Vec::with_capacity(2 * coo.nnz());
        let mut r = [0usize; 2];
        coo.for_each(|c, _| {
            map.reduce_into(c, &mut r);
            reduced.extend([r[0] as i64, r[1] as i64]);
        })?;
        let flat = CooTensor::<V, i64>::from_trusted_parts(
            map.reduced_shape(),
            reduced.into(),
            coo.values().clone(),
            &[],
            None,
        )?;
        let wide = kernels::coo_to_csx::<V, i64, P>(&flat, axis)?;
        let indices = recast::<i64, I>(wide.indices(), "GCS matrix indices")?;
        let matrix = CsxMatrix::try_new_with(
            map.reduced_shape().to_vec(),
            axis,
            wide.indptr().clone(),
            indices,
            wide.values().clone(),
            &TensorOptions::trusted(),
        )?;
        Self::try_new(map, matrix)?.with_dim_names(coo.dim_names().to_vec())
    }
}

impl<V: Value> DmTensor<V> {
    /// Reduce `coo` (of shape `map.shape()`) with `map` and store the reduced
    /// tensor in `storage` format with `index_type` indices (CSF in natural axis
    /// order).
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CooTensor, DmTensor, Format, IndexType};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 7.0)])?;
    /// // rows = dimension 2, columns = dimensions (0, 1), stored as CSC
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, map, Format::Csc, IndexType::Int32)?;
    /// assert_eq!(dm.storage().shape(), &[4, 6]);
    /// assert_eq!(dm.storage().index_type(), Some(IndexType::Int32));
    /// assert_eq!(dm.get(&[1, 2, 3]), Some(7.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_coo<I: Index>(
        coo: &CooTensor<V, I>,
        map: DimMap,
        storage: Format,
        index_type: IndexType,
    ) -> Result<Self> {
        if coo.shape() != map.shape() {
            return Err(Error::shape(
                "DM source",
                format!("shape {:?}", map.shape()),
                format!("{:?}", coo.shape()),
            ));
        }
        let m = map.reduced_ndim();
        let mut reduced: Vec<i64> = Vec::with_capacity(m * coo.nnz());
        let mut r = vec![0usize; m];
        coo.for_each(|c, _| {
            map.reduce_into(c, &mut r);
            reduced.extend(r.iter().map(|&x| x as i64));
        })?;
        let flat: AnyTensor = CooTensor::<V, i64>::from_trusted_parts(
            map.reduced_shape(),
            reduced.into(),
            coo.values().clone(),
            &[],
            None,
        )?
        .into();
        let stored = if storage == Format::Coo && index_type == IndexType::Int64 {
            flat
        } else {
            flat.convert(storage, index_type, None)?
        };
        AnyDm::try_new(
            map,
            stored,
            &TensorOptions::default().with_dim_names(coo.dim_names().to_vec()),
        )?
        .downcast::<V>()
        .ok_or_else(|| Error::Unsupported("DM storage of another value type (internal)".into()))
    }
}

impl AnyTensor {
    /// Reduce this tensor to GCS with the given map (`map.shape()` must be this
    /// tensor's shape), compressed along `axis`, with `index_type` for both the
    /// matrix indices and indptr.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, AnyTensor, CompressedAxis, CooTensor, Format, IndexType};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 5.0)])?.into();
    /// // rows = dimensions (0, 1), columns = dimension 2: a 6 x 4 matrix
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2])?;
    /// let gcs = t.to_gcs(map, CompressedAxis::Column, IndexType::Int16)?;
    /// assert_eq!((gcs.format(), gcs.index_type()), (Format::Gcs, Some(IndexType::Int16)));
    /// assert_eq!(gcs.get::<f64>(&[1, 2, 3])?, Some(5.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn to_gcs(
        &self,
        map: DimMap,
        axis: CompressedAxis,
        index_type: IndexType,
    ) -> Result<AnyTensor> {
        with_value_type!(self.value_type(), V => {
            let coo = self.to_coo::<V, i64>()?;
            with_index_type!(index_type, I => {
                Ok(AnyTensor::Gcs(GcsTensor::<V, I, I>::from_coo(&coo, map, axis)?.into()))
            })
        })
    }

    /// Wrap this tensor's entries, reduced by `map`, in a DM tensor whose storage
    /// has format `storage` with `index_type` for its indices (and indptr), the
    /// same choice [`to_gcs`](Self::to_gcs) offers.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix, IndexType};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// use arrow_sparse::{dims::DimMap, Format};
    /// // the same matrix, stored transposed (3 x 2) as COO
    /// let map = DimMap::try_new(vec![2, 3], vec![1, 0], vec![1])?;
    /// let dm = t.to_dm(map, Format::Coo, IndexType::Int32)?;
    /// assert_eq!(dm.format(), Format::Dm);
    /// assert_eq!(dm.get::<f64>(&[0, 2])?, Some(2.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn to_dm(&self, map: DimMap, storage: Format, index_type: IndexType) -> Result<AnyTensor> {
        with_value_type!(self.value_type(), V => {
            let coo = self.to_coo::<V, i64>()?;
            Ok(AnyTensor::Dm(DmTensor::<V>::from_coo(&coo, map, storage, index_type)?.into()))
        })
    }

    /// This tensor's entries in the level format `format`, with `index_type`
    /// coordinates and `indptr_type` positions (see [`LevelTensor::from_coo`]:
    /// duplicates summed, segments sorted, dense levels filled with zeros).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// use arrow_sparse::{AnyTensor, CooTensor, Format, IndexType};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4, 5], &[(vec![3, 1], 2.0), (vec![0, 4], 1.0)])?.into();
    /// let dcsc = t.to_level(&LevelFormat::dcsc(), IndexType::Int16, IndexType::Int32)?;
    /// assert_eq!((dcsc.format(), dcsc.index_type(), dcsc.indptr_type()), (Format::Level, Some(IndexType::Int16), Some(IndexType::Int32)));
    /// assert_eq!(dcsc.get::<f64>(&[3, 1])?, Some(2.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn to_level(
        &self,
        format: &LevelFormat,
        index_type: IndexType,
        indptr_type: IndexType,
    ) -> Result<AnyTensor> {
        with_value_type!(self.value_type(), V => {
            let coo = self.to_coo::<V, i64>()?;
            Ok(AnyTensor::Level(build_from_coo(&coo, format, index_type, indptr_type)?))
        })
    }

    /// Rewrite the tensor in another format with the given index type (for CSX and
    /// CSF both indices and indptr). `axis_order` applies to CSF (default: the
    /// source's order for a CSF or level source, else `0..ndim`). GCS targets use the
    /// mapping with the fewest bytes ([`best_mapping`](crate::tensor::gcs::best_mapping),
    /// CSR); DM targets wrap COO storage with the identity map (use
    /// [`to_gcs`](Self::to_gcs) / [`to_dm`](Self::to_dm) to choose); level
    /// targets are the level tensor the source is ([`AnyLevel::from_tensor`],
    /// zero-copy for COO, CSR, CSC, CSF and dense sources; use
    /// [`to_level`](Self::to_level) to choose the levels). Entries are kept as they
    /// are (duplicates included), except that a dense result sums duplicates and
    /// drops nothing: zeros stored explicitly in a sparse tensor stay zeros.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, DenseTensor, Format, IndexType};
    /// let dense: AnyTensor = DenseTensor::<i16>::try_new(vec![2, 2], vec![0, 3, 0, 4].into())?.into();
    /// let csc = dense.convert(Format::Csc, IndexType::Int32, None)?;
    /// assert_eq!((csc.format(), csc.nnz()), (Format::Csc, 2));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn convert(
        &self,
        to: Format,
        index_type: IndexType,
        axis_order: Option<&[usize]>,
    ) -> Result<AnyTensor> {
        let order: Vec<usize> = match (axis_order, self) {
            (Some(o), _) => o.to_vec(),
            (None, AnyTensor::Csf(t)) => t.axis_order().to_vec(),
            (None, AnyTensor::Level(t)) => t.format().axis_order().to_vec(),
            (None, _) => (0..self.shape().len()).collect(),
        };
        let level = || -> Result<AnyTensor> {
            Ok(AnyTensor::Level(
                AnyLevel::from_tensor(self)?.cast_index_types(index_type, index_type)?,
            ))
        };
        if to == Format::Level {
            return level();
        }
        with_value_type!(self.value_type(), V => {
            let wide = self.to_coo::<V, i64>()?;
            with_index_type!(index_type, I => {
                let coo = wide.cast_indices::<I>()?;
                Ok(match to {
                    Format::Dense => coo.to_dense()?.into(),
                    Format::Coo => coo.into(),
                    Format::Csr => coo.to_csx::<I, I>(CompressedAxis::Row)?.into(),
                    Format::Csc => coo.to_csx::<I, I>(CompressedAxis::Column)?.into(),
                    Format::Csf => coo.to_csf::<I, I>(&order)?.into(),
                    Format::Gcs => {
                        let (map, _) = crate::tensor::gcs::best_mapping(coo.shape(), coo.nnz(), CompressedAxis::Row)?;
                        AnyTensor::Gcs(GcsTensor::<V, I, I>::from_coo(&coo, map, CompressedAxis::Row)?.into())
                    }
                    Format::Level => level()?,
                    Format::Dm => {
                        let map = DimMap::identity(coo.shape().to_vec())?;
                        let storage: AnyTensor = CooTensor::<V, I>::from_trusted_parts(coo.shape(), coo.coords().clone(), coo.values().clone(), &[], Some(coo.is_canonical()))?.into();
                        AnyTensor::Dm(AnyDm::try_new(map, storage, &TensorOptions::default().with_dim_names(coo.dim_names().to_vec()))?)
                    }
                })
            })
        })
    }
}

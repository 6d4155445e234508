//! GCS: generalized compressed storage. An N-D tensor reduced to 2-D by a
//! [`DimMap`] (dimensions + one split point) and stored as CSR (GCRS) or CSC (GCCS).
//!
//! ```
//! use arrow_sparse::dims::DimMap;
//! use arrow_sparse::{AnyTensor, CompressedAxis, CooTensor, IndexType};
//! let coo: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 5.0)])?.into();
//! // rows = dimension 2, columns = dimensions (0, 1): a 4 x 6 CSR matrix
//! let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
//! let gcs = coo.to_gcs(map, CompressedAxis::Row, IndexType::Int32)?;
//! match &gcs {
//!     AnyTensor::Gcs(g) => assert_eq!(g.matrix().shape(), &[4, 6]),
//!     _ => unreachable!(),
//! }
//! assert_eq!(gcs.get::<f64>(&[1, 2, 3])?, Some(5.0));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use super::validate::check_dim_names;
use super::{AnyCsx, CompressedAxis, CooTensor, CsxMatrix};
use crate::dims::DimMap;
use crate::error::{Error, Result};
use crate::tensor::TensorOptions;
use crate::types::{Index, IndexType, Value, ValueType};

/// A GCS tensor of any value, index and indptr type.
///
/// ```
/// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
/// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
/// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
/// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
/// assert_eq!((g.shape(), g.nnz()), (&[2usize, 3, 4][..], 2));
/// assert_eq!(g.downcast::<f64, i32, i32>().unwrap().get(&[1, 2, 3]), Some(2.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnyGcs {
    map: DimMap,
    dim_names: Vec<String>,
    matrix: AnyCsx,
}

impl AnyGcs {
    /// The validating constructor: every GCS tensor is built here. The matrix has
    /// already passed its own constructor; this checks that the map reduces to 2
    /// dimensions whose extents are the matrix's shape, and the dim names.
    ///
    /// ```
    /// use arrow_sparse::{AnyGcs, CompressedAxis, CsxMatrix, TensorOptions, dims::DimMap};
    /// // (2, 3, 4) reduced to 2 x 12; one entry at [1, 2, 3] = row 1, column 2 * 4 + 3
    /// let matrix = CsxMatrix::<f64, i32>::try_new(
    ///     vec![2, 12], CompressedAxis::Row, vec![0, 0, 1].into(), vec![11].into(), vec![5.0].into())?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = AnyGcs::try_new(map, matrix.as_any().clone(), &TensorOptions::default())?;
    /// assert_eq!(g.shape(), &[2, 3, 4]);
    /// // this map reduces to 6 x 4, not the matrix's 2 x 12
    /// let other = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2])?;
    /// assert!(AnyGcs::try_new(other, matrix.as_any().clone(), &TensorOptions::default()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(map: DimMap, matrix: AnyCsx, options: &TensorOptions) -> Result<Self> {
        if map.reduced_ndim() != 2 {
            return Err(Error::shape(
                "GCS partitioning",
                "one split point (2 parts)",
                format!("{:?}", map.partitioning()),
            ));
        }
        if matrix.shape() != map.reduced_shape() {
            return Err(Error::shape(
                "GCS matrix",
                format!("the reduced shape {:?}", map.reduced_shape()),
                format!("{:?}", matrix.shape()),
            ));
        }
        let dim_names = options.names_for(map.ndim());
        check_dim_names(&dim_names, map.ndim())?;
        Ok(AnyGcs {
            map,
            dim_names,
            matrix,
        })
    }

    /// The logical N-D shape.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
    /// assert_eq!(g.shape(), &[2, 3, 4]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.map.shape()
    }
    /// One name per logical dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
    /// assert_eq!(g.dim_names(), &["", "", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }
    /// The dimension map (N-D to the 2-D matrix).
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
    /// assert_eq!(g.map().reduced_shape(), &[2, 12]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn map(&self) -> &DimMap {
        &self.map
    }
    /// The reduced 2-D matrix.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
    /// assert_eq!(g.matrix().shape(), &[2, 12]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn matrix(&self) -> &AnyCsx {
        &self.matrix
    }
    /// Number of stored entries.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
    /// assert_eq!(g.nnz(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.matrix.nnz()
    }
    /// The value type.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
    /// assert_eq!(g.value_type(), arrow_sparse::ValueType::Float64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.matrix.value_type()
    }
    /// The type of the matrix indices.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
    /// assert_eq!(g.index_type(), arrow_sparse::IndexType::Int32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_type(&self) -> IndexType {
        self.matrix.index_type()
    }

    /// The typed view, if the types are `V`, `I` and `P` (zero-copy).
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, AnyGcs, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g: AnyGcs = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?.into();
    /// assert!(g.downcast::<f64, i32, i32>().is_some());
    /// assert!(g.downcast::<f64, i64, i64>().is_none());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn downcast<V: Value, I: Index, P: Index>(&self) -> Option<GcsTensor<V, I, P>> {
        Some(GcsTensor {
            matrix: self.matrix.downcast()?,
            any: self.clone(),
        })
    }

    pub(crate) fn with_names(mut self, names: Vec<String>) -> Result<Self> {
        check_dim_names(&names, self.map.ndim())?;
        self.dim_names = names;
        Ok(self)
    }
}

/// A GCS tensor with values `V`, matrix indices `I` and indptr `P`.
///
/// ```
/// use arrow_sparse::{dims::DimMap, CompressedAxis, Convert, CooTensor, GcsTensor};
/// // The seed's (2, 3, 4) example with partitioning (2,).
/// let coo = CooTensor::<i32, i64>::from_entries(vec![2, 3, 4], &[
///     (vec![0, 0, 1], 1), (vec![0, 0, 2], 2), (vec![0, 0, 3], 3), (vec![0, 2, 1], 4), (vec![1, 0, 0], 5),
///     (vec![1, 0, 3], 6), (vec![1, 2, 0], 7), (vec![1, 2, 2], 8), (vec![1, 2, 3], 9)])?;
/// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2])?;
/// let gcs = GcsTensor::<i32, i64>::from_coo(&coo, map, CompressedAxis::Row)?;
/// assert_eq!(gcs.matrix().indptr().as_ref(), &[0, 3, 3, 4, 6, 6, 9]);
/// assert_eq!(gcs.matrix().indices().as_ref(), &[1, 2, 3, 1, 0, 3, 0, 2, 3]);
/// assert_eq!(gcs.get(&[1, 2, 2]), Some(8));
/// assert_eq!(gcs.to_coo::<i64>()?.canonicalize()?, coo.canonicalize()?);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GcsTensor<V: Value, I: Index, P: Index = I> {
    any: AnyGcs,
    matrix: CsxMatrix<V, I, P>,
}

impl<V: Value, I: Index, P: Index> GcsTensor<V, I, P> {
    /// Wrap a reduced matrix (see [`AnyGcs::try_new`]).
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CsxMatrix, GcsTensor};
    /// // (2, 3, 4) reduced to 2 x 12; one entry at [1, 2, 3] = row 1, column 2 * 4 + 3
    /// let matrix = CsxMatrix::<f64, i32>::try_new(
    ///     vec![2, 12], CompressedAxis::Row, vec![0, 0, 1].into(), vec![11].into(), vec![5.0].into())?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::try_new(map, matrix)?;
    /// assert_eq!(g.get(&[1, 2, 3]), Some(5.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(map: DimMap, matrix: CsxMatrix<V, I, P>) -> Result<Self> {
        let any = AnyGcs::try_new(map, matrix.as_any().clone(), &TensorOptions::default())?;
        Ok(GcsTensor { any, matrix })
    }

    /// Attach dimension names (one per logical dimension).
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// let g = g.with_dim_names(vec!["a".into(), "b".into(), "c".into()])?;
    /// assert_eq!(g.dim_names(), &["a", "b", "c"]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_dim_names(mut self, names: Vec<String>) -> Result<Self> {
        self.any = self.any.with_names(names)?;
        Ok(self)
    }

    /// The logical N-D shape.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// assert_eq!(g.shape(), &[2, 3, 4]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.any.shape()
    }
    /// One name per logical dimension.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// assert_eq!(g.dim_names(), &["", "", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        self.any.dim_names()
    }
    /// The dimension map.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// assert_eq!(g.map().part(1), &[1, 2]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn map(&self) -> &DimMap {
        self.any.map()
    }
    /// The reduced matrix.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// assert_eq!(g.matrix().values().as_ref(), &[1.0, 2.0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn matrix(&self) -> &CsxMatrix<V, I, P> {
        &self.matrix
    }
    /// Number of stored entries.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// assert_eq!(g.nnz(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.matrix.nnz()
    }
    /// The type-erased tensor.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// assert_eq!(g.as_any().index_type(), arrow_sparse::IndexType::Int32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn as_any(&self) -> &AnyGcs {
        &self.any
    }

    /// The element at N-D `coords` (stored entries summed, zero when none), or
    /// `None` outside the shape.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// assert_eq!(g.get(&[0, 1, 2]), Some(1.0));
    /// assert_eq!(g.get(&[0, 0, 0]), Some(0.0));
    /// assert_eq!(g.get(&[2, 0, 0]), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get(&self, coords: &[usize]) -> Option<V> {
        if coords.len() != self.shape().len()
            || coords.iter().zip(self.shape()).any(|(c, d)| c >= d)
        {
            return None;
        }
        let mut r = [0usize; 2];
        self.map().reduce_into(coords, &mut r);
        self.matrix.get(&r)
    }

    /// Visit every stored entry (storage order) with its N-D coordinates.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, GcsTensor};
    /// // a (2, 3, 4) tensor as a 2 x 12 CSR matrix: rows = dimension 0, columns = (1, 2)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)])?;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![1])?;
    /// let g = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
    /// let mut entries = Vec::new();
    /// g.for_each(|c, v| entries.push((c.to_vec(), v)))?;
    /// assert_eq!(entries, [(vec![0, 1, 2], 1.0), (vec![1, 2, 3], 2.0)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each(&self, mut f: impl FnMut(&[usize], V)) -> Result<()> {
        let mut c = vec![0usize; self.shape().len()];
        let map = self.any.map();
        self.matrix.for_each(|r, v| {
            map.promote_into(r, &mut c);
            f(&c, v)
        })
    }
}

impl<V: Value, I: Index, P: Index> GcsTensor<V, I, P> {
    /// All stored entries as row-major COO with index type `J`, in storage order
    /// (what [`Convert::to_coo`](crate::Convert::to_coo) returns).
    pub(crate) fn coo_entries<J: Index>(&self) -> Result<CooTensor<V, J>> {
        let n = self.shape().len();
        let mut coords: Vec<J> = Vec::with_capacity(n * self.nnz());
        let mut bad = None;
        self.for_each(|c, _| {
            for &x in c {
                match J::try_from_usize(x) {
                    Some(j) => coords.push(j),
                    None => bad = Some(x),
                }
            }
        })?;
        if let Some(x) = bad {
            return Err(Error::overflow("coordinate", x.to_string(), J::TYPE.name()));
        }
        CooTensor::from_trusted_parts(
            self.shape(),
            coords.into(),
            self.matrix.values().clone(),
            self.dim_names(),
            None,
        )
    }
}

impl<V: Value, I: Index, P: Index> From<GcsTensor<V, I, P>> for AnyGcs {
    fn from(t: GcsTensor<V, I, P>) -> Self {
        t.any
    }
}

/// The mapping (dimensions, partitioning) that stores `shape` with `nnz` entries
/// in the fewest bytes as GCS with `axis`, using the narrowest signed index types
/// that fit (indptr holds nnz, indices hold the minor extent). Returns the mapping
/// and its byte count (index buffers only; values are the same for every mapping).
///
/// Storage size depends only on which dimensions go to the rows. Among the
/// cheapest splits the one with the lowest-numbered row dimensions wins (compared
/// as bit masks, highest dimension first), and each part keeps the natural
/// dimension order, so extents of 1 always go to the columns. The search is exact
/// and takes O(2^(k/2) k) steps for k extents other than 1 (meet in the middle:
/// the subsets of each half, then for each subset of the upper half the smallest
/// product of the lower half per index width), so up to 32 such extents are
/// searched; more are [`Error::Unsupported`]. A shape with an extent of 0 holds
/// no entries: every dimension goes to the major part, extents of 0 last, which
/// costs the least any mapping can (an indptr of one entry, indices of one byte).
///
/// ```
/// use arrow_sparse::{tensor::gcs::best_mapping, CompressedAxis};
/// // 4 entries in a 1000 x 2 x 2 tensor: 1000 rows would cost 1001 indptr entries,
/// // so everything goes to the columns (one row, indptr of 2 int8)
/// let (map, bytes) = best_mapping(&[1000, 2, 2], 4, CompressedAxis::Row)?;
/// assert_eq!(map.reduced_shape(), &[1, 4000]);
/// assert_eq!(bytes, 2 * 1 + 4 * 2); // indptr: 2 x int8, indices: 4 x int16
/// // 20 dimensions of extent 3 (no 2^20 enumeration): 3^20 columns would need
/// // int64 indices, so one dimension goes to the rows for int32 ones
/// let (map, bytes) = best_mapping(&[3; 20], 1000, CompressedAxis::Row)?;
/// assert_eq!(map.reduced_shape(), &[3, 3usize.pow(19)]);
/// assert_eq!(bytes, 4 * 2 + 1000 * 4);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn best_mapping(shape: &[usize], nnz: usize, axis: CompressedAxis) -> Result<(DimMap, usize)> {
    const MAX_FREE: usize = 32;
    let n = shape.len();
    let no_fit = || Error::Unsupported("no GCS mapping fits".into());
    let (major, _) = axis.dims();
    let wp = IndexType::narrowest_signed(nnz as u64).byte_width();
    let cost = |me: u128, mi: u128| -> Option<usize> {
        let me = usize::try_from(me).ok()?;
        let wi =
            IndexType::narrowest_signed(u64::try_from(mi.saturating_sub(1)).ok()?).byte_width();
        me.checked_add(1)?
            .checked_mul(wp)?
            .checked_add(nnz.checked_mul(wi)?)
    };
    if shape.contains(&0) {
        // The major part's product is 0 when a 0 is folded first (DimMap folds
        // the last dimension of a part first), and the minor part is empty.
        let (zeros, others): (Vec<usize>, Vec<usize>) = (0..n).partition(|&d| shape[d] == 0);
        let dims: Vec<usize> = others.into_iter().chain(zeros).collect();
        let split = if major == 0 { n } else { 0 };
        let bytes = cost(0, 1).ok_or_else(no_fit)?;
        let map = DimMap::try_new(shape.to_vec(), dims, vec![split]).map_err(|_| no_fit())?;
        return Ok((map, bytes));
    }
    let free: Vec<usize> = (0..n).filter(|&d| shape[d] != 1).collect();
    if free.len() > MAX_FREE {
        return Err(Error::Unsupported(format!(
            "best_mapping searches the splits of at most {MAX_FREE} dimensions of extent > 1; \
             found {}",
            free.len()
        )));
    }
    // Both parts must fit MAX_EXTENT, so the whole product must fit its square
    // (< 2^126). Every extent is now 2 or more, so a part overflows exactly when
    // its product exceeds MAX_EXTENT, whatever the order it is folded in.
    let max = crate::dims::MAX_EXTENT as u128;
    let total = free.iter().try_fold(1u128, |acc, &d| {
        acc.checked_mul(shape[d] as u128)
            .filter(|&x| x <= max * max)
    });
    let total = total.ok_or_else(no_fit)?;
    // Lower half: the distinct subset products, ascending, each with the smallest
    // mask that reaches it. Upper half: every subset, masks ascending. Since the
    // upper half holds the higher dimensions, (upper mask, lower mask) orders the
    // splits as their full masks do.
    let (low, high) = free.split_at(free.len() / 2);
    let subset_products = |dims: &[usize]| -> Vec<u128> {
        let mut p = vec![1u128; 1 << dims.len()];
        for (k, &d) in dims.iter().enumerate() {
            for m in 0..1usize << k {
                p[m | 1 << k] = p[m] * shape[d] as u128;
            }
        }
        p
    };
    let mut lows: Vec<(u128, usize)> = subset_products(low).into_iter().zip(0..).collect();
    lows.sort_unstable();
    lows.dedup_by_key(|&mut (p, _)| p);
    // Index widths by the largest minor extent each one holds.
    let limits: [u128; 4] = [
        IndexType::Int8.max_value() as u128 + 1,
        IndexType::Int16.max_value() as u128 + 1,
        IndexType::Int32.max_value() as u128 + 1,
        max,
    ];
    let mut best: Option<(usize, usize, usize)> = None; // (bytes, high mask, low mask)
    for (hm, &hp) in subset_products(high).iter().enumerate() {
        for &limit in &limits {
            // rows = hp * p, columns = total / rows; one bound on p keeps the minor
            // part within `limit`, the other keeps the major part within MAX_EXTENT,
            // and the best p is the one nearest the minor bound.
            let bound = |x: u128| hp.checked_mul(x);
            let pick = if major == 0 {
                let lo = bound(limit).map_or(1, |den| total.div_ceil(den));
                let i = lows.partition_point(|&(p, _)| p < lo);
                lows.get(i)
            } else {
                let hi = limit / hp;
                let i = lows.partition_point(|&(p, _)| p <= hi);
                i.checked_sub(1).map(|i| &lows[i])
            };
            let Some(&(p, lm)) = pick else { continue };
            let rows = hp * p;
            let cols = total / rows;
            if rows > max || cols > max {
                continue;
            }
            let (me, mi) = if major == 0 {
                (rows, cols)
            } else {
                (cols, rows)
            };
            let Some(bytes) = cost(me, mi) else { continue };
            if best.is_none_or(|b| (bytes, hm, lm) < b) {
                best = Some((bytes, hm, lm));
            }
        }
    }
    let (bytes, hm, lm) = best.ok_or_else(no_fit)?;
    let in_rows = |d: usize| {
        let bit = |dims: &[usize], mask: usize| {
            dims.iter()
                .position(|&x| x == d)
                .is_some_and(|k| mask & (1 << k) != 0)
        };
        bit(low, lm) || bit(high, hm)
    };
    let rows: Vec<usize> = (0..n).filter(|&d| in_rows(d)).collect();
    let split = rows.len();
    let dims: Vec<usize> = rows
        .into_iter()
        .chain((0..n).filter(|&d| !in_rows(d)))
        .collect();
    let map = DimMap::try_new(shape.to_vec(), dims, vec![split]).map_err(|_| no_fit())?;
    Ok((map, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Index bytes of a GCS storage with major extent `me` and minor extent `mi`
    /// (the references' cost, written apart from `best_mapping`'s).
    fn index_bytes(nnz: usize, me: usize, mi: usize) -> Option<usize> {
        let wp = IndexType::narrowest_signed(nnz as u64).byte_width();
        let wi = IndexType::narrowest_signed(mi.saturating_sub(1) as u64).byte_width();
        me.checked_add(1)?.checked_mul(wp)?.checked_add(nnz * wi)
    }

    /// The enumeration `best_mapping` did before it skipped extents of 1 (every
    /// subset, a `DimMap` built for each): the reference result.
    fn every_subset(shape: &[usize], nnz: usize, axis: CompressedAxis) -> Option<(DimMap, usize)> {
        let n = shape.len();
        let mut best: Option<(usize, DimMap)> = None;
        for mask in 0u32..(1u32 << n) {
            let rows: Vec<usize> = (0..n).filter(|d| mask & (1 << d) != 0).collect();
            let cols: Vec<usize> = (0..n).filter(|d| mask & (1 << d) == 0).collect();
            let dims: Vec<usize> = rows.iter().chain(&cols).copied().collect();
            let Ok(map) = DimMap::try_new(shape.to_vec(), dims, vec![rows.len()]) else {
                continue;
            };
            let (major, minor) = axis.dims();
            let (me, mi) = (map.reduced_shape()[major], map.reduced_shape()[minor]);
            let Some(bytes) = index_bytes(nnz, me, mi) else {
                continue;
            };
            if best.as_ref().is_none_or(|(b, _)| bytes < *b) {
                best = Some((bytes, map));
            }
        }
        best.map(|(b, m)| (m, b))
    }

    /// The enumeration of session 8 (every subset of the extents other than 1,
    /// costed without allocating): the reference for shapes of up to 20 such
    /// extents, where `every_subset` would build a million maps.
    fn every_free_subset(
        shape: &[usize],
        nnz: usize,
        axis: CompressedAxis,
    ) -> Option<(Vec<usize>, usize)> {
        let n = shape.len();
        let free: Vec<usize> = (0..n).filter(|&d| shape[d] != 1).collect();
        let product = |mask: u32, in_rows: bool| -> Option<usize> {
            (0..n)
                .rev()
                .filter(|&d| (mask & (1 << d) != 0) == in_rows)
                .try_fold(1usize, |acc, d| {
                    acc.checked_mul(shape[d])
                        .filter(|&x| x <= crate::dims::MAX_EXTENT)
                })
        };
        let (major, _) = axis.dims();
        let mut best: Option<(usize, u32)> = None;
        for sub in 0u32..(1u32 << free.len()) {
            let mask = free
                .iter()
                .enumerate()
                .filter(|&(k, _)| sub & (1 << k) != 0)
                .fold(0u32, |m, (_, &d)| m | (1 << d));
            let (Some(rows), Some(cols)) = (product(mask, true), product(mask, false)) else {
                continue;
            };
            let (me, mi) = if major == 0 {
                (rows, cols)
            } else {
                (cols, rows)
            };
            let Some(bytes) = index_bytes(nnz, me, mi) else {
                continue;
            };
            if best.is_none_or(|(b, _)| bytes < b) {
                best = Some((bytes, mask));
            }
        }
        best.map(|(b, mask)| ((0..n).filter(|d| mask & (1 << d) != 0).collect(), b))
    }

    fn axes() -> [CompressedAxis; 2] {
        [CompressedAxis::Row, CompressedAxis::Column]
    }

    /// Same mapping and byte count as every subset, on shapes with extents of 1,
    /// large and overflowing products, for both axes.
    #[test]
    fn best_mapping_agrees_with_every_subset() {
        let big = 1usize << 40;
        let shapes: Vec<Vec<usize>> = vec![
            vec![1000, 2, 2],
            vec![1, 1, 7, 1, 3],
            vec![2, 1, 2, 1, 2, 1, 2],
            vec![big, big, big],
            vec![1, big, 1, 1 << 22, 2],
            vec![3, 3, 3, 3, 3, 3, 3, 3],
            vec![128, 256, 2, 64, 129, 1 << 15, 1 << 16, 3],
            vec![1; 6],
            vec![],
        ];
        for shape in &shapes {
            for nnz in [0, 1, 4, 300, 70_000] {
                for axis in axes() {
                    let got = best_mapping(shape, nnz, axis).ok();
                    let want = every_subset(shape, nnz, axis);
                    assert_eq!(got, want, "{shape:?}, nnz {nnz}, {axis:?}");
                }
            }
        }
    }

    /// The same on 3,000 pseudo-random shapes of up to 8 dimensions, whose extents
    /// (1, small, near the index-width limits, near 2^31 and 2^62) make ties,
    /// width changes and overflows likely.
    #[test]
    fn best_mapping_agrees_with_every_subset_on_random_shapes() {
        let pool = [
            1usize,
            1,
            2,
            2,
            3,
            4,
            5,
            7,
            8,
            11,
            64,
            127,
            128,
            129,
            255,
            256,
            1000,
            32767,
            32768,
            65536,
            1 << 20,
            1 << 31,
            (1 << 31) + 1,
            1 << 40,
            1 << 62,
        ];
        let mut rng = crate::types::TestRng(0x9e37_79b9_7f4a_7c15u64);
        let mut next = |m: usize| rng.below(m);
        for _ in 0..3000 {
            let ndim = next(9);
            let shape: Vec<usize> = (0..ndim).map(|_| pool[next(pool.len())]).collect();
            let nnz = [0, 1, 2, 100, 127, 128, 40_000, 1 << 33][next(8)];
            for axis in axes() {
                let got = best_mapping(&shape, nnz, axis).ok();
                let want = every_subset(&shape, nnz, axis);
                assert_eq!(got, want, "{shape:?}, nnz {nnz}, {axis:?}");
            }
        }
    }

    /// Fuzz finding L: the 20-D shape of a 68-byte `.tns` (every extent 2 or more),
    /// which the enumeration walked 2^20 times per conversion, and shapes of 15
    /// and 16 such extents: the same rows and bytes as that enumeration.
    #[test]
    fn best_mapping_searches_twenty_dimensions_as_the_enumeration_did() {
        let finding_l = [
            1111, 3, 1112, 111, 5, 2, 31, 110, 4, 2, 3, 2, 5, 2, 31, 1112, 112, 3, 2, 3,
        ];
        let shapes: Vec<Vec<usize>> = vec![
            finding_l.to_vec(),
            vec![2; 16],
            vec![2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47],
            vec![
                1 << 20,
                3,
                1 << 20,
                5,
                1 << 20,
                7,
                1 << 20,
                9,
                1,
                11,
                2,
                2,
                2,
            ],
        ];
        for shape in &shapes {
            for (nnz, axis) in [
                (1, CompressedAxis::Row),
                (1 << 20, CompressedAxis::Column),
                (40_000, CompressedAxis::Row),
            ] {
                let got = best_mapping(shape, nnz, axis)
                    .ok()
                    .map(|(m, b)| (m.dimensions()[..m.partitioning()[0]].to_vec(), b));
                assert_eq!(
                    got,
                    every_free_subset(shape, nnz, axis),
                    "{shape:?}, nnz {nnz}, {axis:?}"
                );
            }
        }
        // 32 extents other than 1 are searched, 33 are refused
        let (map, _) = best_mapping(&[2; 32], 1, CompressedAxis::Row).unwrap();
        assert_eq!(map.reduced_shape(), &[2, 1 << 31]); // int32 indices beat a single row
        assert!(best_mapping(&[2; 33], 1, CompressedAxis::Row).is_err());
        let mut ones = vec![1; 100];
        ones[7] = 2;
        assert_eq!(
            best_mapping(&ones, 1, CompressedAxis::Row).unwrap().1,
            2 + 1
        );
    }

    /// A shape with an extent of 0 puts every dimension in the major part, zeros
    /// folded first: an indptr of one entry and one-byte indices, no more than
    /// any split costs (the enumeration could not always reach it: the natural
    /// order folds 2^40 x 2^40 before the 0 and overflows).
    #[test]
    fn best_mapping_of_a_shape_with_a_zero_costs_the_least() {
        let big = 1usize << 40;
        for shape in [
            vec![5, 0, 1, 9],
            vec![0, big, big, 3],
            vec![0],
            vec![3, 0, 0, big],
        ] {
            for nnz in [0, 1, 300] {
                for axis in axes() {
                    let (map, bytes) = best_mapping(&shape, nnz, axis).unwrap();
                    let wp = IndexType::narrowest_signed(nnz as u64).byte_width();
                    assert_eq!(bytes, wp + nnz, "{shape:?}");
                    let (major, minor) = axis.dims();
                    assert_eq!(
                        (map.reduced_shape()[major], map.reduced_shape()[minor]),
                        (0, 1)
                    );
                    if let Some((_, want)) = every_subset(&shape, nnz, axis) {
                        assert!(bytes <= want, "{shape:?}: {bytes} > {want}");
                    }
                }
            }
        }
    }
}

//! DM: dimensions mapping. An N-D view, through a [`DimMap`] and a chain of
//! no-copy [`ViewOp`]s, over a storage tensor of any format (dense, COO, CSX, CSF,
//! GCS or another DM, nested to any depth).
//!
//! Views (permute, select, slice, take, reshape, broadcast, rotate) change the map and
//! never the buffers: the storage is shared, so a view of a memory-mapped tensor
//! allocates nothing proportional to nnz.
//!
//! ```
//! use arrow_sparse::dims::DimMap;
//! use arrow_sparse::{AnyTensor, CooTensor, Format, IndexType};
//! let coo: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0)])?.into();
//! let dm = coo.to_dm(DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?; // DM over a CSR storage
//! let AnyTensor::Dm(d) = dm else { unreachable!() };
//! let t = d.transpose(0, 1)?; // changes the map, not the buffers
//! assert_eq!((t.shape(), t.get::<f64>(&[2, 1])?), (&[3usize, 2][..], Some(5.0)));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::TensorOptions;
use std::marker::PhantomData;

use super::validate::check_dim_names;
use super::{AnyTensor, CooTensor};
use crate::dims::{DimMap, ViewChain, ViewOp};
use crate::error::{Error, Result};
use crate::types::{Index, Value, ValueType};

/// A DM tensor of any value type.
///
/// ```
/// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
/// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
/// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
/// let t = dm.transpose(0, 1)?;
/// assert_eq!(t.shape(), &[3, 2]);
/// assert_eq!(t.get::<f64>(&[0, 1])?, Some(2.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnyDm {
    map: DimMap,
    views: ViewChain,
    dim_names: Vec<String>,
    storage: Box<AnyTensor>,
}

impl AnyDm {
    /// The validating constructor: every DM tensor is built here. The storage has
    /// passed its own constructor; this checks that its shape is the map's reduced
    /// shape (so its dimensionality is `partitioning.len() + 1`) and the names.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, AnyTensor, DenseTensor, TensorOptions, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored transposed, as a dense 3 x 2 tensor
    /// let storage: AnyTensor = DenseTensor::<f64>::try_new(vec![3, 2], vec![0.0, 2.0, 1.0, 0.0, 0.0, 3.0].into())?.into();
    /// let map = DimMap::try_new(vec![2, 3], vec![1, 0], vec![1])?;
    /// let dm = AnyDm::try_new(map, storage.clone(), &TensorOptions::default())?;
    /// assert_eq!(dm.get::<f64>(&[1, 2])?, Some(3.0));
    /// // the identity map would need a 2 x 3 storage
    /// assert!(AnyDm::try_new(DimMap::identity(vec![2, 3])?, storage, &TensorOptions::default()).is_err());
    /// // a storage with more dimensions than the tensor (an empty part) is refused
    /// let wide = DimMap::try_new(vec![6], vec![0], vec![0])?; // reduced shape [1, 6]
    /// let row: AnyTensor = DenseTensor::<f64>::try_new(vec![1, 6], vec![0.0; 6].into())?.into();
    /// assert!(matches!(AnyDm::try_new(wide, row, &TensorOptions::default()), Err(arrow_sparse::Error::Shape { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(map: DimMap, storage: AnyTensor, options: &TensorOptions) -> Result<Self> {
        // the DM proposal: "The dimensionality of the storage array must not be
        // greater than the dimensionality of the DM array" (empty parts of the
        // partitioning would otherwise add storage dimensions)
        if map.reduced_shape().len() > map.ndim() {
            return Err(Error::shape(
                "DM storage",
                format!(
                    "at most {} dimensions (no more than the tensor's)",
                    map.ndim()
                ),
                format!(
                    "{} dimensions (partitioning {:?})",
                    map.reduced_shape().len(),
                    map.partitioning()
                ),
            ));
        }
        if storage.shape() != map.reduced_shape() {
            return Err(Error::shape(
                "DM storage",
                format!("the reduced shape {:?}", map.reduced_shape()),
                format!("{:?}", storage.shape()),
            ));
        }
        let dim_names = options.names_for(map.ndim());
        check_dim_names(&dim_names, map.ndim())?;
        let views = ViewChain::new(map.shape().to_vec());
        Ok(AnyDm {
            map,
            views,
            dim_names,
            storage: Box::new(storage),
        })
    }

    /// Apply a chain of views recorded elsewhere (e.g. read from extension
    /// metadata). The chain must start from the map's shape. The dimension names
    /// are reset to empty ones of the views' rank; set them with
    /// [`with_dim_names`](AnyDm::with_dim_names).
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let views = ViewChain::new(vec![2, 3]).push(ViewOp::Select { dim: 0, index: 1 })?;
    /// let row = dm.clone().with_views(views)?;
    /// assert_eq!((row.shape(), row.get::<f64>(&[2])?, row.dim_names()), (&[3usize][..], Some(3.0), &[String::new()][..]));
    /// // the chain must start from the map's shape (2, 3)
    /// assert!(dm.with_views(ViewChain::new(vec![3, 2])).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_views(mut self, views: ViewChain) -> Result<Self> {
        if views.base_shape() != self.map.shape() {
            return Err(Error::shape(
                "DM views",
                format!("a chain over {:?}", self.map.shape()),
                format!("{:?}", views.base_shape()),
            ));
        }
        self.dim_names = vec![String::new(); views.output_shape().len()];
        self.views = views;
        Ok(self)
    }

    /// The same tensor with other dimension names: one per dimension of the
    /// logical shape (after the views), or none for empty names.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Coo, IndexType::Int64)?.into();
    /// let named = dm.clone().with_dim_names(vec!["row".into(), "col".into()])?;
    /// assert_eq!(named.dim_names(), &["row", "col"]);
    /// assert!(dm.with_dim_names(vec!["row".into()]).is_err()); // one name for two dimensions
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_dim_names(mut self, names: Vec<String>) -> Result<Self> {
        let names = if names.is_empty() {
            vec![String::new(); self.shape().len()]
        } else {
            names
        };
        check_dim_names(&names, self.shape().len())?;
        self.dim_names = names;
        Ok(self)
    }

    /// The logical shape (after the views).
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert_eq!(dm.shape(), &[2, 3]);
    /// assert_eq!(dm.select(1, 0)?.shape(), &[2]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.views.output_shape()
    }
    /// One name per logical dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert_eq!(dm.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }
    /// The map from the base shape to the storage shape.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert_eq!(dm.map().reduced_shape(), &[2, 3]);
    /// // a permutation without earlier views rewrites the map
    /// assert_eq!(dm.transpose(0, 1)?.map().dimensions(), &[1, 0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn map(&self) -> &DimMap {
        &self.map
    }
    /// The views from the base shape to the logical shape.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert!(dm.views().is_empty());
    /// assert_eq!(dm.select(0, 1)?.views().ops().len(), 1);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn views(&self) -> &ViewChain {
        &self.views
    }
    /// The storage tensor.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert_eq!(dm.storage().format(), Format::Csr);
    /// assert_eq!(dm.storage().nnz(), 3);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn storage(&self) -> &AnyTensor {
        &self.storage
    }
    /// The value type.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert_eq!(dm.value_type(), arrow_sparse::ValueType::Float64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.storage.value_type()
    }

    /// The typed view, if the value type is `V` (zero-copy).
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert_eq!(dm.downcast::<f64>().unwrap().get(&[0, 1]), Some(1.0));
    /// assert!(dm.downcast::<i32>().is_none());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn downcast<V: Value>(&self) -> Option<DmTensor<V>> {
        (self.value_type() == V::TYPE).then(|| DmTensor {
            any: self.clone(),
            _v: PhantomData,
        })
    }

    fn push(&self, op: ViewOp, names: Vec<String>) -> Result<AnyDm> {
        let mut out = self.clone();
        out.views = self.views.push(op)?;
        out.dim_names = names;
        Ok(out)
    }

    /// Reorder the dimensions: dimension `i` of the result is dimension `order[i]`.
    /// Without earlier views this rewrites the map's `dimensions` (the result is a
    /// plain DM tensor); after other views it appends a permute view.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let t = dm.permute(&[1, 0])?;
    /// assert_eq!(t.shape(), &[3, 2]);
    /// assert_eq!(t.get::<f64>(&[0, 1])?, Some(2.0));
    /// assert!(dm.permute(&[0, 0]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn permute(&self, order: &[usize]) -> Result<AnyDm> {
        super::validate::check_permutation("permute order", order, self.shape().len())?;
        let names = order.iter().map(|&o| self.dim_names[o].clone()).collect();
        if self.views.is_empty() {
            let mut out = self.clone();
            out.map = self.map.permuted(order)?;
            out.views = ViewChain::new(out.map.shape().to_vec());
            out.dim_names = names;
            return Ok(out);
        }
        self.push(
            ViewOp::Permute {
                order: order.to_vec(),
            },
            names,
        )
    }

    /// Swap two dimensions.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let t = dm.transpose(0, 1)?;
    /// assert_eq!(t.get::<f64>(&[2, 1])?, Some(3.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn transpose(&self, a: usize, b: usize) -> Result<AnyDm> {
        let n = self.shape().len();
        if a >= n || b >= n {
            return Err(Error::shape(
                "transpose",
                format!("dimensions below {n}"),
                format!("{a}, {b}"),
            ));
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.swap(a, b);
        self.permute(&order)
    }

    /// Fix dimension `dim` at `index` (the result has one dimension less).
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let row = dm.select(0, 1)?; // [2, 0, 3]
    /// assert_eq!(row.shape(), &[3]);
    /// assert_eq!(row.get::<f64>(&[2])?, Some(3.0));
    /// assert!(dm.select(0, 2).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn select(&self, dim: usize, index: usize) -> Result<AnyDm> {
        let mut names = self.dim_names.clone();
        if dim < names.len() {
            names.remove(dim);
        }
        self.push(ViewOp::Select { dim, index }, names)
    }

    /// Keep `start..stop` (every `step`-th index) of dimension `dim`.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let s = dm.slice(1, 0, 3, 2)?; // columns 0 and 2: [[0, 0], [2, 3]]
    /// assert_eq!(s.shape(), &[2, 2]);
    /// assert_eq!(s.get::<f64>(&[1, 1])?, Some(3.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn slice(&self, dim: usize, start: usize, stop: usize, step: usize) -> Result<AnyDm> {
        self.push(
            ViewOp::Slice {
                dim,
                start,
                stop,
                step,
            },
            self.dim_names.clone(),
        )
    }

    /// Select by an index array along dimension `dim` (numpy's `take`): output
    /// index `j` of `dim` reads index `indices[j]`; indices may repeat and come in
    /// any order.
    ///
    /// This is a view, not a gather: the storage is shared and only the index
    /// array is kept (with its sorted inverse, O(k) memory for k indices,
    /// whatever the tensor's size), the same for dense and sparse storage.
    /// Lookups read through it; iteration finds each stored entry's output
    /// positions by binary search. A gather (new buffers holding only the taken
    /// entries) is the view materialised, e.g. by
    /// [`Convert::to_coo`](crate::Convert::to_coo). A view keeps a memory-mapped
    /// or received tensor where it lies and costs nothing for a few indices of a
    /// large tensor; gather when the selection is read many times.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let t = dm.take(1, &[2, 2, 0])?; // [[0, 0, 0], [3, 3, 2]]
    /// assert_eq!(t.shape(), &[2, 3]);
    /// let mut entries = Vec::new();
    /// t.for_each_entry(&mut |c: &[usize], v: f64| entries.push((c.to_vec(), v)))?;
    /// entries.sort_by(|a, b| a.0.cmp(&b.0));
    /// assert_eq!(entries, [(vec![1, 0], 3.0), (vec![1, 1], 3.0), (vec![1, 2], 2.0)]);
    /// assert!(dm.take(1, &[3]).is_err()); // column 3 does not exist
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn take(&self, dim: usize, indices: &[usize]) -> Result<AnyDm> {
        self.push(
            ViewOp::Take {
                dim,
                indices: indices.to_vec().into(),
            },
            self.dim_names.clone(),
        )
    }

    /// A new shape with the same number of elements (row-major order kept);
    /// dimension names are cleared.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let r = dm.reshape(&[3, 2])?; // [[0, 1], [0, 2], [0, 3]]
    /// assert_eq!(r.get::<f64>(&[1, 1])?, Some(2.0));
    /// assert!(dm.reshape(&[4, 2]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn reshape(&self, shape: &[usize]) -> Result<AnyDm> {
        self.push(
            ViewOp::Reshape {
                shape: shape.to_vec(),
            },
            vec![String::new(); shape.len()],
        )
    }

    /// Repeat dimensions: every extent of `shape` is a multiple of the current one.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let b = dm.broadcast(&[4, 3])?; // the two rows repeated twice
    /// assert_eq!(b.get::<f64>(&[3, 0])?, Some(2.0));
    /// assert!(dm.broadcast(&[3, 3]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn broadcast(&self, shape: &[usize]) -> Result<AnyDm> {
        self.push(
            ViewOp::Broadcast {
                shape: shape.to_vec(),
            },
            self.dim_names.clone(),
        )
    }

    /// Roll dimension `dim` by `shift` (numpy.roll semantics).
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let r = dm.rotate(1, 1)?; // [[0, 0, 1], [3, 2, 0]]
    /// assert_eq!(r.get::<f64>(&[0, 2])?, Some(1.0));
    /// assert_eq!(r.get::<f64>(&[1, 0])?, Some(3.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn rotate(&self, dim: usize, shift: i64) -> Result<AnyDm> {
        self.push(ViewOp::Rotate { dim, shift }, self.dim_names.clone())
    }

    /// Visit every non-zero entry of the logical tensor: each stored entry of the
    /// storage, promoted through the map and sent through the inverse of the views
    /// (which may drop it, or repeat it for a broadcast).
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// let mut entries = Vec::new();
    /// dm.select(0, 1)?.for_each_entry(&mut |c: &[usize], v: f64| entries.push((c.to_vec(), v)))?;
    /// assert_eq!(entries, [(vec![0], 2.0), (vec![2], 3.0)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each_entry<V: Value>(&self, f: &mut dyn FnMut(&[usize], V)) -> Result<()> {
        let mut base = vec![0usize; self.map.ndim()];
        let (map, views) = (&self.map, &self.views);
        self.storage.for_each_entry::<V>(&mut |sc, v| {
            map.promote_into(sc, &mut base);
            views.inverse_unchecked(&base, &mut |c| f(c, v));
        })
    }

    /// The element at logical `coords`, or `None` outside the shape.
    ///
    /// ```
    /// use arrow_sparse::{AnyDm, CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
    /// assert_eq!(dm.get::<f64>(&[1, 2])?, Some(3.0));
    /// assert_eq!(dm.get::<f64>(&[0, 0])?, Some(0.0));
    /// assert_eq!(dm.get::<f64>(&[2, 0])?, None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get<V: Value>(&self, coords: &[usize]) -> Result<Option<V>> {
        if coords.len() != self.shape().len()
            || coords.iter().zip(self.shape()).any(|(c, d)| c >= d)
        {
            return Ok(None);
        }
        let base = self.views.forward_unchecked(coords);
        let mut r = vec![0usize; self.map.reduced_ndim()];
        self.map.reduce_into(&base, &mut r);
        self.storage.get::<V>(&r)
    }
}

/// A DM tensor with values `V` (the storage keeps its own index types).
///
/// ```
/// use arrow_sparse::{AnyDm, AnyTensor, Convert, CooTensor, DmTensor, IndexType, dims::DimMap};
/// // A 2 x 3 x 4 tensor stored as a 4 x 6 CSR matrix: dimensions (2, 0, 1), split at 1.
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 7.0), (vec![0, 1, 0], 1.0)])?;
/// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
/// let dm = DmTensor::<f64>::from_coo(&coo, map, arrow_sparse::Format::Csr, IndexType::Int64)?;
/// // a no-copy view: transpose, then take index 1 of the (new) first dimension
/// let v = dm.transpose(0, 2)?.select(0, 3)?;
/// assert_eq!(v.shape(), &[3, 2]);
/// assert_eq!(v.get(&[2, 1]), Some(7.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DmTensor<V: Value> {
    any: AnyDm,
    _v: PhantomData<V>,
}

impl<V: Value> DmTensor<V> {
    /// Wrap a storage tensor whose value type is `V` (see [`AnyDm::try_new`]).
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, AnyTensor, DenseTensor, DmTensor};
    /// // [[0, 1, 0], [2, 0, 3]] stored transposed, as a dense 3 x 2 tensor
    /// let storage: AnyTensor = DenseTensor::<f64>::try_new(vec![3, 2], vec![0.0, 2.0, 1.0, 0.0, 0.0, 3.0].into())?.into();
    /// let map = DimMap::try_new(vec![2, 3], vec![1, 0], vec![1])?;
    /// let dm = DmTensor::<f64>::try_new(map.clone(), storage.clone())?;
    /// assert_eq!(dm.get(&[1, 0]), Some(2.0));
    /// // the value type must be V
    /// assert!(DmTensor::<f32>::try_new(map, storage).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(map: DimMap, storage: AnyTensor) -> Result<Self> {
        if storage.value_type() != V::TYPE {
            return Err(Error::Type {
                what: "DM storage value type".into(),
                expected: V::TYPE.name().into(),
                found: storage.value_type().name().into(),
            });
        }
        Ok(DmTensor {
            any: AnyDm::try_new(map, storage, &TensorOptions::default())?,
            _v: PhantomData,
        })
    }

    /// The type-erased tensor.
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// assert_eq!(dm.as_any().value_type(), arrow_sparse::ValueType::Float64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn as_any(&self) -> &AnyDm {
        &self.any
    }
    /// The logical shape.
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// assert_eq!(dm.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.any.shape()
    }
    /// The map from the base shape to the storage.
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// assert_eq!(dm.map().dimensions(), &[0, 1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn map(&self) -> &DimMap {
        self.any.map()
    }
    /// The storage tensor.
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// assert_eq!(dm.storage().format(), Format::Csr);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn storage(&self) -> &AnyTensor {
        self.any.storage()
    }
    fn wrap(any: AnyDm) -> Self {
        DmTensor {
            any,
            _v: PhantomData,
        }
    }
    /// See [`AnyDm::permute`].
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let t = dm.permute(&[1, 0])?;
    /// assert_eq!(t.shape(), &[3, 2]);
    /// assert_eq!(t.get(&[0, 1]), Some(2.0));
    /// assert!(dm.permute(&[0, 0]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn permute(&self, order: &[usize]) -> Result<Self> {
        self.any.permute(order).map(Self::wrap)
    }
    /// See [`AnyDm::transpose`].
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let t = dm.transpose(0, 1)?;
    /// assert_eq!(t.get(&[2, 1]), Some(3.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn transpose(&self, a: usize, b: usize) -> Result<Self> {
        self.any.transpose(a, b).map(Self::wrap)
    }
    /// See [`AnyDm::select`].
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let row = dm.select(0, 1)?; // [2, 0, 3]
    /// assert_eq!(row.shape(), &[3]);
    /// assert_eq!(row.get(&[2]), Some(3.0));
    /// assert!(dm.select(0, 2).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn select(&self, dim: usize, index: usize) -> Result<Self> {
        self.any.select(dim, index).map(Self::wrap)
    }
    /// See [`AnyDm::slice`].
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let s = dm.slice(1, 0, 3, 2)?; // columns 0 and 2: [[0, 0], [2, 3]]
    /// assert_eq!(s.shape(), &[2, 2]);
    /// assert_eq!(s.get(&[1, 1]), Some(3.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn slice(&self, dim: usize, start: usize, stop: usize, step: usize) -> Result<Self> {
        self.any.slice(dim, start, stop, step).map(Self::wrap)
    }
    /// See [`AnyDm::take`].
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DenseTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored dense through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Dense, IndexType::Int64)?;
    /// let t = dm.take(0, &[1, 0, 1])?; // rows 1, 0, 1
    /// assert_eq!(t.shape(), &[3, 3]);
    /// assert_eq!((t.get(&[0, 2]), t.get(&[1, 1]), t.get(&[2, 0])), (Some(3.0), Some(1.0), Some(2.0)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn take(&self, dim: usize, indices: &[usize]) -> Result<Self> {
        self.any.take(dim, indices).map(Self::wrap)
    }
    /// See [`AnyDm::reshape`].
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let r = dm.reshape(&[3, 2])?; // [[0, 1], [0, 2], [0, 3]]
    /// assert_eq!(r.get(&[1, 1]), Some(2.0));
    /// assert!(dm.reshape(&[4, 2]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn reshape(&self, shape: &[usize]) -> Result<Self> {
        self.any.reshape(shape).map(Self::wrap)
    }
    /// See [`AnyDm::broadcast`].
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let b = dm.broadcast(&[4, 3])?; // the two rows repeated twice
    /// assert_eq!(b.get(&[3, 0]), Some(2.0));
    /// assert!(dm.broadcast(&[3, 3]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn broadcast(&self, shape: &[usize]) -> Result<Self> {
        self.any.broadcast(shape).map(Self::wrap)
    }
    /// See [`AnyDm::rotate`].
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let r = dm.rotate(1, 1)?; // [[0, 0, 1], [3, 2, 0]]
    /// assert_eq!(r.get(&[0, 2]), Some(1.0));
    /// assert_eq!(r.get(&[1, 0]), Some(3.0));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn rotate(&self, dim: usize, shift: i64) -> Result<Self> {
        self.any.rotate(dim, shift).map(Self::wrap)
    }
    /// The element at logical `coords` (zero when no entry is stored there), or
    /// `None` outside the shape, like every typed tensor's `get`.
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// assert_eq!(dm.get(&[1, 0]), Some(2.0));
    /// assert_eq!(dm.get(&[1, 3]), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get(&self, coords: &[usize]) -> Option<V> {
        // the storage's value type is `V` by construction, so the type-erased
        // lookup cannot fail on the type
        self.any.get::<V>(coords).ok().flatten()
    }
    /// Visit every non-zero entry of the logical tensor.
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, DmTensor, Format, IndexType, dims::DimMap};
    /// // [[0, 1, 0], [2, 0, 3]] stored as CSR through the identity map
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
    /// let mut entries = Vec::new();
    /// dm.transpose(0, 1)?.for_each(|c, v| entries.push((c.to_vec(), v)))?;
    /// assert_eq!(entries, [(vec![1, 0], 1.0), (vec![0, 1], 2.0), (vec![2, 1], 3.0)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each(&self, mut f: impl FnMut(&[usize], V)) -> Result<()> {
        self.any.for_each_entry::<V>(&mut f)
    }
}

impl<V: Value> DmTensor<V> {
    /// All stored entries as row-major COO with index type `J`, in storage order
    /// (what [`Convert::to_coo`](crate::Convert::to_coo) returns).
    pub(crate) fn coo_entries<J: Index>(&self) -> Result<CooTensor<V, J>> {
        let mut coords: Vec<J> = Vec::new();
        let mut values: Vec<V> = Vec::new();
        let mut bad = None;
        self.for_each(|c, v| {
            for &x in c {
                match J::try_from_usize(x) {
                    Some(j) => coords.push(j),
                    None => bad = Some(x),
                }
            }
            values.push(v);
        })?;
        if let Some(x) = bad {
            return Err(Error::overflow("coordinate", x.to_string(), J::TYPE.name()));
        }
        CooTensor::from_trusted_parts(
            self.shape(),
            coords.into(),
            values.into(),
            self.any.dim_names(),
            None,
        )
    }
}

impl<V: Value> From<DmTensor<V>> for AnyDm {
    fn from(t: DmTensor<V>) -> Self {
        t.any
    }
}

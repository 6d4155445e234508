//! Level tensors from the entries of any tensor: sorting, summing duplicates and
//! laying them out level by level ([`crate::tensor::level::LevelBuilder`]).

use crate::error::{Error, Result};
use crate::tensor::CooTensor;
use crate::tensor::TensorOptions;
use crate::tensor::level::{AnyLevel, LevelBuilder, LevelFormat, LevelTensor};
use crate::types::{Index, IndexType, Value};

impl<V: Value, I: Index, P: Index> LevelTensor<V, I, P> {
    /// Build the tensor of `coo`'s entries in `format`: duplicates summed, every
    /// segment sorted, dense levels filled with zeros where nothing is stored.
    /// The result passes full validation, so a format that declares a property the
    /// entries do not have (a `unique` compressed level before a singleton level
    /// whose rows repeat) is an error.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor, LevelType};
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 0], 1.0), (vec![1, 2], 2.0)])?;
    /// let t = LevelTensor::<f64, i32>::from_coo(&coo, &LevelFormat::coo(2)?)?;
    /// assert_eq!(t.coordinates(0).unwrap().as_ref(), &[1, 0, 1, 2]); // interleaved
    /// // row 1 repeats: a unique compressed level cannot hold it before a singleton
    /// let strict = LevelFormat::try_new(vec![LevelType::COMPRESSED, LevelType::SINGLETON], vec![0, 1])?;
    /// assert!(LevelTensor::<f64, i32>::from_coo(&coo, &strict).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_coo<J: Index>(coo: &CooTensor<V, J>, format: &LevelFormat) -> Result<Self> {
        let any = build_from_coo(coo, format, I::TYPE, P::TYPE)?;
        any.downcast::<V, I, P>()
            .ok_or_else(|| Error::Unsupported("level tensor types (internal)".into()))
    }

    /// DCSR of a matrix's entries ([`LevelFormat::dcsr`]).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![100, 100], &[(vec![42, 7], 1.0)])?;
    /// let t = LevelTensor::<f64, i32>::dcsr(&coo)?;
    /// assert_eq!((t.coordinates(0).unwrap().as_ref(), t.coordinates(1).unwrap().as_ref()), (&[42][..], &[7][..]));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dcsr<J: Index>(coo: &CooTensor<V, J>) -> Result<Self> {
        Self::from_coo(coo, &LevelFormat::dcsr())
    }

    /// DCSC of a matrix's entries ([`LevelFormat::dcsc`]).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![100, 100], &[(vec![42, 7], 1.0)])?;
    /// let t = LevelTensor::<f64, i32>::dcsc(&coo)?;
    /// assert_eq!((t.coordinates(0).unwrap().as_ref(), t.coordinates(1).unwrap().as_ref()), (&[7][..], &[42][..]));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dcsc<J: Index>(coo: &CooTensor<V, J>) -> Result<Self> {
        Self::from_coo(coo, &LevelFormat::dcsc())
    }

    /// CSF with its first `dense` levels dense ([`LevelFormat::csf_with_dense`]).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![3, 2, 5], &[(vec![2, 1, 4], 1.0)])?;
    /// let t = LevelTensor::<f64, i32>::csf_with_dense_levels(&coo, 1, vec![0, 2, 1])?;
    /// assert_eq!(t.positions(1).unwrap().as_ref(), &[0, 0, 0, 1]); // i = 0, 1, 2
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn csf_with_dense_levels<J: Index>(
        coo: &CooTensor<V, J>,
        dense: usize,
        axis_order: Vec<usize>,
    ) -> Result<Self> {
        Self::from_coo(coo, &LevelFormat::csf_with_dense(dense, axis_order)?)
    }

    /// Batched CSR: the leading `ndim - 2` dimensions dense batches of CSR
    /// matrices ([`LevelFormat::batched_csr`]).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[(vec![1, 0, 1], 1.0)])?;
    /// let t = LevelTensor::<f64, i32>::batched_csr(&coo)?;
    /// assert_eq!(t.positions(2).unwrap().as_ref(), &[0, 0, 0, 1, 1]); // 2 x 2 rows
    /// assert!(LevelTensor::<f64, i32>::batched_csr(&CooTensor::<f64, i64>::from_entries(vec![2], &[])?).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn batched_csr<J: Index>(coo: &CooTensor<V, J>) -> Result<Self> {
        let batch = coo.ndim().checked_sub(2).ok_or_else(|| {
            Error::shape("batched CSR", "ndim >= 2", format!("ndim {}", coo.ndim()))
        })?;
        Self::from_coo(coo, &LevelFormat::batched_csr(batch)?)
    }
}

/// [`LevelTensor::from_coo`] with index types chosen at run time.
pub(crate) fn build_from_coo<V: Value, J: Index>(
    coo: &CooTensor<V, J>,
    format: &LevelFormat,
    index_type: IndexType,
    indptr_type: IndexType,
) -> Result<AnyLevel> {
    if coo.ndim() != format.ndim() {
        return Err(Error::shape(
            "level tensor source",
            format!("{} dimensions", format.ndim()),
            format!("{} dimensions", coo.ndim()),
        ));
    }
    let c = if coo.is_canonical() {
        coo.clone()
    } else {
        coo.canonicalize()?
    };
    let order = format.axis_order();
    let identity = order.iter().enumerate().all(|(l, &d)| l == d);
    let perm: Option<Vec<usize>> = (!identity).then(|| c.sort_permutation(order)).transpose()?;
    let mut b = LevelBuilder::<V>::new(coo.shape(), format.clone(), u64::MAX)?;
    let mut lvl = vec![0usize; format.ndim()];
    for i in 0..c.nnz() {
        let k = perm.as_ref().map_or(i, |p| p[i]);
        for (l, &d) in order.iter().enumerate() {
            lvl[l] = c.coord(k, d);
        }
        b.push(&lvl, None, c.values()[k])?;
    }
    b.finish(
        index_type,
        indptr_type,
        &TensorOptions::default().with_dim_names(coo.dim_names().to_vec()),
    )
}

#[cfg(test)]
#[path = "level_tests.rs"]
mod tests;

//! CSF: compressed sparse fibers, a trie of coordinates in any axis order.
//!
//! ```
//! use arrow_sparse::{Convert, CooTensor};
//! let coo = CooTensor::<f32, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![1, 1, 3], 2.0)])?;
//! let csf = coo.to_csf::<i16, i32>(&[2, 0, 1])?; // levels: dimension 2, then 0, then 1
//! assert_eq!(csf.axis_order(), &[2, 0, 1]);
//! assert_eq!(csf.get(&[1, 1, 3]), Some(2.0));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::TensorOptions;
use arrow_buffer::ScalarBuffer;

use super::CooTensor;
use super::validate::{
    Validation, check_bounds, check_dim_names, check_indptr, check_len, check_permutation,
    check_shape,
};
use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::error::{Error, Result};
use crate::types::{Index, IndexType, Value, ValueType};

/// A CSF tensor of any value, index and indptr type.
///
/// Level `l` stores coordinates along dimension `axis_order[l]`; `indptr[l]` (for
/// the `ndim - 1` upper levels) gives, per node of level `l`, the range of its
/// children in level `l + 1`; the leaves line up with `values`.
///
/// ```
/// use arrow_sparse::{AnyCsf, CsfTensor};
/// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
/// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
///     .into();
/// assert_eq!((t.shape(), t.nnz()), (&[2usize, 3][..], 3));
/// assert_eq!(t.downcast::<f64, i32, i64>().unwrap().get(&[1, 2]), Some(3.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnyCsf {
    shape: Vec<usize>,
    dim_names: Vec<String>,
    axis_order: Vec<usize>,
    /// Kept apart from the buffers: a 1-D tensor has no indptr buffer.
    indptr_type: IndexType,
    indptr: Vec<IndexBuffer>,
    indices: Vec<IndexBuffer>,
    values: ValueBuffer,
}

impl AnyCsf {
    /// The validating constructor: every CSF tensor is built here.
    ///
    /// Checks (always, O(ndim)): ndim >= 1, extents fit int64, `axis_order` is a
    /// permutation, `ndim - 1` indptr and `ndim` indices buffers each of one integer
    /// type, `indices[ndim-1]` as long as `values`, `indptr[l]` one longer than
    /// `indices[l]`, starting at 0 and ending at the length of `indices[l+1]`. With
    /// [`Validation::Full`] also that every indptr is non-decreasing and every
    /// coordinate lies inside its dimension.
    ///
    /// The indptr type is the indptr buffers' type; a 1-D tensor (a sparse vector:
    /// one level, no indptr buffer) gets the indices type unless
    /// [`with_indptr_type`](Self::with_indptr_type) sets another.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, IndexBuffer, TensorOptions, Validation, ValueBuffer};
    /// let idx = |v: Vec<i32>| IndexBuffer::Int32(v.into());
    /// // [[0, 1, 0], [2, 0, 3]] with columns at level 0, rows at level 1
    /// let t = AnyCsf::try_new(
    ///     vec![2, 3],
    ///     vec![1, 0],
    ///     vec![idx(vec![0, 1, 2, 3])],
    ///     vec![idx(vec![0, 1, 2]), idx(vec![1, 0, 1])],
    ///     ValueBuffer::Float64(vec![2.0, 1.0, 3.0].into()),
    ///     &TensorOptions::default(),
    /// )?;
    /// assert_eq!(t.nnz(), 3);
    /// // axis_order must be a permutation
    /// let bad = AnyCsf::try_new(
    ///     vec![2, 3],
    ///     vec![1, 1],
    ///     vec![idx(vec![0, 1, 2, 3])],
    ///     vec![idx(vec![0, 1, 2]), idx(vec![1, 0, 1])],
    ///     ValueBuffer::Float64(vec![2.0, 1.0, 3.0].into()),
    ///     &TensorOptions::default(),
    /// );
    /// assert!(bad.is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        axis_order: Vec<usize>,
        indptr: Vec<IndexBuffer>,
        indices: Vec<IndexBuffer>,
        values: ValueBuffer,
        options: &TensorOptions,
    ) -> Result<Self> {
        let validation = options.validation();
        Self::check_index(
            &shape,
            &axis_order,
            &indptr,
            &indices,
            values.len(),
            validation,
        )?;
        let n = shape.len();
        let dim_names = options.names_for(n);
        check_dim_names(&dim_names, n)?;
        let indptr_type = indptr.first().unwrap_or(&indices[0]).data_type();
        Ok(AnyCsf {
            shape,
            dim_names,
            axis_order,
            indptr_type,
            indptr,
            indices,
            values,
        })
    }

    /// Set the indptr type of a tensor without indptr buffers (1-D: the type is
    /// stored apart, as in the Arrow message's `indptrType`). A tensor with indptr
    /// buffers keeps theirs: another type is an [`Error::Type`].
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, IndexBuffer, IndexType, TensorOptions, ValueBuffer};
    /// // the sparse vector [0, 5, 0, 7] as a 1-D CSF tensor: one level, no indptr
    /// let v = AnyCsf::try_new(vec![4], vec![0], vec![], vec![IndexBuffer::Int16(vec![1, 3].into())],
    ///     ValueBuffer::Float32(vec![5.0, 7.0].into()), &TensorOptions::default())?;
    /// assert_eq!(v.indptr_type(), IndexType::Int16); // the indices type by default
    /// let v = v.with_indptr_type(IndexType::Int64)?;
    /// assert_eq!(v.indptr_type(), IndexType::Int64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_indptr_type(mut self, ty: IndexType) -> Result<Self> {
        if let Some(b) = self.indptr.first()
            && b.data_type() != ty
        {
            return Err(Error::Type {
                what: "CSF indptr type".into(),
                expected: b.data_type().name().into(),
                found: ty.name().into(),
            });
        }
        self.indptr_type = ty;
        Ok(self)
    }

    /// The checks of [`AnyCsf::try_new`] on everything but the values buffer, for an
    /// index whose last level must have `leaves` entries. The IPC reader also uses
    /// it on the index of a message that stores no values (format/SPEC.md 3.4).
    pub(crate) fn check_index(
        shape: &[usize],
        axis_order: &[usize],
        indptr: &[IndexBuffer],
        indices: &[IndexBuffer],
        leaves: usize,
        validation: Validation,
    ) -> Result<()> {
        let n = shape.len();
        if n < 1 {
            return Err(Error::shape("CSF tensor", "ndim >= 1", format!("ndim {n}")));
        }
        check_shape(shape, "CSF tensor")?;
        check_permutation("axis_order", axis_order, n)?;
        check_len("indptr buffers", indptr.len(), n - 1)?;
        check_len("indices buffers", indices.len(), n)?;
        let same_type = |bufs: &[IndexBuffer]| {
            bufs.windows(2)
                .all(|w| w[0].data_type() == w[1].data_type())
        };
        if !same_type(indptr) || !same_type(indices) {
            return Err(Error::invariant(
                "CSF index types",
                None,
                "all indptr buffers (and all indices buffers) must share one type",
            ));
        }
        check_len(&format!("indices[{}]", n - 1), indices[n - 1].len(), leaves)?;
        for l in 0..n - 1 {
            let what = format!("indptr[{l}]");
            check_len(&what, indptr[l].len(), indices[l].len() + 1)?;
            let end = indices[l + 1].len();
            let (first, last) = (
                indptr[l].get_usize(0),
                indptr[l].get_usize(indptr[l].len() - 1),
            );
            if first != Some(0) || last != Some(end) {
                return Err(Error::invariant(
                    &what,
                    None,
                    format!("must start at 0 and end at {end}, found {first:?} .. {last:?}"),
                ));
            }
            if validation == Validation::Full {
                check_indptr(&what, indptr[l].as_slice(), end)?;
            }
        }
        if validation == Validation::Full {
            for (l, idx) in indices.iter().enumerate() {
                check_bounds(
                    &format!("indices[{l}]"),
                    idx.as_slice(),
                    shape[axis_order[l]],
                )?;
            }
        }
        Ok(())
    }

    /// Extents.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }
    /// Dimension stored at each level.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.axis_order(), &[0, 1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn axis_order(&self) -> &[usize] {
        &self.axis_order
    }
    /// Child offsets per upper level.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.indptr(), &[arrow_sparse::IndexBuffer::Int64(vec![0, 1, 3].into())]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr(&self) -> &[IndexBuffer] {
        &self.indptr
    }
    /// Coordinates per level.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.indices()[1], arrow_sparse::IndexBuffer::Int32(vec![1, 0, 2].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indices(&self) -> &[IndexBuffer] {
        &self.indices
    }
    /// Values, one per leaf.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.values(), &arrow_sparse::ValueBuffer::Float64(vec![1.0, 2.0, 3.0].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ValueBuffer {
        &self.values
    }
    /// Number of stored entries.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.nnz(), 3);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The value type.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.value_type(), arrow_sparse::ValueType::Float64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.values.data_type()
    }
    /// The type of the indices buffers.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.index_type(), arrow_sparse::IndexType::Int32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_type(&self) -> IndexType {
        self.indices[0].data_type()
    }
    /// The type of the indptr buffers.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(t.indptr_type(), arrow_sparse::IndexType::Int64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr_type(&self) -> IndexType {
        self.indptr_type
    }

    /// The typed view, if the types are `V`, `I` and `P` (zero-copy).
    ///
    /// ```
    /// use arrow_sparse::{AnyCsf, CsfTensor};
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t: AnyCsf = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert!(t.downcast::<f64, i32, i64>().is_some());
    /// assert!(t.downcast::<f32, i32, i64>().is_none());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn downcast<V: Value, I: Index, P: Index>(&self) -> Option<CsfTensor<V, I, P>> {
        Some(CsfTensor {
            indptr: self
                .indptr
                .iter()
                .map(|b| b.as_typed::<P>().cloned())
                .collect::<Option<_>>()?,
            indices: self
                .indices
                .iter()
                .map(|b| b.as_typed::<I>().cloned())
                .collect::<Option<_>>()?,
            values: self.values.as_typed::<V>()?.clone(),
            any: self.clone(),
        })
    }

    /// The same tensor with indptr converted to the indices type (checked), so that
    /// it can be downcast with one index type.
    pub(crate) fn unify_index_types(&self) -> Result<AnyCsf> {
        let mut out = self.clone();
        if self.indptr_type() != self.index_type() {
            let cast = |bufs: &[IndexBuffer], ty| {
                bufs.iter()
                    .map(|b| b.cast(ty, "CSF index"))
                    .collect::<Result<Vec<_>>>()
            };
            match cast(&self.indptr, self.index_type()) {
                Ok(p) => {
                    out.indptr = p;
                    out.indptr_type = self.index_type();
                }
                Err(_) => {
                    out.indptr = cast(&self.indptr, IndexType::Int64)?;
                    out.indices = cast(&self.indices, IndexType::Int64)?;
                    out.indptr_type = IndexType::Int64;
                }
            }
        }
        Ok(out)
    }
}

/// A CSF tensor with values `V`, indices `I` and indptr `P`.
///
/// ```
/// use arrow_sparse::{CooTensor, Convert};
/// let coo = CooTensor::<f32, i16>::from_entries(vec![3, 4, 5], &[(vec![0, 1, 0], 1.0), (vec![1, 0, 2], 2.0)])?;
/// let csf = coo.to_csf::<i16, i16>(&[2, 0, 1])?;
/// assert_eq!(csf.indices()[0].as_ref(), &[0, 2]); // level 0 holds dimension 2
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CsfTensor<V: Value, I: Index, P: Index = I> {
    any: AnyCsf,
    indptr: Vec<ScalarBuffer<P>>,
    indices: Vec<ScalarBuffer<I>>,
    values: ScalarBuffer<V>,
}

impl<V: Value, I: Index, P: Index> CsfTensor<V, I, P> {
    /// Build and fully validate (see [`AnyCsf::try_new`]).
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.get(&[1, 0]), Some(2.0));
    /// // indices[1] must be as long as values
    /// let bad = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0].into()], vec![1.0, 2.0, 3.0].into());
    /// assert!(bad.is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        axis_order: Vec<usize>,
        indptr: Vec<ScalarBuffer<P>>,
        indices: Vec<ScalarBuffer<I>>,
        values: ScalarBuffer<V>,
    ) -> Result<Self> {
        Self::try_new_with(
            shape,
            axis_order,
            indptr,
            indices,
            values,
            &TensorOptions::default(),
        )
    }

    /// Build with an explicit [`Validation`] level.
    ///
    /// ```
    /// use arrow_sparse::{CsfTensor, TensorOptions, Validation};
    /// // row 7 does not exist: only full validation looks at the coordinates
    /// let build = |v| CsfTensor::<f64, i32>::try_new_with(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1].into()], vec![vec![7].into(), vec![0].into()], vec![1.0].into(), &TensorOptions::default().with_validation(v));
    /// assert!(build(Validation::Full).is_err());
    /// assert!(build(Validation::Trusted).is_ok());
    /// ```
    pub fn try_new_with(
        shape: Vec<usize>,
        axis_order: Vec<usize>,
        indptr: Vec<ScalarBuffer<P>>,
        indices: Vec<ScalarBuffer<I>>,
        values: ScalarBuffer<V>,
        options: &TensorOptions,
    ) -> Result<Self> {
        let any = AnyCsf::try_new(
            shape,
            axis_order,
            indptr.iter().cloned().map(IndexBuffer::from).collect(),
            indices.iter().cloned().map(IndexBuffer::from).collect(),
            crate::buffer::ValueBuffer::from(values.clone()),
            options,
        )?
        .with_indptr_type(P::TYPE)?;
        Ok(CsfTensor {
            any,
            indptr,
            indices,
            values,
        })
    }

    /// Attach dimension names (one per dimension).
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// let t = t.with_dim_names(vec!["i".into(), "j".into()])?;
    /// assert_eq!(t.dim_names(), &["i", "j"]);
    /// // one name per dimension
    /// assert!(t.with_dim_names(vec!["i".into()]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_dim_names(mut self, names: Vec<String>) -> Result<Self> {
        check_dim_names(&names, self.any.shape.len())?;
        self.any.dim_names = names;
        Ok(self)
    }

    /// Extents.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.any.shape
    }
    /// Number of dimensions.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.ndim(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.any.shape.len()
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.any.dim_names
    }
    /// Dimension stored at each level.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.axis_order(), &[0, 1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn axis_order(&self) -> &[usize] {
        &self.any.axis_order
    }
    /// Child offsets per upper level.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.indptr()[0].as_ref(), &[0, 1, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr(&self) -> &[ScalarBuffer<P>] {
        &self.indptr
    }
    /// Coordinates per level.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.indices()[0].as_ref(), &[0, 1]);
    /// assert_eq!(t.indices()[1].as_ref(), &[1, 0, 2]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indices(&self) -> &[ScalarBuffer<I>] {
        &self.indices
    }
    /// Values.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.values().as_ref(), &[1.0, 2.0, 3.0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ScalarBuffer<V> {
        &self.values
    }
    /// Number of stored entries.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.nnz(), 3);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The type-erased tensor.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.as_any().indptr_type(), arrow_sparse::IndexType::Int64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn as_any(&self) -> &AnyCsf {
        &self.any
    }

    fn walk<J: Index>(
        &self,
        level: usize,
        node: usize,
        cur: &mut [J],
        out: &mut Vec<J>,
    ) -> Result<()> {
        let n = self.ndim();
        let x = self.indices[level][node];
        let d = self.any.axis_order[level];
        cur[d] = J::try_from_usize(x.as_usize())
            .ok_or_else(|| Error::overflow("coordinate", format!("{x:?}"), J::TYPE.name()))?;
        if level == n - 1 {
            out.extend_from_slice(cur);
            return Ok(());
        }
        let p = &self.indptr[level];
        let (lo, hi) = (p[node].as_usize(), p[node + 1].as_usize());
        if lo > hi || hi > self.indices[level + 1].len() {
            return Err(Error::invariant(
                format!("indptr[{level}]"),
                Some(node),
                "bad child range (trusted input was invalid)",
            ));
        }
        for child in lo..hi {
            self.walk(level + 1, child, cur, out)?;
        }
        Ok(())
    }
}

impl<V: Value, I: Index, P: Index> CsfTensor<V, I, P> {
    /// Visit every stored entry in leaf order with its coordinates. Errors (never
    /// panics) on a tree that a trusted construction let through.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// let mut entries = Vec::new();
    /// t.for_each(|c, v| entries.push((c.to_vec(), v)))?;
    /// assert_eq!(entries, [(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each(&self, mut f: impl FnMut(&[usize], V)) -> Result<()> {
        let mut cur = vec![0usize; self.ndim()];
        for node in 0..self.indices[0].len() {
            self.visit(0, node, &mut cur, &mut f)?;
        }
        Ok(())
    }

    fn visit(
        &self,
        level: usize,
        node: usize,
        cur: &mut [usize],
        f: &mut impl FnMut(&[usize], V),
    ) -> Result<()> {
        let n = self.ndim();
        cur[self.any.axis_order[level]] = self.indices[level][node].as_usize();
        if level == n - 1 {
            let v = *self.values.get(node).ok_or_else(|| {
                Error::invariant(
                    "CSF tree",
                    Some(node),
                    "leaf without a value (trusted input was invalid)",
                )
            })?;
            f(cur, v);
            return Ok(());
        }
        let p = &self.indptr[level];
        let (lo, hi) = (p[node].as_usize(), p[node + 1].as_usize());
        if lo > hi || hi > self.indices[level + 1].len() {
            return Err(Error::invariant(
                format!("indptr[{level}]"),
                Some(node),
                "bad child range (trusted input was invalid)",
            ));
        }
        for child in lo..hi {
            self.visit(level + 1, child, cur, f)?;
        }
        Ok(())
    }

    /// The sum of the stored entries at `coords` (zero when none), or `None` when
    /// the coordinates are outside the shape. Descends the tree level by level.
    ///
    /// ```
    /// use arrow_sparse::CsfTensor;
    /// // [[0, 1, 0], [2, 0, 3]]: level 0 = rows, level 1 = columns
    /// let t = CsfTensor::<f64, i32, i64>::try_new(vec![2, 3], vec![0, 1],
    ///     vec![vec![0, 1, 3].into()], vec![vec![0, 1].into(), vec![1, 0, 2].into()], vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(t.get(&[0, 1]), Some(1.0));
    /// assert_eq!(t.get(&[0, 0]), Some(0.0));
    /// assert_eq!(t.get(&[0, 3]), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get(&self, coords: &[usize]) -> Option<V> {
        if coords.len() != self.ndim() || coords.iter().zip(self.shape()).any(|(c, d)| c >= d) {
            return None;
        }
        let n = self.ndim();
        let mut acc = V::ZERO;
        let mut stack = vec![(0usize, 0usize, self.indices[0].len())];
        while let Some((level, lo, hi)) = stack.pop() {
            let want = coords[self.any.axis_order[level]];
            for node in lo..hi.min(self.indices[level].len()) {
                if self.indices[level][node].as_usize() != want {
                    continue;
                }
                if level == n - 1 {
                    acc = acc.checked_sum(*self.values.get(node)?).unwrap_or(acc);
                } else {
                    let p = &self.indptr[level];
                    stack.push((level + 1, p[node].as_usize(), p[node + 1].as_usize()));
                }
            }
        }
        Some(acc)
    }
}

impl<V: Value, I: Index, P: Index> CsfTensor<V, I, P> {
    /// All stored entries as row-major COO with index type `J`, in storage order
    /// (what [`Convert::to_coo`](crate::Convert::to_coo) returns).
    pub(crate) fn coo_entries<J: Index>(&self) -> Result<CooTensor<V, J>> {
        let n = self.ndim();
        let mut coords: Vec<J> = Vec::with_capacity(n * self.nnz());
        let mut cur = vec![J::usize_as(0); n];
        for node in 0..self.indices[0].len() {
            self.walk(0, node, &mut cur, &mut coords)?;
        }
        if coords.len() != n * self.nnz() {
            return Err(Error::invariant(
                "CSF tree",
                None,
                "leaves do not line up with values (trusted input was invalid)",
            ));
        }
        CooTensor::from_trusted_parts(
            self.shape(),
            coords.into(),
            self.values.clone(),
            self.dim_names(),
            None,
        )
    }
}

impl<V: Value, I: Index, P: Index> From<CsfTensor<V, I, P>> for AnyCsf {
    fn from(t: CsfTensor<V, I, P>) -> Self {
        t.any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::Convert;

    #[test]
    fn validation() {
        let ok = CsfTensor::<f32, i32>::try_new(
            vec![2, 3],
            vec![1, 0],
            vec![vec![0, 1, 2].into()],
            vec![vec![0, 2].into(), vec![1, 0].into()],
            vec![1.0, 2.0].into(),
        );
        assert!(ok.is_ok(), "{ok:?}");
        let bad_order = CsfTensor::<f32, i32>::try_new(
            vec![2, 3],
            vec![1, 1],
            vec![vec![0, 1, 2].into()],
            vec![vec![0, 2].into(), vec![1, 0].into()],
            vec![1.0, 2.0].into(),
        );
        assert!(bad_order.is_err());
        let oob = CsfTensor::<f32, i32>::try_new(
            vec![2, 3],
            vec![0, 1],
            vec![vec![0, 1, 2].into()],
            vec![vec![0, 2].into(), vec![1, 0].into()],
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(oob, Err(Error::IndexOutOfBounds { .. })));
        let bad_ptr = CsfTensor::<f32, i32>::try_new(
            vec![2, 3],
            vec![1, 0],
            vec![vec![0, 3, 2].into()],
            vec![vec![0, 2].into(), vec![1, 0].into()],
            vec![1.0, 2.0].into(),
        );
        assert!(bad_ptr.is_err());
        let short = CsfTensor::<f32, i32>::try_new(
            vec![2, 3],
            vec![1, 0],
            vec![vec![0, 2].into()],
            vec![vec![0, 2].into(), vec![1, 0].into()],
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(short, Err(Error::Length { .. })));
    }

    /// A sparse vector is a 1-D CSF tensor: one level, no indptr buffer, the
    /// indptr type kept apart (the typed view's `P`, the level view's posWidth).
    #[test]
    fn one_dimensional() {
        let v = CsfTensor::<f32, i16, i64>::try_new(
            vec![16],
            vec![0],
            vec![],
            vec![vec![3, 6, 9, 12].into()],
            vec![1.1, 2.2, 3.3, 4.4].into(),
        )
        .unwrap();
        assert_eq!(
            (v.as_any().indptr_type(), v.as_any().index_type()),
            (IndexType::Int64, IndexType::Int16)
        );
        assert_eq!(
            (v.get(&[9]), v.get(&[10]), v.get(&[16])),
            (Some(3.3), Some(0.0), None)
        );
        let coo = v.to_coo::<i64>().unwrap();
        assert_eq!(coo.coords().as_ref(), &[3, 6, 9, 12]);
        assert_eq!(coo.to_csf::<i16, i64>(&[0]).unwrap(), v);
        let any = crate::AnyTensor::from(v.clone());
        assert_eq!(
            any.levels().unwrap().mlir_encoding(),
            "#sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed), posWidth = 64, crdWidth = 16 }>"
        );
        // the names survive a rename with the indptr type
        let named = any.with_dim_names(vec!["i".into()]).unwrap();
        assert_eq!(named.indptr_type(), Some(IndexType::Int64));
        // no indptr buffer may be given; out-of-range and unsorted data as for any CSF
        let bad = CsfTensor::<f32, i16, i64>::try_new(
            vec![4],
            vec![0],
            vec![vec![0, 1].into()],
            vec![vec![3].into()],
            vec![1.0].into(),
        );
        assert!(matches!(bad, Err(Error::Length { .. })));
        let oob = CsfTensor::<f32, i16, i64>::try_new(
            vec![4],
            vec![0],
            vec![],
            vec![vec![4].into()],
            vec![1.0].into(),
        );
        assert!(matches!(oob, Err(Error::IndexOutOfBounds { .. })));
        let any = AnyCsf::try_new(
            vec![4],
            vec![0],
            vec![],
            vec![IndexBuffer::Int8(vec![1].into())],
            ValueBuffer::Float64(vec![1.0].into()),
            &TensorOptions::default(),
        )
        .unwrap();
        assert!(matches!(
            any.clone().with_indptr_type(IndexType::UInt16),
            Ok(t) if t.indptr_type() == IndexType::UInt16
        ));
        let two_d = CsfTensor::<f32, i16, i64>::try_new(
            vec![2, 2],
            vec![0, 1],
            vec![vec![0, 1].into()],
            vec![vec![1].into(), vec![0].into()],
            vec![1.0].into(),
        )
        .unwrap();
        // a tensor with indptr buffers keeps their type
        assert!(matches!(
            two_d.as_any().clone().with_indptr_type(IndexType::Int8),
            Err(Error::Type { .. })
        ));
    }
}

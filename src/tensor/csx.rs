//! CSX: compressed sparse row (CSR) and column (CSC) matrices.
//!
//! ```
//! use arrow_sparse::{CompressedAxis, CsxMatrix};
//! // [[1, 0, 2], [0, 0, 3]] as CSR: indptr (int64), indices (int32), values
//! let m = CsxMatrix::<f64, i32, i64>::try_new(
//!     vec![2, 3],
//!     CompressedAxis::Row,
//!     vec![0i64, 2, 3].into(),
//!     vec![0i32, 2, 2].into(),
//!     vec![1.0, 2.0, 3.0].into(),
//! )?;
//! // absent elements read as zero, coordinates outside the shape as None
//! assert_eq!((m.nnz(), m.get(&[0, 2]), m.get(&[1, 0]), m.get(&[2, 0])), (3, Some(2.0), Some(0.0), None));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::TensorOptions;
use arrow_buffer::ScalarBuffer;

use super::validate::{
    Validation, check_bounds, check_dim_names, check_indptr, check_len, check_shape,
};
use super::{CooTensor, recast};
use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::error::{Error, Result};
use crate::types::{Index, IndexType, Value, ValueType};

/// Which axis of a CSX matrix is compressed.
///
/// ```
/// use arrow_sparse::{CompressedAxis, CsxMatrix};
/// // [[1, 0], [0, 2]] as CSC: one indptr entry per column
/// let m = CsxMatrix::<f64, i32>::try_new(
///     vec![2, 2], CompressedAxis::Column, vec![0, 1, 2].into(), vec![0, 1].into(), vec![1.0, 2.0].into())?;
/// assert_eq!(m.get(&[1, 1]), Some(2.0));
/// assert_eq!(CompressedAxis::default(), CompressedAxis::Row);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CompressedAxis {
    /// Rows are compressed: CSR.
    #[default]
    Row,
    /// Columns are compressed: CSC.
    Column,
}

impl CompressedAxis {
    /// `(major, minor)` dimension numbers.
    ///
    /// ```
    /// use arrow_sparse::CompressedAxis;
    /// assert_eq!(CompressedAxis::Row.dims(), (0, 1));
    /// assert_eq!(CompressedAxis::Column.dims(), (1, 0));
    /// ```
    pub fn dims(self) -> (usize, usize) {
        match self {
            CompressedAxis::Row => (0, 1),
            CompressedAxis::Column => (1, 0),
        }
    }
}

/// A CSR or CSC matrix of any value, index and indptr type.
///
/// ```
/// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
/// // [[1, 0, 2], [0, 0, 3]] as CSR
/// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
///     .into();
/// assert_eq!(m.nnz(), 3);
/// let typed = m.downcast::<f64, i32, i64>().unwrap();
/// assert_eq!(typed.get(&[1, 2]), Some(3.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnyCsx {
    shape: Vec<usize>,
    dim_names: Vec<String>,
    axis: CompressedAxis,
    indptr: IndexBuffer,
    indices: IndexBuffer,
    values: ValueBuffer,
}

impl AnyCsx {
    /// The validating constructor: every CSR / CSC matrix is built here.
    ///
    /// Checks: 2-D shape with extents fitting int64, `indptr` has
    /// shape\[major\] + 1 elements, `indices` as many as `values`, indptr starts at 0
    /// and ends at nnz (O(1), always); with [`Validation::Full`] also that indptr
    /// never decreases and every index lies in `0..shape[minor]`.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, IndexBuffer, TensorOptions, Validation, ValueBuffer};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR, int64 indptr and int32 indices
    /// let m = AnyCsx::try_new(
    ///     vec![2, 3],
    ///     CompressedAxis::Row,
    ///     IndexBuffer::Int64(vec![0i64, 2, 3].into()),
    ///     IndexBuffer::Int32(vec![0i32, 2, 2].into()),
    ///     ValueBuffer::Float64(vec![1.0, 2.0, 3.0].into()),
    ///     &TensorOptions::default(),
    /// )?;
    /// assert_eq!(m.nnz(), 3);
    /// // index 3 is outside the 3 columns
    /// let bad = AnyCsx::try_new(
    ///     vec![2, 3],
    ///     CompressedAxis::Row,
    ///     IndexBuffer::Int64(vec![0i64, 2, 3].into()),
    ///     IndexBuffer::Int32(vec![0i32, 3, 2].into()),
    ///     ValueBuffer::Float64(vec![1.0, 2.0, 3.0].into()),
    ///     &TensorOptions::default(),
    /// );
    /// assert!(bad.is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        axis: CompressedAxis,
        indptr: IndexBuffer,
        indices: IndexBuffer,
        values: ValueBuffer,
        options: &TensorOptions,
    ) -> Result<Self> {
        let validation = options.validation();
        if shape.len() != 2 {
            return Err(Error::shape(
                "CSR/CSC matrix",
                "2 dimensions",
                format!("{} dimensions", shape.len()),
            ));
        }
        check_shape(&shape, "CSR/CSC matrix")?;
        let (major, minor) = axis.dims();
        check_len("indptr", indptr.len(), shape[major] + 1)?;
        check_len("indices", indices.len(), values.len())?;
        let nnz = values.len();
        let first = indptr.get_usize(0);
        let last = indptr.get_usize(indptr.len() - 1);
        if first != Some(0) || last != Some(nnz) {
            return Err(Error::invariant(
                "indptr",
                None,
                format!("must start at 0 and end at nnz = {nnz}, found {first:?} .. {last:?}"),
            ));
        }
        if validation == Validation::Full {
            check_indptr("indptr", indptr.as_slice(), nnz)?;
            check_bounds("indices", indices.as_slice(), shape[minor])?;
        }
        let dim_names = options.names_for(2);
        check_dim_names(&dim_names, 2)?;
        Ok(AnyCsx {
            shape,
            dim_names,
            axis,
            indptr,
            indices,
            values,
        })
    }

    /// Extents (2 of them).
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }
    /// The compressed axis.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.axis(), CompressedAxis::Row);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn axis(&self) -> CompressedAxis {
        self.axis
    }
    /// Offsets into `indices` per major slice.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.indptr(), &arrow_sparse::IndexBuffer::Int64(vec![0, 2, 3].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr(&self) -> &IndexBuffer {
        &self.indptr
    }
    /// Minor coordinates of the entries.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.indices(), &arrow_sparse::IndexBuffer::Int32(vec![0, 2, 2].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indices(&self) -> &IndexBuffer {
        &self.indices
    }
    /// The values.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.values(), &arrow_sparse::ValueBuffer::Float64(vec![1.0, 2.0, 3.0].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ValueBuffer {
        &self.values
    }
    /// Number of stored entries.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.nnz(), 3);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The value type.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.value_type(), arrow_sparse::ValueType::Float64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.values.data_type()
    }
    /// The type of `indices`.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.index_type(), arrow_sparse::IndexType::Int32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_type(&self) -> IndexType {
        self.indices.data_type()
    }
    /// The type of `indptr`.
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert_eq!(m.indptr_type(), arrow_sparse::IndexType::Int64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr_type(&self) -> IndexType {
        self.indptr.data_type()
    }

    /// The typed view, if the types are `V`, `I` and `P` (zero-copy).
    ///
    /// ```
    /// use arrow_sparse::{AnyCsx, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m: AnyCsx = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?
    ///     .into();
    /// assert!(m.downcast::<f64, i32, i64>().is_some());
    /// // wrong indptr type
    /// assert!(m.downcast::<f64, i32, i32>().is_none());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn downcast<V: Value, I: Index, P: Index>(&self) -> Option<CsxMatrix<V, I, P>> {
        Some(CsxMatrix {
            indptr: self.indptr.as_typed::<P>()?.clone(),
            indices: self.indices.as_typed::<I>()?.clone(),
            values: self.values.as_typed::<V>()?.clone(),
            any: self.clone(),
        })
    }

    /// The same matrix with `indptr` converted to the `indices` type (checked), so
    /// that it can be downcast with one index type.
    pub(crate) fn unify_index_types(&self) -> Result<AnyCsx> {
        let mut out = self.clone();
        if self.indptr_type() != self.index_type() {
            match self.indptr.cast(self.index_type(), "indptr") {
                Ok(p) => out.indptr = p,
                Err(_) => {
                    out.indptr = self.indptr.cast(IndexType::Int64, "indptr")?;
                    out.indices = self.indices.cast(IndexType::Int64, "indices")?;
                }
            }
        }
        Ok(out)
    }
}

/// A CSR or CSC matrix with values `V`, indices `I` and indptr `P`.
///
/// ```
/// use arrow_sparse::{CsxMatrix, CompressedAxis, Convert};
/// // [[1, 0, 2],
/// //  [0, 0, 3]]
/// let m = CsxMatrix::<f64, i32, i64>::try_new(
///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
/// assert_eq!(m.to_dense()?.get(&[1, 2]), Some(3.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CsxMatrix<V: Value, I: Index, P: Index = I> {
    any: AnyCsx,
    indptr: ScalarBuffer<P>,
    indices: ScalarBuffer<I>,
    values: ScalarBuffer<V>,
}

impl<V: Value, I: Index, P: Index> CsxMatrix<V, I, P> {
    /// Build and fully validate (see [`AnyCsx::try_new`]).
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.get(&[0, 2]), Some(2.0));
    /// // indptr must end at nnz = 3
    /// let bad = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 2].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into());
    /// assert!(bad.is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        axis: CompressedAxis,
        indptr: ScalarBuffer<P>,
        indices: ScalarBuffer<I>,
        values: ScalarBuffer<V>,
    ) -> Result<Self> {
        Self::try_new_with(
            shape,
            axis,
            indptr,
            indices,
            values,
            &TensorOptions::default(),
        )
    }

    /// Build with an explicit [`Validation`] level.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix, TensorOptions, Validation};
    /// // index 5 is out of bounds: only full validation looks at the indices
    /// let build = |v| CsxMatrix::<f64, i32>::try_new_with(
    ///     vec![1, 3], CompressedAxis::Row, vec![0, 1].into(), vec![5].into(), vec![1.0].into(), &TensorOptions::default().with_validation(v));
    /// assert!(build(Validation::Full).is_err());
    /// assert!(build(Validation::Trusted).is_ok());
    /// ```
    pub fn try_new_with(
        shape: Vec<usize>,
        axis: CompressedAxis,
        indptr: ScalarBuffer<P>,
        indices: ScalarBuffer<I>,
        values: ScalarBuffer<V>,
        options: &TensorOptions,
    ) -> Result<Self> {
        let any = AnyCsx::try_new(
            shape,
            axis,
            crate::buffer::IndexBuffer::from(indptr.clone()),
            crate::buffer::IndexBuffer::from(indices.clone()),
            crate::buffer::ValueBuffer::from(values.clone()),
            options,
        )?;
        Ok(CsxMatrix {
            any,
            indptr,
            indices,
            values,
        })
    }

    /// Attach dimension names (two).
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// let m = m.with_dim_names(vec!["row".into(), "col".into()])?;
    /// assert_eq!(m.dim_names(), &["row", "col"]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_dim_names(mut self, names: Vec<String>) -> Result<Self> {
        check_dim_names(&names, 2)?;
        self.any.dim_names = names;
        Ok(self)
    }

    /// Extents.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.any.shape
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.any.dim_names
    }
    /// The compressed axis.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.axis(), CompressedAxis::Row);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn axis(&self) -> CompressedAxis {
        self.any.axis
    }
    /// Offsets per major slice.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.indptr().as_ref(), &[0, 2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr(&self) -> &ScalarBuffer<P> {
        &self.indptr
    }
    /// Minor coordinates.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.indices().as_ref(), &[0, 2, 2]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indices(&self) -> &ScalarBuffer<I> {
        &self.indices
    }
    /// Values.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.values().as_ref(), &[1.0, 2.0, 3.0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ScalarBuffer<V> {
        &self.values
    }
    /// Number of stored entries.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.nnz(), 3);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The type-erased matrix.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.as_any().index_type(), arrow_sparse::IndexType::Int32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn as_any(&self) -> &AnyCsx {
        &self.any
    }
}

impl<V: Value, I: Index, P: Index> CsxMatrix<V, I, P> {
    /// Visit every stored entry in storage order with its `[row, column]`.
    /// Errors (never panics) on an indptr that a trusted construction let through.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// let mut entries = Vec::new();
    /// m.for_each(|c, v| entries.push((c.to_vec(), v)))?;
    /// assert_eq!(entries, [(vec![0, 0], 1.0), (vec![0, 2], 2.0), (vec![1, 2], 3.0)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each(&self, mut f: impl FnMut(&[usize], V)) -> Result<()> {
        let (major, _) = self.axis().dims();
        for (m, w) in self.indptr.windows(2).enumerate() {
            let (lo, hi) = (w[0].as_usize(), w[1].as_usize());
            let Some(slice) = self.indices.get(lo..hi) else {
                return Err(Error::invariant(
                    "indptr",
                    Some(m + 1),
                    "indptr decreases or exceeds nnz (trusted input was invalid)",
                ));
            };
            for (k, &x) in (lo..hi).zip(slice) {
                let c = if major == 0 {
                    [m, x.as_usize()]
                } else {
                    [x.as_usize(), m]
                };
                f(&c, self.values[k]);
            }
        }
        Ok(())
    }

    /// The sum of the stored entries at `[row, column]` (zero when none), or
    /// `None` when the coordinates are outside the shape.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let m = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?;
    /// assert_eq!(m.get(&[1, 2]), Some(3.0));
    /// assert_eq!(m.get(&[1, 0]), Some(0.0));
    /// assert_eq!(m.get(&[2, 0]), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get(&self, coords: &[usize]) -> Option<V> {
        let (major, minor) = self.axis().dims();
        if coords.len() != 2 || coords[0] >= self.shape()[0] || coords[1] >= self.shape()[1] {
            return None;
        }
        let (lo, hi) = (
            self.indptr.get(coords[major])?.as_usize(),
            self.indptr.get(coords[major] + 1)?.as_usize(),
        );
        let mut acc = V::ZERO;
        for k in lo..hi.min(self.nnz()) {
            if self.indices[k].as_usize() == coords[minor] {
                acc = acc.checked_sum(self.values[k]).unwrap_or(acc);
            }
        }
        Some(acc)
    }
}

impl<V: Value, I: Index, P: Index> CsxMatrix<V, I, P> {
    /// All stored entries as row-major COO with index type `J`, in storage order
    /// (what [`Convert::to_coo`](crate::Convert::to_coo) returns).
    pub(crate) fn coo_entries<J: Index>(&self) -> Result<CooTensor<V, J>> {
        let (major, _) = self.axis().dims();
        let minor_coords: ScalarBuffer<J> = recast::<I, J>(&self.indices, "indices")?;
        let mut coords: Vec<J> = Vec::with_capacity(2 * self.nnz());
        for (m, w) in self.indptr.windows(2).enumerate() {
            let mj = J::try_from_usize(m)
                .ok_or_else(|| Error::overflow("coordinate", m.to_string(), J::TYPE.name()))?;
            let (lo, hi) = (w[0].as_usize(), w[1].as_usize());
            // A decreasing indptr (possible with Validation::Trusted) is refused here:
            // skipping the bad window would let an indptr going back and forth
            // between 0 and nnz emit O(rows x nnz) coordinates before the check below.
            let Some(slice) = minor_coords.get(lo..hi) else {
                return Err(Error::invariant(
                    "indptr",
                    Some(m + 1),
                    "indptr decreases or exceeds nnz (trusted input was invalid)",
                ));
            };
            for &x in slice {
                if major == 0 {
                    coords.extend([mj, x]);
                } else {
                    coords.extend([x, mj]);
                }
            }
        }
        if coords.len() != 2 * self.nnz() {
            return Err(Error::invariant(
                "indptr",
                None,
                "indptr does not cover the indices (trusted input was invalid)",
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

impl<V: Value, I: Index, P: Index> From<CsxMatrix<V, I, P>> for AnyCsx {
    fn from(t: CsxMatrix<V, I, P>) -> Self {
        t.any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::Convert;

    #[test]
    fn trusted_decreasing_indptr_is_an_error_in_to_coo() {
        // starts at 0 and ends at nnz, so Validation::Trusted accepts it
        let m = CsxMatrix::<f32, i32>::try_new_with(
            vec![4, 3],
            CompressedAxis::Row,
            vec![0, 2, 0, 2, 2].into(),
            vec![0, 1].into(),
            vec![1.0, 2.0].into(),
            &TensorOptions::trusted(),
        )
        .unwrap();
        let e = m.to_coo::<i64>().unwrap_err();
        assert!(
            matches!(
                e,
                Error::Invariant {
                    position: Some(2),
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn validation_catches_bad_indptr_and_indices() {
        let ok = CsxMatrix::<f32, i32>::try_new(
            vec![2, 3],
            CompressedAxis::Row,
            vec![0, 1, 2].into(),
            vec![0, 2].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(ok.is_ok());
        let dec = CsxMatrix::<f32, i32>::try_new(
            vec![3, 3],
            CompressedAxis::Row,
            vec![0, 2, 1, 2].into(),
            vec![0, 2].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(dec, Err(Error::Invariant { .. })));
        let oob = CsxMatrix::<f32, i32>::try_new(
            vec![2, 3],
            CompressedAxis::Column,
            vec![0, 1, 1, 2].into(),
            vec![0, 2].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(oob, Err(Error::IndexOutOfBounds { .. })));
        let end = CsxMatrix::<f32, i32>::try_new(
            vec![2, 3],
            CompressedAxis::Row,
            vec![0, 1, 3].into(),
            vec![0, 2].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(end.is_err());
        let len = CsxMatrix::<f32, i32>::try_new(
            vec![3, 3],
            CompressedAxis::Row,
            vec![0, 1, 2].into(),
            vec![0, 2].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(len, Err(Error::Length { .. })));
        // trusted skips the O(nnz) pass but not the O(1) checks
        let t = CsxMatrix::<f32, i32>::try_new_with(
            vec![3, 3],
            CompressedAxis::Row,
            vec![0, 2, 1, 2].into(),
            vec![0, 2].into(),
            vec![1.0, 2.0].into(),
            &TensorOptions::trusted(),
        );
        assert!(t.is_ok());
    }
}

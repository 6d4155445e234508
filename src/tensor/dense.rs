//! Dense strided tensors.
//!
//! ```
//! use arrow_sparse::{Convert, DenseTensor};
//! let d = DenseTensor::<i32>::try_new(vec![2, 3], vec![0, 5, 0, 0, 0, 6].into())?; // row-major
//! assert_eq!((d.get(&[0, 1]), d.get(&[1, 2])), (Some(5), Some(6)));
//! let coo = d.to_coo::<i64>()?; // only the non-zeros
//! assert_eq!(coo.nnz(), 2);
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::TensorOptions;
use arrow_buffer::ScalarBuffer;

use super::CooTensor;
use super::validate::{check_dim_names, check_shape};
use crate::buffer::ValueBuffer;
use crate::error::{Error, Result};
use crate::types::{Index, Value, ValueType};

/// Row-major (C order) element strides for `shape`.
///
/// ```
/// use arrow_sparse::tensor::dense::row_major_strides;
/// assert_eq!(row_major_strides(&[2, 3, 4]), [12, 4, 1]);
/// ```
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1]);
    }
    strides
}

/// Column-major (Fortran order) element strides for `shape`.
///
/// ```
/// use arrow_sparse::tensor::dense::column_major_strides;
/// assert_eq!(column_major_strides(&[2, 3, 4]), [1, 2, 6]);
/// ```
pub fn column_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for i in 1..shape.len() {
        strides[i] = strides[i - 1].saturating_mul(shape[i - 1]);
    }
    strides
}

/// A dense tensor of any value type: shape, element strides and a value buffer.
///
/// ```
/// use arrow_sparse::{AnyDense, DenseTensor};
/// // [[1, 2, 3], [4, 5, 6]], row-major
/// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
/// assert_eq!((t.shape(), t.strides()), (&[2usize, 3][..], &[3usize, 1][..]));
/// assert_eq!(t.downcast::<i32>().unwrap().get(&[1, 0]), Some(4));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnyDense {
    shape: Vec<usize>,
    dim_names: Vec<String>,
    strides: Vec<usize>,
    values: ValueBuffer,
}

impl AnyDense {
    /// The validating constructor: every dense tensor is built here.
    ///
    /// `strides` are in elements (not bytes). Checks: ndim >= 1, the element count
    /// fits `usize`, every reachable offset lies inside `values`, and `dim_names` is
    /// empty or has one name per dimension. The check is O(ndim) whatever
    /// `validation` says.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, TensorOptions, Validation, ValueBuffer};
    /// // [[1, 2], [3, 4]] stored column-major: strides (1, 2)
    /// let values = ValueBuffer::Int64(vec![1i64, 3, 2, 4].into());
    /// let t = AnyDense::try_new(vec![2, 2], vec![1, 2], values.clone(), &TensorOptions::default())?;
    /// assert!(t.is_column_major());
    /// assert_eq!(t.downcast::<i64>().unwrap().get(&[0, 1]), Some(2));
    /// // stride 3 would read element 3 * 1 + 2 * 1 = 5, past the 4 values
    /// assert!(AnyDense::try_new(vec![2, 2], vec![3, 2], values, &TensorOptions::default()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        strides: Vec<usize>,
        values: ValueBuffer,
        options: &TensorOptions,
    ) -> Result<Self> {
        if shape.is_empty() {
            return Err(Error::shape("dense tensor", "ndim >= 1", "ndim 0"));
        }
        let size = check_shape(&shape, "dense tensor")?.ok_or_else(|| {
            Error::overflow("dense tensor element count", format!("{shape:?}"), "usize")
        })?;
        if strides.len() != shape.len() {
            return Err(Error::shape(
                "dense strides",
                format!("{} strides", shape.len()),
                format!("{} strides", strides.len()),
            ));
        }
        if size > 0 {
            let mut max = 0usize;
            for (&d, &s) in shape.iter().zip(&strides) {
                max = (d - 1)
                    .checked_mul(s)
                    .and_then(|x| x.checked_add(max))
                    .ok_or_else(|| {
                        Error::overflow("dense strides", format!("{strides:?}"), "usize")
                    })?;
            }
            if max >= values.len() {
                return Err(Error::Invariant {
                    what: "dense values".into(),
                    position: None,
                    detail: format!(
                        "shape {shape:?} with strides {strides:?} reaches element {max}, but the buffer has {} elements",
                        values.len()
                    ),
                });
            }
        }
        let dim_names = options.names_for(shape.len());
        check_dim_names(&dim_names, shape.len())?;
        Ok(AnyDense {
            shape,
            dim_names,
            strides,
            values,
        })
    }

    /// Extents.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }
    /// Element strides.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.strides(), &[3, 1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }
    /// The value buffer.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.values(), &arrow_sparse::ValueBuffer::Int32(vec![1, 2, 3, 4, 5, 6].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ValueBuffer {
        &self.values
    }
    /// The value type.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.value_type(), arrow_sparse::ValueType::Int32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.values.data_type()
    }
    /// Number of elements (product of the shape).
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.size(), 6);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }
    /// Whether the elements are packed in row-major order.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert!(t.is_row_major());
    /// assert!(!t.is_column_major());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_row_major(&self) -> bool {
        self.size() <= 1
            || strides_match(&self.shape, &self.strides, &row_major_strides(&self.shape))
    }
    /// Whether the elements are packed in column-major order.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// let t: AnyDense = DenseTensor::<i32>::try_new_strided(vec![2, 3], vec![1, 2], vec![1, 4, 2, 5, 3, 6].into())?.into();
    /// assert!(t.is_column_major());
    /// assert!(!t.is_row_major());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_column_major(&self) -> bool {
        self.size() <= 1
            || strides_match(
                &self.shape,
                &self.strides,
                &column_major_strides(&self.shape),
            )
    }

    /// The typed view, if the value type is `V` (zero-copy).
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert!(t.downcast::<i32>().is_some());
    /// assert!(t.downcast::<f64>().is_none());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn downcast<V: Value>(&self) -> Option<DenseTensor<V>> {
        Some(DenseTensor {
            values: self.values.as_typed::<V>()?.clone(),
            any: self.clone(),
        })
    }
}

/// Strides only matter along dimensions longer than one.
fn strides_match(shape: &[usize], a: &[usize], b: &[usize]) -> bool {
    shape
        .iter()
        .zip(a.iter().zip(b))
        .all(|(&d, (x, y))| d <= 1 || x == y)
}

/// A dense strided tensor with values of type `V`.
///
/// ```
/// use arrow_sparse::DenseTensor;
/// let t = DenseTensor::<f32>::try_new(vec![2, 2], vec![1.0, 0.0, 0.0, 4.0].into())?;
/// assert_eq!(t.get(&[1, 1]), Some(4.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DenseTensor<V: Value> {
    any: AnyDense,
    values: ScalarBuffer<V>,
}

impl<V: Value> DenseTensor<V> {
    /// A row-major tensor.
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.get(&[1, 2]), Some(6));
    /// // 2 x 3 needs 6 values
    /// assert!(DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3].into()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(shape: Vec<usize>, values: ScalarBuffer<V>) -> Result<Self> {
        let strides = row_major_strides(&shape);
        Self::try_new_strided(shape, strides, values)
    }

    /// A tensor with explicit element strides.
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]] stored column-major
    /// let t = DenseTensor::<i32>::try_new_strided(vec![2, 3], vec![1, 2], vec![1, 4, 2, 5, 3, 6].into())?;
    /// assert_eq!(t.get(&[0, 2]), Some(3));
    /// // a zero stride along dimension 1 repeats one column (a broadcast)
    /// let b = DenseTensor::<i32>::try_new_strided(vec![2, 3], vec![1, 0], vec![7, 8].into())?;
    /// assert_eq!(b.get(&[1, 2]), Some(8));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new_strided(
        shape: Vec<usize>,
        strides: Vec<usize>,
        values: ScalarBuffer<V>,
    ) -> Result<Self> {
        let any = AnyDense::try_new(
            shape,
            strides,
            crate::buffer::ValueBuffer::from(values.clone()),
            &TensorOptions::default(),
        )?;
        Ok(DenseTensor { any, values })
    }

    /// Attach dimension names (one per dimension).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// let t = t.with_dim_names(vec!["x".into(), "y".into()])?;
    /// assert_eq!(t.dim_names(), &["x", "y"]);
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
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.any.shape
    }
    /// Number of dimensions.
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.ndim(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.any.shape.len()
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.any.dim_names
    }
    /// Element strides.
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.strides(), &[3, 1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn strides(&self) -> &[usize] {
        &self.any.strides
    }
    /// The value buffer (in storage order).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.values().as_ref(), &[1, 2, 3, 4, 5, 6]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ScalarBuffer<V> {
        &self.values
    }
    /// The type-erased tensor.
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.as_any().size(), 6);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn as_any(&self) -> &AnyDense {
        &self.any
    }

    /// The element at `index`, or `None` if the index is out of bounds.
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.get(&[1, 1]), Some(5));
    /// assert_eq!(t.get(&[2, 0]), None);
    /// assert_eq!(t.get(&[1]), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get(&self, index: &[usize]) -> Option<V> {
        if index.len() != self.ndim() {
            return None;
        }
        let mut off = 0usize;
        for ((&i, &d), &s) in index.iter().zip(self.shape()).zip(self.strides()) {
            if i >= d {
                return None;
            }
            off += i * s;
        }
        self.values.get(off).copied()
    }

    /// Visit every element in row-major logical order with its coordinates.
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // column-major storage, visited in row-major order
    /// let t = DenseTensor::<i32>::try_new_strided(vec![2, 2], vec![1, 2], vec![1, 3, 2, 4].into())?;
    /// let mut seen = Vec::new();
    /// t.for_each(|c, v| seen.push((c.to_vec(), v)))?;
    /// assert_eq!(seen, [(vec![0, 0], 1), (vec![0, 1], 2), (vec![1, 0], 3), (vec![1, 1], 4)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    ///
    /// Returns `Result` like every format's `for_each` (a dense walk itself cannot
    /// fail).
    pub fn for_each(&self, mut f: impl FnMut(&[usize], V)) -> Result<()> {
        let shape = self.shape();
        if shape.contains(&0) {
            return Ok(());
        }
        let strides = self.strides();
        let nd = shape.len();
        let mut idx = vec![0usize; nd];
        let mut off = 0usize;
        let last = nd - 1;
        loop {
            for i in 0..shape[last] {
                idx[last] = i;
                f(&idx, self.values[off + i * strides[last]]);
            }
            idx[last] = 0;
            // odometer carry over the leading dimensions
            let mut d = last;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                idx[d] += 1;
                off += strides[d];
                if idx[d] < shape[d] {
                    break;
                }
                off -= strides[d] * shape[d];
                idx[d] = 0;
            }
        }
    }
}

impl<V: Value> DenseTensor<V> {
    /// The non-zero elements as canonical row-major COO with index type `I`
    /// (what [`Convert::to_coo`](crate::Convert::to_coo) returns).
    pub(crate) fn coo_entries<I: Index>(&self) -> Result<CooTensor<V, I>> {
        let nd = self.ndim();
        let mut coords: Vec<I> = Vec::new();
        let mut values: Vec<V> = Vec::new();
        let mut bad: Option<usize> = None;
        self.for_each(|idx, v| {
            if !v.is_zero() {
                for &i in idx {
                    match I::try_from_usize(i) {
                        Some(x) => coords.push(x),
                        None => bad = Some(i),
                    }
                }
                values.push(v);
            }
        })?;
        if let Some(i) = bad {
            return Err(Error::overflow("coordinate", i.to_string(), I::TYPE.name()));
        }
        debug_assert_eq!(coords.len(), values.len() * nd);
        CooTensor::from_trusted_parts(
            self.shape(),
            coords.into(),
            values.into(),
            self.dim_names(),
            Some(true),
        )
    }

    /// The same tensor with row-major strides (a clone when it already has them).
    pub(crate) fn to_row_major(&self) -> Result<DenseTensor<V>> {
        if self.any.is_row_major() && self.values.len() == self.any.size() {
            return Ok(self.clone());
        }
        let mut out = Vec::new();
        out.try_reserve_exact(self.any.size()).map_err(|_| {
            Error::overflow("dense allocation", self.any.size().to_string(), "memory")
        })?;
        self.for_each(|_, v| out.push(v))?;
        DenseTensor::try_new(self.shape().to_vec(), out.into())?
            .with_dim_names(self.dim_names().to_vec())
    }
}

impl<V: Value> From<DenseTensor<V>> for AnyDense {
    fn from(t: DenseTensor<V>) -> Self {
        t.any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::Convert;

    #[test]
    fn strided_access_and_iteration() {
        // column-major 2x3: element (i, j) at i + 2j
        let t = DenseTensor::<i32>::try_new_strided(
            vec![2, 3],
            vec![1, 2],
            vec![0, 1, 2, 3, 4, 5].into(),
        )
        .unwrap();
        assert!(t.as_any().is_column_major());
        assert_eq!(t.get(&[1, 2]), Some(5));
        let mut seen = vec![];
        t.for_each(|i, v| seen.push((i.to_vec(), v))).unwrap();
        assert_eq!(seen[1], (vec![0, 1], 2));
        let rm = t.to_dense().unwrap();
        assert_eq!(rm.values().as_ref(), &[0, 2, 4, 1, 3, 5]);
        let coo = t.to_coo::<i8>().unwrap();
        assert_eq!(coo.nnz(), 5);
        assert!(coo.is_canonical());
    }

    #[test]
    fn bad_strides_are_errors() {
        assert!(DenseTensor::<u8>::try_new(vec![2, 3], vec![0; 5].into()).is_err());
        assert!(
            DenseTensor::<u8>::try_new_strided(vec![2, 3], vec![3, 1, 1], vec![0; 6].into())
                .is_err()
        );
        assert!(DenseTensor::<u8>::try_new(vec![usize::MAX / 2, 4], vec![0; 6].into()).is_err());
        assert!(DenseTensor::<u8>::try_new(vec![0, 4], vec![].into()).is_ok());
    }
}

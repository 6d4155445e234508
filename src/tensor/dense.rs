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

/// A dense tensor of any value type: shape, signed element strides, an element
/// offset and a value buffer.
///
/// The element at `index` is `values[offset + sum(strides[d] * index[d])]`, as in
/// numpy's strided arrays: a negative stride walks a dimension backwards from the
/// offset. Views ([`reverse`](Self::reverse), [`slice`](Self::slice)) change only
/// the shape, strides and offset; the buffer is shared.
///
/// ```
/// use arrow_sparse::{AnyDense, DenseTensor};
/// // [[1, 2, 3], [4, 5, 6]], row-major
/// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
/// assert_eq!((t.shape(), t.strides(), t.offset()), (&[2usize, 3][..], &[3isize, 1][..], 0));
/// assert_eq!(t.downcast::<i32>().unwrap().get(&[1, 0]), Some(4));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnyDense {
    shape: Vec<usize>,
    dim_names: Vec<String>,
    strides: Vec<isize>,
    offset: usize,
    values: ValueBuffer,
}

impl AnyDense {
    /// A dense tensor with non-negative element strides and no offset (the common
    /// case: row-major, column-major, any packed order, gaps or broadcasts).
    ///
    /// `strides` are in elements (not bytes). This delegates to
    /// [`try_new_with_offset`](Self::try_new_with_offset) with offset 0; a stride
    /// above `isize::MAX` is an [`Error::Overflow`].
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
        let strides = strides
            .iter()
            .map(|&s| {
                isize::try_from(s)
                    .map_err(|_| Error::overflow("dense stride", s.to_string(), "isize"))
            })
            .collect::<Result<Vec<isize>>>()?;
        Self::try_new_with_offset(shape, strides, 0, values, options)
    }

    /// The validating constructor: every dense tensor is built here.
    ///
    /// The element at `index` is `values[offset + sum(strides[d] * index[d])]`
    /// (numpy's strided layout; strides in elements, of either sign). Checks:
    /// ndim >= 1, one stride per dimension, the element count fits `usize`, the
    /// lowest and the highest element offset (over the extreme indices, computed
    /// with checked arithmetic) lie in `0..values.len()` (for an empty tensor:
    /// `offset <= values.len()`), and `dim_names` is empty or has one name per
    /// dimension. The check is O(ndim) whatever `validation` says.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, TensorOptions, ValueBuffer};
    /// // The GCS seed's example: memory "6 3 5 2 4 1", strides (-1, -2), offset 5
    /// // hold [[1, 2, 3], [4, 5, 6]].
    /// let memory = ValueBuffer::Int32(vec![6, 3, 5, 2, 4, 1].into());
    /// let opts = TensorOptions::default();
    /// let t = AnyDense::try_new_with_offset(vec![2, 3], vec![-1, -2], 5, memory.clone(), &opts)?;
    /// assert_eq!(t.downcast::<i32>().unwrap().get(&[0, 1]), Some(2));
    /// assert_eq!(t.element_offset(&[1, 2]), Some(0));
    /// // offset 4 would put element (1, 2) at memory location -1
    /// assert!(AnyDense::try_new_with_offset(vec![2, 3], vec![-1, -2], 4, memory, &opts).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new_with_offset(
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
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
        let (lo, hi) = reach(&shape, &strides, offset)?;
        let len = values.len() as i128;
        let inside = if size == 0 {
            offset <= values.len()
        } else {
            lo >= 0 && hi < len
        };
        if !inside {
            return Err(Error::Invariant {
                what: "dense values".into(),
                position: None,
                detail: if size == 0 {
                    format!(
                        "offset {offset} lies past the {} elements of the buffer",
                        values.len()
                    )
                } else {
                    format!(
                        "shape {shape:?} with strides {strides:?} and offset {offset} reaches elements {lo}..={hi}, but the buffer has {} elements",
                        values.len()
                    )
                },
            });
        }
        let dim_names = options.names_for(shape.len());
        check_dim_names(&dim_names, shape.len())?;
        Ok(AnyDense {
            shape,
            dim_names,
            strides,
            offset,
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
    /// Element strides (signed: a negative stride walks its dimension backwards).
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.strides(), &[3, 1]);
    /// assert_eq!(t.reverse(1)?.strides(), &[3, -1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }
    /// The element offset of index `(0, ..., 0)` in [`values`](Self::values).
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.offset(), 0);
    /// assert_eq!(t.reverse(1)?.offset(), 2); // element (0, 0) is now the 3
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// The value buffer (all of it: the elements lie where the offset and the
    /// strides say).
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
    /// Whether the elements are packed in row-major order: then they are
    /// `values[offset..offset + size]`.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert!(t.is_row_major());
    /// assert!(!t.is_column_major());
    /// // the second row alone is row-major too, at offset 3
    /// let row = t.slice(0, Some(1), None, 1)?;
    /// assert!(row.is_row_major() && row.offset() == 3);
    /// assert!(!t.reverse(0)?.is_row_major());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_row_major(&self) -> bool {
        self.size() <= 1
            || strides_match(&self.shape, &self.strides, &row_major_strides(&self.shape))
    }
    /// Whether the elements are packed in column-major order: then they are
    /// `values[offset..offset + size]`.
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

    /// The position in [`values`](Self::values) of the element at `index`
    /// (`offset + sum(strides[d] * index[d])`), or `None` outside the shape.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// assert_eq!(t.element_offset(&[1, 2]), Some(5));
    /// assert_eq!(t.reverse(0)?.element_offset(&[1, 2]), Some(2));
    /// assert_eq!(t.element_offset(&[2, 0]), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn element_offset(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.shape.len() {
            return None;
        }
        // in bounds, each partial sum lies between the lowest and the highest
        // element offset, both inside the buffer: no overflow
        let mut off = self.offset as isize;
        for ((&i, &d), &s) in index.iter().zip(&self.shape).zip(&self.strides) {
            if i >= d {
                return None;
            }
            off = off.checked_add((i as isize).checked_mul(s)?)?;
        }
        usize::try_from(off).ok()
    }

    /// The view with dimension `dim` reversed (numpy's `np.flip(a, dim)`): the
    /// stride negated and the offset moved to the old last index. No copy.
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?.into();
    /// let r = t.reverse(1)?.downcast::<i32>().unwrap(); // [[3, 2, 1], [6, 5, 4]]
    /// assert_eq!((r.get(&[0, 0]), r.get(&[1, 2])), (Some(3), Some(4)));
    /// assert_eq!(r.values().inner().as_ptr(), t.values().inner().as_ptr()); // shared
    /// assert!(t.reverse(2).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn reverse(&self, dim: usize) -> Result<AnyDense> {
        let n = self.check_dim(dim, "reverse")?;
        let s = self.strides[dim];
        let mut strides = self.strides.clone();
        let mut offset = self.offset;
        if n >= 2 && self.size() > 0 {
            // |s| * (n - 1) < values.len(): no overflow for a valid tensor
            let last = ((n - 1) as isize)
                .checked_mul(s)
                .ok_or_else(|| self.broken())?;
            offset = offset
                .checked_add_signed(last)
                .ok_or_else(|| self.broken())?;
            strides[dim] = s.checked_neg().ok_or_else(|| self.broken())?;
        } else if let Some(neg) = s.checked_neg() {
            // an extent of 0 or 1: nothing moves; the stride is negated as numpy does
            strides[dim] = neg;
        }
        self.view(self.shape.clone(), strides, offset)
    }

    /// The view `a[start:stop:step]` along dimension `dim`, with numpy's
    /// semantics: `step` of either sign (not 0); `start` / `stop` count from the
    /// end when negative and are clipped to the extent; `None` means the start
    /// or the end in the direction of `step`. No copy: the offset moves to the
    /// first index kept and the stride is multiplied by `step`.
    ///
    /// (For a DM tensor, [`AnyDm::slice`](crate::AnyDm::slice) takes resolved
    /// bounds and a positive step.)
    ///
    /// ```
    /// use arrow_sparse::{AnyDense, DenseTensor};
    /// let t: AnyDense = DenseTensor::<i32>::try_new(vec![6], vec![0, 1, 2, 3, 4, 5].into())?.into();
    /// let elements = |v: &AnyDense| (0..v.shape()[0]).map(|i| v.downcast::<i32>().unwrap().get(&[i]).unwrap()).collect::<Vec<_>>();
    /// assert_eq!(elements(&t.slice(0, Some(1), Some(5), 2)?), [1, 3]); // a[1:5:2]
    /// assert_eq!(elements(&t.slice(0, None, None, -2)?), [5, 3, 1]); // a[::-2]
    /// assert_eq!(elements(&t.slice(0, Some(-2), Some(0), -1)?), [4, 3, 2, 1]); // a[-2:0:-1]
    /// assert_eq!(t.slice(0, Some(4), Some(2), 1)?.shape(), &[0]); // a[4:2]: empty
    /// assert!(t.slice(0, None, None, 0).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn slice(
        &self,
        dim: usize,
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    ) -> Result<AnyDense> {
        let n = self.check_dim(dim, "slice")?;
        if step == 0 {
            return Err(Error::shape("slice step", "a non-zero step", "0"));
        }
        let (first, count) = slice_indices(n, start, stop, step);
        let mut shape = self.shape.clone();
        shape[dim] = count;
        let mut strides = self.strides.clone();
        let s = self.strides[dim];
        let mut offset = self.offset;
        let size_after = self.size() / n.max(1) * count;
        if size_after > 0 {
            // `first` is an index of the dimension: the offset stays inside the buffer
            let moved = (first as isize)
                .checked_mul(s)
                .ok_or_else(|| self.broken())?;
            offset = offset
                .checked_add_signed(moved)
                .ok_or_else(|| self.broken())?;
        }
        strides[dim] = match s.checked_mul(step) {
            Some(x) => x,
            // only possible when at most one index is kept: its stride is never used
            None if count <= 1 => s,
            None => return Err(self.broken()),
        };
        self.view(shape, strides, offset)
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

    /// The same tensor with new dimension names (one per dimension, or none).
    pub(crate) fn with_names(&self, names: Vec<String>) -> Result<AnyDense> {
        AnyDense::try_new_with_offset(
            self.shape.clone(),
            self.strides.clone(),
            self.offset,
            self.values.clone(),
            &TensorOptions::trusted().with_dim_names(names),
        )
    }

    /// The same layout over another buffer of the same length (any value type).
    pub(crate) fn with_values(&self, values: ValueBuffer) -> Result<AnyDense> {
        AnyDense::try_new_with_offset(
            self.shape.clone(),
            self.strides.clone(),
            self.offset,
            values,
            &TensorOptions::trusted().with_dim_names(self.dim_names.clone()),
        )
    }

    /// The extent of `dim`, or a shape error naming `op`.
    fn check_dim(&self, dim: usize, op: &str) -> Result<usize> {
        self.shape.get(dim).copied().ok_or_else(|| {
            Error::shape(
                format!("dense {op}"),
                format!("a dimension below {}", self.shape.len()),
                dim.to_string(),
            )
        })
    }

    /// A view over the same buffer, through the validating constructor.
    fn view(&self, shape: Vec<usize>, strides: Vec<isize>, offset: usize) -> Result<AnyDense> {
        AnyDense::try_new_with_offset(
            shape,
            strides,
            offset,
            self.values.clone(),
            &TensorOptions::trusted().with_dim_names(self.dim_names.clone()),
        )
    }

    /// Arithmetic that the constructor's checks rule out failed anyway.
    fn broken(&self) -> Error {
        Error::invariant(
            "dense view",
            None,
            format!(
                "shape {:?}, strides {:?}, offset {}: element offsets overflow",
                self.shape, self.strides, self.offset
            ),
        )
    }
}

/// The lowest and the highest element offset of `shape` under `strides` from
/// `offset` (over the extreme indices; `offset` itself for an empty tensor),
/// or an overflow error.
fn reach(shape: &[usize], strides: &[isize], offset: usize) -> Result<(i128, i128)> {
    let overflow = || {
        Error::overflow(
            "dense element offsets",
            format!("strides {strides:?} over shape {shape:?} from offset {offset}"),
            "i128",
        )
    };
    let (mut lo, mut hi) = (offset as i128, offset as i128);
    if shape.contains(&0) {
        return Ok((lo, hi));
    }
    for (&d, &s) in shape.iter().zip(strides) {
        // (d - 1) < 2^64 and |s| <= 2^63: the product fits i128
        let ext = (d as i128 - 1) * s as i128;
        if ext < 0 {
            lo = lo.checked_add(ext).ok_or_else(overflow)?;
        } else {
            hi = hi.checked_add(ext).ok_or_else(overflow)?;
        }
    }
    Ok((lo, hi))
}

/// numpy's `slice(start, stop, step).indices(n)` reduced to the first index and
/// the number of indices kept (`step != 0`).
fn slice_indices(
    n: usize,
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
) -> (usize, usize) {
    let n = n as i128;
    let step = step as i128;
    let (lower, upper) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let clip = |x: Option<isize>, default: i128| -> i128 {
        match x {
            None => default,
            Some(x) => {
                let x = x as i128;
                if x < 0 {
                    (x + n).max(lower)
                } else {
                    x.min(upper)
                }
            }
        }
    };
    let start = clip(start, if step > 0 { lower } else { upper });
    let stop = clip(stop, if step > 0 { upper } else { lower });
    let count = if step > 0 {
        if stop > start {
            (stop - start - 1) / step + 1
        } else {
            0
        }
    } else if start > stop {
        (start - stop - 1) / (-step) + 1
    } else {
        0
    };
    // with count > 0, start is an index of the dimension (0 <= start < n)
    (if count > 0 { start as usize } else { 0 }, count as usize)
}

/// Strides only matter along dimensions longer than one.
fn strides_match(shape: &[usize], a: &[isize], b: &[usize]) -> bool {
    shape
        .iter()
        .zip(a.iter().zip(b))
        .all(|(&d, (&x, &y))| d <= 1 || usize::try_from(x) == Ok(y))
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

    /// A tensor with explicit non-negative element strides and no offset.
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

    /// A tensor with signed element strides and an element offset: the element at
    /// `index` is `values[offset + sum(strides[d] * index[d])]` (see
    /// [`AnyDense::try_new_with_offset`]).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // the GCS seed's strided example
    /// let t = DenseTensor::<i32>::try_new_with_offset(vec![2, 3], vec![-1, -2], 5, vec![6, 3, 5, 2, 4, 1].into())?;
    /// assert_eq!((t.get(&[0, 0]), t.get(&[1, 2])), (Some(1), Some(6)));
    /// assert!(DenseTensor::<i32>::try_new_with_offset(vec![2, 3], vec![-1, -2], 6, vec![0; 6].into()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new_with_offset(
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
        values: ScalarBuffer<V>,
    ) -> Result<Self> {
        let any = AnyDense::try_new_with_offset(
            shape,
            strides,
            offset,
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
    /// Element strides (signed).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.strides(), &[3, 1]);
    /// assert_eq!(t.reverse(0)?.strides(), &[-3, 1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn strides(&self) -> &[isize] {
        &self.any.strides
    }
    /// The element offset of index `(0, ..., 0)` in [`values`](Self::values).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!((t.offset(), t.reverse(0)?.offset()), (0, 3));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn offset(&self) -> usize {
        self.any.offset
    }
    /// The value buffer (in storage order; all of it, see [`offset`](Self::offset)
    /// and [`strides`](Self::strides)).
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
    /// The elements in row-major order, in place (`values[offset..offset + size]`),
    /// when they are packed that way; else `None` (copy with
    /// [`Convert::to_dense`](crate::Convert::to_dense)).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// assert_eq!(t.as_row_major_slice(), Some(&[1, 2, 3, 4, 5, 6][..]));
    /// assert_eq!(t.slice(0, Some(1), None, 1)?.as_row_major_slice(), Some(&[4, 5, 6][..]));
    /// assert_eq!(t.reverse(1)?.as_row_major_slice(), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn as_row_major_slice(&self) -> Option<&[V]> {
        if !self.any.is_row_major() {
            return None;
        }
        let start = self.any.offset;
        self.values.get(start..start.checked_add(self.any.size())?)
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

    /// The view with dimension `dim` reversed (see [`AnyDense::reverse`]).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// let r = t.reverse(0)?; // [[4, 5, 6], [1, 2, 3]]
    /// assert_eq!((r.get(&[0, 0]), r.get(&[1, 2])), (Some(4), Some(3)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn reverse(&self, dim: usize) -> Result<Self> {
        Ok(DenseTensor {
            any: self.any.reverse(dim)?,
            values: self.values.clone(),
        })
    }

    /// The view `a[start:stop:step]` along `dim` (see [`AnyDense::slice`]).
    ///
    /// ```
    /// use arrow_sparse::DenseTensor;
    /// // [[1, 2, 3], [4, 5, 6]], row-major
    /// let t = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())?;
    /// let s = t.slice(1, None, None, -2)?; // a[:, ::-2] = [[3, 1], [6, 4]]
    /// assert_eq!((s.shape(), s.get(&[1, 1])), (&[2usize, 2][..], Some(4)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn slice(
        &self,
        dim: usize,
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    ) -> Result<Self> {
        Ok(DenseTensor {
            any: self.any.slice(dim, start, stop, step)?,
            values: self.values.clone(),
        })
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
        self.values.get(self.any.element_offset(index)?).copied()
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
    /// Returns `Result` like every format's `for_each` (a dense walk of a
    /// tensor built by the validating constructor cannot fail).
    pub fn for_each(&self, mut f: impl FnMut(&[usize], V)) -> Result<()> {
        let shape = self.shape();
        if shape.contains(&0) {
            return Ok(());
        }
        let strides = self.strides();
        let vals: &[V] = &self.values;
        let nd = shape.len();
        let mut idx = vec![0usize; nd];
        // Every offset below is an element's (between the lowest and the highest
        // element offset, inside the buffer): the odometer never steps past a
        // dimension's last index.
        let mut off = self.any.offset as isize;
        let last = nd - 1;
        let (n_last, s_last) = (shape[last], strides[last]);
        loop {
            for i in 0..n_last {
                idx[last] = i;
                let at = off + i as isize * s_last;
                let v = usize::try_from(at)
                    .ok()
                    .and_then(|k| vals.get(k))
                    .ok_or_else(|| self.any.broken())?;
                f(&idx, *v);
            }
            idx[last] = 0;
            // odometer carry over the leading dimensions
            let mut d = last;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                if idx[d] + 1 < shape[d] {
                    idx[d] += 1;
                    off += strides[d];
                    break;
                }
                off -= (shape[d] - 1) as isize * strides[d];
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

    /// The same tensor with row-major strides and no offset: a clone when it
    /// already has them, the packed elements sliced out of the buffer (no copy)
    /// when they are row-major at an offset or in a longer buffer, else a copy.
    pub(crate) fn to_row_major(&self) -> Result<DenseTensor<V>> {
        let size = self.any.size();
        if self.any.is_row_major() && self.any.offset == 0 && self.values.len() == size {
            return Ok(self.clone());
        }
        if self.as_row_major_slice().is_some() {
            let packed = self.values.slice(self.any.offset, size);
            return DenseTensor::try_new(self.shape().to_vec(), packed)?
                .with_dim_names(self.dim_names().to_vec());
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

    /// The GCS seed ("Strided memory layout"): shape (2, 3), strides (-1, -2),
    /// offset 5 over the memory "6 3 5 2 4 1" hold [[1, 2, 3], [4, 5, 6]], each
    /// element at the memory location the seed's table lists.
    #[test]
    fn the_gcs_seed_strided_example() {
        let t = DenseTensor::<i32>::try_new_with_offset(
            vec![2, 3],
            vec![-1, -2],
            5,
            vec![6, 3, 5, 2, 4, 1].into(),
        )
        .unwrap();
        // (indices, value, memory location) as in the seed's table
        let table = [
            ([0, 0], 1, 5),
            ([0, 1], 2, 3),
            ([0, 2], 3, 1),
            ([1, 0], 4, 4),
            ([1, 1], 5, 2),
            ([1, 2], 6, 0),
        ];
        for (index, value, location) in table {
            assert_eq!(t.get(&index), Some(value), "{index:?}");
            assert_eq!(
                t.as_any().element_offset(&index),
                Some(location),
                "{index:?}"
            );
        }
        // the seed's first layout: strides (3, 1), offset 0 over "1 2 3 4 5 6"
        let plain = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into()).unwrap();
        for (index, value, _) in table {
            assert_eq!(plain.get(&index), Some(value));
            assert_eq!(
                plain.as_any().element_offset(&index),
                Some(index[0] * 3 + index[1])
            );
        }
        // the same logical tensor: walk, COO, row-major copy
        let mut seen = Vec::new();
        t.for_each(|_, v| seen.push(v)).unwrap();
        assert_eq!(seen, [1, 2, 3, 4, 5, 6]);
        assert_eq!(t.to_dense().unwrap(), plain);
        assert_eq!(t.to_coo::<i64>().unwrap(), plain.to_coo::<i64>().unwrap());
        // it is not packed row-major (nor column-major) and not a slice of memory
        assert!(!t.as_any().is_row_major() && !t.as_any().is_column_major());
        assert_eq!(t.as_row_major_slice(), None);
        // both axes reversed: the column-major layout (1, 2) at offset 0 over
        // the same memory, [[6, 5, 4], [3, 2, 1]]
        let back = t.reverse(0).unwrap().reverse(1).unwrap();
        assert_eq!((back.strides(), back.offset()), (&[1isize, 2][..], 0));
        assert!(back.as_any().is_column_major());
        assert_eq!((back.get(&[0, 0]), back.get(&[1, 2])), (Some(6), Some(1)));
    }

    #[test]
    fn reversal_and_steps_are_views() {
        let base: Vec<i32> = (0..24).collect();
        let t = DenseTensor::<i32>::try_new(vec![2, 3, 4], base.clone().into()).unwrap();
        let r = t.reverse(2).unwrap();
        assert_eq!((r.strides(), r.offset()), (&[12isize, 4, -1][..], 3));
        assert_eq!(r.values().as_ptr(), t.values().as_ptr());
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    assert_eq!(r.get(&[i, j, k]), t.get(&[i, j, 3 - k]));
                }
            }
        }
        // reversing twice is the identity
        assert_eq!(r.reverse(2).unwrap(), t);
        // a[:, 2:0:-1, ::3]
        let s = t
            .slice(1, Some(2), Some(0), -1)
            .unwrap()
            .slice(2, None, None, 3)
            .unwrap();
        assert_eq!(s.shape(), &[2, 2, 2]);
        assert_eq!((s.strides(), s.offset()), (&[12isize, -4, 3][..], 8));
        assert_eq!(s.get(&[1, 1, 1]), Some(12 + 4 + 3));
        // a row-major slice at an offset converts without a copy
        let row = t.slice(0, Some(1), None, 1).unwrap();
        let d = row.to_dense().unwrap();
        assert_eq!(d.offset(), 0);
        assert_eq!(d.values().as_ptr(), t.values()[12..].as_ptr());
        assert_eq!(d.values().as_ref(), &base[12..]);
        // empty results keep a valid offset
        let e = t.slice(1, Some(3), None, 1).unwrap();
        assert_eq!((e.shape(), e.as_any().size()), (&[2usize, 0, 4][..], 0));
        assert!(e.reverse(0).is_ok() && e.reverse(1).is_ok());
        let mut n = 0;
        e.for_each(|_, _| n += 1).unwrap();
        assert_eq!(n, 0);
        // extents of 1: the stride is negated, nothing moves
        let one = DenseTensor::<i32>::try_new(vec![1, 4], vec![1, 2, 3, 4].into()).unwrap();
        let flipped = one.reverse(0).unwrap();
        assert_eq!(
            (flipped.strides(), flipped.offset()),
            (&[-4isize, 1][..], 0)
        );
        assert!(flipped.as_any().is_row_major());
        // errors: dimension, zero step
        assert!(t.reverse(3).is_err());
        assert!(t.slice(3, None, None, 1).is_err());
        assert!(t.slice(0, None, None, 0).is_err());
    }

    #[test]
    fn slice_bounds_follow_numpy() {
        // (start, stop, step) -> indices numpy keeps of range(5)
        type Case = (Option<isize>, Option<isize>, isize, &'static [usize]);
        let cases: [Case; 12] = [
            (None, None, 1, &[0, 1, 2, 3, 4]),
            (None, None, -1, &[4, 3, 2, 1, 0]),
            (Some(1), Some(4), 2, &[1, 3]),
            (Some(-1), None, -2, &[4, 2, 0]),
            (Some(-100), Some(100), 1, &[0, 1, 2, 3, 4]),
            (Some(100), Some(-100), -1, &[4, 3, 2, 1, 0]),
            (Some(3), Some(3), 1, &[]),
            (Some(3), Some(1), 1, &[]),
            (Some(1), Some(3), -1, &[]),
            (Some(-2), Some(-4), -1, &[3, 2]),
            (Some(isize::MIN), Some(isize::MAX), isize::MAX, &[0]),
            (Some(isize::MAX), Some(isize::MIN), isize::MIN, &[4]),
        ];
        let t = DenseTensor::<i32>::try_new(vec![5], vec![0, 1, 2, 3, 4].into()).unwrap();
        for (start, stop, step, want) in cases {
            let s = t.slice(0, start, stop, step).unwrap();
            let mut got = Vec::new();
            s.for_each(|_, v| got.push(v as usize)).unwrap();
            assert_eq!(got, want, "[{start:?}:{stop:?}:{step}]");
        }
    }

    #[test]
    fn hostile_layouts_are_errors() {
        let v = |n: usize| ValueBuffer::from(ScalarBuffer::from(vec![0u8; n]));
        let o = TensorOptions::default();
        let new = |shape: Vec<usize>, strides: Vec<isize>, offset: usize, n: usize| {
            AnyDense::try_new_with_offset(shape, strides, offset, v(n), &o)
        };
        // below 0, past the end, exactly at the ends
        assert!(new(vec![3], vec![-1], 1, 3).is_err());
        assert!(new(vec![3], vec![-1], 2, 3).is_ok());
        assert!(new(vec![3], vec![1], 1, 3).is_err());
        assert!(new(vec![3], vec![1], 0, 3).is_ok());
        assert!(new(vec![1], vec![0], 3, 3).is_err());
        // overflow of the reach in every direction
        assert!(new(vec![usize::MAX, 1], vec![isize::MAX, 0], 0, 8).is_err());
        assert!(new(vec![3, 3], vec![isize::MIN, isize::MIN], usize::MAX, 8).is_err());
        assert!(new(vec![2, 2, 2], vec![isize::MAX; 3], usize::MAX, 8).is_err());
        // any stride along an extent of 1 (never used)
        assert!(new(vec![1, 2], vec![isize::MIN, 1], 0, 2).is_ok());
        assert!(new(vec![1, 2], vec![isize::MAX, 1], 0, 2).is_ok());
        // empty tensors: the offset stays within (or at the end of) the buffer
        assert!(new(vec![0, 3], vec![-7, 9], 3, 3).is_ok());
        assert!(new(vec![0, 3], vec![1, 1], 4, 3).is_err());
        // usize strides past isize::MAX
        assert!(AnyDense::try_new(vec![1], vec![usize::MAX], v(1), &o).is_err());
        // views of extreme layouts never panic
        let t = new(vec![1, 2], vec![isize::MIN, 1], 0, 2).unwrap();
        assert!(t.reverse(0).is_ok());
        assert!(t.slice(0, None, None, isize::MAX).is_ok());
        assert!(t.slice(0, None, None, -1).is_ok());
        assert_eq!(t.element_offset(&[0, 1]), Some(1));
    }
}

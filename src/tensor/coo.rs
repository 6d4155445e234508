//! COO: a coordinate list (nnz x ndim coordinates, row- or column-major) and values.
//!
//! ```
//! use arrow_sparse::CooTensor;
//! let coo = CooTensor::<f64, i32>::from_entries(vec![2, 2], &[(vec![1, 1], 4.0), (vec![0, 1], 2.0)])?;
//! let sorted = coo.canonicalize()?; // lexicographic order, no duplicates
//! assert!(sorted.is_canonical());
//! assert_eq!((sorted.coord(0, 0), sorted.coord(0, 1), sorted.values()[0]), (0, 1, 2.0));
//! assert_eq!(sorted.get(&[1, 1]), Some(4.0));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::{EntryOrder, TensorOptions};
use std::cmp::Ordering;

use arrow_buffer::ScalarBuffer;

use super::validate::{Validation, check_dim_names, check_permutation, check_shape};
#[cfg(test)]
use super::{CompressedAxis, CsfTensor, CsxMatrix};
use super::{DenseTensor, recast};
use crate::buffer::{IndexBuffer, ValueBuffer, with_index_slice};
use crate::error::{Error, Result};
use crate::types::{Index, IndexType, Value, ValueType};

/// How the nnz x ndim coordinate matrix is laid out in its buffer.
///
/// ```
/// use arrow_sparse::{CooTensor, CoordLayout, EntryOrder};
/// // entries (0, 1) and (1, 0) of a 2 x 3 tensor, coordinates stored dimension by dimension
/// let t = CooTensor::<f64, i32>::try_new(vec![2, 3], CoordLayout::ColumnMajor, EntryOrder::Canonical, vec![0, 1, 1, 0].into(), vec![1.0, 2.0].into())?;
/// assert_eq!((t.coord(1, 0), t.coord(1, 1)), (1, 0));
/// assert_eq!(CoordLayout::default(), CoordLayout::RowMajor);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CoordLayout {
    /// Entry by entry: the coordinates of entry `k` are contiguous (what libarrow
    /// writes).
    #[default]
    RowMajor,
    /// Dimension by dimension: all coordinates along dimension `d` are contiguous.
    ColumnMajor,
}

/// A COO tensor of any value and index type.
///
/// ```
/// use arrow_sparse::{AnyCoo, CooTensor};
/// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
/// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
///     .into();
/// assert_eq!((t.shape(), t.nnz()), (&[2usize, 3][..], 3));
/// assert_eq!(t.downcast::<f64, i32>().unwrap().get(&[1, 2]), Some(3.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnyCoo {
    shape: Vec<usize>,
    dim_names: Vec<String>,
    coords: IndexBuffer,
    layout: CoordLayout,
    values: ValueBuffer,
    canonical: bool,
}

impl AnyCoo {
    /// The validating constructor: every COO tensor is built here.
    ///
    /// Checks: ndim >= 1, extents fit int64, `coords` holds nnz x ndim elements with
    /// nnz = `values.len()`, `dim_names` empty or one per dimension; with
    /// [`Validation::Full`] also that every coordinate is in bounds and, when
    /// `canonical` is set, that the entries are sorted lexicographically without
    /// duplicates.
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CoordLayout, EntryOrder, IndexBuffer, TensorOptions, Validation, ValueBuffer};
    /// // entries (0, 1) = 1 and (1, 0) = 2 of a 2 x 3 tensor, sorted: canonical
    /// let coords = IndexBuffer::Int64(vec![0i64, 1, 1, 0].into());
    /// let values = ValueBuffer::Float32(vec![1.0f32, 2.0].into());
    /// let t = AnyCoo::try_new(vec![2, 3], CoordLayout::RowMajor, EntryOrder::Canonical, coords, values.clone(), &TensorOptions::default())?;
    /// assert!(t.is_canonical());
    /// // the same entries in the other order are not canonical
    /// let swapped = IndexBuffer::Int64(vec![1i64, 0, 0, 1].into());
    /// assert!(AnyCoo::try_new(vec![2, 3], CoordLayout::RowMajor, EntryOrder::Canonical, swapped, values, &TensorOptions::default()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        layout: CoordLayout,
        order: EntryOrder,
        coords: IndexBuffer,
        values: ValueBuffer,
        options: &TensorOptions,
    ) -> Result<Self> {
        let canonical = order.is_canonical();
        if shape.is_empty() {
            return Err(Error::shape("COO tensor", "ndim >= 1", "ndim 0"));
        }
        check_shape(&shape, "COO tensor")?;
        let nnz = values.len();
        let expected = nnz.checked_mul(shape.len()).ok_or_else(|| {
            Error::overflow(
                "COO coordinate count",
                format!("{nnz} x {}", shape.len()),
                "usize",
            )
        })?;
        super::validate::check_len("coords", coords.len(), expected)?;
        let dim_names = options.names_for(shape.len());
        check_dim_names(&dim_names, shape.len())?;
        if options.validation() == Validation::Full {
            with_index_slice!(coords.as_slice(), s => {
                check_coords(s, layout, nnz, &shape)?;
                if canonical {
                    check_canonical(s, layout, nnz, shape.len())?;
                }
            });
        }
        Ok(AnyCoo {
            shape,
            dim_names,
            coords,
            layout,
            values,
            canonical,
        })
    }

    /// Extents.
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
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
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
    ///     .into();
    /// assert_eq!(t.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }
    /// The coordinate buffer (nnz x ndim elements).
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
    ///     .into();
    /// assert_eq!(t.coords(), &arrow_sparse::IndexBuffer::Int32(vec![1, 2, 0, 1, 1, 0].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn coords(&self) -> &IndexBuffer {
        &self.coords
    }
    /// Layout of the coordinate matrix.
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
    ///     .into();
    /// assert_eq!(t.layout(), arrow_sparse::CoordLayout::RowMajor);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn layout(&self) -> CoordLayout {
        self.layout
    }
    /// The value buffer.
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
    ///     .into();
    /// assert_eq!(t.values(), &arrow_sparse::ValueBuffer::Float64(vec![3.0, 1.0, 2.0].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ValueBuffer {
        &self.values
    }
    /// Whether the entries are sorted lexicographically with no duplicates.
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
    ///     .into();
    /// assert!(!t.is_canonical());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_canonical(&self) -> bool {
        self.canonical
    }
    /// Number of stored entries.
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
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
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
    ///     .into();
    /// assert_eq!(t.value_type(), arrow_sparse::ValueType::Float64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.values.data_type()
    }
    /// The coordinate type.
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
    ///     .into();
    /// assert_eq!(t.index_type(), arrow_sparse::IndexType::Int32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_type(&self) -> IndexType {
        self.coords.data_type()
    }

    /// The typed view, if the types are `V` and `I` (zero-copy).
    ///
    /// ```
    /// use arrow_sparse::{AnyCoo, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t: AnyCoo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?
    ///     .into();
    /// assert!(t.downcast::<f64, i32>().is_some());
    /// assert!(t.downcast::<f64, i64>().is_none());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn downcast<V: Value, I: Index>(&self) -> Option<CooTensor<V, I>> {
        Some(CooTensor {
            coords: self.coords.as_typed::<I>()?.clone(),
            values: self.values.as_typed::<V>()?.clone(),
            any: self.clone(),
        })
    }
}

#[inline]
fn coord_at<I: Index>(
    s: &[I],
    layout: CoordLayout,
    nnz: usize,
    ndim: usize,
    k: usize,
    d: usize,
) -> I {
    match layout {
        CoordLayout::RowMajor => s[k * ndim + d],
        CoordLayout::ColumnMajor => s[d * nnz + k],
    }
}

fn check_coords<I: Index>(s: &[I], layout: CoordLayout, nnz: usize, shape: &[usize]) -> Result<()> {
    let ndim = shape.len();
    let fail = |pos: usize, d: usize| {
        Err(Error::IndexOutOfBounds {
            buffer: format!("coords (dimension {d})"),
            position: pos,
            value: s[pos].wide(),
            bound: shape[d] as u64,
        })
    };
    match layout {
        CoordLayout::ColumnMajor => {
            for (d, &bound) in shape.iter().enumerate() {
                let col = &s[d * nnz..(d + 1) * nnz];
                let max = col.iter().fold(0usize, |m, x| m.max(x.as_usize()));
                if !col.is_empty() && max >= bound {
                    let p = col.iter().position(|x| x.as_usize() >= bound).unwrap_or(0);
                    return fail(d * nnz + p, d);
                }
            }
        }
        CoordLayout::RowMajor => {
            let mut max = vec![0usize; ndim];
            for row in s.chunks_exact(ndim) {
                for (m, x) in max.iter_mut().zip(row) {
                    *m = (*m).max(x.as_usize());
                }
            }
            if nnz > 0 && max.iter().zip(shape).any(|(m, b)| m >= b) {
                let p = s
                    .iter()
                    .enumerate()
                    .position(|(i, x)| x.as_usize() >= shape[i % ndim])
                    .unwrap_or(0);
                return fail(p, p % ndim);
            }
        }
    }
    Ok(())
}

fn compare_entries<I: Index>(
    s: &[I],
    layout: CoordLayout,
    nnz: usize,
    ndim: usize,
    a: usize,
    b: usize,
) -> Ordering {
    for d in 0..ndim {
        let o = coord_at(s, layout, nnz, ndim, a, d).cmp(&coord_at(s, layout, nnz, ndim, b, d));
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn check_canonical<I: Index>(s: &[I], layout: CoordLayout, nnz: usize, ndim: usize) -> Result<()> {
    for k in 1..nnz {
        if compare_entries(s, layout, nnz, ndim, k - 1, k) != Ordering::Less {
            return Err(Error::invariant(
                "COO canonical flag",
                Some(k),
                "the tensor is marked canonical but entries are not sorted lexicographically without duplicates",
            ));
        }
    }
    Ok(())
}

/// A COO tensor with values `V` and coordinates `I`.
///
/// ```
/// use arrow_sparse::{CooTensor, CoordLayout, EntryOrder};
/// let t = CooTensor::<f32, i32>::try_new(
///     vec![2, 3],
///     CoordLayout::RowMajor,
///     EntryOrder::Canonical,
///     vec![0, 1, 1, 2].into(), // entries (0,1) and (1,2), row-major
///     vec![1.5, -2.0].into(),
/// )?;
/// assert_eq!(t.coord(1, 1), 2);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CooTensor<V: Value, I: Index> {
    any: AnyCoo,
    coords: ScalarBuffer<I>,
    values: ScalarBuffer<V>,
}

impl<V: Value, I: Index> CooTensor<V, I> {
    /// Build and fully validate a COO tensor (see [`AnyCoo::try_new`]).
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, CoordLayout, EntryOrder};
    /// // entries (0, 1) = 1 and (1, 0) = 2 of a 2 x 3 tensor, row-major coordinates
    /// let t = CooTensor::<f64, i64>::try_new(vec![2, 3], CoordLayout::RowMajor, EntryOrder::Canonical, vec![0, 1, 1, 0].into(), vec![1.0, 2.0].into())?;
    /// assert_eq!(t.get(&[1, 0]), Some(2.0));
    /// // column 3 is out of bounds
    /// assert!(CooTensor::<f64, i64>::try_new(vec![2, 3], CoordLayout::RowMajor, EntryOrder::Any, vec![0, 3].into(), vec![1.0].into()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        layout: CoordLayout,
        order: EntryOrder,
        coords: ScalarBuffer<I>,
        values: ScalarBuffer<V>,
    ) -> Result<Self> {
        Self::try_new_with(
            shape,
            layout,
            order,
            coords,
            values,
            &TensorOptions::default(),
        )
    }

    /// Build with an explicit [`Validation`] level.
    ///
    /// ```
    /// use arrow_sparse::{CooTensor, CoordLayout, EntryOrder, TensorOptions, Validation};
    /// // column 3 is out of bounds: only full validation looks at the coordinates
    /// let build = |v| CooTensor::<f64, i64>::try_new_with(
    ///     vec![2, 3], CoordLayout::RowMajor, EntryOrder::Any, vec![0, 3].into(), vec![1.0].into(), &TensorOptions::default().with_validation(v));
    /// assert!(build(Validation::Full).is_err());
    /// assert!(build(Validation::Trusted).is_ok());
    /// ```
    pub fn try_new_with(
        shape: Vec<usize>,
        layout: CoordLayout,
        order: EntryOrder,
        coords: ScalarBuffer<I>,
        values: ScalarBuffer<V>,
        options: &TensorOptions,
    ) -> Result<Self> {
        let any = AnyCoo::try_new(
            shape,
            layout,
            order,
            crate::buffer::IndexBuffer::from(coords.clone()),
            crate::buffer::ValueBuffer::from(values.clone()),
            options,
        )?;
        Ok(CooTensor {
            any,
            coords,
            values,
        })
    }

    /// A row-major COO tensor from parts this crate computed itself (O(ndim)
    /// structural checks only). `canonical: None` computes the flag (O(nnz·ndim));
    /// empty `dim_names` leave the dimensions unnamed.
    pub(crate) fn from_trusted_parts(
        shape: &[usize],
        coords: ScalarBuffer<I>,
        values: ScalarBuffer<V>,
        dim_names: &[String],
        canonical: Option<bool>,
    ) -> Result<Self> {
        let canonical = match canonical {
            Some(c) => c,
            None => {
                check_canonical(&coords, CoordLayout::RowMajor, values.len(), shape.len()).is_ok()
            }
        };
        let t = Self::try_new_with(
            shape.to_vec(),
            CoordLayout::RowMajor,
            EntryOrder::from(canonical),
            coords,
            values,
            &TensorOptions::trusted(),
        )?;
        if dim_names.is_empty() {
            return Ok(t);
        }
        t.with_dim_names(dim_names.to_vec())
    }

    /// Build from `(coordinates, value)` pairs, in the given order (not canonical
    /// unless you call [`canonicalize`](Self::canonicalize)).
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// let t = CooTensor::<i32, i16>::from_entries(vec![2, 3], &[(vec![1, 2], 7), (vec![0, 0], 1)])?;
    /// assert_eq!((t.nnz(), t.get(&[1, 2])), (2, Some(7)));
    /// assert!(!t.is_canonical()); // kept in the given order
    /// // every entry needs one coordinate per dimension
    /// assert!(CooTensor::<i32, i16>::from_entries(vec![2, 3], &[(vec![1], 7)]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_entries(shape: Vec<usize>, entries: &[(Vec<usize>, V)]) -> Result<Self> {
        let ndim = shape.len();
        let mut coords = Vec::with_capacity(entries.len() * ndim);
        for (c, _) in entries {
            if c.len() != ndim {
                return Err(Error::shape(
                    "entry coordinates",
                    format!("{ndim} coordinates"),
                    format!("{}", c.len()),
                ));
            }
            for &x in c {
                coords.push(
                    I::try_from_usize(x).ok_or_else(|| {
                        Error::overflow("coordinate", x.to_string(), I::TYPE.name())
                    })?,
                );
            }
        }
        let values: Vec<V> = entries.iter().map(|e| e.1).collect();
        Self::try_new(
            shape,
            CoordLayout::RowMajor,
            EntryOrder::Any,
            coords.into(),
            values.into(),
        )
    }

    /// Attach dimension names (one per dimension).
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// let t = t.with_dim_names(vec!["i".into(), "j".into()])?;
    /// assert_eq!(t.dim_names(), &["i", "j"]);
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
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert_eq!(t.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.any.shape
    }
    /// Number of dimensions.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert_eq!(t.ndim(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.any.shape.len()
    }
    /// Number of stored entries.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert_eq!(t.nnz(), 3);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert_eq!(t.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.any.dim_names
    }
    /// The coordinate buffer.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// // row-major: the coordinates of each entry together
    /// assert_eq!(t.coords().as_ref(), &[1, 2, 0, 1, 1, 0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn coords(&self) -> &ScalarBuffer<I> {
        &self.coords
    }
    /// The layout of the coordinate buffer.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert_eq!(t.layout(), arrow_sparse::CoordLayout::RowMajor);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn layout(&self) -> CoordLayout {
        self.any.layout
    }
    /// The values.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert_eq!(t.values().as_ref(), &[3.0, 1.0, 2.0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ScalarBuffer<V> {
        &self.values
    }
    /// Whether the entries are sorted lexicographically without duplicates.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert!(!t.is_canonical());
    /// assert!(t.canonicalize()?.is_canonical());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_canonical(&self) -> bool {
        self.any.canonical
    }
    /// The type-erased tensor.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert_eq!(t.as_any().index_type(), arrow_sparse::IndexType::Int32);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn as_any(&self) -> &AnyCoo {
        &self.any
    }

    /// Coordinate of entry `k` along dimension `d` (panics if out of range, like
    /// slice indexing).
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// // entry 0 is (1, 2)
    /// assert_eq!((t.coord(0, 0), t.coord(0, 1)), (1, 2));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    #[inline]
    pub fn coord(&self, k: usize, d: usize) -> usize {
        coord_at(&self.coords, self.any.layout, self.nnz(), self.ndim(), k, d).as_usize()
    }

    /// Coordinate of entry `k` along dimension `d`, checked against the shape: a
    /// tensor built with [`Validation::Trusted`] may hold negative or out-of-range
    /// coordinates, which must not be used as offsets.
    fn checked_coord(&self, k: usize, d: usize) -> Result<usize> {
        let (nnz, ndim) = (self.nnz(), self.ndim());
        let x = coord_at(&self.coords, self.any.layout, nnz, ndim, k, d);
        match x.index() {
            Some(c) if c < self.any.shape[d] => Ok(c),
            _ => Err(Error::IndexOutOfBounds {
                buffer: format!("coords (dimension {d})"),
                position: match self.any.layout {
                    CoordLayout::RowMajor => k * ndim + d,
                    CoordLayout::ColumnMajor => d * nnz + k,
                },
                value: x.wide(),
                bound: self.any.shape[d] as u64,
            }),
        }
    }

    /// The entry positions sorted (stably) by their coordinates taken in `order`
    /// (a permutation of the dimensions). Duplicates keep their storage order.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// // by row, then column: (0, 1), (1, 0), (1, 2)
    /// assert_eq!(t.sort_permutation(&[0, 1])?, [1, 2, 0]);
    /// // by column, then row: (1, 0), (0, 1), (1, 2)
    /// assert_eq!(t.sort_permutation(&[1, 0])?, [2, 1, 0]);
    /// assert!(t.sort_permutation(&[0, 0]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn sort_permutation(&self, order: &[usize]) -> Result<Vec<usize>> {
        check_permutation("sort order", order, self.ndim())?;
        let mut perm: Vec<usize> = (0..self.nnz()).collect();
        let (s, layout, nnz, ndim) = (&self.coords[..], self.any.layout, self.nnz(), self.ndim());
        perm.sort_by(|&a, &b| {
            for &d in order {
                let o =
                    coord_at(s, layout, nnz, ndim, a, d).cmp(&coord_at(s, layout, nnz, ndim, b, d));
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
        Ok(perm)
    }

    /// [`canonicalize`](Self::canonicalize) by a comparison sort: the reference
    /// the kernel is tested against.
    #[cfg(test)]
    pub(crate) fn canonicalize_by_comparison(&self) -> Result<Self> {
        if self.is_canonical() && self.layout() == CoordLayout::RowMajor {
            return Ok(self.clone());
        }
        let ndim = self.ndim();
        let order: Vec<usize> = (0..ndim).collect();
        let perm = self.sort_permutation(&order)?;
        let mut coords: Vec<I> = Vec::with_capacity(self.coords.len());
        let mut values: Vec<V> = Vec::with_capacity(self.nnz());
        let (s, layout, nnz) = (&self.coords[..], self.any.layout, self.nnz());
        let mut prev: Option<usize> = None;
        for &k in &perm {
            let dup = prev
                .is_some_and(|p| compare_entries(s, layout, nnz, ndim, p, k) == Ordering::Equal);
            if dup {
                let last = values.len() - 1;
                values[last] = values[last].checked_sum(self.values[k]).ok_or_else(|| {
                    Error::overflow(
                        "sum of duplicate entries",
                        format!("{:?} + {:?}", values[last], self.values[k]),
                        V::TYPE.name(),
                    )
                })?;
            } else {
                coords.extend((0..ndim).map(|d| coord_at(s, layout, nnz, ndim, k, d)));
                values.push(self.values[k]);
            }
            prev = Some(k);
        }
        Self::from_trusted_parts(
            self.shape(),
            coords.into(),
            values.into(),
            self.dim_names(),
            Some(true),
        )
    }

    /// Same tensor with coordinates converted to `J` (checked).
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// let narrow = t.cast_indices::<i8>()?;
    /// assert_eq!(narrow.coords().as_ref(), &[1i8, 2, 0, 1, 1, 0]);
    /// // coordinate 299 does not fit int8
    /// let wide = CooTensor::<f64, i32>::from_entries(vec![300], &[(vec![299], 1.0)])?;
    /// assert!(wide.cast_indices::<i8>().is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn cast_indices<J: Index>(&self) -> Result<CooTensor<V, J>> {
        let coords = recast::<I, J>(&self.coords, "COO coordinates")?;
        CooTensor::try_new_with(
            self.shape().to_vec(),
            self.layout(),
            EntryOrder::from(self.is_canonical()),
            coords,
            self.values.clone(),
            &TensorOptions::trusted(),
        )?
        .with_dim_names(self.dim_names().to_vec())
    }

    pub(crate) fn coo_to_dense(&self) -> Result<DenseTensor<V>> {
        let size = check_shape(self.shape(), "dense tensor")?.ok_or_else(|| {
            Error::overflow(
                "dense element count",
                format!("{:?}", self.shape()),
                "usize",
            )
        })?;
        let mut out: Vec<V> = Vec::new();
        out.try_reserve_exact(size)
            .map_err(|_| Error::overflow("dense allocation", size.to_string(), "memory"))?;
        out.resize(size, V::ZERO);
        let strides = super::dense::row_major_strides(self.shape());
        for k in 0..self.nnz() {
            // checked: a tensor built with Validation::Trusted may hold out-of-range
            // coordinates; in-range ones keep the offset below `size`
            let off: usize = (0..self.ndim())
                .map(|d| self.checked_coord(k, d).map(|c| c * strides[d]))
                .sum::<Result<usize>>()?;
            out[off] = out[off].checked_sum(self.values[k]).ok_or_else(|| {
                Error::overflow(
                    "sum of duplicate entries",
                    format!("{:?}", self.values[k]),
                    V::TYPE.name(),
                )
            })?;
        }
        DenseTensor::try_new(self.shape().to_vec(), out.into())?
            .with_dim_names(self.dim_names().to_vec())
    }

    #[cfg(test)]
    pub(crate) fn coo_to_csx<P: Index>(&self, axis: CompressedAxis) -> Result<CsxMatrix<V, I, P>> {
        if self.ndim() != 2 {
            return Err(Error::shape(
                "CSR/CSC conversion",
                "a 2-D tensor",
                format!("{}-D", self.ndim()),
            ));
        }
        let (major, minor) = match axis {
            CompressedAxis::Row => (0, 1),
            CompressedAxis::Column => (1, 0),
        };
        let perm = self.sort_permutation(&[major, minor])?;
        let extent = self.shape()[major];
        // fallible: the extent comes from the shape (up to i64::MAX), not from data
        let alloc_err = || Error::overflow("indptr allocation", (extent + 1).to_string(), "memory");
        let mut counts: Vec<usize> = Vec::new();
        counts
            .try_reserve_exact(extent + 1)
            .map_err(|_| alloc_err())?;
        counts.resize(extent + 1, 0);
        for k in 0..self.nnz() {
            counts[self.checked_coord(k, major)? + 1] += 1;
        }
        let mut indptr: Vec<P> = Vec::new();
        indptr
            .try_reserve_exact(extent + 1)
            .map_err(|_| alloc_err())?;
        let mut acc = 0usize;
        for c in counts {
            acc += c;
            indptr.push(
                P::try_from_usize(acc)
                    .ok_or_else(|| Error::overflow("indptr", acc.to_string(), P::TYPE.name()))?,
            );
        }
        let indices: Vec<I> = perm
            .iter()
            .map(|&k| coord_at(&self.coords, self.layout(), self.nnz(), 2, k, minor))
            .collect();
        let values: Vec<V> = perm.iter().map(|&k| self.values[k]).collect();
        CsxMatrix::try_new_with(
            self.shape().to_vec(),
            axis,
            indptr.into(),
            indices.into(),
            values.into(),
            &TensorOptions::trusted(),
        )?
        .with_dim_names(self.dim_names().to_vec())
    }

    #[cfg(test)]
    pub(crate) fn coo_to_csf<P: Index>(&self, axis_order: &[usize]) -> Result<CsfTensor<V, I, P>> {
        let n = self.ndim();
        let perm = self.sort_permutation(axis_order)?;
        let mut indptr: Vec<Vec<P>> = vec![Vec::new(); n - 1];
        let mut indices: Vec<Vec<I>> = vec![Vec::new(); n];
        let (s, layout, nnz) = (&self.coords[..], self.layout(), self.nnz());
        let to_p = |x: usize| {
            P::try_from_usize(x)
                .ok_or_else(|| Error::overflow("CSF indptr", x.to_string(), P::TYPE.name()))
        };
        let mut prev: Option<usize> = None;
        for &k in &perm {
            let first_diff = match prev {
                None => 0,
                Some(p) => axis_order
                    .iter()
                    .position(|&d| {
                        coord_at(s, layout, nnz, n, p, d) != coord_at(s, layout, nnz, n, k, d)
                    })
                    .unwrap_or(n - 1),
            };
            for lev in first_diff..n {
                if lev < n - 1 {
                    indptr[lev].push(to_p(indices[lev + 1].len())?);
                }
                indices[lev].push(coord_at(s, layout, nnz, n, k, axis_order[lev]));
            }
            prev = Some(k);
        }
        for lev in 0..n - 1 {
            indptr[lev].push(to_p(indices[lev + 1].len())?);
        }
        let values: Vec<V> = perm.iter().map(|&k| self.values[k]).collect();
        CsfTensor::try_new_with(
            self.shape().to_vec(),
            axis_order.to_vec(),
            indptr.into_iter().map(ScalarBuffer::from).collect(),
            indices.into_iter().map(ScalarBuffer::from).collect(),
            values.into(),
            &TensorOptions::trusted(),
        )?
        .with_dim_names(self.dim_names().to_vec())
    }
}

impl<V: Value, I: Index> CooTensor<V, I> {
    /// Visit every stored entry in storage order with its coordinates.
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// let mut entries = Vec::new();
    /// t.for_each(|c, v| entries.push((c.to_vec(), v)))?;
    /// assert_eq!(entries, [(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    ///
    /// Returns `Result` like every format's `for_each` (a COO walk itself cannot
    /// fail).
    pub fn for_each(&self, mut f: impl FnMut(&[usize], V)) -> Result<()> {
        let mut c = vec![0usize; self.ndim()];
        for k in 0..self.nnz() {
            for (d, x) in c.iter_mut().enumerate() {
                *x = self.coord(k, d);
            }
            f(&c, self.values[k]);
        }
        Ok(())
    }

    /// The sum of the stored entries at `coords` (zero when none), or `None` when
    /// the coordinates are outside the shape. O(nnz) unless the tensor is
    /// canonical (then a binary search).
    ///
    /// ```
    /// use arrow_sparse::CooTensor;
    /// // [[0, 1, 0], [2, 0, 3]], entries in no particular order
    /// let t = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 1.0), (vec![1, 0], 2.0)])?;
    /// assert_eq!(t.get(&[1, 0]), Some(2.0));
    /// assert_eq!(t.get(&[0, 0]), Some(0.0));
    /// assert_eq!(t.get(&[0, 3]), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get(&self, coords: &[usize]) -> Option<V> {
        if coords.len() != self.ndim() || coords.iter().zip(self.shape()).any(|(c, d)| c >= d) {
            return None;
        }
        let row = |k: usize| (0..self.ndim()).map(move |d| self.coord(k, d));
        if self.is_canonical() {
            let (mut lo, mut hi) = (0, self.nnz());
            while lo < hi {
                let mid = (lo + hi) / 2;
                match row(mid).cmp(coords.iter().copied()) {
                    Ordering::Less => lo = mid + 1,
                    Ordering::Greater => hi = mid,
                    Ordering::Equal => return Some(self.values[mid]),
                }
            }
            return Some(V::ZERO);
        }
        let mut acc = V::ZERO;
        for k in 0..self.nnz() {
            if row(k).eq(coords.iter().copied()) {
                acc = acc.checked_sum(self.values[k]).unwrap_or(acc);
            }
        }
        Some(acc)
    }
}

impl<V: Value, I: Index> CooTensor<V, I> {
    /// All stored entries as row-major COO with index type `J`, in storage order
    /// (what [`Convert::to_coo`](crate::Convert::to_coo) returns).
    pub(crate) fn coo_entries<J: Index>(&self) -> Result<CooTensor<V, J>> {
        let coords = match self.layout() {
            CoordLayout::RowMajor => recast::<I, J>(&self.coords, "COO coordinates")?,
            CoordLayout::ColumnMajor => {
                let (nnz, ndim) = (self.nnz(), self.ndim());
                let mut out = Vec::with_capacity(nnz * ndim);
                for k in 0..nnz {
                    for d in 0..ndim {
                        let x = self.coord(k, d);
                        out.push(J::try_from_usize(x).ok_or_else(|| {
                            Error::overflow("coordinate", x.to_string(), J::TYPE.name())
                        })?);
                    }
                }
                out.into()
            }
        };
        CooTensor::from_trusted_parts(
            self.shape(),
            coords,
            self.values.clone(),
            self.dim_names(),
            Some(self.is_canonical()),
        )
    }
}

impl<V: Value, I: Index> From<CooTensor<V, I>> for AnyCoo {
    fn from(t: CooTensor<V, I>) -> Self {
        t.any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::Convert;

    #[test]
    fn trusted_out_of_range_coordinates_are_errors_in_conversions() {
        // accepted by Validation::Trusted: a negative and an out-of-range coordinate
        let t = CooTensor::<f32, i64>::try_new_with(
            vec![2, 3],
            CoordLayout::RowMajor,
            EntryOrder::Any,
            vec![0, 1, -1, 7].into(),
            vec![1.0, 2.0].into(),
            &TensorOptions::trusted(),
        )
        .unwrap();
        let e = t.to_dense().unwrap_err();
        assert!(
            matches!(
                e,
                Error::IndexOutOfBounds {
                    position: 2,
                    value: -1,
                    bound: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = t.to_csx::<i64, i64>(CompressedAxis::Row).unwrap_err();
        assert!(
            matches!(e, Error::IndexOutOfBounds { value: -1, .. }),
            "{e:?}"
        );
        let e = t.to_csx::<i64, i64>(CompressedAxis::Column).unwrap_err();
        assert!(
            matches!(
                e,
                Error::IndexOutOfBounds {
                    value: 7,
                    bound: 3,
                    ..
                }
            ),
            "{e:?}"
        );
        // an indptr that cannot be allocated is an error, not a capacity-overflow panic
        let huge =
            CooTensor::<f32, i64>::from_entries(vec![i64::MAX as usize, 2], &[(vec![0, 1], 1.0)])
                .unwrap();
        assert!(matches!(
            huge.to_csx::<i64, i64>(CompressedAxis::Row),
            Err(Error::Allocation { .. })
        ));
        assert!(huge.to_csx::<i64, i64>(CompressedAxis::Column).is_ok());
    }

    fn sample() -> CooTensor<i32, i16> {
        CooTensor::from_entries(
            vec![2, 3, 4],
            &[
                (vec![1, 2, 3], 4),
                (vec![0, 0, 1], 1),
                (vec![1, 2, 3], 5),
                (vec![0, 2, 0], 2),
            ],
        )
        .unwrap()
    }

    #[test]
    fn canonicalize_sorts_and_sums() {
        let c = sample().canonicalize().unwrap();
        assert!(c.is_canonical());
        assert_eq!(c.nnz(), 3);
        assert_eq!(c.values().as_ref(), &[1, 2, 9]);
        assert_eq!(c.coords().as_ref(), &[0, 0, 1, 0, 2, 0, 1, 2, 3]);
    }

    #[test]
    fn canonical_flag_is_checked() {
        let r = CooTensor::<f32, i32>::try_new(
            vec![3],
            CoordLayout::RowMajor,
            EntryOrder::Canonical,
            vec![2, 1].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(r, Err(Error::Invariant { .. })));
        let dup = CooTensor::<f32, i32>::try_new(
            vec![3],
            CoordLayout::RowMajor,
            EntryOrder::Canonical,
            vec![1, 1].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(dup.is_err());
    }

    #[test]
    fn out_of_bounds_and_lengths() {
        let r = CooTensor::<f32, i32>::try_new(
            vec![2, 2],
            CoordLayout::RowMajor,
            EntryOrder::Any,
            vec![0, 1, 2, 0].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(
            r,
            Err(Error::IndexOutOfBounds {
                position: 2,
                value: 2,
                bound: 2,
                ..
            })
        ));
        let r = CooTensor::<f32, i32>::try_new(
            vec![2, 2],
            CoordLayout::ColumnMajor,
            EntryOrder::Any,
            vec![0, 1, -1, 0].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(r, Err(Error::IndexOutOfBounds { value: -1, .. })));
        let r = CooTensor::<f32, i32>::try_new(
            vec![2, 2],
            CoordLayout::RowMajor,
            EntryOrder::Any,
            vec![0, 1, 1].into(),
            vec![1.0, 2.0].into(),
        );
        assert!(matches!(r, Err(Error::Length { .. })));
    }

    #[test]
    fn column_major_reads_the_same() {
        // entries (0,2) and (1,0) stored column-major: dim0 = [0,1], dim1 = [2,0]
        let t = CooTensor::<u8, u32>::try_new(
            vec![2, 3],
            CoordLayout::ColumnMajor,
            EntryOrder::Canonical,
            vec![0, 1, 2, 0].into(),
            vec![7, 8].into(),
        )
        .unwrap();
        assert_eq!((t.coord(0, 1), t.coord(1, 0)), (2, 1));
        let rm = t.to_coo::<i64>().unwrap();
        assert_eq!(rm.coords().as_ref(), &[0, 2, 1, 0]);
    }

    #[test]
    fn csf_and_csx_round_trip() {
        let t = sample();
        for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
            let csf = t.to_csf::<i16, i32>(&order).unwrap();
            let back = csf.to_coo::<i16>().unwrap().canonicalize().unwrap();
            assert_eq!(back, t.canonicalize().unwrap());
        }
        let m = CooTensor::<f64, i64>::from_entries(
            vec![3, 2],
            &[(vec![2, 1], 1.0), (vec![0, 1], 2.0), (vec![2, 0], 3.0)],
        )
        .unwrap();
        for axis in [CompressedAxis::Row, CompressedAxis::Column] {
            let csx = m.to_csx::<i64, i8>(axis).unwrap();
            assert_eq!(
                csx.to_coo::<i64>().unwrap().canonicalize().unwrap(),
                m.canonicalize().unwrap()
            );
        }
        assert!(t.to_csx::<i16, i16>(CompressedAxis::Row).is_err());
    }
}

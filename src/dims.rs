//! Dimension mapping: the N-D <-> M-D index maps behind GCS and DM tensors, and the
//! no-copy views (permute, select, slice, take, reshape, broadcast, rotate) of DM
//! tensors.
//!
//! Names follow the GCS / DM proposals (`../shared/SEEDS`): a [`DimMap`] has a
//! logical `shape` (N dimensions), `dimensions` (a permutation of 0..N) and
//! `partitioning` (M-1 split points into `dimensions`). Part `g` holds the
//! dimensions `dimensions[p[g]..p[g+1]]` (with p\[0\] = 0 and p\[M\] = N); its
//! *strides* are the row-major strides of those dimensions' extents, and its
//! *reduced extent* is their product.
//!
//! Invariants of a [`DimMap`], checked by [`DimMap::try_new`]:
//! 1. every extent is at most `i64::MAX`;
//! 2. `dimensions` is a permutation of `0..N`;
//! 3. `partitioning` is non-decreasing with every point in `0..=N` (an empty part has
//!    extent 1: it lets a 1-D tensor be stored as an `n x 1` matrix);
//! 4. every reduced extent (product of a part's extents) fits `usize` and
//!    `i64::MAX`.
//!
//! ```
//! use arrow_sparse::dims::DimMap;
//! // The seed's strides example.
//! let m = DimMap::try_new(vec![2, 3, 4, 5, 6], vec![2, 4, 1, 3, 0], vec![3])?;
//! assert_eq!(m.strides(0), &[18, 3, 1]);
//! assert_eq!(m.strides(1), &[2, 1]);
//! assert_eq!(m.reduced_shape(), &[4 * 6 * 3, 5 * 2]);
//! let mut r = [0; 2];
//! m.reduce(&[1, 2, 3, 4, 5], &mut r)?;
//! let mut back = [0; 5];
//! m.promote(&r, &mut back)?;
//! assert_eq!(back, [1, 2, 3, 4, 5]);
//! # Ok::<(), arrow_sparse::Error>(())
//! ```
//!
//! ```
//! use arrow_sparse::dims::DimMap;
//! // shape (2, 3, 4) reduced to 2-D: rows = dimension 2, columns = dimensions (0, 1)
//! let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
//! assert_eq!(map.reduced_shape(), &[4, 6]);
//! let mut reduced = [0; 2];
//! map.reduce(&[1, 2, 3], &mut reduced)?;
//! assert_eq!(reduced, [3, 1 * 3 + 2]);
//! let mut back = [0; 3];
//! map.promote(&reduced, &mut back)?;
//! assert_eq!(back, [1, 2, 3]);
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::types::IndexType;

/// An N-D to M-D dimension map (see the module docs for its invariants).
///
/// ```
/// use arrow_sparse::dims::DimMap;
/// // shape (2, 3) stored transposed: rows = dimension 1, columns = dimension 0
/// let map = DimMap::try_new(vec![2, 3], vec![1, 0], vec![1])?;
/// assert_eq!(map.reduced_shape(), &[3, 2]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DimMap {
    shape: Vec<usize>,
    dimensions: Vec<usize>,
    partitioning: Vec<usize>,
    /// Per part: the strides of its dimensions, in `dimensions` order.
    strides: Vec<Vec<usize>>,
    reduced: Vec<usize>,
}

impl DimMap {
    /// Build and check a map.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.reduced_shape(), &[4, 6]);
    /// // `dimensions` must be a permutation of 0..3
    /// assert!(DimMap::try_new(vec![2, 3, 4], vec![0, 0, 1], vec![1]).is_err());
    /// // split points must lie in 0..=3
    /// assert!(DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![4]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        dimensions: Vec<usize>,
        partitioning: Vec<usize>,
    ) -> Result<Self> {
        let n = shape.len();
        check_shape(&shape, "dimension map")?;
        check_permutation("dimensions", &dimensions, n)?;
        let mut prev = 0;
        for (i, &p) in partitioning.iter().enumerate() {
            if p < prev || p > n {
                return Err(Error::invariant(
                    "partitioning",
                    Some(i),
                    format!(
                        "split points must be non-decreasing and within 0..={n}, found {partitioning:?}"
                    ),
                ));
            }
            prev = p;
        }
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(partitioning.iter().copied())
            .chain(std::iter::once(n))
            .collect();
        let mut strides = Vec::with_capacity(bounds.len() - 1);
        let mut reduced = Vec::with_capacity(bounds.len() - 1);
        for w in bounds.windows(2) {
            let dims = &dimensions[w[0]..w[1]];
            let mut s = vec![1usize; dims.len()];
            let mut acc = 1usize;
            for (k, &d) in dims.iter().enumerate().rev() {
                s[k] = acc;
                acc = acc
                    .checked_mul(shape[d])
                    .filter(|&x| x <= MAX_EXTENT)
                    .ok_or_else(|| {
                        Error::overflow(
                            "reduced extent",
                            format!(
                                "product of extents {:?}",
                                dims.iter().map(|&d| shape[d]).collect::<Vec<_>>()
                            ),
                            "int64",
                        )
                    })?;
            }
            strides.push(s);
            reduced.push(acc);
        }
        Ok(DimMap {
            shape,
            dimensions,
            partitioning,
            strides,
            reduced,
        })
    }

    /// The identity map of a shape onto itself (M = N, one dimension per part).
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::identity(vec![2, 3, 4])?;
    /// assert_eq!(map.dimensions(), &[0, 1, 2]);
    /// assert_eq!(map.partitioning(), &[1, 2]);
    /// assert_eq!(map.reduced_shape(), &[2, 3, 4]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn identity(shape: Vec<usize>) -> Result<Self> {
        let n = shape.len();
        Self::try_new(shape, (0..n).collect(), (1..n).collect())
    }

    /// The logical (N-D) shape.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.shape(), &[2, 3, 4]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The dimension permutation.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.dimensions(), &[2, 0, 1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dimensions(&self) -> &[usize] {
        &self.dimensions
    }
    /// The split points.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.partitioning(), &[1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn partitioning(&self) -> &[usize] {
        &self.partitioning
    }
    /// N.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.ndim(), 3);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// M = `partitioning.len() + 1`.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.reduced_ndim(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn reduced_ndim(&self) -> usize {
        self.reduced.len()
    }
    /// The M-D shape: per part, the product of its extents.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.reduced_shape(), &[4, 2 * 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn reduced_shape(&self) -> &[usize] {
        &self.reduced
    }
    /// The dimensions of part `g` (for M = 2: part 0 = rows, part 1 = columns);
    /// empty for `g >= reduced_ndim()`.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.part(0), &[2]);
    /// assert_eq!(map.part(1), &[0, 1]);
    /// assert!(map.part(2).is_empty()); // there are two parts
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn part(&self, g: usize) -> &[usize] {
        if g >= self.reduced.len() {
            return &[];
        }
        let start = if g == 0 { 0 } else { self.partitioning[g - 1] };
        let end = self
            .partitioning
            .get(g)
            .copied()
            .unwrap_or(self.shape.len());
        &self.dimensions[start..end]
    }
    /// The strides of part `g`, one per dimension of [`part(g)`](Self::part).
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// assert_eq!(map.strides(0), &[1]);
    /// assert_eq!(map.strides(1), &[3, 1]);
    /// assert!(map.strides(2).is_empty()); // there are two parts
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn strides(&self, g: usize) -> &[usize] {
        self.strides.get(g).map_or(&[], Vec::as_slice)
    }

    /// N-to-M reduction: `out[g] = sum(strides(g)[i] * coords[part(g)[i]])`.
    ///
    /// Errors (never panics): [`Error::Length`] unless `coords` has [`ndim`](Self::ndim)
    /// elements and `out` has [`reduced_ndim`](Self::reduced_ndim);
    /// [`Error::IndexOutOfBounds`] for a coordinate outside the shape (inside it the
    /// sums cannot overflow). `out` is unchanged on error.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, Error};
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// let mut reduced = [0; 2];
    /// map.reduce(&[1, 2, 3], &mut reduced)?;
    /// assert_eq!(reduced, [3, 1 * 3 + 2]);
    /// // too few coordinates, too short an output, a coordinate outside the shape
    /// assert!(matches!(map.reduce(&[1, 2], &mut reduced), Err(Error::Length { expected: 3, found: 2, .. })));
    /// assert!(matches!(map.reduce(&[1, 2, 3], &mut [0; 1]), Err(Error::Length { expected: 2, found: 1, .. })));
    /// assert!(matches!(map.reduce(&[2, 0, 0], &mut reduced), Err(Error::IndexOutOfBounds { value: 2, bound: 2, .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn reduce(&self, coords: &[usize], out: &mut [usize]) -> Result<()> {
        check_len("coordinates", coords.len(), self.shape.len())?;
        check_len("reduced coordinates", out.len(), self.reduced.len())?;
        for (d, (&c, &e)) in coords.iter().zip(&self.shape).enumerate() {
            if c >= e {
                return Err(Error::IndexOutOfBounds {
                    buffer: "coordinates".into(),
                    position: d,
                    value: c as i128,
                    bound: e as u64,
                });
            }
        }
        self.reduce_into(coords, out);
        Ok(())
    }

    /// [`reduce`](Self::reduce) without the checks, for callers whose slices have
    /// the right lengths by construction: never panics on lengths (extra elements
    /// are ignored, missing ones count as 0) and saturates instead of overflowing.
    #[inline]
    pub(crate) fn reduce_into(&self, coords: &[usize], out: &mut [usize]) {
        for (g, o) in out.iter_mut().enumerate().take(self.reduced.len()) {
            *o = self
                .part(g)
                .iter()
                .zip(&self.strides[g])
                .map(|(&d, &s)| coords.get(d).copied().unwrap_or(0).saturating_mul(s))
                .fold(0usize, usize::saturating_add);
        }
    }

    /// M-to-N promotion: `out[part(g)[i]] = (reduced[g] / strides(g)[i]) % shape[part(g)[i]]`.
    ///
    /// Errors (never panics): [`Error::Length`] unless `reduced` has
    /// [`reduced_ndim`](Self::reduced_ndim) elements and `out` has
    /// [`ndim`](Self::ndim); [`Error::IndexOutOfBounds`] for a reduced coordinate
    /// outside the [`reduced_shape`](Self::reduced_shape). `out` is unchanged on
    /// error.
    ///
    /// ```
    /// use arrow_sparse::{dims::DimMap, Error};
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// let mut coords = [0; 3];
    /// map.promote(&[3, 5], &mut coords)?;
    /// assert_eq!(coords, [1, 2, 3]);
    /// assert!(matches!(map.promote(&[3], &mut coords), Err(Error::Length { .. })));
    /// assert!(matches!(map.promote(&[3, 5], &mut [0; 2]), Err(Error::Length { .. })));
    /// assert!(matches!(map.promote(&[4, 0], &mut coords), Err(Error::IndexOutOfBounds { value: 4, bound: 4, .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn promote(&self, reduced: &[usize], out: &mut [usize]) -> Result<()> {
        check_len("reduced coordinates", reduced.len(), self.reduced.len())?;
        check_len("coordinates", out.len(), self.shape.len())?;
        for (g, (&r, &e)) in reduced.iter().zip(&self.reduced).enumerate() {
            if r >= e {
                return Err(Error::IndexOutOfBounds {
                    buffer: "reduced coordinates".into(),
                    position: g,
                    value: r as i128,
                    bound: e as u64,
                });
            }
        }
        self.promote_into(reduced, out);
        Ok(())
    }

    /// [`promote`](Self::promote) without the checks, for callers whose slices have
    /// the right lengths by construction (never panics: out-of-range positions are
    /// skipped).
    #[inline]
    pub(crate) fn promote_into(&self, reduced: &[usize], out: &mut [usize]) {
        for (g, &r) in reduced.iter().enumerate().take(self.reduced.len()) {
            for (&d, &s) in self.part(g).iter().zip(&self.strides[g]) {
                if let Some(o) = out.get_mut(d) {
                    *o = if self.shape[d] == 0 || s == 0 {
                        0
                    } else {
                        (r / s) % self.shape[d]
                    };
                }
            }
        }
    }

    /// Error unless every reduced coordinate (`0..extent`) fits `index_type`.
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// use arrow_sparse::IndexType;
    /// let map = DimMap::try_new(vec![200, 2], vec![0, 1], vec![1])?;
    /// map.check_index_type(IndexType::UInt8)?;
    /// // reduced coordinates go up to 199, more than an int8 holds
    /// assert!(map.check_index_type(IndexType::Int8).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn check_index_type(&self, index_type: IndexType) -> Result<()> {
        for (g, &e) in self.reduced.iter().enumerate() {
            if e > 0 && (e - 1) as u64 > index_type.max_value() {
                return Err(Error::overflow(
                    format!("reduced extent of part {g} (dimensions {:?})", self.part(g)),
                    format!("coordinate {}", e - 1),
                    index_type.name(),
                ));
            }
        }
        Ok(())
    }

    /// The same map with the logical dimensions permuted: logical dimension `i`
    /// of the result is dimension `order[i]` of `self` (a transpose that changes
    /// the map, not the storage).
    ///
    /// ```
    /// use arrow_sparse::dims::DimMap;
    /// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1])?;
    /// let t = map.permuted(&[2, 1, 0])?;
    /// assert_eq!(t.shape(), &[4, 3, 2]);
    /// // the rows are still the old dimension 2, now logical dimension 0
    /// assert_eq!(t.part(0), &[0]);
    /// assert_eq!(t.reduced_shape(), map.reduced_shape());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn permuted(&self, order: &[usize]) -> Result<DimMap> {
        check_permutation("permutation", order, self.ndim())?;
        let mut inverse = vec![0; order.len()];
        for (i, &o) in order.iter().enumerate() {
            inverse[o] = i;
        }
        let shape = order.iter().map(|&o| self.shape[o]).collect();
        let dimensions = self.dimensions.iter().map(|&d| inverse[d]).collect();
        DimMap::try_new(shape, dimensions, self.partitioning.clone())
    }
}

/// One no-copy view step of a DM tensor, from an input shape to an output shape.
/// Forward (output coordinates to input coordinates) serves lookups; the inverse
/// (input to zero, one or several output coordinates) serves sparse iteration.
///
/// ```
/// use arrow_sparse::dims::ViewOp;
/// let op = ViewOp::Slice { dim: 1, start: 1, stop: 6, step: 2 };
/// assert_eq!(op.output_shape(&[4, 6])?, vec![4, 3]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViewOp {
    /// Output dimension `i` is input dimension `order[i]`.
    Permute {
        /// A permutation of the input dimensions.
        order: Vec<usize>,
    },
    /// Fix input dimension `dim` at `index`; the output has one dimension less.
    Select {
        /// The input dimension removed.
        dim: usize,
        /// The index kept.
        index: usize,
    },
    /// Keep indices `start, start+step, ..` below `stop` of dimension `dim`.
    Slice {
        /// The dimension sliced.
        dim: usize,
        /// First index kept.
        start: usize,
        /// Exclusive end.
        stop: usize,
        /// Step (>= 1).
        step: usize,
    },
    /// Same number of elements, new shape (row-major order of elements kept).
    Reshape {
        /// The output shape.
        shape: Vec<usize>,
    },
    /// Repeat each dimension: output extent `shape[d]` must be a multiple of the
    /// input extent; output index `i` reads input index `i % extent`.
    Broadcast {
        /// The output shape (same number of dimensions).
        shape: Vec<usize>,
    },
    /// Roll dimension `dim` by `shift` (numpy.roll): output index `j` reads input
    /// index `(j - shift) mod extent`.
    Rotate {
        /// The dimension rolled.
        dim: usize,
        /// The shift (any sign).
        shift: i64,
    },
    /// Select by an index array (numpy.take as a view): output index `j` of
    /// dimension `dim` reads input index `indices[j]`. Indices may repeat (an
    /// entry then appears once per repeat) and come in any order; the output
    /// extent is their number.
    Take {
        /// The dimension taken from.
        dim: usize,
        /// The input indices, in output order.
        indices: TakeIndices,
    },
}

/// The index array of a [`ViewOp::Take`], shared between clones, with its inverse
/// (the output positions of every input index, sorted) built once so that sparse
/// iteration finds the positions of an entry in O(log k) for k indices.
///
/// ```
/// use arrow_sparse::dims::TakeIndices;
/// let t = TakeIndices::new(vec![4, 0, 4, 2]);
/// assert_eq!(t.as_slice(), &[4, 0, 4, 2]);
/// assert_eq!(t.positions_of(4).collect::<Vec<_>>(), [0, 2]);
/// assert_eq!(t.positions_of(1).count(), 0);
/// assert_eq!(t.max_repeat(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct TakeIndices {
    indices: std::sync::Arc<[usize]>,
    /// `(index, output position)`, sorted.
    by_index: std::sync::Arc<[(usize, usize)]>,
    max_repeat: usize,
}

impl TakeIndices {
    /// Wrap an index array (O(k log k) for k indices, once).
    ///
    /// ```
    /// use arrow_sparse::dims::TakeIndices;
    /// assert_eq!(TakeIndices::new(vec![]).as_slice(), &[] as &[usize]);
    /// ```
    pub fn new(indices: Vec<usize>) -> Self {
        let mut by_index: Vec<(usize, usize)> = indices.iter().copied().zip(0..).collect();
        by_index.sort_unstable();
        let max_repeat = by_index
            .chunk_by(|a, b| a.0 == b.0)
            .map(<[_]>::len)
            .max()
            .unwrap_or(0);
        TakeIndices {
            indices: indices.into(),
            by_index: by_index.into(),
            max_repeat,
        }
    }

    /// The indices, in output order.
    ///
    /// ```
    /// use arrow_sparse::dims::TakeIndices;
    /// assert_eq!(TakeIndices::from(vec![3, 1]).as_slice(), &[3, 1]);
    /// ```
    pub fn as_slice(&self) -> &[usize] {
        &self.indices
    }

    /// The output positions that read input index `index`, ascending.
    ///
    /// ```
    /// use arrow_sparse::dims::TakeIndices;
    /// let t = TakeIndices::new(vec![1, 1, 0]);
    /// assert_eq!(t.positions_of(1).collect::<Vec<_>>(), [0, 1]);
    /// ```
    pub fn positions_of(&self, index: usize) -> impl Iterator<Item = usize> + '_ {
        let start = self.by_index.partition_point(|&(i, _)| i < index);
        self.by_index[start..]
            .iter()
            .take_while(move |&&(i, _)| i == index)
            .map(|&(_, p)| p)
    }

    /// The most times any one input index is taken (0 for no indices): how many
    /// times the view repeats a stored entry at most.
    ///
    /// ```
    /// use arrow_sparse::dims::TakeIndices;
    /// assert_eq!(TakeIndices::new(vec![7, 7, 7, 2]).max_repeat(), 3);
    /// ```
    pub fn max_repeat(&self) -> usize {
        self.max_repeat
    }
}

impl From<Vec<usize>> for TakeIndices {
    fn from(indices: Vec<usize>) -> Self {
        TakeIndices::new(indices)
    }
}

impl PartialEq for TakeIndices {
    fn eq(&self, other: &Self) -> bool {
        self.indices == other.indices
    }
}

impl Eq for TakeIndices {}

impl std::hash::Hash for TakeIndices {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.indices.hash(state)
    }
}

fn ravel(coords: &[usize], shape: &[usize]) -> usize {
    coords
        .iter()
        .zip(shape)
        .fold(0, |acc, (&c, &d)| acc * d + c)
}

/// The multi-index of row-major position `linear` within `shape`, into `out`
/// (0 along an empty dimension).
pub(crate) fn unravel(mut linear: usize, shape: &[usize], out: &mut [usize]) {
    for (o, &d) in out.iter_mut().zip(shape).rev() {
        if d == 0 {
            *o = 0;
        } else {
            *o = linear % d;
            linear /= d;
        }
    }
}

/// Step the multi-index `idx` to the next row-major position within `shape`
/// (wrapping to all zeros after the last one): an odometer, no division.
pub(crate) fn advance(idx: &mut [usize], shape: &[usize]) {
    for d in (0..idx.len().min(shape.len())).rev() {
        idx[d] += 1;
        if idx[d] < shape[d] {
            return;
        }
        idx[d] = 0;
    }
}

/// `coords` has one coordinate per dimension of `shape`, each inside it.
fn check_coords_in(what: &str, coords: &[usize], shape: &[usize]) -> Result<()> {
    if coords.len() != shape.len() {
        return Err(Error::shape(
            what,
            format!("{} coordinates", shape.len()),
            format!("{}", coords.len()),
        ));
    }
    if let Some((d, (&c, &n))) = coords
        .iter()
        .zip(shape)
        .enumerate()
        .find(|(_, (c, n))| c >= n)
    {
        return Err(Error::shape(
            what,
            format!("coordinate {d} below {n} (shape {shape:?})"),
            format!("{c}"),
        ));
    }
    Ok(())
}

fn rem(x: i128, n: usize) -> usize {
    x.rem_euclid(n as i128) as usize
}

impl ViewOp {
    /// Check the op against its input shape and return its output shape.
    ///
    /// ```
    /// use arrow_sparse::dims::ViewOp;
    /// let op = ViewOp::Select { dim: 0, index: 1 };
    /// assert_eq!(op.output_shape(&[2, 3])?, vec![3]);
    /// // index 2 is out of bounds for extent 2
    /// let bad = ViewOp::Select { dim: 0, index: 2 };
    /// assert!(bad.output_shape(&[2, 3]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn output_shape(&self, input: &[usize]) -> Result<Vec<usize>> {
        let n = input.len();
        let bad_dim = |dim: usize| {
            Error::shape(
                "view dimension",
                format!("a dimension below {n}"),
                dim.to_string(),
            )
        };
        match self {
            ViewOp::Permute { order } => {
                check_permutation("permute order", order, n)?;
                Ok(order.iter().map(|&o| input[o]).collect())
            }
            ViewOp::Select { dim, index } => {
                let extent = *input.get(*dim).ok_or_else(|| bad_dim(*dim))?;
                if n == 1 {
                    return Err(Error::shape(
                        "select",
                        "a view of at least 2 dimensions (a view keeps one)",
                        "1 dimension",
                    ));
                }
                if *index >= extent {
                    return Err(Error::IndexOutOfBounds {
                        buffer: format!("select on dimension {dim}"),
                        position: 0,
                        value: *index as i128,
                        bound: extent as u64,
                    });
                }
                let mut out = input.to_vec();
                out.remove(*dim);
                Ok(out)
            }
            ViewOp::Slice {
                dim,
                start,
                stop,
                step,
            } => {
                let extent = *input.get(*dim).ok_or_else(|| bad_dim(*dim))?;
                if *step == 0 || start > stop || *stop > extent {
                    return Err(Error::shape(
                        format!("slice of dimension {dim}"),
                        format!("start <= stop <= {extent} and step >= 1"),
                        format!("{start}..{stop} step {step}"),
                    ));
                }
                let mut out = input.to_vec();
                out[*dim] = (stop - start).div_ceil(*step);
                Ok(out)
            }
            ViewOp::Reshape { shape } => {
                check_shape(shape, "reshape")?;
                let size = |s: &[usize]| s.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
                match (size(input), size(shape)) {
                    (Some(a), Some(b)) if a == b => Ok(shape.clone()),
                    (a, b) => Err(Error::shape(
                        "reshape",
                        format!("{a:?} elements (shape {input:?}), fitting usize"),
                        format!("{b:?} elements (shape {shape:?})"),
                    )),
                }
            }
            ViewOp::Broadcast { shape } => {
                check_shape(shape, "broadcast")?;
                let ok = shape.len() == n
                    && shape
                        .iter()
                        .zip(input)
                        .all(|(&t, &s)| if s == 0 { t == 0 } else { t % s == 0 });
                if !ok {
                    return Err(Error::shape(
                        "broadcast",
                        format!("multiples of {input:?}"),
                        format!("{shape:?}"),
                    ));
                }
                Ok(shape.clone())
            }
            ViewOp::Rotate { dim, .. } => {
                input.get(*dim).ok_or_else(|| bad_dim(*dim))?;
                Ok(input.to_vec())
            }
            ViewOp::Take { dim, indices } => {
                let extent = *input.get(*dim).ok_or_else(|| bad_dim(*dim))?;
                let bad = indices
                    .as_slice()
                    .iter()
                    .enumerate()
                    .find(|&(_, &i)| i >= extent);
                if let Some((position, &i)) = bad {
                    return Err(Error::IndexOutOfBounds {
                        buffer: format!("take on dimension {dim}"),
                        position,
                        value: i as i128,
                        bound: extent as u64,
                    });
                }
                let mut out = input.to_vec();
                out[*dim] = indices.as_slice().len();
                check_shape(&out, "take")?;
                Ok(out)
            }
        }
    }

    /// Forward map: output coordinates to input coordinates.
    ///
    /// Fails (instead of panicking) when `output` is not this op's output shape
    /// for `input` or `out_coords` lies outside `output`.
    ///
    /// ```
    /// use arrow_sparse::dims::ViewOp;
    /// let op = ViewOp::Rotate { dim: 0, shift: 1 };
    /// let mut input = Vec::new();
    /// op.forward(&[4], &[4], &[0], &mut input)?;
    /// assert_eq!(input, [3]);
    /// // coordinate 4 is outside the 4 elements
    /// assert!(op.forward(&[4], &[4], &[4], &mut input).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn forward(
        &self,
        input: &[usize],
        output: &[usize],
        out_coords: &[usize],
        in_coords: &mut Vec<usize>,
    ) -> Result<()> {
        self.check_io(input, output)?;
        check_coords_in("view output coordinates", out_coords, output)?;
        self.forward_unchecked(input, output, out_coords, in_coords);
        Ok(())
    }

    /// `output` is this op's output shape for `input`.
    fn check_io(&self, input: &[usize], output: &[usize]) -> Result<()> {
        let expected = self.output_shape(input)?;
        if expected != output {
            return Err(Error::shape(
                "view output shape",
                format!("{expected:?}"),
                format!("{output:?}"),
            ));
        }
        Ok(())
    }

    /// [`forward`](Self::forward) for shapes and coordinates already checked.
    pub(crate) fn forward_unchecked(
        &self,
        input: &[usize],
        output: &[usize],
        out_coords: &[usize],
        in_coords: &mut Vec<usize>,
    ) {
        in_coords.clear();
        match self {
            ViewOp::Permute { order } => {
                in_coords.resize(input.len(), 0);
                for (i, &o) in order.iter().enumerate() {
                    in_coords[o] = out_coords[i];
                }
            }
            ViewOp::Select { dim, index } => {
                in_coords.extend_from_slice(out_coords);
                in_coords.insert(*dim, *index);
            }
            ViewOp::Slice {
                dim, start, step, ..
            } => {
                in_coords.extend_from_slice(out_coords);
                in_coords[*dim] = start + out_coords[*dim] * step;
            }
            ViewOp::Reshape { .. } => {
                in_coords.resize(input.len(), 0);
                unravel(ravel(out_coords, output), input, in_coords);
            }
            ViewOp::Broadcast { .. } => {
                in_coords.extend(
                    out_coords
                        .iter()
                        .zip(input)
                        .map(|(&c, &s)| if s == 0 { 0 } else { c % s }),
                );
            }
            ViewOp::Rotate { dim, shift } => {
                in_coords.extend_from_slice(out_coords);
                in_coords[*dim] = rem(out_coords[*dim] as i128 - *shift as i128, input[*dim]);
            }
            ViewOp::Take { dim, indices } => {
                in_coords.extend_from_slice(out_coords);
                in_coords[*dim] = indices.as_slice()[out_coords[*dim]];
            }
        }
    }

    /// Inverse map: every output coordinate tuple that reads `in_coords`.
    ///
    /// ```
    /// use arrow_sparse::dims::ViewOp;
    /// let op = ViewOp::Broadcast { shape: vec![2, 4] };
    /// let mut outputs = Vec::new();
    /// op.inverse(&[1, 2], &[2, 4], &[0, 1], &mut |c: &[usize]| outputs.push(c.to_vec()))?;
    /// assert_eq!(outputs, [[0, 1], [0, 3], [1, 1], [1, 3]]);
    /// // the input has 1 x 2 elements: (0, 2) is outside it
    /// assert!(op.inverse(&[1, 2], &[2, 4], &[0, 2], &mut |_: &[usize]| {}).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn inverse(
        &self,
        input: &[usize],
        output: &[usize],
        in_coords: &[usize],
        f: &mut dyn FnMut(&[usize]),
    ) -> Result<()> {
        self.check_io(input, output)?;
        check_coords_in("view input coordinates", in_coords, input)?;
        self.inverse_unchecked(input, output, in_coords, f);
        Ok(())
    }

    /// [`inverse`](Self::inverse) for shapes and coordinates already checked.
    pub(crate) fn inverse_unchecked(
        &self,
        input: &[usize],
        output: &[usize],
        in_coords: &[usize],
        f: &mut dyn FnMut(&[usize]),
    ) {
        match self {
            ViewOp::Permute { order } => {
                let c: Vec<usize> = order.iter().map(|&o| in_coords[o]).collect();
                f(&c)
            }
            ViewOp::Select { dim, index } => {
                if in_coords[*dim] == *index {
                    let mut c = in_coords.to_vec();
                    c.remove(*dim);
                    f(&c)
                }
            }
            ViewOp::Slice {
                dim,
                start,
                stop,
                step,
            } => {
                let x = in_coords[*dim];
                if x >= *start && x < *stop && (x - start).is_multiple_of(*step) {
                    let mut c = in_coords.to_vec();
                    c[*dim] = (x - start) / step;
                    f(&c)
                }
            }
            ViewOp::Reshape { .. } => {
                let mut c = vec![0; output.len()];
                unravel(ravel(in_coords, input), output, &mut c);
                f(&c)
            }
            ViewOp::Broadcast { .. } => {
                // every combination of repeats, odometer over the dimensions
                let reps: Vec<usize> = output
                    .iter()
                    .zip(input)
                    .map(|(&t, &s)| t.checked_div(s).unwrap_or(0))
                    .collect();
                if reps.contains(&0) {
                    return;
                }
                let mut k = vec![0usize; reps.len()];
                let mut c = in_coords.to_vec();
                loop {
                    for d in 0..c.len() {
                        c[d] = in_coords[d] + k[d] * input[d];
                    }
                    f(&c);
                    let mut d = reps.len();
                    loop {
                        if d == 0 {
                            return;
                        }
                        d -= 1;
                        k[d] += 1;
                        if k[d] < reps[d] {
                            break;
                        }
                        k[d] = 0;
                    }
                }
            }
            ViewOp::Rotate { dim, shift } => {
                let mut c = in_coords.to_vec();
                c[*dim] = rem(in_coords[*dim] as i128 + *shift as i128, input[*dim]);
                f(&c)
            }
            ViewOp::Take { dim, indices } => {
                let mut c = in_coords.to_vec();
                for j in indices.positions_of(in_coords[*dim]) {
                    c[*dim] = j;
                    f(&c)
                }
            }
        }
    }
}

/// A chain of [`ViewOp`]s with the shape before and after each step.
///
/// ```
/// use arrow_sparse::dims::{ViewChain, ViewOp};
/// let chain = ViewChain::new(vec![2, 3])
///     .push(ViewOp::Permute { order: vec![1, 0] })?
///     .push(ViewOp::Select { dim: 1, index: 1 })?;
/// assert_eq!(chain.output_shape(), &[3]);
/// assert_eq!(chain.forward(&[2])?, [1, 2]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ViewChain {
    ops: Vec<ViewOp>,
    /// `shapes[0]` is the base shape, `shapes[i + 1]` the output of `ops[i]`.
    shapes: Vec<Vec<usize>>,
}

impl ViewChain {
    /// An empty chain over `base`.
    ///
    /// ```
    /// use arrow_sparse::dims::ViewChain;
    /// let chain = ViewChain::new(vec![2, 3]);
    /// assert!(chain.is_empty());
    /// assert_eq!(chain.output_shape(), &[2, 3]);
    /// ```
    pub fn new(base: Vec<usize>) -> Self {
        ViewChain {
            ops: Vec::new(),
            shapes: vec![base],
        }
    }

    /// Append an op (checked against the current output shape).
    ///
    /// ```
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let chain = ViewChain::new(vec![2, 3]).push(ViewOp::Reshape { shape: vec![6] })?;
    /// assert_eq!(chain.output_shape(), &[6]);
    /// // 6 elements cannot be reshaped to 4
    /// assert!(chain.push(ViewOp::Reshape { shape: vec![4] }).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn push(&self, op: ViewOp) -> Result<ViewChain> {
        let out = op.output_shape(self.output_shape())?;
        let mut next = self.clone();
        next.ops.push(op);
        next.shapes.push(out);
        Ok(next)
    }

    /// Build a chain from ops (checked).
    ///
    /// ```
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let ops = vec![
    ///     ViewOp::Permute { order: vec![1, 0] },
    ///     ViewOp::Slice { dim: 0, start: 0, stop: 3, step: 2 },
    /// ];
    /// let chain = ViewChain::from_ops(vec![2, 3], ops)?;
    /// assert_eq!(chain.output_shape(), &[2, 2]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_ops(base: Vec<usize>, ops: Vec<ViewOp>) -> Result<ViewChain> {
        ops.into_iter()
            .try_fold(ViewChain::new(base), |c, op| c.push(op))
    }

    /// The ops, first applied first.
    ///
    /// ```
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let op = ViewOp::Rotate { dim: 0, shift: -1 };
    /// let chain = ViewChain::new(vec![5]).push(op.clone())?;
    /// assert_eq!(chain.ops(), &[op]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn ops(&self) -> &[ViewOp] {
        &self.ops
    }
    /// Whether there is no op.
    ///
    /// ```
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let chain = ViewChain::new(vec![5]);
    /// assert!(chain.is_empty());
    /// assert!(!chain.push(ViewOp::Rotate { dim: 0, shift: 2 })?.is_empty());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    /// The shape the chain starts from.
    ///
    /// ```
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let chain = ViewChain::new(vec![2, 3]).push(ViewOp::Select { dim: 0, index: 1 })?;
    /// assert_eq!(chain.base_shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn base_shape(&self) -> &[usize] {
        &self.shapes[0]
    }
    /// The shape the chain produces.
    ///
    /// ```
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let chain = ViewChain::new(vec![2, 3]).push(ViewOp::Select { dim: 0, index: 1 })?;
    /// assert_eq!(chain.output_shape(), &[3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn output_shape(&self) -> &[usize] {
        self.shapes.last().map(Vec::as_slice).unwrap_or(&[])
    }

    /// Output coordinates to base coordinates.
    ///
    /// ```
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let chain = ViewChain::new(vec![4, 6])
    ///     .push(ViewOp::Slice { dim: 1, start: 1, stop: 6, step: 2 })?;
    /// // output column 2 is base column 1 + 2 * 2
    /// assert_eq!(chain.forward(&[3, 2])?, [3, 5]);
    /// // column 3 is outside the 3 output columns
    /// assert!(chain.forward(&[3, 3]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn forward(&self, coords: &[usize]) -> Result<Vec<usize>> {
        check_coords_in("view coordinates", coords, self.output_shape())?;
        Ok(self.forward_unchecked(coords))
    }

    /// [`forward`](Self::forward) for coordinates inside the output shape.
    pub(crate) fn forward_unchecked(&self, coords: &[usize]) -> Vec<usize> {
        let mut cur = coords.to_vec();
        let mut next = Vec::new();
        for (i, op) in self.ops.iter().enumerate().rev() {
            op.forward_unchecked(&self.shapes[i], &self.shapes[i + 1], &cur, &mut next);
            std::mem::swap(&mut cur, &mut next);
        }
        cur
    }

    /// Every output coordinate tuple that reads base coordinates `base`.
    ///
    /// ```
    /// use arrow_sparse::dims::{ViewChain, ViewOp};
    /// let chain = ViewChain::new(vec![4, 6])
    ///     .push(ViewOp::Slice { dim: 1, start: 1, stop: 6, step: 2 })?;
    /// let mut hits = Vec::new();
    /// chain.inverse(&[3, 5], &mut |c: &[usize]| hits.push(c.to_vec()))?;
    /// assert_eq!(hits, [[3, 2]]);
    /// // base column 2 is not in the slice
    /// chain.inverse(&[3, 2], &mut |_: &[usize]| panic!("not visible"))?;
    /// // base row 4 is outside the 4 x 6 base
    /// assert!(chain.inverse(&[4, 0], &mut |_: &[usize]| {}).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    ///
    /// Base coordinates outside the base shape (or of another length) are an error.
    pub fn inverse(&self, base: &[usize], f: &mut dyn FnMut(&[usize])) -> Result<()> {
        check_coords_in("base coordinates", base, self.base_shape())?;
        self.inverse_unchecked(base, f);
        Ok(())
    }

    /// [`inverse`](Self::inverse) for coordinates inside the base shape.
    pub(crate) fn inverse_unchecked(&self, base: &[usize], f: &mut dyn FnMut(&[usize])) {
        self.inverse_from(0, base, f)
    }

    fn inverse_from(&self, i: usize, c: &[usize], f: &mut dyn FnMut(&[usize])) {
        match self.ops.get(i) {
            None => f(c),
            Some(op) => {
                op.inverse_unchecked(&self.shapes[i], &self.shapes[i + 1], c, &mut |next| {
                    self.inverse_from(i + 1, next, f)
                })
            }
        }
    }
}

/// Largest extent accepted for one dimension (Arrow stores extents as int64).
///
/// ```
/// use arrow_sparse::tensor::validate::{check_shape, MAX_EXTENT};
/// assert_eq!(MAX_EXTENT as u64, (1 << 63) - 1);
/// assert!(check_shape(&[MAX_EXTENT], "shape").is_ok());
/// assert!(check_shape(&[MAX_EXTENT + 1], "shape").is_err());
/// ```
pub const MAX_EXTENT: usize = i64::MAX as usize;

/// Check a shape: every extent fits int64. Returns the element count when it fits
/// `usize`, `None` when the product overflows (allowed for sparse tensors).
///
/// ```
/// use arrow_sparse::{tensor::validate::check_shape, Error};
/// assert_eq!(check_shape(&[2, 3, 4], "shape")?, Some(24));
/// assert_eq!(check_shape(&[1 << 40, 1 << 40], "shape")?, None); // 2^80 elements
/// let err = check_shape(&[3, usize::MAX], "shape").unwrap_err();
/// assert!(matches!(err, Error::Shape { what, .. } if what == "shape dimension 1"));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn check_shape(shape: &[usize], what: &str) -> Result<Option<usize>> {
    if let Some((i, &d)) = shape.iter().enumerate().find(|&(_, &d)| d > MAX_EXTENT) {
        return Err(Error::shape(
            format!("{what} dimension {i}"),
            format!("an extent <= {MAX_EXTENT}"),
            d.to_string(),
        ));
    }
    Ok(shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)))
}

pub(crate) fn check_len(what: &str, found: usize, expected: usize) -> Result<()> {
    if found != expected {
        return Err(Error::length(what, expected, found));
    }
    Ok(())
}

/// Check that `order` is a permutation of `0..ndim`.
///
/// ```
/// use arrow_sparse::{tensor::validate::check_permutation, Error};
/// check_permutation("axis_order", &[2, 0, 1], 3)?;
/// let err = check_permutation("axis_order", &[2, 2, 1], 3).unwrap_err();
/// assert!(matches!(err, Error::Invariant { position: Some(1), .. })); // 2 repeated
/// assert!(check_permutation("axis_order", &[0, 1], 3).is_err()); // too short
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn check_permutation(what: &str, order: &[usize], ndim: usize) -> Result<()> {
    let mut seen = vec![false; ndim];
    if order.len() != ndim {
        return Err(Error::invariant(
            what,
            None,
            format!("expected a permutation of 0..{ndim}, found {order:?}"),
        ));
    }
    for (p, &a) in order.iter().enumerate() {
        if a >= ndim || std::mem::replace(&mut seen[a], true) {
            return Err(Error::invariant(
                what,
                Some(p),
                format!("expected a permutation of 0..{ndim}, found {order:?}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_strides_example() {
        let m = DimMap::try_new(vec![2, 3, 4, 5, 6], vec![2, 4, 1, 3, 0], vec![3]).unwrap();
        assert_eq!(m.part(0), &[2, 4, 1]);
        assert_eq!(m.part(1), &[3, 0]);
        assert_eq!(m.strides(0), &[18, 3, 1]);
        assert_eq!(m.strides(1), &[2, 1]);
    }

    #[test]
    fn reduce_promote_round_trip_everywhere() {
        let m = DimMap::try_new(vec![2, 3, 4], vec![2, 0, 1], vec![1]).unwrap();
        assert_eq!(m.reduced_shape(), &[4, 6]);
        let (mut r, mut b) = ([0; 2], [0; 3]);
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    m.reduce(&[i, j, k], &mut r).unwrap();
                    assert_eq!(r, [k, i * 3 + j]);
                    m.promote(&r, &mut b).unwrap();
                    assert_eq!(b, [i, j, k]);
                }
            }
        }
    }

    #[test]
    fn bad_maps_are_errors() {
        assert!(DimMap::try_new(vec![2, 3], vec![0, 0], vec![1]).is_err());
        assert!(DimMap::try_new(vec![2, 3], vec![0, 1], vec![3]).is_err());
        assert!(DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2, 1]).is_err());
        let big = 1usize << 40;
        assert!(matches!(
            DimMap::try_new(vec![big, big], vec![0, 1], vec![]),
            Err(Error::Overflow { .. })
        ));
        let m = DimMap::try_new(vec![300, 300], vec![0, 1], vec![0]).unwrap();
        assert_eq!(m.reduced_shape(), &[1, 90_000]);
        assert!(m.check_index_type(IndexType::Int16).is_err());
        assert!(m.check_index_type(IndexType::Int32).is_ok());
        // empty parts: a 1-D tensor as an n x 1 matrix
        let v = DimMap::try_new(vec![5], vec![0], vec![1]).unwrap();
        assert_eq!(v.reduced_shape(), &[5, 1]);
    }

    #[test]
    fn views_forward_and_inverse_agree() {
        let base = vec![3, 4];
        let chains = [
            vec![ViewOp::Permute { order: vec![1, 0] }],
            vec![ViewOp::Select { dim: 1, index: 2 }],
            vec![ViewOp::Slice {
                dim: 1,
                start: 1,
                stop: 4,
                step: 2,
            }],
            vec![ViewOp::Reshape { shape: vec![2, 6] }],
            vec![ViewOp::Broadcast { shape: vec![6, 4] }],
            vec![ViewOp::Rotate { dim: 1, shift: -5 }],
            vec![
                ViewOp::Rotate { dim: 0, shift: 1 },
                ViewOp::Reshape { shape: vec![12] },
                ViewOp::Slice {
                    dim: 0,
                    start: 2,
                    stop: 11,
                    step: 3,
                },
            ],
        ];
        for ops in chains {
            let chain = ViewChain::from_ops(base.clone(), ops.clone()).unwrap();
            let out = chain.output_shape().to_vec();
            let size: usize = out.iter().product();
            // every output element maps forward to a base element whose inverse
            // images include it
            for lin in 0..size {
                let mut c = vec![0; out.len()];
                unravel(lin, &out, &mut c);
                let b = chain.forward(&c).unwrap();
                assert!(b.iter().zip(&base).all(|(x, d)| x < d), "{ops:?}");
                let mut found = false;
                chain
                    .inverse(&b, &mut |o| found |= o == c.as_slice())
                    .unwrap();
                assert!(found, "{ops:?} {c:?} -> {b:?}");
            }
        }
        assert!(
            ViewChain::from_ops(base.clone(), vec![ViewOp::Reshape { shape: vec![5] }]).is_err()
        );
        assert!(
            ViewChain::from_ops(base.clone(), vec![ViewOp::Broadcast { shape: vec![4, 4] }])
                .is_err()
        );
        assert!(ViewChain::from_ops(base, vec![ViewOp::Select { dim: 0, index: 3 }]).is_err());
    }

    /// The public view maps check their caller's shapes and coordinates instead of
    /// indexing out of bounds or dividing by a zero extent (panic audit, #13).
    #[test]
    fn view_maps_refuse_bad_shapes_and_coordinates() {
        let mut out = Vec::new();
        let rotate = ViewOp::Rotate { dim: 0, shift: 1 };
        // an empty input extent (rem_euclid by 0) and an output of the wrong shape
        assert!(rotate.forward(&[0], &[0], &[0], &mut out).is_err());
        assert!(rotate.forward(&[4], &[5], &[0], &mut out).is_err());
        // a dimension past the input, coordinates of the wrong length
        let permute = ViewOp::Permute { order: vec![1, 0] };
        assert!(permute.forward(&[2, 3], &[3, 2], &[0], &mut out).is_err());
        assert!(
            permute
                .inverse(&[2, 3], &[3, 2], &[0, 1, 2], &mut |_| {})
                .is_err()
        );
        let select = ViewOp::Select { dim: 5, index: 0 };
        assert!(select.forward(&[2, 3], &[2], &[0], &mut out).is_err());
        assert!(select.inverse(&[2, 3], &[2], &[0, 0], &mut |_| {}).is_err());
        // a slice step that would overflow start + coordinate * step
        let slice = ViewOp::Slice {
            dim: 0,
            start: 0,
            stop: 4,
            step: usize::MAX,
        };
        assert!(slice.forward(&[4], &[4], &[3], &mut out).is_err());
        let chain = ViewChain::new(vec![2, 3]);
        assert!(chain.forward(&[0]).is_err());
        assert!(chain.forward(&[2, 0]).is_err());
        assert!(chain.inverse(&[0, 3], &mut |_| {}).is_err());
        assert_eq!(chain.forward(&[1, 2]).unwrap(), [1, 2]);
        let map = DimMap::try_new(vec![2, 3], vec![0, 1], vec![1]).unwrap();
        assert!(map.part(7).is_empty() && map.strides(7).is_empty());
    }
}

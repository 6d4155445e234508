//! The level view: every format described as MLIR's sparse tensor storage does it,
//! as a sequence of levels (dense, compressed, singleton) with their position and
//! coordinate buffers, zero-copy, plus the map from dimensions to levels.
//!
//! ```
//! use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
//! let m = CooTensor::<f32, i32>::from_entries(vec![8, 8], &[(vec![0, 1], 1.1), (vec![0, 4], 2.2), (vec![7, 2], 3.3)])?;
//! let csr: AnyTensor = m.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
//! assert_eq!(
//!     csr.levels()?.mlir_encoding(),
//!     "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32, crdWidth = 32 }>"
//! );
//! # Ok::<(), arrow_sparse::Error>(())
//! ```
//!
//! ```
//! use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
//! let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0)])?;
//! let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
//! let levels = csr.levels()?;
//! assert!(levels.mlir_encoding().contains("dense"));
//! assert!(levels.mlir_encoding().contains("compressed"));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use std::fmt::Write as _;

use arrow_buffer::ScalarBuffer;

use super::level::LevelType;
use super::{AnyTensor, CoordLayout};
use crate::buffer::{IndexBuffer, ValueBuffer, with_index_slice};
use crate::error::{Error, Result};
use crate::types::{Index, IndexType};
use crate::with_index_type;

/// How a level stores its coordinates.
///
/// ```
/// use arrow_sparse::tensor::levels::LevelKind;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0)])?;
/// let kinds = |t: AnyTensor| -> arrow_sparse::Result<Vec<LevelKind>> {
///     Ok(t.levels()?.levels.iter().map(|l| l.kind).collect())
/// };
/// assert_eq!(kinds(coo.clone().into())?, [LevelKind::Compressed, LevelKind::Singleton]);
/// let csr = coo.to_csx::<i32, i32>(CompressedAxis::Row)?;
/// assert_eq!(kinds(csr.into())?, [LevelKind::Dense, LevelKind::Compressed]);
/// assert_eq!(kinds(coo.to_dense()?.into())?, [LevelKind::Dense, LevelKind::Dense]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelKind {
    /// Every coordinate of the level is present; nothing stored.
    Dense,
    /// Positions (segment bounds per parent) and coordinates.
    Compressed,
    /// One coordinate per parent entry, no positions.
    Singleton,
}

/// A zero-copy, possibly strided, view of index elements: element `i` is
/// `buffer[offset + i * stride]`.
///
/// ```
/// use arrow_sparse::{AnyTensor, CooTensor, IndexBuffer};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 1.0), (vec![1, 0], 2.0)])?;
/// let view = AnyTensor::from(coo).levels()?;
/// // row-major coordinates [0, 2, 1, 0]: level 1 (dimension 1) reads every 2nd one from 1
/// let crd = view.levels[1].coordinates.as_ref().unwrap();
/// assert_eq!(crd.buffer, IndexBuffer::Int64(vec![0, 2, 1, 0].into()));
/// assert_eq!((crd.offset, crd.stride, crd.len), (1, 2, 2));
/// assert_eq!((crd.get(0), crd.get(1)), (Some(2), Some(0)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Strided {
    /// The buffer (shared with the tensor).
    pub buffer: IndexBuffer,
    /// First element.
    pub offset: usize,
    /// Distance between elements.
    pub stride: usize,
    /// Number of elements.
    pub len: usize,
}

impl Strided {
    pub(crate) fn whole(buffer: &IndexBuffer) -> Self {
        Strided {
            len: buffer.len(),
            buffer: buffer.clone(),
            offset: 0,
            stride: 1,
        }
    }
    /// Element `i` as usize (`None` if out of range or negative).
    ///
    /// ```
    /// use arrow_sparse::{tensor::levels::Strided, IndexBuffer};
    /// let buffer = IndexBuffer::Int8(vec![0, 10, -1, 30, 40].into());
    /// // elements 1, 3 of the buffer, then 5 (past its end)
    /// let s = Strided { buffer, offset: 1, stride: 2, len: 3 };
    /// assert_eq!((s.get(0), s.get(1)), (Some(10), Some(30)));
    /// assert_eq!(s.get(2), None); // buffer element 5 does not exist
    /// assert_eq!(s.get(3), None); // i >= len
    /// let neg = Strided { offset: 2, len: 1, ..s };
    /// assert_eq!(neg.get(0), None); // -1 is negative
    /// ```
    pub fn get(&self, i: usize) -> Option<usize> {
        (i < self.len)
            .then(|| self.buffer.get_usize(self.offset + i * self.stride))
            .flatten()
    }
}

/// One storage level.
///
/// ```
/// use arrow_sparse::tensor::levels::LevelKind;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, IndexBuffer};
/// // [[0, 0, 1], [2, 3, 0]] as CSR: level 1 holds the columns
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 1.0), (vec![1, 0], 2.0), (vec![1, 1], 3.0)])?;
/// let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
/// let view = csr.levels()?;
/// let cols = &view.levels[1];
/// assert_eq!((cols.kind, cols.size, cols.non_unique, cols.non_ordered), (LevelKind::Compressed, 3, false, false));
/// assert_eq!(cols.positions.as_ref().unwrap().buffer, IndexBuffer::Int32(vec![0, 1, 3].into()));
/// assert_eq!(cols.coordinates.as_ref().unwrap().buffer, IndexBuffer::Int32(vec![2, 0, 1].into()));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// The level's kind.
    pub kind: LevelKind,
    /// The level's extent.
    pub size: usize,
    /// Positions (compressed levels).
    pub positions: Option<Strided>,
    /// Coordinates (compressed and singleton levels).
    pub coordinates: Option<Strided>,
    /// Coordinates may repeat within a segment.
    pub non_unique: bool,
    /// Coordinates may be unsorted within a segment.
    pub non_ordered: bool,
    /// Singleton coordinates stored structure-of-arrays (contiguous per level).
    pub soa: bool,
}

/// A level coordinate as a linear combination `sum(coef * d[dim])` of dimension
/// coordinates (one term for plain formats; several for GCS and DM parts).
/// Each term is a `(dimension, coefficient)` pair.
///
/// ```
/// use arrow_sparse::tensor::levels::LevelExpr;
/// use arrow_sparse::{dims::DimMap, AnyTensor, CompressedAxis, CooTensor, IndexType};
/// let t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 9.0)])?.into();
/// // rows = dimension 2, columns = dimensions (1, 0): column = d1 * 2 + d0
/// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 1, 0], vec![1])?;
/// let gcs = t.to_gcs(map, CompressedAxis::Row, IndexType::Int32)?;
/// let exprs: Vec<LevelExpr> = gcs.levels()?.dim_to_lvl;
/// assert_eq!(exprs, [vec![(2, 1)], vec![(1, 2), (0, 1)]]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub type LevelExpr = Vec<(usize, usize)>;

/// The level view of a tensor.
///
/// ```
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, ValueBuffer};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 1.0), (vec![1, 0], 2.0)])?;
/// let csr: AnyTensor = coo.to_csx::<i16, i64>(CompressedAxis::Row)?.into();
/// let view = csr.levels()?;
/// assert_eq!((view.ndim, view.shape.as_slice(), view.levels.len()), (2, &[2, 3][..], 2));
/// assert_eq!(view.dim_to_lvl, [vec![(0, 1)], vec![(1, 1)]]);
/// assert_eq!((view.pos_width, view.crd_width), (64, 16)); // int64 indptr, int16 indices
/// assert_eq!(view.values, ValueBuffer::Float64(vec![1.0, 2.0].into()));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LevelView {
    /// Number of dimensions.
    pub ndim: usize,
    /// The extents of the dimensions (the tensor's logical shape).
    pub shape: Vec<usize>,
    /// The levels, outermost first.
    pub levels: Vec<Level>,
    /// Per level, its coordinate in terms of the dimensions.
    pub dim_to_lvl: Vec<LevelExpr>,
    /// The values, one per leaf (dense levels included).
    pub values: ValueBuffer,
    /// Bit width of the positions (0 when there are none).
    pub pos_width: usize,
    /// Bit width of the coordinates (0 when there are none).
    pub crd_width: usize,
}

/// How one dimension's coordinate comes back from the level coordinates:
/// `(lvl[level] / divisor) % extent`, one entry of the inverse of
/// [`LevelView::dim_to_lvl`] (MLIR's `lvlToDim`). For the plain formats the
/// divisor is 1 and the level holds the coordinate itself; a GCS / DM level that
/// combines several dimensions holds them in mixed radix.
///
/// ```
/// use arrow_sparse::tensor::levels::DimFromLevel;
/// use arrow_sparse::{dims::DimMap, AnyTensor, CompressedAxis, CooTensor, IndexType};
/// let t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 9.0)])?.into();
/// // rows = dimension 2, columns = dimensions (1, 0): column = d1 * 2 + d0
/// let map = DimMap::try_new(vec![2, 3, 4], vec![2, 1, 0], vec![1])?;
/// let view = t.to_gcs(map, CompressedAxis::Row, IndexType::Int32)?.levels()?;
/// let inverse = view.lvl_to_dim()?;
/// assert_eq!(inverse[0], DimFromLevel { level: 1, divisor: 1, extent: 2 });
/// assert_eq!(inverse[1], DimFromLevel { level: 1, divisor: 2, extent: 3 });
/// // entry (1, 2, 3) sits at level coordinates (3, 2 * 2 + 1)
/// let lvl = [3, 5];
/// let dims: Vec<_> = inverse.iter().map(|f| f.coordinate(&lvl)).collect();
/// assert_eq!(dims, [Some(1), Some(2), Some(3)]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimFromLevel {
    /// The level whose coordinate holds the dimension.
    pub level: usize,
    /// The dimension's weight in that level coordinate (its coefficient in
    /// `dim_to_lvl`).
    pub divisor: usize,
    /// The dimension's extent.
    pub extent: usize,
}

impl DimFromLevel {
    /// The dimension coordinate from the coordinates of every level; `None` when
    /// `lvl` has no such level, or the divisor or extent is 0 (a dimension next
    /// to an extent of 0, in a tensor that holds no entries).
    ///
    /// ```
    /// use arrow_sparse::tensor::levels::DimFromLevel;
    /// let f = DimFromLevel { level: 0, divisor: 4, extent: 3 };
    /// assert_eq!(f.coordinate(&[2 * 4 + 1]), Some(2));
    /// assert_eq!(f.coordinate(&[]), None);
    /// assert_eq!(DimFromLevel { divisor: 0, ..f }.coordinate(&[5]), None);
    /// ```
    pub fn coordinate(&self, lvl: &[usize]) -> Option<usize> {
        lvl.get(self.level)?
            .checked_div(self.divisor)?
            .checked_rem(self.extent)
    }
}

fn prop_name(l: &Level) -> String {
    l.level_type().to_string()
}

impl Level {
    /// The level's type and properties, as a [`LevelType`].
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelType;
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// // rows repeat: the COO's first level is compressed(nonunique)
    /// let coo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![0, 2], 2.0)])?;
    /// let view = AnyTensor::from(coo).levels()?;
    /// assert_eq!(view.levels[0].level_type(), LevelType::COMPRESSED.nonunique());
    /// assert_eq!(view.levels[1].level_type(), LevelType::SINGLETON);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn level_type(&self) -> LevelType {
        LevelType {
            kind: self.kind,
            unique: !self.non_unique,
            ordered: !self.non_ordered,
            soa: self.soa,
        }
    }
}

impl LevelView {
    /// The inverse of [`dim_to_lvl`](Self::dim_to_lvl): for each dimension, the
    /// level that holds it and how to take it out. Errors
    /// ([`Error::Invariant`]) when a dimension is in no level or in several, which
    /// no view from [`AnyTensor::levels`] has.
    ///
    /// ```
    /// use arrow_sparse::tensor::levels::DimFromLevel;
    /// use arrow_sparse::{AnyTensor, Convert, CooTensor};
    /// let coo = CooTensor::<f64, i32>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 1.0)])?;
    /// // CSF with axis order (2, 0, 1): level 0 holds dimension 2, and so on
    /// let csf: AnyTensor = coo.to_csf::<i32, i32>(&[2, 0, 1])?.into();
    /// let inverse = csf.levels()?.lvl_to_dim()?;
    /// let levels: Vec<usize> = inverse.iter().map(|f| f.level).collect();
    /// assert_eq!(levels, [1, 2, 0]);
    /// assert!(inverse.iter().all(|f| f.divisor == 1));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn lvl_to_dim(&self) -> Result<Vec<DimFromLevel>> {
        let mut out: Vec<Option<DimFromLevel>> = vec![None; self.ndim];
        for (level, e) in self.dim_to_lvl.iter().enumerate() {
            for &(d, divisor) in e {
                let bad = |what: &str| {
                    Error::invariant("dim_to_lvl", Some(level), format!("dimension {d} {what}"))
                };
                let slot = out.get_mut(d).ok_or_else(|| bad("is out of range"))?;
                if slot.is_some() {
                    return Err(bad("is in more than one level"));
                }
                let extent = *self.shape.get(d).ok_or_else(|| bad("has no extent"))?;
                *slot = Some(DimFromLevel {
                    level,
                    divisor,
                    extent,
                });
            }
        }
        out.into_iter()
            .enumerate()
            .map(|(d, f)| {
                f.ok_or_else(|| {
                    Error::invariant("dim_to_lvl", None, format!("dimension {d} is in no level"))
                })
            })
            .collect()
    }

    /// The positions in [`values`](Self::values) of the stored values of the
    /// element at logical `coords`, ascending: none when it is not stored (or
    /// `coords` is outside the shape), several when it is stored more than once.
    /// One walk down the levels, generic over their kinds: a dense level
    /// computes the child position, a compressed level searches its parent's
    /// segment (by binary search where the level is ordered), a singleton level
    /// keeps the candidates whose coordinate matches.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]] as CSR: values [1, 2, 3]
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
    /// let view = csr.levels()?;
    /// assert_eq!(view.positions(&[1, 2]), [2]);
    /// assert!(view.positions(&[0, 0]).is_empty()); // not stored
    /// assert!(view.positions(&[2, 0]).is_empty()); // outside the shape
    /// // a COO entry given twice is stored twice
    /// let dup = CooTensor::<f64, i64>::from_entries(vec![2], &[(vec![1], 1.0), (vec![1], 2.0)])?;
    /// assert_eq!(AnyTensor::from(dup).levels()?.positions(&[1]), [0, 1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn positions(&self, coords: &[usize]) -> Vec<usize> {
        if coords.len() != self.shape.len() || coords.iter().zip(&self.shape).any(|(c, d)| c >= d) {
            return Vec::new();
        }
        let lvl: Option<Vec<usize>> = self
            .dim_to_lvl
            .iter()
            .map(|e| {
                e.iter().try_fold(0usize, |acc, &(d, k)| {
                    coords.get(d)?.checked_mul(k)?.checked_add(acc)
                })
            })
            .collect();
        let Some(lvl) = lvl else { return Vec::new() };
        // Candidate positions at the current level, as ranges; the root level's
        // parent is position 0.
        let mut cands: Vec<(usize, usize)> = vec![(0, 1)];
        for (level, &c) in self.levels.iter().zip(&lvl) {
            let mut next = Vec::new();
            match level.kind {
                LevelKind::Dense => {
                    for p in cands.iter().flat_map(|&(lo, hi)| lo..hi) {
                        if let Some(q) = p.checked_mul(level.size).and_then(|x| x.checked_add(c)) {
                            next.push((q, q + 1));
                        }
                    }
                }
                LevelKind::Compressed => {
                    let (Some(pos), Some(crd)) = (&level.positions, &level.coordinates) else {
                        return Vec::new();
                    };
                    for p in cands.iter().flat_map(|&(lo, hi)| lo..hi) {
                        let (Some(lo), Some(hi)) = (pos.get(p), pos.get(p + 1)) else {
                            continue;
                        };
                        matching(crd, lo, hi, c, !level.non_ordered, &mut next);
                    }
                }
                LevelKind::Singleton => {
                    let Some(crd) = &level.coordinates else {
                        return Vec::new();
                    };
                    for &(lo, hi) in &cands {
                        matching(crd, lo, hi, c, !level.non_ordered, &mut next);
                    }
                }
            }
            cands = next;
        }
        cands.into_iter().flat_map(|(lo, hi)| lo..hi).collect()
    }

    /// Visit every stored value in storage order, with its level coordinates (one
    /// per level, outermost first) and its position in [`values`](Self::values).
    /// One walk down the levels, generic over their kinds: a dense level visits
    /// every coordinate of its parent (stored zeros included), a compressed level
    /// its parent's segment, a singleton level its parent's one coordinate. This is
    /// the co-iteration every level format's kernels use. Errors (never panics) on
    /// positions or coordinates that a trusted construction let through out of
    /// range.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
    /// // [[0, 1, 0], [2, 0, 3]] as CSR: (dense rows, compressed columns)
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
    /// let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
    /// let mut seen = Vec::new();
    /// csr.levels()?.for_each_stored(|lvl, pos| seen.push((lvl.to_vec(), pos)))?;
    /// assert_eq!(seen, [(vec![0, 1], 0), (vec![1, 0], 1), (vec![1, 2], 2)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each_stored(&self, mut f: impl FnMut(&[usize], usize)) -> Result<()> {
        self.walk(&mut |lvl, pos, _| f(lvl, pos))
    }

    /// [`for_each_stored`](Self::for_each_stored) that also says, per stored
    /// value, the first level at which its path leaves the previous value's (0
    /// for the first): the levels from there down are new nodes.
    pub(crate) fn walk(&self, f: &mut dyn FnMut(&[usize], usize, usize)) -> Result<()> {
        let n = self.levels.len();
        // a dense level of extent 0 has no coordinates: no path reaches the
        // values, however many positions the levels above it have (a dense
        // 10^9 x 0 tensor would otherwise visit 10^9 empty rows). The levels
        // above are then not checked: out-of-range positions there are a
        // trusted construction's error with nothing stored below them.
        if n == 0
            || self
                .levels
                .iter()
                .any(|lv| lv.kind == LevelKind::Dense && lv.size == 0)
        {
            return Ok(());
        }
        let bad = |l: usize, q: usize, what: &str| {
            Error::invariant(
                format!("level {l}"),
                Some(q),
                format!("{what} (trusted input was invalid)"),
            )
        };
        // the positions of `parent`'s children at level l, and the first one's
        // dense base
        let range = |l: usize, parent: usize| -> Result<(usize, usize, usize)> {
            let level = &self.levels[l];
            match level.kind {
                LevelKind::Dense => {
                    let base = parent
                        .checked_mul(level.size)
                        .ok_or_else(|| bad(l, parent, "dense position overflows"))?;
                    Ok((base, base + level.size, base))
                }
                LevelKind::Compressed => {
                    let pos = level
                        .positions
                        .as_ref()
                        .ok_or_else(|| bad(l, parent, "a compressed level without positions"))?;
                    match (pos.get(parent), pos.get(parent + 1)) {
                        (Some(a), Some(b)) if a <= b => Ok((a, b, 0)),
                        _ => Err(bad(l, parent, "bad segment")),
                    }
                }
                LevelKind::Singleton => Ok((parent, parent + 1, 0)),
            }
        };
        let (mut lo, mut hi, mut base) = (vec![0; n], vec![0; n], vec![0; n]);
        let mut lvl = vec![0usize; n];
        (lo[0], hi[0], base[0]) = range(0, 0)?;
        let (mut l, mut fresh) = (0usize, 0usize);
        loop {
            if lo[l] >= hi[l] {
                if l == 0 {
                    return Ok(());
                }
                l -= 1;
                lo[l] += 1;
                fresh = fresh.min(l);
                continue;
            }
            let q = lo[l];
            let level = &self.levels[l];
            let c = match level.kind {
                LevelKind::Dense => q - base[l],
                _ => level
                    .coordinates
                    .as_ref()
                    .and_then(|crd| crd.get(q))
                    .ok_or_else(|| bad(l, q, "no coordinate"))?,
            };
            if c >= level.size {
                return Err(bad(l, q, "coordinate outside the level"));
            }
            lvl[l] = c;
            if l + 1 == n {
                if q >= self.values.len() {
                    return Err(bad(l, q, "a stored element without a value"));
                }
                f(&lvl, q, fresh);
                lo[l] += 1;
                fresh = l;
            } else {
                (lo[l + 1], hi[l + 1], base[l + 1]) = range(l + 1, q)?;
                l += 1;
            }
        }
    }

    /// The equivalent MLIR `#sparse_tensor.encoding` attribute.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, Convert, CooTensor};
    /// let coo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![0, 2], 2.0)])?;
    /// // the properties are the data's: row 0 repeats, the (row, column) pairs do not
    /// assert_eq!(
    ///     AnyTensor::from(coo.clone()).levels()?.mlir_encoding(),
    ///     "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : compressed(nonunique), d1 : singleton), posWidth = 32, crdWidth = 32 }>"
    /// );
    /// // a dense tensor has no positions or coordinates, hence no widths
    /// assert_eq!(
    ///     AnyTensor::from(coo.to_dense()?).levels()?.mlir_encoding(),
    ///     "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : dense) }>"
    /// );
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn mlir_encoding(&self) -> String {
        let dims: Vec<String> = (0..self.ndim).map(|d| format!("d{d}")).collect();
        let mut s = format!(
            "#sparse_tensor.encoding<{{ map = ({}) -> (",
            dims.join(", ")
        );
        for (i, (l, e)) in self.levels.iter().zip(&self.dim_to_lvl).enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let terms: Vec<String> = e
                .iter()
                .map(|&(d, c)| {
                    if c == 1 {
                        format!("d{d}")
                    } else {
                        format!("d{d} * {c}")
                    }
                })
                .collect();
            let _ = write!(
                s,
                "{} : {}",
                if terms.is_empty() {
                    "0".to_string()
                } else {
                    terms.join(" + ")
                },
                prop_name(l)
            );
        }
        s.push(')');
        if self.pos_width > 0 {
            let _ = write!(s, ", posWidth = {}", self.pos_width);
        }
        if self.crd_width > 0 {
            let _ = write!(s, ", crdWidth = {}", self.crd_width);
        }
        s.push_str(" }>");
        s
    }
}

/// The positions in `lo..hi` whose coordinate is `c`, pushed as ranges: one range
/// by binary search when the coordinates there are sorted, else one per match.
fn matching(
    crd: &Strided,
    lo: usize,
    hi: usize,
    c: usize,
    sorted: bool,
    out: &mut Vec<(usize, usize)>,
) {
    let hi = hi.min(crd.len);
    if lo >= hi {
        return;
    }
    let at = |i: usize| crd.get(i).unwrap_or(usize::MAX);
    if sorted {
        let (mut a, mut b) = (lo, hi);
        while a < b {
            let m = a + (b - a) / 2;
            if at(m) < c { a = m + 1 } else { b = m }
        }
        let start = a;
        b = hi;
        while a < b {
            let m = a + (b - a) / 2;
            if at(m) <= c { a = m + 1 } else { b = m }
        }
        if a > start {
            out.push((start, a));
        }
    } else {
        out.extend((lo..hi).filter(|&i| at(i) == c).map(|i| (i, i + 1)));
    }
}

/// `[0, n]` in the given index type: the implicit positions of a root level.
fn root_positions(ty: IndexType, n: usize) -> Result<Strided> {
    let b = with_index_type!(ty, T => {
        let end = T::try_from_usize(n).ok_or_else(|| Error::overflow("root positions", n.to_string(), ty.name()))?;
        crate::buffer::IndexBuffer::from(ScalarBuffer::from(vec![<T as arrow_buffer::ArrowNativeType>::usize_as(0), end]))
    });
    Ok(Strided::whole(&b))
}

/// (unique, ordered) of the coordinates within each segment `positions[i]..positions[i+1]`.
fn segment_props(coords: &IndexBuffer, positions: Option<&IndexBuffer>) -> (bool, bool) {
    let segs: Vec<(usize, usize)> = match positions {
        None => vec![(0, coords.len())],
        Some(p) => (0..p.len().saturating_sub(1))
            .filter_map(|i| Some((p.get_usize(i)?, p.get_usize(i + 1)?)))
            .collect(),
    };
    with_index_slice!(coords.as_slice(), s => {
        let (mut unique, mut ordered) = (true, true);
        for (lo, hi) in segs {
            if let Some(seg) = s.get(lo..hi) {
                for w in seg.windows(2) {
                    if w[1] < w[0] { ordered = false; unique = false; }
                    if w[1] == w[0] { unique = false; }
                }
            }
        }
        (unique, ordered)
    })
}

/// Per level of a COO tensor, (unique, ordered) as its coordinates are: level `l`
/// is ordered when the prefixes `(d0, ..., dl)` of consecutive entries never
/// decrease, and unique when they also never repeat (MLIR's reading of the
/// properties on a compressed level followed by singletons). One pass over the
/// entries; each pair stops at the first dimension where the two differ, and the
/// pass stops once every level is known to be neither.
fn coo_props(coords: &IndexBuffer, layout: CoordLayout, n: usize, nnz: usize) -> Vec<(bool, bool)> {
    // Levels >= `unordered_from` are out of order somewhere; levels < `repeated_to`
    // repeat a prefix somewhere.
    let (mut unordered_from, mut repeated_to) = (n, 0);
    with_index_slice!(coords.as_slice(), s => {
        let at = |e: usize, d: usize| match layout {
            CoordLayout::RowMajor => s.get(e * n + d),
            CoordLayout::ColumnMajor => s.get(d * nnz + e),
        };
        for e in 1..nnz {
            let k = (0..n).find(|&d| at(e - 1, d) != at(e, d)).unwrap_or(n);
            repeated_to = repeated_to.max(k);
            if k < n && at(e, k) < at(e - 1, k) {
                unordered_from = unordered_from.min(k);
            }
            if unordered_from == 0 && repeated_to == n {
                break;
            }
        }
    });
    (0..n)
        .map(|l| {
            let ordered = l < unordered_from;
            (ordered && l >= repeated_to, ordered)
        })
        .collect()
}

fn compressed(size: usize, positions: Strided, coordinates: Strided, props: (bool, bool)) -> Level {
    Level {
        kind: LevelKind::Compressed,
        size,
        positions: Some(positions),
        coordinates: Some(coordinates),
        non_unique: !props.0,
        non_ordered: !props.1,
        soa: false,
    }
}

fn dense(size: usize) -> Level {
    Level {
        kind: LevelKind::Dense,
        size,
        positions: None,
        coordinates: None,
        non_unique: false,
        non_ordered: false,
        soa: false,
    }
}

impl AnyTensor {
    /// The level view of this tensor (zero-copy apart from the two-element root
    /// positions of COO and CSF). DM tensors with views have none: materialise
    /// them first.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 1.0), (vec![1, 0], 2.0)])?;
    /// let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
    /// let view = csr.levels()?;
    /// let AnyTensor::Csx(m) = &csr else { unreachable!() };
    /// // zero-copy: the levels share the matrix's buffers
    /// let positions = view.levels[1].positions.as_ref().unwrap();
    /// assert_eq!(positions.buffer.inner().as_ptr(), m.indptr().inner().as_ptr());
    /// assert_eq!(view.values.inner().as_ptr(), m.values().inner().as_ptr());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn levels(&self) -> Result<LevelView> {
        let bits = |t: IndexType| t.byte_width() * 8;
        match self {
            AnyTensor::Dense(t) => {
                let n = t.shape().len();
                // packed row- or column-major at any offset: the levels see the
                // `size` elements from the offset (a zero-copy slice)
                let packed = t.values().slice(t.offset(), t.size());
                let order: Vec<usize> = if t.is_row_major() {
                    (0..n).collect()
                } else if t.is_column_major() {
                    (0..n).rev().collect()
                } else {
                    return Err(Error::Unsupported(
                        "level view of a dense tensor with general strides".into(),
                    ));
                };
                let Some(values) = packed else {
                    return Err(Error::invariant(
                        "dense tensor",
                        None,
                        "its elements lie outside its buffer",
                    ));
                };
                Ok(LevelView {
                    ndim: n,
                    shape: t.shape().to_vec(),
                    levels: order.iter().map(|&d| dense(t.shape()[d])).collect(),
                    dim_to_lvl: order.iter().map(|&d| vec![(d, 1)]).collect(),
                    values,
                    pos_width: 0,
                    crd_width: 0,
                })
            }
            AnyTensor::Coo(t) => {
                let (n, nnz) = (t.shape().len(), t.nnz());
                let soa = t.layout() == CoordLayout::ColumnMajor && n > 1;
                let props = coo_props(t.coords(), t.layout(), n, nnz);
                let coords = |d: usize| match t.layout() {
                    CoordLayout::RowMajor => Strided {
                        buffer: t.coords().clone(),
                        offset: d,
                        stride: n,
                        len: nnz,
                    },
                    CoordLayout::ColumnMajor => Strided {
                        buffer: t.coords().clone(),
                        offset: d * nnz,
                        stride: 1,
                        len: nnz,
                    },
                };
                let mut levels = Vec::with_capacity(n);
                for (d, &(unique, ordered)) in props.iter().enumerate() {
                    let (kind, positions) = if d == 0 {
                        let root = root_positions(t.index_type(), nnz)?;
                        (LevelKind::Compressed, Some(root))
                    } else {
                        (LevelKind::Singleton, None)
                    };
                    levels.push(Level {
                        kind,
                        size: t.shape()[d],
                        positions,
                        coordinates: Some(coords(d)),
                        non_unique: !unique,
                        non_ordered: !ordered,
                        soa: soa && d > 0,
                    });
                }
                let w = bits(t.index_type());
                Ok(LevelView {
                    ndim: n,
                    shape: t.shape().to_vec(),
                    levels,
                    dim_to_lvl: (0..n).map(|d| vec![(d, 1)]).collect(),
                    values: t.values().clone(),
                    pos_width: w,
                    crd_width: w,
                })
            }
            AnyTensor::Csx(t) => {
                let (major, minor) = t.axis().dims();
                let props = segment_props(t.indices(), Some(t.indptr()));
                Ok(LevelView {
                    ndim: 2,
                    shape: t.shape().to_vec(),
                    levels: vec![
                        dense(t.shape()[major]),
                        compressed(
                            t.shape()[minor],
                            Strided::whole(t.indptr()),
                            Strided::whole(t.indices()),
                            props,
                        ),
                    ],
                    dim_to_lvl: vec![vec![(major, 1)], vec![(minor, 1)]],
                    values: t.values().clone(),
                    pos_width: bits(t.indptr_type()),
                    crd_width: bits(t.index_type()),
                })
            }
            AnyTensor::Csf(t) => {
                let n = t.shape().len();
                let mut levels = Vec::with_capacity(n);
                for l in 0..n {
                    let size = t.shape()[t.axis_order()[l]];
                    let (positions, props) = if l == 0 {
                        let p = root_positions(t.indptr_type(), t.indices()[0].len())?;
                        (p, segment_props(&t.indices()[0], None))
                    } else {
                        (
                            Strided::whole(&t.indptr()[l - 1]),
                            segment_props(&t.indices()[l], Some(&t.indptr()[l - 1])),
                        )
                    };
                    levels.push(compressed(
                        size,
                        positions,
                        Strided::whole(&t.indices()[l]),
                        props,
                    ));
                }
                Ok(LevelView {
                    ndim: n,
                    shape: t.shape().to_vec(),
                    levels,
                    dim_to_lvl: t.axis_order().iter().map(|&d| vec![(d, 1)]).collect(),
                    values: t.values().clone(),
                    pos_width: bits(t.indptr_type()),
                    crd_width: bits(t.index_type()),
                })
            }
            AnyTensor::Gcs(g) => {
                let inner = AnyTensor::Csx(g.matrix().clone()).levels()?;
                Ok(compose(inner, g.map()))
            }
            AnyTensor::Level(t) => t.levels(),
            AnyTensor::Dm(d) => {
                if !d.views().is_empty() {
                    return Err(Error::Unsupported(
                        "level view of a DM tensor with views (materialise it first)".into(),
                    ));
                }
                let inner = d.storage().levels()?;
                Ok(compose(inner, d.map()))
            }
        }
    }
}

/// Rewrite level expressions over the reduced (storage) dimensions in terms of
/// the logical dimensions: reduced dimension `g` is `sum(strides(g)[i] * d[part(g)[i]])`.
fn compose(mut view: LevelView, map: &crate::dims::DimMap) -> LevelView {
    view.dim_to_lvl = view
        .dim_to_lvl
        .iter()
        .map(|e| {
            let mut out: LevelExpr = Vec::new();
            for &(g, c) in e {
                for (&d, &s) in map.part(g).iter().zip(map.strides(g)) {
                    out.push((d, c * s));
                }
            }
            out
        })
        .collect();
    view.ndim = map.ndim();
    view.shape = map.shape().to_vec();
    view
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dims::DimMap;
    use crate::{CompressedAxis, Convert, CooTensor};

    fn sample() -> CooTensor<f32, i64> {
        CooTensor::from_entries(
            vec![2, 3, 4],
            &[
                (vec![0, 0, 1], 1.0),
                (vec![1, 2, 3], 9.0),
                (vec![0, 2, 1], 4.0),
            ],
        )
        .unwrap()
        .canonicalize()
        .unwrap()
    }

    #[test]
    fn mlir_encodings() {
        let coo = sample();
        let any: AnyTensor = coo.clone().into();
        assert_eq!(
            any.levels().unwrap().mlir_encoding(),
            "#sparse_tensor.encoding<{ map = (d0, d1, d2) -> (d0 : compressed(nonunique), d1 : singleton, d2 : singleton), posWidth = 64, crdWidth = 64 }>"
        );
        let csf: AnyTensor = coo.to_csf::<i16, i32>(&[2, 0, 1]).unwrap().into();
        assert_eq!(
            csf.levels().unwrap().mlir_encoding(),
            "#sparse_tensor.encoding<{ map = (d0, d1, d2) -> (d2 : compressed, d0 : compressed, d1 : compressed), posWidth = 32, crdWidth = 16 }>"
        );
        let gcs = any
            .to_gcs(
                DimMap::try_new(vec![2, 3, 4], vec![2, 1, 0], vec![1]).unwrap(),
                CompressedAxis::Row,
                IndexType::Int32,
            )
            .unwrap();
        assert_eq!(
            gcs.levels().unwrap().mlir_encoding(),
            "#sparse_tensor.encoding<{ map = (d0, d1, d2) -> (d2 : dense, d1 * 2 + d0 : compressed), posWidth = 32, crdWidth = 32 }>"
        );
        let dense: AnyTensor = coo.to_dense().unwrap().into();
        assert_eq!(
            dense.levels().unwrap().mlir_encoding(),
            "#sparse_tensor.encoding<{ map = (d0, d1, d2) -> (d0 : dense, d1 : dense, d2 : dense) }>"
        );
    }

    /// Found by fuzzing (`ipc_mmap`, a 268-byte message): a dense tensor of
    /// 1056964610 x 0 elements, viewed as levels, walked every one of its 10^9
    /// empty rows (more than a minute under the fuzzer). A dense level of extent
    /// 0 now ends the walk before it starts. The walk runs on a helper thread
    /// so that a regression fails here instead of hanging the suite (2^40 rows
    /// would take hours; the fixed walk takes microseconds).
    #[test]
    fn a_dense_level_of_extent_zero_ends_the_walk() {
        use crate::tensor::level::AnyLevel;
        use crate::{DenseTensor, Format};
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let dense: AnyTensor = DenseTensor::<i16>::try_new(vec![1 << 40, 0], Vec::new().into())
                .unwrap()
                .into();
            let mut stored = 0usize;
            dense
                .levels()
                .unwrap()
                .for_each_stored(|_, _| stored += 1)
                .unwrap();
            let level: AnyTensor = AnyLevel::from_tensor(&dense).unwrap().into();
            let coo = level.convert(Format::Coo, IndexType::Int64, None).unwrap();
            let sum = crate::kernels::reduce::sum_all::<i16>(&level).unwrap();
            tx.send((stored, coo.nnz(), coo.shape().to_vec(), sum))
                .unwrap();
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("the walk of a 2^40 x 0 dense tensor did not end");
        assert_eq!(got, (0, 0, vec![1 << 40, 0], 0));
    }

    #[test]
    fn levels_share_the_buffers() {
        let coo = sample();
        let entries = [(vec![0, 3], 1.0), (vec![0, 1], 2.0), (vec![2, 0], 3.0)];
        let unsorted = CooTensor::<f32, i64>::from_entries(vec![3, 4], &entries).unwrap();
        let u: AnyTensor = unsorted
            .to_csx::<i64, i64>(CompressedAxis::Row)
            .unwrap()
            .into();
        assert!(
            u.levels().unwrap().levels[1].non_ordered,
            "row 0 holds columns 3, 1"
        );
        let csr: AnyTensor = unsorted
            .canonicalize()
            .unwrap()
            .to_csx::<i64, i64>(CompressedAxis::Row)
            .unwrap()
            .into();
        let v = csr.levels().unwrap();
        let AnyTensor::Csx(m) = &csr else { panic!() };
        assert_eq!(
            v.levels[1]
                .positions
                .as_ref()
                .unwrap()
                .buffer
                .inner()
                .as_ptr(),
            m.indptr().inner().as_ptr()
        );
        assert_eq!(
            v.levels[1]
                .coordinates
                .as_ref()
                .unwrap()
                .buffer
                .inner()
                .as_ptr(),
            m.indices().inner().as_ptr()
        );
        assert!(!v.levels[1].non_ordered);
        // row-major COO: level d reads every ndim-th coordinate
        let lv = AnyTensor::from(coo.clone()).levels().unwrap();
        let c2 = lv.levels[2].coordinates.as_ref().unwrap();
        assert_eq!(
            (0..3).map(|i| c2.get(i).unwrap()).collect::<Vec<_>>(),
            vec![1, 1, 3]
        );
    }
    /// Per level, (unique, ordered) by definition: the prefixes of consecutive
    /// entries never decrease / strictly increase.
    fn props_by_definition(entries: &[Vec<usize>], n: usize) -> Vec<(bool, bool)> {
        (0..n)
            .map(|l| {
                let pairs = entries.windows(2).map(|w| (&w[0][..=l], &w[1][..=l]));
                let ordered = pairs.clone().all(|(a, b)| a <= b);
                (ordered && pairs.clone().all(|(a, b)| a < b), ordered)
            })
            .collect()
    }

    fn coo_levels(t: CooTensor<f64, i32>) -> Vec<(bool, bool)> {
        let v = AnyTensor::from(t).levels().unwrap();
        v.levels
            .iter()
            .map(|l| (!l.non_unique, !l.non_ordered))
            .collect()
    }

    /// Level properties of COO come from the coordinates, not the canonical flag:
    /// a sorted 1-D vector built entry by entry is `compressed`; on 2,000 random
    /// tensors (ndim 1-4, few distinct coordinates so that prefixes repeat, sorted
    /// or not, both layouts) every level agrees with the definition.
    #[test]
    fn coo_level_properties_come_from_the_data() {
        let v = CooTensor::<f64, i32>::from_entries(
            vec![10],
            &[(vec![1], 1.0), (vec![4], 2.0), (vec![7], 3.0)],
        )
        .unwrap();
        assert!(!v.is_canonical());
        assert_eq!(
            AnyTensor::from(v).levels().unwrap().mlir_encoding(),
            "#sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed), posWidth = 32, crdWidth = 32 }>"
        );
        let mut rng = crate::types::TestRng(0x2545_f491_4f6c_dd1du64);
        let mut next = |m: usize| rng.below(m);
        for _ in 0..2000 {
            let n = 1 + next(4);
            let nnz = next(7);
            let mut entries: Vec<Vec<usize>> = (0..nnz)
                .map(|_| (0..n).map(|_| next(3)).collect())
                .collect();
            if next(2) == 0 {
                entries.sort();
                if next(2) == 0 {
                    entries.dedup();
                }
            }
            let list: Vec<(Vec<usize>, f64)> = entries.iter().map(|c| (c.clone(), 1.0)).collect();
            let t = CooTensor::<f64, i32>::from_entries(vec![3; n], &list).unwrap();
            let want = props_by_definition(&entries, n);
            assert_eq!(coo_levels(t.clone()), want, "{entries:?}");
            let columns: Vec<i32> = (0..n)
                .flat_map(|d| entries.iter().map(move |c| c[d] as i32))
                .collect();
            let soa = CooTensor::<f64, i32>::try_new(
                vec![3; n],
                CoordLayout::ColumnMajor,
                crate::tensor::validate::EntryOrder::Any,
                columns.into(),
                vec![1.0; entries.len()].into(),
            )
            .unwrap();
            assert_eq!(coo_levels(soa), want, "{entries:?} column-major");
        }
    }

    /// `lvl_to_dim` inverts `dim_to_lvl` for every format: each stored entry's
    /// level coordinates give its dimension coordinates back.
    #[test]
    fn lvl_to_dim_inverts_dim_to_lvl() {
        let coo = sample();
        let any: AnyTensor = coo.clone().into();
        let mut tensors = vec![
            any.clone(),
            AnyTensor::from(coo.to_dense().unwrap()),
            AnyTensor::from(coo.to_csf::<i32, i32>(&[1, 2, 0]).unwrap()),
        ];
        for (dims, split) in [(vec![2, 1, 0], 1), (vec![0, 2, 1], 2), (vec![1, 0, 2], 0)] {
            let map = DimMap::try_new(vec![2, 3, 4], dims, vec![split]).unwrap();
            for axis in [CompressedAxis::Row, CompressedAxis::Column] {
                tensors.push(any.to_gcs(map.clone(), axis, IndexType::Int32).unwrap());
            }
        }
        let m = CooTensor::<f32, i64>::from_entries(
            vec![3, 4],
            &[(vec![2, 1], 1.0), (vec![0, 3], 2.0)],
        )
        .unwrap();
        tensors.push(m.to_csx::<i32, i32>(CompressedAxis::Column).unwrap().into());
        for t in &tensors {
            let view = t.levels().unwrap();
            let inverse = view.lvl_to_dim().unwrap();
            assert_eq!(inverse.len(), t.shape().len());
            t.for_each_entry(&mut |c: &[usize], _: f32| {
                let lvl: Vec<usize> = view
                    .dim_to_lvl
                    .iter()
                    .map(|e| e.iter().map(|&(d, k)| c[d] * k).sum())
                    .collect();
                let back: Vec<Option<usize>> = inverse.iter().map(|f| f.coordinate(&lvl)).collect();
                let want: Vec<Option<usize>> = c.iter().map(|&x| Some(x)).collect();
                assert_eq!(back, want, "{:?}", view.mlir_encoding());
            })
            .unwrap();
        }
        let mut broken = AnyTensor::from(coo).levels().unwrap();
        broken.dim_to_lvl[1] = vec![(0, 1)];
        assert!(matches!(broken.lvl_to_dim(), Err(Error::Invariant { .. })));
        broken.dim_to_lvl[1] = vec![];
        assert!(matches!(broken.lvl_to_dim(), Err(Error::Invariant { .. })));
    }
    /// The MLIR seed's two examples (`../shared/SEEDS/mlir-sparse-storage.txt`)
    /// through the level view of the crate's formats: the sparse vector as 1-D
    /// COO, the 8 x 8 matrix as CSR. The seed lists the CSR positions as
    /// `[0, 2, 2, 2, 2, 2, 2, 3, 3]`, which disagrees with its own entries (3.3 is
    /// in row 7, so rows 0-6 end at 2 and row 7 at 3): the correct array is
    /// tested. Lookups by level walk give the seed's readings (row 0 holds 1.1
    /// and 2.2 at positions 0 and 1; row 7 holds 3.3 at position 2; a zero has no
    /// position).
    #[test]
    fn the_mlir_seed_examples() {
        let whole = |s: &Strided| (0..s.len).map(|i| s.get(i).unwrap()).collect::<Vec<_>>();
        // #SparseVector: 1.1, 2.2, 3.3, 4.4 at v0[3], v0[6], v0[9], v0[12] of 16
        let entries = [
            (vec![3], 1.1f32),
            (vec![6], 2.2),
            (vec![9], 3.3),
            (vec![12], 4.4),
        ];
        let v: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![16], &entries)
            .unwrap()
            .into();
        let view = v.levels().unwrap();
        assert_eq!(
            view.mlir_encoding(),
            "#sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed), posWidth = 64, crdWidth = 64 }>"
        );
        let l0 = &view.levels[0];
        assert_eq!(whole(l0.positions.as_ref().unwrap()), [0, 4]);
        assert_eq!(whole(l0.coordinates.as_ref().unwrap()), [3, 6, 9, 12]);
        assert_eq!(
            view.values.as_typed::<f32>().unwrap().as_ref(),
            &[1.1, 2.2, 3.3, 4.4]
        );
        assert_eq!(
            (view.positions(&[9]), view.positions(&[10])),
            (vec![2], vec![])
        );
        // #CSR: 1.1 in m[0, 1], 2.2 in m[0, 4], 3.3 in m[7, 2] of 8 x 8
        let entries = [(vec![0, 1], 1.1f32), (vec![0, 4], 2.2), (vec![7, 2], 3.3)];
        let m = CooTensor::<f32, i64>::from_entries(vec![8, 8], &entries).unwrap();
        let csr: AnyTensor = m.to_csx::<i32, i32>(CompressedAxis::Row).unwrap().into();
        let view = csr.levels().unwrap();
        assert_eq!(
            view.mlir_encoding(),
            "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32, crdWidth = 32 }>"
        );
        assert_eq!(
            (view.levels[0].kind, view.levels[0].size),
            (LevelKind::Dense, 8)
        );
        let l1 = &view.levels[1];
        assert_eq!(
            whole(l1.positions.as_ref().unwrap()),
            [0, 2, 2, 2, 2, 2, 2, 2, 3]
        );
        assert_eq!(whole(l1.coordinates.as_ref().unwrap()), [1, 4, 2]);
        assert_eq!(
            view.values.as_typed::<f32>().unwrap().as_ref(),
            &[1.1, 2.2, 3.3]
        );
        assert_eq!(
            (view.positions(&[0, 1]), view.positions(&[0, 4])),
            (vec![0], vec![1])
        );
        assert_eq!(
            (view.positions(&[7, 2]), view.positions(&[1, 1])),
            (vec![2], vec![])
        );
    }
}

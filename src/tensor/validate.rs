//! The checks every tensor passes once, at its one constructor.
//!
//! Each format's `try_new` (typed or type-erased) calls exactly one function here.
//! [`Validation::Full`] runs the O(nnz) pass (every index in bounds, indptr
//! monotone, canonical flag true); [`Validation::Trusted`] keeps the O(1) structural
//! checks (shapes, buffer lengths) and skips the O(nnz) pass.

use crate::buffer::{IndexSlice, with_index_slice};
use crate::error::{Error, Result};
use crate::types::Index;

pub(crate) use crate::dims::check_len;
pub use crate::dims::{MAX_EXTENT, check_permutation, check_shape};

/// How much checking a constructor or decoder does.
///
/// ```
/// use arrow_sparse::{CompressedAxis, CsxMatrix, TensorOptions, Validation};
/// // column index 5 in a 2 x 2 matrix: only the full O(nnz) pass sees it
/// let build = |v| CsxMatrix::<f64, i32>::try_new_with(
///     vec![2, 2], CompressedAxis::Row, vec![0, 1, 1].into(), vec![5].into(), vec![1.0].into(), &TensorOptions::default().with_validation(v));
/// assert!(build(Validation::Full).is_err());
/// assert!(build(Validation::Trusted).is_ok());
/// assert_eq!(Validation::default(), Validation::Full);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Validation {
    /// Check everything, O(nnz): the default and the right choice for untrusted data.
    #[default]
    Full,
    /// Check only shapes and buffer lengths, O(ndim). For data this crate (or another
    /// trusted producer) wrote and that has already been validated. An invalid
    /// tensor accepted this way cannot cause undefined behaviour, but operations on
    /// it may return errors or wrong results.
    Trusted,
}

/// What every tensor constructor takes after its buffers: dimension names and how
/// much to check.
///
/// Every format's type-erased `try_new` takes `&TensorOptions` as its last argument
/// (after the shape, the format's structure and the buffers); the typed
/// `try_new_with` constructors do too. The default names no dimensions and runs the
/// full O(nnz) [`Validation`].
///
/// ```
/// use arrow_sparse::{AnyDense, TensorOptions, Validation, ValueBuffer};
/// let opts = TensorOptions::default().with_dim_names(["row", "col"]);
/// let t = AnyDense::try_new(vec![1, 2], vec![2, 1], ValueBuffer::Int32(vec![1, 2].into()), &opts)?;
/// assert_eq!(t.dim_names(), &["row", "col"]);
/// assert_eq!(TensorOptions::trusted().validation(), Validation::Trusted);
/// // one name per dimension
/// let bad = TensorOptions::default().with_dim_names(["row"]);
/// assert!(AnyDense::try_new(vec![1, 2], vec![2, 1], ValueBuffer::Int32(vec![1, 2].into()), &bad).is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TensorOptions {
    dim_names: Vec<String>,
    validation: Validation,
}

impl TensorOptions {
    /// Full validation, unnamed dimensions (the same as `default()`).
    ///
    /// ```
    /// use arrow_sparse::TensorOptions;
    /// assert_eq!(TensorOptions::new(), TensorOptions::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// [`Validation::Trusted`], unnamed dimensions: the explicit trusted path, for
    /// parts this crate (or another trusted producer) already validated.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, CsxMatrix, TensorOptions};
    /// // column index 5 in a 2 x 2 matrix: the trusted path does not look at indices
    /// let m = CsxMatrix::<f64, i32>::try_new_with(
    ///     vec![2, 2], CompressedAxis::Row, vec![0, 1, 1].into(), vec![5].into(), vec![1.0].into(), &TensorOptions::trusted());
    /// assert!(m.is_ok());
    /// ```
    pub fn trusted() -> Self {
        Self::default().with_validation(Validation::Trusted)
    }

    /// Name the dimensions (one name per dimension; empty names are unnamed
    /// dimensions; no names at all leaves every dimension unnamed).
    ///
    /// ```
    /// use arrow_sparse::TensorOptions;
    /// let o = TensorOptions::default().with_dim_names(["i", "j"]);
    /// assert_eq!(o.dim_names(), &["i", "j"]);
    /// ```
    pub fn with_dim_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.dim_names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Set the [`Validation`] level.
    ///
    /// ```
    /// use arrow_sparse::{TensorOptions, Validation};
    /// let o = TensorOptions::default().with_validation(Validation::Trusted);
    /// assert_eq!(o, TensorOptions::trusted());
    /// ```
    pub fn with_validation(mut self, validation: Validation) -> Self {
        self.validation = validation;
        self
    }

    /// The dimension names (empty: unnamed).
    ///
    /// ```
    /// use arrow_sparse::TensorOptions;
    /// assert!(TensorOptions::default().dim_names().is_empty());
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }

    /// The validation level.
    ///
    /// ```
    /// use arrow_sparse::{TensorOptions, Validation};
    /// assert_eq!(TensorOptions::default().validation(), Validation::Full);
    /// ```
    pub fn validation(&self) -> Validation {
        self.validation
    }

    /// The names for an `ndim`-dimensional tensor: the given ones, or `ndim` empty
    /// names when none were given (checked by the constructor).
    pub(crate) fn names_for(&self, ndim: usize) -> Vec<String> {
        if self.dim_names.is_empty() {
            vec![String::new(); ndim]
        } else {
            self.dim_names.clone()
        }
    }
}

/// What a COO tensor's producer claims about the order of its entries (Arrow's
/// `is_canonical` flag): part of the COO structure, next to its [`CoordLayout`].
///
/// [`CoordLayout`]: crate::CoordLayout
///
/// ```
/// use arrow_sparse::{CooTensor, CoordLayout, EntryOrder};
/// // (1, 0) before (0, 1): not sorted, so claiming canonical order is refused
/// let build = |order| CooTensor::<f64, i32>::try_new(
///     vec![2, 2], CoordLayout::RowMajor, order, vec![1, 0, 0, 1].into(), vec![1.0, 2.0].into());
/// assert!(build(EntryOrder::Any).is_ok());
/// assert!(build(EntryOrder::Canonical).is_err());
/// assert_eq!(EntryOrder::from(true), EntryOrder::Canonical);
/// assert_eq!(EntryOrder::default(), EntryOrder::Any);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EntryOrder {
    /// No claim: entries in any order, duplicates allowed.
    #[default]
    Any,
    /// Sorted lexicographically by coordinates, without duplicates (checked under
    /// [`Validation::Full`]).
    Canonical,
}

impl EntryOrder {
    /// Whether this is [`EntryOrder::Canonical`].
    ///
    /// ```
    /// use arrow_sparse::EntryOrder;
    /// assert!(EntryOrder::Canonical.is_canonical());
    /// ```
    pub fn is_canonical(self) -> bool {
        self == EntryOrder::Canonical
    }
}

impl From<bool> for EntryOrder {
    /// `true` is [`EntryOrder::Canonical`] (Arrow's `is_canonical` flag).
    fn from(canonical: bool) -> Self {
        if canonical {
            EntryOrder::Canonical
        } else {
            EntryOrder::Any
        }
    }
}

/// Check that a list of dimension names has exactly one name per dimension
/// (unnamed dimensions have empty names). An empty list is accepted only for a 0-D
/// tensor: the constructors that take an empty list to mean "no names" replace it
/// with `ndim` empty names before calling this.
///
/// ```
/// use arrow_sparse::{tensor::validate::check_dim_names, Error};
/// check_dim_names(&["row".into(), String::new()], 2)?;
/// assert!(matches!(check_dim_names(&["row".into()], 2), Err(Error::Shape { .. })));
/// assert!(check_dim_names(&[], 2).is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn check_dim_names(names: &[String], ndim: usize) -> Result<()> {
    if names.len() != ndim {
        return Err(Error::shape(
            "dim_names",
            format!("{ndim} names (one per dimension)"),
            format!("{} names", names.len()),
        ));
    }
    Ok(())
}

/// Every element of `idx` lies in `0..bound`. The error names `what` and the
/// first offending position.
///
/// ```
/// use arrow_sparse::{tensor::validate::check_bounds, Error, IndexSlice};
/// check_bounds("indices", IndexSlice::Int32(&[0, 2, 1]), 3)?;
/// let err = check_bounds("indices", IndexSlice::Int32(&[0, -1, 3]), 3).unwrap_err();
/// assert!(matches!(err, Error::IndexOutOfBounds { position: 1, value: -1, bound: 3, .. }));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn check_bounds(what: &str, idx: IndexSlice<'_>, bound: usize) -> Result<()> {
    with_index_slice!(idx, s => check_bounds_typed(what, s, bound))
}

fn check_bounds_typed<I: Index>(what: &str, s: &[I], bound: usize) -> Result<()> {
    // `as_usize` sign-extends, so negative values become huge. With
    // bound <= isize::MAX, x lies in 0..bound exactly when the top bit of x is 0 and
    // the top bit of x - bound (wrapping) is 1: an AND-fold of `!x & (x - bound)`
    // over fixed chunks vectorises (plain x86-64 has no unsigned 64-bit max, so a
    // max-fold is about 1.5x slower; measured in benches/RESULTS.md).
    const TOP: u32 = usize::BITS - 1;
    let ok = if bound <= isize::MAX as usize {
        s.chunks(4096).all(|c| {
            c.iter().fold(usize::MAX, |acc, x| {
                let x = x.as_usize();
                acc & !x & x.wrapping_sub(bound)
            }) >> TOP
                == 1
        })
    } else {
        s.chunks(4096)
            .all(|c| c.iter().fold(0usize, |m, x| m.max(x.as_usize())) < bound)
            || s.is_empty()
    };
    if ok {
        return Ok(());
    }
    let (position, value) = s
        .iter()
        .enumerate()
        .find(|(_, x)| x.as_usize() >= bound)
        .map(|(p, x)| (p, x.wide()))
        .unwrap_or((0, 0));
    Err(Error::IndexOutOfBounds {
        buffer: what.to_string(),
        position,
        value,
        bound: bound as u64,
    })
}

/// `indptr` starts at 0, never decreases and ends at `end`. Its length must have
/// been checked by the caller. Returns nothing; errors name the first bad position.
///
/// ```
/// use arrow_sparse::{tensor::validate::check_indptr, Error, IndexSlice};
/// check_indptr("indptr", IndexSlice::Int64(&[0, 2, 2, 5]), 5)?;
/// let err = check_indptr("indptr", IndexSlice::Int64(&[0, 3, 2, 5]), 5).unwrap_err();
/// assert!(matches!(err, Error::Invariant { position: Some(2), .. })); // 3 -> 2 decreases
/// assert!(check_indptr("indptr", IndexSlice::Int64(&[0, 2, 4]), 5).is_err()); // ends at 4, not 5
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn check_indptr(what: &str, indptr: IndexSlice<'_>, end: usize) -> Result<()> {
    with_index_slice!(indptr, s => check_indptr_typed(what, s, end))
}

fn check_indptr_typed<P: Index>(what: &str, s: &[P], end: usize) -> Result<()> {
    let first = s.first().map(|x| x.wide()).unwrap_or(0);
    if first != 0 {
        return Err(Error::invariant(
            what,
            Some(0),
            format!("indptr must start at 0, found {first}"),
        ));
    }
    let last = s.last().map(|x| x.wide()).unwrap_or(0);
    if last != end as i128 {
        return Err(Error::invariant(
            what,
            Some(s.len().saturating_sub(1)),
            format!("indptr must end at {end}, found {last}"),
        ));
    }
    // Chunked so the comparison loop vectorises; chunks overlap by one element.
    let mut start = 0;
    while start + 1 < s.len() {
        let stop = (start + 4096).min(s.len() - 1);
        let bad = s[start..=stop]
            .windows(2)
            .fold(false, |b, w| b | (w[1] < w[0]));
        if bad {
            let p = (start..stop).find(|&i| s[i + 1] < s[i]).unwrap_or(start);
            return Err(Error::invariant(
                what,
                Some(p + 1),
                format!(
                    "indptr decreases from {} to {}",
                    s[p].wide(),
                    s[p + 1].wide()
                ),
            ));
        }
        start = stop;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_indptr() {
        assert!(check_bounds("i", IndexSlice::Int32(&[0, 1, 2]), 3).is_ok());
        let e = check_bounds("i", IndexSlice::Int32(&[0, -1, 2]), 3).unwrap_err();
        assert!(matches!(
            e,
            Error::IndexOutOfBounds {
                position: 1,
                value: -1,
                ..
            }
        ));
        assert!(check_bounds("i", IndexSlice::UInt8(&[]), 0).is_ok());
        assert!(check_bounds("i", IndexSlice::UInt8(&[0]), 0).is_err());
        assert!(check_bounds("i", IndexSlice::UInt64(&[u64::MAX]), 5).is_err());
        assert!(check_bounds("i", IndexSlice::UInt64(&[1 << 63]), i64::MAX as usize).is_err());
        assert!(check_bounds("i", IndexSlice::Int64(&[i64::MAX - 1]), i64::MAX as usize).is_ok());
        assert!(check_bounds("i", IndexSlice::Int64(&[i64::MIN]), i64::MAX as usize).is_err());
        let long: Vec<i16> = (0..9000).map(|i| (i % 300) as i16).collect();
        assert!(check_bounds("i", IndexSlice::Int16(&long), 300).is_ok());
        assert!(check_bounds("i", IndexSlice::Int16(&long), 299).is_err());
        assert!(check_indptr("p", IndexSlice::Int64(&[0, 2, 2, 5]), 5).is_ok());
        assert!(check_indptr("p", IndexSlice::Int64(&[1, 2, 5]), 5).is_err());
        assert!(check_indptr("p", IndexSlice::Int64(&[0, 2, 5]), 4).is_err());
        let e = check_indptr("p", IndexSlice::Int64(&[0, 3, 2, 5]), 5).unwrap_err();
        assert!(matches!(
            e,
            Error::Invariant {
                position: Some(2),
                ..
            }
        ));
        let long: Vec<i32> = (0..10_000).chain([5]).chain(10_000..10_010).collect();
        assert!(check_indptr("p", IndexSlice::Int32(&long), 10_009).is_err());
        assert!(check_permutation("a", &[2, 0, 1], 3).is_ok());
        assert!(check_permutation("a", &[2, 2, 1], 3).is_err());
        assert!(check_permutation("a", &[0, 1], 3).is_err());
    }

    #[test]
    fn shapes() {
        assert_eq!(check_shape(&[2, 3], "s").unwrap(), Some(6));
        assert_eq!(check_shape(&[1 << 40, 1 << 40], "s").unwrap(), None);
        assert!(check_shape(&[usize::MAX], "s").is_err());
    }
}

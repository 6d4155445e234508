//! Reductions: sums over all elements or along any set of axes, and equality
//! with a tolerance.
//!
//! ```
//! use arrow_sparse::kernels::reduce::{allclose, sum_axes};
//! use arrow_sparse::{AnyTensor, CooTensor, DenseTensor};
//! let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 0], 1.0), (vec![1, 0], 2.0)])?.into();
//! let column_sums = sum_axes::<f64>(&t, &[0])?; // shape [2]
//! assert_eq!((column_sums.nnz(), column_sums.get(&[0]), column_sums.get(&[1])), (1, Some(3.0), Some(0.0)));
//! let dense: AnyTensor = DenseTensor::<f64>::try_new(vec![2, 2], vec![1.0, 0.0, 2.0, 1e-12].into())?.into();
//! assert!(allclose::<f64>(&t, &dense, 0.0, 1e-9)?);
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use super::{Numeric, narrow};
use crate::error::{Error, Result};
use crate::tensor::{AnyTensor, CooTensor, CoordLayout, Validation};

/// The sum of every element (stored duplicates included), accumulated per the
/// rule of [`kernels`](super).
///
/// ```
/// use arrow_sparse::kernels::reduce::sum_all;
/// use arrow_sparse::{AnyTensor, DenseTensor};
/// let t: AnyTensor = DenseTensor::<u8>::try_new(vec![3], vec![200, 50, 5].into())?.into();
/// assert_eq!(sum_all::<u8>(&t)?, 255);
/// let t: AnyTensor = DenseTensor::<u8>::try_new(vec![2], vec![200, 56].into())?.into();
/// assert!(sum_all::<u8>(&t).is_err()); // 256 does not fit uint8
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn sum_all<V: Numeric>(t: &AnyTensor) -> Result<V> {
    let mut acc = V::acc_zero();
    t.for_each_entry::<V>(&mut |_, v| acc = V::acc_add(acc, v.to_acc()))?;
    narrow::<V>(acc, "sum")
}

/// Sum along `axes` (any set of distinct dimensions): the result keeps the other
/// dimensions, as a canonical COO tensor (int64 coordinates). Summing along every
/// axis gives a 1-element tensor of shape `[1]`.
///
/// ```
/// use arrow_sparse::kernels::reduce::sum_axes;
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(
///     vec![2, 3, 2], &[(vec![0, 1, 0], 1), (vec![1, 1, 1], 2), (vec![1, 2, 0], 4)])?.into();
/// let s = sum_axes::<i32>(&t, &[0, 2])?; // keeps dimension 1
/// assert_eq!((s.shape(), s.coords().as_ref(), s.values().as_ref()), (&[3usize][..], &[1i64, 2][..], &[3, 4][..]));
/// let all = sum_axes::<i32>(&t, &[2, 1, 0])?;
/// assert_eq!((all.shape(), all.get(&[0])), (&[1usize][..], Some(7)));
/// assert!(sum_axes::<i32>(&t, &[1, 1]).is_err()); // axes must be distinct
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn sum_axes<V: Numeric>(t: &AnyTensor, axes: &[usize]) -> Result<CooTensor<V, i64>> {
    let n = t.shape().len();
    let mut drop = vec![false; n];
    for &a in axes {
        if a >= n || std::mem::replace(&mut drop[a], true) {
            return Err(Error::shape(
                "sum axes",
                format!("distinct axes below {n}"),
                format!("{axes:?}"),
            ));
        }
    }
    let keep: Vec<usize> = (0..n).filter(|&d| !drop[d]).collect();
    if keep.is_empty() {
        let s = sum_all::<V>(t)?;
        return CooTensor::try_new_with(
            vec![1],
            vec![0i64].into(),
            CoordLayout::RowMajor,
            vec![s].into(),
            true,
            Validation::Trusted,
        );
    }
    let shape: Vec<usize> = keep.iter().map(|&d| t.shape()[d]).collect();
    let mut coords: Vec<i64> = Vec::new();
    let mut values: Vec<V> = Vec::new();
    t.for_each_entry::<V>(&mut |c, v| {
        coords.extend(keep.iter().map(|&d| c[d] as i64));
        values.push(v);
    })?;
    // sort by the kept coordinates and accumulate runs with the checked accumulator
    let projected = CooTensor::try_new_with(
        shape.clone(),
        coords.into(),
        CoordLayout::RowMajor,
        values.into(),
        false,
        Validation::Trusted,
    )?;
    let m = keep.len();
    let order: Vec<usize> = (0..m).collect();
    let perm = super::convert::sort_permutation(&projected, &order)?;
    let (pc, pv) = (&projected.coords()[..], &projected.values()[..]);
    let mut out_c: Vec<i64> = Vec::new();
    let mut out_v: Vec<V> = Vec::new();
    let mut i = 0;
    while i < perm.len() {
        let key = &pc[perm[i] * m..perm[i] * m + m];
        let mut acc = V::acc_zero();
        let mut j = i;
        while j < perm.len() && &pc[perm[j] * m..perm[j] * m + m] == key {
            acc = V::acc_add(acc, pv[perm[j]].to_acc());
            j += 1;
        }
        out_c.extend_from_slice(key);
        out_v.push(narrow::<V>(acc, "sum")?);
        i = j;
    }
    CooTensor::try_new_with(
        shape,
        out_c.into(),
        CoordLayout::RowMajor,
        out_v.into(),
        true,
        Validation::Trusted,
    )?
    .with_dim_names(keep.iter().map(|&d| t.dim_names()[d].clone()).collect())
}

/// Whether two tensors of any formats have the same shape and every element
/// differs by at most `atol + rtol * |b|` (absent elements count as zero; NaN
/// equals nothing). Duplicates are summed and differences taken in the
/// accumulator ([`Numeric::Acc`]), so an int8 `100 - (-100)` is 200, not an
/// overflow.
///
/// ```
/// use arrow_sparse::kernels::reduce::allclose;
/// use arrow_sparse::{AnyTensor, CooTensor, DenseTensor};
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![0], 100.0), (vec![2], 1e-6)])?.into();
/// let b: AnyTensor = DenseTensor::<f64>::try_new(vec![3], vec![100.5, 0.0, 0.0].into())?.into();
/// assert!(!allclose::<f64>(&a, &b, 0.0, 1e-3)?); // |100 - 100.5| > 1e-3
/// assert!(allclose::<f64>(&a, &b, 0.01, 1e-3)?); // 0.5 <= 1e-3 + 0.01 * 100.5
/// let c: AnyTensor = DenseTensor::<f64>::try_new(vec![1, 3], vec![100.0, 0.0, 0.0].into())?.into();
/// assert!(!allclose::<f64>(&a, &c, 1.0, 1.0)?); // shapes differ
/// let x: AnyTensor = DenseTensor::<i8>::try_new(vec![1], vec![100].into())?.into();
/// let y: AnyTensor = DenseTensor::<i8>::try_new(vec![1], vec![-100].into())?.into();
/// assert!(allclose::<i8>(&x, &y, 0.0, 200.0)?); // |100 - (-100)| = 200
/// assert!(!allclose::<i8>(&x, &y, 0.0, 199.0)?);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn allclose<V: Numeric>(a: &AnyTensor, b: &AnyTensor, rtol: f64, atol: f64) -> Result<bool> {
    if a.shape() != b.shape() {
        return Ok(false);
    }
    let (xa, va) = super::elementwise::canonical_sums(&a.to_coo::<V, i64>()?)?;
    let (xb, vb) = super::elementwise::canonical_sums(&b.to_coo::<V, i64>()?)?;
    let n = a.shape().len();
    let zero = V::acc_zero();
    let close = |p: V::Acc, q: V::Acc| {
        let d = V::acc_to_f64(V::acc_sub(p, q)).abs();
        // NaN (also an overflowed integer accumulator) is close to nothing
        d <= atol + rtol * V::acc_to_f64(q).abs()
    };
    let (mut i, mut j) = (0, 0);
    while i < va.len() || j < vb.len() {
        let ord = match (i < va.len(), j < vb.len()) {
            (true, true) => xa[i * n..i * n + n].cmp(&xb[j * n..j * n + n]),
            (true, false) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let ok = match ord {
            std::cmp::Ordering::Less => {
                i += 1;
                close(va[i - 1], zero)
            }
            std::cmp::Ordering::Greater => {
                j += 1;
                close(zero, vb[j - 1])
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
                close(va[i - 1], vb[j - 1])
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

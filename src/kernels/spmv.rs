//! Sparse matrix-vector (SpMV) and matrix-matrix (SpMM) products, reading the
//! tensors' buffers in place.
//!
//! ```
//! use arrow_sparse::kernels::spmv::spmv_coo;
//! use arrow_sparse::CooTensor;
//! let a = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 3), (vec![1, 0], -1), (vec![0, 1], 1)])?;
//! assert_eq!(spmv_coo(&a, &[10, 100])?, vec![400, -10]); // duplicates add
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use rayon::prelude::*;

use super::{CHUNK, Numeric, narrow};
use crate::buffer::advise_huge_pages;
use crate::error::{Error, Result};
use crate::tensor::{
    AnyDm, AnyTensor, CompressedAxis, CooTensor, CoordLayout, CsxMatrix, DenseTensor, GcsTensor,
};
use crate::types::Index;
use crate::with_index_type;

fn check_len(what: &str, found: usize, expected: usize) -> Result<()> {
    if found != expected {
        return Err(Error::shape(
            what,
            format!("length {expected}"),
            format!("length {found}"),
        ));
    }
    Ok(())
}

/// One CSR row: `sum(values[k] * x[indices[k]])` over the row, in order. An
/// index `>= x.len()` (possible only in a tensor built without validation) sets
/// `*bad` and is skipped; the caller turns `bad` into an error. (Four interleaved
/// partial sums were tried: no faster, the loop waits on the gathers of `x`.)
#[inline(always)]
fn row_dot<V: Numeric, I: Index>(idx: &[I], vals: &[V], x: &[V], bad: &mut bool) -> V::Acc {
    let mut acc = V::acc_zero();
    for (&j, &v) in idx.iter().zip(vals) {
        match x.get(j.as_usize()) {
            Some(&xj) => acc = V::madd(acc, v, xj),
            None => *bad = true,
        }
    }
    acc
}

/// The error for an index that a tensor built without validation holds.
fn unvalidated_index(extent: usize) -> Error {
    Error::invariant(
        "SpMV indices",
        None,
        format!(
            "an index is not below the column count {extent} (the tensor was built without validation)"
        ),
    )
}

/// `y = A x` for a CSR or CSC matrix. CSR runs rows in parallel blocks; CSC
/// scatters column by column on one thread (so sums keep one fixed order).
///
/// ```
/// use arrow_sparse::{kernels::spmv::spmv_csx, CompressedAxis, CsxMatrix};
/// // [[1, 0, 2], [0, 3, 0]]
/// let a = CsxMatrix::<f64, i32>::try_new(CompressedAxis::Row, vec![2, 3], vec![0, 2, 3].into(), vec![0, 2, 1].into(), vec![1.0, 2.0, 3.0].into())?;
/// assert_eq!(spmv_csx(&a, &[1.0, 10.0, 100.0])?, vec![201.0, 30.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv_csx;
/// use arrow_sparse::{CompressedAxis, Convert, CooTensor};
/// let a = CooTensor::<f32, i64>::from_entries(vec![1, 3], &[(vec![0, 2], 0.5)])?.to_csx::<i32, i64>(CompressedAxis::Row)?;
/// assert_eq!(spmv_csx(&a, &[0.0, 0.0, 4.0])?, vec![2.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_csx<V: Numeric, I: Index, P: Index>(a: &CsxMatrix<V, I, P>, x: &[V]) -> Result<Vec<V>> {
    let (rows, cols) = (a.shape()[0], a.shape()[1]);
    check_len("SpMV vector", x.len(), cols)?;
    let (ptr, idx, vals) = (&a.indptr()[..], &a.indices()[..], &a.values()[..]);
    let nnz = vals.len();
    let bound = |p: P| p.as_usize().min(nnz);
    match a.axis() {
        CompressedAxis::Row => {
            let mut y = vec![V::ZERO; rows];
            let bad = std::sync::atomic::AtomicBool::new(false);
            let oob = std::sync::atomic::AtomicBool::new(false);
            let run = |(b, out): (usize, &mut [V])| {
                let (mut overflow, mut out_of_range) = (false, false);
                for (r, yr) in out.iter_mut().enumerate() {
                    let i = b * CHUNK + r;
                    let (lo, hi) = (bound(ptr[i]), bound(ptr[i + 1]));
                    let acc = if lo <= hi {
                        row_dot(&idx[lo..hi], &vals[lo..hi], x, &mut out_of_range)
                    } else {
                        V::acc_zero()
                    };
                    match V::from_acc(acc) {
                        Some(v) => *yr = v,
                        None => overflow = true,
                    }
                }
                if overflow {
                    bad.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                if out_of_range {
                    oob.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            };
            if nnz >= 1 << 16 {
                y.par_chunks_mut(CHUNK).enumerate().for_each(run);
            } else {
                y.chunks_mut(CHUNK).enumerate().for_each(run);
            }
            if oob.into_inner() {
                return Err(unvalidated_index(cols));
            }
            if bad.into_inner() {
                return Err(Error::overflow("SpMV row sum", "a row", V::TYPE.name()));
            }
            Ok(y)
        }
        CompressedAxis::Column => {
            let mut acc = vec![V::acc_zero(); rows];
            for j in 0..cols {
                let (lo, hi) = (bound(ptr[j]), bound(ptr[j + 1]));
                if lo >= hi {
                    continue;
                }
                let xj = x[j];
                for (&i, &v) in idx[lo..hi].iter().zip(&vals[lo..hi]) {
                    if let Some(slot) = acc.get_mut(i.as_usize()) {
                        *slot = V::madd(*slot, v, xj);
                    }
                }
            }
            acc.into_iter()
                .map(|s| narrow::<V>(s, "SpMV row sum"))
                .collect()
        }
    }
}

/// `y = A x` for a 2-D COO matrix (entries in any order, duplicates add).
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv_coo;
/// use arrow_sparse::CooTensor;
/// // [[0, 2], [1, 0], [0, 0]]
/// let a = CooTensor::<f64, i32>::from_entries(vec![3, 2], &[(vec![1, 0], 1.0), (vec![0, 1], 2.0)])?;
/// assert_eq!(spmv_coo(&a, &[3.0, 0.5])?, vec![1.0, 3.0, 0.0]);
/// assert!(spmv_coo(&a, &[1.0, 2.0, 3.0]).is_err()); // x needs one value per column
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_coo<V: Numeric, I: Index>(a: &CooTensor<V, I>, x: &[V]) -> Result<Vec<V>> {
    if a.ndim() != 2 {
        return Err(Error::shape(
            "COO SpMV",
            "a 2-D matrix",
            format!("{}-D", a.ndim()),
        ));
    }
    let (rows, cols) = (a.shape()[0], a.shape()[1]);
    check_len("SpMV vector", x.len(), cols)?;
    let (c, vals, nnz) = (&a.coords()[..], &a.values()[..], a.nnz());
    let mut acc = vec![V::acc_zero(); rows];
    match a.layout() {
        CoordLayout::RowMajor => {
            for (rc, &v) in c.chunks_exact(2).zip(vals) {
                if let (Some(slot), Some(&xj)) =
                    (acc.get_mut(rc[0].as_usize()), x.get(rc[1].as_usize()))
                {
                    *slot = V::madd(*slot, v, xj);
                }
            }
        }
        CoordLayout::ColumnMajor => {
            let (r, cc) = c.split_at(nnz);
            for ((&i, &j), &v) in r.iter().zip(cc).zip(vals) {
                if let (Some(slot), Some(&xj)) = (acc.get_mut(i.as_usize()), x.get(j.as_usize())) {
                    *slot = V::madd(*slot, v, xj);
                }
            }
        }
    }
    acc.into_iter()
        .map(|s| narrow::<V>(s, "SpMV row sum"))
        .collect()
}

/// GCS SpMV: the reduced matrix times `x`, a dense tensor over the column
/// dimensions (in the map's column-part order, row-major); the result is a dense
/// tensor over the row dimensions.
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv_gcs;
/// use arrow_sparse::{dims::DimMap, CompressedAxis, CooTensor, DenseTensor, GcsTensor};
/// // A of shape (2, 3, 2): rows = dimension 2, columns = dimensions (0, 1)
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 2], &[(vec![0, 1, 0], 2.0), (vec![1, 2, 1], 3.0)])?;
/// let map = DimMap::try_new(vec![2, 3, 2], vec![2, 0, 1], vec![1])?;
/// let a = GcsTensor::<f64, i32>::from_coo(&coo, map, CompressedAxis::Row)?;
/// // x over dimensions (0, 1): y[k] = sum over i, j of A[i, j, k] * x[i, j]
/// let x = DenseTensor::<f64>::try_new(vec![2, 3], vec![0.0, 10.0, 0.0, 0.0, 0.0, 100.0].into())?;
/// let y = spmv_gcs(&a, &x)?;
/// assert_eq!((y.shape(), y.values().as_ref()), (&[2usize][..], &[20.0, 300.0][..]));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_gcs<V: Numeric, I: Index, P: Index>(
    a: &GcsTensor<V, I, P>,
    x: &DenseTensor<V>,
) -> Result<DenseTensor<V>> {
    let map = a.map();
    let col_shape: Vec<usize> = map.part(1).iter().map(|&d| map.shape()[d]).collect();
    if x.shape() != col_shape.as_slice() {
        return Err(Error::shape(
            "GCS SpMV operand",
            format!(
                "shape {col_shape:?} (the column dimensions {:?})",
                map.part(1)
            ),
            format!("{:?}", x.shape()),
        ));
    }
    let xv = x.to_row_major()?;
    let y = spmv_csx(a.matrix(), &xv.values()[..])?;
    let row_shape: Vec<usize> = map.part(0).iter().map(|&d| map.shape()[d]).collect();
    DenseTensor::try_new(row_shape, y.into())
}

/// DM SpMV: a DM tensor without views whose storage is a CSR / CSC matrix (two
/// parts) works like GCS: `x` over the column dimensions, result over the rows.
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv_dm;
/// use arrow_sparse::{dims::DimMap, CooTensor, DenseTensor, DmTensor, Error, Format};
/// // [[1, 0, 2], [0, 3, 0]] stored as CSR through the identity map
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 0], 1.0), (vec![0, 2], 2.0), (vec![1, 1], 3.0)])?;
/// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr)?;
/// let x = DenseTensor::<f64>::try_new(vec![3], vec![1.0, 10.0, 100.0].into())?;
/// assert_eq!(spmv_dm(dm.as_any(), &x)?.values().as_ref(), &[201.0, 30.0]);
/// // a view (here columns 0 and 2) must be materialised first
/// let s = dm.as_any().slice(1, 0, 3, 2)?;
/// assert!(matches!(spmv_dm(&s, &x), Err(Error::Unsupported(_))));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_dm<V: Numeric>(a: &AnyDm, x: &DenseTensor<V>) -> Result<DenseTensor<V>> {
    if !a.views().is_empty() {
        return Err(Error::Unsupported(
            "SpMV of a DM tensor with views (materialise it first)".into(),
        ));
    }
    let AnyTensor::Csx(m) = a.storage() else {
        return Err(Error::Unsupported(format!(
            "DM SpMV needs CSR / CSC storage, found {}",
            a.storage().format()
        )));
    };
    let m = m.unify_index_types()?;
    with_index_type!(m.index_type(), J => {
        let csx = m.downcast::<V, J, J>().ok_or_else(|| Error::Type { what: "DM value type".into(), expected: V::TYPE.name().into(), found: a.value_type().name().into() })?;
        let g = GcsTensor::try_new(a.map().clone(), csx)?;
        spmv_gcs(&g, x)
    })
}

/// `C = A B` for a CSR / CSC matrix `A` (m x k) and a row-major dense `B`
/// (k x n); `C` is row-major m x n. CSR runs row blocks in parallel.
///
/// ```
/// use arrow_sparse::kernels::spmv::spmm_csx;
/// use arrow_sparse::{CompressedAxis, Convert, CooTensor, DenseTensor};
/// let a = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 2.0), (vec![1, 0], 1.0)])?
///     .to_csx::<i32, i32>(CompressedAxis::Row)?;
/// let b = DenseTensor::<f64>::try_new(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0].into())?;
/// assert_eq!(spmm_csx(&a, &b)?.values().as_ref(), &[6.0, 8.0, 1.0, 2.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmm_csx<V: Numeric, I: Index, P: Index>(
    a: &CsxMatrix<V, I, P>,
    b: &DenseTensor<V>,
) -> Result<DenseTensor<V>> {
    let (m, k) = (a.shape()[0], a.shape()[1]);
    if b.ndim() != 2 || b.shape()[0] != k {
        return Err(Error::shape(
            "SpMM operand",
            format!("a {k} x n matrix"),
            format!("{:?}", b.shape()),
        ));
    }
    let n = b.shape()[1];
    let b = b.to_row_major()?;
    let bv = &b.values()[..];
    let (ptr, idx, vals) = (&a.indptr()[..], &a.indices()[..], &a.values()[..]);
    let nnz = vals.len();
    let bound = |p: P| p.as_usize().min(nnz);
    match a.axis() {
        CompressedAxis::Row => {
            // each row sums into a local n-length accumulator, then narrows into
            // its slice of C: no m x n accumulator and no extra pass over C
            let mut c = vec![V::ZERO; m * n];
            advise_huge_pages(&c);
            let bad = std::sync::atomic::AtomicBool::new(false);
            let block = (CHUNK / n.max(1)).max(1);
            let run = |(bi, out): (usize, &mut [V])| {
                let mut acc = vec![V::acc_zero(); n];
                let mut failed = false;
                for (r, row) in out.chunks_mut(n.max(1)).enumerate() {
                    let i = bi * block + r;
                    let (lo, hi) = (bound(ptr[i]), bound(ptr[i + 1]));
                    acc.fill(V::acc_zero());
                    for kk in lo..hi.max(lo) {
                        let j = idx[kk].as_usize();
                        let Some(bj) = bv.get(j * n..j * n + n) else {
                            failed = true;
                            continue;
                        };
                        let v = vals[kk];
                        for (o, &b) in acc.iter_mut().zip(bj) {
                            *o = V::madd(*o, v, b);
                        }
                    }
                    for (o, &s) in row.iter_mut().zip(&acc) {
                        match V::from_acc(s) {
                            Some(v) => *o = v,
                            None => failed = true,
                        }
                    }
                }
                if failed {
                    bad.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            };
            if n > 0 {
                if nnz * n >= 1 << 16 {
                    c.par_chunks_mut(block * n).enumerate().for_each(run);
                } else {
                    c.chunks_mut(block * n).enumerate().for_each(run);
                }
            }
            if bad.into_inner() {
                // an overflow, or an index of a tensor built without validation
                let out_of_range = idx.iter().any(|j| j.as_usize() >= k);
                return Err(if out_of_range {
                    unvalidated_index(k)
                } else {
                    Error::overflow("SpMM sum", "a row", V::TYPE.name())
                });
            }
            DenseTensor::try_new(vec![m, n], c.into())
        }
        CompressedAxis::Column => {
            let mut acc = vec![V::acc_zero(); m * n];
            advise_huge_pages(&acc);
            for j in 0..k {
                for kk in bound(ptr[j])..bound(ptr[j + 1]).max(bound(ptr[j])) {
                    let i = idx[kk].as_usize();
                    if i >= m {
                        continue;
                    }
                    let v = vals[kk];
                    for (o, &bj) in acc[i * n..i * n + n].iter_mut().zip(&bv[j * n..j * n + n]) {
                        *o = V::madd(*o, v, bj);
                    }
                }
            }
            let out: Vec<V> = acc
                .into_iter()
                .map(|s| narrow::<V>(s, "SpMM sum"))
                .collect::<Result<_>>()?;
            DenseTensor::try_new(vec![m, n], out.into())
        }
    }
}

/// `y = A x` for any 2-D sparse tensor (CSR, CSC, COO) or a GCS / DM tensor
/// (with `x` over the column dimensions, flattened); dispatches on the format and
/// the index types. The result is flat (row-major over the row dimensions).
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
/// let a = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 0], 1.0), (vec![1, 1], 2.0)])?;
/// let x = [3.0, 4.0];
/// for t in [AnyTensor::from(a.clone()), a.to_csx::<i32, i32>(CompressedAxis::Column)?.into()] {
///     assert_eq!(spmv::<f64>(&t, &x)?, vec![3.0, 8.0]);
/// }
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv<V: Numeric>(a: &AnyTensor, x: &[V]) -> Result<Vec<V>> {
    let mismatch = || Error::Type {
        what: "SpMV value type".into(),
        expected: V::TYPE.name().into(),
        found: a.value_type().name().into(),
    };
    match a {
        AnyTensor::Csx(m) => {
            let m = m.unify_index_types()?;
            with_index_type!(m.index_type(), J => spmv_csx(&m.downcast::<V, J, J>().ok_or_else(mismatch)?, x))
        }
        AnyTensor::Coo(c) => {
            with_index_type!(c.index_type(), J => spmv_coo(&c.downcast::<V, J>().ok_or_else(mismatch)?, x))
        }
        AnyTensor::Gcs(g) => {
            let xd = operand(g.map(), x)?;
            let m = g.matrix().unify_index_types()?;
            let y = with_index_type!(m.index_type(), J => {
                let csx = m.downcast::<V, J, J>().ok_or_else(mismatch)?;
                spmv_gcs(&GcsTensor::try_new(g.map().clone(), csx)?, &xd)?
            });
            Ok(y.values().to_vec())
        }
        AnyTensor::Dm(d) => Ok(spmv_dm(d, &operand(d.map(), x)?)?.values().to_vec()),
        other => Err(Error::Unsupported(format!(
            "SpMV of a {} tensor",
            other.format()
        ))),
    }
}

/// A flat vector as the dense operand over a two-part map's column dimensions.
fn operand<V: Numeric>(map: &crate::dims::DimMap, x: &[V]) -> Result<DenseTensor<V>> {
    if map.reduced_ndim() != 2 {
        return Err(Error::shape(
            "SpMV",
            "a map with two parts",
            format!("{} parts", map.reduced_ndim()),
        ));
    }
    check_len("SpMV vector", x.len(), map.reduced_shape()[1])?;
    let col_shape: Vec<usize> = map.part(1).iter().map(|&d| map.shape()[d]).collect();
    DenseTensor::try_new(col_shape, x.to_vec().into())
}

//! CSF tensor kernels: tensor-times-vector (TTV) along any mode and MTTKRP, plus
//! the straightforward CSR-based MTTKRP they are measured against.
//!
//! ```
//! use arrow_sparse::kernels::csf::ttv;
//! use arrow_sparse::{Convert, CooTensor};
//! let t = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[(vec![0, 1, 0], 2.0), (vec![0, 1, 1], 3.0)])?;
//! let csf = t.to_csf::<i32, i32>(&[0, 1, 2])?;
//! let y = ttv(&csf, 2, &[10.0, 1.0])?; // contract the last mode with v
//! assert_eq!((y.shape(), y.get(&[0, 1])), (&[2usize, 2][..], Some(23.0)));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use super::{Numeric, narrow};
use crate::error::{Error, Result};
use crate::tensor::{CooTensor, CsfTensor, CsxMatrix, DenseTensor, Validation};
use crate::types::Index;

fn check_factors<V: Numeric>(
    shape: &[usize],
    mode: usize,
    factors: &[DenseTensor<V>],
) -> Result<usize> {
    let n = shape.len();
    if mode >= n {
        return Err(Error::shape(
            "MTTKRP mode",
            format!("a mode below {n}"),
            mode.to_string(),
        ));
    }
    if factors.len() != n {
        return Err(Error::shape(
            "MTTKRP factors",
            format!("{n} factor matrices (one per mode; the mode's own is ignored)"),
            factors.len().to_string(),
        ));
    }
    let rank = factors
        .iter()
        .enumerate()
        .find(|(d, _)| *d != mode)
        .map_or(0, |(_, f)| f.shape().get(1).copied().unwrap_or(0));
    for (d, f) in factors.iter().enumerate() {
        if d != mode
            && (f.ndim() != 2
                || f.shape()[0] != shape[d]
                || f.shape()[1] != rank
                || !f.as_any().is_row_major())
        {
            return Err(Error::shape(
                format!("factor matrix {d}"),
                format!("row-major {} x {rank}", shape[d]),
                format!("{:?}", f.shape()),
            ));
        }
    }
    Ok(rank)
}

/// MTTKRP on a CSF tensor: `M[i, r] = sum over entries x with x[mode] = i of
/// value * prod_{d != mode} F_d[x[d], r]`. `factors` has one row-major
/// `shape[d] x R` matrix per mode (the one at `mode` is not read). The result is
/// `shape[mode] x R`, row-major.
///
/// The tree is walked once. Above the mode's level, each node extends the
/// Hadamard product of its ancestors' factor rows (one R-length product per node);
/// below it, sums run bottom-up: a leaf adds `value * F[c]` into its parent's
/// R-length sum, and an inner node multiplies its children's sum by its own factor
/// row once before adding it to its parent's. A leaf therefore costs one
/// multiply-add per rank column, against three operations per column and entry
/// for the CSR-based [`mttkrp_csr`] (which recomputes the whole product per entry).
///
/// ```
/// use arrow_sparse::kernels::csf::mttkrp;
/// use arrow_sparse::{Convert, CooTensor, DenseTensor};
/// let t = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[(vec![0, 1, 1], 3.0), (vec![1, 0, 0], 1.0)])?
///     .to_csf::<i32, i32>(&[0, 1, 2])?;
/// let f = |v: Vec<f64>| DenseTensor::<f64>::try_new(vec![2, 1], v.into()); // rank 1
/// let m = mttkrp(&t, 0, &[f(vec![0.0, 0.0])?, f(vec![1.0, 2.0])?, f(vec![5.0, 7.0])?])?;
/// assert_eq!(m.values().as_ref(), &[3.0 * 2.0 * 7.0, 1.0 * 1.0 * 5.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn mttkrp<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    mode: usize,
    factors: &[DenseTensor<V>],
) -> Result<DenseTensor<V>> {
    let rank = check_factors(t.shape(), mode, factors)?;
    let n = t.ndim();
    let rows = t.shape()[mode];
    let f: Vec<&[V]> = factors.iter().map(|x| &x.values()[..]).collect();
    let order = t.axis_order();
    let mode_level = order.iter().position(|&d| d == mode).unwrap_or(0);
    // prefix: slot l (l <= mode_level) holds the product of the factor rows of
    // levels 0..l (slot 0: all ones); sums: slot l (l > mode_level) the running
    // subtree sum of level l's nodes under the current parent
    let mut prefix = vec![V::acc_zero(); (mode_level + 1) * rank];
    prefix[..rank].iter_mut().for_each(|p| *p = V::acc_one());
    let mut w = Walk {
        t,
        rank,
        order,
        mode_level,
        f: &f,
        prefix,
        sums: vec![V::acc_zero(); (n + 1) * rank],
        out: vec![V::acc_zero(); rows * rank],
    };
    if n > 0 {
        w.above(0, 0, t.indices()[0].len())?;
    }
    let out: Vec<V> = w
        .out
        .into_iter()
        .map(|a| narrow::<V>(a, "MTTKRP sum"))
        .collect::<Result<_>>()?;
    DenseTensor::try_new(vec![rows, rank], out.into())
}

struct Walk<'a, V: Numeric, I: Index, P: Index> {
    t: &'a CsfTensor<V, I, P>,
    rank: usize,
    order: &'a [usize],
    mode_level: usize,
    f: &'a [&'a [V]],
    prefix: Vec<V::Acc>,
    sums: Vec<V::Acc>,
    out: Vec<V::Acc>,
}

impl<'a, V: Numeric, I: Index, P: Index> Walk<'a, V, I, P> {
    /// The coordinate of `node` at `level`, checked against its dimension.
    #[inline(always)]
    fn coord(&self, level: usize, node: usize) -> Result<usize> {
        let c = self.t.indices()[level][node].as_usize();
        let bound = self.t.shape()[self.order[level]];
        if c >= bound {
            return Err(Error::IndexOutOfBounds {
                buffer: format!("indices[{level}]"),
                position: node,
                value: c as i128,
                bound: bound as u64,
            });
        }
        Ok(c)
    }

    /// The children range of `node` at `level` (not the leaf level), checked.
    #[inline(always)]
    fn children(&self, level: usize, node: usize) -> Result<(usize, usize)> {
        let p = &self.t.indptr()[level];
        let (lo, hi) = (p[node].as_usize(), p[node + 1].as_usize());
        if lo > hi || hi > self.t.indices()[level + 1].len() {
            return Err(Error::invariant(
                format!("indptr[{level}]"),
                Some(node),
                "bad child range",
            ));
        }
        Ok((lo, hi))
    }

    /// The factor row of coordinate `c` at `level`.
    #[inline(always)]
    fn row(&self, level: usize, c: usize) -> &'a [V] {
        let (r, f) = (self.rank, self.f);
        &f[self.order[level]][c * r..c * r + r]
    }

    /// The value of leaf `node`.
    #[inline(always)]
    fn value(&self, node: usize) -> Result<V::Acc> {
        self.t
            .values()
            .get(node)
            .map(|v| v.to_acc())
            .ok_or_else(|| Error::invariant("CSF tree", Some(node), "leaf without a value"))
    }

    /// Nodes `lo..hi` of a level at or above the mode's.
    fn above(&mut self, level: usize, lo: usize, hi: usize) -> Result<()> {
        let (r, n, ml) = (self.rank, self.t.ndim(), self.mode_level);
        for node in lo..hi {
            let c = self.coord(level, node)?;
            if level < ml {
                let row = self.row(level, c);
                let (before, rest) = self.prefix.split_at_mut((level + 1) * r);
                let parent = &before[level * r..];
                for ((h, &pp), &x) in rest[..r].iter_mut().zip(parent).zip(row) {
                    *h = V::acc_mul(pp, x.to_acc());
                }
                let (clo, chi) = self.children(level, node)?;
                self.above(level + 1, clo, chi)?;
                continue;
            }
            // the mode's level: c is the output row
            let out = c * r;
            let pre = ml * r;
            if level == n - 1 {
                let v = self.value(node)?;
                for (o, &p) in self.out[out..out + r]
                    .iter_mut()
                    .zip(&self.prefix[pre..pre + r])
                {
                    *o = V::acc_add(*o, V::acc_mul(v, p));
                }
            } else {
                let (clo, chi) = self.children(level, node)?;
                let s = (level + 1) * r;
                self.sums[s..s + r].fill(V::acc_zero());
                self.below(level + 1, clo, chi)?;
                for ((o, &p), &x) in self.out[out..out + r]
                    .iter_mut()
                    .zip(&self.prefix[pre..pre + r])
                    .zip(&self.sums[s..s + r])
                {
                    *o = V::acc_add(*o, V::acc_mul(p, x));
                }
            }
        }
        Ok(())
    }

    /// Adds, into sums slot `level`, the subtree sums of nodes `lo..hi` (a level
    /// below the mode's): `F[c] * value` for a leaf, `F[c] * (children's sum)`
    /// for an inner node.
    fn below(&mut self, level: usize, lo: usize, hi: usize) -> Result<()> {
        let (r, n) = (self.rank, self.t.ndim());
        let s = level * r;
        if level == n - 1 {
            for node in lo..hi {
                let c = self.coord(level, node)?;
                let v = self.value(node)?;
                let row = self.row(level, c);
                for (acc, &x) in self.sums[s..s + r].iter_mut().zip(row) {
                    *acc = V::acc_add(*acc, V::acc_mul(v, x.to_acc()));
                }
            }
            return Ok(());
        }
        for node in lo..hi {
            let c = self.coord(level, node)?;
            let (clo, chi) = self.children(level, node)?;
            let cs = s + r;
            self.sums[cs..cs + r].fill(V::acc_zero());
            self.below(level + 1, clo, chi)?;
            let row = self.row(level, c);
            let (mine, child) = self.sums.split_at_mut(cs);
            for ((acc, &x), &ch) in mine[s..].iter_mut().zip(row).zip(&child[..r]) {
                *acc = V::acc_add(*acc, V::acc_mul(ch, x.to_acc()));
            }
        }
        Ok(())
    }
}

/// The CSR-based MTTKRP used as the baseline: the tensor matricized along `mode`
/// (rows = the mode, columns = the other modes in increasing order, linearized
/// row-major, as a CSR matrix `m` of shape `shape[mode] x prod(other extents)`)
/// and, per stored entry, the Hadamard product of the other modes' factor rows
/// recomputed from its column index. `shape` is the tensor's shape and `factors`
/// are as for [`mttkrp`]; the result is the same.
///
/// ```
/// use arrow_sparse::kernels::csf::mttkrp_csr;
/// use arrow_sparse::{CompressedAxis, Convert, CooTensor, DenseTensor};
/// // the (2, 2, 2) tensor with [0, 1, 1] = 3 and [1, 0, 0] = 1, matricized along mode 0:
/// // column of [i, j, k] = j * 2 + k
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 4], &[(vec![0, 3], 3.0), (vec![1, 0], 1.0)])?;
/// let m = coo.to_csx::<i32, i32>(CompressedAxis::Row)?;
/// let f = |v: Vec<f64>| DenseTensor::<f64>::try_new(vec![2, 1], v.into()); // rank 1
/// let factors = [f(vec![0.0, 0.0])?, f(vec![1.0, 2.0])?, f(vec![5.0, 7.0])?];
/// let out = mttkrp_csr(&m, &[2, 2, 2], 0, &factors)?;
/// assert_eq!((out.shape(), out.values().as_ref()), (&[2usize, 1][..], &[3.0 * 2.0 * 7.0, 1.0 * 1.0 * 5.0][..]));
/// // the matrix must be CSR
/// let csc = coo.to_csx::<i32, i32>(CompressedAxis::Column)?;
/// assert!(mttkrp_csr(&csc, &[2, 2, 2], 0, &factors).is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn mttkrp_csr<V: Numeric, I: Index, P: Index>(
    m: &CsxMatrix<V, I, P>,
    shape: &[usize],
    mode: usize,
    factors: &[DenseTensor<V>],
) -> Result<DenseTensor<V>> {
    let rank = check_factors(shape, mode, factors)?;
    let others: Vec<usize> = (0..shape.len()).filter(|&d| d != mode).collect();
    let cols: usize = others.iter().map(|&d| shape[d]).product();
    if m.shape() != [shape[mode], cols] || m.axis() != crate::CompressedAxis::Row {
        return Err(Error::shape(
            "matricized tensor",
            format!("CSR {} x {cols}", shape[mode]),
            format!("{:?} {:?}", m.axis(), m.shape()),
        ));
    }
    let f: Vec<&[V]> = factors.iter().map(|x| &x.values()[..]).collect();
    let mut out = vec![V::acc_zero(); shape[mode] * rank];
    let mut prod = vec![V::acc_zero(); rank];
    let (ptr, idx, vals) = (&m.indptr()[..], &m.indices()[..], &m.values()[..]);
    for i in 0..shape[mode] {
        let (lo, hi) = (ptr[i].as_usize(), ptr[i + 1].as_usize().min(vals.len()));
        for k in lo..hi.max(lo) {
            let mut j = idx[k].as_usize();
            prod.iter_mut().for_each(|p| *p = vals[k].to_acc());
            for &d in others.iter().rev() {
                let c = j % shape[d];
                j /= shape[d];
                for (p, &x) in prod.iter_mut().zip(&f[d][c * rank..c * rank + rank]) {
                    *p = V::acc_mul(*p, x.to_acc());
                }
            }
            for (o, &p) in out[i * rank..i * rank + rank].iter_mut().zip(&prod) {
                *o = V::acc_add(*o, p);
            }
        }
    }
    let out: Vec<V> = out
        .into_iter()
        .map(|a| narrow::<V>(a, "MTTKRP sum"))
        .collect::<Result<_>>()?;
    DenseTensor::try_new(vec![shape[mode], rank], out.into())
}

/// Tensor-times-vector along `mode`: `Y[x without x[mode]] = sum value * v[x[mode]]`.
/// The result is a canonical COO tensor of the other dimensions (ndim >= 2 input).
/// When `mode` is the last level of the CSF tree, each fiber becomes one output
/// entry without any sort.
///
/// ```
/// use arrow_sparse::kernels::csf::ttv;
/// use arrow_sparse::{Convert, CooTensor};
/// let t = CooTensor::<i32, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 4), (vec![1, 0], 5)])?
///     .to_csf::<i32, i32>(&[1, 0])?;
/// let y = ttv(&t, 0, &[10, 1])?; // sum over dimension 0: a vector over dimension 1
/// assert_eq!((y.get(&[0]), y.get(&[2])), (Some(5), Some(40)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn ttv<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    mode: usize,
    v: &[V],
) -> Result<CooTensor<V, i64>> {
    let n = t.ndim();
    if mode >= n {
        return Err(Error::shape(
            "TTV mode",
            format!("a mode below {n}"),
            mode.to_string(),
        ));
    }
    if v.len() != t.shape()[mode] {
        return Err(Error::shape(
            "TTV vector",
            format!("length {}", t.shape()[mode]),
            format!("length {}", v.len()),
        ));
    }
    let out_shape: Vec<usize> = (0..n)
        .filter(|&d| d != mode)
        .map(|d| t.shape()[d])
        .collect();
    let order = t.axis_order();
    let mut coords: Vec<i64> = Vec::new();
    let mut values: Vec<V> = Vec::new();
    if order[n - 1] == mode {
        // one output entry per fiber of the last level
        let mut cur = vec![0usize; n];
        let ptr = &t.indptr()[n - 2];
        let mut fiber_sum = |cur: &[usize], lo: usize, hi: usize| -> Result<()> {
            let mut acc = V::acc_zero();
            for k in lo..hi {
                let c = t.indices()[n - 1][k].as_usize();
                let x = *v.get(c).ok_or_else(|| Error::IndexOutOfBounds {
                    buffer: format!("indices[{}]", n - 1),
                    position: k,
                    value: c as i128,
                    bound: v.len() as u64,
                })?;
                acc = V::madd(acc, t.values()[k], x);
            }
            coords.extend((0..n).filter(|&d| d != mode).map(|d| cur[d] as i64));
            values.push(narrow::<V>(acc, "TTV sum")?);
            Ok(())
        };
        visit_fibers(t, 0, 0, t.indices()[0].len(), &mut cur, &mut |cur, node| {
            let (lo, hi) = (ptr[node].as_usize(), ptr[node + 1].as_usize());
            fiber_sum(cur, lo, hi)
        })?;
        let coo = CooTensor::try_new_with(
            out_shape,
            coords.into(),
            crate::CoordLayout::RowMajor,
            values.into(),
            false,
            Validation::Trusted,
        )?;
        // fibers come in tree order, which is lexicographic for natural orders only
        return super::convert::canonicalize(&coo);
    }
    let mut overflow = false;
    t.for_each(|c, x| {
        coords.extend((0..n).filter(|&d| d != mode).map(|d| c[d] as i64));
        let w = v.get(c[mode]).copied().unwrap_or(V::ZERO);
        match V::from_acc(V::madd(V::acc_zero(), x, w)) {
            Some(p) => values.push(p),
            None => {
                overflow = true;
                values.push(V::ZERO)
            }
        }
    })?;
    if overflow {
        return Err(Error::overflow(
            "TTV product",
            "a value times a vector element",
            V::TYPE.name(),
        ));
    }
    let coo = CooTensor::try_new_with(
        out_shape,
        coords.into(),
        crate::CoordLayout::RowMajor,
        values.into(),
        false,
        Validation::Trusted,
    )?;
    super::elementwise::sum_duplicates(&coo)
}

/// Visit the nodes of level `n - 2` (the fibers' parents) with the coordinates
/// of their path.
fn visit_fibers<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    level: usize,
    lo: usize,
    hi: usize,
    cur: &mut Vec<usize>,
    f: &mut dyn FnMut(&[usize], usize) -> Result<()>,
) -> Result<()> {
    let n = t.ndim();
    for node in lo..hi {
        cur[t.axis_order()[level]] = t.indices()[level][node].as_usize();
        if level == n - 2 {
            f(cur, node)?;
        } else {
            let p = &t.indptr()[level];
            let (clo, chi) = (p[node].as_usize(), p[node + 1].as_usize());
            if clo > chi || chi > t.indices()[level + 1].len() {
                return Err(Error::invariant(
                    format!("indptr[{level}]"),
                    Some(node),
                    "bad child range",
                ));
            }
            visit_fibers(t, level + 1, clo, chi, cur, f)?;
        }
    }
    Ok(())
}

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

use crate::tensor::{EntryOrder, TensorOptions};
use arrow_buffer::ScalarBuffer;

use super::{Numeric, alloc, narrow};
use crate::error::{Error, Result};
use crate::tensor::{CooTensor, CsfTensor, CsxMatrix, DenseTensor};
use crate::types::Index;

/// Accumulators narrowed into a new vector (fallibly allocated).
fn narrow_all<V: Numeric>(acc: &[V::Acc], what: &str) -> Result<Vec<V>> {
    let mut out = alloc::with_capacity::<V>(acc.len(), what)?;
    for &a in acc {
        out.push(narrow::<V>(a, what)?);
    }
    Ok(out)
}

fn check_factors<V: Numeric>(
    shape: &[usize],
    mode: usize,
    factors: &[DenseTensor<V>],
) -> Result<usize> {
    let n = shape.len();
    if n < 2 {
        // no other mode gives a factor (nor a rank)
        return Err(Error::shape(
            "MTTKRP tensor",
            "ndim >= 2",
            format!("ndim {n}"),
        ));
    }
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
                || f.as_row_major_slice().is_none())
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
/// Leaves are added in tight loops over their coordinate and value slices; the
/// leaf level's factor rows are prefetched ahead when that factor is larger
/// than half the level-2 cache (random rows, as for SpMM's operand). Floats
/// accumulate in the result itself, integers in the checked wide accumulator.
///
/// On several threads (a tree of more than 65 536 leaves): with the mode at the
/// root, ranges of roots (split by their leaf counts) fill their own output
/// rows; with the mode below the root and a small result (its rows times the
/// chunks at most an eighth of the leaves, its elements times the chunks at
/// most the leaves), the roots are cut into up to 16
/// chunks of about as many leaves, each chunk with its own partial result,
/// added in chunk order at the end (the chunks depend on the data only, so one
/// thread computes the same sums); with a larger result, each thread walks the
/// whole tree and adds into its own range of output rows (skipping the other
/// rows' subtrees). The result does not depend on the number of threads.
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
    let rows = t.shape()[mode];
    // row-major in place (checked above; the mode's factor is not read)
    let f: Vec<&[V]> = factors
        .iter()
        .map(|x| x.as_row_major_slice().unwrap_or(&[]))
        .collect();
    let len = rows
        .checked_mul(rank)
        .ok_or_else(|| Error::allocation("MTTKRP result", usize::MAX, size_of::<V>()))?;
    // zero pages from the OS; floats accumulate in the result itself
    let mut values: Vec<V> = alloc::zeroed(len, "MTTKRP result")?;
    if let Some(acc) = V::as_acc_mut(&mut values) {
        mttkrp_into(t, mode, rank, &f, acc)?;
    } else {
        let mut acc = alloc::filled(len, V::acc_zero(), "MTTKRP accumulator")?;
        mttkrp_into(t, mode, rank, &f, &mut acc)?;
        for (o, &a) in values.iter_mut().zip(&acc) {
            *o = narrow::<V>(a, "MTTKRP sum")?;
        }
    }
    DenseTensor::try_new(vec![rows, rank], values.into())
}

/// The walk of [`mttkrp`] into `out` (`shape[mode] x rank`, zero). With the
/// mode at the root, on a pool of several threads and a tree of more than
/// `2 * PAR_WORK` leaves whose root coordinates increase, the roots are split
/// between threads by their leaf counts ([`par_nodes`]): each root owns its
/// output row, so each range of roots fills its own rows, with its own
/// scratch, and every row gets the same additions in the same order as on one
/// thread. With the mode below the root and a small result, by chunks of roots
/// ([`mttkrp_chunks`], [`mttkrp_chunked`]) on any number of threads. With the
/// mode below the root and a larger result, on several threads, the output
/// rows are cut into one range per thread with about as many of the mode's
/// nodes (estimated from a sample of their coordinates); each range walks the
/// whole tree but adds only into its rows (the subtrees under other rows are
/// skipped), so again every row gets the same additions in the same order.
/// Otherwise one thread.
fn mttkrp_into<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    mode: usize,
    rank: usize,
    f: &[&[V]],
    out: &mut [V::Acc],
) -> Result<()> {
    let n = t.ndim();
    let order = t.axis_order();
    let mode_level = order.iter().position(|&d| d == mode).unwrap_or(0);
    let roots = t.indices().first().map_or(0, |r| r.len());
    // the factor gathered at the leaf level is prefetched when it is larger
    // than half the level-2 cache (random rows, as SpMM's operand)
    let pf = order
        .last()
        .is_some_and(|&d| mode_level + 1 < n && super::spmv::prefetches(f[d]));
    let total = t.shape()[mode];
    let walk = |out: &mut [V::Acc], row0: usize, skip: bool, lo: usize, hi: usize| -> Result<()> {
        // prefix: slot l (l <= mode_level) holds the product of the factor rows
        // of levels 0..l (slot 0: all ones); sums: slot l (l > mode_level) the
        // running subtree sum of level l's nodes under the current parent
        let mut prefix = alloc::filled((mode_level + 1) * rank, V::acc_zero(), "MTTKRP products")?;
        prefix[..rank].iter_mut().for_each(|p| *p = V::acc_one());
        let mut w = Walk {
            t,
            rank,
            order,
            mode_level,
            f,
            pf,
            leaf_idx: &t.indices()[n - 1][..],
            leaf_vals: &t.values()[..],
            leaf_bound: t.shape()[order[n - 1]],
            leaf_factor: f[order[n - 1]],
            prefix,
            sums: alloc::filled((n + 1) * rank, V::acc_zero(), "MTTKRP sums")?,
            rows: out.len().checked_div(rank).unwrap_or(total),
            out,
            row0,
            skip,
        };
        w.above(0, lo, hi)
    };
    let threads = rayon::current_num_threads();
    let parallel = rank > 0 && threads > 1 && t.nnz() > 2 * super::spmv::PAR_WORK;
    let idx0 = t.indices().first().map_or(&[][..], |r| &r[..]);
    if parallel && mode_level == 0 && idx0.windows(2).all(|p| p[0] < p[1]) {
        let lv = Levels::of(t);
        let leaf_start = |k: usize| lv.descend(0, k, n - 1);
        return par_nodes(
            0,
            roots,
            (out, 0usize),
            &leaf_start,
            &|(part, row0): (&mut [V::Acc], usize), _, mid| {
                // root `mid` starts the second part's rows
                let rows = idx0[mid].as_usize().saturating_sub(row0);
                let rows = rows.min(part.len() / rank);
                let (a, b) = part.split_at_mut(rows * rank);
                ((a, row0), (b, row0 + rows))
            },
            &|lo, hi, (part, row0)| walk(part, row0, false, lo, hi),
        );
    }
    // the result's rows (`out` holds `total * rank` elements)
    let rows = total;
    let chunks = mttkrp_chunks(t.nnz(), rows, rank);
    if mode_level > 0 && rank > 0 && chunks >= 2 && roots >= 2 {
        return mttkrp_chunked(t, rank, chunks, out, &walk);
    }
    if parallel && mode_level > 0 && rows >= 2 {
        // the output rows cut into one range per thread, about as many of the
        // mode's nodes each (sampled); every range walks the whole tree and
        // fills only its rows, skipping the subtrees of the other rows
        let bounds = super::spmv::csc_row_parts(&t.indices()[mode_level][..], rows, threads);
        let parts = super::spmv::row_parts(out, &bounds, rank);
        use rayon::prelude::*;
        let results: Vec<Result<()>> = parts
            .into_par_iter()
            .map(|(row0, part)| walk(part, row0, true, 0, roots))
            .collect();
        // the first part's error, as the ranges come in row order
        return results.into_iter().collect();
    }
    walk(out, 0, false, 0, roots)
}

struct Walk<'a, 'o, V: Numeric, I: Index, P: Index> {
    t: &'a CsfTensor<V, I, P>,
    rank: usize,
    order: &'a [usize],
    mode_level: usize,
    f: &'a [&'a [V]],
    /// Prefetch the leaf level's factor rows ahead.
    pf: bool,
    /// The leaf level: its coordinates, the values, its extent and factor.
    leaf_idx: &'a [I],
    leaf_vals: &'a [V],
    leaf_bound: usize,
    leaf_factor: &'a [V],
    prefix: Vec<V::Acc>,
    sums: Vec<V::Acc>,
    /// The output rows `row0..` (all of them on one thread).
    out: &'o mut [V::Acc],
    row0: usize,
    /// How many rows `out` holds.
    rows: usize,
    /// Skip the mode's nodes whose row is not in `out` (a part of a walk split
    /// by output rows); else they are an error.
    skip: bool,
}

impl<'a, V: Numeric, I: Index, P: Index> Walk<'a, '_, V, I, P> {
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

    /// The coordinates and values of leaves `lo..hi`, and the leaf level's
    /// extent.
    #[inline(always)]
    fn leaves(&self, lo: usize, hi: usize) -> Result<(&'a [I], &'a [V], usize)> {
        match (self.leaf_idx.get(lo..hi), self.leaf_vals.get(lo..hi)) {
            (Some(c), Some(v)) => Ok((c, v, self.leaf_bound)),
            (None, _) => Err(Error::invariant(
                "CSF tree",
                Some(hi),
                "leaf range past the end",
            )),
            _ => Err(Error::invariant(
                "CSF tree",
                Some(hi),
                "leaf without a value",
            )),
        }
    }

    /// The mode at the leaf level, leaves `lo..hi` (one parent): each adds its
    /// value times the parent's product of factor rows into its output row, in
    /// one tight loop. Rows outside this part's are skipped (`skip`) or an
    /// error.
    fn mode_leaves(&mut self, lo: usize, hi: usize) -> Result<()> {
        let (r, level) = (self.rank, self.t.ndim() - 1);
        let (coords, vals, bound) = self.leaves(lo, hi)?;
        let prefix = &self.prefix[level * r..level * r + r];
        let rows = self.rows;
        for (node, (&c, &v)) in (lo..).zip(coords.iter().zip(vals)) {
            let c = c.as_usize();
            let o = c.wrapping_sub(self.row0);
            if o >= rows {
                if c >= bound {
                    return Err(oob(level, node, c, bound));
                }
                if self.skip {
                    continue; // another part's row
                }
                return Err(outside_part(level, node));
            }
            let v = v.to_acc();
            for (d, &p) in self.out[o * r..o * r + r].iter_mut().zip(prefix) {
                *d = V::acc_add(*d, V::acc_mul(v, p));
            }
        }
        Ok(())
    }

    /// Nodes `lo..hi` of a level at or above the mode's.
    fn above(&mut self, level: usize, lo: usize, hi: usize) -> Result<()> {
        let (r, n, ml) = (self.rank, self.t.ndim(), self.mode_level);
        if level == ml && level == n - 1 {
            return self.mode_leaves(lo, hi);
        }
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
            // the mode's level: c is the output row (in this part's rows)
            let Some(out) = c
                .checked_sub(self.row0)
                .filter(|&x| x < self.rows)
                .map(|x| x * r)
            else {
                if self.skip {
                    // another part's row
                    continue;
                }
                return Err(outside_part(level, node));
            };
            // an inner node (the mode at the leaf level is `mode_leaves`)
            let pre = ml * r;
            let (clo, chi) = self.children(level, node)?;
            let s = (level + 1) * r;
            self.sums[s..s + r].fill(V::acc_zero());
            self.below(level + 1, clo, chi)?;
            let dst = self
                .out
                .get_mut(out..out + r)
                .ok_or_else(|| outside_part(level, node))?;
            for ((o, &p), &x) in dst
                .iter_mut()
                .zip(&self.prefix[pre..pre + r])
                .zip(&self.sums[s..s + r])
            {
                *o = V::acc_add(*o, V::acc_mul(p, x));
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
            // one tight loop over the leaves
            let (coords, vals, bound) = self.leaves(lo, hi)?;
            let (factor, pf, all) = (self.leaf_factor, self.pf, self.leaf_idx);
            let sums = &mut self.sums[s..s + r];
            for (node, (&c, &v)) in (lo..).zip(coords.iter().zip(vals)) {
                if pf {
                    super::spmv::prefetch_ahead(factor, all, node, r);
                }
                let c = c.as_usize();
                // the factor has `bound` rows (checked by `check_factors`)
                let Some(row) = factor.get(c * r..c * r + r).filter(|_| c < bound) else {
                    return Err(oob(level, node, c, bound));
                };
                let v = v.to_acc();
                for (acc, &x) in sums.iter_mut().zip(row) {
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

/// Into how many chunks of root nodes [`mttkrp`] with the mode below the root
/// cuts the tree, each with its own partial result (at most 16, at least
/// `2 * PAR_WORK` leaves each), or fewer than 2 for no chunks. From the data
/// only, never the thread count, so that the sums do not depend on it. Only
/// when the partials are small against the work and the input: the result's
/// rows times the chunks at most an eighth of the leaves (the final sum of the
/// partials costs then at most an eighth of the leaves' additions), and the
/// partials' elements (`rows * rank` each) at most as many as the leaves.
fn mttkrp_chunks(nnz: usize, rows: usize, rank: usize) -> usize {
    let mut k = (nnz / (2 * super::spmv::PAR_WORK)).min(16);
    let len = rows.saturating_mul(rank);
    while k >= 2 && (rows.saturating_mul(k) > nnz / 8 || len.saturating_mul(k) > nnz) {
        k /= 2;
    }
    k
}

/// [`mttkrp`] with the mode below the root, by chunks of root nodes: the
/// roots are cut into `chunks` ranges of about as many leaves, each walked
/// (in parallel when the pool has several threads) into its own zeroed
/// partial result, and the partials are then added in chunk order into `out`.
/// The chunks depend on the data only, so the result is the same on any
/// number of threads.
fn mttkrp_chunked<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    rank: usize,
    chunks: usize,
    out: &mut [V::Acc],
    walk: &(impl Fn(&mut [V::Acc], usize, bool, usize, usize) -> Result<()> + Sync),
) -> Result<()> {
    let n = t.ndim();
    let lv = Levels::of(t);
    let roots = t.indices()[0].len();
    let leaves = lv.descend(0, roots, n - 1);
    // chunk c starts at the first root whose leaves start at or past c / chunks
    // of them
    let mut bounds: Vec<usize> = (0..=chunks)
        .map(|c| {
            let target = leaves / chunks * c + leaves % chunks * c / chunks;
            super::spmv::partition(0, roots, |k| lv.descend(0, k, n - 1) < target)
        })
        .collect();
    // every root in exactly one chunk, whatever the tree's pointers
    (bounds[0], bounds[chunks]) = (0, roots);
    for c in 1..=chunks {
        bounds[c] = bounds[c].max(bounds[c - 1]);
    }
    let len = out.len();
    let mut partials = alloc::filled(
        len.checked_mul(chunks)
            .ok_or_else(|| Error::allocation("MTTKRP partials", usize::MAX, rank))?,
        V::acc_zero(),
        "MTTKRP partials",
    )?;
    use rayon::prelude::*;
    partials
        .par_chunks_mut(len.max(1))
        .zip(bounds.par_windows(2))
        .map(|(part, b)| walk(part, 0, false, b[0], b[1]))
        .collect::<Vec<Result<()>>>()
        .into_iter()
        .collect::<Result<()>>()?;
    // each element: the partials added in chunk order
    let add = |lo: usize, o: &mut [V::Acc]| {
        for (e, x) in o.iter_mut().enumerate() {
            for c in 0..chunks {
                *x = V::acc_add(*x, partials[c * len + lo + e]);
            }
        }
    };
    let piece = (len / (4 * rayon::current_num_threads())).max(1 << 12);
    out.par_chunks_mut(piece)
        .enumerate()
        .for_each(|(k, o)| add(k * piece, o));
    Ok(())
}

/// A mode coordinate whose output row is not in the part of the output being
/// filled (root coordinates that do not increase: an unvalidated tree).
fn outside_part(level: usize, node: usize) -> Error {
    Error::invariant(
        format!("indices[{level}]"),
        Some(node),
        "coordinate outside its part of the output",
    )
}

/// The CSR-based MTTKRP used as the baseline: the tensor matricized along `mode`
/// (rows = the mode, columns = the other modes in increasing order, linearized
/// row-major, as a CSR matrix `m` of shape `shape[mode] x prod(other extents)`)
/// and, per stored entry, the Hadamard product of the other modes' factor rows
/// recomputed from its column index. `shape` is the tensor's shape and `factors`
/// are as for [`mttkrp`]; the result is the same. Rows run in parallel ranges
/// (each row one sum in storage order, so the thread count does not change it).
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
    // row-major in place (checked above; the mode's factor is not read)
    let f: Vec<&[V]> = factors
        .iter()
        .map(|x| x.as_row_major_slice().unwrap_or(&[]))
        .collect();
    let len = shape[mode]
        .checked_mul(rank)
        .ok_or_else(|| Error::allocation("MTTKRP result", usize::MAX, size_of::<V>()))?;
    let mut out = alloc::filled(len, V::acc_zero(), "MTTKRP result")?;
    let (ptr, idx, vals) = (&m.indptr()[..], &m.indices()[..], &m.values()[..]);
    // rows in parallel ranges (each row one sum in storage order, as on one
    // thread), each range with its own product scratch
    let leaf = |lo: usize, hi: usize, ys: &mut [V::Acc]| -> u8 {
        let csr = (ptr, idx, vals);
        match alloc::filled(rank, V::acc_zero(), "MTTKRP products") {
            Ok(mut prod) => csr_mttkrp_rows(csr, (shape, &others, &f), (lo, hi), ys, &mut prod),
            Err(_) => 1,
        }
    };
    let ptr = ptr
        .get(..shape[mode] + 1)
        .ok_or_else(|| Error::invariant("indptr", Some(ptr.len()), "shorter than the rows"))?;
    if super::spmv::par_rows(ptr, vals.len(), &mut out, rank, &leaf) != 0 {
        return Err(Error::allocation(
            "MTTKRP products",
            rank,
            size_of::<V::Acc>(),
        ));
    }
    let out = narrow_all::<V>(&out, "MTTKRP sum")?;
    DenseTensor::try_new(vec![shape[mode], rank], out.into())
}

/// Rows `lo..hi` of [`mttkrp_csr`] into `ys` (their `rank`-wide output rows,
/// `rank = prod.len()`): per entry, the Hadamard product of the other modes'
/// factor rows (`others`, in increasing order, linearized row-major in the
/// column index), times the value, added into the row. Returns 0 (the flags of
/// [`par_rows`](super::spmv::par_rows)).
fn csr_mttkrp_rows<V: Numeric, I: Index, P: Index>(
    (ptr, idx, vals): (&[P], &[I], &[V]),
    (shape, others, f): (&[usize], &[usize], &[&[V]]),
    (lo, hi): (usize, usize),
    ys: &mut [V::Acc],
    prod: &mut [V::Acc],
) -> u8 {
    let rank = prod.len();
    for (i, row) in (lo..hi).zip(ys.chunks_exact_mut(rank.max(1))) {
        let (a, b) = (ptr[i].as_usize(), ptr[i + 1].as_usize().min(vals.len()));
        for k in a..b.max(a) {
            let mut j = idx[k].as_usize();
            prod.iter_mut().for_each(|p| *p = vals[k].to_acc());
            for &d in others.iter().rev() {
                let c = j % shape[d];
                j /= shape[d];
                for (p, &x) in prod.iter_mut().zip(&f[d][c * rank..c * rank + rank]) {
                    *p = V::acc_mul(*p, x.to_acc());
                }
            }
            for (o, &p) in row.iter_mut().zip(prod.iter()) {
                *o = V::acc_add(*o, p);
            }
        }
    }
    0
}

/// Tensor-times-vector along `mode`: `Y[x without x[mode]] = sum value * v[x[mode]]`.
/// The result is a canonical COO tensor of the other dimensions (ndim >= 2 input),
/// with one entry per position that holds at least one stored entry.
///
/// Every mode reads the tree once, without sorting in the usual cases:
///
/// * `mode` at the last level: each fiber is one output entry;
/// * `mode` at any other level `L` (the root included): for each node of level
///   `L - 1` (the whole tree when `L = 0`), the subtrees under its level-`L`
///   children are added, weighted by `v`, into a dense accumulator over the
///   levels below `L`, which is then read back in order. The accumulator has as
///   many elements as the levels below `L` have positions; when that is more than
///   `max(4 * nnz, 65536)` (or cannot be allocated) the entries are projected and
///   sorted instead.
///
/// The output comes out sorted when the axis order without `mode` is
/// increasing; otherwise it is sorted once at the end.
///
/// On several threads (a tree of more than 65 536 leaves): with `mode` at the
/// last level the root nodes are split between threads by their leaf counts,
/// each range writing its own slice of the output; with `mode` at a middle
/// level and an accumulator of at most 2048 positions, likewise, each range
/// of roots with an accumulator and entries of its own, appended in order;
/// with `mode` at the root and a blocked accumulator (larger than half the
/// level-2 cache, 3 or more levels) the blocks are split, each range of
/// blocks with its own part of the accumulator and its own entries, appended
/// in order. The result is the same on any number of threads. The other
/// cases (a larger middle accumulator, the root's accumulator unblocked, the
/// projection and sort) run on one thread.
///
/// ```
/// use arrow_sparse::kernels::csf::ttv;
/// use arrow_sparse::{Convert, CooTensor};
/// let t = CooTensor::<i32, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 4), (vec![1, 0], 5)])?
///     .to_csf::<i32, i32>(&[1, 0])?;
/// let y = ttv(&t, 0, &[10, 1])?; // sum over dimension 0: a vector over dimension 1
/// assert_eq!((y.get(&[0]), y.get(&[2])), (Some(5), Some(40)));
/// let x = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[(vec![0, 1, 1], 1.0), (vec![1, 1, 1], 2.0), (vec![1, 0, 1], 3.0)])?
///     .to_csf::<i32, i32>(&[0, 1, 2])?;
/// let z = ttv(&x, 0, &[10.0, 100.0])?; // the root level
/// assert_eq!((z.nnz(), z.get(&[1, 1]), z.get(&[0, 1])), (2, Some(210.0), Some(300.0)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn ttv<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    mode: usize,
    v: &[V],
) -> Result<CooTensor<V, i64>> {
    let n = t.ndim();
    let out_shape = check_ttv(t.shape(), mode, v.len())?;
    let order = t.axis_order();
    let level = order.iter().position(|&d| d == mode).unwrap_or(0);
    // the output dimensions in the order the walk produces them
    let walk_dims: Vec<usize> = order.iter().copied().filter(|&d| d != mode).collect();
    let sorted = walk_dims.windows(2).all(|w| w[0] < w[1]);
    let (coords, values) = if level == n - 1 {
        ttv_fibers(t, v)?
    } else {
        match ttv_dense_accumulator(t, level, v)? {
            Some(cv) => cv,
            None => return ttv_by_sort(t, mode, v, out_shape),
        }
    };
    // coordinates in walk order -> in increasing dimension order
    let m = n - 1;
    let coords = if sorted {
        coords
    } else {
        let mut rank: Vec<usize> = (0..m).collect();
        rank.sort_by_key(|&i| walk_dims[i]);
        let mut out = alloc::with_capacity::<i64>(coords.len(), "TTV coordinates")?;
        for e in coords.chunks_exact(m.max(1)) {
            out.extend(rank.iter().map(|&i| e[i]));
        }
        out
    };
    let coo = CooTensor::try_new_with(
        out_shape,
        crate::CoordLayout::RowMajor,
        EntryOrder::from(sorted),
        coords.into(),
        values.into(),
        &TensorOptions::trusted(),
    )?;
    if sorted {
        Ok(coo)
    } else {
        // walk order is lexicographic in the tree's order, not the output's
        super::convert::canonicalize(&coo)
    }
}

/// The output shape of a TTV along `mode` (the other extents), after checking
/// the mode and the vector's length.
fn check_ttv(shape: &[usize], mode: usize, v_len: usize) -> Result<Vec<usize>> {
    let n = shape.len();
    if n < 2 {
        // the result would have no dimension
        return Err(Error::shape("TTV tensor", "ndim >= 2", format!("ndim {n}")));
    }
    if mode >= n {
        return Err(Error::shape(
            "TTV mode",
            format!("a mode below {n}"),
            mode.to_string(),
        ));
    }
    if v_len != shape[mode] {
        return Err(Error::shape(
            "TTV vector",
            format!("length {}", shape[mode]),
            format!("length {v_len}"),
        ));
    }
    Ok((0..n).filter(|&d| d != mode).map(|d| shape[d]).collect())
}

/// [`ttv`] with a dense result: `Y[x without x[mode]] = sum value * v[x[mode]]`
/// as a row-major dense tensor of the other dimensions (in increasing order),
/// zero where nothing is stored. This is what `v @ A` gives in scipy for a
/// matricized tensor, and the faster choice when the result is dense or nearly
/// so; it allocates the product of the other extents (an
/// [`Error::Allocation`] when that cannot be had), where [`ttv`] allocates in
/// proportion to the result's non-zeros.
///
/// The tree is read once, whatever the mode's level: each leaf adds its value
/// times `v` at its mode coordinate into the output element its other
/// coordinates name (for the mode at the last level, each fiber's dot product
/// with `v` into one element). Floats accumulate in the output itself.
///
/// On several threads (a tree of more than 65 536 leaves) the output is cut
/// into parts filled in parallel: by root nodes when the root's dimension is
/// the output's first (the mode below the root), by blocks of level-1
/// coordinates when the mode is the root's and the blocked walk applies (the
/// accumulator larger than half the level-2 cache); otherwise one thread. Each
/// output element receives the same additions in the same order on any number
/// of threads, so the result does not depend on it.
///
/// ```
/// use arrow_sparse::kernels::csf::{ttv, ttv_dense};
/// use arrow_sparse::{Convert, CooTensor};
/// let x = CooTensor::<f64, i64>::from_entries(vec![2, 2, 3], &[(vec![0, 1, 1], 1.0), (vec![1, 1, 1], 2.0), (vec![1, 0, 2], 3.0)])?
///     .to_csf::<i32, i32>(&[0, 1, 2])?;
/// let y = ttv_dense(&x, 0, &[10.0, 100.0])?; // the root level: a dense 2 x 3 result
/// assert_eq!((y.shape(), y.values().as_ref()), (&[2usize, 3][..], &[0.0, 0.0, 300.0, 0.0, 210.0, 0.0][..]));
/// assert_eq!(ttv(&x, 0, &[10.0, 100.0])?.to_dense()?, y); // the sparse result, densified
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn ttv_dense<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    mode: usize,
    v: &[V],
) -> Result<DenseTensor<V>> {
    let n = t.ndim();
    let out_shape = check_ttv(t.shape(), mode, v.len())?;
    let size = out_shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::allocation("TTV result", usize::MAX, size_of::<V>()))?;
    // row-major strides of the output, by tensor dimension (0 for the mode)
    let mut ostride = vec![0usize; n];
    let mut s = 1usize;
    for d in (0..n).rev().filter(|&d| d != mode) {
        ostride[d] = s;
        s *= t.shape()[d];
    }
    let order = t.axis_order();
    let walk = DenseTtv {
        lv: Levels::of(t),
        shape: t.shape(),
        order,
        ostride: order.iter().map(|&d| ostride[d]).collect(),
        mode_level: order.iter().position(|&d| d == mode).unwrap_or(0),
        vals: &t.values()[..],
        v,
    };
    // zero pages from the OS (no write pass), huge where it allows
    let mut values: Vec<V> = alloc::zeroed(size, "TTV result")?;
    crate::buffer::advise_huge_pages_random(&values);
    let roots = t.indices().first().map_or(0, |r| r.len());
    if let Some(acc) = V::as_acc_mut(&mut values) {
        walk.run(acc, roots)?;
    } else {
        let mut acc = alloc::filled_random(size, V::acc_zero(), "TTV accumulator")?;
        walk.run(&mut acc, roots)?;
        for (o, &a) in values.iter_mut().zip(&acc) {
            *o = narrow::<V>(a, "TTV sum")?;
        }
    }
    DenseTensor::try_new(out_shape, values.into())
}

/// The walk of [`ttv_dense`].
struct DenseTtv<'a, V: Numeric, I: Index, P: Index> {
    lv: Levels<'a, I, P>,
    shape: &'a [usize],
    order: &'a [usize],
    /// Output stride of each level's dimension (0 at the mode's level).
    ostride: Vec<usize>,
    mode_level: usize,
    vals: &'a [V],
    v: &'a [V],
}

impl<V: Numeric, I: Index, P: Index> DenseTtv<'_, V, I, P> {
    /// The whole tree (`roots` root nodes) into `acc`, the output or its wide
    /// accumulator. On a pool of several threads and a tree of more than
    /// `2 * PAR_WORK` leaves the output is cut into parts filled in parallel
    /// ([`par_nodes`]): by root nodes when the root's dimension is the output's
    /// first (each root owns the output rows of its coordinate), by blocks of
    /// level-1 coordinates when the mode is the root's and the walk is blocked
    /// (each block owns its rows). Every output element receives the same
    /// additions in the same order as on one thread, so the result does not
    /// depend on the thread count. A part is handed its slice of `acc` and the
    /// negated output offset of the slice's start as `base` (positions are
    /// computed with wrapping additions, so that `base + x * stride` is the
    /// position within the part).
    fn run(&self, acc: &mut [V::Acc], roots: usize) -> Result<()> {
        let one = V::acc_one();
        let parallel =
            rayon::current_num_threads() > 1 && self.vals.len() > 2 * super::spmv::PAR_WORK;
        if !parallel || roots == 0 {
            return self.level(acc, 0, 0, roots, 0, one);
        }
        let idx = self.coords(0, 0, roots)?;
        let ext = self.lv.ext[0];
        let span = self.ostride[0];
        let increasing = idx.windows(2).all(|p| p[0] < p[1]);
        if self.mode_level != 0 && increasing && span.checked_mul(ext) == Some(acc.len()) {
            // root node k's rows start at idx[k] * span
            let leaf_start = |k: usize| self.lv.descend(0, k, self.shape.len() - 1);
            let size = acc.len();
            let start = |k: usize| idx.get(k).map_or(size, |x| x.as_usize() * span);
            return par_nodes(
                0,
                roots,
                (acc, 0usize),
                &leaf_start,
                &|(part, off): (&mut [V::Acc], usize), _, mid| {
                    let cut = start(mid).saturating_sub(off).min(part.len());
                    let (a, b) = part.split_at_mut(cut);
                    ((a, off), (b, off + cut))
                },
                &|lo, hi, (part, off)| self.level(part, 0, lo, hi, off.wrapping_neg(), one),
            );
        }
        if self.mode_level == 0
            && let Some(rows) = self.block_rows(0, 0, roots)?
            && let Some(cursors) = self
                .lv
                .block_cursors(0, 0, roots, |node| Ok(self.weight(idx[node].as_usize())))?
        {
            return self.par_blocks(acc, rows, cursors);
        }
        self.level(acc, 0, 0, roots, 0, one)
    }

    /// The blocked walk below the root (the mode's level), its blocks of `rows`
    /// level-1 coordinates split between threads: each part of consecutive
    /// blocks owns those coordinates' rows of the output (the levels below the
    /// root are the output's dimensions in order, see [`Self::block_rows`]) and
    /// starts from its own cursors (each root's first child in the part, found
    /// by binary search in the root's sorted children). The work of a part is
    /// taken as proportional to its coordinates.
    fn par_blocks(
        &self,
        acc: &mut [V::Acc],
        rows: usize,
        cursors: Vec<(usize, usize, V::Acc)>,
    ) -> Result<()> {
        let span = self.ostride[1];
        let bs = BlockSplit::new(rows, self.lv.ext[1], self.vals.len());
        let first = |k| bs.first(k);
        type Part<'p, W> = (&'p mut [W], usize, Vec<(usize, usize, W)>);
        par_nodes(
            0,
            bs.blocks,
            (acc, 0usize, cursors),
            &|k| bs.work(k),
            &|(part, off, cur): Part<'_, V::Acc>, _, mid| {
                let jm = first(mid);
                let cut = jm.saturating_mul(span).saturating_sub(off).min(part.len());
                let right = self.lv.view().cursors_at(1, &cur, jm);
                let (a, b) = part.split_at_mut(cut);
                ((a, off, cur), (b, off + cut, right))
            },
            &|lo, hi, (part, off, mut cur): Part<'_, V::Acc>| {
                let base = off.wrapping_neg();
                self.lv.view().walk_blocks(
                    self.vals,
                    1,
                    (rows, first(lo), first(hi)),
                    &mut cur,
                    |step| match step {
                        Block::Run(a, b, wc) => self.level(part, 1, a, b, base, wc),
                        Block::Done(..) => Ok(()),
                    },
                )
            },
        )
    }

    /// The checked coordinates of nodes `lo..hi` of level `l`.
    fn coords(&self, l: usize, lo: usize, hi: usize) -> Result<&[I]> {
        let idx = self.lv.idx[l]
            .get(lo..hi)
            .ok_or_else(|| Error::invariant("CSF tree", Some(hi), "child range past the end"))?;
        let ext = self.shape[self.order[l]];
        match idx.iter().position(|x| x.as_usize() >= ext) {
            Some(k) => Err(oob(l, lo + k, idx[k].as_usize(), ext)),
            None => Ok(idx),
        }
    }

    /// The parents of the leaves (level `n - 2`, not the mode's level), all
    /// nodes `lo..hi` in one flat loop: each leaf adds `value * w` at
    /// `base + x * stride(n - 2) + leaf * stride(n - 1)` ([`Self::leaf_adds`]),
    /// or, with the mode at the leaf level, each node adds its fiber's dot
    /// product with `v` at `base + x * stride(n - 2)` ([`Self::fiber_dots`]).
    /// An out-of-range position (possible only in unvalidated trees) is
    /// flagged, its fiber abandoned, and reported after the loop.
    fn leaf_parents(
        &self,
        acc: &mut [V::Acc],
        lo: usize,
        hi: usize,
        idx: &[I],
        base: usize,
        w: V::Acc,
    ) -> Result<()> {
        let l = self.shape.len() - 2;
        let ptr = &self.lv.ptr[l][..];
        let leaves = &self.lv.idx[l + 1][..];
        let (Some(first), Some(last)) = (ptr.get(lo), ptr.get(hi)) else {
            return Err(Error::invariant(
                format!("indptr[{l}]"),
                Some(hi),
                "bad child range",
            ));
        };
        let (start, end) = (first.as_usize(), last.as_usize());
        if start > end || end > leaves.len() || end > self.vals.len() {
            return Err(Error::invariant(
                format!("indptr[{l}]"),
                Some(lo),
                "bad child range",
            ));
        }
        let leaf_ext = self.shape[self.order[l + 1]];
        let bad = if self.mode_level == l + 1 {
            // the mode is the leaf level (v.len() is its extent)
            self.fiber_dots(acc, (lo, hi), idx, base, (start, end))?
        } else {
            self.leaf_adds(acc, (lo, hi), idx, base, (start, end), w)?
        };
        if bad {
            let k = (start..end)
                .find(|&k| leaves[k].as_usize() >= leaf_ext)
                .unwrap_or(start);
            return Err(oob(l + 1, k, leaves[k].as_usize(), leaf_ext));
        }
        Ok(())
    }

    /// [`Self::leaf_parents`] with the mode at the leaf level: each node's
    /// fiber dot product with `v`, added into its output element. The weight
    /// is one here (it changes only at the mode's level), so it is not
    /// multiplied in, and the sum starts from the element itself: each element
    /// of a valid tree receives one fiber, onto a zero, so the additions are
    /// those of a sum from zero. `true` when a leaf or an element is out of
    /// range (the fiber is abandoned).
    fn fiber_dots(
        &self,
        acc: &mut [V::Acc],
        (lo, hi): (usize, usize),
        idx: &[I],
        base: usize,
        (start, end): (usize, usize),
    ) -> Result<bool> {
        let l = self.shape.len() - 2;
        let os = self.ostride[l];
        let (leaves, vals) = (&self.lv.idx[l + 1][..end], &self.vals[..end]);
        let mut bad = false;
        let mut prev = start;
        let ptr = self.lv.ptr[l].get(lo + 1..=hi).unwrap_or(&[]);
        for (node, (&x, b)) in (lo..).zip(idx.iter().zip(ptr)) {
            let b = b.as_usize();
            // child ranges must be consecutive and increasing
            if b < prev || b > end {
                return Err(Error::invariant(
                    format!("indptr[{l}]"),
                    Some(node),
                    "bad child range",
                ));
            }
            // `base` may be a part's negated offset (see `run`): wrapping
            let Some(s) = acc.get_mut(base.wrapping_add(x.as_usize() * os)) else {
                bad |= b > prev;
                prev = b;
                continue;
            };
            // out-of-range leaves (only in unvalidated trees) are flagged and
            // their fiber abandoned; a compare and a never-taken branch per leaf
            // is cheaper than clamping the index (see `spmv::row_dot`)
            let mut dot = *s;
            for (&c, &val) in leaves[prev..b].iter().zip(&vals[prev..b]) {
                let Some(&vc) = self.v.get(c.as_usize()) else {
                    bad = true;
                    break;
                };
                dot = V::madd(dot, val, vc);
            }
            *s = dot;
            prev = b;
        }
        Ok(bad)
    }

    /// [`Self::leaf_parents`] with the mode above the leaf level: each leaf
    /// adds `value * w` at `base + x * stride(n - 2) + leaf * stride(n - 1)`.
    /// `true` when a leaf is out of range (its fiber is abandoned).
    fn leaf_adds(
        &self,
        acc: &mut [V::Acc],
        (lo, hi): (usize, usize),
        idx: &[I],
        base: usize,
        (start, end): (usize, usize),
        w: V::Acc,
    ) -> Result<bool> {
        let l = self.shape.len() - 2;
        let (os, ols) = (self.ostride[l], self.ostride[l + 1]);
        let ptr = &self.lv.ptr[l][..];
        let leaves = &self.lv.idx[l + 1][..];
        let leaf_ext = self.shape[self.order[l + 1]];
        let mut bad = false;
        let mut prev = start;
        for (node, &x) in (lo..hi).zip(idx) {
            let b = ptr[node + 1].as_usize();
            // child ranges must be consecutive and increasing
            if b < prev || b > end {
                return Err(Error::invariant(
                    format!("indptr[{l}]"),
                    Some(node),
                    "bad child range",
                ));
            }
            // `base` may be a part's negated offset (see `run`): wrapping
            let row = base.wrapping_add(x.as_usize() * os);
            let (cs, vs) = (&leaves[prev..b], &self.vals[prev..b]);
            prev = b;
            // out-of-range leaves (only in unvalidated trees) are flagged and
            // their fiber abandoned; a compare and a never-taken branch per leaf
            // is cheaper than clamping the index (see `spmv::row_dot`)
            if ols == 1
                && let Some(out) = row.checked_add(leaf_ext).and_then(|e| acc.get_mut(row..e))
            {
                // the fiber's output row as a slice: one check per leaf
                for (&c, &val) in cs.iter().zip(vs) {
                    let Some(s) = out.get_mut(c.as_usize()) else {
                        bad = true;
                        break;
                    };
                    *s = V::acc_add(*s, V::acc_mul(val.to_acc(), w));
                }
                continue;
            }
            for (&c, &val) in cs.iter().zip(vs) {
                let c = c.as_usize();
                let slot = if c < leaf_ext {
                    acc.get_mut(row + c * ols)
                } else {
                    None
                };
                let Some(s) = slot else {
                    bad = true;
                    break;
                };
                *s = V::acc_add(*s, V::acc_mul(val.to_acc(), w));
            }
        }
        Ok(bad)
    }

    /// [`block_rows`] for the mode's level `l`, nodes `lo..hi`: `None` also
    /// when the levels below are not the output's last dimensions in order (their
    /// blocks would not be contiguous in the output).
    fn block_rows(&self, l: usize, lo: usize, hi: usize) -> Result<Option<usize>> {
        let n = self.shape.len();
        let mut span = 1usize;
        for k in (l + 1..n).rev() {
            if self.ostride[k] != span {
                return Ok(None);
            }
            span = span.saturating_mul(self.lv.ext[k]);
        }
        block_rows(
            span,
            size_of::<V::Acc>(),
            self.ostride[l + 1],
            self.lv.ext[l + 1],
            hi - lo,
            || self.lv.leaf_range(l, lo, hi).map(|(a, b)| b - a),
        )
    }

    /// The weight of coordinate `x` at the mode's level.
    #[inline(always)]
    fn weight(&self, x: usize) -> V::Acc {
        self.v[x].to_acc() // x < shape[mode] == v.len(), checked by `coords`
    }

    /// Nodes `lo..hi` of level `l`: `base` is the output offset of their
    /// ancestors' coordinates, `w` the weight from the mode's level (one above).
    fn level(
        &self,
        acc: &mut [V::Acc],
        l: usize,
        lo: usize,
        hi: usize,
        base: usize,
        w: V::Acc,
    ) -> Result<()> {
        let n = self.shape.len();
        let idx = self.coords(l, lo, hi)?;
        if l == n - 1 {
            let vals = self
                .vals
                .get(lo..hi)
                .ok_or_else(|| Error::invariant("CSF tree", Some(hi), "leaf without a value"))?;
            if self.mode_level == l {
                // a fiber along the mode: its dot product with v, into one element
                let mut dot = V::acc_zero();
                for (&x, &val) in idx.iter().zip(vals) {
                    dot = V::madd(dot, val, self.v[x.as_usize()]);
                }
                let Some(s) = acc.get_mut(base) else {
                    return Err(Error::invariant(
                        "CSF tree",
                        Some(lo),
                        "fiber outside its part of the output",
                    ));
                };
                *s = V::acc_add(*s, V::acc_mul(dot, w));
            } else {
                let os = self.ostride[l];
                for (&x, &val) in idx.iter().zip(vals) {
                    let Some(s) = acc.get_mut(base.wrapping_add(x.as_usize() * os)) else {
                        return Err(Error::invariant(
                            "CSF tree",
                            Some(lo),
                            "leaf outside its part of the output",
                        ));
                    };
                    *s = V::acc_add(*s, V::acc_mul(val.to_acc(), w));
                }
            }
            return Ok(());
        }
        let os = self.ostride[l];
        if l == n - 2 && self.mode_level != l {
            return self.leaf_parents(acc, lo, hi, idx, base, w);
        }
        if l == self.mode_level
            && let Some(rows) = self.block_rows(l, lo, hi)?
            && let Some(mut cursors) = self.lv.block_cursors(l, lo, hi, |node| {
                Ok(V::acc_mul(w, self.weight(idx[node - lo].as_usize())))
            })?
        {
            // the output span below this parent in cache-sized blocks
            let below = l + 1;
            let ext = self.lv.ext[below];
            return self.lv.view().walk_blocks(
                self.vals,
                below,
                (rows, 0, ext),
                &mut cursors,
                |step| match step {
                    Block::Run(a, b, wc) => self.level(acc, below, a, b, base, wc),
                    Block::Done(..) => Ok(()),
                },
            );
        }
        for (node, &x) in (lo..hi).zip(idx) {
            let x = x.as_usize();
            let (a, b) = self.lv.children(l, node)?;
            if l == self.mode_level {
                self.level(acc, l + 1, a, b, base, V::acc_mul(w, self.weight(x)))?;
            } else {
                self.level(acc, l + 1, a, b, base.wrapping_add(x * os), w)?;
            }
        }
        Ok(())
    }
}

/// Runs `leaf(lo, hi, part)` on disjoint node ranges covering `lo..hi`. While
/// a range's work (`work(k)`: the work before node `k`, non-decreasing on a
/// valid tree) is more than [`PAR_WORK`](super::spmv::PAR_WORK) and the pool
/// has several threads, the range is cut at the first node whose work reaches
/// half of it, `split(part, lo, mid)` cuts the part in two, and the halves run
/// in parallel (`rayon::join`). The cuts depend on the work only, never on the
/// thread count, and never change what a node computes. With two errors, the
/// earlier range's is returned.
fn par_nodes<D: Send>(
    lo: usize,
    hi: usize,
    part: D,
    work: &(impl Fn(usize) -> usize + Sync),
    split: &(impl Fn(D, usize, usize) -> (D, D) + Sync),
    leaf: &(impl Fn(usize, usize, D) -> Result<()> + Sync),
) -> Result<()> {
    let (a, b) = (work(lo), work(hi));
    if rayon::current_num_threads() <= 1
        || hi.saturating_sub(lo) < 2
        || b.saturating_sub(a) <= super::spmv::PAR_WORK
    {
        return leaf(lo, hi, part);
    }
    let mid = super::spmv::halving_cut(lo, hi, work);
    let (pa, pb) = split(part, lo, mid);
    let (ra, rb) = rayon::join(
        || par_nodes(lo, mid, pa, work, split, leaf),
        || par_nodes(mid, hi, pb, work, split, leaf),
    );
    ra.and(rb)
}

/// How many coordinates of the level below the mode's one block of a blocked
/// TTV covers ([`Levels::walk_blocks`]), or `None` when the accumulator (`span`
/// elements of `elem` bytes; `row` elements per coordinate of the level below,
/// which has extent `ext`) should be filled in one sweep.
///
/// A sweep scatters into the whole accumulator; when that is larger than the
/// level-2 cache, every addition waits on the last-level cache (or memory).
/// Blocks of about a quarter of the level-2 cache keep the scattered additions
/// (and any read-back) in it, at the price of one cursor step per mode node and
/// block; blocking is chosen only when those steps are few against the leaves
/// (at least 64 leaves per step on average), so that each mode node's share of
/// a block is still read as a run.
/// `leaves` is asked for only when the span is large enough to block.
///
/// The blocks do not win on every machine, and the cache sizes the system
/// reports do not tell which: with an 8 MB accumulator (TTV along the root
/// of a 1000^3 tree of 10^7 leaves, one thread), the blocks were faster
/// than one sweep on 2-core Xeons with 2 MiB of L2 (1.3x-1.5x with 260 MiB
/// of L3; 1.25x-1.60x for `ttv_dense` and 1.10x-1.33x for `ttv` with
/// 480 MiB) and 2x-3x faster on a 2-core EPYC with 512 KiB of L2, but took
/// 1.3x-1.6x the sweep's time on a 2-core EPYC with 1 MiB of L2 and 32 MiB
/// of L3.
/// A walk that timed its first blocks against a sweep of its first mode
/// nodes, and went on with the faster, was built twice and dropped: the
/// timed parts ran far slower per leaf than the walk's steady state (see
/// `benches/RESULTS.md`, sixth and twenty-fifth sessions).
fn block_rows(
    span: usize,
    elem: usize,
    row: usize,
    ext: usize,
    mode_nodes: usize,
    leaves: impl FnOnce() -> Result<usize>,
) -> Result<Option<usize>> {
    let budget = crate::cache::cache_sizes().l2 / 4;
    if row == 0 || span.saturating_mul(elem) <= 2 * budget {
        return Ok(None);
    }
    let rows = (budget / row.saturating_mul(elem).max(1)).max(1);
    let blocks = ext.div_ceil(rows);
    let steps = blocks.saturating_mul(mode_nodes).saturating_mul(64);
    Ok((blocks >= 2 && steps <= leaves()?).then_some(rows))
}

/// A blocked walk's blocks as the nodes of a parallel split ([`par_nodes`]):
/// blocks of `rows` coordinates of a level of extent `ext`, the work before
/// block `k` taken as proportional to its coordinates (of `leaves` in all).
struct BlockSplit {
    rows: usize,
    ext: usize,
    blocks: usize,
    leaves: usize,
}

impl BlockSplit {
    fn new(rows: usize, ext: usize, leaves: usize) -> Self {
        let rows = rows.max(1);
        BlockSplit {
            rows,
            ext,
            blocks: ext.div_ceil(rows),
            leaves,
        }
    }

    /// The work before block `k`.
    fn work(&self, k: usize) -> usize {
        (self.leaves as u128 * k as u128 / self.blocks.max(1) as u128) as usize
    }

    /// The first coordinate of block `k` (the extent past the last block).
    fn first(&self, k: usize) -> usize {
        k.saturating_mul(self.rows).min(self.ext)
    }
}

/// One step of [`Levels::walk_blocks`].
enum Block<W> {
    /// Nodes `a..b` of the level below the mode's, all in the current block,
    /// children of one mode node of weight `W`.
    Run(usize, usize, W),
    /// The block of coordinates `j0..j1` is complete.
    Done(usize, usize),
}

/// How many cursors ahead [`Levels::walk_blocks`] prefetches a node's runs.
const PREFETCH_AHEAD: usize = 4;
/// How much of a node's value run [`Levels::walk_blocks`] prefetches (half as
/// much of its coordinates): the first lines, after which the hardware
/// prefetcher follows the run.
const PREFETCH_BYTES: usize = 512;

/// Typed views of a CSF tree's levels.
#[derive(Clone)]
struct Levels<'a, I: Index, P: Index> {
    ptr: &'a [ScalarBuffer<P>],
    idx: &'a [ScalarBuffer<I>],
    /// The extent of each level's dimension.
    ext: Vec<usize>,
}

impl<'a, I: Index, P: Index> Levels<'a, I, P> {
    fn of<V: Numeric>(t: &'a CsfTensor<V, I, P>) -> Self {
        Levels {
            ptr: t.indptr(),
            idx: t.indices(),
            ext: t.axis_order().iter().map(|&d| t.shape()[d]).collect(),
        }
    }

    /// The same views, without the extents (for a walk that borrows the
    /// owner mutably).
    fn view(&self) -> LevelView<'a, I, P> {
        LevelView {
            ptr: self.ptr,
            idx: self.idx,
        }
    }

    /// The leaves below nodes `lo..hi` of level `l`: a range of the last level.
    fn leaf_range(&self, mut l: usize, mut lo: usize, mut hi: usize) -> Result<(usize, usize)> {
        let n = self.idx.len();
        while l + 1 < n && lo < hi {
            let (a, _) = self.children(l, lo)?;
            let (_, b) = self.children(l, hi - 1)?;
            (lo, hi, l) = (a, b.max(a), l + 1);
        }
        Ok((lo, hi))
    }

    /// The cursors of [`walk_blocks`](LevelView::walk_blocks) for nodes
    /// `lo..hi` of level `l`: (first child, end of the children, `weight(node)`)
    /// each, or `None` when some node's children (level `l + 1`) are not in
    /// increasing coordinate order (possible only in a tree built without
    /// validation). A child coordinate past its extent is an error: a blocked
    /// walk would never reach it.
    #[allow(clippy::type_complexity)]
    fn block_cursors<W>(
        &self,
        l: usize,
        lo: usize,
        hi: usize,
        mut weight: impl FnMut(usize) -> Result<W>,
    ) -> Result<Option<Vec<(usize, usize, W)>>> {
        let below = l + 1;
        let ext = self.ext[below];
        let mut cursors = alloc::with_capacity(hi - lo, "TTV cursors")?;
        for node in lo..hi {
            let (a, b) = self.children(l, node)?;
            let xs = &self.idx[below][a..b];
            if let Some(k) = xs.iter().position(|x| x.as_usize() >= ext) {
                return Err(oob(below, a + k, xs[k].as_usize(), ext));
            }
            if xs.windows(2).any(|p| p[0] >= p[1]) {
                return Ok(None);
            }
            cursors.push((a, b, weight(node)?));
        }
        Ok(Some(cursors))
    }

    /// The first node of level `to` below position `k` of level `l` (`k` up
    /// to the level's length): the child pointers followed down, each clamped
    /// to the next level's length. Non-decreasing in `k` on a valid tree; on
    /// any tree in range and without a panic.
    fn descend(&self, mut l: usize, mut k: usize, to: usize) -> usize {
        while l < to && l + 1 < self.idx.len() {
            let len = self.idx[l + 1].len();
            k = self.ptr[l].get(k).map_or(len, |p| p.as_usize().min(len));
            l += 1;
        }
        k
    }

    /// Nodes `lo..hi` of level `l` (`lo < hi`), the leaves' parents, for a flat
    /// loop over them: their coordinates and child pointers, and the leaves and
    /// values below them up to the last one's end, checked once (the start and
    /// end of the children within the leaves and `vals`). The loop then checks
    /// each node's end of children against the previous one and `end`.
    fn parent_run<'v, V>(
        &self,
        l: usize,
        (lo, hi): (usize, usize),
        vals: &'v [V],
    ) -> Result<ParentRun<'a, 'v, I, P, V>> {
        let bad_range = Error::invariant(format!("indptr[{l}]"), Some(lo), "bad child range");
        let (ptrs, idxs) = (self.ptr, self.idx);
        let (Some(idx), Some(ptr), Some(leaves)) =
            (idxs[l].get(lo..hi), ptrs[l].get(lo..=hi), idxs.get(l + 1))
        else {
            return Err(bad_range);
        };
        let (start, end) = (ptr[0].as_usize(), ptr[hi - lo].as_usize());
        if start > end || end > leaves.len() {
            return Err(bad_range);
        }
        let vals = vals
            .get(..end)
            .ok_or_else(|| Error::invariant("CSF tree", Some(end), "leaf without a value"))?;
        Ok(ParentRun {
            idx,
            ptr,
            start,
            end,
            leaves: &leaves[..end],
            vals,
        })
    }

    /// Children of `node` at `level`, checked.
    #[inline(always)]
    fn children(&self, level: usize, node: usize) -> Result<(usize, usize)> {
        let p = &self.ptr[level];
        let (lo, hi) = match (p.get(node), p.get(node + 1)) {
            (Some(a), Some(b)) => (a.as_usize(), b.as_usize()),
            _ => (1, 0),
        };
        if lo > hi || hi > self.idx[level + 1].len() {
            return Err(Error::invariant(
                format!("indptr[{level}]"),
                Some(node),
                "bad child range",
            ));
        }
        Ok((lo, hi))
    }
}

/// A run of the leaves' parents, checked for a flat loop
/// ([`Levels::parent_run`]).
struct ParentRun<'a, 'v, I, P, V> {
    /// The parents' coordinates.
    idx: &'a [I],
    /// Their child pointers, one more than the parents.
    ptr: &'a [P],
    /// The first parent's first child.
    start: usize,
    /// The last parent's end of children.
    end: usize,
    /// The leaves `..end`.
    leaves: &'a [I],
    /// The values `..end`.
    vals: &'v [V],
}

/// [`Levels`] without the extents: two shared references, free to use while
/// the walk's owner is borrowed mutably.
#[derive(Clone, Copy)]
struct LevelView<'a, I: Index, P: Index> {
    ptr: &'a [ScalarBuffer<P>],
    idx: &'a [ScalarBuffer<I>],
}

impl<I: Index, P: Index> LevelView<'_, I, P> {
    /// The blocked walk below a mode's level: for each block of `rows`
    /// coordinates of level `below` from `j_start` up to `j_end` (its extent,
    /// or where a part of a parallel walk ends), each cursor's
    /// nodes in the block as one [`Block::Run`], then [`Block::Done`]. Cursors
    /// come from [`Levels::block_cursors`] (children in increasing order, in
    /// range) and advance. The runs of the nodes a few cursors ahead are
    /// prefetched: interleaved runs that the hardware prefetcher cannot tell
    /// apart.
    fn walk_blocks<V, W: Copy>(
        self,
        vals: &[V],
        below: usize,
        (rows, j_start, j_end): (usize, usize, usize),
        cursors: &mut [(usize, usize, W)],
        mut step: impl FnMut(Block<W>) -> Result<()>,
    ) -> Result<()> {
        let coords = &self.idx[below][..];
        let mut j0 = j_start;
        while j0 < j_end {
            let j1 = j0.saturating_add(rows.max(1)).min(j_end);
            for k in 0..cursors.len() {
                if let Some(&(c, ..)) = cursors.get(k + PREFETCH_AHEAD) {
                    self.prefetch_node(vals, below, c, false);
                }
                if let Some(&(c, ..)) = cursors.get(k + PREFETCH_AHEAD / 2) {
                    self.prefetch_node(vals, below, c, true);
                }
                let (c, end, w) = cursors[k];
                let mut e = c;
                while e < end && coords[e].as_usize() < j1 {
                    e += 1;
                }
                if e > c {
                    step(Block::Run(c, e, w))?;
                }
                cursors[k].0 = e;
            }
            step(Block::Done(j0, j1))?;
            j0 = j1;
        }
        Ok(())
    }

    /// Cursors of [`walk_blocks`](Self::walk_blocks) that start at coordinate
    /// `j` of level `below`: each cursor moved to its node's first child at or
    /// past `j` (binary search; the children are sorted, as the cursors
    /// require).
    fn cursors_at<W: Copy>(
        self,
        below: usize,
        cursors: &[(usize, usize, W)],
        j: usize,
    ) -> Vec<(usize, usize, W)> {
        let coords = &self.idx[below][..];
        cursors
            .iter()
            .map(|&(c, end, w)| {
                let run = coords.get(c..end).unwrap_or(&[]);
                (c + run.partition_point(|x| x.as_usize() < j), end, w)
            })
            .collect()
    }

    /// Prefetch the start of the runs that node `c` of level `below` begins:
    /// its coordinate and child pointer (`children == false`), or the leaves and
    /// values below it, found through that pointer (`children == true`, a few
    /// cursors later, when the pointer is in the cache).
    #[inline(always)]
    fn prefetch_node<V>(self, vals: &[V], below: usize, c: usize, children: bool) {
        let n = self.idx.len();
        if below + 1 == n {
            if !children {
                crate::buffer::prefetch_run(&self.idx[below], c, PREFETCH_BYTES / 2);
                crate::buffer::prefetch_run(vals, c, PREFETCH_BYTES);
            }
        } else if !children {
            crate::buffer::prefetch_run(&self.idx[below], c, 64);
            crate::buffer::prefetch_run(&self.ptr[below], c, 64);
        } else if below + 2 == n
            && let Some(p) = self.ptr[below].get(c)
        {
            let a = p.as_usize();
            crate::buffer::prefetch_run(&self.idx[n - 1], a, PREFETCH_BYTES / 2);
            crate::buffer::prefetch_run(vals, a, PREFETCH_BYTES);
        }
    }
}

/// TTV along the last level: one output entry per fiber, in tree order.
///
/// The output is sized from the fiber count (the length of level `n - 2`) and
/// each range of root nodes writes its own slice of it, the slice's start found
/// by following the child pointers down from its first root; on a pool of
/// several threads the roots are split between threads by their leaf counts
/// ([`par_nodes`]). A range that writes fewer or more fibers than its slice
/// holds (child ranges that skip or share nodes, only in a tree built without
/// validation) is an error.
fn ttv_fibers<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    v: &[V],
) -> Result<(Vec<i64>, Vec<V>)> {
    let n = t.ndim();
    let lv = Levels::of(t);
    let fibers = t.indices()[n - 2].len();
    let m = n - 1;
    let len = fibers
        .checked_mul(m)
        .ok_or_else(|| Error::allocation("TTV coordinates", usize::MAX, 8))?;
    let mut coords = alloc::zeroed::<i64>(len, "TTV coordinates")?;
    let mut values = alloc::zeroed::<V>(fibers, "TTV values")?;
    let roots = t.indices()[0].len();
    let walk = FiberTtv {
        lv: &lv,
        vals: &t.values()[..],
        v,
    };
    let fiber_start = |k: usize| lv.descend(0, k, n - 2);
    par_nodes(
        0,
        roots,
        (&mut coords[..], &mut values[..]),
        &|k| lv.descend(0, k, n - 1),
        &|(c, x): (&mut [i64], &mut [V]), lo, mid| {
            let cut = fiber_start(mid)
                .saturating_sub(fiber_start(lo))
                .min(x.len());
            let (ca, cb) = c.split_at_mut(cut * m);
            let (xa, xb) = x.split_at_mut(cut);
            ((ca, xa), (cb, xb))
        },
        &|lo, hi, (c, x)| {
            let mut path = alloc::filled(n, 0usize, "TTV path")?;
            let mut out = FiberOut {
                coords: c,
                values: x,
                at: 0,
            };
            walk.go(0, lo, hi, &mut path, &mut out)?;
            if out.at != out.values.len() {
                return Err(Error::invariant(
                    "CSF tree",
                    Some(lo),
                    "child ranges skip nodes (the tensor was built without validation)",
                ));
            }
            Ok(())
        },
    )?;
    Ok((coords, values))
}

/// The read-only state of [`ttv_fibers`]'s walk.
struct FiberTtv<'a, V: Numeric, I: Index, P: Index> {
    lv: &'a Levels<'a, I, P>,
    vals: &'a [V],
    v: &'a [V],
}

/// One part of [`ttv_fibers`]'s output and the next fiber's place in it.
struct FiberOut<'o, V> {
    coords: &'o mut [i64],
    values: &'o mut [V],
    at: usize,
}

impl<V: Numeric, I: Index, P: Index> FiberTtv<'_, V, I, P> {
    /// Nodes `lo..hi` of `level`, their coordinates into `path`; at level
    /// `n - 2`, one output entry per node ([`Self::fibers`]).
    fn go(
        &self,
        level: usize,
        lo: usize,
        hi: usize,
        path: &mut [usize],
        out: &mut FiberOut<'_, V>,
    ) -> Result<()> {
        let n = path.len();
        if level == n - 2 {
            return self.fibers(lo, hi, &path[..level], out);
        }
        let lv = self.lv;
        let ext = lv.ext[level];
        for node in lo..hi {
            path[level] = lv.idx[level][node].as_usize();
            if path[level] >= ext {
                return Err(oob(level, node, path[level], ext));
            }
            let (a, b) = lv.children(level, node)?;
            self.go(level + 1, a, b, path, out)?;
        }
        Ok(())
    }

    /// Nodes `lo..hi` of level `n - 2`, the leaves' parents, below the
    /// ancestors' coordinates `prefix`: one output entry per node, its fiber's
    /// dot product with `v` at the coordinates `prefix` and the node's, in one
    /// flat loop over the nodes' coordinates and child pointers.
    fn fibers(
        &self,
        lo: usize,
        hi: usize,
        prefix: &[usize],
        out: &mut FiberOut<'_, V>,
    ) -> Result<()> {
        let l = prefix.len();
        let m = l + 1;
        let lv = self.lv;
        let ext = lv.ext[l];
        let bad_range =
            |node: usize| Error::invariant(format!("indptr[{l}]"), Some(node), "bad child range");
        let ParentRun {
            idx,
            ptr,
            start,
            end,
            leaves,
            vals,
        } = lv.parent_run(l, (lo, hi), self.vals)?;
        let k = hi - lo;
        let at = out.at;
        let (Some(slots), Some(coords)) = (
            out.values.get_mut(at..at + k),
            out.coords.get_mut(at * m..(at + k) * m),
        ) else {
            return Err(Error::invariant(
                "CSF tree",
                Some(lo),
                "child ranges overlap (the tensor was built without validation)",
            ));
        };
        let mut prev = start;
        let nodes = idx.iter().zip(&ptr[1..]).zip(slots.iter_mut());
        for (node, (((&x, b), slot), cs)) in (lo..).zip(nodes.zip(coords.chunks_exact_mut(m))) {
            let (x, b) = (x.as_usize(), b.as_usize());
            if x >= ext {
                return Err(oob(l, node, x, ext));
            }
            // child ranges must be consecutive and increasing
            if b < prev || b > end {
                return Err(bad_range(node));
            }
            let ls = &leaves[prev..b];
            // an index past v (an unvalidated tree) ends the walk (see
            // `spmv::row_dot`)
            let mut acc = V::acc_zero();
            for (&c, &val) in ls.iter().zip(&vals[prev..b]) {
                let Some(&vc) = self.v.get(c.as_usize()) else {
                    return Err(Error::IndexOutOfBounds {
                        buffer: format!("indices[{m}]"),
                        position: prev,
                        value: ls.iter().map(|c| c.wide()).max().unwrap_or(0),
                        bound: self.v.len() as u64,
                    });
                };
                acc = V::madd(acc, val, vc);
            }
            *slot = narrow::<V>(acc, "TTV sum")?;
            for (o, &c) in cs.iter_mut().zip(prefix) {
                *o = c as i64;
            }
            cs[l] = x as i64;
            prev = b;
        }
        out.at += k;
        Ok(())
    }
}

/// TTV along level `level < n - 1` with a dense accumulator over the levels
/// below it, reset and read back in order after each node of level
/// `level - 1` (the whole tree when `level` is the root). `None` when the
/// accumulator would be too large.
///
/// Per parent, the subtree's leaf count (two indptr descents) picks how the
/// touched positions are found again: when the leaves are at least an eighth of
/// the accumulator, the read-back scans it in order (coordinates by an
/// odometer, no division) and takes every position whose sum is not zero, or
/// whose last addition left it at zero (the leaf loop flags those: a compare
/// per leaf instead of a flag stored per leaf, 7%-13% less time along the
/// root of a 1000^3 tree of 10^7 leaves, one thread, on a 2-core Xeon with
/// 2 MiB of L2; on an EPYC with 1 MiB, within the runs' spread); otherwise
/// the leaf loop records each newly touched position and the read-back sorts
/// those.
#[allow(clippy::type_complexity)]
fn ttv_dense_accumulator<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    level: usize,
    v: &[V],
) -> Result<Option<(Vec<i64>, Vec<V>)>> {
    let n = t.ndim();
    let order = t.axis_order();
    let shape = t.shape();
    // the accumulator: row-major over the levels below `level`, in tree order
    let below: Vec<usize> = order[level + 1..].iter().map(|&d| shape[d]).collect();
    let Some(size) = below.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) else {
        return Ok(None);
    };
    if size > (4 * t.nnz()).max(1 << 16) {
        return Ok(None);
    }
    let (Ok(acc), Ok(seen)) = (
        alloc::filled_random(size, V::acc_zero(), "TTV accumulator"),
        alloc::filled_random(size, false, "TTV accumulator"),
    ) else {
        return Ok(None);
    };
    // strides of the levels below within the accumulator, indexed by level
    let mut stride = vec![0usize; n];
    let mut s = 1usize;
    for l in (level + 1..n).rev() {
        stride[l] = s;
        s *= shape[order[l]];
    }
    let mut st = TtvAcc {
        lv: Levels::of(t),
        shape,
        order,
        stride,
        vals: &t.values()[..],
        level,
        acc,
        seen,
        off: 0,
        touched: Vec::new(),
        coords: Vec::new(),
        values: Vec::new(),
        path: vec![0usize; n],
        odometer: vec![0usize; n],
    };
    let roots = t.indices()[0].len();
    if level >= 1
        && size <= super::spmv::PAR_WORK / 16
        && rayon::current_num_threads() > 1
        && t.nnz() > 2 * super::spmv::PAR_WORK
    {
        st.par_roots(roots, v)?;
    } else {
        st.prefix(0, 0, roots, v)?;
    }
    Ok(Some((st.coords, st.values)))
}

/// The state of [`ttv_dense_accumulator`]'s walk.
struct TtvAcc<'a, V: Numeric, I: Index, P: Index> {
    lv: Levels<'a, I, P>,
    shape: &'a [usize],
    order: &'a [usize],
    /// Accumulator stride of each level below the mode's (0 above).
    stride: Vec<usize>,
    vals: &'a [V],
    /// The mode's level.
    level: usize,
    acc: Vec<V::Acc>,
    /// Per position: touched (tracked mode), or touched and left at zero by
    /// its last addition so far (scan mode, see [`ttv_dense_accumulator`]).
    seen: Vec<bool>,
    /// The accumulator position of `acc[0]` (nonzero in a part of a parallel
    /// walk, which holds only its part's positions).
    off: usize,
    /// Positions first touched under the current parent (tracked mode only).
    touched: Vec<usize>,
    coords: Vec<i64>,
    values: Vec<V>,
    /// Coordinates of the current parent's ancestors, by level.
    path: Vec<usize>,
    /// Scratch: the coordinates of the levels below the mode's, by level.
    odometer: Vec<usize>,
}

impl<V: Numeric, I: Index, P: Index> TtvAcc<'_, V, I, P> {
    /// Visit the nodes of level `l <= level`; at the mode's level accumulate
    /// every child subtree, weighted, then emit.
    fn prefix(&mut self, l: usize, lo: usize, hi: usize, v: &[V]) -> Result<()> {
        if l < self.level {
            let ext = self.shape[self.order[l]];
            for node in lo..hi {
                let x = self.lv.idx[l][node].as_usize();
                if x >= ext {
                    return Err(oob(l, node, x, ext));
                }
                self.path[l] = x;
                let (a, b) = self.lv.children(l, node)?;
                self.prefix(l + 1, a, b, v)?;
            }
            return Ok(());
        }
        let (leaf_lo, leaf_hi) = self.lv.leaf_range(l, lo, hi)?;
        let track = (leaf_hi - leaf_lo) < self.acc.len() / 8;
        if !track {
            // at most one entry per accumulator position and per leaf: room
            // for that many up front (n - 1 coordinates and a value per
            // position, whose pages are touched only as entries are written),
            // so that the scans do not grow and copy the outputs block by block
            self.reserve_entries(self.acc.len().min(leaf_hi - leaf_lo));
            let rows = block_rows(
                self.acc.len(),
                size_of::<V::Acc>(),
                self.stride[l + 1],
                self.lv.ext[l + 1],
                hi - lo,
                || Ok(leaf_hi - leaf_lo),
            )?;
            return match rows {
                Some(rows) => self.blocked(l, lo, hi, v, rows),
                None => self.sweep(l, lo, hi, v),
            };
        }
        for node in lo..hi {
            let w = self.weight_of(l, node, v)?;
            let (a, b) = self.lv.children(l, node)?;
            self.add::<true>(l + 1, a, b, 0, w)?;
        }
        self.emit_touched()
    }

    /// Room for `count` entries in the outputs while they are still empty,
    /// allocated at once (advised to use huge pages when large, see
    /// [`alloc::with_capacity`]). A hint: when the room cannot be had, or the
    /// outputs already hold entries, the scans grow them as they go (and
    /// report an allocation failure then).
    fn reserve_entries(&mut self, count: usize) {
        let m = self.shape.len() - 1;
        if self.values.capacity() == 0
            && let (Ok(coords), Ok(values)) = (
                alloc::with_capacity(count.saturating_mul(m), "TTV coordinates"),
                alloc::with_capacity(count, "TTV values"),
            )
        {
            (self.coords, self.values) = (coords, values);
        }
    }

    /// The weight of node `node` at the mode's level `l`: `v` at its coordinate.
    fn weight_of(&self, l: usize, node: usize, v: &[V]) -> Result<V> {
        let i = self.lv.idx[l][node].as_usize();
        v.get(i).copied().ok_or_else(|| Error::IndexOutOfBounds {
            buffer: format!("indices[{l}]"),
            position: node,
            value: i as i128,
            bound: v.len() as u64,
        })
    }

    /// The mode's level `l`, nodes `lo..hi`, in blocks of `rows` coordinates of
    /// level `l + 1`: each block gathers every mode node's children in its range
    /// (one cursor per mode node), then reads its part of the accumulator back.
    /// The result is that of one sweep and one [`emit_scan`](Self::emit_scan),
    /// in the same order. Needs each mode node's children sorted (checked first,
    /// with their range; an unsorted tree takes the sweep).
    fn blocked(&mut self, l: usize, lo: usize, hi: usize, v: &[V], rows: usize) -> Result<()> {
        let below = l + 1;
        let stride = self.stride[below];
        let Some(mut cursors) = self
            .lv
            .block_cursors(l, lo, hi, |node| self.weight_of(l, node, v))?
        else {
            // children out of order (an unvalidated tree): one sweep
            return self.sweep(l, lo, hi, v);
        };
        let (lv, vals, ext) = (self.lv.view(), self.vals, self.lv.ext[below]);
        if l == 0
            && self.shape.len() >= 3
            && rayon::current_num_threads() > 1
            && vals.len() > 2 * super::spmv::PAR_WORK
        {
            return self.par_blocked(rows, cursors);
        }
        lv.walk_blocks(
            vals,
            below,
            (rows, 0, ext),
            &mut cursors,
            |step| match step {
                Block::Run(a, b, w) => self.add::<false>(below, a, b, 0, w),
                Block::Done(j0, j1) => self.emit_scan_range(j0 * stride, j1 * stride),
            },
        )
    }

    /// [`blocked`](Self::blocked) with the mode at the root, its blocks split
    /// between threads ([`par_nodes`], work taken as proportional to the
    /// coordinates): each part of consecutive blocks walks them with its own
    /// cursors ([`LevelView::cursors_at`]) into its own accumulator, which holds
    /// only the part's positions (`off` set, positions computed with wrapping
    /// additions from the negated offset), and emits its own entries; the
    /// parts' entries are appended in block order. The entries and their order
    /// are those of one thread. Needs 3 or more levels (with 2, the leaves are
    /// the blocked level and are added at their absolute positions).
    fn par_blocked(&mut self, rows: usize, cursors: Vec<(usize, usize, V)>) -> Result<()> {
        let (lv, vals) = (self.lv.view(), self.vals);
        let stride = self.stride[1];
        let bs = BlockSplit::new(rows, self.lv.ext[1], vals.len());
        let first = |k| bs.first(k);
        let done = std::sync::Mutex::new(Vec::new());
        let this = &*self;
        par_nodes(
            0,
            bs.blocks,
            cursors,
            &|k| bs.work(k),
            &|cur: Vec<(usize, usize, V)>, _, mid| {
                let right = lv.cursors_at(1, &cur, first(mid));
                (cur, right)
            },
            &|lo, hi, mut cur| {
                let (j0, j1) = (first(lo), first(hi));
                let off = j0 * stride;
                let mut part = this.part(off, (j1 - j0) * stride)?;
                // at most one entry per position of the part
                part.reserve_entries(part.acc.len());
                let base = off.wrapping_neg();
                lv.walk_blocks(vals, 1, (rows, j0, j1), &mut cur, |step| match step {
                    Block::Run(a, b, w) => part.add::<false>(1, a, b, base, w),
                    Block::Done(a, b) => part.emit_scan_range(a * stride - off, b * stride - off),
                })?;
                let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
                done.push((lo, part.coords, part.values));
                Ok(())
            },
        )?;
        self.append(done.into_inner().unwrap_or_else(|e| e.into_inner()))
    }

    /// The whole walk with the mode below the root (`level >= 1`), its root
    /// nodes split between threads by their leaf counts ([`par_nodes`]): each
    /// part of consecutive roots walks them into an accumulator of its own (a
    /// whole one: it spans the levels below the mode, which every parent
    /// reuses) and emits its own entries, appended in root order. Every entry
    /// comes from one parent at the level above the mode, so the entries, their
    /// order and their sums are those of one thread. The caller keeps the
    /// accumulator small against a part's leaves (at most `PAR_WORK / 16`
    /// positions), so that a part's fresh accumulator costs little.
    fn par_roots(&mut self, roots: usize, v: &[V]) -> Result<()> {
        let done = std::sync::Mutex::new(Vec::new());
        let this = &*self;
        let last = self.shape.len() - 1;
        par_nodes(
            0,
            roots,
            (),
            &|k| this.lv.descend(0, k, last),
            &|(), _, _| ((), ()),
            &|lo, hi, ()| {
                let mut part = this.part(0, this.acc.len())?;
                part.prefix(0, lo, hi, v)?;
                let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
                done.push((lo, part.coords, part.values));
                Ok(())
            },
        )?;
        self.append(done.into_inner().unwrap_or_else(|e| e.into_inner()))
    }

    /// A fresh walk state for one part of a parallel walk: the same tree and
    /// mode, an accumulator of `len` positions starting at position `off`, no
    /// entries.
    fn part(&self, off: usize, len: usize) -> Result<Self> {
        Ok(TtvAcc {
            lv: self.lv.clone(),
            shape: self.shape,
            order: self.order,
            stride: self.stride.clone(),
            vals: self.vals,
            level: self.level,
            acc: alloc::filled_random(len, V::acc_zero(), "TTV accumulator")?,
            seen: alloc::filled_random(len, false, "TTV accumulator")?,
            off,
            touched: Vec::new(),
            coords: Vec::new(),
            values: Vec::new(),
            path: self.path.clone(),
            odometer: self.odometer.clone(),
        })
    }

    /// The entries of the parts of a parallel walk, each tagged with its first
    /// node or block, appended in that order.
    fn append(&mut self, mut parts: Vec<(usize, Vec<i64>, Vec<V>)>) -> Result<()> {
        parts.sort_unstable_by_key(|p| p.0);
        let (c, x) = parts
            .iter()
            .fold((0, 0), |(c, x), p| (c + p.1.len(), x + p.2.len()));
        alloc::grow(&mut self.coords, c, "TTV coordinates")?;
        alloc::grow(&mut self.values, x, "TTV values")?;
        for (_, c, x) in parts {
            self.coords.extend_from_slice(&c);
            self.values.extend_from_slice(&x);
        }
        Ok(())
    }

    /// The mode's level `l`, nodes `lo..hi`, in one sweep over the accumulator,
    /// read back by a scan.
    fn sweep(&mut self, l: usize, lo: usize, hi: usize, v: &[V]) -> Result<()> {
        for node in lo..hi {
            let w = self.weight_of(l, node, v)?;
            let (a, b) = self.lv.children(l, node)?;
            self.add::<false>(l + 1, a, b, 0, w)?;
        }
        self.emit_scan()
    }

    /// Add the subtrees of nodes `lo..hi` at level `l > level` into the
    /// accumulator at offset `base`, weighted by `w`.
    fn add<const TRACK: bool>(
        &mut self,
        l: usize,
        lo: usize,
        hi: usize,
        base: usize,
        w: V,
    ) -> Result<()> {
        let n = self.shape.len();
        let ext = self.shape[self.order[l]];
        if !TRACK && l + 2 == n {
            return self.add_fibers(lo, hi, base, w);
        }
        let idx = &self.lv.idx[l][lo..hi];
        if l < n - 1 {
            let stride = self.stride[l];
            for (node, x) in (lo..hi).zip(idx) {
                let x = x.as_usize();
                if x >= ext {
                    return Err(oob(l, node, x, ext));
                }
                let (a, b) = self.lv.children(l, node)?;
                // `base` may be a part's negated offset: wrapping
                let at = base.wrapping_add(x * stride);
                if l + 1 == n - 1 {
                    self.add_leaves::<TRACK>(a, b, at, w)?;
                } else {
                    self.add::<TRACK>(l + 1, a, b, at, w)?;
                }
            }
            return Ok(());
        }
        self.add_leaves::<TRACK>(lo, hi, base, w)
    }

    /// [`add`](Self::add) in scan mode at the leaves' parents (level `n - 2`):
    /// nodes `lo..hi` in one flat loop. Each node's end of children is read
    /// once (it is the next node's start) and checked against the start and
    /// the end of the whole range, and the node's row of the accumulator is
    /// sliced once; then one compare per leaf against the row. A sum left at
    /// zero is flagged out of line (see [`ttv_dense_accumulator`]). Against a
    /// call per node that sliced the leaves, the values, the row and its flags
    /// (the loop [`ttv_dense`] already had, in `leaf_adds`), this took the
    /// sparse TTV along the root of a 1000^3 tree of 10^7 leaves from
    /// 35.3 / 38.3 ms to 34.4-34.8 / 36.6-36.7 ms (uniform, `int32` /
    /// `int64` indices; power-law 34.4-34.6 / 37.4-37.7 ms to 33.2-35.1 /
    /// 35.5-36.5 ms), one thread, on a 2-core Xeon with 2 MiB of L2.
    fn add_fibers(&mut self, lo: usize, hi: usize, base: usize, w: V) -> Result<()> {
        if lo >= hi {
            return Ok(());
        }
        let n = self.shape.len();
        let l = n - 2;
        let (ext, leaf_ext, stride) = (self.lv.ext[l], self.lv.ext[n - 1], self.stride[l]);
        let bad_range =
            |node: usize| Error::invariant(format!("indptr[{l}]"), Some(node), "bad child range");
        let ParentRun {
            idx,
            ptr,
            start,
            end,
            leaves,
            vals,
        } = self.lv.parent_run(l, (lo, hi), self.vals)?;
        let (acc, seen) = (&mut self.acc[..], &mut self.seen[..]);
        let mut prev = start;
        for (node, (&x, b)) in (lo..).zip(idx.iter().zip(&ptr[1..])) {
            let (x, b) = (x.as_usize(), b.as_usize());
            if x >= ext {
                return Err(oob(l, node, x, ext));
            }
            // child ranges must be consecutive and increasing
            if b < prev || b > end {
                return Err(bad_range(node));
            }
            // `base` may be a part's negated offset: wrapping
            let at = base.wrapping_add(x * stride);
            let Some(row) = at.checked_add(leaf_ext).and_then(|e| acc.get_mut(at..e)) else {
                return Err(Error::invariant(
                    "CSF tree",
                    Some(node),
                    "leaves outside the accumulator",
                ));
            };
            for (k, (&c, &val)) in (prev..).zip(leaves[prev..b].iter().zip(&vals[prev..b])) {
                let c = c.as_usize();
                let Some(s) = row.get_mut(c) else {
                    return Err(oob(n - 1, k, c, leaf_ext));
                };
                *s = V::madd(*s, val, w);
                if *s == V::acc_zero() {
                    flag_zero(seen, at + c);
                }
            }
            prev = b;
        }
        Ok(())
    }

    /// [`add`](Self::add) at the leaf level: one tight loop over a contiguous
    /// range of leaves (accumulator stride 1).
    #[inline(always)]
    fn add_leaves<const TRACK: bool>(
        &mut self,
        lo: usize,
        hi: usize,
        base: usize,
        w: V,
    ) -> Result<()> {
        let l = self.shape.len() - 1;
        let ext = self.shape[self.order[l]];
        let idx = self.lv.idx[l]
            .get(lo..hi)
            .ok_or_else(|| Error::invariant("CSF tree", Some(hi), "leaf range past the end"))?;
        let vals = self
            .vals
            .get(lo..hi)
            .ok_or_else(|| Error::invariant("CSF tree", Some(hi), "leaf without a value"))?;
        let outside = || Error::invariant("CSF tree", Some(lo), "leaves outside the accumulator");
        let end = base.checked_add(ext).ok_or_else(outside)?;
        let acc = self.acc.get_mut(base..end).ok_or_else(outside)?;
        let seen = self.seen.get_mut(base..end).ok_or_else(outside)?;
        // one compare per leaf: `acc` and `seen` both have `ext` elements
        for (k, (&x, &val)) in idx.iter().zip(vals).enumerate() {
            let x = x.as_usize();
            if x >= ext {
                return Err(oob(l, lo + k, x, ext));
            }
            acc[x] = V::madd(acc[x], val, w);
            if TRACK {
                if !seen[x] {
                    seen[x] = true;
                    alloc::push(&mut self.touched, base + x, "TTV positions")?;
                }
            } else if acc[x] == V::acc_zero() {
                // a sum back at zero: the scan cannot tell it from an
                // untouched position by its value (see `emit_scan_range`)
                seen[x] = true;
            }
        }
        Ok(())
    }

    /// Append the entry at accumulator position `key` (coordinates of the levels
    /// below the mode's in `odometer`) and reset the position.
    #[inline(always)]
    fn push_entry(&mut self, key: usize) -> Result<()> {
        let (level, n) = (self.level, self.shape.len());
        self.coords
            .extend(self.path[..level].iter().map(|&x| x as i64));
        self.coords
            .extend(self.odometer[level + 1..n].iter().map(|&x| x as i64));
        self.values.push(narrow::<V>(self.acc[key], "TTV sum")?);
        self.acc[key] = V::acc_zero();
        self.seen[key] = false;
        Ok(())
    }

    /// Read back the positions recorded in `touched`, in order.
    fn emit_touched(&mut self) -> Result<()> {
        let n = self.shape.len();
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        alloc::grow(&mut self.coords, touched.len() * (n - 1), "TTV coordinates")?;
        alloc::grow(&mut self.values, touched.len(), "TTV values")?;
        for &key in &touched {
            self.set_odometer(key);
            self.push_entry(key)?;
        }
        touched.clear();
        self.touched = touched;
        Ok(())
    }

    /// The coordinates of the levels below the mode's at accumulator position
    /// `key`, into `odometer`.
    fn set_odometer(&mut self, key: usize) {
        let mut rem = key + self.off;
        for l in (self.level + 1..self.shape.len()).rev() {
            let ext = self.shape[self.order[l]].max(1);
            self.odometer[l] = rem % ext;
            rem /= ext;
        }
    }

    /// Read back every touched position by a scan in order.
    fn emit_scan(&mut self) -> Result<()> {
        self.emit_scan_range(0, self.acc.len())
    }

    /// Read back the touched positions `lo..hi` of the accumulator by a scan in
    /// order (coordinates by an odometer, no division but for `lo`'s): those
    /// whose sum is not zero or that are flagged (their sum is, see
    /// [`ttv_dense_accumulator`]); untouched positions hold zero, unflagged.
    fn emit_scan_range(&mut self, lo: usize, hi: usize) -> Result<()> {
        let (level, n) = (self.level, self.shape.len());
        let count = (self.seen[lo..hi].iter().zip(&self.acc[lo..hi]))
            .filter(|&(&f, a)| f || *a != V::acc_zero())
            .count();
        alloc::grow(&mut self.coords, count * (n - 1), "TTV coordinates")?;
        alloc::grow(&mut self.values, count, "TTV values")?;
        self.set_odometer(lo);
        let last_ext = self.shape[self.order[n - 1]];
        // an entry's coordinates but the last: the parent's, then the levels
        // below the mode's but the last (fixed within a run of the last level)
        let mut upper: Vec<i64> = Vec::with_capacity(n);
        let mut key = lo;
        while key < hi {
            // one run of the last level at a time
            let first = self.odometer[n - 1];
            let run = last_ext.saturating_sub(first).min(hi - key);
            upper.clear();
            upper.extend(
                self.path[..level]
                    .iter()
                    .chain(&self.odometer[level + 1..n - 1])
                    .map(|&x| x as i64),
            );
            let outside = || Error::invariant("TTV accumulator", Some(key), "scan past its end");
            let acc = self.acc.get_mut(key..key + run).ok_or_else(outside)?;
            let seen = self.seen.get_mut(key..key + run).ok_or_else(outside)?;
            for (x, (a, f)) in (first..).zip(acc.iter_mut().zip(seen.iter_mut())) {
                if *f || *a != V::acc_zero() {
                    match upper.as_slice() {
                        &[c] => self.coords.push(c),
                        u => self.coords.extend_from_slice(u),
                    }
                    self.coords.push(x as i64);
                    self.values.push(narrow::<V>(*a, "TTV sum")?);
                    (*a, *f) = (V::acc_zero(), false);
                }
            }
            key += run;
            if run == 0 || first + run < last_ext {
                break; // `hi` reached inside a run
            }
            self.odometer[n - 1] = 0;
            // carry into the levels above the last
            let mut l = n - 1;
            while l > level + 1 {
                l -= 1;
                self.odometer[l] += 1;
                if self.odometer[l] < self.shape[self.order[l]] {
                    break;
                }
                self.odometer[l] = 0;
            }
        }
        Ok(())
    }
}

/// Flags accumulator position `p` as holding a sum that came back to zero (see
/// [`ttv_dense_accumulator`]): out of the leaf loop, which almost never takes
/// it. `p` is within the accumulator, whose flags are as many.
#[cold]
#[inline(never)]
fn flag_zero(seen: &mut [bool], p: usize) {
    if let Some(f) = seen.get_mut(p) {
        *f = true;
    }
}

fn oob(level: usize, node: usize, x: usize, ext: usize) -> Error {
    Error::IndexOutOfBounds {
        buffer: format!("indices[{level}]"),
        position: node,
        value: x as i128,
        bound: ext as u64,
    }
}

/// TTV by projecting every entry and summing duplicates (a sort): for an
/// accumulator that would be too large.
fn ttv_by_sort<V: Numeric, I: Index, P: Index>(
    t: &CsfTensor<V, I, P>,
    mode: usize,
    v: &[V],
    out_shape: Vec<usize>,
) -> Result<CooTensor<V, i64>> {
    let n = t.ndim();
    let mut coords = alloc::with_capacity::<i64>(t.nnz() * (n - 1), "TTV coordinates")?;
    let mut values = alloc::with_capacity::<V>(t.nnz(), "TTV values")?;
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
        crate::CoordLayout::RowMajor,
        EntryOrder::Any,
        coords.into(),
        values.into(),
        &TensorOptions::trusted(),
    )?;
    super::elementwise::sum_duplicates(&coo)
}

#[cfg(test)]
mod tests {
    use super::mttkrp_chunks;

    #[test]
    fn mttkrp_chunks_come_from_the_data_and_stay_small() {
        // 10^7 leaves, 1000 rows of rank 16: 16 chunks
        assert_eq!(mttkrp_chunks(10_000_000, 1000, 16), 16);
        // too few leaves for two chunks of 2^16
        assert_eq!(mttkrp_chunks(100_000, 10, 4), 1);
        assert_eq!(mttkrp_chunks(131_072, 10, 4), 2);
        // rows times chunks above an eighth of the leaves: fewer chunks, or none
        assert_eq!(mttkrp_chunks(10_000_000, 200_000, 1), 4);
        assert!(mttkrp_chunks(10_000_000, 1_000_000, 1) < 2);
        // partials larger than the leaves (a wide rank): fewer chunks, or none
        assert_eq!(mttkrp_chunks(10_000_000, 1000, 2500), 4);
        assert!(mttkrp_chunks(10_000_000, 78_125, 1000) < 2);
        // no overflow on huge extents
        assert!(mttkrp_chunks(usize::MAX, usize::MAX, usize::MAX) < 2);
    }
}

//! Element-wise operations on two tensors of the same shape, in the left
//! operand's format, plus scaling and mapping values.
//!
//! [`binary`] reads both operands' buffers where they lie and writes its result
//! in the left operand's format: CSR + CSR -> CSR (a row-wise merge without
//! data-dependent branches; one pass on one thread, rows in parallel chunks on
//! several, see `csx_binary`), CSC likewise, COO + COO -> canonical COO, CSF + CSF
//! (same axis order) -> CSF (a merge of the two tries), dense -> dense, GCS / DM
//! with the same map -> the operation on their storage. A right operand of
//! another format (or index type, CSX axis, CSF axis order, map) is converted
//! once to the left one's. Results equal to zero are dropped (a dense result
//! keeps them, of course).
//!
//! ```
//! use arrow_sparse::kernels::elementwise::{binary, map_values, scale, BinaryOp};
//! use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format};
//! let t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![3], &[(vec![1], 1.5)])?.into();
//! assert_eq!(scale::<f32>(&t, 2.0)?.get::<f32>(&[1])?, Some(3.0));
//! let as_f64 = map_values::<f32, f64>(&t, |v| v as f64 * 10.0)?; // same structure, new values
//! assert_eq!(as_f64.get::<f64>(&[1])?, Some(15.0));
//! let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0)])?
//!     .to_csx::<i32, i32>(CompressedAxis::Row)?
//!     .into();
//! assert_eq!(binary::<f64>(&a, &a, BinaryOp::Add)?.format(), Format::Csr); // CSR + CSR -> CSR
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::{EntryOrder, TensorOptions};
use std::borrow::Cow;

use arrow_buffer::{ArrowNativeType, ScalarBuffer};

use super::merge::{self, Scratch, Visit};
use super::{Numeric, alloc, narrow, row_major_values};
use crate::error::{Error, Result};
use crate::tensor::levels::LevelView;
use crate::tensor::{
    AnyCoo, AnyCsf, AnyCsx, AnyDm, AnyGcs, AnyTensor, CompressedAxis, CooTensor, CoordLayout,
    CsfTensor, CsxMatrix, DenseTensor, Format,
};
use crate::types::{Index, Value};
use crate::{IndexType, with_index_type};

/// Sort and sum duplicates, following the kernels' accumulation rule: each run
/// of equal coordinates is summed in [`Numeric::Acc`] (a checked `i128` for
/// integers) and narrowed once, so only a total that does not fit the value type
/// is an [`Error::Overflow`]. The result is row-major and canonical; entries that
/// sum to zero are kept (they were stored).
/// [`canonicalize`](super::convert::canonicalize) does the same for any value
/// type, adding in the value type.
///
/// ```
/// use arrow_sparse::kernels::elementwise::sum_duplicates;
/// use arrow_sparse::{CooTensor, Error};
/// let coo = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![1, 1], 4), (vec![0, 1], 2), (vec![1, 1], -4)])?;
/// let s = sum_duplicates(&coo)?;
/// assert!(s.is_canonical());
/// assert_eq!((s.coords().as_ref(), s.values().as_ref()), (&[0i64, 1, 1, 1][..], &[2, 0][..])); // the zero stays
/// // 100 + 100 overflows int8 on the way, but the total 100 fits
/// let wide = CooTensor::<i8, i64>::from_entries(vec![1], &[(vec![0], 100), (vec![0], 100), (vec![0], -100)])?;
/// assert_eq!(sum_duplicates(&wide)?.values().as_ref(), &[100]);
/// let big = CooTensor::<i8, i64>::from_entries(vec![1], &[(vec![0], 100), (vec![0], 100)])?;
/// assert!(matches!(sum_duplicates(&big), Err(Error::Overflow { .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn sum_duplicates<V: Numeric, I: Index>(coo: &CooTensor<V, I>) -> Result<CooTensor<V, I>> {
    let (coords, sums) = canonical_sums(coo)?;
    let mut values = alloc::with_capacity::<V>(sums.len(), "summed values")?;
    for a in sums {
        values.push(narrow::<V>(a, "sum of duplicate entries")?);
    }
    crate::convert::kernels::canonical_coo(coo, coords, values)
}

/// The coordinates of `coo` sorted row-major without duplicates, and each one's
/// sum in the accumulator (not narrowed).
pub(super) fn canonical_sums<V: Numeric, I: Index>(
    coo: &CooTensor<V, I>,
) -> Result<(Vec<I>, Vec<V::Acc>)> {
    if coo.is_canonical() && coo.layout() == CoordLayout::RowMajor {
        let mut sums = alloc::with_capacity(coo.nnz(), "summed values")?;
        sums.extend(coo.values().iter().map(|v| v.to_acc()));
        let mut coords = alloc::with_capacity(coo.coords().len(), "coordinates")?;
        coords.extend_from_slice(coo.coords());
        return Ok((coords, sums));
    }
    crate::convert::kernels::fold_duplicates(coo, V::to_acc, |sum, v: V| {
        Ok(V::acc_add(sum, v.to_acc()))
    })
}

/// The operation of [`binary`].
///
/// ```
/// use arrow_sparse::kernels::elementwise::{binary, BinaryOp};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![0], 5.0), (vec![1], 2.0)])?.into();
/// let b: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![1], 2.0), (vec![2], 1.0)])?.into();
/// let values = |op| binary::<f64>(&a, &b, op).map(|t| t.to_coo::<f64, i64>().unwrap().values().to_vec());
/// assert_eq!(values(BinaryOp::Add)?, vec![5.0, 4.0, 1.0]); // union
/// assert_eq!(values(BinaryOp::Subtract)?, vec![5.0, -1.0]); // 2 - 2 = 0 is dropped
/// assert_eq!(values(BinaryOp::Multiply)?, vec![4.0]); // intersection
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `a + b` over the union of the entries.
    Add,
    /// `a - b` over the union of the entries.
    Subtract,
    /// `a * b` over the intersection of the entries.
    Multiply,
}

impl BinaryOp {
    fn visit(self) -> Visit {
        match self {
            BinaryOp::Multiply => Visit::Intersection,
            _ => Visit::Union,
        }
    }

    /// The result at a position where `a` / `b` hold these sums (absent: zero).
    #[inline(always)]
    fn apply<V: Numeric>(self, a: Option<V::Acc>, b: Option<V::Acc>) -> V::Acc {
        let z = V::acc_zero();
        match self {
            BinaryOp::Add => match (a, b) {
                (Some(x), Some(y)) => V::acc_add(x, y),
                (Some(x), None) => x,
                (None, Some(y)) => y,
                (None, None) => z,
            },
            BinaryOp::Subtract => V::acc_sub(a.unwrap_or(z), b.unwrap_or(z)),
            BinaryOp::Multiply => V::acc_mul(a.unwrap_or(z), b.unwrap_or(z)),
        }
    }
}

// Problems found inside parallel tasks, as bits.
const OVERFLOW: u8 = 1;
const BAD_PTR: u8 = 2;
const OOB: u8 = 4;
const NO_MEMORY: u8 = 8;
const TOO_MANY: u8 = 16;
const PTR_OVERFLOW: u8 = 32;

fn check_flags<V: Numeric>(flags: u8, what: &str) -> Result<()> {
    if flags & NO_MEMORY != 0 {
        return Err(Error::allocation(
            format!("{what} row scratch"),
            0,
            size_of::<V::Acc>(),
        ));
    }
    if flags & BAD_PTR != 0 {
        return Err(Error::invariant(
            "indptr",
            None,
            "indptr decreases or exceeds nnz (the tensor was built without validation)",
        ));
    }
    if flags & (OOB | TOO_MANY) != 0 {
        return Err(Error::invariant(
            format!("{what} indices"),
            None,
            "an index is not below its dimension (the tensor was built without validation)",
        ));
    }
    if flags & PTR_OVERFLOW != 0 {
        return Err(Error::overflow(
            format!("{what} indptr"),
            "a row's entry count",
            "the indptr type",
        ));
    }
    if flags & OVERFLOW != 0 {
        return Err(Error::overflow(
            format!("{what} result"),
            "an element",
            V::TYPE.name(),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- CSR / CSC

/// The entries of row `r`, or `None` for a bad indptr.
#[inline(always)]
fn row<P: Index>(ptr: &[P], r: usize, nnz: usize) -> Option<(usize, usize)> {
    let (a, b) = (ptr.get(r)?.as_usize(), ptr.get(r + 1)?.as_usize());
    (a <= b && b <= nnz).then_some((a, b))
}

/// Buffers of one CSR / CSC operand.
struct CsxParts<'a, V, I, P> {
    ptr: &'a [P],
    idx: &'a [I],
    vals: &'a [V],
}

impl<V, I, P: Index> CsxParts<'_, V, I, P> {
    fn nnz(&self) -> usize {
        self.vals.len().min(self.idx.len())
    }
    fn range(&self, r: usize) -> Option<(usize, usize)> {
        row(self.ptr, r, self.nnz())
    }
}

/// Merge row `r` of both operands, calling `f(index, value)` for every result
/// that is not zero. Returns problem bits.
#[inline(always)]
fn merge_one_row<V: Numeric, I: Index, P: Index>(
    a: &CsxParts<'_, V, I, P>,
    b: &CsxParts<'_, V, I, P>,
    r: usize,
    minor: usize,
    op: BinaryOp,
    scratch: &mut Scratch<V::Acc>,
    f: &mut impl FnMut(usize, V) -> bool,
) -> u8 {
    let (Some((a0, a1)), Some((b0, b1))) = (a.range(r), b.range(r)) else {
        return BAD_PTR;
    };
    let mut flags = 0u8;
    let res = merge::merge_row::<V, I, I>(
        &a.idx[a0..a1],
        &a.vals[a0..a1],
        &b.idx[b0..b1],
        &b.vals[b0..b1],
        op.visit(),
        scratch,
        &mut |j, x, y| {
            if j >= minor {
                flags |= OOB;
                return false;
            }
            match V::from_acc(op.apply::<V>(x, y)) {
                Some(v) if v.is_zero() => true,
                Some(v) => f(j, v),
                None => {
                    flags |= OVERFLOW;
                    false
                }
            }
        },
    );
    match res {
        Ok(_) => flags,
        Err(_) => flags | NO_MEMORY,
    }
}

/// Whether both indptrs can be read without checks: non-decreasing, ending at
/// most at their operand's entry count, one per major position plus one.
fn ptrs_valid<V, I, P: Index>(a: &CsxParts<'_, V, I, P>, b: &CsxParts<'_, V, I, P>) -> bool {
    let ok = |p: &CsxParts<'_, V, I, P>| {
        let nnz = p.nnz();
        p.ptr.first().is_none_or(|f| f.as_usize() <= nnz)
            && p.ptr
                .windows(2)
                .fold(true, |ok, w| ok & (w[0].as_usize() <= w[1].as_usize()))
            && p.ptr.last().is_none_or(|l| l.as_usize() <= nnz)
    };
    a.ptr.len() == b.ptr.len() && ok(a) && ok(b)
}

/// Whether a row can take the fast merges: indices strictly increasing (so the
/// last one is the largest) and below `minor`.
#[inline(always)]
fn fast_row<I: Index>(idx: &[I], minor: usize) -> bool {
    idx.last().is_none_or(|l| l.as_usize() < minor)
        && idx
            .windows(2)
            .fold(true, |ok, w| ok & (w[0].as_usize() < w[1].as_usize()))
}

/// The union merge of two strictly increasing rows into `oi` / `ov` (room for
/// both rows), `f` combining the two sides' accumulators (absent: zero). Each
/// step writes its result and advances the output only when it is not zero,
/// so the loop has no data-dependent branch but its exit. Returns the count.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn union_sorted<V: Numeric, I: Index>(
    ai: &[I],
    av: &[V],
    bi: &[I],
    bv: &[V],
    f: &impl Fn(V::Acc, V::Acc) -> V::Acc,
    oi: &mut [I],
    ov: &mut [V],
    overflow: &mut bool,
) -> usize {
    let (na, nb) = (ai.len().min(av.len()), bi.len().min(bv.len()));
    let zero = V::acc_zero();
    let (mut i, mut j, mut w) = (0usize, 0usize, 0usize);
    let mut put = |w: &mut usize, k: I, r: V::Acc| match V::from_acc(r) {
        Some(v) => {
            oi[*w] = k;
            ov[*w] = v;
            *w += !v.is_zero() as usize;
        }
        None => *overflow = true,
    };
    while i < na && j < nb {
        let (ka, kb) = (ai[i], bi[j]);
        let (ta, tb) = (
            ka.as_usize() <= kb.as_usize(),
            kb.as_usize() <= ka.as_usize(),
        );
        let (x, y) = (av[i].to_acc(), bv[j].to_acc());
        // masks and selects, not branches: which side comes next is unpredictable
        let (x, y) = (V::acc_keep(ta, x), V::acc_keep(tb, y));
        put(&mut w, std::hint::select_unpredictable(ta, ka, kb), f(x, y));
        i += ta as usize;
        j += tb as usize;
    }
    for k in i..na {
        put(&mut w, ai[k], f(av[k].to_acc(), zero));
    }
    for k in j..nb {
        put(&mut w, bi[k], f(zero, bv[k].to_acc()));
    }
    w
}

/// The intersection merge of two strictly increasing rows (see
/// [`union_sorted`]): every step writes `f(a, b)` and advances the output when
/// the keys match and the result is not zero, so `oi` / `ov` need one slot more
/// than the results.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn intersection_sorted<V: Numeric, I: Index>(
    ai: &[I],
    av: &[V],
    bi: &[I],
    bv: &[V],
    f: &impl Fn(V::Acc, V::Acc) -> V::Acc,
    oi: &mut [I],
    ov: &mut [V],
    overflow: &mut bool,
) -> usize {
    let (na, nb) = (ai.len().min(av.len()), bi.len().min(bv.len()));
    let (mut i, mut j, mut w) = (0usize, 0usize, 0usize);
    while i < na && j < nb {
        let (ka, kb) = (ai[i].as_usize(), bi[j].as_usize());
        let eq = ka == kb;
        match V::from_acc(f(av[i].to_acc(), bv[j].to_acc())) {
            Some(v) => {
                oi[w] = ai[i];
                ov[w] = v;
                w += (eq & !v.is_zero()) as usize;
            }
            None => *overflow |= eq,
        }
        i += (ka <= kb) as usize;
        j += (kb <= ka) as usize;
    }
    w
}

/// The number of positions both strictly increasing rows hold.
#[inline(always)]
fn common_count<I: Index>(ai: &[I], bi: &[I]) -> usize {
    let (mut i, mut j, mut c) = (0usize, 0usize, 0usize);
    while i < ai.len() && j < bi.len() {
        let (ka, kb) = (ai[i].as_usize(), bi[j].as_usize());
        c += (ka == kb) as usize;
        i += (ka <= kb) as usize;
        j += (kb <= ka) as usize;
    }
    c
}

/// Rows `lo..hi` of `a op b` written one after another into `oi` / `ov`
/// (room for the rows' results plus one), each row's count into `counts`.
/// Returns the total and problem bits.
#[allow(clippy::too_many_arguments)]
fn fill_rows<V: Numeric, I: Index, P: Index>(
    a: &CsxParts<'_, V, I, P>,
    b: &CsxParts<'_, V, I, P>,
    lo: usize,
    minor: usize,
    op: BinaryOp,
    f: &impl Fn(V::Acc, V::Acc) -> V::Acc,
    oi: &mut [I],
    ov: &mut [V],
    counts: &mut [P],
) -> (usize, u8) {
    let mut scratch = Scratch::new();
    let (mut w, mut flags, mut overflow) = (0usize, 0u8, false);
    for (r, count) in (lo..).zip(counts.iter_mut()) {
        // indptrs were checked by the caller
        let (a0, a1) = (a.ptr[r].as_usize(), a.ptr[r + 1].as_usize());
        let (b0, b1) = (b.ptr[r].as_usize(), b.ptr[r + 1].as_usize());
        let (ai, av, bi, bv) = (
            &a.idx[a0..a1],
            &a.vals[a0..a1],
            &b.idx[b0..b1],
            &b.vals[b0..b1],
        );
        let n = if fast_row(ai, minor) && fast_row(bi, minor) {
            let (oi, ov) = (&mut oi[w..], &mut ov[w..]);
            match op.visit() {
                Visit::Union => union_sorted(ai, av, bi, bv, f, oi, ov, &mut overflow),
                Visit::Intersection => {
                    intersection_sorted(ai, av, bi, bv, f, oi, ov, &mut overflow)
                }
            }
        } else {
            let mut k = w;
            flags |= merge_one_row(a, b, r, minor, op, &mut scratch, &mut |j, v| {
                if k < oi.len() {
                    oi[k] = I::usize_as(j);
                    ov[k] = v;
                    k += 1;
                    true
                } else {
                    flags |= TOO_MANY;
                    false
                }
            });
            k - w
        };
        if P::try_from_usize(n).is_none() {
            flags |= PTR_OVERFLOW;
        }
        *count = P::usize_as(n);
        w += n;
    }
    (w, flags | if overflow { OVERFLOW } else { 0 })
}

/// The structural size of rows `lo..hi` of a union (positions in either
/// operand; rows that are not strictly increasing are merged and counted
/// without their zero results).
fn union_count<V: Numeric, I: Index, P: Index>(
    a: &CsxParts<'_, V, I, P>,
    b: &CsxParts<'_, V, I, P>,
    lo: usize,
    hi: usize,
    minor: usize,
    op: BinaryOp,
) -> (usize, u8) {
    let mut scratch = Scratch::new();
    let (mut total, mut flags) = (0usize, 0u8);
    for r in lo..hi {
        let (a0, a1) = (a.ptr[r].as_usize(), a.ptr[r + 1].as_usize());
        let (b0, b1) = (b.ptr[r].as_usize(), b.ptr[r + 1].as_usize());
        let (ai, bi) = (&a.idx[a0..a1], &b.idx[b0..b1]);
        if fast_row(ai, minor) && fast_row(bi, minor) {
            total += ai.len() + bi.len() - common_count(ai, bi);
        } else {
            flags |= merge_one_row(a, b, r, minor, op, &mut scratch, &mut |_, _| {
                total += 1;
                true
            });
        }
    }
    (total, flags)
}

/// `a op b` for two CSR (or two CSC) matrices given as buffers of one shape:
/// returns the result's indptr, indices and values.
///
/// One pass on one thread: rows are merged one after another into outputs
/// sized for the worst case (both operands' entries for a union, the smaller
/// one's for an intersection), zeroed allocations whose untouched pages cost
/// nothing, and the counts become indptr. On several threads the rows are cut
/// into chunks of about equal work; each chunk merges into its own region of
/// the outputs (for a union, sized by a first counting pass over the indices
/// alone, so that regions are exact unless results cancel; for an
/// intersection, by the same worst case per chunk), and the regions are moved
/// together afterwards where they left gaps. Rows whose indices are not
/// strictly increasing go through the sorting merge of [`merge`]. The result
/// is the same on any number of threads.
fn csx_binary<V: Numeric, I: Index, P: Index>(
    a: &CsxParts<'_, V, I, P>,
    b: &CsxParts<'_, V, I, P>,
    minor: usize,
    op: BinaryOp,
) -> Result<(Vec<P>, Vec<I>, Vec<V>)> {
    match op {
        BinaryOp::Add => csx_binary_with(a, b, minor, op, &|x, y| V::acc_add(x, y)),
        BinaryOp::Subtract => csx_binary_with(a, b, minor, op, &|x, y| V::acc_sub(x, y)),
        BinaryOp::Multiply => csx_binary_with(a, b, minor, op, &|x, y| V::acc_mul(x, y)),
    }
}

fn csx_binary_with<V: Numeric, I: Index, P: Index>(
    a: &CsxParts<'_, V, I, P>,
    b: &CsxParts<'_, V, I, P>,
    minor: usize,
    op: BinaryOp,
    f: &(impl Fn(V::Acc, V::Acc) -> V::Acc + Sync),
) -> Result<(Vec<P>, Vec<I>, Vec<V>)> {
    use rayon::prelude::*;
    if !ptrs_valid(a, b) {
        check_flags::<V>(BAD_PTR, "element-wise")?;
    }
    let major = a.ptr.len().saturating_sub(1);
    let union = op.visit() == Visit::Union;
    let at = |p: &CsxParts<'_, V, I, P>, r: usize| p.ptr.get(r).map_or(0, |x| x.as_usize());
    // the work of rows 0..r: entries of both operands plus rows
    let work = |r: usize| at(a, r) - at(a, 0) + at(b, r) - at(b, 0) + r;
    let total_work = work(major);
    let threads = rayon::current_num_threads();
    let mut chunks: Vec<(usize, usize)> = alloc::with_capacity(1, "element-wise chunks")?;
    if threads <= 1 || total_work <= 2 * super::spmv::PAR_WORK {
        chunks.push((0, major));
    } else {
        let target = (total_work / (8 * threads)).max(super::spmv::PAR_WORK);
        let mut lo = 0;
        while lo < major {
            let want = work(lo) + target;
            let hi = super::spmv::partition(lo + 1, major, |r| work(r) < want).max(lo + 1);
            alloc::push(&mut chunks, (lo, hi), "element-wise chunks")?;
            lo = hi;
        }
    }
    // room of each chunk's region (one slot of slack for the intersection's
    // last write; a union writes at most its structural count, so its counted
    // regions are exact and, unless results cancel, follow each other without
    // a gap: nothing to move afterwards), and where the regions start
    let bound = |lo: usize, hi: usize| {
        let (na, nb) = (at(a, hi) - at(a, lo), at(b, hi) - at(b, lo));
        if union { na + nb } else { na.min(nb) + 1 }
    };
    let mut flags = 0u8;
    let rooms: Vec<usize> = if union && chunks.len() > 1 {
        let counted: Vec<(usize, u8)> = chunks
            .par_iter()
            .map(|&(lo, hi)| union_count(a, b, lo, hi, minor, op))
            .collect();
        counted
            .iter()
            .map(|&(n, fl)| {
                flags |= fl;
                n
            })
            .collect()
    } else {
        chunks.iter().map(|&(lo, hi)| bound(lo, hi)).collect()
    };
    check_flags::<V>(flags, "element-wise")?;
    let room: usize = rooms.iter().sum();
    let mut idx = alloc::zeroed::<I>(room, "element-wise indices")?;
    let mut vals = alloc::zeroed::<V>(room, "element-wise values")?;
    let mut ptr = alloc::zeroed::<P>(major + 1, "element-wise indptr")?;
    // split the outputs into the chunks' parts
    let mut parts = alloc::with_capacity(chunks.len(), "element-wise chunks")?;
    {
        let (mut ri, mut rv) = (&mut idx[..], &mut vals[..]);
        let mut rc = ptr.get_mut(1..).unwrap_or_default();
        for (&(lo, hi), &n) in chunks.iter().zip(&rooms) {
            let (pi, ti) = std::mem::take(&mut ri).split_at_mut(n);
            let (pv, tv) = std::mem::take(&mut rv).split_at_mut(n);
            let (pc, tc) = std::mem::take(&mut rc).split_at_mut(hi - lo);
            parts.push((lo, pi, pv, pc));
            (ri, rv, rc) = (ti, tv, tc);
        }
    }
    let filled: Vec<(usize, u8)> = parts
        .into_par_iter()
        .map(|(lo, oi, ov, counts)| fill_rows(a, b, lo, minor, op, f, oi, ov, counts))
        .collect();
    for &(_, fl) in &filled {
        flags |= fl;
    }
    check_flags::<V>(flags, "element-wise")?;
    // counts -> offsets, and the regions moved together
    let mut total = 0usize;
    let mut start = 0usize;
    for ((&(lo, hi), &n), &(count, _)) in chunks.iter().zip(&rooms).zip(&filled) {
        if start != total {
            idx.copy_within(start..start + count, total);
            vals.copy_within(start..start + count, total);
        }
        for p in &mut ptr[lo + 1..hi + 1] {
            total += p.as_usize();
            *p = P::usize_as(total);
        }
        start += n;
    }
    if P::try_from_usize(total).is_none() {
        return Err(Error::overflow(
            "element-wise indptr",
            total.to_string(),
            P::TYPE.name(),
        ));
    }
    idx.truncate(total);
    vals.truncate(total);
    if idx.capacity() - total > total / 8 + 4096 {
        idx.shrink_to_fit();
        vals.shrink_to_fit();
    }
    Ok((ptr, idx, vals))
}

fn check_shapes(a: &[usize], b: &[usize]) -> Result<()> {
    if a != b {
        return Err(Error::shape(
            "element-wise operand",
            format!("shape {a:?}"),
            format!("{b:?}"),
        ));
    }
    Ok(())
}

/// `a op b` for two CSR / CSC matrices of one shape, in `a`'s format: a merge
/// of each row of `a` with the same row of `b` (rows in parallel; a `b`
/// compressed along the other axis is transposed first). Indices come out
/// sorted within each row; results equal to zero are dropped.
///
/// ```
/// use arrow_sparse::kernels::elementwise::{binary_csx, BinaryOp};
/// use arrow_sparse::{CompressedAxis, CsxMatrix};
/// // [[1, 0, 2], [0, 3, 0]] and [[0, 0, -2], [1, 0, 0]] as CSR
/// let a = CsxMatrix::<f64, i32>::try_new(vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 1].into(), vec![1.0, 2.0, 3.0].into())?;
/// let b = CsxMatrix::<f64, i32>::try_new(vec![2, 3], CompressedAxis::Row, vec![0, 1, 2].into(), vec![2, 0].into(), vec![-2.0, 1.0].into())?;
/// let s = binary_csx(&a, &b, BinaryOp::Add)?;
/// assert_eq!(s.indptr().as_ref(), &[0, 1, 3]); // 2 + (-2) is dropped
/// assert_eq!((s.indices().as_ref(), s.values().as_ref()), (&[0, 0, 1][..], &[1.0, 1.0, 3.0][..]));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn binary_csx<V: Numeric, I: Index, P: Index>(
    a: &CsxMatrix<V, I, P>,
    b: &CsxMatrix<V, I, P>,
    op: BinaryOp,
) -> Result<CsxMatrix<V, I, P>> {
    check_shapes(a.shape(), b.shape())?;
    let bt;
    let b = if b.axis() == a.axis() {
        b
    } else {
        bt = super::convert::transpose_csx(b)?;
        &bt
    };
    let (_, minor) = a.axis().dims();
    let pa = CsxParts {
        ptr: a.indptr(),
        idx: a.indices(),
        vals: a.values(),
    };
    let pb = CsxParts {
        ptr: b.indptr(),
        idx: b.indices(),
        vals: b.values(),
    };
    let (ptr, idx, vals) = csx_binary(&pa, &pb, a.shape()[minor], op)?;
    CsxMatrix::try_new_with(
        a.shape().to_vec(),
        a.axis(),
        ptr.into(),
        idx.into(),
        vals.into(),
        &TensorOptions::trusted(),
    )?
    .with_dim_names(a.dim_names().to_vec())
}

// ---------------------------------------------------------------- COO

/// A COO operand's entries sorted lexicographically without duplicates: the
/// buffers as they lie when the tensor is canonical, else sorted and summed.
enum SortedCoo<'a, V: Numeric, I: Index> {
    Canonical(&'a CooTensor<V, I>),
    Summed(Vec<I>, Vec<V::Acc>),
}

impl<'a, V: Numeric, I: Index> SortedCoo<'a, V, I> {
    fn new(c: &'a CooTensor<V, I>) -> Result<Self> {
        Ok(if c.is_canonical() {
            SortedCoo::Canonical(c)
        } else {
            let (x, v) = canonical_sums(c)?;
            SortedCoo::Summed(x, v)
        })
    }

    fn len(&self) -> usize {
        match self {
            SortedCoo::Canonical(c) => c.nnz(),
            SortedCoo::Summed(_, v) => v.len(),
        }
    }

    /// Coordinate `d` of entry `k` (`n` dimensions).
    #[inline(always)]
    fn at(&self, k: usize, d: usize, n: usize) -> I {
        match self {
            SortedCoo::Canonical(c) => match c.layout() {
                CoordLayout::RowMajor => c.coords()[k * n + d],
                CoordLayout::ColumnMajor => c.coords()[d * c.nnz() + k],
            },
            SortedCoo::Summed(x, _) => x[k * n + d],
        }
    }

    #[inline(always)]
    fn val(&self, k: usize) -> V::Acc {
        match self {
            SortedCoo::Canonical(c) => c.values()[k].to_acc(),
            SortedCoo::Summed(_, v) => v[k],
        }
    }
}

/// Row-major linear positions of the entries of a sorted COO operand: the
/// coordinates of entry `k` are `coords[k * n..k * n + n]`, and its position
/// `sum coords[d] * strides[d]` orders the entries as their coordinates do
/// (every coordinate is below its extent, and the extents' product fits a
/// `u64`). `N` is the number of dimensions when known to the compiler (the
/// 1- to 3-D cases), or 0 (`strides.len()`, known at run time).
#[derive(Clone, Copy)]
struct Keys<'s, I, const N: usize> {
    coords: &'s [I],
    strides: &'s [u64],
}

impl<'s, I: Index, const N: usize> Keys<'s, I, N> {
    /// Coordinates per entry.
    #[inline(always)]
    fn n(&self) -> usize {
        if N > 0 { N } else { self.strides.len() }
    }

    /// The coordinates of entry `k` (empty past the end: never read there).
    #[inline(always)]
    fn entry(&self, k: usize) -> &'s [I] {
        let n = self.n();
        self.coords.get(k * n..k * n + n).unwrap_or_default()
    }

    /// The linear position of entry `k`.
    #[inline(always)]
    fn at(&self, k: usize) -> u64 {
        self.entry(k)
            .iter()
            .zip(self.strides)
            .fold(0u64, |s, (&c, &w)| {
                s.wrapping_add((c.as_usize() as u64).wrapping_mul(w))
            })
    }
}

/// One operand of the fast COO merge: its keys and values, entries `0..len`.
#[derive(Clone, Copy)]
struct CooSide<'s, V, I, const N: usize> {
    keys: Keys<'s, I, N>,
    vals: &'s [V],
}

impl<'s, V: Copy, I: Index, const N: usize> CooSide<'s, V, I, N> {
    fn new(coords: &'s [I], vals: &'s [V], strides: &'s [u64]) -> Self {
        let n = strides.len().max(1);
        let len = vals.len().min(coords.len() / n);
        Self {
            keys: Keys {
                coords: &coords[..len * n],
                strides,
            },
            vals: &vals[..len],
        }
    }

    fn len(&self) -> usize {
        self.vals.len()
    }

    /// Entries `lo..hi`.
    fn range(&self, lo: usize, hi: usize) -> Self {
        let n = self.keys.n();
        Self {
            keys: Keys {
                coords: self.keys.coords.get(lo * n..hi * n).unwrap_or_default(),
                strides: self.keys.strides,
            },
            vals: self.vals.get(lo..hi).unwrap_or_default(),
        }
    }

    /// The first entry at or after `from` whose key is not below `key`.
    fn lower_bound(&self, from: usize, key: u64) -> usize {
        super::spmv::partition(from.min(self.len()), self.len(), |m| self.keys.at(m) < key)
    }
}

/// Write entry `e` with value `r` at slot `*w` of `oc` / `ov`, and advance
/// `*w` when `keep` and the value is not zero; an integer result that does
/// not fit sets `overflow` (when `keep`).
#[inline(always)]
fn put_entry<V: Numeric, I: Index>(
    (oc, ov): (&mut [I], &mut [V]),
    w: &mut usize,
    e: &[I],
    r: V::Acc,
    keep: bool,
    overflow: &mut bool,
) {
    let n = e.len();
    match V::from_acc(r) {
        Some(v) => {
            if let (Some(oe), Some(o)) = (oc.get_mut(*w * n..*w * n + n), ov.get_mut(*w)) {
                for (o, &c) in oe.iter_mut().zip(e) {
                    *o = c;
                }
                *o = v;
                *w += (keep & !v.is_zero()) as usize;
            }
        }
        None => *overflow |= keep,
    }
}

/// The union merge of two sorted COO operands into `oc` / `ov` (room for both
/// operands' entries), as [`union_sorted`] does for CSR rows: each step writes
/// its result and advances the output when it is not zero, with masks and
/// selects in place of branches. Returns the count.
fn coo_union<V: Numeric, I: Index, const N: usize>(
    a: CooSide<'_, V, I, N>,
    b: CooSide<'_, V, I, N>,
    f: &impl Fn(V::Acc, V::Acc) -> V::Acc,
    (oc, ov): (&mut [I], &mut [V]),
    overflow: &mut bool,
) -> usize {
    let (na, nb) = (a.len(), b.len());
    let zero = V::acc_zero();
    let (mut i, mut j, mut w) = (0usize, 0usize, 0usize);
    while i < na && j < nb {
        let (ka, kb) = (a.keys.at(i), b.keys.at(j));
        let (ta, tb) = (ka <= kb, kb <= ka);
        let (x, y) = (
            V::acc_keep(ta, a.vals[i].to_acc()),
            V::acc_keep(tb, b.vals[j].to_acc()),
        );
        let e = std::hint::select_unpredictable(ta, a.keys.entry(i), b.keys.entry(j));
        put_entry((oc, ov), &mut w, e, f(x, y), true, overflow);
        i += ta as usize;
        j += tb as usize;
    }
    for k in i..na {
        let r = f(a.vals[k].to_acc(), zero);
        put_entry((oc, ov), &mut w, a.keys.entry(k), r, true, overflow);
    }
    for k in j..nb {
        let r = f(zero, b.vals[k].to_acc());
        put_entry((oc, ov), &mut w, b.keys.entry(k), r, true, overflow);
    }
    w
}

/// The intersection merge of two sorted COO operands (see [`coo_union`]):
/// every step writes `f(a, b)` and advances the output when the keys match
/// and the result is not zero, so `oc` / `ov` need one slot more than the
/// results.
fn coo_intersection<V: Numeric, I: Index, const N: usize>(
    a: CooSide<'_, V, I, N>,
    b: CooSide<'_, V, I, N>,
    f: &impl Fn(V::Acc, V::Acc) -> V::Acc,
    (oc, ov): (&mut [I], &mut [V]),
    overflow: &mut bool,
) -> usize {
    let (na, nb) = (a.len(), b.len());
    let (mut i, mut j, mut w) = (0usize, 0usize, 0usize);
    while i < na && j < nb {
        let (ka, kb) = (a.keys.at(i), b.keys.at(j));
        let r = f(a.vals[i].to_acc(), b.vals[j].to_acc());
        put_entry((oc, ov), &mut w, a.keys.entry(i), r, ka == kb, overflow);
        i += (ka <= kb) as usize;
        j += (kb <= ka) as usize;
    }
    w
}

/// The number of positions both sorted operands hold.
fn coo_common<V: Copy, I: Index, const N: usize>(
    a: CooSide<'_, V, I, N>,
    b: CooSide<'_, V, I, N>,
) -> usize {
    let (na, nb) = (a.len(), b.len());
    let (mut i, mut j, mut c) = (0usize, 0usize, 0usize);
    while i < na && j < nb {
        let (ka, kb) = (a.keys.at(i), b.keys.at(j));
        c += (ka == kb) as usize;
        i += (ka <= kb) as usize;
        j += (kb <= ka) as usize;
    }
    c
}

/// The row-major strides of `shape` as `u64`, when the extents' product fits
/// (then no stride saturates).
fn linear_strides(shape: &[usize]) -> Option<Vec<u64>> {
    shape
        .iter()
        .try_fold(1u64, |p, &d| p.checked_mul(u64::try_from(d).ok()?))?;
    crate::tensor::dense::row_major_strides(shape)
        .into_iter()
        .map(|s| u64::try_from(s).ok())
        .collect()
}

/// `a op b` for two canonical row-major COO tensors (coordinates `ac` / `bc`,
/// values `av` / `bv`, `strides` from [`linear_strides`]): the merge of
/// [`binary_coo`] on the buffers as they lie, with the entries' linear
/// positions as keys. Returns the result's coordinates and values.
///
/// One pass on one thread, into outputs sized for the worst case (both
/// operands' entries for a union, the smaller one's for an intersection),
/// zeroed allocations whose untouched pages cost nothing. On several threads
/// the larger operand's entries are cut into chunks of about equal size
/// (eight per thread, at least [`PAR_WORK`](super::spmv::PAR_WORK) entries
/// of both operands each), the other operand at the first entry not below
/// each cut's key; each chunk merges into its own region of the outputs (for
/// a union, sized by a first counting pass over the keys, so that regions
/// are exact unless results cancel; for an intersection, by the worst case),
/// and the regions are moved together where they left gaps. The result is
/// the same on any number of threads.
fn coo_merge<V: Numeric, I: Index, const N: usize>(
    (ac, av): (&[I], &[V]),
    (bc, bv): (&[I], &[V]),
    strides: &[u64],
    op: BinaryOp,
) -> Result<(Vec<I>, Vec<V>)> {
    match op {
        BinaryOp::Add => {
            coo_merge_with::<V, I, N>((ac, av), (bc, bv), strides, op, &|x, y| V::acc_add(x, y))
        }
        BinaryOp::Subtract => {
            coo_merge_with::<V, I, N>((ac, av), (bc, bv), strides, op, &|x, y| V::acc_sub(x, y))
        }
        BinaryOp::Multiply => {
            coo_merge_with::<V, I, N>((ac, av), (bc, bv), strides, op, &|x, y| V::acc_mul(x, y))
        }
    }
}

fn coo_merge_with<V: Numeric, I: Index, const N: usize>(
    (ac, av): (&[I], &[V]),
    (bc, bv): (&[I], &[V]),
    strides: &[u64],
    op: BinaryOp,
    f: &(impl Fn(V::Acc, V::Acc) -> V::Acc + Sync),
) -> Result<(Vec<I>, Vec<V>)> {
    use rayon::prelude::*;
    let n = strides.len().max(1);
    let a = CooSide::<V, I, N>::new(ac, av, strides);
    let b = CooSide::<V, I, N>::new(bc, bv, strides);
    let (na, nb) = (a.len(), b.len());
    let union = op.visit() == Visit::Union;
    let threads = rayon::current_num_threads();
    // chunks (a_lo, a_hi, b_lo, b_hi): the larger operand cut evenly, the
    // other at the first entry not below each cut's key (never before the
    // previous cut, so that the chunks cover both operands once even when a
    // tensor built without validation is not sorted)
    let mut chunks: Vec<(usize, usize, usize, usize)> = alloc::with_capacity(1, "COO chunks")?;
    let total = na + nb;
    if threads <= 1 || total <= 2 * super::spmv::PAR_WORK {
        chunks.push((0, na, 0, nb));
    } else {
        let target = (total / (8 * threads)).max(super::spmv::PAR_WORK);
        let count = total.div_ceil(target);
        let a_leads = na >= nb;
        let (lead, other) = if a_leads { (a, b) } else { (b, a) };
        let (mut l0, mut o0) = (0usize, 0usize);
        for t in 1..=count {
            let (l1, o1) = if t == count {
                (lead.len(), other.len())
            } else {
                let l1 = (lead.len() * t / count).max(l0);
                (l1, other.lower_bound(o0, lead.keys.at(l1)))
            };
            let c = if a_leads {
                (l0, l1, o0, o1)
            } else {
                (o0, o1, l0, l1)
            };
            alloc::push(&mut chunks, c, "COO chunks")?;
            (l0, o0) = (l1, o1);
        }
    }
    let parts =
        |&(a0, a1, b0, b1): &(usize, usize, usize, usize)| (a.range(a0, a1), b.range(b0, b1));
    // room of each chunk's region
    let rooms: Vec<usize> = if union && chunks.len() > 1 {
        chunks
            .par_iter()
            .map(|c| {
                let (x, y) = parts(c);
                x.len() + y.len() - coo_common(x, y)
            })
            .collect()
    } else {
        chunks
            .iter()
            .map(|c| {
                let (x, y) = parts(c);
                if union {
                    x.len() + y.len()
                } else {
                    x.len().min(y.len()) + 1
                }
            })
            .collect()
    };
    let room: usize = rooms.iter().sum();
    let room_coords = room
        .checked_mul(n)
        .ok_or_else(|| Error::allocation("element-wise coordinates", room, n * size_of::<I>()))?;
    let mut coords = alloc::zeroed::<I>(room_coords, "element-wise coordinates")?;
    let mut values = alloc::zeroed::<V>(room, "element-wise values")?;
    // split the outputs into the chunks' regions
    let mut regions = alloc::with_capacity(chunks.len(), "COO chunks")?;
    {
        let (mut rc, mut rv) = (&mut coords[..], &mut values[..]);
        for (c, &r) in chunks.iter().zip(&rooms) {
            let (pc, tc) = std::mem::take(&mut rc).split_at_mut(r * n);
            let (pv, tv) = std::mem::take(&mut rv).split_at_mut(r);
            regions.push((parts(c), pc, pv));
            (rc, rv) = (tc, tv);
        }
    }
    let filled: Vec<(usize, bool)> = regions
        .into_par_iter()
        .map(|((x, y), oc, ov)| {
            let mut overflow = false;
            let w = if union {
                coo_union(x, y, f, (oc, ov), &mut overflow)
            } else {
                coo_intersection(x, y, f, (oc, ov), &mut overflow)
            };
            (w, overflow)
        })
        .collect();
    if filled.iter().any(|&(_, o)| o) {
        check_flags::<V>(OVERFLOW, "element-wise")?;
    }
    // the regions moved together
    let (mut total, mut start) = (0usize, 0usize);
    for (&r, &(count, _)) in rooms.iter().zip(&filled) {
        if start != total {
            coords.copy_within(start * n..(start + count) * n, total * n);
            values.copy_within(start..start + count, total);
        }
        total += count;
        start += r;
    }
    coords.truncate(total * n);
    values.truncate(total);
    if values.capacity() - total > total / 8 + 4096 {
        coords.shrink_to_fit();
        values.shrink_to_fit();
    }
    Ok((coords, values))
}

/// `a op b` for two COO tensors of one shape: a merge of their entries in
/// lexicographic order (a tensor that is not canonical is sorted and its
/// duplicates summed first); the result is a canonical row-major COO with `a`'s
/// index type. Results equal to zero are dropped.
///
/// Two canonical row-major operands (the layout that conversions, kernels and
/// [`sum_duplicates`] produce) are merged on their buffers as they lie, without
/// data-dependent branches, by their entries' row-major linear positions
/// (when the extents' product fits a `u64`): one pass on one thread, chunks
/// of entries in parallel on several, with the same result (see
/// `coo_merge`). Other operands go through a general merge.
///
/// ```
/// use arrow_sparse::kernels::elementwise::{binary_coo, sum_duplicates, BinaryOp};
/// use arrow_sparse::CooTensor;
/// let a = CooTensor::<i32, i32>::from_entries(vec![2, 2], &[(vec![1, 1], 2), (vec![0, 0], 1)])?; // not canonical
/// let b = CooTensor::<i32, i32>::from_entries(vec![2, 2], &[(vec![1, 1], 5), (vec![0, 1], 7)])?;
/// let s = binary_coo(&a, &b, BinaryOp::Add)?;
/// assert!(s.is_canonical());
/// assert_eq!((s.coords().as_ref(), s.values().as_ref()), (&[0, 0, 0, 1, 1, 1][..], &[1, 7, 7][..]));
/// assert_eq!(binary_coo(&a, &b, BinaryOp::Multiply)?.values().as_ref(), &[10]);
/// // canonical operands are merged as they lie, to the same result
/// let (ca, cb) = (sum_duplicates(&a)?, sum_duplicates(&b)?);
/// assert!(ca.is_canonical() && cb.is_canonical());
/// assert_eq!(binary_coo(&ca, &cb, BinaryOp::Add)?, s);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn binary_coo<V: Numeric, I: Index>(
    a: &CooTensor<V, I>,
    b: &CooTensor<V, I>,
    op: BinaryOp,
) -> Result<CooTensor<V, I>> {
    check_shapes(a.shape(), b.shape())?;
    let n = a.ndim();
    let row_major = |c: &CooTensor<V, I>| c.is_canonical() && c.layout() == CoordLayout::RowMajor;
    if n > 0
        && row_major(a)
        && row_major(b)
        && let Some(strides) = linear_strides(a.shape())
    {
        let x = (&a.coords()[..], &a.values()[..]);
        let y = (&b.coords()[..], &b.values()[..]);
        let (coords, values) = match n {
            1 => coo_merge::<V, I, 1>(x, y, &strides, op)?,
            2 => coo_merge::<V, I, 2>(x, y, &strides, op)?,
            3 => coo_merge::<V, I, 3>(x, y, &strides, op)?,
            _ => coo_merge::<V, I, 0>(x, y, &strides, op)?,
        };
        return CooTensor::try_new_with(
            a.shape().to_vec(),
            CoordLayout::RowMajor,
            EntryOrder::Canonical,
            coords.into(),
            values.into(),
            &TensorOptions::trusted(),
        )?
        .with_dim_names(a.dim_names().to_vec());
    }
    let (sa, sb) = (SortedCoo::new(a)?, SortedCoo::new(b)?);
    let run = |f: &mut dyn FnMut(bool, usize, V) -> bool| -> Result<bool> {
        merge::merge_sorted_entries::<V>(
            sa.len(),
            sb.len(),
            n,
            |k, d| sa.at(k, d, n).as_usize(),
            |k, d| sb.at(k, d, n).as_usize(),
            |k| sa.val(k),
            |k| sb.val(k),
            op.visit(),
            &mut |left, k, x, y| match V::from_acc(op.apply::<V>(x, y)) {
                Some(v) if v.is_zero() => Ok(true),
                Some(v) => Ok(f(left, k, v)),
                None => Err(Error::overflow(
                    "element-wise result",
                    "an element",
                    V::TYPE.name(),
                )),
            },
        )
    };
    let mut count = 0usize;
    run(&mut |_, _, _| {
        count += 1;
        true
    })?;
    let mut coords = alloc::with_capacity::<I>(count * n, "element-wise coordinates")?;
    let mut values = alloc::with_capacity::<V>(count, "element-wise values")?;
    run(&mut |left, k, v| {
        let src = if left { &sa } else { &sb };
        coords.extend((0..n).map(|d| src.at(k, d, n)));
        values.push(v);
        true
    })?;
    CooTensor::try_new_with(
        a.shape().to_vec(),
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        coords.into(),
        values.into(),
        &TensorOptions::trusted(),
    )?
    .with_dim_names(a.dim_names().to_vec())
}

// ---------------------------------------------------------------- CSF

/// Whether every node's children (and the root level) have strictly
/// increasing coordinates, so that two trees can be merged as they lie.
fn csf_sorted<V: Value, I: Index, P: Index>(t: &CsfTensor<V, I, P>) -> bool {
    let n = t.ndim();
    if !merge::strictly_increasing(&t.indices()[0]) {
        return false;
    }
    for l in 0..n - 1 {
        let (p, idx) = (&t.indptr()[l], &t.indices()[l + 1]);
        for w in p.windows(2) {
            let (a, b) = (w[0].as_usize(), w[1].as_usize());
            match idx.get(a..b) {
                Some(s) if merge::strictly_increasing(s) => {}
                _ => return false,
            }
        }
    }
    true
}

/// The output levels of a CSF merge, grown as nodes are kept.
struct CsfOut<V, I, P> {
    indptr: Vec<Vec<P>>,
    indices: Vec<Vec<I>>,
    values: Vec<V>,
}

struct CsfMerge<'a, V: Value, I: Index, P: Index> {
    a: &'a CsfTensor<V, I, P>,
    b: &'a CsfTensor<V, I, P>,
    op: BinaryOp,
    out: CsfOut<V, I, P>,
}

impl<V: Numeric, I: Index, P: Index> CsfMerge<'_, V, I, P> {
    /// Children range of a node, or an empty range for an absent side.
    fn children(t: &CsfTensor<V, I, P>, l: usize, node: Option<usize>) -> Result<(usize, usize)> {
        let Some(k) = node else { return Ok((0, 0)) };
        let p = &t.indptr()[l];
        let (lo, hi) = (
            p.get(k).map_or(usize::MAX, |x| x.as_usize()),
            p.get(k + 1).map_or(0, |x| x.as_usize()),
        );
        if lo > hi || hi > t.indices()[l + 1].len() {
            return Err(Error::invariant(
                format!("indptr[{l}]"),
                Some(k),
                "bad child range",
            ));
        }
        Ok((lo, hi))
    }

    /// Merge nodes `a` and `b` (ranges of level `l`), appending what survives.
    fn level(&mut self, l: usize, a: (usize, usize), b: (usize, usize)) -> Result<()> {
        let n = self.a.ndim();
        let (ia, ib) = (&self.a.indices()[l], &self.b.indices()[l]);
        let (mut i, mut j) = (a.0, b.0);
        let inter = self.op.visit() == Visit::Intersection;
        while i < a.1 || j < b.1 {
            let (ka, kb) = (
                (i < a.1).then(|| ia[i].as_usize()),
                (j < b.1).then(|| ib[j].as_usize()),
            );
            let (na, nb, key) = match (ka, kb) {
                (Some(x), Some(y)) if x == y => (Some(i), Some(j), x),
                (Some(x), Some(y)) if x < y => (Some(i), None, x),
                (Some(x), None) => (Some(i), None, x),
                (_, Some(y)) => (None, Some(j), y),
                (None, None) => break,
            };
            i += na.is_some() as usize;
            j += nb.is_some() as usize;
            if inter && (na.is_none() || nb.is_none()) {
                continue;
            }
            let c = if na.is_some() {
                ia[na.unwrap_or(0)]
            } else {
                ib[nb.unwrap_or(0)]
            };
            let _ = key;
            if l == n - 1 {
                let x = na.map(|k| self.a.values()[k].to_acc());
                let y = nb.map(|k| self.b.values()[k].to_acc());
                let v = V::from_acc(self.op.apply::<V>(x, y)).ok_or_else(|| {
                    Error::overflow("element-wise result", "an element", V::TYPE.name())
                })?;
                if !v.is_zero() {
                    alloc::push(&mut self.out.indices[l], c, "CSF indices")?;
                    alloc::push(&mut self.out.values, v, "CSF values")?;
                }
                continue;
            }
            let start = self.out.indices[l + 1].len();
            alloc::push(&mut self.out.indices[l], c, "CSF indices")?;
            alloc::push(&mut self.out.indptr[l], P::usize_as(start), "CSF indptr")?;
            let ca = Self::children(self.a, l, na)?;
            let cb = Self::children(self.b, l, nb)?;
            self.level(l + 1, ca, cb)?;
            if self.out.indices[l + 1].len() == start {
                // nothing survived below: drop the node
                self.out.indices[l].pop();
                self.out.indptr[l].pop();
            }
        }
        Ok(())
    }
}

/// `a op b` for two CSF tensors of one shape, as a CSF tensor with `a`'s axis
/// order: the two tries are merged level by level when every node's children
/// are sorted (as this crate and libarrow write them); a subtree that ends up
/// empty (all its results zero, or no common entries for a product) is
/// dropped. A `b` in another axis order, or trees with unsorted children, go
/// through sorted COO once.
///
/// ```
/// use arrow_sparse::kernels::elementwise::{binary_csf, BinaryOp};
/// use arrow_sparse::{Convert, CooTensor};
/// let a = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[(vec![0, 1, 1], 1.0), (vec![1, 0, 0], 2.0)])?.to_csf::<i32, i32>(&[0, 1, 2])?;
/// let b = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[(vec![1, 0, 0], -2.0), (vec![1, 1, 0], 4.0)])?.to_csf::<i32, i32>(&[0, 1, 2])?;
/// let s = binary_csf(&a, &b, BinaryOp::Add)?; // (1, 0, 0) cancels and its branch goes
/// assert_eq!(s.nnz(), 2);
/// assert_eq!((s.get(&[0, 1, 1]), s.get(&[1, 1, 0]), s.get(&[1, 0, 0])), (Some(1.0), Some(4.0), Some(0.0)));
/// assert_eq!(s.indices()[1].as_ref(), &[1, 1]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn binary_csf<V: Numeric, I: Index, P: Index>(
    a: &CsfTensor<V, I, P>,
    b: &CsfTensor<V, I, P>,
    op: BinaryOp,
) -> Result<CsfTensor<V, I, P>> {
    check_shapes(a.shape(), b.shape())?;
    let n = a.ndim();
    if a.axis_order() != b.axis_order() || !csf_sorted(a) || !csf_sorted(b) {
        let ca = AnyTensor::from(a.clone()).to_coo::<V, I>()?;
        let cb = AnyTensor::from(b.clone()).to_coo::<V, I>()?;
        let c = binary_coo(&ca, &cb, op)?;
        return super::convert::coo_to_csf::<V, I, P>(&c, a.axis_order())?
            .with_dim_names(a.dim_names().to_vec());
    }
    let mut m = CsfMerge {
        a,
        b,
        op,
        out: CsfOut {
            indptr: (0..n - 1).map(|_| Vec::new()).collect(),
            indices: (0..n).map(|_| Vec::new()).collect(),
            values: Vec::new(),
        },
    };
    m.level(0, (0, a.indices()[0].len()), (0, b.indices()[0].len()))?;
    let mut out = m.out;
    for l in 0..n - 1 {
        let end = out.indices[l + 1].len();
        let p = P::try_from_usize(end)
            .ok_or_else(|| Error::overflow("CSF indptr", end.to_string(), P::TYPE.name()))?;
        alloc::push(&mut out.indptr[l], p, "CSF indptr")?;
    }
    CsfTensor::try_new_with(
        a.shape().to_vec(),
        a.axis_order().to_vec(),
        out.indptr.into_iter().map(ScalarBuffer::from).collect(),
        out.indices.into_iter().map(ScalarBuffer::from).collect(),
        out.values.into(),
        &TensorOptions::trusted(),
    )?
    .with_dim_names(a.dim_names().to_vec())
}

// ---------------------------------------------------------------- dense

/// The elements of a dense tensor in row-major order, borrowed when packed.
fn dense_values<V: Numeric>(d: &DenseTensor<V>) -> Result<Cow<'_, [V]>> {
    if let Some(v) = row_major_values(d) {
        return Ok(Cow::Borrowed(v));
    }
    let mut out = alloc::with_capacity::<V>(d.as_any().size(), "dense operand")?;
    d.for_each(|_, v| out.push(v))?;
    Ok(Cow::Owned(out))
}

/// `a op b` for two dense tensors of one shape, element by element in
/// parallel blocks; the result is row-major (zeros included).
///
/// ```
/// use arrow_sparse::kernels::elementwise::{binary_dense, BinaryOp};
/// use arrow_sparse::DenseTensor;
/// let a = DenseTensor::<i8>::try_new(vec![3], vec![100, 2, 0].into())?;
/// let b = DenseTensor::<i8>::try_new(vec![3], vec![27, -2, 5].into())?;
/// assert_eq!(binary_dense(&a, &b, BinaryOp::Add)?.values().as_ref(), &[127, 0, 5]);
/// assert!(binary_dense(&a, &a, BinaryOp::Add).is_err()); // 200 does not fit int8
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn binary_dense<V: Numeric>(
    a: &DenseTensor<V>,
    b: &DenseTensor<V>,
    op: BinaryOp,
) -> Result<DenseTensor<V>> {
    use rayon::prelude::*;
    check_shapes(a.shape(), b.shape())?;
    let (x, y) = (dense_values(a)?, dense_values(b)?);
    let mut out = alloc::zeroed::<V>(x.len(), "element-wise result")?;
    let bad = out
        .par_chunks_mut(1 << 16)
        .zip(x.par_chunks(1 << 16).zip(y.par_chunks(1 << 16)))
        .map(|(o, (x, y))| {
            let mut bad = false;
            for (o, (&p, &q)) in o.iter_mut().zip(x.iter().zip(y)) {
                match V::from_acc(op.apply::<V>(Some(p.to_acc()), Some(q.to_acc()))) {
                    Some(v) => *o = v,
                    None => bad = true,
                }
            }
            bad
        })
        .reduce(|| false, |p, q| p | q);
    if bad {
        return Err(Error::overflow(
            "element-wise result",
            "an element",
            V::TYPE.name(),
        ));
    }
    DenseTensor::try_new(a.shape().to_vec(), out.into())?.with_dim_names(a.dim_names().to_vec())
}

/// A dense left operand with a right one of any other format: the left values
/// as accumulators, the right entries added (subtracted, or multiplied in).
fn dense_with_entries<V: Numeric>(
    a: &DenseTensor<V>,
    b: &AnyTensor,
    op: BinaryOp,
) -> Result<DenseTensor<V>> {
    let x = dense_values(a)?;
    let strides = crate::tensor::dense::row_major_strides(a.shape());
    let mut acc: Vec<V::Acc> = alloc::with_capacity(x.len(), "element-wise accumulator")?;
    match op {
        BinaryOp::Multiply => acc.resize(x.len(), V::acc_zero()),
        _ => acc.extend(x.iter().map(|v| v.to_acc())),
    }
    let mut bad = false;
    b.for_each_entry::<V>(&mut |c, v| {
        let k: usize = c.iter().zip(&strides).map(|(&i, &s)| i * s).sum();
        let Some(slot) = acc.get_mut(k) else {
            bad = true;
            return;
        };
        *slot = match op {
            BinaryOp::Add => V::acc_add(*slot, v.to_acc()),
            BinaryOp::Subtract => V::acc_sub(*slot, v.to_acc()),
            BinaryOp::Multiply => V::acc_add(*slot, V::acc_mul(x[k].to_acc(), v.to_acc())),
        };
    })?;
    if bad {
        return Err(Error::invariant(
            "element-wise operand",
            None,
            "an entry lies outside the shape",
        ));
    }
    let mut out = alloc::with_capacity::<V>(acc.len(), "element-wise result")?;
    for a in acc {
        out.push(narrow::<V>(a, "element-wise result")?);
    }
    DenseTensor::try_new(a.shape().to_vec(), out.into())?.with_dim_names(a.dim_names().to_vec())
}

// ---------------------------------------------------------------- dispatch

/// `b` in `a`'s format (the same format, CSX axis, CSF axis order, GCS / DM map
/// and storage format, index and indptr types), converted once when it is not.
pub(crate) fn like<'b>(a: &AnyTensor, b: &'b AnyTensor) -> Result<Cow<'b, AnyTensor>> {
    let fit_csx = |m: AnyCsx, x: &AnyCsx| -> Result<AnyCsx> {
        if m.indptr_type() == x.indptr_type() && m.index_type() == x.index_type() {
            return Ok(m);
        }
        AnyCsx::try_new(
            m.shape().to_vec(),
            m.axis(),
            m.indptr().cast(x.indptr_type(), "indptr")?,
            m.indices().cast(x.index_type(), "indices")?,
            m.values().clone(),
            &TensorOptions::trusted().with_dim_names(m.dim_names().to_vec()),
        )
    };
    Ok(match (a, b) {
        (AnyTensor::Dense(_), AnyTensor::Dense(_)) => Cow::Borrowed(b),
        (AnyTensor::Dense(_), _) => Cow::Owned(b.convert(Format::Dense, IndexType::Int64, None)?),
        (AnyTensor::Coo(x), AnyTensor::Coo(y)) if x.index_type() == y.index_type() => {
            Cow::Borrowed(b)
        }
        (AnyTensor::Coo(x), _) => Cow::Owned(b.convert(Format::Coo, x.index_type(), None)?),
        (AnyTensor::Csx(x), AnyTensor::Csx(y))
            if x.axis() == y.axis()
                && x.index_type() == y.index_type()
                && x.indptr_type() == y.indptr_type() =>
        {
            Cow::Borrowed(b)
        }
        (AnyTensor::Csx(x), _) => {
            let m = match b {
                AnyTensor::Csx(y) if y.index_type() == y.indptr_type() => {
                    with_index_type!(y.index_type(), J => {
                        crate::with_value_type!(y.value_type(), W => {
                            let t = y.downcast::<W, J, J>().ok_or_else(|| Error::invariant("CSX", None, "type tags disagree"))?;
                            let t = if t.axis() == x.axis() { t } else { super::convert::transpose_csx(&t)? };
                            t.as_any().clone()
                        })
                    })
                }
                _ => {
                    let to = match x.axis() {
                        CompressedAxis::Row => Format::Csr,
                        CompressedAxis::Column => Format::Csc,
                    };
                    let AnyTensor::Csx(m) = b.convert(to, x.index_type(), None)? else {
                        return Err(Error::invariant("conversion", None, "not CSX"));
                    };
                    m
                }
            };
            Cow::Owned(AnyTensor::Csx(fit_csx(m, x)?))
        }
        (AnyTensor::Csf(x), AnyTensor::Csf(y))
            if x.axis_order() == y.axis_order()
                && x.index_type() == y.index_type()
                && x.indptr_type() == y.indptr_type() =>
        {
            Cow::Borrowed(b)
        }
        (AnyTensor::Csf(x), _) => {
            let AnyTensor::Csf(m) = b.convert(Format::Csf, x.index_type(), Some(x.axis_order()))?
            else {
                return Err(Error::invariant("conversion", None, "not CSF"));
            };
            let m = if m.indptr_type() == x.indptr_type() {
                m
            } else {
                AnyCsf::try_new(
                    m.shape().to_vec(),
                    m.axis_order().to_vec(),
                    m.indptr()
                        .iter()
                        .map(|p| p.cast(x.indptr_type(), "indptr"))
                        .collect::<Result<_>>()?,
                    m.indices().to_vec(),
                    m.values().clone(),
                    &TensorOptions::trusted().with_dim_names(m.dim_names().to_vec()),
                )?
                .with_indptr_type(x.indptr_type())?
            };
            Cow::Owned(AnyTensor::Csf(m))
        }
        (AnyTensor::Gcs(x), AnyTensor::Gcs(y))
            if x.map() == y.map()
                && x.matrix().axis() == y.matrix().axis()
                && x.matrix().index_type() == y.matrix().index_type()
                && x.matrix().indptr_type() == y.matrix().indptr_type() =>
        {
            Cow::Borrowed(b)
        }
        (AnyTensor::Gcs(x), _) => {
            let AnyTensor::Gcs(g) =
                b.to_gcs(x.map().clone(), x.matrix().axis(), x.matrix().index_type())?
            else {
                return Err(Error::invariant("conversion", None, "not GCS"));
            };
            let m = fit_csx(g.matrix().clone(), x.matrix())?;
            Cow::Owned(AnyTensor::Gcs(AnyGcs::try_new(
                x.map().clone(),
                m,
                &TensorOptions::default().with_dim_names(b.dim_names().to_vec()),
            )?))
        }
        (AnyTensor::Dm(x), AnyTensor::Dm(y))
            if x.map() == y.map() && x.views().is_empty() && y.views().is_empty() =>
        {
            Cow::Borrowed(b)
        }
        (AnyTensor::Dm(x), _) => {
            Cow::Owned(b.to_dm(x.map().clone(), x.storage().format(), IndexType::Int64)?)
        }
        (AnyTensor::Level(x), AnyTensor::Level(y))
            if x.format() == y.format()
                && x.index_type() == y.index_type()
                && x.indptr_type() == y.indptr_type() =>
        {
            Cow::Borrowed(b)
        }
        (AnyTensor::Level(x), _) => {
            Cow::Owned(b.to_level(x.format(), x.index_type(), x.indptr_type())?)
        }
    })
}

/// `a op b` for two tensors of the same shape, in the left operand's format
/// (see the [module docs](self)): CSR + CSR -> CSR, CSC + CSC -> CSC, COO + COO
/// -> canonical COO, CSF + CSF -> CSF, dense -> dense, GCS / DM -> GCS / DM with
/// the left map; a right operand of another format is converted once to the
/// left one's. Results equal to zero are dropped. Integer results are checked
/// (see the module docs of [`kernels`](super)).
///
/// ```
/// use arrow_sparse::kernels::elementwise::{binary, BinaryOp};
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format};
/// let a = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 0], 1), (vec![1, 1], 2)])?;
/// let b = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![1, 1], 5), (vec![0, 1], 7)])?;
/// let csr: AnyTensor = b.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
/// let sum = binary::<i32>(&a.clone().into(), &csr, BinaryOp::Add)?; // COO + CSR -> COO
/// assert_eq!(sum.format(), Format::Coo);
/// assert_eq!(sum.to_coo::<i32, i64>()?.values().as_ref(), &[1, 7, 7]);
/// let prod = binary::<i32>(&csr, &a.into(), BinaryOp::Multiply)?; // CSR * COO -> CSR
/// assert_eq!((prod.format(), prod.nnz(), prod.get::<i32>(&[1, 1])?), (Format::Csr, 1, Some(10)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn binary<V: Numeric>(a: &AnyTensor, b: &AnyTensor, op: BinaryOp) -> Result<AnyTensor> {
    check_shapes(a.shape(), b.shape())?;
    for t in [a, b] {
        if t.value_type() != V::TYPE {
            return Err(Error::Type {
                what: "element-wise value type".into(),
                expected: V::TYPE.name().into(),
                found: t.value_type().name().into(),
            });
        }
    }
    let mismatch = || Error::invariant("element-wise operand", None, "type tags disagree");
    if let AnyTensor::Dense(x) = a {
        let x = x.downcast::<V>().ok_or_else(mismatch)?;
        return Ok(match b {
            AnyTensor::Dense(y) => {
                binary_dense(&x, &y.downcast::<V>().ok_or_else(mismatch)?, op)?.into()
            }
            _ => dense_with_entries(&x, b, op)?.into(),
        });
    }
    // a DM left operand with views is materialised once
    let a_owned;
    let a = match a {
        AnyTensor::Dm(d) if !d.views().is_empty() => {
            a_owned = a.to_dm(d.map().clone(), d.storage().format(), IndexType::Int64)?;
            &a_owned
        }
        _ => a,
    };
    let b = like(a, b)?;
    Ok(match (a, b.as_ref()) {
        (AnyTensor::Coo(x), AnyTensor::Coo(y)) => with_index_type!(x.index_type(), J => {
            let (x, y) = (x.downcast::<V, J>().ok_or_else(mismatch)?, y.downcast::<V, J>().ok_or_else(mismatch)?);
            binary_coo(&x, &y, op)?.into()
        }),
        (AnyTensor::Csx(x), AnyTensor::Csx(y)) => AnyTensor::Csx(csx_any::<V>(x, y, op)?),
        (AnyTensor::Csf(x), AnyTensor::Csf(y)) => {
            let (ux, uy) = (x.unify_index_types()?, y.unify_index_types()?);
            let r: AnyCsf = with_index_type!(ux.index_type(), J => {
                let (p, q) = (ux.downcast::<V, J, J>().ok_or_else(mismatch)?, uy.downcast::<V, J, J>().ok_or_else(mismatch)?);
                binary_csf(&p, &q, op)?.as_any().clone()
            });
            AnyTensor::Csf(restore_csf_indptr(r, x.indptr_type())?)
        }
        (AnyTensor::Gcs(x), AnyTensor::Gcs(y)) => AnyTensor::Gcs(AnyGcs::try_new(
            x.map().clone(),
            csx_any::<V>(x.matrix(), y.matrix(), op)?,
            &TensorOptions::default().with_dim_names(x.dim_names().to_vec()),
        )?),
        (AnyTensor::Level(x), AnyTensor::Level(y)) => {
            // merged as COO, then laid out in the left operand's levels again
            let (p, q): (AnyTensor, AnyTensor) = (
                AnyTensor::Level(x.clone()).to_coo::<V, i64>()?.into(),
                AnyTensor::Level(y.clone()).to_coo::<V, i64>()?.into(),
            );
            binary::<V>(&p, &q, op)?.to_level(x.format(), x.index_type(), x.indptr_type())?
        }
        (AnyTensor::Dm(x), AnyTensor::Dm(y)) => {
            let storage = binary::<V>(x.storage(), y.storage(), op)?;
            AnyTensor::Dm(AnyDm::try_new(
                x.map().clone(),
                storage,
                &TensorOptions::default().with_dim_names(x.dim_names().to_vec()),
            )?)
        }
        _ => return Err(mismatch()),
    })
}

/// CSX merge of two type-erased matrices of the same types (indptr converted to
/// the indices' type for the kernel when they differ, and back).
fn csx_any<V: Numeric>(x: &AnyCsx, y: &AnyCsx, op: BinaryOp) -> Result<AnyCsx> {
    let mismatch = || Error::invariant("element-wise operand", None, "type tags disagree");
    let (ux, uy) = (x.unify_index_types()?, y.unify_index_types()?);
    let r: AnyCsx = with_index_type!(ux.index_type(), J => {
        let (p, q) = (ux.downcast::<V, J, J>().ok_or_else(mismatch)?, uy.downcast::<V, J, J>().ok_or_else(mismatch)?);
        binary_csx(&p, &q, op)?.as_any().clone()
    });
    if r.indptr_type() == x.indptr_type() && r.index_type() == x.index_type() {
        return Ok(r);
    }
    AnyCsx::try_new(
        r.shape().to_vec(),
        r.axis(),
        r.indptr().cast(x.indptr_type(), "indptr")?,
        r.indices().cast(x.index_type(), "indices")?,
        r.values().clone(),
        &TensorOptions::trusted().with_dim_names(r.dim_names().to_vec()),
    )
}

fn restore_csf_indptr(r: AnyCsf, want: IndexType) -> Result<AnyCsf> {
    if r.indptr_type() == want {
        return Ok(r);
    }
    AnyCsf::try_new(
        r.shape().to_vec(),
        r.axis_order().to_vec(),
        r.indptr()
            .iter()
            .map(|p| p.cast(want, "indptr"))
            .collect::<Result<_>>()?,
        r.indices().to_vec(),
        r.values().clone(),
        &TensorOptions::trusted().with_dim_names(r.dim_names().to_vec()),
    )?
    .with_indptr_type(want)
}

/// Visit every position stored in `a` or in `b` (which must be in `a`'s format,
/// see [`like`]) with both operands' sums there, in the operands' own orders;
/// stops, returning `false`, when `f` does. CSR / CSC rows run in parallel.
pub(crate) fn zip_entries<V: Numeric>(
    a: &AnyTensor,
    b: &AnyTensor,
    f: &(dyn Fn(Option<V::Acc>, Option<V::Acc>) -> bool + Sync),
) -> Result<bool> {
    let mismatch = || Error::invariant("operand", None, "type tags disagree");
    match (a, b) {
        (AnyTensor::Dense(x), AnyTensor::Dense(y)) => {
            let (x, y) = (
                x.downcast::<V>().ok_or_else(mismatch)?,
                y.downcast::<V>().ok_or_else(mismatch)?,
            );
            let (x, y) = (dense_values(&x)?, dense_values(&y)?);
            Ok(x.iter()
                .zip(y.iter())
                .all(|(p, q)| f(Some(p.to_acc()), Some(q.to_acc()))))
        }
        (AnyTensor::Coo(x), AnyTensor::Coo(y)) => with_index_type!(x.index_type(), J => {
            let (x, y) = (x.downcast::<V, J>().ok_or_else(mismatch)?, y.downcast::<V, J>().ok_or_else(mismatch)?);
            let (sa, sb) = (SortedCoo::new(&x)?, SortedCoo::new(&y)?);
            let n = x.ndim();
            merge::merge_sorted_entries::<V>(
                sa.len(), sb.len(), n,
                |k, d| sa.at(k, d, n).as_usize(),
                |k, d| sb.at(k, d, n).as_usize(),
                |k| sa.val(k),
                |k| sb.val(k),
                Visit::Union,
                &mut |_, _, p, q| Ok(f(p, q)),
            )
        }),
        (AnyTensor::Csx(x), AnyTensor::Csx(y)) => csx_zip::<V>(x, y, f),
        (AnyTensor::Gcs(x), AnyTensor::Gcs(y)) => csx_zip::<V>(x.matrix(), y.matrix(), f),
        (AnyTensor::Dm(x), AnyTensor::Dm(y)) => {
            let sb = like(x.storage(), y.storage())?;
            zip_entries::<V>(x.storage(), &sb, f)
        }
        (AnyTensor::Csf(_), AnyTensor::Csf(_)) | (AnyTensor::Level(_), AnyTensor::Level(_)) => {
            let (x, y) = (a.to_coo::<V, i64>()?, b.to_coo::<V, i64>()?);
            zip_entries::<V>(&x.into(), &y.into(), f)
        }
        _ => Err(mismatch()),
    }
}

fn csx_zip<V: Numeric>(
    x: &AnyCsx,
    y: &AnyCsx,
    f: &(dyn Fn(Option<V::Acc>, Option<V::Acc>) -> bool + Sync),
) -> Result<bool> {
    let mismatch = || Error::invariant("operand", None, "type tags disagree");
    let (ux, uy) = (x.unify_index_types()?, y.unify_index_types()?);
    with_index_type!(ux.index_type(), J => {
        let (p, q) = (ux.downcast::<V, J, J>().ok_or_else(mismatch)?, uy.downcast::<V, J, J>().ok_or_else(mismatch)?);
        let pa = CsxParts { ptr: p.indptr(), idx: p.indices(), vals: p.values() };
        let pb = CsxParts { ptr: q.indptr(), idx: q.indices(), vals: q.values() };
        let stop = std::sync::atomic::AtomicBool::new(false);
        let leaf = |lo: usize, hi: usize, _: &mut [()]| -> u8 {
            let mut scratch = Scratch::new();
            for r in lo..hi {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    return 0;
                }
                let (Some((a0, a1)), Some((b0, b1))) = (pa.range(r), pb.range(r)) else {
                    return BAD_PTR;
                };
                match merge::merge_row::<V, J, J>(
                    &pa.idx[a0..a1], &pa.vals[a0..a1], &pb.idx[b0..b1], &pb.vals[b0..b1],
                    Visit::Union, &mut scratch, &mut |_, s, t| f(s, t),
                ) {
                    Ok(true) => {}
                    Ok(false) => {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        return 0;
                    }
                    Err(_) => return NO_MEMORY,
                }
            }
            0
        };
        let mut rows = vec![(); p.indptr().len().saturating_sub(1)];
        let flags = super::spmv::par_rows(p.indptr(), pa.nnz(), &mut rows, 1, &leaf);
        check_flags::<V>(flags, "allclose")?;
        Ok(!stop.into_inner())
    })
}

// ---------------------------------------------------------------- values

/// The stored values of `t` in storage order (a GCS tensor's matrix values, a DM
/// tensor's storage values): the buffer [`with_values`] replaces.
///
/// ```
/// use arrow_sparse::kernels::elementwise::stored_values;
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![3], &[(vec![2], 7), (vec![0], 5)])?.into();
/// assert_eq!(stored_values(&t).as_typed::<i32>().map(|v| v.to_vec()), Some(vec![7, 5]));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn stored_values(t: &AnyTensor) -> &crate::ValueBuffer {
    match t {
        AnyTensor::Dense(d) => d.values(),
        AnyTensor::Coo(c) => c.values(),
        AnyTensor::Csx(c) => c.values(),
        AnyTensor::Csf(c) => c.values(),
        AnyTensor::Gcs(g) => g.matrix().values(),
        AnyTensor::Dm(d) => stored_values(d.storage()),
        AnyTensor::Level(l) => l.values(),
    }
}

/// The same tensor, same format, shape, dimension names and index buffers
/// (shared, not copied), holding `values` instead of its stored values (any
/// value type; one per stored value of [`stored_values`], in the same order,
/// else [`Error::Length`]). The structure is not validated again: it is the
/// one `t` already holds.
///
/// ```
/// use arrow_sparse::kernels::elementwise::with_values;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, ValueBuffer, ValueType};
/// let csr: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.5), (vec![1, 0], 2.5)])?
///     .to_csx::<i32, i32>(CompressedAxis::Row)?
///     .into();
/// let t = with_values(&csr, ValueBuffer::from(arrow_buffer::ScalarBuffer::from(vec![10u8, 20])))?;
/// assert_eq!((t.value_type(), t.get::<u8>(&[1, 0])?), (ValueType::UInt8, Some(20)));
/// assert!(with_values(&csr, ValueBuffer::from(arrow_buffer::ScalarBuffer::from(vec![1u8]))).is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn with_values(t: &AnyTensor, values: crate::ValueBuffer) -> Result<AnyTensor> {
    let stored = stored_values(t).len();
    if values.len() != stored {
        return Err(Error::Length {
            buffer: "values".into(),
            expected: stored,
            found: values.len(),
        });
    }
    Ok(match t {
        AnyTensor::Dense(d) => AnyTensor::Dense(d.with_values(values)?),
        AnyTensor::Coo(c) => AnyTensor::Coo(AnyCoo::try_new(
            c.shape().to_vec(),
            c.layout(),
            EntryOrder::from(c.is_canonical()),
            c.coords().clone(),
            values,
            &TensorOptions::trusted().with_dim_names(c.dim_names().to_vec()),
        )?),
        AnyTensor::Csx(c) => AnyTensor::Csx(with_csx_values(c, values)?),
        AnyTensor::Csf(c) => AnyTensor::Csf(
            AnyCsf::try_new(
                c.shape().to_vec(),
                c.axis_order().to_vec(),
                c.indptr().to_vec(),
                c.indices().to_vec(),
                values,
                &TensorOptions::trusted().with_dim_names(c.dim_names().to_vec()),
            )?
            .with_indptr_type(c.indptr_type())?,
        ),
        AnyTensor::Gcs(g) => AnyTensor::Gcs(AnyGcs::try_new(
            g.map().clone(),
            with_csx_values(g.matrix(), values)?,
            &TensorOptions::default().with_dim_names(g.dim_names().to_vec()),
        )?),
        AnyTensor::Dm(d) => AnyTensor::Dm(
            AnyDm::try_new(
                d.map().clone(),
                with_values(d.storage(), values)?,
                &TensorOptions::default(),
            )?
            .with_views(d.views().clone())?
            .with_dim_names(d.dim_names().to_vec())?,
        ),
        AnyTensor::Level(l) => AnyTensor::Level(l.with_values(values)?),
    })
}

/// The position in [`stored_values`] of the one stored value that holds the
/// element of `t` at logical `coords`. GCS and DM tensors go down their maps and
/// views to the storage (so the position of a DM element is one in its
/// storage's values); COO, CSX and CSF search their levels
/// ([`LevelView::positions`](crate::tensor::levels::LevelView::positions)); a
/// dense tensor computes it from its strides.
///
/// Errors: [`Error::Shape`] when `coords` is outside the shape;
/// [`Error::NotStored`] when no stored value holds the element (`count` 0) or
/// several do (duplicates).
///
/// ```
/// use arrow_sparse::kernels::elementwise::stored_position;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Error};
/// // [[0, 1, 0], [2, 0, 3]] as CSC: values in column order [2, 1, 3]
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
/// let csc: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Column)?.into();
/// assert_eq!(stored_position(&csc, &[0, 1])?, 1);
/// assert!(matches!(stored_position(&csc, &[0, 0]), Err(Error::NotStored { count: 0, .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn stored_position(t: &AnyTensor, coords: &[usize]) -> Result<usize> {
    position_in(t, coords, &mut None)
}

/// [`stored_position`], with `leaf` holding the level view of the COO / CSX /
/// CSF tensor the walk ends on once it is built. For a given `t` the walk always
/// ends on the same tensor, so a batch of lookups builds that view (an O(nnz)
/// pass for COO) once.
fn position_in(t: &AnyTensor, coords: &[usize], leaf: &mut Option<LevelView>) -> Result<usize> {
    let shape = t.shape();
    if coords.len() != shape.len() || coords.iter().zip(shape).any(|(c, d)| c >= d) {
        return Err(Error::shape(
            "element coordinates",
            format!("{} coordinates inside the shape {shape:?}", shape.len()),
            format!("{coords:?}"),
        ));
    }
    let mut below = |inner: &AnyTensor, at: &[usize]| {
        position_in(inner, at, leaf).map_err(|e| match e {
            Error::NotStored { count, .. } => Error::NotStored {
                coordinates: coords.to_vec(),
                count,
            },
            e => e,
        })
    };
    let found = match t {
        AnyTensor::Dense(d) => {
            // inside the shape, so inside the buffer the strides were checked against
            return d.element_offset(coords).ok_or_else(|| {
                Error::invariant("dense tensor", None, "an element offset outside the buffer")
            });
        }
        AnyTensor::Gcs(g) => {
            let mut r = [0usize; 2];
            g.map().reduce(coords, &mut r)?;
            return below(&AnyTensor::Csx(g.matrix().clone()), &r);
        }
        AnyTensor::Dm(d) => {
            let base = d.views().forward(coords)?;
            let mut r = vec![0usize; d.map().reduced_ndim()];
            d.map().reduce(&base, &mut r)?;
            return below(d.storage(), &r);
        }
        other => {
            let view = match leaf {
                Some(v) => v,
                None => leaf.insert(other.levels()?),
            };
            view.positions(coords)
        }
    };
    match found[..] {
        [p] => Ok(p),
        _ => Err(Error::NotStored {
            coordinates: coords.to_vec(),
            count: found.len(),
        }),
    }
}

/// Write values at stored elements: the same tensor (format, index buffers
/// shared, not copied) with `value` at each `(coords, value)` of `writes`, later
/// writes winning. Through a DM tensor the write goes down its views and maps
/// into the storage's values, so every view position that reads the same stored
/// value (a broadcast, a repeated `take` index) shows it.
///
/// What can be written in place is what is stored: every element of a dense
/// tensor, and the stored elements of a sparse one, each stored once. An element
/// that is not stored is [`Error::NotStored`] with `count` 0: adding it changes
/// the structure, so rebuild (for example
/// [`to_coo`](crate::Convert::to_coo), add the entry, convert back). An
/// element stored several times (duplicates) is `NotStored` with its count:
/// canonicalize first. Nothing is written when any write fails.
///
/// Tensors are immutable (their buffers may be shared, received or
/// memory-mapped), so the values buffer is copied once per call, whatever the
/// number of writes: batch them.
///
/// ```
/// use arrow_sparse::kernels::elementwise::set_values;
/// use arrow_sparse::{AnyDm, AnyTensor, CooTensor, DmTensor, Error, Format, IndexType, dims::DimMap};
/// // [[0, 1, 0], [2, 0, 3]] stored as CSR, seen through a transpose and a take
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 2], 3.0)])?;
/// let dm: AnyDm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?.into();
/// let view = AnyTensor::Dm(dm.transpose(0, 1)?.take(1, &[1, 1])?); // 3 x 2: columns are row 1 twice
/// let w = set_values(&view, &[(vec![2, 0], 30.0)])?;
/// assert_eq!((w.get::<f64>(&[2, 0])?, w.get::<f64>(&[2, 1])?), (Some(30.0), Some(30.0)));
/// // the element (1, 1) of the view, (1, 1) of the matrix, is not stored
/// assert!(matches!(set_values(&view, &[(vec![1, 1], 5.0)]), Err(Error::NotStored { count: 0, .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn set_values<V: Value>(t: &AnyTensor, writes: &[(Vec<usize>, V)]) -> Result<AnyTensor> {
    let vals = stored_values(t);
    let stored = vals.as_typed::<V>().ok_or_else(|| Error::Type {
        what: "value type".into(),
        expected: vals.data_type().name().into(),
        found: V::TYPE.name().into(),
    })?;
    let mut leaf = None;
    let positions = writes
        .iter()
        .map(|(c, _)| position_in(t, c, &mut leaf))
        .collect::<Result<Vec<_>>>()?;
    let mut values = alloc::with_capacity::<V>(stored.len(), "written values")?;
    values.extend_from_slice(stored);
    for (&p, (_, v)) in positions.iter().zip(writes) {
        if let Some(slot) = values.get_mut(p) {
            *slot = *v;
        }
    }
    with_values(
        t,
        crate::buffer::ValueBuffer::from(ScalarBuffer::from(values)),
    )
}

fn with_csx_values(m: &AnyCsx, values: crate::ValueBuffer) -> Result<AnyCsx> {
    AnyCsx::try_new(
        m.shape().to_vec(),
        m.axis(),
        m.indptr().clone(),
        m.indices().clone(),
        values,
        &TensorOptions::trusted().with_dim_names(m.dim_names().to_vec()),
    )
}

/// The same tensor, same format and index buffers (shared, not copied), with
/// every stored value replaced by `f(value)` (a new value type is allowed).
/// GCS and DM tensors map their storage. `V` must be the tensor's value type.
/// ([`with_values`] with the mapped [`stored_values`].)
///
/// ```
/// use arrow_sparse::kernels::elementwise::map_values;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format, ValueType};
/// let csr: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 3), (vec![1, 0], -4)])?
///     .to_csx::<i32, i32>(CompressedAxis::Row)?
///     .into();
/// let m = map_values::<i32, f32>(&csr, |v| v as f32 * 0.5)?;
/// assert_eq!((m.format(), m.value_type()), (Format::Csr, ValueType::Float32));
/// assert_eq!((m.get::<f32>(&[0, 1])?, m.get::<f32>(&[1, 0])?), (Some(1.5), Some(-2.0)));
/// assert!(map_values::<i64, i64>(&csr, |v| v).is_err()); // the values are int32
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn map_values<V: Value, W: Value>(
    t: &AnyTensor,
    f: impl Fn(V) -> W + Sync,
) -> Result<AnyTensor> {
    use rayon::prelude::*;
    let vals = stored_values(t);
    let v = vals.as_typed::<V>().ok_or_else(|| Error::Type {
        what: "value type".into(),
        expected: V::TYPE.name().into(),
        found: vals.data_type().name().into(),
    })?;
    // fresh zero pages (no write pass before the real one), filled in chunks
    // by a plain loop that the compiler vectorises; through rayon's
    // `collect_into_vec` the loop took one element at a time, reloading `f`'s
    // captures (measured: `scale` of a CSR matrix with 10^7 `f64` values, one
    // thread, 15.5-15.9 ms that way, 11.3-12.4 ms this way)
    let mut out = alloc::zeroed::<W>(v.len(), "mapped values")?;
    out.par_chunks_mut(MAP_CHUNK)
        .zip(v.par_chunks(MAP_CHUNK))
        .for_each(|(o, i)| o.iter_mut().zip(i).for_each(|(o, &x)| *o = f(x)));
    with_values(t, crate::buffer::ValueBuffer::from(ScalarBuffer::from(out)))
}

/// Elements [`map_values`] hands to a task at a time.
const MAP_CHUNK: usize = 1 << 16;

/// Multiply every stored value by `alpha` (checked for integers).
///
/// ```
/// use arrow_sparse::kernels::elementwise::scale;
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<i8, i64>::from_entries(vec![2], &[(vec![0], 60)])?.into();
/// assert_eq!(scale::<i8>(&t, 2)?.get::<i8>(&[0])?, Some(120));
/// assert!(scale::<i8>(&t, 3).is_err()); // 180 does not fit int8
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn scale<V: Numeric>(t: &AnyTensor, alpha: V) -> Result<AnyTensor> {
    let overflow = std::sync::atomic::AtomicBool::new(false);
    let out = map_values::<V, V>(t, |x| {
        V::from_acc(V::acc_mul(x.to_acc(), alpha.to_acc())).unwrap_or_else(|| {
            overflow.store(true, std::sync::atomic::Ordering::Relaxed);
            V::ZERO
        })
    })?;
    if overflow.into_inner() {
        return Err(Error::overflow(
            "scale",
            format!("a value times {alpha:?}"),
            V::TYPE.name(),
        ));
    }
    Ok(out)
}

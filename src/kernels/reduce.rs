//! Reductions, straight from each format's buffers: sums over all elements or
//! along any set of axes, and equality with a tolerance.
//!
//! * [`sum_all`] folds the values buffer (blocked, eight partial sums that
//!   vectorise, blocks in parallel and combined in a fixed tree).
//! * [`sum_axes`] reads CSR / CSC / COO / CSF / GCS / DM buffers in place: CSR
//!   row sums from indptr ranges, column sums by a scatter into a dense
//!   accumulator, COO and CSF by a walk that computes each entry's place in the
//!   result level by level (level tensors of any level types through one generic
//!   co-iteration over the levels). The result is dense when the kept elements are few
//!   enough, sparse otherwise (the rule is on [`SumOutput::Auto`]; the caller
//!   may choose).
//! * [`allclose`] merges the two operands in their own orders (CSR row by row,
//!   CSC column by column, canonical COO entry by entry, dense element by
//!   element); operands of different formats are brought to the left one's
//!   format once.
//!
//! Sums accumulate per the rule of [`kernels`](super): integers in a checked wide
//! accumulator narrowed once per result, floats in their own type. Results do
//! not depend on the number of threads.
//!
//! ```
//! use arrow_sparse::kernels::reduce::{allclose, sum_axes};
//! use arrow_sparse::{AnyTensor, CooTensor, DenseTensor, Format};
//! let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 0], 1.0), (vec![1, 0], 2.0)])?.into();
//! let column_sums = sum_axes::<f64>(&t, &[0])?; // shape [2], dense (2 elements)
//! assert_eq!(column_sums.format(), Format::Dense);
//! assert_eq!((column_sums.get::<f64>(&[0])?, column_sums.get::<f64>(&[1])?), (Some(3.0), Some(0.0)));
//! let dense: AnyTensor = DenseTensor::<f64>::try_new(vec![2, 2], vec![1.0, 0.0, 2.0, 1e-12].into())?.into();
//! assert!(allclose::<f64>(&t, &dense, 0.0, 1e-9)?);
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::{EntryOrder, TensorOptions};
use arrow_buffer::ArrowNativeType;

use super::{Numeric, alloc, narrow};
use crate::error::{Error, Result};
use crate::tensor::{
    AnyCoo, AnyCsf, AnyCsx, AnyLevel, AnyTensor, CooTensor, CoordLayout, DenseTensor,
};
use crate::types::Index;
use crate::with_index_type;

/// Leaves of the summation tree (elements).
const LEAF: usize = 1 << 15;

/// The sum of `v` in the accumulator: blocks of [`LEAF`] elements summed by
/// [`Numeric::sum_slice`], combined in a binary tree whose shape depends only
/// on the length (so the result is the same on any number of threads); the two
/// halves of a node run in parallel.
pub(crate) fn tree_sum<V: Numeric>(v: &[V]) -> V::Acc {
    if v.len() <= LEAF {
        return V::sum_slice(v);
    }
    let leaves = v.len().div_ceil(LEAF);
    let (a, b) = v.split_at(leaves / 2 * LEAF);
    let (x, y) = if rayon::current_num_threads() > 1 {
        rayon::join(|| tree_sum(a), || tree_sum(b))
    } else {
        (tree_sum(a), tree_sum(b))
    };
    V::acc_add(x, y)
}

fn type_mismatch<V: Numeric>(found: crate::ValueType) -> Error {
    Error::Type {
        what: "value type".into(),
        expected: V::TYPE.name().into(),
        found: found.name().into(),
    }
}

/// The typed values buffer of `t` when its stored values are exactly its
/// elements' contributions to a total (not a DM tensor with views, not a dense
/// tensor with strides that skip or repeat elements).
fn plain_values<V: Numeric>(t: &AnyTensor) -> Result<Option<&[V]>> {
    if t.value_type() != V::TYPE {
        return Err(type_mismatch::<V>(t.value_type()));
    }
    let buf = match t {
        AnyTensor::Dense(d) => {
            let Some(dt) = d.values().as_typed::<V>() else {
                return Ok(None);
            };
            if !d.is_row_major() {
                return Ok(None);
            }
            let start = d.offset();
            return Ok(start
                .checked_add(d.size())
                .and_then(|end| dt.get(start..end)));
        }
        AnyTensor::Coo(c) => c.values(),
        AnyTensor::Csx(c) => c.values(),
        AnyTensor::Csf(c) => c.values(),
        AnyTensor::Gcs(g) => g.matrix().values(),
        AnyTensor::Level(l) => l.values(),
        AnyTensor::Dm(d) => {
            if !d.views().is_empty() {
                return Ok(None);
            }
            return plain_values::<V>(d.storage());
        }
    };
    Ok(buf.as_typed::<V>().map(|b| &b[..]))
}

/// The sum of every element (stored duplicates included), accumulated per the
/// rule of [`kernels`](super): a fold over the values buffer where it lies, in
/// parallel blocks combined in a fixed order. DM tensors with views and dense
/// tensors with irregular strides are visited element by element.
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
    let acc = match plain_values::<V>(t)? {
        Some(v) => tree_sum(v),
        None => {
            let mut acc = V::acc_zero();
            t.for_each_entry::<V>(&mut |_, v| acc = V::acc_add(acc, v.to_acc()))?;
            acc
        }
    };
    narrow::<V>(acc, "sum")
}

/// What [`sum_axes_with`] returns.
///
/// ```
/// use arrow_sparse::kernels::reduce::{sum_axes_with, SumOutput};
/// use arrow_sparse::{AnyTensor, CooTensor, Format};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![100_000, 3], &[(vec![7, 1], 2.0)])?.into();
/// let rows = sum_axes_with::<f64>(&t, &[1], SumOutput::Auto)?; // 100000 kept elements, 1 entry
/// assert_eq!(rows.format(), Format::Coo);
/// let rows = sum_axes_with::<f64>(&t, &[1], SumOutput::Dense)?;
/// assert_eq!((rows.format(), rows.get::<f64>(&[7])?), (Format::Dense, Some(2.0)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SumOutput {
    /// Dense when the kept elements number at most `max(4 * nnz, 65536)`
    /// (their product of extents; a full reduction always), else sparse: the
    /// dense result then costs at most a few times the operand's own values,
    /// and a hypersparse operand never asks for a huge dense result.
    #[default]
    Auto,
    /// A dense row-major tensor over the kept dimensions (allocated fallibly).
    Dense,
    /// A canonical COO tensor with int64 coordinates over the kept dimensions:
    /// one entry per position that holds at least one stored entry (a sum of
    /// zero stays).
    Sparse,
}

/// Sum along `axes` (any set of distinct dimensions); the result keeps the other
/// dimensions in increasing order, dense or sparse by the rule of
/// [`SumOutput::Auto`]. Summing along every axis gives a dense tensor of shape
/// `[1]`. See [`sum_axes_with`].
///
/// ```
/// use arrow_sparse::kernels::reduce::sum_axes;
/// use arrow_sparse::{AnyTensor, CooTensor, Format};
/// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(
///     vec![2, 3, 2], &[(vec![0, 1, 0], 1), (vec![1, 1, 1], 2), (vec![1, 2, 0], 4)])?.into();
/// let s = sum_axes::<i32>(&t, &[0, 2])?; // keeps dimension 1
/// assert_eq!((s.format(), s.shape()), (Format::Dense, &[3usize][..]));
/// assert_eq!((s.get::<i32>(&[0])?, s.get::<i32>(&[1])?, s.get::<i32>(&[2])?), (Some(0), Some(3), Some(4)));
/// let all = sum_axes::<i32>(&t, &[2, 1, 0])?;
/// assert_eq!((all.shape(), all.get::<i32>(&[0])?), (&[1usize][..], Some(7)));
/// assert!(sum_axes::<i32>(&t, &[1, 1]).is_err()); // axes must be distinct
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn sum_axes<V: Numeric>(t: &AnyTensor, axes: &[usize]) -> Result<AnyTensor> {
    sum_axes_with::<V>(t, axes, SumOutput::Auto)
}

/// Where the entries of one tensor land in a result over the kept dimensions.
struct Kept {
    /// Kept dimensions, increasing.
    dims: Vec<usize>,
    /// Per dimension of the operand: its row-major stride in the result, or 0
    /// when summed away.
    stride: Vec<usize>,
    /// The result's shape.
    shape: Vec<usize>,
    /// Elements of the result (`None`: more than `usize` holds).
    size: Option<usize>,
}

impl Kept {
    fn new(shape: &[usize], axes: &[usize]) -> Result<Kept> {
        let n = shape.len();
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
        let dims: Vec<usize> = (0..n).filter(|&d| !drop[d]).collect();
        let kshape: Vec<usize> = dims.iter().map(|&d| shape[d]).collect();
        let mut stride = vec![0usize; n];
        let mut size = Some(1usize);
        for &d in dims.iter().rev() {
            stride[d] = size.unwrap_or(0);
            size = size.and_then(|s| s.checked_mul(shape[d]));
        }
        Ok(Kept {
            dims,
            stride,
            shape: kshape,
            size,
        })
    }

    /// The position of `coords` in the result (row-major over the kept dims).
    #[inline(always)]
    fn key(&self, coords: &[usize]) -> usize {
        coords.iter().zip(&self.stride).map(|(&c, &s)| c * s).sum()
    }
}

/// Sum along `axes`, with the result's form chosen by `output` (see
/// [`SumOutput`]). Reads each format's buffers in place:
///
/// * CSR / CSC: sums along the compressed dimension's entries (row sums of a
///   CSR) come from indptr ranges, in parallel; sums along the other one are a
///   scatter into a dense accumulator (or, for a sparse result, a sort of the
///   indices);
/// * COO, CSF, GCS, DM and level tensors: each entry's place in the result is
///   computed from its coordinates (CSF and level tensors: level by level down
///   the tree, so every node's part is computed once; level tensors of any level
///   types and order through one co-iteration), then accumulated densely or
///   sorted. Stored zeros of a level tensor's dense levels are entries of a
///   sparse result (sums of zero stay, as for any stored zero).
///
/// Summing along no axis returns the tensor's elements with duplicates summed.
///
/// ```
/// use arrow_sparse::kernels::reduce::{sum_axes_with, SumOutput};
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format};
/// // [[1, 0, 2], [0, 0, 3]] as CSR
/// let csr: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 0], 1.0), (vec![0, 2], 2.0), (vec![1, 2], 3.0)])?
///     .to_csx::<i32, i32>(CompressedAxis::Row)?
///     .into();
/// let cols = sum_axes_with::<f64>(&csr, &[0], SumOutput::Sparse)?; // column sums, sparse
/// assert_eq!((cols.format(), cols.nnz()), (Format::Coo, 2));
/// assert_eq!((cols.get::<f64>(&[0])?, cols.get::<f64>(&[2])?), (Some(1.0), Some(5.0)));
/// let rows = sum_axes_with::<f64>(&csr, &[1], SumOutput::Dense)?;
/// assert_eq!(rows.get::<f64>(&[1])?, Some(3.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn sum_axes_with<V: Numeric>(
    t: &AnyTensor,
    axes: &[usize],
    output: SumOutput,
) -> Result<AnyTensor> {
    if t.value_type() != V::TYPE {
        return Err(type_mismatch::<V>(t.value_type()));
    }
    let kept = Kept::new(t.shape(), axes)?;
    if kept.dims.is_empty() {
        let s = sum_all::<V>(t)?;
        return Ok(DenseTensor::<V>::try_new(vec![1], vec![s].into())?.into());
    }
    let dense = match output {
        SumOutput::Dense => true,
        SumOutput::Sparse => false,
        SumOutput::Auto => kept.size.is_some_and(|s| s <= (4 * t.nnz()).max(1 << 16)),
    };
    let names: Vec<String> = kept
        .dims
        .iter()
        .map(|&d| t.dim_names()[d].clone())
        .collect();
    let out = if dense {
        let size = kept
            .size
            .ok_or_else(|| Error::allocation("dense sum", usize::MAX, size_of::<V>()))?;
        let values = dense_sums::<V>(t, &kept, size)?;
        AnyTensor::from(DenseTensor::<V>::try_new(
            kept.shape.clone(),
            values.into(),
        )?)
    } else {
        AnyTensor::from(sparse_sums::<V>(t, &kept)?)
    };
    out.with_dim_names(names)
}

/// A dense result of `size` elements, filled by `f` on accumulators: the output
/// itself for float64 / float32, a wide buffer narrowed once otherwise.
fn dense_accumulate<V: Numeric>(
    size: usize,
    f: impl FnOnce(&mut [V::Acc]) -> Result<()>,
) -> Result<Vec<V>> {
    let mut out = alloc::zeroed::<V>(size, "dense sum")?;
    if let Some(acc) = V::as_acc_mut(&mut out) {
        f(acc)?;
        return Ok(out);
    }
    let mut acc = alloc::filled(size, V::acc_zero(), "sum accumulator")?;
    f(&mut acc)?;
    for (o, &a) in out.iter_mut().zip(&acc) {
        *o = narrow::<V>(a, "sum")?;
    }
    Ok(out)
}

fn internal(what: &str) -> Error {
    Error::invariant(what, None, "type tags disagree")
}

/// An index past its bound (a tensor built without validation).
fn out_of_range(what: &str) -> Error {
    Error::invariant(
        format!("{what} indices"),
        None,
        "an index is not below its dimension (the tensor was built without validation)",
    )
}

fn bad_indptr() -> Error {
    Error::invariant(
        "indptr",
        None,
        "indptr decreases or exceeds nnz (the tensor was built without validation)",
    )
}

fn dense_sums<V: Numeric>(t: &AnyTensor, kept: &Kept, size: usize) -> Result<Vec<V>> {
    match t {
        AnyTensor::Csx(m) => csx_dense_sums::<V>(m, kept, size),
        AnyTensor::Coo(c) => dense_accumulate::<V>(size, |acc| coo_scatter::<V>(c, kept, acc)),
        AnyTensor::Csf(c) => dense_accumulate::<V>(size, |acc| {
            csf_walk::<V>(c, kept, &mut |k, v| match acc.get_mut(k) {
                Some(s) => {
                    *s = V::acc_add(*s, v.to_acc());
                    true
                }
                None => false,
            })
        }),
        AnyTensor::Level(l) => dense_accumulate::<V>(size, |acc| {
            level_walk::<V>(l, kept, &mut |k, v| match acc.get_mut(k) {
                Some(s) => {
                    *s = V::acc_add(*s, v.to_acc());
                    true
                }
                None => false,
            })
        }),
        _ => dense_accumulate::<V>(size, |acc| {
            let mut bad = false;
            t.for_each_entry::<V>(&mut |c, v| match acc.get_mut(kept.key(c)) {
                Some(s) => *s = V::acc_add(*s, v.to_acc()),
                None => bad = true,
            })?;
            if bad {
                return Err(out_of_range("sum"));
            }
            Ok(())
        }),
    }
}

/// CSR / CSC sums: along the minor dimension (row sums of a CSR) from indptr
/// ranges, in parallel; along the major one by a scatter of the indices.
fn csx_dense_sums<V: Numeric>(m: &AnyCsx, kept: &Kept, size: usize) -> Result<Vec<V>> {
    let (major, _) = m.axis().dims();
    let m = m.unify_index_types()?;
    let vals = &m
        .values()
        .as_typed::<V>()
        .ok_or_else(|| internal("CSX values"))?[..];
    with_index_type!(m.index_type(), J => {
        let ptr = &m.indptr().as_typed::<J>().ok_or_else(|| internal("CSX indptr"))?[..];
        let idx = &m.indices().as_typed::<J>().ok_or_else(|| internal("CSX indices"))?[..];
        let nnz = vals.len().min(idx.len());
        if kept.dims == [major] {
            // one sum per indptr range
            let mut out = alloc::zeroed::<V>(size, "dense sum")?;
            let leaf = |lo: usize, _hi: usize, ys: &mut [V]| -> u8 {
                let mut f = 0u8;
                for (r, y) in ys.iter_mut().enumerate() {
                    let (a, b) = (ptr[lo + r].as_usize(), ptr[lo + r + 1].as_usize());
                    if a > b || b > nnz {
                        f |= 1;
                        continue;
                    }
                    match V::from_acc(V::sum_slice(&vals[a..b])) {
                        Some(v) => *y = v,
                        None => f |= 2,
                    }
                }
                f
            };
            return match super::spmv::par_rows(ptr, nnz, &mut out, 1, &leaf) {
                0 => Ok(out),
                f if f & 1 != 0 => Err(bad_indptr()),
                _ => Err(Error::overflow("sum", "an output element", V::TYPE.name())),
            };
        }
        // sums along the major dimension: scatter the indices
        dense_accumulate::<V>(size, |acc| {
            // an index past the accumulator (an unvalidated tensor) ends the
            // scatter and is reported; cheaper than clamping (see `spmv::row_dot`)
            let add = |acc: &mut [V::Acc], j: J, v: V| match acc.get_mut(j.as_usize()) {
                Some(s) => {
                    *s = V::acc_add(*s, v.to_acc());
                    true
                }
                None => false,
            };
            let entries = |a: usize, b: usize| idx[a..b].iter().zip(&vals[a..b]);
            // an accumulator larger than half the level-2 cache is prefetched
            // ahead, as CSC SpMV's scatter, but for the last entries, which
            // run plain (`spmv::look_ahead`)
            let pf = super::spmv::prefetches(acc);
            let (ok, cut) = match super::spmv::look_ahead(&idx[..nnz], 1, (0, nnz)) {
                Some((ahead, cut)) if pf => {
                    let ok = entries(0, cut).zip(ahead).all(|((&j, &v), &p)| {
                        crate::buffer::prefetch_at_l2(acc, p.as_usize());
                        add(acc, j, v)
                    });
                    (ok, cut)
                }
                _ => (true, 0),
            };
            if !(ok && entries(cut, nnz).all(|(&j, &v)| add(acc, j, v))) {
                return Err(out_of_range("sum"));
            }
            if ptr.windows(2).any(|w| w[0].as_usize() > w[1].as_usize()) {
                return Err(bad_indptr());
            }
            Ok(())
        })
    })
}

/// The COO entries' keys, or an error for a coordinate out of range.
fn coo_keys<I: Index>(
    c: &[I],
    layout: CoordLayout,
    nnz: usize,
    shape: &[usize],
    kept: &Kept,
    mut f: impl FnMut(usize, usize) -> bool,
) -> Result<()> {
    let n = shape.len();
    let mut ok = true;
    let key = |k: usize| -> Option<usize> {
        let mut key = 0usize;
        let mut fine = true;
        for (d, (&s, &ext)) in kept.stride.iter().zip(shape).enumerate() {
            let x = match layout {
                CoordLayout::RowMajor => c[k * n + d],
                CoordLayout::ColumnMajor => c[d * nnz + k],
            }
            .as_usize();
            fine &= x < ext;
            key += x.min(ext.saturating_sub(1)) * s;
        }
        fine.then_some(key)
    };
    for k in 0..nnz {
        match key(k) {
            Some(kk) => ok &= f(k, kk),
            None => ok = false,
        }
    }
    if !ok {
        return Err(out_of_range("COO"));
    }
    Ok(())
}

fn coo_scatter<V: Numeric>(c: &AnyCoo, kept: &Kept, acc: &mut [V::Acc]) -> Result<()> {
    let vals = &c
        .values()
        .as_typed::<V>()
        .ok_or_else(|| internal("COO values"))?[..];
    with_index_type!(c.index_type(), J => {
        let coords = &c.coords().as_typed::<J>().ok_or_else(|| internal("COO coordinates"))?[..];
        coo_keys(coords, c.layout(), c.nnz(), c.shape(), kept, |k, key| match acc.get_mut(key) {
            Some(s) => {
                *s = V::acc_add(*s, vals[k].to_acc());
                true
            }
            None => false,
        })
    })
}

/// Walk a CSF tree: `f(key, value)` for every leaf, where the key of a node is
/// its parent's plus its own coordinate times its dimension's stride in the
/// result (computed once per node). `f` returns false for a key it cannot take.
fn csf_walk<V: Numeric>(
    c: &AnyCsf,
    kept: &Kept,
    f: &mut dyn FnMut(usize, V) -> bool,
) -> Result<()> {
    let c = c.unify_index_types()?;
    let vals = &c
        .values()
        .as_typed::<V>()
        .ok_or_else(|| internal("CSF values"))?[..];
    with_index_type!(c.index_type(), J => {
        let mut ptr: Vec<&[J]> = Vec::new();
        let mut idx: Vec<&[J]> = Vec::new();
        for b in c.indptr() {
            ptr.push(&b.as_typed::<J>().ok_or_else(|| internal("CSF indptr"))?[..]);
        }
        for b in c.indices() {
            idx.push(&b.as_typed::<J>().ok_or_else(|| internal("CSF indices"))?[..]);
        }
        let order = c.axis_order();
        let shape = c.shape();
        let n = shape.len();
        #[allow(clippy::too_many_arguments)]
        fn go<V: Numeric, J: Index>(
            l: usize, lo: usize, hi: usize, base: usize,
            ptr: &[&[J]], idx: &[&[J]], vals: &[V], order: &[usize], shape: &[usize],
            kept: &Kept, f: &mut dyn FnMut(usize, V) -> bool,
        ) -> Result<()> {
            let n = shape.len();
            let (d, ext, stride) = (order[l], shape[order[l]], kept.stride[order[l]]);
            let _ = d;
            for node in lo..hi {
                let x = idx[l].get(node).ok_or_else(|| Error::invariant("CSF tree", Some(node), "node past its level"))?.as_usize();
                if x >= ext {
                    return Err(out_of_range("CSF"));
                }
                let key = base + x * stride;
                if l == n - 1 {
                    let v = *vals.get(node).ok_or_else(|| Error::invariant("CSF tree", Some(node), "leaf without a value"))?;
                    if !f(key, v) {
                        return Err(out_of_range("CSF"));
                    }
                } else {
                    let (a, b) = (ptr[l][node].as_usize(), ptr[l][node + 1].as_usize());
                    if a > b || b > idx[l + 1].len() {
                        return Err(Error::invariant(format!("indptr[{l}]"), Some(node), "bad child range"));
                    }
                    go(l + 1, a, b, key, ptr, idx, vals, order, shape, kept, f)?;
                }
            }
            Ok(())
        }
        if n > 0 {
            go(0, 0, idx[0].len(), 0, &ptr, &idx, vals, order, shape, kept, f)?;
        }
        Ok(())
    })
}

/// A level tensor's stored values with their keys in the result, by the one
/// level co-iteration ([`co_iterate`](super::co_iterate)): the key of a node is
/// its parent's plus its coordinate times its dimension's stride in the result,
/// computed once per node whatever the level types and order. `f` returns false
/// for a key it cannot take.
fn level_walk<V: Numeric>(
    l: &AnyLevel,
    kept: &Kept,
    f: &mut dyn FnMut(usize, V) -> bool,
) -> Result<()> {
    let order = l.format().axis_order();
    let n = order.len();
    // part[k + 1]: the key of the current node at level k
    let mut part = vec![0usize; n + 1];
    let mut ok = true;
    super::co_iterate::<V>(l, &mut |lvl, fresh, v| {
        for k in fresh.min(n)..n {
            part[k + 1] = part[k] + lvl[k] * kept.stride[order[k]];
        }
        ok &= f(part[n], v);
    })?;
    if !ok {
        return Err(out_of_range("level tensor"));
    }
    Ok(())
}

/// A sparse result: every entry's (key, value), sorted stably by key (a radix
/// sort when the keys are few enough, else a merge sort), runs summed.
fn sparse_sums<V: Numeric>(t: &AnyTensor, kept: &Kept) -> Result<CooTensor<V, i64>> {
    let nnz = t.nnz();
    let Some(size) = kept.size else {
        return sparse_sums_wide::<V>(t, kept);
    };
    let mut pairs: Vec<(usize, V)> = alloc::with_capacity(nnz, "sum entries")?;
    let mut push = |k: usize, v: V| {
        if pairs.len() < pairs.capacity() {
            pairs.push((k, v));
            true
        } else {
            false
        }
    };
    match t {
        AnyTensor::Coo(c) => {
            let vals = &c
                .values()
                .as_typed::<V>()
                .ok_or_else(|| internal("COO values"))?[..];
            with_index_type!(c.index_type(), J => {
                let coords = &c.coords().as_typed::<J>().ok_or_else(|| internal("COO coordinates"))?[..];
                coo_keys(coords, c.layout(), c.nnz(), c.shape(), kept, |k, key| push(key, vals[k]))?
            })
        }
        AnyTensor::Csf(c) => csf_walk::<V>(c, kept, &mut push)?,
        AnyTensor::Level(l) => level_walk::<V>(l, kept, &mut push)?,
        _ => {
            let mut bad = false;
            t.for_each_entry::<V>(&mut |c, v| bad |= !push(kept.key(c), v))?;
            if bad {
                return Err(out_of_range("sum"));
            }
        }
    }
    if size <= 4 * pairs.len() + (1 << 16) {
        // counting sort on the key, stable
        let mut counts = alloc::filled(size + 1, 0usize, "sum histogram")?;
        for &(k, _) in &pairs {
            counts[k + 1] += 1;
        }
        for i in 1..=size {
            counts[i] += counts[i - 1];
        }
        let mut sorted: Vec<(usize, V)> = alloc::filled(pairs.len(), (0, V::ZERO), "sum entries")?;
        for &(k, v) in &pairs {
            sorted[counts[k]] = (k, v);
            counts[k] += 1;
        }
        pairs = sorted;
    } else {
        pairs.sort_by_key(|&(k, _)| k); // stable
    }
    let m = kept.dims.len();
    let mut coords: Vec<i64> = alloc::with_capacity(pairs.len() * m, "sum coordinates")?;
    let mut values: Vec<V> = alloc::with_capacity(pairs.len(), "sum values")?;
    let mut i = 0;
    while i < pairs.len() {
        let key = pairs[i].0;
        let mut acc = V::acc_zero();
        while i < pairs.len() && pairs[i].0 == key {
            acc = V::acc_add(acc, pairs[i].1.to_acc());
            i += 1;
        }
        let mut rem = key;
        let start = coords.len();
        coords.resize(start + m, 0);
        for (slot, &ext) in coords[start..].iter_mut().zip(&kept.shape).rev() {
            *slot = (rem % ext.max(1)) as i64;
            rem /= ext.max(1);
        }
        values.push(narrow::<V>(acc, "sum")?);
    }
    CooTensor::try_new_with(
        kept.shape.clone(),
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        coords.into(),
        values.into(),
        &TensorOptions::trusted(),
    )
}

/// A sparse result whose kept extents multiply past `usize`: sort the kept
/// coordinates themselves.
fn sparse_sums_wide<V: Numeric>(t: &AnyTensor, kept: &Kept) -> Result<CooTensor<V, i64>> {
    let m = kept.dims.len();
    let mut coords: Vec<i64> = alloc::with_capacity(t.nnz() * m, "sum coordinates")?;
    let mut values: Vec<V> = alloc::with_capacity(t.nnz(), "sum values")?;
    t.for_each_entry::<V>(&mut |c, v| {
        coords.extend(kept.dims.iter().map(|&d| c[d] as i64));
        values.push(v);
    })?;
    let projected = CooTensor::try_new_with(
        kept.shape.clone(),
        CoordLayout::RowMajor,
        EntryOrder::Any,
        coords.into(),
        values.into(),
        &TensorOptions::trusted(),
    )?;
    super::elementwise::sum_duplicates(&projected)
}

// ---------------------------------------------------------------- allclose

/// Whether two tensors of any formats have the same shape and every element
/// differs by at most `atol + rtol * |b|` (absent elements count as zero; NaN
/// equals nothing). Duplicates are summed and differences taken in the
/// accumulator ([`Numeric::Acc`]), so an int8 `100 - (-100)` is 200, not an
/// overflow. Operands are compared in their own orders: CSR row by row and CSC
/// column by column (rows in parallel), canonical COO entry by entry, dense
/// element by element; a right operand of another format (or index type, CSX
/// axis, CSF axis order, GCS / DM map) is first brought to the left one's
/// format.
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
    for t in [a, b] {
        if t.value_type() != V::TYPE {
            return Err(type_mismatch::<V>(t.value_type()));
        }
    }
    let close = move |p: V::Acc, q: V::Acc| {
        let d = V::acc_to_f64(V::acc_sub(p, q)).abs();
        // NaN (also an overflowed integer accumulator) is close to nothing
        d <= atol + rtol * V::acc_to_f64(q).abs()
    };
    let b = super::elementwise::like(a, b)?;
    super::elementwise::zip_entries::<V>(a, &b, &|p, q| {
        close(p.unwrap_or(V::acc_zero()), q.unwrap_or(V::acc_zero()))
    })
}

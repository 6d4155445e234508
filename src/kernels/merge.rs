//! Merges of two sparse operands in their own storage order, shared by the
//! element-wise operations and `allclose`.
//!
//! A CSR row (or CSC column) whose indices are strictly increasing is merged
//! as it lies. One that is not (indices in any order, or repeated) is first
//! copied into a small scratch buffer, sorted stably and its duplicates summed
//! in the accumulator, so that every position is visited once with its total.

use std::cmp::Ordering;

use super::{Numeric, alloc};
use crate::error::Result;
use crate::types::Index;

/// The positions a merge visits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Visit {
    /// Every position stored in either operand.
    Union,
    /// Positions stored in both.
    Intersection,
}

/// One operand's entries along one row: `len` positions with increasing keys.
trait Side<V: Numeric> {
    fn len(&self) -> usize;
    fn key(&self, k: usize) -> usize;
    fn val(&self, k: usize) -> V::Acc;
}

/// Sorted, unique indices as they lie.
struct Raw<'a, I, V> {
    idx: &'a [I],
    vals: &'a [V],
}

impl<V: Numeric, I: Index> Side<V> for Raw<'_, I, V> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.idx.len().min(self.vals.len())
    }
    #[inline(always)]
    fn key(&self, k: usize) -> usize {
        self.idx[k].as_usize()
    }
    #[inline(always)]
    fn val(&self, k: usize) -> V::Acc {
        self.vals[k].to_acc()
    }
}

/// A row sorted and summed into scratch.
struct Sorted<'a, A>(&'a [(usize, A)]);

impl<V: Numeric> Side<V> for Sorted<'_, V::Acc> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn key(&self, k: usize) -> usize {
        self.0[k].0
    }
    #[inline(always)]
    fn val(&self, k: usize) -> V::Acc {
        self.0[k].1
    }
}

/// Whether the indices strictly increase (as unsigned positions).
#[inline]
pub(crate) fn strictly_increasing<I: Index>(idx: &[I]) -> bool {
    idx.windows(2).all(|w| w[0].as_usize() < w[1].as_usize())
}

/// Sort `(idx, vals)` stably by index into `out`, summing repeated indices in
/// the accumulator.
fn sort_row<V: Numeric, I: Index>(
    idx: &[I],
    vals: &[V],
    out: &mut Vec<(usize, V::Acc)>,
) -> Result<()> {
    out.clear();
    alloc::reserve(out, idx.len(), "row scratch")?;
    out.extend(
        idx.iter()
            .zip(vals)
            .map(|(&j, &v)| (j.as_usize(), v.to_acc())),
    );
    out.sort_by_key(|&(j, _)| j); // stable
    let mut w = 0;
    for r in 0..out.len() {
        if w > 0 && out[w - 1].0 == out[r].0 {
            out[w - 1].1 = V::acc_add(out[w - 1].1, out[r].1);
        } else {
            out[w] = out[r];
            w += 1;
        }
    }
    out.truncate(w);
    Ok(())
}

/// Merge two sorted sides, calling `f(key, a, b)` per visited position in
/// increasing key order; stops (returning false) when `f` does.
#[inline(always)]
fn merge_sides<V: Numeric>(
    a: &impl Side<V>,
    b: &impl Side<V>,
    visit: Visit,
    f: &mut impl FnMut(usize, Option<V::Acc>, Option<V::Acc>) -> bool,
) -> bool {
    let (na, nb) = (a.len(), b.len());
    let (mut i, mut j) = (0, 0);
    if visit == Visit::Intersection {
        while i < na && j < nb {
            let (ka, kb) = (a.key(i), b.key(j));
            match ka.cmp(&kb) {
                Ordering::Less => i += 1,
                Ordering::Greater => j += 1,
                Ordering::Equal => {
                    if !f(ka, Some(a.val(i)), Some(b.val(j))) {
                        return false;
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        return true;
    }
    while i < na && j < nb {
        let (ka, kb) = (a.key(i), b.key(j));
        let go = match ka.cmp(&kb) {
            Ordering::Less => {
                i += 1;
                f(ka, Some(a.val(i - 1)), None)
            }
            Ordering::Greater => {
                j += 1;
                f(kb, None, Some(b.val(j - 1)))
            }
            Ordering::Equal => {
                i += 1;
                j += 1;
                f(ka, Some(a.val(i - 1)), Some(b.val(j - 1)))
            }
        };
        if !go {
            return false;
        }
    }
    while i < na {
        if !f(a.key(i), Some(a.val(i)), None) {
            return false;
        }
        i += 1;
    }
    while j < nb {
        if !f(b.key(j), None, Some(b.val(j))) {
            return false;
        }
        j += 1;
    }
    true
}

/// Scratch for rows that are not sorted.
pub(crate) struct Scratch<A> {
    a: Vec<(usize, A)>,
    b: Vec<(usize, A)>,
}

impl<A> Scratch<A> {
    pub(crate) fn new() -> Self {
        Scratch {
            a: Vec::new(),
            b: Vec::new(),
        }
    }
}

/// Merge one row of each operand (indices in any order; see the module docs),
/// calling `f(index, a, b)` per visited position in increasing index order.
/// Returns `Ok(false)` when `f` stopped the merge.
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_row<V: Numeric, I: Index, J: Index>(
    ai: &[I],
    av: &[V],
    bi: &[J],
    bv: &[V],
    visit: Visit,
    scratch: &mut Scratch<V::Acc>,
    f: &mut impl FnMut(usize, Option<V::Acc>, Option<V::Acc>) -> bool,
) -> Result<bool> {
    let (sa, sb) = (strictly_increasing(ai), strictly_increasing(bi));
    let (ra, rb) = (Raw { idx: ai, vals: av }, Raw { idx: bi, vals: bv });
    Ok(match (sa, sb) {
        (true, true) => merge_sides::<V>(&ra, &rb, visit, f),
        (false, true) => {
            sort_row(ai, av, &mut scratch.a)?;
            merge_sides::<V>(&Sorted(&scratch.a), &rb, visit, f)
        }
        (true, false) => {
            sort_row(bi, bv, &mut scratch.b)?;
            merge_sides::<V>(&ra, &Sorted(&scratch.b), visit, f)
        }
        (false, false) => {
            sort_row(ai, av, &mut scratch.a)?;
            sort_row(bi, bv, &mut scratch.b)?;
            merge_sides::<V>(&Sorted(&scratch.a), &Sorted(&scratch.b), visit, f)
        }
    })
}

/// Merge two lexicographically sorted, duplicate-free entry lists of `n`
/// coordinates each (`ca(k, d)`, `cb(k, d)`), calling `f(from, k, a, b)` per
/// visited position, where `from` says whose coordinates `k` indexes (`true`:
/// the left operand's).
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_sorted_entries<V: Numeric>(
    na: usize,
    nb: usize,
    n: usize,
    ca: impl Fn(usize, usize) -> usize,
    cb: impl Fn(usize, usize) -> usize,
    va: impl Fn(usize) -> V::Acc,
    vb: impl Fn(usize) -> V::Acc,
    visit: Visit,
    f: &mut impl FnMut(bool, usize, Option<V::Acc>, Option<V::Acc>) -> Result<bool>,
) -> Result<bool> {
    let cmp = |i: usize, j: usize| {
        for d in 0..n {
            match ca(i, d).cmp(&cb(j, d)) {
                Ordering::Equal => continue,
                o => return o,
            }
        }
        Ordering::Equal
    };
    let (mut i, mut j) = (0, 0);
    while i < na && j < nb {
        let go = match cmp(i, j) {
            Ordering::Less => {
                i += 1;
                visit == Visit::Intersection || f(true, i - 1, Some(va(i - 1)), None)?
            }
            Ordering::Greater => {
                j += 1;
                visit == Visit::Intersection || f(false, j - 1, None, Some(vb(j - 1)))?
            }
            Ordering::Equal => {
                i += 1;
                j += 1;
                f(true, i - 1, Some(va(i - 1)), Some(vb(j - 1)))?
            }
        };
        if !go {
            return Ok(false);
        }
    }
    if visit == Visit::Union {
        for k in i..na {
            if !f(true, k, Some(va(k)), None)? {
                return Ok(false);
            }
        }
        for k in j..nb {
            if !f(false, k, None, Some(vb(k)))? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

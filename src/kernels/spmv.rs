//! Sparse matrix-vector (SpMV) and matrix-matrix (SpMM) products, reading the
//! tensors' buffers in place.
//!
//! Three forms of each product:
//!
//! * `y = A x` into a new vector ([`spmv`], [`spmv_csx`], [`spmv_coo`],
//!   [`spmm_csx`] ...): the result is allocated fallibly, so a tensor that
//!   declares a huge extent gets [`Error::Allocation`], never an abort;
//! * `y = A x` into a caller's slice ([`spmv_into`], [`spmv_csx_into`],
//!   [`spmm_into`] ...): nothing is allocated for float64 / float32 values, so an
//!   iterative solver allocates nothing per iteration;
//! * the BLAS-style `y = alpha A x + beta y` ([`spmv_scaled_into`],
//!   [`spmm_scaled_into`]); as in BLAS, `beta = 0` overwrites `y` without reading
//!   it (a NaN there does not propagate).
//!
//! CSR rows run in parallel (ranges split where they halve the entries, so
//! power-law rows balance); every row is one sum in storage order, so the result
//! does not depend on the number of threads. CSC SpMV and unsorted COO scatter
//! on one thread; a canonical COO runs row ranges in parallel (SpMV and SpMM),
//! and CSC SpMM splits the rows of `C` between threads. Integer values accumulate
//! in the checked wide accumulator of [`kernels`](super) and narrow once per
//! output element; floats accumulate in their own type (`f16` in `f32`). When a
//! call fails, a caller's output slice holds unspecified values.
//!
//! ```
//! use arrow_sparse::kernels::spmv::{spmv_coo, spmv_into, spmv_scaled_into};
//! use arrow_sparse::{AnyTensor, CooTensor};
//! let a = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 3), (vec![1, 0], -1), (vec![0, 1], 1)])?;
//! assert_eq!(spmv_coo(&a, &[10, 100])?, vec![400, -10]); // duplicates add
//! let a: AnyTensor = a.into();
//! let mut y = [0; 2];
//! spmv_into(&a, &[10, 100], &mut y)?;
//! assert_eq!(y, [400, -10]);
//! spmv_scaled_into(2, &a, &[10, 100], -1, &mut y)?; // y = 2 A x - y
//! assert_eq!(y, [400, -10]);
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use super::{Numeric, alloc, row_major_values};
use crate::error::{Error, Result};
use crate::tensor::{
    AnyCoo, AnyCsx, AnyDm, AnyLevel, AnyTensor, CompressedAxis, CooTensor, CoordLayout, CsxMatrix,
    DenseTensor, GcsTensor,
};
use crate::types::Index;
use crate::with_index_type;

/// A range of work this small (entries + rows) runs on one task.
pub(crate) const PAR_WORK: usize = 1 << 15;

// Problems a kernel found, as bits, turned into one error at the end.
/// An index not below its extent (a tensor built without validation).
const OOB: u8 = 1;
/// An integer result that does not fit the value type.
const OVERFLOW: u8 = 2;
/// An indptr that decreases or exceeds nnz (a tensor built without validation).
const BAD_PTR: u8 = 4;
/// Row coordinates of a COO flagged canonical that are not sorted.
const UNSORTED: u8 = 8;

fn check_flags<V: Numeric>(flags: u8, what: &str) -> Result<()> {
    if flags & BAD_PTR != 0 {
        return Err(Error::invariant(
            "indptr",
            None,
            "indptr decreases or exceeds nnz (the tensor was built without validation)",
        ));
    }
    if flags & UNSORTED != 0 {
        return Err(Error::invariant(
            "COO canonical flag",
            None,
            "row coordinates are not sorted (the tensor was built without validation)",
        ));
    }
    if flags & OOB != 0 {
        return Err(Error::invariant(
            format!("{what} indices"),
            None,
            "an index is not below its dimension (the tensor was built without validation)",
        ));
    }
    if flags & OVERFLOW != 0 {
        return Err(Error::overflow(
            format!("{what} sum"),
            "an output element",
            V::TYPE.name(),
        ));
    }
    Ok(())
}

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

/// `alpha` and `beta` of `y = alpha A x + beta y`, or `None` for `y = A x`.
type Scale<V> = Option<(V, V)>;

/// `alpha * acc + beta * old`, narrowed; `beta = 0` ignores `old` (BLAS).
#[inline(always)]
fn finish<V: Numeric>(acc: V::Acc, old: V, scale: Scale<V>) -> Option<V> {
    match scale {
        None => V::from_acc(acc),
        Some((alpha, beta)) => {
            let a = V::acc_mul(alpha.to_acc(), acc);
            if beta.is_zero() {
                V::from_acc(a)
            } else {
                V::from_acc(V::acc_add(a, V::acc_mul(beta.to_acc(), old.to_acc())))
            }
        }
    }
}

/// `beta * y` (zero when `beta = 0`, or when there is no scale) as the start of
/// a scatter.
#[inline(always)]
fn start<V: Numeric>(old: V, scale: Scale<V>) -> V::Acc {
    match scale {
        Some((_, beta)) if !beta.is_zero() => V::acc_mul(beta.to_acc(), old.to_acc()),
        _ => V::acc_zero(),
    }
}

/// The multiplier applied to every product of a scatter (`alpha`, or one).
#[inline(always)]
fn alpha_acc<V: Numeric>(scale: Scale<V>) -> V::Acc {
    scale.map_or(V::acc_one(), |(a, _)| a.to_acc())
}

/// One CSR row: `sum(values[k] * x[indices[k]])` over the row's entries
/// `a..b` (of the whole `idx` / `vals`) in storage order. An index past the end
/// of `x` (possible only in a tensor built without validation) sets `bad` and
/// ends the row (the caller reports the error, so the partial sum is never
/// returned). The check is a compare and a branch that is never taken on valid
/// data; clamping the index instead (`x[j.min(len - 1)]`, with the largest index
/// kept for one check after the loop) costs two conditional moves and a
/// loop-carried maximum per entry, and measured 1.1-1.5x the time of this loop
/// (standalone, 10^7 entries, one thread). With `PF`, each entry also
/// prefetches the element of `x` that the entry [`AHEAD`] places further on
/// reads (see there).
#[inline(always)]
fn row_dot<V: Numeric, I: Index, const PF: bool>(
    idx: &[I],
    vals: &[V],
    (a, b): (usize, usize),
    x: &[V],
    bad: &mut bool,
) -> V::Acc {
    let mut acc = V::acc_zero();
    let mut step = |j: I, v: V| match x.get(j.as_usize()) {
        Some(&xj) => {
            acc = V::madd(acc, v, xj);
            true
        }
        None => {
            *bad = true;
            false
        }
    };
    let entries = idx[a..b].iter().zip(&vals[a..b]);
    match ahead_of(idx, a, b).filter(|_| PF) {
        Some(ahead) => {
            for ((&j, &v), &p) in entries.zip(ahead) {
                crate::buffer::prefetch_at_l2(x, p.as_usize());
                if !step(j, v) {
                    break;
                }
            }
        }
        None => {
            for (&j, &v) in entries {
                if !step(j, v) {
                    break;
                }
            }
        }
    }
    acc
}

/// The indices [`AHEAD`] places past entries `a..b`, when all of them exist:
/// the loops of SpMV CSR's gathers and CSC's scatters read them beside their
/// own entries, with no test per entry (1.0-1.8 ms less than a test per entry,
/// the setting of the measurement at [`prefetch_at`](crate::buffer::prefetch_at)).
/// Entries within [`AHEAD`] of the end are not prefetched: their targets were
/// asked for or are being read already.
#[inline(always)]
pub(crate) fn ahead_of<I>(idx: &[I], a: usize, b: usize) -> Option<&[I]> {
    idx.get(a.saturating_add(AHEAD)..b.saturating_add(AHEAD))
}

/// The look-ahead of a long run of entries `lo..hi`, each with `w` indices in
/// `idx`: `(ahead, cut)`, where the entries `lo..cut` are those whose entry
/// [`AHEAD`] places further on exists, and `ahead` holds that entry's indices
/// for each of them (`w` per entry). A loop reads `ahead` beside its own
/// entries `lo..cut`, with no test per entry (see [`ahead_of`]), then runs
/// `cut..hi` plain. `None` when no entry of the run has one (all plain).
#[inline(always)]
pub(crate) fn look_ahead<I>(
    idx: &[I],
    w: usize,
    (lo, hi): (usize, usize),
) -> Option<(&[I], usize)> {
    let w = w.max(1);
    let cut = hi.min((idx.len() / w).saturating_sub(AHEAD));
    if lo >= cut {
        return None;
    }
    // lo < cut <= idx.len() / w - AHEAD: nothing below overflows
    Some((idx.get((lo + AHEAD) * w..(cut + AHEAD) * w)?, cut))
}

/// How many entries ahead the single-element gathers and scatters of SpMV and
/// the column sums prefetch their targets: the element at index
/// `idx[k + AHEAD]` is asked for while entry `k` is computed (rows of SpMM and
/// MTTKRP: [`AHEAD_ROWS`]). The indices of a
/// matrix with millions of columns scatter these reads over a vector far larger
/// than the caches, so each one waits for memory (150-330 ns on the 2-core
/// EPYC of `benches/RESULTS.md`, whose share of the L3 was 2-4 MiB) and the
/// out-of-order window, cut at every row end by a mispredicted loop exit, keeps
/// only a few of them in flight. A distance of 128 entries covers that latency
/// at a few nanoseconds per entry; measured 48 and 128 both 2.4-2.9x faster than
/// none, 16 only 1.5-1.7x (10^7 entries, 10^6 columns, one thread, best of 15).
/// With the target in cache the prefetch costs an index load and a hint per
/// entry: 10% of SpMV's time with a 256 KiB `x` (2^15 columns), so SpMV's
/// gathers (CSR, COO) and scatters (CSC, COO in no row order) and the column
/// sums skip it when their target fits in half the level-2 cache
/// ([`prefetches`]; the column sums with a 256 KiB accumulator: 12.8-15.5 ms
/// against 13.9-16.4 ms with the prefetch, 10^7 entries, one thread, 2-core
/// Xeon), and a COO whose rows are in order never prefetches its output (read
/// forward). The distance is a count of entries, not a size: it depends on
/// the memory latency, not on the cache sizes. Single elements are prefetched into the
/// level-2 cache only ([`prefetch_indexed`]; COO's into the level-1 cache, in
/// [`coo_entries`]).
pub(crate) const AHEAD: usize = 128;

/// How many entries ahead the row gathers and scatters of SpMM and MTTKRP (a
/// row of `w > 1` elements per entry, [`ahead`]) prefetch. Such an entry does
/// `w` multiply-adds and a row's worth of loads and stores, so fewer entries
/// cover the same latency, and farther ahead is slower, not just useless: CSR
/// SpMM with 10^7 entries and a `B` of 10^6 rows in memory, one thread, took
/// at 8 / 16 / 24 / 32 / 128 entries ahead (ms, 10^6 x 10^6 uniform rows):
/// 174 / 178 / 159 / 256 / 265 for 8 columns, 278 / 267 / 268 / 372 / 378 for
/// 16, 421 / 421 / 426 / 482 / 489 for 32, and 977-1104 at any distance for
/// 64 (2-core EPYC, 1 MiB L2, 32 MiB L3). The step between 24 and 32 is
/// there for rows of one cache line (8 columns) as for two (16); it is not
/// explained. A single element per entry (SpMV's gather) shows none: from
/// 16 to 256 entries ahead, 81-87 ms with a 64 MB vector in memory.
pub(crate) const AHEAD_ROWS: usize = 16;

/// The prefetch distance for targets of `w` elements per entry: [`AHEAD`]
/// for single elements, [`AHEAD_ROWS`] for rows.
#[inline(always)]
pub(crate) fn ahead(w: usize) -> usize {
    if w == 1 { AHEAD } else { AHEAD_ROWS }
}

/// Whether gathers from or scatters into `target` prefetch (see [`AHEAD`]):
/// when it is larger than half this core's level-2 cache (private to the core,
/// so not shared with other programs as the last level is). CSR SpMV then
/// times its first rows both ways and keeps the faster ([`prefetch_trial`]):
/// whether a larger target is served by the last-level cache or by memory
/// is not known from the sizes.
pub(crate) fn prefetches<T>(target: &[T]) -> bool {
    size_of_val(target) > crate::cache::cache_sizes().l2 / 2
}

/// How much of a row (SpMM's rows of `B` or `C`) is prefetched ahead: four
/// cache lines, a whole row of up to 32 `f64`; the hardware prefetcher follows
/// the rest of a wider row once its reads start.
const PREFETCH_ROW_BYTES: usize = 256;

/// Prefetch the `w` elements `target[idx[k + ahead(w)] * w..][..w]` (nothing
/// past the end of `idx`; see [`prefetch_indexed`] and [`ahead`]).
#[inline(always)]
pub(crate) fn prefetch_ahead<T, I: Index>(target: &[T], idx: &[I], k: usize, w: usize) {
    prefetch_indexed(target, idx, k.wrapping_add(ahead(w)), 0, w);
}

/// Prefetch the `w` elements `target[(idx[p] - off) * w..][..w]` (nothing when
/// `p` is out of bounds; a row out of bounds is not prefetched, a single
/// element's address is not checked), or their first [`PREFETCH_ROW_BYTES`]
/// bytes for wide rows. A single element goes to the level-2 cache only
/// ([`prefetch_at_l2`](crate::buffer::prefetch_at_l2)), rows to the level-1
/// cache.
#[inline(always)]
fn prefetch_indexed<T, I: Index>(target: &[T], idx: &[I], p: usize, off: usize, w: usize) {
    if w == 1 {
        return prefetch_element(target, idx, p, off);
    }
    if let Some(&j) = idx.get(p) {
        let at = j.as_usize().wrapping_sub(off);
        let bytes = w.saturating_mul(size_of::<T>()).min(PREFETCH_ROW_BYTES);
        crate::buffer::prefetch_run(target, at.saturating_mul(w), bytes);
    }
}

/// Prefetch the element `target[idx[p] - off]` into the level-2 cache only
/// ([`prefetch_at_l2`](crate::buffer::prefetch_at_l2); nothing when `p` is out
/// of bounds; the element's address is not checked, a prefetch cannot fault).
/// COO SpMV's gathers and scatters take the level-1 cache instead
/// ([`prefetch_at`](crate::buffer::prefetch_at), in [`coo_entries`]): they ran
/// slower with the level-2 hint (`int64` coordinates, 10^7 entries, one
/// thread: 28.3-31.7 ms -> 32.2-34.1 ms, where CSR's gathers gained 10-15%).
#[inline(always)]
fn prefetch_element<T, I: Index>(target: &[T], idx: &[I], p: usize, off: usize) {
    if let Some(&j) = idx.get(p) {
        crate::buffer::prefetch_at_l2(target, j.as_usize().wrapping_sub(off));
    }
}

/// The entries `ptr[r]..ptr[r + 1]` of row `r`, or `None` when indptr is bad.
#[inline(always)]
fn range<P: Index>(ptr: &[P], r: usize, nnz: usize) -> Option<(usize, usize)> {
    entries(ptr[r], ptr[r + 1], nnz)
}

/// The entries `a..b` of a row whose pointers are `a` and `b`, or `None` when
/// they decrease or point past the `nnz` entries (a bad indptr).
#[inline(always)]
fn entries<P: Index>(a: P, b: P, nnz: usize) -> Option<(usize, usize)> {
    let (a, b) = (a.as_usize(), b.as_usize());
    (a <= b && b <= nnz).then_some((a, b))
}

/// Runs `leaf(lo, hi, out)` on disjoint row ranges `lo..hi` covering
/// `0..ptr.len() - 1`, where `out` is `y[lo * w..hi * w]`. While a range holds
/// more than [`PAR_WORK`] entries plus rows and the pool has several threads, it
/// is split in two where it halves that work, and the halves run in parallel
/// (`rayon::join`, no allocation). The split points never change what a row
/// computes.
pub(crate) fn par_rows<T: Send, P: Index>(
    ptr: &[P],
    nnz: usize,
    y: &mut [T],
    w: usize,
    leaf: &(impl Fn(usize, usize, &mut [T]) -> u8 + Sync),
) -> u8 {
    let rows = ptr.len().saturating_sub(1);
    if rayon::current_num_threads() <= 1 {
        return leaf(0, rows, y);
    }
    fn go<T: Send, P: Index>(
        ptr: &[P],
        nnz: usize,
        lo: usize,
        hi: usize,
        y: &mut [T],
        w: usize,
        leaf: &(impl Fn(usize, usize, &mut [T]) -> u8 + Sync),
    ) -> u8 {
        let work = |r: usize| ptr[r].as_usize().min(nnz) + r;
        let (a, b) = (work(lo), work(hi));
        if hi - lo < 2 || b.saturating_sub(a) <= PAR_WORK {
            return leaf(lo, hi, y);
        }
        let mid = halving_cut(lo, hi, &work);
        let (ya, yb) = y.split_at_mut(((mid - lo) * w).min(y.len()));
        let (fa, fb) = rayon::join(
            || go(ptr, nnz, lo, mid, ya, w, leaf),
            || go(ptr, nnz, mid, hi, yb, w, leaf),
        );
        fa | fb
    }
    go(ptr, nnz, 0, rows, y, w, leaf)
}

/// Where to cut `lo..hi` (`hi - lo >= 2`) in two of about equal work: the
/// first index past `lo` whose work before it (`work(k)`, non-decreasing on
/// valid buffers) reaches half of the range's, kept inside `lo + 1..hi`, so
/// that recursive halving is O(log work) deep. On buffers where `work` is not
/// monotone the cut is still inside the range (only the balance suffers).
pub(crate) fn halving_cut(lo: usize, hi: usize, work: &impl Fn(usize) -> usize) -> usize {
    let (a, b) = (work(lo), work(hi));
    let target = a + b.saturating_sub(a) / 2;
    let (mut l, mut h) = (lo + 1, hi);
    while l < h {
        let m = l + (h - l) / 2;
        if work(m) < target {
            l = m + 1;
        } else {
            h = m;
        }
    }
    l.clamp(lo + 1, hi.saturating_sub(1).max(lo + 1))
}

// ---------------------------------------------------------------- CSR / CSC

/// `y = A x` (or the scaled form) for CSR buffers; `y.len()` rows.
fn csr_mv<V: Numeric, I: Index, P: Index>(
    ptr: &[P],
    idx: &[I],
    vals: &[V],
    x: &[V],
    y: &mut [V],
    scale: Scale<V>,
) -> u8 {
    // the choices that hold for every row made once: each row then runs the
    // loop body of its own variant, with nothing per row to load or test
    let m = (ptr, idx, vals);
    let scaled = scale.is_some();
    // a large `x`: the first rows are timed both ways (and done)
    let (done, flags, pf) = match (prefetches(x), scaled) {
        (false, _) => (0, 0, false),
        (true, false) => prefetch_trial::<V, I, P, false>(m, x, y, scale),
        (true, true) => prefetch_trial::<V, I, P, true>(m, x, y, scale),
    };
    let (Some(ptr), Some(y)) = (ptr.get(done..), y.get_mut(done..)) else {
        return flags;
    };
    let m = (ptr, idx, vals);
    flags
        | match (pf, scaled) {
            (false, false) => csr_rows::<V, I, P, false, false>(m, x, y, scale),
            (false, true) => csr_rows::<V, I, P, false, true>(m, x, y, scale),
            (true, false) => csr_rows::<V, I, P, true, false>(m, x, y, scale),
            (true, true) => csr_rows::<V, I, P, true, true>(m, x, y, scale),
        }
}

/// The rows of a prefetch trial ([`prefetch_trial`]): runs of at least this
/// share of the entries (`nnz / TRIAL_SHARE`)...
const TRIAL_SHARE: usize = 64;
/// ... but no fewer entries than this (a run of a few tenths of a
/// millisecond: the clock's cost and a stray interrupt stay small beside it)
const TRIAL_MIN: usize = 1 << 14;
/// ... and no more than this.
const TRIAL_MAX: usize = 1 << 17;
/// A way this many times slower per entry than the other, on a run each,
/// ends the trial (the rest of its runs would only cost): the prefetch was
/// 2.4x-2.9x faster on the EPYC, and either way within 25% of the other on
/// the Xeon (see [`prefetch_trial`]).
const TRIAL_CLEAR: f64 = 1.5;
/// The order of a trial's runs, `true` with the prefetch: each way three
/// times, interleaved so that a trend over the first rows (lines of `x` still
/// cold, a row length that falls) weighs on both.
const TRIAL_RUNS: [bool; 6] = [false, true, true, false, false, true];

/// Whether CSR SpMV's gathers should prefetch `x` (larger than half the
/// level-2 cache, see [`prefetches`]), found by timing the first rows both
/// ways: six runs of consecutive rows, each of at least `nnz / 64` entries
/// (16 Ki to 128 Ki; on several threads each run is split between them as the
/// rest is), alternately without and with the prefetch, or fewer when one
/// way is more than [`TRIAL_CLEAR`] times slower than the other. The faster
/// way (the best run of each, per entry) does the rest. Returns the rows
/// done, their problem flags, and the choice.
///
/// The prefetch pays when `x`'s lines come from memory and costs when they
/// come from a last-level cache that holds `x`, and which of the two happens
/// is not known from the cache sizes the system reports: on a 2-core EPYC
/// VM (32 MiB of L3 reported, about 2-4 MiB of it this core's in practice)
/// the prefetch made SpMV with an 8 MB `x` 2.4-2.9x faster; on a 2-core Xeon
/// VM (260 MiB of L3) the same `x` stays in the L3, and SpMV ran 3%-10%
/// faster without it (10^6 x 10^6, 10^7 entries) and 2%-20% faster on
/// 1000 rows of 10^4 entries (GCS 3-D). So the matrix's own first rows decide,
/// on the machine and at the moment of the call. On that Xeon the trial chose
/// no prefetch for both shapes, and SpMV went from 1.04x-1.07x of scipy's time
/// to 1.00x-1.01x (10^6 x 10^6, power-law rows) and from 1.04x-1.21x to
/// 0.97x-1.02x (GCS), one thread. The trial takes at most about 6/64 of
/// the entries, or six runs of 128 Ki when that is fewer (8% of 10^7
/// entries); on a machine where the prefetch is 2.4x faster, two runs.
///
/// The timing changes no result: each row is computed the same way with or
/// without the prefetch. A matrix with fewer than `64 * 16 Ki` entries, or a
/// run that would take more than a quarter of the entries (a very long row),
/// ends the trial; with a way not timed, the prefetch is kept.
fn prefetch_trial<V: Numeric, I: Index, P: Index, const SCALED: bool>(
    (ptr, idx, vals): (&[P], &[I], &[V]),
    x: &[V],
    y: &mut [V],
    scale: Scale<V>,
) -> (usize, u8, bool) {
    let nnz = vals.len().min(idx.len());
    let (idx, vals) = (&idx[..nnz], &vals[..nnz]);
    let rows = y.len().min(ptr.len().saturating_sub(1));
    let run = nnz / TRIAL_SHARE;
    if run < TRIAL_MIN {
        return (0, 0, true);
    }
    let run = run.min(TRIAL_MAX);
    // the best time per entry of each way: [without, with]
    let mut best = [f64::INFINITY; 2];
    let (mut r, mut flags) = (0usize, 0u8);
    let at = |r: usize| ptr.get(r).map_or(nnz, |p| p.as_usize().min(nnz));
    for pf in TRIAL_RUNS {
        let start = at(r);
        // the first row past `r` whose start is `run` entries on (on a bad,
        // decreasing indptr, some row past `r`: only the timing suffers)
        let end = (r
            + 1
            + ptr[(r + 1).min(ptr.len())..]
                .partition_point(|p| p.as_usize() < start.saturating_add(run)))
        .min(rows);
        let entries = at(end).saturating_sub(start);
        if end <= r || entries > nnz / 4 {
            break;
        }
        let (Some(rows_ptr), Some(out)) = (ptr.get(r..=end), y.get_mut(r..end)) else {
            break;
        };
        let m = (rows_ptr, idx, vals);
        let t = std::time::Instant::now();
        flags |= match pf {
            false => csr_rows::<V, I, P, false, SCALED>(m, x, out, scale),
            true => csr_rows::<V, I, P, true, SCALED>(m, x, out, scale),
        };
        let per_entry = t.elapsed().as_secs_f64() / entries.max(1) as f64;
        best[usize::from(pf)] = best[usize::from(pf)].min(per_entry);
        r = end;
        // one way far slower than the other after a run each: decided
        let [a, b] = best;
        if a.is_finite() && b.is_finite() && a.max(b) > TRIAL_CLEAR * a.min(b) {
            break;
        }
    }
    let pf = best[1] <= best[0] || best[0].is_infinite() || best[1].is_infinite();
    (r, flags, pf)
}

/// [`csr_mv`] on its buffers `(ptr, idx, vals)`, with its choices as
/// parameters: `PF`, prefetch `x` (see [`prefetches`]); `SCALED`, `scale` is
/// `Some` (else each row's sum is stored as it is). Each row's end is read
/// once from `ptr` and is the next row's start; a row is checked (`a <= b`,
/// `b` within both buffers, else skipped and flagged) against the lengths
/// that slicing the buffers tests, so the compiler drops those tests. Against
/// consecutive pairs of `ptr` checked against `nnz`, this took SpMV with `x`
/// in cache (2^15 columns, 10^7 entries, `int32` indices, one thread, 2-core
/// Xeon) from 19.9-20.9 ms to 17.8-19.0 ms.
#[inline(always)]
fn csr_rows<V: Numeric, I: Index, P: Index, const PF: bool, const SCALED: bool>(
    (ptr, idx, vals): (&[P], &[I], &[V]),
    x: &[V],
    y: &mut [V],
    scale: Scale<V>,
) -> u8 {
    let nnz = vals.len().min(idx.len());
    let (idx, vals) = (&idx[..nnz], &vals[..nnz]);
    let leaf = |lo: usize, _hi: usize, out: &mut [V]| -> u8 {
        let (mut flags, mut bad) = (0u8, false);
        let Some(bounds) = ptr.get(lo..lo + out.len() + 1) else {
            return BAD_PTR;
        };
        // each row's end is the next row's start: one load of indptr a row;
        // the checks against the two buffers' own lengths are the ones slicing
        // them would make
        let mut a = bounds[0].as_usize();
        for (&end, yr) in bounds[1..].iter().zip(out.iter_mut()) {
            let b = end.as_usize();
            let start = std::mem::replace(&mut a, b);
            if !(start <= b && b <= idx.len() && b <= vals.len()) {
                flags |= BAD_PTR;
                continue;
            }
            let acc = row_dot::<V, I, PF>(idx, vals, (start, b), x, &mut bad);
            let v = if SCALED {
                finish(acc, *yr, scale)
            } else {
                V::from_acc(acc)
            };
            match v {
                Some(v) => *yr = v,
                None => flags |= OVERFLOW,
            }
        }
        flags | if bad { OOB } else { 0 }
    };
    par_rows(ptr, nnz, y, 1, &leaf)
}

/// Scatter `alpha * values[k] * x[j]` into `acc[indices[k]]` for every column `j`
/// of CSC buffers (one thread, column order).
fn csc_scatter<V: Numeric, I: Index, P: Index>(
    ptr: &[P],
    idx: &[I],
    vals: &[V],
    x: &[V],
    acc: &mut [V::Acc],
    alpha: V::Acc,
) -> u8 {
    let nnz = vals.len().min(idx.len());
    let (idx, vals) = (&idx[..nnz], &vals[..nnz]);
    let pf = prefetches(acc);
    let (mut flags, mut bad) = (0u8, false);
    for (j, &xj) in x.iter().enumerate().take(ptr.len().saturating_sub(1)) {
        let Some((a, b)) = range(ptr, j, nnz) else {
            flags |= BAD_PTR;
            continue;
        };
        let xj = V::acc_mul(alpha, xj.to_acc());
        if pf {
            column_scatter::<V, I, true>(idx, vals, (a, b), xj, acc, &mut bad);
        } else {
            column_scatter::<V, I, false>(idx, vals, (a, b), xj, acc, &mut bad);
        }
    }
    flags | if bad { OOB } else { 0 }
}

/// Add `values[k] * xj` into `acc[indices[k]]` for entries `a..b` (one column
/// of a CSC matrix), prefetching `acc` ahead when `PF`. An index past `acc`
/// (a tensor built without validation) sets `bad` and ends the column (see
/// [`row_dot`]).
#[inline(always)]
fn column_scatter<V: Numeric, I: Index, const PF: bool>(
    idx: &[I],
    vals: &[V],
    (a, b): (usize, usize),
    xj: V::Acc,
    acc: &mut [V::Acc],
    bad: &mut bool,
) {
    // `acc` is an argument, not a capture: the prefetch reads it between steps
    let step = |acc: &mut [V::Acc], i: I, v: V| match acc.get_mut(i.as_usize()) {
        Some(s) => {
            *s = V::acc_add(*s, V::acc_mul(v.to_acc(), xj));
            true
        }
        None => false,
    };
    let mut entries = idx[a..b].iter().zip(&vals[a..b]);
    let ok = match ahead_of(idx, a, b).filter(|_| PF) {
        Some(ahead) => entries.zip(ahead).all(|((&i, &v), &p)| {
            crate::buffer::prefetch_at_l2(acc, p.as_usize());
            step(acc, i, v)
        }),
        None => entries.all(|(&i, &v)| step(acc, i, v)),
    };
    *bad |= !ok;
}

/// Narrow accumulators into `y` (integer and float16 scatters).
fn narrow_into<V: Numeric>(acc: &[V::Acc], y: &mut [V]) -> u8 {
    let mut flags = 0;
    for (o, &a) in y.iter_mut().zip(acc) {
        match V::from_acc(a) {
            Some(v) => *o = v,
            None => flags |= OVERFLOW,
        }
    }
    flags
}

/// A scatter kernel run on `y` directly when the value type is its own
/// accumulator, else on a wide buffer narrowed into `y` once. `fresh`: `y` is a
/// new zeroed output (and `scale` is `None`).
fn scatter_into<V: Numeric>(
    y: &mut [V],
    scale: Scale<V>,
    fresh: bool,
    what: &str,
    kernel: impl FnOnce(&mut [V::Acc]) -> u8,
) -> Result<u8> {
    if let Some(acc) = V::as_acc_mut(y) {
        // float64 / float32: accumulate in the output itself
        match scale {
            Some((_, beta)) if !beta.is_zero() => acc
                .iter_mut()
                .for_each(|a| *a = V::acc_mul(beta.to_acc(), *a)),
            // a fresh zeroed output is not written twice (its untouched pages
            // stay unallocated)
            _ if fresh => {}
            _ => acc.iter_mut().for_each(|a| *a = V::acc_zero()),
        }
        return Ok(kernel(acc));
    }
    let mut acc = alloc::with_capacity::<V::Acc>(y.len(), what)?;
    acc.extend(y.iter().map(|&old| start(old, scale)));
    let flags = kernel(&mut acc);
    Ok(flags | narrow_into(&acc, y))
}

/// `y = A x` or the scaled form for a CSR / CSC matrix given as buffers.
#[allow(clippy::too_many_arguments)]
fn csx_mv<V: Numeric, I: Index, P: Index>(
    axis: CompressedAxis,
    shape: &[usize],
    ptr: &[P],
    idx: &[I],
    vals: &[V],
    x: &[V],
    y: &mut [V],
    scale: Scale<V>,
    fresh: bool,
) -> Result<()> {
    let (rows, cols) = (shape[0], shape[1]);
    check_len("SpMV vector", x.len(), cols)?;
    check_len("SpMV output", y.len(), rows)?;
    let flags = match axis {
        CompressedAxis::Row => csr_mv(ptr, idx, vals, x, y, scale),
        CompressedAxis::Column => scatter_into(y, scale, fresh, "SpMV accumulator", |acc| {
            csc_scatter(ptr, idx, vals, x, acc, alpha_acc(scale))
        })?,
    };
    check_flags::<V>(flags, "SpMV")
}

/// `y = A x` for a CSR or CSC matrix, into a new vector. CSR runs rows in
/// parallel; CSC scatters column by column on one thread (so sums keep one
/// fixed order). With an `x` larger than half the level-2 cache and 2^20
/// entries or more, CSR times its first rows with and without a prefetch of
/// `x`'s elements and does the rest the faster way: which one is faster
/// depends on whether the last-level cache holds `x`, which the cache sizes
/// do not tell. The result is the same either way.
///
/// ```
/// use arrow_sparse::{kernels::spmv::spmv_csx, CompressedAxis, CsxMatrix};
/// // [[1, 0, 2], [0, 3, 0]]
/// let a = CsxMatrix::<f64, i32>::try_new(vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 1].into(), vec![1.0, 2.0, 3.0].into())?;
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
    check_len("SpMV vector", x.len(), a.shape()[1])?;
    let mut y = alloc::zeroed::<V>(a.shape()[0], "SpMV result")?;
    csx_mv(
        a.axis(),
        a.shape(),
        a.indptr(),
        a.indices(),
        a.values(),
        x,
        &mut y,
        None,
        true,
    )?;
    Ok(y)
}

/// `y = A x` for a CSR or CSC matrix, into the caller's `y` (one element per
/// row; nothing is allocated for float64 / float32 values).
///
/// ```
/// use arrow_sparse::{kernels::spmv::spmv_csx_into, CompressedAxis, CsxMatrix};
/// // [[1, 0, 2], [0, 3, 0]] as CSC
/// let a = CsxMatrix::<f64, i32>::try_new(vec![2, 3], CompressedAxis::Column, vec![0, 1, 2, 3].into(), vec![0, 1, 0].into(), vec![1.0, 3.0, 2.0].into())?;
/// let mut y = vec![f64::NAN; 2]; // overwritten
/// spmv_csx_into(&a, &[1.0, 10.0, 100.0], &mut y)?;
/// assert_eq!(y, [201.0, 30.0]);
/// assert!(spmv_csx_into(&a, &[1.0, 10.0, 100.0], &mut [0.0; 3]).is_err()); // y has one element per row
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_csx_into<V: Numeric, I: Index, P: Index>(
    a: &CsxMatrix<V, I, P>,
    x: &[V],
    y: &mut [V],
) -> Result<()> {
    csx_mv(
        a.axis(),
        a.shape(),
        a.indptr(),
        a.indices(),
        a.values(),
        x,
        y,
        None,
        false,
    )
}

// ---------------------------------------------------------------- COO

/// Entries `lo..hi` of a 2-D COO: `(row, column)` of entry `k`.
#[derive(Clone, Copy)]
struct Coords<'a, I: Index> {
    c: &'a [I],
    layout: CoordLayout,
    nnz: usize,
}

impl<I: Index> Coords<'_, I> {
    #[inline(always)]
    fn row(&self, k: usize) -> usize {
        match self.layout {
            CoordLayout::RowMajor => self.c[2 * k].as_usize(),
            CoordLayout::ColumnMajor => self.c[k].as_usize(),
        }
    }
}

/// Scatter `alpha * v * x[col]` into `acc[row - row0]` for entries `lo..hi`;
/// `sorted_flag` is returned when some entry falls outside `acc` or `x`.
/// `pf_acc`: prefetch the output elements ahead (for entries in no row order
/// and an output larger than half the level-2 cache; rows in order walk the
/// output forward, which the hardware prefetcher follows); the operand is
/// prefetched when it is larger than half the level-2 cache ([`prefetches`]).
#[allow(clippy::too_many_arguments)]
fn coo_scatter<V: Numeric, I: Index>(
    c: Coords<'_, I>,
    vals: &[V],
    lo: usize,
    hi: usize,
    row0: usize,
    x: &[V],
    acc: &mut [V::Acc],
    alpha: V::Acc,
    sorted_flag: u8,
    pf_acc: bool,
) -> u8 {
    let e = (c, vals, lo, hi, row0);
    // the choices made once, each loop variant without a test per entry
    let bad = match (pf_acc, prefetches(x)) {
        (false, false) => coo_entries::<V, I, false, false>(e, x, acc, alpha),
        (false, true) => coo_entries::<V, I, false, true>(e, x, acc, alpha),
        (true, false) => coo_entries::<V, I, true, false>(e, x, acc, alpha),
        (true, true) => coo_entries::<V, I, true, true>(e, x, acc, alpha),
    };
    if bad { sorted_flag } else { 0 }
}

/// The loop of [`coo_scatter`] over entries `lo..hi` of `c` / `vals` (rows
/// offset by `row0`), prefetching the output (`PF_ACC`) and the operand
/// (`PF_X`) elements of the entry [`AHEAD`] places further on. Returns whether
/// some entry fell outside `acc` or `x` (skipped; a tensor built without
/// validation).
#[inline(always)]
fn coo_entries<V: Numeric, I: Index, const PF_ACC: bool, const PF_X: bool>(
    (c, vals, lo, hi, row0): (Coords<'_, I>, &[V], usize, usize, usize),
    x: &[V],
    acc: &mut [V::Acc],
    alpha: V::Acc,
) -> bool {
    let mut bad = false;
    // out-of-range entries are flagged and skipped (see `row_dot`)
    let mut put = |acc: &mut [V::Acc], i: usize, j: usize, v: V| match (
        acc.get_mut(i.wrapping_sub(row0)),
        x.get(j),
    ) {
        (Some(s), Some(&xj)) => {
            *s = V::acc_add(*s, V::acc_mul(V::acc_mul(alpha, v.to_acc()), xj.to_acc()));
        }
        _ => bad = true,
    };
    // entries lo..cut prefetch the entry AHEAD places on, read beside their own
    // coordinates (see `look_ahead`); the rest, near the end, run plain
    let pf = PF_ACC || PF_X;
    let hint = |acc: &[V::Acc], i: I, j: I| {
        if PF_ACC {
            crate::buffer::prefetch_at(acc, i.as_usize().wrapping_sub(row0));
        }
        if PF_X {
            crate::buffer::prefetch_at(x, j.as_usize());
        }
    };
    match c.layout {
        CoordLayout::RowMajor => {
            let pairs = |a: usize, b: usize| c.c[2 * a..2 * b].chunks_exact(2).zip(&vals[a..b]);
            let cut = match look_ahead(&c.c[..c.nnz.saturating_mul(2).min(c.c.len())], 2, (lo, hi))
            {
                Some((ahead, cut)) if pf => {
                    for ((rc, &v), pa) in pairs(lo, cut).zip(ahead.chunks_exact(2)) {
                        hint(acc, pa[0], pa[1]);
                        put(acc, rc[0].as_usize(), rc[1].as_usize(), v);
                    }
                    cut
                }
                _ => lo,
            };
            for (rc, &v) in pairs(cut, hi) {
                put(acc, rc[0].as_usize(), rc[1].as_usize(), v);
            }
        }
        CoordLayout::ColumnMajor => {
            let (rows, cols) = c.c.split_at(c.nnz.min(c.c.len()));
            let entries = |a: usize, b: usize| rows[a..b].iter().zip(&cols[a..b]).zip(&vals[a..b]);
            let cut = match (look_ahead(rows, 1, (lo, hi)), look_ahead(cols, 1, (lo, hi))) {
                (Some((ar, a)), Some((ac, b))) if pf => {
                    let cut = a.min(b);
                    for (((&i, &j), &v), (&pi, &pj)) in entries(lo, cut).zip(ar.iter().zip(ac)) {
                        hint(acc, pi, pj);
                        put(acc, i.as_usize(), j.as_usize(), v);
                    }
                    cut
                }
                _ => lo,
            };
            for ((&i, &j), &v) in entries(cut, hi) {
                put(acc, i.as_usize(), j.as_usize(), v);
            }
        }
    }
    bad
}

/// The scatter of a COO matrix into `acc` (one element per row): entries in
/// parallel row ranges when they are sorted by row (canonical), else in one pass.
fn coo_scatter_all<V: Numeric, I: Index>(
    c: Coords<'_, I>,
    vals: &[V],
    canonical: bool,
    x: &[V],
    acc: &mut [V::Acc],
    alpha: V::Acc,
) -> u8 {
    // entries in no row order walk the output at random: prefetched when large
    coo_row_ranges(c, c.nnz, canonical, acc, 1, &|lo, hi, row0, out, flag| {
        let pf_acc = !canonical && prefetches(out);
        coo_scatter(c, vals, lo, hi, row0, x, out, alpha, flag, pf_acc)
    })
}

/// Runs `leaf(lo, hi, row0, out, row_flag)` over the entries `0..nnz` of a COO
/// matrix into `out` (its output rows, `w` elements each): in parallel row
/// ranges ([`par_coo_rows`]) when the rows are sorted (`canonical`), the pool
/// has several threads and there are more than [`PAR_WORK`] entries, with
/// `row_flag` [`UNSORTED`] | [`OOB`] for an entry outside its range (the rows
/// were not sorted after all, or out of range); else once over all entries,
/// with `row_flag` [`OOB`] (a row past the output: a tensor built without
/// validation).
fn coo_row_ranges<T: Send, I: Index>(
    c: Coords<'_, I>,
    nnz: usize,
    canonical: bool,
    out: &mut [T],
    w: usize,
    leaf: &(impl Fn(usize, usize, usize, &mut [T], u8) -> u8 + Sync),
) -> u8 {
    if !canonical || rayon::current_num_threads() <= 1 || nnz <= PAR_WORK {
        return leaf(0, nnz, 0, out, OOB);
    }
    par_coo_rows(c, (0, nnz, 0), out, w, &|lo, hi, row0, o: &mut [T]| {
        leaf(lo, hi, row0, o, UNSORTED | OOB)
    })
}

/// Runs `leaf(lo, hi, row0, out)` on ranges `lo..hi` of the entries of a COO
/// matrix whose rows are sorted (canonical), in parallel: entries `lo..hi`
/// have rows `row0..` and `out` holds their output rows (`w` elements each).
/// While a range holds more than [`PAR_WORK`] entries it is cut at the row
/// boundary nearest its middle entry (binary search), so that no row spans two
/// ranges, and the halves run in parallel (`rayon::join`). A range that cannot
/// be cut (one row, or rows out of order) runs whole; a leaf that meets a row
/// outside its part reports it in its flags.
fn par_coo_rows<T: Send, I: Index>(
    c: Coords<'_, I>,
    (lo, hi, row0): (usize, usize, usize),
    out: &mut [T],
    w: usize,
    leaf: &(impl Fn(usize, usize, usize, &mut [T]) -> u8 + Sync),
) -> u8 {
    if hi - lo <= PAR_WORK {
        return leaf(lo, hi, row0, out);
    }
    let half = lo + (hi - lo) / 2;
    let r = c.row(half);
    let first_at_or_after = |row: usize| partition(lo, hi, |k| c.row(k) < row);
    let mut mid = first_at_or_after(r);
    let mut rmid = r;
    if mid == lo {
        rmid = r.saturating_add(1);
        mid = first_at_or_after(rmid);
    }
    let cut = rmid
        .checked_sub(row0)
        .and_then(|rows| rows.checked_mul(w))
        .filter(|&cut| cut <= out.len());
    let Some(cut) = cut.filter(|_| mid != lo && mid != hi) else {
        return leaf(lo, hi, row0, out);
    };
    let (oa, ob) = out.split_at_mut(cut);
    let (fa, fb) = rayon::join(
        || par_coo_rows(c, (lo, mid, row0), oa, w, leaf),
        || par_coo_rows(c, (mid, hi, rmid), ob, w, leaf),
    );
    fa | fb
}

/// The binary search over positions, shared with the conversions (their layer).
pub(crate) use crate::convert::kernels::partition;

fn coo_mv<V: Numeric, I: Index>(
    a: &CooTensor<V, I>,
    x: &[V],
    y: &mut [V],
    scale: Scale<V>,
    fresh: bool,
) -> Result<()> {
    if a.ndim() != 2 {
        return Err(Error::shape(
            "COO SpMV",
            "a 2-D matrix",
            format!("{}-D", a.ndim()),
        ));
    }
    let (rows, cols) = (a.shape()[0], a.shape()[1]);
    check_len("SpMV vector", x.len(), cols)?;
    check_len("SpMV output", y.len(), rows)?;
    let c = Coords {
        c: a.coords(),
        layout: a.layout(),
        nnz: a.nnz(),
    };
    let canonical = a.is_canonical();
    let vals = &a.values()[..];
    let flags = scatter_into(y, scale, fresh, "SpMV accumulator", |acc| {
        coo_scatter_all(c, vals, canonical, x, acc, alpha_acc(scale))
    })?;
    check_flags::<V>(flags, "SpMV")
}

/// `y = A x` for a 2-D COO matrix (entries in any order, duplicates add), into
/// a new vector.
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
    check_len("SpMV vector", x.len(), a.shape()[1])?;
    let mut y = alloc::zeroed::<V>(a.shape()[0], "SpMV result")?;
    coo_mv(a, x, &mut y, None, true)?;
    Ok(y)
}

/// `y = A x` for a 2-D COO matrix, into the caller's `y` (one element per row).
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv_coo_into;
/// use arrow_sparse::CooTensor;
/// let a = CooTensor::<f32, i64>::from_entries(vec![2, 2], &[(vec![1, 1], 4.0)])?;
/// let mut y = [9.0f32; 2];
/// spmv_coo_into(&a, &[1.0, 0.5], &mut y)?;
/// assert_eq!(y, [0.0, 2.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_coo_into<V: Numeric, I: Index>(
    a: &CooTensor<V, I>,
    x: &[V],
    y: &mut [V],
) -> Result<()> {
    coo_mv(a, x, y, None, false)
}

// ---------------------------------------------------------------- GCS / DM

/// The row-major values of a dense operand, without copying when it is packed
/// row-major already.
fn operand_values<V: Numeric>(x: &DenseTensor<V>) -> Result<std::borrow::Cow<'_, [V]>> {
    if let Some(v) = row_major_values(x) {
        return Ok(std::borrow::Cow::Borrowed(v));
    }
    let mut out = alloc::with_capacity::<V>(x.as_any().size(), "SpMV operand")?;
    x.for_each(|_, v| out.push(v))?;
    Ok(std::borrow::Cow::Owned(out))
}

/// GCS SpMV: the reduced matrix times `x`, a dense tensor over the column
/// dimensions (in the map's column-part order); the result is a dense tensor
/// over the row dimensions. A row-major `x` is read in place.
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
    let xv = operand_values(x)?;
    let y = spmv_csx(a.matrix(), &xv)?;
    let row_shape: Vec<usize> = map.part(0).iter().map(|&d| map.shape()[d]).collect();
    DenseTensor::try_new(row_shape, y.into())
}

/// DM SpMV: a DM tensor without views whose storage is a CSR / CSC or COO
/// matrix (two parts) works like GCS: `x` over the column dimensions, result
/// over the rows.
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv_dm;
/// use arrow_sparse::{CooTensor, DenseTensor, DmTensor, Error, Format, IndexType, dims::DimMap};
/// // [[1, 0, 2], [0, 3, 0]] stored as CSR through the identity map
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 0], 1.0), (vec![0, 2], 2.0), (vec![1, 1], 3.0)])?;
/// let dm = DmTensor::<f64>::from_coo(&coo, DimMap::identity(vec![2, 3])?, Format::Csr, IndexType::Int64)?;
/// let x = DenseTensor::<f64>::try_new(vec![3], vec![1.0, 10.0, 100.0].into())?;
/// assert_eq!(spmv_dm(dm.as_any(), &x)?.values().as_ref(), &[201.0, 30.0]);
/// // a view (here columns 0 and 2) must be materialised first
/// let s = dm.as_any().slice(1, 0, 3, 2)?;
/// assert!(matches!(spmv_dm(&s, &x), Err(Error::Unsupported(_))));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_dm<V: Numeric>(a: &AnyDm, x: &DenseTensor<V>) -> Result<DenseTensor<V>> {
    let map = a.map();
    if map.reduced_ndim() != 2 {
        return Err(Error::shape(
            "DM SpMV",
            "a map with two parts",
            format!("{} parts", map.reduced_ndim()),
        ));
    }
    let col_shape: Vec<usize> = map.part(1).iter().map(|&d| map.shape()[d]).collect();
    if x.shape() != col_shape.as_slice() {
        return Err(Error::shape(
            "DM SpMV operand",
            format!("shape {col_shape:?}"),
            format!("{:?}", x.shape()),
        ));
    }
    let xv = operand_values(x)?;
    let row_shape: Vec<usize> = map.part(0).iter().map(|&d| map.shape()[d]).collect();
    let mut y = alloc::zeroed::<V>(map.reduced_shape()[0], "SpMV result")?;
    dm_mv(a, &xv, &mut y, None, true)?;
    DenseTensor::try_new(row_shape, y.into())
}

fn dm_mv<V: Numeric>(a: &AnyDm, x: &[V], y: &mut [V], scale: Scale<V>, fresh: bool) -> Result<()> {
    if !a.views().is_empty() {
        return Err(Error::Unsupported(
            "SpMV of a DM tensor with views (materialise it first)".into(),
        ));
    }
    if a.map().reduced_ndim() != 2 {
        return Err(Error::shape(
            "DM SpMV",
            "a map with two parts",
            format!("{} parts", a.map().reduced_ndim()),
        ));
    }
    match a.storage() {
        AnyTensor::Csx(m) => any_csx_mv(m, x, y, scale, fresh),
        AnyTensor::Coo(c) if c.shape().len() == 2 => any_coo_mv(c, x, y, scale, fresh),
        other => Err(Error::Unsupported(format!(
            "DM SpMV needs CSR / CSC or 2-D COO storage, found {}",
            other.format()
        ))),
    }
}

// ---------------------------------------------------------------- dispatch

fn value_mismatch<V: Numeric>(found: crate::ValueType) -> Error {
    Error::Type {
        what: "SpMV value type".into(),
        expected: V::TYPE.name().into(),
        found: found.name().into(),
    }
}

/// Call `$body` with `$ptr`, `$idx`, `$vals` bound to the typed slices of an
/// `AnyCsx` (indptr cast to the indices' type when the two differ: a copy of the
/// small indptr only, or both widened to int64 when indptr does not fit).
macro_rules! with_csx_slices {
    ($m:expr, $V:ty, |$ptr:ident, $idx:ident, $vals:ident| $body:expr) => {{
        let m: &AnyCsx = $m;
        let $vals: &[$V] = &m.values().as_typed::<$V>()
            .ok_or_else(|| value_mismatch::<$V>(m.value_type()))?[..];
        if m.indptr_type() == m.index_type() {
            with_index_type!(m.index_type(), J => {
                let ($ptr, $idx) = match (m.indptr().as_typed::<J>(), m.indices().as_typed::<J>()) {
                    (Some(p), Some(i)) => (&p[..], &i[..]),
                    _ => return Err(Error::invariant("CSX index buffers", None, "type tags disagree")),
                };
                $body
            })
        } else {
            let u = m.unify_index_types()?;
            with_index_type!(u.index_type(), J => {
                let ($ptr, $idx) = match (u.indptr().as_typed::<J>(), u.indices().as_typed::<J>()) {
                    (Some(p), Some(i)) => (&p[..], &i[..]),
                    _ => return Err(Error::invariant("CSX index buffers", None, "type tags disagree")),
                };
                $body
            })
        }
    }};
}

fn any_csx_mv<V: Numeric>(
    m: &AnyCsx,
    x: &[V],
    y: &mut [V],
    scale: Scale<V>,
    fresh: bool,
) -> Result<()> {
    with_csx_slices!(m, V, |ptr, idx, vals| csx_mv(
        m.axis(),
        m.shape(),
        ptr,
        idx,
        vals,
        x,
        y,
        scale,
        fresh
    ))
}

fn any_coo_mv<V: Numeric>(
    c: &AnyCoo,
    x: &[V],
    y: &mut [V],
    scale: Scale<V>,
    fresh: bool,
) -> Result<()> {
    with_index_type!(c.index_type(), J => {
        let t = c.downcast::<V, J>().ok_or_else(|| value_mismatch::<V>(c.value_type()))?;
        coo_mv(&t, x, y, scale, fresh)
    })
}

/// Rows and columns of the matrix `a` stands for (GCS and DM: the reduced shape).
fn matrix_shape(a: &AnyTensor) -> Result<(usize, usize)> {
    let two = |s: &[usize]| -> Result<(usize, usize)> {
        match *s {
            [r, c] => Ok((r, c)),
            _ => Err(Error::shape(
                "SpMV matrix",
                "2 dimensions (or a map with two parts)",
                format!("{} dimensions", s.len()),
            )),
        }
    };
    match a {
        AnyTensor::Gcs(g) => two(g.map().reduced_shape()),
        AnyTensor::Dm(d) => two(d.map().reduced_shape()),
        AnyTensor::Csx(_) | AnyTensor::Coo(_) | AnyTensor::Level(_) => two(a.shape()),
        other => Err(Error::Unsupported(format!(
            "SpMV of a {} tensor",
            other.format()
        ))),
    }
}

fn mv<V: Numeric>(a: &AnyTensor, x: &[V], y: &mut [V], scale: Scale<V>, fresh: bool) -> Result<()> {
    let (rows, cols) = matrix_shape(a)?;
    check_len("SpMV vector", x.len(), cols)?;
    check_len("SpMV output", y.len(), rows)?;
    match a {
        AnyTensor::Csx(m) => any_csx_mv(m, x, y, scale, fresh),
        AnyTensor::Coo(c) => any_coo_mv(c, x, y, scale, fresh),
        AnyTensor::Gcs(g) => any_csx_mv(g.matrix(), x, y, scale, fresh),
        AnyTensor::Dm(d) => dm_mv(d, x, y, scale, fresh),
        AnyTensor::Level(l) => level_mv(l, x, y, scale, fresh),
        other => Err(Error::Unsupported(format!(
            "SpMV of a {} tensor",
            other.format()
        ))),
    }
}

/// The levels holding the row and the column coordinates of a 2-D level tensor.
fn row_col_levels(a: &AnyLevel) -> (usize, usize) {
    if a.format().axis_order().first() == Some(&0) {
        (0, 1)
    } else {
        (1, 0)
    }
}

/// `y = A x` or the scaled form for a 2-D level tensor of any level types and
/// either level order: one scatter over [`co_iterate`](super::co_iterate), the
/// level walk shared by every level format (stored zeros of dense levels add
/// nothing). Runs on one thread in storage order.
fn level_mv<V: Numeric>(
    a: &AnyLevel,
    x: &[V],
    y: &mut [V],
    scale: Scale<V>,
    fresh: bool,
) -> Result<()> {
    if a.value_type() != V::TYPE {
        return Err(value_mismatch::<V>(a.value_type()));
    }
    let (rl, cl) = row_col_levels(a);
    let alpha = alpha_acc(scale);
    let mut walked = Ok(());
    let flags = scatter_into(y, scale, fresh, "SpMV accumulator", |acc| {
        let mut bad = false;
        walked = super::co_iterate::<V>(a, &mut |lvl, _, v| match (
            acc.get_mut(lvl[rl]),
            x.get(lvl[cl]),
        ) {
            (Some(s), Some(&xj)) => {
                *s = V::acc_add(*s, V::acc_mul(V::acc_mul(alpha, v.to_acc()), xj.to_acc()))
            }
            _ => bad = true,
        });
        if bad { OOB } else { 0 }
    })?;
    walked?;
    check_flags::<V>(flags, "SpMV")
}

/// `y = A x` for any 2-D sparse tensor (CSR, CSC, COO, or a level tensor of any
/// level types: DCSR, DCSC, `(compressed, dense)`, ..., through the one level
/// co-iteration) or a GCS / DM tensor (with `x` over the column dimensions,
/// flattened row-major in the map's order); dispatches on the format and the
/// index types. The result is flat
/// (row-major over the row dimensions), allocated fallibly.
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
    let (rows, cols) = matrix_shape(a)?;
    check_len("SpMV vector", x.len(), cols)?;
    let mut y = alloc::zeroed::<V>(rows, "SpMV result")?;
    mv(a, x, &mut y, None, true)?;
    Ok(y)
}

/// `y = A x` into the caller's `y` (one element per row of the matrix; GCS /
/// DM: of the reduced matrix), for every format [`spmv`] takes. For float64
/// and float32 values nothing is allocated (a CSX matrix whose indptr type
/// differs from its indices' type has its indptr converted first).
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv_into;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 2.0), (vec![1, 0], -1.0)])?
///     .to_csx::<i32, i32>(CompressedAxis::Row)?
///     .into();
/// let (x, mut y) = ([1.0, 2.0, 3.0], [0.0; 2]);
/// for _ in 0..3 {
///     spmv_into(&a, &x, &mut y)?; // an iteration allocates nothing
/// }
/// assert_eq!(y, [6.0, -1.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_into<V: Numeric>(a: &AnyTensor, x: &[V], y: &mut [V]) -> Result<()> {
    mv(a, x, y, None, false)
}

/// The BLAS-style general form `y = alpha A x + beta y`, for every format
/// [`spmv`] takes. `beta = 0` overwrites `y` without reading it. Integers are
/// computed in the wide accumulator and narrowed once per element (an overflow
/// is [`Error::Overflow`]).
///
/// ```
/// use arrow_sparse::kernels::spmv::spmv_scaled_into;
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 0], 1.0), (vec![1, 1], 2.0)])?.into();
/// let mut y = [10.0, 20.0];
/// spmv_scaled_into(0.5, &a, &[2.0, 2.0], 2.0, &mut y)?; // 0.5 A x + 2 y
/// assert_eq!(y, [21.0, 42.0]);
/// let mut z = [f64::NAN, f64::NAN];
/// spmv_scaled_into(1.0, &a, &[2.0, 2.0], 0.0, &mut z)?; // beta = 0: z is not read
/// assert_eq!(z, [2.0, 4.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmv_scaled_into<V: Numeric>(
    alpha: V,
    a: &AnyTensor,
    x: &[V],
    beta: V,
    y: &mut [V],
) -> Result<()> {
    mv(a, x, y, Some((alpha, beta)), false)
}

// ---------------------------------------------------------------- SpMM

/// A working buffer could not be allocated inside a parallel task.
const NO_MEMORY: u8 = 16;

/// `row += v * brow`, element by element in the accumulator.
#[inline(always)]
fn axpy<V: Numeric>(row: &mut [V::Acc], v: V::Acc, brow: &[V]) {
    for (o, &x) in row.iter_mut().zip(brow) {
        *o = V::acc_add(*o, V::acc_mul(v, x.to_acc()));
    }
}

/// Row `j` of the row-major `k x n` operand (`j` clamped to the last row, with
/// `oob` set, for an index a tensor built without validation may hold).
#[inline(always)]
fn b_row<'b, V>(b: &'b [V], n: usize, j: usize, klast: usize, oob: &mut bool) -> &'b [V] {
    *oob |= j > klast;
    let s = j.min(klast) * n;
    &b[s..s + n]
}

/// `C = A B` (or the scaled form) for CSR buffers: rows in parallel, each row
/// summed into its own slice of `C`. Widths of 4, 8 and 16 columns run
/// [`csr_mm_w`] with the width as a constant (see there); others with `W = 0`.
#[allow(clippy::too_many_arguments)]
fn csr_mm<V: Numeric, I: Index, P: Index>(
    ptr: &[P],
    idx: &[I],
    vals: &[V],
    b: &[V],
    n: usize,
    c: &mut [V],
    scale: Scale<V>,
) -> u8 {
    match n {
        4 => csr_mm_w::<V, I, P, 4>(ptr, idx, vals, b, n, c, scale),
        8 => csr_mm_w::<V, I, P, 8>(ptr, idx, vals, b, n, c, scale),
        16 => csr_mm_w::<V, I, P, 16>(ptr, idx, vals, b, n, c, scale),
        _ => csr_mm_w::<V, I, P, 0>(ptr, idx, vals, b, n, c, scale),
    }
}

/// One CSR row of `C = alpha A B + beta C` for a `B` of `W` columns: the sums
/// start at `beta` times the old `row` (zero without `beta`), and `alpha * v *
/// B[j, :]` is added for each entry in storage order. They live in a local
/// array of `W` elements, which the compiler keeps in registers, and `row` is
/// written once at the end, never read back after a store; the additions and
/// their order are those of [`axpy`] on `row`, so the result is the same bit
/// for bit. An index past `B` is flagged and its entry skipped, where the
/// general loop reads the last row instead: either way the caller reports
/// the error.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn row_mm_fixed<V: Numeric, I: Index, const W: usize>(
    row: &mut [V::Acc],
    beta: Option<V::Acc>,
    idx: &[I],
    vals: &[V],
    (a, e): (usize, usize),
    b: &[V],
    alpha: V::Acc,
    oob: &mut bool,
) {
    let mut sum = [V::acc_zero(); W];
    if let Some(beta) = beta {
        sum.iter_mut()
            .zip(row.iter())
            .for_each(|(s, &o)| *s = V::acc_mul(beta, o));
    }
    for (k, (&j, &v)) in (a..).zip(idx[a..e].iter().zip(&vals[a..e])) {
        prefetch_ahead(b, idx, k, W);
        // an index past `B` (a tensor built without validation) is flagged
        // and its entry skipped (the caller reports the error)
        let Some(brow) = j
            .as_usize()
            .checked_mul(W)
            .and_then(|s| b.get(s..s.checked_add(W)?))
            .and_then(|r| <&[V; W]>::try_from(r).ok())
        else {
            *oob = true;
            continue;
        };
        let s = V::acc_mul(alpha, v.to_acc());
        for (o, &x) in sum.iter_mut().zip(brow) {
            *o = V::acc_add(*o, V::acc_mul(s, x.to_acc()));
        }
    }
    row.iter_mut().zip(sum).for_each(|(o, s)| *o = s);
}

/// [`csr_mm`] for a width `W` known at compile time (`W = n`), or any width
/// `n` when `W = 0`.
#[allow(clippy::too_many_arguments)]
fn csr_mm_w<V: Numeric, I: Index, P: Index, const W: usize>(
    ptr: &[P],
    idx: &[I],
    vals: &[V],
    b: &[V],
    n: usize,
    c: &mut [V],
    scale: Scale<V>,
) -> u8 {
    let nnz = vals.len().min(idx.len());
    let klast = (b.len() / n).wrapping_sub(1);
    let alpha = alpha_acc(scale);
    // `beta`, when the old `C` counts (BLAS: not when `beta = 0`)
    let beta = match scale {
        Some((_, beta)) if !beta.is_zero() => Some(beta.to_acc()),
        _ => None,
    };
    let leaf = |lo: usize, hi: usize, out: &mut [V]| -> u8 {
        let (mut flags, mut oob) = (0u8, false);
        match V::as_acc_mut(out) {
            Some(acc) => {
                for (r, row) in acc.chunks_exact_mut(n).enumerate() {
                    let ends = range(ptr, lo + r, nnz);
                    if ends.is_none() {
                        flags |= BAD_PTR;
                    }
                    if W > 0 {
                        // a bad row pointer leaves `beta * y` (or zero), as below
                        let ends = ends.unwrap_or((0, 0));
                        row_mm_fixed::<V, I, W>(row, beta, idx, vals, ends, b, alpha, &mut oob);
                        continue;
                    }
                    match beta {
                        Some(beta) => row.iter_mut().for_each(|o| *o = V::acc_mul(beta, *o)),
                        None => row.iter_mut().for_each(|o| *o = V::acc_zero()),
                    }
                    let Some((a, e)) = ends else {
                        continue;
                    };
                    for (k, (&j, &v)) in (a..).zip(idx[a..e].iter().zip(&vals[a..e])) {
                        prefetch_ahead(b, idx, k, n);
                        let brow = b_row(b, n, j.as_usize(), klast, &mut oob);
                        axpy::<V>(row, V::acc_mul(alpha, v.to_acc()), brow);
                    }
                }
            }
            None => {
                let Ok(mut tmp) = alloc::filled(n, V::acc_zero(), "SpMM accumulator") else {
                    return NO_MEMORY;
                };
                for (r, row) in out.chunks_exact_mut(n).enumerate().take(hi - lo) {
                    tmp.iter_mut().for_each(|t| *t = V::acc_zero());
                    if let Some((a, e)) = range(ptr, lo + r, nnz) {
                        for (k, (&j, &v)) in (a..).zip(idx[a..e].iter().zip(&vals[a..e])) {
                            prefetch_ahead(b, idx, k, n);
                            let brow = b_row(b, n, j.as_usize(), klast, &mut oob);
                            axpy::<V>(&mut tmp, v.to_acc(), brow);
                        }
                    } else {
                        flags |= BAD_PTR;
                    }
                    for (o, &t) in row.iter_mut().zip(&tmp) {
                        match finish(t, *o, scale) {
                            Some(v) => *o = v,
                            None => flags |= OVERFLOW,
                        }
                    }
                }
            }
        }
        flags | if oob { OOB } else { 0 }
    };
    par_rows(ptr, nnz, c, n, &leaf)
}

/// `acc += alpha A B` for CSC buffers (`acc` row-major m x n): on a pool of
/// several threads and more than `2 * PAR_WORK` entries, the rows of `acc` are
/// cut into one range per thread holding about as many entries
/// ([`csc_row_parts`]), and each range reads every column of `A` and adds the
/// entries of its own rows. Each row of `acc` receives the same additions in
/// the same order on any number of threads.
#[allow(clippy::too_many_arguments)]
fn csc_mm<V: Numeric, I: Index, P: Index>(
    ptr: &[P],
    idx: &[I],
    vals: &[V],
    b: &[V],
    n: usize,
    acc: &mut [V::Acc],
    alpha: V::Acc,
) -> u8 {
    let m = acc.len() / n.max(1);
    let threads = rayon::current_num_threads();
    let nnz = vals.len().min(idx.len());
    if threads <= 1 || nnz <= 2 * PAR_WORK || m < 2 {
        return csc_mm_scatter((ptr, idx, vals), (b, n), acc, alpha, (0, m));
    }
    let bounds = csc_row_parts(&idx[..nnz], m, threads);
    let parts = row_parts(acc, &bounds, n);
    use rayon::prelude::*;
    parts
        .into_par_iter()
        .map(|(r0, part)| csc_mm_scatter((ptr, idx, vals), (b, n), part, alpha, (r0, m)))
        .reduce(|| 0, |x, y| x | y)
}

/// `out` (rows of `w` elements) cut at the row `bounds` (`0 = r_0 <= r_1 <=
/// ... <= r_k = out.len() / w`, from [`csc_row_parts`]): each range's first
/// row and its rows.
pub(crate) fn row_parts<'o, T>(
    out: &'o mut [T],
    bounds: &[usize],
    w: usize,
) -> Vec<(usize, &'o mut [T])> {
    let mut parts = Vec::with_capacity(bounds.len().saturating_sub(1));
    let mut rest = out;
    for b in bounds.windows(2) {
        let (mine, tail) = rest.split_at_mut(((b[1] - b[0]) * w).min(rest.len()));
        parts.push((b[0], mine));
        rest = tail;
    }
    parts
}

/// Row bounds `0 = r_0 <= r_1 <= ... <= r_parts = m` that give each range
/// about as many of the row indices `idx` (each below `m`, else not counted),
/// estimated from at most 2^16 of them, evenly spaced, counted in at most 4096
/// bins of rows.
pub(crate) fn csc_row_parts<I: Index>(idx: &[I], m: usize, parts: usize) -> Vec<usize> {
    let bin = m.div_ceil(1 << 12).max(1);
    let mut hist = vec![0usize; m.div_ceil(bin)];
    let step = (idx.len() >> 16).max(1);
    for &i in idx.iter().step_by(step) {
        if let Some(h) = hist.get_mut(i.as_usize() / bin) {
            *h += 1;
        }
    }
    let total: usize = hist.iter().sum();
    let mut bounds = vec![0usize];
    let mut seen = 0usize;
    for (k, &h) in hist.iter().enumerate() {
        seen += h;
        // cut after this bin while it passes the next part's share
        while bounds.len() < parts && total > 0 && seen * parts >= total * bounds.len() {
            bounds.push(((k + 1) * bin).min(m));
        }
    }
    bounds.resize(parts, m);
    bounds.push(m);
    bounds
}

/// Add `alpha * v * B[j, :]` into row `i - r0` of `acc` (the rows `r0..` of an
/// m x n output, as many as `acc` holds) for the CSC entries whose row `i` it
/// holds; an entry with `i >= m` (a tensor built without validation) is
/// flagged. The first argument is the CSC buffers (indptr, indices, values),
/// the second the row-major k x n operand `B` and its width `n`.
fn csc_mm_scatter<V: Numeric, I: Index, P: Index>(
    (ptr, idx, vals): (&[P], &[I], &[V]),
    (b, n): (&[V], usize),
    acc: &mut [V::Acc],
    alpha: V::Acc,
    (r0, m): (usize, usize),
) -> u8 {
    let nnz = vals.len().min(idx.len());
    let rows = acc.len() / n.max(1);
    let (mut flags, mut oob) = (0u8, false);
    for (j, brow) in b
        .chunks_exact(n)
        .enumerate()
        .take(ptr.len().saturating_sub(1))
    {
        let Some((a, e)) = range(ptr, j, nnz) else {
            flags |= BAD_PTR;
            continue;
        };
        for (k, (&i, &v)) in (a..).zip(idx[a..e].iter().zip(&vals[a..e])) {
            prefetch_indexed(acc, idx, k.wrapping_add(ahead(n)), r0, n);
            let i = i.as_usize();
            oob |= i >= m;
            let r = i.wrapping_sub(r0);
            if r < rows {
                axpy::<V>(
                    &mut acc[r * n..r * n + n],
                    V::acc_mul(alpha, v.to_acc()),
                    brow,
                );
            }
        }
    }
    flags | if oob { OOB } else { 0 }
}

/// Scatter `alpha * v * B[col, :]` into row `row` of `acc` for COO entries.
#[allow(clippy::too_many_arguments)]
fn coo_mm_scatter<V: Numeric, I: Index>(
    c: Coords<'_, I>,
    vals: &[V],
    (lo, hi, row0): (usize, usize, usize),
    b: &[V],
    n: usize,
    acc: &mut [V::Acc],
    alpha: V::Acc,
    row_flag: u8,
) -> u8 {
    let (mlast, klast) = (
        (acc.len() / n).wrapping_sub(1),
        (b.len() / n).wrapping_sub(1),
    );
    let (mut bad_row, mut oob) = (false, false);
    let mut put = |acc: &mut [V::Acc], i: usize, j: usize, v: V| {
        let i = i.wrapping_sub(row0);
        bad_row |= i > mlast;
        let s = i.min(mlast) * n;
        let brow = b_row(b, n, j, klast, &mut oob);
        axpy::<V>(&mut acc[s..s + n], V::acc_mul(alpha, v.to_acc()), brow);
    };
    if acc.is_empty() {
        // no row to add into (every entry is out of range)
        return if lo < hi { row_flag } else { 0 };
    }
    // the rows of C and B that the entry `ahead(n)` places further on uses
    // are prefetched (see `ahead`)
    match c.layout {
        CoordLayout::RowMajor => {
            let pairs = c.c[2 * lo..2 * hi].chunks_exact(2).zip(&vals[lo..hi]);
            for (k, (rc, &v)) in (lo..).zip(pairs) {
                let p = k.wrapping_add(ahead(n)).wrapping_mul(2);
                prefetch_indexed(acc, c.c, p, row0, n);
                prefetch_indexed(b, c.c, p.wrapping_add(1), 0, n);
                put(acc, rc[0].as_usize(), rc[1].as_usize(), v);
            }
        }
        CoordLayout::ColumnMajor => {
            let (r, cc) = c.c.split_at(c.nnz.min(c.c.len()));
            // (a coordinate buffer shorter than its entries: only those it has)
            let hi = hi.min(cc.len()).max(lo);
            let entries = r[lo..hi].iter().zip(&cc[lo..hi]).zip(&vals[lo..hi]);
            for (k, ((&i, &j), &v)) in (lo..).zip(entries) {
                prefetch_indexed(acc, r, k.wrapping_add(ahead(n)), row0, n);
                prefetch_ahead(b, cc, k, n);
                put(acc, i.as_usize(), j.as_usize(), v);
            }
        }
    }
    (if bad_row { row_flag } else { 0 }) | if oob { OOB } else { 0 }
}

/// Checks the operand and output lengths of `C = A B` for an `m x k` matrix.
fn check_mm<V>(m: usize, k: usize, b: &[V], n: usize, c_len: usize) -> Result<()> {
    let want_b = k
        .checked_mul(n)
        .ok_or_else(|| Error::shape("SpMM operand", format!("{k} x {n}"), "too large"))?;
    check_len("SpMM operand B (row-major k x n)", b.len(), want_b)?;
    let want_c = m
        .checked_mul(n)
        .ok_or_else(|| Error::shape("SpMM output", format!("{m} x {n}"), "too large"))?;
    check_len("SpMM output C (row-major m x n)", c_len, want_c)
}

#[allow(clippy::too_many_arguments)]
fn csx_mm<V: Numeric, I: Index, P: Index>(
    axis: CompressedAxis,
    shape: &[usize],
    ptr: &[P],
    idx: &[I],
    vals: &[V],
    b: &[V],
    n: usize,
    c: &mut [V],
    scale: Scale<V>,
    fresh: bool,
) -> Result<()> {
    let (m, k) = (shape[0], shape[1]);
    check_mm(m, k, b, n, c.len())?;
    if n == 0 {
        return Ok(());
    }
    let flags = match axis {
        CompressedAxis::Row => csr_mm(ptr, idx, vals, b, n, c, scale),
        CompressedAxis::Column => scatter_into(c, scale, fresh, "SpMM accumulator", |acc| {
            csc_mm(ptr, idx, vals, b, n, acc, alpha_acc(scale))
        })?,
    };
    if flags & NO_MEMORY != 0 {
        return Err(Error::allocation(
            "SpMM accumulator",
            n,
            size_of::<V::Acc>(),
        ));
    }
    check_flags::<V>(flags, "SpMM")
}

/// `C = A B` for a CSR / CSC matrix `A` (m x k) and a dense `B` (k x n, read in
/// place when row-major); `C` is a new row-major m x n tensor. CSR runs row
/// ranges in parallel. CSC splits the rows of `C` between threads (ranges
/// holding about as many entries, from a sample of the row indices): each
/// thread reads every column of `A` and adds the entries of its own rows, so
/// every element of `C` receives the same additions in the same order on any
/// number of threads.
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
    let bv = operand_values(b)?;
    let len = m
        .checked_mul(n)
        .ok_or_else(|| Error::allocation("SpMM result", usize::MAX, size_of::<V>()))?;
    let mut c = alloc::zeroed::<V>(len, "SpMM result")?;
    csx_mm(
        a.axis(),
        a.shape(),
        a.indptr(),
        a.indices(),
        a.values(),
        &bv,
        n,
        &mut c,
        None,
        true,
    )?;
    DenseTensor::try_new(vec![m, n], c.into())
}

/// `C = A B` into the caller's `c` for a CSR / CSC matrix `A` (m x k): `b` is
/// the row-major k x n operand, `c` the row-major m x n result (nothing is
/// allocated for float64 / float32 values).
///
/// ```
/// use arrow_sparse::kernels::spmv::spmm_csx_into;
/// use arrow_sparse::{CompressedAxis, CsxMatrix};
/// // [[1, 0], [0, 2]] as CSR, times [[1, 2, 3], [4, 5, 6]]
/// let a = CsxMatrix::<f32, i32>::try_new(vec![2, 2], CompressedAxis::Row, vec![0, 1, 2].into(), vec![0, 1].into(), vec![1.0, 2.0].into())?;
/// let mut c = [0.0f32; 6];
/// spmm_csx_into(&a, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3, &mut c)?;
/// assert_eq!(c, [1.0, 2.0, 3.0, 8.0, 10.0, 12.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmm_csx_into<V: Numeric, I: Index, P: Index>(
    a: &CsxMatrix<V, I, P>,
    b: &[V],
    n: usize,
    c: &mut [V],
) -> Result<()> {
    csx_mm(
        a.axis(),
        a.shape(),
        a.indptr(),
        a.indices(),
        a.values(),
        b,
        n,
        c,
        None,
        false,
    )
}

fn coo_mm<V: Numeric, I: Index>(
    a: &CooTensor<V, I>,
    b: &[V],
    n: usize,
    c: &mut [V],
    scale: Scale<V>,
    fresh: bool,
) -> Result<()> {
    if a.ndim() != 2 {
        return Err(Error::shape(
            "COO SpMM",
            "a 2-D matrix",
            format!("{}-D", a.ndim()),
        ));
    }
    check_mm(a.shape()[0], a.shape()[1], b, n, c.len())?;
    if n == 0 {
        return Ok(());
    }
    let coords = Coords {
        c: a.coords(),
        layout: a.layout(),
        nnz: a.nnz(),
    };
    let vals = &a.values()[..];
    let nnz = coords.nnz.min(vals.len()).min(coords.c.len() / 2);
    let canonical = a.is_canonical();
    let flags = scatter_into(c, scale, fresh, "SpMM accumulator", |acc| {
        let alpha = alpha_acc(scale);
        // canonical: row ranges in parallel, each into its own rows of C
        coo_row_ranges(
            coords,
            nnz,
            canonical,
            acc,
            n,
            &|lo, hi, row0, out, flag| {
                coo_mm_scatter(coords, vals, (lo, hi, row0), b, n, out, alpha, flag)
            },
        )
    })?;
    check_flags::<V>(flags, "SpMM")
}

/// `C = A B` or the scaled form for a 2-D level tensor: one scatter of rows of
/// `B` over [`co_iterate`](super::co_iterate), as [`level_mv`].
fn level_mm<V: Numeric>(
    a: &AnyLevel,
    b: &[V],
    n: usize,
    c: &mut [V],
    scale: Scale<V>,
) -> Result<()> {
    if a.value_type() != V::TYPE {
        return Err(value_mismatch::<V>(a.value_type()));
    }
    if n == 0 {
        return Ok(());
    }
    let (rl, cl) = row_col_levels(a);
    let alpha = alpha_acc(scale);
    let mut walked = Ok(());
    let flags = scatter_into(c, scale, false, "SpMM accumulator", |acc| {
        let mut bad = false;
        walked = super::co_iterate::<V>(a, &mut |lvl, _, v| {
            let (i, j) = (lvl[rl], lvl[cl]);
            match (acc.get_mut(i * n..(i + 1) * n), b.get(j * n..(j + 1) * n)) {
                (Some(row), Some(brow)) => axpy::<V>(row, V::acc_mul(alpha, v.to_acc()), brow),
                _ => bad = true,
            }
        });
        if bad { OOB } else { 0 }
    })?;
    walked?;
    check_flags::<V>(flags, "SpMM")
}

fn mm<V: Numeric>(a: &AnyTensor, b: &[V], n: usize, c: &mut [V], scale: Scale<V>) -> Result<()> {
    let (m, k) = matrix_shape(a)?;
    check_mm(m, k, b, n, c.len())?;
    let csx = |x: &AnyCsx, c: &mut [V]| -> Result<()> {
        with_csx_slices!(x, V, |ptr, idx, vals| csx_mm(
            x.axis(),
            x.shape(),
            ptr,
            idx,
            vals,
            b,
            n,
            c,
            scale,
            false
        ))
    };
    let coo = |x: &AnyCoo, c: &mut [V]| -> Result<()> {
        with_index_type!(x.index_type(), J => {
            let t = x.downcast::<V, J>().ok_or_else(|| value_mismatch::<V>(x.value_type()))?;
            coo_mm(&t, b, n, c, scale, false)
        })
    };
    match a {
        AnyTensor::Csx(x) => csx(x, c),
        AnyTensor::Coo(x) => coo(x, c),
        AnyTensor::Gcs(g) => csx(g.matrix(), c),
        AnyTensor::Level(l) => level_mm(l, b, n, c, scale),
        AnyTensor::Dm(d) => {
            if !d.views().is_empty() {
                return Err(Error::Unsupported(
                    "SpMM of a DM tensor with views (materialise it first)".into(),
                ));
            }
            match d.storage() {
                AnyTensor::Csx(x) => csx(x, c),
                AnyTensor::Coo(x) if x.shape().len() == 2 => coo(x, c),
                other => Err(Error::Unsupported(format!(
                    "DM SpMM needs CSR / CSC or 2-D COO storage, found {}",
                    other.format()
                ))),
            }
        }
        other => Err(Error::Unsupported(format!(
            "SpMM of a {} tensor",
            other.format()
        ))),
    }
}

/// `C = A B` into the caller's `c` for any matrix [`spmv`] takes: `b` is the
/// row-major k x n operand, `c` the row-major m x n result (GCS / DM: k and m
/// of the reduced matrix). Nothing is allocated for float64 / float32 values.
/// A canonical COO matrix runs row ranges in parallel (cut at row boundaries,
/// each into its own rows of `C`); an unsorted one scatters on one thread.
///
/// ```
/// use arrow_sparse::kernels::spmv::spmm_into;
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let a: AnyTensor = CooTensor::<i64, i32>::from_entries(vec![1, 2], &[(vec![0, 0], 2), (vec![0, 1], 3)])?.into();
/// let mut c = [0i64; 2];
/// spmm_into(&a, &[1, 10, 100, 1000], 2, &mut c)?; // [2, 3] x [[1, 10], [100, 1000]]
/// assert_eq!(c, [302, 3020]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmm_into<V: Numeric>(a: &AnyTensor, b: &[V], n: usize, c: &mut [V]) -> Result<()> {
    mm(a, b, n, c, None)
}

/// The BLAS-style general form `C = alpha A B + beta C` of [`spmm_into`];
/// `beta = 0` overwrites `c` without reading it.
///
/// ```
/// use arrow_sparse::kernels::spmv::spmm_scaled_into;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 0], 1.0), (vec![1, 1], 1.0)])?
///     .to_csx::<i32, i32>(CompressedAxis::Column)?
///     .into();
/// let mut c = [1.0, 1.0, 1.0, 1.0];
/// spmm_scaled_into(3.0, &a, &[1.0, 2.0, 3.0, 4.0], 2, -1.0, &mut c)?; // 3 A B - C
/// assert_eq!(c, [2.0, 5.0, 8.0, 11.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn spmm_scaled_into<V: Numeric>(
    alpha: V,
    a: &AnyTensor,
    b: &[V],
    n: usize,
    beta: V,
    c: &mut [V],
) -> Result<()> {
    mm(a, b, n, c, Some((alpha, beta)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Indices past an operand's end (possible only in tensors built without
    /// validation) are flagged without any access out of bounds (no panic), also
    /// when the operand or the output is empty; in-range buffers give the exact
    /// products.
    #[test]
    fn out_of_range_indices_are_flagged_even_with_empty_operands() {
        let (ptr, vals) = ([0i32, 1, 2], [1.0f64, 2.0]);
        let x3 = [1.0, 2.0, 3.0];
        // an x larger than half the level-2 cache is prefetched (`prefetches`)
        let big = vec![1.0f64; crate::cache::cache_sizes().l2 / 2 / 8 + 1];
        let past = big.len() as i32;
        let cases = [([0i32, 5], &x3[..]), ([0, 0], &[][..]), ([3, 1], &x3[..])];
        for (idx, x) in cases.into_iter().chain([([0, past], &big[..])]) {
            let mut y = [0.0; 2];
            assert_eq!(
                csr_mv(&ptr, &idx, &vals, x, &mut y, None) & OOB,
                OOB,
                "{idx:?} {}",
                x.len()
            );
        }
        let mut y = [0.0; 2];
        assert_eq!(
            csr_mv(&ptr, &[0i32, past - 1], &vals, &big, &mut y, None),
            0
        );
        assert_eq!(y, [1.0, 2.0]);
        let mut y = [0.0; 2];
        assert_eq!(csr_mv(&ptr, &[0i32, 2], &vals, &x3, &mut y, None), 0);
        assert_eq!(y, [1.0, 6.0]);
        // no entries: an empty x is fine
        let mut y = [7.0; 2];
        assert_eq!(
            csr_mv(
                &[0i32, 0, 0],
                &[] as &[i32],
                &[] as &[f64],
                &[],
                &mut y,
                None
            ),
            0
        );
        assert_eq!(y, [0.0, 0.0]);

        // CSC: 1 column holding rows 1 and 7 of 2; an empty output
        let (p2, v2) = ([0i32, 2], [1.0f64, 1.0]);
        let mut acc = [0.0; 2];
        let f = csc_scatter(&p2, &[1i32, 7], &v2, &[2.0], &mut acc, 1.0);
        assert_eq!(f & OOB, OOB);
        // an output larger than half the level-2 cache is prefetched
        let mut acc = vec![0.0; big.len()];
        let f = csc_scatter(&p2, &[1i32, past], &v2, &[2.0], &mut acc, 1.0);
        assert_eq!(f & OOB, OOB);
        assert_eq!(
            csc_scatter(&p2, &[1i32, past - 1], &v2, &[2.0], &mut acc, 1.0),
            0
        );
        assert_eq!((acc[1], acc[big.len() - 1]), (4.0, 2.0));
        let mut none: [f64; 0] = [];
        assert_eq!(
            csc_scatter(&[0i32, 1], &[0i32], &[1.0f64], &[2.0], &mut none, 1.0) & OOB,
            OOB
        );
        let mut acc = [0.0; 2];
        assert_eq!(
            csc_scatter(
                &[0i32, 2],
                &[1i32, 0],
                &[1.0f64, 3.0],
                &[2.0],
                &mut acc,
                1.0
            ),
            0
        );
        assert_eq!(acc, [6.0, 2.0]);

        // COO (row-major pairs): a column past x, a row past the output, empty
        // sides, with the output prefetched or not; a column past an x large
        // enough to be prefetched; exact products through both x
        fn c(v: &[i32]) -> Coords<'_, i32> {
            Coords {
                c: v,
                layout: CoordLayout::RowMajor,
                nnz: v.len() / 2,
            }
        }
        let wide: Vec<f64> = x3.iter().chain(&big[3..]).copied().collect();
        for pf in [false, true] {
            let run = |pairs: &[i32], x: &[f64], acc: &mut [f64]| {
                let vals = vec![1.0f64; pairs.len() / 2];
                coo_scatter(c(pairs), &vals, 0, vals.len(), 0, x, acc, 1.0, OOB, pf)
            };
            let mut acc = [0.0; 2];
            assert_eq!(run(&[0, 3], &x3, &mut acc), OOB);
            assert_eq!(run(&[2, 0], &x3, &mut acc), OOB);
            assert_eq!(run(&[0, 0], &[], &mut acc), OOB);
            assert_eq!(run(&[0, 0], &x3, &mut none), OOB);
            assert_eq!(run(&[0, past], &big, &mut acc), OOB);
            assert_eq!(acc, [0.0; 2]);
            for x in [&x3[..], &wide[..]] {
                let mut acc = [0.0; 2];
                assert_eq!(run(&[1, 2, 0, 1, 0, 0], x, &mut acc), 0);
                assert_eq!(acc, [3.0, 3.0]);
            }
        }
    }

    /// Row pointers that decrease, point past the entries or are too few
    /// (possible only in matrices built without validation) flag the row (or
    /// the rows) as a bad indptr, without a panic; the other rows get their
    /// exact sums, scaled or not, on one thread and on several.
    #[test]
    fn bad_row_pointers_are_flagged_and_other_rows_computed() {
        let (idx, vals, x) = ([0i32, 1, 1], [1.0f64, 2.0, 4.0], [10.0, 100.0]);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                // rows: [0, 2) ok, [2, 1) decreasing, [1, 9) past the entries, [1, 3) ok
                let ptr = [0i32, 2, 1, 9];
                let mut y = [0.0; 3];
                assert_eq!(csr_mv(&ptr, &idx, &vals, &x, &mut y, None), BAD_PTR);
                assert_eq!(y, [210.0, 0.0, 0.0]);
                let ptr = [0i32, 2, 1, 3];
                let mut y = [1.0; 3];
                let flags = csr_mv(&ptr, &idx, &vals, &x, &mut y, Some((2.0, 1.0)));
                assert_eq!((flags, y), (BAD_PTR, [421.0, 1.0, 1201.0]));
                // fewer pointers than rows + 1
                let mut y = [0.0; 3];
                assert_eq!(csr_mv(&ptr[..2], &idx, &vals, &x, &mut y, None), BAD_PTR);
                let mut y = [0.0; 2];
                assert_eq!(csr_mv(&[0i32, 1, 3], &idx, &vals, &x, &mut y, None), 0);
                assert_eq!(y, [10.0, 600.0]);
            });
        }
    }

    /// CSR SpMV with an `x` larger than half the level-2 cache and enough
    /// entries for the prefetch trial ([`prefetch_trial`]): the rows timed both
    /// ways and the rest give the sums of a plain loop (integer-valued floats,
    /// exact), plain and scaled, on one and two threads; a decreasing row
    /// pointer and an index past `x` within the timed rows are flagged, and
    /// so are they past them; a matrix too small for the trial gives the same.
    #[test]
    fn prefetch_trial_rows_match_a_plain_loop_and_keep_their_flags() {
        let cols = crate::cache::cache_sizes().l2 / 8 + 1;
        let x: Vec<f64> = (0..cols).map(|j| (j % 13) as f64 - 6.0).collect();
        assert!(prefetches(&x));
        let mut rnd = xorshift(7);
        let rows = 120_000usize;
        let mut ptr = vec![0i64];
        let (mut idx, mut vals) = (Vec::new(), Vec::new());
        for r in 0..rows {
            // rows of 0 to 20 entries, and a few long ones
            let len = if r % 5000 == 3 {
                3000
            } else {
                rnd(21) as usize
            };
            for _ in 0..len {
                idx.push(rnd(cols as u64) as i64);
                vals.push(rnd(7) as f64 - 3.0);
            }
            ptr.push(idx.len() as i64);
        }
        assert!(
            idx.len() >= TRIAL_SHARE * TRIAL_MIN,
            "{} entries",
            idx.len()
        );
        let plain = |ptr: &[i64], y0: &[f64], scale: Scale<f64>| -> Vec<f64> {
            (0..rows)
                .map(|r| {
                    let (a, b) = (ptr[r] as usize, ptr[r + 1] as usize);
                    let dot: f64 = (a..b).map(|k| vals[k] * x[idx[k] as usize]).sum();
                    match scale {
                        Some((alpha, beta)) => alpha * dot + beta * y0[r],
                        None => dot,
                    }
                })
                .collect()
        };
        let y0: Vec<f64> = (0..rows).map(|r| (r % 3) as f64).collect();
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                for scale in [None, Some((2.0, -1.0))] {
                    let mut y = y0.clone();
                    assert_eq!(csr_mv(&ptr, &idx, &vals, &x, &mut y, scale), 0);
                    assert_eq!(y, plain(&ptr, &y0, scale), "{threads} threads");
                    // too few entries for a trial: the same sums
                    let small = rows / 40;
                    let mut y = y0[..small].to_vec();
                    let end = ptr[small] as usize;
                    let flags =
                        csr_mv(&ptr[..=small], &idx[..end], &vals[..end], &x, &mut y, scale);
                    assert_eq!(flags, 0);
                    assert_eq!(y, plain(&ptr, &y0, scale)[..small]);
                }
                // problems in the first rows (timed) and in the last ones
                for row in [2, rows - 2] {
                    let mut bad = ptr.clone();
                    bad[row + 1] = bad[row] - 1;
                    let mut y = y0.clone();
                    assert_eq!(csr_mv(&bad, &idx, &vals, &x, &mut y, None), BAD_PTR);
                    let mut far = idx.clone();
                    far[ptr[row] as usize] = cols as i64;
                    assert!(ptr[row + 1] > ptr[row]);
                    let mut y = y0.clone();
                    assert_eq!(csr_mv(&ptr, &far, &vals, &x, &mut y, None), OOB);
                }
            });
        }
    }

    /// CSC SpMM with the rows of C split between threads: on any number of
    /// threads, each element is the exact sum of an independent loop (integer-
    /// valued floats, so any order gives the same value), with rows without
    /// entries at both ends, scaled by `alpha` or not; an index past the last
    /// row is flagged whichever part reads it.
    #[test]
    fn csc_spmm_splits_rows_between_threads_with_exact_sums() {
        let (m, k, n) = (5000usize, 300usize, 3usize);
        // column j holds rows (j * 7 + t * t) % (m - 20) + 10 for t < 250: sorted,
        // distinct within a column, rows 0..10 and the last 10 never used
        let mut ptr = vec![0i32];
        let (mut idx, mut vals) = (Vec::new(), Vec::new());
        for j in 0..k {
            let mut rows: Vec<i32> = (0..250)
                .map(|t| ((j * 7 + t * t) % (m - 20) + 10) as i32)
                .collect();
            rows.sort_unstable();
            rows.dedup();
            for &r in &rows {
                idx.push(r);
                vals.push(((r as usize + j) % 5) as f64 - 2.0);
            }
            ptr.push(idx.len() as i32);
        }
        assert!(idx.len() > 2 * PAR_WORK);
        let b: Vec<f64> = (0..k * n).map(|x| (x % 11) as f64).collect();
        let mut want = vec![0.0f64; m * n];
        for j in 0..k {
            for e in ptr[j] as usize..ptr[j + 1] as usize {
                for c in 0..n {
                    want[idx[e] as usize * n + c] += vals[e] * b[j * n + c];
                }
            }
        }
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut c = vec![0.0f64; m * n];
                assert_eq!(csc_mm(&ptr, &idx, &vals, &b, n, &mut c, 1.0), 0);
                assert!(c == want, "{threads} threads");
                let mut c = vec![0.0f64; m * n];
                assert_eq!(csc_mm(&ptr, &idx, &vals, &b, n, &mut c, 2.0), 0);
                assert!(c.iter().zip(&want).all(|(x, w)| *x == 2.0 * w));
                // an index past the last row, in the middle of the entries
                let mut bad = idx.clone();
                bad[idx.len() / 2] = m as i32;
                let mut c = vec![0.0f64; m * n];
                assert_eq!(csc_mm(&ptr, &bad, &vals, &b, n, &mut c, 1.0) & OOB, OOB);
            });
        }
        // the row bounds: increasing, 0 to m, one range per part
        for parts in [1, 2, 3, 7] {
            let bounds = csc_row_parts(&idx, m, parts);
            assert_eq!(bounds.len(), parts + 1);
            assert_eq!((bounds[0], bounds[parts]), (0, m));
            assert!(bounds.windows(2).all(|w| w[0] <= w[1]));
        }
        // all entries in one row, or none: every part but one empty
        assert_eq!(csc_row_parts(&[4i32; 100], 10, 2), vec![0, 5, 10]);
        assert_eq!(csc_row_parts::<i32>(&[], 10, 3), vec![0, 10, 10, 10]);
    }

    /// CSR SpMM at every width with its own loop (4, 8, 16) and around them:
    /// bit for bit the sums of a plain reference (`beta * old`, then `alpha *
    /// v * b` added entry by entry in storage order), with unsorted rows,
    /// empty rows, `f64` and `f32`, every scale form, on one thread and three;
    /// a bad row pointer and an index past `B` are flagged as by the general
    /// loop.
    #[test]
    fn csr_spmm_fixed_widths_match_a_plain_reference_bit_for_bit() {
        fn run<V: Numeric + From<i8>>() {
            let (m, k) = (300usize, 97usize);
            let mut ptr = vec![0i64];
            let (mut idx, mut vals) = (Vec::<i32>::new(), Vec::<V>::new());
            for r in 0..m {
                // rows of 0..=40 entries, every fifth empty, columns unsorted
                let len = if r % 5 == 0 { 0 } else { (r * 13) % 41 };
                for t in 0..len {
                    idx.push(((r * 31 + t * 57) % k) as i32);
                    vals.push(V::from(((r + 3 * t) % 9) as i8 - 4));
                }
                ptr.push(idx.len() as i64);
            }
            for n in [1usize, 3, 4, 5, 8, 9, 16, 17] {
                let b: Vec<V> = (0..k * n)
                    .map(|x| V::from(((x * 7) % 13) as i8 - 6))
                    .collect();
                let old: Vec<V> = (0..m * n).map(|x| V::from((x % 5) as i8 - 2)).collect();
                let (two, three) = (V::from(2), V::from(3));
                for scale in [None, Some((two, V::from(0))), Some((two, three))] {
                    let mut want = old.clone();
                    for r in 0..m {
                        for c in 0..n {
                            let mut s = match scale {
                                Some((_, beta)) if !beta.is_zero() => {
                                    V::acc_mul(beta.to_acc(), old[r * n + c].to_acc())
                                }
                                _ => V::acc_zero(),
                            };
                            for e in ptr[r] as usize..ptr[r + 1] as usize {
                                let v = V::acc_mul(alpha_acc(scale), vals[e].to_acc());
                                let x = b[idx[e] as usize * n + c].to_acc();
                                s = V::acc_add(s, V::acc_mul(v, x));
                            }
                            want[r * n + c] = V::from_acc(s).unwrap();
                        }
                    }
                    for threads in [1, 3] {
                        let pool = rayon::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .build()
                            .unwrap();
                        let mut c = old.clone();
                        let flags =
                            pool.install(|| csr_mm(&ptr, &idx, &vals, &b, n, &mut c, scale));
                        assert_eq!(flags, 0);
                        assert!(c == want, "n = {n}, {scale:?}, {threads} threads");
                    }
                }
                // an index past B, and a row pointer past the entries
                let mut bad = idx.clone();
                bad[idx.len() / 2] = k as i32;
                let mut c = old.clone();
                assert_eq!(
                    csr_mm(&ptr, &bad, &vals, &b, n, &mut c, None) & OOB,
                    OOB,
                    "n = {n}"
                );
                let mut bad_ptr = ptr.clone();
                bad_ptr[m / 2] = i64::MAX;
                let mut c = old.clone();
                let flags = csr_mm(&bad_ptr, &idx, &vals, &b, n, &mut c, None);
                assert_eq!(flags & BAD_PTR, BAD_PTR, "n = {n}");
            }
        }
        run::<f64>();
        run::<f32>();
    }

    #[test]
    fn prefetches_never_panic_on_any_index_or_position() {
        let x = [1.0f64; 300];
        let idx: Vec<i64> = (0..400)
            .map(|k| [0, 299, 300, -1, i64::MAX][k % 5])
            .collect();
        for k in [
            0,
            1,
            250,
            271,
            272,
            399,
            400,
            usize::MAX - AHEAD,
            usize::MAX - AHEAD_ROWS,
            383,
            384,
            usize::MAX,
        ] {
            for w in [1, 3, usize::MAX] {
                prefetch_ahead(&x, &idx, k, w);
                for off in [0, 1, 300, usize::MAX] {
                    prefetch_indexed(&x, &idx, k, off, w);
                    prefetch_element(&x, &idx, k, off);
                }
            }
        }
        prefetch_ahead::<f64, i32>(&[], &[5], 0, 1);
    }

    /// Numbers below `n` from a xorshift generator started at `seed` (not 0).
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// The gather and scatter loops that read their prefetch indices beside
    /// their own entries ([`ahead_of`]) compute what the plain loops compute,
    /// stop at the same bad index, and prefetch nothing near the end; runs
    /// with a plain tail ([`look_ahead`]) stop their look-ahead there.
    #[test]
    fn prefetching_row_and_column_loops_match_the_plain_ones() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let n = 700; // x and the scatter's target
        let mut ptr = vec![0usize];
        while *ptr.last().unwrap() < 3000 {
            ptr.push(ptr.last().unwrap() + next(41) as usize);
        }
        let nnz = *ptr.last().unwrap();
        let idx: Vec<i32> = (0..nnz).map(|_| next(n as u64) as i32).collect();
        let vals: Vec<f64> = (0..nnz).map(|_| next(1000) as f64 / 7.0 - 50.0).collect();
        let x: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / 3.0).collect();
        // a valid matrix, then an index past x early, late, and in the last AHEAD
        for bad_at in [None, Some(3), Some(nnz / 2), Some(nnz - 2)] {
            let mut idx = idx.clone();
            if let Some(k) = bad_at {
                idx[k] = n as i32 + 5;
            }
            let (mut plain_acc, mut pf_acc) = (vec![0.5f64; n], vec![0.5f64; n]);
            // the flags of the rows (gathers) and of the columns (scatters)
            let (mut flags_plain, mut flags_pf) = (vec![], vec![]);
            for w in ptr.windows(2) {
                let ab = (w[0], w[1]);
                let mut bad = [false; 4];
                let plain = row_dot::<f64, i32, false>(&idx, &vals, ab, &x, &mut bad[0]);
                let pf = row_dot::<f64, i32, true>(&idx, &vals, ab, &x, &mut bad[1]);
                assert_eq!(plain.to_bits(), pf.to_bits(), "row {ab:?}");
                let xj = 1.0 + w[0] as f64 / 11.0;
                let (plain, pf) = (&mut plain_acc, &mut pf_acc);
                column_scatter::<f64, i32, false>(&idx, &vals, ab, xj, plain, &mut bad[2]);
                column_scatter::<f64, i32, true>(&idx, &vals, ab, xj, pf, &mut bad[3]);
                flags_plain.push((bad[0], bad[2]));
                flags_pf.push((bad[1], bad[3]));
            }
            assert_eq!(flags_plain, flags_pf, "{bad_at:?}");
            let bad = usize::from(bad_at.is_some());
            assert_eq!(flags_pf.iter().filter(|f| f.0).count(), bad);
            assert_eq!(flags_pf.iter().filter(|f| f.1).count(), bad);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&plain_acc), bits(&pf_acc), "{bad_at:?}");
        }
        assert_eq!(ahead_of(&idx, 0, 5), Some(&idx[AHEAD..AHEAD + 5]));
        assert_eq!(ahead_of(&idx, nnz - AHEAD, nnz), None);
        assert_eq!(ahead_of(&idx, usize::MAX - 1, usize::MAX), None);
        // runs with a plain tail: the look-ahead stops AHEAD entries before
        // the end of the indices, whatever the run's end
        let rest = nnz - AHEAD;
        assert_eq!(
            look_ahead(&idx, 1, (0, 5)),
            Some((&idx[AHEAD..AHEAD + 5], 5))
        );
        assert_eq!(
            look_ahead(&idx, 1, (3, nnz)),
            Some((&idx[3 + AHEAD..], rest))
        );
        assert_eq!(look_ahead(&idx, 1, (rest, nnz)), None);
        assert_eq!(look_ahead(&idx, 1, (usize::MAX - 1, usize::MAX)), None);
        assert_eq!(look_ahead(&idx[..AHEAD], 1, (0, AHEAD)), None);
        // two indices per entry (row-major COO coordinates)
        let half = nnz / 2 - AHEAD;
        let pairs = look_ahead(&idx, 2, (1, nnz));
        assert_eq!(
            pairs,
            Some((&idx[2 * (1 + AHEAD)..2 * (half + AHEAD)], half))
        );
        assert_eq!(look_ahead(&idx, 2, (half, nnz)), None);
    }

    /// COO's entry loops with their prefetches (operand, output or both, the
    /// prefetch indices read beside the entries) compute what the plain loop
    /// computes, in either coordinate layout, for ranges anywhere in the
    /// entries (near the end too), and flag a bad entry alike.
    #[test]
    fn prefetching_coo_loops_match_the_plain_one() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let (rows, cols, nnz) = (300usize, 500usize, 2000usize);
        let ij: Vec<(i64, i64)> = (0..nnz)
            .map(|_| (next(rows as u64) as i64, next(cols as u64) as i64))
            .collect();
        let vals: Vec<f64> = (0..nnz).map(|_| next(1000) as f64 / 7.0 - 50.0).collect();
        let x: Vec<f64> = (0..cols).map(|i| 1.0 + i as f64 / 3.0).collect();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for bad_at in [None, Some(7), Some(nnz - 3)] {
            let mut ij = ij.clone();
            if let Some(k) = bad_at {
                ij[k].1 = cols as i64 + 2;
            }
            let row_major: Vec<i64> = ij.iter().flat_map(|&(i, j)| [i, j]).collect();
            let col_major: Vec<i64> = ij
                .iter()
                .map(|p| p.0)
                .chain(ij.iter().map(|p| p.1))
                .collect();
            for (layout, c) in [
                (CoordLayout::RowMajor, &row_major),
                (CoordLayout::ColumnMajor, &col_major),
            ] {
                let coords = Coords { c, layout, nnz };
                for (lo, hi) in [
                    (0, nnz),
                    (0, 5),
                    (100, 1500),
                    (nnz - 200, nnz),
                    (nnz - 5, nnz),
                ] {
                    let e = (coords, &vals[..], lo, hi, 0);
                    let run = |pf: u8| {
                        let mut acc = vec![0.25f64; rows];
                        let bad = match pf {
                            0 => coo_entries::<f64, i64, false, false>(e, &x, &mut acc, 1.5),
                            1 => coo_entries::<f64, i64, false, true>(e, &x, &mut acc, 1.5),
                            2 => coo_entries::<f64, i64, true, false>(e, &x, &mut acc, 1.5),
                            _ => coo_entries::<f64, i64, true, true>(e, &x, &mut acc, 1.5),
                        };
                        (bad, bits(&acc))
                    };
                    let plain = run(0);
                    let hit = bad_at.is_some_and(|k| (lo..hi).contains(&k));
                    assert_eq!(plain.0, hit, "{layout:?} {lo}..{hi} {bad_at:?}");
                    assert_ne!(plain.1, bits(&[0.25; 300]), "{layout:?} {lo}..{hi}");
                    for pf in 1..4 {
                        assert!(run(pf) == plain, "{layout:?} {lo}..{hi} {bad_at:?} pf {pf}");
                    }
                }
            }
        }
    }

    /// Targets up to half the level-2 cache are not prefetched; larger ones are.
    #[test]
    fn only_targets_larger_than_half_the_level_2_cache_are_prefetched() {
        let half = crate::cache::cache_sizes().l2 / 2;
        assert!(!prefetches(&vec![0u8; half]));
        assert!(prefetches(&vec![0u8; half + 1]));
        assert!(!prefetches(&vec![0.0f64; half / 8]));
        assert!(prefetches(&vec![0.0f64; half / 8 + 1]));
    }

    /// The row split halves the work: on 200,000 rows of 10 entries the leaves
    /// number about (work / PAR_WORK), not one per row. (The split once compared
    /// the indptr with a target that included the row count, peeled one row off at
    /// a time, and overflowed the stack of a debug build on a 2·10^6-nnz matrix.)
    #[test]
    fn par_rows_splits_the_work_in_halves() {
        let rows = 200_000usize;
        let ptr: Vec<i32> = (0..=rows as i32).map(|r| r * 10).collect();
        let nnz = rows * 10;
        let mut y = vec![0u8; rows];
        let leaves = AtomicUsize::new(0);
        let covered = AtomicUsize::new(0);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| {
            par_rows(&ptr, nnz, &mut y, 1, &|lo, hi, out: &mut [u8]| {
                assert_eq!(out.len(), hi - lo);
                leaves.fetch_add(1, Ordering::Relaxed);
                covered.fetch_add(hi - lo, Ordering::Relaxed);
                0
            })
        });
        assert_eq!(covered.load(Ordering::Relaxed), rows);
        let work = nnz + rows;
        let leaves = leaves.load(Ordering::Relaxed);
        assert!(
            leaves <= 4 * work / PAR_WORK + 4,
            "{leaves} leaves for {work} work"
        );
    }
}

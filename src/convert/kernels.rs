//! The conversion kernels, public as [`crate::kernels::convert`] (documented
//! there): counting and radix sorts, zero-copy shortcuts, parallel passes.

use crate::tensor::{EntryOrder, TensorOptions};
use arrow_buffer::ScalarBuffer;
use rayon::prelude::*;

use crate::buffer::advise_huge_pages;
use crate::cache::{CacheSizes, cache_sizes};
use crate::error::{Error, Result};
use crate::tensor::{CompressedAxis, CooTensor, CoordLayout, CsfTensor, CsxMatrix, DenseTensor};
use crate::types::{Index, Value};

/// Below this many entries, passes run on one thread.
const PARALLEL_MIN: usize = 1 << 18;

fn alloc_zeroed(n: usize, what: &str) -> Result<Vec<usize>> {
    crate::alloc::filled(n, 0usize, what)
}

fn to_index<T: Index>(x: usize, what: &str) -> Result<T> {
    T::try_from_usize(x)
        .ok_or_else(|| Error::overflow(what.to_string(), x.to_string(), T::TYPE.name()))
}

/// Where coordinate `d` of the entries lies in a COO coordinate buffer: entry
/// `k`'s is at `base + stride * k`, `(base, stride)` returned.
#[inline(always)]
fn coord_place(layout: CoordLayout, nnz: usize, ndim: usize, d: usize) -> (usize, usize) {
    match layout {
        CoordLayout::RowMajor => (d, ndim),
        CoordLayout::ColumnMajor => (d * nnz, 1),
    }
}

/// Coordinate `d` of every entry, as a closure over the raw buffer.
#[inline(always)]
fn coord_fn<I: Index>(
    coords: &[I],
    layout: CoordLayout,
    nnz: usize,
    ndim: usize,
    d: usize,
) -> impl Fn(usize) -> usize + Sync + '_ {
    let (base, stride) = coord_place(layout, nnz, ndim, d);
    move |k| coords[base + stride * k].as_usize()
}

/// The error for the entry at `position` whose key is not below `extent`.
fn key_out_of_range(position: usize, key: usize, extent: usize) -> Error {
    Error::IndexOutOfBounds {
        buffer: "coordinates".into(),
        position,
        // `as_usize` sign-extended negative coordinates: report them as such
        value: key as isize as i128,
        bound: extent as u64,
    }
}

/// Per-key counts turned into start offsets (`offsets[key]`), with the total.
fn histogram_of<I: Index, V: Value>(src: &impl Source<I, V>, extent: usize) -> Result<Vec<usize>> {
    let mut counts = alloc_zeroed(extent + 1, "histogram")?;
    let mut bad: Option<(usize, usize)> = None;
    let mut k = 0usize;
    src.keys(0, src.len(), |c| {
        if c >= extent {
            bad.get_or_insert((k, c));
        } else {
            counts[c + 1] += 1;
        }
        k += 1;
    });
    if let Some((k, c)) = bad {
        return Err(key_out_of_range(k, c, extent));
    }
    for i in 1..=extent {
        counts[i] += counts[i - 1];
    }
    Ok(counts)
}

/// Per-key counts turned into start offsets, for keys given by a closure.
fn histogram(
    n: usize,
    extent: usize,
    key: &(impl Fn(usize) -> usize + Sync),
) -> Result<Vec<usize>> {
    let mut counts = alloc_zeroed(extent + 1, "histogram")?;
    for k in 0..n {
        let c = key(k);
        if c >= extent {
            return Err(key_out_of_range(k, c, extent));
        }
        counts[c + 1] += 1;
    }
    for i in 1..=extent {
        counts[i] += counts[i - 1];
    }
    Ok(counts)
}

/// Split keys `0..extent` into at most `parts` ranges of about equal entry counts.
fn bands(offsets: &[usize], parts: usize) -> Vec<(usize, usize)> {
    let extent = offsets.len() - 1;
    let total = offsets[extent];
    let mut out = Vec::new();
    let mut start = 0;
    for p in 1..=parts {
        let target = total * p / parts;
        let end = if p == parts {
            extent
        } else {
            offsets
                .partition_point(|&o| o <= target)
                .saturating_sub(1)
                .clamp(start, extent)
        };
        if end > start || p == parts {
            out.push((start, end));
            start = end;
        }
    }
    out
}

/// The entries a scatter reads, in their storage order: the key (the coordinate
/// the output is compressed by), the minor coordinate and the value.
trait Source<I, V>: Sync {
    /// Number of entries.
    fn len(&self) -> usize;
    /// An upper bound (exclusive) of the minor indices of valid input.
    fn minor_extent(&self) -> usize;
    /// Calls `f(key)` for entries `lo..hi`, in order.
    fn keys(&self, lo: usize, hi: usize, f: impl FnMut(usize));
    /// Calls `f(key, minor, value)` for entries `lo..hi`, in order.
    fn entries(&self, lo: usize, hi: usize, f: impl FnMut(usize, I, V));
}

/// COO coordinates: key and minor are two of the coordinate dimensions.
struct CooSource<'a, I, V> {
    coords: &'a [I],
    layout: CoordLayout,
    nnz: usize,
    major: usize,
    minor: usize,
    minor_extent: usize,
    vals: &'a [V],
}

impl<I: Index, V: Value> Source<I, V> for CooSource<'_, I, V> {
    fn len(&self) -> usize {
        self.nnz
    }
    fn minor_extent(&self) -> usize {
        self.minor_extent
    }
    #[inline]
    fn keys(&self, lo: usize, hi: usize, f: impl FnMut(usize)) {
        (lo..hi)
            .map(coord_fn(self.coords, self.layout, self.nnz, 2, self.major))
            .for_each(f);
    }
    /// One loop for both layouts ([`coord_place`]), so that `f` has a single
    /// call site: with a loop per layout, the scatter's per-entry closure was
    /// not inlined and was called once per entry, reloading its captures
    /// (measured: COO -> CSR of 10^7 shuffled entries, one thread, 97.9-104.9
    /// ms against 92.0-98.5 ms).
    #[inline]
    fn entries(&self, lo: usize, hi: usize, mut f: impl FnMut(usize, I, V)) {
        let (key_at, stride) = coord_place(self.layout, self.nnz, 2, self.major);
        let (minor_at, _) = coord_place(self.layout, self.nnz, 2, self.minor);
        for (k, &x) in (lo..hi).zip(&self.vals[lo..hi]) {
            let key = self.coords[key_at + stride * k].as_usize();
            f(key, self.coords[minor_at + stride * k], x);
        }
    }
}

/// A CSR / CSC matrix read as entries: key = its minor index, minor = the row
/// (column) the entry belongs to, taken from indptr (no expanded copy).
struct CsxSource<'a, I, P, V> {
    ptr: &'a [P],
    idx: &'a [I],
    vals: &'a [V],
}

impl<I: Index, P: Index, V: Value> Source<I, V> for CsxSource<'_, I, P, V> {
    fn len(&self) -> usize {
        self.idx.len()
    }
    fn minor_extent(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }
    #[inline]
    fn keys(&self, lo: usize, hi: usize, mut f: impl FnMut(usize)) {
        self.idx[lo..hi].iter().for_each(|x| f(x.as_usize()));
    }
    #[inline]
    fn entries(&self, lo: usize, hi: usize, mut f: impl FnMut(usize, I, V)) {
        if lo >= hi {
            return;
        }
        // the row holding entry `lo`: the last r with ptr[r] <= lo (indptr was
        // checked to be non-decreasing and within nnz)
        let mut r = self
            .ptr
            .partition_point(|p| p.as_usize() <= lo)
            .saturating_sub(1);
        let mut k = lo;
        while k < hi && r + 1 < self.ptr.len() {
            let end = self.ptr[r + 1].as_usize().min(hi);
            let row = I::usize_as(r);
            for (x, &v) in self.idx[k..end.max(k)]
                .iter()
                .zip(&self.vals[k..end.max(k)])
            {
                f(x.as_usize(), row, v);
            }
            k = k.max(end);
            r += 1;
        }
    }
}

/// How a scatter of `n` entries over `extent` keys is blocked: keys are grouped
/// into `buckets` ranges of `1 << shift` consecutive keys; a heavy bucket is cut
/// into slots of no fewer than `1 << min_slot` keys ([`slot_shifts`]), the
/// ranges pass 0 counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    shift: u32,
    buckets: usize,
    min_slot: u32,
}

/// The partitioning plan from the data and the cache (`None`: scatter directly).
///
/// A direct counting scatter writes each entry to a random place among `n`; once
/// the output is larger than the cache every write misses. The partitioned
/// scatter first splits the entries by key range into buckets, aiming at buckets
/// whose output segment, entries and key cursors fit in half of the level-2 cache
/// (so that the second pass scatters in cache). The first pass writes one
/// sequential stream per bucket and output array (`streams` of them: the minor
/// indices, the values and, unless packed with the indices, the keys), and each
/// stream keeps its current 64-byte line open: the buckets are at most as many as
/// the level-1 data cache holds those lines for. More buckets than that is the
/// costlier choice: every write then misses the level-1 cache (measured on a
/// 2-core EPYC with 32 KiB of level-1 and 1 MiB of level-2 data cache, 10^7
/// entries over 10^6 keys: the first pass alone took 65-78 ms with 489 or 977
/// buckets and 35-39 ms with 245 or 123, and a whole CSR -> CSC 120-124 ms with
/// the 977 buckets that a quarter of the level-2 cache allowed against 103-108 ms
/// with 245). When the level-1 limit makes the buckets larger than the level-2
/// aim, the second pass works in the next cache level instead, which costs less.
fn plan(
    n: usize,
    extent: usize,
    out_bytes: usize,
    streams: usize,
    caches: CacheSizes,
) -> Option<Plan> {
    // a bucket's entries in pass 2: the segment (key u32 + minor + value) and the
    // thread's copy of it (minor + value)
    let per_entry = 4 + 2 * out_bytes;
    let budget = (caches.l2 / 2).max(4096);
    let wanted = n.saturating_mul(per_entry).div_ceil(budget);
    let max_fanout = (caches.l1 / (streams.max(1) * 64)).clamp(16, 4096);
    if wanted <= 1 || extent <= 2 * max_fanout.min(wanted.next_power_of_two()) {
        return None; // fits the cache, or few enough keys to stream directly
    }
    let target = wanted.next_power_of_two().min(1usize << max_fanout.ilog2());
    let mut shift = 0u32;
    while extent.div_ceil(1usize << shift) > target {
        shift += 1;
    }
    if shift > 32 {
        return None; // relative keys must fit u32
    }
    Some(Plan {
        shift,
        buckets: extent.div_ceil(1usize << shift),
        // pass 2 writes two streams per key of a slot (minor indices, values);
        // pass 0 counts ranges of this many keys, at most 16 a bucket
        min_slot: (caches.l1 / (2 * 64))
            .max(1)
            .ilog2()
            .max(shift.saturating_sub(RANGES_LOG2)),
    })
}

/// Stable counting scatter by key: every entry (in storage order) goes to the
/// next free slot of its key, keys in increasing order. Returns the start offsets
/// (`offsets[key]`, `extent + 1` of them, the last one the total) with the
/// scattered minor indices and values. Keys at or beyond `extent` are an error.
/// Large inputs run as a two-pass radix partition sized from the cache ([`plan`]);
/// the result is the same either way and does not depend on the number of threads.
fn scatter<I: Index, V: Value>(src: &impl Source<I, V>, extent: usize) -> Result<Scattered<I, V>> {
    scatter_with(src, extent, cache_sizes())
}

/// The offsets, minor indices and values a scatter returns.
type Scattered<I, V> = (Vec<usize>, Vec<I>, Vec<V>);

fn scatter_with<I: Index, V: Value>(
    src: &impl Source<I, V>,
    extent: usize,
    caches: CacheSizes,
) -> Result<Scattered<I, V>> {
    let n = src.len();
    let out_bytes = std::mem::size_of::<I>() + std::mem::size_of::<V>();
    // two write streams per bucket when the keys pack into the index slots, three
    // when they need their own array (see `packed_minor_bits`)
    let packs = |p: &Plan| packed_minor_bits::<I>(src.minor_extent(), p.shift).is_some();
    let plan = match plan(n, extent, out_bytes, 2, caches) {
        Some(p) if !packs(&p) => plan(n, extent, out_bytes, 3, caches),
        p => p,
    };
    match plan {
        Some(p) => partitioned_scatter(src, extent, p),
        None => {
            let offsets = histogram_of(src, extent)?;
            let (idx, val) = direct_scatter(src, &offsets)?;
            Ok((offsets, idx, val))
        }
    }
}

fn outputs<I: Index, V: Value>(n: usize) -> Result<(Vec<I>, Vec<V>)> {
    let idx = crate::alloc::zeroed::<I>(n, "scatter indices")?;
    let val = crate::alloc::zeroed::<V>(n, "scatter values")?;
    advise_huge_pages(&idx);
    advise_huge_pages(&val);
    Ok((idx, val))
}

/// The direct scatter: one band of keys per task; each band owns a contiguous
/// part of the output and reads every entry, keeping its own.
fn direct_scatter<I: Index, V: Value>(
    src: &impl Source<I, V>,
    offsets: &[usize],
) -> Result<(Vec<I>, Vec<V>)> {
    let n = src.len();
    let (mut idx, mut val) = outputs::<I, V>(n)?;
    let parts = if n >= PARALLEL_MIN {
        rayon::current_num_threads().max(1)
    } else {
        1
    };
    let bands = bands(offsets, parts);
    // carve the outputs into the bands' contiguous regions
    let mut idx_parts = Vec::with_capacity(bands.len());
    let mut val_parts = Vec::with_capacity(bands.len());
    let (mut ri, mut rv) = (idx.as_mut_slice(), val.as_mut_slice());
    for &(lo, hi) in &bands {
        let len = offsets[hi] - offsets[lo];
        let (a, b) = ri.split_at_mut(len);
        let (c, d) = rv.split_at_mut(len);
        idx_parts.push(a);
        val_parts.push(c);
        ri = b;
        rv = d;
    }
    type Job<'a, I, V> = ((usize, usize), (&'a mut [I], &'a mut [V]));
    let work = |((lo, hi), (oi, ov)): Job<'_, I, V>| {
        let base = offsets[lo];
        let mut next: Vec<usize> = offsets[lo..hi].iter().map(|o| o - base).collect();
        let all = bands.len() == 1;
        src.entries(0, n, |c, m, v| {
            if all || (c >= lo && c < hi) {
                let p = next[c - lo];
                next[c - lo] = p + 1;
                oi[p] = m;
                ov[p] = v;
            }
        });
    };
    let jobs: Vec<_> = bands
        .iter()
        .copied()
        .zip(idx_parts.into_iter().zip(val_parts))
        .collect();
    if jobs.len() > 1 {
        jobs.into_par_iter().for_each(work);
    } else {
        jobs.into_iter().for_each(work);
    }
    Ok((idx, val))
}

/// Where pass 1 of the partitioned scatter keeps each entry's key (relative to
/// its bucket) for pass 2: packed above the minor index in the index slot when
/// both fit in the slot's bits, all of them, the sign bit included (the slot
/// holds a bit pattern until pass 2 writes the minor index back; no scratch at
/// all), else in a `u32` array beside the output. A 10^6 x 10^6 matrix with
/// `i32` indices needs 20 bits of minor index and, under the plan for a 32 KiB
/// level-1 cache, 12 bits of key: 32.
fn packed_minor_bits<I: Index>(minor_extent: usize, shift: u32) -> Option<u32> {
    let room = (8 * std::mem::size_of::<I>() as u32).min(usize::BITS);
    let minor_bits = usize::BITS - minor_extent.saturating_sub(1).leading_zeros();
    (minor_bits + shift <= room).then_some(minor_bits)
}

/// The bits of a packed index slot ([`packed_minor_bits`]) as an unsigned
/// number: the slot's value without the sign extension that `as_usize` gives a
/// negative one (a key whose top bit is the slot's sign bit).
#[inline(always)]
fn slot_bits<I: Index>(x: I) -> usize {
    let width = 8 * std::mem::size_of::<I>() as u32;
    if width >= usize::BITS {
        x.as_usize()
    } else {
        x.as_usize() & ((1usize << width) - 1)
    }
}

/// The two-pass partitioned (radix) scatter, with the per-key histogram folded
/// into its second pass.
///
/// Every bucket (`key >> shift`) owns a segment of the output, in bucket order.
/// Pass 0 counts the entries of every range of `2^min_slot` keys, up to 16 a
/// bucket (and checks every key against `extent`): a sequential read and a few
/// thousand counters in the level-1 cache, where a per-key histogram would
/// increment counters all over a key-sized array; the buckets' and the slots'
/// counts are sums of the ranges'. Pass 1 cuts
/// the entries into `T` chunks (one per thread); each chunk writes its entries,
/// in storage order, to its own part of each bucket's segment (chunks in order):
/// one sequential write stream per bucket. The key relative to its bucket travels
/// with the entry, packed above the minor index when both fit the index type
/// ([`packed_minor_bits`]; CSR -> CSC of a 10^6 x 10^6 matrix needs 20 + 12 bits
/// under the plan for a 32 KiB level-1 cache: packed with `i64` indices and with
/// `i32`, whose sign bit then holds a key bit). Pass 2 takes the slots (a bucket, or a
/// part of a heavy one) one at a time (in parallel): it counts the keys of the
/// segment, writes those keys' offsets, copies the segment into a buffer of the
/// thread's and scatters it back with per-key cursors, in the level-2 cache when
/// the segment fits there (the plan aims at that, but the level-1 limit on the
/// buckets comes first), else in the next level. Both passes are stable,
/// so the output is the one the direct scatter gives. Scratch: one segment-sized
/// buffer per thread, plus 4 bytes per entry when the key is not packed, so a
/// conversion inside a reader stays within the reader's budget (`format/SPEC.md`
/// section 11).
fn partitioned_scatter<I: Index, V: Value>(
    src: &impl Source<I, V>,
    extent: usize,
    plan: Plan,
) -> Result<Scattered<I, V>> {
    match packed_minor_bits::<I>(src.minor_extent(), plan.shift) {
        Some(bits) => partitioned_scatter_as::<I, V, true>(src, extent, plan, bits),
        None => partitioned_scatter_as::<I, V, false>(src, extent, plan, 0),
    }
}

/// [`partitioned_scatter`] with the keys packed into the index slots (`PACK`,
/// above `minor_bits` bits of minor index) or kept in a scratch array.
///
/// Skewed keys (power-law rows) make a few buckets far larger than the cache,
/// and pass 2 would sort each of them alone, out of cache, on one thread. Such a
/// bucket (more than [`HEAVY`] times the mean) is cut by pass 1 into *slots* of
/// `2^g` consecutive keys, each a write stream and a segment of its own, about
/// as many as the bucket holds means of entries but no narrower than the plan's
/// `min_slot` (every other bucket is one slot; [`slot_shifts`]). Pass 2 sorts a
/// slot like a bucket. The heaviest buckets are cut first, as
/// long as the slots stay within three times the bucket count (the plan sized
/// the buckets' write streams to the level-1 cache; a few times more streams
/// still beat sorting a segment larger than the level-2 cache in pass 2).
fn partitioned_scatter_as<I: Index, V: Value, const PACK: bool>(
    src: &impl Source<I, V>,
    extent: usize,
    plan: Plan,
    minor_bits: u32,
) -> Result<Scattered<I, V>> {
    let n = src.len();
    let Plan { shift, buckets, .. } = plan;
    let minor_mask = (1usize << minor_bits) - 1;
    let keys_of = |b: usize| ((b << shift).min(extent), ((b + 1) << shift).min(extent));
    let chunks = if n >= PARALLEL_MIN {
        rayon::current_num_threads().clamp(1, 64)
    } else {
        1
    };
    let bounds: Vec<usize> = (0..=chunks).map(|c| c * n / chunks).collect();
    let per_chunk = |f: &(dyn Fn(usize) -> Result<Vec<usize>> + Sync)| -> Result<Vec<Vec<usize>>> {
        if chunks > 1 {
            let each: Vec<Result<Vec<usize>>> = (0..chunks).into_par_iter().map(f).collect();
            each.into_iter().collect()
        } else {
            Ok(vec![f(0)?])
        }
    };
    // pass 0: per-chunk counts of ranges of `2^cs` keys, the narrowest slot a
    // bucket may be cut into (so every slot is a whole number of ranges and its
    // counts are sums of them); the first key out of range, in storage order, is
    // the error (as the per-key histogram reports it)
    let cs = plan.min_slot.min(shift);
    let ranges = extent.div_ceil(1usize << cs);
    let range_counts = per_chunk(&|c: usize| {
        // counted in u16 (a quarter of the cache of usize counters: the ranges
        // are up to 16 a bucket), added up every `u16::MAX` keys
        let mut cnt = crate::alloc::filled(ranges, 0usize, "key range counts")?;
        let mut small = crate::alloc::filled(ranges, 0u16, "key range counts")?;
        let mut bad: Option<(usize, usize)> = None;
        let mut k = bounds[c];
        while k < bounds[c + 1] {
            let end = bounds[c + 1].min(k.saturating_add(u16::MAX as usize));
            src.keys(k, end, |key| {
                if key < extent {
                    small[key >> cs] += 1;
                } else {
                    bad.get_or_insert((k, key));
                }
                k += 1;
            });
            for (a, b) in cnt.iter_mut().zip(&mut small) {
                *a += *b as usize;
                *b = 0;
            }
        }
        match bad {
            Some((k, key)) => Err(key_out_of_range(k, key, extent)),
            None => Ok(cnt),
        }
    })?;
    let per_bucket = 1usize << (shift - cs);
    let totals: Vec<usize> = (0..buckets)
        .map(|b| {
            let (lo, hi) = (b * per_bucket, ((b + 1) * per_bucket).min(ranges));
            range_counts
                .iter()
                .map(|c| c[lo..hi].iter().sum::<usize>())
                .sum()
        })
        .collect();
    // the slots: each bucket's first slot and the log2 of its slots' keys
    // ([`slot_code`])
    let widths = slot_shifts(&totals, n, (shift, cs), extent);
    let mut slot_of: Vec<u32> = Vec::with_capacity(buckets);
    let mut slots = 0usize;
    for (b, &g) in widths.iter().enumerate() {
        let (lo, hi) = keys_of(b);
        slot_of.push(slot_code(slots, g)?);
        slots += (hi - lo).div_ceil(1 << g);
    }
    // an entry's slot, with its key relative to its slot. This closure, `put`
    // and pass 1's per-entry closures capture by value (copies, slices): the
    // per-entry closure is then a local of the source's loop, its captures stay
    // in registers. Captured by reference they were reloaded through pointers
    // at every entry (measured: CSC -> CSR of 10^7 entries, one thread, pass 1
    // took 56-62 ms that way, 47-48 ms this way)
    let slot_of = &slot_of[..];
    let slot = move |key: usize| {
        let b = key >> shift;
        let (first, g) = slot_decode(slot_of[b]);
        let rel = key - (b << shift);
        (rel & ((1usize << g) - 1), first + (rel >> g))
    };
    // each chunk's slot counts: the sums of the slots' ranges
    let counts = range_counts
        .iter()
        .map(|rc| {
            let mut cnt = crate::alloc::filled(slots, 0usize, "slot counts")?;
            for (r, &k) in rc.iter().enumerate() {
                cnt[slot(r << cs).1] += k;
            }
            Ok(cnt)
        })
        .collect::<Result<Vec<_>>>()?;
    drop(range_counts);
    let (mut idx, mut val) = outputs::<I, V>(n)?;
    let mut keys = crate::alloc::zeroed::<u32>(if PACK { 0 } else { n }, "scatter keys")?;
    advise_huge_pages(&keys);
    // pass 1's write of one entry (key relative to its bucket, minor index, value)
    // at `p`: the key packed above the minor index, or into its own scratch
    let put =
        move |ok: &mut [u32], oi: &mut [I], ov: &mut [V], p: usize, (rel, m, v): (usize, I, V)| {
            if PACK {
                oi[p] = I::usize_as((rel << minor_bits) | (m.as_usize() & minor_mask));
            } else {
                ok[p] = rel as u32;
                oi[p] = m;
            }
            ov[p] = v;
        };
    if chunks == 1 {
        // one chunk: a cursor per slot into the whole output (no per-slot parts)
        let mut cur = crate::alloc::with_capacity::<usize>(slots, "slot cursors")?;
        let mut at = 0usize;
        for &len in &counts[0] {
            cur.push(at);
            at += len;
        }
        let (ok, oi, ov) = (&mut keys[..], &mut idx[..], &mut val[..]);
        let cur = &mut cur[..];
        src.entries(0, n, move |key, m, v| {
            let (rel, s) = slot(key);
            let p = cur[s];
            cur[s] = p + 1;
            put(ok, oi, ov, p, (rel, m, v));
        });
    } else {
        // chunk c's part of every slot's segment, slot by slot
        type Part<'a, I, V> = (&'a mut [u32], &'a mut [I], &'a mut [V]);
        let mut parts: Vec<Vec<Part<'_, I, V>>> =
            (0..chunks).map(|_| Vec::with_capacity(slots)).collect();
        let (mut rk, mut ri, mut rv) = (&mut keys[..], &mut idx[..], &mut val[..]);
        for s in 0..slots {
            for (part, cnt) in parts.iter_mut().zip(&counts) {
                let len = cnt[s];
                let (k, k2) = rk.split_at_mut(if PACK { 0 } else { len });
                let (i, i2) = ri.split_at_mut(len);
                let (v, v2) = rv.split_at_mut(len);
                part.push((k, i, v));
                (rk, ri, rv) = (k2, i2, v2);
            }
        }
        let pass1 = |(c, mut part): (usize, Vec<Part<'_, I, V>>)| {
            let mut cur = vec![0usize; slots];
            let (cur, part) = (&mut cur[..], &mut part[..]);
            src.entries(bounds[c], bounds[c + 1], move |key, m, v| {
                let (rel, s) = slot(key);
                let p = cur[s];
                cur[s] = p + 1;
                let (pk, pi, pv) = &mut part[s];
                put(pk, pi, pv, p, (rel, m, v));
            });
        };
        parts.into_par_iter().enumerate().for_each(pass1);
    }
    // pass 2: each slot's segment, counted and sorted by key in cache; slots in
    // groups of about equal entries, one group per task, one buffer per group
    let mut offsets = alloc_zeroed(extent + 1, "offsets")?;
    offsets[extent] = n;
    // a slot's entries, from its counts in every chunk
    let slot_len = |s: usize| counts.iter().map(|c| c[s]).sum::<usize>();
    // (first key, end key, output start, the keys' offsets, the segment)
    type Seg<'a, I, V> = (
        usize,
        usize,
        usize,
        &'a mut [usize],
        (&'a [u32], &'a mut [I], &'a mut [V]),
    );
    let mut segs: Vec<Seg<'_, I, V>> = Vec::with_capacity(slots);
    let (mut rk, mut ri, mut rv) = (&keys[..], idx.as_mut_slice(), val.as_mut_slice());
    let mut ro = &mut offsets[..extent];
    let mut start = 0usize;
    for (b, &code) in slot_of.iter().enumerate() {
        let (first, g) = slot_decode(code);
        let (lo, hi) = keys_of(b);
        for (j, klo) in (lo..hi).step_by(1 << g).enumerate() {
            let khi = (klo + (1 << g)).min(hi);
            let len = slot_len(first + j);
            let (o, o2) = ro.split_at_mut(khi - klo);
            let (i, i2) = ri.split_at_mut(len);
            let (v, v2) = rv.split_at_mut(len);
            let (k, k2) = rk.split_at(if PACK { 0 } else { len });
            (rk, ri, rv, ro) = (k2, i2, v2, o2);
            segs.push((klo, khi, start, o, (k, i, v)));
            start += len;
        }
    }
    let groups = chunks.min(segs.len()).max(1);
    let light: usize = segs.iter().map(|s| s.4.1.len()).sum::<usize>().max(1);
    let mut grouped: Vec<Vec<Seg<'_, I, V>>> = (0..groups).map(|_| Vec::new()).collect();
    let mut before = 0usize;
    for seg in segs {
        let len = seg.4.1.len();
        // the group holding this segment's middle entry
        grouped[((before + len / 2) * groups / light).min(groups - 1)].push(seg);
        before += len;
    }
    // captures by value, as pass 1's closures do: the thread pool calls this
    // closure through a pointer to it, and by reference its loops reloaded
    // `minor_bits` through that pointer at every entry
    let pass2 = move |group: Vec<Seg<'_, I, V>>| -> Result<()> {
        let longest = group.iter().map(|s| s.4.1.len()).max().unwrap_or(0);
        let mut bi = crate::alloc::with_capacity::<I>(longest, "scatter buffer")?;
        let mut bv = crate::alloc::with_capacity::<V>(longest, "scatter buffer")?;
        let mut cur =
            crate::alloc::with_capacity::<usize>((1usize << shift) + 1, "scatter cursors")?;
        for (lo, hi, start, offs, (sk, si, sv)) in group {
            bi.clear();
            bi.extend_from_slice(si);
            bv.clear();
            bv.extend_from_slice(sv);
            // the bucket's per-key counts, turned into cursors and offsets
            cur.clear();
            cur.resize(hi - lo + 1, 0);
            if PACK {
                for x in &bi {
                    cur[(slot_bits(*x) >> minor_bits) + 1] += 1;
                }
            } else {
                for &k in sk {
                    cur[k as usize + 1] += 1;
                }
            }
            for j in 1..cur.len() {
                cur[j] += cur[j - 1];
            }
            for (o, &c) in offs.iter_mut().zip(&cur) {
                *o = start + c;
            }
            if PACK {
                for (&x, &v) in bi.iter().zip(&bv) {
                    let x = slot_bits(x);
                    let k = x >> minor_bits;
                    let p = cur[k];
                    cur[k] = p + 1;
                    si[p] = I::usize_as(x & minor_mask);
                    sv[p] = v;
                }
            } else {
                for ((&k, &m), &v) in sk.iter().zip(&bi).zip(&bv) {
                    let p = cur[k as usize];
                    cur[k as usize] = p + 1;
                    si[p] = m;
                    sv[p] = v;
                }
            }
        }
        Ok(())
    };
    if groups > 1 {
        grouped.into_par_iter().map(pass2).collect::<Result<()>>()?;
    } else {
        grouped.into_iter().try_for_each(pass2)?;
    }
    Ok((offsets, idx, val))
}

/// A bucket's entry in pass 1's slot table: its first slot above the log2 of
/// its slots' keys (6 bits), 4 bytes a bucket (1 KiB for 245 buckets, beside
/// the buckets' write streams in the level-1 cache; the three words it
/// replaced took 24). An error if the slot number does not fit (it cannot
/// under [`plan`]: at most 4096 buckets, three slots each).
fn slot_code(first: usize, g: u32) -> Result<u32> {
    u32::try_from(first)
        .ok()
        .filter(|&f| f < 1 << 26 && g < 64)
        .map(|f| (f << 6) | g)
        .ok_or_else(|| Error::overflow("scatter slots".to_string(), first.to_string(), "u32"))
}

/// The first slot and the log2 of the slots' keys of a [`slot_code`].
#[inline(always)]
fn slot_decode(code: u32) -> (usize, u32) {
    ((code >> 6) as usize, code & 63)
}

/// Pass 0 of the partitioned scatter counts ranges of keys, at most
/// `2^RANGES_LOG2` a bucket (the plan's `min_slot` is at least `shift -
/// RANGES_LOG2`): 3907 counters for 10^6 keys in 245 buckets, 7.6 KiB as
/// `u16`, well within a 32 KiB level-1 cache beside the key stream. Measured
/// (10^7 uniform keys, one thread): 5.5-5.8 ms with 245 `usize` counters, 5.5-6.0
/// ms with the 3907 `u16` ones, 7.1-7.8 ms as `u32` and 11.8-12.0 ms as `usize`
/// (`int64` keys).
const RANGES_LOG2: u32 = 4;

/// A bucket with more than `HEAVY` times the mean bucket's entries is heavy.
const HEAVY: usize = 4;

/// How the partitioned scatter cuts each bucket of `2^shift` keys into slots:
/// the log2 of a slot's keys, `shift` (one slot) for all but the heavy buckets.
/// A heavy bucket (more than [`HEAVY`] times the mean) gets about one slot per
/// mean of its entries (a power of two of them, at most one per key), but slots
/// of no fewer than `2^min_slot` keys, the heaviest bucket first, while the
/// slots stay within three times the bucket count; a bucket the remaining room
/// cannot cut that finely is cut into fewer, wider slots, or stays whole.
///
/// The floor comes from the level-1 cache (the plan's `min_slot`: as many keys
/// as that cache holds a 64-byte line for in each of pass 2's two write
/// streams). Pass 2 sorts a slot of that many keys with its writes in the
/// level-1 cache however many entries the slot holds, so narrower slots gain
/// nothing there, while each one is a write stream more in pass 1, past the
/// level-1 cache that the bucket count was sized to. Measured on the power-law
/// CSC -> CSR of `benches/RESULTS.md` (10^7 entries, one thread, 32 KiB level-1):
/// the heaviest bucket (43% of the entries) cut into 128 slots of 32 keys,
/// 423 slots in all, 128-131 ms; into 16 slots of 256 keys (the floor), 311 in
/// all, 118-119 ms; floors of 64 and 512 keys 124-126 ms. The floor is also
/// the width of the key ranges that pass 0 counts (at most 16 a bucket, see
/// [`RANGES_LOG2`]), from which every slot's count is a sum: no second pass over
/// the keys to count the slots (that pass took 13 ms of the 118).
fn slot_shifts(
    totals: &[usize],
    n: usize,
    (shift, min_slot): (u32, u32),
    extent: usize,
) -> Vec<u32> {
    let buckets = totals.len();
    let mut widths = vec![shift; buckets];
    let mean = n.div_ceil(buckets.max(1)).max(1);
    let floor = HEAVY * mean;
    let mut order: Vec<usize> = (0..buckets).filter(|&b| totals[b] > floor).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(totals[b]), b));
    let mut room = 2 * buckets;
    for b in order {
        let width = ((b + 1) << shift).min(extent) - (b << shift).min(extent);
        let parts = totals[b].div_ceil(mean).next_power_of_two();
        let mut g = shift.saturating_sub(parts.ilog2()).max(min_slot.min(shift));
        // the narrowest slots the room allows (one more slot per halving)
        while g < shift && width.div_ceil(1 << g) - 1 > room {
            g += 1;
        }
        room -= width.div_ceil(1 << g) - 1;
        widths[b] = g;
    }
    widths
}

fn indptr_from<P: Index>(offsets: &[usize]) -> Result<Vec<P>> {
    let total = offsets.last().copied().unwrap_or(0);
    to_index::<P>(total, "indptr")?;
    let mut out = crate::alloc::with_capacity::<P>(offsets.len(), "indptr")?;
    out.extend(offsets.iter().map(|&o| P::usize_as(o)));
    Ok(out)
}

/// COO (2-D) to CSR or CSC by a stable counting sort on the compressed
/// coordinate: O(nnz + extent). Entries keep their storage order within a row
/// (column), so a canonical COO gives sorted indices. A canonical COO converted
/// to CSR is not scattered at all: indptr comes from the row runs and the values
/// (and, for column-major coordinates, the indices) are shared, not copied.
///
/// ```
/// use arrow_sparse::kernels::convert::coo_to_csx;
/// use arrow_sparse::{CompressedAxis, CooTensor};
/// // [[0, 2, 0], [1, 0, 3]], entries out of order
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 3.0), (vec![0, 1], 2.0), (vec![1, 0], 1.0)])?;
/// let csc = coo_to_csx::<f64, i64, i32>(&coo, CompressedAxis::Column)?;
/// assert_eq!(csc.indptr().as_ref(), &[0, 1, 2, 3]);
/// assert_eq!((csc.indices().as_ref(), csc.values().as_ref()), (&[1i64, 0, 1][..], &[1.0, 2.0, 3.0][..]));
/// // only matrices
/// let t3 = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[])?;
/// assert!(coo_to_csx::<f64, i64, i64>(&t3, CompressedAxis::Row).is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn coo_to_csx<V: Value, I: Index, P: Index>(
    coo: &CooTensor<V, I>,
    axis: CompressedAxis,
) -> Result<CsxMatrix<V, I, P>> {
    if coo.ndim() != 2 {
        return Err(Error::shape(
            "CSR/CSC conversion",
            "a 2-D tensor",
            format!("{}-D", coo.ndim()),
        ));
    }
    let (major, minor) = axis.dims();
    let (nnz, extent) = (coo.nnz(), coo.shape()[major]);
    let (c, layout) = (&coo.coords()[..], coo.layout());
    let out = if coo.is_canonical() && axis == CompressedAxis::Row {
        to_index::<P>(nnz, "indptr")?;
        let (indptr, indices): (Vec<P>, ScalarBuffer<I>) = match layout {
            // the column indices are the second half as they lie: no copy
            CoordLayout::ColumnMajor => (
                sorted_indptr::<I, P>(&c[..nnz], 1, extent)?.0,
                coo.coords().slice(nnz, nnz),
            ),
            // one pass over the interleaved pairs: indptr and the column indices
            CoordLayout::RowMajor => {
                let (ptr, idx) = sorted_indptr::<I, P>(c, 2, extent)?;
                (ptr, idx.into())
            }
        };
        CsxMatrix::try_new_with(
            coo.shape().to_vec(),
            axis,
            indptr.into(),
            indices,
            coo.values().clone(),
            &TensorOptions::trusted(),
        )?
    } else {
        let src = CooSource {
            coords: c,
            layout,
            nnz,
            major,
            minor,
            minor_extent: coo.shape()[minor],
            vals: &coo.values()[..],
        };
        let (offsets, idx, val) = scatter(&src, extent)?;
        CsxMatrix::try_new_with(
            coo.shape().to_vec(),
            axis,
            indptr_from::<P>(&offsets)?.into(),
            idx.into(),
            val.into(),
            &TensorOptions::trusted(),
        )?
    };
    out.with_dim_names(coo.dim_names().to_vec())
}

/// The first position in `lo..hi` where `pred` stops holding (`pred` must be
/// true, then false, along the range; otherwise some position in the range).
pub(crate) fn partition(mut lo: usize, mut hi: usize, pred: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let m = lo + (hi - lo) / 2;
        if pred(m) {
            lo = m + 1;
        } else {
            hi = m;
        }
    }
    lo
}

/// The indptr of entries whose row coordinates `rows[stride * k]` are sorted, and
/// (for `stride == 2`, interleaved `[row, col]` pairs) the column coordinates
/// `rows[2 k + 1]`, in one pass without a branch per row: each entry `k` of row
/// `r` stores `k + 1` at `indptr[r + 1]` (the last store of a row is its end),
/// then one running maximum over the indptr gives the rows without entries the
/// end of the row before. Runs in parts on all threads for large inputs; each
/// part starts where a row starts (found by binary search), so that the part
/// holding entries `a..b` owns `indptr[row(a - 1) + 2 ..= row(b - 1) + 1]`, a
/// range of its own. Unsorted or out-of-range rows are an error (the canonical
/// flag of a tensor built without validation was wrong).
fn sorted_indptr<I: Index, P: Index>(
    rows: &[I],
    stride: usize,
    extent: usize,
) -> Result<(Vec<P>, Vec<I>)> {
    let nnz = rows.len() / stride;
    // zeroed allocations (fresh pages, no write pass before the real one)
    let mut indptr: Vec<P> = crate::alloc::zeroed(extent.saturating_add(1), "indptr")?;
    let mut cols: Vec<I> =
        crate::alloc::zeroed::<I>(if stride == 2 { nnz } else { 0 }, "CSR indices")?;
    let unsorted = |k: usize| {
        Error::invariant(
            "COO canonical flag",
            Some(k),
            "row coordinates are not sorted (or not below the row count)",
        )
    };
    let row = |k: usize| rows[k * stride].as_usize();
    if nnz > 0 && row(nnz - 1) >= extent {
        return Err(unsorted(nnz - 1));
    }
    let parts = if nnz >= PARALLEL_MIN {
        rayon::current_num_threads().max(1)
    } else {
        1
    };
    // part boundaries moved forward to the next row start (a part may be empty)
    let mut starts: Vec<usize> = (0..=parts).map(|p| p * nnz / parts).collect();
    for p in 1..parts {
        let s = starts[p].max(starts[p - 1]);
        starts[p] = if s == 0 || s >= nnz {
            s
        } else {
            let r = row(s - 1);
            partition(s, nnz, |k| row(k) <= r)
        };
    }
    // the first indptr position each part owns (and, last, one past the final row's)
    let first = |a: usize| {
        if a == 0 {
            1
        } else {
            row(a - 1).saturating_add(2)
        }
    };
    let bounds: Vec<usize> = starts.iter().map(|&a| first(a)).collect();
    if bounds.windows(2).any(|w| w[0] > w[1]) {
        return Err(unsorted(0));
    }
    // split indptr[1..] and cols into the parts' disjoint ranges
    let mut ptr_parts = Vec::with_capacity(parts);
    let mut rest = indptr.get_mut(1..).unwrap_or_default();
    for w in bounds.windows(2) {
        let (mine, tail) = rest.split_at_mut(w[1] - w[0]);
        ptr_parts.push(mine);
        rest = tail;
    }
    let tail = rest;
    let mut col_parts = Vec::with_capacity(parts);
    let mut crest = &mut cols[..];
    for w in starts.windows(2) {
        let len = if stride == 2 { w[1] - w[0] } else { 0 };
        let (mine, t) = crest.split_at_mut(len);
        col_parts.push(mine);
        crest = t;
    }
    let work = |(p, (ptr, col)): (usize, (&mut [P], &mut [I]))| -> Result<()> {
        let (a, b, base) = (starts[p], starts[p + 1], bounds[p]);
        // this part's rows are above the row before it, and map into `ptr`
        let owned = ptr.len();
        let out_of_order =
            |prev: usize, r: usize| r < prev || r.wrapping_add(1).wrapping_sub(base) >= owned;
        let mut prev = base - 1;
        let mut bad = false;
        let mut end_of_row = |k: usize, r: usize| {
            bad |= r < prev;
            prev = r;
            match ptr.get_mut(r.wrapping_add(1).wrapping_sub(base)) {
                Some(s) => *s = P::usize_as(k + 1),
                None => bad = true,
            }
        };
        if stride == 2 {
            let pairs = rows[2 * a..2 * b].chunks_exact(2);
            for ((k, pair), c) in (a..b).zip(pairs).zip(col.iter_mut()) {
                end_of_row(k, pair[0].as_usize());
                *c = pair[1];
            }
        } else {
            for (k, r) in (a..b).zip(&rows[a..b]) {
                end_of_row(k, r.as_usize());
            }
        }
        if bad {
            let mut prev = base - 1;
            let k = (a..b)
                .find(|&k| {
                    let r = row(k);
                    let wrong = out_of_order(prev, r);
                    prev = r;
                    wrong
                })
                .unwrap_or(a);
            return Err(unsorted(k));
        }
        // rows without entries end where the row before ends
        let mut run = a;
        for s in ptr.iter_mut() {
            run = run.max(s.as_usize());
            *s = P::usize_as(run);
        }
        Ok(())
    };
    if parts > 1 {
        ptr_parts
            .into_par_iter()
            .zip(col_parts)
            .enumerate()
            .try_for_each(work)?;
    } else {
        ptr_parts
            .into_iter()
            .zip(col_parts)
            .enumerate()
            .try_for_each(work)?;
    }
    tail.fill(P::usize_as(nnz));
    Ok((indptr, cols))
}

/// The same matrix compressed along the other axis (CSR <-> CSC), by a stable
/// counting sort on the indices: O(nnz + extent); indices come out sorted.
///
/// ```
/// use arrow_sparse::kernels::convert::transpose_csx;
/// use arrow_sparse::{CompressedAxis, CsxMatrix};
/// // [[1, 0, 2], [0, 3, 4]] as CSR
/// let csr = CsxMatrix::<i32, i32>::try_new(
///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 4].into(), vec![0, 2, 1, 2].into(), vec![1, 2, 3, 4].into())?;
/// let csc = transpose_csx(&csr)?;
/// assert_eq!((csc.axis(), csc.shape()), (CompressedAxis::Column, &[2usize, 3][..]));
/// assert_eq!(csc.indptr().as_ref(), &[0, 1, 2, 4]);
/// assert_eq!((csc.indices().as_ref(), csc.values().as_ref()), (&[0, 1, 0, 1][..], &[1, 3, 2, 4][..]));
/// assert_eq!(transpose_csx(&csc)?, csr); // and back
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn transpose_csx<V: Value, I: Index, P: Index>(
    m: &CsxMatrix<V, I, P>,
) -> Result<CsxMatrix<V, I, P>> {
    let minor = m.axis().dims().1;
    let other = match m.axis() {
        CompressedAxis::Row => CompressedAxis::Column,
        CompressedAxis::Column => CompressedAxis::Row,
    };
    let nnz = m.nnz();
    let (ptr, idx, vals) = (&m.indptr()[..], &m.indices()[..], &m.values()[..]);
    let ends = (
        ptr.first().map(|p| p.as_usize()),
        ptr.last().map(|p| p.as_usize()),
    );
    if ends != (Some(0), Some(nnz)) {
        return Err(Error::invariant(
            "indptr",
            Some(0),
            "indptr does not run from 0 to nnz (trusted input was invalid)",
        ));
    }
    for (r, w) in ptr.windows(2).enumerate() {
        if w[0].as_usize() > w[1].as_usize() {
            return Err(Error::invariant(
                "indptr",
                Some(r),
                "indptr decreases or exceeds nnz (trusted input was invalid)",
            ));
        }
    }
    // the row of each entry comes from indptr as the scatter walks the rows
    let src = CsxSource { ptr, idx, vals };
    let (offsets, new_idx, new_val) = scatter(&src, m.shape()[minor])?;
    CsxMatrix::try_new_with(
        m.shape().to_vec(),
        other,
        indptr_from::<P>(&offsets)?.into(),
        new_idx.into(),
        new_val.into(),
        &TensorOptions::trusted(),
    )?
    .with_dim_names(m.dim_names().to_vec())
}

/// The permutation that sorts the entries stably by their coordinates taken in
/// `order` (most significant first): LSD radix sort with one counting pass per
/// dimension when the extents are small enough (O(ndim · (nnz + extent))), a
/// comparison sort otherwise.
///
/// ```
/// use arrow_sparse::kernels::convert::sort_permutation;
/// use arrow_sparse::CooTensor;
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 0], 1.0), (vec![0, 2], 2.0), (vec![0, 1], 3.0)])?;
/// assert_eq!(sort_permutation(&coo, &[0, 1])?, vec![2, 1, 0]); // by row, then column
/// assert_eq!(sort_permutation(&coo, &[1, 0])?, vec![0, 2, 1]); // by column, then row
/// assert!(sort_permutation(&coo, &[0, 0]).is_err()); // not a permutation
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn sort_permutation<V: Value, I: Index>(
    coo: &CooTensor<V, I>,
    order: &[usize],
) -> Result<Vec<usize>> {
    let (nnz, ndim) = (coo.nnz(), coo.ndim());
    crate::tensor::validate::check_permutation("sort order", order, ndim)?;
    let cheap = order.iter().all(|&d| coo.shape()[d] <= 4 * nnz + (1 << 16));
    if !cheap {
        return coo.sort_permutation(order);
    }
    let (c, layout) = (&coo.coords()[..], coo.layout());
    let mut perm: Vec<usize> = crate::alloc::with_capacity(nnz, "sort permutation")?;
    perm.extend(0..nnz);
    let mut tmp = crate::alloc::filled(nnz, 0usize, "sort permutation")?;
    advise_huge_pages(&tmp);
    for &d in order.iter().rev() {
        let key = coord_fn(c, layout, nnz, ndim, d);
        let extent = coo.shape()[d];
        let mut next = histogram(nnz, extent, &|i| key(perm[i]))?;
        for &k in &perm {
            let kk = key(k);
            tmp[next[kk]] = k;
            next[kk] += 1;
        }
        std::mem::swap(&mut perm, &mut tmp);
    }
    Ok(perm)
}

/// Sort lexicographically and sum duplicates (radix sort, then one merge pass).
/// Integer sums are checked. The result is row-major and canonical.
///
/// ```
/// use arrow_sparse::kernels::convert::canonicalize;
/// use arrow_sparse::CooTensor;
/// let coo = CooTensor::<i32, i64>::from_entries(vec![3], &[(vec![2], 1), (vec![0], 2), (vec![2], 3)])?;
/// let c = canonicalize(&coo)?;
/// assert_eq!((c.nnz(), c.get(&[2]), c.is_canonical()), (2, Some(4), true));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn canonicalize<V: Value, I: Index>(coo: &CooTensor<V, I>) -> Result<CooTensor<V, I>> {
    if coo.is_canonical() && coo.layout() == CoordLayout::RowMajor {
        return Ok(coo.clone());
    }
    let (coords, values) = fold_duplicates(
        coo,
        |v| v,
        |sum: V, v: V| {
            sum.checked_sum(v).ok_or_else(|| {
                Error::overflow(
                    "sum of duplicate entries",
                    format!("{sum:?} + {v:?}"),
                    V::TYPE.name(),
                )
            })
        },
    )?;
    canonical_coo(coo, coords, values)
}

/// The coordinates of `coo` sorted row-major without duplicates, and for each
/// one its values folded in storage order: `start` on the first, `add` on the
/// others (the radix sort is stable).
pub(crate) fn fold_duplicates<V: Value, I: Index, A: Copy>(
    coo: &CooTensor<V, I>,
    start: impl Fn(V) -> A,
    add: impl Fn(A, V) -> Result<A>,
) -> Result<(Vec<I>, Vec<A>)> {
    let (nnz, ndim) = (coo.nnz(), coo.ndim());
    let order: Vec<usize> = (0..ndim).collect();
    let perm = sort_permutation(coo, &order)?;
    let (c, layout, vals) = (&coo.coords()[..], coo.layout(), &coo.values()[..]);
    let at = |k: usize, d: usize| {
        let (base, stride) = coord_place(layout, nnz, ndim, d);
        c[base + stride * k]
    };
    let mut coords: Vec<I> = crate::alloc::with_capacity(nnz * ndim, "coordinates")?;
    let mut folded: Vec<A> = crate::alloc::with_capacity(nnz, "summed values")?;
    let mut prev: Option<usize> = None;
    for &k in &perm {
        if let Some(last) = folded.last_mut()
            && prev.is_some_and(|p| (0..ndim).all(|d| at(p, d) == at(k, d)))
        {
            *last = add(*last, vals[k])?;
        } else {
            coords.extend((0..ndim).map(|d| at(k, d)));
            folded.push(start(vals[k]));
        }
        prev = Some(k);
    }
    Ok((coords, folded))
}

/// A canonical row-major COO tensor with `coo`'s shape and dimension names, from
/// coordinates and values that are sorted and unique by construction.
pub(crate) fn canonical_coo<V: Value, I: Index>(
    coo: &CooTensor<V, I>,
    coords: Vec<I>,
    values: Vec<V>,
) -> Result<CooTensor<V, I>> {
    CooTensor::try_new_with(
        coo.shape().to_vec(),
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        coords.into(),
        values.into(),
        &TensorOptions::trusted(),
    )?
    .with_dim_names(coo.dim_names().to_vec())
}

/// COO to CSF with any axis order: a radix sort by the permuted coordinates
/// (skipped for a canonical COO in natural order), then one pass building the
/// levels.
///
/// ```
/// use arrow_sparse::kernels::convert::coo_to_csf;
/// use arrow_sparse::CooTensor;
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 2], &[(vec![1, 2, 0], 1.0), (vec![0, 0, 1], 2.0)])?;
/// let csf = coo_to_csf::<f64, i64, i32>(&coo, &[1, 2, 0])?;
/// assert_eq!((csf.axis_order(), csf.get(&[1, 2, 0])), (&[1usize, 2, 0][..], Some(1.0)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn coo_to_csf<V: Value, I: Index, P: Index>(
    coo: &CooTensor<V, I>,
    axis_order: &[usize],
) -> Result<CsfTensor<V, I, P>> {
    let n = coo.ndim();
    crate::tensor::validate::check_permutation("axis_order", axis_order, n)?;
    let natural = axis_order.iter().enumerate().all(|(i, &a)| i == a);
    let nnz = coo.nnz();
    let perm: Option<Vec<usize>> = if coo.is_canonical() && natural {
        None
    } else {
        Some(sort_permutation(coo, axis_order)?)
    };
    let (c, layout) = (&coo.coords()[..], coo.layout());
    let at = |k: usize, d: usize| {
        let (base, stride) = coord_place(layout, nnz, n, d);
        c[base + stride * k]
    };
    let entry = |i: usize| perm.as_ref().map_or(i, |p| p[i]);
    let mut indptr: Vec<Vec<P>> = vec![Vec::new(); n - 1];
    let mut indices: Vec<Vec<I>> = vec![Vec::new(); n];
    crate::alloc::reserve(&mut indices[n - 1], nnz, "CSF indices")?;
    to_index::<P>(nnz, "CSF indptr")?;
    let mut prev: Option<usize> = None;
    for i in 0..nnz {
        let k = entry(i);
        let first_diff = match prev {
            None => 0,
            Some(p) => axis_order
                .iter()
                .position(|&d| at(p, d) != at(k, d))
                .unwrap_or(n - 1),
        };
        for lev in first_diff..n {
            if lev < n - 1 {
                indptr[lev].push(P::usize_as(indices[lev + 1].len()));
            }
            indices[lev].push(at(k, axis_order[lev]));
        }
        prev = Some(k);
    }
    for lev in 0..n - 1 {
        let len = indices[lev + 1].len();
        indptr[lev].push(P::usize_as(len));
    }
    let values: ScalarBuffer<V> = match &perm {
        None => coo.values().clone(),
        Some(p) => {
            let mut v = crate::alloc::with_capacity::<V>(p.len(), "CSF values")?;
            v.extend(p.iter().map(|&k| coo.values()[k]));
            v.into()
        }
    };
    CsfTensor::try_new_with(
        coo.shape().to_vec(),
        axis_order.to_vec(),
        indptr.into_iter().map(ScalarBuffer::from).collect(),
        indices.into_iter().map(ScalarBuffer::from).collect(),
        values,
        &TensorOptions::trusted(),
    )?
    .with_dim_names(coo.dim_names().to_vec())
}

/// Elements per block of the dense scan (8 MiB of `f64`): a block is counted in
/// one task and written in one task.
const DENSE_BLOCK: usize = 1 << 20;

/// Bit `j` set when `group[j]` (at most 64 elements) is not zero. The compare
/// loop has no branch, so the scan pays one loop exit per 64 elements rather
/// than a mispredicted branch per non-zero. Kept out of line: inlined into
/// [`dense_block`]'s loop, the compare was not vectorised (one element per
/// step instead of four).
#[inline(never)]
fn nonzero_mask<V: Value>(group: &[V]) -> u64 {
    let mut m = 0u64;
    for (j, v) in group.iter().enumerate().take(64) {
        m |= u64::from(!v.is_zero()) << j;
    }
    m
}

/// The non-zeros of elements `lo..lo + block.len()` of a row-major tensor of
/// shape `shape` (`block` is that slice of its values), in order, into `coords`
/// (`ndim` per entry) and `values`, which hold at least that many entries. The
/// leading coordinates are carried from row to row (an odometer: no division
/// per entry); groups of 64 elements are scanned by their [`nonzero_mask`].
/// Returns the number of entries written (it stops when the output is full).
fn dense_block<V: Value, I: Index>(
    block: &[V],
    lo: usize,
    shape: &[usize],
    coords: &mut [I],
    values: &mut [V],
) -> usize {
    // 1 to 3 dimensions with the entry's width known to the compiler: each
    // entry's coordinates are then stored directly, not copied by a call
    match shape.len() {
        1 => dense_block_of::<V, I, 1>(block, lo, shape, coords, values),
        2 => dense_block_of::<V, I, 2>(block, lo, shape, coords, values),
        3 => dense_block_of::<V, I, 3>(block, lo, shape, coords, values),
        _ => dense_block_of::<V, I, 0>(block, lo, shape, coords, values),
    }
}

/// [`dense_block`] for `N` dimensions (`shape.len() == N`), or any number when
/// `N` is 0.
#[inline(always)]
fn dense_block_of<V: Value, I: Index, const N: usize>(
    block: &[V],
    lo: usize,
    shape: &[usize],
    coords: &mut [I],
    values: &mut [V],
) -> usize {
    let ndim = if N == 0 { shape.len() } else { N };
    if ndim == 0 || shape.len() != ndim || block.is_empty() {
        return 0;
    }
    let last = shape[ndim - 1];
    // the coordinates of the block's first element; the leading ones also in
    // the index type, refreshed once per row
    let mut at = vec![0usize; ndim];
    crate::dims::unravel(lo, shape, &mut at);
    let (row_at, lead_shape) = (&mut at[..ndim - 1], &shape[..ndim - 1]);
    let mut lead: Vec<I> = row_at.iter().map(|&x| I::usize_as(x)).collect();
    let mut col0 = lo % last;
    let mut k = 0usize;
    let mut rest = block;
    while !rest.is_empty() {
        let (row, next) = rest.split_at((last - col0).min(rest.len()));
        for (g, group) in row.chunks(64).enumerate() {
            let mut m = nonzero_mask(group);
            while m != 0 {
                let j = m.trailing_zeros() as usize;
                m &= m - 1;
                let (Some(c), Some(v)) =
                    (coords.get_mut(k * ndim..(k + 1) * ndim), values.get_mut(k))
                else {
                    return k; // more non-zeros than counted (the caller reports it)
                };
                c[..ndim - 1].copy_from_slice(&lead);
                c[ndim - 1] = I::usize_as(col0 + g * 64 + j);
                *v = group[j];
                k += 1;
            }
        }
        rest = next;
        col0 = 0;
        // the next row: carry through the leading coordinates
        crate::dims::advance(row_at, lead_shape);
        for (l, &x) in lead.iter_mut().zip(row_at.iter()) {
            *l = I::usize_as(x);
        }
    }
    k
}

/// The non-zeros of the row-major values `vals` of shape `shape` (ndim >= 1,
/// empty `vals` for an empty tensor) as row-major coordinates and values: by
/// [`dense_scan_once`] (one read of the values), or, when its output cannot be
/// reserved, by [`dense_scan_twice`].
fn dense_scan<V: Value, I: Index>(
    vals: &[V],
    shape: &[usize],
    block: usize,
) -> Result<(Vec<I>, Vec<V>)> {
    match dense_scan_once(vals, shape, block) {
        Some(out) => Ok(out),
        None => dense_scan_twice(vals, shape, block),
    }
}

/// [`dense_scan`] reading the values once: the output is reserved for every
/// element being a non-zero (zeroed allocations, so the OS backs only the
/// pages written, and the input's own size bounds the reservation), the
/// values are cut into one part per thread (of at least `block` elements),
/// each part writes its entries from its own first element's position on,
/// the parts after the first are moved down behind the one before, and the
/// buffers are trimmed to the entries. `None` when the reservation is refused
/// (the caller counts first instead).
///
/// Against counting first ([`dense_scan_twice`]), this reads the dense values
/// once instead of twice: on a 10^8-element `f64` tensor, 800 MB less read
/// from memory.
fn dense_scan_once<V: Value, I: Index>(
    vals: &[V],
    shape: &[usize],
    block: usize,
) -> Option<(Vec<I>, Vec<V>)> {
    let ndim = shape.len();
    let n = vals.len();
    if n == 0 {
        return Some((Vec::new(), Vec::new()));
    }
    let mut coords = crate::alloc::zeroed::<I>(n.checked_mul(ndim)?, "COO coordinates").ok()?;
    let mut values = crate::alloc::zeroed::<V>(n, "COO values").ok()?;
    let parts = rayon::current_num_threads().min(n / block.max(1)).max(1);
    let cuts: Vec<usize> = (0..=parts).map(|p| p * n / parts).collect();
    let mut pieces = Vec::with_capacity(parts);
    let (mut rc, mut rv) = (&mut coords[..], &mut values[..]);
    for w in cuts.windows(2) {
        let len = w[1] - w[0];
        let (c, c2) = rc.split_at_mut(len * ndim);
        let (v, v2) = rv.split_at_mut(len);
        pieces.push((w[0], c, v));
        (rc, rv) = (c2, v2);
    }
    let written: Vec<usize> = pieces
        .into_par_iter()
        .map(|(lo, c, v)| dense_block(&vals[lo..lo + v.len()], lo, shape, c, v))
        .collect();
    // the parts moved down in order: a part's new place may overlap the old
    // place of the part before it, never of one after
    let mut k = 0;
    for (&lo, &w) in cuts.iter().zip(&written) {
        if lo != k {
            coords.copy_within(lo * ndim..(lo + w) * ndim, k * ndim);
            values.copy_within(lo..lo + w, k);
        }
        k += w;
    }
    coords.truncate(k * ndim);
    coords.shrink_to_fit();
    values.truncate(k);
    values.shrink_to_fit();
    Some((coords, values))
}

/// [`dense_scan`] in two passes over blocks of `block` elements: pass 1
/// counts each block's non-zeros, pass 2 writes each block into its own part
/// of the output (allocated exactly), blocks in parallel.
fn dense_scan_twice<V: Value, I: Index>(
    vals: &[V],
    shape: &[usize],
    block: usize,
) -> Result<(Vec<I>, Vec<V>)> {
    let ndim = shape.len();
    let block = block.max(1);
    // pass 1: the non-zeros per block; pass 2: each block written into its own
    // part of the output (the values read twice instead of a list of offsets
    // written and read back)
    let counts: Vec<usize> = vals
        .par_chunks(block)
        .map(|b| {
            b.chunks(64)
                .map(|g| nonzero_mask(g).count_ones() as usize)
                .sum()
        })
        .collect();
    let nnz: usize = counts.iter().sum();
    let mut coords = crate::alloc::zeroed::<I>(
        nnz.checked_mul(ndim)
            .ok_or_else(|| Error::allocation("COO coordinates", usize::MAX, size_of::<I>()))?,
        "COO coordinates",
    )?;
    let mut values = crate::alloc::zeroed::<V>(nnz, "COO values")?;
    let mut parts = Vec::with_capacity(counts.len());
    let (mut rc, mut rv) = (&mut coords[..], &mut values[..]);
    for (b, &n) in counts.iter().enumerate() {
        let (c, c2) = rc.split_at_mut(n * ndim);
        let (v, v2) = rv.split_at_mut(n);
        parts.push((b, c, v));
        (rc, rv) = (c2, v2);
    }
    let written: usize = parts
        .into_par_iter()
        .map(|(b, c, v)| {
            let lo = b * block;
            let part = &vals[lo..(lo + block).min(vals.len())];
            dense_block(part, lo, shape, c, v)
        })
        .sum();
    if written != nnz {
        return Err(Error::invariant(
            "dense tensor",
            None,
            "the two passes of the scan found different non-zeros",
        ));
    }
    Ok((coords, values))
}

/// `d` itself when its values are packed row-major, else a row-major copy of
/// it, after checking that its largest coordinate fits the index type `I` (the
/// common start of the dense conversions).
fn row_major_for<V: Value, I: Index>(d: &DenseTensor<V>) -> Result<DenseTensor<V>> {
    if let Some(&big) = d.shape().iter().max()
        && big > 0
    {
        to_index::<I>(big - 1, "coordinate")?;
    }
    if d.as_any().is_row_major() {
        Ok(d.clone())
    } else {
        d.to_row_major()
    }
}

/// Dense (row-major or strided) to canonical COO, scanning in parallel.
///
/// The values are read once: the output is first reserved for every element
/// being a non-zero (from zeroed allocations, so only the pages written are
/// backed by memory) and trimmed to the entries at the end, without a copy
/// where the allocator shrinks in place (glibc does, by `mremap`). When that
/// reservation is refused, the non-zeros are counted first and the output
/// allocated exactly (two reads). [`dense_to_csx`] and, when it scans,
/// [`dense_to_csf`] start with this conversion.
///
/// ```
/// use arrow_sparse::kernels::convert::dense_to_coo;
/// use arrow_sparse::DenseTensor;
/// // [[0, 5, 0], [7, 0, 0]]
/// let d = DenseTensor::<i32>::try_new(vec![2, 3], vec![0, 5, 0, 7, 0, 0].into())?;
/// let coo = dense_to_coo::<i32, i16>(&d)?;
/// assert_eq!((coo.nnz(), coo.is_canonical()), (2, true));
/// assert_eq!((coo.coords().as_ref(), coo.values().as_ref()), (&[0i16, 1, 1, 0][..], &[5, 7][..]));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn dense_to_coo<V: Value, I: Index>(d: &DenseTensor<V>) -> Result<CooTensor<V, I>> {
    let d = row_major_for::<V, I>(d)?;
    let shape = d.shape().to_vec();
    let size: usize = shape.iter().product();
    let ndim = shape.len();
    let vals = match d.as_row_major_slice() {
        _ if size == 0 || ndim == 0 => &[],
        Some(v) => v,
        None => {
            return Err(Error::Unsupported(
                "fast dense conversions need a row-major tensor".into(),
            ));
        }
    };
    let (coords, values) = dense_scan::<V, I>(vals, &shape, DENSE_BLOCK)?;
    CooTensor::try_new_with(
        shape,
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        coords.into(),
        values.into(),
        &TensorOptions::trusted(),
    )?
    .with_dim_names(d.dim_names().to_vec())
}

/// Dense to CSR / CSC. CSR from a row-major tensor needs no sort at all.
///
/// ```
/// use arrow_sparse::kernels::convert::dense_to_csx;
/// use arrow_sparse::{CompressedAxis, DenseTensor};
/// // [[0, 5, 0], [7, 0, 8]]
/// let d = DenseTensor::<f32>::try_new(vec![2, 3], vec![0.0, 5.0, 0.0, 7.0, 0.0, 8.0].into())?;
/// let csr = dense_to_csx::<f32, i32, i64>(&d, CompressedAxis::Row)?;
/// assert_eq!(csr.indptr().as_ref(), &[0, 1, 3]);
/// assert_eq!((csr.indices().as_ref(), csr.values().as_ref()), (&[1, 0, 2][..], &[5.0, 7.0, 8.0][..]));
/// let csc = dense_to_csx::<f32, i32, i64>(&d, CompressedAxis::Column)?;
/// assert_eq!(csc.indptr().as_ref(), &[0, 1, 2, 3]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn dense_to_csx<V: Value, I: Index, P: Index>(
    d: &DenseTensor<V>,
    axis: CompressedAxis,
) -> Result<CsxMatrix<V, I, P>> {
    if d.ndim() != 2 {
        return Err(Error::shape(
            "CSR/CSC conversion",
            "a 2-D tensor",
            format!("{}-D", d.ndim()),
        ));
    }
    let coo = dense_to_coo::<V, I>(d)?;
    coo_to_csx(&coo, axis)
}

/// Dense to CSF with any axis order: one walk of the tensor in the tree's order,
/// which gives the levels sorted (no sort), when its reads stay in cache (see
/// `dense_walk_csf`: always when the last dimension is the tree's leaf level);
/// otherwise a scan to COO in storage order and a sort by the tree's order.
///
/// ```
/// use arrow_sparse::kernels::convert::dense_to_csf;
/// use arrow_sparse::DenseTensor;
/// // shape (2, 2, 2) with non-zeros at [0, 1, 1] = 3 and [1, 1, 0] = 4
/// let d = DenseTensor::<f64>::try_new(vec![2, 2, 2], vec![0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 4.0, 0.0].into())?;
/// let csf = dense_to_csf::<f64, i32, i32>(&d, &[2, 0, 1])?; // the tree's root level is dimension 2
/// assert_eq!((csf.axis_order(), csf.nnz()), (&[2usize, 0, 1][..], 2));
/// assert_eq!((csf.get(&[0, 1, 1]), csf.get(&[1, 1, 0]), csf.get(&[0, 0, 0])), (Some(3.0), Some(4.0), Some(0.0)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn dense_to_csf<V: Value, I: Index, P: Index>(
    d: &DenseTensor<V>,
    axis_order: &[usize],
) -> Result<CsfTensor<V, I, P>> {
    crate::dims::check_permutation("axis_order", axis_order, d.ndim())?;
    if let Some(csf) = dense_walk_csf(d, axis_order, cache_sizes())? {
        return Ok(csf);
    }
    let coo = dense_to_coo::<V, I>(d)?;
    coo_to_csf(&coo, axis_order)
}

/// [`dense_to_csf`] by one walk of the dense tensor in the tree's order, or
/// `None` when that walk would not keep its reads in cache (the caller scans to
/// COO in storage order and sorts instead).
///
/// The walk visits the elements level by level in `axis_order` and pushes each
/// non-zero leaf, and each node above it the first time one appears below, so
/// the levels come out sorted with no sort at all. Its reads are in storage
/// order only when the dense tensor's last (contiguous) dimension is the leaf
/// level. When it is a level above, every element of the levels below is on a
/// cache line of its own, and the next coordinate of the contiguous dimension
/// reads the same lines again: the walk keeps all of them in cache, one read
/// from memory each, as long as those lines (the product of the extents below
/// that level, 64 bytes each) fit in half the level-2 cache; otherwise it is
/// not used. A tensor that fits in half the level-2 cache always qualifies.
///
/// On several threads the root level's coordinates are cut into ranges walked
/// in parallel, each into its own levels, joined in order: the same tree on any
/// number of threads.
fn dense_walk_csf<V: Value, I: Index, P: Index>(
    d: &DenseTensor<V>,
    axis_order: &[usize],
    caches: CacheSizes,
) -> Result<Option<CsfTensor<V, I, P>>> {
    let shape = d.shape();
    let n = shape.len();
    let size = shape.iter().try_fold(1usize, |a, &e| a.checked_mul(e));
    let (Some(size), Some(&last)) = (size, axis_order.last()) else {
        return Ok(None);
    };
    if size == 0 {
        return Ok(None);
    }
    let ext: Vec<usize> = axis_order.iter().map(|&a| shape[a]).collect();
    let contiguous = axis_order.iter().position(|&a| a == n - 1).unwrap_or(n - 1);
    let below: usize = ext[contiguous + 1..]
        .iter()
        .fold(1usize, |a, &e| a.saturating_mul(e));
    let half_l2 = caches.l2 / 2;
    let fits = size.saturating_mul(size_of::<V>()) <= half_l2;
    if last != n - 1 && !fits && below.saturating_mul(64) > half_l2 {
        return Ok(None);
    }
    let d = row_major_for::<V, I>(d)?;
    let vals = match d.as_row_major_slice() {
        Some(v) if v.len() == size => v,
        _ => {
            return Err(Error::invariant(
                "dense tensor",
                None,
                "a row-major tensor whose values are not its shape's size",
            ));
        }
    };
    // row-major strides by dimension, then by level
    let dim_stride = crate::tensor::dense::row_major_strides(shape);
    let walk = DenseWalk {
        vals,
        ext: &ext,
        stride: axis_order.iter().map(|&a| dim_stride[a]).collect(),
    };
    let roots = ext[0];
    let parts = if rayon::current_num_threads() > 1 && size > DENSE_BLOCK {
        roots.min(4 * rayon::current_num_threads())
    } else {
        1
    };
    let mut levels = if parts <= 1 {
        walk.run(0, roots)?
    } else {
        let cuts: Vec<(usize, usize)> = (0..parts)
            .map(|k| (k * roots / parts, (k + 1) * roots / parts))
            .collect();
        let each: Vec<Result<Walked<V, I>>> =
            cuts.into_par_iter().map(|(a, b)| walk.run(a, b)).collect();
        let mut it = each.into_iter();
        let mut all = it.next().unwrap_or_else(|| walk.run(0, 0))?;
        for part in it {
            all.append(part?)?;
        }
        all
    };
    let nnz = levels.vals.len();
    to_index::<P>(nnz, "CSF indptr")?;
    let mut indptr = Vec::with_capacity(n - 1);
    for (l, starts) in levels.ptr.iter_mut().enumerate() {
        crate::alloc::push(starts, levels.idx[l + 1].len(), "CSF indptr")?;
        let mut p = crate::alloc::with_capacity::<P>(starts.len(), "CSF indptr")?;
        p.extend(starts.iter().map(|&x| P::usize_as(x)));
        indptr.push(ScalarBuffer::from(p));
    }
    let csf = CsfTensor::try_new_with(
        shape.to_vec(),
        axis_order.to_vec(),
        indptr,
        levels.idx.into_iter().map(ScalarBuffer::from).collect(),
        levels.vals.into(),
        &TensorOptions::trusted(),
    )?
    .with_dim_names(d.dim_names().to_vec())?;
    Ok(Some(csf))
}

/// The levels a [`DenseWalk`] builds: each level's node coordinates, each
/// level above the leaves' children starts (the closing start is pushed by the
/// caller), and the leaves' values.
struct Walked<V, I> {
    idx: Vec<Vec<I>>,
    ptr: Vec<Vec<usize>>,
    vals: Vec<V>,
}

impl<V: Value, I: Index> Walked<V, I> {
    /// `next`'s levels after these (the walk of the following root range).
    fn append(&mut self, next: Walked<V, I>) -> Result<()> {
        for (l, starts) in next.ptr.into_iter().enumerate() {
            let shift = self.idx[l + 1].len();
            crate::alloc::reserve(&mut self.ptr[l], starts.len(), "CSF indptr")?;
            self.ptr[l].extend(starts.into_iter().map(|x| x + shift));
        }
        for (l, idx) in next.idx.into_iter().enumerate() {
            crate::alloc::reserve(&mut self.idx[l], idx.len(), "CSF indices")?;
            self.idx[l].extend(idx);
        }
        crate::alloc::reserve(&mut self.vals, next.vals.len(), "CSF values")?;
        self.vals.extend(next.vals);
        Ok(())
    }
}

/// The walk of [`dense_walk_csf`] over row-major values: `ext` and `stride` are
/// each level's extent and element stride.
struct DenseWalk<'a, V> {
    vals: &'a [V],
    ext: &'a [usize],
    stride: Vec<usize>,
}

impl<V: Value> DenseWalk<'_, V> {
    /// Root coordinates `lo..hi` and everything below them.
    fn run<I: Index>(&self, lo: usize, hi: usize) -> Result<Walked<V, I>> {
        let n = self.ext.len();
        let mut out = Walked {
            idx: (0..n).map(|_| Vec::new()).collect(),
            ptr: (0..n - 1).map(|_| Vec::new()).collect(),
            vals: Vec::new(),
        };
        let mut group = [V::default(); 64];
        self.level(&mut out, 0, 0, lo, hi, &mut group)?;
        Ok(out)
    }

    /// Coordinates `lo..hi` of level `l` under the element offset `base`;
    /// whether anything was pushed.
    fn level<I: Index>(
        &self,
        out: &mut Walked<V, I>,
        l: usize,
        base: usize,
        lo: usize,
        hi: usize,
        group: &mut [V; 64],
    ) -> Result<bool> {
        let s = self.stride[l];
        if l + 1 == self.ext.len() {
            let (idx, vals) = (&mut out.idx[l], &mut out.vals);
            let before = vals.len();
            let mut x = lo;
            while x < hi {
                let m = (hi - x).min(64);
                let g: &[V] = if s == 1 {
                    &self.vals[base + x..base + x + m]
                } else {
                    for (j, v) in group[..m].iter_mut().enumerate() {
                        *v = self.vals[base + (x + j) * s];
                    }
                    &group[..m]
                };
                let mut mask = nonzero_mask(g);
                let k = mask.count_ones() as usize;
                if k > 0 {
                    crate::alloc::grow(vals, k, "CSF values")?;
                    crate::alloc::grow(idx, k, "CSF indices")?;
                    while mask != 0 {
                        let j = mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                        idx.push(I::usize_as(x + j));
                        vals.push(g[j]);
                    }
                }
                x += m;
            }
            return Ok(vals.len() > before);
        }
        let mut any = false;
        for x in lo..hi {
            let (at, start) = (out.idx[l].len(), out.idx[l + 1].len());
            crate::alloc::push(&mut out.idx[l], I::usize_as(x), "CSF indices")?;
            crate::alloc::push(&mut out.ptr[l], start, "CSF indptr")?;
            if self.level(out, l + 1, base + x * s, 0, self.ext[l + 1], group)? {
                any = true;
            } else {
                out.idx[l].truncate(at);
                out.ptr[l].truncate(at);
            }
        }
        Ok(any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Convert;

    fn random(n: usize, shape: &[usize], seed: u64) -> CooTensor<f64, i64> {
        let mut s = seed | 1;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let entries: Vec<(Vec<usize>, f64)> = (0..n)
            .map(|_| {
                (
                    shape
                        .iter()
                        .map(|&d| (next() % d as u64) as usize)
                        .collect(),
                    (next() % 1000) as f64,
                )
            })
            .collect();
        CooTensor::from_entries(shape.to_vec(), &entries).unwrap()
    }

    /// The same canonical row-major COO tensor with its coordinates in `layout`.
    fn with_layout(coo: &CooTensor<f64, i64>, layout: CoordLayout) -> CooTensor<f64, i64> {
        assert_eq!(coo.layout(), CoordLayout::RowMajor);
        let (n, nd, c) = (coo.nnz(), coo.ndim(), coo.coords());
        let coords: Vec<i64> = match layout {
            CoordLayout::RowMajor => c.to_vec(),
            CoordLayout::ColumnMajor => (0..nd)
                .flat_map(|d| (0..n).map(move |k| c[k * nd + d]))
                .collect(),
        };
        CooTensor::try_new(
            coo.shape().to_vec(),
            layout,
            EntryOrder::Canonical,
            coords.into(),
            coo.values().clone(),
        )
        .unwrap()
    }

    #[test]
    fn canonical_coo_to_csr_checks_the_flag_in_both_layouts() {
        let coo = canonicalize(&random(300_000, &[5000, 40], 11)).unwrap();
        let want = coo.coo_to_csx::<i64>(CompressedAxis::Row).unwrap();
        let cm = with_layout(&coo, CoordLayout::ColumnMajor);
        assert!(cm.is_canonical());
        assert_eq!(
            coo_to_csx::<f64, i64, i64>(&cm, CompressedAxis::Row).unwrap(),
            want
        );
        // a wrong canonical flag on a tensor built without validation: an error,
        // wherever the disorder is (first entry, a part boundary, the last entry)
        let nnz = coo.nnz();
        for at in [0, nnz / 2 - 1, nnz / 2, nnz - 2] {
            for layout in [CoordLayout::RowMajor, CoordLayout::ColumnMajor] {
                let t = with_layout(&coo, layout);
                let mut c = t.coords().to_vec();
                let (i, j) = match layout {
                    CoordLayout::RowMajor => (2 * at, 2 * at + 2),
                    CoordLayout::ColumnMajor => (at, at + 1),
                };
                if c[i] == c[j] {
                    c[j] += 1; // rows equal: make the first one larger than the next
                }
                c.swap(i, j);
                let bad = CooTensor::<f64, i64>::try_new_with(
                    coo.shape().to_vec(),
                    layout,
                    EntryOrder::Canonical,
                    c.into(),
                    t.values().clone(),
                    &TensorOptions::trusted(),
                )
                .unwrap();
                assert!(
                    coo_to_csx::<f64, i64, i64>(&bad, CompressedAxis::Row).is_err(),
                    "{layout:?} at {at}"
                );
            }
        }
    }

    #[test]
    fn unsorted_coo_converts_alike_from_both_layouts() {
        // entries in random order (not canonical), with duplicates, large
        // enough for the partitioned scatter
        let coo = random(300_000, &[5000, 40], 12);
        assert!(!coo.is_canonical());
        let (n, c) = (coo.nnz(), coo.coords());
        let mut dense = vec![0.0f64; 5000 * 40];
        for k in 0..n {
            dense[c[2 * k] as usize * 40 + c[2 * k + 1] as usize] += coo.values()[k];
        }
        let cm: Vec<i64> = (0..2)
            .flat_map(|d| (0..n).map(move |k| c[2 * k + d]))
            .collect();
        let cm = CooTensor::<f64, i64>::try_new(
            vec![5000, 40],
            CoordLayout::ColumnMajor,
            EntryOrder::Any,
            cm.into(),
            coo.values().clone(),
        )
        .unwrap();
        for axis in [CompressedAxis::Row, CompressedAxis::Column] {
            let want = coo_to_csx::<f64, i64, i64>(&coo, axis).unwrap();
            assert_eq!(coo_to_csx::<f64, i64, i64>(&cm, axis).unwrap(), want);
            let (ptr, idx, val) = (want.indptr(), want.indices(), want.values());
            let mut got = vec![0.0f64; 5000 * 40];
            for major in 0..ptr.len() - 1 {
                for p in ptr[major] as usize..ptr[major + 1] as usize {
                    let (r, col) = match axis {
                        CompressedAxis::Row => (major, idx[p] as usize),
                        CompressedAxis::Column => (idx[p] as usize, major),
                    };
                    got[r * 40 + col] += val[p];
                }
            }
            assert_eq!(got, dense, "{axis:?}");
        }
    }

    #[test]
    fn canonical_rows_give_the_counted_indptr_on_any_number_of_threads() {
        // row patterns that put part boundaries inside long rows, leave parts
        // empty, and leave empty rows before, between and after the parts
        let n = 300_000usize;
        let patterns: Vec<(usize, Vec<i64>)> = vec![
            (10, vec![3; n]),
            (10, (0..n).map(|k| if k < n - 10 { 0 } else { 9 }).collect()),
            (3 * n, (0..n).map(|k| (k / 3 * 7) as i64).collect()),
            (
                1_000_000,
                (0..n)
                    .map(|k| (k as i64 * 7919) % 1000)
                    .map(|x| x * x)
                    .collect(),
            ),
            (2 * n + 20, (0..n).map(|k| 5 + (k / 2) as i64 * 4).collect()),
        ];
        for (extent, mut rows) in patterns {
            rows.sort_unstable();
            // the reference: indptr[q] counts the entries of rows below q
            let mut want = vec![0i64; extent + 1];
            for &r in &rows {
                want[r as usize + 1] += 1;
            }
            for q in 1..=extent {
                want[q] += want[q - 1];
            }
            // each entry's rank in its row: sorted, distinct columns
            let cols: Vec<i64> = (0..n)
                .map(|k| (k - rows[..k].partition_point(|&r| r < rows[k])) as i64)
                .collect();
            let pairs: Vec<i64> = rows.iter().zip(&cols).flat_map(|(&r, &c)| [r, c]).collect();
            let halves: Vec<i64> = rows.iter().chain(&cols).copied().collect();
            for (layout, coords) in [
                (CoordLayout::RowMajor, pairs),
                (CoordLayout::ColumnMajor, halves),
            ] {
                let coo = CooTensor::<f64, i64>::try_new(
                    vec![extent, n],
                    layout,
                    EntryOrder::Canonical,
                    coords.into(),
                    vec![1.0; n].into(),
                )
                .unwrap();
                for threads in [1, 2, 3, 7] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let csr = pool
                        .install(|| coo_to_csx::<f64, i64, i32>(&coo, CompressedAxis::Row))
                        .unwrap();
                    let got: Vec<i64> = csr.indptr().iter().map(|&p| p as i64).collect();
                    assert!(
                        got == want,
                        "{layout:?}, {threads} threads, extent {extent}"
                    );
                    assert_eq!(csr.indices().as_ref(), &cols[..]);
                }
            }
        }
        // a negative row inside a part (trusted input): an error, not a panic
        for at in [0, 1, n / 2, n - 2] {
            let mut c: Vec<i64> = (0..n as i64).flat_map(|k| [k / 10, 0]).collect();
            c[2 * at] = -1;
            let bad = CooTensor::<f64, i64>::try_new_with(
                vec![n / 10, 1],
                CoordLayout::RowMajor,
                EntryOrder::Canonical,
                c.into(),
                vec![1.0; n].into(),
                &TensorOptions::trusted(),
            )
            .unwrap();
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let r = pool.install(|| coo_to_csx::<f64, i64, i64>(&bad, CompressedAxis::Row));
                assert!(
                    matches!(r, Err(Error::Invariant { .. })),
                    "{at}, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn fast_paths_agree_with_the_reference() {
        for (n, shape) in [
            (0usize, vec![3usize, 4]),
            (50, vec![7, 9]),
            (300_000, vec![1000, 700]),
            // most rows empty, on several threads
            (300_000, vec![2_000_000, 5]),
        ] {
            let coo = random(n, &shape, 7);
            let canon = canonicalize(&coo).unwrap();
            assert_eq!(canon, coo.canonicalize_by_comparison().unwrap());
            for axis in [CompressedAxis::Row, CompressedAxis::Column] {
                let fast = coo_to_csx::<f64, i64, i32>(&canon, axis).unwrap();
                let slow = canon.coo_to_csx::<i32>(axis).unwrap();
                assert_eq!(fast, slow, "{axis:?}");
                let t = transpose_csx(&fast).unwrap();
                assert_eq!(t.to_coo::<i64>().unwrap().canonicalize().unwrap(), canon);
                // non-canonical input: same multiset of entries per row
                let unsorted = coo_to_csx::<f64, i64, i64>(&coo, axis).unwrap();
                assert_eq!(
                    unsorted.to_coo::<i64>().unwrap().canonicalize().unwrap(),
                    canon
                );
            }
        }
        let coo = random(5000, &[6, 7, 8], 3);
        for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
            let fast = coo_to_csf::<f64, i64, i64>(&coo, &order).unwrap();
            assert_eq!(fast, coo.coo_to_csf::<i64>(&order).unwrap());
        }
        let dense = coo.to_dense().unwrap();
        assert_eq!(
            dense_to_coo::<f64, i32>(&dense).unwrap(),
            dense.to_coo::<i32>().unwrap()
        );
    }

    /// The dense scan against a reference that walks every index of the shape:
    /// blocks that end inside a row, rows shorter and longer than a 64-element
    /// group, 1-D, leading coordinates carried over several dimensions, every
    /// element zero or non-zero, and -0.0 (zero) and NaN (not zero), on 1 and 3
    /// threads; the scan reading once (its parts moved down) and the one
    /// counting first, each trimmed to its entries.
    #[test]
    fn the_dense_scan_finds_every_non_zero_in_order() {
        let mut seed = 11u64;
        for shape in [
            vec![3usize, 7, 11],
            vec![1000],
            vec![2, 1, 130],
            vec![4, 3, 2, 65],
        ] {
            let size: usize = shape.iter().product();
            for density in [0u64, 9, 50, 100] {
                let vals: Vec<f64> = (0..size)
                    .map(|k| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        match ((seed >> 33) % 100, k % 97) {
                            (_, 5) => -0.0,
                            (_, 6) if density > 0 => f64::NAN,
                            (r, _) if r < density => k as f64 + 1.0,
                            _ => 0.0,
                        }
                    })
                    .collect();
                // the reference: every index in row-major order
                let (mut rc, mut rv) = (Vec::<i32>::new(), Vec::<u64>::new());
                let mut idx = vec![0usize; shape.len()];
                for &v in &vals {
                    if v != 0.0 || v.is_nan() {
                        rc.extend(idx.iter().map(|&x| x as i32));
                        rv.push(v.to_bits());
                    }
                    for d in (0..shape.len()).rev() {
                        idx[d] += 1;
                        if idx[d] < shape[d] {
                            break;
                        }
                        idx[d] = 0;
                    }
                }
                for (block, threads) in [(1, 1), (5, 3), (64, 1), (100, 3), (1 << 20, 3)] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let scans = pool.install(|| {
                        [
                            dense_scan::<f64, i32>(&vals, &shape, block).unwrap(),
                            dense_scan_once::<f64, i32>(&vals, &shape, block).unwrap(),
                            dense_scan_twice::<f64, i32>(&vals, &shape, block).unwrap(),
                        ]
                    });
                    for (c, v) in scans {
                        let v: Vec<u64> = v.iter().map(|x| x.to_bits()).collect();
                        assert_eq!((&c, &v), (&rc, &rv), "{shape:?} {density} {block}");
                        assert_eq!((c.capacity(), v.len()), (c.len(), v.capacity()));
                    }
                }
            }
        }
    }

    #[test]
    fn slot_codes_round_trip_and_refuse_what_does_not_fit() {
        for (first, g) in [(0, 0), (1, 12), (12_287, 8), ((1 << 26) - 1, 63)] {
            let code = slot_code(first, g).unwrap();
            assert_eq!(slot_decode(code), (first, g), "{code:#x}");
        }
        assert!(matches!(
            slot_code(1 << 26, 0),
            Err(Error::Overflow { ref what, .. }) if what == "scatter slots"
        ));
        assert!(slot_code(usize::MAX, 0).is_err());
        assert!(slot_code(0, 64).is_err());
    }

    #[test]
    fn plans_follow_the_cache_and_the_data() {
        let small = CacheSizes {
            l1: 32 << 10,
            l2: 512 << 10,
            last_level: 32 << 20,
            from_system: true,
        };
        // fits the cache, or few keys: direct
        assert_eq!(plan(1000, 1_000_000, 12, 2, small), None);
        assert_eq!(plan(10_000_000, 100, 12, 2, small), None);
        // 10^7 entries over 10^6 keys: buckets of about L2 / 2 would be 2048 of
        // them; the level-1 cache holds two streams' lines for 256 (and so
        // slots of heavy buckets keep at least 256 keys)
        let p = plan(10_000_000, 1_000_000, 12, 2, small).unwrap();
        assert_eq!((p.shift, p.buckets, p.min_slot), (12, 245, 8), "{p:?}");
        assert!(p.buckets << p.shift >= 1_000_000);
        // three streams per bucket: half as many buckets
        // (and pass 0's 16 ranges a bucket make the floor 2^9 keys)
        let p3 = plan(10_000_000, 1_000_000, 12, 3, small).unwrap();
        assert_eq!((p3.shift, p3.buckets, p3.min_slot), (13, 123, 9), "{p3:?}");
        // 2^36 keys: buckets of 2^28, ranges (and the narrowest slots) of 2^24,
        // 4096 counters in pass 0 rather than 2^28
        let ph = plan(10_000_000, 1 << 36, 12, 2, small).unwrap();
        assert_eq!((ph.shift, ph.buckets, ph.min_slot), (28, 256, 24), "{ph:?}");
        // a larger level-1 cache, more buckets (as many as the level-2 aim wants)
        let wide = CacheSizes {
            l1: 256 << 10,
            ..small
        };
        let pw = plan(10_000_000, 1_000_000, 12, 2, wide).unwrap();
        assert_eq!((pw.shift, pw.buckets, pw.min_slot), (9, 1954, 11), "{pw:?}");
        // a larger cache, fewer and larger buckets; a smaller one, more
        let big = CacheSizes {
            l2: 2 << 20,
            ..small
        };
        let tiny = CacheSizes {
            l2: 64 << 10,
            ..small
        };
        let (pb, pt) = (
            plan(10_000_000, 1_000_000, 12, 2, big).unwrap(),
            plan(10_000_000, 1_000_000, 12, 2, tiny),
        );
        assert!(pb.shift <= p.shift, "{pb:?} {p:?}");
        assert!(pt.is_none_or(|pt| pt.shift >= p.shift), "{pt:?} {p:?}");
    }

    /// Caches small enough that the tests' entries (a few hundred thousand at
    /// most) need many buckets (a 4 KiB level-1 cache: 32 for two write streams).
    const TINY: CacheSizes = CacheSizes {
        l1: 4 << 10,
        l2: 16 << 10,
        last_level: 64 << 10,
        from_system: false,
    };

    /// The partitioned scatter gives exactly the direct scatter's output and the
    /// per-key histogram's offsets, with the keys packed into the index slots and
    /// kept apart, on caches small enough to force many buckets, in pools of 1
    /// and 3 threads, for uniform keys and for keys so skewed that a bucket is
    /// cut into slots (of one key, or of two).
    #[test]
    fn partitioned_scatter_equals_the_direct_one() {
        let mut cases = Vec::new();
        for (n, shape) in [(5_000, [400usize, 3_000]), (300_000, [500, 70_000])] {
            let coo = random(n, &shape, n as u64 + 3);
            // shuffle the canonical entries (a fixed rotation and stride)
            let m = coo.nnz();
            let c = &coo.coords()[..];
            let order: Vec<usize> = (0..m).map(|k| (k * 7919 + 13) % m).collect();
            assert!(!m.is_multiple_of(7919));
            let mut coords = Vec::with_capacity(2 * m);
            for &k in &order {
                coords.extend_from_slice(&c[2 * k..2 * k + 2]);
            }
            let vals: Vec<f64> = order.iter().map(|&k| coo.values()[k]).collect();
            cases.push((coords, vals, shape, false));
        }
        // skewed: 3 entries in 5 on the first 8 keys of either axis, the rest
        // spread: the first bucket is heavy
        let (m, shape) = (300_000usize, [500usize, 490]);
        let coords: Vec<i64> = (0..m)
            .flat_map(|k| {
                let spread = [(k * 7919 % 500) as i64, (k * 104_729 % 490) as i64];
                if k % 5 < 3 {
                    [(k % 8) as i64, (k / 8 % 8) as i64]
                } else {
                    spread
                }
            })
            .collect();
        let vals: Vec<f64> = (0..m).map(|k| k as f64).collect();
        cases.push((coords, vals, shape, true));
        for (coords, vals, shape, skewed) in &cases {
            let m = vals.len();
            for axis in [0usize, 1] {
                let src = CooSource {
                    coords,
                    layout: CoordLayout::RowMajor,
                    nnz: m,
                    major: axis,
                    minor: 1 - axis,
                    minor_extent: shape[1 - axis],
                    vals,
                };
                let extent = shape[axis];
                let offsets = histogram_of(&src, extent).unwrap();
                let (idx, val) = direct_scatter(&src, &offsets).unwrap();
                let direct = (offsets.clone(), idx, val);
                // the plans for two and three write streams per bucket: 32 and 16
                // buckets here
                // floors of one key and of two (pass 0 counts every key, or
                // pairs of keys, and sums them into buckets and slots)
                for (streams, floor) in [(2, 0), (3, 0), (2, 1), (3, 1)] {
                    let mut p = plan(m, extent, 16, streams, TINY).expect("partitioned");
                    // TINY's level-1 cache sets a floor of 32 keys a slot, or
                    // a sixteenth of a bucket when wider (the ranges pass 0
                    // counts); below it the skewed buckets are cut
                    assert_eq!(p.min_slot, 5.max(p.shift.saturating_sub(RANGES_LOG2)));
                    p.min_slot = floor;
                    assert!(p.buckets > 1 && p.shift > 1);
                    let totals: Vec<usize> = (0..p.buckets)
                        .map(|b| offsets[((b + 1) << p.shift).min(extent)] - offsets[b << p.shift])
                        .collect();
                    let widths = slot_shifts(&totals, m, (p.shift, p.min_slot), extent);
                    assert_eq!(widths.iter().any(|&g| g < p.shift), *skewed, "{p:?}");
                    if *skewed {
                        // a slot per key with 32 buckets, slots of 2 keys with 16
                        let g = if streams == 2 { 0 } else { 1 };
                        assert_eq!(widths[0], g.max(floor), "{p:?}");
                    }
                    let bits = packed_minor_bits::<i64>(shape[1 - axis], p.shift).expect("packs");
                    for threads in [1, 3] {
                        let pool = rayon::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .build()
                            .unwrap();
                        let packed = pool.install(|| {
                            partitioned_scatter_as::<_, _, true>(&src, extent, p, bits).unwrap()
                        });
                        assert!(packed == direct, "m {m} axis {axis} threads {threads}");
                        let apart = pool.install(|| {
                            partitioned_scatter_as::<_, _, false>(&src, extent, p, 0).unwrap()
                        });
                        assert!(apart == direct, "m {m} axis {axis} threads {threads}");
                        let via = pool.install(|| scatter_with(&src, extent, TINY).unwrap());
                        assert!(via == direct);
                    }
                }
            }
        }
    }

    /// The walk in tree order builds exactly the tree that the scan to COO and
    /// the sort build, for every axis order of 1-D to 4-D tensors (row-major and
    /// strided, with negative zeros and all-zero subtrees), on 1 to 3 threads;
    /// it declines only when the lines below the contiguous dimension's level
    /// overflow half the level-2 cache.
    #[test]
    fn dense_walk_builds_the_sorted_tree() {
        let big = CacheSizes {
            l1: 32 << 10,
            l2: 1 << 20,
            last_level: 32 << 20,
            from_system: true,
        };
        // [150, 3] in order [1, 0] fits the tiny cache whole, though the lines
        // below its contiguous level would not; [24, 300, 160] is past the
        // size walked in parallel
        let shapes: [&[usize]; 8] = [
            &[300],
            &[70, 90],
            &[150, 3],
            &[24, 300, 160],
            &[9, 1, 40],
            &[12, 30, 17],
            &[5, 7, 6, 9],
            &[3, 0, 4],
        ];
        let mut seed = 7u64;
        for shape in shapes {
            let size: usize = shape.iter().product();
            let vals: Vec<f64> = (0..size)
                .map(|k| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // about 1 in 8 non-zero, -0.0 counted as zero, whole
                    // slabs of zeros where the first coordinate is 2
                    let slab = shape[0] > 2 && k / (size / shape[0]) == 2;
                    match seed % 16 {
                        _ if slab => 0.0,
                        0 | 1 => (seed % 1000) as f64 - 500.0,
                        2 => -0.0,
                        _ => 0.0,
                    }
                })
                .collect();
            let d = DenseTensor::<f64>::try_new(shape.to_vec(), vals.clone().into()).unwrap();
            let n = shape.len();
            let mut orders: Vec<Vec<usize>> = vec![(0..n).collect()];
            for k in 0..n {
                // rotations and the reverse: the contiguous dimension at every level
                orders.push((0..n).map(|i| (i + k) % n).collect());
            }
            orders.push((0..n).rev().collect());
            for order in &orders {
                let want =
                    coo_to_csf::<f64, i32, i64>(&dense_to_coo::<f64, i32>(&d).unwrap(), order)
                        .unwrap();
                for threads in [1, 2, 3] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let got = pool
                        .install(|| dense_walk_csf::<f64, i32, i64>(&d, order, big))
                        .unwrap();
                    if size == 0 {
                        assert!(got.is_none());
                        continue;
                    }
                    assert_eq!(got.as_ref(), Some(&want), "{shape:?} {order:?} {threads}");
                    let via = pool
                        .install(|| dense_to_csf::<f64, i32, i64>(&d, order))
                        .unwrap();
                    assert_eq!(via, want);
                }
                // a cache too small for the lines below the contiguous level
                let below: usize = order
                    .iter()
                    .skip(order.iter().position(|&a| a == n - 1).unwrap() + 1)
                    .map(|&a| shape[a])
                    .product();
                let declined = dense_walk_csf::<f64, i32, i64>(&d, order, TINY)
                    .unwrap()
                    .is_none();
                let fits = size * 8 <= TINY.l2 / 2;
                let expect =
                    size == 0 || (order[n - 1] != n - 1 && !fits && below * 64 > TINY.l2 / 2);
                assert_eq!(declined, expect, "{shape:?} {order:?}");
            }
        }
        // a strided view (every other column of a 12 x 30 matrix, reversed)
        let d = DenseTensor::<f64>::try_new(
            vec![12, 30],
            (0..360)
                .map(|k| if k % 7 == 0 { k as f64 } else { 0.0 })
                .collect::<Vec<_>>()
                .into(),
        )
        .unwrap()
        .slice(1, None, None, -2)
        .unwrap();
        assert!(!d.as_any().is_row_major());
        for order in [[0usize, 1], [1, 0]] {
            let want = coo_to_csf::<f64, i32, i32>(&dense_to_coo::<f64, i32>(&d).unwrap(), &order)
                .unwrap();
            assert_eq!(dense_to_csf::<f64, i32, i32>(&d, &order).unwrap(), want);
        }
        // coordinates that do not fit the index type, a bad order
        let wide = DenseTensor::<f64>::try_new(vec![1, 300], vec![1.0; 300].into()).unwrap();
        assert!(dense_to_csf::<f64, i8, i32>(&wide, &[0, 1]).is_err());
        assert!(dense_to_csf::<f64, i32, i32>(&wide, &[0, 0]).is_err());
        // more entries than the pointer type holds
        assert!(dense_to_csf::<f64, i32, i8>(&wide, &[1, 0]).is_err());
    }

    /// Only buckets far above the mean are cut, into about one slot per mean of
    /// their entries, the heaviest first, within the slot budget.
    #[test]
    fn heavy_buckets_are_cut_by_their_entries_within_the_budget() {
        // 8 buckets of 4 keys (the last of 2), 800 entries: the mean is 100;
        // 450 entries make 5 means, 8 slots wanted: one per key (g = 0); 401
        // the same
        let totals = [450, 10, 401, 400, 30, 9, 0, 0];
        assert_eq!(
            slot_shifts(&totals, 800, (2, 0), 30),
            [0, 2, 0, 2, 2, 2, 2, 2]
        );
        assert_eq!(slot_shifts(&[100; 8], 800, (2, 0), 30), [2; 8]);
        // 3 buckets of 4 keys, mean 10: room for 6 extra slots, 3 for each of
        // the two largest
        assert_eq!(slot_shifts(&[500, 600, 700], 30, (2, 0), 12), [2, 0, 0]);
        // 2 buckets of 8 keys, mean 50: room for 4 extra slots; 18 means want
        // a slot per key (7 extra), so 4 slots of 2 keys (3 extra)
        assert_eq!(slot_shifts(&[900, 0], 100, (3, 0), 16), [1, 3]);
        assert_eq!(slot_shifts(&[900, 0], 100, (1, 0), 4), [0, 1]);
        // 4 buckets of 1024 keys, mean 250: 900 entries (3.6 means) are not
        // heavy; 2000 (8 means) get 8 slots of 128 keys
        assert_eq!(
            slot_shifts(&[900, 50, 25, 25], 1000, (10, 0), 4096),
            [10; 4]
        );
        assert_eq!(
            slot_shifts(&[2000, 50, 25, 25], 1000, (10, 0), 4096),
            [7, 10, 10, 10]
        );
        // slots no narrower than the floor: 2000 entries in 2 slots of 512
        // keys with a floor of 9 (the entries alone would make 8 of 128); a
        // floor above the bucket's width leaves it whole
        assert_eq!(
            slot_shifts(&[2000, 50, 25, 25], 1000, (10, 9), 4096),
            [9, 10, 10, 10]
        );
        assert_eq!(
            slot_shifts(&[2000, 50, 25, 25], 1000, (10, 11), 4096),
            [10; 4]
        );
        assert_eq!(
            slot_shifts(&totals, 800, (2, 1), 30),
            [1, 2, 1, 2, 2, 2, 2, 2]
        );
    }

    /// Keys are packed above the minor index only while both fit the index
    /// slot's bits (all of them: the sign bit too).
    #[test]
    fn keys_pack_only_into_the_index_bits() {
        // 10^6 rows need 20 bits; 12 more for the key fill i32's 32
        assert_eq!(packed_minor_bits::<i32>(1_000_000, 12), Some(20));
        assert_eq!(packed_minor_bits::<i32>(1_000_000, 13), None);
        assert_eq!(packed_minor_bits::<i32>(1 << 20, 12), Some(20));
        assert_eq!(packed_minor_bits::<i32>((1 << 20) + 1, 12), None);
        assert_eq!(packed_minor_bits::<i32>((1 << 20) + 1, 11), Some(21));
        assert_eq!(packed_minor_bits::<i64>(1 << 40, 24), Some(40));
        assert_eq!(packed_minor_bits::<i64>((1 << 40) + 1, 24), None);
        assert_eq!(packed_minor_bits::<u8>(2, 8), None);
        assert_eq!(packed_minor_bits::<u8>(2, 7), Some(1));
        assert_eq!(packed_minor_bits::<i16>(1, 16), Some(0));
        assert_eq!(packed_minor_bits::<i16>(2, 16), None);
        assert_eq!(packed_minor_bits::<i16>(2, 15), Some(1));
        // a slot's bits read back without the sign extension
        assert_eq!(slot_bits(-1i16), 0xffff);
        assert_eq!(slot_bits(i32::MIN), 1 << 31);
        assert_eq!(slot_bits(-1i64), usize::MAX);
        assert_eq!(slot_bits(200u8), 200);
    }

    /// Packed keys that reach the index slot's sign bit (`i16` indices, 12 bits
    /// of minor index and 4 of key: keys 8-15 of a bucket make the slot
    /// negative) scatter exactly as the direct scatter does, on 1 and 3 threads.
    #[test]
    fn packed_keys_may_fill_the_sign_bit() {
        let (m, shape) = (300_000usize, [500usize, 4096]);
        let coords: Vec<i16> = (0..m)
            .flat_map(|k| [(k * 7919 % 500) as i16, (k * 104_729 % 4096) as i16])
            .collect();
        let vals: Vec<f64> = (0..m).map(|k| k as f64).collect();
        let src = CooSource {
            coords: &coords,
            layout: CoordLayout::RowMajor,
            nnz: m,
            major: 0,
            minor: 1,
            minor_extent: shape[1],
            vals: &vals,
        };
        let offsets = histogram_of(&src, shape[0]).unwrap();
        let (idx, val) = direct_scatter(&src, &offsets).unwrap();
        let direct = (offsets, idx, val);
        let p = plan(m, shape[0], 10, 2, TINY).expect("partitioned");
        assert_eq!(
            (p.shift, packed_minor_bits::<i16>(shape[1], p.shift)),
            (4, Some(12))
        );
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let packed = pool
                .install(|| partitioned_scatter_as::<_, _, true>(&src, shape[0], p, 12).unwrap());
            assert!(packed == direct, "threads {threads}");
            let via = pool.install(|| scatter_with(&src, shape[0], TINY).unwrap());
            assert!(via == direct, "threads {threads}");
        }
    }

    /// An out-of-range key is the same error, at the same position, whichever way
    /// the scatter runs and however many threads it has; minor indices beyond the
    /// stated extent (a trusted tensor that lied) never panic.
    #[test]
    fn scatters_report_the_first_bad_key_and_never_panic() {
        let m = 300_000usize;
        let extent = 70_000usize;
        let mut coords: Vec<i32> = (0..m)
            .flat_map(|k| [((k * 7919) % extent) as i32, (k % 500) as i32 * 1000])
            .collect();
        coords[2 * 200_000] = 70_000;
        coords[2 * 250_000] = -3;
        let vals = vec![1.0f64; m];
        let source = |coords| CooSource {
            coords,
            layout: CoordLayout::RowMajor,
            nnz: m,
            major: 0,
            minor: 1,
            minor_extent: 500,
            vals: &vals,
        };
        let src = source(&coords);
        assert!(plan(m, extent, 12, 2, TINY).is_some());
        let want = histogram_of(&src, extent).unwrap_err().to_string();
        assert!(want.contains("200000"), "{want}");
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let got = pool.install(|| scatter_with(&src, extent, TINY).unwrap_err());
            assert_eq!(got.to_string(), want);
        }
        // keys valid, minors 1000x beyond the stated extent
        let mut valid = coords.clone();
        valid[2 * 200_000] = 1;
        valid[2 * 250_000] = 2;
        let src = source(&valid);
        let (offsets, idx, _) = scatter_with(&src, extent, TINY).unwrap();
        assert_eq!((offsets.len(), idx.len()), (extent + 1, m));
    }
}

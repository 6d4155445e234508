//! The format-native kernels against an independent dense reference.
//!
//! Every tensor here is built from raw buffers by this file's own code (counting
//! sorts, a CSF builder), never by the crate's conversions, and every result is
//! read back into a dense array by this file's own walkers over the result's
//! buffers. The reference is a row-major `Vec<f64>` with duplicates summed.
//! Random data (a seeded xorshift) has duplicates, empty rows and empty columns;
//! the same kernels also run on memory-mapped files, in pools of 1, 2 and 3
//! threads (the outputs must be identical), and under a counting allocator.
//!
//! Kernels: `convert::coo_to_csx` (both axes, both coordinate layouts, canonical
//! and shuffled input), `convert::transpose_csx` (direct and partitioned
//! scatter), `elementwise::binary` (COO, CSR, CSC, CSF, dense; the result keeps
//! the left operand's format), `reduce::sum_axes` / `sum_all`.

#![allow(clippy::needless_range_loop)] // index loops mirror the formats' definitions

use std::alloc::{GlobalAlloc, Layout, System};

use arrow_sparse::ipc::{self, MmapReader, StreamReadOptions, StreamWriteOptions, TensorMessage};
use arrow_sparse::kernels::elementwise::BinaryOp;
use arrow_sparse::kernels::{convert, elementwise, reduce};
use arrow_sparse::{
    AnyTensor, CompressedAxis, CooTensor, CoordLayout, CsfTensor, CsxMatrix, DenseTensor, Format,
    Index,
};

// ------------------------------------------------------------ counting allocator

struct Counting;
thread_local! {
    /// Bytes this thread allocated while `TRACK` was set.
    static MINE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static TRACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
// SAFETY: forwards every call to the system allocator unchanged, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = TRACK.try_with(|t| {
            if t.get() {
                let _ = MINE.try_with(|m| m.set(m.get() + l.size()));
            }
        });
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let _ = TRACK.try_with(|t| {
            if t.get() {
                let _ = MINE.try_with(|m| m.set(m.get() + l.size()));
            }
        });
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    /// A reallocation counts what it adds: shrinking a buffer to its final
    /// length allocates nothing.
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let _ = TRACK.try_with(|t| {
            if t.get() {
                let _ = MINE.try_with(|m| m.set(m.get() + new_size.saturating_sub(l.size())));
            }
        });
        unsafe { System.realloc(p, l, new_size) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes `f` allocates on this thread (run it in a one-thread pool, so that the
/// kernel's work all happens here).
fn allocated_by<T>(f: impl FnOnce() -> T) -> (T, usize) {
    MINE.with(|m| m.set(0));
    TRACK.with(|t| t.set(true));
    let out = f();
    TRACK.with(|t| t.set(false));
    (out, MINE.with(|m| m.get()))
}

// ------------------------------------------------------------ data

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// Random entries (with duplicates; rows and columns congruent to 3 mod 4 stay
/// empty), values k/8 - 4 so that sums are exact in f64.
fn entries(shape: &[usize], n: usize, seed: u64) -> Vec<(Vec<usize>, f64)> {
    let mut r = rng(seed);
    let mut out = Vec::with_capacity(n + n / 4);
    while out.len() < n {
        let c: Vec<usize> = shape
            .iter()
            .map(|&d| {
                let mut x = (r() % d as u64) as usize;
                if d > 4 && x % 4 == 3 {
                    x -= 1;
                }
                x
            })
            .collect();
        let v = (r() % 64) as f64 / 8.0 - 4.0;
        out.push((c.clone(), v));
        if r().is_multiple_of(8) {
            out.push((c, 1.0)); // a duplicate
        }
    }
    out
}

fn linear(shape: &[usize], c: &[usize]) -> usize {
    c.iter().zip(shape).fold(0, |acc, (&x, &d)| acc * d + x)
}

/// The reference: a row-major dense array, duplicates summed.
fn reference(shape: &[usize], e: &[(Vec<usize>, f64)]) -> Vec<f64> {
    let mut d = vec![0.0; shape.iter().product()];
    for (c, v) in e {
        d[linear(shape, c)] += v;
    }
    d
}

/// Entries sorted by coordinates, duplicates summed (for canonical inputs).
fn canonical(e: &[(Vec<usize>, f64)]) -> Vec<(Vec<usize>, f64)> {
    let mut s = e.to_vec();
    s.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<(Vec<usize>, f64)> = Vec::new();
    for (c, v) in s {
        match out.last_mut() {
            Some(last) if last.0 == c => last.1 += v,
            _ => out.push((c, v)),
        }
    }
    out
}

fn coo<I: Index>(
    shape: &[usize],
    e: &[(Vec<usize>, f64)],
    layout: CoordLayout,
    canonical: bool,
) -> CooTensor<f64, I> {
    let (n, nd) = (e.len(), shape.len());
    let mut c = vec![I::usize_as(0); n * nd];
    for (k, (x, _)) in e.iter().enumerate() {
        for d in 0..nd {
            match layout {
                CoordLayout::RowMajor => c[k * nd + d] = I::usize_as(x[d]),
                CoordLayout::ColumnMajor => c[d * n + k] = I::usize_as(x[d]),
            }
        }
    }
    let v: Vec<f64> = e.iter().map(|x| x.1).collect();
    CooTensor::try_new(shape.to_vec(), layout, canonical.into(), c.into(), v.into()).unwrap()
}

/// CSR / CSC of a matrix by this file's own counting sort (duplicates kept).
fn csx<I: Index>(
    shape: &[usize],
    e: &[(Vec<usize>, f64)],
    axis: CompressedAxis,
) -> CsxMatrix<f64, I, I> {
    let (maj, min) = match axis {
        CompressedAxis::Row => (0, 1),
        CompressedAxis::Column => (1, 0),
    };
    let mut ptr = vec![0usize; shape[maj] + 1];
    for (c, _) in e {
        ptr[c[maj] + 1] += 1;
    }
    for i in 0..shape[maj] {
        ptr[i + 1] += ptr[i];
    }
    let mut next = ptr.clone();
    let mut idx = vec![I::usize_as(0); e.len()];
    let mut val = vec![0.0; e.len()];
    for (c, v) in e {
        let p = next[c[maj]];
        next[c[maj]] += 1;
        idx[p] = I::usize_as(c[min]);
        val[p] = *v;
    }
    let ptr: Vec<I> = ptr.into_iter().map(I::usize_as).collect();
    CsxMatrix::try_new(shape.to_vec(), axis, ptr.into(), idx.into(), val.into()).unwrap()
}

/// CSF in the natural axis order from canonical entries, by this file's builder.
fn csf(shape: &[usize], e: &[(Vec<usize>, f64)]) -> CsfTensor<f64, i64, i64> {
    let e = canonical(e);
    let nd = shape.len();
    let mut indices: Vec<Vec<i64>> = vec![Vec::new(); nd];
    let mut indptr: Vec<Vec<i64>> = vec![Vec::new(); nd - 1];
    let mut prev: Option<&Vec<usize>> = None;
    for (c, _) in &e {
        let first = prev.map_or(0, |p| (0..nd).find(|&d| p[d] != c[d]).unwrap_or(nd - 1));
        for d in first..nd {
            if d + 1 < nd {
                indptr[d].push(indices[d + 1].len() as i64);
            }
            indices[d].push(c[d] as i64);
        }
        prev = Some(c);
    }
    for d in 0..nd - 1 {
        indptr[d].push(indices[d + 1].len() as i64);
    }
    let vals: Vec<f64> = e.iter().map(|x| x.1).collect();
    CsfTensor::try_new(
        shape.to_vec(),
        (0..nd).collect(),
        indptr.into_iter().map(Into::into).collect(),
        indices.into_iter().map(Into::into).collect(),
        vals.into(),
    )
    .unwrap()
}

// ------------------------------------------------------------ independent readers

fn add_coo<I: Index>(t: &CooTensor<f64, I>, out: &mut [f64]) {
    let (shape, n, nd) = (t.shape(), t.nnz(), t.ndim());
    let c = &t.coords()[..];
    for k in 0..n {
        let x: Vec<usize> = (0..nd)
            .map(|d| match t.layout() {
                CoordLayout::RowMajor => c[k * nd + d].as_usize(),
                CoordLayout::ColumnMajor => c[d * n + k].as_usize(),
            })
            .collect();
        out[linear(shape, &x)] += t.values()[k];
    }
}

fn add_csx<I: Index, P: Index>(m: &CsxMatrix<f64, I, P>, out: &mut [f64]) {
    let shape = m.shape();
    let (p, ix, v) = (&m.indptr()[..], &m.indices()[..], &m.values()[..]);
    for r in 0..p.len() - 1 {
        for k in p[r].as_usize()..p[r + 1].as_usize() {
            let c = [r, ix[k].as_usize()];
            let c = match m.axis() {
                CompressedAxis::Row => c,
                CompressedAxis::Column => [c[1], c[0]],
            };
            out[linear(shape, &c)] += v[k];
        }
    }
}

fn add_csf<I: Index, P: Index>(t: &CsfTensor<f64, I, P>, out: &mut [f64]) {
    fn walk<I: Index, P: Index>(
        t: &CsfTensor<f64, I, P>,
        level: usize,
        lo: usize,
        hi: usize,
        c: &mut Vec<usize>,
        out: &mut [f64],
    ) {
        let order = t.axis_order();
        for node in lo..hi {
            c[order[level]] = t.indices()[level][node].as_usize();
            if level + 1 == order.len() {
                out[linear(t.shape(), c)] += t.values()[node];
            } else {
                let p = &t.indptr()[level];
                walk(
                    t,
                    level + 1,
                    p[node].as_usize(),
                    p[node + 1].as_usize(),
                    c,
                    out,
                );
            }
        }
    }
    let mut c = vec![0; t.shape().len()];
    walk(t, 0, 0, t.indices()[0].len(), &mut c, out);
}

/// The dense array of a result, read by this file's walkers.
fn read(t: &AnyTensor) -> Vec<f64> {
    let mut out = vec![0.0; t.shape().iter().product()];
    match t {
        AnyTensor::Dense(d) => {
            assert!(d.is_row_major(), "dense results are row-major");
            let d = d.downcast::<f64>().unwrap();
            out.copy_from_slice(&d.values()[..]);
        }
        AnyTensor::Coo(c) => {
            if let Some(c) = c.downcast::<f64, i64>() {
                add_coo(&c, &mut out)
            } else {
                add_coo(&c.downcast::<f64, i32>().unwrap(), &mut out)
            }
        }
        AnyTensor::Csx(m) => {
            if let Some(m) = m.downcast::<f64, i32, i32>() {
                add_csx(&m, &mut out)
            } else if let Some(m) = m.downcast::<f64, i64, i64>() {
                add_csx(&m, &mut out)
            } else if let Some(m) = m.downcast::<f64, i32, i64>() {
                add_csx(&m, &mut out)
            } else {
                add_csx(&m.downcast::<f64, i64, i32>().unwrap(), &mut out)
            }
        }
        AnyTensor::Csf(c) => {
            if let Some(c) = c.downcast::<f64, i64, i64>() {
                add_csf(&c, &mut out)
            } else {
                add_csf(&c.downcast::<f64, i32, i32>().unwrap(), &mut out)
            }
        }
        other => panic!("no independent reader for {:?}", other.format()),
    }
    out
}

/// The dense reference of `a op b`, element by element.
fn expected(ra: &[f64], rb: &[f64], op: BinaryOp) -> Vec<f64> {
    ra.iter()
        .zip(rb)
        .map(|(x, y)| match op {
            BinaryOp::Add => x + y,
            BinaryOp::Subtract => x - y,
            BinaryOp::Multiply => x * y,
        })
        .collect()
}

fn same(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: length");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-9 * (1.0 + y.abs()),
            "{what}: element {i}: {x} vs {y}"
        );
    }
}

/// Indices sorted (non-decreasing) within every row of a CSR / CSC.
fn sorted_within_rows<I: Index, P: Index>(m: &CsxMatrix<f64, I, P>) -> bool {
    let (p, ix) = (&m.indptr()[..], &m.indices()[..]);
    (0..p.len() - 1).all(|r| {
        ix[p[r].as_usize()..p[r + 1].as_usize()]
            .windows(2)
            .all(|w| w[0] <= w[1])
    })
}

fn shuffled(e: &[(Vec<usize>, f64)], seed: u64) -> Vec<(Vec<usize>, f64)> {
    let mut r = rng(seed);
    let mut s = e.to_vec();
    for i in (1..s.len()).rev() {
        s.swap(i, (r() % (i as u64 + 1)) as usize);
    }
    s
}

// ------------------------------------------------------------ tests

/// Shapes: tiny, tall, wide, more columns than entries (hypersparse), and one
/// large enough for the parallel, partitioned scatter (> 2^18 entries).
const SHAPES: [([usize; 2], usize); 5] = [
    ([1, 1], 3),
    ([37, 5], 150),
    ([5, 911], 2_000),
    ([300, 100_000], 1_500),
    ([2_000, 60_000], 300_000),
];

#[test]
fn coo_to_csx_and_transpose_match_the_dense_reference() {
    for (i, (shape, n)) in SHAPES.iter().enumerate() {
        let e = entries(shape, *n, 100 + i as u64);
        let want = reference(shape, &e);
        let canon = canonical(&e);
        let shuf = shuffled(&e, 7 + i as u64);
        // (the large shape in one layout only: debug builds are slow)
        let layouts: &[CoordLayout] = if *n > 100_000 {
            &[CoordLayout::ColumnMajor]
        } else {
            &[CoordLayout::RowMajor, CoordLayout::ColumnMajor]
        };
        for &layout in layouts {
            let inputs = [
                (coo::<i64>(shape, &canon, layout, true), "canonical"),
                (coo::<i64>(shape, &shuf, layout, false), "shuffled"),
            ];
            for (t, what) in &inputs {
                for axis in [CompressedAxis::Row, CompressedAxis::Column] {
                    let m = convert::coo_to_csx::<f64, i64, i32>(t, axis).unwrap();
                    same(
                        &read(&m.clone().into()),
                        &want,
                        &format!("{shape:?} {layout:?} {what} {axis:?}"),
                    );
                    if *what == "canonical" {
                        assert!(
                            sorted_within_rows(&m),
                            "{shape:?} canonical input gives sorted indices"
                        );
                    }
                    let back = convert::transpose_csx(&m).unwrap();
                    assert_ne!(back.axis(), m.axis());
                    same(
                        &read(&back.into()),
                        &want,
                        &format!("{shape:?} {what} {axis:?} transposed"),
                    );
                }
            }
        }
        // CSR / CSC built here (duplicates kept) -> transposed
        for axis in [CompressedAxis::Row, CompressedAxis::Column] {
            let m32 = csx::<i32>(shape, &shuf, axis);
            let t32 = convert::transpose_csx(&m32).unwrap();
            same(
                &read(&t32.clone().into()),
                &want,
                &format!("{shape:?} {axis:?} i32 transpose"),
            );
            assert!(
                sorted_within_rows(&t32),
                "{shape:?} transposed indices are sorted"
            );
            let m64 = csx::<i64>(shape, &shuf, axis);
            same(
                &read(&convert::transpose_csx(&m64).unwrap().into()),
                &want,
                &format!("{shape:?} {axis:?} i64"),
            );
        }
    }
}

fn pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
}

#[test]
fn scatter_outputs_do_not_depend_on_the_thread_count() {
    let shape = [3_000usize, 50_000];
    let e = shuffled(&entries(&shape, 400_000, 5), 6);
    let t = coo::<i32>(&shape, &e, CoordLayout::RowMajor, false);
    let m = csx::<i64>(&shape, &e, CompressedAxis::Row);
    let runs: Vec<_> = [1, 2, 3]
        .into_iter()
        .map(|n| {
            pool(n).install(|| {
                (
                    convert::coo_to_csx::<f64, i32, i64>(&t, CompressedAxis::Row).unwrap(),
                    convert::coo_to_csx::<f64, i32, i32>(&t, CompressedAxis::Column).unwrap(),
                    convert::transpose_csx(&m).unwrap(),
                    reduce::sum_axes::<f64>(&m.clone().into(), &[0]).unwrap(),
                )
            })
        })
        .collect();
    for w in runs.windows(2) {
        assert!(
            w[0].0 == w[1].0 && w[0].1 == w[1].1 && w[0].2 == w[1].2,
            "conversions differ"
        );
        assert_eq!(read(&w[0].3), read(&w[1].3), "column sums differ");
    }
    same(
        &read(&runs[0].2.clone().into()),
        &reference(&shape, &e),
        "transpose",
    );
}

/// CSR / CSC element-wise operations large enough to be cut into chunks on
/// several threads (each chunk merging into its own region, regions moved
/// together afterwards): rows sorted and not (duplicates), results that cancel
/// (a region shorter than counted), the same result on 1, 2 and 3 threads, equal
/// to the dense reference.
#[test]
fn chunked_binary_csx_matches_the_reference_on_any_thread_count() {
    let shape = [400usize, 6_000];
    let ea = entries(&shape, 150_000, 81);
    // b: its own entries, plus the negation of every third position of a (which
    // cancels in a + b) and a copy of every fifth (which cancels in a - b)
    let mut eb = entries(&shape, 70_000, 82);
    let ca = canonical(&ea);
    eb.extend(ca.iter().step_by(3).map(|(c, v)| (c.clone(), -v)));
    eb.extend(ca.iter().skip(1).step_by(5).map(|(c, v)| (c.clone(), *v)));
    let (ra, rb) = (reference(&shape, &ea), reference(&shape, &eb));
    let left: Vec<(AnyTensor, &str)> = vec![
        (
            csx::<i32>(&shape, &ea, CompressedAxis::Row).into(),
            "csr dup",
        ),
        (
            csx::<i32>(&shape, &ca, CompressedAxis::Row).into(),
            "csr sorted",
        ),
        (
            csx::<i64>(&shape, &ca, CompressedAxis::Column).into(),
            "csc sorted",
        ),
    ];
    let right: Vec<(AnyTensor, &str)> = vec![
        (
            csx::<i32>(&shape, &eb, CompressedAxis::Row).into(),
            "csr dup",
        ),
        (
            csx::<i32>(&shape, &canonical(&eb), CompressedAxis::Row).into(),
            "csr sorted",
        ),
    ];
    for (a, na) in &left {
        for (b, nb) in &right {
            for op in [BinaryOp::Add, BinaryOp::Subtract, BinaryOp::Multiply] {
                let runs: Vec<AnyTensor> = [1, 2, 3]
                    .into_iter()
                    .map(|n| pool(n).install(|| elementwise::binary::<f64>(a, b, op).unwrap()))
                    .collect();
                let want = expected(&ra, &rb, op);
                let what = format!("{na} {op:?} {nb}");
                same(&read(&runs[0]), &want, &what);
                // zero results are dropped: the stored entries are the non-zeros
                let nonzero = want.iter().filter(|x| **x != 0.0).count();
                assert_eq!(runs[0].nnz(), nonzero, "{what}: stored entries");
                for r in &runs[1..] {
                    assert!(
                        *r == runs[0],
                        "{what}: results differ between thread counts"
                    );
                }
            }
        }
    }
}

/// COO element-wise operations on canonical row-major operands (merged on
/// their buffers, in chunks on several threads) against the dense reference,
/// 1- to 4-D: results that cancel (regions shorter than counted), the same
/// result on 1, 2 and 3 threads, and the same entries as the general merge
/// that other layouts take (column-major and not canonical operands).
#[test]
fn chunked_binary_coo_matches_the_reference_on_any_thread_count() {
    let shapes: [&[usize]; 4] = [
        &[2_400_000],
        &[400, 6_000],
        &[40, 60, 1_000],
        &[10, 20, 30, 400],
    ];
    for (i, shape) in shapes.into_iter().enumerate() {
        let ea = entries(shape, 150_000, 90 + i as u64);
        // b: its own entries, the negation of every third position of a (which
        // cancels in a + b) and a copy of every fifth (which cancels in a - b)
        let mut eb = entries(shape, 70_000, 95 + i as u64);
        let ca = canonical(&ea);
        eb.extend(ca.iter().step_by(3).map(|(c, v)| (c.clone(), -v)));
        eb.extend(ca.iter().skip(1).step_by(5).map(|(c, v)| (c.clone(), *v)));
        let cb = canonical(&eb);
        let (ra, rb) = (reference(shape, &ea), reference(shape, &eb));
        let rm = CoordLayout::RowMajor;
        let pairs: Vec<(AnyTensor, AnyTensor, &str)> = vec![
            (
                coo::<i32>(shape, &ca, rm, true).into(),
                coo::<i32>(shape, &cb, rm, true).into(),
                "i32",
            ),
            (
                coo::<i64>(shape, &ca, rm, true).into(),
                coo::<i64>(shape, &cb, rm, true).into(),
                "i64",
            ),
        ];
        // the general merge: column-major / not canonical operands
        let general: Vec<(AnyTensor, AnyTensor)> = vec![
            (
                coo::<i64>(shape, &ca, CoordLayout::ColumnMajor, true).into(),
                coo::<i64>(shape, &cb, CoordLayout::ColumnMajor, true).into(),
            ),
            (
                coo::<i64>(shape, &ea, rm, false).into(),
                coo::<i64>(shape, &eb, rm, false).into(),
            ),
        ];
        for op in [BinaryOp::Add, BinaryOp::Subtract, BinaryOp::Multiply] {
            let want = expected(&ra, &rb, op);
            let nonzero = want.iter().filter(|x| **x != 0.0).count();
            let slow: Vec<AnyTensor> = general
                .iter()
                .map(|(a, b)| elementwise::binary::<f64>(a, b, op).unwrap())
                .collect();
            for (a, b, name) in &pairs {
                let what = format!("{shape:?} {name} {op:?}");
                let runs: Vec<AnyTensor> = [1, 2, 3]
                    .into_iter()
                    .map(|n| pool(n).install(|| elementwise::binary::<f64>(a, b, op).unwrap()))
                    .collect();
                same(&read(&runs[0]), &want, &what);
                // zero results are dropped, and every position is stored once
                assert_eq!(runs[0].nnz(), nonzero, "{what}: stored entries");
                let AnyTensor::Coo(c) = &runs[0] else {
                    panic!("{what}: not COO");
                };
                assert!(c.is_canonical(), "{what}: canonical");
                for r in &runs[1..] {
                    assert!(
                        *r == runs[0],
                        "{what}: results differ between thread counts"
                    );
                }
                if *name == "i64" {
                    for s in &slow {
                        assert!(*s == runs[0], "{what}: differs from the general merge");
                    }
                }
            }
        }
    }
}

/// Extents whose product does not fit a `u64` (no linear positions): the
/// entries are merged by their coordinates. Here (0, 0) and (2^30, 0), and
/// (0, 0, 0) and (2^4, 0, 0), would share a wrapped linear position.
#[test]
fn binary_coo_with_extents_past_u64() {
    // canonical row-major operands (entries given sorted)
    let t = |shape: &[usize], e: &[(Vec<usize>, f64)]| -> AnyTensor {
        coo::<i64>(shape, e, CoordLayout::RowMajor, true).into()
    };
    let coo = |x: AnyTensor| x.to_coo::<f64, i64>().unwrap();
    let big = [1usize << 40, 1 << 40];
    let a = t(&big, &[(vec![0, 0], 1.0), (vec![1 << 39, 5], 4.0)]);
    let b = t(&big, &[(vec![1 << 30, 0], 2.0), (vec![1 << 39, 5], 3.0)]);
    let s = coo(elementwise::binary::<f64>(&a, &b, BinaryOp::Add).unwrap());
    assert_eq!(
        (s.coords().as_ref(), s.values().as_ref()),
        (&[0, 0, 1 << 30, 0, 1 << 39, 5][..], &[1.0, 2.0, 7.0][..])
    );
    let p = coo(elementwise::binary::<f64>(&a, &b, BinaryOp::Multiply).unwrap());
    assert_eq!(p.values().as_ref(), &[12.0]);
    let big3 = [1usize << 30, 1 << 30, 1 << 30];
    let a = t(&big3, &[(vec![0, 0, 0], 1.0), (vec![1 << 20, 3, 5], 4.0)]);
    let b = t(
        &big3,
        &[(vec![1 << 4, 0, 0], 2.0), (vec![1 << 20, 3, 5], 3.0)],
    );
    let s = coo(elementwise::binary::<f64>(&a, &b, BinaryOp::Subtract).unwrap());
    assert_eq!(
        (s.coords().as_ref(), s.values().as_ref()),
        (
            &[0, 0, 0, 1 << 4, 0, 0, 1 << 20, 3, 5][..],
            &[1.0, -2.0, 1.0][..]
        )
    );
}

/// Operands of every format the independent readers know, for `shape`.
fn operands(shape: &[usize], e: &[(Vec<usize>, f64)]) -> Vec<(AnyTensor, &'static str)> {
    let mut out: Vec<(AnyTensor, &'static str)> = vec![
        (
            coo::<i64>(shape, e, CoordLayout::RowMajor, false).into(),
            "coo rm dup",
        ),
        (
            coo::<i32>(shape, e, CoordLayout::ColumnMajor, false).into(),
            "coo cm dup",
        ),
        (
            coo::<i64>(shape, &canonical(e), CoordLayout::RowMajor, true).into(),
            "coo canonical",
        ),
        (
            DenseTensor::try_new(shape.to_vec(), reference(shape, e).into())
                .unwrap()
                .into(),
            "dense",
        ),
        (csf(shape, e).into(), "csf"),
    ];
    if shape.len() == 2 {
        out.push((csx::<i32>(shape, e, CompressedAxis::Row).into(), "csr dup"));
        out.push((
            csx::<i64>(shape, &canonical(e), CompressedAxis::Column).into(),
            "csc",
        ));
    }
    out
}

#[test]
fn binary_and_sums_match_the_dense_reference() {
    let cases: [(Vec<usize>, usize); 4] = [
        (vec![7, 9], 40),
        (vec![60, 3_000], 4_000),
        (vec![6, 7, 8], 150),
        (vec![3, 4, 5, 6], 200),
    ];
    for (i, (shape, n)) in cases.iter().enumerate() {
        let ea = entries(shape, *n, 40 + i as u64);
        let eb = entries(shape, *n / 2 + 1, 50 + i as u64);
        let (ra, rb) = (reference(shape, &ea), reference(shape, &eb));
        let (ops_a, ops_b) = (operands(shape, &ea), operands(shape, &eb));
        for (a, na) in &ops_a {
            for (b, nb) in &ops_b {
                for op in [BinaryOp::Add, BinaryOp::Subtract, BinaryOp::Multiply] {
                    let r = elementwise::binary::<f64>(a, b, op).unwrap();
                    assert_eq!(
                        r.format(),
                        a.format(),
                        "{na} {op:?} {nb}: the left operand's format"
                    );
                    let want = expected(&ra, &rb, op);
                    same(&read(&r), &want, &format!("{shape:?} {na} {op:?} {nb}"));
                }
            }
            // sums over every non-empty set of axes (bit masks)
            let total: f64 = ra.iter().sum();
            assert!(
                (reduce::sum_all::<f64>(a).unwrap() - total).abs() < 1e-9,
                "{na} sum_all"
            );
            for mask in 1u32..(1 << shape.len()) {
                let axes: Vec<usize> = (0..shape.len()).filter(|d| mask & (1 << d) != 0).collect();
                let kept: Vec<usize> = (0..shape.len()).filter(|d| mask & (1 << d) == 0).collect();
                let kshape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
                let mut want = vec![0.0; kshape.iter().product()];
                for (lin, v) in ra.iter().enumerate() {
                    let mut c = vec![0; shape.len()];
                    let mut rest = lin;
                    for d in (0..shape.len()).rev() {
                        c[d] = rest % shape[d];
                        rest /= shape[d];
                    }
                    let kc: Vec<usize> = kept.iter().map(|&d| c[d]).collect();
                    want[linear(&kshape, &kc)] += v;
                }
                for how in [
                    reduce::SumOutput::Auto,
                    reduce::SumOutput::Dense,
                    reduce::SumOutput::Sparse,
                ] {
                    let s = reduce::sum_axes_with::<f64>(a, &axes, how).unwrap();
                    if how == reduce::SumOutput::Dense {
                        assert_eq!(s.format(), Format::Dense);
                    }
                    same(
                        &read(&s),
                        &want,
                        &format!("{shape:?} {na} sum over {axes:?} {how:?}"),
                    );
                }
            }
        }
    }
}

#[test]
fn kernels_on_mapped_files_match_the_dense_reference() {
    let shape = [400usize, 3_000];
    let (ea, eb) = (entries(&shape, 20_000, 61), entries(&shape, 9_000, 62));
    let (ra, rb) = (reference(&shape, &ea), reference(&shape, &eb));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("operands.arrows");
    let msgs: Vec<TensorMessage> = vec![
        AnyTensor::from(csx::<i32>(&shape, &ea, CompressedAxis::Row)).into(),
        AnyTensor::from(csx::<i32>(&shape, &eb, CompressedAxis::Row)).into(),
        AnyTensor::from(coo::<i64>(
            &shape,
            &shuffled(&ea, 3),
            CoordLayout::RowMajor,
            false,
        ))
        .into(),
    ];
    ipc::write_tensor_stream(&path, &msgs, &StreamWriteOptions::default()).unwrap();
    let reader = MmapReader::open_with(&path, &StreamReadOptions::default()).unwrap();
    let (a, b, c) = (
        reader.get(0).unwrap().tensor,
        reader.get(1).unwrap().tensor,
        reader.get(2).unwrap().tensor,
    );
    let AnyTensor::Csx(am) = &a else {
        panic!("CSR expected")
    };
    let am = am.downcast::<f64, i32, i32>().unwrap();
    same(
        &read(&convert::transpose_csx(&am).unwrap().into()),
        &ra,
        "mapped transpose",
    );
    let AnyTensor::Coo(cm) = &c else {
        panic!("COO expected")
    };
    let cm = cm.downcast::<f64, i64>().unwrap();
    for axis in [CompressedAxis::Row, CompressedAxis::Column] {
        let m = convert::coo_to_csx::<f64, i64, i64>(&cm, axis).unwrap();
        same(&read(&m.into()), &ra, "mapped COO -> CSX");
    }
    let sum: Vec<f64> = ra.iter().zip(&rb).map(|(x, y)| x + y).collect();
    same(
        &read(&elementwise::binary::<f64>(&a, &b, BinaryOp::Add).unwrap()),
        &sum,
        "mapped CSR + CSR",
    );
    same(
        &read(&elementwise::binary::<f64>(&c, &a, BinaryOp::Add).unwrap()),
        &ra.iter().map(|x| 2.0 * x).collect::<Vec<_>>(),
        "mapped COO + CSR",
    );
    let cols: Vec<f64> = (0..shape[1])
        .map(|j| (0..shape[0]).map(|i| ra[i * shape[1] + j]).sum())
        .collect();
    same(
        &read(&reduce::sum_axes::<f64>(&a, &[0]).unwrap()),
        &cols,
        "mapped column sums",
    );
    same(
        &read(&reduce::sum_axes::<f64>(&c, &[0]).unwrap()),
        &cols,
        "mapped COO column sums",
    );
}

/// The kernels allocate their outputs and the documented working buffers only.
#[test]
fn kernels_allocate_only_their_outputs() {
    let shape = [2_000usize, 50_000];
    let e = shuffled(&entries(&shape, 300_000, 71), 72);
    let n = e.len();
    let m = csx::<i32>(&shape, &e, CompressedAxis::Row);
    let t = coo::<i32>(&shape, &e, CoordLayout::RowMajor, false);
    let a: AnyTensor = m.clone().into();
    let b: AnyTensor = csx::<i32>(&shape, &canonical(&e), CompressedAxis::Row).into();
    pool(1).install(|| {
        // CSR -> CSC: output indices + values + indptr, the per-column counts
        // (which become the indptr) and the radix scratch (u32 key, index, value
        // per entry); nothing else proportional to the data
        let out = n * (4 + 8) + (shape[1] + 1) * 4;
        let counts = (shape[1] + 1) * 8;
        let scratch = n * (4 + 4 + 8);
        let (r, bytes) = allocated_by(|| convert::transpose_csx(&m).unwrap());
        assert!(
            bytes <= out + counts + scratch + (256 << 10),
            "transpose: {bytes} bytes"
        );
        drop(r);
        let (r, bytes) =
            allocated_by(|| convert::coo_to_csx::<f64, i32, i32>(&t, CompressedAxis::Row).unwrap());
        let out = n * (4 + 8) + (shape[0] + 1) * 4;
        assert!(
            bytes <= out + (shape[0] + 1) * 8 + scratch + (256 << 10),
            "COO -> CSR: {bytes} bytes"
        );
        drop(r);
        // reductions: the total allocates nothing, the column sums their output
        let (_, bytes) = allocated_by(|| reduce::sum_all::<f64>(&a).unwrap());
        assert!(bytes < 1024, "sum_all: {bytes} bytes");
        let (r, bytes) = allocated_by(|| reduce::sum_axes::<f64>(&a, &[0]).unwrap());
        assert!(
            bytes <= shape[1] * 8 + (16 << 10),
            "sum_axes: {bytes} bytes"
        );
        drop(r);
        // CSR + CSR: the result (at most nnz(a) + nnz(b) entries, an indptr)
        let (r, bytes) =
            allocated_by(|| elementwise::binary::<f64>(&a, &b, BinaryOp::Add).unwrap());
        // (capacity for every entry of both operands: measured 8.0 MB here for
        // 2 x 300k entries of 12 bytes = 7.2 MB, so at most 16 bytes per operand
        // entry, plus indptr and per-row counts)
        let out = 2 * n * 16 + 4 * (shape[0] + 1) * 8;
        assert!(
            bytes <= out + (128 << 10),
            "binary CSR + CSR: {bytes} bytes"
        );
        drop(r);
        // COO + COO (canonical, row-major): the result, room for every entry of
        // both operands (two `int32` coordinates and a value each)
        let (ca, cb): (AnyTensor, AnyTensor) = (
            coo::<i32>(&shape, &canonical(&e), CoordLayout::RowMajor, true).into(),
            coo::<i32>(&shape, &canonical(&e[..n / 2]), CoordLayout::RowMajor, true).into(),
        );
        let room = ca.nnz() + cb.nnz();
        let (r, bytes) =
            allocated_by(|| elementwise::binary::<f64>(&ca, &cb, BinaryOp::Add).unwrap());
        assert!(
            bytes <= room * (2 * 4 + 8) + (128 << 10),
            "binary COO + COO: {bytes} bytes"
        );
        drop(r);
    });
}

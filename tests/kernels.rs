//! Kernels against dense references: SpMV / SpMM in every format, CSF TTV and
//! MTTKRP, element-wise operations, reductions, errors; and the zero-copy proof
//! (SpMV on a memory-mapped tensor allocates nothing proportional to nnz).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use arrow_sparse::dims::DimMap;
use arrow_sparse::ipc::{self, MmapReader, StreamReadOptions, StreamWriteOptions, TensorMessage};
use arrow_sparse::kernels::{convert, csf, elementwise, reduce, spmv};
use arrow_sparse::{
    AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, DenseTensor, EntryOrder, Error,
    Format, IndexType,
};

struct Counting;
static PEAK_SINGLE: AtomicUsize = AtomicUsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    /// Bytes allocated by this thread while `TRACK` is set (tests run in
    /// parallel: the global counters see the other tests too).
    static MINE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static TRACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        TOTAL.fetch_add(l.size(), Relaxed);
        PEAK_SINGLE.fetch_max(l.size(), Relaxed);
        let _ = TRACK.try_with(|t| {
            if t.get() {
                let _ = MINE.try_with(|m| m.set(m.get() + l.size()));
            }
        });
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

/// Held by the test that reads the global counters and by the tests that
/// allocate tens of megabytes on several threads, so that the counted window
/// does not see their allocations.
static GLOBAL_COUNT: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    GLOBAL_COUNT.lock().unwrap_or_else(|e| e.into_inner())
}

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed.wrapping_mul(2).wrapping_add(1);
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

fn random_coo(shape: &[usize], nnz: usize, seed: u64) -> CooTensor<f64, i64> {
    let mut r = rng(seed);
    let entries: Vec<(Vec<usize>, f64)> = (0..nnz)
        .map(|_| {
            (
                shape.iter().map(|&d| (r() % d as u64) as usize).collect(),
                (r() % 2001) as f64 / 100.0 - 10.0,
            )
        })
        .collect();
    CooTensor::from_entries(shape.to_vec(), &entries).unwrap()
}

/// `f` run once in a pool of each thread count, its results in that order.
fn on_threads<R: Send>(counts: &[usize], f: impl Fn() -> R + Sync) -> Vec<R> {
    counts
        .iter()
        .map(|&n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
                .install(&f)
        })
        .collect()
}

/// Coordinates in `shape`, uniform but the first, skewed towards 0 (uneven
/// work per root of a CSF tree).
fn skewed(r: &mut impl FnMut() -> u64, shape: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .map(|(d, &e)| {
            let u = (r() % e as u64) as usize;
            if d == 0 { u * u / e } else { u }
        })
        .collect()
}

fn dense(t: &AnyTensor) -> (Vec<usize>, Vec<f64>) {
    let d = t.convert(Format::Dense, IndexType::Int64, None).unwrap();
    let AnyTensor::Dense(d) = d else {
        unreachable!()
    };
    (
        d.shape().to_vec(),
        d.downcast::<f64>().unwrap().values().to_vec(),
    )
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-9 * (1.0 + y.abs()))
}

#[test]
fn spmv_and_spmm_in_every_format() {
    let coo = random_coo(&[37, 53], 400, 1);
    let any: AnyTensor = coo.clone().into();
    let (_, a) = dense(&any);
    let x: Vec<f64> = (0..53).map(|j| j as f64 * 0.5 - 3.0).collect();
    let expected: Vec<f64> = (0..37)
        .map(|i| (0..53).map(|j| a[i * 53 + j] * x[j]).sum())
        .collect();
    for f in [Format::Coo, Format::Csr, Format::Csc] {
        for it in [IndexType::Int32, IndexType::Int64, IndexType::UInt16] {
            let t = any.convert(f, it, None).unwrap();
            assert!(
                close(&spmv::spmv::<f64>(&t, &x).unwrap(), &expected),
                "{f:?} {it:?}"
            );
        }
    }
    // SpMM with a 53 x 4 dense matrix
    let b: Vec<f64> = (0..53 * 4).map(|i| (i % 7) as f64 - 2.0).collect();
    let bd = DenseTensor::<f64>::try_new(vec![53, 4], b.clone().into()).unwrap();
    let want: Vec<f64> = (0..37 * 4)
        .map(|ij| {
            let (i, j) = (ij / 4, ij % 4);
            (0..53).map(|k| a[i * 53 + k] * b[k * 4 + j]).sum()
        })
        .collect();
    for axis in [CompressedAxis::Row, CompressedAxis::Column] {
        let m = coo.to_csx::<i32, i64>(axis).unwrap();
        assert!(
            close(&spmv::spmm_csx(&m, &bd).unwrap().values()[..], &want),
            "{axis:?}"
        );
    }
    // shape mismatches are errors
    assert!(matches!(
        spmv::spmv::<f64>(&any, &x[..52]),
        Err(Error::Shape { .. })
    ));
    let bad = DenseTensor::<f64>::try_new(vec![52, 4], vec![0.0; 208].into()).unwrap();
    assert!(spmv::spmm_csx(&coo.to_csx::<i32, i32>(CompressedAxis::Row).unwrap(), &bad).is_err());
}

#[test]
fn gcs_and_dm_spmv_reshape_the_result() {
    let coo = random_coo(&[4, 5, 6], 70, 2);
    let any: AnyTensor = coo.clone().into();
    let (_, a) = dense(&any);
    // rows = dims (2, 0), columns = dim 1
    let map = DimMap::try_new(vec![4, 5, 6], vec![2, 0, 1], vec![2]).unwrap();
    let x: Vec<f64> = (0..5).map(|j| j as f64 + 1.0).collect();
    let mut want = vec![0.0; 24];
    for i in 0..4 {
        for j in 0..5 {
            for k in 0..6 {
                want[k * 4 + i] += a[(i * 5 + j) * 6 + k] * x[j];
            }
        }
    }
    let g = any
        .to_gcs(map.clone(), CompressedAxis::Row, IndexType::Int32)
        .unwrap();
    assert!(close(&spmv::spmv::<f64>(&g, &x).unwrap(), &want));
    let gc = any
        .to_gcs(map.clone(), CompressedAxis::Column, IndexType::Int64)
        .unwrap();
    assert!(close(&spmv::spmv::<f64>(&gc, &x).unwrap(), &want));
    let dm = any.to_dm(map, Format::Csr, IndexType::Int64).unwrap();
    assert!(close(&spmv::spmv::<f64>(&dm, &x).unwrap(), &want));
    let AnyTensor::Gcs(gt) = &g else {
        unreachable!()
    };
    let typed = gt.downcast::<f64, i32, i32>().unwrap();
    let y = spmv::spmv_gcs(
        &typed,
        &DenseTensor::try_new(vec![5], x.clone().into()).unwrap(),
    )
    .unwrap();
    assert_eq!(y.shape(), &[6, 4], "reshaped to the row dimensions (2, 0)");
}

#[test]
fn csf_mttkrp_and_ttv_match_the_dense_reference() {
    let shape = [6usize, 7, 5, 4];
    let coo = random_coo(&shape, 300, 3).canonicalize().unwrap();
    let any: AnyTensor = coo.clone().into();
    let (_, a) = dense(&any);
    let rank = 3;
    let factors: Vec<DenseTensor<f64>> = shape
        .iter()
        .enumerate()
        .map(|(d, &n)| {
            DenseTensor::try_new(
                vec![n, rank],
                (0..n * rank)
                    .map(|i| ((i * 7 + d) % 11) as f64 / 4.0 - 1.0)
                    .collect::<Vec<_>>()
                    .into(),
            )
            .unwrap()
        })
        .collect();
    let strides = [140usize, 20, 4, 1];
    for mode in 0..4 {
        let mut want = vec![0.0; shape[mode] * rank];
        for (lin, &alin) in a.iter().enumerate() {
            if alin == 0.0 {
                continue;
            }
            let c: Vec<usize> = (0..4).map(|d| lin / strides[d] % shape[d]).collect();
            for r in 0..rank {
                let mut p = alin;
                for d in (0..4).filter(|&d| d != mode) {
                    p *= factors[d].values()[c[d] * rank + r];
                }
                want[c[mode] * rank + r] += p;
            }
        }
        for order in [
            [0usize, 1, 2, 3],
            [3, 1, 0, 2],
            [mode, (mode + 1) % 4, (mode + 2) % 4, (mode + 3) % 4],
        ] {
            let t = coo.to_csf::<i32, i64>(&order).unwrap();
            let m = csf::mttkrp(&t, mode, &factors).unwrap();
            assert!(close(&m.values()[..], &want), "mode {mode} order {order:?}");
        }
        // the CSR baseline agrees
        let mut dims = vec![mode];
        dims.extend((0..4).filter(|&d| d != mode));
        let g = any
            .to_gcs(
                DimMap::try_new(shape.to_vec(), dims, vec![1]).unwrap(),
                CompressedAxis::Row,
                IndexType::Int64,
            )
            .unwrap();
        let AnyTensor::Gcs(g) = g else { unreachable!() };
        let m = csf::mttkrp_csr(
            &g.matrix().downcast::<f64, i64, i64>().unwrap(),
            &shape,
            mode,
            &factors,
        )
        .unwrap();
        assert!(close(&m.values()[..], &want), "CSR baseline, mode {mode}");
        // TTV along the mode
        let v: Vec<f64> = (0..shape[mode]).map(|i| i as f64 - 1.5).collect();
        let mut want_t = std::collections::BTreeMap::<Vec<usize>, f64>::new();
        for (lin, &alin) in a.iter().enumerate() {
            if alin != 0.0 {
                let c: Vec<usize> = (0..4).map(|d| lin / strides[d] % shape[d]).collect();
                let key: Vec<usize> = (0..4).filter(|&d| d != mode).map(|d| c[d]).collect();
                *want_t.entry(key).or_default() += alin * v[c[mode]];
            }
        }
        for order in [
            [0usize, 1, 2, 3],
            [2, 3, 0, 1],
            [mode, (mode + 1) % 4, (mode + 2) % 4, (mode + 3) % 4],
            [(mode + 1) % 4, mode, (mode + 2) % 4, (mode + 3) % 4],
            [(mode + 1) % 4, (mode + 2) % 4, (mode + 3) % 4, mode],
        ] {
            let t = coo.to_csf::<i64, i64>(&order).unwrap();
            // the dense result: every element, zero where nothing is stored
            let out_shape: Vec<usize> = (0..4).filter(|&d| d != mode).map(|d| shape[d]).collect();
            let yd = csf::ttv_dense(&t, mode, &v).unwrap();
            assert_eq!(yd.shape(), &out_shape[..], "mode {mode} order {order:?}");
            let mut want_d = vec![0.0; out_shape.iter().product()];
            for (k, w) in &want_t {
                want_d[(k[0] * out_shape[1] + k[1]) * out_shape[2] + k[2]] = *w;
            }
            assert!(
                close(&yd.values()[..], &want_d),
                "dense TTV, mode {mode} order {order:?}"
            );
            let y = csf::ttv(&t, mode, &v).unwrap();
            let mut got = std::collections::BTreeMap::<Vec<usize>, f64>::new();
            y.for_each(|c, x| *got.entry(c.to_vec()).or_default() += x)
                .unwrap();
            assert_eq!(got.len(), want_t.len(), "mode {mode} order {order:?}");
            for (k, w) in &want_t {
                assert!(
                    (got[k] - w).abs() < 1e-9,
                    "mode {mode} order {order:?} at {k:?}"
                );
            }
        }
    }
    let t = coo.to_csf::<i32, i32>(&[0, 1, 2, 3]).unwrap();
    assert!(csf::mttkrp(&t, 4, &factors).is_err());
    assert!(csf::mttkrp(&t, 0, &factors[..3]).is_err());
    assert!(csf::ttv(&t, 1, &[1.0]).is_err());
    assert!(csf::ttv_dense(&t, 1, &[1.0]).is_err());
    assert!(csf::ttv_dense(&t, 4, &[1.0; 6]).is_err());
}

#[test]
fn dense_ttv_of_integers_is_checked_and_empty_tensors_give_zeros() {
    // integers accumulate wide and narrow once: an overflowing sum is an error
    let big = CooTensor::<i8, i64>::from_entries(
        vec![2, 2, 2],
        &[(vec![0, 1, 1], 100), (vec![1, 1, 1], 100)],
    )
    .unwrap();
    for order in [[0usize, 1, 2], [1, 2, 0], [2, 0, 1]] {
        let t = big.to_csf::<i32, i32>(&order).unwrap();
        let y = csf::ttv_dense(&t, 0, &[1, -1]).unwrap(); // 100 - 100
        assert_eq!(y.values().as_ref(), &[0, 0, 0, 0], "order {order:?}");
        assert!(
            matches!(csf::ttv_dense(&t, 0, &[1, 1]), Err(Error::Overflow { .. })),
            "order {order:?}"
        );
        assert!(
            matches!(csf::ttv(&t, 0, &[1, 1]), Err(Error::Overflow { .. })),
            "order {order:?}"
        );
    }
    let empty = CooTensor::<f32, i64>::from_entries(vec![3, 0, 4], &[])
        .unwrap()
        .to_csf::<i32, i32>(&[0, 1, 2])
        .unwrap();
    let y = csf::ttv_dense(&empty, 1, &[]).unwrap();
    assert_eq!((y.shape(), y.values().len()), (&[3usize, 4][..], 12));
    assert!(y.values().iter().all(|&x| x == 0.0));
}

/// A sparse TTV keeps an entry wherever the tensor stores one, whatever the
/// sum: sums that cancel, products with a zero weight, and a sum that passes
/// through zero and leaves it; an untouched position gets none. With the mode
/// above the leaf level (three of the four axis orders) each parent has at
/// least an eighth as many leaves as accumulator positions, so the
/// accumulator is read back by a scan, which tells an untouched position from
/// a sum back at zero only by the flag the addition leaves; with the mode at
/// the leaf level (order [1, 2, 0]) each fiber is one entry.
#[test]
fn sparse_ttv_keeps_entries_whose_sums_are_zero() {
    // 4 x 2 x 2 along mode 0, weights [1, 1, 0, 2]
    let entries = [
        (vec![0, 0, 0], 2), // (0, 0): 2 - 2
        (vec![1, 0, 0], -2),
        (vec![2, 0, 1], 5), // (0, 1): 5 * 0
        (vec![0, 1, 0], 1), // (1, 0): 1 - 1, then + 2
        (vec![1, 1, 0], -1),
        (vec![3, 1, 0], 1),
    ]; // (1, 1): nothing stored
    let v = [1, 1, 0, 2];
    let want = [(vec![0, 0], 0), (vec![0, 1], 0), (vec![1, 0], 2)];
    for order in [[0usize, 1, 2], [1, 0, 2], [1, 2, 0], [2, 0, 1]] {
        let f: Vec<(Vec<usize>, f64)> = entries
            .iter()
            .map(|(c, x)| (c.clone(), *x as f64))
            .collect();
        let t = CooTensor::<f64, i64>::from_entries(vec![4, 2, 2], &f)
            .unwrap()
            .to_csf::<i32, i32>(&order)
            .unwrap();
        let vf: Vec<f64> = v.iter().map(|&x| x as f64).collect();
        let mut got = Vec::new();
        let y = csf::ttv(&t, 0, &vf).unwrap();
        y.for_each(|c, x| got.push((c.to_vec(), x))).unwrap();
        let wf: Vec<(Vec<usize>, f64)> = want.iter().map(|(c, x)| (c.clone(), *x as f64)).collect();
        assert_eq!(got, wf, "float64, order {order:?}");
        let t = CooTensor::<i32, i64>::from_entries(vec![4, 2, 2], &entries)
            .unwrap()
            .to_csf::<i32, i32>(&order)
            .unwrap();
        let mut got = Vec::new();
        csf::ttv(&t, 0, &v)
            .unwrap()
            .for_each(|c, x| got.push((c.to_vec(), x)))
            .unwrap();
        assert_eq!(got, want, "int32, order {order:?}");
    }
}

#[test]
fn elementwise_and_reductions() {
    let a = random_coo(&[9, 8, 7], 120, 4);
    let b = random_coo(&[9, 8, 7], 120, 5);
    let (aa, ba): (AnyTensor, AnyTensor) = (
        a.clone().into(),
        b.to_csf::<i32, i32>(&[2, 0, 1]).unwrap().into(),
    );
    let (_, da) = dense(&aa);
    let (_, db) = dense(&ba);
    for (op, f) in [
        (
            elementwise::BinaryOp::Add,
            (|x: f64, y: f64| x + y) as fn(f64, f64) -> f64,
        ),
        (elementwise::BinaryOp::Subtract, |x, y| x - y),
        (elementwise::BinaryOp::Multiply, |x, y| x * y),
    ] {
        let r: AnyTensor = elementwise::binary::<f64>(&aa, &ba, op).unwrap();
        let (_, dr) = dense(&r);
        let want: Vec<f64> = da.iter().zip(&db).map(|(&x, &y)| f(x, y)).collect();
        assert!(close(&dr, &want), "{op:?}");
    }
    let scaled = elementwise::scale::<f64>(&ba, 2.0).unwrap();
    assert!(close(
        &dense(&scaled).1,
        &db.iter().map(|x| x * 2.0).collect::<Vec<_>>()
    ));
    assert!(
        reduce::allclose::<f64>(
            &scaled,
            &elementwise::binary::<f64>(&ba, &ba, elementwise::BinaryOp::Add).unwrap(),
            1e-12,
            0.0
        )
        .unwrap()
    );
    assert!(!reduce::allclose::<f64>(&aa, &ba, 1e-6, 1e-6).unwrap());
    assert!((reduce::sum_all::<f64>(&aa).unwrap() - da.iter().sum::<f64>()).abs() < 1e-9);
    // sums along axes {1} and {0, 2}
    let s1 = reduce::sum_axes::<f64>(&aa, &[1]).unwrap();
    let mut want = vec![0.0; 63];
    for i in 0..9 {
        for j in 0..8 {
            for k in 0..7 {
                want[i * 7 + k] += da[(i * 8 + j) * 7 + k];
            }
        }
    }
    assert!(close(&dense(&s1).1, &want));
    let s02 = reduce::sum_axes::<f64>(&ba, &[2, 0]).unwrap();
    assert_eq!(s02.shape(), &[8]);
    assert!(reduce::sum_axes::<f64>(&aa, &[1, 1]).is_err());
    // integer overflow is an error, not a wrap
    let big =
        CooTensor::<i8, i32>::from_entries(vec![2], &[(vec![0], 100), (vec![1], 100)]).unwrap();
    assert!(matches!(
        reduce::sum_all::<i8>(&big.clone().into()),
        Err(Error::Overflow { .. })
    ));
    assert!(matches!(
        elementwise::scale::<i8>(&big.clone().into(), 2),
        Err(Error::Overflow { .. })
    ));
    // values over several of map_values' chunks (2^16 each), the last one
    // partial, and an overflow in the last chunk only
    let n = 200_001usize;
    let long: AnyTensor = CooTensor::<i32, i32>::try_new(
        vec![n],
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        (0..n as i32).collect::<Vec<_>>().into(),
        (0..n as i32)
            .map(|k| k % 1000 - 500)
            .collect::<Vec<_>>()
            .into(),
    )
    .unwrap()
    .into();
    let want: Vec<i32> = (0..n as i32).map(|k| 3 * (k % 1000 - 500)).collect();
    for tripled in on_threads(&[1, 2], || elementwise::scale::<i32>(&long, 3).unwrap()) {
        let d = tripled
            .convert(Format::Dense, IndexType::Int64, None)
            .unwrap();
        let AnyTensor::Dense(d) = d else {
            unreachable!()
        };
        assert_eq!(d.downcast::<i32>().unwrap().values().as_ref(), &want[..]);
    }
    let mut edge: Vec<i32> = vec![1; n];
    edge[n - 1] = i32::MAX;
    let edge: AnyTensor = CooTensor::<i32, i32>::try_new(
        vec![n],
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        (0..n as i32).collect::<Vec<_>>().into(),
        edge.into(),
    )
    .unwrap()
    .into();
    for r in on_threads(&[1, 2], || elementwise::scale::<i32>(&edge, 2)) {
        assert!(matches!(r, Err(Error::Overflow { .. })));
    }
    let m = CooTensor::<i64, i32>::from_entries(
        vec![1, 2],
        &[(vec![0, 0], i64::MAX), (vec![0, 1], i64::MAX)],
    )
    .unwrap();
    assert!(matches!(
        spmv::spmv::<i64>(&m.into(), &[1, 1]),
        Err(Error::Overflow { .. })
    ));
    // mismatched shapes
    let c = random_coo(&[9, 8, 6], 10, 6);
    assert!(matches!(
        elementwise::binary::<f64>(&aa, &c.into(), elementwise::BinaryOp::Add),
        Err(Error::Shape { .. })
    ));
}

#[test]
fn fast_conversions_agree_with_dense() {
    let coo = random_coo(&[50, 40, 30], 5000, 7);
    let d = coo.to_dense().unwrap();
    // the parallel scan equals the reference element walk, bit for bit
    let fast = convert::dense_to_coo::<f64, i32>(&d).unwrap();
    assert!(
        fast == d.to_coo::<i32>().unwrap(),
        "dense_to_coo differs from the reference"
    );
    for order in [[2usize, 0, 1], [0, 1, 2]] {
        let fast = convert::dense_to_csf::<f64, i64, i64>(&d, &order).unwrap();
        assert!(
            fast == d
                .to_coo::<i64>()
                .unwrap()
                .to_csf::<i64, i64>(&order)
                .unwrap(),
            "dense_to_csf {order:?}"
        );
    }
    let m = random_coo(&[300, 200], 4000, 8);
    let md = m.to_dense().unwrap();
    for axis in [CompressedAxis::Row, CompressedAxis::Column] {
        let fast = convert::dense_to_csx::<f64, i32, i32>(&md, axis).unwrap();
        assert_eq!(dense(&fast.clone().into()).1, md.values().to_vec());
        let t = convert::transpose_csx(&fast).unwrap();
        assert_eq!(dense(&t.into()).1, md.values().to_vec());
    }
}

/// SpMV straight on a memory-mapped tensor: no allocation proportional to nnz.
#[test]
fn spmv_on_a_mapped_file_copies_nothing() {
    let _alone = exclusive();
    let (rows, cols, nnz) = (1000usize, 5000usize, 1_000_000usize);
    let coo = random_coo(&[rows, cols], nnz, 9);
    let csr: AnyTensor = coo.to_csx::<i32, i64>(CompressedAxis::Row).unwrap().into();
    let x: Vec<f64> = (0..cols).map(|j| (j % 13) as f64).collect();
    let in_memory = spmv::spmv::<f64>(&csr, &x).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.arrow");
    ipc::write_tensor_stream(
        &path,
        &[TensorMessage::from(csr)],
        &StreamWriteOptions::default(),
    )
    .unwrap();
    drop(coo);

    PEAK_SINGLE.store(0, Relaxed);
    let before = TOTAL.load(Relaxed);
    let reader = MmapReader::open_with(&path, &StreamReadOptions::default()).unwrap();
    let t = reader.get(0).unwrap().tensor;
    let y = spmv::spmv::<f64>(&t, &x).unwrap();
    let total = TOTAL.load(Relaxed) - before;
    let peak = PEAK_SINGLE.load(Relaxed);
    assert_eq!(
        y, in_memory,
        "same result as the in-memory run, bit for bit"
    );
    // nnz x 12 bytes of index + values live in the file; we allocate ~the result
    assert!(total < 1 << 20, "allocated {total} bytes in all");
    assert!(peak < 64 << 10, "largest allocation {peak} bytes");
    let AnyTensor::Csx(m) = &t else { panic!() };
    assert!(arrow_sparse::buffer::points_into(
        m.values().inner(),
        reader.mapping()
    ));
}

/// Duplicates are summed in the wide accumulator and narrowed once (the module's
/// accumulation rule), in `sum_duplicates`, `binary` and `allclose`: only totals
/// that do not fit are errors.
#[test]
fn integer_duplicates_and_differences_accumulate_wide() {
    let mut r = rng(9);
    let (mut fitting, mut overflowing) = (0, 0);
    for round in 0..60 {
        // per cell, in storage order: 100, 100 (a partial sum of 200 that int8
        // cannot hold), -100, then the rest: the total is t, or 200 in some rounds
        let mut entries: Vec<(Vec<usize>, i8)> = Vec::new();
        let mut want = [0i128; 6];
        for step in 0..4 {
            for (cell, total) in want.iter_mut().enumerate() {
                if (round + cell) % 4 == 0 {
                    continue; // an absent cell
                }
                let t = (r() % 55) as i8 - 27;
                let v = match step {
                    0 | 1 => 100,
                    2 => -100,
                    _ if round % 5 == 0 && cell == 1 => 100,
                    _ => t,
                };
                *total += v as i128;
                entries.push((vec![cell / 2, cell % 2], v));
            }
        }
        let coo = CooTensor::<i8, i64>::from_entries(vec![3, 2], &entries).unwrap();
        let touched: Vec<usize> = (0..6).filter(|&c| (round + c) % 4 != 0).collect();
        let fits = touched.iter().all(|&c| i8::try_from(want[c]).is_ok());
        let got = elementwise::sum_duplicates(&coo);
        let a: AnyTensor = coo.clone().into();
        if fits {
            fitting += 1;
            let s = got.unwrap_or_else(|e| panic!("round {round}: {e}"));
            let sums: Vec<i128> = s.values().iter().map(|&v| v as i128).collect();
            let expect: Vec<i128> = touched.iter().map(|&c| want[c]).collect();
            assert_eq!(sums, expect, "round {round}");
            // a - a is zero everywhere, whatever the partial sums
            let d = elementwise::binary::<i8>(&a, &a, elementwise::BinaryOp::Subtract).unwrap();
            assert_eq!(d.nnz(), 0, "round {round}");
        } else {
            overflowing += 1;
            assert!(matches!(got, Err(Error::Overflow { .. })), "round {round}");
        }
        assert!(reduce::allclose::<i8>(&a, &a, 0.0, 0.0).unwrap());
    }
    assert!(fitting > 10 && overflowing > 5, "{fitting} {overflowing}");
    // differences beyond the value type's range are compared, not overflowed
    let x: AnyTensor = CooTensor::<i8, i64>::from_entries(vec![1], &[(vec![0], 127)])
        .unwrap()
        .into();
    let y: AnyTensor = CooTensor::<i8, i64>::from_entries(vec![1], &[(vec![0], -128)])
        .unwrap()
        .into();
    assert!(reduce::allclose::<i8>(&x, &y, 0.0, 255.0).unwrap());
    assert!(!reduce::allclose::<i8>(&x, &y, 0.0, 254.0).unwrap());
}

/// Issue #18: outputs sized by a declared extent are allocated fallibly. A
/// 16-byte `.tns` declaring 88,888,888,888 rows used to abort the process
/// ("memory allocation of 711111111104 bytes failed"), 2^62 rows panicked with
/// "capacity overflow", and CSC SpMV had the same pattern.
#[test]
fn outputs_sized_by_declared_extents_are_typed_errors() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kernels");
    let t = arrow_sparse::io::read_path(data.join("spmv_coo_alloc_fail.tns"))
        .unwrap()
        .tensor;
    assert_eq!(t.shape(), &[88_888_888_888, 1]);
    match spmv::spmv::<f64>(&t, &[1.0]) {
        Err(Error::Allocation {
            elements,
            element_bytes: 8,
            ..
        }) => assert_eq!(elements, 88_888_888_888),
        other => panic!("{other:?}"),
    }
    // 111,111,111 rows: allocatable; the scatter touches only the row it writes
    let t = arrow_sparse::io::read_path(data.join("spmv_coo_huge_rows.fuzz.tns"))
        .unwrap()
        .tensor;
    let cols = t.shape()[1];
    match spmv::spmv::<f64>(&t, &vec![1.0; cols]) {
        Ok(y) => assert_eq!(y.iter().filter(|&&v| v != 0.0).count(), 1),
        Err(Error::Allocation { .. }) => {}
        Err(e) => panic!("{e}"),
    }
    // 2^62 rows: the byte count overflows the address space
    let rows = 1usize << 62;
    let coo = CooTensor::<f64, i64>::from_entries(vec![rows, 1], &[(vec![5, 0], 2.0)]).unwrap();
    assert!(matches!(
        spmv::spmv_coo(&coo, &[1.0]),
        Err(Error::Allocation { .. })
    ));
    assert!(matches!(
        spmv::spmv::<f64>(&coo.clone().into(), &[1.0]),
        Err(Error::Allocation { .. })
    ));
    let csc = arrow_sparse::CsxMatrix::<f64, i64>::try_new(
        vec![rows, 1],
        CompressedAxis::Column,
        vec![0i64, 1].into(),
        vec![5i64].into(),
        vec![2.0].into(),
    )
    .unwrap();
    assert!(matches!(
        spmv::spmv_csx(&csc, &[1.0]),
        Err(Error::Allocation { .. })
    ));
    let b = DenseTensor::<f64>::try_new(vec![1, 4], vec![1.0; 4].into()).unwrap();
    assert!(matches!(
        spmv::spmm_csx(&csc, &b),
        Err(Error::Allocation { .. })
    ));
    // reductions and TTV sized by extents
    let any: AnyTensor = coo.into();
    assert!(matches!(
        reduce::sum_axes_with::<f64>(&any, &[1], reduce::SumOutput::Dense),
        Err(Error::Allocation { .. })
    ));
    let s = reduce::sum_axes::<f64>(&any, &[1]).unwrap(); // auto: sparse
    assert_eq!(
        (s.format(), s.get::<f64>(&[5]).unwrap()),
        (Format::Coo, Some(2.0))
    );
}

/// SpMV / SpMM into the caller's buffers allocate nothing, and the results do
/// not depend on the number of threads.
#[test]
fn into_variants_allocate_nothing_and_threads_do_not_change_results() {
    let (rows, cols) = (3000usize, 700usize);
    // power-law-ish rows with duplicates and empty rows
    let mut r = rng(21);
    let entries: Vec<(Vec<usize>, f64)> = (0..200_000)
        .map(|_| {
            let row = ((r() % 1000) as usize).pow(2) % rows / 2 * 2; // odd rows empty
            (
                vec![row, (r() % cols as u64) as usize],
                (r() % 97) as f64 / 7.0 - 6.0,
            )
        })
        .collect();
    let coo = CooTensor::<f64, i64>::from_entries(vec![rows, cols], &entries).unwrap();
    let x: Vec<f64> = (0..cols)
        .map(|j| ((j * 31) % 17) as f64 / 3.0 - 2.0)
        .collect();
    let b: Vec<f64> = (0..cols * 5)
        .map(|j| ((j * 7) % 23) as f64 - 11.0)
        .collect();
    let tensors: Vec<AnyTensor> = vec![
        coo.clone().into(),
        coo.canonicalize().unwrap().into(),
        coo.to_csx::<i32, i32>(CompressedAxis::Row).unwrap().into(),
        coo.to_csx::<i64, i64>(CompressedAxis::Column)
            .unwrap()
            .into(),
    ];
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    for t in &tensors {
        type Run = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);
        let mut runs: Vec<Run> = Vec::new();
        for threads in [1, 2, 3, 7] {
            runs.push(pool(threads).install(|| {
                let mut y = vec![f64::NAN; rows];
                let mut c = vec![0.0; rows * 5];
                // on one thread everything runs here: count this thread's bytes
                MINE.with(|m| m.set(0));
                TRACK.with(|f| f.set(threads == 1));
                spmv::spmv_into(t, &x, &mut y).unwrap();
                spmv::spmm_into(t, &b, 5, &mut c).unwrap();
                TRACK.with(|f| f.set(false));
                let allocated = MINE.with(|m| m.get());
                // at most the small metadata of a type dispatch, nothing per row
                assert!(allocated < 1024, "{:?}: {allocated} bytes", t.format());
                let s = reduce::sum_axes::<f64>(t, &[1]).unwrap();
                let s0 = reduce::sum_axes::<f64>(t, &[0]).unwrap();
                let s = s.to_coo::<f64, i64>().unwrap().values().to_vec();
                let s0 = s0.to_coo::<f64, i64>().unwrap().values().to_vec();
                (y, c, s, s0)
            }));
        }
        for w in runs.windows(2) {
            assert!(
                w[0] == w[1],
                "{:?}: results differ between thread counts",
                t.format()
            );
        }
    }
}

#[test]
fn ttv_on_unvalidated_trees_returns_errors_not_panics() {
    use arrow_sparse::{CsfTensor, TensorOptions, Validation};
    let trusted = TensorOptions::default().with_validation(Validation::Trusted);
    // 3-D trees built without validation: a leaf coordinate past its extent, a
    // root past its extent, child ranges that go backwards or past the end
    type Levels = Vec<Vec<i32>>;
    let cases: Vec<(&str, Levels, Levels)> = vec![
        (
            "leaf past extent",
            vec![vec![0, 1], vec![0, 2]],
            vec![vec![0], vec![1], vec![9, 0]],
        ),
        (
            // row 0's leaf 5 would land on row 1's element 1 of a mode-0 result
            "leaf past extent inside the output",
            vec![vec![0, 1], vec![0, 2]],
            vec![vec![0], vec![0], vec![0, 5]],
        ),
        (
            "middle past extent",
            vec![vec![0, 1], vec![0, 2]],
            vec![vec![1], vec![7], vec![0, 1]],
        ),
        (
            "second leaf past extent",
            vec![vec![0, 1], vec![0, 2]],
            vec![vec![1], vec![2], vec![0, 4]],
        ),
        (
            "root past extent",
            vec![vec![0, 1], vec![0, 2]],
            vec![vec![5], vec![1], vec![0, 1]],
        ),
        (
            "middle past end",
            vec![vec![0, 3], vec![0, 2]],
            vec![vec![0], vec![1], vec![0, 1]],
        ),
        (
            "leaves past end",
            vec![vec![0, 1], vec![0, 7]],
            vec![vec![0], vec![1], vec![0, 1]],
        ),
        (
            "reversed range",
            vec![vec![0, 1], vec![2, 0]],
            vec![vec![0], vec![1], vec![0, 1]],
        ),
    ];
    let mut tried = 0;
    for (name, ptr, idx) in cases {
        let t = CsfTensor::<f64, i32>::try_new_with(
            vec![2, 3, 4],
            vec![0, 1, 2],
            ptr.into_iter().map(Into::into).collect(),
            idx.into_iter().map(Into::into).collect(),
            vec![1.0, 2.0].into(),
            &trusted,
        );
        let Ok(t) = t else { continue }; // refused even without validation: fine
        tried += 1;
        for mode in 0..3 {
            let v = vec![1.0; [2, 3, 4][mode]];
            // whatever comes back, it comes back (no panic); bad trees give errors
            let dense = csf::ttv_dense(&t, mode, &v);
            let sparse = csf::ttv(&t, mode, &v);
            assert!(
                dense.is_err() && sparse.is_err(),
                "{name}, mode {mode}: {dense:?} {sparse:?}"
            );
        }
    }
    assert!(
        tried >= 3,
        "only {tried} bad trees got past the O(ndim) checks"
    );
}

/// The TTV reference: `sum value * v[x[mode]]` by the other coordinates, from
/// raw entries (duplicates included).
fn ttv_reference(
    entries: &[(Vec<usize>, f64)],
    mode: usize,
    v: &[f64],
) -> std::collections::BTreeMap<Vec<usize>, f64> {
    let mut want = std::collections::BTreeMap::<Vec<usize>, f64>::new();
    for (c, x) in entries {
        let key: Vec<usize> = (0..c.len()).filter(|&d| d != mode).map(|d| c[d]).collect();
        *want.entry(key).or_default() += x * v[c[mode]];
    }
    want
}

fn assert_ttv_matches(
    got: &CooTensor<f64, i64>,
    want: &std::collections::BTreeMap<Vec<usize>, f64>,
    what: &str,
) {
    let mut seen = Vec::new();
    got.for_each(|c, x| seen.push((c.to_vec(), x))).unwrap();
    assert_eq!(seen.len(), want.len(), "{what}: entry count");
    for ((c, x), (wc, wx)) in seen.iter().zip(want) {
        assert_eq!(c, wc, "{what}: coordinates");
        assert!(
            (x - wx).abs() <= 1e-9 * (1.0 + wx.abs()),
            "{what} at {c:?}: {x} != {wx}"
        );
    }
}

#[test]
fn ttv_with_an_accumulator_past_the_level_2_cache_matches_the_reference() {
    let _alone = exclusive();
    // Accumulators of 2 MiB (512 x 512 f64 below the mode's level) with tens of
    // leaves per cursor step: TTV fills and reads them back in blocks sized from
    // the level-2 cache whenever that cache is at most 2 MiB (the EPYC's 512 KiB,
    // the Xeon's 2 MiB, the 256 KiB fallback), one block per quarter of it
    assert!(arrow_sparse::cache::cache_sizes().l2 <= 2 << 20);
    let mut r = rng(41);
    let mut draw = |shape: &[usize], nnz: usize| -> Vec<(Vec<usize>, f64)> {
        (0..nnz)
            .map(|_| {
                (
                    shape.iter().map(|&d| (r() % d as u64) as usize).collect(),
                    (r() % 2001) as f64 / 100.0 - 10.0,
                )
            })
            .collect()
    };
    // the mode at the root (one parent), and at level 1 below 4 parents (the
    // accumulator reset between them), with leaves right below the blocked
    // level (3-D) and one level further down (4-D)
    let cases: [(&[usize], &[usize], usize, usize); 4] = [
        (&[8, 512, 512], &[0, 1, 2], 0, 60_000),
        (&[4, 6, 512, 512], &[0, 1, 2, 3], 1, 120_000),
        (&[6, 64, 64, 64], &[0, 1, 2, 3], 0, 80_000),
        (&[512, 6, 512], &[1, 0, 2], 1, 60_000),
    ];
    for (shape, order, mode, nnz) in cases {
        let entries = draw(shape, nnz);
        let v: Vec<f64> = (0..shape[mode]).map(|i| i as f64 * 0.25 - 0.5).collect();
        let want = ttv_reference(&entries, mode, &v);
        let coo = CooTensor::<f64, i64>::from_entries(shape.to_vec(), &entries).unwrap();
        let t = coo.to_csf::<i32, i64>(order).unwrap();
        let what = format!("shape {shape:?} order {order:?} mode {mode}");
        assert_ttv_matches(&csf::ttv(&t, mode, &v).unwrap(), &want, &what);
        assert_dense_ttv_matches(&csf::ttv_dense(&t, mode, &v).unwrap(), &want, &what);
    }
}

/// TTV on trees of more than 2 * 2^15 leaves: on several threads the output
/// is cut into parts (by root nodes, or by blocks of level-1 coordinates when
/// the mode is the root's; the sparse result's walk with the mode at a middle
/// level also by root nodes); the results on 1, 2, 3 and 7 threads are bitwise
/// the same and match the reference, for every mode, a tree whose root is not
/// the output's first dimension (not cut), a 2-D tree, and integer values
/// (accumulated wide, then narrowed).
#[test]
fn ttv_results_do_not_depend_on_the_thread_count() {
    let _alone = exclusive();
    let mut r = rng(57);
    let mut draw = |shape: &[usize], nnz: usize| -> Vec<(Vec<usize>, f64)> {
        (0..nnz)
            .map(|_| (skewed(&mut r, shape), (r() % 2001) as f64 / 100.0 - 10.0))
            .collect()
    };
    // (a middle mode's accumulator of at most 2048 positions splits the roots:
    // mode 1 of the first, mode 0 of the second, modes 1 and 2 of the 4-D one)
    let cases: [(&[usize], &[usize], usize); 4] = [
        (&[40, 512, 512], &[0, 1, 2], 200_000),
        (&[300, 40, 60], &[1, 0, 2], 150_000),
        (&[3000, 700], &[0, 1], 150_000),
        (&[10, 24, 30, 40], &[0, 1, 2, 3], 150_000),
    ];
    for (shape, order, nnz) in cases {
        let entries = draw(shape, nnz);
        let coo = CooTensor::<f64, i64>::from_entries(shape.to_vec(), &entries).unwrap();
        let t = coo.to_csf::<i32, i64>(order).unwrap();
        // integers: the same tree with small integer values
        let ints: Vec<(Vec<usize>, i64)> = entries
            .iter()
            .map(|(c, x)| (c.clone(), (*x * 10.0) as i64))
            .collect();
        let ti = CooTensor::<i64, i64>::from_entries(shape.to_vec(), &ints)
            .unwrap()
            .to_csf::<i32, i32>(order)
            .unwrap();
        for mode in 0..shape.len() {
            let v: Vec<f64> = (0..shape[mode]).map(|i| i as f64 * 0.25 - 3.0).collect();
            let vi: Vec<i64> = (0..shape[mode] as i64).map(|i| i % 7 - 3).collect();
            let runs = on_threads(&[1, 2, 3, 7], || {
                (
                    csf::ttv(&t, mode, &v).unwrap(),
                    csf::ttv_dense(&t, mode, &v).unwrap(),
                    csf::ttv_dense(&ti, mode, &vi).unwrap(),
                    csf::ttv(&ti, mode, &vi).unwrap(),
                )
            });
            let what = format!("shape {shape:?} order {order:?} mode {mode}");
            for w in runs.windows(2) {
                assert!(
                    w[0].0 == w[1].0,
                    "{what}: ttv differs between thread counts"
                );
                assert!(w[0].1 == w[1].1, "{what}: ttv_dense differs");
                assert!(w[0].2 == w[1].2, "{what}: integer ttv_dense differs");
                assert!(w[0].3 == w[1].3, "{what}: integer ttv differs");
            }
            let want = ttv_reference(&entries, mode, &v);
            assert_ttv_matches(&runs[0].0, &want, &what);
            assert_dense_ttv_matches(&runs[0].1, &want, &what);
            // the integer reference, exact
            let mut want_i = std::collections::BTreeMap::<Vec<usize>, i64>::new();
            for (c, x) in &ints {
                let key: Vec<usize> = (0..c.len()).filter(|&d| d != mode).map(|d| c[d]).collect();
                *want_i.entry(key).or_default() += x * vi[c[mode]];
            }
            let dense_i = &runs[0].2;
            let oshape = dense_i.shape().to_vec();
            let mut expect = vec![0i64; oshape.iter().product()];
            for (c, x) in &want_i {
                expect[c.iter().zip(&oshape).fold(0, |a, (&c, &d)| a * d + c)] = *x;
            }
            assert_eq!(
                &dense_i.values()[..],
                &expect[..],
                "{what}: integer ttv_dense"
            );
            assert_eq!(
                runs[0].3.to_dense().unwrap(),
                *dense_i,
                "{what}: integer ttv"
            );
        }
    }
}

fn assert_dense_ttv_matches(
    got: &DenseTensor<f64>,
    want: &std::collections::BTreeMap<Vec<usize>, f64>,
    what: &str,
) {
    let shape = got.shape().to_vec();
    let mut expect = vec![0.0; shape.iter().product()];
    for (c, x) in want {
        let lin = c.iter().zip(&shape).fold(0, |a, (&c, &d)| a * d + c);
        expect[lin] = *x;
    }
    assert!(close(&got.values()[..], &expect), "{what}: dense TTV");
}

/// A tree built without validation whose fibers repeat a coordinate (two
/// level-1 nodes `(1, 2)` under root 1): the dense TTV adds every fiber into
/// the element they share, along every mode, as the raw entries' reference
/// does (the mode at the leaf level starts each fiber's dot product from the
/// element, not from zero).
#[test]
fn dense_ttv_adds_repeated_fibers_of_an_unvalidated_tree() {
    use arrow_sparse::{CsfTensor, TensorOptions, Validation};
    let trusted = TensorOptions::default().with_validation(Validation::Trusted);
    let t = CsfTensor::<f64, i32>::try_new_with(
        vec![2, 3, 4],
        vec![0, 1, 2],
        vec![vec![0, 1, 3].into(), vec![0, 2, 4, 5].into()],
        vec![
            vec![0, 1].into(),
            vec![0, 2, 2].into(),
            vec![1, 3, 0, 3, 2].into(),
        ],
        vec![1.0, 2.0, 3.0, 4.0, 5.0].into(),
        &trusted,
    )
    .unwrap();
    let entries: Vec<(Vec<usize>, f64)> = vec![
        (vec![0, 0, 1], 1.0),
        (vec![0, 0, 3], 2.0),
        (vec![1, 2, 0], 3.0),
        (vec![1, 2, 3], 4.0),
        (vec![1, 2, 2], 5.0),
    ];
    for mode in 0..3 {
        let v: Vec<f64> = (0..[2, 3, 4][mode]).map(|i| 1.0 + i as f64).collect();
        let want = ttv_reference(&entries, mode, &v);
        assert_dense_ttv_matches(
            &csf::ttv_dense(&t, mode, &v).unwrap(),
            &want,
            &format!("repeated fibers, mode {mode}"),
        );
    }
}

#[test]
fn ttv_on_large_unsorted_or_out_of_range_trees() {
    let _alone = exclusive();
    use arrow_sparse::{CsfTensor, TensorOptions, Validation};
    let trusted = TensorOptions::default().with_validation(Validation::Trusted);
    // 2 x 512 x 512, mode 0 at the root: 512 fibers per root, each with 40
    // leaves; the fibers of root 1 come in decreasing order (a tree built
    // without validation), which the blocked read-back cannot take
    let (d1, d2, per) = (512usize, 512usize, 40usize);
    let build = |last_fiber: i32| {
        let mut ptr0 = vec![0i64];
        let (mut idx1, mut ptr1, mut leaves) = (Vec::new(), vec![0i64], Vec::new());
        let mut entries = Vec::new();
        for i in 0..2usize {
            let fibers: Vec<usize> = if i == 0 {
                (0..d1).collect()
            } else {
                (0..d1).rev().collect()
            };
            for &j in &fibers {
                idx1.push(j as i32);
                for k in 0..per {
                    let kk = (k * 13 + j) % d2;
                    leaves.push((k * d2 / per) as i32 + (kk % (d2 / per)) as i32);
                    let x = (i * 7 + j + k) as f64 * 0.5;
                    entries.push((vec![i, j, *leaves.last().unwrap() as usize], x));
                }
                ptr1.push(leaves.len() as i64);
            }
            ptr0.push(idx1.len() as i64);
        }
        if let Some(l) = idx1.last_mut() {
            *l = last_fiber;
        }
        let values: Vec<f64> = entries.iter().map(|e| e.1).collect();
        let t = CsfTensor::<f64, i32, i64>::try_new_with(
            vec![2, d1, d2],
            vec![0, 1, 2],
            vec![ptr0.into(), ptr1.into()],
            vec![vec![0i32, 1].into(), idx1.into(), leaves.into()],
            values.into(),
            &trusted,
        )
        .unwrap();
        (t, entries)
    };
    let v = [1.5, -2.0];
    let (t, entries) = build(0);
    let want = ttv_reference(&entries, 0, &v);
    assert_ttv_matches(&csf::ttv(&t, 0, &v).unwrap(), &want, "unsorted fibers");
    assert_dense_ttv_matches(
        &csf::ttv_dense(&t, 0, &v).unwrap(),
        &want,
        "unsorted fibers",
    );
    // a fiber coordinate past its extent is an error, not a dropped fiber
    let (t, _) = build(d1 as i32 + 100);
    assert!(matches!(
        csf::ttv(&t, 0, &v),
        Err(Error::IndexOutOfBounds { .. })
    ));
    assert!(matches!(
        csf::ttv_dense(&t, 0, &v),
        Err(Error::IndexOutOfBounds { .. })
    ));
}

/// MTTKRP on trees of more than 2 * 2^15 leaves, where it runs in parallel: by
/// ranges of roots when the mode is the root's, by fixed chunks of roots with
/// partial results added in order when the mode is below the root and its
/// extent is small (mode 2 of the first tree, 1 of the second, 0 of the 2-D
/// one, 0 / 1 / 3 of the 4-D one), by ranges of output rows when that extent is
/// large (20 000 rows: mode 1 of the first tree, at a middle level, and mode 2
/// of the second, at the leaves); and the CSR baseline by row ranges. The
/// results on 1, 2, 3 and 7 threads are bitwise the same, match the dense
/// reference (floats) and the exact one (integers: every entry counted once),
/// and a leaf past its extent in such a tree is an error on every thread count.
#[test]
fn mttkrp_results_do_not_depend_on_the_thread_count() {
    use arrow_sparse::{CsfTensor, TensorOptions, Validation};
    let _alone = exclusive();
    let mut r = rng(91);
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let rank = 5;
    let cases: [(&[usize], &[usize], usize); 4] = [
        (&[50, 20_000, 30], &[0, 1, 2], 200_000),
        (&[50, 30, 20_000], &[0, 1, 2], 150_000),
        (&[3000, 700], &[1, 0], 150_000),
        (&[20, 30, 40, 50], &[2, 0, 3, 1], 200_000),
    ];
    for (shape, order, nnz) in cases {
        let n = shape.len();
        let entries: Vec<(Vec<usize>, i64)> = (0..nnz)
            .map(|_| (skewed(&mut r, shape), (r() % 2001) as i64 - 1000))
            .collect();
        let floats: Vec<(Vec<usize>, f64)> = entries
            .iter()
            .map(|(c, x)| (c.clone(), *x as f64 / 100.0))
            .collect();
        let fi: Vec<Vec<i64>> = shape
            .iter()
            .enumerate()
            .map(|(d, &e)| {
                (0..e * rank)
                    .map(|k| ((k * 7 + d) % 5) as i64 - 2)
                    .collect()
            })
            .collect();
        let ff: Vec<Vec<f64>> = fi
            .iter()
            .map(|f| f.iter().map(|&x| x as f64 * 0.75 + 0.1).collect())
            .collect();
        let dense_i: Vec<DenseTensor<i64>> = fi
            .iter()
            .zip(shape.iter())
            .map(|(f, &e)| DenseTensor::try_new(vec![e, rank], f.clone().into()).unwrap())
            .collect();
        let dense_f: Vec<DenseTensor<f64>> = ff
            .iter()
            .zip(shape.iter())
            .map(|(f, &e)| DenseTensor::try_new(vec![e, rank], f.clone().into()).unwrap())
            .collect();
        let ti = CooTensor::<i64, i64>::from_entries(shape.to_vec(), &entries)
            .unwrap()
            .to_csf::<i32, i64>(order)
            .unwrap();
        let tf = CooTensor::<f64, i64>::from_entries(shape.to_vec(), &floats)
            .unwrap()
            .to_csf::<i64, i32>(order)
            .unwrap();
        for mode in 0..n {
            let what = format!("shape {shape:?} order {order:?} mode {mode}");
            // the references, from the raw entries (duplicates included)
            let mut want_i = vec![0i128; shape[mode] * rank];
            let mut want_f = vec![0.0f64; shape[mode] * rank];
            for ((c, x), (_, y)) in entries.iter().zip(&floats) {
                for q in 0..rank {
                    let (mut p, mut pf) = (*x as i128, *y);
                    for d in (0..n).filter(|&d| d != mode) {
                        p *= fi[d][c[d] * rank + q] as i128;
                        pf *= ff[d][c[d] * rank + q];
                    }
                    want_i[c[mode] * rank + q] += p;
                    want_f[c[mode] * rank + q] += pf;
                }
            }
            // the tensor matricized along the mode, for the CSR baseline
            let others: Vec<usize> = (0..n).filter(|&d| d != mode).collect();
            let cols: usize = others.iter().map(|&d| shape[d]).product();
            let lin = |c: &[usize]| others.iter().fold(0, |a, &d| a * shape[d] + c[d]);
            let mi: Vec<(Vec<usize>, i64)> = entries
                .iter()
                .map(|(c, x)| (vec![c[mode], lin(c)], *x))
                .collect();
            let mf: Vec<(Vec<usize>, f64)> = floats
                .iter()
                .map(|(c, x)| (vec![c[mode], lin(c)], *x))
                .collect();
            let ci = CooTensor::<i64, i64>::from_entries(vec![shape[mode], cols], &mi)
                .unwrap()
                .to_csx::<i64, i64>(CompressedAxis::Row)
                .unwrap();
            let cf = CooTensor::<f64, i64>::from_entries(vec![shape[mode], cols], &mf)
                .unwrap()
                .to_csx::<i32, i64>(CompressedAxis::Row)
                .unwrap();
            let runs = on_threads(&[1, 2, 3, 7], || {
                (
                    csf::mttkrp(&tf, mode, &dense_f).unwrap(),
                    csf::mttkrp(&ti, mode, &dense_i).unwrap(),
                    csf::mttkrp_csr(&cf, shape, mode, &dense_f).unwrap(),
                    csf::mttkrp_csr(&ci, shape, mode, &dense_i).unwrap(),
                )
            });
            for w in runs.windows(2) {
                let bits = |d: &DenseTensor<f64>| -> Vec<u64> {
                    d.values().iter().map(|x| x.to_bits()).collect()
                };
                assert_eq!(bits(&w[0].0), bits(&w[1].0), "{what}: CSF differs");
                assert_eq!(w[0].1, w[1].1, "{what}: integer CSF differs");
                assert_eq!(bits(&w[0].2), bits(&w[1].2), "{what}: CSR differs");
                assert_eq!(w[0].3, w[1].3, "{what}: integer CSR differs");
            }
            let exact: Vec<i64> = want_i.iter().map(|&x| x as i64).collect();
            assert_eq!(&runs[0].1.values()[..], &exact[..], "{what}: integer CSF");
            assert_eq!(&runs[0].3.values()[..], &exact[..], "{what}: integer CSR");
            assert!(close(&runs[0].0.values()[..], &want_f), "{what}: CSF");
            assert!(close(&runs[0].2.values()[..], &want_f), "{what}: CSR");
        }
    }

    // a leaf past its extent in a large tree built without validation: an
    // error on every thread count and for every mode (each path finds it)
    let trusted = TensorOptions::default().with_validation(Validation::Trusted);
    // 240 000 leaves: mode 0 by ranges of roots, mode 1 (12 000 rows) by
    // ranges of rows, mode 2 (60 rows) by chunks of roots
    let (d0, d1, d2) = (4usize, 12_000usize, 60usize);
    let mut ptr0 = vec![0i64];
    let (mut idx1, mut ptr1, mut leaves) = (Vec::new(), vec![0i64], Vec::new());
    for _ in 0..d0 {
        for j in 0..d1 {
            idx1.push(j as i32);
            leaves.extend((0..d2 as i32).step_by(12).map(|k| k + (j % 12) as i32));
            ptr1.push(leaves.len() as i64);
        }
        ptr0.push(idx1.len() as i64);
    }
    let last = leaves.len() - 1;
    leaves[last] = d2 as i32 + 3;
    let values = vec![1.0f64; leaves.len()];
    let t = CsfTensor::<f64, i32, i64>::try_new_with(
        vec![d0, d1, d2],
        vec![0, 1, 2],
        vec![ptr0.into(), ptr1.into()],
        vec![
            (0..d0 as i32).collect::<Vec<_>>().into(),
            idx1.into(),
            leaves.into(),
        ],
        values.into(),
        &trusted,
    )
    .unwrap();
    let f: Vec<DenseTensor<f64>> = [d0, d1, d2]
        .iter()
        .map(|&e| DenseTensor::try_new(vec![e, rank], vec![1.0; e * rank].into()).unwrap())
        .collect();
    for k in [1, 2, 3] {
        for mode in 0..3 {
            let got = pool(k).install(|| csf::mttkrp(&t, mode, &f));
            assert!(
                matches!(got, Err(Error::IndexOutOfBounds { .. })),
                "{k} threads, mode {mode}: {got:?}"
            );
        }
    }
}

/// SpMM on a canonical COO matrix of more than 2^15 entries runs row ranges in
/// parallel (cut at row boundaries): with row-major and column-major
/// coordinates, on 1, 2, 3 and 8 threads, the product and the scaled form
/// (`alpha = 2`, `beta = -1`) match an exact integer reference and are the same
/// on every thread count. A matrix flagged canonical whose rows are not sorted
/// (built without validation) is an error on several threads, not a panic.
#[test]
fn canonical_coo_spmm_splits_rows_between_threads_with_exact_sums() {
    use arrow_sparse::{CoordLayout, EntryOrder, TensorOptions, Validation};
    let _alone = exclusive();
    let (rows, cols, n) = (5000usize, 300usize, 3usize);
    let mut r = rng(33);
    let entries: Vec<(Vec<usize>, i64)> = (0..150_000)
        .map(|_| {
            // skewed rows, the last 500 empty
            let u = (r() % 4500) as usize;
            (
                vec![u * u / 4500, (r() % cols as u64) as usize],
                (r() % 201) as i64 - 100,
            )
        })
        .collect();
    let canon = CooTensor::<i64, i32>::from_entries(vec![rows, cols], &entries)
        .unwrap()
        .canonicalize()
        .unwrap();
    assert!(canon.is_canonical());
    // the same entries with column-major coordinates, still flagged canonical
    let nnz = canon.nnz();
    let rm = canon.coords();
    let cm: Vec<i32> = (0..2)
        .flat_map(|d| (0..nnz).map(move |k| (d, k)))
        .map(|(d, k)| rm[2 * k + d])
        .collect();
    let canon_cm = CooTensor::<i64, i32>::try_new(
        vec![rows, cols],
        CoordLayout::ColumnMajor,
        EntryOrder::Canonical,
        cm.into(),
        canon.values().clone(),
    )
    .unwrap();
    let b: Vec<i64> = (0..cols * n).map(|j| ((j * 7) % 23) as i64 - 11).collect();
    let c0: Vec<i64> = (0..rows * n).map(|j| (j % 5) as i64).collect();
    let mut want = vec![0i64; rows * n];
    for (e, x) in &entries {
        for q in 0..n {
            want[e[0] * n + q] += x * b[e[1] * n + q];
        }
    }
    let want_scaled: Vec<i64> = want.iter().zip(&c0).map(|(w, c)| 2 * w - c).collect();
    let pool = |k| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(k)
            .build()
            .unwrap()
    };
    for t in [AnyTensor::from(canon.clone()), AnyTensor::from(canon_cm)] {
        for k in [1, 2, 3, 8] {
            let (c, cs) = pool(k).install(|| {
                let mut c = vec![7i64; rows * n];
                spmv::spmm_into(&t, &b, n, &mut c).unwrap();
                let mut cs = c0.clone();
                spmv::spmm_scaled_into(2, &t, &b, n, -1, &mut cs).unwrap();
                (c, cs)
            });
            assert_eq!(c, want, "{:?}, {k} threads", t.format());
            assert_eq!(cs, want_scaled, "{:?}, {k} threads, scaled", t.format());
        }
    }
    // flagged canonical, rows out of order: an error on several threads
    let mut swapped = rm.to_vec();
    let (a, z) = (2, 2 * (nnz - 1));
    swapped.swap(a, z);
    let lying = CooTensor::<i64, i32>::try_new_with(
        vec![rows, cols],
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        swapped.into(),
        canon.values().clone(),
        &TensorOptions::default().with_validation(Validation::Trusted),
    )
    .unwrap();
    let t = AnyTensor::from(lying);
    for k in [2, 3] {
        let got = pool(k).install(|| spmv::spmm_into(&t, &b, n, &mut vec![0i64; rows * n]));
        assert!(
            matches!(got, Err(Error::Invariant { .. })),
            "{k} threads: {got:?}"
        );
    }
}

/// Column sums of a CSR wider than the level-2 caches of our machines (2^21
/// columns, a 16 MiB accumulator, so the scatter prefetches ahead) equal a
/// plain sum in storage order, bit for bit; a bad index (a tensor built
/// without validation) early, in the middle, or among the last entries that
/// run without the prefetch is an error, not a panic. The same for a narrow
/// CSR (3000 columns: no prefetch).
#[test]
fn wide_column_sums_match_a_plain_sum_and_report_bad_indices() {
    column_sums_match_a_plain_sum_and_report_bad_indices(1 << 21);
    column_sums_match_a_plain_sum_and_report_bad_indices(3000);
}

fn column_sums_match_a_plain_sum_and_report_bad_indices(cols: usize) {
    use arrow_sparse::{CsxMatrix, TensorOptions};
    let rows = 700usize;
    let mut r = rng(44);
    let (mut ptr, mut idx, mut vals) = (vec![0i64], Vec::new(), Vec::new());
    for row in 0..rows {
        // empty rows, and a few columns that many rows share (repeated targets)
        let k = if row % 5 == 0 { 0 } else { (r() % 13) as usize };
        let mut cs: Vec<i64> = (0..k)
            .map(|_| match r() % 4 {
                0 => (r() % 8) as i64,
                _ => (r() % cols as u64) as i64,
            })
            .collect();
        cs.sort_unstable();
        cs.dedup();
        for c in cs {
            idx.push(c);
            vals.push((r() % 97) as f64 / 7.0 - 6.0);
        }
        ptr.push(idx.len() as i64);
    }
    let nnz = idx.len();
    assert!(nnz > 1000, "{nnz} entries");
    let mut want = vec![0.0f64; cols];
    for (&c, &v) in idx.iter().zip(&vals) {
        want[c as usize] += v;
    }
    let build = |idx: Vec<i64>, opts: &TensorOptions| -> AnyTensor {
        CsxMatrix::<f64, i64>::try_new_with(
            vec![rows, cols],
            CompressedAxis::Row,
            ptr.clone().into(),
            idx.into(),
            vals.clone().into(),
            opts,
        )
        .unwrap()
        .into()
    };
    let sums = |t: &AnyTensor| reduce::sum_axes_with::<f64>(t, &[0], reduce::SumOutput::Dense);
    let got = dense(&sums(&build(idx.clone(), &TensorOptions::default())).unwrap());
    assert_eq!(got.0, vec![cols]);
    assert!(
        got.1
            .iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "{cols} columns: sums differ from the plain sum"
    );
    for at in [0, 1, nnz / 2, nnz - 129, nnz - 128, nnz - 127, nnz - 1] {
        for bad in [cols as i64, -1, i64::MAX] {
            let mut b = idx.clone();
            b[at] = bad;
            let t = build(b, &TensorOptions::trusted());
            assert!(
                matches!(sums(&t), Err(Error::Invariant { .. })),
                "{cols} columns: bad index {bad} at {at}"
            );
        }
    }
}

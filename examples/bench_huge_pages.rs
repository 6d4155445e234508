//! What the huge-page advice on kernel outputs (`src/buffer.rs`,
//! `ARROW_SPARSE_HUGE_PAGES`) buys: four one-thread kernels that write large fresh
//! outputs, best of 7 runs each. The variable is read once per process, so compare
//! processes, alternating to share the machine's noise:
//!
//! ```sh
//! cargo build --release --example bench_huge_pages
//! for i in 1 2 3 4 5 6 7; do for hp in 1 0; do
//!   ARROW_SPARSE_HUGE_PAGES=$hp target/release/examples/bench_huge_pages; done; done
//! ```
//!
//! Data: a canonical 10^6 x 10^6 COO matrix with ~10^7 non-zeros (f64, int64
//! indices), its CSR form, a dense 10^6 x 16 operand for SpMM and a dense 4000 x
//! 4000 matrix one third non-zero. Results: `benches/RESULTS.md`, "Kernels".

use arrow_sparse::EntryOrder;
use arrow_sparse::kernels::{convert, spmv};
use arrow_sparse::{CompressedAxis, CooTensor, CoordLayout, DenseTensor};
use std::time::Instant;

fn main() {
    let n = 10_000_000usize;
    let (rows, cols) = (1_000_000usize, 1_000_000usize);
    let mut s = 88172645463325252u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut rc: Vec<(u64, u64)> = (0..n)
        .map(|_| (next() % rows as u64, next() % cols as u64))
        .collect();
    rc.sort_unstable();
    rc.dedup();
    let nnz = rc.len();
    let coords: Vec<i64> = rc.iter().flat_map(|&(r, c)| [r as i64, c as i64]).collect();
    let vals: Vec<f64> = (0..nnz).map(|k| 0.5 + (k % 7) as f64).collect();
    let coo = CooTensor::<f64, i64>::try_new(
        vec![rows, cols],
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        coords.into(),
        vals.into(),
    )
    .unwrap();
    let csr = convert::coo_to_csx::<f64, i64, i64>(&coo, CompressedAxis::Row).unwrap();
    let b = DenseTensor::<f64>::try_new(vec![cols, 16], vec![1.0; cols * 16].into()).unwrap();
    let dn = 4000usize;
    let dv: Vec<f64> = (0..dn * dn)
        .map(|i| {
            if next() % 3 == 0 {
                1.0 + (i % 5) as f64
            } else {
                0.0
            }
        })
        .collect();
    let d = DenseTensor::<f64>::try_new(vec![dn, dn], dv.into()).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let best = |f: &dyn Fn()| {
        let mut m = f64::MAX;
        for _ in 0..7 {
            let t = Instant::now();
            f();
            m = m.min(t.elapsed().as_secs_f64() * 1e3);
        }
        m
    };
    pool.install(|| {
        let a = best(&|| drop(convert::coo_to_csx::<f64, i64, i64>(&coo, CompressedAxis::Row).unwrap()));
        let t = best(&|| drop(convert::transpose_csx(&csr).unwrap()));
        let m = best(&|| drop(spmv::spmm_csx(&csr, &b).unwrap()));
        let c = best(&|| drop(convert::dense_to_coo::<f64, i64>(&d).unwrap()));
        println!("huge pages {:>3}: coo_to_csr {a:.1} transpose {t:.1} spmm16 {m:.1} dense_to_coo {c:.1} ms", if std::env::var("ARROW_SPARSE_HUGE_PAGES").is_ok_and(|v| v == "0") { "off" } else { "on" });
    });
}

//! Criterion benchmarks of every kernel (`arrow_sparse::kernels`), f64 values with
//! int32 and int64 indices, uniform and power-law rows, at about 10^5, 10^6 and
//! 10^7 non-zeros.
//!
//! ```text
//! cargo bench --bench kernels                              # everything, ~15 min on 2 cores
//! cargo bench --bench kernels -- spmv/                     # one family (regex on the id)
//! ARROW_SPARSE_BENCH_MAX_NNZ=1e6 cargo bench --bench kernels   # skip the 10^7 sizes
//! RAYON_NUM_THREADS=1 cargo bench --bench kernels          # single-threaded
//! cargo bench --bench kernels -- --test                    # smoke test: 10^4 nnz, each once
//! ```
//!
//! Ids are `family/kernel/variant/sparsity/f64_<index>/size`, e.g.
//! `spmv/spmv_csx/csr/powerlaw/f64_i32/1e7`; throughput is the bytes of the buffers
//! the kernel reads and writes (criterion prints GiB/s). The data (generator in
//! `benches/compare/kernel_data.rs`, cases in `benches/compare/kernel_cases.rs`) is
//! built before the cases of a size run, whatever the filter; cap the sizes with
//! `ARROW_SPARSE_BENCH_MAX_NNZ` (a number such as `1e6` or `200000`) to save the
//! generation time. Without `--bench` on the command line (criterion's test mode,
//! e.g. `-- --test` or `cargo test --benches`) the only size is 10^4.
//!
//! `bash benches/compare_kernels.sh` times the same cases next to scipy and
//! libarrow, single-threaded and on all cores; see `benches/RESULTS.md`.

use std::time::Duration;

use arrow_sparse::Index;
use criterion::{Criterion, Throughput};

#[path = "compare/gen.rs"]
#[allow(dead_code)]
mod datagen;

#[path = "compare/kernel_data.rs"]
#[allow(dead_code)]
mod data;

#[path = "compare/kernel_cases.rs"]
#[allow(dead_code)]
mod cases;

use cases::{Shared, Typed};
use data::Sparsity;

const SIZES: [usize; 3] = [100_000, 1_000_000, 10_000_000];
const TEST_SIZE: usize = 10_000;

/// `1e7`, `10000000` or `10_000_000`.
fn parse_count(s: &str) -> Option<usize> {
    let s = s.trim().replace('_', "");
    if let Some((m, e)) = s.split_once(['e', 'E']) {
        let m: usize = m.parse().ok()?;
        let e: u32 = e.parse().ok()?;
        return m.checked_mul(10usize.checked_pow(e)?);
    }
    s.parse().ok()
}

fn sizes() -> Vec<usize> {
    let args: Vec<String> = std::env::args().collect();
    let bench_mode = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test");
    let max = match std::env::var("ARROW_SPARSE_BENCH_MAX_NNZ") {
        Ok(v) => parse_count(&v).unwrap_or_else(|| {
            panic!("ARROW_SPARSE_BENCH_MAX_NNZ={v:?}: expected a count such as 1e6")
        }),
        Err(_) => usize::MAX,
    };
    let sizes: Vec<usize> = if bench_mode {
        SIZES.iter().copied().filter(|&n| n <= max).collect()
    } else {
        vec![TEST_SIZE.min(max)]
    };
    if sizes.is_empty() {
        vec![SIZES[0].min(max)]
    } else {
        sizes
    }
}

fn bench_typed<I: Index>(c: &mut Criterion, s: &Shared, idx: &str) {
    let t = Typed::<I>::new(s);
    let label = datagen::size_label(s.n);
    for case in cases::cases(&t) {
        let mut g = c.benchmark_group(case.id);
        g.throughput(Throughput::Bytes(case.bytes as u64));
        let id = format!("{}/f64_{idx}/{label}", s.sparsity.name());
        g.bench_function(id, |b| b.iter_with_large_drop(|| (case.run)()));
        g.finish();
    }
}

fn main() {
    let sizes = sizes();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    for &n in &sizes {
        for sparsity in Sparsity::ALL {
            let s = Shared::new(n, sparsity);
            bench_typed::<i32>(&mut c, &s, "i32");
            bench_typed::<i64>(&mut c, &s, "i64");
        }
    }
    c.final_summary();
}

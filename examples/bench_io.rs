//! Text import speed of `arrow_sparse::io` (run by `benches/compare_io.sh`, which
//! also times scipy's `mmread` on the same files).
//!
//! ```text
//! bench_io generate DIR [--mb N]   write DIR/matrix.mtx (column-major sorted, like SuiteSparse),
//!                                  DIR/matrix_shuffled.mtx (same entries, random order) and
//!                                  DIR/tensor.tns (3-D, random order), about N MB each (default 150)
//! bench_io run DIR [--iters N]     read each file N times (default 3) on one thread and print
//!                                  the best time as `RESULT file mode seconds MB/s` lines
//! ```
//!
//! Modes: `default` (duplicates refused: sorted input is checked for free, unsorted
//! input is sorted to find them) and `keep` (duplicates kept: parsing alone).

use arrow_sparse::EntryOrder;
use std::path::Path;
use std::time::Instant;

use arrow_sparse::io::{self, Duplicates, ImportOptions};
use arrow_sparse::ipc::TensorMessage;
use arrow_sparse::{AnyTensor, CooTensor, CoordLayout, Result};

struct SplitMix64(u64);
impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
    /// A value with a typical number of digits: uniform in [0, 1) or a wider range.
    fn value(&mut self) -> f64 {
        let x = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        match self.below(4) {
            0 => x,
            1 => (x - 0.5) * 1e6,
            2 => (x * 1000.0).round() / 8.0,
            _ => -x * 1e-3,
        }
    }
}

/// `n` distinct coordinate tuples in `shape`, sorted in column-major order
/// (last dimension slowest), and the same in random order.
fn entries(shape: &[u64], n: usize, rng: &mut SplitMix64) -> (Vec<i64>, Vec<i64>) {
    let nd = shape.len();
    let mut keys: Vec<Vec<u64>> = (0..n)
        .map(|_| shape.iter().rev().map(|&d| rng.below(d)).collect())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let sorted: Vec<i64> = keys
        .iter()
        .flat_map(|k| k.iter().rev().map(|&x| x as i64))
        .collect();
    // Fisher-Yates over entries
    let mut order: Vec<usize> = (0..keys.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let shuffled: Vec<i64> = order
        .iter()
        .flat_map(|&k| sorted[k * nd..(k + 1) * nd].iter().copied())
        .collect();
    (sorted, shuffled)
}

fn write(path: &Path, shape: &[u64], coords: Vec<i64>, rng: &mut SplitMix64) -> Result<()> {
    let n = coords.len() / shape.len();
    let values: Vec<f64> = (0..n).map(|_| rng.value()).collect();
    let coo = CooTensor::<f64, i64>::try_new(
        shape.iter().map(|&d| d as usize).collect(),
        CoordLayout::RowMajor,
        EntryOrder::Any,
        coords.into(),
        values.into(),
    )?;
    let t0 = Instant::now();
    io::write_path(path, &TensorMessage::from(AnyTensor::from(coo)))?;
    let bytes = std::fs::metadata(path)?.len();
    println!(
        "wrote {} ({:.1} MB, {n} entries) in {:.2} s",
        path.display(),
        bytes as f64 / 1e6,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

fn generate(dir: &Path, mb: f64) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut rng = SplitMix64(42);
    // about 30 bytes per Matrix Market line and 34 per .tns line
    let n = (mb * 1e6 / 30.0) as usize;
    let shape = [1_000_000u64, 1_000_000];
    let (sorted, shuffled) = entries(&shape, n, &mut rng);
    write(&dir.join("matrix.mtx"), &shape, sorted, &mut SplitMix64(1))?;
    write(
        &dir.join("matrix_shuffled.mtx"),
        &shape,
        shuffled,
        &mut SplitMix64(1),
    )?;
    let n = (mb * 1e6 / 34.0) as usize;
    let shape = [20_000u64, 30_000, 40_000];
    let (_, shuffled) = entries(&shape, n, &mut rng);
    write(&dir.join("tensor.tns"), &shape, shuffled, &mut rng)?;
    Ok(())
}

/// CPU time of this thread in seconds (Linux: `/proc/thread-self/schedstat`), so
/// that other processes on a shared machine inflate the figures less than they
/// inflate wall time.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn run(dir: &Path, iters: usize) -> Result<()> {
    for file in ["matrix.mtx", "matrix_shuffled.mtx", "tensor.tns"] {
        let path = dir.join(file);
        let bytes = std::fs::metadata(&path)?.len() as f64;
        for (mode, dup) in [("default", Duplicates::Error), ("keep", Duplicates::Keep)] {
            let opts = ImportOptions::default().with_duplicates(dup);
            let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
            let mut nnz = 0;
            for _ in 0..iters {
                let (t0, c0) = (Instant::now(), cpu_seconds());
                let msg = io::read_path_with(&path, &opts)?;
                best = best.min(t0.elapsed().as_secs_f64());
                if let (Some(a), Some(b)) = (c0, cpu_seconds()) {
                    best_cpu = best_cpu.min(b - a);
                }
                nnz = msg.tensor.nnz();
                drop(msg);
            }
            // RESULT file mode wall_s wall_MB/s cpu_s cpu_MB/s
            println!(
                "RESULT {file} {mode} {best:.4} {:.1} {best_cpu:.4} {:.1} (nnz {nnz}, {:.1} MB)",
                bytes / best / 1e6,
                bytes / best_cpu / 1e6,
                bytes / 1e6
            );
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: f64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(default)
    };
    let r = match args.first().map(String::as_str) {
        Some("generate") if args.len() >= 2 => generate(Path::new(&args[1]), flag("--mb", 150.0)),
        Some("run") if args.len() >= 2 => run(Path::new(&args[1]), flag("--iters", 3.0) as usize),
        _ => {
            eprintln!("usage: bench_io generate DIR [--mb N] | bench_io run DIR [--iters N]");
            std::process::exit(2);
        }
    };
    if let Err(e) = r {
        eprintln!("bench_io: error: {e}");
        std::process::exit(1);
    }
}

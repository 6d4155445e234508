//! Dataset throughput (#15): write a CSR matrix of N entries as a dataset
//! partitioned by rows, read it back whole, and compare SpMV streamed block by
//! block over the dataset (`DatasetReader::spmv`) with SpMV on the matrix in
//! memory (`kernels::spmv::spmv`).
//!
//! ```sh
//! cargo run --release --example bench_dataset -- DIR [NNZ] [ROWS_PER_PART]
//! ```
//!
//! Defaults: 10^8 entries (10 per row), parts of 10^6 rows. Prints one line per
//! measurement; DIR/ds is removed at the end.

use std::time::Instant;

use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
use arrow_sparse::kernels::spmv::spmv;
use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(
        args.next()
            .ok_or("usage: bench_dataset DIR [NNZ] [ROWS_PER_PART]")?,
    );
    let nnz: usize = args.next().map_or(Ok(100_000_000), |s| s.parse())?;
    let block: usize = args.next().map_or(Ok(1_000_000), |s| s.parse())?;
    let per_row = 10;
    let rows = nnz / per_row;
    let cols = rows;
    // 10 distinct columns per row, spread by a multiplicative hash; sorted per row
    let mut indptr = Vec::with_capacity(rows + 1);
    let mut indices: Vec<i32> = Vec::with_capacity(nnz);
    let mut values: Vec<f64> = Vec::with_capacity(nnz);
    indptr.push(0i64);
    let mut row = [0i32; 10];
    for i in 0..rows {
        for (k, c) in row.iter_mut().enumerate() {
            let h = ((i * per_row + k) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
            *c = (h % (cols as u64 / per_row as u64)) as i32 * per_row as i32 + k as i32;
        }
        row.sort_unstable();
        indices.extend_from_slice(&row);
        values.extend((0..per_row).map(|k| ((i + k) % 1000) as f64 * 0.001 + 0.5));
        indptr.push(((i + 1) * per_row) as i64);
    }
    let a: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
        vec![rows, cols],
        CompressedAxis::Row,
        indptr.into(),
        indices.into(),
        values.into(),
    )?
    .into();
    let raw = nnz * (4 + 8) + (rows + 1) * 8;
    println!(
        "matrix: {rows} x {cols} CSR, {nnz} entries, {:.0} MB in memory",
        raw as f64 / 1e6
    );
    let out = dir.join("ds");
    let t = Instant::now();
    let s = write_dataset(&out, &a.clone().into(), &DatasetWriteOptions::new(0, block))?;
    let w = t.elapsed().as_secs_f64();
    println!(
        "write: {w:.2} s, {:.1} M entries/s, {:.0} MB/s of the in-memory matrix; {} parts, {:.0} MB on disk ({:.2} bytes/entry)",
        nnz as f64 / w / 1e6,
        raw as f64 / w / 1e6,
        s.parts,
        s.bytes as f64 / 1e6,
        s.bytes as f64 / nnz as f64
    );
    let r = DatasetReader::open(&out)?;
    let t = Instant::now();
    let back = r.read()?.tensor;
    let rd = t.elapsed().as_secs_f64();
    assert_eq!(back, a, "the dataset reads back exactly");
    drop(back);
    println!(
        "full read: {rd:.2} s, {:.1} M entries/s, {:.0} MB/s",
        nnz as f64 / rd / 1e6,
        raw as f64 / rd / 1e6
    );
    let x: Vec<f64> = (0..cols).map(|j| (j % 97) as f64 * 0.01).collect();
    let mut best_mem = f64::INFINITY;
    let mut y_mem = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        y_mem = spmv(&a, &x)?;
        best_mem = best_mem.min(t.elapsed().as_secs_f64());
    }
    let mut best_stream = f64::INFINITY;
    for _ in 0..2 {
        let t = Instant::now();
        let y = r.spmv(&x)?;
        best_stream = best_stream.min(t.elapsed().as_secs_f64());
        assert_eq!(y, y_mem, "streamed SpMV equals the in-memory one");
    }
    println!(
        "spmv: in memory {:.3} s (best of 5), streamed over the dataset {:.2} s (best of 2): streamed / in memory = {:.1}x",
        best_mem,
        best_stream,
        best_stream / best_mem
    );
    std::fs::remove_dir_all(&out)?;
    Ok(())
}

//! Deterministic CSR test matrix shared by `benches/ipc.rs` and
//! `examples/bench_ipc.rs` (included with `#[path]`), so both measure the same data.

use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};

/// SplitMix64: tiny, deterministic, good enough for benchmark data.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (multiply-shift; bias is negligible for n << 2^64).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Rows for a given nnz: 10 entries per row on average (10^7 nnz -> 10^6 rows).
pub fn rows_for(nnz: usize) -> usize {
    (nnz / 10).max(1)
}

/// Columns: always 10^6.
pub const COLS: usize = 1_000_000;

/// A `rows_for(nnz) x COLS` CSR matrix, f64 values, int64 indptr and indices:
/// every entry lands in a uniformly random row, its column is uniform in
/// `0..COLS`, columns are sorted within each row. Built directly from buffers
/// with `CsxMatrix::try_new` (full validation, once).
pub fn csr_f64_i64(nnz: usize, seed: u64) -> CsxMatrix<f64, i64, i64> {
    let rows = rows_for(nnz);
    let mut rng = SplitMix64::new(seed);
    // Row of every entry -> row lengths -> indptr.
    let mut counts = vec![0i64; rows];
    for _ in 0..nnz {
        counts[rng.below(rows as u64) as usize] += 1;
    }
    let mut indptr = Vec::with_capacity(rows + 1);
    let mut acc = 0i64;
    indptr.push(0);
    for c in &counts {
        acc += c;
        indptr.push(acc);
    }
    // Uniform columns, sorted per row.
    let mut indices: Vec<i64> = (0..nnz).map(|_| rng.below(COLS as u64) as i64).collect();
    for w in indptr.windows(2) {
        indices[w[0] as usize..w[1] as usize].sort_unstable();
    }
    let values: Vec<f64> = (0..nnz).map(|i| (i % 1000) as f64 * 0.5 + 1.0).collect();
    CsxMatrix::try_new(
        vec![rows, COLS],
        CompressedAxis::Row,
        indptr.into(),
        indices.into(),
        values.into(),
    )
    .expect("generated CSR matrix is valid")
}

/// The same matrix as an [`AnyTensor`].
pub fn csr_any(nnz: usize, seed: u64) -> AnyTensor {
    csr_f64_i64(nnz, seed).into()
}

/// "1e7" for 10_000_000, etc. (falls back to the plain number).
pub fn size_label(n: usize) -> String {
    let mut e = 0;
    let mut m = n;
    while m >= 10 && m.is_multiple_of(10) {
        m /= 10;
        e += 1;
    }
    if m == 1 && e > 0 {
        format!("1e{e}")
    } else {
        n.to_string()
    }
}

//! Deterministic CSR matrices for the Parquet benchmark (`benches/parquet.rs`):
//! f64 values uniform in [0, 1), int32 indptr and indices (what scipy.sparse uses
//! for these sizes), 10^6 x 10^6.
//!
//! * `uniform`: every entry in a uniformly random row and column;
//! * `power_law`: rows and columns drawn as `floor(n * u^4)` (density of index i
//!   proportional to i^(-3/4)): a few very long rows and popular columns, most
//!   rows short. Duplicates are merged, so nnz is a little under the target.

use arrow_sparse::{CompressedAxis, CsxMatrix};

#[path = "gen.rs"]
#[allow(dead_code)]
mod datagen;
pub use datagen::SplitMix64;

/// Rows and columns of both matrices.
pub const DIM: usize = 1_000_000;

fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn build(mut entries: Vec<(u32, u32)>, rng: &mut SplitMix64) -> CsxMatrix<f64, i32, i32> {
    entries.sort_unstable();
    entries.dedup();
    let mut indptr = vec![0i32; DIM + 1];
    for &(r, _) in &entries {
        indptr[r as usize + 1] += 1;
    }
    for i in 0..DIM {
        indptr[i + 1] += indptr[i];
    }
    let indices: Vec<i32> = entries.iter().map(|&(_, c)| c as i32).collect();
    let values: Vec<f64> = (0..entries.len()).map(|_| unit(rng)).collect();
    CsxMatrix::try_new(
        vec![DIM, DIM],
        CompressedAxis::Row,
        indptr.into(),
        indices.into(),
        values.into(),
    )
    .expect("generated CSR matrix is valid")
}

/// About `nnz` entries at uniformly random positions.
pub fn uniform(nnz: usize, seed: u64) -> CsxMatrix<f64, i32, i32> {
    let mut rng = SplitMix64::new(seed);
    let entries = (0..nnz)
        .map(|_| (rng.below(DIM as u64) as u32, rng.below(DIM as u64) as u32))
        .collect();
    build(entries, &mut rng)
}

/// About `nnz` entries with power-law row and column popularity.
pub fn power_law(nnz: usize, seed: u64) -> CsxMatrix<f64, i32, i32> {
    let mut rng = SplitMix64::new(seed);
    let skewed = |rng: &mut SplitMix64| {
        let u = unit(rng);
        ((DIM as f64 * u * u * u * u) as usize).min(DIM - 1) as u32
    };
    // duplicates (about 4%) concentrate in the popular corner: draw a little more
    let draw = nnz + nnz / 25;
    let entries = (0..draw)
        .map(|_| (skewed(&mut rng), skewed(&mut rng)))
        .collect();
    build(entries, &mut rng)
}

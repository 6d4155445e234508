//! Deterministic data for the kernel benchmarks, shared by `benches/kernels.rs` and
//! `examples/bench_kernels.rs` (included with `#[path]`; the includer must also
//! include `gen.rs` as `mod datagen`, whose SplitMix64 this uses).
//!
//! Sparsity patterns ([`Sparsity`]):
//! * **uniform**: the row (mode-0 coordinate) of every drawn entry is uniform.
//! * **power-law**: the row is drawn by inverting the CDF of the density
//!   `(x + 1)^-0.9` on `[0, rows)`: `x = (1 + u ((rows + 1)^0.1 - 1))^10 - 1`,
//!   row = `floor(x)`, `u` uniform in `[0, 1)`. Row `i` thus has weight
//!   `∫_i^{i+1} (x + 1)^-0.9 dx ≈ 1 / (i + 1.5)^0.9`, about `1 / (i + 1)^0.9`.
//!   At 10^6 rows, row 0 holds about 3.3% of the entries and the first 16384 rows
//!   (one parallel chunk of the kernels) about 55%.
//!
//! The other coordinates are uniform. Entries are drawn with replacement, then
//! sorted and deduplicated, so the tensors are canonical and `nnz` is slightly
//! below the requested count (power-law rows lose more to duplicates).
//!
//! Shapes for a requested count `n`:
//! * matrices: `n/10 x n/10` (10 entries per row on average; 10^6 x 10^6 at 10^7);
//! * 3-D tensors: a cube of density 1% (`(100 n)^(1/3)` per side, 1000^3 at 10^7);
//! * 4-D tensors: density 0.1% (`(1000 n)^(1/4)` per side, 316^4 at 10^7);
//! * dense 2-D: a square of `10 n` elements (10^4 x 10^4 at 10^7), `n` drawn
//!   entries (density at most 10%);
//! * dense 3-D: `4a x a x 2a` with `8 a^3 = 10 n` (928 x 232 x 464 at 10^7), so
//!   libarrow's CSF axis order (dimensions by increasing size) is `[1, 2, 0]`.
//!
//! Values are uniform in `[0.5, 1.5)`, never zero.

use super::datagen::SplitMix64;

/// How the rows (mode-0 coordinates) of the entries are distributed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sparsity {
    /// Uniform rows.
    Uniform,
    /// Row `i` with weight about `1 / (i + 1)^0.9`.
    PowerLaw,
}

impl Sparsity {
    pub const ALL: [Sparsity; 2] = [Sparsity::Uniform, Sparsity::PowerLaw];

    pub fn name(self) -> &'static str {
        match self {
            Sparsity::Uniform => "uniform",
            Sparsity::PowerLaw => "powerlaw",
        }
    }

    fn seed(self) -> u64 {
        match self {
            Sparsity::Uniform => 1,
            Sparsity::PowerLaw => 2,
        }
    }
}

/// The power-law exponent of the rows.
pub const ALPHA: f64 = 0.9;

/// Draws rows in `0..n` with the distribution of a [`Sparsity`].
pub struct RowSampler {
    sparsity: Sparsity,
    n: usize,
    /// `(n + 1)^(1 - ALPHA) - 1`
    span: f64,
}

impl RowSampler {
    pub fn new(sparsity: Sparsity, n: usize) -> Self {
        let span = ((n + 1) as f64).powf(1.0 - ALPHA) - 1.0;
        RowSampler { sparsity, n, span }
    }

    pub fn sample(&self, rng: &mut SplitMix64) -> usize {
        match self.sparsity {
            Sparsity::Uniform => rng.below(self.n as u64) as usize,
            Sparsity::PowerLaw => {
                let u = unit(rng);
                let x = (1.0 + u * self.span).powf(1.0 / (1.0 - ALPHA)) - 1.0;
                (x as usize).min(self.n - 1)
            }
        }
    }
}

/// Uniform in `[0, 1)`.
pub fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

fn value(rng: &mut SplitMix64) -> f64 {
    0.5 + unit(rng)
}

/// A canonical N-D tensor: coordinates row-major (`nnz x ndim`), sorted and unique.
pub struct Entries {
    pub shape: Vec<usize>,
    pub coords: Vec<i64>,
    pub values: Vec<f64>,
}

impl Entries {
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// Coordinate `d` of entry `k`.
    pub fn at(&self, k: usize, d: usize) -> usize {
        self.coords[k * self.ndim() + d] as usize
    }
}

/// `n` entries drawn into `shape` (mode 0 by `sparsity`, the others uniform),
/// sorted and deduplicated through their linear (row-major) offsets.
pub fn draw(shape: &[usize], n: usize, sparsity: Sparsity, seed: u64) -> Entries {
    let mut rng = SplitMix64::new(seed ^ (sparsity.seed() << 32));
    let rows = RowSampler::new(sparsity, shape[0]);
    let strides = row_major_strides(shape);
    let mut keys: Vec<u64> = (0..n)
        .map(|_| {
            let mut key = (rows.sample(&mut rng) * strides[0]) as u64;
            for (d, &s) in shape.iter().enumerate().skip(1) {
                key += rng.below(s as u64) * strides[d] as u64;
            }
            key
        })
        .collect();
    {
        use rayon::slice::ParallelSliceMut;
        keys.par_sort_unstable();
    }
    keys.dedup();
    let ndim = shape.len();
    let mut coords = Vec::with_capacity(keys.len() * ndim);
    for &key in &keys {
        let mut rem = key as usize;
        for &s in &strides {
            coords.push((rem / s) as i64);
            rem %= s;
        }
    }
    let values = (0..keys.len()).map(|_| value(&mut rng)).collect();
    Entries {
        shape: shape.to_vec(),
        coords,
        values,
    }
}

pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// Side of a matrix for a requested count (10 entries per row on average).
pub fn matrix_shape(n: usize) -> Vec<usize> {
    let side = (n / 10).max(16);
    vec![side, side]
}

/// 3-D (density 1%) and 4-D (density 0.1%) cubes.
pub fn tensor_shape(n: usize, ndim: usize) -> Vec<usize> {
    let density = match ndim {
        2 => 1e-5,
        3 => 1e-2,
        _ => 1e-3,
    };
    let side = ((n as f64 / density).powf(1.0 / ndim as f64)).round() as usize;
    vec![side.max(4); ndim]
}

/// Dense 2-D: `10 n` elements, square.
pub fn dense2_shape(n: usize) -> Vec<usize> {
    let side = ((10 * n) as f64).sqrt().round() as usize;
    vec![side.max(4); 2]
}

/// Dense 3-D: `4a x a x 2a` with `8 a^3 = 10 n`.
pub fn dense3_shape(n: usize) -> Vec<usize> {
    let a = ((10 * n) as f64 / 8.0).cbrt().round() as usize;
    let a = a.max(2);
    vec![4 * a, a, 2 * a]
}

/// A random permutation of `0..n` (Fisher-Yates).
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64::new(seed);
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// A row-major dense array holding `e`'s values (zeros elsewhere).
pub fn densify(e: &Entries) -> Vec<f64> {
    let size: usize = e.shape.iter().product();
    let strides = row_major_strides(&e.shape);
    let mut out = vec![0.0; size];
    for k in 0..e.nnz() {
        let off: usize = (0..e.ndim()).map(|d| e.at(k, d) * strides[d]).sum();
        out[off] = e.values[k];
    }
    out
}

/// The dimensions sorted by increasing size (libarrow's dense-to-CSF axis order).
pub fn argsort(shape: &[usize]) -> Vec<usize> {
    let mut o: Vec<usize> = (0..shape.len()).collect();
    o.sort_by_key(|&d| (shape[d], d));
    o
}

/// Dense operand values: `1 + (i % 17) / 16`.
///
/// Allocated with `arrow_sparse::buffer::zeroed_vec` and filled in place, as
/// numpy allocates the references' operand (huge pages from 4 MiB up): a kernel
/// gathering from a 10^6-element vector otherwise also measures TLB misses the
/// reference does not have.
pub fn operand(n: usize) -> Vec<f64> {
    let mut x = arrow_sparse::buffer::zeroed_vec::<f64>(n).expect("operand");
    x.iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v = 1.0 + (i % 17) as f64 / 16.0);
    x
}

/// Human size label (`1e7`), as `datagen::size_label`.
pub fn label(n: usize) -> String {
    super::datagen::size_label(n)
}

//! Random tensors in every format, value type and index type, shared by the
//! interop (libarrow) and Parquet round-trip tests. Include it with
//! `#[path = "common/corpus.rs"] mod corpus;` next to `mod common;`.
#![allow(dead_code)]

use arrow_sparse::EntryOrder;
use arrow_sparse::{
    AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, DenseTensor, Index, Value,
};
use half::f16;

use crate::common::Rng;

/// A value type the generator can draw: never zero.
pub trait Gen: Value {
    /// A random non-zero value.
    fn random(r: &mut Rng) -> Self;
}
macro_rules! gen_int {
    ($($t:ty),*) => {$(impl Gen for $t {
        fn random(r: &mut Rng) -> Self { let x = r.next() as $t; if x == 0 { 1 } else { x } }
    })*};
}
gen_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl Gen for f32 {
    fn random(r: &mut Rng) -> Self {
        (r.next() as i32) as f32 / 977.0 + 0.5
    }
}
impl Gen for f64 {
    fn random(r: &mut Rng) -> Self {
        f64::from_bits((r.next() >> 12) | 0x3FF0_0000_0000_0000)
            * if r.next() & 1 == 0 { -1.0 } else { 1.0 }
            * 1e-3
    }
}
impl Gen for f16 {
    fn random(r: &mut Rng) -> Self {
        f16::from_f32((r.below(2000) as f32 - 999.5) / 8.0)
    }
}

/// `nnz` random entries in `shape`: unique and sorted when `canonical`, else in
/// random order with a duplicate.
pub fn random_coo<V: Gen, I: Index>(
    r: &mut Rng,
    shape: &[usize],
    nnz: usize,
    canonical: bool,
    layout: CoordLayout,
) -> CooTensor<V, I> {
    let ndim = shape.len();
    let mut entries: Vec<(Vec<usize>, V)> = (0..nnz)
        .map(|_| (shape.iter().map(|&d| r.below(d)).collect(), V::random(r)))
        .collect();
    if canonical {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
    } else if nnz > 2 {
        entries[nnz / 2].0 = entries[0].0.clone();
    }
    let mut t = CooTensor::<V, I>::from_entries(shape.to_vec(), &entries).unwrap();
    if canonical {
        t = t.canonicalize().unwrap();
    }
    if layout == CoordLayout::ColumnMajor && t.nnz() > 1 {
        let col: Vec<I> = (0..ndim)
            .flat_map(|d| (0..t.nnz()).map(move |k| (d, k)))
            .map(|(d, k)| t.coords()[k * ndim + d])
            .collect();
        t = CooTensor::try_new(
            shape.to_vec(),
            CoordLayout::ColumnMajor,
            EntryOrder::from(t.is_canonical()),
            col.into(),
            t.values().clone(),
        )
        .unwrap();
    }
    t
}

/// `dim0, dim1, ...` when `named`, else no names.
pub fn names(ndim: usize, named: bool) -> Vec<String> {
    if named {
        (0..ndim).map(|d| format!("dim{d}")).collect()
    } else {
        vec![]
    }
}

/// What goes into the corpus beyond what Arrow C++ reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Only tensors that libarrow reads: one index type for indptr and indices,
    /// no uint64 indices, no empty dense tensors.
    Libarrow,
    /// Everything arrow-sparse stores (Parquet archives): also CSX with an int64
    /// indptr, CSF with a uint16 indptr, uint64 indices and empty dense tensors.
    All,
}

/// COO (1-5 dimensions, both layouts, canonical or not), CSR, CSC, CSF (2-5
/// dimensions, a random axis order) and nnz 0 in each, for one value and index type.
pub fn push_cases<V: Gen, I: Index>(r: &mut Rng, out: &mut Vec<AnyTensor>, reach: Reach) {
    let it = I::TYPE;
    let cap = (it.max_value() as usize).min(40);
    // libarrow checks index widths against array lengths: keep nnz below the max.
    let nnz = 20.min(it.max_value() as usize - 1);
    let named = r.next() & 1 == 0;
    for ndim in 1..=5 {
        let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(cap)).collect();
        let layout = if ndim % 2 == 0 {
            CoordLayout::ColumnMajor
        } else {
            CoordLayout::RowMajor
        };
        let t = random_coo::<V, I>(r, &shape, nnz, ndim != 3, layout);
        out.push(
            AnyTensor::from(t)
                .with_dim_names(names(ndim, named))
                .unwrap(),
        );
    }
    let shape = vec![1 + r.below(cap), 1 + r.below(cap)];
    let coo = random_coo::<V, I>(r, &shape, nnz, true, CoordLayout::RowMajor);
    for axis in [CompressedAxis::Row, CompressedAxis::Column] {
        let m = coo.to_csx::<I, I>(axis).unwrap();
        out.push(AnyTensor::from(m).with_dim_names(names(2, named)).unwrap());
        if reach == Reach::All {
            out.push(coo.to_csx::<I, i64>(axis).unwrap().into());
        }
    }
    for ndim in 2..=5 {
        let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(cap)).collect();
        let coo = random_coo::<V, I>(r, &shape, nnz, true, CoordLayout::RowMajor);
        let mut order: Vec<usize> = (0..ndim).collect();
        for i in (1..ndim).rev() {
            order.swap(i, r.below(i + 1));
        }
        out.push(
            AnyTensor::from(coo.to_csf::<I, I>(&order).unwrap())
                .with_dim_names(names(ndim, named))
                .unwrap(),
        );
        if reach == Reach::All && ndim == 3 {
            out.push(coo.to_csf::<I, u16>(&order).unwrap().into());
        }
    }
    // zero density: a random shape and (CSF) axis order with no entries
    let ndim = 2 + r.below(4);
    let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(cap)).collect();
    let mut order: Vec<usize> = (0..ndim).collect();
    order.rotate_left(r.below(ndim));
    let none = random_coo::<V, I>(r, &shape, 0, true, CoordLayout::RowMajor);
    out.push(none.to_csf::<I, I>(&order).unwrap().into());
    out.push(none.into());
    let empty = CooTensor::<V, I>::from_entries(vec![3, 4, 5], &[]).unwrap();
    out.push(empty.clone().into());
    out.push(empty.to_csf::<I, I>(&[1, 2, 0]).unwrap().into());
    let empty2 = CooTensor::<V, I>::from_entries(vec![3, 4], &[]).unwrap();
    for axis in [CompressedAxis::Row, CompressedAxis::Column] {
        out.push(empty2.to_csx::<I, I>(axis).unwrap().into());
    }
    if reach == Reach::All {
        // a sparse vector as 1-D CSF: one level, no indptr buffer (libarrow 26
        // reads no CSF of fewer than 2 dimensions)
        let extent = 1 + r.below(cap);
        let vector = random_coo::<V, I>(r, &[extent], nnz, true, CoordLayout::RowMajor);
        out.push(vector.to_csf::<I, u16>(&[0]).unwrap().into());
    }
}

/// `size` random values, about a third of them zeros.
fn third_zeros<V: Gen>(r: &mut Rng, size: usize) -> Vec<V> {
    (0..size)
        .map(|_| {
            if r.below(3) == 0 {
                V::ZERO
            } else {
                V::random(r)
            }
        })
        .collect()
}

/// Dense tensors of 1-5 dimensions, row- and column-major, a third of their
/// elements zeros, and one of zeros only (zero density).
pub fn push_dense<V: Gen>(r: &mut Rng, out: &mut Vec<AnyTensor>, reach: Reach) {
    for ndim in 1..=5 {
        let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(4)).collect();
        let size: usize = shape.iter().product();
        let vals: Vec<V> = third_zeros(r, size);
        let strides = if ndim % 2 == 0 {
            arrow_sparse::tensor::dense::column_major_strides(&shape)
        } else {
            arrow_sparse::tensor::dense::row_major_strides(&shape)
        };
        let t = DenseTensor::<V>::try_new_strided(shape, strides, vals.into()).unwrap();
        out.push(
            AnyTensor::from(t)
                .with_dim_names(names(ndim, ndim > 2))
                .unwrap(),
        );
    }
    let shape: Vec<usize> = (0..1 + r.below(5)).map(|_| 1 + r.below(4)).collect();
    let zeros = vec![V::ZERO; shape.iter().product()];
    out.push(
        DenseTensor::<V>::try_new(shape, zeros.into())
            .unwrap()
            .into(),
    );
    if reach == Reach::All {
        let empty = DenseTensor::<V>::try_new(vec![2, 0, 3], Vec::new().into()).unwrap();
        out.push(empty.into());
    }
}

/// [`push_cases`] for every index type (uint64 only with [`Reach::All`]), then
/// [`push_dense`], for one value type.
pub fn push_value_type<V: Gen>(r: &mut Rng, out: &mut Vec<AnyTensor>, reach: Reach) {
    push_cases::<V, i8>(r, out, reach);
    push_cases::<V, i16>(r, out, reach);
    push_cases::<V, i32>(r, out, reach);
    push_cases::<V, i64>(r, out, reach);
    push_cases::<V, u8>(r, out, reach);
    push_cases::<V, u16>(r, out, reach);
    push_cases::<V, u32>(r, out, reach);
    if reach == Reach::All {
        push_cases::<V, u64>(r, out, reach);
    }
    push_dense::<V>(r, out, reach);
}

/// [`push_value_type`] for all 11 value types, from one seed.
pub fn every_type(seed: u64, reach: Reach) -> Vec<AnyTensor> {
    let mut r = Rng(seed);
    let mut all = Vec::new();
    push_value_type::<i8>(&mut r, &mut all, reach);
    push_value_type::<i16>(&mut r, &mut all, reach);
    push_value_type::<i32>(&mut r, &mut all, reach);
    push_value_type::<i64>(&mut r, &mut all, reach);
    push_value_type::<u8>(&mut r, &mut all, reach);
    push_value_type::<u16>(&mut r, &mut all, reach);
    push_value_type::<u32>(&mut r, &mut all, reach);
    push_value_type::<u64>(&mut r, &mut all, reach);
    push_value_type::<f16>(&mut r, &mut all, reach);
    push_value_type::<f32>(&mut r, &mut all, reach);
    push_value_type::<f64>(&mut r, &mut all, reach);
    all
}

/// A random view of a random dense tensor (#17): ndim 1-4, extents 1-5, a row- or
/// column-major base with about a third zeros, then one to three reversals and
/// stepped slices (steps of either sign, numpy bounds, possibly empty): negative
/// strides and offsets into the base's buffer.
pub fn strided_view<V: Gen>(r: &mut Rng) -> DenseTensor<V> {
    let ndim = 1 + r.below(4);
    let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(5)).collect();
    let size: usize = shape.iter().product();
    let vals: Vec<V> = third_zeros(r, size);
    let strides = if r.below(2) == 0 {
        arrow_sparse::tensor::dense::row_major_strides(&shape)
    } else {
        arrow_sparse::tensor::dense::column_major_strides(&shape)
    };
    let mut t = DenseTensor::<V>::try_new_strided(shape, strides, vals.into()).unwrap();
    for _ in 0..1 + r.below(3) {
        let d = r.below(ndim);
        t = if r.below(2) == 0 {
            t.reverse(d).unwrap()
        } else {
            let n = t.shape()[d];
            let step = [1, 2, 3, -1, -2, -3][r.below(6)];
            // None, or a bound in -n-1..=n+1 (past both ends: clipped)
            let bound = |r: &mut Rng| {
                (r.below(4) != 0).then(|| r.below(2 * n + 3) as isize - n as isize - 1)
            };
            let (start, stop) = (bound(r), bound(r));
            t.slice(d, start, stop, step).unwrap()
        };
    }
    t
}

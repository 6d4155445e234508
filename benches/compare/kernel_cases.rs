//! The kernel benchmark cases, shared by `benches/kernels.rs` (criterion) and
//! `examples/bench_kernels.rs` (side by side with scipy and libarrow). Included with
//! `#[path]` next to `gen.rs` (as `mod datagen`) and `kernel_data.rs` (as `mod data`).
//!
//! [`Shared`] holds the index-independent data of one (size, sparsity) pair,
//! [`Typed`] the tensors built from it with one index type (indptr = indices type),
//! and [`cases`] lists one [`Case`] per kernel variant: an id (`family/kernel/variant`),
//! the bytes it moves (for GB/s) and its references in the other systems.
//! Everything a case needs is built beforehand; the timed closure runs the kernel
//! only (its output is dropped outside the timed region).

use arrow_sparse::{EntryOrder, TensorOptions};
use std::any::Any;

use arrow_sparse::dims::DimMap;
use arrow_sparse::kernels::elementwise::BinaryOp;
use arrow_sparse::kernels::{convert, csf, elementwise, reduce, spmv};
use arrow_sparse::{
    AnyDm, AnyTensor, CompressedAxis, CooTensor, CoordLayout, CsfTensor, CsxMatrix, DenseTensor,
    GcsTensor, Index,
};

use super::data::{self, Entries, Sparsity};

/// MTTKRP rank.
pub const RANK: usize = 16;
/// Columns of the dense SpMM operand.
pub const SPMM_N: usize = 16;
/// Columns of the narrow SpMV matrix (a 256 KiB f64 operand).
pub const NARROW_COLS: usize = 1 << 15;

/// Scale factor of `elementwise/scale`.
pub const ALPHA: f64 = 2.5;

/// Index-independent data of one (requested size, sparsity).
pub struct Shared {
    pub n: usize,
    pub sparsity: Sparsity,
    /// The matrix A and a second matrix B of the same shape (element-wise ops).
    pub m: Entries,
    pub m2: Entries,
    /// A matrix with as many entries as A but only [`NARROW_COLS`] columns, so
    /// that the SpMV operand stays in cache: SpMV then streams the matrix and
    /// measures the bandwidth share (A's 10^6-column operand makes SpMV wait on
    /// random gathers instead).
    pub mn: Entries,
    /// SpMV operand of `mn`.
    pub xn: Vec<f64>,
    /// The order of A's entries in its shuffled (non-canonical) COO.
    pub perm: Vec<usize>,
    pub t3: Entries,
    pub t4: Entries,
    /// Non-zeros of the dense 2-D and 3-D tensors.
    pub d2: Entries,
    pub d3: Entries,
    pub dense2: DenseTensor<f64>,
    pub dense3: DenseTensor<f64>,
    /// SpMV operand (length = columns of A), SpMM operand (columns x SPMM_N).
    pub x: Vec<f64>,
    pub b: DenseTensor<f64>,
    /// GCS / DM SpMV operand over the column dimensions [1, 2] of `t3`.
    pub x3: DenseTensor<f64>,
    /// MTTKRP factor matrices (`shape[d] x RANK`) of A, `t3`, `t4`.
    pub f2: Vec<DenseTensor<f64>>,
    pub f3: Vec<DenseTensor<f64>>,
    pub f4: Vec<DenseTensor<f64>>,
    /// TTV vector (long enough for every mode of `t3` and `t4`).
    pub vt: Vec<f64>,
}

/// Factor `d` of a tensor: `F[i, r] = 1 + ((7 i + 3 r + d) % 13) / 26`.
fn factors(shape: &[usize]) -> Vec<DenseTensor<f64>> {
    shape
        .iter()
        .enumerate()
        .map(|(d, &len)| {
            let v: Vec<f64> = (0..len * RANK)
                .map(|k| 1.0 + ((7 * (k / RANK) + 3 * (k % RANK) + d) % 13) as f64 / 26.0)
                .collect();
            DenseTensor::try_new(vec![len, RANK], v.into()).expect("factor")
        })
        .collect()
}

impl Shared {
    /// Draw every data set for about `n` non-zeros (seeds are fixed).
    pub fn new(n: usize, sparsity: Sparsity) -> Self {
        let m = data::draw(&data::matrix_shape(n), n, sparsity, 11);
        let m2 = data::draw(&data::matrix_shape(n), n, sparsity, 12);
        let mn = data::draw(&[data::matrix_shape(n)[0], NARROW_COLS], n, sparsity, 18);
        let xn = data::operand(NARROW_COLS);
        let perm = data::permutation(m.nnz(), 13);
        let t3 = data::draw(&data::tensor_shape(n, 3), n, sparsity, 14);
        let t4 = data::draw(&data::tensor_shape(n, 4), n, sparsity, 15);
        let d2 = data::draw(&data::dense2_shape(n), n, sparsity, 16);
        let d3 = data::draw(&data::dense3_shape(n), n, sparsity, 17);
        let dense = |e: &Entries| {
            DenseTensor::try_new(e.shape.clone(), numpy_like(data::densify(e)).into())
                .expect("dense")
        };
        let (dense2, dense3) = (dense(&d2), dense(&d3));
        let cols = m.shape[1];
        let x = data::operand(cols);
        let b =
            DenseTensor::try_new(vec![cols, SPMM_N], data::operand(cols * SPMM_N).into()).unwrap();
        let x3 = DenseTensor::try_new(
            vec![t3.shape[1], t3.shape[2]],
            data::operand(t3.shape[1] * t3.shape[2]).into(),
        )
        .unwrap();
        let (f2, f3, f4) = (factors(&m.shape), factors(&t3.shape), factors(&t4.shape));
        let vt = data::operand(t3.shape.iter().chain(&t4.shape).copied().max().unwrap_or(0));
        Shared {
            n,
            sparsity,
            m,
            m2,
            mn,
            xn,
            perm,
            t3,
            t4,
            d2,
            d3,
            dense2,
            dense3,
            x,
            b,
            x3,
            f2,
            f3,
            f4,
            vt,
        }
    }

    /// The GCS / DM map of `t3`: rows = dimension 0, columns = dimensions 1, 2.
    pub fn map3(&self) -> DimMap {
        DimMap::try_new(self.t3.shape.clone(), vec![0, 1, 2], vec![1]).expect("map")
    }
}

fn cast<I: Index>(v: &[i64]) -> Vec<I> {
    numpy_like(v.iter().map(|&x| I::usize_as(x as usize)).collect())
}

/// `v` copied into memory allocated the way numpy allocates the arrays scipy
/// works on (fresh zeroed pages, advised to use transparent huge pages from
/// 4 MiB on Linux: [`arrow_sparse::buffer::zeroed_vec`]), so that the inputs
/// of both sides live in the same kind of pages. (On 4 KiB pages the
/// streaming kernels lose a few percent to TLB misses that scipy's inputs do
/// not have.) Our kernels' outputs, used as inputs of later cases, already are.
fn numpy_like<T: arrow_buffer::ArrowNativeType>(v: Vec<T>) -> Vec<T> {
    let mut out = arrow_sparse::buffer::zeroed_vec::<T>(v.len()).expect("input buffer");
    out.copy_from_slice(&v);
    out
}

/// Canonical row-major COO of `e`.
pub fn coo_canonical<I: Index>(e: &Entries) -> CooTensor<f64, I> {
    CooTensor::try_new(
        e.shape.clone(),
        CoordLayout::RowMajor,
        EntryOrder::Canonical,
        cast::<I>(&e.coords).into(),
        numpy_like(e.values.clone()).into(),
    )
    .expect("canonical COO")
}

/// Canonical COO of a matrix with column-major coordinates (all rows, then all
/// columns: scipy's layout).
fn coo_column_major<I: Index>(e: &Entries) -> CooTensor<f64, I> {
    let nnz = e.nnz();
    let mut c: Vec<I> = Vec::with_capacity(2 * nnz);
    c.extend((0..nnz).map(|k| I::usize_as(e.at(k, 0))));
    c.extend((0..nnz).map(|k| I::usize_as(e.at(k, 1))));
    CooTensor::try_new(
        e.shape.clone(),
        CoordLayout::ColumnMajor,
        EntryOrder::Canonical,
        numpy_like(c).into(),
        numpy_like(e.values.clone()).into(),
    )
    .expect("column-major COO")
}

/// Row-major COO of `e` with the entries in the order `perm` (not canonical).
fn coo_shuffled<I: Index>(e: &Entries, perm: &[usize]) -> CooTensor<f64, I> {
    let n = e.ndim();
    let mut c: Vec<I> = Vec::with_capacity(n * perm.len());
    for &k in perm {
        c.extend((0..n).map(|d| I::usize_as(e.at(k, d))));
    }
    let v: Vec<f64> = perm.iter().map(|&k| e.values[k]).collect();
    CooTensor::try_new(
        e.shape.clone(),
        CoordLayout::RowMajor,
        EntryOrder::Any,
        numpy_like(c).into(),
        numpy_like(v).into(),
    )
    .expect("shuffled COO")
}

/// CSR of a canonical matrix, built from its buffers.
pub fn csr<I: Index>(e: &Entries) -> CsxMatrix<f64, I, I> {
    let rows = e.shape[0];
    let mut indptr = vec![0usize; rows + 1];
    for k in 0..e.nnz() {
        indptr[e.at(k, 0) + 1] += 1;
    }
    for r in 0..rows {
        indptr[r + 1] += indptr[r];
    }
    let indptr: Vec<I> = numpy_like(indptr.into_iter().map(I::usize_as).collect());
    let indices: Vec<I> = numpy_like((0..e.nnz()).map(|k| I::usize_as(e.at(k, 1))).collect());
    CsxMatrix::try_new(
        e.shape.clone(),
        CompressedAxis::Row,
        indptr.into(),
        indices.into(),
        numpy_like(e.values.clone()).into(),
    )
    .expect("CSR")
}

/// The tensor matricized along `mode` (rows = the mode, columns = the other modes
/// linearized row-major), as the CSR matrix `csf::mttkrp_csr` expects.
pub fn matricize<I: Index>(e: &Entries, mode: usize) -> CsxMatrix<f64, I, I> {
    let others: Vec<usize> = (0..e.ndim()).filter(|&d| d != mode).collect();
    let cols: usize = others.iter().map(|&d| e.shape[d]).product();
    let mut c: Vec<i64> = Vec::with_capacity(2 * e.nnz());
    for k in 0..e.nnz() {
        let col = others
            .iter()
            .fold(0, |acc, &d| acc * e.shape[d] + e.at(k, d));
        c.extend([e.at(k, mode) as i64, col as i64]);
    }
    let flat = CooTensor::<f64, I>::try_new(
        vec![e.shape[mode], cols],
        CoordLayout::RowMajor,
        EntryOrder::Any,
        cast::<I>(&c).into(),
        numpy_like(e.values.clone()).into(),
    )
    .expect("matricized COO");
    convert::coo_to_csx::<f64, I, I>(&flat, CompressedAxis::Row).expect("matricized CSR")
}

/// The tensors of one [`Shared`] with index type `I`.
pub struct Typed<'s, I: Index> {
    pub s: &'s Shared,
    pub coo: CooTensor<f64, I>,
    pub coo_cm: CooTensor<f64, I>,
    pub coo_shuf: CooTensor<f64, I>,
    pub csr: CsxMatrix<f64, I, I>,
    /// CSR of `mn`.
    pub csr_n: CsxMatrix<f64, I, I>,
    pub csc: CsxMatrix<f64, I, I>,
    pub coo_any: AnyTensor,
    pub coo2_any: AnyTensor,
    /// CSR of B (element-wise CSR + CSR).
    pub csr2_any: AnyTensor,
    pub csr_any: AnyTensor,
    /// A's pattern with every value times (1 + 1e-12) (`allclose`).
    pub csr_near_any: AnyTensor,
    pub csf2: CsfTensor<f64, I, I>,
    pub coo3: CooTensor<f64, I>,
    pub coo3_any: AnyTensor,
    pub csf3: CsfTensor<f64, I, I>,
    /// `t3` matricized along modes 0 and 2.
    pub mat3: [CsxMatrix<f64, I, I>; 2],
    pub gcs3: GcsTensor<f64, I, I>,
    pub dm3: AnyDm,
    pub coo4: CooTensor<f64, I>,
    pub csf4: CsfTensor<f64, I, I>,
    /// `t4` matricized along modes 0 and 3.
    pub mat4: [CsxMatrix<f64, I, I>; 2],
}

impl<'s, I: Index> Typed<'s, I> {
    pub fn new(s: &'s Shared) -> Self {
        let coo = coo_canonical::<I>(&s.m);
        let csr = csr::<I>(&s.m);
        let csc = convert::transpose_csx(&csr).expect("CSC");
        let near: Vec<f64> = s.m.values.iter().map(|v| v * (1.0 + 1e-12)).collect();
        let csr_near = CsxMatrix::<f64, I, I>::try_new_with(
            s.m.shape.clone(),
            CompressedAxis::Row,
            csr.indptr().clone(),
            csr.indices().clone(),
            numpy_like(near).into(),
            &TensorOptions::trusted(),
        )
        .expect("CSR near");
        let csf2 = convert::coo_to_csf(&coo, &[0, 1]).expect("CSF 2-D");
        let coo3 = coo_canonical::<I>(&s.t3);
        let csf3 = convert::coo_to_csf(&coo3, &[0, 1, 2]).expect("CSF 3-D");
        let gcs3 =
            GcsTensor::<f64, I, I>::from_coo(&coo3, s.map3(), CompressedAxis::Row).expect("GCS");
        let dm3 = AnyDm::try_new(
            s.map3(),
            gcs3.matrix().clone().into(),
            &TensorOptions::default(),
        )
        .expect("DM");
        let coo4 = coo_canonical::<I>(&s.t4);
        let csf4 = convert::coo_to_csf(&coo4, &[0, 1, 2, 3]).expect("CSF 4-D");
        Typed {
            s,
            coo_cm: coo_column_major::<I>(&s.m),
            coo_shuf: coo_shuffled::<I>(&s.m, &s.perm),
            coo_any: coo.clone().into(),
            coo2_any: coo_canonical::<I>(&s.m2).into(),
            csr2_any: self::csr::<I>(&s.m2).into(),
            csr_any: csr.clone().into(),
            csr_near_any: csr_near.into(),
            coo,
            csr,
            csr_n: self::csr::<I>(&s.mn),
            csc,
            csf2,
            coo3_any: coo3.clone().into(),
            coo3,
            csf3,
            mat3: [matricize::<I>(&s.t3, 0), matricize::<I>(&s.t3, 2)],
            gcs3,
            dm3,
            coo4,
            csf4,
            mat4: [matricize::<I>(&s.t4, 0), matricize::<I>(&s.t4, 3)],
        }
    }
}

/// Where a reference timing comes from.
#[derive(Clone, Copy, Debug)]
pub enum System {
    /// `benches/compare/kernels_scipy.py`, operation `op`.
    Scipy,
    /// pydata/sparse, served by the same script (operation `op`, "pyd_...").
    Pydata,
    /// `arrow-sparse-peer bench-convert` on dense data set `op` ("d2:coo", ...).
    Libarrow,
    /// Another case of this list, by id (the CSR-based MTTKRP).
    Ours,
}

/// A reference measurement of the same work in another system.
#[derive(Clone, Copy, Debug)]
pub struct Ref {
    pub system: System,
    pub op: &'static str,
    /// What differs from ours, printed under the table.
    pub note: &'static str,
}

const fn scipy(op: &'static str, note: &'static str) -> Ref {
    Ref {
        system: System::Scipy,
        op,
        note,
    }
}

const fn pydata(op: &'static str, note: &'static str) -> Ref {
    Ref {
        system: System::Pydata,
        op,
        note,
    }
}

const fn libarrow(op: &'static str) -> Ref {
    Ref {
        system: System::Libarrow,
        op,
        note: "",
    }
}

const fn ours(op: &'static str) -> Ref {
    Ref {
        system: System::Ours,
        op,
        note: "",
    }
}

/// The timed closure: runs the kernel, returns its output (dropped untimed).
pub type Run<'a> = Box<dyn Fn() -> Box<dyn Any> + Sync + 'a>;

/// One kernel variant on one data set.
pub struct Case<'a> {
    /// `family/kernel/variant`.
    pub id: &'static str,
    /// Bytes of the buffers the kernel reads and writes (see `benches/RESULTS.md`).
    pub bytes: usize,
    pub refs: Vec<Ref>,
    pub run: Run<'a>,
}

fn case<'a, T: 'static>(
    id: &'static str,
    bytes: usize,
    refs: Vec<Ref>,
    f: impl Fn() -> T + Sync + 'a,
) -> Case<'a> {
    Case {
        id,
        bytes,
        refs,
        run: Box::new(move || Box::new(f()) as Box<dyn Any>),
    }
}

/// Bytes of a COO tensor (f64 values).
pub fn coo_bytes(nnz: usize, ndim: usize, iw: usize) -> usize {
    nnz * (8 + ndim * iw)
}

/// Bytes of a CSR / CSC matrix with `major` compressed rows (f64 values).
pub fn csx_bytes(nnz: usize, major: usize, iw: usize) -> usize {
    nnz * (8 + iw) + (major + 1) * iw
}

fn csf_bytes<I: Index>(t: &CsfTensor<f64, I, I>) -> usize {
    let iw = std::mem::size_of::<I>();
    let idx: usize = t.indices().iter().map(|b| b.len()).sum();
    let ptr: usize = t.indptr().iter().map(|b| b.len()).sum();
    (idx + ptr) * iw + 8 * t.nnz()
}

/// MTTKRP traffic: the tensor (as COO), the other modes' factors and the output
/// (as large as the mode's own factor would be).
fn mttkrp_bytes(e: &Entries, iw: usize) -> usize {
    coo_bytes(e.nnz(), e.ndim(), iw) + e.shape.iter().sum::<usize>() * RANK * 8
}

/// Every case on one typed data set.
pub fn cases<'a, I: Index>(t: &'a Typed<'a, I>) -> Vec<Case<'a>> {
    let s = t.s;
    let iw = std::mem::size_of::<I>();
    let (nm, rows, cols) = (s.m.nnz(), s.m.shape[0], s.m.shape[1]);
    let coo2 = coo_bytes(nm, 2, iw);
    let csr_b = csx_bytes(nm, rows, iw);
    let csc_b = csx_bytes(nm, cols, iw);
    let (n3, n4) = (s.t3.nnz(), s.t4.nnz());
    let sh3 = &s.t3.shape;
    let dense2_b = 8 * s.dense2.values().len();
    let dense3_b = 8 * s.dense3.values().len();
    let (nd2, nd3) = (s.d2.nnz(), s.d3.nnz());
    let order3 = data::argsort(&s.d3.shape);
    let gcs_spmv_b = n3 * (8 + iw) + (sh3[0] + 1) * iw + 8 * (sh3[0] + sh3[1] * sh3[2]);
    let canonical_note = "scipy: has_canonical_format set, so no duplicate summing";
    vec![
        // ---------------------------------------------------------------- convert
        case(
            "convert/coo_to_csr/canonical",
            coo2 + csr_b,
            vec![
                scipy("tocsr_canon", canonical_note),
                pydata("pyd_coo_to_gcxs", "pydata: sorted COO -> GCXS (its CSR)"),
            ],
            || convert::coo_to_csx::<f64, I, I>(&t.coo, CompressedAxis::Row).unwrap(),
        ),
        case(
            "convert/coo_to_csr/canonical_colmajor",
            coo2 + csr_b,
            vec![scipy("tocsr_canon", canonical_note)],
            || convert::coo_to_csx::<f64, I, I>(&t.coo_cm, CompressedAxis::Row).unwrap(),
        ),
        case(
            "convert/coo_to_csr/shuffled",
            coo2 + csr_b,
            vec![
                scipy(
                    "tocsr_shuffled",
                    "scipy: flag unset, so it also sorts the indices and sums duplicates",
                ),
                scipy(
                    "tocsr_shuffled_nosort",
                    "scipy: has_canonical_format forced, counting sort only (as ours)",
                ),
            ],
            || convert::coo_to_csx::<f64, I, I>(&t.coo_shuf, CompressedAxis::Row).unwrap(),
        ),
        case(
            "convert/coo_to_csc/canonical",
            coo2 + csc_b,
            vec![scipy("tocsc_canon", canonical_note)],
            || convert::coo_to_csx::<f64, I, I>(&t.coo, CompressedAxis::Column).unwrap(),
        ),
        case(
            "convert/transpose_csx/csr_to_csc",
            csr_b + csc_b,
            vec![
                scipy("csr_tocsc", ""),
                pydata("pyd_gcxs_tocsc", "pydata: GCXS.change_compressed_axes([1])"),
            ],
            || convert::transpose_csx(&t.csr).unwrap(),
        ),
        case(
            "convert/transpose_csx/csc_to_csr",
            csr_b + csc_b,
            vec![scipy("csc_tocsr", "")],
            || convert::transpose_csx(&t.csc).unwrap(),
        ),
        case(
            "convert/canonicalize/shuffled",
            2 * coo2,
            vec![scipy(
                "sum_duplicates",
                "scipy: coo.sum_duplicates() on a fresh copy (lexsort + reduceat)",
            )],
            || convert::canonicalize(&t.coo_shuf).unwrap(),
        ),
        case(
            "convert/coo_to_csf/3d_natural",
            coo_bytes(n3, 3, iw) + csf_bytes(&t.csf3),
            vec![],
            || convert::coo_to_csf::<f64, I, I>(&t.coo3, &[0, 1, 2]).unwrap(),
        ),
        case(
            "convert/coo_to_csf/3d_order210",
            coo_bytes(n3, 3, iw) + csf_bytes(&t.csf3),
            vec![],
            || convert::coo_to_csf::<f64, I, I>(&t.coo3, &[2, 1, 0]).unwrap(),
        ),
        case(
            "convert/coo_to_csf/4d_natural",
            coo_bytes(n4, 4, iw) + csf_bytes(&t.csf4),
            vec![],
            || convert::coo_to_csf::<f64, I, I>(&t.coo4, &[0, 1, 2, 3]).unwrap(),
        ),
        case(
            "convert/to_gcs/3d",
            coo_bytes(n3, 3, iw) + csx_bytes(n3, sh3[0], iw),
            vec![scipy(
                "coo3_reshape_tocsr",
                "scipy: 3-D coo_array.reshape((d0, d1*d2)).tocsr()",
            )],
            || {
                t.coo3_any
                    .to_gcs(s.map3(), CompressedAxis::Row, I::TYPE)
                    .unwrap()
            },
        ),
        case(
            "convert/dense_to_coo/2d",
            dense2_b + coo_bytes(nd2, 2, iw),
            vec![
                libarrow("d2:coo"),
                scipy("dense2_to_coo", "scipy: coo_array(ndarray), int32 indices"),
                pydata(
                    "pyd_dense2_to_coo",
                    "pydata: COO.from_numpy, int64 coordinates",
                ),
            ],
            || convert::dense_to_coo::<f64, I>(&s.dense2).unwrap(),
        ),
        case(
            "convert/dense_to_csr/2d",
            dense2_b + csx_bytes(nd2, s.d2.shape[0], iw),
            vec![
                libarrow("d2:csr"),
                scipy("dense2_to_csr", "scipy: csr_array(ndarray), int32 indices"),
            ],
            || convert::dense_to_csx::<f64, I, I>(&s.dense2, CompressedAxis::Row).unwrap(),
        ),
        case(
            "convert/dense_to_coo/3d",
            dense3_b + coo_bytes(nd3, 3, iw),
            vec![libarrow("d3:coo")],
            || convert::dense_to_coo::<f64, I>(&s.dense3).unwrap(),
        ),
        case(
            "convert/dense_to_csf/3d_libarrow_order",
            dense3_b + coo_bytes(nd3, 3, iw),
            vec![libarrow("d3:csf")],
            move || convert::dense_to_csf::<f64, I, I>(&s.dense3, &order3).unwrap(),
        ),
        case(
            "convert/dense_to_csf/3d_natural",
            dense3_b + coo_bytes(nd3, 3, iw),
            vec![],
            || convert::dense_to_csf::<f64, I, I>(&s.dense3, &[0, 1, 2]).unwrap(),
        ),
        // ---------------------------------------------------------------- SpMV / SpMM
        case(
            "spmv/spmv_csx/csr",
            csr_b + 8 * (rows + cols),
            vec![scipy("csr_matvec", ""), pydata("pyd_gcxs_matvec", "")],
            || spmv::spmv_csx(&t.csr, &s.x).unwrap(),
        ),
        case(
            "spmv/spmv_csx/csr_narrow",
            csx_bytes(s.mn.nnz(), s.mn.shape[0], iw) + 8 * (s.mn.shape[0] + NARROW_COLS),
            vec![
                scipy("csr_narrow_matvec", ""),
                pydata("pyd_gcxs_narrow_matvec", ""),
            ],
            || spmv::spmv_csx(&t.csr_n, &s.xn).unwrap(),
        ),
        case(
            "spmv/spmv_csx/csc",
            csc_b + 8 * (rows + cols),
            vec![scipy("csc_matvec", "")],
            || spmv::spmv_csx(&t.csc, &s.x).unwrap(),
        ),
        case(
            "spmv/spmv_coo/canonical",
            coo2 + 8 * (rows + cols),
            vec![scipy("coo_matvec", ""), pydata("pyd_coo_matvec", "")],
            || spmv::spmv_coo(&t.coo, &s.x).unwrap(),
        ),
        case(
            "spmv/spmv_gcs/3d",
            gcs_spmv_b,
            vec![scipy("red_matvec", "scipy: the reduced CSR matrix @ x")],
            || spmv::spmv_gcs(&t.gcs3, &s.x3).unwrap(),
        ),
        case(
            "spmv/spmv_dm/3d",
            gcs_spmv_b,
            vec![scipy("red_matvec", "scipy: the reduced CSR matrix @ x")],
            || spmv::spmv_dm(&t.dm3, &s.x3).unwrap(),
        ),
        case(
            "spmv/spmm_csx/csr_n16",
            csr_b + 8 * SPMM_N * (rows + cols),
            vec![scipy("csr_matmat", ""), pydata("pyd_gcxs_matmat", "")],
            || spmv::spmm_csx(&t.csr, &s.b).unwrap(),
        ),
        case(
            "spmv/spmm_csx/csc_n16",
            csc_b + 8 * SPMM_N * (rows + cols),
            vec![scipy("csc_matmat", "")],
            || spmv::spmm_csx(&t.csc, &s.b).unwrap(),
        ),
        // ---------------------------------------------------------------- CSF
        case(
            "csf/mttkrp/2d_mode0",
            mttkrp_bytes(&s.m, iw),
            vec![ours("csf/mttkrp_csr/2d_mode0")],
            || csf::mttkrp(&t.csf2, 0, &s.f2).unwrap(),
        ),
        case(
            "csf/mttkrp_csr/2d_mode0",
            mttkrp_bytes(&s.m, iw),
            vec![],
            || csf::mttkrp_csr(&t.csr, &s.m.shape, 0, &s.f2).unwrap(),
        ),
        case(
            "csf/mttkrp/3d_mode0",
            mttkrp_bytes(&s.t3, iw),
            vec![ours("csf/mttkrp_csr/3d_mode0")],
            || csf::mttkrp(&t.csf3, 0, &s.f3).unwrap(),
        ),
        case(
            "csf/mttkrp_csr/3d_mode0",
            mttkrp_bytes(&s.t3, iw),
            vec![],
            || csf::mttkrp_csr(&t.mat3[0], sh3, 0, &s.f3).unwrap(),
        ),
        case(
            "csf/mttkrp/3d_mode2",
            mttkrp_bytes(&s.t3, iw),
            vec![ours("csf/mttkrp_csr/3d_mode2")],
            || csf::mttkrp(&t.csf3, 2, &s.f3).unwrap(),
        ),
        case(
            "csf/mttkrp_csr/3d_mode2",
            mttkrp_bytes(&s.t3, iw),
            vec![],
            || csf::mttkrp_csr(&t.mat3[1], sh3, 2, &s.f3).unwrap(),
        ),
        case(
            "csf/mttkrp/4d_mode0",
            mttkrp_bytes(&s.t4, iw),
            vec![ours("csf/mttkrp_csr/4d_mode0")],
            || csf::mttkrp(&t.csf4, 0, &s.f4).unwrap(),
        ),
        case(
            "csf/mttkrp_csr/4d_mode0",
            mttkrp_bytes(&s.t4, iw),
            vec![],
            || csf::mttkrp_csr(&t.mat4[0], &s.t4.shape, 0, &s.f4).unwrap(),
        ),
        case(
            "csf/mttkrp/4d_mode3",
            mttkrp_bytes(&s.t4, iw),
            vec![ours("csf/mttkrp_csr/4d_mode3")],
            || csf::mttkrp(&t.csf4, 3, &s.f4).unwrap(),
        ),
        case(
            "csf/mttkrp_csr/4d_mode3",
            mttkrp_bytes(&s.t4, iw),
            vec![],
            || csf::mttkrp_csr(&t.mat4[1], &s.t4.shape, 3, &s.f4).unwrap(),
        ),
        case(
            "csf/ttv/3d_mode2",
            csf_bytes(&t.csf3) + 8 * sh3[2],
            vec![
                scipy("ttv3_mode2", "scipy: the (d0*d1) x d2 CSR matrix @ v"),
                pydata("pyd_ttv3_mode2", "pydata: tensordot(COO, v, mode 2)"),
            ],
            || csf::ttv(&t.csf3, 2, &s.vt[..sh3[2]]).unwrap(),
        ),
        case(
            "csf/ttv/3d_mode0",
            csf_bytes(&t.csf3) + 8 * sh3[0],
            vec![
                scipy("ttv3_mode0", "scipy: v @ the d0 x (d1*d2) CSR matrix"),
                pydata("pyd_ttv3_mode0", "pydata: tensordot(COO, v, mode 0)"),
            ],
            || csf::ttv(&t.csf3, 0, &s.vt[..sh3[0]]).unwrap(),
        ),
        // the same products with a dense result, as scipy's `v @ A` / `A @ v` give
        case(
            "csf/ttv_dense/3d_mode2",
            csf_bytes(&t.csf3) + 8 * sh3[2],
            vec![scipy(
                "ttv3_mode2",
                "scipy: the (d0*d1) x d2 CSR matrix @ v",
            )],
            || csf::ttv_dense(&t.csf3, 2, &s.vt[..sh3[2]]).unwrap(),
        ),
        case(
            "csf/ttv_dense/3d_mode0",
            csf_bytes(&t.csf3) + 8 * sh3[0],
            vec![scipy(
                "ttv3_mode0",
                "scipy: v @ the d0 x (d1*d2) CSR matrix",
            )],
            || csf::ttv_dense(&t.csf3, 0, &s.vt[..sh3[0]]).unwrap(),
        ),
        case(
            "csf/ttv/4d_mode3",
            csf_bytes(&t.csf4) + 8 * s.t4.shape[3],
            vec![],
            || csf::ttv(&t.csf4, 3, &s.vt[..s.t4.shape[3]]).unwrap(),
        ),
        // ---------------------------------------------------------------- element-wise
        case(
            "elementwise/binary/add",
            coo2 + coo_bytes(s.m2.nnz(), 2, iw) + coo_bytes(nm + s.m2.nnz(), 2, 8),
            vec![pydata("pyd_add", "pydata: COO + COO")],
            || elementwise::binary::<f64>(&t.coo_any, &t.coo2_any, BinaryOp::Add).unwrap(),
        ),
        case(
            "elementwise/binary/add_csr",
            2 * csr_b + csx_bytes(nm + s.m2.nnz(), rows, iw),
            vec![scipy("add", "scipy: CSR + CSR")],
            || elementwise::binary::<f64>(&t.csr_any, &t.csr2_any, BinaryOp::Add).unwrap(),
        ),
        case(
            "elementwise/binary/multiply",
            coo2 + coo_bytes(s.m2.nnz(), 2, iw),
            vec![pydata("pyd_multiply", "pydata: COO * COO")],
            || elementwise::binary::<f64>(&t.coo_any, &t.coo2_any, BinaryOp::Multiply).unwrap(),
        ),
        case(
            "elementwise/binary/multiply_csr",
            2 * csr_b,
            vec![scipy("multiply", "scipy: CSR.multiply(CSR)")],
            || elementwise::binary::<f64>(&t.csr_any, &t.csr2_any, BinaryOp::Multiply).unwrap(),
        ),
        case(
            "elementwise/scale/csr",
            16 * nm,
            vec![
                scipy("scale", "scipy: CSR * 2.5 (also copies indices and indptr)"),
                pydata("pyd_scale", "pydata: COO * 2.5"),
            ],
            || elementwise::scale::<f64>(&t.csr_any, ALPHA).unwrap(),
        ),
        // ---------------------------------------------------------------- reductions
        case(
            "reduce/sum_all/csr",
            8 * nm,
            vec![scipy("sum_all", ""), pydata("pyd_sum_all", "")],
            || reduce::sum_all::<f64>(&t.csr_any).unwrap(),
        ),
        case(
            "reduce/sum_axes/csr_axis1",
            csr_b + 16 * rows,
            vec![
                scipy("sum_axis1", "scipy: dense result"),
                pydata("pyd_sum_axis1", "pydata: COO result"),
            ],
            || reduce::sum_axes::<f64>(&t.csr_any, &[1]).unwrap(),
        ),
        case(
            "reduce/sum_axes/csr_axis0",
            csr_b + 16 * cols,
            vec![
                scipy("sum_axis0", "scipy: dense result"),
                pydata("pyd_sum_axis0", "pydata: COO result"),
            ],
            || reduce::sum_axes::<f64>(&t.csr_any, &[0]).unwrap(),
        ),
        case("reduce/allclose/csr", 2 * csr_b, vec![], || {
            assert!(reduce::allclose::<f64>(&t.csr_any, &t.csr_near_any, 1e-9, 0.0).unwrap())
        }),
    ]
}

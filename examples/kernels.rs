//! Kernels on tensors where they lie: SpMV on a CSR matrix memory-mapped from an
//! Arrow IPC file (only the result is allocated), SpMM, TTV and MTTKRP on a CSF
//! tensor, element-wise operations and reductions. Every result is checked
//! against a hand computation.
//!
//! Run: `cargo run --release --example kernels [OUT_DIR]`

use std::path::PathBuf;

use arrow_sparse::ipc::{self, MmapReader, StreamWriteOptions};
use arrow_sparse::kernels::elementwise::{BinaryOp, binary, scale};
use arrow_sparse::kernels::{csf, reduce, spmv};
use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, DenseTensor};

fn main() -> Result<(), arrow_sparse::Error> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);

    // A 4 x 5 matrix, written as CSR (int32 indices) to an IPC file and mapped back.
    let a = CooTensor::<f64, i64>::from_entries(
        vec![4, 5],
        &[
            (vec![0, 0], 2.0),
            (vec![0, 3], -1.0),
            (vec![1, 1], 3.0),
            (vec![2, 0], 4.0),
            (vec![2, 4], 0.5),
            (vec![3, 2], -2.0),
        ],
    )?;
    let csr: AnyTensor = a.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
    let path = dir.join("arrow-sparse-kernels.arrow");
    ipc::write_tensor_stream(&path, &[csr.clone().into()], &StreamWriteOptions::default())?;
    let mapped = MmapReader::open(&path)?.get(0)?.tensor;

    // SpMV: y = A x, reading the mapped buffers in place.
    let x = [1.0, 2.0, 3.0, 4.0, 5.0];
    let y = spmv::spmv::<f64>(&mapped, &x)?;
    println!("SpMV  A x = {y:?}");
    assert_eq!(y, vec![2.0 - 4.0, 6.0, 4.0 + 2.5, -6.0]);

    // SpMM: C = A B with a dense 5 x 2 B (row-major).
    let b = DenseTensor::<f64>::try_new(
        vec![5, 2],
        vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.0, 0.0, 2.0].into(),
    )?;
    let m = match &mapped {
        AnyTensor::Csx(m) => m.downcast::<f64, i32, i32>().expect("a f64 / int32 CSR"),
        _ => unreachable!("the file holds a CSR matrix"),
    };
    let c = spmv::spmm_csx(&m, &b)?;
    println!(
        "SpMM  A B = {:?} (shape {:?})",
        c.values().as_ref(),
        c.shape()
    );
    assert_eq!(
        c.values().as_ref(),
        &[0.0, 0.0, 0.0, 3.0, 4.0, 1.0, -2.0, -2.0]
    );

    // A 3-D tensor as CSF (axis order 0, 1, 2): tensor-times-vector and MTTKRP.
    let t = CooTensor::<f64, i64>::from_entries(
        vec![2, 3, 2],
        &[
            (vec![0, 0, 0], 1.0),
            (vec![0, 2, 1], 2.0),
            (vec![1, 1, 0], 3.0),
            (vec![1, 1, 1], 4.0),
        ],
    )?;
    let tree = t.to_csf::<i64, i64>(&[0, 1, 2])?;
    // TTV along mode 2 with v = (10, 1): a 2 x 3 result.
    let ttv = csf::ttv(&tree, 2, &[10.0, 1.0])?;
    println!("TTV   mode 2 -> {} entries", ttv.nnz());
    assert_eq!(
        ttv.to_dense()?.values().as_ref(),
        &[10.0, 0.0, 2.0, 0.0, 34.0, 0.0]
    );
    // MTTKRP along mode 0 with rank-1 factors of ones: the slice sums.
    let ones = |n: usize| DenseTensor::<f64>::try_new(vec![n, 1], vec![1.0; n].into());
    let factors = [ones(2)?, ones(3)?, ones(2)?];
    let mttkrp = csf::mttkrp(&tree, 0, &factors)?;
    println!("MTTKRP mode 0 -> {:?}", mttkrp.values().as_ref());
    assert_eq!(mttkrp.values().as_ref(), &[3.0, 7.0]);

    // Element-wise: A + 2A = 3A, with operands in different formats.
    let doubled = scale::<f64>(&a.clone().into(), 2.0)?;
    let sum = binary::<f64>(&csr, &doubled, BinaryOp::Add)?; // in the left operand's format
    assert_eq!(sum.format(), csr.format());
    let tripled = scale::<f64>(&a.clone().into(), 3.0)?;
    assert!(reduce::allclose::<f64>(&sum, &tripled, 1e-12, 0.0)?);

    // Reductions: the sum of every entry, and row sums (sum over axis 1, a
    // dense result: few rows).
    let total = reduce::sum_all::<f64>(&mapped)?;
    let rows = reduce::sum_axes::<f64>(&mapped, &[1])?;
    let unexpected = || arrow_sparse::Error::Unsupported("row sums: a dense float64 vector".into());
    let AnyTensor::Dense(rows) = rows else {
        return Err(unexpected());
    };
    let rows = rows.downcast::<f64>().ok_or_else(unexpected)?;
    println!("sum   {total}; row sums {:?}", rows.values().as_ref());
    assert_eq!(total, 6.5);
    assert_eq!(rows.values().as_ref(), &[1.0, 3.0, 4.5, -2.0]);

    std::fs::remove_file(&path)?;
    println!("kernels: every result matches");
    Ok(())
}

//! Public functions of the kernels, IPC, io, dump and limit modules called with
//! edge and wrong arguments (empty and zero-extent tensors, n = 0 SpMM operands,
//! wrong lengths, out-of-range axes and modes, overflowing integer results,
//! extents whose dense result cannot be allocated, unknown extensions): each
//! returns a value or a typed error, and none panics (issue #13's "no panics in
//! public functions"; the file readers' hostile inputs are the fuzz targets').

use arrow_sparse::kernels::{
    convert, csf,
    elementwise::{self, BinaryOp},
    reduce::{self, SumOutput},
    spmv,
};
use arrow_sparse::*;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    static FAILED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Run `f`; a panic, or an outcome that does not start with `expect`, is
/// recorded as a failure.
fn probe(name: &str, expect: &str, f: impl FnOnce() -> String) {
    let failure = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(s) if s.starts_with(expect) => None,
        Ok(s) => Some(format!("{name}: expected {expect}..., got {s}")),
        Err(e) => Some(format!(
            "{name}: PANIC {:?}",
            e.downcast_ref::<String>()
                .cloned()
                .or(e.downcast_ref::<&str>().map(|s| s.to_string()))
        )),
    };
    if let Some(f) = failure {
        FAILED.with(|v| v.borrow_mut().push(f));
    }
}

#[test]
fn edge_arguments_give_values_or_typed_errors_never_panics() {
    let coo =
        CooTensor::<f64, i64>::from_entries(vec![4, 3], &[(vec![0, 1], 1.0), (vec![3, 2], 2.0)])
            .unwrap();
    let csr = coo.to_csx::<i32, i64>(CompressedAxis::Row).unwrap();
    let t: AnyTensor = csr.clone().into();
    let empty: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![0, 5], &[])
        .unwrap()
        .into();
    let zc: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5, 0], &[])
        .unwrap()
        .into();
    let t3: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 1.0)])
        .unwrap()
        .into();
    let ti: AnyTensor =
        CooTensor::<i8, i64>::from_entries(vec![4, 3], &[(vec![0, 1], 100), (vec![0, 2], 100)])
            .unwrap()
            .into();
    probe("spmm n=0", "true", || {
        format!("{:?}", spmv::spmm_into::<f64>(&t, &[], 0, &mut []).is_ok())
    });
    probe("spmm n=0 nonempty c", "Err(Shape", || {
        format!("{:?}", spmv::spmm_into(&t, &[], 0, &mut [0.0; 4]))
    });
    probe("spmm n huge", "true", || {
        format!(
            "{:?}",
            spmv::spmm_into(&t, &[1.0; 3], usize::MAX, &mut [0.0; 4]).is_err()
        )
    });
    probe("spmm_csx_into n=0", "true", || {
        format!(
            "{:?}",
            spmv::spmm_csx_into::<f64, i32, i64>(&csr, &[], 0, &mut []).is_ok()
        )
    });
    probe("spmm_csx b 3x0", "Ok([4, 0])", || {
        format!(
            "{:?}",
            spmv::spmm_csx(
                &csr,
                &DenseTensor::<f64>::try_new(vec![3, 0], vec![].into()).unwrap()
            )
            .map(|d| d.shape().to_vec())
        )
    });
    probe("spmm empty a", "Ok(())", || {
        format!(
            "{:?}",
            spmv::spmm_into::<f64>(&empty, &[1.0; 10], 2, &mut [])
        )
    });
    probe("spmm zero-col a", "Ok(())", || {
        format!("{:?}", spmv::spmm_into(&zc, &[], 3, &mut [0.0; 15]))
    });
    probe("spmm_scaled n=0", "Ok(())", || {
        format!(
            "{:?}",
            spmv::spmm_scaled_into::<f64>(2.0, &t, &[], 0, 1.0, &mut [])
        )
    });
    probe("spmv wrong x", "true", || {
        format!("{:?}", spmv::spmv(&t, &[1.0; 2]).is_err())
    });
    probe("spmv 3d", "true", || {
        format!("{:?}", spmv::spmv(&t3, &[1.0; 4]).is_err())
    });
    probe("spmv empty", "Ok([])", || {
        format!("{:?}", spmv::spmv(&empty, &[1.0; 5]))
    });
    probe("spmv zc", "Ok([0.0, 0.0, 0.0, 0.0, 0.0])", || {
        format!("{:?}", spmv::spmv::<f64>(&zc, &[]))
    });
    probe("spmv_into wrong y", "true", || {
        format!(
            "{:?}",
            spmv::spmv_into(&t, &[1.0; 3], &mut [0.0; 2]).is_err()
        )
    });
    probe("spmv_scaled nan", "Ok(())", || {
        format!(
            "{:?}",
            spmv::spmv_scaled_into(f64::NAN, &t, &[1.0; 3], f64::NAN, &mut [0.0; 4])
        )
    });
    probe("spmv int overflow", "Err(Overflow", || {
        format!("{:?}", spmv::spmv(&ti, &[100i8; 3]))
    });
    probe("sum_axes oob", "true", || {
        format!("{:?}", reduce::sum_axes::<f64>(&t, &[5]).is_err())
    });
    probe("sum_axes dup", "Err(Shape", || {
        format!(
            "{:?}",
            reduce::sum_axes::<f64>(&t, &[0, 0]).map(|x| x.shape().to_vec())
        )
    });
    probe("sum_axes all", "Ok([1])", || {
        format!(
            "{:?}",
            reduce::sum_axes::<f64>(&t, &[0, 1]).map(|x| x.shape().to_vec())
        )
    });
    probe("sum_axes none", "Ok([4, 3])", || {
        format!(
            "{:?}",
            reduce::sum_axes::<f64>(&t, &[]).map(|x| x.shape().to_vec())
        )
    });
    probe("sum_axes dense huge", "true", || {
        format!(
            "{:?}",
            reduce::sum_axes_with::<f64>(
                &AnyTensor::from(
                    CooTensor::<f64, i64>::from_entries(
                        vec![1 << 40, 1 << 20, 2],
                        &[(vec![0, 0, 1], 1.0)]
                    )
                    .unwrap()
                ),
                &[2],
                SumOutput::Dense
            )
            .is_err()
        )
    });
    probe("sum_axes wrong type", "true", || {
        format!("{:?}", reduce::sum_axes::<f32>(&t, &[0]).is_err())
    });
    probe("sum_all int overflow", "Err(Overflow", || {
        format!("{:?}", reduce::sum_all::<i8>(&ti))
    });
    probe("sum_all empty", "Ok(0.0)", || {
        format!("{:?}", reduce::sum_all::<f64>(&empty))
    });
    probe("allclose shapes", "Ok(false)", || {
        format!("{:?}", reduce::allclose::<f64>(&t, &t3, 1e-9, 0.0))
    });
    probe("allclose nan tol", "Ok(false)", || {
        format!("{:?}", reduce::allclose::<f64>(&t, &t, f64::NAN, -1.0))
    });
    probe("binary shapes", "true", || {
        format!(
            "{:?}",
            elementwise::binary::<f64>(&t, &t3, BinaryOp::Add).is_err()
        )
    });
    probe("binary types", "true", || {
        format!(
            "{:?}",
            elementwise::binary::<f64>(&t, &ti, BinaryOp::Add).is_err()
        )
    });
    probe("binary empty", "Ok(0)", || {
        format!(
            "{:?}",
            elementwise::binary::<f64>(&empty, &empty, BinaryOp::Multiply).map(|x| x.nnz())
        )
    });
    probe("binary int overflow", "Err(Overflow", || {
        format!("{:?}", elementwise::binary::<i8>(&ti, &ti, BinaryOp::Add))
    });
    probe("binary i8 mul", "Err(Overflow", || {
        format!(
            "{:?}",
            elementwise::binary::<i8>(&ti, &ti, BinaryOp::Multiply)
        )
    });
    probe("scale int overflow", "Err(Overflow", || {
        format!("{:?}", elementwise::scale::<i8>(&ti, 2))
    });
    probe("map_values wrong type", "true", || {
        format!(
            "{:?}",
            elementwise::map_values::<f32, f64>(&t, |x| x as f64).is_err()
        )
    });
    let dm = t
        .to_dm(
            dims::DimMap::try_new(vec![4, 3], vec![1, 0], vec![1]).unwrap(),
            Format::Coo,
            IndexType::Int64,
        )
        .unwrap();
    probe("binary dm", "Ok(Dm)", || {
        format!(
            "{:?}",
            elementwise::binary::<f64>(&dm, &t, BinaryOp::Add).map(|x| x.format())
        )
    });
    probe("sum dm", "Ok([4])", || {
        format!(
            "{:?}",
            reduce::sum_axes::<f64>(&dm, &[1]).map(|x| x.shape().to_vec())
        )
    });
    probe("spmv dm", "Err(Shape", || {
        format!("{:?}", spmv::spmv(&dm, &[1.0; 3]))
    });
    let f = DenseTensor::<f64>::try_new(vec![4, 2], vec![1.0; 8].into()).unwrap();
    let c3 = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 1.0)])
        .unwrap()
        .to_csf::<i32, i32>(&[0, 1, 2])
        .unwrap();
    probe("mttkrp bad factors", "true", || {
        format!(
            "{:?}",
            csf::mttkrp(&c3, 0, &[f.clone(), f.clone(), f.clone()]).is_err()
        )
    });
    probe("mttkrp rank0", "Ok([3, 0])", || {
        let z = |n| DenseTensor::<f64>::try_new(vec![n, 0], vec![].into()).unwrap();
        format!(
            "{:?}",
            csf::mttkrp(&c3, 1, &[z(2), z(3), z(4)]).map(|m| m.shape().to_vec())
        )
    });
    probe("mttkrp col-major", "true", || {
        let cm = DenseTensor::<f64>::try_new_strided(vec![3, 2], vec![1, 3], vec![1.0; 6].into())
            .unwrap();
        format!(
            "{:?}",
            csf::mttkrp(&c3, 0, &[cm.clone(), cm.clone(), cm]).is_err()
        )
    });
    probe("mttkrp_csr bad shape", "true", || {
        format!(
            "{:?}",
            csf::mttkrp_csr(&csr, &[2, 3, 4], 0, &[f.clone(), f.clone(), f.clone()]).is_err()
        )
    });
    probe("mttkrp_csr empty shape", "true", || {
        format!("{:?}", csf::mttkrp_csr(&csr, &[], 0, &[]).is_err())
    });
    probe("ttv huge dense", "true", || {
        let h =
            CooTensor::<f64, i64>::from_entries(vec![1 << 40, 1 << 30, 2], &[(vec![0, 0, 1], 1.0)])
                .unwrap()
                .to_csf::<i64, i64>(&[0, 1, 2])
                .unwrap();
        format!("{:?}", csf::ttv_dense(&h, 2, &[1.0, 1.0]).is_err())
    });
    probe("ttv huge sparse", "true", || {
        let h =
            CooTensor::<f64, i64>::from_entries(vec![1 << 40, 1 << 30, 2], &[(vec![0, 0, 1], 1.0)])
                .unwrap()
                .to_csf::<i64, i64>(&[0, 1, 2])
                .unwrap();
        format!("{:?}", csf::ttv(&h, 0, &[1.0; 0]).is_err())
    });
    let v1 = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![1], 2.0), (vec![4], 3.0)])
        .unwrap()
        .to_csf::<i32, i64>(&[0])
        .unwrap();
    probe("ttv 1-d csf", "Err(Shape", || {
        format!("{:?}", csf::ttv(&v1, 0, &[1.0; 5]).map(|c| c.nnz()))
    });
    probe("ttv_dense 1-d csf", "Err(Shape", || {
        format!(
            "{:?}",
            csf::ttv_dense(&v1, 0, &[1.0, 1.0, 1.0, 1.0, 2.0]).map(|d| d.values().to_vec())
        )
    });
    probe("mttkrp 1-d csf", "Err(Shape", || {
        let f = DenseTensor::<f64>::try_new(vec![5, 2], vec![1.0; 10].into()).unwrap();
        format!(
            "{:?}",
            csf::mttkrp(&v1, 0, &[f]).map(|d| d.values().to_vec())
        )
    });
    probe("dense_to_csf 1-d", "Ok([0, 2])", || {
        format!(
            "{:?}",
            convert::dense_to_csf::<f64, i32, i32>(
                &DenseTensor::<f64>::try_new(vec![3], vec![1.0, 0.0, 2.0].into()).unwrap(),
                &[0]
            )
            .map(|c| c.indices()[0].to_vec())
        )
    });
    probe("coo_to_csf bad order", "true", || {
        format!(
            "{:?}",
            convert::coo_to_csf::<f64, i64, i64>(&coo, &[0, 0]).is_err()
        )
    });
    probe("coo_to_csf short order", "true", || {
        format!(
            "{:?}",
            convert::coo_to_csf::<f64, i64, i64>(&coo, &[0]).is_err()
        )
    });
    probe("coo_to_csx 3d", "true", || {
        format!(
            "{:?}",
            convert::coo_to_csx::<f64, i64, i64>(
                &CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[]).unwrap(),
                CompressedAxis::Row
            )
            .is_err()
        )
    });
    probe("coo_to_csx i8 overflow", "false", || {
        format!(
            "{:?}",
            convert::coo_to_csx::<f64, i64, i8>(
                &CooTensor::<f64, i64>::from_entries(vec![300, 3], &[(vec![299, 0], 1.0)]).unwrap(),
                CompressedAxis::Row
            )
            .is_err()
        )
    });
    probe("dense_to_csx 1d", "true", || {
        format!(
            "{:?}",
            convert::dense_to_csx::<f64, i32, i32>(
                &DenseTensor::<f64>::try_new(vec![3], vec![1.0; 3].into()).unwrap(),
                CompressedAxis::Row
            )
            .is_err()
        )
    });
    probe("dense_to_csf bad order", "true", || {
        format!(
            "{:?}",
            convert::dense_to_csf::<f64, i32, i32>(
                &DenseTensor::<f64>::try_new(vec![3, 2], vec![1.0; 6].into()).unwrap(),
                &[1]
            )
            .is_err()
        )
    });
    probe("dense bcast to coo", "true", || {
        format!(
            "{:?}",
            convert::dense_to_coo::<f64, i8>(
                &DenseTensor::<f64>::try_new_strided(vec![200, 3], vec![0, 1], vec![1.0; 3].into())
                    .unwrap()
            )
            .is_err()
        )
    });
    probe("sort_permutation", "Err(Invariant", || {
        format!(
            "{:?}",
            convert::sort_permutation(&coo, &[9]).map(|p| p.len())
        )
    });
    probe("limit budget max", "18446744073709551615", || {
        format!("{:?}", limit::ReadLimit::default().budget(u64::MAX))
    });
    probe("limit check", "false", || {
        format!(
            "{:?}",
            limit::ReadLimit::default()
                .check("x", u64::MAX, u64::MAX)
                .is_err()
        )
    });
    probe("json_line dm", "Ok(171)", || {
        format!("{:?}", dump::json_line(&dm).map(|s| s.len()))
    });
    probe("json_line empty", "Ok(", || {
        format!("{:?}", dump::json_line(&empty))
    });
    probe("mmap get oob", "true", || {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.arrow");
        ipc::write_tensor_stream(&p, &[t.clone().into()], &ipc::StreamWriteOptions::default())
            .unwrap();
        let r = ipc::MmapReader::open(&p).unwrap();
        format!("{:?}", r.get(usize::MAX).is_err())
    });
    probe("mmap open dir", "true", || {
        format!("{:?}", ipc::MmapReader::open("/tmp").is_err())
    });
    probe("decode empty", "Ok(true)", || {
        format!(
            "{:?}",
            ipc::decode(
                &arrow_buffer::Buffer::from(Vec::<u8>::new()),
                &ipc::StreamReadOptions::default()
            )
            .map(|x| x.is_none())
        )
    });
    probe("read stream empty file", "Ok(0)", || {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("e.arrow");
        std::fs::write(&p, b"").unwrap();
        format!(
            "{:?}",
            ipc::read_tensor_stream(&p, &ipc::StreamReadOptions::default()).map(|v| v.len())
        )
    });
    probe("write_path unknown ext", "true", || {
        let d = tempfile::tempdir().unwrap();
        format!(
            "{:?}",
            io::write_path(d.path().join("x.csv"), &t.clone().into()).is_err()
        )
    });
    probe("write mtx 3d", "true", || {
        let d = tempfile::tempdir().unwrap();
        format!(
            "{:?}",
            io::mtx::write(
                d.path().join("x.mtx"),
                &t3.clone().into(),
                &Default::default()
            )
            .is_err()
        )
    });
    probe("write npz dm", "Ok(())", || {
        let d = tempfile::tempdir().unwrap();
        format!(
            "{:?}",
            io::write_path(d.path().join("x.npz"), &dm.clone().into()).map_err(|e| e.to_string())
        )
    });
    probe("write tns empty", "Ok(())", || {
        let d = tempfile::tempdir().unwrap();
        format!(
            "{:?}",
            io::write_path(d.path().join("x.tns"), &empty.clone().into())
                .map_err(|e| e.to_string())
        )
    });
    probe("write mtx zero-dim", "Ok(()) Ok([5, 0])", || {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.mtx");
        let r = io::write_path(&p, &zc.clone().into());
        format!(
            "{:?} {:?}",
            r.map_err(|e| e.to_string()),
            io::read_path(&p).map(|m| m.tensor.shape().to_vec())
        )
    });
    probe("FileFormat empty", "None", || {
        format!("{:?}", io::FileFormat::from_path(""))
    });
    probe("stream write after", "Ok(376)", || {
        let mut w = ipc::TensorStreamWriter::new(Vec::new());
        w.write(&t).unwrap();
        format!("{:?}", w.finish().map(|b| b.len()))
    });
    let failed = FAILED.with(|v| v.take());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

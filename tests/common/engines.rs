//! The engine checks shared by tests/dataset_spark.rs and
//! tests/dataset_datafusion.rs: the same datasets, vectors and factor matrices
//! given to a query engine's script (tests/python/check_dataset_spark.py,
//! tests/python/check_dataset_datafusion.py: `SCRIPT DATASET_DIR X_PARQUET
//! OUT_DIR`, results as one Parquet file per query), and its results compared
//! with the crate's kernels on the same tensors in memory: exactly for integers,
//! within 1e-12 (relative) for floats.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow_sparse::archive::{DatasetReader, DatasetWriteOptions, write_dataset};
use arrow_sparse::kernels::csf::mttkrp;
use arrow_sparse::kernels::reduce::sum_axes;
use arrow_sparse::kernels::spmv::spmv;
use arrow_sparse::{AnyTensor, Convert, CooTensor, DenseTensor, Format, IndexType};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::common::Rng;

/// Write `columns` as a Parquet file.
pub fn write_table(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Run an engine's script (`tests/python/NAME`) with `python` on a dataset, a
/// vector / factor table and an output folder; panics with its stderr on failure.
pub fn run_script(python: &Path, name: &str, dataset: &Path, x: &Path, out: &Path) {
    let script = crate::common::repo().join("tests/python").join(name);
    let o = std::process::Command::new(python)
        .arg(&script)
        .arg(dataset)
        .arg(x)
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    eprintln!("{stderr}");
    assert!(o.status.success(), "{name} failed:\n{stderr}");
}

/// A Parquet file the engine wrote: every row as `(key columns, value)`, values as f64
/// (and as i64 when the column is an integer one).
pub fn read_result(
    path: &Path,
    keys: &[&str],
    value: &str,
) -> BTreeMap<Vec<i64>, (f64, Option<i64>)> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let mut out = BTreeMap::new();
    for batch in reader {
        let batch = batch.unwrap();
        let key_cols: Vec<&Int64Array> = keys
            .iter()
            .map(|k| {
                batch
                    .column_by_name(k)
                    .unwrap()
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
            })
            .collect();
        let v = batch.column_by_name(value).unwrap();
        for r in 0..batch.num_rows() {
            let key = key_cols.iter().map(|c| c.value(r)).collect();
            let val = if let Some(i) = v.as_any().downcast_ref::<Int64Array>() {
                (i.value(r) as f64, Some(i.value(r)))
            } else {
                (
                    v.as_any().downcast_ref::<Float64Array>().unwrap().value(r),
                    None,
                )
            };
            assert!(
                out.insert(key, val).is_none(),
                "a repeated key in {}",
                path.display()
            );
        }
    }
    out
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// The engine's per-dimension sums against `sum_axes` (the other axes summed out).
pub fn check_sums(name: &str, out: &Path, t: &AnyTensor, exact: bool) {
    let n = t.shape().len();
    for d in 0..n {
        let others: Vec<usize> = (0..n).filter(|&e| e != d).collect();
        let want = if exact {
            let s = sum_axes::<i64>(t, &others)
                .unwrap()
                .convert(Format::Dense, IndexType::Int64, None)
                .unwrap();
            let AnyTensor::Dense(s) = s else { panic!() };
            s.values()
                .as_typed::<i64>()
                .unwrap()
                .iter()
                .map(|&v| v as f64)
                .collect::<Vec<_>>()
        } else {
            let s = sum_axes::<f64>(t, &others)
                .unwrap()
                .convert(Format::Dense, IndexType::Int64, None)
                .unwrap();
            let AnyTensor::Dense(s) = s else { panic!() };
            s.values().as_typed::<f64>().unwrap().to_vec()
        };
        let got = read_result(&out.join(format!("sum_dim{d}.parquet")), &["i"], "s");
        for (i, w) in want.iter().enumerate() {
            let g = got.get(&vec![i as i64]).map_or(0.0, |v| v.0);
            assert!(
                if exact { g == *w } else { close(g, *w) },
                "sum along {d}, index {i}: {name} {g}, kernel {w}"
            );
        }
        assert!(got.keys().all(|k| (k[0] as usize) < want.len()));
    }
}

/// y = A x over an integer dataset partitioned by rows and a float CSC dataset
/// partitioned by columns, the sums along every dimension, and an MTTKRP of a
/// 3-D tensor, each computed by `engine(dataset, x, out)` (named `name` in
/// messages) and checked against the kernels.
pub fn check_engine(name: &str, engine: &dyn Fn(&Path, &Path, &Path)) {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(17);
    let entries = |r: &mut Rng, shape: &[usize], nnz: usize| -> Vec<Vec<usize>> {
        let mut e: Vec<Vec<usize>> = (0..nnz)
            .map(|_| shape.iter().map(|&d| r.below(d)).collect())
            .collect();
        e.sort();
        e.dedup();
        e
    };

    // y = A x, integers (exact, values and x of both signs), partitioned by rows
    let coords = entries(&mut r, &[600, 300], 5000);
    let a: AnyTensor = CooTensor::<i64, i64>::from_entries(
        vec![600, 300],
        &coords
            .iter()
            .enumerate()
            .map(|(k, c)| (c.clone(), (k % 19) as i64 - 9))
            .collect::<Vec<_>>(),
    )
    .unwrap()
    .into();
    let x: Vec<i64> = (0..300).map(|j| (j * 7 % 13) as i64 - 6).collect();
    let ds = dir.path().join("ints");
    write_dataset(&ds, &a.clone().into(), &DatasetWriteOptions::new(0, 128)).unwrap();
    let xp = dir.path().join("x_ints.parquet");
    write_table(
        &xp,
        vec![
            (
                "i",
                Arc::new(Int64Array::from_iter_values(0..300)) as ArrayRef,
            ),
            ("x", Arc::new(Int64Array::from(x.clone()))),
        ],
    );
    let out = dir.path().join("out_ints");
    engine(&ds, &xp, &out);
    let want = DatasetReader::open(&ds).unwrap().spmv(&x).unwrap();
    assert_eq!(want, spmv(&a, &x).unwrap());
    let got = read_result(&out.join("y.parquet"), &["i"], "y");
    for (i, w) in want.iter().enumerate() {
        let g = got.get(&vec![i as i64]).map_or(Some(0), |v| v.1);
        assert_eq!(g, Some(*w), "y[{i}]");
    }
    check_sums(name, &out, &a, true);

    // y = A x, floats, a CSC dataset partitioned by columns
    let coords = entries(&mut r, &[500, 400], 6000);
    let f = CooTensor::<f64, i64>::from_entries(
        vec![500, 400],
        &coords
            .iter()
            .enumerate()
            .map(|(k, c)| (c.clone(), ((k as f64) * 0.731).sin()))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let csc: AnyTensor = f
        .to_csx::<i32, i64>(arrow_sparse::CompressedAxis::Column)
        .unwrap()
        .into();
    let xf: Vec<f64> = (0..400).map(|j| (j as f64 * 0.37).cos()).collect();
    let ds = dir.path().join("floats");
    write_dataset(&ds, &csc.clone().into(), &DatasetWriteOptions::new(1, 50)).unwrap();
    let xp = dir.path().join("x_floats.parquet");
    write_table(
        &xp,
        vec![
            (
                "i",
                Arc::new(Int64Array::from_iter_values(0..400)) as ArrayRef,
            ),
            ("x", Arc::new(Float64Array::from(xf.clone()))),
        ],
    );
    let out = dir.path().join("out_floats");
    engine(&ds, &xp, &out);
    let want = spmv(&csc, &xf).unwrap();
    let got = read_result(&out.join("y.parquet"), &["i"], "y");
    for (i, w) in want.iter().enumerate() {
        let g = got.get(&vec![i as i64]).map_or(0.0, |v| v.0);
        assert!(close(g, *w), "y[{i}]: {name} {g}, kernel {w}");
    }
    check_sums(name, &out, &csc, false);

    // MTTKRP along mode 0 of a 3-D tensor, rank 4
    let shape = [40, 30, 20];
    let coords = entries(&mut r, &shape, 3000);
    let t = CooTensor::<f64, i64>::from_entries(
        shape.to_vec(),
        &coords
            .iter()
            .enumerate()
            .map(|(k, c)| (c.clone(), 1.0 + (k % 7) as f64 * 0.25))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let rank = 4;
    let factor = |rows: usize, seed: f64| -> Vec<f64> {
        (0..rows * rank)
            .map(|k| ((k as f64 + seed) * 0.173).sin())
            .collect()
    };
    let (b, c) = (factor(30, 1.0), factor(20, 2.0));
    let ds = dir.path().join("tensor3");
    write_dataset(
        &ds,
        &AnyTensor::from(t.clone()).into(),
        &DatasetWriteOptions::new(0, 16),
    )
    .unwrap();
    let (mut mode, mut fi, mut fr, mut fx) = (vec![], vec![], vec![], vec![]);
    for (m, f, rows) in [(1i64, &b, 30), (2, &c, 20)] {
        for i in 0..rows {
            for k in 0..rank {
                mode.push(m);
                fi.push(i as i64);
                fr.push(k as i64);
                fx.push(f[i * rank + k]);
            }
        }
    }
    let xp = dir.path().join("factors.parquet");
    write_table(
        &xp,
        vec![
            ("mode", Arc::new(Int64Array::from(mode)) as ArrayRef),
            ("i", Arc::new(Int64Array::from(fi))),
            ("r", Arc::new(Int64Array::from(fr))),
            ("x", Arc::new(Float64Array::from(fx))),
        ],
    );
    let out = dir.path().join("out_tensor3");
    engine(&ds, &xp, &out);
    let csf = t.to_csf::<i32, i64>(&[0, 1, 2]).unwrap();
    let dense =
        |rows: usize, v: Vec<f64>| DenseTensor::<f64>::try_new(vec![rows, rank], v.into()).unwrap();
    let m = mttkrp(
        &csf,
        0,
        &[dense(40, vec![0.0; 40 * rank]), dense(30, b), dense(20, c)],
    )
    .unwrap();
    let m = m.values().to_vec();
    let got = read_result(&out.join("mttkrp.parquet"), &["i", "r"], "m");
    for i in 0..40 {
        for k in 0..rank {
            let g = got.get(&vec![i as i64, k as i64]).map_or(0.0, |v| v.0);
            assert!(
                close(g, m[i * rank + k]),
                "M[{i}, {k}]: {name} {g}, kernel {}",
                m[i * rank + k]
            );
        }
    }
    check_sums(name, &out, &AnyTensor::from(t), false);
}

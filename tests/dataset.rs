//! Datasets (format/SPEC.md 9.7): a tensor in a directory of archives partitioned
//! by ranges of one dimension. Round trips of every format a dataset holds,
//! sorting with spilled runs (several merge passes), duplicates, range reads
//! that open only the parts they need, streamed SpMV against the in-memory
//! kernel, atomic writes, hostile manifests and parts, the streamed Matrix
//! Market reader and the CLI.
#![cfg(feature = "parquet")]

mod common;

use std::path::Path;

use arrow_sparse::archive::{
    self, ArchiveReader, ArchiveWriteOptions, DATASET_BLOCK_KEY, DATASET_MANIFEST, DatasetBlock,
    DatasetReader, DatasetWriteOptions, DatasetWriter, TensorSpec, write_dataset,
};
use arrow_sparse::io::mtx::MtxChunks;
use arrow_sparse::io::{self, Duplicates, ImportOptions, mtx};
use arrow_sparse::ipc::TensorMessage;
use arrow_sparse::kernels::spmv::spmv;
use arrow_sparse::tensor::EntryOrder;
use arrow_sparse::{
    AnyCoo, AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, DenseTensor, Error, Format,
    IndexType, ValueType,
};
use common::Rng;
use serde_json::Value as J;

/// `nnz` distinct random entries of `shape`, sorted (canonical), values `1..`.
fn canonical(r: &mut Rng, shape: &[usize], nnz: usize) -> CooTensor<f64, i64> {
    common::canonical_coo(r, shape, nnz, |k| k as f64 + 1.0)
}

/// Entry `k`'s coordinates of a row-major COO tensor.
fn at(t: &CooTensor<f64, i64>, k: usize) -> Vec<usize> {
    let n = t.ndim();
    (0..n).map(|d| t.coords()[k * n + d] as usize).collect()
}

/// Entry `k`'s coordinates of a row-major COO tensor of any types.
fn at_any(c: &AnyCoo, k: usize) -> Vec<usize> {
    let n = c.shape().len();
    (0..n)
        .map(|d| c.coords().get_usize(k * n + d).unwrap())
        .collect()
}

/// The same entries in a random order (a shuffled, non-canonical COO tensor).
fn shuffled(r: &mut Rng, t: &CooTensor<f64, i64>) -> CooTensor<f64, i64> {
    let n = t.ndim();
    let mut entries: Vec<(Vec<usize>, f64)> = (0..t.nnz())
        .map(|k| {
            (
                (0..n).map(|d| t.coords()[k * n + d] as usize).collect(),
                t.values()[k],
            )
        })
        .collect();
    for i in (1..entries.len()).rev() {
        entries.swap(i, r.below(i + 1));
    }
    CooTensor::from_entries(t.shape().to_vec(), &entries).unwrap()
}

fn small_groups() -> ArchiveWriteOptions {
    ArchiveWriteOptions::default()
        .with_row_group_size(50)
        .with_byte_stream_split(false)
}

#[test]
fn every_format_a_dataset_holds_round_trips_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(7);
    let m2 = canonical(&mut r, &[300, 40], 900);
    let m3 = canonical(&mut r, &[30, 20, 25], 700);
    let named = TensorMessage {
        tensor: AnyTensor::from(m2.clone())
            .with_dim_names(vec!["row".into(), "col".into()])
            .unwrap(),
        custom_metadata: vec![("source".into(), "test".into())],
    };
    let cases: Vec<(&str, TensorMessage, usize, usize)> = vec![
        ("coo_rows", named, 0, 64),
        (
            "coo_i32",
            AnyTensor::from(m2.cast_indices::<i32>().unwrap()).into(),
            0,
            7,
        ),
        ("coo3_d0", AnyTensor::from(m3.clone()).into(), 0, 4),
        (
            "csr",
            AnyTensor::from(m2.to_csx::<i32, i64>(CompressedAxis::Row).unwrap()).into(),
            0,
            33,
        ),
        (
            "csc",
            AnyTensor::from(m2.to_csx::<i16, i32>(CompressedAxis::Column).unwrap()).into(),
            1,
            5,
        ),
        (
            "csf201",
            AnyTensor::from(m3.to_csf::<i32, i64>(&[2, 0, 1]).unwrap()).into(),
            2,
            6,
        ),
        (
            "csf012",
            AnyTensor::from(m3.to_csf::<i64, i64>(&[0, 1, 2]).unwrap()).into(),
            0,
            1,
        ),
        // one block holds everything
        ("one_part", AnyTensor::from(m3.clone()).into(), 0, 1000),
    ];
    for (name, message, dim, block) in cases {
        let out = dir.path().join(name);
        let options = DatasetWriteOptions::new(dim, block).with_archive_options(small_groups());
        let s = write_dataset(&out, &message, &options).unwrap();
        let extent = message.tensor.shape()[dim];
        assert!(s.parts <= extent.div_ceil(block), "{name}");
        assert_eq!((s.rows, s.sorted_runs), (message.tensor.nnz(), 0), "{name}");
        let r = DatasetReader::open(&out).unwrap();
        assert_eq!(r.read().unwrap(), message, "{name}");
        assert_eq!(r.parts().len(), s.parts, "{name}");
        // every part is an ordinary archive of the whole shape, global coordinates
        for (i, p) in r.parts().iter().enumerate() {
            let part = ArchiveReader::open(out.join(&p.path)).unwrap();
            assert_eq!(part.spec().shape, message.tensor.shape(), "{name}");
            let t = part.read().unwrap().tensor;
            let coo = t.convert(Format::Coo, IndexType::Int64, None).unwrap();
            let AnyTensor::Coo(c) = coo else {
                unreachable!()
            };
            assert!(
                (0..c.nnz()).all(|k| p.range.contains(&at_any(&c, k)[dim])),
                "{name} part {i}"
            );
            assert_eq!(r.read_block(i).unwrap().nnz(), p.rows, "{name} part {i}");
        }
    }
}

#[test]
fn unordered_entries_are_sorted_in_spilled_runs_over_several_merge_passes() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(11);
    let t = canonical(&mut r, &[5000, 700], 120_000);
    let s = shuffled(&mut r, &t);
    // 1 MiB: runs of 16 Ki entries (8 runs), merged 4 at a time (two passes)
    let options = DatasetWriteOptions::new(0, 400)
        .with_sorting(1 << 20)
        .with_archive_options(ArchiveWriteOptions::default().with_row_group_size(10_000));
    let out = dir.path().join("ds");
    let mut w = DatasetWriter::create(
        &out,
        TensorSpec::coo(vec![5000, 700], ValueType::Float64, IndexType::Int64),
        &options,
    )
    .unwrap();
    // in chunks, as a stream would come
    let chunk = 9_999;
    let entries: Vec<(Vec<usize>, f64)> =
        (0..s.nnz()).map(|k| (at(&s, k), s.values()[k])).collect();
    for c in entries.chunks(chunk) {
        let part = CooTensor::<f64, i64>::from_entries(vec![5000, 700], c).unwrap();
        w.write_chunk(&part.into()).unwrap();
    }
    let summary = w.finish().unwrap();
    assert!(summary.sorted_runs > 4, "{summary:?}");
    // the runs are gone: only the parts and the manifest are left
    let files: Vec<_> = walk(&out);
    assert!(
        files
            .iter()
            .all(|f| f.ends_with(".parquet") || f.ends_with(DATASET_MANIFEST)),
        "{files:?}"
    );
    let back = DatasetReader::open(&out).unwrap().read().unwrap().tensor;
    assert_eq!(back, AnyTensor::from(t.clone())); // sorted by rows: canonical
    // by columns, into CSC parts
    let out = dir.path().join("csc");
    let spec = TensorSpec::coo(vec![5000, 700], ValueType::Float64, IndexType::Int32).with_layout(
        archive::ArchiveLayout::Csx {
            axis: CompressedAxis::Column,
            index_type: IndexType::Int32,
            indptr_type: IndexType::Int64,
        },
    );
    let mut w = DatasetWriter::create(
        &out,
        spec,
        &DatasetWriteOptions::new(1, 64).with_sorting(1 << 20),
    )
    .unwrap();
    w.write_chunk(&s.clone().into()).unwrap();
    w.finish().unwrap();
    let back = DatasetReader::open(&out).unwrap().read().unwrap().tensor;
    // sorted by column, then row: as the canonical tensor converts
    let want: AnyTensor = t.to_csx::<i32, i64>(CompressedAxis::Column).unwrap().into();
    assert_eq!(back, want);
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

#[test]
fn duplicates_are_refused_summed_or_kept_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let shape = vec![100_000, 3];
    // (5, 1) appears in the first and the last chunk: in different runs
    let mut first: Vec<(Vec<usize>, i64)> =
        (0..40_000).map(|k| (vec![k * 2 + 11, k % 3], 1)).collect();
    first.push((vec![5, 1], 10));
    let last = vec![(vec![5, 1], 32), (vec![99_999, 0], 7)];
    let spec = TensorSpec::coo(shape.clone(), ValueType::Int64, IndexType::Int64);
    let write = |name: &str, d: Duplicates| -> Result<archive::DatasetSummary, Error> {
        let options = DatasetWriteOptions::new(0, 10_000)
            .with_sorting(1 << 20)
            .with_duplicates(d);
        let mut w = DatasetWriter::create(dir.path().join(name), spec.clone(), &options)?;
        w.write_chunk(&CooTensor::<i64, i64>::from_entries(shape.clone(), &first)?.into())?;
        w.write_chunk(&CooTensor::<i64, i64>::from_entries(shape.clone(), &last)?.into())?;
        w.finish()
    };
    let e = write("error", Duplicates::Error).unwrap_err();
    assert!(e.to_string().contains("duplicate entry at [5, 1]"), "{e}");
    assert!(!dir.path().join("error").exists());
    let s = write("sum", Duplicates::Sum).unwrap();
    assert!(s.sorted_runs >= 2);
    let t = DatasetReader::open(dir.path().join("sum"))
        .unwrap()
        .read()
        .unwrap()
        .tensor;
    assert_eq!(
        (t.nnz(), t.get::<i64>(&[5, 1]).unwrap()),
        (40_002, Some(42))
    );
    let k = write("keep", Duplicates::Keep).unwrap();
    assert_eq!(k.rows, 40_003);
    let r = DatasetReader::open(dir.path().join("keep")).unwrap();
    assert!(matches!(
        r.spec().layout,
        archive::ArchiveLayout::Coo {
            canonical: Some(false),
            ..
        }
    ));
    let AnyTensor::Coo(c) = r.read().unwrap().tensor else {
        panic!()
    };
    // kept in input order: 10 (first chunk) before 32 (last chunk)
    let values = c.values().as_typed::<i64>().unwrap();
    let found: Vec<i64> = (0..c.nnz())
        .filter(|&k| at_any(&c, k) == [5, 1])
        .map(|k| values[k])
        .collect();
    assert_eq!(found, [10, 32]);
    // an integer sum that overflows is an error
    let spec8 = TensorSpec::coo(vec![4, 4], ValueType::Int8, IndexType::Int64);
    let options = DatasetWriteOptions::new(0, 2)
        .with_sorting(1 << 20)
        .with_duplicates(Duplicates::Sum);
    let mut w = DatasetWriter::create(dir.path().join("i8"), spec8, &options).unwrap();
    let big =
        CooTensor::<i8, i64>::from_entries(vec![4, 4], &[(vec![1, 1], 100i8), (vec![1, 1], 100)])
            .unwrap();
    w.write_chunk(&big.into()).unwrap();
    assert!(matches!(w.finish(), Err(Error::Overflow { .. })));
}

#[test]
fn range_reads_open_only_the_parts_they_need_and_agree_with_one_archive() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(3);
    let t: AnyTensor = canonical(&mut r, &[1000, 50], 5000).into();
    let one = dir.path().join("one.parquet");
    archive::write_archive(&one, &t.clone().into(), &small_groups()).unwrap();
    let single = ArchiveReader::open(&one).unwrap();
    let out = dir.path().join("ds");
    write_dataset(
        &out,
        &t.clone().into(),
        &DatasetWriteOptions::new(0, 100).with_archive_options(small_groups()),
    )
    .unwrap();
    let ds = DatasetReader::open(&out).unwrap();
    assert_eq!(ds.parts().len(), 10);
    for (dim, range, parts) in [
        (0, 250..420, 3),
        (0, 0..1000, 10),
        (0, 990..5000, 1),
        (0, 400..400, 0),
        (1, 10..20, 10),
    ] {
        let got = ds.read_range(dim, range.clone()).unwrap();
        let want = single.read_range(dim, range.clone()).unwrap();
        assert_eq!(got.tensor, want.tensor, "{dim} {range:?}");
        assert_eq!(got.parts_read, parts, "{dim} {range:?}");
        assert_eq!(got.parts_total, 10);
        assert!(got.row_groups_read <= got.row_groups_total);
    }
    // within a part, row groups outside the range are skipped too
    let narrow = ds.read_range(0, 250..251).unwrap();
    assert_eq!(narrow.parts_read, 1);
    assert!(
        narrow.row_groups_read < narrow.row_groups_total,
        "{narrow:?}"
    );
    assert!(matches!(ds.read_range(2, 0..1), Err(Error::Shape { .. })));
}

#[test]
fn streamed_spmv_equals_the_in_memory_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(5);
    let f = canonical(&mut r, &[700, 300], 6000);
    let x: Vec<f64> = (0..300).map(|i| (i as f64 * 0.37).sin()).collect();
    let i: CooTensor<i64, i64> = CooTensor::from_entries(
        vec![700, 300],
        &(0..f.nnz())
            .map(|k| (at(&f, k), (k % 17) as i64 - 8))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let xi: Vec<i64> = (0..300).map(|j| j % 7 - 3).collect();
    let cases: Vec<(AnyTensor, usize)> = vec![
        (f.clone().into(), 0),
        (f.clone().into(), 1),
        (f.to_csx::<i32, i64>(CompressedAxis::Row).unwrap().into(), 0),
        (
            f.to_csx::<i32, i64>(CompressedAxis::Column).unwrap().into(),
            1,
        ),
    ];
    for (k, (t, dim)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("f{k}"));
        write_dataset(&out, &t.clone().into(), &DatasetWriteOptions::new(dim, 64)).unwrap();
        let y = DatasetReader::open(&out).unwrap().spmv(&x).unwrap();
        let want = spmv(&t, &x).unwrap();
        if dim == 0 {
            assert_eq!(y, want, "case {k}"); // same rows, same order of terms
        } else {
            for (a, b) in y.iter().zip(&want) {
                assert!(
                    (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                    "case {k}: {a} {b}"
                );
            }
        }
    }
    for dim in [0, 1] {
        let out = dir.path().join(format!("i{dim}"));
        let t: AnyTensor = i.clone().into();
        write_dataset(&out, &t.clone().into(), &DatasetWriteOptions::new(dim, 50)).unwrap();
        let r = DatasetReader::open(&out).unwrap();
        assert_eq!(r.spmv(&xi).unwrap(), spmv(&t, &xi).unwrap()); // integers: exact
        assert!(matches!(r.spmv(&xi[..10]), Err(Error::Length { .. })));
        assert!(matches!(r.spmv(&x), Err(Error::Type { .. })));
    }
}

#[test]
fn writes_are_atomic_and_replace_only_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ds");
    let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 2], &[(vec![1, 0], 1.0)])
        .unwrap()
        .into();
    let b: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 2], &[(vec![9, 1], 2.0)])
        .unwrap()
        .into();
    write_dataset(&out, &a.clone().into(), &DatasetWriteOptions::new(0, 3)).unwrap();
    // a failed write leaves the earlier dataset and nothing else
    let spec = TensorSpec::coo(vec![10, 2], ValueType::Float64, IndexType::Int64);
    let mut w = DatasetWriter::create(&out, spec, &DatasetWriteOptions::new(0, 3)).unwrap();
    w.write_chunk(&b.clone()).unwrap();
    assert!(w.write_chunk(&a.clone()).is_err()); // goes back along dimension 0
    drop(w);
    assert_eq!(DatasetReader::open(&out).unwrap().read().unwrap().tensor, a);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temporary directories left"
    );
    // a finished write replaces it
    write_dataset(&out, &b.clone().into(), &DatasetWriteOptions::new(0, 3)).unwrap();
    assert_eq!(DatasetReader::open(&out).unwrap().read().unwrap().tensor, b);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // parts of the old dataset do not survive in the new one
    assert_eq!(walk(&out).len(), 2);
    // anything else is not replaced
    let other = dir.path().join("mine");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "keep me").unwrap();
    assert!(matches!(
        write_dataset(&other, &a.clone().into(), &DatasetWriteOptions::new(0, 3)),
        Err(Error::Unsupported(_))
    ));
    assert_eq!(
        std::fs::read_to_string(other.join("notes.txt")).unwrap(),
        "keep me"
    );
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert!(write_dataset(&file, &a.clone().into(), &DatasetWriteOptions::new(0, 3)).is_err());
    // an empty directory is a fine destination
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    write_dataset(&empty, &a.clone().into(), &DatasetWriteOptions::new(0, 3)).unwrap();
    // an empty tensor: no part
    let none: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10, 2], &[])
        .unwrap()
        .into();
    let s = write_dataset(
        dir.path().join("none"),
        &none.clone().into(),
        &DatasetWriteOptions::new(0, 3),
    )
    .unwrap();
    assert_eq!(s.parts, 0);
    assert_eq!(
        DatasetReader::open(dir.path().join("none"))
            .unwrap()
            .read()
            .unwrap()
            .tensor,
        none
    );
}

#[test]
fn what_a_dataset_cannot_hold_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let dense: AnyTensor = DenseTensor::<f64>::try_new(vec![2, 2], vec![1.0; 4].into())
        .unwrap()
        .into();
    let e = write_dataset(
        dir.path().join("d"),
        &dense.into(),
        &DatasetWriteOptions::new(0, 1),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
    let coo = CooTensor::<f64, i64>::from_entries(vec![4, 4], &[(vec![1, 1], 1.0)]).unwrap();
    let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row).unwrap().into();
    let e = write_dataset(
        dir.path().join("c"),
        &csr.into(),
        &DatasetWriteOptions::new(1, 1),
    )
    .unwrap_err();
    assert!(e.to_string().contains("must lead the storage order"), "{e}");
    let csf: AnyTensor = coo.to_csf::<i32, i32>(&[1, 0]).unwrap().into();
    assert!(
        write_dataset(
            dir.path().join("f"),
            &csf.clone().into(),
            &DatasetWriteOptions::new(0, 1)
        )
        .is_err()
    );
    assert!(
        write_dataset(
            dir.path().join("f"),
            &csf.into(),
            &DatasetWriteOptions::new(1, 1)
        )
        .is_ok()
    );
    let coo: AnyTensor = coo.into();
    assert!(matches!(
        write_dataset(
            dir.path().join("z"),
            &coo.clone().into(),
            &DatasetWriteOptions::new(0, 0)
        ),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        write_dataset(
            dir.path().join("z"),
            &coo.clone().into(),
            &DatasetWriteOptions::new(2, 1)
        ),
        Err(Error::Shape { .. })
    ));
    // a dimension named like the partition key
    let named = coo
        .with_dim_names(vec!["dim_0_block".into(), "b".into()])
        .unwrap();
    assert!(matches!(
        write_dataset(
            dir.path().join("n"),
            &named.into(),
            &DatasetWriteOptions::new(0, 1)
        ),
        Err(Error::Unsupported(_))
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1); // only f
}

/// A dataset of three parts to break.
fn sample(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("ds");
    let t: AnyTensor = CooTensor::<f64, i64>::from_entries(
        vec![30, 4],
        &[
            (vec![1, 0], 1.0),
            (vec![12, 3], 2.0),
            (vec![25, 1], 3.0),
            (vec![27, 2], 4.0),
        ],
    )
    .unwrap()
    .into();
    write_dataset(&out, &t.into(), &DatasetWriteOptions::new(0, 10)).unwrap();
    out
}

fn edit_manifest(out: &Path, f: impl FnOnce(&mut J)) {
    let m = out.join(DATASET_MANIFEST);
    let mut j: J = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    f(&mut j);
    std::fs::write(&m, j.to_string()).unwrap();
}

#[test]
fn hostile_manifests_are_typed_errors() {
    type Edit = Box<dyn Fn(&mut J)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "path outside",
            Box::new(|j| j["parts"][0]["path"] = "../../x.parquet".into()),
        ),
        (
            "absolute path",
            Box::new(|j| j["parts"][1]["path"] = "/etc/passwd".into()),
        ),
        (
            "wrong range",
            Box::new(|j| j["parts"][0]["range"] = serde_json::json!([0, 30])),
        ),
        (
            "blocks out of order",
            Box::new(|j| j["parts"].as_array_mut().unwrap().swap(0, 1)),
        ),
        (
            "block outside",
            Box::new(|j| j["parts"][2]["block"] = 3.into()),
        ),
        (
            "huge block",
            Box::new(|j| j["parts"][2]["block"] = u64::MAX.into()),
        ),
        ("rows", Box::new(|j| j["rows"] = 5.into())),
        ("part rows", Box::new(|j| j["parts"][1]["rows"] = 2.into())),
        ("version", Box::new(|j| j["version"] = 2.into())),
        ("block 0", Box::new(|j| j["partition"]["block"] = 0.into())),
        ("dim", Box::new(|j| j["partition"]["dim"] = 5.into())),
        ("key", Box::new(|j| j["partition"]["key"] = "x".into())),
        (
            "archive",
            Box::new(|j| j["archive"]["format"] = "dense".into()),
        ),
        (
            "shape",
            Box::new(|j| j["archive"]["shape"] = serde_json::json!([30])),
        ),
        (
            "not an object",
            Box::new(|j| *j = serde_json::json!([1, 2])),
        ),
    ];
    for (what, edit) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = sample(dir.path());
        edit_manifest(&out, edit);
        let e = DatasetReader::open(&out)
            .and_then(|r| r.read())
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Parse { .. }
                    | Error::Type { .. }
                    | Error::Shape { .. }
                    | Error::Invariant { .. }
            ),
            "{what}: {e:?}"
        );
    }
    // not JSON, and too large
    let dir = tempfile::tempdir().unwrap();
    let out = sample(dir.path());
    std::fs::write(out.join(DATASET_MANIFEST), b"\xff{").unwrap();
    assert!(matches!(
        DatasetReader::open(&out),
        Err(Error::Parse { .. })
    ));
    let f = std::fs::File::create(out.join(DATASET_MANIFEST)).unwrap();
    f.set_len(65 << 20).unwrap(); // sparse file: nothing is read
    assert!(matches!(
        DatasetReader::open(&out),
        Err(Error::Parse { .. })
    ));
}

#[test]
fn parts_that_disagree_with_the_manifest_are_typed_errors() {
    // a part from another dataset (other rows), with the manifest's byte count fixed
    let dir = tempfile::tempdir().unwrap();
    let out = sample(dir.path());
    let other = dir.path().join("other");
    let t: AnyTensor =
        CooTensor::<f64, i64>::from_entries(vec![30, 4], &[(vec![12, 0], 1.0), (vec![13, 0], 1.0)])
            .unwrap()
            .into();
    write_dataset(&other, &t.into(), &DatasetWriteOptions::new(0, 10)).unwrap();
    let p = "dim_0_block=1/part-0.parquet";
    std::fs::copy(other.join(p), out.join(p)).unwrap();
    let e = DatasetReader::open(&out).unwrap().read().unwrap_err();
    assert!(e.to_string().contains("bytes, the manifest says"), "{e}");
    let len = std::fs::metadata(out.join(p)).unwrap().len();
    edit_manifest(&out, |j| j["parts"][1]["bytes"] = len.into());
    let e = DatasetReader::open(&out).unwrap().read().unwrap_err();
    assert!(e.to_string().contains("rows, the manifest says"), "{e}");
    // a part whose entries lie outside its range (block 0's file as block 1's)
    let dir = tempfile::tempdir().unwrap();
    let out = sample(dir.path());
    std::fs::copy(out.join("dim_0_block=0/part-0.parquet"), out.join(p)).unwrap();
    let len = std::fs::metadata(out.join(p)).unwrap().len();
    edit_manifest(&out, |j| {
        j["parts"][1]["bytes"] = len.into();
    });
    let e = DatasetReader::open(&out).unwrap().read().unwrap_err();
    assert!(
        e.to_string().contains("outside the part's range 10..20"),
        "{e}"
    );
    // a part of another spec
    let dir = tempfile::tempdir().unwrap();
    let out = sample(dir.path());
    let f32t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![30, 4], &[(vec![12, 3], 2.0)])
        .unwrap()
        .into();
    archive::write_archive(out.join(p), &f32t.into(), &ArchiveWriteOptions::default()).unwrap();
    let len = std::fs::metadata(out.join(p)).unwrap().len();
    edit_manifest(&out, |j| j["parts"][1]["bytes"] = len.into());
    let e = DatasetReader::open(&out).unwrap().read().unwrap_err();
    assert!(e.to_string().contains("differs from the dataset's"), "{e}");
    // a missing part
    let dir = tempfile::tempdir().unwrap();
    let out = sample(dir.path());
    std::fs::remove_file(out.join(p)).unwrap();
    assert!(matches!(
        DatasetReader::open(&out).unwrap().read(),
        Err(Error::Io(_))
    ));
    // other parts still read: a range that avoids it
    assert_eq!(
        DatasetReader::open(&out)
            .unwrap()
            .read_range(0, 20..30)
            .unwrap()
            .tensor
            .nnz(),
        2
    );
}

#[test]
fn matrix_market_chunks_hold_what_the_whole_file_reader_gives() {
    let files = [
        "%%MatrixMarket matrix coordinate real general\n% c\n4 5 4\n1 1 1.5\n4 5 -2\n\n2 3 1e3\n3 1 0\n",
        "%%MatrixMarket matrix coordinate integer symmetric\n4 4 4\n1 1 1\n3 1 2\n2 4 3\n4 4 4\n",
        "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n1 3 7\n",
        "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 3\n",
    ];
    for text in files {
        let whole = mtx::read_from(text.as_bytes(), "m.mtx", &ImportOptions::default()).unwrap();
        for max in [1, 2, 100] {
            let mut r =
                MtxChunks::open(text.as_bytes(), "m.mtx", &ImportOptions::default()).unwrap();
            assert_eq!(r.custom_metadata(), whole.custom_metadata.as_slice());
            let spec = TensorSpec::coo(r.shape().to_vec(), r.value_type(), IndexType::Int64);
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("ds");
            let mut w = DatasetWriter::create(
                &out,
                spec,
                &DatasetWriteOptions::new(0, 2).with_sorting(1 << 20),
            )
            .unwrap();
            while let Some(c) = r.next_chunk(max).unwrap() {
                assert!(c.nnz() <= max + 1);
                w.write_chunk(&c).unwrap();
            }
            w.finish().unwrap();
            let back = DatasetReader::open(&out).unwrap().read().unwrap().tensor;
            let dense = |t: &AnyTensor| t.convert(Format::Dense, IndexType::Int64, None).unwrap();
            assert_eq!(dense(&back), dense(&whole.tensor), "{text}");
            assert_eq!(back.nnz(), whole.tensor.nnz(), "{text}");
            let AnyTensor::Coo(c) = &back else { panic!() };
            assert!(c.is_canonical(), "{text}");
        }
    }
    // the whole-file reader's errors, from the chunked one
    for (text, needle) in [
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n",
            "truncated",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n",
            "more entries",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n",
            "row",
        ),
        (
            "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
            "diagonal",
        ),
    ] {
        let mut r = MtxChunks::open(text.as_bytes(), "bad.mtx", &ImportOptions::default()).unwrap();
        let e = loop {
            match r.next_chunk(1) {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("{text}: no error"),
                Err(e) => break e,
            }
        };
        assert!(e.to_string().contains(needle), "{text}: {e}");
        assert!(e.to_string().contains("bad.mtx"), "{e}");
    }
    let e = MtxChunks::open(
        "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 0\n".as_bytes(),
        "u.mtx",
        &ImportOptions::default().with_value_type(ValueType::UInt8),
    );
    assert!(matches!(e, Err(Error::Type { .. })));
}

#[test]
fn the_cli_writes_reads_and_inspects_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(9);
    let t = canonical(&mut r, &[500, 80], 3000);
    let input = dir.path().join("in.mtx");
    io::write_path(&input, &AnyTensor::from(shuffled(&mut r, &t)).into()).unwrap();
    let out = dir.path().join("ds");
    let s = dir.path().to_str().unwrap();
    let line = common::cli_ok(&[
        "--json",
        "convert",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "--partition-by",
        "0",
        "--rows-per-file",
        "64",
        "--memory-budget",
        "24M",
        "--row-group-size",
        "100",
    ]);
    let j: J = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (
            j["output_kind"].as_str(),
            j["streamed"].as_bool(),
            j["nnz"].as_u64(),
            j["parts"].as_u64()
        ),
        (Some("dataset"), Some(true), Some(t.nnz() as u64), Some(8))
    );
    let back = DatasetReader::open(&out).unwrap().read().unwrap();
    assert_eq!(back.tensor, AnyTensor::from(t.clone()));
    assert!(
        back.custom_metadata
            .iter()
            .any(|(k, _)| k == "arrow_sparse.mtx.symmetry")
    );
    // read back by other commands: inspect, convert to a file
    let text = common::cli_ok(&["inspect", out.to_str().unwrap()]);
    assert!(
        text.contains("dataset of 8 Parquet archives (dimension 0 in blocks of 64)"),
        "{text}"
    );
    let file = format!("{s}/back.parquet");
    common::cli_ok(&["convert", out.to_str().unwrap(), &file]);
    assert_eq!(
        archive::read_archive(&file, &Default::default())
            .unwrap()
            .tensor,
        AnyTensor::from(t.clone())
    );
    // from an archive (streamed by row groups), into CSC parts by columns
    let csc = dir.path().join("csc");
    let line = common::cli_ok(&[
        "convert",
        &file,
        csc.to_str().unwrap(),
        "--partition-by",
        "1",
        "--to",
        "csc",
        "--index-type",
        "int32",
        "--rows-per-file",
        "10",
    ]);
    assert!(
        line.contains("(parquet, streamed) ->") && line.contains("csc float64"),
        "{line}"
    );
    let back = DatasetReader::open(&csc).unwrap().read().unwrap().tensor;
    assert_eq!(
        back,
        AnyTensor::from(t.to_csx::<i32, i64>(CompressedAxis::Column).unwrap())
    );
    // usage and input errors
    let bad = common::cli(&[
        "convert",
        input.to_str().unwrap(),
        &format!("{s}/x"),
        "--partition-by",
        "0",
        "--to",
        "dense",
    ]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let bad = common::cli(&[
        "convert",
        input.to_str().unwrap(),
        &format!("{s}/x"),
        "--partition-by",
        "0",
        "--memory-budget",
        "12Q",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = common::cli(&[
        "convert",
        input.to_str().unwrap(),
        &format!("{s}/x"),
        "--rows-per-file",
        "5",
    ]);
    assert_eq!(bad.status.code(), Some(2)); // needs --partition-by
    let dup = dir.path().join("dup.mtx");
    std::fs::write(
        &dup,
        "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n1 1 2\n",
    )
    .unwrap();
    let bad = common::cli(&[
        "convert",
        dup.to_str().unwrap(),
        &format!("{s}/y"),
        "--partition-by",
        "0",
    ]);
    assert_ne!(bad.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("duplicate entry at [0, 0]"));
    assert!(!dir.path().join("y").exists());
    common::cli_ok(&[
        "convert",
        dup.to_str().unwrap(),
        &format!("{s}/y"),
        "--partition-by",
        "0",
        "--duplicates",
        "sum",
    ]);
    let y = DatasetReader::open(dir.path().join("y"))
        .unwrap()
        .read()
        .unwrap()
        .tensor;
    assert_eq!((y.nnz(), y.get::<f64>(&[0, 0]).unwrap()), (1, Some(3.0)));
}

#[test]
fn layout_spec_values_survive() {
    // column-major COO coordinates and the canonical flag as written
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(1);
    let t = canonical(&mut r, &[40, 30], 200);
    let n = t.nnz();
    let col: Vec<i32> = (0..2)
        .flat_map(|d| (0..n).map(move |k| (d, k)))
        .map(|(d, k)| t.coords()[k * 2 + d] as i32)
        .collect();
    let cm = CooTensor::<f64, i32>::try_new(
        vec![40, 30],
        CoordLayout::ColumnMajor,
        EntryOrder::from(true),
        col.into(),
        t.values().clone(),
    )
    .unwrap();
    let m: TensorMessage = AnyTensor::from(cm).into();
    write_dataset(dir.path().join("cm"), &m, &DatasetWriteOptions::new(0, 7)).unwrap();
    assert_eq!(
        DatasetReader::open(dir.path().join("cm"))
            .unwrap()
            .read()
            .unwrap(),
        m
    );
}

/// Rows `lo..hi` of a row-major COO matrix as a CSR block of its own (rows
/// renumbered from 0).
fn row_block(t: &CooTensor<f64, i64>, lo: usize, hi: usize) -> AnyTensor {
    let entries: Vec<(Vec<usize>, f64)> = (0..t.nnz())
        .map(|k| (at(t, k), t.values()[k]))
        .filter(|(c, _)| (lo..hi).contains(&c[0]))
        .map(|(c, v)| (vec![c[0] - lo, c[1]], v))
        .collect();
    CooTensor::<f64, i64>::from_entries(vec![hi - lo, t.shape()[1]], &entries)
        .unwrap()
        .to_csx::<i32, i64>(CompressedAxis::Row)
        .unwrap()
        .into()
}

/// A stream of row blocks of one matrix (uneven, one empty, one straddling
/// parts) becomes a dataset block by block, in the library and with the CLI's
/// `--stack`; `--blocks` writes a dataset back out as such a stream, each
/// message saying where it goes, and stacking that gives the same dataset.
#[test]
fn streams_of_blocks_go_into_datasets_and_come_back_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(31);
    let t = canonical(&mut r, &[1000, 120], 9000);
    let csr: AnyTensor = t.to_csx::<i32, i64>(CompressedAxis::Row).unwrap().into();
    let cuts = [0, 130, 130, 400, 401, 777, 1000]; // [130, 130) is empty
    let blocks: Vec<AnyTensor> = cuts.windows(2).map(|w| row_block(&t, w[0], w[1])).collect();

    // the library: write_block at each block's offset
    let spec = TensorSpec::of(&csr.clone().into()).unwrap();
    let out = dir.path().join("lib");
    let mut w = DatasetWriter::create(&out, spec, &DatasetWriteOptions::new(0, 100)).unwrap();
    for (b, w0) in blocks.iter().zip(cuts) {
        w.write_block(w0, b).unwrap();
    }
    // a block that does not fit is refused, nothing written
    let e = w.write_block(990, &blocks[2]).unwrap_err();
    assert!(matches!(e, Error::Shape { .. }), "{e}");
    w.finish().unwrap();
    assert_eq!(
        DatasetReader::open(&out).unwrap().read().unwrap().tensor,
        csr
    );

    // the CLI: a plain stream of blocks (no metadata) stacked in order
    let stream = dir.path().join("blocks.arrow");
    arrow_sparse::ipc::write_tensor_stream_iter(
        &stream,
        blocks.iter().map(|b| Ok(TensorMessage::from(b.clone()))),
        &Default::default(),
    )
    .unwrap();
    let stacked = dir.path().join("stacked");
    let line = common::cli_ok(&[
        "--json",
        "convert",
        stream.to_str().unwrap(),
        stacked.to_str().unwrap(),
        "--partition-by",
        "0",
        "--stack",
        "--rows-per-file",
        "100",
    ]);
    let j: J = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (j["nnz"].as_u64(), j["parts"].as_u64()),
        (Some(t.nnz() as u64), Some(10))
    );
    let back = DatasetReader::open(&stacked).unwrap();
    assert_eq!(back.read().unwrap().tensor, csr);

    // --blocks: the parts as a stream, each message saying where it goes
    let again = dir.path().join("again.arrow");
    let line = common::cli_ok(&[
        "--json",
        "convert",
        stacked.to_str().unwrap(),
        again.to_str().unwrap(),
        "--blocks",
    ]);
    let j: J = serde_json::from_str(&line).unwrap();
    assert_eq!(j["blocks"].as_u64(), Some(back.parts().len() as u64));
    let messages = arrow_sparse::ipc::read_tensor_stream(&again, &Default::default()).unwrap();
    for (m, p) in messages.iter().zip(back.parts()) {
        let b = DatasetBlock::of(m).unwrap().unwrap();
        assert_eq!(
            (b.dim, b.offset, b.shape.as_slice()),
            (0, p.range.start, &[1000, 120][..])
        );
        assert_eq!(m.tensor.shape(), &[p.range.len(), 120]);
        assert_eq!(
            m.tensor,
            back.read_block(back.parts().iter().position(|q| q == p).unwrap())
                .unwrap()
        );
    }
    // and stacked again (in parts of another size): the same tensor
    let restacked = dir.path().join("restacked");
    common::cli_ok(&[
        "convert",
        again.to_str().unwrap(),
        restacked.to_str().unwrap(),
        "--partition-by",
        "0",
        "--stack",
        "--rows-per-file",
        "333",
    ]);
    let r2 = DatasetReader::open(&restacked).unwrap();
    assert_eq!(r2.read().unwrap().tensor, csr);
    assert!(
        r2.spec()
            .custom_metadata
            .iter()
            .all(|(k, _)| k != DATASET_BLOCK_KEY)
    );

    // blocks that lie about where they go, or half of them saying nothing
    let mut lying = messages.clone();
    lying[1]
        .custom_metadata
        .retain(|(k, _)| k != DATASET_BLOCK_KEY);
    lying[1].custom_metadata.push((
        DATASET_BLOCK_KEY.into(),
        r#"{"dim":0,"offset":999,"shape":[1000,120]}"#.into(),
    ));
    let mut mixed = messages.clone();
    mixed[2]
        .custom_metadata
        .retain(|(k, _)| k != DATASET_BLOCK_KEY);
    let mut wrong_shape = blocks.clone();
    wrong_shape[3] = row_block(&canonical(&mut r, &[50, 7], 10), 0, 50);
    for (name, bad) in [
        ("lying", lying),
        ("mixed", mixed),
        (
            "wrong_shape",
            wrong_shape.into_iter().map(TensorMessage::from).collect(),
        ),
    ] {
        let path = dir.path().join(format!("{name}.arrow"));
        arrow_sparse::ipc::write_tensor_stream(&path, &bad, &Default::default()).unwrap();
        let o = common::cli(&[
            "convert",
            path.to_str().unwrap(),
            dir.path().join(name).to_str().unwrap(),
            "--partition-by",
            "0",
            "--stack",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(!dir.path().join(name).exists(), "{name}");
    }
}

/// pyarrow (Hive-partitioned dataset), scipy and DuckDB read the parts of a
/// dataset as one table and compute the SpMV arrow-sparse's kernel computes
/// (`tests/python/check_dataset.py`).
#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn pyarrow_scipy_and_duckdb_read_a_dataset_as_one_table() {
    let python = common::python();
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(21);
    let f = canonical(&mut r, &[900, 400], 8000);
    let entries: Vec<(Vec<usize>, i64)> = (0..f.nnz())
        .map(|k| (at(&f, k), (k % 23) as i64 - 11))
        .collect();
    let i: AnyTensor = CooTensor::<i64, i64>::from_entries(vec![900, 400], &entries)
        .unwrap()
        .into();
    let xi: Vec<i64> = (0..400).map(|j| j % 9 - 4).collect();
    let xf: Vec<f64> = (0..400).map(|j| (j as f64 * 0.11).cos()).collect();
    let mut cases = Vec::new();
    for (name, t, block) in [
        ("ints", i.clone(), 100),
        ("floats", AnyTensor::from(f.clone()), 64),
    ] {
        let out = dir.path().join(name);
        write_dataset(
            &out,
            &t.clone().into(),
            &DatasetWriteOptions::new(0, block).with_archive_options(small_groups()),
        )
        .unwrap();
        let reader = DatasetReader::open(&out).unwrap();
        let in_block_2 = reader
            .read_range(0, 2 * block..3 * block)
            .unwrap()
            .tensor
            .nnz();
        let (x, y) = if name == "ints" {
            (
                serde_json::json!(xi),
                serde_json::json!(spmv(&t, &xi).unwrap()),
            )
        } else {
            (
                serde_json::json!(xf),
                serde_json::json!(spmv(&t, &xf).unwrap()),
            )
        };
        cases.push(serde_json::json!({
            "dir": out, "block": block, "x": x, "y": y, "nnz": t.nnz(),
            "shape": t.shape(), "rows_in_block": [2, in_block_2],
        }));
    }
    let json = dir.path().join("cases.json");
    std::fs::write(&json, serde_json::Value::from(cases).to_string()).unwrap();
    let script = common::repo().join("tests/python/check_dataset.py");
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stderr}");
    assert!(out.status.success(), "check_dataset.py failed:\n{stderr}");
}

/// Without the venv, a plain run reports the Python test as ignored, and
/// `--include-ignored` makes it fail: it never passes.
#[test]
fn without_the_venv_the_python_test_never_passes() {
    let tests =
        common::assert_missing_program_is_never_a_pass("ARROW_SPARSE_PYTHON", "Python venv");
    assert_eq!(
        tests,
        ["pyarrow_scipy_and_duckdb_read_a_dataset_as_one_table"]
    );
}

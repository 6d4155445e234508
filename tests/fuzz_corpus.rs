//! The generated part of the fuzz targets' seed corpora (`fuzz/corpus/<target>/gen_*`):
//! valid files of every kind the targets read, written by the crate's own writers
//! (archives with several row groups, tables with sparse tensor columns as Arrow IPC
//! files, IPC streams and Parquet, GCS / DM tensor messages, `.npz` / `.mtx` /
//! `.tns`). The test regenerates them and fails if a committed file differs or is
//! missing (a writer changed: rerun with `ARROW_SPARSE_BLESS=1` to rewrite them,
//! then review the diff). The other seeds are copies of `tests/data` and
//! `format/golden` files (fuzz/README.md).

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::Schema;
use arrow_sparse::archive::{self, ArchiveCompression, ArchiveWriteOptions};
use arrow_sparse::column::{SparseTensorArray, files as column_io};
use arrow_sparse::dims::DimMap;
use arrow_sparse::io::{
    ImportOptions, MtxWriteOptions, NpzWriteOptions, TnsWriteOptions, mtx, npz, tns,
};
use arrow_sparse::ipc::{self, StreamWriteOptions, TensorMessage};
use arrow_sparse::tensor::level::LevelFormat;
use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, DenseTensor, Format, IndexType};

type Files = Vec<(String, String, Vec<u8>)>; // (target, name, bytes)

fn coo2() -> CooTensor<f64, i64> {
    CooTensor::<f64, i64>::from_entries(
        vec![5, 4],
        &[
            (vec![0, 1], 1.5),
            (vec![2, 0], -2.0),
            (vec![2, 3], 3.25),
            (vec![4, 2], 4.0),
        ],
    )
    .unwrap()
}

fn coo3() -> CooTensor<f32, i32> {
    CooTensor::<f32, i32>::from_entries(
        vec![3, 4, 2],
        &[
            (vec![0, 0, 1], 1.0),
            (vec![1, 2, 0], 2.0),
            (vec![1, 3, 1], -3.0),
            (vec![2, 1, 1], 0.5),
        ],
    )
    .unwrap()
}

/// One tensor of every format the writers take.
fn tensors() -> Vec<(&'static str, AnyTensor)> {
    let coo2 = coo2();
    let coo3 = coo3();
    let any3: AnyTensor = coo3.clone().into();
    let gcs_map = DimMap::try_new(vec![3, 4, 2], vec![0, 1, 2], vec![2]).unwrap();
    let dm_map = DimMap::try_new(vec![5, 4], vec![1, 0], vec![1]).unwrap();
    vec![
        ("coo_f64_i64", coo2.clone().into()),
        (
            "csr_f64_i32",
            coo2.to_csx::<i32, i32>(CompressedAxis::Row).unwrap().into(),
        ),
        (
            "csc_f64_i64",
            coo2.to_csx::<i64, i64>(CompressedAxis::Column)
                .unwrap()
                .into(),
        ),
        (
            "csf_f32_i32",
            coo3.to_csf::<i32, i32>(&[1, 0, 2]).unwrap().into(),
        ),
        (
            "dense_i16",
            DenseTensor::<i16>::try_new(vec![2, 3], vec![0, 1, 0, -2, 0, 3].into())
                .unwrap()
                .into(),
        ),
        (
            "gcs_f32_i32",
            any3.to_gcs(gcs_map, CompressedAxis::Row, IndexType::Int32)
                .unwrap(),
        ),
        (
            "dm_f64",
            AnyTensor::from(coo2.clone())
                .to_dm(dm_map.clone(), Format::Csr, IndexType::Int64)
                .unwrap(),
        ),
        (
            // views: rotate, then take (repeats, any order)
            "dm_views_f64",
            match AnyTensor::from(coo2.clone())
                .to_dm(dm_map, Format::Coo, IndexType::Int64)
                .unwrap()
            {
                AnyTensor::Dm(d) => {
                    AnyTensor::Dm(d.rotate(0, 2).unwrap().take(1, &[3, 0, 3, 2]).unwrap())
                }
                _ => unreachable!(),
            },
        ),
        (
            // level tensors: doubly compressed, sorted COO (singleton levels), and
            // a dense level above compressed ones in a permuted order, with
            // coordinates and positions of different widths
            "level_dcsr_f64_i32",
            AnyTensor::from(coo2.clone())
                .to_level(&LevelFormat::dcsr(), IndexType::Int32, IndexType::Int32)
                .unwrap(),
        ),
        (
            "level_coo_f32_i64",
            any3.to_level(
                &LevelFormat::coo(3).unwrap(),
                IndexType::Int64,
                IndexType::Int64,
            )
            .unwrap(),
        ),
        (
            "level_dense_csf_f32_i16",
            any3.to_level(
                &LevelFormat::csf_with_dense(1, vec![2, 0, 1]).unwrap(),
                IndexType::Int16,
                IndexType::Int32,
            )
            .unwrap(),
        ),
    ]
}

fn generate() -> Files {
    let mut out: Files = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    let all = tensors();

    // tensor messages: one stream of every tensor, and one message per file
    let mut stream = Vec::new();
    let mut w = ipc::TensorStreamWriter::new(&mut stream);
    for (name, t) in &all {
        w.write(t).unwrap();
        let one = ipc::encode(t, &[], &StreamWriteOptions::default())
            .unwrap()
            .to_vec();
        for target in ["ipc_stream", "ipc_mmap"] {
            out.push((target.into(), format!("gen_{name}.arrow"), one.clone()));
        }
    }
    w.finish().unwrap();
    for target in ["ipc_stream", "ipc_mmap"] {
        out.push((target.into(), "gen_stream_all.arrow".into(), stream.clone()));
    }

    // Parquet archives: two rows per row group, uncompressed (one zstd)
    for (name, t) in &all {
        let path = dir.path().join(format!("{name}.parquet"));
        let options = ArchiveWriteOptions::default()
            .with_row_group_size(2)
            .with_compression(if *name == "coo_f64_i64" {
                ArchiveCompression::Zstd(1)
            } else {
                ArchiveCompression::Uncompressed
            });
        archive::write_archive(&path, &t.clone().into(), &options).unwrap();
        out.push((
            "archive".into(),
            format!("gen_{name}.parquet"),
            std::fs::read(&path).unwrap(),
        ));
    }

    // tables with a sparse tensor column (two tensors of one type, a null row):
    // an Arrow IPC file and a Parquet file by the crate, an IPC stream by arrow-ipc
    for (name, t) in &all {
        if matches!(t.format(), Format::Dense | Format::Dm) {
            continue; // no column type for these
        }
        let Ok(column) = SparseTensorArray::from_rows(
            &arrow_sparse::column::SparseTensorType::of(t).unwrap(),
            [Some(t), None, Some(t)],
        ) else {
            continue;
        };
        let schema = Arc::new(Schema::new(vec![column.field("t")]));
        let batch = RecordBatch::try_new(schema.clone(), vec![column.into_array()]).unwrap();
        for (target, ext) in [("column_ipc", "arrow"), ("column_parquet", "parquet")] {
            let path = dir.path().join(format!("{name}.{ext}"));
            column_io::write_batches(&path, schema.clone(), std::slice::from_ref(&batch)).unwrap();
            out.push((
                target.into(),
                format!("gen_table_{name}.{ext}"),
                std::fs::read(&path).unwrap(),
            ));
        }
        let mut bytes = Vec::new();
        let mut sw = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, &schema).unwrap();
        sw.write(&batch).unwrap();
        sw.finish().unwrap();
        drop(sw);
        out.push((
            "column_ipc".into(),
            format!("gen_table_{name}.arrows"),
            bytes,
        ));
    }

    // .npz (stored, so the fuzzer sees the arrays), .mtx, .tns; not the level
    // tensors, which these kinds store as their plain entries (seeds like the rest)
    for (name, t) in &all {
        if t.format() == Format::Level {
            continue;
        }
        let m: TensorMessage = t.clone().into();
        let opts = NpzWriteOptions::default().with_compressed(false);
        if let Ok(c) = npz::write_to(Cursor::new(Vec::new()), &m, &opts) {
            out.push(("npz".into(), format!("gen_{name}.npz"), c.into_inner()));
        }
        let mut text = Vec::new();
        if mtx::write_to(&mut text, &m, &MtxWriteOptions::default()).is_ok() {
            out.push(("mtx".into(), format!("gen_{name}.mtx"), text));
        }
        let mut text = Vec::new();
        if tns::write_to(&mut text, &m, &TnsWriteOptions::default()).is_ok() {
            out.push(("tns".into(), format!("gen_{name}.tns"), text));
        }
    }
    // every generated file reads back with the reader its target fuzzes
    for (target, name, bytes) in &out {
        let ok = match target.as_str() {
            "npz" => npz::read_from(Cursor::new(bytes), name, &ImportOptions::default()).is_ok(),
            "mtx" => mtx::read_from(&bytes[..], name, &ImportOptions::default()).is_ok(),
            "tns" => tns::read_from(&bytes[..], name, &ImportOptions::default()).is_ok(),
            _ => true,
        };
        assert!(ok, "{target}/{name} does not read back");
    }
    out
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus")
}

#[test]
fn generated_fuzz_seeds_are_committed_and_current() {
    let files = generate();
    let bless = std::env::var_os("ARROW_SPARSE_BLESS").is_some();
    let mut stale = Vec::new();
    for (target, name, bytes) in &files {
        let path = corpus_dir().join(target).join(name);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(&bytes[..]) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "generated fuzz seeds missing or stale (rerun with ARROW_SPARSE_BLESS=1 and review):\n{}",
        stale.join("\n")
    );
    // every target has seeds, and the committed corpus stays small (< 2 MB)
    let mut total = 0u64;
    for target in [
        "ipc_stream",
        "ipc_mmap",
        "archive",
        "column_ipc",
        "column_parquet",
        "npz",
        "mtx",
        "tns",
    ] {
        let dir = corpus_dir().join(target);
        let n = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| {
                total += e.unwrap().metadata().unwrap().len();
            })
            .count();
        assert!(n >= 5, "{}: {n} seeds", dir.display());
    }
    assert!(total < 2 << 20, "committed seed corpus is {total} bytes");
}

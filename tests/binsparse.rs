//! Binsparse NPZ archives and (feature `hdf5`) HDF5 files: round trips in Rust,
//! the metadata through `.arrow` and `.parquet`, the bad-input corpora
//! `tests/data/bad/binsparse/` and `tests/data/bad/binsparse-h5/`, and interop
//! with the PyPI reference `binsparse` (`tests/python/check_binsparse.py`; its
//! HDF5 files through h5py).

mod common;

use std::io::Cursor;
use std::path::{Path, PathBuf};

use arrow_sparse::io::binsparse::BinsparseFormat;
use arrow_sparse::io::{ImportOptions, NpzFlavor, NpzWriteOptions, meta, npz};
use arrow_sparse::ipc::TensorMessage;
use arrow_sparse::{AnyTensor, CooTensor, Error, IndexType, ValueType};
use serde_json::{Value as J, json};

/// Row-major dense contents as `f64`s.
fn dense(t: &AnyTensor) -> Vec<f64> {
    match t.value_type() {
        ValueType::Int8 => dense_as::<i8>(t),
        ValueType::Int16 => dense_as::<i16>(t),
        ValueType::Int32 => dense_as::<i32>(t),
        ValueType::Int64 => dense_as::<i64>(t),
        ValueType::UInt8 => dense_as::<u8>(t),
        ValueType::UInt16 => dense_as::<u16>(t),
        ValueType::UInt32 => dense_as::<u32>(t),
        ValueType::UInt64 => dense_as::<u64>(t),
        ValueType::Float16 => dense_as::<half::f16>(t),
        ValueType::Float32 => dense_as::<f32>(t),
        ValueType::Float64 => dense_as::<f64>(t),
        other => panic!("value type {other:?}"),
    }
}

fn dense_as<V: arrow_sparse::Value>(t: &AnyTensor) -> Vec<f64> {
    let shape = t.shape().to_vec();
    let size: usize = shape.iter().product();
    let mut out = vec![0.0; size];
    t.for_each_entry::<V>(&mut |c: &[usize], v: V| {
        let mut off = 0;
        for (x, n) in c.iter().zip(&shape) {
            off = off * n + x;
        }
        let mut s = String::new();
        v.write_json(&mut s);
        out[off] = s.trim_matches('"').parse().unwrap();
    })
    .unwrap();
    out
}

fn meta_of<'a>(m: &'a TensorMessage, key: &str) -> Option<&'a str> {
    m.custom_metadata
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn descriptor(m: &TensorMessage) -> J {
    serde_json::from_str(meta_of(m, meta::BINSPARSE_DESCRIPTOR).expect("a descriptor")).unwrap()
}

fn value_dtype(t: &AnyTensor) -> String {
    t.value_type().name().to_string()
}

/// Through an IPC stream and a Parquet archive: same tensor, same metadata.
fn through_arrow_and_parquet(m: &TensorMessage, dir: &Path) -> TensorMessage {
    // (Arrow IPC has no uint64 indices: those go to Parquet only)
    let back = if m.tensor.index_type() == Some(IndexType::UInt64) {
        m.clone()
    } else {
        let arrow = dir.join("x.arrow");
        arrow_sparse::ipc::write_tensor_stream(&arrow, [m], &Default::default()).unwrap();
        let mut back = arrow_sparse::ipc::read_tensor_stream(&arrow, &Default::default()).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].custom_metadata, m.custom_metadata);
        assert_eq!(dense(&back[0].tensor), dense(&m.tensor));
        back.remove(0)
    };
    let pq = dir.join("x.parquet");
    arrow_sparse::write_archive(&pq, &back, &Default::default()).unwrap();
    let back = arrow_sparse::read_archive(&pq, &Default::default()).unwrap();
    for (k, v) in &m.custom_metadata {
        assert_eq!(meta_of(&back, k), Some(v.as_str()), "{k} after .parquet");
    }
    assert_eq!(dense(&back.tensor), dense(&m.tensor));
    back
}

fn write_npz(m: &TensorMessage, options: &NpzWriteOptions) -> Vec<u8> {
    npz::write_to(Cursor::new(Vec::new()), m, options)
        .unwrap()
        .into_inner()
}

fn read_npz(bytes: &[u8]) -> Result<TensorMessage, Error> {
    npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default())
}

fn sample(vt: ValueType, it: IndexType) -> AnyTensor {
    // through the Matrix Market reader, which takes the value and index types
    let text = "%%MatrixMarket matrix coordinate integer general\n5 7 5\n1 7 1\n5 1 2\n3 4 3\n1 2 4\n5 7 5\n";
    let options = ImportOptions::default()
        .with_value_type(vt)
        .with_index_type(it);
    arrow_sparse::io::mtx::read_from(text.as_bytes(), "sample.mtx", &options)
        .unwrap()
        .tensor
}

const ALL_2D: [BinsparseFormat; 10] = [
    BinsparseFormat::Csr,
    BinsparseFormat::Csc,
    BinsparseFormat::Dcsr,
    BinsparseFormat::Dcsc,
    BinsparseFormat::Coo,
    BinsparseFormat::Coor,
    BinsparseFormat::Cooc,
    BinsparseFormat::Dmat,
    BinsparseFormat::Dmatr,
    BinsparseFormat::Dmatc,
];

#[test]
fn every_predefined_format_round_trips_in_rust_with_its_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    for (vt, it) in [
        (ValueType::Float64, IndexType::Int64),
        (ValueType::Float32, IndexType::Int32),
        (ValueType::Int16, IndexType::UInt16),
        (ValueType::UInt8, IndexType::Int8),
    ] {
        let t = sample(vt, it);
        for f in ALL_2D {
            let options = NpzWriteOptions::default().with_binsparse_format(f);
            let bytes = write_npz(&t.clone().into(), &options);
            let back = read_npz(&bytes).unwrap();
            assert_eq!(dense(&back.tensor), dense(&t), "{f:?} {vt:?} {it:?}");
            assert_eq!(back.tensor.value_type(), vt);
            assert_eq!(meta_of(&back, meta::NPZ_FLAVOR), Some("binsparse"));
            let d = descriptor(&back);
            assert_eq!(d["binsparse"]["format"], f.name(), "{f:?}");
            assert_eq!(d["binsparse"]["data_types"]["values"], vt.name());
            // the metadata survives .arrow and .parquet, and writing again
            // (default options) gives the same format back
            let again = through_arrow_and_parquet(&back, dir.path());
            let bytes2 = write_npz(&again, &NpzWriteOptions::default());
            let back2 = read_npz(&bytes2).unwrap();
            assert_eq!(descriptor(&back2)["binsparse"]["format"], f.name());
            assert_eq!(dense(&back2.tensor), dense(&t));
        }
    }
}

#[test]
fn iso_structure_fill_and_extra_keys_survive_and_are_re_emitted() {
    // a hand-made descriptor: symmetric lower CSR, iso values, fill, extra keys
    let dir = tempfile::tempdir().unwrap();
    let t: AnyTensor = CooTensor::<f64, i32>::from_entries(
        vec![3, 3],
        &[(vec![0, 0], 7.0), (vec![1, 0], 7.0), (vec![2, 1], 7.0)],
    )
    .unwrap()
    .into();
    let old = json!({
        "binsparse": {
            "version": "0.1.0", "format": "CSR", "shape": [3, 3], "number_of_stored_values": 3,
            "structure": "symmetric_lower", "fill": true, "note": {"a": [1, 2]},
            "data_types": {"values": "iso[float64]", "pointers_to_1": "int32", "indices_1": "int32"}
        },
        "outside": "kept"
    });
    let msg = TensorMessage {
        tensor: t,
        custom_metadata: vec![
            (meta::NPZ_FLAVOR.into(), "binsparse".into()),
            (meta::BINSPARSE_DESCRIPTOR.into(), old.to_string()),
        ],
    };
    // the tensor above is one triangle: not symmetric itself, so no structure
    let back = read_npz(&write_npz(&msg, &NpzWriteOptions::default())).unwrap();
    let d = descriptor(&back);
    assert!(d["binsparse"].get("structure").is_none());
    assert_eq!(d["binsparse"]["data_types"]["values"], "iso[float64]");
    assert_eq!(d["binsparse"]["fill"], true);
    assert_eq!(d["binsparse"]["note"], json!({"a": [1, 2]}));
    assert_eq!(d["outside"], "kept");
    // a symmetric matrix: one triangle written, both read back
    let full: AnyTensor = CooTensor::<f64, i32>::from_entries(
        vec![3, 3],
        &[
            (vec![0, 0], 7.0),
            (vec![1, 0], 7.0),
            (vec![0, 1], 7.0),
            (vec![2, 1], 7.0),
            (vec![1, 2], 7.0),
        ],
    )
    .unwrap()
    .into();
    let msg = TensorMessage {
        tensor: full.clone(),
        custom_metadata: msg.custom_metadata,
    };
    let bytes = write_npz(&msg, &NpzWriteOptions::default());
    let back = read_npz(&bytes).unwrap();
    let d = descriptor(&back);
    assert_eq!(d["binsparse"]["structure"], "symmetric_lower");
    assert_eq!(d["binsparse"]["number_of_stored_values"], 3);
    assert_eq!(dense(&back.tensor), dense(&full));
    let again = through_arrow_and_parquet(&back, dir.path());
    assert_eq!(descriptor(&again), d);
}

#[test]
fn vectors_nd_tensors_and_the_default_formats() {
    let v: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![9], &[(vec![8], -4), (vec![2], 5)])
        .unwrap()
        .into();
    for (f, name) in [
        (None, "CVEC"),
        (Some(BinsparseFormat::Cvec), "CVEC"),
        (Some(BinsparseFormat::Dvec), "DVEC"),
    ] {
        let mut o = NpzWriteOptions::default().with_flavor(NpzFlavor::Binsparse);
        o.binsparse_format = f;
        let back = read_npz(&write_npz(&v.clone().into(), &o)).unwrap();
        assert_eq!(descriptor(&back)["binsparse"]["format"], name);
        assert_eq!(dense(&back.tensor), dense(&v));
    }
    let t3: AnyTensor = CooTensor::<f32, i16>::from_entries(
        vec![2, 3, 4],
        &[(vec![1, 2, 3], 1.5), (vec![0, 0, 1], -2.0)],
    )
    .unwrap()
    .into();
    let o = NpzWriteOptions::default().with_flavor(NpzFlavor::Binsparse);
    let back = read_npz(&write_npz(&t3.clone().into(), &o)).unwrap();
    let d = descriptor(&back);
    assert_eq!(d["binsparse"]["format"], "custom");
    assert_eq!(d["binsparse"]["custom"]["level"]["level_desc"], "sparse");
    assert_eq!(d["binsparse"]["custom"]["level"]["rank"], 3);
    assert_eq!(dense(&back.tensor), dense(&t3));
    assert_eq!(back.tensor.index_type(), Some(IndexType::Int16));
    let d3 = t3
        .convert(arrow_sparse::Format::Dense, IndexType::Int64, None)
        .unwrap();
    let back = read_npz(&write_npz(&d3.into(), &o)).unwrap();
    assert_eq!(
        descriptor(&back)["binsparse"]["custom"]["level"]["level_desc"],
        "dense"
    );
    assert_eq!(dense(&back.tensor), dense(&t3));
    // a 2-D format for a vector, float16 values: typed errors
    let o = NpzWriteOptions::default().with_binsparse_format(BinsparseFormat::Csr);
    assert!(matches!(
        npz::write_to(Cursor::new(Vec::new()), &v.clone().into(), &o),
        Err(Error::Unsupported(_))
    ));
    let h = sample(ValueType::Float16, IndexType::Int64);
    assert!(matches!(
        npz::write_to(
            Cursor::new(Vec::new()),
            &h.into(),
            &NpzWriteOptions::default().with_flavor(NpzFlavor::Binsparse)
        ),
        Err(Error::Unsupported(_))
    ));
}

/// The containers the interop test covers: NPZ, and HDF5 with the feature.
const CONTAINERS: &str = if cfg!(feature = "hdf5") {
    "npz,h5"
} else {
    "npz"
};

/// Read a Binsparse `.npz` or (feature `hdf5`) `.h5` file.
fn read_any(path: &Path) -> Result<TensorMessage, Error> {
    #[cfg(feature = "hdf5")]
    if path.extension().is_some_and(|e| e == "h5") {
        return arrow_sparse::io::hdf5::read(path, &ImportOptions::default());
    }
    npz::read(path, &ImportOptions::default())
}

/// Write a Binsparse file in the container `path`'s extension names (`.h5`:
/// compressed datasets when `compressed`).
fn write_any(
    path: &Path,
    m: &TensorMessage,
    format: Option<BinsparseFormat>,
    compressed: bool,
) -> Result<(), Error> {
    #[cfg(feature = "hdf5")]
    if path.extension().is_some_and(|e| e == "h5") {
        let o = arrow_sparse::io::Hdf5WriteOptions {
            binsparse_format: format,
            compressed,
        };
        return arrow_sparse::io::hdf5::write(path, m, &o);
    }
    let _ = compressed;
    let mut o = NpzWriteOptions::default();
    if let Some(f) = format {
        o = o.with_binsparse_format(f);
    }
    npz::write(path, m, &o)
}

fn bad_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad/binsparse")
}

/// Every file of the corpus gives a typed error (never a panic), and the error
/// names what the file name says is wrong.
#[test]
fn bad_input_corpus_gives_typed_errors() {
    let mut n = 0;
    let mut failures = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(bad_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "npz"))
        .collect();
    files.sort();
    let expect: serde_json::Map<String, J> =
        serde_json::from_str(&std::fs::read_to_string(bad_dir().join("expect.json")).unwrap())
            .unwrap();
    for p in &files {
        let name = p.file_name().unwrap().to_str().unwrap();
        let e = npz::read(p, &ImportOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{name} was read"));
        let want = expect
            .get(name)
            .and_then(J::as_array)
            .unwrap_or_else(|| panic!("{name} is not in expect.json"));
        let (kind, text) = (want[0].as_str().unwrap(), want[1].as_str().unwrap());
        let ok_kind = match kind {
            "parse" => matches!(e, Error::Parse { .. }),
            "unsupported" => matches!(e, Error::Unsupported(_)),
            "bounds" => matches!(e, Error::IndexOutOfBounds { .. }),
            "limit" => matches!(e, Error::Limit { .. }),
            "invariant" => matches!(e, Error::Invariant { .. } | Error::Length { .. }),
            _ => false,
        };
        if !ok_kind || !e.to_string().contains(text) {
            failures.push(format!(
                "{name}: expected a {kind} error saying {text:?}, got {e:?}"
            ));
        }
        n += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(n, expect.len(), "every expect.json entry has its file");
    assert!(n >= 20, "{n} files");
}

/// Every file of the HDF5 corpus (`tests/data/bad/binsparse-h5/`, made by
/// `tests/python/make_bad_binsparse_h5.py`: a non-HDF5 file, an HDF5 file that is
/// not Binsparse, bad descriptor attributes, missing datasets, datasets of the
/// wrong dtype, length or rank, a dataset declaring 10^12 values) gives the typed
/// error expect.json names.
#[cfg(feature = "hdf5")]
#[test]
fn bad_hdf5_inputs_give_typed_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad/binsparse-h5");
    let expect: serde_json::Map<String, J> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expect.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    for (name, want) in &expect {
        let e = arrow_sparse::io::hdf5::read(dir.join(name), &ImportOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{name} was read"));
        let (kind, text) = (want[0].as_str().unwrap(), want[1].as_str().unwrap());
        let ok_kind = match kind {
            "parse" => matches!(e, Error::Parse { .. }),
            "limit" => matches!(e, Error::Limit { .. }),
            _ => false,
        };
        if !ok_kind || !e.to_string().contains(text) {
            failures.push(format!(
                "{name}: expected a {kind} error saying {text:?}, got {e:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "h5")
        })
        .count();
    assert_eq!(files, expect.len(), "every file has its expect.json entry");
    assert!(files >= 10);
}

/// HDF5 round trips in Rust: every predefined format, contiguous and deflated,
/// the same tensor and descriptor as through NPZ; writing is atomic (a failed
/// write leaves the old file).
#[cfg(feature = "hdf5")]
#[test]
fn every_predefined_format_round_trips_through_hdf5() {
    use arrow_sparse::io::{Hdf5WriteOptions, hdf5};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.h5");
    for (vt, it) in [
        (ValueType::Float64, IndexType::Int64),
        (ValueType::Int16, IndexType::UInt16),
        (ValueType::UInt8, IndexType::Int8),
    ] {
        let t = sample(vt, it);
        for f in ALL_2D {
            for compressed in [false, true] {
                let o = Hdf5WriteOptions {
                    binsparse_format: Some(f),
                    compressed,
                };
                hdf5::write(&path, &t.clone().into(), &o).unwrap();
                let back = hdf5::read(&path, &ImportOptions::default()).unwrap();
                assert_eq!(dense(&back.tensor), dense(&t), "{f:?} {vt:?} {it:?}");
                assert_eq!(back.tensor.value_type(), vt);
                assert_eq!(descriptor(&back)["binsparse"]["format"], f.name());
                // the same tensor as through NPZ
                let npz_back = read_npz(&write_npz(
                    &t.clone().into(),
                    &NpzWriteOptions::default().with_binsparse_format(f),
                ))
                .unwrap();
                assert_eq!(back.tensor, npz_back.tensor, "{f:?}");
            }
        }
    }
    // a failed write (float16 values) leaves the file as it was, and no temporary
    let before = std::fs::read(&path).unwrap();
    let h = sample(ValueType::Float16, IndexType::Int64);
    assert!(matches!(
        hdf5::write(&path, &h.into(), &Hdf5WriteOptions::default()),
        Err(Error::Unsupported(_))
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // through io::write_path / read_path by extension (.hdf5 too)
    let p2 = dir.path().join("m.hdf5");
    let t = sample(ValueType::Float32, IndexType::Int32);
    arrow_sparse::io::write_path(&p2, &t.clone().into()).unwrap();
    assert_eq!(
        dense(&arrow_sparse::io::read_path(&p2).unwrap().tensor),
        dense(&t)
    );
}

/// Without the feature, `.h5` files are an `Error::Unsupported` naming it.
#[cfg(not(feature = "hdf5"))]
#[test]
fn without_the_hdf5_feature_h5_files_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let t = sample(ValueType::Float64, IndexType::Int64);
    for name in ["m.h5", "m.hdf5"] {
        let p = dir.path().join(name);
        let e = arrow_sparse::io::write_path(&p, &t.clone().into()).unwrap_err();
        assert!(
            matches!(&e, Error::Unsupported(m) if m.contains("feature `hdf5`")),
            "{e}"
        );
        std::fs::write(&p, b"x").unwrap();
        let e = arrow_sparse::io::read_path(&p).unwrap_err();
        assert!(
            matches!(&e, Error::Unsupported(m) if m.contains("feature `hdf5`")),
            "{e}"
        );
    }
}

/// The reference writes every predefined format (and custom ones) with several
/// value and index types, iso values, structure, fill and extra keys; arrow-sparse
/// reads each with exactly its entries, keeps the descriptor through `.arrow` and
/// `.parquet`, and writes it back; the reference reads what arrow-sparse wrote
/// (those files and every predefined format written from Rust tensors) with the
/// same entries and descriptor fields.
#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn the_reference_implementation_reads_ours_and_we_read_its() {
    let python = common::python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_binsparse.py");
    let theirs = tempfile::tempdir().unwrap();
    let ours = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(&python)
        .arg(&script)
        .arg("write")
        .arg(theirs.path())
        .arg(CONTAINERS)
        .status()
        .unwrap();
    assert!(status.success(), "check_binsparse.py write failed");
    let manifest: serde_json::Map<String, J> = serde_json::from_str(
        &std::fs::read_to_string(theirs.path().join("manifest.json")).unwrap(),
    )
    .unwrap();
    assert!(manifest.len() >= 80, "{} reference files", manifest.len());
    let mut out = serde_json::Map::new();
    for (name, want) in &manifest {
        let msg = read_any(&theirs.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want_values: Vec<f64> = want["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let shape: Vec<usize> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(msg.tensor.shape(), &shape[..], "{name}");
        assert_eq!(dense(&msg.tensor), want_values, "{name}: entries");
        let dtype = want["dtype"].as_str().unwrap();
        let dtype = if dtype == "bool" { "uint8" } else { dtype };
        assert_eq!(value_dtype(&msg.tensor), dtype, "{name}: value type");
        // DCSR / DCSC (predefined, or as custom sparse-sparse chains) are CSF
        if name.contains("DCSR") || name.contains("DCSC") {
            let AnyTensor::Csf(c) = &msg.tensor else {
                panic!("{name} read as {:?}", msg.tensor.format())
            };
            let order: &[usize] = if name.contains("DCSR") {
                &[0, 1]
            } else {
                &[1, 0]
            };
            assert_eq!(c.axis_order(), order, "{name}");
        }
        // through .arrow and .parquet, then written back with default options
        let again = through_arrow_and_parquet(&msg, scratch.path());
        let back_name = format!("back_{name}");
        write_any(&ours.path().join(&back_name), &again, None, false).unwrap();
        let d = descriptor(&msg);
        let ns = &d["binsparse"];
        let mut fields = serde_json::Map::new();
        if ns["format"] != "custom" {
            fields.insert("format".into(), ns["format"].clone());
        }
        for key in ["structure", "fill", "comment", "provenance"] {
            if let Some(v) = ns.get(key) {
                fields.insert(key.into(), v.clone());
            }
        }
        fields.insert("values_type".into(), ns["data_types"]["values"].clone());
        let mut entry = want.as_object().unwrap().clone();
        entry.insert("descriptor".into(), J::Object(fields));
        out.insert(back_name, J::Object(entry));
    }
    // every predefined format written from Rust tensors
    for (vt, it) in [
        (ValueType::Float64, IndexType::Int64),
        (ValueType::Float32, IndexType::UInt32),
        (ValueType::Int64, IndexType::Int16),
        (ValueType::UInt16, IndexType::UInt8),
    ] {
        let t = sample(vt, it);
        for f in ALL_2D {
            for ext in CONTAINERS.split(',') {
                let name = format!("rust_{}_{}_{}.{ext}", f.name(), vt.name(), it.name());
                // .h5: chunked and deflated datasets for half of them
                let compressed = vt == ValueType::Float64 || vt == ValueType::Int64;
                write_any(
                    &ours.path().join(&name),
                    &t.clone().into(),
                    Some(f),
                    compressed,
                )
                .unwrap();
                out.insert(
                    name,
                    json!({"shape": t.shape(), "dtype": vt.name(), "values": dense(&t),
                           "descriptor": {"format": f.name(), "values_type": vt.name()}}),
                );
            }
        }
    }
    let v: AnyTensor =
        CooTensor::<f32, i32>::from_entries(vec![6], &[(vec![5], 1.5), (vec![0], -2.0)])
            .unwrap()
            .into();
    for f in [BinsparseFormat::Cvec, BinsparseFormat::Dvec] {
        for ext in CONTAINERS.split(',') {
            let name = format!("rust_{}.{ext}", f.name());
            write_any(&ours.path().join(&name), &v.clone().into(), Some(f), false).unwrap();
            out.insert(
                name,
                json!({"shape": [6], "dtype": "float32", "values": dense(&v),
                       "descriptor": {"format": f.name()}}),
            );
        }
    }
    std::fs::write(
        ours.path().join("manifest.json"),
        serde_json::to_string_pretty(&J::Object(out)).unwrap(),
    )
    .unwrap();
    let status = std::process::Command::new(&python)
        .arg(&script)
        .arg("check")
        .arg(ours.path())
        .status()
        .unwrap();
    assert!(status.success(), "check_binsparse.py check failed");
}

/// Without the venv, a plain run reports the Python test as ignored, and
/// `--include-ignored` makes it fail: it never passes.
#[test]
fn without_the_venv_the_python_test_never_passes() {
    let tests =
        common::assert_missing_program_is_never_a_pass("ARROW_SPARSE_PYTHON", "Python venv");
    assert_eq!(
        tests,
        ["the_reference_implementation_reads_ours_and_we_read_its"]
    );
}

/// A file written atomically is readable by HDF5 the moment `write` returns, also
/// while other threads start child processes: a child forked before its exec
/// holds a copy of every descriptor, the writer's locked temporary file included,
/// and HDF5 opens a file only if it can take a lock on it (`errno = 11` in CI
/// before the writer released its lock explicitly).
#[cfg(feature = "hdf5")]
#[test]
fn written_hdf5_files_open_while_other_threads_spawn_processes() {
    use arrow_sparse::io::{Hdf5WriteOptions, hdf5};
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spawn.h5");
    let t = sample(ValueType::Float64, IndexType::Int32);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let _ = std::process::Command::new("true").status();
                }
            });
        }
        let o = Hdf5WriteOptions {
            binsparse_format: Some(BinsparseFormat::Csr),
            compressed: false,
        };
        let result = (0..150).try_for_each(|k| {
            hdf5::write(&path, &t.clone().into(), &o).map_err(|e| format!("write {k}: {e}"))?;
            hdf5::read(&path, &ImportOptions::default())
                .map(|_| ())
                .map_err(|e| format!("read {k}: {e}"))
        });
        stop.store(true, Ordering::Relaxed);
        result.unwrap();
    });
}

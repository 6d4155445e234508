//! Matrix Market / FROSTT / npz files for the Python interop check
//! (`tests/python/test_io_formats.py`, run by `scripts/test-all.sh`).
//!
//! ```text
//! io_roundtrip write DIR          write a set of .mtx / .tns / .npz files and DIR/manifest.jsonl
//!                                 (one JSON line per file: name, what Python should load, and
//!                                 the tensor as `arrow_sparse::dump::json_line` prints it)
//! io_roundtrip roundtrip IN OUT   for every .mtx / .tns / .npz file of IN: read it, write it
//!                                 as .arrow, read that back, and write OUT/<same name>
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use arrow_sparse::dims::DimMap;
use arrow_sparse::io::{
    self, ExportOptions, MtxField, MtxSymmetry, MtxWriteOptions, NpzFlavor, NpzWriteOptions,
    TnsHeader, TnsWriteOptions,
};
use arrow_sparse::ipc::{self, TensorMessage};
use arrow_sparse::{
    AnyTensor, CompressedAxis, CooTensor, DenseTensor, Format, IndexType, Result, dump,
};

fn coo<V: arrow_sparse::Value>(shape: &[usize], entries: &[(&[usize], V)]) -> Result<AnyTensor> {
    let e: Vec<(Vec<usize>, V)> = entries.iter().map(|(c, v)| (c.to_vec(), *v)).collect();
    Ok(CooTensor::<V, i64>::from_entries(shape.to_vec(), &e)?.into())
}

/// One file to write: name, tensor, options, and how Python should load it.
struct Case {
    name: &'static str,
    tensor: AnyTensor,
    options: ExportOptions,
    loader: &'static str,
}

fn cases() -> Result<Vec<Case>> {
    let w = ExportOptions::default;
    let mtx = |o: MtxWriteOptions| ExportOptions {
        mtx: o,
        ..Default::default()
    };
    let npz = |o: NpzWriteOptions| ExportOptions {
        npz: o,
        ..Default::default()
    };
    let tns = |h: TnsHeader| ExportOptions {
        tns: TnsWriteOptions::default().with_header(h),
        ..Default::default()
    };
    let reals = coo::<f64>(
        &[5, 4],
        &[
            (&[0, 3], 0.1),
            (&[4, 0], -1.0 / 3.0),
            (&[2, 1], 2.5e300),
            (&[1, 1], 1e-300),
            (&[3, 2], f64::NAN),
            (&[2, 3], f64::INFINITY),
            (&[0, 0], -0.0),
        ],
    )?;
    let ints = coo::<i64>(
        &[3, 3],
        &[
            (&[0, 0], 7),
            (&[1, 2], -3),
            (&[2, 1], 1 << 62),
            (&[2, 2], i64::MIN),
        ],
    )?;
    let f32s = coo::<f32>(
        &[2, 3],
        &[(&[0, 1], 0.1), (&[1, 2], 3.4028235e38), (&[1, 0], 1e-45)],
    )?;
    let sym = coo::<f64>(
        &[4, 4],
        &[
            (&[0, 0], 2.0),
            (&[2, 0], -1.5),
            (&[0, 2], -1.5),
            (&[3, 1], 0.25),
            (&[1, 3], 0.25),
        ],
    )?;
    let skew = coo::<i32>(
        &[3, 3],
        &[(&[1, 0], 5), (&[0, 1], -5), (&[2, 1], -9), (&[1, 2], 9)],
    )?;
    let dense: AnyTensor =
        DenseTensor::<f64>::try_new(vec![2, 3], vec![1.0, 0.0, -2.5, 0.0, 3.25, 0.0].into())?
            .into();
    let dsym: AnyTensor =
        DenseTensor::<i64>::try_new(vec![3, 3], vec![4, 1, -2, 1, 5, 0, -2, 0, 6].into())?.into();
    let t3 = coo::<f64>(
        &[3, 4, 5],
        &[
            (&[0, 1, 2], 1.5),
            (&[2, 3, 4], -2.0),
            (&[1, 0, 0], 7.25),
            (&[2, 0, 3], 0.125),
        ],
    )?;
    let t4 = coo::<u8>(
        &[2, 3, 2, 4],
        &[(&[0, 0, 0, 1], 1), (&[1, 2, 1, 3], 200), (&[1, 0, 1, 0], 3)],
    )?;
    let m = coo::<f64>(
        &[6, 7],
        &[
            (&[0, 6], 1.0),
            (&[5, 0], 2.0),
            (&[2, 2], -3.5),
            (&[2, 5], 4.0),
            (&[4, 1], 0.5),
        ],
    )?;
    let csr = m.convert(Format::Csr, IndexType::Int32, None)?;
    let csc32 = coo::<f32>(&[5, 4], &[(&[4, 0], 1.5), (&[0, 3], -2.0), (&[2, 0], 0.75)])?.convert(
        Format::Csc,
        IndexType::Int64,
        None,
    )?;
    let coo16 = coo::<i16>(&[3, 5], &[(&[2, 1], 3), (&[0, 4], -7), (&[1, 0], 11)])?.convert(
        Format::Coo,
        IndexType::Int32,
        None,
    )?;
    let gcs3 = t3.to_gcs(
        DimMap::try_new(vec![3, 4, 5], vec![0, 2, 1], vec![2])?,
        CompressedAxis::Row,
        IndexType::Int64,
    )?;
    // a map GCXS cannot express: written re-mapped
    let gcs4 = t4.to_gcs(
        DimMap::try_new(vec![2, 3, 2, 4], vec![3, 1, 0, 2], vec![2])?,
        CompressedAxis::Column,
        IndexType::Int32,
    )?;
    let scipy = || NpzWriteOptions::default().with_flavor(NpzFlavor::Scipy);
    let pydata = || NpzWriteOptions::default().with_flavor(NpzFlavor::Pydata);
    Ok(vec![
        Case {
            name: "real_general.mtx",
            tensor: reals.clone(),
            options: w(),
            loader: "mmread",
        },
        Case {
            name: "integer_general.mtx",
            tensor: ints.clone(),
            options: w(),
            loader: "mmread",
        },
        Case {
            name: "float32.mtx",
            tensor: f32s.clone(),
            options: w(),
            loader: "mmread",
        },
        Case {
            name: "pattern.mtx",
            tensor: m.clone(),
            options: mtx(MtxWriteOptions::default().with_field(MtxField::Pattern)),
            loader: "mmread",
        },
        Case {
            name: "real_symmetric.mtx",
            tensor: sym,
            options: mtx(MtxWriteOptions::default().with_symmetry(MtxSymmetry::Symmetric)),
            loader: "mmread",
        },
        Case {
            name: "integer_skew.mtx",
            tensor: skew,
            options: mtx(MtxWriteOptions::default().with_symmetry(MtxSymmetry::SkewSymmetric)),
            loader: "mmread",
        },
        Case {
            name: "array_general.mtx",
            tensor: dense.clone(),
            options: w(),
            loader: "mmread",
        },
        Case {
            name: "array_symmetric.mtx",
            tensor: dsym,
            options: mtx(MtxWriteOptions::default().with_symmetry(MtxSymmetry::Symmetric)),
            loader: "mmread",
        },
        Case {
            name: "frostt_3d.tns",
            tensor: t3.clone(),
            options: w(),
            loader: "tns",
        },
        Case {
            name: "header_4d.tns",
            tensor: t4.clone(),
            options: tns(TnsHeader::RankShapeNnz),
            loader: "tns",
        },
        Case {
            name: "sptensor_3d.tns",
            tensor: t3.clone(),
            options: tns(TnsHeader::Sptensor),
            loader: "tns",
        },
        Case {
            name: "csr_f64_i32.npz",
            tensor: csr.clone(),
            options: w(),
            loader: "load_npz",
        },
        Case {
            name: "csc_f32_i64.npz",
            tensor: csc32,
            options: w(),
            loader: "load_npz",
        },
        Case {
            name: "coo_i16_i32.npz",
            tensor: coo16,
            options: w(),
            loader: "load_npz",
        },
        Case {
            name: "csr_matrix_stored.npz",
            tensor: csr.clone(),
            options: npz(NpzWriteOptions::default()
                .with_is_array(false)
                .with_compressed(false)),
            loader: "load_npz",
        },
        Case {
            name: "coo_3d_scipy.npz",
            tensor: t3.clone(),
            options: npz(scipy()),
            loader: "load_npz",
        },
        Case {
            name: "dense_as_coo.npz",
            tensor: dense,
            options: w(),
            loader: "load_npz",
        },
        Case {
            name: "coo_3d_pydata.npz",
            tensor: t3,
            options: w(),
            loader: "sparse.load_npz",
        },
        Case {
            name: "coo_2d_pydata.npz",
            tensor: reals,
            options: npz(pydata()),
            loader: "sparse.load_npz",
        },
        Case {
            name: "gcxs_3d.npz",
            tensor: gcs3,
            options: w(),
            loader: "sparse.load_npz",
        },
        Case {
            name: "gcxs_4d_u8_remapped.npz",
            tensor: gcs4,
            options: w(),
            loader: "sparse.load_npz",
        },
        Case {
            name: "gcxs_2d_from_csr.npz",
            tensor: csr,
            options: npz(pydata()),
            loader: "sparse.load_npz",
        },
        Case {
            name: "gcxs_int64.npz",
            tensor: ints.convert(Format::Csc, IndexType::Int64, None)?,
            options: npz(pydata()),
            loader: "sparse.load_npz",
        },
    ])
}

fn write_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut manifest = std::fs::File::create(dir.join("manifest.jsonl"))?;
    for c in cases()? {
        let path = dir.join(c.name);
        io::write_path_with(&path, &TensorMessage::from(c.tensor.clone()), &c.options)?;
        // what the file holds, as this crate reads it back
        let back = io::read_path_with(
            &path,
            &io::ImportOptions::default().with_value_type(c.tensor.value_type()),
        )?;
        writeln!(
            manifest,
            "{{\"name\":\"{}\",\"loader\":\"{}\",\"written_format\":\"{}\",\"tensor\":{}}}",
            c.name,
            c.loader,
            back.tensor.format(),
            dump::json_line(&c.tensor)?
        )?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn round_trip(input: &Path, output: &Path) -> Result<()> {
    std::fs::create_dir_all(output)?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(input)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| io::FileFormat::from_path(p).is_some())
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().unwrap_or_default();
        let msg = io::read_path(&path)?;
        let arrow = output.join(name).with_extension("arrow");
        ipc::write_tensor_stream(&arrow, [&msg], &ipc::StreamWriteOptions::default())?;
        let back = ipc::read_tensor_stream(&arrow, &ipc::StreamReadOptions::default())?;
        let out = output.join(name);
        io::write_path(&out, &back[0])?;
        println!(
            "{} -> {} -> {}: {} {} {:?} nnz {}",
            path.display(),
            arrow.display(),
            out.display(),
            msg.tensor.format(),
            msg.tensor.value_type(),
            msg.tensor.shape(),
            msg.tensor.nnz()
        );
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["write", dir] => write_all(Path::new(dir)),
        ["roundtrip", input, output] => round_trip(Path::new(input), Path::new(output)),
        _ => {
            eprintln!("usage: io_roundtrip write DIR | io_roundtrip roundtrip IN_DIR OUT_DIR");
            std::process::exit(2);
        }
    };
    if let Err(e) = r {
        eprintln!("io_roundtrip: error: {e}");
        std::process::exit(1);
    }
}

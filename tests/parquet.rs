//! Parquet archives: exact IPC -> Parquet -> IPC round trips for every format,
//! value type and index type of the interop matrix; range reads; chunked writes
//! and streamed reads; corrupt and lying archives; atomic writes; the CLI; and the
//! pyarrow / scipy / DuckDB checks of `tests/python/check_parquet.py`.
#![cfg(feature = "parquet")]

mod common;
#[path = "common/corpus.rs"]
mod corpus;
use arrow_sparse::{EntryOrder, TensorOptions};
use common::{Rng, cli, cli_ok};
use corpus::{Gen, Reach, names, random_coo};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_sparse::archive::{
    self, ArchiveCompression, ArchiveLayout, ArchiveReadOptions, ArchiveReader,
    ArchiveWriteOptions, ArchiveWriter, DmChain, TensorSpec,
};
use arrow_sparse::dims::DimMap;
use arrow_sparse::dump::json_line;
use arrow_sparse::ipc::{self, MmapReader, TensorMessage};
use arrow_sparse::{
    AnyCsf, AnyDm, AnyGcs, AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, CsfTensor,
    DenseTensor, Error, Format, GcsTensor, Index, IndexType, ValueType,
};
use half::f16;

/// Every format x value type x index type (uint64 included: archives can hold it).
fn matrix() -> Vec<AnyTensor> {
    corpus::every_type(0x9E37_79B9_7F4A_7C15, Reach::All)
}

/// A random permutation of `0..n`.
fn permutation(r: &mut Rng, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, r.below(i + 1));
    }
    p
}

/// A GCS tensor of random entries (with a duplicate when not canonical) under the
/// mapping `dimensions`, split at `part`, compressed along `axis`.
fn gcs_case<V: Gen, I: Index, P: Index>(
    r: &mut Rng,
    shape: &[usize],
    dimensions: Vec<usize>,
    part: usize,
    axis: CompressedAxis,
    named: bool,
) -> AnyTensor {
    let canonical = r.next() & 1 == 0;
    let coo = random_coo::<V, i64>(r, shape, 30, canonical, CoordLayout::RowMajor);
    let map = DimMap::try_new(shape.to_vec(), dimensions, vec![part]).unwrap();
    AnyTensor::from(GcsTensor::<V, I, P>::from_coo(&coo, map, axis).unwrap())
        .with_dim_names(names(shape.len(), named))
        .unwrap()
}

/// GCS tensors: every split point of a 4-D tensor under random dimension orders,
/// CSR and CSC, int32 / int64 indices and indptr, every value type; a matrix with
/// dimension names of its own; empty tensors.
fn gcs_cases(r: &mut Rng) -> Vec<AnyTensor> {
    use CompressedAxis::{Column, Row};
    let mut out = Vec::new();
    for part in 0..=4 {
        for axis in [Row, Column] {
            let dims = permutation(r, 4);
            out.push(gcs_case::<f64, i32, i64>(
                r,
                &[3, 4, 2, 5],
                dims,
                part,
                axis,
                part % 2 == 0,
            ));
            let dims = permutation(r, 4);
            out.push(gcs_case::<i32, i64, i64>(
                r,
                &[3, 4, 2, 5],
                dims,
                part,
                axis,
                false,
            ));
        }
    }
    macro_rules! value_types {
        ($($v:ty),*) => {$(
            let dims = permutation(r, 3);
            let part = 1 + r.below(2);
            out.push(gcs_case::<$v, i32, i32>(r, &[6, 5, 7], dims, part, Row, true));
            let dims = permutation(r, 5);
            let part = r.below(6);
            out.push(gcs_case::<$v, i64, i32>(r, &[2, 3, 2, 4, 3], dims, part, Column, false));
        )*};
    }
    value_types!(i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64);
    // the reduced matrix has dimension names of its own
    let AnyTensor::Gcs(g) = gcs_case::<f32, i16, i32>(r, &[4, 6, 5], vec![2, 0, 1], 2, Row, true)
    else {
        unreachable!()
    };
    let matrix = g
        .downcast::<f32, i16, i32>()
        .unwrap()
        .matrix()
        .clone()
        .with_dim_names(vec!["rows".into(), String::new()])
        .unwrap();
    out.push(AnyTensor::Gcs(
        AnyGcs::try_new(
            g.map().clone(),
            matrix.as_any().clone(),
            &TensorOptions::default().with_dim_names(g.dim_names().to_vec()),
        )
        .unwrap(),
    ));
    let empty = CooTensor::<f64, i64>::from_entries(vec![3, 0, 4], &[]).unwrap();
    let map = DimMap::try_new(vec![3, 0, 4], vec![1, 0, 2], vec![1]).unwrap();
    out.push(
        GcsTensor::<f64, i32, i32>::from_coo(&empty, map, Column)
            .unwrap()
            .into(),
    );
    out
}

/// DM tensors over every storage kind (dense, COO, CSR, CSC, CSF, GCS), with
/// views in the chain, and nested DM tensors.
fn dm_cases(r: &mut Rng) -> Vec<AnyTensor> {
    let shape = vec![4, 3, 5];
    let x: AnyTensor = random_coo::<f32, i64>(r, &shape, 25, true, CoordLayout::RowMajor).into();
    let map = |dims: Vec<usize>, part: Vec<usize>| DimMap::try_new(shape.clone(), dims, part);
    let mut out = Vec::new();
    for (storage, dims, part) in [
        (Format::Dense, vec![2, 0, 1], vec![1]),
        (Format::Coo, vec![0, 1, 2], vec![1, 2]),
        (Format::Coo, vec![1, 2, 0], vec![]),
        (Format::Csr, vec![2, 0, 1], vec![1]),
        (Format::Csc, vec![0, 2, 1], vec![2]),
        (Format::Csf, vec![1, 0, 2], vec![1, 2]),
    ] {
        out.push(
            x.to_dm(map(dims, part).unwrap(), storage, IndexType::Int64)
                .unwrap(),
        );
    }
    macro_rules! value_types {
        ($($v:ty),*) => {$(
            let y: AnyTensor = random_coo::<$v, i64>(r, &shape, 20, false, CoordLayout::RowMajor).into();
            let AnyTensor::Dm(d) = y.to_dm(map(vec![1, 2, 0], vec![2]).unwrap(), Format::Csr, IndexType::Int64).unwrap() else {
                unreachable!()
            };
            out.push(AnyTensor::Dm(d.rotate(1, 2).unwrap()));
        )*};
    }
    value_types!(i8, u16, i64, u64, f16, f64);
    // GCS storage: the DM map reduces (4, 3, 5) to (5, 4, 3), which GCS stores as
    // a 12 x 5 CSC matrix
    let dm_map = map(vec![2, 0, 1], vec![1, 2]).unwrap();
    let AnyTensor::Dm(tmp) = x
        .to_dm(dm_map.clone(), Format::Coo, IndexType::Int64)
        .unwrap()
    else {
        unreachable!()
    };
    let gcs = tmp
        .storage()
        .to_gcs(
            DimMap::try_new(vec![5, 4, 3], vec![1, 2, 0], vec![2]).unwrap(),
            CompressedAxis::Column,
            IndexType::Int32,
        )
        .unwrap()
        .with_dim_names(vec!["a".into(), "b".into(), "c".into()])
        .unwrap();
    let over_gcs = AnyDm::try_new(
        dm_map,
        gcs,
        &TensorOptions::default().with_dim_names(names(3, true)),
    )
    .unwrap();
    out.push(AnyTensor::Dm(over_gcs.clone()));
    // views: slice, rotate, permute (a view after other views), select, reshape,
    // broadcast
    out.push(AnyTensor::Dm(
        over_gcs
            .slice(2, 1, 5, 2)
            .unwrap()
            .rotate(0, -1)
            .unwrap()
            .permute(&[1, 0, 2])
            .unwrap(),
    ));
    out.push(AnyTensor::Dm(
        over_gcs
            .select(1, 2)
            .unwrap()
            .reshape(&[2, 10])
            .unwrap()
            .broadcast(&[4, 10])
            .unwrap(),
    ));
    // take: index arrays in any order with repeats, on two dimensions
    out.push(AnyTensor::Dm(
        over_gcs
            .take(1, &[2, 0, 2])
            .unwrap()
            .take(2, &[4, 4, 1, 0])
            .unwrap(),
    ));
    // nested: a DM (permuted, rotated) over a sliced DM over GCS; three DM levels
    // over a CSR matrix
    let inner = AnyTensor::Dm(over_gcs.slice(0, 1, 4, 1).unwrap());
    let outer = AnyDm::try_new(
        DimMap::identity(vec![3, 3, 5]).unwrap(),
        inner,
        &TensorOptions::default(),
    )
    .unwrap()
    .permute(&[2, 0, 1])
    .unwrap()
    .rotate(1, 2)
    .unwrap();
    out.push(AnyTensor::Dm(outer));
    let mut deep = x
        .to_dm(
            map(vec![0, 1, 2], vec![1]).unwrap(),
            Format::Csr,
            IndexType::Int64,
        )
        .unwrap();
    for k in 0..2 {
        let s = deep.shape().to_vec();
        deep = AnyTensor::Dm(
            AnyDm::try_new(
                DimMap::identity(s).unwrap(),
                deep,
                &TensorOptions::default(),
            )
            .unwrap()
            .transpose(0, 1 + k)
            .unwrap(),
        );
    }
    out.push(deep);
    out
}

/// The tensor whose entries are an archive's rows: a DM tensor's storage (plain
/// or GCS), else the tensor itself.
fn rows_tensor(t: &AnyTensor) -> AnyTensor {
    match t {
        AnyTensor::Dm(d) => DmChain::of(d).unwrap().1,
        t => t.clone(),
    }
}

fn ipc_bytes(m: &TensorMessage) -> Vec<u8> {
    ipc::encode(&m.tensor, &m.custom_metadata, &Default::default())
        .unwrap()
        .to_vec()
}

fn small_groups() -> ArchiveWriteOptions {
    ArchiveWriteOptions::default().with_row_group_size(7)
}

fn roundtrip(
    dir: &Path,
    name: &str,
    m: &TensorMessage,
    options: &ArchiveWriteOptions,
) -> TensorMessage {
    let path = dir.join(format!("{name}.parquet"));
    archive::write_archive(&path, m, options).unwrap_or_else(|e| panic!("{name}: {e}"));
    archive::read_archive(&path, &ArchiveReadOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The matrix's archives: exact round trips in Rust.
#[test]
fn every_format_value_and_index_type_round_trips_exactly() {
    let dir = tempfile::tempdir().unwrap();
    matrix_archives(dir.path());
}

/// The matrix's archives read by pyarrow, scipy and DuckDB
/// (`tests/python/check_parquet.py`).
#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn every_format_value_and_index_type_reads_in_pyarrow_scipy_and_duckdb() {
    let python = common::python();
    let dir = tempfile::tempdir().unwrap();
    let archives = matrix_archives(dir.path());
    run_python_checks(&python, dir.path(), archives);
}

/// pyarrow's Parquet tables with every footer and page header feature it
/// writes (page statistics and checksums, page indexes, sorting columns,
/// key-value metadata, data pages v1 and v2, dictionaries, nested, decimal,
/// timestamp, float16, fixed-size binary columns) pass the footer and page
/// header walks of `archive::thrift` and read whole: the walks, which refuse
/// what the parquet crate would misread, do not refuse what writers write.
#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn pyarrow_tables_with_every_footer_feature_read() {
    let python = common::python();
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
n = 5000
t = pa.table({
    "id": pa.array([i if i % 7 else None for i in range(n)], pa.int32()),
    "x": np.arange(n) * 0.5,
    "s": [f"n{i % 13}\u00e9\U0001F600" for i in range(n)],
    "l": [[i, None, i + 1] if i % 5 else None for i in range(n)],
    "ts": pa.array(np.arange(n).astype("datetime64[us]")),
    "d": pa.array([1.5] * n).cast(pa.decimal128(10, 2)),
    "st": [{"a": i, "b": str(i)} for i in range(n)],
    "m": pa.array([[("k", i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
    "f16": pa.array(np.ones(n, dtype=np.float16)),
    "u": pa.array([b"0123456789abcdef"] * n, pa.binary(16)),
}).replace_schema_metadata({"k": "v"})
for version, pages in [("2.6", "2.0"), ("1.0", "1.0")]:
    pq.write_table(t, f"{sys.argv[1]}/all_{pages}.parquet", version=version,
                   data_page_version=pages, write_page_index=True, write_statistics=True,
                   row_group_size=1000, data_page_size=1024,
                   sorting_columns=[pq.SortingColumn(1)], write_page_checksum=True,
                   store_decimal_as_integer=True, use_dictionary=["s"], compression="zstd")
"#;
    let out = std::process::Command::new(&python)
        .args(["-c", script])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for pages in ["1.0", "2.0"] {
        let path = dir.path().join(format!("all_{pages}.parquet"));
        let (schema, batches) = arrow_sparse::column::files::read_batches(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(schema.fields().len(), 10);
        assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 5000);
        let nulls: usize = batches.iter().map(|b| b.column(0).null_count()).sum();
        assert_eq!(nulls, 5000_usize.div_ceil(7));
    }
}

/// Without the venv, a plain run reports the Python tests as ignored, and
/// `--include-ignored` makes them fail: they never pass.
#[test]
fn without_the_venv_the_python_test_never_passes() {
    let tests =
        common::assert_missing_program_is_never_a_pass("ARROW_SPARSE_PYTHON", "Python venv");
    assert_eq!(
        tests,
        [
            "every_format_value_and_index_type_reads_in_pyarrow_scipy_and_duckdb",
            "pyarrow_tables_with_every_footer_feature_read"
        ]
    );
}

/// Write the matrix's archives into `dir` (through an IPC stream and a memory
/// map, as the CLI does), checking exact round trips; returns the manifest
/// entries `tests/python/check_parquet.py` reads.
fn matrix_archives(dir: &Path) -> Vec<serde_json::Value> {
    let all = matrix();
    let combos: std::collections::HashSet<_> = all
        .iter()
        .map(|t| (t.format(), t.value_type(), t.index_type(), t.indptr_type()))
        .collect();
    // 11 value types x (8 index types x (coo, csr, csc, csf) + csr / csc with int64
    // indptr and csf with uint16 indptr for 7 index types each + dense)
    assert_eq!(combos.len(), 11 * (8 * 4 + 3 * 7 + 1));
    // GCS and DM tensors
    let mut r = Rng(0x5EED_6C5D);
    let all: Vec<AnyTensor> = all
        .into_iter()
        .chain(gcs_cases(&mut r))
        .chain(dm_cases(&mut r))
        .collect();
    // IPC stream -> memory map -> Parquet -> IPC, as the CLI does
    let stream = dir.join("matrix.arrow");
    let msgs: Vec<TensorMessage> = all
        .iter()
        .enumerate()
        .map(|(i, t)| TensorMessage {
            tensor: t.clone(),
            custom_metadata: if i % 5 == 0 {
                vec![
                    ("k".into(), format!("v{i}")),
                    ("ARROW:extension:name".into(), "x".into()),
                ]
            } else {
                vec![]
            },
        })
        .collect();
    // IPC refuses uint64 indices (libarrow aborts on them); archives take them
    let (wide, msgs): (Vec<_>, Vec<_>) = msgs
        .into_iter()
        .partition(|m| m.tensor.index_type() == Some(IndexType::UInt64));
    ipc::write_tensor_stream(&stream, &msgs, &Default::default()).unwrap();
    let reader = MmapReader::open(&stream).unwrap();
    let mut archives = Vec::new();
    let mut check = |name: String, m: &TensorMessage| {
        let back = roundtrip(dir, &name, m, &small_groups());
        assert_eq!(&back, m, "{name}: {}", json_line(&m.tensor).unwrap());
        if m.tensor.index_type() != Some(IndexType::UInt64) {
            assert!(ipc_bytes(&back) == ipc_bytes(m), "{name}: IPC bytes differ");
        }
        // the rows' tensor: a DM archive's rows are its storage's entries
        std::fs::write(
            dir.join(format!("{name}.json")),
            json_line(&rows_tensor(&m.tensor)).unwrap(),
        )
        .unwrap();
        archives.push(serde_json::json!({"parquet": format!("{name}.parquet"), "dump": format!("{name}.json")}));
    };
    let mut extension = [0usize; 2];
    for i in 0..reader.len() {
        let m = reader.get(i).unwrap();
        match m.tensor.format() {
            Format::Gcs => extension[0] += 1,
            Format::Dm => extension[1] += 1,
            _ => {}
        }
        check(format!("t{i}"), &m);
    }
    // every GCS / DM case came through IPC as GCS / DM
    assert_eq!(extension, [20 + 22 + 2, 6 + 6 + 6]);
    for (i, m) in wide.iter().enumerate() {
        check(format!("u{i}"), m);
    }
    archives
}

#[test]
fn csf_trees_that_prefix_merging_would_change_keep_a_level_column() {
    let dir = tempfile::tempdir().unwrap();
    // two roots with the same coordinate, and a leaf duplicated under one parent
    let t = CsfTensor::<f32, i16, i32>::try_new(
        vec![3, 4],
        vec![0, 1],
        vec![vec![0, 1, 3].into()],
        vec![vec![1, 1].into(), vec![2, 0, 0].into()],
        vec![1.0, 2.0, 3.0].into(),
    )
    .unwrap();
    let m: TensorMessage = AnyTensor::from(t).into();
    for rg in [1, 2, 100] {
        let back = roundtrip(
            dir.path(),
            "dup",
            &m,
            &ArchiveWriteOptions::default().with_row_group_size(rg),
        );
        assert_eq!(back, m);
    }
    let path = dir.path().join("dup.parquet");
    let r = ArchiveReader::open(&path).unwrap();
    let schema = r.parquet_metadata().file_metadata().schema_descr();
    assert!((0..schema.num_columns()).any(|c| schema.column(c).name() == "csf_level"));
    // the same entries as a canonical tree need no level column
    let plain = m
        .tensor
        .convert(Format::Csf, IndexType::Int16, Some(&[0, 1]))
        .unwrap();
    let back = roundtrip(
        dir.path(),
        "plain",
        &plain.clone().into(),
        &ArchiveWriteOptions::default(),
    );
    assert_eq!(back.tensor, plain);
    let r = ArchiveReader::open(dir.path().join("plain.parquet")).unwrap();
    assert_eq!(
        r.parquet_metadata()
            .file_metadata()
            .schema_descr()
            .num_columns(),
        3
    );
    // a childless node cannot be described by rows: refused, nothing written
    let childless = AnyCsf::try_new(
        vec![3, 4],
        vec![0, 1],
        vec![IndexType::Int32.cast_from(&[0, 1, 1])],
        vec![
            IndexType::Int32.cast_from(&[0, 2]),
            IndexType::Int32.cast_from(&[3]),
        ],
        arrow_sparse::ValueBuffer::Float32(vec![1.0f32].into()),
        &TensorOptions::default(),
    )
    .unwrap();
    let bad = dir.path().join("childless.parquet");
    let e = archive::write_archive(
        &bad,
        &AnyTensor::Csf(childless).into(),
        &ArchiveWriteOptions::default(),
    );
    assert!(matches!(e, Err(Error::Unsupported(_))), "{e:?}");
    assert!(!bad.exists());
}

trait CastFrom {
    fn cast_from(self, xs: &[i32]) -> arrow_sparse::IndexBuffer;
}
impl CastFrom for IndexType {
    fn cast_from(self, xs: &[i32]) -> arrow_sparse::IndexBuffer {
        arrow_sparse::IndexBuffer::Int32(xs.to_vec().into())
            .cast(self, "test")
            .unwrap()
    }
}

#[test]
fn dense_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let vals: Vec<i32> = (0..24).collect();
    // column-major and a permuted packing keep their strides
    for strides in [vec![1, 2, 8], vec![4, 1, 8], vec![12, 3, 1]] {
        let t = DenseTensor::<i32>::try_new_strided(
            vec![2, 4, 3],
            strides.clone(),
            vals.clone().into(),
        )
        .unwrap();
        let m: TensorMessage = AnyTensor::from(t).into();
        assert_eq!(
            roundtrip(dir.path(), "d", &m, &small_groups()),
            m,
            "{strides:?}"
        );
    }
    // broadcast (zero stride) and gapped strides are archived as their row-major copy,
    // which is what IPC sends too
    for (shape, strides, len) in [(vec![3, 4], vec![0, 1], 4), (vec![2, 3], vec![4, 1], 7)] {
        let t = DenseTensor::<f32>::try_new_strided(
            shape,
            strides,
            (0..len).map(|x| x as f32).collect::<Vec<_>>().into(),
        )
        .unwrap();
        let m: TensorMessage = AnyTensor::from(t).into();
        let back = roundtrip(dir.path(), "b", &m, &small_groups());
        assert!(ipc_bytes(&back) == ipc_bytes(&m));
        assert_eq!(
            json_line(&back.tensor).unwrap(),
            json_line(&m.tensor).unwrap()
        );
    }
    // views with an offset and signed strides (#17): archived as their logical
    // tensor (rows in row-major logical order, read through the offset and the
    // strides), restored with its packed strides (at any offset) or row-major
    // (a negative stride, gaps, broadcast), with the bytes IPC sends for the view
    let mut r = Rng(0x17B);
    let mut views: Vec<AnyTensor> = Vec::new();
    for _ in 0..25 {
        views.push(corpus::strided_view::<i16>(&mut r).into());
        views.push(corpus::strided_view::<f64>(&mut r).into());
    }
    views.push(
        DenseTensor::<i32>::try_new_with_offset(
            vec![2, 3],
            vec![-1, -2],
            5,
            vec![6, 3, 5, 2, 4, 1].into(),
        )
        .unwrap()
        .into(),
    );
    // any stride along an extent of 1, the most negative one included
    views.push(
        DenseTensor::<u8>::try_new_with_offset(
            vec![2, 1, 3],
            vec![3, isize::MIN, 1],
            1,
            vec![0, 1, 2, 3, 4, 5, 6].into(),
        )
        .unwrap()
        .into(),
    );
    for (k, t) in views.into_iter().enumerate() {
        let negative = matches!(&t, AnyTensor::Dense(d) if d.strides().iter().zip(d.shape()).any(|(&s, &n)| s < 0 && n > 1));
        let spec = archive::TensorSpec::of(&t.clone().into()).unwrap();
        if negative {
            assert_eq!(
                spec.layout,
                ArchiveLayout::Dense {
                    strides: arrow_sparse::tensor::dense::row_major_strides(t.shape())
                },
                "{k}"
            );
        }
        let m: TensorMessage = t.into();
        let back = roundtrip(dir.path(), "v", &m, &small_groups());
        assert_eq!(
            json_line(&back.tensor).unwrap(),
            json_line(&m.tensor).unwrap(),
            "{k}"
        );
        assert!(
            ipc_bytes(&back) == ipc_bytes(&m),
            "{k}: {:?} {:?}",
            m.tensor,
            back.tensor
        );
    }
    // an extent-1 dimension keeps an arbitrary stride exactly
    let t = DenseTensor::<u8>::try_new_strided(
        vec![2, 1, 3],
        vec![3, 99, 1],
        vec![1, 2, 3, 4, 5, 6].into(),
    )
    .unwrap();
    let m: TensorMessage = AnyTensor::from(t).into();
    assert_eq!(roundtrip(dir.path(), "e", &m, &small_groups()), m);
}

/// The dump of `t` restricted to coordinates `lo..hi` along `dim`, shifted.
fn expected_range(t: &AnyTensor, dim: usize, lo: usize, hi: usize) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&json_line(t).unwrap()).unwrap();
    v["shape"][dim] = (hi - lo).into();
    let entries: Vec<serde_json::Value> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| (lo as u64..hi as u64).contains(&e[dim].as_u64().unwrap()))
        .map(|e| {
            let mut e = e.clone();
            e[dim] = (e[dim].as_u64().unwrap() - lo as u64).into();
            e
        })
        .collect();
    v["nnz"] = entries.len().into();
    v["entries"] = entries.into();
    v
}

#[test]
fn range_reads_skip_row_groups_by_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(5);
    let m = random_coo::<f64, i64>(&mut r, &[200, 30], 2000, true, CoordLayout::RowMajor);
    let t3 = random_coo::<i32, i32>(&mut r, &[40, 9, 7], 600, true, CoordLayout::RowMajor);
    let dense = DenseTensor::<f32>::try_new_strided(
        vec![20, 5],
        vec![1, 20],
        (0..100).map(|x| (x % 7) as f32).collect::<Vec<_>>().into(),
    )
    .unwrap();
    let cases: Vec<AnyTensor> = vec![
        m.to_csx::<i32, i64>(CompressedAxis::Row).unwrap().into(),
        m.to_csx::<i16, i16>(CompressedAxis::Column).unwrap().into(),
        AnyTensor::from(m.clone())
            .with_dim_names(vec!["row".into(), "col".into()])
            .unwrap(),
        random_coo::<u8, u16>(&mut r, &[50, 60], 300, false, CoordLayout::ColumnMajor).into(),
        t3.to_csf::<i16, i32>(&[0, 2, 1]).unwrap().into(),
        t3.to_csf::<i16, i32>(&[1, 0, 2]).unwrap().into(),
        dense.into(),
        // GCS: the range applies to the N-D coordinates (the result keeps the
        // mapping, over the smaller shape)
        GcsTensor::<i32, i32, i64>::from_coo(
            &t3,
            DimMap::try_new(vec![40, 9, 7], vec![1, 0, 2], vec![2]).unwrap(),
            CompressedAxis::Row,
        )
        .unwrap()
        .into(),
        AnyTensor::from(
            GcsTensor::<i32, i16, i32>::from_coo(
                &t3,
                DimMap::try_new(vec![40, 9, 7], vec![2, 0, 1], vec![1]).unwrap(),
                CompressedAxis::Column,
            )
            .unwrap(),
        )
        .with_dim_names(vec!["x".into(), "y".into(), "z".into()])
        .unwrap(),
    ];
    let options = ArchiveWriteOptions::default().with_row_group_size(100);
    for (i, t) in cases.iter().enumerate() {
        let path = dir.path().join(format!("r{i}.parquet"));
        archive::write_archive(&path, &t.clone().into(), &options).unwrap();
        let reader = ArchiveReader::open(&path).unwrap();
        let total = reader.num_row_groups();
        for dim in 0..t.shape().len() {
            let extent = t.shape()[dim];
            for (lo, hi) in [
                (0, extent),
                (extent / 4, extent / 4 + 3),
                (extent / 2, extent + 10),
                (3, 3),
            ] {
                let hi_c = hi.min(extent);
                let got = reader.read_range(dim, lo..hi).unwrap();
                assert_eq!(got.row_groups_total, total);
                assert_eq!(
                    (
                        got.tensor.format(),
                        got.tensor.index_type(),
                        got.tensor.indptr_type(),
                        got.tensor.dim_names()
                    ),
                    (t.format(), t.index_type(), t.indptr_type(), t.dim_names()),
                    "case {i}"
                );
                let ours: serde_json::Value =
                    serde_json::from_str(&json_line(&got.tensor).unwrap()).unwrap();
                assert_eq!(
                    ours,
                    expected_range(t, dim, lo, hi_c),
                    "case {i} dim {dim} {lo}..{hi}"
                );
            }
        }
    }
    // GCS rows come by reduced major coordinate, whose leading dimension (1 in
    // the first mapping) is sorted: a narrow range of it skips row groups
    let reader = ArchiveReader::open(dir.path().join("r7.parquet")).unwrap();
    let got = reader.read_range(1, 2..3).unwrap();
    assert!(
        got.row_groups_read < got.row_groups_total / 2,
        "{:?}",
        (got.row_groups_read, got.row_groups_total)
    );
    assert_eq!(got.tensor.format(), Format::Gcs);
    // DM: the rows are storage entries, a range of them is not a DM tensor
    let AnyTensor::Dm(dm) = cases[0]
        .to_dm(
            DimMap::identity(vec![200, 30]).unwrap(),
            Format::Coo,
            IndexType::Int64,
        )
        .unwrap()
    else {
        unreachable!()
    };
    let dm_path = dir.path().join("dm.parquet");
    archive::write_archive(&dm_path, &AnyTensor::Dm(dm).into(), &options).unwrap();
    let reader = ArchiveReader::open(&dm_path).unwrap();
    assert!(matches!(
        reader.read_range(0, 0..10),
        Err(Error::Unsupported(_))
    ));
    // CSR by rows: a narrow range decodes one or two of the 20 row groups
    let path = dir.path().join("r0.parquet");
    let reader = ArchiveReader::open(&path).unwrap();
    let got = reader.read_range(0, 100..105).unwrap();
    let groups = cases[0].nnz().div_ceil(100);
    assert!(
        got.row_groups_read <= 2 && got.row_groups_total == groups,
        "{got:?}"
    );
    let sub = &cases[0];
    let AnyTensor::Csx(_) = &got.tensor else {
        panic!("not CSX")
    };
    // the exact CSR of those rows
    let coo = sub.to_coo::<f64, i64>().unwrap();
    let entries: Vec<(Vec<usize>, f64)> = (0..coo.nnz())
        .filter(|&k| (100..105).contains(&coo.coord(k, 0)))
        .map(|k| {
            (
                vec![coo.coord(k, 0) - 100, coo.coord(k, 1)],
                coo.values()[k],
            )
        })
        .collect();
    let want: AnyTensor = CooTensor::<f64, i32>::from_entries(vec![5, 30], &entries)
        .unwrap()
        .to_csx::<i32, i64>(CompressedAxis::Row)
        .unwrap()
        .into();
    assert_eq!(got.tensor, want);
    // a column range reads every row group
    assert_eq!(reader.read_range(1, 0..30).unwrap().row_groups_read, groups);
    assert!(matches!(
        reader.read_range(2, 0..1),
        Err(Error::Shape { .. })
    ));
}

#[test]
fn chunked_writes_and_streamed_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(11);
    let shape = vec![300, 40];
    let a = random_coo::<f32, i64>(&mut r, &shape, 500, true, CoordLayout::RowMajor);
    // blocks of rows as CSR chunks, in order: a CSR archive of int32 / int64
    let spec = TensorSpec::coo(shape.clone(), ValueType::Float32, IndexType::Int32).with_layout(
        ArchiveLayout::Csx {
            axis: CompressedAxis::Row,
            index_type: IndexType::Int32,
            indptr_type: IndexType::Int64,
        },
    );
    let path = dir.path().join("chunks.parquet");
    let mut w = ArchiveWriter::create(
        &path,
        spec.clone(),
        &ArchiveWriteOptions::default().with_row_group_size(64),
    )
    .unwrap();
    let block = |lo: usize, hi: usize| -> AnyTensor {
        let e: Vec<(Vec<usize>, f32)> = (0..a.nnz())
            .filter(|&k| (lo..hi).contains(&a.coord(k, 0)))
            .map(|k| (vec![a.coord(k, 0), a.coord(k, 1)], a.values()[k]))
            .collect();
        CooTensor::<f32, i64>::from_entries(shape.clone(), &e)
            .unwrap()
            .to_csx::<i64, i64>(CompressedAxis::Row)
            .unwrap()
            .into()
    };
    for lo in (0..300).step_by(50) {
        w.write_chunk(&block(lo, lo + 50)).unwrap();
    }
    let s = w.finish().unwrap();
    assert_eq!((s.rows, s.row_groups), (a.nnz(), a.nnz().div_ceil(64)));
    let back = archive::read_archive(&path, &ArchiveReadOptions::default())
        .unwrap()
        .tensor;
    assert_eq!(
        back,
        AnyTensor::from(a.to_csx::<i32, i64>(CompressedAxis::Row).unwrap())
    );
    // streamed: every row group as a COO chunk, in storage order
    let reader = ArchiveReader::open(&path).unwrap();
    let mut seen = 0;
    for chunk in reader.chunks() {
        let chunk = chunk.unwrap();
        assert!(chunk.nnz() <= 64 && chunk.format() == Format::Coo);
        let c = chunk.to_coo::<f32, i64>().unwrap();
        for k in 0..c.nnz() {
            assert_eq!(
                (c.coord(k, 0), c.coord(k, 1), c.values()[k]),
                (
                    a.coord(seen + k, 0),
                    a.coord(seen + k, 1),
                    a.values()[seen + k]
                )
            );
        }
        seen += c.nnz();
    }
    assert_eq!(seen, a.nnz());
    // chunks out of CSR order: an error, and nothing at the destination
    let bad = dir.path().join("bad.parquet");
    let mut w = ArchiveWriter::create(&bad, spec, &ArchiveWriteOptions::default()).unwrap();
    w.write_chunk(&block(100, 200)).unwrap();
    let e = w.write_chunk(&block(0, 100));
    assert!(matches!(e, Err(Error::Invariant { .. })), "{e:?}");
    drop(w);
    assert!(!bad.exists());
    // a GCS archive from GCS chunks (blocks of reduced rows, same map) in order
    let map = DimMap::try_new(vec![300, 40], vec![1, 0], vec![1]).unwrap();
    let gcs_of = |lo: usize, hi: usize| -> AnyTensor {
        let AnyTensor::Csx(b) = block(0, 300) else {
            unreachable!()
        };
        let c = AnyTensor::Csx(b).to_coo::<f32, i64>().unwrap();
        // reduced rows are the column coordinates here (dimensions [1, 0], split 1)
        let e: Vec<(Vec<usize>, f32)> = (0..c.nnz())
            .filter(|&k| (lo..hi).contains(&c.coord(k, 1)))
            .map(|k| (vec![c.coord(k, 0), c.coord(k, 1)], c.values()[k]))
            .collect();
        let coo = CooTensor::<f32, i64>::from_entries(vec![300, 40], &e).unwrap();
        GcsTensor::<f32, i32, i64>::from_coo(&coo, map.clone(), CompressedAxis::Row)
            .unwrap()
            .into()
    };
    let whole = gcs_of(0, 40);
    let gcs_path = dir.path().join("gcs.parquet");
    let mut w = ArchiveWriter::create(
        &gcs_path,
        TensorSpec::of(&whole.clone().into()).unwrap(),
        &ArchiveWriteOptions::default().with_row_group_size(64),
    )
    .unwrap();
    for lo in (0..40).step_by(8) {
        w.write_chunk(&gcs_of(lo, lo + 8)).unwrap();
    }
    w.finish().unwrap();
    let back = archive::read_archive(&gcs_path, &ArchiveReadOptions::default()).unwrap();
    assert_eq!(back.tensor, whole);
    // streamed GCS row groups: COO chunks of the logical shape
    let chunk = ArchiveReader::open(&gcs_path)
        .unwrap()
        .read_row_group(0)
        .unwrap();
    assert_eq!(
        (chunk.format(), chunk.shape()),
        (Format::Coo, &[300, 40][..])
    );
    // out of the reduced matrix's storage order: an error
    let mut w = ArchiveWriter::create(
        &bad,
        TensorSpec::of(&whole.clone().into()).unwrap(),
        &ArchiveWriteOptions::default(),
    )
    .unwrap();
    w.write_chunk(&gcs_of(8, 16)).unwrap();
    let e = w.write_chunk(&gcs_of(0, 8));
    assert!(matches!(e, Err(Error::Invariant { .. })), "{e:?}");
    drop(w);
    assert!(!bad.exists());
    // a DM archive from chunks: DM tensors with the archive's maps, or tensors of
    // the storage's shape; other maps are refused
    let AnyTensor::Dm(dm) = whole
        .to_dm(
            DimMap::try_new(vec![300, 40], vec![1, 0], vec![1]).unwrap(),
            Format::Coo,
            IndexType::Int64,
        )
        .unwrap()
    else {
        unreachable!()
    };
    let dm_path = dir.path().join("dm.parquet");
    let dm_spec = TensorSpec::of(&AnyTensor::Dm(dm.clone()).into()).unwrap();
    assert_eq!(dm_spec.shape, [40, 300]);
    assert_eq!(dm_spec.format(), Format::Dm);
    for chunk in [AnyTensor::Dm(dm.clone()), dm.storage().clone()] {
        let mut w =
            ArchiveWriter::create(&dm_path, dm_spec.clone(), &ArchiveWriteOptions::default())
                .unwrap();
        let e = w.write_chunk(&AnyTensor::Dm(dm.rotate(0, 1).unwrap()));
        assert!(matches!(e, Err(Error::Invariant { .. })), "{e:?}");
        w.write_chunk(&chunk).unwrap();
        w.finish().unwrap();
        let back = archive::read_archive(&dm_path, &ArchiveReadOptions::default()).unwrap();
        assert_eq!(back.tensor, AnyTensor::Dm(dm.clone()));
    }
    // a COO archive computes its canonical flag; dense chunks add every element
    let coo_path = dir.path().join("coo.parquet");
    let mut w = ArchiveWriter::create(
        &coo_path,
        TensorSpec::coo(vec![2, 3], ValueType::Int16, IndexType::UInt8),
        &ArchiveWriteOptions::default(),
    )
    .unwrap();
    w.write_chunk(
        &DenseTensor::<i16>::try_new(vec![2, 3], vec![0, 1, 0, 2, 0, 3].into())
            .unwrap()
            .into(),
    )
    .unwrap();
    w.finish().unwrap();
    let back = archive::read_archive(&coo_path, &ArchiveReadOptions::default())
        .unwrap()
        .tensor;
    let AnyTensor::Coo(c) = &back else {
        panic!("not COO")
    };
    assert!(c.is_canonical() && c.nnz() == 6 && c.index_type() == IndexType::UInt8);
    // the declared index type must hold the coordinates
    let mut w = ArchiveWriter::create(
        dir.path().join("narrow.parquet"),
        TensorSpec::coo(vec![1000], ValueType::Float64, IndexType::Int8),
        &ArchiveWriteOptions::default(),
    )
    .unwrap();
    let far: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![1000], &[(vec![500], 1.0)])
        .unwrap()
        .into();
    assert!(matches!(w.write_chunk(&far), Err(Error::Overflow { .. })));
    // a wrong shape or value type is refused
    assert!(matches!(w.write_chunk(&back), Err(Error::Shape { .. })));
    // no temporary files were left behind
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".arrow-sparse-tmp."))
        .collect();
    drop(w);
    assert_eq!(left.len(), 1, "{left:?}"); // the unfinished writer's own
    let left = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".arrow-sparse-tmp.")
        })
        .count();
    assert_eq!(left, 0);
}

/// A small archive of every format, for the corruption tests.
fn corpus(dir: &Path) -> Vec<(PathBuf, TensorMessage)> {
    let mut r = Rng(3);
    let coo = random_coo::<f64, i32>(&mut r, &[40, 50], 60, true, CoordLayout::RowMajor);
    let t3 = random_coo::<f32, i16>(&mut r, &[9, 8, 7], 40, true, CoordLayout::RowMajor);
    let tensors: Vec<AnyTensor> = vec![
        coo.clone().into(),
        coo.to_csx::<i32, i64>(CompressedAxis::Row).unwrap().into(),
        t3.to_csf::<i16, i16>(&[2, 0, 1]).unwrap().into(),
        DenseTensor::<i64>::try_new(vec![6, 5], (0..30).collect::<Vec<i64>>().into())
            .unwrap()
            .into(),
        // GCS: rows by dimension 2 (the reduced rows), columns dimensions (0, 1)
        GcsTensor::<f32, i16, i32>::from_coo(
            &t3,
            DimMap::try_new(vec![9, 8, 7], vec![2, 0, 1], vec![1]).unwrap(),
            CompressedAxis::Row,
        )
        .unwrap()
        .into(),
        // DM with views over a 50 x 40 CSC matrix
        AnyTensor::Dm(
            match AnyTensor::from(coo.clone())
                .to_dm(
                    DimMap::try_new(vec![40, 50], vec![1, 0], vec![1]).unwrap(),
                    Format::Csc,
                    IndexType::Int64,
                )
                .unwrap()
            {
                AnyTensor::Dm(d) => d.slice(0, 5, 30, 3).unwrap().rotate(1, 4).unwrap(),
                _ => unreachable!(),
            },
        ),
    ];
    tensors
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let p = dir.join(format!("c{i}.parquet"));
            let m: TensorMessage = t.into();
            archive::write_archive(
                &p,
                &m,
                &ArchiveWriteOptions::default().with_row_group_size(25),
            )
            .unwrap();
            (p, m)
        })
        .collect()
}

#[test]
fn truncated_and_bit_flipped_archives_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.parquet");
    for (path, m) in corpus(dir.path()) {
        let bytes = std::fs::read(&path).unwrap();
        let step = (bytes.len() / 200).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            std::fs::write(&bad, &bytes[..cut]).unwrap();
            assert!(
                archive::read_archive(&bad, &ArchiveReadOptions::default()).is_err(),
                "cut at {cut}"
            );
        }
        let mut undetected = 0;
        for pos in (0..bytes.len()).step_by(2) {
            let mut b = bytes.clone();
            b[pos] ^= 1 << (pos % 8);
            std::fs::write(&bad, &b).unwrap();
            // never a panic; either an error or exactly the same tensor (a flip in
            // statistics or other footer fields the restore does not use)
            match archive::read_archive(&bad, &ArchiveReadOptions::default()) {
                Err(_) => {}
                Ok(back) => {
                    assert_eq!(
                        back,
                        m,
                        "flip at byte {pos} of {} changed the tensor silently",
                        path.display()
                    );
                    undetected += 1;
                }
            }
        }
        eprintln!(
            "{}: {undetected} of {} flips harmless (statistics, page index, ...)",
            path.display(),
            bytes.len()
        );
    }
}

/// Rewrite an archive with its `arrow_sparse` JSON edited by `edit`.
fn with_metadata(src: &Path, dst: &Path, edit: impl Fn(&mut serde_json::Value)) {
    with_metadata_text(src, dst, |text| {
        let mut json: serde_json::Value = serde_json::from_str(text).unwrap();
        edit(&mut json);
        json.to_string()
    })
}

/// Rewrite an archive with its `arrow_sparse` text replaced by `edit(text)` (and
/// no `arrow_sparse.crc32`).
fn with_metadata_text(src: &Path, dst: &Path, edit: impl Fn(&str) -> String) {
    use ::parquet::arrow::ArrowWriter;
    use ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use ::parquet::file::metadata::KeyValue;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(src).unwrap()).unwrap();
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .clone();
    let text = kv
        .iter()
        .find(|k| k.key == "arrow_sparse")
        .unwrap()
        .value
        .clone()
        .unwrap();
    let text = edit(&text);
    let schema = Arc::new(arrow_schema::Schema::new(builder.schema().fields().clone()));
    let mut w = ArrowWriter::try_new(std::fs::File::create(dst).unwrap(), schema, None).unwrap();
    for b in builder.build().unwrap() {
        w.write(&b.unwrap()).unwrap();
    }
    w.append_key_value_metadata(KeyValue::new("arrow_sparse".into(), text));
    w.close().unwrap();
}

#[test]
fn metadata_that_disagrees_with_the_data_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path());
    let (coo, csr, csf, dense) = (&files[0].0, &files[1].0, &files[2].0, &files[3].0);
    let (gcs, dm) = (&files[4].0, &files[5].0);
    let out = dir.path().join("edited.parquet");
    let read = |p: &Path| archive::read_archive(p, &ArchiveReadOptions::default());
    // a faithful rewrite (other row groups, no checksums) still reads the same
    with_metadata(csr, &out, |j| {
        j.as_object_mut().unwrap().remove("row_groups");
    });
    assert_eq!(read(&out).unwrap(), files[1].1);
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&PathBuf, Edit, &str)> = vec![
        (coo, Box::new(|j| j["version"] = 2.into()), "Type"),
        (
            coo,
            Box::new(|j| j["rows"] = (j["rows"].as_u64().unwrap() - 1).into()),
            "Invariant",
        ),
        (
            coo,
            Box::new(|j| j["shape"][0] = 10.into()),
            "IndexOutOfBounds",
        ),
        (
            coo,
            Box::new(|j| j["value_type"] = "float32".into()),
            "Type",
        ),
        (coo, Box::new(|j| j["coo"]["canonical"] = true.into()), "ok"),
        (coo, Box::new(|j| j["format"] = "gcs".into()), "Parse"),
        (coo, Box::new(|j| j["format"] = "dm".into()), "Parse"),
        (coo, Box::new(|j| j["columns"][1] = "nope".into()), "Parse"),
        (
            coo,
            Box::new(|j| j["shape"] = serde_json::json!([40, 50, 2])),
            "Shape",
        ),
        (csr, Box::new(|j| j["format"] = "csc".into()), "Invariant"),
        (
            csr,
            Box::new(|j| j["shape"][0] = 1u64.into()),
            "IndexOutOfBounds",
        ),
        (
            csr,
            Box::new(|j| j["shape"][0] = (1u64 << 40).into()),
            "Overflow",
        ),
        (
            csf,
            Box::new(|j| j["csf"]["axis_order"] = serde_json::json!([0, 1, 2])),
            "ok-or-structure",
        ),
        (
            csf,
            Box::new(|j| j["csf"]["axis_order"] = serde_json::json!([0, 1, 1])),
            "Invariant",
        ),
        (
            dense,
            Box::new(|j| j["shape"] = serde_json::json!([5, 6])),
            "Invariant",
        ),
        (
            dense,
            Box::new(|j| {
                j["shape"] = serde_json::json!([5, 6]);
                j["dense"]["strides"] = serde_json::json!([6, 1]);
            }),
            "IndexOutOfBounds",
        ),
        (
            dense,
            Box::new(|j| j["dense"]["strides"] = serde_json::json!([1, 1])),
            "Invariant",
        ),
        // GCS: a mapping that is not one, or does not match the shape or the rows
        (
            gcs,
            Box::new(|j| j["gcs"]["dimensions"] = serde_json::json!([0, 0, 1])),
            "Invariant",
        ),
        (
            gcs,
            Box::new(|j| j["gcs"]["dimensions"] = serde_json::json!([2, 0])),
            "Invariant",
        ),
        (
            gcs,
            Box::new(|j| j["gcs"]["partitioning"] = serde_json::json!([1, 2])),
            "Shape",
        ),
        (
            gcs,
            Box::new(|j| j["gcs"]["partitioning"] = serde_json::json!([4])),
            "Invariant",
        ),
        (
            gcs,
            Box::new(|j| j["gcs"]["dimensions"] = serde_json::json!([0, 1, 2])),
            "Invariant",
        ),
        (
            gcs,
            Box::new(|j| j["gcs"]["compressed_axis"] = "column".into()),
            "Invariant",
        ),
        (
            gcs,
            Box::new(|j| j["gcs"]["compressed_axis"] = "diagonal".into()),
            "Parse",
        ),
        (
            gcs,
            Box::new(|j| {
                j.as_object_mut().unwrap().remove("gcs");
            }),
            "Parse",
        ),
        (
            gcs,
            Box::new(|j| j["gcs"]["dimensions"] = "2,0,1".into()),
            "Parse",
        ),
        (
            gcs,
            Box::new(|j| j["shape"][2] = 3.into()),
            "IndexOutOfBounds",
        ),
        (
            gcs,
            Box::new(|j| j["shape"][1] = 7.into()),
            "IndexOutOfBounds",
        ),
        // a tiny file declaring a reduced matrix whose indptr would not fit in
        // memory: refused before anything is allocated
        (
            gcs,
            Box::new(|j| j["shape"][2] = (7u64 << 40).into()),
            "Overflow",
        ),
        (
            gcs,
            Box::new(|j| j["shape"][0] = (1u64 << 62).into()),
            "Overflow",
        ),
        (gcs, Box::new(|j| j["index_type"] = "int8".into()), "ok"),
        (gcs, Box::new(|j| j["format"] = "csr".into()), "Shape"),
        // DM: maps that do not fit the storage, bad JSON, invalid chains
        (
            dm,
            Box::new(|j| j["dm"]["maps"][0]["shape"] = serde_json::json!([40, 51])),
            "Shape",
        ),
        (
            dm,
            Box::new(|j| j["dm"]["maps"][0]["dimensions"] = serde_json::json!([0, 0])),
            "Invariant",
        ),
        (
            dm,
            Box::new(|j| j["dm"]["maps"][0]["partitioning"] = serde_json::json!([])),
            "Shape",
        ),
        (dm, Box::new(|j| j["dm"]["maps"] = "x".into()), "Parse"),
        (
            dm,
            Box::new(|j| j["dm"]["maps"] = serde_json::json!([])),
            "Parse",
        ),
        (
            dm,
            Box::new(|j| j["dm"]["maps"][0]["kind"] = "gcs".into()),
            "Parse",
        ),
        (
            dm,
            Box::new(|j| j["dm"]["maps"][0]["shape"] = "[40, 50]".into()),
            "Parse",
        ),
        (
            dm,
            Box::new(|j| j["dm"]["maps"][0]["views"][0]["stop"] = 99.into()),
            "Shape",
        ),
        (
            dm,
            Box::new(|j| j["dm"]["maps"][0]["views"][0]["op"] = "explode".into()),
            "Parse",
        ),
        (
            dm,
            Box::new(|j| {
                j["dm"]["maps"][0]["views"] =
                    serde_json::json!([{"op": "broadcast", "shape": [40 * 70_000, 50]}])
            }),
            "Parse",
        ),
        (
            dm,
            Box::new(|j| {
                let inner = j["dm"]["maps"][0].clone();
                j["dm"]["maps"] = serde_json::json!([inner.clone(), inner]);
            }),
            "Shape",
        ),
        (dm, Box::new(|j| j["dm"]["storage"] = "dm".into()), "Parse"),
        (
            dm,
            Box::new(|j| j["dm"]["storage"] = "csr".into()),
            "Invariant",
        ),
        (dm, Box::new(|j| j["dm"]["storage"] = "gcs".into()), "Parse"),
        (
            dm,
            Box::new(|j| {
                j.as_object_mut().unwrap().remove("dm");
            }),
            "Parse",
        ),
        (dm, Box::new(|j| j["format"] = "csc".into()), "ok-storage"),
    ];
    for (i, (src, edit, kind)) in cases.into_iter().enumerate() {
        with_metadata(src, &out, edit);
        let r = read(&out);
        let ok = matches!(
            (kind, &r),
            ("ok" | "ok-or-structure", Ok(_))
                | (
                    "ok-storage",
                    Ok(TensorMessage {
                        tensor: AnyTensor::Csx(_),
                        ..
                    })
                )
                | ("ok-or-structure", Err(_))
                | ("Type", Err(Error::Type { .. }))
                | ("Invariant", Err(Error::Invariant { .. }))
                | ("IndexOutOfBounds", Err(Error::IndexOutOfBounds { .. }))
                | ("Overflow", Err(Error::Overflow { .. }))
                | ("Unsupported", Err(Error::Unsupported(_)))
                | ("Parse", Err(Error::Parse { .. }))
                | ("Shape", Err(Error::Shape { .. }))
        );
        assert!(ok, "case {i}: expected {kind}, got {r:?}");
    }
    // the JSON text itself broken
    for bad in [
        |t: &str| t[..t.len() / 2].to_string(),
        |t: &str| t.replacen("\"maps\":[", "\"maps\":[[", 1),
        |t: &str| t.replacen("{", "", 1),
    ] {
        with_metadata_text(dm, &out, bad);
        let r = read(&out);
        assert!(matches!(r, Err(Error::Parse { .. })), "{r:?}");
    }
    // the broadcast limit is an option
    with_metadata(dm, &out, |j| {
        j["dm"]["maps"][0]["views"] = serde_json::json!([{"op": "broadcast", "shape": [80, 50]}])
    });
    assert!(read(&out).is_ok());
    let strict = ArchiveReadOptions {
        max_broadcast: 1,
        ..ArchiveReadOptions::default()
    };
    assert!(matches!(
        archive::read_archive(&out, &strict),
        Err(Error::Parse { .. })
    ));
    // a canonical flag that lies is caught by full validation: the sorted COO
    // rewritten unsorted
    let unsorted: AnyTensor =
        random_coo::<f64, i32>(&mut Rng(8), &[40, 50], 60, false, CoordLayout::RowMajor).into();
    let p = dir.path().join("unsorted.parquet");
    archive::write_archive(&p, &unsorted.into(), &ArchiveWriteOptions::default()).unwrap();
    with_metadata(&p, &out, |j| j["coo"]["canonical"] = true.into());
    assert!(matches!(read(&out), Err(Error::Invariant { .. })));
    // not an archive at all
    with_metadata(coo, &out, |_| {});
    let plain = dir.path().join("plain.parquet");
    {
        use ::parquet::arrow::ArrowWriter;
        let b = ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            std::fs::File::open(coo).unwrap(),
        )
        .unwrap();
        let schema = Arc::new(arrow_schema::Schema::new(b.schema().fields().clone()));
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(&plain).unwrap(), schema, None).unwrap();
        for batch in b.build().unwrap() {
            w.write(&batch.unwrap()).unwrap();
        }
        w.close().unwrap();
    }
    assert!(matches!(read(&plain), Err(Error::Parse { .. })));
    assert!(matches!(
        read(&dir.path().join("missing.parquet")),
        Err(Error::Io(_))
    ));
}

#[test]
fn a_failed_write_leaves_the_destination_alone() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("x.parquet");
    let good: TensorMessage =
        AnyTensor::from(CooTensor::<f32, i32>::from_entries(vec![4], &[(vec![1], 1.0)]).unwrap())
            .into();
    archive::write_archive(&dest, &good, &ArchiveWriteOptions::default()).unwrap();
    let before = std::fs::read(&dest).unwrap();
    // a CSF tree the format cannot archive: the old file stays, nothing else appears
    let childless = AnyCsf::try_new(
        vec![2, 2],
        vec![0, 1],
        vec![IndexType::Int32.cast_from(&[0, 0, 1])],
        vec![
            IndexType::Int32.cast_from(&[0, 1]),
            IndexType::Int32.cast_from(&[1]),
        ],
        arrow_sparse::ValueBuffer::Float32(vec![1.0f32].into()),
        &TensorOptions::default(),
    )
    .unwrap();
    assert!(
        archive::write_archive(
            &dest,
            &AnyTensor::Csf(childless).into(),
            &ArchiveWriteOptions::default()
        )
        .is_err()
    );
    // a bad compression level
    let opts = ArchiveWriteOptions::default().with_compression(ArchiveCompression::Zstd(99));
    assert!(archive::write_archive(&dest, &good, &opts).is_err());
    assert_eq!(std::fs::read(&dest).unwrap(), before);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // a directory that does not exist
    let e = archive::write_archive(
        dir.path().join("no/such/dir/x.parquet"),
        &good,
        &ArchiveWriteOptions::default(),
    );
    assert!(matches!(e, Err(Error::Io(_))));
}

#[test]
fn compression_option_parses() {
    assert_eq!(
        "zstd".parse::<ArchiveCompression>().unwrap(),
        ArchiveCompression::Zstd(1)
    );
    assert_eq!(
        "zstd:7".parse::<ArchiveCompression>().unwrap(),
        ArchiveCompression::Zstd(7)
    );
    assert_eq!(
        "none".parse::<ArchiveCompression>().unwrap(),
        ArchiveCompression::Uncompressed
    );
    for bad in ["zstd:0", "zstd:x", "gzip", ""] {
        assert!(bad.parse::<ArchiveCompression>().is_err(), "{bad}");
    }
    assert_eq!(ArchiveCompression::Zstd(3).to_string(), "zstd:3");
}

#[test]
fn cli_converts_dumps_and_inspects_archives() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let golden = common::repo().join("format/golden/csf_f32_i16_order201.arrow");
    let golden = golden.to_str().unwrap();
    // IPC -> Parquet -> IPC: the same bytes
    cli_ok(&[
        "convert",
        golden,
        &p("a.parquet"),
        "--row-group-size",
        "3",
        "--compression",
        "zstd:5",
    ]);
    cli_ok(&["convert", &p("a.parquet"), &p("a.arrow")]);
    assert_eq!(
        std::fs::read(golden).unwrap(),
        std::fs::read(p("a.arrow")).unwrap()
    );
    assert_eq!(
        cli_ok(&["dump", &p("a.parquet")]),
        cli_ok(&["dump", golden])
    );
    let r = ArchiveReader::open(Path::new(&p("a.parquet"))).unwrap();
    assert_eq!(r.num_row_groups(), 3);
    let info = cli_ok(&["inspect", &p("a.parquet")]);
    for needle in [
        "tensor 0: csf",
        "row groups:  3",
        "index type:  int16",
        "axis order:  [2, 0, 1]",
        "zstd",
    ] {
        assert!(info.contains(needle), "missing {needle:?} in\n{info}");
    }
    // --to converts on the way
    cli_ok(&[
        "convert",
        golden,
        &p("b.parquet"),
        "--to",
        "coo",
        "--index-type",
        "uint8",
        "--compression",
        "none",
    ]);
    let b = cli_ok(&["dump", &p("b.parquet")]);
    assert!(
        b.starts_with(r#"{"format":"coo","value_type":"float32","index_type":"uint8""#),
        "{b}"
    );
    // a stream of several tensors does not fit one archive
    let mixed = common::repo().join("format/golden/stream_mixed.arrow");
    let out = cli(&["convert", mixed.to_str().unwrap(), &p("m.parquet")]);
    assert_eq!(out.status.code(), Some(4), "exit code 4: cannot convert");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("arrow-sparse: error:") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!Path::new(&p("m.parquet")).exists());
    // Parquet options with an IPC output, or a bad compression: bad command lines
    assert_eq!(
        cli(&["convert", golden, &p("c.arrow"), "--row-group-size", "5"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        cli(&[
            "convert",
            golden,
            &p("c.parquet"),
            "--compression",
            "brotli"
        ])
        .status
        .code(),
        Some(2)
    );
    // a corrupt archive: one line on stderr, exit 3 (invalid input)
    let bytes = std::fs::read(p("a.parquet")).unwrap();
    std::fs::write(p("bad.parquet"), &bytes[..bytes.len() - 10]).unwrap();
    for cmd in ["dump", "inspect"] {
        let out = cli(&[cmd, &p("bad.parquet")]);
        assert_eq!(out.status.code(), Some(3));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("arrow-sparse: error:") && err.lines().count() == 1,
            "{err}"
        );
    }
    // bit flips in the data pages (some make the decoder panic; the reader catches
    // it): an error on one line, or the same dump
    let want = cli_ok(&["dump", &p("a.parquet")]);
    for pos in (4..bytes.len() / 2).step_by(7) {
        let mut b = bytes.clone();
        b[pos] ^= 0x10;
        std::fs::write(p("flip.parquet"), &b).unwrap();
        let out = cli(&["dump", &p("flip.parquet")]);
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => assert_eq!(String::from_utf8_lossy(&out.stdout), want, "flip at {pos}"),
            Some(3) => assert!(
                err.starts_with("arrow-sparse: error:") && err.lines().count() == 1,
                "flip at {pos}: {err}"
            ),
            other => panic!("flip at {pos}: exit {other:?}: {err}"),
        }
    }
}

#[test]
fn cli_archives_gcs_and_dm_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let golden = common::repo().join("format/golden/csf_f32_i16_order201.arrow");
    let golden = golden.to_str().unwrap();
    for (name, args, needles) in [
        (
            "g",
            &[
                "--to",
                "gcs",
                "--dimensions",
                "2,0,1",
                "--partitioning",
                "1",
                "--compressed-axis",
                "column",
                "--index-type",
                "int32",
            ][..],
            &[
                "tensor 0: gcs",
                "gcs map:     dimensions [2, 0, 1], partitioning [1], compressed axis Column",
                "index type:  int32 (indptr int32)",
            ][..],
        ),
        (
            "d",
            &[
                "--to",
                "dm",
                "--dimensions",
                "1,2,0",
                "--partitioning",
                "2",
                "--storage",
                "csr",
            ][..],
            &["tensor 0: dm", "dm maps:     1 level(s) over a csr storage"][..],
        ),
    ] {
        // IPC (GCS / DM message) -> Parquet -> IPC: the same bytes
        let arrow = p(&format!("{name}.arrow"));
        let mut convert = vec!["convert", golden, &arrow];
        convert.extend_from_slice(args);
        cli_ok(&convert);
        let archive = p(&format!("{name}.parquet"));
        cli_ok(&["convert", &arrow, &archive, "--row-group-size", "4"]);
        let back = p(&format!("{name}.back.arrow"));
        cli_ok(&["convert", &archive, &back]);
        assert_eq!(
            std::fs::read(&arrow).unwrap(),
            std::fs::read(&back).unwrap(),
            "{name}"
        );
        // dump reads the archive directly: the logical tensor
        let dump = cli_ok(&["dump", &archive]);
        assert_eq!(dump, cli_ok(&["dump", &arrow]), "{name}");
        let d: serde_json::Value = serde_json::from_str(&dump).unwrap();
        let g: serde_json::Value = serde_json::from_str(&cli_ok(&["dump", golden])).unwrap();
        assert_eq!(
            (&d["format"], &d["shape"], &d["entries"]),
            (
                &serde_json::json!(if name == "g" { "gcs" } else { "dm" }),
                &g["shape"],
                &g["entries"]
            ),
            "{name}"
        );
        let info = cli_ok(&["inspect", &archive]);
        for needle in needles {
            assert!(info.contains(needle), "missing {needle:?} in\n{info}");
        }
        // --to on the way into the archive
        let direct = p(&format!("{name}.direct.parquet"));
        convert[2] = &direct;
        cli_ok(&convert);
        assert_eq!(cli_ok(&["dump", &direct]), dump, "{name}");
    }
}

/// Add the SpMV archives to `dir` and run `tests/python/check_parquet.py` on it.
fn run_python_checks(python: &Path, dir: &Path, archives: Vec<serde_json::Value>) {
    // SpMV (arrow-sparse's kernel): float64 CSR with named dimensions, int64 COO
    // with duplicates
    let mut r = Rng(21);
    let a = random_coo::<f64, i32>(&mut r, &[3000, 2000], 40_000, true, CoordLayout::RowMajor);
    let a: AnyTensor = AnyTensor::from(a.to_csx::<i32, i64>(CompressedAxis::Row).unwrap())
        .with_dim_names(vec!["row".into(), "col".into()])
        .unwrap();
    let x: Vec<f64> = (0..2000).map(|_| f64::random(&mut r) * 1e3).collect();
    let b: AnyTensor =
        random_coo::<i64, i64>(&mut r, &[500, 400], 5000, false, CoordLayout::RowMajor).into();
    let b = b.convert(Format::Coo, IndexType::Int64, None).unwrap();
    let bx: Vec<i64> = (0..400).map(|_| (r.below(2000) as i64) - 1000).collect();
    let b = {
        // small integer values so the products cannot overflow
        let c = b.to_coo::<i64, i64>().unwrap();
        let v: Vec<i64> = (0..c.nnz()).map(|k| (k % 97) as i64 - 48).collect();
        AnyTensor::from(
            CooTensor::<i64, i64>::try_new(
                c.shape().to_vec(),
                CoordLayout::RowMajor,
                EntryOrder::Any,
                c.coords().clone(),
                v.into(),
            )
            .unwrap(),
        )
    };
    let mut spmvs = Vec::new();
    let write_vec = |name: &str, t: AnyTensor| {
        archive::write_archive(dir.join(name), &t.into(), &ArchiveWriteOptions::default()).unwrap();
    };
    write_vec("a.parquet", a.clone());
    write_vec(
        "x.parquet",
        DenseTensor::<f64>::try_new(vec![2000], x.clone().into())
            .unwrap()
            .into(),
    );
    write_vec(
        "y.parquet",
        DenseTensor::<f64>::try_new(
            vec![3000],
            arrow_sparse::kernels::spmv::spmv(&a, &x).unwrap().into(),
        )
        .unwrap()
        .into(),
    );
    spmvs.push(serde_json::json!({"matrix": "a.parquet", "x": "x.parquet", "y": "y.parquet"}));
    write_vec("b.parquet", b.clone());
    write_vec(
        "bx.parquet",
        DenseTensor::<i64>::try_new(vec![400], bx.clone().into())
            .unwrap()
            .into(),
    );
    write_vec(
        "by.parquet",
        DenseTensor::<i64>::try_new(
            vec![500],
            arrow_sparse::kernels::spmv::spmv(&b, &bx).unwrap().into(),
        )
        .unwrap()
        .into(),
    );
    spmvs.push(serde_json::json!({"matrix": "b.parquet", "x": "bx.parquet", "y": "by.parquet"}));
    let manifest = serde_json::json!({"archives": archives, "spmv": spmvs});
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    let script = common::repo().join("tests/python/check_parquet.py");
    let out = Command::new(python).arg(&script).arg(dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stderr}");
    assert!(out.status.success(), "check_parquet.py failed:\n{stderr}");
}

/// Level tensor archives (format/SPEC.md 9.4 `levels`) whose metadata is
/// hostile or disagrees with the rows: typed errors, and a dense level claimed
/// huge is refused by the read limit before its fill is allocated.
#[test]
fn hostile_level_metadata_in_archives_is_a_typed_error() {
    use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(17);
    let t3 = random_coo::<f32, i16>(&mut r, &[6, 5, 7], 30, true, CoordLayout::RowMajor);
    let batched: AnyTensor =
        LevelTensor::<f32, i16>::from_coo(&t3, &LevelFormat::batched_csr(1).unwrap())
            .unwrap()
            .into();
    let src = dir.path().join("level.parquet");
    archive::write_archive(
        &src,
        &batched.clone().into(),
        &ArchiveWriteOptions::default(),
    )
    .unwrap();
    let out = dir.path().join("edited.parquet");
    let read = |p: &Path| archive::read_archive(p, &ArchiveReadOptions::default());
    assert_eq!(read(&src).unwrap().tensor, batched);
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let many: Vec<&str> = vec!["dense"; 1000];
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|j| {
                j.as_object_mut().unwrap().remove("levels");
            }),
            "Parse",
        ),
        (
            Box::new(move |j| j["levels"]["levels"] = serde_json::json!(many)),
            "Parse",
        ),
        (
            Box::new(|j| j["levels"]["levels"][2] = "loose_compressed".into()),
            "Parse",
        ),
        (
            Box::new(|j| j["levels"]["levels"][1] = "singleton".into()),
            "Invariant",
        ),
        (
            Box::new(|j| j["levels"]["levels"][0] = "dense(nonunique)".into()),
            "Invariant",
        ),
        (
            Box::new(|j| j["levels"]["axis_order"] = serde_json::json!([0, 0, 1])),
            "Invariant",
        ),
        (
            Box::new(|j| j["levels"]["axis_order"] = serde_json::json!([0, 1])),
            "Invariant",
        ),
        (
            Box::new(|j| j["levels"]["level_column"] = "nope".into()),
            "Parse",
        ),
        (Box::new(|j| j["index_type"] = "int128".into()), "Parse"),
        (
            Box::new(|j| {
                j.as_object_mut().unwrap().remove("indptr_type");
            }),
            "Parse",
        ),
        // rows out of order for a level declared ordered
        (
            Box::new(|j| j["levels"]["axis_order"] = serde_json::json!([1, 0, 2])),
            "Invariant",
        ),
        // a dense level of 2^40: the fill goes past the read limit
        (Box::new(|j| j["shape"][0] = (1u64 << 40).into()), "Limit"),
    ];
    for (i, (edit, want)) in cases.into_iter().enumerate() {
        with_metadata(&src, &out, edit);
        let got = read(&out);
        let kind = match &got {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("{e:?}"),
        };
        assert!(
            kind.starts_with(want),
            "case {i}: expected {want}, got {kind}"
        );
    }
}

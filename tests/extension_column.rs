//! Sparse tensor columns (`arrow_sparse::column`): exact round trips of every format
//! and value type in memory, through arrow-ipc files and streams, through Parquet
//! and through pyarrow (`tests/python/check_extension.py`); zero-copy rows; null
//! rows; per-row CSF axis orders and GCS maps; bad columns; a property test.
#![cfg(feature = "parquet")]

mod common;
use arrow_sparse::{EntryOrder, TensorOptions};
use common::{Rng, cli, cli_ok};

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Schema};
use arrow_sparse::buffer::points_into;
use arrow_sparse::column::{self, SparseTensorArray, SparseTensorType, files};
use arrow_sparse::dims::DimMap;
use arrow_sparse::{
    AnyCoo, AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, Error, Format, IndexBuffer,
    IndexType, ValueBuffer, ValueType,
};
use half::f16;
use proptest::prelude::*;

/// Small non-zero integers as a buffer of any value type.
fn value_buffer(vt: ValueType, xs: &[i64]) -> ValueBuffer {
    macro_rules! cast {
        ($v:ident, $t:ty) => {
            ValueBuffer::$v(xs.iter().map(|&x| x as $t).collect::<Vec<$t>>().into())
        };
    }
    match vt {
        ValueType::Int8 => cast!(Int8, i8),
        ValueType::Int16 => cast!(Int16, i16),
        ValueType::Int32 => cast!(Int32, i32),
        ValueType::Int64 => cast!(Int64, i64),
        ValueType::UInt8 => cast!(UInt8, u8),
        ValueType::UInt16 => cast!(UInt16, u16),
        ValueType::UInt32 => cast!(UInt32, u32),
        ValueType::UInt64 => cast!(UInt64, u64),
        ValueType::Float16 => ValueBuffer::Float16(
            xs.iter()
                .map(|&x| f16::from_f32(x as f32 * 0.25))
                .collect::<Vec<_>>()
                .into(),
        ),
        ValueType::Float32 => ValueBuffer::Float32(
            xs.iter()
                .map(|&x| x as f32 / 3.0)
                .collect::<Vec<_>>()
                .into(),
        ),
        ValueType::Float64 => ValueBuffer::Float64(
            xs.iter()
                .map(|&x| x as f64 / 7.0)
                .collect::<Vec<_>>()
                .into(),
        ),
        _ => unreachable!(),
    }
}

/// A random canonical COO tensor with int64 coordinates.
fn random_coo(r: &mut Rng, shape: &[usize], nnz: usize, vt: ValueType) -> AnyTensor {
    let mut entries: Vec<Vec<usize>> = (0..nnz)
        .map(|_| shape.iter().map(|&d| r.below(d)).collect())
        .collect();
    entries.sort();
    entries.dedup();
    let coords: Vec<i64> = entries.iter().flatten().map(|&c| c as i64).collect();
    let values: Vec<i64> = (0..entries.len())
        .map(|_| 1 + r.below(100) as i64)
        .collect();
    AnyTensor::Coo(
        AnyCoo::try_new(
            shape.to_vec(),
            CoordLayout::RowMajor,
            EntryOrder::Canonical,
            IndexBuffer::Int64(coords.into()),
            value_buffer(vt, &values),
            &TensorOptions::default(),
        )
        .unwrap(),
    )
}

/// `count` tensors of `format` with value type `vt` and index type `it`; row `k`
/// has its own shape and nnz (the first is empty). CSF uses axis order (2,0,1)
/// for every row; GCS dimensions (2,1,0) and partitioning (1,).
fn tensors(
    format: Format,
    vt: ValueType,
    it: IndexType,
    count: usize,
    seed: u64,
) -> Vec<AnyTensor> {
    let mut r = Rng(seed | 1);
    let names: Vec<String> = match format {
        Format::Csr | Format::Csc => vec!["row".into(), "col".into()],
        _ => vec!["a".into(), "b".into(), "".into()],
    };
    (0..count)
        .map(|k| {
            let shape: Vec<usize> = match format {
                Format::Csr | Format::Csc => vec![2 + r.below(6), 1 + r.below(9)],
                _ => vec![1 + r.below(4), 2 + r.below(5), 1 + r.below(6)],
            };
            let nnz = if k == 0 { 0 } else { r.below(12) };
            let coo = random_coo(&mut r, &shape, nnz, vt);
            let t = match format {
                Format::Gcs => {
                    let map = DimMap::try_new(shape, vec![2, 1, 0], vec![1]).unwrap();
                    coo.to_gcs(map, CompressedAxis::Row, it).unwrap()
                }
                Format::Csf => coo.convert(Format::Csf, it, Some(&[2, 0, 1])).unwrap(),
                f => coo.convert(f, it, None).unwrap(),
            };
            t.with_dim_names(names.clone()).unwrap()
        })
        .collect()
}

const FORMATS: [Format; 5] = [
    Format::Coo,
    Format::Csr,
    Format::Csc,
    Format::Csf,
    Format::Gcs,
];

/// Index types cycled through the value types (uint64 included: columns allow it).
fn index_type_for(i: usize) -> IndexType {
    [
        IndexType::Int32,
        IndexType::Int64,
        IndexType::Int16,
        IndexType::UInt16,
        IndexType::UInt64,
        IndexType::Int8,
        IndexType::UInt32,
        IndexType::UInt8,
    ][i % 8]
}

fn batch_of(tensors: &[AnyTensor]) -> RecordBatch {
    let column = SparseTensorArray::from_tensors(tensors).unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        column.field("tensor"),
    ]));
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..tensors.len() as i64));
    RecordBatch::try_new(schema, vec![ids, column.into_array()]).unwrap()
}

fn tensors_of(batch: &RecordBatch) -> Vec<AnyTensor> {
    let column = SparseTensorArray::from_batch(batch, "tensor").unwrap();
    column.iter().map(|t| t.unwrap().unwrap()).collect()
}

fn ipc_file_bytes(batch: &RecordBatch) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut w = arrow_ipc::writer::FileWriter::try_new(&mut bytes, &batch.schema()).unwrap();
    w.write(batch).unwrap();
    w.finish().unwrap();
    drop(w);
    bytes
}

fn read_ipc_file(bytes: Vec<u8>) -> RecordBatch {
    let mut r = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
    r.next().unwrap().unwrap()
}

#[test]
fn every_format_and_value_type_round_trips_in_memory_ipc_and_parquet() {
    for format in FORMATS {
        for (i, vt) in ValueType::ALL.into_iter().enumerate() {
            let it = index_type_for(i);
            let ts = tensors(format, vt, it, 7, (i * 31 + format as usize) as u64);
            let batch = batch_of(&ts);
            let what = format!("{format} {vt} {it}");
            assert_eq!(tensors_of(&batch), ts, "in memory: {what}");

            // arrow-ipc file
            let back = read_ipc_file(ipc_file_bytes(&batch));
            assert_eq!(back.schema(), batch.schema(), "IPC schema: {what}");
            assert_eq!(tensors_of(&back), ts, "IPC file: {what}");

            // arrow-ipc stream
            let mut bytes = Vec::new();
            let mut w =
                arrow_ipc::writer::StreamWriter::try_new(&mut bytes, &batch.schema()).unwrap();
            w.write(&batch).unwrap();
            w.finish().unwrap();
            drop(w);
            let mut r = arrow_ipc::reader::StreamReader::try_new(&bytes[..], None).unwrap();
            assert_eq!(
                tensors_of(&r.next().unwrap().unwrap()),
                ts,
                "IPC stream: {what}"
            );

            // Parquet (nested lists; the extension type rides in the stored Arrow schema)
            let mut pq = Vec::new();
            let mut w =
                parquet::arrow::ArrowWriter::try_new(&mut pq, batch.schema(), None).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            let r = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
                bytes::Bytes::from(pq),
                1024,
            )
            .unwrap();
            let back: Vec<RecordBatch> = r.collect::<Result<_, _>>().unwrap();
            assert_eq!(back.len(), 1);
            assert_eq!(
                back[0].schema().field(1).metadata(),
                batch.schema().field(1).metadata(),
                "Parquet metadata: {what}"
            );
            assert_eq!(tensors_of(&back[0]), ts, "Parquet: {what}");
        }
    }
}

#[test]
fn rows_are_zero_copy_slices_of_the_column() {
    for format in FORMATS {
        let ts = tensors(format, ValueType::Float64, IndexType::Int64, 5, 9);
        let batch = read_ipc_file(ipc_file_bytes(&batch_of(&ts)));
        let column = SparseTensorArray::from_batch(&batch, "tensor").unwrap();
        let storage = column.storage();
        let values_child = storage
            .column_by_name("values")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::ListArray>()
            .unwrap()
            .values()
            .to_data()
            .buffers()[0]
            .clone();
        for i in 1..column.len() {
            let t = column.value(i).unwrap().unwrap();
            let values = match &t {
                AnyTensor::Coo(c) => c.values().clone(),
                AnyTensor::Csx(c) => c.values().clone(),
                AnyTensor::Csf(c) => c.values().clone(),
                AnyTensor::Gcs(g) => g.matrix().values().clone(),
                _ => unreachable!(),
            };
            if !values.is_empty() {
                assert!(
                    points_into(values.inner(), &values_child),
                    "{format} row {i} copied its values"
                );
            }
        }
    }
}

#[test]
fn sliced_columns_and_null_rows() {
    let ts = tensors(Format::Csr, ValueType::Int32, IndexType::Int32, 6, 3);
    let ty = SparseTensorType::infer(&ts).unwrap();
    let rows = [Some(&ts[1]), None, Some(&ts[2]), Some(&ts[3]), None];
    let column = SparseTensorArray::from_rows(&ty, rows).unwrap();
    assert_eq!(column.len(), 5);
    let field = column.field("t");
    let array = column.into_array();
    let read = SparseTensorArray::try_new(&field, &array).unwrap();
    let back: Vec<Option<AnyTensor>> = read.iter().map(Result::unwrap).collect();
    assert_eq!(back, rows.map(|r| r.cloned()));
    // a slice of the struct array reads the right rows
    let sliced = array.slice(2, 2);
    let read = SparseTensorArray::try_new(&field, &sliced).unwrap();
    assert_eq!(read.value(0).unwrap().as_ref(), Some(&ts[2]));
    assert_eq!(read.value(1).unwrap().as_ref(), Some(&ts[3]));
    assert!(matches!(read.value(2), Err(Error::IndexOutOfBounds { .. })));
    // an empty column
    let empty = SparseTensorArray::from_rows(&ty, []).unwrap();
    assert!(empty.is_empty());
    assert!(SparseTensorArray::from_tensors([]).is_err());
}

/// CSF tensors with three different axis orders and GCS tensors with three
/// different maps (3 x 4 x 5): columns of either need per-row children.
fn per_row_tensors(r: &mut Rng, nnz: usize) -> (Vec<AnyTensor>, Vec<AnyTensor>) {
    let csf = [[0, 1, 2], [2, 0, 1], [1, 2, 0]]
        .iter()
        .map(|o| {
            random_coo(r, &[3, 4, 5], nnz, ValueType::Float32)
                .convert(Format::Csf, IndexType::Int32, Some(o))
                .unwrap()
        })
        .collect();
    let gcs = [(vec![0, 1, 2], 1), (vec![2, 0, 1], 2), (vec![1, 2, 0], 0)]
        .into_iter()
        .map(|(d, p)| {
            let map = DimMap::try_new(vec![3, 4, 5], d, vec![p]).unwrap();
            random_coo(r, &[3, 4, 5], nnz, ValueType::Int16)
                .to_gcs(map, CompressedAxis::Column, IndexType::Int64)
                .unwrap()
        })
        .collect();
    (csf, gcs)
}

/// Null rows survive Arrow IPC and Parquet files in every format, also with
/// per-row CSF axis orders and GCS maps (a Parquet reader hands back the fixed-size
/// children of a null row as nulls, which are ignored, SPEC 10.1).
#[test]
fn null_rows_round_trip_through_ipc_and_parquet_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(17);
    let (per_row_csf, per_row_gcs) = per_row_tensors(&mut r, 6);
    let mut cases: Vec<Vec<AnyTensor>> = FORMATS
        .iter()
        .map(|&f| tensors(f, ValueType::Float32, IndexType::Int32, 3, 23))
        .collect();
    cases.extend([per_row_csf, per_row_gcs]);
    for (c, ts) in cases.iter().enumerate() {
        let ty = SparseTensorType::infer(ts).unwrap();
        let rows: Vec<Option<&AnyTensor>> = vec![None, Some(&ts[0]), None, Some(&ts[1]), None];
        let column = SparseTensorArray::from_rows(&ty, rows.iter().copied()).unwrap();
        let schema = Arc::new(Schema::new(vec![column.field("t")]));
        let batch = RecordBatch::try_new(schema.clone(), vec![column.into_array()]).unwrap();
        for ext in ["arrow", "parquet"] {
            let path = dir.path().join(format!("nulls{c}.{ext}"));
            files::write_batches(&path, schema.clone(), std::slice::from_ref(&batch)).unwrap();
            let (_, batches) = files::read_batches(&path).unwrap();
            let back: Vec<Option<AnyTensor>> = batches
                .iter()
                .flat_map(|b| {
                    let col = SparseTensorArray::from_batch(b, "t").unwrap();
                    col.iter()
                        .map(|t| t.unwrap_or_else(|e| panic!("case {c} {ext}: {e}")))
                        .collect::<Vec<_>>()
                })
                .collect();
            let want: Vec<Option<AnyTensor>> = rows.iter().map(|r| r.cloned()).collect();
            assert_eq!(back, want, "case {c} {ext}");
            let non_null = files::read_tensors(&path).unwrap().unwrap();
            assert_eq!(
                non_null,
                vec![ts[0].clone(), ts[1].clone()],
                "case {c} {ext}"
            );
        }
    }
}

#[test]
fn per_row_axis_orders_and_maps_become_children() {
    let mut r = Rng(5);
    let (csf, gcs) = per_row_tensors(&mut r, 9);
    for (ts, extra) in [
        (&csf, &["axis_order"][..]),
        (&gcs, &["dimensions", "partitioning"]),
    ] {
        let batch = batch_of(ts);
        let ty = SparseTensorType::from_field(batch.schema().field(1)).unwrap();
        assert!(ty.axis_order().is_none() && ty.gcs_map().is_none());
        let DataType::Struct(fields) = ty.storage_type() else {
            panic!()
        };
        for name in extra {
            assert!(fields.find(name).is_some(), "{name}");
        }
        assert_eq!(tensors_of(&read_ipc_file(ipc_file_bytes(&batch))), *ts);
    }
    // column constants: a tensor with another order does not fit the column
    let ty = SparseTensorType::of(&csf[0]).unwrap();
    assert_eq!(ty.axis_order(), Some(&[0, 1, 2][..]));
    let err = SparseTensorArray::from_rows(&ty, [Some(&csf[1])]).unwrap_err();
    assert!(matches!(err, Error::Row { row: 0, .. }), "{err}");
}

#[test]
fn mixed_indptr_types_and_column_major_coo() {
    let coo = CooTensor::<f32, i64>::from_entries(
        vec![4, 300],
        &[(vec![0, 299], 1.0), (vec![3, 5], 2.0), (vec![3, 7], -1.0)],
    )
    .unwrap();
    let csr: AnyTensor = coo.to_csx::<i16, i64>(CompressedAxis::Row).unwrap().into();
    let csf: AnyTensor = coo.to_csf::<u16, i8>(&[1, 0]).unwrap().into();
    for t in [csr, csf] {
        let ty = SparseTensorType::of(&t).unwrap();
        assert_ne!(Some(ty.index_type()), ty.indptr_type());
        let batch = read_ipc_file(ipc_file_bytes(&batch_of(std::slice::from_ref(&t))));
        assert_eq!(tensors_of(&batch), vec![t]);
    }
    // column-major coordinates are stored row-major: same entries, row-major layout
    let cm = AnyCoo::try_new(
        vec![2, 3],
        CoordLayout::ColumnMajor,
        EntryOrder::Canonical,
        IndexBuffer::Int32(vec![0, 1, 1, 2].into()),
        ValueBuffer::UInt8(vec![5, 6].into()),
        &TensorOptions::default(),
    )
    .unwrap();
    let back = tensors_of(&batch_of(&[AnyTensor::Coo(cm)]));
    let AnyTensor::Coo(c) = &back[0] else {
        panic!()
    };
    assert_eq!(c.layout(), CoordLayout::RowMajor);
    assert_eq!(c.coords(), &IndexBuffer::Int32(vec![0, 1, 1, 2].into()));
}

#[test]
fn mismatched_tensors_and_unsupported_formats_are_refused() {
    let a = tensors(Format::Csr, ValueType::Float64, IndexType::Int32, 2, 1);
    let b = tensors(Format::Csr, ValueType::Float32, IndexType::Int32, 2, 1);
    let c = tensors(Format::Csc, ValueType::Float64, IndexType::Int32, 2, 1);
    let d = tensors(Format::Csr, ValueType::Float64, IndexType::Int64, 2, 1);
    let renamed = a[1]
        .clone()
        .with_dim_names(vec!["x".into(), "y".into()])
        .unwrap();
    for other in [&b[1], &c[1], &d[1], &renamed] {
        let err = SparseTensorArray::from_tensors([&a[0], other]).unwrap_err();
        assert!(
            matches!(&err, Error::Row { row: 1, source } if matches!(**source, Error::Type { .. })),
            "{err}"
        );
    }
    let dense: AnyTensor = a[1]
        .to_coo::<f64, i64>()
        .unwrap()
        .to_dense()
        .unwrap()
        .into();
    assert!(matches!(
        SparseTensorArray::from_tensors([&dense]),
        Err(Error::Unsupported(_))
    ));
}

/// Rebuild a column with one child replaced.
fn replace_child(column: &SparseTensorArray, name: &str, child: ArrayRef) -> ArrayRef {
    let s = column.storage();
    let DataType::Struct(fields) = s.data_type() else {
        panic!()
    };
    let (i, _) = fields.find(name).unwrap();
    let mut cols = s.columns().to_vec();
    cols[i] = child;
    let fields: Vec<Field> = fields
        .iter()
        .zip(&cols)
        .map(|(f, c)| Field::new(f.name(), c.data_type().clone(), f.is_nullable()))
        .collect();
    Arc::new(StructArray::try_new(fields.into(), cols, s.nulls().cloned()).unwrap())
}

fn list_i64(rows: &[&[i64]]) -> ArrayRef {
    let item = Arc::new(Field::new("item", DataType::Int64, false));
    let values: Vec<i64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    let offsets = arrow_buffer::OffsetBuffer::from_lengths(rows.iter().map(|r| r.len()));
    Arc::new(
        arrow_array::ListArray::try_new(item, offsets, Arc::new(Int64Array::from(values)), None)
            .unwrap(),
    )
}

fn expect_row_error(field: &Field, array: &ArrayRef, row: usize, check: fn(&Error) -> bool) {
    match SparseTensorArray::try_new(field, array) {
        Err(Error::Row { row: r, source }) if r == row && check(&source) => {}
        other => panic!("expected a row {row} error, got {other:?}"),
    }
}

#[test]
fn inconsistent_columns_are_typed_errors_at_read() {
    // CSR, int64 everywhere: row 0 is 2 x 3 with 2 entries
    let t = CooTensor::<i64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1), (vec![1, 2], 2)])
        .unwrap()
        .to_csx::<i64, i64>(CompressedAxis::Row)
        .unwrap()
        .into();
    let column = SparseTensorArray::from_tensors([&t]).unwrap();
    let field = column.field("t");
    // indptr that does not end at the number of indices
    let a = replace_child(&column, "indptr", list_i64(&[&[0, 1, 3]]));
    expect_row_error(&field, &a, 0, |e| matches!(e, Error::Invariant { .. }));
    // indptr of the wrong length for the shape
    let a = replace_child(&column, "indptr", list_i64(&[&[0, 2]]));
    expect_row_error(&field, &a, 0, |e| matches!(e, Error::Length { .. }));
    // an index outside its dimension
    let a = replace_child(&column, "indices", list_i64(&[&[1, 3]]));
    expect_row_error(&field, &a, 0, |e| {
        matches!(e, Error::IndexOutOfBounds { .. })
    });
    // more values than indices
    let a = replace_child(&column, "values", list_i64(&[&[1, 2, 3]]));
    expect_row_error(&field, &a, 0, |e| matches!(e, Error::Length { .. }));
    // a negative extent
    let shape = arrow_array::FixedSizeListArray::try_new(
        Arc::new(Field::new("item", DataType::Int64, false)),
        2,
        Arc::new(Int64Array::from(vec![2, -3])),
        None,
    )
    .unwrap();
    let a = replace_child(&column, "shape", Arc::new(shape));
    expect_row_error(&field, &a, 0, |e| matches!(e, Error::Shape { .. }));
    // a null extent in a non-null row
    let shape = arrow_array::FixedSizeListArray::try_new(
        Arc::new(Field::new("item", DataType::Int64, true)),
        2,
        Arc::new(Int64Array::from(vec![Some(2), None])),
        None,
    )
    .unwrap();
    let a = replace_child(&column, "shape", Arc::new(shape));
    expect_row_error(&field, &a, 0, |e| matches!(e, Error::Invariant { .. }));

    // COO: coordinates out of range, wrong count
    let coo: AnyTensor =
        CooTensor::<i64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1), (vec![1, 2], 2)])
            .unwrap()
            .into();
    let column = SparseTensorArray::from_tensors([&coo, &coo]).unwrap();
    let field = column.field("t");
    let a = replace_child(&column, "coords", list_i64(&[&[0, 1, 1, 2], &[0, 1, 2, 2]]));
    expect_row_error(&field, &a, 1, |e| {
        matches!(e, Error::IndexOutOfBounds { .. })
    });
    let a = replace_child(&column, "coords", list_i64(&[&[0, 1, 1, 2], &[0, 1, 1]]));
    expect_row_error(&field, &a, 1, |e| matches!(e, Error::Length { .. }));

    // metadata: bad JSON, wrong version, types that disagree with the storage,
    // a storage of another format, no extension name
    let array = column.clone().into_array();
    let with_meta = |m: &str| {
        let mut md = field.metadata().clone();
        md.insert(String::from("ARROW:extension:metadata"), String::from(m));
        field.clone().with_metadata(md)
    };
    let good = field.metadata()["ARROW:extension:metadata"].clone();
    for (meta, is_parse) in [
        ("{not json".to_string(), true),
        (good.replace("\"version\":1", "\"version\":2"), true),
        (
            good.replace("\"ndim\":2", "\"ndim\":3")
                .replace("[\"\",\"\"]", "[\"\",\"\",\"\"]"),
            false,
        ),
        (good.replace("int64\",\"ndim", "int32\",\"ndim"), false),
        (
            good.replace("\"value_type\":\"int64\"", "\"value_type\":\"int128\""),
            true,
        ),
        ("[]".to_string(), true),
    ] {
        let err = SparseTensorArray::try_new(&with_meta(&meta), &array).unwrap_err();
        let ok = if is_parse {
            matches!(err, Error::Parse { .. })
        } else {
            matches!(err, Error::Type { .. } | Error::Shape { .. })
        };
        assert!(ok, "{meta}: {err:?}");
    }
    let mut md = field.metadata().clone();
    md.insert(
        String::from("ARROW:extension:name"),
        String::from("arrow_sparse.csr"),
    );
    let err = SparseTensorArray::try_new(&field.clone().with_metadata(md), &array).unwrap_err();
    assert!(
        matches!(err, Error::Parse { .. } | Error::Type { .. }),
        "{err:?}"
    );
    let plain = Field::new("t", array.data_type().clone(), true);
    assert!(matches!(
        SparseTensorArray::try_new(&plain, &array),
        Err(Error::Type { .. })
    ));
    let ints: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    assert!(matches!(
        SparseTensorArray::try_new(&field, &ints),
        Err(Error::Type { .. })
    ));
}

#[test]
fn files_of_batches_are_detected_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let ts = tensors(Format::Csf, ValueType::Float64, IndexType::Int32, 4, 77);
    let batch = batch_of(&ts);
    for name in ["t.arrow", "t.parquet"] {
        let path = dir.path().join(name);
        files::write_batches(&path, batch.schema(), std::slice::from_ref(&batch)).unwrap();
        assert_eq!(
            files::read_tensors(&path).unwrap(),
            Some(ts.clone()),
            "{name}"
        );
        let (schema, _) = files::read_batches(&path).unwrap();
        assert_eq!(column::sparse_columns(&schema), vec![1]);
    }
    // a stream of record batches
    let path = dir.path().join("s.arrows");
    let mut w = arrow_ipc::writer::StreamWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        &batch.schema(),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    assert_eq!(files::detect(&path).unwrap(), files::FileKind::IpcStream);
    assert_eq!(files::read_tensors(&path).unwrap(), Some(ts.clone()));
    // SparseTensor messages are not record batches
    let msgs = dir.path().join("m.arrow");
    let messages: Vec<arrow_sparse::ipc::TensorMessage> =
        ts.iter().map(|t| t.clone().into()).collect();
    arrow_sparse::ipc::write_tensor_stream(&msgs, &messages, &Default::default()).unwrap();
    assert_eq!(
        files::detect(&msgs).unwrap(),
        files::FileKind::TensorMessages
    );
    assert_eq!(files::read_tensors(&msgs).unwrap(), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_columns_round_trip_through_ipc(
        seed in any::<u64>(),
        f in 0usize..5,
        v in 0usize..11,
        i in 0usize..8,
        count in 1usize..12,
    ) {
        let format = FORMATS[f];
        let (vt, it) = (ValueType::ALL[v], index_type_for(i));
        // narrow index types cannot hold every GCS reduced extent
        let it = if format == Format::Gcs && it.byte_width() == 1 { IndexType::Int32 } else { it };
        let ts = tensors(format, vt, it, count, seed);
        prop_assert_eq!(tensors_of(&read_ipc_file(ipc_file_bytes(&batch_of(&ts)))), ts);
    }
}

#[test]
fn cli_converts_to_and_from_columns() {
    let dir = tempfile::tempdir().unwrap();
    let golden = common::repo().join("format/golden/csf_f32_i16_order201.arrow");
    let want = cli_ok(&["dump".as_ref(), golden.as_os_str()]);
    for name in ["table.arrow", "table.parquet"] {
        let table = dir.path().join(name);
        cli_ok(&[
            "convert".as_ref(),
            golden.as_os_str(),
            table.as_os_str(),
            "--as-column".as_ref(),
        ]);
        assert_ne!(
            files::detect(&table).unwrap(),
            files::FileKind::TensorMessages
        );
        assert_eq!(
            cli_ok(&["dump".as_ref(), table.as_os_str()]),
            want,
            "{name}"
        );
        let inspected: serde_json::Value = serde_json::from_str(&cli_ok(&[
            "--json".as_ref(),
            "inspect".as_ref(),
            table.as_os_str(),
        ]))
        .unwrap();
        assert_eq!(inspected["kind"], "column", "{name}");
        assert_eq!(inspected["tensors"][0]["format"], "csf", "{name}");
        // and back to SparseTensor messages, in another format
        let back = dir.path().join(format!("{name}.msgs.arrow"));
        cli_ok(&[
            "convert".as_ref(),
            table.as_os_str(),
            back.as_os_str(),
            "--to".as_ref(),
            "coo".as_ref(),
        ]);
        let msgs = arrow_sparse::ipc::read_tensor_stream(&back, &Default::default()).unwrap();
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0].tensor.format(), Format::Coo);
    }
    // tensors that do not fit one column: a typed error, exit code 4 (cannot convert)
    let mixed = common::repo().join("format/golden/stream_mixed.arrow");
    let out = cli(&[
        "convert".as_ref(),
        mixed.as_os_str(),
        dir.path().join("x.arrow").as_os_str(),
        "--as-column".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(4));
    assert!(!dir.path().join("x.arrow").exists());
}

/// Every row's shape and entries (`[coords..., value]`, from the JSON dump), which
/// Python compares its numpy / scipy / pyarrow conversions with.
fn entries_json(ts: &[AnyTensor]) -> serde_json::Value {
    ts.iter()
        .map(|t| {
            let line: serde_json::Value =
                serde_json::from_str(&arrow_sparse::dump::json_line(t).unwrap()).unwrap();
            serde_json::json!({"shape": t.shape(), "entries": line["entries"]})
        })
        .collect()
}

/// Rust -> file -> Python (pyarrow extension types, pyarrow sparse tensors, scipy)
/// -> file -> Rust, exactly, for every format and value type, in Arrow IPC files
/// and Parquet.
#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn pyarrow_round_trip() {
    let python = common::python();
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let mut expected = Vec::new();
    for format in FORMATS {
        for (i, vt) in ValueType::ALL.into_iter().enumerate() {
            let it = index_type_for(i + 3);
            let ts = tensors(format, vt, it, 5, (i * 7 + format as usize * 101) as u64);
            let batch = batch_of(&ts);
            for ext in ["arrow", "parquet"] {
                let name = format!("{format}_{vt}_{it}.{ext}");
                files::write_batches(
                    dir.path().join(&name),
                    batch.schema(),
                    std::slice::from_ref(&batch),
                )
                .unwrap();
                cases.push(serde_json::json!({
                    "file": name,
                    "out": format!("py_{name}"),
                    "rows": entries_json(&ts),
                }));
                expected.push((format!("py_{name}"), ts.clone(), batch.schema()));
            }
        }
    }
    std::fs::write(
        dir.path().join("manifest.json"),
        serde_json::json!({ "cases": cases }).to_string(),
    )
    .unwrap();
    run_python(&python, dir.path());
    for (name, ts, schema) in expected {
        let path = dir.path().join(&name);
        let (back_schema, batches) = files::read_batches(&path).unwrap();
        assert_eq!(
            back_schema.field(1).metadata(),
            schema.field(1).metadata(),
            "{name}: extension metadata"
        );
        let back: Vec<AnyTensor> = batches.iter().flat_map(tensors_of).collect();
        assert_eq!(back, ts, "{name}");
    }
}

fn run_python(python: &Path, dir: &Path) {
    let script = common::repo().join("tests/python/check_extension.py");
    let out = Command::new(python).arg(&script).arg(dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stderr}");
    assert!(out.status.success(), "check_extension.py failed:\n{stderr}");
}

/// Without the venv, a plain run reports the Python test as ignored, and
/// `--include-ignored` makes it fail: it never passes.
#[test]
fn without_the_venv_the_python_test_never_passes() {
    let tests =
        common::assert_missing_program_is_never_a_pass("ARROW_SPARSE_PYTHON", "Python venv");
    assert_eq!(tests, ["pyarrow_round_trip"]);
}

fn parquet_round_trip(batch: &RecordBatch) -> RecordBatch {
    let mut pq = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut pq, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
        bytes::Bytes::from(pq),
        1024,
    )
    .unwrap();
    let mut back: Vec<RecordBatch> = r.collect::<Result<_, _>>().unwrap();
    assert_eq!(back.len(), 1);
    back.remove(0)
}

/// Sparse vectors as 1-D CSF (one level, no indptr child): the indptr type,
/// which no buffer carries, is the metadata's, and rows come back exactly in
/// memory, through arrow-ipc files and through Parquet.
#[test]
fn one_dimensional_csf_columns() {
    let mut r = Rng(77);
    let ts: Vec<AnyTensor> = (0..5)
        .map(|k| {
            let n = 3 + r.below(20);
            let nnz = if k == 0 { 0 } else { r.below(n) };
            let coo = random_coo(&mut r, &[n], nnz, ValueType::Float32)
                .to_coo::<f32, i64>()
                .unwrap();
            AnyTensor::from(coo.to_csf::<i16, i64>(&[0]).unwrap())
        })
        .collect();
    let batch = batch_of(&ts);
    let ty = SparseTensorArray::from_batch(&batch, "tensor")
        .unwrap()
        .data_type()
        .clone();
    assert_eq!((ty.ndim(), ty.indptr_type()), (1, Some(IndexType::Int64)));
    assert_eq!(tensors_of(&batch), ts);
    for t in tensors_of(&batch) {
        assert_eq!(t.indptr_type(), Some(IndexType::Int64));
    }
    assert_eq!(tensors_of(&read_ipc_file(ipc_file_bytes(&batch))), ts);
    assert_eq!(tensors_of(&parquet_round_trip(&batch)), ts);
}

/// Hostile `levels` keys (level tensors stored as their nearest plain tensors,
/// format/SPEC.md 10.2) in a column's metadata: typed errors when the column is
/// opened (a levels object that is not one, bad level types, levels that do not
/// travel as the column's format) or when a row is built (expansions the storage
/// does not have, a coordinates type too narrow); never a panic.
#[test]
fn hostile_level_metadata_in_columns_is_a_typed_error() {
    use arrow_sparse::tensor::level::LevelTensor;
    let coo = CooTensor::<f64, i64>::from_entries(
        vec![4, 300],
        &[(vec![0, 1], 1.0), (vec![0, 299], 2.0), (vec![3, 7], 3.0)],
    )
    .unwrap();
    let dcsr: AnyTensor = LevelTensor::<f64, i16, i32>::dcsr(&coo).unwrap().into();
    let column = SparseTensorArray::from_tensors(&[dcsr.clone(), dcsr.clone()]).unwrap();
    assert_eq!(column.data_type().format(), Format::Csf);
    let field = column.field("t");
    let array = column.clone().into_array();
    assert_eq!(
        SparseTensorArray::try_new(&field, &array)
            .unwrap()
            .value(1)
            .unwrap(),
        Some(dcsr)
    );
    let good = field.metadata()["ARROW:extension:metadata"].clone();
    let levels_at = good.find("\"levels\":{").expect("a levels key");
    let with_levels = |levels: &str| -> Field {
        // replace the levels object (it is the last key: keys are sorted)
        let mut meta = good[..levels_at].to_string();
        meta.push_str(&format!("\"levels\":{levels}"));
        let tail = &good[levels_at..];
        let end = tail.find('}').unwrap() + 1; // the levels object has no nested objects
        meta.push_str(&tail[end..]);
        let mut md = field.metadata().clone();
        md.insert(String::from("ARROW:extension:metadata"), meta);
        field.clone().with_metadata(md)
    };
    let obj = |levels: &str, order: &str, it: &str| {
        format!(
            r#"{{"axis_order":{order},"index_type":"{it}","indptr_type":"int32","levels":{levels}}}"#
        )
    };
    // the replacement itself is faithful
    let same = obj(r#"["compressed","compressed"]"#, "[0,1]", "int16");
    assert!(SparseTensorArray::try_new(&with_levels(&same), &array).is_ok());
    let many = format!("[{}]", vec!["\"compressed\""; 100_000].join(","));
    let open_errors: Vec<(&str, String)> = vec![
        ("not an object", "[1]".into()),
        (
            "no levels",
            r#"{"axis_order":[0,1],"index_type":"int16","indptr_type":"int32"}"#.into(),
        ),
        ("100,000 levels", obj(&many, "[0,1]", "int16")),
        (
            "unknown level",
            obj(r#"["compressed","loose"]"#, "[0,1]", "int16"),
        ),
        (
            "level not a string",
            obj(r#"["compressed",1]"#, "[0,1]", "int16"),
        ),
        (
            "short axis order",
            obj(r#"["compressed","compressed"]"#, "[0]", "int16"),
        ),
        (
            "bad index type",
            obj(r#"["compressed","compressed"]"#, "[0,1]", "int9"),
        ),
        (
            "CSR levels on a CSF column",
            obj(r#"["dense","compressed"]"#, "[0,1]", "int16"),
        ),
        (
            "COO levels on a CSF column",
            obj(r#"["compressed(nonunique)","singleton"]"#, "[0,1]", "int16"),
        ),
        (
            "another CSF axis order",
            obj(r#"["compressed","compressed"]"#, "[1,0]", "int16"),
        ),
        (
            "3 levels on a 2-D column",
            obj(
                r#"["compressed","compressed","compressed"]"#,
                "[0,1,2]",
                "int16",
            ),
        ),
    ];
    for (what, levels) in open_errors {
        match SparseTensorArray::try_new(&with_levels(&levels), &array) {
            Err(Error::Parse { .. } | Error::Invariant { .. } | Error::Shape { .. }) => {}
            other => panic!("{what}: {other:?}"),
        }
    }
    // rows that do not fit the levels: a dense level the storage does not
    // expand, a coordinates type too narrow for 299
    type Check = fn(&Error) -> bool;
    let row_errors: Vec<(&str, String, Check)> = vec![
        (
            "a dense level not expanded",
            obj(r#"["compressed","dense"]"#, "[0,1]", "int16"),
            |e| matches!(e, Error::Invariant { .. } | Error::Length { .. }),
        ),
        (
            "int8 coordinates",
            obj(r#"["compressed","compressed"]"#, "[0,1]", "int8"),
            |e| {
                matches!(
                    e,
                    Error::Overflow { .. } | Error::IndexOutOfBounds { .. } | Error::Type { .. }
                )
            },
        ),
    ];
    for (what, levels, check) in row_errors {
        match SparseTensorArray::try_new(&with_levels(&levels), &array) {
            Err(Error::Row { row: 0, source }) if check(&source) => {}
            other => panic!("{what}: {other:?}"),
        }
    }
}

//! Matrix Market, FROSTT and npz import / export (`arrow_sparse::io`):
//! golden files written by scipy and pydata/sparse (tests/data/io, see its
//! README), round trips file -> .arrow -> same format, symmetric expansion and
//! duplicate rules, streaming, and the bad-input corpus (tests/data/bad).

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use arrow_sparse::dims::DimMap;
use arrow_sparse::io::{
    self, Duplicates, ImportOptions, MtxField, MtxFormat, MtxSymmetry, MtxWriteOptions, NpzFlavor,
    NpzWriteOptions, TnsHeader, TnsWriteOptions, meta, mtx, npz, tns,
};
use arrow_sparse::ipc::{self, TensorMessage};
use arrow_sparse::{
    AnyTensor, CompressedAxis, CooTensor, DenseTensor, Error, Format, IndexType, Value, ValueType,
};
use serde_json::Value as J;

/// `arrow_sparse::with_value_type!` for code outside the crate (`ValueType` is
/// non-exhaustive).
macro_rules! with_value_type {
    ($vt:expr, $V:ident => $body:expr) => {
        match $vt {
            ValueType::Int8 => {
                type $V = i8;
                $body
            }
            ValueType::Int16 => {
                type $V = i16;
                $body
            }
            ValueType::Int32 => {
                type $V = i32;
                $body
            }
            ValueType::Int64 => {
                type $V = i64;
                $body
            }
            ValueType::UInt8 => {
                type $V = u8;
                $body
            }
            ValueType::UInt16 => {
                type $V = u16;
                $body
            }
            ValueType::UInt32 => {
                type $V = u32;
                $body
            }
            ValueType::UInt64 => {
                type $V = u64;
                $body
            }
            ValueType::Float16 => {
                type $V = half::f16;
                $body
            }
            ValueType::Float32 => {
                type $V = f32;
                $body
            }
            ValueType::Float64 => {
                type $V = f64;
                $body
            }
            other => panic!("value type {other} is not covered by the tests"),
        }
    };
}

fn data(dir: &str) -> PathBuf {
    common::repo().join("tests/data").join(dir)
}

/// Every stored entry as (coordinates, JSON value), sorted by coordinates.
fn entries(t: &AnyTensor) -> Vec<(Vec<usize>, J)> {
    let mut out = Vec::new();
    with_value_type!(t.value_type(), V => {
        t.for_each_entry::<V>(&mut |c, v: V| {
            let mut s = String::new();
            v.write_json(&mut s);
            out.push((c.to_vec(), serde_json::from_str(&s).unwrap()));
        })
        .unwrap();
    });
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn same_entries(a: &AnyTensor, b: &AnyTensor, context: &str) {
    let (x, y) = (entries(a), entries(b));
    let single = matches!(a.value_type(), ValueType::Float32 | ValueType::Float16);
    assert_eq!(x.len(), y.len(), "{context}: entry counts differ");
    for (p, q) in x.iter().zip(&y) {
        assert!(
            p.0 == q.0 && common::json_eq_as(&p.1, &q.1, single),
            "{context}: {p:?} != {q:?}"
        );
    }
}

fn meta_of<'a>(m: &'a TensorMessage, key: &str) -> Option<&'a str> {
    m.custom_metadata
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn golden() -> (Vec<PathBuf>, serde_json::Map<String, J>) {
    let dir = data("io");
    let expected: J =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let files = expected["files"].as_object().unwrap().clone();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| io::FileFormat::from_path(p).is_some())
        .collect();
    paths.sort();
    assert_eq!(
        paths.len(),
        files.len(),
        "expected.json and tests/data/io disagree"
    );
    assert!(paths.len() >= 15);
    (paths, files)
}

#[test]
fn golden_files_read_as_scipy_and_pydata_wrote_them() {
    let (paths, files) = golden();
    for path in paths {
        let name = path.file_name().unwrap().to_str().unwrap();
        let exp = &files[name];
        let msg = io::read_path(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let t = &msg.tensor;
        assert_eq!(t.format().name(), exp["format"].as_str().unwrap(), "{name}");
        let shape: Vec<usize> = exp["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(t.shape(), &shape[..], "{name}");
        assert_eq!(
            t.value_type().name(),
            exp["value_type"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(
            t.index_type().map(|i| i.name()),
            exp["index_type"].as_str(),
            "{name}"
        );
        let mut want: Vec<(Vec<usize>, J)> = exp["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let c = e[0]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap() as usize);
                (c.collect(), e[1].clone())
            })
            // a dense tensor shows its non-zero elements
            .filter(|(_, v)| t.format() != Format::Dense || v.as_f64() != Some(0.0))
            .collect();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        let got = entries(t);
        let single = t.value_type() == ValueType::Float32;
        assert_eq!(got.len(), want.len(), "{name}: {got:?}");
        for (g, w) in got.iter().zip(&want) {
            assert!(
                g.0 == w.0 && common::json_eq_as(&g.1, &w.1, single),
                "{name}: {g:?} != {w:?}"
            );
        }
        if let Some(f) = exp.get("field") {
            assert_eq!(meta_of(&msg, meta::MTX_FIELD), f.as_str(), "{name}");
            assert_eq!(
                meta_of(&msg, meta::MTX_SYMMETRY),
                exp["symmetry"].as_str(),
                "{name}"
            );
        }
        if let Some(h) = exp.get("header") {
            assert_eq!(meta_of(&msg, meta::TNS_HEADER), h.as_str(), "{name}");
        }
        if let Some(axes) = exp.get("compressed_axes") {
            let map = t.dim_map().unwrap();
            let axes: Vec<usize> = axes
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(map.part(0), &axes[..], "{name}");
            assert_eq!(meta_of(&msg, meta::NPZ_FLAVOR), Some("pydata"));
        }
        if let Some(a) = exp.get("is_array") {
            assert_eq!(
                meta_of(&msg, meta::NPZ_IS_ARRAY),
                Some(if a.as_bool().unwrap() {
                    "true"
                } else {
                    "false"
                })
            );
        }
    }
}

#[test]
fn golden_files_round_trip_through_arrow_to_the_same_format() {
    let (paths, _) = golden();
    let dir = tempfile::tempdir().unwrap();
    for path in paths {
        let name = path.file_name().unwrap().to_str().unwrap();
        let first = io::read_path(&path).unwrap();
        let arrow = dir.path().join(format!("{name}.arrow"));
        ipc::write_tensor_stream(&arrow, [&first], &ipc::StreamWriteOptions::default()).unwrap();
        let through = ipc::read_tensor_stream(&arrow, &ipc::StreamReadOptions::default())
            .unwrap()
            .remove(0);
        assert_eq!(through, first, "{name}: changed through Arrow IPC");
        let out = dir.path().join(name);
        io::write_path(&out, &through).unwrap();
        let again = io::read_path(&out).unwrap();
        assert_eq!(again.custom_metadata, first.custom_metadata, "{name}");
        assert_eq!(again.tensor.format(), first.tensor.format(), "{name}");
        assert_eq!(
            again.tensor.value_type(),
            first.tensor.value_type(),
            "{name}"
        );
        assert_eq!(
            again.tensor.index_type(),
            first.tensor.index_type(),
            "{name}"
        );
        assert_eq!(again.tensor.shape(), first.tensor.shape(), "{name}");
        same_entries(&again.tensor, &first.tensor, name);
        match io::FileFormat::from_path(&path).unwrap() {
            // binary: the very same buffers
            io::FileFormat::Npz => assert_eq!(again.tensor, first.tensor, "{name}"),
            // text: the same header, and the same number of data lines
            _ => {
                let (a, b) = (
                    std::fs::read_to_string(&path).unwrap(),
                    std::fs::read_to_string(&out).unwrap(),
                );
                let head = |s: &str| s.lines().find(|l| !l.starts_with('#')).unwrap().to_string();
                assert_eq!(head(&a), head(&b), "{name}");
                let data = |s: &str| {
                    s.lines()
                        .filter(|l| !l.starts_with('%') && !l.starts_with('#') && !l.is_empty())
                        .count()
                };
                assert_eq!(data(&a), data(&b), "{name}:\n{a}\n---\n{b}");
            }
        }
    }
}

fn read_mtx(text: &str, options: &ImportOptions) -> Result<TensorMessage, Error> {
    mtx::read_from(text.as_bytes(), "inline.mtx", options)
}

fn mtx_text(msg: &TensorMessage, options: &MtxWriteOptions) -> Result<String, Error> {
    let mut out = Vec::new();
    mtx::write_to(&mut out, msg, options)?;
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn symmetric_files_expand_to_both_triangles_and_write_back_one() {
    let d = ImportOptions::default();
    // either triangle may be stored; the diagonal is not mirrored
    let m = read_mtx(
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2.0\n1 3 -1.5\n3 2 4\n",
        &d,
    )
    .unwrap();
    let got: Vec<_> = entries(&m.tensor)
        .into_iter()
        .map(|(c, v)| (c, v.as_f64().unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![
            (vec![0, 0], 2.0),
            (vec![0, 2], -1.5),
            (vec![1, 2], 4.0),
            (vec![2, 0], -1.5),
            (vec![2, 1], 4.0)
        ]
    );
    // written back: lower triangle only, header kept
    assert_eq!(
        mtx_text(&m, &MtxWriteOptions::default()).unwrap(),
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2.0\n3 1 -1.5\n3 2 4.0\n"
    );
    // skew-symmetric: mirrored entries are negated, no diagonal
    let s = read_mtx(
        "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n1 3 7\n",
        &d,
    )
    .unwrap();
    assert_eq!(s.tensor.value_type(), ValueType::Int64);
    for (c, v) in [
        ([1, 0], 5),
        ([0, 1], -5),
        ([0, 2], 7),
        ([2, 0], -7),
        ([1, 1], 0),
    ] {
        assert_eq!(s.tensor.get::<i64>(&c).unwrap(), Some(v), "{c:?}");
    }
    assert_eq!(
        mtx_text(&s, &MtxWriteOptions::default()).unwrap(),
        "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 1 -7\n"
    );
    // an unsigned value type cannot hold the mirrors
    let e = read_mtx(
        "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n2 1 5\n",
        &ImportOptions::default().with_value_type(ValueType::UInt8),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Type { .. }), "{e}");
    // array files: the lower triangle column by column
    let a = read_mtx(
        "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
        &d,
    )
    .unwrap();
    let AnyTensor::Dense(dense) = &a.tensor else {
        panic!()
    };
    assert_eq!(
        dense.downcast::<f64>().unwrap().values().as_ref(),
        &[0.0, -1.0, -2.0, 1.0, 0.0, -3.0, 2.0, 3.0, 0.0]
    );
    assert_eq!(
        mtx_text(&a, &MtxWriteOptions::default()).unwrap(),
        "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1.0\n2.0\n3.0\n"
    );
}

#[test]
fn writing_symmetric_checks_the_matrix() {
    let coo = CooTensor::<f64, i64>::from_entries(
        vec![2, 2],
        &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![1, 1], 3.0)],
    )
    .unwrap();
    let mut msg: TensorMessage = AnyTensor::from(coo).into();
    // asked for: an error naming the asymmetric pair
    let e = mtx_text(
        &msg,
        &MtxWriteOptions::default().with_symmetry(MtxSymmetry::Symmetric),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("not symmetric") && e.contains("a(1, 2) = 1.0"),
        "{e}"
    );
    // only in the metadata (the tensor changed since it was read): general
    msg.custom_metadata = vec![(meta::MTX_SYMMETRY.into(), "symmetric".into())];
    let text = mtx_text(&msg, &MtxWriteOptions::default()).unwrap();
    assert!(
        text.starts_with("%%MatrixMarket matrix coordinate real general\n2 2 3\n"),
        "{text}"
    );
    // not square
    let rect: TensorMessage = AnyTensor::from(
        CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0)]).unwrap(),
    )
    .into();
    assert!(
        mtx_text(
            &rect,
            &MtxWriteOptions::default().with_symmetry(MtxSymmetry::Symmetric)
        )
        .is_err()
    );
    // fields: pattern drops values, integer needs an integer type
    let p = mtx_text(
        &rect,
        &MtxWriteOptions::default().with_field(MtxField::Pattern),
    )
    .unwrap();
    assert_eq!(
        p,
        "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 2\n"
    );
    assert!(matches!(
        mtx_text(
            &rect,
            &MtxWriteOptions::default().with_field(MtxField::Integer)
        ),
        Err(Error::Type { .. })
    ));
    // array output of a sparse tensor, column by column
    let a = mtx_text(
        &rect,
        &MtxWriteOptions::default().with_format(MtxFormat::Array),
    )
    .unwrap();
    assert_eq!(
        a,
        "%%MatrixMarket matrix array real general\n2 3\n0.0\n0.0\n1.0\n0.0\n0.0\n0.0\n"
    );
    // 3-D tensors have no Matrix Market form
    let cube: TensorMessage =
        AnyTensor::from(CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[]).unwrap()).into();
    assert!(matches!(
        mtx_text(&cube, &MtxWriteOptions::default()),
        Err(Error::Shape { .. })
    ));
}

#[test]
fn duplicates_are_refused_summed_or_kept() {
    let text = "%%MatrixMarket matrix coordinate integer general\n% c\n3 3 4\n3 1 5\n1 2 1\n3 1 -2\n2 2 4\n";
    let e = read_mtx(text, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "cannot parse inline.mtx:6: duplicate entry (3, 1): the same coordinates as line 4 \
         (read with duplicates = sum to add them, or keep to keep both)"
    );
    let sum = read_mtx(
        text,
        &ImportOptions::default().with_duplicates(Duplicates::Sum),
    )
    .unwrap();
    assert_eq!(sum.tensor.nnz(), 3);
    assert_eq!(sum.tensor.get::<i64>(&[2, 0]).unwrap(), Some(3));
    let AnyTensor::Coo(c) = &sum.tensor else {
        panic!()
    };
    assert!(c.is_canonical());
    let keep = read_mtx(
        text,
        &ImportOptions::default().with_duplicates(Duplicates::Keep),
    )
    .unwrap();
    assert_eq!(keep.tensor.nnz(), 4);
    // kept duplicates are written back as they are
    let back = mtx_text(&keep, &MtxWriteOptions::default()).unwrap();
    assert_eq!(back.lines().filter(|l| l.starts_with("3 1 ")).count(), 2);
    // sorted input (either order) needs no sort to be checked
    for sorted in ["1 1 1\n1 2 2\n2 1 3\n", "1 1 1\n2 1 3\n1 2 2\n"] {
        let t = format!("%%MatrixMarket matrix coordinate integer general\n2 2 3\n{sorted}");
        assert_eq!(
            read_mtx(&t, &ImportOptions::default())
                .unwrap()
                .tensor
                .nnz(),
            3
        );
    }
    // an overflowing integer sum is an error
    let big = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 100\n1 1 100\n";
    let e = read_mtx(
        big,
        &ImportOptions::default()
            .with_duplicates(Duplicates::Sum)
            .with_value_type(ValueType::Int8),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("overflows int8"), "{e}");
    // .tns too
    let t = "1 1 1 1.0\n2 2 2 2.0\n1 1 1 0.5\n";
    let e = tns::read_from(t.as_bytes(), "x.tns", &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.tns:3: duplicate entry (1, 1, 1)") && e.contains("line 1"),
        "{e}"
    );
    let s = tns::read_from(
        t.as_bytes(),
        "x.tns",
        &ImportOptions::default().with_duplicates(Duplicates::Sum),
    )
    .unwrap();
    assert_eq!(s.tensor.get::<f64>(&[0, 0, 0]).unwrap(), Some(1.5));
}

#[test]
fn tns_headers_shapes_and_types() {
    let d = ImportOptions::default();
    let msg = tns::read_from(&b"2 3 1.5\n1 1 -2\n"[..], "a.tns", &d).unwrap();
    assert_eq!(msg.tensor.shape(), &[2, 3]);
    // the shape can be given for a headerless file, and must hold the entries
    let big = tns::read_from(
        &b"2 3 1.5\n"[..],
        "a.tns",
        &d.clone().with_shape(vec![5, 5]),
    )
    .unwrap();
    assert_eq!(big.tensor.shape(), &[5, 5]);
    let e = tns::read_from(
        &b"2 6 1.5\n"[..],
        "a.tns",
        &d.clone().with_shape(vec![5, 5]),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("a.tns:1: expected coordinate 2 in 1..=5"),
        "{e}"
    );
    // every header style is read and written back the same way
    for (style, text) in [
        (TnsHeader::RankShape, "2\n4 5\n1 2 1.0\n"),
        (TnsHeader::RankShapeNnz, "2\n4 5\n1\n1 2 1.0\n"),
        (TnsHeader::RankNnzShape, "2\n1\n4 5\n1 2 1.0\n"),
        (TnsHeader::Sptensor, "sptensor\n2\n4 5\n1\n1 2 1.0\n"),
        (TnsHeader::None, "1 2 1.0\n"),
    ] {
        let m = tns::read_from(text.as_bytes(), "h.tns", &d).unwrap();
        assert_eq!(meta_of(&m, meta::TNS_HEADER), Some(style.name()));
        if style != TnsHeader::None {
            assert_eq!(m.tensor.shape(), &[4, 5]);
        }
        let mut out = Vec::new();
        tns::write_to(&mut out, &m, &TnsWriteOptions::default()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text, "{style:?}");
    }
    // integer values into an integer tensor; index type narrowed on request
    let m = tns::read_from(
        &b"# counts\n1 1 3\n2 2 4\n"[..],
        "c.tns",
        &d.clone()
            .with_value_type(ValueType::UInt16)
            .with_index_type(IndexType::Int8),
    )
    .unwrap();
    assert_eq!(
        (m.tensor.value_type(), m.tensor.index_type()),
        (ValueType::UInt16, Some(IndexType::Int8))
    );
    // an empty file with a header is an empty tensor
    let e = tns::read_from(&b"3\n2 2 2\n0\n"[..], "e.tns", &d).unwrap();
    assert_eq!((e.tensor.shape(), e.tensor.nnz()), (&[2usize, 2, 2][..], 0));
    // ... and without one needs the shape
    let e = tns::read_from(&b""[..], "e.tns", &d.clone().with_shape(vec![3])).unwrap();
    assert_eq!(e.tensor.shape(), &[3]);
    // a 1-D tensor
    let v = tns::read_from(&b"4 2.5\n1 1\n"[..], "v.tns", &d).unwrap();
    assert_eq!(
        (v.tensor.shape(), v.tensor.get::<f64>(&[3]).unwrap()),
        (&[4usize][..], Some(2.5))
    );
}

/// A reader handing out 1 to 7 bytes per call: lines cross every chunk boundary.
struct Trickle<'a> {
    data: &'a [u8],
    n: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.n = self.n % 7 + 1;
        let k = self.n.min(buf.len()).min(self.data.len());
        buf[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

#[test]
fn text_is_read_in_chunks_with_any_line_ending() {
    let mut text = String::from(
        "%%MatrixMarket matrix coordinate real general\r\n% comment\r\n  \r\n40 30 400\r\n",
    );
    for k in 0..400 {
        text.push_str(&format!("{} {} {}.25\r\n", k % 40 + 1, k / 40 + 1, k));
    }
    let whole = read_mtx(&text, &ImportOptions::default()).unwrap();
    let trickled = mtx::read_from(
        Trickle {
            data: text.as_bytes(),
            n: 0,
        },
        "t.mtx",
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(whole, trickled);
    assert_eq!(whole.tensor.nnz(), 400);
    assert_eq!(whole.tensor.get::<f64>(&[39, 9]).unwrap(), Some(399.25));
    // no newline after the last line
    let m = read_mtx(
        "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 5",
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(m.tensor.get::<f64>(&[0, 0]).unwrap(), Some(5.0));
    // a line beyond the limit is an error, not an allocation without end
    let long = format!("1 1 {}\n", "1".repeat(17 << 20));
    let e = tns::read_from(long.as_bytes(), "long.tns", &ImportOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("long.tns:1: line longer than 16 MiB"),
        "{e}"
    );
}

/// SplitMix64: deterministic test data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn value_of<V: Value>(r: &mut Rng) -> V {
    // through the JSON text of an f64 / i64, parsed by the type's own rules
    let x = r.next();
    let s = match V::TYPE {
        t if t.is_float() => {
            let tricky = [
                0.1,
                -1.0 / 3.0,
                1e-5,
                12345.678,
                -0.0,
                2.5e7,
                65504.0,
                1e-300,
                1e300,
            ];
            let v: f64 = tricky[(x % tricky.len() as u64) as usize];
            let narrow = t != ValueType::Float64;
            if narrow && (v.abs() > 65504.0 || (v.abs() < 1e-4 && v != 0.0)) {
                "0.5".to_string()
            } else {
                format!("{v:e}")
            }
        }
        t => {
            let signed = t.as_index_type().unwrap().is_signed();
            let v = (x % 200) as i64;
            if signed {
                (v - 100).to_string()
            } else {
                v.to_string()
            }
        }
    };
    // parse through a one-entry Matrix Market file so every type goes through the same reader
    let text = format!("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 {s}\n");
    let m = read_mtx(&text, &ImportOptions::default().with_value_type(V::TYPE)).unwrap();
    m.tensor.get::<V>(&[0, 0]).unwrap().unwrap()
}

fn random_coo<V: Value>(r: &mut Rng, shape: &[usize], nnz: usize) -> AnyTensor {
    let mut seen = std::collections::BTreeSet::new();
    let mut ents = Vec::new();
    while ents.len() < nnz {
        let c: Vec<usize> = shape
            .iter()
            .map(|&d| (r.next() % d as u64) as usize)
            .collect();
        if seen.insert(c.clone()) {
            ents.push((c, value_of::<V>(r)));
        }
    }
    CooTensor::<V, i64>::from_entries(shape.to_vec(), &ents)
        .unwrap()
        .into()
}

#[test]
fn every_value_type_round_trips_through_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(42);
    for vt in ValueType::ALL {
        let read = ImportOptions::default().with_value_type(vt);
        with_value_type!(vt, V => {
            let m2 = random_coo::<V>(&mut r, &[7, 9], 20);
            let m3 = random_coo::<V>(&mut r, &[4, 3, 5], 15);
            let csr = m2.convert(Format::Csr, IndexType::Int32, None).unwrap();
            let csc = m2.convert(Format::Csc, IndexType::Int64, None).unwrap();
            let dense = m2.convert(Format::Dense, IndexType::Int64, None).unwrap();
            let gcs = m3.to_gcs(DimMap::try_new(vec![4, 3, 5], vec![2, 0, 1], vec![1]).unwrap(), CompressedAxis::Column, IndexType::Int32).unwrap();
            let cases: Vec<(&str, &AnyTensor, Option<Format>)> = vec![
                ("m2.mtx", &m2, Some(Format::Coo)),
                ("dense.mtx", &dense, Some(Format::Dense)),
                ("m2.tns", &m2, Some(Format::Coo)),
                ("m3.tns", &m3, Some(Format::Coo)),
                ("m2.npz", &m2, Some(Format::Coo)),
                ("csr.npz", &csr, Some(Format::Csr)),
                ("csc.npz", &csc, Some(Format::Csc)),
                ("m3.npz", &m3, Some(Format::Coo)),
                ("gcs.npz", &gcs, Some(Format::Gcs)),
            ];
            for (name, t, format) in cases {
                let context = format!("{vt} {name}");
                let path = dir.path().join(name);
                // with a header, .tns files keep shapes the entries do not reach
                let opts = io::ExportOptions {
                    tns: TnsWriteOptions::default().with_header(TnsHeader::RankShape),
                    ..Default::default()
                };
                io::write_path_with(&path, &t.clone().into(), &opts)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                let back = io::read_path_with(&path, &read).unwrap_or_else(|e| panic!("{context}: {e}"));
                assert_eq!(back.tensor.value_type(), vt, "{context}");
                assert_eq!(Some(back.tensor.format()), format, "{context}");
                assert_eq!(back.tensor.shape(), t.shape(), "{context}");
                same_entries(&back.tensor, t, &context);
            }
            // npz keeps the index dtypes, pydata flavour too
            let p = dir.path().join("csr_pydata.npz");
            npz::write(&p, &csr.clone().into(), &NpzWriteOptions::default().with_flavor(NpzFlavor::Pydata)).unwrap();
            let back = npz::read(&p, &read).unwrap();
            assert_eq!((back.tensor.format(), back.tensor.index_type()), (Format::Gcs, Some(IndexType::Int32)));
            same_entries(&back.tensor, &csr, &format!("{vt} csr as GCXS"));
        });
    }
}

#[test]
fn npz_options_and_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(7);
    let coo = random_coo::<f64>(&mut r, &[6, 5], 9);
    // a scipy sparse matrix (no _is_array), stored without compression
    let p = dir.path().join("m.npz");
    let opts = NpzWriteOptions::default()
        .with_is_array(false)
        .with_compressed(false);
    npz::write(&p, &coo.clone().into(), &opts).unwrap();
    let back = npz::read(&p, &ImportOptions::default()).unwrap();
    assert_eq!(meta_of(&back, meta::NPZ_IS_ARRAY), Some("false"));
    same_entries(&back.tensor, &coo, "matrix");
    // N-D COO as scipy needs a sparse array
    let cube = random_coo::<f32>(&mut r, &[3, 3, 3], 5);
    let scipy = NpzWriteOptions::default().with_flavor(NpzFlavor::Scipy);
    assert!(
        npz::write(
            &p,
            &cube.clone().into(),
            &scipy.clone().with_is_array(false)
        )
        .is_err()
    );
    npz::write(&p, &cube.clone().into(), &scipy).unwrap();
    let back = npz::read(&p, &ImportOptions::default()).unwrap();
    assert_eq!(meta_of(&back, meta::NPZ_FLAVOR), Some("scipy"));
    same_entries(&back.tensor, &cube, "3-D scipy coo");
    // pydata COO is written canonical: unsorted entries with duplicates are merged
    let dup: AnyTensor = CooTensor::<i32, i16>::from_entries(
        vec![3, 3],
        &[(vec![2, 2], 1), (vec![0, 1], 2), (vec![2, 2], 3)],
    )
    .unwrap()
    .into();
    let pydata = NpzWriteOptions::default().with_flavor(NpzFlavor::Pydata);
    npz::write(&p, &dup.into(), &pydata).unwrap();
    let back = npz::read(&p, &ImportOptions::default()).unwrap();
    let AnyTensor::Coo(c) = &back.tensor else {
        panic!()
    };
    assert!(c.is_canonical());
    assert_eq!(c.index_type(), IndexType::Int16);
    assert_eq!(back.tensor.get::<i32>(&[2, 2]).unwrap(), Some(4));
    // GCS whose map GCXS cannot express is re-mapped (compressed axes sorted first)
    let t = random_coo::<f64>(&mut r, &[2, 3, 4, 5], 12);
    for (dims, part, axis) in [
        (vec![3, 1, 0, 2], 2, CompressedAxis::Row),
        (vec![0, 2, 1, 3], 1, CompressedAxis::Column),
        (vec![0, 1, 2, 3], 4, CompressedAxis::Row),
        // fits GCXS as it is: compressed columns = axes (0, 2), rows = axes (1, 3)
        (vec![1, 3, 0, 2], 2, CompressedAxis::Column),
    ] {
        let g = t
            .to_gcs(
                DimMap::try_new(vec![2, 3, 4, 5], dims.clone(), vec![part]).unwrap(),
                axis,
                IndexType::Int64,
            )
            .unwrap();
        npz::write(&p, &g.clone().into(), &pydata).unwrap();
        let back = npz::read(&p, &ImportOptions::default()).unwrap();
        let map = back.tensor.dim_map().unwrap();
        assert!(
            map.part(0).windows(2).all(|w| w[0] < w[1])
                && map.part(1).windows(2).all(|w| w[0] < w[1]),
            "{dims:?}"
        );
        if axis == CompressedAxis::Column && dims == [1, 3, 0, 2] {
            // the buffers were written as they are: the same arrays, read as CSR
            let (AnyTensor::Gcs(a), AnyTensor::Gcs(b)) = (&g, &back.tensor) else {
                panic!()
            };
            assert_eq!(map.dimensions(), &[0, 2, 1, 3]);
            assert_eq!(a.matrix().indptr(), b.matrix().indptr());
            assert_eq!(a.matrix().indices(), b.matrix().indices());
        }
        same_entries(&back.tensor, &t, &format!("gcs {dims:?} {part} {axis:?}"));
    }
    // dense and CSF tensors are written as COO
    let csf = t
        .convert(Format::Csf, IndexType::Int32, Some(&[3, 1, 2, 0]))
        .unwrap();
    npz::write(&p, &csf.clone().into(), &NpzWriteOptions::default()).unwrap();
    same_entries(
        &npz::read(&p, &ImportOptions::default()).unwrap().tensor,
        &t,
        "csf",
    );
    let d: AnyTensor = DenseTensor::<u8>::try_new(vec![2, 2], vec![0, 3, 4, 0].into())
        .unwrap()
        .into();
    io::write_path(dir.path().join("d.npz"), &d.clone().into()).unwrap();
    same_entries(
        &io::read_path(dir.path().join("d.npz")).unwrap().tensor,
        &d,
        "dense",
    );
}

#[test]
fn writes_are_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("keep.mtx");
    std::fs::write(&p, "old").unwrap();
    let cube: TensorMessage =
        AnyTensor::from(CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[]).unwrap()).into();
    assert!(io::write_path(&p, &cube).is_err());
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "a temporary file was left behind"
    );
    assert!(matches!(
        io::write_path(Path::new("x.parquet"), &cube),
        Err(Error::Unsupported(_))
    ));
    let e = io::read_path(dir.path().join("missing.tns"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.tns"), "{e}");
}

/// The bad-input corpus: file, read options, where the error points and what it says.
#[test]
fn bad_input_corpus_gives_one_clear_error_per_file() {
    let sum = || ImportOptions::default().with_duplicates(Duplicates::Sum);
    let d = ImportOptions::default;
    let unlimited =
        || ImportOptions::default().with_limit(arrow_sparse::limit::ReadLimit::UNLIMITED);
    #[rustfmt::skip]
    let cases: Vec<(&str, ImportOptions, Option<u64>, &str)> = vec![
        ("bad_banner.mtx", d(), Some(1), "expected the banner `%%MatrixMarket matrix"),
        ("banner_words.mtx", d(), Some(1), "the banner has 4 words, expected 5"),
        ("unknown_field.mtx", d(), Some(1), "unknown field \"quaternion\""),
        ("complex_field.mtx", d(), Some(1), "complex matrices are not supported"),
        ("hermitian.mtx", d(), Some(1), "hermitian matrices are not supported"),
        ("array_pattern.mtx", d(), Some(1), "an array file cannot have the pattern field"),
        ("empty.mtx", d(), Some(1), "empty file"),
        ("missing_size_line.mtx", d(), Some(4), "the file ends before the size line"),
        ("size_line_short.mtx", d(), Some(2), "expected the size line `rows columns entries`, found 2 numbers"),
        ("size_line_negative.mtx", d(), Some(2), "with integers in 0..=9223372036854775807, found \"-3\""),
        ("symmetric_not_square.mtx", d(), Some(2), "a symmetric matrix must be square, found 3 x 4"),
        ("missing_value.mtx", d(), Some(4), "expected `row column value`, the line ends before the value"),
        ("bad_value.mtx", d(), Some(4), "expected a real value, found \"abc\""),
        ("float_in_integer.mtx", d(), Some(4), "expected an int64 value, found \"1.5\""),
        ("row_out_of_range.mtx", d(), Some(4), "expected a row index in 1..=3, found \"4\""),
        ("zero_based.mtx", d(), Some(3), "expected a row index in 1..=3, found \"0\""),
        ("index_overflow.mtx", d(), Some(3), "expected a row index in 1..=3, found \"99999999999999999999999\""),
        ("integer_value_overflow.mtx", d(), Some(3), "expected an int64 value, found \"9223372036854775808\""),
        ("trailing_token.mtx", d(), Some(3), "expected `row column value`, found more: \"7\""),
        ("truncated.mtx", d(), Some(5), "the file ends after 3 of the 5 entries announced by the size line (line 2)"),
        ("huge_nnz.mtx", d(), Some(2), "the 1000000000000 entries announced (24 bytes each once read) needs 24000000000000 bytes, more than the read limit of 67108864 bytes"),
        ("huge_nnz.mtx", unlimited(), Some(4), "the file ends after 2 of the 1000000000000 entries"),
        ("too_many_entries.mtx", d(), Some(5), "more entries than the 2 announced by the size line (line 2)"),
        ("duplicate.mtx", d(), Some(5), "duplicate entry (2, 1): the same coordinates as line 3"),
        ("symmetric_both_triangles.mtx", sum(), None, ""),
        ("symmetric_both_triangles.mtx", d(), Some(5), "duplicate entry (2, 1): the same coordinates as line 3"),
        ("skew_diagonal.mtx", d(), Some(4), "a skew-symmetric matrix stores no diagonal entry, found (2, 2)"),
        ("array_truncated.mtx", d(), Some(5), "the file ends after 3 of the 4 values of a 2 x 2 general array"),
        ("ragged.tns", d(), Some(3), "expected 3 coordinates and a value (4 tokens), found 3 tokens"),
        ("zero_coordinate.tns", d(), Some(2), "expected coordinate 1 in 1..=9223372036854775807, found \"0\""),
        ("bad_value.tns", d(), Some(2), "expected a real value, found \"x1\""),
        ("header_shape_mismatch.tns", d(), Some(2), "expected the 3 extents of the shape, found 2 tokens"),
        ("outside_header_shape.tns", d(), Some(4), "expected coordinate 2 in 1..=3, found \"4\""),
        ("truncated_header_nnz.tns", d(), Some(5), "the file ends after 2 of the 4 entries announced by the header (line 3)"),
        ("empty.tns", d(), Some(2), "no entries and no header"),
        ("duplicate.tns", d(), Some(4), "duplicate entry (1, 1, 1): the same coordinates as line 1"),
        ("header_ends_early.tns", d(), Some(3), "the file ends inside the header: expected the shape"),
        ("bad_rank.tns", d(), Some(1), "expected a rank in 1..=64, found 0"),
        ("not_a_zip.npz", d(), None, "not an npz (zip) archive"),
        ("truncated.npz", d(), None, "not an npz (zip) archive"),
        ("missing_indptr.npz", d(), None, "a scipy csr file needs the array `indptr`, which is missing"),
        ("decreasing_indptr.npz", d(), None, "invalid indptr at position 2"),
        ("index_out_of_bounds.npz", d(), None, "index out of bounds in indices at position 1: 3 is not in 0..3"),
        ("bsr.npz", d(), None, "scipy bsr matrices are not supported"),
        ("unknown_format.npz", d(), None, "unknown scipy sparse format \"xyz\""),
        ("object_array.npz", d(), None, "data.npy: object arrays (pickled Python objects) are not read"),
        ("shape_3d_csr.npz", d(), None, "a scipy csr matrix has a 2-D shape, found [2, 3, 4]"),
        ("complex_values.npz", d(), None, "data.npy: unsupported dtype \"<c16\""),
        ("data_length_mismatch.npz", d(), None, "buffer indices has 3 elements, expected 2"),
        ("not_npy_entry.npz", d(), None, "data.npy: not a .npy array"),
        ("no_sparse_arrays.npz", d(), None, "not a scipy, pydata/sparse or Binsparse npz"),
        ("fill_value_nonzero.npz", d(), None, "fill_value.npy: only a zero fill value is supported"),
        ("gcxs_unsorted_axes.npz", d(), None, "compressed_axes.npy: expected sorted distinct axes"),
        ("coords_wrong_shape.npz", d(), None, "coords.npy: expected shape (2, 2) (dimensions x entries), found [2, 3]"),
        ("header_lies.npz", d(), None, "data.npy: the header announces 8000 bytes of data"),
        ("bad_crc.npz", d(), None, "data.npy: cannot read the data"),
    ];
    let dir = data("bad");
    let mut tested = std::collections::BTreeSet::new();
    let mut errors = 0;
    for (file, options, line, want) in &cases {
        let path = dir.join(file);
        tested.insert(file.to_string());
        let r = io::read_path_with(&path, options);
        if want.is_empty() {
            assert!(r.is_ok(), "{file}: {:?}", r.err());
            continue;
        }
        errors += 1;
        let e = match r {
            Ok(m) => panic!("{file}: read without error: {:?}", m.tensor),
            Err(e) => e.to_string(),
        };
        assert!(!e.contains('\n'), "{file}: the error spans lines: {e}");
        let at = match line {
            Some(l) => format!("{}:{l}: ", path.display()),
            None => format!("{}", path.display()),
        };
        assert!(
            e.contains(&at),
            "{file}: the error does not name {at:?}: {e}"
        );
        assert!(e.contains(want), "{file}: expected {want:?} in: {e}");
    }
    let on_disk: std::collections::BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| io::FileFormat::from_path(Path::new(n)).is_some())
        .collect();
    assert_eq!(
        on_disk, tested,
        "every corpus file has an expected error, and only those"
    );
    assert!(errors >= 20);
}

/// What the CLI engineer needs: dispatch by extension, metadata surviving a
/// conversion chain.
#[test]
fn conversions_between_formats_keep_what_each_format_can_hold() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("io").join("scipy_real_symmetric.mtx");
    let m = io::read_path(&src).unwrap();
    let npz_path = dir.path().join("s.npz");
    io::write_path(&npz_path, &m).unwrap();
    let from_npz = io::read_path(&npz_path).unwrap();
    same_entries(&from_npz.tensor, &m.tensor, "mtx -> npz");
    // the mtx metadata is not in the npz; the tensor is still symmetric and can be
    // written as such on request
    let text = mtx_text(
        &from_npz,
        &MtxWriteOptions::default().with_symmetry(MtxSymmetry::Symmetric),
    )
    .unwrap();
    assert!(
        text.starts_with("%%MatrixMarket matrix coordinate real symmetric\n4 4 4\n"),
        "{text}"
    );
    let tns_path = dir.path().join("s.tns");
    io::write_path(&tns_path, &m).unwrap();
    same_entries(
        &io::read_path(&tns_path).unwrap().tensor,
        &m.tensor,
        "mtx -> tns",
    );
    assert_eq!(m.tensor.nnz(), 6);
}

/// Random corruptions of the golden files (byte flips, cuts, insertions) give
/// `Ok` or an error, never a panic.
#[test]
fn corrupted_files_never_panic() {
    let (paths, _) = golden();
    let mut r = Rng(99);
    let policies = [Duplicates::Error, Duplicates::Sum, Duplicates::Keep];
    let mut errors = 0;
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        let format = io::FileFormat::from_path(&path).unwrap();
        for round in 0..100 {
            let mut b = bytes.clone();
            for _ in 0..1 + r.next() % 4 {
                let at = (r.next() % b.len().max(1) as u64) as usize;
                let last = at.min(b.len().saturating_sub(1));
                match r.next() % 4 {
                    0 if !b.is_empty() => b[last] ^= 1 << (r.next() % 8),
                    1 => b.truncate(at),
                    2 => b.insert(at.min(b.len()), b"0 9-.e\n%x"[(r.next() % 9) as usize]),
                    _ if !b.is_empty() => {
                        b[last] = b"0123456789 \n-+.eE%#"[(r.next() % 19) as usize]
                    }
                    _ => {}
                }
            }
            let options = ImportOptions::default().with_duplicates(policies[round % 3]);
            let name = format!("{}#{round}", path.display());
            let result = match format {
                io::FileFormat::Mtx => mtx::read_from(&b[..], &name, &options),
                io::FileFormat::Tns => tns::read_from(&b[..], &name, &options),
                _ => npz::read_from(std::io::Cursor::new(&b[..]), &name, &options),
            };
            if let Err(e) = result {
                errors += 1;
                let msg = e.to_string();
                assert!(!msg.contains('\n'), "the error spans lines: {msg}");
            }
        }
    }
    assert!(errors > 100, "only {errors} corruptions were noticed");
}

/// The text readers' explicit read limit (`format/SPEC.md` section 11): a header's
/// announced count is measured against the file's size before anything is
/// reserved, and the entries read against the bytes read so far (every 4096
/// entries), so a caller's tight limit holds for any byte source.
#[test]
fn text_readers_check_announced_counts_and_entries_against_the_read_limit() {
    use arrow_sparse::limit::ReadLimit;
    let dir = tempfile::tempdir().unwrap();
    let d = ImportOptions::default();
    let limit_of = |r: arrow_sparse::Result<TensorMessage>| match r {
        Err(Error::Limit {
            needed,
            limit,
            what,
        }) => (needed, limit, what),
        other => panic!(
            "expected Error::Limit, got {:?}",
            other.map(|m| m.tensor.shape().to_vec())
        ),
    };
    // .mtx coordinate: 10^8 entries announced by a 70-byte file (16 bytes of int64
    // coordinates and 8 of float64 each): refused at the size line
    let text = "%%MatrixMarket matrix coordinate real general\n10 10 100000000\n1 1 1.0\n";
    let p = dir.path().join("announced.mtx");
    std::fs::write(&p, text).unwrap();
    let (needed, limit, what) = limit_of(mtx::read(&p, &d));
    assert_eq!((needed, limit), (2_400_000_000, 64 << 20));
    assert!(
        what.ends_with(
            "announced.mtx:2: the 100000000 entries announced (24 bytes each once read)"
        ),
        "{what}"
    );
    // a symmetric file's entries count twice (they are mirrored)
    let sym = "%%MatrixMarket matrix coordinate real symmetric\n10 10 2000000\n1 1 1.0\n";
    std::fs::write(&p, sym).unwrap();
    assert_eq!(limit_of(mtx::read(&p, &d)).0, 96_000_000);
    // from a byte source of unknown size only what is read counts: the same text is
    // a truncated file; a trusting limit gives the same
    assert!(matches!(
        mtx::read_from(text.as_bytes(), "announced.mtx", &d),
        Err(Error::Parse { .. })
    ));
    std::fs::write(&p, text).unwrap();
    let trusted = ImportOptions::default().with_limit(ReadLimit::UNLIMITED);
    assert!(matches!(mtx::read(&p, &trusted), Err(Error::Parse { .. })));
    // .mtx array: 10^5 x 10^5 float64 values announced
    let p = dir.path().join("array.mtx");
    std::fs::write(
        &p,
        "%%MatrixMarket matrix array real general\n100000 100000\n1.0\n",
    )
    .unwrap();
    assert_eq!(limit_of(mtx::read(&p, &d)).0, 80_000_000_000);
    // .tns header: rank 3, shape, 10^8 entries (24 bytes of coordinates + 8)
    let p = dir.path().join("announced.tns");
    std::fs::write(&p, "3\n10 10 10\n100000000\n1 1 1 1.0\n").unwrap();
    let (needed, _, what) = limit_of(tns::read(&p, &d));
    assert_eq!(needed, 3_200_000_000);
    assert!(
        what.ends_with(
            "announced.tns:3: the 100000000 entries announced (32 bytes each once read)"
        ),
        "{what}"
    );
    // entries read against the bytes read: 10^4 lines of ~12 bytes hold 240 kB of
    // entries, more than a limit of 100 kB, from any source
    let mut many = String::from("%%MatrixMarket matrix coordinate real general\n100 100 10000\n");
    let mut frostt = String::new();
    for k in 0..10_000 {
        many.push_str(&format!("{} {} 1.5\n", k / 100 + 1, k % 100 + 1));
        frostt.push_str(&format!("{} {} 1.5\n", k / 100 + 1, k % 100 + 1));
    }
    let tight = ImportOptions::default().with_limit(ReadLimit::bytes(100_000));
    let (needed, limit, _) = limit_of(mtx::read_from(many.as_bytes(), "many.mtx", &tight));
    assert_eq!(limit, 100_000);
    assert!(needed > 100_000 && needed <= 8192 * 24, "{needed}");
    assert!(matches!(
        limit_of(tns::read_from(frostt.as_bytes(), "many.tns", &tight)),
        (_, 100_000, _)
    ));
    // and the default limit reads them (text takes more bytes than its entries)
    assert_eq!(
        mtx::read_from(many.as_bytes(), "many.mtx", &d)
            .unwrap()
            .tensor
            .nnz(),
        10_000
    );
    assert_eq!(
        tns::read_from(frostt.as_bytes(), "many.tns", &d)
            .unwrap()
            .tensor
            .nnz(),
        10_000
    );
}

/// Fuzz finding B (fuzz/FINDINGS.md): a 3-D COO `.npz` whose `_is_array` says
/// "matrix" read fine but did not write back with the default options (a recorded
/// `_is_array = false` now only applies to 2-D tensors, which scipy matrices are).
#[test]
fn npz_3d_recorded_as_matrix_writes_back_with_default_options() {
    use std::io::Cursor;
    let t: AnyTensor = CooTensor::<f32, i64>::from_entries(
        vec![3, 4, 5],
        &[(vec![0, 1, 2], 1.5), (vec![2, 3, 4], -2.0)],
    )
    .unwrap()
    .into();
    let message = TensorMessage {
        tensor: t.clone(),
        // what reading such a scipy file records
        custom_metadata: vec![
            (meta::NPZ_FLAVOR.to_string(), "scipy".to_string()),
            (meta::NPZ_IS_ARRAY.to_string(), "false".to_string()),
        ],
    };
    let bytes = npz::write_to(
        Cursor::new(Vec::new()),
        &message,
        &NpzWriteOptions::default(),
    )
    .expect("3-D tensor recorded as a matrix writes as a scipy array")
    .into_inner();
    let back = npz::read_from(Cursor::new(bytes), "mem.npz", &ImportOptions::default()).unwrap();
    assert_eq!(
        (back.tensor.shape(), back.tensor.nnz()),
        (&[3usize, 4, 5][..], 2)
    );
    assert_eq!(back.tensor.get::<f32>(&[0, 1, 2]).unwrap(), Some(1.5));
    assert_eq!(back.tensor.get::<f32>(&[2, 3, 4]).unwrap(), Some(-2.0));
    assert!(
        back.custom_metadata
            .contains(&(meta::NPZ_IS_ARRAY.to_string(), "true".to_string()))
    );
    // an explicit option still refuses
    let matrix = NpzWriteOptions::default().with_is_array(false);
    assert!(npz::write_to(Cursor::new(Vec::new()), &message, &matrix).is_err());
}

/// Found by the `mtx` fuzz target (issue #18): a symmetric `.mtx` whose entries are
/// not in row-major order (lower triangle (2,1), (3,3), (3,1), one of them written
/// as its upper mirror) read as a tensor whose write-back put the entries in sorted
/// order, so the round trip gave the same entries in another order (a different
/// tensor for byte-identical comparisons). The writer now keeps the entry order.
#[test]
fn a_symmetric_mtx_in_any_entry_order_writes_back_as_the_same_tensor() {
    let d = ImportOptions::default();
    let first = read_mtx(
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 1.0\n3 3 2.0\n1 3 1.0\n",
        &d,
    )
    .unwrap();
    let text = mtx_text(&first, &MtxWriteOptions::default()).unwrap();
    assert_eq!(
        text,
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 1.0\n3 3 2.0\n3 1 1.0\n"
    );
    let again = read_mtx(&text, &d).unwrap();
    assert_eq!(first.tensor.nnz(), 5);
    assert_eq!(first.tensor, again.tensor);
}

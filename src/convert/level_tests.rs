//! Unit tests of level tensors (here, above the tensor layer, since they build
//! level tensors from COO).
use crate::Convert;
use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::error::Error;
use crate::tensor::level::{AnyLevel, LevelFormat, LevelTensor, LevelType, MAX_LEVELS, Plain};
use crate::tensor::{AnyTensor, CompressedAxis, CooTensor, CoordLayout, EntryOrder, TensorOptions};
use crate::types::IndexType;

fn coo(shape: Vec<usize>, entries: &[(Vec<usize>, f64)]) -> CooTensor<f64, i64> {
    CooTensor::from_entries(shape, entries).unwrap()
}

fn sample3() -> CooTensor<f64, i64> {
    coo(
        vec![3, 4, 5],
        &[
            (vec![0, 1, 2], 1.0),
            (vec![0, 1, 4], 2.0),
            (vec![0, 3, 0], 3.0),
            (vec![2, 0, 0], 4.0),
            (vec![2, 3, 1], 5.0),
        ],
    )
}

/// Non-zero entries, sorted.
fn entries(t: &AnyTensor) -> Vec<(Vec<usize>, f64)> {
    let mut out = Vec::new();
    t.for_each_entry::<f64>(&mut |c, v| out.push((c.to_vec(), v)))
        .unwrap();
    out.retain(|e| e.1 != 0.0);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn lt(types: &[&str], order: &[usize]) -> LevelFormat {
    LevelFormat::try_new(
        types.iter().map(|s| s.parse().unwrap()).collect(),
        order.to_vec(),
    )
    .unwrap()
}

/// The MLIR seed's examples (`../shared/SEEDS/mlir-sparse-storage.txt`) built
/// as level tensors from their buffers. The seed lists the CSR positions as
/// `[0, 2, 2, 2, 2, 2, 2, 3, 3]`, which disagrees with its own entries: with
/// those positions 3.3 sits in row 6 and row 7 is empty, while the seed puts
/// 3.3 at m[7, 2]. The correct array, `[0, 2, 2, 2, 2, 2, 2, 2, 3]`, is
/// tested; the seed's builds the other matrix.
#[test]
fn the_mlir_seed_examples_as_level_tensors() {
    let v = LevelTensor::<f32, i64>::sparse_vector(
        16,
        vec![3, 6, 9, 12].into(),
        vec![1.1, 2.2, 3.3, 4.4].into(),
    )
    .unwrap();
    assert_eq!(v.positions(0).unwrap().as_ref(), &[0, 4]);
    assert_eq!(v.coordinates(0).unwrap().as_ref(), &[3, 6, 9, 12]);
    assert_eq!(v.values().as_ref(), &[1.1, 2.2, 3.3, 4.4]);
    assert_eq!(
        v.format().legacy_lvl_types().unwrap(),
        r#"lvlType = [ "compressed" ]"#
    );
    let src = CooTensor::<f32, i64>::from_entries(
        vec![16],
        &[
            (vec![12], 4.4),
            (vec![3], 1.1),
            (vec![9], 3.3),
            (vec![6], 2.2),
        ],
    )
    .unwrap();
    assert_eq!(
        LevelTensor::<f32, i64>::from_coo(&src, &LevelFormat::sparse_vector()).unwrap(),
        v
    );
    let csr = |pos: Vec<i64>| {
        LevelTensor::<f32, i64>::try_new(
            vec![8, 8],
            LevelFormat::csr(),
            vec![None, Some(pos.into())],
            vec![None, Some(vec![1, 4, 2].into())],
            vec![1.1, 2.2, 3.3].into(),
        )
        .unwrap()
    };
    let m = csr(vec![0, 2, 2, 2, 2, 2, 2, 2, 3]);
    assert_eq!(
        m.format().legacy_lvl_types().unwrap(),
        r#"lvlType = [ "dense", "compressed" ]"#
    );
    assert_eq!(
        (m.get(&[0, 1]), m.get(&[0, 4]), m.get(&[7, 2])),
        (Some(1.1), Some(2.2), Some(3.3))
    );
    let src = CooTensor::<f32, i64>::from_entries(
        vec![8, 8],
        &[(vec![0, 1], 1.1), (vec![0, 4], 2.2), (vec![7, 2], 3.3)],
    )
    .unwrap();
    assert_eq!(
        LevelTensor::<f32, i64>::from_coo(&src, &LevelFormat::csr()).unwrap(),
        m
    );
    let seed = csr(vec![0, 2, 2, 2, 2, 2, 2, 3, 3]);
    assert_eq!(
        (seed.get(&[6, 2]), seed.get(&[7, 2])),
        (Some(3.3), Some(0.0))
    );
}

#[test]
fn format_rules_and_names() {
    for (text, ok) in [
        ("dense", true),
        ("compressed(nonunique, nonordered)", true),
        ("singleton(soa)", true),
        (" compressed ( nonordered ) ", true),
        ("compressed(soa)", true), // parses; the format refuses it
        ("loose_compressed", false),
        ("dense(", false),
        ("dense(unique)", false),
    ] {
        assert_eq!(text.parse::<LevelType>().is_ok(), ok, "{text}");
    }
    let long = "x".repeat(65);
    assert!(matches!(
        long.parse::<LevelType>(),
        Err(Error::Parse { .. })
    ));
    let t = |s: &str| s.parse::<LevelType>().unwrap();
    for bad in [
        vec![t("compressed(soa)")],
        vec![t("singleton")],
        vec![t("dense"), t("singleton")],
        vec![t("compressed"), t("singleton(soa)"), t("singleton")],
    ] {
        let n = bad.len();
        assert!(LevelFormat::try_new(bad, (0..n).collect()).is_err());
    }
    assert!(LevelFormat::try_new(vec![], vec![]).is_err());
    assert!(
        LevelFormat::try_new(
            vec![LevelType::DENSE; MAX_LEVELS + 1],
            (0..=MAX_LEVELS).collect()
        )
        .is_err()
    );
    let f = lt(
        &[
            "compressed(nonunique)",
            "singleton(soa)",
            "singleton(nonordered, soa)",
        ],
        &[2, 0, 1],
    );
    assert_eq!(
        f.to_string(),
        "(d0, d1, d2) -> (d2 : compressed(nonunique), d0 : singleton(soa), d1 : singleton(nonordered, soa))"
    );
    assert_eq!(f.legacy_lvl_types(), None);
    assert_eq!(
        (f.aos_width(0), f.coordinate_source(2)),
        (1, Some((2, 1, 0)))
    );
    let aos = lt(
        &[
            "dense",
            "compressed(nonunique)",
            "singleton(nonunique)",
            "singleton",
        ],
        &[0, 1, 2, 3],
    );
    assert_eq!(aos.aos_width(1), 3);
    assert_eq!(aos.coordinate_source(3), Some((1, 3, 2)));
    assert_eq!(aos.run_start(3), 1);
    assert_eq!(aos.plain(), Plain::Csf);
    assert_eq!(LevelFormat::coo(3).unwrap().plain(), Plain::Coo);
    assert_eq!(
        LevelFormat::csc().plain(),
        Plain::Csx(CompressedAxis::Column)
    );
    assert_eq!(lt(&["dense", "dense"], &[1, 0]).plain(), Plain::Dense);
    assert_eq!(LevelFormat::dcsr().plain(), Plain::Csf);
}

/// The plain formats are level tensors with their own buffers; their
/// storage is the tensor itself again.
#[test]
fn plain_formats_are_special_cases_without_copies() {
    let c = sample3();
    let plain: Vec<AnyTensor> = vec![
        c.clone().into(),
        c.to_csf::<i16, i32>(&[2, 0, 1]).unwrap().into(),
        c.to_dense().unwrap().into(),
    ];
    let m = coo(
        vec![4, 5],
        &[(vec![0, 4], 1.0), (vec![3, 1], 2.0), (vec![3, 2], 3.0)],
    );
    let mut all = plain;
    for axis in [CompressedAxis::Row, CompressedAxis::Column] {
        all.push(m.to_csx::<i8, i64>(axis).unwrap().into());
    }
    let v = coo(vec![9], &[(vec![2], 1.0), (vec![7], 2.0)]);
    all.push(v.to_csf::<i16, i64>(&[0]).unwrap().into());
    for t in &all {
        let l = AnyLevel::from_tensor(t).unwrap();
        assert_eq!(
            entries(&AnyTensor::Level(l.clone())),
            entries(t),
            "{}",
            t.format()
        );
        assert_eq!(
            (l.index_type(), l.indptr_type()),
            (
                t.index_type().unwrap_or(IndexType::Int64),
                t.indptr_type()
                    .or(t.index_type())
                    .unwrap_or(IndexType::Int64)
            )
        );
        let values = match t {
            AnyTensor::Coo(x) => x.values(),
            AnyTensor::Csx(x) => x.values(),
            AnyTensor::Csf(x) => x.values(),
            AnyTensor::Dense(x) => x.values(),
            _ => unreachable!(),
        };
        assert_eq!(l.values().inner().as_ptr(), values.inner().as_ptr());
        let back = l.to_storage().unwrap();
        match (t, &back) {
            (AnyTensor::Coo(a), AnyTensor::Coo(b)) => {
                assert_eq!(a.coords(), b.coords());
                assert_eq!(a.coords().inner().as_ptr(), b.coords().inner().as_ptr());
            }
            // a sparse vector travels as 1-D COO (libarrow reads no 1-D CSF)
            (AnyTensor::Csf(a), AnyTensor::Coo(b)) => {
                assert_eq!(a.shape().len(), 1);
                assert_eq!(a.indices()[0].inner().as_ptr(), b.coords().inner().as_ptr());
            }
            _ => assert_eq!(&back, t, "{}", t.format()),
        }
    }
}

#[test]
fn column_major_coo_is_soa_slices_of_its_buffer() {
    let c = sample3();
    let n = 3;
    let cols: Vec<i64> = (0..n)
        .flat_map(|d| (0..c.nnz()).map(move |k| (d, k)))
        .map(|(d, k)| c.coords()[k * n + d])
        .collect();
    let cm = CooTensor::<f64, i64>::try_new(
        vec![3, 4, 5],
        CoordLayout::ColumnMajor,
        EntryOrder::Canonical,
        cols.into(),
        c.values().clone(),
    )
    .unwrap();
    let t: AnyTensor = cm.clone().into();
    let l = AnyLevel::from_tensor(&t).unwrap();
    assert_eq!(
        l.format().to_string(),
        "(d0, d1, d2) -> (d0 : compressed(nonunique), d1 : singleton(nonunique, soa), d2 : singleton(soa))"
    );
    let base = cm.coords().inner().as_ptr() as usize;
    for d in 0..n {
        let b = l.coordinates()[d].as_ref().unwrap();
        assert_eq!(
            b.inner().as_ptr() as usize,
            base + d * c.nnz() * 8,
            "a slice, not a copy"
        );
    }
    assert_eq!(l.to_storage().unwrap(), t); // concatenated again
    assert_eq!(entries(&l.clone().into()), entries(&t));
}

/// Formats no plain tensor has, built from COO, checked buffer by buffer.
#[test]
fn built_formats_by_hand() {
    let c = sample3(); // (0,1,2) (0,1,4) (0,3,0) (2,0,0) (2,3,1) in 3 x 4 x 5
    // compressed i, dense j, compressed k
    let f = lt(&["compressed", "dense", "compressed"], &[0, 1, 2]);
    let t = LevelTensor::<f64, i32>::from_coo(&c, &f).unwrap();
    assert_eq!(t.coordinates(0).unwrap().as_ref(), &[0, 2]);
    assert_eq!(
        t.positions(2).unwrap().as_ref(),
        &[0, 0, 2, 2, 3, 4, 4, 4, 5]
    );
    assert_eq!(t.coordinates(2).unwrap().as_ref(), &[2, 4, 0, 0, 1]);
    // compressed (i, k) pairs as COO-like run, dense j last: whole rows stored
    let f = lt(&["compressed(nonunique)", "singleton", "dense"], &[0, 2, 1]);
    let t = LevelTensor::<f64, i32>::from_coo(&c, &f).unwrap();
    // level coordinates (i, k, j) sorted: (0,0,3) (0,2,1) (0,4,1) (2,0,0) (2,1,3)
    assert_eq!(
        t.coordinates(0).unwrap().as_ref(),
        &[0, 0, 0, 2, 0, 4, 2, 0, 2, 1]
    );
    assert_eq!(t.nnz(), 5 * 4);
    assert_eq!(
        t.values().as_ref(),
        &[
            0.0, 0.0, 0.0, 3.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 5.0
        ][..]
    );
    // a run with a compressed level below it: (k, i) pairs, then j
    let f = lt(
        &["compressed(nonunique)", "singleton(soa)", "compressed"],
        &[2, 0, 1],
    );
    let t = LevelTensor::<f64, i32>::from_coo(&c, &f).unwrap();
    // level coordinates (k, i, j) sorted: (0,0,3) (0,2,0) (1,2,3) (2,0,1) (4,0,1)
    assert_eq!(t.coordinates(0).unwrap().as_ref(), &[0, 0, 1, 2, 4]);
    assert_eq!(t.coordinates(1).unwrap().as_ref(), &[0, 2, 2, 0, 0]);
    assert_eq!(t.positions(2).unwrap().as_ref(), &[0, 1, 2, 3, 4, 5]);
    assert_eq!(t.coordinates(2).unwrap().as_ref(), &[3, 0, 3, 1, 1]);
    // batched CSR and CSF with dense levels: entries as the source's
    for f in [
        LevelFormat::batched_csr(1).unwrap(),
        LevelFormat::csf_with_dense(2, vec![2, 0, 1]).unwrap(),
        LevelFormat::coo(3).unwrap(),
        lt(
            &["dense", "compressed(nonunique)", "singleton(nonordered)"],
            &[1, 2, 0],
        ),
    ] {
        let t = LevelTensor::<f64, i16, i8>::from_coo(&c, &f).unwrap();
        let any: AnyTensor = t.clone().into();
        assert_eq!(entries(&any), entries(&c.clone().into()), "{f}");
        assert_eq!(
            t.to_coo::<i64>().unwrap().canonicalize().unwrap().nnz(),
            t.nnz()
        );
        let back = AnyLevel::from_storage(
            &t.as_any().to_storage().unwrap(),
            f.clone(),
            IndexType::Int16,
            IndexType::Int8,
            &TensorOptions::default(),
        )
        .unwrap();
        assert_eq!(&back, t.as_any(), "{f}");
    }
}

#[test]
fn validation_refuses_what_the_format_does_not_hold() {
    let idx = |v: Vec<i32>| Some(IndexBuffer::Int32(v.into()));
    let vals = |n: usize| ValueBuffer::Float64(vec![1.0; n].into());
    let opts = TensorOptions::default();
    let build = |f: LevelFormat, shape: Vec<usize>, p, c, n| {
        AnyLevel::try_new(shape, f, p, c, vals(n), &opts)
    };
    // DCSR fine, and with each kind of fault
    let dcsr = || LevelFormat::dcsr();
    assert!(
        build(
            dcsr(),
            vec![3, 3],
            vec![idx(vec![0, 2]), idx(vec![0, 1, 3])],
            vec![idx(vec![0, 2]), idx(vec![1, 0, 2])],
            3
        )
        .is_ok()
    );
    type Case = (
        Vec<Option<IndexBuffer>>,
        Vec<Option<IndexBuffer>>,
        usize,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        (
            vec![idx(vec![0, 2]), None],
            vec![idx(vec![0, 2]), idx(vec![1, 0, 2])],
            3,
            "missing positions",
        ),
        (
            vec![idx(vec![0, 2]), idx(vec![0, 1, 3])],
            vec![idx(vec![0, 2]), None],
            3,
            "missing coordinates",
        ),
        (
            vec![idx(vec![0, 2]), idx(vec![0, 1, 3])],
            vec![idx(vec![0, 2]), idx(vec![1, 0, 2])],
            2,
            "values",
        ),
        (
            vec![idx(vec![1, 2]), idx(vec![0, 1, 3])],
            vec![idx(vec![0, 2]), idx(vec![1, 0, 2])],
            3,
            "first position",
        ),
        (
            vec![idx(vec![0, 2]), idx(vec![0, 4, 3])],
            vec![idx(vec![0, 2]), idx(vec![1, 0, 2])],
            3,
            "decreasing",
        ),
        (
            vec![idx(vec![0, 2]), idx(vec![0, 1, 3])],
            vec![idx(vec![2, 0]), idx(vec![1, 0, 2])],
            3,
            "unordered",
        ),
        (
            vec![idx(vec![0, 2]), idx(vec![0, 1, 3])],
            vec![idx(vec![0, 2]), idx(vec![1, 2, 2])],
            3,
            "repeated",
        ),
        (
            vec![idx(vec![0, 2]), idx(vec![0, 1, 3])],
            vec![idx(vec![0, 3]), idx(vec![1, 0, 2])],
            3,
            "bounds",
        ),
        (
            vec![
                Some(IndexBuffer::Int64(vec![0, 2].into())),
                idx(vec![0, 1, 3]),
            ],
            vec![idx(vec![0, 2]), idx(vec![1, 0, 2])],
            3,
            "types",
        ),
    ];
    for (p, c, n, what) in cases {
        assert!(build(dcsr(), vec![3, 3], p, c, n).is_err(), "{what}");
    }
    // a weaker declaration is fine: nonunique, nonordered columns
    let weak = lt(
        &["compressed", "compressed(nonunique, nonordered)"],
        &[0, 1],
    );
    assert!(
        build(
            weak,
            vec![3, 3],
            vec![idx(vec![0, 2]), idx(vec![0, 1, 3])],
            vec![idx(vec![0, 2]), idx(vec![1, 2, 2])],
            3
        )
        .is_ok()
    );
    // unique but not ordered: repeats found by comparison, and through a set in
    // long segments
    let uno = lt(&["compressed(nonordered)"], &[0]);
    assert!(
        build(
            uno.clone(),
            vec![40],
            vec![idx(vec![0, 3])],
            vec![idx(vec![5, 1, 3])],
            3
        )
        .is_ok()
    );
    assert!(
        build(
            uno.clone(),
            vec![40],
            vec![idx(vec![0, 3])],
            vec![idx(vec![5, 1, 5])],
            3
        )
        .is_err()
    );
    let long: Vec<i32> = (0..30).rev().collect();
    assert!(
        build(
            uno.clone(),
            vec![40],
            vec![idx(vec![0, 30])],
            vec![idx(long.clone())],
            30
        )
        .is_ok()
    );
    let mut rep = long;
    rep[29] = 7;
    assert!(build(uno, vec![40], vec![idx(vec![0, 30])], vec![idx(rep)], 30).is_err());
    // a COO run: (0, 1), (0, 1) repeats the pair: the last singleton is not unique
    let coo2 = LevelFormat::coo(2).unwrap();
    assert!(
        build(
            coo2.clone(),
            vec![2, 2],
            vec![idx(vec![0, 2]), None],
            vec![idx(vec![0, 1, 1, 0]), None],
            2
        )
        .is_ok()
    );
    assert!(
        build(
            coo2.clone(),
            vec![2, 2],
            vec![idx(vec![0, 2]), None],
            vec![idx(vec![0, 1, 0, 1]), None],
            2
        )
        .is_err()
    );
    assert!(
        build(
            coo2.clone(),
            vec![2, 2],
            vec![idx(vec![0, 2]), None],
            vec![idx(vec![0, 1, 0, 0]), None],
            2
        )
        .is_err(),
        "unordered pairs"
    );
    // an interleaved buffer checks each level's bound
    assert!(
        build(
            coo2,
            vec![2, 2],
            vec![idx(vec![0, 1]), None],
            vec![idx(vec![1, 2]), None],
            1
        )
        .is_err()
    );
    // dense extents multiply without overflow
    let dd = lt(&["dense", "dense"], &[0, 1]);
    assert!(matches!(
        build(
            dd,
            vec![1 << 40, 1 << 40],
            vec![None, None],
            vec![None, None],
            0
        ),
        Err(Error::Overflow { .. })
    ));
    // trusted skips the O(nnz) pass, and the walk still errors, never panics
    let bad = AnyLevel::try_new(
        vec![3, 3],
        dcsr(),
        vec![idx(vec![0, 2]), idx(vec![0, 9, 3])],
        vec![idx(vec![0, 7]), idx(vec![1, 0, 2])],
        vals(3),
        &TensorOptions::trusted(),
    )
    .unwrap();
    assert!(bad.for_each_entry::<f64>(&mut |_, _| ()).is_err());
    assert!(AnyTensor::Level(bad).to_coo::<f64, i64>().is_err());
}

#[test]
fn expansions_widen_index_types_that_cannot_hold_them() {
    // 300 x 2 x 2 batched CSR with int8 coordinates and positions: the expanded
    // batch coordinates reach 299 and the positions 600
    let c = coo(vec![300, 2, 2], &[(vec![299, 1, 1], 1.0)]);
    let t = LevelTensor::<f64, i8>::from_coo(&c, &LevelFormat::batched_csr(1).unwrap()).unwrap();
    let AnyTensor::Csf(s) = t.as_any().to_storage().unwrap() else {
        panic!()
    };
    assert_eq!(
        (s.index_type(), s.indptr_type()),
        (IndexType::Int64, IndexType::Int64)
    );
    let back = AnyLevel::from_storage(
        &AnyTensor::Csf(s),
        t.format().clone(),
        IndexType::Int8,
        IndexType::Int8,
        &TensorOptions::default(),
    )
    .unwrap();
    assert_eq!(&back, t.as_any());
}

/// `mlir_encoding()` of each named format, and the seed's older syntax for the
/// two formats the seed shows. The seed (`../shared/SEEDS/mlir-sparse-storage.txt`)
/// writes `#SparseVector = #sparse_tensor.encoding<{ lvlType = [ "compressed" ]`
/// and `#CSR = #sparse_tensor.encoding<{ lvlType = [ "dense", "compressed" ]`;
/// today's MLIR writes the same levels as `map = (d0) -> (d0 : compressed)` and
/// `map = (d0, d1) -> (d0 : dense, d1 : compressed)` (MLIR's own `#DCSR`,
/// `#DCSC`, `#COO` and batched examples use this syntax).
#[test]
fn mlir_encodings_of_the_named_formats() {
    const SEED_SPARSE_VECTOR: &str = r#"lvlType = [ "compressed" ]"#;
    const SEED_CSR: &str = r#"lvlType = [ "dense", "compressed" ]"#;
    let enc = |f: LevelFormat| {
        let shape = vec![3; f.ndim()];
        let t = LevelTensor::<f32, i32, i64>::from_coo(
            &CooTensor::<f32, i64>::from_entries(shape, &[]).unwrap(),
            &f,
        )
        .unwrap();
        t.as_any().mlir_encoding().unwrap()
    };
    let wrap = |map: &str, pos: bool| {
        let widths = if pos {
            ", posWidth = 64, crdWidth = 32"
        } else {
            ""
        };
        format!("#sparse_tensor.encoding<{{ map = {map}{widths} }}>")
    };
    assert_eq!(
        LevelFormat::sparse_vector().legacy_lvl_types().unwrap(),
        SEED_SPARSE_VECTOR
    );
    assert_eq!(LevelFormat::csr().legacy_lvl_types().unwrap(), SEED_CSR);
    for (f, map) in [
        (LevelFormat::sparse_vector(), "(d0) -> (d0 : compressed)"),
        (
            LevelFormat::csr(),
            "(d0, d1) -> (d0 : dense, d1 : compressed)",
        ),
        (
            LevelFormat::csc(),
            "(d0, d1) -> (d1 : dense, d0 : compressed)",
        ),
        (
            LevelFormat::dcsr(),
            "(d0, d1) -> (d0 : compressed, d1 : compressed)",
        ),
        (
            LevelFormat::dcsc(),
            "(d0, d1) -> (d1 : compressed, d0 : compressed)",
        ),
        (
            LevelFormat::coo(3).unwrap(),
            "(d0, d1, d2) -> (d0 : compressed(nonunique), d1 : singleton(nonunique), d2 : singleton)",
        ),
        (
            LevelFormat::csf_with_dense(1, vec![2, 0, 1]).unwrap(),
            "(d0, d1, d2) -> (d2 : dense, d0 : compressed, d1 : compressed)",
        ),
        (
            LevelFormat::batched_csr(1).unwrap(),
            "(d0, d1, d2) -> (d0 : dense, d1 : dense, d2 : compressed)",
        ),
    ] {
        assert_eq!(f.to_string(), map);
        assert_eq!(enc(f), wrap(map, true));
    }
    let dense = LevelFormat::try_new(vec![LevelType::DENSE; 2], vec![1, 0]).unwrap();
    assert_eq!(
        enc(dense),
        wrap("(d0, d1) -> (d1 : dense, d0 : dense)", false)
    );
    // soa and nonordered singleton levels, and the map parsed back
    let soa = LevelFormat::try_new(
        vec![
            LevelType::COMPRESSED.nonunique(),
            LevelType::SINGLETON.with_soa().nonordered(),
        ],
        vec![1, 0],
    )
    .unwrap();
    let text = "(d0, d1) -> (d1 : compressed(nonunique), d0 : singleton(nonordered, soa))";
    assert_eq!(text.parse::<LevelFormat>().unwrap(), soa);
    assert_eq!(enc(soa), wrap(text, true));
}

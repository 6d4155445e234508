//! Level tensors (`arrow_sparse::tensor::level`): random level formats (ndim
//! 1-5, random level types, properties and dimension orders) built from random
//! COO tensors convert to COO and back as identities, travel as their nearest
//! plain tensor and come back exactly, and agree element by element with a dense
//! reference.

mod common;
use common::Rng;

use arrow_sparse::dump::json_line;
use arrow_sparse::ipc;
use arrow_sparse::tensor::level::{AnyLevel, LevelFormat, LevelTensor, LevelType};
use arrow_sparse::{AnyTensor, CooTensor, Error, IndexType, TensorOptions};
use proptest::prelude::*;

/// A random valid format: level 0 dense or compressed; later levels dense,
/// compressed, or singleton after a compressed / singleton level; random
/// `unique` / `ordered` on non-dense levels, `soa` chosen once per run.
pub fn random_format(r: &mut Rng, ndim: usize) -> LevelFormat {
    let mut levels: Vec<LevelType> = Vec::with_capacity(ndim);
    let mut soa = false;
    for l in 0..ndim {
        let prev = l.checked_sub(1).map(|p| levels[p].kind);
        let singleton_ok = matches!(
            prev,
            Some(arrow_sparse::tensor::levels::LevelKind::Compressed)
                | Some(arrow_sparse::tensor::levels::LevelKind::Singleton)
        );
        let mut t = match r.below(if singleton_ok { 3 } else { 2 }) {
            0 => LevelType::DENSE,
            1 => LevelType::COMPRESSED,
            _ => LevelType::SINGLETON,
        };
        if t.kind == arrow_sparse::tensor::levels::LevelKind::Compressed {
            soa = r.below(2) == 0;
        }
        if t != LevelType::DENSE {
            if r.below(3) == 0 {
                t = t.nonunique();
            }
            if r.below(4) == 0 {
                t = t.nonordered();
            }
        }
        if t.kind == arrow_sparse::tensor::levels::LevelKind::Singleton && soa {
            t = t.with_soa();
        }
        levels.push(t);
    }
    let mut order: Vec<usize> = (0..ndim).collect();
    for i in (1..ndim).rev() {
        order.swap(i, r.below(i + 1));
    }
    LevelFormat::try_new(levels, order).unwrap()
}

/// The same format without any `unique` claim (what any data satisfies once
/// sorted).
fn relaxed(f: &LevelFormat) -> LevelFormat {
    let levels = f
        .levels()
        .iter()
        .map(|t| {
            if t.kind == arrow_sparse::tensor::levels::LevelKind::Dense {
                *t
            } else {
                t.nonunique()
            }
        })
        .collect();
    LevelFormat::try_new(levels, f.axis_order().to_vec()).unwrap()
}

/// Random entries (non-zero values, duplicates possible) in a small shape.
pub fn random_coo(r: &mut Rng, ndim: usize) -> CooTensor<f64, i64> {
    let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(4)).collect();
    let nnz = r.below(12);
    let entries: Vec<(Vec<usize>, f64)> = (0..nnz)
        .map(|_| {
            (
                shape.iter().map(|&d| r.below(d)).collect(),
                1.0 + r.below(9) as f64,
            )
        })
        .collect();
    CooTensor::from_entries(shape, &entries).unwrap()
}

/// The dense reference: element sums, row-major.
fn dense(t: &AnyTensor) -> Vec<f64> {
    let shape = t.shape();
    let size: usize = shape.iter().product();
    let mut out = vec![0.0; size];
    t.for_each_entry::<f64>(&mut |c, v| {
        let k = c.iter().zip(shape).fold(0, |k, (&x, &d)| k * d + x);
        out[k] += v;
    })
    .unwrap();
    out
}

/// A level type in MLIR's syntax, as the MLIR seed (`../shared/SEEDS/mlir-sparse-storage.txt`)
/// and MLIR's SparseTensor dialect write it: a kind, then optionally a
/// parenthesized list of distinct properties (only `soa` on singleton levels,
/// none on dense ones).
fn mlir_level_type_ok(s: &str) -> bool {
    let (kind, props) = match s.split_once('(') {
        None => (s, Vec::new()),
        Some((k, rest)) => match rest.strip_suffix(')') {
            Some(p) => (k, p.split(", ").collect::<Vec<_>>()),
            None => return false,
        },
    };
    let allowed: &[&str] = match kind {
        "dense" => &[],
        "compressed" => &["nonunique", "nonordered"],
        "singleton" => &["nonunique", "nonordered", "soa"],
        _ => return false,
    };
    let mut seen = Vec::new();
    props.iter().all(|p| {
        let fresh = !seen.contains(p);
        seen.push(*p);
        fresh && allowed.contains(p)
    })
}

/// Check `enc` against MLIR's attribute syntax, token by token:
/// `#sparse_tensor.encoding<{ map = (d0, ..., dN-1) -> (dK : level, ...) }>`,
/// with `, posWidth = P, crdWidth = C` when some level stores a buffer; the map
/// names every dimension once, in `format`'s level order with its level types.
/// Also the seed's older form, `lvlType = [ "dense", "compressed" ]` (plus
/// `dimToLvl = affine_map<...>` when permuted), where the format has one.
fn assert_mlir_syntax(enc: &str, format: &LevelFormat, widths: Option<(u32, u32)>) {
    let body = enc
        .strip_prefix("#sparse_tensor.encoding<{ map = ")
        .and_then(|b| b.strip_suffix(" }>"))
        .unwrap_or_else(|| panic!("{enc}: not #sparse_tensor.encoding<{{ map = .. }}>"));
    let (map, rest) = match body.split_once("), posWidth") {
        Some((m, r)) => (format!("{m})"), Some(format!("posWidth{r}"))),
        None => (body.to_string(), None),
    };
    let stores = format
        .levels()
        .iter()
        .any(|t| t.kind != arrow_sparse::tensor::levels::LevelKind::Dense);
    match (rest, widths) {
        (None, _) => assert!(!stores, "{enc}: no widths"),
        (Some(r), Some((p, c))) => {
            assert!(stores, "{enc}");
            assert_eq!(r, format!("posWidth = {p}, crdWidth = {c}"), "{enc}");
        }
        (Some(r), None) => panic!("{enc}: unexpected {r}"),
    }
    let (dims, lvls) = map.split_once(" -> ").expect("dims -> levels");
    let n = format.ndim();
    let want_dims: Vec<String> = (0..n).map(|d| format!("d{d}")).collect();
    assert_eq!(dims, format!("({})", want_dims.join(", ")), "{enc}");
    let items: Vec<&str> = lvls
        .strip_prefix('(')
        .and_then(|l| l.strip_suffix(')'))
        .expect("(levels)")
        .split(" : ")
        .collect();
    // "dA", "type, dB", "type, dC", ..., "type": split each middle piece at its
    // last ", d"
    assert_eq!(items.len(), n + 1, "{enc}");
    let mut names = vec![items[0].to_string()];
    let mut types = Vec::new();
    for piece in &items[1..n] {
        let (t, d) = piece.rsplit_once(", ").expect("type, dK");
        types.push(t.to_string());
        names.push(d.to_string());
    }
    types.push(items[n].to_string());
    for (l, (name, ty)) in names.iter().zip(&types).enumerate() {
        assert_eq!(*name, format!("d{}", format.axis_order()[l]), "{enc}");
        assert!(mlir_level_type_ok(ty), "{enc}: level type {ty:?}");
        assert_eq!(
            ty.parse::<LevelType>().unwrap(),
            format.levels()[l],
            "{enc}"
        );
    }
    if let Some(legacy) = format.legacy_lvl_types() {
        let (list, perm) = match legacy.split_once(" ], dimToLvl = affine_map<") {
            Some((l, p)) => (format!("{l} ]"), Some(p)),
            None => (legacy.clone(), None),
        };
        let quoted = list
            .strip_prefix("lvlType = [ ")
            .and_then(|l| l.strip_suffix(" ]"))
            .unwrap_or_else(|| panic!("{legacy}"));
        for (q, t) in quoted.split(", ").zip(format.levels()) {
            let name = q
                .strip_prefix('"')
                .and_then(|q| q.strip_suffix('"'))
                .unwrap();
            let (kind, flags) = name.split_once('-').unwrap_or((name, ""));
            assert_eq!(kind, t.to_string().split('(').next().unwrap(), "{legacy}");
            assert_eq!(flags.contains("nu"), !t.unique, "{legacy}");
            assert_eq!(flags.contains("no"), !t.ordered, "{legacy}");
        }
        match perm {
            None => assert!(format.axis_order().iter().enumerate().all(|(l, &d)| l == d)),
            Some(p) => assert_eq!(
                p,
                format!("({}) -> ({})>", want_dims.join(", "), names.join(", ")),
                "{legacy}"
            ),
        }
    }
}

/// The named formats' encodings follow MLIR's syntax, with the index types'
/// widths; the seed's two formats have exactly the seed's older `lvlType` text.
#[test]
fn named_formats_print_mlir_syntax() {
    let coo = |ndim: usize| {
        CooTensor::<f64, i64>::from_entries(vec![3; ndim], &[(vec![1; ndim], 2.0)]).unwrap()
    };
    let named: Vec<(LevelFormat, usize)> = vec![
        (LevelFormat::sparse_vector(), 1),
        (LevelFormat::csr(), 2),
        (LevelFormat::csc(), 2),
        (LevelFormat::dcsr(), 2),
        (LevelFormat::dcsc(), 2),
        (LevelFormat::coo(3).unwrap(), 3),
        (LevelFormat::csf(vec![2, 0, 1]).unwrap(), 3),
        (LevelFormat::csf_with_dense(1, vec![1, 2, 0]).unwrap(), 3),
        (LevelFormat::csf_with_dense(2, vec![0, 1, 2, 3]).unwrap(), 4),
        (LevelFormat::batched_csr(1).unwrap(), 3),
        (LevelFormat::batched_csr(3).unwrap(), 5),
    ];
    for (f, n) in named {
        let a = LevelTensor::<f64, i8, i64>::from_coo(&coo(n), &f).unwrap();
        assert_mlir_syntax(&a.as_any().mlir_encoding().unwrap(), &f, Some((64, 8)));
        let b = LevelTensor::<f64, u32, u16>::from_coo(&coo(n), &f).unwrap();
        assert_mlir_syntax(&b.as_any().mlir_encoding().unwrap(), &f, Some((16, 32)));
    }
    assert_eq!(
        LevelFormat::sparse_vector().legacy_lvl_types().unwrap(),
        r#"lvlType = [ "compressed" ]"#
    );
    assert_eq!(
        LevelFormat::csr().legacy_lvl_types().unwrap(),
        r#"lvlType = [ "dense", "compressed" ]"#
    );
    let all_dense = LevelFormat::try_new(vec![LevelType::DENSE; 3], vec![2, 0, 1]).unwrap();
    let t = LevelTensor::<f64, i32>::from_coo(&coo(3), &all_dense).unwrap();
    assert_mlir_syntax(&t.as_any().mlir_encoding().unwrap(), &all_dense, None);
}

fn check(seed: u64, ndim: usize) {
    let mut r = Rng(seed | 1);
    let coo = random_coo(&mut r, ndim);
    let format = random_format(&mut r, ndim);
    let built = LevelTensor::<f64, i32, i16>::from_coo(&coo, &format);
    let t = match built {
        Ok(t) => t,
        Err(Error::Invariant { detail, .. }) => {
            // a unique claim the entries do not satisfy: the relaxed format holds them
            assert!(detail.contains("declared"), "{format}: {detail}");
            assert!(format.levels().iter().any(|t| t.unique));
            LevelTensor::<f64, i32, i16>::from_coo(&coo, &relaxed(&format)).unwrap()
        }
        Err(e) => panic!("{format}: {e}"),
    };
    let format = t.format().clone();
    assert_eq!(format.to_string().parse::<LevelFormat>().unwrap(), format);
    let any: AnyTensor = t.clone().into();
    assert_mlir_syntax(
        &t.as_any().mlir_encoding().unwrap(),
        &format,
        Some((16, 32)),
    );
    let source: AnyTensor = coo.clone().into();
    // the same elements as the source, and as every element lookup says
    assert_eq!(dense(&any), dense(&source), "{format}");
    let shape = coo.shape().to_vec();
    let mut idx = vec![0usize; ndim];
    let reference = dense(&source);
    for (k, want) in reference.iter().enumerate() {
        let mut rest = k;
        for d in (0..ndim).rev() {
            idx[d] = rest % shape[d];
            rest /= shape[d];
        }
        assert_eq!(
            any.get::<f64>(&idx).unwrap(),
            Some(*want),
            "{format} at {idx:?}"
        );
    }
    // level -> COO -> level is the identity (stored zeros of dense levels included)
    let back_coo = any.to_coo::<f64, i64>().unwrap();
    assert_eq!(back_coo.nnz(), t.nnz());
    let again = LevelTensor::<f64, i32, i16>::from_coo(&back_coo, &format).unwrap();
    assert_eq!(again, t, "{format}: level -> COO -> level");
    // the nearest plain tensor and back
    let storage = t.as_any().to_storage().unwrap();
    assert_eq!(dense(&storage), reference, "{format}: storage");
    let raised = AnyLevel::from_storage(
        &storage,
        format.clone(),
        IndexType::Int32,
        IndexType::Int16,
        &TensorOptions::default(),
    )
    .unwrap();
    assert_eq!(&raised, t.as_any(), "{format}: storage -> level");
    // IPC: the storage message plus arrow_sparse.levels, read back exactly
    let encoded = ipc::encode(&any, &[], &ipc::StreamWriteOptions::default()).unwrap();
    let (msg, _) = ipc::decode(&encoded.to_vec().into(), &ipc::StreamReadOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(msg.tensor, any, "{format}: IPC");
    assert!(msg.custom_metadata.is_empty());
    assert!(
        json_line(&any)
            .unwrap()
            .starts_with("{\"format\":\"level\"")
    );
    // the level view's walk and lookups agree with the format's own
    let view = t.as_any().levels().unwrap();
    let mut stored = 0;
    view.for_each_stored(|lvl, q| {
        assert_eq!(view.positions(&dims(lvl, format.axis_order())), vec![q]);
        stored += 1;
    })
    .unwrap();
    assert_eq!(stored, t.nnz());
}

fn dims(lvl: &[usize], order: &[usize]) -> Vec<usize> {
    let mut d = vec![0; lvl.len()];
    for (&c, &a) in lvl.iter().zip(order) {
        d[a] = c;
    }
    d
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn random_level_formats_round_trip(seed in any::<u64>(), ndim in 1usize..=5) {
        check(seed, ndim);
    }
}

/// Every format of every small shape seen at least once: 3,000 fixed seeds.
#[test]
fn many_fixed_seeds() {
    for seed in 0..3000u64 {
        check(
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            1 + (seed as usize % 5),
        );
    }
}

/// SpMV and SpMM (2-D), `sum_all` and `sum_axes` (every subset of axes, dense
/// and sparse results) of a random level format, against a dense reference computed from
/// the entries list alone (no tensor code).
fn check_kernels(seed: u64, ndim: usize) {
    use arrow_sparse::kernels::reduce::{SumOutput, sum_all, sum_axes_with};
    use arrow_sparse::kernels::spmv::{
        spmm_into, spmm_scaled_into, spmv, spmv_into, spmv_scaled_into,
    };
    let mut r = Rng(seed | 1);
    let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(7)).collect();
    let nnz = r.below(25);
    let entries: Vec<(Vec<usize>, i64)> = (0..nnz)
        .map(|_| {
            let c: Vec<usize> = shape.iter().map(|&d| r.below(d)).collect();
            (c, r.below(19) as i64 - 9)
        })
        .collect();
    let size: usize = shape.iter().product();
    let row_major = |c: &[usize]| c.iter().zip(&shape).fold(0, |k, (&x, &d)| k * d + x);
    let mut reference = vec![0i64; size];
    for (c, v) in &entries {
        reference[row_major(c)] += v;
    }
    let as_f64: Vec<(Vec<usize>, f64)> = entries
        .iter()
        .map(|(c, v)| (c.clone(), *v as f64))
        .collect();
    let coo = CooTensor::<f64, i64>::from_entries(shape.clone(), &as_f64).unwrap();
    let format = relaxed(&random_format(&mut r, ndim));
    let t: AnyTensor = LevelTensor::<f64, i32, i16>::from_coo(&coo, &format)
        .unwrap()
        .into();
    let as_i32: Vec<(Vec<usize>, i32)> = entries
        .iter()
        .map(|(c, v)| (c.clone(), *v as i32))
        .collect();
    let ti: AnyTensor = LevelTensor::<i32, i32, i16>::from_coo(
        &CooTensor::<i32, i64>::from_entries(shape.clone(), &as_i32).unwrap(),
        &format,
    )
    .unwrap()
    .into();
    let total: i64 = reference.iter().sum();
    assert_eq!(sum_all::<f64>(&t).unwrap(), total as f64, "{format}");
    assert_eq!(sum_all::<i32>(&ti).unwrap() as i64, total, "{format}");
    // every subset of axes
    for mask in 0u32..(1 << ndim) {
        let axes: Vec<usize> = (0..ndim).filter(|&d| mask >> d & 1 == 1).collect();
        let kept: Vec<usize> = (0..ndim).filter(|&d| mask >> d & 1 == 0).collect();
        let kshape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
        let mut want = vec![0i64; kshape.iter().product::<usize>().max(1)];
        for (k, &v) in reference.iter().enumerate() {
            // unravel k, keep the kept dimensions
            let mut c = vec![0; ndim];
            let mut rest = k;
            for d in (0..ndim).rev() {
                c[d] = rest % shape[d];
                rest /= shape[d];
            }
            let key = kept.iter().fold(0, |a, &d| a * shape[d] + c[d]);
            want[key] += v;
        }
        for output in [SumOutput::Dense, SumOutput::Sparse, SumOutput::Auto] {
            let got = sum_axes_with::<f64>(&t, &axes, output).unwrap();
            let got = dense(&got);
            let want_f: Vec<f64> = want.iter().map(|&v| v as f64).collect();
            assert_eq!(got, want_f, "{format}: sum over {axes:?} ({output:?})");
            let got = sum_axes_with::<i32>(&ti, &axes, output).unwrap();
            let mut gi = vec![0i64; want.len()];
            let gshape = got.shape().to_vec();
            got.for_each_entry::<i32>(&mut |c, v| {
                gi[c.iter().zip(&gshape).fold(0, |k, (&x, &d)| k * d + x)] += v as i64
            })
            .unwrap();
            assert_eq!(gi, want, "{format}: int sum over {axes:?} ({output:?})");
        }
    }
    if ndim != 2 {
        assert!(spmv::<f64>(&t, &vec![1.0; shape[ndim - 1]]).is_err());
        return;
    }
    let (m, n) = (shape[0], shape[1]);
    let x: Vec<f64> = (0..n).map(|j| j as f64 - 2.5).collect();
    let want: Vec<f64> = (0..m)
        .map(|i| (0..n).map(|j| reference[i * n + j] as f64 * x[j]).sum())
        .collect();
    assert_eq!(spmv::<f64>(&t, &x).unwrap(), want, "{format}: SpMV");
    let mut y = vec![f64::NAN; m];
    spmv_into(&t, &x, &mut y).unwrap();
    assert_eq!(y, want, "{format}: SpMV into");
    let mut y: Vec<f64> = (0..m).map(|i| i as f64).collect();
    spmv_scaled_into(2.0, &t, &x, -1.0, &mut y).unwrap();
    let scaled: Vec<f64> = want
        .iter()
        .enumerate()
        .map(|(i, w)| 2.0 * w - i as f64)
        .collect();
    assert_eq!(y, scaled, "{format}: scaled SpMV");
    let xi: Vec<i32> = (0..n as i32).map(|j| j - 2).collect();
    let want_i: Vec<i32> = (0..m)
        .map(|i| (0..n).map(|j| reference[i * n + j] as i32 * xi[j]).sum())
        .collect();
    assert_eq!(spmv::<i32>(&ti, &xi).unwrap(), want_i, "{format}: int SpMV");
    // SpMM: C = A B with B n x 3, and C = 0.5 A B + 2 C
    let b: Vec<f64> = (0..n * 3).map(|k| (k % 7) as f64 - 3.0).collect();
    let want_c: Vec<f64> = (0..m * 3)
        .map(|k| {
            let (i, q) = (k / 3, k % 3);
            (0..n)
                .map(|j| reference[i * n + j] as f64 * b[j * 3 + q])
                .sum()
        })
        .collect();
    let mut c = vec![f64::NAN; m * 3];
    spmm_into(&t, &b, 3, &mut c).unwrap();
    assert_eq!(c, want_c, "{format}: SpMM");
    let mut c: Vec<f64> = (0..m * 3).map(|k| k as f64).collect();
    spmm_scaled_into(0.5, &t, &b, 3, 2.0, &mut c).unwrap();
    let scaled: Vec<f64> = want_c
        .iter()
        .enumerate()
        .map(|(k, w)| 0.5 * w + 2.0 * k as f64)
        .collect();
    assert_eq!(c, scaled, "{format}: scaled SpMM");
    assert!(matches!(
        spmm_into(&t, &b[..b.len() - 1], 3, &mut c),
        Err(Error::Shape { .. })
    ));
    // wrong lengths and value types are typed errors
    assert!(matches!(
        spmv::<f64>(&t, &x[..n - 1]),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        spmv::<f32>(&t, &vec![0.0; n]),
        Err(Error::Type { .. })
    ));
}

/// Level tensors in the kernels: one generic co-iteration over the levels gives
/// the dense reference's results for random level types and orders (ndim 1-5).
#[test]
fn kernels_on_random_level_formats_match_a_dense_reference() {
    for seed in 0..1500u64 {
        check_kernels(
            seed.wrapping_mul(0xD1B5_4A32_D192_ED03),
            1 + (seed as usize % 5),
        );
    }
}

/// The named 2-D formats in SpMV (DCSR, DCSC, CSR, CSC as level tensors, and
/// `(compressed, dense)`), an integer overflow, and a level tensor built without
/// validation whose coordinate is out of range: typed errors, no panic.
#[test]
fn spmv_of_named_level_formats() {
    use arrow_sparse::kernels::reduce::sum_all;
    use arrow_sparse::kernels::spmv::spmv;
    let coo = CooTensor::<i8, i64>::from_entries(
        vec![3, 4],
        &[
            (vec![0, 1], 2),
            (vec![2, 0], -3),
            (vec![2, 3], 100),
            (vec![0, 3], 1),
        ],
    )
    .unwrap();
    let x = [1i8, 1, 0, 1];
    let cd =
        LevelFormat::try_new(vec![LevelType::COMPRESSED, LevelType::DENSE], vec![0, 1]).unwrap();
    for f in [
        LevelFormat::dcsr(),
        LevelFormat::dcsc(),
        LevelFormat::csr(),
        LevelFormat::csc(),
        cd,
    ] {
        let t: AnyTensor = LevelTensor::<i8, i32>::from_coo(&coo, &f).unwrap().into();
        assert_eq!(spmv::<i8>(&t, &x).unwrap(), vec![3, 0, 97], "{f}");
        assert_eq!(sum_all::<i8>(&t).unwrap(), 100, "{f}");
        // 100 + 100 does not fit int8
        assert!(
            matches!(spmv::<i8>(&t, &[0, 0, 0, 2]), Err(Error::Overflow { .. })),
            "{f}"
        );
    }
    // a DCSR built trusted with a column past its extent
    let bad: AnyTensor = LevelTensor::<f64, i32>::try_new_with(
        vec![2, 2],
        LevelFormat::dcsr(),
        vec![Some(vec![0, 1].into()), Some(vec![0, 1].into())],
        vec![Some(vec![1].into()), Some(vec![7].into())],
        vec![1.0].into(),
        &TensorOptions::trusted(),
    )
    .unwrap()
    .into();
    assert!(matches!(
        spmv::<f64>(&bad, &[1.0, 1.0]),
        Err(Error::Invariant { .. })
    ));
    assert!(arrow_sparse::kernels::reduce::sum_axes::<f64>(&bad, &[0]).is_err());
}

#[cfg(feature = "parquet")]
fn archive_round_trip(dir: &std::path::Path, t: &AnyTensor) -> AnyTensor {
    let path = dir.join("t.parquet");
    let msg = ipc::TensorMessage::from(t.clone());
    arrow_sparse::write_archive(&path, &msg, &Default::default()).unwrap();
    arrow_sparse::read_archive(&path, &Default::default())
        .unwrap()
        .tensor
}

/// A column of `tensors` in memory, through an Arrow IPC file and through Parquet.
#[cfg(feature = "parquet")]
fn column_round_trips(tensors: &[AnyTensor]) -> Vec<Vec<AnyTensor>> {
    use arrow_sparse::column::SparseTensorArray;
    use std::sync::Arc;
    let column = SparseTensorArray::from_tensors(tensors).unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![column.field("t")]));
    let batch =
        arrow_array::RecordBatch::try_new(schema.clone(), vec![column.into_array()]).unwrap();
    let read = |b: &arrow_array::RecordBatch| -> Vec<AnyTensor> {
        SparseTensorArray::from_batch(b, "t")
            .unwrap()
            .iter()
            .map(|t| t.unwrap().unwrap())
            .collect()
    };
    let mut ipc_bytes = Vec::new();
    let mut w = arrow_ipc::writer::FileWriter::try_new(&mut ipc_bytes, &schema).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    let mut r =
        arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(ipc_bytes), None).unwrap();
    let from_ipc = r.next().unwrap().unwrap();
    let mut pq = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut pq, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
        bytes::Bytes::from(pq),
        1024,
    )
    .unwrap();
    let from_pq: Vec<arrow_array::RecordBatch> = r.collect::<Result<_, _>>().unwrap();
    vec![read(&batch), read(&from_ipc), read(&from_pq[0])]
}

/// Issue #17's formats: DCSR, DCSC, CSF with dense levels, batched CSR and a
/// sparse vector, each exactly back from IPC, a Parquet archive and a sparse
/// tensor column (in memory, Arrow IPC file, Parquet).
#[cfg(feature = "parquet")]
#[test]
fn named_formats_round_trip_through_ipc_archives_and_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(4242);
    let batch = |r: &mut Rng, ndim: usize| -> Vec<CooTensor<f64, i64>> {
        (0..3).map(|_| random_coo(r, ndim)).collect()
    };
    type Case = (&'static str, LevelFormat, Vec<CooTensor<f64, i64>>);
    let cases: Vec<Case> = vec![
        ("dcsr", LevelFormat::dcsr(), batch(&mut r, 2)),
        ("dcsc", LevelFormat::dcsc(), batch(&mut r, 2)),
        (
            "csf, 1 dense level",
            LevelFormat::csf_with_dense(1, vec![0, 1, 2]).unwrap(),
            batch(&mut r, 3),
        ),
        (
            "csf, 2 dense levels",
            LevelFormat::csf_with_dense(2, vec![2, 0, 1]).unwrap(),
            batch(&mut r, 3),
        ),
        (
            "batched csr",
            LevelFormat::batched_csr(2).unwrap(),
            batch(&mut r, 4),
        ),
        (
            "sparse vector",
            LevelFormat::sparse_vector(),
            batch(&mut r, 1),
        ),
    ];
    for (name, format, coos) in cases {
        let tensors: Vec<AnyTensor> = coos
            .iter()
            .map(|c| {
                LevelTensor::<f64, i32>::from_coo(c, &format)
                    .unwrap()
                    .with_dim_names((0..c.ndim()).map(|d| format!("d{d}")).collect())
                    .unwrap()
                    .into()
            })
            .collect();
        for t in &tensors {
            let encoded = ipc::encode(t, &[], &ipc::StreamWriteOptions::default()).unwrap();
            let (msg, _) =
                ipc::decode(&encoded.to_vec().into(), &ipc::StreamReadOptions::default())
                    .unwrap()
                    .unwrap();
            assert_eq!(&msg.tensor, t, "{name}: IPC");
            assert_eq!(&archive_round_trip(dir.path(), t), t, "{name}: archive");
        }
        for (i, back) in column_round_trips(&tensors).into_iter().enumerate() {
            assert_eq!(back, tensors, "{name}: column {i}");
        }
    }
}

/// Random level formats through archives and columns.
#[cfg(feature = "parquet")]
#[test]
fn random_formats_round_trip_through_archives_and_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut all_dense = 0;
    for seed in 0..300u64 {
        let mut r = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
        let ndim = 1 + r.below(5);
        let format = relaxed(&random_format(&mut r, ndim));
        let tensors: Vec<AnyTensor> = (0..2)
            .map(|_| {
                LevelTensor::<f32, i16, i32>::from_coo(
                    &random_coo(&mut r, ndim).cast_values_f32(),
                    &format,
                )
                .unwrap()
                .into()
            })
            .collect();
        for t in &tensors {
            assert_eq!(&archive_round_trip(dir.path(), t), t, "{format}: archive");
        }
        if format.levels().iter().all(|t| *t == LevelType::DENSE) {
            // dense storage: not a sparse tensor column
            assert!(arrow_sparse::column::SparseTensorArray::from_tensors(&tensors).is_err());
            all_dense += 1;
            continue;
        }
        for back in column_round_trips(&tensors) {
            assert_eq!(back, tensors, "{format}: column");
        }
    }
    assert!(all_dense > 0);
}

trait CastF32 {
    fn cast_values_f32(&self) -> CooTensor<f32, i64>;
}
impl CastF32 for CooTensor<f64, i64> {
    fn cast_values_f32(&self) -> CooTensor<f32, i64> {
        let entries: Vec<(Vec<usize>, f32)> = {
            let mut v = Vec::new();
            self.for_each(|c, x| v.push((c.to_vec(), x as f32)))
                .unwrap();
            v
        };
        CooTensor::from_entries(self.shape().to_vec(), &entries).unwrap()
    }
}

/// A compressed node with no stored value below it cannot be described by rows:
/// the archive writer refuses it (IPC and columns carry it).
#[cfg(feature = "parquet")]
#[test]
fn childless_compressed_nodes_are_refused_by_archives_only() {
    // DCSR with row 1 present but empty
    let t: AnyTensor = LevelTensor::<f64, i32>::try_new(
        vec![3, 3],
        LevelFormat::dcsr(),
        vec![Some(vec![0, 2].into()), Some(vec![0, 1, 1].into())],
        vec![Some(vec![0, 1].into()), Some(vec![2].into())],
        vec![5.0].into(),
    )
    .unwrap()
    .into();
    let dir = tempfile::tempdir().unwrap();
    let msg = ipc::TensorMessage::from(t.clone());
    let err = arrow_sparse::write_archive(dir.path().join("t.parquet"), &msg, &Default::default());
    assert!(matches!(err, Err(Error::Unsupported(_))), "{err:?}");
    assert!(!dir.path().join("t.parquet").exists());
    let encoded = ipc::encode(&t, &[], &ipc::StreamWriteOptions::default()).unwrap();
    let (back, _) = ipc::decode(&encoded.to_vec().into(), &ipc::StreamReadOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(back.tensor, t);
    assert_eq!(column_round_trips(std::slice::from_ref(&t))[2], vec![t]);
}

/// DM views over level storage (a take with repeats, a transpose) in a Parquet
/// archive (the rows are the level tensor's) and on the wire (the level tensor's
/// nearest plain tensor, the maps and the levels, format/SPEC.md 8.3): the views
/// come back exactly.
#[cfg(feature = "parquet")]
#[test]
fn dm_views_over_level_storage_in_archives() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(99);
    for f in [
        LevelFormat::dcsc(),
        LevelFormat::csf_with_dense(1, vec![1, 0]).unwrap(),
    ] {
        let coo = random_coo(&mut r, 2);
        let level: AnyTensor = LevelTensor::<f64, i32>::from_coo(&coo, &f).unwrap().into();
        let dm = arrow_sparse::AnyDm::try_new(
            arrow_sparse::dims::DimMap::identity(coo.shape().to_vec()).unwrap(),
            level.clone(),
            &TensorOptions::default(),
        )
        .unwrap();
        let n0 = coo.shape()[0];
        let view = AnyTensor::Dm(
            dm.take(0, &[n0 - 1, 0, n0 - 1])
                .unwrap()
                .transpose(0, 1)
                .unwrap(),
        );
        let back = archive_round_trip(dir.path(), &view);
        assert_eq!(back, view, "{f}");
        assert_eq!(dense(&back), dense(&view));
        // IPC: the level tensor's nearest plain tensor, the maps and the levels
        let encoded = ipc::encode(&view, &[], &ipc::StreamWriteOptions::default()).unwrap();
        let (msg, _) = ipc::decode(&encoded.to_vec().into(), &ipc::StreamReadOptions::default())
            .unwrap()
            .unwrap();
        assert_eq!(msg.tensor, view, "{f}: IPC");
        assert!(msg.custom_metadata.is_empty());
    }
}

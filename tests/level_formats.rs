//! Level tensors (`arrow_sparse::tensor::level`): random level formats (ndim
//! 1-5, random level types, properties and dimension orders) built from random
//! COO tensors convert to COO and back as identities, travel as their nearest
//! plain tensor and come back exactly, and agree element by element with a dense
//! reference.

mod common;
use common::Rng;

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
    let any: AnyTensor = t.clone().into();
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

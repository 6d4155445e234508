//! GCS and DM: the seed's worked examples, property tests against a dense
//! reference, the wire format (extension metadata) and zero-copy views.

use arrow_sparse::TensorOptions;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use arrow_sparse::dims::{DimMap, ViewOp};
use arrow_sparse::dump::json_line;
use arrow_sparse::ipc::{
    self, MmapReader, StreamReadOptions, StreamWriteOptions, TensorMessage, TensorStreamReader,
    TensorStreamWriter,
};
use arrow_sparse::{
    AnyDm, AnyTensor, CompressedAxis, Convert, CooTensor, Error, Format, GcsTensor, IndexType,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

/// Counts bytes allocated on this thread's behalf (all threads, but tests that
/// read it run the measured code in between two reads on one thread).
struct Counting;
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(l.size(), Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

/// The (2, 3, 4) example of the GCS introduction.
fn seed_example() -> CooTensor<i32, i64> {
    CooTensor::from_entries(
        vec![2, 3, 4],
        &[
            (vec![0, 0, 1], 1),
            (vec![0, 0, 2], 2),
            (vec![0, 0, 3], 3),
            (vec![0, 2, 1], 4),
            (vec![1, 0, 0], 5),
            (vec![1, 0, 3], 6),
            (vec![1, 2, 0], 7),
            (vec![1, 2, 2], 8),
            (vec![1, 2, 3], 9),
        ],
    )
    .unwrap()
}

fn gcs(coo: &CooTensor<i32, i64>, dims: &[usize], part: usize) -> GcsTensor<i32, i64> {
    let map = DimMap::try_new(coo.shape().to_vec(), dims.to_vec(), vec![part]).unwrap();
    GcsTensor::from_coo(coo, map, CompressedAxis::Row).unwrap()
}

#[test]
fn seed_strides_example() {
    let m = DimMap::try_new(vec![2, 3, 4, 5, 6], vec![2, 4, 1, 3, 0], vec![3]).unwrap();
    assert_eq!((m.part(0), m.part(1)), (&[2, 4, 1][..], &[3, 0][..]));
    assert_eq!((m.strides(0), m.strides(1)), (&[18, 3, 1][..], &[2, 1][..]));
}

#[test]
fn seed_crs_examples() {
    let coo = seed_example();
    type Case<'a> = (&'a [usize], usize, &'a [i64], &'a [i64], &'a [i32]);
    let cases: [Case; 3] = [
        (
            &[0, 1, 2],
            2,
            &[0, 3, 3, 4, 6, 6, 9],
            &[1, 2, 3, 1, 0, 3, 0, 2, 3],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        ),
        (
            &[0, 1, 2],
            1,
            &[0, 4, 9],
            &[1, 2, 3, 9, 0, 3, 8, 10, 11],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        ),
        (
            &[2, 1, 0],
            1,
            &[0, 2, 4, 6, 9],
            &[1, 5, 0, 4, 0, 5, 0, 1, 5],
            &[5, 7, 1, 4, 2, 8, 3, 6, 9],
        ),
    ];
    for (dims, part, crow, col, vals) in cases {
        let g = gcs(&coo, dims, part);
        assert_eq!(
            g.matrix().indptr().as_ref(),
            crow,
            "crow_indices for {dims:?} / ({part},)"
        );
        assert_eq!(
            g.matrix().indices().as_ref(),
            col,
            "col_indices for {dims:?} / ({part},)"
        );
        assert_eq!(
            g.matrix().values().as_ref(),
            vals,
            "values for {dims:?} / ({part},)"
        );
        assert_eq!(
            g.to_coo::<i64>().unwrap().canonicalize().unwrap(),
            coo.canonicalize().unwrap()
        );
        for k in 0..coo.nnz() {
            let c: Vec<usize> = (0..3).map(|d| coo.coord(k, d)).collect();
            assert_eq!(g.get(&c), Some(coo.values()[k]));
        }
        assert_eq!(g.get(&[1, 1, 1]), Some(0));
        assert_eq!(g.get(&[2, 0, 0]), None);
    }
}

/// The 12 mappings of the (2, 3, 4) table: (row dimensions, column dimensions,
/// the reduced array row by row, each element showing its (i, j, k) index).
const TABLE: [(&[usize], &[usize], &str); 12] = [
    (
        &[0],
        &[1, 2],
        "000 001 002 003 010 011 012 013 020 021 022 023 / 100 101 102 103 110 111 112 113 120 121 122 123",
    ),
    (
        &[0],
        &[2, 1],
        "000 010 020 001 011 021 002 012 022 003 013 023 / 100 110 120 101 111 121 102 112 122 103 113 123",
    ),
    (
        &[1],
        &[0, 2],
        "000 001 002 003 100 101 102 103 / 010 011 012 013 110 111 112 113 / 020 021 022 023 120 121 122 123",
    ),
    (
        &[1],
        &[2, 0],
        "000 100 001 101 002 102 003 103 / 010 110 011 111 012 112 013 113 / 020 120 021 121 022 122 023 123",
    ),
    (
        &[2],
        &[0, 1],
        "000 010 020 100 110 120 / 001 011 021 101 111 121 / 002 012 022 102 112 122 / 003 013 023 103 113 123",
    ),
    (
        &[2],
        &[1, 0],
        "000 100 010 110 020 120 / 001 101 011 111 021 121 / 002 102 012 112 022 122 / 003 103 013 113 023 123",
    ),
    (
        &[0, 1],
        &[2],
        "000 001 002 003 / 010 011 012 013 / 020 021 022 023 / 100 101 102 103 / 110 111 112 113 / 120 121 122 123",
    ),
    (
        &[0, 2],
        &[1],
        "000 010 020 / 001 011 021 / 002 012 022 / 003 013 023 / 100 110 120 / 101 111 121 / 102 112 122 / 103 113 123",
    ),
    (
        &[1, 0],
        &[2],
        "000 001 002 003 / 100 101 102 103 / 010 011 012 013 / 110 111 112 113 / 020 021 022 023 / 120 121 122 123",
    ),
    (
        &[1, 2],
        &[0],
        "000 100 / 001 101 / 002 102 / 003 103 / 010 110 / 011 111 / 012 112 / 013 113 / 020 120 / 021 121 / 022 122 / 023 123",
    ),
    (
        &[2, 0],
        &[1],
        "000 010 020 / 100 110 120 / 001 011 021 / 101 111 121 / 002 012 022 / 102 112 122 / 003 013 023 / 103 113 123",
    ),
    (
        &[2, 1],
        &[0],
        "000 100 / 010 110 / 020 120 / 001 101 / 011 111 / 021 121 / 002 102 / 012 112 / 022 122 / 003 103 / 013 113 / 023 123",
    ),
];

#[test]
fn all_twelve_mappings_of_the_seed_table() {
    // every element stored, value = its index written as a decimal "ijk"
    let mut entries = Vec::new();
    for i in 0..2 {
        for j in 0..3 {
            for k in 0..4 {
                entries.push((vec![i, j, k], (100 * i + 10 * j + k) as i32));
            }
        }
    }
    let coo = CooTensor::<i32, i64>::from_entries(vec![2, 3, 4], &entries).unwrap();
    for (rows, cols, text) in TABLE {
        let dims: Vec<usize> = rows.iter().chain(cols).copied().collect();
        let g = gcs(&coo, &dims, rows.len());
        let m = g.matrix();
        let expected: Vec<Vec<i32>> = text
            .split(" / ")
            .map(|r| r.split(' ').map(|x| x.parse().unwrap()).collect())
            .collect();
        assert_eq!(
            m.shape(),
            &[expected.len(), expected[0].len()],
            "{rows:?} / {cols:?}"
        );
        for (r, row) in expected.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                assert_eq!(m.get(&[r, c]), Some(v), "{rows:?} / {cols:?} at ({r}, {c})");
            }
        }
    }
}

// ---------------------------------------------------------------- dense reference

/// A dense row-major reference array.
#[derive(Clone, Debug, PartialEq)]
struct Dense {
    shape: Vec<usize>,
    data: Vec<i32>,
}

fn unravel(mut lin: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = lin % shape[d];
        lin /= shape[d];
    }
    c
}

fn ravel(c: &[usize], shape: &[usize]) -> usize {
    c.iter().zip(shape).fold(0, |a, (&x, &d)| a * d + x)
}

impl Dense {
    fn from_coo(t: &CooTensor<i32, i64>) -> Dense {
        let mut data = vec![0; t.shape().iter().product()];
        t.for_each(|c, v| data[ravel(c, t.shape())] += v).unwrap();
        Dense {
            shape: t.shape().to_vec(),
            data,
        }
    }
    fn from_tensor(t: &AnyTensor) -> Dense {
        let coo = t.to_coo::<i32, i64>().unwrap();
        Dense::from_coo(&coo)
    }
    /// Build the result of an op by evaluating every output element by the op's
    /// definition (independent of the crate's view code).
    fn apply(&self, op: &ViewOp) -> Dense {
        let s = &self.shape;
        let out: Vec<usize> = match op {
            ViewOp::Permute { order } => order.iter().map(|&o| s[o]).collect(),
            ViewOp::Select { dim, .. } => s
                .iter()
                .enumerate()
                .filter(|(d, _)| d != dim)
                .map(|(_, &x)| x)
                .collect(),
            ViewOp::Slice {
                dim,
                start,
                stop,
                step,
            } => {
                let mut o = s.clone();
                o[*dim] = (stop - start).div_ceil(*step);
                o
            }
            ViewOp::Reshape { shape } | ViewOp::Broadcast { shape } => shape.clone(),
            ViewOp::Rotate { .. } => s.clone(),
            ViewOp::Take { dim, indices } => {
                let mut o = s.clone();
                o[*dim] = indices.as_slice().len();
                o
            }
            _ => unreachable!(),
        };
        let size: usize = out.iter().product();
        let data = (0..size)
            .map(|lin| {
                let c = unravel(lin, &out);
                let src: Vec<usize> = match op {
                    ViewOp::Permute { order } => {
                        let mut x = vec![0; s.len()];
                        for (i, &o) in order.iter().enumerate() {
                            x[o] = c[i];
                        }
                        x
                    }
                    ViewOp::Select { dim, index } => {
                        let mut x = c.clone();
                        x.insert(*dim, *index);
                        x
                    }
                    ViewOp::Slice {
                        dim, start, step, ..
                    } => {
                        let mut x = c.clone();
                        x[*dim] = start + c[*dim] * step;
                        x
                    }
                    ViewOp::Reshape { .. } => unravel(lin, s),
                    ViewOp::Broadcast { .. } => c.iter().zip(s).map(|(&x, &d)| x % d).collect(),
                    ViewOp::Rotate { dim, shift } => {
                        let mut x = c.clone();
                        let n = s[*dim] as i64;
                        x[*dim] = ((c[*dim] as i64 - shift).rem_euclid(n)) as usize;
                        x
                    }
                    ViewOp::Take { dim, indices } => {
                        let mut x = c.clone();
                        x[*dim] = indices.as_slice()[c[*dim]];
                        x
                    }
                    _ => unreachable!(),
                };
                self.data[ravel(&src, s)]
            })
            .collect();
        Dense { shape: out, data }
    }
}

fn apply_view(t: &AnyDm, op: &ViewOp) -> AnyDm {
    match op {
        ViewOp::Permute { order } => t.permute(order),
        ViewOp::Select { dim, index } => t.select(*dim, *index),
        ViewOp::Slice {
            dim,
            start,
            stop,
            step,
        } => t.slice(*dim, *start, *stop, *step),
        ViewOp::Reshape { shape } => t.reshape(shape),
        ViewOp::Broadcast { shape } => t.broadcast(shape),
        ViewOp::Rotate { dim, shift } => t.rotate(*dim, *shift),
        ViewOp::Take { dim, indices } => t.take(*dim, indices.as_slice()),
        _ => unreachable!(),
    }
    .unwrap()
}

// ---------------------------------------------------------------- strategies

fn tensor_strategy() -> impl Strategy<Value = CooTensor<i32, i64>> {
    (1usize..=6)
        .prop_flat_map(|ndim| prop::collection::vec(1usize..4, ndim))
        .prop_flat_map(|shape| {
            let entry = (shape.iter().map(|&d| 0..d).collect::<Vec<_>>(), 1i32..100);
            (Just(shape), prop::collection::vec(entry, 0..30))
        })
        .prop_map(|(shape, entries)| CooTensor::<i32, i64>::from_entries(shape, &entries).unwrap())
}

/// A random (dimensions, partitioning) for `n` dimensions with `parts` parts.
fn mapping(n: usize, parts: usize, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let mut s = seed | 1;
    let mut next = |m: usize| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % m.max(1) as u64) as usize
    };
    let mut dims: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        dims.swap(i, next(i + 1));
    }
    let mut part: Vec<usize> = (0..parts - 1).map(|_| next(n + 1)).collect();
    part.sort();
    (dims, part)
}

fn view_strategy(shape: Vec<usize>) -> impl Strategy<Value = ViewOp> {
    let n = shape.len();
    let s2 = shape.clone();
    let s3 = shape.clone();
    let s4 = shape.clone();
    let s5 = shape.clone();
    prop_oneof![
        Just(()).prop_perturb(move |_, mut rng| {
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, rng.random_range(0..=i));
            }
            ViewOp::Permute { order }
        }),
        (0..n)
            .prop_flat_map(move |d| (Just(d), 0..s2[d]))
            .prop_map(|(dim, index)| ViewOp::Select { dim, index }),
        (0..n)
            .prop_flat_map(move |d| (Just(d), 0..=s3[d], 1usize..3))
            .prop_flat_map(move |(d, start, step)| {
                let e = s4[d];
                (Just(d), Just(start), start..=e, Just(step))
            })
            .prop_map(|(dim, start, stop, step)| ViewOp::Slice {
                dim,
                start,
                stop,
                step
            }),
        Just(ViewOp::Reshape {
            shape: vec![shape.iter().product()]
        }),
        prop::collection::vec(1usize..3, n).prop_map({
            let s = shape.clone();
            move |k| ViewOp::Broadcast {
                shape: s.iter().zip(&k).map(|(a, b)| a * b).collect(),
            }
        }),
        ((0..n), -5i64..5).prop_map(|(dim, shift)| ViewOp::Rotate { dim, shift }),
        // an index array in any order, repeats allowed, possibly empty
        (0..n)
            .prop_flat_map(move |d| (Just(d), prop::collection::vec(0..s5[d], 0..5)))
            .prop_map(|(dim, indices)| ViewOp::Take {
                dim,
                indices: indices.into()
            }),
    ]
}

fn storages(m: usize) -> Vec<Format> {
    let mut v = vec![Format::Coo, Format::Dense];
    if m == 2 {
        v.extend([Format::Csr, Format::Csc]);
    }
    if m >= 2 {
        v.push(Format::Csf);
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn coo_gcs_coo_is_the_identity(coo in tensor_strategy(), seed in any::<u64>(), column in any::<bool>()) {
        let (dims, part) = mapping(coo.ndim(), 2, seed);
        let map = DimMap::try_new(coo.shape().to_vec(), dims, part).unwrap();
        let axis = if column { CompressedAxis::Column } else { CompressedAxis::Row };
        let g = GcsTensor::<i32, i32, i64>::from_coo(&coo, map, axis).unwrap();
        prop_assert_eq!(Dense::from_coo(&g.to_coo::<i64>().unwrap()), Dense::from_coo(&coo));
        // and through the wire
        let any: AnyTensor = g.into();
        let bytes = { let mut w = TensorStreamWriter::new(Vec::new()); w.write(&any).unwrap(); w.finish().unwrap() };
        let back = TensorStreamReader::new(&bytes[..]).next().unwrap().unwrap().tensor;
        prop_assert_eq!(&back, &any);
    }

    #[test]
    fn coo_dm_coo_is_the_identity_for_every_storage(coo in tensor_strategy(), seed in any::<u64>(), parts in 1usize..4, nest in any::<bool>()) {
        // a DM storage has no more dimensions than the tensor (the DM proposal)
        let (dims, part) = mapping(coo.ndim(), parts.min(coo.ndim()), seed);
        let map = DimMap::try_new(coo.shape().to_vec(), dims, part).unwrap();
        let reference = Dense::from_coo(&coo);
        for storage in storages(map.reduced_ndim()) {
            let any: AnyTensor = coo.clone().into();
            let mut dm = any.to_dm(map.clone(), storage, IndexType::Int64).unwrap();
            let mut expected = reference.clone();
            if nest {
                // a DM over that DM (identity map over its shape), then permuted:
                // the permutation folds into the outer map's dimensions
                let n = dm.shape().len();
                let order: Vec<usize> = (0..n).rev().collect();
                let outer = AnyDm::try_new(DimMap::identity(dm.shape().to_vec()).unwrap(), dm.clone(), &TensorOptions::default()).unwrap().permute(&order).unwrap();
                prop_assert!(outer.views().is_empty());
                dm = AnyTensor::Dm(outer);
                expected = expected.apply(&ViewOp::Permute { order });
            }
            prop_assert_eq!(Dense::from_tensor(&dm), expected, "storage {:?}", storage);
            let bytes = { let mut w = TensorStreamWriter::new(Vec::new()); w.write(&dm).unwrap(); w.finish().unwrap() };
            let back = TensorStreamReader::new(&bytes[..]).next().unwrap().unwrap().tensor;
            prop_assert_eq!(&back, &dm);
        }
    }

    #[test]
    fn views_match_the_dense_reference(coo in tensor_strategy(), seed in any::<u64>(), ops in prop::collection::vec(any::<prop::sample::Index>(), 1..4), storage_pick in any::<prop::sample::Index>()) {
        let (dims, part) = mapping(coo.ndim(), 2.min(coo.ndim()), seed);
        let map = DimMap::try_new(coo.shape().to_vec(), dims, part).unwrap();
        // (level: the level tensor the COO storage is, #17)
        let storage = *storage_pick.get(&[storages(map.reduced_ndim()), vec![Format::Level]].concat());
        let AnyTensor::Dm(mut dm) = AnyTensor::from(coo.clone()).to_dm(map, storage, IndexType::Int64).unwrap() else { unreachable!() };
        let mut reference = Dense::from_coo(&coo);
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let mut runner = TestRunner::new_with_rng(Default::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &key));
        for (i, _) in ops.iter().enumerate() {
            if reference.shape.is_empty() || reference.shape.contains(&0) { break; }
            let op = view_strategy(reference.shape.clone()).new_tree(&mut runner).unwrap().current();
            let _ = i;
            if matches!(op, ViewOp::Select { .. }) && reference.shape.len() == 1 {
                prop_assert!(dm.select(0, 0).is_err(), "a view keeps at least one dimension");
                continue;
            }
            dm = apply_view(&dm, &op);
            reference = reference.apply(&op);
            prop_assert_eq!(dm.shape(), &reference.shape[..], "{:?}", op);
            let got = Dense::from_tensor(&AnyTensor::Dm(dm.clone()));
            prop_assert_eq!(&got, &reference, "after {:?}", op);
            // lookups agree too
            for (lin, &v) in reference.data.iter().enumerate().take(50) {
                let c = unravel(lin, &reference.shape);
                prop_assert_eq!(dm.get::<i32>(&c).unwrap(), Some(v));
            }
        }
        // the views survive the wire
        let t = AnyTensor::Dm(dm);
        let bytes = { let mut w = TensorStreamWriter::new(Vec::new()); w.write(&t).unwrap(); w.finish().unwrap() };
        let back = TensorStreamReader::new(&bytes[..]).next().unwrap().unwrap().tensor;
        prop_assert_eq!(&back, &t);
        // and materialise into every format with the same entries
        for f in [Format::Coo, Format::Dense] {
            prop_assert_eq!(Dense::from_tensor(&t.convert(f, IndexType::Int64, None).unwrap()), reference.clone());
        }
    }
}

// ---------------------------------------------------------------- wire

fn meta_of(t: &AnyTensor) -> Vec<(String, String)> {
    let m = ipc::encode(
        t,
        &[("user".into(), "kept".into())],
        &StreamWriteOptions::default(),
    )
    .unwrap();
    let bytes = m.to_vec();
    let msg = arrow_ipc::root_as_message(&bytes[8..]).unwrap();
    msg.custom_metadata()
        .unwrap()
        .iter()
        .map(|kv| {
            (
                kv.key().unwrap().to_string(),
                kv.value().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn extension_metadata_is_as_specified() {
    let coo = seed_example();
    let g: AnyTensor = gcs(&coo, &[2, 1, 0], 1)
        .with_dim_names(vec!["a".into(), "b".into(), "c".into()])
        .unwrap()
        .into();
    assert_eq!(
        meta_of(&g),
        vec![
            ("user".to_string(), "kept".to_string()),
            ("ARROW:extension:name".to_string(), "arrow_sparse.gcs".to_string()),
            ("ARROW:extension:metadata".to_string(), r#"{"dim_names":["a","b","c"],"dimensions":[2,1,0],"partitioning":[1],"shape":[2,3,4],"version":1}"#.to_string()),
        ]
    );
    // user metadata is kept and the extension keys do not leak into it on read
    let bytes = {
        let mut w = TensorStreamWriter::new(Vec::new());
        w.write_with_metadata(&g, &[("user".into(), "kept".into())])
            .unwrap();
        w.finish().unwrap()
    };
    let back = TensorStreamReader::new(&bytes[..]).next().unwrap().unwrap();
    assert_eq!(
        back,
        TensorMessage {
            tensor: g,
            custom_metadata: vec![("user".into(), "kept".into())]
        }
    );
    // DM over GCS, with views: one chain, outermost first
    let AnyTensor::Gcs(inner) = AnyTensor::from(coo.clone())
        .to_gcs(
            DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2]).unwrap(),
            CompressedAxis::Column,
            IndexType::Int32,
        )
        .unwrap()
    else {
        panic!()
    };
    let dm = AnyDm::try_new(
        DimMap::identity(vec![2, 3, 4])
            .unwrap()
            .permuted(&[0, 1, 2])
            .unwrap(),
        AnyTensor::Gcs(inner),
        &TensorOptions::default(),
    )
    .unwrap();
    let dm = dm.slice(2, 1, 4, 2).unwrap().rotate(0, 1).unwrap();
    let meta = meta_of(&AnyTensor::Dm(dm.clone()));
    assert_eq!(meta[1].1, "arrow_sparse.dm");
    assert_eq!(
        meta[2].1,
        r#"{"maps":[{"dim_names":["","",""],"dimensions":[0,1,2],"kind":"dm","partitioning":[1,2],"shape":[2,3,4],"views":[{"dim":2,"op":"slice","start":1,"step":2,"stop":4},{"dim":0,"op":"rotate","shift":1}]},{"dim_names":["","",""],"dimensions":[0,1,2],"kind":"gcs","partitioning":[2],"shape":[2,3,4]}],"version":1}"#
    );
    let t = AnyTensor::Dm(dm);
    let bytes = {
        let mut w = TensorStreamWriter::new(Vec::new());
        w.write(&t).unwrap();
        w.finish().unwrap()
    };
    assert_eq!(
        TensorStreamReader::new(&bytes[..])
            .next()
            .unwrap()
            .unwrap()
            .tensor,
        t
    );
}

/// Re-encode a GCS tensor's storage with hand-written extension metadata.
fn with_meta(name: &str, json: &str) -> Result<TensorMessage, Error> {
    let g: AnyTensor = gcs(&seed_example(), &[0, 1, 2], 2).into();
    let AnyTensor::Gcs(g) = g else { unreachable!() };
    let storage = AnyTensor::Csx(g.matrix().clone());
    let meta = vec![
        ("ARROW:extension:name".to_string(), name.to_string()),
        ("ARROW:extension:metadata".to_string(), json.to_string()),
    ];
    let bytes = {
        let mut w = TensorStreamWriter::new(Vec::new());
        w.write_with_metadata(&storage, &meta).unwrap();
        w.finish().unwrap()
    };
    TensorStreamReader::new(&bytes[..]).next().unwrap()
}

#[test]
fn bad_extension_metadata_is_a_typed_error() {
    let ok = r#"{"version":1,"shape":[2,3,4],"dimensions":[0,1,2],"partitioning":[2]}"#;
    assert!(matches!(
        with_meta("arrow_sparse.gcs", ok).unwrap().tensor,
        AnyTensor::Gcs(_)
    ));
    for bad in [
        "not json",
        "[]",
        r#"{"version":2,"shape":[2,3,4],"dimensions":[0,1,2],"partitioning":[2]}"#,
        r#"{"shape":[2,3,4],"dimensions":[0,1,2],"partitioning":[2]}"#,
        r#"{"version":1,"shape":[2,3,4],"dimensions":[0,1,1],"partitioning":[2]}"#,
        r#"{"version":1,"shape":[2,3,5],"dimensions":[0,1,2],"partitioning":[2]}"#,
        r#"{"version":1,"shape":[2,3,4],"dimensions":[0,1,2],"partitioning":[1]}"#,
        r#"{"version":1,"shape":[2,3,4],"dimensions":[0,1,2],"partitioning":[2,3]}"#,
        r#"{"version":1,"shape":[-2,3,4],"dimensions":[0,1,2],"partitioning":[2]}"#,
        r#"{"version":1,"shape":[9223372036854775807,9223372036854775807,4],"dimensions":[0,1,2],"partitioning":[2]}"#,
        r#"{"version":1,"shape":[2,3,4],"dimensions":[0,1,2],"partitioning":[2],"dim_names":[1,2,3]}"#,
    ] {
        let e = with_meta("arrow_sparse.gcs", bad).unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    for bad in [
        r#"{"version":1,"maps":[]}"#,
        r#"{"version":1,"maps":[{"kind":"xx","shape":[6,4],"dimensions":[0,1],"partitioning":[1]}]}"#,
        r#"{"version":1,"maps":[{"kind":"dm","shape":[6,4],"dimensions":[0,1],"partitioning":[1],"views":[{"op":"select","dim":5,"index":0}]}]}"#,
        r#"{"version":1,"maps":[{"kind":"dm","shape":[6,4],"dimensions":[0,1],"partitioning":[1],"views":[{"op":"broadcast","shape":[6000000,400000]}]}]}"#,
        r#"{"version":1,"maps":[{"kind":"dm","shape":[6,4],"dimensions":[0,1],"partitioning":[1],"views":[{"op":"fly"}]}]}"#,
    ] {
        assert!(with_meta("arrow_sparse.dm", bad).is_err(), "{bad}");
    }
    // a DM over level storage (SPEC 8.3): the message is the level tensor's
    // nearest plain tensor, here CSR levels over the 6 x 4 CSR message
    let dm_over = |levels: &str| {
        format!(
            r#"{{"version":1,"maps":[{{"kind":"dm","shape":[4,6],"dimensions":[1,0],"partitioning":[1]}}],"levels":{levels}}}"#
        )
    };
    let csr_levels = r#"{"levels":["dense","compressed"],"axis_order":[0,1],"index_type":"int32","indptr_type":"int64"}"#;
    let AnyTensor::Dm(d) = with_meta("arrow_sparse.dm", &dm_over(csr_levels))
        .unwrap()
        .tensor
    else {
        panic!("not a DM tensor")
    };
    assert_eq!(d.storage().format(), Format::Level);
    assert_eq!(d.shape(), &[4, 6]);
    for bad in [
        "[1]".to_string(),
        csr_levels.replace("dense", "loose"),
        csr_levels.replace("\"dense\"", "\"compressed\""), // DCSR levels on a CSR message
        csr_levels.replace("[0,1]", "[1,0]"),              // CSC levels on a CSR message
        csr_levels.replace("\"int32\"", "\"int128\""),
        r#"{"levels":["dense","compressed"],"axis_order":[0,1]}"#.to_string(),
    ] {
        let e = with_meta("arrow_sparse.dm", &dm_over(&bad)).unwrap_err();
        assert!(!e.to_string().contains('\n'), "{bad}: {e}");
    }
    // unknown extension names pass through with their metadata
    let m = with_meta("someone.else", "{whatever").unwrap();
    assert!(matches!(m.tensor, AnyTensor::Csx(_)));
    assert_eq!(m.custom_metadata[0].1, "someone.else");
}

// ---------------------------------------------------------------- zero copy

#[test]
fn views_of_a_mapped_dm_tensor_copy_nothing() {
    // ~10^5 entries stored as a 2-D CSR under a 3-D DM map, written and mapped back
    let n = 100_000usize;
    let entries: Vec<(Vec<usize>, i32)> = (0..n)
        .map(|i| (vec![i % 50, (i / 50) % 40, i / 2000], i as i32 + 1))
        .collect();
    let coo = CooTensor::<i32, i64>::from_entries(vec![50, 40, 50], &entries).unwrap();
    let map = DimMap::try_new(vec![50, 40, 50], vec![2, 0, 1], vec![1]).unwrap();
    let dm = AnyTensor::from(coo)
        .to_dm(map, Format::Csr, IndexType::Int64)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dm.arrow");
    ipc::write_tensor_stream(
        &path,
        &[TensorMessage::from(dm.clone())],
        &StreamWriteOptions::default(),
    )
    .unwrap();
    let reader = MmapReader::open_with(&path, &StreamReadOptions::default()).unwrap();
    let AnyTensor::Dm(read) = reader.get(0).unwrap().tensor else {
        panic!("not DM")
    };
    assert_eq!(AnyTensor::Dm(read.clone()), dm);
    let AnyTensor::Csx(storage) = read.storage() else {
        panic!()
    };
    let ptr = storage.indices().inner().as_ptr();
    assert!(arrow_sparse::buffer::points_into(
        storage.indices().inner(),
        reader.mapping()
    ));

    let before = ALLOCATED.load(Relaxed);
    let view = read
        .permute(&[2, 1, 0])
        .unwrap()
        .slice(0, 10, 40, 3)
        .unwrap()
        .select(1, 7)
        .unwrap()
        .transpose(0, 1)
        .unwrap();
    let allocated = ALLOCATED.load(Relaxed) - before;
    // a few small maps, not O(nnz): the storage alone is 1.6 MB
    assert!(allocated < 16 * 1024, "views allocated {allocated} bytes");
    let AnyTensor::Csx(s2) = view.storage() else {
        panic!()
    };
    assert_eq!(
        s2.indices().inner().as_ptr(),
        ptr,
        "the view shares the mapped buffers"
    );
    assert_eq!(view.shape(), &[50, 10]);
    // and it reads what a materialised slice of the original reads
    let mut count = 0;
    view.for_each_entry::<i32>(&mut |c, v| {
        count += 1;
        let (i, k) = (c[0], c[1]);
        let orig_k = 10 + 3 * k;
        assert_eq!(v as usize - 1, i + 50 * 7 + 2000 * orig_k);
    })
    .unwrap();
    assert_eq!(count, 50 * 10);
    let _ = json_line(&AnyTensor::Dm(view)).unwrap();
}

#[test]
fn best_mapping_is_the_smallest() {
    use arrow_sparse::tensor::gcs::best_mapping;
    for (shape, nnz) in [
        (vec![2usize, 3, 4], 9usize),
        (vec![1000, 2, 70_000], 50_000),
        (vec![5, 100_000, 3, 2], 1000),
    ] {
        for axis in [CompressedAxis::Row, CompressedAxis::Column] {
            let (map, bytes) = best_mapping(&shape, nnz, axis).unwrap();
            // brute force over every permutation and split point
            let n = shape.len();
            let mut perms = vec![vec![]];
            for k in 0..n {
                perms = perms
                    .into_iter()
                    .flat_map(|p: Vec<usize>| {
                        (0..=p.len()).map(move |i| {
                            let mut q = p.clone();
                            q.insert(i, k);
                            q
                        })
                    })
                    .collect();
            }
            let size = |m: &DimMap| {
                let (major, minor) = axis.dims();
                let wp = IndexType::narrowest_signed(nnz as u64).byte_width();
                let wi =
                    IndexType::narrowest_signed(m.reduced_shape()[minor].saturating_sub(1) as u64)
                        .byte_width();
                (m.reduced_shape()[major] + 1) * wp + nnz * wi
            };
            assert_eq!(size(&map), bytes);
            for p in perms {
                for split in 0..=n {
                    let m = DimMap::try_new(shape.clone(), p.clone(), vec![split]).unwrap();
                    assert!(size(&m) >= bytes, "{p:?}/{split} beats the best mapping");
                }
            }
        }
    }
}

/// A take view travels as `{"dim":d,"indices":[...],"op":"take"}` and reads back
/// equal; an index taken k times counts k against `max_broadcast` (an index
/// array of one repeated index would otherwise multiply a stored entry without
/// limit); an index outside the extent, or indices that are not an array of
/// integers, are typed errors.
#[test]
fn take_views_on_the_wire() {
    let storage = AnyTensor::Gcs(gcs(&seed_example(), &[0, 1, 2], 2).into());
    let dm = AnyDm::try_new(
        DimMap::identity(vec![2, 3, 4]).unwrap(),
        storage,
        &TensorOptions::default(),
    )
    .unwrap()
    .take(2, &[3, 3, 0])
    .unwrap();
    // output index 0 and 1 of dimension 2 both read index 3
    assert_eq!(dm.get::<i32>(&[0, 0, 0]).unwrap(), Some(3));
    assert_eq!(dm.get::<i32>(&[0, 0, 1]).unwrap(), Some(3));
    assert_eq!(dm.get::<i32>(&[1, 2, 2]).unwrap(), Some(7));
    let t = AnyTensor::Dm(dm);
    let meta = meta_of(&t);
    assert!(
        meta[2]
            .1
            .contains(r#""views":[{"dim":2,"indices":[3,3,0],"op":"take"}]"#),
        "{}",
        meta[2].1
    );
    let encode = |json: &str| -> Vec<u8> {
        let AnyTensor::Dm(d) = &t else { unreachable!() };
        let AnyTensor::Gcs(g) = d.storage() else {
            unreachable!()
        };
        let meta = vec![
            (
                "ARROW:extension:name".to_string(),
                "arrow_sparse.dm".to_string(),
            ),
            ("ARROW:extension:metadata".to_string(), json.to_string()),
        ];
        let mut w = TensorStreamWriter::new(Vec::new());
        w.write_with_metadata(&AnyTensor::Csx(g.matrix().clone()), &meta)
            .unwrap();
        w.finish().unwrap()
    };
    let read = |bytes: &[u8], max_broadcast: u64| {
        let options = ipc::StreamReadOptions {
            max_broadcast,
            ..Default::default()
        };
        TensorStreamReader::with_options(bytes, &options)
            .next()
            .unwrap()
    };
    let good = encode(&meta[2].1);
    assert_eq!(read(&good, 2).unwrap().tensor, t);
    assert!(matches!(read(&good, 1), Err(Error::Parse { .. })));
    let out_of_range = encode(&meta[2].1.replace("[3,3,0]", "[3,3,4]"));
    assert!(matches!(
        read(&out_of_range, 2),
        Err(Error::IndexOutOfBounds { .. })
    ));
    for bad in ["[3,-1]", "3", "[3,\"a\"]"] {
        let bytes = encode(&meta[2].1.replace("[3,3,0]", bad));
        assert!(matches!(read(&bytes, 2), Err(Error::Parse { .. })), "{bad}");
    }
}

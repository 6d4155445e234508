//! Writes at stored elements (`kernels::elementwise::set_values` /
//! `stored_position`, issue #17) against an independent reference: the tensor's
//! entries as COO in storage order (duplicates kept), where the position of an
//! element is the index of the one entry with its coordinates. Every format
//! (level tensors too) and index type, random tensors with duplicates, unsorted entries and empty rows;
//! DM tensors with views write into their storage exactly where the storage's
//! own write goes.

use arrow_sparse::dims::DimMap;
use arrow_sparse::kernels::elementwise::{set_values, stored_position, stored_values};
use arrow_sparse::{
    AnyDm, AnyTensor, Convert, CooTensor, Error, Format, IndexType, LevelFormat, LevelType,
    TensorOptions,
};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// A random COO tensor of ndim 1-4 with small extents (so coordinates repeat).
fn random_coo(r: &mut Rng) -> CooTensor<f64, i64> {
    let ndim = 1 + r.below(4);
    let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(4)).collect();
    let nnz = r.below(12);
    let entries: Vec<(Vec<usize>, f64)> = (0..nnz)
        .map(|k| (shape.iter().map(|&d| r.below(d)).collect(), k as f64 + 1.0))
        .collect();
    CooTensor::from_entries(shape, &entries).unwrap()
}

/// The tensor in each format it can take (duplicates summed where a format has
/// to: the conversions keep them as they are).
fn variants(coo: &CooTensor<f64, i64>, r: &mut Rng) -> Vec<AnyTensor> {
    let any: AnyTensor = coo.clone().into();
    let n = coo.shape().len();
    let mut out = vec![any.clone(), AnyTensor::from(coo.canonicalize().unwrap())];
    for (f, it) in [
        (Format::Coo, IndexType::Int8),
        (Format::Csf, IndexType::Int16),
    ] {
        out.push(any.convert(f, it, None).unwrap());
    }
    if n == 2 {
        out.push(any.convert(Format::Csr, IndexType::Int32, None).unwrap());
        out.push(any.convert(Format::Csc, IndexType::Int64, None).unwrap());
    }
    if n >= 2 {
        let mut order: Vec<usize> = (0..n).collect();
        order.rotate_left(1 + r.below(n - 1));
        out.push(
            any.convert(Format::Csf, IndexType::Int32, Some(&order))
                .unwrap(),
        );
        let split = r.below(n + 1);
        let map = DimMap::try_new(coo.shape().to_vec(), order, vec![split]).unwrap();
        out.push(
            any.to_gcs(map, arrow_sparse::CompressedAxis::Column, IndexType::Int32)
                .unwrap(),
        );
    }
    // level tensors (#17): a COO run that keeps duplicates, CSF in a rotated
    // order, CSF with a dense first level (its stored zeros are stored
    // elements), and batched CSR
    let canon: AnyTensor = coo.canonicalize().unwrap().into();
    let mut order: Vec<usize> = (0..n).collect();
    order.rotate_left(r.below(n));
    let relaxed_coo = LevelFormat::try_new(
        (0..n)
            .map(|l| match l {
                0 => LevelType::COMPRESSED.nonunique(),
                _ => LevelType::SINGLETON.nonunique(),
            })
            .collect(),
        (0..n).collect(),
    )
    .unwrap();
    let mut levels = vec![
        (&any, relaxed_coo),
        (&canon, LevelFormat::csf(order.clone()).unwrap()),
        (&canon, LevelFormat::csf_with_dense(1, order).unwrap()),
    ];
    if n >= 2 {
        levels.push((&canon, LevelFormat::batched_csr(n - 2).unwrap()));
    }
    for (src, f) in levels {
        out.push(
            src.to_level(&f, IndexType::Int16, IndexType::Int32)
                .unwrap(),
        );
    }
    out
}

fn entries(t: &AnyTensor) -> Vec<(Vec<usize>, f64)> {
    let coo = t.to_coo::<f64, i64>().unwrap();
    let mut out = Vec::new();
    coo.for_each(|c, v| out.push((c.to_vec(), v))).unwrap();
    out
}

#[test]
fn writes_land_on_the_one_stored_entry_of_every_sparse_format() {
    let mut r = Rng(0x5eed_cafe);
    let (mut written, mut refused) = (0, 0);
    for _ in 0..400 {
        let coo = random_coo(&mut r);
        for t in variants(&coo, &mut r) {
            let before = entries(&t);
            let values: Vec<f64> = stored_values(&t)
                .as_typed::<f64>()
                .unwrap()
                .iter()
                .copied()
                .collect();
            // storage order: the values buffer is the entries' values
            assert_eq!(
                values,
                before.iter().map(|e| e.1).collect::<Vec<_>>(),
                "{}",
                t.format()
            );
            for _ in 0..4 {
                let c: Vec<usize> = t.shape().iter().map(|&d| r.below(d)).collect();
                let hits: Vec<usize> = (0..before.len()).filter(|&k| before[k].0 == c).collect();
                let got = stored_position(&t, &c);
                let w = set_values(&t, &[(c.clone(), -7.5)]);
                if let [k] = hits[..] {
                    assert_eq!(got.unwrap(), k, "{} {c:?}", t.format());
                    let w = w.unwrap();
                    assert_eq!((w.format(), w.nnz()), (t.format(), t.nnz()));
                    let mut want = before.clone();
                    want[k].1 = -7.5;
                    assert_eq!(entries(&w), want, "{} {c:?}", t.format());
                    written += 1;
                } else {
                    let count = hits.len();
                    assert!(
                        matches!(&got, Err(Error::NotStored { count: n, coordinates }) if *n == count && *coordinates == c),
                        "{} {c:?}: {got:?}",
                        t.format()
                    );
                    assert!(matches!(w, Err(Error::NotStored { .. })));
                    refused += 1;
                }
            }
            // outside the shape, or the wrong value type
            let outside: Vec<usize> = t.shape().to_vec();
            assert!(matches!(
                stored_position(&t, &outside),
                Err(Error::Shape { .. })
            ));
            assert!(matches!(
                set_values::<f32>(&t, &[]),
                Err(Error::Type { .. })
            ));
        }
    }
    assert!(
        written > 1000 && refused > 1000,
        "{written} written, {refused} refused"
    );
}

#[test]
fn every_element_of_a_dense_tensor_is_written_in_place() {
    let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0)]).unwrap();
    let dense: AnyTensor = coo.to_dense().unwrap().into();
    let w = set_values(
        &dense,
        &[(vec![0, 0], 1.0), (vec![1, 2], 2.0), (vec![0, 0], 3.0)],
    )
    .unwrap();
    // the later write wins
    let got: Vec<f64> = stored_values(&w).as_typed::<f64>().unwrap().to_vec();
    assert_eq!(got, [3.0, 0.0, 0.0, 0.0, 0.0, 2.0]);
    assert_eq!(w.format(), Format::Dense);
}

/// Through DM views (slice, rotate, take with repeats, broadcast, transpose) the
/// write lands in the storage where writing the storage at the forwarded,
/// reduced coordinates lands; every view position reading that stored value
/// shows the new value.
#[test]
fn writes_through_dm_views_go_to_the_storage() {
    let mut r = Rng(0xd00d);
    let mut checked = 0;
    for _ in 0..200 {
        let coo = random_coo(&mut r).canonicalize().unwrap();
        let n = coo.shape().len();
        let any: AnyTensor = coo.clone().into();
        for storage in [Format::Coo, Format::Dense, Format::Csf, Format::Level] {
            let map = DimMap::identity(coo.shape().to_vec()).unwrap();
            let AnyTensor::Dm(dm) = any.to_dm(map, storage, IndexType::Int32).unwrap() else {
                unreachable!()
            };
            let d = r.below(n);
            let extent = coo.shape()[d];
            let idx: Vec<usize> = (0..3).map(|_| r.below(extent)).collect();
            let mut view = dm.take(d, &idx).unwrap().rotate(d, 1).unwrap();
            if n >= 2 {
                view = view.transpose(0, n - 1).unwrap();
            }
            let b: Vec<usize> = view.shape().iter().map(|&x| x * 2).collect();
            view = view.broadcast(&b).unwrap();
            let t = AnyTensor::Dm(view.clone());
            for _ in 0..3 {
                let c: Vec<usize> = t.shape().iter().map(|&x| r.below(x)).collect();
                let base = view.views().forward(&c).unwrap();
                let mut red = vec![0; view.map().reduced_ndim()];
                view.map().reduce(&base, &mut red).unwrap();
                let direct = set_values(view.storage(), &[(red.clone(), 9.0)]);
                let through = set_values(&t, &[(c.clone(), 9.0)]);
                match (direct, through) {
                    (Ok(s), Ok(AnyTensor::Dm(w))) => {
                        assert_eq!(w.storage(), &s);
                        assert_eq!(w.views(), view.views());
                        assert_eq!(w.get::<f64>(&c).unwrap(), Some(9.0));
                        // the broadcast copy of the element shows it too
                        let copy: Vec<usize> = c
                            .iter()
                            .zip(w.shape())
                            .map(|(&x, &e)| (x + e / 2) % e)
                            .collect();
                        assert_eq!(w.get::<f64>(&copy).unwrap(), Some(9.0));
                        checked += 1;
                    }
                    (
                        Err(Error::NotStored { count: a, .. }),
                        Err(Error::NotStored {
                            count: b,
                            coordinates,
                        }),
                    ) => {
                        assert_eq!((a, coordinates), (b, c));
                    }
                    (d, w) => panic!("storage {d:?}, view {w:?}"),
                }
            }
        }
    }
    assert!(checked > 300, "{checked}");
    // a DM over a DM: the write goes down both levels
    let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0)]).unwrap();
    let inner = AnyTensor::from(coo)
        .to_dm(
            DimMap::identity(vec![2, 3]).unwrap(),
            Format::Coo,
            IndexType::Int64,
        )
        .unwrap();
    let outer = AnyDm::try_new(
        DimMap::try_new(vec![3, 2], vec![1, 0], vec![1]).unwrap(),
        inner,
        &TensorOptions::default(),
    )
    .unwrap();
    let w = set_values(&AnyTensor::Dm(outer), &[(vec![2, 1], 6.0)]).unwrap();
    assert_eq!(w.get::<f64>(&[2, 1]).unwrap(), Some(6.0));
}

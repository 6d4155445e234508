//! Dense views with an offset and signed strides (#17): random chains of
//! `reverse` and numpy-style `slice` against an independent reference (a
//! row-major array re-indexed element by element), through the element walk,
//! a conversion to COO and an IPC round trip (which sends the view's elements).

use arrow_sparse::ipc::{self, StreamReadOptions, TensorStreamWriter};
use arrow_sparse::{AnyTensor, Convert, DenseTensor};
use proptest::prelude::*;

/// The reference: a shape and its elements in row-major order.
#[derive(Clone, Debug, PartialEq)]
struct Reference {
    shape: Vec<usize>,
    data: Vec<i32>,
}

impl Reference {
    fn index_of(&self, index: &[usize]) -> usize {
        index
            .iter()
            .zip(&self.shape)
            .fold(0, |acc, (&i, &n)| acc * n + i)
    }
    fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
        let mut all = vec![vec![]];
        for &n in shape {
            all = all
                .into_iter()
                .flat_map(|p| {
                    (0..n).map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect();
        }
        all
    }
    /// Keeps, along `dim`, the indices in `kept` in that order.
    fn gather(&self, dim: usize, kept: &[usize]) -> Reference {
        let mut shape = self.shape.clone();
        shape[dim] = kept.len();
        let data = Self::indices(&shape)
            .into_iter()
            .map(|mut ix| {
                ix[dim] = kept[ix[dim]];
                self.data[self.index_of(&ix)]
            })
            .collect();
        Reference { shape, data }
    }
}

/// Python's `range(*slice(start, stop, step).indices(n))`, written out from the
/// language reference's rules (not from the crate's code).
fn python_slice(n: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> Vec<usize> {
    let n = n as isize;
    let (lo, hi) = if step < 0 { (-1, n - 1) } else { (0, n) };
    let clip = |v: isize| {
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let start = start.map_or(if step < 0 { hi } else { lo }, clip);
    let stop = stop.map_or(if step < 0 { lo } else { hi }, clip);
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i as usize);
        i += step;
    }
    out
}

#[derive(Clone, Debug)]
enum Op {
    Reverse(usize),
    Slice(usize, Option<isize>, Option<isize>, isize),
}

fn case() -> impl Strategy<Value = (Vec<usize>, Vec<Op>)> {
    prop::collection::vec(0usize..5, 1..5).prop_flat_map(|shape| {
        let nd = shape.len();
        let bound = || prop::option::of(-7isize..7);
        let op = prop_oneof![
            (0..nd).prop_map(Op::Reverse),
            (0..nd, bound(), bound(), prop_oneof![-3isize..0, 1isize..4])
                .prop_map(|(d, a, b, s)| Op::Slice(d, a, b, s)),
        ];
        (Just(shape), prop::collection::vec(op, 0..6))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
    #[test]
    fn view_chains_match_the_reference((shape, ops) in case()) {
        let size: usize = shape.iter().product();
        let data: Vec<i32> = (0..size as i32).map(|k| k * 7 - 3).collect();
        let mut reference = Reference { shape: shape.clone(), data: data.clone() };
        let mut view = DenseTensor::<i32>::try_new(shape, data.into()).unwrap();
        let buffer = view.values().inner().as_ptr();
        for op in &ops {
            match *op {
                Op::Reverse(d) => {
                    let kept: Vec<usize> = (0..reference.shape[d]).rev().collect();
                    reference = reference.gather(d, &kept);
                    view = view.reverse(d).unwrap();
                }
                Op::Slice(d, a, b, s) => {
                    reference = reference.gather(d, &python_slice(reference.shape[d], a, b, s));
                    view = view.slice(d, a, b, s).unwrap();
                }
            }
            // a view: the same buffer, never a copy
            prop_assert_eq!(view.values().inner().as_ptr(), buffer);
        }
        prop_assert_eq!(view.shape(), &reference.shape[..]);
        // element access and the walk (row-major logical order)
        let mut walked = Vec::new();
        view.for_each(|ix, v| {
            assert_eq!(view.get(ix), Some(v));
            walked.push(v);
        }).unwrap();
        prop_assert_eq!(&walked, &reference.data);
        // a conversion reads through the offset and the strides
        let coo = view.to_coo::<i64>().unwrap();
        let dense_again = coo.to_dense().unwrap();
        let mut from_coo = Vec::new();
        dense_again.for_each(|_, v| from_coo.push(v)).unwrap();
        prop_assert_eq!(&from_coo, &reference.data);
        // the wire sends the view's logical elements (negative strides compacted)
        let t: AnyTensor = view.clone().into();
        let mut stream = Vec::new();
        let mut w = TensorStreamWriter::new(&mut stream);
        w.write(&t).unwrap();
        w.finish().unwrap();
        let bytes = arrow_buffer::Buffer::from(stream);
        let (m, _) = ipc::decode(&bytes, &StreamReadOptions::default()).unwrap().unwrap();
        let AnyTensor::Dense(back) = m.tensor else { panic!("dense expected") };
        let back = back.downcast::<i32>().unwrap();
        let mut sent = Vec::new();
        back.for_each(|_, v| sent.push(v)).unwrap();
        prop_assert_eq!(back.shape(), &reference.shape[..]);
        prop_assert_eq!(&sent, &reference.data);
    }
}

#[test]
fn python_slice_agrees_with_known_values() {
    // values printed by CPython for list(range(6))[a:b:c]
    assert_eq!(python_slice(6, Some(1), Some(5), 2), [1, 3]);
    assert_eq!(python_slice(6, None, None, -2), [5, 3, 1]);
    assert_eq!(python_slice(6, Some(-2), Some(0), -1), [4, 3, 2, 1]);
    assert_eq!(python_slice(6, Some(-9), Some(9), 1), [0, 1, 2, 3, 4, 5]);
    assert_eq!(python_slice(6, Some(9), Some(-9), -1), [5, 4, 3, 2, 1, 0]);
    assert_eq!(python_slice(0, None, None, -1), Vec::<usize>::new());
}

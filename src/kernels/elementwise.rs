//! Element-wise operations on two sparse tensors of the same shape in any
//! formats (union merge for add / subtract, intersection for multiply), scaling
//! and mapping values.
//!
//! ```
//! use arrow_sparse::kernels::elementwise::{scale, map_values};
//! use arrow_sparse::{AnyTensor, CooTensor};
//! let t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![3], &[(vec![1], 1.5)])?.into();
//! assert_eq!(scale::<f32>(&t, 2.0)?.get::<f32>(&[1])?, Some(3.0));
//! let as_f64 = map_values::<f32, f64>(&t, |v| v as f64 * 10.0)?; // same structure, new values
//! assert_eq!(as_f64.get::<f64>(&[1])?, Some(15.0));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use arrow_buffer::ScalarBuffer;

use super::Numeric;
use crate::error::{Error, Result};
use crate::tensor::{
    AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyTensor, CooTensor, CoordLayout, Validation,
};
use crate::types::{Index, Value};

/// Sort and sum duplicates, following the kernels' accumulation rule: each run
/// of equal coordinates is summed in [`Numeric::Acc`] (a checked `i128` for
/// integers) and narrowed once, so only a total that does not fit the value type
/// is an [`Error::Overflow`]. The result is row-major and canonical; entries that
/// sum to zero are kept (they were stored).
/// [`canonicalize`](super::convert::canonicalize) does the same for any value
/// type, adding in the value type.
///
/// ```
/// use arrow_sparse::kernels::elementwise::sum_duplicates;
/// use arrow_sparse::{CooTensor, Error};
/// let coo = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![1, 1], 4), (vec![0, 1], 2), (vec![1, 1], -4)])?;
/// let s = sum_duplicates(&coo)?;
/// assert!(s.is_canonical());
/// assert_eq!((s.coords().as_ref(), s.values().as_ref()), (&[0i64, 1, 1, 1][..], &[2, 0][..])); // the zero stays
/// // 100 + 100 overflows int8 on the way, but the total 100 fits
/// let wide = CooTensor::<i8, i64>::from_entries(vec![1], &[(vec![0], 100), (vec![0], 100), (vec![0], -100)])?;
/// assert_eq!(sum_duplicates(&wide)?.values().as_ref(), &[100]);
/// let big = CooTensor::<i8, i64>::from_entries(vec![1], &[(vec![0], 100), (vec![0], 100)])?;
/// assert!(matches!(sum_duplicates(&big), Err(Error::Overflow { .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn sum_duplicates<V: Numeric, I: Index>(coo: &CooTensor<V, I>) -> Result<CooTensor<V, I>> {
    let (coords, sums) = canonical_sums(coo)?;
    let values = sums
        .into_iter()
        .map(|a| super::narrow::<V>(a, "sum of duplicate entries"))
        .collect::<Result<Vec<V>>>()?;
    super::convert::canonical_coo(coo, coords, values)
}

/// The coordinates of `coo` sorted row-major without duplicates, and each one's
/// sum in the accumulator (not narrowed).
pub(super) fn canonical_sums<V: Numeric, I: Index>(
    coo: &CooTensor<V, I>,
) -> Result<(Vec<I>, Vec<V::Acc>)> {
    if coo.is_canonical() && coo.layout() == CoordLayout::RowMajor {
        let sums = coo.values().iter().map(|v| v.to_acc()).collect();
        return Ok((coo.coords().to_vec(), sums));
    }
    super::convert::fold_duplicates(coo, V::to_acc, |sum, v: V| Ok(V::acc_add(sum, v.to_acc())))
}

/// The operation of [`binary`].
///
/// ```
/// use arrow_sparse::kernels::elementwise::{binary, BinaryOp};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![0], 5.0), (vec![1], 2.0)])?.into();
/// let b: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![1], 2.0), (vec![2], 1.0)])?.into();
/// let values = |op| binary::<f64>(&a, &b, op).map(|t| t.values().to_vec());
/// assert_eq!(values(BinaryOp::Add)?, vec![5.0, 4.0, 1.0]); // union
/// assert_eq!(values(BinaryOp::Subtract)?, vec![5.0, -1.0]); // 2 - 2 = 0 is dropped
/// assert_eq!(values(BinaryOp::Multiply)?, vec![4.0]); // intersection
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `a + b` over the union of the entries.
    Add,
    /// `a - b` over the union of the entries.
    Subtract,
    /// `a * b` over the intersection of the entries.
    Multiply,
}

/// `a op b` for two tensors of the same shape in any formats. Both are brought to
/// canonical COO, their duplicates summed in the accumulator as in
/// [`sum_duplicates`], and merged in one pass; the result is a canonical COO
/// tensor with int64 coordinates. Results equal to zero are dropped. Integer results are checked (see the module docs of
/// [`kernels`](super)).
///
/// ```
/// use arrow_sparse::kernels::elementwise::{binary, BinaryOp};
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
/// let a = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 0], 1), (vec![1, 1], 2)])?;
/// let b = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![1, 1], 5), (vec![0, 1], 7)])?;
/// let csr: AnyTensor = b.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
/// let sum = binary::<i32>(&a.clone().into(), &csr, BinaryOp::Add)?;
/// assert_eq!(sum.values().as_ref(), &[1, 7, 7]);
/// let prod = binary::<i32>(&a.into(), &csr, BinaryOp::Multiply)?;
/// assert_eq!(prod.values().as_ref(), &[10]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn binary<V: Numeric>(a: &AnyTensor, b: &AnyTensor, op: BinaryOp) -> Result<CooTensor<V, i64>> {
    if a.shape() != b.shape() {
        return Err(Error::shape(
            "element-wise operand",
            format!("shape {:?}", a.shape()),
            format!("{:?}", b.shape()),
        ));
    }
    let (xa, va) = canonical_sums(&a.to_coo::<V, i64>()?)?;
    let (xb, vb) = canonical_sums(&b.to_coo::<V, i64>()?)?;
    let n = a.shape().len();
    let (mut i, mut j) = (0, 0);
    let mut coords: Vec<i64> = Vec::new();
    let mut values: Vec<V> = Vec::new();
    let mut push = |c: &[i64], acc: V::Acc| -> Result<()> {
        let v = super::narrow::<V>(acc, "element-wise result")?;
        if !v.is_zero() {
            coords.extend_from_slice(c);
            values.push(v);
        }
        Ok(())
    };
    let zero = V::acc_zero();
    while i < va.len() || j < vb.len() {
        let ord = match (i < va.len(), j < vb.len()) {
            (true, true) => xa[i * n..i * n + n].cmp(&xb[j * n..j * n + n]),
            (true, false) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                if op != BinaryOp::Multiply {
                    push(&xa[i * n..i * n + n], va[i])?;
                }
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                match op {
                    BinaryOp::Add => push(&xb[j * n..j * n + n], vb[j])?,
                    BinaryOp::Subtract => push(&xb[j * n..j * n + n], V::acc_sub(zero, vb[j]))?,
                    BinaryOp::Multiply => {}
                }
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let (p, q) = (va[i], vb[j]);
                let r = match op {
                    BinaryOp::Add => V::acc_add(p, q),
                    BinaryOp::Subtract => V::acc_sub(p, q),
                    BinaryOp::Multiply => V::acc_mul(p, q),
                };
                push(&xa[i * n..i * n + n], r)?;
                i += 1;
                j += 1;
            }
        }
    }
    CooTensor::try_new_with(
        a.shape().to_vec(),
        coords.into(),
        CoordLayout::RowMajor,
        values.into(),
        true,
        Validation::Trusted,
    )?
    .with_dim_names(a.dim_names().to_vec())
}

/// The same tensor, same format and index buffers (shared, not copied), with
/// every stored value replaced by `f(value)` (a new value type is allowed).
/// GCS and DM tensors map their storage. `V` must be the tensor's value type.
///
/// ```
/// use arrow_sparse::kernels::elementwise::map_values;
/// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format, ValueType};
/// let csr: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 3), (vec![1, 0], -4)])?
///     .to_csx::<i32, i32>(CompressedAxis::Row)?
///     .into();
/// let m = map_values::<i32, f32>(&csr, |v| v as f32 * 0.5)?;
/// assert_eq!((m.format(), m.value_type()), (Format::Csr, ValueType::Float32));
/// assert_eq!((m.get::<f32>(&[0, 1])?, m.get::<f32>(&[1, 0])?), (Some(1.5), Some(-2.0)));
/// assert!(map_values::<i64, i64>(&csr, |v| v).is_err()); // the values are int32
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn map_values<V: Value, W: Value>(
    t: &AnyTensor,
    f: impl Fn(V) -> W + Sync,
) -> Result<AnyTensor> {
    let map = |vals: &crate::ValueBuffer| -> Result<crate::ValueBuffer> {
        let v = vals.as_typed::<V>().ok_or_else(|| Error::Type {
            what: "value type".into(),
            expected: V::TYPE.name().into(),
            found: vals.data_type().name().into(),
        })?;
        Ok(crate::buffer::ValueBuffer::from(ScalarBuffer::from(
            v.iter().map(|&x| f(x)).collect::<Vec<W>>(),
        )))
    };
    Ok(match t {
        AnyTensor::Dense(d) => AnyTensor::Dense(AnyDense::try_new(
            d.shape().to_vec(),
            d.strides().to_vec(),
            map(d.values())?,
            d.dim_names().to_vec(),
            Validation::Trusted,
        )?),
        AnyTensor::Coo(c) => AnyTensor::Coo(AnyCoo::try_new(
            c.shape().to_vec(),
            c.coords().clone(),
            c.layout(),
            map(c.values())?,
            c.is_canonical(),
            c.dim_names().to_vec(),
            Validation::Trusted,
        )?),
        AnyTensor::Csx(c) => AnyTensor::Csx(AnyCsx::try_new(
            c.axis(),
            c.shape().to_vec(),
            c.indptr().clone(),
            c.indices().clone(),
            map(c.values())?,
            c.dim_names().to_vec(),
            Validation::Trusted,
        )?),
        AnyTensor::Csf(c) => AnyTensor::Csf(AnyCsf::try_new(
            c.shape().to_vec(),
            c.axis_order().to_vec(),
            c.indptr().to_vec(),
            c.indices().to_vec(),
            map(c.values())?,
            c.dim_names().to_vec(),
            Validation::Trusted,
        )?),
        AnyTensor::Gcs(g) => {
            let AnyTensor::Csx(m) = map_values(&AnyTensor::Csx(g.matrix().clone()), f)? else {
                unreachable!()
            };
            AnyTensor::Gcs(crate::AnyGcs::try_new(
                g.map().clone(),
                m,
                g.dim_names().to_vec(),
            )?)
        }
        AnyTensor::Dm(d) => {
            let storage = map_values(d.storage(), f)?;
            AnyTensor::Dm(
                crate::AnyDm::try_new(d.map().clone(), storage, Vec::new())?
                    .with_views(d.views().clone(), d.dim_names().to_vec())?,
            )
        }
    })
}

/// Multiply every stored value by `alpha` (checked for integers).
///
/// ```
/// use arrow_sparse::kernels::elementwise::scale;
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<i8, i64>::from_entries(vec![2], &[(vec![0], 60)])?.into();
/// assert_eq!(scale::<i8>(&t, 2)?.get::<i8>(&[0])?, Some(120));
/// assert!(scale::<i8>(&t, 3).is_err()); // 180 does not fit int8
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn scale<V: Numeric>(t: &AnyTensor, alpha: V) -> Result<AnyTensor> {
    let overflow = std::sync::atomic::AtomicBool::new(false);
    let out = map_values::<V, V>(t, |x| {
        V::from_acc(V::acc_mul(x.to_acc(), alpha.to_acc())).unwrap_or_else(|| {
            overflow.store(true, std::sync::atomic::Ordering::Relaxed);
            V::ZERO
        })
    })?;
    if overflow.into_inner() {
        return Err(Error::overflow(
            "scale",
            format!("a value times {alpha:?}"),
            V::TYPE.name(),
        ));
    }
    Ok(out)
}

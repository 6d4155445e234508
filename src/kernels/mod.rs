//! Compute kernels that read tensors' buffers where they lie (owned, received or
//! memory-mapped): fast conversions, SpMV / SpMM, CSF tensor kernels (TTV,
//! MTTKRP), element-wise operations and reductions.
//!
//! # Accumulation rule
//!
//! Kernels accumulate in [`Numeric::Acc`]: `f64` for float64, `f32` for float32
//! and float16; for every integer type a checked `i128` that records overflow.
//! Converting the accumulator back to the value type is checked: an integer
//! result that does not fit (or an intermediate product or sum that overflowed
//! `i128`) is an [`Error::Overflow`](crate::Error::Overflow), never a silent wrap.
//!
//! # Parallelism and determinism
//!
//! Kernels that pay off run on rayon's pool (the caller can bound it with
//! `rayon::ThreadPoolBuilder`). Work is split at fixed boundaries that do not
//! depend on the number of threads, and every output element is computed by one
//! task in a fixed order, so results are bit-for-bit the same on every run and
//! every machine.
//!
//! # Allocation
//!
//! Kernels allocate their outputs (and the few working buffers some need)
//! fallibly: a size that overflows, or an allocation the allocator refuses, is
//! [`Error::Allocation`](crate::Error::Allocation), never an abort. This
//! matters because outputs are sized by the operands' declared extents (SpMV's
//! result has one element per row), which a tiny hostile file can make huge. A
//! fresh zeroed output is not written twice, so a scatter into a large, mostly
//! untouched result only touches the pages it writes. The `*_into` forms of
//! [`spmv`] write into the caller's buffers and allocate nothing for float64 /
//! float32 values.
//!
//! On Linux, output buffers of 4 MiB and more (numpy's threshold) are advised to
//! use transparent huge pages (`madvise(MADV_HUGEPAGE)`) before they are first
//! written; set the environment variable `ARROW_SPARSE_HUGE_PAGES=0` to turn that
//! off. Large dense operands that a kernel gathers from (SpMV's `x`, SpMM's `B`)
//! are read faster from huge pages too: allocate them with
//! [`crate::buffer::zeroed_vec`] and fill them in place.
//!
//! ```
//! use arrow_sparse::kernels::{reduce, spmv};
//! use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
//! let a = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 0], 2.0), (vec![1, 2], -1.0)])?;
//! let csr: AnyTensor = a.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
//! assert_eq!(spmv::spmv::<f64>(&csr, &[1.0, 2.0, 3.0])?, vec![2.0, -3.0]);
//! assert_eq!(reduce::sum_all::<f64>(&csr)?, 1.0);
//! // integer results that do not fit are errors, not wrapped values
//! let big: AnyTensor = CooTensor::<i8, i64>::from_entries(vec![2], &[(vec![0], 100), (vec![1], 100)])?.into();
//! assert!(reduce::sum_all::<i8>(&big).is_err());
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

pub mod convert;
pub mod csf;
pub mod elementwise;
mod merge;
pub mod reduce;
pub mod spmv;

use std::fmt::Debug;

use half::f16;

use crate::alloc;
use crate::types::Value;

/// Values kernels can compute with (every [`Value`] type).
///
/// ```
/// use arrow_sparse::kernels::Numeric;
/// // a dot product under the accumulation rule of the module docs
/// fn dot<V: Numeric>(a: &[V], b: &[V]) -> Option<V> {
///     V::from_acc(a.iter().zip(b).fold(V::acc_zero(), |acc, (&x, &y)| V::madd(acc, x, y)))
/// }
/// assert_eq!(dot(&[1.5f64, 2.0], &[2.0, 4.0]), Some(11.0));
/// assert_eq!(dot(&[100i8, 100, -100], &[1, 1, 1]), Some(100)); // 200 on the way: fine in i128
/// assert_eq!(dot(&[100i8, 100], &[1, 1]), None); // 200 does not fit int8
/// ```
pub trait Numeric: Value {
    /// The accumulator type (see the module docs).
    type Acc: Copy + Send + Sync + Debug + PartialEq;
    /// The accumulator's zero.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(f64::acc_zero(), 0.0);
    /// assert_eq!(u8::from_acc(u8::acc_zero()), Some(0));
    /// ```
    fn acc_zero() -> Self::Acc;
    /// The accumulator's one.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(f32::acc_one(), 1.0);
    /// assert_eq!(i16::acc_mul(i16::acc_one(), 7i16.to_acc()), 7i16.to_acc());
    /// ```
    fn acc_one() -> Self::Acc;
    /// Widen a value.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(2.5f64.to_acc(), 2.5);
    /// assert_eq!(i64::acc_to_f64(i64::MIN.to_acc()), -9.223372036854775808e18);
    /// ```
    fn to_acc(self) -> Self::Acc;
    /// `a + b`.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(f64::acc_add(0.5, 0.25), 0.75);
    /// // the integer accumulator is wider than the value type: narrowing decides
    /// let s = i8::acc_add(i8::MAX.to_acc(), 1i8.to_acc());
    /// assert_eq!(i8::from_acc(s), None);
    /// assert_eq!(i8::from_acc(i8::acc_add(s, (-2i8).to_acc())), Some(126));
    /// ```
    fn acc_add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a - b`.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(f32::acc_sub(1.0, 0.25), 0.75);
    /// // 0 - 1 is -1: not a uint32
    /// assert_eq!(u32::from_acc(u32::acc_sub(u32::acc_zero(), 1u32.to_acc())), None);
    /// assert_eq!(u32::from_acc(u32::acc_sub(9u32.to_acc(), 1u32.to_acc())), Some(8));
    /// ```
    fn acc_sub(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a * b`.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(f64::acc_mul(1.5, -2.0), -3.0);
    /// let m = i64::MAX.to_acc();
    /// assert_eq!(i64::acc_to_f64(i64::acc_mul(m, 2i64.to_acc())), 2.0 * i64::MAX as f64);
    /// // past i128 the accumulator is poisoned for good
    /// let p = i64::acc_mul(i64::acc_mul(m, m), m);
    /// assert!(i64::acc_to_f64(p).is_nan());
    /// assert_eq!(i64::from_acc(i64::acc_sub(p, p)), None);
    /// ```
    fn acc_mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `acc + a * b` (the SpMV inner step).
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(f32::madd(1.0, 2.0, 3.0), 7.0);
    /// assert_eq!(u8::from_acc(u8::madd(u8::acc_zero(), 15, 17)), Some(255));
    /// assert_eq!(u8::from_acc(u8::madd(u8::acc_zero(), 16, 16)), None); // 256
    /// ```
    #[inline(always)]
    fn madd(acc: Self::Acc, a: Self, b: Self) -> Self::Acc {
        Self::acc_add(acc, Self::acc_mul(a.to_acc(), b.to_acc()))
    }
    /// `a` when `keep`, else the accumulator's zero. For floats this is a bit
    /// mask, not a branch (x86 has no conditional move for floating-point
    /// registers, so a plain `if` becomes a jump), which lets a merge of two
    /// operands take whichever side comes next without mispredictions.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(f64::acc_keep(true, 2.5), 2.5);
    /// assert_eq!(f64::acc_keep(false, f64::NAN), 0.0);
    /// assert_eq!(f32::acc_keep(false, -1.5), 0.0);
    /// assert_eq!(i32::from_acc(i32::acc_keep(false, 7i32.to_acc())), Some(0));
    /// assert_eq!(i32::from_acc(i32::acc_keep(true, 7i32.to_acc())), Some(7));
    /// ```
    #[inline(always)]
    fn acc_keep(keep: bool, a: Self::Acc) -> Self::Acc {
        if keep { a } else { Self::acc_zero() }
    }
    /// Narrow back, `None` when an integer result does not fit (or overflowed).
    /// Floats always narrow (float16 rounds its float32 accumulator).
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(i16::from_acc(i16::acc_mul(100i16.to_acc(), 100i16.to_acc())), Some(10_000));
    /// assert_eq!(i16::from_acc(i16::acc_mul(200i16.to_acc(), 200i16.to_acc())), None); // 40000
    /// assert_eq!(f64::from_acc(f64::INFINITY), Some(f64::INFINITY));
    /// ```
    fn from_acc(a: Self::Acc) -> Option<Self>;
    /// The accumulator as f64 (for tolerances); NaN for an overflowed integer
    /// accumulator.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// assert_eq!(f32::acc_to_f64(0.5), 0.5);
    /// // beyond int32, still exact in f64
    /// assert_eq!(i32::acc_to_f64(i32::acc_mul(i32::MAX.to_acc(), 2i32.to_acc())), 4294967294.0);
    /// let poisoned = u64::acc_mul(u64::MAX.to_acc(), u64::MAX.to_acc()); // (2^64 - 1)^2 overflows i128
    /// assert!(u64::acc_to_f64(poisoned).is_nan());
    /// ```
    fn acc_to_f64(a: Self::Acc) -> f64;
    /// The values as accumulators when both are one type (float64, float32):
    /// kernels then accumulate straight into the output, so floats pay nothing
    /// for the accumulation rule. `None` for the other types, which accumulate in
    /// a separate buffer and narrow once.
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// let mut y = [1.0f64, 2.0];
    /// if let Some(acc) = f64::as_acc_mut(&mut y) {
    ///     acc[0] = f64::acc_add(acc[0], 0.5);
    /// }
    /// assert_eq!(y, [1.5, 2.0]);
    /// assert!(i32::as_acc_mut(&mut [1i32]).is_none()); // integers accumulate in i128
    /// ```
    fn as_acc_mut(values: &mut [Self]) -> Option<&mut [Self::Acc]>;
    /// The sum of `values` in the accumulator, blocked and unrolled: eight
    /// independent partial sums for floats (the loop vectorises; the order is
    /// fixed, so the result is too), exact integer sums in wide lanes for
    /// integers (no check per element: the lanes cannot overflow).
    ///
    /// ```
    /// use arrow_sparse::kernels::Numeric;
    /// let v: Vec<f64> = (1..=100).map(f64::from).collect();
    /// assert_eq!(f64::sum_slice(&v), 5050.0);
    /// // 2^64 - 1 three times: exact in the accumulator, too big for uint64
    /// let s = u64::sum_slice(&[u64::MAX; 3]);
    /// assert_eq!(u64::from_acc(s), None);
    /// assert_eq!(u64::acc_to_f64(s), 3.0 * u64::MAX as f64);
    /// assert_eq!(i8::from_acc(i8::sum_slice(&[100, 100, -100])), Some(100));
    /// ```
    fn sum_slice(values: &[Self]) -> Self::Acc;
}

/// Exact sum of integers whose `hi * 2^32 + lo` split has `|hi| < 2^32` and
/// `lo < 2^32`: both halves sum in 64-bit lanes over blocks that cannot overflow.
#[inline]
fn split_sum<T: Copy>(v: &[T], hi: impl Fn(T) -> i64, lo: impl Fn(T) -> u64) -> i128 {
    let mut total: i128 = 0;
    // 2^30 elements of |hi| < 2^32 and lo < 2^32 stay below 2^62 per half
    for block in v.chunks(1 << 30) {
        let (mut h, mut l) = ([0i64; 8], [0u64; 8]);
        let mut it = block.chunks_exact(8);
        for c in &mut it {
            for k in 0..8 {
                h[k] += hi(c[k]);
                l[k] += lo(c[k]);
            }
        }
        let (mut hs, mut ls) = (0i64, 0u64);
        for &x in it.remainder() {
            hs += hi(x);
            ls += lo(x);
        }
        hs += h.iter().sum::<i64>();
        ls += l.iter().sum::<u64>();
        total += ((hs as i128) << 32) + ls as i128;
    }
    total
}

/// Eight partial sums in a fixed order.
macro_rules! lane_sum {
    ($v:expr, $zero:expr, $to:expr) => {{
        let mut lanes = [$zero; 8];
        let mut it = $v.chunks_exact(8);
        for c in &mut it {
            for k in 0..8 {
                lanes[k] += ($to)(c[k]);
            }
        }
        let mut rest = $zero;
        for &x in it.remainder() {
            rest += ($to)(x);
        }
        ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5]))
            + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]))
            + rest
    }};
}

/// A checked 128-bit integer accumulator: once an operation overflows, the value
/// is poisoned and never converts back. It is the [`Numeric::Acc`] of every
/// integer value type.
///
/// ```
/// use arrow_sparse::kernels::{IntAcc, Numeric};
/// let a: IntAcc = i32::MAX.to_acc();
/// let twice: IntAcc = i32::acc_add(a, a); // beyond int32, fine in the accumulator
/// assert_eq!(i32::from_acc(i32::acc_sub(twice, a)), Some(i32::MAX));
/// let big: IntAcc = u64::MAX.to_acc();
/// let poisoned = u64::acc_mul(big, big); // 2^128 - 2^65 + 1 does not fit i128
/// assert_eq!(u64::from_acc(u64::acc_sub(poisoned, poisoned)), None);
/// assert_ne!(poisoned, u64::acc_zero());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntAcc(Option<i128>);

impl IntAcc {
    #[inline(always)]
    fn lift(self, other: IntAcc, f: impl FnOnce(i128, i128) -> Option<i128>) -> IntAcc {
        IntAcc(match (self.0, other.0) {
            (Some(a), Some(b)) => f(a, b),
            _ => None,
        })
    }
}

macro_rules! int_numeric {
    ($($t:ty),*) => {$(
        impl Numeric for $t {
            type Acc = IntAcc;
            #[inline(always)]
            fn acc_zero() -> IntAcc { IntAcc(Some(0)) }
            #[inline(always)]
            fn acc_one() -> IntAcc { IntAcc(Some(1)) }
            #[inline(always)]
            fn to_acc(self) -> IntAcc { IntAcc(Some(self as i128)) }
            #[inline(always)]
            fn acc_add(a: IntAcc, b: IntAcc) -> IntAcc { a.lift(b, i128::checked_add) }
            #[inline(always)]
            fn acc_sub(a: IntAcc, b: IntAcc) -> IntAcc { a.lift(b, i128::checked_sub) }
            #[inline(always)]
            fn acc_mul(a: IntAcc, b: IntAcc) -> IntAcc { a.lift(b, i128::checked_mul) }
            #[inline(always)]
            fn from_acc(a: IntAcc) -> Option<Self> { a.0.and_then(|v| <$t>::try_from(v).ok()) }
            fn acc_to_f64(a: IntAcc) -> f64 { a.0.map_or(f64::NAN, |v| v as f64) }
            fn as_acc_mut(_: &mut [Self]) -> Option<&mut [IntAcc]> { None }
            #[allow(clippy::unnecessary_cast)]
            fn sum_slice(values: &[Self]) -> IntAcc {
                IntAcc(Some(split_sum(
                    values,
                    |x| ((x as i128) >> 32) as i64,
                    |x| (x as i128 as u64) & 0xFFFF_FFFF,
                )))
            }
        }
    )*};
}
int_numeric!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_numeric {
    ($($t:ty => $acc:ty, $to:expr, $from:expr, $as_acc:expr);*) => {$(
        impl Numeric for $t {
            type Acc = $acc;
            #[inline(always)]
            fn acc_zero() -> $acc { 0.0 }
            #[inline(always)]
            fn acc_one() -> $acc { 1.0 }
            #[inline(always)]
            fn to_acc(self) -> $acc { ($to)(self) }
            #[inline(always)]
            fn acc_add(a: $acc, b: $acc) -> $acc { a + b }
            #[inline(always)]
            fn acc_sub(a: $acc, b: $acc) -> $acc { a - b }
            #[inline(always)]
            fn acc_mul(a: $acc, b: $acc) -> $acc { a * b }
            #[inline(always)]
            fn madd(acc: $acc, a: Self, b: Self) -> $acc { acc + ($to)(a) * ($to)(b) }
            #[inline(always)]
            fn from_acc(a: $acc) -> Option<Self> { Some(($from)(a)) }
            fn acc_to_f64(a: $acc) -> f64 { a as f64 }
            #[inline(always)]
            fn as_acc_mut(values: &mut [Self]) -> Option<&mut [$acc]> { ($as_acc)(values) }
            #[inline(always)]
            fn acc_keep(keep: bool, a: $acc) -> $acc {
                // all bits of a, or none (+0.0); the mask goes through
                // `black_box` so that the compiler cannot turn the `and` back
                // into a select (and that into a jump)
                let bits = a.to_bits();
                let mask = std::hint::black_box((bits ^ bits).wrapping_sub(keep.into()));
                <$acc>::from_bits(bits & mask)
            }
            fn sum_slice(values: &[Self]) -> $acc {
                let zero: $acc = 0.0;
                lane_sum!(values, zero, $to)
            }
        }
    )*};
}
float_numeric!(
    f64 => f64, |x: f64| x, |a: f64| a, Some;
    f32 => f32, |x: f32| x, |a: f32| a, Some;
    f16 => f32, |x: f16| x.to_f32(), f16::from_f32, |_: &mut [f16]| None
);

/// Narrow an accumulator or report which result overflowed.
pub(crate) fn narrow<V: Numeric>(a: V::Acc, what: &str) -> crate::Result<V> {
    V::from_acc(a)
        .ok_or_else(|| crate::Error::overflow(what.to_string(), format!("{a:?}"), V::TYPE.name()))
}

/// The values of a dense tensor packed row-major, in place (no copy, no
/// allocation), or `None` when its strides say otherwise.
pub(crate) fn row_major_values<V: Value>(d: &crate::DenseTensor<V>) -> Option<&[V]> {
    d.as_row_major_slice()
}

/// The one co-iteration of level tensors' kernels ([`spmv`], [`reduce::sum_axes`]):
/// a single walk down the levels, generic over their kinds
/// ([`LevelView::for_each_stored`](crate::tensor::levels::LevelView::for_each_stored)'s:
/// a dense level visits every coordinate under its parent, a compressed level its
/// parent's segment, a singleton level its parent's one coordinate), calling
/// `f(level coordinates, fresh, value)` for every stored value in storage order.
/// `fresh` is the first level whose node is new since the previous value (0 for
/// the first), so a kernel computes each node's part of a result once, however
/// the levels are typed and permuted: no per-format copy of a kernel. Level `l`
/// holds dimension `l.format().axis_order()[l]`. Fails with [`Error::Type`] when
/// the values are not `V`, and (never panics) on buffers a trusted construction
/// let through out of range.
///
/// [`Error::Type`]: crate::Error::Type
pub(crate) fn co_iterate<V: Numeric>(
    t: &crate::tensor::AnyLevel,
    f: &mut dyn FnMut(&[usize], usize, V),
) -> crate::Result<()> {
    let vals = t
        .values()
        .as_typed::<V>()
        .ok_or_else(|| crate::Error::Type {
            what: "level tensor values".into(),
            expected: V::TYPE.name().into(),
            found: t.value_type().name().into(),
        })?;
    let mut missing = None;
    t.levels()?.walk(&mut |lvl, q, fresh| match vals.get(q) {
        Some(&v) => f(lvl, fresh, v),
        None => missing = Some(q),
    })?;
    match missing {
        Some(q) => Err(crate::Error::invariant(
            "level tensor values",
            Some(q),
            "a stored element without a value (trusted input was invalid)",
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_accumulation_is_checked() {
        let big = i64::MAX;
        let acc = i64::madd(i64::acc_zero(), big, 2);
        assert!(i64::from_acc(acc).is_none());
        assert_eq!(
            i64::from_acc(i64::acc_sub(acc, i64::acc_mul(big.to_acc(), 1.to_acc()))),
            Some(big)
        );
        let poisoned = u64::madd(
            u64::madd(u64::acc_zero(), u64::MAX, u64::MAX),
            u64::MAX,
            u64::MAX,
        );
        let poisoned = u64::madd(poisoned, u64::MAX, u64::MAX);
        assert!(u64::from_acc(poisoned).is_none());
        assert_eq!(
            f16::from_acc(f16::madd(
                f16::acc_zero(),
                f16::from_f32(2.0),
                f16::from_f32(3.0)
            )),
            Some(f16::from_f32(6.0))
        );
    }
}

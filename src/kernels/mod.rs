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
pub mod reduce;
pub mod spmv;

use std::fmt::Debug;

use half::f16;

use crate::types::Value;

/// Values kernels can compute with (every [`Value`] type).
pub trait Numeric: Value {
    /// The accumulator type (see the module docs).
    type Acc: Copy + Send + Sync + Debug + PartialEq;
    /// The accumulator's zero.
    fn acc_zero() -> Self::Acc;
    /// The accumulator's one.
    fn acc_one() -> Self::Acc;
    /// Widen a value.
    fn to_acc(self) -> Self::Acc;
    /// `a + b`.
    fn acc_add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a - b`.
    fn acc_sub(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a * b`.
    fn acc_mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `acc + a * b` (the SpMV inner step).
    #[inline(always)]
    fn madd(acc: Self::Acc, a: Self, b: Self) -> Self::Acc {
        Self::acc_add(acc, Self::acc_mul(a.to_acc(), b.to_acc()))
    }
    /// Narrow back, `None` when an integer result does not fit (or overflowed).
    fn from_acc(a: Self::Acc) -> Option<Self>;
    /// The accumulator as f64 (for tolerances).
    fn acc_to_f64(a: Self::Acc) -> f64;
}

/// A checked 128-bit integer accumulator: once an operation overflows, the value
/// is poisoned and never converts back.
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
        }
    )*};
}
int_numeric!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_numeric {
    ($($t:ty => $acc:ty, $to:expr, $from:expr);*) => {$(
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
        }
    )*};
}
float_numeric!(
    f64 => f64, |x: f64| x, |a: f64| a;
    f32 => f32, |x: f32| x, |a: f32| a;
    f16 => f32, |x: f16| x.to_f32(), f16::from_f32
);

/// Narrow an accumulator or report which result overflowed.
pub(crate) fn narrow<V: Numeric>(a: V::Acc, what: &str) -> crate::Result<V> {
    V::from_acc(a)
        .ok_or_else(|| crate::Error::overflow(what.to_string(), format!("{a:?}"), V::TYPE.name()))
}

/// Work is split into chunks of this many rows / entries, independent of the
/// thread count (determinism).
pub(crate) const CHUNK: usize = 1 << 14;

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

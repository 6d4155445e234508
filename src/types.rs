//! Value and index types: the runtime enums [`ValueType`] / [`IndexType`] and the
//! sealed traits [`Value`] / [`Index`] that the typed tensors are generic over.
//!
//! ```
//! use arrow_sparse::{IndexType, ValueType};
//! let v: ValueType = "float32".parse()?;
//! assert_eq!((v.byte_width(), v.is_float(), v.name()), (4, true, "float32"));
//! let i: IndexType = "int16".parse()?;
//! assert_eq!((i.max_value(), IndexType::narrowest_signed(40_000)), (32767, IndexType::Int32));
//! assert!(IndexType::UInt64.check_writable().is_err()); // libarrow cannot read uint64 indices
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use std::fmt::{self, Debug, Write as _};

use arrow_buffer::ArrowNativeType;

use half::f16;

use crate::error::{Error, Result};

mod sealed {
    pub trait Sealed {}
}

/// The element type of a tensor's values.
///
/// ```
/// use arrow_sparse::{Value, ValueType};
/// assert_eq!(<f32 as Value>::TYPE, ValueType::Float32);
/// assert_eq!("uint16".parse::<ValueType>()?, ValueType::UInt16);
/// assert_eq!(ValueType::Float16.to_string(), "float16");
/// assert!("complex64".parse::<ValueType>().is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ValueType {
    /// `i8`
    Int8,
    /// `i16`
    Int16,
    /// `i32`
    Int32,
    /// `i64`
    Int64,
    /// `u8`
    UInt8,
    /// `u16`
    UInt16,
    /// `u32`
    UInt32,
    /// `u64`
    UInt64,
    /// IEEE half precision ([`half::f16`])
    Float16,
    /// `f32`
    Float32,
    /// `f64`
    Float64,
}

impl ValueType {
    /// Every value type, in a fixed order.
    ///
    /// ```
    /// use arrow_sparse::ValueType;
    /// assert_eq!(ValueType::ALL.len(), 11);
    /// assert_eq!(ValueType::ALL.iter().filter(|t| t.is_float()).count(), 3);
    /// ```
    pub const ALL: [ValueType; 11] = [
        ValueType::Int8,
        ValueType::Int16,
        ValueType::Int32,
        ValueType::Int64,
        ValueType::UInt8,
        ValueType::UInt16,
        ValueType::UInt32,
        ValueType::UInt64,
        ValueType::Float16,
        ValueType::Float32,
        ValueType::Float64,
    ];

    /// Size of one element in bytes.
    ///
    /// ```
    /// use arrow_sparse::ValueType;
    /// assert_eq!(ValueType::Float16.byte_width(), 2);
    /// assert_eq!(ValueType::UInt64.byte_width(), 8);
    /// ```
    pub fn byte_width(self) -> usize {
        match self {
            ValueType::Int8 | ValueType::UInt8 => 1,
            ValueType::Int16 | ValueType::UInt16 | ValueType::Float16 => 2,
            ValueType::Int32 | ValueType::UInt32 | ValueType::Float32 => 4,
            ValueType::Int64 | ValueType::UInt64 | ValueType::Float64 => 8,
        }
    }

    /// The lower-case name used by the CLI and the JSON dump (`"float32"`, `"uint8"`).
    ///
    /// ```
    /// use arrow_sparse::ValueType;
    /// assert_eq!(ValueType::UInt8.name(), "uint8");
    /// assert_eq!(ValueType::Float64.name().parse::<ValueType>()?, ValueType::Float64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ValueType::Int8 => "int8",
            ValueType::Int16 => "int16",
            ValueType::Int32 => "int32",
            ValueType::Int64 => "int64",
            ValueType::UInt8 => "uint8",
            ValueType::UInt16 => "uint16",
            ValueType::UInt32 => "uint32",
            ValueType::UInt64 => "uint64",
            ValueType::Float16 => "float16",
            ValueType::Float32 => "float32",
            ValueType::Float64 => "float64",
        }
    }

    /// Whether this is a floating point type.
    ///
    /// ```
    /// use arrow_sparse::ValueType;
    /// assert!(ValueType::Float16.is_float());
    /// assert!(!ValueType::Int64.is_float());
    /// ```
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ValueType::Float16 | ValueType::Float32 | ValueType::Float64
        )
    }

    /// The matching integer [`IndexType`], if this is an integer type.
    ///
    /// ```
    /// use arrow_sparse::{IndexType, ValueType};
    /// assert_eq!(ValueType::UInt32.as_index_type(), Some(IndexType::UInt32));
    /// assert_eq!(ValueType::Float32.as_index_type(), None);
    /// ```
    pub fn as_index_type(self) -> Option<IndexType> {
        Some(match self {
            ValueType::Int8 => IndexType::Int8,
            ValueType::Int16 => IndexType::Int16,
            ValueType::Int32 => IndexType::Int32,
            ValueType::Int64 => IndexType::Int64,
            ValueType::UInt8 => IndexType::UInt8,
            ValueType::UInt16 => IndexType::UInt16,
            ValueType::UInt32 => IndexType::UInt32,
            ValueType::UInt64 => IndexType::UInt64,
            _ => return None,
        })
    }

    /// The Arrow data type.
    ///
    /// ```
    /// use arrow_sparse::ValueType;
    /// use arrow_schema::DataType;
    /// assert_eq!(ValueType::Float16.data_type(), DataType::Float16);
    /// assert_eq!(ValueType::Int8.data_type(), DataType::Int8);
    /// ```
    pub fn data_type(self) -> arrow_schema::DataType {
        use arrow_schema::DataType as D;
        match self {
            ValueType::Int8 => D::Int8,
            ValueType::Int16 => D::Int16,
            ValueType::Int32 => D::Int32,
            ValueType::Int64 => D::Int64,
            ValueType::UInt8 => D::UInt8,
            ValueType::UInt16 => D::UInt16,
            ValueType::UInt32 => D::UInt32,
            ValueType::UInt64 => D::UInt64,
            ValueType::Float16 => D::Float16,
            ValueType::Float32 => D::Float32,
            ValueType::Float64 => D::Float64,
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ValueType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        ValueType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| Error::Parse {
                what: "value type".into(),
                detail: format!(
                    "unknown value type {s:?} (expected int8..int64, uint8..uint64, float16, float32, float64)"
                ),
            })
    }
}

/// The integer type of an index buffer (coordinates, indices or indptr).
///
/// ```
/// use arrow_sparse::{Index, IndexType};
/// assert_eq!(<u16 as Index>::TYPE, IndexType::UInt16);
/// assert_eq!("int32".parse::<IndexType>()?, IndexType::Int32);
/// assert_eq!(IndexType::Int64.to_string(), "int64");
/// assert!("float32".parse::<IndexType>().is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum IndexType {
    /// `i8`
    Int8,
    /// `i16`
    Int16,
    /// `i32`
    Int32,
    /// `i64`
    Int64,
    /// `u8`
    UInt8,
    /// `u16`
    UInt16,
    /// `u32`
    UInt32,
    /// `u64` (read only: libarrow aborts on uint64 CSX indices, so it is never written)
    UInt64,
}

impl IndexType {
    /// Every index type, in a fixed order.
    ///
    /// ```
    /// use arrow_sparse::IndexType;
    /// assert_eq!(IndexType::ALL.len(), 8);
    /// assert_eq!(IndexType::ALL.iter().filter(|t| t.is_signed()).count(), 4);
    /// ```
    pub const ALL: [IndexType; 8] = [
        IndexType::Int8,
        IndexType::Int16,
        IndexType::Int32,
        IndexType::Int64,
        IndexType::UInt8,
        IndexType::UInt16,
        IndexType::UInt32,
        IndexType::UInt64,
    ];

    /// Size of one element in bytes.
    ///
    /// ```
    /// use arrow_sparse::IndexType;
    /// assert_eq!(IndexType::Int16.byte_width(), 2);
    /// assert_eq!(IndexType::UInt32.byte_width(), 4);
    /// ```
    pub fn byte_width(self) -> usize {
        match self {
            IndexType::Int8 | IndexType::UInt8 => 1,
            IndexType::Int16 | IndexType::UInt16 => 2,
            IndexType::Int32 | IndexType::UInt32 => 4,
            IndexType::Int64 | IndexType::UInt64 => 8,
        }
    }

    /// Whether the type is signed.
    ///
    /// ```
    /// use arrow_sparse::IndexType;
    /// assert!(IndexType::Int8.is_signed());
    /// assert!(!IndexType::UInt8.is_signed());
    /// ```
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            IndexType::Int8 | IndexType::Int16 | IndexType::Int32 | IndexType::Int64
        )
    }

    /// The largest value the type holds.
    ///
    /// ```
    /// use arrow_sparse::IndexType;
    /// assert_eq!(IndexType::Int8.max_value(), 127);
    /// assert_eq!(IndexType::UInt16.max_value(), 65_535);
    /// ```
    pub fn max_value(self) -> u64 {
        match self {
            IndexType::Int8 => i8::MAX as u64,
            IndexType::Int16 => i16::MAX as u64,
            IndexType::Int32 => i32::MAX as u64,
            IndexType::Int64 => i64::MAX as u64,
            IndexType::UInt8 => u8::MAX as u64,
            IndexType::UInt16 => u16::MAX as u64,
            IndexType::UInt32 => u32::MAX as u64,
            IndexType::UInt64 => u64::MAX,
        }
    }

    /// Look up the type from Arrow's `Int { bitWidth, is_signed }`.
    ///
    /// ```
    /// use arrow_sparse::IndexType;
    /// assert_eq!(IndexType::from_bits(32, true), Some(IndexType::Int32));
    /// assert_eq!(IndexType::from_bits(16, false), Some(IndexType::UInt16));
    /// assert_eq!(IndexType::from_bits(24, true), None);
    /// ```
    pub fn from_bits(bit_width: i32, signed: bool) -> Option<IndexType> {
        Some(match (bit_width, signed) {
            (8, true) => IndexType::Int8,
            (16, true) => IndexType::Int16,
            (32, true) => IndexType::Int32,
            (64, true) => IndexType::Int64,
            (8, false) => IndexType::UInt8,
            (16, false) => IndexType::UInt16,
            (32, false) => IndexType::UInt32,
            (64, false) => IndexType::UInt64,
            _ => return None,
        })
    }

    /// The lower-case name (`"int64"`, `"uint8"`).
    ///
    /// ```
    /// use arrow_sparse::IndexType;
    /// assert_eq!(IndexType::UInt8.name(), "uint8");
    /// assert_eq!(IndexType::Int64.name(), "int64");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            IndexType::Int8 => "int8",
            IndexType::Int16 => "int16",
            IndexType::Int32 => "int32",
            IndexType::Int64 => "int64",
            IndexType::UInt8 => "uint8",
            IndexType::UInt16 => "uint16",
            IndexType::UInt32 => "uint32",
            IndexType::UInt64 => "uint64",
        }
    }

    /// Refuse types that libarrow cannot consume (uint64), with a clear error.
    ///
    /// ```
    /// use arrow_sparse::IndexType;
    /// assert!(IndexType::UInt32.check_writable().is_ok());
    /// assert!(IndexType::UInt64.check_writable().is_err());
    /// ```
    pub fn check_writable(self) -> Result<()> {
        if self == IndexType::UInt64 {
            return Err(Error::Type {
                what: "index type for writing".into(),
                expected: "int8, int16, int32, int64, uint8, uint16 or uint32 (libarrow aborts on uint64 indices)".into(),
                found: "uint64".into(),
            });
        }
        Ok(())
    }

    /// The narrowest signed type (int8..int64) that holds `max`.
    ///
    /// ```
    /// use arrow_sparse::IndexType;
    /// assert_eq!(IndexType::narrowest_signed(127), IndexType::Int8);
    /// assert_eq!(IndexType::narrowest_signed(128), IndexType::Int16);
    /// assert_eq!(IndexType::narrowest_signed(u64::MAX), IndexType::Int64);
    /// ```
    pub fn narrowest_signed(max: u64) -> IndexType {
        [IndexType::Int8, IndexType::Int16, IndexType::Int32]
            .into_iter()
            .find(|t| max <= t.max_value())
            .unwrap_or(IndexType::Int64)
    }
}

impl fmt::Display for IndexType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for IndexType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        IndexType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| Error::Parse {
                what: "index type".into(),
                detail: format!("unknown index type {s:?} (expected int8..int64 or uint8..uint64)"),
            })
    }
}

/// A tensor element type. Sealed: implemented for `i8`..`i64`, `u8`..`u64`,
/// [`half::f16`], `f32` and `f64`.
///
/// ```
/// use arrow_sparse::{Value, ValueType};
/// // generic code over every value type
/// fn total<V: Value>(values: &[V]) -> f64 {
///     values.iter().map(|v| v.to_f64()).sum()
/// }
/// assert_eq!(total(&[1u8, 2, 3]), 6.0);
/// assert_eq!(total(&[0.5f32, 0.25]), 0.75);
/// assert_eq!(<half::f16 as Value>::TYPE, ValueType::Float16);
/// ```
#[allow(private_bounds)]
pub trait Value:
    sealed::Sealed + ArrowNativeType + PartialEq + PartialOrd + Debug + Send + Sync + 'static
{
    /// The runtime tag of this type.
    ///
    /// ```
    /// use arrow_sparse::{Value, ValueType};
    /// assert_eq!(<i16 as Value>::TYPE, ValueType::Int16);
    /// ```
    const TYPE: ValueType;
    /// The zero of the type.
    ///
    /// ```
    /// use arrow_sparse::Value;
    /// assert_eq!(<f64 as Value>::ZERO, 0.0);
    /// ```
    const ZERO: Self;
    /// Whether the value is zero (`-0.0` counts as zero, NaN does not).
    ///
    /// ```
    /// use arrow_sparse::Value;
    /// assert!((-0.0f64).is_zero());
    /// assert!(!f64::NAN.is_zero());
    /// assert!(!3i32.is_zero());
    /// ```
    fn is_zero(&self) -> bool;
    /// Addition used when summing duplicates: checked for integers (`None` on
    /// overflow), IEEE for floats.
    ///
    /// ```
    /// use arrow_sparse::Value;
    /// assert_eq!(100i8.checked_sum(27), Some(127));
    /// assert_eq!(100i8.checked_sum(28), None);
    /// assert_eq!(f32::MAX.checked_sum(f32::MAX), Some(f32::INFINITY));
    /// ```
    fn checked_sum(self, rhs: Self) -> Option<Self>;
    /// Append the value as JSON: integers as integers, floats in shortest
    /// round-trip decimal (float16 as its float32 value), non-finite floats as the
    /// strings `"NaN"`, `"inf"`, `"-inf"`.
    ///
    /// ```
    /// use arrow_sparse::Value;
    /// let mut out = String::new();
    /// 0.1f32.write_json(&mut out);
    /// out.push(',');
    /// f64::NEG_INFINITY.write_json(&mut out);
    /// out.push(',');
    /// 7u64.write_json(&mut out);
    /// assert_eq!(out, r#"0.1,"-inf",7"#);
    /// ```
    fn write_json(&self, out: &mut String);
    /// The value as f64 (lossy for 64-bit integers); used for summaries.
    ///
    /// ```
    /// use arrow_sparse::Value;
    /// assert_eq!(3u8.to_f64(), 3.0);
    /// assert_eq!(Value::to_f64(half::f16::from_f32(0.5)), 0.5);
    /// ```
    fn to_f64(self) -> f64;
}

macro_rules! int_value {
    ($($t:ty => $v:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Value for $t {
            const TYPE: ValueType = ValueType::$v;
            const ZERO: Self = 0;
            #[inline]
            fn is_zero(&self) -> bool { *self == 0 }
            #[inline]
            fn checked_sum(self, rhs: Self) -> Option<Self> { self.checked_add(rhs) }
            fn write_json(&self, out: &mut String) { let _ = write!(out, "{}", self); }
            fn to_f64(self) -> f64 { self as f64 }
        }
    )*};
}
int_value!(i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
           u8 => UInt8, u16 => UInt16, u32 => UInt32, u64 => UInt64);

macro_rules! float_value {
    ($($t:ty => $v:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Value for $t {
            const TYPE: ValueType = ValueType::$v;
            const ZERO: Self = 0.0;
            #[inline]
            fn is_zero(&self) -> bool { *self == 0.0 }
            #[inline]
            fn checked_sum(self, rhs: Self) -> Option<Self> { Some(self + rhs) }
            fn write_json(&self, out: &mut String) {
                if self.is_nan() {
                    out.push_str("\"NaN\"");
                } else if self.is_infinite() {
                    out.push_str(if *self < 0.0 { "\"-inf\"" } else { "\"inf\"" });
                } else {
                    // Rust's float Debug output is the shortest decimal that round-trips.
                    let _ = write!(out, "{self:?}");
                }
            }
            fn to_f64(self) -> f64 { self as f64 }
        }
    )*};
}
float_value!(f32 => Float32, f64 => Float64);

impl sealed::Sealed for f16 {}
impl Value for f16 {
    const TYPE: ValueType = ValueType::Float16;
    const ZERO: Self = f16::ZERO;
    #[inline]
    fn is_zero(&self) -> bool {
        self.to_f32() == 0.0
    }
    #[inline]
    fn checked_sum(self, rhs: Self) -> Option<Self> {
        Some(f16::from_f32(self.to_f32() + rhs.to_f32()))
    }
    fn write_json(&self, out: &mut String) {
        self.to_f32().write_json(out)
    }
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
}

/// An integer type usable for coordinates, indices and indptr. Sealed: implemented
/// for `i8`..`i64` and `u8`..`u64`.
///
/// ```
/// use arrow_sparse::{Index, IndexType};
/// // generic code over every index type
/// fn largest<I: Index>(coords: &[I]) -> Option<usize> {
///     coords.iter().map(|c| c.index()).max().flatten()
/// }
/// assert_eq!(largest(&[3i16, 9, 4]), Some(9));
/// assert_eq!(<u8 as Index>::TYPE, IndexType::UInt8);
/// ```
pub trait Index:
    sealed::Sealed + ArrowNativeType + Ord + std::hash::Hash + Debug + Send + Sync + 'static
{
    /// The runtime tag of this type.
    ///
    /// ```
    /// use arrow_sparse::{Index, IndexType};
    /// assert_eq!(<i64 as Index>::TYPE, IndexType::Int64);
    /// ```
    const TYPE: IndexType;
    /// The value as `usize`, or `None` when negative or too large.
    ///
    /// ```
    /// use arrow_sparse::Index;
    /// assert_eq!(7i8.index(), Some(7));
    /// assert_eq!((-1i32).index(), None);
    /// ```
    fn index(self) -> Option<usize>;
    /// The value widened to i128 (for error messages).
    ///
    /// ```
    /// use arrow_sparse::Index;
    /// assert_eq!(u64::MAX.wide(), u64::MAX as i128);
    /// assert_eq!((-5i16).wide(), -5);
    /// ```
    fn wide(self) -> i128;
    /// Checked conversion from `usize`.
    ///
    /// ```
    /// use arrow_sparse::Index;
    /// assert_eq!(i8::try_from_usize(127), Some(127i8));
    /// assert_eq!(i8::try_from_usize(128), None);
    /// ```
    fn try_from_usize(v: usize) -> Option<Self>;
}

macro_rules! index_type {
    ($($t:ty => $v:ident),*) => {$(
        impl Index for $t {
            const TYPE: IndexType = IndexType::$v;
            #[inline(always)]
            fn index(self) -> Option<usize> { usize::try_from(self).ok() }
            #[inline(always)]
            fn wide(self) -> i128 { self as i128 }
            #[inline(always)]
            fn try_from_usize(v: usize) -> Option<Self> { <$t>::try_from(v).ok() }
        }
    )*};
}
index_type!(i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
            u8 => UInt8, u16 => UInt16, u32 => UInt32, u64 => UInt64);

/// Calls `$body` with the type alias `$T` bound to the Rust type of a [`ValueType`].
#[macro_export]
#[doc(hidden)]
macro_rules! with_value_type {
    ($vt:expr, $T:ident => $body:expr) => {
        match $vt {
            $crate::ValueType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::ValueType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::ValueType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::ValueType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::ValueType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::ValueType::UInt16 => {
                type $T = u16;
                $body
            }
            $crate::ValueType::UInt32 => {
                type $T = u32;
                $body
            }
            $crate::ValueType::UInt64 => {
                type $T = u64;
                $body
            }
            $crate::ValueType::Float16 => {
                type $T = half::f16;
                $body
            }
            $crate::ValueType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::ValueType::Float64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// Calls `$body` with the type alias `$T` bound to the Rust type of an [`IndexType`].
#[macro_export]
#[doc(hidden)]
macro_rules! with_index_type {
    ($it:expr, $T:ident => $body:expr) => {
        match $it {
            $crate::IndexType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::IndexType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::IndexType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::IndexType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::IndexType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::IndexType::UInt16 => {
                type $T = u16;
                $body
            }
            $crate::IndexType::UInt32 => {
                type $T = u32;
                $body
            }
            $crate::IndexType::UInt64 => {
                type $T = u64;
                $body
            }
        }
    };
}

/// A small deterministic generator for the unit tests' random cases (a 64-bit
/// linear congruential generator, Knuth's MMIX constants).
#[cfg(test)]
pub(crate) struct TestRng(pub(crate) u64);

#[cfg(test)]
impl TestRng {
    /// A number in `0..m` (0 for `m` 0).
    pub(crate) fn below(&mut self, m: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize).checked_rem(m).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_floats_are_shortest_round_trip() {
        let mut s = String::new();
        30.333334f32.write_json(&mut s);
        s.push(',');
        f16::from_f32(0.1).write_json(&mut s);
        s.push(',');
        f64::NAN.write_json(&mut s);
        s.push(',');
        (-f32::INFINITY).write_json(&mut s);
        s.push(',');
        u64::MAX.write_json(&mut s);
        assert_eq!(
            s,
            "30.333334,0.099975586,\"NaN\",\"-inf\",18446744073709551615"
        );
    }

    #[test]
    fn names_round_trip() {
        for t in ValueType::ALL {
            assert_eq!(t.name().parse::<ValueType>().unwrap(), t);
        }
        for t in IndexType::ALL {
            assert_eq!(t.name().parse::<IndexType>().unwrap(), t);
            assert_eq!(
                IndexType::from_bits(t.byte_width() as i32 * 8, t.is_signed()),
                Some(t)
            );
        }
        assert!("int128".parse::<IndexType>().is_err());
        assert!(IndexType::UInt64.check_writable().is_err());
        assert_eq!(IndexType::narrowest_signed(300), IndexType::Int16);
    }
}

//! Fallible allocation of the outputs and working buffers of conversions and
//! kernels.
//!
//! Every buffer a conversion or kernel allocates goes through these helpers, so an extent a
//! tensor declares (a `.tns` file of 16 bytes may declare 88,888,888,888 rows) can
//! never abort the process or panic with "capacity overflow": the size is checked
//! and the allocator's refusal becomes [`Error::Allocation`](crate::Error::Allocation).

use arrow_buffer::ArrowNativeType;

use crate::error::{Error, Result};

/// `n` zeros from a zeroed allocation (no write pass; see
/// [`crate::buffer::try_zeroed_vec`]).
pub(crate) fn zeroed<T: ArrowNativeType>(n: usize, what: &str) -> Result<Vec<T>> {
    crate::buffer::try_zeroed_vec(n, what)
}

/// `n` copies of `value`.
pub(crate) fn filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// `n` copies of `value` in a working buffer accessed at random positions
/// (backed by huge pages where the OS allows, see
/// [`crate::buffer::advise_huge_pages_random`]).
pub(crate) fn filled_random<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(n, what)?;
    crate::buffer::advise_huge_pages_random(&v);
    v.resize(n, value);
    Ok(v)
}

/// An empty vector with room for exactly `n` elements (advised to use huge
/// pages when large, see [`crate::buffer::advise_huge_pages`]: kernel outputs
/// are written once, right after this).
pub(crate) fn with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    reserve(&mut v, n, what)?;
    crate::buffer::advise_huge_pages(&v);
    Ok(v)
}

/// Room for `additional` more elements in `v` (exactly, no doubling).
pub(crate) fn reserve<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    v.try_reserve_exact(additional)
        .map_err(|_| Error::allocation(what, v.len().saturating_add(additional), size_of::<T>()))
}

/// Room for `additional` more elements in `v`, growing by doubling (amortized):
/// for vectors appended to in many steps, where [`reserve`] would copy the
/// whole vector at every step.
pub(crate) fn grow<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    v.try_reserve(additional)
        .map_err(|_| Error::allocation(what, v.len().saturating_add(additional), size_of::<T>()))
}

/// Push onto a vector that grows by doubling, fallibly.
#[inline]
pub(crate) fn push<T>(v: &mut Vec<T>, x: T, what: &str) -> Result<()> {
    if v.len() == v.capacity() {
        let more = v.capacity().max(8);
        v.try_reserve(more)
            .map_err(|_| Error::allocation(what, v.len().saturating_add(more), size_of::<T>()))?;
    }
    v.push(x);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_typed_errors() {
        assert!(matches!(
            filled(usize::MAX / 2, 0u64, "x"),
            Err(Error::Allocation { .. })
        ));
        assert!(matches!(
            with_capacity::<f64>(1 << 62, "x"),
            Err(Error::Allocation { .. })
        ));
        let mut v = Vec::new();
        for i in 0..100 {
            push(&mut v, i, "x").unwrap();
        }
        assert_eq!(v.len(), 100);
        assert_eq!(filled(2, 7u8, "x").unwrap(), vec![7, 7]);
    }
}

//! Typed zero-copy buffers, alignment handling and memory mapping.
//!
//! This is the only module with `unsafe` code (the memory map). Everything else in
//! the crate works on [`ScalarBuffer`]s: owned, sliced from a received message, or
//! pointing into a mapped file, all the same type.
//!
//! ```
//! use arrow_sparse::{buffer, ipc, AnyTensor, CooTensor};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("doc_buffer_module.arrow");
//! let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4], &[(vec![1], 2.0)])?.into();
//! ipc::write_tensor_stream(&path, &[t.into()], &ipc::StreamWriteOptions::default())?;
//! let map = buffer::map_file(&path)?; // the file as an Arrow Buffer
//! let reader = ipc::MmapReader::from_buffer(map.clone(), &ipc::StreamReadOptions::default())?;
//! let AnyTensor::Coo(c) = reader.get(0)?.tensor else { unreachable!() };
//! assert!(buffer::points_into(c.values().inner(), &map)); // zero-copy: values point into the file
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use std::fs::File;
use std::path::Path;

use arrow_buffer::{ArrowNativeType, Buffer, MutableBuffer, ScalarBuffer};
use half::f16;

use crate::error::{Error, Result};
use crate::types::{Index, IndexType, Value, ValueType};

/// Take `len` elements of `T` starting at `byte_offset` of `body`, without copying
/// when the bytes are aligned for `T`. Misaligned bytes are copied into a fresh
/// aligned buffer, or refused with [`Error::Misaligned`] when `require_alignment`.
pub(crate) fn typed_slice<T: ArrowNativeType>(
    body: &Buffer,
    byte_offset: usize,
    len: usize,
    what: &str,
    require_alignment: bool,
) -> Result<ScalarBuffer<T>> {
    let width = std::mem::size_of::<T>();
    let byte_len = len.checked_mul(width).ok_or_else(|| {
        Error::overflow(
            format!("size of {what}"),
            format!("{len} x {width}"),
            "usize",
        )
    })?;
    let end = byte_offset
        .checked_add(byte_len)
        .ok_or_else(|| Error::ipc(None, format!("{what}: offset overflow")))?;
    if end > body.len() {
        return Err(Error::ipc(
            None,
            format!(
                "{what}: bytes {byte_offset}..{end} lie outside the message body of {} bytes",
                body.len()
            ),
        ));
    }
    let bytes = body.slice_with_length(byte_offset, byte_len);
    if bytes.as_ptr().align_offset(std::mem::align_of::<T>()) == 0 {
        return Ok(ScalarBuffer::from(bytes));
    }
    if require_alignment {
        return Err(Error::Misaligned {
            buffer: what.to_string(),
            alignment: std::mem::align_of::<T>(),
        });
    }
    let mut copy = MutableBuffer::with_capacity(byte_len);
    copy.extend_from_slice(bytes.as_slice());
    Ok(ScalarBuffer::from(Buffer::from(copy)))
}

/// Whether a buffer's data pointer lies inside `region` (used by tests and by the
/// memory-mapped reader to report zero-copy reads).
///
/// ```
/// use arrow_buffer::Buffer;
/// use arrow_sparse::buffer::points_into;
/// let region = Buffer::from_vec((0u8..16).collect::<Vec<_>>());
/// assert!(points_into(&region.slice_with_length(4, 8), &region)); // a slice shares the bytes
/// let copy = Buffer::from_vec(region.as_slice().to_vec());
/// assert!(!points_into(&copy, &region)); // a copy does not
/// ```
pub fn points_into(buffer: &Buffer, region: &Buffer) -> bool {
    let start = region.as_ptr() as usize;
    let end = start + region.len();
    let p = buffer.as_ptr() as usize;
    p >= start && p + buffer.len() <= end
}

/// Map a whole file read-only and return it as an Arrow [`Buffer`] that keeps the
/// mapping alive for as long as any slice of it is referenced. An empty file gives
/// an empty buffer; a file that cannot be opened gives [`Error::Io`].
///
/// ```
/// use arrow_sparse::{buffer::map_file, Error};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("bytes.bin");
/// std::fs::write(&path, b"sparse")?;
/// let map = map_file(&path)?;
/// assert_eq!(map.as_slice(), b"sparse");
/// std::fs::write(dir.path().join("empty.bin"), b"")?;
/// assert!(map_file(&dir.path().join("empty.bin"))?.is_empty());
/// assert!(matches!(map_file(&dir.path().join("missing.bin")), Err(Error::Io(_))));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn map_file(path: impl AsRef<Path>) -> Result<Buffer> {
    let path = path.as_ref();
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(Buffer::from_vec(Vec::<u8>::new()));
    }
    // SAFETY: `Mmap::map` is unsafe because another process may modify or truncate
    // the file while it is mapped, which would change (or unmap) memory we hand out
    // as immutable. arrow-sparse's own writers never modify a file in place: they
    // write a temporary file and rename it over the destination, so a mapping of
    // the old file stays intact. Callers mapping files that other programs modify in
    // place take on that risk; this is documented on `MmapReader::open`.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let bytes = bytes::Bytes::from_owner(map);
    Ok(Buffer::from(bytes))
}

/// A vector of `n` zero elements taken from a zeroed allocation, as `vec![0; n]`
/// does (large ones come from fresh pages that the OS zeroes on first touch, so
/// nothing is written twice), but fallible: a size that overflows the address
/// space or an allocation the allocator refuses is [`Error::Allocation`] naming
/// `what`, never an abort. Large vectors are advised to use huge pages
/// ([`advise_huge_pages`]) before anything touches them.
pub(crate) fn try_zeroed_vec<T: ArrowNativeType>(n: usize, what: &str) -> Result<Vec<T>> {
    let fail = || Error::allocation(what, n, std::mem::size_of::<T>());
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| fail())?;
    // SAFETY: `layout` has a non-zero size (n > 0 and T is not zero-sized), as
    // `alloc_zeroed` requires.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(fail());
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `[T; n]`,
    // which is the layout a `Vec<T>` of capacity `n` owns and frees. Every
    // `ArrowNativeType` (the primitive integers and floats, f16, and Arrow's
    // interval / i256 structs of integers) is valid with all bytes zero, so all `n`
    // elements are initialised; length and capacity are `n`.
    let v = unsafe { Vec::from_raw_parts(ptr, n, n) };
    advise_huge_pages(&v);
    Ok(v)
}

/// A vector of `n` zeros for a large dense operand (the `x` of SpMV, the `B` of
/// SpMM, a TTV vector) or any buffer you fill and hand to kernels many times,
/// allocated as numpy allocates its arrays: from fresh pages the OS zeroes on
/// first touch, and, from 4 MiB up on Linux, advised to use transparent huge
/// pages (`madvise(MADV_HUGEPAGE)`; `ARROW_SPARSE_HUGE_PAGES=0` turns it off).
///
/// A kernel reads such an operand at the positions the matrix's indices name,
/// which for millions of columns are scattered over the whole vector: on 4 KiB
/// pages nearly every read also misses the TLB (a 10^6-element `f64` vector
/// spans about 1 950 pages of 4 KiB, and 4 or 5 of 2 MiB). Fill the vector in place (it keeps
/// its pages); a `Vec` collected from an iterator gets whatever pages the
/// allocator had. Contents and results never depend on the page size.
///
/// Fallible like every allocation of the crate: a size past the address space,
/// or one the allocator refuses, is [`Error::Allocation`], never an abort.
///
/// ```
/// use arrow_sparse::{buffer, kernels::spmv::spmv_csx, CompressedAxis, CsxMatrix};
/// let a = CsxMatrix::<f64, i32>::try_new(vec![1, 3], CompressedAxis::Row, vec![0, 2].into(), vec![0, 2].into(), vec![2.0, 3.0].into())?;
/// let mut x = buffer::zeroed_vec::<f64>(3)?;
/// x.iter_mut().enumerate().for_each(|(i, v)| *v = i as f64);
/// assert_eq!(spmv_csx(&a, &x)?, [6.0]);
/// assert!(buffer::zeroed_vec::<f64>(usize::MAX).is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn zeroed_vec<T: ArrowNativeType>(n: usize) -> Result<Vec<T>> {
    try_zeroed_vec(n, "zeroed vector")
}

/// Allocations of at least this many bytes ask for transparent huge pages
/// (numpy's threshold for its arrays, so that an output of ours and an array
/// numpy made for the same data live in the same kind of pages).
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;
/// The size of a transparent huge page on x86-64 and most aarch64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// Whether kernels ask for huge pages: yes, unless the environment variable
/// `ARROW_SPARSE_HUGE_PAGES` is `0` (read once).
fn huge_pages_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os("ARROW_SPARSE_HUGE_PAGES").is_none_or(|v| v != "0"))
}

/// Ask the OS to back the not yet touched pages of a large fresh output vector
/// with transparent huge pages (Linux `madvise(MADV_HUGEPAGE)` on the 2 MiB
/// aligned part of its capacity). With the common THP mode `madvise`, first
/// touching 128 MB then takes about half as long (one fault per 2 MiB instead of
/// per 4 KiB), which is a visible part of a conversion or SpMM that writes its
/// output once. Only advice: contents never change, errors are ignored, other
/// systems and vectors under 4 MiB are left alone. `ARROW_SPARSE_HUGE_PAGES=0`
/// turns it off.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    advise_huge_pages_over(v, HUGE_PAGE_MIN_BYTES);
}

/// Ask the CPU to start loading `s[from..]` into its caches, `bytes` of it
/// (rounded up to whole 64-byte lines, clipped to the slice): a hint for a run
/// that a loop will read soon but that the hardware prefetcher cannot foresee
/// (one of many interleaved runs). No effect off x86-64 or for an empty range.
#[inline(always)]
pub(crate) fn prefetch_run<T>(s: &[T], from: usize, bytes: usize) {
    let step = (64 / size_of::<T>().max(1)).max(1);
    let end = s
        .len()
        .min(from.saturating_add(bytes / size_of::<T>().max(1)));
    let mut i = from;
    while i < end {
        prefetch_line(&s[i]);
        i += step;
    }
}

/// Ask the CPU to start loading the cache line of `s[i]`: a hint for a gather
/// or scatter whose positions come from an index buffer, issued some entries
/// ahead of the access. `i` is not checked against `s` (see [`prefetch_addr`]):
/// a bounds check per entry cost SpMV more than the prefetch itself when the
/// target sat in the last-level cache.
#[inline(always)]
pub(crate) fn prefetch_at<T>(s: &[T], i: usize) {
    prefetch_addr::<{ HINT_L1 }, T>(s, i);
}

/// [`prefetch_at`] into the level-2 cache only (`PREFETCHT1`), for a gather
/// or scatter of single elements whose target is far larger than the level-2
/// cache. The line then waits in the level-2 cache, where the access finds it
/// in a few cycles, and does not take one of the level-1 cache's few
/// outstanding-miss slots nor push out the lines the loop streams through.
/// Measured on SpMV CSR with 10^7 entries and an 8 MB `x` (2-core EPYC, one
/// thread, 128 entries ahead): 19.7-20.4 ms against 23.4-23.6 ms with the
/// level-1 hint. Rows of several elements (SpMM) and COO's gathers ran slower
/// with it, and keep [`prefetch_at`] and [`prefetch_run`]. `i` is not checked
/// against `s` ([`prefetch_addr`]).
#[inline(always)]
pub(crate) fn prefetch_at_l2<T>(s: &[T], i: usize) {
    prefetch_addr::<{ HINT_L2 }, T>(s, i);
}

/// Prefetch (hint `H`) the line of the address `i` elements past the start of
/// `s`, in bounds or not. A prefetch of an address outside `s` (a bad index of
/// a tensor built without validation, or the end of the data) loads a line
/// the program never reads, or nothing; it cannot fault. The check cost SpMV
/// CSR with an 8 MB operand held in the last-level cache 1.9-2.9 ms of the
/// 4.4-5.7 ms its prefetches took (10^7 entries, one thread, 2-core Xeon with
/// 260 MiB of L3; 36.5-39.4 ms without any prefetch).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_addr<const H: i32, T>(s: &[T], i: usize) {
    let p = s.as_ptr().wrapping_add(i);
    // SAFETY: PREFETCHT0 / T1 are hints: they never fault (an address that is
    // not mapped is dropped), read no value into the program and write
    // nothing. `p` comes from wrapping arithmetic and is never dereferenced.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<H>(p.cast());
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch_addr<const H: i32, T>(_s: &[T], _i: usize) {}

/// The line of `x` into the level-1 cache (`PREFETCHT0`).
#[inline(always)]
fn prefetch_line<T>(x: &T) {
    prefetch_hint::<{ HINT_L1 }, T>(x);
}

#[cfg(target_arch = "x86_64")]
const HINT_L1: i32 = std::arch::x86_64::_MM_HINT_T0;
#[cfg(target_arch = "x86_64")]
const HINT_L2: i32 = std::arch::x86_64::_MM_HINT_T1;
#[cfg(not(target_arch = "x86_64"))]
const HINT_L1: i32 = 0;
#[cfg(not(target_arch = "x86_64"))]
const HINT_L2: i32 = 0;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_hint<const H: i32, T>(x: &T) {
    // SAFETY: PREFETCHT0 / T1 are hints: they never fault, read no value into
    // the program and write nothing; the address is that of a live reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<H>((x as *const T).cast());
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch_hint<const H: i32, T>(_x: &T) {}

/// [`advise_huge_pages`] for a working buffer read and written at random
/// positions (an accumulator): there every access may miss the TLB, so huge
/// pages pay from the first whole 2 MiB page on.
pub(crate) fn advise_huge_pages_random<T>(v: &Vec<T>) {
    advise_huge_pages_over(v, 2 * HUGE_PAGE);
}

fn advise_huge_pages_over<T>(v: &Vec<T>, min_bytes: usize) {
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes < min_bytes || !huge_pages_enabled() {
        return;
    }
    let start = (v.as_ptr() as usize).next_multiple_of(HUGE_PAGE);
    let end = (v.as_ptr() as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        advise(start, end - start);
    }
}

#[cfg(target_os = "linux")]
fn advise(start: usize, len: usize) {
    // SAFETY: `start..start + len` lies inside the capacity of a live `Vec` that the
    // caller owns (page-aligned, since 2 MiB aligned). MADV_HUGEPAGE only changes
    // which page size backs the range, never its contents or mapping, so no
    // reference into the vector is invalidated. The result is ignored: advice may
    // be refused (THP disabled, old kernel) without harm.
    unsafe {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: usize, _len: usize) {}

// The doc examples inside the macro are shared by both expansions: type names are
// spliced in with `concat!` / `stringify!`, so they only use variants (Int8 ... Int64,
// UInt8 ... UInt64) that both the value and the index enums have.
macro_rules! buffer_enum {
    ($(#[$m:meta])* $name:ident, $slice:ident, $tag:ident, $elem:ident, { $($v:ident => $t:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq)]
        #[allow(missing_docs)]
        pub enum $name { $($v(ScalarBuffer<$t>)),* }

        /// A borrowed, typed view of the elements of a buffer.
        ///
        /// ```
        #[doc = concat!(" use arrow_sparse::{", stringify!($name), ", ", stringify!($slice), "};")]
        #[doc = concat!(" let b = ", stringify!($name), "::Int32(vec![4, 5, 6].into());")]
        #[doc = concat!(" assert!(matches!(b.as_slice(), ", stringify!($slice), "::Int32([4, 5, 6])));")]
        #[doc = concat!(" let s = ", stringify!($slice), "::UInt8(&[1, 2]);")]
        /// assert_eq!(s.len(), 2);
        /// ```
        #[derive(Clone, Copy, Debug)]
        #[allow(missing_docs)]
        pub enum $slice<'a> { $($v(&'a [$t])),* }

        impl $name {
            /// The element type.
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::{", stringify!($name), ", ", stringify!($tag), "};")]
            #[doc = concat!(" let b = ", stringify!($name), "::Int16(vec![1, 2].into());")]
            #[doc = concat!(" assert_eq!(b.data_type(), ", stringify!($tag), "::Int16);")]
            /// ```
            pub fn data_type(&self) -> $tag {
                match self { $($name::$v(_) => $tag::$v),* }
            }
            /// Number of elements.
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::", stringify!($name), ";")]
            #[doc = concat!(" let b = ", stringify!($name), "::Int64(vec![7, 8, 9].into());")]
            /// assert_eq!(b.len(), 3);
            /// assert_eq!(b.inner().len(), 24); // bytes, not elements
            /// ```
            pub fn len(&self) -> usize {
                match self { $($name::$v(b) => b.len()),* }
            }
            /// Whether the buffer has no elements.
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::", stringify!($name), ";")]
            #[doc = concat!(" assert!(", stringify!($name), "::UInt32(Vec::<u32>::new().into()).is_empty());")]
            #[doc = concat!(" assert!(!", stringify!($name), "::UInt32(vec![0].into()).is_empty());")]
            /// ```
            pub fn is_empty(&self) -> bool { self.len() == 0 }
            /// The underlying untyped bytes (zero-copy).
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::", stringify!($name), ";")]
            #[doc = concat!(" let b = ", stringify!($name), "::Int16(vec![1, -2].into());")]
            /// assert_eq!(b.inner().as_slice(), &[1, 0, 0xfe, 0xff]); // little-endian
            /// ```
            pub fn inner(&self) -> &Buffer {
                match self { $($name::$v(b) => b.inner()),* }
            }
            /// A borrowed typed view.
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::{", stringify!($name), ", ", stringify!($slice), "};")]
            #[doc = concat!(" let b = ", stringify!($name), "::UInt8(vec![3, 1, 2].into());")]
            #[doc = concat!(" let ", stringify!($slice), "::UInt8(s) = b.as_slice() else { unreachable!() };")]
            /// assert_eq!(s, &[3, 1, 2]);
            /// assert_eq!(s.as_ptr(), b.inner().as_ptr()); // no copy
            /// ```
            pub fn as_slice(&self) -> $slice<'_> {
                match self { $($name::$v(b) => $slice::$v(b.as_ref())),* }
            }
            /// Wrap a typed buffer (zero-copy) in the variant of its element type.
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::{", stringify!($name), ", ", stringify!($tag), "};")]
            #[doc = concat!(" let b = ", stringify!($name), "::from_typed(arrow_buffer::ScalarBuffer::from(vec![3i16, 4]));")]
            #[doc = concat!(" assert_eq!(b.data_type(), ", stringify!($tag), "::Int16);")]
            #[doc = concat!(" assert_eq!(b, ", stringify!($name), "::from(arrow_buffer::ScalarBuffer::from(vec![3i16, 4]))); // the same as `From`")]
            /// ```
            pub fn from_typed<T: $elem>(b: ScalarBuffer<T>) -> Self {
                // every type of the sealed trait is one of the variants, with its tag
                match <T as $elem>::TYPE {
                    $($tag::$v => $name::$v(ScalarBuffer::<$t>::from(b.into_inner()))),*
                }
            }
            /// The typed buffer inside, if its element type is `T` (zero-copy).
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::", stringify!($name), ";")]
            #[doc = concat!(" let b = ", stringify!($name), "::UInt8(vec![1, 2].into());")]
            /// assert_eq!(b.as_typed::<u8>().map(|s| s.as_ref()), Some(&[1u8, 2][..]));
            /// assert!(b.as_typed::<i8>().is_none());
            /// ```
            pub fn as_typed<T: $elem>(&self) -> Option<&ScalarBuffer<T>> {
                match self { $($name::$v(b) => (b as &dyn std::any::Any).downcast_ref::<ScalarBuffer<T>>()),* }
            }
            /// Elements `offset..offset + len`, zero-copy, or `None` outside the buffer.
            #[allow(dead_code)]
            pub(crate) fn slice(&self, offset: usize, len: usize) -> Option<Self> {
                if offset.checked_add(len)? > self.len() {
                    return None;
                }
                Some(match self { $($name::$v(b) => $name::$v(b.slice(offset, len))),* })
            }
            /// Reinterpret `len` elements of `body` at `byte_offset` as `ty`, zero-copy
            /// when aligned (see [`typed_slice`]).
            pub(crate) fn from_body(
                ty: $tag, body: &Buffer, byte_offset: usize, len: usize, what: &str,
                require_alignment: bool,
            ) -> Result<Self> {
                Ok(match ty {
                    $($tag::$v => $name::$v(typed_slice::<$t>(body, byte_offset, len, what, require_alignment)?)),*
                })
            }
        }

        impl<T: $elem> From<ScalarBuffer<T>> for $name {
            fn from(b: ScalarBuffer<T>) -> Self {
                $name::from_typed(b)
            }
        }

        $(
            impl<'a> From<&'a [$t]> for $slice<'a> {
                fn from(s: &'a [$t]) -> Self {
                    $slice::$v(s)
                }
            }
        )*

        impl<'a> $slice<'a> {
            /// Number of elements.
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::", stringify!($slice), ";")]
            #[doc = concat!(" assert_eq!(", stringify!($slice), "::Int32(&[10, 20, 30]).len(), 3);")]
            /// ```
            pub fn len(&self) -> usize {
                match self { $($slice::$v(s) => s.len()),* }
            }
            /// Whether there are no elements.
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::", stringify!($slice), ";")]
            #[doc = concat!(" assert!(", stringify!($slice), "::Int8(&[]).is_empty());")]
            #[doc = concat!(" assert!(!", stringify!($slice), "::Int8(&[0]).is_empty());")]
            /// ```
            pub fn is_empty(&self) -> bool { self.len() == 0 }
        }
    };
}

buffer_enum!(
    /// A value buffer of any [`ValueType`].
    ///
    /// ```
    /// use arrow_sparse::{ValueBuffer, ValueType};
    /// let b = ValueBuffer::Float64(vec![1.5, -2.0].into());
    /// assert_eq!((b.data_type(), b.len()), (ValueType::Float64, 2));
    /// assert_ne!(b, ValueBuffer::Float32(vec![1.5, -2.0].into())); // the type is part of the value
    /// ```
    ValueBuffer, ValueSlice, ValueType, Value, {
    Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
    UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
    Float16 => f16, Float32 => f32, Float64 => f64,
});

buffer_enum!(
    /// An index buffer (coordinates, indices or indptr) of any [`IndexType`].
    ///
    /// ```
    /// use arrow_sparse::{IndexBuffer, IndexType};
    /// let indptr = IndexBuffer::Int32(vec![0, 2, 3].into());
    /// assert_eq!((indptr.data_type(), indptr.len()), (IndexType::Int32, 3));
    /// assert_eq!(indptr.get_usize(1), Some(2));
    /// ```
    IndexBuffer, IndexSlice, IndexType, Index, {
    Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
    UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
});

/// Calls `$body` with `$s` bound to the typed slice inside an [`IndexSlice`].
macro_rules! with_index_slice {
    ($slice:expr, $s:ident => $body:expr) => {
        match $slice {
            $crate::buffer::IndexSlice::Int8($s) => $body,
            $crate::buffer::IndexSlice::Int16($s) => $body,
            $crate::buffer::IndexSlice::Int32($s) => $body,
            $crate::buffer::IndexSlice::Int64($s) => $body,
            $crate::buffer::IndexSlice::UInt8($s) => $body,
            $crate::buffer::IndexSlice::UInt16($s) => $body,
            $crate::buffer::IndexSlice::UInt32($s) => $body,
            $crate::buffer::IndexSlice::UInt64($s) => $body,
        }
    };
}
pub(crate) use with_index_slice;

impl IndexBuffer {
    /// Element `i` as `usize` (`None` if negative or `i` out of range).
    ///
    /// ```
    /// use arrow_sparse::IndexBuffer;
    /// let b = IndexBuffer::Int16(vec![7, -1].into());
    /// assert_eq!(b.get_usize(0), Some(7));
    /// assert_eq!(b.get_usize(1), None); // negative
    /// assert_eq!(b.get_usize(2), None); // out of range
    /// ```
    pub fn get_usize(&self, i: usize) -> Option<usize> {
        use crate::types::Index;
        with_index_slice!(self.as_slice(), s => s.get(i).and_then(|x| x.index()))
    }

    /// Elements `offset`, `offset + stride`, ... (`len` of them, fewer at the
    /// buffer's end), copied into a buffer of the same type.
    pub(crate) fn gather_strided(&self, offset: usize, stride: usize, len: usize) -> IndexBuffer {
        with_index_slice!(self.as_slice(), s => {
            let v: Vec<_> = s.iter().skip(offset).step_by(stride.max(1)).take(len).copied().collect();
            IndexBuffer::from(ScalarBuffer::from(v))
        })
    }

    /// Convert every element to `ty`, failing with [`Error::Overflow`] (naming
    /// `what`) if one does not fit. Casting to the same type is a zero-copy clone.
    ///
    /// ```
    /// use arrow_sparse::{Error, IndexBuffer, IndexType};
    /// let b = IndexBuffer::Int64(vec![1, 300].into());
    /// assert_eq!(b.cast(IndexType::UInt16, "indices")?, IndexBuffer::UInt16(vec![1, 300].into()));
    /// let err = b.cast(IndexType::Int8, "indices").unwrap_err();
    /// assert!(matches!(err, Error::Overflow { value, target, .. } if value == "300" && target == "int8"));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn cast(&self, ty: IndexType, what: &str) -> Result<IndexBuffer> {
        if ty == self.data_type() {
            return Ok(self.clone());
        }
        crate::with_index_type!(ty, J => {
            let out: Vec<J> = with_index_slice!(self.as_slice(), s => cast_slice::<_, J>(s, what)?);
            Ok(IndexBuffer::from(ScalarBuffer::<J>::from(out)))
        })
    }
}

/// Convert a slice of one index type into a `Vec` of another, checked.
pub(crate) fn cast_slice<I: crate::types::Index, J: crate::types::Index>(
    s: &[I],
    what: &str,
) -> Result<Vec<J>> {
    s.iter()
        .map(|&x| {
            x.index().and_then(J::try_from_usize).ok_or_else(|| {
                Error::overflow(what.to_string(), x.wide().to_string(), J::TYPE.name())
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_vectors_are_zero_and_refusals_are_errors() {
        for n in [0usize, 1, 1000, (HUGE_PAGE_MIN_BYTES / 8) + 3] {
            let v = try_zeroed_vec::<f64>(n, "test").unwrap();
            assert_eq!((v.len(), v.capacity()), (n, n));
            assert!(v.iter().all(|&x| x == 0.0));
        }
        let h = try_zeroed_vec::<f16>(5, "test").unwrap();
        assert!(h.iter().all(|x| x.to_f32() == 0.0));
        // past the address space, and more than any allocator hands out
        for n in [
            usize::MAX,
            usize::MAX / 8,
            1usize << 62,
            88_888_888_888 * 4096,
        ] {
            match try_zeroed_vec::<u64>(n, "huge") {
                Err(Error::Allocation {
                    what,
                    elements,
                    element_bytes: 8,
                }) => assert_eq!((what.as_str(), elements), ("huge", n)),
                other => panic!("{n}: {other:?}"),
            }
        }
    }

    #[test]
    fn huge_page_advice_keeps_contents_and_skips_small_vectors() {
        // small, empty and large vectors, touched before and after the advice
        for n in [0usize, 1, 1000, (HUGE_PAGE_MIN_BYTES / 8) + 12_345] {
            let mut v: Vec<u64> = (0..n as u64).collect();
            advise_huge_pages(&v);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
            v.iter_mut().for_each(|x| *x = x.wrapping_mul(3));
            assert_eq!(v.last().copied(), n.checked_sub(1).map(|x| x as u64 * 3));
        }
        let zeros = vec![0.0f64; 3 << 20];
        advise_huge_pages(&zeros);
        assert!(zeros.iter().all(|&x| x == 0.0));
    }

    /// The kernel records the advice as the `hg` flag of the advised mapping.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_vectors_are_advised_to_use_huge_pages() {
        let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
        if !thp.exists() || !huge_pages_enabled() {
            return; // a kernel without THP, or turned off by the environment
        }
        let v = vec![0u64; 4 * HUGE_PAGE_MIN_BYTES / 8];
        advise_huge_pages(&v);
        assert_advised(v.as_ptr() as usize);
        // an operand of 5 MiB (numpy's threshold is 4 MiB), zeroed and advised
        let x = zeroed_vec::<f64>((5 << 20) / 8).unwrap();
        assert!(x.iter().all(|&v| v == 0.0));
        assert_advised(x.as_ptr() as usize);
    }

    /// The first whole 2 MiB page from `at` on lies in a mapping with the `hg`
    /// (MADV_HUGEPAGE) flag.
    #[cfg(target_os = "linux")]
    fn assert_advised(at: usize) {
        let probe = at.next_multiple_of(HUGE_PAGE) + HUGE_PAGE / 2;
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        let mut flags = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&probe);
            } else if inside && let Some(f) = line.strip_prefix("VmFlags:") {
                flags = Some(f.split_whitespace().map(str::to_string).collect::<Vec<_>>());
            }
        }
        let flags = flags.expect("the vector's mapping in /proc/self/smaps");
        assert!(flags.iter().any(|f| f == "hg"), "{flags:?}");
    }

    #[test]
    fn misaligned_slices_are_copied_or_refused() {
        let body = Buffer::from_vec((0u8..64).collect::<Vec<_>>());
        let aligned: ScalarBuffer<u32> = typed_slice(&body, 8, 4, "x", true).unwrap();
        assert!(points_into(aligned.inner(), &body));
        let copied: ScalarBuffer<u32> = typed_slice(&body, 1, 4, "x", false).unwrap();
        assert!(!points_into(copied.inner(), &body));
        assert_eq!(copied[0], u32::from_le_bytes([1, 2, 3, 4]));
        assert!(matches!(
            typed_slice::<u32>(&body, 1, 4, "x", true),
            Err(Error::Misaligned { .. })
        ));
        assert!(typed_slice::<u64>(&body, 8, 8, "x", false).is_err());
        assert!(typed_slice::<u64>(&body, usize::MAX - 3, 1, "x", false).is_err());
    }

    #[test]
    fn cast_checks_range() {
        let b = IndexBuffer::Int64(ScalarBuffer::from(vec![1i64, 300]));
        assert!(b.cast(IndexType::Int8, "x").is_err());
        assert_eq!(b.cast(IndexType::Int16, "x").unwrap().len(), 2);
        let neg = IndexBuffer::Int32(ScalarBuffer::from(vec![-1i32]));
        assert!(neg.cast(IndexType::UInt32, "x").is_err());
    }
}

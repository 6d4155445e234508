//! The harness shared by arrow-sparse's fuzz targets (`fuzz_targets/*.rs`).
//!
//! * [`CappedAlloc`], the global allocator of every target: it counts live bytes
//!   and refuses (returns null) any single allocation above [`MAX_ONE`] and any
//!   allocation that would take the live bytes of the current phase above the
//!   phase's cap. A fallible allocation (`try_reserve`) then becomes the crate's
//!   typed error; an infallible one aborts (`memory allocation of N bytes
//!   failed`), which libFuzzer reports as a crash with the input saved.
//! * [`read_phase`]: runs a reader with the cap of `format/SPEC.md` section 11
//!   (the default [`ReadLimit`], 16 x the input, at least 64 MiB) doubled, plus
//!   [`SLACK`]. Any refusal during a read is a finding (the reader asked for
//!   memory beyond its documented bound), even when it became a typed error.
//! * [`exercise`]: what every target does with what decodes: every conversion
//!   (to every format, several index types, GCS and DM with chosen maps), kernels
//!   (`sum_all`, `sum_axes`, `spmv`), and an IPC round trip that must give back the
//!   same tensor (byte-identical re-encoding).
//!
//! A panic anywhere is a finding: libfuzzer-sys turns it into an abort with the
//! input saved under `fuzz/artifacts/<target>/`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use arrow_buffer::Buffer;
use arrow_sparse::dims::DimMap;
use arrow_sparse::ipc::{self, StreamReadOptions, StreamWriteOptions, TensorMessage};
use arrow_sparse::kernels::{Numeric, reduce, spmv};
use arrow_sparse::limit::ReadLimit;
use arrow_sparse::tensor::level::LevelFormat;
use arrow_sparse::{AnyTensor, CompressedAxis, Format, IndexType, ValueType};

/// No single allocation above this is ever granted (256 MiB: four times the
/// reader's 64 MiB floor, enough for any conversion of a tensor a small input
/// can legitimately describe, far below the machine).
pub const MAX_ONE: usize = 256 << 20;
/// Live bytes a conversion / kernel phase may hold (1 GiB).
pub const COMPUTE_CAP: usize = 1 << 30;
/// Bytes a read may hold on top of twice its [`ReadLimit`] budget (the reader's
/// fixed costs: Parquet metadata, buffered I/O, zip central directories).
pub const SLACK: usize = 16 << 20;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static BASE: AtomicUsize = AtomicUsize::new(0);
static CAP: AtomicUsize = AtomicUsize::new(COMPUTE_CAP);
static REFUSED: AtomicUsize = AtomicUsize::new(0);
static REFUSED_SIZE: AtomicUsize = AtomicUsize::new(0);

/// The allocation-capping global allocator (see the crate docs).
pub struct CappedAlloc;

impl CappedAlloc {
    #[inline]
    fn admit(grow: usize) -> bool {
        let live = LIVE.load(Relaxed);
        let used = live.saturating_sub(BASE.load(Relaxed));
        if grow > MAX_ONE || used.saturating_add(grow) > CAP.load(Relaxed) {
            REFUSED.fetch_add(1, Relaxed);
            REFUSED_SIZE.store(grow, Relaxed);
            return false;
        }
        true
    }
}

// SAFETY: every call is forwarded to the system allocator with the caller's own
// layout and pointer; refusing returns null, which GlobalAlloc allows.
unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Self::admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as our caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Self::admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as our caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && (new_size > MAX_ONE || !Self::admit(new_size - old)) {
            REFUSED_SIZE.store(new_size, Relaxed);
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as our caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= old {
                LIVE.fetch_add(new_size - old, Relaxed);
            } else {
                LIVE.fetch_sub(old - new_size, Relaxed);
            }
        }
        p
    }
}

/// The cap of a read of `input_len` bytes: twice the default [`ReadLimit`]
/// budget (16 x the input, at least 64 MiB) plus [`SLACK`].
pub fn read_cap(input_len: usize) -> usize {
    let budget = ReadLimit::DEFAULT.budget(input_len as u64);
    usize::try_from(budget.saturating_mul(2))
        .unwrap_or(usize::MAX)
        .saturating_add(SLACK)
}

/// Run a reader of an input of `input_len` bytes under [`read_cap`]. Panics (a
/// finding) if the reader asked for more, even if it then failed cleanly.
pub fn read_phase<T>(input_len: usize, f: impl FnOnce() -> T) -> T {
    BASE.store(LIVE.load(Relaxed), Relaxed);
    CAP.store(read_cap(input_len), Relaxed);
    REFUSED.store(0, Relaxed);
    let out = f();
    let refused = REFUSED.swap(0, Relaxed);
    CAP.store(COMPUTE_CAP, Relaxed);
    if refused > 0 {
        panic!(
            "a reader of {input_len} bytes asked for memory beyond its cap of {} bytes \
             ({refused} refusals, last {} bytes): the read limit was not checked first",
            read_cap(input_len),
            REFUSED_SIZE.load(Relaxed)
        );
    }
    out
}

/// A scratch file for the readers that take a path, removed when dropped (so a
/// run leaves no file behind, also when started by hand rather than through
/// `run-all.sh`): `arrow-sparse-fuzz-<pid>-<name>` in `$ARROW_SPARSE_FUZZ_TMP`,
/// else in the system's temporary folder. Only an input that crashes the
/// process leaves its file (libFuzzer saves the input itself too).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The scratch file `name` (unique per process, see [`Scratch`]), not created.
pub fn scratch_file(name: &str) -> Scratch {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        std::env::var_os("ARROW_SPARSE_FUZZ_TMP")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir)
    });
    Scratch(dir.join(format!("arrow-sparse-fuzz-{}-{name}", std::process::id())))
}

/// Write `data` to the scratch file `name` and return it.
pub fn write_scratch(name: &str, data: &[u8]) -> Scratch {
    let p = scratch_file(name);
    std::fs::write(&p, data).expect("write scratch file");
    p
}

/// The IPC encoding of a tensor with its metadata (the canonical bytes two equal
/// tensors share, NaN payloads included).
fn encoding(t: &AnyTensor, md: &[(String, String)]) -> Vec<u8> {
    if !writable(t) {
        // uint64 indices are read-only by design (format/SPEC.md: libarrow aborts on
        // them): compare such tensors through the same cast to int64 indices
        return match t.convert(t.format(), IndexType::Int64, None) {
            Ok(c) if writable(&c) => encoding(&c, md),
            _ => format!("{t:?} {md:?}").into_bytes(),
        };
    }
    match ipc::encode(t, md, &StreamWriteOptions::default()) {
        Ok(e) => e.to_vec(),
        Err(e) => panic!(
            "a tensor that decoded does not re-encode: {e} ({:?}, {:?}, shape {:?})",
            t.format(),
            t.value_type(),
            t.shape()
        ),
    }
}

/// Whether the writers accept the tensor's index types (uint64 is read-only).
fn writable(t: &AnyTensor) -> bool {
    t.index_type().is_none_or(|i| i.check_writable().is_ok())
        && t.indptr_type().is_none_or(|i| i.check_writable().is_ok())
}

/// Assert that `b` is the same tensor as `a`: the same IPC encoding (format,
/// types, shape, layout, flags, buffers bit for bit).
pub fn assert_same(what: &str, a: &AnyTensor, b: &AnyTensor) {
    if encoding(a, &[]) != encoding(b, &[]) {
        panic!("{what}: the tensor read back differs\n  first: {a:?}\n  again: {b:?}");
    }
}

/// Encode the message as IPC, decode it, and assert the same tensor and metadata
/// come back.
pub fn ipc_round_trip(m: &TensorMessage) {
    if !writable(&m.tensor) {
        // read-only uint64 indices: the writer must refuse them with a typed error
        match ipc::encode(
            &m.tensor,
            &m.custom_metadata,
            &StreamWriteOptions::default(),
        ) {
            Err(arrow_sparse::Error::Type { .. }) => return,
            Err(e) => panic!("uint64 indices refused with an unexpected error: {e}"),
            Ok(_) => panic!("uint64 indices were written (libarrow aborts on them)"),
        }
    }
    let bytes = Buffer::from(encoding(&m.tensor, &m.custom_metadata));
    let (back, used) = match ipc::decode(&bytes, &StreamReadOptions::default()) {
        Ok(Some(x)) => x,
        Ok(None) => panic!("the re-encoded message decodes as end of stream"),
        Err(e) => panic!("the re-encoded message does not decode: {e}"),
    };
    assert_eq!(used, bytes.len(), "re-encoded message length");
    assert_same("IPC round trip", &m.tensor, &back.tensor);
    assert_eq!(
        m.custom_metadata, back.custom_metadata,
        "IPC round trip metadata"
    );
}

fn elements(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// Outputs of at most this many bytes are always computed.
const CHEAP: usize = 8 << 20;

/// Whether to compute an output of `bytes` bytes: cheap ones, and those no
/// allocator here grants (which must be a typed error, not an abort). Between
/// the two the work is legitimate, proportional to a declared extent, and would
/// only make the input slow (a 19-byte `.tns` can declare 10^7 rows).
fn worth(bytes: Option<usize>) -> bool {
    match bytes {
        None => true,
        Some(b) => b <= CHEAP || b > 2 * MAX_ONE,
    }
}

/// Whether to densify (see [`worth`]).
fn try_dense(t: &AnyTensor) -> bool {
    worth(elements(t.shape()).and_then(|n| n.checked_mul(t.value_type().byte_width())))
}

/// Whether a tensor of this shape is cheap to build in a format whose buffers
/// grow with an extent (a CSR / CSC indptr): every extent, as an int64 indptr, is
/// [`worth`] it. The archive target reads a shape that is not cheap once rather
/// than once per range and dimension: each partial read of a CSR archive builds
/// the whole indptr of the declared rows, which the read budget allows (a
/// 940-byte archive declares 26,843,544 rows, a 54 MB int16 indptr within the
/// 64 MiB floor) but which took 2.8-4.8 s of CPU per input in the smoke build
/// when repeated for ten partial reads (`fuzz/FINDINGS.md`, finding J).
pub fn cheap_extents(shape: &[usize]) -> bool {
    shape
        .iter()
        .all(|&d| worth(d.checked_add(1).and_then(|n| n.checked_mul(8))))
}

/// Whether to convert to GCS or DM (CSR storage of the dimensions reduced to 2-D
/// by [`best_mapping`](arrow_sparse::tensor::gcs::best_mapping)): the reduced
/// extents must be cheap ([`cheap_extents`]). The tensor's own extents do not
/// tell: a 60-byte `.tns` of one entry in 15 dimensions, one of them 111,111,111
/// long (refused by the allocator, so cheap to try), reduces to a matrix whose
/// rows are a product of the others, and each GCS / DM conversion and kernel
/// walked that indptr (1.7 s of CPU per input in the smoke build).
fn try_reduced(t: &AnyTensor) -> bool {
    match arrow_sparse::tensor::gcs::best_mapping(t.shape(), t.nnz(), CompressedAxis::Row) {
        Ok((map, _)) => cheap_extents(map.reduced_shape()),
        Err(_) => true,
    }
}

/// Whether to run conversions and kernels whose outputs grow with an extent
/// (indptr arrays, SpMV results): every extent, as an int64 indptr, must be
/// [`worth`] it. Checking only the largest extent let a 61-byte `.tns` declaring
/// 4.5 * 10^12 x 11.8 * 10^6 through (the rows are refused by the allocator, cheap;
/// the CSC / GCS conversions still built 94 MB indptr arrays for the columns, 2.7 s
/// of CPU in the smoke build: `fuzz/FINDINGS.md`, finding I).
fn try_extents(t: &AnyTensor) -> bool {
    cheap_extents(t.shape())
}

/// Install, once, the panic hook of `arrow_sparse::error::install_panic_hook` in
/// front of libFuzzer's (which aborts on every panic, even a caught one): panics
/// that the crate's guard catches inside a dependency (turned into typed errors,
/// `src/guard.rs`) no longer abort; every other panic still does. Each distinct
/// panic location is printed once (`arrow-sparse-fuzz: panic at ...`), guarded or
/// not, so that a campaign's log lists the dependency panics it met
/// (`fuzz/FINDINGS.md`).
pub fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        arrow_sparse::error::install_panic_hook();
        let inner = std::panic::take_hook();
        let seen = std::sync::Mutex::new(std::collections::HashSet::<String>::new());
        std::panic::set_hook(Box::new(move |info| {
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            if seen
                .lock()
                .map(|mut s| s.insert(at.clone()))
                .unwrap_or(false)
            {
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                eprintln!("arrow-sparse-fuzz: panic at {at}: {msg}");
            }
            inner(info)
        }));
    });
}

/// Tensors with more entries than this (stored entries; elements for a dense
/// tensor) get the short plan of [`exercise`].
///
/// A tiny compressed input can legitimately decode to a large tensor: the
/// documented read budget is at least 64 MiB whatever the input's size
/// (`format/SPEC.md` section 11), and a 2 KB Parquet table of delta-encoded
/// coordinates and dictionary-encoded values holds a COO tensor of 400,000
/// entries (`fuzz/FINDINGS.md`, the `column_parquet` timeout). The full plan runs
/// about thirty whole-tensor conversions and kernels, half of whose time goes to
/// libFuzzer's comparison tracing: 13 s for that input (smoke build, load 13), a
/// timeout. What the full plan checks does not depend on the entry count, and
/// the short plan still converts large tensors to every format.
pub const FULL_PLAN_ENTRIES: usize = 1 << 15;

/// A tensor (or a column's tensors together) with more entries than this is not
/// written back in its file kind: writing a Parquet table or archive of a
/// million entries (the parquet crate's dictionary encoder) takes seconds under
/// the fuzzer's instrumentation, and a tiny compressed input can decode to that
/// many (see [`FULL_PLAN_ENTRIES`]). The IPC round trip of [`exercise`] still
/// runs on every tensor.
pub const WRITE_BACK_ENTRIES: usize = 1 << 17;

/// The entries of a tensor that [`FULL_PLAN_ENTRIES`] and [`WRITE_BACK_ENTRIES`]
/// count: stored entries, or elements for a dense tensor.
pub fn entries(t: &AnyTensor) -> usize {
    if t.format() == Format::Dense {
        elements(t.shape()).unwrap_or(usize::MAX)
    } else {
        t.nnz()
    }
}

/// The index types [`exercise`] converts a tensor to: all four for a tensor of at
/// most [`FULL_PLAN_ENTRIES`] entries, int64 only above (the short plan, which
/// also skips the kernels on each conversion and the GCS / DM views).
pub fn plan_index_types(t: &AnyTensor) -> &'static [IndexType] {
    const ALL: [IndexType; 4] = [
        IndexType::Int64,
        IndexType::Int32,
        IndexType::UInt16,
        IndexType::Int8,
    ];
    if entries(t) <= FULL_PLAN_ENTRIES {
        &ALL
    } else {
        &ALL[..1]
    }
}

/// Every conversion and some kernels on a tensor that decoded, then the IPC round
/// trip. Panics (a finding) on a broken invariant; typed errors are fine. Large
/// tensors get a short plan (see [`FULL_PLAN_ENTRIES`]).
pub fn exercise(m: &TensorMessage) {
    ipc_round_trip(m);
    let t = &m.tensor;
    let ndim = t.shape().len();
    let index_types = plan_index_types(t);
    let full = index_types.len() > 1;
    let formats = [
        Format::Coo,
        Format::Csr,
        Format::Csc,
        Format::Csf,
        Format::Gcs,
        Format::Dm,
        Format::Level,
        Format::Dense,
    ];
    let extents = try_extents(t);
    let reduced = try_reduced(t);
    for &it in index_types {
        for to in formats {
            if to == Format::Dense && (it != IndexType::Int64 || !try_dense(t)) {
                continue;
            }
            if !extents && to != Format::Coo && to != Format::Dense {
                continue;
            }
            if !reduced && (to == Format::Gcs || to == Format::Dm) {
                continue;
            }
            let Ok(c) = t.convert(to, it, None) else {
                continue;
            };
            assert_eq!(c.format(), to, "convert to {to:?}");
            assert_eq!(c.shape(), t.shape(), "convert to {to:?}: shape");
            assert_eq!(
                c.value_type(),
                t.value_type(),
                "convert to {to:?}: value type"
            );
            if to != Format::Dense && t.format() != Format::Dense {
                assert_eq!(
                    c.nnz(),
                    t.nnz(),
                    "convert {:?} to {to:?}: stored entries",
                    t.format()
                );
            }
            if to == Format::Level && full {
                // the level tensor on the wire (its levels in extension metadata)
                ipc_round_trip(&c.clone().into());
            }
            if it == IndexType::Int64 {
                // and back to the source's format: the round trip of conversions
                if let Ok(back) = c.convert(Format::Coo, IndexType::Int64, None) {
                    let _ = back.nnz();
                }
                if full {
                    kernels(&c);
                }
            }
        }
    }
    if extents && full {
        levels(t);
    }
    if ndim >= 2 && extents && full {
        // a GCS with the reversed dimensions split after the first, and a DM
        // transposing view over CSR storage
        let order: Vec<usize> = (0..ndim).rev().collect();
        if let Ok(map) = DimMap::try_new(t.shape().to_vec(), order.clone(), vec![1]) {
            let _ = t.to_gcs(map.clone(), CompressedAxis::Column, IndexType::Int32);
            if let Ok(dm) = t.to_dm(map, Format::Csr, IndexType::Int64) {
                kernels(&dm);
                ipc_round_trip(&dm.into());
            }
        }
    }
    kernels(t);
}

/// The tensor built in level formats other than its own (`to_level`, which sums
/// duplicates): sorted COO (singleton levels), CSF with its first level dense
/// in the reversed dimension order, and DCSC for a matrix, with narrow
/// coordinates and positions where they fit. Each result keeps the shape and
/// value type, reads back as COO, runs the kernels and makes the IPC round
/// trip. Typed errors are fine.
pub fn levels(t: &AnyTensor) {
    let ndim = t.shape().len();
    let reversed: Vec<usize> = (0..ndim).rev().collect();
    let mut formats = Vec::new();
    formats.extend(LevelFormat::coo(ndim));
    formats.extend(LevelFormat::csf_with_dense(1, reversed));
    if ndim == 2 {
        formats.push(LevelFormat::dcsc());
    }
    let types = [
        (IndexType::Int64, IndexType::Int64),
        (IndexType::Int16, IndexType::Int32),
    ];
    for (f, (it, pt)) in formats.iter().zip(types.iter().cycle()) {
        let Ok(l) = t.to_level(f, *it, *pt) else {
            continue;
        };
        assert_eq!(l.format(), Format::Level, "to_level {f}");
        assert_eq!(l.shape(), t.shape(), "to_level {f}: shape");
        assert_eq!(l.value_type(), t.value_type(), "to_level {f}: value type");
        if let Ok(back) = l.convert(Format::Coo, IndexType::Int64, None) {
            assert_eq!(
                back.nnz(),
                l.nnz(),
                "to_level {f}, back to COO: stored entries"
            );
        }
        kernels(&l);
        ipc_round_trip(&l.into());
    }
}

/// `sum_all`, `sum_axes` over the first dimension, and `spmv` with a vector of ones
/// as long as the last extent (when that is small). Typed errors are fine.
pub fn kernels(t: &AnyTensor) {
    match t.value_type() {
        ValueType::Int8 => kernels_typed::<i8>(t),
        ValueType::Int16 => kernels_typed::<i16>(t),
        ValueType::Int32 => kernels_typed::<i32>(t),
        ValueType::Int64 => kernels_typed::<i64>(t),
        ValueType::UInt8 => kernels_typed::<u8>(t),
        ValueType::UInt16 => kernels_typed::<u16>(t),
        ValueType::UInt32 => kernels_typed::<u32>(t),
        ValueType::UInt64 => kernels_typed::<u64>(t),
        ValueType::Float16 => kernels_typed::<half::f16>(t),
        ValueType::Float32 => kernels_typed::<f32>(t),
        ValueType::Float64 => kernels_typed::<f64>(t),
        other => panic!("a value type the harness does not know: {other:?}"),
    }
}

fn kernels_typed<V: Numeric>(t: &AnyTensor) {
    let _ = reduce::sum_all::<V>(t);
    if !try_extents(t) {
        return;
    }
    if !t.shape().is_empty() {
        let _ = reduce::sum_axes::<V>(t, &[0]);
    }
    if let Some(&cols) = t.shape().last()
        && cols <= 1 << 16
    {
        let one = V::from_acc(V::acc_one()).expect("one");
        let x = vec![one; cols];
        let _ = spmv::spmv::<V>(t, &x);
    }
}

/// The body of the file-kind targets (`.mtx`, `.tns`, `.npz`): write the input to a
/// scratch file named `input.EXT`, read it with `read` under the read-phase cap,
/// [`exercise`] what reads, write it back with `write` and read that again: the
/// same tensor must come back (up to [`WRITE_BACK_ENTRIES`] entries).
pub fn file_round_trip(
    ext: &str,
    data: &[u8],
    read: impl Fn(&std::path::Path) -> arrow_sparse::Result<TensorMessage>,
    write: impl Fn(&std::path::Path, &TensorMessage) -> arrow_sparse::Result<()>,
) {
    init();
    let path = write_scratch(&format!("input.{ext}"), data);
    let Ok(m) = read_phase(data.len(), || read(&path)) else {
        return;
    };
    exercise(&m);
    if entries(&m.tensor) > WRITE_BACK_ENTRIES {
        return;
    }
    let again = scratch_file(&format!("again.{ext}"));
    if let Err(e) = write(&again, &m) {
        panic!("a .{ext} that read does not write back: {e}");
    }
    match read(&again) {
        Ok(back) => assert_same(&format!(".{ext} round trip"), &m.tensor, &back.tensor),
        Err(e) => panic!(
            "a .{ext} written from what read does not read: {e}\n{}",
            String::from_utf8_lossy(&std::fs::read(&again).unwrap_or_default())
        ),
    }
}

/// The body of the table targets (`column_ipc`, `column_parquet`): write the input
/// to a scratch file named `input.EXT` (`arrow`: an IPC file or stream, told apart
/// by its first bytes; `parquet`: a Parquet table), read its batches and its sparse
/// tensor column with `column::files` under the read-phase cap, [`exercise`] the
/// first tensors, build a column of all of them again, write it as a table of the
/// same kind and read that back: the same tensors must come back (up to
/// [`WRITE_BACK_ENTRIES`] entries in all).
pub fn column_round_trip(ext: &str, data: &[u8]) {
    use arrow_sparse::column::{SparseTensorArray, files};
    init();
    let path = write_scratch(&format!("input.{ext}"), data);
    let _ = read_phase(data.len(), || files::read_batches(&path));
    let Ok(Some(tensors)) = read_phase(data.len(), || files::read_tensors(&path)) else {
        return;
    };
    for t in tensors.iter().take(4) {
        exercise(&t.clone().into());
    }
    let total = tensors
        .iter()
        .fold(0usize, |n, t| n.saturating_add(entries(t)));
    if tensors.is_empty() || total > WRITE_BACK_ENTRIES {
        return;
    }
    let column = match SparseTensorArray::from_tensors(tensors.iter()) {
        Ok(c) => c,
        Err(e) => panic!("the tensors of one column do not make a column again: {e}"),
    };
    let schema = Arc::new(arrow_schema::Schema::new(vec![column.field("t")]));
    let batch = arrow_array::RecordBatch::try_new(schema.clone(), vec![column.into_array()])
        .expect("one column");
    let again = scratch_file(&format!("again.{ext}"));
    if let Err(e) = files::write_batches(&again, schema, &[batch]) {
        panic!("a column that read does not write back as .{ext}: {e}");
    }
    match files::read_tensors(&again) {
        Ok(Some(back)) => {
            assert_eq!(back.len(), tensors.len(), "column round trip: tensor count");
            for (a, b) in tensors.iter().zip(&back) {
                assert_same(&format!(".{ext} column round trip"), a, b);
            }
        }
        other => panic!("a column written from what read does not read as .{ext}: {other:?}"),
    }
}

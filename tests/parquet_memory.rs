//! Archiving a tensor straight from a memory-mapped IPC file keeps memory near one
//! row group: a CSR matrix 8 row groups long is written while a thread samples the
//! process's anonymous memory (RssAnon in /proc/self/status, what the heap and the
//! Parquet writer's buffers use; the mapped file's pages are file-backed, clean and
//! reclaimable, and are reported separately through VmHWM).
//!
//! The archiving runs in a child process (this test binary re-run on the ignored
//! test `rss_child`), so that the parent's allocations (the generated matrix) do not
//! blur the measurement. `benches/parquet.rs` does the same at 10^7 entries in
//! release mode (see benches/RESULTS-parquet.md).
//!
//! Reading: a tiny archive can declare a CSR / CSC (or GCS reduced) matrix with
//! any number of slices, whose indptr the reader must build; a counting allocator
//! shows that the largest allocation stays within `ArchiveReadOptions::max_indptr_len`.
#![cfg(feature = "parquet")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use arrow_sparse::archive::{
    self, ArchiveLayout, ArchiveReadOptions, ArchiveWriteOptions, TensorSpec,
};
use arrow_sparse::ipc::{self, MmapReader};
use arrow_sparse::{AnyTensor, CompressedAxis, CooTensor, CsxMatrix, Error, IndexType, ValueType};

/// The largest single allocation requested while this thread is armed.
static LARGEST: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

fn note(size: usize) {
    if ARMED.try_with(Cell::get).unwrap_or(false) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

struct Counting;

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Run `f` and return its result with the largest single allocation it requested.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.store(0, Ordering::Relaxed);
    ARMED.with(|a| a.set(true));
    let r = f();
    ARMED.with(|a| a.set(false));
    (r, LARGEST.load(Ordering::Relaxed))
}

const NNZ: usize = 2_000_000;
const ROW_GROUP: usize = NNZ / 8;

/// A field of /proc/self/status in KiB.
fn status_kib(key: &str) -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn matrix() -> AnyTensor {
    let rows = NNZ / 10;
    let indptr: Vec<i64> = (0..=rows as i64).map(|r| r * 10).collect();
    let indices: Vec<i64> = (0..NNZ as i64).map(|k| (k * 7919) % 100_000).collect();
    let mut indices = indices;
    for w in indptr.windows(2) {
        indices[w[0] as usize..w[1] as usize].sort_unstable();
    }
    let values: Vec<f64> = (0..NNZ).map(|k| (k % 1013) as f64 * 0.25).collect();
    CsxMatrix::<f64, i64, i64>::try_new(
        vec![rows, 100_000],
        CompressedAxis::Row,
        indptr.into(),
        indices.into(),
        values.into(),
    )
    .unwrap()
    .into()
}

#[test]
fn archiving_from_a_memory_map_keeps_memory_near_one_row_group() {
    // The measured part runs in a child process: this test, run again by itself.
    if let Some(src) = std::env::var_os("ARROW_SPARSE_RSS_CHILD") {
        return rss_child(Path::new(&src));
    }
    if status_kib("RssAnon:").is_none() {
        eprintln!("SKIPPED: no /proc/self/status RssAnon");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.arrow");
    ipc::write_tensor_stream(&src, [&matrix().into()], &Default::default()).unwrap();
    let file_kib = std::fs::metadata(&src).unwrap().len() as usize / 1024;
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "archiving_from_a_memory_map_keeps_memory_near_one_row_group",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ARROW_SPARSE_RSS_CHILD", &src)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.find("RSS ").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("no report from the child: {stdout}"));
    let field = |k: &str| -> usize {
        line.split_whitespace()
            .find_map(|f| f.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {k} in {line}"))
    };
    let (anon, hwm) = (field("anon_growth_kib="), field("hwm_kib="));
    eprintln!(
        "{NNZ} entries, IPC file {file_kib} KiB, row groups of {ROW_GROUP} rows: \
         anonymous memory grew by at most {anon} KiB while archiving, VmHWM {hwm} KiB \
         (mapped file pages included)"
    );
    // A copy of the tensor would take as much as the file; the writer holds about
    // one row group (an eighth of the rows) of encoded data plus fixed buffers.
    assert!(
        anon < file_kib / 3,
        "anonymous memory grew by {anon} KiB for a {file_kib} KiB tensor"
    );
}

/// The measured part, run in a child process by the test above.
fn rss_child(src: &Path) {
    let dst = src.with_extension("parquet");
    let base = status_kib("RssAnon:").unwrap_or(0);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(Ordering::Relaxed) {
                peak = peak.max(status_kib("RssAnon:").unwrap_or(0));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            peak
        })
    };
    let reader = MmapReader::open(src).unwrap();
    let msg = reader.get(0).unwrap();
    let options = ArchiveWriteOptions::default().with_row_group_size(ROW_GROUP);
    let summary = archive::write_archive(&dst, &msg, &options).unwrap();
    stop.store(true, Ordering::Relaxed);
    let peak = sampler
        .join()
        .unwrap()
        .max(status_kib("RssAnon:").unwrap_or(0));
    assert_eq!(summary.row_groups, NNZ.div_ceil(ROW_GROUP));
    println!(
        "\nRSS anon_growth_kib={} hwm_kib={} rows={}",
        peak.saturating_sub(base),
        status_kib("VmHWM:").unwrap_or(0),
        summary.rows
    );
}

/// A two-entry archive declaring `shape` with `layout` (the writer only checks the
/// rows, so this is also what a lying footer looks like to the reader).
fn tiny_archive(
    dir: &Path,
    name: &str,
    shape: Vec<usize>,
    layout: ArchiveLayout,
) -> std::path::PathBuf {
    let path = dir.join(name);
    let spec =
        TensorSpec::coo(shape.clone(), ValueType::Float64, IndexType::Int64).with_layout(layout);
    let mut w =
        archive::ArchiveWriter::create(&path, spec, &ArchiveWriteOptions::default()).unwrap();
    let n = shape.len();
    let entries = [(vec![0; n], 1.0), (vec![1; n], 2.0)];
    w.write_chunk(
        &CooTensor::<f64, i64>::from_entries(shape, &entries)
            .unwrap()
            .into(),
    )
    .unwrap();
    w.finish().unwrap();
    path
}

#[test]
fn a_tiny_archive_cannot_make_the_reader_allocate_more_than_the_indptr_limit() {
    let dir = tempfile::tempdir().unwrap();
    let csr = ArchiveLayout::Csx {
        axis: CompressedAxis::Row,
        index_type: IndexType::Int32,
        indptr_type: IndexType::Int64,
    };
    let gcs = ArchiveLayout::Gcs {
        dimensions: vec![0, 1, 2],
        partitioning: vec![2],
        axis: CompressedAxis::Row,
        index_type: IndexType::Int32,
        indptr_type: IndexType::Int64,
        matrix_dim_names: vec![],
    };
    let read =
        |p: &Path, o: &ArchiveReadOptions| largest_allocation(|| archive::read_archive(p, o));
    let default = ArchiveReadOptions::default();
    // 2^40 rows (an 8 TiB indptr): refused before anything is allocated
    for (name, shape, layout) in [
        ("huge.parquet", vec![1 << 40, 5], csr.clone()),
        ("huge_gcs.parquet", vec![1 << 20, 1 << 20, 5], gcs.clone()),
    ] {
        let p = tiny_archive(dir.path(), name, shape, layout);
        assert!(std::fs::metadata(&p).unwrap().len() < 4096);
        let (r, largest) = read(&p, &default);
        assert!(matches!(r, Err(Error::Overflow { .. })), "{name}: {r:?}");
        assert!(largest < 1 << 20, "{name}: allocated {largest} bytes");
    }
    // 2^22 slices: within the default limit, the indptr (32 MiB of int64) is the
    // largest allocation; a lower limit refuses it
    let slices = 1usize << 22;
    for (name, shape, layout) in [
        ("big.parquet", vec![slices, 5], csr),
        ("big_gcs.parquet", vec![1 << 11, 1 << 11, 5], gcs),
    ] {
        let p = tiny_archive(dir.path(), name, shape, layout);
        let (r, largest) = read(&p, &default);
        assert_eq!(r.unwrap().tensor.nnz(), 2, "{name}");
        let indptr = 8 * (slices + 1);
        assert!(
            largest >= indptr && largest <= 2 * indptr,
            "{name}: largest allocation {largest} bytes, indptr {indptr}"
        );
        let strict = ArchiveReadOptions {
            max_indptr_len: 1 << 20,
            ..ArchiveReadOptions::default()
        };
        let (r, largest) = read(&p, &strict);
        assert!(matches!(r, Err(Error::Overflow { .. })), "{name}: {r:?}");
        assert!(largest < 1 << 20, "{name}: allocated {largest} bytes");
    }
}

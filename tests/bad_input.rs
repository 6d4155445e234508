//! Hostile input: whatever bytes the decoders are given, they return `Ok` or a
//! typed `arrow_sparse::Error`, and never panic, abort, hang, or make an
//! allocation larger than the input justifies.
//!
//! Inputs: valid messages of every format built here (and encoded with
//! `ipc::encode` / `TensorStreamWriter`) plus the libarrow golden files. Variants:
//! every truncation, deterministic pseudo-random byte flips, "lying" flatbuffer
//! fields (lengths, offsets, sizes, strides, vtable entries...) located by walking
//! the flatbuffer with `arrow_ipc`, and corrupted index buffers in the body.
//!
//! Each variant goes through `ipc::decode` (looped over the input),
//! `TensorStreamReader` (drained) and `MmapReader::from_buffer` + `get(i)`, with full
//! and trusted validation; what trusted decoding accepts is then dumped,
//! summarised, converted to every format and re-encoded. Every call runs under
//! `catch_unwind` with a counting global allocator recording the largest single
//! allocation request of the calling thread, and a watchdog aborts the run (naming
//! the variant) if one variant takes more than 30 s.

mod common;

use arrow_sparse::{EntryOrder, TensorOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::io::Read;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use arrow_buffer::Buffer;
use arrow_ipc as fb;
use arrow_sparse::buffer::points_into;
use arrow_sparse::dump::{json_line, summary};
use arrow_sparse::ipc::{
    self, CsfLengths, MmapReader, StreamReadOptions, StreamWriteOptions, TensorMessage,
    TensorStreamReader, TensorStreamWriter,
};
use arrow_sparse::{
    AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, CsxMatrix, DenseTensor, Format,
    IndexBuffer, IndexType, Validation,
};
use half::f16;

// ---------------------------------------------------------------------------
// Counting allocator: the largest single allocation request made by this thread
// while armed.

struct CountingAlloc;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

#[inline]
fn note_allocation(size: usize) {
    let _ = ARMED.try_with(|armed| {
        if armed.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Panics inside [`guarded`] are recorded (not printed); others go to the default hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(|c| c.get()) {
                let msg = info.to_string();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(msg));
            } else {
                default(info)
            }
        }));
    });
}

/// Run `f`, catching a panic (returned as its message) and measuring the largest
/// single allocation it requested and how long it took.
fn guarded<T>(f: impl FnOnce() -> T) -> (Result<T, String>, usize, Duration) {
    install_panic_hook();
    LARGEST.with(|l| l.set(0));
    CATCHING.with(|c| c.set(true));
    let t0 = Instant::now();
    ARMED.with(|a| a.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    ARMED.with(|a| a.set(false));
    let dt = t0.elapsed();
    CATCHING.with(|c| c.set(false));
    let largest = LARGEST.with(|l| l.get());
    let r = r.map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "panic (no message)".into())
    });
    (r, largest, dt)
}

// ---------------------------------------------------------------------------
// Watchdog: a variant running for more than HANG aborts the whole run, naming it.

const HANG: Duration = Duration::from_secs(30);

static PROGRESS: Mutex<Vec<(&'static str, String, Instant)>> = Mutex::new(Vec::new());

fn heartbeat(test: &'static str, label: &str) {
    static START: Once = Once::new();
    START.call_once(|| {
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(250));
                let p = PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
                if let Some((test, label, since)) =
                    p.iter().find(|(_, _, since)| since.elapsed() > HANG)
                {
                    eprintln!(
                        "HANG: {test}: variant {label:?} has been running for {:?}",
                        since.elapsed()
                    );
                    std::process::abort();
                }
            }
        });
    });
    let mut p = PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
    p.retain(|(t, _, _)| *t != test);
    p.push((test, label.to_string(), Instant::now()));
}

fn heartbeat_done(test: &'static str) {
    PROGRESS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|(t, _, _)| *t != test);
}

// ---------------------------------------------------------------------------
// Inputs

/// A valid input: one message (no end-of-stream marker) or a whole stream.
struct Input {
    name: String,
    bytes: Vec<u8>,
    /// Offsets of every message prefix.
    message_starts: Vec<usize>,
    /// Offsets where a prefix of the input is a sequence of whole messages (0, the
    /// end of every message, the end of the input).
    boundaries: Vec<usize>,
}

impl Input {
    fn new(name: String, bytes: Vec<u8>) -> Input {
        let reader = MmapReader::from_buffer(
            Buffer::from_slice_ref(&bytes),
            &StreamReadOptions::default(),
        )
        .unwrap_or_else(|e| panic!("input {name} is not a valid stream: {e}"));
        let message_starts: Vec<usize> = reader.messages().iter().map(|m| m.offset).collect();
        let mut boundaries = vec![0];
        boundaries.extend(reader.messages().iter().map(|m| m.body_offset + m.body_len));
        boundaries.push(bytes.len());
        Input {
            name,
            bytes,
            message_starts,
            boundaries,
        }
    }

    fn is_single(&self) -> bool {
        self.message_starts.len() == 1
    }
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn meta(kv: &[(&str, &str)]) -> Vec<(String, String)> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Valid tensors of every format, with their custom metadata and write options.
/// A tensor to encode: name, tensor, custom metadata, write options.
type Built = (
    &'static str,
    AnyTensor,
    Vec<(String, String)>,
    StreamWriteOptions,
);

fn built_tensors() -> Vec<Built> {
    let w = StreamWriteOptions::default();
    let padded = StreamWriteOptions {
        csf_lengths: CsfLengths::PaddedBytes,
        ..Default::default()
    };
    let e3: Vec<(Vec<usize>, f64)> = vec![
        (vec![0, 0, 0], 1.0),
        (vec![0, 1, 3], -2.5),
        (vec![1, 2, 0], 3.25),
        (vec![1, 0, 2], 4.0),
        (vec![0, 2, 1], 5.5),
        (vec![1, 1, 3], -6.0),
    ];
    let coo_rm = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &e3)
        .unwrap()
        .canonicalize()
        .unwrap()
        .with_dim_names(names(&["x", "y", "z"]))
        .unwrap();
    // entries (0,1)=7 (1,0)=-8 (2,3)=9, coordinates stored dimension by dimension
    let coo_cm = CooTensor::<i32, i32>::try_new(
        vec![3, 4],
        CoordLayout::ColumnMajor,
        EntryOrder::Canonical,
        vec![0, 1, 2, 1, 0, 3].into(),
        vec![7, -8, 9].into(),
    )
    .unwrap();
    let csr = CooTensor::<f32, i32>::from_entries(
        vec![4, 6],
        &[
            (vec![0, 1], 1.5),
            (vec![0, 4], -2.25),
            (vec![2, 0], 3.0),
            (vec![2, 2], 0.1),
            (vec![2, 5], 1e20),
            (vec![3, 3], 7.0),
        ],
    )
    .unwrap()
    .to_csx::<i32, i32>(CompressedAxis::Row)
    .unwrap()
    .with_dim_names(names(&["row", "col"]))
    .unwrap();
    let csr_f16 = CsxMatrix::<f16, u8, u16>::try_new(
        vec![3, 4],
        CompressedAxis::Row,
        vec![0u16, 2, 2, 4].into(),
        vec![0u8, 3, 1, 2].into(),
        vec![
            f16::from_f32(1.5),
            f16::NAN,
            f16::INFINITY,
            f16::from_f32(-0.0),
        ]
        .into(),
    )
    .unwrap();
    let csc = CsxMatrix::<u16, i16, i32>::try_new(
        vec![5, 4],
        CompressedAxis::Column,
        vec![0i32, 2, 2, 5, 6].into(),
        vec![1i16, 3, 0, 2, 4, 4].into(),
        vec![10u16, 65535, 1, 2, 3, 500].into(),
    )
    .unwrap();
    let csr_empty = CsxMatrix::<f64, i64, i64>::try_new(
        vec![3, 2],
        CompressedAxis::Row,
        vec![0i64, 0, 0, 0].into(),
        Vec::<i64>::new().into(),
        Vec::<f64>::new().into(),
    )
    .unwrap();
    let coo3 = CooTensor::<f32, i16>::from_entries(
        vec![3, 4, 5],
        &[
            (vec![0, 1, 0], 30.25),
            (vec![2, 1, 0], 0.25),
            (vec![0, 0, 2], -4.5),
            (vec![1, 0, 2], 5.75),
            (vec![0, 2, 4], 2.5),
            (vec![0, 3, 4], -1.0),
            (vec![1, 3, 4], 100.0),
            (vec![2, 3, 4], 1.0),
        ],
    )
    .unwrap();
    let csf3 = coo3
        .to_csf::<i16, i32>(&[2, 0, 1])
        .unwrap()
        .with_dim_names(names(&["a", "b", "c"]))
        .unwrap();
    let csf4 = CooTensor::<u8, i64>::from_entries(
        vec![2, 3, 2, 4],
        &[
            (vec![0, 0, 0, 0], 1),
            (vec![1, 0, 0, 1], 42),
            (vec![0, 1, 1, 1], 9),
            (vec![1, 1, 0, 1], 128),
            (vec![0, 2, 1, 3], 7),
            (vec![1, 2, 1, 3], 255),
        ],
    )
    .unwrap()
    .to_csf::<i64, i64>(&[3, 1, 0, 2])
    .unwrap();
    let dense_rm = DenseTensor::<f64>::try_new(
        vec![2, 3, 4],
        (0..24)
            .map(|i| if i % 3 == 0 { 0.0 } else { i as f64 - 7.5 })
            .collect::<Vec<_>>()
            .into(),
    )
    .unwrap()
    .with_dim_names(names(&["foo", "bar", "baz"]))
    .unwrap();
    let dense_cm = DenseTensor::<i16>::try_new_strided(
        vec![3, 4],
        vec![1, 3],
        vec![0, -1, 2, 3, 0, -300, 6, 7, 0, 0, 10, 32767].into(),
    )
    .unwrap();
    let coo_meta = CooTensor::<u64, i8>::from_entries(
        vec![4, 3],
        &[
            (vec![3, 1], u64::MAX),
            (vec![0, 2], 1),
            (vec![3, 1], 2),
            (vec![2, 2], 0),
        ],
    )
    .unwrap()
    .with_dim_names(names(&["", "col"]))
    .unwrap();
    let coo_empty = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[]).unwrap();
    let coo_1d =
        CooTensor::<i8, u32>::from_entries(vec![10], &[(vec![7], -3), (vec![2], 5)]).unwrap();
    let dense_u32 = DenseTensor::<u32>::try_new(vec![5], vec![0, 1, 0, 2, 3].into()).unwrap();
    // GCS and DM: the extension metadata JSON is fuzzed along with the rest
    let gcs = AnyTensor::from(coo3.clone())
        .to_gcs(
            arrow_sparse::dims::DimMap::try_new(vec![3, 4, 5], vec![2, 0, 1], vec![1]).unwrap(),
            CompressedAxis::Column,
            arrow_sparse::IndexType::Int16,
        )
        .unwrap();
    let AnyTensor::Dm(dm) = AnyTensor::from(coo3.clone())
        .to_dm(
            arrow_sparse::dims::DimMap::try_new(vec![3, 4, 5], vec![1, 2, 0], vec![1]).unwrap(),
            arrow_sparse::Format::Csr,
            IndexType::Int64,
        )
        .unwrap()
    else {
        unreachable!()
    };
    let dm_views = AnyTensor::Dm(
        dm.slice(1, 1, 4, 2)
            .unwrap()
            .broadcast(&[6, 2, 5])
            .unwrap()
            .rotate(2, -2)
            .unwrap(),
    );
    // level tensors: the storage message and the arrow_sparse.levels metadata
    let batched: AnyTensor =
        arrow_sparse::LevelTensor::<f32, i32>::batched_csr(&coo3.cast_indices::<i64>().unwrap())
            .unwrap()
            .into();
    let dcsc: AnyTensor = AnyTensor::from(coo3.clone())
        .to_level(
            &arrow_sparse::LevelFormat::csf(vec![2, 0, 1]).unwrap(),
            IndexType::Int16,
            IndexType::Int16,
        )
        .unwrap();
    vec![
        ("level_batched_csr_f32_i32", batched, vec![], w.clone()),
        ("level_csf_order201_i16", dcsc, vec![], w.clone()),
        ("gcs_f32_i16_csc", gcs, vec![], w.clone()),
        ("dm_views_over_csr", dm_views, vec![], w.clone()),
        ("coo_rowmajor_f64_i64", coo_rm.into(), vec![], w.clone()),
        ("coo_colmajor_i32_i32", coo_cm.into(), vec![], w.clone()),
        ("csr_f32_i32", csr.into(), vec![], w.clone()),
        ("csr_f16_u8_indptr_u16", csr_f16.into(), vec![], w.clone()),
        ("csc_u16_i16_indptr_i32", csc.into(), vec![], w.clone()),
        ("csr_empty_f64_i64", csr_empty.into(), vec![], w.clone()),
        (
            "csf3_f32_i16_indptr_i32_order201",
            csf3.clone().into(),
            vec![],
            w.clone(),
        ),
        ("csf3_padded_byte_lengths", csf3.into(), vec![], padded),
        ("csf4_u8_i64_order3102", csf4.into(), vec![], w.clone()),
        ("dense_rowmajor_f64", dense_rm.into(), vec![], w.clone()),
        ("dense_colmajor_i16", dense_cm.into(), vec![], w.clone()),
        (
            "coo_custom_metadata_u64_i8",
            coo_meta.into(),
            meta(&[
                ("origin", "bad_input.rs"),
                ("note", "dups, an explicit zero\nand a newline"),
            ]),
            w.clone(),
        ),
        ("coo_nnz0_f64_i64", coo_empty.into(), vec![], w.clone()),
        ("coo_1d_i8_u32", coo_1d.into(), vec![], w.clone()),
        ("dense_1d_u32", dense_u32.into(), vec![], w),
    ]
}

fn golden_inputs() -> Vec<Input> {
    let dir = common::repo().join("format/golden");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "arrow"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 8,
        "golden files missing in {}",
        dir.display()
    );
    paths
        .into_iter()
        .map(|p| {
            Input::new(
                format!("golden/{}", p.file_name().unwrap().to_string_lossy()),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// One input per built tensor (a bare message), plus one stream of all of them.
fn built_inputs() -> Vec<Input> {
    let tensors = built_tensors();
    let mut out: Vec<Input> = tensors
        .iter()
        .map(|(name, t, m, o)| {
            Input::new(
                format!("built/{name}"),
                ipc::encode(t, m, o).unwrap().to_vec(),
            )
        })
        .collect();
    let mut w = TensorStreamWriter::new(Vec::new());
    for (_, t, m, _) in &tensors {
        w.write_with_metadata(t, m).unwrap();
    }
    out.push(Input::new(
        "built/stream_of_all".into(),
        w.finish().unwrap(),
    ));
    out
}

fn all_inputs() -> Vec<Input> {
    let mut v = built_inputs();
    v.extend(golden_inputs());
    v
}

// ---------------------------------------------------------------------------
// The harness

/// Largest element count for which the O(size) operations (dense dump and
/// conversion, CSR/CSC indptr allocation) are run on accepted tensors.
const SMALL: usize = 1 << 16;
/// A single call slower than this counts as a hang.
const CALL_LIMIT: Duration = Duration::from_secs(5);

fn tight_bound(n: usize) -> usize {
    4 * n + (1 << 20)
}

fn stream_bound(n: usize) -> usize {
    // the stream reader grows its buffers in 64 MiB chunks (rounded to 64 bytes)
    tight_bound(n).max(64 << 20) + 4096
}

fn post_bound(n: usize) -> usize {
    64 * n + (2 << 20)
}

#[derive(Default, Debug)]
struct Outcome {
    /// Whether each reader (decode, stream, mmap) reported an error with full validation.
    full_err: [bool; 3],
    /// How many messages each reader decoded with full validation.
    full_ok: [usize; 3],
}

struct Harness {
    test: &'static str,
    variants: usize,
    calls: usize,
    accepted: usize,
    failures: Vec<String>,
    more_failures: usize,
    slowest: (Duration, String),
    /// Fingerprints of the message bytes already exercised (truncations and flips
    /// of a stream leave most of its messages intact: exercise each once).
    exercised: HashSet<u64>,
    /// Whether variants that announce a big read go through the stream reader.
    /// Such a variant (a frame announcing 16 MiB or more that the input does not
    /// hold) makes it allocate and zero a chunk of up to 64 MiB before finding the
    /// input short: the same path whatever the input, and ~40 ms each, so the fuzz
    /// tests run it for a few inputs only (`huge_announced_lengths_...` covers it).
    /// `decode` and `MmapReader` always run.
    big_reads_ok: bool,
    /// Variants kept from the stream reader because of `big_reads_ok`.
    stream_skipped: usize,
}

/// Whether the stream reader would be asked for a read of 16 MiB or more that
/// `bytes` does not hold (conservative: frames are followed as far as they parse).
fn announces_big_read(bytes: &[u8]) -> bool {
    const BIG: usize = 16 << 20;
    let mut at = 0;
    while at + 4 <= bytes.len() {
        let word = |i: usize| {
            bytes
                .get(i..i + 4)
                .map(|w| i32::from_le_bytes(w.try_into().unwrap()))
        };
        let (len, prefix) = match word(at) {
            Some(-1) => match word(at + 4) {
                Some(len) => (len, 8),
                None => return false,
            },
            Some(len) => (len, 4),
            None => return false,
        };
        if len <= 0 || len > 64 << 20 {
            return false;
        }
        let (len, meta_start) = (len as usize, at + prefix);
        let Some(meta) = bytes.get(meta_start..meta_start + len) else {
            return len >= BIG;
        };
        let Ok(msg) = fb::root_as_message(meta) else {
            return false;
        };
        let Ok(body) = usize::try_from(msg.bodyLength()) else {
            return false;
        };
        let body_start = meta_start + len;
        if body_start.saturating_add(body) > bytes.len() {
            return body >= BIG;
        }
        at = body_start + body;
    }
    false
}

/// FNV-1a.
fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Decode every message of `buf` with `ipc::decode`. `Err(_)` is a contract
/// violation (no progress, or more bytes consumed than given).
fn decode_all(
    buf: &Buffer,
    opts: &StreamReadOptions,
) -> Result<Vec<arrow_sparse::Result<TensorMessage>>, String> {
    decode_all_ranges(buf, opts).map(|(results, _)| results)
}

/// The results of [`decode_all`] and the byte range of every decoded message.
type Decoded = (Vec<arrow_sparse::Result<TensorMessage>>, Vec<Range<usize>>);

fn decode_all_ranges(buf: &Buffer, opts: &StreamReadOptions) -> Result<Decoded, String> {
    let (mut out, mut ranges) = (Vec::new(), Vec::new());
    let mut off = 0;
    loop {
        let rest = buf.slice(off);
        match ipc::decode(&rest, opts) {
            Ok(Some((m, used))) => {
                if used == 0 || used > rest.len() {
                    return Err(format!("decode consumed {used} of {} bytes", rest.len()));
                }
                out.push(Ok(m));
                ranges.push(off..off + used);
                off += used;
            }
            Ok(None) => return Ok((out, ranges)),
            Err(e) => {
                out.push(Err(e));
                return Ok((out, ranges));
            }
        }
    }
}

fn drain_stream(
    bytes: &[u8],
    opts: &StreamReadOptions,
) -> Result<Vec<arrow_sparse::Result<TensorMessage>>, String> {
    let mut out = Vec::new();
    for r in TensorStreamReader::with_options(bytes, &opts.clone()) {
        out.push(r);
        if out.len() > bytes.len() + 1 {
            return Err("the stream reader yields more messages than there are bytes".into());
        }
    }
    Ok(out)
}

fn mmap_all(
    buf: &Buffer,
    opts: &StreamReadOptions,
) -> Result<Vec<arrow_sparse::Result<TensorMessage>>, String> {
    match MmapReader::from_buffer(buf.clone(), &opts.clone()) {
        Err(e) => Ok(vec![Err(e)]),
        Ok(r) => {
            // out of range is an error, not a panic
            if r.get(r.len()).is_ok() {
                return Err("MmapReader::get(len) returned Ok".into());
            }
            Ok((0..r.len()).map(|i| r.get(i)).collect())
        }
    }
}

impl Harness {
    fn new(test: &'static str) -> Harness {
        Harness {
            test,
            variants: 0,
            calls: 0,
            accepted: 0,
            failures: Vec::new(),
            more_failures: 0,
            slowest: (Duration::ZERO, String::new()),
            exercised: HashSet::new(),
            big_reads_ok: true,
            stream_skipped: 0,
        }
    }

    fn fail(&mut self, s: String) {
        if self.failures.len() < 100 {
            self.failures.push(s);
        } else {
            self.more_failures += 1;
        }
    }

    /// Run one guarded call; `None` if it panicked (recorded as a failure).
    fn call<T>(
        &mut self,
        label: &str,
        what: &str,
        bound: usize,
        f: impl FnOnce() -> T,
    ) -> Option<T> {
        let (r, largest, dt) = guarded(f);
        self.calls += 1;
        if dt > self.slowest.0 {
            self.slowest = (dt, format!("{label} [{what}]"));
        }
        if dt > CALL_LIMIT {
            self.fail(format!("{label}: {what} took {dt:?}"));
        }
        if largest > bound {
            self.fail(format!(
                "{label}: {what} made a single allocation of {largest} bytes (bound {bound})"
            ));
        }
        match r {
            Ok(v) => Some(v),
            Err(msg) => {
                self.fail(format!("{label}: {what} PANICKED: {msg}"));
                None
            }
        }
    }

    /// Feed `bytes` to every reader with both validation levels, then exercise what
    /// trusted decoding accepted.
    fn check(&mut self, label: &str, bytes: &[u8]) -> Outcome {
        self.check_buffer(label, bytes, Buffer::from_slice_ref(bytes))
    }

    fn check_buffer(&mut self, label: &str, bytes: &[u8], buf: Buffer) -> Outcome {
        heartbeat(self.test, label);
        self.variants += 1;
        let n = bytes.len();
        let mut out = Outcome::default();
        let mut full_ok: Vec<bool> = Vec::new();
        let mut trusted: Vec<arrow_sparse::Result<TensorMessage>> = Vec::new();
        let mut trusted_ranges: Vec<Range<usize>> = Vec::new();
        let big_read = !self.big_reads_ok && announces_big_read(bytes);
        self.stream_skipped += big_read as usize;
        for v in [Validation::Full, Validation::Trusted] {
            let full = v == Validation::Full;
            let tag = if full { "full" } else { "trusted" };
            let opts = StreamReadOptions::default().with_validation(v);

            let decoded = self.call(label, &format!("decode/{tag}"), tight_bound(n), || {
                decode_all_ranges(&buf, &opts)
            });
            match decoded {
                Some(Err(violation)) => self.fail(format!("{label}: decode/{tag}: {violation}")),
                Some(Ok((results, ranges))) => {
                    if full {
                        out.full_err[0] = results.iter().any(|r| r.is_err());
                        out.full_ok[0] = results.iter().filter(|r| r.is_ok()).count();
                        full_ok = results.iter().map(|r| r.is_ok()).collect();
                    } else {
                        trusted = results;
                        trusted_ranges = ranges;
                    }
                }
                None => {}
            }

            let streamed = if big_read {
                None
            } else {
                self.call(
                    label,
                    &format!("TensorStreamReader/{tag}"),
                    stream_bound(n),
                    || drain_stream(bytes, &opts),
                )
            };
            match streamed {
                Some(Err(violation)) => {
                    self.fail(format!("{label}: TensorStreamReader/{tag}: {violation}"))
                }
                Some(Ok(results)) if full => {
                    out.full_err[1] = results.iter().any(|r| r.is_err());
                    out.full_ok[1] = results.iter().filter(|r| r.is_ok()).count();
                }
                _ => {}
            }

            let mapped = self.call(label, &format!("MmapReader/{tag}"), tight_bound(n), || {
                mmap_all(&buf, &opts)
            });
            match mapped {
                Some(Err(violation)) => {
                    self.fail(format!("{label}: MmapReader/{tag}: {violation}"))
                }
                Some(Ok(results)) if full => {
                    out.full_err[2] = results.iter().any(|r| r.is_err());
                    out.full_ok[2] = results.iter().filter(|r| r.is_ok()).count();
                }
                _ => {}
            }
        }
        // readers that all accept the input agree on what it holds
        if out.full_err == [false; 3]
            && !big_read
            && out.full_ok.iter().any(|&c| c != out.full_ok[0])
        {
            self.fail(format!(
                "{label}: (decode, stream, mmap) accepted {:?} messages",
                out.full_ok
            ));
        }
        for (i, r) in trusted.iter().enumerate() {
            if let Ok(m) = r {
                self.accepted += 1;
                let validated = full_ok.get(i).copied().unwrap_or(false);
                if !self
                    .exercised
                    .insert(fingerprint(&bytes[trusted_ranges[i].clone()]) ^ validated as u64)
                {
                    continue;
                }
                self.exercise(&format!("{label} (message {i})"), m, validated, n);
            }
        }
        out
    }

    /// Dump, summarise, convert and re-encode a tensor that trusted decoding accepted.
    fn exercise(&mut self, label: &str, msg: &TensorMessage, validated: bool, n: usize) {
        let t = &msg.tensor;
        let bound = post_bound(n);
        let size = t.shape().iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let small = size.is_some_and(|s| s <= SMALL);
        let dense = matches!(t, AnyTensor::Dense(_));
        // Dense tensors are O(size) to walk, and with zero or overlapping strides
        // (which the format allows) a few bytes can describe 2^62 elements: only
        // small ones are walked. Sparse tensors are O(nnz) (nnz <= body bytes).
        if dense && !small {
            return;
        }
        if let Some(Err(e)) = self.call(label, "json_line", bound, || json_line(t))
            && validated
        {
            self.fail(format!(
                "{label}: json_line failed on a fully validated tensor: {e}"
            ));
        }
        self.call(label, "summary", bound, || summary(0, msg, Some(n)));
        self.call(label, "encode", bound, || {
            ipc::encode(t, &msg.custom_metadata, &StreamWriteOptions::default()).map(|m| m.len())
        });
        for to in [
            Format::Coo,
            Format::Csr,
            Format::Csc,
            Format::Csf,
            Format::Dense,
        ] {
            let skip = match to {
                Format::Dense => !small,
                // CSR / CSC allocate an indptr of shape[major] + 1 elements
                Format::Csr if t.shape().len() == 2 => t.shape()[0] > SMALL,
                Format::Csc if t.shape().len() == 2 => t.shape()[1] > SMALL,
                _ => false,
            };
            if skip {
                continue;
            }
            for it in [IndexType::Int64, IndexType::Int8] {
                self.call(label, &format!("convert({to}, {it})"), bound, || {
                    t.convert(to, it, None).map(|c| c.nnz())
                });
            }
        }
    }

    fn finish(self) {
        heartbeat_done(self.test);
        eprintln!(
            "{}: {} variants ({} kept from the stream reader: big announced read), {} guarded calls, \
             {} messages accepted by trusted decoding; slowest call {:?}: {}",
            self.test,
            self.variants,
            self.stream_skipped,
            self.calls,
            self.accepted,
            self.slowest.0,
            self.slowest.1
        );
        if !self.failures.is_empty() {
            panic!(
                "{}: {} failure(s){}:\n{}",
                self.test,
                self.failures.len() + self.more_failures,
                if self.more_failures > 0 {
                    format!(" (first {} shown)", self.failures.len())
                } else {
                    String::new()
                },
                self.failures.join("\n")
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Variant generators

/// xorshift64: deterministic, no dependency.
struct XorShift(u64);

impl XorShift {
    fn seeded(name: &str) -> XorShift {
        XorShift(fingerprint(name.as_bytes()) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn read_int(bytes: &[u8], pos: usize, width: usize, signed: bool) -> i64 {
    let mut b = [0u8; 8];
    b[..width].copy_from_slice(&bytes[pos..pos + width]);
    let v = i64::from_le_bytes(b);
    if signed && width < 8 {
        let shift = 64 - 8 * width as u32;
        (v << shift) >> shift
    } else {
        v
    }
}

fn write_int(bytes: &mut [u8], pos: usize, width: usize, v: i64) {
    bytes[pos..pos + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

/// A field of the metadata to lie about: absolute byte position and width.
struct Field {
    name: String,
    pos: usize,
    width: usize,
}

/// Locates the fields of one flatbuffer `Message` by walking it with `arrow_ipc`.
struct Fields<'a> {
    meta: &'a [u8],
    /// Absolute position of the flatbuffer in the input.
    off: usize,
    out: Vec<Field>,
}

impl<'a> Fields<'a> {
    fn at(&mut self, name: String, rel: usize, width: usize) {
        if rel + width <= self.meta.len() && !self.out.iter().any(|f| f.pos == self.off + rel) {
            self.out.push(Field {
                name,
                pos: self.off + rel,
                width,
            });
        }
    }
    fn rel<T>(&self, p: *const T) -> usize {
        p as usize - self.meta.as_ptr() as usize
    }
    /// A scalar, struct or offset field of a table (absent when it holds the default).
    fn slot(&mut self, name: &str, tab: &flatbuffers::Table<'a>, vt: u16, width: usize) {
        let o = tab.vtable().get(vt) as usize;
        if o != 0 {
            self.at(name.to_string(), tab.loc() + o, width);
        }
    }
    /// A table's vtable offset and every vtable entry.
    fn table(&mut self, name: &str, tab: &flatbuffers::Table<'a>) {
        self.at(format!("{name} vtable soffset"), tab.loc(), 4);
        let vtable = tab.vtable();
        let (start, len) = (
            self.rel(vtable.as_bytes().as_ptr()),
            vtable.as_bytes().len(),
        );
        for i in 0..len / 2 {
            self.at(format!("{name} vtable[{i}]"), start + 2 * i, 2);
        }
    }
    /// A vector's length prefix and (for `elem > 0`) each element.
    fn vector(&mut self, name: &str, data: &'a [u8], elem: usize) {
        let start = self.rel(data.as_ptr());
        self.at(format!("{name} length"), start - 4, 4);
        if let Some(count) = data.len().checked_div(elem) {
            for i in 0..count {
                self.at(format!("{name}[{i}]"), start + i * elem, elem);
            }
        }
    }
    fn string(&mut self, name: &str, s: &'a str) {
        let start = self.rel(s.as_ptr());
        self.at(format!("{name} string length"), start - 4, 4);
    }
    fn buffer(&mut self, name: &str, b: &'a fb::Buffer) {
        let p = self.rel(b as *const fb::Buffer);
        self.at(format!("{name}.offset"), p, 8);
        self.at(format!("{name}.length"), p + 8, 8);
    }
    fn int(&mut self, name: &str, int: fb::Int<'a>) {
        self.table(name, &int._tab);
        self.slot(
            &format!("{name}.bitWidth"),
            &int._tab,
            fb::Int::VT_BITWIDTH,
            4,
        );
        self.slot(
            &format!("{name}.is_signed"),
            &int._tab,
            fb::Int::VT_IS_SIGNED,
            1,
        );
    }
    fn value_type(
        &mut self,
        parent: &flatbuffers::Table<'a>,
        type_type_vt: u16,
        type_vt: u16,
        int: Option<fb::Int<'a>>,
        float: Option<fb::FloatingPoint<'a>>,
    ) {
        self.slot("type_type", parent, type_type_vt, 1);
        self.slot("type offset", parent, type_vt, 4);
        if let Some(i) = int {
            self.int("type Int", i);
        }
        if let Some(f) = float {
            self.table("type FloatingPoint", &f._tab);
            self.slot(
                "type FloatingPoint.precision",
                &f._tab,
                fb::FloatingPoint::VT_PRECISION,
                2,
            );
        }
    }
    fn shape(
        &mut self,
        parent: &flatbuffers::Table<'a>,
        vt: u16,
        dims: flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<fb::TensorDim<'a>>>,
    ) {
        self.slot("shape offset", parent, vt, 4);
        self.vector("shape", dims.bytes(), 4);
        for (i, d) in dims.iter().enumerate() {
            self.table(&format!("shape[{i}]"), &d._tab);
            self.slot(
                &format!("shape[{i}].size"),
                &d._tab,
                fb::TensorDim::VT_SIZE,
                8,
            );
            if let Some(name) = d.name() {
                self.string(&format!("shape[{i}].name"), name);
            }
        }
    }
}

/// Every field of the message whose prefix starts at `start`.
fn fields_of(bytes: &[u8], start: usize) -> Vec<Field> {
    let meta_len = i32::from_le_bytes(bytes[start + 4..start + 8].try_into().unwrap()) as usize;
    let meta = &bytes[start + 8..start + 8 + meta_len];
    let msg = fb::root_as_message(meta).unwrap();
    let mut f = Fields {
        meta,
        off: start + 8,
        out: Vec::new(),
    };
    f.at("root offset".into(), 0, 4);
    f.table("Message", &msg._tab);
    f.slot("Message.version", &msg._tab, fb::Message::VT_VERSION, 2);
    f.slot(
        "Message.header_type",
        &msg._tab,
        fb::Message::VT_HEADER_TYPE,
        1,
    );
    f.slot(
        "Message.header offset",
        &msg._tab,
        fb::Message::VT_HEADER,
        4,
    );
    f.slot(
        "Message.bodyLength",
        &msg._tab,
        fb::Message::VT_BODYLENGTH,
        8,
    );
    f.slot(
        "Message.custom_metadata offset",
        &msg._tab,
        fb::Message::VT_CUSTOM_METADATA,
        4,
    );
    if let Some(kvs) = msg.custom_metadata() {
        f.vector("custom_metadata", kvs.bytes(), 4);
        for (i, kv) in kvs.iter().enumerate() {
            f.table(&format!("custom_metadata[{i}]"), &kv._tab);
            if let Some(k) = kv.key() {
                f.string(&format!("custom_metadata[{i}].key"), k);
            }
            if let Some(v) = kv.value() {
                f.string(&format!("custom_metadata[{i}].value"), v);
            }
        }
    }
    if let Some(st) = msg.header_as_sparse_tensor() {
        let tab = st._tab;
        f.table("SparseTensor", &tab);
        f.value_type(
            &tab,
            fb::SparseTensor::VT_TYPE_TYPE,
            fb::SparseTensor::VT_TYPE_,
            st.type_as_int(),
            st.type_as_floating_point(),
        );
        f.shape(&tab, fb::SparseTensor::VT_SHAPE, st.shape());
        f.slot(
            "non_zero_length",
            &tab,
            fb::SparseTensor::VT_NON_ZERO_LENGTH,
            8,
        );
        f.slot(
            "sparseIndex_type",
            &tab,
            fb::SparseTensor::VT_SPARSEINDEX_TYPE,
            1,
        );
        f.slot(
            "sparseIndex offset",
            &tab,
            fb::SparseTensor::VT_SPARSEINDEX,
            4,
        );
        f.buffer("data", st.data());
        if let Some(coo) = st.sparseIndex_as_sparse_tensor_index_coo() {
            let t = coo._tab;
            f.table("COO", &t);
            f.slot(
                "COO.indicesType offset",
                &t,
                fb::SparseTensorIndexCOO::VT_INDICESTYPE,
                4,
            );
            f.int("COO.indicesType", coo.indicesType());
            f.slot(
                "COO.indicesStrides offset",
                &t,
                fb::SparseTensorIndexCOO::VT_INDICESSTRIDES,
                4,
            );
            if let Some(s) = coo.indicesStrides() {
                f.vector("COO.indicesStrides", s.bytes(), 8);
            }
            f.buffer("COO.indicesBuffer", coo.indicesBuffer());
            f.slot(
                "COO.isCanonical",
                &t,
                fb::SparseTensorIndexCOO::VT_ISCANONICAL,
                1,
            );
        }
        if let Some(csx) = st.sparseIndex_as_sparse_matrix_index_csx() {
            let t = csx._tab;
            f.table("CSX", &t);
            f.slot(
                "CSX.compressedAxis",
                &t,
                fb::SparseMatrixIndexCSX::VT_COMPRESSEDAXIS,
                2,
            );
            f.slot(
                "CSX.indptrType offset",
                &t,
                fb::SparseMatrixIndexCSX::VT_INDPTRTYPE,
                4,
            );
            f.int("CSX.indptrType", csx.indptrType());
            f.buffer("CSX.indptrBuffer", csx.indptrBuffer());
            f.slot(
                "CSX.indicesType offset",
                &t,
                fb::SparseMatrixIndexCSX::VT_INDICESTYPE,
                4,
            );
            f.int("CSX.indicesType", csx.indicesType());
            f.buffer("CSX.indicesBuffer", csx.indicesBuffer());
        }
        if let Some(csf) = st.sparseIndex_as_sparse_tensor_index_csf() {
            let t = csf._tab;
            f.table("CSF", &t);
            f.slot(
                "CSF.indptrType offset",
                &t,
                fb::SparseTensorIndexCSF::VT_INDPTRTYPE,
                4,
            );
            f.int("CSF.indptrType", csf.indptrType());
            f.slot(
                "CSF.indicesType offset",
                &t,
                fb::SparseTensorIndexCSF::VT_INDICESTYPE,
                4,
            );
            f.int("CSF.indicesType", csf.indicesType());
            f.slot(
                "CSF.indptrBuffers offset",
                &t,
                fb::SparseTensorIndexCSF::VT_INDPTRBUFFERS,
                4,
            );
            f.vector("CSF.indptrBuffers", csf.indptrBuffers().bytes(), 0);
            for (i, b) in csf.indptrBuffers().iter().enumerate() {
                f.buffer(&format!("CSF.indptrBuffers[{i}]"), b);
            }
            f.slot(
                "CSF.indicesBuffers offset",
                &t,
                fb::SparseTensorIndexCSF::VT_INDICESBUFFERS,
                4,
            );
            f.vector("CSF.indicesBuffers", csf.indicesBuffers().bytes(), 0);
            for (i, b) in csf.indicesBuffers().iter().enumerate() {
                f.buffer(&format!("CSF.indicesBuffers[{i}]"), b);
            }
            f.slot(
                "CSF.axisOrder offset",
                &t,
                fb::SparseTensorIndexCSF::VT_AXISORDER,
                4,
            );
            f.vector("CSF.axisOrder", csf.axisOrder().bytes(), 4);
        }
    }
    if let Some(t) = msg.header_as_tensor() {
        let tab = t._tab;
        f.table("Tensor", &tab);
        f.value_type(
            &tab,
            fb::Tensor::VT_TYPE_TYPE,
            fb::Tensor::VT_TYPE_,
            t.type_as_int(),
            t.type_as_floating_point(),
        );
        f.shape(&tab, fb::Tensor::VT_SHAPE, t.shape());
        f.slot("strides offset", &tab, fb::Tensor::VT_STRIDES, 4);
        if let Some(s) = t.strides() {
            f.vector("strides", s.bytes(), 8);
        }
        f.buffer("data", t.data());
    }
    let mut out = vec![
        Field {
            name: "continuation marker".into(),
            pos: start,
            width: 4,
        },
        Field {
            name: "metadata length".into(),
            pos: start + 4,
            width: 4,
        },
    ];
    out.extend(f.out);
    out
}

/// Values to write into a field of `width` bytes currently holding `orig`:
/// huge, negative, zero and off-by-one / off-by-eight.
fn lies(width: usize, orig: i64) -> Vec<i64> {
    let mut v: Vec<i64> = match width {
        1 => vec![0, 1, 2, 3, 4, 5, 7, 8, 0x10, 0x7F, 0x80, 0xFF, orig ^ 1],
        2 => vec![-1, 0, 1, 2, 3, 4, 5, 8, 0x7FFF, -0x8000],
        4 => vec![
            -1,
            0,
            1,
            3,
            4,
            8,
            i32::MAX as i64,
            i32::MIN as i64,
            0x7FFF_FFF8,
            1 << 30,
            64 << 20,
            (64 << 20) + 8,
        ],
        _ => vec![
            -1,
            0,
            1,
            8,
            i64::MAX,
            i64::MIN,
            i64::MAX - 7,
            1 << 31,
            1 << 32,
            1 << 40,
            1 << 62,
            -(1 << 40),
        ],
    };
    if width > 1 {
        v.extend([
            orig.wrapping_sub(1),
            orig.wrapping_add(1),
            orig.wrapping_sub(8),
            orig.wrapping_add(8),
            orig.wrapping_mul(2),
        ]);
    }
    let mask = if width == 8 {
        -1i64
    } else {
        (1i64 << (8 * width)) - 1
    };
    let orig = orig & mask;
    let mut seen = Vec::new();
    v.retain(|&x| {
        let m = x & mask;
        let keep = m != orig && !seen.contains(&m);
        seen.push(m);
        keep
    });
    v
}

/// Lying-length variants of an input: every located field of a single message;
/// message prefixes and the end-of-stream marker of a stream.
fn lie_variants(input: &Input) -> Vec<(String, Vec<u8>)> {
    let mut fields: Vec<Field> = Vec::new();
    if input.is_single() {
        fields = fields_of(&input.bytes, input.message_starts[0]);
    } else {
        for (i, &s) in input.message_starts.iter().enumerate() {
            fields.push(Field {
                name: format!("message {i} metadata length"),
                pos: s + 4,
                width: 4,
            });
        }
    }
    let end = *input.boundaries.last().unwrap();
    let last_msg_end = input.boundaries[input.boundaries.len() - 2];
    if end - last_msg_end == 8 {
        fields.push(Field {
            name: "end-of-stream length".into(),
            pos: last_msg_end + 4,
            width: 4,
        });
    }
    let mut out = Vec::new();
    for f in fields {
        let orig = read_int(&input.bytes, f.pos, f.width, true);
        for v in lies(f.width, orig) {
            let mut b = input.bytes.clone();
            write_int(&mut b, f.pos, f.width, v);
            out.push((
                format!(
                    "{}: {} (at {}, {} bytes) {} -> {}",
                    input.name, f.name, f.pos, f.width, orig, v
                ),
                b,
            ));
        }
    }
    out
}

/// The index buffers of a decoded tensor, by name.
fn index_buffers(t: &AnyTensor) -> Vec<(String, IndexBuffer)> {
    match t {
        AnyTensor::Coo(c) => vec![("coords".into(), c.coords().clone())],
        AnyTensor::Csx(c) => vec![
            ("indptr".into(), c.indptr().clone()),
            ("indices".into(), c.indices().clone()),
        ],
        AnyTensor::Csf(c) => {
            let mut v: Vec<(String, IndexBuffer)> = c
                .indptr()
                .iter()
                .enumerate()
                .map(|(l, b)| (format!("indptr[{l}]"), b.clone()))
                .collect();
            v.extend(
                c.indices()
                    .iter()
                    .enumerate()
                    .map(|(l, b)| (format!("indices[{l}]"), b.clone())),
            );
            v
        }
        AnyTensor::Gcs(g) => index_buffers(&AnyTensor::Csx(g.matrix().clone())),
        AnyTensor::Dm(d) => index_buffers(d.storage()),
        AnyTensor::Level(l) => {
            let named = |kind: &str, bufs: &[Option<IndexBuffer>]| -> Vec<(String, IndexBuffer)> {
                bufs.iter()
                    .enumerate()
                    .filter_map(|(i, b)| b.clone().map(|b| (format!("{kind}[{i}]"), b)))
                    .collect()
            };
            let mut v = named("positions", l.positions());
            v.extend(named("coordinates", l.coordinates()));
            v
        }
        _ => Vec::new(),
    }
}

/// Body corruptions of every index buffer of every message: out-of-range,
/// negative and extreme elements, decreasing / reversed / alternating indptr-like
/// patterns, duplicated entries.
fn body_variants(input: &Input) -> Vec<(String, Vec<u8>)> {
    let buf = Buffer::from_slice_ref(&input.bytes);
    let msgs = decode_all(&buf, &StreamReadOptions::default()).unwrap();
    let mut out = Vec::new();
    for (mi, m) in msgs.iter().enumerate() {
        let m = m.as_ref().unwrap();
        for (bname, ib) in index_buffers(&m.tensor) {
            if ib.is_empty() || !points_into(ib.inner(), &buf) {
                continue;
            }
            let pos = ib.inner().as_ptr() as usize - buf.as_ptr() as usize;
            let ty = ib.data_type();
            let (w, signed, len) = (ty.byte_width(), ty.is_signed(), ib.len());
            let bits = 8 * w as u32;
            let (min, max) = match (signed, bits) {
                (true, 64) => (i64::MIN, i64::MAX),
                (true, b) => (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1),
                (false, 64) => (0, -1), // all bits set
                (false, b) => (0, (1i64 << b) - 1),
            };
            let at = |i: usize| pos + i * w;
            let get = |b: &[u8], i: usize| read_int(b, at(i), w, signed);
            let label = |what: String| {
                format!(
                    "{} message {mi}: {bname} ({ty}, {len} elements) {what}",
                    input.name
                )
            };
            let mut positions = vec![0, 1, len / 2, len - 1];
            positions.retain(|&p| p < len);
            positions.dedup();
            for &i in &positions {
                let cur = get(&input.bytes, i);
                for v in [
                    -1,
                    min,
                    max,
                    cur.wrapping_add(1),
                    cur.wrapping_sub(1),
                    cur.wrapping_add(100),
                    1000,
                ] {
                    if v == cur {
                        continue;
                    }
                    let mut b = input.bytes.clone();
                    write_int(&mut b, at(i), w, v);
                    out.push((label(format!("[{i}] {cur} -> {v}")), b));
                }
            }
            if len >= 2 {
                let vals: Vec<i64> = (0..len).map(|i| get(&input.bytes, i)).collect();
                let last = vals[len - 1];
                let mut patterns: Vec<(&str, Vec<i64>)> = vec![
                    ("reversed", vals.iter().rev().copied().collect()),
                    ("all max", vec![max; len]),
                    ("all zero", vec![0; len]),
                    // starts at 0, ends where it should, goes back and forth in between
                    (
                        "alternating 0/last",
                        (0..len)
                            .map(|i| if i == len - 1 || i % 2 == 1 { last } else { 0 })
                            .collect(),
                    ),
                    (
                        "first half copied over the second",
                        (0..len)
                            .map(|i| vals[if i >= len / 2 { i - len / 2 } else { i }])
                            .collect(),
                    ),
                ];
                let mut swapped = vals.clone();
                swapped.swap(0, 1);
                patterns.push(("[0] and [1] swapped", swapped));
                let mut dec = vals.clone();
                dec[len / 2] = vals[len / 2]
                    .saturating_add(vals[len - 1])
                    .saturating_add(1);
                patterns.push(("middle element above the end", dec));
                for (what, p) in patterns {
                    if p == vals {
                        continue;
                    }
                    let mut b = input.bytes.clone();
                    for (i, &v) in p.iter().enumerate() {
                        write_int(&mut b, at(i), w, v);
                    }
                    out.push((label(what.to_string()), b));
                }
            }
        }
    }
    out
}

/// Byte flips: `count` variants, each changing 1 to 3 bytes (xor with a random
/// byte, or set to 0x00 / 0xFF / 0x7F / 0x80).
fn flip_variants(input: &Input, count: usize) -> Vec<(String, Vec<u8>)> {
    let mut rng = XorShift::seeded(&input.name);
    let n = input.bytes.len();
    (0..count)
        .map(|k| {
            let mut b = input.bytes.clone();
            let mut what = Vec::new();
            for _ in 0..1 + rng.below(3) {
                let pos = rng.below(n);
                let old = b[pos];
                b[pos] = match rng.below(10) {
                    0 => 0x00,
                    1 => 0xFF,
                    2 => 0x7F,
                    3 => 0x80,
                    _ => old ^ (1 + rng.below(255)) as u8,
                };
                what.push(format!("[{pos}] {old:#04x}->{:#04x}", b[pos]));
            }
            (format!("{} flip #{k}: {}", input.name, what.join(" ")), b)
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Tests

#[test]
fn valid_inputs_decode_with_every_reader() {
    let mut h = Harness::new("valid inputs");
    for input in all_inputs() {
        let out = h.check(&input.name, &input.bytes);
        if out.full_err != [false; 3] {
            h.fail(format!(
                "{}: refused by (decode, stream, mmap) = {:?}",
                input.name, out.full_err
            ));
        }
        // misaligned: buffers are copied, or refused with a typed error when alignment is required
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(&input.bytes);
        let misaligned = Buffer::from_vec(shifted).slice(1);
        let out = h.check_buffer(
            &format!("{} misaligned", input.name),
            &input.bytes,
            misaligned.clone(),
        );
        if out.full_err != [false; 3] {
            h.fail(format!(
                "{} misaligned: refused by (decode, stream, mmap) = {:?}",
                input.name, out.full_err
            ));
        }
        let strict = StreamReadOptions::default().with_require_alignment(true);
        h.call(
            &input.name,
            "decode/require_alignment",
            tight_bound(input.bytes.len()),
            || decode_all(&misaligned, &strict),
        );
        h.call(
            &input.name,
            "MmapReader/require_alignment",
            tight_bound(input.bytes.len()),
            || mmap_all(&misaligned, &strict),
        );
        // the legacy 4-byte prefix (no continuation marker) of a single message
        if input.is_single() && input.bytes[..4] == ipc::CONTINUATION {
            let out = h.check(&format!("{} legacy prefix", input.name), &input.bytes[4..]);
            if out.full_err != [false; 3] {
                h.fail(format!(
                    "{} legacy prefix: refused by (decode, stream, mmap) = {:?}",
                    input.name, out.full_err
                ));
            }
        }
        // a reader handing out one byte at a time reads the same tensors
        let trickled: Vec<String> = TensorStreamReader::new(Trickle(&input.bytes))
            .map(|m| json_line(&m.unwrap().tensor).unwrap())
            .collect();
        let whole: Vec<String> = TensorStreamReader::new(&input.bytes[..])
            .map(|m| json_line(&m.unwrap().tensor).unwrap())
            .collect();
        assert_eq!(trickled, whole, "{}", input.name);
    }
    h.finish();
}

/// A `Read` that returns one byte per call, with an `Interrupted` error in between.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        static FLIP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if FLIP.fetch_xor(true, std::sync::atomic::Ordering::Relaxed) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        match (self.0.split_first(), buf.first_mut()) {
            (Some((&b, rest)), Some(slot)) => {
                *slot = b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

#[test]
fn every_truncation_is_an_error_unless_it_ends_between_messages() {
    let mut h = Harness::new("truncations");
    for input in all_inputs() {
        for cut in 0..input.bytes.len() {
            let label = format!(
                "{} truncated to {cut} of {} bytes",
                input.name,
                input.bytes.len()
            );
            let out = h.check(&label, &input.bytes[..cut]);
            if !input.boundaries.contains(&cut) && out.full_err != [true; 3] {
                h.fail(format!(
                    "{label}: accepted by (decode, stream, mmap) = {:?}",
                    out.full_err.map(|e| !e)
                ));
            }
        }
    }
    h.finish();
}

#[test]
fn random_byte_flips() {
    let mut h = Harness::new("byte flips");
    for input in all_inputs() {
        h.big_reads_ok = BIG_READ_INPUTS.contains(&input.name.as_str());
        let count = if input.is_single() { 160 } else { 48 };
        for (label, bytes) in flip_variants(&input, count) {
            h.check(&label, &bytes);
        }
    }
    h.finish();
}

/// The inputs whose variants go through the stream reader even when they announce
/// a big read (see [`Harness::big_reads_ok`]).
const BIG_READ_INPUTS: [&str; 3] = [
    "built/csr_f32_i32",
    "golden/dense_f64.arrow",
    "built/stream_of_all",
];

#[test]
fn lying_lengths_offsets_sizes_and_strides() {
    let mut h = Harness::new("lying fields");
    let mut located = 0;
    for input in all_inputs() {
        if input.is_single() {
            let fields = fields_of(&input.bytes, input.message_starts[0]);
            let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            // the walk found what it was written to find
            assert!(
                names.contains(&"metadata length") && names.contains(&"data.length"),
                "{}: {names:?}",
                input.name
            );
            let body_len = names.contains(&"Message.bodyLength");
            assert!(
                body_len || input.name.contains("empty") || input.name.contains("nnz0"),
                "{}: no bodyLength field",
                input.name
            );
            located += fields.len();
        }
        h.big_reads_ok = BIG_READ_INPUTS.contains(&input.name.as_str());
        for (label, bytes) in lie_variants(&input) {
            h.check(&label, &bytes);
        }
    }
    eprintln!("lying fields: {located} fields located");
    h.finish();
}

#[test]
fn corrupted_index_buffers_in_the_body() {
    let mut h = Harness::new("body corruption");
    for input in all_inputs().into_iter().filter(|i| i.is_single()) {
        let variants = body_variants(&input);
        // (libarrow's `*_negzero_*` golden files decode to empty tensors whose
        // buffers are not in the body: tests/golden.rs corrupts their index)
        let sparse = !input.name.contains("dense")
            && !input.name.contains("empty")
            && !input.name.contains("nnz0")
            && !input.name.contains("negzero");
        assert!(
            !sparse || !variants.is_empty(),
            "{}: no index buffer found in the body",
            input.name
        );
        for (label, bytes) in variants {
            h.check(&label, &bytes);
        }
    }
    h.finish();
}

fn single_message(name: &str) -> Vec<u8> {
    let (_, t, m, o) = built_tensors()
        .into_iter()
        .find(|(n, ..)| *n == name)
        .unwrap();
    ipc::encode(&t, &m, &o).unwrap().to_vec()
}

fn field_pos(bytes: &[u8], name: &str) -> Field {
    fields_of(bytes, 0)
        .into_iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"))
}

/// Run every reader on `bytes` and require an error, quickly, with no allocation
/// above `limit` (`stream_limit` for the stream reader).
fn assert_refused_cheaply(label: &str, bytes: &[u8], limit: usize, stream_limit: usize) {
    let buf = Buffer::from_slice_ref(bytes);
    let opts = StreamReadOptions::default();
    let runs: [(&str, usize, &dyn Fn() -> bool); 3] = [
        ("decode", limit, &|| {
            decode_all(&buf, &opts).unwrap().iter().any(|r| r.is_err())
        }),
        ("TensorStreamReader", stream_limit, &|| {
            drain_stream(bytes, &opts)
                .unwrap()
                .iter()
                .any(|r| r.is_err())
        }),
        ("MmapReader", limit, &|| {
            mmap_all(&buf, &opts).unwrap().iter().any(|r| r.is_err())
        }),
    ];
    for (what, lim, run) in runs {
        let (r, largest, dt) = guarded(run);
        assert_eq!(r, Ok(true), "{label}: {what} did not refuse the input");
        assert!(
            largest <= lim,
            "{label}: {what} allocated {largest} bytes at once (limit {lim})"
        );
        assert!(dt < Duration::from_secs(2), "{label}: {what} took {dt:?}");
    }
}

#[test]
fn huge_announced_lengths_fail_fast_without_allocating_them() {
    const MIB: usize = 1 << 20;
    // a 2 GiB metadata announced, then the input ends (continuation and legacy prefixes)
    let mut two_gib = ipc::CONTINUATION.to_vec();
    two_gib.extend_from_slice(&i32::MAX.to_le_bytes());
    two_gib.extend_from_slice(&[0; 24]);
    assert_refused_cheaply("2 GiB metadata", &two_gib, MIB, MIB);
    assert_refused_cheaply("2 GiB metadata, legacy prefix", &two_gib[4..], MIB, MIB);
    // just under the metadata limit: the stream reader allocates at most one chunk
    let mut big_meta = ipc::CONTINUATION.to_vec();
    big_meta.extend_from_slice(&(64i32 << 20).to_le_bytes());
    big_meta.extend_from_slice(&[0x10; 64]);
    assert_refused_cheaply("64 MiB metadata", &big_meta, MIB, 64 * MIB + 4096);

    // a real message whose bodyLength says 1 TiB (or more), then the input ends
    let base = single_message("csr_f32_i32");
    let body = field_pos(&base, "Message.bodyLength");
    for announced in [1i64 << 40, 1 << 50, i64::MAX] {
        let mut b = base.clone();
        write_int(&mut b, body.pos, 8, announced);
        assert_refused_cheaply(&format!("bodyLength {announced}"), &b, MIB, 64 * MIB + 4096);
        // with the body actually present but short, and as part of a stream
        let mut s = b.clone();
        s.extend_from_slice(&ipc::END_OF_STREAM);
        assert_refused_cheaply(
            &format!("bodyLength {announced} + end-of-stream"),
            &s,
            MIB,
            64 * MIB + 4096,
        );
    }
    // a buffer announced far beyond the body
    for name in [
        "data.offset",
        "data.length",
        "CSX.indptrBuffer.length",
        "CSX.indicesBuffer.offset",
    ] {
        let f = field_pos(&base, name);
        for v in [1i64 << 40, i64::MAX, -1] {
            let mut b = base.clone();
            write_int(&mut b, f.pos, 8, v);
            assert_refused_cheaply(&format!("{name} {v}"), &b, MIB, MIB);
        }
    }
    // a shape announcing 2^62 x 2 elements in a CSR message: the indptr it implies
    // is not in the body, and nothing that large is allocated
    let f = field_pos(&base, "shape[0].size");
    let mut b = base.clone();
    write_int(&mut b, f.pos, 8, 1 << 62);
    assert_refused_cheaply("CSR with 2^62 rows", &b, MIB, MIB);
}

#[test]
fn trusted_tensors_with_bad_indices_convert_without_panicking() {
    let mut h = Harness::new("trusted bad indices");
    // CSR whose indptr goes back and forth between 0 and nnz: trusted decoding
    // accepts it (starts at 0, ends at nnz); walking it must not blow up
    // quadratically.
    let rows = 2000usize;
    let indptr: Vec<i64> = (0..=rows as i64).collect();
    let indices: Vec<i32> = (0..rows as i32).collect();
    let m = CsxMatrix::<u8, i32, i64>::try_new(
        vec![rows, rows],
        CompressedAxis::Row,
        indptr.into(),
        indices.into(),
        vec![1u8; rows].into(),
    )
    .unwrap();
    let base = ipc::encode(&m.into(), &[], &StreamWriteOptions::default())
        .unwrap()
        .to_vec();
    let input = Input::new("csr 2000x2000".into(), base);
    let variants = body_variants(&input);
    for (label, bytes) in variants
        .iter()
        .filter(|(l, _)| l.contains("alternating") || l.contains("1000") || l.contains("-1"))
    {
        h.check(label, bytes);
    }

    // COO / CSR / CSF built with Validation::Trusted from out-of-range and negative
    // indices
    let trusted = |t: arrow_sparse::Result<AnyTensor>| t.expect("trusted construction");
    let coo_neg = trusted(
        CooTensor::<f64, i32>::try_new_with(
            vec![2, 3],
            CoordLayout::RowMajor,
            EntryOrder::Any,
            vec![0, 1, -1, 5].into(),
            vec![1.0, 2.0].into(),
            &TensorOptions::trusted(),
        )
        .map(Into::into),
    );
    let coo_oob = trusted(
        CooTensor::<f32, i64>::try_new_with(
            vec![2, 3],
            CoordLayout::ColumnMajor,
            EntryOrder::Canonical,
            vec![7, 1, 1, 9].into(),
            vec![1.0, 2.0].into(),
            &TensorOptions::trusted(),
        )
        .map(Into::into),
    );
    let csr_oob = trusted(
        CsxMatrix::<i32, i16, i16>::try_new_with(
            vec![2, 3],
            CompressedAxis::Row,
            vec![0, 1, 2].into(),
            vec![3, -2].into(),
            vec![1, 2].into(),
            &TensorOptions::trusted(),
        )
        .map(Into::into),
    );
    let csc_dec = trusted(
        CsxMatrix::<i32, i16, i16>::try_new_with(
            vec![3, 3],
            CompressedAxis::Column,
            vec![0, 2, 0, 2].into(),
            vec![0, 1].into(),
            vec![1, 2].into(),
            &TensorOptions::trusted(),
        )
        .map(Into::into),
    );
    let csf_bad = trusted(
        arrow_sparse::CsfTensor::<u8, i8, i8>::try_new_with(
            vec![2, 3],
            vec![1, 0],
            vec![vec![0, 2, 2].into()],
            vec![vec![5, -1].into(), vec![9, -7].into()],
            vec![1, 2].into(),
            &TensorOptions::trusted(),
        )
        .map(Into::into),
    );
    for (name, t) in [
        ("coo negative", coo_neg),
        ("coo column-major out of range", coo_oob),
        ("csr out of range", csr_oob),
        ("csc decreasing indptr", csc_dec),
        ("csf out of range", csf_bad),
    ] {
        let msg = TensorMessage::from(t);
        h.variants += 1;
        h.exercise(name, &msg, false, 64);
        // and once more through an encoded message decoded with trusted validation
        if let Ok(bytes) =
            ipc::encode(&msg.tensor, &[], &StreamWriteOptions::default()).map(|m| m.to_vec())
        {
            h.check(&format!("{name} (encoded)"), &bytes);
        }
    }
    h.finish();
}

#[test]
fn conversions_of_huge_shapes_are_errors_not_panics() {
    let mut h = Harness::new("huge shapes");
    let max = i64::MAX as usize;
    let shapes = [vec![max, 2], vec![2, max], vec![max, max], vec![1 << 62, 3]];
    for shape in shapes {
        let coo: AnyTensor =
            CooTensor::<f32, i64>::from_entries(shape.clone(), &[(vec![0, 1], 1.5)])
                .unwrap()
                .into();
        for to in [Format::Csr, Format::Csc, Format::Dense] {
            // CSR / CSC need shape[major] + 1 indptr entries; dense needs them all
            let impossible = match to {
                Format::Csr => shape[0] > 1 << 40,
                Format::Csc => shape[1] > 1 << 40,
                _ => true,
            };
            let r = h.call(
                &format!("{shape:?}"),
                &format!("convert({to})"),
                1 << 20,
                || coo.convert(to, IndexType::Int64, None).map(|t| t.nnz()),
            );
            if impossible && matches!(r, Some(Ok(_))) {
                h.fail(format!("{shape:?}: convert({to}) succeeded"));
            }
        }
        h.call(&format!("{shape:?}"), "convert(csf)", 1 << 20, || {
            coo.convert(Format::Csf, IndexType::Int64, Some(&[1, 0]))
                .map(|t| t.nnz())
        });
        h.call(&format!("{shape:?}"), "json_line", 1 << 20, || {
            json_line(&coo)
        });
    }
    h.finish();
}

#[test]
fn cli_reports_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let base = single_message("csr_f32_i32");
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    files.push(("truncated.arrow", base[..base.len() - 5].to_vec()));
    files.push((
        "garbage.arrow",
        b"this is not an arrow stream, not even close\n".to_vec(),
    ));
    let mut b = base.clone();
    write_int(&mut b, 8, 4, 0x7FFF_0000); // root offset far outside the flatbuffer
    files.push(("bad_root_offset.arrow", b));
    let mut b = base.clone();
    write_int(&mut b, field_pos(&base, "shape length").pos, 4, 0x7FFF_FFFF); // verifier error with a trace
    files.push(("bad_shape_vector.arrow", b));
    let mut b = base.clone();
    write_int(
        &mut b,
        field_pos(&base, "Message.bodyLength").pos,
        8,
        1 << 40,
    );
    files.push(("huge_body.arrow", b));
    let input = Input::new("csr".into(), base.clone());
    let (_, b) = body_variants(&input)
        .into_iter()
        .find(|(l, _)| l.contains("indptr") && l.contains("reversed"))
        .unwrap();
    files.push(("decreasing_indptr.arrow", b));
    // a valid message followed by a corrupt one
    let mut b = base.clone();
    b.extend_from_slice(&base[..base.len() / 2]);
    files.push(("good_then_truncated.arrow", b));

    let mut paths: Vec<PathBuf> = files
        .iter()
        .map(|(name, bytes)| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        })
        .collect();
    paths.push(dir.path().join("does-not-exist.arrow"));

    let exe = env!("CARGO_BIN_EXE_arrow-sparse");
    let mut problems = Vec::new();
    for p in &paths {
        let out_file = dir.path().join("converted.arrow");
        let runs: [Vec<&std::ffi::OsStr>; 3] = [
            vec!["dump".as_ref(), p.as_os_str()],
            vec!["inspect".as_ref(), p.as_os_str()],
            vec![
                "convert".as_ref(),
                p.as_os_str(),
                out_file.as_os_str(),
                "--to".as_ref(),
                "coo".as_ref(),
            ],
        ];
        for args in runs {
            let out = Command::new(exe).args(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            // exit code 3: invalid input; 1: the file cannot be opened (I/O)
            let missing = p.ends_with("does-not-exist.arrow");
            let ok = out.status.code() == Some(if missing { 1 } else { 3 })
                && stderr.starts_with("arrow-sparse: error:")
                && stderr.ends_with('\n')
                && stderr.matches('\n').count() == 1
                && !stderr.contains("panicked");
            if !ok {
                problems.push(format!(
                    "{args:?}: exit {:?}, stderr {stderr:?}",
                    out.status.code()
                ));
            }
            if out_file.exists() {
                problems.push(format!("{args:?}: wrote {}", out_file.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "CLI problems:\n{}",
        problems.join("\n")
    );
}

/// Hostile `arrow_sparse.levels` extension metadata (format/SPEC.md 8.6) on
/// valid storage messages: every case is a typed error of the expected kind,
/// never a panic, and nothing much larger than the message is allocated.
#[test]
fn hostile_level_metadata_is_a_typed_error() {
    use arrow_sparse::Error;
    let m = CooTensor::<f64, i64>::from_entries(
        vec![3, 4],
        &[(vec![0, 1], 1.0), (vec![0, 3], 2.0), (vec![2, 3], 3.0)],
    )
    .unwrap();
    let csr: AnyTensor = m.to_csx::<i32, i32>(CompressedAxis::Row).unwrap().into();
    let csf: AnyTensor = m.to_csf::<i32, i32>(&[0, 1]).unwrap().into();
    // a CSF whose level 0 repeats a coordinate (valid for Arrow, not for a
    // level 0 declared unique)
    let repeated = AnyTensor::Csf(
        arrow_sparse::AnyCsf::try_new(
            vec![3, 4],
            vec![0, 1],
            vec![IndexBuffer::Int32(vec![0, 1, 2].into())],
            vec![
                IndexBuffer::Int32(vec![0, 0].into()),
                IndexBuffer::Int32(vec![1, 3].into()),
            ],
            arrow_sparse::ValueBuffer::Float64(vec![1.0, 2.0].into()),
            &TensorOptions::default(),
        )
        .unwrap(),
    );
    let json = |levels: &str, order: &str| {
        format!(
            r#"{{"version":1,"levels":{levels},"axis_order":{order},"index_type":"int32","indptr_type":"int32"}}"#
        )
    };
    let many = format!("[{}]", vec!["\"dense\""; 100_000].join(","));
    let long = format!("[\"{}\",\"compressed\"]", "d".repeat(1 << 20));
    type Check = fn(&Error) -> bool;
    let parse: Check = |e| matches!(e, Error::Parse { .. });
    let invariant: Check = |e| matches!(e, Error::Invariant { .. } | Error::Length { .. });
    let cases: Vec<(&str, &AnyTensor, Option<String>, Check)> = vec![
        ("no metadata", &csr, None, parse),
        ("not JSON", &csr, Some("{".into()), parse),
        ("not an object", &csr, Some("[1]".into()), parse),
        ("version 2", &csr, Some(json(r#"["dense","compressed"]"#, "[0,1]").replace("\"version\":1", "\"version\":2")), parse),
        ("no levels", &csr, Some(r#"{"version":1,"axis_order":[0,1],"index_type":"int32","indptr_type":"int32"}"#.into()), parse),
        ("levels not an array", &csr, Some(json("\"dense\"", "[0,1]")), parse),
        ("no level", &csr, Some(json("[]", "[]")), parse),
        ("100,000 levels", &csr, Some(json(&many, "[0,1]")), parse),
        ("a 1 MiB level name", &csr, Some(json(&long, "[0,1]")), parse),
        ("unknown level", &csr, Some(json(r#"["dense","loose_compressed"]"#, "[0,1]")), parse),
        ("level not a string", &csr, Some(json(r#"["dense",7]"#, "[0,1]")), parse),
        ("short axis order", &csr, Some(json(r#"["dense","compressed"]"#, "[0]")), parse),
        ("negative axis", &csr, Some(json(r#"["dense","compressed"]"#, "[0,-1]")), parse),
        ("axis order not a permutation", &csr, Some(json(r#"["dense","compressed"]"#, "[1,1]")), |e| matches!(e, Error::Invariant { .. } | Error::Shape { .. })),
        ("bad index type", &csr, Some(json(r#"["dense","compressed"]"#, "[0,1]").replace("\"index_type\":\"int32\"", "\"index_type\":\"int128\"")), parse),
        ("missing indptr type", &csr, Some(r#"{"version":1,"levels":["dense","compressed"],"axis_order":[0,1],"index_type":"int32"}"#.into()), parse),
        ("singleton after dense", &csr, Some(json(r#"["dense","singleton"]"#, "[0,1]")), invariant),
        ("properties on dense", &csr, Some(json(r#"["dense(nonunique)","compressed"]"#, "[0,1]")), invariant),
        ("DCSR levels on a CSR message", &csr, Some(json(r#"["compressed","compressed"]"#, "[0,1]")), invariant),
        ("CSC levels on a CSR message", &csr, Some(json(r#"["dense","compressed"]"#, "[1,0]")), invariant),
        ("dense levels on a CSR message", &csr, Some(json(r#"["dense","dense"]"#, "[0,1]")), invariant),
        ("3 levels on a 2-D message", &csr, Some(json(r#"["dense","dense","compressed"]"#, "[0,1,2]")), |e| matches!(e, Error::Shape { .. } | Error::Invariant { .. })),
        ("an incomplete dense level", &csf, Some(json(r#"["dense","compressed"]"#, "[0,1]")), invariant),
        ("a singleton level with two children", &csf, Some(json(r#"["compressed(nonunique)","singleton"]"#, "[0,1]")), invariant),
        ("unique declared, coordinates repeat", &repeated, Some(json(r#"["compressed","compressed"]"#, "[0,1]")), invariant),
        ("wider index type than stored", &csr, Some(json(r#"["dense","compressed"]"#, "[0,1]").replace("\"index_type\":\"int32\"", "\"index_type\":\"int8\"")), |_| true),
    ];
    let mut failures = Vec::new();
    for (what, storage, metadata, check) in cases {
        let mut kv = vec![(
            "ARROW:extension:name".to_string(),
            "arrow_sparse.levels".to_string(),
        )];
        if let Some(m) = metadata {
            kv.push(("ARROW:extension:metadata".to_string(), m));
        }
        let bytes: Buffer = ipc::encode(storage, &kv, &StreamWriteOptions::default())
            .unwrap()
            .to_vec()
            .into();
        let (r, largest, _) = guarded(|| {
            ipc::decode(&bytes, &StreamReadOptions::default()).map(|m| m.map(|x| x.0.tensor))
        });
        match r {
            Err(p) => failures.push(format!("{what}: PANIC {p}")),
            Ok(Ok(t)) if what == "wider index type than stored" => {
                // int32 indices that fit int8 are read as int8: a valid tensor
                assert_eq!(t.unwrap().index_type(), Some(IndexType::Int8));
            }
            Ok(Ok(t)) => failures.push(format!("{what}: read as {:?}", t.map(|t| t.format()))),
            Ok(Err(e)) if !check(&e) => failures.push(format!("{what}: unexpected error {e:?}")),
            Ok(Err(_)) => {}
        }
        if largest > 16 * bytes.len() + (1 << 20) {
            failures.push(format!(
                "{what}: allocated {largest} bytes for a {}-byte message",
                bytes.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

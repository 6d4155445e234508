//! Side-by-side timing of arrow-sparse and libarrow 26 on the same CSR file.
//!
//! ```text
//! cargo run --release --example bench_ipc -- --peer target/peer/arrow-sparse-peer
//! ```
//! (`benches/compare_ipc.sh` builds the peer and runs this.)
//!
//! For each size (10^5, 10^6 and `--nnz`, default 10^7 nnz) it writes a CSR f64 /
//! int64 matrix (`benches/compare/gen.rs`) into a temporary directory, times
//! arrow-sparse best-of-`--iters` (default 20) with `std::time::Instant`, runs
//! `arrow-sparse-peer bench-csr FILE ITERS` on the same file, repeats both for
//! `--rounds` (default 3) alternating rounds, and prints the best figures as a table.
//! Then it times sub-steps of the full-validation read to show where the time goes.
//!
//! Operations (the peer measures the same ones):
//! * write: `encode` + `write_to` into a pre-reserved, pre-faulted Vec (libarrow:
//!   `WriteSparseTensor` into a preallocated buffer, 1 memcpy thread). GB/s are
//!   message bytes per second.
//! * mmap read (full / trusted): `MmapReader::open_with` + `get(0)` (libarrow:
//!   `MemoryMappedFile::Open` + `MessageReader` + `ReadSparseTensor`, which does no
//!   O(nnz) validation). GB/s are index bytes (indptr + indices) per second.
//!   Dropping the reader (munmap) is not timed, on either side.

use arrow_sparse::TensorOptions;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use arrow_buffer::Buffer;
use arrow_sparse::ipc::{self, MmapReader, StreamReadOptions, StreamWriteOptions};
use arrow_sparse::{AnyCsx, AnyTensor, IndexSlice, Validation};

#[path = "../benches/compare/gen.rs"]
#[allow(dead_code)]
mod datagen;

struct Args {
    nnz: usize,
    iters: usize,
    peer: Option<PathBuf>,
    dir: Option<PathBuf>,
    rounds: usize,
}

fn parse_args() -> Args {
    let mut a = Args {
        nnz: 10_000_000,
        iters: 20,
        peer: None,
        dir: None,
        rounds: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || {
            it.next()
                .unwrap_or_else(|| die(&format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--nnz" => a.nnz = val().parse().unwrap_or_else(|_| die("--nnz: not a number")),
            "--iters" => {
                a.iters = val()
                    .parse()
                    .unwrap_or_else(|_| die("--iters: not a number"))
            }
            "--peer" => a.peer = Some(val().into()),
            "--dir" => a.dir = Some(val().into()),
            "--rounds" => {
                a.rounds = val()
                    .parse()
                    .unwrap_or_else(|_| die("--rounds: not a number"))
            }
            "-h" | "--help" => {
                println!(
                    "usage: bench_ipc [--nnz N] [--iters N] [--rounds N] [--peer PATH] [--dir DIR]"
                );
                std::process::exit(0);
            }
            other => die(&format!("unknown argument {other}")),
        }
    }
    if a.iters == 0 || a.rounds == 0 {
        die("--iters and --rounds must be positive");
    }
    a
}

fn die(msg: &str) -> ! {
    eprintln!("bench_ipc: {msg}");
    std::process::exit(2)
}

/// Best (minimum) wall time of `iters` runs of `f`; what `f` returns is dropped
/// outside the timed region.
fn best_of<T>(iters: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..iters {
        let t0 = Instant::now();
        let out = f();
        let dt = t0.elapsed();
        drop(black_box(out));
        best = best.min(dt);
    }
    best.as_secs_f64()
}

struct Peer {
    bytes: usize,
    index_bytes: usize,
    write_s: f64,
    mmap_read_s: f64,
}

fn run_peer(peer: &Path, file: &Path, iters: usize) -> Peer {
    let out = Command::new(peer)
        .arg("bench-csr")
        .arg(file)
        .arg(iters.to_string())
        .output()
        .unwrap_or_else(|e| die(&format!("running {}: {e}", peer.display())));
    if !out.status.success() {
        die(&format!(
            "peer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        die(&format!(
            "peer output {:?}: {e}",
            String::from_utf8_lossy(&out.stdout)
        ))
    });
    let num = |k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| die(&format!("peer output lacks {k}")))
    };
    Peer {
        bytes: num("bytes") as usize,
        index_bytes: num("index_bytes") as usize,
        write_s: num("write_s"),
        mmap_read_s: num("mmap_read_s"),
    }
}

fn open_get(path: &Path, options: &StreamReadOptions) -> (MmapReader, ipc::TensorMessage) {
    let r = MmapReader::open_with(path, &options.clone()).expect("open");
    let m = r.get(0).expect("get");
    (r, m)
}

struct Row {
    op: String,
    ours_s: f64,
    ours_bytes: usize,
    theirs: Option<(f64, usize)>,
}

fn gbps(bytes: usize, s: f64) -> f64 {
    bytes as f64 / s / 1e9
}

fn fmt_time(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} us", s * 1e6)
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "| {:<40} | {:>10} | {:>10} | {:>10} | {:>10} | {:>14} |",
        "operation", "ours", "ours GB/s", "libarrow", "arrow GB/s", "ours/libarrow"
    );
    println!(
        "|{:-<42}|{:->12}|{:->12}|{:->12}|{:->12}|{:->16}|",
        "", ":", ":", ":", ":", ":"
    );
    for r in rows {
        let (theirs, theirs_gb, ratio) = match r.theirs {
            Some((s, b)) => (
                fmt_time(s),
                format!("{:.2}", gbps(b, s)),
                format!("{:.2}x", r.ours_s / s),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        println!(
            "| {:<40} | {:>10} | {:>10.2} | {:>10} | {:>10} | {:>14} |",
            r.op,
            fmt_time(r.ours_s),
            gbps(r.ours_bytes, r.ours_s),
            theirs,
            theirs_gb,
            ratio
        );
    }
}

// --- the O(nnz) checks of src/tensor/validate.rs, timed one by one, and the
// max-fold bounds check they replaced (kept as a reference for the speed-up).

fn crate_check_bounds(s: &[i64], bound: usize) -> bool {
    arrow_sparse::tensor::validate::check_bounds(
        "indices",
        arrow_sparse::IndexSlice::Int64(s),
        bound,
    )
    .is_ok()
}

fn crate_check_indptr(s: &[i64]) -> bool {
    let end = s.last().copied().unwrap_or(0) as usize;
    arrow_sparse::tensor::validate::check_indptr("indptr", arrow_sparse::IndexSlice::Int64(s), end)
        .is_ok()
}

/// The previous bounds check: a max-fold, which needs an unsigned 64-bit max that
/// baseline x86-64 (SSE2) lacks and emulates with about 20 instructions per pair.
fn max_fold_bounds(s: &[i64], bound: usize) -> bool {
    use arrow_buffer::ArrowNativeType;
    s.chunks(4096)
        .all(|c| c.iter().fold(0usize, |m, x| m.max(x.as_usize())) < bound)
        || s.is_empty()
}

/// Plain streaming read of the same bytes: what memory bandwidth allows.
fn stream_max(s: &[i64]) -> i64 {
    s.chunks(4096)
        .map(|c| c.iter().fold(0i64, |m, &x| m.max(x)))
        .max()
        .unwrap_or(0)
}

/// Touch one byte per 4 KiB page (forces the page faults of a fresh mapping).
fn touch_pages(b: &Buffer) -> u64 {
    b.as_slice().iter().step_by(4096).map(|&x| x as u64).sum()
}

fn csx(t: &AnyTensor) -> &AnyCsx {
    match t {
        AnyTensor::Csx(m) => m,
        _ => die("not a CSX tensor"),
    }
}

fn i64_slice(s: IndexSlice<'_>) -> &[i64] {
    match s {
        IndexSlice::Int64(s) => s,
        _ => die("not int64"),
    }
}

fn main() {
    let args = parse_args();
    let tmp;
    let dir = match &args.dir {
        Some(d) => {
            std::fs::create_dir_all(d).expect("create --dir");
            d.clone()
        }
        None => {
            tmp = tempfile::tempdir().expect("tempdir");
            tmp.path().to_path_buf()
        }
    };
    let mut sizes = vec![100_000, 1_000_000, args.nnz];
    sizes.sort_unstable();
    sizes.dedup();
    let big_n = args.nnz;
    let iters = args.iters;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    println!(
        "bench_ipc: CSR f64 values, int64 indptr + indices, {} columns, best of {iters} x {} rounds",
        datagen::COLS,
        args.rounds
    );
    println!("available parallelism: {cores}; dir: {}", dir.display());

    let mut files = Vec::new();
    let mut big = None;
    for &n in &sizes {
        let t = datagen::csr_any(n, 42);
        let path = dir.join(format!("csr_f64_i64_{}.arrows", datagen::size_label(n)));
        ipc::write_tensor_stream(&path, [&t.clone().into()], &StreamWriteOptions::default())
            .expect("write file");
        let len = std::fs::metadata(&path).expect("stat").len();
        println!(
            "  {}: {} x {}, nnz {n}, file {len} bytes, index bytes {}",
            path.display(),
            datagen::rows_for(n),
            datagen::COLS,
            t.index_bytes()
        );
        files.push((n, path, t.index_bytes()));
        if n == big_n {
            big = Some(t);
        }
    }
    let big = big.expect("big tensor");
    let big_path = files
        .iter()
        .find(|f| f.0 == big_n)
        .map(|f| f.1.clone())
        .expect("big file");
    let big_label = datagen::size_label(big_n);

    let msg_len = ipc::encode(&big, &[], &StreamWriteOptions::default())
        .expect("encode")
        .len();
    // Reserve and write once so the pages are faulted in (vec![0; n] would not:
    // calloc maps lazily zeroed pages), as the peer memsets its buffer.
    let mut out: Vec<u8> = Vec::with_capacity(msg_len);
    out.resize(msg_len, 1);
    let big_i = files.iter().position(|f| f.0 == big_n).unwrap_or(0);

    // Rounds alternate the peer and us, so background load hits both alike; each
    // figure is the best over all rounds of the best of `iters`.
    let mut rows: Vec<Row> = Vec::new();
    for round in 0..args.rounds {
        let peers: Vec<Option<Peer>> = files
            .iter()
            .map(|(_, p, _)| args.peer.as_deref().map(|peer| run_peer(peer, p, iters)))
            .collect();
        let mut this = Vec::new();

        // write
        let write_s = best_of(iters, || {
            out.clear();
            let m =
                ipc::encode(black_box(&big), &[], &StreamWriteOptions::default()).expect("encode");
            m.write_to(&mut out).expect("write");
            out.len()
        });
        let big_peer = peers[big_i].as_ref();
        if let Some(p) = big_peer {
            assert_eq!(p.bytes, msg_len, "message size differs from libarrow's");
            assert_eq!(
                p.index_bytes,
                big.index_bytes(),
                "index bytes differ from libarrow's"
            );
        }
        this.push(Row {
            op: format!("write {big_label} (encode+write, msg bytes)"),
            ours_s: write_s,
            ours_bytes: msg_len,
            theirs: big_peer.map(|p| (p.write_s, p.bytes)),
        });

        // mmap reads
        for (validation, name) in [(Validation::Full, "full"), (Validation::Trusted, "trusted")] {
            let options = StreamReadOptions::default().with_validation(validation);
            for ((n, path, index_bytes), peer) in files.iter().zip(&peers) {
                let s = best_of(iters, || open_get(path, &options));
                this.push(Row {
                    op: format!(
                        "mmap open+get {name} {} (index bytes)",
                        datagen::size_label(*n)
                    ),
                    ours_s: s,
                    ours_bytes: *index_bytes,
                    theirs: peer.as_ref().map(|p| (p.mmap_read_s, p.index_bytes)),
                });
            }
        }
        if round == 0 {
            rows = this;
        } else {
            for (r, t) in rows.iter_mut().zip(this) {
                r.ours_s = r.ours_s.min(t.ours_s);
                if let (Some(a), Some(b)) = (&mut r.theirs, t.theirs) {
                    a.0 = a.0.min(b.0);
                }
            }
        }
    }
    // The file we wrote and libarrow's rewrite of it are the same bytes.
    if let Some(peer) = &args.peer {
        let again = dir.join("libarrow_rewrite.arrows");
        let st = Command::new(peer)
            .arg("rewrite")
            .arg(&big_path)
            .arg(&again)
            .status()
            .unwrap_or_else(|e| die(&format!("running {}: {e}", peer.display())));
        let same = st.success()
            && std::fs::read(&again).expect("read rewrite")
                == std::fs::read(&big_path).expect("read file");
        println!("libarrow rewrite of the {big_label} file is byte-identical: {same}");
        let _ = std::fs::remove_file(&again);
    }

    println!();
    print_table(&rows);
    println!();
    println!("ours/libarrow = our time / libarrow's time (below 1 = we are faster).");
    println!(
        "libarrow's ReadSparseTensor does no O(nnz) validation: compare its read with our trusted read."
    );

    // --- Where the full-validation read spends its time (10^7 nnz).
    println!();
    println!(
        "sub-steps of mmap open + get(0) with full validation, {big_label} nnz, best of {iters}:"
    );
    let index_bytes = big.index_bytes();
    let trusted = StreamReadOptions::default().with_validation(Validation::Trusted);
    let full = StreamReadOptions::default();
    let step = |name: &str, s: f64| {
        println!(
            "  {:<58} {:>10}  {:>7.2} GB/s of index bytes",
            name,
            fmt_time(s),
            gbps(index_bytes, s)
        );
    };
    let t_full = best_of(iters, || open_get(&big_path, &full));
    step("mmap open + get, full", t_full);
    let t_trusted = best_of(iters, || open_get(&big_path, &trusted));
    step("mmap open + get, trusted", t_trusted);
    let t_fault = best_of(iters, || {
        let (r, m) = open_get(&big_path, &trusted);
        let c = csx(&m.tensor);
        black_box(touch_pages(c.indptr().inner()) + touch_pages(c.indices().inner()));
        (r, m)
    });
    step(
        "mmap open + get, trusted + touch 1 byte per 4 KiB page",
        t_fault,
    );
    // Full validation alone, on a mapping whose pages are already faulted in.
    let mut best_validate_mapped = Duration::MAX;
    for _ in 0..iters {
        let (r, m) = open_get(&big_path, &trusted);
        let c = csx(&m.tensor);
        black_box(touch_pages(c.indptr().inner()) + touch_pages(c.indices().inner()));
        let t0 = Instant::now();
        let v = AnyCsx::try_new(
            c.shape().to_vec(),
            c.axis(),
            c.indptr().clone(),
            c.indices().clone(),
            c.values().clone(),
            &TensorOptions::default(),
        );
        best_validate_mapped = best_validate_mapped.min(t0.elapsed());
        black_box(v.expect("valid"));
        drop((r, m));
    }
    step(
        "AnyCsx::try_new Full on the mapped, already-faulted buffers",
        best_validate_mapped.as_secs_f64(),
    );
    let populate = best_of(iters, || {
        let f = std::fs::File::open(&big_path).expect("open");
        // SAFETY: the file is private to this benchmark and not modified while mapped.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .populate()
                .map(&f)
                .expect("mmap")
        };
        let r = MmapReader::from_buffer(Buffer::from(bytes::Bytes::from_owner(map)), &full.clone())
            .expect("index");
        let m = r.get(0).expect("get");
        (r, m)
    });
    step("MAP_POPULATE mmap + from_buffer + get, full", populate);

    let c = csx(&big).clone();
    let indptr = i64_slice(c.indptr().as_slice());
    let indices = i64_slice(c.indices().as_slice());
    let ib = |s: &[i64]| std::mem::size_of_val(s);
    let (pb, xb) = (ib(indptr), ib(indices));
    let sub = |name: &str, s: f64, bytes: usize| {
        println!(
            "  {:<58} {:>10}  {:>7.2} GB/s of its {} bytes",
            name,
            fmt_time(s),
            gbps(bytes, s),
            bytes
        );
    };
    let t = best_of(iters, || {
        AnyCsx::try_new(
            c.shape().to_vec(),
            c.axis(),
            c.indptr().clone(),
            c.indices().clone(),
            c.values().clone(),
            &TensorOptions::default(),
        )
        .expect("valid")
    });
    step("AnyCsx::try_new Full, heap buffers (no mmap)", t);
    sub(
        "  validate::check_indptr (heap)",
        best_of(iters, || black_box(crate_check_indptr(black_box(indptr)))),
        pb,
    );
    assert!(crate_check_bounds(indices, datagen::COLS) && max_fold_bounds(indices, datagen::COLS));
    sub(
        "  validate::check_bounds, sign-bit AND-fold (heap)",
        best_of(iters, || {
            black_box(crate_check_bounds(black_box(indices), datagen::COLS))
        }),
        xb,
    );
    sub(
        "  previous max-fold bounds check (heap, reference)",
        best_of(iters, || {
            black_box(max_fold_bounds(black_box(indices), datagen::COLS))
        }),
        xb,
    );
    sub(
        "  plain OR-fold over indices (bandwidth reference)",
        best_of(iters, || {
            black_box(black_box(indices).iter().fold(0u64, |m, &x| m | x as u64))
        }),
        xb,
    );
    sub(
        "  plain max-fold over indptr (bandwidth reference)",
        best_of(iters, || black_box(stream_max(black_box(indptr)))),
        pb,
    );
    sub(
        "  plain max-fold over indices (bandwidth reference)",
        best_of(iters, || black_box(stream_max(black_box(indices)))),
        xb,
    );
}

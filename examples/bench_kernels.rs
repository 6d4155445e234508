//! Side-by-side timing of the arrow-sparse kernels, scipy.sparse and libarrow 26,
//! with the machine's memory bandwidth measured in the same run.
//!
//! ```text
//! cargo run --release --example bench_kernels -- --peer target/peer/arrow-sparse-peer \
//!     --python .venv/bin/python [--nnz 1e6,1e7] [--iters 5] [--budget 1.5] \
//!     [--filter spmv,convert/] [--dir DIR] [--results benches/RESULTS.md]
//! ```
//! (`benches/compare_kernels.sh` builds the peer and runs this.)
//!
//! For each size and sparsity (uniform / power-law rows) it draws the data
//! (`benches/compare/kernel_data.rs`), writes the raw coordinates and values as
//! little-endian binary files plus a JSON sidecar into a temporary directory, and
//! times every case of `benches/compare/kernel_cases.rs` with int32 and int64
//! indices, in a 1-thread rayon pool and in a pool with one thread per core. Then,
//! with its own memory freed, it runs `benches/compare/kernels_scipy.py` on the same
//! files and `arrow-sparse-peer bench-convert` / `bench-csr` on dense Tensor and CSR
//! files it wrote, and prints one table per size: time per kernel for each system,
//! the ratio ours / theirs and our GB/s as a share of the measured copy bandwidth.
//!
//! Every time is the best of up to `--iters` runs (9 by default; no further run
//! starts once `--budget` seconds have passed, but each kernel runs at least
//! twice, so that one slow run, such as a fresh output's page faults stalled by
//! the host, does not decide a row), output freed outside the timed region, on
//! every side. Kernels of a few milliseconds, whose single runs spread most, get
//! all their runs. The bandwidth is a STREAM-style copy of a 256 MiB f64 array
//! into another (bytes = 2 x 8 x length), single-threaded and on all cores.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hint::black_box;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use arrow_sparse::ipc::{self, MmapReader, StreamReadOptions, StreamWriteOptions};
use arrow_sparse::{AnyTensor, Index, Validation};
use rayon::ThreadPool;
use rayon::prelude::*;

#[path = "../benches/compare/gen.rs"]
#[allow(dead_code)]
mod datagen;

#[path = "../benches/compare/kernel_data.rs"]
#[allow(dead_code)]
mod data;

#[path = "../benches/compare/kernel_cases.rs"]
#[allow(dead_code)]
mod cases;

use cases::{Ref, Shared, System, Typed};
use data::{Entries, Sparsity};

struct Args {
    sizes: Vec<usize>,
    iters: usize,
    budget: f64,
    rounds: usize,
    peer: Option<PathBuf>,
    python: Option<PathBuf>,
    script: PathBuf,
    dir: Option<PathBuf>,
    filter: Option<String>,
    results: Option<PathBuf>,
}

fn die(msg: &str) -> ! {
    eprintln!("bench_kernels: {msg}");
    std::process::exit(2)
}

fn parse_count(s: &str) -> Option<usize> {
    let s = s.trim().replace('_', "");
    if let Some((m, e)) = s.split_once(['e', 'E']) {
        let m: usize = m.parse().ok()?;
        let e: u32 = e.parse().ok()?;
        return m.checked_mul(10usize.checked_pow(e)?);
    }
    s.parse().ok()
}

const USAGE: &str = "usage: bench_kernels [--nnz N[,N..]] [--iters N] [--budget SECONDS] [--rounds N] \
[--peer PATH] [--python PATH] [--script PATH] [--dir DIR] [--filter SUBSTRING[,SUBSTRING...]] [--results FILE]";

fn parse_args() -> Args {
    let mut a = Args {
        sizes: vec![10_000_000],
        iters: 9,
        budget: 0.5,
        rounds: 1,
        peer: None,
        python: None,
        script: Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/compare/kernels_scipy.py"),
        dir: None,
        filter: None,
        results: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || {
            it.next()
                .unwrap_or_else(|| die(&format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--nnz" => {
                a.sizes = val()
                    .split(',')
                    .map(|s| parse_count(s).unwrap_or_else(|| die("--nnz: not a count")))
                    .collect()
            }
            "--iters" => {
                a.iters = val()
                    .parse()
                    .unwrap_or_else(|_| die("--iters: not a number"))
            }
            "--budget" => {
                a.budget = val()
                    .parse()
                    .unwrap_or_else(|_| die("--budget: not a number"))
            }
            "--rounds" => {
                a.rounds = val()
                    .parse()
                    .unwrap_or_else(|_| die("--rounds: not a number"))
            }
            "--peer" => a.peer = Some(val().into()),
            "--python" => a.python = Some(val().into()),
            "--script" => a.script = val().into(),
            "--dir" => a.dir = Some(val().into()),
            "--filter" => a.filter = Some(val()),
            "--results" => a.results = Some(val().into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => die(&format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if a.iters == 0 || a.rounds == 0 || a.sizes.contains(&0) {
        die("--iters, --rounds and --nnz must be positive");
    }
    a
}

/// Best wall time of up to `iters` runs of `f`, stopping once `budget` seconds
/// have passed (but not before two runs, unless `iters` is 1); what `f` returns
/// is dropped outside the timed region.
fn best_of<T>(iters: usize, budget: f64, mut f: impl FnMut() -> T) -> f64 {
    let mut best = Duration::MAX;
    let start = Instant::now();
    let mut runs = 0;
    while runs < iters && (runs < 2 || start.elapsed().as_secs_f64() < budget) {
        let t0 = Instant::now();
        let out = f();
        let dt = t0.elapsed();
        drop(black_box(out));
        best = best.min(dt);
        runs += 1;
    }
    best.as_secs_f64()
}

// ------------------------------------------------------------------ bandwidth

/// STREAM copy and read (sum) bandwidth in GB/s in `pool`.
fn bandwidth(pool: &ThreadPool) -> (f64, f64) {
    const LEN: usize = 1 << 25; // 256 MiB of f64
    let src: Vec<f64> = (0..LEN).map(|i| i as f64).collect();
    let mut dst: Vec<f64> = vec![1.0; LEN];
    let threads = pool.current_num_threads();
    let chunk = LEN.div_ceil(threads);
    pool.install(|| {
        let copy = best_of(10, 5.0, || {
            dst.par_chunks_mut(chunk)
                .zip(src.par_chunks(chunk))
                .for_each(|(d, s)| d.copy_from_slice(s));
        });
        // a wrapping integer sum of the bits vectorises (an f64 sum is latency-bound)
        let read = best_of(10, 5.0, || {
            src.par_chunks(chunk)
                .map(|c| c.iter().fold(0u64, |a, x| a.wrapping_add(x.to_bits())))
                .reduce(|| 0, u64::wrapping_add)
        });
        black_box(&dst);
        (
            2.0 * 8.0 * LEN as f64 / copy / 1e9,
            8.0 * LEN as f64 / read / 1e9,
        )
    })
}

// ------------------------------------------------------------------ data files

fn write_bin<T: Copy>(path: &Path, v: &[T]) {
    // SAFETY: T is a plain integer / float type (i64, f64): every byte is initialised
    // and the slice's memory is valid for size_of_val(v) bytes.
    let bytes =
        unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
    std::fs::write(path, bytes).unwrap_or_else(|e| die(&format!("write {}: {e}", path.display())));
}

/// Writes `e` as `{stem}_coords.i64` / `{stem}_values.f64`; returns its JSON entry.
fn write_entries(dir: &Path, stem: &str, e: &Entries) -> serde_json::Value {
    let (c, v) = (format!("{stem}_coords.i64"), format!("{stem}_values.f64"));
    write_bin(&dir.join(&c), &e.coords);
    write_bin(&dir.join(&v), &e.values);
    serde_json::json!({"shape": e.shape, "nnz": e.nnz(), "coords": c, "values": v})
}

/// The raw files and the sidecar `{prefix}.json` for the scipy side.
fn write_dataset(dir: &Path, prefix: &str, s: &Shared) -> PathBuf {
    let perm: Vec<i64> = s.perm.iter().map(|&p| p as i64).collect();
    let perm_file = format!("{prefix}_perm.i64");
    write_bin(&dir.join(&perm_file), &perm);
    let j = serde_json::json!({
        "size": datagen::size_label(s.n),
        "n": s.n,
        "sparsity": s.sparsity.name(),
        "idx": ["i32", "i64"],
        "spmm_n": cases::SPMM_N,
        "alpha": cases::ALPHA,
        "m": write_entries(dir, &format!("{prefix}_m"), &s.m),
        "m2": write_entries(dir, &format!("{prefix}_m2"), &s.m2),
        "mn": write_entries(dir, &format!("{prefix}_mn"), &s.mn),
        "perm": perm_file,
        "t3": write_entries(dir, &format!("{prefix}_t3"), &s.t3),
        "d2": write_entries(dir, &format!("{prefix}_d2"), &s.d2),
    });
    let path = dir.join(format!("{prefix}.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(&j).expect("json"))
        .unwrap_or_else(|e| die(&format!("write {}: {e}", path.display())));
    path
}

fn write_ipc(path: &Path, t: AnyTensor) {
    ipc::write_tensor_stream(path, [&t.into()], &StreamWriteOptions::default())
        .unwrap_or_else(|e| die(&format!("write {}: {e}", path.display())));
}

// ------------------------------------------------------------------ the other systems

/// A running `kernels_scipy.py --serve` on one data set.
struct Scipy {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Scipy {
    fn start(args: &Args, python: &Path, dataset: &Path) -> Scipy {
        let mut child = Command::new(python)
            .arg(&args.script)
            .arg("--serve")
            .arg(dataset)
            .arg(args.iters.to_string())
            .arg(args.budget.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| die(&format!("starting {}: {e}", python.display())));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Scipy {
            child,
            stdin,
            stdout,
        }
    }

    fn ask(&mut self, line: &str) -> serde_json::Value {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .unwrap_or_else(|e| die(&format!("scipy script: {e}")));
        let mut reply = String::new();
        match self.stdout.read_line(&mut reply) {
            Ok(n) if n > 0 => serde_json::from_str(&reply)
                .unwrap_or_else(|e| die(&format!("scipy script reply {reply:?}: {e}"))),
            _ => die(&format!("scipy script exited while answering {line:?}")),
        }
    }
}

impl Drop for Scipy {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

fn run_json(cmd: &mut Command, what: &str) -> serde_json::Value {
    let out = cmd
        .output()
        .unwrap_or_else(|e| die(&format!("running {what}: {e}")));
    if !out.status.success() {
        die(&format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        die(&format!(
            "{what} output {:?}: {e}",
            String::from_utf8_lossy(&out.stdout)
        ))
    })
}

// ------------------------------------------------------------------ measurements

/// One measured row: our best times in both pools and the references.
struct Row {
    sparsity: &'static str,
    idx: &'static str,
    id: String,
    bytes: usize,
    t1: f64,
    tn: f64,
    refs: Vec<Ref>,
}

/// Reference times (best over the rounds), key `system|op|sparsity|idx|size`.
#[derive(Default)]
struct Theirs {
    times: HashMap<String, f64>,
    /// scipy op -> description
    desc: BTreeMap<String, String>,
    /// "op idx" -> index type of scipy's result
    out_idx: BTreeMap<String, String>,
    versions: String,
    axis_orders: BTreeMap<String, Vec<usize>>,
    problems: Vec<String>,
}

impl Theirs {
    fn record(&mut self, key: String, t: f64) {
        let e = self.times.entry(key).or_insert(f64::INFINITY);
        *e = e.min(t);
    }
}

fn key(system: &str, op: &str, sp: &str, idx: &str, size: &str) -> String {
    format!("{system}|{op}|{sp}|{idx}|{size}")
}

struct Ctx<'a> {
    args: &'a Args,
    pool1: &'a ThreadPool,
    pooln: &'a ThreadPool,
}

impl Ctx<'_> {
    fn time(&self, f: &(dyn Fn() -> Box<dyn std::any::Any> + Sync)) -> (f64, f64) {
        let (iters, budget) = (self.args.iters, self.args.budget);
        let t1 = self.pool1.install(|| best_of(iters, budget, f));
        let tn = self.pooln.install(|| best_of(iters, budget, f));
        (t1, tn)
    }

    fn wanted(&self, id: &str) -> bool {
        self.args
            .filter
            .as_ref()
            .is_none_or(|f| f.split(',').any(|part| id.contains(part)))
    }
}

/// One data set of one size and sparsity, on disk.
struct Files<'a> {
    dir: &'a Path,
    prefix: String,
    size: String,
}

impl Files<'_> {
    fn path(&self, what: &str) -> PathBuf {
        self.dir.join(format!("{}_{what}", self.prefix))
    }
}

/// Runs the libarrow side of reference `op` ("d2:coo", ...) with index width `idx`.
fn libarrow_convert(
    peer: &Path,
    f: &Files,
    s: &Shared,
    op: &str,
    idx: &str,
    iters: usize,
    theirs: &mut Theirs,
) {
    let Some((tag, fmt)) = op.split_once(':') else {
        return;
    };
    let itype = if idx == "i32" { "int32" } else { "int64" };
    let file = f.path(&format!("dense{}.arrows", &tag[1..]));
    let v = run_json(
        Command::new(peer)
            .arg("bench-convert")
            .arg(&file)
            .arg(iters.to_string())
            .arg(fmt)
            .arg(itype),
        "peer bench-convert",
    );
    let sp = s.sparsity.name();
    if let Some(t) = v[format!("{fmt}_{itype}_s")].as_f64() {
        eprintln!("        libarrow {op:<31} {:>10}", fmt_time(t));
        theirs.record(key("libarrow", op, sp, idx, &f.size), t);
    }
    let (entries, ours_order) = if tag == "d2" {
        (&s.d2, vec![0, 1])
    } else {
        (&s.d3, data::argsort(&s.d3.shape))
    };
    if v["nnz"].as_u64() != Some(entries.nnz() as u64) {
        theirs.problems.push(format!(
            "{}: libarrow {op} nnz {}, ours {}",
            f.prefix,
            v["nnz"],
            entries.nnz()
        ));
    }
    if fmt == "csf" {
        let order: Vec<usize> = v["csf_axis_order"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_u64())
                    .map(|x| x as usize)
                    .collect()
            })
            .unwrap_or_default();
        if order != ours_order {
            theirs.problems.push(format!(
                "{}: libarrow CSF axis order {order:?}, ours {ours_order:?}",
                f.prefix
            ));
        }
        theirs
            .axis_orders
            .insert(format!("{} {tag}", f.prefix), order);
    }
}

/// Times every case with index type `I` (and the IPC rows) for `--rounds` rounds;
/// in each round every case is followed by its references, so that ours and
/// theirs run at about the same time on this shared machine.
#[allow(clippy::too_many_arguments)]
fn measure<I: Index>(
    ctx: &Ctx,
    s: &Shared,
    idx: &'static str,
    f: &Files,
    scipy: &mut Option<Scipy>,
    theirs: &mut Theirs,
    rows: &mut Vec<Row>,
) {
    let t = Typed::<I>::new(s);
    let sp = s.sparsity.name();
    let cases: Vec<_> = cases::cases(&t)
        .into_iter()
        .filter(|c| ctx.wanted(c.id))
        .collect();
    if let Some(py) = scipy.as_mut() {
        py.ask(&format!("idx {idx}"));
        let chk = py.ask("check");
        let ours: f64 = arrow_sparse::kernels::spmv::spmv_csx(&t.csr, &s.x)
            .expect("spmv")
            .iter()
            .sum();
        let theirs_sum = chk["spmv_sum"].as_f64().unwrap_or(f64::NAN);
        if chk["m_nnz"].as_u64() != Some(s.m.nnz() as u64)
            || ((theirs_sum - ours) / ours).abs() > 1e-9
        {
            theirs.problems.push(format!(
                "{} {idx}: scipy nnz {} SpMV sum {theirs_sum}, ours nnz {} sum {ours}",
                f.prefix,
                chk["m_nnz"],
                s.m.nnz()
            ));
        }
    }
    // IPC: the CSR matrix A, as in benches/RESULTS.md, next to the peer's bench-csr.
    let csr: AnyTensor = t.csr.clone().into();
    let csr_path = f.path(&format!("csr_{idx}.arrows"));
    write_ipc(&csr_path, csr.clone());
    let msg_len = ipc::encode(&csr, &[], &StreamWriteOptions::default())
        .expect("encode")
        .len();
    let mut out: Vec<u8> = Vec::with_capacity(msg_len);
    out.resize(msg_len, 1);
    let ipc_ids = [
        "ipc/write/csr",
        "ipc/mmap_read_trusted/csr",
        "ipc/mmap_read_full/csr",
    ];
    let ipc_wanted = ipc_ids.iter().any(|id| ctx.wanted(id));

    let mut best: Vec<(f64, f64)> = vec![(f64::INFINITY, f64::INFINITY); cases.len()];
    let mut ipc_best = [f64::INFINITY; 3];
    let (iters, budget) = (ctx.args.iters, ctx.args.budget);
    for round in 0..ctx.args.rounds {
        let mut done: HashSet<String> = HashSet::new();
        for (i, case) in cases.iter().enumerate() {
            let (t1, tn) = ctx.time(&case.run);
            best[i] = (best[i].0.min(t1), best[i].1.min(tn));
            eprintln!(
                "  [{round}] {:<42} {sp:<8} {idx}  1T {:>10}  {}T {:>10}",
                case.id,
                fmt_time(t1),
                ctx.pooln.current_num_threads(),
                fmt_time(tn)
            );
            for r in &case.refs {
                let k = key(system_name(r.system), r.op, sp, idx, &f.size);
                if !done.insert(k.clone()) {
                    continue;
                }
                match r.system {
                    System::Scipy | System::Pydata => {
                        let Some(py) = scipy.as_mut() else { continue };
                        let v = py.ask(&format!("time {}", r.op));
                        if let Some(t) = v["s"].as_f64() {
                            let who = system_name(r.system);
                            eprintln!("  [{round}]   {who:<6} {:<34} {:>10}", r.op, fmt_time(t));
                            theirs.record(k, t);
                            if let Some(d) = v["desc"].as_str() {
                                theirs.desc.insert(r.op.to_string(), d.to_string());
                            }
                            if let Some(o) = v["out_idx"].as_str().filter(|o| *o != "-") {
                                theirs
                                    .out_idx
                                    .insert(format!("{} {idx}", r.op), o.to_string());
                            }
                        }
                    }
                    System::Libarrow => {
                        if let Some(peer) = &ctx.args.peer {
                            libarrow_convert(peer, f, s, r.op, idx, iters, theirs);
                        }
                    }
                    System::Ours => {}
                }
            }
        }
        if !ipc_wanted {
            continue;
        }
        let write = || {
            out.clear();
            let m =
                ipc::encode(black_box(&csr), &[], &StreamWriteOptions::default()).expect("encode");
            m.write_to(&mut out).expect("write");
            out.len()
        };
        let tw = ctx.pool1.install(|| best_of(iters, budget, write));
        let mut tr = [0.0; 2];
        for (slot, validation) in [Validation::Trusted, Validation::Full]
            .into_iter()
            .enumerate()
        {
            let options = StreamReadOptions::default().with_validation(validation);
            let read = || {
                let r = MmapReader::open_with(&csr_path, &options.clone()).expect("open");
                let m = r.get(0).expect("get");
                (r, m)
            };
            tr[slot] = ctx.pool1.install(|| best_of(iters, budget, read));
        }
        for (b, t) in ipc_best.iter_mut().zip([tw, tr[0], tr[1]]) {
            *b = b.min(t);
        }
        eprintln!(
            "  [{round}] ipc write / read trusted / read full {sp:<8} {idx}  {} / {} / {}",
            fmt_time(tw),
            fmt_time(tr[0]),
            fmt_time(tr[1])
        );
        if let Some(peer) = &ctx.args.peer {
            let v = run_json(
                Command::new(peer)
                    .arg("bench-csr")
                    .arg(&csr_path)
                    .arg(iters.to_string()),
                "peer bench-csr",
            );
            for (op, k) in [("ipc:write", "write_s"), ("ipc:read", "mmap_read_s")] {
                if let Some(t) = v[k].as_f64() {
                    theirs.record(key("libarrow", op, sp, idx, &f.size), t);
                }
            }
        }
    }
    for (case, (t1, tn)) in cases.into_iter().zip(best) {
        rows.push(Row {
            sparsity: sp,
            idx,
            id: case.id.to_string(),
            bytes: case.bytes,
            t1,
            tn,
            refs: case.refs,
        });
    }
    if ipc_wanted {
        let lib = |op: &'static str| Ref {
            system: System::Libarrow,
            op,
            note: "",
        };
        let index_bytes = csr.index_bytes();
        for ((id, bytes), (t, r)) in
            ipc_ids
                .iter()
                .zip([msg_len, index_bytes, index_bytes])
                .zip(
                    ipc_best
                        .into_iter()
                        .zip(["ipc:write", "ipc:read", "ipc:read"]),
                )
        {
            rows.push(Row {
                sparsity: sp,
                idx,
                id: id.to_string(),
                bytes,
                t1: t,
                tn: f64::NAN,
                refs: vec![lib(r)],
            });
        }
    }
}

fn system_name(s: System) -> &'static str {
    match s {
        System::Scipy => "scipy",
        System::Pydata => "pydata",
        System::Libarrow => "libarrow",
        System::Ours => "ours",
    }
}

// ------------------------------------------------------------------ output

fn fmt_time(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s < 1e-3 {
        format!("{:.1} us", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.3} s", s)
    }
}

struct Bw {
    copy1: f64,
    copyn: f64,
    read1: f64,
    readn: f64,
}

fn ref_name(r: &Ref) -> String {
    match r.system {
        System::Scipy => format!("scipy {}", r.op),
        System::Pydata => format!("pydata {}", r.op.trim_start_matches("pyd_")),
        System::Libarrow => format!("libarrow {}", r.op),
        System::Ours => {
            r.op.split_once('/')
                .map_or(r.op, |(_, rest)| rest)
                .to_string()
        }
    }
}

/// Reference time of `r` for `row` (1-thread and all-core where it applies).
fn ref_time(r: &Ref, row: &Row, size: &str, rows: &[Row], theirs: &Theirs) -> Option<(f64, f64)> {
    match r.system {
        System::Scipy | System::Pydata => theirs
            .times
            .get(&key(
                system_name(r.system),
                r.op,
                row.sparsity,
                row.idx,
                size,
            ))
            .map(|&t| (t, t)),
        System::Libarrow => theirs
            .times
            .get(&key("libarrow", r.op, row.sparsity, row.idx, size))
            .map(|&t| (t, t)),
        System::Ours => rows
            .iter()
            .find(|o| o.id == r.op && o.sparsity == row.sparsity && o.idx == row.idx)
            .map(|o| (o.t1, o.tn)),
    }
}

fn table(out: &mut String, size: &str, rows: &[Row], theirs: &Theirs, bw: &Bw, threads: usize) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "| kernel ({size} nnz requested) | rows | idx | ours 1T | ours {threads}T | reference | ref time | 1T/ref | {threads}T/ref | GB/s 1T | % copy 1T | GB/s {threads}T | % copy {threads}T |"
    );
    let _ = writeln!(out, "|---|---|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|");
    // group the lines of one kernel together, in the order of the case list
    let mut order: Vec<&str> = Vec::new();
    for r in rows {
        if !order.contains(&r.id.as_str()) {
            order.push(&r.id);
        }
    }
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_key(|r| order.iter().position(|&o| o == r.id));
    for row in sorted {
        let g1 = row.bytes as f64 / row.t1 / 1e9;
        let gn = row.bytes as f64 / row.tn / 1e9;
        let mut refs: Vec<Option<&Ref>> = row
            .refs
            .iter()
            .filter(|r| ref_time(r, row, size, rows, theirs).is_some())
            .map(Some)
            .collect();
        if refs.is_empty() {
            refs = row.refs.iter().take(1).map(Some).collect();
        }
        if refs.is_empty() {
            refs.push(None);
        }
        for r in refs {
            let (name, rt, ratio1, ration) = match r {
                None => (
                    "-".to_string(),
                    "-".to_string(),
                    "-".to_string(),
                    "-".to_string(),
                ),
                Some(r) => match ref_time(r, row, size, rows, theirs) {
                    None => (ref_name(r), "n/a".into(), "-".into(), "-".into()),
                    Some((t1, _)) => (
                        ref_name(r),
                        fmt_time(t1),
                        format!("{:.2}x", row.t1 / t1),
                        if row.tn.is_finite() {
                            format!("{:.2}x", row.tn / t1)
                        } else {
                            "-".into()
                        },
                    ),
                },
            };
            let (gn, pn) = if gn.is_finite() {
                (format!("{gn:.2}"), format!("{:.0}%", 100.0 * gn / bw.copyn))
            } else {
                ("-".into(), "-".into())
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.0}% | {} | {} |",
                row.id,
                row.sparsity,
                row.idx,
                fmt_time(row.t1),
                fmt_time(row.tn),
                name,
                rt,
                ratio1,
                ration,
                g1,
                100.0 * g1 / bw.copy1,
                gn,
                pn,
            );
        }
    }
}

/// The targets of issue #14, evaluated on the largest size: every kernel with a
/// scipy reference at most as slow as scipy on one thread (ratio <= 1.0, against
/// the fastest scipy variant measured), CSR <-> CSC and COO -> CSR 1.5x faster
/// (ratio <= 1/1.5), SpMV CSR with the operand in cache at >= 50% of the copy
/// bandwidth on one thread; plus the libarrow and CSF-vs-CSR checks.
fn targets(out: &mut String, size: &str, rows: &[Row], theirs: &Theirs, bw: &Bw, threads: usize) {
    use std::fmt::Write;
    let find = |id: &str, sp: &str, idx: &str| {
        rows.iter()
            .find(|r| r.id == id && r.sparsity == sp && r.idx == idx)
    };
    let _ = writeln!(
        out,
        "Targets at {size} nnz (1T = one thread, {threads}T = all cores; ratio = ours / reference, below 1 = ours faster; the verdict is on the 1T ratio against scipy):\n"
    );
    let _ = writeln!(
        out,
        "| kernel | rows | idx | ours 1T | ours {threads}T | scipy | 1T/scipy | {threads}T/scipy | pydata | 1T/pydata | {threads}T/pydata | target | verdict |"
    );
    let _ = writeln!(out, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|");
    let (mut met, mut missed) = (0usize, 0usize);
    let mut order: Vec<&str> = Vec::new();
    for r in rows {
        if !order.contains(&r.id.as_str()) {
            order.push(&r.id);
        }
    }
    for id in &order {
        for sp in ["uniform", "powerlaw"] {
            for idx in ["i32", "i64"] {
                let Some(row) = find(id, sp, idx) else {
                    continue;
                };
                // the fastest scipy variant (the strictest reference)
                let best_of_system = |sys: &str| {
                    row.refs
                        .iter()
                        .filter(|r| system_name(r.system) == sys)
                        .filter_map(|r| ref_time(r, row, size, rows, theirs))
                        .map(|(t, _)| t)
                        .fold(f64::INFINITY, f64::min)
                };
                let (sc, py) = (best_of_system("scipy"), best_of_system("pydata"));
                if !sc.is_finite() && !py.is_finite() {
                    continue;
                }
                let limit = if id.starts_with("convert/transpose_csx/")
                    || id.starts_with("convert/coo_to_csr/")
                {
                    1.0 / 1.5
                } else {
                    1.0
                };
                let q = |t: f64, r: f64| {
                    if t.is_finite() && r.is_finite() {
                        format!("{:.2}x", t / r)
                    } else {
                        "-".into()
                    }
                };
                let verdict = if sc.is_finite() {
                    if row.t1 / sc <= limit {
                        met += 1;
                        "met"
                    } else {
                        missed += 1;
                        "MISSED"
                    }
                } else {
                    "(no scipy op)"
                };
                let _ = writeln!(
                    out,
                    "| {id} | {sp} | {idx} | {} | {} | {} | {} | {} | {} | {} | {} | <= {:.2}x | {verdict} |",
                    fmt_time(row.t1),
                    fmt_time(row.tn),
                    fmt_time(sc),
                    q(row.t1, sc),
                    q(row.tn, sc),
                    fmt_time(py),
                    q(row.t1, py),
                    q(row.tn, py),
                    limit,
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "\nscipy targets: {met} met, {missed} missed (pydata/sparse runs with int64 coordinates only: it keeps int64 whatever the input).\n"
    );
    // SpMV bandwidth share on one thread, the operand in cache (the matrix streams)
    {
        let mut parts = Vec::new();
        let mut all_ok = true;
        for sp in ["uniform", "powerlaw"] {
            for idx in ["i32", "i64"] {
                if let Some(row) = find("spmv/spmv_csx/csr_narrow", sp, idx) {
                    let p1 = row.bytes as f64 / row.t1 / 1e9 / bw.copy1;
                    let pn = row.bytes as f64 / row.tn / 1e9 / bw.copyn;
                    all_ok &= p1 >= 0.5;
                    parts.push(format!(
                        "{sp} {idx}: {:.0}% (1T) / {:.0}% ({threads}T)",
                        100.0 * p1,
                        100.0 * pn
                    ));
                }
            }
        }
        if !parts.is_empty() {
            let _ = writeln!(
                out,
                "- {} SpMV CSR (2^15 columns, operand in cache) >= 50% of the copy bandwidth on one thread: {}",
                if all_ok { "MET" } else { "MISSED" },
                parts.join("; ")
            );
        }
    }
    let checks: [(&str, &str, usize, f64, &str); 5] = [
        (
            "Dense -> COO at least as fast as libarrow",
            "convert/dense_to_coo/2d",
            0,
            1.0,
            "le",
        ),
        (
            "Dense -> CSR at least as fast as libarrow",
            "convert/dense_to_csr/2d",
            0,
            1.0,
            "le",
        ),
        (
            "Dense -> CSF at least as fast as libarrow",
            "convert/dense_to_csf/3d_libarrow_order",
            0,
            1.0,
            "le",
        ),
        (
            "CSF MTTKRP within 2x of CSR MTTKRP (2-D)",
            "csf/mttkrp/2d_mode0",
            0,
            2.0,
            "le",
        ),
        (
            "CSF MTTKRP faster than CSR MTTKRP (3-D, mode 0)",
            "csf/mttkrp/3d_mode0",
            0,
            1.0,
            "lt",
        ),
    ];
    for (what, id, ri, limit, cmp) in checks.iter() {
        let mut parts = Vec::new();
        let mut all_ok = true;
        for sp in ["uniform", "powerlaw"] {
            for idx in ["i32", "i64"] {
                let Some(row) = find(id, sp, idx) else {
                    continue;
                };
                let Some(r) = row.refs.get(*ri) else { continue };
                let Some((rt, _)) = ref_time(r, row, size, rows, theirs) else {
                    continue;
                };
                let (q1, qn) = (row.t1 / rt, row.tn / rt);
                let ok = |q: f64| {
                    if *cmp == "lt" {
                        q < *limit
                    } else {
                        q <= *limit
                    }
                };
                all_ok &= ok(q1) && ok(qn);
                parts.push(format!("{sp} {idx}: {q1:.2}x / {qn:.2}x"));
            }
        }
        if parts.is_empty() {
            continue;
        }
        let verdict = match (*cmp, all_ok) {
            ("info", _) => "",
            (_, true) => "MET ",
            (_, false) => "MISSED ",
        };
        let _ = writeln!(out, "- {verdict}{what}: {}", parts.join("; "));
    }
}

/// Replace the generated block of `path` (between the markers) with `text`.
fn write_results(path: &Path, text: &str) {
    const BEGIN: &str = "<!-- BEGIN bench_kernels output -->";
    const END: &str = "<!-- END bench_kernels output -->";
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let block = format!("{BEGIN}\n{text}{END}");
    let new = match (old.find(BEGIN), old.find(END)) {
        (Some(b), Some(e)) if b < e => format!("{}{block}{}", &old[..b], &old[e + END.len()..]),
        _ => format!("{old}\n{block}\n"),
    };
    std::fs::write(path, new).unwrap_or_else(|e| die(&format!("write {}: {e}", path.display())));
}

/// The 1-, 5- and 15-minute load averages (other jobs on a shared machine).
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let args = parse_args();
    let load_start = loadavg();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let pool1 = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let pooln = rayon::ThreadPoolBuilder::new()
        .num_threads(cores)
        .build()
        .expect("pool");
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
    eprintln!("bench_kernels: {cores} cores, data in {}", dir.display());
    let ctx = Ctx {
        args: &args,
        pool1: &pool1,
        pooln: &pooln,
    };

    let (copy1, read1) = bandwidth(&pool1);
    let (copyn, readn) = bandwidth(&pooln);
    let mut bw = Bw {
        copy1,
        copyn,
        read1,
        readn,
    };
    eprintln!(
        "bandwidth: copy {copy1:.2} GB/s (1T), {copyn:.2} GB/s ({cores}T); read {read1:.2} / {readn:.2} GB/s"
    );

    let mut theirs = Theirs::default();
    let mut all_rows: Vec<(usize, Vec<Row>)> = Vec::new();
    let mut data_sets = Vec::new();
    for &n in &args.sizes {
        let size = datagen::size_label(n);
        let mut rows = Vec::new();
        for sparsity in Sparsity::ALL {
            let sp = sparsity.name();
            let files = Files {
                dir: &dir,
                prefix: format!("{sp}_{size}"),
                size: size.clone(),
            };
            let t0 = Instant::now();
            let s = Shared::new(n, sparsity);
            let info = format!(
                "{size} {sp}: A {}x{} nnz {}; 3-D {:?} nnz {}; 4-D {:?} nnz {}; dense 2-D {:?} nnz {}; dense 3-D {:?} nnz {}",
                s.m.shape[0],
                s.m.shape[1],
                s.m.nnz(),
                s.t3.shape,
                s.t3.nnz(),
                s.t4.shape,
                s.t4.nnz(),
                s.d2.shape,
                s.d2.nnz(),
                s.d3.shape,
                s.d3.nnz()
            );
            eprintln!("{info} (drawn in {:.1} s)", t0.elapsed().as_secs_f64());
            data_sets.push(info);
            let dataset = write_dataset(&dir, &files.prefix, &s);
            if args.peer.is_some() {
                write_ipc(&files.path("dense2.arrows"), s.dense2.clone().into());
                write_ipc(&files.path("dense3.arrows"), s.dense3.clone().into());
            }
            let mut scipy = args
                .python
                .as_ref()
                .map(|py| Scipy::start(&args, py, &dataset));
            if let Some(py) = scipy.as_mut() {
                let v = py.ask("version");
                theirs.versions = format!(
                    "scipy {}, pydata/sparse {}, numpy {}",
                    v["scipy"].as_str().unwrap_or("?"),
                    v["sparse"].as_str().unwrap_or("?"),
                    v["numpy"].as_str().unwrap_or("?")
                );
            }
            measure::<i32>(&ctx, &s, "i32", &files, &mut scipy, &mut theirs, &mut rows);
            measure::<i64>(&ctx, &s, "i64", &files, &mut scipy, &mut theirs, &mut rows);
            drop(scipy);
            drop(s);
            if args.dir.is_none() {
                for e in std::fs::read_dir(&dir).expect("read dir").flatten() {
                    if e.file_name().to_string_lossy().starts_with(&files.prefix) {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
        }
        all_rows.push((n, rows));
    }
    // bandwidth again at the end; keep the best
    let (c1, r1) = bandwidth(&pool1);
    let (cn, rn) = bandwidth(&pooln);
    bw.copy1 = bw.copy1.max(c1);
    bw.copyn = bw.copyn.max(cn);
    bw.read1 = bw.read1.max(r1);
    bw.readn = bw.readn.max(rn);

    // ---------------------------------------------------------------- report
    use std::fmt::Write;
    let mut out = String::new();
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "Run of {date}: {cores} cores (available_parallelism); each time is the best of {} rounds x up to {} runs ({} s budget per measurement); {}.\n",
        args.rounds,
        args.iters,
        args.budget,
        if theirs.versions.is_empty() {
            "no scipy".to_string()
        } else {
            theirs.versions.clone()
        }
    );
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let _ = writeln!(out, "Machine: {cpu}; {rustc}; release profile.\n");
    let _ = writeln!(
        out,
        "Load average (1/5/15 min, other jobs on the machine): {load_start} at the start, {} at the end. Ratios compare runs of both sides made seconds apart in the same process, so both see about the same load.\n",
        loadavg()
    );
    let _ = writeln!(
        out,
        "Memory bandwidth (same run, best of the measurements at the start and the end): STREAM copy {:.2} GB/s on 1 thread, {:.2} GB/s on {cores}; read-only {:.2} / {:.2} GB/s.\n",
        bw.copy1, bw.copyn, bw.read1, bw.readn
    );
    let _ = writeln!(out, "Data sets:\n");
    for l in &data_sets {
        let _ = writeln!(out, "- {l}");
    }
    for (k, o) in &theirs.axis_orders {
        let _ = writeln!(out, "- libarrow's dense -> CSF axis order for {k}: {o:?}");
    }
    let _ = writeln!(out);
    for (n, rows) in &all_rows {
        let size = datagen::size_label(*n);
        table(&mut out, &size, rows, &theirs, &bw, cores);
        let _ = writeln!(out);
    }
    if let Some((n, rows)) = all_rows.last() {
        targets(
            &mut out,
            &datagen::size_label(*n),
            rows,
            &theirs,
            &bw,
            cores,
        );
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "References:\n");
    for (op, d) in &theirs.desc {
        let dt: Vec<String> = ["i32", "i64"]
            .iter()
            .filter_map(|i| {
                theirs
                    .out_idx
                    .get(&format!("{op} {i}"))
                    .map(|o| format!("{i} in -> {o} out"))
            })
            .collect();
        let dt = if dt.is_empty() {
            String::new()
        } else {
            format!(" (index type: {})", dt.join(", "))
        };
        let _ = writeln!(out, "- scipy {op}: `{d}`{dt}");
    }
    let mut notes = BTreeMap::new();
    for (_, rows) in &all_rows {
        for r in rows {
            for rf in &r.refs {
                if !rf.note.is_empty() {
                    notes.insert(format!("{} vs {}", r.id, ref_name(rf)), rf.note);
                }
            }
        }
    }
    for (k, n) in notes {
        let _ = writeln!(out, "- {k}: {n}");
    }
    if theirs.problems.is_empty() {
        let _ = writeln!(
            out,
            "\nData checks: scipy read the same nnz and computed the same SpMV sums; libarrow found the same nnz in the dense tensors and chose the same CSF axis order."
        );
    } else {
        let _ = writeln!(out, "\nData check problems:\n");
        for p in &theirs.problems {
            let _ = writeln!(out, "- {p}");
        }
    }
    print!("{out}");
    let _ = std::io::stdout().flush();
    if let Some(path) = &args.results {
        write_results(path, &out);
        eprintln!("bench_kernels: wrote the table into {}", path.display());
    }
}

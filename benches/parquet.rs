//! Parquet archives against scipy's `save_npz(compressed=True)` and the raw IPC
//! file, on the same CSR matrices (uniform and power-law, about 10^7 entries,
//! 10^6 x 10^6, f64 values uniform in [0, 1), int32 indptr and indices as scipy
//! uses them; `benches/compare/parquet_gen.rs`), and the peak memory of archiving
//! straight from a memory-mapped IPC file.
//!
//! ```text
//! cargo bench --bench parquet                                # about 3 minutes after the build
//! cargo bench --bench parquet -- --nnz 1000000 --iters 3     # smaller, quicker
//! cargo bench --bench parquet -- --python /path/to/python    # default: .venv/bin/python
//! ```
//!
//! Timed, best of `--iters` (default 3), each on the file or tensor left by the
//! previous step:
//! * `parquet/write`: `archive::write_archive` of the tensor mapped from the IPC
//!   file (zstd level 1, row groups of 2^20 rows), including the fsync and rename;
//! * `parquet/read`: `archive::read_archive` with full validation;
//! * `ipc/write`: `ipc::write_tensor_stream` (fsync and rename too); `ipc/read`:
//!   `MmapReader::open` + `get(0)` with full validation;
//! * scipy (`benches/compare/parquet_npz.py`): `save_npz(compressed=True)` and
//!   `load_npz` of the same matrix (no fsync).
//!
//! Peak memory: this binary re-runs itself (`--rss-child FILE ROWS`) to archive the
//! uniform matrix from its IPC file with row groups of 10^6 rows while a thread
//! samples RssAnon (anonymous memory: heap and writer buffers) in
//! /proc/self/status; VmHWM (which counts the mapped file's clean pages too) is
//! reported alongside. Results: benches/RESULTS-parquet.md.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use arrow_sparse::AnyTensor;
use arrow_sparse::archive::{self, ArchiveReadOptions, ArchiveWriteOptions};
use arrow_sparse::ipc::{self, MmapReader};

#[path = "compare/parquet_gen.rs"]
mod pgen;

struct Args {
    nnz: usize,
    iters: usize,
    python: Option<PathBuf>,
    dir: Option<PathBuf>,
}

fn die(msg: &str) -> ! {
    eprintln!("bench parquet: {msg}");
    std::process::exit(2)
}

fn parse_args() -> Args {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        nnz: 10_000_000,
        iters: 3,
        python: Some(repo.join(".venv/bin/python")),
        dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || {
            it.next()
                .unwrap_or_else(|| die(&format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--bench" => {}
            "--nnz" => a.nnz = val().parse().unwrap_or_else(|_| die("--nnz: not a number")),
            "--iters" => {
                a.iters = val()
                    .parse()
                    .unwrap_or_else(|_| die("--iters: not a number"))
            }
            "--python" => a.python = Some(val().into()),
            "--no-python" => a.python = None,
            "--dir" => a.dir = Some(val().into()),
            "--rss-child" => {
                let file = val();
                let rows = val().parse().unwrap_or_else(|_| die("--rss-child: rows"));
                rss_child(Path::new(&file), rows);
                std::process::exit(0);
            }
            other => die(&format!("unknown argument {other}")),
        }
    }
    a
}

fn best<T>(iters: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..iters.max(1) {
        let t0 = Instant::now();
        let r = f();
        best = best.min(t0.elapsed());
        out = Some(r);
    }
    (best, out.expect("at least one iteration"))
}

fn status_kib(key: &str) -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Archive `file` (an IPC stream of one tensor) with row groups of `rows`,
/// sampling anonymous memory; print one `RSS ...` line.
fn rss_child(file: &Path, rows: usize) {
    let base = status_kib("RssAnon:").unwrap_or(0);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(Ordering::Relaxed) {
                peak = peak.max(status_kib("RssAnon:").unwrap_or(0));
                std::thread::sleep(Duration::from_millis(1));
            }
            peak
        })
    };
    let reader = MmapReader::open(file).expect("open");
    let msg = reader.get(0).expect("get");
    let out = file.with_extension("rss.parquet");
    let options = ArchiveWriteOptions::default().with_row_group_size(rows);
    let t0 = Instant::now();
    let s = archive::write_archive(&out, &msg, &options).expect("write");
    let took = t0.elapsed();
    stop.store(true, Ordering::Relaxed);
    let peak = sampler
        .join()
        .expect("sampler")
        .max(status_kib("RssAnon:").unwrap_or(0));
    println!(
        "RSS base_anon_kib={base} anon_growth_kib={} hwm_kib={} rows={} row_groups={} ms={}",
        peak.saturating_sub(base),
        status_kib("VmHWM:").unwrap_or(0),
        s.rows,
        s.row_groups,
        took.as_millis()
    );
    let _ = std::fs::remove_file(out);
}

#[derive(Default)]
struct Row {
    name: String,
    nnz: usize,
    ipc_bytes: u64,
    ipc_write: f64,
    ipc_read: f64,
    pq_bytes: u64,
    pq_write: f64,
    pq_read: f64,
    npz: Option<(u64, f64, f64, f64)>,
}

fn scipy(python: &Path, archive: &Path, dir: &Path, iters: usize) -> Option<(u64, f64, f64, f64)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/compare/parquet_npz.py");
    let out = Command::new(python)
        .arg(script)
        .arg(archive)
        .arg(dir)
        .arg(iters.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "scipy side failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((
        v["npz_bytes"].as_u64()?,
        v["save_npz_s"].as_f64()?,
        v["load_npz_s"].as_f64()?,
        v["pyarrow_read_table_s"].as_f64()?,
    ))
}

fn main() {
    let args = parse_args();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).expect("dir");
    let python = args.python.clone().filter(|p| p.exists());
    if python.is_none() {
        eprintln!("no Python venv: the scipy columns stay empty (run scripts/setup-interop.sh)");
    }
    let mut rows = Vec::new();
    let mut rss_file = None;
    for name in ["uniform", "power_law"] {
        eprintln!("generating {name} ({} entries)...", args.nnz);
        let tensor: AnyTensor = match name {
            "uniform" => pgen::uniform(args.nnz, 42).into(),
            _ => pgen::power_law(args.nnz, 43).into(),
        };
        let ipc_path = dir.join(format!("{name}.arrow"));
        let pq_path = dir.join(format!("{name}.parquet"));
        let msg: ipc::TensorMessage = tensor.clone().into();
        let (ipc_write, ()) = best(args.iters, || {
            ipc::write_tensor_stream(&ipc_path, [&msg], &Default::default()).expect("ipc write")
        });
        drop(msg);
        let (ipc_read, _) = best(args.iters, || {
            let r = MmapReader::open(&ipc_path).expect("open");
            let m = r.get(0).expect("get");
            (r, m)
        });
        let mapped = MmapReader::open(&ipc_path)
            .expect("open")
            .get(0)
            .expect("get");
        let (pq_write, summary) = best(args.iters, || {
            archive::write_archive(&pq_path, &mapped, &ArchiveWriteOptions::default())
                .expect("write")
        });
        let (pq_read, back) = best(args.iters, || {
            archive::read_archive(&pq_path, &ArchiveReadOptions::default()).expect("read")
        });
        assert!(
            back.tensor == tensor,
            "{name}: the archive restored another tensor"
        );
        drop(back);
        let npz = python
            .as_ref()
            .and_then(|p| scipy(p, &pq_path, &dir, args.iters));
        rows.push(Row {
            name: name.into(),
            nnz: tensor.nnz(),
            ipc_bytes: std::fs::metadata(&ipc_path).expect("size").len(),
            ipc_write: ipc_write.as_secs_f64(),
            ipc_read: ipc_read.as_secs_f64(),
            pq_bytes: summary.bytes,
            pq_write: pq_write.as_secs_f64(),
            pq_read: pq_read.as_secs_f64(),
            npz,
        });
        if name == "uniform" {
            rss_file = Some(ipc_path);
        }
    }
    println!(
        "cores:   {}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "entries: {} (10^6 x 10^6 CSR, f64 values, int32 indptr / indices); best of {}",
        args.nnz, args.iters
    );
    println!();
    println!("| matrix | nnz | format | bytes | bytes/nnz | write | read |");
    println!("|---|---:|---|---:|---:|---:|---:|");
    for r in &rows {
        let line = |fmt: &str, bytes: u64, w: f64, rd: f64| {
            println!(
                "| {} | {} | {fmt} | {bytes} | {:.2} | {:.3} s | {:.3} s |",
                r.name,
                r.nnz,
                bytes as f64 / r.nnz as f64,
                w,
                rd
            )
        };
        line("Parquet (zstd 1)", r.pq_bytes, r.pq_write, r.pq_read);
        line("IPC stream", r.ipc_bytes, r.ipc_write, r.ipc_read);
        if let Some((b, s, l, _)) = r.npz {
            line("npz (compressed)", b, s, l);
        }
    }
    println!();
    println!(
        "| matrix | size vs npz | write vs npz | read vs npz | size vs IPC | write vs IPC | read vs IPC | pyarrow read_table |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        let (sn, wn, rn, pa) = match r.npz {
            Some((b, s, l, pa)) => (
                format!("{:.2}x", r.pq_bytes as f64 / b as f64),
                format!("{:.2}x ({:.1}x faster)", r.pq_write / s, s / r.pq_write),
                format!("{:.2}x", r.pq_read / l),
                format!("{pa:.3} s"),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        println!(
            "| {} | {sn} | {wn} | {rn} | {:.2}x | {:.2}x | {:.1}x | {pa} |",
            r.name,
            r.pq_bytes as f64 / r.ipc_bytes as f64,
            r.pq_write / r.ipc_write,
            r.pq_read / r.ipc_read,
        );
    }
    if let Some(file) = rss_file {
        let group = 1_000_000usize.min(args.nnz / 4).max(1);
        let out = Command::new(std::env::current_exe().expect("exe"))
            .arg("--rss-child")
            .arg(&file)
            .arg(group.to_string())
            .output()
            .expect("rss child");
        let text = String::from_utf8_lossy(&out.stdout);
        let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        println!();
        println!(
            "peak memory, archiving the uniform IPC file ({} KiB, mapped) with row groups of {group} rows:",
            size / 1024
        );
        println!("  {}", text.trim());
    }
}

//! A dataset written from a Matrix Market file whose matrix is 4x larger than the
//! memory budget: the release CLI (`convert --partition-by 0 --memory-budget`)
//! streams the file, sorts it in runs spilled to disk, and its peak resident set
//! (VmHWM of the child process, sampled every 2 ms until it exits) stays within
//! the budget. The dataset is then read back block by block and compared entry
//! by entry with what the file holds.
#![cfg(feature = "parquet")]

mod common;

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use arrow_sparse::archive::{ArchiveLayout, DatasetReader};
use arrow_sparse::{AnyTensor, IndexType};

/// The budget: 32 MiB.
const BUDGET: usize = 32 << 20;
/// COO entries of 24 bytes (two int64 coordinates, a float64): 4x the budget.
const NNZ: usize = 4 * BUDGET / 24;
const ROWS_LOG: u32 = 21;
const COLS_LOG: u32 = 20;

/// Entry `k`: a distinct position of the 2^21 x 2^20 matrix (an odd multiplier
/// permutes positions modulo 2^41), value `k + 0.5`.
fn entry(k: usize) -> (u64, u64, f64) {
    let mask = (1u64 << (ROWS_LOG + COLS_LOG)) - 1;
    let l = (k as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1)
        .wrapping_add(12345)
        & mask;
    (l >> COLS_LOG, l & ((1 << COLS_LOG) - 1), k as f64 + 0.5)
}

/// The release binary (built by test-all.sh before the tests; built here when
/// missing).
fn release_cli() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--locked",
            "--bin",
            "arrow-sparse",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(common::repo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-artifact" && v["target"]["name"] == "arrow-sparse")
        .find_map(|v| v["executable"].as_str().map(PathBuf::from))
        .expect("cargo named no arrow-sparse executable")
}

/// VmHWM of process `pid` in bytes.
fn hwm(pid: u32) -> Option<usize> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn a_matrix_four_times_the_budget_is_written_within_it_and_read_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.mtx");
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&input).unwrap());
    writeln!(w, "%%MatrixMarket matrix coordinate real general").unwrap();
    writeln!(w, "{} {} {NNZ}", 1u64 << ROWS_LOG, 1u64 << COLS_LOG).unwrap();
    let mut line = String::new();
    for k in 0..NNZ {
        let (i, j, v) = entry(k);
        line.clear();
        use std::fmt::Write as _;
        writeln!(line, "{} {} {v}", i + 1, j + 1).unwrap();
        w.write_all(line.as_bytes()).unwrap();
    }
    w.into_inner().unwrap().sync_all().unwrap();
    let out = dir.path().join("ds");
    let budget = format!("{}M", BUDGET >> 20);
    let mut child = Command::new(release_cli())
        .args(["--json", "convert"])
        .arg(&input)
        .arg(&out)
        .args([
            "--partition-by",
            "0",
            "--rows-per-file",
            "262144",
            "--memory-budget",
            &budget,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(h) = hwm(child.id()) {
            peak = peak.max(h);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    eprintln!(
        "{NNZ} entries ({} MiB as COO), budget {} MiB: peak resident {:.1} MiB, {} sorted runs, {} parts",
        (NNZ * 24) >> 20,
        BUDGET >> 20,
        peak as f64 / (1 << 20) as f64,
        summary["sorted_runs"],
        summary["parts"]
    );
    assert!(peak > 0, "no sample of the child's memory");
    assert!(
        peak <= BUDGET,
        "peak resident {peak} bytes above the budget {BUDGET}"
    );
    assert!(summary["sorted_runs"].as_u64().unwrap() >= 4, "{summary}");
    assert_eq!(summary["nnz"].as_u64(), Some(NNZ as u64));

    // read back block by block: every entry, in row-major order
    let mut want: Vec<u64> = (0..NNZ as u64).collect();
    want.sort_unstable_by_key(|&k| {
        let (i, j, _) = entry(k as usize);
        (i, j)
    });
    let r = DatasetReader::open(&out).unwrap();
    assert!(matches!(
        r.spec().layout,
        ArchiveLayout::Coo {
            canonical: Some(true),
            ..
        }
    ));
    assert_eq!(r.parts().len(), 8);
    let mut at = 0;
    for block in r.blocks() {
        let (range, t) = block.unwrap();
        let AnyTensor::Coo(c) = t else {
            panic!("not COO")
        };
        assert_eq!(c.coords().data_type(), IndexType::Int64);
        let coords = c.coords().as_typed::<i64>().unwrap();
        let values = c.values().as_typed::<f64>().unwrap();
        for e in 0..c.nnz() {
            let (i, j, v) = entry(want[at] as usize);
            let got = (
                coords[2 * e] as u64 + range.start as u64,
                coords[2 * e + 1] as u64,
                values[e],
            );
            assert_eq!(got, (i, j, v), "entry {at}");
            at += 1;
        }
    }
    assert_eq!(at, NNZ);
}

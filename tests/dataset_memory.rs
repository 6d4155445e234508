//! A dataset written from a Matrix Market file whose matrix is 4x larger than the
//! memory budget: the CLI (`convert --partition-by 0 --memory-budget`)
//! streams the file, sorts it in runs spilled to disk, and the memory it holds
//! stays within the budget. The dataset is then read back block by block and
//! compared entry by entry with what the file holds.
//!
//! The CLI takes a fixed 12 MiB off the budget for the process itself (the
//! binary's pages, the allocator, the read buffer: about 8-10 MiB for the release
//! binary) and gives the writer the rest. The test runs the CLI `cargo test`
//! built (CI builds no release binary), whose code and libraries alone take about
//! 35 MiB, so it measures the two parts apart: the peak resident set (VmHWM,
//! sampled every 2 ms until the child exits) of the same command on a 10-entry
//! file is the process's own, and the big file's peak above it must fit in the
//! writer's share, budget - 12 MiB. (With the release CLI the whole peak is
//! within the budget: `cargo test --release --test dataset_memory`.)
#![cfg(feature = "parquet")]

mod common;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use arrow_sparse::archive::{ArchiveLayout, DatasetReader};
use arrow_sparse::{AnyTensor, IndexType};

/// The budget: 32 MiB.
const BUDGET: usize = 32 << 20;
/// What the CLI keeps of the budget for the process itself.
const PROCESS_SHARE: usize = 12 << 20;
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

/// The CLI cargo built with this test (the test profile under `cargo test`:
/// slower than the release CLI, with the same allocations).
fn cli() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_arrow-sparse"))
}

/// VmHWM of process `pid` in bytes.
fn hwm(pid: u32) -> Option<usize> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs the CLI's streamed conversion of `input` into the dataset `out`; its
/// peak resident set (VmHWM) and its JSON summary.
fn convert(input: &Path, out: &Path) -> (usize, serde_json::Value) {
    let budget = format!("{}M", BUDGET >> 20);
    let mut child = Command::new(cli())
        .args(["--json", "convert"])
        .arg(input)
        .arg(out)
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
    assert!(peak > 0, "no sample of the child's memory");
    (peak, summary)
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
    let (peak, summary) = convert(&input, &out);
    // the same command on a 10-entry file: the process's own memory
    let small = dir.path().join("small.mtx");
    let mut w = BufWriter::new(std::fs::File::create(&small).unwrap());
    writeln!(w, "%%MatrixMarket matrix coordinate real general").unwrap();
    writeln!(w, "{} {} 10", 1u64 << ROWS_LOG, 1u64 << COLS_LOG).unwrap();
    for k in 0..10 {
        let (i, j, v) = entry(k);
        writeln!(w, "{} {} {v}", i + 1, j + 1).unwrap();
    }
    w.into_inner().unwrap().sync_all().unwrap();
    let (base, _) = convert(&small, &dir.path().join("small-ds"));
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    eprintln!(
        "{NNZ} entries ({} MiB as COO), budget {} MiB: peak resident {:.1} MiB, of which {:.1} MiB the process's own (a 10-entry file) and {:.1} MiB the writer's (its share: {} MiB); {} sorted runs, {} parts",
        (NNZ * 24) >> 20,
        BUDGET >> 20,
        mib(peak),
        mib(base),
        mib(peak.saturating_sub(base)),
        (BUDGET - PROCESS_SHARE) >> 20,
        summary["sorted_runs"],
        summary["parts"]
    );
    assert!(base > 0 && peak > base, "no sample of the child's memory");
    assert!(
        peak - base <= BUDGET - PROCESS_SHARE,
        "the writer's peak {} bytes above its share of the budget {}",
        peak - base,
        BUDGET - PROCESS_SHARE
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

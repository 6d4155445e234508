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
#![cfg(feature = "parquet")]

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow_sparse::ipc::{self, MmapReader};
use arrow_sparse::parquet::{self, WriteOptions};
use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};

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
        CompressedAxis::Row,
        vec![rows, 100_000],
        indptr.into(),
        indices.into(),
        values.into(),
    )
    .unwrap()
    .into()
}

#[test]
fn archiving_from_a_memory_map_keeps_memory_near_one_row_group() {
    if status_kib("RssAnon:").is_none() {
        eprintln!("SKIPPED: no /proc/self/status RssAnon");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.arrow");
    ipc::write_file(&src, [&matrix().into()], &Default::default()).unwrap();
    let file_kib = std::fs::metadata(&src).unwrap().len() as usize / 1024;
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "rss_child",
            "--ignored",
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
#[test]
#[ignore = "run by archiving_from_a_memory_map_keeps_memory_near_one_row_group"]
fn rss_child() {
    let Some(src) = std::env::var_os("ARROW_SPARSE_RSS_CHILD") else {
        return;
    };
    let dst = Path::new(&src).with_extension("parquet");
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
    let reader = MmapReader::open(Path::new(&src)).unwrap();
    let msg = reader.get(0).unwrap();
    let options = WriteOptions::default().with_row_group_size(ROW_GROUP);
    let summary = parquet::write_parquet(&dst, &msg, &options).unwrap();
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

//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as J;

/// Compare two JSON values, numbers by value (so `1` equals `1.0` and `1e+20`
/// equals `1e20`); everything else exactly.
pub fn json_eq(a: &J, b: &J) -> bool {
    json_eq_as(a, b, false)
}

/// As [`json_eq`]; with `single`, floats are compared after rounding to f32 (a
/// float32 value has several shortest decimal forms when it lies halfway between
/// two of them: Rust and C++ may pick different ones, both round-trip).
pub fn json_eq_as(a: &J, b: &J, single: bool) -> bool {
    match (a, b) {
        (J::Number(x), J::Number(y)) => {
            if let (Some(p), Some(q)) = (x.as_i64(), y.as_i64()) {
                return p == q;
            }
            if let (Some(p), Some(q)) = (x.as_u64(), y.as_u64()) {
                return p == q;
            }
            let (p, q) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if single {
                return p as f32 == q as f32;
            }
            p == q || (p.is_nan() && q.is_nan())
        }
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq_as(p, q, single))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.keys().zip(y.keys()).all(|(p, q)| p == q)
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq_as(v, w, single)))
        }
        _ => a == b,
    }
}

/// Assert that two JSON-lines texts describe the same tensors.
pub fn assert_same_dump(ours: &str, theirs: &str, context: &str) {
    let a: Vec<&str> = ours.lines().collect();
    let b: Vec<&str> = theirs.lines().collect();
    assert_eq!(
        a.len(),
        b.len(),
        "{context}: line counts differ\nours:   {ours}\ntheirs: {theirs}"
    );
    for (x, y) in a.iter().zip(&b) {
        let (p, q): (J, J) = (
            serde_json::from_str(x).unwrap(),
            serde_json::from_str(y).unwrap(),
        );
        let single = matches!(
            p.get("value_type").and_then(J::as_str),
            Some("float32" | "float16")
        );
        assert!(
            json_eq_as(&p, &q, single),
            "{context}: dumps differ\nours:   {}\ntheirs: {}",
            trunc(x),
            trunc(y)
        );
    }
}

fn trunc(s: &str) -> &str {
    &s[..s.len().min(2000)]
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The C++ interop peer, built by `scripts/setup-interop.sh`. `None` when it is
/// not built, unless running in CI (`CI=true`), where its absence is a failure.
pub fn peer() -> Option<PathBuf> {
    installed(
        "ARROW_SPARSE_PEER",
        "target/peer/arrow-sparse-peer",
        "interop peer",
    )
}

/// A program that `scripts/setup-interop.sh` installs: from the environment
/// variable `var`, else `default` in the repository. `None` (the test skips) when
/// it is missing, unless running in CI (`CI=true`), where that is a failure.
fn installed(var: &str, default: &str, what: &str) -> Option<PathBuf> {
    let p = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(default));
    if p.exists() {
        return Some(p);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!(
            "the {what} {} is missing in CI: run scripts/setup-interop.sh",
            p.display()
        );
    }
    eprintln!(
        "SKIPPED: no {what} at {} (run scripts/setup-interop.sh)",
        p.display()
    );
    None
}

/// Run the peer; panic with its stderr on failure. Returns stdout.
pub fn run_peer(peer: &Path, args: &[&str]) -> String {
    let out = Command::new(peer).args(args).output().expect("run peer");
    assert!(
        out.status.success(),
        "peer {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Run the peer and return (success, stdout, stderr) without asserting.
pub fn try_peer(peer: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(peer).args(args).output().expect("run peer");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The Python of the project's venv (pyarrow, numpy, scipy, sparse, duckdb), from
/// `ARROW_SPARSE_PYTHON` or `.venv/bin/python`. `None` when it is missing, unless
/// running in CI (`CI=true`), where its absence is a failure.
pub fn python() -> Option<PathBuf> {
    installed(
        "ARROW_SPARSE_PYTHON",
        ".venv/bin/python",
        "Python of the venv",
    )
}

/// xorshift64*: deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Run this build's `arrow-sparse` binary with `args`.
pub fn cli<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arrow-sparse"))
        .args(args)
        .output()
        .unwrap()
}

/// As [`cli`], and panic with its stderr unless it succeeds. Returns stdout.
pub fn cli_ok<S: AsRef<OsStr>>(args: &[S]) -> String {
    let out = cli(args);
    assert!(
        out.status.success(),
        "{:?}: {}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

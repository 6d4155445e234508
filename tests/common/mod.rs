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

/// The C++ interop peer, built by `scripts/setup-interop.sh`: `ARROW_SPARSE_PEER`,
/// else `target/peer/arrow-sparse-peer` in the repository.
///
/// Tests that call it are marked `#[ignore = "needs the libarrow peer ..."]`, so a
/// plain `cargo test` reports them as ignored; `cargo test -- --include-ignored`
/// (and `scripts/test-all.sh`) runs them, and then a missing peer fails the test:
/// a test that needs the peer never passes without it.
pub fn peer() -> PathBuf {
    installed(
        "ARROW_SPARSE_PEER",
        "target/peer/arrow-sparse-peer",
        "libarrow peer",
    )
}

/// A program that `scripts/setup-interop.sh` installs: from the environment
/// variable `var`, else `default` in the repository. Panics when it is missing.
fn installed(var: &str, default: &str, what: &str) -> PathBuf {
    let p = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(default));
    if !p.exists() {
        panic!(
            "this test needs the {what}, which is missing at {} ({var}): run \
             `bash scripts/setup-interop.sh` (it prints the path) or set {var}",
            p.display()
        );
    }
    p
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

/// Run this test binary again, with `args` and environment changes `env`
/// (`None` removes a variable), and return its output. Used to check what the
/// test summary says when the peer or the venv is missing.
pub fn rerun_self(args: &[&str], env: &[(&str, Option<&str>)]) -> Output {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(args).arg("--test-threads=2");
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c.output().unwrap()
}

/// The counts of libtest's summary line: (passed, failed, ignored).
pub fn test_summary(out: &Output) -> (usize, usize, usize) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("test result:"))
        .unwrap_or_else(|| panic!("no test summary in:\n{stdout}"));
    let count = |what: &str| -> usize {
        line.split(';')
            .find_map(|part| part.trim().strip_suffix(what))
            .and_then(|n| n.trim().rsplit(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {what} count in {line}"))
    };
    (count(" passed"), count(" failed"), count(" ignored"))
}

/// The `#[ignore]`d tests of this binary (from `--list --ignored`), sorted.
pub fn ignored_tests() -> Vec<String> {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--list", "--ignored", "--format=terse"])
        .output()
        .unwrap();
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Check that the `#[ignore]`d tests of this binary, which need `what` (a program
/// found through the environment variable `var`), never pass without it: run them
/// again with `var` pointing nowhere, once plainly (each is reported as ignored
/// with the reason "needs the `what`", none passes) and once with
/// `--include-ignored` (each fails, saying what is missing). Returns their names.
pub fn assert_missing_program_is_never_a_pass(var: &str, what: &str) -> Vec<String> {
    let tests = ignored_tests();
    assert!(!tests.is_empty(), "no test is marked as needing the {what}");
    let nowhere = repo().join("target/no-such-dir/no-such-program");
    let env = [(var, Some(nowhere.to_str().unwrap())), ("CI", None)];
    let mut args = vec!["--exact"];
    args.extend(tests.iter().map(String::as_str));
    let plain = rerun_self(&args, &env);
    let stdout = String::from_utf8_lossy(&plain.stdout);
    assert_eq!(
        test_summary(&plain),
        (0, 0, tests.len()),
        "a plain run reports every test that needs the {what} as ignored:\n{stdout}"
    );
    for t in &tests {
        assert!(
            stdout.contains(&format!("test {t} ... ignored, needs the {what}")),
            "{t} is not reported as ignored because it needs the {what}:\n{stdout}"
        );
    }
    args.insert(0, "--include-ignored");
    let forced = rerun_self(&args, &env);
    let stdout = String::from_utf8_lossy(&forced.stdout);
    assert_eq!(
        test_summary(&forced),
        (0, tests.len(), 0),
        "with --include-ignored and no {what}, every test that needs it fails:\n{stdout}"
    );
    assert_eq!(
        stdout
            .matches(&format!("this test needs the {what}, which is missing"))
            .count(),
        tests.len(),
        "each failure says what is missing:\n{stdout}"
    );
    tests
}

/// The Python of the project's venv (pyarrow, numpy, scipy, sparse, duckdb), from
/// `ARROW_SPARSE_PYTHON` or `.venv/bin/python`. Tests that call it are marked
/// `#[ignore = "needs the Python venv ..."]` (see [`peer`]); panics when missing.
pub fn python() -> PathBuf {
    installed("ARROW_SPARSE_PYTHON", ".venv/bin/python", "Python venv")
}

/// At most `nnz` distinct random entries of `shape` as a canonical COO tensor,
/// the `k`-th drawn entry valued `value(k)` (the first of equal draws kept).
pub fn canonical_coo(
    r: &mut Rng,
    shape: &[usize],
    nnz: usize,
    value: impl Fn(usize) -> f64,
) -> arrow_sparse::CooTensor<f64, i64> {
    let mut entries: Vec<(Vec<usize>, f64)> = (0..nnz)
        .map(|k| (shape.iter().map(|&d| r.below(d)).collect(), value(k)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.dedup_by(|a, b| a.0 == b.0);
    arrow_sparse::CooTensor::from_entries(shape.to_vec(), &entries)
        .unwrap()
        .canonicalize()
        .unwrap()
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

#!/usr/bin/env bash
# Runs every test of arrow-sparse. This is the command README.md names and the one
# .ci/run calls. It installs what the tests need by itself: the Python venv with the
# pinned pyarrow, the C++ interop peer and libhdf5 (scripts/setup-interop.sh).
# The debug builds (tests, doc tests, examples) use the cargo features `hdf5`
# (Binsparse HDF5 files) and `object-store` (datasets on S3 / file:// URLs) in
# every invocation, so they share one build of the crate. The release profile
# (the README's main job) is not built here: a cold release build takes 10-17
# minutes on two cores, and tests/readme.rs runs the README's commands, the main
# job's included, on the CLI `cargo test` builds from the same code.
FEATURES=hdf5,object-store
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec </dev/null
# A CI run builds everything once from a clean clone: incremental compilation
# only costs time and disk there.
if [[ "${CI:-}" == true ]]; then export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"; fi

# Each step prints its start time and the time since the run began, so a CI log
# shows which suite takes how long.
START=$SECONDS
step() { printf '\n==> [%s, +%dm%02ds] %s\n' "$(date -u +%H:%M:%S)" $(((SECONDS - START) / 60)) $(((SECONDS - START) % 60)) "$*"; }

# Every temporary folder of this run lives under one, removed on exit.
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/arrow-sparse-test-all.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
scratch() { mktemp -d "$SCRATCH/XXXXXX"; }
# What the tests, doc tests (README's included) and examples put in the temporary
# folder (Python's tempfile.mkdtemp, Rust's std::env::temp_dir, tempfile) goes
# under the scratch folder too, so a run leaves nothing behind.
TMPDIR="$(scratch)"
export TMPDIR

# Two builds run in the background, each at a low priority (nice) and in its
# own process group, so that they take only the CPU time the steps in the
# foreground leave idle (the venv's downloads, the test binaries' subprocesses
# and memory probes, single-threaded compiler phases) instead of slowing them:
# - the fuzz targets (own target dir, sanitizer-coverage flags, about 6.5
#   CPU-minutes), from here on; the fuzz step waits for it;
# - the Python extension, once the tests are built (below).
# `background NICE LOG COMMAND...` starts one: its own session (process group,
# killed as a whole on exit) and, where the kernel groups the CPU time of each
# session (sched_autogroup, on by default on desktop and many CI kernels), that
# group's niceness set too; otherwise the new session would get as much CPU as
# all the foreground steps together whatever its nice value.
background() {
  local n="$1" log="$2"
  shift 2
  setsid bash -c 'echo "$0" > /proc/self/autogroup 2>/dev/null || true; exec nice -n "$0" "$@"' \
    "$n" "$@" >"$log" 2>&1 &
}
FUZZ_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/fuzz"
FUZZ_BUILD_LOG="$SCRATCH/fuzz-build.log"
FUZZ_TARGET_DIR="$FUZZ_TARGET_DIR" FUZZ_PROFILE=smoke \
  background 19 "$FUZZ_BUILD_LOG" bash fuzz/run-all.sh 0
FUZZ_BUILD_PID=$!
PY_BUILD_PID=
trap 'kill -- -"$FUZZ_BUILD_PID" ${PY_BUILD_PID:+-"$PY_BUILD_PID"} 2>/dev/null || true; rm -rf "$SCRATCH"' EXIT
# waits for a background build; shows its log if it failed
await() {
  if ! wait "$2"; then
    cat "$3" >&2
    echo "test-all: the $1 build failed (log above)" >&2
    exit 1
  fi
}

step "interop environment (venv with pyarrow 26.0.1 and pyspark 4.0.5, C++ peer against its libarrow, libhdf5)"
PEER="$(bash scripts/setup-interop.sh | tail -n 1)"
export ARROW_SPARSE_PEER="$PEER"
# tests/parquet.rs runs tests/python/check_parquet.py (pyarrow, scipy, DuckDB) with it,
# tests/extension_column.rs tests/python/check_extension.py (pyarrow extension types)
export ARROW_SPARSE_PYTHON="${ARROW_SPARSE_VENV:-$PWD/.venv}/bin/python"
# tests/dataset_spark.rs runs tests/python/check_dataset_spark.py on Apache Spark
# (pyspark 4.0.5 in the same venv, local mode on the machine's Java >= 17)
ARROW_SPARSE_SPARK_PYTHON="$(bash scripts/setup-spark.sh | tail -n 1)"
export ARROW_SPARSE_SPARK_PYTHON

step "format and lints"
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo clippy --all-targets --locked --features "$FEATURES" -- -D warnings
# with the features the Python step builds (the arrow-sparse it checks is the one
# the line above checked)
cargo clippy -p arrow-sparse-python --locked --features test-build -- -D warnings
# the Python crate without its default feature (no object stores: URLs refused)
cargo clippy -p arrow-sparse-python --locked --no-default-features -- -D warnings
# the fuzz crate (its own workspace and lock file): the harness and the targets
(cd fuzz && cargo fmt -- --check &&
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/../target}/fuzz-check" \
  cargo clippy --locked --lib --bins -- -D warnings)

step "API docs: no rustdoc warnings, a runnable example on every public item"
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --lib --features "$FEATURES"
python3 scripts/check-doc-examples.py

step "module graph flows one way (types -> buffer -> dims -> tensor -> convert -> kernels -> ipc/column/archive/io; paths and method calls)"
python3 scripts/check-module-graph.py

# Tests that need the C++ peer or the venv are #[ignore]d ("needs the libarrow
# peer" / "needs the Python venv"), so a plain `cargo test` reports them as ignored
# instead of passing them. This script runs them (--include-ignored: without the
# peer or venv they fail) and refuses any skipped test: #[ignore] is only for
# tests that need what scripts/setup-interop.sh installs.
no_skips() {
  if grep -E '^test result: .*; [1-9][0-9]* ignored;' "$1" >&2; then
    echo "test-all: tests were skipped (ignored) above; every test must run here" >&2
    exit 1
  fi
}
TEST_LOG="$(scratch)/test.log"
TEST_ARGS=(--locked --features "$FEATURES" --lib --bins --tests --examples)

step "build: unit, integration, interop and property tests; then, in the background, the Python extension"
cargo test "${TEST_ARGS[@]}" --no-run
# The Python extension, into the venv (`test-build`: the same arrow-sparse
# features as the tests, so it links the arrow-sparse they built; see
# python/Cargo.toml), niced like the fuzz build but before it (it is needed
# first). It shares the target dir, which is free: the tests run from their
# executables (scripts/run-tests.py), not under `cargo test`, which would hold
# cargo's lock on it.
PY_BUILD_LOG="$SCRATCH/python-build.log"
ARROW_SPARSE_PY_FEATURES=test-build background 10 "$PY_BUILD_LOG" bash scripts/setup-python.sh
PY_BUILD_PID=$!

step "unit, integration, interop (libarrow, pyarrow, scipy, DuckDB, Spark) and property tests: two test binaries at a time, every test run (none skipped)"
python3 scripts/run-tests.py --jobs 2 --log-dir "$(scratch)" -- "${TEST_ARGS[@]}"

step "Python package arrow_sparse (python/): built into the venv (above), pytest and doctests"
await "Python extension's" "$PY_BUILD_PID" "$PY_BUILD_LOG"
cat "$PY_BUILD_LOG"
ARROW_SPARSE_CLI="${CARGO_TARGET_DIR:-$PWD/target}/debug/arrow-sparse" \
  "${ARROW_SPARSE_VENV:-.venv}/bin/python" -m pytest -q -p no:cacheprovider \
  --doctest-modules python/arrow_sparse python/tests
PY_DIR="$(scratch)"
"${ARROW_SPARSE_VENV:-.venv}/bin/python" python/examples/read_cpp_stream.py
"${ARROW_SPARSE_VENV:-.venv}/bin/python" python/examples/parquet_duckdb.py "$PY_DIR"
"${ARROW_SPARSE_VENV:-.venv}/bin/python" python/examples/spmv_mapped.py "$PY_DIR"
"${ARROW_SPARSE_VENV:-.venv}/bin/python" python/examples/datafusion_spmv.py "$(scratch)"

step "doc tests"
cargo test --locked --features "$FEATURES" --doc 2>&1 | tee "$TEST_LOG"
no_skips "$TEST_LOG"

step "examples"
cargo run --locked --quiet --features "$FEATURES" --example end_to_end -- "$(scratch)"
cargo run --locked --quiet --features "$FEATURES" --example gcs_dm
cargo run --locked --quiet --features "$FEATURES" --example kernels -- "$(scratch)"
cargo run --locked --quiet --features "$FEATURES" --example parquet_archive -- "$(scratch)"
EXT_DIR="$(scratch)"
cargo run --locked --quiet --features "$FEATURES" --example extension_column -- "$EXT_DIR"
"${ARROW_SPARSE_VENV:-.venv}/bin/python" python/examples/read_extension.py "$EXT_DIR"

step "Matrix Market / FROSTT / npz interop with scipy and pydata/sparse"
IO_DIR="$(scratch)"
cargo run --locked --quiet --features "$FEATURES" --example io_roundtrip -- write "$IO_DIR" >/dev/null
"${ARROW_SPARSE_VENV:-.venv}/bin/python" tests/python/test_io_formats.py "$IO_DIR" \
  cargo run --locked --quiet --features "$FEATURES" --example io_roundtrip --

step "fuzz targets (smoke profile): ${FUZZ_SECONDS:-15} s each, two at a time, on the committed corpus plus new inputs (fuzz/run-all.sh; a crash, timeout or allocation above the cap fails)"
# own target dir (sanitizer-coverage flags): the main build stays valid; built
# in the background since the start (above)
await "fuzz targets'" "$FUZZ_BUILD_PID" "$FUZZ_BUILD_LOG"
tail -n 1 "$FUZZ_BUILD_LOG"
FUZZ_TARGET_DIR="$FUZZ_TARGET_DIR" FUZZ_JOBS=2 FUZZ_PROFILE=smoke FUZZ_TIMEOUT=30 TMPDIR="$(scratch)" \
  bash fuzz/run-all.sh "${FUZZ_SECONDS:-15}"

step "the README's main job's command (all README commands ran in tests/readme.rs), and the CLI on a golden file written by libarrow"
CLI="${CARGO_TARGET_DIR:-$PWD/target}/debug/arrow-sparse"
"$CLI" inspect data/sample.mtx
"$CLI" dump format/golden/csf_f32_i16_order201.arrow

step "all tests passed"

#!/usr/bin/env bash
# Runs every test of arrow-sparse. This is the command README.md names and the one
# .ci/run calls. It installs what the tests need by itself: the Python venv with the
# pinned pyarrow and the C++ interop peer (scripts/setup-interop.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec </dev/null

step() { printf '\n==> %s\n' "$*"; }

step "interop environment (venv with pyarrow 26.0.1, C++ peer against its libarrow)"
PEER="$(bash scripts/setup-interop.sh | tail -n 1)"
export ARROW_SPARSE_PEER="$PEER"
# tests/parquet.rs runs tests/python/check_parquet.py (pyarrow, scipy, DuckDB) with it,
# tests/extension_column.rs tests/python/check_extension.py (pyarrow extension types)
export ARROW_SPARSE_PYTHON="${ARROW_SPARSE_VENV:-$PWD/.venv}/bin/python"

step "format and lints"
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings

step "API docs: no rustdoc warnings, a runnable example on every public item"
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --lib
python3 scripts/check-doc-examples.py

step "module graph flows one way (types -> buffer -> dims -> tensor -> kernels -> convert -> ipc/column/archive/io)"
python3 scripts/check-module-graph.py

step "unit, integration, interop and property tests"
cargo test --locked --lib --bins --tests --examples

step "doc tests"
cargo test --locked --doc

step "examples"
cargo run --locked --quiet --example end_to_end -- "$(mktemp -d)"
cargo run --locked --quiet --example gcs_dm
cargo run --locked --quiet --example kernels -- "$(mktemp -d)"
cargo run --locked --quiet --example parquet_archive -- "$(mktemp -d)"
EXT_DIR="$(mktemp -d)"
cargo run --locked --quiet --example extension_column -- "$EXT_DIR"
"${ARROW_SPARSE_VENV:-.venv}/bin/python" python/examples/read_extension.py "$EXT_DIR"

step "Matrix Market / FROSTT / npz interop with scipy and pydata/sparse"
IO_DIR="$(mktemp -d)"
cargo run --locked --quiet --example io_roundtrip -- write "$IO_DIR" >/dev/null
"${ARROW_SPARSE_VENV:-.venv}/bin/python" tests/python/test_io_formats.py "$IO_DIR" \
  cargo run --locked --quiet --example io_roundtrip --

step "CLI on a golden file written by libarrow, and the README quick start on data/sample.mtx"
cargo run --locked --quiet --bin arrow-sparse -- dump format/golden/csf_f32_i16_order201.arrow
CLI_DIR="$(mktemp -d)"
cargo run --locked --quiet --bin arrow-sparse -- inspect data/sample.mtx
cargo run --locked --quiet --bin arrow-sparse -- convert data/sample.mtx "$CLI_DIR/sample.arrow"
cargo run --locked --quiet --bin arrow-sparse -- convert "$CLI_DIR/sample.arrow" "$CLI_DIR/sample.parquet" --to csr
cargo run --locked --quiet --bin arrow-sparse -- dump "$CLI_DIR/sample.parquet"

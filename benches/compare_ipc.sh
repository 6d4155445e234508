#!/usr/bin/env bash
# Side-by-side benchmark of arrow-sparse and libarrow 26 on the same CSR SparseTensor
# file (f64 values, int64 indptr/indices; 10^5, 10^6 and 10^7 nnz by default).
#
#   benches/compare_ipc.sh [--nnz N] [--iters N] [--dir DIR]
#
# 1. builds the C++ peer (scripts/setup-interop.sh; a no-op when it is up to date),
# 2. builds examples/bench_ipc.rs in release mode,
# 3. runs it: it writes the files, times arrow-sparse (best of --iters), runs
#    `arrow-sparse-peer bench-csr FILE ITERS` on the same files and prints one table,
#    then times sub-steps of the full-validation read.
# Results are recorded in benches/RESULTS.md.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

PEER="$(bash scripts/setup-interop.sh | tail -n 1)"
VENV="${ARROW_SPARSE_VENV:-$REPO/.venv}"
cargo build --quiet --release --example bench_ipc

echo "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "cores:    $(nproc) (nproc)"
echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "rustc:    $(rustc --version)"
echo "libarrow: pyarrow $("$VENV/bin/python" -c 'import pyarrow; print(pyarrow.__version__)' 2>/dev/null || echo '?') ($PEER)"
echo
cargo run --quiet --release --example bench_ipc -- --peer "$PEER" "$@"

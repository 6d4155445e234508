#!/usr/bin/env bash
# Side-by-side benchmark of the arrow-sparse kernels, scipy.sparse and libarrow 26 on
# the same tensors (f64 values, int32 and int64 indices, uniform and power-law rows),
# single-threaded and on all cores, with the memory bandwidth measured in the same run.
#
#   benches/compare_kernels.sh [--nnz 1e6,1e7] [--iters N] [--rounds N] [--budget S]
#                              [--filter SUBSTRING[,SUBSTRING...]] [--dir DIR] [--no-results]
#
# 1. builds the C++ peer and the Python venv with numpy + scipy
#    (scripts/setup-interop.sh; a no-op when they are up to date),
# 2. builds examples/bench_kernels.rs in release mode,
# 3. runs it: for each size (default 1e7 non-zeros) and sparsity it draws the data,
#    writes the raw coordinates / values (little-endian binary + JSON sidecar) for
#    benches/compare/kernels_scipy.py and dense Tensor / CSR files for the peer, then
#    times every kernel, each followed by its scipy or libarrow counterpart, for
#    --rounds rounds, and prints the table (about 25 minutes at 1e7 on 2 cores).
# The table is written into benches/RESULTS.md (section "Kernels") (between the generated-block
# markers) unless --no-results is given.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

args=()
results=(--results "$REPO/benches/RESULTS.md")
for a in "$@"; do
  if [[ "$a" == "--no-results" ]]; then
    results=()
  else
    args+=("$a")
  fi
done

PEER="$(bash scripts/setup-interop.sh | tail -n 1)"
VENV="${ARROW_SPARSE_VENV:-$REPO/.venv}"
cargo build --quiet --release --example bench_kernels

echo "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "cores:    $(nproc) (nproc)"
echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "rustc:    $(rustc --version)"
echo "python:   $("$VENV/bin/python" -c 'import numpy, scipy, pyarrow; print("numpy", numpy.__version__, "scipy", scipy.__version__, "pyarrow", pyarrow.__version__)')"
echo "peer:     $PEER"
echo
cargo run --quiet --release --example bench_kernels -- \
  --peer "$PEER" --python "$VENV/bin/python" "${results[@]}" "${args[@]}"

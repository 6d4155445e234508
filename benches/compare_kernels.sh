#!/usr/bin/env bash
# Side-by-side benchmark of the arrow-sparse kernels against scipy.sparse,
# pydata/sparse and libarrow 26 on the same tensors (f64 values, int32 and int64
# indices, uniform and power-law rows, 10^7 non-zeros, 10^6 x 10^6 matrices),
# on one thread and on all cores, with the copy bandwidth measured in the same run,
# ending in a table of the issue-#14 targets with ratio and met / MISSED per row.
#
#   benches/compare_kernels.sh [--quick] [--all] [--nnz 1e6,1e7] [--iters N] [--rounds N]
#                              [--budget S] [--filter SUBSTRING[,SUBSTRING...]]
#                              [--dir DIR] [--no-results]
#
#   (default)  the kernels the targets name (conversions CSR<->CSC, COO->CSR/CSC,
#              dense->sparse, SpMV / SpMM in every format, TTV, MTTKRP, element-wise,
#              reductions) at 10^7 nnz: about 15 minutes on a 2-core machine
#              (pydata/sparse's own kernels take most of it: some run for 10 s)
#   --all      every case of benches/compare/kernel_cases.rs (also canonicalize,
#              COO->CSF, GCS, IPC): about 25-30 minutes
#   --quick    10^6 nnz, the default kernels: a smoke test of a few minutes
#
# 1. builds the C++ peer and the Python venv with numpy, scipy and sparse
#    (scripts/setup-interop.sh; a no-op when they are up to date),
# 2. builds examples/bench_kernels.rs in release mode,
# 3. runs it: for each size and sparsity it draws the data, writes the raw
#    coordinates / values (little-endian binary + JSON sidecar) for
#    benches/compare/kernels_scipy.py and dense Tensor / CSR files for the peer, then
#    times every kernel, each followed by its scipy / pydata / libarrow counterparts
#    (best of --iters runs, --rounds rounds), and prints the tables.
# The load average at the start and end is printed with the results (the machine may
# be shared: ratios come from runs made seconds apart, so both sides see the same load).
# The output is written into benches/RESULTS.md (section "Kernels", between the
# generated-block markers) unless --no-results is given.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

args=()
results=(--results "$REPO/benches/RESULTS.md")
# the kernels of the issue's targets (see the header)
filter=(--filter "convert/coo_to_csr,convert/coo_to_csc,convert/transpose_csx,convert/dense_to_coo/2d,convert/dense_to_csr,convert/dense_to_csf/3d_libarrow,spmv/,csf/ttv,csf/mttkrp/,csf/mttkrp_csr/,elementwise/,reduce/")
size=()
for a in "$@"; do
  case "$a" in
    --no-results) results=() ;;
    --all) filter=() ;;
    --quick) size=(--nnz 1e6) ;;
    --filter) filter=(); args+=("$a") ;;
    *) args+=("$a") ;;
  esac
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
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
echo
cargo run --quiet --release --example bench_kernels -- \
  --peer "$PEER" --python "$VENV/bin/python" "${results[@]}" "${filter[@]}" "${size[@]}" "${args[@]}"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

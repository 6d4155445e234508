#!/usr/bin/env bash
# Text import speed: arrow-sparse's .mtx / .tns readers against scipy.io.mmread
# (and numpy.loadtxt for .tns) on the same files, generated on the fly.
#
#   bash benches/compare_io.sh [--mb N] [--iters N] [--dir DIR]
#
# 1. sets up the venv (scripts/setup-interop.sh; a no-op when it is up to date),
# 2. builds examples/bench_io.rs in release mode and generates DIR/matrix.mtx
#    (column-major sorted like SuiteSparse files), DIR/matrix_shuffled.mtx (same
#    entries, random order) and DIR/tensor.tns (3-D, random order), ~N MB each,
# 3. times arrow-sparse (one thread) and scipy (one thread, then every core),
#    best of --iters, and writes the table to benches/RESULTS-io.md.
# The files are left in DIR (default /tmp/arrow-sparse-bench-io) and not committed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
MB=150
ITERS=3
DIR=/tmp/arrow-sparse-bench-io
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mb) MB="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    *) echo "usage: $0 [--mb N] [--iters N] [--dir DIR]" >&2; exit 2 ;;
  esac
done

bash scripts/setup-interop.sh >/dev/null
VENV="${ARROW_SPARSE_VENV:-$REPO/.venv}"
cargo build --quiet --release --example bench_io
BIN="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/bench_io"

if [[ ! -f "$DIR/tensor.tns" || ! -f "$DIR/.mb-$MB" ]]; then
  rm -rf "$DIR" && mkdir -p "$DIR"
  "$BIN" generate "$DIR" --mb "$MB"
  touch "$DIR/.mb-$MB"
fi

OUT="$(mktemp)"
"$BIN" run "$DIR" --iters "$ITERS" | tee -a "$OUT"
"$VENV/bin/python" benches/compare/bench_io.py "$DIR" "$ITERS" | tee -a "$OUT"

"$VENV/bin/python" - "$OUT" "$REPO/benches/RESULTS-io.md" "$MB" "$ITERS" <<'PY'
import datetime, os, platform, re, subprocess, sys
out, dest, mb, iters = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
rows = {}
for line in open(out):
    if line.startswith("RESULT "):
        f = line.split()
        rows[(f[1], f[2])] = dict(wall=float(f[3]), wmbs=float(f[4]), cpu=float(f[5]), cmbs=float(f[6]))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
import numpy, scipy
ref = {m: rows[k] for k in rows for m in [k[1]] if k[1].startswith("scipy-1")}
lines = [
    "# Text import benchmark: arrow-sparse vs scipy.io.mmread",
    "",
    "Reproduce with one command: `bash benches/compare_io.sh` (`--mb N --iters N --dir DIR`).",
    "It generates the files in /tmp (not committed), builds `examples/bench_io.rs` in release",
    "mode, times our readers on one thread and `scipy.io.mmread` (fast_matrix_market) with one",
    "thread and with every core (`benches/compare/bench_io.py`), and writes this file.",
    "",
    f"- Run: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; "
    f"cores: {os.cpu_count()} (`nproc`); CPU: {cpu}",
    f"- Load average at the end of the run: {os.getloadavg()[0]:.2f} (the machine is shared; "
    "CPU-time figures are the less disturbed ones)",
    f"- {rustc}; numpy {numpy.__version__}, scipy {scipy.__version__}; best of {iters}",
    "- Files: `matrix.mtx`, 10^6 x 10^6 real general, ~5.0M entries sorted by column then row "
    "(SuiteSparse order); `matrix_shuffled.mtx`, the same entries in random order; "
    f"`tensor.tns`, 20000 x 30000 x 40000, ~4.4M entries in random order; ~{mb} MB each.",
    "- Modes: `default` refuses duplicates (free on sorted input, a radix sort of packed "
    "coordinates on unsorted input); `keep` keeps them (parsing and building the COO tensor only). "
    "scipy checks no duplicates.",
    "- MB/s = 10^6 bytes of text per second; wall = elapsed time, cpu = CPU time of the "
    "reading process (all its threads).",
    "",
    "| file | reader | wall s | wall MB/s | cpu s | cpu MB/s | ours / scipy 1-thread (wall) | ours / scipy 1-thread (cpu) |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
]
for (f, m), r in rows.items():
    base = rows.get((f, "scipy-1-thread"))
    if base and not m.startswith(("scipy", "numpy")):
        ratio = f"{r['wmbs'] / base['wmbs']:.2f}x | {r['cmbs'] / base['cmbs']:.2f}x"
    elif f.endswith(".tns") and m != "numpy-loadtxt" and (f, "numpy-loadtxt") in rows:
        b = rows[(f, "numpy-loadtxt")]
        ratio = f"{r['wmbs'] / b['wmbs']:.2f}x vs loadtxt | {r['cmbs'] / b['cmbs']:.2f}x vs loadtxt"
    else:
        ratio = "| "
    who = m if m.startswith(("scipy", "numpy")) else f"arrow-sparse ({m}, 1 thread)"
    lines.append(f"| {f} | {who} | {r['wall']:.3f} | {r['wmbs']:.1f} | {r['cpu']:.3f} | {r['cmbs']:.1f} | {ratio} |")
# keep the hand-written notes of the previous version
notes = ""
if os.path.exists(dest):
    old = open(dest).read()
    if "\n## Notes" in old:
        notes = old[old.index("\n## Notes"):]
open(dest, "w").write("\n".join(lines) + "\n" + notes)
print("\n".join(lines[-len(rows) - 2:]))
print(f"\nwrote {dest}")
PY
rm -f "$OUT"

#!/usr/bin/env bash
# Build every fuzz target of arrow-sparse (fuzz/fuzz_targets/) and run each for
# SECONDS (default 30) on its committed seed corpus (fuzz/corpus/<target>/) plus
# the inputs it finds. Exits non-zero if any target crashed, panicked, hit the
# allocation cap, ran out of memory (-rss_limit_mb) or exceeded the per-input time
# limit (-timeout); the failing input is saved under fuzz/artifacts/<target>/.
#
#   bash fuzz/run-all.sh [SECONDS] [TARGET...]
#
# Builds on the pinned stable toolchain (rust-toolchain.toml) with the
# sanitizer-coverage flags cargo-fuzz would pass (no cargo-fuzz needed); see
# fuzz/README.md for hours-long runs and AddressSanitizer on nightly.
#
# Environment:
#   FUZZ_TARGET_DIR  cargo target dir of the fuzz build (default: target/fuzz under
#                    CARGO_TARGET_DIR or ./target, apart from the main build's
#                    artifacts, so neither invalidates the other)
#   FUZZ_CORPUS_DIR  where each target's new inputs go, one folder per target
#                    (default: a temporary folder removed at exit; the committed
#                    corpus is only read)
#   FUZZ_JOBS        targets run at once (default 1)
#   FUZZ_RSS_MB      libFuzzer -rss_limit_mb (default 2048)
#   FUZZ_TIMEOUT     libFuzzer -timeout, seconds per input (default 10)
#   FUZZ_MAX_LEN     libFuzzer -max_len, bytes (default 65536)
#   FUZZ_NICE        nice level of the fuzzing processes (default 0)
#   FUZZ_PROFILE     cargo profile of the build: release (default) or smoke (less
#                    optimisation, a shorter build; what CI uses)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

SECONDS_EACH="${1:-30}"
shift || true
ALL_TARGETS=(ipc_stream ipc_mmap archive column_ipc column_parquet npz binsparse mtx tns)
if [ $# -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL_TARGETS[@]}"); fi

export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}/fuzz}"
HOST="$(rustc -vV | sed -n 's/^host: //p')"
# What cargo-fuzz passes (sanitizer coverage for libFuzzer's feedback: 8-bit edge
# counters, the PC table, comparison tracing), plus --cfg fuzzing.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing ${FUZZ_EXTRA_RUSTFLAGS:-}"

echo "fuzz: building ${#TARGETS[@]} targets ($CARGO_TARGET_DIR)" >&2
# --target keeps RUSTFLAGS off build scripts and proc macros
PROFILE="${FUZZ_PROFILE:-release}"
cargo build --profile "$PROFILE" --locked --target "$HOST" --manifest-path fuzz/Cargo.toml \
  $(printf -- '--bin %s ' "${TARGETS[@]}")
BIN="$CARGO_TARGET_DIR/$HOST/$PROFILE"
# 0 seconds: build only (libFuzzer reads -max_total_time=0 as "no limit")
if [ "$SECONDS_EACH" = 0 ]; then echo "fuzz: built (binaries in $BIN)" >&2; exit 0; fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/arrow-sparse-fuzz.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
CORPORA="${FUZZ_CORPUS_DIR:-$WORK/corpus}"
# the targets that take a path write their input to a scratch file here
export ARROW_SPARSE_FUZZ_TMP="$WORK/scratch"
mkdir -p "$ARROW_SPARSE_FUZZ_TMP"

run_one() {
  local t="$1"
  mkdir -p "$CORPORA/$t" "fuzz/artifacts/$t"
  local log="$CORPORA/$t.log"
  local rc=0
  nice -n "${FUZZ_NICE:-0}" "$BIN/$t" \
    -max_total_time="$SECONDS_EACH" \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
    -timeout="${FUZZ_TIMEOUT:-10}" \
    -max_len="${FUZZ_MAX_LEN:-65536}" \
    -artifact_prefix="fuzz/artifacts/$t/" \
    -print_final_stats=1 \
    "$CORPORA/$t" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  local execs
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $t FAILED (exit $rc, ${execs:-?} executions); log tail:" >&2
    tail -n 40 "$log" >&2
    ls -l "fuzz/artifacts/$t" >&2 || true
    return 1
  fi
  echo "fuzz: $t ok: ${execs:-?} executions in ${SECONDS_EACH} s" >&2
}

failed=()
pids=()
names=()
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  pids+=($!)
  names+=("$t")
  # at most FUZZ_JOBS at once
  while [ "$(jobs -rp | wc -l)" -ge "${FUZZ_JOBS:-1}" ]; do wait -n || true; done
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done
# keep only the artifacts folders that hold something
find fuzz/artifacts -mindepth 1 -type d -empty -delete 2>/dev/null || true
rmdir fuzz/artifacts 2>/dev/null || true

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in fuzz/artifacts/; fuzz/README.md says how to turn them into regression tests)" >&2
  exit 1
fi
echo "fuzz: all ${#TARGETS[@]} targets ran ${SECONDS_EACH} s each with no crash, timeout or out-of-memory" >&2

#!/usr/bin/env bash
# Set up the libarrow interop environment for arrow-sparse:
#   1. a Python venv (default <repo>/.venv, override with ARROW_SPARSE_VENV) holding
#      the pinned packages of scripts/requirements-interop.txt (pyarrow ships libarrow);
#   2. the C++ peer interop/peer.cc compiled against that libarrow into
#      <repo>/target/peer/arrow-sparse-peer;
#   3. the HDF5 C library the cargo feature `hdf5` links (scripts/setup-hdf5.sh:
#      Debian's libhdf5-dev, with apt-get only when missing).
# Idempotent: pip runs only when the requirements file changed (stamp holds its hash),
# g++ runs only when peer.cc is newer than the binary (or the binary was built against
# another venv). Progress goes to stderr; the last line of stdout is the
# absolute path of the peer binary.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ARROW_SPARSE_VENV:-$REPO/.venv}"
REQ="$REPO/scripts/requirements-interop.txt"
SRC="$REPO/interop/peer.cc"
OUT_DIR="$REPO/target/peer"
PEER="$OUT_DIR/arrow-sparse-peer"
STAMP="$VENV/.arrow-sparse-requirements.sha256"

log() { echo "setup-interop: $*" >&2; }

exec </dev/null

# The C++ peer needs a C++20 compiler: say so before the slow pip step.
if ! command -v g++ >/dev/null; then
  log "error: g++ (a C++20 compiler) is needed to build the interop peer; install it (Debian: apt-get install g++)"
  exit 1
fi

# A venv without a working pip (Debian's python3 -m venv leaves one when ensurepip
# is missing, or an interrupted run) is recreated, not reused forever.
if [[ -e "$VENV" ]] && ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  log "removing the half-made venv at $VENV (no working python or pip in it)"
  rm -rf "$VENV"
fi
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating venv at $VENV"
  if ! python3 -m venv "$VENV" || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    rm -rf "$VENV"
    log "error: python3 -m venv made no venv with pip; install Python >= 3.11 with venv and ensurepip (Debian: apt-get install python3-venv)"
    exit 1
  fi
fi

bash "$REPO/scripts/setup-hdf5.sh"

want_hash="$(sha256sum "$REQ" | cut -d' ' -f1)"
have_hash="$(cat "$STAMP" 2>/dev/null || true)"
if [[ "$want_hash" != "$have_hash" ]]; then
  log "installing $(basename "$REQ") into $VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-input -r "$REQ" >&2
  echo "$want_hash" > "$STAMP"
fi

PA="$("$VENV/bin/python" -c 'import pyarrow,os;print(os.path.dirname(pyarrow.__file__))')"
if [[ ! -f "$PA/libarrow.so.2600" || ! -d "$PA/include/arrow" ]]; then
  log "error: $PA does not contain libarrow.so.2600 and include/arrow"
  exit 1
fi

# The binary's rpath points into the venv it was built against; rebuild when that
# changes (e.g. switching ARROW_SPARSE_VENV) as well as when peer.cc is newer.
PA_STAMP="$PEER.pyarrow-dir"
if [[ ! -x "$PEER" || "$SRC" -nt "$PEER" || "$(cat "$PA_STAMP" 2>/dev/null || true)" != "$PA" ]]; then
  log "compiling $SRC"
  mkdir -p "$OUT_DIR"
  g++ -std=c++20 -O2 "$SRC" -I"$PA/include" -L"$PA" -l:libarrow.so.2600 \
    -Wl,-rpath,"$PA" -Wno-deprecated-declarations -o "$PEER.tmp"
  mv -f "$PEER.tmp" "$PEER"
  echo "$PA" > "$PA_STAMP"
fi

echo "$PEER"

#!/usr/bin/env bash
# Build the Python package arrow_sparse (python/: PyO3 + maturin, abi3) and install
# it, editable, into the venv of scripts/setup-interop.sh (ARROW_SPARSE_VENV, default
# <repo>/.venv; run setup-interop.sh first, it installs maturin and pytest).
#
# The extension is built with the dev profile into the cargo target dir the Rust
# tests use (CARGO_TARGET_DIR, default <repo>/target), so the dependencies compiled
# for `cargo test` are reused; only the binding crate and PyO3 compile here.
# `pip install ./python` builds an optimized wheel instead (what users install).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ARROW_SPARSE_VENV:-$REPO/.venv}"

exec </dev/null

if [[ ! -x "$VENV/bin/maturin" ]]; then
  echo "setup-python: $VENV has no maturin: run scripts/setup-interop.sh first" >&2
  exit 1
fi

# ARROW_SPARSE_PY_FEATURES: cargo features of python/Cargo.toml to build with
# (scripts/test-all.sh passes `test-build`, which reuses the crate its tests built)
FEATURES=()
if [[ -n "${ARROW_SPARSE_PY_FEATURES:-}" ]]; then FEATURES=(--features "$ARROW_SPARSE_PY_FEATURES"); fi
echo "setup-python: building arrow_sparse into $VENV ${FEATURES[*]}" >&2
VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" \
  "$VENV/bin/maturin" develop --quiet --locked "${FEATURES[@]}" --manifest-path "$REPO/python/Cargo.toml" >&2
"$VENV/bin/python" -c 'import arrow_sparse, sys; print("setup-python: arrow_sparse from", arrow_sparse.__file__, file=sys.stderr)'

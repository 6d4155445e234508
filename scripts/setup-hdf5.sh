#!/usr/bin/env bash
# Install what the cargo feature `hdf5` (Binsparse HDF5 files, src/io/hdf5.rs)
# builds against: the HDF5 C library and headers (Debian: libhdf5-dev, 1.10.8 on
# Debian 12) and pkg-config, which hdf5-metno-sys uses to find Debian's serial
# layout (/usr/lib/x86_64-linux-gnu/hdf5/serial). Idempotent: apt-get runs only
# when a package is missing (dpkg -s); without dpkg, an HDF5 that pkg-config
# finds is accepted as it is. Called by scripts/setup-interop.sh; output goes to
# stderr.
set -euo pipefail
exec </dev/null 1>&2

log() { echo "setup-hdf5: $*" >&2; }

PACKAGES=(libhdf5-dev pkg-config)
if ! command -v dpkg >/dev/null; then
  if pkg-config --exists hdf5 2>/dev/null; then
    exit 0
  fi
  log "error: no dpkg here and pkg-config finds no hdf5: install the HDF5 C library with its headers and pkg-config file (>= 1.10), or set HDF5_DIR"
  exit 1
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
SUDO=()
if [[ "$(id -u)" != 0 ]]; then
  if ! command -v sudo >/dev/null; then
    log "error: ${missing[*]} missing and not root (no sudo): apt-get install ${missing[*]}"
    exit 1
  fi
  SUDO=(sudo -n)
fi
log "installing ${missing[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
# stale package lists (a newer libcurl installed than the lists know) make the
# install fail: refresh them once and retry
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  log "apt-get install failed; refreshing the package lists (apt-get update) and retrying"
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

#!/usr/bin/env bash
# Set up Apache Spark (PySpark, local mode) for tests/python/check_dataset_spark.py:
# the pinned packages of scripts/requirements-spark.txt go into the Python venv
# (default <repo>/.venv, override with ARROW_SPARSE_VENV; created when missing).
# Spark runs on the JVM of $JAVA_HOME/bin/java, else `java` on PATH, which must be
# Java >= 17 (checked first; Debian: apt-get install openjdk-17-jre-headless).
# Idempotent: pip runs only when the requirements file changed (stamp holds its hash).
# Progress goes to stderr; the last line of stdout is the venv's python.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ARROW_SPARSE_VENV:-$REPO/.venv}"
REQ="$REPO/scripts/requirements-spark.txt"
STAMP="$VENV/.arrow-sparse-spark.sha256"

log() { echo "setup-spark: $*" >&2; }

exec </dev/null

# Java first: say so before the slow pip step.
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
if ! command -v "$JAVA" >/dev/null; then
  log "error: Spark needs Java >= 17 and there is no $JAVA; install it (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
  exit 1
fi
# java.specification.version is "1.8" for Java 8, "17" for Java 17
java_version="$("$JAVA" -XshowSettings:properties -version 2>&1 \
  | sed -n 's/^ *java\.specification\.version = //p')"
if [[ ! "$java_version" =~ ^[0-9]+$ ]] || (( java_version < 17 )); then
  log "error: Spark 4 needs Java >= 17, $JAVA is version ${java_version:-unknown}; install a newer one (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
  exit 1
fi

# A venv without a working pip (no ensurepip, an interrupted run) is recreated.
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

want_hash="$(sha256sum "$REQ" | cut -d' ' -f1)"
have_hash="$(cat "$STAMP" 2>/dev/null || true)"
if [[ "$want_hash" != "$have_hash" ]]; then
  log "installing $(basename "$REQ") into $VENV (PySpark: ~470 MB)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-input -r "$REQ" >&2
  echo "$want_hash" > "$STAMP"
fi

log "java $java_version, pyspark $("$VENV/bin/python" -c 'import pyspark; print(pyspark.__version__)')"
echo "$VENV/bin/python"

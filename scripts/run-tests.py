#!/usr/bin/env python3
"""Runs the test binaries of a `cargo test` build, several at a time.

    python3 scripts/run-tests.py [--jobs N] [--timeout SECONDS] -- CARGO_TEST_ARGS...

Builds with `cargo test --no-run --message-format=json CARGO_TEST_ARGS` (a no-op
when the build is fresh), then runs every test executable cargo lists with
`--include-ignored`, N at a time (default 2), from the package root, as
`cargo test` would. The slow binaries start first (SLOW below, by measured
time), so the short ones fill the cores beside them.

Why not `cargo test`: it runs the binaries one after another, and four of them
(Spark's JVM, the memory probe's child process, the libarrow / pyarrow
subprocesses, the reference kernels) take 65-75 s each while leaving one of the
two CI cores mostly idle. It also holds cargo's lock on the target directory
while the tests run, so nothing else can build there meanwhile (test-all.sh
builds the Python extension beside the tests).

Each binary's output goes to its own log; a line per binary says how it ended.
The run fails, printing the binary's log, when a binary fails, runs longer than
--timeout (default 900 s; it is then killed), or reports an ignored (skipped)
test: every test must run here (the interop tests are #[ignore]d only so that a
plain `cargo test` without the peer and venv does not report them as passed).
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

# Slowest first (CI, 2 cores, 2026-11-26): Spark 73 s, dataset_memory 74 s,
# kernels_reference 73 s, interop 66 s, parquet 33 s, bad_input 27 s.
SLOW = ["dataset_spark", "dataset_memory", "kernels_reference", "interop", "parquet", "bad_input"]

RESULT = re.compile(r"^test result: (\w+)\. (\d+) passed; (\d+) failed; (\d+) ignored;")


def binaries(cargo_args):
    """(name, kind, executable) of every test executable of the build."""
    cmd = ["cargo", "test", "--no-run", "--message-format=json-render-diagnostics", *cargo_args]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"run-tests: `{' '.join(cmd)}` failed")
    found = []
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        found.append((target["name"], target["kind"][0], msg["executable"], msg["manifest_path"]))
    return found


def order(found):
    """SLOW first, in its order; the rest in cargo's order (a stable sort)."""
    rank = {name: k for k, name in enumerate(SLOW)}
    return sorted(found, key=lambda b: rank.get(b[0], len(SLOW)))


def run_one(b, log_dir, timeout):
    name, kind, exe, manifest = b
    log = os.path.join(log_dir, f"{kind}-{name}.log")
    start = time.monotonic()
    with open(log, "w") as out:
        # its own process group, so a timeout kills its subprocesses too
        p = subprocess.Popen([exe, "--include-ignored"], cwd=os.path.dirname(manifest),
                             stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rc = p.wait()
            timed_out = True
    secs = time.monotonic() - start
    text = open(log, errors="replace").read()
    results = [RESULT.match(l) for l in text.splitlines()]
    results = [m for m in results if m]
    passed = sum(int(m.group(2)) for m in results)
    ignored = sum(int(m.group(4)) for m in results)
    if timed_out:
        why = f"killed after {timeout} s"
    elif rc != 0:
        why = f"exit status {rc}"
    elif not results:
        why = "no test result line"
    elif ignored:
        why = f"{ignored} ignored (skipped) tests: every test must run here"
    else:
        why = None
    return name, kind, secs, passed, why, log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--log-dir", default=None)
    ap.add_argument("cargo_args", nargs="*")
    a = ap.parse_args()
    if a.jobs < 1:
        sys.exit("run-tests: --jobs must be positive")
    log_dir = a.log_dir or os.path.join(os.environ.get("TMPDIR", "/tmp"), f"run-tests-{os.getpid()}")
    os.makedirs(log_dir, exist_ok=True)
    found = order(binaries(a.cargo_args))
    if not found:
        sys.exit("run-tests: cargo listed no test executables")
    start = time.monotonic()
    failed = []
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(run_one, b, log_dir, a.timeout) for b in found]
        for f in as_completed(futures):
            name, kind, secs, passed, why, log = f.result()
            status = "ok" if why is None else f"FAILED ({why})"
            print(f"run-tests: {kind:<7} {name:<24} {passed:>4} passed {secs:7.1f} s  {status}", flush=True)
            if why is not None:
                failed.append((name, log))
    for name, log in failed:
        print(f"\n---- {name}: {log} ----", flush=True)
        sys.stdout.write(open(log, errors="replace").read())
    total = time.monotonic() - start
    print(f"run-tests: {len(found)} test binaries, {len(failed)} failed, {total:.0f} s with {a.jobs} at a time")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

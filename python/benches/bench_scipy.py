"""arrow_sparse against scipy.sparse's npz files, side by side in one run.

    python python/benches/bench_scipy.py [--nnz 10000000] [--repeat 5] [DIR]

A CSR matrix of NNZ float64 entries (int32 indices, 10 per row) is written as an
uncompressed npz (scipy.sparse.save_npz(compressed=False)) and as an Arrow
SparseTensor stream (arrow_sparse.write). Measured, alternating the two in each
round (median of the rounds, warm page cache for both):

* read: scipy.sparse.load_npz against arrow_sparse.open(path)[0].to_scipy(), with
  validation (default: O(nnz) checks of the indices, reading the mapped pages) and
  with validate=False (trusted files); bytes copied = growth of the process's
  anonymous resident memory (a memory map's pages are not copies);
* write, at both durability levels:
  - in the page cache (a crash of the program leaves the old or the new file, a
    crash of the machine may lose it): save_npz(compressed=False) against
    arrow_sparse.write(..., sync=False) (temp file + rename, no fsync);
  - on storage when the call returns: save_npz followed by an fsync of the file
    against arrow_sparse.write's default sync=True (fsync of the temp file before
    the rename);
  bytes copied = the peak growth of the process's anonymous resident memory during
  the write (VmHWM after resetting it through /proc/self/clear_refs; "n/a" where
  the kernel does not allow the reset), i.e. buffers the writer allocated.

The load average (1 min) is printed before and after: numbers from a loaded
machine are noisy (the ratios of one run are comparable, absolute times less).

Build the package optimized for this (pip install ./python, or maturin develop
--release): a dev build measures unoptimized Rust.
"""

import argparse
import gc
import os
import statistics
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import arrow_sparse


def rss_anon():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak():
    """Reset VmHWM to the current resident size; False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def timed_peak(f):
    """Time of f() and the peak growth of resident memory while it ran (None
    when the peak cannot be reset)."""
    gc.collect()
    can = reset_peak()
    before = _status("VmRSS")
    t0 = time.perf_counter()
    f()
    dt = time.perf_counter() - t0
    return dt, (_status("VmHWM") - before) if can else None


def save_npz_synced(path, m):
    sp.save_npz(path, m, compressed=False)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def timed(f):
    gc.collect()
    before = rss_anon()
    t0 = time.perf_counter()
    out = f()
    dt = time.perf_counter() - t0
    grown = rss_anon() - before
    return dt, grown, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--nnz", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    d = args.dir or tempfile.mkdtemp(prefix="arrow-sparse-bench-")
    rows = args.nnz // 10
    rng = np.random.default_rng(0)
    indptr = np.arange(0, args.nnz + 1, 10, dtype=np.int32)
    indices = np.sort(rng.integers(0, rows, (rows, 10), dtype=np.int32), axis=1).reshape(-1)
    m = sp.csr_array((rng.random(args.nnz), indices, indptr), shape=(rows, rows))
    npz, arrow = os.path.join(d, "m.npz"), os.path.join(d, "m.arrow")

    load_before = os.getloadavg()[0]
    writers = {
        "np": lambda: sp.save_npz(npz, m, compressed=False),
        "np_sync": lambda: save_npz_synced(npz, m),
        "as_nosync": lambda: arrow_sparse.write(arrow, m, sync=False),
        "as_sync": lambda: arrow_sparse.write(arrow, m),
    }
    for f in writers.values():  # warm-up, not counted (first-call set-up of either library)
        f()
    w = {k: [] for k in writers}
    wpeak = {k: 0 for k in writers}
    r_np, r_as, r_trust = [], [], []
    c_np, c_as, c_trust = 0, 0, 0
    for _ in range(args.repeat):
        for k, f in writers.items():
            dt, peak = timed_peak(f)
            w[k].append(dt)
            wpeak[k] = None if peak is None or wpeak[k] is None else max(wpeak[k], peak)
        dt, grown, got = timed(lambda: sp.load_npz(npz))
        r_np.append(dt)
        c_np = max(c_np, grown)
        del got
        dt, grown, got = timed(lambda: arrow_sparse.open(arrow)[0].to_scipy())
        r_as.append(dt)
        c_as = max(c_as, grown)
        assert got.nnz == m.nnz
        del got
        dt, grown, got = timed(lambda: arrow_sparse.open(arrow, validate=False)[0].to_scipy())
        r_trust.append(dt)
        c_trust = max(c_trust, grown)
        del got
    load_after = os.getloadavg()[0]

    med = statistics.median
    size_np, size_as = os.path.getsize(npz), os.path.getsize(arrow)

    def mb(b):
        return f"{'n/a':>11}" if b is None else f"{b / 1e6:11.1f}"

    print(f"CSR {rows} x {rows}, nnz {m.nnz}, float64 values, int32 indices; median of {args.repeat} rounds")
    print(f"files: npz {size_np / 1e6:.1f} MB, arrow stream {size_as / 1e6:.1f} MB; "
          f"load average (1 min) {load_before:.2f} before, {load_after:.2f} after; {os.cpu_count()} CPUs")
    print(f"{'read':50}{'time ms':>10}{'copied MB':>11}{'speed-up':>10}")
    print(f"{'scipy.sparse.load_npz':50}{1e3 * med(r_np):10.1f}{c_np / 1e6:11.1f}{1.0:10.2f}")
    print(f"{'arrow_sparse.open + to_scipy (validated)':50}{1e3 * med(r_as):10.1f}{c_as / 1e6:11.1f}{med(r_np) / med(r_as):10.2f}")
    print(f"{'arrow_sparse.open + to_scipy (validate=False)':50}{1e3 * med(r_trust):10.3f}{c_trust / 1e6:11.1f}{med(r_np) / med(r_trust):10.0f}")
    print(f"{'write, in the page cache (no fsync)':50}{'time ms':>10}{'peak MB':>11}{'speed-up':>10}")
    print(f"{'scipy.sparse.save_npz(compressed=False)':50}{1e3 * med(w['np']):10.1f}{mb(wpeak['np'])}{1.0:10.2f}")
    print(f"{'arrow_sparse.write(sync=False)':50}{1e3 * med(w['as_nosync']):10.1f}{mb(wpeak['as_nosync'])}"
          f"{med(w['np']) / med(w['as_nosync']):10.2f}")
    print(f"{'write, on storage (fsync before returning)':50}{'time ms':>10}{'peak MB':>11}{'speed-up':>10}")
    print(f"{'save_npz(compressed=False) + fsync':50}{1e3 * med(w['np_sync']):10.1f}{mb(wpeak['np_sync'])}{1.0:10.2f}")
    print(f"{'arrow_sparse.write (sync=True, default)':50}{1e3 * med(w['as_sync']):10.1f}{mb(wpeak['as_sync'])}"
          f"{med(w['np_sync']) / med(w['as_sync']):10.2f}")
    print("speed-up = scipy's time / ours (above 1: arrow_sparse is faster); peak MB = resident memory the "
          "writer allocated (the matrix itself is not counted)")
    if not args.dir:
        for p in (npz, arrow):
            os.unlink(p)
        os.rmdir(d)


if __name__ == "__main__":
    main()

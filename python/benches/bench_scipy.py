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
* write: save_npz(compressed=False) against arrow_sparse.write of the scipy matrix,
  with its default sync=True (the file is on storage when write returns: fsync
  before the rename, which save_npz does not do) and with sync=False (atomic
  rename, no fsync: the same durability as save_npz).

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

    w_np, w_as, w_nosync = [], [], []
    r_np, r_as, r_trust = [], [], []
    c_np, c_as, c_trust = 0, 0, 0
    for _ in range(args.repeat):
        w_np.append(timed(lambda: sp.save_npz(npz, m, compressed=False))[0])
        w_as.append(timed(lambda: arrow_sparse.write(arrow, m))[0])
        w_nosync.append(timed(lambda: arrow_sparse.write(arrow, m, sync=False))[0])
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

    med = statistics.median
    size_np, size_as = os.path.getsize(npz), os.path.getsize(arrow)
    print(f"CSR {rows} x {rows}, nnz {m.nnz}, float64 values, int32 indices; median of {args.repeat} rounds")
    print(f"files: npz {size_np / 1e6:.1f} MB, arrow stream {size_as / 1e6:.1f} MB")
    print(f"{'':44}{'time ms':>10}{'copied MB':>11}{'speed-up':>10}")
    print(f"{'scipy.sparse.load_npz':44}{1e3 * med(r_np):10.1f}{c_np / 1e6:11.1f}{1.0:10.2f}")
    print(f"{'arrow_sparse.open + to_scipy (validated)':44}{1e3 * med(r_as):10.1f}{c_as / 1e6:11.1f}{med(r_np) / med(r_as):10.2f}")
    print(f"{'arrow_sparse.open + to_scipy (validate=False)':44}{1e3 * med(r_trust):10.3f}{c_trust / 1e6:11.1f}{med(r_np) / med(r_trust):10.0f}")
    print(f"{'scipy.sparse.save_npz(compressed=False)':44}{1e3 * med(w_np):10.1f}{'':11}{1.0:10.2f}")
    print(f"{'arrow_sparse.write (sync=True, default)':44}{1e3 * med(w_as):10.1f}{'':11}{med(w_np) / med(w_as):10.2f}")
    print(f"{'arrow_sparse.write (sync=False)':44}{1e3 * med(w_nosync):10.1f}{'':11}{med(w_np) / med(w_nosync):10.2f}")
    if not args.dir:
        for p in (npz, arrow):
            os.unlink(p)
        os.rmdir(d)


if __name__ == "__main__":
    main()

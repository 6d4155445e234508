#!/usr/bin/env python3
"""Binsparse NPZ / HDF5 speed: arrow-sparse vs the PyPI reference vs scipy save_npz / load_npz.

    python benches/compare_binsparse.py DIR [NNZ]     (default NNZ = 10**7)

Builds one CSR matrix (10 entries per row, float64 values, int64 indices) and
times, best of 3: scipy save_npz (deflated) / load_npz, the reference's
save_binsparse (np.savez, stored) / load_binsparse, and arrow-sparse's Binsparse
writer (stored and deflated) and reader (`cargo run --release --features hdf5
--example bench_binsparse DIR`); the same for Binsparse HDF5 (the reference's
save_binsparse / load_binsparse of a .h5 through h5py, contiguous; arrow-sparse
contiguous and deflated). The reference must read what arrow-sparse wrote.
"""
import os
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp
import binsparse as bs
from binsparse.conversions.scipy import from_scipy, to_scipy


def best(f):
    t = float("inf")
    out = None
    for _ in range(3):
        s = time.perf_counter()
        out = f()
        t = min(t, time.perf_counter() - s)
    return t, out


def main():
    d = sys.argv[1]
    nnz = int(sys.argv[2]) if len(sys.argv) > 2 else 10**7
    os.makedirs(d, exist_ok=True)
    rows = nnz // 10
    rng = np.random.default_rng(1)
    cols = np.sort(rng.choice(rows, size=(rows, 10), replace=True), axis=1)
    indptr = np.arange(0, nnz + 1, 10, dtype=np.int64)
    m = sp.csr_array((rng.random(nnz), cols.reshape(-1).astype(np.int64), indptr), shape=(rows, rows))
    m.sum_duplicates()
    print(f"matrix: {m.shape}, nnz {m.nnz}")
    res = {}
    res["scipy save_npz (deflated)"], _ = best(lambda: sp.save_npz(os.path.join(d, "scipy.npz"), m))
    res["scipy load_npz"], _ = best(lambda: sp.load_npz(os.path.join(d, "scipy.npz")))
    t = from_scipy(m)
    ref = os.path.join(d, "reference.npz")
    res["reference save_binsparse (stored)"], _ = best(lambda: bs.save_binsparse(t, ref))
    res["reference load_binsparse"], _ = best(lambda: bs.load_binsparse(ref))
    res["reference load_binsparse + to_scipy"], _ = best(lambda: to_scipy(bs.load_binsparse(ref)))
    ref5 = os.path.join(d, "reference.h5")
    res["reference save_binsparse .h5 (contiguous)"], _ = best(lambda: bs.save_binsparse(t, ref5))
    res["reference load_binsparse .h5"], _ = best(lambda: bs.load_binsparse(ref5))
    res["reference load_binsparse .h5 + to_scipy"], _ = best(lambda: to_scipy(bs.load_binsparse(ref5)))
    out = subprocess.run(
        ["cargo", "run", "--release", "--quiet", "--features", "hdf5", "--example", "bench_binsparse", "--", d],
        check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        if line.startswith("RESULT"):
            _, what, secs = line.split()[:3]
            res[f"arrow-sparse {what}"] = float(secs)
    for name in ["ours_stored.npz", "ours_deflated.npz", "ours_contiguous.h5", "ours_deflated.h5"]:
        back = to_scipy(bs.load_binsparse(os.path.join(d, name)))
        assert (back != m).nnz == 0, name
    for k, v in res.items():
        print(f"{k:45s} {v:8.3f} s")


if __name__ == "__main__":
    main()

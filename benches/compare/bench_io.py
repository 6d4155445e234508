"""The reference side of benches/compare_io.sh: scipy.io.mmread on the same .mtx
files arrow-sparse reads, on one thread and on every core, and numpy.loadtxt on
the .tns file (no library reads FROSTT files; loadtxt is NumPy's C text parser).

    .venv/bin/python benches/compare/bench_io.py DIR [ITERS]

Prints `RESULT file mode wall_s wall_MB/s cpu_s cpu_MB/s` lines like
examples/bench_io.rs. CPU time is the whole process's (time.process_time), so it
counts scipy's worker threads.
"""
import math
import os
import sys
import time

import numpy as np
import scipy
import scipy.io
import scipy.io._fast_matrix_market as fmm


def bench(label, mode, path, fn, iters):
    size = os.path.getsize(path)
    best, best_cpu = math.inf, math.inf
    for _ in range(iters):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
        del out
    print(f"RESULT {label} {mode} {best:.4f} {size / best / 1e6:.1f} "
          f"{best_cpu:.4f} {size / best_cpu / 1e6:.1f} ({size / 1e6:.1f} MB)", flush=True)


def main():
    d = sys.argv[1]
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for name in ["matrix.mtx", "matrix_shuffled.mtx"]:
        path = os.path.join(d, name)
        for threads, mode in [(1, "scipy-1-thread"), (0, f"scipy-{os.cpu_count()}-threads")]:
            fmm.PARALLELISM = threads
            bench(name, mode, path, lambda: scipy.io.mmread(path), iters)
    path = os.path.join(d, "tensor.tns")
    bench("tensor.tns", "numpy-loadtxt", path, lambda: np.loadtxt(path), 1)


if __name__ == "__main__":
    main()

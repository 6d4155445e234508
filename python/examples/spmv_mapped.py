"""SpMV on a memory-mapped file: the kernel reads the matrix where it lies in the
page cache (no copy into the process), without the GIL.

    python python/examples/spmv_mapped.py [DIR]
"""

import pathlib
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import arrow_sparse

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
m = sp.random_array((200_000, 200_000), density=5e-5, format="csr", rng=1)
path = out / "matrix.arrow"
arrow_sparse.write(path, m)

reader = arrow_sparse.open(path)
a = reader[0]  # validated once, buffers are views of the map
x = np.random.default_rng(2).random(a.shape[1])
t0 = time.perf_counter()
y = arrow_sparse.spmv(a, x)
t1 = time.perf_counter()
assert np.allclose(y, m @ x)
print(f"{path}: {a.nnz} entries mapped, SpMV in {1e3 * (t1 - t0):.1f} ms, equal to scipy's")

"""scipy side of benches/parquet.rs: save_npz(compressed=True) / load_npz on the
same matrix as an arrow-sparse Parquet archive.

    python benches/compare/parquet_npz.py ARCHIVE.parquet OUT_DIR ITERS

Builds the scipy.sparse CSR matrix from the archive (pyarrow; not timed): indptr
from the runs of dim_0, indices from dim_1, data from value (int32 indices, as
scipy chooses for these sizes). Then times, best of ITERS, save_npz(compressed=True)
to OUT_DIR/matrix.npz and load_npz back (checked equal once), and also
pyarrow.parquet.read_table of the archive. Prints one JSON object.
"""

import json
import os
import sys
import time

import numpy as np
import pyarrow.parquet as pq
import scipy
import scipy.sparse as sp


def best(f, iters):
    times = []
    out = None
    for _ in range(iters):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    archive, out_dir, iters = sys.argv[1], sys.argv[2], int(sys.argv[3])
    meta = json.loads(pq.read_metadata(archive).metadata[b"arrow_sparse"])
    rows, cols = meta["shape"]
    table = pq.read_table(archive)
    r = table.column(meta["columns"][0]).to_numpy()
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=rows))]).astype(np.int32)
    indices = table.column(meta["columns"][1]).to_numpy().astype(np.int32)
    data = table.column(meta["value_column"]).to_numpy()
    m = sp.csr_matrix((data, indices, indptr), shape=(rows, cols))
    path = os.path.join(out_dir, "matrix.npz")
    save, _ = best(lambda: sp.save_npz(path, m, compressed=True), iters)
    size = os.path.getsize(path)
    load, back = best(lambda: sp.load_npz(path), iters)
    assert (back != m).nnz == 0, "load_npz gave another matrix"
    read_table, _ = best(lambda: pq.read_table(archive), iters)
    print(json.dumps({
        "scipy": scipy.__version__,
        "nnz": int(m.nnz),
        "npz_bytes": size,
        "save_npz_s": save,
        "load_npz_s": load,
        "pyarrow_read_table_s": read_table,
    }))


if __name__ == "__main__":
    main()

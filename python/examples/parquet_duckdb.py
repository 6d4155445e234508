"""Archive a scipy matrix to Parquet with arrow_sparse, then query the archive
with DuckDB (an SpMV in SQL) and read it back exactly.

    python python/examples/parquet_duckdb.py [DIR]
"""

import json
import pathlib
import sys
import tempfile

import duckdb
import numpy as np
import pyarrow.parquet as pq
import scipy.sparse as sp

import arrow_sparse

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
m = sp.random_array((2000, 1500), density=0.01, format="csr", rng=0)
path = out / "matrix.parquet"
arrow_sparse.write(path, m, to="coo", compression="zstd")

# the archive is an ordinary Parquet table: one column per coordinate, plus values
meta = json.loads(pq.read_metadata(path).metadata[b"arrow_sparse"])
row, col = meta["columns"]
x = np.arange(1500, dtype=np.float64) / 1500
con = duckdb.connect()
con.register("x", {"j": np.arange(1500), "v": x})
rows = con.sql(
    f'SELECT a."{row}" AS i, SUM(a.value * x.v) AS y FROM read_parquet(\'{path}\') AS a '
    f'JOIN x ON a."{col}" = x.j GROUP BY ALL ORDER BY i'
).fetchall()
y = np.zeros(2000)
for i, v in rows:
    y[i] = v
assert np.allclose(y, m @ x), "DuckDB's SpMV differs from scipy's"
print(f"{path}: {m.nnz} entries, {path.stat().st_size} bytes; DuckDB SpMV over {len(rows)} rows matches scipy")

[t] = arrow_sparse.read(path)
assert (t.to_scipy().tocsr() != m).nnz == 0
print(f"read back: {t.format} {t.shape}, identical to the scipy matrix")

"""Write a scipy matrix as an arrow-sparse dataset, register the dataset as a
DataFusion table and compute y = A x as SQL, then check it against scipy and
against arrow_sparse's own kernel.

    python python/examples/datafusion_spmv.py [DIR]
"""

import pathlib
import sys
import tempfile

import datafusion
import numpy as np
import pyarrow as pa
import scipy.sparse as sp

import arrow_sparse

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
out.mkdir(parents=True, exist_ok=True)
a = sp.random_array((20_000, 5_000), density=0.002, format="csr", rng=0)
x = np.linspace(-1.0, 1.0, 5_000)

# 20 parts of 1,000 rows each: DIR/matrix/dim_0_block=K/part-0.parquet + manifest
rows, parts, nbytes = arrow_sparse.write_dataset(out / "matrix", a, partition_by=0, rows_per_file=1_000)
print(f"dataset: {rows} entries in {parts} parts, {nbytes} bytes")

ctx = datafusion.SessionContext()
# every part is a Parquet file with the columns dim_0, dim_1, value (global
# coordinates); the Hive folders add the partition column dim_0_block
ctx.register_parquet("a", str(out / "matrix"), file_extension=".parquet",
                     table_partition_cols=[("dim_0_block", pa.int64())])
ctx.from_pydict({"j": np.arange(5_000), "v": x}, name="x")
y_table = ctx.sql("""
    SELECT a.dim_0 AS i, SUM(a.value * x.v) AS y
    FROM a JOIN x ON a.dim_1 = x.j
    GROUP BY a.dim_0""").to_arrow_table()
y = np.zeros(20_000)
y[y_table["i"].to_numpy()] = y_table["y"].to_numpy()

expected = a @ x
assert np.allclose(y, expected, rtol=1e-12, atol=1e-12), np.abs(y - expected).max()
ours = arrow_sparse.spmv(arrow_sparse.read_dataset(out / "matrix"), x)
assert np.allclose(ours, expected, rtol=1e-12, atol=1e-12)
# a filter on the partition column reads one part
block_3 = ctx.sql("SELECT COUNT(*) AS n FROM a WHERE dim_0_block = 3").to_arrow_table()["n"][0].as_py()
assert block_3 == a[3_000:4_000].nnz
print(f"DataFusion SpMV over the dataset equals scipy's A @ x (max |diff| {np.abs(y - expected).max():.2e})")

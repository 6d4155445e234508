"""Engine checks for arrow-sparse datasets (format/SPEC.md 9.7), run by tests/dataset.rs.

    python tests/python/check_dataset.py CASES.json

CASES.json (written by the Rust test) lists {"dir", "block", "x", "y", "nnz",
"shape", "rows_in_block": [block, count]} items: a 2-D dataset partitioned by
dimension 0, a vector x and arrow-sparse's y = A x (kernels::spmv on the tensor in
memory). For each one:

* pyarrow.dataset reads DIR with Hive partitioning as one table (the manifest,
  whose name starts with `_`, is skipped): every row's `dim_0_block` is its
  `dim_0 // block`, the row count is nnz, and scipy's A @ x from the columns is y;
* DuckDB reads DIR/*/*.parquet with hive_partitioning, computes A x as a join with
  the vector and GROUP BY row (exact for integers), and counts the rows of one
  block through the partition column.

Exit status 0 when every check passes; failures are listed on stderr.
"""

import json
import sys

import duckdb
import numpy as np
import pyarrow.dataset as ds
import scipy.sparse as sp

FAILURES = []


def fail(what, detail):
    FAILURES.append(f"{what}: {detail}")


def check(case):
    d = case["dir"]
    block = case["block"]
    x = np.array(case["x"])
    y = np.array(case["y"])
    m, n = case["shape"]
    table = ds.dataset(d, format="parquet", partitioning="hive").to_table()
    names = sorted(table.column_names)
    if names != ["dim_0", "dim_0_block", "dim_1", "value"]:
        return fail(d, f"columns {names}")
    if table.num_rows != case["nnz"]:
        return fail(d, f"{table.num_rows} rows, expected {case['nnz']}")
    rows = table.column("dim_0").to_numpy()
    cols = table.column("dim_1").to_numpy()
    vals = table.column("value").to_numpy()
    blocks = table.column("dim_0_block").to_numpy()
    if not np.array_equal(rows // block, blocks):
        fail(d, "a row's dim_0_block is not dim_0 // block")
    a = sp.coo_matrix((vals, (rows, cols)), shape=(m, n)).tocsr()
    got = a @ x
    if np.issubdtype(y.dtype, np.integer):
        if not np.array_equal(got.astype(np.int64), y):
            fail(d, "scipy A @ x differs from arrow-sparse's y")
    elif not np.allclose(got, y, rtol=1e-12, atol=1e-12):
        fail(d, "scipy A @ x differs from arrow-sparse's y")
    con = duckdb.connect()
    con.execute("CREATE TABLE x AS SELECT * FROM (SELECT unnest(range(?)) AS i, unnest(?) AS v)", [n, x.tolist()])
    sql = f"""
        SELECT a.dim_0 AS i, SUM(a.value * x.v) AS y
        FROM read_parquet('{d}/*/*.parquet', hive_partitioning = true) AS a
        JOIN x ON a.dim_1 = x.i
        GROUP BY a.dim_0 ORDER BY i
    """
    dense = np.zeros(m, dtype=y.dtype)
    for i, v in con.execute(sql).fetchall():
        dense[i] = v
    if not (np.array_equal(dense, y) if np.issubdtype(y.dtype, np.integer) else np.allclose(dense, y, rtol=1e-12)):
        fail(d, "DuckDB's SpMV differs from arrow-sparse's y")
    k, count = case["rows_in_block"]
    got = con.execute(
        f"SELECT count(*) FROM read_parquet('{d}/*/*.parquet', hive_partitioning = true) WHERE dim_0_block = {k}"
    ).fetchone()[0]
    if got != count:
        fail(d, f"DuckDB counts {got} rows in block {k}, expected {count}")
    print(f"{d}: pyarrow, scipy and DuckDB agree with arrow-sparse ({case['nnz']} entries)", file=sys.stderr)


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    for case in cases:
        check(case)
    for f in FAILURES:
        print(f"FAIL {f}", file=sys.stderr)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()

"""The SQL both engine checks run (check_dataset_spark.py and
check_dataset_datafusion.py) over the view `entries` (BIGINT coordinates dim_0,
dim_1, ..., value as NUM) and the table `x` (the vector: i, x; or the factor
rows: mode, i, r, x)."""


def spmv(num):
    """y = A x for a 2-D tensor: (i, y), rows only for the i with entries."""
    return f"""
        SELECT e.dim_0 AS i, SUM(e.value * CAST(x.x AS {num})) AS y
        FROM entries e JOIN x ON e.dim_1 = x.i
        GROUP BY e.dim_0"""


# MTTKRP along mode 0 of a 3-D tensor: M[i, r] = sum of v * B[j, r] * C[k, r]
MTTKRP = """
        SELECT e.dim_0 AS i, CAST(b.r AS BIGINT) AS r, SUM(e.value * b.x * c.x) AS m
        FROM entries e
        JOIN x b ON b.mode = 1 AND e.dim_1 = b.i
        JOIN x c ON c.mode = 2 AND e.dim_2 = c.i AND c.r = b.r
        GROUP BY e.dim_0, b.r"""


def sum_along(d):
    """The sum of value by the coordinate d: (i, s)."""
    return f"SELECT {d} AS i, SUM(value) AS s FROM entries GROUP BY {d}"

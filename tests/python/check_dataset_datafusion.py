"""DataFusion reads an arrow-sparse dataset directory and computes over it.

    python tests/python/check_dataset_datafusion.py DATASET_DIR X_PARQUET OUT_DIR

The same inputs and outputs as check_dataset_spark.py (read its docstring), with
DataFusion (the `datafusion` Python package: Apache Arrow DataFusion, a Rust query
engine) in place of Spark:

* the dataset is registered as one table over every `*.parquet` file under
  DATASET_DIR (the manifest, a `.json` file, is not one of them), with the Hive
  partition column dim_<d>_block declared, so a filter on it prunes parts;
* 2-D: y = A x (join with the vector, group by row) -> y.parquet (i, y);
* 3-D: MTTKRP along mode 0 with the factor rows of X_PARQUET -> mttkrp.parquet;
* every dim: the sum of value by that coordinate -> sum_dim<n>.parquet (i, s).

Integer values times an integer vector are summed as BIGINT, anything else as
DOUBLE. Results are collected as Arrow tables and written with pyarrow, one file
per query, rows sorted by their keys. OUT_DIR/datafusion.json records the
DataFusion version, the dims and partition columns found, the row count, the
row count of one pruned block, and the query times in seconds.
"""

import json
import os
import re
import sys
import time

import dataset_queries as queries  # beside this script

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def main(dataset_dir, x_path, out_dir):
    import datafusion
    from datafusion import SessionContext

    os.makedirs(out_dir, exist_ok=True)
    ctx = SessionContext()
    manifest = json.load(open(os.path.join(dataset_dir, "_arrow_sparse_dataset.json")))
    key = manifest["partition"]["key"]
    t = time.perf_counter()
    ctx.register_parquet(
        "raw", dataset_dir, table_partition_cols=[(key, pa.int64())], file_extension=".parquet"
    )
    schema = ctx.table("raw").schema()
    columns = [f.name for f in schema]
    dims = sorted((c for c in columns if re.fullmatch(r"dim_\d+", c)), key=lambda c: int(c[4:]))
    if dims != [f"dim_{n}" for n in range(len(dims))] or "value" not in columns or key not in columns:
        sys.exit(f"check_dataset_datafusion: unexpected columns {columns}")
    ctx.register_parquet("x", x_path)
    x_schema = ctx.table("x").schema()
    exact = pa.types.is_integer(schema.field("value").type) and pa.types.is_integer(
        x_schema.field("x").type
    )
    num = "BIGINT" if exact else "DOUBLE"
    ctx.register_view(
        "entries",
        ctx.sql(
            "SELECT "
            + ", ".join(f"CAST({d} AS BIGINT) AS {d}" for d in dims)
            + f", CAST(value AS {num}) AS value, {key} FROM raw"
        ),
    )
    report = {
        "datafusion_version": datafusion.__version__,
        "dims": dims,
        "partition_columns": [c for c in columns if c not in dims and c != "value"],
        "sum_type": num.lower(),
        "register_s": round(time.perf_counter() - t, 3),
        "queries_s": {},
    }

    def query(name, sql, keys):
        t = time.perf_counter()
        table = ctx.sql(sql).to_arrow_table()
        table = table.sort_by([(k, "ascending") for k in keys])
        pq.write_table(table, os.path.join(out_dir, name + ".parquet"))
        report["queries_s"][name] = round(time.perf_counter() - t, 3)
        return table

    count = ctx.sql("SELECT COUNT(*) AS n FROM entries").to_arrow_table()
    report["rows"] = count.column("n")[0].as_py()
    if report["rows"] != manifest["rows"]:
        sys.exit(f"check_dataset_datafusion: {report['rows']} rows, the manifest says {manifest['rows']}")
    # a filter on the partition column reads the rows of that block only
    first = manifest["parts"][0]
    pruned = ctx.sql(f"SELECT COUNT(*) AS n FROM entries WHERE {key} = {first['block']}").to_arrow_table()
    report["rows_in_first_block"] = pruned.column("n")[0].as_py()
    if report["rows_in_first_block"] != first["rows"]:
        sys.exit(f"check_dataset_datafusion: block {first['block']} has {report['rows_in_first_block']} rows, the manifest says {first['rows']}")

    if len(dims) == 2:
        query("y", queries.spmv(num), ["i"])
    elif len(dims) == 3:
        query("mttkrp", queries.MTTKRP, ["i", "r"])
    for n, d in enumerate(dims):
        query(f"sum_dim{n}", queries.sum_along(d), ["i"])
    with open(os.path.join(out_dir, "datafusion.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps(report), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])

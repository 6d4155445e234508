"""Apache Spark reads an arrow-sparse dataset directory and computes over it.

    python tests/python/check_dataset_spark.py DATASET_DIR X_PARQUET OUT_DIR

DATASET_DIR is a dataset: Hive-style parts DIR/dim_<d>_block=<k>/part-0.parquet,
each an arrow-sparse archive with GLOBAL coordinates (columns dim_0, dim_1, ...,
value), plus the manifest _arrow_sparse_dataset.json, which Spark skips (a name
starting with `_`). `spark.read.parquet(DATASET_DIR)` reads all parts as one table;
partition discovery adds the column dim_<d>_block, which is ignored here.

A local Spark (local[2]) computes, each result written by Spark as ONE Parquet file
in OUT_DIR, rows sorted by their key columns:

* 2-D (dim_0, dim_1): y = A x, X_PARQUET holding the vector (columns i int64,
  x float64 or int64) -> y.parquet (i int64, y), rows only for the i with entries.
* 3-D (dim_0, dim_1, dim_2): MTTKRP along mode 0, X_PARQUET holding the factor
  matrices B (mode 1, for dim_1) and C (mode 2, for dim_2) as rows (mode, i, r,
  x float64): M[i, r] = sum of v * B[j, r] * C[k, r] over the entries (i, j, k, v)
  -> mttkrp.parquet (i int64, r int64, m), rows only for the (i, r) reached.
* any number of dims: sum of value by each dim_<n> -> sum_dim<n>.parquet (i int64, s).

Integer values times an integer vector are summed as BIGINT (exact; ANSI mode makes
an overflow an error, not a wrap), anything else as DOUBLE. Result columns come out
nullable (OPTIONAL): Spark reads every Parquet column as nullable.

What Spark (4.0) reads: coordinates INT8 / INT16 / INT32 / INT64 and unsigned
(UINT64 as decimal(20,0)), all cast to BIGINT here; values float32 / float64 /
integers, not FLOAT16 (PARQUET_TYPE_ILLEGAL). The parts must agree on each column's
type: the schema comes from one part's footer and a part with a wider type fails
the read (PARQUET_COLUMN_DATA_TYPE_MISMATCH; mergeSchema fails as well).

OUT_DIR/spark.json records the Spark version, the dims found, the partition
column(s), the row count, and the wall times in seconds of the session start and
of each query (each one's Spark job, including its write).
"""

import glob
import json
import os
import re
import shutil
import sys
import tempfile
import time

import dataset_queries as queries  # beside this script

LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def start_spark(scratch):
    """A quiet local[2] session whose files (conf, spill, warehouse) stay in scratch."""
    conf_dir = os.path.join(scratch, "conf")
    os.makedirs(conf_dir)
    with open(os.path.join(conf_dir, "log4j2.properties"), "w") as f:
        f.write(LOG4J2)
    os.environ["SPARK_CONF_DIR"] = conf_dir  # the launcher puts it on the classpath
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no hostname warning, loopback only
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("arrow-sparse-dataset-check")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.ansi.enabled", "true")
        .config("spark.local.dir", os.path.join(scratch, "local"))
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
        .getOrCreate()
    )


def write_one_file(df, path, keys):
    """Write df as the single Parquet file `path`, rows sorted by keys."""
    tmp = path + ".spark-tmp"
    df.repartition(1).sortWithinPartitions(*keys).write.mode("overwrite").parquet(tmp)
    (part,) = glob.glob(os.path.join(tmp, "part-*.parquet"))
    os.replace(part, path)
    shutil.rmtree(tmp)


def main(dataset_dir, x_path, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    report = {}
    with tempfile.TemporaryDirectory(prefix=".spark-", dir=out_dir) as scratch:
        t = time.perf_counter()
        spark = start_spark(scratch)
        report["spark_version"] = spark.version
        report["session_start_s"] = round(time.perf_counter() - t, 3)
        try:
            report.update(run(spark, dataset_dir, x_path, out_dir))
        finally:
            spark.stop()
    with open(os.path.join(out_dir, "spark.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps(report), file=sys.stderr)


def run(spark, dataset_dir, x_path, out_dir):
    from pyspark.sql.types import IntegralType

    t = time.perf_counter()
    entries = spark.read.parquet(dataset_dir)
    dims = sorted(
        (c for c in entries.columns if re.fullmatch(r"dim_\d+", c)), key=lambda c: int(c[4:])
    )
    if dims != [f"dim_{n}" for n in range(len(dims))] or "value" not in entries.columns:
        sys.exit(f"check_dataset_spark: unexpected columns {entries.columns}")
    x = spark.read.parquet(x_path)
    exact = all(isinstance(df.schema[c].dataType, IntegralType) for df, c in ((entries, "value"), (x, "x")))
    num = "BIGINT" if exact else "DOUBLE"
    # coordinates of any width (INT8 / INT16 / INT32 / INT64) as BIGINT
    entries.selectExpr(*(f"CAST({d} AS BIGINT) AS {d}" for d in dims), f"CAST(value AS {num}) AS value") \
        .createOrReplaceTempView("entries")
    x.createOrReplaceTempView("x")
    report = {
        "dims": dims,
        "partition_columns": [c for c in entries.columns if c not in dims and c != "value"],
        "sum_type": num.lower(),
        "read_s": round(time.perf_counter() - t, 3),
        "queries_s": {},
    }

    def query(name, sql, keys):
        t = time.perf_counter()
        write_one_file(spark.sql(sql), os.path.join(out_dir, name + ".parquet"), keys)
        report["queries_s"][name] = round(time.perf_counter() - t, 3)

    t = time.perf_counter()
    report["rows"] = spark.table("entries").count()
    report["queries_s"]["count"] = round(time.perf_counter() - t, 3)

    if len(dims) == 2:
        query("y", queries.spmv(num), ["i"])
    elif len(dims) == 3:
        query("mttkrp", queries.MTTKRP, ["i", "r"])
    for n, d in enumerate(dims):
        query(f"sum_dim{n}", queries.sum_along(d), ["i"])
    return report


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])

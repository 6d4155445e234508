//! Apache Spark (pyspark 4, local mode, on the machine's Java 17) reads arrow-sparse
//! datasets as one table and computes over them with SQL
//! (`tests/python/check_dataset_spark.py`): y = A x as a join with the vector and
//! a group-by, the sum along every dimension, and an MTTKRP of a 3-D tensor as a
//! join with both factor matrices. Every result must equal the crate's kernels on
//! the same tensor in memory: exactly for integers, within 1e-12 (relative) for
//! floats (tests/common/engines.rs, shared with the DataFusion check). The venv with pyspark is made by `scripts/setup-spark.sh` (run by
//! `scripts/test-all.sh`), found through `ARROW_SPARSE_SPARK_PYTHON`.
#![cfg(feature = "parquet")]

mod common;
#[path = "common/engines.rs"]
mod engines;

use std::path::PathBuf;

/// The venv's Python with pyspark (`ARROW_SPARSE_SPARK_PYTHON`, else `.venv`).
fn spark_python() -> PathBuf {
    let var = "ARROW_SPARSE_SPARK_PYTHON";
    let p = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repo().join(".venv/bin/python"));
    assert!(
        p.exists(),
        "this test needs the Spark venv, which is missing at {} ({var}): run `bash scripts/setup-spark.sh` (it prints the path) or set {var}",
        p.display()
    );
    p
}

#[test]
#[ignore = "needs the Spark venv: run scripts/setup-spark.sh, then cargo test -- --include-ignored"]
fn spark_computes_spmv_sums_and_mttkrp_over_datasets_as_the_kernels_do() {
    let python = spark_python();
    engines::check_engine("Spark", &|ds, x, out| {
        engines::run_script(&python, "check_dataset_spark.py", ds, x, out)
    });
}

/// Without the Spark venv, a plain run reports the test as ignored, and
/// `--include-ignored` makes it fail: it never passes.
#[test]
fn without_spark_the_test_never_passes() {
    let tests =
        common::assert_missing_program_is_never_a_pass("ARROW_SPARSE_SPARK_PYTHON", "Spark venv");
    assert_eq!(
        tests,
        ["spark_computes_spmv_sums_and_mttkrp_over_datasets_as_the_kernels_do"]
    );
}

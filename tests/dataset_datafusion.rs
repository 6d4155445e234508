//! DataFusion (Apache Arrow's query engine, the `datafusion` Python package in the
//! project venv) reads arrow-sparse datasets as one table and computes over them
//! with SQL (`tests/python/check_dataset_datafusion.py`): y = A x as a join with
//! the vector and a group-by, the sum along every dimension, and an MTTKRP of a
//! 3-D tensor. Every result must equal the crate's kernels on the same tensor in
//! memory (tests/common/engines.rs, the checks the Spark test makes). The venv is
//! made by `scripts/setup-interop.sh`, found through `ARROW_SPARSE_PYTHON`.
#![cfg(feature = "parquet")]

mod common;
#[path = "common/engines.rs"]
mod engines;

#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn datafusion_computes_spmv_sums_and_mttkrp_over_datasets_as_the_kernels_do() {
    let python = common::python();
    engines::check_engine("DataFusion", &|ds, x, out| {
        engines::run_script(&python, "check_dataset_datafusion.py", ds, x, out)
    });
}

/// Without the venv, a plain run reports the test as ignored, and
/// `--include-ignored` makes it fail: it never passes.
#[test]
fn without_the_venv_the_datafusion_test_never_passes() {
    let tests =
        common::assert_missing_program_is_never_a_pass("ARROW_SPARSE_PYTHON", "Python venv");
    assert_eq!(
        tests,
        ["datafusion_computes_spmv_sums_and_mttkrp_over_datasets_as_the_kernels_do"]
    );
}

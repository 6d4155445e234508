//! Sparse tensor columns (extension arrays) in a table read from a Parquet file:
//! `column::files::read_tensors` and `read_batches`. Every tensor that reads is
//! converted and goes through kernels, and the column must write back as a table
//! that reads as the same tensors (`arrow_sparse_fuzz::column_round_trip`, shared
//! with `column_ipc`).
#![no_main]

use arrow_sparse_fuzz::{CappedAlloc, column_round_trip};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    column_round_trip("parquet", data);
});

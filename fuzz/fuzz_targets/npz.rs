//! `.npz` archives (scipy.sparse and pydata/sparse layouts, stored or deflated):
//! `io::npz::read` (the input as a file). What reads is converted, goes through kernels, and must
//! write back as an `.npz` that reads as the same tensor.
#![no_main]

use arrow_sparse::io::{ImportOptions, NpzWriteOptions, npz};
use arrow_sparse_fuzz::{CappedAlloc, file_round_trip};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    file_round_trip(
        "npz",
        data,
        |p| npz::read(p, &ImportOptions::default()),
        |p, m| npz::write(p, m, &NpzWriteOptions::default()),
    );
});

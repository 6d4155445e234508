//! Matrix Market `.mtx` files: `io::mtx::read` (the input as a file, so the
//! announced counts are checked against its size). What reads is converted, goes through
//! kernels, and must write back as text that reads as the same tensor.
#![no_main]

use arrow_sparse::io::{ImportOptions, MtxWriteOptions, mtx};
use arrow_sparse_fuzz::{CappedAlloc, file_round_trip};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    file_round_trip(
        "mtx",
        data,
        |p| mtx::read(p, &ImportOptions::default()),
        |p, m| mtx::write(p, m, &MtxWriteOptions::default()),
    );
});

//! `.npz` archives (scipy.sparse and pydata/sparse layouts, stored or deflated):
//! `io::npz::read` (the input as a file). What reads is converted, goes through kernels, and must
//! write back as an `.npz` that reads as the same tensor.
#![no_main]

use arrow_sparse::io::{ImportOptions, NpzWriteOptions, npz};
use arrow_sparse_fuzz::{
    CappedAlloc, assert_same, exercise, read_phase, scratch_file, write_scratch,
};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    arrow_sparse_fuzz::init();
    let options = ImportOptions::default();
    let path = write_scratch("input.npz", data);
    let Ok(m) = read_phase(data.len(), || npz::read(&path, &options)) else {
        return;
    };
    exercise(&m);
    let again = scratch_file("again.npz");
    if let Err(e) = npz::write(&again, &m, &NpzWriteOptions::default()) {
        panic!("an npz that read does not write back: {e}");
    }
    match npz::read(&again, &options) {
        Ok(back) => assert_same("npz round trip", &m.tensor, &back.tensor),
        Err(e) => panic!("an npz written from what read does not read: {e}"),
    }
});

//! Matrix Market `.mtx` files: `io::mtx::read` (the input as a file, so the
//! announced counts are checked against its size). What reads is converted, goes through
//! kernels, and must write back as text that reads as the same tensor.
#![no_main]

use arrow_sparse::io::{ImportOptions, MtxWriteOptions, mtx};
use arrow_sparse_fuzz::{
    CappedAlloc, assert_same, exercise, read_phase, scratch_file, write_scratch,
};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    arrow_sparse_fuzz::init();
    let options = ImportOptions::default();
    let path = write_scratch("input.mtx", data);
    let Ok(m) = read_phase(data.len(), || mtx::read(&path, &options)) else {
        return;
    };
    exercise(&m);
    let again = scratch_file("again.mtx");
    if let Err(e) = mtx::write(&again, &m, &MtxWriteOptions::default()) {
        panic!("a .mtx that read does not write back: {e}");
    }
    match mtx::read(&again, &options) {
        Ok(back) => assert_same(".mtx round trip", &m.tensor, &back.tensor),
        Err(e) => panic!(
            "a .mtx written from what read does not read: {e}\n{}",
            String::from_utf8_lossy(&std::fs::read(&again).unwrap_or_default())
        ),
    }
});

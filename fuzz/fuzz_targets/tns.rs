//! FROSTT `.tns` files: `io::tns::read` (the input as a file, so the
//! announced counts are checked against its size). What reads is converted, goes through
//! kernels, and must write back as text that reads as the same tensor.
#![no_main]

use arrow_sparse::io::{ImportOptions, TnsWriteOptions, tns};
use arrow_sparse_fuzz::{
    CappedAlloc, assert_same, exercise, read_phase, scratch_file, write_scratch,
};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    arrow_sparse_fuzz::init();
    let options = ImportOptions::default();
    let path = write_scratch("input.tns", data);
    let Ok(m) = read_phase(data.len(), || tns::read(&path, &options)) else {
        return;
    };
    exercise(&m);
    let again = scratch_file("again.tns");
    if let Err(e) = tns::write(&again, &m, &TnsWriteOptions::default()) {
        panic!("a .tns that read does not write back: {e}");
    }
    match tns::read(&again, &options) {
        Ok(back) => assert_same(".tns round trip", &m.tensor, &back.tensor),
        Err(e) => panic!(
            "a .tns written from what read does not read: {e}\n{}",
            String::from_utf8_lossy(&std::fs::read(&again).unwrap_or_default())
        ),
    }
});

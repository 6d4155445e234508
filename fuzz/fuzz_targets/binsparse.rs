//! Binsparse `.npz` archives (every predefined format, custom level chains, iso / structure / fill):
//! `io::npz::read` (the input as a file). What reads is converted, goes through kernels, and must
//! write back as a Binsparse `.npz` that reads as the same tensor.
#![no_main]

use arrow_sparse::ValueType;
use arrow_sparse::io::{ImportOptions, NpzFlavor, NpzWriteOptions, npz};
use arrow_sparse_fuzz::{CappedAlloc, file_round_trip};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    file_round_trip(
        "npz",
        data,
        |p| npz::read(p, &ImportOptions::default()),
        |p, m| {
            // Binsparse has no float16: such tensors (from scipy / pydata inputs)
            // are written in their own layout
            let options = if m.tensor.value_type() == ValueType::Float16 {
                NpzWriteOptions::default()
            } else {
                NpzWriteOptions::default().with_flavor(NpzFlavor::Binsparse)
            };
            npz::write(p, m, &options)
        },
    );
});

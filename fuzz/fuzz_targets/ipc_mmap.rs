//! The memory-mapped reader: the input as a file, `MmapReader::open_with`, every
//! message by `get` and `iter`, and `ipc::read_tensor_stream`. Whatever decodes is
//! converted, goes through kernels and must re-encode to the same tensor.
#![no_main]

use arrow_sparse::ipc::{self, MmapReader, StreamReadOptions};
use arrow_sparse_fuzz::{CappedAlloc, exercise, read_phase, write_scratch};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    arrow_sparse_fuzz::init();
    let path = write_scratch("input.arrow", data);
    let options = StreamReadOptions::default();
    let got = read_phase(
        data.len(),
        || -> arrow_sparse::Result<Vec<ipc::TensorMessage>> {
            let r = MmapReader::open_with(&path, &options)?;
            assert_eq!(r.len(), r.messages().len(), "len and messages()");
            let mut out = Vec::new();
            for (i, m) in r.iter().enumerate().take(64) {
                let by_index = r.get(i);
                match (&m, &by_index) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(a.tensor.nnz(), b.tensor.nnz(), "iter and get differ at {i}")
                    }
                    (Err(_), Err(_)) => {}
                    _ => panic!(
                        "iter and get disagree at message {i}: {:?} / {:?}",
                        m.is_ok(),
                        by_index.is_ok()
                    ),
                }
                if let Ok(m) = m {
                    out.push(m);
                }
            }
            assert!(r.get(r.len()).is_err(), "get past the end");
            Ok(out)
        },
    );
    let whole = read_phase(data.len(), || ipc::read_tensor_stream(&path, &options));
    if let Ok(got) = got {
        for m in got.iter().take(4) {
            exercise(m);
        }
    }
    let _ = whole;
});

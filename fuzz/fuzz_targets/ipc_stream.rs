//! IPC tensor messages from bytes: `ipc::decode` message by message (aligned and
//! misaligned), `TensorStreamReader` over a `Read`, and `MmapReader::from_buffer`.
//! Whatever decodes is converted to every format, goes through kernels and must
//! re-encode to the same tensor.
#![no_main]

use arrow_buffer::Buffer;
use arrow_sparse::ipc::{self, MmapReader, StreamReadOptions, TensorStreamReader};
use arrow_sparse_fuzz::{CappedAlloc, assert_same, exercise, read_phase};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

/// Messages exercised per input (the rest are only decoded).
const EXERCISED: usize = 4;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    arrow_sparse_fuzz::init();
    let options = StreamReadOptions::default();
    // message by message from an aligned buffer, then from one misaligned by a byte
    for shift in [0usize, 1] {
        let mut v = vec![0u8; shift];
        v.extend_from_slice(data);
        let all = Buffer::from(v).slice(shift);
        let mut at = 0;
        let mut n = 0;
        while at < all.len() && n < 64 {
            let rest = all.slice(at);
            match read_phase(data.len(), || ipc::decode(&rest, &options)) {
                Ok(Some((m, used))) => {
                    assert!(
                        used > 0 && used <= rest.len(),
                        "decode used {used} of {}",
                        rest.len()
                    );
                    if shift == 0 && n < EXERCISED {
                        exercise(&m);
                    }
                    at += used;
                    n += 1;
                }
                Ok(None) | Err(_) => break,
            }
        }
    }
    // the streaming reader over io::Read
    let streamed: Vec<_> = read_phase(data.len(), || {
        TensorStreamReader::with_options(data, &options)
            .take(64)
            .collect()
    });
    // the same bytes through the streaming reader: the same tensors as message by
    // message (exercised above)
    let mut at = 0;
    let all = Buffer::from(data.to_vec());
    for m in streamed.iter().take(EXERCISED) {
        let Ok(m) = m else { break };
        let Ok(Some((d, used))) = ipc::decode(&all.slice(at), &options) else {
            panic!("TensorStreamReader read a message that decode refuses");
        };
        assert_same("TensorStreamReader vs decode", &m.tensor, &d.tensor);
        at += used;
    }
    // the index-building reader over a buffer
    let _ = read_phase(data.len(), || -> arrow_sparse::Result<()> {
        let r = MmapReader::from_buffer(Buffer::from(data.to_vec()), &options)?;
        for i in 0..r.len().min(64) {
            let _ = r.get(i);
        }
        let _ = r.get(r.len());
        Ok(())
    });
});

//! IPC benchmarks for CSR SparseTensor messages (f64 values, int64 indptr/indices).
//!
//! ```text
//! cargo bench --bench ipc                 # everything, about a minute
//! cargo bench --bench ipc -- ipc/write    # one group
//! ```
//!
//! * `ipc/write/csr/f64_i64/1e7`: `encode` + `EncodedMessage::write_to` into a
//!   pre-reserved, pre-faulted `Vec` (throughput = message bytes).
//! * `ipc/mmap_read_full/csr/f64_i64/{1e5,1e6,1e7}`: `MmapReader::open` + `get(0)`
//!   with full validation (throughput = index bytes: indptr + indices; the target is
//!   5 GB/s).
//! * `ipc/mmap_read_trusted/csr/f64_i64/{1e5,1e6,1e7}`: the same with
//!   `Validation::Trusted`; the time should not depend on the size.
//! * `tensor/validate_full/csr/f64_i64/1e7`: `AnyCsx::try_new` with full validation
//!   on buffers already in memory (no mmap, no page faults): the pure cost of the
//!   O(nnz) checks, to compare with the mmap figure.
//!
//! The matrices are `nnz/10 x 10^6` (10^6 x 10^6 for 10^7 nnz), generated
//! deterministically (`benches/compare/gen.rs`) and written once into a tempdir.
//! Dropping the reader (munmap) is excluded from the timings, as in the libarrow peer.

use arrow_sparse::TensorOptions;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arrow_sparse::ipc::{self, MmapReader, StreamReadOptions, StreamWriteOptions};
use arrow_sparse::{AnyCsx, AnyTensor, Validation};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

#[path = "compare/gen.rs"]
#[allow(dead_code)]
mod datagen;

const SIZES: [usize; 3] = [100_000, 1_000_000, 10_000_000];
const BIG: usize = 10_000_000;

struct Fixture {
    _dir: tempfile::TempDir,
    /// (nnz, path, index bytes)
    files: Vec<(usize, PathBuf, usize)>,
    big: AnyTensor,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    let mut big = None;
    for &n in &SIZES {
        let t = datagen::csr_any(n, 42);
        let path = dir
            .path()
            .join(format!("csr_f64_i64_{}.arrows", datagen::size_label(n)));
        ipc::write_tensor_stream(&path, [&t.clone().into()], &StreamWriteOptions::default())
            .expect("write file");
        files.push((n, path, t.index_bytes()));
        if n == BIG {
            big = Some(t);
        }
    }
    Fixture {
        _dir: dir,
        files,
        big: big.expect("big tensor"),
    }
}

fn open_get(path: &Path, options: &StreamReadOptions) -> (MmapReader, ipc::TensorMessage) {
    let r = MmapReader::open_with(path, &options.clone()).expect("open");
    let m = r.get(0).expect("get");
    (r, m)
}

fn benches(c: &mut Criterion) {
    let fx = fixture();

    // (a) encode + write into a pre-reserved Vec.
    {
        let t = &fx.big;
        let len = ipc::encode(t, &[], &StreamWriteOptions::default())
            .expect("encode")
            .len();
        // Reserve and write once so the pages are faulted in (vec![0; n] would not:
        // calloc maps lazily zeroed pages), as the peer memsets its buffer.
        let mut out: Vec<u8> = Vec::with_capacity(len);
        out.resize(len, 1);
        let mut g = c.benchmark_group("ipc/write/csr/f64_i64");
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function(datagen::size_label(BIG), |b| {
            b.iter(|| {
                out.clear();
                let m =
                    ipc::encode(black_box(t), &[], &StreamWriteOptions::default()).expect("encode");
                m.write_to(&mut out).expect("write");
                black_box(out.len())
            })
        });
        g.finish();
    }

    // (b) mmap open + get(0), full validation; (c) the same, trusted.
    for (group, validation) in [
        ("ipc/mmap_read_full/csr/f64_i64", Validation::Full),
        ("ipc/mmap_read_trusted/csr/f64_i64", Validation::Trusted),
    ] {
        let options = StreamReadOptions::default().with_validation(validation);
        let mut g = c.benchmark_group(group);
        for (n, path, index_bytes) in &fx.files {
            g.throughput(Throughput::Bytes(*index_bytes as u64));
            g.bench_with_input(
                BenchmarkId::from_parameter(datagen::size_label(*n)),
                path,
                |b, path| b.iter_with_large_drop(|| open_get(black_box(path), &options)),
            );
        }
        g.finish();
    }

    // The O(nnz) checks alone, on buffers already in memory.
    {
        let AnyTensor::Csx(m) = &fx.big else {
            unreachable!("csr")
        };
        let mut g = c.benchmark_group("tensor/validate_full/csr/f64_i64");
        g.throughput(Throughput::Bytes(fx.big.index_bytes() as u64));
        g.bench_function(datagen::size_label(BIG), |b| {
            b.iter(|| {
                AnyCsx::try_new(
                    m.shape().to_vec(),
                    m.axis(),
                    m.indptr().clone(),
                    m.indices().clone(),
                    m.values().clone(),
                    &TensorOptions::default(),
                )
                .expect("valid")
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = ipc_benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(ipc_benches);

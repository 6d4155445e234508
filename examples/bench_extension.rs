//! Writing N tensors as one sparse tensor column (one record batch, arrow-ipc
//! `FileWriter`) against N separate SparseTensor messages (`ipc::TensorStreamWriter`):
//! time and bytes, and reading them back (column: validate every row once and take
//! every row zero-copy; messages: `ipc::TensorStreamReader`, validating each).
//!
//! `cargo run --release --example bench_extension` (numbers in
//! benches/RESULTS-extension.md). Best of 7 runs, in memory.

use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::Schema;
use arrow_sparse::column::SparseTensorArray;
use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, ipc};
use std::sync::Arc;

/// N random CSR matrices (f64 values, int32 indices) of `n x n` with `nnz` entries.
fn matrices(count: usize, n: usize, nnz: usize) -> Vec<AnyTensor> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..count)
        .map(|_| {
            let entries: Vec<(Vec<usize>, f64)> = (0..nnz)
                .map(|_| {
                    let k = next();
                    (
                        vec![(k % n as u64) as usize, ((k >> 32) % n as u64) as usize],
                        (k >> 11) as f64 * 1e-6,
                    )
                })
                .collect();
            let coo = CooTensor::<f64, i64>::from_entries(vec![n, n], &entries).unwrap();
            coo.to_csx::<i32, i32>(CompressedAxis::Row).unwrap().into()
        })
        .collect()
}

fn best<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..7 {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        out = Some(r);
    }
    (best, out.unwrap())
}

fn column_bytes(tensors: &[AnyTensor]) -> Vec<u8> {
    let column = SparseTensorArray::from_tensors(tensors).unwrap();
    let schema = Arc::new(Schema::new(vec![column.field("tensor")]));
    let batch =
        RecordBatch::try_new(schema.clone(), vec![column.into_array() as ArrayRef]).unwrap();
    let mut bytes = Vec::new();
    let mut w = arrow_ipc::writer::FileWriter::try_new(&mut bytes, &schema).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    bytes
}

fn message_bytes(tensors: &[AnyTensor]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut w = ipc::TensorStreamWriter::new(&mut bytes);
    for t in tensors {
        w.write(t).unwrap();
    }
    w.finish().unwrap();
    bytes
}

fn read_column(bytes: &[u8]) -> usize {
    let r = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
    let schema = r.schema();
    let mut nnz = 0;
    for b in r {
        let b = b.unwrap();
        let col = SparseTensorArray::try_new(schema.field(0), b.column(0)).unwrap();
        for t in col.iter() {
            nnz += t.unwrap().unwrap().nnz();
        }
    }
    nnz
}

fn read_messages(bytes: &[u8]) -> usize {
    ipc::TensorStreamReader::new(bytes)
        .map(|m| m.unwrap().tensor.nnz())
        .sum()
}

fn main() {
    println!("| case | layout | write | bytes | read + validate |");
    println!("|---|---|---:|---:|---:|");
    for (label, count, n, nnz) in [
        ("10^4 x CSR 16x16, 8 nnz", 10_000, 16, 8),
        ("100 x CSR 2000x2000, 2*10^4 nnz", 100, 2000, 20_000),
    ] {
        let ts = matrices(count, n, nnz);
        let (tw_c, col) = best(|| column_bytes(&ts));
        let (tb, _) = best(|| SparseTensorArray::from_tensors(&ts).unwrap());
        eprintln!(
            "{label}: building the column alone: {:.2} ms",
            tb.as_secs_f64() * 1e3
        );
        let column = SparseTensorArray::from_tensors(&ts).unwrap();
        let schema = Arc::new(Schema::new(vec![column.field("tensor")]));
        let batch = RecordBatch::try_new(schema.clone(), vec![column.into_array()]).unwrap();
        let (tw, _) = best(|| {
            let mut bytes = Vec::new();
            let mut w = arrow_ipc::writer::FileWriter::try_new(&mut bytes, &schema).unwrap();
            w.write(&batch).unwrap();
            w.finish().unwrap();
        });
        eprintln!(
            "{label}: FileWriter alone: {:.2} ms",
            tw.as_secs_f64() * 1e3
        );
        let (tw_m, msg) = best(|| message_bytes(&ts));
        let (tr_c, nc) = best(|| read_column(&col));
        let (tr_m, nm) = best(|| read_messages(&msg));
        assert_eq!(nc, nm);
        let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1e3);
        println!(
            "| {label} | one extension column | {} | {} | {} |",
            ms(tw_c),
            col.len(),
            ms(tr_c)
        );
        println!(
            "| {label} | {count} SparseTensor messages | {} | {} | {} |",
            ms(tw_m),
            msg.len(),
            ms(tr_m)
        );
    }
}

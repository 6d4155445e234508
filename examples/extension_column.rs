//! A table with an `id` column and a sparse tensor column (`arrow_sparse.csr`),
//! written to an Arrow IPC file (arrow-ipc's `FileWriter`) and to Parquet (the
//! parquet crate's `ArrowWriter`), read back with the standard readers; each row
//! comes back as a CSR matrix whose buffers are slices of the column's buffers.
//!
//! `cargo run --example extension_column -- DIR` writes `DIR/table.arrow` and
//! `DIR/table.parquet`; `python/examples/read_extension.py DIR` reads both into
//! scipy.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use arrow_sparse::column::SparseTensorArray;
use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    // 100 small CSR matrices, one per user: an identity-like pattern scaled by id
    let tensors: Vec<AnyTensor> = (0..100usize)
        .map(|id| {
            let n = 3 + id % 5;
            let entries: Vec<(Vec<usize>, f64)> = (0..n)
                .map(|i| (vec![i, (i + id) % n], (id + i) as f64 * 0.5))
                .collect();
            let coo = CooTensor::<f64, i64>::from_entries(vec![n, n], &entries)?;
            AnyTensor::from(coo.to_csx::<i32, i32>(CompressedAxis::Row)?)
                .with_dim_names(vec!["user".into(), "item".into()])
        })
        .collect::<arrow_sparse::Result<_>>()?;

    let column = SparseTensorArray::from_tensors(&tensors)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        column.field("tensor"),
    ]));
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..tensors.len() as i64));
    let batch = RecordBatch::try_new(schema.clone(), vec![ids, column.into_array()])?;

    let ipc_path = dir.join("table.arrow");
    let mut w = arrow_ipc::writer::FileWriter::try_new(File::create(&ipc_path)?, &schema)?;
    w.write(&batch)?;
    w.finish()?;

    let pq_path = dir.join("table.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(File::create(&pq_path)?, schema, None)?;
    w.write(&batch)?;
    w.close()?;

    // read both back with the standard readers
    let from_ipc = arrow_ipc::reader::FileReader::try_new(File::open(&ipc_path)?, None)?
        .collect::<Result<Vec<_>, _>>()?;
    let from_pq = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
        File::open(&pq_path)?,
        1024,
    )?
    .collect::<Result<Vec<_>, _>>()?;
    for (what, batches) in [("Arrow IPC", from_ipc), ("Parquet", from_pq)] {
        let mut rows = 0;
        for b in &batches {
            let col = SparseTensorArray::from_batch(b, "tensor")?;
            for (i, t) in col.iter().enumerate() {
                assert_eq!(t?.as_ref(), Some(&tensors[rows + i]));
            }
            rows += col.len();
        }
        assert_eq!(rows, tensors.len());
        println!(
            "{what}: {rows} CSR matrices read back exactly ({} bytes)",
            std::fs::metadata(if what == "Parquet" {
                &pq_path
            } else {
                &ipc_path
            })?
            .len()
        );
    }
    println!("wrote {} and {}", ipc_path.display(), pq_path.display());
    Ok(())
}

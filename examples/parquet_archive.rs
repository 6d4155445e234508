//! Parquet archives: archive a CSR matrix in small row groups, list the row groups
//! and their coordinate ranges, restore the exact tensor (the same IPC bytes),
//! read a range of rows decoding only the row groups that hold it, and write /
//! stream an archive chunk by chunk, as for a tensor larger than memory.
//!
//! Run: `cargo run --release --example parquet_archive [OUT_DIR]`

use std::path::PathBuf;

use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions, ArchiveWriter, TensorSpec};
use arrow_sparse::ipc::{self, TensorMessage};
use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, IndexType, ValueType};

fn main() -> Result<(), arrow_sparse::Error> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);

    // A 1000 x 50 banded matrix: 3 entries per row, as CSR with int32 indices.
    let entries: Vec<(Vec<usize>, f64)> = (0..1000usize)
        .flat_map(|i| (0..3).map(move |k| (vec![i, (i + 7 * k) % 50], (i * 3 + k) as f64)))
        .collect();
    let coo = CooTensor::<f64, i64>::from_entries(vec![1000, 50], &entries)?
        .with_dim_names(vec!["row".into(), "col".into()])?;
    let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
    let message = TensorMessage {
        tensor: csr.clone(),
        custom_metadata: vec![("source".into(), "parquet_archive example".into())],
    };

    // Archive it in row groups of 500 rows (one row per stored entry).
    let path = dir.join("arrow-sparse-example.parquet");
    let options = ArchiveWriteOptions::default().with_row_group_size(500);
    let summary = archive::write_archive(&path, &message, &options)?;
    println!(
        "wrote {}: {} rows in {} row groups, {} bytes",
        path.display(),
        summary.rows,
        summary.row_groups,
        summary.bytes
    );
    assert_eq!((summary.rows, summary.row_groups), (3000, 6));

    // The footer alone says where each row group lies in coordinate space.
    let reader = ArchiveReader::open(&path)?;
    println!("columns {:?}", reader.columns());
    for i in 0..reader.num_row_groups() {
        let info = reader.row_group_info(i)?;
        println!(
            "  row group {i}: rows {}..{}, row range {:?}",
            info.first_row,
            info.first_row + info.rows,
            info.ranges[0]
        );
    }

    // The whole archive: the same tensor, hence the same IPC message bytes.
    let back = reader.read()?;
    assert_eq!(back.tensor, csr);
    assert_eq!(back.custom_metadata, message.custom_metadata);
    let bytes = |m: &TensorMessage| -> Result<Vec<u8>, arrow_sparse::Error> {
        Ok(ipc::encode(
            &m.tensor,
            &m.custom_metadata,
            &ipc::StreamWriteOptions::default(),
        )?
        .to_vec())
    };
    assert_eq!(bytes(&back)?, bytes(&message)?);

    // Rows 600..650: only the row groups whose statistics overlap are decoded.
    let part = reader.read_range(0, 600..650)?;
    println!(
        "rows 600..650: {} entries, {} of {} row groups decoded",
        part.tensor.nnz(),
        part.row_groups_read,
        part.row_groups_total
    );
    assert_eq!(
        (part.tensor.shape(), part.tensor.nnz()),
        (&[50, 50][..], 150)
    );
    assert_eq!(part.row_groups_read, 1);

    // Chunked writing: blocks of rows appended in storage order, then streamed
    // back one row group at a time (each a COO chunk of the whole shape).
    let chunked = dir.join("arrow-sparse-example-chunks.parquet");
    let spec = TensorSpec::coo(vec![1000, 50], ValueType::Float64, IndexType::Int32);
    let mut writer = ArchiveWriter::create(&chunked, spec, &options)?;
    for block in entries.chunks(700) {
        writer.write_chunk(&CooTensor::<f64, i64>::from_entries(vec![1000, 50], block)?.into())?;
    }
    let summary = writer.finish()?;
    let reader = ArchiveReader::open(&chunked)?;
    let mut streamed = 0;
    for chunk in reader.chunks() {
        streamed += chunk?.nnz();
    }
    println!(
        "chunked archive: {} rows in {} row groups, streamed back {streamed} entries",
        summary.rows, summary.row_groups
    );
    assert_eq!(streamed, entries.len());
    let restored = reader.read()?.tensor.to_coo::<f64, i64>()?.canonicalize()?;
    let expected = CooTensor::<f64, i64>::from_entries(vec![1000, 50], &entries)?.canonicalize()?;
    assert_eq!(restored, expected);

    std::fs::remove_file(&path)?;
    std::fs::remove_file(&chunked)?;
    Ok(())
}

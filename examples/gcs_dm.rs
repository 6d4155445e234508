//! GCS and DM tensors: reduce an N-D tensor to a CSR matrix, view a DM tensor
//! without copying, print the MLIR encodings, and write / read them as Arrow IPC
//! (a plain Arrow reader sees the storage matrix).
//!
//! Run: `cargo run --release --example gcs_dm`

use arrow_sparse::dims::DimMap;
use arrow_sparse::ipc::{self, MmapReader, StreamWriteOptions, TensorMessage};
use arrow_sparse::tensor::gcs::best_mapping;
use arrow_sparse::{AnyTensor, CompressedAxis, CooTensor, Format, IndexType, dump};

fn main() -> Result<(), arrow_sparse::Error> {
    // The (2, 3, 4) example of the GCS introduction.
    let coo: AnyTensor = CooTensor::<i32, i64>::from_entries(
        vec![2, 3, 4],
        &[
            (vec![0, 0, 1], 1),
            (vec![0, 0, 2], 2),
            (vec![0, 0, 3], 3),
            (vec![0, 2, 1], 4),
            (vec![1, 0, 0], 5),
            (vec![1, 0, 3], 6),
            (vec![1, 2, 0], 7),
            (vec![1, 2, 2], 8),
            (vec![1, 2, 3], 9),
        ],
    )?
    .into();

    // GCS with dimensions (2, 1, 0) and partitioning (1,): a 4 x 6 CSR matrix.
    let map = DimMap::try_new(vec![2, 3, 4], vec![2, 1, 0], vec![1])?;
    let gcs = coo.to_gcs(map, CompressedAxis::Row, IndexType::Int32)?;
    if let AnyTensor::Gcs(g) = &gcs {
        println!("GCS reduced shape {:?}", g.matrix().shape());
        println!(
            "  matrix: {}",
            dump::json_line(&AnyTensor::Csx(g.matrix().clone()))?
        );
    }
    println!("  tensor: {}", dump::json_line(&gcs)?);
    println!("  MLIR:   {}", gcs.levels()?.mlir_encoding());
    let (best, bytes) = best_mapping(&[2, 3, 4], 9, CompressedAxis::Row)?;
    println!(
        "fewest-bytes mapping: dimensions {:?}, partitioning {:?} ({bytes} index bytes)",
        best.dimensions(),
        best.partitioning()
    );

    // DM over CSF storage, then no-copy views.
    let dm = coo.to_dm(
        DimMap::try_new(vec![2, 3, 4], vec![0, 2, 1], vec![1, 2])?,
        Format::Csf,
        IndexType::Int64,
    )?;
    let AnyTensor::Dm(dm) = dm else {
        unreachable!()
    };
    let view = dm.transpose(0, 2)?.slice(0, 0, 4, 3)?.rotate(1, 1)?;
    println!(
        "DM view {:?} of storage {:?}: {}",
        view.shape(),
        view.storage().shape(),
        dump::json_line(&AnyTensor::Dm(view.clone()))?
    );

    // On the wire: libarrow sees the storage; we get the N-D tensors back. (The
    // file goes to a temporary folder removed at the end.)
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("gcs-dm.arrow");
    let messages = [
        TensorMessage::from(gcs.clone()),
        TensorMessage::from(AnyTensor::Dm(view.clone())),
    ];
    ipc::write_tensor_stream(&path, &messages, &StreamWriteOptions::default())?;
    let reader = MmapReader::open(&path)?;
    for (i, m) in reader.iter().enumerate() {
        let m = m?;
        assert_eq!(m, messages[i]);
        println!("{}", dump::summary(i, &m, None));
    }
    println!("ok");
    Ok(())
}

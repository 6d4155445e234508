//! End to end on built-in data: build sparse tensors in every format, write them to
//! an Arrow IPC stream file, map it back zero-copy, convert, and print what the
//! CLI's `inspect` and `dump` would print.
//!
//! Run: `cargo run --release --example end_to_end [OUT_DIR]`

use std::path::PathBuf;

use arrow_sparse::ipc::{self, MmapReader, StreamWriteOptions, TensorMessage};
use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format, IndexType, dump};

fn main() -> Result<(), arrow_sparse::Error> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let path = dir.join("arrow-sparse-example.arrow");

    // A 3-D tensor (a tiny "user x item x day" count cube) and a 2-D matrix.
    let cube = CooTensor::<f32, i64>::from_entries(
        vec![3, 4, 5],
        &[
            (vec![0, 1, 0], 30.333334),
            (vec![1, 0, 2], 5.6666665),
            (vec![2, 3, 4], 1.0),
            (vec![0, 1, 3], 2.5),
        ],
    )?
    .with_dim_names(vec!["user".into(), "item".into(), "day".into()])?
    .canonicalize()?;
    let matrix = CooTensor::<f64, i32>::from_entries(
        vec![4, 6],
        &[(vec![0, 1], 1.5), (vec![2, 0], 3.0), (vec![3, 5], 8.5)],
    )?;

    let tensors: Vec<AnyTensor> = vec![
        cube.clone().into(),
        cube.to_csf::<i16, i16>(&[2, 0, 1])?.into(),
        matrix.to_csx::<i32, i32>(CompressedAxis::Row)?.into(),
        matrix.to_csx::<i32, i32>(CompressedAxis::Column)?.into(),
        matrix.to_dense()?.into(),
    ];
    let mut messages: Vec<TensorMessage> = tensors.into_iter().map(TensorMessage::from).collect();
    messages[0]
        .custom_metadata
        .push(("source".into(), "end_to_end example".into()));
    ipc::write_tensor_stream(&path, &messages, &StreamWriteOptions::default())?;
    println!("wrote {} tensors to {}", messages.len(), path.display());

    // Read back through a memory map: buffers point into the file.
    let reader = MmapReader::open(&path)?;
    for (i, info) in reader.messages().iter().enumerate() {
        let msg = reader.get(i)?;
        println!(
            "{}",
            dump::summary(
                i,
                &msg,
                Some(info.body_offset + info.body_len - info.offset)
            )
        );
        println!("  json: {}", dump::json_line(&msg.tensor)?);
        assert_eq!(msg, messages[i], "round trip");
    }

    // Convert the CSF tensor to COO with int8 coordinates: same entries as the source.
    let csf = reader.get(1)?.tensor;
    let coo8 = csf.convert(Format::Coo, IndexType::Int8, None)?;
    println!("CSF -> COO(int8): {}", dump::json_line(&coo8)?);
    assert_eq!(
        dump::json_line(&coo8)?.split("\"shape\"").nth(1),
        dump::json_line(&messages[0].tensor)?
            .split("\"shape\"")
            .nth(1)
    );
    println!("ok");
    Ok(())
}

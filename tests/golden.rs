//! Golden files written by libarrow 26 (see format/golden/README.md): our reader
//! sees exactly what libarrow sees, and our writer reproduces them byte for byte.
//! These run without the C++ peer.

mod common;

use arrow_sparse::dump::json_line;
use arrow_sparse::ipc::{MmapReader, StreamReadOptions, TensorStreamReader, TensorStreamWriter};

fn golden_files() -> Vec<std::path::PathBuf> {
    let dir = common::repo().join("format/golden");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "arrow"))
        .collect();
    v.sort();
    assert!(v.len() >= 8, "golden files missing in {}", dir.display());
    v
}

#[test]
fn golden_files_read_like_libarrow_reads_them() {
    for path in golden_files() {
        let reader = MmapReader::open(&path).unwrap();
        let ours: String = reader
            .iter()
            .map(|m| json_line(&m.unwrap().tensor).unwrap() + "\n")
            .collect();
        let theirs = std::fs::read_to_string(path.with_extension("jsonl")).unwrap();
        common::assert_same_dump(&ours, &theirs, &path.display().to_string());
        // the streaming reader agrees with the mmap reader
        let bytes = std::fs::read(&path).unwrap();
        // (compared through the dump: NaN values make PartialEq useless here)
        let streamed: String = TensorStreamReader::new(&bytes[..])
            .map(|m| json_line(&m.unwrap().tensor).unwrap() + "\n")
            .collect();
        assert_eq!(streamed, ours, "{}", path.display());
    }
}

#[test]
fn golden_files_are_rewritten_byte_for_byte() {
    for path in golden_files() {
        let bytes = std::fs::read(&path).unwrap();
        let mut w = TensorStreamWriter::new(Vec::new());
        for m in MmapReader::open_with(&path, &StreamReadOptions::default())
            .unwrap()
            .iter()
        {
            let m = m.unwrap();
            w.write_with_metadata(&m.tensor, &m.custom_metadata)
                .unwrap();
        }
        let ours = w.finish().unwrap();
        if ours != bytes {
            let at = ours
                .iter()
                .zip(&bytes)
                .position(|(a, b)| a != b)
                .unwrap_or(ours.len().min(bytes.len()));
            panic!(
                "{}: our encoding differs from libarrow's at byte {at} (ours {} bytes, theirs {})",
                path.display(),
                ours.len(),
                bytes.len()
            );
        }
    }
}

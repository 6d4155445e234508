//! Golden files written by libarrow 26 (see format/golden/README.md): our reader
//! sees exactly what libarrow sees, and our writer reproduces them byte for byte.
//! Files whose index describes entries without stored values (`*_negzero_*`,
//! format/SPEC.md 3.4) read as the empty tensor of their `*_zeros_*` twin and are
//! rewritten as it. These run without the C++ peer.

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

/// libarrow's dump line as arrow-sparse reads the message: entries whose values
/// are not stored (`"valueless_entries"`) are not entries (format/SPEC.md 3.4).
fn as_read(theirs: &str) -> String {
    theirs
        .lines()
        .map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            if v.as_object_mut()
                .unwrap()
                .remove("valueless_entries")
                .is_some()
            {
                assert_eq!(v["entries"], serde_json::json!([]), "{line}");
                v["nnz"] = 0.into();
            }
            v.to_string() + "\n"
        })
        .collect()
}

/// The file our writer reproduces for `path`: itself, or for a file with
/// valueless entries its `*_zeros_*` twin (the same conversion of +0.0).
fn rewritten_as(path: &std::path::Path) -> std::path::PathBuf {
    let jsonl = std::fs::read_to_string(path.with_extension("jsonl")).unwrap();
    if !jsonl.contains("\"valueless_entries\"") {
        return path.to_path_buf();
    }
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.contains("_negzero_"), "{name}: valueless entries");
    path.with_file_name(name.replace("_negzero_", "_zeros_"))
}

#[test]
fn golden_files_read_like_libarrow_reads_them() {
    for path in golden_files() {
        let reader = MmapReader::open(&path).unwrap();
        let ours: String = reader
            .iter()
            .map(|m| json_line(&m.unwrap().tensor).unwrap() + "\n")
            .collect();
        let theirs = as_read(&std::fs::read_to_string(path.with_extension("jsonl")).unwrap());
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
        let bytes = std::fs::read(rewritten_as(&path)).unwrap();
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

/// The files with valueless entries are there, and nothing else differs from
/// their twins: same shape, dim names, types and axis order, no entries.
#[test]
fn valueless_entries_read_as_the_empty_tensor_libarrow_meant() {
    let mut twins = 0;
    for path in golden_files() {
        let twin = rewritten_as(&path);
        if twin == path {
            continue;
        }
        twins += 1;
        let read = |p: &std::path::Path| -> Vec<arrow_sparse::AnyTensor> {
            MmapReader::open(p)
                .unwrap()
                .iter()
                .map(|m| m.unwrap().tensor)
                .collect()
        };
        let (ours, twin_read) = (read(&path), read(&twin));
        assert_eq!(ours, twin_read, "{}", path.display());
        assert!(ours.iter().all(|t| t.nnz() == 0), "{}", path.display());
        // the streaming reader agrees
        let bytes = std::fs::read(&path).unwrap();
        let streamed: Vec<_> = TensorStreamReader::new(&bytes[..])
            .map(|m| m.unwrap().tensor)
            .collect();
        assert_eq!(streamed, ours, "{}", path.display());
    }
    assert_eq!(twins, 2, "csf_negzero_f64_i32 and csr_negzero_f32_i16");
}

/// Files libarrow 26 writes when a dense float tensor holds -0.0 besides other
/// non-zeros (tests/data/lossy/README.md): their values are lost, and reading them
/// is a typed error saying so, never a tensor with wrong values.
#[test]
fn libarrow_files_that_lost_values_are_refused() {
    let dir = common::repo().join("tests/data/lossy");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "arrow") {
            continue;
        }
        n += 1;
        for result in [
            arrow_sparse::ipc::read_tensor_stream(&path, &StreamReadOptions::default()).map(|_| ()),
            MmapReader::open(&path).and_then(|r| r.get(0)).map(|_| ()),
        ] {
            let e = result.unwrap_err();
            assert!(
                matches!(e, arrow_sparse::Error::Invariant { .. })
                    && e.to_string().contains("values are lost"),
                "{}: {e}",
                path.display()
            );
        }
    }
    assert_eq!(n, 3);
}

/// Entries without values are accepted only as libarrow writes them: a CSR / CSC
/// indptr that starts at 0, never decreases and counts at most one entry per
/// element of a row, a CSF index that passes every check but the values' length.
#[test]
fn valueless_entries_are_checked_like_stored_ones() {
    let dir = common::repo().join("format/golden");
    let body_of = |bytes: &[u8]| 8 + i32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let refused = |bytes: &[u8], label: &str| {
        let e = arrow_sparse::ipc::decode(
            &arrow_buffer::Buffer::from_vec(bytes.to_vec()),
            &StreamReadOptions::default(),
        )
        .map(|_| ())
        .unwrap_err();
        assert!(
            matches!(
                e,
                arrow_sparse::Error::Invariant { .. }
                    | arrow_sparse::Error::IndexOutOfBounds { .. }
            ),
            "{label}: {e}"
        );
    };
    // CSR 3x4, int16 indptr 0 1 1 3 at the start of the body
    let csr = std::fs::read(dir.join("csr_negzero_f32_i16.arrow")).unwrap();
    let at = body_of(&csr);
    for (label, indptr) in [
        ("a row of 5 entries in 4 columns", [0i16, 5, 5, 5]),
        ("a decreasing indptr", [0, 2, 1, 3]),
        ("an indptr not starting at 0", [1, 1, 1, 3]),
        ("a negative indptr", [0, -1, 1, 3]),
    ] {
        let mut bad = csr.clone();
        for (k, x) in indptr.iter().enumerate() {
            bad[at + 2 * k..at + 2 * k + 2].copy_from_slice(&x.to_le_bytes());
        }
        refused(&bad, label);
    }
    // CSF [4,2,3], axis order [1,2,0], int32: indptr[0] (3 elements, 16 bytes
    // padded), indptr[1] (4, 16), indices[0] (2, 8), indices[1] (3, 16), then
    // indices[2] = 0 1 3 (dimension 0, extent 4)
    let csf = std::fs::read(dir.join("csf_negzero_f64_i32.arrow")).unwrap();
    let leaves = body_of(&csf) + 16 + 16 + 8 + 16;
    assert_eq!(
        &csf[leaves..leaves + 12],
        &[0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0]
    );
    let mut bad = csf.clone();
    bad[leaves + 8] = 4;
    refused(&bad, "a leaf outside its dimension");
    let mut bad = csf.clone();
    bad[body_of(&csf) + 8] = 2; // indptr[0] = 0 2 2: one node of level 1 unreachable
    refused(&bad, "an indptr not ending at the next level's length");
}

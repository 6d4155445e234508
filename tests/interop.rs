//! Interop with libarrow 26 through the C++ peer (`scripts/setup-interop.sh`).
//!
//! For a matrix of formats, value types, index types, dimensionalities, nnz (0,
//! small, ~10^6) and dim names:
//! * files arrow-sparse writes are read by libarrow with identical entries
//!   (`peer dump` vs our dump);
//! * libarrow re-encodes them byte for byte as we encoded them (`peer rewrite`);
//! * tensors libarrow builds itself (its dense -> sparse conversions) are read by
//!   arrow-sparse with identical entries, and our encoding of the same tensor is
//!   byte-identical to libarrow's.
//!
//! Skipped (with a message) when the peer is not built, except under `CI=true`.

mod common;
#[path = "common/corpus.rs"]
mod corpus;
use common::Rng;
use corpus::{Gen, Reach, names, random_coo};

use std::path::Path;

use arrow_sparse::dump::json_line;
use arrow_sparse::ipc::{self, MmapReader, StreamWriteOptions, TensorMessage};
use arrow_sparse::{
    AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, DenseTensor, Format, IndexType,
};

fn write(path: &Path, tensors: &[AnyTensor]) {
    let msgs: Vec<TensorMessage> = tensors.iter().cloned().map(TensorMessage::from).collect();
    ipc::write_tensor_stream(path, &msgs, &StreamWriteOptions::default()).unwrap();
}

fn our_dump(path: &Path) -> String {
    MmapReader::open(path)
        .unwrap()
        .iter()
        .map(|m| json_line(&m.unwrap().tensor).unwrap() + "\n")
        .collect()
}

/// Our file -> libarrow reads the same entries -> libarrow re-encodes it to the
/// same bytes -> we read libarrow's file back the same.
fn check_both_directions(peer: &Path, dir: &Path, name: &str, tensors: &[AnyTensor]) {
    let ours = dir.join(format!("{name}.arrow"));
    write(&ours, tensors);
    let theirs_dump = common::run_peer(peer, &["dump", ours.to_str().unwrap()]);
    let our_dump_text = our_dump(&ours);
    common::assert_same_dump(&our_dump_text, &theirs_dump, name);
    let rewritten = dir.join(format!("{name}.libarrow.arrow"));
    common::run_peer(
        peer,
        &[
            "rewrite",
            ours.to_str().unwrap(),
            rewritten.to_str().unwrap(),
        ],
    );
    let (a, b) = (
        std::fs::read(&ours).unwrap(),
        std::fs::read(&rewritten).unwrap(),
    );
    if a != b {
        // find the first differing message for a useful failure
        let ra = MmapReader::open(&ours).unwrap();
        let rb = MmapReader::open(&rewritten).unwrap();
        for (i, (x, y)) in ra.messages().iter().zip(rb.messages()).enumerate() {
            let ma = &a[x.offset..x.body_offset + x.body_len];
            let mb = &b[y.offset..y.body_offset + y.body_len];
            assert!(
                ma == mb,
                "{name}: message {i} differs from libarrow's encoding: {}",
                json_line(&ra.get(i).unwrap().tensor).unwrap()
            );
        }
        panic!("{name}: files differ ({} vs {} bytes)", a.len(), b.len());
    }
    assert_eq!(
        our_dump(&rewritten),
        our_dump_text,
        "{name}: reading libarrow's file"
    );
}

#[test]
fn every_type_and_format_round_trips_with_libarrow() {
    let Some(peer) = common::peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let all = corpus::every_type(0x9E37_79B9_7F4A_7C15, Reach::Libarrow);
    // coverage of the matrix, so a generator change cannot silently drop a corner
    let formats: std::collections::HashSet<_> = all
        .iter()
        .map(|t| (t.format(), t.value_type(), t.index_type()))
        .collect();
    assert_eq!(
        formats.len(),
        11 * (7 * 4 + 1),
        "format x value x index combinations"
    );
    check_both_directions(&peer, dir.path(), "matrix", &all);
}

#[test]
fn every_csf_axis_order_of_3d_and_4d_tensors() {
    let Some(peer) = common::peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(42);
    let mut all = Vec::new();
    for shape in [vec![4usize, 5, 6], vec![3, 4, 2, 5]] {
        let n = shape.len();
        let coo64 = random_coo::<f64, i64>(&mut r, &shape, 30, true, CoordLayout::RowMajor);
        let coo16 = random_coo::<i32, u16>(&mut r, &shape, 30, false, CoordLayout::RowMajor);
        for order in permutations(n) {
            all.push(
                AnyTensor::from(coo64.to_csf::<i64, i64>(&order).unwrap())
                    .with_dim_names(names(n, true))
                    .unwrap(),
            );
            all.push(coo16.to_csf::<u16, u16>(&order).unwrap().into());
        }
    }
    assert_eq!(all.len(), 2 * (6 + 24));
    check_both_directions(&peer, dir.path(), "csf_orders", &all);
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

#[test]
fn about_a_million_nonzeros_in_every_format() {
    let Some(peer) = common::peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(7);
    let nnz = 1_000_000;
    let m = random_coo::<f64, i64>(&mut r, &[20_000, 30_000], nnz, true, CoordLayout::RowMajor);
    let t3 = random_coo::<f32, i32>(&mut r, &[1000, 2000, 500], nnz, true, CoordLayout::RowMajor);
    let all: Vec<AnyTensor> = vec![
        m.clone().into(),
        m.to_csx::<i64, i64>(CompressedAxis::Row).unwrap().into(),
        m.cast_indices::<u32>()
            .unwrap()
            .to_csx::<u32, u32>(CompressedAxis::Column)
            .unwrap()
            .into(),
        t3.to_csf::<i32, i32>(&[2, 0, 1]).unwrap().into(),
        random_coo::<i64, i32>(
            &mut r,
            &[1000, 1000, 1000],
            nnz,
            false,
            CoordLayout::ColumnMajor,
        )
        .into(),
    ];
    assert!(all.iter().all(|t| t.nnz() >= 990_000));
    check_both_directions(&peer, dir.path(), "large", &all);
}

/// libarrow builds the sparse tensors from dense ones with its own conversions:
/// we read them with the same entries as libarrow and as our own conversion, and
/// our encoding of the same tensor is byte-identical to libarrow's.
#[test]
fn tensors_libarrow_builds_are_read_exactly() {
    let Some(peer) = common::peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(99);
    let mut dense2: Vec<AnyTensor> = Vec::new();
    let mut dense3: Vec<AnyTensor> = Vec::new();
    for (i, shape) in [vec![5usize, 7], vec![1, 9], vec![6, 1], vec![0, 3]]
        .into_iter()
        .enumerate()
    {
        let size: usize = shape.iter().product();
        let vals: Vec<f64> = (0..size)
            .map(|_| {
                if r.below(3) == 0 {
                    f64::random(&mut r)
                } else {
                    0.0
                }
            })
            .collect();
        let t = DenseTensor::<f64>::try_new(shape.clone(), vals.into()).unwrap();
        dense2.push(
            AnyTensor::from(t)
                .with_dim_names(names(2, i % 2 == 0))
                .unwrap(),
        );
    }
    for shape in [vec![3usize, 4, 5], vec![4, 2, 3], vec![2, 3, 2, 3]] {
        let size: usize = shape.iter().product();
        let vals: Vec<i32> = (0..size)
            .map(|_| {
                if r.below(3) == 0 {
                    i32::random(&mut r)
                } else {
                    0
                }
            })
            .collect();
        dense3.push(
            DenseTensor::<i32>::try_new(shape.clone(), vals.into())
                .unwrap()
                .into(),
        );
    }
    let d2 = dir.path().join("dense2.arrow");
    let d3 = dir.path().join("dense3.arrow");
    write(&d2, &dense2);
    write(&d3, &dense3);
    let index_types = [
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    ];
    for (src, dense, formats) in [
        (&d2, &dense2, &["coo", "csr", "csc", "csf"][..]),
        (&d3, &dense3, &["coo", "csf"][..]),
    ] {
        for fmt in formats {
            for it in index_types {
                let out = dir.path().join(format!("{fmt}_{it}.arrow"));
                common::run_peer(
                    &peer,
                    &[
                        "from-dense",
                        src.to_str().unwrap(),
                        out.to_str().unwrap(),
                        fmt,
                        it,
                    ],
                );
                // libarrow's view and ours of libarrow's file agree
                let theirs = common::run_peer(&peer, &["dump", out.to_str().unwrap()]);
                common::assert_same_dump(
                    &our_dump(&out),
                    &theirs,
                    &format!("from-dense {fmt} {it}"),
                );
                // our conversion of the same dense tensors encodes to the same bytes
                let reader = MmapReader::open(&out).unwrap();
                let mut ours = ipc::TensorStreamWriter::new(Vec::new());
                for (k, d) in dense.iter().enumerate() {
                    let theirs_t = reader.get(k).unwrap().tensor;
                    let order = theirs_t.axis_order().map(|o| o.to_vec());
                    let target: Format = fmt.parse().unwrap();
                    let mine = d
                        .convert(target, it.parse().unwrap(), order.as_deref())
                        .unwrap();
                    ours.write(&mine).unwrap();
                }
                let ours = ours.finish().unwrap();
                assert!(
                    ours == std::fs::read(&out).unwrap(),
                    "from-dense {fmt} {it}: our encoding differs from libarrow's"
                );
            }
        }
    }
}

#[test]
fn custom_metadata_is_invisible_to_libarrow_and_kept_by_us() {
    let Some(peer) = common::peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let t: AnyTensor =
        CooTensor::<f32, i64>::from_entries(vec![3, 3], &[(vec![0, 2], 1.0), (vec![2, 1], 2.0)])
            .unwrap()
            .into();
    let meta = vec![
        ("ARROW:extension:name".to_string(), "x.test".to_string()),
        ("k".to_string(), "v".to_string()),
    ];
    let path = dir.path().join("meta.arrow");
    ipc::write_tensor_stream(
        &path,
        &[TensorMessage {
            tensor: t.clone(),
            custom_metadata: meta.clone(),
        }],
        &StreamWriteOptions::default(),
    )
    .unwrap();
    let back = ipc::read_tensor_stream(&path, &Default::default()).unwrap();
    assert_eq!(back[0].custom_metadata, meta);
    let theirs = common::run_peer(&peer, &["dump", path.to_str().unwrap()]);
    common::assert_same_dump(&our_dump(&path), &theirs, "custom metadata");
}

/// GCS and DM files: libarrow reads the storage message (the reduced matrix for
/// GCS) with exactly the expected entries; arrow-sparse restores the N-D tensor.
#[test]
fn gcs_and_dm_files_degrade_to_their_storage_for_libarrow() {
    use arrow_sparse::dims::DimMap;
    let Some(peer) = common::peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(2024);
    let shape = vec![4usize, 5, 6, 3];
    let coo: AnyTensor =
        random_coo::<f64, i64>(&mut r, &shape, 60, true, CoordLayout::RowMajor).into();
    let mut tensors = Vec::new();
    for (dims, part, axis, it) in [
        (vec![0, 1, 2, 3], 2, CompressedAxis::Row, IndexType::Int64),
        (
            vec![2, 0, 3, 1],
            1,
            CompressedAxis::Column,
            IndexType::Int32,
        ),
        (vec![3, 2, 1, 0], 3, CompressedAxis::Row, IndexType::Int16),
    ] {
        let map = DimMap::try_new(shape.clone(), dims, vec![part]).unwrap();
        tensors.push(
            coo.to_gcs(map, axis, it)
                .unwrap()
                .with_dim_names(names(4, true))
                .unwrap(),
        );
    }
    for storage in [Format::Csf, Format::Dense, Format::Csr] {
        let map = DimMap::try_new(shape.clone(), vec![1, 3, 0, 2], vec![2]).unwrap();
        let AnyTensor::Dm(dm) = coo.to_dm(map, storage).unwrap() else {
            unreachable!()
        };
        tensors.push(AnyTensor::Dm(dm.slice(1, 1, 5, 2).unwrap()));
    }
    let path = dir.path().join("gcs.arrow");
    write(&path, &tensors);
    // what libarrow sees: the storage tensors
    let storage: Vec<AnyTensor> = tensors
        .iter()
        .map(|t| match t {
            AnyTensor::Gcs(g) => AnyTensor::Csx(g.matrix().clone()),
            AnyTensor::Dm(d) => d.storage().clone(),
            other => other.clone(),
        })
        .collect();
    let expected: String = storage
        .iter()
        .map(|t| json_line(t).unwrap() + "\n")
        .collect();
    let theirs = common::run_peer(&peer, &["dump", path.to_str().unwrap()]);
    common::assert_same_dump(&expected, &theirs, "GCS/DM storage as libarrow reads it");
    for (t, line) in storage.iter().zip(theirs.lines()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            v["shape"],
            serde_json::json!(t.shape()),
            "libarrow sees the reduced shape"
        );
    }
    // what arrow-sparse sees: the N-D tensors, exactly
    let back: Vec<AnyTensor> = ipc::read_tensor_stream(&path, &Default::default())
        .unwrap()
        .into_iter()
        .map(|m| m.tensor)
        .collect();
    assert_eq!(back, tensors);
    // libarrow rewrites the storage byte for byte (the extension metadata is its
    // custom_metadata, which libarrow drops)
    let plain = dir.path().join("plain.arrow");
    write(&plain, &storage);
    let rewritten = dir.path().join("plain.libarrow.arrow");
    common::run_peer(
        &peer,
        &[
            "rewrite",
            path.to_str().unwrap(),
            rewritten.to_str().unwrap(),
        ],
    );
    assert!(std::fs::read(&plain).unwrap() == std::fs::read(&rewritten).unwrap());
}

//! Round trips in Rust alone: property tests over random tensors (every format,
//! several value / index types, ndim 1-5), stream framing, zero-copy mmap reads
//! (checked by pointer identity), alignment handling and the trusted fast path.

use arrow_sparse::EntryOrder;
use std::io::Write;

use arrow_buffer::Buffer;
use arrow_sparse::dump::json_line;
use arrow_sparse::ipc::{
    self, MmapReader, StreamReadOptions, StreamWriteOptions, TensorMessage, TensorStreamReader,
    TensorStreamWriter,
};
use arrow_sparse::{
    AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, Error, Format, IndexType,
    Validation,
};
use proptest::prelude::*;

fn encode_stream(tensors: &[AnyTensor]) -> Vec<u8> {
    let mut w = TensorStreamWriter::new(Vec::new());
    for t in tensors {
        w.write(t).unwrap();
    }
    w.finish().unwrap()
}

fn dump_all(tensors: &[AnyTensor]) -> Vec<String> {
    tensors.iter().map(|t| json_line(t).unwrap()).collect()
}

/// Strategy: a COO tensor with i32 values and i64 coordinates, ndim 1..=5.
fn coo_strategy() -> impl Strategy<Value = CooTensor<i32, i64>> {
    (1usize..=5)
        .prop_flat_map(|ndim| prop::collection::vec(1usize..6, ndim))
        .prop_flat_map(|shape| {
            let entry = (shape.iter().map(|&d| 0..d).collect::<Vec<_>>(), -50i32..50);
            (Just(shape), prop::collection::vec(entry, 0..40))
        })
        .prop_map(|(shape, entries)| CooTensor::<i32, i64>::from_entries(shape, &entries).unwrap())
}

/// The entries of a tensor as a sorted multiset of (coords, value).
fn entries(t: &AnyTensor) -> Vec<(Vec<usize>, i32)> {
    let c = t.to_coo::<i32, i64>().unwrap();
    let mut v: Vec<_> = (0..c.nnz())
        .map(|k| {
            (
                (0..c.ndim()).map(|d| c.coord(k, d)).collect(),
                c.values()[k],
            )
        })
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Every format converts to every other with the same entries, and every
    /// result survives encode -> decode unchanged.
    #[test]
    fn conversions_and_ipc_round_trip(coo in coo_strategy(), narrow in any::<bool>()) {
        let any: AnyTensor = coo.clone().into();
        let ndim = coo.ndim();
        let it = if narrow { IndexType::Int16 } else { IndexType::Int64 };
        let mut targets = vec![Format::Coo, Format::Dense];
        if ndim == 2 { targets.extend([Format::Csr, Format::Csc]); }
        if ndim >= 2 { targets.push(Format::Csf); }
        let reference = entries(&any.convert(Format::Coo, IndexType::Int64, None).unwrap());
        let summed = entries(&AnyTensor::from(coo.canonicalize().unwrap()));
        for f in targets {
            let order: Vec<usize> = (0..ndim).rev().collect();
            let t = any.convert(f, it, Some(&order)).unwrap();
            let e = entries(&t);
            if f == Format::Dense {
                prop_assert_eq!(e, summed.iter().filter(|x| x.1 != 0).cloned().collect::<Vec<_>>());
            } else {
                prop_assert_eq!(&e, &reference);
            }
            let bytes = encode_stream(std::slice::from_ref(&t));
            let back: Vec<AnyTensor> = TensorStreamReader::new(&bytes[..]).map(|m| m.unwrap().tensor).collect();
            prop_assert_eq!(back.len(), 1);
            prop_assert_eq!(&back[0], &t);
            // and back to every format from there
            prop_assert_eq!(entries(&back[0].convert(Format::Coo, IndexType::Int32, None).unwrap()), if f == Format::Dense { summed.iter().filter(|x| x.1 != 0).cloned().collect() } else { reference.clone() });
        }
    }

    /// Column-major coordinates survive the wire and read the same as row-major.
    #[test]
    fn column_major_coo_round_trips(coo in coo_strategy()) {
        let nnz = coo.nnz();
        let ndim = coo.ndim();
        let col: Vec<i64> = (0..ndim).flat_map(|d| (0..nnz).map(move |k| (d, k))).map(|(d, k)| coo.coords()[k * ndim + d]).collect();
        let cm = CooTensor::<i32, i64>::try_new(coo.shape().to_vec(), CoordLayout::ColumnMajor, EntryOrder::Any, col.into(), coo.values().clone()).unwrap();
        let t: AnyTensor = cm.into();
        let bytes = encode_stream(std::slice::from_ref(&t));
        let back = TensorStreamReader::new(&bytes[..]).next().unwrap().unwrap().tensor;
        prop_assert_eq!(json_line(&back).unwrap(), json_line(&coo.clone().into()).unwrap());
    }
}

fn sample() -> Vec<AnyTensor> {
    let coo = CooTensor::<f64, i32>::from_entries(
        vec![4, 5, 6],
        &[
            (vec![3, 4, 5], 1.0),
            (vec![0, 1, 2], 2.0),
            (vec![2, 2, 2], 3.0),
        ],
    )
    .unwrap();
    let m =
        CooTensor::<f32, i64>::from_entries(vec![3, 7], &[(vec![0, 6], 1.5), (vec![2, 0], -2.0)])
            .unwrap();
    vec![
        coo.clone().into(),
        coo.to_csf::<i32, i32>(&[1, 2, 0]).unwrap().into(),
        m.to_csx::<i64, i64>(CompressedAxis::Row).unwrap().into(),
        m.to_csx::<i64, i32>(CompressedAxis::Column).unwrap().into(),
        m.to_dense().unwrap().into(),
    ]
}

#[test]
fn streams_with_and_without_end_marker() {
    let tensors = sample();
    let bytes = encode_stream(&tensors);
    let all: Vec<_> = TensorStreamReader::new(&bytes[..])
        .map(|m| m.unwrap().tensor)
        .collect();
    assert_eq!(dump_all(&all), dump_all(&tensors));
    // a stream that just ends (no end-of-stream marker)
    let cut = &bytes[..bytes.len() - 8];
    let all: Vec<_> = TensorStreamReader::new(cut)
        .map(|m| m.unwrap().tensor)
        .collect();
    assert_eq!(all.len(), tensors.len());
    let mapped = MmapReader::from_buffer(
        Buffer::from_vec(cut.to_vec()),
        &StreamReadOptions::default(),
    )
    .unwrap();
    assert_eq!(mapped.len(), tensors.len());
    // an empty input is an empty stream
    assert_eq!(TensorStreamReader::new(&[][..]).count(), 0);
}

#[test]
fn mmap_reads_are_zero_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.arrow");
    let msgs: Vec<TensorMessage> = sample().into_iter().take(4).map(Into::into).collect();
    ipc::write_tensor_stream(&path, &msgs, &StreamWriteOptions::default()).unwrap();
    let reader = MmapReader::open(&path).unwrap();
    assert_eq!(reader.len(), 4);
    let map = reader.mapping().clone();
    let inside = |b: &Buffer| arrow_sparse::buffer::points_into(b, &map);
    for i in 0..reader.len() {
        match reader.get(i).unwrap().tensor {
            AnyTensor::Coo(t) => assert!(inside(t.coords().inner()) && inside(t.values().inner())),
            AnyTensor::Csx(t) => assert!(
                inside(t.indptr().inner())
                    && inside(t.indices().inner())
                    && inside(t.values().inner())
            ),
            AnyTensor::Csf(t) => {
                assert!(
                    t.indptr()
                        .iter()
                        .chain(t.indices())
                        .all(|b| inside(b.inner()))
                        && inside(t.values().inner())
                )
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    // the exact pointer of the first value is the file's byte at its body offset
    let info = reader.messages()[2];
    let AnyTensor::Csx(csr) = reader.get(2).unwrap().tensor else {
        panic!()
    };
    assert_eq!(
        csr.indptr().inner().as_ptr(),
        ptr_at(&map, info.body_offset)
    );
}

fn ptr_at(map: &Buffer, offset: usize) -> *const u8 {
    map.slice(offset).as_ptr()
}

#[test]
fn misaligned_bodies_are_copied_or_refused() {
    // Put one byte before the stream: every buffer in the body becomes misaligned.
    let tensors = sample();
    let bytes = encode_stream(&tensors[1..2]);
    let mut shifted = MutableBytes::with_offset(1, &bytes);
    let buf = shifted.buffer();
    let reader = MmapReader::from_buffer(buf.clone(), &StreamReadOptions::default()).unwrap();
    let t = reader.get(0).unwrap().tensor;
    assert_eq!(json_line(&t).unwrap(), json_line(&tensors[1]).unwrap());
    let strict = MmapReader::from_buffer(
        buf,
        &StreamReadOptions::default().with_require_alignment(true),
    )
    .unwrap();
    assert!(matches!(strict.get(0), Err(Error::Misaligned { .. })));
    shifted.0.clear();
}

/// A buffer whose data starts `offset` bytes past a 64-byte boundary.
struct MutableBytes(Vec<u8>, usize);
impl MutableBytes {
    fn with_offset(offset: usize, data: &[u8]) -> Self {
        let mut v = vec![0u8; offset];
        v.extend_from_slice(data);
        MutableBytes(v, offset)
    }
    fn buffer(&mut self) -> Buffer {
        let b = Buffer::from_vec(std::mem::take(&mut self.0));
        // from_vec keeps the allocation; its start is at least 8-aligned in practice,
        // so slicing by `offset` (1) misaligns every buffer for types wider than 1.
        assert_eq!(
            b.as_ptr().align_offset(8),
            0,
            "allocator returned an unaligned Vec"
        );
        b.slice(self.1)
    }
}

#[test]
fn trusted_path_skips_the_nnz_pass_only() {
    // A CSR matrix whose indices are out of range: full validation refuses it, the
    // trusted path accepts it (documented), and structural lies are still refused.
    let m =
        CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 2], 2.0)])
            .unwrap();
    let csr: AnyTensor = m.to_csx::<i64, i64>(CompressedAxis::Row).unwrap().into();
    let mut bytes = encode_stream(&[csr]);
    // indices buffer follows the 24-byte indptr; set the last index to 7 (>= 3)
    let body = bytes.len() - 8 - 24 - 16 - 16;
    bytes[body + 24 + 8] = 7;
    let full: Vec<_> = TensorStreamReader::new(&bytes[..]).collect();
    assert!(
        matches!(full[0], Err(Error::IndexOutOfBounds { .. })),
        "{full:?}"
    );
    let trusted: Vec<_> = TensorStreamReader::with_options(
        &bytes[..],
        &StreamReadOptions::default().with_validation(Validation::Trusted),
    )
    .collect();
    assert!(trusted[0].is_ok());
}

#[test]
fn uint64_indices_are_refused_for_writing() {
    let t = CooTensor::<f64, u64>::from_entries(vec![3], &[(vec![1], 1.0)]).unwrap();
    let err = ipc::encode(&t.into(), &[], &StreamWriteOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Type { .. }), "{err}");
    assert!(err.to_string().contains("uint64"));
}

#[test]
fn csf_byte_lengths_are_read_too() {
    // A writer that puts padded byte lengths in CSF Buffer.length (like other
    // buffers) instead of libarrow 26's element counts: both read the same.
    for t in &sample()[1..2] {
        for order in [[0usize, 1, 2], [2, 1, 0], [1, 0, 2]] {
            let csf = t
                .convert(Format::Csf, IndexType::Int16, Some(&order))
                .unwrap();
            let opts = StreamWriteOptions {
                csf_lengths: ipc::CsfLengths::PaddedBytes,
                ..Default::default()
            };
            let mut w = TensorStreamWriter::new(Vec::new()).with_options(&opts);
            w.write(&csf).unwrap();
            let bytes = w.finish().unwrap();
            let back = TensorStreamReader::new(&bytes[..])
                .next()
                .unwrap()
                .unwrap()
                .tensor;
            assert_eq!(back, csf);
        }
    }
}

#[test]
fn write_file_is_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.arrow");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(b"old")
        .unwrap();
    // a failing write (uint64 indices) leaves the old file untouched and no temp file
    let bad: TensorMessage =
        AnyTensor::from(CooTensor::<f64, u64>::from_entries(vec![3], &[(vec![1], 1.0)]).unwrap())
            .into();
    let good: TensorMessage = sample().remove(0).into();
    assert!(
        ipc::write_tensor_stream(&path, [&good, &bad], &StreamWriteOptions::default()).is_err()
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    ipc::write_tensor_stream(&path, [&good], &StreamWriteOptions::default()).unwrap();
    assert_eq!(
        ipc::read_tensor_stream(&path, &StreamReadOptions::default()).unwrap(),
        vec![good]
    );
}

#[test]
fn narrow_index_types_are_checked() {
    let t = CooTensor::<f64, i64>::from_entries(vec![300], &[(vec![299], 1.0)]).unwrap();
    let any: AnyTensor = t.into();
    assert!(matches!(
        any.convert(Format::Coo, IndexType::Int8, None),
        Err(Error::Overflow { .. })
    ));
    assert!(any.convert(Format::Coo, IndexType::Int16, None).is_ok());
}

/// Position of the `version` field of the Message flatbuffer that starts at
/// `meta` (after the 8-byte prefix) in `bytes`.
fn version_field(bytes: &[u8]) -> usize {
    let meta = &bytes[8..];
    let msg = arrow_ipc::root_as_message(meta).unwrap();
    let tab = msg._tab;
    let vt = tab.vtable();
    8 + tab.loc() + vt.get(arrow_ipc::Message::VT_VERSION) as usize
}

#[test]
fn v4_metadata_is_read_and_older_versions_are_refused() {
    let t = sample().remove(2);
    let bytes = encode_stream(std::slice::from_ref(&t));
    let at = version_field(&bytes);
    assert_eq!(i16::from_le_bytes([bytes[at], bytes[at + 1]]), 4, "V5 is 4");
    let mut v4 = bytes.clone();
    v4[at..at + 2].copy_from_slice(&3i16.to_le_bytes());
    let back = TensorStreamReader::new(&v4[..])
        .next()
        .unwrap()
        .unwrap()
        .tensor;
    assert_eq!(back, t);
    let mut v3 = bytes.clone();
    v3[at..at + 2].copy_from_slice(&2i16.to_le_bytes());
    let err = TensorStreamReader::new(&v3[..])
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        err.to_string().contains("unsupported metadata version"),
        "{err}"
    );
}

/// A sparse vector as a 1-D CSF tensor (one level, no indptr buffer): its
/// indptr type travels in the message's `indptrType` alone, and both CSF length
/// conventions read back exactly (libarrow 26 reads no 1-D CSF: SPEC 3.3).
#[test]
fn one_dimensional_csf_round_trips() {
    let coo = CooTensor::<f32, i64>::from_entries(
        vec![40],
        &[(vec![3], 1.5), (vec![17], -2.0), (vec![39], 4.0)],
    )
    .unwrap();
    let csf: AnyTensor = coo.to_csf::<i16, i64>(&[0]).unwrap().into();
    assert_eq!(
        (csf.index_type(), csf.indptr_type()),
        (Some(IndexType::Int16), Some(IndexType::Int64))
    );
    for lengths in [ipc::CsfLengths::Elements, ipc::CsfLengths::PaddedBytes] {
        let opts = StreamWriteOptions {
            csf_lengths: lengths,
            ..Default::default()
        };
        let mut w = TensorStreamWriter::new(Vec::new()).with_options(&opts);
        w.write(&csf).unwrap();
        let bytes = w.finish().unwrap();
        let back = TensorStreamReader::new(&bytes[..])
            .next()
            .unwrap()
            .unwrap()
            .tensor;
        assert_eq!(back, csf, "{lengths:?}");
        assert_eq!(back.get::<f32>(&[17]).unwrap(), Some(-2.0));
    }
}

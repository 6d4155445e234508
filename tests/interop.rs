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
//! Every test that needs the peer is `#[ignore]`d with the reason "needs the
//! libarrow peer": a plain `cargo test` lists them as ignored; `cargo test --
//! --include-ignored` (and `scripts/test-all.sh`) runs them, and without the peer
//! they fail. `without_the_peer_no_interop_test_passes` checks exactly that.

mod common;
#[path = "common/corpus.rs"]
mod corpus;
use common::Rng;
use corpus::{Gen, Reach, names, random_coo};

use std::path::{Path, PathBuf};

use arrow_sparse::dump::json_line;
use arrow_sparse::ipc::{self, MmapReader, StreamWriteOptions, TensorMessage};
use arrow_sparse::{
    AnyTensor, CompressedAxis, Convert, CooTensor, CoordLayout, DenseTensor, Format, IndexType,
    Value, ValueType,
};
use half::f16;

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

/// The file at `path` (tensors with extension metadata) reads back as
/// `tensors` exactly, and libarrow rewrites it to the bytes of the plain
/// `storage` messages (it drops the extension metadata).
fn read_back_exactly_and_storage_rewritten(
    peer: &Path,
    dir: &Path,
    path: &Path,
    tensors: &[AnyTensor],
    storage: &[AnyTensor],
    name: &str,
) {
    let back: Vec<AnyTensor> = ipc::read_tensor_stream(path, &Default::default())
        .unwrap()
        .into_iter()
        .map(|m| m.tensor)
        .collect();
    assert_eq!(back, tensors);
    let plain = dir.join("plain.arrow");
    write(&plain, storage);
    let rewritten = libarrow_rewrite(peer, dir, name, path);
    assert!(std::fs::read(&plain).unwrap() == std::fs::read(&rewritten).unwrap());
}

/// libarrow reads `src` and writes it again as `<dir>/<name>.libarrow.arrow`.
fn libarrow_rewrite(peer: &Path, dir: &Path, name: &str, src: &Path) -> PathBuf {
    let rewritten = dir.join(format!("{name}.libarrow.arrow"));
    common::run_peer(
        peer,
        &[
            "rewrite",
            src.to_str().unwrap(),
            rewritten.to_str().unwrap(),
        ],
    );
    rewritten
}

/// Our file -> libarrow reads the same entries -> libarrow re-encodes it to the
/// same bytes -> we read libarrow's file back the same.
fn check_both_directions(peer: &Path, dir: &Path, name: &str, tensors: &[AnyTensor]) {
    let ours = dir.join(format!("{name}.arrow"));
    write(&ours, tensors);
    let theirs_dump = common::run_peer(peer, &["dump", ours.to_str().unwrap()]);
    let our_dump_text = our_dump(&ours);
    common::assert_same_dump(&our_dump_text, &theirs_dump, name);
    let rewritten = libarrow_rewrite(peer, dir, name, &ours);
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
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn every_type_and_format_round_trips_with_libarrow() {
    let peer = common::peer();
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
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn every_csf_axis_order_of_3d_and_4d_tensors() {
    let peer = common::peer();
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
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn about_a_million_nonzeros_in_every_format() {
    let peer = common::peer();
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

/// The index types libarrow's dense -> sparse conversions take (uint64 is refused).
const LIBARROW_INDEX_TYPES: [&str; 7] = [
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
];

/// libarrow's conversion of every dense tensor of `src` to `fmt` with index type `it`.
fn libarrow_converts(peer: &Path, src: &Path, out: &Path, fmt: &str, it: &str) {
    common::run_peer(
        peer,
        &[
            "from-dense",
            src.to_str().unwrap(),
            out.to_str().unwrap(),
            fmt,
            it,
        ],
    );
}

/// A random shape of `ndim` extents in 1..=4 with at most `max` elements.
fn small_shape(r: &mut Rng, ndim: usize, max: usize) -> Vec<usize> {
    loop {
        let shape: Vec<usize> = (0..ndim).map(|_| 1 + r.below(4)).collect();
        if shape.iter().product::<usize>() <= max {
            return shape;
        }
    }
}

/// A dense tensor of `shape` holding `vals` in memory order, row- or column-major.
fn dense_of<V: Value>(shape: &[usize], vals: Vec<V>, col_major: bool, named: bool) -> AnyTensor {
    let strides = if col_major {
        arrow_sparse::tensor::dense::column_major_strides(shape)
    } else {
        arrow_sparse::tensor::dense::row_major_strides(shape)
    };
    AnyTensor::from(
        DenseTensor::<V>::try_new_strided(shape.to_vec(), strides, vals.into()).unwrap(),
    )
    .with_dim_names(names(shape.len(), named))
    .unwrap()
}

/// Dense tensors of one value type and `ndim` for libarrow's conversions: zeros
/// (also with a zero extent), one-element tensors (non-zero and zero), a single
/// non-zero in a larger shape, and random ones of density 0, 0.1, 0.5 and 1.
/// At most 100 elements, so that every index type holds every coordinate and nnz.
fn push_conversion_cases<V: Gen>(
    r: &mut Rng,
    ndim: usize,
    col_major: bool,
    out: &mut Vec<AnyTensor>,
) {
    let named = r.next() & 1 == 0;
    let shape = small_shape(r, ndim, 100);
    let size: usize = shape.iter().product();
    out.push(dense_of(&shape, vec![V::ZERO; size], col_major, named));
    if !col_major {
        let mut empty = shape.clone();
        empty[r.below(ndim)] = 0;
        out.push(dense_of::<V>(&empty, vec![], false, !named));
    }
    let ones = vec![1; ndim];
    out.push(dense_of(&ones, vec![V::random(r)], col_major, !named));
    out.push(dense_of(&ones, vec![V::ZERO], col_major, named));
    let shape = small_shape(r, ndim, 100);
    let size: usize = shape.iter().product();
    let mut single = vec![V::ZERO; size];
    single[r.below(size)] = V::random(r);
    out.push(dense_of(&shape, single, col_major, named));
    for per_mille in [0, 100, 500, 1000] {
        let shape = small_shape(r, ndim, 100);
        let size: usize = shape.iter().product();
        let vals = (0..size)
            .map(|_| {
                if r.below(1000) < per_mille {
                    V::random(r)
                } else {
                    V::ZERO
                }
            })
            .collect();
        out.push(dense_of(&shape, vals, col_major, !named));
    }
}

/// [`push_conversion_cases`] for every value type: (every ndim 1-5, row-major;
/// 2-D, row- and column-major; ndim 2-5, row- and column-major).
fn conversion_inputs(r: &mut Rng) -> [Vec<AnyTensor>; 3] {
    let [mut all, mut two, mut nd] = [Vec::new(), Vec::new(), Vec::new()];
    macro_rules! each_value_type {
        ($($v:ty),*) => {$(
            for ndim in 1..=5 {
                push_conversion_cases::<$v>(r, ndim, false, &mut all);
                for col_major in [false, true] {
                    if ndim == 2 {
                        push_conversion_cases::<$v>(r, ndim, col_major, &mut two);
                    }
                    if ndim >= 2 {
                        push_conversion_cases::<$v>(r, ndim, col_major, &mut nd);
                    }
                }
            }
        )*};
    }
    each_value_type!(i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64);
    [all, two, nd]
}

/// `shape`, `dim_names` and `entries` of a dump line.
fn logical(line: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    serde_json::json!({"shape": v["shape"], "dim_names": v["dim_names"], "entries": v["entries"],
        "value_type": v["value_type"]})
}

/// libarrow's own dense -> sparse conversions (`SparseCOOTensor::Make`,
/// `SparseCSRMatrix::Make`, `SparseCSCMatrix::Make`, `SparseCSFTensor::Make`) of
/// zero, one-element, single-entry and random tensors (densities 0 to 1), every
/// value type, every index type libarrow takes, every format at every ndim it
/// allows (COO 1-5, CSR / CSC 2, CSF 2-5; row- and column-major inputs except for
/// COO, whose conversion of a column-major tensor is wrong, see interop/peer.cc):
/// * libarrow writes -> we read libarrow's entries (its dump and ours agree), and
///   they are the non-zeros of the dense tensor;
/// * we write -> libarrow reads our entries: our conversion of the same dense
///   tensor (in libarrow's CSF axis order) encodes to libarrow's bytes exactly, so
///   libarrow reads from our file what it read from its own.
#[test]
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn libarrow_dense_to_sparse_conversions_read_and_write_exactly() {
    let peer = common::peer();
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(0xD15C_0DE5);
    let [all, two, nd] = conversion_inputs(&mut r);
    let mut cases = 0;
    let mut seen = std::collections::HashSet::new();
    for (label, dense, formats) in [
        ("all", &all, &["coo"][..]),
        ("2d", &two, &["csr", "csc"][..]),
        ("nd", &nd, &["csf"][..]),
    ] {
        let src = dir.path().join(format!("dense_{label}.arrow"));
        write(&src, dense);
        let expected: Vec<serde_json::Value> = dense
            .iter()
            .map(|d| logical(&json_line(d).unwrap()))
            .collect();
        for fmt in formats {
            let target: Format = fmt.parse().unwrap();
            for it in LIBARROW_INDEX_TYPES {
                let context = format!("libarrow {fmt} {it}");
                let out = dir.path().join(format!("{fmt}_{it}.arrow"));
                libarrow_converts(&peer, &src, &out, fmt, it);
                // libarrow writes -> we read libarrow's entries
                let theirs = common::run_peer(&peer, &["dump", out.to_str().unwrap()]);
                let ours = our_dump(&out);
                common::assert_same_dump(&ours, &theirs, &context);
                // ... which are the dense tensors' non-zeros
                for (k, line) in ours.lines().enumerate() {
                    let single = matches!(
                        dense[k].value_type(),
                        ValueType::Float16 | ValueType::Float32
                    );
                    assert!(
                        common::json_eq_as(&logical(line), &expected[k], single),
                        "{context}: tensor {k}: {line} is not {}",
                        expected[k]
                    );
                }
                // we write -> the same bytes, which libarrow reads as above
                let reader = MmapReader::open(&out).unwrap();
                let mut w = ipc::TensorStreamWriter::new(Vec::new());
                for (k, d) in dense.iter().enumerate() {
                    let theirs_t = reader.get(k).unwrap().tensor;
                    let order = theirs_t.axis_order().map(|o| o.to_vec());
                    let mine = d
                        .convert(target, it.parse().unwrap(), order.as_deref())
                        .unwrap();
                    seen.insert((
                        fmt.to_string(),
                        d.shape().len(),
                        d.value_type(),
                        it,
                        mine.nnz().min(2),
                    ));
                    w.write(&mine).unwrap();
                }
                let ours = w.finish().unwrap();
                assert!(
                    ours == std::fs::read(&out).unwrap(),
                    "{context}: our encoding differs from libarrow's"
                );
                cases += dense.len();
            }
        }
        // libarrow refuses uint64 indices in every conversion
        let (ok, _, err) = common::try_peer(
            &peer,
            &[
                "from-dense",
                src.to_str().unwrap(),
                dir.path().join("u64.arrow").to_str().unwrap(),
                formats[0],
                "uint64",
            ],
        );
        assert!(!ok && err.contains("UInt64"), "{err}");
    }
    // every format x ndim x value type x index type, with nnz 0, 1 and more
    let combos = |n: usize| seen.iter().filter(|(_, _, _, _, nnz)| *nnz == n).count();
    let per_nnz = (5 + 2 + 4) * 11 * 7;
    assert_eq!(
        (combos(0), combos(1), combos(2)),
        (per_nnz, per_nnz, per_nnz)
    );
    eprintln!("{cases} libarrow conversions read and rewritten exactly");
}

/// A dense tensor holding -0.0, the same tensor holding +0.0, the number of -0.0.
type NegZeroCase = (AnyTensor, AnyTensor, usize);

/// Dense float32 / float64 tensors of `ndim` holding -0.0 (all elements, or one or
/// two), the same tensors holding +0.0, and the number of -0.0: a one-element
/// tensor and two small ones (the last column-major when `col_major`).
fn negative_zero_inputs(
    r: &mut Rng,
    ndim: usize,
    all_negative: bool,
    col_major: bool,
) -> Vec<NegZeroCase> {
    let mut out = Vec::new();
    macro_rules! each {
        ($($v:ty),*) => {$({
            let mut shapes = vec![vec![1; ndim], small_shape(r, ndim, 12)];
            shapes.push(small_shape(r, ndim, 12));
            for (i, shape) in shapes.into_iter().enumerate() {
                let size: usize = shape.iter().product();
                let mut neg = vec![0.0 as $v; size];
                let mut count = 0;
                for (k, x) in neg.iter_mut().enumerate() {
                    if all_negative || k == (i * 7) % size || (i == 2 && k == size - 1) {
                        *x = -(0.0 as $v);
                        count += 1;
                    }
                }
                let named = i % 2 == 0;
                out.push((
                    dense_of(&shape, neg, col_major && i == 2, named),
                    dense_of(&shape, vec![0.0 as $v; size], col_major && i == 2, named),
                    count,
                ));
            }
        })*};
    }
    each!(f32, f64);
    out
}

/// libarrow 26 counts float32 / float64 -0.0 as zero when it sizes the buffers of a
/// dense -> sparse conversion and as non-zero when it fills them (format/SPEC.md
/// 3.4). For tensors whose only "non-zeros" are -0.0 its CSR / CSC / CSF files
/// describe entries whose values are not stored: libarrow's dump shows them as
/// `valueless_entries`, we read the empty tensor of the same shape, dim names and
/// axis order, and write exactly what libarrow writes for the tensor of +0.0
/// (which libarrow reads back). Its COO files of them store nothing.
#[test]
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn libarrow_conversions_of_negative_zeros_read_as_the_empty_tensor() {
    let peer = common::peer();
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(0x2E60);
    let mut cases = 0;
    // libarrow writes past its buffers here (sized for no entries, filled with the
    // -0.0 ones): its CSR / CSC / CSF conversions run a stream of such tensors in
    // one process, but its COO conversion corrupts the process enough to crash on
    // a later tensor, so COO gets one process per tensor (index type int32).
    let mut groups: Vec<(&str, Vec<&str>, Vec<NegZeroCase>)> = Vec::new();
    for ndim in 1..=5 {
        for pair in negative_zero_inputs(&mut r, ndim, false, false) {
            groups.push(("coo", vec!["int32"], vec![pair]));
        }
    }
    for (fmt, ndims) in [("csr", 2..=2), ("csc", 2..=2), ("csf", 2..=5)] {
        let mut pairs = Vec::new();
        for ndim in ndims {
            pairs.extend(negative_zero_inputs(&mut r, ndim, false, true));
            pairs.extend(negative_zero_inputs(&mut r, ndim, true, true));
        }
        groups.push((fmt, LIBARROW_INDEX_TYPES.to_vec(), pairs));
    }
    for (g, (fmt, index_types, pairs)) in groups.iter().enumerate() {
        let fmt = *fmt;
        let (neg, zero): (Vec<AnyTensor>, Vec<AnyTensor>) =
            pairs.iter().map(|(n, z, _)| (n.clone(), z.clone())).unzip();
        let (src_neg, src_zero) = (
            dir.path().join(format!("neg{g}.arrow")),
            dir.path().join(format!("zero{g}.arrow")),
        );
        write(&src_neg, &neg);
        write(&src_zero, &zero);
        for &it in index_types {
            let context = format!("libarrow {fmt} {it} of -0.0 (group {g})");
            let (out_neg, out_zero) = (
                dir.path().join(format!("{fmt}_{it}_{g}_neg.arrow")),
                dir.path().join(format!("{fmt}_{it}_{g}_zero.arrow")),
            );
            libarrow_converts(&peer, &src_neg, &out_neg, fmt, it);
            libarrow_converts(&peer, &src_zero, &out_zero, fmt, it);
            // what libarrow wrote: entries without values (none for COO)
            let theirs = common::run_peer(&peer, &["dump", out_neg.to_str().unwrap()]);
            for ((line, (_, _, count)), k) in theirs.lines().zip(pairs).zip(0..) {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let valueless = v["valueless_entries"].as_u64().unwrap_or(0) as usize;
                let expect = if fmt == "coo" { 0 } else { *count };
                assert_eq!(valueless, expect, "{context}: tensor {k}: {line}");
                assert_eq!(v["entries"], serde_json::json!([]), "{context}: {line}");
                let nnz = v["nnz"].as_u64().unwrap() as usize;
                assert_eq!(
                    nnz,
                    if fmt == "csf" { *count } else { 0 },
                    "{context}: {line}"
                );
            }
            // we read the empty tensor libarrow meant: the one of its +0.0 conversion
            let read = |p: &Path| -> Vec<AnyTensor> {
                MmapReader::open(p)
                    .unwrap()
                    .iter()
                    .map(|m| m.unwrap().tensor)
                    .collect()
            };
            let (ours, twins) = (read(&out_neg), read(&out_zero));
            assert_eq!(ours, twins, "{context}");
            assert!(ours.iter().all(|t| t.nnz() == 0), "{context}");
            // and write what libarrow writes for it, which libarrow reads
            let mut w = ipc::TensorStreamWriter::new(Vec::new());
            for t in &ours {
                w.write(t).unwrap();
            }
            let rewritten = dir.path().join(format!("{fmt}_{it}_{g}_ours.arrow"));
            std::fs::write(&rewritten, w.finish().unwrap()).unwrap();
            assert!(
                std::fs::read(&rewritten).unwrap() == std::fs::read(&out_zero).unwrap(),
                "{context}: our encoding differs from libarrow's for +0.0"
            );
            let theirs = common::run_peer(&peer, &["dump", rewritten.to_str().unwrap()]);
            common::assert_same_dump(&our_dump(&rewritten), &theirs, &context);
            // our own conversion of the -0.0 tensors is that empty tensor too
            for (t, d) in ours.iter().zip(&neg) {
                let order = t.axis_order().map(|o| o.to_vec());
                assert_eq!(
                    &d.convert(t.format(), it.parse().unwrap(), order.as_deref())
                        .unwrap(),
                    t,
                    "{context}"
                );
            }
            cases += pairs.len();
        }
    }
    eprintln!("{cases} libarrow conversions of -0.0 read as empty tensors");
}

/// The float16 -0.0 (bits 0x8000) is a stored entry for libarrow (it compares
/// bits): we read it as libarrow does and rewrite libarrow's files byte for byte.
/// -0.0 besides real non-zeros in float32 / float64 makes libarrow's CSR / CSC /
/// CSF conversions lose values: both libarrow's dump and our reader refuse them
/// (ours with `Error::Invariant` saying values are lost), unless the loss hides in
/// the padding of float32 values, where both read the same entries. Its COO
/// conversion keeps the first nnz entries in order, -0.0 included: both read them.
#[test]
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn libarrow_conversions_of_negative_zeros_among_values() {
    let peer = common::peer();
    let dir = tempfile::tempdir().unwrap();
    let h = |x: f32| f16::from_f32(x);
    // float16 -0.0: stored entries
    let f16s = vec![
        dense_of(
            &[2, 3],
            vec![h(-0.0), h(0.0), h(1.5), h(0.0), h(-0.0), h(-2.0)],
            false,
            true,
        ),
        dense_of(&[1, 1, 1], vec![h(-0.0)], false, false),
        dense_of(
            &[2, 1, 2],
            vec![h(0.0), h(-0.0), h(-0.0), h(3.0)],
            false,
            false,
        ),
    ];
    let src = dir.path().join("f16.arrow");
    write(&src, &f16s);
    let src2 = dir.path().join("f16_2d.arrow");
    write(&src2, &f16s[..1]);
    for (fmt, src) in [("coo", &src), ("csf", &src), ("csr", &src2), ("csc", &src2)] {
        for it in ["int8", "uint16", "int64"] {
            let out = dir.path().join(format!("f16_{fmt}_{it}.arrow"));
            libarrow_converts(&peer, src, &out, fmt, it);
            let theirs = common::run_peer(&peer, &["dump", out.to_str().unwrap()]);
            assert!(
                theirs.contains("-0"),
                "libarrow keeps float16 -0.0: {theirs}"
            );
            check_both_directions_of(&peer, &out, &format!("float16 -0.0 {fmt} {it}"));
        }
    }
    // float32 / float64 -0.0 among values: one tensor per file
    let mut refused = 0;
    for (i, (shape, vals)) in [
        (vec![2, 2], vec![-0.0, 5.0, 0.0, 7.0]),
        (vec![3, 2], vec![1.0, -0.0, 0.0, 2.0, 3.0, 0.0]),
        (
            vec![2, 2, 2],
            vec![-0.0, 0.0, 4.0, 0.0, 0.0, -0.0, 6.0, 8.0],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        for single in [false, true] {
            let d = if single {
                dense_of(
                    &shape,
                    vals.iter().map(|&x| x as f32).collect(),
                    false,
                    false,
                )
            } else {
                dense_of::<f64>(&shape, vals.clone(), false, false)
            };
            let src = dir.path().join(format!("mixed{i}_{single}.arrow"));
            write(&src, &[d]);
            for fmt in ["coo", "csr", "csc", "csf"] {
                if shape.len() != 2 && (fmt == "csr" || fmt == "csc") {
                    continue;
                }
                let out = dir.path().join(format!("mixed{i}_{single}_{fmt}.arrow"));
                libarrow_converts(&peer, &src, &out, fmt, "int32");
                let (ok, theirs, _) = common::try_peer(&peer, &["dump", out.to_str().unwrap()]);
                let ours = ipc::read_tensor_stream(&out, &Default::default());
                let context = format!("{fmt} of {shape:?} {vals:?} (float32: {single})");
                match ours {
                    Ok(_) => {
                        assert!(ok, "{context}: libarrow's dump refuses what we read");
                        common::assert_same_dump(&our_dump(&out), &theirs, &context);
                    }
                    Err(e) => {
                        assert!(!ok, "{context}: we refuse what libarrow dumps: {e}");
                        assert!(
                            matches!(e, arrow_sparse::Error::Invariant { .. })
                                && e.to_string().contains("values are lost"),
                            "{context}: {e}"
                        );
                        assert_ne!(fmt, "coo");
                        refused += 1;
                    }
                }
            }
        }
    }
    // every CSR / CSC / CSF float64 case loses values
    assert!(refused >= 2 * 3 + 2, "refused {refused}");
    // the lost-value files of tests/data/lossy are what libarrow writes
    let src = dir.path().join("lossy.arrow");
    write(
        &src,
        &[dense_of::<f64>(
            &[2, 2],
            vec![-0.0, 5.0, 0.0, 7.0],
            false,
            false,
        )],
    );
    for fmt in ["csr", "csc", "csf"] {
        let out = dir.path().join(format!("lossy_{fmt}.arrow"));
        libarrow_converts(&peer, &src, &out, fmt, "int32");
        let committed = common::repo().join(format!(
            "tests/data/lossy/{fmt}_negzero_mixed_f64_i32.arrow"
        ));
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&committed).unwrap(),
            "{}: libarrow writes other bytes",
            committed.display()
        );
    }
}

/// libarrow's file `path` as we read it is libarrow's view, and our encoding of
/// what we read is libarrow's file byte for byte.
fn check_both_directions_of(peer: &Path, path: &Path, context: &str) {
    let theirs = common::run_peer(peer, &["dump", path.to_str().unwrap()]);
    common::assert_same_dump(&our_dump(path), &theirs, context);
    let mut w = ipc::TensorStreamWriter::new(Vec::new());
    for m in MmapReader::open(path).unwrap().iter() {
        w.write(&m.unwrap().tensor).unwrap();
    }
    assert!(
        w.finish().unwrap() == std::fs::read(path).unwrap(),
        "{context}: our encoding differs from libarrow's"
    );
}

/// Dense tensors with an offset and signed strides (#17): every view (reversals,
/// stepped slices, the GCS seed's example, packed views at an offset) is written
/// as libarrow reads it, with exactly the view's elements, and libarrow re-encodes
/// our bytes identically (packed views are written as slices, the others
/// compacted to row-major: libarrow has no offset and refuses negative strides).
#[test]
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn strided_dense_views_are_read_by_libarrow_element_for_element() {
    fn views<V: corpus::Gen>(r: &mut Rng, out: &mut Vec<AnyTensor>) {
        for _ in 0..12 {
            out.push(corpus::strided_view::<V>(r).into());
        }
    }
    let peer = common::peer();
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(0x17B0_5EED);
    let mut all: Vec<AnyTensor> = Vec::new();
    views::<i8>(&mut r, &mut all);
    views::<i16>(&mut r, &mut all);
    views::<i32>(&mut r, &mut all);
    views::<i64>(&mut r, &mut all);
    views::<u8>(&mut r, &mut all);
    views::<u16>(&mut r, &mut all);
    views::<u32>(&mut r, &mut all);
    views::<u64>(&mut r, &mut all);
    views::<f16>(&mut r, &mut all);
    views::<f32>(&mut r, &mut all);
    views::<f64>(&mut r, &mut all);
    // the GCS seed's example, and packed (row- and column-major) views at offsets
    let seed = DenseTensor::<i32>::try_new_with_offset(
        vec![2, 3],
        vec![-1, -2],
        5,
        vec![6, 3, 5, 2, 4, 1].into(),
    )
    .unwrap();
    all.push(seed.into());
    let base: Vec<f64> = (0..60).map(|x| x as f64 - 7.0).collect();
    let rm = DenseTensor::<f64>::try_new(vec![3, 4, 5], base.clone().into()).unwrap();
    all.push(rm.slice(0, Some(1), None, 1).unwrap().into());
    let cm = DenseTensor::<f64>::try_new_strided(
        vec![3, 4, 5],
        arrow_sparse::tensor::dense::column_major_strides(&[3, 4, 5]),
        base.into(),
    )
    .unwrap();
    all.push(cm.slice(2, Some(2), Some(4), 1).unwrap().into());
    assert!(
        all.iter().any(|t| match t {
            AnyTensor::Dense(d) => d.strides().iter().any(|&s| s < 0),
            _ => false,
        }) && all
            .iter()
            .any(|t| matches!(t, AnyTensor::Dense(d) if d.offset() > 0 && d.is_row_major())),
        "the corpus has negative strides and packed views at offsets"
    );
    // libarrow's entries are the views' own (computed in memory, before writing)
    let expected: String = all.iter().map(|t| json_line(t).unwrap() + "\n").collect();
    let path = dir.path().join("strided.arrow");
    write(&path, &all);
    let theirs = common::run_peer(&peer, &["dump", path.to_str().unwrap()]);
    common::assert_same_dump(&expected, &theirs, "strided views");
    check_both_directions(&peer, dir.path(), "strided", &all);
    // and we read back the same logical tensors, with offset 0 and strides >= 0
    for (m, t) in MmapReader::open(&path).unwrap().iter().zip(&all) {
        let m = m.unwrap();
        let AnyTensor::Dense(d) = &m.tensor else {
            panic!("not dense")
        };
        assert!(d.offset() == 0 && d.strides().iter().all(|&s| s >= 0));
        assert_eq!(json_line(&m.tensor).unwrap(), json_line(t).unwrap());
    }
}

/// What the encoder works around: libarrow 26 refuses a Tensor message with a
/// negative stride ("negative strides not supported"), whatever the data buffer
/// holds, and so does arrow-sparse's reader (a typed error).
#[test]
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn libarrow_refuses_negative_strides() {
    let peer = common::peer();
    let dir = tempfile::tempdir().unwrap();
    let t: AnyTensor = DenseTensor::<i32>::try_new(vec![2, 3], vec![1, 2, 3, 4, 5, 6].into())
        .unwrap()
        .into();
    let bytes = ipc::encode(&t, &[], &StreamWriteOptions::default())
        .unwrap()
        .to_vec();
    // the strides vector: 12 and 4 bytes as two little-endian int64
    let pattern: Vec<u8> = [12i64, 4].iter().flat_map(|x| x.to_le_bytes()).collect();
    let at = bytes
        .windows(16)
        .position(|w| w == pattern)
        .expect("strides in the header");
    for strides in [[-12i64, -4], [12, -4], [-12, 4]] {
        let mut m = bytes.clone();
        let patch: Vec<u8> = strides.iter().flat_map(|x| x.to_le_bytes()).collect();
        m[at..at + 16].copy_from_slice(&patch);
        let path = dir.path().join("negative.arrow");
        std::fs::write(&path, &m).unwrap();
        let (ok, _, err) = common::try_peer(&peer, &["dump", path.to_str().unwrap()]);
        assert!(
            !ok && err.contains("negative strides not supported"),
            "{strides:?}: {err}"
        );
        let buf = arrow_buffer::Buffer::from(m);
        assert!(
            matches!(
                ipc::decode(&buf, &ipc::StreamReadOptions::default()),
                Err(arrow_sparse::Error::Unsupported(_))
            ),
            "{strides:?}"
        );
    }
}

/// Without the peer, a plain run of this binary reports every interop test as
/// ignored, and `--include-ignored` makes each of them fail: none ever passes.
#[test]
fn without_the_peer_no_interop_test_passes() {
    let tests =
        common::assert_missing_program_is_never_a_pass("ARROW_SPARSE_PEER", "libarrow peer");
    assert!(tests.len() >= 8, "{tests:?}");
}

#[test]
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn custom_metadata_is_invisible_to_libarrow_and_kept_by_us() {
    let peer = common::peer();
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
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn gcs_and_dm_files_degrade_to_their_storage_for_libarrow() {
    use arrow_sparse::dims::DimMap;
    let peer = common::peer();
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
        let AnyTensor::Dm(dm) = coo.to_dm(map, storage, IndexType::Int64).unwrap() else {
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
    // what arrow-sparse sees: the N-D tensors, exactly; libarrow rewrites the
    // storage byte for byte (the extension metadata is its custom_metadata,
    // which libarrow drops)
    read_back_exactly_and_storage_rewritten(&peer, dir.path(), &path, &tensors, &storage, "plain");
}

/// The level tensors of issue #17 (DCSR, DCSC, CSF with dense levels, batched
/// CSR, a sparse vector) and a few more (a permuted SoA COO run, `(compressed,
/// dense)`, a permuted all-dense format): libarrow reads each file's storage
/// message (its nearest plain tensor) with exactly the storage's entries, which
/// are the level tensor's entries; it rewrites the storage byte for byte (the
/// extension metadata is custom_metadata, which it drops); arrow-sparse reads
/// the exact level tensors back.
#[test]
#[ignore = "needs the libarrow peer: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn level_tensors_degrade_to_their_nearest_plain_tensor_for_libarrow() {
    use arrow_sparse::tensor::level::{LevelFormat, LevelTensor, LevelType};
    let peer = common::peer();
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(1717);
    let m = random_coo::<f64, i64>(&mut r, &[7, 9], 20, false, CoordLayout::RowMajor);
    let t3 = random_coo::<f32, i64>(&mut r, &[4, 5, 6], 30, true, CoordLayout::RowMajor);
    let t4 = random_coo::<i32, i64>(&mut r, &[3, 2, 4, 5], 25, true, CoordLayout::RowMajor);
    let v = random_coo::<f64, i64>(&mut r, &[50], 12, true, CoordLayout::RowMajor);
    let f = |s: &[&str], order: &[usize]| {
        LevelFormat::try_new(
            s.iter().map(|x| x.parse::<LevelType>().unwrap()).collect(),
            order.to_vec(),
        )
        .unwrap()
    };
    let tensors: Vec<AnyTensor> = vec![
        LevelTensor::<f64, i32>::dcsr(&m).unwrap().into(),
        LevelTensor::<f64, i64>::dcsc(&m).unwrap().into(),
        LevelTensor::<f32, i32>::csf_with_dense_levels(&t3, 1, vec![0, 1, 2])
            .unwrap()
            .into(),
        LevelTensor::<f32, i64>::csf_with_dense_levels(&t3, 2, vec![2, 0, 1])
            .unwrap()
            .into(),
        LevelTensor::<f32, i32>::batched_csr(&t3).unwrap().into(),
        LevelTensor::<i32, i32>::batched_csr(&t4).unwrap().into(),
        LevelTensor::<f64, i32>::from_coo(&v, &LevelFormat::sparse_vector())
            .unwrap()
            .into(),
        LevelTensor::<f32, i16>::from_coo(
            &t3,
            &f(
                &[
                    "compressed(nonunique)",
                    "singleton(nonunique, soa)",
                    "singleton(soa)",
                ],
                &[1, 2, 0],
            ),
        )
        .unwrap()
        .into(),
        LevelTensor::<f64, i32>::from_coo(&m, &f(&["compressed", "dense"], &[1, 0]))
            .unwrap()
            .into(),
        LevelTensor::<i32, i32>::from_coo(&t4, &f(&["dense"; 4], &[3, 1, 0, 2]))
            .unwrap()
            .into(),
        LevelTensor::<f64, i32>::from_coo(&m, &LevelFormat::csc())
            .unwrap()
            .into(),
    ];
    let path = dir.path().join("levels.arrow");
    write(&path, &tensors);
    let storage: Vec<AnyTensor> = tensors
        .iter()
        .map(|t| match t {
            AnyTensor::Level(l) => l.to_storage().unwrap(),
            _ => unreachable!(),
        })
        .collect();
    let expected: String = storage
        .iter()
        .map(|t| json_line(t).unwrap() + "\n")
        .collect();
    let theirs = common::run_peer(&peer, &["dump", path.to_str().unwrap()]);
    common::assert_same_dump(&expected, &theirs, "level tensors as libarrow reads them");
    // libarrow's entries are the level tensors' (the zeros of all-dense storage aside)
    for (t, line) in tensors.iter().zip(theirs.lines()) {
        let nonzero = |j: &serde_json::Value| -> Vec<serde_json::Value> {
            j["entries"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e.as_array().unwrap().last().unwrap().as_f64() != Some(0.0))
                .cloned()
                .collect()
        };
        let ours: serde_json::Value = serde_json::from_str(&json_line(t).unwrap()).unwrap();
        let libarrow: serde_json::Value = serde_json::from_str(line).unwrap();
        let (a, b) = (
            serde_json::Value::Array(nonzero(&ours)),
            serde_json::Value::Array(nonzero(&libarrow)),
        );
        assert!(
            common::json_eq_as(&a, &b, true),
            "{}: {a} vs {b}",
            ours["levels"]
        );
        assert_eq!(ours["shape"], libarrow["shape"]);
    }
    read_back_exactly_and_storage_rewritten(&peer, dir.path(), &path, &tensors, &storage, "levels");
}

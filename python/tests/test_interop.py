"""Both directions with libarrow 26 (the C++ peer, interop/peer.cc) for every
format x value type x index type the Rust interop suite covers, and byte-identity
with the Rust API (the CLI rewrites our files to the same bytes)."""

import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

import arrow_sparse
from conftest import cli_path, entries, run_peer, same_entries

VALUE_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64"]
# uint64 indices are read-only: libarrow aborts on them, so nothing writes them
INDEX_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"]


def _rewritten_identically(ours, tmp_path):
    """libarrow re-encodes the tensors of stream ``ours`` it read to the same bytes,
    and so does the Rust API (the CLI reads and rewrites the stream); returns
    libarrow's file."""
    theirs = tmp_path / "libarrow.arrow"
    run_peer("rewrite", ours, theirs)
    assert ours.read_bytes() == theirs.read_bytes()
    rust = tmp_path / "rust.arrow"
    subprocess.run([cli_path(), "convert", str(ours), str(rust)], check=True, capture_output=True)
    assert ours.read_bytes() == rust.read_bytes()
    return theirs


def random_dense(rng, shape, dtype, density=0.4):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        vals = rng.standard_normal(shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        vals = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    vals[rng.random(shape) >= density] = 0
    return vals


def corpus():
    """(description, Tensor, dense numpy original) for every combination."""
    rng = np.random.default_rng(12)
    out = []
    for vt in VALUE_TYPES:
        d2, d3 = random_dense(rng, (5, 7), vt), random_dense(rng, (3, 4, 5), vt)
        out.append((f"dense {vt} C", arrow_sparse.Tensor.from_numpy(d3), d3))
        out.append((f"dense {vt} F", arrow_sparse.Tensor.from_numpy(np.asfortranarray(d2)), d2))
        for it in INDEX_TYPES:
            for fmt, d in (("coo", d3), ("csr", d2), ("csc", d2), ("csf", d3)):
                t = arrow_sparse.Tensor.from_numpy(d, dim_names=[f"d{k}" for k in range(d.ndim)])
                out.append((f"{fmt} {vt} {it}", t.convert(fmt, it), d))
            out.append((f"csf {vt} {it} order 2,0,1", arrow_sparse.Tensor.from_numpy(d3).convert("csf", it, [2, 0, 1]), d3))
        if vt != "float16":  # scipy has no float16
            for fmt in ("csr", "csc", "coo"):
                for it in (np.int32, np.int64):
                    m = sp.random_array((6, 9), density=0.3, format=fmt, rng=rng, dtype=np.float64)
                    m.data = random_dense(rng, m.data.shape, vt, density=1.1)
                    m.data[m.data == 0] = 1
                    if fmt == "coo":
                        m.coords = tuple(c.astype(it) for c in m.coords)
                    else:
                        m.indices, m.indptr = m.indices.astype(it), m.indptr.astype(it)
                    out.append((f"scipy {fmt} {vt} {it.__name__}", arrow_sparse.Tensor.from_scipy(m), m.toarray()))
    return out


CORPUS = corpus()


def test_corpus_covers_every_combination():
    seen = {(t.format, t.value_type, t.index_type) for _, t, _ in CORPUS}
    assert len(seen) == len(VALUE_TYPES) * (4 * len(INDEX_TYPES) + 1)


def test_python_tensors_hold_the_numpy_entries():
    for what, t, d in CORPUS:
        if t.format == "dense":
            assert np.array_equal(t.to_numpy(), d), what
        else:
            assert np.array_equal(t.to_numpy(), d.astype(t.dtype)), what


def test_written_from_python_read_by_libarrow_byte_identical(tmp_path):
    ours = tmp_path / "ours.arrow"
    arrow_sparse.write(ours, [t for _, t, _ in CORPUS])
    # libarrow reads every tensor with our entries
    dump = run_peer("dump", ours).splitlines()
    assert len(dump) == len(CORPUS)
    for (what, t, _), line in zip(CORPUS, dump):
        want = same_entries(entries(t), line, what)
        assert (want["format"], want["value_type"], want["index_type"]) == (t.format, t.value_type, t.index_type), what
        assert want["shape"] == list(t.shape) and want["dim_names"] == t.dim_names, what
    theirs = _rewritten_identically(ours, tmp_path)
    # and libarrow's file reads back from Python with libarrow's entries
    for (what, _, _), t, line in zip(CORPUS, arrow_sparse.read(theirs), dump):
        same_entries(entries(t), line, "libarrow's " + what)


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "csf"])
@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_tensors_libarrow_builds_are_read_exactly(tmp_path, fmt, index_type):
    rng = np.random.default_rng(7)
    if fmt in ("csr", "csc"):
        dense = [random_dense(rng, s, "float64") for s in [(5, 7), (1, 9), (6, 1), (0, 3)]]
    else:
        dense = [random_dense(rng, s, "int32") for s in [(3, 4, 5), (4, 2, 3), (2, 3, 2, 3)]]
    src, out = tmp_path / "dense.arrow", tmp_path / "sparse.arrow"
    arrow_sparse.write(src, dense)
    run_peer("from-dense", src, out, fmt, index_type)
    dump = run_peer("dump", out).splitlines()
    tensors = arrow_sparse.read(out)
    assert len(tensors) == len(dense) == len(dump)
    for k, (t, d, line) in enumerate(zip(tensors, dense, dump)):
        what = f"libarrow {fmt} {index_type} #{k}"
        assert (t.format, t.index_type) == (fmt, index_type), what
        same_entries(entries(t), line, what)
        assert np.array_equal(t.to_numpy(), d), what
        m = t.to_scipy()
        assert np.array_equal(m.toarray(), d), what
        # our conversion of the same dense tensor encodes to libarrow's bytes
        mine = arrow_sparse.Tensor.from_numpy(d).convert(fmt, index_type, t.axis_order)
        mine_path = tmp_path / f"mine{k}.arrow"
        arrow_sparse.write(mine_path, [mine])
        theirs_one = tmp_path / f"theirs{k}.arrow"
        arrow_sparse.write(theirs_one, [t])
        assert mine_path.read_bytes() == theirs_one.read_bytes(), what


def _foreign_objects():
    """pyarrow and pydata/sparse objects of every format they have, every value type
    (pyarrow's ``to_numpy`` gives int64 indices whatever the object holds, so the
    index types are covered by the Tensor corpus above)."""
    import pyarrow as pa
    import sparse

    rng = np.random.default_rng(21)
    out = []
    for vt in VALUE_TYPES:
        d2, d3 = random_dense(rng, (5, 7), vt), random_dense(rng, (3, 4, 5), vt)
        out += [
            (f"pyarrow Tensor {vt}", pa.Tensor.from_numpy(d3), d3),
            (f"pyarrow SparseCOOTensor {vt}", pa.SparseCOOTensor.from_dense_numpy(d3), d3),
            (f"pyarrow SparseCSRMatrix {vt}", pa.SparseCSRMatrix.from_dense_numpy(d2), d2),
            (f"pyarrow SparseCSCMatrix {vt}", pa.SparseCSCMatrix.from_dense_numpy(d2), d2),
            (f"pyarrow SparseCSFTensor {vt}", pa.SparseCSFTensor.from_dense_numpy(d3), d3),
            (f"sparse COO {vt}", sparse.COO.from_numpy(d3), d3),
            (f"sparse GCXS csr {vt}", sparse.GCXS.from_numpy(d2, compressed_axes=(0,)), d2),
            (f"sparse GCXS csc {vt}", sparse.GCXS.from_numpy(d2, compressed_axes=(1,)), d2),
        ]
    return out


def test_written_from_pyarrow_and_sparse_objects_read_by_libarrow(tmp_path):
    objs = _foreign_objects()
    assert {str(d.dtype) for _, _, d in objs} == set(VALUE_TYPES)
    ours = tmp_path / "foreign.arrow"
    arrow_sparse.write(ours, [o for _, o, _ in objs])  # the objects themselves, not Tensors
    back = arrow_sparse.read(ours)
    dump = run_peer("dump", ours).splitlines()
    assert len(dump) == len(back) == len(objs)
    for (what, _, d), t, line in zip(objs, back, dump):
        assert np.array_equal(t.to_numpy(), d), what
        same_entries(entries(t), line, what)
    _rewritten_identically(ours, tmp_path)

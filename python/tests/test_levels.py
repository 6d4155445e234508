"""Level tensors (MLIR's sparse storage, issue #17) from Python: Tensor.to_level /
convert("level"), Tensor.levels, Tensor.mlir_encoding and the MLIR buffers,
against numpy; written to Arrow IPC streams, Parquet archives and sparse tensor
columns and read back exactly; libarrow (the C++ peer) reads the storage message
with the numpy entries."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import arrow_sparse
import arrow_sparse.ext  # noqa: F401  (registers the extension types)

from conftest import run_peer

# the named formats of issue #17, by ndim
NAMED = [
    ("sparse vector", 1, "(d0) -> (d0 : compressed)"),
    ("DCSR", 2, "(d0, d1) -> (d0 : compressed, d1 : compressed)"),
    ("DCSC", 2, "(d0, d1) -> (d1 : compressed, d0 : compressed)"),
    ("CSF, a dense level", 3, "(d0, d1, d2) -> (d2 : dense, d0 : compressed, d1 : compressed)"),
    ("batched CSR", 3, "(d0, d1, d2) -> (d0 : dense, d1 : dense, d2 : compressed)"),
    ("COO, soa", 3, "(d0, d1, d2) -> (d1 : compressed(nonunique), d0 : singleton(nonunique, soa), d2 : singleton(soa))"),
]


def random_array(seed, ndim):
    rng = np.random.default_rng(seed)
    shape = tuple(int(x) for x in rng.integers(1, 6, ndim))
    return rng.integers(-9, 10, shape).astype(np.float64) * (rng.random(shape) < 0.3)


@pytest.mark.parametrize("name,ndim,levels", NAMED)
def test_named_formats_hold_the_numpy_entries(name, ndim, levels):
    for seed in range(6):
        a = random_array(seed, ndim)
        t = arrow_sparse.Tensor.from_numpy(a).to_level(levels, "int32", "int64")
        assert (t.format, t.levels, t.index_type, t.indptr_type) == ("level", levels, "int32", "int64")
        assert np.array_equal(t.to_numpy(), a), name
        assert t.mlir_encoding == f"#sparse_tensor.encoding<{{ map = {levels}, posWidth = 64, crdWidth = 32 }}>"
        # and back to every plain format
        for f in ("coo", "dense") + (("csr", "csc") if ndim == 2 else ()) + (("csf",) if ndim >= 2 else ()):
            assert np.array_equal(t.convert(f).to_numpy(), a), (name, f)


def test_buffers_are_mlirs():
    # the MLIR seed's 8 x 8 CSR example; its listed positions [0, 2, 2, 2, 2, 2, 2, 3, 3]
    # disagree with its own entries (3.3 at m[7, 2]): the correct array is tested
    a = np.zeros((8, 8), dtype=np.float32)
    a[0, 1], a[0, 4], a[7, 2] = 1.1, 2.2, 3.3
    csr = arrow_sparse.Tensor.from_numpy(a).to_level("(d0, d1) -> (d0 : dense, d1 : compressed)")
    b = csr.buffers()
    assert sorted(b) == ["coordinates_1", "positions_1", "values"]
    assert b["positions_1"].tolist() == [0, 2, 2, 2, 2, 2, 2, 2, 3]
    assert b["coordinates_1"].tolist() == [1, 4, 2]
    assert np.array_equal(b["values"], np.array([1.1, 2.2, 3.3], dtype=np.float32))
    # the seed's sparse vector
    v = np.zeros(16, dtype=np.float32)
    v[[3, 6, 9, 12]] = [1.1, 2.2, 3.3, 4.4]
    sv = arrow_sparse.Tensor.from_numpy(v).to_level("(d0) -> (d0 : compressed)")
    assert sv.buffers()["positions_0"].tolist() == [0, 4]
    assert sv.buffers()["coordinates_0"].tolist() == [3, 6, 9, 12]
    # a dense level stores its zeros: every element of row 0 and row 7
    cd = arrow_sparse.Tensor.from_numpy(a).to_level("(d0, d1) -> (d0 : compressed, d1 : dense)")
    assert sorted(cd.buffers()) == ["coordinates_0", "positions_0", "values"]
    assert (cd.nnz, cd.buffers()["coordinates_0"].tolist()) == (16, [0, 7])


def test_convert_to_level_keeps_the_format_s_levels():
    a = random_array(3, 3)
    t = arrow_sparse.Tensor.from_numpy(a).convert("csf", axis_order=[2, 0, 1])
    lv = t.convert("level")
    assert lv.levels == "(d0, d1, d2) -> (d2 : compressed, d0 : compressed, d1 : compressed)"
    assert np.array_equal(lv.to_numpy(), a)


def test_bad_levels_are_errors():
    t = arrow_sparse.Tensor.from_numpy(random_array(1, 2))
    for bad in ["(d0, d1) -> (d0 : loose, d1 : dense)", "(d0) -> (d0 : compressed)", "(d0, d1) -> (d0 : dense, d1 : singleton)", ""]:
        with pytest.raises(arrow_sparse.ArrowSparseError):
            t.to_level(bad)
    # a unique level over entries that repeat: fine, duplicates are summed
    assert t.to_level("(d0, d1) -> (d0 : compressed, d1 : compressed)").nnz == np.count_nonzero(t.to_numpy())


@pytest.mark.parametrize("kind", ["arrow", "parquet", "column"])
def test_files_round_trip_exactly(tmp_path, kind):
    tensors = [
        arrow_sparse.Tensor.from_numpy(random_array(seed, ndim)).to_level(levels, "int16", "int32")
        for seed, (_, ndim, levels) in enumerate(NAMED)
    ]
    for i, t in enumerate(tensors):
        path = tmp_path / f"t{i}.{'arrow' if kind == 'arrow' else 'parquet'}"
        arrow_sparse.write(path, [t], as_column=kind == "column")
        (back,) = arrow_sparse.read(path)
        assert back == t, (kind, t.levels)
        assert (back.levels, back.mlir_encoding) == (t.levels, t.mlir_encoding)
        if kind == "column":
            # pyarrow reads the column as the plain format the levels travel as,
            # with the levels in the extension metadata
            col = pq.read_table(path).column("tensor")
            assert col.type.extension_name in ("arrow_sparse.coo", "arrow_sparse.csr", "arrow_sparse.csc", "arrow_sparse.csf")
            meta = json.loads(col.type.__arrow_ext_serialize__())
            lv = meta["levels"]
            assert (lv["index_type"], lv["indptr_type"], len(lv["levels"])) == ("int16", "int32", t.ndim)
            assert meta["version"] == 1


def test_libarrow_reads_the_storage_message(tmp_path):
    """The C++ peer (libarrow 26) reads each level tensor's storage message: its
    entries are the numpy array's non-zeros (a dense level's stored zeros aside)."""
    arrays, tensors = [], []
    for seed, (_, ndim, levels) in enumerate(NAMED):
        a = random_array(seed + 10, ndim)
        arrays.append(a)
        tensors.append(arrow_sparse.Tensor.from_numpy(a).to_level(levels, "int32"))
    path = tmp_path / "levels.arrow"
    arrow_sparse.write(path, tensors)
    lines = run_peer("dump", path).splitlines()
    assert len(lines) == len(tensors)
    for a, t, line in zip(arrays, tensors, lines):
        j = json.loads(line)
        assert j["shape"] == list(a.shape), t.levels
        theirs = sorted(tuple(e[:-1]) + (float(e[-1]),) for e in j["entries"] if float(e[-1]) != 0.0)
        idx = np.nonzero(a)
        ours = sorted(tuple(int(c[k]) for c in idx) + (float(a[idx][k]),) for k in range(len(idx[0])))
        assert theirs == ours, t.levels


def test_one_dimensional_csf_columns_are_read_by_pyarrow(tmp_path):
    """1-D CSF (a sparse vector: one level, no indptr) in a sparse tensor column."""
    v = np.array([0, 1.5, 0, 0, 2.5])
    t = arrow_sparse.Tensor.from_numpy(v).convert("csf", "int32")
    path = tmp_path / "v.parquet"
    arrow_sparse.write(path, [t, t], as_column=True)
    col = pq.read_table(path).column("tensor")
    assert col.type.extension_name == "arrow_sparse.csf"
    assert [back == t for back in arrow_sparse.read(path)] == [True, True]


def test_kernels_take_level_tensors():
    """spmv / spmm / sum on level tensors (one co-iteration over the levels in
    the library) equal numpy's, for every 2-D named format."""
    rng = np.random.default_rng(17)
    a = rng.integers(-5, 6, (7, 9)).astype(np.float64) * (rng.random((7, 9)) < 0.3)
    x, b = rng.random(9), rng.random((9, 3))
    for levels in [lv for (_, n, lv) in NAMED if n == 2] + ["(d0, d1) -> (d0 : compressed, d1 : dense)"]:
        t = arrow_sparse.Tensor.from_numpy(a).to_level(levels, "int32")
        assert np.allclose(arrow_sparse.spmv(t, x), a @ x), levels
        y = np.ones(7)
        arrow_sparse.spmv(t, x, out=y, alpha=2.0, beta=1.0)
        assert np.allclose(y, 2.0 * (a @ x) + 1.0), levels
        assert np.allclose(arrow_sparse.spmm(t, b), a @ b), levels
        assert np.allclose(arrow_sparse.sum(t, axis=0, output="dense").to_numpy(), a.sum(axis=0)), levels
        assert np.isclose(float(arrow_sparse.sum(t)), a.sum()), levels


def test_out_may_not_alias_a_level_tensor_s_buffers():
    import scipy.sparse as sp

    m = sp.csr_array(np.eye(4))
    t = arrow_sparse.Tensor.from_scipy(m).convert("level")  # shares scipy's buffers
    assert np.shares_memory(t.buffers()["values"], m.data)
    with pytest.raises(ValueError, match="shares memory"):
        arrow_sparse.spmv(t, np.ones(4), out=m.data)

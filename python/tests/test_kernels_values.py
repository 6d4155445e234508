"""canonicalize, transpose, map_values, MTTKRP on a CSR matricization and the
CSR <-> CSC kernel behind Tensor.convert, from Python: against numpy / scipy
references, buffer sharing checked, typed errors for wrong input."""

import numpy as np
import pytest
import scipy.sparse as sp

import arrow_sparse

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int16, np.uint8]


def _tensor3(dtype, shape=(4, 5, 6), seed=11):
    rng = np.random.default_rng(seed)
    return (rng.integers(1, 5, shape) * (rng.random(shape) < 0.3)).astype(dtype)


def _messy_coo(dtype, index_type, seed=20):
    """A COO tensor with duplicates, out of order, as scipy holds it."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 6, 40).astype(index_type)
    cols = rng.integers(0, 5, 40).astype(index_type)
    vals = rng.integers(0, 3, 40).astype(dtype)
    return sp.coo_array((vals, (rows, cols)), shape=(6, 5))


def _shares(a, b):
    return np.shares_memory(a, b)


# ---------------------------------------------------------------- canonicalize
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_type", ["int32", "int64", "int16", "uint8", "uint64"])
def test_canonicalize_matches_scipy(dtype, index_type):
    m = _messy_coo(dtype, np.int64)
    t = arrow_sparse.Tensor.from_scipy(m).convert("coo", index_type)  # entries kept as stored
    assert not t.is_canonical
    c = arrow_sparse.canonicalize(t)
    want = m.copy()
    want.sum_duplicates()  # sorted row-major, duplicates summed
    assert c.format == "coo" and c.is_canonical and c.index_type == index_type
    assert c.dtype == np.dtype(dtype)
    coords = c.buffers()["coords"]
    assert coords[:, 0].tolist() == want.row.tolist() and coords[:, 1].tolist() == want.col.tolist()
    assert c.buffers()["values"].tolist() == want.data.tolist()
    # scipy objects are taken as they are
    assert arrow_sparse.canonicalize(m) == arrow_sparse.canonicalize(arrow_sparse.Tensor.from_scipy(m))


def test_canonicalize_shares_a_canonical_row_major_tensor_and_relays_others():
    t = arrow_sparse.Tensor.from_numpy(_tensor3(np.float64)).convert("coo", "int32")
    assert t.is_canonical
    c = arrow_sparse.canonicalize(t)
    for k in ("coords", "values"):
        assert _shares(c.buffers()[k], t.buffers()[k])
    # scipy's canonical COO arrives column-major (row array, then column array):
    # the result is row-major and holds the same entries
    m = sp.coo_array(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]))
    s = arrow_sparse.Tensor.from_scipy(m)
    c = arrow_sparse.canonicalize(s)
    assert c.is_canonical and np.array_equal(c.to_numpy(), m.toarray())
    assert c.buffers()["coords"].flags.c_contiguous  # row-major nnz x ndim


def test_canonicalize_checks_every_step_and_takes_only_coo():
    # 100 + 100 overflows int8 on the way although the total (100) fits:
    # canonicalize refuses, sum_duplicates (wide accumulation) does not
    m = sp.coo_array((np.array([100, 100, -100], dtype=np.int8), (np.array([0, 0, 0]), np.array([1, 1, 1]))), shape=(1, 2))
    with pytest.raises(arrow_sparse.NumericOverflowError):
        arrow_sparse.canonicalize(m)
    assert arrow_sparse.sum_duplicates(m).to_numpy().tolist() == [[0, 100]]
    ok = sp.coo_array((np.array([50, 20], dtype=np.int8), (np.array([0, 0]), np.array([1, 1]))), shape=(1, 2))
    assert arrow_sparse.canonicalize(ok).to_numpy().tolist() == [[0, 70]]
    for fmt in ("csr", "csc", "csf", "dense", "gcs"):
        with pytest.raises(arrow_sparse.UnsupportedError, match="COO"):
            arrow_sparse.canonicalize(arrow_sparse.Tensor.from_numpy(np.eye(2)).convert(fmt))


# ---------------------------------------------------------------- transpose
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("index_type", ["int32", "int64", "uint16"])
def test_transpose_of_a_compressed_matrix_shares_every_buffer(fmt, index_type):
    x = _tensor3(np.float64)[:, :, 0]
    t = arrow_sparse.Tensor.from_numpy(x).convert(fmt, index_type)
    r = arrow_sparse.transpose(t)
    assert r.format == ("csc" if fmt == "csr" else "csr") and r.shape == x.T.shape
    assert r.index_type == index_type
    assert np.array_equal(r.to_numpy(), x.T)
    for k in ("indptr", "indices", "values"):
        assert _shares(r.buffers()[k], t.buffers()[k])
    assert arrow_sparse.transpose(r) == t
    # against scipy's transpose, read from a mapped file
    m = sp.random_array((30, 20), density=0.2, format=fmt, rng=np.random.default_rng(3))
    assert np.array_equal(arrow_sparse.transpose(m).to_scipy().toarray(), m.T.toarray())


def test_transpose_of_a_mapped_stream_points_into_the_file(tmp_path):
    m = sp.random_array((50, 40), density=0.1, format="csr", rng=np.random.default_rng(4))
    path = tmp_path / "m.arrow"
    arrow_sparse.write(path, m)
    [t] = arrow_sparse.read(path)
    r = arrow_sparse.transpose(t)
    assert r.buffers()["indices"].ctypes.data == t.buffers()["indices"].ctypes.data
    assert np.array_equal(r.to_numpy(), m.toarray().T)
    # and it writes as an ordinary CSC matrix
    out = tmp_path / "t.arrow"
    arrow_sparse.write(out, r)
    assert np.array_equal(arrow_sparse.read(out)[0].to_scipy().toarray(), m.toarray().T)


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 0, 1], [1, 2, 0]])
def test_transpose_of_csf_and_dense_is_numpy_T(order):
    x = _tensor3(np.int32, seed=5)
    csf = arrow_sparse.Tensor.from_numpy(x).convert("csf", "int32", order)
    r = arrow_sparse.transpose(csf)
    assert r.format == "csf" and r.shape == x.T.shape
    assert r.axis_order == tuple(2 - d for d in order) or list(r.axis_order) == [2 - d for d in order]
    assert np.array_equal(r.to_numpy(), x.T)
    assert _shares(r.buffers()["values"], csf.buffers()["values"])
    d = arrow_sparse.Tensor.from_numpy(x)
    rd = arrow_sparse.transpose(d)
    assert rd.format == "dense" and np.array_equal(rd.to_numpy(), x.T)
    assert _shares(rd.buffers()["values"], d.buffers()["values"])


def test_transpose_of_coo_and_dim_names():
    x = _tensor3(np.float32, seed=6)
    for t in (arrow_sparse.Tensor.from_numpy(x).convert("coo", "int16"),
              arrow_sparse.Tensor.from_sparse(__import__("sparse").COO.from_numpy(x))):
        r = arrow_sparse.transpose(t)
        assert r.format == "coo" and r.index_type == t.index_type
        assert np.array_equal(r.to_numpy(), x.T)
        assert _shares(r.buffers()["values"], t.buffers()["values"])
    m = sp.coo_array(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]))  # column-major coordinates
    assert np.array_equal(arrow_sparse.transpose(m).to_numpy(), m.toarray().T)
    named = arrow_sparse.Tensor.from_numpy(np.eye(2, 3), dim_names=["row", "col"]).convert("csr")
    assert arrow_sparse.transpose(named).dim_names == ("col", "row") or list(arrow_sparse.transpose(named).dim_names) == ["col", "row"]
    with pytest.raises(arrow_sparse.UnsupportedError):
        arrow_sparse.transpose(arrow_sparse.Tensor.from_numpy(x).to_gcs([0, 1, 2], [1]))


# ---------------------------------------------------------------- map_values
@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "csf", "dense", "gcs", "dm"])
def test_map_values_keeps_the_structure_and_shares_the_indices(fmt):
    x = _tensor3(np.float64, seed=7)
    if fmt in ("csr", "csc"):
        x = x[:, :, 0]
    base = arrow_sparse.Tensor.from_numpy(x)
    if fmt == "dm":
        t = base.to_dm([2, 0, 1], [1], storage="csr", index_type="int32")
    elif fmt == "gcs":
        t = base.to_gcs([0, 1, 2], [1], index_type="int32")
    else:
        t = base.convert(fmt, "int32")
    r = arrow_sparse.map_values(t, np.sqrt)
    assert r.format == t.format and r.shape == t.shape and r.dtype == np.float64
    assert np.allclose(r.to_numpy(), np.sqrt(x))
    tb, rb = t.buffers(), r.buffers()
    assert tb.keys() == rb.keys()
    for k in tb:
        if k.endswith("values"):
            assert not _shares(rb[k], tb[k])
        else:
            assert rb[k].ctypes.data == tb[k].ctypes.data, k  # the same index buffer
    # a new value type
    r8 = arrow_sparse.map_values(t, lambda v: v * 2, dtype=np.int8)
    assert r8.dtype == np.int8 and np.array_equal(r8.to_numpy(), (x * 2).astype(np.int8))


def test_map_values_on_a_mapped_stream_and_scipy(tmp_path):
    m = sp.random_array((40, 30), density=0.2, format="csr", rng=np.random.default_rng(8))
    path = tmp_path / "m.arrow"
    arrow_sparse.write(path, m)
    [t] = arrow_sparse.read(path)
    r = arrow_sparse.map_values(t, np.negative)
    assert r.buffers()["indptr"].ctypes.data == t.buffers()["indptr"].ctypes.data
    assert np.array_equal(r.to_scipy().toarray(), -m.toarray())
    # a value mapped to zero stays stored
    z = arrow_sparse.map_values(m, np.zeros_like)
    assert z.nnz == m.nnz and not z.to_numpy().any()


def test_map_values_errors():
    t = arrow_sparse.Tensor.from_numpy(np.eye(3)).convert("csr", "int32")
    with pytest.raises(arrow_sparse.LengthError):
        arrow_sparse.map_values(t, lambda v: v[:2])
    with pytest.raises(arrow_sparse.LengthError):
        arrow_sparse.map_values(t, lambda v: 1.0)  # a scalar, not one value per entry
    with pytest.raises(arrow_sparse.LengthError):
        arrow_sparse.map_values(t, lambda v: np.stack([v, v]))
    with pytest.raises(TypeError):
        arrow_sparse.map_values(t, lambda v: v.astype(np.complex128))  # not a value type
    with pytest.raises(ValueError, match="read-only"):
        arrow_sparse.map_values(t, lambda v: v.__iadd__(1))  # the stored values are not writable
    with pytest.raises(ZeroDivisionError):
        arrow_sparse.map_values(t, lambda v: 1 / 0)  # func's own errors pass through
    assert np.array_equal(t.to_numpy(), np.eye(3))  # untouched


# ---------------------------------------------------------------- MTTKRP on CSR
def _mttkrp_ref(x, mode, factors):
    rank = next(f.shape[1] for d, f in enumerate(factors) if d != mode)
    out = np.zeros((x.shape[mode], rank))
    for idx in zip(*np.nonzero(x)):
        prod = np.ones(rank) * float(x[idx])
        for d in range(x.ndim):
            if d != mode:
                prod = prod * factors[d][idx[d]].astype(np.float64)
        out[idx[mode]] += prod
    return out


def _matricize(x, mode):
    """Rows = the mode, columns = the other modes in increasing order, row-major."""
    return np.moveaxis(x, mode, 0).reshape(x.shape[mode], -1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_type", ["int32", "int64", "uint16"])
def test_mttkrp_on_a_csr_matricization_matches_the_csf_kernel(dtype, index_type):
    x = _tensor3(dtype, seed=9)
    rng = np.random.default_rng(10)
    factors = [rng.integers(0, 3, (s, 3)).astype(dtype) for s in x.shape]
    for mode in range(3):
        csr = arrow_sparse.Tensor.from_numpy(_matricize(x, mode)).convert("csr", index_type)
        got = arrow_sparse.mttkrp(csr, mode, factors, shape=x.shape)
        assert got.shape == (x.shape[mode], 3) and got.dtype == np.dtype(dtype)
        want = _mttkrp_ref(x, mode, factors)
        if np.dtype(dtype).kind == "f":
            assert np.allclose(got, want, rtol=1e-4)
        else:
            assert np.array_equal(got, want.astype(dtype))
        assert np.array_equal(got, arrow_sparse.mttkrp(arrow_sparse.Tensor.from_numpy(x), mode, factors))
    # a scipy csr_array is taken as it is
    m = sp.csr_array(_matricize(x, 1))
    assert np.array_equal(arrow_sparse.mttkrp(m, 1, factors, shape=x.shape),
                          arrow_sparse.mttkrp(arrow_sparse.Tensor.from_numpy(x), 1, factors))


def test_mttkrp_on_csr_errors():
    x = _tensor3(np.float64, seed=9)
    f = [np.ones((s, 2)) for s in x.shape]
    m = _matricize(x, 0)
    with pytest.raises(arrow_sparse.ArrowSparseError):  # must be CSR, not CSC
        arrow_sparse.mttkrp(sp.csc_array(m), 0, f, shape=x.shape)
    with pytest.raises(arrow_sparse.UnsupportedError, match="CSR"):
        arrow_sparse.mttkrp(sp.coo_array(m), 0, f, shape=x.shape)
    with pytest.raises(arrow_sparse.ShapeError):  # the matrix is not shape's matricization
        arrow_sparse.mttkrp(sp.csr_array(m), 0, f, shape=(4, 6, 5, 1))
    with pytest.raises(arrow_sparse.ShapeError):
        arrow_sparse.mttkrp(sp.csr_array(m), 0, f, shape=(4, 5, 7))
    with pytest.raises(IndexError):
        arrow_sparse.mttkrp(sp.csr_array(m), 3, f, shape=x.shape)


# ---------------------------------------------------------------- CSR <-> CSC
@pytest.mark.parametrize("index_type", ["int32", "int64", "int16", "uint32"])
@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.float16])
def test_convert_between_csr_and_csc_matches_scipy(index_type, dtype):
    m = sp.random_array((60, 45), density=0.15, format="csr", rng=np.random.default_rng(12))
    m.data = (m.data * 10).astype(dtype)
    t = arrow_sparse.Tensor.from_scipy(m).convert("csr", index_type)
    c = t.convert("csc", index_type)  # the transpose kernel: index types kept
    want = m.tocsc()
    assert c.format == "csc" and c.index_type == index_type and c.indptr_type == index_type
    b = c.buffers()
    assert b["indptr"].tolist() == want.indptr.tolist()
    assert b["indices"].tolist() == want.indices.tolist()
    assert np.array_equal(b["values"], want.data.astype(dtype))
    assert c.convert("csr", index_type) == t  # and back
    # the same tensor as the path through COO (another index type)
    assert np.array_equal(t.convert("csc", "int64" if index_type != "int64" else "int32").to_numpy(), c.to_numpy())

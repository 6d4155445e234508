"""SpMM, MTTKRP, TTV, scale, allclose and the ``out=`` forms of SpMV / SpMM from
Python, against numpy / scipy references; typed errors for bad operands."""

import numpy as np
import pytest
import scipy.sparse as sp

import arrow_sparse

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int16, np.uint8]


def _matrix(fmt, dtype, shape=(30, 20), seed=1):
    rng = np.random.default_rng(seed)
    m = sp.random_array(shape, density=0.25, format=fmt, rng=rng, dtype=np.float64)
    m.data = (m.data * 5).astype(dtype)
    return m


def _close(got, want, dtype):
    if np.dtype(dtype).kind == "f":
        return np.allclose(got, want, rtol=1e-4)
    return np.array_equal(got, want.astype(dtype))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_spmm_matches_scipy(tmp_path, fmt, dtype):
    m = _matrix(fmt, dtype)
    b = (np.random.default_rng(2).random((20, 7)) * 3).astype(dtype)
    path = tmp_path / "m.arrow"
    arrow_sparse.write(path, m)
    [t] = arrow_sparse.read(path)  # mapped
    c = arrow_sparse.spmm(t, b)
    want = m.astype(np.float64) @ b.astype(np.float64)
    assert c.shape == (30, 7) and c.dtype == np.dtype(dtype)
    assert _close(c, want, dtype)
    assert c.flags.writeable  # the kernel's fresh output belongs to the caller
    assert np.array_equal(arrow_sparse.spmm(m, b), c)


def test_spmm_of_gcs_uses_the_reduced_matrix():
    x = np.random.default_rng(3).random((3, 4, 5)) * (np.random.default_rng(4).random((3, 4, 5)) < 0.3)
    g = arrow_sparse.Tensor.from_numpy(x).to_gcs([0, 1, 2], [1])  # 3 x 20
    b = np.random.default_rng(5).random((20, 2))
    assert np.allclose(arrow_sparse.spmm(g, b), x.reshape(3, 20) @ b)


def test_spmv_and_spmm_into_out():
    m = _matrix("csr", np.float64)
    x = np.random.default_rng(6).random(20)
    y0 = np.random.default_rng(7).random(30)
    y = y0.copy()
    got = arrow_sparse.spmv(m, x, out=y, alpha=2.0, beta=-1.0)
    assert got is y
    assert np.allclose(y, 2.0 * (m @ x) - y0)
    z = np.full(30, np.nan)  # beta = 0 does not read out
    arrow_sparse.spmv(m, x, out=z)
    assert np.allclose(z, m @ x)
    assert np.allclose(arrow_sparse.spmv(m, x, alpha=3.0), 3.0 * (m @ x))
    b = np.random.default_rng(8).random((20, 4))
    c0 = np.random.default_rng(9).random((30, 4))
    c = c0.copy()
    assert arrow_sparse.spmm(m, b, out=c, alpha=0.5, beta=2.0) is c
    assert np.allclose(c, 0.5 * (m @ b) + 2.0 * c0)


def test_out_is_checked():
    m = _matrix("csr", np.float64)
    x = np.ones(20)
    with pytest.raises(ValueError, match="elements"):
        arrow_sparse.spmv(m, x, out=np.zeros(29))
    with pytest.raises(ValueError, match="dtype"):
        arrow_sparse.spmv(m, x, out=np.zeros(30, dtype=np.float32))
    ro = np.zeros(30)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        arrow_sparse.spmv(m, x, out=ro)
    with pytest.raises(ValueError, match="contiguous"):
        arrow_sparse.spmv(m, x, out=np.zeros(60)[::2])
    with pytest.raises(TypeError):
        arrow_sparse.spmv(m, x, out=[0.0] * 30)
    with pytest.raises(ValueError, match="beta"):
        arrow_sparse.spmv(m, x, beta=1.0)
    # out may not alias an operand: x, or the tensor's own (numpy-owned) buffers
    sq = sp.csr_array(np.eye(4))
    v = np.ones(4)
    with pytest.raises(ValueError, match="shares memory"):
        arrow_sparse.spmv(sq, v, out=v)
    t = arrow_sparse.Tensor.from_scipy(sq)
    with pytest.raises(ValueError, match="shares memory"):
        arrow_sparse.spmv(t, v, out=sq.data)
    # an integer alpha out of the value type's range
    with pytest.raises(OverflowError):
        arrow_sparse.spmv(sp.csr_array(np.eye(2, dtype=np.int8)), np.ones(2, dtype=np.int8), alpha=300)


def _tensor3(dtype, seed=11, shape=(4, 5, 6)):
    rng = np.random.default_rng(seed)
    x = (rng.integers(1, 5, shape) * (rng.random(shape) < 0.3)).astype(dtype)
    return x


def _mttkrp_ref(x, mode, factors):
    n = x.ndim
    rank = next(f.shape[1] for d, f in enumerate(factors) if d != mode)
    out = np.zeros((x.shape[mode], rank))
    for idx in zip(*np.nonzero(x)):
        prod = np.ones(rank) * float(x[idx])
        for d in range(n):
            if d != mode:
                prod = prod * factors[d][idx[d]].astype(np.float64)
        out[idx[mode]] += prod
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", [[0, 1, 2], [2, 0, 1], [1, 2, 0]])
@pytest.mark.parametrize("index_type", ["int32", "int64", "uint16"])
def test_mttkrp_matches_reference(dtype, order, index_type):
    x = _tensor3(dtype)
    t = arrow_sparse.Tensor.from_numpy(x).convert("csf", index_type, order)
    rng = np.random.default_rng(12)
    factors = [(rng.integers(0, 3, (s, 3))).astype(dtype) for s in x.shape]
    for mode in range(3):
        fs = list(factors)
        fs[mode] = None
        got = arrow_sparse.mttkrp(t, mode, fs)
        assert got.shape == (x.shape[mode], 3) and got.dtype == np.dtype(dtype)
        assert _close(got, _mttkrp_ref(x, mode, factors), dtype)
    # any format: converted to CSF first
    got = arrow_sparse.mttkrp(arrow_sparse.Tensor.from_numpy(x).convert("coo", "int32"), 1, factors)
    assert _close(got, _mttkrp_ref(x, 1, factors), dtype)


def test_mttkrp_errors():
    x = _tensor3(np.float64)
    t = arrow_sparse.Tensor.from_numpy(x).convert("csf", "int32")
    f = [np.ones((s, 2)) for s in x.shape]
    with pytest.raises(arrow_sparse.ShapeError):
        arrow_sparse.mttkrp(t, 0, f[:2])
    with pytest.raises(arrow_sparse.ShapeError):
        arrow_sparse.mttkrp(t, 0, [None, np.ones((5, 2)), np.ones((7, 2))])
    with pytest.raises(ValueError, match="dtype"):
        arrow_sparse.mttkrp(t, 0, [None, np.ones((5, 2), dtype=np.float32), np.ones((6, 2))])
    with pytest.raises(IndexError):
        arrow_sparse.mttkrp(t, 3, f)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", [[0, 1, 2], [2, 1, 0]])
def test_ttv_matches_tensordot(dtype, order):
    x = _tensor3(dtype, seed=13)
    t = arrow_sparse.Tensor.from_numpy(x).convert("csf", "int32", order)
    rng = np.random.default_rng(14)
    for mode in range(3):
        v = rng.integers(0, 4, x.shape[mode]).astype(dtype)
        y = arrow_sparse.ttv(t, mode, v)
        assert y.format == "coo" and y.index_type == "int64"
        want = np.tensordot(x.astype(np.float64), v.astype(np.float64), axes=([mode], [0]))
        assert y.shape == want.shape
        assert _close(y.to_numpy(), want, dtype)
    with pytest.raises(arrow_sparse.ArrowSparseError):
        arrow_sparse.ttv(t, 0, np.ones(3, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", [[0, 1, 2], [2, 1, 0], [1, 0, 2]])
def test_dense_ttv_matches_tensordot(dtype, order):
    x = _tensor3(dtype, seed=17)
    t = arrow_sparse.Tensor.from_numpy(x).convert("csf", "int32", order)
    rng = np.random.default_rng(18)
    for mode in range(3):
        v = rng.integers(0, 4, x.shape[mode]).astype(dtype)
        y = arrow_sparse.ttv(t, mode, v, dense=True)
        want = np.tensordot(x.astype(np.float64), v.astype(np.float64), axes=([mode], [0]))
        assert y.format == "dense" and y.shape == want.shape and y.dtype == np.dtype(dtype)
        assert _close(y.to_numpy(), want, dtype)
        # the same elements as the sparse result
        assert np.array_equal(y.to_numpy(), arrow_sparse.ttv(t, mode, v).to_numpy())
    with pytest.raises(arrow_sparse.ShapeError):
        arrow_sparse.ttv(t, 1, np.ones(x.shape[1] + 1, dtype=dtype), dense=True)


def test_dense_ttv_integer_overflow_raises():
    x = np.zeros((2, 2, 2), dtype=np.int8)
    x[0, 1, 1] = x[1, 1, 1] = 100
    t = arrow_sparse.Tensor.from_numpy(x)
    assert arrow_sparse.ttv(t, 0, np.array([1, -1], dtype=np.int8), dense=True).to_numpy().sum() == 0
    with pytest.raises(arrow_sparse.NumericOverflowError):
        arrow_sparse.ttv(t, 0, np.array([1, 1], dtype=np.int8), dense=True)


@pytest.mark.parametrize("output", ["auto", "dense", "sparse"])
def test_sum_output_formats(output):
    x = _tensor3(np.float64, seed=19)
    t = arrow_sparse.Tensor.from_numpy(x).convert("coo", "int32")
    s = arrow_sparse.sum(t, axis=(0, 2), output=output)
    assert s.format == {"auto": "dense", "dense": "dense", "sparse": "coo"}[output]
    assert np.allclose(s.to_numpy(), x.sum(axis=(0, 2)))
    with pytest.raises(ValueError, match="output"):
        arrow_sparse.sum(t, axis=0, output="csr")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_sum_duplicates_matches_scipy(dtype, index_type):
    rng = np.random.default_rng(20)
    rows = rng.integers(0, 6, 40).astype(index_type)
    cols = rng.integers(0, 5, 40).astype(index_type)
    vals = rng.integers(0, 3, 40).astype(dtype)
    m = sp.coo_array((vals, (rows, cols)), shape=(6, 5))
    s = arrow_sparse.sum_duplicates(arrow_sparse.Tensor.from_scipy(m))
    want = m.copy()
    want.sum_duplicates()
    assert s.format == "coo" and s.is_canonical and s.nnz == want.nnz
    assert s.dtype == np.dtype(dtype)
    assert np.array_equal(s.to_numpy(), want.toarray())


def test_sum_duplicates_accumulates_wide_and_only_takes_coo():
    m = sp.coo_array((np.array([100, 100, -100], dtype=np.int8), (np.array([0, 0, 0]), np.array([1, 1, 1]))), shape=(1, 2))
    assert arrow_sparse.sum_duplicates(arrow_sparse.Tensor.from_scipy(m)).to_numpy().tolist() == [[0, 100]]
    big = sp.coo_array((np.array([100, 100], dtype=np.int8), (np.array([0, 0]), np.array([1, 1]))), shape=(1, 2))
    with pytest.raises(arrow_sparse.NumericOverflowError):
        arrow_sparse.sum_duplicates(arrow_sparse.Tensor.from_scipy(big))
    with pytest.raises(arrow_sparse.UnsupportedError):
        arrow_sparse.sum_duplicates(arrow_sparse.Tensor.from_numpy(np.eye(2)).convert("csr"))


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "csf", "dense", "gcs"])
def test_scale_keeps_the_format(fmt):
    x = _tensor3(np.int32, seed=15)[:, :, 0] if fmt in ("csr", "csc") else _tensor3(np.int32, seed=15)
    t = arrow_sparse.Tensor.from_numpy(x).convert(fmt, "int32")
    s = arrow_sparse.scale(t, -3)
    assert s.format == fmt
    assert np.array_equal(s.to_numpy(), -3 * x)
    f = arrow_sparse.scale(arrow_sparse.Tensor.from_numpy(x.astype(np.float32)), 0.5)
    assert np.allclose(f.to_numpy(), 0.5 * x)


def test_scale_overflow_and_scalar_range():
    t = arrow_sparse.Tensor.from_numpy(np.array([60, 0], dtype=np.int8))
    assert arrow_sparse.scale(t, 2).to_numpy().tolist() == [120, 0]
    with pytest.raises(arrow_sparse.NumericOverflowError):
        arrow_sparse.scale(t, 3)
    with pytest.raises(OverflowError):
        arrow_sparse.scale(t, 1000)
    with pytest.raises(TypeError):
        arrow_sparse.scale(t, 1.5)


def test_allclose_like_numpy():
    rng = np.random.default_rng(16)
    a = rng.random((6, 7)) * (rng.random((6, 7)) < 0.4)
    b = a + 1e-10 * (a != 0)
    ta = arrow_sparse.Tensor.from_numpy(a).convert("csr", "int32")
    for other in (b, sp.coo_array(b), arrow_sparse.Tensor.from_numpy(b).convert("csc")):
        assert arrow_sparse.allclose(ta, other) == np.allclose(a, b)
    c = a.copy()
    c[np.nonzero(a)[0][0], np.nonzero(a)[1][0]] += 1.0
    assert not arrow_sparse.allclose(ta, c)
    assert arrow_sparse.allclose(ta, c, atol=1.0)
    assert arrow_sparse.allclose(ta, c, rtol=1.0)
    assert not arrow_sparse.allclose(ta, np.zeros((7, 6)))  # another shape
    with pytest.raises(arrow_sparse.TypeMismatchError):
        arrow_sparse.allclose(ta, a.astype(np.float32))
    n = a.copy()
    n[0, 0] = np.nan
    assert not arrow_sparse.allclose(n, n)

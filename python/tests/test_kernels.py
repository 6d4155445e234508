"""Kernels from Python agree with numpy / scipy on the same data, run on mapped
files in place, and raise typed errors."""

import numpy as np
import pytest
import scipy.sparse as sp

import arrow_sparse


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint16])
def test_spmv_matches_scipy(tmp_path, fmt, dtype):
    rng = np.random.default_rng(5)
    m = sp.random_array((40, 30), density=0.2, format=fmt, rng=rng, dtype=np.float64)
    m.data = (m.data * 10).astype(dtype)
    x = (rng.random(30) * 10).astype(dtype)
    path = tmp_path / "m.arrow"
    arrow_sparse.write(path, [m])
    [t] = arrow_sparse.read(path)  # mapped: the kernel reads the file's pages
    y = arrow_sparse.spmv(t, x)
    want = m.astype(np.float64) @ x.astype(np.float64)
    assert y.dtype == np.dtype(dtype) and y.shape == (40,)
    if np.dtype(dtype).kind == "f":
        assert np.allclose(y, want, rtol=1e-5)
    else:
        assert np.array_equal(y, want.astype(dtype))
    assert np.array_equal(arrow_sparse.spmv(m, x), y)


def test_spmv_refuses_wrong_dtype_and_length():
    m = sp.csr_array(np.eye(3))
    with pytest.raises(ValueError):
        arrow_sparse.spmv(m, np.ones(3, dtype=np.float32))
    with pytest.raises(arrow_sparse.ArrowSparseError):
        arrow_sparse.spmv(m, np.ones(4))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_operators_match_scipy(tmp_path, fmt):
    rng = np.random.default_rng(11)
    m = sp.random_array((30, 20), density=0.2, format=fmt, rng=rng)
    n = sp.random_array((30, 20), density=0.2, format=fmt, rng=rng)
    path = tmp_path / "m.arrow"
    arrow_sparse.write(path, [m, n])
    a, b = arrow_sparse.read(path)  # mapped
    x, xs = rng.random(20), rng.random((20, 4))
    assert np.array_equal(a @ x, arrow_sparse.spmv(a, x))
    assert np.allclose(a @ x, m @ x) and np.allclose(a @ list(x), m @ x)
    assert (a @ xs).shape == (30, 4) and np.allclose(a @ xs, m @ xs)
    w, ws = rng.random(30), rng.random((5, 30))
    assert np.allclose(w @ a, w @ m) and np.allclose(list(w) @ a, w @ m)
    assert (ws @ a).shape == (5, 20) and np.allclose(ws @ a, ws @ m)
    assert a.T.shape == (20, 30) and np.allclose(a.T.to_numpy(), m.T.toarray())
    for got, want in [
        (a + b, m + n),
        (a - b, m - n),
        (a * b, m.multiply(n)),
        (a * 2.5, m * 2.5),
        (2.5 * a, m * 2.5),
        (-a, -m),
        (a + n, m + n),  # scipy on the right
        (n + a, n + m),  # scipy on the left: it defers to Tensor.__radd__
        (n - a, n - m),
    ]:
        assert isinstance(got, arrow_sparse.Tensor) and got.format == fmt
        assert np.allclose(got.to_numpy(), want.toarray())
    d = n.toarray()
    for got, want in [(d + a, d + m), (d - a, d - m), (d * a, m.multiply(d))]:
        # numpy on the left defers to the Tensor (no object-array loop); the
        # result takes the left operand's format
        assert isinstance(got, arrow_sparse.Tensor) and got.format == "dense"
        assert np.allclose(got.to_numpy(), want.toarray() if sp.issparse(want) else want)
    with pytest.raises(TypeError):
        a @ a  # no sparse @ sparse
    with pytest.raises(TypeError, match="unsupported operand"):
        a + "a"  # NotImplemented: Python's own error
    with pytest.raises(TypeError, match="unsupported numpy dtype"):
        a + np.ones((30, 20), dtype=np.complex128)  # a type it takes, not a dtype
    with pytest.raises(ValueError, match="1-D or 2-D"):
        np.ones((2, 2, 30)) @ a
    with pytest.raises(ValueError):
        a @ x.astype(np.float32)  # never cast, as spmv
    with pytest.raises(ValueError):
        a @ np.ones((20, 2, 2))
    with pytest.raises(arrow_sparse.ArrowSparseError):
        a + arrow_sparse.Tensor.from_numpy(np.zeros((3, 3)))
    with pytest.raises(OverflowError):
        -arrow_sparse.Tensor.from_numpy(np.array([1, 0], dtype=np.uint16))


def test_integer_overflow_is_an_error():
    m = sp.csr_array(np.array([[100, 100]], dtype=np.int8))
    with pytest.raises(arrow_sparse.NumericOverflowError):
        arrow_sparse.spmv(m, np.array([1, 1], dtype=np.int8))
    with pytest.raises(arrow_sparse.NumericOverflowError):
        arrow_sparse.sum(m)


def test_sum_and_elementwise_match_numpy():
    rng = np.random.default_rng(9)
    a = rng.integers(-5, 5, (3, 4, 5)) * (rng.random((3, 4, 5)) < 0.4)
    b = rng.integers(-5, 5, (3, 4, 5)) * (rng.random((3, 4, 5)) < 0.4)
    ta = arrow_sparse.Tensor.from_numpy(a).convert("csf", "int16")
    tb = arrow_sparse.Tensor.from_numpy(b).convert("coo", "int32")
    assert arrow_sparse.sum(ta) == a.sum()
    assert np.array_equal(arrow_sparse.sum(ta, axis=(0, 2)).to_numpy(), a.sum(axis=(0, 2)))
    assert np.array_equal(arrow_sparse.sum(ta, axis=-1).to_numpy(), a.sum(axis=-1))
    assert np.array_equal(arrow_sparse.add(ta, tb).to_numpy(), a + b)
    assert np.array_equal(arrow_sparse.subtract(ta, tb).to_numpy(), a - b)
    assert np.array_equal(arrow_sparse.multiply(ta, tb).to_numpy(), a * b)
    with pytest.raises(arrow_sparse.ArrowSparseError):
        arrow_sparse.add(ta, arrow_sparse.Tensor.from_numpy(np.zeros((3, 4))))

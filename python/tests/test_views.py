"""Tensor.take (numpy's take as a DM view over the tensor's buffers) against
numpy.take, and Tensor.mlir_encoding."""

import numpy as np
import pytest

import arrow_sparse


def formats(a):
    t = arrow_sparse.Tensor.from_numpy(a)
    out = [t, t.convert("coo", "int32")]
    if a.ndim == 2:
        out += [t.convert("csr", "int16"), t.convert("csc")]
    if a.ndim >= 2:
        out += [t.convert("csf"), t.to_gcs(list(range(a.ndim)), [1])]
    return out


@pytest.mark.parametrize("seed", range(12))
def test_take_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    ndim = 1 + seed % 3
    shape = tuple(int(x) for x in rng.integers(1, 5, ndim))
    a = rng.random(shape) * (rng.random(shape) < 0.4)
    for t in formats(a):
        axis = int(rng.integers(-ndim, ndim))
        extent = shape[axis]
        idx = [int(i) for i in rng.integers(-extent, extent, int(rng.integers(0, 6)))]
        v = t.take(idx, axis=axis)
        want = np.take(a, idx, axis=axis)
        assert v.format == "dm" and v.shape == want.shape
        np.testing.assert_array_equal(v.to_numpy(), want)
        # a view of a view, and through the wire
        if want.size:
            w = v.take([0, 0], axis=0)
            np.testing.assert_array_equal(w.to_numpy(), np.take(want, [0, 0], axis=0))


def test_take_shares_the_buffers_and_round_trips(tmp_path):
    a = np.arange(12.0).reshape(3, 4)
    t = arrow_sparse.Tensor.from_numpy(a).convert("csr")
    v = t.take([2, 2, 0], axis=0)
    assert v.storage_format == "csr"
    # the view's storage is the tensor's own buffer, not a copy
    assert np.shares_memory(v.buffers()["storage.values"], t.buffers()["values"])
    arrow_sparse.write(tmp_path / "v.arrow", [v])
    [back] = arrow_sparse.read(tmp_path / "v.arrow")
    assert back == v
    np.testing.assert_array_equal(back.to_numpy(), a[[2, 2, 0]])


def test_take_errors():
    t = arrow_sparse.Tensor.from_numpy(np.zeros((2, 3)))
    with pytest.raises(arrow_sparse.IndexOutOfBoundsError):
        t.take([3], axis=1)
    with pytest.raises(arrow_sparse.IndexOutOfBoundsError):
        t.take([-4], axis=1)
    with pytest.raises(arrow_sparse.ShapeError):
        t.take([0], axis=2)


def test_mlir_encoding_reports_the_data():
    # a sorted, duplicate-free vector is `compressed`, whatever its flag says
    v = arrow_sparse.Tensor.from_numpy(np.array([0.0, 1.0, 0.0, 2.0])).convert("coo")
    assert v.mlir_encoding == (
        "#sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed), posWidth = 64, crdWidth = 64 }>"
    )
    d = arrow_sparse.Tensor.from_numpy(np.ones((2, 2)))
    assert d.mlir_encoding == "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : dense) }>"

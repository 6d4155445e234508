"""to_sparse / from_sparse with pydata/sparse COO and GCXS: same entries, shared
buffers, GCS maps kept where GCXS can express them."""

import numpy as np
import pytest
import sparse

import arrow_sparse


def dense(shape, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(1, 9, shape) * (rng.random(shape) < 0.35)


@pytest.mark.parametrize("compressed_axes", [(0,), (1,), (2,), (0, 1), (1, 2), (0, 2)])
def test_gcxs_round_trips_as_gcs(tmp_path, compressed_axes):
    d = dense((3, 4, 5)).astype(np.float64)
    g = sparse.GCXS.from_numpy(d, compressed_axes=compressed_axes)
    t = arrow_sparse.Tensor.from_sparse(g)
    assert t.format == "gcs" and t.partitioning == [len(compressed_axes)]
    assert np.array_equal(t.to_numpy(), d)
    assert np.shares_memory(t.buffers()["values"], g.data)
    path = tmp_path / "g.arrow"
    arrow_sparse.write(path, g)
    [back] = arrow_sparse.read(path)
    assert back == t
    s = back.to_sparse()
    assert isinstance(s, sparse.GCXS) and tuple(s.compressed_axes) == tuple(compressed_axes)
    assert np.array_equal(s.todense(), d)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_matrices_become_gcxs_and_back(fmt):
    d = dense((6, 7)).astype(np.int32)
    t = arrow_sparse.Tensor.from_numpy(d).convert(fmt, "int32")
    s = t.to_sparse()
    assert isinstance(s, sparse.GCXS) and np.array_equal(s.todense(), d)
    back = arrow_sparse.Tensor.from_sparse(s)
    assert back.format == fmt and np.array_equal(back.to_numpy(), d)


@pytest.mark.parametrize("fmt", ["coo", "csf", "dense"])
def test_other_formats_become_coo_and_back(fmt):
    d = dense((3, 4, 5)).astype(np.float32)
    t = arrow_sparse.Tensor.from_numpy(d)
    if fmt != "dense":
        t = t.convert(fmt, "int16")
    s = t.to_sparse()
    assert isinstance(s, sparse.COO) and np.array_equal(s.todense(), d)
    if fmt == "coo":  # sparse's coords are a view of ours
        assert np.shares_memory(s.coords, t.buffers()["coords"])
    back = arrow_sparse.Tensor.from_sparse(s)
    assert back.format == "coo" and np.array_equal(back.to_numpy(), d)
    assert back.buffers()["coords"].shape == (t.nnz, 3)
    # sparse's own (ndim, nnz) C-ordered coordinates are used in place
    native = sparse.COO.from_numpy(d)
    kept = arrow_sparse.Tensor.from_sparse(native)
    assert np.shares_memory(kept.buffers()["coords"], native.coords)
    assert np.array_equal(kept.to_numpy(), d)


def test_gcs_maps_gcxs_cannot_express_fall_back_to_coo():
    d = dense((3, 4, 5)).astype(np.float64)
    t = arrow_sparse.Tensor.from_numpy(d).to_gcs([0, 2, 1], [1])  # columns 2, 1: not increasing
    s = t.to_sparse()
    assert isinstance(s, sparse.COO) and np.array_equal(s.todense(), d)

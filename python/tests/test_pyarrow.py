"""to_pyarrow / from_pyarrow: every format round-trips through pyarrow's sparse
tensor objects with the same entries, sharing the value buffers."""

import numpy as np
import pyarrow as pa
import pytest

import arrow_sparse
from conftest import entries


@pytest.mark.parametrize(
    "fmt,shape,cls",
    [
        ("coo", (3, 4, 5), pa.SparseCOOTensor),
        ("csr", (6, 7), pa.SparseCSRMatrix),
        ("csc", (6, 7), pa.SparseCSCMatrix),
        ("csf", (3, 4, 5), pa.SparseCSFTensor),
        ("dense", (3, 4), pa.Tensor),
        ("gcs", (3, 4, 5), pa.SparseCOOTensor),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.int16, np.float32])
def test_round_trip_through_pyarrow(tmp_path, fmt, shape, cls, dtype):
    rng = np.random.default_rng(4)
    d = (rng.integers(1, 9, shape) * (rng.random(shape) < 0.4)).astype(dtype)
    base = arrow_sparse.Tensor.from_numpy(d, dim_names=[f"n{k}" for k in range(len(shape))])
    if fmt == "gcs":
        t = base.to_gcs([2, 0, 1], [1])
    elif fmt == "dense":
        t = base
    else:
        t = base.convert(fmt, "int64")
    p = t.to_pyarrow()
    assert isinstance(p, cls)
    assert np.array_equal(np.asarray(p.to_tensor().to_numpy() if fmt != "dense" else p.to_numpy()), d)
    if fmt not in ("dense", "gcs"):
        assert np.shares_memory(p.to_numpy()[0], t.buffers()["values"])
        back = arrow_sparse.Tensor.from_pyarrow(p, axis_order=t.axis_order)
        assert back.format == t.format and entries(back) == entries(t)
        assert back == t
        # write takes pyarrow objects directly, byte-identical to the tensor itself
        a, b = tmp_path / "a.arrow", tmp_path / "b.arrow"
        arrow_sparse.write(a, p)
        arrow_sparse.write(b, t)
        assert a.read_bytes() == b.read_bytes()
    else:
        back = arrow_sparse.Tensor.from_pyarrow(p)
        assert np.array_equal(back.to_numpy(), d)


def test_from_pyarrow_refuses_other_objects():
    with pytest.raises(TypeError):
        arrow_sparse.Tensor.from_pyarrow(pa.array([1, 2]))

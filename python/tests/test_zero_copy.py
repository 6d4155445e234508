"""Zero copy: numpy views of a mapped stream point into the mapping and keep it
alive; reading a large stream does not grow the process's anonymous memory by its
size; tensors built from scipy / numpy use the caller's memory, and writing them
copies none of their buffers before encoding (peak resident memory)."""

import gc
import os

import numpy as np
import scipy.sparse as sp

import arrow_sparse


def rss_anon():
    """Resident anonymous memory in bytes (file-backed pages of a mapping are not
    counted: touching a mapped file is not a copy)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no RssAnon in /proc/self/status")


def test_views_point_into_the_mapping_and_keep_it_alive(tmp_path):
    path = tmp_path / "m.arrow"
    m = sp.random_array((300, 400), density=0.1, format="csr", rng=1)
    arrow_sparse.write(path, [m, m.tocsc()])
    reader = arrow_sparse.open(path)
    start, length = reader._r._mapping()
    t = reader[1]
    views = t.buffers()
    for name, a in views.items():
        addr = a.__array_interface__["data"][0]
        assert start <= addr and addr + a.nbytes <= start + length, name
        assert not a.flags.writeable and not a.flags.owndata
    s = t.to_scipy()
    for ours, theirs in ((views["values"], s.data), (views["indices"], s.indices), (views["indptr"], s.indptr)):
        assert ours.__array_interface__["data"][0] == theirs.__array_interface__["data"][0]
    # the arrays outlive the reader, the tensor and the file name
    expected = m.tocsc().toarray()
    del reader, t, views
    os.unlink(path)
    gc.collect()
    assert np.array_equal(s.toarray(), expected)


def test_reading_a_large_stream_does_not_copy_it(tmp_path):
    path = tmp_path / "big.arrow"
    n, nnz = 1_000_000, 8_000_000
    rng = np.random.default_rng(3)
    indptr = np.linspace(0, nnz, n + 1).astype(np.int64)
    indices = rng.integers(0, n, nnz, dtype=np.int32)
    indices = indices.reshape(-1, 8)
    indices.sort(axis=1)
    m = sp.csr_array((rng.random(nnz), indices.reshape(-1), indptr), shape=(n, n))
    arrow_sparse.write(path, [m])
    size = path.stat().st_size
    assert size > 90 << 20
    del m, indices, indptr
    gc.collect()
    before = rss_anon()
    [t] = arrow_sparse.read(path)  # validates: touches every page of the map
    s = t.to_scipy()
    total = float(s.data.sum()) + int(s.indices[-1]) + int(s.indptr[-1])
    grown = rss_anon() - before
    assert total > 0
    assert grown < size // 10, f"anonymous memory grew by {grown} bytes reading {size}"


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {key} in /proc/self/status")


def _peak_growth(f):
    """How far resident memory rose above its level at the start while f() ran
    (VmHWM, reset through /proc/self/clear_refs; Linux >= 4.0)."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as c:
        c.write("5")
    before = _status("VmRSS")
    f()
    return _status("VmHWM") - before


def test_writing_scipy_and_numpy_objects_copies_none_of_their_buffers(tmp_path):
    n, nnz = 1_000_000, 8_000_000
    rng = np.random.default_rng(4)
    indptr = np.linspace(0, nnz, n + 1).astype(np.int64)
    indices = np.sort(rng.integers(0, n, nnz, dtype=np.int32).reshape(-1, 8), axis=1).reshape(-1)
    csr = sp.csr_array((rng.random(nnz), indices, indptr), shape=(n, n))
    csc = sp.csc_array((csr.data, csr.indices, csr.indptr), shape=(n, n))  # the same buffers
    dense = rng.random((4_000, 4_000))
    path = tmp_path / "w.arrow"
    arrow_sparse.write(tmp_path / "warm.arrow", sp.eye_array(3, format="csr"))  # first-call setup
    for obj, size in ((csr, csr.data.nbytes + indices.nbytes + indptr.nbytes), (csc, None), (dense, dense.nbytes)):
        for sync in (True, False):
            size = size or csr.data.nbytes + indices.nbytes + indptr.nbytes
            grown = _peak_growth(lambda: arrow_sparse.write(path, obj, sync=sync))
            assert path.stat().st_size >= size
            assert grown < size // 10, f"{type(obj).__name__}, sync={sync}: peak grew by {grown} writing {size} bytes"


def test_from_scipy_and_from_numpy_use_the_callers_memory():
    m = sp.random_array((50, 60), density=0.2, format="csr", rng=2)
    b = arrow_sparse.Tensor.from_scipy(m).buffers()
    assert np.shares_memory(b["values"], m.data)
    assert np.shares_memory(b["indices"], m.indices) and np.shares_memory(b["indptr"], m.indptr)
    a = np.arange(12.0).reshape(3, 4)
    t = arrow_sparse.Tensor.from_numpy(a)
    assert np.shares_memory(t.buffers()["values"], a) and np.shares_memory(t.to_numpy(), a)
    f = np.asfortranarray(a)
    assert np.shares_memory(arrow_sparse.Tensor.from_numpy(f).to_numpy(), f)
    # the tensor keeps the caller's arrays alive
    del m, a
    gc.collect()
    assert b["values"].sum() > 0 and t.to_numpy()[2, 3] == 11.0


def test_strided_numpy_views_stay_views_both_ways(tmp_path):
    # negative steps, offsets, permuted axes and broadcasts: numpy's strided layout
    # is the tensor's (signed element strides and an offset), so nothing is copied
    # until the tensor is written, and then libarrow reads the same elements
    a = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    views = [a[::-1], a[:, ::-2, 1:], a[2:0:-1, :, ::-3], a.transpose(2, 0, 1)[::-1],
             np.broadcast_to(a[0, 0], (2, 3, 5)), np.asfortranarray(a)[:, ::-1]]
    for v in views:
        t = arrow_sparse.Tensor.from_numpy(v)
        back = t.to_numpy()
        assert np.array_equal(back, v) and back.strides == v.strides
        assert np.shares_memory(back, v) and np.shares_memory(t.buffers()["values"], v)
        # the buffer starts at the lowest-addressed element
        assert t.offset + sum((n - 1) * s for n, s in zip(t.shape, t.strides) if s < 0) == 0
        # the element at index i lies at offset + sum(strides * i) of the buffer
        flat = t.buffers()["values"]
        i = tuple(n - 1 for n in v.shape)
        assert flat[t.offset + sum(s * k for s, k in zip(t.strides, i))] == v[i]
        # transposing keeps the view
        tt = arrow_sparse.transpose(t)
        assert np.array_equal(tt.to_numpy(), v.T) and np.shares_memory(tt.to_numpy(), v)
        # written (compacted where libarrow needs it) and read back as the same array
        path = tmp_path / "v.arrow"
        arrow_sparse.write(path, t)
        assert np.array_equal(arrow_sparse.open(path)[0].to_numpy(), v)
        assert np.array_equal(pa_read(path), v)


def pa_read(path):
    """The first tensor of a stream file as pyarrow (libarrow) reads it."""
    import pyarrow as pa

    with pa.memory_map(str(path)) as f:
        return pa.ipc.read_tensor(f).to_numpy()

"""arrow_sparse.write's options (the CLI convert's): to=, index_type=,
axis_order=, dimensions=, partitioning=, compressed_axis=, storage=,
row_group_size=, compression=, sync=, npz_flavor=, mtx_symmetry=, as_column=; and
the Tensor attributes they set; unknown extensions refused."""

import os

import numpy as np
import pytest
import scipy.sparse as sp

import arrow_sparse


def _x(shape=(3, 4, 5), seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(1, 9, shape) * (rng.random(shape) < 0.4)


@pytest.mark.parametrize("ext", ["arrow", "parquet"])
@pytest.mark.parametrize("axis", ["row", "column"])
def test_gcs_map_options(tmp_path, ext, axis):
    x = _x()
    path = tmp_path / f"g.{ext}"
    arrow_sparse.write(path, x, to="gcs", dimensions=[2, 0, 1], partitioning=[2], compressed_axis=axis,
                       index_type="int32")
    [t] = arrow_sparse.read(path)
    assert (t.format, t.dimensions, t.partitioning, t.compressed_axis) == ("gcs", [2, 0, 1], [2], axis)
    assert t.index_type == "int32" and t.reduced_shape == (5 * 3, 4)
    assert np.array_equal(t.to_numpy(), x)


def test_gcs_defaults_follow_the_cli(tmp_path):
    x = _x((2, 3, 40))
    path = tmp_path / "g.arrow"
    arrow_sparse.write(path, x, to="gcs")
    [best] = arrow_sparse.read(path)
    # the default is the mapping with the fewest bytes, as `convert --to gcs`
    want = arrow_sparse.Tensor.from_numpy(x).convert("gcs")
    assert (best.dimensions, best.partitioning) == (want.dimensions, want.partitioning)
    # only partitioning: identity dimensions
    arrow_sparse.write(path, x, to="gcs", partitioning=[1])
    [t] = arrow_sparse.read(path)
    assert (t.dimensions, t.partitioning) == ([0, 1, 2], [1])
    # only dimensions: the default map's partitioning
    arrow_sparse.write(path, x, to="gcs", dimensions=[1, 2, 0])
    [t] = arrow_sparse.read(path)
    assert (t.dimensions, t.partitioning) == ([1, 2, 0], best.partitioning)
    assert np.array_equal(t.to_numpy(), x)


@pytest.mark.parametrize("storage", ["coo", "csr", "csc", "csf", "dense"])
def test_dm_options(tmp_path, storage):
    x = _x()
    path = tmp_path / "d.arrow"
    arrow_sparse.write(path, x, to="dm", dimensions=[1, 2, 0], partitioning=[1], storage=storage)
    [t] = arrow_sparse.read(path)
    assert (t.format, t.dimensions, t.partitioning, t.storage_format) == ("dm", [1, 2, 0], [1], storage)
    assert np.array_equal(t.to_numpy(), x)
    arrow_sparse.write(path, x, to="dm")
    [t] = arrow_sparse.read(path)
    assert (t.dimensions, t.partitioning, t.storage_format) == ([0, 1, 2], [1, 2], "coo")
    # the storage's index type (a dense storage has none); CSR / CSC storage needs
    # a map to two dimensions
    arrow_sparse.write(
        path, x, to="dm", dimensions=[1, 2, 0], partitioning=[1], storage=storage, index_type="int16"
    )
    [t] = arrow_sparse.read(path)
    assert t.index_type == (None if storage == "dense" else "int16")
    assert np.array_equal(t.to_numpy(), x)


def test_csf_axis_order_and_index_type(tmp_path):
    x = _x()
    path = tmp_path / "c.parquet"
    arrow_sparse.write(path, sp.coo_array(x.reshape(3, 20)), to="csr", index_type="uint16")
    [t] = arrow_sparse.read(path)
    assert (t.format, t.index_type) == ("csr", "uint16")
    arrow_sparse.write(path, x, to="csf", axis_order=[2, 0, 1], index_type="int16")
    [t] = arrow_sparse.read(path)
    assert (t.format, t.axis_order, t.index_type) == ("csf", [2, 0, 1], "int16")
    assert np.array_equal(t.to_numpy(), x)


def test_option_misuse_is_a_value_error(tmp_path):
    x = _x()
    p = tmp_path / "x.arrow"
    for kwargs in [
        {"dimensions": [0, 1, 2]},
        {"partitioning": [1]},
        {"compressed_axis": "row"},
        {"storage": "csr"},
        {"to": "coo", "axis_order": [0, 1, 2]},
        {"to": "csr", "dimensions": [0, 1]},
        {"to": "dm", "compressed_axis": "row"},
        {"to": "gcs", "storage": "coo"},
        {"row_group_size": 10},
        {"compression": "zstd"},
    ]:
        with pytest.raises(ValueError):
            arrow_sparse.write(p, x, **kwargs)
    with pytest.raises(arrow_sparse.ArrowSparseError):
        arrow_sparse.write(p, x, to="gcs", dimensions=[0, 0, 1], partitioning=[1])
    with pytest.raises(ValueError):
        arrow_sparse.write(p, x, to="gcs", compressed_axis="diagonal")  # not row / column
    with pytest.raises(ValueError):
        arrow_sparse.write(tmp_path / "x.parquet", x, sync=False)
    assert not p.exists()


def test_parquet_options(tmp_path):
    m = sp.random_array((50, 40), density=0.3, format="csr", rng=np.random.default_rng(2))
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    arrow_sparse.write(a, m, row_group_size=100, compression="none")
    arrow_sparse.write(b, m, row_group_size=100, compression="zstd:9")
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(a).metadata
    assert meta.num_row_groups > 1
    assert meta.row_group(0).column(0).compression == "UNCOMPRESSED"
    assert pq.ParquetFile(b).metadata.row_group(0).column(0).compression == "ZSTD"
    for p in (a, b):
        [t] = arrow_sparse.read(p)
        assert (t.to_scipy() != m).nnz == 0


def test_sync_false_is_still_atomic(tmp_path):
    m = sp.random_array((300, 200), density=0.1, format="csr", rng=np.random.default_rng(3))
    p = tmp_path / "m.arrow"
    arrow_sparse.write(p, m, sync=False)
    arrow_sparse.write(p, m)  # replaced, synced
    synced = p.read_bytes()
    arrow_sparse.write(p, m, sync=False)
    assert p.read_bytes() == synced  # the same bytes either way
    assert os.listdir(tmp_path) == ["m.arrow"]  # no temporary left behind
    [t] = arrow_sparse.read(p)
    assert (t.to_scipy() != m).nnz == 0


def test_npz_flavor_picks_the_reader(tmp_path):
    import sparse

    d = np.zeros((3, 4))
    d[0, 1], d[2, 3] = 1.5, -2.0
    t = arrow_sparse.Tensor.from_numpy(d).convert("coo")
    p = tmp_path / "t.npz"
    arrow_sparse.write(p, t, npz_flavor="pydata")
    assert np.array_equal(sparse.load_npz(p).todense(), d)
    arrow_sparse.write(p, t, npz_flavor="scipy")
    assert np.array_equal(sp.load_npz(p).toarray(), d)
    [back] = arrow_sparse.read(p)
    assert back.metadata["arrow_sparse.npz.flavor"] == "scipy"
    with pytest.raises(ValueError, match="npz_flavor"):
        arrow_sparse.write(p, t, npz_flavor="matlab")
    with pytest.raises(ValueError, match=r"\.npz files only"):
        arrow_sparse.write(tmp_path / "t.arrow", t, npz_flavor="scipy")


@pytest.mark.parametrize(
    "fmt, cls",
    [("CSR", "CSRMatrix"), ("CSC", "CSCMatrix"), ("COO", "COORMatrix"), ("COOC", "COOCMatrix"),
     ("DCSR", "DCSRMatrix"), ("DCSC", "DCSCMatrix"), ("DMATC", "DMATCMatrix")],
)
def test_binsparse_npz_is_read_by_the_reference(tmp_path, fmt, cls):
    import binsparse

    d = np.zeros((4, 5))
    d[0, 1], d[2, 3], d[3, 0] = 1.5, -2.0, 4.0
    p = tmp_path / "m.npz"
    arrow_sparse.write(p, sp.csr_array(d), binsparse_format=fmt)
    ref = binsparse.load_binsparse(str(p))
    assert type(ref).__name__ == cls
    with np.load(p) as z:
        assert '"format": "%s"' % fmt in str(z["binsparse"].item())
    [back] = arrow_sparse.read(p)
    assert np.array_equal(back.convert("dense").to_numpy(), d)


def test_binsparse_options_are_checked(tmp_path):
    t = arrow_sparse.Tensor.from_scipy(sp.csr_array(np.eye(3)))
    arrow_sparse.write(tmp_path / "a.npz", t, npz_flavor="binsparse")
    with np.load(tmp_path / "a.npz") as z:
        assert "binsparse" in z.files and '"format": "CSR"' in str(z["binsparse"].item())
    with pytest.raises(ValueError, match="not a Binsparse format"):
        arrow_sparse.write(tmp_path / "b.npz", t, binsparse_format="BSR")
    with pytest.raises(ValueError, match="npz_flavor must be"):
        arrow_sparse.write(tmp_path / "b.npz", t, npz_flavor="scipy", binsparse_format="CSR")
    with pytest.raises(ValueError, match=r"\.npz files only"):
        arrow_sparse.write(tmp_path / "b.arrow", t, binsparse_format="CSR")


def test_mtx_symmetry_stores_one_triangle(tmp_path):
    d = np.array([[2.0, 1.0, 0.0], [1.0, 0.0, -3.0], [0.0, -3.0, 5.0]])
    p = tmp_path / "s.mtx"
    arrow_sparse.write(p, d, to="coo", mtx_symmetry="symmetric")
    text = p.read_text()
    assert "coordinate real symmetric" in text
    assert text.splitlines()[-5].split() == ["3", "3", "4"]  # 4 of the 6 stored entries
    [back] = arrow_sparse.read(p)
    assert np.array_equal(back.to_numpy(), d)
    skew = np.array([[0.0, 1.0], [-1.0, 0.0]])
    arrow_sparse.write(p, skew, to="coo", mtx_symmetry="skew-symmetric")
    assert np.array_equal(arrow_sparse.read(p)[0].to_numpy(), skew)
    with pytest.raises(arrow_sparse.ArrowSparseError):
        arrow_sparse.write(p, np.array([[0.0, 1.0], [2.0, 0.0]]), to="coo", mtx_symmetry="symmetric")
    with pytest.raises(ValueError, match=r"\.mtx files only"):
        arrow_sparse.write(tmp_path / "s.npz", d, mtx_symmetry="symmetric")


@pytest.mark.parametrize("ext", ["arrow", "parquet"])
def test_as_column_writes_a_record_batch(tmp_path, ext):
    import pyarrow as pa
    import pyarrow.parquet as pq

    import arrow_sparse.ext  # noqa: F401  (registers the extension types)

    rng = np.random.default_rng(3)
    ds = [rng.random((4, 5)) * (rng.random((4, 5)) < 0.4) for _ in range(3)]
    ts = [arrow_sparse.Tensor.from_numpy(d).convert("csr", "int32") for d in ds]
    p = tmp_path / f"table.{ext}"
    arrow_sparse.write(p, ts, as_column=True)
    table = pa.ipc.open_file(p).read_all() if ext == "arrow" else pq.read_table(p)
    assert table.column_names == ["id", "tensor"] and table.num_rows == 3
    assert str(table.schema.field("tensor").type.extension_name) == "arrow_sparse.csr"
    back = arrow_sparse.read(p)
    assert [b.format for b in back] == ["csr"] * 3
    for b, d in zip(back, ds):
        assert np.array_equal(b.to_numpy(), d)
    with pytest.raises(ValueError, match="as_column"):
        arrow_sparse.write(tmp_path / "t.npz", ts[0], as_column=True)
    with pytest.raises(arrow_sparse.ArrowSparseError):  # one column type for all rows
        arrow_sparse.write(p, [ts[0], ts[1].convert("coo")], as_column=True)


def test_unknown_extensions_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown output extension"):
        arrow_sparse.write(tmp_path / "t.csv", np.eye(2))
    assert not (tmp_path / "t.csv").exists()
    for ext in ("arrows", "ipc", "ARROW"):
        arrow_sparse.write(tmp_path / f"t.{ext}", np.eye(2))
        assert np.array_equal(arrow_sparse.read(tmp_path / f"t.{ext}")[0].to_numpy(), np.eye(2))

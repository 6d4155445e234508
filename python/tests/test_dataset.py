"""Datasets from Python: write_dataset / read_dataset / read against scipy, and
the directory read as one table by pyarrow and DataFusion."""

import numpy as np
import pyarrow.dataset as pads
import pytest
import scipy.sparse as sp

import arrow_sparse


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc"])
def test_every_partitionable_format_round_trips(tmp_path, fmt):
    a = sp.random(700, 90, density=0.02, format="coo", random_state=4, dtype=np.float64)
    dim = 1 if fmt == "csc" else 0
    rows, parts, nbytes = arrow_sparse.write_dataset(
        tmp_path / "ds", a, partition_by=dim, rows_per_file=64, to=fmt, index_type="int32"
    )
    assert rows == a.nnz and parts == len(list((tmp_path / "ds").glob("dim_*_block=*"))) and nbytes > 0
    t = arrow_sparse.read_dataset(tmp_path / "ds")
    assert t.format == fmt and t.index_type == "int32"
    np.testing.assert_array_equal(t.to_numpy(), a.toarray())
    [again] = arrow_sparse.read(tmp_path / "ds")
    np.testing.assert_array_equal(again.to_numpy(), a.toarray())


def test_range_reads_open_the_parts_they_need(tmp_path):
    a = sp.random(1000, 40, density=0.05, format="csr", random_state=1)
    arrow_sparse.write_dataset(tmp_path / "ds", a, rows_per_file=100)
    part = arrow_sparse.read_dataset(tmp_path / "ds", dim=0, start=250, stop=420)
    np.testing.assert_array_equal(part.to_numpy(), a[250:420].toarray())
    cols = arrow_sparse.read_dataset(tmp_path / "ds", dim=1, start=5, stop=9)
    np.testing.assert_array_equal(cols.to_numpy(), a[:, 5:9].toarray())
    with pytest.raises(ValueError, match="need dim"):
        arrow_sparse.read_dataset(tmp_path / "ds", start=3)


def test_bad_requests_are_typed_errors(tmp_path):
    a = sp.random(10, 10, density=0.3, format="csr", random_state=2)
    with pytest.raises(arrow_sparse.ArrowSparseError):
        arrow_sparse.write_dataset(tmp_path / "ds", a, partition_by=1, to="csr")  # CSR by columns
    with pytest.raises(arrow_sparse.ArrowSparseError):
        arrow_sparse.write_dataset(tmp_path / "ds", a, partition_by=5)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file.txt").write_text("x")
    with pytest.raises(arrow_sparse.ArrowSparseError):
        arrow_sparse.write_dataset(tmp_path / "junk", a)  # a directory that is no dataset
    with pytest.raises(OSError):
        arrow_sparse.read_dataset(tmp_path / "nothing")


def test_engines_read_the_directory_as_one_table(tmp_path):
    a = sp.random(500, 60, density=0.03, format="csr", random_state=3)
    arrow_sparse.write_dataset(tmp_path / "ds", a, rows_per_file=128)
    table = pads.dataset(tmp_path / "ds", format="parquet", partitioning="hive",
                         exclude_invalid_files=True).to_table()
    assert sorted(table.column_names) == ["dim_0", "dim_0_block", "dim_1", "value"]
    back = sp.coo_matrix((table["value"].to_numpy(), (table["dim_0"].to_numpy(), table["dim_1"].to_numpy())),
                         shape=a.shape)
    np.testing.assert_array_equal(back.toarray(), a.toarray())
    import datafusion  # pinned in scripts/requirements-interop.txt
    ctx = datafusion.SessionContext()
    ctx.register_parquet("a", str(tmp_path / "ds"), file_extension=".parquet")
    n = ctx.sql("SELECT COUNT(*) AS n FROM a").to_arrow_table()["n"][0].as_py()
    assert n == a.nnz


def test_read_range_of_an_archive_decodes_only_the_row_groups_it_needs(tmp_path):
    a = sp.random(1000, 20, density=0.05, format="csr", random_state=6)
    path = tmp_path / "a.parquet"
    arrow_sparse.write(path, a, row_group_size=100)
    t = arrow_sparse.read_range(path, 0, 200, 250)
    assert (t.format, t.shape) == ("csr", (50, 20))
    np.testing.assert_array_equal(t.to_numpy(), a[200:250].toarray())
    _, parts, groups, total = arrow_sparse._native.read_range(path, 0, start=200, stop=250, validate=True)
    assert parts == 1 and total == 10 and 1 <= groups <= 2
    cols = arrow_sparse.read_range(path, 1, 5, 9)
    np.testing.assert_array_equal(cols.to_numpy(), a[:, 5:9].toarray())
    whole = arrow_sparse.read_range(path, 0, stop=10**9)  # clamped to the extent
    np.testing.assert_array_equal(whole.to_numpy(), a.toarray())


def test_read_range_of_a_3d_archive_and_of_a_dataset(tmp_path):
    rng = np.random.default_rng(11)
    x = np.where(rng.random((8, 6, 5)) < 0.3, rng.standard_normal((8, 6, 5)), 0.0)
    arrow_sparse.write(tmp_path / "x.parquet", x, to="coo", index_type="int32")
    t = arrow_sparse.read_range(tmp_path / "x.parquet", 2, 1, 4)
    assert (t.format, t.index_type, t.shape) == ("coo", "int32", (8, 6, 3))
    np.testing.assert_array_equal(t.to_numpy(), x[:, :, 1:4])
    arrow_sparse.write_dataset(tmp_path / "ds", x, rows_per_file=2, to="coo")
    np.testing.assert_array_equal(arrow_sparse.read_range(tmp_path / "ds", 0, 3, 7).to_numpy(), x[3:7])
    _, parts, _, _ = arrow_sparse._native.read_range(tmp_path / "ds", 0, start=4, stop=6, validate=True)
    assert parts == 1


def test_read_range_errors_are_typed(tmp_path):
    a = sp.random(30, 30, density=0.1, format="csr", random_state=3)
    arrow_sparse.write(tmp_path / "a.arrow", a)
    with pytest.raises(arrow_sparse.UnsupportedError, match="Parquet archive"):
        arrow_sparse.read_range(tmp_path / "a.arrow", 0, 0, 5)
    arrow_sparse.write(tmp_path / "a.parquet", a)
    with pytest.raises(arrow_sparse.ShapeError):
        arrow_sparse.read_range(tmp_path / "a.parquet", 2, 0, 5)
    arrow_sparse.write(tmp_path / "dm.parquet", a, to="dm")
    with pytest.raises(arrow_sparse.UnsupportedError, match="DM archive"):
        arrow_sparse.read_range(tmp_path / "dm.parquet", 0, 0, 5)
    with pytest.raises(arrow_sparse.ArrowSparseIOError):
        arrow_sparse.read_range(tmp_path / "missing.parquet", 0, 0, 5)

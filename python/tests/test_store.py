"""Object store URLs from Python: datasets written to and read from moto's S3
server (started from this interpreter on a loopback port, as
tests/dataset_store.rs does), Parquet archives read from it, ``file://`` URLs, and
the typed errors of URLs where they do not apply."""

import socket
import subprocess
import sys
import time

import boto3
import numpy as np
import pytest
import scipy.sparse as sp

import arrow_sparse
from arrow_sparse import _native

BUCKET = "tensors"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """moto's S3 server with bucket ``BUCKET``: ``(endpoint, boto3 client)``."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "moto's server exited"
                assert time.monotonic() < deadline, "moto's server did not start"
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}"
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        client.create_bucket(Bucket=BUCKET)
        yield endpoint, client
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def s3(server, monkeypatch):
    """The ``AWS_*`` variables a local server needs (read when a URL is opened)."""
    endpoint, client = server
    for k, v in {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(k, v)
    return client


def _keys(client, prefix):
    out = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for o in out.get("Contents", []))


def test_a_dataset_round_trips_through_s3(s3):
    a = sp.random(1000, 50, density=0.02, format="csr", random_state=3)
    url = f"s3://{BUCKET}/round/ds"
    rows, parts, nbytes = arrow_sparse.write_dataset(url, a, rows_per_file=300, index_type="int32")
    assert (rows, parts) == (a.nnz, 4) and nbytes > 0
    keys = _keys(s3, "round/ds/")
    assert "round/ds/_arrow_sparse_dataset.json" in keys
    assert sum(k.endswith(".parquet") for k in keys) == 4
    t = arrow_sparse.read_dataset(url)
    assert (t.format, t.index_type, t.shape) == ("csr", "int32", (1000, 50))
    np.testing.assert_array_equal(t.to_numpy(), a.toarray())
    [again] = arrow_sparse.read(url)
    np.testing.assert_array_equal(again.to_numpy(), a.toarray())


def test_a_range_read_from_s3_opens_only_the_parts_it_needs(s3):
    a = sp.random(1000, 40, density=0.05, format="coo", random_state=5)
    url = f"s3://{BUCKET}/range/ds"
    arrow_sparse.write_dataset(url, a, rows_per_file=100, to="coo")
    part = arrow_sparse.read_dataset(url, dim=0, start=250, stop=420)
    np.testing.assert_array_equal(part.to_numpy(), a.tocsr()[250:420].toarray())
    _, opened = _native.read_dataset(url, dim=0, start=300, stop=400, validate=True)
    assert opened == 1
    _, opened = _native.read_dataset(url, dim=0, start=250, stop=420, validate=True)
    assert opened == 3
    cols = arrow_sparse.read_dataset(url, dim=1, start=5, stop=9)
    np.testing.assert_array_equal(cols.to_numpy(), a.tocsr()[:, 5:9].toarray())


def test_range_reads_of_an_archive_and_a_dataset_in_s3(s3, tmp_path):
    a = sp.random(1000, 20, density=0.05, format="csr", random_state=8)
    arrow_sparse.write(tmp_path / "a.parquet", a, row_group_size=100)
    s3.upload_file(str(tmp_path / "a.parquet"), BUCKET, "ranges/a.parquet")
    url = f"s3://{BUCKET}/ranges/a.parquet"
    t, parts, groups, total = _native.read_range(url, 0, start=200, stop=250, validate=True)
    assert (parts, total) == (1, 10) and 1 <= groups <= 2
    np.testing.assert_array_equal(arrow_sparse.Tensor(t).to_numpy(), a[200:250].toarray())
    np.testing.assert_array_equal(arrow_sparse.read_range(url, 1, 3, 6).to_numpy(), a[:, 3:6].toarray())
    ds = f"s3://{BUCKET}/ranges/ds"
    arrow_sparse.write_dataset(ds, a, rows_per_file=100)
    t, parts, _, _ = _native.read_range(ds, 0, start=120, stop=180, validate=True)
    assert parts == 1
    np.testing.assert_array_equal(arrow_sparse.Tensor(t).to_numpy(), a[120:180].toarray())


def test_write_puts_a_parquet_archive_at_a_url(s3):
    a = sp.random(600, 30, density=0.05, format="csc", random_state=12, dtype=np.float32)
    url = f"s3://{BUCKET}/written/a.parquet"
    arrow_sparse.write(url, a, row_group_size=64, compression="zstd")
    assert _keys(s3, "written/") == ["written/a.parquet"]
    [t] = arrow_sparse.read(url)
    assert (t.format, t.value_type) == ("csc", "float32")
    np.testing.assert_array_equal(t.to_numpy(), a.toarray())
    part = arrow_sparse.read_range(url, 1, 10, 12)
    np.testing.assert_array_equal(part.to_numpy(), a[:, 10:12].toarray())
    # written again: replaced whole
    b = np.zeros((3, 3), dtype=np.float32); b[2, 0] = 7.0
    arrow_sparse.write(url, b, to="coo")
    [t] = arrow_sparse.read(url)
    assert t.format == "coo"
    np.testing.assert_array_equal(t.to_numpy(), b)


def test_a_dataset_written_again_replaces_the_old_one(s3):
    url = f"s3://{BUCKET}/again/ds"
    first = np.zeros((40, 3)); first[::2, 1] = 1.0
    second = np.zeros((10, 3)); second[7, 2] = -4.5
    assert arrow_sparse.write_dataset(url, first, rows_per_file=8, to="coo")[1] == 5
    assert arrow_sparse.write_dataset(url, second, rows_per_file=8, to="coo")[1] == 1
    np.testing.assert_array_equal(arrow_sparse.read_dataset(url).to_numpy(), second)


def test_a_parquet_archive_and_a_3d_tensor_read_from_s3(s3, tmp_path):
    rng = np.random.default_rng(7)
    x = np.where(rng.random((6, 5, 4)) < 0.2, rng.standard_normal((6, 5, 4)), 0.0).astype(np.float32)
    local = tmp_path / "x.parquet"
    arrow_sparse.write(local, x, to="csf", index_type="int16")
    s3.upload_file(str(local), BUCKET, "archives/x.parquet")
    [t] = arrow_sparse.read(f"s3://{BUCKET}/archives/x.parquet")
    assert (t.format, t.value_type, t.index_type) == ("csf", "float32", "int16")
    np.testing.assert_array_equal(t.to_numpy(), x)
    url = f"s3://{BUCKET}/cube/ds"
    arrow_sparse.write_dataset(url, x, partition_by=2, rows_per_file=3, to="coo")
    np.testing.assert_array_equal(arrow_sparse.read_dataset(url).to_numpy(), x)
    np.testing.assert_array_equal(arrow_sparse.read_dataset(url, dim=2, start=3, stop=4).to_numpy(), x[:, :, 3:4])


def test_missing_objects_are_object_store_errors(s3):
    with pytest.raises(arrow_sparse.ObjectStoreError) as e:
        arrow_sparse.read_dataset(f"s3://{BUCKET}/nothing/here")
    assert isinstance(e.value, OSError) and e.value.errno == 2
    with pytest.raises(arrow_sparse.ObjectStoreError) as e:
        arrow_sparse.read(f"s3://{BUCKET}/nothing.parquet")
    assert e.value.errno == 2
    with pytest.raises(arrow_sparse.ObjectStoreError):
        arrow_sparse.read_dataset("s3://no-such-bucket/ds")


def test_a_corrupt_manifest_in_s3_is_a_typed_error(s3):
    s3.put_object(Bucket=BUCKET, Key="corrupt/ds/_arrow_sparse_dataset.json", Body=b"{not json")
    with pytest.raises(arrow_sparse.ArrowSparseError) as e:
        arrow_sparse.read_dataset(f"s3://{BUCKET}/corrupt/ds")
    assert isinstance(e.value, ValueError) and "manifest" in str(e.value)


def test_file_urls(tmp_path):
    a = sp.random(200, 30, density=0.05, format="csc", random_state=9)
    url = f"file://{tmp_path}/ds"
    assert arrow_sparse.write_dataset(url, a, partition_by=1, rows_per_file=10)[1] == 3
    assert (tmp_path / "ds" / "_arrow_sparse_dataset.json").is_file()
    np.testing.assert_array_equal(arrow_sparse.read_dataset(url).to_numpy(), a.toarray())
    np.testing.assert_array_equal(arrow_sparse.read(url)[0].to_numpy(), a.toarray())
    arrow_sparse.write(tmp_path / "a.parquet", a)
    np.testing.assert_array_equal(arrow_sparse.read(f"file://{tmp_path}/a.parquet")[0].to_numpy(), a.toarray())


def test_urls_where_they_do_not_apply_are_typed_errors(tmp_path):
    a = sp.random(5, 5, density=0.5, format="csr", random_state=1)
    with pytest.raises(arrow_sparse.UnsupportedError, match="Parquet archive"):
        arrow_sparse.write(f"s3://{BUCKET}/x.arrow", a)
    with pytest.raises(arrow_sparse.UnsupportedError, match="tables in local files"):
        arrow_sparse.write(f"file://{tmp_path}/t.parquet", [a, a], as_column=True)
    with pytest.raises(arrow_sparse.UnsupportedError, match="memory map needs a local file"):
        arrow_sparse.open(f"file://{tmp_path}/x.arrow")
    with pytest.raises(arrow_sparse.UnsupportedError, match="scheme"):
        arrow_sparse.read("ftp://host/x.parquet")
    with pytest.raises(arrow_sparse.ParseError, match="no bucket"):
        arrow_sparse.read_dataset("s3:///ds")
    with pytest.raises(arrow_sparse.ParseError):
        arrow_sparse.write_dataset("file://relative/ds", a)

"""Corrupt and hostile files raise the typed exception (ArrowSparseError, also
ValueError or OSError), never crash the interpreter: the io bad-input corpus
(tests/data/bad), the fuzz sample (python/tests/data/fuzz-sample, copied from the
fuzzers' shared corpus), and every truncation and single-byte change of a small
golden stream."""

import pathlib

import pytest

import arrow_sparse
from conftest import GOLDEN, REPO

HERE = pathlib.Path(__file__).parent
BAD = sorted(p for p in (REPO / "tests" / "data" / "bad").iterdir() if p.suffix in (".mtx", ".tns", ".npz"))
# pq_csr_rows2p28_i64ptr.parquet (a CSR archive announcing 2^28 rows) takes over a
# minute per read in the dev build: the Rust suite covers it (issue #18 bounds the
# work); it is left out here to keep CI short.
SLOW = {"pq_csr_rows2p28_i64ptr.parquet"}
FUZZ = sorted(p for p in (HERE / "data" / "fuzz-sample").iterdir() if p.name not in SLOW)


def exercise(path, validate=True):
    """Read, then use, every tensor: either works or raises ArrowSparseError."""
    for t in arrow_sparse.read(path, validate=validate):
        t.buffers()
        repr(t)
        if validate:
            t.to_scipy()


def test_corpora_are_here():
    assert len(BAD) >= 50 and len(FUZZ) >= 30


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_io_file_raises_typed_error(path):
    with pytest.raises(arrow_sparse.ArrowSparseError) as e:
        arrow_sparse.read(path)
    assert isinstance(e.value, (ValueError, OSError))
    assert str(e.value)


# Files on which the Rust library (or arrow-ipc / parquet under it) panics today:
# issue #18 (reader hardening) fixes them. The binding turns the panic into
# arrow_sparse.InternalError; the test fails when a file stops panicking (remove
# it here) or another one starts.
KNOWN_PANICS = {
    "1b72660b.arrow",
    "83e291c8.arrow",
    "8e2a8647.arrow",
    "a504380f.arrow",
    "cli_ipcfile_slice_panic.arrow",
    "cli_ipcfile_unwrap_none_967.arrow",
    "cli_pqtable_silent_panic.parquet",
}


@pytest.mark.parametrize("path", FUZZ, ids=lambda p: p.name)
@pytest.mark.parametrize("validate", [True, False])
def test_fuzz_sample_raises_typed_errors(path, validate):
    try:
        exercise(path, validate)
    except arrow_sparse.InternalError:
        assert path.name in KNOWN_PANICS, f"{path.name}: the library panics"
        return
    except arrow_sparse.ArrowSparseError as e:
        assert isinstance(e, (ValueError, OSError)) and str(e)
    assert path.name not in KNOWN_PANICS, f"{path.name} no longer panics: remove it from KNOWN_PANICS"


def test_every_truncation_and_byte_change_of_a_stream(tmp_path):
    data = (GOLDEN / "csf_f32_i16_order201.arrow").read_bytes()
    path = tmp_path / "x.arrow"
    failures = 0
    variants = [data[:k] for k in range(len(data))]
    for k in range(len(data)):
        for flip in (0xFF, 0x01):
            variants.append(data[:k] + bytes([data[k] ^ flip]) + data[k + 1:])
    for v in variants:
        path.write_bytes(v)
        for validate in (True, False):
            try:
                exercise(path, validate)
            except arrow_sparse.ArrowSparseError:
                failures += 1
            try:
                list(arrow_sparse.open(path, validate=validate))
            except arrow_sparse.ArrowSparseError:
                pass
    assert failures > len(data)  # most variants are refused


def test_missing_file_is_an_oserror_naming_it(tmp_path):
    path = tmp_path / "nope.arrow"
    with pytest.raises(arrow_sparse.ArrowSparseIOError) as e:
        arrow_sparse.read(path)
    assert isinstance(e.value, OSError) and e.value.errno == 2 and str(path) in str(e.value)
    with pytest.raises(OSError):
        arrow_sparse.open(path)
